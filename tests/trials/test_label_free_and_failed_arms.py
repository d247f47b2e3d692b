"""Issue 44 on recorded documents: the accuracy comparison of a model trained without labels, a failed arm wherever
it fails (a candidate the workload rejects, before A ever ran), and a verdict that says which way every pair
pointed."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pytest

from tfturbo.run_summary import RunSummary
from tfturbo import protocol
from tfturbo.backend_client import BackendResult
from tfturbo.errors import WorkloadError
from tfturbo.settings import RunSettings
from tfturbo.trials import label_free
from tfturbo.trials.execute import fail_on_bad_input
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.trial import Trial, run_trial
from tfturbo.trials.verdict import INCONCLUSIVE, NO_CHANGE, WITHIN, WORSE, SpeedVerdict, Tolerance

from tests.tune.tune_fakes import FakeBackend, summary


def label_free_run(run_dir: Path, losses: list[float], batch: int = 32, batches: list[list[float]] | None = None
                   ) -> tuple[RunSummary, Path]:
    """A summary of a model trained without labels: its training loss at each interval's end (every 10 steps),
    and, with `batches`, its own validation loss on each fixed batch at those points (batch_validation.npz)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    steps = [10 * (i + 1) for i in range(len(losses))]
    doc = {"status": "completed", "labels": False, "settings": RunSettings("vae.py", batch_size=batch).to_dict(),
           "training": [{"step": s, "metrics": {"loss": loss}} for s, loss in zip(steps, losses)]}
    if batches is not None:
        np.savez(run_dir / "batch_validation.npz", step=np.array(steps), samples=np.array(steps) * batch,
                 loss=np.array(batches, dtype=np.float32))
        doc["batch_validation"] = {"file": "batch_validation.npz", "batches": len(batches[0]), "problem": None}
    return RunSummary.from_dict(doc), run_dir


def test_without_validation_data_the_training_loss_at_equal_samples_is_compared_and_said(tmp_path):
    a = label_free_run(tmp_path / "a", [12.0, 11.0, 10.5, 10.2, 10.0])
    close = label_free_run(tmp_path / "b", [12.1, 11.1, 10.6, 10.25, 10.05])
    acc = label_free.compare_runs([a], [close], Tolerance())
    assert acc.metric == "loss" and not acc.paired and acc.ci95 is None and acc.verdict == INCONCLUSIVE
    assert acc.samples_seen == [960, 1280, 1600]  # the last three points, at equal samples seen
    assert "training loss at equal samples" in acc.text() and "no validation data" in acc.text()
    assert "not a verdict" in acc.text() and "within the 2% tolerance as a point estimate" in acc.text()
    assert not acc.checked  # as a job without validation data: the candidate is not held back by it
    far = label_free_run(tmp_path / "c", [13.0, 12.0, 11.5, 11.2, 11.0])
    held = label_free.compare_runs([a], [far], Tolerance())
    assert held.checked and held.verdict == INCONCLUSIVE and "validation data" in held.text()
    assert "labels" not in held.text().split("takes no labels")[1]  # it never asks for labels


def test_with_validation_data_its_own_loss_is_paired_batch_by_batch(tmp_path):
    rng = np.random.default_rng(1)
    base = rng.uniform(10, 12, size=8)
    points = [list(base + 1.0), list(base + 0.5), list(base)]
    a = label_free_run(tmp_path / "a", [12, 11, 10], batches=points)
    same = label_free_run(tmp_path / "b", [12, 11, 10], batches=[list(p + rng.normal(0, 0.01, 8)) for p in
                                                                 np.array(points)])
    acc = label_free.compare_runs([a], [same], Tolerance())
    assert acc.verdict == WITHIN and acc.paired and acc.unit == "validation batch" and acc.examples == 8
    assert "paired on the same 8 validation batches (the model's own test_step" in acc.text()
    worse = label_free_run(tmp_path / "c", [12, 11, 10], batches=[list(np.array(p) * 1.1) for p in points])
    bad = label_free.compare_runs([a], [worse], Tolerance())
    assert bad.verdict == WORSE and bad.ci95[0] > 0
    again = type(bad).from_dict(bad.to_dict())
    assert again.unit == "validation batch" and again.paired_on() == "8 validation batches"


def test_a_labelled_run_still_takes_the_paired_gate(tmp_path):
    doc = RunSummary.from_dict(summary(100.0, 0.9))
    acc = label_free.compare_runs([(doc, None)], [(doc, None)], Tolerance())
    assert acc.unit == "example" and "not paired" in acc.text()  # no per-example file here: said, as before


def test_a_study_of_a_model_without_labels_judges_each_rung_on_its_training_loss(tmp_path):
    """tune (and the wizard, the same engine) measures such a model for speed; its rungs say what they compared."""
    from tfturbo.tune.engine import TuneOptions
    from tfturbo.tune.ladder import Ladder

    def run(s):
        doc = summary(100.0 * (0.8 if s.jit_compile else 1.0), None, jit=s.jit_compile, seed=int(s.jit_compile))
        doc.pop("validation")
        done = doc["steps_completed"]
        return {**doc, "labels": False, "metrics": {"loss": 1.0},
                "training": [{"step": k, "metrics": {"loss": 2.0 - k / done}} for k in range(20, done + 1, 20)]}

    backend = FakeBackend(run)
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "s", steps=100, stages=("xla",)), runner=backend).run().document()
    xla = next(e for e in doc["ladder"] if e["rung"] == "xla")
    assert xla["kept"] and "training loss at equal samples" in xla["reason"]
    assert xla["accuracy"]["metric"] == "loss" and xla["accuracy"]["checked"] is False


