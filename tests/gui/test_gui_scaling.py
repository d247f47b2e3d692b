"""The Batch size page's scaling section on the fake backend: offered only with two or more GPUs, measured
through the wizard's run panel (one training at a time), shown as a table and a finding, saved for the report."""

from tests.gui.gui_helpers import fake_launcher, make_window
from PySide6.QtCore import Qt

from tfturbo.environment import Environment
from tfturbo.scaling import ScalingResult
from tfturbo_gui.session import scaling_offer
from tfturbo_gui.step_status import PASSED

LEFT = Qt.MouseButton.LeftButton


def test_scaling_is_offered_only_over_two_or_more_gpus():
    cpu_devices = [{"type": "CPU", "name": "x86"}]
    cpu = Environment.from_dict({"devices": cpu_devices})
    gpu = lambda n: Environment.from_dict(  # noqa: E731
        {"devices": cpu_devices + [{"type": "GPU", "name": f"g{i}"} for i in range(n)]})
    assert scaling_offer(cpu)[0] == [] and "only the CPU" in scaling_offer(cpu)[1]
    assert scaling_offer(gpu(1))[0] == [] and "one GPU" in scaling_offer(gpu(1))[1]
    assert scaling_offer(gpu(2)) == ([1, 2], "") and scaling_offer(gpu(6)) == ([1, 2, 4, 6], "")
    assert scaling_offer(None)[1] == "the hardware report has not arrived yet"


def test_on_a_cpu_the_button_is_disabled_and_says_why(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path)
    section = window.pages[4].scaling
    section.update_controls()
    assert not section.button.isEnabled()
    assert section.why_not.text().startswith("This machine has only the CPU (replicas would share its cores)")
    # in words, naming the button (issue 42 walk: the page gave `tfturbo scaling WORKLOAD --replicas 1,2 ...`)
    assert section.why_not.text().endswith("open this study there and press “Measure scaling”.")
    assert "tfturbo" not in section.why_not.text() and "--" not in section.why_not.text()
    # the command line only as the secondary detail to copy, labelled as such, for this study
    assert section.command_title.text().startswith("Command line equivalent")
    assert not section.command.isHidden() and section.command.text().startswith("tfturbo scaling ")
    assert section.command.text() == "tfturbo scaling builtin:mlp --replicas 1,2 --out STUDY_DIR"  # no study yet
    window.session.ensure_study()
    section.update_controls()
    assert section.command.text().endswith(f"--replicas 1,2 --out {window.session.study_path}")


def test_measure_scaling_on_two_gpus_shows_the_table_and_the_finding_and_saves_it(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, launcher=fake_launcher(gpus=2))
    window.pages[0].request_next()
    qtbot.waitUntil(lambda: window.current() == 1, timeout=20_000)
    baseline = window.pages[1]
    qtbot.mouseClick(baseline.measure_button, LEFT)
    qtbot.waitUntil(lambda: baseline.status == PASSED, timeout=20_000)
    window.goto(4)
    page = window.pages[4]
    section = page.scaling
    assert section.button.isEnabled() and section.button.text() == "Measure scaling on 1, 2 GPUs"
    qtbot.mouseClick(section.button, LEFT)
    assert section.is_running() and not page.run_button.isEnabled()  # one training at a time
    assert window.hint.text() == "Measuring scaling…"
    qtbot.waitUntil(lambda: section.result is not None, timeout=60_000)

    rows = section.card.values
    assert set(rows) == {"1 GPU", "2 GPUs"} and "efficiency 0.6" in rows["2 GPUs"].text()
    assert "samples/s [" in rows["1 GPU"].text()
    assert section.interpretation.text().startswith("At 2 replicas (mirrored) the job trains 1.2")
    assert section.findings.codes() == ["SCALING_INEFFICIENT"]
    assert not section.button.isEnabled() and section.why_not.text().startswith("Measured; saved in")
    saved = ScalingResult.load(tmp_path / "study")
    assert saved == section.result and saved.strategy == "mirrored" and saved.per_replica_batch_size == 64
    runs = sorted(p.name for p in (tmp_path / "study" / "scaling" / "runs").iterdir())
    assert {"n2-a1", "n2-b1"} <= set(runs) and all(r.startswith("n2-") for r in runs)
    assert page.run_button.isEnabled()  # the gate is free again
