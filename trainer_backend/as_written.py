"""The job as the user's script wrote it, read before tfturbo changes anything (issue 38).

A run measures the script as written unless its settings say otherwise: the
settings left unset (`tfturbo.settings.AS_WRITTEN`: policy, jit_compile,
steps_per_execution; None) take what the script's own compile() and policy
resolved. This module reads that once the model is built and compiled by the
workload and before `run.recompile` compiles it again: the dtype policy the
script set, `jit_compile` as given (True, False or Keras 3's "auto") and as
Keras resolved it (`Trainer._resolve_auto_jit_compile`: "auto" is XLA on a GPU
without a strategy when every layer supports it, off on a CPU-only machine),
`steps_per_execution`, the optimizer and its learning-rate schedule, the TF32
state, and the callbacks the script passed to fit() — which a measured run
does not run (CALLBACKS_NOT_RUN). The record is the run's `as_written`
(run.yaml and summary.json), and a study's baseline is this configuration.
"""

from __future__ import annotations

import sys
from typing import Any

from tfturbo import findings as F
from tfturbo.as_written import AsWritten
from tfturbo.findings import Finding
from tfturbo.learning_rate import Schedule, schedule_text
from tfturbo.settings import POLICIES, RunSettings

GIVEN = "_tfturbo_compile_given"  # the compile() arguments `record_compile_arguments` saw: {"jit_compile", ...}
RECORDED_ARGUMENTS = ("jit_compile", "steps_per_execution")

# what each dropped callback would have done to the user's training, and so to what the comparison leaves out
CALLBACK_EFFECTS = {
    "EarlyStopping": "stops training when the monitored metric stalls: the measured runs train their fixed "
                     "number of steps",
    "ReduceLROnPlateau": "lowers the learning rate when the metric stalls: the measured runs keep the optimizer's "
                         "own rate (or schedule), so the accuracy compared is without those drops",
    "LearningRateScheduler": "sets the learning rate each epoch: the measured runs keep the optimizer's own rate "
                             "(or schedule), so the accuracy compared is without it",
    "ModelCheckpoint": "saves the model during training: its time is not in the measured step time",
    "BackupAndRestore": "saves training state each epoch: its time is not in the measured step time",
    "TensorBoard": "writes logs (and may profile): its time is not in the measured step time",
    "CSVLogger": "writes a log line each epoch: its time is not in the measured step time",
}
KERAS_OWN = ("History", "ProgbarLogger")  # fit() adds these itself: nothing of the user's is dropped


def record_compile_arguments(compile_: Any, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Note the jit_compile and steps_per_execution a compile() call was given (`optimizer_code.recording_compile`
    calls this for every compile() while the workload builds its model, `compile_` Keras' own; the last call's
    arguments win)."""
    import inspect

    try:
        bound = inspect.signature(compile_).bind_partial(model, *args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = kwargs
    given = {k: bound[k] for k in RECORDED_ARGUMENTS if k in bound}
    object.__setattr__(model, GIVEN, given)  # not a tracked attribute


def read(model: Any, workload: Any, optimizers: Any = None, tf32: bool | None = None,
         run_policy: str | None = None) -> AsWritten:
    """The as-written record of a built, compiled model (before `run.recompile`); `run_policy`: the policy the
    run set before the workload built its model (None: none, the workload's own took effect)."""
    import keras

    given = getattr(model, GIVEN, None) or {}
    policy = keras.mixed_precision.global_policy().name
    if run_policy is not None:  # the run's policy replaced the script's: what did the script ask for?
        asked = getattr(workload, "asked_policy", None)
        policy = asked or (policy if policy != run_policy else keras.config.floatx())
    try:
        jit = bool(model.jit_compile) if getattr(model, "compiled", False) else None
    except Exception:  # noqa: BLE001 - a model whose jit_compile cannot be read
        jit = None
    spe = getattr(model, "steps_per_execution", None)
    record: AsWritten = {
        "policy": policy,
        "jit_compile": jit,
        # what compile() was given: "auto" (Keras' default, also when not given), True or False
        "jit_compile_given": _plain(given.get("jit_compile", "auto")),
        "steps_per_execution": int(spe) if isinstance(spe, int) and spe >= 1 else None,
        "tf32": tf32,
        "callbacks": callback_names(workload),
    }
    rec = (optimizers.records[0] if optimizers is not None and getattr(optimizers, "records", None) else None)
    if rec is not None:
        rate = rec.get("learning_rate")
        record["optimizer"] = rec.get("class")
        if isinstance(rate, dict):
            schedule = Schedule({"class": rate.get("schedule"), "config": rate.get("config") or {}})
            record["learning_rate_schedule"] = schedule
            record["learning_rate"] = schedule_text(schedule)
        else:
            record["learning_rate"] = rate
    return record


def _plain(value: Any) -> Any:
    return value if isinstance(value, (bool, int, float, str)) or value is None else str(value)


def resolve(settings: RunSettings, record: AsWritten, replicas: int = 1) -> RunSettings:
    """`settings` with each setting left as written set from the record: the run measures the script's own
    configuration, and its summary's settings say which one. A script's jit_compile=True under a strategy of
    several replicas is measured without XLA, said on stderr: Keras cannot compile the replicas' step as one
    XLA function (`distribute.refuse_jit_across_devices`)."""
    ran = {"policy": record.get("policy") if record.get("policy") in POLICIES else "float32",
           "jit_compile": bool(record.get("jit_compile")),
           "steps_per_execution": record.get("steps_per_execution") or 1}
    if settings.jit_compile is None and ran["jit_compile"] and replicas > 1:
        print(f"tfturbo: the script compiles with jit_compile=True; measured without XLA under --strategy "
              f"{settings.strategy} ({replicas} replicas), where Keras cannot compile the step as one XLA function",
              file=sys.stderr)
        ran["jit_compile"] = False
    return settings.resolved(ran)


def callback_names(workload: Any) -> list[str]:
    """The class names of the callbacks the script passed to the measured fit() (none for a contract workload,
    whose fit() is tfturbo's), Keras' own History and progress bar left out."""
    call = getattr(workload, "call", None)
    names = [type(c).__name__ for c in getattr(call, "callbacks", None) or []]
    return [n for n in dict.fromkeys(names) if n not in KERAS_OWN]


def callbacks_finding(names: list[str]) -> Finding | None:
    """CALLBACKS_NOT_RUN for the script's callbacks that the measured runs leave out: which, why, and what that
    means for the comparison. None when the script passed none."""
    if not names:
        return None
    effects = [f"{n} {CALLBACK_EFFECTS[n]}" for n in names if n in CALLBACK_EFFECTS]
    own = [n for n in names if n not in CALLBACK_EFFECTS]
    if own:
        effects.append(f"{', '.join(own)} ({'its' if len(own) == 1 else 'their'} work is not in the measured "
                       "step time, and nothing it changes in training is)")
    message = (f"the script's callbacks are not run during measurement ({', '.join(names)}): tfturbo trains a fixed "
               "number of steps and writes only its own run directory. Every configuration is measured without "
               "them alike, so the speed comparison stands; what they do in your training is not in it: "
               + "; ".join(effects))
    return Finding(F.CALLBACKS_NOT_RUN, message,
                   fix="nothing to change: your script keeps its callbacks; read the speed-up as the training "
                       "step's, and check what they change (a learning rate they lower, an early stop) in your "
                       "own full run", where="fit(callbacks=...)", data={"callbacks": names})
