"""The model audit on the built-in workloads: the planted head and sizes are found, the clean ones pass."""

from __future__ import annotations

import pytest
from diag_helpers import codes, findings_of

from tfturbo.findings import BATCH_NOT_MULTIPLE_OF_8, DIM_NOT_MULTIPLE_OF_8, HEAD_NOT_FLOAT32


def test_fp16_softmax_head_is_flagged_with_the_layer_and_the_fix(audit):
    doc = audit("builtin:fp16-softmax-head", policy="mixed_float16")
    [head] = findings_of(doc, HEAD_NOT_FLOAT32)
    assert head["data"]["class"] == "Softmax" and "softmax" in head["where"]
    assert "float16" in head["message"]
    assert 'dtype="float32"' in head["fix"] and "--fix-head" in head["fix"]
    rows = {row["name"]: row for row in doc["layers"]}
    assert rows[head["where"]]["compute_dtype"] == "float16" and rows[head["where"]]["output"]


@pytest.mark.parametrize("workload", ["builtin:mlp", "builtin:transformer"])
@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_clean_builtins_have_no_16bit_head(audit, workload, policy):
    doc = audit(workload, policy=policy)
    assert HEAD_NOT_FLOAT32 not in codes(doc)
    assert DIM_NOT_MULTIPLE_OF_8 not in codes(doc)


def test_the_same_head_is_fine_in_float32(audit):
    assert audit("builtin:fp16-softmax-head", policy="float32")["findings"] == []


def test_unaligned_widths_names_each_layer_and_proposes_rounded_sizes(audit):
    doc = audit("builtin:unaligned-widths", policy="mixed_float16")
    dims = {f["data"]["class"]: f for f in findings_of(doc, DIM_NOT_MULTIPLE_OF_8)}
    assert set(dims) == {"Embedding", "MultiHeadAttention", "Dense"}
    proposed = {(s["what"].split(" ")[0], s["size"], s["proposed"]) for f in dims.values() for s in f["data"]["sizes"]}
    assert ("vocabulary", 1001, 1008) in proposed and ("width", 100, 104) in proposed
    assert ("units", 250, 256) in proposed
    assert "key_dim=40" in dims["MultiHeadAttention"]["fix"]  # 3 heads x 33 -> 3 x 40
    assert "input_dim=1008, output_dim=104" in dims["Embedding"]["fix"]
    [batch] = findings_of(doc, BATCH_NOT_MULTIPLE_OF_8)
    assert batch["data"] == {"batch_size": 60, "proposed": 64}
    assert all(f["where"] for f in doc["findings"])


def test_sizes_are_not_checked_in_float32(audit):
    assert audit("builtin:unaligned-widths", policy="float32")["findings"] == []


def test_subclassed_model_head_is_checked_by_its_output_dtype():
    import keras
    import numpy as np

    from trainer_backend.diagnostics.model_audit import head_findings

    class Classifier(keras.Model):
        def __init__(self, head_dtype=None):
            super().__init__()
            self.hidden = keras.layers.Dense(16, activation="relu")
            self.head = keras.layers.Dense(3, activation="softmax", dtype=head_dtype)

        def call(self, x):
            return self.head(self.hidden(x))

    x = np.zeros((4, 8), "float32")
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        bad, good = Classifier(), Classifier(head_dtype="float32")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    [finding] = head_findings(bad, sample_x=x)
    assert finding.code == HEAD_NOT_FLOAT32 and "float16" in finding.message
    assert head_findings(good, sample_x=x) == []




def test_nan_finding_names_the_16bit_head_as_first_suspect():
    import keras

    from tfturbo.settings import RunSettings
    from trainer_backend.detectors.base import RunContext, Window
    from trainer_backend.detectors.nan import NanLossDetector

    def model(head_dtype=None):
        inputs = keras.Input((8,))
        x = keras.layers.Dense(16)(inputs)
        return keras.Model(inputs, keras.layers.Dense(3, activation="softmax", dtype=head_dtype, name="probs")(x))

    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        bad, fixed = model(), model("float32")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    window = Window(steps=[10, 11], step_ms=[1.0, 1.0], loss=float("nan"), loss_scale=None, skipped_steps=None)
    for m, suspect in ((bad, "First suspect: the output layer 'probs' computes in float16"),
                       (fixed, "already computes in float32")):
        [finding] = NanLossDetector().on_window(RunContext(RunSettings(workload="w"), m, None), window)
        assert finding.code == "NAN_LOSS" and suspect in finding.message


def test_each_head_s_fix_reads_its_own_output_s_loss():
    """Issue 47: on a model with a loss per output `model.loss` is a dict (or a list), so from_logits was missed
    and every linear head was offered a softmax — a logits head (its loss already applies one), a regression
    head. Each head's finding and fix now read that output's own loss."""
    import keras

    from trainer_backend.diagnostics.model_audit import head_findings

    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        image, tabular = keras.Input((4, 4, 2), name="image"), keras.Input((6,), name="tabular")
        seen = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(4, 3, padding="same")(image))
        hidden = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()([seen, tabular]))
        outputs = {"label": keras.layers.Dense(3, name="label")(hidden),
                   "value": keras.layers.Dense(1, name="value")(hidden),
                   "kind": keras.layers.Dense(2, activation="softmax", name="kind")(hidden),
                   "flag": keras.layers.Dense(1, name="flag")(hidden)}
        model = keras.Model({"image": image, "tabular": tabular}, outputs)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    model.compile(optimizer="adam", loss={"label": keras.losses.CategoricalCrossentropy(from_logits=True),
                                          "value": "mse", "kind": "categorical_crossentropy",
                                          "flag": "binary_crossentropy"},
                  loss_weights={"label": 1.0, "value": 0.2, "kind": 1.0, "flag": 1.0})
    fixes = {f.where: f for f in head_findings(model)}
    assert set(fixes) == {"label", "value", "kind", "flag"}
    label, value, kind, flag = (fixes[k] for k in ("label", "value", "kind", "flag"))
    assert label.data["loss"] == {"name": "CategoricalCrossentropy", "kind": "categorical", "from_logits": True}
    assert "softmax" not in label.fix and 'Activation("linear", dtype="float32")' in label.fix  # logits kept
    assert value.data["loss"]["kind"] == "regression" and "softmax" not in value.fix
    assert "a regression output: keep its values" in value.fix
    assert 'keras.layers.Dense(2, activation="softmax", dtype="float32")' in kind.fix.splitlines()[0]
    assert "Activation(" not in kind.fix  # it has its softmax: no second one
    assert 'Activation("sigmoid", dtype="float32")' in flag.fix and "softmax" not in flag.fix
    # the same by position: a list of losses for a list of outputs
    listed = keras.Model(model.inputs, [outputs["label"], outputs["value"]])
    listed.compile(optimizer="adam", loss=[keras.losses.CategoricalCrossentropy(from_logits=True), "mse"],
                   loss_weights=[1.0, 0.2])
    assert all("softmax" not in f.fix for f in head_findings(listed))
