"""Each fixed validation example's result at each validation point: the accuracy gate's data.

The accuracy gate compares two configurations example by example: the same
validation examples, at equal samples seen, so the difference has an interval
as tight as their disagreement allows. The examples are the study's fixed set
(`validation_set.fixed_set`: read once, independent of the run's batch size,
shared by every run of a study through `--val-set`, each with a content
digest), and Keras' own validation runs on the same set, so the validation
curve and the gate agree — and the set's known cardinality keeps each output's
validation loss what `model.evaluate` says on those examples.

At each validation point the model's output on every example gives its
correctness and its loss exactly as the compiled metric and loss compute them
(`ExampleJudge`: every label shape Keras' fit accepts) — and, for a model with
several outputs, each output's own loss and its own accuracy where it has one
(the gate judges every output) — written to `paired_validation.npz` in the run
directory with the examples' digests, rewritten atomically after each point
so a run that stops early keeps what it measured. When they cannot be
computed, `problem` says why and the gate reports "not paired (why)".

`paired_validation.npz`: `step`, `samples` (P,); `correct`, `loss` (P, N): the
primary accuracy metric and the total (weighted) loss; `digest` (N,) uint64;
with several outputs `output_names`, `output_metrics` (K,) (the accuracy metric
each output is judged on, "" for none: its loss), `output_loss` (P, K, N)
unweighted, `output_correct` (P, K, N) (NaN where an output has no accuracy).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .validation_set import EXAMPLES, FixedSet, fixed_set

FILE = "paired_validation.npz"


class PairedValidation:
    """Owns the fixed validation set of one run and the per-example results measured on it."""

    def __init__(self, val_ds, max_examples: int, max_batches: int | None = None, folder: str | None = None) -> None:
        self.problem: str | None = None  # why per-example results could not be computed, if so
        try:
            self.set: FixedSet | None = fixed_set(val_ds, max_examples, max_batches, folder)
        except Exception as exc:  # noqa: BLE001 - Keras validates on the workload's data; the gate says why not
            self.set = None
            self.problem = (f"the validation examples could not be read: {type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:300]}")
            print(f"trainer_backend: {self.problem}", file=sys.stderr)
        self.dataset = self.set.dataset if self.set is not None else val_ds
        self.steps: list[int] = []
        self.samples: list[int] = []
        self.correct: list[np.ndarray] = []
        self.loss: list[np.ndarray] = []
        self.outputs: list[dict[str, Any]] = []  # with several outputs: {name, loss, metric, weight} each
        self.output_loss: list[np.ndarray] = []  # (K, N) per point
        self.output_correct: list[np.ndarray] = []  # (K, N) per point, NaN where an output has no accuracy
        self.accuracy_metric: str | None = None
        self.n_examples = 0
        self._predict_model = None  # the model `_predict` calls (traced once per run)
        self._traced = True

    @classmethod
    def of_run(cls, val_ds, settings) -> PairedValidation:
        """The run's: `settings.val_examples` examples (whole batches up to `val_steps` when they cannot be
        re-batched), the study's set in `settings.val_set` when given."""
        return cls(val_ds, settings.val_examples, settings.val_steps, settings.val_set)

    # -- measuring ------------------------------------------------------------------------------

    def evaluate(self, model, step: int, samples_seen: int, val_logs: dict[str, Any]) -> None:
        """Every example's correctness and loss now; `val_logs` names the accuracy metric Keras reported."""
        if self.problem is not None:
            return
        if self.accuracy_metric is None:
            self.accuracy_metric = _accuracy_name(val_logs, model)
        correct: list[np.ndarray] = []
        losses: list[np.ndarray] = []
        per_output: list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = []
        try:
            judge = ExampleJudge(model, self.accuracy_metric)
            predict = self._predict_function(model)
            for batch in self.dataset:
                x, y = batch[0], batch[1]
                weights = batch[2] if len(batch) > 2 else None
                pred = predict(x)
                if self.accuracy_metric is not None:
                    c = judge.correctness(y, pred)
                    if c is None:
                        self.accuracy_metric = None
                    else:
                        correct.append(c)
                loss, own = judge.losses(y, pred, weights)
                if loss is not None:
                    losses.append(loss)
                if judge.several_outputs:
                    per_output.append((own, judge.output_correctness(y, pred)))
        except Exception as exc:  # noqa: BLE001 - the gate then says why it has no pairs; training goes on
            self.problem = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            print(f"trainer_backend: per-example validation failed: {self.problem}", file=sys.stderr)
            return
        if self.accuracy_metric is None and not losses:
            self.problem = judge.why_not or "neither an accuracy metric nor the loss could be computed per example"
            print(f"trainer_backend: per-example validation not possible: {self.problem}", file=sys.stderr)
            return
        self.steps.append(step)
        self.samples.append(samples_seen)
        if self.accuracy_metric is not None and correct:
            self.correct.append(np.concatenate(correct))
        if losses:
            self.loss.append(np.concatenate(losses).astype(np.float32))
        if per_output:
            self._record_outputs(judge, per_output)
        self.n_examples = max(len(a) for a in (self.correct[-1:] + self.loss[-1:])) if (self.correct or self.loss) \
            else 0

    def _predict_function(self, model):
        """The model's inference as one traced function, kept for the run (called eagerly, batch by batch, it
        cost a tiny model 0.24 s of each 10,000-example pass; 0.01 s traced); eager for a model that cannot be
        traced."""
        import tensorflow as tf

        if self._predict_model is not model:
            self._predict_model = model
            traced = tf.function(lambda x: model(x, training=False), reduce_retracing=True)

            def predict(x):
                if self._traced:
                    try:
                        return traced(x)
                    except Exception as exc:  # noqa: BLE001 - the model's own call, eagerly, is the reference
                        self._traced = False
                        print(f"trainer_backend: per-example validation runs eagerly ({type(exc).__name__})",
                              file=sys.stderr)
                return model(x, training=False)
            self._predict = predict
        return self._predict

    def _record_outputs(self, judge: ExampleJudge, batches: list[tuple[dict, dict]]) -> None:
        """This point's (K, N) tables of each output's loss and correctness from the batches' (own losses, own
        correctness) by output name; NaN for an output without an accuracy metric."""
        self.outputs = judge.output_table()
        names = [o["name"] for o in self.outputs]
        losses = np.stack([np.concatenate([own[n] for own, _ in batches]) for n in names]).astype(np.float32)
        self.output_loss.append(losses)
        self.output_correct.append(np.stack([
            np.concatenate([c[n] for _, c in batches]) if n in batches[0][1] else np.full(losses.shape[1], np.nan)
            for n in names]).astype(np.float32))

    # -- writing --------------------------------------------------------------------------------

    def save(self, run_dir: Path) -> None:
        if not self.steps:
            return
        arrays: dict[str, Any] = {"step": np.asarray(self.steps), "samples": np.asarray(self.samples)}
        if self.correct and len(self.correct) == len(self.steps):
            arrays["correct"] = np.stack(self.correct).astype(np.float32)
        if self.loss and len(self.loss) == len(self.steps):
            arrays["loss"] = np.stack(self.loss)
        if self.set is not None and self.set.digests is not None and len(self.set.digests) == self.n_examples:
            arrays["digest"] = self.set.digests
        if self.outputs and len(self.output_loss) == len(self.steps):
            arrays["output_names"] = np.array([o["name"] for o in self.outputs])
            arrays["output_metrics"] = np.array([o["metric"] or "" for o in self.outputs])
            arrays["output_loss"] = np.stack(self.output_loss)
            arrays["output_correct"] = np.stack(self.output_correct)
        tmp = run_dir / (FILE + ".tmp")
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, run_dir / FILE)

    def describe(self) -> dict[str, Any]:
        """The summary's `paired_validation` entry."""
        return {"file": FILE if self.steps else None, "examples": self.n_examples,
                "accuracy_metric": self.accuracy_metric if self.correct else None,
                "loss": bool(self.loss), "fixed_examples": self.set is not None and self.set.mode == EXAMPLES,
                "eval_batch": self.set.batch if self.set is not None else None,
                "points": [[s, n] for s, n in zip(self.steps, self.samples)], "problem": self.problem,
                "set": self.set.describe() if self.set is not None else None,
                **({"outputs": self.outputs} if self.outputs else {})}


