"""RunData: what the plots draw, built from protocol events (no Qt)."""

import math

from tfturbo import protocol
from tfturbo.runfiles import load_run
from tfturbo_gui.run_data import Column, RunData


def steps(first, ms, loss=None, scale=None):
    n = len(ms)
    e = {"type": "steps", "step": list(range(first, first + n)), "step_ms": ms, "loss": loss or [None] * n}
    if scale is not None:
        e["loss_scale"] = scale
    return e


def test_column_grows_by_doubling_and_keeps_values():
    col = Column(capacity=4)
    for i in range(10):
        col.extend([i, None])
    assert col.size == 20 and len(col._data) == 32  # 4 -> 8 -> 16 -> 32, never per point
    assert col.view()[:4].tolist()[0::2] == [0, 1] and math.isnan(col.view()[1])


def test_warmup_profile_window_and_steady_median():
    data = RunData("r")
    data.ingest([
        {"type": "phase", "phase": "warmup", "step": 1},
        steps(1, [500.0, 400.0, 10.0, 10.0, 10.0, 90.0, 90.0, 90.0, 12.0, 12.0], [2.0] * 10),
        {"type": "phase", "phase": "training", "step": 3},
        {"type": "phase", "phase": "profiling", "step": 6},
        {"type": "phase", "phase": "validating", "step": 7},
        {"type": "phase", "phase": "training", "step": 8},  # back from validation, still profiling
        {"type": "phase", "phase": "training", "step": 9, "excluded": [6, 8]},
    ])
    assert data.first_steady_step == 3
    assert data.profile_windows == [[6, 9]]
    assert data.steady_mask().tolist() == [False, False, True, True, True, False, False, False, True, True]
    assert data.steady_median_ms() == 10.0  # warm-up and profiled steps excluded
    assert not data.has_loss_scale and len(data.step.view()) == 10


def test_summary_median_wins_once_the_run_reports_it():
    data = RunData("r")
    data.ingest([steps(1, [5.0, 5.0]), {"type": "phase", "phase": "training", "step": 1},
                 {"type": "result", "command": "run", "document": {"step_ms": {"median": 4.5}, "findings": [
                     {"code": "NAN_LOSS", "message": "m"}]}}])
    assert data.steady_median_ms() == 4.5
    assert [f["code"] for f in data.findings] == ["NAN_LOSS"]


def test_loss_scale_validation_memory_progress_and_findings_once():
    finding = {"code": "LOSS_SCALE_SKIPS", "message": "3 steps skipped", "where": "optimizer"}
    data = RunData("r")
    data.ingest([
        steps(1, [1.0, 1.0], [0.5, None], [32768.0, 16384.0]),
        {"type": "validation", "step": 2, "metrics": {"val_accuracy": 0.5, "val_loss": None}},
        {"type": "memory", "peak_bytes": 100, "kind": "device"},
        {"type": "memory", "peak_bytes": 50, "kind": "device"},
        {"type": "progress", "step": 2, "total": 10, "eta_s": 1.5},
        {"type": "finding", "finding": finding},
        {"type": "finding", "finding": finding},
        {"type": "no-such-type"},
    ])
    assert data.has_loss_scale and data.loss_scale.view().tolist() == [32768.0, 16384.0]
    assert data.loss_step.view().tolist() == [1.0] and data.loss.view().tolist() == [0.5]  # read steps only
    x, y = data.metric_series("val_accuracy")
    assert x.tolist() == [2.0] and y.tolist() == [0.5] and data.metric_names() == ["val_accuracy"]
    assert data.peak_memory == (100, "device")
    assert data.progress == (2, 10, 1.5)
    assert len(data.findings) == 1 and data.events_seen == 8


def test_a_run_killed_while_profiling_excludes_everything_from_the_window_on():
    data = RunData("r")
    data.ingest([{"type": "phase", "phase": "training", "step": 1}, {"type": "phase", "phase": "profiling", "step": 3},
                 steps(1, [2.0, 2.0, 50.0, 50.0, 50.0])])
    assert data.profile_windows == [[3, math.inf]] and data.steady_median_ms() == 2.0


def test_a_process_that_ends_without_done_crashed():
    data = RunData("r")
    data.ingest([steps(1, [1.0])])
    data.process_ended(-9)
    assert data.status == protocol.RunStatus.CRASHED and data.exit_code == -9
    done = RunData("r")
    done.ingest([{"type": "error", "message": "boom", "fix": "do x", "traceback": "tb"},
                 {"type": "done", "status": "failed", "exit_code": 1}])
    done.process_ended(1)
    assert done.status == "failed" and done.error == {"kind": "internal", "message": "boom", "fix": "do x",
                                                      "traceback": "tb"}


def test_from_record_reads_a_stored_run(tmp_path):
    run = tmp_path / "r1"
    run.mkdir()
    lines = [protocol.encode(e) for e in (
        {"type": "phase", "phase": "training", "step": 2}, steps(1, [9.0, 3.0, 3.0]),
        {"type": "validation", "step": 3, "metrics": {"val_loss": 0.7}})]
    (run / "events.jsonl").write_text("\n".join(lines) + "\n{truncated", encoding="utf-8")
    data = RunData.from_record(load_run(run))
    assert data.name == "r1" and data.status == protocol.RunStatus.CRASHED
    assert len(data.step.view()) == 3 and data.steady_median_ms() == 3.0


