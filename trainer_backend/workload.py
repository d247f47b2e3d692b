"""Load a workload (docs/ARCHITECTURE.md, "Workloads") and hold it to the contract.

A workload is a `.py` file defining `build_model()` and `make_datasets(batch_size)`,
or `builtin:NAME` for one of the files in `trainer_backend/workloads/`. Builtins
are loaded exactly like user files, so they exercise the same checks. Any other
`.py` file is a training script, measured at its first `fit()` call
(`trainer_backend.script`).

Everything that can be wrong with a workload ends in a `WorkloadError`: one line
naming the file, the problem and the fix (exit 2). The original exception stays
chained (`__cause__`) so its traceback reaches the log.

Accepted datasets: what `model.fit` takes — a batched `tf.data.Dataset` whose
elements are `(x, y)` or `(x, y, sample_weight)`, or features alone for a model
that computes its own loss (its own `train_step` or `compute_loss`: an
autoencoder, a GAN; `batch_parts`); a numpy `(x, y)` / `(x, y, w)` tuple (turned
into a batched dataset, the training set shuffled with the global seed, no batch
dropped); a `keras.utils.PyDataset` or a generator of batches (read through
tf.data as script mode reads them, `script.generator_dataset`). Anything else is
refused, because the audit and the probes read the dataset's `element_spec`.

TensorFlow and Keras are imported inside the functions that need them, so that
`trainer_backend` stays cheap to import.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
import types
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfturbo.errors import WorkloadError, plain_line
from tfturbo.workload_kind import WorkloadDoc

from .stdio import log_name

from .model_loss import compiled_without_loss

if TYPE_CHECKING:  # imported lazily at run time (load_workload): script mode needs keras
    from .script import ScriptWorkload

BUILTIN_PREFIX = "builtin:"
BUILTIN_DIR = Path(__file__).resolve().parent / "workloads"
DEFAULT_BATCH_SIZE = 32


def builtin_names() -> list[str]:
    """Names usable as `builtin:NAME` (module file names with `_` shown as `-`)."""
    return sorted(p.stem.replace("_", "-") for p in BUILTIN_DIR.glob("*.py") if not p.stem.startswith("_"))


@dataclass
class Workload:
    spec: str
    name: str
    path: str
    default_batch_size: int
    module: types.ModuleType
    array_data: bool = False  # make_datasets() returned NumPy arrays (the fixes are written for arrays)
    model: Any = None  # what build_model() returned: whether it can train without labels (`batch_parts`)

    def build_model(self):
        """Call the module's `build_model()` and check it returned a compiled `keras.Model`."""
        import keras

        model = self._call("build_model")
        if not isinstance(model, keras.Model):
            raise self._error(f"build_model() returned {_describe(model)}, not a keras.Model",
                              "return the model object, e.g. `return model`")
        if not model.compiled or model.optimizer is None:
            raise self._error("build_model() returned a model that is not compiled",
                              "call model.compile(optimizer=..., loss=..., metrics=[...]) before returning it")
        if compiled_without_loss(model):
            raise self._error("build_model() compiled the model without a loss, and it computes none of its own "
                              "(no compute_loss or train_step)", "pass loss=... to model.compile(...)")
        self.model = model
        return model

    def describe(self) -> WorkloadDoc:
        """The workload as run.yaml, summary.json and the audit record it."""
        return {"spec": self.spec, "name": self.name, "path": self.path}

    def make_datasets(self, batch_size: int) -> tuple[Any, Any | None]:
        """Call the module's `make_datasets(batch_size)`; return checked `(train_ds, val_ds)`."""
        result = self._call("make_datasets", batch_size)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise self._error(f"make_datasets() returned {_describe(result)}, not a (train_ds, val_ds) pair",
                              "return train_ds, val_ds (val_ds may be None)")
        train, val = result
        if train is None:
            raise self._error("make_datasets() returned no training dataset",
                              "return a batched tf.data.Dataset as the first item")
        train = self._check_dataset(train, "train_ds", batch_size, shuffle=True)
        val = None if val is None else self._check_dataset(val, "val_ds", batch_size, shuffle=False)
        return train, val

    # -- helpers -------------------------------------------------------------------------------

    def _error(self, problem: str, fix: str) -> WorkloadError:
        return WorkloadError(problem, fix, where=self.path)

    def _call(self, func: str, *args):
        import keras

        from .diagnostics.sixteen_bit_hazard import SixteenBitFailure, diagnose

        try:
            return getattr(self.module, func)(*args)
        except WorkloadError:
            raise
        except Exception as exc:  # the user's code failed: one line here, the traceback stays chained
            hazard = diagnose(exc, keras.mixed_precision.global_policy().name, self.path)
            if hazard is not None:  # only the policy under test makes it fail: this configuration fails
                raise SixteenBitFailure(*hazard) from exc
            raise self._error(f"{func}() raised {_exc_line(exc, self.path)}",
                              f"fix the error in {func}() (full traceback in {log_name()})") from exc

    def _check_dataset(self, ds, label: str, batch_size: int, shuffle: bool):
        import tensorflow as tf

        if _is_array_tuple(ds):
            if shuffle:
                self.array_data = True
            ds = _arrays_to_dataset(ds, batch_size, shuffle)
        elif _is_batch_source(ds):  # a keras.utils.PyDataset or a generator, as fit() takes them
            from .script import generator_dataset

            try:
                ds = generator_dataset(ds)[0]
            except Exception as exc:  # the user's code failed reading its first batch
                raise self._error(f"reading the first batch of {label} ({_describe(ds)}) raised "
                                  f"{_exc_line(exc, self.path)}", "fix the error in its __getitem__ (full traceback "
                                  "in the log)") from exc
        if not isinstance(ds, tf.data.Dataset):
            raise self._error(f"make_datasets() returned {_describe(ds)} as {label}, not a tf.data.Dataset",
                              "return a batched tf.data.Dataset of (features, label), a keras.utils.PyDataset "
                              "or a numpy (x, y) tuple")
        from .batch_parts import label_problem

        problem = label_problem(ds.element_spec, self.model)
        if problem is not None and problem[0] == "no_labels":
            raise self._error(f"{label} yields {_describe_spec(ds.element_spec)} without labels, not (features, "
                              f"label), and {problem[1]}",
                              "map it to pairs: ds.map(lambda ex: (ex['features'], ex['label']))")
        if problem is not None:
            raise self._error(f"{label} is not batched (its labels are scalars)",
                              "batch it: ds.batch(batch_size, drop_remainder=True)")
        return ds


