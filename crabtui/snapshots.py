"""What the UI and ``crabtui watch`` show, read from the engine in one go: plain snapshots.

Every method of :class:`Backend` blocks (the task table, the schedd, the task's files), so the UI
calls them from worker threads and only ever hands finished snapshots to its widgets.  Each call
opens its own task-table and schedd connections, so calls on different threads never share one.
Nothing here imports textual.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import classad2

from crabtui.task_status import NO_OUTPUT, RESCHEDULED, shown_state
from engine.crab.ap.sites import matches
from engine.crab.client import monitor
from engine.crab.client.status import JobView, TaskView, job_sort_key, scheduler_status, task_view
from engine.crab.taskworker.taskdb import (COMPLETED, FAILED, KILL, KILLED, RESUBMIT, RESUBMITTABLE, SUBMITFAILED,
                                           Task, TaskDB)
from engine.dagman import halt as dag_halt
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
SCHEDULER_UNIVERSE = 7
TOP_LEVEL_DAGMAN = f"JobUniverse == {SCHEDULER_UNIVERSE} && DAGManJobId =?= undefined"
"""The DAGMan jobs a user submitted (sub-DAGs' DAGMan jobs carry their parent's DAGManJobId)."""
DAG_NODE_COUNTS = ("done", "failed", "futile", "queued", "prerun", "postrun", "ready", "unready")
"""DAGMan's ``DAG_Nodes<Count>`` attributes, lower-cased, in the order the UI names them."""
DAG_PROJECTION = ("ClusterId", "ProcId", "JobStatus", "JobUniverse", "Iwd", "Arguments", "Args", "JobBatchName",
                  "QDate", "EnteredCurrentStatus", "JobStartDate", "HoldReason", "RemoveReason", "ExitCode",
                  "ExitBySignal", "DAG_Status", "DAG_InRecovery", "DAG_NodesTotal",
                  *(f"DAG_Nodes{c.title()}" for c in DAG_NODE_COUNTS), "DAG_JobsIdle", "DAG_JobsRunning",
                  "DAG_JobsHeld")
DAG_STATUS_WORDS = {1: "error", 2: "node failed", 3: "aborting", 4: "removing", 5: "cycle", 6: "halted"}
"""DAG_Status values other than 0 (running normally), as ``htcondor dag status`` reads them."""


@dataclass(frozen=True)
class TaskSummary:
    """One task of the task list."""

    task: Task
    counts: dict[str, int]  # shown state -> jobs
    total: int
    scheduler_status: str | None
    error: str = ""  # why the task's jobs could not be read ("" if they were)


@dataclass(frozen=True)
class TasksSnapshot:
    tasks: list[TaskSummary]
    at: float


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


@dataclass(frozen=True)
class DagSummary:
    """One DAGMan job and the DAG it runs, from its ad (as DAGMan last published its counts)."""

    id: int  # the DAGMan job's ClusterId
    dag_file: str  # absolute: the job's Iwd and its -Dag argument
    job_status: int  # the DAGMan job's JobStatus
    dag_status: int | None  # DAGMan's DAG_Status (None until DAGMan first updates its ad)
    nodes: dict[str, int]  # DAG_NODE_COUNTS name -> nodes (those DAGMan reported)
    total: int  # DAG_NodesTotal (0 until DAGMan reports it)
    jobs: dict[str, int]  # "idle", "running", "held" -> the DAG's node jobs in the queue (DAG_Jobs*)
    submitted_at: float  # QDate
    hold_reason: str
    halted: bool  # the DAG's halt file exists (DAG_Status says 6 only once DAGMan has seen it)
    in_recovery: bool
    batch_name: str
    in_queue: bool = True  # False: the ad is the history's (the DAGMan job has left the queue)
    exit_code: int | None = None  # DAGMan's exit code, once it has exited

    @property
    def state(self) -> str:
        """One word for the DAG: idle, running, recovering, halted, held, removing, aborting,
        completed, failed or removed."""
        status = self.job_status
        if status == JobStatus.HELD:
            return "held"
        if status == JobStatus.REMOVED:
            return "removing" if self.in_queue else "removed"
        if status == JobStatus.COMPLETED:
            return "completed" if self.exit_code == 0 else "failed"
        if status == JobStatus.IDLE:
            return "idle"
        if self.dag_status in (3, 4):
            return DAG_STATUS_WORDS[self.dag_status]
        if self.halted or self.dag_status == 6:
            return "halted"
        if self.in_recovery:
            return "recovering"
        return "running"

    @property
    def done(self) -> int:
        return self.nodes.get("done", 0)

    @property
    def counts(self) -> dict[str, int]:
        """The nodes per node state as the UI shows states (:data:`NODE_STATES`, for the progress
        bar and the counts): done nodes are finished, failed and futile ones failed, queued ones
        held, running or idle as the DAG's jobs are, nodes running a PRE or POST script running,
        and nodes waiting (ready or for their parents) unsubmitted."""
        nodes = self.nodes
        queued = nodes.get("queued", 0)
        held = min(self.jobs.get("held", 0), queued)
        running = min(self.jobs.get("running", 0), queued - held)
        counts = {"finished": nodes.get("done", 0), "failed": nodes.get("failed", 0) + nodes.get("futile", 0),
                  "held": held, "running": running + nodes.get("prerun", 0) + nodes.get("postrun", 0),
                  "idle": queued - held - running,
                  "unsubmitted": nodes.get("ready", 0) + nodes.get("unready", 0)}
        return {state: n for state, n in counts.items() if n}

    def describe_nodes(self) -> str:
        """``2/5 done, 1 queued, 1 ready, 1 failed``: DAGMan's own counts."""
        if not self.total:
            return "no node counts yet"
        words = [f"{self.done}/{self.total} done"]
        words += [f"{self.nodes[c]} {c}" for c in DAG_NODE_COUNTS[1:] if self.nodes.get(c)]
        if self.jobs.get("held"):
            words.append(f"{self.jobs['held']} job(s) held")
        return ", ".join(words)


