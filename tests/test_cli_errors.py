"""Every command either succeeds or says why on stderr, in one line: run as a user runs them, as
processes, against an HTCondor pool that does not answer and an empty state directory, with names
and ids that do not exist."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest

from cli_commands import leaves
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir
from installed import CRABTUI

# Arguments naming nothing that exists, for every command.
UNKNOWN = {
    ("dag", "run"): ["nope.dag"],
    ("dag", "submit"): ["nope.dag"],
    ("dag", "halt"): ["nope.dag"],
    ("dag", "unhalt"): ["999"],
    ("dag", "status"): ["999"],
    ("dag", "check"): ["nope.dag"],
    ("dataset", "list"): [],
    ("dataset", "show"): ["/No/Such/AODSIM"],
    ("dataset", "add"): ["/No/Such/AODSIM", "--from", "nope.json"],
    ("demo",): ["--no-ui", "--state-dir", "{taken}"],
    ("pool", "start"): [],
    ("pool", "stop"): [],
    ("pool", "status"): [],
    ("task", "submit"): ["nope.toml"],
    ("task", "list"): [],
    ("task", "kill"): ["nope"],
    ("task", "status"): ["nope"],
    ("task", "resubmit"): ["nope"],
    ("task", "report"): ["nope"],
    ("task", "getoutput"): ["-d", "crab_projects/crab_nope"],
    ("task", "getlog"): ["crab_nope"],
    ("job", "submit"): ["nope.sub"],
    ("watch",): ["nope"],
    ("q",): ["999"],
    ("hold",): ["999"],
    ("release",): ["999"],
    ("rm",): ["999"],
    ("history",): ["999"],
    ("qedit",): ["999", "Flavour", "1"],
}


def test_every_command_is_checked():
    assert sorted(leaves()) == sorted(UNKNOWN)


@pytest.mark.parametrize("backend", ["htcondor", "embedded"])
@pytest.mark.parametrize("command", sorted(UNKNOWN), ids=" ".join)
def test_a_failing_command_says_why_in_one_line(command, backend, tmp_path):
    """``htcondor``: a pool whose collector does not answer; ``embedded``: an empty state directory
    (short, under /tmp: a Unix socket's path is limited)."""
    state = StateDir(tempfile.mkdtemp(prefix="cli-", dir="/tmp"))
    taken = tmp_path / "taken"  # not empty, and not a demo's state directory
    taken.mkdir()
    (taken / "notes.txt").write_text("mine\n")
    config = tmp_path / "unreachable.config"
    config.write_text("COLLECTOR_HOST = 127.0.0.1:9\nCONDOR_HOST = 127.0.0.1\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CRABTUI_BACKEND", "CRABTUI_STATE_DIR")}
    args = [a.format(taken=taken) for a in UNKNOWN[command]]
    try:
        result = subprocess.run([CRABTUI, "--state-dir", state.path, "--backend", backend, *command, *args],
                                cwd=tmp_path, capture_output=True, text=True, timeout=120,
                                env={**env, "CONDOR_CONFIG": str(config)})
    finally:
        LocalScheddClient(state, autostart=False).shutdown()
        shutil.rmtree(state.path, ignore_errors=True)
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert lines[0].startswith(("ERROR: ", "nope.dag: ")), lines[0]
