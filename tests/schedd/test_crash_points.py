"""Fault injection (issue 20, part 2): the schedd daemon is killed (SIGKILL, by itself, through
``CRABTUI_CRASH_POINT``) at each named point of submit, start, exit, hold, release and remove.
After the next command has started a new daemon, the queue and the job's log must agree, the
action must have happened entirely or not at all, and a job must finish exactly once.

Each point is a real crash of a real daemon at a moment no timing could hit; the starters and
jobs live on, as they would."""

from __future__ import annotations

import pytest
from htcondor2 import JobEventType as ET

from schedd_harness import daemon_pid, process_gone, read_events, types_for, wait_for
from engine.schedd.api import JobAction, JobStatus, ScheddError
from engine.crashpoint import ENV_VAR

WHERE = ("before-commit", "after-commit", "after-log")
GATED = "#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\necho ran >> marks\n"
# What the log's last event for a job says its state is (IMAGE_SIZE says nothing).
STATE_OF_LAST_EVENT = {ET.SUBMIT: JobStatus.IDLE, ET.JOB_EVICTED: JobStatus.IDLE, ET.JOB_RELEASED: JobStatus.IDLE,
                       ET.EXECUTE: JobStatus.RUNNING, ET.JOB_HELD: JobStatus.HELD,
                       ET.JOB_TERMINATED: JobStatus.COMPLETED, ET.JOB_ABORTED: JobStatus.REMOVED}


@pytest.fixture
def crashing(schedd, monkeypatch):
    """Start the daemon with a crash point (a function of the point's name); later daemons,
    started by the next command after the crash, have none."""
    def arm(point: str) -> int:
        monkeypatch.setenv(ENV_VAR, point)
        pid = schedd.client.ping()["pid"]
        monkeypatch.delenv(ENV_VAR)
        return pid
    return arm


def submit_gated(schedd) -> str:
    script = schedd.write("gated.sh", GATED, executable=True)
    result = schedd.submit(f"executable = {script}\nlog = job.log\nqueue\n")
    return f"{result.cluster}.0"


def crashed(schedd, pid: int) -> None:
    wait_for(lambda: process_gone(pid), "the daemon to kill itself at its crash point")
    schedd.close_client()


def state(schedd, job: str) -> JobStatus:
    ad = schedd.job(job) or schedd.history_ad(job)
    return JobStatus(ad["JobStatus"])


def assert_log_agrees(schedd, job: str) -> list:
    """The job's events are each logged once where they should be, and the last one tells the
    state the queue holds (for a job whose processes are gone)."""
    types = types_for(read_events(schedd.work / "job.log"), job)
    assert types.count(ET.SUBMIT) == 1 and types[0] == ET.SUBMIT, types
    assert types.count(ET.JOB_TERMINATED) + types.count(ET.JOB_ABORTED) <= 1, types
    for before, after in zip(types, types[1:]):
        assert before != after or before == ET.IMAGE_SIZE, f"{before.name} logged twice in a row: {types}"
    assert STATE_OF_LAST_EVENT[types[-1]] == state(schedd, job), f"the log ends {types} but the job is {state(schedd, job).name}"
    return types


def finish(schedd, job: str) -> None:
    (schedd.work / "go").touch()
    ad = schedd.wait_history(job)
    assert ad["JobStatus"] == JobStatus.COMPLETED
    assert (schedd.work / "marks").read_text() == "ran\n", "the job ran to its end exactly once"
    assert assert_log_agrees(schedd, job)[-1] == ET.JOB_TERMINATED


@pytest.mark.parametrize("where", WHERE)
def test_crash_during_submit(schedd, crashing, where):
    pid = crashing(f"submit:{where}")
    job = submit_gated(schedd)  # the client sends the submit again to the next daemon
    assert daemon_pid(schedd.state) != pid
    assert [f"{ad['ClusterId']}.{ad['ProcId']}" for ad in schedd.client.query()] == [job], "queued once"
    schedd.wait_running(job)
    assert_log_agrees(schedd, job)
    finish(schedd, job)


@pytest.mark.parametrize("point", [f"{unit}:{where}" for unit in ("start", "started") for where in WHERE])
def test_crash_while_starting(schedd, crashing, point):
    pid = crashing(point)
    job = submit_gated(schedd)
    crashed(schedd, pid)
    ad = schedd.wait_running(job)
    assert ad["NumJobStarts"] == 1, "the job started once: the crash came before it ran, or it ran on"
    assert assert_log_agrees(schedd, job).count(ET.EXECUTE) == 1
    finish(schedd, job)


