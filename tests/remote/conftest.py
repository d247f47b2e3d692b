"""A real sshd on 127.0.0.1 for the remote-host tests: temporary host and user keys, a random port.

Started and stopped by the fixture itself; skipped (with the reason printed) only where no sshd binary
exists — `apt-get install openssh-server` provides it.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd")
HOST = "tfturbo-test"


@dataclass
class Sshd:
    host: str
    ssh_env: dict[str, str]  # TFTURBO_SSH for the client
    python: str  # the "remote" interpreter: this one, importing this checkout
    folder: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    binary = next((p for p in SSHD_CANDIDATES if os.access(p, os.X_OK)), shutil.which("sshd"))
    # Deliberate skips: an sshd and an ssh client are system packages that `make test` cannot install for a
    # user (.ci/run installs them on a CI machine with apt). `-ra` (pyproject) prints each reason in the
    # summary, so a run without them never reads as a tested one.
    if binary is None:
        pytest.skip("no sshd binary (apt-get install openssh-server; .ci/run installs it): "
                    "the remote-host tests need a real sshd")
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("no ssh client (apt-get install openssh-client; .ci/run installs it): "
                    "the remote-host tests connect with the real ssh")
    d = tmp_path_factory.mktemp("sshd")
    os.chmod(d, 0o700)
    _keygen(d / "host_key")
    _keygen(d / "user_key")
    shutil.copyfile(d / "user_key.pub", d / "authorized_keys")
    os.chmod(d / "authorized_keys", 0o600)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    port = _free_port()
    (d / "sshd_config").write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {d / 'host_key'}",
        f"AuthorizedKeysFile {d / 'authorized_keys'}", f"PidFile {d / 'sshd.pid'}", "StrictModes no",
        "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "PermitRootLogin yes",
        "LogLevel ERROR", "ClientAliveInterval 5", "ClientAliveCountMax 2",
    ]) + "\n")
    (d / "ssh_config").write_text("\n".join([
        f"Host {HOST}", "  HostName 127.0.0.1", f"  Port {port}", f"  User {getpass.getuser()}",
        f"  IdentityFile {d / 'user_key'}", "  IdentitiesOnly yes", "  StrictHostKeyChecking no",
        "  UserKnownHostsFile /dev/null", "  LogLevel ERROR", "  BatchMode yes",
    ]) + "\n")
    python = d / "remote-python"  # what a host with tfturbo installed has: this checkout's code
    python.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    log = open(d / "sshd.log", "wb")
    proc = subprocess.Popen([binary, "-D", "-e", "-f", str(d / "sshd_config")], stdout=log, stderr=log)
    env = {"TFTURBO_SSH": f"ssh -F {d / 'ssh_config'}"}
    deadline = time.monotonic() + 10
    while True:
        ok = subprocess.run(["ssh", "-F", str(d / "ssh_config"), HOST, "true"], capture_output=True).returncode == 0
        if ok:
            break
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"sshd did not accept the test key: {(d / 'sshd.log').read_text()[-500:]}")
        time.sleep(0.2)
    try:
        yield Sshd(HOST, env, str(python), d)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
