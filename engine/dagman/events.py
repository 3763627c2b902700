"""Event handling and recovery: what DAGMan learns from the nodes log, and how it replays it.

DAGMan learns what its node jobs did only by reading ``<dag>.nodes.log`` (submit, execute,
held, terminated, aborted...), and POST script results and NOOP nodes go through that log too.
So recovery after a crash is a replay of the log: finished nodes stay done, queued jobs are
re-attached rather than resubmitted, and a logged script result decides its node as it did
then.  DAGMan's ``Dag::ProcessLogEvents``, ``ProcessOneEvent`` (dag.cpp) and recovery mode.
"""

from __future__ import annotations

import os
from datetime import datetime

import htcondor2

from engine.dag import ScriptKind
from engine.dagman.check_events import EventChecker, Verdict
from engine.dagman.config import Options
from engine.dagman.dagman_out import QUIET, VERBOSE, DagmanOut
from engine.dagman.jobstate_log import JobstateLog
from engine.dagman.node import JOB_ABORTED, DagFatal, Node
from engine.dagman.node_status import NodeState
from engine.schedd.api import Schedd, ScheddError

INT_MAX = 2147483647


class EventReader:
    """The DagMan's reading of the nodes log, in a normal cycle and in recovery mode.

    Uses the rest of the DagMan for what an event leads to: ``job_finished``, ``remove_node_jobs``,
    ``node_succeeded`` (the node state machine), ``run_hold_script``, ``queue_post``,
    ``print_script_result`` and ``post_result`` (the script queue), ``outcome`` and ``update_ad``."""

    options: Options
    nodes: dict[str, Node]
    by_cluster: dict[int, Node]
    ended_clusters: dict[int, Node]
    checker: EventChecker
    final: Node | None
    final_started: bool
    aborting: tuple[int, Node] | None
    removal_started: bool
    recovering: bool
    events: htcondor2.JobEventLog
    nodes_log_path: str
    own_tail: tuple[int, int] | None
    noop_counter: int
    seq: int
    jobs_completed: int
    status_outdated: bool
    events_seen: int
    idle_procs: set[tuple[int, int, int]]
    out: DagmanOut
    jobstate: JobstateLog | None
    schedd: Schedd

    def recover(self) -> None:
        """Recovery mode: replay the nodes log so that finished nodes stay done, queued jobs are
        re-attached rather than resubmitted, and POST scripts whose result is not logged run."""
        self.out.running_in_recovery_mode()
        if self.jobstate:
            self.jobstate.recovery_started()
        self.recovering = True
        self.update_ad(force=True)
        before_size = os.path.getsize(self.nodes_log_path) if os.path.exists(self.nodes_log_path) else 0
        try:
            self.read_events()
        finally:
            self.recovering = False
        self.out.recovery_complete()
        for node in self.nodes.values():
            if node.status is NodeState.POSTRUN and node.script is None:
                self.queue_post(node)
        self.out.done_with_recovery_mode()
        submitted = [n for n in self.nodes.values() if n.status is NodeState.SUBMITTED and (n.cluster or 0) > 0]
        if submitted:
            self.out.line(f"{len(submitted)} nodes claim to have jobs submitted to queue. Verifying...")
            self.verify_jobs_in_queue(submitted, before_size)
        if self.jobstate:
            self.jobstate.recovery_finished()

    def verify_jobs_in_queue(self, submitted: list[Node], log_size: int) -> None:
        """``Dag::VerifyJobsInQueue``: after recovery, each node the nodes log leaves queued must
        still have its job in the schedd's queue; a job gone without an event (a lost log, a job
        removed from the queue by hand) ends the DAG with a rescue DAG, unless the log has grown
        since ``log_size``, its size before the recovery read, as 23.9.6 measures it (the event of
        a job that ended while DAGMan read and started POST scripts is there, to be read next).
        The query asks for the nodes' clusters, so that it also works for a DAGMan run by hand,
        whose jobs carry no DAGManJobId."""
        self.out.line("Querying local schedd for associated jobs in queue", VERBOSE)
        constraint = " || ".join(f"ClusterId == {n.cluster}" for n in submitted)
        try:
            present = {int(ad["ClusterId"]) for ad in self.schedd.query(constraint, ["ClusterId", "ProcId"])}
        except ScheddError as e:
            self.out.line(f"ERROR(-1): Failed to fetch job ads from local Schedd: {e}")
            return
        lost = [n for n in submitted if n.cluster not in present]
        if not lost:
            self.out.line("All pending job states validated", VERBOSE)
        elif os.path.getsize(self.nodes_log_path) == log_size:
            for node in lost:
                self.out.line(f"ERROR: DAGMan lost track of node {node.name} (ClusterId={node.cluster}). "
                              "Please resubmit DAG from produced rescue file.")
            raise DagFatal(f"DAGMan lost track of node {lost[0].name}")

    def read_events(self) -> None:
        if self.own_tail is not None:  # NOOP events this DAGMan wrote and handled: skip them if alone
            start, end = self.own_tail
            state, offset = self.events.__getstate__()  # the bindings' pickling hooks: a reader's offset
            if offset == start and os.path.getsize(self.nodes_log_path) == end:
                self.events.__setstate__((state, end))
            self.own_tail = None
        # -1, not 0: the bindings turn stop_after into a whole-second deadline, and 0 can wait a second.
        for event in self.events.events(stop_after=-1):
            self.handle_event(event)

    def handle_event(self, event) -> None:
        if self.final is None and (self.aborting is not None or self.removal_started):
            return  # DAGMan has exited (shutting_down(), inlined: this runs for every event)
        kind = event.type
        T = htcondor2.JobEventType
        if self.recovering:
            if kind == T.SUBMIT:
                self.reattach(event)
            elif kind in (T.POST_SCRIPT_TERMINATED, T.PRESKIP):
                self.replay_script_event(event)
                return
        if event.cluster == 0 and event.proc == INT_MAX:
            node = self.by_cluster.get(-event.get("Subproc", 0))  # a NOOP node's fake id
        else:  # a real job's event, checked as DAGMan checks it (NOOP events are ours, and sane)
            node = self.by_cluster.get(event.cluster) or self.ended_clusters.get(event.cluster)
            if node is None and kind == T.SUBMIT:
                node = self.scary_submit(event)
            if node is None or not self.sane(event, kind):
                return
        if kind in (T.POST_SCRIPT_TERMINATED, T.PRESKIP) and not self.recovering:
            return  # written by this DAGMan as the script ended, and handled then (checked above, as DAGMan does)
        if node is None or node.status is not NodeState.SUBMITTED:
            return
        node.last_event_time = event_time(event)
        self.status_outdated = True
        self.events_seen += 1
        self.out.event(kind.name, node.name, event.cluster, event.proc, node.last_event_time,
                       subproc=event.get("Subproc", 0), recovery=self.recovering)
        if self.jobstate:
            self.jobstate.job_event(node.name, kind.name, event.cluster, event.proc, node.last_event_time)
        proc_id = (event.cluster, event.proc, event.get("Subproc", 0))
        if kind in (T.JOB_TERMINATED, T.JOB_ABORTED):  # counted before the end is handled, as DAGMan does
            self.count_idle(kind, proc_id)
        if kind == T.SUBMIT:
            node.procs_seen += 1
        elif kind == T.EXECUTE:
            node.procs_idle = max(0, node.procs_idle - 1)
        elif kind == T.JOB_EVICTED:
            node.procs_idle += 1
        elif kind == T.JOB_HELD:
            self.out.hold_reason(event.get("HoldReason") or "(unknown)")
            node.procs_held += 1
            limit = self.options.max_job_holds
            if limit and node.procs_held >= limit and not self.recovering:  # Dag::ProcessHeldEvent
                self.out.max_job_holds_reached(event.cluster, node.name, limit)
                self.remove_node_jobs(node, "DAG Limit: Max number of held jobs was reached.")
            self.run_hold_script(node)
        elif kind == T.JOB_RELEASED:
            node.procs_held = max(0, node.procs_held - 1)
        elif kind in (T.JOB_TERMINATED, T.JOB_ABORTED):
            if kind == T.JOB_TERMINATED:
                value = event.get("ReturnValue")
                if value is None:
                    value = -int(event.get("TerminatedBySignal", 1))
            else:
                value = None
            node.exit_codes[event.proc] = value
            node.procs_done += 1
            if value != 0 and node.first_failure is None:
                node.first_failure = (event.proc, value)
                if node.procs_done < node.procs and not self.recovering:  # once one proc fails, the cluster goes
                    node.successful = False
                    self.remove_node_jobs(node, f"Node Error: DAG node {node.name} ({event.cluster}.{event.proc}.0) " + (
                        "got ULOG_JOB_ABORTED event." if value is None else f"failed with signal {max(0, -value)}."))
            if event.cluster > 0 and value == 0:  # DAGMan 23.9's DAG_JobsCompleted: the procs that succeeded
                self.jobs_completed += 1
            subproc = event.get("Subproc", 0)  # a NOOP node's fake id is (0.2147483647.k)
            if value == 0:
                self.out.job_proc_completed_successfully(node.name, event.cluster, event.proc, subproc)
            elif value is not None:
                self.out.job_proc_failed(node.name, event.cluster, event.proc,
                                         status=value if value > 0 else None,
                                         signal_number=-value if value < 0 else None, subproc=subproc)
            if node.procs_done >= node.procs:
                # Dag::ProcessJobProcEnd: not said when the last proc failed and no POST script follows
                if value == 0 or ScriptKind.POST in node.graph.node.scripts:
                    self.out.node_job_completed(node.name)
                first = node.first_failure[1] if node.first_failure else 0
                self.job_finished(node, JOB_ABORTED if first is None else first)
        if kind not in (T.JOB_TERMINATED, T.JOB_ABORTED):  # after the event is handled (a HOLD script started)
            self.count_idle(kind, proc_id)

    def count_idle(self, kind, proc: tuple[int, int, int]) -> None:
        """DAGMan's count of idle job procs, kept from the events it reads (``ProcessIsIdleEvent``,
        ``ProcessNotIdleEvent``: a held or evicted proc is idle again) and logged after each."""
        T = htcondor2.JobEventType
        if kind in (T.SUBMIT, T.JOB_EVICTED, T.JOB_SUSPENDED, T.SHADOW_EXCEPTION, T.JOB_RECONNECT_FAILED,
                    T.JOB_HELD):
            self.idle_procs.add(proc)
        elif kind in (T.EXECUTE, T.JOB_UNSUSPENDED, T.JOB_TERMINATED, T.JOB_ABORTED):
            self.idle_procs.discard(proc)
        else:
            return
        self.out.number_of_idle_job_procs(len(self.idle_procs))

    def sane(self, event, kind) -> bool:
        """``Dag::EventSanityCheck``: a bad event DAGMAN_ALLOW_EVENTS tolerates is logged and
        skipped; one it does not aborts the DAG."""
        verdict, message = self.checker.check(kind, event.cluster, event.proc, event.get("Subproc", 0))
        if verdict is Verdict.OKAY:
            return True
        self.out.line(message)
        if verdict is Verdict.WARNING:
            self.out.line("BAD EVENT is warning only")
            return True
        if verdict is Verdict.BAD_EVENT:
            self.out.line(f"Continuing with DAG in spite of bad event ({message}) because of allow_events setting")
            return False
        self.out.line(f"ERROR: aborting DAG because of bad event ({message})", QUIET)
        raise DagFatal(message)

    def scary_submit(self, event) -> Node | None:
        """A submit event naming a queued node under another job id than its submit returned
        (``SanityCheckSubmitEvent``): fatal unless DAGMAN_ABORT_ON_SCARY_SUBMIT is false, in which
        case the log is trusted and the node's job is the one it names."""
        notes = event.get("LogNotes") or ""
        node = self.nodes.get(notes.removeprefix("DAG Node: ")) if notes.startswith("DAG Node: ") else None
        if node is None or node.status is not NodeState.SUBMITTED or node.cluster is None or node.cluster <= 0:
            return None
        message = (f"ERROR: node {node.name}: job ID in userlog submit event ({event.cluster}.{event.proc}.0) "
                   f"doesn't match ID reported earlier by submit command ({node.cluster}.0.0)!")
        if self.options.abort_on_scary_submit:
            self.out.line(f"{message}  Aborting DAG; set DAGMAN_ABORT_ON_SCARY_SUBMIT to false if you are "
                          "*sure* this shouldn't cause an abort.", QUIET)
            raise DagFatal(message)
        self.out.line(f"{message}  Trusting the userlog for now (because of DAGMAN_ABORT_ON_SCARY_SUBMIT "
                      "setting), but this is scary!", QUIET)
        self.by_cluster.pop(node.cluster, None)
        node.cluster = event.cluster
        self.by_cluster[event.cluster] = node
        return node

    def reattach(self, event) -> None:
        """A submit event in recovery: the node's job is in the queue (or was), as DAGMan had it."""
        notes = event.get("LogNotes") or ""
        node = self.nodes.get(notes.removeprefix("DAG Node: ")) if notes.startswith("DAG Node: ") else None
        if node is None:
            return
        noop = event.cluster == 0 and event.proc == INT_MAX
        cluster = -event.get("Subproc", 0) if noop else event.cluster
        if noop:
            self.noop_counter = max(self.noop_counter, -cluster)
        if self.by_cluster.get(cluster) is not node:  # a new attempt; a retry's follows its failure
            self.seq += 1
            node.seq = self.seq
            node.exit_codes = {}
            node.procs = node.procs_done = node.procs_held = node.procs_idle = node.procs_seen = 0
            node.successful, node.first_failure = True, None
            node.status = NodeState.SUBMITTED
            node.cluster = cluster
            self.by_cluster[cluster] = node
            if node is self.final:
                self.final_started = True
                self.outcome(rescue=False)  # written before FINAL started, in the run that died
        node.procs += 1
        if not noop:  # as the completed jobs replayed are counted: the ad's submitted count covers them
            self.jobs_submitted += 1
        node.procs_idle += 1

    def replay_script_event(self, event) -> None:
        """POST_SCRIPT_TERMINATED and PRE_SKIP events in recovery: the script's result, logged
        by the DAGMan that died, decides the node as it did then."""
        if event.type == htcondor2.JobEventType.PRESKIP:
            notes = event.get("SkipEventLogNotes") or ""
            node = self.nodes.get(notes.removeprefix("DAG Node: "))
            self.noop_counter = max(self.noop_counter, event.get("Subproc", 0))
            if node is not None and node.status is NodeState.READY:
                if self.jobstate:
                    self.jobstate.job_event(node.name, "PRESKIP", 0, INT_MAX, event_time(event))
                self.node_succeeded(node, "PRE script")
            return
        node = self.nodes.get(event.get("DAGNodeName"))
        if node is None or node.status is not NodeState.POSTRUN:
            return
        code = event.get("ReturnValue")
        if code is None:
            code = -int(event.get("TerminatedBySignal", 1))
        when = event_time(event)
        # Logged as DAGMan's ProcessPostTermEvent logs it, so that a monitor replaying dagman.out
        # sees the node end here too, and not still in its POST script.
        self.out.event(event.type.name, node.name, event.cluster, event.proc, when,
                       subproc=event.get("Subproc", 0), recovery=True)
        self.print_script_result(node, ScriptKind.POST, code)
        self.post_result(node, code, when)


class LoggedEvent:
    """A NOOP node's event as this DAGMan writes it, handled without reading it back."""

    __slots__ = ("type", "_data")
    cluster, proc = 0, INT_MAX

    def __init__(self, type: htcondor2.JobEventType, data: dict) -> None:
        self.type = type
        self._data = data

    def get(self, key: str, default=None):
        return self._data.get(key, default)

    def __getitem__(self, key: str):
        return self._data[key]


_event_time_cache = ("", 0)


def event_time(event) -> int:
    """``JobEvent.timestamp`` without its two strptime calls: events of one second share a
    cached result (a busy DAG reads thousands a second)."""
    global _event_time_cache
    text = event["EventTime"]
    if text != _event_time_cache[0]:
        # Local time, as the bindings read it (they ignore a trailing Z).
        _event_time_cache = (text, int(datetime.fromisoformat(text.removesuffix("Z")).timestamp()))
    return _event_time_cache[1]