def load_workload(spec: str, script_args: list[str] | tuple[str, ...] = (),
                  fit_call: int | None = None) -> Workload | ScriptWorkload:
    """Resolve `spec` (a path or `builtin:NAME`) to a contract workload, imported in isolation with its
    functions checked, or to a training script (`trainer_backend.script`), which runs later, in
    `build_model()`. `script_args` are a script's own options (its sys.argv[1:]), `fit_call` which of its fit()
    calls is measured (None: the first)."""
    from tfturbo.workload_kind import defines_contract

    from .script import ScriptWorkload

    spec = str(spec)
    if spec.startswith(BUILTIN_PREFIX):
        name = spec[len(BUILTIN_PREFIX):]
        path = BUILTIN_DIR / f"{name.replace('-', '_')}.py"
        if name not in builtin_names():
            raise WorkloadError(f"unknown built-in workload {name!r}",
                                "use one of: " + ", ".join(f"builtin:{n}" for n in builtin_names()),
                                where=spec)
    else:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise WorkloadError("workload file not found",
                                "give the path of a .py file or builtin:NAME "
                                f"(built-ins: {', '.join(builtin_names())})", where=spec)
        if path.suffix != ".py":
            raise WorkloadError("a workload must be a Python file (.py)",
                                "give a training script (.py) or a .py file that defines build_model() and "
                                "make_datasets()", where=spec)
        name = path.stem
    path = path.resolve()
    if not defines_contract(path):
        return ScriptWorkload(spec=spec, name=name, path=str(path), script_args=list(script_args), fit_call=fit_call)
    if script_args:
        raise WorkloadError("options after `--` are for a training script, and this file defines build_model() "
                            "and make_datasets()", "drop the options after `--`", where=str(path))
    if fit_call is not None:
        raise WorkloadError("--fit-call chooses among a training script's fit() calls, and this file defines "
                            "build_model() and make_datasets()", "drop --fit-call", where=str(path))
    module = _import_isolated(path)
    for func, signature in (("build_model", "def build_model():"),
                            ("make_datasets", "def make_datasets(batch_size):")):
        if not callable(getattr(module, func, None)):
            sys.modules.pop(module.__name__, None)
            raise WorkloadError(f"no {func}() function", f"define `{signature}` at module level",
                                where=str(path))
    batch = getattr(module, "BATCH_SIZE", DEFAULT_BATCH_SIZE)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        sys.modules.pop(module.__name__, None)
        raise WorkloadError(f"BATCH_SIZE = {batch!r} is not a positive integer",
                            "set BATCH_SIZE to a positive int, e.g. BATCH_SIZE = 64", where=str(path))
    return Workload(spec=spec, name=name, path=str(path), default_batch_size=batch, module=module)


