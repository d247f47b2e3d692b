"""The typed documents that flow (issue 41 item 1): a run's summary with its settings inside, the `env` and
probe-input documents, events, a trial's verdict and a study's rungs. Each round-trips through its file form,
reads an older or newer file tolerantly, and answers the questions every front end asks of it in one place."""

from __future__ import annotations

import io
import json

import pytest

from tfturbo.environment import Environment
from tfturbo.run_summary import RunSummary
from tfturbo.runfiles import SUMMARY, load_run
from tfturbo.settings import RunSettings
from tfturbo.tune.study import Rung, Study

ENV = {"devices": [{"type": "CPU", "name": "/device:CPU:0"}, {"type": "GPU", "name": "NVIDIA A100", "memory": 40}],
       "tensorflow": "2.21.0", "keras": "3.15.0", "versions": {"tensorflow": "2.21.0"}, "device": "GPU: NVIDIA A100",
       "accelerator": "GPU", "recommended_policy": "mixed_bfloat16", "reason": "Ampere GPU",
       "tf32": True, "memory": {"available_bytes": 38 * 2**30}}


def test_a_summary_carries_its_settings_as_run_settings_and_writes_them_back():
    settings = RunSettings("builtin:mlp", batch_size=128, policy="mixed_bfloat16", steps=60)
    summary = RunSummary(status="completed", settings=settings, steps_per_s=10.0)
    doc = json.loads(json.dumps(summary.to_dict()))
    assert doc["settings"] == settings.to_dict()
    again = RunSummary.from_dict(doc)
    assert again == summary and again.settings == settings and again.batch_size == 128
    assert again.samples_per_s == 1280.0 and again.step_rate == 10.0


def test_an_older_summary_with_partial_settings_reads_and_invalid_settings_are_named_not_fatal():
    old = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 32}, "steps_per_s": 5.0})
    assert old.settings is not None and old.settings.batch_size == 32 and old.samples_per_s == 160.0
    bad = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 0}, "wall_s": 2.0})
    assert bad.settings is None and bad.wall_s == 2.0 and bad.batch_size == 1
    assert any("settings are not valid" in p for p in bad.problems)


def test_load_run_hands_back_the_class_not_a_dict(tmp_path):
    run = tmp_path / "01-baseline"
    run.mkdir()
    (run / SUMMARY).write_text(json.dumps({"v": 1, "status": "completed", "settings": {"batch_size": 64},
                                           "throughput": {"samples_per_s": 6400.0, "windows": 8, "seconds": 2.0,
                                                          "ci95": [6000.0, 6800.0]},
                                           "energy_j": 12.5}))
    record = load_run(run)
    assert isinstance(record.summary, RunSummary) and record.status == "completed"
    assert record.summary.samples_per_s == 6400.0 and record.summary.throughput_ci == (6000.0, 6800.0)
    assert record.summary.extra == {"energy_j": 12.5}  # a newer tfturbo's key survives


def test_a_rung_entry_reads_its_numbers_from_the_typed_summary():
    base = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 64}, "steps_per_s": 10.0,
                                 "peak_memory_bytes": 1000, "step_ms": {"median": 100.0, "ci95": [99.0, 101.0]}})
    tuned = RunSummary.from_dict({"status": "completed", "settings": {"batch_size": 128}, "steps_per_s": 8.0,
                                  "peak_memory_bytes": 1500, "steps_completed": 60})
    entry = Rung("02-larger_batch", "larger_batch", RunSettings(batch_size=128), summary=tuned).entry(base)
    assert entry["samples_per_s"] == 1024.0 and entry["memory_ratio"] == 1.5 and entry["steps_completed"] == 60
    assert entry["status"] == "completed" and entry["peak_memory_bytes"] == 1500


def test_the_env_document_round_trips_and_answers_once():
    env = Environment.from_dict(json.loads(json.dumps(ENV)))
    assert env.problems == [] and env.recommended_policy == "mixed_bfloat16" and env.accelerator == "GPU"
    assert env.available_memory == 38 * 2**30 and env.device_names() == ["/device:CPU:0", "NVIDIA A100"]
    assert env.policy_text() == "mixed_bfloat16 (Ampere GPU)"
    assert env.to_dict() == ENV  # every key as the backend wrote it, the unknown ones included
    assert env.extra == {"versions": {"tensorflow": "2.21.0"}, "tf32": True}


def test_an_older_env_document_is_read_tolerantly():
    """Written before the `accelerator` key: the accelerator comes from the devices; a key of the wrong type
    is named and dropped, the rest still read."""
    old = Environment.from_dict({"devices": [{"type": "CPU"}, {"type": "TPU", "name": "TPU:0"}],
                                 "recommended_policy": 16, "reason": "TPU", "memory": None})
    assert old.accelerator == "TPU" and old.recommended_policy is None and old.reason == "TPU"
    assert old.available_memory is None and any("recommended_policy" in p for p in old.problems)
    assert Environment.from_dict(None).problems == ["environment is not a mapping; nothing in it was read"]


