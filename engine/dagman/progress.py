"""How far a DAG has got, node by node, as a monitor reads it from DAGMan's own files.

DAGMan's job ad carries node counts that DAGMan refreshes every DAGMAN_QUEUE_UPDATE_INTERVAL
(300 s), and the node status file is optional and at most as fresh as its interval.  Every
DAGMan writes ``<dag>.dagman.out`` as things happen, on both backends, so this replays it over
the DAG file: every node (also those that have not run: unready, ready, futile), in run order,
with DAGMan's state for it (:class:`NodeState`, as the node status file names them), its retries,
its job, its exit code and why (a failure as DAGMan words it, the parent whose failure made it
futile, the parents it waits for).  Only the current run counts: the lines since DAGMan last
started, over the DONE nodes of the DAG file and of the rescue DAG it started from.

No format is read here: the DAG file through :mod:`engine.dag`, dagman.out through
:class:`engine.dagman.dagman_out.DagmanOutReader`.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.dag import DagError, Graph, NodeKind, ScriptKind, load_graph, parse_file
from engine.dag.rescue import read_rescue, rescue_files
from engine.dagman.dagman_out import DagmanOutReader, OutRecord, dagman_out_path
from engine.dagman.node_status import (NodeState, SUBMIT_FAILED_TEXT, after_retries_text, job_proc_failed_text,
                                       post_script_failed_text, pre_script_failed_text)

STATE_WORDS = {NodeState.NOT_READY: "unready", NodeState.READY: "ready", NodeState.PRERUN: "pre",
               NodeState.SUBMITTED: "queued", NodeState.POSTRUN: "post", NodeState.DONE: "done",
               NodeState.ERROR: "failed", NodeState.FUTILE: "futile"}
"""One word per node state, in the order of dagman.out's table (Done, Pre, Queued, Post, Ready,
Un-Ready, Failed, Futile)."""
EXIT_RESTART = 3  # dagman_main.h: DAGMan stopped (its job held or evicted) and recovers when it runs again
ACTIVE = (NodeState.PRERUN, NodeState.SUBMITTED, NodeState.POSTRUN)
MAX_NAMED = 3  # parents a "why" names before "and N more"


@dataclass(frozen=True)
class NodeScript:
    """A PRE, POST or HOLD script: its command line, and the file its output goes to (DEBUG), if any."""

    command: str
    output: str | None = None


@dataclass(frozen=True)
class NodeProgress:
    """One node as DAGMan sees it now."""

    name: str
    state: NodeState
    kind: str = "job"  # job, subdag, noop, final, service, provisioner, join
    retries: int = 0  # retries DAGMan has made
    retry_max: int = 0  # RETRY n
    job: str | None = None  # its current or last HTCondor job, "cluster.proc"
    held: bool = False  # its job is held (as far as the events say: a job submitted on hold has none)
    running: bool = False  # its job has started and not ended
    exit_code: int | None = None  # the node's return value: its job's exit code, or its script's
    why: str = ""  # what DAGMan says of a failed node, or why a node waits or will never run
    since: float | None = None  # when its state last changed (None: not in this run)
    parents: tuple[str, ...] = ()
    directory: str = ""  # absolute: where its jobs and scripts start
    submit_file: str | None = None  # absolute; a SUBDAG node's DAG file
    scripts: dict[str, NodeScript] = field(default_factory=dict)  # PRE, POST, HOLD

    @property
    def word(self) -> str:
        return STATE_WORDS[self.state]

    @property
    def subdag(self) -> str | None:
        """The DAG file a SUBDAG EXTERNAL node runs."""
        return self.submit_file if self.kind == "subdag" else None


@dataclass(frozen=True)
class DagProgress:
    """A DAG's nodes and counts as its dagman.out says now.

    ``counts`` are the nodes per :data:`STATE_WORDS` word, SERVICE nodes left out as DAGMan
    leaves them out of its own counts (they are in ``nodes``).  ``read_error`` says why the files
    could not be read from here ("" if they could); then the lists are empty."""

    dag_file: str
    out_file: str
    nodes: tuple[NodeProgress, ...] = ()  # in run order: parents first, ties in the DAG file's order
    counts: dict[str, int] = field(default_factory=dict)
    dag_status: int | None = None  # DAG_Status as dagman.out's last table gave it
    held_procs: int = 0
    last_line_at: float | None = None  # the time of dagman.out's newest line
    started_at: float | None = None  # when this run of DAGMan started (None: no run yet)
    exit_status: int | None = None  # DAGMan's exit status, once it has exited
    error: str = ""  # the last ERROR line of this run (before any node: why DAGMan could not start;
    # for DAGMAN_USE_STRICT's "Warning is fatal error", the warning it made fatal)
    recovering: bool = False
    removing: bool = False  # condor_rm reached DAGMan
    aborting: str = ""  # ABORT-DAG-ON: what gave the abort value ("node B's job exited 7")
    halted_exit: bool = False  # DAGMan exited because the DAG was halted and had drained
    rescue_used: str | None = None
    rescue_written: str | None = None
    read_error: str = ""
    dag_error: str = ""  # why the DAG file could not be read (the nodes are then those dagman.out names)
    jobs: dict[str, int] = field(default_factory=dict)
    """This run's node job procs as the DAGMan job's ad counts them (``submitted``, ``idle``,
    ``held``, ``running``, ``completed``: those that exited 0), from the events dagman.out logs:
    DAGMan refreshes its ad only every DAGMAN_QUEUE_UPDATE_INTERVAL."""
    requeued_after: tuple[int, str, str] | None = None
    """An earlier run's exit status, ``aborting`` and ``error`` when that status (not 0-2, nor a
    stop's 3) kept DAGMan's job in the queue, as condor_submit_dag's on_exit_remove does: this
    run is DAGMan started again, from the rescue DAG."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def ended(self) -> bool:
        return self.exit_status is not None


