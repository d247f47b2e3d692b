"""The code to apply for a study's recommendation (tfturbo/tune/code_changes.py): each lever's measured, kept change,
placed in the workload's own file, nothing else; a change the file cannot take is left to the user with its code."""

from __future__ import annotations

from pathlib import Path

from tfturbo.patch import changes as C
from tfturbo.patch.document import ChangesPatch
from tfturbo.run_summary import RunSummary
from tfturbo.settings import RunSettings
from tfturbo.tune.code_changes import changes_for, recommended_patch

SCRIPTS = Path(__file__).parents[1] / "patch" / "scripts"
BASE = RunSettings("builtin:x", batch_size=64)
ADAM_STRING = {"class": "Adam", "module": "keras.optimizers", "given_as": "adam", "learning_rate": 0.0010000000474974513,
               "default_learning_rate": 0.001, "schedule": None}  # what trainer_backend/optimizer_code.py records


def text(rec, base, findings=(), summary=None, workload="builtin:x") -> str:
    return ChangesPatch(RunSettings.from_dict(rec if isinstance(rec, dict) else rec.to_dict()).label(),
                        recommended_patch(workload, rec, base, list(findings), summary),
                        kept=RunSettings.from_dict(base if isinstance(base, dict) else base.to_dict()).label()).text()


def kinds(rec, base, findings=()) -> list[str]:
    return [type(c).__name__ for c in changes_for(rec, base, list(findings)) if c.differs]


def test_the_code_holds_exactly_the_measured_kept_changes():
    """Issue 22: "Changes to make" added drop_remainder=True although no partial batch was found and the
    recommended settings had it off. Every switch the recommendation turns on is a change, and nothing else."""
    cases = [(BASE.with_(jit_compile=True), ["CompileArgument"]),
             (BASE.with_(jit_compile=True, drop_remainder=True), ["CompileArgument", "DropRemainder"]),
             (BASE.with_(policy="mixed_float16", fix_head=True, batch_size=128, lr_scale=2.0),
              ["Policy", "BatchSize", "LearningRate"]),  # no head finding: the audit found it float32
             (BASE.with_(steps_per_execution=4), ["CompileArgument"]),
             (BASE.with_(xla_autoclustering=True), ["AutoClustering"]),
             (BASE, [])]
    for rec, expected in cases:
        assert kinds(rec, BASE) == expected, rec


def test_the_findings_add_their_code_under_the_16bit_policy_only():
    head = {"code": "HEAD_NOT_FLOAT32", "where": "dense_2", "message": "softmax computes in bfloat16",
            "data": {"layer": "dense_2", "class": "Dense"}, "fix": 'layers.Dense(10, activation="softmax", dtype="float32")'}
    dim = {"code": "DIM_NOT_MULTIPLE_OF_8", "where": "dense (Dense 100)", "fix": "keras.layers.Dense(104)"}
    sixteen = changes_for(BASE.with_(policy="mixed_bfloat16", fix_head=True), BASE, [head, dim])
    [head_change] = [c for c in sixteen if isinstance(c, C.Float32Head)]
    assert head_change.layers == (("dense_2", "Dense"),) and head_change.by_hand() == head["fix"]
    assert any(isinstance(c, C.ByHand) and c.by_hand() == "keras.layers.Dense(104)" for c in sixteen)
    assert not any(isinstance(c, (C.Float32Head, C.ByHand)) for c in changes_for(BASE, BASE, [head, dim]))


def test_no_change_says_so():
    said = text(BASE, BASE)
    assert "No code changes" in said and "\n+" not in said and "\n-" not in said


def test_a_workload_without_a_file_here_lists_each_change_with_its_code():
    said = text(BASE.with_(policy="mixed_bfloat16", jit_compile=True, batch_size=96, lr_scale=1.5), BASE)
    assert "# not applied automatically (make these changes in your code):" in said
    assert "the workload's file (builtin:x) is not on this machine" in said
    assert '#       keras.mixed_precision.set_global_policy("mixed_bfloat16")' in said
    assert "jit_compile=True" in said and "batch_size=96" in said and "learning rate × 1.5" in said


def test_a_training_script_gets_its_batch_where_it_sets_it():
    """The issue 22 walk read "train_ds.batch(50)" for a script calling fit(x, y, batch_size=50); issue 43's
    "train_ds.batch(104) … before fit()" for a dataset the script already batches: the batch is edited where the
    script sets it."""
    script = str(SCRIPTS / "constants_numpy.py")
    base = RunSettings(script, batch_size=100)
    said = text(base.with_(batch_size=200, lr_scale=2.0), base, workload=script)
    assert "-BATCH = 100  # the batch size\n+BATCH = 200  # the batch size" in said
    assert "+model.compile(optimizer=keras.optimizers.Adam(learning_rate=LR * 2)," in said
    assert ".batch(" not in said and "train_ds" not in said
    tfdata = str(SCRIPTS / "subclassed_schedule.py")
    base = RunSettings(tfdata, batch_size=32)
    said = text(base.with_(batch_size=64), base, workload=tfdata)
    assert "-BATCH_SIZE = 32\n+BATCH_SIZE = 64" in said and ".batch(" not in said  # never a new batch()


def test_a_string_optimizer_gets_its_learning_rate_in_the_scripts_terms():
    """Issue 22 walk: the script passed optimizer="adam"; the code read
    "optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE * 2)", a variable it does not have."""
    script = str(SCRIPTS / "regression_head.py")
    base = RunSettings(script, batch_size=32)
    said = text(base.with_(batch_size=64, lr_scale=2.0), base, summary=RunSummary(optimizer=ADAM_STRING), workload=script)
    assert '-model.compile(optimizer="adam", loss="mse")' in said
    # the new rate written as the script would write it, never arithmetic on a number (issue 44: "0.001 * 2")
    assert "+model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.002), loss=\"mse\")" in said
    assert "LEARNING_RATE" not in said
    without = text(base.with_(batch_size=64, lr_scale=2.0), base, workload=script)  # an older run: no record
    assert "its default learning rate was not recorded" in without


def test_built_in_workloads_are_patched_in_their_own_file():
    """builtin:train-script is a script built in; builtin:mlp a contract file: each gets its own words (the batch
    at fit() for the one, BATCH_SIZE for the other)."""
    script = RunSettings("builtin:train-script", batch_size=50)
    said = text(script.with_(batch_size=100), script, workload="builtin:train-script")
    assert "--- a/train_script.py" in said
    assert '+parser.add_argument("--batch-size", type=int, default=100)' in said  # its argparse default
    contract = RunSettings("builtin:mlp", batch_size=64)
    said = text(contract.with_(batch_size=128, jit_compile=True), contract, workload="builtin:mlp")
    assert "+BATCH_SIZE = 128" in said and "jit_compile=True" in said
