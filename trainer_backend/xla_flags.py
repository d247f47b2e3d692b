"""The process's XLA flags (TF_XLA_FLAGS), set in the backend's `hello` before TensorFlow reads them.

TensorFlow reads TF_XLA_FLAGS once per process, so every flag a run needs is
added here, before the first device query; a flag already in TF_XLA_FLAGS
(the user's) is left as it is. Two runs of one `run-pair` process share these
flags (`tfturbo.settings.can_share_process`).
"""

from __future__ import annotations

import os
from pathlib import Path

from tfturbo.settings import XLA_CPU_AUTOCLUSTERING_FLAG

XLA_CACHE_FLAG = "--tf_xla_persistent_cache_directory"
# where the traced step function's uid starts, per position of the run in its process (see `align_trace_uid`)
TRACE_UID_STRIDE = 1 << 19


def add_flag(flag: str, value: str | None = None) -> None:
    """Append `flag` (`flag=value` with a value) to TF_XLA_FLAGS unless TF_XLA_FLAGS already names it."""
    flags = os.environ.get("TF_XLA_FLAGS", "")
    if flag in flags:
        return
    os.environ["TF_XLA_FLAGS"] = f"{flags} {flag if value is None else f'{flag}={value}'}".strip()


def use_xla_cache(folder: str) -> None:
    """Point XLA's persistent compilation cache at `folder`.

    TensorFlow keeps each compiled cluster there, keyed by its program and
    device, and loads it instead of compiling when the same program comes
    again — in the next replicate of a trial, or the next rung with the same
    model. A flag the user already set wins.
    """
    Path(folder).mkdir(parents=True, exist_ok=True)
    add_flag(XLA_CACHE_FLAG, folder)


def autoclustering_flags(gpus: int) -> list[str]:
    """Auto-clustering's flags for the device that trains: on a CPU (`gpus` 0) `--tf_xla_cpu_global_jit`, without
    which it clusters nothing there (`trainer_backend.xla_clusters`); on a GPU none — auto-clustering clusters
    GPU ops by default, and the CPU flag would compile the host's ops as well."""
    return [] if gpus else [XLA_CPU_AUTOCLUSTERING_FLAG]


def enable_autoclustering(gpus: int) -> None:
    """Add auto-clustering's flags for a machine with `gpus` GPUs (`autoclustering_flags`) to TF_XLA_FLAGS."""
    for flag in autoclustering_flags(gpus):
        add_flag(flag)


def align_trace_uid(position: int, evaluation: bool = False) -> None:
    """Let the step function this process traces next carry the same name in every replicate, so XLA's
    persistent cache can find it.

    TensorFlow names a traced function after its process-wide uid counter
    ("__inference_one_step_on_data_4711"), and the cache keys a program by that
    name and by its HLO, which holds the name too. A replicate whose process
    built or traced anything else first (the other arm of a `run-pair`, in
    AB or BA order, after a first block of its own length; a separate run)
    traced the same configuration under another number and compiled it
    again: a default tune of builtin:transformer wrote 38 cache entries for 46
    XLA replicates. Moving the counter to a fixed start per position (the
    run's place among the runs its process trains: 0 for `run` and the first
    arm of a pair, 1 for the second) just before the first call makes a
    configuration's program the same in every process that trains it at that
    position; the evaluation step (`evaluation`, traced at the first
    validation, after as many steps as the run's interval) has a start of its
    own. Costs ~0.12 s per 500,000 uids skipped; a counter already past its
    start (a script that traced a lot) is left alone, and the run compiles as
    before.
    """
    try:
        from tensorflow.python.framework import ops  # no public API sets the counter; drawing uids moves it
    except ImportError:  # pragma: no cover - TensorFlow without its Python internals: compile as before
        return
    target = (position + 1) * TRACE_UID_STRIDE + (TRACE_UID_STRIDE // 2 if evaluation else 0)
    now = ops.uid()
    for _ in range(max(0, target - now - 1)):
        ops.uid()