class _Node:
    """A node's state while the lines are replayed."""

    __slots__ = ("state", "retries", "job", "held", "running", "exit_code", "why", "since", "procs", "ended_procs",
                 "retries_ended", "stopped")

    def __init__(self, done: bool) -> None:
        self.state = NodeState.DONE if done else NodeState.NOT_READY
        self.retries = 0
        self.job: str | None = None
        self.held = self.running = False
        self.exit_code: int | None = None
        self.why = ""
        self.since: float | None = None
        self.procs: set[str] = set()
        self.ended_procs: set[str] = set()
        self.retries_ended = False  # RestartNode ended the retries left: the try's text stays as it is
        self.stopped = False  # queued when DAGMan exited: failed, but its children are not futile


class DagWatcher:
    """Follows one DAG: ``read()`` replays what DAGMan wrote since the last call and gives the
    :class:`DagProgress`.  The DAG file is read once (again if it changes).  ``out_file``:
    where its dagman.out is (condor_submit_dag's -outfile_dir), by default beside the DAG.

    Every run of a DAG file appends to one dagman.out.  ``dagman_id`` (a DAGMan job's ClusterId)
    keeps to that job's run, which its start banner names: a later run's lines are left out, so
    a DAG that has left the queue keeps its own counts; an earlier run's are left out too.  Runs
    whose banner names no job (DAGMan run by hand) are followed as any run."""

    def __init__(self, dag_file: str, out_file: str | None = None, dagman_id: int | None = None) -> None:
        self.dag_file = dag_file
        self.out_file = out_file or dagman_out_path(dag_file)
        self.dagman_id = dagman_id
        self._reader = DagmanOutReader(self.out_file)
        self._own_seen = False  # the banner of dagman_id's run has been read
        self._other_run = False  # the lines being read are another DAGMan job's run
        self._own_last_line: float | None = None  # the time of the last line of dagman_id's run
        self._graph: Graph | None = None
        self._graph_key: tuple[int, int] | None = None
        self._dag_error = ""
        self._order: list[str] = []
        self._nodes: dict[str, _Node] = {}
        self._run = _Run()
        self._last: DagProgress | None = None
        self._changed = True
        self._left = False  # the DAGMan job has left the queue

    def read(self, left_queue: bool = False) -> DagProgress:
        """``left_queue``: the DAGMan job is no longer in the queue (removed, or gone while held),
        so the nodes its run left active will not be recovered: they read as DAGMan's exit
        leaves them, failed, even if that run stopped to be restarted (held, then removed)."""
        self._load_graph()
        try:
            records = self._reader.read()
        except OSError as e:
            return DagProgress(self.dag_file, self.out_file, read_error=f"{self.out_file}: {e.strerror or e}",
                               dag_error=self._dag_error)
        if self._reader.restarted:
            self._reset(None)
            self._own_seen = self._other_run = False
        for record in records:
            if record.what == "starting_up" and self.dagman_id is not None:
                self._other_run = record.values[0] not in (None, self.dagman_id)
                self._own_seen |= record.values[0] == self.dagman_id
                if self._other_run:
                    if not self._own_seen:
                        self._reset(None)  # an earlier run's: as at the start, until its own banner
                    continue
            if not self._other_run:
                self._apply(record)
                self._own_last_line = record.time
        if records or self._changed or self._last is None or left_queue != self._left:
            self._left = left_queue
            self._last = self._progress()
            self._changed = False
        return self._last

    # -------------------------------------------------------------- the DAG file

    def _load_graph(self) -> None:
        try:
            st = os.stat(self.dag_file)
        except OSError as e:
            if self._graph_key is not None or not self._dag_error:
                self._graph, self._graph_key, self._order = None, None, []
                self._dag_error = f"{self.dag_file}: {e.strerror or e}"
                self._changed = True
            return
        key = (st.st_ino, st.st_mtime_ns)
        if key == self._graph_key:
            return
        self._graph_key, self._changed = key, True
        try:
            self._graph = load_graph(parse_file(self.dag_file))
            self._dag_error = ""
        except DagError as e:
            self._graph, self._dag_error = None, str(e.errors[0]) if e.errors else str(e)
        self._order = run_order(self._graph) if self._graph is not None else []
        for name in self._order:  # nodes added since: as at the start of the run
            self._nodes.setdefault(name, _Node(self._initially_done(name)))

    def _initially_done(self, name: str) -> bool:
        graph = self._graph
        node = graph.nodes.get(name) if graph is not None else None
        return node is not None and (node.node.done or name in self._run.rescue_done)

    # -------------------------------------------------------------- the lines

    def _reset(self, started_at: float | None) -> None:
        """A new run of DAGMan (or the file anew): every node as the DAG file and the rescue DAG
        it started from have it."""
        last = self._run
        kept = last.exit_status is not None and not 0 <= last.exit_status <= EXIT_RESTART
        self._run = _Run(started_at=started_at, rescue_done=self._rescue_done(started_at),
                         requeued_after=(last.exit_status, last.aborting, last.error) if kept else last.requeued_after)
        self._nodes = {name: _Node(self._initially_done(name)) for name in self._order}
        self._changed = True

    def _rescue_done(self, started_at: float | None) -> frozenset[str]:
        """The DONE nodes of the rescue DAG this run started from: as -AutoRescue picks it, the
        newest one written before the run started (a ``USING RESCUE DAG`` line corrects it)."""
        if started_at is None:
            return frozenset()
        try:
            found = [path for _, path in rescue_files(self.dag_file) if os.stat(path).st_mtime <= started_at + 1]
        except OSError:
            return frozenset()
        return _done_in(found[-1]) if found else frozenset()

    def _node(self, name: str) -> _Node:
        node = self._nodes.get(name)
        if node is None:  # a node the DAG file does not have (it could not be read)
            node = self._nodes[name] = _Node(False)
            if self._graph is None:
                self._order.append(name)
        return node

    def _apply(self, r: OutRecord) -> None:
        run, what = self._run, r.what
        if what == "starting_up":
            self._reset(r.time)
            return
        if not r.node:
            self._apply_dag(r)
            return
        node = self._node(r.node)
        was, before = node.since, (node.state, node.held, node.running)
        if not run.recovering:
            node.since = r.time
        elif r.at is not None:  # a recovered event's lines are written at the restart: its own time counts
            node.since = r.at
        self._apply_node(r, node)
        if r.what in _NODE_ENDINGS:
            run.last_ended = r.node
        if not run.recovering and was is not None and (node.state, node.held, node.running) == before:
            node.since = was  # a line that changes nothing (the abort's dump of a node failed earlier)

    def _apply_node(self, r: OutRecord, node: _Node) -> None:
        run, what = self._run, r.what
        if what in ("proc_ok", "proc_failed"):
            run.procs.pop(r.values[0], None)
            run.jobs_completed += what == "proc_ok" and not _fake(r.values[0])
        if what == "submitting":
            node.state, node.job, node.held, node.running, node.exit_code = NodeState.SUBMITTED, None, False, False, None
            node.procs, node.ended_procs = set(), set()
            run.submitting = r.node
        elif what == "event":
            self._event(node, r.node, *r.values)
        elif what in ("proc_ok", "proc_failed"):
            job = r.values[0]
            node.ended_procs.add(job)
            node.running = False
            if what == "proc_ok":
                node.exit_code = 0 if node.exit_code is None else node.exit_code
            else:
                _, how, n = r.values
                node.exit_code = n if how == "status" else -n
                cluster, proc = job.split(".")
                node.why = job_proc_failed_text(int(cluster), int(proc), **(
                    {"status": n} if how == "status" else {"signal_number": n}))
            if node.procs <= node.ended_procs:
                self._job_ended(r.node, node)
        elif what == "job_completed":
            if node.state is NodeState.SUBMITTED:
                self._job_ended(r.node, node)
        elif what == "script":
            kind = r.values[0]
            if kind in ("PRE", "POST"):
                node.state = NodeState.PRERUN if kind == "PRE" else NodeState.POSTRUN
        elif what == "pre_ok":
            node.state, node.why = NodeState.READY, ""
        elif what in ("pre_failed", "pre_died"):
            node.state, node.exit_code = NodeState.ERROR, r.values[0] if what == "pre_failed" else -r.values[0]
            node.why = pre_script_failed_text(**({"status": r.values[0]} if what == "pre_failed"
                                                 else {"signal_number": r.values[0]}))
        elif what in ("pre_skip", "post_ok"):
            node.state, node.why = NodeState.DONE, ""
            if what == "post_ok":
                node.exit_code = 0
        elif what in ("post_failed", "post_died"):
            job_retval = node.exit_code if node.exit_code is not None else 0
            node.state = NodeState.ERROR
            node.exit_code = r.values[0] if what == "post_failed" else -r.values[0]
            node.why = post_script_failed_text(job_retval, **({"status": r.values[0]} if what == "post_failed"
                                                             else {"signal_number": r.values[0]}))
        elif what == "retrying":
            node.retries = r.values[0]
            node.state, node.running, node.held = NodeState.READY, False, False
            node.why = f"retry {r.values[0]} of {r.values[1]}; the last try: {node.why}" if node.why else ""
        elif what == "retries_ended":
            node.retries_ended = True
            if node.why.startswith("Job ") and " and POST Script " in node.why:  # what the POST's reaper said
                node.why = "POST script " + node.why.split(" and POST Script ", 1)[1]
        elif what == "shortcutting":
            node.state, node.why = NodeState.ERROR, SUBMIT_FAILED_TEXT
        elif what == "failed_node":
            retval, error = r.values
            node.state = NodeState.ERROR
            node.why = error or node.why
            if retval is not None:
                node.exit_code = retval

    def _event(self, node: _Node, name: str, event: str, job: str) -> None:
        fake = _fake(job)
        procs = self._run.procs
        if not fake and (event == "SUBMIT" or job in procs):
            if event == "SUBMIT":
                self._run.jobs_submitted += 1
            if event in ("JOB_ABORTED", "JOB_TERMINATED"):
                procs.pop(job, None)
            else:
                procs[job] = _PROC_STATES.get(event, procs.get(job, "idle"))
        if event == "SUBMIT":
            if node.state is not NodeState.SUBMITTED:
                node.state, node.held, node.running, node.exit_code = NodeState.SUBMITTED, False, False, None
                node.procs, node.ended_procs = set(), set()
            if not fake:
                node.job = job
            node.procs.add(job)
        elif event == "EXECUTE":
            node.running = True
        elif event == "JOB_HELD":
            node.held = True
        elif event == "JOB_RELEASED":
            node.held = False
        elif event in ("JOB_EVICTED", "SHADOW_EXCEPTION"):
            node.running = False
        elif event == "JOB_ABORTED":
            node.running = node.held = False
            node.ended_procs.add(job)
            cluster, proc = job.split(".")
            node.why = f"HTCondor reported ULOG_JOB_ABORTED event for job proc ({cluster}.{proc}.0)"
            node.exit_code = None
            if node.procs <= node.ended_procs:
                self._job_ended(name, node)
        elif event == "JOB_TERMINATED" and fake:  # a NOOP node: no proc line follows
            node.ended_procs.add(job)
            node.exit_code = 0
            if node.procs <= node.ended_procs:
                self._job_ended(name, node)

    def _job_ended(self, name: str, node: _Node) -> None:
        """Every proc of the node's job has left: DAGMan runs its POST script, or decides it."""
        graph_node = self._graph.nodes.get(name) if self._graph is not None else None
        if graph_node is not None and ScriptKind.POST in graph_node.node.scripts:
            node.state = NodeState.POSTRUN
        elif node.exit_code == 0:
            node.state, node.why = NodeState.DONE, ""
        else:
            node.state = NodeState.ERROR

    def _apply_dag(self, r: OutRecord) -> None:
        run, what = self._run, r.what
        if what == "status":
            run.dag_status, run.table = r.values[0], r.values[1:]
        elif what == "held_procs":
            run.held_procs = r.values[0]
        elif what == "assigned":
            if run.submitting:
                node = self._node(run.submitting)
                node.job = r.values[0]
        elif what == "submit_failed":
            if run.submitting:
                self._node(run.submitting).why = SUBMIT_FAILED_TEXT
        elif what == "recovery":
            run.recovering = r.values[0]
        elif what == "warning":
            run.warning = r.values[0]
        elif what == "error":
            strict = r.values[0].startswith("Warning is fatal error because of DAGMAN_USE_STRICT")
            run.error = f"{run.warning} (fatal under DAGMAN_USE_STRICT)" if strict and run.warning else r.values[0]
        elif what == "parse_failed":  # after the ERROR line that says why, when there is one
            run.error = run.error or f"DAGMan failed to parse {r.values[0]}"
        elif what == "exiting":
            run.exit_status = r.values[0]
            for name, node in self._nodes.items():
                # As DAGMan's last node status file reports them; but after a graceful stop (its
                # job held) the node jobs stay in the queue and the restart recovers them.
                if node.state in ACTIVE and run.exit_status != EXIT_RESTART:
                    node.why = _stopped_text(node.state)
                    node.state, node.running, node.stopped = NodeState.ERROR, False, True
        elif what == "removing":
            run.removing = True
        elif what == "abort_value":  # right after the line of the node that gave it
            node = self._nodes.get(run.last_ended)
            run.aborting = r.values[0] if node is None else (
                f"node {run.last_ended}'s {r.values[0]} exited {node.exit_code}")
        elif what == "halted_exit":
            run.halted_exit = True
        elif what == "rescue_written":
            run.rescue_written = r.values[0]
        elif what == "rescue_used":
            path = os.path.join(os.path.dirname(self.dag_file), r.values[0])
            run.rescue_used = path
            done = _done_in(path)
            if done != run.rescue_done:
                run.rescue_done = done
                for name in self._order:
                    node = self._nodes[name]
                    if node.since is None:
                        node.state = NodeState.DONE if self._initially_done(name) else NodeState.NOT_READY
        self._changed = True

    # -------------------------------------------------------------- the result

    def _progress(self) -> DagProgress:
        graph, run = self._graph, self._run
        shown: list[NodeProgress] = []
        states: dict[str, NodeState] = {}
        stopped: set[str] = set()
        for name in self._order:
            node = self._nodes[name]
            gnode = graph.nodes.get(name) if graph is not None else None
            parents = tuple(gnode.parents) if gnode is not None else ()
            state, why, running, held = node.state, node.why, node.running, node.held
            if state in ACTIVE and self._left and run.exit_status in (None, EXIT_RESTART):
                state, why, running, held = NodeState.ERROR, _stopped_text(state), False, False
                stopped.add(name)
            elif state in (NodeState.NOT_READY, NodeState.READY) and gnode is not None:
                state, why = _waiting(node, gnode, parents, states, stopped)
            elif state is NodeState.ERROR and node.retries and why and not why.endswith("retries)") and not node.retries_ended:
                why = after_retries_text(why, node.retries)
            if state is NodeState.ERROR and node.stopped:
                stopped.add(name)
            states[name] = state
            shown.append(NodeProgress(
                name, state, _kind(gnode), node.retries, gnode.retry if gnode is not None else 0, node.job,
                held, running, node.exit_code, why, node.since, parents,
                *(_where(self.dag_file, gnode) if gnode is not None else ("", None, {}))))
        in_queue = list(run.procs.values())
        jobs = {"submitted": run.jobs_submitted, "completed": run.jobs_completed,
                **{state: in_queue.count(state) for state in ("idle", "held", "running")}}
        counts = {word: 0 for word in STATE_WORDS.values()}
        for node in shown:
            if node.kind != "service":  # DAGMan keeps SERVICE nodes out of its counts (and its job ad's)
                counts[STATE_WORDS[states[node.name]]] += 1
        if graph is None and run.table is not None:  # the nodes are not known: DAGMan's own counts
            total, *numbers = run.table
            counts = dict(zip(("done", "pre", "queued", "post", "ready", "unready", "failed", "futile"), numbers))
        return DagProgress(self.dag_file, self.out_file, tuple(shown), {w: n for w, n in counts.items() if n},
                           run.dag_status, run.held_procs,
                           self._own_last_line if self._other_run else self._reader.last_line_at, run.started_at,
                           run.exit_status, run.error, run.recovering, run.removing, run.aborting, run.halted_exit,
                           run.rescue_used, run.rescue_written, dag_error=self._dag_error, jobs=jobs,
                           requeued_after=run.requeued_after)


