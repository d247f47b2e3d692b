"""The lists that once drifted from the settings' declarations are derived from them (issue 19, point 3):
the replicate key, the `tfturbo ab` keys and what they take, the audit fixes the policy switches on, and the
app's words when such a fix fails. A setting declared in a test gets all of them with no other edit."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

import pytest

from tfturbo import settings as settings_mod
from tfturbo.compare import replicate_key
from tfturbo.errors import UserError
from tfturbo.findings import HEAD_NOT_FLOAT32, PARTIAL_LAST_BATCH
from tfturbo.settings import FixFailure, RunSettings, declared, setting
from tfturbo.tune.policy import StudyDecisions
from tfturbo.trials.spec import describe, keys, parse_settings
from tfturbo_gui.failures import explain

UNFUSED = "UNFUSED_KERNELS"


@dataclass
class WithNewSetting(RunSettings):
    """RunSettings with one more switch, declared the way a contributor adds one to tfturbo/settings.py."""

    fuse_kernels: bool = setting(False, flag="--fuse-kernels", help="fuse the kernels (automatic fix)",
                                 fixes=UNFUSED, offer="fused kernels",
                                 shown_as="fused kernels", ab="fuse", auto_when=lambda s: s.jit_compile,
                                 failure=FixFailure("fuse the kernels of this model", "fuse_all_kernels",
                                                    "fuse the kernels by hand in build_model()"))


@pytest.fixture
def new_setting(monkeypatch):
    monkeypatch.setattr(settings_mod, "RunSettings", WithNewSetting)
    return WithNewSetting


def test_a_new_setting_gets_its_replicate_key_ab_key_audit_fix_and_failure_text(new_setting):
    base = new_setting("w.py", jit_compile=True)
    # compare: a run with the new setting on is another configuration, not a replicate of the baseline
    assert replicate_key(base.with_(fuse_kernels=True).to_dict()) != replicate_key(base.to_dict())
    # ab: the key, its on|off parser, its value in the ab document
    assert parse_settings("fuse=on", base, "--b").fuse_kernels is True
    with pytest.raises(UserError, match=re.escape("fuse takes on|off")):
        parse_settings("fuse=maybe", base, "--b")
    assert describe(base.with_(fuse_kernels=True))["fuse"] is True
    # the policy: switched on with auto_fix where it applies (here: under XLA) when the audit raised its finding
    policy = StudyDecisions([{"code": UNFUSED, "severity": "warning"}], ["mixed_float16"], "")
    assert policy.fixes_for(base).fuse_kernels is True
    assert policy.fixes_for(base.with_(jit_compile=False)).fuse_kernels is False
    assert StudyDecisions([], ["mixed_float16"], "").fixes_for(base).fuse_kernels is False
    # the app: a failure in its code says what tfturbo tried and offers to untick it
    why = explain("failed", {"message": "ValueError: no", "traceback": "  in fuse_all_kernels\n"},
                  base.with_(fuse_kernels=True))
    assert why.untick == "fuse_kernels" and why.message.startswith("tfturbo could not fuse the kernels")
    assert "fuse the kernels by hand in build_model()" in why.fix


# a value other than the default for every declared setting (a new setting must be added here: the test below
# then says whether runs that differ in it are replicates)
OTHER = {"workload": "other.py", "policy": "mixed_bfloat16", "jit_compile": True, "batch_size": 128, "steps": 100,
         "seed": 7, "strategy": "mirrored", "devices": 2, "workers": 3, "tf_config": "cluster.json",
         "profile": [5, 9], "val_every": 10, "val_steps": 3, "val_examples": 64, "fix_head": True, "fix_int_inputs": True,
         "drop_remainder": True, "input_fixes": True, "lr_scale": 2.0, "xla_autoclustering": True,
         "steps_per_execution": 4, "until_ci": 0.02, "min_steps": 50, "speed_only": True, "no_model": True, "xla_cache": "/tmp/xla", "val_set": "/tmp/validation", "paired_from": 40, "fit_call": 2, "script_args": ["--depth", "3"],
         "extra": {"a": 1}}
# the seed too: trainings of one configuration from other seeds are its replicates (the accuracy gate's trainings'
# noise, issue 39)
MEASUREMENT = {"profile", "val_every", "val_steps", "val_examples", "until_ci", "min_steps", "steps", "speed_only",
               "no_model", "xla_cache", "val_set", "seed", "paired_from"}


def test_runs_differing_in_any_setting_but_how_they_are_measured_are_not_replicates():
    assert set(OTHER) == {f.name for f in fields(RunSettings)}
    base = RunSettings("w.py").to_dict()
    for name, value in OTHER.items():
        same = replicate_key({**base, name: value}) == replicate_key(base)
        assert same == (name in MEASUREMENT), name
    # the case: steps_per_execution=4 is not a replicate of the baseline
    assert replicate_key({**base, "steps_per_execution": 4}) != replicate_key(base)
    # an older run.yaml without the newer keys is a replicate of a new one at their defaults
    old = {k: v for k, v in base.items() if k not in ("steps_per_execution", "xla_autoclustering", "input_fixes")}
    assert replicate_key(old) == replicate_key(base)


def test_ab_keys_are_the_declared_ones_with_what_each_takes():
    assert {k: v.field for k, v in keys().items()} == {
        "policy": "policy", "jit": "jit_compile", "batch": "batch_size", "fix_head": "fix_head", "fix_int_inputs": "fix_int_inputs",
        "drop_remainder": "drop_remainder", "input_fixes": "input_fixes", "lr_scale": "lr_scale",
        "xla_autoclustering": "xla_autoclustering", "steps_per_execution": "steps_per_execution",
        "fit_call": "fit_call", "seed": "seed"}
    base = RunSettings("w.py")
    b = parse_settings("steps-per-execution=4,xla_autoclustering=on,lr_scale=2", base, "--b")
    assert (b.steps_per_execution, b.xla_autoclustering, b.lr_scale) == (4, True, 2.0)
    with pytest.raises(UserError, match="batch takes a whole number >= 1"):
        parse_settings("batch=0", base, "--b")
    with pytest.raises(UserError, match=re.escape("policy takes float32|mixed_float16|mixed_bfloat16")):
        parse_settings("policy=fp8", base, "--b")
    assert set(describe(b)) == set(keys()) | {"steps", "seed"}


def test_every_fix_the_audit_raises_is_declared_with_its_offer_and_failure_words():
    for f, s in declared():
        if s.fixes:
            assert s.offer and s.shown_as and s.report and s.failure is not None, f.name
    audit = [{"code": HEAD_NOT_FLOAT32}, {"code": PARTIAL_LAST_BATCH}]
    policy = StudyDecisions(audit, ["mixed_float16"], "")
    fixed = policy.fixes_for(RunSettings("w.py", policy="mixed_float16"))
    assert (fixed.fix_head, fixed.drop_remainder) == (True, False)  # the partial batch matters under XLA only
    fixed = policy.fixes_for(RunSettings("w.py", jit_compile=True))
    assert (fixed.fix_head, fixed.drop_remainder) == (False, True)
    assert not StudyDecisions(audit, ["mixed_float16"], "", auto_fix=False).fixes_for(
        RunSettings("w.py", policy="mixed_float16")).fix_head
    why = explain("failed", {"message": "tf.data: bad", "traceback": "  in fix_training_data\n"},
                  RunSettings("w.py", input_fixes=True))
    assert why.untick == "input_fixes" and "make the input pipeline changes" in why.fix
