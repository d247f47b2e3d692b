"""Record & report: the settings to train with, as recorded beside the checkpoint, and the PDF.

The recommendation is the best kept rung (`study.yaml` says so too); the
code to apply is the study's changes.patch (`tfturbo.patch`: a patch of the
user's own script), proven by measuring the patched copy as written: the
page runs that check (the engine's `patch` stage, as `tfturbo tune` does)
and shows what it found; "Save patched script…" writes the checked copy
where the user chooses, "Copy patch" puts the patch on the clipboard. The
record is read back from the run's `checkpoint/tfturbo-settings.yaml`, so
what the page shows is what a model in production can be traced to. The
report is the same one `tfturbo report` writes, rendered in a worker thread.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QFileDialog, QPushButton, QWidget

from tfturbo.run_summary import RunSummary
from tfturbo.errors import UserError
from tfturbo.headline import SPEED_UP, headline
from tfturbo.learning_rate import learning_rate_text
from tfturbo.patch.check import CHECKED, Check
from tfturbo.patch.document import save_patched
from tfturbo.runfiles import CHECKPOINT_DIR, CHECKPOINT_SETTINGS, REPORT_PDF
from tfturbo.settings import fixes_on

from ..cards import FactsCard
from ..code_block import CodeBlock, PathBlock
from ..error_box import ErrorBox
from ..report_export import ReportJob, export_report
from ..run_data import RunData
from ..run_gate import TrainingBusy
from ..run_process import BackendProcess, Launcher
from ..session import WizardSession
from ..step_status import ATTENTION, PASSED, RUNNING
from .base import WizardPage, add_section, needs_baseline
from ..labels import button_row, muted_label


def settings_facts(settings, batch_size: int | None, run: RunSummary | None = None) -> list[tuple[str, str]]:
    """What to train with; `batch_size` is the one the run measured when the settings left it to the workload;
    `run` (its summary) gives the learning rate as it trained, a schedule as a schedule."""
    fixes = fixes_on(settings)
    scaled = "" if settings.lr_scale == 1 else f"× {settings.lr_scale:.3g} of the workload's"
    rate = learning_rate_text(run.to_dict()) if run else "n/a"
    lr = (f"{rate} ({scaled})" if scaled else rate) if rate != "n/a" else scaled or "unchanged"
    return [("Precision policy", settings.policy), ("jit_compile", "true" if settings.jit_compile else "false"),
            ("Batch size", str(settings.batch_size or batch_size or "the workload's default")),
            ("Learning rate", lr), ("Automatic fixes", ", ".join(fixes) or "none")]


class RecordPage(WizardPage):
    title = "Record & report"
    intro = ("Train with the settings below. They are written beside the checkpoint, so a model in production can "
             "be traced to how it was trained; the PDF report gives the before/after numbers with their intervals.")

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.job: ReportJob | None = None
        self.report_path: str | None = None
        self.recommended = FactsCard("Recommended settings")
        self.left.addWidget(self.recommended)
        add_section(self.left, "Report")
        self.export_button = QPushButton("Export PDF report…")
        self.export_button.setObjectName("primaryButton")
        self.export_button.clicked.connect(self.choose_report)
        self.open_button = QPushButton("Open the report")
        self.open_button.hide()
        self.open_button.clicked.connect(self.open_report)
        self.open_url = QDesktopServices.openUrl  # replaced in tests
        self.left.addLayout(button_row(self.export_button, self.open_button))
        self.report_status = muted_label("")
        self.left.addWidget(self.report_status)
        self.report_error = ErrorBox()
        self.left.addWidget(self.report_error)
        self.report_where = PathBlock()  # the PDF's path to copy, when no viewer opened it
        self.report_where.hide()
        self.left.addWidget(self.report_where)
        add_section(self.left, "Recorded beside the checkpoint")
        self.record_path = PathBlock()  # wrapped at its '/' (in a one-line box it scrolled sideways), copied whole
        self.left.addWidget(self.record_path)
        # its long lines wrap in the box (a long `val_set:` path was cut at the box's edge at 1280 px, the h42w walk)
        self.record = CodeBlock(max_lines=18, wrap=True)
        self.left.addWidget(self.record)
        self.left.addStretch(1)

        add_section(self.right, "Changes to make in your training script")
        self.check_status = muted_label("")
        self.check_status.setWordWrap(True)
        self.right.addWidget(self.check_status)
        self.copy_button = QPushButton("Copy patch")
        self.copy_button.clicked.connect(self.copy_patch)
        self.save_button = QPushButton("Save patched script…")
        self.save_button.setToolTip("Write the patched script the check measured where you choose; your own script "
                                    "is not changed unless you choose it")
        self.save_button.clicked.connect(self.choose_patched)
        self.right.addLayout(button_row(self.copy_button, self.save_button))
        self.save_status = muted_label("")
        self.save_status.setWordWrap(True)
        self.right.addWidget(self.save_status)
        self.snippet = CodeBlock(fill=True)
        self.snippet.copy_button.hide()  # "Copy patch" above copies it
        self.right.addWidget(self.snippet, 1)  # up to its wrapped height (CodeBlock fill): a stretch below took it all
        self.right.addStretch(0)  # what the snippet does not need
        self.check = BackendProcess(launcher, self)  # the run that measures the patched copy as written
        self.check.ended.connect(self._check_ended)
        self.save_path_dialog = QFileDialog.getSaveFileName  # replaced in tests

    def available(self) -> str:
        return needs_baseline(self.session)

    def on_enter(self) -> None:
        session = self.session
        if session.baseline is None:
            return
        finished = session.finished  # a finished study reopened: shown as it ended, never written again
        study = session.ensure_study() if finished else session.finish_study()
        best = session.measured_best
        assert study.recommended is not None, "a finished study with a baseline recommends its best"
        measured_batch = best.summary.settings.batch_size if best.summary and best.summary.settings else None
        facts = settings_facts(study.recommended, measured_batch, best.summary)
        shown = headline(best.name, study.rungs) if best is not session.baseline else None
        facts.insert(0, (SPEED_UP, f"{shown.text()} {shown.source(best.name)}, {shown.verdict}" if shown is not None
                         else "none: no change beat the baseline, its settings are kept"))  # the number it records
        self.recommended.set_facts(facts, title=f"Recommended: {study.recommended.label()}")
        self.show_patch(study)
        path = session.rung_path(best) / CHECKPOINT_DIR / CHECKPOINT_SETTINGS
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            text = "(the run wrote no settings record)"
        self.record_path.set_text(str(path))
        self.record.set_text(text.rstrip())
        self.set_status(PASSED)  # the recommendation is recorded in study.yaml
        if not finished:
            self.start_check()

    # ------------------------------------------------------------ the code to apply

    def show_patch(self, study) -> None:
        """The study's changes.patch, what its check found, and whether there is a patched script to save."""
        self.snippet.set_text((study.snippet or "").rstrip())
        patch = study.patch or {}
        self.save_button.setEnabled(bool(patch.get("copy")))
        self.copy_button.setEnabled(bool(study.snippet))
        check = Check.from_dict(patch.get("check"))
        if check is None:
            self.check_status.setText("")
        elif check.status == CHECKED:
            self.check_status.setText("Checked: " + check.reason + ".")
        else:
            self.check_status.setText(check.line()[0].upper() + check.line()[1:] + ".")

    def start_check(self) -> None:
        """Measure the patched copy as written (once per patch: a check on disk for it is re-used)."""
        if self.check.is_running():
            return
        action = self.session.start_patch_check()
        if action is None:
            return
        try:
            self.check.start(action.command, action.argv, name="patch check", stderr_path=self.session.log_path(),
                             python_path=action.python_path)
        except TrainingBusy as e:
            self.session.abandon_patch_check()
            self.check_status.setText(f"The patch is not checked yet: {e}. Come back to this page to check it.")
            return
        self.check_status.setText("Checking the patch: running the patched copy of your script as written "
                                  "(a short run)…")

    def _check_ended(self, data: RunData) -> None:
        self.show_patch(self.session.finish_patch_check(data))

    def copy_patch(self) -> None:
        QGuiApplication.clipboard().setText(self.snippet.text() + "\n")

    def choose_patched(self) -> None:
        study = self.session.ensure_study()
        target = Path((study.patch.get("target") if study.patch is not None else None) or "script.py")
        start = str(target.with_name(f"{target.stem}_tfturbo{target.suffix}"))
        path, _ = self.save_path_dialog(self, "Save the patched script", start, "Python files (*.py)")
        if path:
            self.save_patched(Path(path))

    def save_patched(self, path: Path) -> None:
        try:
            study = self.session.ensure_study()
            written = save_patched(study.path, study.patch, path)
        except UserError as e:
            self.save_status.setText(str(e))
            return
        self.save_status.setText(f"Patched script saved: {written}")

    # ------------------------------------------------------------ PDF

    def choose_report(self) -> None:
        start = str(self.session.ensure_study().path / REPORT_PDF)
        path, _ = QFileDialog.getSaveFileName(self, "Export the PDF report", start, "PDF files (*.pdf)")
        if path:
            self.export(Path(path))

    def export(self, path: Path) -> None:
        """Write the report to `path` in the background."""
        self.report_error.clear()
        self.export_button.setEnabled(False)
        self.report_status.setText(f"Writing {path}…")
        self.set_status(RUNNING)
        self.job = export_report(self.session.ensure_study().path, path, self._on_written, self._on_failed)

    def _on_written(self, path: str) -> None:
        self.report_path = path
        study = self.session.ensure_study()
        study.report = path
        study.save()
        self.export_button.setEnabled(True)
        self.report_status.setText(f"Report written: {path}")
        self.open_button.show()
        self.set_status(PASSED)

    def open_report(self) -> None:
        """Open the PDF in the desktop's viewer; without one, show its path to copy."""
        if self.report_path and not self.open_url(QUrl.fromLocalFile(self.report_path)):
            self.report_status.setText("No PDF viewer opened the report: it is here")
            self.report_where.set_text(self.report_path)
            self.report_where.show()

    def _on_failed(self, message: str, details: str) -> None:
        self.export_button.setEnabled(True)
        self.report_status.setText("")
        self.report_error.show_error(message, "", details)
        self.set_status(ATTENTION)