def _accuracy_name(val_logs: dict[str, Any], model=None) -> str | None:
    """The validation accuracy metric Keras reported, preferring plain `val_accuracy`: a name with "acc" in
    it, or a compiled metric whose function is an accuracy (a top-k metric named "top2")."""
    names = [k for k in val_logs if k.startswith("val_") and "acc" in k]
    names += [f"val_{name}" for name in _accuracy_metric_names(model) if f"val_{name}" in val_logs]
    names = list(dict.fromkeys(names))
    return "val_accuracy" if "val_accuracy" in names else (sorted(names)[0] if names else None)


def _compiled_metrics(model) -> list[tuple[int, str, Any]]:
    """(output index, name as Keras reports it, metric) of the model's compiled metrics, once fit built them."""
    compiled = getattr(model, "_compile_metrics", None)
    if compiled is None or not getattr(compiled, "built", False):
        return []
    out = []
    for index, group in enumerate(getattr(compiled, "_flat_metrics", None) or []):
        for m in getattr(group, "metrics", None) or []:
            output = getattr(group, "output_name", None)
            out.append((index, f"{output}_{m.name}" if output else m.name, m))
    return out


def _accuracy_metric_names(model) -> list[str]:
    if model is None:
        return []
    return [name for _, name, m in _compiled_metrics(model)
            if "accuracy" in getattr(getattr(m, "_fn", None), "__name__", "")]