@dataclass
class _Run:
    """What the lines say of the DAG's current run."""

    started_at: float | None = None
    rescue_done: frozenset[str] = frozenset()
    rescue_used: str | None = None
    rescue_written: str | None = None
    dag_status: int | None = None
    table: tuple[int, ...] | None = None  # the last "Of N nodes total" table: total, done, pre...
    held_procs: int = 0
    submitting: str = ""  # the node whose "assigned HTCondor ID" line comes next
    recovering: bool = False
    removing: bool = False
    aborting: str = ""
    last_ended: str = ""  # the node whose job or script ended last: an abort value's
    halted_exit: bool = False
    exit_status: int | None = None
    error: str = ""
    warning: str = ""  # the last Warning: line, which DAGMAN_USE_STRICT may make fatal
    requeued_after: tuple[int, str, str] | None = None
    procs: dict[str, str] = field(default_factory=dict)  # the node job procs in the queue: idle, held, running
    jobs_submitted: int = 0
    jobs_completed: int = 0


_NODE_ENDINGS = {"proc_ok", "proc_failed", "pre_ok", "pre_failed", "pre_died", "post_ok", "post_failed", "post_died"}
_PROC_STATES = {"SUBMIT": "idle", "EXECUTE": "running", "JOB_HELD": "held", "JOB_RELEASED": "idle",
                "JOB_EVICTED": "idle", "SHADOW_EXCEPTION": "idle"}


