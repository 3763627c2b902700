"""What the UI shows of the DAGs users submit themselves (``crabtui dag submit``,
condor_submit_dag): plain snapshots, made off the UI thread.  Nothing here imports textual.

Node counts are taken from what is fresh: the DAG's dagman.out, which DAGMan writes as things
happen (:mod:`engine.dagman.progress`), with its queued nodes split by what their jobs in the
queue are doing now.  Only when dagman.out cannot be read from here (a DAG on a pool whose
directory this machine does not see) do they come from the DAGMan job's ad, which DAGMan
refreshes every DAGMAN_QUEUE_UPDATE_INTERVAL (5 minutes); each summary says which it used and
how old it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.dagman import halt as dag_halt
from engine.dagman.dagman_out import dagman_out_path
from engine.dagman.node_status import NodeState
from engine.dagman.progress import EXIT_RESTART, DagProgress, DagWatcher, NodeProgress
from engine.schedd.api import JobStatus
from engine.schedd.local.userlog import node_events

SCHEDULER_UNIVERSE = 7
TOP_LEVEL_DAGMAN = f"JobUniverse == {SCHEDULER_UNIVERSE} && DAGManJobId =?= undefined"
"""The DAGMan jobs a user submitted (sub-DAGs' DAGMan jobs carry their parent's DAGManJobId)."""
DAG_COUNTS = ("done", "failed", "futile", "held", "running", "idle", "pre", "post", "ready", "unready")
"""A DAG's nodes per state, in the order the UI names them: DAGMan's node states, its queued
nodes split by what their jobs are doing (held, running, idle)."""
AD_COUNTS = ("done", "failed", "futile", "queued", "prerun", "postrun", "ready", "unready")
"""DAGMan's ``DAG_Nodes<Count>`` attributes, lower-cased."""
DAG_PROJECTION = ("ClusterId", "ProcId", "JobStatus", "JobUniverse", "Owner", "Iwd", "Arguments", "Args",
                  "Environment", "Env", "JobBatchName", "QDate", "EnteredCurrentStatus", "JobStartDate",
                  "CompletionDate", "HoldReason", "RemoveReason", "ExitCode", "ExitBySignal", "DAG_Status",
                  "DAG_InRecovery", "DAG_AdUpdateTime", "UserLog", "DAG_NodesTotal",
                  *(f"DAG_Nodes{c.title()}" for c in AD_COUNTS), "DAG_JobsIdle", "DAG_JobsRunning", "DAG_JobsHeld",
                  "CRAB_ReqName")
NODE_JOB_PROJECTION = ("ClusterId", "ProcId", "JobStatus", "JobUniverse", "DAGManJobId", "DAGNodeName", "Owner",
                       "HoldReason", "EnteredCurrentStatus", "JobCurrentStartDate", "RemoteWallClockTime",
                       "MATCH_GLIDEIN_CMSSite", "QDate")
FROM_DAGMAN_OUT, FROM_AD = "dagman.out", "DAGMan's job ad"
MAX_SUBDAG_DEPTH = 8


