"""The main window: the step list beside the current page, Back/Next, and the File menu.

File → New study starts over on a fresh session; File → Recent studies
reopens the studies made here (kept in the user's QSettings). Closing the
window during a run asks first, then stops every backend it started
(cooperative stop, then terminate, then kill) and TensorBoard, so no child
outlives the app, and marks an unfinished study `interrupted`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSettings, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QScreen, QShortcut
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMessageBox, QPushButton,
                               QStackedWidget, QVBoxLayout, QWidget)

from tfturbo import __version__
from tfturbo.backend_client import backend_command
from tfturbo.settings import DEFAULT_STEPS
from tfturbo.runfiles import RUNS_DIR, STUDY_YAML
from tfturbo.tune import levers
from tfturbo.tune.study import Study

from .pages.base import RungPage, WizardPage
from .pages.baseline import BaselinePage
from .pages.batch import BatchPage
from .pages.compare import ComparePage
from .pages.lever import page_for
from .pages.precision import PrecisionPage
from .pages.record import RecordPage
from .pages.workload import WorkloadPage
from .pages.xla import XlaPage
from .run_browser import RunBrowser
from .run_gate import GATE
from .run_panel import RunPanel
from .run_process import BackendProcess, Launcher, SessionLauncher
from .session import WizardSession
from .step_list import StepList
from .tensorboard_launcher import TensorBoardLauncher
from .labels import muted_label

LEVER_PAGES = {cls.page_key: cls for cls in (BaselinePage, PrecisionPage, XlaPage, BatchPage, ComparePage)}


def page_classes() -> list[type[WizardPage]]:
    """The wizard's pages in the checklist's order: the workload and the baseline, one page per lever page in
    the levers' order (`tune.levers.LEVERS`; a lever without a page gets one of its own), the record."""
    out: list[type[WizardPage]] = [WorkloadPage, BaselinePage]
    for lever in levers.LEVERS:
        cls = LEVER_PAGES[lever.page] if lever.page else page_for(lever)  # a lever's `page` shows it
        if cls not in out:
            out.append(cls)
    return out + [RecordPage]

RECENT_KEY = "recent_studies"
MAX_RECENT = 8
MIN_SIZE = (1024, 640)
DEFAULT_SIZE = (1280, 800)  # where the screen has room


def recent_studies() -> list[str]:
    """Study folders made or opened here, newest first, that still exist and measured something: a folder removed
    since (an abandoned check's, discarded at New study) is dropped from the list for good, and one made by Next
    on page 1 with no run in it is not listed (the walk read "… — unfinished" for both)."""
    value = QSettings().value(RECENT_KEY, []) or []
    paths = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    existing = [p for p in paths if Path(p, STUDY_YAML).exists()]
    if existing != paths:
        QSettings().setValue(RECENT_KEY, existing)
    return [p for p in existing if measured_anything(Path(p))]


def measured_anything(path: Path) -> bool:
    """Whether the study in `path` has a run (a study.yaml another tfturbo wrote, unreadable: listed, opened to
    say why)."""
    try:
        study = Study.load(path)
    except Exception:  # noqa: BLE001 (a file another tfturbo wrote, or half a copy)
        return True
    return bool(study.rungs) or any((path / RUNS_DIR).glob("*"))


def recent_label(path: str) -> str:
    """A Recent studies entry: the folder, and whether the study is unfinished (where it stopped)."""
    try:
        study = Study.load(path)
    except Exception:  # noqa: BLE001 (a file another tfturbo wrote, or half a copy: still listed, opened to say why)
        return path
    if not study.unfinished:
        return f"{path} — {study.status}"
    measured = [r for r in study.rungs if r.decision is not None and r.skipped_reason is None]
    return f"{path} — unfinished ({len(measured)} measured)" if measured else f"{path} — unfinished"


def remember_study(path: str | Path) -> None:
    paths = [str(path)] + [p for p in recent_studies() if p != str(path)]
    QSettings().setValue(RECENT_KEY, paths[:MAX_RECENT])


