"""The patch of one file: each change placed in turn (`place`), what could not be placed kept with why.

Changes are placed one after the other, each on the text the previous ones
left, so two changes to one call (jit_compile and steps_per_execution on
compile()) both land. A change that sets what the script already says leaves
the text as it was and is listed as already there.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from . import changes as C
from .diff import unified_diff
from .place import NotPlaced, Target, place
from .source import Script


@dataclass(frozen=True)
class Unplaced:
    """A change left to the user: its line, why it was not placed, the code to write."""

    why: str
    reason: str
    snippet: str

    def to_dict(self) -> dict[str, str]:
        return {"change": self.why, "reason": self.reason, "code": self.snippet}


@dataclass
class Patch:
    """The recommended changes made to one file (`path`), and those left to the user."""

    path: str  # the file it changes ("" when there is none to read)
    original: str = ""
    patched: str = ""
    placed: list[str] = field(default_factory=list)  # the changes made, in order
    already: list[str] = field(default_factory=list)  # changes the file already says
    unplaced: list[Unplaced] = field(default_factory=list)

    @property
    def name(self) -> str:
        return Path(self.path).name if self.path else ""

    def diff(self) -> str:
        return unified_diff(self.original, self.patched, self.name) if self.path else ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.original.encode("utf-8")).hexdigest()


def make_patch(path: str | Path | None, changes: list[C.Change], target: Target = Target(),
               unreadable: str = "") -> Patch:
    """The patch of the file at `path` for `changes`; with no file (`unreadable` says why, or a path that cannot
    be read or parsed), every change is left to the user with its code."""
    text, problem = None, unreadable
    if path is not None and not problem:
        try:
            read = Path(path).read_text(encoding="utf-8")
            cst.parse_module(read)
            text = read
        except OSError as e:
            problem = f"{Path(path).name} could not be read ({e.strerror or e})"
        except (UnicodeDecodeError, cst.ParserSyntaxError) as e:
            problem = f"{Path(path).name} could not be parsed ({type(e).__name__})"
    if text is None:
        return Patch("", unplaced=[Unplaced(c.why, problem or "there is no file to change", c.by_hand())
                                   for c in changes if c.differs])
    patch = Patch(str(path), text, text)
    script = None  # the source read once per text: a change that leaves it as it was re-uses it
    # compile() arguments go on the end of the call last, after what replaces an argument in it (the optimizer),
    # so the call's last line is measured as it finally reads when a new argument needs a line of its own
    ordered = [c for c in changes if not isinstance(c, C.CompileArgument)] + \
        [c for c in changes if isinstance(c, C.CompileArgument)]
    outcome: dict[int, str | NotPlaced] = {}
    for change in ordered:
        try:
            script = script if script is not None and script.text == patch.patched else \
                Script(patch.patched, target.fit_line)
            result = place(script, change, target)
        except Exception as e:  # noqa: BLE001 - one change the reader cannot follow never costs the others
            result = NotPlaced(f"tfturbo could not read the script there ({type(e).__name__}: {e})")
        outcome[id(change)] = result if isinstance(result, NotPlaced) else \
            "already" if result == patch.patched else "placed"
        if not isinstance(result, NotPlaced):
            patch.patched = result
    for change in changes:  # listed in the levers' order
        result = outcome[id(change)]
        if result == "placed":
            patch.placed.append(change.why)
        elif change.differs and isinstance(result, NotPlaced):
            patch.unplaced.append(Unplaced(change.why, result.why, change.by_hand()))
        elif change.differs:
            patch.already.append(change.why)
    return patch
