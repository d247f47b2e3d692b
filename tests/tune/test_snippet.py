"""The code changes shown for the recommended settings (issue 4 item 4)."""

from __future__ import annotations

from tfturbo.settings import RunSettings
from tfturbo.tune.apply_snippet import snippet

BASE = RunSettings("builtin:x", batch_size=64)


def test_all_changes_appear_as_patch_lines():
    rec = BASE.with_(policy="mixed_bfloat16", jit_compile=True, batch_size=96, lr_scale=1.5, fix_head=True)
    head = {"code": "HEAD_NOT_FLOAT32", "where": "dense_2", "message": "softmax computes in bfloat16"}
    dim = {"code": "DIM_NOT_MULTIPLE_OF_8", "where": "dense (Dense 100)", "fix": "keras.layers.Dense(104)"}
    text = snippet(rec.to_dict(), BASE.to_dict(), [head, dim])
    lines = text.splitlines()
    policy = lines.index('+keras.mixed_precision.set_global_policy("mixed_bfloat16")')
    assert lines.index(" model = build_model()") == policy + 1  # the policy line comes before the build
    assert '+outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32")(x)' in lines
    assert "dense_2" in text  # the head the audit named
    assert "+              jit_compile=True)" in lines
    assert "-train_ds = train_ds.batch(64)" in lines
    assert "+train_ds = train_ds.batch(96)" in lines  # drop_remainder was not measured: not recommended
    assert "+optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE * 1.5)  # your rate ×1.5" in lines
    assert "learning rate ×1.5 for the larger batch: the linear rule" in text
    assert "keras.layers.Dense(104)" in text


def test_xla_only_keeps_policy_and_batch():
    text = snippet(BASE.with_(jit_compile=True), BASE, [])
    assert "jit_compile=True" in text and "drop_remainder" not in text and "train_ds" not in text
    assert "set_global_policy" not in text and "LEARNING_RATE" not in text and 'dtype="float32"' not in text


def test_the_code_holds_exactly_the_measured_kept_changes():
    """Issue 22: "Changes to make" added drop_remainder=True although no partial batch was found and the
    recommended settings had it off. Every switch the recommendation turns on appears, and nothing else."""
    cases = [BASE.with_(jit_compile=True), BASE.with_(jit_compile=True, drop_remainder=True),
             BASE.with_(policy="mixed_float16", fix_head=True, batch_size=128, lr_scale=2.0)]
    for rec in cases:
        text = snippet(rec, BASE, [])
        assert ("drop_remainder=True" in text) == rec.drop_remainder, rec
        assert ("jit_compile=True" in text) == rec.jit_compile, rec
        assert ("set_global_policy" in text) == (rec.policy != BASE.policy), rec
        assert (f"batch {BASE.batch_size} → {rec.batch_size}" in text) == (rec.batch_size != BASE.batch_size), rec
        assert ("LEARNING_RATE *" in text) == (rec.lr_scale != BASE.lr_scale), rec


def test_no_change_says_so():
    text = snippet(BASE, BASE, [])
    assert "No code changes" in text
    assert "+" not in "".join(line[:1] for line in text.splitlines())


def test_steps_per_execution_goes_into_compile():
    from tfturbo.settings import RunSettings
    from tfturbo.tune.apply_snippet import snippet

    text = snippet(RunSettings("w.py", batch_size=64, steps_per_execution=4), RunSettings("w.py", batch_size=64))
    assert "+              steps_per_execution=4)" in text and "jit_compile" not in text


def test_a_training_script_is_told_its_batch_in_fit_words(tmp_path):
    """The issue 22 walk: for a script calling model.fit(x, y, batch_size=50), "Changes to make" said
    "-train_ds = train_ds.batch(50)", a dataset the script does not have."""
    script = tmp_path / "train.py"
    script.write_text("import keras\nmodel = keras.Sequential()\nmodel.fit(x, y, batch_size=50, epochs=3)\n")
    base = RunSettings(str(script), batch_size=50)
    lines = snippet(base.with_(batch_size=100, lr_scale=2.0).to_dict(), base.to_dict(), []).splitlines()
    assert "-model.fit(x, y, batch_size=50, ...)  # or, batched in tf.data: train_ds.batch(50)" in lines
    assert "+model.fit(x, y, batch_size=100, ...)  # or, batched in tf.data: train_ds.batch(100)" in lines
    assert "-train_ds = train_ds.batch(50)" not in lines


