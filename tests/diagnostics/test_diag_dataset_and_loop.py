"""Dataset audit under XLA and the custom-train_step loss-scaling check, on the planted workloads."""

from __future__ import annotations

import numpy as np
from diag_helpers import codes, findings_of

from tfturbo.findings import (CUSTOM_LOOP_NO_LOSS_SCALING, DYNAMIC_SHAPE, PARTIAL_LAST_BATCH, XLA_NOT_ACTIVE)


def test_ragged_batches_under_xla_names_the_partial_batch_and_the_varying_dimension(audit):
    doc = audit("builtin:ragged-batches", jit=True)
    [partial] = findings_of(doc, PARTIAL_LAST_BATCH)
    assert partial["data"]["partial_sizes"] == [4000 % 64]
    assert "drop_remainder=True" in partial["fix"]
    [dynamic] = findings_of(doc, DYNAMIC_SHAPE)
    assert dynamic["where"] == "x dimension 1"
    assert dynamic["data"]["proposed"] == 64 and max(dynamic["data"]["seen"]) == 64
    assert "padded_shapes=([64], [])" in dynamic["fix"] and "bucket_by_sequence_length" in dynamic["fix"]
    assert {"name": "x", "shape": [None, None], "dtype": "int32"} in doc["dataset"]["element_spec"]


def test_shapes_are_only_a_problem_under_xla(audit):
    assert audit("builtin:ragged-batches")["findings"] == []


def test_fixed_shape_data_passes_under_xla(audit):
    assert audit("builtin:mlp", jit=True)["findings"] == []


def test_custom_loop_without_loss_scaling_is_flagged_under_mixed_float16(audit):
    doc = audit("builtin:custom-loop", policy="mixed_float16")
    [finding] = findings_of(doc, CUSTOM_LOOP_NO_LOSS_SCALING)
    assert "train_step" in finding["where"] and "custom_loop.py" in finding["where"]
    assert "self.optimizer.scale_loss(loss)" in finding["fix"]
    assert "spy" in finding["data"]["method"]  # decided by running the step, not by reading it


def test_custom_loop_needs_no_scaling_in_bfloat16(audit):
    assert CUSTOM_LOOP_NO_LOSS_SCALING not in codes(audit("builtin:custom-loop", policy="mixed_bfloat16"))


def _loop_model(scales: bool):
    import keras
    import tensorflow as tf

    class Loop(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
                if scales:
                    loss = self.optimizer.scale_loss(loss)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        inputs = keras.Input((4,))
        model = Loop(inputs, keras.layers.Dense(2, dtype="float32")(keras.layers.Dense(8)(inputs)))
        model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    return model


def test_a_custom_loop_that_scales_its_loss_passes():
    from trainer_backend.diagnostics.loss_scaling_audit import custom_loop_findings

    batch = (np.ones((4, 4), "float32"), np.zeros(4, "int32"))
    assert custom_loop_findings(_loop_model(scales=True), "mixed_float16", batch) == []
    [finding] = custom_loop_findings(_loop_model(scales=False), "mixed_float16", batch)
    assert finding.code == CUSTOM_LOOP_NO_LOSS_SCALING


def test_xla_fallback_is_reported_with_its_cause():
    import keras

    from trainer_backend.detectors.xla import jit_support_findings

    class NoJit(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_jit = False

        def call(self, x):
            return x

    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(2)(NoJit(name="preprocess")(inputs)))
    model.compile(optimizer="adam", loss="mse")
    [finding] = jit_support_findings(model)
    assert finding.code == XLA_NOT_ACTIVE and "'preprocess'" in finding.message


def test_profiler_input_analysis_is_read_and_reported_unavailable_on_the_cpu(tmp_path):
    import keras
    import tensorflow as tf

    from trainer_backend.diagnostics.profile_reader import CPU_REASON, find_xplanes, input_analysis

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    ds = tf.data.Dataset.from_tensors((np.ones((8, 4), "float32"), np.ones((8, 2), "float32"))).repeat()
    model.fit(ds, steps_per_epoch=2, verbose=0)
    tf.profiler.experimental.start(str(tmp_path))
    model.fit(ds, steps_per_epoch=5, verbose=0)
    tf.profiler.experimental.stop()
    analysis = input_analysis(find_xplanes(tmp_path))
    assert analysis["hardware_type"] == "CPU_ONLY"
    assert analysis["available"] is False and analysis["reason"] == CPU_REASON
    assert "No step time measured" in analysis["conclusion"]
    assert any("Iterator" in (op["op"] or "") for op in analysis["top_input_ops"])
