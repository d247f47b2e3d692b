"""STUDY_DIR/changes.patch: the recommended changes as a unified diff of the user's file, and its proof.

`ChangesPatch` is the document's one class: `text()` is what `tfturbo tune`
prints, `tfturbo apply` prints, the wizard's Record page and the PDF report
show, and what changes.patch holds; `to_dict()` is study.yaml's `patch`
(where the file and the patched copy are, what was placed, what was left to
the user and why, the check). The text is a patch `git apply` and `patch -p1`
read as it is: its header and the list of changes left to the user are
comment lines before and after the diff, which both tools skip.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ..errors import UserError
from ..runfiles import write_text_atomic
from .check import PATCHED_DIR, Check, CheckDoc, copy_path

if TYPE_CHECKING:  # made by `build` (libcst), loaded only when a patch is made
    from .build import Patch

PATCH_FILE = "changes.patch"


class PatchDoc(TypedDict):
    """study.yaml's `patch`: where changes.patch and the patched copy are, what was placed, and the check."""

    file: str
    target: str | None  # the user's file
    sha256: str | None  # of the user's file when the patch was made from it
    copy: str | None  # the patched copy, relative to the study (None: the patch changes nothing)
    placed: list[str]
    already: list[str]
    not_applied: list[dict[str, str]]  # `build.Unplaced.to_dict`: change, reason, code
    check: CheckDoc | None


@dataclass
class ChangesPatch:
    label: str  # the recommended settings, as the study names them ("mixed_bfloat16 + XLA, batch 128")
    patch: Patch
    check: Check | None = None
    kept: str = ""  # the settings kept when nothing changes (the baseline's label)

    def has_diff(self) -> bool:
        return bool(self.patch.diff())

    def text(self, study_dir: str | Path | None = None) -> str:
        p = self.patch
        diff = p.diff()
        lines = [f"# tfturbo: the code changes for the recommended settings — {self.label}"]
        if not diff and not p.unplaced:
            lines.append(f"# No code changes: the measured ladder kept your current settings ({self.kept or self.label})"
                         + ("; your script already says them" if p.already else "") + ".")
            if not p.already:
                lines.append("# No change beat them beyond the measurement noise while keeping the validation metric.")
            return "\n".join(lines) + "\n"
        if diff:
            lines.append(f"# {self.check.line() if self.check else 'not checked: the patched script has not run yet'}")
            lines.append(f"# file: {p.path}")
            where = Path(study_dir).absolute() / PATCH_FILE if study_dir else PATCH_FILE
            lines.append(f"# apply it in that file's folder: git apply {where}  (or: patch -p1 < {where})")
            # no tfturbo command here: the wizard's Record page and the PDF show this text, and the wizard saves
            # the patched file with its own button; `tfturbo tune`'s output names `tfturbo apply --write`
            # (`tune.render.render_study`)
            lines.append("#")
            lines.append("# changed:")
            lines += [f"#   {i}. {why}" for i, why in enumerate(p.placed, 1)]
            if p.already:
                lines.append("# already in the file: " + "; ".join(p.already))
        out = "\n".join(lines) + "\n" + diff
        if p.unplaced:
            tail = ["", "# not applied automatically:" if diff else
                    "# not applied automatically (make these changes in your code):"]
            for u in p.unplaced:
                tail.append(f"#   - {u.why} — why: {u.reason}")
                tail += [f"#       {line}" for line in u.snippet.splitlines()]
            out += "\n".join(tail) + "\n"
        return out

    def to_dict(self) -> PatchDoc:
        p = self.patch
        return {"file": PATCH_FILE, "target": p.path or None, "sha256": p.sha256 if p.path else None,
                "copy": f"{PATCHED_DIR}/{p.name}" if p.path and self.has_diff() else None,
                "placed": list(p.placed), "already": list(p.already),
                "not_applied": [u.to_dict() for u in p.unplaced],
                "check": self.check.to_dict() if self.check else None}

    def write(self, study_dir: str | Path) -> Path:
        """changes.patch, and the patched copy it was checked on (STUDY_DIR/patched/NAME)."""
        study_dir = Path(study_dir)
        if self.has_diff():
            copy = copy_path(study_dir, self.patch.name)
            copy.parent.mkdir(parents=True, exist_ok=True)
            if not copy.is_file() or copy.read_text(encoding="utf-8") != self.patch.patched:
                write_text_atomic(copy, self.patch.patched)
        path = study_dir / PATCH_FILE
        write_text_atomic(path, self.text(study_dir))
        return path


def patch_text(study_dir: str | Path, recorded: str | None) -> str | None:
    """The study's code to apply: changes.patch as written, else the text study.yaml recorded."""
    try:
        return (Path(study_dir) / PATCH_FILE).read_text(encoding="utf-8")
    except OSError:
        return recorded


def save_patched(study_dir: str | Path, recorded: PatchDoc | None, dest: str | Path) -> Path:
    """Write the patched file the study checked (STUDY_DIR/patched/NAME) to `dest`: `tfturbo apply --write`,
    the wizard's "Save patched script…". Refused when the study's patch changes nothing, or when the user's
    file changed since the patch was made from it (the patched copy would undo those edits)."""
    if not recorded:
        raise UserError("the study records no patched file (it was made before tfturbo wrote patches, or has no "
                        "recommendation)", "measure it again with tfturbo tune")
    copy = recorded.get("copy")
    if not copy or Path(copy).parts[:1] != (PATCHED_DIR,) or ".." in Path(copy).parts:
        raise UserError("the study's patch changes nothing in the file", "nothing to write")
    source = Path(study_dir) / copy
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"the patched copy {source} cannot be read ({e.strerror or e})",
                        "run the same tfturbo tune command again to make it") from e
    target = recorded.get("target")
    if target and Path(target).is_file():
        now = hashlib.sha256(Path(target).read_bytes()).hexdigest()
        if recorded.get("sha256") and now != recorded["sha256"]:
            raise UserError(f"{target} changed since the study made its patch",
                            "measure it again (tfturbo tune), or apply changes.patch by hand (git apply)")
    dest = Path(dest).expanduser()
    try:
        write_text_atomic(dest, text)
    except OSError as e:
        raise UserError(f"cannot write {dest} ({e.strerror or e})", "choose a writable path") from e
    return dest