def test_a_built_in_training_script_is_told_its_batch_in_fit_words_too():
    """builtin:train-script is a script built in: the core's `is_script` reads the built-in's file (it once
    took every builtin: for a contract workload and gave it the tf.data lines)."""
    base = RunSettings("builtin:train-script", batch_size=50)
    lines = snippet(base.with_(batch_size=100), base, []).splitlines()
    assert "+model.fit(x, y, batch_size=100, ...)  # or, batched in tf.data: train_ds.batch(100)" in lines
    contract = RunSettings("builtin:mlp", batch_size=50)
    assert "+train_ds = train_ds.batch(100)" in snippet(contract.with_(batch_size=100), contract, []).splitlines()


ADAM_STRING = {"class": "Adam", "module": "keras.optimizers", "given_as": "adam", "learning_rate": 0.0010000000474974513,
               "default_learning_rate": 0.001, "schedule": None}  # what trainer_backend/optimizer_code.py records


def test_a_string_optimizer_gets_its_learning_rate_change_in_the_scripts_terms(tmp_path):
    """Issue 22 walk: the script passed optimizer="adam"; the code read
    "optimizer = keras.optimizers.Adam(learning_rate=LEARNING_RATE * 2)", a variable it does not have."""
    script = tmp_path / "цифры_数字.py"
    script.write_text("import keras\nmodel = keras.Sequential()\nmodel.fit(x, y, batch_size=50, epochs=3)\n")
    base = RunSettings(str(script), batch_size=50)
    lines = snippet(base.with_(batch_size=100, lr_scale=2.0), base, [], {"optimizer": ADAM_STRING}).splitlines()
    assert '-model.compile(optimizer="adam", ...)' in lines
    # the new rate written as the script would write it, never arithmetic on it (issue 44: "0.001 * 2")
    assert ('+model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.002), ...)  # "adam" is Adam at '
            "Keras' default learning rate 0.001; ×2") in lines
    assert "LEARNING_RATE" not in "\n".join(lines)
    with_xla = snippet(base.with_(jit_compile=True), base, [], {"optimizer": ADAM_STRING}).splitlines()
    assert ' model.compile(optimizer="adam", ...,' in with_xla and "+              jit_compile=True)" in with_xla
    assert "optimizer=optimizer" not in "\n".join(with_xla)  # the script has no variable of that name
    # an optimizer object (no name to quote): the compile() call is the user's own, whatever its variables
    # (a user script's tune read "model.compile(optimizer=optimizer, loss=loss, metrics=metrics," for
    # model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", ...))
    spe = snippet(base.with_(steps_per_execution=30), base, [], {"optimizer": {**ADAM_STRING, "given_as": None}})
    assert " model.compile(...,  # your optimizer, loss and metrics, as they are\n" \
           "+              steps_per_execution=30)" in spe and "loss=loss" not in spe
    sgd = {**ADAM_STRING, "class": "SGD", "given_as": None, "learning_rate": 0.05000000074505806}
    lines = snippet(base.with_(batch_size=100, lr_scale=2.0), base, [], {"optimizer": sgd}).splitlines()
    assert "+optimizer = keras.optimizers.SGD(learning_rate=0.1, ...)  # ×2" in lines


def test_the_code_holds_exactly_the_measured_kept_changes_in_the_optimizers_words():
    for rec in (BASE.with_(jit_compile=True), BASE.with_(batch_size=128, lr_scale=2.0),
                BASE.with_(batch_size=128, lr_scale=1.0)):
        text = snippet(rec, BASE, [], {"optimizer": ADAM_STRING})
        assert ("keras.optimizers.Adam(learning_rate=0.002)" in text) == (rec.lr_scale != BASE.lr_scale), rec
        assert ('-model.compile(optimizer="adam"' in text) == (rec.lr_scale != BASE.lr_scale), rec
