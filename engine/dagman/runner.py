"""The embedded condor_dagman: runs one DAG file against a Schedd, with DAGMan's semantics.

A node runs PRE script, job, POST script; the last of them that ran decides its success
(a POST script masks a failed job; a failed PRE skips the job and the POST).  Jobs are
submitted through the Schedd API with DAGMan's macros and attributes (``DAGNodeName``,
``DAGManJobId``, ``dagman_log``), and DAGMan learns what happened to them, as the real one does,
by reading the shared ``<dag>.nodes.log``; POST script results and NOOP nodes go through that
log too, which is what makes recovery after a crash a replay of the log.

This module holds the state machine; the files it writes are formatted by their own modules.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from datetime import datetime

import classad2
import htcondor2

from engine.dag import NodeKind, ScriptKind
from engine.dag.graph import Graph
from engine.dag.rescue import RescueNode, next_rescue_path, write_rescue
from engine.dagman.config import Options
from engine.dagman.dagman_out import DagmanOut, Deferrals, NodeDump
from engine.dagman.events import EventReader
from engine.dagman.jobstate_log import JobstateLog, job_tag
from engine.dagman.metrics import DAGMAN_VERSION, DagMetrics, write_metrics
from engine.dagman.node import Census, DagStatus, Node, NodeStates
from engine.dagman.node_status import (
    DagOutcome,
    NodeInfo,
    NodeState,
    write_node_status,
)
from engine.dagman.ready_queue import ReadyQueue
from engine.dagman.scripts import DagFatal, ScriptQueue
from engine.schedd.api import JobAction, Schedd, ScheddError
from engine.schedd.local.userlog import UserLog

EXIT_OKAY, EXIT_ERROR, EXIT_ABORT, EXIT_RESTART = 0, 1, 2, 3  # dagman_main.h


class DagMan(NodeStates, ReadyQueue, ScriptQueue, EventReader):
    """One DAGMan run of ``graph``. Call :meth:`run`; it returns DAGMan's exit code."""

    def __init__(self, graph: Graph, schedd: Schedd, options: Options, *,
                 clock: Callable[[], float] = time.time):
        self.graph = graph
        self.schedd = schedd
        self.options = options
        self.clock = clock
        self.dag_file = graph.file
        self.dag_dir = os.path.dirname(os.path.abspath(self.dag_file))
        self.census = Census()
        self.nodes = {name: Node(g, self.census) for name, g in graph.nodes.items()}
        self.busy = self.census.busy
        self.prioritized = any(n.graph.node.priority for n in self.nodes.values())
        self.final = next((n for n in self.nodes.values() if n.graph.kind is NodeKind.FINAL), None)
        self.by_cluster: dict[int, Node] = {}
        self.nodes_log_path = os.path.abspath(self.dag_file) + ".nodes.log"
        if not options.recovery:  # a new run starts a new nodes log; recovery replays it
            open(self.nodes_log_path, "w").close()
        self.nodes_log = UserLog(self.nodes_log_path)
        self.events = htcondor2.JobEventLog(self.nodes_log_path)
        self.ready: list[Node] = []
        self.dag_status = DagStatus.OK
        self.final_started = False
        self.recovering = False
        self.was_halted = False
        self._halted = False
        self.progressed = False
        self.noop_counter = 0
        self.seq = 0
        self.aborting: tuple[int, Node] | None = None
        self.removed = False  # condor_rm of the DAGMan job (SIGUSR1)
        self.removal_started = False
        self.held = False  # condor_hold of the DAGMan job (SIGTERM)
        self.concluded = False
        self.fatal: str | None = None
        self.rescue_path: str | None = None
        status_file = graph.dag.node_status_file
        self.status_file = status_file
        self.status_path = os.path.join(self.dag_dir, status_file.file) if status_file else None
        self.status_written_at: float | None = None  # when the node status file was last written
        self.status_outdated = True  # an event was read since the last dump (DAGMan's _statusFileOutdated)
        self.started = 0.0
        self.out = DagmanOut(os.path.abspath(self.dag_file) + ".dagman.out", clock=clock)
        self.out_status: tuple | None = None  # the counts last printed in the status table
        self.ad_written: tuple[float, tuple] | None = None  # when the DAGMan job's ad was updated, and with what
        self.batch_name = f"{os.path.basename(self.dag_file)}+{self.options.dagman_id}"
        self.next_submit_time = 0.0  # after a failed submit, no job is submitted before this time
        self.jobs_submitted = 0  # job procs, for DAG_JobsSubmitted
        self.jobs_completed = 0
        self.hold_scripts: list[subprocess.Popen] = []
        self.own_tail: tuple[int, int] | None = None  # nodes-log bytes of NOOP events handled as written
        self.jobstate = None
        if graph.dag.jobstate_log:
            self.jobstate = JobstateLog(os.path.join(self.dag_dir, graph.dag.jobstate_log), self._job_tags())

    # ------------------------------------------------------------------ the run

    def run(self) -> int:
        """Run the DAG to its end and return DAGMan's exit code."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGUSR1, signal.SIGTERM)}
        started = self.started = self.clock()
        self.out.starting_up(version=f"$CondorVersion: {DAGMAN_VERSION} crabtui $",
                             platform=f"$CondorPlatform: {os.uname().machine}_{os.uname().sysname} $")
        for knob, value in (("DAGMAN_MAX_JOBS_SUBMITTED", self.options.max_jobs),
                            ("DAGMAN_MAX_JOBS_IDLE", self.options.max_idle),
                            ("DAGMAN_MAX_PRE_SCRIPTS", self.options.max_pre),
                            ("DAGMAN_MAX_POST_SCRIPTS", self.options.max_post),
                            ("DAGMAN_ALWAYS_RUN_POST", self.options.always_run_post)):
            self.out.setting(knob, value)
        if self.jobstate:
            if self.options.recovery:
                self.jobstate.initialize_recovery()
            elif self.options.rescue_dag_number:
                self.jobstate.initialize_rescue()
            self.jobstate.dagman_started(self.options.dagman_id, 0)
        try:
            self.check_halt()
            self.set_own_attributes()
            self.bootstrap()
            if self.options.recovery:
                self.recover()
            while self.step():
                if not self.progressed:
                    self.wait()
                if self.held:
                    return self.stop_gracefully()
            code = self.conclude()
        except DagFatal as e:  # main_shutdown_rescue: rescue DAG, node jobs removed, scripts killed
            self.fatal = str(e)
            self.out.line(f"ERROR: {self.fatal}")
            self.dag_status = DagStatus.ERROR
            self.write_rescue()
            self.remove_jobs("DAG Abort: DAG is exiting and writing rescue file.")
            self.stop_scripts()
            code = EXIT_ERROR
        try:
            self.print_status(force=True)
            if code == EXIT_OKAY and not self.failed_count:
                self.out.all_jobs_completed(self.deferrals())
            if self.fatal is None:
                outcome = self.closing_outcome(code)
                self.update_status_file(outcome, force=outcome is DagOutcome.REMOVED, closing=True)
            else:  # work is still in flight: DAGMan's last dump obeys the interval and shows it running
                self.update_status_file(DagOutcome.RUNNING)
            self.update_ad(force=True)
            self.write_metrics(started, code)
            self.out.wrote_metrics_file(self.dag_file + ".metrics")
            if self.jobstate:
                self.jobstate.dagman_finished(code)
            self.out.exiting_with_status(code)
            return code
        finally:
            if self.jobstate:
                self.jobstate.close()
            self.out.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.nodes_log.close()

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
        dag_jobs, dag_failed, dag_succeeded = counts(True)
        write_metrics(self.dag_file + ".metrics", DagMetrics(
            start_time=started, end_time=self.clock(), exitcode=code, dag_status=int(self.dag_status),
            dagman_id=self.options.dagman_id or None, rescue_dag_number=self.options.rescue_dag_number,
            jobs=jobs, jobs_failed=jobs_failed, jobs_succeeded=jobs_succeeded,
            dag_jobs=dag_jobs, dag_jobs_failed=dag_failed, dag_jobs_succeeded=dag_succeeded))

    def _on_signal(self, signum, frame) -> None:
        """Only flags: the main loop acts on them, between calls to the schedd."""
        if signum == signal.SIGUSR1:  # condor_rm of the DAGMan job (remove_kill_sig)
            self.removed = True
        else:  # condor_hold: a graceful stop; released, DAGMan resumes in recovery mode
            self.held = True

    def start_removal(self) -> None:
        """condor_rm of the DAGMan job: a rescue DAG, node jobs removed, scripts killed; the
        FINAL node then runs with $DAG_STATUS 4 and DAGMan exits 2."""
        self.removal_started = True
        self.dag_status = DagStatus.RM
        self.out.received_sigusr1()
        self.out.aborting_dag()
        self.write_rescue()
        self.out.removing_submitted_jobs()
        self.remove_jobs("DAG Removed: User removed scheduler job from queue.")
        self.stop_scripts()
        self.start_final_on_shutdown()

    def stop_gracefully(self) -> int:
        """condor_hold of the DAGMan job: node jobs run on, and the lock file stays so that the
        release restarts DAGMan in recovery mode; no rescue DAG and no metrics."""
        self.update_status_file(DagOutcome.HELD, force=True)
        if self.jobstate:
            self.jobstate.dagman_finished(EXIT_RESTART)
        self.out.exiting_with_status(EXIT_RESTART)
        return EXIT_RESTART

    def wait(self) -> None:
        """Until a script exits or the scan interval passes (new log events are read each cycle)."""
        scripts = [n.script.popen for n in self.busy.values() if n.script is not None]
        timeout = min(self.options.scan_interval, 0.05)
        if not scripts:
            time.sleep(timeout)
            return
        fds = []
        try:
            fds = [os.pidfd_open(p.pid) for p in scripts]
            select.select(fds, [], [], timeout)
        except (ProcessLookupError, OSError):
            pass
        finally:
            for fd in fds:
                os.close(fd)

    def conclude(self) -> int:
        """Status and exit code once nothing is left to run; the FINAL node's result decides,
        except after condor_rm, which always ends in exit 2."""
        if self.final is not None and self.final_started:
            if self.final.status is NodeState.DONE:
                return EXIT_OKAY
            self.write_rescue()
            return EXIT_ERROR
        if self.removed:
            return EXIT_ABORT
        if self.aborting is not None:
            value, _ = self.aborting
            return value
        if self.halted():
            return EXIT_ERROR
        if self.failed_count:
            return EXIT_ERROR
        return EXIT_ERROR if self.dag_status is DagStatus.CYCLE else EXIT_OKAY

    def outcome(self, rescue: bool = True) -> None:
        """Before FINAL starts or the run ends: the DAG's status, and a rescue DAG unless it succeeded."""
        unfinished = any(n.status not in (NodeState.DONE, NodeState.ERROR, NodeState.FUTILE)
                         for n in self.nodes.values() if n is not self.final)
        if self.removed:
            self.dag_status = DagStatus.RM
        elif self.aborting is not None:
            pass  # check_abort set OK for RETURN 0, ABORT otherwise
        elif self.halted() and unfinished:
            self.dag_status = DagStatus.HALTED
            self.out.exiting_because_halted()
        elif self.failed_count:
            self.dag_status = DagStatus.NODE_FAILED
        elif unfinished:
            self.dag_status = DagStatus.CYCLE
            self.out.checking_for_cycle()
            self.out.cycle_exists()
        if self.dag_status is not DagStatus.OK and rescue:
            if self.failed_count:
                self.out.jobs_failed([self.dump(n, i) for i, n in enumerate(self.nodes.values())
                                      if n.status is NodeState.ERROR])
            if not self.removal_started:  # a removed DAG's rescue is the one written as it was removed
                self.write_rescue()

    @staticmethod
    def dump(node: Node, node_id: int) -> NodeDump:
        """What dagman.out says about a node (DAGMan's Job::Dump)."""
        declared = node.graph.node
        scripts = declared.scripts
        return NodeDump(
            node.name, node_id, node.status, retval=node.retval or 0,
            error_text=node.error, submit_file=declared.submit or "", noop=declared.noop,
            pre_script=scripts[ScriptKind.PRE].command if ScriptKind.PRE in scripts else None,
            post_script=scripts[ScriptKind.POST].command if ScriptKind.POST in scripts else None,
            hold_script=scripts[ScriptKind.HOLD].command if ScriptKind.HOLD in scripts else None,
            retry_max=node.graph.retry,
            condor_id=(node.cluster, 0, 0) if node.cluster is not None and node.cluster > 0 else None,
            parents=node.graph.parents, children=node.graph.children,
            waiting=node.waiting > 0)

    def write_rescue(self) -> None:
        """One rescue file per run: the FINAL node's failure rewrites the same file."""
        if self.rescue_path is None:
            self.rescue_path = next_rescue_path(self.dag_file)
        self.out.writing_rescue_dag(self.rescue_path)
        nodes = [RescueNode(n.name, done=n.status is NodeState.DONE, failed=n.status is NodeState.ERROR,
                            final=n is self.final, retry=n.graph.retry, unless_exit=n.graph.unless_exit,
                            retries=n.retries, return_value=n.retval) for n in self.nodes.values()]
        write_rescue(self.rescue_path, os.path.basename(self.dag_file), nodes, datetime.fromtimestamp(self.clock()).astimezone())

    def step(self) -> bool:
        """One cycle: read events, reap scripts, start work. False once the DAG is finished;
        :attr:`progressed` says whether a node changed state, so that the next cycle follows at once."""
        changes = self.census.changes
        self.check_halt()
        if self.removed and not self.removal_started:
            self.start_removal()
        halted = self.halted()
        if self.was_halted and not halted:
            self.unblock()
        self.was_halted = halted
        self.read_events()
        self.reap_scripts()
        if self.aborting is None and not self.removed:
            self.start_ready()
        elif self.final_started and any(n is self.final for n in self.ready):  # its submit failed: try again
            self.ready = [self.final]
            self.start_ready()
        going = not self.finished()
        if going:
            self.print_status()
            # DAGMan's periodic dump comes from its event timer, first fired a scan interval in
            if self.clock() >= self.started + self.options.scan_interval:
                self.update_status_file(DagOutcome.RUNNING)
            self.update_ad()
        self.out.flush()
        self.progressed = self.census.changes != changes
        return going

    def set_own_attributes(self) -> None:
        """The DAGMan job's ad: SET_JOB_ATTR's attributes, and its batch name (``<dag>+<cluster>``
        unless the user gave one), which its node jobs take too so that condor_q groups them."""
        if not self.options.dagman_id:
            return
        try:
            ads = self.schedd.query(f"ClusterId == {self.options.dagman_id}", ["JobBatchName"])
            attrs = dict(self.graph.dag.set_job_attrs)
            if ads and "JobBatchName" in ads[0]:
                self.batch_name = str(ads[0]["JobBatchName"])
            elif ads:
                attrs["JobBatchName"] = classad2.quote(self.batch_name)
            if ads and attrs:
                self.schedd.edit(self.options.dagman_id, attrs)
        except ScheddError as e:
            self.out.line(f"WARNING: could not set attributes of the DAGMan job {self.options.dagman_id}: {e}")

    def update_ad(self, force: bool = False) -> None:
        """The DAGMan job's own ad: DAG_Status and node and job counts, which ``q`` and
        ``dag status`` show; at most once a second unless forced, and only after a change."""
        if not self.options.dagman_id:
            return
        counts = {state: self.count(state) for state in NodeState}
        queued = sum(n.procs - n.procs_done for n in self.busy.values()
                     if n.status is NodeState.SUBMITTED and n.cluster and n.cluster > 0)
        idle = sum(n.procs_idle for n in self.busy.values() if n.cluster and n.cluster > 0)
        held = sum(n.procs_held for n in self.busy.values())
        values = {
            "DAG_Status": int(self.dag_status), "DAG_InRecovery": int(self.recovering),
            "DAG_NodesTotal": len(self.nodes), "DAG_NodesDone": counts[NodeState.DONE],
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
            if snapshot == before or now - last < 1:
                return
        values["DAG_AdUpdateTime"] = int(now)
        try:
            self.schedd.edit(self.options.dagman_id, {k: str(v) for k, v in values.items()})
        except ScheddError:
            return  # the DAGMan job has left the queue (removed): nothing to show it in
        self.ad_written = (now, snapshot)

    def deferrals(self) -> Deferrals:
        return Deferrals(max_jobs=self.options.max_jobs, max_idle=self.options.max_idle,
                         max_pre=self.options.max_pre, max_post=self.options.max_post)

    def print_status(self, force: bool = False) -> None:
        """dagman.out's node table, printed when the counts changed, as DAGMan prints it after events."""
        counts = {state: self.count(state) for state in NodeState}
        held = sum(n.procs_held for n in self.busy.values())
        snapshot = (tuple(counts.values()), held, int(self.dag_status))
        if snapshot == self.out_status and not force:
            return
        self.out_status = snapshot
        self.out.status(dag_status=int(self.dag_status), total=len(self.nodes), done=counts[NodeState.DONE],
                        pre=counts[NodeState.PRERUN], queued=counts[NodeState.SUBMITTED],
                        post=counts[NodeState.POSTRUN], ready=counts[NodeState.READY],
                        unready=counts[NodeState.NOT_READY], failed=counts[NodeState.ERROR],
                        futile=counts[NodeState.FUTILE], held_procs=held)

    def _job_tags(self) -> dict[str, str]:
        """Each node's JOBSTATE_LOG tag, read from its submit file as DAGMan reads it."""
        tags = {}
        for node in self.nodes.values():
            declared = node.graph.node
            text = declared.inline_submit or self.graph.dag.submit_descriptions.get(declared.submit)
            if text is None and not declared.noop and declared.kind is not NodeKind.SUBDAG:
                cwd = os.path.join(self.dag_dir, node.graph.dir) if node.graph.dir else self.dag_dir
                try:
                    with open(os.path.join(cwd, declared.submit), encoding="utf-8") as f:
                        text = f.read()
                except OSError:
                    text = None
            tags[node.name] = job_tag(text) if text else "-"
        return tags

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
                          outcome=outcome, timestamp=int(now), min_update_time=self.status_file.min_update)
        self.status_written_at = now
        self.status_outdated = False

    def closing_outcome(self, code: int) -> DagOutcome:
        if self.removed and self.final is None:  # with a FINAL node, its result decides
            return DagOutcome.REMOVED
        if self.dag_status is DagStatus.CYCLE:
            return DagOutcome.CYCLE
        if code == EXIT_OKAY:
            return DagOutcome.SUCCESS
        return DagOutcome.ABORTED if self.dag_status is DagStatus.ABORT else DagOutcome.FAILED

    def finished(self) -> bool:
        if self.shutting_down() and self.final is None:
            if not self.concluded:
                self.concluded = True
                self.outcome()
            return True
        halted = self.halted()
        busy = any(n.status in (NodeState.SUBMITTED, NodeState.POSTRUN)
                   or (n.status is NodeState.PRERUN and (n.script is not None or not halted or n is self.final))
                   for n in self.busy.values())
        if busy:
            return False
        if self.ready and self.aborting is None and not self.removed and not halted:
            return False
        if self.final is not None and not self.final_started:
            self.outcome()
            self.start_final()
            return False
        if self.final is None and not self.concluded:
            self.concluded = True
            self.outcome()
        return True

    def halted(self) -> bool:
        """Whether the halt file existed when this cycle began (checked once a cycle, as DAGMan does)."""
        return self._halted

    def check_halt(self) -> None:
        self._halted = os.path.exists(self.dag_file + ".halt")

    # ------------------------------------------------------------------ outcomes

    def shutting_down(self) -> bool:
        """ABORT-DAG-ON fired or the DAGMan job was removed: no new node starts; the FINAL node,
        if any, starts at once, and without one DAGMan exits as soon as it has removed its jobs,
        reading no further events (so nodes still queued are reported "Was STATUS_SUBMITTED")."""
        return self.aborting is not None or self.removal_started

    def start_final_on_shutdown(self) -> None:
        """On ABORT-DAG-ON or removal DAGMan starts the FINAL node at once (main_shutdown_rescue),
        before it reads another event: FINAL's $FAILED_COUNT and $DONE_COUNT do not count the
        nodes whose jobs it has just removed."""
        if self.final is not None and not self.final_started:
            self.outcome()
            self.start_final()

    def remove_jobs(self, reason: str) -> None:
        if self.by_cluster and self.options.dagman_id:
            try:
                self.schedd.act(JobAction.Remove, f"DAGManJobId == {self.options.dagman_id}", reason)
            except ScheddError:
                pass
        elif self.by_cluster:
            for cluster in [c for c in self.by_cluster if c > 0]:
                try:
                    self.schedd.act(JobAction.Remove, cluster, reason)
                except ScheddError:
                    pass


