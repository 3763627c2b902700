"""``<dag>.dagman.out``: the lines of DAGMan 23.9.6's debug log that people and tools read.

Every line starts with dprintf's default header, local time as ``%m/%d/%y %H:%M:%S ``
(src/condor_utils/dprintf.cpp ``formatTimeHeader`` at v23.9.6).  The texts are DAGMan's own
format strings at v23.9.6; each method names the file and function it copies.  The runner
calls one method per message and never builds these strings itself.

Left out on purpose: the ``DAGMan Runtime Statistics: [...]`` line that ``print_status``
also writes (its timings cannot match a real run anyway) and the config dump apart from
:meth:`DagmanOut.setting`.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.dagman.node_status import NodeState

DAG_STATUS_NAMES = (  # dag.cpp DAG_STATUS_NAMES, indexed by DAG_Status
    "DAG_STATUS_OK", "DAG_STATUS_ERROR", "DAG_STATUS_NODE_FAILED", "DAG_STATUS_ABORT",
    "DAG_STATUS_RM", "DAG_STATUS_CYCLE", "DAG_STATUS_HALTED",
)
_END_OF_LIST = "---------------------------------------\t<END>"
# debug.h's levels, as DAGMAN_VERBOSITY compares them (ALWAYS: dprintf D_ALWAYS, printed at any verbosity)
ALWAYS, QUIET, NORMAL, VERBOSE = 0, 1, 2, 3


def dagman_out_path(dag_file: str, outfile_dir: str | None = None) -> str:
    """``<dag>.dagman.out``: beside the DAG file, or in -outfile_dir's directory."""
    if outfile_dir:
        return os.path.join(outfile_dir, os.path.basename(dag_file) + ".dagman.out")
    return dag_file + ".dagman.out"


_TIME_FORMAT = "%m/%d/%y %H:%M:%S"  # dprintf's header and an event's braces


def event_time(t: float) -> str:
    """An event's own time as DAGMan prints it in braces (debug.cpp ``time_to_str``)."""
    return time.strftime(_TIME_FORMAT, time.localtime(t))


@dataclass(frozen=True, slots=True)
class Deferrals:
    """Throttle deferral counts and limits, for ``Dag::PrintDeferrals``."""

    max_jobs_deferred: int = 0
    max_jobs: int = 0
    max_idle_deferred: int = 0
    max_idle: int = 1000
    category_deferred: int = 0
    pre_deferred: int = 0
    max_pre: int = 20
    post_deferred: int = 0
    max_post: int = 20
    hold_deferred: int = 0
    max_hold: int = 20


@dataclass(frozen=True, slots=True)
class NodeDump:
    """What ``Job::Dump`` prints for a node (job.cpp at v23.9.6)."""

    name: str
    node_id: int  # the node's index in DAG order
    status: NodeState
    retval: int = 0
    error_text: str = ""
    submit_file: str = ""
    noop: bool = False
    pre_script: str | None = None  # command lines as written in the DAG
    post_script: str | None = None
    hold_script: str | None = None
    retry_max: int = 0
    condor_id: tuple[int, int, int] | None = None  # None: not yet submitted
    parents: Sequence[str] = field(default_factory=tuple)
    children: Sequence[str] = field(default_factory=tuple)
    waiting: bool = False  # some parent has not finished


def _names(names: Sequence[str]) -> str:
    """``Job::PrintParents``: space-separated, stopping once 1024 characters are reached."""
    buf = ""
    for i, name in enumerate(names):
        if len(buf) >= 1024:
            break
        buf += (" " if i else "") + name
    return buf


