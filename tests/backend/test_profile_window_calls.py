"""The default profiler window under steps_per_execution: Keras calls the step function once per N steps, so the
callback sees steps 1, 31, 61, ... (N = 30) and never the window's own steps."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

tf = pytest.importorskip("tensorflow")

from trainer_backend.instrument import Instrument  # noqa: E402 - after the skip


def calls(per_call: int, steps_per_epoch: int, epochs: int) -> list[int]:
    """The first step of each call of a fit() with `per_call` steps per call (an epoch's last call is shorter)."""
    return [e * steps_per_epoch + b + 1 for e in range(epochs) for b in range(0, steps_per_epoch, per_call)]


@pytest.mark.parametrize("per_call", [1, 4, 30])
@pytest.mark.parametrize("warm_after", [3, None])
def test_the_default_window_is_captured_whatever_the_steps_per_call(monkeypatch, tmp_path, per_call, warm_after):
    """Issue-42 walk: the kept "30 steps per call" (sentiment_train.py, 4 epochs of 75 steps) had no profile in its
    run, its confirmation, the pages or the PDF ("Where the time goes" empty, "Recommended ms n/a"). The window
    (15, 35), postponed by one step per call during warm-up, was jumped over by the calls and never started. It
    starts at the first call after warm-up that keeps validation out of it, and lasts one call at least. With one
    sample per call, a short run finds its warm-up only at its end (`warm_after` None, as the walk's run did): from
    the middle of the run on, the window waits for nothing but validation."""
    started, stopped = [], []
    monkeypatch.setattr(tf.profiler.experimental, "start", lambda d: started.append(d))
    monkeypatch.setattr(tf.profiler.experimental, "stop", lambda: stopped.append(True))
    monitor = SimpleNamespace(record=SimpleNamespace(), warmed_up=False, on_profile_start=lambda step: None,
                              on_profile_stop=lambda start, stop: None)
    inst = Instrument(monitor, 300, 75, (15, 35), str(tmp_path), wait_for_steady=True)
    inst._per_call = per_call
    for i, step in enumerate(calls(per_call, 75, 4)):
        inst._epoch_first = (step - 1) // 75 * 75 + 1
        monitor.warmed_up = warm_after is not None and i >= warm_after  # judged from calls: after the first few
        if inst.profile and not inst.profile_done:
            inst._drive_profiler(step)
    assert started and stopped and inst.profile_done
    first, stop = inst.profile
    assert stop - first >= min(20, per_call)
    assert (first - 1) // 75 == (stop - 1) // 75  # stopped by a call of the same epoch: no validation inside
