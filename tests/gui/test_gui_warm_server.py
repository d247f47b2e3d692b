"""The wizard's warm server: once it is ready, the wizard's local backend commands run as forks of it."""

from __future__ import annotations

import pytest

from tfturbo.backend_client import backend_command
from tfturbo_gui import warm_server
from tfturbo_gui.run_process import BackendProcess

from tests.gui.gui_helpers import fake_launcher

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("cold_backend")]  # its own server and a cold run


def test_commands_fork_from_the_server_once_it_is_ready_and_start_cold_before(qtbot, monkeypatch):
    server = warm_server.WarmServer()
    monkeypatch.setattr(warm_server, "WARM", server)
    monkeypatch.setattr("tfturbo_gui.run_process.WARM", server)
    process = BackendProcess(backend_command)
    with qtbot.waitSignal(process.ended, timeout=60_000):
        cold = process.start("env", [])
    assert cold.hello["warm"] is False  # no server yet: the command imports TensorFlow itself
    server.start()
    try:
        qtbot.waitUntil(server.is_ready, timeout=60_000)
        with qtbot.waitSignal(process.ended, timeout=60_000):
            forked = process.start("env", [])
        assert forked.status == "completed" and forked.hello["warm"] is True
        faked = BackendProcess(fake_launcher())  # not the real backend: nothing to fork
        assert faked._local_backend() is False
    finally:
        server.stop()
    assert not server.is_ready() and server.child_env() == {}
