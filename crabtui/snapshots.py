"""What the UI and ``crabtui watch`` show, read from the engine in one go: plain snapshots.

Every method of :class:`Backend` blocks (the task table, the schedd, the task's files), so the UI
calls them from worker threads and only ever hands finished snapshots to its widgets.  Each call
opens its own task-table and schedd connections, so calls on different threads never share one.
Nothing here imports textual.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import classad2

from crabtui.task_status import NO_OUTPUT, RESCHEDULED, shown_state
from engine.crab.ap.sites import matches
from engine.crab.client import monitor
from engine.crab.client.status import JobView, TaskView, job_sort_key, scheduler_status, task_view
from engine.crab.taskworker.taskdb import (COMPLETED, FAILED, KILL, KILLED, SUBMITFAILED,
                                           Task, TaskDB)
from crabtui.dag_view import (DAG_PROJECTION, FROM_AD, NODE_JOB_PROJECTION, SCHEDULER_UNIVERSE, TOP_LEVEL_DAGMAN,
                              DagSnapshot, DagsSnapshot, DagSummary, NodeSnapshot, NodeTable, dag_file_of,
                              dagman_out_of, node_at, node_snapshot, queued_by_node, summarize, unreadable)
from crabtui.dag_view import halt as halt_dag_file
from crabtui.dag_view import unhalt as unhalt_dag_file
from crabtui.dag_logs import DISCOVER_EVERY, DagQueue
from crabtui.held_view import HELD_CONSTRAINT, HELD_PROJECTION, HeldSnapshot, held_jobs
from engine.dagman import halt as dag_halt
from engine.dagman.progress import DagWatcher
from engine.schedd.api import ActResult, JobAction, JobStatus, ScheddError
from engine.state import StateDir

NODE_STATES = ("unsubmitted", "cooloff", "idle", "running", "transferring", "held", "finished", NO_OUTPUT,
               RESCHEDULED, "failed", "killing", "killed")
"""The states a job is shown in, in the UI's order: the node states, and automatic splitting's
ended probes and failed processing jobs as ``crab status`` names them (:func:`shown_state`)."""
DONE_TASK_STATUSES = (COMPLETED, FAILED, KILLED, SUBMITFAILED)
"""Statuses in which a task has nothing left running (until the user resubmits it)."""
QUEUE_PROJECTION = ("ClusterId", "ProcId", "JobStatus", "JobUniverse", "DAGManJobId", "DAGNodeName", "CRAB_Id",
                    "QDate", "RemoteWallClockTime", "JobCurrentStartDate", "EnteredCurrentStatus",
                    "MATCH_GLIDEIN_CMSSite", "HoldReason", "JobBatchName", "DAG_Status", "DAG_NodesTotal",
                    "DAG_NodesDone", "DAG_NodesFailed", "DAG_NodesQueued", "DAG_NodesReady", "DAG_NodesPrerun",
                    "DAG_NodesPostrun", "DAG_NodesUnready", "DAG_JobsHeld")
DEFAULT_ENDED_FOR = 24 * 3600.0
"""How long the DAG list keeps a DAG that has left the queue (``--ended-for``)."""
ANALYSES = 20  # idle jobs analysed a refresh at most (-better-analyze), the others when their turn comes
ANALYSIS_TTL = 60.0  # seconds an idle job's analysis is kept
HISTORY_EVERY = 30.0  # seconds between reads of the history for ended DAGs
MAX_ENDED_DAGS = 500  # the most ended DAGs the list shows
FIRST_READS_BUDGET = 0.3
"""Seconds a refresh of the DAG list spends reading DAGs' files for the first time: a list of
hundreds of DAGs shows at once, their counts coming in over the next refreshes."""


@dataclass(frozen=True)
class TaskSummary:
    """One task of the task list."""

    task: Task
    counts: dict[str, int]  # shown state -> jobs
    total: int
    scheduler_status: str | None
    error: str = ""  # why the task's jobs could not be read, or its DAGMan has not started ("" if neither)
    probing: bool = False  # an automatic task with only its probes: how many jobs it has is not known yet


@dataclass(frozen=True)
class TasksSnapshot:
    tasks: list[TaskSummary]
    at: float
    owner: str = ""  # who the schedd knows us as


@dataclass(frozen=True)
class TaskSnapshot:
    """One task: its row, its jobs, its DAGMan jobs and node jobs in the queue, and its DAG's log."""

    task: Task
    view: TaskView
    scheduler_status: str | None
    queue: list[dict[str, Any]]  # the task's jobs in the queue (QUEUE_PROJECTION), DAGMan jobs first
    node_jobs: dict[str, str]  # CRAB job id -> its HTCondor job id "cluster.proc" in the queue
    halted: bool
    log_lines: list[str]  # dagman.out lines since the previous snapshot
    at: float
    reasons: dict[str, str] = field(default_factory=dict)  # CRAB job id -> why it is held or idle
    summary: list[str] | None = None  # crab status' summaries (None: not asked for)


