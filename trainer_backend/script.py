"""Script mode: measure an unchanged training script (README, "Your training script, unchanged").

A `.py` file that defines `build_model` and `make_datasets` at module level (`tfturbo.workload_kind`) is
a contract workload (`trainer_backend.workload`); any other `.py` file is a
training script as people write them: top-level code or `main()` with
argparse, NumPy arrays or tf.data, callbacks, evaluate and save after `fit()`.

How a script runs (autolog style):

- as `__main__` through `runpy`, after the run has set the dtype policy and
  the seed, with `sys.argv = [script, *script_args]` (the options after `--`),
  the script's folder first on `sys.path`, and the caller's working directory
  unchanged — exactly what `python path/to/train.py ARGS` would see, so a
  relative data path means the same thing under tfturbo as without it;
- with `keras.Model.compile` recorded (it still runs) and `keras.Model.fit`
  captured;
- with the dtype policy under test set where the script's model starts, as a
  user who follows the mixed-precision guide sets it: a Keras layer takes the
  global policy when it is created, so the script runs under its own float32
  until the first layer of a model is created (`_model_layer`: not an input,
  not preprocessing), or until the script sets its own policy, where the run's
  takes its place. Preprocessing adapted in tf.data before the model
  (Normalization, TextVectorization, FeatureSpace) stays float32, as in the
  script run as written (adapted under a global bfloat16 policy it fails:
  "cannot compute AddV2 ... bfloat16"); an error that only the 16-bit policy
  causes is a DTYPE_MISMATCH_16BIT finding of a failed run, not a broken
  script (`diagnostics.sixteen_bit_hazard`);
- a script that selects another Keras backend (`os.environ["KERAS_BACKEND"] =
  "jax"` as keras-io examples start, or `keras.config.set_backend`) stops with
  one line: tfturbo measures TensorFlow, and Keras is already imported on it;
- the first `fit()` call is captured — model, data, batch size, validation
  data or split, class/sample weights — and unwinds the script with a private
  `BaseException` (an `except Exception` in the script cannot swallow it).
  Code after `fit()` (evaluate, save, plots) never runs and writes nothing.
  A script that trains several models (a teacher, then its distiller) is
  measured at the fit() call `--fit-call N` names: the calls before it return
  at once without training (an empty History), so the script reaches the Nth.
  Every result names the call measured (`ScriptWorkload.describe`: its line,
  the model's class and name, and the lines where the script calls `.fit(`);

The captured call becomes a workload with the contract's interface
(`build_model()`, `make_datasets(batch_size)`), so `run`, `audit`,
`probe-input`, the fixes and `tune` treat both kinds alike:

- training arrays become a tf.data pipeline shuffled with the run's seed (if
  the script shuffled) and batched at the trial's batch size; a dataset or
  generator from the script is re-batched when the trial's size differs. The
  script's `batch_size` (Keras' default 32 for arrays, the dataset's own batch
  size otherwise) is the default, like BATCH_SIZE in a contract file;
- `validation_split` takes the last fraction of the arrays, unshuffled, as
  Keras does; validation data is batched at the script's validation batch size
  and never at the trial's, so every trial validates on the same examples;
- the script's callbacks are not run: tfturbo measures a fixed number of steps
  (EarlyStopping, ReduceLROnPlateau and LearningRateScheduler would change
  what is measured between trials) and writes only its own run directory
  (ModelCheckpoint, TensorBoard, CSVLogger, BackupAndRestore would write the
  script's files). Which ones were left out is logged. `epochs` and
  `steps_per_epoch` give way to `--steps`.
"""

from __future__ import annotations

import inspect
import itertools
import math
import os
import runpy
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfturbo.errors import WorkloadError, plain_line
from tfturbo.numbers import ordinal
from tfturbo.workload_kind import CONTRACT_FUNCTIONS, WorkloadDoc, fit_calls_in_source, measured_fit_text