@dataclass(frozen=True)
class DagSummary:
    """One DAGMan job and the DAG it runs, with its node counts from the freshest source."""

    id: int  # the DAGMan job's ClusterId
    dag_file: str  # absolute: the job's Iwd and its -Dag argument
    owner: str
    job_status: int  # the DAGMan job's JobStatus
    dag_status: int | None  # DAG_Status (None until known)
    nodes: dict[str, int]  # DAG_COUNTS word -> nodes (the non-zero ones)
    total: int
    source: str  # FROM_DAGMAN_OUT or FROM_AD
    as_of: float | None  # when the source last changed: dagman.out's newest line, the ad's DAG_AdUpdateTime
    submitted_at: float  # QDate
    hold_reason: str
    halted: bool  # the DAG's halt file exists (DAG_Status says 6 only once DAGMan has seen it)
    halt_unknown: bool  # its directory cannot be read from here: whether it is halted is not known
    in_recovery: bool
    batch_name: str
    out_file: str  # its dagman.out
    in_queue: bool = True  # False: the ad is the history's (the DAGMan job has left the queue)
    exit_code: int | None = None  # DAGMan's exit code, once it has exited
    ended_at: float | None = None  # when the DAGMan job left the queue
    unreadable: str = ""  # why dagman.out cannot be read from here ("" if it can)
    removing: bool = False  # condor_rm reached DAGMan, which is removing its jobs
    aborting: bool = False  # ABORT-DAG-ON
    rescue: str | None = None  # the rescue DAG this run wrote (absolute)
    crab_task: str = ""  # the CRAB task whose DAG it is (its full name; "" for a DAG of the user's)
    end_why: str = ""  # why DAGMan exited, beyond its exit code (an ABORT-DAG-ON, an ERROR of its own)
    requeued: str = ""  # how a run of DAGMan ended that left its job in the queue to run again

    @property
    def crab_request(self) -> str:
        """The CRAB task's requestName (YYMMDD_HHMMSS:user_crab_<requestName>)."""
        return self.crab_task.partition("_crab_")[2] or self.crab_task

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
        if self.removing or self.dag_status == 4:
            return "removing"
        if self.aborting or self.dag_status == 3:
            return "aborting"
        if self.halted or self.dag_status == 6:
            return "halted"
        if self.in_recovery:
            return "recovering"
        return "running"

    @property
    def ended(self) -> bool:
        return not self.in_queue

    def left_queue(self, verb: str) -> str:
        """Why ``verb`` does nothing to this ended DAG: the one line the DAG list and the DAG's
        screen both say."""
        return f"Nothing to {verb}: DAG {self.id} has left the queue ({self.state}); only DAGs in the queue can be."

    @property
    def done(self) -> int:
        return self.nodes.get("done", 0)

    @property
    def counts(self) -> dict[str, int]:
        """The nodes per job state as the UI's progress bars show states: done nodes finished,
        failed and futile ones failed, nodes with a job held, running (or a script running) or
        idle, and nodes that wait unsubmitted."""
        n = self.nodes
        counts = {"finished": n.get("done", 0), "failed": n.get("failed", 0) + n.get("futile", 0),
                  "held": n.get("held", 0), "running": n.get("running", 0) + n.get("pre", 0) + n.get("post", 0),
                  "idle": n.get("idle", 0), "unsubmitted": n.get("ready", 0) + n.get("unready", 0)}
        return {state: count for state, count in counts.items() if count}

    def describe_nodes(self) -> str:
        """``2/5 done, 1 running, 1 ready, 1 failed``."""
        if not self.total:
            return "no node counts yet"
        words = [f"{self.done}/{self.total} done"]
        words += [f"{self.nodes[c]} {c}" for c in DAG_COUNTS[1:] if self.nodes.get(c)]
        return ", ".join(words)

    def describe_source(self, now: float) -> str:
        """``dagman.out 3s ago, queue now``: where the counts come from and how old they are (and,
        while the DAG is in the queue, its queued nodes split by what their jobs do now)."""
        if not self.total:
            return ""
        age = "" if self.as_of is None else f" {_ago(now - self.as_of)}"
        if self.source == FROM_AD:
            return f"{FROM_AD}{age} (refreshed every 5 min: {self.unreadable or 'dagman.out not read'})"
        return f"{FROM_DAGMAN_OUT}{age}" + (", queue now" if self.in_queue else "")  # its jobs' states: now


@dataclass(frozen=True)
class NodeRow:
    """A line of a DAG's node table: a node (``job`` None), or one of its jobs in the queue
    under it.  ``key`` is the node's path (``SD/S1`` in sub-DAG SD), and a job's ``path#job``."""

    key: str
    depth: int  # 0 for the DAG's own nodes, one more per sub-DAG
    name: str
    state: str  # a node: DAG_COUNTS' word; a job: its JobStatus word
    node: NodeProgress | None = None
    job: str = ""  # the HTCondor job "cluster.proc" (the node's current or last)
    runtime: float | None = None  # a queued job's run time
    site: str = ""
    why: str = ""
    dag: int | None = None  # the DAGMan job the node belongs to (a sub-DAG's own, if known)

    @property
    def is_job(self) -> bool:
        return self.node is None


