"""The ready queue and its throttles, and the submission of a ready node's job.

A node whose parents are done starts its PRE script at once (held back by -maxpre only); its
job then waits in DAGMan's ready queue (highest priority first, then the order the knobs
DAGMAN_SUBMIT_DEPTH_FIRST, RETRY_NODE_FIRST and RETRY_SUBMIT_FIRST give) until -maxjobs,
-maxidle, its CATEGORY's MAXJOBS, DAGMAN_MAX_SUBMITS_PER_INTERVAL and the delay after a failed
submit let it go.  DAGMan's ``Dag::StartNode`` and ``SubmitReadyJobs`` (dag.cpp),
``ThrottleByCategory`` and the submit with DAGMan's macros (dagman_submit.cpp ``init_vars``),
passed as values.  A NOOP node's job never reaches the schedd: its submit and terminate events
are written to the nodes log, as DAGMan fakes them.
"""

from __future__ import annotations

import heapq
import os
import time
from collections.abc import Callable, Iterator
from datetime import datetime

import htcondor2

from engine.dag import NodeKind, ScriptKind, VarsPlacement
from engine.dag.graph import Graph
from engine.dagman.config import Options
from engine.dagman.dagman_out import QUIET, DagmanOut
from engine.dagman.events import INT_MAX, LoggedEvent
from engine.dagman.jobstate_log import JobstateLog
from engine.dagman.node import SUBMIT_FAILED, DagStatus, Node
from engine.dagman.node_status import SUBMIT_FAILED_TEXT, NodeState
from engine.dagman.submit_dag import (DagSubmitOptions, format_condor_sub, recursive_submit_command,
                                     rename_rescue_dags, write_condor_sub)
from engine.schedd.api import JobAction, Schedd, ScheddError
from engine.schedd.local.userlog import JobTerminatedEvent, SubmitEvent, UserLog

# The events a node job logs to the nodes log (its DAGManNodesMask, as condor_dagman 23.9.6 sets it):
# submit, execute, executable error, evicted, terminated, shadow exception, generic, aborted,
# (un)suspended, held, released, POST script, grid submits, reconnect failed, cluster submit/remove.
NODES_LOG_EVENTS = "0,1,2,4,5,7,8,9,10,11,12,13,16,17,24,27,35,36"
PROHIBITED_MULTI_JOBS = "Submit generated multiple job procs; disallowed by DAGMAN_PROHIBIT_MULTI_JOBS setting"


class ReadyQ:
    """DAGMan's ready queue (dag_priority_q.h): the highest effective priority first; among
    equals, nodes put in front (``prepend``) go last-in first-out, ahead of the nodes queued
    behind (``append``), which go first-in first-out."""

    __slots__ = ("_heap", "_generation")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Node]] = []
        self._generation = 0

    def append(self, node: Node, priority: int) -> None:
        self._generation += 1
        heapq.heappush(self._heap, (-priority, self._generation, node))

    def prepend(self, node: Node, priority: int) -> None:
        self._generation += 1
        heapq.heappush(self._heap, (-priority, -self._generation, node))

    def pop(self) -> Node:
        return heapq.heappop(self._heap)[2]

    def clear(self) -> None:
        self._heap.clear()

    def __len__(self) -> int:
        return len(self._heap)

    def __iter__(self) -> Iterator[Node]:
        return (entry[2] for entry in self._heap)


