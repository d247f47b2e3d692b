"""Confirmation: the recommendation measured against the baseline itself, side by side.

Every rung before was measured against the best configuration kept before
it; this last trial measures the final recommendation (the larger batch
included) against the baseline, unless it already was. A confirmation that
is not kept withdraws the recommendation (StudyDecisions.conclude).
"""

from __future__ import annotations

from . import Candidate, Lever


class Confirmation(Lever):
    name = kind = "confirmation"
    order = 100
    title = "Re-measure & compare"
    page = "compare"
    intro = ("Measure the recommended configuration against the baseline, side by side: replicated runs of both, "
             "alternating, on the same seed and data order. It is kept only if the speed-up's 95% interval is "
             "above 1 and its accuracy is shown to be within tolerance on the same validation examples.")
    confirms = True  # measured against the baseline; a verdict that is not kept withdraws the recommendation

    def candidates(self, decisions) -> list[Candidate]:
        best = decisions.best
        if best is decisions.baseline or best.compared_with in (None, decisions.baseline.name):
            return []  # already measured against the baseline itself
        return [self.confirming(decisions)]

    def confirming(self, decisions) -> Candidate:
        """The recommendation against the baseline (also when the user asks to confirm it again)."""
        best = decisions.best
        return Candidate(self.rung_kind, self.name, best.settings,
                         f"the recommended configuration ({best.settings.label()}) against the baseline, "
                         "side by side", decisions.baseline)

    def candidate_for(self, decisions, settings) -> Candidate:
        """The recommendation, on as many validation examples as asked (the way forward "more examples")."""
        candidate = self.confirming(decisions)
        if settings.val_examples != candidate.settings.val_examples:
            candidate.settings = candidate.settings.with_(val_examples=settings.val_examples)
        return candidate


LEVER = Confirmation()
