"""The queue as condor_q's batch view shows it, for the UI: every job of the schedd grouped into
batches by :func:`crabtui.queue_format.batches` (the lines ``crabtui q`` prints), and the jobs of
one batch.  Nothing here imports textual.

As the DAG list does (:mod:`crabtui.dag_logs`), the whole queue is asked of the schedd
:data:`DISCOVER_EVERY` seconds after its last answer (at 100,000 jobs an answer can take half
as long), or at once when asked (ctrl+r, after an action) or when a followed log tells of a
cluster the last answer did not have; in between, the jobs are followed through
their user logs (``log =``; a DAG's node job without one, its DAG's nodes log) with
:class:`QueueFollower`, as condor_watch_q follows them.  The whole queue is asked only for what
the batch rows and the logs' following need (:data:`BATCH_PROJECTION`): at 100,000 jobs each
attribute more costs the schedd a tenth of a second.  A batch's jobs get the rest
(:data:`QUEUE_PROJECTION`) when the batch is opened, asked by cluster.  A log
first seen in an answer has no mark from before the query: if it was written to since the query
began, its clusters are asked again after its mark, so that no event falls between the two.  Jobs
whose log cannot be read from here (none, or on a pool's machine) are asked again by cluster every
:data:`BLIND_EVERY` seconds, with any cluster newer than the last answer's: no log tells of
those.  A batch's jobs that left the queue come from the history, read again only when more of
them have left.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crabtui.dag_logs import BLIND_EVERY, DISCOVER_EVERY
from crabtui.queue_format import PROJECTIONS, Batch, batches
from crabtui.snapshots import plain_ads
from engine.gcpause import gc_paused
from engine.schedd.api import JobStatus
from engine.schedd.local.userlog import QueueFollower

BATCH_PROJECTION = tuple(a for a in PROJECTIONS["batch"] if a != "ServerTime") + ("UserLog", "DAGManNodesLog")
"""What a batch's row is made of (:func:`crabtui.queue_format.batches`), and the logs that follow its jobs."""
QUEUE_PROJECTION = tuple(dict.fromkeys(BATCH_PROJECTION + (
    "UserLog", "Iwd", "EnteredCurrentStatus", "HoldReason", "RemoteHost", "LastRemoteHost", "JobCurrentStartDate",
    "ShadowBday", "RemoteWallClockTime", "LastRemoteWallClockTime", "RemoteUserCpu", "CRAB_ReqName", "CRAB_Id",
    "DAGManNodesLog")))
"""A batch's jobs as its screen shows them."""
_DETAILS = tuple(a for a in QUEUE_PROJECTION if a not in BATCH_PROJECTION)
# what a batch's opening asks: the details, and where each job's dict is (its id and its followed log)
_DETAIL_PROJECTION = ("ClusterId", "ProcId", "UserLog", "DAGManNodesLog") + _DETAILS
HISTORY_PROJECTION = ("ClusterId", "ProcId", "Owner", "JobStatus", "EnteredCurrentStatus", "CompletionDate",
                      "RemoteWallClockTime", "ExitCode", "ExitBySignal", "ExitSignal", "RemoveReason", "LastRemoteHost",
                      "DAGManJobId", "DAGNodeName", "CRAB_ReqName", "CRAB_Id", "JobUniverse")
# what a cluster's procs that a SUBMIT event brings share with the cluster's procs the schedd told of
_CLUSTER_ATTRS = ("Owner", "QDate", "JobBatchName", "TotalSubmitProcs", "DAGManJobId", "UserLog", "Iwd",
                  "JobUniverse", "CRAB_ReqName")
STATE_WORDS = {JobStatus.IDLE: "idle", JobStatus.RUNNING: "running", JobStatus.REMOVED: "removed",
               JobStatus.COMPLETED: "completed", JobStatus.HELD: "held",
               JobStatus.TRANSFERRING_OUTPUT: "transferring", JobStatus.SUSPENDED: "suspended"}