class DagmanOut:
    """Appends to one dagman.out, flushing each line.

    ``name`` is DAGMan's argv[0] as the banner shows it (``condor_scheduniv_exec.<id>`` when
    the schedd starts it); ``clock`` gives the header times, for tests; ``verbosity`` is
    DAGMAN_VERBOSITY.
    """

    def __init__(self, path: str | os.PathLike[str], *, pid: int | None = None,
                 name: str = "condor_dagman", clock: Callable[[], float] = time.time, verbosity: int = VERBOSE) -> None:
        self.verbosity = verbosity
        self.path = os.fspath(path)
        self.pid = os.getpid() if pid is None else pid
        self.name = name
        self._clock = clock
        try:  # dprintf_setup.cpp: the log's age is taken before anything is written to it
            st = os.stat(self.path)
            self._last_touched: float | None = max(st.st_mtime, st.st_ctime)
        except FileNotFoundError:
            self._last_touched = None
        self._file = open(self.path, "a", encoding="utf-8", errors="surrogateescape")
        self._header_time, self._header = -1, ""

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> DagmanOut:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def line(self, text: str, level: int = NORMAL) -> None:
        """One dprintf call: the header, then ``text`` and a newline; left out when ``level`` is
        above DAGMAN_VERBOSITY (``debug_printf``; ``ALWAYS`` is dprintf's D_ALWAYS)."""
        if level > self.verbosity:
            return
        now = int(self._clock())
        if now != self._header_time:
            self._header_time, self._header = now, time.strftime(_TIME_FORMAT + " ", time.localtime(now))
        self._file.write(f"{self._header}{text}\n")

    def flush(self) -> None:
        """Once a cycle: a reader sees whole cycles, and a busy DAG is not slowed by a write per line."""
        self._file.flush()

    # -- start and end (daemon_core_main.cpp dc_main / DC_Exit) --------------------------------

    def starting_up(self, *, version: str, platform: str, exe_path: str | None = None,
                    uid: int | None = None) -> None:
        """The DaemonCore banner; ``version`` and ``platform`` are the full ``$CondorVersion: ...
        $`` and ``$CondorPlatform: ... $`` strings."""
        stars = "*" * 54
        self.line(stars, ALWAYS)
        self.line(f"** {self.name} (CONDOR_DAGMAN) STARTING UP", ALWAYS)
        if exe_path:
            self.line(f"** {exe_path}", ALWAYS)
        self.line("** SubsystemInfo: name=DAGMAN type=DAGMAN(9) class=CLIENT(2)", ALWAYS)
        self.line("** Configuration: subsystem:DAGMAN local:<NONE> class:CLIENT", ALWAYS)
        self.line(f"** {version}", ALWAYS)
        self.line(f"** {platform}", ALWAYS)
        self.line(f"** PID = {self.pid} RealUID = {os.getuid() if uid is None else uid}", ALWAYS)
        if self._last_touched is None:
            self.line(f"** Log last touched time unavailable ({os.strerror(errno.ENOENT)})", ALWAYS)
        else:
            t = time.localtime(self._last_touched)
            self.line(f"** Log last touched {t.tm_mon}/{t.tm_mday} "
                      f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}", ALWAYS)
        self.line(stars, ALWAYS)

    def setting(self, knob: str, value: object) -> None:
        """dagman_main.cpp ``Dagman::Config``: ``DAGMAN_MAX_JOBS_IDLE setting: 1000``."""
        if isinstance(value, bool):
            shown = "True" if value else "False"
        else:
            shown = int(value) if isinstance(value, float) and value.is_integer() else value
        name = "allow_events (DAGMAN_ALLOW_EVENTS)" if knob == "DAGMAN_ALLOW_EVENTS" else knob
        self.line(f"{name} setting: {shown}")

    def default_node_log(self, path: str) -> None:
        self.line(f"Default node log file is: <{path}>")

    def parsing(self, dag_file: str, splices: Sequence[tuple[str, str, str]] = ()) -> None:
        """What DAGMan says as it reads its one DAG file (``main_init``, ``parse``): then each
        SPLICE as it reads it, (name, DIR or ".", file), a nested one right after its parent."""
        for line in (f"DAG Lockfile will be written to {dag_file}.lock", f"DAG Input file is {dag_file}",
                     "Parsing 1 dagfiles", f"Parsing {dag_file} ..."):
            self.line(line)
        for name, directory, file in splices:
            self.line(f"Parsing Splice {name} in directory {directory} with file {file}", VERBOSE)

    def exiting_with_status(self, status: int) -> None:
        """The last line DAGMan writes (daemon_core_main.cpp ``DC_Exit``)."""
        self.line(f"**** {self.name} (condor_DAGMAN) pid {self.pid} EXITING WITH STATUS {status}", ALWAYS)

    # -- recovery (dag.cpp Dag::Bootstrap) ----------------------------------------------------

    def running_in_recovery_mode(self) -> None:
        self.line("Running in RECOVERY mode... " + ">" * 30)

    def recovery_complete(self) -> None:
        """``Dag::ProcessLogEvents`` once recovery has read the nodes log (at verbose levels only)."""
        if self.verbosity >= VERBOSE:
            for text in ("    " + "-" * 30, "       HTCondor Recovery Complete", "    " + "-" * 30):
                self.line(text)

    def done_with_recovery_mode(self) -> None:
        self.line("...done with RECOVERY mode " + "<" * 30)

    # -- status (dagman_main.cpp print_status, dag.cpp Dag::PrintDeferrals) ---------------------

    def status(self, *, dag_status: int, total: int, done: int, pre: int, queued: int,
               post: int, ready: int, unready: int, failed: int, futile: int,
               held_procs: int, deferrals: Deferrals | None = None) -> None:
        """``DAG status: ...``, the ``Of N nodes total:`` table and the held-proc count."""
        self.line(f"DAG status: {dag_status} ({DAG_STATUS_NAMES[dag_status]})", VERBOSE)
        self.line(f"Of {total} nodes total:", VERBOSE)
        self.line(" Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile", VERBOSE)
        self.line("  ===     ===      ===     ===     ===        ===      ===      ===", VERBOSE)
        self.line(f"{done:5d}   {pre:5d}    {queued:5d}   {post:5d}   {ready:5d}      "
                  f"{unready:5d}    {failed:5d}    {futile:5d}", VERBOSE)
        self.line(f"{held_procs} job proc(s) currently held", VERBOSE)
        if deferrals is not None:
            self.deferrals(deferrals, force=False)

    def deferrals(self, d: Deferrals, *, force: bool) -> None:
        """The ``Note: ... deferrals`` lines: only non-zero ones unless ``force``."""
        if d.max_jobs_deferred or force:
            self.line(f"Note: {d.max_jobs_deferred} total job deferrals because of -MaxJobs "
                      f"limit ({d.max_jobs})")
        if d.max_idle_deferred or force:
            self.line(f"Note: {d.max_idle_deferred} total job deferrals because of -MaxIdle "
                      f"limit ({d.max_idle})")
        if d.category_deferred or force:
            self.line(f"Note: {d.category_deferred} total job deferrals because of node "
                      "category throttles")
        if d.pre_deferred or force:
            self.line(f"Note: {d.pre_deferred} total PRE script deferrals because of -MaxPre "
                      f"limit ({d.max_pre}) or DEFER")
        if d.post_deferred or force:
            self.line(f"Note: {d.post_deferred} total POST script deferrals because of "
                      f"-MaxPost limit ({d.max_post}) or DEFER")
        if d.hold_deferred or force:
            self.line(f"Note: {d.hold_deferred} total HOLD script deferrals because of "
                      f"-MaxHold limit ({d.max_hold}) or DEFER")

    # -- submission (dag.cpp SubmitNodeJob / ProcessSuccessfulSubmit / ProcessFailedSubmit) ----

    def submitting_node(self, node: str) -> None:
        self.line(f"Submitting HTCondor Node {node} job(s)...")

    def submitting_from(self, node: str, submit_file: str | None) -> None:
        """dagman_submit.cpp ``direct_condor_submit``; None for an inline description."""
        if submit_file is None:
            self.line(f"Submitting node {node} from inline description using direct job submission")
        else:
            self.line(f"Submitting node {node} from file {submit_file} using direct job submission")

    def cannot_open_submit_file(self, submit_file: str, error: OSError) -> None:
        code = error.errno or 0
        self.line(f"ERROR: submit attempt failed, errno={code} {os.strerror(code)}", QUIET)
        self.line(f"could not open submit file : {submit_file} - can't open file {submit_file}: {os.strerror(code)}", QUIET)

    def submit_dag_failed(self, dag_file: str, node: str) -> None:
        """A SUBDAG node whose ``condor_submit_dag -no_submit`` failed (its DAG file is missing)."""
        self.line(f"ERROR: condor_submit_dag -no_submit failed on DAG file {dag_file}.", QUIET)
        self.line(f"ERROR: condor_submit_dag -no_submit failed for node {node}.", QUIET)

    def submit_try_failed(self, tries: int, attempts: int, delay: int) -> None:
        self.line(f"Job submit try {tries}/{attempts} failed, will try again in >= {delay} "
                  f"second{'' if delay == 1 else 's'}.")

    def submit_cycle_too_long(self, elapsed: int, interval: float) -> None:
        self.line(f"Warning: Submit cycle elapsed time ({elapsed} s) has exceeded log scan interval "
                  f"({int(interval)} s); bailing out of submit loop", QUIET)

    def assigned_id(self, cluster: int, proc: int, subproc: int = 0) -> None:
        self.line(f"\tassigned HTCondor ID ({cluster}.{proc}.{subproc})", VERBOSE)

    def just_submitted(self, count: int) -> None:
        """dagman_main.cpp ``condor_event_timer``, after a submit cycle."""
        self.line(f"Just submitted {count} job{'' if count == 1 else 's'} this cycle...", VERBOSE)

    def submit_failed_after(self, tries: int) -> None:
        self.line(f"Job submit failed after {tries} tr{'y' if tries == 1 else 'ies'}.", QUIET)

    def shortcutting_retries(self, node: str) -> None:
        self.line(f"Shortcutting node {node} retries because of submit failure(s)")

    # -- events (dag.cpp Dag::PrintEvent, ProcessTerminatedEvent, ProcessJobProcEnd) -----------

    def event(self, event: str, node: str, cluster: int, proc: int, timestamp: float,
              subproc: int = 0, recovery: bool = False) -> None:
        """``event`` as ``JobEventType.name``: ``Event: ULOG_SUBMIT for HTCondor Node A ...``."""
        self.line(f"Event: ULOG_{event.removeprefix('ULOG_')} for HTCondor Node {node} "
                  f"({cluster}.{proc}.{subproc}) {{{event_time(timestamp)}}}"
                  f"{' [recovery mode]' if recovery else ''}", VERBOSE)

    def hold_reason(self, reason: str) -> None:
        """dag.cpp ``ProcessHeldEvent``, after the JOB_HELD event line."""
        self.line(f"  Hold reason: {reason}", VERBOSE)

    def number_of_idle_job_procs(self, count: int) -> None:
        self.line(f"Number of idle job procs: {count}", VERBOSE)

    def job_proc_completed_successfully(self, node: str, cluster: int, proc: int,
                                        subproc: int = 0) -> None:
        self.line(f"Node {node} job proc ({cluster}.{proc}.{subproc}) completed successfully.")

    def job_proc_failed(self, node: str, cluster: int, proc: int, *, status: int | None = None,
                        signal_number: int | None = None, subproc: int = 0) -> None:
        how = f"status {status}" if signal_number is None else f"signal {signal_number}"
        self.line(f"Node {node} job proc ({cluster}.{proc}.{subproc}) failed with {how}.", QUIET)

    def node_job_completed(self, node: str) -> None:
        """All the node's procs have left the queue."""
        self.line(f"Node {node} job completed")

    # -- scripts (scriptQ.cpp ScriptQ::Run, dag.cpp PreScriptReaper / ProcessPostTermEvent) -----

    def running_script(self, script: str, node: str) -> None:
        """``script`` is PRE, POST or HOLD: ``Running PRE script of Node A...``."""
        self.line(f"Running {script} script of Node {node}...")

    def cannot_access_executable(self, executable: str, error: int) -> None:
        """DaemonCore's ``Create_Process``: the executable does not exist or cannot be run."""
        self.line(f'Create_Process: Cannot access specified executable "{executable}": '
                  f"errno = {error} ({os.strerror(error)})")

    def child_failed_before_exec(self, executable: str, error: int) -> None:
        """DaemonCore's ``Create_Process``: exec failed in the child (a bad ``#!`` line, say)."""
        self.line(f"Create_Process({executable}): child failed with errno {error} "
                  f"({os.strerror(error)}) before exec()", ALWAYS)

    def failed_to_execute(self, script: str, node: str) -> None:
        """scriptQ.cpp ``ScriptQ::Run``; the script then counts as having exited 1."""
        self.line(f"Error: Failed to execute {script} for Node {node}")

    def pre_script_completed_successfully(self, node: str) -> None:
        self.line(f"PRE Script of node {node} completed successfully.")

    def pre_script_failed(self, node: str, status: int) -> None:
        self.line(f"PRE Script of Job {node} failed with status {status}", QUIET)  # "Job" sic

    def pre_script_died(self, node: str, signal_number: int) -> None:
        self.line(f"PRE Script of node {node} died on signal {signal_number} "
                  f"({signal.strsignal(signal_number)})", QUIET)

    def pre_skip(self, node: str, value: int) -> None:
        self.line(f"PRE_SKIP return value {value} indicates we are done (successfully) "
                  f"with node {node}")

    def post_script_completed_successfully(self, node: str) -> None:
        self.line(f"POST Script of node {node} completed successfully.")

    def post_script_failed(self, node: str, status: int) -> None:
        self.line(f"POST Script of node {node} failed with status {status}")
        self.line(f"POST for Node {node} returned {status}", QUIET)

    def post_script_died(self, node: str, signal_number: int) -> None:
        self.line(f"POST Script of node {node} died on signal {signal_number}")

    def retrying_node(self, node: str, retry: int, retry_max: int) -> None:
        """dag.cpp ``RestartNode``; ``retry`` counts from 1."""
        self.line(f"Retrying node {node} (retry #{retry} of {retry_max})...", VERBOSE)

    # -- the end (dagman_main.cpp condor_event_timer, main_shutdown_rescue; dag.cpp) ---------

    def all_jobs_completed(self, deferrals: Deferrals) -> None:
        self.line("All jobs Completed!")
        self.deferrals(deferrals, force=True)

    def jobs_failed(self, nodes: Sequence[NodeDump]) -> None:
        """``ERROR: the following job(s) failed:`` and ``Dag::PrintJobList(STATUS_ERROR)``.

        (25.x says "Node(s)"; 23.9.6 says "job(s)".)
        """
        self.line("ERROR: the following job(s) failed:", QUIET)
        for node in nodes:
            self.node_dump(node)
        self.line(_END_OF_LIST, QUIET)

    def node_dump(self, n: NodeDump, level: int = QUIET) -> None:
        """``Job::Dump``; the state name keeps DAGMan's padding to 16 characters."""
        self.line("---------------------- Job ----------------------", level)
        self.line(f"      Node Name: {n.name}", level)
        self.line(f"           Noop: {'true' if n.noop else 'false'}", level)
        self.line(f"         NodeID: {n.node_id}", level)
        self.line(f"    Node Status: STATUS_{n.status.name:<9}", level)
        self.line(f"Node return val: {n.retval}", level)
        if n.status == NodeState.ERROR:
            self.line(f"          Error: {n.error_text}", level)
        self.line(f"Job Submit File: {n.submit_file}", level)
        if n.pre_script is not None:
            self.line(f"     PRE Script: {n.pre_script}", level)
        if n.post_script is not None:
            self.line(f"    POST Script: {n.post_script}", level)
        if n.hold_script is not None:
            self.line(f"    HOLD Script: {n.hold_script}", level)
        if n.retry_max > 0:
            self.line(f"          Retry: {n.retry_max}", level)
        if n.condor_id is None:
            self.line(" HTCondor Job ID: [not yet submitted]", level)
        else:
            c, p, s = n.condor_id
            self.line(f" HTCondor Job ID: ({c}.{p}.{s})", level)
        self.line(f"PARENTS: {_names(n.parents)} WAITING: {int(n.waiting)} "
                  f"CHILDREN: {_names(n.children)}", level)

    def aborting_dag_on_abort_value(self, source: str) -> None:
        """ABORT-DAG-ON hit; ``source`` is "job", "PRE script" or "POST script"."""
        self.line(f"Aborting DAG because we got the ABORT exit value from a {source}", QUIET)

    def aborting_retries(self, node: str, value: int | None, final_running: bool) -> None:
        """A node with retries left that UNLESS-EXIT (or a running FINAL node) keeps from its next try."""
        why = "because final node is running " if final_running else ""
        self.line(f"Aborting further retries of node {node} {why}(last attempt returned {value})")

    def dag_is_halted(self, halt_file: str, final_running: bool) -> None:
        self.line(f"DAG is halted because halt file {halt_file} exists", QUIET)
        if final_running:
            self.line("Continuing to allow final node to run", QUIET)

    def exiting_because_halted(self) -> None:
        self.line("Exiting because DAG is halted and no jobs or scripts are running", QUIET)

    def checking_for_cycle(self) -> None:
        self.line("ERROR: DAG finished but not all nodes are complete -- checking for a cycle...", QUIET)

    def cycle_exists(self) -> None:
        self.line("... ERROR: a cycle exists in the dag, please check input", QUIET)

    def no_cycle_found(self, nodes: Sequence[NodeDump]) -> None:
        """Not all nodes ran, yet there is no cycle: ``Dag::PrintJobList`` of every node follows."""
        self.line("... ERROR: no cycle found; unknown error condition", QUIET)
        for node in nodes:
            self.node_dump(node, NORMAL)
        self.line(_END_OF_LIST, NORMAL)

    def received_sigusr1(self) -> None:
        """condor_rm of the DAGMan job."""
        self.line("Received SIGUSR1", QUIET)

    def aborting_dag(self) -> None:
        self.line("Aborting DAG...", QUIET)

    def starting_final_node(self) -> None:
        self.line("Starting final node...", QUIET)

    def pending_nodes(self, seconds: int, nodes: Sequence[tuple[str, int, NodeState]]) -> None:
        """``Dag::PrintPendingNodes``: (name, cluster or -1, state) of the nodes in PRE, queued or POST."""
        self.line(f"{seconds} seconds since last log event")
        self.line("Pending DAG nodes:", ALWAYS)
        for name, cluster, state in nodes:
            self.line(f"  Node {name}, HTCondor ID {cluster}, status STATUS_{state.name}", ALWAYS)

    def max_job_holds_reached(self, cluster: int, node: str, limit: int) -> None:
        self.line(f"Total hold count for job {cluster} (node {node})has reached DAGMAN_MAX_JOB_HOLDS ({limit}); "
                  "all job proc(s) for this node will now be removed", VERBOSE)

    def writing_rescue_dag(self, path: str) -> None:
        self.line(f"Writing Rescue DAG to {path}...")

    def writing_save_file(self, path: str) -> None:
        self.line(f"Writing Save File to {path}...")

    def removing_submitted_jobs(self) -> None:
        self.line("Removing submitted jobs...")

    def removing_all_jobs(self) -> None:
        """``Dagman::RemoveRunningJobs``: the condor_rm of every job of the DAG."""
        self.line("Removing any/all submitted HTCondor jobs...")

    def wrote_metrics_file(self, path: str) -> None:
        self.line(f"Wrote metrics file {path}.")


