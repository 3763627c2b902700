"""A schedd that stops answering: stopped (SIGSTOP), or dead after it committed a change.

As condor_q gives up on a schedd that does not answer (Q_QUERY_TIMEOUT), a command gives up on a
daemon that made no progress for ``CRABTUI_SCHEDD_TIMEOUT`` seconds, in one line that says what
to do; a daemon that is busy, however long, is waited for."""

from __future__ import annotations

import os
import signal
import socket

import pytest

from engine.crashpoint import ENV_VAR
from engine.schedd.api import JobStatus
from schedd_harness import daemon_pid, process_gone, wait_for

FAST = {"CRABTUI_SCHEDD_TIMEOUT": "0.5"}


def stopped_state(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


@pytest.fixture
def stopped(schedd):
    """The daemon, stopped with SIGSTOP; continued (or already killed) at the end."""
    schedd.submit("executable = /bin/true\nhold = true\nqueue\n")
    pid = daemon_pid(schedd.state)
    schedd.close_client()
    os.kill(pid, signal.SIGSTOP)
    wait_for(lambda: stopped_state(pid), "the daemon to stop")
    try:
        yield pid
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def test_q_gives_up_on_a_stopped_schedd_in_one_line_saying_what_to_do(schedd, stopped):
    result = schedd.cli("q", env=FAST)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"ERROR: the schedd (pid {stopped}) did not answer in 0.5 s: it is stopped; see {schedd.state.log}; "
        f"'kill -CONT {stopped}' resumes it, 'kill -9 {stopped}' ends it (the next command starts another)\n")

    os.kill(stopped, signal.SIGKILL)  # as the message says: the next command starts another, the job still queued
    wait_for(lambda: process_gone(stopped), "the stopped daemon to die")
    result = schedd.cli("q", "-af", "ClusterId", "JobStatus", env=FAST)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1 5\n"


def test_a_stopped_schedd_whose_backlog_is_full_is_given_up_on_in_one_line(schedd, stopped):
    """Connections no one accepts fill the stopped daemon's listen backlog (clients that gave up,
    or many jobs' condor_qedit at once); the next command waits the timeout for room, as for an
    answer, then says so in one line, no traceback."""
    waiting = []
    try:
        while len(waiting) < 10000:  # the backlog, whatever the daemon asked for
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            waiting.append(sock)
            sock.setblocking(False)
            try:
                sock.connect(schedd.state.socket)
            except BlockingIOError:
                break
        result = schedd.cli("q", env=FAST)
    finally:
        for sock in waiting:
            sock.close()
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"ERROR: the schedd did not accept a connection in 0.5 s; see {schedd.state.log}; "
                             f"'crabtui --state-dir {schedd.state.path} pool status' says whether it runs\n")


def test_release_sent_to_a_stopped_schedd_says_it_may_take_effect_and_does_once_continued(schedd, stopped):
    result = schedd.cli("release", "1", env=FAST)
    assert result.returncode == 1
    line, = result.stderr.splitlines()
    assert line.startswith(f"ERROR: the schedd (pid {stopped}) did not answer in 0.5 s: it is stopped;")
    assert line.endswith(f"; the release may have taken effect, check with: crabtui --state-dir {schedd.state.path} "
                         f"q -constraint 'ClusterId == 1'")

    os.kill(stopped, signal.SIGCONT)
    wait_for(lambda: JobStatus.HELD != (schedd.job("1.0") or {"JobStatus": 0})["JobStatus"],
             "the continued daemon to release the job")


def test_a_busy_schedd_is_waited_for_past_the_timeout(schedd):
    """Queuing thousands of jobs keeps the daemon from answering for longer than the timeout;
    it works all that time, so the command waits for it."""
    schedd.client.ping()
    schedd.write("many.sub", "executable = /bin/true\nhold = true\nqueue 20000\n")
    result = schedd.cli("job", "submit", "many.sub", env={"CRABTUI_SCHEDD_TIMEOUT": "0.2"})
    assert result.returncode == 0, result.stderr
    assert "20000 job(s) submitted to cluster 1." in result.stdout


@pytest.mark.parametrize("command, unit, status", [("release", "release", "1"), ("rm", "remove", "")])
def test_a_change_whose_schedd_died_after_committing_says_it_may_have_taken_effect(schedd, monkeypatch,
                                                                                   command, unit, status):
    """The message names the change as the user typed its command."""
    schedd.submit("executable = /bin/true\nrequest_memory = 100 TB\nhold = true\nqueue\n")  # never runs
    schedd.close_client()
    monkeypatch.setenv(ENV_VAR, f"{unit}:after-commit")  # the daemon's own environment, as a crash point is set
    assert schedd.cli("pool", "stop").returncode == 0
    assert schedd.cli("pool", "start").returncode == 0
    pid = daemon_pid(schedd.state)
    monkeypatch.delenv(ENV_VAR)

    result = schedd.cli(command, "1")
    assert result.returncode == 1
    check = f"crabtui --state-dir {schedd.state.path} q -constraint 'ClusterId == 1'"
    assert result.stderr == (f"ERROR: the schedd closed the connection before it answered; see {schedd.state.log}; "
                             f"the {command} may have taken effect, check with: {check}\n")
    wait_for(lambda: process_gone(pid), "the daemon to die at its crash point")
    shown = schedd.cli("q", "-constraint", "ClusterId == 1", "-af", "JobStatus")
    assert shown.stdout == (f"{status}\n" if status else ""), "it did: the job is idle, or gone"


@pytest.mark.parametrize("value, said", [
    ("soon", "CRABTUI_SCHEDD_TIMEOUT='soon' is not a number of seconds; unset it for 20"),
    ("0", "CRABTUI_SCHEDD_TIMEOUT='0' must be more than 0 seconds and at most 2147483"),
    ("inf", "CRABTUI_SCHEDD_TIMEOUT='inf' must be more than 0 seconds and at most 2147483"),
    ("1e300", "CRABTUI_SCHEDD_TIMEOUT='1e300' must be more than 0 seconds and at most 2147483"),
])
def test_a_timeout_that_is_no_number_of_seconds_is_refused_in_one_line(schedd, value, said):
    """A user wanting to wait for ever may write inf or a huge number: one line says the range."""
    result = schedd.cli("q", env={"CRABTUI_SCHEDD_TIMEOUT": value})
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"ERROR: {said}\n")