@dataclass(frozen=True)
class BatchRow:
    """One batch as the UI lists it: condor_q's line, and the ids of its jobs in the queue."""

    key: str  # its owner and name: what stays the same while its jobs come and go
    owner: str
    name: str
    submitted: float | None  # its first job's QDate
    done: int
    running: int
    idle: int
    held: int
    total: int  # 0: unknown (condor_q prints "_")
    ids: str  # "12.0-49", "12.0 ... 14.3", as condor_q prints them
    jobs: tuple[str, ...]  # "cluster.proc" of its jobs in the queue, DAGMan jobs first
    statuses: tuple[int, ...]  # their JobStatus
    dagman: int | None  # a DAG's batch: its DAGMan job's cluster


@dataclass(frozen=True)
class QueueSnapshot:
    batches: list[BatchRow]
    owner: str  # who the schedd knows us as
    at: float
    asked_at: float  # when the schedd was last asked for the whole queue


@dataclass(frozen=True)
class QueueJob:
    """One job of a batch: its state and since when, its run time, its exit code or hold reason,
    its host; what it belongs to (a CRAB task's job, a DAG's node) for its drilldown."""

    id: str
    state: str
    status: int
    since: float | None  # EnteredCurrentStatus
    run_time: float | None  # the last run's wall time, for a job not running (None: it has not run)
    running_since: float | None  # a running job's current run's start: its run time goes on
    outcome: str  # "exit 0", "signal 9", "held: ...", "removed: ..." or ""
    host: str
    where: str  # "queue" or "history"
    crab_task: str
    crab_id: str
    dagman: int | None
    node: str

    @property
    def sort_key(self) -> tuple[int, int]:
        cluster, _, proc = self.id.partition(".")
        return int(cluster), int(proc)

    def ran(self, now: float) -> float | None:
        """condor_q's RUN_TIME at ``now``: of the current run, or the last one."""
        return max(0.0, now - self.running_since) if self.running_since is not None else self.run_time


@dataclass(frozen=True)
class BatchJobsSnapshot:
    batch: BatchRow | None  # None: no such batch in the queue now
    jobs: list[QueueJob]
    tasks: frozenset[str]  # CRAB tasks of this state directory among the jobs' (their jobs open as a task's)
    owner: str
    at: float