def _fake(job: str) -> bool:
    """A NOOP node's or PRE_SKIP's made-up event's job id."""
    return job.startswith("0.") or job.startswith("-")


def _stopped_text(state: NodeState) -> str:
    return f"was {STATE_WORDS[state]} when DAGMan exited"


def _done_in(rescue: str) -> frozenset[str]:
    try:
        return frozenset(read_rescue(rescue).done)
    except DagError:
        return frozenset()


def _waiting(node: _Node, gnode, parents: Sequence[str], states: dict[str, NodeState],
             stopped: frozenset[str] | set[str] = frozenset()) -> tuple[NodeState, str]:
    """A node that has not started: futile (a parent failed or will never run), ready (its
    parents are done) or unready, and why, as DAGMan decides it.  A parent ``stopped`` (queued
    when DAGMan exited, removed or aborted) leaves it unready, as DAGMan's last node status file
    and dagman.out leave it: the rescue DAG runs it."""
    failed = [p for p in parents if states.get(p) in (NodeState.ERROR, NodeState.FUTILE) and p not in stopped]
    if failed:
        first = failed[0]
        how = "failed" if states[first] is NodeState.ERROR else "will never run"
        return NodeState.FUTILE, f"parent {first} {how}" + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
    if gnode.kind is NodeKind.FINAL:
        return NodeState.NOT_READY, "the FINAL node: runs once every other node has ended"
    waiting = [p for p in parents if states.get(p) is not NodeState.DONE]
    if waiting:
        named = ", ".join(waiting[:MAX_NAMED])
        return NodeState.NOT_READY, "waiting for " + named + (
            f" and {len(waiting) - MAX_NAMED} more" if len(waiting) > MAX_NAMED else "")
    return NodeState.READY, node.why if node.state is NodeState.READY else ""


