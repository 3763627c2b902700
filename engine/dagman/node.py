"""The node state machine: a node's run-time state, and the moves between DAGMan's node states.

A node goes NOT_READY -> READY (its parents are done) -> PRERUN -> SUBMITTED -> POSTRUN ->
DONE or ERROR; a failed node with retries left goes back to READY, and the descendants of a
node that failed for good become FUTILE.  :class:`Census` keeps the count of nodes per state
and the busy ones, so that a DAGMan cycle costs what is busy, not what the DAG holds.  These
are DAGMan's ``Dag::ProcessJobProcEnd``, ``TerminateJob`` and ``RestartNode`` (dag.cpp).
"""

from __future__ import annotations

import enum
import os
import subprocess
from dataclasses import dataclass, field

from engine.dag import GraphNode, NodeKind, ScriptKind
from engine.dagman.config import Options
from engine.dagman.dagman_out import DagmanOut
from engine.dagman.jobstate_log import JobstateLog
from engine.dagman.script_debug import DebugCapture
from engine.dagman.node_status import (
    NodeState,
    after_retries_text,
    job_event_failed_text,
    job_proc_failed_text,
    SUBMIT_FAILED_TEXT,
)

JOB_ABORTED = -1002
SUBMIT_FAILED = -1001
JOB_SKIPPED = -1004


class DagFatal(Exception):
    """What DAGMan's ``main_shutdown_rescue`` ends: a fatal warning under DAGMAN_USE_STRICT, a
    bad event (exit 1 with a rescue DAG).  The reason is in dagman.out already."""


class DagStatus(enum.IntEnum):
    """DAG_Status / $DAG_STATUS / the metrics' DagStatus (dagman_utils.h)."""

    OK = 0
    ERROR = 1
    NODE_FAILED = 2
    ABORT = 3
    RM = 4
    CYCLE = 5
    HALTED = 6


@dataclass
class Script:
    kind: ScriptKind
    popen: subprocess.Popen
    debug: DebugCapture | None  # its output for its DEBUG file, until it is reaped
    started: float


@dataclass
class Node:
    """A node's run-time state; ``graph`` is its declaration, lifted."""

    graph: GraphNode
    census: Census = field(repr=False, compare=False)
    _status: NodeState = NodeState.NOT_READY
    waiting: int = 0  # parents not yet done
    retries: int = 0
    retval: int | None = None
    pre_return: int | None = None
    cluster: int | None = None
    procs: int = 0
    procs_done: int = 0
    procs_held: int = 0
    procs_idle: int = 0
    procs_seen: int = 0  # procs whose SUBMIT event has been read: what DAGMan's own counts start from
    exit_codes: dict[int, int | None] = field(default_factory=dict)  # proc -> return value, None if aborted
    script: Script | None = None
    defer_until: float | None = None
    error: str = ""
    seq: int = 0  # jobstate log sequence number of the current attempt
    last_event_time: int | None = None  # of the node's latest job event, for script lines
    submit_tries: int = 0  # failed submit attempts of the current try
    restarting: bool = False  # started again by its RETRY (DAGMan's StartNode isRetry)
    hold_on_submit: bool = False  # DAGMAN_PUT_FAILED_JOBS_ON_HOLD: its jobs are submitted on hold
    job_skipped: bool = False  # its PRE failed and DAGMAN_ALWAYS_RUN_POST runs its POST: $RETURN is -1004
    # $SUCCESS, as 23.9.6 keeps it (Job::isSuccessful): false only once a proc failed while others
    # were still queued, or the PRE failed; a node whose last proc failed still says True.
    successful: bool = True
    first_failure: tuple[int, int | None] | None = None  # (proc, value) of the attempt's first failed proc

    def __post_init__(self) -> None:
        self.census.arrived(self)

    @property
    def name(self) -> str:
        return self.graph.name

    def directory(self, dag_dir: str) -> str:
        """Where DAGMan runs the node's scripts and reads its submit file: the DAG's directory,
        or its DIR (a splice's DIR included) taken from there."""
        return os.path.join(dag_dir, self.graph.dir) if self.graph.dir else dag_dir

    @property
    def status(self) -> NodeState:
        return self._status

    @status.setter
    def status(self, new: NodeState) -> None:
        self.census.moved(self, self._status, new)
        self._status = new


BUSY = (NodeState.PRERUN, NodeState.SUBMITTED, NodeState.POSTRUN)


