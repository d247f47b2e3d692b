"""How long the rest of a study will take: the stages not begun yet, each with an estimate from its runs so far.

The wizard shows it beside a running trial ("Still to come: XLA compilation
about 1 min 10 s – 2 min 20 s · …"), `tfturbo tune` could print it too: both
read it from the study engine, so the estimate is the engine's, not a page's.

Each stage left is its lever's candidates now (a skipped one costs nothing; a
search such as the batch size may ask for more once a verdict is in, so its
upper bound is a floor) times the trial rule's pairs, min to max, each pair
two runs at the median wall time of the runs measured so far (process start,
warm-up and validation included). Before any trial ran, the baseline's own
run time stands in. The confirmation counts one trial: it runs whenever a
change is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..numbers import duration_text


@dataclass(frozen=True)
class StageEstimate:
    """One stage still to come: its title and seconds (at least, at most)."""

    title: str
    low_s: float
    high_s: float

    def text(self) -> str:
        if self.high_s > self.low_s * 1.1 + 5:
            return f"{self.title} about {duration_text(self.low_s)} – {duration_text(self.high_s)}"
        return f"{self.title} about {duration_text(self.low_s)}"


def run_seconds(engine) -> float | None:
    """The median wall time of one run of this study so far (None: nothing measured yet)."""
    times = sorted(r.elapsed_s for t in engine.trials.values() for r in t.runs if r.elapsed_s)
    if times:
        return times[len(times) // 2]
    base = engine.baseline
    wall = (base.summary or {}).get("wall_s") if base is not None else None
    return float(wall) if isinstance(wall, (int, float)) and wall > 0 else None


def remaining(engine) -> list[StageEstimate]:
    """The stages of `engine`'s study not begun yet, in order, each with its estimate (empty: none, or nothing
    measured to estimate from)."""
    per_run = run_seconds(engine)
    if per_run is None or engine.policy is None or engine.best is None:
        return []
    rule = engine.opts.speed_rule()
    out = []
    for lever in engine.stages_left():
        trials = 1 if lever.confirms else sum(1 for c in lever.candidates(engine.policy) if c.skipped_reason is None)
        if trials:
            out.append(StageEstimate(lever.title, trials * 2 * rule.min_pairs * per_run,
                                     trials * 2 * rule.max_pairs * per_run))
    return out


def remaining_text(engine) -> str:
    """"Still to come: XLA compilation about 40 s – 1 min 20 s · Re-measure & compare about 40 s" ("": none)."""
    stages = remaining(engine)
    return ("Still to come: " + " · ".join(s.text() for s in stages)) if stages else ""
