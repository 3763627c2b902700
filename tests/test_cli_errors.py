"""Every command either succeeds or says why on stderr, in one line: run as a user runs them, as
processes, against an HTCondor pool that does not answer and an empty state directory, with names
and ids that do not exist."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from cli_commands import leaves
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir
from installed import CRABTUI, PYTHON

# Arguments naming nothing that exists, for every command.
UNKNOWN = {
    ("dag", "run"): ["nope.dag"],
    ("dag", "submit"): ["nope.dag"],
    ("dag", "halt"): ["nope.dag"],
    ("dag", "unhalt"): ["999"],
    ("dag", "status"): ["999"],
    ("dag", "check"): ["nope.dag"],
    ("dataset", "list"): [],
    ("dataset", "show"): ["No/Such/AODSIM"],  # not a dataset name: a well-formed one shows its stand-in
    ("dataset", "add"): ["/No/Such/AODSIM", "--from", "nope.json"],
    ("demo",): ["--no-ui", "--state-dir", "{taken}"],
    ("pool", "start"): [],
    ("pool", "stop"): [],
    ("pool", "status"): [],
    ("task", "submit"): ["nope.toml"],
    ("task", "list"): [],
    ("task", "kill"): ["nope"],
    ("task", "proceed"): ["nope"],
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
        if lines[-1:] == ["Queue transaction failed.  No attributes were set."]:  # condor_qedit's own answer
            lines = lines[:-1]
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert lines[0].startswith(("ERROR: ", "nope.dag: ", "Failed to set attribute ")), lines[0]


def _interrupted(words: list[str], cwd, started) -> subprocess.CompletedProcess:
    """``crabtui WORDS`` typed in a terminal, then Ctrl-C once ``started(stdout so far)`` holds."""
    # SIGINT's default action even when the tests run in the background (started with it ignored);
    # unbuffered, so that what it printed before the Ctrl-C can be waited for
    process = subprocess.Popen([CRABTUI, *words], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    out = ""
    try:
        while not started(out):
            line = process.stdout.readline()
            assert line, f"{words} ended before the Ctrl-C: {process.stderr.read()}"
            out += line
        process.send_signal(signal.SIGINT)
        rest, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    return subprocess.CompletedProcess(words, process.returncode, out + rest, err)


def test_ctrl_c_of_a_command_says_so_in_one_line_and_leaves_nothing_half_done(tmp_path):
    """Ctrl-C of a submit of 20,000 jobs (HTCondor's most in one submission) while it queues them:
    one line, not click's 'Aborted!', and the submission is whole or absent."""
    state = StateDir(tempfile.mkdtemp(prefix="cli-", dir="/tmp"))
    (tmp_path / "many.sub").write_text("executable = /bin/true\nqueue 20000\n")
    try:
        result = _interrupted(["--state-dir", state.path, "job", "submit", "many.sub"], tmp_path,
                              lambda out: "Submitting job(s)." in out)
        queued = set()  # in the queue, or already run and gone: /bin/true jobs do not wait
        for tool in ("q", "history"):
            queued.update(subprocess.run([CRABTUI, "--state-dir", state.path, tool, "-af", "ProcId"],
                                         capture_output=True, text=True, timeout=120).stdout.split())
    finally:
        LocalScheddClient(state, autostart=False).shutdown()
        shutil.rmtree(state.path, ignore_errors=True)
    assert "Aborted" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    if result.returncode != 130:  # the Ctrl-C came as the submission ended: all of it is queued, nothing said
        assert (result.returncode in (0, -signal.SIGINT), result.stderr, len(queued)) == (True, "", 20000)
        return
    assert result.stderr == ("ERROR: interrupted (Ctrl-C); what crabtui had done stays done, "
                             "and the jobs and tasks it queued run on\n")
    assert len(queued) in (0, 20000)


def test_ctrl_c_of_watch_stops_watching_and_says_how_to_watch_again(tmp_path):
    """Ctrl-C is how a watch usually ends, as with condor_watch_q: the task goes on."""
    state = StateDir(tempfile.mkdtemp(prefix="cli-", dir="/tmp"))
    config = Path(__file__).resolve().parent.parent / "examples" / "ttbar" / "crabConfig.py"
    try:
        # from tmp_path: its project directory (General.workArea) goes there, not into the checkout,
        # where the next test run's submit would find it and refuse
        submitted = subprocess.run([CRABTUI, "--state-dir", state.path, "task", "submit", str(config)],
                                   capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert submitted.returncode == 0, submitted.stderr
        result = _interrupted(["--state-dir", state.path, "watch", "ttbar"], tmp_path, lambda out: "ttbar" in out)
        listed = subprocess.run([CRABTUI, "--state-dir", state.path, "task", "list"], capture_output=True,
                                text=True, timeout=120).stdout
    finally:
        LocalScheddClient(state, autostart=False).shutdown()
        shutil.rmtree(state.path, ignore_errors=True)
    assert result.returncode == 130 and "Aborted" not in result.stderr, result.stderr
    assert result.stderr == (f"Stopped watching ttbar; the task goes on: `crabtui --state-dir {state.path} "
                             f"watch ttbar` follows it again.\n")
    assert "KILLED" not in listed and "ttbar" in listed


@pytest.mark.parametrize(("typed", "said"), [
    (["hodl", "3"], "ERROR: No such command 'hodl'. Did you mean 'hold'?; see 'crabtui --help'\n"),
    (["task", "stauts"], "ERROR: No such command 'stauts'. Did you mean 'status'?; see 'crabtui task --help'\n"),
    (["frobnicate"], "ERROR: No such command 'frobnicate'; see 'crabtui --help'\n"),
])
def test_a_mistyped_command_is_named_with_the_closest_one(typed, said, tmp_path):
    result = subprocess.run([CRABTUI, "--state-dir", str(tmp_path / "state"), *typed], capture_output=True,
                            text=True, timeout=120)
    assert (result.returncode, result.stderr) == (1, said)


@pytest.mark.parametrize(("variable", "said"), [
    ("CRABTUI_BACKEND=condor", "ERROR: CRABTUI_BACKEND (which sets --backend): 'condor' is not one of 'embedded', "
                               "'htcondor'; see 'crabtui --help'\n"),
    ("CRABTUI_ENDED_FOR=12x", "ERROR: CRABTUI_ENDED_FOR (which sets --ended-for): '12x' is no duration: write a "
                              "number of seconds, or 30m, 12h, 7d; see 'crabtui --help'\n"),
])
def test_a_bad_value_from_the_environment_names_the_variable_not_an_option_never_typed(variable, said, tmp_path):
    name, _, value = variable.partition("=")
    result = subprocess.run([CRABTUI, "--state-dir", str(tmp_path / "state"), "q"], capture_output=True,
                            text=True, timeout=120, env={**os.environ, name: value})
    assert (result.returncode, result.stderr) == (1, said)


@pytest.mark.parametrize("typed", [["task", "list"], ["task", "submit", "crabConfig.py"]])
def test_a_task_table_that_is_not_a_database_is_named_in_one_line(typed, tmp_path):
    """The task commands' table is read by whichever opens it first (the command, or the task
    submission's check for a half-done earlier one): each said SQLite's words in a traceback."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "tasks.sqlite3").write_bytes(b"not a database " * 300)
    shutil.copytree(Path(__file__).parent.parent / "examples" / "ttbar", tmp_path / "ttbar")
    try:
        result = subprocess.run([CRABTUI, "--state-dir", str(state), *typed], capture_output=True, text=True,
                                timeout=120, cwd=tmp_path / "ttbar")
    finally:
        LocalScheddClient(StateDir(str(state))).shutdown()
    assert (result.returncode, result.stderr) == (
        1, f"ERROR: {state}/tasks.sqlite3: cannot use the task table (file is not a database); move it away to "
           "start with an empty one\n")


def test_a_ctrl_c_as_a_finished_command_exits_prints_no_traceback(tmp_path):
    """A Ctrl-C that comes once the command is done, while Python tears itself down (here from
    an exit handler, so the moment is certain), changes nothing and says nothing."""
    examples = Path(__file__).resolve().parent.parent / "examples" / "diamond"
    script = ("import atexit, os, signal, sys\n"
              "from crabtui.cli import main\n"
              "atexit.register(os.kill, os.getpid(), signal.SIGINT)\n"
              f"sys.argv = ['crabtui', 'dag', 'check', {str(examples / 'diamond.dag')!r}]\n"
              "main()\n")
    result = subprocess.run([PYTHON, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert "diamond.dag" in result.stdout
