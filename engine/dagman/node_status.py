"""The NODE_STATUS_FILE, byte for byte as DAGMan 23.9.6 writes it.

DAGMan prints the ads with ``fprintf``, not a ClassAd unparser, so the layout (two-space
indentation, ``/* ... */`` comments, one ad per ``[ ]`` block) is fixed; string values go
through the ClassAd unparser, which ``classad2.quote`` is.  Source:
src/condor_dagman/dag.cpp, ``Dag::DumpNodeStatus`` and ``Dag::EscapeClassadString`` at v23.9.6;
node state names from src/condor_dagman/job.cpp ``Job::status_t_names``.

The caller gives each node's own state; this module applies DAGMan's reporting rules: the
DAG-level counts, the DagStatus code and note, and at the end of a run the nodes still in
PRERUN, SUBMITTED or POSTRUN reported as ERROR ("Was STATUS_SUBMITTED") and counted failed.
The ``error_text`` helpers build the StatusDetails DAGMan gives a failed node.
"""

from __future__ import annotations

import enum
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass

import classad2

from engine.atomic import write_atomically


class NodeState(enum.IntEnum):
    """DAGMan's node states (``Job::status_t``); the values are what the file prints."""

    NOT_READY = 0
    READY = 1
    PRERUN = 2
    SUBMITTED = 3
    POSTRUN = 4
    DONE = 5
    ERROR = 6
    FUTILE = 7

    @property
    def status_name(self) -> str:
        """``STATUS_DONE`` and so on, as the comments print them (trimmed)."""
        return f"STATUS_{self.name}"


class DagOutcome(enum.Enum):
    """Which branch of ``DumpNodeStatus`` describes the DAG: (DagStatus, note, final dump).

    The last element says whether this is DAGMan's closing dump, which marks unfinished
    nodes as failed (``markNodesError``).  A cycle ends the run without that marking, and
    NextUpdate is 0 whenever DAGMan has finished running or was removed.
    """

    RUNNING = (NodeState.SUBMITTED, "", False)
    HELD = (NodeState.SUBMITTED, "held", False)  # condor_hold: graceful shutdown
    REMOVED_FINAL_RUNNING = (NodeState.SUBMITTED, "removed", False)
    ABORTED_FINAL_RUNNING = (NodeState.SUBMITTED, "aborted", False)  # ABORT-DAG-ON
    SUCCESS = (NodeState.DONE, "success", True)
    FAILED = (NodeState.ERROR, "failed", True)  # node failure or halt
    ABORTED = (NodeState.ERROR, "aborted", True)
    REMOVED = (NodeState.ERROR, "removed", True)
    CYCLE = (NodeState.ERROR, "cycle", False)

    @property
    def last_update(self) -> bool:
        """NextUpdate 0 "none": DAGMan has finished running, or was removed."""
        return self not in (DagOutcome.RUNNING, DagOutcome.HELD, DagOutcome.ABORTED_FINAL_RUNNING)


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """One node as the runner knows it.

    ``status`` is READY only for a node that could be submitted now; a node waiting for its
    parents is NOT_READY here, as DAGMan shows it.  ``idle`` is whether the node's first job
    proc is idle or held (DAGMan's "idle"/"not_idle" detail); ``procs_idle`` counts its idle
    procs that are not held, which is what DAGMan's JobProcsIdle adds up.
    """

    name: str
    status: NodeState
    retry_count: int = 0
    procs_queued: int = 0
    procs_held: int = 0
    procs_idle: int = 0
    idle: bool = False
    error_text: str = ""
    pre_done: bool = False  # "JOB name file DONE"; a DONE line (rescue DAGs) does not count


def _ctime(t: int) -> str:
    return time.ctime(t)  # C's ctime() without the newline: local time, "Fri May  9 17:22:18 2014"


