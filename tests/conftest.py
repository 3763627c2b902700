"""Fixtures for every test directory: the real HTCondor test pool, a fixed local time zone, and
the check that no process the tests started outlives the run.

The pool is for tests marked ``htcondor``.
``scripts/htcondor-testpool`` builds (once, cached) and starts a real HTCondor 23.9.6 pool; the
session fixture below starts it for the first marked test and stops it at the end (unless it
was running already).  Marked tests
run last, because pointing CONDOR_CONFIG at the pool changes the process-wide HTCondor
configuration.  Where the pool cannot run (not root, no package registry) they are skipped with
the reason; under CI they fail instead, so a broken pool never passes unnoticed.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["descendants"]  # no process the tests started outlives the run

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "htcondor-testpool"


@dataclass(frozen=True)
class TestPool:
    env: dict[str, str]  # CONDOR_CONFIG and the pool's CRABTUI_TESTPOOL_* facts
    uid: int  # who jobs run as


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker("htcondor") is not None)


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"the HTCondor test pool is needed in CI: {reason}", pytrace=False)
    pytest.skip(f"no HTCondor test pool: {reason}")


@pytest.fixture(scope="session")
def htcondor_pool():
    if os.geteuid() != 0:
        _unavailable("scripts/htcondor-testpool must run as root")
    already = subprocess.run([str(SCRIPT), "status"], capture_output=True).returncode == 0
    started = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True, timeout=1200)
    if started.returncode != 0:
        _unavailable(f"scripts/htcondor-testpool start failed:\n{started.stdout[-3000:]}{started.stderr[-3000:]}")
    shown = subprocess.run(
        ["bash", "-c", f'eval "$({SCRIPT} env)" && python3 -c "import json, os; print(json.dumps(dict(os.environ)))"'],
        capture_output=True, text=True, check=True)
    env = {k: v for k, v in json.loads(shown.stdout).items()
           if k == "CONDOR_CONFIG" or k.startswith("CRABTUI_TESTPOOL_")}
    import htcondor2

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    htcondor2.reload_config()
    try:
        yield TestPool(env, int(env["CRABTUI_TESTPOOL_UID"]))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        htcondor2.reload_config()
        if not already:  # a pool someone else started stays up for them
            subprocess.run([str(SCRIPT), "stop"], capture_output=True, timeout=300)


@pytest.fixture
def time_zone(monkeypatch):
    """``time_zone(TZ)`` sets the local time zone for the test; the old one is back after it."""
    def set_zone(zone: str) -> None:
        monkeypatch.setenv("TZ", zone)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def utc(time_zone):
    """Local time is UTC, so that times on screen do not depend on the machine."""
    time_zone("UTC")