from .model_loss import compiled_without_loss
from .stdio import log_name

KERAS_DEFAULT_BATCH = 32  # what model.fit uses for arrays when the script gives no batch_size
BACKEND_VARIABLE = "KERAS_BACKEND"


class _FitReached(BaseException):
    """Raised by the patched `fit()` to unwind the script once its first call is captured."""


class _OtherBackend(BaseException):
    """The script asked for a Keras backend other than TensorFlow (`keras.config.set_backend`, or
    `os.environ["KERAS_BACKEND"]` seen when it stops); its argument is the backend's name."""


@dataclass
class FitCall:
    """What the script passed to its first `model.fit(...)`."""

    model: Any
    x: Any
    y: Any
    batch_size: int | None
    epochs: int
    callbacks: list[Any]
    validation_split: float
    validation_data: Any
    shuffle: Any
    class_weight: dict | None
    sample_weight: Any
    steps_per_epoch: int | None
    validation_batch_size: int | None
    line: int | None  # the script's line that called fit()
    index: int = 1  # the script's Nth fit() call (1: its first)


@dataclass
class ScriptWorkload:
    """A training script measured at its first `fit()`; the same interface as `workload.Workload`."""

    spec: str
    name: str
    path: str
    script_args: list[str] = field(default_factory=list)
    fit_call: int | None = None  # which of the script's fit() calls is measured (None: its first)
    call: FitCall | None = None
    compiled: list[Any] = field(default_factory=list)  # models the script compiled, in order
    # the run leaves the dtype policy as written (no --policy): the script's own set_global_policy takes effect
    keep_policy: bool = False
    asked_policy: str | None = None  # the policy the script's own set_global_policy asked for (its last call)
    _sources: dict[int, tuple[Any, int | None]] = field(default_factory=dict, repr=False)
    _defined: dict[str, Any] = field(default_factory=dict, repr=False)  # a finished script's globals

    @property
    def default_batch_size(self) -> int:
        """The script's batch size; known once `build_model()` ran the script."""
        return self._native_batch_size()

    @property
    def _fit(self) -> FitCall:
        """The script's captured fit() call: there once `build_model()` ran the script."""
        if self.call is None:
            raise RuntimeError("the script has not run yet: call build_model() first")
        return self.call

    @property
    def array_data(self) -> bool:
        """fit() was given NumPy arrays (not a dataset or generator): fixes are written for arrays."""
        return self.call is not None and not _is_dataset_like(self.call.x)

    @property
    def fit_where(self) -> str:
        line = f" line {self.call.line}" if self.call and self.call.line else ""
        return f"{Path(self.path).name}{line}"

    def describe(self) -> WorkloadDoc:
        """The workload as run.yaml, summary.json and the audit record it: with the fit() call measured (once the
        script ran) — {"call" (its Nth), "line", "model" (class), "model_name", "calls_in_source" (the lines where
        the script calls `.fit(`, with their code)} — which `tfturbo.workload_kind.measured_fit_text` words."""
        doc: WorkloadDoc = {"spec": self.spec, "name": self.name, "path": self.path}
        if self.call is not None:
            model = self.call.model
            doc["fit"] = {"call": self.call.index, "line": self.call.line, "model": type(model).__name__,
                          "model_name": str(getattr(model, "name", "") or ""),
                          "calls_in_source": fit_calls_in_source(Path(self.path))}
        return doc

    # -- the contract's interface ---------------------------------------------------------------

    def build_model(self):
        """Run the script up to its first `fit()`; return the model it passed there, checked like a workload."""
        import keras

        if self.call is None:
            self.call = self._run()
            print(f"tfturbo: measured {measured_fit_text(self.describe())}; the rest of the script did not run",
                  file=sys.stderr)
            for line in self.notes():
                print(f"tfturbo: {line}", file=sys.stderr)
        model = self.call.model
        if not isinstance(model, keras.Model):
            raise self._error(f"fit() was called on {type(model).__name__}, not a keras.Model", "")
        if not model.compiled or model.optimizer is None:
            raise self._error(f"model.fit() at {self.fit_where} was called on a model that is not compiled",
                              "call model.compile(optimizer=..., loss=..., metrics=[...]) before model.fit()")
        if compiled_without_loss(model):
            raise self._error("the model was compiled without a loss, and computes none of its own (no "
                              "compute_loss or train_step)", "pass loss=... to model.compile(...)")
        return model

    def make_datasets(self, batch_size: int) -> tuple[Any, Any | None]:
        """(train_ds, val_ds) from the captured call: training at `batch_size`, validation at the script's own."""
        call = self._fit
        x, y, weights = call.x, call.y, call.sample_weight
        validation = call.validation_data
        if _is_dataset_like(x):
            if call.validation_split:
                raise self._error("fit() got validation_split with a dataset or generator, which Keras refuses too",
                                  "pass validation_data=... instead")
            train = self._rebatch(*self._as_dataset(x), batch_size)
        else:
            arrays = _arrays((x, y) if weights is None else (x, y, weights))
            if call.class_weight:
                arrays = _with_class_weight(arrays, call.class_weight)
            if call.validation_split:
                arrays, validation = _split(arrays, call.validation_split)
                if _length(validation) == 0:
                    raise self._error(f"validation_split={call.validation_split} leaves no validation examples",
                                      "use a larger validation_split or pass validation_data=...")
            train = _arrays_dataset(arrays, batch_size, shuffle=bool(call.shuffle))
        val = None
        if validation is not None:
            if _is_dataset_like(validation):
                val = self._as_dataset(validation)[0]
            else:
                val_batch = call.validation_batch_size or call.batch_size or KERAS_DEFAULT_BATCH
                val = _arrays_dataset(_arrays(tuple(validation)), val_batch, shuffle=False)
        return (self._check(train, "the training data"),
                None if val is None else self._check(val, "the validation data"))

    def notes(self) -> list[str]:
        """What of the script's fit() call tfturbo does not reproduce, one line each (logged)."""
        call = self._fit
        lines = []
        if call.callbacks:
            names = ", ".join(dict.fromkeys(type(c).__name__ for c in call.callbacks))
            lines.append(f"the script's callbacks were not run ({names}): tfturbo measures a fixed number of "
                         "steps and writes nothing of the script's")
        lines.append(f"fit(epochs={call.epochs}"
                     + (f", steps_per_epoch={call.steps_per_epoch}" if call.steps_per_epoch else "")
                     + ") gives way to --steps")
        if call.class_weight and _is_dataset_like(call.x):
            lines.append("class_weight was ignored: tfturbo applies it to NumPy arrays only")
        return lines

    # -- running the script ---------------------------------------------------------------------

    def _run(self) -> FitCall:
        import keras

        path = Path(self.path)
        captured: list[FitCall] = []  # every fit() call reached; the measured one last
        wanted = self.fit_call or 1
        original_fit, original_compile = keras.Model.fit, keras.Model.compile
        signature = inspect.signature(original_fit)
        compiled = self.compiled

        def fit(model, *args, **kwargs):
            bound = signature.bind(model, *args, **kwargs)
            bound.apply_defaults()
            a = bound.arguments
            lines = [f.lineno for f in traceback.extract_stack() if _same_file(f.filename, path)]
            captured.append(FitCall(
                model=model, x=a["x"], y=a["y"], batch_size=a["batch_size"], epochs=a["epochs"],
                callbacks=list(a["callbacks"] or []), validation_split=float(a["validation_split"] or 0.0),
                validation_data=a["validation_data"], shuffle=a["shuffle"], class_weight=a["class_weight"],
                sample_weight=a["sample_weight"], steps_per_epoch=a["steps_per_epoch"],
                validation_batch_size=a["validation_batch_size"], line=lines[-1] if lines else None,
                index=len(captured) + 1))
            if len(captured) < wanted:
                return _skipped(captured[-1], path, wanted)
            raise _FitReached

        def compile_(model, *args, **kwargs):
            compiled.append(model)
            return original_compile(model, *args, **kwargs)

        policy = keras.mixed_precision.global_policy()  # the run's, set before the script runs
        set_policy, layer_init = keras.mixed_precision.set_global_policy, keras.layers.Layer.__init__
        started: list[str] = []  # where the model began: from there on its layers take the run's policy

        keep = self.keep_policy

        def start_model(where: str) -> None:
            if not started:
                started.append(where)
                if not keep:
                    set_policy(policy)

        def own_policy(value):  # the script sets its policy: the run's starts where the script's would
            self.asked_policy = str(getattr(value, "name", value))
            if keep:  # measured as written: the script's own policy is the run's
                return set_policy(value)
            name = getattr(value, "name", value)
            if str(name) != policy.name:
                print(f"tfturbo: the script's set_global_policy({name!r}) ({self._script_line(path)}) sets "
                      f"{policy.name}, the policy this run measures, from there on", file=sys.stderr)
            start_model("the script's own policy")

        def init(layer, *args, **kwargs):  # the first layer of a model: the policy starts here (see _model_layer)
            if not started and _model_layer(layer):
                start_model(type(layer).__name__)
            return layer_init(layer, *args, **kwargs)

        def set_backend(name):
            raise _OtherBackend(str(name))

        saved_argv, saved_path = sys.argv, list(sys.path)
        saved_backend = os.environ.get(BACKEND_VARIABLE)
        patches = [(keras.Model, "fit", fit), (keras.Model, "compile", compile_),
                   (keras.mixed_precision, "set_global_policy", own_policy),
                   (keras.config, "set_dtype_policy", own_policy), (keras.config, "set_backend", set_backend),
                   (keras.layers.Layer, "__init__", init)]
        saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in patches]
        for owner, attr, value in patches:
            setattr(owner, attr, value)
        sys.argv = [str(path), *self.script_args]
        sys.path.insert(0, str(path.parent))
        stderr = sys.stderr = _Tail(sys.stderr)
        set_policy(keras.config.floatx())  # the script's own default until its model starts
        try:
            try:
                self._defined = runpy.run_path(str(path), run_name="__main__")
            finally:
                asked = os.environ.get(BACKEND_VARIABLE)
                if asked != saved_backend:  # the script's own choice must not leak into the backend process
                    os.environ.pop(BACKEND_VARIABLE, None) if saved_backend is None else \
                        os.environ.__setitem__(BACKEND_VARIABLE, saved_backend)
                if asked != saved_backend and asked and asked.lower() != "tensorflow":
                    raise _OtherBackend(asked)
        except _OtherBackend as exc:
            raise self._backend_error(str(exc)) from None
        except _FitReached:
            pass
        except SystemExit as exc:
            if len(captured) < wanted:
                code = exc.code if exc.code not in (None, 0) else None
                how = f"exited with sys.exit({code!r})" if code is not None else "exited"
                said = stderr.last_line() if code is not None else ""
                again = f" a {ordinal(wanted)} time" if captured else ""
                raise self._error(f"{how} before calling model.fit(){again}" + (f": {said}" if said else ""),
                                  "tfturbo measures the first fit() call; check the script's options after `--` "
                                  f"(its output is in {log_name()})") from exc
        except SyntaxError as exc:
            where_line = f"line {exc.lineno}: " if exc.lineno else ""
            raise self._error(f"{where_line}syntax error: {exc.msg}", "correct the syntax and load it again") from exc
        except Exception as exc:
            if len(captured) < wanted:
                from .diagnostics.sixteen_bit_hazard import SixteenBitFailure, diagnose

                hazard = None if keep else diagnose(exc, policy.name, str(path))  # as written: the script's own
                if hazard is not None:  # the script runs without the policy under test: this configuration fails
                    raise SixteenBitFailure(*hazard) from exc
                raise self._error(f"raised {_exc_line(exc, path)} before calling model.fit()"
                                  + (f" a {ordinal(wanted)} time" if wanted > 1 else ""),
                                  f"fix the script (full traceback in {log_name()})") from exc
        finally:
            start_model("the end of the script")  # a model built later (lazily, in fit()) takes it too
            for owner, attr, value in saved:
                setattr(owner, attr, value)
            sys.argv = saved_argv
            sys.path[:] = saved_path
            sys.stderr = stderr.stream
        if not captured:
            half = [f"{name}()" for name in CONTRACT_FUNCTIONS if not callable(self._defined.get(name))]
            fix = "call model.fit(...) in the script"
            if len(half) == 1:  # one of the two contract functions: probably a workload file missing the other
                fix = f"call model.fit(...) in the script, or define {half[0]} too to use the workload contract"
            raise WorkloadError(f"{path.name} finished without calling model.fit(); tfturbo measures the first "
                                "fit() call", fix)
        if len(captured) < wanted:
            lines = ", ".join(f"line {c.line}" if c.line else "?" for c in captured)
            raise self._error(f"--fit-call {wanted} asks for the script's {ordinal(wanted)} fit() call, and it "
                              f"made {len(captured)} ({lines})",
                              f"pass --fit-call {len(captured)} or less" if len(captured) > 1 else
                              "drop --fit-call: the script trains once")
        return captured[-1]

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _script_line(path: Path) -> str:
        """"train.py line 12": the script's line now running (its deepest frame on the stack)."""
        lines = [f.lineno for f in traceback.extract_stack() if _same_file(f.filename, path)]
        return f"{path.name} line {lines[-1]}" if lines else path.name

    def _backend_error(self, backend: str) -> WorkloadError:
        """The script asks for another Keras backend: tfturbo measures TensorFlow only."""
        lines = [i for i, text in enumerate(Path(self.path).read_text(encoding="utf-8", errors="replace")
                                           .splitlines(), 1) if BACKEND_VARIABLE in text or "set_backend" in text]
        at = f" (line {lines[0]})" if lines else ""
        return self._error(f"the script selects the Keras backend {backend!r}{at}; tfturbo measures TensorFlow",
                           f"remove that line, or write os.environ.setdefault(\"{BACKEND_VARIABLE}\", \"{backend}\") "
                           f"and run tfturbo with {BACKEND_VARIABLE}=tensorflow")

    def _error(self, problem: str, fix: str) -> WorkloadError:
        return WorkloadError(problem, fix, where=self.path)

    def _native_batch_size(self) -> int:
        call = self._fit
        if not _is_dataset_like(call.x):
            return int(call.batch_size or KERAS_DEFAULT_BATCH)
        return self._as_dataset(call.x)[1] or KERAS_DEFAULT_BATCH

    def _as_dataset(self, data) -> tuple[Any, int | None]:
        """(a tf.data dataset, its batch size) for a dataset, PyDataset or generator; made once per source,
        since a generator can be read only once."""
        import tensorflow as tf

        key = id(data)
        if key not in self._sources:
            if isinstance(data, tf.data.Dataset):
                self._sources[key] = (data, _leading_dim(data))
            else:
                self._sources[key] = generator_dataset(data)
        return self._sources[key]

    def _rebatch(self, ds, native: int | None, batch_size: int):
        """The script's batches, or the same examples in batches of the trial's size."""
        if native == batch_size:
            return ds
        import tensorflow as tf

        examples = ds.unbatch()
        if all(s.shape.is_fully_defined() for s in tf.nest.flatten(examples.element_spec)):
            return examples.batch(batch_size).prefetch(tf.data.AUTOTUNE)
        return examples.padded_batch(batch_size).prefetch(tf.data.AUTOTUNE)

    def _check(self, ds, label: str):
        from .batch_parts import label_problem

        # fit(x) trains a model whose own train_step reads the batch (an autoencoder, a GAN)
        problem = label_problem(ds.element_spec, self._fit.model)
        if problem is not None and problem[0] == "no_labels":
            raise self._error(f"{label} given to fit() at {self.fit_where} has no labels, and {problem[1]}",
                              "pass fit(x, y, ...) or a dataset of (x, y) pairs")
        if problem is not None:
            raise self._error(f"{label} given to fit() at {self.fit_where} is not batched (its labels are scalars)",
                              "batch it: ds.batch(batch_size)")
        return ds


