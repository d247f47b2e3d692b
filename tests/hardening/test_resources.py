"""Running out of memory or disk: said plainly, with the fix, never as a crash dump (issue 7).

Out of memory is provoked for real: a batch of 2**20 rows through a 16384-wide
layer needs a 64 GiB tensor, under an address-space limit (RLIMIT_AS) so the
allocation fails the same way on any machine. TensorFlow's oneDNN CPU kernels
crash the process after such a failure instead of raising (tfturbo/crash.py),
so the real run uses TensorFlow's own kernels (TF_ENABLE_ONEDNN_OPTS=0) and
the crash path is replayed by a stand-in that logs TensorFlow's lines and dies
on SIGSEGV.
"""

from __future__ import annotations

import json
import os
import subprocess

from hardening_helpers import HERE, PYTHON, ROOT, WORKLOADS, mlp_argv

from tfturbo import backend_client, protocol, runfiles
from tfturbo.cli import main as tfturbo_main
from tfturbo_gui.run_panel import RunPanel

HUGE_BATCH = 2**20
MEMORY_LIMIT = 6 * 2**30  # the backend itself needs ~2.3 GiB of address space
OOM_CAUSE = "OOM when allocating tensor with shape[1048576,16384]"
ADVICE = f"lower --batch-size (e.g. --batch-size {HUGE_BATCH // 2})"
CRASHING_BACKEND = HERE / "oom_crash_backend.py"


def limited(argv: list[str], limit: int) -> list[str]:
    """`argv` run with an address-space limit (set in the child, then exec'd: no preexec_fn in a threaded test)."""
    setup = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2); "
             "os.execv(sys.argv[2], sys.argv[2:])")
    return [PYTHON, "-c", setup, str(limit), *argv]


def test_out_of_memory_is_reported_with_the_advice_to_lower_the_batch(tmp_path):
    out = tmp_path / "oom"
    argv = [PYTHON, "-m", "tfturbo.cli", "run", str(WORKLOADS / "huge_batch.py"), "--out", str(out),
            "--steps", "20", "--batch-size", str(HUGE_BATCH)]
    proc = subprocess.run(limited(argv, MEMORY_LIMIT), cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0"})
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"error: out of memory: {OOM_CAUSE}" in proc.stderr
    assert f"fix: {ADVICE}" in proc.stderr
    summary = json.loads((out / runfiles.SUMMARY).read_text())
    assert summary["status"] == protocol.RunStatus.FAILED
    assert summary["error"]["kind"] == protocol.OUT_OF_MEMORY and ADVICE in summary["error"]["fix"]


def test_a_backend_crashed_by_tensorflow_after_an_oom_is_reported_as_out_of_memory_in_the_gui(qtbot, tmp_path):
    panel = RunPanel(lambda command, argv: [PYTHON, str(CRASHING_BACKEND), command, *argv])
    qtbot.addWidget(panel)
    data = panel.start("run", ["builtin:mlp", "--batch-size", str(HUGE_BATCH)], log_path=str(tmp_path / "b.log"))
    qtbot.waitUntil(lambda: not panel.is_running() and data.finished, timeout=30_000)
    assert data.status == protocol.RunStatus.CRASHED
    assert data.error["kind"] == protocol.OUT_OF_MEMORY
    assert OOM_CAUSE in panel.error_box.message.text()
    assert ADVICE in panel.error_box.fix.text()


def test_a_backend_crashed_by_tensorflow_after_an_oom_is_reported_as_out_of_memory_by_the_cli(
        tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(backend_client, "backend_command",
                        lambda command, argv: [PYTHON, str(CRASHING_BACKEND), command, *argv])
    code = tfturbo_main(["run", "builtin:mlp", "--out", str(tmp_path / "r"), "--batch-size", str(HUGE_BATCH)])
    err = capfd.readouterr().err
    assert code == 1  # not the signal's 245
    assert f"error: out of memory: {OOM_CAUSE}" in err and f"fix: {ADVICE}" in err
    assert "ended without a result" not in err


def test_a_crashed_run_directory_says_it_ran_out_of_memory(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    (run / runfiles.EVENTS).write_text(protocol.encode({"type": "phase", "phase": "warmup", "step": 1}) + "\n")
    (run / runfiles.BACKEND_LOG).write_text("I0000 starting\n" + (HERE / "oom_crash_backend.py").read_text()
                                            .split('LOG = (\n', 1)[1].split("\n)\n", 1)[0])
    record = runfiles.load_run(run)
    assert record.status == protocol.RunStatus.CRASHED
    assert any("out of memory" in w and OOM_CAUSE in w and "lower --batch-size" in w for w in record.warnings)


def test_an_unwritable_output_directory_fails_before_training_with_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    out = blocker / "run"  # unwritable for any user, root included
    proc = subprocess.run([PYTHON, "-m", "tfturbo.cli", "run", *mlp_argv(out, steps=20), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write to" in lines[0] and "choose a writable --out directory" in lines[0]
    assert not out.exists()


def test_a_full_disk_is_refused_before_training_and_leaves_no_run_directory(tmp_path, cold_backend):
    # cold_backend: the full disk is patched into this process, which must run the command itself (not a fork)
    out = tmp_path / "runs" / "full"
    full_disk = ("import runpy, shutil, sys; "
                 "shutil.disk_usage = lambda p: shutil._ntuple_diskusage(10**12, 10**12 - 2**23, 2**23); "
                 "sys.argv = ['trainer_backend', *sys.argv[1:]]; runpy.run_module('trainer_backend', run_name='__main__')")
    proc = subprocess.run([PYTHON, "-c", full_disk, "run", *mlp_argv(out, steps=20)], cwd=ROOT, capture_output=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 2
    error = next(e for e in events if e["type"] == protocol.ERROR)
    assert error["kind"] == protocol.BAD_INPUT and "only 8 MiB free" in error["message"] and "\n" not in error["message"]
    assert not any(e["type"] == protocol.PHASE and e["phase"] == protocol.WARMUP for e in events)  # never trained
    assert events[-1]["type"] == protocol.DONE and events[-1]["exit_code"] == 2
    assert not (tmp_path / "runs").exists()
