"""The larger-batch arithmetic: from measured peak memory to a batch size and learning-rate scale."""

from __future__ import annotations

import pytest

from tfturbo.tune.batch import plan_larger_batch

MB = 2 ** 20


@pytest.mark.parametrize("batch, base_mb, best_mb, expected", [
    (64, 1000, 625, 96),    # 1.6x freed: 102.4 rounded down to a multiple of 8
    (64, 1000, 900, 72),    # 1.11x freed: 71 -> at least +8
    (64, 1000, 300, 128),   # 3.3x freed: capped at 2x
    (60, 1000, 500, 120),   # 2x of an unaligned batch: 120 is a multiple of 8
    (30, 1000, 800, 40),    # 1.25x: 37.5 -> at least +8, on a multiple of 8
    (4, 1000, 500, 8),      # small batch: capped at 2x = 8
])
def test_new_batch_from_freed_memory(batch, base_mb, best_mb, expected):
    plan = plan_larger_batch(batch, base_mb * MB, best_mb * MB, "device")
    assert not plan.skipped
    assert plan.batch_size == expected and plan.batch_size % 8 == 0
    assert plan.lr_scale == pytest.approx(expected / batch)
    assert f"batch {batch} → {expected}" in plan.reason
    assert "linear scaling rule" in plan.reason and f"{expected / batch:.2f}×" in plan.reason


def test_no_freed_memory_skips_and_says_why():
    plan = plan_larger_batch(64, 1000 * MB, 990 * MB, "host")
    assert plan.skipped and plan.batch_size is None and plan.lr_scale == 1.0
    assert "no memory was freed" in plan.reason and "host memory" in plan.reason


def test_unmeasured_memory_is_not_guessed():
    plan = plan_larger_batch(64, None, 500 * MB)
    assert plan.skipped and "not measured" in plan.reason


def test_custom_cap():
    assert plan_larger_batch(64, 1000 * MB, 300 * MB, max_scale=1.5).batch_size == 96