def _skipped(call: FitCall, path: Path, wanted: int):
    """A fit() call before the measured one: it returns at once, untrained, with an empty History (what fit()
    returns), and the log says so."""
    import keras

    model = call.model
    where = f"{path.name} line {call.line}" if call.line else path.name
    print(f"tfturbo: skipped the script's {ordinal(call.index)} fit() call ({where}, "
          f"{type(model).__name__} {getattr(model, 'name', '')!r}) without training: --fit-call {wanted} measures "
          f"its {ordinal(wanted)}", file=sys.stderr)
    history = keras.callbacks.History()
    history.set_model(model)
    history.set_params({"epochs": 0, "steps": 0, "verbose": 0})
    return history


class _Tail:
    """sys.stderr while the script runs: passes everything on and keeps the end, so an argparse error
    (`train.py: error: unrecognized arguments: ...`) can be quoted in the one-line failure."""

    KEEP = 2000

    def __init__(self, stream):
        self.stream = stream
        self.text = ""

    def write(self, text: str) -> int:
        self.text = (self.text + text)[-self.KEEP:]
        return self.stream.write(text)

    def last_line(self) -> str:
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


# ------------------------------------------------------------------------------ data

def _model_layer(layer) -> bool:
    """True for a layer that belongs to a model, where the policy under test starts: not an input (it computes
    nothing) and not data preprocessing (Normalization, TextVectorization, FeatureSpace, the lookups: a layer
    of Keras' preprocessing package, or one with adapt()), which a script builds and adapts in tf.data before
    its model and which must stay in the script's float32 (adapted in bfloat16 it fails: "cannot compute
    AddV2 ... bfloat16")."""
    import keras

    if isinstance(layer, keras.layers.InputLayer) or hasattr(layer, "adapt"):
        return False
    return not (type(layer).__module__ or "").startswith("keras.src.layers.preprocessing")


