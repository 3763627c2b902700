"""Each DAGMan test gets its own embedded schedd, stopped afterwards with everything that uses it."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from descendants import kill_users_of
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir


@pytest.fixture
def schedd():
    # A short path: Unix socket names are limited to 107 bytes.
    path = tempfile.mkdtemp(prefix="dagman-", dir="/tmp")
    client = LocalScheddClient(StateDir(path))
    try:
        yield client
    finally:
        client.shutdown()
        # Nothing may start a daemon again in a directory about to go, as a client does on demand:
        # not a thread of the test (its client no longer starts one), nor a DAGMan or a daemon that
        # one of the test's processes started meanwhile (killed).
        client.autostart = False
        kill_users_of(path)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def dag_dir(tmp_path):
    """A directory with a submit file whose job exits with $(code) and says who it is."""
    (tmp_path / "job.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) $(RETRY) >> runs.txt; exit $(code)'\"\n"
        "queue\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)