def _node_ad(node: NodeInfo, closing: bool) -> str:
    status, note = node.status, ""
    queued, held = node.procs_queued, node.procs_held
    if status == NodeState.SUBMITTED:
        if closing:
            status, note, queued, held = NodeState.ERROR, "Was STATUS_SUBMITTED", 0, 0
        else:
            note = "idle" if node.idle else "not_idle"
    elif status == NodeState.ERROR:
        note = node.error_text
    elif status in (NodeState.PRERUN, NodeState.POSTRUN):
        if closing:  # DAGMan keeps these nodes' proc counts
            note = f"Was {status.status_name}"
            status = NodeState.ERROR
    elif status == NodeState.FUTILE:
        note = "Had an ancestor node fail"
    elif status == NodeState.DONE and node.pre_done:
        note = "User defined as DONE"
    return (
        "[\n"
        '  Type = "NodeStatus";\n'
        f"  Node = {classad2.quote(node.name)};\n"
        f"  NodeStatus = {int(status)}; /* {classad2.quote(status.status_name)} */\n"
        f"  StatusDetails = {classad2.quote(note)};\n"
        f"  RetryCount = {node.retry_count};\n"
        f"  JobProcsQueued = {queued};\n"
        f"  JobProcsHeld = {held};\n"
        "]\n"
    )


def format_node_status(
    *,
    dag_files: Sequence[str],
    nodes: Sequence[NodeInfo],
    outcome: DagOutcome,
    timestamp: int,
    end_time: int | None = None,
    min_update_time: int = 60,
    unqueued_ready: int = 0,
) -> str:
    """The whole file.  ``nodes`` in DAGMan's order (FINAL included, SERVICE nodes left out).

    ``timestamp`` and ``end_time`` are DAGMan's two ``time()`` calls, before and after the
    node ads; NextUpdate is ``end_time + min_update_time`` (NODE_STATUS_FILE's interval).
    ``unqueued_ready`` READY nodes are outside DAGMan's ready queue (a provisioner holds them
    back): their ads say STATUS_READY, but NodesReady counts the queue, so they count un-ready.
    """
    end = timestamp if end_time is None else end_time
    status, note, closing = outcome.value
    count = {state: 0 for state in NodeState}
    for node in nodes:
        count[node.status] += 1
    count[NodeState.READY] -= unqueued_ready
    count[NodeState.NOT_READY] += unqueued_ready
    pre, queued, post = count[NodeState.PRERUN], count[NodeState.SUBMITTED], count[NodeState.POSTRUN]
    failed = count[NodeState.ERROR]
    held = sum(n.procs_held for n in nodes)
    idle = sum(n.procs_idle for n in nodes)
    if closing:
        failed += pre + queued + post
        pre = queued = post = held = idle = 0
    files = ",\n".join(f"    {classad2.quote(f)}" for f in dag_files)
    if outcome.last_update:
        next_update, next_text = 0, "none"
    else:
        next_update = end + min_update_time
        next_text = _ctime(next_update)
    out = [
        "[\n"
        '  Type = "DagStatus";\n'
        "  DagFiles = {\n"
        f"{files}\n"
        "  };\n"
        f"  Timestamp = {timestamp}; /* {classad2.quote(_ctime(timestamp))} */\n"
        f"  DagStatus = {int(status)}; /* {classad2.quote(f'{status.status_name} ({note})')} */\n"
        f"  NodesTotal = {len(nodes)};\n"
        f"  NodesDone = {count[NodeState.DONE]};\n"
        f"  NodesPre = {pre};\n"
        f"  NodesQueued = {queued};\n"
        f"  NodesPost = {post};\n"
        f"  NodesReady = {count[NodeState.READY]};\n"
        f"  NodesUnready = {count[NodeState.NOT_READY]};\n"
        f"  NodesFutile = {count[NodeState.FUTILE]};\n"
        f"  NodesFailed = {failed};\n"
        f"  JobProcsHeld = {held};\n"
        f"  JobProcsIdle = {idle}; /* includes held */\n"
        "]\n"
    ]
    out += (_node_ad(node, closing) for node in nodes)
    out.append(
        "[\n"
        '  Type = "StatusEnd";\n'
        f"  EndTime = {end}; /* {classad2.quote(_ctime(end))} */\n"
        f"  NextUpdate = {next_update}; /* {classad2.quote(next_text)} */\n"
        "]\n"
    )
    return "".join(out)