class BatchQueue:
    """The jobs of the schedd, followed between queries (one per :class:`Backend`)."""

    def __init__(self, discover_every: float = DISCOVER_EVERY, blind_every: float = BLIND_EVERY) -> None:
        self.discover_every, self.blind_every = discover_every, blind_every
        self.queries = 0  # of the whole queue
        self._asked_at: float | None = None
        self._answered_at = 0.0  # the next whole query is due discover_every after the last answer
        self._blind_at = 0.0
        self._followers: dict[str, QueueFollower] = {}  # by user log
        self._blind: dict[tuple[int, int], dict[str, Any]] = {}  # jobs no readable log follows
        self._clusters: dict[int, dict[str, Any]] = {}  # a cluster's shared attributes, from the last answer
        self._cache: tuple[tuple, list[Batch], list[BatchRow]] | None = None
        self._history: dict[tuple[int, ...], tuple[tuple, list[dict[str, Any]]]] = {}
        self._members: dict[str, set[int]] = {}  # by batch key: every cluster seen in it
        self._shown: dict[tuple[str, str], tuple[tuple, QueueJob]] = {}  # a batch's jobs as last shown
        self._jobs: list[dict[str, Any]] | None = None
        self._listed: tuple[tuple, list, list[QueueJob]] | None = None  # the last batch's jobs, what they came from
        self._detailed: set[tuple[int, int]] = set()  # jobs whose every QUEUE_PROJECTION attribute was asked
        self._missed: set[tuple[int, int]] = set()  # jobs the last detail answer lacked, and when it came
        self._missed_at = 0.0
        self._details = 0  # answers merged into the jobs, for what was made of them

    def jobs(self, schedd: Any, now: float, ask: bool = False,
             clock: Callable[[], float] | None = None) -> list[dict[str, Any]]:
        """Every job in the queue, as the last query and the logs since tell; ``clock`` tells
        when an answer came (``now`` when not given)."""
        changed = False
        for follower in self._followers.values():
            changed |= follower.read()
        unknown = changed and any(key[0] not in self._clusters for f in self._followers.values() for key in f.jobs)
        stale = any(f.stale for f in self._followers.values())
        since = now - self._answered_at  # a clock set back asks at once, as a day without an answer does
        if ask or unknown or stale or self._asked_at is None or not -self.discover_every < since < self.discover_every:
            self._ask(schedd, now, clock)
            changed = True
        elif self._blind and not 0 <= now - self._blind_at < self.blind_every:
            # no log tells of the clusters submitted since (a pool DAG's next node job): asked with them
            clusters = sorted({key[0] for key in self._blind})
            newest = max(self._clusters, default=0)
            self._blind = {}
            constraint = f"ClusterId > {newest} || member(ClusterId, {{{', '.join(map(str, clusters))}}})"
            for ad in schedd.query_values(constraint, QUEUE_PROJECTION):  # few jobs: all they show
                self._clusters.setdefault(ad["ClusterId"], {k: ad[k] for k in _CLUSTER_ATTRS if k in ad})
                self._blind[(ad["ClusterId"], ad["ProcId"])] = dict(ad)
                self._detailed.add((ad["ClusterId"], ad["ProcId"]))
            self._blind_at = now
            changed = True
        if changed or self._jobs is None:
            found = dict(self._blind)
            for follower in self._followers.values():
                for key, job in follower.jobs.items():
                    if "Owner" not in job:  # a proc its log's SUBMIT event brought
                        job.update((k, v) for k, v in self._clusters.get(key[0], {}).items() if k not in job)
                    found[key] = job  # a log is newer than the blind query's answer
            self._jobs = list(found.values())
        return self._jobs

    def _ask(self, schedd: Any, now: float, clock: Callable[[], float] | None) -> None:
        marks = {path: f.mark() for path, f in self._followers.items()}
        began = time.time()
        ads = schedd.query_values("true", BATCH_PROJECTION)
        self.queries += 1
        self._asked_at = now
        self._answered_at = self._blind_at = clock() if clock is not None else now  # 100,000 jobs: seconds later
        by_log: dict[str, list[Mapping[str, Any]]] = {}
        self._blind, self._clusters, self._detailed = {}, {}, set()
        for ad in ads:
            if ad["ClusterId"] not in self._clusters:
                self._clusters[ad["ClusterId"]] = {k: ad[k] for k in _CLUSTER_ATTRS if k in ad}
            log = _followed_log(ad)
            if log:
                by_log.setdefault(log, []).append(ad)
            else:
                self._blind[(ad["ClusterId"], ad["ProcId"])] = dict(ad)
        new = [path for path in by_log if path not in marks]
        marks.update((path, QueueFollower(path).mark()) for path in new)
        written = [path for path in new if _written_since(path, began)]
        if written:  # events of the answer's jobs may lie before their mark: their clusters asked again after it
            clusters = sorted({ad["ClusterId"] for path in written for ad in by_log[path]})
            again: dict[str, list[Mapping[str, Any]]] = {path: [] for path in written}
            for ad in schedd.query_values(f"member(ClusterId, {{{', '.join(map(str, clusters))}}})",
                                          BATCH_PROJECTION):
                if _followed_log(ad) in again:
                    again[_followed_log(ad)].append(ad)
            by_log.update(again)
        followers = {}
        for path, found in by_log.items():
            follower = self._followers.get(path) or QueueFollower(path)
            follower.seed(found, marks[path])
            follower.read()
            if follower.stale:  # its directory is not on this machine: asked by cluster
                self._blind.update(((ad["ClusterId"], ad["ProcId"]), dict(ad)) for ad in found)
            else:
                followers[path] = follower
        self._followers = followers

    def batches(self, schedd: Any, now: float, ask: bool = False,
                clock: Callable[[], float] | None = None) -> tuple[list[Batch], list[BatchRow]]:
        """condor_q's batches of the queue and their rows, made again only when a job changed."""
        with gc_paused():  # the whole queue's rows and batches: passes of the collector found nothing
            return self._batches(schedd, now, ask, clock)

    def _batches(self, schedd: Any, now: float, ask: bool,
                 clock: Callable[[], float] | None) -> tuple[list[Batch], list[BatchRow]]:
        jobs = self.jobs(schedd, now, ask, clock)
        key = (self.queries, self._blind_at, tuple((p, f.version) for p, f in self._followers.items()))
        if self._cache is None or self._cache[0] != key:
            found = batches(jobs)
            rows = batch_rows(found)
            for batch, row in zip(found, rows):
                self._members.setdefault(row.key, set()).update(j["ClusterId"] for j in batch.jobs)
            self._cache = (key, found, rows)
        return self._cache[1], self._cache[2]

    def follows(self, ids: Sequence[str]) -> bool:
        """Whether every job of ``ids`` (``cluster.proc``) is followed through a log read here:
        what an action did to them shows from their logs, without asking for the whole queue."""
        followed = set().union(*(f.jobs for f in self._followers.values()))
        return all((int(c), int(p)) in followed for c, _, p in (i.partition(".") for i in ids))

    @property
    def asked_at(self) -> float | None:
        return self._asked_at

    def detail(self, schedd: Any, batch: Batch, now: float) -> None:
        """Ask the schedd, by cluster, for what ``batch``'s jobs show beyond their batch's row
        (:data:`QUEUE_PROJECTION`), for those not asked since the whole queue was: the answer
        is merged into the jobs as a query's answer seeds a log's, and the events after it
        follow.  Jobs the answer lacked (gone from the queue, their log not yet telling) are
        asked again every :data:`BLIND_EVERY` seconds, until they are in an answer or leave."""
        wanted = {(j["ClusterId"], j["ProcId"]) for j in batch.jobs} - self._detailed
        if not wanted or (wanted <= self._missed and 0 <= now - self._missed_at < self.blind_every):
            return
        clusters = sorted({cluster for cluster, _ in wanted})
        for ad in schedd.query_values(f"member(ClusterId, {{{', '.join(map(str, clusters))}}})", _DETAIL_PROJECTION):
            key = (ad["ClusterId"], ad["ProcId"])
            self._detailed.add(key)
            follower = self._followers.get(_followed_log(ad) or "")
            job = self._blind.get(key) or (follower.jobs.get(key) if follower is not None else None)
            if job is None:  # it left the queue, or came after the last answer: the next one has it
                continue
            for attr in _DETAILS:
                if attr in ad:
                    job[attr] = ad[attr]
                else:
                    job.pop(attr, None)
            self._clusters.get(key[0], {}).update((k, ad[k]) for k in _DETAILS if k in _CLUSTER_ATTRS and k in ad)
        self._missed, self._missed_at = wanted - self._detailed, now
        self._details += 1

    def batch_jobs(self, batch: Batch, key: str, ended: list[dict[str, Any]]) -> list[QueueJob]:
        """:func:`queue_jobs` of ``batch``, the same list while neither the queue, its details nor
        ``ended`` changed."""
        made_of = (self._cache[0] if self._cache else None, self._details, key)
        cached = self._listed
        if cached is None or cached[0] != made_of or cached[1] is not ended:
            cached = self._listed = (made_of, ended, queue_jobs(batch, ended, self._shown))
        return cached[2]

    def ended(self, schedd: Any, batch: Batch, key: str) -> list[dict[str, Any]]:
        """The jobs in the history of the clusters batch ``key`` has had since it was first seen:
        condor_q counts only the clusters still queued, but a batch's first cluster that fully
        left the queue is still its jobs.  Read again when its done count or its queued clusters
        changed."""
        queued = {j["ClusterId"] for j in batch.jobs}
        clusters = tuple(sorted(self._members.setdefault(key, set()) | queued))
        marker = (batch.done, tuple(sorted(queued)))
        cached = self._history.get(clusters)
        if cached is None or cached[0] != marker:
            found = schedd.history(f"member(ClusterId, {{{', '.join(map(str, clusters))}}})", HISTORY_PROJECTION) \
                if batch.done or len(clusters) > len(queued) else []
            cached = self._history[clusters] = (marker, plain_ads(found))
        return cached[1]