def test_a_study_keeps_its_environment_typed_across_save_and_load(tmp_path):
    study = Study(tmp_path, "builtin:mlp", {})
    study.environment = Environment.from_dict(ENV)
    study.save()
    loaded = Study.load(tmp_path)
    assert isinstance(loaded.environment, Environment) and loaded.environment.accelerator == "GPU"
    assert loaded.environment.to_dict() == ENV
    assert loaded.document()["environment"]["recommended_policy"] == "mixed_bfloat16"


@pytest.mark.parametrize("doc", [{"status": "completed"}, {}])
def test_a_summary_without_numbers_answers_none_not_an_error(doc):
    s = RunSummary.from_dict(doc)
    assert s.samples_per_s is None and s.step_rate is None and s.throughput_ci is None
    assert s.primary_metric() is None and s.hand_over_ratio is None and s.median_step_ms is None


# ---------------------------------------------------------------- the probe document, events, verdicts (issue 41)

PROBE = {"verdict": "input_bound", "band": "high", "input_fraction": 0.62, "input_explains_gap": True,
         "data_steps_per_s": 190.0, "compute_steps_per_s": 1000.0, "train_steps_per_s": 192.3,
         "findings": [{"code": "INPUT_BOUND", "severity": "warning", "message": "input-bound", "where": "train_ds"}],
         "step_ms": {"data": 5.26, "compute": 1.0, "train": 5.2}, "steps_per_probe": 20, "rounds": 2,
         "warmup_steps": 5, "thresholds": {"high": 0.2, "moderate": 0.05, "data_explains_gap": 0.5},
         "profiler": {"available": False, "reason": "no capture"}, "workload": {"spec": "builtin:mlp", "name": "mlp"},
         "batch_size": 32, "input_fixes": False, "xprof_band": "HIGH"}


def test_the_probe_document_round_trips_through_its_class():
    from tfturbo.input_probe import InputProbe

    probe = InputProbe.from_dict(json.loads(json.dumps(PROBE)))
    assert probe.problems == [] and probe.verdict == "input_bound" and probe.input_fraction == 0.62
    assert [f["code"] for f in probe.findings] == ["INPUT_BOUND"] and probe.workload == {"spec": "builtin:mlp",
                                                                                        "name": "mlp"}
    assert probe.extra == {"xprof_band": "HIGH"}  # a newer backend's key survives
    assert probe.to_dict() == PROBE and InputProbe.from_dict(probe.to_dict()) == probe


def test_an_older_or_failed_probe_document_still_reads():
    """A probe from before `input_explains_gap` answers with the thresholds' rule; a failed probe the study
    recorded (verdict None, its error) reads and writes back as it was; a wrong type is named and dropped."""
    from tfturbo.input_probe import InputProbe
    from tfturbo.verdicts import input_share_fact

    old = InputProbe.from_dict({k: v for k, v in PROBE.items() if k != "input_explains_gap"})
    assert old.input_explains_gap is None and input_share_fact(old) == ("Time waiting for input", "62%")
    failed = {"verdict": None, "error": "the backend crashed", "findings": []}
    assert InputProbe.from_dict(failed).to_dict() == failed
    bad = InputProbe.from_dict({"verdict": "compute_bound", "input_fraction": "12%"})
    assert bad.input_fraction is None and any("input_fraction" in p for p in bad.problems)


def test_a_study_keeps_its_probes_typed_across_save_and_load(tmp_path):
    from tfturbo.input_probe import InputProbe

    study = Study(tmp_path, "builtin:mlp", {}, probe=InputProbe.from_dict(PROBE))
    study.save()
    loaded = Study.load(tmp_path)
    assert isinstance(loaded.probe, InputProbe) and loaded.probe.to_dict() == PROBE
    assert [f["code"] for f in loaded.findings()] == ["INPUT_BOUND"]  # the probe's findings are the study's


def test_a_resumed_study_keeps_the_probe_it_ran_with_the_input_fixes(tmp_path):
    """study.yaml's `probe_input_fixes` was written but never read back: a resumed study ran the probe with the
    fixes again, and its next save wrote the old value (kept as an unknown key) over the new one."""
    from tfturbo.input_probe import InputProbe

    fixed = {**PROBE, "verdict": "compute_bound", "findings": []}
    Study(tmp_path, "builtin:mlp", {}, probe=InputProbe.from_dict(PROBE),
          probe_input_fixes=InputProbe.from_dict(fixed)).save()
    loaded = Study.load(tmp_path)
    assert isinstance(loaded.probe_input_fixes, InputProbe) and loaded.probe_input_fixes.to_dict() == fixed
    assert "probe_input_fixes" not in loaded.extra and not loaded.problems
    loaded.probe_input_fixes = InputProbe.from_dict({**fixed, "band": "moderate"})
    loaded.save()
    assert Study.load(tmp_path).probe_input_fixes.band == "moderate"  # the new value, not the one first read