# -- reading: what a monitor takes from the lines above -----------------------------------------

@dataclass(frozen=True, slots=True)
class OutRecord:
    """One line of dagman.out that tells of the DAG or a node.

    ``what`` names the message (the writer's method, as DAGMan prints it); ``node`` is the node
    it is about ("" for the DAG's own lines); ``values`` its numbers and texts:

    ``starting_up`` (the DAGMan job's ClusterId, None if the banner does not say); ``recovery`` (True entering, False leaving); ``status`` (dag_status, total,
    done, pre, queued, post, ready, unready, failed, futile); ``held_procs`` (n);
    ``submitting``; ``assigned`` (job); ``event`` (event name, job); ``proc_ok`` (job);
    ``proc_failed`` (job, "status" or "signal", n); ``job_completed``; ``script`` (PRE, POST or
    HOLD); ``pre_ok``; ``pre_failed`` (n); ``pre_died`` (signal); ``pre_skip`` (value);
    ``post_ok``; ``post_failed`` (n); ``post_died`` (signal); ``retrying`` (retry, of);
    ``submit_failed`` (tries); ``shortcutting``; ``retries_ended`` (UNLESS-EXIT or a running
    FINAL node ended the retries left); ``failed_node`` (return value, error text:
    the end-of-run list of failed nodes); ``abort_value`` (source); ``halted_exit``;
    ``removing``; ``rescue_written`` (path); ``rescue_used`` (path); ``error`` (text: any other
    ``ERROR:`` line, such as why DAGMan could not start); ``warning`` (text: a ``Warning:``
    line, which DAGMAN_USE_STRICT may make the error that stops DAGMan); ``exiting`` (status).
    Jobs are ``cluster.proc``.
    """

    time: float
    what: str
    node: str = ""
    values: tuple = ()
    at: float | None = None  # an event's own time, from its braces: in recovery mode, not the line's


