"""A training error read for its most likely cause, so a failed run says the fix to try, not only "see the log".

Two failures of 16-bit policies are common and recognisable from the error
alone, with the model and the run's settings:

- a metric or an op that refuses 16-bit predictions (`TypeError: Input
  'predictions' of 'InTopKV2' Op has type bfloat16 that does not match expected
  type of float32`): the output layer must compute in float32 — HEAD_NOT_FLOAT32,
  fixed by `--fix-head` (`fix_head=on` in `ab`/`tune` settings);
- integer ids rounded by a 16-bit cast (`indices[16,18] = 20000 is not in
  [0, 20000)` under mixed_float16): INTEGER_INPUT_16BIT, fixed by
  `--fix-int-inputs` or an integer `keras.Input`;
- an op given a 16-bit and a float32 tensor by a layer of the user's (a
  float32 `keras.random.normal` added to 16-bit activations):
  DTYPE_MISMATCH_16BIT (`sixteen_bit_hazard`, which also reads the same error
  when it happens before fit()).

`diagnose` returns the finding (emitted with the run's error) and the fix line
the error carries; None when the error is not one of these.
"""

from __future__ import annotations

import re
from typing import Any

from tfturbo.findings import HEAD_NOT_FLOAT32, INTEGER_INPUT_16BIT, Finding

from . import sixteen_bit_hazard

_SIXTEEN = r"(bfloat16|half|float16)"
_REFUSED = re.compile(rf"{_SIXTEEN}.*(expected|does not match|not supported|was expected to be a float)", re.I | re.S)
_OP = re.compile(r"'([A-Za-z0-9_]+)' Op|compute ([A-Za-z0-9_]+) as input|\[Op:([A-Za-z0-9_]+)\]")
_INDICES = re.compile(r"indices\[[^\]]*\] = (-?\d+) is not in \[0, (\d+)\)")

HEAD_FIX = "compute the output layer in float32: --fix-head (ab/tune settings: fix_head=on)"
IDS_FIX = ('keep the ids exact: --fix-int-inputs (ab/tune settings: fix_int_inputs=on), or in your code '
           'keras.Input(shape=..., dtype="int32")')


def diagnose(exc: BaseException, model: Any, settings: Any) -> tuple[Finding, str] | None:
    """(the finding that names the cause, the error's fix line), or None."""
    if not getattr(settings, "sixteen_bit", False):
        return None
    text = " ".join(str(exc).split())
    policy = settings.policy
    ids = _INDICES.search(text)
    if ids and not getattr(settings, "fix_int_inputs", False):
        from .integer_inputs import EXACT_INTEGERS

        value, size = int(ids.group(1)), int(ids.group(2))
        dtype = "bfloat16" if "bfloat16" in policy else "float16"
        return Finding(
            INTEGER_INPUT_16BIT,
            f"the run failed looking up id {value:,} in a table of {size:,}: under {policy} integer ids that reach "
            f"a layer as floats are rounded to {dtype} before the lookup ({dtype} is exact only up to "
            f"{EXACT_INTEGERS[dtype]:,})",
            fix=IDS_FIX, where="model input", data={"value": value, "size": size, "from": "training error"}), IDS_FIX
    mixed = sixteen_bit_hazard.diagnose(exc, policy, when="training error")
    if mixed is not None:  # a layer of the user's mixed a float32 tensor into its 16-bit activations
        return mixed
    if _REFUSED.search(text) and not getattr(settings, "fix_head", False):
        op = next((g for m in _OP.finditer(text) for g in m.groups() if g), None)
        what = f"the {op} op" if op else "an op"
        metric = " (a top-k metric)" if op and "TopK" in op else ""
        return Finding(
            HEAD_NOT_FLOAT32,
            f"the run failed because {what}{metric} cannot take the model's 16-bit outputs under {policy}: "
            "the output layer must compute in float32 for its metrics and losses",
            fix=HEAD_FIX, where="output layer", data={"op": op, "from": "training error"}), HEAD_FIX
    return None
