"""The starter owns a running job, not the schedd (issue 20, part 1): a schedd killed with
``kill -9`` comes back to find its jobs still running, or finished with their exit recorded, and
runs again only a job whose starter is gone too.  Real daemons, real starters, real processes;
jobs wait on a file the test creates, so that nothing depends on timing."""

from __future__ import annotations

import os
import signal
import time

from htcondor2 import JobEventType as ET

from schedd_harness import process_alive, process_gone, read_events, types_for, wait_for
from engine.schedd.api import JobAction, JobStatus

ONE_SLOT = '[[site]]\nname = "T2_ONE"\nslots = 1\n'

# Runs until the file `go` exists, then leaves its mark and exits 3.
GATED = """\
#!/bin/sh
while [ ! -e go ]; do sleep 0.05; done
echo "$1" >> marks
exit 3
"""


def gated_jobs(schedd, count: int = 1, name: str = "job.sub"):
    script = schedd.write("gated.sh", GATED, executable=True)
    return schedd.submit(f"executable = {script}\narguments = $(Process)\nlog = job.log\nqueue {count}\n", name=name)


def submitted(schedd, text: str) -> str:
    return f"{schedd.submit(text).cluster}.0"


def kill_daemon(schedd) -> None:
    daemon = schedd.client.ping()["pid"]
    schedd.close_client()
    os.kill(daemon, signal.SIGKILL)
    wait_for(lambda: process_gone(daemon), "the killed daemon to be gone", 5)


def starter_of(job_pid: int) -> int:
    with open(f"/proc/{job_pid}/stat") as f:
        return int(f.read().rpartition(")")[2].split()[1])


def marks(schedd) -> list[str]:
    path = schedd.work / "marks"
    return path.read_text().split() if path.exists() else []


def test_a_job_running_when_the_schedd_is_killed_runs_on_and_is_collected_once(schedd):
    schedd.write_pool(ONE_SLOT)
    result = gated_jobs(schedd, 2)
    running, idle = result.job_ids()
    pid = schedd.wait_running(running)["JobPid"]
    kill_daemon(schedd)
    assert process_alive(pid), "the job belongs to its starter, not to the schedd"

    ad = schedd.wait_status(running, JobStatus.RUNNING)  # the next command starts a new schedd
    assert (ad["JobPid"], ad["NumJobStarts"]) == (pid, 1), "reconnected to, not started again"
    assert schedd.job(idle)["JobStatus"] == JobStatus.IDLE, "its slot is still taken"
    (schedd.work / "go").touch()
    ad = schedd.wait_history(running)
    assert (ad["JobStatus"], ad["ExitCode"], ad["NumJobStarts"]) == (JobStatus.COMPLETED, 3, 1)
    schedd.wait_history(idle)
    assert sorted(marks(schedd)) == ["0", "1"], "each job ran once"
    events = read_events(schedd.work / "job.log")
    assert types_for(events, running) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED]


def test_a_job_that_ends_while_the_schedd_is_down_terminates_once_with_its_real_exit(schedd):
    """Issue 20's reproduction: the job's exit used to be lost, and the job evicted and run again."""
    schedd.write_pool(ONE_SLOT)
    result = gated_jobs(schedd, 2)
    running, idle = result.job_ids()
    pid = schedd.wait_running(running)["JobPid"]
    starter = starter_of(pid)
    kill_daemon(schedd)
    (schedd.work / "go").touch()
    wait_for(lambda: process_gone(starter) or not process_alive(pid) and marks(schedd),
             "the job to end while no schedd runs")
    ended = time.time()
    assert marks(schedd) == ["0"]

    ad = schedd.wait_history(running)  # a new schedd collects the recorded exit
    assert (ad["JobStatus"], ad["ExitCode"], ad["NumJobStarts"]) == (JobStatus.COMPLETED, 3, 1)
    schedd.wait_history(idle)
    assert sorted(marks(schedd)) == ["0", "1"], "nothing that finished ran again"
    events = read_events(schedd.work / "job.log")
    assert types_for(events, running) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED]
    (terminated,) = [e for e in events if e.type == ET.JOB_TERMINATED and f"{e.cluster}.{e.proc}" == running]
    assert terminated["ReturnValue"] == 3
    assert ad["CompletionDate"] <= ended, "the time the job ended, not the time the new schedd learnt it"


