"""A real backend run, driven by the GUI's run controller, survives being killed and being stopped (issue 7).

Each test trains builtin:mlp through `RunPanel` (QProcess, the same launcher
the wizard uses) and acts on it at a known moment: SIGKILL mid-run, or the
Stop button during XLA warm-up/compilation and during steady training.
"""

from __future__ import annotations

import json
import os
import signal

import pytest
from hardening_helpers import ENDLESS, mlp_argv
from PySide6.QtCore import Qt

from tfturbo import protocol, runfiles
from tfturbo.backend_client import backend_command
from tfturbo_gui.run_browser import RunBrowser
from tfturbo_gui.run_panel import RunPanel

START_TIMEOUT_MS = 120_000  # TensorFlow import and model build on a busy 2-core machine


def start_mlp(qtbot, out, jit: bool = False):
    panel = RunPanel(backend_command)
    qtbot.addWidget(panel)
    panel.show()
    data = panel.start("run", mlp_argv(out, jit=jit), name=out.name, log_path=str(out.parent / f"{out.name}.log"))
    return panel, data


def test_a_killed_backend_shows_as_crashed_within_2_s_and_keeps_what_it_wrote(qtbot, tmp_path):
    out = tmp_path / "killed"
    panel, data = start_mlp(qtbot, out)
    qtbot.waitUntil(lambda: len(data.step.view()) >= 30, timeout=START_TIMEOUT_MS)
    os.kill(panel.process.pid(), signal.SIGKILL)

    qtbot.waitUntil(lambda: data.status == protocol.RunStatus.CRASHED, timeout=2_000)
    assert "ended unexpectedly" in panel.state.text() and "steps recorded" in panel.state.text()
    assert not panel.stop_button.isVisible()

    record = runfiles.load_run(out)
    assert record.status == protocol.RunStatus.CRASHED and record.summary is None
    assert record.settings["settings"]["steps"] == ENDLESS  # run.yaml, written first, is intact
    steps = record.steps().step
    assert len(steps) >= 1 and steps == list(range(1, len(steps) + 1))  # flushed per line, in order
    assert any("killed" in w for w in record.warnings)

    browser = RunBrowser()
    qtbot.addWidget(browser)
    browser.add_runs("study", [record], [])
    item = browser.tree.topLevelItem(0).child(0)
    assert (item.text(0), item.text(1)) == ("killed", protocol.RunStatus.CRASHED)
    assert "killed before it finished" in browser.warnings.text()


@pytest.mark.parametrize("phase, jit", [(protocol.WARMUP, True), (protocol.TRAINING, False)],
                         ids=["during-xla-warmup", "during-training"])
def test_stop_cancels_within_5_s_and_writes_the_summary(qtbot, tmp_path, phase, jit):
    out = tmp_path / f"stopped-{phase}"
    panel, data = start_mlp(qtbot, out, jit=jit)
    qtbot.waitUntil(lambda: data.phase == phase, timeout=START_TIMEOUT_MS)
    qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: not panel.is_running() and data.finished, timeout=5_000)
    assert data.status == protocol.RunStatus.CANCELLED
    assert panel.state.text().startswith("Stopped by you")
    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == protocol.RunStatus.CANCELLED
    assert summary["settings"]["jit_compile"] is jit
    assert 1 <= summary["steps_completed"] < ENDLESS
