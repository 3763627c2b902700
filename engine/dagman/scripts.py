"""The script queue: PRE, POST and HOLD scripts, their macros, their limits and their results.

A script starts in its node's directory from an argument list whose whole-token macros
($JOB, $RETURN, ...) are replaced as DAGMan replaces them; -maxpre and -maxpost hold scripts
back, and a DEFER status puts one back in the queue for a while.  A POST script's result
goes through the nodes log (POST_SCRIPT_TERMINATED), as DAGMan learns it.  DAGMan's
``ScriptQ`` (scriptQ.cpp) and ``Script`` (script.cpp).
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections import deque
from collections.abc import Callable
from datetime import datetime

from engine.dag import ScriptKind
from engine.dagman.config import Options
from engine.dagman.dagman_out import DagmanOut
from engine.dagman.events import INT_MAX
from engine.dagman.jobstate_log import JobstateLog
from engine.dagman.node import JOB_SKIPPED, Census, DagStatus, Node, Script
from engine.dagman.script_debug import DebugCapture
from engine.dagman.node_status import NodeState, post_script_failed_text, post_script_try_text, pre_script_failed_text
from engine.schedd.local.userlog import PostScriptTerminatedEvent, PreSkipEvent, UserLog


def _cannot_execute(path: str) -> int | None:
    """The errno of DaemonCore's ``access(executable, F_OK | X_OK)`` check, None if it passes."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno
    return None if os.access(path, os.X_OK) else errno.EACCES


def _strerror(path: str) -> str:
    try:
        os.stat(path)
    except OSError as e:
        return e.strerror
    return os.strerror(errno.ENOTDIR)


# Seconds an exiting DAGMan gives a HOLD script still running to end before it kills it.
HOLD_SCRIPT_GRACE = 10

# The macros of POST (and HOLD) scripts only (script.cpp ``checkIsPre``).
POST_MACROS = frozenset({"$JOBID", "$CLUSTERID", "$JOB_COUNT", "$SUCCESS", "$RETURN", "$EXIT_CODES",
                         "$EXIT_CODE_COUNTS", "$PRE_SCRIPT_RETURN", "$JOB_ABORT_COUNT"})