class ExampleJudge:
    """Each example's correctness and loss exactly as the model's compiled metric and loss compute them.

    Keras' `fit` accepts labels of many shapes for one loss — (N,) or (N, 1) for a
    one-unit sigmoid head, sparse or one-hot for a softmax, a dict or list per
    output, sample weights — and aligns them inside its loss and metric objects
    (`squeeze_or_expand_to_same_rank`, `"accuracy"` resolved to binary, sparse
    or categorical accuracy by the shapes). So the per-example values come from
    those same objects, after fit built them: the metric's own function
    (`MeanMetricWrapper._fn` with its arguments, e.g. a top-k's k), and each
    output's compiled loss with its reduction switched off, weighted by the
    loss weights and the sample weights and summed over the outputs, as Keras
    sums them. Predictions are cast to float32 first: the gate judges what the
    model predicts, not whether a metric accepts 16-bit tensors.
    Without compiled objects (a model with its own compile or train_step), a
    plain argmax / 0.5-threshold correctness and the `loss` attribute are used.
    """

    def __init__(self, model, accuracy_metric: str | None) -> None:
        self.model = model
        self.why_not: str | None = None
        self.metric = self._find_metric(accuracy_metric) if accuracy_metric else None
        compile_loss = getattr(model, "_compile_loss", None)
        self.flat_losses = list(getattr(compile_loss, "_flat_losses", None) or []) \
            if getattr(compile_loss, "built", False) else []
        self.compile_loss = compile_loss if self.flat_losses else None
        self.fallback_loss = None if self.flat_losses else _loss_callable(model)
        if not self.flat_losses and self.fallback_loss is None:
            self.why_not = "the model has no compiled loss to evaluate per example (its own train_step computes it)"

    # -- correctness ----------------------------------------------------------------------------

    def _find_metric(self, val_name: str):
        """(output index, metric function, its kwargs) of the compiled metric Keras reported as `val_name`."""
        from keras.src.metrics.reduction_metrics import MeanMetricWrapper

        wanted = val_name[len("val_"):]
        for index, name, m in _compiled_metrics(self.model):
            if name == wanted and isinstance(m, MeanMetricWrapper):
                return index, m._fn, dict(m._fn_kwargs)
        return None

    def correctness(self, y, pred) -> np.ndarray | None:
        """Per-example share of correct predictions (1.0/0.0 for one label per example), or None."""
        import keras

        outputs = self._flatten(pred)
        labels = self._flatten(y)
        if self.metric is not None:
            index, fn, kwargs = self.metric
            if index >= len(outputs) or index >= len(labels):
                return None
            p = keras.ops.cast(outputs[index], "float32")
            values = np.asarray(fn(keras.ops.convert_to_tensor(labels[index]), p, **kwargs), dtype=np.float64)
            return _per_example(values, len(p)).astype(np.float32)
        if len(outputs) != 1 or len(labels) != 1:
            return None
        return _correctness(np.asarray(labels[0]), np.asarray(keras.ops.cast(outputs[0], "float32")))

    def _flatten(self, structure) -> list:
        """Outputs or labels in the order of the compiled metrics (dicts by the model's output names)."""
        import keras

        compiled = getattr(self.model, "_compile_metrics", None)
        if compiled is not None and getattr(compiled, "built", False):
            return list(compiled._flatten_y(structure))
        return list(keras.tree.flatten(structure))

    # -- loss -----------------------------------------------------------------------------------

    @property
    def several_outputs(self) -> bool:
        """The compiled loss has one loss per output, more than one: each output is judged on its own."""
        return len(self.flat_losses) > 1

    def losses(self, y, pred, sample_weight) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        """(per-example loss as the compiled loss sums it over the outputs, or None if there is none; each
        output's own per-example loss, unweighted as Keras reports `val_<output>_loss`)."""
        import keras

        if self.compile_loss is None:
            if self.fallback_loss is None:
                return None, {}
            return _reduce(np.asarray(self.fallback_loss(y, keras.ops.cast(pred, "float32")), dtype=np.float64)), {}
        y_true, y_pred = self._loss_structures(y, pred)
        total = None
        own: dict[str, np.ndarray] = {}
        for path, loss_fn, weight, name in self.flat_losses:
            y_t, y_p = _resolve(path, y_true), _resolve(path, y_pred)
            w = _resolve(path, sample_weight) if sample_weight is not None and keras.tree.is_nested(sample_weight) \
                else sample_weight
            saved = loss_fn.reduction
            loss_fn.reduction = None
            try:
                values = loss_fn(y_t, keras.ops.cast(y_p, "float32"), w)
            finally:
                loss_fn.reduction = saved
            per = _reduce(np.asarray(values, dtype=np.float64))
            own[_output_name(path, name)] = per
            if weight is not None:
                per = per * float(weight)
            total = per if total is None else total + per
        return total, own

    # -- several outputs ------------------------------------------------------------------------

    def output_table(self) -> list[dict[str, Any]]:
        """Each output the gate judges: its name, its loss and accuracy as Keras reports them (the metric None
        when it has no accuracy: it is judged on its loss), and its loss weight."""
        metrics = _output_accuracies(self.model)
        return [{"name": _output_name(path, name), "loss": f"val_{_output_name(path, name)}_loss",
                 "metric": metrics[_output_name(path, name)][3] if _output_name(path, name) in metrics else None,
                 "weight": float(weight) if weight is not None else 1.0}
                for path, _fn, weight, name in self.flat_losses]

    def output_correctness(self, y, pred) -> dict[str, np.ndarray]:
        """Each output's per-example correctness by its own accuracy metric, for the outputs that have one."""
        import keras

        outputs, labels = self._flatten(pred), self._flatten(y)
        out = {}
        for name, (index, fn, kwargs, _reported) in _output_accuracies(self.model).items():
            if index < len(outputs) and index < len(labels):
                p = keras.ops.cast(outputs[index], "float32")
                values = np.asarray(fn(keras.ops.convert_to_tensor(labels[index]), p, **kwargs), dtype=np.float64)
                out[name] = _per_example(values, len(p)).astype(np.float32)
        return out

    def _loss_structures(self, y, pred):
        """Labels and outputs packed like the compiled loss was built (a dict of labels for a list of outputs,
        one label for a one-output list, ...), as `CompileLoss.call` packs them."""
        import keras

        cl = self.compile_loss
        assert cl is not None, "loss() calls it with a compiled loss"
        tree = keras.tree
        if not tree.is_nested(y) and not tree.is_nested(pred):
            return y, pred
        if isinstance(pred, (list, tuple)) and isinstance(y, dict) and set(cl.output_names or []) == set(y):
            y = [y[name] for name in cl.output_names]
        if not tree.is_nested(y) and hasattr(pred, "__len__") and len(pred) == 1:
            y = [y]
        try:
            pred = tree.pack_sequence_as(cl._y_pred_build_structure, tree.flatten(pred))
            y = tree.pack_sequence_as(cl._y_true_build_structure, tree.flatten(y))
        except (ValueError, TypeError, AttributeError):
            pass
        return y, pred


