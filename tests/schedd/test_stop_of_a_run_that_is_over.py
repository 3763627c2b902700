"""A stop request for a run that ended in the same unit of work is not sent: the run's starter is
free for another job by then (or gone, its pid anyone's), and the pidfd the schedd watched it by
is closed, its number free for the next one the schedd opens.  Such a request used to be sent
through the closed descriptor: ``pidfd_send_signal`` failed (EBADF, "acting on processes failed"
in the schedd's log), or, had the number been taken by another starter's pidfd meanwhile, it
would have signalled that starter.  Real daemons, starters and jobs; the jobs wait on files."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from htcondor2 import JobEventType as ET

from schedd_harness import process_alive, process_gone, read_events, stop_daemon, types_for, wait_for
from engine.schedd.api import JobAction, JobStatus

TWO_SLOTS = '[[site]]\nname = "T2_TWO"\nslots = 2\n'

# Runs until its own file `go.<process>` exists, then leaves its mark and exits 3.
GATED = """\
#!/bin/sh
while [ ! -e "go.$1" ]; do sleep 0.05; done
echo "$1" >> marks
exit 3
"""


def kill_daemon(schedd) -> None:
    daemon = schedd.client.ping()["pid"]
    schedd.close_client()
    os.kill(daemon, signal.SIGKILL)
    wait_for(lambda: process_gone(daemon), "the killed daemon to be gone", 5)


def schedd_log_errors(schedd) -> list[str]:
    text = Path(schedd.state.log).read_text() if os.path.exists(schedd.state.log) else ""
    return [line for line in text.splitlines() if "acting on processes failed" in line or "Bad file descriptor" in line]


def test_a_job_removed_after_a_schedd_restart_ends_cleanly_and_its_neighbour_runs_on(schedd):
    """After a restart the reconnected starters end with their runs, and the schedd learns of the
    end from their pidfds: it collected the removed job's run and then sent the removal again,
    through the pidfd it had just closed."""
    schedd.write_pool(TWO_SLOTS)
    script = schedd.write("gated.sh", GATED, executable=True)
    removed, neighbour = schedd.submit(
        f"executable = {script}\narguments = $(Process)\nlog = job.log\nqueue 2\n").job_ids()
    removed_pid = schedd.wait_running(removed)["JobPid"]
    neighbour_pid = schedd.wait_running(neighbour)["JobPid"]
    kill_daemon(schedd)

    assert schedd.client.act(JobAction.Remove, removed).changed == 1  # a new schedd, reconnected to both
    assert schedd.wait_history(removed)["JobStatus"] == JobStatus.REMOVED
    assert process_gone(removed_pid)
    assert schedd_log_errors(schedd) == []

    ad = schedd.job(neighbour)
    assert (ad["JobStatus"], ad["JobPid"], ad["NumJobStarts"]) == (JobStatus.RUNNING, neighbour_pid, 1)
    assert process_alive(neighbour_pid), "the other job runs on, untouched"
    (schedd.work / "go.1").touch()
    ad = schedd.wait_history(neighbour)
    assert (ad["JobStatus"], ad["ExitCode"], ad["NumJobStarts"]) == (JobStatus.COMPLETED, 3, 1)
    assert (schedd.work / "marks").read_text() == "1\n", "only the neighbour ran to its end, once"
    events = read_events(schedd.work / "job.log")
    assert types_for(events, removed) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_ABORTED]
    assert types_for(events, neighbour) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED]
    assert schedd_log_errors(schedd) == []


def test_a_schedd_stopped_after_a_restart_evicts_its_reconnected_job_cleanly(schedd):
    """The same through a shutdown: the starter kills its job and ends, and its pidfd tells."""
    script = schedd.write("gated.sh", GATED, executable=True)
    result = schedd.submit(f"executable = {script}\narguments = 0\nlog = job.log\nqueue\n")
    job = f"{result.cluster}.0"
    pid = schedd.wait_running(job)["JobPid"]
    kill_daemon(schedd)
    assert schedd.wait_running(job)["JobPid"] == pid  # a new schedd, reconnected to it

    stop_daemon(schedd.state)
    assert process_gone(pid)
    assert schedd_log_errors(schedd) == []
    assert types_for(read_events(schedd.work / "job.log"), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED]