_SCHEDUNIV_EXEC = re.compile(r"condor_scheduniv_exec\.(\d+)\.\d+")


def banner_name(dagman_id: int) -> str:
    """DAGMan's argv[0] as its banner shows it: the schedd's name for the scheduler-universe job
    it starts (``condor_scheduniv_exec.<cluster>.<proc>``), which tells each run of a DAG apart
    in the one dagman.out they share; ``condor_dagman`` when run by hand (``dagman_id`` 0)."""
    return f"condor_scheduniv_exec.{dagman_id}.0" if dagman_id else "condor_dagman"


def dagman_id_of(name: str) -> int | None:
    """The DAGMan job a banner's name says started this run: a schedd runs a scheduler-universe
    job as ``condor_scheduniv_exec.<cluster>.<proc>``; None for DAGMan run by hand."""
    m = _SCHEDUNIV_EXEC.fullmatch(name)
    return int(m.group(1)) if m else None


_HEADER_LEN = len("11/26/26 15:30:01 ")


def _event_at(text: str | None) -> float | None:
    """The time :func:`event_time` printed, None if there is none or it cannot be read."""
    try:
        return None if text is None else time.mktime(time.strptime(text, _TIME_FORMAT))
    except ValueError:
        return None

_JOB = r"\((-?\d+)\.(-?\d+)\.-?\d+\)"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(what, re.compile(pattern)) for what, pattern in (
    ("event", rf"Event: ULOG_(\w+) for HTCondor Node (\S+) {_JOB}(?: {{([^}}]+)}})?"),
    ("status", r"DAG status: (\d+) \("),
    ("submitting", r"Submitting HTCondor Node (\S+) job\(s\)\.\.\.$"),
    ("assigned", rf"\tassigned HTCondor ID {_JOB}"),
    ("proc_ok", rf"Node (\S+) job proc {_JOB} completed successfully\.$"),
    ("proc_failed", rf"Node (\S+) job proc {_JOB} failed with (status|signal) (-?\d+)\.$"),
    ("job_completed", r"Node (\S+) job completed$"),
    ("script", r"Running (PRE|POST|HOLD) script of Node (\S+)\.\.\.$"),
    ("pre_ok", r"PRE Script of node (\S+) completed successfully\.$"),
    ("pre_failed", r"PRE Script of Job (\S+) failed with status (-?\d+)$"),
    ("pre_died", r"PRE Script of node (\S+) died on signal (\d+)"),
    ("pre_skip", r"PRE_SKIP return value (-?\d+) indicates we are done \(successfully\) with node (\S+)$"),
    ("post_ok", r"POST Script of node (\S+) completed successfully\.$"),
    ("post_failed", r"POST Script of node (\S+) failed with status (-?\d+)$"),
    ("post_died", r"POST Script of node (\S+) died on signal (\d+)$"),
    ("retrying", r"Retrying node (\S+) \(retry #(\d+) of (\d+)\)\.\.\.$"),
    ("held_procs", r"(\d+) job proc\(s\) currently held$"),
    ("submit_failed", r"Job submit failed after (\d+) tr"),
    ("shortcutting", r"Shortcutting node (\S+) retries because of submit failure"),
    ("retries_ended", r"Aborting further retries of node (\S+) "),
    ("starting_up", r"\*\* (\S+) \(CONDOR_DAGMAN\) STARTING UP$"),
    ("exiting", r"\*\*\*\* \S+ \(condor_DAGMAN\) pid \d+ EXITING WITH STATUS (-?\d+)$"),
    ("recovery", r"(Running in RECOVERY mode|\.\.\.done with RECOVERY mode)"),
    ("abort_value", r"Aborting DAG because we got the ABORT exit value from a (.+)$"),
    ("halted_exit", r"Exiting because DAG is halted"),
    ("removing", r"Received SIGUSR1$"),
    ("rescue_written", r"Writing Rescue DAG to (.+)\.\.\.$"),
    ("rescue_used", r"USING RESCUE DAG (.+)$"),
    ("error", r"ERROR: (.+)$"),
    ("warning", r"Warning: (.+)$"),
    ("parse_failed", r"Failed to parse (\S+)$"),  # 23.9.6 gives no ERROR line for some DAGs it refuses
)]
# The cheap test a line passes before its patterns are tried: most lines of a busy DAG's log
# (status tables, idle proc counts, DAGMan's statistics) tell of no node.
_FIRST_WORDS = ("Event", "DAG", "Submit", "\tassi", "Node", "Runni", "PRE", "POST", "Retry", "Job s", "Short",
                "** ", "**** ", "...do", "Abort", "Exiti", "Recei", "Writi", "USING", "ERROR: ",
                "Failed to parse ", "Warning: ")