@dataclass(frozen=True)
class DagsSnapshot:
    dags: list[DagSummary]
    at: float


@dataclass(frozen=True)
class DagSnapshot:
    """One DAG: its DAGMan job's ad, the ``condor_q -dag`` tree under it, and its log's new lines."""

    id: int
    dag: DagSummary | None  # None: no such DAGMan job in the queue or its history
    ad: dict[str, Any]  # the DAGMan job's ad (DAG_PROJECTION)
    where: str  # "queue", "history" or ""
    queue: list[dict[str, Any]]  # dag_jobs: the DAGMan job first, then its node jobs and sub-DAGs
    halted: bool
    log_lines: list[str]  # dagman.out lines since the previous snapshot
    at: float

    @property
    def dagman_job(self) -> str:
        return f"{self.id}.0"


class Backend:
    """The engine the UI watches: a state directory's task table and its schedd (the embedded
    one, or with ``backend="htcondor"`` the pool of CONDOR_CONFIG)."""

    def __init__(self, state: StateDir, backend: str = "embedded") -> None:
        self.state = state
        self.backend = backend
        self._followers: dict[str, monitor.LogFollower] = {}
        self._dag_followers: dict[int, monitor.LogFollower] = {}
        self._ended: dict[int, list[dict[str, Any]]] = {}  # DAGMan jobs' ads found in the history

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

    def tasks(self, now: float) -> TasksSnapshot:
        with self.db() as db:
            tasks = db.tasks()
        summaries = []
        with self.schedd() as schedd:
            schedd.query("ClusterId == -1", ["ClusterId"])  # one cheap call: a silent schedd fails the snapshot
            for task in tasks:
                try:
                    view = task_view(task.task_dir, schedd, task.dagman_id, now=now)
                except ScheddError:
                    raise
                except Exception as e:  # one task whose files cannot be read must not hide the others
                    summaries.append(TaskSummary(task, {}, 0, None, f"{task.task_dir}: {type(e).__name__}: {e}"))
                    continue
                counts = state_counts(view.jobs, view.automatic is not None)
                summaries.append(TaskSummary(task, counts, len(view.jobs),
                                             scheduler_status(task.status, task.dagman_id, view)))
        return TasksSnapshot(summaries, now)

    def task(self, name: str, now: float) -> TaskSnapshot:
        with self.db() as db:
            task = db.get(name)
        with self.schedd() as schedd:
            view = task_view(task.task_dir, schedd, task.dagman_id, now=now)
            queue = dag_jobs(schedd, task.dagman_id)
        follower = self._followers.get(task.name)
        if follower is None:
            follower = self._followers[task.name] = monitor.LogFollower(monitor.dagman_out(task.task_dir))
        node_jobs = {str(ad["CRAB_Id"]): f"{ad['ClusterId']}.{ad['ProcId']}" for ad in queue if "CRAB_Id" in ad}
        return TaskSnapshot(task, view, scheduler_status(task.status, task.dagman_id, view), queue, node_jobs,
                            dag_halt.is_halted(monitor.dag_file(task.task_dir)), follower.read(), now)

    def dags(self, now: float) -> DagsSnapshot:
        """The DAGs in the queue that users submitted (``crabtui dag submit``, condor_submit_dag),
        leaving out the DAGs of CRAB tasks, which are shown as tasks."""
        with self.schedd() as schedd:
            ads = schedd.query_values(TOP_LEVEL_DAGMAN, DAG_PROJECTION)
        if ads:
            with self.db() as db:
                tasks = db.tasks()
            task_dagmans = {t.dagman_id for t in tasks if t.dagman_id is not None}
            task_dirs = {os.path.normpath(t.task_dir) for t in tasks}
            ads = [ad for ad in ads if ad["ClusterId"] not in task_dagmans
                   and os.path.normpath(str(ad.get("Iwd", ""))) not in task_dirs]
        dags = [summary for summary in map(dag_summary, ads) if summary is not None]
        return DagsSnapshot(sorted(dags, key=lambda d: d.id), now)

    def dag(self, cluster: int, now: float) -> DagSnapshot:
        """DAGMan job ``cluster``: from the queue, or once it has left, from the history."""
        where = "queue"
        with self.schedd() as schedd:
            found = schedd.query_values(f"ClusterId == {cluster} && JobUniverse == {SCHEDULER_UNIVERSE}",
                                        DAG_PROJECTION)
            queue = dag_jobs(schedd, cluster) if found else []
            if not found:
                found = self._ended.get(cluster) or _plain(schedd.history(
                    f"ClusterId == {cluster} && JobUniverse == {SCHEDULER_UNIVERSE}", DAG_PROJECTION, match=1))
                where = "history" if found else ""
        ad = found[0] if found else {}
        if where == "history":
            self._ended[cluster] = found  # a job in the history never changes
        summary = dag_summary(ad, where == "queue") if ad else None
        lines: list[str] = []
        if summary is not None:
            follower = self._dag_followers.get(cluster)
            if follower is None:
                follower = self._dag_followers[cluster] = monitor.LogFollower(summary.dag_file + ".dagman.out")
            lines = follower.read()
        return DagSnapshot(cluster, summary, ad, where, queue, summary is not None and summary.halted, lines, now)

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
        job = view.jobs[0] if view.jobs else None
        if attempt is None:
            attempt = max(0, len(job.attempts) - 1) if job is not None else 0
        files = monitor.job_files(task.task_dir, job_id, attempt)
        condor_id = f"{ad['ClusterId']}.{ad['ProcId']}" if ad is not None else ""
        return JobSnapshot(task, job, ad.printOld() if ad is not None else "", where, condor_id, attempt, files,
                           monitor.read_tail(files.stdout), monitor.read_tail(files.stderr),
                           monitor.report_text(files.report), monitor.read_tail(files.user_log), now,
                           automatic=view.automatic is not None)

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

    def halt_dag(self, dag_file: str) -> bool:
        """Halt a DAG by its file (False: it was halted already)."""
        return dag_halt.halt(dag_file)

    def unhalt_dag(self, dag_file: str) -> bool:
        """Resume a halted DAG (False: it was not halted)."""
        return dag_halt.unhalt(dag_file)

    def halt(self, name: str) -> bool:
        with self.db() as db:
            return dag_halt.halt(monitor.dag_file(db.get(name).task_dir))

    def unhalt(self, name: str) -> bool:
        with self.db() as db:
            return dag_halt.unhalt(monitor.dag_file(db.get(name).task_dir))

    def kill(self, name: str) -> Task:
        """``crab kill``: recorded in the task table for the task worker (TaskError if refused)."""
        with self.db() as db:
            return db.request(name, KILL)

    def resubmit(self, name: str, arguments: dict[str, Any]) -> Task:
        """``crab resubmit`` with the checked arguments of :func:`engine.crab.client.resubmit.request_arguments`;
        refuses (ResubmitError, TaskError) what ``crabtui task resubmit`` refuses."""
        from engine.crab.client.resubmit import ResubmitError, select_jobs

        with self.db() as db:
            task = db.get(name)
            if task.status in RESUBMITTABLE:
                if not os.path.isdir(task.task_dir):
                    raise ResubmitError("Status information is unavailable, will not proceed with the "
                                        "resubmission. Try again a few seconds later.")
                with self.schedd() as schedd:
                    view = task_view(task.task_dir, schedd, task.dagman_id)
                select_jobs({j.id: j.state for j in view.jobs}, arguments["resubmit_jobids"],
                            automatic=view.automatic is not None)
            return db.request(task.name, RESUBMIT, arguments)