@pytest.mark.parametrize("where", WHERE)
def test_crash_while_a_job_exits(schedd, crashing, where):
    pid = crashing(f"exit:{where}")
    job = submit_gated(schedd)
    schedd.wait_running(job)
    (schedd.work / "go").touch()
    crashed(schedd, pid)
    finish(schedd, job)
    assert types_for(read_events(schedd.work / "job.log"), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED]


def act_and_crash(schedd, crashing, point: str, action: JobAction, job: str) -> bool:
    """``action`` on ``job`` with the daemon dying at ``point``; whether it took effect."""
    pid = daemon_pid(schedd.state)
    try:
        schedd.client.act(action, job)
    except ScheddError:
        pass  # the daemon died before it answered: the user sees an error, and may try again
    crashed(schedd, pid)
    return not point.endswith("before-commit")


@pytest.mark.parametrize("where", WHERE)
def test_crash_while_holding_a_running_job(schedd, crashing, where):
    crashing(f"hold:{where}")
    job = submit_gated(schedd)
    schedd.wait_running(job)
    held = act_and_crash(schedd, crashing, f"hold:{where}", JobAction.Hold, job)
    if held:
        schedd.wait_status(job, JobStatus.HELD, check=lambda ad: "JobPid" not in ad)
        assert assert_log_agrees(schedd, job)[-2:] == [ET.JOB_EVICTED, ET.JOB_HELD]
        assert schedd.client.act(JobAction.Release, job).changed == 1
        schedd.wait_running(job)
    else:
        assert state(schedd, job) == JobStatus.RUNNING
        assert assert_log_agrees(schedd, job) == [ET.SUBMIT, ET.EXECUTE]
    finish(schedd, job)


@pytest.mark.parametrize("where", WHERE)
def test_crash_while_releasing(schedd, crashing, where):
    crashing(f"release:{where}")
    job = submit_gated(schedd)
    schedd.wait_running(job)
    assert schedd.client.act(JobAction.Hold, job).changed == 1
    schedd.wait_status(job, JobStatus.HELD, check=lambda ad: "JobPid" not in ad)
    released = act_and_crash(schedd, crashing, f"release:{where}", JobAction.Release, job)
    if released:
        schedd.wait_running(job)
        assert ET.JOB_RELEASED in assert_log_agrees(schedd, job)
    else:
        assert state(schedd, job) == JobStatus.HELD
        assert assert_log_agrees(schedd, job)[-1] == ET.JOB_HELD
        assert schedd.client.act(JobAction.Release, job).changed == 1
    finish(schedd, job)


@pytest.mark.parametrize("where", WHERE)
def test_crash_while_removing_a_running_job(schedd, crashing, where):
    crashing(f"remove:{where}")
    job = submit_gated(schedd)
    pid = schedd.wait_running(job)["JobPid"]
    removed = act_and_crash(schedd, crashing, f"remove:{where}", JobAction.Remove, job)
    if removed:
        ad = schedd.wait_history(job)
        assert ad["JobStatus"] == JobStatus.REMOVED
        assert process_gone(pid)
        assert assert_log_agrees(schedd, job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_ABORTED]
        assert not (schedd.work / "marks").exists()
    else:
        assert state(schedd, job) == JobStatus.RUNNING
        finish(schedd, job)


def test_crash_after_a_dag_nodes_exit_is_logged_once_though_dagman_logged_its_post_script(schedd, crashing):
    """A DAG's nodes log has a second writer: DAGMan logs the POST script's end after the job's.
    A schedd killed after it logged the exit, before it noted that, must not log the exit again
    after DAGMan's event (DAGMan reads "BAD EVENT: job ended, post script count != 0")."""
    pid = crashing("exit:after-log")
    job = submit_gated(schedd)
    schedd.wait_running(job)
    (schedd.work / "go").touch()
    crashed(schedd, pid)
    cluster = job.split(".")[0]
    with open(schedd.work / "job.log", "a") as log:  # as DAGMan writes it, while no schedd runs
        log.write(f"016 ({int(cluster):03d}.000.000) 2026-11-28 09:27:04 POST Script terminated.\n"
                  "\t(1) Normal termination (return value 0)\n    DAG Node: A\n...\n")
    ad = schedd.wait_history(job)
    assert ad["JobStatus"] == JobStatus.COMPLETED
    assert types_for(read_events(schedd.work / "job.log"), job) == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED, ET.POST_SCRIPT_TERMINATED]
