"""The output files, and the DAGMan job's ad: what DAGMan tells the world about the run.

``<dag>.dagman.out``'s node table, the NODE_STATUS_FILE, the rescue DAG, ``<dag>.metrics``,
the JOBSTATE_LOG's job tags, and the DAG_* attributes of the DAGMan job's own ad, which
condor_q shows.  Each file's format lives in its own module; this part decides when each is
written and with what (DAGMan's ``Dag::DumpNodeStatus``, ``Dag::WriteRescue``,
``DagmanMetrics`` and ``DagmanClassad::Update``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime

import classad2

from engine.dag import NodeKind, ScriptKind
from engine.dag.graph import Graph
from engine.dag.model import NodeStatusFile
from engine.dag.rescue import FullRescue, RescueNode, next_rescue_path, save_file_path, write_rescue
from engine.dagman.config import Options
from engine.dagman.dagman_out import QUIET, DagmanOut, Deferrals, NodeDump
from engine.dagman.dot import format_dot, write_dot
from engine.dagman.jobstate_log import job_tag
from engine.dagman.metrics import DagMetrics, GraphMetrics, write_metrics
from engine.dagman.node import Census, DagStatus, Node
from engine.dagman.node_status import DagOutcome, NodeInfo, NodeState, write_node_status
from engine.schedd.api import Schedd, ScheddError


class OutputFiles:
    """The DagMan's reports: its output files and its own job ad, each updated when it should be.

    Uses ``count`` (the node state machine) for the counts it reports."""

    graph: Graph
    schedd: Schedd
    options: Options
    clock: Callable[[], float]
    dag_file: str
    dag_dir: str
    nodes: dict[str, Node]
    census: Census
    services: list[Node]
    busy: dict[str, Node]
    final: Node | None
    dag_status: DagStatus
    recovering: bool
    rescue_path: str | None
    status_file: NodeStatusFile | None
    status_path: str | None
    status_written_at: float | None
    status_outdated: bool
    out: DagmanOut
    out_status: tuple | None
    ad_written: tuple[float, tuple] | None
    batch_name: str
    batch_id: str
    parent_dagman_id: int | None
    jobs_submitted: int
    jobs_completed: int
    max_jobs_deferred: int
    max_idle_deferred: int
    category_deferred: int
    scripts_deferred: dict[ScriptKind, int]

    def set_own_attributes(self) -> None:
        """The DAGMan job's batch name (``<dag>+<cluster>`` unless the user gave one) and batch id
        (a sub-DAG's is its top DAG's), which its node jobs take too, so that condor_q groups
        them and ``q -dag ID`` finds them all.  SET_JOB_ATTR is in its submit description.
        A sub-DAG's DAGMan job is a node job of its parent, whose cluster its ``DAGManJobId``
        names: the metrics file's ``parent_dagman_id``."""
        if not self.options.dagman_id:
            return
        try:
            ads = self.schedd.query(f"ClusterId == {self.options.dagman_id}",
                                    ["JobBatchName", "JobBatchId", "AcctGroup", "AcctGroupUser", "DAGNodeName",
                                     "DAGManJobId"])
            attrs = {}
            if ads and isinstance(ads[0].get("DAGManJobId"), int):
                self.parent_dagman_id = ads[0]["DAGManJobId"]
            if ads and "JobBatchName" in ads[0]:
                self.batch_name = str(ads[0]["JobBatchName"])
            elif ads:
                attrs["JobBatchName"] = classad2.quote(self.batch_name)
            if ads and "JobBatchId" in ads[0]:
                self.batch_id = str(ads[0]["JobBatchId"])
            elif ads:
                attrs["JobBatchId"] = classad2.quote(self.batch_id)
            if ads and attrs:
                self.schedd.edit(self.options.dagman_id, attrs)
            if ads:  # as 23.9.6's DAGMan lists them, as it starts
                self.out.line(f"Workflow batch-id: <{self.batch_id}>")
                self.out.line(f"Workflow batch-name: <{self.batch_name}>")
                self.out.line(f"Workflow accounting_group: <{ads[0].get('AcctGroup', '')}>")
                self.out.line(f"Workflow accounting_group_user: <{ads[0].get('AcctGroupUser', '')}>")
                if "DAGNodeName" not in ads[0]:  # a top-level DAG's DAGMan is no node of another DAG
                    self.out.line("Warning: failed to get attribute DAGNodeName")
        except ScheddError as e:
            self.out.line(f"WARNING: could not set attributes of the DAGMan job {self.options.dagman_id}: {e}")

    def update_ad(self, force: bool = False) -> None:
        """The DAGMan job's own ad: DAG_Status and node and job counts, which ``q`` and
        ``dag status`` show; at most every DAGMAN_QUEUE_UPDATE_INTERVAL unless forced, and only
        after a change."""
        if not self.options.dagman_id:
            return
        counts = self.node_counts()
        queued = sum(n.procs - n.procs_done for n in self.busy.values()
                     if n.status is NodeState.SUBMITTED and n.cluster and n.cluster > 0)
        idle = sum(n.procs_idle for n in self.busy.values() if n.cluster and n.cluster > 0)
        held = sum(n.procs_held for n in self.busy.values())
        values = {
            "DAG_Status": int(self.dag_status), "DAG_InRecovery": int(self.recovering),
            "DAG_NodesTotal": self.census.total, "DAG_NodesDone": counts[NodeState.DONE],
            "DAG_NodesPrerun": counts[NodeState.PRERUN], "DAG_NodesQueued": counts[NodeState.SUBMITTED],
            "DAG_NodesPostrun": counts[NodeState.POSTRUN], "DAG_NodesReady": counts[NodeState.READY],
            "DAG_NodesFailed": counts[NodeState.ERROR], "DAG_NodesUnready": counts[NodeState.NOT_READY],
            "DAG_NodesFutile": counts[NodeState.FUTILE], "DAG_JobsSubmitted": self.jobs_submitted,
            "DAG_JobsIdle": idle, "DAG_JobsHeld": held, "DAG_JobsRunning": max(0, queued - idle - held),
            "DAG_JobsCompleted": self.jobs_completed,
            "DAGMan_MaxJobs": self.options.max_jobs, "DAGMan_MaxIdle": self.options.max_idle,
            "DAGMan_MaxPreScripts": self.options.max_pre, "DAGMan_MaxPostScripts": self.options.max_post,
        }
        now = self.clock()
        snapshot = tuple(values.values())
        if not force and self.ad_written is not None:
            last, before = self.ad_written
            if snapshot == before or now - last < self.options.queue_update_interval:
                return
        values["DAG_AdUpdateTime"] = int(now)
        try:
            self.schedd.edit(self.options.dagman_id, {k: str(v) for k, v in values.items()})
        except ScheddError:
            return  # the DAGMan job has left the queue (removed): nothing to show it in
        self.ad_written = (now, snapshot)

    def node_counts(self) -> dict[NodeState, int]:
        """The node counts of the table and the DAGMan job's ad: the READY nodes a provisioner
        holds back are not in DAGMan's ready queue, so it counts them un-ready."""
        counts = {state: self.count(state) for state in NodeState}
        waiting = self.waiting_for_provisioner()
        counts[NodeState.READY] -= waiting
        counts[NodeState.NOT_READY] += waiting
        return counts

    def print_status(self, force: bool = False) -> None:
        """dagman.out's node table, printed when the counts changed, as DAGMan prints it after events."""
        counts = self.node_counts()
        held = sum(n.procs_held for n in self.busy.values())
        snapshot = (tuple(counts.values()), held, int(self.dag_status))
        if snapshot == self.out_status and not force:
            return
        self.out_status = snapshot
        self.out.status(dag_status=int(self.dag_status), total=self.census.total, done=counts[NodeState.DONE],
                        pre=counts[NodeState.PRERUN], queued=counts[NodeState.SUBMITTED],
                        post=counts[NodeState.POSTRUN], ready=counts[NodeState.READY],
                        unready=counts[NodeState.NOT_READY], failed=counts[NodeState.ERROR],
                        futile=counts[NodeState.FUTILE], held_procs=held, deferrals=self.deferrals())
        if self.graph.dag.dot is not None and self.graph.dag.dot.update:
            self.dump_dot()

    def dump_dot(self) -> None:
        """The DOT file: once the DAG is parsed, and with UPDATE after each changed node table.
        SERVICE nodes are left out, as DAGMan keeps them out of its node list.  A node marked
        DONE (in the DAG or its rescue DAG) is Done from the first dump: DAGMan marks it as it parses."""
        dot = self.graph.dag.dot
        if dot is None:
            return
        nodes = [(n.name, NodeState.DONE if n.graph.done else n.status, n.graph.children)
                 for n in self.nodes.values() if n.graph.kind is not NodeKind.SERVICE]
        try:
            write_dot(os.path.join(self.dag_dir, dot.file),
                      format_dot(nodes, self.clock(), dot.include, self.dag_dir), dot.overwrite is not False)
        except OSError as e:
            self.out.line(f"Can't create dot file '{dot.file}.temp': {e.strerror}")

    def deferrals(self) -> Deferrals:
        return Deferrals(max_jobs_deferred=self.max_jobs_deferred, max_jobs=self.options.max_jobs,
                         max_idle_deferred=self.max_idle_deferred, max_idle=self.options.max_idle,
                         category_deferred=self.category_deferred,
                         pre_deferred=self.scripts_deferred[ScriptKind.PRE],
                         post_deferred=self.scripts_deferred[ScriptKind.POST],
                         max_pre=self.options.max_pre, max_post=self.options.max_post, max_hold=self.options.max_hold)

    def update_status_file(self, outcome: DagOutcome, force: bool = False, closing: bool = False) -> None:
        """NODE_STATUS_FILE, as DAGMan's DumpNodeStatus decides: only once an event has been read
        since the last dump (unless ALWAYS-UPDATE), at most every ``min_update`` seconds except for
        the closing dump of a DAG that finished running or aborted; ``force`` (hold, removal)
        skips both rules.  So a change no event reports (a PRE script that failed, a fatal error)
        can leave the last dump standing."""
        if self.status_path is None:
            return
        now = self.clock()
        if not force:
            if not self.status_outdated and not self.status_file.always_update:
                return
            too_soon = (self.status_file.min_update > 0 and self.status_written_at is not None
                        and now - self.status_written_at < self.status_file.min_update)
            if too_soon and not closing:
                return
        # DAGMan counts a node's procs from the events it has read: a job whose SUBMIT event is
        # not read yet has no queued or idle proc ("not_idle").
        nodes = [NodeInfo(n.name, n.status, retry_count=n.retries,
                          procs_queued=max(0, n.procs_seen - n.procs_done) if n.status is NodeState.SUBMITTED else 0,
                          procs_held=n.procs_held, procs_idle=(idle := max(0, n.procs_idle - (n.procs - n.procs_seen))),
                          idle=bool(idle or n.procs_held), error_text=n.error, pre_done=n.graph.node.done)
                 for n in self.nodes.values() if n.graph.kind is not NodeKind.SERVICE]
        write_node_status(self.status_path, dag_files=[os.path.basename(self.dag_file)], nodes=nodes,
                          outcome=outcome, timestamp=int(now), min_update_time=self.status_file.min_update,
                          unqueued_ready=self.waiting_for_provisioner())
        self.status_written_at = now
        self.status_outdated = False

    def write_rescue(self) -> None:
        """One rescue file per run: the FINAL node's failure rewrites the same file; none at all
        with DAGMAN_MAX_RESCUE_NUM = 0."""
        if not self.options.max_rescue_num:
            self.out.line("No rescue DAG written because DAGMAN_MAX_RESCUE_NUM is 0", QUIET)
            return
        if self.rescue_path is None:
            self.rescue_path = next_rescue_path(self.dag_file, self.options.max_rescue_num)
        self.out.writing_rescue_dag(self.rescue_path)
        write_rescue(self.rescue_path, os.path.basename(self.dag_file), self._rescue_nodes(),
                     datetime.fromtimestamp(self.clock()).astimezone(),
                     reset_retries=self.options.reset_retries_upon_rescue,
                     full=None if self.options.write_partial_rescue else FullRescue(self.graph, self.options.config_file))

    def write_save_point(self, node: Node) -> None:
        """SAVE_POINT_FILE: as the node starts (not when it is retried), the DAG's progress so far
        in the partial rescue format (``Dag::WriteSavePoint``); a previous file becomes ``.old``."""
        save_file = node.graph.node.save_point_file
        if save_file is None:
            return
        path = save_file_path(self.dag_file, save_file)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.exists(path):
                os.replace(path, path + ".old")
        except OSError as e:
            self.out.line(f"Error: Failed to create save file dir ({os.path.dirname(path)}): "
                          f"Errno {e.errno} ({e.strerror})")
            return
        self.out.writing_save_file(save_file if os.path.basename(save_file) != save_file else path)
        write_rescue(path, os.path.basename(self.dag_file), self._rescue_nodes(),
                     datetime.fromtimestamp(self.clock()).astimezone(), save_point=node.name)

    def _rescue_nodes(self) -> list[RescueNode]:
        """DAGMan's node list, which SERVICE nodes are not in."""
        return [RescueNode(n.name, done=n.status is NodeState.DONE, failed=n.status is NodeState.ERROR,
                           final=n is self.final, retry=n.graph.retry, unless_exit=n.graph.unless_exit,
                           retries=n.retries, return_value=n.retval)
                for n in self.nodes.values() if n.graph.kind is not NodeKind.SERVICE]

    @staticmethod
    def dump(node: Node, node_id: int) -> NodeDump:
        """What dagman.out says about a node (DAGMan's Job::Dump)."""
        declared = node.graph.node
        scripts = declared.scripts
        return NodeDump(
            node.name, node_id, node.status, retval=-1 if node.retval is None else node.retval,
            error_text=node.error, submit_file=declared.submit or "", noop=declared.noop,
            pre_script=scripts[ScriptKind.PRE].command if ScriptKind.PRE in scripts else None,
            post_script=scripts[ScriptKind.POST].command if ScriptKind.POST in scripts else None,
            hold_script=scripts[ScriptKind.HOLD].command if ScriptKind.HOLD in scripts else None,
            retry_max=node.graph.retry,
            condor_id=(node.cluster, 0, 0) if node.cluster is not None and node.cluster > 0 else None,
            parents=node.graph.parents, children=node.graph.children,
            waiting=node.waiting > 0)

    def write_metrics(self, started: float, code: int) -> None:
        """``<dag>.metrics``: DAGMan 23.9.6 counts every DONE node as succeeded, nodes DONE from a
        rescue DAG or by the DAG file's DONE included, and a node still queued when an abort or
        removal ended the run in neither count."""
        def counts(subdag: bool) -> tuple[int, int, int]:
            nodes = [n for n in self.nodes.values()
                     if (n.graph.kind is NodeKind.SUBDAG) == subdag and n.graph.kind is not NodeKind.SERVICE]
            done = sum(1 for n in nodes if n.status is NodeState.DONE)
            return len(nodes), sum(1 for n in nodes if n.status is NodeState.ERROR), done

        jobs, jobs_failed, jobs_succeeded = counts(False)
        # SERVICE nodes are not among the jobs, but 23.9.6 counts one the DAG's end removed as
        # succeeded, and one whose removal by a failing DAG it read (while FINAL ran) as failed
        for node in self.services:
            jobs_succeeded += node.status is NodeState.DONE
            jobs_failed += node.status is NodeState.ERROR
        dag_jobs, dag_failed, dag_succeeded = counts(True)
        graph = None
        if self.options.report_graph_metrics:  # DAGMan measures no shape of a DAG with a cycle
            height, width = (0, 0) if self.dag_status is DagStatus.CYCLE else self.graph.dfs_shape()
            graph = GraphMetrics(height, width, self.graph.edge_count, len(self.graph.nodes))
        write_metrics(self.dag_file + ".metrics", DagMetrics(
            start_time=started, end_time=self.clock(), exitcode=code, dag_status=int(self.dag_status),
            dagman_id=self.options.dagman_id or None, parent_dagman_id=self.parent_dagman_id,
            rescue_dag_number=self.options.rescue_dag_number,
            jobs=jobs, jobs_failed=jobs_failed, jobs_succeeded=jobs_succeeded,
            dag_jobs=dag_jobs, dag_jobs_failed=dag_failed, dag_jobs_succeeded=dag_succeeded, graph=graph))

    def _job_tags(self) -> dict[str, str]:
        """Each node's JOBSTATE_LOG tag, read from its submit file as DAGMan reads it."""
        tags = {}
        for node in self.nodes.values():
            declared = node.graph.node
            text = declared.inline_submit or self.graph.dag.submit_descriptions.get(declared.submit)
            if text is None and not declared.noop and declared.kind is not NodeKind.SUBDAG:
                cwd = node.directory(self.dag_dir)
                try:
                    with open(os.path.join(cwd, declared.submit), encoding="utf-8") as f:
                        text = f.read()
                except OSError:
                    text = None
            tags[node.name] = job_tag(text) if text else "-"
        return tags

