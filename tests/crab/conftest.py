"""The task tests' embedded schedd: its own state directory with the simulated grid as its pool."""

from __future__ import annotations

import shutil
import tempfile

import pytest

from engine.crab.grid import install_grid
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir


@pytest.fixture
def state():
    state = StateDir(tempfile.mkdtemp(prefix="crabtask-", dir="/tmp"))  # short: a socket path fits
    install_grid(state)
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)
