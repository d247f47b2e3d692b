"""The Keras callback that measures a run without slowing it (docs/MEASUREMENT.md, "Steady state").

How Keras 3.15 dispatches batch hooks on the TensorFlow backend (read in
`keras/src/callbacks/callback_list.py` and `backend/tensorflow/trainer.py`):
`backend.IS_THREAD_SAFE` is False, so hooks always run synchronously in the
training loop; `fit()` calls `on_train_batch_begin(i)` with no logs, then
`train_function`, then `on_train_batch_end(i, logs)` — and `CallbackList`
converts those logs to Python floats on *every* step, whether or not any
callback listens (even plain `fit(verbose=0)` does). On an accelerator that
conversion waits for the step to finish: a device sync per step.

With `compile(steps_per_execution=N)` the hooks fire once per call of N
steps (`batch` is the call's first step): each sample is then one call, its
time divided by N, never N copies of it.

So this callback hooks only `on_train_batch_begin` (plus epoch and test
hooks), and `QuietCallbackList` skips batch-end dispatch when no callback in
it overrides a batch-end hook — except `Instrument.after_train_batch`, called
without any log conversion, which closes the window at the end of an epoch's
last training call. That is the last moment that belongs to a step: after it
`fit()` reads the epoch's metrics and `evaluate()` builds and resets its
iterator (one reset measured 1.1 s) and compiles its test function before
`on_test_begin` fires, and none of that is training. Per step the callback takes one
`perf_counter()` stamp; a step's time is the difference between the stamps of
consecutive batch starts within an epoch. Every window (a quarter second or
10 steps during warm-up, then half a second) it reads the loss tracker, the loss
scale and the optimizer's step count once — the only sync — and hands the
window to the run monitor, with the wall time from the previous read to the
end of this one: the window's throughput, which asynchronous dispatch cannot
fool (the read waits for the device) and in which stalls count.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TypedDict

import keras

from . import stdio
from .blocks import DISCARD_CALLS, FINISHED, SWITCHED, ArmBlocks
from .detectors.base import Window
from .detectors.recompile import MIN_SPIKE_MS, MIN_SPIKES, SPIKE_FACTOR
from .measure import StepRecord
from .monitor import StopReason
from .multiworker import local_value  # this worker's values: no collective at a time-dependent moment

WARMUP_WINDOW_S = 0.25
WARMUP_WINDOW_STEPS = 10  # small windows while warming up: warm-up is found a few steps after it ends
WARMUP_SHORT_WINDOWS_UNTIL = 200  # ... for the first steps only: each search scans every sample so far
STEADY_WINDOW_S = 0.5  # several windows in a replicate's few steady seconds: the run's figure is their median
# ... and at least this many in a run too short for them: a run whose steady part was shorter than one 0.5 s
# window had one window, which the end's revisited warm-up (`steady.final_start`) could drop: no throughput at all
MIN_STEADY_WINDOWS = 8
# a call is judged a compilation against the median of this many calls before it (`Instrument._one_off`)
SPIKE_CONTEXT = 50
# ... and only when it took at least this long: a new shape's compilation took 2.2 s (a tiny model under XLA) and
# 5.0 s (a keras-io-style LSTM under XLA) here, while a busy host's hiccups reached 145 ms, which RECOMPILE_STORM's
# own floor (MIN_SPIKE_MS) lets through
ONE_OFF_MIN_MS = 250.0


class QuietCallbackList(keras.callbacks.CallbackList):
    """A CallbackList that does not dispatch batch-end hooks nobody overrides.

    Keras' own list converts the batch logs to Python numbers before calling
    `on_train_batch_end` / `on_test_batch_end` on each callback; skipping the
    dispatch when every callback inherits the default no-op removes that
    per-step device sync. Callbacks that do override a batch-end hook still
    get it, with the conversion.
    """

    def __init__(self, callbacks=None, **kwargs: Any) -> None:
        super().__init__(callbacks, **kwargs)
        self._train_batch_end = _any_overrides(self.callbacks, ("on_train_batch_end", "on_batch_end"))
        self._test_batch_end = _any_overrides(self.callbacks, ("on_test_batch_end",))
        self._epoch_closers = [cb for cb in self.callbacks if isinstance(cb, Instrument)]
        # the run's place in its process, when XLA's persistent cache should find its step functions: the uid
        # counter is moved just before the first training and the first evaluation call trace them
        # (`xla_flags.align_trace_uid`)
        self.trace_position: int | None = None
        self._traced: set[bool] = set()  # evaluation? for the step functions aligned so far

    def on_train_batch_begin(self, batch, logs=None):
        super().on_train_batch_begin(batch, logs)
        self._align(evaluation=False)  # the last thing before the call: nothing draws uids in between

    def on_test_batch_begin(self, batch, logs=None):
        super().on_test_batch_begin(batch, logs)
        self._align(evaluation=True)

    def _align(self, evaluation: bool) -> None:
        if self.trace_position is None or evaluation in self._traced:
            return
        from .xla_flags import align_trace_uid

        self._traced.add(evaluation)
        align_trace_uid(self.trace_position, evaluation)

    def on_train_batch_end(self, batch, logs=None):
        if self._train_batch_end:
            super().on_train_batch_end(batch, logs)
        for cb in self._epoch_closers:  # no log conversion: the instrument reads what it needs itself
            cb.after_train_batch(batch)

    def on_batch_end(self, batch, logs=None):
        if self._train_batch_end:
            super().on_batch_end(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if self._test_batch_end:
            super().on_test_batch_end(batch, logs)


def _any_overrides(callbacks: list, hooks: tuple[str, ...]) -> bool:
    base = keras.callbacks.Callback
    return any(getattr(type(cb), hook) is not getattr(base, hook) for cb in callbacks for hook in hooks)


class ProbeReading(TypedDict):
    """The training state at a window's end (`ModelProbe.read`): None where the model has none."""

    loss_total: float | None
    loss_count: float | None
    loss_scale: float | None
    iterations: int