def _import_isolated(path: Path) -> types.ModuleType:
    """Execute the file as a fresh module under a unique name.

    The module stays in `sys.modules` under that unique name only if it loads
    (pickling, dataclasses and Keras serialisation look modules up there); the
    file's folder is on `sys.path` only while it runs, so it can import its own
    helpers without changing what later imports find.
    """
    module_name = f"tfturbo_workload_{_identifier(path.stem)}_{uuid.uuid4().hex[:8]}"
    import_spec = importlib.util.spec_from_file_location(module_name, path)
    assert import_spec is not None and import_spec.loader is not None, "a .py file (load_workload checks)"
    module = importlib.util.module_from_spec(import_spec)
    sys.modules[module_name] = module
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        import_spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        where_line = f"line {exc.lineno}: " if exc.lineno else ""
        raise WorkloadError(f"{where_line}syntax error: {exc.msg}", "correct the syntax and load it again",
                            where=str(path)) from exc
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise WorkloadError(f"importing it raised {_exc_line(exc, str(path))}",
                            f"fix the module-level code (full traceback in {log_name()})", where=str(path)) from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def _exc_line(exc: BaseException, path: str) -> str:
    """`ValueError: message (line N)` where N is the deepest frame in the workload file."""
    message = plain_line(str(exc), 200) or "(no message)"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == Path(path)]
    at = f" (line {lines[-1]})" if lines else ""
    return f"{type(exc).__name__}: {message}{at}"


def _is_batch_source(obj) -> bool:
    """A keras.utils.PyDataset, or a generator or iterator of batches (what fit() reads batch by batch)."""
    import inspect

    import keras

    return isinstance(obj, keras.utils.PyDataset) or inspect.isgenerator(obj) or \
        (hasattr(obj, "__next__") and not isinstance(obj, (tuple, list, dict)))


def _is_array_tuple(obj) -> bool:
    import numpy as np

    return isinstance(obj, tuple) and len(obj) in (2, 3) and all(isinstance(a, np.ndarray) for a in obj)


def _arrays_to_dataset(arrays, batch_size: int, shuffle: bool):
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices(arrays)
    if shuffle:
        ds = ds.shuffle(len(arrays[0]))
    return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def _describe(obj) -> str:
    if isinstance(obj, (tuple, list)):
        return f"a {type(obj).__name__} of {len(obj)} items"
    if obj is None:
        return "None"
    name = type(obj).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _describe_spec(spec) -> str:
    if isinstance(spec, dict):
        return f"dicts with keys {sorted(spec)}"
    if isinstance(spec, tuple):
        return f"tuples of {len(spec)} items"
    return "single tensors"


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)