@dataclass(frozen=True)
class DagsSnapshot:
    dags: list[DagSummary]
    owner: str  # who the schedd knows us as
    at: float
    pending: int = 0  # DAGs whose files are not read yet (their counts are their ads' until then)


@dataclass(frozen=True)
class DagSnapshot:
    """One DAG: its summary, its nodes (and their queued jobs) and its log's new lines."""

    id: int
    dag: DagSummary | None  # None: no such DAGMan job in the queue or its history
    ad: dict[str, Any]
    where: str  # "queue", "history" or ""
    queue: list[dict[str, Any]]  # the DAGMan job, its node jobs and sub-DAGs in the queue
    rows: dict[str, NodeRow]  # the node table, in run order
    log_lines: list[str]  # dagman.out lines since the previous snapshot
    log_error: str  # why dagman.out cannot be read from here ("" if it can)
    at: float
    halted: bool = False

    @property
    def dagman_job(self) -> str:
        return f"{self.id}.0"


@dataclass(frozen=True)
class NodeSnapshot:
    """One node of a DAG for its drilldown: DAGMan's view of it, its job's ClassAd and files, its
    scripts' output and, for a SUBDAG node, the sub-DAG's dagman.out."""

    dag: int
    path: str  # the node's key in the DAG's node table
    node: NodeProgress | None
    ad_text: str  # its job's ClassAd as condor_q -l prints it ("" if it has had no job)
    ad_where: str  # "queue", "history" or ""
    hold_reason: str
    files: dict[str, str]  # tab -> path: stdout, stderr, log (the job's user log), pre, post, dagman.out
    texts: dict[str, str | None]  # tab -> the file's end (None: it cannot be read)
    notes: dict[str, str]  # tab -> why there is no file for it
    subdag_id: int | None  # a SUBDAG node's DAGMan job
    at: float
    word: str = ""  # its state as the DAG's node table words it: a queued node's job's (held, running, idle)


# -------------------------------------------------------------- from ads


def crab_task_of(ad: Mapping[str, Any], dag_file: str) -> str:
    """The CRAB task a DAGMan job runs: its ad's CRAB_ReqName, as CRAB's DAGMan jobs carry it, or
    for one queued before the TaskWorker set it, its batch name, the task's name, if it runs a
    task's RunJobs.dag; "" for a DAG of the user's."""
    name = ad.get("CRAB_ReqName")
    if name:
        return str(name)
    batch = str(ad.get("JobBatchName") or "")
    return batch if os.path.basename(dag_file) == "RunJobs.dag" and _RX_TASK_NAME.fullmatch(batch) else ""


_RX_TASK_NAME = re.compile(r"\d{6}_\d{6}:\S+_crab_\S+")


def dag_file_of(ad: Mapping[str, Any]) -> str | None:
    """The DAG file a DAGMan job runs, as ``crabtui dag halt ID`` finds it: its ``-Dag``
    argument (condor_submit_dag's and ``crabtui dag submit``'s) in its Iwd, else the file its
    default batch name (``FILE+ID``) names; None if it runs none."""
    name = _dagman_option(ad, "-dag")
    if name is None:
        batch, plus, cluster = str(ad.get("JobBatchName") or "").rpartition("+")
        if not plus or cluster != str(ad.get("ClusterId")):
            return None
        name = batch
    return os.path.join(str(ad.get("Iwd") or ""), name)