def write_node_status(path: str | os.PathLike[str], **report) -> None:
    """Write through ``<path>.tmp`` and rename, as DAGMan does, so readers see whole files.

    Takes the keyword arguments of :func:`format_node_status`.
    """
    path = os.fspath(path)
    write_atomically(path, format_node_status(**report))


def read_node_status(path: str | os.PathLike[str]) -> list[classad2.ClassAd]:
    """The file's ads in order: DagStatus, one NodeStatus per node, StatusEnd."""
    with open(path, encoding="utf-8") as f:
        return list(classad2.parseAds(f.read(), classad2.ParserType.New))


# StatusDetails of a failed node: DAGMan's ``error_text`` (src/condor_dagman/dag.cpp at v23.9.6).
# Return values below -MAX_SIGNAL stand for DAGMan's own errors (dag.h).
MAX_SIGNAL = 64
DAG_ERROR_CONDOR_SUBMIT_FAILED = -1001
DAG_ERROR_CONDOR_JOB_ABORTED = -1002
DAG_ERROR_JOB_SKIPPED = -1004  # the POST script of a node whose PRE script failed
SUBMIT_FAILED_TEXT = "Job submit failed"  # ``ProcessFailedSubmit`` after the last attempt


def job_proc_failed_text(cluster: int, proc: int, *, status: int | None = None,
                         signal_number: int | None = None, subproc: int = 0) -> str:
    """``ProcessTerminatedEvent``: the first failed proc of the node's job."""
    how = f"status {status}" if signal_number is None else f"signal {signal_number}"
    return f"Job proc ({cluster}.{proc}.{subproc}) failed with {how}"


def job_event_failed_text(event_name: str, cluster: int, proc: int, subproc: int = 0) -> str:
    """``ProcessAbortEvent`` and friends: a job removed or otherwise lost (``JOB_ABORTED``...)."""
    return f"HTCondor reported ULOG_{event_name} event for job proc ({cluster}.{proc}.{subproc})"


def pre_script_failed_text(*, status: int | None = None, signal_number: int | None = None) -> str:
    """``PreScriptReaper``; a signal is named as ``DaemonCore::GetExceptionString`` names it."""
    if signal_number is None:
        return f"PRE Script failed with status {status}"
    return f"PRE Script died on signal {signal_number} ({signal.strsignal(signal_number)})"


def post_script_failed_text(job_retval: int, *, status: int | None = None,
                            signal_number: int | None = None) -> str:
    """``ProcessPostTermEvent`` once no retry is left.

    ``job_retval`` is the node's value before the POST ran: the job's exit code, minus the
    signal that killed it, or one of the ``DAG_ERROR_*`` codes.  As in DAGMan, a job that
    exited 0 is reported as "DAGMAN error 0".
    """
    if job_retval > 0:
        head = f"Job exited with status {job_retval} and "
    elif -MAX_SIGNAL <= job_retval < 0:
        head = f"Job died on signal {-job_retval} and "
    else:
        head = f"Job failed due to DAGMAN error {job_retval} and "
    if signal_number is None:
        return head + f"POST Script failed with status {status}"
    return head + f"POST Script died on signal {signal_number}"


def post_script_try_text(*, status: int | None = None, signal_number: int | None = None) -> str:
    """``ProcessPostTermEvent`` before the retries are looked at: what stays when UNLESS-EXIT
    ends them (seen on the pool: "POST script failed with status 5")."""
    return f"POST script failed with status {status}" if signal_number is None else f"POST script died on signal {signal_number}"


def after_retries_text(text: str, retries: int) -> str:
    """What DAGMan appends to a failed node's text when it had RETRY."""
    return f"{text} (after {retries} node retries)"

