"""Lists once kept by hand are derived from their declarations (issue 41 item 4): TensorBoard's HParams from the
run settings (the hand list had missed fix_int_inputs), the compare CSV's columns from CompareRow's fields."""

from __future__ import annotations

import csv
import io

from tfturbo import profile
from tfturbo.compare import CompareRow, to_csv
from tfturbo.settings import RunSettings, declared
from trainer_backend.hparams_record import hparams_of

HEADER_BEFORE = ("name", "configuration", "label", "status", "policy", "jit_compile", "batch_size", "steps_per_s",
                 "steps_per_s_ci95_lo", "steps_per_s_ci95_hi", "step_ms", "step_ms_ci95_lo", "step_ms_ci95_hi",
                 "speedup", "speedup_ci95_lo", "speedup_ci95_hi", "verdict", "warmup_s", "peak_memory_bytes",
                 "memory_ratio", "memory_kind", "val_delta_metric", "val_delta", "val_step", "learning_rate",
                 "learning_rate_schedule", "steps_completed", "mfu", "mfu_unknown", "findings", "warnings",
                 "settings_record", "profile_op_ms_per_step", *(f"profile_{c}_ms" for c in profile.CATEGORIES),
                 "profile_sixteen_bit_share")


def test_hparams_hold_every_setting_of_a_configuration_and_the_run_length():
    settings = RunSettings("builtin:mlp", batch_size=64, fix_int_inputs=True, val_every=10, until_ci=0.02)
    hparams = hparams_of(settings)
    assert hparams["fix_int_inputs"] is True and hparams["batch_size"] == 64 and hparams["steps"] == settings.steps
    assert {f.name for f, s in declared() if s.ab and f.name != "fit_call"} <= set(hparams)  # fit_call: None
    assert not {"val_every", "until_ci", "workload", "val_set"} & set(hparams)  # how it was measured, or a path


def test_the_csv_keeps_its_columns_and_writes_a_value_for_each():
    row = CompareRow("01-baseline", "baseline: float32, batch 32", "float32", "completed", "float32", False, 32, 10.0, (9.0, 11.0), 100.0,
                     (95.0, 105.0), 1.0, (1.0, 1.0), "baseline", 1.5, 2**20, 1.0, "host", metrics={"val_accuracy": 0.9},
                     val_delta=("val_accuracy", 0.01), profile_ms={"matmul": 3.0})
    header, line = list(csv.reader(io.StringIO(to_csv([row]))))
    assert tuple(header) == (*HEADER_BEFORE, "val_accuracy")
    values = dict(zip(header, line))
    assert values["speedup_ci95_hi"] == "1.0" and values["val_delta_metric"] == "val_accuracy"
    assert values["profile_op_ms_per_step"] == "3.0" and values["val_accuracy"] == "0.9"