class MainWindow(QMainWindow):
    def __init__(self, workload: str = "", launcher: Launcher = backend_command, steps: int = DEFAULT_STEPS):
        super().__init__()
        self.launcher = launcher
        self.default_steps = steps  # a new study starts at this length, not the last script's (File → New study)
        self.setWindowTitle("tfturbo — make training faster, measured")
        self.fit_to_screen()
        self.browser: RunBrowser | None = None
        self.confirm_close = True  # False: close without asking (scripts, e.g. docs/screenshots/capture.py)
        self._remembered: str | None = None

        self.stack = QStackedWidget()
        self.page_classes = page_classes()
        self.steps = StepList([cls.title for cls in self.page_classes])
        self.steps.setFixedWidth(214)
        self.steps.step_clicked.connect(self._on_step_clicked)
        self.back_button = QPushButton("Back")
        self.back_button.setToolTip("Previous step (Alt+Left)")
        self.back_button.clicked.connect(lambda: self.goto(self.current() - 1))
        self.next_button = QPushButton("Next")
        self.next_button.setToolTip("Next step (Alt+Right)")
        self.next_button.setObjectName("primaryButton")
        self.next_button.clicked.connect(self._on_next)
        self.hint = muted_label("")
        nav = QHBoxLayout()
        nav.setContentsMargins(24, 8, 24, 14)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        nav.addWidget(self.hint, 1)
        nav.addSpacing(12)
        nav.addWidget(self.back_button)
        nav.addWidget(self.next_button)
        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(0)
        right.addWidget(self.stack, 1)
        navbar = QWidget()
        navbar.setObjectName("navBar")
        navbar.setLayout(nav)
        right.addWidget(navbar)
        body = QWidget()
        row = QHBoxLayout(body)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.steps)
        row.addLayout(right, 1)
        self.setCentralWidget(body)
        self._build_menus()
        self._build_shortcuts()
        # a normal status-bar widget: a temporary message (why a step is not open yet) covers it, then it returns
        self.study_label = QLabel("")
        self.study_label.setObjectName("muted")
        self.statusBar().addWidget(self.study_label, 1)
        self._build_pages(WizardSession(workload or "builtin:transformer", steps=steps))
        GATE.changed.connect(self._on_gate)

    def fit_to_screen(self, screen: QScreen | None = None) -> None:
        """The window within its screen's available area (its panels and docks left out): 1280×800 where there is
        room, else the whole available area; its minimum 1024×640 or less on a smaller screen (the walk's window at
        1024×640 opened larger than the screen, its Next button out of reach)."""
        screen = screen or self.screen() or QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else QRect(0, 0, *DEFAULT_SIZE)
        self.setMinimumSize(min(MIN_SIZE[0], room.width()), min(MIN_SIZE[1], room.height()))
        self.resize(min(DEFAULT_SIZE[0], room.width()), min(DEFAULT_SIZE[1], room.height()))
        self.move(room.topLeft() + QPoint((room.width() - self.width()) // 2, (room.height() - self.height()) // 2))

    def _build_pages(self, session: WizardSession) -> None:
        """A fresh set of pages on `session` (at start, and for File → New study)."""
        for page in getattr(self, "pages", []):
            self.stack.removeWidget(page)
            page.deleteLater()
        self.session = session
        self._remembered = None
        launcher = SessionLauncher(session, self.launcher)  # on the session's ssh host once it has one
        self.pages: list[WizardPage] = [cls(self.session, launcher) for cls in self.page_classes]
        for i, page in enumerate(self.pages):
            self.stack.addWidget(page)
            self.steps.set_status(i, page.status)
            page.status_changed.connect(lambda status, i=i: self._on_status(i, status))
            page.navigation_changed.connect(self._update_nav)
            page.advance.connect(lambda i=i: self.goto(i + 1))
        self.goto(0)

    def _on_status(self, index: int, status: str) -> None:
        self.steps.set_status(index, status)
        for page in self.pages:  # a trial's runs of the baseline's configuration count in its peak memory
            if isinstance(page, BaselinePage) and page is not self.pages[index]:
                page.refresh_results()
        study = self.session.study
        if study is not None and self._remembered != str(study.path):
            self._remembered = str(study.path)
            remember_study(study.path)
            self._fill_recent()

    def _build_menus(self) -> None:
        self.file_menu = file_menu = self.menuBar().addMenu("&File")
        self.new_action = QAction("&New study", self)
        self.new_action.setShortcut(QKeySequence.StandardKey.New)
        self.new_action.triggered.connect(self.new_study)
        file_menu.addAction(self.new_action)
        self.open_action = QAction("&Open study…", self)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.triggered.connect(self.choose_study)
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("&Recent studies")
        self._fill_recent()
        # read again as it opens: a folder removed since (or a study that has measured since) shows as it is now
        file_menu.aboutToShow.connect(self._fill_recent)
        self.export_action = QAction("&Export PDF report…", self)
        self.export_action.triggered.connect(self._export_report)
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view_menu = self.menuBar().addMenu("&View")
        browser_action = QAction("&Runs and comparison", self)
        browser_action.triggered.connect(lambda: self.view_runs())
        view_menu.addAction(browser_action)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About tfturbo", self)
        about.triggered.connect(lambda: QMessageBox.about(
            self, "About tfturbo", f"tfturbo {__version__}\nMake Keras/TensorFlow training faster without losing "
            "accuracy — every recommendation measured on your own model and hardware."))
        help_menu.addAction(about)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = recent_studies()
        for path in paths:
            action = self.recent_menu.addAction(recent_label(path))
            action.setData(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_study(p))
        self.recent_menu.setEnabled(bool(paths))

    def _build_shortcuts(self) -> None:
        """Ctrl+Enter runs the page's step, Esc stops its run, Alt+Left/Right move between steps."""
        for keys, slot in ((("Ctrl+Return", "Ctrl+Enter"), lambda: self.page().run_action()),
                           (("Esc",), lambda: self.page().stop_action()),
                           (("Alt+Left",), lambda: self.goto(self.current() - 1)),
                           (("Alt+Right",), self._on_next)):
            for key in keys:
                shortcut = QShortcut(QKeySequence(key), self)
                shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
                shortcut.activated.connect(slot)

    def new_study(self) -> None:
        """Start over: a fresh session on the same machine (its hardware report is kept)."""
        if GATE.busy():
            QMessageBox.information(self, "New study", "A run is going: stop it first (Esc), then start a new study.")
            return
        self.stop_children()
        self.session.interrupt()
        # the length the window started with: the last script's own length is not the next one's (its check sets it)
        fresh = WizardSession(self.session.workload, steps=self.default_steps, seed=self.session.seed)
        fresh.environment, fresh.host = self.session.environment, self.session.host
        self._build_pages(fresh)
        self._fill_recent()  # an abandoned empty study is gone from the list

    def _on_gate(self, busy: bool) -> None:
        self.new_action.setEnabled(not busy)

    # ------------------------------------------------------------ navigation

    def current(self) -> int:
        return self.stack.currentIndex()

    def page(self) -> WizardPage:
        return self.pages[self.current()]

    def goto(self, index: int) -> None:
        if not 0 <= index < len(self.pages):
            return
        why = self.pages[index].available()
        if why:
            self.statusBar().showMessage(f"{self.pages[index].title}: {why}", 6000)
            self.steps.set_current(self.current())
            return
        self.stack.setCurrentIndex(index)
        self.steps.set_current(index)
        self.pages[index].on_enter()
        self._update_nav()

    def _on_step_clicked(self, index: int) -> None:
        self.goto(index)

    def _on_next(self) -> None:
        if self.page().can_go_next():
            self.page().request_next()

    def _update_nav(self) -> None:
        page = self.page()
        last = self.current() == len(self.pages) - 1
        self.back_button.setEnabled(self.current() > 0)
        self.next_button.setVisible(not last)
        self.next_button.setEnabled(page.can_go_next())
        self.hint.setText(page.next_hint())
        if self.study_label.text() != self.study_status():
            self.study_label.setText(self.study_status())

    def study_status(self) -> str:
        """The status bar's lasting text: where the study is, or that Next creates it (a true sentence whatever
        the workload page shows; what to do next is the navigation bar's hint)."""
        study = self.session.study
        return f"Study: {study.path}" if study is not None else \
            "No study yet: Next checks the workload and creates the study folder."

    # ------------------------------------------------------------ studies and report

    def view_runs(self) -> RunBrowser:
        """View → Runs and comparison: the run browser, on the study the wizard shows when it lists nothing yet
        (it opened empty)."""
        browser = self.show_browser()
        study = self.session.study
        if browser.tree.topLevelItemCount() == 0 and study is not None and study.rungs:
            browser.open_study(study.path)
        return browser

    def show_browser(self) -> RunBrowser:
        if self.browser is None:
            self.browser = RunBrowser()
        self.browser.show()
        self.browser.raise_()
        return self.browser

    def choose_study(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a study folder", str(self.session.start_folder()))
        if path:
            self.open_study(path)

    def open_study(self, path: str | Path) -> None:
        """A study opens in the wizard: an unfinished one at its next stage, a finished one on its record (the
        runs browser is View → Runs and comparison); a folder of runs without a study.yaml opens in the browser."""
        if GATE.busy():
            self.statusBar().showMessage("A run is going: stop it first (Esc), then open the study.", 6000)
            return
        if (Path(path) / STUDY_YAML).exists():
            self.continue_study(Path(path))
        else:
            self.show_browser().open_study(path)

    def continue_study(self, path: Path) -> None:
        """The wizard on the study in `path`, its decided rungs replayed, on the page of its next stage."""
        self.stop_children()
        self.session.interrupt()
        session = WizardSession.open(path)
        session.host = self.session.host
        self._build_pages(session)
        for page in self.pages:
            page.show_recorded()
        stage = session.next_stage()
        index = next((i for i, page in enumerate(self.pages) if stage in page.stages()), len(self.pages) - 1)
        if session.finished and not self.pages[-1].available():
            index = len(self.pages) - 1  # a finished study: what it recorded
        what = "finished" if session.finished else "unfinished"
        self.statusBar().showMessage(f"Opened the {what} study in {path} at {self.pages[index].title}", 8000)
        self.goto(index)
        remember_study(path)
        self._fill_recent()

    def _export_report(self) -> None:
        record = self.pages[-1]
        if record.available():
            self.statusBar().showMessage(f"Export PDF report: {record.available()}", 6000)
            return
        self.goto(len(self.pages) - 1)
        assert isinstance(record, RecordPage), "the last page records the study"
        record.choose_report()

    # ------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        """Ask when a run is going; then stop every backend (cooperatively, then by force) and TensorBoard,
        and leave study.yaml saying how the study ended."""
        if GATE.busy() and self.confirm_close and not self.ask_close():
            event.ignore()
            return
        self.stop_children()
        self.session.interrupt()
        if self.browser is not None:
            self.browser.close()
        super().closeEvent(event)

    def ask_close(self) -> bool:
        answer = QMessageBox.question(
            self, "Stop the run and quit?", self.quit_question(),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def quit_question(self) -> str:
        """What Quit would stop, named by its step and its place in the trial ("XLA compilation — trial pair 4,
        the reference run (float32, batch 32)"): the run's configuration alone read as the baseline running
        during the XLA trial's reference run (the issue 42 walk)."""
        running = GATE.label
        for page in getattr(self, "pages", []):
            for panel in page.findChildren(RunPanel):
                if panel.is_running() and panel.context:
                    running = f"{page.title} — {panel.context[0].lower()}{panel.context[1:]} ({GATE.label})"
        return (f"{running[0].upper()}{running[1:]} is still running. Quit stops it: what it measured so far is "
                "kept in the study folder, and the study is marked interrupted.")

    def stop_children(self) -> None:
        """Stop every backend and TensorBoard. The trial pages hear nothing of the runs ended here: a trial cut off
        by Quit, New study or Open is not decided by its cancelled run (a baseline is recorded as cancelled) (it stays undecided in study.yaml, so a
        reopen continues it with its finished pairs)."""
        for page in getattr(self, "pages", []):
            panel = getattr(page, "run_panel", None)
            if isinstance(page, (RungPage, ComparePage)) and isinstance(panel, RunPanel) and panel.is_running():
                try:
                    panel.ended.disconnect()
                except (RuntimeError, TypeError):  # nothing was connected
                    pass
        for process in self.findChildren(BackendProcess):
            process.shutdown()
        for launcher in self.findChildren(TensorBoardLauncher):
            launcher.stop()