@dataclass(frozen=True)
class JobSnapshot:
    """One job for the drilldown: its view, its ClassAd and the files of one attempt."""

    task: Task
    job: JobView | None
    ad_text: str  # the ClassAd as condor_q -l prints it
    ad_where: str  # "queue", "history" or "" (not submitted yet)
    condor_id: str  # "cluster.proc" of the ClassAd's job ("" if none)
    attempt: int  # the crab_retry the files are of
    files: monitor.JobFiles
    stdout: str | None
    stderr: str | None
    report: str | None
    user_log: str | None  # the job's HTCondor user log, every attempt's events
    at: float
    automatic: bool = False  # the task splits automatically (the job's state is shown as CRAB names it)
    why: str = ""  # a held job's hold reason, an idle one's -better-analyze; "" for others
    started: float | None = None  # the queue's JobCurrentStartDate: when its open attempt last started


@dataclass(frozen=True)
class SiteRow:
    """One site of the sites table: its jobs now, the attempts that ended there, and whether the
    task's jobs may go there and why (:mod:`engine.crab.ap.sites`)."""

    site: str
    running: int = 0
    succeeded: int = 0  # attempts since the last resubmit, as the automatic blacklist counts them
    failed: int = 0
    usable: bool | None = None  # None: not known (the task's sites are not known yet)
    label: str = ""  # "no", or the reasons it is blacklisted
    whitelisted: bool = False
    why: str = ""

    @property
    def success_rate(self) -> float | None:
        done = self.succeeded + self.failed
        return self.succeeded / done if done else None


@dataclass(frozen=True)
class ErrorGroup:
    """The jobs whose last attempt ended with one exit code."""

    exit_code: int
    failed: list[str] = field(default_factory=list)  # jobs failed for good
    retrying: list[str] = field(default_factory=list)  # jobs cooling off before their next try


