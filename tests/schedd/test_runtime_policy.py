"""Run-time policy of submit files written as the HTCondor manual writes them, followed over the
job's life: each test's expected events, attributes and tool answers are those the HTCondor
23.9.6 test pool gave for the same file (condor_submit, condor_hold, condor_rm, condor_history).
"""

from __future__ import annotations

import time

from htcondor2 import JobEventType as ET

from schedd_harness import EventReader, types_for, wait_for
from engine.schedd.api import JobStatus


def test_leave_in_queue_keeps_a_completed_job_until_condor_rm(schedd):
    """``leave_in_queue = JobStatus == 4``: the pool keeps the job, status C, after its
    JOB_TERMINATED; condor_hold refuses it ("Permission denied", exit 1, every total 0) and
    condor_rm moves it to the history, removed, with a JOB_ABORTED after its JOB_TERMINATED."""
    cluster = schedd.submit("""
        executable = /bin/true
        log = leave.log
        leave_in_queue = JobStatus == 4
        queue
        """).cluster
    job = f"{cluster}.0"
    log = EventReader(schedd.work / "leave.log")
    log.wait_type(ET.JOB_TERMINATED, job)
    ad = schedd.wait_status(job, JobStatus.COMPLETED)
    assert ad["ExitCode"] == 0 and "CompletionDate" in ad
    assert "1 completed" in schedd.cli("q", "-totals").stdout

    held = schedd.cli("hold", job)
    assert (held.returncode, held.stderr.strip()) == (1, f"Permission denied to hold job {job}")
    totals = schedd.cli("hold", "-totals", job)
    assert totals.stdout.strip() == ("0 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, "
                                     "0 Permission Denied")
    assert schedd.job(job)["JobStatus"] == JobStatus.COMPLETED

    removed = schedd.cli("rm", str(cluster))
    assert removed.returncode == 0, removed.stderr
    log.wait_type(ET.JOB_ABORTED, job)
    history = schedd.wait_history(job)
    assert history["JobStatus"] == JobStatus.REMOVED
    assert history["CompletionDate"] == ad["CompletionDate"]
    assert types_for(log.all(), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED, ET.JOB_ABORTED]


def test_leave_in_queue_true_keeps_a_removed_job_too(schedd):
    """``leave_in_queue = true``: condor_rm logs the JOB_ABORTED but the job stays, status X; a
    second condor_rm fails ("Couldn't find/remove all jobs in cluster N", exit 1). The next
    schedd does not abort it again."""
    cluster = schedd.submit("""
        executable = /bin/sleep
        arguments = 600
        log = kept.log
        leave_in_queue = true
        queue
        """).cluster
    job = f"{cluster}.0"
    schedd.wait_running(job)
    assert schedd.cli("rm", str(cluster)).returncode == 0
    log = EventReader(schedd.work / "kept.log")
    log.wait_type(ET.JOB_ABORTED, job)
    assert schedd.job(job)["JobStatus"] == JobStatus.REMOVED
    again = schedd.cli("rm", str(cluster))
    assert (again.returncode, again.stderr.strip()) == (1, f"Couldn't find/remove all jobs in cluster {cluster}")
    schedd.stop()
    assert schedd.job(job)["JobStatus"] == JobStatus.REMOVED
    assert types_for(log.all(), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_ABORTED]


