"""An error that only the 16-bit policy causes, read for where it happened and the fix.

A script that runs under `python` can fail under the 16-bit policy tfturbo
measures, outside anything tfturbo changes in fit(): an op gets a 16-bit tensor
and a float32 one, and TensorFlow refuses to mix them. Two patterns are common:

- a layer of the user's that makes a float32 tensor and combines it with its
  16-bit input: keras-io's VAE `Sampling` adds `keras.random.normal(...)` (float32
  by default) to a bfloat16 `z_mean` ("Input 'y' of 'Mul' Op has type float32
  that does not match type bfloat16 of argument 'x'"); the fix makes the
  float32 tensor in the layer's dtype (`dtype=z_mean.dtype`);
- a preprocessing layer (Normalization, TextVectorization, FeatureSpace, …)
  adapted while the 16-bit policy is global ("cannot compute AddV2 as input #1
  was expected to be a float tensor but is a bfloat16 tensor"); the fix keeps
  the policy for the model, not the preprocessing (`dtype="float32"` on that
  layer, or the policy set after adapt(); script mode sets it where the model
  starts, `trainer_backend.script`).

`diagnose` returns the DTYPE_MISMATCH_16BIT finding — the policy named as the
cause, the layer and the line, the fix — or None when the error is not one of
these (it then stays the error it was). The tensors' names come from the
failing frame's own variables, so the fix names them as the script does.
"""

from __future__ import annotations

import linecache
import re
import traceback
from pathlib import Path
from typing import Any

from tfturbo.errors import plain_line
from tfturbo.findings import DTYPE_MISMATCH_16BIT, Finding

SIXTEEN = ("bfloat16", "float16", "half")
FLOAT32 = ("float32", "float")
# TensorFlow's two wordings of an op given two dtypes (graph, eager)
_GRAPH = re.compile(r"Input '\w+' of '(\w+)' Op has type (\w+) that does not match type (\w+) of argument")
_EAGER = re.compile(r"cannot compute (\w+) as input #\d+\(zero-based\) was expected to be a (\w+) tensor but is a "
                    r"(\w+) tensor")
_LAYER = re.compile(r"Exception encountered when calling (\w+)\.call\(\)")
_RANDOM = re.compile(r"\brandom\.(normal|uniform|truncated_normal|gamma|binomial|beta)\(")
_OWN_CODE = ("site-packages", "dist-packages", "<frozen", "/lib/python")


class SixteenBitFailure(Exception):
    """The configuration under test fails where only its 16-bit policy makes it fail (before training): a failed
    run of that configuration (exit 1, its finding and fix), never bad input, since the script runs without it."""

    def __init__(self, finding: Finding, fix: str) -> None:
        super().__init__(finding.message)
        self.finding = finding
        self.fix = fix


def diagnose(exc: BaseException, policy: str, user_file: str | None = None, when: str = "before fit()"
             ) -> tuple[Finding, str] | None:
    """(the DTYPE_MISMATCH_16BIT finding, its fix) for an op that mixed a 16-bit and a float32 tensor under a
    16-bit `policy`, else None. `user_file`: the script or workload, whose deepest frame names the line."""
    if policy == "float32":
        return None
    text = " ".join(plain_line(str(e), limit=0) for e in _chain(exc))
    found = _GRAPH.search(text) or _EAGER.search(text)
    if found is None:
        return None
    op, dtypes = found.group(1), {found.group(2), found.group(3)}
    sixteen = next((d for d in dtypes if d in SIXTEEN), None)
    if sixteen is None or not dtypes & set(FLOAT32):
        return None
    sixteen = "float16" if sixteen == "half" else sixteen
    frames = list(traceback.walk_tb(exc.__traceback__))
    preprocessing = _preprocessing_layer(frames)
    layer = preprocessing or _called_layer(text, frames)
    user = _user_frame(frames, user_file)
    line = f"{Path(user[0].f_code.co_filename).name} line {user[1]}" if user else None
    where = " ".join(p for p in (f"{layer}" if layer else "", f"({line})" if line and layer else line or "") if p)
    if preprocessing:
        cause = (f"the preprocessing layer {preprocessing} computes in {sixteen} under the global {policy} policy, "
                 "and its float32 state cannot take its 16-bit batches")
        fix = (f'keep the policy for the model, not the preprocessing: create {preprocessing}(..., dtype="float32"), '
               "or set the mixed-precision policy after its adapt() and before the model is built")
    else:
        cause, fix = _mixed_tensors(user, sixteen, op)
    message = (f"{where or 'the script'}: {op} got a {sixteen} and a float32 tensor under {policy} — {cause}. The "
               f"16-bit policy tfturbo measures is the cause: without it the script runs as written")
    data = {"op": op, "policy": policy, "layer": layer, "line": line, "from": when}
    return Finding(DTYPE_MISMATCH_16BIT, message, fix=fix, where=where or "script",
                   data={k: v for k, v in data.items() if v}), fix