class Backend:
    """The engine the UI watches: a state directory's task table and its schedd (the embedded
    one, or with ``backend="htcondor"`` the pool of CONDOR_CONFIG).  ``discover_every``: seconds
    between queries for the DAGMan jobs while the DAG list follows their logs."""

    def __init__(self, state: StateDir, backend: str = "embedded", discover_every: float = DISCOVER_EVERY) -> None:
        self.state = state
        self.backend = backend
        self._followers: dict[str, monitor.LogFollower] = {}
        self._dag_followers: dict[int, monitor.LogFollower] = {}
        self._ended: dict[int, list[dict[str, Any]]] = {}  # DAGMan jobs' ads found in the history
        self._counted_from_ad: set[int] = set()  # DAGs shown with DAGMan's counts from its ad
        self._watchers: dict[tuple[str, int], DagWatcher] = {}  # by dagman.out and DAGMan job (its run)
        self._node_tables: dict[int, NodeTable] = {}
        self._history: _History | None = None
        self._dag_queue = DagQueue(discover_every)
        self._summaries: dict[tuple[int, bool], tuple[tuple, DagSummary | None]] = {}  # by (DAG, in the queue)
        self._task_cache: tuple[float, set[int], list[Task]] | None = None
        self._owner_name: str | None = None
        self._analyses: dict[str, tuple[float, str]] = {}  # idle job -> (when, why_idle of its analysis)

    # -------------------------------------------------------------- connections

    def start(self) -> None:
        """Bring the embedded schedd (and its task worker) up, as every crabtui command does."""
        if self.backend == "embedded":
            from engine.schedd.local.client import LocalScheddClient

            with LocalScheddClient(self.state) as client:
                client.ping()

    @contextmanager
    def schedd(self) -> Iterator[Any]:
        """A connection for one call; a stopped embedded schedd is reported, not restarted, so the
        UI can show that the engine stopped answering."""
        if self.backend == "htcondor":
            from engine.schedd.htcondor import HTCondorSchedd

            client = HTCondorSchedd()
        else:
            from engine.schedd.local.client import LocalScheddClient

            client = LocalScheddClient(self.state, autostart=False)
        with client:
            yield client

    @contextmanager
    def db(self) -> Iterator[TaskDB]:
        db = TaskDB(self.state.tasks)
        try:
            yield db
        finally:
            db.close()

    # -------------------------------------------------------------- reading

    def work(self, schedd: Any) -> None:
        """On a pool, carry out the task table's pending commands (a kill or resubmit asked from
        the UI among them) and follow its tasks, as every task command does there; on the embedded
        engine its daemon's task worker does that."""
        if self.backend == "htcondor":
            from engine.crab.taskworker.pool import work

            work(self.state, schedd)

    def tasks(self, now: float) -> TasksSnapshot:
        summaries = []
        with self.schedd() as schedd:
            schedd.query("ClusterId == -1", ["ClusterId"])  # one cheap call: a silent schedd fails the snapshot
            self.work(schedd)
            with self.db() as db:
                tasks = db.tasks()
            for task in tasks:
                try:
                    view = task_view(task.task_dir, schedd, task.dagman_id, now=now)
                except ScheddError:
                    raise
                except Exception as e:  # one task whose files cannot be read must not hide the others
                    summaries.append(TaskSummary(task, {}, 0, None, f"{task.task_dir}: {type(e).__name__}: {e}"))
                    continue
                automatic = view.automatic is not None
                counts = state_counts(view.jobs, automatic)
                summaries.append(TaskSummary(task, counts, len(view.jobs),
                                             scheduler_status(task.status, task.dagman_id, view),
                                             view.dag_waiting or "", probing=automatic and only_probes(view.jobs)))
            owner = self.owner(schedd)
        return TasksSnapshot(summaries, now, owner)

    def listed(self, now: float, why: str) -> TasksSnapshot:
        """The task table alone, as ``task list`` lists it while the pool does not answer: each task
        marked with ``why`` its jobs cannot be shown."""
        with self.db() as db:
            tasks = db.tasks()
        return TasksSnapshot([TaskSummary(task, {}, 0, None, why) for task in tasks], now)

    def task(self, name: str, now: float, summary: bool = False) -> TaskSnapshot:
        """Task ``name``; with ``summary``, also what ``crab status`` prints of it (its summaries)."""
        with self.schedd() as schedd:
            self.work(schedd)
            with self.db() as db:
                task = db.get(name)
            view = task_view(task.task_dir, schedd, task.dagman_id, now=now)
            queue = dag_jobs(schedd, task.dagman_id)
            reasons = self._reasons(schedd, queue, now)
        follower = self._followers.get(task.name)
        if follower is None:
            follower = self._followers[task.name] = monitor.LogFollower(monitor.dagman_out(task.task_dir))
        node_jobs = {str(ad["CRAB_Id"]): f"{ad['ClusterId']}.{ad['ProcId']}" for ad in queue if "CRAB_Id" in ad}
        scheduler = scheduler_status(task.status, task.dagman_id, view)
        return TaskSnapshot(task, view, scheduler, queue, node_jobs,
                            dag_halt.is_halted(monitor.dag_file(task.task_dir)), follower.read(), now, reasons,
                            status_summary(task, view, scheduler, now) if summary else None)

    def _reasons(self, schedd: Any, queue: Sequence[dict[str, Any]], now: float) -> dict[str, str]:
        """Why the task's jobs in the queue wait: a held job's hold reason, an idle one's
        matchmaking as ``-better-analyze`` sums it up (at most :data:`ANALYSES` new analyses a
        refresh, each kept for :data:`ANALYSIS_TTL` seconds)."""
        reasons: dict[str, str] = {}
        fresh = 0
        for ad in queue:
            job = ad.get("CRAB_Id")
            if job is None:
                continue
            status = ad.get("JobStatus")
            condor_id = f"{ad['ClusterId']}.{ad['ProcId']}"
            if status == JobStatus.HELD:
                reasons[str(job)] = f"held: {ad.get('HoldReason') or 'no reason given'}"
            elif status == JobStatus.IDLE:
                cached = self._analyses.get(condor_id)
                if (cached is None or now - cached[0] > ANALYSIS_TTL) and fresh < ANALYSES:
                    fresh += 1
                    try:
                        cached = self._analyses[condor_id] = (now, why_idle(schedd.analyze(condor_id)))
                    except ScheddError:
                        continue
                if cached is not None:
                    reasons[str(job)] = cached[1]
        return reasons

    def held(self, now: float) -> HeldSnapshot:
        """Every held job of the schedd (every user's: the screen chooses), grouped by reason."""
        with self.schedd() as schedd:
            ads = schedd.query_values(HELD_CONSTRAINT, HELD_PROJECTION)
            owner = self.owner(schedd)
        return HeldSnapshot(held_jobs(ads), owner, now)

    def dags(self, now: float, ended_for: float | None = DEFAULT_ENDED_FOR, ask: bool = False,
             clock: Callable[[], float] | None = None) -> DagsSnapshot:
        """The DAGs users submitted (``crabtui dag submit``, condor_submit_dag): those in the
        queue, and those that left it less than ``ended_for`` seconds ago (None: none), from the
        history; the DAGs of CRAB tasks are left out (they are shown as tasks).  Their jobs in
        the queue are followed through their logs (:mod:`crabtui.dag_logs`), not queried anew
        unless ``ask``; ``clock`` tells when the schedd answered."""
        with self.schedd() as schedd:
            queued = self._dag_queue.dagmans(schedd, TOP_LEVEL_DAGMAN, DAG_PROJECTION, now, force=ask, clock=clock)
            owner = self.owner(schedd)
            ids = {ad["ClusterId"] for ad in queued}
            ads = [(ad, True) for ad in queued] + [(ad, False) for ad in self._ended_dags(schedd, now, ended_for, ids)]
            if ads:
                tasks = self._tasks_of_dags(now, {ad["ClusterId"] for ad, _ in ads})
                task_dagmans = {t.dagman_id for t in tasks if t.dagman_id is not None}
                task_dirs = {os.path.normpath(t.task_dir) for t in tasks}
                ads = [(ad, q) for ad, q in ads if ad["ClusterId"] not in task_dagmans
                       and os.path.normpath(str(ad.get("Iwd", ""))) not in task_dirs]
            files = {ad["ClusterId"]: dag_file_of(ad) for ad, q in ads if q}
            files = {cluster: dag_file for cluster, dag_file in files.items() if dag_file is not None}
            self._dag_queue.forget(set(files))
            # The first refresh shows the list without the node jobs' query, the next one asks.
            by_dag = self._dag_queue.node_jobs(schedd, files, NODE_JOB_PROJECTION, now, seed=bool(self._summaries))
        dags, pending = [], 0
        deadline = time.monotonic() + FIRST_READS_BUDGET
        summaries: dict[tuple[int, bool], tuple[tuple, DagSummary | None]] = {}
        for ad, in_queue in ads:
            dag_file = dag_file_of(ad)
            if dag_file is None:
                continue
            out_file = dagman_out_of(ad, dag_file)
            cluster = ad["ClusterId"]
            if (out_file, cluster) not in self._watchers and time.monotonic() > deadline:
                pending += 1  # its files are read at a later refresh; until then, DAGMan's ad says
                progress = None
            else:
                progress = self._watcher(dag_file, out_file, cluster).read(left_queue=not in_queue)
            key = (id(progress), self._dag_queue.version(cluster), self._dag_queue.discoveries,
                   id(ad) if not in_queue else 0, dag_halt.is_halted(dag_file))
            cached = self._summaries.get((cluster, in_queue))
            if cached is None or cached[0] != key:
                jobs = queued_by_node(by_dag.get(cluster, ())) if in_queue else {}
                cached = (key, summarize(ad, in_queue, progress, jobs))
            summaries[(cluster, in_queue)] = cached
            if cached[1] is not None:
                dags.append(cached[1])
        self._summaries = summaries
        return DagsSnapshot(sorted(dags, key=lambda d: (d.ended, d.id)), owner, now, pending)

    def _tasks_of_dags(self, now: float, dagmans: set[int]) -> list[Task]:
        """The CRAB tasks, whose DAGs the DAG list leaves out: read again when a DAGMan job not
        seen before is in the list, and at least every :data:`HISTORY_EVERY` seconds."""
        cached = self._task_cache
        if cached is None or not dagmans <= cached[1] or not 0 <= now - cached[0] < HISTORY_EVERY:
            with self.db() as db:
                cached = self._task_cache = (now, set(dagmans), db.tasks())
        return cached[2]

    def owner(self, schedd: Any) -> str:
        """Who the schedd knows us as (asked once): the owner whose jobs a list shows by default."""
        if self._owner_name is None:
            self._owner_name = schedd.owner()
        return self._owner_name

    def _ended_dags(self, schedd: Any, now: float, ended_for: float | None, queued: set[int]) -> list[dict[str, Any]]:
        """DAGMan jobs that left the queue within ``ended_for`` seconds, from the history: read
        again when a DAG leaves the queue, when the period changes, and at least every
        :data:`HISTORY_EVERY` seconds (a job in the history never changes)."""
        if ended_for is None:
            return []
        cache = self._history
        left = cache is not None and bool(cache.queued - queued)
        if cache is None or left or cache.ended_for != ended_for or now - cache.at >= HISTORY_EVERY or now < cache.at:
            ads = plain_ads(schedd.history(f"{TOP_LEVEL_DAGMAN} && EnteredCurrentStatus >= {int(now - ended_for)}",
                                        DAG_PROJECTION, match=MAX_ENDED_DAGS))
            cache = self._history = _History(now, ended_for, ads, set(queued))
        else:
            cache.queued = set(queued)
        return [ad for ad in cache.ads if ad["ClusterId"] not in queued]

    def _watcher(self, dag_file: str, out_file: str, cluster: int) -> DagWatcher:
        """DAGMan job ``cluster``'s run of ``dag_file``, whose dagman.out other runs share."""
        watcher = self._watchers.get((out_file, cluster))
        if watcher is None or watcher.dag_file != dag_file:
            watcher = self._watchers[(out_file, cluster)] = DagWatcher(dag_file, out_file, cluster)
        return watcher

    def dag(self, cluster: int, now: float) -> DagSnapshot:
        """DAGMan job ``cluster``: from the queue, or once it has left, from the history; its
        nodes and their jobs in the queue (followed through their logs, :mod:`crabtui.dag_logs`),
        and its dagman.out's new lines."""
        where, queue = "queue", []
        dag_queue = self._dag_queue
        with self.schedd() as schedd:
            ad = None if cluster in self._ended else dag_queue.dagman(cluster)
            if cluster not in self._ended and (
                    ad is None or dag_queue.blind(cluster, now, cluster in self._counted_from_ad)):
                found = schedd.query_values(f"ClusterId == {cluster} && JobUniverse == {SCHEDULER_UNIVERSE}",
                                            DAG_PROJECTION)
                ad = None
                if found:
                    dag_queue.follow_dagman(found[0], now)
                    ad = dag_queue.dagman(cluster)
            if ad is None:
                found = self._ended.get(cluster) or plain_ads(schedd.history(
                    f"ClusterId == {cluster} && JobUniverse == {SCHEDULER_UNIVERSE}", DAG_PROJECTION, match=1))
                where = "history" if found else ""
                if found:
                    self._ended[cluster] = found  # a job in the history never changes
                ad = found[0] if found else {}
            dag_file = dag_file_of(ad) if ad else None
            if dag_file is None:
                return DagSnapshot(cluster, None, ad, where, [ad] if where == "queue" and ad else [], {}, [], "", now)
            out_file = dagman_out_of(ad, dag_file)
            progress = self._watcher(dag_file, out_file, cluster).read(left_queue=where != "queue")
            if where == "queue":
                queue.append(ad)

            def jobs_of(dagman: int, dag_file: str) -> list[dict[str, Any]]:
                if where != "queue":
                    return []
                jobs = dag_queue.node_jobs(schedd, {dagman: dag_file}, NODE_JOB_PROJECTION, now)[dagman]
                queue.extend(jobs)
                return jobs

            rows = self._node_tables.setdefault(cluster, NodeTable()).rows(progress, jobs_of, now, cluster)
        own = queued_by_node(job for job in queue if job.get("DAGManJobId") == cluster)
        summary = summarize(ad, where == "queue", progress, own)
        if summary is not None and summary.source == FROM_AD:
            self._counted_from_ad.add(cluster)
        else:
            self._counted_from_ad.discard(cluster)
        follower = self._dag_followers.get(cluster)
        if follower is None:
            follower = self._dag_followers[cluster] = monitor.LogFollower(out_file)
        lines = follower.read()
        return DagSnapshot(cluster, summary, ad, where, queue, rows, lines, unreadable(out_file), now,
                           summary is not None and summary.halted)

    def node(self, cluster: int, path: str, now: float) -> NodeSnapshot:
        """Node ``path`` (a node table key) of DAG ``cluster``, for its drilldown."""
        snapshot_ad = self._ended.get(cluster)
        with self.schedd() as schedd:
            queued = None if snapshot_ad else schedd.query_values(
                f"ClusterId == {cluster} && JobUniverse == {SCHEDULER_UNIVERSE}", DAG_PROJECTION)
            found = snapshot_ad or queued or plain_ads(
                schedd.history(f"ClusterId == {cluster} && JobUniverse == {SCHEDULER_UNIVERSE}", DAG_PROJECTION,
                               match=1))
            dag_file = dag_file_of(found[0]) if found else None
            progress = self._watcher(dag_file, dagman_out_of(found[0], dag_file), cluster).read(
                left_queue=not queued) if dag_file else None
            node = node_at(progress, path) if progress is not None else None
            ad, where = job_ad(schedd, node.job if node is not None else None)
        return node_snapshot(cluster, path, node, ad, where, now)

    def forget_dag_log(self, cluster: int) -> None:
        """The next snapshot of DAG ``cluster`` starts its log's lines from the end again."""
        self._dag_followers.pop(cluster, None)

    def forget_log(self, name: str) -> None:
        """The next snapshot of task ``name`` (its full name) starts its log's lines from the end
        again: the screen that showed them was closed."""
        self._followers.pop(name, None)

    def job(self, name: str, job_id: str, now: float, attempt: int | None = None) -> JobSnapshot:
        """Job ``job_id`` of task ``name``, with the files of attempt ``attempt`` (None: the latest)."""
        with self.db() as db:
            task = db.get(name)
        with self.schedd() as schedd:
            view = task_view(task.task_dir, schedd, task.dagman_id, ids=[job_id], now=now)
            ad, where = monitor.job_ad(schedd, task.name, job_id)
            why = _why(schedd, ad) if where == "queue" else ""
        job = view.jobs[0] if view.jobs else None
        if attempt is None:
            attempt = max(0, len(job.attempts) - 1) if job is not None else 0
        files = monitor.job_files(task.task_dir, job_id, attempt)
        condor_id = f"{ad['ClusterId']}.{ad['ProcId']}" if ad is not None else ""
        return JobSnapshot(task, job, ad.printOld() if ad is not None else "", where, condor_id, attempt, files,
                           monitor.read_tail(files.stdout), monitor.read_tail(files.stderr),
                           monitor.report_text(files.report), monitor.read_tail(files.user_log), now,
                           automatic=view.automatic is not None, why=why,
                           started=ad.get("JobCurrentStartDate") if where == "queue" else None)

    # -------------------------------------------------------------- acting

    def hold(self, job_ids: Sequence[str]) -> ActResult:
        with self.schedd() as schedd:
            return schedd.act(JobAction.Hold, list(job_ids), "held from crabtui")

    def release(self, job_ids: Sequence[str]) -> ActResult:
        with self.schedd() as schedd:
            return schedd.act(JobAction.Release, list(job_ids))

    def remove(self, job_ids: Sequence[str]) -> ActResult:
        with self.schedd() as schedd:
            return schedd.act(JobAction.Remove, list(job_ids), "removed from crabtui")

    def halt_dag(self, dag_file: str, dag_id: int) -> bool:
        """Halt a DAG by its file (False: it was halted already); HaltError if it cannot be written here."""
        return halt_dag_file(dag_file, dag_id)

    def unhalt_dag(self, dag_file: str, dag_id: int) -> bool:
        """Resume a halted DAG (False: it was not halted)."""
        return unhalt_dag_file(dag_file, dag_id)

    def halt(self, name: str) -> bool:
        with self.db() as db:
            return dag_halt.halt(monitor.dag_file(db.get(name).task_dir))

    def unhalt(self, name: str) -> bool:
        with self.db() as db:
            return dag_halt.unhalt(monitor.dag_file(db.get(name).task_dir))

    def kill(self, name: str) -> Task:
        """``crab kill``: recorded in the task table for the task worker (TaskError if refused)."""
        with self.db() as db:
            self._log(db.get(name), "kill")
            return db.request(name, KILL)

    def _log(self, task: Task, command: str, *options: str) -> None:
        """Log the command in the task's ``crab.log`` as the command line that does the same, as
        ``crabtui task`` logs its own, refused or not."""
        from engine.crab.client import project

        found = project.linked(task.task_dir, task.name)
        if found is not None:
            backend = ["--backend", self.backend] if self.backend != "embedded" else []
            project.log_command(found, ["--state-dir", self.state.path, *backend, "task", command, task.name, *options])

    def resubmit(self, name: str, arguments: dict[str, Any]) -> Task:
        """``crab resubmit`` with the checked arguments of :func:`engine.crab.client.resubmit.request_arguments`;
        refuses (ResubmitError, TaskError) what ``crabtui task resubmit`` refuses, through the same checks."""
        from engine.crab.client.resubmit import command_options, request_resubmit

        with self.db() as db:
            task = db.get(name)
            self._log(task, "resubmit", *command_options(arguments))
            with self.schedd() as schedd:
                return request_resubmit(db, schedd, task, arguments)


