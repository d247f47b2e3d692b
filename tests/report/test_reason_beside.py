"""The report's Decision column says a rung's speed once per configuration: where the headline beside it is the
rung's own trial, the reason's measured ratio gives way to the verdict's word (`headline.reason_beside`). The
part it replaces is the one the keep rule recorded as saying the ratio (`Says.RATIO` in `TrialVerdict.said`),
never looked for in the words."""

from __future__ import annotations

from tfturbo.headline import Headline, reason_beside
from tfturbo.settings import RunSettings
from tfturbo.trials.verdict import NO_CHANGE, AccuracyVerdict, ReasonPart, Says, SpeedVerdict, TrialVerdict, keep
from tfturbo.tune.study import Rung

ACCURACY = AccuracyVerdict("val_accuracy", 0.001, (-0.004, 0.006), "within tolerance", 3)


def rung_with(speed: SpeedVerdict) -> Rung:
    kept, said, found = keep(speed, ACCURACY, "completed", [], "B", "the baseline")
    decision = TrialVerdict(speed, ACCURACY, kept, [ReasonPart(Says.NOTE, "XLA on the best so far"), *said], found)
    return Rung("03-xla", "xla", RunSettings("builtin:mlp"), decision=decision)


def own_headline(speed: SpeedVerdict) -> Headline:
    return Headline(speed.ratio, speed.ci95, speed.verdict, speed.replicates, "03-xla", "01-baseline", True)


def test_a_speed_part_with_a_semicolon_inside_gives_way_to_the_word():
    """"slower in 3 of 3 pairs; size uncertain" put a "; " inside the speed part: read back by splitting the
    reason at "; ", it was no longer found, and the Decision column repeated the trial's own ratio beside the
    headline's."""
    speed = SpeedVerdict(0.97, (0.93, 1.01), NO_CHANGE, 3, ratios=[0.96, 0.97, 0.98])
    rung = rung_with(speed)
    assert "(slower in 3 of 3 pairs; size uncertain)" in rung.decision.reason
    assert reason_beside(rung, own_headline(speed)) == "XLA on the best so far; not measurably faster"


def test_the_recorded_speed_part_survives_study_yaml_and_an_older_study_is_still_read():
    speed = SpeedVerdict(1.24, (1.13, 1.36), "faster", 3, ratios=[1.2, 1.24, 1.3])
    rung = rung_with(speed)
    again = TrialVerdict.from_dict(rung.decision.to_dict())
    assert again.parts(Says.RATIO) == ["faster: 1.24× [1.13, 1.36] over 3 replicate pairs vs the baseline"]
    assert again.said == rung.decision.said
    doc = {k: v for k, v in rung.decision.to_dict().items() if k != "reason_parts"}
    interim = Rung("03-xla", "xla", rung.settings, decision=TrialVerdict.from_dict(  # it recorded the ratio part
        {**doc, "speed_said": again.parts(Says.RATIO)[0]}))
    older = Rung("03-xla", "xla", rung.settings, decision=TrialVerdict.from_dict(doc))  # its words are all it has
    expected = "XLA on the best so far; faster; " + ACCURACY.text() + ", within tolerance"
    for one in (rung, interim, older):
        assert reason_beside(one, own_headline(speed)) == expected
        assert one.decision.reason == rung.decision.reason
