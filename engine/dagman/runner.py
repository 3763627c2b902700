"""The embedded condor_dagman: runs one DAG file against a Schedd, with DAGMan's semantics.

A node runs PRE script, job, POST script; the last of them that ran decides its success
(a POST script masks a failed job; a failed PRE skips the job and the POST).  Jobs are
submitted through the Schedd API with DAGMan's macros and attributes (``DAGNodeName``,
``DAGManJobId``, ``dagman_log``), and DAGMan learns what happened to them, as the real one does,
by reading the shared ``<dag>.nodes.log``; POST script results and NOOP nodes go through that
log too, which is what makes recovery after a crash a replay of the log.

The DagMan class is put together from parts cut along DAGMan's own lines, each in its module:

- ``node``: a node's run-time state and the node state machine (ready, done, failed, retried, futile);
- ``ready_queue``: the ready queue, its throttles (-maxjobs, -maxidle, CATEGORY) and job submission;
- ``scripts``: the script queue (PRE, POST and HOLD scripts, -maxpre, -maxpost, DEFER);
- ``events``: reading the nodes log, and recovery mode's replay of it;
- ``outputs``: when the output files (node status, rescue DAG, metrics) and the DAGMan job's ad
  are written; their formats have their own modules.

This module holds the run itself: the cycle, the signals (condor_rm, condor_hold), halt, abort
and the exit code.
"""

from __future__ import annotations

import getpass
import os
import select
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace

import htcondor2

from engine.dag import NodeKind, ScriptKind
from engine.dag.graph import Graph
from engine.dag.model import Dag
from engine.dagman.config import KNOBS, SETTINGS_ORDER, Options
from engine.dagman.check_events import EventChecker
from engine.dagman.dagman_out import ALWAYS, NORMAL, QUIET, VERBOSE, DagmanOut, banner_name, dagman_out_path
from engine.dagman.events import EventReader
from engine.dagman.jobstate_log import JobstateLog
from engine.dagman.metrics import DAGMAN_VERSION
from engine.dagman.node import BUSY, Census, DagFatal, DagStatus, Node, NodeStates, Script
from engine.dagman.node_status import DagOutcome, NodeState
from engine.dagman.outputs import OutputFiles
from engine.dagman.ready_queue import ReadyQ, ReadyQueue
from engine.dagman.scripts import ScriptQueue
from engine.schedd.api import JobAction, Schedd, ScheddError
from engine.schedd.local.userlog import UserLog

EXIT_OKAY, EXIT_ERROR, EXIT_ABORT, EXIT_RESTART = 0, 1, 2, 3  # dagman_main.h

# condor_rm (remove_kill_sig), condor_hold, and Ctrl-C of a DAGMan run in the foreground.  They
# are blocked from the interpreter's start (``engine.dagman.__main__``) until their handlers are
# in place, so that one arriving while DAGMan reads its DAG waits for them instead of killing it.
STOP_SIGNALS = (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT)


def spliced(dag: Dag) -> list[tuple[str, str, str]]:
    """The SPLICE lines of ``dag`` and of the files it splices, in the order DAGMan reads them."""
    lines = []
    for splice in dag.splices.values():
        lines.append((splice.name, splice.dir or ".", splice.file))
        lines.extend(spliced(splice.dag))
    return lines


