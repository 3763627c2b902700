"""A job that exits and stays in the queue (``on_exit_remove`` false) starts again only at the
schedd's next pass for it, as HTCondor 23.9.6 paces it (seen on the test pool): a vanilla job gives
its slot back and waits for the next negotiation cycle (NEGOTIATOR_INTERVAL), a scheduler-universe
job for the next queue scan (at most one each SCHEDD_MIN_INTERVAL).  Meanwhile the user log holds
JOB_EVICTED "terminated and requeued" with the reason, and the job shows idle."""

from __future__ import annotations

import time

import pytest
from htcondor2 import JobEventType as ET
from schedd_harness import EventReader, types_for

from engine.schedd.api import JobAction, JobStatus

INTERVAL = 2  # seconds, for the knob under test; an exit is stamped to the second, so a restart comes 1 to 2 s later


@pytest.mark.parametrize("universe, knob", [
    ("vanilla", "CRABTUI_NEGOTIATOR_INTERVAL"),
    ("scheduler", "CRABTUI_SCHEDD_MIN_INTERVAL"),
])
def test_a_requeued_job_waits_for_the_schedds_next_pass(schedd, monkeypatch, universe, knob):
    monkeypatch.setenv(knob, str(INTERVAL))  # read by the daemon the first request starts
    result = schedd.submit(f"""
        universe = {universe}
        executable = /bin/sh
        arguments = "-c 'exit 3'"
        on_exit_remove = false
        log = job.log
        queue
        """)
    job = f"{result.cluster}.0"
    log = EventReader(schedd.work / "job.log")
    log.wait_type(ET.EXECUTE, job)
    first_start = time.monotonic()
    requeued = log.wait_type(ET.JOB_EVICTED, job)
    assert requeued["TerminatedAndRequeued"] is True and requeued["ReturnValue"] == 3
    ad = schedd.job(job)
    assert ad["JobStatus"] == JobStatus.IDLE, "idle until the schedd's next pass, not running again at once"
    reason = "The job attribute OnExitRemove expression 'false' evaluated to FALSE"
    assert reason in (schedd.work / "job.log").read_text(), "the evicted event says why, as the pool's does"
    if universe == "vanilla":  # the shadow records it; the pool's scheduler-universe job has no RequeueReason
        assert ad["RequeueReason"] == reason
    assert ad["ExitCode"] == 3
    log.wait_type(ET.EXECUTE, job, timeout=3 * INTERVAL)
    log.wait_type(ET.EXECUTE, job, timeout=3 * INTERVAL)
    assert time.monotonic() - first_start >= 2 * (INTERVAL - 1), "two restarts, each a pass later"
    schedd.client.act(JobAction.Remove, job)
    schedd.wait_history(job)
    types = types_for(log.all(), job)
    starts = types.count(ET.EXECUTE)
    assert 3 <= starts <= 4, f"{starts} starts: the job spun instead of waiting for each pass"
    assert types[:6] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.EXECUTE, ET.JOB_EVICTED, ET.EXECUTE]
    final = schedd.history_ad(job)
    assert final["NumJobStarts"] == final["JobRunCount"] == starts


def test_the_pace_survives_a_schedd_restart(schedd, monkeypatch):
    """The exit that sets the pace is committed with the requeue: a schedd started again in the
    meantime does not start the job before its time either."""
    pace = 6
    monkeypatch.setenv("CRABTUI_SCHEDD_MIN_INTERVAL", str(pace))
    result = schedd.submit("""
        universe = scheduler
        executable = /bin/sh
        arguments = "-c 'exit 3'"
        on_exit_remove = false
        log = job.log
        queue
        """)
    job = f"{result.cluster}.0"
    log = EventReader(schedd.work / "job.log")
    log.wait_type(ET.JOB_EVICTED, job)
    requeued_at = time.monotonic()
    schedd.stop()
    assert schedd.job(job)["JobStatus"] == JobStatus.IDLE  # this request starts the daemon again
    assert time.monotonic() - requeued_at < pace - 2, "the daemon took too long to restart for the test to tell"
    log.wait_type(ET.EXECUTE, job, timeout=2 * pace)
    assert time.monotonic() - requeued_at >= pace - 1, "the restarted schedd waited for the job's time"
    schedd.client.act(JobAction.Remove, job)
    schedd.wait_history(job)