def _output_name(path, name) -> str:
    """An output's name as Keras names its loss in the logs (`<name>_loss`)."""
    return str(name) if name else "_".join(str(p) for p in path) or "output"


def _output_accuracies(model) -> dict[str, tuple[int, Any, dict, str]]:
    """{output name: (its index among the compiled metrics' outputs, the metric function, its kwargs, the name
    Keras reports: "val_label_accuracy")} for each output with an accuracy metric (its first)."""
    from keras.src.metrics.reduction_metrics import MeanMetricWrapper

    compiled = getattr(model, "_compile_metrics", None)
    if compiled is None or not getattr(compiled, "built", False):
        return {}
    out: dict[str, tuple[int, Any, dict, str]] = {}
    for index, group in enumerate(getattr(compiled, "_flat_metrics", None) or []):
        output = getattr(group, "output_name", None)
        for m in getattr(group, "metrics", None) or []:
            accuracy = "acc" in m.name or "accuracy" in getattr(getattr(m, "_fn", None), "__name__", "")
            if output and output not in out and accuracy and isinstance(m, MeanMetricWrapper):
                out[output] = (index, m._fn, dict(m._fn_kwargs), f"val_{output}_{m.name}")
    return out


def _resolve(path, structure):
    for key in path:
        structure = structure[key]
    return structure