class ModelProbe:
    """Reads the training state kept in device variables; called once per window."""

    def __init__(self, model: keras.Model) -> None:
        self.loss_metrics = _loss_metrics(model)
        optimizer = model.optimizer
        self.loss_scale_optimizer = optimizer if isinstance(optimizer, keras.optimizers.LossScaleOptimizer) else None
        self.optimizer = optimizer

    def read(self) -> ProbeReading:
        """{"loss_total", "loss_count", "loss_scale", "iterations"} (None where the model has none)."""
        total = count = None
        for metric in self.loss_metrics:
            c = local_value(metric.count)
            if c > 0 or metric is self.loss_metrics[-1]:
                total, count = local_value(metric.total), c
                break
        scale = float(self.loss_scale_optimizer.dynamic_scale.numpy()) if self.loss_scale_optimizer else None
        return {"loss_total": total, "loss_count": count, "loss_scale": scale,
                "iterations": int(self.optimizer.iterations.numpy())}


def _loss_metrics(model: keras.Model) -> list:
    """The running mean(s) of the training loss: Keras' loss tracker, then any metric named 'loss'.

    A custom `train_step` may track its loss in its own `Mean(name="loss")`
    and leave Keras' tracker at zero; the probe reads whichever has counted.
    """
    found: list[Any] = []
    for metric in [getattr(model, "_loss_tracker", None), *getattr(model, "metrics", [])]:
        if metric is None or any(metric is m for m in found):
            continue
        if getattr(metric, "name", "") == "loss" and hasattr(metric, "total") and hasattr(metric, "count"):
            found.append(metric)
    return found


