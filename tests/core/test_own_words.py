"""Issue 41: no code reads a number or a word back out of text tfturbo wrote. What a reader needs of a text is
carried beside it as data from where the text is made; each test changes the words and checks that what is
read stays the same. Files an older tfturbo wrote still read, through one declared reader each."""

from __future__ import annotations

import io
import json

from tfturbo import protocol
from tfturbo.headline import Headline, reason_beside
from tfturbo.settings import RunSettings
from tfturbo.trials.verdict import (FASTER, INCONCLUSIVE, NO_CHANGE, NOT_CHECKED, WITHIN, AccuracyVerdict,
                                    ReasonPart, Says, SpeedVerdict, TrialVerdict, failure_line, keep)
from tfturbo.tune.study import Rung
from trainer_backend.commands import emit_error


def _decision(speed: SpeedVerdict, accuracy: AccuracyVerdict) -> TrialVerdict:
    kept, said, found = keep(speed, accuracy, "completed", [], "B", "the baseline")
    return TrialVerdict(speed, accuracy, kept, [ReasonPart(Says.NOTE, "XLA on the best so far"), *said], found)


def test_a_reasons_parts_say_what_they_are_whatever_their_words(monkeypatch):
    """The report put the headline's word in place of the reason's ratio, found by a regex, and the wizard's card
    cut the reason at "; " and dropped the parts that held the speed's or the accuracy's words: new words (here
    with a "; " inside) broke both. The keep rule records what each part says."""
    speed = SpeedVerdict(1.24, (1.13, 1.36), FASTER, 3)
    accuracy = AccuracyVerdict("val_accuracy", 0.001, (-0.004, 0.006), WITHIN, 300)
    before = _decision(speed, accuracy)
    monkeypatch.setattr(SpeedVerdict, "text", lambda self: "sped up; see each pair")
    monkeypatch.setattr(AccuracyVerdict, "text", lambda self: "no worse")
    reworded = _decision(speed, accuracy)
    assert [p.says for p in reworded.said] == [p.says for p in before.said] == [Says.NOTE, Says.RATIO, Says.ACCURACY]
    again = TrialVerdict.from_dict(json.loads(json.dumps(reworded.to_dict())))  # as study.yaml and ab --json keep it
    assert again.said == reworded.said and again.reason == reworded.reason
    rung = Rung("03-xla", "xla", RunSettings("builtin:mlp"), decision=again)
    own = Headline(speed.ratio, speed.ci95, speed.verdict, speed.replicates, "03-xla", "01-baseline", True)
    assert reason_beside(rung, own) == "XLA on the best so far; faster; no worse, within tolerance"
    assert again.parts(Says.NOTE, Says.OTHER) == ["XLA on the best so far"]  # what the card shows beside its facts


def test_a_reason_an_older_tfturbo_wrote_is_read_in_parts_by_its_one_reader():
    """study.yaml before issue 41 kept the reason as one line (later with its ratio part, `speed_said`): read
    through `TrialVerdict.from_dict`, its parts say what they said then."""
    speed = SpeedVerdict(0.97, (0.93, 1.01), NO_CHANGE, 3, ratios=[0.96, 0.97, 0.98])
    accuracy = AccuracyVerdict("val_accuracy", 0.0004, (-0.0076, 0.0084), INCONCLUSIVE, 400,
                               explanation="inconclusive: 400 examples, interval [-0.76 pp, +0.84 pp]",
                               opens_with=INCONCLUSIVE)
    decision = _decision(speed, accuracy)
    doc = {k: v for k, v in decision.to_dict().items() if k != "reason_parts"}
    ratio = decision.parts(Says.RATIO)[0]
    assert "; size uncertain" in ratio  # a "; " inside the ratio part
    for older in (doc, {**doc, "speed_said": ratio}):
        read = TrialVerdict.from_dict(older)
        assert read.reason == decision.reason
        assert read.parts(Says.NOTE, Says.OTHER) == ["XLA on the best so far"]  # a note or not: no file said
        assert read.parts(Says.RATIO) == [ratio] and read.parts(Says.ACCURACY) == decision.parts(Says.ACCURACY)


