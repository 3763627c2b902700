"""What the tests against the real pool share."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def shared_dir():
    """A directory the pool's unprivileged job user can write, at the same path inside the pool."""
    path = Path(tempfile.mkdtemp(prefix="pool-", dir="/tmp"))
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)
