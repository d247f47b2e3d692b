"""Issue 22: the way forward of an inconclusive accuracy verdict can be taken, on the command line (`tfturbo tune
--judge-on loss`, `--accuracy-tolerance`) and by the study engine from the runs already measured (the wizard's
buttons), and the study and the report say which rule judged."""

from __future__ import annotations

import yaml

from tfturbo.run_summary import RunSummary
from tfturbo.cli import build_parser
from tfturbo.cli_args import parse_args
from tfturbo.commands.tune import options_from_args
from tfturbo.report.model import gather
from tfturbo.trials.verdict import INCONCLUSIVE, WITHIN
from tfturbo.trials.way_forward import for_rung, rule_for
from tfturbo.tune.ladder import Ladder
from tfturbo.tune.study import Study

# the 16-bit policy is faster; 400 validation examples whose correctness flips at random: accuracy undecidable
SMALL_VALIDATION = {"examples": 400, "noise": 0.05}


def faster_16bit(make_summary):
    def run(s):
        return make_summary(100.0 if s.policy == "float32" else 70.0, 0.90, policy=s.policy, seed=len(s.policy))
    return run


def tune(tmp_path, make_summary, fake_backend, *options: str):
    args = parse_args(build_parser(), ["tune", "builtin:fake", "--out", str(tmp_path / "s"), "--steps", "100",
                                       "--stages", "mixed_precision", "--no-report", *options])
    backend = fake_backend(faster_16bit(make_summary), paired=SMALL_VALIDATION)
    return Ladder(options_from_args(args), runner=backend).run()


def test_judge_on_loss_decides_what_the_accuracy_could_not_and_the_report_names_the_rule(
        tmp_path, make_summary, fake_backend):
    default = tune(tmp_path / "default", make_summary, fake_backend)
    mp = default.rungs[1]
    assert mp.decision.speed.verdict == "faster" and mp.decision.accuracy.verdict == INCONCLUSIVE
    assert not mp.kept and "accuracy judged on" not in mp.decision.reason

    study = tune(tmp_path / "loss", make_summary, fake_backend, "--judge-on", "loss")
    mp = study.rungs[1]
    assert mp.decision.accuracy.metric == "val_loss" and mp.decision.accuracy.verdict == WITHIN
    assert mp.kept and "accuracy judged on the validation loss" in mp.decision.reason
    recorded = yaml.safe_load((study.path / "study.yaml").read_text())
    assert recorded["options"]["tolerance"]["judge_on"] == "loss"
    assert recorded["ladder"][1]["rule"]["judge_on"] == "loss"
    data = gather(study.path)
    assert data.accuracy_rules == [("02-mixed_float16", mp.decision.rule_text())]
    assert "the validation loss" in data.accuracy_rules[0][1] and "options" in data.accuracy_rules[0][1]
    assert any("--judge-on loss" in command for _, command in data.commands)
    from tests.report.report_fixtures import pdf_text
    from tfturbo.report import write_report

    text = " ".join(pdf_text(write_report(study.path)).split())
    # each named by what it is, not its run folder (issue 42)
    assert "How accuracy was judged" in text and "mixed_float16: accuracy judged on the validation loss" in text
    assert "mixed_float16 was judged on the validation loss instead" in text  # the table's unit, said
    assert "02-mixed_float16:" not in text and "02-mixed_float16 was" not in text


def test_a_tolerance_on_the_command_line_changes_the_verdict(tmp_path, make_summary, fake_backend):
    study = tune(tmp_path, make_summary, fake_backend, "--accuracy-tolerance", "10")
    mp = study.rungs[1]
    assert mp.decision.accuracy.verdict == WITHIN and mp.kept
    assert "tolerance 10 pp" in mp.decision.rule_text()


