"""A change that did not take effect is not measured as a trial, and every front end says why in words.

Issue 23: on a CPU, XLA auto-clustering compiled nothing (`xla_active` false,
per-example losses bit-identical to A's), yet it cost a whole trial and was
reported as an XLA speed result. Also the "not enough measurement" note reads
right whatever the steady target.
"""

from __future__ import annotations

import json
import math

from tfturbo.run_summary import RunSummary
from tfturbo import findings as F
from tfturbo.report.model import LadderRow, _outcome
from tfturbo.report.pdf import _decision, _speedup
from tfturbo.settings import RunSettings
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.runs import PlannedPair
from tfturbo.trials.trial import Trial, run_trial
from tfturbo.trials.verdict import FASTER, NOT_APPLIED
from tfturbo.tune import levers
from tfturbo.tune.engine import TuneOptions
from tfturbo.tune.ladder import Ladder
from tfturbo.tune.render import render_table

from tests.tune import tune_fakes as FAKES  # the tune tests' recorded summaries and fake backend


def measured(settings: RunSettings, ms: float, **extra) -> dict:
    doc = FAKES.summary(ms, 0.9, policy=settings.policy, jit=settings.jit_compile, batch_size=64,
                        steps=settings.steps)
    doc = {**doc, "settings": {**settings.to_dict(), "batch_size": 64}, "first_steady_step": 5,
           "throughput": {"samples_per_s": 64 * 1000.0 / ms, "steps": 30, "seconds": 3.0, "windows": 6}}
    return {**doc, **extra}


def autoclustering_trial(clusters: int | None) -> tuple[Trial, list]:
    a = RunSettings("builtin:fake", batch_size=64, steps=100)
    b = a.with_(xla_autoclustering=True)
    trial = Trial(a, b, SpeedRule(3, 6), not_in_effect=levers.effect_check(a, b))
    calls = []
    jitter = iter([1.0, 1.01, 0.99, 1.02, 0.98, 1.0] * 3)

    def execute(planned):
        calls.append(planned)
        ms = (80.0 if planned.arm == "b" else 100.0) * next(jitter)
        if planned.arm == "b" and clusters is not None:
            return measured(planned.settings, ms, xla_active=bool(clusters), xla_clusters=clusters), None
        return measured(planned.settings, ms), None

    run_trial(trial, execute)
    return trial, calls


def test_auto_clustering_that_compiled_no_cluster_stops_after_its_first_pair_without_a_ratio():
    trial, calls = autoclustering_trial(clusters=0)
    verdict = trial.verdict()
    assert [c.arm for c in calls] == ["b"]  # the first B run (the first run) showed it: nothing more
    assert verdict.speed.verdict == NOT_APPLIED and math.isnan(verdict.speed.ratio) and not verdict.kept
    text = verdict.speed.text()
    assert text.startswith("not measured: the change did not take effect — ") and "×" not in text
    assert "no operation of the training step into an XLA cluster" in text  # the lever's words: why
    assert "--tf_xla_cpu_global_jit" in text  # ... and what would enable it
    assert verdict.reason == text
    again = type(verdict).from_dict(verdict.to_dict())  # study.yaml keeps the verdict and its words
    assert again.speed.verdict == NOT_APPLIED and again.speed.text() == text


def test_auto_clustering_that_compiled_clusters_is_measured_as_a_trial():
    trial, calls = autoclustering_trial(clusters=3)
    verdict = trial.verdict()
    assert len(calls) >= 6 and verdict.speed.verdict == FASTER
    _, older = autoclustering_trial(clusters=None)  # a run that cannot tell (no xla_active): measured as before
    assert len(older) >= 6