def test_rm_forcex_takes_out_a_removed_job_leave_in_queue_kept(schedd):
    """``leave_in_queue = true`` then condor_rm: the job stays, status X; condor_rm -forcex sets
    LeaveJobInQueue false and the job leaves for the history, as on the pool (seen with 23.9.6:
    gone from condor_q, ``LeaveJobInQueue`` false in condor_history), its abort logged once."""
    cluster = schedd.submit("""
        executable = /bin/sleep
        arguments = 600
        log = forced.log
        leave_in_queue = true
        queue
        """).cluster
    job = f"{cluster}.0"
    schedd.wait_running(job)
    assert schedd.cli("rm", job).returncode == 0
    log = EventReader(schedd.work / "forced.log")
    log.wait_type(ET.JOB_ABORTED, job)
    assert schedd.wait_status(job, JobStatus.REMOVED)
    forced = schedd.cli("rm", "-forcex", job)
    assert (forced.returncode, forced.stdout.strip()) == (0, f"Job {job} removed locally (remote state unknown)")
    history = schedd.wait_history(job)
    assert history["JobStatus"] == JobStatus.REMOVED and history["LeaveJobInQueue"] is False
    assert types_for(log.all(), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_ABORTED]


def test_allowed_job_duration_holds_a_job_that_runs_too_long(schedd):
    """``allowed_job_duration = 1``: the shadow holds the running job, code 46, subcode 0, with
    HTCondor's short time in the reason, and logs the hold without a JOB_EVICTED."""
    cluster = schedd.submit("""
        executable = /bin/sleep
        arguments = 600
        log = duration.log
        allowed_job_duration = 1
        queue
        """).cluster
    job = f"{cluster}.0"
    log = EventReader(schedd.work / "duration.log")
    held = log.wait_type(ET.JOB_HELD, job)
    assert (held["HoldReasonCode"], held["HoldReasonSubCode"], held["HoldReason"]) == \
        (46, 0, "The job exceeded allowed job duration of 00:01")
    ad = schedd.wait_status(job, JobStatus.HELD)
    assert (ad["HoldReasonCode"], ad["AllowedJobDuration"]) == (46, 1)
    assert types_for(log.all(), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_HELD]


def test_hold_true_has_no_hold_subcode(schedd):
    """``hold = true``: HoldReasonCode 15 and no HoldReasonSubCode, as condor_submit 23.9.6 queues it
    (``condor_q -af HoldReasonSubCode`` says undefined)."""
    cluster = schedd.submit("""
        executable = /bin/true
        hold = true
        queue
        """).cluster
    out = schedd.cli("q", f"{cluster}.0", "-af", "HoldReasonCode", "HoldReasonSubCode")
    assert out.stdout.split() == ["15", "undefined"]


def test_a_job_held_while_it_runs_keeps_how_it_ended(schedd):
    """condor_hold of running jobs: the pool records how each process ended once it is stopped,
    /bin/sleep by SIGTERM (ExitBySignal true, ExitSignal 15, no ExitCode) and a script that traps
    TERM with its exit code (143, ExitBySignal false); condor_rm keeps them in the history.  Before
    any run, ExitBySignal is false and ExitStatus 0, as condor_submit sets them."""
    schedd.write("trap.sh", """
        #!/bin/sh
        trap 'exit 143' TERM
        sleep 600 &
        wait $!
        """, executable=True)
    cluster = schedd.submit("""
        log = vac.log
        executable = /bin/sleep
        arguments = 600
        queue
        """).cluster
    other = schedd.submit("""
        log = vac.log
        executable = trap.sh
        queue
        """, name="trap.sub").cluster
    sleeper, trapper = f"{cluster}.0", f"{other}.0"
    out = schedd.cli("q", sleeper, "-af", "ExitBySignal", "ExitStatus", "ExitCode")
    assert out.stdout.split() == ["false", "0", "undefined"]
    schedd.wait_running(sleeper)
    schedd.wait_running(trapper)
    assert schedd.cli("hold", sleeper, trapper).returncode == 0
    log = EventReader(schedd.work / "vac.log")
    # in either order: each is held once its process has ended, and which ends first is a race
    held = {log.wait(lambda e: e.type == ET.JOB_HELD, "a JOB_HELD event").cluster for _ in range(2)}
    assert held == {cluster, other}
    assert schedd.cli("rm", str(cluster), str(other)).returncode == 0
    by_signal = schedd.wait_history(sleeper)
    assert (by_signal["ExitBySignal"], by_signal["ExitSignal"], "ExitCode" in by_signal) == (True, 15, False)
    trapped = schedd.wait_history(trapper)
    assert (trapped["ExitBySignal"], trapped["ExitCode"], trapped["NumJobCompletions"]) == (False, 143, 0)