def test_only_a_job_whose_starter_is_gone_too_is_evicted_and_run_again(schedd):
    schedd.write_pool(ONE_SLOT)
    running = f"{gated_jobs(schedd).cluster}.0"
    pid = schedd.wait_running(running)["JobPid"]
    kill_daemon(schedd)
    os.kill(starter_of(pid), signal.SIGKILL)  # as a reboot takes the starter with the schedd

    ad = schedd.wait_running(running)
    assert ad["NumJobStarts"] == 2 and ad["JobPid"] != pid
    wait_for(lambda: process_gone(pid), "the orphaned run's process to be killed")
    (schedd.work / "go").touch()
    schedd.wait_history(running)
    assert marks(schedd) == ["0"], "the lost run never finished; the second did, once"
    assert types_for(read_events(schedd.work / "job.log"), running) == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.EXECUTE, ET.JOB_TERMINATED]


def test_a_starter_killed_under_a_live_schedd_is_noticed_and_its_job_runs_again(schedd):
    """A starter killed while its job runs sends no news: the schedd used to show the job running
    for ever, its slot taken."""
    schedd.write_pool(ONE_SLOT)
    running = f"{gated_jobs(schedd).cluster}.0"
    pid = schedd.wait_running(running)["JobPid"]
    os.kill(starter_of(pid), signal.SIGKILL)

    ad = wait_for(lambda: (lambda ad: ad if ad and ad.get("NumJobStarts") == 2 else None)(schedd.job(running)),
                  "the job to start again once its starter is gone")
    assert ad["JobPid"] != pid
    wait_for(lambda: process_gone(pid), "the lost run's process to be killed")
    (schedd.work / "go").touch()
    schedd.wait_history(running)
    assert marks(schedd) == ["0"], "the lost run never finished; the second did, once"
    assert types_for(read_events(schedd.work / "job.log"), running) == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.EXECUTE, ET.JOB_TERMINATED]


# Ignores SIGTERM, and leaves a process of its own behind in a session of its own.
STUBBORN_FAMILY = """\
#!/bin/sh
trap '' TERM
setsid sh -c 'trap "" TERM; echo $$ > escaped.pid; while true; do sleep 0.2; done' &
while [ ! -s escaped.pid ]; do sleep 0.05; done
while [ ! -e go ]; do sleep 0.05; done
"""


def test_a_removed_job_shows_its_processes_until_sigkill_after_the_grace_time_ends_them_all(schedd):
    """TERM first, SIGKILL after the vacate time (2 s here): the job keeps its JobPid, the sign
    that its processes live, until every one of them, also one that left its process group, is
    gone; the removal is logged only then."""
    script = schedd.write("stubborn.sh", STUBBORN_FAMILY, executable=True)
    job = submitted(schedd, f"executable = {script}\nlog = job.log\nqueue\n")
    pid = schedd.wait_running(job)["JobPid"]
    wait_for(lambda: (schedd.work / "escaped.pid").exists() and (schedd.work / "escaped.pid").read_text().strip(),
             "the job to start its escaping child")
    escaped = int((schedd.work / "escaped.pid").read_text())
    assert schedd.client.act(JobAction.Remove, job).changed == 1
    ad = schedd.job(job)
    assert ad["JobStatus"] == JobStatus.REMOVED and ad["JobPid"] == pid, "still killing: its processes live"
    assert process_alive(pid) and process_alive(escaped), "SIGTERM is ignored"
    schedd.wait_history(job)
    assert process_gone(pid) and process_gone(escaped), "SIGKILL took them all, as the job left the queue"
    assert types_for(read_events(schedd.work / "job.log"), job) == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_ABORTED]


def test_what_a_job_leaves_behind_when_it_exits_is_killed(schedd):
    script = schedd.write("leaver.sh", "#!/bin/sh\nsetsid sleep 300 &\necho $! > left.pid\n", executable=True)
    job = submitted(schedd, f"executable = {script}\nqueue\n")
    assert schedd.wait_history(job)["ExitCode"] == 0
    assert process_gone(int((schedd.work / "left.pid").read_text())), "killed before the job was reported ended"
