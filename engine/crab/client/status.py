"""A task's jobs as ``crab status`` shows them: each job's state, retries, sites, attempts and figures.

The state of a job comes from its retry state (:mod:`engine.crab.ap.retry_policy`), which PreJob and
PostJob keep, and from its job in the queue, as CRAB's ``cache_status`` derives node states from
the DAG's files and the job ads (crab-spec §1.2): unsubmitted, cooloff, idle, running, held,
transferring, finished, failed, plus killing (removed, still in the queue) and killed (in flight or
cooling off when its DAG was removed or aborted).  A failed job that ``crab resubmit`` put in a new
epoch is unsubmitted until its DAG runs it again.

The figures of ``crab status --long`` come from the framework job reports
(``jobReport.json.<id>.<crab_retry>``, :func:`engine.crab.wn.fjr.performance`): runtime
(TotalJobTime, simulated seconds), memory (PeakValueRss, MB), CPU % (TotalJobCPU over runtime and
cores) and waste (the runtime of the attempts before the latest, and of the runs an eviction cut
short, which CRAB's WallDurations keep as a slot of their own).  An attempt without a report,
or that failed, counts its run as the job log timed it (at least), scaled to simulated seconds,
as CRAB's WallDurations do: a failed job's wrapper sleeps out the 20-minute minimum runtime after
its payload, and a removed job's report stops at the kill signal while the job ran on until its
processes were gone.  A successful attempt keeps its report's runtime: its wall time adds only
the wrapper's seconds, which the log's whole-second stamps time no better than a scaled clock's
second; a running job its time so
far and its ResidentSetSize from the queue; a killed job at least the wall time its job log gives
its last run, to the end of its processes.  Restarts (an attempt evicted, held while it ran,
or lost by its shadow, and run again) are counted from the job's user log, ``job_log.<id>``
(:mod:`engine.crab.ap.joblog`).

The status cache
----------------
Reading 10,000 retry states and their reports takes over a second, so what they say is kept in
``status_cache.json`` in the task directory (CRAB keeps its ``status_cache`` for the same reason;
here whoever asks for the status brings it up to date: the CLI, the UI or the task worker).  It is
derived data only: deleting it loses nothing.  This module is the one place that reads and writes
it::

    {"schema": "crabtui.status_cache/11",
     "dag": [ino, mtime_ns, size, stages_mtime_ns],   RunJobs.dag, and automatic splitting's
                                      stage directory (0: none), when "ids" were listed (null: not trusted)
     "ids": ["1", "2", ...],          the task's job ids, in CRAB's order
     "states": mtime_ns,               of the retry_state directory (null: not trusted)
     "jobs": {"1": [stamp, state, retries, cooloff_until, exit_code, error, open_retry, sites, walls,
                    runtime_s, memory_mb, cpu_s, waste_s, "[[attempt values], ...]", restarts, log_size,
                    rrn, epoch, crab_retry, [[attempt, wall_s, site, rss_kb], ...]],
              ...}}

``stamp`` is ``[ino, mtime_ns, size]`` of ``retry_state/job.<id>.json`` (null: no such file);
``state`` the job's state as its files say it (null while an attempt is open: the queue decides);
``walls`` the runtime of each attempt in ``sites``; runtime, memory and CPU seconds are the latest
closed attempt's; ``rrn``, ``epoch`` and ``crab_retry`` the job state's counters; then the runs evictions or holds
ended, unless the job then ended (from the log, with ``restarts``): the attempt each ran under, its
simulated seconds, its site and memory, if logged.  The attempts (values in :data:`ATTEMPT_KEYS` order) stay JSON text, parsed only
when someone looks at them (:class:`Attempts`): that halves the time to read the cache of 10,000
jobs.

A row is reused while its state file has the same stamp; and when the retry_state directory has
the mtime the cache recorded, no state file changed (every save is a create and a rename in that
directory), so no file is looked at at all.  As in git's "racy" index, a stamp younger than
:data:`RACY_NS` when the cache is written is not trusted, since a second change within the file
system's timestamp granularity would not show.  Reports are not stamped: the report of a closed
attempt is final before PostJob records it.  Writers replace the file atomically; a cache that
cannot be read is rebuilt, one that cannot be written is skipped.

``restarts`` are counted in the job's user log (``job_log.<id>``), whose size was ``log_size``
then (null: no log).  The log is looked at only when the row is read again or its attempt is
open (the log of a closed attempt is final before PostJob records it), and read again only if it
grew: the schedd only appends to it, so its size is its stamp, and one that is never racy.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.crab.ap import stages
from engine.crab.ap.sites import SiteView, site_view
from engine.crab.wn import fjr
from engine.gcpause import gc_paused
from engine.schedd.api import JobStatus, Schedd

if TYPE_CHECKING:
    from engine.crab.ap.retry_policy import JobState

STATUS_CACHE = "status_cache.json"
CACHE_SCHEMA = "crabtui.status_cache/11"
RACY_NS = 2_000_000_000
DAG_FILE = "RunJobs.dag"  # engine.crab.taskworker.dagman_creator.DAG_FILE; not imported: it pulls in the DAG layer
TASK_FILE = "task.json"  # engine.crab.taskworker.dagman_creator.TASK_FILE

_QUEUED = {JobStatus.IDLE: "idle", JobStatus.RUNNING: "running", JobStatus.HELD: "held",
           JobStatus.TRANSFERRING_OUTPUT: "transferring", JobStatus.COMPLETED: "transferring",
           JobStatus.REMOVED: "killing", JobStatus.SUSPENDED: "running"}
_PROJECTION = ["ClusterId", "CRAB_Id", "JobStatus", "MATCH_GLIDEIN_CMSSite", "JobCurrentStartDate",
               "ResidentSetSize"]
(_STAMP, _STATE, _RETRIES, _COOLOFF, _EXIT, _ERROR, _OPEN, _SITES, _WALLS, _RUNTIME, _MEMORY, _CPU, _WASTE,
 _ATTEMPTS, _RESTARTS, _LOG, _RRN, _EPOCH, _CRAB_RETRY, _CUT) = range(20)
_NO_FILE = [None, "unsubmitted", 0, None, None, None, None, [], [], None, None, None, 0.0, "[]", 0, None, 0, 0, 0, []]
ATTEMPT_KEYS = ("site", "exit_code", "request_memory", "max_runtime", "start", "end", "action", "reason",
                "runtime_s", "cpu_s", "memory_mb")


class Attempts(Sequence):
    """A job's attempts, oldest first, each a dict of :data:`ATTEMPT_KEYS`: site, exit_code,
    request_memory (MB), max_runtime (min), start, end (UNIX times), action (PostJob's decision),
    reason, runtime_s, cpu_s, memory_mb.  Read from their JSON text (a list of value lists in
    that order) when first looked at."""

    __slots__ = ("_text", "_items")

    def __init__(self, text: str) -> None:
        self._text = text
        self._items: tuple[dict, ...] | None = None

    def _load(self) -> tuple[dict, ...]:
        if self._items is None:
            self._items = tuple(dict(zip(ATTEMPT_KEYS, values)) for values in json.loads(self._text))
        return self._items

    def __getitem__(self, index):
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[dict]:
        return iter(self._load())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"Attempts({list(self)!r})"


@dataclass(slots=True)
class JobView:
    """One job as ``crab status`` shows it (read-only by convention; not frozen, because making
    10,000 frozen ones costs a tenth of the status' time budget).  Durations in simulated
    seconds; None: unknown."""

    id: str
    state: str
    retries: int
    cooloff_until: float | None
    site_history: tuple[str, ...]
    exit_code: int | None  # of the last attempt PostJob closed (CRAB's Error[0])
    attempts: Sequence[dict]
    restarts: int = 0
    runtime_s: float | None = None  # the latest attempt's
    memory_mb: float | None = None  # the latest attempt's peak RSS
    cpu_pct: float | None = None  # the latest attempt's CPU time / (runtime x cores), in %
    waste_s: float = 0.0  # the runtime of the attempts before the latest
    error: str | None = None  # PostJob's reason for its decision on the last closed attempt (CRAB's Error[1])
    rrn: int = 0  # executions in the current resubmit epoch (seed 003)
    epoch: int = 0  # the resubmit epoch the job is in (0: never resubmitted)
    crab_retry: int = 0  # attempts PostJob has closed (the <id>.<crab_retry> of the job's files)
    cut_runs: Sequence[Sequence] = ()  # runs an eviction ended: [attempt, wall_s, site, rss_kb] (joblog.CutRun)

    @property
    def site(self) -> str:
        """The most recent site, '' if the job has run nowhere yet."""
        return self.site_history[-1] if self.site_history else ""

    def as_json(self) -> dict:
        """The job in crabtui's words, then in CRAB's (:meth:`status_cache`), for scripts of either."""
        return {"id": self.id, "state": self.state, "retries": self.retries, "restarts": self.restarts,
                "site_history": list(self.site_history), "exit_code": self.exit_code,
                "cooloff_until": self.cooloff_until, "attempts": list(self.attempts),
                "runtime_s": self.runtime_s, "memory_mb": self.memory_mb, "cpu_pct": self.cpu_pct,
                "waste_s": self.waste_s, "error": self.error, **self.status_cache()}

    def status_cache(self) -> dict:
        """The job as CRAB's ``status_cache`` node (what ``crab status --json`` prints per job, with
        CRAB's names), plus the counters of the RRN design: ``State``; ``Retries``, ``Restarts``;
        ``SiteHistory``, ``WallDurations`` (seconds) and ``ResidentSetSize`` (KB), one entry per
        run, as cache_status opens a slot for each execution: an attempt that reached a site, the
        running one included, and before it each run of it an eviction (a hold of the running job
        too) cut short; ``RecordedSite`` (the latest attempt's site is known); ``Error`` ([exit
        code, message, {}]) once an attempt has failed; ``rrn``, ``epoch`` and ``crab_retry``."""
        ran = [(i, a) for i, a in enumerate(self.attempts) if a.get("site")]
        slots = [(i, a.get("runtime_s") or 0.0, site, a.get("memory_mb"))
                 for (i, a), site in zip(ran, self.site_history)]
        if len(self.site_history) > len(ran):  # in the queue at a site, or its report not read yet
            slots.append((len(self.attempts), self.runtime_s or 0.0, self.site_history[-1], self.memory_mb))
        cut = list(self.cut_runs)
        walls, sites, memory = [], [], []
        for attempt, wall, site, memory_mb in slots:
            while cut and cut[0][0] <= attempt:  # the runs of this attempt that came before its last
                _, lost, lost_site, rss_kb = cut.pop(0)
                walls.append(lost), sites.append(lost_site or site), memory.append(rss_kb or 0)
            walls.append(wall), sites.append(site), memory.append(round((memory_mb or 0) * 1024))
        for _, lost, lost_site, rss_kb in cut:
            walls.append(lost), sites.append(lost_site or "Unknown"), memory.append(rss_kb or 0)
        node = {"State": self.state, "Retries": self.retries, "Restarts": self.restarts,
                "SiteHistory": sites, "WallDurations": walls, "ResidentSetSize": memory,
                "RecordedSite": bool(self.site_history) and len(self.site_history) >= len(self.attempts),
                "rrn": self.rrn, "epoch": self.epoch, "crab_retry": self.crab_retry}
        if self.exit_code:
            node["Error"] = [self.exit_code, self.error or "", {}]
        return node


@dataclass(frozen=True, slots=True)
class TaskView:
    """What ``crab status`` shows of a task beyond its row in the task table."""

    jobs: list[JobView]  # in CRAB's order
    dag_queued: bool  # the task's DAGMan job is in the queue
    num_cores: int
    max_memory_mb: int | None
    max_runtime_min: int | None
    sites: SiteView | None = None  # every site of the task and why it is or is not blacklisted
    input_lumis: int | None = None  # what the dataset holds within the lumi mask (None: not known yet)
    automatic: AutomaticView | None = None  # automatic splitting's stages (None: another splitting)
    publication: bool | None = None  # Data.publication (None: the task does not say)
    submit_warnings: tuple[str, ...] = ()  # the task's warnings from its submission (skipped blocks, ...)
    dag_waiting: str | None = None  # why its DAGMan job has not started, as the pool tells (None: no such reason)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The task's warnings as crab status prints them: why its DAGMan has not started, the
        submission's, then the site lists'."""
        return ((self.dag_waiting,) if self.dag_waiting else ()) + self.submit_warnings + (
            self.sites.warnings if self.sites else ())


@dataclass(frozen=True, slots=True)
class AutomaticView:
    """What ``crab status`` shows of automatic splitting beyond its jobs (ids say their stage)."""

    minutes: float  # Data.unitsPerJob: the processing jobs' target runtime
    throughput: float | None  # events/s, the probes' estimate (None: not made yet)
    event_size: float | None  # output bytes per event, likewise
    probes: tuple[str, ...]  # the probes the estimate averaged
    log: str  # PreDAG's log of the processing stage (CRAB's AutomaticSplitting/DagLog0.txt)


def job_state(state: JobState, queued: JobStatus | None, now: float | None = None, *, ran: bool = False,
              dag_active: bool = True) -> str:
    """The crab state of a job from its retry state and its job's status in the queue (None: not
    there).  ``ran``: the open attempt's job has left its report (PostJob is due: transferring);
    ``dag_active``: the task's DAGMan still runs (else jobs in flight were killed with it)."""
    if queued is not None:
        return _QUEUED.get(queued, "idle")
    open_attempt = state.open_attempt
    if open_attempt is not None:
        if not dag_active:
            return "killed"
        return "transferring" if ran or open_attempt.site else "idle"
    if not state.attempts:
        return "unsubmitted"
    last = state.attempts[-1]
    if last.action == "ok":
        return "finished"
    if state.epoch > last.epoch:
        return "unsubmitted"  # resubmitted; its DAG has not run it again yet
    if last.action == "retry":  # DAGMan's node waits for its next try (READY/PRERUN, RetryCount > 0)
        return "cooloff" if dag_active else "killed"
    return "failed"


def job_ids(task_dir: str) -> list[str]:
    """The task's job ids, from the inputs DagmanCreator wrote, in CRAB's order."""
    ids = [name[len("job_input."):-len(".json")] for name in os.listdir(task_dir)
           if name.startswith("job_input.") and name.endswith(".json")]
    return sorted(ids, key=job_sort_key)


def job_sort_key(job_id: str) -> tuple:
    """CRAB's order of job ids (``compareJobids``): probes ``0-N`` first, then ``N``, then tails ``N-M``."""
    parts = [int(p) for p in job_id.split("-")]
    return (0 if parts[0] == 0 and len(parts) > 1 else 1 if len(parts) == 1 else 2, parts)


def task_jobs(task_dir: str, job_ids: list[str] | None, schedd: Schedd | None, dagman_id: int | None,
              now: float | None = None) -> list[JobView]:
    """Jobs ``job_ids`` of the task (None: all) as ``crab status`` shows them."""
    return task_view(task_dir, schedd, dagman_id, ids=job_ids, now=now).jobs


def task_view(task_dir: str, schedd: Schedd | None, dagman_id: int | None, *, ids: Sequence[str] | None = None,
              now: float | None = None) -> TaskView:
    """The task's jobs, from its files (through the status cache) and one query of the schedd."""
    # A cyclic collection every 700 of the 200,000 objects a cold status reads would double its time.
    with gc_paused(promote=False):
        return _task_view(task_dir, schedd, dagman_id, ids, time.time() if now is None else now)


def refresh_cache(task_dir: str) -> None:
    """Bring the task's status cache up to date from its files, as a status does, without asking
    the schedd: the task worker does it as it follows a task, so whoever asks next finds it warm."""
    task = _read_json(os.path.join(task_dir, TASK_FILE))
    with gc_paused(promote=False):
        _rows(task_dir, float(task.get("time_scale") or 1.0) if isinstance(task, dict) else 1.0)




def _task_view(task_dir: str, schedd: Schedd | None, dagman_id: int | None, ids: Sequence[str] | None,
               now: float) -> TaskView:
    task = _read_json(os.path.join(task_dir, TASK_FILE))
    task = task if isinstance(task, dict) else {}
    scale = float(task.get("time_scale") or 1.0)
    cores = int(task.get("num_cores") or 1)
    queue: dict[str, Any] = {}
    dag_queued = removed = False
    dag_waiting = None
    if schedd is not None and dagman_id is not None:
        # A nested DAGMan's jobs (automatic splitting's stages) have its id as DAGManJobId: the
        # task's name, which every grid job carries, finds them all.
        name = json.dumps(str(task.get("name", "")))
        for ad in schedd.query(f"ClusterId == {dagman_id} || DAGManJobId == {dagman_id} || CRAB_ReqName =?= {name}",
                               _PROJECTION):
            if ad.get("ClusterId") == dagman_id:
                dag_queued = True
                removed = ad.get("JobStatus") == JobStatus.REMOVED
                if ad.get("JobStatus") in (JobStatus.IDLE, JobStatus.HELD):
                    dag_waiting = _dag_waiting(schedd, dagman_id)
            elif "CRAB_Id" in ad:
                queue[str(ad["CRAB_Id"])] = ad
    # A DAGMan being removed (crab kill) still runs, but its jobs in flight are being killed with it.
    dag_active = (dag_queued and not removed) or dagman_id is None
    rows, all_ids = _rows(task_dir, scale, CACHE_WRITE_EVERY_S)
    made = _VIEWS.pop(task_dir, None) or {}
    if len(_VIEWS) >= _PARSED_MAX:
        del _VIEWS[next(iter(_VIEWS))]
    views = _VIEWS[task_dir] = {} if ids is None else made
    jobs = []
    append = jobs.append
    for job in (all_ids if ids is None else ids):
        row = rows.get(job, _NO_FILE)
        ad = queue.get(job)
        if row[_OPEN] is None and ad is None:  # the common case, kept short: 10,000 of them
            last = made.get(job)
            if last is not None and last[1] == dag_active and last[0] == row:
                view = last[2]
            else:
                state = row[_STATE]
                if state == "cooloff" and not dag_active:
                    state = "killed"
                runtime, cpu = row[_RUNTIME], row[_CPU]
                view = JobView(job, state, row[_RETRIES], row[_COOLOFF], tuple(row[_SITES]), row[_EXIT],
                               Attempts(row[_ATTEMPTS]), row[_RESTARTS], runtime, row[_MEMORY],
                               cpu / (runtime * cores) * 100 if cpu is not None and runtime else None,
                               row[_WASTE] + _lost(row), row[_ERROR], row[_RRN], row[_EPOCH], row[_CRAB_RETRY],
                               row[_CUT])
            views[job] = (row, dag_active, view)
            append(view)
        else:
            append(_in_flight(task_dir, job, row, ad, now, scale, cores, dag_active))
    return TaskView(jobs, dag_queued, cores, task.get("max_memory_mb"), task.get("max_runtime_min"),
                    site_view(task_dir, task) if task else None, task.get("input_lumis"),
                    _automatic_view(task_dir, task.get("automatic")), task.get("publication"),
                    tuple(task.get("warnings", ())), dag_waiting)


def _dag_waiting(schedd: Schedd, dagman_id: int) -> str | None:
    """Why the task's DAGMan job, idle or held, has not started (see engine.schedd.scheduler_start):
    one more query, of the DAGMan job alone, made only while it waits."""
    from engine.schedd.scheduler_start import why_waiting

    ads = schedd.query(f"ClusterId == {dagman_id}", ["ClusterId", "JobStatus", "HoldReason", "Owner", "Iwd",
                                                     "NumJobStarts"])
    return why_waiting(ads[0], schedd.schedd_log) if ads else None


def _automatic_view(task_dir: str, automatic: dict | None) -> AutomaticView | None:
    if automatic is None:
        return None
    estimate = stages.read_estimate(task_dir) or {}
    return AutomaticView(automatic["minutes"], estimate.get("throughput"), estimate.get("event_size"),
                         tuple(estimate.get("probes", ())), stages.log_path(task_dir, 0))


def latest_report(task_dir: str, job: JobView) -> dict | None:
    """The framework job report of the job's latest attempt (None if it left none, or a bad one).
    Read on demand (``task status --json``, ``task report``), not kept in the cache."""
    if not job.attempts:
        return None
    try:
        return fjr.read_report(os.path.join(task_dir, f"{fjr.FJR_NAME}.{job.id}.{len(job.attempts) - 1}"))
    except (OSError, fjr.FJRError):
        return None


def processed_lumis(task_dir: str, job: JobView) -> dict[str, list[int]]:
    """run -> lumis the job's latest attempt processed, as its framework job report lists them
    ({} without a report)."""
    report = latest_report(task_dir, job)
    return fjr.runs_json(fjr.summarize(report).lumis) if report is not None else {}


def scheduler_status(task_status: str, dagman_id: int | None, view: TaskView) -> str | None:
    """``Status on the scheduler`` (cache_status' ``overallDagStatus``): SUBMITTED before any job
    started, RUNNING while DAGMan runs, then COMPLETED or FAILED (a killed DAG is FAILED, as its
    DagStatus 6 says); None while the task has no DAG on the scheduler.  Of automatic splitting's
    stages the tail jobs decide, or without tails the processing jobs (``collapseDAGStatus``):
    a failed probe or processing job alone does not fail the task."""
    if dagman_id is None:
        return None
    if view.dag_queued:
        return "RUNNING" if any(j.state != "unsubmitted" or j.retries for j in view.jobs) else "SUBMITTED"
    if task_status in ("COMPLETED", "FAILED"):
        return task_status
    if task_status == "KILLED":
        return "FAILED"
    jobs = view.jobs
    if view.automatic is not None:
        stages: dict[int, list[JobView]] = {0: [], 1: [], 2: []}  # job_sort_key's probe, processing, tail
        for j in jobs:
            stages[job_sort_key(j.id)[0]].append(j)
        jobs = stages[2] or stages[1]
    return "COMPLETED" if jobs and all(j.state == "finished" for j in jobs) else "FAILED"


# --- a job in flight ----------------------------------------------------------------------------

def _in_flight(task_dir: str, job: str, row: list, ad: Any, now: float, scale: float, cores: int,
               dag_active: bool) -> JobView:
    """A job in the queue, or with an attempt PreJob opened and PostJob has not closed."""
    sites = list(row[_SITES])
    runtime = memory = cpu_pct = None
    waste = row[_WASTE] + _lost(row)
    if ad is not None:
        state = _QUEUED.get(ad.get("JobStatus"), "idle")
        site = ad.get("MATCH_GLIDEIN_CMSSite")
        if isinstance(site, str) and site and state != "idle":
            sites.append(site)
        start = ad.get("JobCurrentStartDate")
        runtime = max(0.0, now - start) * scale if start and state not in ("idle", "held") else 0.0
        rss = ad.get("ResidentSetSize")
        memory = rss / 1024 if isinstance(rss, (int, float)) and rss > 0 else None
    elif row[_OPEN] is not None:
        report = os.path.join(task_dir, f"{fjr.FJR_NAME}.{job}.{row[_OPEN]}")
        figures = fjr.performance(report)
        state = ("transferring" if figures is not None else "idle") if dag_active else "killed"
        runtime = 0.0
        if figures is not None:
            runtime, cpu, memory = figures
            cpu_pct = cpu / (runtime * cores) * 100 if cpu is not None and runtime else None
            sites += _executed_site(report)
        if state == "killed":  # its report stops at the kill signal; it ran until its processes were gone
            from engine.crab.ap.joblog import last_run

            run = last_run(os.path.join(task_dir, f"job_log.{job}"))
            if run is not None:
                runtime = max(runtime, (run.end - run.start) * scale)
                if figures is None:  # a pool brings no file of a removed job back: its log says
                    sites += [run.site] if run.site else []
                if memory is None:  # nor does a report cut short by the kill signal know it
                    memory = run.rss_kb / 1024 if run.rss_kb else None
    else:
        state = row[_STATE]
    return JobView(job, state, row[_RETRIES], row[_COOLOFF], tuple(sites), row[_EXIT], Attempts(row[_ATTEMPTS]),
                   row[_RESTARTS], runtime, memory, cpu_pct, waste, row[_ERROR], row[_RRN], row[_EPOCH],
                   row[_CRAB_RETRY], row[_CUT])


def _lost(row: list) -> float:
    """The simulated seconds of the job's runs that evictions cut short."""
    return sum(run[1] for run in row[_CUT])


def _executed_site(report: str) -> list[str]:
    """The site a job that left the queue ran at, from its report: a transferring job counts there
    (the site table's Stageout column) before PostJob records its attempt."""
    try:
        site = fjr.read_report(report).get("executed_site")
    except fjr.FJRError:
        return []
    return [site] if isinstance(site, str) and site else []


# --- what a job's files say ---------------------------------------------------------------------

def _row(task_dir: str, job: str, stamp: list | None, scale: float, old: list | None) -> list:
    """The cache row of a job: what its state file and its attempts' reports say, and its log's restarts."""
    from engine.crab.ap.retry_policy import load_state, state_path  # only here: a warm status needs no state

    if stamp is None:
        return _NO_FILE
    state = load_state(state_path(task_dir, job))
    known = list(Attempts(old[_ATTEMPTS])) if old is not None and old[_STAMP] is not None else []
    attempts = []
    for i, a in enumerate(state.attempts):
        item = {"site": a.site, "exit_code": a.exit_code, "request_memory": a.request_memory_mb,
                "max_runtime": a.max_runtime_min, "start": a.start_time, "end": a.end_time, "action": a.action,
                "reason": a.reason, "runtime_s": None, "cpu_s": None, "memory_mb": None}
        if a.action is not None:
            if i < len(known) and known[i]["action"] is not None:  # a closed attempt's report is final
                item.update(runtime_s=known[i]["runtime_s"], cpu_s=known[i]["cpu_s"], memory_mb=known[i]["memory_mb"])
            else:
                figures = fjr.performance(os.path.join(task_dir, f"{fjr.FJR_NAME}.{job}.{a.crab_retry}"))
                if figures is not None:
                    item.update(runtime_s=figures[0], cpu_s=figures[1], memory_mb=figures[2])
                if item["memory_mb"] is None and i == len(state.attempts) - 1:
                    item["memory_mb"] = _logged_memory_mb(task_dir, job)
                if a.start_time is not None and a.end_time is not None:
                    wall = max(0.0, a.end_time - a.start_time) * scale
                    if item["runtime_s"] is None or a.action != "ok":
                        item["runtime_s"] = max(item["runtime_s"] or 0.0, wall)
        attempts.append(item)
    open_attempt = state.open_attempt
    closed = attempts[:-1] if open_attempt else attempts
    last = closed[-1] if closed else None
    earlier = attempts[:-1]
    with_site = [a for a in closed if a["site"]]
    restarts, log_size, cut = _log_restarts(task_dir, job, old, scale)
    return [stamp, None if open_attempt else job_state(state, None), max(0, len(attempts) - 1), state.cooloff_until,
            last["exit_code"] if last else None, last["reason"] if last else None,
            open_attempt.crab_retry if open_attempt else None,
            [a["site"] for a in with_site], [a["runtime_s"] or 0.0 for a in with_site],
            None if open_attempt or not last else last["runtime_s"],
            None if open_attempt or not last else last["memory_mb"],
            None if open_attempt or not last else last["cpu_s"],
            sum(a["runtime_s"] or 0.0 for a in earlier),
            json.dumps([[a[k] for k in ATTEMPT_KEYS] for a in attempts], separators=(",", ":")),
            restarts, log_size, state.rrn, state.epoch, state.crab_retry, cut]


def _logged_memory_mb(task_dir: str, job: str) -> float | None:
    """The memory the job's log recorded of its latest run (its last ResidentSetSize), for an
    attempt whose report has none: a job removed (x, condor_rm) wrote its report at SIGTERM, and a
    pool brings no report of a removed job back; crab status reads the same events."""
    from engine.crab.ap.joblog import last_run

    run = last_run(os.path.join(task_dir, f"job_log.{job}"))
    return run.rss_kb / 1024 if run is not None and run.rss_kb else None


def _log_restarts(task_dir: str, job: str, row: list | None, scale: float) -> tuple[int, int | None, list]:
    """The job's restarts, the size of its user log and the runs its evictions cut short (waste,
    as CRAB's WallDurations count them), their seconds simulated, counted again only if the log is
    not the size it had when ``row`` counted them."""
    from engine.crab.ap.joblog import restarts

    log = os.path.join(task_dir, f"job_log.{job}")
    try:
        size = os.stat(log).st_size
    except FileNotFoundError:
        return 0, None, []
    if row is not None and row[_LOG] == size:
        return row[_RESTARTS], size, row[_CUT]
    count, cut = restarts(log)
    return count, size, [[run.attempt, run.wall_s * scale, run.site, run.rss_kb] for run in cut]


# --- the cache ----------------------------------------------------------------------------------

def _stamp(st: os.stat_result) -> list:
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def _rows(task_dir: str, scale: float, write_every: float = 0.0) -> tuple[dict[str, list], list[str]]:
    """Every job's row and the task's job ids, from the cache where it is still right.  If anything
    had to be read again the cache is rewritten, or, if this process wrote it less than
    ``write_every`` seconds ago, kept in memory until then: a UI refreshing a busy 10,000-job task
    every second would spend most of each refresh writing it."""
    path = os.path.join(task_dir, STATUS_CACHE)
    cache_stamp, cache = _read_cache(path)
    if not isinstance(cache, dict) or cache.get("schema") != CACHE_SCHEMA:
        cache = {"dag": None, "ids": [], "states": None, "jobs": {}}
    changed = False
    try:
        dag = _stamp(os.stat(os.path.join(task_dir, DAG_FILE)))
    except FileNotFoundError:
        dag = None
    else:  # automatic splitting adds each stage's jobs with a file in this directory
        try:
            dag.append(os.stat(os.path.join(task_dir, stages.AUTOMATIC_DIR)).st_mtime_ns)
        except FileNotFoundError:
            dag.append(0)
    ids = cache["ids"]
    same_ids = dag is not None and dag == cache["dag"]
    if not same_ids:
        ids = job_ids(task_dir) if os.path.isdir(task_dir) else []
    states_dir = os.path.join(task_dir, "retry_state")
    try:
        states_mtime = os.stat(states_dir).st_mtime_ns
    except FileNotFoundError:
        states_mtime = None
    old: dict[str, list] = cache["jobs"]
    if same_ids and states_mtime is not None and states_mtime == cache["states"]:
        rows = old  # no state file changed since the cache was written
    else:
        stamps: dict[str, list] = {}
        if states_mtime is not None:
            with os.scandir(states_dir) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith("job.") and name.endswith(".json"):
                        stamps[name[4:-5]] = _stamp(entry.stat())
        rows = {}
        for job in ids:
            stamp = stamps.get(job)
            row = old.get(job)
            if row is None or row[_STAMP] != stamp:
                row = _row(task_dir, job, stamp, scale, row)
                changed = True
            rows[job] = row
    for job, row in rows.items():
        if row[_OPEN] is not None:  # an attempt in flight: its log may have grown since
            count, size, cut = _log_restarts(task_dir, job, row, scale)
            if (count, size, cut) != (row[_RESTARTS], row[_LOG], row[_CUT]):
                rows[job] = [*row[:_RESTARTS], count, size, *row[_LOG + 1:_CUT], cut]
                changed = True
    racy = time.time_ns() - RACY_NS
    dag = dag if dag is not None and max(dag[1], dag[3]) < racy else None
    states_mtime = states_mtime if states_mtime is not None and states_mtime < racy else None
    if changed or dag != cache["dag"] or states_mtime != cache["states"]:
        data = {"schema": CACHE_SCHEMA, "dag": dag, "ids": ids, "states": states_mtime, "jobs": {
            job: row if row[_STAMP] is None or row[_STAMP][1] < racy else [[0, 0, -1], *row[1:]]
            for job, row in rows.items()}}
        if cache_stamp is not None and time.monotonic() - _WRITTEN.get(path, -write_every) < write_every:
            _remember(path, cache_stamp, data, True)  # newer than the file, which is as this process left it
        else:
            _write_cache(path, data)
    return rows, ids


_PARSED: dict[str, tuple[list, Any, bool]] = {}
"""path -> (stamp, cache, ours) of the caches this process read or wrote last: a long-lived reader (the
UI, the task worker) parses an unchanged 10,000-job cache once, not at every refresh."""
_PARSED_MAX = 8

_WRITTEN: dict[str, float] = {}
"""path -> when (time.monotonic) this process last wrote the cache there."""
CACHE_WRITE_EVERY_S = 10.0  # how often a long-lived reader writes a cache that keeps changing

_VIEWS: dict[str, dict[str, tuple[list, bool, JobView]]] = {}
"""task_dir -> job -> (its cache row, whether the DAG was active, the JobView made of them) of the
last full view: a job whose row is equal keeps its JobView (read-only), so a long-lived reader
makes only the views of the jobs that changed, and can tell them by identity."""


def _read_cache(path: str) -> tuple[list | None, Any]:
    """The stamp of the status cache file at ``path`` and the cache (None, None if unreadable),
    reusing the parse of an unchanged file.  Every write replaces the file (a new inode), and a
    stamp younger than :data:`RACY_NS` is not trusted, as for the state files."""
    try:
        stamp = _stamp(os.stat(path))
    except OSError:
        return None, None
    parsed = _PARSED.get(path)
    if parsed is not None and parsed[0] == stamp and (parsed[2] or stamp[1] < time.time_ns() - RACY_NS):
        return stamp, parsed[1]
    cache = _read_json(path)
    _remember(path, stamp, cache, False)
    return stamp, cache


def _remember(path: str, stamp: list, cache: Any, ours: bool) -> None:
    """Keep the cache of the file at ``path`` whose stamp is ``stamp``.  One this process wrote
    (``ours``), or brought up to date in memory, is trusted however young the file: its stamp has
    the inode of the file this process made or read, which no other writer's replacement has."""
    _PARSED.pop(path, None)
    if len(_PARSED) >= _PARSED_MAX:
        del _PARSED[next(iter(_PARSED))]
    _PARSED[path] = (stamp, cache, ours)


def _write_cache(path: str, data: dict) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=STATUS_CACHE + ".", suffix=".tmp")
    except OSError:
        return  # a directory we may not write: the next status reads the files again
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, separators=(",", ":")))  # dumps: json.dump does not use the C encoder
            f.flush()
            stamp = _stamp(os.fstat(f.fileno()))
        os.replace(tmp, path)
        _remember(path, stamp, data, True)
        _WRITTEN[path] = time.monotonic()
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_json(path: str) -> Any:
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None