def _followed_log(ad: Mapping[str, Any]) -> str | None:
    """The log a job's events are read from: its ``UserLog``, else, for a DAG's node job without
    one (``log =`` is optional in a node's submit file), the nodes log its schedd writes for
    DAGMan, as condor_watch_q follows it.  None: its log cannot be followed."""
    for attr in ("UserLog", "DAGManNodesLog"):
        log = ad.get(attr)
        if isinstance(log, str) and log:
            return log
    return None


def _written_since(path: str, began: float) -> bool:
    """Whether the log at ``path`` was written to since ``began`` (or within the second before:
    a file's time comes from a coarser clock than ``time.time``)."""
    try:
        return os.stat(path).st_mtime >= began - 1
    except OSError:
        return False


_QUEUES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def batch_queue(backend: Any) -> BatchQueue:
    """The queue followed for ``backend``'s schedd, shared by the batch list and a batch's jobs,
    asked as often as the DAG list asks for its DAGMan jobs."""
    queue = _QUEUES.get(backend)
    if queue is None:
        every = getattr(getattr(backend, "_dag_queue", None), "discover_every", DISCOVER_EVERY)
        queue = _QUEUES[backend] = BatchQueue(every)
    return queue


def queue_snapshot(backend: Any, now: float, ask: bool = False, acted: Sequence[str] = (),
                   clock: Callable[[], float] | None = None) -> QueueSnapshot:
    """Every batch of the schedd (every user's: the screen chooses); after an action on ``acted``,
    asked of the schedd unless their logs tell what it did; ``clock``: the app's, read when the
    whole queue's answer came."""
    queue = batch_queue(backend)
    ask = ask or not queue.follows(acted)
    with backend.schedd() as schedd:
        _, rows = queue.batches(schedd, now, ask, clock)
        owner = backend.owner(schedd)
    return QueueSnapshot(rows, owner, now, queue.asked_at or now)


