"""A study killed at any point continues with the same command: finished runs re-used, the same decisions.

The runner answers from recorded summaries keyed by the run's name (so a run gives the same summary whenever
it is measured) and writes each run's summary.json into its run directory as the backend does. The study
runs in a forked child that SIGKILLs itself at a chosen point; the parent resumes it, and the result is
compared with an uninterrupted study on the same recorded runs.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
from pathlib import Path

import pytest
import yaml

from tfturbo import runfiles
from tfturbo.errors import OutputDirError
from tfturbo.numbers import counted
from tfturbo.tune import study as study_mod
from tfturbo.tune.ladder import Ladder, TuneOptions

from tests.tune.tune_fakes import FakeBackend, summary
from test_study import gpu_like

TIMES = re.compile(r"^(\s*)(created|run_seconds): .*$", re.MULTILINE)


class RecordedRuns(FakeBackend):
    """The fake backend with each run's noise fixed by its name, writing run directories; `kill(name, when)`
    may end the process there (when: "during" a run, "after" it)."""

    def __init__(self, kill_at: tuple[str, str] | None = None, **kw):
        super().__init__(gpu_like(summary), recommended="mixed_bfloat16", available_memory=8 << 30, **kw)
        self.kill_at = kill_at
        self.measured: list[str] = []

    def __call__(self, command, argv, on_event=None, stderr_path=None, cancel=None, env=None):
        if command != "run":
            return super().__call__(command, argv, on_event, stderr_path, cancel, env)
        run_dir = Path(argv[argv.index("--out") + 1])
        name = run_dir.name
        runfiles.prepare_run_dir(run_dir)  # as the backend: an existing run is refused
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / runfiles.EVENTS).write_text('{"v": 1, "type": "hello"}\n')
        if self.kill_at == (name, "during"):
            os.kill(os.getpid(), signal.SIGKILL)
        self.measured.append(name)
        self._rng = __import__("numpy").random.default_rng(int(hashlib.sha1(name.encode()).hexdigest()[:8], 16))
        result = super().__call__(command, argv, on_event, stderr_path, cancel, env)
        runfiles.write_json_atomic(run_dir / runfiles.SUMMARY, result.document)
        if self.kill_at == (name, "after"):
            os.kill(os.getpid(), signal.SIGKILL)
        return result


def options(out: Path) -> TuneOptions:
    return TuneOptions("builtin:fake", out, steps=100, min_replicates=2, max_replicates=3)


def killed(out: Path, runner: RecordedRuns, monkeypatch=None, kill_on_save: int | None = None,
           opts: TuneOptions | None = None) -> None:
    """The study in a child process that is SIGKILLed where the runner (or the nth study.yaml write) says."""
    pid = os.fork()
    if pid == 0:
        if kill_on_save is not None:
            writes = [0]
            real = study_mod.write_yaml

            def half_written(path, data):
                writes[0] += 1
                if writes[0] == kill_on_save:  # the temporary file half written, then the kill: never renamed
                    Path(str(path) + ".tmp").write_text(yaml.safe_dump(data)[:200])
                    os.kill(os.getpid(), signal.SIGKILL)
                real(path, data)
            study_mod.write_yaml = half_written
        try:
            Ladder(opts or options(out), runner=runner).run()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def as_read(out: Path) -> str:
    """study.yaml apart from times and the study's own folder (the runs' XLA cache is under it)."""
    return TIMES.sub(r"\1\2: <time>", (out / "study.yaml").read_text()).replace(str(out), "STUDY")


def finished_runs(out: Path) -> set[str]:
    return {p.name for p in (out / "runs").iterdir() if (p / runfiles.SUMMARY).exists()}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole") / "s"
    runner = RecordedRuns()
    Ladder(options(out), runner=runner).run()
    return as_read(out), runner.measured


@pytest.mark.parametrize("kill_at", [("03-xla.a2", "during"), ("02-mixed_bfloat16.b2", "after"),
                                     ("06-batch256.a2", "during"), (None, "save")])
def test_a_killed_study_resumes_to_the_same_decisions_measuring_no_finished_run_twice(tmp_path, uninterrupted,
                                                                                      kill_at):
    whole, all_runs = uninterrupted
    out = tmp_path / "s"
    name, when = kill_at
    killed(out, RecordedRuns(kill_at=kill_at if name else None), kill_on_save=9 if when == "save" else None)
    before = finished_runs(out)
    assert yaml.safe_load((out / "study.yaml").read_text())["status"] == "running"  # what a kill leaves
    lines = []
    resumed = RecordedRuns()
    Ladder(options(out), runner=resumed, say=lines.append, resume=True).run()
    # no finished run measured again — except the other half of a paired replicate (pairs 2..N are one run-pair
    # process): a pair with a missing summary is measured again as a whole, both folders cleared first
    half_pair = {name, re.sub(r"\.([ab])(\d+)$", lambda m: f".{'b' if m[1] == 'a' else 'a'}{m[2]}", name)} \
        if name and not name.endswith("1") else set()
    assert set(resumed.measured) & before <= half_pair
    if kill_at == ("03-xla.a2", "during"):
        assert "03-xla.b2" in before and "03-xla.b2" in resumed.measured  # its pair was half written
    assert sorted(set(resumed.measured) | before) == sorted(set(all_runs))
    assert as_read(out) == whole
    reused = before - set(resumed.measured)
    assert any(line.startswith(f"resume: {counted(len(reused), 'finished run')} re-used") for line in lines) or not reused


def test_a_finished_study_is_not_measured_again_without_restart(tmp_path):
    out = tmp_path / "s"
    Ladder(options(out), runner=RecordedRuns()).run()
    with pytest.raises(OutputDirError, match="already holds a finished study"):
        Ladder(options(out), runner=RecordedRuns(), resume=True).run()


def test_resuming_with_other_options_is_refused(tmp_path):
    out = tmp_path / "s"
    killed(out, RecordedRuns(kill_at=("02-mixed_bfloat16", "during")))  # its full-length run: the gate's
    other = options(out)
    other.steps = 50
    with pytest.raises(OutputDirError, match="other options .*steps"):
        Ladder(other, runner=RecordedRuns(), resume=True).run()


def test_the_same_command_continues_and_restart_starts_over(tmp_path, monkeypatch, capsys):
    from tfturbo import cli
    from tfturbo.tune import ladder as ladder_mod

    out = tmp_path / "s"
    killed(out, RecordedRuns(kill_at=("03-xla", "after")))
    before = finished_runs(out)
    argv = ["tune", "builtin:fake", "--out", str(out), "--steps", "100", "--min-replicates", "2",
            "--max-replicates", "3", "--no-report", "--json"]
    resumed = RecordedRuns()
    monkeypatch.setattr(ladder_mod, "run_backend", resumed)
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert f"resume: continuing the unfinished study in {out}" in err  # one line says so
    assert not set(resumed.measured) & before
    again = RecordedRuns()
    monkeypatch.setattr(ladder_mod, "run_backend", again)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)  # a script: the flag is the confirmation
    assert cli.main(argv + ["--restart"]) == 0
    assert "restart: deleted the study" in capsys.readouterr().err
    assert set(again.measured) >= before  # everything measured again from the start


def script_options(out: Path) -> TuneOptions:
    """A training script's study: its runs cannot share a process, so each trial's reference arm would train
    the reference configuration's full length again (issue 40)."""
    script = out.parent / "train.py"
    script.write_text("print('trains')\n")
    return TuneOptions(str(script), out, steps=100, min_replicates=2, max_replicates=3)