_COUNTS = re.compile(r"\s*(\d+)" * 8 + r"\s*$")
_DUMP = re.compile(r"\s*(Node Name|Node return val|Error|Node Status): ?(.*)$")


_PRE_WORDS = ("script", "pre_ok", "pre_failed", "pre_died", "pre_skip", "submitting", "retrying")


def failed_at_pre(path: str) -> dict[str, tuple[str, int]]:
    """The nodes whose last word in the dagman.out ``path`` is their PRE script's failure, with
    DAGMan's words for it and the retry it was (its last "Retrying node" of that run, else 0): a
    node with no retry left fails there, its job never submitted, and nothing but this log tells
    of it (23.9.6 writes no event of a PRE script to the nodes log).  A retry, or a DAGMan run
    again in recovery, runs the PRE script again and ends that word."""
    last: dict[str, OutRecord] = {}
    retries: dict[str, int] = {}
    try:
        records = DagmanOutReader(path).read()
    except FileNotFoundError:
        return {}
    for record in records:
        if record.what == "starting_up":  # a new run counts its retries from 0
            retries.clear()
        elif record.what in _PRE_WORDS:
            last[record.node] = record
            if record.what == "retrying":
                retries[record.node] = record.values[0]
    return {node: (f"PRE script failed with status {r.values[0]}" if r.what == "pre_failed" else
                   f"PRE script died on signal {r.values[0]} ({signal.strsignal(r.values[0])})", retries.get(node, 0))
            for node, r in last.items() if r.what in ("pre_failed", "pre_died")}


