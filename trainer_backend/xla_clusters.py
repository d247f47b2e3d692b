"""Did XLA auto-clustering compile anything? Counted from the training step's optimized graph.

`tf.config.optimizer.set_jit("autoclustering")` never fails: when TensorFlow
finds nothing to cluster — on a CPU always, unless TF_XLA_FLAGS holds
`--tf_xla_cpu_global_jit` (`xla_flags.autoclustering_flags`; issue 23:
per-example losses bit-identical to the reference's) — the run is the reference's and its "speed-up" is noise. So the
run counts the XLA cluster launches that TensorFlow's graph optimization put
into the step functions it ran, and the summary's `xla_active` and
`xla_clusters` say it (a trial then stops with "did not take effect").

How: run metadata is switched on for the first training call only (a
warm-up call, never measured) and read at the start of the second; it holds
the post-optimization graph of every function instantiated meanwhile, where
auto-clustering shows as `_XlaCompile`/`_XlaRun` (or `XlaLaunch`) nodes.
"""

from __future__ import annotations

import sys

import keras

CLUSTER_OPS = ("_XlaRun", "XlaLaunch")  # one node per compiled cluster launch


def count_clusters(run_metadata) -> int:
    """XLA cluster launches in the post-optimization graphs of the functions in `run_metadata`."""
    return sum(1 for graph in run_metadata.function_graphs for node in graph.post_optimization_graph.node
               if node.op in CLUSTER_OPS)


class ClusterProbe(keras.callbacks.Callback):
    """Records the first training call's graphs; `clusters` is the count (None until read, or unreadable)."""

    def __init__(self) -> None:
        super().__init__()
        self.clusters: int | None = None
        self._recording = False
        self._calls = 0

    def on_train_begin(self, logs=None):
        from tensorflow.python.eager import context

        try:
            context.enable_run_metadata()
            self._recording = True
        except Exception as exc:  # noqa: BLE001 - a check, not the measurement
            print(f"trainer_backend: XLA cluster check skipped ({type(exc).__name__}: {exc})", file=sys.stderr)

    def on_train_batch_begin(self, batch, logs=None):
        self._calls += 1
        if self._recording and self._calls > 1:  # the first call has run: its graphs are recorded
            self._read()

    def on_train_end(self, logs=None):
        if self._recording:
            self._read()

    def _read(self) -> None:
        from tensorflow.python.eager import context

        self._recording = False
        try:
            self.clusters = count_clusters(context.export_run_metadata())
        except Exception as exc:  # noqa: BLE001
            print(f"trainer_backend: XLA cluster check failed ({type(exc).__name__}: {exc})", file=sys.stderr)
        finally:
            context.disable_run_metadata()
