"""Every run's settings and measured results as TensorBoard HParams, so `tensorboard --logdir STUDY/runs`
compares the study's runs by setting in its HParams dashboard, beside their profiles.

Written once at the end of a run into `tb/hparams/` (its own TensorBoard run, so its one step-0 scalar per
result never mixes with the training curves). The numbers are the summary's own (one number per fact).
"""

from __future__ import annotations

import sys
from pathlib import Path
from tfturbo.numbers import finite
from tfturbo.profile import Profile
from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import TB_DIR
from tfturbo.settings import RunSettings, declared

HPARAMS_DIR = "hparams"


def hparams_of(settings: RunSettings) -> dict[str, bool | int | float | str]:
    """The settings a user compares runs by (TensorBoard takes bool, int, float and str): every declared setting
    that makes the configuration, and the run's length (a measurement setting every command line states), from
    the declarations (`tfturbo.settings`), so a new setting is an HParam without a list to keep."""
    return {f.name: value for f, s in declared() if not s.positional and (not s.measurement or s.always)
            and isinstance(value := getattr(settings, f.name), (bool, int, float, str))}


def metrics_of(summary: RunSummary, profile: Profile | None = None) -> dict[str, float]:
    """The measured results: throughput, step time, peak memory, final metrics, the profile's 16-bit share."""
    out: dict[str, float] = {}
    rate = (summary.throughput or {}).get("samples_per_s")
    if finite(rate):
        out["samples_per_s"] = float(rate)
    median = (summary.step_ms or {}).get("median")
    if finite(median):
        out["step_ms"] = float(median)
    if finite(summary.peak_memory_bytes):
        out["peak_memory_mib"] = summary.peak_memory_bytes / 2**20
    for name, value in (summary.metrics or {}).items():
        if finite(value):
            out[f"final_{name}"] = float(value)
    share = profile.sixteen_bit_share() if profile is not None and profile.available else None
    if share is not None:
        out["matmul_16bit_share"] = share
    return out


def write(run_dir: Path, summary: RunSummary, profile: Profile | None = None) -> None:
    """tb/hparams/: the run's HParams and its results; a failure is logged, never fatal."""
    try:
        import tensorflow as tf
        from tensorboard.plugins.hparams import api as hp

        writer = tf.summary.create_file_writer(str(Path(run_dir) / TB_DIR / HPARAMS_DIR))
        with writer.as_default():
            hp.hparams(hparams_of(summary.settings) if summary.settings else {}, trial_id=Path(run_dir).name)
            for name, value in metrics_of(summary, profile).items():
                tf.summary.scalar(name, value, step=0)
        writer.close()
    except Exception as exc:  # noqa: BLE001 - the run's record does not depend on TensorBoard's
        print(f"trainer_backend: HParams not written: {type(exc).__name__}: {exc}", file=sys.stderr)