class ScriptQueue:
    """The DagMan's script queue: scripts started, reaped, deferred, and what their exit means.

    Uses the rest of the DagMan for what a result leads to: ``node_succeeded`` and
    ``node_failed`` (the node state machine), ``enqueue`` (the ready queue, once a PRE script
    succeeded), ``strict_warning``, ``count``, ``failed_count``, ``halted`` and ``shutting_down``."""

    options: Options
    clock: Callable[[], float]
    dag_dir: str
    nodes: dict[str, Node]
    census: Census
    scripts_deferred: dict[ScriptKind, int]
    scripts_waiting: dict[ScriptKind, deque[Node]]
    scripts_timer: float | None
    busy: dict[str, Node]
    final: Node | None
    dag_status: DagStatus
    hold_scripts: list[Script]
    recovering: bool
    noop_counter: int
    status_outdated: bool
    nodes_log: UserLog
    out: DagmanOut
    jobstate: JobstateLog | None

    def run_script(self, node: Node, kind: ScriptKind) -> None:
        node.status = NodeState.PRERUN if kind is ScriptKind.PRE else NodeState.POSTRUN
        self.out.running_script(kind.value, node.name)
        if self.jobstate:
            self.jobstate.script_started(node.name, kind.value, node.last_event_time, *self._job_id(node, kind))
        started = self.spawn(node, kind)
        if started is None:  # ScriptQ::Run: a script that cannot start is reaped as exit 1, never deferred
            self.out.failed_to_execute(kind.value, node.name)
            self.script_result(node, kind, 1)
            return
        node.script = Script(kind, *started, self.clock())

    def run_hold_script(self, node: Node) -> None:
        """A node job went on hold: its HOLD script runs, and its result changes nothing."""
        if ScriptKind.HOLD not in node.graph.node.scripts or self.recovering:
            return
        if self.options.max_hold and len(self.hold_scripts) >= self.options.max_hold:
            return  # DAGMan defers it; a hold that outlives the others is rare enough to skip
        self.out.running_script(ScriptKind.HOLD.value, node.name)
        started = self.spawn(node, ScriptKind.HOLD)
        if started is None:
            self.out.failed_to_execute(ScriptKind.HOLD.value, node.name)
        else:
            self.hold_scripts.append(Script(ScriptKind.HOLD, *started, self.clock()))

    def spawn(self, node: Node, kind: ScriptKind) -> tuple[subprocess.Popen, DebugCapture | None] | None:
        """Start one of the node's scripts as DAGMan does (``Script::BackgroundRun``): in the
        node's directory, the executable named as written and taken from there (never from
        PATH), its output caught for its DEBUG file if it has one.  None, with DaemonCore's
        reason in dagman.out, if it cannot start."""
        script = node.graph.node.scripts[kind]
        argv = self.script_argv(node, script.argv, kind)
        cwd = node.directory(self.dag_dir)
        if not os.path.isdir(cwd):
            self.out.line(f"Could not change to node directory {node.graph.dir}: "
                          f"Unable to chdir to {node.graph.dir}: {_strerror(cwd)}")
            return None
        executable = os.path.join(cwd, argv[0])
        problem = _cannot_execute(executable)
        if problem is not None:
            self.out.cannot_access_executable(argv[0], problem)
            return None
        debug = DebugCapture(os.path.join(cwd, script.debug_file), node.name, kind.value, argv) if script.debug_file else None
        out = debug.buffer if debug is not None else subprocess.DEVNULL
        if "/" in argv[0]:  # exec'd as written, from cwd, so that its $0 is what DAGMan's is
            executable = argv[0]
        try:
            popen = subprocess.Popen(argv, executable=executable, cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=out if script.debug_stream in ("STDOUT", "ALL") else subprocess.DEVNULL,
                                     stderr=out if script.debug_stream in ("STDERR", "ALL") else subprocess.DEVNULL)
        except OSError as e:  # the exec itself failed: a bad interpreter line, not a binary
            self.out.child_failed_before_exec(argv[0], e.errno or 0)
            if debug is not None:
                debug.discard()
            return None
        return popen, debug

    def print_script_result(self, node: Node, kind: ScriptKind, code: int) -> None:
        if kind is ScriptKind.PRE:
            ok, failed, died = (self.out.pre_script_completed_successfully, self.out.pre_script_failed,
                                self.out.pre_script_died)
        elif kind is ScriptKind.POST:
            ok, failed, died = (self.out.post_script_completed_successfully, self.out.post_script_failed,
                                self.out.post_script_died)
        else:
            return
        if code == 0:
            ok(node.name)
        elif code > 0:
            failed(node.name, code)
        else:
            died(node.name, -code)

    def _job_id(self, node: Node, kind: ScriptKind) -> tuple[int | None, int]:
        """The ``cluster.proc`` a POST line names: a NOOP node's fake id, '-' without a job."""
        if kind is ScriptKind.PRE or node.cluster is None:
            return None, 0
        return (0, INT_MAX) if node.cluster < 0 else (node.cluster, 0)

    def script_argv(self, node: Node, argv: list[str], kind: ScriptKind) -> list[str]:
        """Replace whole-token macros ($JOB, $RETURN, ...) as DAGMan does; an unknown one, or a
        POST macro in a PRE script, is a DAGMAN_USE_STRICT level 1 warning (fatal by default)."""
        macros = {
            "$JOB": node.name, "$NODE": node.name, "$RETRY": str(node.retries),
            "$MAX_RETRIES": str(node.graph.retry), "$DAG_STATUS": str(int(self.dag_status)),
            "$FAILED_COUNT": str(self.failed_count), "$FUTILE_COUNT": str(self.count(NodeState.FUTILE)),
            "$DONE_COUNT": str(self.count(NodeState.DONE)), "$QUEUED_COUNT": str(self.count(NodeState.SUBMITTED)),
            "$NODE_COUNT": str(self.census.total), "$DAGID": str(self.options.dagman_id),
        }
        if kind is not ScriptKind.PRE:
            # a proc killed by a signal counts as -1: its terminate event has no return value
            codes = [max(c, -1) for c in node.exit_codes.values() if c is not None]
            cluster = node.cluster if node.cluster is not None and node.cluster > 0 else 0
            last_proc = max(node.exit_codes, default=0)
            job_id = f"{cluster}.{last_proc}"
            if node.cluster is None:  # no job was submitted (PRE failed, submit failed): DAGMan's unset id
                cluster, job_id = -1, "-1.-1"
            macros.update({
                "$JOBID": job_id, "$CLUSTERID": str(cluster),
                "$RETURN": str(JOB_SKIPPED if node.job_skipped else node.retval if node.retval is not None else -1),
                "$PRE_SCRIPT_RETURN": str(node.pre_return if node.pre_return is not None else -1),
                "$JOB_COUNT": str(node.procs if cluster > 0 else 0), "$SUCCESS": "True" if node.successful else "False",
                "$JOB_ABORT_COUNT": str(sum(1 for c in node.exit_codes.values() if c is None)),
                "$EXIT_CODES": ",".join(str(c) for c in sorted(set(codes))),
                "$EXIT_CODE_COUNTS": ",".join(f"{c}:{codes.count(c)}" for c in sorted(set(codes))),
            })  # no $EXIT_CODE_LIST: DAGMan 23.9.6 does not know it (fatal, as any unknown macro)
        out = []
        for token in argv:
            upper = token.upper()
            if upper in macros:
                out.append(macros[upper])
                continue
            if kind is ScriptKind.PRE and upper in POST_MACROS:
                self.strict_warning(f"Warning: {upper} macro should not be used as a PRE script argument!", 1)
            elif token.startswith("$"):  # any other ($0, a lone $...), as DAGMan 23.9.6 sees it
                self.strict_warning(f"Warning: unrecognized macro {token} in node {node.name} {kind} script arguments", 1)
            out.append(token)  # passed as written when DAGMAN_USE_STRICT lets it through
        return out

    def reap_scripts(self) -> None:
        """Scripts that exited decide their nodes; deferred and waiting scripts start once their
        time is up and -maxpre/-maxpost allow, PRE scripts not while halted, as DAGMan's ScriptQ
        starts them: from the front of its waiting queue, one after each script that exits and
        all it can at each pass of the event timer (once a scan interval)."""
        self.hold_scripts = [s for s in self.hold_scripts if self._poll(s) is None]
        running = {kind: 0 for kind in ScriptKind}
        exited = []
        for node in list(self.busy.values()):
            if node.script is not None:
                code = self._poll(node.script)
                if code is None:
                    running[node.script.kind] += 1
                else:
                    exited.append((node, node.script.kind, code))
        for node, kind, code in exited:
            node.script = None
            self.script_done(node, kind, code)
            self.run_waiting_scripts(kind, running, just_one=True)
        now = self.clock()
        if self.scripts_timer is None:
            self.scripts_timer = now
        elif now >= self.scripts_timer + self.options.scan_interval:
            self.scripts_timer = now
            for kind in (ScriptKind.PRE, ScriptKind.POST):
                self.run_waiting_scripts(kind, running, just_one=False)

    def run_waiting_scripts(self, kind: ScriptKind, running: dict[ScriptKind, int], just_one: bool) -> None:
        """``ScriptQ::RunWaitingScripts``: one pass over the waiting queue; a script whose DEFER time
        is not up goes to its back, and the first that -maxpre/-maxpost (or a halt, for PRE) holds
        back goes to its back too, counted as one more deferral, and ends the pass (seen on the pool:
        with -maxpre 1 the waiting PRE scripts take turns at the front, one a scan interval)."""
        queue = self.scripts_waiting[kind]
        limit = self.options.max_pre if kind is ScriptKind.PRE else self.options.max_post
        now = self.clock()
        for _ in range(len(queue)):
            node = queue.popleft()
            if node.defer_until is None:  # dropped as DAGMan stopped its scripts
                continue
            if now < node.defer_until:
                queue.append(node)
                continue
            if (kind is ScriptKind.PRE and self.halted() and node is not self.final) or limit and running[kind] >= limit:
                queue.append(node)
                self.scripts_deferred[kind] += 1
                return
            node.defer_until = None
            running[kind] += 1
            self.run_script(node, kind)
            if just_one:
                return

    def _poll(self, script: Script) -> int | None:
        """The script's exit code (minus a signal) once it has exited; its DEBUG file gets its output then."""
        code = script.popen.poll()
        if code is not None and script.debug is not None:
            script.debug.reaped(code, int(self.clock()))
            script.debug = None
        return code

    def end_hold_scripts(self) -> None:
        """As DAGMan exits, its HOLD scripts (which nothing waits for, and a DAG that ends on a
        held job's removal starts just before) are given :data:`HOLD_SCRIPT_GRACE` seconds to
        end, then killed, and reaped, so that their DEBUG files get their output."""
        deadline = self.clock() + HOLD_SCRIPT_GRACE
        for script in self.hold_scripts:
            try:
                script.popen.wait(timeout=max(deadline - self.clock(), 0))
            except subprocess.TimeoutExpired:
                script.popen.kill()
                script.popen.wait()
            self._poll(script)
        self.hold_scripts = []

    def queue_post(self, node: Node) -> None:
        """Run the node's POST script now, or once -maxpost allows."""
        if self.options.max_post and self.running_scripts(ScriptKind.POST) >= self.options.max_post:
            node.status = NodeState.POSTRUN
            node.defer_until = self.clock()
            self.scripts_deferred[ScriptKind.POST] += 1
            self.scripts_waiting[ScriptKind.POST].append(node)
        else:
            self.run_script(node, ScriptKind.POST)

    def running_scripts(self, kind: ScriptKind) -> int:
        return sum(1 for n in self.busy.values() if n.script is not None and n.script.kind is kind)

    def script_done(self, node: Node, kind: ScriptKind, code: int) -> None:
        """A script exited: run it again later if its DEFER status says so, else its result counts."""
        if self.final is None and self.shutting_down():
            return  # DAGMan has exited
        script = node.graph.node.scripts[kind]
        if script.defer_status is not None and code == script.defer_status:
            self.out.line(f"Deferring {kind.value} script of node {node.name} for {script.defer_time or 0} seconds "
                          f"(exit status was {code})...")
            node.defer_until = self.clock() + (script.defer_time or 0)
            self.scripts_deferred[kind] += 1
            self.scripts_waiting[kind].append(node)
            return  # a deferred script logs no result: it will be STARTED again
        self.script_result(node, kind, code)

    def script_result(self, node: Node, kind: ScriptKind, code: int) -> None:
        """``ScriptQ::ReapScript``: the script's exit code decides, as the PRE or POST reaper says."""
        if self.final is None and self.shutting_down():
            return
        if kind is ScriptKind.POST:  # DAGMan learns a POST's result from this event in the nodes log
            now = datetime.fromtimestamp(self.clock()).astimezone()
            # the node's job id: its cluster, a NOOP node's fake (0.2147483647.k), 0.0.0 if none
            cluster, proc, subproc = 0, 0, 0
            if node.cluster is not None and node.cluster > 0:
                cluster = node.cluster
            elif node.cluster is not None and node.cluster < 0:
                proc, subproc = INT_MAX, -node.cluster
            self.nodes_log.write(PostScriptTerminatedEvent(
                cluster=cluster, proc=proc, subproc=subproc, time=now,
                dag_node_name=node.name, return_value=code if code >= 0 else None,
                signal_number=-code if code < 0 else None))
            self.out.event("POST_SCRIPT_TERMINATED", node.name, cluster, proc, now.timestamp(), subproc=subproc)
            self.print_script_result(node, kind, code)
            self.post_result(node, code, int(now.timestamp()))
            return
        self.print_script_result(node, kind, code)
        if self.jobstate:
            self.jobstate.script_success_or_failure(node.name, kind.value, code, node.last_event_time)
        if kind is ScriptKind.PRE:
            node.pre_return = code
            if code == 0:
                node.status = NodeState.READY  # the job waits in the ready queue, behind the throttles
                self.enqueue(node, self.options.submit_depth_first)
            elif node.graph.node.pre_skip is not None and code == node.graph.node.pre_skip:
                now = datetime.fromtimestamp(self.clock()).astimezone()
                self.noop_counter += 1
                self.out.pre_skip(node.name, code)
                self.nodes_log.write(PreSkipEvent(cluster=0, proc=INT_MAX, subproc=self.noop_counter, time=now,
                                                  dag_node_name=node.name))
                self.out.event("PRESKIP", node.name, 0, INT_MAX, now.timestamp(), subproc=self.noop_counter)
                self.status_outdated = True  # read back as an event by DAGMan
                if self.jobstate:
                    self.jobstate.job_event(node.name, "PRESKIP", 0, INT_MAX, int(now.timestamp()))
                self.node_succeeded(node, "PRE script")
            elif self.options.always_run_post and ScriptKind.POST in node.graph.node.scripts:
                node.retval = code  # the node's value stays the PRE's; its POST sees $RETURN -1004
                node.job_skipped = True
                node.successful = False
                self.run_script(node, ScriptKind.POST)
            else:
                node.retval = code
                node.error = pre_script_failed_text(status=code) if code >= 0 else pre_script_failed_text(signal_number=-code)
                self.node_failed(node, source="PRE script")

    def post_result(self, node: Node, code: int, timestamp: int) -> None:
        """A POST script's exit decides the node, whatever its job did."""
        self.status_outdated = True  # DAGMan reads it as the POST_SCRIPT_TERMINATED event
        if self.jobstate:
            cluster, proc = self._job_id(node, ScriptKind.POST)
            self.jobstate.job_event(node.name, "POST_SCRIPT_TERMINATED", cluster, proc, timestamp)  # "-" without a job
            self.jobstate.script_success_or_failure(node.name, "POST", code, node.last_event_time, cluster, proc)
        job_retval = node.retval if node.retval is not None else 0
        node.retval = code
        if code == 0:
            self.node_succeeded(node, "POST script")
        else:
            how = {"status": code} if code >= 0 else {"signal_number": -code}
            node.error = post_script_try_text(**how)
            spent = post_script_failed_text(job_retval, **how)
            self.node_failed(node, source="POST script", spent_error=spent)

    def stop_scripts(self) -> None:
        """DAGMan's RemoveRunningScripts: running PRE and POST scripts are killed (and, with a
        FINAL node to wait for, reaped as scripts that died on a signal); waiting ones dropped."""
        if any(node.script is not None for node in self.busy.values()):
            self.out.line("Removing running scripts...")
        for node in list(self.busy.values()):
            if node.script is not None:
                node.script.popen.kill()
            elif node.defer_until is not None and node is not self.final:
                node.defer_until = None
                node.status = NodeState.READY if node.status is NodeState.PRERUN else NodeState.ERROR

