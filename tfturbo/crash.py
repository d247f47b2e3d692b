"""Why a backend died without saying so: what the end of its log tells.

TensorFlow's oneDNN CPU kernels (on by default on x86) may crash the process
right after an allocation fails instead of raising `ResourceExhaustedError`.
Seen on TensorFlow 2.21, CPU, a batch far too large for memory: the log ends
with "OP_REQUIRES failed at mkl_util.h:848 : RESOURCE_EXHAUSTED: OOM when
allocating tensor with shape[...]" and the process exits on SIGSEGV, so no
`error` or `done` event is ever written. Readers of a run that ended that way
(`backend_client`, the GUI's process runner, `runfiles.load_run`) use
`explain()` to report it as what it is: out of memory, with the advice to
lower the batch size.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import protocol

TAIL_BYTES = 256 * 1024  # TensorFlow prints an allocator summary of many lines after the OOM line
_OOM_LINE = re.compile(r"(OOM when allocating tensor[^\n]*|ran out of memory trying to allocate [^\n(]*)")


def oom_fix(batch_size: int | None = None) -> str:
    """The advice for an out-of-memory run (the same words wherever it is detected)."""
    smaller = f" (e.g. --batch-size {max(1, batch_size // 2)})" if batch_size else ""
    return f"lower --batch-size{smaller}, or use a 16-bit --policy to halve activation memory"


def log_size(path: str | os.PathLike[str] | None) -> int:
    """Current size of a log file (0 when missing): where a new child's output will start."""
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def explain(log_path: str | os.PathLike[str] | None, offset: int = 0,
            argv: list[str] | None = None) -> protocol.ErrorDoc | None:
    """An `error` event for a backend that died after running out of memory, or None.

    Reads what the backend wrote to `log_path` from `offset` on (at most its
    last TAIL_BYTES). `argv` (the backend command's arguments) gives the batch
    size for the advice when it was set there.
    """
    if not log_path:
        return None
    try:
        with open(log_path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(offset, size - TAIL_BYTES, 0))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    found = _OOM_LINE.findall(text)
    if not found:
        return None
    cause = next((line for line in reversed(found) if line.startswith("OOM")), found[-1]).strip()
    return {"type": protocol.ERROR, "kind": protocol.OUT_OF_MEMORY,
            "message": f"out of memory: {cause} (TensorFlow then crashed the backend)",
            "fix": oom_fix(_batch_size(argv or [])),
            "traceback": f"see {Path(log_path)}"}


def _batch_size(argv: list[str]) -> int | None:
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--batch-size" and i + 1 < len(argv) else \
            arg.split("=", 1)[1] if arg.startswith("--batch-size=") else None
        if value is not None and value.isdigit():
            return int(value)
    return None
