"""`python -m trainer_backend run-pair`: both arms of a paired speed replicate in one process (one real run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfturbo.run_summary import RunSummary
from tfturbo import protocol
from tfturbo.backend_client import run_backend
from tfturbo.settings import RunSettings
from tfturbo.summary import MIN_HAND_OVERS
from tfturbo.trials.speed import SpeedRule
from tfturbo.trials.execute import pair_command, pair_summaries
from tfturbo.trials.runs import PlannedPair, PlannedRun

STEADY_S = 3.0  # 0.75 s a block: between one 0.5 s window and two, so a block that overshoots shows


@pytest.fixture(scope="module")
def pair_run(tmp_path_factory):
    """builtin:mlp, mixed_float16 trained first, then float32: a policy set for the first build must not reach
    the second's model or optimizer."""
    runs = tmp_path_factory.mktemp("pair") / "runs"
    base = RunSettings("builtin:mlp", steps=6000, val_every=6000, speed_only=True, profile=(0, 0))
    pair = PlannedPair(PlannedRun("b", 2, base.with_(policy="mixed_float16"), "b2"),
                       PlannedRun("a", 2, base, "a2"), STEADY_S)
    argv, run_dirs = pair_command(pair, runs)
    result = run_backend("run-pair", argv)
    summaries = pair_summaries(result.document, result.status, result.error, run_dirs, pair)
    return pair, run_dirs, result, [s.to_dict() for s in summaries]  # as each run's summary.json reads


def events(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]


def test_both_runs_are_written_like_speed_only_runs(pair_run):
    pair, run_dirs, result, summaries = pair_run
    assert result.status == protocol.RunStatus.COMPLETED, result.error
    for run, run_dir, summary in zip(pair.runs, run_dirs, summaries):
        assert summary["status"] == "completed" and summary["settings"]["policy"] == run.settings.policy
        assert json.loads((run_dir / "summary.json").read_text())["throughput"] == summary["throughput"]
        assert (run_dir / "run.yaml").is_file() and not (run_dir / "checkpoint" / "model.keras").exists()
        tp = summary["throughput"]
        # each block ends at the window boundary nearest its share of the steady seconds by the live steady-state
        # estimate; the estimate revised on the whole run at its end can start a window later (one 0.5 s window
        # of 3 s). Counted block by block, each 0.75 s block ran two windows: 4 s measured of 3
        assert tp["windows"] >= 3 and 0.75 * STEADY_S <= tp["seconds"] <= 1.15 * STEADY_S, tp
        assert tp["samples_per_s"] > 0
        assert summary["steps_completed"] < run.settings.steps  # ended at its steady seconds, not its step cap
        own = events(run_dir)
        assert {e["run"] for e in own if e["type"] != protocol.HELLO} == {run.name}
    on_stdout = {e.get("run") for e in result.events if e.get("type") == protocol.STEPS}
    assert on_stdout == {"a2", "b2"}  # the live events say whose they are


def test_an_arms_windows_hold_none_of_the_other_arms_time(pair_run):
    pair, run_dirs, result, summaries = pair_run
    for run_dir, summary in zip(run_dirs, summaries):
        blocks = [e for e in events(run_dir) if e["type"] == protocol.PHASE and e.get("block")]
        assert blocks and all(e["paused_s"] > 0.05 for e in blocks)  # it waited while the other trained
        in_windows = sum(w[2] for w in summary["windows"])
        assert in_windows <= summary["wall_s"]  # its own blocks' time (the pause would add `paused_s` each)
    switches = result.document["switch_s"]
    assert len(switches) >= 3 and max(switches) < 0.5  # handing the process over costs little


def test_the_pairs_ratio_comes_from_the_windows_either_side_of_each_hand_over(pair_run):
    """Each summary holds [own, other's samples/s] at every hand-over, mirrored between the arms; the pair's
    ratio is their median, close to the arms' median rates on a quiet stretch of the machine."""
    _, _, _, (b, a) = pair_run
    assert len(b["hand_overs"]) >= MIN_HAND_OVERS
    assert b["hand_overs"] == [[other, own] for own, other in a["hand_overs"]]
    a, b = RunSummary.from_dict(a), RunSummary.from_dict(b)
    ratio = SpeedRule().pair_ratio(a.samples_per_s, b.samples_per_s, b)
    assert ratio == pytest.approx(b.hand_over_ratio)
    assert 0.5 < ratio / (b.samples_per_s / a.samples_per_s) < 2.0


def test_each_arm_keeps_its_own_dtype_policy_and_optimizer(pair_run):
    _, _, _, (mixed, full) = pair_run
    assert mixed["loss_scale"] is not None  # mixed_float16: Keras' LossScaleOptimizer
    assert full["loss_scale"] is None  # float32, built after it: no loss scaling leaked in


def test_a_later_paired_replicate_loads_both_arms_programs_from_the_xla_cache(tmp_path):
    """Both arms under XLA, measured twice in the same order with other lengths, as a trial's pairs 3 and 5 are:
    the second process compiles nothing. Each arm's step function is traced under the same name in both
    (`xla_flags.align_trace_uid`); before, the second arm traced after a first block of another length, under
    another uid, and every paired process compiled both arms again."""
    cache = tmp_path / "xla-cache"
    base = RunSettings("builtin:mlp", steps=6000, val_every=6000, speed_only=True, profile=(0, 0), jit_compile=True,
                       xla_cache=str(cache))
    entries = []
    for replicate, steady_s in ((3, 0.3), (5, 0.6)):
        pair = PlannedPair(PlannedRun("a", replicate, base, f"a{replicate}"),
                           PlannedRun("b", replicate, base.with_(policy="mixed_bfloat16"), f"b{replicate}"), steady_s)
        argv, _ = pair_command(pair, tmp_path / "runs")
        result = run_backend("run-pair", argv)
        assert result.status == protocol.RunStatus.COMPLETED, result.error
        entries.append(sorted(p.name for p in cache.glob("xla_compile_cache__*")))
    assert len(entries[0]) >= 2 and entries[1] == entries[0]