def test_xla_that_keras_refused_stops_the_trial_with_its_causes():
    a = RunSettings("builtin:fake", batch_size=64, steps=100)
    b = a.with_(jit_compile=True)
    refused = {"code": F.XLA_NOT_ACTIVE, "severity": "warning", "where": "model.compile(jit_compile=True)",
               "message": "jit_compile=True was requested but the model runs without XLA", "fix": "...",
               "data": {"causes": ["layer 'text' (TextVectorization) has supports_jit=False"]}}
    trial = Trial(a, b, SpeedRule(3, 6), not_in_effect=levers.effect_check(a, b))
    runs = []

    def execute(planned):
        runs.append(planned.arm)
        if planned.arm == "b":
            return measured(planned.settings, 70.0, xla_active=False, findings=[refused]), None
        return measured(planned.settings, 100.0), None

    verdict = run_trial(trial, execute)
    assert runs == ["b"] and verdict.speed.verdict == NOT_APPLIED and not verdict.kept
    assert "supports_jit=False" in verdict.speed.note and "auto-clustering" in verdict.speed.note


def test_only_the_levers_that_changed_something_are_asked():
    a = RunSettings("builtin:fake", batch_size=64)
    assert levers.effect_check(a, a) is None
    check = levers.effect_check(a, a.with_(batch_size=128))  # the batch lever says nothing about XLA
    assert check is not None and check({"settings": {"xla_autoclustering": False}, "xla_active": False}) is None


def test_tune_shows_the_rung_in_words_and_the_report_never_a_ratio(tmp_path):
    def run(s):
        ms = 100.0 * (1.3 if s.jit_compile else 1) * (0.8 if s.xla_autoclustering else 1)
        doc = FAKES.summary(ms, 0.90, jit=s.jit_compile, memory_kind="host", seed=int(ms))
        return {**doc, "xla_active": False} if s.xla_autoclustering else doc
    backend = FAKES.FakeBackend(run)
    lines: list[str] = []
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=1), runner=backend,
                   say=lines.append).run()
    doc = study.document()
    rung = next(e for e in doc["ladder"] if e["name"].endswith("xla-autoclustering"))
    assert rung["speed"]["verdict"] == NOT_APPLIED and rung["speed"]["ratio"] is None and not rung["kept"]
    assert len(rung["replicates"]) == 1  # B's first run (the first run), not a whole trial
    assert not doc["recommended"]["xla_autoclustering"]
    said = next(line for line in lines if "xla:" in line and "did not take effect" in line)
    assert "×" not in said and "--tf_xla_cpu_global_jit" in said
    assert "did not take effect" in render_table(doc["ladder"])
    assert "XLA auto-clustering not measured" in " ".join(f["message"] for f in rung["findings"])
    decided = next(r for r in study.rungs if r.name == rung["name"])
    row = LadderRow(decided.name, None, {}, rung=decided)
    assert "the change did not take effect" in _outcome(row)
    assert "did not take effect" in _speedup(row).text and "x" not in _speedup(row).text.split("(")[0]
    # issue 39: no decision row (not "rejected"), and no accuracy verdict: its one line says why
    decision = _decision(row).text
    assert "rejected" not in decision and "not judged" in decision and "--tf_xla_cpu_global_jit" in decision
    assert rung["accuracy"]["verdict"] == "not measured" and rung["accuracy"]["checked"] is False


def test_auto_clustering_recommended_on_a_cpu_carries_the_flag(tmp_path):
    def run(s):
        ms = 100.0 * (1.3 if s.jit_compile else 1) * (0.8 if s.xla_autoclustering else 1)
        doc = FAKES.summary(ms, 0.90, jit=s.jit_compile, memory_kind="host", seed=int(ms))
        return {**doc, "xla_active": True, "xla_clusters": 3} if s.xla_autoclustering else doc
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=1),
                 runner=FAKES.FakeBackend(run), say=lambda line: None).run().document()
    assert doc["recommended"]["xla_autoclustering"]
    assert "--tf_xla_cpu_global_jit" in doc["snippet"] and 'set_jit("autoclustering")' in doc["snippet"]


def _never_steady(settings: RunSettings) -> dict:
    doc = measured(settings, 2.0)
    return {**doc, "first_steady_step": None, "throughput": {"samples_per_s": None, "steps": 0, "seconds": 0.0,
                                                             "windows": 0}}