class ReadyQueue:
    """The DagMan's ready queue: which ready nodes start, in what order, and their submission.

    Uses the rest of the DagMan for what a start leads to: ``run_script`` and
    ``running_scripts`` (the script queue), ``handle_event`` (a NOOP node's events),
    ``job_finished`` (a submit that failed for good), ``write_save_point`` (the output files),
    ``count``, ``failed_count`` and ``halted``."""

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
    final: Node | None
    final_started: bool
    by_cluster: dict[int, Node]
    dag_status: DagStatus
    batch_name: str
    queue: ReadyQ
    batch_id: str
    next_submit_time: float
    next_submit_delay: int
    submit_window_end: float
    window_submits: int
    max_jobs_deferred: int
    max_idle_deferred: int
    category_deferred: int
    scripts_deferred: dict[ScriptKind, int]
    status_outdated: bool
    jobs_submitted: int
    noop_counter: int
    seq: int
    own_tail: tuple[int, int] | None
    out: DagmanOut
    jobstate: JobstateLog | None

    def priority(self, node: Node) -> int:
        """A node's effective priority: its own plus the DAG's (-priority, DAGMAN_DEFAULT_PRIORITY;
        a sub-DAG's DAGMan gets its SUBDAG node's), as ``Dag::SetNodePriorities`` adds them.  It
        adds them over DAGMan's node list, which SERVICE nodes are not in, and PRIORITY is refused on
        one: they have none (seen on the pool: with -priority 7 a service job has JobPrio 0 and is
        submitted after the nodes)."""
        if node.graph.kind is NodeKind.SERVICE:
            return 0
        return node.graph.node.priority + self.options.priority

    def start_ready(self) -> None:
        """Start the nodes whose parents are done (``Dag::StartNode``), then submit from the ready
        queue (``Dag::SubmitReadyJobs``).  A NOOP node finishes as it is submitted: the children it
        readies start in a next round of the same call, as they would in DAGMan's next cycle."""
        if self.final_started:  # nothing but FINAL starts then (Dag::StartFinalNode)
            self.ready.clear()
        elif self.halted():
            return
        held = self.held_for_provisioner()
        try:
            self._start_ready()
        finally:
            self.ready[:0] = held

    def held_for_provisioner(self) -> list[Node]:
        """Until the PROVISIONER node's job sets ``ProvisionerState = 2`` in its own ad, only it,
        the SERVICE nodes and FINAL start: the others are taken out of the ready list for this
        cycle.  DAGMan asks the schedd for that attribute once a scan interval; a provisioner
        whose node ends without having set it leaves them unstarted for good (seen on the pool:
        the DAG then ends as one that cannot go on).  The ended job's last ad is read once, as
        an embedded job may set the state and exit between two of DAGMan's looks."""
        if not self.provisioned:
            node = self.provisioner
            now = self.clock()
            over = node.status in (NodeState.DONE, NodeState.ERROR, NodeState.FUTILE)
            if (node.cluster is not None and node.cluster > 0 and not self.provisioner_final_read
                    and (over or now >= self.provisioner_checked + 1)):
                self.provisioner_checked = now
                self.provisioner_final_read = over
                constraint = f"ClusterId == {node.cluster}"
                try:
                    ads = (self.schedd.history(constraint, ["ProvisionerState"]) if over
                           else self.schedd.query(constraint, ["ProvisionerState"]))
                except ScheddError:
                    ads = []
                self.provisioned = any(ad.get("ProvisionerState") == 2 for ad in ads)
        if self.provisioned:
            return []
        held = [n for n in self.ready if not self.starts_unprovisioned(n)]
        self.ready = [n for n in self.ready if self.starts_unprovisioned(n)]
        return held

    def starts_unprovisioned(self, node: Node) -> bool:
        return node.graph.kind in (NodeKind.PROVISIONER, NodeKind.SERVICE) or node is self.final

    def waiting_for_provisioner(self) -> int:
        """How many ready nodes wait for the provisioner."""
        if self.provisioned:
            return 0
        return sum(1 for n in self.nodes.values()
                   if n.status is NodeState.READY and not self.starts_unprovisioned(n))

    def stranded(self) -> bool:
        """Whether the provisioner's node ended without its job saying it was ready: the nodes
        it held back will never start."""
        return not self.provisioned and self.provisioner_final_read

    def _start_ready(self) -> None:
        pre = self.running_scripts(ScriptKind.PRE)
        while True:
            while self.ready:
                batch, self.ready = self.ready, []
                for node in batch:
                    if node.status is NodeState.READY:
                        pre = self.start_node(node, pre)
            if not self.queue:
                return
            self.submit_ready()
            if not self.ready:
                return

    def start_node(self, node: Node, pre: int) -> int:
        """``Dag::StartNode``: a node's PRE script starts as soon as the node is ready, held back
        by -maxpre only; without one (or once it succeeded) the node joins the ready queue.
        Returns the number of PRE scripts running."""
        restart, node.restarting = node.restarting, False
        if not restart:
            self.write_save_point(node)
        if node.pre_return is None and ScriptKind.PRE in node.graph.node.scripts:
            if self.options.max_pre and pre >= self.options.max_pre:
                node.status = NodeState.PRERUN  # waits in the script queue (reap_scripts)
                node.defer_until = self.clock()
                self.scripts_deferred[ScriptKind.PRE] += 1
                self.scripts_waiting[ScriptKind.PRE].append(node)
                return pre
            self.run_script(node, ScriptKind.PRE)
            return pre + 1
        self.enqueue(node, restart and self.options.retry_node_first or self.options.submit_depth_first)
        return pre

    def enqueue(self, node: Node, first: bool) -> None:
        """Into the ready queue: in front of the nodes of its priority (``prepend``) or behind them."""
        (self.queue.prepend if first else self.queue.append)(node, self.priority(node))

    def submit_ready(self) -> None:
        """``Dag::SubmitReadyJobs``: submit from the ready queue until it is empty or -maxjobs,
        -maxidle, DAGMAN_MAX_SUBMITS_PER_INTERVAL or a failed submit stops the cycle; a node held
        back by its CATEGORY's MAXJOBS goes back in front of the queue.  A NOOP node's submit
        costs nothing and reads no clock: a chain of them is one long cycle.

        Unless :attr:`Options.paced_submits`, DAGMAN_MAX_SUBMITS_PER_INTERVAL counts the submits
        of this cycle, not of the scan interval: the local schedd has queued and logged each job
        by the time its submit returns, and a cycle that submitted is followed at once."""
        options = self.options
        if self.next_submit_time and self.clock() < self.next_submit_time:
            return
        if not options.paced_submits:
            self.window_submits = 0
        max_jobs, max_idle = options.max_jobs, options.max_idle
        queued = self.count(NodeState.SUBMITTED) if max_jobs else 0
        idle = sum(n.procs_idle for n in self.busy.values()) if max_idle and self.busy else 0
        limits = self.graph.max_jobs
        categories = self._category_counts() if limits else {}
        deferred = []
        queue = self.queue
        # DAGMan counts the nodes each submit cycle holds back, a cycle a scan interval: ours come
        # every few milliseconds, so they are counted at most once a scan interval
        counts = self.clock() >= self.deferrals_counted + options.scan_interval
        held_back = 0
        started = None  # when this cycle's first real submit began
        submitted = 0  # NOOP nodes included, as DAGMan counts them
        while queue:
            if max_jobs and queued >= max_jobs:
                self.max_jobs_deferred += len(queue) if counts else 0
                held_back += len(queue)
                break
            if max_idle and idle >= max_idle:
                self.max_idle_deferred += len(queue) if counts else 0
                held_back += len(queue)
                break
            node = queue.pop()
            if node.status is not NodeState.READY:  # queued twice (recovery replays a retry), submitted once
                continue
            category = node.graph.category
            if category is not None and limits:
                limit = limits.get(category)
                if limit is not None and categories.get(category, 0) >= limit:
                    deferred.append(node)
                    self.category_deferred += 1 if counts else 0
                    held_back += 1
                    continue
            if not node.graph.node.noop and not self.may_submit(node, started):
                break
            if started is None:
                started = self.clock()
            self.submit(node)
            if node.status is NodeState.READY:  # the submit failed: the cycle ends here
                break
            if node.graph.node.noop or node.status is NodeState.SUBMITTED:  # not a submit failure
                submitted += 1
            if node.status is NodeState.SUBMITTED and node.cluster is not None and node.cluster > 0:
                self.window_submits += 1
                queued += 1
                idle += node.procs_idle
                if category is not None and limits:
                    categories[category] = categories.get(category, 0) + 1
        for node in deferred:
            self.enqueue(node, True)
        if counts and held_back:
            self.deferrals_counted = self.clock()
        if submitted:
            self.out.just_submitted(submitted)

    def may_submit(self, node: Node, started: float | None) -> bool:
        """Whether a job may be submitted now: not past DAGMAN_MAX_SUBMITS_PER_INTERVAL in this
        scan interval (or cycle, see :meth:`submit_ready`), and (unless DAGMAN_AGGRESSIVE_SUBMIT)
        not in a cycle that has already outlasted the scan interval.  If not, the node goes back
        in front of the queue."""
        options = self.options
        now = self.clock()
        if now >= self.submit_window_end:
            self.submit_window_end, self.window_submits = now + options.scan_interval, 0
        if started is not None and not options.aggressive_submit and int(now - started) > options.scan_interval:
            self.out.submit_cycle_too_long(int(now - started), options.scan_interval)
        elif self.window_submits < options.max_submits_per_interval:
            return True
        self.enqueue(node, True)
        return False

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
        """``Dag::StartFinalNode``: the ready queue is emptied, and the FINAL node starts."""
        self.final_started = True
        self.out.starting_final_node()
        for node in [*self.ready, *self.queue]:  # DAGMan sets what its ready queue held back to unready
            # (not the nodes a provisioner held back: they never were in it, and stay ready)
            if node.status is NodeState.READY and (self.provisioned or self.starts_unprovisioned(node)):
                node.status = NodeState.NOT_READY
        self.ready = []
        self.queue.clear()
        node = self.final
        node.status = NodeState.READY
        self.write_save_point(node)
        if ScriptKind.PRE in node.graph.node.scripts:
            self.run_script(node, ScriptKind.PRE)
        else:
            self.submit(node)

    def submit(self, node: Node) -> None:
        """Submit the node's job (or fake it for NOOP), as DAGMan's ``SubmitNodeJob`` does."""
        self.seq += 1
        node.seq = self.seq
        node.exit_codes = {}
        node.procs = node.procs_done = node.procs_held = node.procs_idle = node.procs_seen = 0
        node.successful, node.first_failure = True, None
        if self.jobstate:
            self.jobstate.number(node.name)
        if self.options.submit_delay:
            time.sleep(self.options.submit_delay)
        declared = node.graph.node
        if declared.noop:
            self.fake_noop(node)
            return
        cwd = node.directory(self.dag_dir)
        if declared.kind is NodeKind.SUBDAG and self.options.generate_subdag_submits:
            self.out.line(f"Recursive submit command: <{recursive_submit_command(declared.submit, self.subdag_options(node))}>")
            if not os.path.isfile(os.path.join(cwd, declared.submit)):
                self.out.submit_dag_failed(declared.submit, node.name)  # condor_submit_dag -no_submit failed
                self.submit_failed(node)
                return
        self.out.submitting_node(node.name)
        try:
            text, path, prepend, append = self.submit_description(node, cwd)
        except OSError as e:  # the submit file cannot be read
            self.out.cannot_open_submit_file(os.path.basename(e.filename or declared.submit), e)
            self.submit_failed(node)
            return
        except ScheddError as e:  # a submit file that is not one (not UTF-8 text, too large)
            self.out.line(f"ERROR: {e}", QUIET)
            self.submit_failed(node)
            return
        if declared.kind is NodeKind.SUBDAG:  # DAGMan submits the file condor_submit_dag -no_submit wrote
            self.out.submitting_from(node.name, declared.submit + ".condor.sub")
        else:
            self.out.submitting_from(node.name, declared.submit if declared.inline_submit is None
                                     and declared.submit not in self.graph.dag.submit_descriptions else None)
        from engine.schedd.local.submit import MAX_MATERIALIZE, SubmitDescription, late_materialization_lines

        # DAGMan 23.9.6's direct submit queues all the jobs at once: no factory, whatever the file asks
        late = late_materialization_lines(SubmitDescription(text, path, cwd, prepend))
        for key, value in late:
            if key.lower() in MAX_MATERIALIZE:
                self.out.line(f"Submit warning: Submit:0:the line '{key} = {value}' was unused by DAGMAN. "
                              "Is it a typo?")
        append = {**append, **{key: "" for key, _ in late}}
        try:
            result = self.schedd.submit(text, submit_file=path, cwd=cwd, prepend=prepend, append=append)
        except ScheddError as e:
            self.out.line(f"ERROR: {e}")
            self.submit_failed(node)
            return
        if result.num_procs > 1 and self.options.prohibit_multi_jobs:
            self.out.line(f"ERROR: on Line 0 of submit file: {PROHIBITED_MULTI_JOBS}")
            try:  # DAGMan's direct submit aborts the transaction; ours can only take the jobs back
                self.schedd.act(JobAction.Remove, result.cluster, PROHIBITED_MULTI_JOBS)
            except ScheddError:
                pass
            self.submit_failed(node)
            return
        self.next_submit_time, self.next_submit_delay = 0.0, 1
        self.out.assigned_id(result.cluster, result.first_proc)
        self.jobs_submitted += result.num_procs
        node.status = NodeState.SUBMITTED
        node.cluster = result.cluster
        node.procs = result.num_procs
        node.procs_idle = result.num_procs
        self.by_cluster[result.cluster] = node

    def submit_failed(self, node: Node) -> None:
        """``Dag::ProcessFailedSubmit``: no job is submitted for 1, 2, 4... seconds (doubling at
        each failed submit until one succeeds), the node going back in front of the ready queue
        (DAGMAN_RETRY_SUBMIT_FIRST); after DAGMAN_MAX_SUBMIT_ATTEMPTS its job has failed with
        -1001 and its RETRY is used up (its POST script, if any, still runs)."""
        node.submit_tries += 1
        node.cluster = None
        if self.jobstate:
            self.jobstate.submit_failure(node.name, node.last_event_time)
        self.status_outdated = True
        delay = self.next_submit_delay
        self.next_submit_time = self.clock() + delay
        self.next_submit_delay *= 2
        attempts = self.options.max_submit_attempts
        if self.dag_status is DagStatus.RM and node is not self.final:
            attempts = min(attempts, 2)
        if node.submit_tries < attempts:
            self.out.submit_try_failed(node.submit_tries, attempts, delay)
            self.enqueue(node, self.options.retry_submit_first)  # still READY
            return
        self.next_submit_time, self.next_submit_delay = 0.0, 1
        self.out.submit_failed_after(node.submit_tries)
        self.out.shortcutting_retries(node.name)
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

    def subdag_options(self, node: Node) -> DagSubmitOptions:
        """What DAGMan passes on to a SUBDAG node's condor_submit_dag -no_submit: the node's
        priority (its nodes add it to their own), -force, -AutoRescue and -suppress_notification."""
        return DagSubmitOptions(priority=self.priority(node), force=self.options.force,
                                auto_rescue=self.options.auto_rescue,
                                suppress_notification=bool(self.options.suppress_notification))

    def submit_description(self, node: Node, cwd: str) -> tuple[str, str, dict[str, str], dict[str, str]]:
        """The node's submit description, where it came from, and DAGMan's macros: VARS and its own,
        set before the description is read (prepend) or after it (append), as values, the way
        ``condor_submit -a`` and DAGMan's direct submit set them (``init_vars``)."""
        declared = node.graph.node
        inline = False
        if declared.kind is NodeKind.SUBDAG:  # a nested DAGMan, with its own files and rescue DAGs
            path = os.path.join(cwd, declared.submit) + ".condor.sub"
            sub_dag = os.path.join(cwd, declared.submit)
            if self.options.generate_subdag_submits:  # else the .condor.sub written beforehand is used
                options = self.subdag_options(node)
                if options.force:
                    rename_rescue_dags(sub_dag)
                text = write_condor_sub(sub_dag, format_condor_sub(sub_dag, options, self.options.state_dir
                                                                     or self.schedd.state.path))
            else:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
        elif declared.inline_submit is not None:
            text, path, inline = declared.inline_submit, f"{self.dag_file} (node {node.name})", True
        elif declared.submit in self.graph.dag.submit_descriptions:
            text, path = self.graph.dag.submit_descriptions[declared.submit], f"{self.dag_file} ({declared.submit})"
            inline = True
        else:
            from engine.schedd.local.submit import read_submit_file  # htcondor2 loads slowly: when needed

            path = os.path.join(cwd, declared.submit)
            open(path, "rb").close()  # one that cannot be read fails with DAGMan's own messages (OSError)
            text = read_submit_file(path)  # SubmitError (a bad file) fails the submit, as condor_submit's would
        options = self.options
        prepend = {"JOB": node.name, "RETRY": str(node.retries), "DAG_STATUS": str(int(self.dag_status)),
                   "FAILED_COUNT": str(self.failed_count)}
        parents = ",".join(node.graph.parents)
        prepend["DAG_PARENT_NAMES"] = parents
        prepend["My.DAGParentNodeNames"] = f'"{parents}"'
        if "batch_name" not in text.lower():
            prepend["batch_name"] = self.batch_name
        prepend["My.JobBatchId"] = f'"{self.batch_id}"'  # the top-level DAGMan's, which condor_q -dag ID selects
        if options.node_record_retry and node.retries > 0:
            prepend["My.DAGManNodeRetry"] = str(node.retries)
        if self.priority(node):
            prepend["priority"] = str(self.priority(node))
        if node.hold_on_submit:
            prepend["hold"] = "true"
        if options.hold_claim_time and node.graph.children:
            prepend["keep_claim_idle"] = str(options.hold_claim_time)
        if options.record_machine_attrs:
            attrs = options.record_machine_attrs.replace(",", " ").split()
            prepend["job_ad_information_attrs"] = ",".join([f"MachineAttr{a}0" for a in attrs] + ["DAGNodeName"])
            prepend["job_machine_attrs"] = options.record_machine_attrs
        append = {
            "dag_node_name": node.name,
            "submit_event_notes": f"DAG Node: {node.name}",
            "dagman_log": self.nodes_log_path,
            "My.DAGManNodesMask": f'"{NODES_LOG_EVENTS}"',
        }
        if options.dagman_id:
            append["My.DAGManJobId"] = append["DAGManJobId"] = str(options.dagman_id)
        append["My.DAGManNodesLog"] = f'"{self.nodes_log_path}"'
        if options.suppress_job_logs:
            append["log"] = ""
        if options.suppress_notification:
            append["notification"] = "NEVER"
        for var in declared.vars:
            placement = var.placement or (VarsPlacement.APPEND if options.default_append_vars else VarsPlacement.PREPEND)
            target = append if placement is VarsPlacement.APPEND else prepend
            target.pop(var.name, None)
            target[var.name] = var.value
        if inline:  # DAGMan 23.9.6 parsed an inline description with the DAG: it can only append
            prepend.update(append)
            prepend, append = {}, prepend
        return text, path, prepend, append