class DagmanOutReader:
    """The records of a dagman.out as it grows: each :meth:`read` gives those of the lines
    written since the last one (only whole lines).  A file replaced or cut short is read again
    from its top.  ``OSError`` (the file cannot be read from here) is left to the caller."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._inode: int | None = None
        self._offset = 0
        self._partial = b""
        self._pending: tuple[str, float] | None = None  # a status table being read: its "Of N" line
        self._status: tuple[int, float] | None = None  # the DAG status of the table being read
        self._dump: dict[str, str] | None = None  # a failed node's dump being read
        self._times: tuple[str, float] = ("", 0.0)
        self.restarted = False  # the last read began again from the top (a new file)
        self.last_line_at: float | None = None  # the time in the header of the newest line

    def read(self) -> list[OutRecord]:
        with open(self.path, "rb") as f:
            st = os.fstat(f.fileno())
            self.restarted = st.st_ino != self._inode or st.st_size < self._offset
            if self.restarted:
                self._inode, self._offset, self._partial = st.st_ino, 0, b""
                self._pending = self._status = self._dump = None
            f.seek(self._offset)
            data = f.read()
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        records: list[OutRecord] = []
        for raw in lines:
            self._line(raw.decode("utf-8", errors="replace"), records)
        return records

    def _time(self, header: str) -> float:
        if header != self._times[0]:
            try:
                self._times = (header, time.mktime(time.strptime(header, _TIME_FORMAT)))
            except ValueError:
                return self._times[1]
        return self._times[1]

    def _line(self, line: str, records: list[OutRecord]) -> None:
        if len(line) < _HEADER_LEN or line[2] != "/" or line[17] != " ":
            return
        t = self._time(line[:17])
        self.last_line_at = t
        text = line[_HEADER_LEN:]
        if self._pending is not None:  # "Of N nodes total:", two heading lines, then the counts
            self._table(text, t, records)
            return
        if self._dump is not None:
            self._dump_line(text, t, records)
            return
        if text.startswith("Of ") and text.endswith(" nodes total:") and self._status is not None:
            self._pending = (text, 0)
            return
        if text == "ERROR: the following job(s) failed:":
            self._dump = {}
            return
        if not text.startswith(_FIRST_WORDS):
            return
        for what, pattern in _PATTERNS:
            m = pattern.match(text)
            if m:
                self._record(what, m.groups(), t, records)
                return

    def _table(self, text: str, t: float, records: list[OutRecord]) -> None:
        first, seen = self._pending
        if seen < 2:
            self._pending = (first, seen + 1)
            return
        self._pending = None
        m = _COUNTS.match(text)
        status, self._status = self._status, None
        if m and status is not None:
            total = int(first.split()[1])
            records.append(OutRecord(t, "status", "", (status[0], total, *map(int, m.groups()))))

    def _dump_line(self, text: str, t: float, records: list[OutRecord]) -> None:
        dump = self._dump
        if text.startswith("----------------------") or text.startswith("---------------------------------------"):
            if dump.get("Node Name"):
                value = dump.get("Node return val", "")
                records.append(OutRecord(t, "failed_node", dump["Node Name"],
                                         (int(value) if value.lstrip("-").isdigit() else None, dump.get("Error", ""))))
            self._dump = None if "<END>" in text else {}
            return
        m = _DUMP.match(text)
        if m:
            dump[m.group(1)] = m.group(2).strip()

    def _record(self, what: str, groups: tuple, t: float, records: list[OutRecord]) -> None:
        def job(cluster: str, proc: str) -> str:
            return f"{cluster}.{proc}"

        if what == "status":
            self._status = (int(groups[0]), t)
            return
        if what == "event":
            name, node, cluster, proc, at = groups
            at_s = t if at == self._times[0] else _event_at(at)  # the line's own time but in recovery mode
            records.append(OutRecord(t, what, node, (name, job(cluster, proc)), at_s))
        elif what == "assigned":
            records.append(OutRecord(t, what, "", (job(*groups),)))
        elif what == "proc_ok":
            records.append(OutRecord(t, what, groups[0], (job(groups[1], groups[2]),)))
        elif what == "proc_failed":
            records.append(OutRecord(t, what, groups[0], (job(groups[1], groups[2]), groups[3], int(groups[4]))))
        elif what == "script":
            records.append(OutRecord(t, what, groups[1], (groups[0],)))
        elif what == "pre_skip":
            records.append(OutRecord(t, what, groups[1], (int(groups[0]),)))
        elif what in ("pre_failed", "pre_died", "post_failed", "post_died"):
            records.append(OutRecord(t, what, groups[0], (int(groups[1]),)))
        elif what == "retrying":
            records.append(OutRecord(t, what, groups[0], (int(groups[1]), int(groups[2]))))
        elif what in ("held_procs", "submit_failed", "exiting"):
            records.append(OutRecord(t, what, "", (int(groups[0]),)))
        elif what == "recovery":
            records.append(OutRecord(t, what, "", (groups[0].startswith("Running"),)))
        elif what in ("abort_value", "rescue_written", "rescue_used", "error", "warning", "parse_failed"):
            records.append(OutRecord(t, what, "", (groups[0],)))
        elif what in ("submitting", "job_completed", "pre_ok", "post_ok", "shortcutting", "retries_ended"):
            records.append(OutRecord(t, what, groups[0]))
        elif what == "starting_up":
            records.append(OutRecord(t, what, "", (dagman_id_of(groups[0]),)))
        else:  # halted_exit, removing
            records.append(OutRecord(t, what))