def batch_jobs_snapshot(backend: Any, key: str, now: float, ask: bool = False,
                        acted: Sequence[str] = (), clock: Callable[[], float] | None = None) -> BatchJobsSnapshot:
    """The jobs of batch ``key`` (a :class:`BatchRow`'s): in the queue, and those of its
    clusters that left it, from the history; ``acted`` as for :func:`queue_snapshot`."""
    queue = batch_queue(backend)
    ask = ask or not queue.follows(acted)
    with backend.schedd() as schedd:
        found, rows = queue.batches(schedd, now, ask, clock)
        batch, row = next(((b, r) for b, r in zip(found, rows) if r.key == key), (None, None))
        if batch is not None:
            queue.detail(schedd, batch, now)
        ended = queue.ended(schedd, batch, key) if batch else []
        owner = backend.owner(schedd)
    jobs = queue.batch_jobs(batch, key, ended) if batch is not None else []
    tasks: frozenset[str] = frozenset()
    if any(j.crab_task for j in jobs):
        with backend.db() as db:
            tasks = frozenset(t.name for t in db.tasks()) & {j.crab_task for j in jobs}
    return BatchJobsSnapshot(row, jobs, tasks, owner, now)


def batch_rows(found: Sequence[Batch]) -> list[BatchRow]:
    rows, seen = [], set()
    for batch in found:
        jobs = sorted(batch.jobs, key=lambda j: (j.get("JobUniverse") != 7, j["ClusterId"], j["ProcId"]))
        key = f"{batch.owner or '??'} {batch.name}"
        while key in seen:  # two batches of one name: a DAG's and a cluster's
            key += "'"
        seen.add(key)
        dagman = jobs[0]["ClusterId"] if jobs and jobs[0].get("JobUniverse") == 7 else None
        rows.append(BatchRow(key, batch.owner or "??", batch.name, batch.submitted, batch.done, batch.running,
                             batch.idle, batch.held, batch.total, batch.ids,
                             tuple(f"{j['ClusterId']}.{j['ProcId']}" for j in jobs),
                             tuple(int(j.get("JobStatus") or 0) for j in jobs), dagman))
    return rows


