"""A command-line option named in a fix or a way forward, said as what it does, for a reader who has no command line.

The backend's fixes and the verdicts' ways forward name tfturbo's options the way a terminal user passes them
("# or let tfturbo do it (any model): tfturbo run ... --fix-head (ab/tune settings: fix_head=on)",
"--val-examples 2883"). The client PDF said them that way (issue 42 walk: `--drop-remainder`, `--fix-head` as its
fixes). `in_words` says each as what it does — an automatic fix by its name and the app's box that applies it
(both from its `Setting` declaration: `shown_as`, `offer`), a study option by what it sets — and keeps the flag
only after it, labelled, as a secondary detail. The wizard says the same options as its own controls
(`tfturbo_gui.labels.in_gui_words`).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .settings import declared

_RULES: list[tuple[re.Pattern[str], Any]] = []
_NOT_SAID = r"(?<!command line )"  # a flag already said as its words' detail stays as it is


def _fix_words(shown_as: str, offer: str, flag: str) -> str:
    box = offer.split(": ", 1)[-1]
    return f"tfturbo's automatic fix “{shown_as}” (in the app, the “{box}” box of its finding; command line {flag})"


def _rules() -> list[tuple[re.Pattern[str], Any]]:
    out: list[tuple[str, str | Callable[[re.Match[str]], str]]] = []
    for _field, s in declared():
        if s.offer and s.flag and s.shown_as:  # "tfturbo run ... --fix-head (ab/tune settings: fix_head=on)"
            out.append((r"(?:tfturbo run \.\.\. )?" + _NOT_SAID + re.escape(s.flag) + r"(?:\s*\([^()]*=on\))?",
                        _fix_words(s.shown_as, s.offer, s.flag)))
    out += [
        (r"rerun with ", "run again with "),
        (r"\(--lr-scale\)", "(a smaller learning-rate scale; command line --lr-scale)"),
        (_NOT_SAID + r"--lr-scale\s+([0-9.]+)", r"the learning rate scaled by \1 (command line --lr-scale \1)"),
        (_NOT_SAID + r"--val-examples\s+([0-9,]+)", lambda m: f"validate on {int(m.group(1).replace(',', '')):,} examples "
                                                  f"(command line --val-examples {m.group(1)})"),
        (r"([0-9.]+) pp, --accuracy-tolerance\s+\1(?![0-9.])", r"\1 pp; command line --accuracy-tolerance \1"),
        (_NOT_SAID + r"--accuracy-tolerance\s+([0-9.]+)", r"an accuracy tolerance of \1 pp (command line --accuracy-tolerance \1)"),
        (_NOT_SAID + r"--judge-on\s+loss", "judging on the validation loss (command line --judge-on loss)"),
        (r"\(--judge-on, --accuracy-tolerance\)", "(on the validation loss, or with a larger accuracy tolerance)"),
        (r"\(tfturbo ab --b seed=N, or a study's reference trained again\)",
         "(each configuration trained again from other seeds)"),
    ]
    return [(re.compile(pattern), words) for pattern, words in out]


def in_words(text: str) -> str:
    """`text` with each tfturbo option it names said as what it does, the flag after it as a labelled detail."""
    if not _RULES:
        _RULES.extend(_rules())
    for pattern, words in _RULES:
        text = pattern.sub(words, text)
    return text
