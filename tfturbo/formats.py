"""The one rule for reading a versioned document back: older formats are read, a newer major one is refused.

Each document tfturbo writes carries the major version of its format, kept
by the document's owner: the events' `"v"` (`protocol.PROTOCOL_VERSION`),
summary.json's `"v"` (`run_summary.VERSION`), scaling.json's `"v"`
(`scaling.VERSION`) and study.yaml's `format` (`tune.study.STUDY_FORMAT`).
Adding a key never bumps it: readers keep keys they do not know. A major
version bumps when an older reader would misread the file (a key that
changed its meaning or unit), so a reader that meets a newer one refuses it
with the fix (upgrade tfturbo) instead of showing wrong numbers. A version
written "MAJOR.MINOR" is compared on its major part; a file without one is
from before versions were written and is read.
"""

from __future__ import annotations

import os

from . import __version__
from .errors import UserError


class FormatVersionError(UserError):
    """A file written by a newer tfturbo in a format this one cannot read."""


def major_of(version: object) -> int | None:
    """The major part of a document's version (2, "2" or "2.1" give 2); None when it has no readable one."""
    if isinstance(version, bool):
        return None
    if isinstance(version, int):
        return version
    if isinstance(version, float) and version.is_integer():
        return int(version)
    if isinstance(version, str):
        head = version.strip().split(".")[0]
        return int(head) if head.isdigit() else None
    return None


def check_version(found: object, reads: int, what: str | os.PathLike[str]) -> None:
    """Refuse `what` (the file, as the user would find it) when its version `found` is a newer major version
    than `reads`, the one this tfturbo writes; an older or missing version is fine."""
    major = major_of(found)
    if major is not None and major > reads:
        raise FormatVersionError(
            f"{what} is format version {found}, written by a newer tfturbo; this tfturbo ({__version__}) reads "
            f"format version {reads} and older",
            "upgrade tfturbo (pip install --upgrade tfturbo) to open it")
