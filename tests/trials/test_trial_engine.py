"""One trial engine for every front end: the plan of runs, the verdict, and the same keep/reject in tune and the wizard."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tfturbo.errors import UserError
from tfturbo.settings import RunSettings
from tfturbo.trials.spec import parse_settings
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import Trial, equal_samples, run_trial
from tfturbo.trials.verdict import FASTER, TrialVerdict

def _tune_fakes():
    """The tune tests' recorded summaries and fake backend (tests/tune/conftest.py), loaded by path."""
    spec = importlib.util.spec_from_file_location("tune_fakes", Path(__file__).resolve().parents[1] / "tune" /
                                                  "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FakeBackend, summary = _tune_fakes().FakeBackend, _tune_fakes().summary


def recorded(settings: RunSettings, ms: float = 100.0, status: str = "completed", factor: float = 1.0) -> dict:
    doc = summary(ms * factor, 0.9, status=status, policy=settings.policy, jit=settings.jit_compile,
                  batch_size=settings.batch_size or 64)
    return {**doc, "settings": {**settings.to_dict(), "batch_size": settings.batch_size or 64}}


def test_runs_alternate_ab_ba_and_stop_when_clear():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6))
    order = []
    jitter = iter([1.0, 1.01, 0.99, 1.02, 0.98, 1.0] * 3)

    def execute(planned):
        order.append((planned.arm, planned.replicate, planned.name))
        ms = (80.0 if planned.arm == "b" else 100.0) * next(jitter)
        return recorded(planned.settings, ms), None

    verdict = run_trial(trial, execute)
    assert [o[0] for o in order[:6]] == ["a", "b", "b", "a", "a", "b"]
    assert [o[2] for o in order[:2]] == ["a1", "b1"]
    assert verdict.speed.verdict == FASTER and verdict.speed.replicates == 3  # clear after the minimum
    assert verdict.speed.ci95[0] > 1.0


def test_a_failed_candidate_ends_the_trial_at_once():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(policy="mixed_float16"), SpeedRule(3, 6))
    calls = []

    def execute(planned):
        calls.append(planned.arm)
        return recorded(planned.settings, status="nan_stopped" if planned.arm == "b" else "completed"), None

    verdict = run_trial(trial, execute)
    assert calls == ["a", "b"] and not verdict.kept and verdict.status == "nan_stopped"
    assert "NaN" in verdict.reason and verdict.findings[0]["code"] == "NAN_LOSS"


def test_a_larger_batch_trains_on_as_many_samples():
    a = RunSettings("w", batch_size=64, steps=300, val_every=60)
    b = equal_samples(a, a.with_(batch_size=256), 64, 256)
    assert (b.steps, b.val_every) == (75, 15)
    odd = equal_samples(a, a.with_(batch_size=96), 64, 96)
    assert odd.val_every == 40 and odd.steps == 200


def test_trial_runs_never_profile_nor_stop_early():
    a = RunSettings("w", batch_size=64, profile=None, until_ci=0.02, min_steps=10)
    trial = Trial(a, a.with_(jit_compile=True))
    planned = trial.next_run()
    assert planned.settings.profile == (0, 0) and planned.settings.until_ci is None


def test_the_verdict_document_round_trips_with_the_ab_keys():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(2, 2))
    verdict = run_trial(trial, lambda p: (recorded(p.settings, 80.0 if p.arm == "b" else 100.0), None))
    doc = verdict.to_dict()
    assert set(doc["speed"]) >= {"ratio", "ci95", "verdict", "replicates"}
    assert set(doc["accuracy"]) >= {"metric", "delta", "ci95", "verdict"}
    assert {"kept", "reason", "findings"} <= set(doc)
    again = TrialVerdict.from_dict(doc)
    assert again.speed.ratio == pytest.approx(verdict.speed.ratio) and again.kept == verdict.kept


def test_xla_that_never_switched_on_is_not_credited():
    a = RunSettings("builtin:fake", batch_size=64)
    trial = Trial(a, a.with_(jit_compile=True), SpeedRule(2, 2))

    def execute(planned):
        doc = recorded(planned.settings, 70.0 if planned.arm == "b" else 100.0)
        if planned.arm == "b":
            doc["xla_active"] = False
        return doc, None

    verdict = run_trial(trial, execute)
    assert verdict.speed.verdict == FASTER and not verdict.kept and "XLA_NOT_ACTIVE" in verdict.reason


def test_ab_settings_parse_and_name_their_mistakes():
    base = RunSettings("w")
    b = parse_settings("policy=mixed_bfloat16, jit=on,batch=128,fix_head=on", base, "--b")
    assert (b.policy, b.jit_compile, b.batch_size, b.fix_head) == ("mixed_bfloat16", True, 128, True)
    assert parse_settings("", base, "--a") == base
    assert parse_settings("input-fixes=on", base, "--b").input_fixes is True
    with pytest.raises(UserError, match="jit='maybe' is not valid"):
        parse_settings("jit=maybe", base, "--b")
    with pytest.raises(UserError, match="known key"):
        parse_settings("precision=16", base, "--b")
