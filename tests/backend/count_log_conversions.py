"""Counts how often Keras converts batch logs to Python numbers (a device sync each) during a run.

Usage: python count_log_conversions.py WORKLOAD OUT_DIR RESULT_JSON
Runs `python -m trainer_backend run WORKLOAD --out OUT_DIR --steps 200` in this
process, then a plain `model.fit(verbose=0)` of the same workload for 200 steps
as the control, and writes both counts to RESULT_JSON.
"""

import json
import sys

from keras.src.utils import python_utils

calls = {"n": 0}
_original = python_utils.pythonify_logs


def _counting(logs):
    if logs:  # empty logs (batch begin) convert nothing
        calls["n"] += 1
    return _original(logs)


python_utils.pythonify_logs = _counting  # what CallbackList calls for every batch-end dispatch


def main(workload: str, out: str, result_path: str) -> None:
    import keras

    from trainer_backend import __main__ as backend
    from trainer_backend.instrument import Instrument
    from trainer_backend.workload import load_workload

    code = backend.main(["run", workload, "--out", out, "--steps", "200", "--val-every", "100"])
    instrumented = calls["n"]

    calls["n"] = 0
    w = load_workload(workload)
    model = w.build_model()
    train, _ = w.make_datasets(w.default_batch_size)
    model.fit(train.repeat(), steps_per_epoch=100, epochs=2, verbose=0)
    plain = calls["n"]

    overrides = [hook for hook in ("on_train_batch_end", "on_batch_end", "on_test_batch_end")
                 if getattr(Instrument, hook) is not getattr(keras.callbacks.Callback, hook)]
    with open(result_path, "w") as f:
        json.dump({"exit_code": code, "instrumented": instrumented, "plain_fit": plain,
                   "batch_end_overrides": overrides}, f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