def queue_jobs(batch: Batch, ended: Sequence[Mapping[str, Any]],
               shown: dict[tuple[str, str], tuple[tuple, QueueJob]]) -> list[QueueJob]:
    """A batch's jobs: those in the queue, then those of its clusters in the history.  A job
    whose attributes did not change since the last call (``shown``, updated) is the same object,
    whose row the table does not compute again."""
    queued = {(j["ClusterId"], j["ProcId"]) for j in batch.jobs}
    found = [(ad, "queue") for ad in batch.jobs]
    found += [(ad, "history") for ad in ended if (ad.get("ClusterId"), ad.get("ProcId")) not in queued]
    jobs, kept = [], {}
    for ad, where in found:
        key = (f"{ad['ClusterId']}.{ad['ProcId']}", where)
        values = tuple(map(ad.get, _SHOWN))
        before = shown.get(key)
        job = before[1] if before is not None and before[0] == values else _job(ad, where)
        kept[key] = (values, job)
        jobs.append(job)
    shown.clear()
    shown.update(kept)
    return sorted(jobs, key=lambda j: j.sort_key)


_SHOWN = ("JobStatus", "EnteredCurrentStatus", "HoldReason", "ExitBySignal", "ExitSignal", "ExitCode",
          "RemoveReason", "JobCurrentStartDate", "ShadowBday", "LastRemoteWallClockTime", "RemoteWallClockTime",
          "RemoteHost", "LastRemoteHost", "DAGNodeName", "CRAB_Id")
"""The attributes a batch's job row is made of."""


def _job(ad: Mapping[str, Any], where: str) -> QueueJob:
    status = int(ad.get("JobStatus") or 0)
    if status == JobStatus.HELD:
        outcome = f"held: {ad.get('HoldReason') or 'no reason given'}"
    elif ad.get("ExitBySignal") is True:
        outcome = f"signal {ad.get('ExitSignal', '?')}"
    elif ad.get("ExitCode") is not None:
        outcome = f"exit {ad['ExitCode']}"
    elif status == JobStatus.REMOVED and ad.get("RemoveReason"):
        outcome = f"removed: {ad['RemoveReason']}"
    else:
        outcome = ""
    running_since = None
    if where == "queue" and status in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED):
        running_since = ad.get("JobCurrentStartDate") or ad.get("ShadowBday")  # the log's EXECUTE sets the first
        run_time, host = None, ad.get("RemoteHost") or ad.get("LastRemoteHost")
    elif where == "queue":
        ran = ad.get("LastRemoteWallClockTime")
        run_time, host = (float(ran) if ran else None), ad.get("LastRemoteHost")
    else:
        wall = ad.get("RemoteWallClockTime")
        run_time, host = (float(wall) if wall else None), ad.get("LastRemoteHost")
    since = ad.get("EnteredCurrentStatus") or ad.get("CompletionDate") or ad.get("QDate")
    dagman = ad.get("DAGManJobId")
    return QueueJob(f"{ad['ClusterId']}.{ad['ProcId']}", STATE_WORDS.get(status, "?"), status,
                    float(since) if since else None, run_time,
                    float(running_since) if running_since else None, outcome, str(host or ""), where,
                    str(ad.get("CRAB_ReqName") or ""), str(ad.get("CRAB_Id") or ""),
                    int(str(dagman).partition(".")[0]) if dagman not in (None, "") else None,
                    str(ad.get("DAGNodeName") or ""))