def _same_file(filename: str, path: Path) -> bool:
    try:
        return Path(filename).resolve() == path
    except OSError:
        return False


def _exc_line(exc: BaseException, path: Path) -> str:
    """`FileNotFoundError: ... (train.py line 12)`: the exception and the deepest line of the script."""
    message = plain_line(str(exc), 200) or "(no message)"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if _same_file(f.filename, path)]
    at = f" ({path.name} line {lines[-1]})" if lines else ""
    return f"{type(exc).__name__}: {message}{at}"


def _is_dataset_like(data) -> bool:
    """A tf.data dataset, a keras PyDataset, a generator or iterator: data that comes batched."""
    import keras
    import numpy as np
    import tensorflow as tf

    if isinstance(data, (tf.data.Dataset, keras.utils.PyDataset)):
        return True
    if isinstance(data, (np.ndarray, list, tuple, dict)) or hasattr(data, "__array__") or data is None:
        return False
    return hasattr(data, "__next__") or inspect.isgenerator(data)


def generator_dataset(data) -> tuple[Any, int]:
    """(a tf.data dataset, its batch size) over a PyDataset (every pass) or a generator (its first batch is
    peeked; a finite generator gives one pass). The one conversion of such data: a workload file's
    make_datasets() may return them too (`workload.Workload`)."""
    import keras
    import tensorflow as tf

    if isinstance(data, keras.utils.PyDataset):
        first = data[0]

        def generate():
            for i in range(len(data)):
                yield tuple(data[i])
    else:
        iterator = iter(data)
        first = next(iterator)

        def generate():
            for element in itertools.chain([first], iterator):
                yield tuple(element)
    signature = tf.nest.map_structure(
        lambda a: tf.TensorSpec((None,) + tuple(_np(a).shape[1:]), tf.as_dtype(_np(a).dtype)), tuple(first))
    batch = len(_np(tf.nest.flatten(tuple(first))[0]))
    return tf.data.Dataset.from_generator(generate, output_signature=signature), batch