# --- deriving tables from a snapshot -------------------------------------------------------

def state_counts(jobs: Sequence[JobView], automatic: bool = False) -> dict[str, int]:
    """Jobs per state as they are shown (``automatic``: the task splits automatically)."""
    counts: dict[str, int] = {}
    for j in jobs:
        state = shown_state(j, automatic)
        counts[state] = counts.get(state, 0) + 1
    return counts


def dag_jobs(schedd: Any, dagman_id: int | None) -> list[dict[str, Any]]:
    """A DAGMan job and everything under it in the queue (node jobs, sub-DAGs and theirs), as
    ``condor_q -dag`` finds them: one query per DAG level."""
    if dagman_id is None:
        return []
    found = schedd.query_values(f"ClusterId == {dagman_id} || DAGManJobId == {dagman_id}", QUEUE_PROJECTION)
    seen = {dagman_id}
    subdags = [ad["ClusterId"] for ad in found
               if ad.get("JobUniverse") == SCHEDULER_UNIVERSE and ad["ClusterId"] not in seen]
    while subdags:
        seen.update(subdags)
        more = schedd.query_values(" || ".join(f"DAGManJobId == {d}" for d in subdags), QUEUE_PROJECTION)
        found += more
        subdags = [ad["ClusterId"] for ad in more
                   if ad.get("JobUniverse") == SCHEDULER_UNIVERSE and ad["ClusterId"] not in seen]
    return sorted(found, key=lambda ad: (ad.get("JobUniverse") != SCHEDULER_UNIVERSE, ad["ClusterId"], ad["ProcId"]))