def _kind(gnode) -> str:
    if gnode is None:
        return "job"
    if gnode.join:
        return "join"
    if gnode.node.noop:
        return "noop"
    return {NodeKind.SUBDAG: "subdag", NodeKind.FINAL: "final", NodeKind.SERVICE: "service",
            NodeKind.PROVISIONER: "provisioner"}.get(gnode.kind, "job")


def _where(dag_file: str, gnode) -> tuple[str, str | None, dict[str, NodeScript]]:
    """A node's directory, its submit file (or sub-DAG file) and its scripts, as absolute paths."""
    base = os.path.dirname(os.path.abspath(dag_file))
    directory = os.path.normpath(os.path.join(base, gnode.dir)) if gnode.dir else base
    submit = gnode.node.submit
    submit_file = os.path.join(directory, submit) if submit and gnode.node.inline_submit is None else None
    scripts = {kind.value: NodeScript(s.command, os.path.join(directory, s.debug_file) if s.debug_file else None)
               for kind, s in gnode.node.scripts.items()}
    return directory, submit_file, scripts


def run_order(graph: Graph) -> list[str]:
    """The nodes parents first, in the DAG file's order where the edges leave a choice, the FINAL
    node last: the order they can run in."""
    names = list(graph.nodes)
    index = {name: i for i, name in enumerate(names)}
    indegree = {name: len(graph.nodes[name].parents) for name in names}
    ready = [index[name] for name, d in indegree.items() if d == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = names[heapq.heappop(ready)]
        order.append(name)
        for child in graph.nodes[name].children:
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, index[child])
    if len(order) < len(names):  # a cycle: its nodes at the end, as they are written
        seen = set(order)
        order += [name for name in names if name not in seen]
    final = [name for name in order if graph.nodes[name].kind is NodeKind.FINAL]
    return [name for name in order if name not in final] + final
