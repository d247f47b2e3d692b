"""Page 1 — Workload & hardware: what to tune, where the study goes, and what this machine recommends.

The hardware report comes from the backend's `env` (started when the page
first shows). Next validates the workload by running the backend's `audit`
on it: a broken workload shows its one-line error and fix and keeps the
user here; nothing is created until it loads. A training script's own
options (what follows `--` on the command line) are typed in "Script
options", shown only for a script, and go to every command of the study;
a script that calls fit() more than once offers which call is measured
("Measured fit()", `--fit-call`), and the check says which one was.
"Run on" picks this machine or an ssh host (`[user@]host` and the Python
there, as the CLI's --host/--remote-python): every command of the study,
the hardware report included, then runs there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtWidgets import (QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListView, QListWidget,
                               QListWidgetItem, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from tfturbo.findings import findings_in
from tfturbo import protocol, remote
from tfturbo.environment import Environment
from tfturbo.errors import UserError
from tfturbo.own_length import OwnLength
from tfturbo.settings import DEFAULT_STEPS
from tfturbo.trials.sizing import MIN_STEADY_STEPS
from tfturbo.numbers import ordinal
from tfturbo.workload_kind import fit_calls_in_source, is_script, measured_fit_text

from ..cards import FactsCard
from ..run_data import RunData
from ..run_panel import RunPanel
from ..run_process import Launcher
from ..session import WizardSession, default_study_dir, run_on, script_options
from ..step_status import ATTENTION, PASSED, RUNNING
from ..workload_catalog import builtin_workloads
from .base import WizardPage, add_section
from ..labels import ElidedLabel, FittingCombo, PathEdit, muted_label

LAST_SCRIPT_FOLDER = "last_script_folder"  # QSettings: the folder of the script last opened with "Open…"


def device_names(env: Environment) -> list[str]:
    out = []
    for d in env.devices:
        if isinstance(d, dict):
            name = d.get("description") or d.get("gpu_name") or d.get("name") or d.get("type") or "device"
            cc = d.get("compute_capability")
            out.append(f"{name} (compute capability {cc})" if cc else str(name))
        else:
            out.append(str(d))
    return out


class WorkloadRow(QWidget):
    """A built-in workload in the list: its name, and what it is for in one muted line."""

    def __init__(self, spec: str, line: str):
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.setSpacing(1)
        name = QLabel(spec)
        name.setObjectName("workloadName")
        layout.addWidget(name)
        about = ElidedLabel(line)  # ends in "…" in a narrow window (it was cut mid-word)
        about.setObjectName("muted")
        about.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(about)
        self.about = about


class WorkloadList(QListWidget):
    """The built-in workloads, each row as wide as the list's viewport: shown at once at 1024x640 (a window
    resized before it was first shown), the rows kept the width of the first layout, 52 px wider than the
    list, and their descriptions were cut mid-word instead of ending in "…" (issue 22 walk)."""

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        width = self.viewport().width()
        for i in range(self.count()):
            row = self.itemWidget(self.item(i))
            if row is not None and row.width() != width:
                row.resize(width, row.height())


class WorkloadPage(WizardPage):
    title = "Workload & hardware"
    intro = ("Choose the training job to tune — a built-in example, your training script as it is, or a workload "
             "file with build_model() and make_datasets(batch_size) — and where the study is saved. "
             "Every number the wizard shows is measured where the runs run: this machine, or the ssh host you choose.")

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.setAcceptDrops(True)
        self._env_started = False
        self._script = False  # the chosen workload is a training script (it takes script options)
        self._env_host: remote.RemoteHost | None = None  # where the last hardware report was asked

        add_section(self.left, "Workload")
        self.builtins = WorkloadList()
        self.builtins.setObjectName("workloadList")
        self.builtins.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.builtins.setResizeMode(QListView.ResizeMode.Adjust)  # rows follow the list's width as the window does
        for w in builtin_workloads():
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, w.spec)
            item.setToolTip(w.description)
            row = WorkloadRow(w.spec, w.line)
            item.setSizeHint(QSize(0, row.sizeHint().height()))  # as wide as the list: the description elides
            self.builtins.addItem(item)
            self.builtins.setItemWidget(item, row)
        self.builtins.setMinimumHeight(190)
        self.builtins.currentItemChanged.connect(self._on_builtin)
        self.left.addWidget(self.builtins, 1)
        open_row = QHBoxLayout()
        self.open_button = QPushButton("Open a workload file…")
        self.open_button.clicked.connect(self._choose_file)
        open_row.addWidget(self.open_button)
        drop = QLabel("or drop a .py file on this page")
        drop.setObjectName("muted")
        open_row.addWidget(drop, 1)
        self.left.addLayout(open_row)
        self.workload_edit = QLineEdit(session.workload)
        self.workload_edit.setObjectName("monoEdit")
        self.workload_edit.setPlaceholderText("builtin:NAME or /path/to/workload.py")
        self.workload_edit.textChanged.connect(self._on_workload_text)
        self.script_edit = QLineEdit(" ".join(session.script_args))
        self.script_edit.setObjectName("monoEdit")
        self.script_edit.setPlaceholderText("--epochs 3 --data ~/data  (as after `--`)")
        self.script_edit.setToolTip("The training script's own options, split as a shell would; every run of "
                                    "the study gets them")
        self.script_edit.textChanged.connect(self._on_script_text)
        self.script_error = QLabel("")
        self.script_error.setObjectName("errorMessage")
        self.script_error.setWordWrap(True)
        self.script_error.hide()
        self.fit_combo = FittingCombo()  # which fit() call of a script that trains more than once is measured
        self.fit_combo.setToolTip("The script's fit() call every run measures (--fit-call): the calls before it "
                                  "return at once without training, the code after it never runs")
        self.fit_combo.currentIndexChanged.connect(lambda _i: self._show_script_options(refill=False))
        form = QFormLayout()
        form.addRow("Selected", self.workload_edit)
        form.addRow("Script options", self.script_edit)
        form.addRow("", self.script_error)
        form.addRow("Measured fit()", self.fit_combo)
        self.script_form = form
        self.left.addLayout(form)

        add_section(self.left, "Study")
        self.study_edit = PathEdit(str(session.study_path or default_study_dir(session.workload or "workload")),
                                   "A new folder for this study; it can change until the first run starts")
        self.study_edit.setObjectName("monoEdit")
        self.study_edit.editingFinished.connect(self._on_study_edited)
        self.study_button = QPushButton("Choose…")
        self.study_button.clicked.connect(self._choose_study)
        folder = QHBoxLayout()
        folder.addWidget(self.study_edit, 1)
        folder.addWidget(self.study_button)
        self.steps = QSpinBox()
        self.steps.setRange(MIN_STEADY_STEPS, 100_000)  # a floor: the baseline decides what is enough
        self.steps.setSingleStep(50)
        self.steps.setValue(session.steps)
        self.steps.setSuffix(" steps per run")
        self.steps.setToolTip("How long each run trains. The baseline's warm-up and step time decide how many "
                              "steps a speed verdict needs; the baseline page says so and measures again with "
                              "enough when these are too few.")
        study_form = QFormLayout()
        study_form.addRow("Folder", folder)
        study_form.addRow("Length", self.steps)
        seed = QLabel(f"Every run uses seed {session.seed} and the same data order.")
        seed.setObjectName("muted")
        study_form.addRow("", seed)
        self._add_run_on(study_form)
        self.left.addLayout(study_form)
        self.left.addStretch(0)

        self.machine_title = add_section(self.right, "This machine")
        self.env_panel = RunPanel(launcher, stoppable=False)
        self.env_panel.ended.connect(self._on_env_ended)
        self.right.addWidget(self.env_panel)
        self.env_card = FactsCard()
        self.right.addWidget(self.env_card)
        self.policy_card = FactsCard("Recommended precision policy")
        self.right.addWidget(self.policy_card)
        add_section(self.right, "Workload check")
        self.check_panel = RunPanel(launcher, stoppable=False)
        self.check_panel.ended.connect(self._on_check_ended)
        self.check_hint = muted_label("Next loads the workload in the backend and checks that it keeps the contract.")
        self._own_length = ""  # a training script's own length, said once it was checked
        self._own_steps: int | None = None  # the steps the last checked script's own length set
        self._measured_fit: str | None = None  # which fit() call the check measured, in words
        self.right.addWidget(self.check_hint)
        self.right.addWidget(self.check_panel)
        self.right.addStretch(1)
        self._select(session.workload)
        self._show_script_options()
        if session.fit_call and session.fit_call <= self.fit_combo.count():  # a study opened: its recorded choice
            self.fit_combo.setCurrentIndex(session.fit_call - 1)

    # ------------------------------------------------------------ workload choice

    def _select(self, spec: str) -> None:
        match = [self.builtins.item(i) for i in range(self.builtins.count())
                 if self.builtins.item(i).data(Qt.ItemDataRole.UserRole) == spec]
        if match:
            self.builtins.setCurrentItem(match[0])
        else:  # a file of the user's: no built-in stays highlighted
            self.builtins.clearSelection()
            self.builtins.setCurrentRow(-1)
        if self.workload_edit.text() != spec:
            self.workload_edit.setText(spec)

    def _on_builtin(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        if item is not None:
            self.workload_edit.setText(item.data(Qt.ItemDataRole.UserRole))

    def _on_workload_text(self, text: str) -> None:
        current = self.builtins.currentItem()
        if current is not None and current.data(Qt.ItemDataRole.UserRole) != text.strip():
            self.builtins.blockSignals(True)
            self.builtins.clearSelection()
            self.builtins.setCurrentRow(-1)
            self.builtins.blockSignals(False)
        self.study_edit.setText(str(default_study_dir(text.strip() or "workload")))
        self._show_script_options()
        if self.status == ATTENTION:
            self.set_status(RUNNING if self.check_panel.is_running() else "not started")
        self.navigation_changed.emit()

    def _show_script_options(self, refill: bool = True) -> None:
        """The script options row only for a training script (a contract workload takes none), and the choice
        of its fit() call only for a script that calls fit() more than once."""
        spec = self.workload_edit.text().strip()
        self._script = is_script(spec)
        self.script_form.setRowVisible(self.script_edit, self._script)
        if refill:
            calls = fit_calls_in_source(spec) if self._script else []
            self.fit_combo.blockSignals(True)
            self.fit_combo.clear()
            for i, call in enumerate(calls, 1):
                self.fit_combo.addItem(f"{ordinal(i)} call — line {call['line']}: {call['code']}")
            self.fit_combo.blockSignals(False)
        self.script_form.setRowVisible(self.fit_combo, self.fit_combo.count() > 1)
        if not self.session.folder_locked() and self.check_panel.data is None:
            which = f"its {ordinal(nth)} fit() call" if (nth := self.fit_call()) else "its first fit()"
            self.check_hint.setText(f"Next runs the script in the backend up to {which} and checks what it "
                                    "trains." if self._script else
                                    "Next loads the workload in the backend and checks that it keeps the contract.")
        self._on_script_text(self.script_edit.text())

    def fit_call(self) -> int | None:
        """The fit() call chosen (`--fit-call`): None for the first."""
        return self.fit_combo.currentIndex() + 1 if self.fit_combo.currentIndex() > 0 else None

    def script_args(self) -> list[str] | None:
        """The script options as argv ([] for a contract workload), or None while they do not parse."""
        if not self._script:
            return []
        try:
            return script_options(self.script_edit.text())
        except UserError:
            return None

    def _on_script_text(self, text: str) -> None:
        """A parse error is said under the field at once, with its fix; Next waits for it."""
        error = ""
        if self._script:
            try:
                script_options(text)
            except UserError as e:
                error = f"{e.problem[0].upper()}{e.problem[1:]}: {e.fix}."
        self.script_error.setText(error)
        self.script_form.setRowVisible(self.script_error, bool(error))
        self.navigation_changed.emit()

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a workload file", str(self.script_folder()),
                                              "Python files (*.py)")
        if path:
            QSettings().setValue(LAST_SCRIPT_FOLDER, str(Path(path).parent))
            self._select(path)

    def script_folder(self) -> Path:
        """Where "Open a workload file…" starts: the current script's folder, else the folder of the script last
        opened here (kept across starts: the walk's second start opened in ~/tfturbo-studies), else where the
        study's dialogs start (`WizardSession.start_folder`)."""
        workload = self.workload_edit.text().strip() or self.session.workload
        if workload and not workload.startswith("builtin:") and Path(workload).expanduser().parent.is_dir():
            return Path(workload).expanduser().resolve().parent
        last = QSettings().value(LAST_SCRIPT_FOLDER, "")
        if isinstance(last, str) and last and Path(last).is_dir():
            return Path(last)
        return self.session.start_folder()

    def _choose_study(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder for the study", str(Path(self.study_edit.text()).parent))
        if path:
            self.study_edit.setText(str(Path(path) / Path(self.study_edit.text()).name))
            self._on_study_edited()

    def _on_study_edited(self) -> None:
        """A checked study not yet run moves to the folder typed (the folder is created at the check)."""
        if self.session.study is None or self.session.folder_locked():
            return
        try:
            self.session.move_study(Path(self.study_edit.text().strip()))
        except UserError as e:
            self.check_panel.error_box.show_error(e.problem, e.fix)
            self.study_edit.setText(str(self.session.study_path))
            return
        self.check_panel.error_box.clear()
        self.check_hint.setText(self._checked_text())

    def _checked_text(self) -> str:
        what = (f"runs as a training script up to {self._measured_fit or 'its first fit()'}" if self._script
                else "loads and keeps the contract")
        return (f"{self.session.workload} {what}. The study is saved in "
                f"{self.session.study_path}" + ("." if self.session.folder_locked() else
                                               " (you may change the folder until the first run).")
                + self._own_length)

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        if self._dropped_file(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        path = self._dropped_file(event)
        if path is not None:
            self.builtins.clearSelection()
            self._select(path)
            event.acceptProposedAction()

    @staticmethod
    def _dropped_file(event: Any) -> str | None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        paths = [u.toLocalFile() for u in urls if u.isLocalFile() and u.toLocalFile().endswith(".py")]
        return paths[0] if paths else None

    # ------------------------------------------------------------ where it runs

    def _add_run_on(self, form: QFormLayout) -> None:
        """"Run on": this machine, or an ssh host and its Python; checked as typed, applied when valid."""
        self.run_on = FittingCombo()
        self.run_on.addItems(["this machine", "ssh host"])
        self.host_edit = QLineEdit(self.session.host.host if self.session.host else "")
        self.host_edit.setObjectName("monoEdit")
        self.host_edit.setPlaceholderText("[user@]host")
        self.host_edit.setToolTip("As you would type it after `ssh` (~/.ssh/config, keys and agents apply; "
                                  "TFTURBO_SSH sets the ssh command)")
        self.python_edit = QLineEdit(self.session.host.python if self.session.host else remote.DEFAULT_PYTHON)
        self.python_edit.setObjectName("monoEdit")
        self.python_edit.setToolTip("The Python on the host that has tfturbo installed")
        row = QHBoxLayout()
        for widget, stretch in ((self.run_on, 0), (self.host_edit, 2), (self.python_edit, 1)):
            row.addWidget(widget, stretch)
        self.host_error = QLabel("")
        self.host_error.setObjectName("errorMessage")
        self.host_error.setWordWrap(True)
        form.addRow("Run on", row)
        form.addRow("", self.host_error)
        self.run_on_form = form
        self.run_on.setCurrentIndex(1 if self.session.host else 0)
        self.run_on.currentIndexChanged.connect(self._on_run_on)
        for edit in (self.host_edit, self.python_edit):
            edit.textChanged.connect(self._show_host_problem)
            edit.editingFinished.connect(self._apply_run_on)  # not per keystroke: each change asks the host
        self._show_host_problem()

    def host_problem(self) -> str:
        """What is wrong with the ssh host fields, with its fix ('' when valid or when running here)."""
        if self.run_on.currentIndex() == 0:
            return ""
        try:
            run_on(self.host_edit.text(), self.python_edit.text())
        except UserError as e:
            return f"{e.problem[0].upper()}{e.problem[1:]}: {e.fix}."
        return ""

    def _on_run_on(self, *_: Any) -> None:
        self._show_host_problem()
        self._apply_run_on()

    def _show_host_problem(self, *_: Any) -> None:
        """Show the host fields for "ssh host" and say a problem under them as it is typed; Next waits for it."""
        remote_chosen = self.run_on.currentIndex() == 1
        self.host_edit.setVisible(remote_chosen)
        self.python_edit.setVisible(remote_chosen)
        error = self.host_problem()
        self.host_error.setText(error)
        self.run_on_form.setRowVisible(self.host_error, bool(error))
        self.navigation_changed.emit()

    def _apply_run_on(self) -> None:
        """A valid choice becomes the session's (until the check locks it); the hardware report is asked there."""
        if self.host_problem() or self.session.study is not None:
            return
        remote_chosen = self.run_on.currentIndex() == 1
        host = run_on(self.host_edit.text(), self.python_edit.text()) if remote_chosen else None
        if host != self.session.host:
            self.session.host, self.session.environment = host, None
            self._ask_environment()

    # ------------------------------------------------------------ hardware

    def on_enter(self) -> None:
        locked = self.session.folder_locked()
        for widget in (self.study_edit, self.study_button):
            widget.setEnabled(not locked)
        if self.session.study is not None:
            self.check_hint.setText(self._checked_text())
        if not self._env_started and self.session.environment is not None:  # a new study on the same machine
            self._env_started = True
            self._show_environment(self.session.environment)
        if not self._env_started:
            self._env_started = True
            self._ask_environment()

    def _ask_environment(self) -> None:
        """The hardware report of where the study runs (again when "Run on" changes; once the page showed)."""
        where = "this machine" if self.session.host is None else self.session.host.host
        self.machine_title.setText("This machine" if self.session.host is None else f"Host {where}")
        if not self._env_started or self.env_panel.is_running():
            return  # started on entering the page, or again when the report going now ends
        self._env_host = self.session.host
        self.env_card.set_facts([])  # the other machine's report would mislead
        self.policy_card.set_facts([])
        self.env_panel.show()
        self.env_panel.start("env", [], busy_text=f"Asking the backend about {where} (loading TensorFlow)…",
                             log_path=self.session.log_path())

    def _on_env_ended(self, data: RunData) -> None:
        if self._env_host != self.session.host:  # "Run on" changed while it ran: ask the new place
            self._ask_environment()
            return
        doc = data.document
        if doc is None:
            return  # the panel shows the error
        env = Environment.from_dict(doc, "the env document")
        self.session.environment = env
        if self.session.study is not None:
            self.session.study.environment = env
            self.session.study.save()
        self._show_environment(env)

    def _show_environment(self, env: Environment) -> None:
        self.env_panel.hide()
        facts = [("Device", str(env.device or ", ".join(device_names(env)) or "none listed")),
                 ("TensorFlow", str(env.tensorflow or "?")), ("Keras", str(env.keras or "?"))]
        self.env_card.set_facts(facts)
        self.policy_card.set_facts([("Policy", str(env.recommended_policy or "?")),
                                    ("Why", str(env.reason or ""))], emphasize=("Policy",))

    # ------------------------------------------------------------ Next: check the workload

    def show_recorded(self) -> None:
        if self.session.study is not None:
            self.set_status(PASSED)

    def can_go_next(self) -> bool:
        return (bool(self.workload_edit.text().strip()) and not self.check_panel.is_running()
                and self.script_args() is not None and not self.host_problem())

    def next_hint(self) -> str:
        if self.check_panel.is_running():
            return "Checking the workload…"
        if self.script_args() is None:
            return "Fix the script options"
        if self.host_problem():
            return "Fix the ssh host"
        return "" if self.workload_edit.text().strip() else "Choose a workload"

    def request_next(self) -> None:
        if self.session.study is not None:  # already checked; the study exists
            self.advance.emit()
            return
        self._apply_run_on()  # a host typed and not yet left: the check runs there
        spec = self.workload_edit.text().strip()
        self.check_panel.start("audit", self.session.audit_argv(spec, self.script_args() or [], self.fit_call()),
                               busy_text=f"Loading {spec} in the backend…", log_path=self.session.log_path())
        self.set_status(RUNNING)

    def _on_check_ended(self, data: RunData) -> None:
        if data.status != protocol.RunStatus.COMPLETED or data.document is None:
            self.set_status(ATTENTION)
            return
        self.session.workload = self.workload_edit.text().strip()
        self.session.script_args = self.script_args() or []
        self.session.fit_call = self.fit_call() if self._script else None
        self._measured_fit = measured_fit_text(data.document.get("workload"), choose="")  # chosen above, before
        own = OwnLength.of(data.document)
        self._own_length = ""
        untouched = self.steps.value() in (DEFAULT_STEPS, self._own_steps)  # not a length the user typed
        if own and untouched:
            # the script's own length, not tfturbo's default (3 epochs = 96 steps became 300 silently)
            self.steps.setValue(own.run_steps)
            self._own_length = f" Each run trains {own.words()}."
        elif untouched and self._own_steps is not None:  # the last script's length is not this workload's
            self.steps.setValue(DEFAULT_STEPS)
        self._own_steps = self.steps.value() if own and untouched else None
        self.session.steps = self.steps.value()
        self.session.study_path = Path(self.study_edit.text()).expanduser()
        try:
            self.session.ensure_study()
        except UserError as e:
            self.check_panel.error_box.show_error(e.problem, e.fix)
            self.set_status(ATTENTION)
            return
        self.session.record_audit(findings_in(data.document.get("findings")))
        for widget in (self.builtins, self.workload_edit, self.script_edit, self.fit_combo, self.open_button,
                       self.steps, self.run_on, self.host_edit, self.python_edit):
            widget.setEnabled(False)  # checked: File -> New study to choose another
            widget.setToolTip("Checked and fixed for this study; File → New study starts another")
        self.setAcceptDrops(False)
        self.check_hint.setText(self._checked_text())
        self.set_status(PASSED)
        self.advance.emit()