# --- deriving tables from a snapshot -------------------------------------------------------

def state_counts(jobs: Sequence[JobView], automatic: bool = False) -> dict[str, int]:
    """Jobs per state as they are shown (``automatic``: the task splits automatically)."""
    counts: dict[str, int] = {}
    for j in jobs:
        state = shown_state(j, automatic)
        counts[state] = counts.get(state, 0) + 1
    return counts


def only_probes(jobs: Sequence[JobView]) -> bool:
    """An automatic task's jobs are its probes only: its processing stage does not exist yet."""
    from crabtui.task_status import job_stage

    return bool(jobs) and all(job_stage(j.id) == "probe" for j in jobs)


def dag_jobs(schedd: Any, dagman_id: int | None, projection: Sequence[str] = QUEUE_PROJECTION) -> list[dict[str, Any]]:
    """A DAGMan job and everything under it in the queue (node jobs, sub-DAGs and theirs), as
    ``condor_q -dag`` finds them: one query per DAG level."""
    if dagman_id is None:
        return []
    found = schedd.query_values(f"ClusterId == {dagman_id} || DAGManJobId == {dagman_id}", projection)
    seen = {dagman_id}
    subdags = [ad["ClusterId"] for ad in found
               if ad.get("JobUniverse") == SCHEDULER_UNIVERSE and ad["ClusterId"] not in seen]
    while subdags:
        seen.update(subdags)
        more = schedd.query_values(" || ".join(f"DAGManJobId == {d}" for d in subdags), projection)
        found += more
        subdags = [ad["ClusterId"] for ad in more
                   if ad.get("JobUniverse") == SCHEDULER_UNIVERSE and ad["ClusterId"] not in seen]
    return sorted(found, key=lambda ad: (ad.get("JobUniverse") != SCHEDULER_UNIVERSE, ad["ClusterId"], ad["ProcId"]))