def dag_file_of(ad: dict[str, Any]) -> str | None:
    """The DAG file a DAGMan job runs, as ``crabtui dag halt ID`` finds it: its ``-Dag``
    argument (condor_submit_dag's and ``crabtui dag submit``'s) in its Iwd, else the file its
    default batch name (``FILE+ID``) names; None if it runs none."""
    from engine.schedd.local.submit import parse_arguments

    if ad.get("Arguments"):
        argv = parse_arguments(f'"{ad["Arguments"]}"')  # the ad holds the new syntax without its quotes
    else:
        argv = str(ad.get("Args") or "").split()
    flags = [a.lower() for a in argv[:-1]]
    if "-dag" in flags:
        name = argv[flags.index("-dag") + 1]
    else:
        batch, plus, cluster = str(ad.get("JobBatchName") or "").rpartition("+")
        if not plus or cluster != str(ad.get("ClusterId")):
            return None
        name = batch
    return os.path.join(str(ad.get("Iwd") or ""), name)


def dag_summary(ad: dict[str, Any], in_queue: bool = True) -> DagSummary | None:
    """A DAGMan job's ad (DAG_PROJECTION) as a :class:`DagSummary`; None if it runs no DAG."""
    dag_file = dag_file_of(ad)
    if dag_file is None:
        return None
    nodes = {c: int(ad[f"DAG_Nodes{c.title()}"]) for c in DAG_NODE_COUNTS
             if ad.get(f"DAG_Nodes{c.title()}") is not None}
    jobs = {w: int(ad.get(f"DAG_Jobs{w.title()}") or 0) for w in ("idle", "running", "held")}
    return DagSummary(int(ad["ClusterId"]), dag_file, int(ad.get("JobStatus") or JobStatus.IDLE),
                      None if ad.get("DAG_Status") is None else int(ad["DAG_Status"]), nodes,
                      int(ad.get("DAG_NodesTotal") or 0), jobs, float(ad.get("QDate") or 0),
                      str(ad.get("HoldReason") or ""), dag_halt.is_halted(dag_file), bool(ad.get("DAG_InRecovery")),
                      str(ad.get("JobBatchName") or ""), in_queue,
                      None if ad.get("ExitCode") is None else int(ad["ExitCode"]))


def _plain(ads: Sequence[Any]) -> list[dict[str, Any]]:
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


def run_time(ad: dict[str, Any], now: float) -> float:
    """A queued job's run time as condor_q shows it: earlier runs plus the current one."""
    seconds = float(ad.get("RemoteWallClockTime") or 0)
    if ad.get("JobStatus") == JobStatus.RUNNING and ad.get("JobCurrentStartDate"):
        seconds += max(0.0, now - ad["JobCurrentStartDate"])
    return seconds


def is_done(task: Task) -> bool:
    return task.status in DONE_TASK_STATUSES