def _np(a):
    import numpy as np

    return np.asarray(a)


def _arrays(data):
    """NumPy arrays (tuples for lists of inputs, dicts kept) from what fit() accepts as arrays."""
    import numpy as np

    if data is None:
        return None
    if isinstance(data, dict):
        return {k: _arrays(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)) and data and all(
            isinstance(a, (np.ndarray, list, tuple, dict)) or hasattr(a, "__array__") or a is None for a in data):
        return tuple(_arrays(a) for a in data)
    return np.asarray(data)


def _leaves(arrays) -> list:
    import tensorflow as tf

    return [a for a in tf.nest.flatten(arrays) if a is not None]


def _length(arrays) -> int:
    leaves = _leaves(arrays)
    return len(leaves[0]) if leaves else 0


def _split(arrays, fraction: float):
    """(train, validation): the last `fraction` of the examples held out, unshuffled, as Keras does."""
    import tensorflow as tf

    split_at = int(math.floor(_length(arrays) * (1.0 - fraction)))
    head = tuple(None if a is None else tf.nest.map_structure(lambda t: t[:split_at], a) for a in arrays)
    tail = tuple(None if a is None else tf.nest.map_structure(lambda t: t[split_at:], a) for a in arrays)
    return head, tail


def _with_class_weight(arrays, class_weight: dict):
    """(x, y, w): class weights turned into sample weights (sparse or one-hot labels), as Keras does."""
    import numpy as np

    x, y, *rest = arrays
    labels = np.asarray(y)
    classes = labels.argmax(axis=-1) if labels.ndim > 1 and labels.shape[-1] > 1 else labels.reshape(len(labels))
    weights = np.array([float(class_weight.get(int(c), 1.0)) for c in classes], dtype="float32")
    if rest:
        weights = weights * np.asarray(rest[0], dtype="float32")
    return x, y, weights