@dataclass
class _History:
    """The ended DAGs last read from the history, and when."""

    at: float
    ended_for: float
    ads: list[dict[str, Any]]
    queued: set[int]  # the DAGs in the queue then: one that leaves it is read again at once


def _why(schedd: Any, ad: Any) -> str:
    """Why a job in the queue waits: held, its hold reason; idle, its ``-better-analyze``."""
    status = ad.get("JobStatus")
    if status == JobStatus.HELD:
        return (f"Held since {_clock(ad.get('EnteredCurrentStatus'))}: {ad.get('HoldReason') or 'no reason given'}"
                f"\n(HoldReasonCode {ad.get('HoldReasonCode', '?')}, subcode {ad.get('HoldReasonSubCode', '?')})")
    if status == JobStatus.IDLE:
        try:
            return schedd.analyze(f"{ad['ClusterId']}.{ad['ProcId']}")
        except ScheddError as e:
            return f"Cannot analyse the job's matchmaking: {e}"
    return ""


def _clock(t: Any) -> str:
    import time

    return time.strftime("%m/%d %H:%M:%S", time.localtime(float(t))) if t else "?"


_JOB_ID_PREFIX = re.compile(r"^\d+\.\d+: ")


def why_idle(analysis: str) -> str:
    """``-better-analyze``'s text in a few words: whether the job can run, waits for a busy slot,
    or matches no slot, and then the condition of its Requirements that no slot meets (or what
    else keeps the slots away)."""
    lines = [line.strip() for line in analysis.splitlines() if line.strip()]
    verdict = _JOB_ID_PREFIX.sub("", lines[0]) if lines else ""  # condor_q's "12.0: " before it, if any
    if "matches none of the" in verdict:
        clause = next((line for line in lines if line.endswith("<- matches no slot")), None)
        if clause is not None:
            condition = clause.removesuffix("<- matches no slot").split(None, 2)[-1].strip()
            return f"matches no slot: {condition}"
        counted = [line for line in lines if line[:1].isdigit() and not line.startswith("0 ")]
        return "matches no slot: " + (counted[0].split(None, 1)[1] if counted else "see the Why tab")
    if "all busy" in verdict:
        return "idle: " + verdict.split(" matches ", 1)[-1].rstrip(".").replace(": it waits for one", "; waits for one")
    if "can run now" in verdict:
        return "idle: " + verdict.split(" can run now ", 1)[-1].rstrip(".").replace("on ", "can run on ", 1)
    return verdict


