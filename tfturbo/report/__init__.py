"""The before/after PDF report of a study (`tfturbo report`, the wizard's export button).

Headless by design: reportlab only, no Qt and no TensorFlow, so it runs on a
server, in CI or over ssh. `model.gather` decides what the report says from
the study directory; `pdf.render` lays it out.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import UserError
from ..runfiles import REPORT_PDF, shared_mode
from .model import ReportData, gather

__all__ = ["write_report", "gather", "ReportData"]


def write_report(study_dir: str | os.PathLike[str], out_pdf: str | os.PathLike[str] | None = None) -> Path:
    """Write the report of `study_dir` to `out_pdf` (default STUDY_DIR/report.pdf) and return its path.

    The file is written beside its destination and renamed into place, so a
    failure never leaves a half-written PDF behind.
    """
    from .pdf import render  # reportlab is imported only when a report is written

    data = gather(Path(study_dir))
    out = Path(out_pdf) if out_pdf is not None else Path(study_dir) / REPORT_PDF
    if out.is_dir():
        raise UserError(f"{out} is a directory", "pass -o with a file name, e.g. -o report.pdf")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + out.name, suffix=".tmp", dir=out.parent)
        os.close(fd)
    except OSError as e:
        raise UserError(f"cannot write {out} ({e.strerror or e})", "pass -o with a writable path") from e
    try:
        render(data, tmp)
        shared_mode(tmp)  # the user's normal mode (mkstemp made it 0600)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
