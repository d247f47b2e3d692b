"""A completed `tfturbo run`: its run directory and its summary."""

from __future__ import annotations

import json
import math

import yaml

from tfturbo import protocol, runfiles
from tfturbo.runfiles import load_run

SUMMARY_KEYS = {"status", "settings", "step_ms", "steps_per_s", "step_ms_samples", "warmup_s", "warmup_steps",
                "steps_completed", "wall_s", "peak_memory_bytes", "memory_kind", "metrics", "validation",
                "findings", "versions", "device", "workload", "learning_rate", "loss_scale", "xla_active",
                "profile", "stopped_early", "steps_saved", "checkpoint"}


def test_run_dir_has_every_file(mlp_run):
    for name in (runfiles.RUN_YAML, runfiles.EVENTS, runfiles.SUMMARY, runfiles.BACKEND_LOG,
                 f"{runfiles.CHECKPOINT_DIR}/{runfiles.CHECKPOINT_MODEL}",
                 f"{runfiles.CHECKPOINT_DIR}/{runfiles.CHECKPOINT_SETTINGS}"):
        assert (mlp_run / name).is_file(), name
    tb = mlp_run / runfiles.TB_DIR
    scalars = list(tb.glob("events.out.tfevents.*"))
    assert scalars, "no TensorBoard event file"
    data = b"".join(p.read_bytes() for p in scalars)
    for tag in (b"step_ms", b"loss", b"val_accuracy"):
        assert tag in data, tag
    assert list(tb.glob("plugins/profile/*/*.xplane.pb")), "no profile captured"


def test_run_yaml_records_settings_versions_and_device(mlp_run):
    run = yaml.safe_load((mlp_run / runfiles.RUN_YAML).read_text())
    s = run["settings"]
    assert (s["policy"], s["jit_compile"], s["batch_size"], s["steps"], s["strategy"]) == \
        ("float32", False, 64, 120, "default")  # batch size resolved from the workload's BATCH_SIZE
    assert set(run["versions"]) >= {"tensorflow", "keras", "tfturbo", "python"}
    assert run["device"].startswith("CPU")
    assert run["command_line"].startswith("tfturbo run builtin:mlp")
    assert run["created"]


def test_events_are_numbered_complete_and_end_with_the_result(mlp_run):
    lines = (mlp_run / runfiles.EVENTS).read_bytes().splitlines()
    events = [json.loads(line) for line in lines]  # every line is valid JSON
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == protocol.HELLO and events[0]["run"] == mlp_run.name
    assert [e["type"] for e in events[-2:]] == [protocol.RESULT, protocol.DONE]
    assert events[-1]["status"] == "completed" and events[-1]["exit_code"] == 0
    assert events[-2]["document"] == json.loads((mlp_run / runfiles.SUMMARY).read_text())
    steps = [s for e in events if e["type"] == protocol.STEPS for s in e["step"]]
    assert steps == sorted(set(steps)) and len(steps) < len(events) * 60  # batched, not one line per step


def test_phases_mark_warmup_profile_window_and_validation(mlp_run):
    events = load_run(mlp_run).events
    phases = [(e["phase"], e["step"]) for e in events if e["type"] == protocol.PHASE]
    names = [p for p, _ in phases]
    assert names[:3] == ["building", "compiling", "warmup"]
    assert ("profiling", 30) in phases
    assert ("training", 41) in phases  # the step after the profiler stopped at 40
    first_steady = next(step for p, step in phases if p == "training")
    assert 1 < first_steady <= 41
    assert names.count("validating") == 5 and names[-1] == "saving"


def test_summary_numbers(mlp_run):
    summary = json.loads((mlp_run / runfiles.SUMMARY).read_text())
    assert SUMMARY_KEYS <= set(summary)
    assert summary["status"] == "completed" and summary["steps_completed"] == 120
    st = summary["step_ms"]
    assert st["ci95"][0] <= st["median"] <= st["ci95"][1]
    assert st["n"] == len(summary["step_ms_samples"]) > 20  # fewer when a loaded machine settles late
    # steady samples exclude warm-up (decided on the whole run), the profiler steps after it and the last step
    # of each epoch after it
    first = summary["first_steady_step"]
    assert first == summary["warmup_steps"] + 1
    profiled_after = max(0, 40 - max(30, first) + 1)
    epoch_ends_after = sum(1 for end in (24, 48, 72, 96, 120) if end >= first)
    assert st["n"] <= 120 - summary["warmup_steps"] - profiled_after - epoch_ends_after + 1
    # the throughput verdicts use: steady samples over the wall time of the device-drained windows
    tp = summary["throughput"]
    assert tp["samples_per_s"] > 0 and tp["steps"] <= 120 - summary["warmup_steps"] and tp["seconds"] > 0
    assert all(a <= b for a, b, _ in summary["windows"])
    # one throughput: steps/s is the device-drained window rate in steps, never the median step's inverse
    assert math.isclose(summary["steps_per_s"], tp["samples_per_s"] / summary["settings"]["batch_size"])
    assert summary["warmup_s"] > 0 and summary["wall_s"] > summary["warmup_s"]
    assert summary["memory_kind"] == "host" and summary["peak_memory_bytes"] > 10_000_000
    assert [v["step"] for v in summary["validation"]] == [24, 48, 72, 96, 120]
    assert {"loss", "accuracy", "val_loss", "val_accuracy"} <= set(summary["metrics"])
    assert summary["metrics"]["val_accuracy"] > 0.4  # 4 classes: chance is 0.25
    assert summary["profile"]["window"] == [30, 40]
    assert summary["loss_scale"] is None and summary["xla_active"] is False
    assert math.isclose(summary["learning_rate"], 3e-3, rel_tol=1e-6)
    assert summary["workload"]["spec"] == "builtin:mlp"


def test_checkpoint_settings_record_what_produced_the_model(mlp_run):
    saved = load_run(mlp_run).checkpoint_settings()
    assert (saved["policy"], saved["jit_compile"], saved["batch_size"], saved["steps"]) == ("float32", False, 64, 120)
    assert math.isclose(saved["learning_rate"], 3e-3, rel_tol=1e-6)
    assert saved["versions"]["tensorflow"] and saved["device"].startswith("CPU") and saved["seed"] == 1234


def test_loss_is_read_once_per_window_and_falls(mlp_run):
    series = load_run(mlp_run).steps()
    losses = [v for v in series.loss if v is not None]
    assert 1 < len(losses) < len(series.loss) / 3
    assert losses[-1] < losses[0]
