"""Page 2 — Profile & baseline: prove the job is compute-bound, then measure it as it is.

The input probe runs first. An input-bound job is stopped here with the
tf.data advice: precision and XLA make the device faster, which does not help
a device that waits for data. Otherwise the baseline (the script as written:
its own policy, XLA and steps per call; the profiler window on) is measured
with live plots, and its profile can be opened in TensorBoard.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from tfturbo import protocol
from tfturbo.findings import findings_in
from tfturbo.runfiles import RUNS_DIR
from tfturbo.tune.study import Rung
from tfturbo.compare import steps_per_s_ci95
from tfturbo.input_probe import InputProbe
from tfturbo.numbers import finite
from tfturbo.run_summary import RunSummary
from tfturbo.verdicts import (COMPUTE_NOISE, ProbeBand, ProbeVerdict, compute_slower_than_training,
                              input_share_fact, probe_training_note)

from ..cards import FactsCard, run_facts
from ..code_block import CodeBlock
from ..error_box import ErrorBox
from ..findings_panel import FindingsPanel
from ..labels import button_row, muted_label, sentence
from ..live_plots import RunPlots
from ..profile_view import ProfileView, rung_profile, under_plots
from ..run_data import RunData
from ..run_process import Launcher
from ..failures import explain
from ..run_gate import GATE
from ..session import WizardSession, probe_argv
from ..step_status import ATTENTION, PASSED, RUNNING
from ..tensorboard_launcher import TensorBoardLauncher
from .base import FINISHED_NOTE, WizardPage, add_section



NOTHING_FOUND = "The input probe and the baseline run found nothing to fix."  # live, and reopened


def probe_facts(doc: InputProbe, baseline: RunSummary | None = None) -> list[tuple[str, str]]:
    """The probe's card; with the baseline run's summary, its training rate says how it relates to the run's
    steady speed shown in the card below (`probe_training_note`)."""
    def rate(v: float | None, unit: str = "steps/s") -> str:
        return f"{v:.1f} {unit}" if isinstance(v, (int, float)) else "n/a"

    verdict = doc.verdict
    # the moderate band is a compute-bound job with a warning beside it: the verdict says so itself
    moderate = doc.band == ProbeBand.MODERATE
    facts = [("Verdict", "input-bound — the device waits for data" if verdict == ProbeVerdict.INPUT_BOUND
              else "compute-bound, moderately input-bound (see the warning)" if moderate and
              verdict == ProbeVerdict.COMPUTE_BOUND
              else "compute-bound — the device is the limit" if verdict == ProbeVerdict.COMPUTE_BOUND else str(verdict))]
    if isinstance(doc.input_fraction, (int, float)):
        facts.append(input_share_fact(doc))
    # a few seconds each, one after the other on a shared machine: they decide input- or compute-bound; the
    # baseline card below has the measured speed (the probe's training rate beside it read as a contradiction)
    compute = rate(doc.compute_steps_per_s) + (f" ({COMPUTE_NOISE})" if compute_slower_than_training(doc) else "")
    training = rate(doc.train_steps_per_s)
    if baseline is not None:
        median, (lo, hi) = baseline.step_time()
        steady, ci = steps_per_s_ci95(baseline, (lo, hi) if finite(lo) and finite(hi) and lo > 0 else None)
        note = probe_training_note(doc, steady, ci, median if finite(median) else None)
        training += f" ({note})" if note else ""
    facts += [("Input pipeline alone", rate(doc.data_steps_per_s, "batches/s")), ("Compute alone", compute),
              ("Both (training)", training)]
    return facts


class BaselinePage(WizardPage):
    title = "Profile & baseline"
    intro = ("First prove that the device, not the input pipeline, limits the step rate; then measure the job "
             "as its script writes it (its own precision, XLA and steps per call) with the profiler capturing "
             "steady-state steps. Warm-up is excluded and shown on its own.")

    def __init__(self, session: WizardSession, launcher: Launcher, parent: QWidget | None = None):
        super().__init__(session, launcher, parent)
        self.stage = ""  # "probe" | "run"
        self.rung: Rung | None = None
        self.input_bound = False
        self.measure_button = QPushButton("Measure baseline")
        self.measure_button.setObjectName("primaryButton")
        self.measure_button.clicked.connect(self.start)
        self.anyway_button = QPushButton("Measure the baseline anyway")
        self.anyway_button.clicked.connect(self.start_run)
        self.anyway_button.hide()
        self.left.addLayout(button_row(self.measure_button, self.anyway_button))
        self.settings_label = muted_label()
        self.left.addWidget(self.settings_label)
        self.add_run_panel(launcher, self._on_ended)
        self.verdict_card = FactsCard("Input pipeline probe (a few seconds each)")
        self.left.addWidget(self.verdict_card)
        self.input_warning = QLabel(
            "This job is input-bound: mixed precision and XLA would not make it faster. Fix the input pipeline "
            "first (see the finding below), then measure again.")
        self.input_warning.setObjectName("warningText")
        self.input_warning.setWordWrap(True)
        self.input_warning.hide()
        self.left.addWidget(self.input_warning)
        self.results = FactsCard("Baseline")
        self.left.addWidget(self.results)
        # the run length a verdict needs, from the baseline's warm-up and step time (trials/run_length.py)
        self.length_note = QLabel("")
        self.length_note.setObjectName("warningText")
        self.length_note.setWordWrap(True)
        self.length_note.hide()
        self.left.addWidget(self.length_note)
        self.findings = FindingsPanel()
        self.findings.set_empty_text("No findings yet: the input probe and the baseline run report here.")
        self.left.addWidget(self.findings, 1)

        self.tensorboard = TensorBoardLauncher(self)
        self.tensorboard_button = QPushButton("Open TensorBoard")
        self.tensorboard_button.setToolTip("tensorboard --logdir STUDY/runs: the profile and every run's scalars")
        self.tensorboard_button.setEnabled(False)
        self.tensorboard_button.clicked.connect(self.open_tensorboard)
        self.tensorboard.failed.connect(self._on_tensorboard_failed)
        self.tensorboard.url_ready.connect(lambda url: self.tensorboard_note.setText(f"TensorBoard: {url}"))
        self.tensorboard_note: QLabel = QLabel("")
        self.tensorboard_note.setObjectName("muted")
        self.tensorboard_error = ErrorBox()
        self.tensorboard_url = CodeBlock(max_lines=1)  # shown when no browser opened the address
        self.tensorboard_url.hide()
        self.tensorboard.not_opened.connect(self._on_tensorboard_not_opened)
        top = QHBoxLayout()
        add_section(top, "Live measurements")
        top.addStretch(1)
        top.addWidget(self.tensorboard_note)
        top.addWidget(self.tensorboard_button)
        self.right.addLayout(top)
        self.right.addWidget(self.tensorboard_error)
        self.right.addWidget(self.tensorboard_url)
        self.plots = RunPlots()
        self.profile_view = ProfileView()  # where the baseline's time goes, once its profile is read
        self.profile_view.hide()
        self.right.addWidget(under_plots(self.plots, self.profile_view), 1)

    page_key = "baseline"

    def stages(self) -> list[str]:
        return ["baseline", *super().stages()]

    def show_recorded(self) -> None:
        """A continued study: the probe and the baseline as they were measured, from the study's files (the page's
        plots and cards were empty, its findings said none had been looked for)."""
        probe = self.session.study.probe if self.session.study is not None else None
        if probe is not None and probe.verdict:  # the probe's card and findings, as its run showed them
            self.verdict_card.set_facts(probe_facts(probe))
            self.findings.add_findings(findings_in(probe.findings))
        if self.session.baseline is not None:
            self.rung = self.session.baseline
            data = self.session.data_of(self.rung)
            if data is not None:
                self.stage = "run"
                self.plots.show_run(data)
                self.run_panel.show_finished(data)
                self.findings.add_findings(data.findings)
                self.measure_button.setText("Measure baseline again")
                if data.summary is not None:
                    self.show_results(data.summary)
                    if probe is not None and probe.verdict:
                        self.verdict_card.set_facts(probe_facts(probe, data.summary))
                self.profile_view.set_profile(rung_profile(self.session, self.rung)[0])
                self.profile_view.reveal()
                self.tensorboard_button.setEnabled(True)  # its profile and scalars are in the study's runs
                self.findings.set_empty_text(NOTHING_FOUND)
                self.findings.add_findings([])  # refresh the empty text's visibility
            self.set_status(PASSED)
        self.update_controls()

    def available(self) -> str:
        return "" if self.session.study is not None else "choose and check a workload first"

    def show_results(self, summary: RunSummary) -> None:
        """The baseline run's facts, its peak memory the configuration's (`WizardSession.configuration_peak`, as
        the compare table and the report give it): refreshed as later trials' runs of the baseline's
        configuration count in it (`refresh_results`)."""
        rung = self.session.baseline
        facts = run_facts(summary, self.session.configuration_peak(rung.settings) if rung is not None else None)
        if [(k, v.text()) for k, v in self.results.values.items()] != facts:  # unchanged: not laid out again
            self.results.set_facts(facts)

    def refresh_results(self) -> None:
        """The baseline's facts again, after another step's trial measured more runs of its configuration (the
        main window calls it as a step's status changes: done on a visit, the card's new row showed a sideways
        scroll bar for a moment)."""
        data = self.session.data_of(self.session.baseline) if self.session.baseline is not None else None
        if data is not None and data.summary is not None and not self.run_panel.is_running():
            self.show_results(data.summary)

    def on_enter(self) -> None:
        s = self.session.baseline_settings()
        window = s.effective_profile()
        # the backend places the window after the warm-up it measures, so its steps are known only then
        profile = (f"profiler on {window[1] - window[0]} steady steps after warm-up" if window else "no profiler window")
        data = self.run_panel.data
        if self.stage == "run" and data is not None and data.profile_windows:
            start, stop = data.profile_windows[0]
            profile = f"profiler on steps {int(start)}–{int(stop) - 1}" if stop != float("inf") \
                else f"profiler from step {int(start)}"
        early = (f"; stops early once the step-time interval is within ±{s.until_ci:.0%}" if s.until_ci
                 else "")
        self.settings_label.setText(f"{s.label()}, {s.steps} steps, seed {s.seed}, {profile}{early}.")

    # ------------------------------------------------------------ probe, then run

    def start(self) -> None:
        if self.run_panel.is_running() or self.training_blocked():
            return
        self.stage = "probe"
        self.findings.set_findings([])
        self.verdict_card.hide()
        self.input_warning.hide()
        self.anyway_button.hide()
        self.measure_button.setEnabled(False)
        self.set_status(RUNNING)
        self.run_panel.start("probe-input", probe_argv(self.session.workload, self.session.seed,
                                                        script_args=self.session.script_args,
                                                        fit_call=self.session.fit_call),
                             busy_text="Probing the input pipeline (loading TensorFlow)…",
                             log_path=self.session.log_path())
        self.navigation_changed.emit()  # "Measuring…", not "Measure the baseline first"

    def start_run(self) -> None:
        if self.run_panel.is_running() or self.training_blocked():
            return
        self.stage = "run"
        self.anyway_button.hide()
        self.measure_button.setEnabled(False)
        self.set_status(RUNNING)
        self.rung, argv = self.session.start_baseline()
        data = self.run_panel.start("run", argv, name="baseline", log_path=self.session.log_path(),
                                    busy_text="Starting the baseline run (loading TensorFlow)…")
        self.plots.show_run(data)
        self.tensorboard_button.setEnabled(True)
        self.navigation_changed.emit()

    def _on_events(self, events: list) -> None:
        if any(e.get("type") in (protocol.FINDING, protocol.RESULT) for e in events) and self.run_panel.data:
            self.findings.add_findings(self.run_panel.data.findings)
        if any(e.get("type") == protocol.PHASE for e in events):
            self.on_enter()  # the profiler window's real steps: the text and the shaded band agree

    def update_controls(self) -> None:
        why = GATE.why_busy() if not self.run_panel.is_running() else ""
        free = not why and not self.run_panel.is_running() and not self.session.finished
        self.measure_button.setEnabled(free)
        self.anyway_button.setEnabled(free)
        self.measure_button.setVisible(not self.session.finished)  # a decided step: only what it measured
        why = FINISHED_NOTE if self.session.finished else why
        self.busy_note.setText(why[0].upper() + why[1:] if why else "")
        self.busy_note.setVisible(bool(why))

    def run_action(self) -> None:
        if self.measure_button.isEnabled():
            self.start()

    def _on_ended(self, data: RunData) -> None:
        self.plots.refresh()  # paint the last samples now, not at the next timer tick
        self.findings.add_findings(data.findings)
        if self.stage == "probe":
            self._probe_ended(data)
        else:
            self._run_ended(data)

    def _probe_ended(self, data: RunData) -> None:
        doc = data.document
        if doc is None or self.run_panel.process.stop_requested:  # failed, or the user stopped it
            self.update_controls()
            self.set_status(ATTENTION)
            return
        probe = InputProbe.from_dict(doc)
        self.session.record_probe(probe)
        self.verdict_card.set_facts(probe_facts(probe))
        self.input_bound = probe.verdict == ProbeVerdict.INPUT_BOUND
        if self.input_bound:
            self.input_warning.show()
            self.anyway_button.show()
            self.measure_button.setText("Check the input pipeline again")
            self.update_controls()
            self.set_status(ATTENTION)
            return
        self.start_run()

    def _run_ended(self, data: RunData) -> None:
        self.measure_button.setText("Measure baseline again")
        self.update_controls()
        rung = self.rung
        assert rung is not None, "the baseline run started (start_run)"
        self.session.finish_baseline(rung, data)
        steps = len(data.step.view())
        self.findings.set_empty_text(
            NOTHING_FOUND if data.status == protocol.RunStatus.COMPLETED
            else f"The baseline run {data.status} after {steps} step{'s' if steps != 1 else ''}: too few to look "
                 "for problems. Measure the baseline again.")
        self.findings.add_findings([])  # refresh the empty text's visibility
        self.on_enter()
        why = explain(data.status, data.error, rung.settings)
        if why is not None:
            self.run_panel.error_box.show_error(why.message, why.fix, why.details)
        if data.summary is not None:
            self.show_results(data.summary)
            probe = self.session.study.probe if self.session.study is not None else None
            if probe is not None and probe.verdict:
                self.verdict_card.set_facts(probe_facts(probe, data.summary))
        self.profile_view.set_profile(rung_profile(self.session, self.rung)[0])
        self.profile_view.reveal()
        ok = self.session.baseline is not None and self.session.baseline is self.rung
        note, needed = self.session.run_length() if ok else ("", None)
        if needed:  # the next baseline trains long enough; every trial's runs follow the baseline's length
            self.session.lengthen_runs(needed)
            note = sentence(note) + f" Measure baseline again to train {needed} steps per run."
        self.length_note.setText(sentence(note) if note and not needed else note)
        self.length_note.setVisible(bool(note))
        self.set_status(PASSED if ok and not self.input_bound else ATTENTION)

    # ------------------------------------------------------------ navigation and TensorBoard

    def can_go_next(self) -> bool:
        return self.session.baseline is not None and not self.run_panel.is_running()

    def next_hint(self) -> str:
        if self.run_panel.is_running():
            return "Measuring…"
        if self.session.baseline is None:
            return "The job is input-bound: fix the input pipeline first" if self.input_bound \
                else "Measure the baseline first"
        return ""

    def open_tensorboard(self) -> None:
        if self.session.study is not None:
            self.tensorboard_error.clear()
            self.tensorboard_note.setText("Starting TensorBoard…")
            self.tensorboard.open(str(self.session.study.path / RUNS_DIR))

    def _on_tensorboard_not_opened(self, url: str) -> None:
        self.tensorboard_note.setText("No browser opened TensorBoard: open this address yourself")
        self.tensorboard_url.set_text(url)
        self.tensorboard_url.show()

    def _on_tensorboard_failed(self, message: str) -> None:
        self.tensorboard_note.setText("")
        self.tensorboard_error.show_error(message)
