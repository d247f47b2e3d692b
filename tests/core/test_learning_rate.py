"""A learning rate as the workload sets it (issue 44): a schedule scaled by its rates, recorded and shown as a
schedule everywhere, and the code to apply writing the new value the way the workload wrote it."""

from __future__ import annotations

import os

from tfturbo import backend_client
from tfturbo.learning_rate import learning_rate_text, scaled_config, scaling_words, schedule_text
from tfturbo.tune.levers.batch_size import learning_rate_lines

PIECEWISE = {"boundaries": [1000, 2000], "values": [0.1, 0.01, 0.001], "name": "PiecewiseConstantDecay"}
COSINE = {"initial_learning_rate": 0.001, "decay_steps": 1000, "alpha": 0.0, "name": "CosineDecay",
          "warmup_target": None, "warmup_steps": 0}


def test_a_schedule_is_scaled_by_its_rates_and_keeps_its_steps():
    scaled = scaled_config(PIECEWISE, 2.0)
    assert scaled["values"] == [0.2, 0.02, 0.002] and scaled["boundaries"] == [1000, 2000]
    warm = scaled_config({**COSINE, "warmup_target": 0.01, "warmup_steps": 100}, 2.0)
    assert warm["initial_learning_rate"] == 0.002 and warm["warmup_target"] == 0.02 and warm["decay_steps"] == 1000
    said = scaling_words({"schedule": "PiecewiseConstantDecay", "schedule_config": PIECEWISE}, 2 ** 0.5)
    assert said == ("PiecewiseConstantDecay: values [0.1, 0.01, 0.001] → [0.1414, 0.01414, 0.001414] (×1.41); "
                    "its boundaries unchanged (steps, not samples)")
    assert scaling_words({"schedule": None}, 2.0) == ""  # a constant rate: the rate itself says it


def test_a_run_shows_its_schedule_as_a_schedule_never_one_number():
    record = {"learning_rate": 0.002, "learning_rate_schedule": {"class": "CosineDecay",
                                                                 "config": scaled_config(COSINE, 2.0)}}
    assert learning_rate_text(record) == ("CosineDecay(initial_learning_rate=0.002, decay_steps=1000, alpha=0, "
                                          "warmup_steps=0)")
    assert learning_rate_text({"learning_rate": 0.0003}) == "0.0003"
    assert learning_rate_text({}) == "n/a"
    assert schedule_text({"class": "PiecewiseConstantDecay", "config": PIECEWISE}) == \
        "PiecewiseConstantDecay(boundaries=[1000, 2000], values=[0.1, 0.01, 0.001])"


def test_compare_lists_the_schedule_in_its_table_csv_and_record(tmp_path):
    import csv
    import io

    from tfturbo.compare import compare_runs, fmt_settings_record, to_csv
    from tests.tune.tune_fakes import summary
    from tfturbo import runfiles

    schedule = {"class": "ExponentialDecay", "config": {"initial_learning_rate": 0.002, "decay_steps": 100,
                                                        "decay_rate": 0.9, "staircase": False}}
    for name in ("base", "scheduled"):
        run = tmp_path / name
        run.mkdir()
        doc = {**summary(100.0, 0.9), "learning_rate": 0.002}
        if name == "scheduled":
            doc["learning_rate_schedule"] = schedule
        runfiles.write_json_atomic(run / runfiles.SUMMARY, doc)
    rows = compare_runs([runfiles.load_run(tmp_path / "base"), runfiles.load_run(tmp_path / "scheduled")])
    assert [r.learning_rate_schedule for r in rows] == ["", "ExponentialDecay(initial_learning_rate=0.002, "
                                                            "decay_steps=100, decay_rate=0.9, staircase=False)"]
    table = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert table[1]["learning_rate_schedule"].startswith("ExponentialDecay(") and table[1]["learning_rate"] == "0.002"
    assert "learning rate ExponentialDecay(initial_learning_rate=0.002" in fmt_settings_record(
        {**rows[1].recorded_settings, "policy": "float32", "learning_rate": 0.002,
         "learning_rate_schedule": schedule, "workload": "w.py"})


def test_the_code_to_apply_writes_the_new_rate_as_the_workload_wrote_it():
    cosine = {"class": "Adam", "module": "keras.optimizers", "given_as": None, "learning_rate": 0.001,
              "default_learning_rate": 0.001, "schedule": "CosineDecay", "schedule_config": COSINE}
    assert learning_rate_lines(2 ** 0.5, cosine) == [
        "-schedule = keras.optimizers.schedules.CosineDecay(initial_learning_rate=0.001, decay_steps=1000, alpha=0, "
        "warmup_steps=0)",
        "+schedule = keras.optimizers.schedules.CosineDecay(initial_learning_rate=0.001414, decay_steps=1000, "
        "alpha=0, warmup_steps=0)  # its rates ×1.41"]
    constant = {**cosine, "schedule": None, "schedule_config": None, "learning_rate": 3e-4}
    assert learning_rate_lines(2.0, constant)[1] == "+optimizer = keras.optimizers.Adam(learning_rate=0.0006, ...)  # ×2"


def test_each_command_has_its_own_log_named_by_its_path(tmp_path, monkeypatch):
    monkeypatch.setattr(backend_client, "_log", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))
    logs = tmp_path / ".cache" / "tfturbo" / "logs"
    logs.mkdir(parents=True)
    for i in range(backend_client.LOGS_KEPT + 5):  # the logs of earlier commands, the oldest first
        old = logs / f"old-{i:03d}.log"
        old.write_text("x")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    path = backend_client.log_path()
    assert path == backend_client.log_path()  # one log per command
    assert path.startswith(str(logs)) and str(os.getpid()) in path
    kept = sorted(p.name for p in logs.glob("*.log"))
    assert len(kept) == backend_client.LOGS_KEPT - 1 and "old-000.log" not in kept  # with this one's, 50
