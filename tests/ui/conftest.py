"""The UI tests' engine: a state directory with the simulated grid, its daemon, and real tasks."""

from __future__ import annotations

import pytest
import textual.constants

from engine.schedd.local.client import LocalScheddClient
from ui_fixed import build
from ui_tasks import new_state, remove_state, submit, wait_task

FAILING_PLAN = '{job = "2", attempt = 1, exitCode = 8021}, {job = "4", attempt = "*", exitCode = 99}'


@pytest.fixture(autouse=True)
def truecolor(monkeypatch):
    """The app's terminal has 24-bit colour, whatever TERM the tests run under (with 16 colours it
    takes the ANSI themes): set ``textual.constants.COLOR_SYSTEM`` otherwise to see another."""
    monkeypatch.setattr(textual.constants, "COLOR_SYSTEM", "truecolor")


@pytest.fixture(scope="module")
def engine():
    """One embedded engine for a module's tests; each test submits the tasks it changes."""
    state = new_state()
    yield state
    remove_state(state)


@pytest.fixture
def state():
    """An engine of the test's own (for a test that stops it)."""
    state = new_state()
    yield state
    remove_state(state)


@pytest.fixture(scope="module")
def fixed():
    """The tasks of :func:`ui_fixed.build`, fixed in their files, with an engine that answers
    (its queue empty): what the UI shows of them does not move."""
    state = new_state()
    build(state)
    LocalScheddClient(state).ping()
    yield state
    remove_state(state)


@pytest.fixture(scope="module")
def failed_task(engine, tmp_path_factory) -> str:
    """A finished task the module's tests only look at: job 2 needed a retry after 8021 at its
    first site; job 4 failed for good with exit code 99; jobs 1 to 3 finished."""
    name = submit(engine, tmp_path_factory.mktemp("failed"), "looked", scale=500, plan=FAILING_PLAN)
    wait_task(engine, name, "FAILED")
    return name
