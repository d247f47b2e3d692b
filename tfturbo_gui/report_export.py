"""Write the PDF report in a worker thread, so the window stays responsive while it renders.

The report is `tfturbo.report.write_report` — the same one `tfturbo report`
runs headless — called from a QThreadPool worker that touches no widget and
reports back through signals.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from tfturbo.errors import UserError


class _Signals(QObject):
    written = Signal(str)  # the PDF's path
    failed = Signal(str, str)  # message, traceback


class ReportJob(QRunnable):
    def __init__(self, study_dir: Path, out_pdf: Path):
        super().__init__()
        self.study_dir = Path(study_dir)
        self.out_pdf = Path(out_pdf)
        self.signals = _Signals()
        self.setAutoDelete(False)  # the page keeps the job (and its signals) alive until it reports

    def run(self) -> None:
        from tfturbo.report import write_report  # reportlab loads only when a report is written

        try:
            path = write_report(self.study_dir, self.out_pdf)
        except UserError as e:
            self.signals.failed.emit(e.line(), "")
        except Exception as e:  # noqa: BLE001 — shown to the user with its traceback behind Details
            self.signals.failed.emit(f"the report could not be written: {e}", traceback.format_exc())
        else:
            self.signals.written.emit(str(path))


def export_report(study_dir: Path, out_pdf: Path, on_written, on_failed) -> ReportJob:
    """Start writing the report; the callbacks run in the GUI thread when it is done."""
    job = ReportJob(study_dir, out_pdf)
    job.signals.written.connect(on_written)
    job.signals.failed.connect(on_failed)
    QThreadPool.globalInstance().start(job)
    return job
