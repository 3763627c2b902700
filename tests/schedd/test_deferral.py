"""``deferral_time`` as users write it: a job runs no sooner than its time, and a job submitted
after its time and window never runs (seen on the 23.9.6 test pool: it stays idle, matching no
slot)."""

from __future__ import annotations

import time

import htcondor2
from schedd_harness import EventReader

from engine.schedd.api import JobStatus

ET = htcondor2.JobEventType


def test_a_deferred_job_starts_at_its_time(schedd):
    when = int(time.time()) + 3
    result = schedd.submit(f"executable = /bin/true\ndeferral_time = {when}\nlog = job.log\nqueue\n")
    job = f"{result.cluster}.0"
    log = EventReader(schedd.work / "job.log")
    execute = log.wait_type(ET.EXECUTE, job, timeout=30)
    assert execute.timestamp >= when, "not before its deferral time"
    log.wait_type(ET.JOB_TERMINATED, job)


def test_a_job_submitted_after_its_deferral_window_waits_for_good(schedd):
    missed = schedd.submit(f"executable = /bin/true\ndeferral_time = {int(time.time()) - 100}\nqueue\n")
    later = schedd.submit("executable = /bin/true\nqueue\n")
    schedd.wait_history(f"{later.cluster}.0")
    ad = schedd.job(f"{missed.cluster}.0")
    assert (ad["JobStatus"], ad["NumJobStarts"]) == (JobStatus.IDLE, 0)


def test_next_job_start_delay_spaces_the_clusters_starts(schedd):
    """``next_job_start_delay = 8`` with ``queue 3`` on the pool: the jobs started 8 s apart
    (10:26:36, :44, :52), though slots were free; the embedded schedd started them at once."""
    result = schedd.submit("executable = /bin/true\nlog = job.log\nnext_job_start_delay = 2\nqueue 2\n")
    log = EventReader(schedd.work / "job.log")
    first = log.wait_type(ET.EXECUTE, f"{result.cluster}.0")
    second = log.wait_type(ET.EXECUTE, f"{result.cluster}.1")
    assert second.timestamp - first.timestamp >= 2