# ------------------------------------------------------------------ a failed arm, wherever it fails

def _ab_args(tmp_path: Path, b: str) -> argparse.Namespace:
    from tfturbo.commands import ab

    parser = argparse.ArgumentParser()
    ab.add_arguments(parser)
    return parser.parse_args(["builtin:fake", "--b", b, "--steps", "60", "--out", str(tmp_path / "ab"), "--json"])


def _rejecting(reject: set[str], finding: dict | None = None):
    """A fake backend whose runs of the arms in `reject` ("a"/"b", by the run folder's name) are refused as bad
    input, the others answered from recorded summaries (`finding` in each)."""
    fake = FakeBackend(lambda s: summary(100.0, 0.9, batch_size=s.batch_size or 64,
                                         findings=[finding] if finding else []))

    def runner(command, argv, **kwargs):
        out = Path(argv[argv.index("--out") + 1]).name if "--out" in argv else ""
        if command == "run" and out[:1] in reject:
            return BackendResult(2, [{"type": "error", "kind": protocol.BAD_INPUT, "message": "w.py: it broke",
                                      "fix": "mend it"}, {"type": "done", "status": "failed", "exit_code": 2}])
        return fake(command, argv, **kwargs)
    return runner


def test_a_candidate_the_workload_rejects_is_a_failed_arm_and_a_rejected_workload_is_bad_input(
        tmp_path, monkeypatch, capsys):
    from tfturbo.commands import ab
    from tfturbo.trials import execute

    xla_off = {"code": "XLA_NOT_ACTIVE", "severity": "warning", "where": "model", "message": "not compiled"}
    monkeypatch.setattr(execute, "run_backend", _rejecting({"b"}, xla_off))
    monkeypatch.setattr("tfturbo.commands.ab.run_backend", _rejecting({"b"}, xla_off))
    assert ab._measure(_ab_args(tmp_path / "one", "jit=on")) == 1  # B cannot run: a failed arm (exit 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "failed" and doc["reason"] == "failed: w.py: it broke — fix: mend it"
    assert [r["name"] for r in doc["runs"]] == ["b1", "a1"]  # A ran only to tell the two apart
    assert {(f["code"], f["arm"]) for f in doc["findings"]} == {("XLA_NOT_ACTIVE", "a")}  # every arm's kept

    monkeypatch.setattr(execute, "run_backend", _rejecting({"a", "b"}))
    with pytest.raises(WorkloadError) as caught:  # the workload rejects A too: bad input (exit 2), said once
        ab._measure(_ab_args(tmp_path / "two", "jit=on"))
    assert caught.value.line() == "w.py: it broke — mend it"


def test_a_bad_input_message_carries_its_fix_once():
    with pytest.raises(WorkloadError) as caught:  # an older backend's message already ended with its fix: the
        # error's one reader (`protocol.error_of`, as `BackendResult.error` reads it) takes it off
        fail_on_bad_input(protocol.error_of({"kind": "bad_input", "message": "s.py: raised X — fix the script",
                                             "fix": "fix the script"}), "the run")
    assert caught.value.line() == "s.py: raised X — fix the script"


# ------------------------------------------------------------------ the direction of the pairs

def test_a_verdict_whose_pairs_all_point_one_way_says_so_beside_its_interval():
    """Issue 44: pairs 0.44, 0.51, 0.69, 0.95, 0.96, 0.94 gave 0.72× [0.48, 1.07], "no measurable change", and the
    user was not told B was slower in every pair."""
    ratios = [0.44, 0.51, 0.69, 0.95, 0.96, 0.94]
    verdict = SpeedRule(3, 6).verdict([100.0] * 6, [100.0 * r for r in ratios])
    assert verdict.verdict == NO_CHANGE  # the decision rule is unchanged: the interval contains 1
    assert verdict.ci95[0] < 1.0 < verdict.ci95[1]
    assert "(slower in 6 of 6 pairs; size uncertain" in verdict.text()
    assert SpeedVerdict.from_dict(verdict.to_dict()).direction() == "slower in 6 of 6 pairs; size uncertain"
    mixed = SpeedVerdict(1.0, (0.9, 1.1), NO_CHANGE, 3, [0.95, 1.05, 1.0])
    assert mixed.direction() == "" and "pairs" not in mixed.text().split("over 3 replicate pairs")[1]
    faster = SpeedVerdict(1.2, (1.1, 1.3), "faster", 3, [1.1, 1.2, 1.3])
    assert faster.direction() == ""  # a decided verdict says it with its own word


def test_the_direction_shows_wherever_the_reason_shows():
    trial = Trial(RunSettings("builtin:fake", batch_size=64), RunSettings("builtin:fake", batch_size=64,
                                                                          jit_compile=True),
                  SpeedRule(3, 3, steady_s=0), share_process=False)
    slower = {1: 0.6, 2: 0.9, 3: 0.5}  # B slower in each pair, by a spread no interval can size

    def execute(p):
        rate = 100.0 * (slower[p.replicate] if p.arm == "b" else 1.0)
        return summary(1000.0 / rate, 0.9, seed=p.replicate), None

    verdict = run_trial(trial, execute)
    assert verdict.speed.verdict == NO_CHANGE and not verdict.kept
    assert "slower in 3 of 3 pairs; size uncertain" in verdict.reason
    assert not math.isnan(verdict.speed.ratio)
