"""`tfturbo tune`'s text output says the probe's share in the words every front end uses."""

from __future__ import annotations

from pathlib import Path

from tfturbo.console import render_probe as render_probe_of
from tfturbo.input_probe import InputProbe
from tfturbo.tune.render import render_study
from tfturbo.tune.study import Study

NOISE = {"verdict": "compute_bound", "band": "low", "input_fraction": 0.4076, "input_explains_gap": False,
         "step_ms": {"data": 0.16, "compute": 1.17, "train": 1.976}}


def input_lines(doc: dict) -> list[str]:
    """`tfturbo tune`'s input lines for a study that recorded these probe documents."""
    study = Study(Path("s"), "w.py", {}, **{key: InputProbe.from_dict(probe) for key, probe in doc.items()})
    return [line for line in render_study(study).splitlines() if line.startswith("input")]


def render_probe(doc: dict) -> str:
    """`tfturbo probe-input`'s text for a document as the backend writes it."""
    return render_probe_of(InputProbe.from_dict(doc))


def test_a_share_the_input_does_not_explain_is_not_called_waiting_for_data():
    """A user script's tune printed "input: compute-bound, 41% of the step waits for data": the input alone
    took 0.16 ms a batch, and the 41% was host noise (the wizard's card and the probe line said so)."""
    [line] = input_lines({"probe": NOISE})
    assert line == ("input: compute-bound; slower than compute alone: 41% of a step (0.81 ms): not the input, "
                    "which alone takes 0.16 ms a batch — host noise")
    assert "waits for data" not in line


def test_an_input_bound_job_and_its_fixed_pipeline_say_the_time_waiting():
    bound = {"verdict": "input_bound", "input_fraction": 0.62, "input_explains_gap": True,
             "step_ms": {"data": 5.0, "compute": 1.0, "train": 5.2}}
    fixed = {"verdict": "compute_bound", "input_fraction": 0.03, "input_explains_gap": True,
             "step_ms": {"data": 0.2, "compute": 1.0, "train": 1.03}}
    assert input_lines({"probe": bound, "probe_input_fixes": fixed}) == [
        "input: input-bound; time waiting for input: 62%",
        "input with the automatic tf.data fixes: compute-bound; time waiting for input: 3%"]


def test_the_probe_command_says_it_in_the_same_words():
    text = render_probe({**NOISE, "data_steps_per_s": 6250.0, "compute_steps_per_s": 855.0,
                         "train_steps_per_s": 506.0})
    assert ("input share        slower than compute alone: 41% of a step (0.81 ms): not the input, which alone "
            "takes 0.16 ms a batch — host noise (low band, XProf's)") in text
    assert "waiting for data" not in text


NOISY_COMPUTE = {"verdict": "compute_bound", "band": "low", "input_fraction": 0.0, "input_explains_gap": False,
                 "data_steps_per_s": 4100.0, "compute_steps_per_s": 523.5, "train_steps_per_s": 750.2,
                 "step_ms": {"data": 0.244, "compute": 1.91, "train": 1.333}}


def test_compute_alone_slower_than_training_is_said_as_noise_not_a_finding():
    """Issue 42: the probe said "0% waiting for input" and "compute alone 523.5 steps/s" (slower than training,
    750.2) with nothing to say why; the cached step cannot be slower than real training but by the probes' noise."""
    [line] = input_lines({"probe": NOISY_COMPUTE})
    assert line == ("input: compute-bound; time waiting for input: 0%: none seen — compute alone ran slower than "
                    "training (523.5 vs 750.2 steps/s), noise of a few-second probe, not a finding")
    text = render_probe(NOISY_COMPUTE)
    assert ("training step      523.5 steps/s (data already in memory; slower than training: noise of a "
            "few-second probe, not a finding)") in text
    assert "none seen — compute alone ran slower than training (523.5 vs 750.2 steps/s)" in text
    assert "findings" not in text.lower()
