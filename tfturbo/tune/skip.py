"""Why a step of the checklist is not run, as data: how it is said and why, kept apart.

A lever that has nothing to measure says so in one line ("skipped: already 4
steps per call"); the report's "Steps not run" and the wizard's pages give the
why after words of their own. Both parts travel from the lever that makes them
to study.yaml (a ladder entry's `skip`), so no reader cuts the line apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

# how a step not run is said: nothing to measure, cannot take effect (its why says what would enable it), or the
# end of a search (the batch size)
SKIPPED, NOT_RUN, SEARCH_ENDED = "skipped", "not run", "search ended"
_WORDS = (SKIPPED, NOT_RUN, SEARCH_ENDED)


class SkipDoc(TypedDict):
    word: str
    why: str


@dataclass(frozen=True)
class Skip:
    word: str  # SKIPPED, NOT_RUN, SEARCH_ENDED ("": a reason read from a file that said none)
    why: str

    def __str__(self) -> str:
        """The line every front end prints: "skipped: already 4 steps per call"."""
        return f"{self.word}: {self.why}" if self.word else self.why

    def to_dict(self) -> SkipDoc:
        return {"word": self.word, "why": self.why}

    @classmethod
    def read(cls, doc: object, reason: str) -> Skip:
        """A ladder entry's skip: its `skip` record while it says `reason`, else (a study written before issue 41
        recorded it, or a reason edited by hand) the reason's own words, the one place they are cut apart."""
        if isinstance(doc, dict) and isinstance(doc.get("why"), str):
            recorded = cls(str(doc.get("word") or ""), doc["why"])
            if str(recorded) == reason:
                return recorded
        word, sep, why = reason.partition(": ")
        return cls(word, why) if sep and word in _WORDS else cls("", reason)
