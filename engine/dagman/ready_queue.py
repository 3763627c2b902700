"""The ready queue and its throttles, and the submission of a ready node's job.

A node whose parents are done starts its PRE script at once (held back by -maxpre only); its
job then waits in the ready queue, in priority order, until -maxjobs, -maxidle, its
CATEGORY's MAXJOBS and the delay after a failed submit let it go.  DAGMan's
``Dag::StartNode`` and ``SubmitReadyJobs`` (dag.cpp), ``ThrottleByCategory`` and
``condor_submit`` with DAGMan's macros (dagman_submit.cpp).  A NOOP node's job never reaches
the schedd: its submit and terminate events are written to the nodes log, as DAGMan fakes them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import datetime

import htcondor2

from engine.dag import NodeKind, ScriptKind, VarsPlacement
from engine.dag.graph import Graph
from engine.dagman.config import Options
from engine.dagman.dagman_out import DagmanOut
from engine.dagman.events import INT_MAX, LoggedEvent
from engine.dagman.jobstate_log import JobstateLog
from engine.dagman.node import BUSY, SUBMIT_FAILED, DagStatus, Node
from engine.dagman.node_status import SUBMIT_FAILED_TEXT, NodeState
from engine.dagman.submit_dag import DagSubmitOptions, format_condor_sub, write_condor_sub
from engine.schedd.api import Schedd, ScheddError
from engine.schedd.local.userlog import JobTerminatedEvent, SubmitEvent, UserLog

# The events a node job logs to the nodes log (its DAGManNodesMask, as condor_dagman 23.9.6 sets it):
# submit, execute, executable error, evicted, terminated, shadow exception, generic, aborted,
# (un)suspended, held, released, POST script, grid submits, reconnect failed, cluster submit/remove.
NODES_LOG_EVENTS = "0,1,2,4,5,7,8,9,10,11,12,13,16,17,24,27,35,36"


class ReadyQueue:
    """The DagMan's ready queue: which ready nodes start, in what order, and their submission.

    Uses the rest of the DagMan for what a start leads to: ``run_script`` and
    ``running_scripts`` (the script queue), ``handle_event`` (a NOOP node's events),
    ``job_finished`` (a submit that failed for good), ``count``, ``failed_count`` and ``halted``."""

    graph: Graph
    schedd: Schedd
    options: Options
    clock: Callable[[], float]
    dag_file: str
    dag_dir: str
    nodes_log: UserLog
    nodes_log_path: str
    busy: dict[str, Node]
    ready: list[Node]
    prioritized: bool
    final: Node | None
    final_started: bool
    by_cluster: dict[int, Node]
    dag_status: DagStatus
    batch_name: str
    batch_id: str
    next_submit_time: float
    jobs_submitted: int
    noop_counter: int
    seq: int
    own_tail: tuple[int, int] | None
    out: DagmanOut
    jobstate: JobstateLog | None

    def priority(self, node: Node) -> int:
        """A node's effective priority: its own plus its enclosing SUBDAG nodes' (DAGMan's rule)."""
        return node.graph.node.priority + self.options.priority

    def start_ready(self) -> None:
        """Start the ready nodes: a node's PRE script starts as soon as the node is ready, held
        back by -maxpre only (DAGMan's StartNode); its job then joins the ready queue, which
        -maxjobs, -maxidle and CATEGORY throttles hold back, in priority order."""
        if self.halted():
            return
        queued = self.count(NodeState.SUBMITTED)
        pre = self.running_scripts(ScriptKind.PRE)
        idle = sum(n.procs_idle for n in self.busy.values())
        categories = self._category_counts()
        still = []
        while self.ready:  # nodes made ready meanwhile (a NOOP node finishes at once) come in the next batch
            batch, self.ready = self.ready, []
            jobs = []
            for node in batch:
                if node.status is not NodeState.READY:
                    continue
                if node.pre_return is None and ScriptKind.PRE in node.graph.node.scripts:
                    if self.options.max_pre and pre >= self.options.max_pre:
                        node.status = NodeState.PRERUN  # waits in the script queue (reap_scripts)
                        node.defer_until = self.clock()
                    else:
                        pre += 1
                        self.run_script(node, ScriptKind.PRE)
                else:
                    jobs.append(node)
            if self.prioritized:
                jobs.sort(key=self.priority, reverse=True)
            for node in jobs:
                if node.status is not NodeState.READY:
                    continue
                if self.throttled(node, queued, idle, categories):
                    still.append(node)
                    continue
                self.submit(node)
                if node.status in BUSY and node.graph.category:
                    categories[node.graph.category] = categories.get(node.graph.category, 0) + 1
                if node.status is NodeState.SUBMITTED:
                    queued += 1
                    idle += node.procs_idle
        if self.next_submit_time:  # a node whose submit failed is tried again before the others
            still.sort(key=lambda n: n.submit_tries == 0)
        self.ready = still

    def throttled(self, node: Node, queued: int, idle: int, categories: dict[str, int]) -> bool:
        """Whether -maxjobs, -maxidle, the node's CATEGORY or a recent failed submit hold its job back."""
        if self.next_submit_time and self.clock() < self.next_submit_time:
            return True
        if self.options.max_jobs and queued >= self.options.max_jobs:
            return True
        if self.options.max_idle and idle >= self.options.max_idle:
            return True
        category = node.graph.category
        limit = self.graph.max_jobs.get(category) if category else None
        return limit is not None and categories.get(category, 0) >= limit

    def _category_counts(self) -> dict[str, int]:
        """Nodes with jobs in the queue, per category (a node running its PRE or POST script
        holds no job, so it does not count against MAXJOBS)."""
        counts: dict[str, int] = {}
        for node in self.busy.values():
            category = node.graph.category
            if category and node.status is NodeState.SUBMITTED:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def start_final(self) -> None:
        self.final_started = True
        node = self.final
        node.status = NodeState.READY
        if ScriptKind.PRE in node.graph.node.scripts:
            self.run_script(node, ScriptKind.PRE)
        else:
            self.submit(node)

    def submit(self, node: Node) -> None:
        """Submit the node's job (or fake it for NOOP), as DAGMan's submit step does."""
        self.seq += 1
        node.seq = self.seq
        node.exit_codes = {}
        node.procs = node.procs_done = node.procs_held = node.procs_idle = node.procs_seen = 0
        if self.jobstate:
            self.jobstate.number(node.name)
        if node.graph.node.noop:
            self.fake_noop(node)
            return
        self.out.submitting_node(node.name)
        try:
            text, path, cwd = self.submit_description(node)
            result = self.schedd.submit(text, submit_file=path, cwd=cwd)
        except (OSError, ScheddError) as e:
            self.submit_failed(node, e)
            return
        node.submit_tries = 0
        self.out.assigned_id(result.cluster, result.first_proc)
        self.jobs_submitted += result.num_procs
        node.status = NodeState.SUBMITTED
        node.cluster = result.cluster
        node.procs = result.num_procs
        node.procs_idle = result.num_procs
        self.by_cluster[result.cluster] = node

    def submit_failed(self, node: Node, error: Exception) -> None:
        """DAGMan's ProcessFailedSubmit: each failed attempt is logged, and no job is submitted for
        1, 2, 4... seconds (after the node's 1st, 2nd, 3rd... failure), the node going first then;
        after DAGMAN_MAX_SUBMIT_ATTEMPTS its job has failed with -1001 and its RETRY is used up
        (its POST script, if any, still runs)."""
        node.submit_tries += 1
        node.cluster = None
        self.out.line(f"ERROR: submit attempt {node.submit_tries} of node {node.name} failed: {error}")
        if self.jobstate:
            self.jobstate.submit_failure(node.name, node.last_event_time)
        if node.submit_tries < self.options.max_submit_attempts:
            self.next_submit_time = self.clock() + 2 ** (node.submit_tries - 1)
            self.ready.append(node)  # still READY: submitted again once the delay is over
            return
        node.submit_tries = 0
        node.retries = max(node.retries, node.graph.retry)
        node.error = SUBMIT_FAILED_TEXT
        self.job_finished(node, SUBMIT_FAILED)

    _noop_time: tuple[int, datetime, str] | None = None  # the second NOOP events were last logged in

    def fake_noop(self, node: Node) -> None:
        """A NOOP node's job never reaches the schedd: DAGMan logs a fake submit and exit.

        Both events are handled as they are written, so a chain of NOOP nodes runs in one
        cycle; read back later they are ignored (the node is done), and when nothing else was
        written meanwhile the reader skips them (:meth:`read_events`).  Recovery replays them."""
        self.noop_counter += 1
        whole = int(self.clock())  # events are logged to the second: one datetime per second will do
        if self._noop_time is None or self._noop_time[0] != whole:
            now = datetime.fromtimestamp(whole).astimezone()
            self._noop_time = (whole, now, now.strftime("%Y-%m-%dT%H:%M:%S"))
        _, now, logged_time = self._noop_time
        ids = {"cluster": 0, "proc": INT_MAX, "subproc": self.noop_counter, "time": now}
        node.status = NodeState.SUBMITTED
        node.cluster = -self.noop_counter  # NOOP ids are negative internally, never a real cluster
        node.procs = 1
        node.procs_idle = 0  # never waits for a slot
        self.by_cluster[node.cluster] = node
        written = self.nodes_log.write(SubmitEvent(**ids, submit_host="<dummy-submit-for-noop-job>",
                                                   log_notes=f"DAG Node: {node.name}"),
                                       JobTerminatedEvent(**ids, return_value=0))
        # Where our bytes began if no one wrote after them; if someone did, the check below fails safe.
        after = self.nodes_log.size()
        before = after - written
        if self.own_tail is None:
            self.own_tail = (before, after)
        elif self.own_tail[1] == before:
            self.own_tail = (self.own_tail[0], after)
        else:  # another writer's event lies between ours: read everything
            self.own_tail = (-1, after)
        logged = {"Subproc": self.noop_counter, "EventTime": logged_time}
        T = htcondor2.JobEventType
        self.handle_event(LoggedEvent(T.SUBMIT, logged))
        self.handle_event(LoggedEvent(T.JOB_TERMINATED, {**logged, "ReturnValue": 0}))

    def submit_description(self, node: Node) -> tuple[str, str, str]:
        """The node's submit description with DAGMan's VARS and macros, and where it came from."""
        declared = node.graph.node
        cwd = os.path.join(self.dag_dir, node.graph.dir) if node.graph.dir else self.dag_dir
        if declared.kind is NodeKind.SUBDAG:  # a nested DAGMan, with its own files and rescue DAGs
            path = os.path.join(cwd, declared.submit) + ".condor.sub"
            sub_dag = os.path.join(cwd, declared.submit)
            options = DagSubmitOptions(priority=self.priority(node))  # its nodes add it to their own
            text = write_condor_sub(sub_dag, format_condor_sub(sub_dag, options, self.options.state_dir))
        elif declared.inline_submit is not None:
            text, path = declared.inline_submit, f"{self.dag_file} (node {node.name})"
        elif declared.submit in self.graph.dag.submit_descriptions:
            text, path = self.graph.dag.submit_descriptions[declared.submit], f"{self.dag_file} ({declared.submit})"
        else:
            from engine.schedd.local.submit import read_submit_file  # htcondor2 loads slowly: when needed

            path = os.path.join(cwd, declared.submit)
            text = read_submit_file(path)  # SubmitError (a bad file) fails the submit, as condor_submit's would
        prepend = {"JOB": node.name, "RETRY": str(node.retries), "DAG_STATUS": str(int(self.dag_status)),
                   "FAILED_COUNT": str(self.failed_count)}
        parents = ",".join(node.graph.parents)
        if parents:
            prepend["DAG_PARENT_NAMES"] = parents
        append = {}
        for var in declared.vars:
            target = append if var.placement is VarsPlacement.APPEND else prepend
            target[var.name] = var.value
        if self.priority(node):
            prepend["priority"] = str(self.priority(node))
        append.update({
            "dag_node_name": node.name,
            "submit_event_notes": f"DAG Node: {node.name}",
            "dagman_log": self.nodes_log_path,
            "My.DAGManJobId": str(self.options.dagman_id),
            "My.DAGManNodesLog": f'"{self.nodes_log_path}"',
            "My.DAGManNodesMask": f'"{NODES_LOG_EVENTS}"',
            "My.DAGParentNodeNames": f'"{parents}"',
            "My.JobBatchId": f'"{self.batch_id}"',
        })
        if "batch_name" not in text.lower():
            append["batch_name"] = self.batch_name
        return with_macros(text, prepend, append), path, cwd


def with_macros(text: str, prepend: dict[str, str], append: dict[str, str]) -> str:
    """Submit text with macros set before it is read and, like ``condor_submit -a``, before its queue."""
    head = "".join(f"{k} = {v}\n" for k, v in prepend.items())
    tail = "".join(f"{k} = {v}\n" for k, v in append.items())
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if re.match(r"\s*queue\b", line, re.IGNORECASE):
            return head + "".join(lines[:i]) + tail + "".join(lines[i:])
    return head + text + ("\n" if text and not text.endswith("\n") else "") + tail + "queue\n"