class Census:
    """Nodes per state, and the busy ones (running a script, waiting for one, or with jobs in
    the queue), kept up to date as nodes change state: a DAGMan cycle then costs what is busy,
    not what the DAG holds.  SERVICE nodes are busy but not counted: DAGMan keeps them out of
    its node list, so its tables, totals, throttles and script macros leave them out."""

    def __init__(self) -> None:
        self.counts = {state: 0 for state in NodeState}
        self.total = 0
        self.busy: dict[str, Node] = {}
        self.changes = 0

    def arrived(self, node: Node) -> None:
        if node.graph.kind is not NodeKind.SERVICE:
            self.total += 1
            self.counts[node.status] += 1

    def moved(self, node: Node, old: NodeState, new: NodeState) -> None:
        self.changes += 1
        if node.graph.kind is not NodeKind.SERVICE:
            self.counts[old] -= 1
            self.counts[new] += 1
        if new in BUSY:
            self.busy[node.name] = node
        elif old in BUSY:
            del self.busy[node.name]


class NodeStates:
    """The DagMan's node state machine: nodes made ready, succeeded, failed, retried, futile.

    Uses the rest of the DagMan for what follows a move: ``queue_post`` (the script queue),
    ``shutdown_rescue``, ``stop_scripts`` and ``start_final_on_shutdown`` (an ABORT-DAG-ON), and
    ``halted``."""

    census: Census
    options: Options
    nodes: dict[str, Node]
    ready: list[Node]
    final: Node | None
    final_started: bool
    by_cluster: dict[int, Node]
    ended_clusters: dict[int, Node]
    dag_status: DagStatus
    aborting: tuple[int, Node] | None
    removed: bool
    removal_started: bool
    recovering: bool
    out: DagmanOut
    jobstate: JobstateLog | None

    def count(self, status: NodeState) -> int:
        return self.census.counts[status]

    @property
    def failed_count(self) -> int:
        return self.count(NodeState.ERROR)

    def bootstrap(self) -> None:
        """Mark DONE nodes, count each node's unfinished parents, and queue the ready ones."""
        for node in self.nodes.values():
            node.waiting = len(node.graph.parents)
            if node.graph.done:
                node.status = NodeState.DONE
        for node in self.nodes.values():
            if node.status is NodeState.DONE:
                for child in node.graph.children:
                    self.nodes[child].waiting -= 1
        first = {NodeKind.SERVICE: 0, NodeKind.PROVISIONER: 1}  # submitted first, in this order (seen on the pool)
        for node in sorted(self.nodes.values(), key=lambda n: first.get(n.graph.kind, 2)):
            if node.status is NodeState.NOT_READY and node.waiting == 0 and node is not self.final:
                node.status = NodeState.READY
                self.ready.append(node)

    def unblock(self) -> None:
        """After an unhalt: the nodes whose parents finished while the DAG was halted."""
        for node in self.nodes.values():
            if node.status is NodeState.NOT_READY and node.waiting == 0 and node is not self.final:
                node.status = NodeState.READY
                self.ready.append(node)

    def node_succeeded(self, node: Node, source: str = "job") -> None:
        """``source``: what decided, for ABORT-DAG-ON's line ("job", "PRE script", "POST script")."""
        node.status = NodeState.DONE
        halted = self.halted()
        for name in node.graph.children:  # before ABORT-DAG-ON: an abort on success leaves them ready
            child = self.nodes[name]
            child.waiting -= 1
            if child.waiting == 0 and child.status is NodeState.NOT_READY and not halted:
                child.status = NodeState.READY  # while halted DAGMan leaves it unready; unhalting readies it
                self.ready.append(child)
        if self.check_abort(node, 0, source):
            self.start_final_on_shutdown()

    def node_failed(self, node: Node, job_failed: bool = False, source: str = "job",
                    spent_error: str | None = None) -> None:
        """``job_failed``: the node's job failed and no POST script ran (DAGMAN_PUT_FAILED_JOBS_ON_HOLD);
        ``source`` as for :meth:`node_succeeded`; ``spent_error``: the text that replaces the node's
        once no retry is left (a failed POST script's, ``ProcessPostTermEvent``), but not when
        UNLESS-EXIT or a running FINAL node stops retries that were left (``RestartNode``)."""
        node.status = NodeState.ERROR
        declared_retry = node.graph.retry
        if self.check_abort(node, node.retval, source):  # ABORT-DAG-ON beats RETRY: the retries end here
            node.error = spent_error or node.error
            if declared_retry:
                node.error = after_retries_text(node.error, node.retries)
            self.futilize(node)
            self.start_final_on_shutdown()
            return
        aborted = node.graph.unless_exit is not None and node.retval == node.graph.unless_exit
        retry = node.retries < declared_retry and not aborted
        if (not retry and job_failed and self.options.put_failed_jobs_on_hold
                and node.graph.node.kind is not NodeKind.SERVICE):
            # ProcessJobProcEnd: one more try, submitted on hold for the user to release
            node.graph.retry = declared_retry = declared_retry + 1
            node.hold_on_submit = retry = True
        # Dag::RestartNode ends retries that are left: UNLESS-EXIT, or a running FINAL node (a DAG
        # removed or aborted reads its jobs' aborts while FINAL runs; without FINAL it has exited)
        stopped = node.retries < declared_retry and (aborted or self.final_started and node is not self.final)
        if stopped and (self.final_started or not self.removed):
            self.out.aborting_retries(node.name, node.retval, self.final_started)
        if retry and not self.removed and not self.final_started and node is not self.final:
            node.retries += 1
            self.out.retrying_node(node.name, node.retries, declared_retry)
            if self.jobstate:
                self.jobstate.restart_node(node.name)
            node.status = NodeState.READY
            node.error = ""
            node.retval = None
            node.pre_return = None
            node.submit_tries = 0
            node.job_skipped = False
            node.restarting = True
            self.ready.append(node)
            return
        if self.dag_status is DagStatus.OK:
            self.dag_status = DagStatus.NODE_FAILED
        if stopped:
            return  # the try's text stays, and its descendants are not made futile (seen on the pool)
        node.error = spent_error or node.error
        if declared_retry:
            node.error = after_retries_text(node.error, node.retries)
        if not aborted:
            self.futilize(node)

    def futilize(self, node: Node) -> None:
        """Descendants of a failed node will never run."""
        pending = list(node.graph.children)
        while pending:
            child = self.nodes[pending.pop()]
            if child.status in (NodeState.NOT_READY, NodeState.READY):
                child.status = NodeState.FUTILE
                pending.extend(child.graph.children)

    def check_abort(self, node: Node, value: int | None, source: str) -> bool:
        """``Dag::CheckForDagAbort``: ABORT-DAG-ON's value from ``source`` ("job", "PRE script",
        "POST script") ends the DAG at once (main_shutdown_rescue: no rescue DAG for RETURN 0)."""
        abort = node.graph.node.abort_dag_on
        if abort is None or value != abort.exit_value or self.aborting is not None:
            return False
        self.aborting = (abort.return_value if abort.return_value is not None else value, node)
        self.dag_status = DagStatus.OK if abort.return_value == 0 else DagStatus.ABORT
        self.out.aborting_dag_on_abort_value(source)
        self.shutdown_rescue(rescue=self.aborting[0] != 0)
        return True

    def job_finished(self, node: Node, retval: int) -> None:
        """All procs left the queue (or submission failed): POST decides, or the job's result does."""
        node.retval = retval
        node.procs_idle = node.procs_held = 0  # a proc removed while idle or held left the queue too
        if self.jobstate and retval != SUBMIT_FAILED:
            self.jobstate.job_success_or_failure(node.name, retval, node.last_event_time)
        if self.by_cluster.pop(node.cluster, None) is not None and node.cluster > 0:
            self.ended_clusters[node.cluster] = node
        # A DAG being removed runs no more POST scripts unless it has a FINAL node: DAGMan 23.9
        # exits as soon as it has removed its jobs, or keeps reading events while FINAL runs.
        if ScriptKind.POST in node.graph.node.scripts and not (self.removal_started and self.final is None):
            if self.recovering:  # its result may follow in the log; recover() runs it if not
                node.status = NodeState.POSTRUN
                return
            self.queue_post(node)
        elif retval == 0:
            self.node_succeeded(node)
        else:
            if retval == SUBMIT_FAILED:
                node.error = SUBMIT_FAILED_TEXT
            elif retval == JOB_ABORTED:
                proc = node.first_failure[0] if node.first_failure else 0
                node.error = job_event_failed_text("JOB_ABORTED", node.cluster, proc)
            else:
                proc = node.first_failure[0] if node.first_failure else 0
                node.error = (job_proc_failed_text(node.cluster, proc, status=retval) if retval >= 0
                              else job_proc_failed_text(node.cluster, proc, signal_number=-retval))
            self.node_failed(node, job_failed=retval != SUBMIT_FAILED)