def dagman_out_of(ad: Mapping[str, Any], dag_file: str) -> str:
    """Where the DAGMan job writes its dagman.out: ``_CONDOR_DAGMAN_LOG`` in its environment
    (condor_submit_dag's -outfile_dir on a pool) or the embedded DAGMan's -outfile_dir, relative to
    its Iwd, else beside the DAG."""
    from engine.schedd.local.submit import parse_environment, parse_raw_environment

    try:
        env = parse_raw_environment(str(ad.get("Environment") or "")) or parse_environment(str(ad.get("Env") or ""))
    except ValueError:  # not written by condor_submit
        env = {}
    iwd = str(ad.get("Iwd") or os.path.dirname(dag_file))
    if env.get("_CONDOR_DAGMAN_LOG"):
        return os.path.join(iwd, env["_CONDOR_DAGMAN_LOG"])
    outfile_dir = _dagman_option(ad, "-outfile_dir")  # the embedded DAGMan's command line
    return dagman_out_path(dag_file, outfile_dir and os.path.join(iwd, outfile_dir))


def _dagman_option(ad: Mapping[str, Any], flag: str) -> str | None:
    """The value of ``flag`` (in lower case; the command line may spell it in any) on the DAGMan
    job's command line, or None."""
    from engine.schedd.local.submit import parse_raw_arguments

    if ad.get("Arguments"):
        argv = parse_raw_arguments(ad["Arguments"])
    else:
        argv = str(ad.get("Args") or "").split()
    flags = [a.lower() for a in argv[:-1]]
    return argv[flags.index(flag) + 1] if flag in flags else None


