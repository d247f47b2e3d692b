"""The unified diff of a file, as `git apply` and `patch -p1` read it.

Paths are `a/NAME` and `b/NAME` (NAME: the file's name), so the patch applies
in the file's folder: `git apply changes.patch` or `patch -p1 < changes.patch`.
A last line without a newline is marked as diff marks it, so the patched file
keeps (or lacks) its final newline exactly.
"""

from __future__ import annotations

import difflib

NO_NEWLINE = "\\ No newline at end of file"


def unified_diff(before: str, after: str, name: str, context: int = 3) -> str:
    """The diff from `before` to `after` ("" when they are equal)."""
    if before == after:
        return ""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(old, new, f"a/{name}", f"b/{name}", n=context):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:  # the file's last line, without a newline
            out.append(line + "\n" + NO_NEWLINE + "\n")
    return "".join(out)