class Instrument(keras.callbacks.Callback):
    """Times every step, reads the model once per window, drives the profiler and the stop.

    `monitor` (trainer_backend.monitor.RunMonitor) turns windows into events,
    findings and decisions; this class only knows Keras.
    """

    def __init__(self, monitor, total_steps: int, steps_per_epoch: int,
                 profile: tuple[int, int] | None, profile_dir: str | None, wait_for_steady: bool = False) -> None:
        """`wait_for_steady`: postpone the profile window until warm-up has ended (the default window)."""
        super().__init__()
        self.monitor = monitor
        self.record: StepRecord = monitor.record
        self.total_steps = total_steps
        self.steps_per_epoch = steps_per_epoch
        self.profile = profile if profile_dir else None
        self.wait_for_steady = wait_for_steady
        if self.profile and wait_for_steady and self.profile[1] - self.profile[0] >= steps_per_epoch:
            # the default window must fit inside one epoch, or validation would be profiled too
            self.profile = (self.profile[0], self.profile[0] + max(1, steps_per_epoch - 1))
        self.profile_dir = profile_dir
        self.profiling = False
        self.profile_done = False
        self.started = 0  # steps begun (the last one may still be running)
        self.completed = 0
        self.fit_start: float | None = None
        self._probe: ModelProbe | None = None
        self._per_call = 1
        self._epoch_first = 1
        self._last: float | None = None
        self._last_step = 0
        self._window_start = 0.0
        self._synced_at = 0.0  # perf_counter after the last device-draining read (or an epoch's start)
        self._flushed_step = 0
        self._flushed_samples = 0
        self._prev_total = 0.0
        self._prev_count = 0.0
        self._prev_iterations = 0
        self._validating = False
        self._skip_validation = False
        self.blocks: ArmBlocks | None = None  # when this run shares its process with another (run-pair)
        self.window_holding: dict[int, int] = {}  # a paired run's window (by first step) -> its holding of the baton
        self._discard_through = 0  # after a block switch: the steps up to here are timed but not in a window
        self._steady_window_s: float | None = None  # sized when warm-up ends (`steady_window_s`)
        # (first step of the call, its seconds) of each call after warm-up that compiled a new input shape seen
        # once — a pass's partial last batch — whose window was left out of the measurement (`_one_off`)
        self.one_off_compiles: list[tuple[int, float]] = []

    # -- Keras hooks ---------------------------------------------------------------------------

    def on_train_begin(self, logs=None):
        self.fit_start = self._window_start = self._synced_at = time.perf_counter()
        self._probe = ModelProbe(self.model)
        self._prev_iterations = int(self.model.optimizer.iterations.numpy())
        self._per_call = self.record.steps_per_sample = max(1, int(getattr(self.model, "steps_per_execution", 1) or 1))
        self.monitor.on_train_begin(self.fit_start)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_first = epoch * self.steps_per_epoch + 1
        self._last = None  # no sample spans an epoch boundary (validation ran in between)
        self._prev_total = self._prev_count = 0.0  # fit() reset the metrics before this hook
        self._synced_at = time.perf_counter()  # validation ran since the last read: no window spans it
        if self._validating:
            self._validating = False
            self.monitor.on_resume(self._epoch_first)

    def on_train_batch_begin(self, batch, logs=None):
        now = time.perf_counter()
        step = self._epoch_first + batch
        one_off = False
        if self._last is not None:  # one sample per call: a block of steps_per_execution steps, timed as one
            ms = (now - self._last) * 1000.0 / (step - self._last_step)
            self.record.add(self._last_step, ms, self._last)
            # the cheap test first: the slice of the calls before it is made only for a call long enough to judge
            one_off = ms * self._per_call > ONE_OFF_MIN_MS and \
                self._one_off(ms, now - self._last, self.record.ms[-SPIKE_CONTEXT - 1:-1])
        self._last, self._last_step = now, step
        self.completed = step - 1
        self.started = step + self._per_call - 1
        if self.profile and not self.profile_done:
            self._drive_profiler(step)
        if self._discard_through and self.completed >= self._discard_through:
            self._flush(now, measured=False)  # the calls after a block switch: their steps, in no window
            self._discard_through = 0
            self._last = self._synced_at = time.perf_counter()
        elif one_off and self.completed > self._flushed_step:
            self._flush(now, measured=False)  # the window that holds a new shape's compilation measures nothing
            self._last = self._synced_at = time.perf_counter()
        elif self.completed > self._flushed_step:
            elapsed = now - self._window_start
            if self.monitor.warmed_up:
                due = elapsed >= self.steady_window_s
            else:
                due = elapsed >= WARMUP_WINDOW_S or (self.completed <= WARMUP_SHORT_WINDOWS_UNTIL and
                                                     self.completed - self._flushed_step >= WARMUP_WINDOW_STEPS)
            if due:
                self._flush(now)
                # the read and the monitor's work belong to no step: nothing is in flight, start the clocks anew
                self._last = self._synced_at = time.perf_counter()
                if self.blocks is not None:
                    self._block_boundary(step)
        if (stdio.stop_requested() or (self.blocks is not None and self.blocks.aborted)) \
                and not self.monitor.stop_reason:
            self.monitor.stop_reason = StopReason.CANCELLED
        if self.monitor.stop_reason or self.started >= self.total_steps:
            self.model.stop_training = True  # this step still runs, then fit() ends the epoch and returns

    def after_train_batch(self, batch: int) -> None:
        """After each training call (`batch`: its last step in the epoch): at the epoch's end, or when training
        stops, close the window now, before fit() validates, reads its metrics or resets an iterator."""
        if batch + 1 >= self.steps_per_epoch or self.model.stop_training or self.started >= self.total_steps:
            now = time.perf_counter()
            self.completed = self.started
            # the epoch's last call has no sample (validation follows it), yet it is the one that meets a pass's
            # partial last batch where an epoch is a pass (a script's own epochs): judged on its own time
            one_off = self._last is not None and self._one_off((now - self._last) * 1000.0 / self._per_call,
                                                               now - self._last, self.record.ms[-SPIKE_CONTEXT:])
            self._flush(now, measured=not one_off)

    def on_test_begin(self, logs=None):
        self.completed = self.started
        self._flush(time.perf_counter())  # before evaluate() resets the metrics
        self._validating = True
        self._skip_validation = self.monitor.stop_reason in (StopReason.CANCELLED, StopReason.NAN)
        if self._skip_validation:
            self.model.stop_evaluating = True  # a cancelled or diverged run does not validate
        self.monitor.on_validation_begin(self.completed)

    def on_epoch_end(self, epoch, logs=None):
        self.completed = self.started
        self._flush(time.perf_counter())
        if self.monitor.on_epoch_end(self.completed, logs or {}, validated=not self._skip_validation):
            self.model.stop_training = True
        self._skip_validation = False

    def on_train_end(self, logs=None):
        self.completed = self.started
        if self.profiling:
            self.stop_profiler(self.completed)
        self._flush(time.perf_counter())
        self.monitor.on_train_end(self.completed)

    def _one_off(self, ms: float, seconds: float, before: list[float]) -> bool:
        """Whether the call just timed (`ms` per step, `seconds` in all, the calls `before` it; its first step
        `_last_step`) compiled a new input shape seen once, so its window must measure nothing: after warm-up,
        outside the profiler, it took a compilation's time by RECOMPILE_STORM's rule (over SPIKE_FACTOR × the
        median of the calls before it, and MIN_SPIKE_MS more) and at least ONE_OFF_MIN_MS in all. Only the first MIN_SPIKES - 1 of them: those are
        shapes seen once — a pass's partial last batch, traced and compiled at its first sight (8.5 s of a
        keras-io weather run) —, while spikes that keep coming are a storm, whose cost is the configuration's
        own and stays in its throughput (RECOMPILE_STORM names it)."""
        if (ms * self._per_call <= ONE_OFF_MIN_MS or not before or not self.monitor.warmed_up or self._near_profiler()
                or len(self.one_off_compiles) >= MIN_SPIKES - 1):
            return False
        median = sorted(before)[len(before) // 2]
        if ms <= max(SPIKE_FACTOR * median, median + MIN_SPIKE_MS):
            return False
        self.one_off_compiles.append((self._last_step, seconds))
        return True

    def _near_profiler(self) -> bool:
        """The call just timed started or stopped the profiler, or ran under it (its steps are in no window)."""
        window = self.profile if self.profiling or self.profile_done else None
        return window is not None and window[0] - 1 <= self._last_step <= window[1] + 1

    @property
    def steady_window_s(self) -> float:
        """The steady windows' length, sized once when warm-up has ended: STEADY_WINDOW_S, or less when the
        steps left (at the latest samples' pace) hold fewer than MIN_STEADY_WINDOWS such windows. A paired
        arm keeps STEADY_WINDOW_S: its blocks, not its step count, end it."""
        if self._steady_window_s is None:
            if not self.monitor.warmed_up or self.blocks is not None:
                return STEADY_WINDOW_S
            recent = sorted(self.record.ms[-5:])
            step_s = recent[len(recent) // 2] / 1000.0 if recent else 0.0
            left_s = max(0, self.total_steps - self.completed) * step_s
            self._steady_window_s = min(STEADY_WINDOW_S, left_s / MIN_STEADY_WINDOWS) or STEADY_WINDOW_S
        return self._steady_window_s

    # -- blocks (run-pair) ---------------------------------------------------------------------

    def _block_boundary(self, step: int) -> None:
        """Right after a window closed: end the block at the window boundary nearest its share of the arm's
        steady seconds, and hand over.

        Block k ends once the arm's steady seconds reach k shares less half a
        window (the boundary nearest k shares; the last block less a quarter,
        erring long, counted as the run's end will count them,
        `Record.settled_steady_s`): counting each block's seconds
        from its own start, every block of 0.75 s ran to two 0.5 s windows and
        an arm aiming at 3 s measured 4 s (a third of every paired process's
        measurement beyond its aim). Nothing of this arm is in flight (the
        window's read drained it), so the other arm's block runs alone; on
        coming back the clocks restart and the first call is discarded
        (`blocks.DISCARD_CALLS`).
        """
        assert self.blocks is not None, "a run that shares its process (run-pair)"
        steady = sum(w[2] for w in self.record.steady_windows())
        due = self.blocks.number * self.blocks.block_s
        if steady < due - self.steady_window_s / 2:
            return
        if self.blocks.number >= self.blocks.shared.blocks:  # the last block: as the run's end will count, erring long
            settled = self.record.settled_steady_s()
            self._last = self._synced_at = time.perf_counter()  # the check's own time belongs to no window
            if settled < due - self.steady_window_s / 4:
                return
        handed = time.perf_counter()
        outcome = self.blocks.end_block()
        if outcome == FINISHED:
            self.model.stop_training = True  # this call still runs, then fit() returns and the other arm goes on
        elif outcome == SWITCHED:
            self._last = self._synced_at = self._window_start = time.perf_counter()
            self._discard_through = step - 1 + DISCARD_CALLS * self._per_call
            self.monitor.on_block(step, self.blocks.number, self.blocks.shared.blocks, self._last - handed)

    # -- windows -------------------------------------------------------------------------------

    def _flush(self, now: float, measured: bool = True) -> None:
        if self.completed <= self._flushed_step or self._probe is None:
            return
        reading = self._probe.read()  # waits for the device: every step up to `completed` has finished
        synced = time.perf_counter()
        loss = None
        if reading["loss_total"] is not None and reading["loss_count"] is not None \
                and reading["loss_count"] > self._prev_count:
            loss = (reading["loss_total"] - self._prev_total) / (reading["loss_count"] - self._prev_count)
            self._prev_total, self._prev_count = reading["loss_total"], reading["loss_count"]
        n_steps = self.completed - self._flushed_step
        skipped = None
        if reading["loss_scale"] is not None:
            applied = reading["iterations"] - self._prev_iterations
            skipped = max(0, n_steps - applied)
        self._prev_iterations = reading["iterations"]
        first = self._flushed_samples
        window = Window(steps=self.record.step[first:], step_ms=self.record.ms[first:], loss=loss,
                        loss_scale=reading["loss_scale"], skipped_steps=skipped,
                        span=(self._flushed_step + 1, self.completed, synced - self._synced_at) if measured else None)
        if window.span is not None:  # measured
            self.record.windows.append(window.span)
            if self.blocks is not None:
                self.window_holding[window.span[0]] = self.blocks.holding
        self._synced_at = synced
        self._flushed_step = self.completed
        self._flushed_samples = len(self.record)
        self._window_start = now
        self.monitor.on_window(window, self.completed)

    # -- profiler ------------------------------------------------------------------------------

    def _drive_profiler(self, step: int) -> None:
        assert self.profile is not None, "a run with a profiler window"
        start, stop = self.profile
        if not self.profiling and step >= stop:
            # a call of several steps (steps_per_execution) went past the window without starting it — the window
            # (15, 35) postponed by one step per call of 30 steps was never met: the kept "30 steps per call" of
            # the issue-42 walk had no profile anywhere. It starts at this call, one call long at least.
            start, stop = step, step + max(stop - start, self._per_call)
            self.profile = (start, stop)
        if not self.profiling and start <= step < stop:
            if self.wait_for_steady and stop + 1 <= self.total_steps:
                epoch_last = self._epoch_first + self.steps_per_epoch - 1
                ends = max(stop, step + self._per_call)  # the profiler stops at the first call at or after `stop`
                splits_epoch = ends > epoch_last and stop - start + 1 <= self.steps_per_epoch
                # one sample per call: a run of few calls finds its warm-up only at its end, so from the middle of
                # the run on the window waits for validation alone (the same walk: warm-up never seen live)
                late = step > self.total_steps // 2
                if not (self.monitor.warmed_up or late) or splits_epoch:
                    # keep its length; start once warm-up is over, and keep validation out of it
                    self.profile = (start + 1, stop + 1)
                    return
            import tensorflow as tf

            try:
                tf.profiler.experimental.start(self.profile_dir)
            except Exception as exc:  # noqa: BLE001 - a profiler problem must not stop training
                print(f"trainer_backend: profiler did not start: {exc}", file=sys.stderr)
                self.profile_done = True
                return
            self.profiling = True
            self.profile = (step, stop)
            self.monitor.on_profile_start(step)
        elif self.profiling and step >= stop:
            self.stop_profiler(step)

    def stop_profiler(self, step: int) -> None:
        import tensorflow as tf

        try:
            tf.profiler.experimental.stop()
        except Exception as exc:  # noqa: BLE001
            print(f"trainer_backend: profiler did not stop cleanly: {exc}", file=sys.stderr)
        self.profiling = False
        self.profile_done = True
        assert self.profile is not None, "a run with a profiler window"
        self.profile = (self.profile[0], step)
        self.monitor.on_profile_stop(self.profile[0], step)
