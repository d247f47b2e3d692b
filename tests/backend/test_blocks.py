"""The baton of a run-pair process (trainer_backend/blocks.py), with plain threads standing in for two fit()s."""

from __future__ import annotations

import threading
import time

from trainer_backend.blocks import BLOCKS_PER_ARM, CONTINUE, FINISHED, SWITCHED, Blocks, hand_overs, interleaved


def test_the_block_order_is_abba_baab_so_a_linear_drift_falls_equally_on_both():
    order = interleaved("a", "b")
    assert "".join(order) == "abbabaab" and len(order) == 2 * BLOCKS_PER_ARM
    assert sum(i for i, arm in enumerate(order) if arm == "a") == sum(i for i, arm in enumerate(order) if arm == "b")
    assert "".join(interleaved("b", "a")) == "baababba"


def train(blocks: Blocks, arm: str, log: list, fail_at: int | None = None) -> None:
    """An arm's thread: one 'step' per block; fail_at: raise in that block (as fit() failing)."""
    try:
        blocks.wait_turn(arm)
        for n in range(1, BLOCKS_PER_ARM + 1):
            if blocks.aborted:
                log.append((arm, "stopped"))
                return
            log.append((arm, n))
            time.sleep(0.01)
            if fail_at == n:
                blocks.abort()
                log.append((arm, "failed"))
                return
            outcome = blocks.end_block(arm)
            if outcome == FINISHED:
                return
            assert outcome in (CONTINUE, SWITCHED)
    finally:
        blocks.finish(arm)


def run_both(fail: dict | None = None) -> tuple[list, Blocks]:
    blocks, log = Blocks("a", "b"), []
    threads = [threading.Thread(target=train, args=(blocks, arm, log, (fail or {}).get(arm))) for arm in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads), "an arm is still waiting for the baton"
    return log, blocks


def test_only_one_arm_trains_at_a_time_in_the_schedules_order():
    log, blocks = run_both()
    assert "".join(arm for arm, _ in log) == "abbabaab"
    assert all(s < 0.5 for s in blocks.switch_s) and len(blocks.switch_s) == 5  # ab, ba, ab, ba, ab hand-overs
    assert blocks.holding == 6  # a, bb, a, b, aa, b: consecutive blocks of one arm are one holding
    for arm in "ab":  # each arm's own time is its blocks', never the other's
        own = sum(end - start for start, end in blocks.block_times[arm])
        assert abs(blocks.active_s[arm] - own) < 1e-6
    a, b = blocks.block_times["a"], blocks.block_times["b"]
    assert all(ea <= sb or eb <= sa for sa, ea in a for sb, eb in b)  # no overlap


def test_a_failing_arm_hands_over_and_the_other_stops_at_its_next_step():
    log, _ = run_both(fail={"a": 2})
    assert ("a", "failed") in log and log[-1] == ("b", "stopped")
    assert log.index(("a", "failed")) < log.index(("b", "stopped"))


def test_run_pair_takes_a_block_count_and_defaults_to_the_schedule_of_four():
    """benchmarks/pair_blocks.py compares block counts through run-pair's internal --blocks."""
    from tfturbo.cli_args import build_backend_parser

    base = ["run-pair", "--arm", "[]", "--arm", "[]", "--steady-s", "4"]
    parser = build_backend_parser("trainer_backend")
    assert parser.parse_args(base).blocks is None
    assert parser.parse_args([*base, "--blocks", "16"]).blocks == 16
    assert len(interleaved("a", "b", 16)) == 32


def test_a_run_pair_of_auto_clustering_arms_sets_the_cpu_flag_as_a_run_does(monkeypatch, tmp_path):
    """Without --tf_xla_cpu_global_jit auto-clustering compiles nothing on a CPU: a run-pair process whose arms
    both auto-cluster once measured pairs 2..N with 0 clusters while pair 1's runs (each a `run`) had them."""
    import json
    import os

    from trainer_backend.__main__ import _parse, process_flags
    from tfturbo.settings import XLA_CPU_AUTOCLUSTERING_FLAG

    def arm(name):
        return json.dumps(["builtin:mlp", "--xla-autoclustering", "--speed-only", "--out", str(tmp_path / name)])

    for argv in (["run", "builtin:mlp", "--xla-autoclustering", "--out", str(tmp_path / "r")],
                 ["run-pair", "--arm", arm("a"), "--arm", arm("b"), "--steady-s", "3"]):
        monkeypatch.setenv("TF_XLA_FLAGS", "--xla_user_flag")
        assert process_flags(_parse(argv)).xla_autoclustering
        assert os.environ["TF_XLA_FLAGS"].split() == ["--xla_user_flag", XLA_CPU_AUTOCLUSTERING_FLAG]
    monkeypatch.setenv("TF_XLA_FLAGS", "")
    def plain(name):
        return json.dumps(["builtin:mlp", "--speed-only", "--out", str(tmp_path / name)])

    process_flags(_parse(["run-pair", "--arm", plain("c"), "--arm", plain("d"), "--steady-s", "3"]))
    assert os.environ["TF_XLA_FLAGS"] == ""


def test_hand_overs_pair_the_last_window_before_the_baton_moves_with_the_first_after():
    # holdings: 1 a, 2 b, 3 a, 4 b (no steady window: warm-up), 5 a, 6 b
    windows = {"a": [(1, 100.0), (1, 101.0), (3, 90.0), (3, 91.0), (5, 80.0)],
               "b": [(2, 120.0), (2, 121.0), (6, 99.0)]}
    out = hand_overs(windows)
    assert out["b"] == [[120.0, 101.0], [121.0, 90.0], [99.0, 80.0]]  # 1|2, 2|3, 5|6; 3|4 and 4|5 lack a window
    assert out["a"] == [[101.0, 120.0], [90.0, 121.0], [80.0, 99.0]]


def test_hand_overs_of_one_arm_alone_are_none():
    assert hand_overs({"a": [(1, 10.0), (1, 11.0)], "b": []}) == {"a": [], "b": []}
