"""What ``crab status`` reads from a job's user log (``job_log.<id>``): how often its job restarted,
how long the runs that a restart cut short lasted, and how long its latest execution ran.

A restart is the same attempt (the same crab_retry) running again without PostJob in between:
CRAB's ``cache_status.parseJobLog`` counts one for every JobEvictedEvent, ShadowExceptionEvent
and JobReconnectFailedEvent of a job that is not idle, and for a JobHeldEvent of a running job
(crab-spec §1.2); the count runs over every attempt in the log.  An eviction (of those three) also
closes the run's wall time and opens a new slot in WallDurations, so a run it cut short and that
ran again is waste in ``crab status --long``; a hold without one keeps the slot, which the run after
the release fills.  A run evicted as its job was removed is the attempt's last: its runtime, not waste.  The log is read with HTCondor's
own reader (``htcondor2.JobEventLog``), as DAGMan and PostJob read theirs, and only if it holds
one of those events at all: most logs hold none, and a scan for their headers costs a fraction
of the parse (the first status of a 10,000-job task reads every log).

The latest execution's wall time is what ``cache_status`` records in WallDurations: from its
EXECUTE event to the event that ends it, which for a removed job HTCondor logs only once its
processes are gone.  A killed job's report was written at the kill signal, so its runtime alone
would leave out the time the job took to stop.
"""

from __future__ import annotations

from typing import NamedTuple


class CutRun(NamedTuple):
    """A run an eviction or a hold ended, unless its job then ended (removed: the run is the
    attempt's own): a WallDurations slot of its own in CRAB's status_cache, with the site and
    memory its log gave it."""

    attempt: int  # which of the job's submissions it ran under, from 0 (its crab_retry)
    wall_s: int  # as logged
    site: str | None  # JOBGLIDEIN_CMSSite of its JobAdInformation event (None: not logged)
    rss_kb: int | None  # its last ResidentSetSize (None: not logged)


class Restarts(NamedTuple):
    """The restarts of a job, and the runs an eviction ended before the job ran again."""

    count: int
    cut: tuple[CutRun, ...]

    @property
    def lost_s(self) -> int:
        """The wall seconds of the runs cut short (Waste in crab status --long)."""
        return sum(run.wall_s for run in self.cut)


def restarts(log_path: str) -> Restarts:
    """The restarts of the job whose user log is ``log_path`` (none if there is no log yet)."""
    import htcondor2  # only here: a status whose logs have not changed needs no bindings

    from engine.schedd.local.userlog import holds_events

    T = htcondor2.JobEventType
    restart_types = {T.JOB_EVICTED, T.SHADOW_EXCEPTION, T.JOB_RECONNECT_FAILED}
    if not holds_events(log_path, restart_types | {T.JOB_HELD}):
        return Restarts(0, ())
    state, count, start, attempt = "idle", 0, 0, -1
    cut: list[CutRun] = []
    evicted = site = rss = None  # the run an eviction or hold ended, counted unless the job then ends
    for event in htcondor2.JobEventLog(log_path).events(stop_after=0):
        kind = event.type
        if kind == T.SUBMIT:
            state, evicted, attempt = "idle", None, attempt + 1
        elif kind == T.JOB_RELEASED:
            state = "idle"
        elif kind == T.EXECUTE:
            cut += [evicted] if evicted else []
            state, start, evicted, site, rss = "running", event.timestamp, None, None, None
        elif kind == T.JOB_AD_INFORMATION and state == "running":
            value = event.get("JOBGLIDEIN_CMSSite")
            site = value if isinstance(value, str) and value and value != "Unknown" else site
        elif kind == T.IMAGE_SIZE and state == "running":
            rss = event.get("ResidentSetSize", rss)
        elif kind in restart_types:
            if state == "running":
                evicted = CutRun(max(attempt, 0), max(0, event.timestamp - start), site, rss)
            if state != "idle":
                count += 1
            state = "idle"
        elif kind == T.JOB_HELD:
            if state == "running":  # held with no eviction logged (a hold of the job's own)
                count += 1
                evicted = CutRun(max(attempt, 0), max(0, event.timestamp - start), site, rss)
            state = "held"
        elif kind in (T.JOB_TERMINATED, T.JOB_ABORTED):
            state = "ended"
    if state != "ended" and evicted:  # cut already while it waits, held or to run again, as in cache_status
        cut.append(evicted)
    return Restarts(count, tuple(cut))


class LastRun(NamedTuple):
    """The latest execution of a job as its log tells it."""

    start: int  # UNIX seconds, as logged
    end: int
    site: str | None  # JOBGLIDEIN_CMSSite of its JobAdInformation event (None: not logged)
    rss_kb: int | None  # its last ResidentSetSize (None: not logged)


def last_run(log_path: str) -> LastRun | None:
    """The job's latest execution since its latest SUBMIT; None if it has not run since, runs
    still, or has no log.  Its site and memory are what a pool logs of a job it removed, which
    brings none of its files back (CRAB's cache_status reads the same events)."""
    import htcondor2

    from engine.schedd.local.userlog import holds_events

    T = htcondor2.JobEventType
    ends = {T.JOB_EVICTED, T.JOB_TERMINATED, T.JOB_ABORTED, T.JOB_HELD, T.SHADOW_EXCEPTION, T.JOB_RECONNECT_FAILED}
    if not holds_events(log_path, {T.EXECUTE}):
        return None
    start = end = site = rss = None
    for event in htcondor2.JobEventLog(log_path).events(stop_after=0):
        kind = event.type
        if kind == T.SUBMIT:
            start = end = site = rss = None
        elif kind == T.EXECUTE:
            start, end, site, rss = event.timestamp, None, None, None
        elif kind in ends and start is not None and end is None:
            end = event.timestamp
        elif kind == T.JOB_AD_INFORMATION and start is not None and end is None:
            value = event.get("JOBGLIDEIN_CMSSite")
            site = value if isinstance(value, str) and value and value != "Unknown" else site
        elif kind == T.IMAGE_SIZE and start is not None and end is None:
            rss = event.get("ResidentSetSize", rss)
    return LastRun(start, end, site, rss) if start is not None and end is not None else None
