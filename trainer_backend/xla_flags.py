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


def enable_autoclustering_on_cpu() -> None:
    """Let auto-clustering cluster ops placed on the CPU (without the flag it clusters nothing there,
    `trainer_backend.xla_clusters`)."""
    add_flag(XLA_CPU_AUTOCLUSTERING_FLAG)
