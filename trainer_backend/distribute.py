"""The run's tf.distribute strategy, chosen by `--strategy` (TensorFlow's own; tfturbo schedules nothing).

- `default`: no distribution; `mirrored`: MirroredStrategy over this machine's
  devices (GPUs, else CPUs — `TFTURBO_LOGICAL_CPUS=N` splits the CPU into N),
  the first `--devices N` of them if given;
- `multiworker`: MultiWorkerMirroredStrategy (`trainer_backend.multiworker`);
- `tpu`: TPUStrategy through TPUClusterResolver, written to TensorFlow's
  documented API (TPU_NAME or a TPU VM's local TPU) and not verified on a TPU.

The multi-worker and TPU strategies must exist before anything initialises
TensorFlow's devices, so `before_devices()` creates them first thing.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from tfturbo import protocol
from tfturbo.errors import UserError
from tfturbo.numbers import counted
from tfturbo.settings import RunSettings

from . import multiworker

_early: Any = None  # the strategy created by before_devices()
_cluster: multiworker.LocalCluster | None = None


def refuse_jit_across_devices(settings: RunSettings, replicas: int) -> None:
    """jit_compile=True under a strategy whose `replicas` span more than one device is refused, on every device
    kind, with one line: Keras 3 wraps the step's `strategy.run` in the XLA-compiled function
    (keras/src/backend/tensorflow/trainer.py, `_make_function`), which fails across devices (keras-team/keras#19005,
    #20763) — the reason Keras' own `jit_compile="auto"` is off under any strategy
    (`Trainer._resolve_auto_jit_compile`). On a TPU, XLA compiles the step anyway."""
    if settings.jit_compile and replicas > 1:
        raise UserError(f"--jit with --strategy {settings.strategy} ({replicas} replicas): Keras compiles every "
                        "replica's step into one XLA function, which fails across devices (keras-team/keras#19005, "
                        "#20763)", "use --no-jit with a strategy (Keras turns its automatic XLA off under one too), "
                        "or --strategy default to measure XLA on one device")


def before_devices(settings: RunSettings, writer: protocol.EventWriter) -> None:
    """Create a multi-worker or TPU strategy now, before the first device query."""
    global _early, _cluster
    if settings.strategy == "multiworker":
        refuse_jit_across_devices(settings, settings.workers)  # before any worker starts
        _early, _cluster = multiworker.start(settings, writer)
    elif settings.strategy == "tpu":
        _early = tpu_strategy()


def worker_pids() -> list[int]:
    """The local workers this process started (the `hello` event names them)."""
    return _cluster.pids if _cluster is not None else []


def strategy_for(settings: RunSettings):
    import tensorflow as tf

    if settings.strategy in ("multiworker", "tpu"):
        return _early
    if settings.strategy == "mirrored":
        return tf.distribute.MirroredStrategy(devices=mirrored_devices(settings.devices))
    return tf.distribute.get_strategy()


def mirrored_devices(n: int | None) -> list[str] | None:
    """The first n GPUs (else logical CPUs) for MirroredStrategy; None: let it choose them all."""
    if n is None:
        return None
    import tensorflow as tf

    found = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
    if n > len(found):
        kind = "GPU" if tf.config.list_logical_devices("GPU") else "CPU"
        raise UserError(f"--devices {n}: this machine has {counted(len(found), kind + ' device')}",
                        f"pass --devices {len(found)} or fewer" + ("" if kind == "GPU" else
                                                                   f", or set TFTURBO_LOGICAL_CPUS={n}"))
    return [d.name for d in found[:n]]


def tpu_strategy():
    """TPUStrategy as TensorFlow documents it (unverified here: no TPU)."""
    import tensorflow as tf

    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver()  # TPU_NAME, or a TPU VM's own TPU
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, RuntimeError, tf.errors.OpError) as e:
        raise UserError(f"--strategy tpu: no TPU found ({' '.join(str(e).split())[:200]})",
                        "run on a TPU VM, or set TPU_NAME to the TPU's name or grpc:// address") from e
    return tf.distribute.TPUStrategy(resolver)


def fit_scope(model, strategy):
    """Where `model.fit` runs: around Keras 3's multi-worker limit when that is the strategy."""
    import tensorflow as tf

    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return multiworker.fit_scope(model, strategy)
    return contextlib.nullcontext()


def explain_failure(exc: BaseException) -> tuple[BaseException, protocol.ErrorDoc]:
    """A training error as the user should read it (a dead local worker's own last line when one died), and what
    its error event says besides its message (that worker's end, and whether a retry can help)."""
    explained = _cluster.explain(exc) if _cluster is not None else exc
    return explained, explained.said() if isinstance(explained, multiworker.WorkerFailed) else {}


def attach(run_dir: Path) -> None:
    if _cluster is not None:
        _cluster.attach(run_dir)


def shutdown() -> None:
    """Stop the local workers (if any) and keep their logs in the run directory."""
    global _cluster
    if _cluster is not None:
        _cluster.close()
        _cluster = None