def test_the_shortfall_says_what_each_replicate_needs_whatever_the_steady_target():
    a = RunSettings("builtin:fake", batch_size=64, steps=60)
    for rule, needs in ((SpeedRule(2, 2, steady_s=3.0), "each needs at least 0.3 s of steady state in 3 windows"),
                        (SpeedRule(2, 2, steady_s=0.5), "each needs at least 0.05 s of steady state in 3 windows"),
                        (SpeedRule(2, 2, steady_s=0), "each needs a steady state (at least one steady window)")):
        trial = Trial(a, a.with_(jit_compile=True), rule)
        verdict = run_trial(trial, lambda p: (_never_steady(p.settings), None))
        note = verdict.speed.note
        assert needs in note and "0.0 s" not in note, (rule.steady_s, note)
        assert "longer runs" in note and "more pairs (at most 2)" in note
    # too few pairs, none short: the count of pairs, not a floor; a paired trial's full-length runs are the
    # accuracy gate's and no speed pair: A1, B1, then one paired process
    for share, calls in ((False, 2), (True, 3)):
        trial = Trial(a, a.with_(jit_compile=True), SpeedRule(3, 6), share_process=share)
        for _ in range(calls):
            planned = trial.next_run()
            if isinstance(planned, PlannedPair):
                trial.record(planned, [measured(r.settings, 100.0) for r in planned.runs], [None, None])
            else:
                trial.record(planned, measured(planned.settings, 100.0), None)
        trial.stop()
        assert trial.shortfall() == "1 of the 3 replicate pairs the verdict needs was measured: run 2 more pairs"


def test_a_run_with_too_few_windows_says_how_much_it_measured():
    rule = SpeedRule(3, 6, steady_s=3.0)
    short = RunSummary(throughput={"samples_per_s": 100.0, "seconds": 0.2, "windows": 2})
    assert rule.shortfall(short) == "it measured 0.2 s of steady state in 2 windows"
    assert rule.shortfall(RunSummary(throughput={"windows": 0})) == "it reached no steady state"
    assert SpeedRule(3, 6, steady_s=0).shortfall(short) is None  # no target: any steady window counts



def test_a_trial_s_reference_replicates_write_no_model_and_a_confirmation_profiles_nothing(tmp_path):
    """Checkpoint only where used: A's model is its own rung's run's (the baseline's, the kept rung's); a
    configuration is profiled once, so the confirmation (both configurations profiled before) profiles none."""
    def run(s):
        ms = 100.0 * (0.7 if s.jit_compile else 1) * (0.7 if s.policy != "float32" else 1)
        return FAKES.summary(ms, 0.90, policy=s.policy, jit=s.jit_compile, memory_kind="host", seed=int(ms))
    backend = FAKES.FakeBackend(run, "mixed_bfloat16")
    study = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, max_batch_scale=1, min_replicates=2,
                               max_replicates=2, stages=("mixed_precision", "xla")), runner=backend,
                   say=lambda line: None).run()
    argv = {a[a.index("--out") + 1].split("/")[-1]: a for c, a in backend.calls if c == "run"}
    baseline, xla = "01-baseline", next(r.name for r in study.rungs if r.name.endswith("xla"))
    assert "--no-model" not in argv[baseline] and "--no-model" not in argv[xla]  # their models are the record's
    # paired: B's full-length run is the gate's, judged against the baseline run; A's would serve nothing
    assert f"{xla}.a1" not in argv and not any(name.endswith(".a1") for name in argv)
    pairs = [json.loads(arm) for c, a in backend.calls if c == "run-pair" for arm in a[1::2] if arm.startswith("[")]
    assert pairs and all("--speed-only" in arm for arm in pairs)  # speed-only: no validation, no saved model
    profiled = {name for name, a in argv.items() if "--profile" not in a}  # the default window: profiled
    confirmation = [name for name in argv if "confirmation" in name]
    assert baseline in profiled and xla in profiled
    assert confirmation and not profiled & set(confirmation)
