"""What ``crab status`` reads from a job's user log (``job_log.<id>``): how often its job restarted,
and how long its latest execution ran.

A restart is the same attempt (the same crab_retry) running again without PostJob in between:
CRAB's ``cache_status.parseJobLog`` counts one for every JobEvictedEvent, ShadowExceptionEvent
and JobReconnectFailedEvent of a job that is not idle, and for a JobHeldEvent of a running job
(crab-spec §1.2); the count runs over every attempt in the log.  The log is read with HTCondor's
own reader (``htcondor2.JobEventLog``), as DAGMan and PostJob read theirs, and only if it holds
one of those events at all: most logs hold none, and a scan for their headers costs a fraction
of the parse (the first status of a 10,000-job task reads every log).

The latest execution's wall time is what ``cache_status`` records in WallDurations: from its
EXECUTE event to the event that ends it, which for a removed job HTCondor logs only once its
processes are gone.  A killed job's report was written at the kill signal, so its runtime alone
would leave out the time the job took to stop.
"""

from __future__ import annotations


def restarts(log_path: str) -> int:
    """The restarts of the job whose user log is ``log_path`` (0 if there is no log yet)."""
    import htcondor2  # only here: a status whose logs have not changed needs no bindings

    from engine.schedd.local.userlog import holds_events

    T = htcondor2.JobEventType
    restart_types = {T.JOB_EVICTED, T.SHADOW_EXCEPTION, T.JOB_RECONNECT_FAILED}
    if not holds_events(log_path, restart_types | {T.JOB_HELD}):
        return 0
    state, count = "idle", 0
    for event in htcondor2.JobEventLog(log_path).events(stop_after=0):
        kind = event.type
        if kind == T.SUBMIT or kind == T.JOB_RELEASED:
            state = "idle"
        elif kind == T.EXECUTE:
            state = "running"
        elif kind in restart_types:
            if state != "idle":
                count += 1
            state = "idle"
        elif kind == T.JOB_HELD:
            if state == "running":
                count += 1
            state = "held"
        elif kind in (T.JOB_TERMINATED, T.JOB_ABORTED):
            state = "ended"
    return count


def last_run(log_path: str) -> tuple[int, int] | None:
    """When the job's latest submission began and ended its execution (UNIX seconds, as logged);
    None if it has not run since its latest SUBMIT, runs still, or has no log."""
    import htcondor2

    from engine.schedd.local.userlog import holds_events

    T = htcondor2.JobEventType
    ends = {T.JOB_EVICTED, T.JOB_TERMINATED, T.JOB_ABORTED, T.JOB_HELD, T.SHADOW_EXCEPTION, T.JOB_RECONNECT_FAILED}
    if not holds_events(log_path, {T.EXECUTE}):
        return None
    start = end = None
    for event in htcondor2.JobEventLog(log_path).events(stop_after=0):
        kind = event.type
        if kind == T.SUBMIT:
            start = end = None
        elif kind == T.EXECUTE:
            start, end = event.timestamp, None
        elif kind in ends and start is not None and end is None:
            end = event.timestamp
    return (start, end) if start is not None and end is not None else None
