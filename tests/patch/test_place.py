"""Each recommended change placed where the script says that thing, on scripts written the ways users write them
(tests/patch/scripts/): the patched text parses, reads as a user would write it, and keeps everything else."""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path

import pytest

from tfturbo.patch import changes as C
from tfturbo.patch.build import make_patch
from tfturbo.patch.place import Target

SCRIPTS = Path(__file__).parent / "scripts"
ADAM = {"class": "Adam", "module": "keras.optimizers", "given_as": "adam", "learning_rate": 0.0010000000474974513,
        "default_learning_rate": 0.001, "schedule": None}  # what trainer_backend/optimizer_code.py records
EVERY = [C.Policy(why="policy", name="mixed_bfloat16"),
         C.CompileArgument(why="xla", name="jit_compile", value=True, unsaid=False),
         C.CompileArgument(why="spe", name="steps_per_execution", value=4, unsaid=1),
         C.BatchSize(why="batch", size=128), C.LearningRate(why="lr", factor=2.0, optimizer=ADAM),
         C.Float32Head(why="head"), C.DropRemainder(why="drop")]


def patch_of(name: str, *changes: C.Change, **target):
    patch = make_patch(SCRIPTS / name, list(changes), Target(**target))
    compile(patch.patched, name, "exec")  # whatever was placed, the script still parses
    return patch


@cache
def every(name: str):
    """Every change applied to one script (shared by the tests: reading a script takes a fraction of a second per
    change)."""
    return patch_of(name, *EVERY)