def test_the_planned_steps_are_reserved_at_the_first_progress_event_so_a_long_run_never_copies_its_columns():
    """Doubling a 4 MB column copied it into fresh pages: an 18-36 ms UI stall halfway through a 1M-step run."""
    data = RunData("r")
    data.ingest([{"type": "progress", "step": 0, "total": 100_000}])
    buffers = (data.step._data, data.step_ms._data)
    assert all(len(b) >= 100_000 for b in buffers)
    for first in range(1, 100_001, 700):
        n = min(700, 100_001 - first)
        data.ingest([steps(first, [1.5] * n)])
    assert len(data.step.view()) == 100_000 and data.step.view()[-1] == 100_000
    assert data.step._data is buffers[0] and data.step_ms._data is buffers[1]  # filled in place
    huge = RunData("h")
    huge.ingest([{"type": "progress", "step": 0, "total": 10**12}])  # a bogus total reserves a bounded amount
    assert len(huge.step._data) <= 20_000_000


def test_step_columns_that_are_ragged_or_malformed_read_as_the_protocol_reads_them():
    data = RunData("r")
    data.ingest([
        {"type": "steps", "step": [1, 2, 3], "step_ms": [3.5, 4.0], "loss": [None, 0.7, 9.9]},  # ragged: 2 steps
        {"type": "steps", "step": [3, 4], "step_ms": [1.0, "slow"], "loss": 0.5, "loss_scale": [None, 128.0]},
        {"type": "steps", "step": 7, "step_ms": [1.0]},  # not a list: nothing
    ])
    assert data.step.view().tolist() == [1, 2, 3, 4]
    assert data.step_ms.view().tolist()[:3] == [3.5, 4.0, 1.0] and math.isnan(data.step_ms.view()[3])
    assert data.loss_step.view().tolist() == [2] and data.loss.view().tolist() == [0.7]
    assert data.scale_step.view().tolist() == [4] and data.loss_scale.view().tolist() == [128.0]
    assert data.has_loss_scale
    valid = {"type": "steps", "step": [1, 2], "step_ms": [3.5, 4.0], "loss": [None, 0.7]}
    assert [(s, m) for s, m, _l, _s in protocol.iter_steps(valid)] == [(1, 3.5), (2, 4.0)]


def test_a_run_pair_process_keeps_each_runs_events_apart_and_its_status_follows_the_run_that_speaks():
    data = RunData("pair", "run-pair")
    b = data.arm("b2")  # a page shows it before its first event
    data.ingest([
        {"type": "hello", "run": ""},
        {**steps(1, [50.0, 5.0, 5.0]), "run": "b2"},
        {"type": "phase", "phase": "training", "step": 2, "detail": "steady state from step 2", "run": "b2"},
        {**steps(1, [60.0, 7.0]), "run": "a2"},
        {"type": "phase", "phase": "warmup", "step": 1, "detail": "tracing", "run": "a2"},
        {"type": "result", "command": "run", "run": "a2", "document": {"status": "completed", "steps_completed": 2}},
        {"type": "result", "command": "run-pair", "run": "", "document": {"runs": {"a2": {}, "b2": {}}}},
        {"type": "done", "run": "", "status": "completed", "exit_code": 0},
    ])
    assert data.arm("b2") is b and b.step.view().tolist() == [1, 2, 3] and b.first_steady_step == 2
    assert data.arm("a2").step_ms.view().tolist() == [60.0, 7.0] and data.arm("a2").summary.steps_completed == 2
    assert data.step.size == 0  # the process's own columns stay empty: nothing is the two runs mixed
    assert data.phase == "warmup" and data.document["runs"].keys() == {"a2", "b2"} and data.finished


def spe_run(name: str, first_timed: bool) -> RunData:
    """A run at 30 steps per call as the backend sends it: windows timed as a whole ([first, last, seconds]),
    a call's steps timed alone only now and then (`first_timed`: the first window's), the loss with them;
    every epoch's training loss in its `epoch` event."""
    data = RunData(name)
    events = []
    for k, first in enumerate(range(1, 151, 30)):
        timed = first_timed and k % 2 == 0
        events.append({"type": "steps", "run": name, "step": [first] if timed else [],
                       "step_ms": [2.0] if timed else [], "window": [first, first + 29, 0.06],
                       **({"loss": [0.7 - 0.01 * k]} if timed else {})})
        events.append({"type": "epoch", "run": name, "step": first + 29, "metrics": {"loss": 0.69 - 0.01 * k}})
    data.ingest(events)
    return data


def test_a_run_whose_calls_are_timed_as_a_whole_has_a_step_time_and_a_loss_curve():
    # the walk's batch-64 run at 30 steps per call sent windows with no step timed alone: its step-time and
    # training-loss plots stayed empty beside its reference's
    bare = spe_run("05-batch64", first_timed=False)
    assert list(bare.step.view()) == [1, 31, 61, 91, 121]
    assert [round(v, 3) for v in bare.step_ms.view()] == [2.0] * 5  # 60 ms over 30 steps
    assert list(bare.loss_step.view()) == [30, 60, 90, 120, 150]  # its epochs' losses
    # a run with steps timed alone keeps its own steps and losses (no window mean or epoch mean mixed in)
    timed = spe_run("05-batch64.a1", first_timed=True)
    assert list(timed.step.view()) == [1, 61, 121]
    assert list(timed.loss_step.view()) == [1, 61, 121]


def test_the_batch_pages_plots_draw_both_runs_of_its_trial(qtbot):
    from tfturbo_gui.live_plots import RunPlots

    plots = RunPlots()
    qtbot.addWidget(plots)
    plots.show_pair(spe_run("05-batch64", False), spe_run("05-batch64.a1", True), "float32, batch 64 (full length)",
                    "reference float32, batch 32 (full length)", batches=(64, 32))
    lengths = plots.plotted_lengths()
    assert all(n > 0 for n in lengths["step_ms"]) and all(n > 0 for n in lengths["loss"]), lengths
