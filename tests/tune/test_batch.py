"""The batch-size search: doubling while kept, one binary step, within the memory available."""

from __future__ import annotations

import pytest

from tfturbo.tune.batch import NOT_FASTER, next_size

GB = 2 ** 30


def test_the_search_doubles_while_each_size_is_kept():
    step = next_size(64, [], 1 * GB, 20 * GB, "host")
    assert step.batch_size == 128 and step.lr_scale == 2.0
    assert "linear scaling rule" in step.reason and "2.00×" in step.reason
    assert next_size(64, [(128, "kept")], 1 * GB, 20 * GB).batch_size == 256


def test_a_loss_gets_one_binary_step_then_the_search_ends():
    step = next_size(64, [(128, "kept"), (256, "rejected")], 1 * GB, 20 * GB)
    assert step.batch_size == 192 and step.lr_scale == 3.0 and "binary step" in step.reason
    end = next_size(64, [(128, "kept"), (256, "rejected"), (192, "kept")], 1 * GB, 20 * GB)
    assert end.done and "largest batch kept is 192" in end.reason


def test_a_size_that_was_not_faster_ends_the_search_without_a_binary_step():
    """A default tune of builtin:transformer measured batch 256 at 1.02× [0.93, 1.12] over 128, then spent a
    six-pair trial on 192 (1.11× [0.97, 1.26], no measurable change): between two sizes the throughput had
    already levelled off at, nothing measurably faster was left to find."""
    end = next_size(64, [(128, "kept"), (256, NOT_FASTER)], 1 * GB, 20 * GB)
    assert end.done and "256 was not measurably faster than 128" in end.reason and "largest batch kept is 128" \
        in end.reason
    assert next_size(64, [(128, NOT_FASTER)], 1 * GB, 20 * GB).done  # the first doubling already was not


def test_out_of_memory_is_an_outcome_that_ends_the_doubling():
    step = next_size(64, [(128, "failed")], None, None)  # an accelerator whose free memory is unknown
    assert step.batch_size == 96 and "failed" in step.reason
    assert next_size(64, [(128, "failed"), (96, "rejected")], None, None).done


@pytest.mark.parametrize("available_gb, expected", [(20, 128), (1.5, 72), (1.1, None)])
def test_sizes_stay_within_the_available_memory_with_a_margin(available_gb, expected):
    # the baseline peaked at 1 GB at batch 64: a size fits when 1 GB × size/64 <= 80% of what is available
    step = next_size(64, [], 1 * GB, available_gb * GB, "host")
    assert step.batch_size == expected
    if expected is None:
        assert step.done and "would not fit" in step.reason and "host memory" in step.reason


def test_the_cap_bounds_the_search():
    assert next_size(64, [(128, "kept")], 1 * GB, 20 * GB, max_scale=2).done
    assert next_size(60, [], None, None).batch_size == 120  # an unaligned batch stays unaligned