class DagMan(NodeStates, ReadyQueue, ScriptQueue, EventReader, OutputFiles):
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
        self.final = next((n for n in self.nodes.values() if n.graph.kind is NodeKind.FINAL), None)
        self.provisioner = next((n for n in self.nodes.values() if n.graph.kind is NodeKind.PROVISIONER), None)
        self.services = [n for n in self.nodes.values() if n.graph.kind is NodeKind.SERVICE]
        self.provisioned = self.provisioner is None  # the other nodes wait for ProvisionerState 2
        self.provisioner_checked = 0.0
        self.deferrals_counted = float("-inf")  # when submit_ready last counted nodes held back
        self.provisioner_final_read = False  # the ended provisioner job's last ad was read
        self.by_cluster: dict[int, Node] = {}
        self.ended_clusters: dict[int, Node] = {}  # jobs that left the queue, for the event check
        self.checker = EventChecker(options.allow_events)
        self.nodes_log_path = self.default_node_log()
        if not options.recovery:  # a new run starts a new nodes log; recovery replays it
            open(self.nodes_log_path, "w").close()
        self.nodes_log = UserLog(self.nodes_log_path)
        self.events = htcondor2.JobEventLog(self.nodes_log_path)
        self.ready: list[Node] = []  # nodes whose parents are done, to start (Dag::StartNode)
        self.queue = ReadyQ()  # nodes whose jobs wait to be submitted (DAGMan's ready queue)
        self.dag_status = DagStatus.OK
        self.final_started = False
        self.recovering = False
        self.was_halted = False
        self.halt_noted = float("-inf")
        self._halted = False
        self.progressed = False
        self.noop_counter = 0
        self.seq = 0
        self.aborting: tuple[int, Node] | None = None
        self.removed = False  # condor_rm of the DAGMan job (SIGUSR1)
        self.removal_started = False
        self.jobs_removed = False  # every job of the DAG removed (a failure, an abort, condor_rm)
        self.held = False  # condor_hold of the DAGMan job (SIGTERM)
        self.stop_signal: int | None = None  # the signal that asked for the graceful stop
        self.concluded = False
        self.fatal: str | None = None
        self.rescue_path: str | None = None
        status_file = graph.dag.node_status_file
        self.status_file = status_file
        self.status_path = os.path.join(self.dag_dir, status_file.file) if status_file else None
        self.status_written_at: float | None = None  # when the node status file was last written
        self.status_outdated = True  # an event was read since the last dump (DAGMan's _statusFileOutdated)
        self.started = 0.0
        self.events_seen = 0  # node job events read
        self.idle_procs: set[tuple[int, int, int]] = set()  # as the events read say, for dagman.out
        self.pending_check = (0, 0.0)  # (events seen, when) at the last new event, for DAGMAN_PENDING_REPORT_INTERVAL
        self.pending_reported = 0.0
        self.out = DagmanOut(dagman_out_path(os.path.abspath(self.dag_file), self.options.outfile_dir),
                             clock=clock, verbosity=options.verbosity, name=banner_name(options.dagman_id))
        self.out_status: tuple | None = None  # the counts last printed in the status table
        self.ad_written: tuple[float, tuple] | None = None  # when the DAGMan job's ad was updated, and with what
        self.batch_name = f"{os.path.basename(self.dag_file)}+{self.options.dagman_id}"
        self.batch_id = f"{self.options.dagman_id}.0"  # the top-level DAGMan's, which condor_q -dag ID selects
        self.parent_dagman_id: int | None = None  # a sub-DAG's: its DAGMan job's DAGManJobId
        self.next_submit_time = 0.0  # after a failed submit, no job is submitted before this time
        self.next_submit_delay = 1  # ... and the delay after the next failure, doubling
        self.submit_window_end = 0.0  # DAGMAN_MAX_SUBMITS_PER_INTERVAL counts submits per scan interval
        self.window_submits = 0
        self.max_jobs_deferred = self.max_idle_deferred = self.category_deferred = 0
        self.scripts_deferred = {ScriptKind.PRE: 0, ScriptKind.POST: 0}  # ScriptQ's deferral counts
        self.scripts_waiting: dict[ScriptKind, deque[Node]] = {ScriptKind.PRE: deque(), ScriptKind.POST: deque()}
        self.scripts_timer: float | None = None  # when the event timer last ran the waiting scripts
        self.jobs_submitted = 0  # job procs, for DAG_JobsSubmitted
        self.jobs_completed = 0  # job procs that exited 0: a failed or removed one is not "completed"
        self.hold_scripts: list[Script] = []
        self.own_tail: tuple[int, int] | None = None  # nodes-log bytes of NOOP events handled as written
        self.jobstate = None
        if graph.dag.jobstate_log:
            self.jobstate = JobstateLog(os.path.join(self.dag_dir, graph.dag.jobstate_log), self._job_tags())

    # ------------------------------------------------------------------ the run

    def run(self) -> int:
        """Run the DAG to its end and return DAGMan's exit code."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked from the start (__main__)
        self.started = self.clock()
        self.out.starting_up(version=f"$CondorVersion: {DAGMAN_VERSION} crabtui $",
                             platform=f"$CondorPlatform: {os.uname().machine}_{os.uname().sysname} $")
        self.log_configuration()
        # what 23.9.6 writes next, once its settings are read: it joins edges through a node of its own
        # (DAGMAN_USE_JOIN_NODES), then lists its command line and its workflow, read from its own job ad
        self.out.line("DAGMAN will adjust edges after parsing")
        for index, arg in enumerate([banner_name(self.options.dagman_id), *self.options.argv]):
            self.out.line(f'argv[{index}] == "{arg}"')
        self.set_own_attributes()
        self.out.default_node_log(self.nodes_log_path)
        for text, level in self.options.startup_notes:
            self.out.line(text, QUIET)
            if level and self.options.use_strict >= level:  # before the DAG is read: no rescue DAG, no metrics
                self.out.line("ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting", QUIET)
                self.out.aborting_dag()
                self.dag_status = DagStatus.ERROR
                self.out.exiting_with_status(EXIT_ERROR)
                self.close(previous)
                return EXIT_ERROR
        self.log_parse()
        measured = False  # DAGMan makes its metrics once the DAG is parsed: a fatal parse warning writes none
        try:
            for warning in self.graph.dag.warnings:  # DAGMan prints them as it parses
                if warning.strict:  # DAGMan's own lines where known: the first, then the rest if not fatal
                    first, *rest = self._logged(warning).split("\n") if warning.logged else [f"Warning: {warning}"]
                    self.strict_warning(first, warning.strict, NORMAL)
                    for line in rest:
                        self.out.line(line, NORMAL)
            measured = True
            self.dump_dot()
            self.check_categories()
            self.check_halt()
            self.say_why_recovering()
            self.out.line("Bootstrapping...")
            self.bootstrap()
            self.out.line(f"Number of pre-completed nodes: {self.count(NodeState.DONE)}")
            if self.options.recovery:
                self.recover()
            for node in self.services:  # Dag::StartServiceNodes, then the provisioner, as DAGMan says
                self.out.line(f"Starting service node {node.name}...")
            if self.provisioner is not None:
                self.out.line("Starting provisioner node...")
            self.print_status()  # main_init's table, before the first submit cycle
            while self.step():
                if not self.progressed:
                    self.wait()
                if self.held:
                    return self.stop_gracefully()
            code = self.conclude()
            self.remove_services()
        except DagFatal as e:  # main_shutdown_rescue: rescue DAG, node jobs removed, scripts killed
            self.fatal = str(e)
            self.dag_status = DagStatus.ERROR
            self.shutdown_rescue()
            code = EXIT_ERROR
        try:
            return self.shut_down(code, measured)
        finally:
            self.close(previous)

    def log_configuration(self) -> None:
        """dagman.out's list of DAGMan's settings, as main_init prints them."""
        # DAGMan lists its configuration before it reads its command line (seen on the pool:
        # "DAGMAN_MAX_PRE_SCRIPTS setting: 3" from the CONFIG file, then "-MaxPre limit (7)")
        shown = Options(**self.options.configured) if self.options.configured is not None else self.options
        if self.options.config_file:
            self.out.line(f"Using DAGMan config file: {self.options.config_file}")
        for knob in SETTINGS_ORDER:
            value = getattr(shown, KNOBS[knob].field)
            if knob == "DAGMAN_WRITE_PARTIAL_RESCUE" and not value:  # one dprintf of several lines
                self.out.line("\n\nWARNING: DAGMan is configured to write Full Rescue DAG files.\nThis is Deprecated "
                              "and will be removed during V24 feature series of HTCondor!\n")
            self.out.setting(knob, value)
            if knob == "DAGMAN_DEFAULT_APPEND_VARS":  # then what node jobs' ads get recorded
                if shown.node_record_retry:
                    self.out.line("DAGMAN_NODE_RECORD_INFO recording:")
                    self.out.line("\t-NODE Retries")
                if shown.record_machine_attrs:
                    self.out.line(f"DAGMAN_RECORD_MACHINE_ATTRS: {shown.record_machine_attrs}")

    def log_parse(self) -> None:
        """dagman.out's lines of the DAG read: its parse, the rescue DAG or save file it starts from
        and the node count; and the jobstate.log's start."""
        self.out.parsing(self.dag_file, spliced(self.graph.dag))
        for warning in self.graph.dag.warnings:  # ALL_NODES passing over FINAL: parsed before any rescue DAG
            if warning.logged and not warning.strict:
                self.out.line(self._logged(warning))
        for line in self.graph.overridden:
            self.out.line(line)
        self.out.line("Adjusting edges")
        for note in self.options.rescue_notes:
            self.out.line(note, QUIET)
        if self.options.save_file:
            self.out.line(f"Loading saved progress from {self.options.save_file} for DAG.", QUIET)
        self.out.line(f"Dag contains {self.census.total} total jobs")
        if self.jobstate:
            if self.options.recovery:
                self.jobstate.initialize_recovery()
            elif self.options.rescue_dag_number:
                self.jobstate.initialize_rescue()
            self.jobstate.dagman_started(self.options.dagman_id, 0)

    def shut_down(self, code: int, measured: bool) -> int:
        """DAGMan's exit with ``code``: the last status table, node status file, job ad and metrics
        (``measured``: the DAG was parsed), then its last lines; returns ``code``."""
        final_done = self.final is not None and self.final.status is NodeState.DONE
        if code == EXIT_OKAY and (final_done or not self.failed_count and self.aborting is None):
            self.print_status()  # the last cycle's table, then ExitSuccess's
            self.out.all_jobs_completed(self.deferrals())
        self.print_status(force=True)
        if self.fatal is None:
            outcome = self.closing_outcome(code)
            self.update_status_file(outcome, force=outcome is DagOutcome.REMOVED, closing=True)
        else:  # work is still in flight: DAGMan's last dump obeys the interval and shows it running
            self.update_status_file(DagOutcome.RUNNING)
        self.update_ad(force=True)
        if measured:
            self.write_metrics(self.started, code)
            self.out.wrote_metrics_file(self.dag_file + ".metrics")
        self.end_hold_scripts()
        if self.jobstate:
            self.jobstate.dagman_finished(code)
        self.out.exiting_with_status(code)
        return code

    def close(self, handlers: dict) -> None:
        """DAGMan's files closed and the signal handlers it replaced put back, as it exits."""
        if self.jobstate:
            self.jobstate.close()
        self.out.close()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        self.nodes_log.close()

    def say_why_recovering(self) -> None:
        """``main_init``: the lock file an earlier DAGMan left (and, under DAGMAN_ABORT_DUPLICATES,
        that its process is gone), or -DoRecovery, as 23.9.6 logs them before it bootstraps."""
        if self.options.found_lock is not None:
            path, pid = self.options.found_lock
            self.out.line(f"Lock file {path} detected,", VERBOSE)
            if self.options.abort_duplicates:
                self.out.line(f"Duplicate DAGMan PID {pid} is no longer alive; this DAGMan should continue." if pid
                              else f"ERROR: unable to create ProcessId object from lock file {path}", ALWAYS)
        elif self.options.recovery:
            self.out.line("Running in recovery mode because -DoRecovery flag was specified", VERBOSE)

    def check_categories(self) -> None:
        """``Dag::CheckThrottleCats``: a MAXJOBS category no node is in, or a category with no
        MAXJOBS, is a DAGMAN_USE_STRICT level 2 warning."""
        limits = self.graph.max_jobs
        assigned = {n.graph.category for n in self.nodes.values() if n.graph.category}
        for category in sorted(assigned | set(limits)):
            if category not in assigned:
                self.strict_warning(f"Warning: category {category} has no assigned nodes, so the throttle "
                                    f"setting ({limits[category]}) will have no effect", 2, NORMAL)
            if category not in limits:
                self.strict_warning(f"Warning: category {category} has no throttle value set", 2, NORMAL)

    def _logged(self, warning) -> str:
        """The lines DAGMan writes for a parse warning, with where it was read."""
        file, line = os.path.relpath(warning.location.file, self.dag_dir), warning.location.line
        return warning.logged.format(where=f"{file}: {line}", file=file, line=line)

    def strict_warning(self, text: str, level: int, verbosity: int = QUIET) -> None:
        """``check_warning_strictness``: a warning of DAGMAN_USE_STRICT ``level`` (1 severe .. 3
        minor) ends the DAG, with a rescue DAG, when the setting is that high or higher.  Once an
        abort or a removal has started ``main_shutdown_rescue`` (FINAL's scripts run then), DAGMan
        says so and goes on: a second shutdown does nothing (seen on the pool)."""
        self.out.line(text, verbosity)
        if self.options.use_strict >= level:
            self.out.line("ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting", QUIET)
            if not self.shutting_down():
                raise DagFatal(text)

    def _on_signal(self, signum, frame) -> None:
        """Only flags: the main loop acts on them, between calls to the schedd."""
        if signum == signal.SIGUSR1:  # condor_rm of the DAGMan job (remove_kill_sig)
            self.removed = True
        else:  # condor_hold, or Ctrl-C of `dag run`: a graceful stop; run again, DAGMan recovers
            self.held = True
            self.stop_signal = signum

    def start_removal(self) -> None:
        """condor_rm of the DAGMan job: a rescue DAG, node jobs removed, scripts killed; the
        FINAL node then runs with $DAG_STATUS 4 and DAGMan exits 2."""
        self.removal_started = True
        self.dag_status = DagStatus.RM
        self.out.received_sigusr1()
        self.shutdown_rescue(removed=True)
        self.start_final_on_shutdown()

    def stop_gracefully(self) -> int:
        """condor_hold of the DAGMan job: node jobs run on, and the lock file stays so that the
        release restarts DAGMan in recovery mode; no rescue DAG and no metrics.  As
        ``main_shutdown_graceful``, dagman.out gets DaemonCore's line for a SIGTERM (condor_hold)
        and the node table, so its reader sees what was still queued as DAGMan stopped."""
        if self.stop_signal == signal.SIGTERM:
            self.out.line("Got SIGTERM. Performing graceful shutdown.", ALWAYS)
        self.print_status(force=True)
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
            self.print_failed_nodes()
            self.shutdown_rescue()
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
        return EXIT_ERROR if self.dag_status in (DagStatus.CYCLE, DagStatus.ERROR) else EXIT_OKAY

    def outcome(self, rescue: bool = True) -> None:
        """Before FINAL starts or the run ends: the DAG's status, and a rescue DAG unless it succeeded."""
        unfinished = any(n.status not in (NodeState.DONE, NodeState.ERROR, NodeState.FUTILE)
                         for n in self.nodes.values() if n is not self.final and n.graph.kind is not NodeKind.SERVICE)
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
            self.print_status()  # the table of the cycle that found nothing left to start
            self.out.checking_for_cycle()
            if self.graph.find_cycle() is not None:
                self.dag_status = DagStatus.CYCLE
                self.out.cycle_exists()
            else:  # nodes held back by a provisioner that never said it was ready
                self.dag_status = DagStatus.ERROR
                # DAGMan's nodes are STATUS_READY from the start until they run (only FINAL is
                # NOT_READY): its list shows the children still waiting for their parents so
                self.out.no_cycle_found([
                    replace(self.dump(n, i), status=NodeState.READY)
                    if n.status is NodeState.NOT_READY and n is not self.final else self.dump(n, i)
                    for i, n in enumerate(self.nodes.values()) if n.graph.kind is not NodeKind.SERVICE])
        if self.dag_status is not DagStatus.OK and rescue and self.aborting is None:  # an abort did it as it fired
            if self.failed_count or self.dag_status is DagStatus.HALTED:  # a halted DAG's list may be empty
                self.print_failed_nodes()
            if not self.removal_started:  # a removed DAG's rescue is the one written as it was removed
                self.shutdown_rescue()

    def print_failed_nodes(self) -> None:
        self.out.jobs_failed([self.dump(n, i) for i, n in enumerate(self.nodes.values())
                              if n.status is NodeState.ERROR])

    def shutdown_rescue(self, rescue: bool = True, removed: bool = False) -> None:
        """``main_shutdown_rescue`` for a DAG that failed (a node, a cycle, a halt, an abort, a
        fatal error) or was removed: a rescue DAG, then every job of the DAG removed, a SERVICE
        node's too, before FINAL starts (seen on the pool: FINAL then reads the service job's
        abort), running scripts killed, and the deferral notes.  After condor_rm the jobs are
        removed only under DAGMAN_REMOVE_NODE_JOBS (the schedd removes them anyway)."""
        self.out.aborting_dag()
        if rescue:
            self.write_rescue()
        self.out.removing_submitted_jobs()
        if not removed:
            self.remove_jobs("DAG Abort: DAG is exiting and writing rescue file.")
        elif self.options.remove_node_jobs:
            self.remove_jobs("DAG Removed: User removed scheduler job from queue.")
        self.stop_scripts()
        self.out.deferrals(self.deferrals(), force=True)

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
        if halted and self.clock() >= self.halt_noted + self.options.scan_interval:
            self.halt_noted = self.clock()  # DAGMan says it each pass of its event timer
            self.out.dag_is_halted(self.dag_file + ".halt", self.final_started)
        self.read_events()
        self.report_pending()
        self.reap_scripts()
        self.check_halt()  # DAGMan looks for the halt file as it starts submitting, after the scripts' results
        if (self.aborting is None and not self.removed or self.final_started) and not self.services_alone():
            self.start_ready()  # once FINAL started (after an abort too) the queue holds FINAL only
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

    def default_node_log(self) -> str:
        """DAGMAN_DEFAULT_NODE_LOG with its @(...) macros resolved (``ResolveDefaultLog``), made
        absolute from the working directory: @(DAG_DIR) is the DAG file's directory as given,
        ``.`` for a bare name, so the default is ``<dir>/./x.dag.nodes.log``, as 23.9.6 writes it."""
        path = self.options.default_node_log
        for macro, value in (("@(DAG_DIR)", os.path.dirname(self.dag_file) or "."),
                             ("@(DAG_FILE)", os.path.basename(self.dag_file)),
                             ("@(CLUSTER)", str(self.options.dagman_id)), ("@(OWNER)", getpass.getuser()),
                             ("@(NODE_NAME)", os.environ.get("DAG_NODE_NAME", ""))):
            path = path.replace(macro, value)
        return os.path.join(os.getcwd(), path)

    def report_pending(self) -> None:
        """DAGMAN_PENDING_REPORT_INTERVAL: after that long with no new event (and since the last
        report), dagman.out lists the nodes DAGMan waits for (``Dag::GetCondorLogStatus``)."""
        now = self.clock()
        seen, since = self.pending_check
        if seen != self.events_seen or not since:
            self.pending_check = seen, since = self.events_seen, now
        interval = self.options.pending_report_interval
        if now - since >= interval and now - self.pending_reported >= interval:
            self.pending_reported = now
            self.out.pending_nodes(int(now - since),
                                   [(n.name, n.cluster if n.cluster is not None and n.cluster > 0 else -1, n.status)
                                    for n in self.nodes.values() if n.status in BUSY])

    def closing_outcome(self, code: int) -> DagOutcome:
        if self.removed and self.final is None:  # with a FINAL node, its result decides
            return DagOutcome.REMOVED
        if self.dag_status is DagStatus.CYCLE:
            return DagOutcome.CYCLE
        if self.dag_status is DagStatus.ABORT and (code != EXIT_OKAY or self.final is None):
            return DagOutcome.ABORTED  # ABORT-DAG-ON A 0 too, which exits 0; a FINAL node's success decides
        if code == EXIT_OKAY:
            return DagOutcome.SUCCESS
        return DagOutcome.FAILED

    def services_alone(self) -> bool:
        """Whether SERVICE nodes are all that is left to start, with nothing else running: DAGMan
        submits at the top of its cycle and exits when the events it then reads end the DAG, so a
        service still queued then is never submitted (seen on the pool with -maxjobs 1)."""
        if not self.services:
            return False
        def other(n: Node) -> bool:
            return n.graph.kind is not NodeKind.SERVICE
        return not (any(map(other, self.ready)) or any(map(other, self.queue))
                    or any(other(n) for n in self.busy.values() if n.status in BUSY))

    def finished(self) -> bool:
        if self.shutting_down() and self.final is None:
            if not self.concluded:
                self.concluded = True
                self.outcome()
            return True
        halted = self.halted()
        busy = any(n.status in (NodeState.SUBMITTED, NodeState.POSTRUN)
                   or (n.status is NodeState.PRERUN and (n.script is not None or not halted or n is self.final))
                   for n in self.busy.values() if n.graph.kind is not NodeKind.SERVICE)
        if busy:
            return False
        if ((self.ready or self.queue) and self.aborting is None and not self.removed and not halted
                and not self.services_alone() and not self.stranded()):
            return False
        if self.final_started and self.final in self.queue:  # its submit failed: tried again
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

    # ------------------------------------------------------------------ shutting down

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

    def remove_node_jobs(self, node: Node, reason: str) -> None:
        """condor_rm of one node's cluster (DAGMan's RemoveBatchJob); its procs are then aborted."""
        if node.cluster is not None and node.cluster > 0:
            try:
                self.schedd.act(JobAction.Remove, node.cluster, reason)
            except ScheddError:
                pass

    def remove_services(self) -> None:
        """The DAG's end does not wait for SERVICE nodes: their jobs still queued are removed,
        and the nodes are done (``Dag::RemoveServiceNodes``), unless the DAG's jobs were all
        removed already (it failed, was aborted or removed), which leaves them as they were."""
        if self.jobs_removed:
            return
        for node in self.services:
            if node.status in BUSY:
                self.remove_node_jobs(node, "DAG is exiting: SERVICE node jobs are removed.")
                node.status = NodeState.DONE

    def remove_jobs(self, reason: str) -> None:
        self.jobs_removed = True
        self.out.removing_all_jobs()
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