def test_the_engine_judges_the_last_rung_again_from_its_runs_and_the_study_records_the_choice(
        tmp_path, make_summary, fake_backend):
    args = parse_args(build_parser(), ["tune", "builtin:fake", "--out", str(tmp_path / "s"), "--steps", "100",
                                       "--stages", "mixed_precision"])
    backend = fake_backend(faster_16bit(make_summary), paired=SMALL_VALIDATION)
    ladder = Ladder(options_from_args(args), runner=backend)
    study = ladder.run()
    engine, options = ladder.engine, ladder.opts
    mp = engine.study.rungs[1]
    way = for_rung(study.path, mp, options.tolerance, engine.study.baseline)
    assert way is not None and way.recommended == "loss"
    runs_before = len(backend.runs)
    verdict = engine.rejudge(mp.name, rule_for("loss", way, options.tolerance), "loss")
    assert verdict.kept and verdict.accuracy.verdict == WITHIN and engine.best is mp
    assert len(backend.runs) == runs_before  # no new run
    assert "the way forward chosen" in verdict.reason
    entry = yaml.safe_load((study.path / "study.yaml").read_text())["ladder"][1]
    assert entry["way_forward"] == "loss" and entry["rule"]["judge_on"] == "loss" and entry["kept"]

    verdict = engine.rejudge(mp.name, rule_for("tolerance", way, options.tolerance), "tolerance")
    assert verdict.accuracy.metric == "val_accuracy" and verdict.accuracy.verdict == WITHIN and verdict.kept
    reopened = Study.load(study.path).rungs[1]
    assert reopened.decision.way_forward == "tolerance"
    assert reopened.decision.rule.accuracy_pp == way.tolerance_pp
    # issue 39: the tolerance the user set is the study's (the confirmation's trial is made with it), recorded
    recorded = yaml.safe_load((study.path / "study.yaml").read_text())["options"]["tolerance"]
    assert ladder.opts.tolerance.accuracy_pp == way.tolerance_pp and recorded["accuracy_pp"] == way.tolerance_pp
    assert recorded["judge_on"] == "metric"
    # judging on the loss can be undone: the validation metric again
    engine.rejudge(mp.name, rule_for("loss", way, ladder.opts.tolerance), "loss")
    verdict = engine.rejudge(mp.name, rule_for("metric", way, ladder.opts.tolerance), "metric")
    assert verdict.accuracy.metric == "val_accuracy" and ladder.opts.tolerance.judge_on == "metric"


def test_more_validation_examples_measure_the_trial_again_paired_on_them(tmp_path):
    """The third way: the rung's trial again on N examples. The baseline's one run validated on fewer, so a
    trial against the baseline's configuration pairs its own reference runs on the N examples; against a later
    configuration it cannot (the baseline run stays the reference, and the wizard does not offer it)."""
    from tfturbo.settings import RunSettings
    from tfturbo.trials.way_forward import WayForward, can_use_more_examples
    from tfturbo.tune.engine import TuneOptions, against_baseline, make_trial
    from tfturbo.tune.study import Rung

    base_settings = RunSettings("builtin:fake", val_examples=400)
    baseline = Rung("01-baseline", "baseline", base_settings, "runs/01-baseline", summary=RunSummary(status="completed"))
    options = TuneOptions("builtin:fake", tmp_path)
    candidate = base_settings.with_(policy="mixed_float16", val_examples=2400)
    trial = make_trial(candidate, baseline, "03-mixed_float16", baseline, tmp_path, options)
    assert trial.a.val_examples == trial.b.val_examples == 2400 and trial.a.policy == "float32"
    assert trial.accuracy_reference is None and trial.way_forward == "examples"
    later = Rung("02-xla", "xla", base_settings.with_(jit_compile=True), "runs/02-xla")
    trial = make_trial(candidate.with_(jit_compile=True), later, "04-mixed_float16-xla", baseline, tmp_path, options)
    assert trial.accuracy_reference is not None  # judged against the baseline's run, as every rung
    same = make_trial(candidate.with_(val_examples=400), baseline, "05-x", baseline, tmp_path, options)
    assert same.way_forward == "" and same.accuracy_reference is not None
    # one rule for "measured against the baseline" (engine.against_baseline; the wizard's offer asks it too):
    # the baseline's configuration under another name, measured otherwise, is the baseline's configuration
    again = Rung("02-baseline-again", "xla", base_settings.with_(profile=(5, 10)), "runs/02-baseline-again")
    assert against_baseline(again.settings, baseline.settings)
    assert not against_baseline(later.settings, baseline.settings)
    trial = make_trial(candidate, again, "06-mixed_float16", baseline, tmp_path, options)
    assert trial.accuracy_reference is None  # its own reference runs, on the 2400 examples

    way = WayForward(None, 2.3, 2400, None, "examples")
    assert can_use_more_examples(way, measured_against_baseline=True)
    assert not can_use_more_examples(way, measured_against_baseline=False)
    assert not can_use_more_examples(WayForward(None, 2.3, 2400, 400, "tolerance"), True)  # the data holds 400


def test_tunes_text_output_offers_the_way_forward_of_a_faster_rung_whose_accuracy_was_inconclusive(
        tmp_path, make_summary, fake_backend):
    """A user script's tune ended "08-batch64 … 1.61× [1.42, 1.83] … accuracy inconclusive" and offered nothing;
    the wizard's page and the report name the ways that would decide it."""
    from tfturbo.commands.tune import ways_forward_text

    study = tune(tmp_path, make_summary, fake_backend)
    text = ways_forward_text(study)
    forward = for_rung(study.path, study.rungs[1], study.rungs[1].decision.rule, study.baseline)
    assert text.startswith("\n\n02-mixed_float16 was faster (") and "but its accuracy was inconclusive." in text
    assert all(f"  {line}" in text for line in forward.lines()) and "  Recommended: " in text
    assert "--judge-on loss, --accuracy-tolerance PP or --val-examples N" in text
    kept = tune(tmp_path / "loss", make_summary, fake_backend, "--judge-on", "loss")
    assert ways_forward_text(kept) == ""  # decided: nothing to offer
