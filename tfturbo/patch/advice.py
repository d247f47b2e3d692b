"""A finding's fix in the script's own words: its names, its lines, the edit made where it says that thing.

A finding's fix is code the user pastes. Written from a template it named
`x_train` for a script whose fit() reads `model.fit(X, y, ...)`, and a
`.batch()` for a dataset the script already batched. The backend's audit and
run ask here instead: `fit_facts` reads the fit() call the run measured (what
it is given as x and y, the model's variable, its keywords), and `edited_lines` shows one change (`changes`) as the
script's own lines after the edit, placed where `place` puts it in the patch.
Both read the file only (libcst); None when the file cannot be read or the
place is not certain, and the caller writes its generic text.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from . import changes as C
from .place import NotPlaced, Target, data_kind, place
from .source import Script


@dataclass(frozen=True)
class FitFacts:
    """The script's fit() call as it reads."""

    line: int  # where it is
    call: str  # its source on one line: "model.fit(X, y, epochs=5, batch_size=BATCH)"
    model: str  # the fitted model's expression: "model"
    x: str | None  # what it gets as x and y, as written: "X", "y"; "train_ds" and None
    y: str | None
    data: str  # place.NUMPY or place.TF_DATA, read from the source
    keywords: tuple[tuple[str, str], ...] = ()  # its keyword arguments as written: (("epochs", "EPOCHS"), ...)

    def call_with(self, data: str, drop: tuple[str, ...] = (), add: tuple[tuple[str, str], ...] = ()) -> str:
        """The same fit() call given `data` instead of x and y, its keywords but `drop` kept as written."""
        kept = [f"{k}={v}" for k, v in self.keywords if k not in drop and k not in ("x", "y")]
        return f"{self.model}.fit({', '.join([data, *(f'{k}={v}' for k, v in add), *kept])})"

    @property
    def x_name(self) -> str | None:
        """x when it is a plain name (X, x_train, train_ds): a name the fix may build new names from."""
        return self.x if self.x and self.x.isidentifier() else None

    @property
    def y_name(self) -> str | None:
        return self.y if self.y and self.y.isidentifier() else None


def _read(path: str | Path) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
        cst.parse_module(text)
        return text
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return None


def fit_facts(path: str | Path, fit_line: int | None = None, data: str | None = None) -> FitFacts | None:
    """The fit() call at `fit_line` (else the first that looks like Keras'), or None when there is none."""
    text = _read(path)
    if text is None:
        return None
    script = Script(text, fit_line)
    fit = script.fit_call()
    if fit is None:
        return None
    model = script.receiver(fit)
    assert model is not None, "fit_call finds X.fit(...) calls: each has its X"
    x, y = script.keyword(fit, "x", 0), script.keyword(fit, "y", 1)
    keywords = tuple((a.keyword.value, script.code(a.value)) for a in fit.args if a.keyword is not None)
    return FitFacts(script.line(fit), script.code(fit), script.code(model),
                    script.code(x.value) if x is not None else None, script.code(y.value) if y is not None else None,
                    data_kind(script, fit, Target(fit_line=fit_line, data=data)), keywords)


def edited_lines(path: str | Path, change: C.Change, target: Target = Target()) -> str | None:
    """The file's lines that `change` edits, as they read after it, each group under the line it starts at
    ("# train.py line 20:" then `BATCH = 104  # the batch size`; "after line N" for a new line), numbered as
    the file reads now; None when it cannot be placed for sure or
    the file already says it."""
    text = _read(path)
    if text is None:
        return None
    try:
        after = place(text, change, target)
    except Exception:  # noqa: BLE001 - an aid: the caller's generic words instead
        return None
    if isinstance(after, NotPlaced) or after == text:
        return None
    name = Path(path).name
    before_lines, after_lines = text.splitlines(), after.splitlines()
    groups = []
    matcher = difflib.SequenceMatcher(a=before_lines, b=after_lines, autojunk=False)
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            new = after_lines[j1:j2]
            while new and not new[0].strip():
                new = new[1:]
            where = f"line {i1 + 1}" if tag == "replace" else f"after line {i1}" if i1 else "at the top"
            if new:
                groups.append(f"# {name} {where}:\n" + "\n".join(_dedent(new)))
    return "\n".join(groups) or None


def _dedent(lines: list[str]) -> list[str]:
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return [line[indent:] for line in lines]
