"""A configuration's one name (`RunSettings.name_against`): what it changes from the study's baseline, in words a
user reads — never a run folder (issue 42: "04-spe20", "(05-confirmation's trial)" in the wizard and the PDF)."""

from __future__ import annotations

from tfturbo.settings import RunSettings

BASE = RunSettings(workload="train.py", policy="float32", jit_compile=False, batch_size=64)


def test_a_configuration_is_named_by_what_it_changes_from_the_baseline():
    assert BASE.name_against(BASE) == "baseline: float32, batch 64"
    assert BASE.with_(steps_per_execution=20).name_against(BASE) == "20 steps per call"
    assert BASE.with_(policy="mixed_bfloat16", jit_compile=True).name_against(BASE) == "mixed_bfloat16 + XLA"
    assert BASE.with_(jit_compile=True, batch_size=128, lr_scale=2.0).name_against(BASE) == \
        "XLA + batch 128 + learning rate x2"
    assert BASE.with_(xla_autoclustering=True).name_against(BASE) == "XLA auto-clustering"
    assert BASE.with_(fix_head=True, input_fixes=True).name_against(BASE) == \
        "float32 output layer + tf.data input fixes"  # the automatic fixes as the wizard's record words them
    assert BASE.with_(jit_compile=True).name_against(BASE.with_(jit_compile=True, steps_per_execution=8)) == \
        "1 step per call"  # against a baseline that had it: the change back, said so
    assert BASE.with_(policy="mixed_float16").name_against(None) == "mixed_float16, batch 64"  # no baseline


def test_how_a_run_was_measured_changes_no_name():
    """Steps, seed and validation are measurement settings: a run of the baseline's configuration from another seed,
    longer or on more examples is the baseline's configuration."""
    other = BASE.with_(steps=500, seed=2234, val_examples=4000, val_every=50, speed_only=True)
    assert other.name_against(BASE) == "baseline: float32, batch 64"