def queued_by_node(jobs: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """A DAG's node jobs in the queue by DAGNodeName."""
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    for ad in jobs:
        if ad.get("DAGNodeName"):
            by_node.setdefault(str(ad["DAGNodeName"]), []).append(ad)
    return by_node


def job_word(ads: Sequence[Mapping[str, Any]]) -> str:
    """What a node's jobs in the queue are doing: held if one is, else running if one is, else idle."""
    statuses = {ad.get("JobStatus") for ad in ads}
    if JobStatus.HELD in statuses:
        return "held"
    if statuses & {JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT}:
        return "running"
    return "idle"


def summarize(ad: Mapping[str, Any], in_queue: bool, progress: DagProgress | None,
              node_jobs: Mapping[str, Sequence[Mapping[str, Any]]]) -> DagSummary | None:
    """A DAGMan job's ad as a :class:`DagSummary`, its counts from ``progress`` when dagman.out
    could be read (and is of this run), else from the ad; None if the job runs no DAG."""
    dag_file = dag_file_of(ad)
    if dag_file is None:
        return None
    job_status = int(ad.get("JobStatus") or JobStatus.IDLE)
    fresh = progress is not None and not progress.read_error and progress.started_at is not None and (
        progress.started_at >= float(ad.get("QDate") or 0) - 1)
    if fresh:
        nodes = _progress_counts(progress, node_jobs)
        source, as_of, dag_status = FROM_DAGMAN_OUT, progress.last_line_at, progress.dag_status
        total = sum(nodes.values())
    else:
        nodes = _ad_counts(ad, node_jobs, ended=not in_queue)
        source, dag_status = FROM_AD, None if ad.get("DAG_Status") is None else int(ad["DAG_Status"])
        as_of = float(ad["DAG_AdUpdateTime"]) if ad.get("DAG_AdUpdateTime") is not None else None
        total = int(ad.get("DAG_NodesTotal") or 0)
    try:
        halted, halt_unknown = dag_halt.is_halted(dag_file), not os.access(os.path.dirname(dag_file), os.R_OK)
    except OSError:
        halted, halt_unknown = False, True
    exit_code = None if ad.get("ExitCode") is None else int(ad["ExitCode"])
    ended_at = None
    if not in_queue:
        ended_at = float(ad.get("CompletionDate") or ad.get("EnteredCurrentStatus") or 0) or None
    return DagSummary(
        int(ad["ClusterId"]), dag_file, str(ad.get("Owner") or ""), job_status, dag_status,
        {c: n for c, n in nodes.items() if n}, total, source, as_of, float(ad.get("QDate") or 0),
        str(ad.get("HoldReason") or ""), halted and in_queue, halt_unknown, bool(ad.get("DAG_InRecovery")),
        str(ad.get("JobBatchName") or ""), progress.out_file if progress is not None else dag_file + ".dagman.out",
        in_queue, exit_code, ended_at,
        (unreadable(progress.out_file) or progress.read_error) if progress is not None and progress.read_error else "",
        bool(fresh and progress.removing and not progress.ended), bool(fresh and progress.aborting and not progress.ended),
        os.path.join(os.path.dirname(dag_file), progress.rescue_written) if fresh and progress.rescue_written else None,
        crab_task_of(ad, dag_file),
        _end_why(progress.aborting, progress.error) if fresh and progress.ended else
        "" if fresh or in_queue else AD_END_WHY.get(dag_status, ""),
        _requeued(progress) if fresh and in_queue else "")


AD_END_WHY = {3: "aborted by ABORT-DAG-ON", 5: "a cycle in the DAG"}
"""Why an ended DAG ended, by its ad's DAG_Status, when its dagman.out cannot say more."""


def _end_why(aborting: str, error: str) -> str:
    """Why DAGMan exited, as its dagman.out says beyond the exit code: the ABORT-DAG-ON that
    stopped it, or its own ERROR line (a failed node's list says nothing the nodes do not)."""
    if aborting:
        return f"aborted by ABORT-DAG-ON: {aborting}"
    if error and not error.startswith("the following job(s) failed"):
        return error
    return ""


def _requeued(progress: DagProgress) -> str:
    """``DAGMan exited 7 (aborted by ...)``: a run whose exit status (not 0-2, nor a stop's 3)
    kept DAGMan's job in the queue, this one having ended so or an earlier one."""
    if progress.ended and not 0 <= progress.exit_status <= EXIT_RESTART:
        status, aborting, error = progress.exit_status, progress.aborting, progress.error
    elif progress.requeued_after is not None:
        status, aborting, error = progress.requeued_after
    else:
        return ""
    why = _end_why(aborting, error)
    return f"DAGMan exited {status}" + (f" ({why})" if why else "")


def _progress_counts(progress: DagProgress, node_jobs: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, int]:
    counts = dict.fromkeys(DAG_COUNTS, 0)
    if progress.nodes:
        for node in progress.nodes:
            if node.state is NodeState.SUBMITTED:
                counts[queued_word(node, node_jobs.get(node.name, ()))] += 1
            else:
                counts[node.word] += 1
        return counts
    for word, n in progress.counts.items():  # DAGMan's own table: the DAG file could not be read
        if word == "queued":
            counts.update(_split_queued(n, node_jobs))
        else:
            counts[word] += n
    return counts


def queued_word(node: NodeProgress, jobs: Sequence[Mapping[str, Any]]) -> str:
    """A queued node's word: its jobs' in the queue; without them, what the events said."""
    if jobs:
        return job_word(jobs)
    return "held" if node.held else "running" if node.running else "idle"


def _ad_counts(ad: Mapping[str, Any], node_jobs: Mapping[str, Sequence[Mapping[str, Any]]],
               ended: bool = False) -> dict[str, int]:
    """DAGMan's counts in its ad; once its job has left the queue, the nodes its last update
    had queued or in a script failed, as its node status file says of them when it exits."""
    def get(name: str) -> int:
        return int(ad.get(f"DAG_Nodes{name.title()}") or 0)

    counts = {"done": get("done"), "failed": get("failed"), "futile": get("futile"), "pre": get("prerun"),
              "post": get("postrun"), "ready": get("ready"), "unready": get("unready")}
    if ended:
        counts["failed"] += counts.pop("pre") + counts.pop("post") + get("queued")
        return counts
    counts.update(_split_queued(get("queued"), node_jobs))
    return counts


def _split_queued(queued: int, node_jobs: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, int]:
    """``queued`` nodes split as their jobs in the queue are now (the rest idle)."""
    words = [job_word(ads) for ads in node_jobs.values()]
    held = min(words.count("held"), queued)
    running = min(words.count("running"), queued - held)
    return {"held": held, "running": running, "idle": queued - held - running}


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    return f"{seconds // 3600}h ago"


# -------------------------------------------------------------- the node table


class NodeTable:
    """Makes a DAG's node table: its nodes in run order, each SUBDAG node's own nodes under it
    (from its dagman.out) once it runs, and each node's jobs in the queue under it.  Keeps a
    watcher per sub-DAG, so each refresh reads only what their dagman.out gained."""

    def __init__(self) -> None:
        self._subdags: dict[tuple[str, int | None], DagWatcher] = {}

    def rows(self, progress: DagProgress, jobs_of: Callable[[int, str], Sequence[Mapping[str, Any]]], now: float,
             dag_id: int | None) -> dict[str, NodeRow]:
        """``jobs_of(dagman_id, dag_file)``: the jobs in the queue of the DAG (or sub-DAG) that
        DAGMan job runs."""
        rows: dict[str, NodeRow] = {}
        self._add(rows, progress, jobs_of, dag_id, "", 0, now)
        return rows

    def _add(self, rows: dict[str, NodeRow], progress: DagProgress, jobs_of: Callable, dag_id: int | None,
             prefix: str, depth: int, now: float) -> None:
        jobs = queued_by_node(jobs_of(dag_id, progress.dag_file)) if dag_id is not None else {}
        for node in progress.nodes:
            key = prefix + node.name
            queued = jobs.get(node.name, [])
            word = queued_word(node, queued) if node.state is NodeState.SUBMITTED else node.word
            why = node.why
            held = [ad for ad in queued if ad.get("JobStatus") == JobStatus.HELD]
            if held and not why:
                why = f"held: {held[0].get('HoldReason') or 'no reason given'}"
            rows[key] = NodeRow(key, depth, node.name, word, node, node.job or "", why=why, dag=dag_id)
            if node.kind != "subdag":  # a SUBDAG node's job is the sub-DAG's DAGMan: its nodes follow
                for ad in sorted(queued, key=lambda ad: (ad["ClusterId"], ad["ProcId"])):
                    job = f"{ad['ClusterId']}.{ad['ProcId']}"
                    status = int(ad.get("JobStatus") or JobStatus.IDLE)
                    rows[f"{key}#{job}"] = NodeRow(
                        f"{key}#{job}", depth + 1, job, JOB_WORDS.get(status, "idle"), None, job, run_time(ad, now),
                        str(ad.get("MATCH_GLIDEIN_CMSSite") or ""),
                        str(ad.get("HoldReason") or "") if status == JobStatus.HELD else "", dag_id)
            if node.kind == "subdag" and node.since is not None and depth < MAX_SUBDAG_DEPTH and node.subdag:
                sub_id = _cluster(node.job)
                watcher = self._subdags.get((node.subdag, sub_id))
                if watcher is None:
                    watcher = self._subdags[(node.subdag, sub_id)] = DagWatcher(node.subdag, dagman_id=sub_id)
                sub = watcher.read()
                if not sub.read_error and sub.started_at is not None and sub.started_at >= node.since - 1:
                    self._add(rows, sub, jobs_of, sub_id, key + "/", depth + 1, now)


JOB_WORDS = {JobStatus.IDLE: "idle", JobStatus.RUNNING: "running", JobStatus.REMOVED: "removed",
             JobStatus.COMPLETED: "completed", JobStatus.HELD: "held", JobStatus.TRANSFERRING_OUTPUT: "transferring",
             JobStatus.SUSPENDED: "suspended"}


def _cluster(job: str | None) -> int | None:
    if not job:
        return None
    try:
        return int(job.split(".")[0])
    except ValueError:
        return None


def run_time(ad: Mapping[str, Any], now: float) -> float:
    """A queued job's run time as condor_q shows it: earlier runs plus the current one."""
    seconds = float(ad.get("RemoteWallClockTime") or 0)
    if ad.get("JobStatus") == JobStatus.RUNNING and ad.get("JobCurrentStartDate"):
        seconds += max(0.0, now - ad["JobCurrentStartDate"])
    return seconds


def node_at(progress: DagProgress, path: str) -> NodeProgress | None:
    """The node of ``progress`` named by a node table key (``SD/S1``: S1 of sub-DAG SD)."""
    first, _, rest = path.partition("/")
    node = next((n for n in progress.nodes if n.name == first), None)
    if node is None or not rest:
        return node
    if not node.subdag:
        return None
    return node_at(DagWatcher(node.subdag, dagman_id=_cluster(node.job)).read(), rest)


class HaltError(Exception):
    """The halt file cannot be written from here; the message says so and what to do instead."""


def halt(dag_file: str, dag_id: int) -> bool:
    """Halt the DAG by its halt file (False: halted already); :class:`HaltError` if this machine
    cannot write it (a DAG on a pool whose directory is not visible here)."""
    try:
        return dag_halt.halt(dag_file)
    except OSError as e:
        raise HaltError(f"cannot write {dag_halt.halt_file(dag_file)} from this machine ({e.strerror or e}): "
                        f"halt DAG {dag_id} where its directory is, or hold its DAGMan job instead (h), "
                        "which also stops new nodes") from None


def unhalt(dag_file: str, dag_id: int) -> bool:
    """Resume a halted DAG (False: it was not halted); :class:`HaltError` as :func:`halt`."""
    try:
        return dag_halt.unhalt(dag_file)
    except OSError as e:
        raise HaltError(f"cannot remove {dag_halt.halt_file(dag_file)} from this machine ({e.strerror or e}): "
                        f"unhalt DAG {dag_id} where its directory is") from None


def unreadable(path: str) -> str:
    """Why a DAG's file cannot be read from this machine ("" if it can, or only does not exist
    yet): its directory is not here, or not readable (a DAG on a pool, seen from elsewhere)."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        return f"{path} cannot be read from this machine: its directory {directory} is not here"
    if not os.access(directory, os.R_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.R_OK)):
        return f"{path} cannot be read from this machine: permission denied"
    return ""


def node_snapshot(dag: int, path: str, node: NodeProgress | None, ad: Any, where: str, now: float) -> NodeSnapshot:
    """What a node's drilldown shows: its job's ClassAd and files (paths from the ad, relative
    to its Iwd), its PRE and POST scripts' output (their DEBUG files) and a sub-DAG's
    dagman.out, each file's end read now, or a note saying why there is none."""
    from engine.crab.client.monitor import read_tail

    files: dict[str, str] = {}
    notes: dict[str, str] = {}
    if ad is not None:
        iwd = str(ad.get("Iwd") or "")
        for tab, attr in (("stdout", "Out"), ("stderr", "Err"), ("log", "UserLog")):
            value = str(ad.get(attr) or "")
            if value and value != "/dev/null":
                files[tab] = os.path.join(iwd, value)
            else:
                notes[tab] = f"the job's submit file sets no {attr.lower().replace('userlog', 'log')} file"
    elif node is not None and node.kind in ("noop", "join"):
        for tab in ("stdout", "stderr", "log"):
            notes[tab] = "a NOOP node runs no job"
    else:
        for tab in ("stdout", "stderr", "log"):
            notes[tab] = "no job of this node has been submitted in this run" if node is not None else "no such node"
    for kind, tab in (("PRE", "pre"), ("POST", "post")):
        script = node.scripts.get(kind) if node is not None else None
        if script is None:
            notes[tab] = f"the node has no {kind} script"
        elif script.output:
            files[tab] = script.output
        else:
            notes[tab] = (f"DAGMan keeps no output of this {kind} script ({script.command}): "
                          f"write SCRIPT DEBUG FILE ALL {kind} ... in the DAG to keep it")
    if node is not None and node.subdag:
        files["dagman.out"] = node.subdag + ".dagman.out"
    else:
        notes["dagman.out"] = "the node runs no sub-DAG: its DAG's own dagman.out is on the DAG's Log tab"
    texts = {}
    for tab, file in files.items():
        why = unreadable(file)
        if why:
            texts[tab], notes[tab] = None, why
            continue
        if tab == "log":  # a log the submit file shares between nodes: this node's jobs' events only
            job = _cluster(node.job) if node is not None else None
            texts[tab] = node_events(file, node.name if node is not None else path,
                                     [job] if job is not None else [], after=dag)
        else:
            texts[tab] = read_tail(file)
        if texts[tab] is None:
            notes[tab] = f"{file} does not exist (yet)"
        elif not texts[tab]:
            notes[tab] = f"{file} holds no event of this node's job yet" if tab == "log" else f"{file} is empty"
    held = ad is not None and ad.get("JobStatus") == JobStatus.HELD
    word = node.word if node is not None else ""
    if node is not None and node.state is NodeState.SUBMITTED:
        word = queued_word(node, [ad] if ad is not None and where == "queue" else [])
    return NodeSnapshot(dag, path, node, ad.printOld() if ad is not None else "", where,
                        str(ad.get("HoldReason") or "") if held else "", files, texts, notes,
                        _cluster(node.job) if node is not None and node.subdag else None, now, word)


@dataclass(frozen=True)
class QueueRow:
    """A line of a ``condor_q -dag`` table: a DAGMan job or a node job in the queue, indented
    under the DAGMan job that submitted it."""

    key: str  # "cluster.proc"
    depth: int
    ad: Mapping[str, Any]

    @property
    def is_dagman(self) -> bool:
        return self.ad.get("JobUniverse") == SCHEDULER_UNIVERSE

    @property
    def name(self) -> str:
        ad = self.ad
        return str(ad.get("DAGNodeName") or (ad.get("JobBatchName") if self.is_dagman else "") or "")

    @property
    def word(self) -> str:
        return JOB_WORDS.get(int(self.ad.get("JobStatus") or JobStatus.IDLE), "idle")

    def describe(self) -> str:
        """A DAGMan job's node counts as its ad has them; a node job's hold reason or site."""
        ad = self.ad
        if self.is_dagman:
            if "DAG_NodesTotal" not in ad:
                return ""
            words = [f"{ad.get('DAG_NodesDone', 0)}/{ad['DAG_NodesTotal']} done"]
            for attr, what in (("DAG_NodesQueued", "queued"), ("DAG_NodesPrerun", "pre"), ("DAG_NodesPostrun", "post"),
                               ("DAG_NodesReady", "ready"), ("DAG_NodesFailed", "failed")):
                if ad.get(attr):
                    words.append(f"{ad[attr]} {what}")
            return ", ".join(words) + " (DAGMan's ad)"
        if ad.get("JobStatus") == JobStatus.HELD:
            return str(ad.get("HoldReason") or "held")
        return str(ad.get("MATCH_GLIDEIN_CMSSite") or "")


def queue_rows(queue: Sequence[Mapping[str, Any]]) -> dict[str, QueueRow]:
    """The jobs of :func:`crabtui.snapshots.dag_jobs` (DAGMan jobs first) as ``condor_q -dag``
    shows them: each job under the DAGMan job that submitted it."""
    by_parent: dict[Any, list[Mapping[str, Any]]] = {}
    ids = {ad["ClusterId"] for ad in queue if ad.get("JobUniverse") == SCHEDULER_UNIVERSE}
    for ad in queue:
        parent = ad.get("DAGManJobId")
        by_parent.setdefault(parent if parent in ids else None, []).append(ad)
    rows: dict[str, QueueRow] = {}

    def add(parent: Any, depth: int) -> None:
        for ad in by_parent.get(parent, ()):
            key = f"{ad['ClusterId']}.{ad['ProcId']}"
            if key in rows:
                continue
            rows[key] = QueueRow(key, depth, ad)
            if ad.get("JobUniverse") == SCHEDULER_UNIVERSE and depth < MAX_SUBDAG_DEPTH:
                add(ad["ClusterId"], depth + 1)

    add(None, 0)
    return rows