def test_an_accuracy_explanation_records_what_it_opens_with():
    """"inconclusive: 300 examples, …" is said as it is and "val_accuracy +0.40 pp […]" gets " — within
    tolerance": decided by `opens_with`, set where the explanation is made, not by looking at its first word."""
    reworded = AccuracyVerdict("val_accuracy", -0.0045, (-0.0172, 0.0083), INCONCLUSIVE, 300,
                               explanation="undecided: 300 examples", opens_with=INCONCLUSIVE)
    assert reworded.says_verdict
    plain = AccuracyVerdict("val_accuracy", -0.0045, (-0.0172, 0.0083), INCONCLUSIVE, 300,
                            explanation="inconclusive-looking words that open with no verdict")
    assert not plain.says_verdict
    both = AccuracyVerdict.from_dict(plain.to_dict())
    both.outputs = [reworded, plain]
    assert both.output_lines() == ["undecided: 300 examples",
                                   "inconclusive-looking words that open with no verdict — inconclusive"]
    again = AccuracyVerdict.from_dict(json.loads(json.dumps(reworded.to_dict())))
    assert again.opens_with == INCONCLUSIVE and again.says_verdict
    # an older file has no `opens_with`: its one reader (`AccuracyVerdict.from_dict`) reads the words it has
    older = {k: v for k, v in AccuracyVerdict(None, None, None, INCONCLUSIVE, explanation=f"{NOT_CHECKED}: the runs "
                                              "have no validation data", opens_with=NOT_CHECKED).to_dict().items()
             if k != "opens_with"}
    assert AccuracyVerdict.from_dict(older).opens_with == NOT_CHECKED


def test_a_fix_that_only_points_at_a_log_says_so_as_data():
    """A backend error whose fix only points at its log is shown as a log to read ("(see …)"), never as
    "— fix: …": the backend says so (`log_only`), whatever the fix's words."""
    out = io.StringIO()
    emit_error(protocol.EventWriter(sinks=[out]), RuntimeError("boom"))
    event = protocol.parse_line(out.getvalue().splitlines()[0])
    assert event is not None and event.get("log_only") is True
    reworded = protocol.error_of({**event, "fix": "the details are in the run's log"})
    assert failure_line("failed", reworded) == "failed: RuntimeError: boom (the details are in the run's log)"
    assert failure_line("failed", protocol.error_of({"message": "x", "fix": "see the traceback in the log, and "
                                                     "set fix_head=on", "log_only": False})).endswith(
        "— fix: see the traceback in the log, and set fix_head=on")
    # an older backend's error: no `log_only`, and its message may end with its fix; one reader reads its words
    older = protocol.error_of({"kind": protocol.BAD_INPUT, "message": "s.py: raised X — see the traceback in b.log",
                               "fix": "see the traceback in b.log"})
    assert older is not None and older.get("log_only") is True and older.get("message") == "s.py: raised X"


def test_what_keeps_xla_off_is_named_by_the_finding_not_found_in_its_words():
    """The lever said what would enable XLA by looking for "cuDNN" or "supports_jit" in the causes the backend
    wrote: XLA_NOT_ACTIVE names what blocks it (`blockers`), whatever words its causes use."""
    from tfturbo.findings import CUDNN, XLA_NOT_ACTIVE
    from tfturbo.run_summary import RunSummary
    from tfturbo.tune.levers.xla import LEVER as XLA

    def refused(data):
        return RunSummary(settings=RunSettings("builtin:mlp", jit_compile=True), xla_active=False,
                          findings=[{"code": XLA_NOT_ACTIVE, "message": "", "data": data}])
    reworded = XLA.not_in_effect(refused({"causes": ["the recurrent layer runs on the vendor's kernels"],
                                          "blockers": [CUDNN]}))
    assert reworded is not None and "what would enable it: use_cudnn=False on the LSTM/GRU layers" in reworded
    older = XLA.not_in_effect(refused({"causes": ["layer 'lstm' (LSTM) uses cuDNN (use_cudnn='auto' with a GPU "
                                                  "listed), whose kernels XLA cannot compile"]}))  # no `blockers`
    assert older is not None and "what would enable it: use_cudnn=False on the LSTM/GRU layers" in older


def test_a_reason_edited_by_hand_in_study_yaml_is_what_is_read():
    """study.yaml keeps a reason's words (`reason`) and its parts (`reason_parts`, `skip`): a person who edits the
    words sees them in the report; the parts count only while they still say them."""
    from tfturbo.tune.skip import SKIPPED, Skip

    decision = _decision(SpeedVerdict(1.24, (1.13, 1.36), FASTER, 3),
                         AccuracyVerdict("val_accuracy", 0.001, (-0.004, 0.006), WITHIN, 300))
    edited = TrialVerdict.from_dict({**decision.to_dict(), "reason": "kept after a talk with the client"})
    assert edited.reason == "kept after a talk with the client"
    skip = Skip(SKIPPED, "already 4 steps per call")
    assert Skip.read(skip.to_dict(), str(skip)) == skip
    assert str(Skip.read(skip.to_dict(), "not needed here")) == "not needed here"