def _per_example(values: np.ndarray, n: int) -> np.ndarray:
    """Mean over every axis but the first."""
    if values.ndim == 0:
        raise ValueError("the metric returned one number for the whole batch, not one per example")
    return values.reshape(n, -1).mean(axis=1)


def _correctness(truth: np.ndarray, p: np.ndarray) -> np.ndarray | None:
    """Per-example correctness without a compiled metric: argmax for several classes, a 0.5 threshold for one
    output; labels (N,) and (N, 1) are the same labels, as in Keras."""
    n = len(p)
    if p.ndim >= 2 and p.shape[-1] > 1:
        predicted = np.argmax(p, axis=-1)
        if truth.shape == p.shape:
            truth = np.argmax(truth, axis=-1)  # one-hot labels
        elif truth.ndim == p.ndim and truth.shape[-1] == 1:
            truth = truth[..., 0]
        if truth.shape != predicted.shape:
            return None
        hit = predicted == truth.astype(predicted.dtype)
    else:
        flat_p, flat_t = p.reshape(n, -1), truth.reshape(n, -1)
        if flat_p.shape != flat_t.shape:
            return None
        hit = (flat_p > 0.5) == (flat_t > 0.5)
    return hit.reshape(n, -1).mean(axis=1).astype(np.float32)


def _loss_callable(model):
    """A Loss object (reduction off, rank alignment on) from the model's `loss` attribute, or None."""
    import keras

    loss = getattr(model, "loss", None)
    if isinstance(loss, (dict, list, tuple)) or loss is None:
        return None
    try:
        if isinstance(loss, str):
            loss = keras.losses.get(loss)
    except (ValueError, TypeError):
        return None
    if isinstance(loss, keras.losses.Loss):
        config = loss.get_config()
        config["reduction"] = None
        try:
            return type(loss).from_config(config)
        except (TypeError, ValueError):
            return None
    if callable(loss):
        return keras.losses.LossFunctionWrapper(loss, reduction=None)
    return None


def _reduce(per: np.ndarray) -> np.ndarray:
    """Mean over every axis but the first: one number per example."""
    if per.ndim == 0:
        raise ValueError("the loss returned one number for the whole batch, not one per example")
    values = per.reshape(len(per), -1).mean(axis=1)
    return np.where(np.isfinite(values), values, math.inf)
