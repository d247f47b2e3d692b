"""The ladder on recorded runs: a 16-bit rung whose first step fails on a metric that refuses 16-bit outputs is a
failed rung (no speed or accuracy verdict), and is measured once more with the float32 head its error names."""

from __future__ import annotations

from tests.tune.tune_fakes import FakeBackend, summary  # the tune tests' recorded summaries and fake backend


def test_a_failed_16bit_rung_is_measured_again_with_the_fix_its_error_names(tmp_path):
    from tfturbo.tune.ladder import Ladder, TuneOptions
    from tfturbo.tune.render import render_table

    refused = {"code": "HEAD_NOT_FLOAT32", "severity": "error", "where": "output layer",
               "message": "the run failed because the InTopKV2 op (a top-k metric) cannot take the model's 16-bit "
                          "outputs under mixed_bfloat16", "fix": "fix_head=on", "data": {"from": "training error"}}

    def measured(s):
        if s.policy == "mixed_bfloat16" and not s.fix_head:
            doc = summary(100.0, None, status="failed", policy=s.policy, findings=[refused])
            return {**doc, "error": {"kind": "training", "message": "TypeError: Input 'predictions' of 'InTopKV2' "
                                     "Op has type bfloat16 that does not match expected type of float32.",
                                     "fix": "compute the output layer in float32: --fix-head (ab/tune settings: "
                                            "fix_head=on)"}}
        return summary(80.0 if s.policy == "mixed_bfloat16" else 100.0, 0.9, policy=s.policy,
                             memory_kind="host", peak_mb=800)

    backend = FakeBackend(measured, recommended="mixed_bfloat16")
    doc = Ladder(TuneOptions("builtin:fake", tmp_path / "tune", steps=100), runner=backend).run().document()
    rungs = {e["name"].split("-", 1)[1]: e for e in doc["ladder"]}
    failed, fixed = rungs["mixed_bfloat16"], rungs["mixed_bfloat16-fixed"]
    assert failed["speed"]["verdict"] == "failed" and failed["accuracy"]["verdict"] == "not measured"
    assert failed["reason"].endswith("failed: TypeError: Input 'predictions' of 'InTopKV2' Op has type bfloat16 "
                                     "that does not match expected type of float32. — fix: compute the output layer "
                                     "in float32: --fix-head (ab/tune settings: fix_head=on)")
    assert fixed["settings"]["fix_head"] and fixed["kept"] and fixed["speed"]["verdict"] == "faster"
    table = render_table(doc["ladder"])
    decisions = [line.split()[-1] for line in table.splitlines()[2:2 + len(doc["ladder"])]]
    assert decisions[[e["name"] for e in doc["ladder"]].index(failed["name"])] == "failed"


def test_ab_text_reads_like_tune_without_python_dicts():
    from tfturbo.commands.ab import render
    from tfturbo.settings import RunSettings
    from tfturbo.trials.spec import describe
    from tfturbo.trials.verdict import AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict

    a = RunSettings("w", batch_size=32)
    verdict = TrialVerdict(SpeedVerdict(1.31, (1.2, 1.4), "faster", 3),
                           AccuracyVerdict("val_accuracy", -0.001, (-0.004, 0.002), "within tolerance", 512), True,
                           [ReasonPart(Says.RATIO, "faster: 1.31× [1.20, 1.40] over 3 replicate pair(s) vs A"),
                            ReasonPart(Says.ACCURACY, "val_accuracy -0.10 pp, within tolerance")],
                           design="3 replicate pair(s).")
    text = render({"a": describe(a), "b": describe(a.with_(policy="mixed_bfloat16")), **verdict.to_dict()})
    lines = text.splitlines()
    assert lines[0].startswith("A  policy=float32  jit=off  batch=32  seed=1234  fix_head=off")
    assert lines[1].startswith("B  policy=mixed_bfloat16")
    assert "speed     B/A 1.31× [1.20, 1.40] over 3 replicate pairs — faster" in lines
    assert "{" not in text and "'" not in text


def test_the_recommendations_code_is_the_audits_code_for_this_model():
    """A change the patch cannot place (here: no file) is left to the user with the audit's own code for this
    model, never a generic layer."""
    from tfturbo.patch.document import ChangesPatch
    from tfturbo.settings import RunSettings
    from tfturbo.tune.code_changes import recommended_patch

    head = {"code": "HEAD_NOT_FLOAT32", "where": "sequential/dense_1", "message": "...",
            "fix": 'keras.layers.Dense(10, dtype="float32"),  # in the keras.Sequential([...]) list'}
    ids = {"code": "INTEGER_INPUT_16BIT", "where": "token_and_position_embedding", "message": "...",
           "fix": 'inputs = keras.Input(shape=(9,), dtype="int32")  # where the script builds the model'}
    base = RunSettings("train.py")
    rec = base.with_(policy="mixed_bfloat16", fix_head=True, fix_int_inputs=True)
    text = ChangesPatch(rec.label(), recommended_patch("train.py", rec, base, [head, ids])).text()
    assert '#       keras.layers.Dense(10, dtype="float32"),  # in the keras.Sequential([...]) list' in text
    assert 'outputs = keras.layers.Dense(num_classes' not in text  # not the generic Functional code
    assert '#       inputs = keras.Input(shape=(9,), dtype="int32")' in text