def test_job_max_vacate_time_shorter_than_the_machines_is_the_grace(schedd, monkeypatch):
    """``job_max_vacate_time = 1`` for a job that ignores SIGTERM, on a machine whose vacate time is
    600 s: condor_rm kills it with SIGKILL after the job's second, not the machine's ten minutes
    (the pool: removed 3.6 s after condor_rm with 3, history ExitBySignal true, ExitSignal 9)."""
    monkeypatch.setenv("CRABTUI_JOB_MAX_VACATE_TIME", "600")  # the machine's; read as the daemon starts
    schedd.write("ignore.sh", """
        #!/bin/sh
        trap '' TERM
        sleep 600
        """, executable=True)
    cluster = schedd.submit("""
        executable = ignore.sh
        log = vt.log
        job_max_vacate_time = 1
        queue
        """).cluster
    job = f"{cluster}.0"
    schedd.wait_running(job)
    assert schedd.cli("rm", job).returncode == 0
    EventReader(schedd.work / "vt.log").wait_type(ET.JOB_ABORTED, job)
    ad = schedd.wait_history(job)
    assert (ad["JobMaxVacateTime"], ad["ExitBySignal"], ad["ExitSignal"]) == (1, True, 9)


def test_q_af_has_htcondors_functions_and_current_time(schedd):
    """A policy checked by hand, as with the pool's condor_q: its own functions and CurrentTime
    evaluate (``{ "a","b" } true true`` there)."""
    cluster = schedd.submit("executable = /bin/true\nhold = true\nqueue\n").cluster
    out = schedd.cli("q", f"{cluster}.0", "-af", 'splitUserName("a@b")', 'stringListMember("b", "a,b")',
                     "(CurrentTime - QDate) >= 0")
    assert out.stdout == '{ "a","b" } true true\n'


def test_condor_rm_kills_at_once_a_job_that_wants_no_graceful_removal(schedd):
    """condor_rm of running jobs that trap SIGTERM, on the pool: the job with
    ``want_graceful_removal = false`` is killed at once (SIGKILL, its trap never runs), as 23.9.6's
    shadow kills it, and so is one its periodic_remove removes (ExitSignal 9 on the pool); one
    without the command gets SIGTERM and writes 'got TERM'."""
    schedd.write("trap.sh", """
        #!/bin/sh
        trap 'echo got TERM >> trap.$1.out; exit 7' TERM
        echo start > trap.$1.out
        sleep 300 &
        wait
        """, executable=True)

    def started(name: str, extra: str) -> str:
        text = f"executable = trap.sh\narguments = {name}\nlog = rm.log\n{extra}\nqueue\n"
        job = f"{schedd.submit(text, name=f'{name}.sub').cluster}.0"
        schedd.wait_running(job)
        wait_for(lambda: (schedd.work / f"trap.{name}.out").exists(), f"{name}'s trap to be set")
        return job

    hard, default = started("hard", "want_graceful_removal = false"), started("default", "")
    assert schedd.cli("rm", hard, default).returncode == 0
    removed = schedd.wait_history(hard)
    schedd.wait_history(default)
    policy = started("policy", "want_graceful_removal = false\nperiodic_remove = CRABTUI_Remove =?= true")
    assert schedd.cli("qedit", policy, "CRABTUI_Remove", "true").returncode == 0
    schedd.wait_history(policy)
    said = {name: (schedd.work / f"trap.{name}.out").read_text() for name in ("hard", "default", "policy")}
    assert said == {"hard": "start\n", "default": "start\ngot TERM\n", "policy": "start\n"}
    assert (removed["ExitBySignal"], removed["ExitSignal"]) == (True, 9)