@pytest.mark.parametrize("kill_at", [("02-mixed_bfloat16", "after"), ("03-xla.a2", "during")])
def test_a_scripts_study_trains_each_reference_once_and_resumes_to_the_same_study(tmp_path, kill_at):
    """Nothing trained twice: the baseline configuration is trained the full length with validation once (its
    rung's own run), and each later trial takes its reference run from the study (plan text says which). A
    study killed just after a trial's gate run, or in a speed pair, resumes to the same study.yaml."""
    whole_out = tmp_path / "whole" / "s"
    whole_out.parent.mkdir()
    lines: list[str] = []
    runner = RecordedRuns()
    Ladder(script_options(whole_out), runner=runner, say=lines.append).run()
    full_length = [s for s in runner.runs if not s.speed_only]
    # the baseline's run only (its trainings from other seeds are the accuracy gate's noise sample, issue 39)
    assert [s for s in full_length if s.policy == "float32" and s.seed == runner.runs[0].seed] == [runner.runs[0]]
    assert not [n for n in runner.measured if n.endswith(".a1")]  # every reference run was re-used
    assert any("A's full-length run re-used from 01-baseline" in line for line in lines)
    doc = yaml.safe_load((whole_out / "study.yaml").read_text())
    assert all("01-baseline" not in rung["replicates"] for rung in doc["ladder"] if rung["name"] != "01-baseline")

    out = tmp_path / "killed" / "s"
    out.parent.mkdir()
    killed(out, RecordedRuns(kill_at=kill_at), opts=script_options(out))
    before = finished_runs(out)
    resumed = RecordedRuns()
    Ladder(script_options(out), runner=resumed, resume=True).run()
    assert not set(resumed.measured) & before
    assert as_read(out).replace(str(out.parent), "DIR") == as_read(whole_out).replace(str(whole_out.parent), "DIR")