def changed(patch) -> tuple[list[str], list[str]]:
    """(lines removed, lines added) of the patch."""
    diff = list(difflib.unified_diff(patch.original.splitlines(), patch.patched.splitlines(), lineterm="", n=0))
    return ([line[1:] for line in diff if line.startswith("-") and not line.startswith("---")],
            [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")])


@pytest.mark.parametrize("name", sorted(p.name for p in SCRIPTS.glob("*.py")))
def test_every_change_applied_to_every_style_parses_and_keeps_the_rest(name):
    patch = every(name)
    removed, added = changed(patch)
    assert len(removed) <= len(added) + 1  # edits in place and inserted lines, nothing of the user's dropped
    kept = [line for line in patch.original.splitlines() if line not in removed]
    assert all(line in patch.patched.splitlines() for line in kept)  # comments, docstrings, layout untouched
    assert len(patch.placed) + len(patch.already) + len(patch.unplaced) == len(EVERY)


def test_constants_and_numpy_arrays():
    patch = every("constants_numpy.py")
    removed, added = changed(patch)
    assert added[:3] == ['keras.mixed_precision.set_global_policy("mixed_bfloat16")  # before the model is built', "",
                         "BATCH = 128  # the batch size"]  # after the imports, the batch where it is defined
    assert "BATCH = 100  # the batch size" in removed
    assert "    layers.Dense(3, activation=\"softmax\", dtype=\"float32\")," in added  # the Sequential's last layer
    # the compile() call's arguments as laid out, a new line (aligned) where its last line would grow too long
    assert added[-3:] == ["model.compile(optimizer=keras.optimizers.Adam(learning_rate=LR * 2),",
                          '              loss="sparse_categorical_crossentropy", metrics=["accuracy"], jit_compile=True,',
                          "              steps_per_execution=4)"]
    assert not any("model.fit" in line for line in added)  # fit(batch_size=BATCH) reads the constant
    drop = next(u for u in patch.unplaced if u.why == "drop")  # never a tf.data fix for arrays
    assert "arrays" in drop.reason and ".batch(" not in drop.reason


def test_argparse_default_and_a_dataset_made_by_a_function():
    patch = every("argparse_tfdata.py")
    removed, added = changed(patch)
    assert '    parser.add_argument("--batch-size", type=int, default=128)' in added  # the argparse default
    assert "    return ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)" in added
    assert added[added.index('    outputs = layers.Dense(NUM_CLASSES, activation="softmax", name="predictions",')
                 + 1] == '                           dtype="float32")(x)'  # a new line, aligned, past 99 columns
    # the compile() written one argument per line gets its new arguments the same way
    assert added[-3:] == ["        optimizer=keras.optimizers.Adam(learning_rate=0.002),",
                          "        jit_compile=True,", "        steps_per_execution=4,"]
    assert 'keras.mixed_precision.set_global_policy("mixed_bfloat16")  # before the model is built' in added
    assert patch.patched.index("set_global_policy") < patch.patched.index("def main")  # before any model


def test_the_options_after_the_double_dash_win_over_an_argparse_default():
    patch = patch_of("argparse_tfdata.py", C.BatchSize(why="batch", size=128), script_args=("--batch-size", "64"))
    [left] = patch.unplaced
    assert "run the script with --batch-size 128" in left.reason and not patch.placed


def test_a_subclassed_model_its_schedule_and_a_reassigned_dataset():
    patch = every("subclassed_schedule.py")
    _removed, added = changed(patch)
    assert '        self.logits = keras.layers.Dense(classes, dtype="float32")' in added  # the layer call() returns
    assert "BATCH_SIZE = 128" in added
    assert "ds = ds.shuffle(320, seed=0).batch(BATCH_SIZE, drop_remainder=True)" in added
    assert ("schedule = keras.optimizers.schedules.CosineDecay(initial_learning_rate=0.1, decay_steps=200)"
            in added)  # the schedule's initial rate, not a constant in its place


def test_a_custom_train_step_model_built_as_a_graph():
    patch = every("custom_train_step.py")
    _removed, added = changed(patch)
    assert 'outputs = layers.Dense(1, dtype="float32")(hidden)' in added  # a one-unit head: dtype only
    assert not any("softmax" in line or "sigmoid" in line for line in added)
    assert "model.fit(X, Y, epochs=2, batch_size=128)" in added
    assert any("keras.optimizers.RMSprop(0.02)" in line for line in added)


def test_a_regression_head_gets_float32_never_a_softmax():
    patch = patch_of("regression_head.py", C.Float32Head(why="head", layers=(("dense_1", "Dense"),)),
                     C.BatchSize(why="batch", size=64))
    removed, added = changed(patch)
    assert added == ['outputs = keras.layers.Dense(1, dtype="float32")(x)',
                     "model.fit(X, y, epochs=3, validation_split=0.1, batch_size=64)"]  # Keras' 32 said outright
    assert not any("softmax" in line for line in added)


def test_a_sigmoid_head_and_a_batch_inline_in_fit():
    patch = every("sigmoid_head.py")
    _removed, added = changed(patch)
    assert '                          keras.layers.Dense(1, activation="sigmoid", dtype="float32")])' in added
    assert "model.fit(train.batch(128, drop_remainder=True), epochs=2)" in added
    assert any(line.startswith("model.compile(keras.optimizers.Adam(learning_rate=0.002),") for line in added)


def test_a_script_that_already_says_it_is_not_changed_and_is_told_so():
    same = [C.Policy(why="policy", name="mixed_float16"),
            C.CompileArgument(why="xla", name="jit_compile", value=True, unsaid=False),
            C.CompileArgument(why="spe", name="steps_per_execution", value=2, unsaid=1),
            C.BatchSize(why="batch", size=32), C.Float32Head(why="head")]
    patch = patch_of("already_tuned.py", *same)
    assert patch.patched == patch.original and not patch.diff()
    assert patch.already == ["policy", "xla", "spe", "batch", "head"]
    # the other way: its own policy call and compile() arguments are edited, never duplicated
    patch = patch_of("already_tuned.py", C.Policy(why="policy", name="mixed_bfloat16"),
                     C.CompileArgument(why="xla", name="jit_compile", value=False, unsaid=False))
    removed, added = changed(patch)
    assert added == ['keras.mixed_precision.set_global_policy("mixed_bfloat16")',
                     'model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=False, '
                     'steps_per_execution=2)']
    assert patch.patched.count("set_global_policy") == 1 and patch.patched.count("jit_compile") == 1


def test_integer_ids_get_an_int32_input():
    patch = patch_of("token_ids.py", C.IntegerInput(why="ids"))
    assert changed(patch) == (["inputs = layers.Input(shape=(maxlen,))"],
                              ['inputs = layers.Input(shape=(maxlen,), dtype="int32")'])


def test_what_is_measured_but_not_said_is_added_only_when_the_recommendation_differs():
    """A compile() argument the script does not give is added only when the recommendation is not what the
    baseline ran with it unsaid (Keras' default, as measured): float32 and XLA off add nothing."""
    patch = patch_of("constants_numpy.py", C.Policy(why="p", name="float32", differs=False),
                     C.CompileArgument(why="x", name="jit_compile", value=False, unsaid=False, differs=False),
                     C.CompileArgument(why="s", name="steps_per_execution", value=1, unsaid=1, differs=False))
    assert not patch.diff() and not patch.already and not patch.unplaced


def test_a_change_without_a_place_is_left_to_the_user_with_why_and_its_code(tmp_path):
    script = tmp_path / "two_models.py"
    script.write_text("import keras\n"
                      "a = keras.Sequential([keras.layers.Dense(1)])\nb = keras.Sequential([keras.layers.Dense(1)])\n"
                      "a.compile('adam', 'mse')\nb.compile('adam', 'mse')\nfor m in (a, b):\n    m.fit(x, y)\n")
    patch = make_patch(script, [C.CompileArgument(why="XLA", name="jit_compile", value=True, unsaid=False)])
    [left] = patch.unplaced
    assert "2 compile() calls" in left.reason and "jit_compile=True" in left.snippet and not patch.diff()
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    patch = make_patch(broken, [C.BatchSize(why="batch 64", size=64)])
    assert patch.path == "" and "could not be parsed" in patch.unplaced[0].reason


def test_a_workload_file_keeps_the_contract():
    """A contract file: the policy at the start of build_model() (tfturbo calls it after setting its own), the
    batch in BATCH_SIZE, jit on build_model()'s compile()."""
    path = Path(__file__).parents[2] / "trainer_backend" / "workloads" / "mlp.py"
    patch = make_patch(path, [C.Policy(why="p", name="mixed_bfloat16"), C.BatchSize(why="b", size=128),
                              C.CompileArgument(why="x", name="jit_compile", value=True, unsaid=False)],
                       Target(contract=True))
    compile(patch.patched, "mlp.py", "exec")
    body = patch.patched[patch.patched.index("def build_model"):]
    assert body.index("set_global_policy") < body.index("keras.Sequential") and "jit_compile=True" in body
    assert patch.placed == ["p", "b", "x"]


def test_a_custom_layer_of_the_file_is_its_head():
    """builtin:fp16-softmax-head ends in its own Softmax layer class (no __init__: Layer's takes dtype)."""
    path = Path(__file__).parents[2] / "trainer_backend" / "workloads" / "fp16_softmax_head.py"
    patch = make_patch(path, [C.Float32Head(why="head", layers=(("sequential/softmax", "Softmax"),))],
                       Target(contract=True))
    assert changed(patch)[1] == ['        Softmax(dtype="float32"),  # PLANTED: computes in the global policy\'s dtype '
                                 '(float16 under mixed_float16)']
