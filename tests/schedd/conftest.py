"""Fixtures for the embedded schedd's tests: real daemons, real job processes, real user logs.

Every test that asks for ``schedd`` gets its own state directory and so its own daemon, started on
demand by the first client call, exactly as a user's first command starts it. The fixture stops
that daemon (``LocalScheddClient.shutdown``) when the test ends, passed or failed; a session
finaliser checks every state directory once more, so no daemon outlives the suite.

Waiting is done on events, never on guessed sleeps: user-log events through
``htcondor2.JobEventLog(path).events(stop_after=...)``, which blocks until an event arrives, and
queue states through a bounded polling loop that fails with a message saying what it waited for.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from engine.state import StateDir
from schedd_harness import _ALL_STATE_DIRS, PERIODIC_ENV, SOCKET_PATH_MAX, Harness, stop_daemon


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterable[StateDir]:
    """A fresh state directory whose socket path fits in sun_path (else one under /tmp)."""
    path = tmp_path / "state"
    made = None
    if len(os.fsencode(path / "schedd.sock")) > SOCKET_PATH_MAX:
        made = tempfile.mkdtemp(prefix="crabtui-", dir="/tmp")
        path = Path(made) / "state"
    path.mkdir(mode=0o700)
    state = StateDir(str(path))
    _ALL_STATE_DIRS.append(state)
    try:
        yield state
    finally:
        stop_daemon(state)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def schedd(state_dir: StateDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterable[Harness]:
    """A harness for one daemon; the daemon starts on the first request and is stopped at the end.

    Periodic policy runs every 0.2 s and the vacate time is 2 s: the daemon reads both from the
    environment when it starts, and the client passes the environment through."""
    for name, value in PERIODIC_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CRABTUI_STATE_DIR", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    harness = Harness(state_dir, work)
    try:
        yield harness
    finally:
        harness.stop()


@pytest.fixture(scope="session", autouse=True)
def _no_daemon_outlives_the_suite() -> Iterable[None]:
    yield
    for state in _ALL_STATE_DIRS:
        if os.path.exists(state.path):
            stop_daemon(state)