def status_summary(task: Task, view: TaskView, scheduler: str | None, now: float) -> list[str]:
    """What ``crab status`` prints without ``--long``'s table: the header and warnings, the jobs
    per state with percentages (an automatic task's per stage: probe, main, tail), the errors by
    exit code, and the summary of run jobs with its warnings."""
    from crabtui.task_status import (TaskInfo, automatic_summary_lines, error_lines, header_lines,
                                     run_summary_lines, summary_lines)
    from engine.crab.client.project import directory

    info = TaskInfo(name=task.name, task_dir=directory(task.task_dir, task.name), status=task.status,
                    command=task.command, message=task.message, scheduler_status=scheduler, num_cores=view.num_cores,
                    max_memory_mb=view.max_memory_mb, max_runtime_min=view.max_runtime_min,
                    warnings=view.warnings + task.kill_warnings, automatic=view.automatic)
    lines = header_lines(info)
    if scheduler is None:
        return lines
    automatic = view.automatic is not None
    if automatic:
        lines += automatic_summary_lines(view.jobs, now, view.automatic, long=True)
    else:
        lines += summary_lines(view.jobs, now)
    lines += error_lines(view.jobs, tails_only=automatic)
    lines += run_summary_lines(view.jobs, num_cores=view.num_cores, max_memory_mb=view.max_memory_mb,
                               max_runtime_min=view.max_runtime_min, automatic=automatic)
    return lines