def _arrays_dataset(arrays: tuple, batch_size: int, shuffle: bool):
    """Batches of the arrays (x, y, sample weights; y None for a model trained without labels), packed as fit()
    packs them (`batch_parts.pack`: x alone without labels); shuffled indices (the run's seed) when training, so
    no copy is shuffled."""
    import tensorflow as tf

    from .batch_parts import pack

    n = _length(arrays)
    tensors = [None if a is None else tf.nest.map_structure(tf.convert_to_tensor, a) for a in arrays]
    indices = tf.data.Dataset.range(n)
    if shuffle:
        indices = indices.shuffle(n, reshuffle_each_iteration=True)
    batches = indices.batch(batch_size).map(
        lambda i: pack(*[None if t is None else tf.nest.map_structure(lambda a: tf.gather(a, i), t) for t in tensors]),
        num_parallel_calls=tf.data.AUTOTUNE)
    return batches.prefetch(tf.data.AUTOTUNE)


def _leading_dim(ds) -> int | None:
    """The batch size of a batched dataset: from its spec if static, else from its first batch."""
    import tensorflow as tf

    spec = tf.nest.flatten(ds.element_spec)
    dims = {s.shape[0] for s in spec if s.shape.rank}
    if len(dims) == 1 and None not in dims:
        return int(dims.pop())
    for element in ds.take(1):
        first = tf.nest.flatten(element)[0]
        return int(first.shape[0]) if first.shape.rank else None
    return None