def _chain(exc: BaseException) -> list[BaseException]:
    out, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        out.append(current)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return out


def _preprocessing_layer(frames) -> str | None:
    """The class name of a Keras preprocessing layer the error happened in (its adapt() or call), if any."""
    for frame, _ in frames:
        owner = frame.f_locals.get("self")
        module = type(owner).__module__ or ""
        if module.startswith("keras.src.layers.preprocessing") and hasattr(owner, "dtype_policy"):
            return type(owner).__name__
    return None


def _called_layer(text: str, frames) -> str | None:
    found = _LAYER.search(text)
    if found:
        return found.group(1)
    for frame, _ in reversed(frames):
        owner = frame.f_locals.get("self")
        if frame.f_code.co_name == "call" and hasattr(owner, "compute_dtype"):
            return type(owner).__name__
    return None


def _user_frame(frames, user_file: str | None):
    """(frame, line) of the deepest frame in the user's file, else in any code that is not a library's."""
    def mine(frame) -> bool:
        name = frame.f_code.co_filename
        if user_file:
            try:
                return Path(name).resolve() == Path(user_file).resolve()
            except OSError:
                return False
        return not any(part in name for part in _OWN_CODE) and "trainer_backend" not in name
    return next(((f, n) for f, n in reversed(frames) if mine(f)), None)


def _mixed_tensors(user, sixteen: str, op: str) -> tuple[str, str]:
    """(the cause, the fix) from the failing line's own variables: which is float32, which 16-bit."""
    generic = (f"a tensor made in float32 inside the model meets its {sixteen} activations",
               "make that tensor in the layer's compute dtype (dtype=self.compute_dtype), or cast it: "
               "keras.ops.cast(t, x.dtype)")
    if user is None:
        return generic
    frame, lineno = user
    source = linecache.getline(frame.f_code.co_filename, lineno)
    tensors = {name: _dtype(value) for name, value in frame.f_locals.items() if _dtype(value)}
    used = [name for name in tensors if re.search(rf"\b{re.escape(name)}\b", source)]
    low = next((n for n in used if tensors[n] == "float32"), None)
    high = next((n for n in used if tensors[n] == sixteen), None)
    if low is None or high is None:
        return generic
    cause = f"{low} is float32 while {high} is {sixteen} ({op} at: {source.strip()})"
    made = _assignment(frame, low)
    if made is not None and (random := _RANDOM.search(made[1])):
        return cause, (f"make {low} in {high}'s dtype: pass dtype={high}.dtype to {random.group(0)}"
                       f"...) at line {made[0]} ({made[1].strip()})")
    return cause, f"make {low} in {high}'s dtype: keras.ops.cast({low}, {high}.dtype) before the {op}"


def _assignment(frame, name: str) -> tuple[int, str] | None:
    """(line, text) where the frame's function assigned `name`, from its source lines."""
    code = frame.f_code
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*=")
    for lineno in range(code.co_firstlineno, frame.f_lineno + 1):
        text = linecache.getline(code.co_filename, lineno)
        if pattern.match(text):
            return lineno, text
    return None


def _dtype(value: Any) -> str | None:
    """A tensor's dtype name (a tf.Tensor, a symbolic KerasTensor or a variable), else None."""
    import keras

    if not (keras.ops.is_tensor(value) or isinstance(value, (keras.KerasTensor, keras.Variable))):
        return None
    try:
        return keras.backend.standardize_dtype(value.dtype)
    except (ValueError, TypeError, AttributeError):
        return None