def job_ad(schedd: Any, job: str | None) -> tuple[classad2.ClassAd | None, str]:
    """Job ``cluster.proc``'s ClassAd and where it was found: ``queue``, ``history`` or ""."""
    if not job or job.startswith(("0.", "-")):
        return None, ""
    cluster, _, proc = job.partition(".")
    constraint = f"ClusterId == {int(cluster)} && ProcId == {int(proc or 0)}"
    found = schedd.query(constraint)
    if found:
        return found[0], "queue"
    done = schedd.history(constraint, match=1)
    return (done[0], "history") if done else (None, "")


def plain_ads(ads: Sequence[Any]) -> list[dict[str, Any]]:
    """ClassAds as plain mappings of their literal values (as ``query_values`` gives them)."""
    plain = []
    for ad in ads:
        values = {}
        for attr in ad.keys():
            value = ad.eval(attr)
            if not isinstance(value, classad2.Value):
                values[attr] = value
        plain.append(values)
    return plain


def site_rows(jobs: Sequence[JobView], view: Any) -> list[SiteRow]:
    """Per site: the jobs running there now, and from the task's site view (``TaskView.sites``,
    None while it is not known) the attempts that ended there and whether it is blacklisted."""
    running: dict[str, int] = {}
    for j in jobs:
        if j.state in ("running", "transferring") and j.site_history:
            running[j.site_history[-1]] = running.get(j.site_history[-1], 0) + 1
    rows = {}
    if view is not None:
        for s in view.sites:
            rows[s.site] = SiteRow(s.site, running.get(s.site, 0), s.successful, s.failed, s.usable, s.label,
                                   matches(s.site, view.lists.whitelist), s.detail)
    for site, n in running.items():
        rows.setdefault(site, SiteRow(site, n))
    return [rows[site] for site in sorted(rows)]


def error_groups(jobs: Sequence[JobView]) -> list[ErrorGroup]:
    """Jobs that failed for good or wait to be retried, by their last exit code, most jobs first."""
    groups: dict[int, ErrorGroup] = {}
    failing = [j for j in jobs if j.exit_code not in (None, 0) and j.state in ("failed", "cooloff")]
    for j in sorted(failing, key=lambda j: job_sort_key(j.id)):
        group = groups.setdefault(j.exit_code, ErrorGroup(j.exit_code))
        (group.failed if j.state == "failed" else group.retrying).append(j.id)
    return sorted(groups.values(), key=lambda g: (-len(g.failed) - len(g.retrying), g.exit_code))


def is_done(task: Task) -> bool:
    return task.status in DONE_TASK_STATUSES