def test_events_are_read_as_their_types():
    """One parser for every reader; the steps and validation events come back with their payloads."""
    from tfturbo import protocol
    from tfturbo.runfiles import StepSeries

    writer, out = protocol.EventWriter("r"), io.StringIO()
    writer.attach(out)
    writer.emit(protocol.STEPS, step=[1, 2], step_ms=[3.0, 4.0], loss=[None, 0.5], window=[1, 2, 0.007])
    writer.emit(protocol.VALIDATION, step=2, metrics={"val_loss": 0.4})
    writer.emit(protocol.DONE, status=protocol.RunStatus.COMPLETED, exit_code=0)
    parser = protocol.LineParser()
    events = parser.feed(out.getvalue().encode()) + parser.close()
    assert [e["type"] for e in events] == ["steps", "validation", "done"] and [e["seq"] for e in events] == [1, 2, 3]
    series = StepSeries.from_events(events)
    assert series.step == [1, 2] and series.loss == [None, 0.5] and series.windows == [(1, 2, 0.007)]
    assert protocol.is_stop(protocol.encode(protocol.STOP_COMMAND)) and not protocol.is_stop(b"{\"type\": \"go\"}")


def test_a_trial_verdict_round_trips_through_its_document():
    from tfturbo.trials.design import Design, Lengths
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, Tolerance, TrialVerdict

    design = Design(4, "paired", ("a", "b"), Lengths(60, 60, 32, 32), 5.0, 5.2, noise_seeds=(7,),
                    profiled_in={"a": "01-baseline"})
    verdict = TrialVerdict(SpeedVerdict(1.5, (1.3, 1.7), "faster", 4, [1.4, 1.5, 1.6, 1.5], 100.0, 150.0),
                           AccuracyVerdict("val_accuracy", -0.002, (-0.004, 0.001), "within tolerance", 1000,
                                           samples_seen=[1920], noise={"seeds_a": 2, "seeds_b": 1}),
                           True, [ReasonPart(Says.OTHER, "faster, accuracy within tolerance")],
                           rule=Tolerance(judge_on="loss"),
                           design_record=design)
    doc = json.loads(json.dumps(verdict.to_dict()))
    assert doc["design_record"]["gate_arms"] == ["a", "b"] and doc["accuracy"]["noise"] == {"seeds_a": 2, "seeds_b": 1}
    again = TrialVerdict.from_dict(doc)
    assert again == verdict and again.design_record == design and again.rule == Tolerance(judge_on="loss")
    older = TrialVerdict.from_dict({k: v for k, v in doc.items() if k not in ("design_record", "rule")})
    assert older.design_record is None and older.rule is None and older.speed == verdict.speed


def test_a_rung_with_its_decision_round_trips_through_study_yaml(tmp_path):
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict

    decision = TrialVerdict(SpeedVerdict(1.2, (1.1, 1.3), "faster", 3), AccuracyVerdict(None, None, None, "not "
                            "measured", checked=False), True, [ReasonPart(Says.RATIO, "faster")])
    study = Study(tmp_path, "builtin:mlp", {})
    study.rungs = [Rung("01-baseline", "baseline", RunSettings("builtin:mlp")),
                   Rung("02-xla", "xla", RunSettings("builtin:mlp", jit_compile=True), decision=decision,
                        compared_with="01-baseline", extra={"energy_j": 3.0})]
    study.save()
    loaded = Study.load(tmp_path)
    assert loaded.rungs[1].decision == decision and loaded.rungs[1].compared_with == "01-baseline"
    assert loaded.ladder()[1]["energy_j"] == 3.0  # a newer tfturbo's entry key is kept
    assert loaded.measurement() == {"runs": 0, "run_seconds": 0.0, "pairs": {"02-xla": 3}}


def test_a_scaling_point_and_the_patch_record_round_trip():
    from tfturbo.patch.check import Check
    from tfturbo.scaling import ScalingPoint

    point = ScalingPoint(2, 190.0, [180.0, 200.0], 1.9, [1.8, 2.0], 0.95, [0.9, 1.0], 3)
    assert ScalingPoint.from_dict(json.loads(json.dumps(point.to_dict()))) == point
    check = Check("checked", "the patched copy trained", "patched/check")
    assert Check.from_dict(check.to_dict()) == check and Check.from_dict(None) is None


def test_a_rung_under_the_recommendation_keeps_what_the_recommendation_leaves_unsaid():
    from tfturbo.settings import overlaid

    rung = RunSettings("builtin:mlp", batch_size=64, policy="mixed_bfloat16")
    recommended = RunSettings("builtin:mlp", jit_compile=True).with_(batch_size=None, policy=None)
    merged = overlaid(rung, recommended)
    assert merged is not None and merged.batch_size == 64 and merged.policy == "mixed_bfloat16" and merged.jit_compile
    assert overlaid(None, recommended) is recommended and overlaid(rung, None) is rung
