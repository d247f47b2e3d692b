"""The main window: the step list beside the current page, Back/Next, and the File menu.

Closing the window stops every backend it started (cooperative stop, then
terminate, then kill) and TensorBoard, so no child outlives the app.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMessageBox, QPushButton,
                               QStackedWidget, QVBoxLayout, QWidget)

from tfturbo import __version__
from tfturbo.backend_client import backend_command
from tfturbo.settings import DEFAULT_STEPS

from .pages.base import WizardPage
from .pages.baseline import BaselinePage
from .pages.batch import BatchPage
from .pages.compare import ComparePage
from .pages.precision import PrecisionPage
from .pages.record import RecordPage
from .pages.workload import WorkloadPage
from .pages.xla import XlaPage
from .run_browser import RunBrowser
from .run_process import BackendProcess, Launcher
from .session import WizardSession
from .step_list import StepList
from .tensorboard_launcher import TensorBoardLauncher

PAGES = (WorkloadPage, BaselinePage, PrecisionPage, XlaPage, ComparePage, BatchPage, RecordPage)


class MainWindow(QMainWindow):
    def __init__(self, workload: str = "", launcher: Launcher = backend_command, steps: int = DEFAULT_STEPS):
        super().__init__()
        self.session = WizardSession(workload or "builtin:transformer", steps=steps)
        self.setWindowTitle("tfturbo — make training faster, measured")
        self.resize(1280, 800)
        self.browser: RunBrowser | None = None

        self.pages: list[WizardPage] = [cls(self.session, launcher) for cls in PAGES]
        self.steps = StepList([p.title for p in self.pages])
        self.steps.setFixedWidth(236)
        self.steps.step_clicked.connect(self._on_step_clicked)
        self.stack = QStackedWidget()
        for i, page in enumerate(self.pages):
            self.stack.addWidget(page)
            page.status_changed.connect(lambda status, i=i: self.steps.set_status(i, status))
            page.navigation_changed.connect(self._update_nav)
            page.advance.connect(lambda i=i: self.goto(i + 1))

        self.back_button = QPushButton("Back")
        self.back_button.clicked.connect(lambda: self.goto(self.current() - 1))
        self.next_button = QPushButton("Next")
        self.next_button.setObjectName("primaryButton")
        self.next_button.clicked.connect(self._on_next)
        self.hint = QLabel("")
        self.hint.setObjectName("muted")
        nav = QHBoxLayout()
        nav.setContentsMargins(24, 8, 24, 14)
        nav.addStretch(1)
        nav.addWidget(self.hint)
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
        self.statusBar().showMessage("Choose a workload to start.")
        self.goto(0)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = QAction("&Open study…", self)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.triggered.connect(self.choose_study)
        file_menu.addAction(self.open_action)
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
        browser_action.triggered.connect(lambda: self.show_browser())
        view_menu.addAction(browser_action)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About tfturbo", self)
        about.triggered.connect(lambda: QMessageBox.about(
            self, "About tfturbo", f"tfturbo {__version__}\nMake Keras/TensorFlow training faster without losing "
            "accuracy — every recommendation measured on your own model and hardware."))
        help_menu.addAction(about)

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
        if self.session.study is not None:
            self.statusBar().showMessage(f"Study: {self.session.study.path}")
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

    # ------------------------------------------------------------ studies and report

    def show_browser(self) -> RunBrowser:
        if self.browser is None:
            self.browser = RunBrowser()
        self.browser.show()
        self.browser.raise_()
        return self.browser

    def choose_study(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a study folder", str(self.session.study_path or ""))
        if path:
            self.show_browser().open_study(path)

    def _export_report(self) -> None:
        record = self.pages[-1]
        if record.available():
            self.statusBar().showMessage(f"Export PDF report: {record.available()}", 6000)
            return
        self.goto(len(self.pages) - 1)
        record.choose_report()

    # ------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        """Stop every backend (cooperatively, then by force) and TensorBoard before the window goes."""
        self.stop_children()
        if self.browser is not None:
            self.browser.close()
        super().closeEvent(event)

    def stop_children(self) -> None:
        for process in self.findChildren(BackendProcess):
            process.shutdown()
        for launcher in self.findChildren(TensorBoardLauncher):
            launcher.stop()
