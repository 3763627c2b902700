"""condor_q's and condor_history's text layouts, for ``crabtui q`` and ``crabtui history``.

Rows are the jobs as mappings of attribute to plain value (``query_values``).  condor_q's way is
kept: the jobs are sorted by id, each is rendered into cells, procs are linked to their cluster
and node jobs to their DAGMan job, then the layout is either printed in id order (``-nobatch``),
with node jobs under their DAGMan job (``-dag``), or folded into one row per batch (the
default).  Column widths, what an absent value shows and condor_q's own quirks (the order of a
multi-proc node's later procs under ``-dag``) follow HTCondor 23.9's condor_q.  A queue of
10,000 jobs is the size this is written for: each row is rendered by one function.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from engine.schedd.api import JobStatus

Row = Mapping[str, object]
UNIVERSE_SCHEDULER = 7
UNIVERSE_LOCAL = 12
UNIVERSE_NAMES = {1: "Standard", 5: "Vanilla", 7: "Scheduler", 9: "Grid", 10: "Java", 11: "Parallel",
                  12: "Local", 13: "VM"}
NAME_COLUMN = 2  # the owner (or DAG node name) column, counted as condor_q counts: cluster, proc, owner
_LETTERS = {int(s): s.letter for s in JobStatus}
_ACTIVE = (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED)


def _number(value) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def job_id(row: Row) -> tuple[int, int]:
    proc = row.get("ProcId")
    return row.get("ClusterId") or 0, proc if proc is not None else -1


def sort_rows(rows: Sequence[Row]) -> list[Row]:
    """Jobs in job id order, as condor_q lists them."""
    return sorted(rows, key=job_id)


# ------------------------------------------------------------------------------ values as condor_q prints them

@lru_cache(maxsize=4096)
def format_date(epoch: int) -> str:
    """condor's QDATE: month/day hour:minute, the month right- and the day left-aligned."""
    if epoch < 0:
        return "    ???    "
    t = time.localtime(epoch)
    return f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"


@lru_cache(maxsize=4096)
def format_time(seconds: int) -> str:
    """condor's ``%T``: days+hh:mm:ss."""
    days, rest = divmod(int(seconds), 86400)
    return f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def job_time(row: Row, now: float, current_run: bool = True) -> float:
    """condor_q's RUN_TIME: the wall time of the current run (``-currentrun``, the default: of
    the last run for an idle or held job), or with ``-cumulative-time`` of all runs."""
    status = row.get("JobStatus")
    birth = _number(row.get("ShadowBday")) or _number(row.get("JobCurrentStartDate")) or 0
    total = 0.0 if current_run else (_number(row.get("RemoteWallClockTime")) or 0.0)
    if status in _ACTIVE and birth:
        total += now - birth
    elif status in (JobStatus.IDLE, JobStatus.HELD) and current_run:
        total = _number(row.get("LastRemoteWallClockTime")) or 0.0
    return total


def memory_mb(row: Row) -> float | None:
    """condor_q's SIZE: MemoryUsage (MB), or ImageSize (KB) when the job has no MemoryUsage."""
    return _megabytes(row.get("MemoryUsage"), row.get("ImageSize"))


def _megabytes(memory_usage, image_size) -> float | None:
    usage = _number(memory_usage)
    if usage is not None:
        return float(int(usage))
    image = _number(image_size)
    return int(image) / 1024.0 if image is not None else None


def largest_size(rows: Sequence[Row]) -> float | None:
    """The largest SIZE of the jobs (condor_q widens the column to it), worked out once for each
    distinct (MemoryUsage, ImageSize): jobs of a cluster mostly share theirs."""
    pairs: Iterable = [(r.get("MemoryUsage"), r.get("ImageSize")) for r in rows]
    try:
        pairs = set(pairs)
    except TypeError:  # a ClassAd list as a value: job by job
        pass
    return max((size for size in itertools.starmap(_megabytes, pairs) if size is not None), default=None)


def status_code(row: Row) -> str | None:
    """condor_q's ST column: the status letter and a second character for file transfer."""
    status = row.get("JobStatus")
    if status is None:
        return None
    code = _LETTERS.get(status, "?") + " "
    if row.get("TransferringInput") is True:
        code = "<" + ("q" if row.get("TransferQueued") is True else " ")
    if row.get("TransferringOutput") is True or status == JobStatus.TRANSFERRING_OUTPUT:
        code = ("q" if row.get("TransferQueued") is True else " ") + ">"
    return code


def description(row: Row) -> str | None:
    """condor_q's CMD: the job's description in parentheses, or the command's name and arguments."""
    cmd = _text(row.get("Cmd"))
    if cmd is None:
        return None
    described = _text(row.get("MATCH_EXP_JobDescription")) or _text(row.get("JobDescription"))
    if described:
        return f"({described})"
    args = _text(row.get("Arguments")) or _text(row.get("Args"))
    name = os.path.basename(cmd)
    return f"{name} {args}" if args else name


def command_and_args(row: Row) -> str | None:
    """condor_history's CMD: the command's path and its arguments, after a blank even when
    they are empty (``Arguments = ""``), as 23.9.6 prints it."""
    cmd = _text(row.get("Cmd"))
    if cmd is None:
        return None
    given = [args for args in (_text(row.get("Args")), _text(row.get("Arguments"))) if args is not None]
    return f"{cmd} {next(filter(None, given), '')}" if given else cmd


def dagman_parent(row: Row) -> int:
    """The cluster of the DAGMan job that submitted the job (DAGManJobId, an int or "c.p"), or 0."""
    found = row.get("DAGManJobId")
    if isinstance(found, str):
        head = found.partition(".")[0]
        return int(head) if head.isdigit() else 0
    return found if _number(found) is not None and found > 0 else 0


# ------------------------------------------------------------------------------ columns

@dataclass
class Column:
    """One column of a layout, as condor_q's print formats declare them: a heading, a width
    (0: as wide as the value), what shows when a job has no value, whether values are
    left-aligned, widen the column as they come (WIDTH AUTO), follow the previous column
    without a space (NOPREFIX), or are hidden."""

    heading: str
    width: int
    left: bool = False
    alt: str = ""
    auto: bool = False
    join: bool = False
    hidden: bool = False

    def cell(self, text: str | None) -> str:
        """The text aligned in the column; a longer one is not cut (print formats cut only
        columns marked TRUNCATE, and condor_q's standard ones mark none)."""
        text = self.alt if text is None else text
        if self.auto and len(text) > self.width:
            self.width = len(text)
        return text.ljust(self.width) if self.left else text.rjust(self.width)


def header_line(columns: Sequence[Column], max_width: int = 0) -> str:
    parts = []
    for index, column in enumerate(c for c in columns if not c.hidden):
        if index and not column.join:
            parts.append(" ")
        parts.append(column.heading.ljust(column.width) if column.width else column.heading)
    line = "".join(parts)
    return line[:max_width] if max_width else line


def row_line(columns: Sequence[Column], cells: Sequence[str | None], max_width: int = 0) -> str:
    """One job's line; cut to ``max_width``, or without trailing blanks (condor_q's wide mode)."""
    parts = []
    first = True
    for column, text in zip(columns, cells):
        if column.hidden:
            continue
        if not first and not column.join:
            parts.append(" ")
        first = False
        parts.append(column.cell(text))
    line = "".join(parts)
    return line[:max_width] if max_width else line.rstrip()


# ------------------------------------------------------------------------------ the standard layouts

@dataclass
class Context:
    """What a layout needs besides the job: the schedd's clock, the DAG view, the schedd host
    (for the HOST(S) of scheduler universe jobs) and condor_q's run-time choice."""

    now: float
    dag: bool = False
    schedd_host: str = "localhost"
    current_run: bool = True


@dataclass
class Layout:
    """A standard layout: its columns, and how a job renders into its cells (None: no value)."""

    columns: list[Column]
    cells: Callable[[Row], list]


def layout(mode: str, context: Context) -> Layout:
    """condor_q's standard layouts: ``nobatch`` (its default print format, or its DAG one when
    ``context.dag``), ``run``, ``hold`` and ``idle``."""
    columns = [Column(" ID", 5), Column(" ", 3, join=True)]
    now, current_run, dag = context.now, context.current_run, context.dag

    def ids(row: Row) -> list:
        cluster, proc = row.get("ClusterId") or 0, row.get("ProcId") or 0
        return [f"{cluster:4d}.", f"{proc:<3d}"]

    def run_time(row: Row) -> str | None:
        if _number(row.get("RemoteUserCpu")) is None:
            return None
        return format_time(int(job_time(row, now, current_run)))

    def date_of(row: Row, attr: str) -> str | None:
        epoch = _number(row.get(attr))
        return None if epoch is None else format_date(int(epoch))

    def owner(row: Row) -> str | None:
        if dag and row.get("DAGManJobId") is not None:
            return _text(row.get("DAGNodeName"))
        return _text(row.get("Owner"))

    if mode == "nobatch":
        columns += [Column("OWNER/NODENAME", 17, left=True) if dag else Column("OWNER", 14, left=True, alt="??"),
                    Column("  SUBMITTED", 11), Column("    RUN_TIME", 12), Column("ST", 0),
                    Column("PRI", 3, left=True, auto=True), Column("SIZE", 4), Column("CMD", 0)]

        def cells(row: Row) -> list:
            prio, size = row.get("JobPrio"), memory_mb(row)
            return ids(row) + [owner(row), date_of(row, "QDate"), run_time(row), status_code(row),
                               None if prio is None else str(prio), None if size is None else f"{size:.1f}",
                               description(row)]
        return Layout(columns, cells)
    columns.append(Column("OWNER", 14, left=True, alt="??"))
    if mode == "run":
        host = context.schedd_host
        columns += [Column("  SUBMITTED", 11, alt="??"), Column("    RUN_TIME", 12, alt="??"),
                    Column("HOST(S)", 0, alt="??")]

        def remote_host(row: Row) -> str | None:
            if row.get("JobUniverse") in (UNIVERSE_SCHEDULER, UNIVERSE_LOCAL):
                return host
            if row.get("JobUniverse") == 9:
                return _text(row.get("EC2RemoteVirtualMachineName")) or _text(row.get("GridResource"))
            return _text(row.get("RemoteHost"))

        return Layout(columns, lambda row: ids(row) + [owner(row), date_of(row, "QDate"), run_time(row),
                                                       remote_host(row)])
    if mode == "goodput":
        # GOODPUT, CPU_UTIL and Mb/s are computed for standard universe jobs only (23.9.6 has none):
        # the others show each column's "??" alternative, in brackets as wide as the column
        unknown = [Column("GOODPUT", 8), Column("CPU_UTIL", 9), Column("Mb/s", 7)]
        columns += [Column("  SUBMITTED", 11, alt="??"), Column("    RUN_TIME", 12, alt="??"), *unknown]
        return Layout(columns, lambda row: ids(row) + [owner(row), date_of(row, "QDate"), run_time(row)] + [
            "[" + "?" * (c.width - 2) + "]" for c in unknown])
    if mode == "io":
        columns += [Column("RUNS", 4), Column("ST", 0), Column(" INPUT", 0), Column(" OUTPUT", 0),
                    Column(" RATE", 10), Column("MISC", 0)]
        return Layout(columns, lambda row: [])  # no embedded job moves files: no line to show
    if mode == "hold":
        columns += [Column("HELD_SINCE", 11, alt="??"), Column("HOLD_REASON", 0)]
        return Layout(columns, lambda row: ids(row) + [owner(row), date_of(row, "EnteredCurrentStatus"),
                                                       _text(row.get("HoldReason"))])
    if mode == "idle":
        columns += [Column("UNIVERSE ", 9, left=True), Column("CPUS", 4), Column("MEMORY", 6), Column("STARTS", 6),
                    Column("LAST_HOST", 0)]

        def number(row: Row, attr: str, width: int, default: int | None = None) -> str | None:
            value = _number(row.get(attr))
            value = default if value is None else int(value)
            return None if value is None else f"{value:{width}d}"

        return Layout(columns, lambda row: ids(row) + [
            owner(row), UNIVERSE_NAMES.get(row.get("JobUniverse")), number(row, "RequestCpus", 4),
            number(row, "RequestMemory", 6), number(row, "NumShadowStarts", 6, 0),
            _text(row.get("LastRemoteHost")) or "undefined"])
    raise ValueError(mode)


# Attributes each layout reads, so that a query fetches just these (condor_q's projections).
_IDS = ("ClusterId", "ProcId", "JobStatus", "JobUniverse", "Owner", "ServerTime")  # ServerTime: the header's clock
_RUN_TIME = ("RemoteUserCpu", "ShadowBday", "JobCurrentStartDate", "LastRemoteWallClockTime")
CUMULATIVE_TIME = "RemoteWallClockTime"  # RUN_TIME's with -cumulative-time, fetched only then (a float for every job)
PROJECTIONS = {
    "nobatch": _IDS + _RUN_TIME + ("QDate", "JobPrio", "ImageSize", "MemoryUsage", "Cmd", "Args", "Arguments",
                                   "JobDescription", "MATCH_EXP_JobDescription", "TransferringInput",
                                   "TransferringOutput", "TransferQueued"),
    "run": _IDS + _RUN_TIME + ("QDate", "RemoteHost", "EC2RemoteVirtualMachineName", "GridResource"),
    "hold": _IDS + ("EnteredCurrentStatus", "HoldReason"),
    "idle": _IDS + ("RequestCpus", "RequestMemory", "NumShadowStarts", "LastRemoteHost"),
    "batch": _IDS + ("QDate", "JobBatchName", "DAG_NodesTotal", "DAG_NodesDone", "TotalSubmitProcs",
                     "JobMaterializeNextProcId", "DAGManJobId", "DAGNodeName"),
    "totals": ("JobStatus", "JobUniverse"),
    "goodput": _IDS + _RUN_TIME + ("QDate",),
    "io": _IDS + ("NumJobStarts",),
}
DAG_ATTRIBUTES = ("DAGManJobId", "DAGNodeName")


# ------------------------------------------------------------------------------ linking jobs as condor_q does

class Node:
    """A job's rendered row and its links: the next proc of its cluster, the node jobs under
    it (a DAGMan job's), the later clusters of its batch, and how deep it sits under DAGMan
    jobs."""

    __slots__ = ("row", "cluster", "proc", "cells", "dag_parent", "generation", "schedd_universe", "batch_uid",
                 "next_proc", "children", "siblings", "printed", "folded")

    def __init__(self, row: Row, cluster: int, proc: int) -> None:
        self.row, self.cluster, self.proc = row, cluster, proc
        self.cells: list = []
        self.dag_parent = self.generation = self.batch_uid = 0
        self.schedd_universe = self.printed = self.folded = False
        self.next_proc: Node | None = None
        self.children: list[Node] = []
        self.siblings: list[Node] = []


def link(rows: Sequence[Row], *, dag: bool, batch: bool) -> list[Node]:
    """condor_q's linkup: procs of a cluster chained to its first proc; with ``dag`` or
    ``batch`` a cluster's first proc under its DAGMan job (only the first proc: condor_q
    prints a node's other procs in id order, after the whole tree); in ``batch`` the first
    procs of clusters sharing a batch name and owner chained to the oldest."""
    nodes = [Node(row, *job_id(row)) for row in sort_rows(rows)]
    if not (dag or batch):
        return nodes
    by_id = {(n.cluster, n.proc): n for n in nodes}
    batch_names: dict[tuple[str, str], int] = {}
    first_use: dict[int, Node] = {}
    prev = None
    for node in nodes:
        node.schedd_universe = node.row.get("JobUniverse") == UNIVERSE_SCHEDULER
        node.dag_parent = dagman_parent(node.row)
        if not node.dag_parent and batch:
            node.batch_uid = _batch_uid(node.row, batch_names)
        if prev is None:
            if node.batch_uid:
                first_use[node.batch_uid] = node
            prev = node
            continue
        first_proc = prev.cluster != node.cluster
        if not first_proc:
            prev.next_proc = node
        if node.dag_parent:
            parent = by_id.get((node.dag_parent, 0))
            if parent is not None:
                node.generation = parent.generation + 1
                if not parent.children or first_proc:
                    parent.children.append(node)
        elif node.batch_uid and first_proc:
            oldest = first_use.setdefault(node.batch_uid, node)
            if oldest is not node and not node.schedd_universe:
                oldest.siblings.append(node)
        prev = node
    return nodes


def _batch_uid(row: Row, names: dict[tuple[str, str], int]) -> int:
    name = _text(row.get("JobBatchName"))
    if name is None and row.get("DAGManJobId") is not None and _text(row.get("DAGNodeName")) is not None:
        name = "NODE: " + row.get("DAGNodeName")
    if name is None:
        return 0
    return names.setdefault((name, _text(row.get("Owner")) or ""), len(names) + 1)


def print_order(nodes: Sequence[Node], children_under_parents: bool) -> list[Node]:
    """Id order, or (``-dag``) each job followed by its node jobs, depth first."""
    if not children_under_parents:
        return list(nodes)
    out: list[Node] = []

    def visit(node: Node) -> None:
        out.append(node)
        node.printed = True
        for child in node.children:
            visit(child)

    for node in nodes:
        if not node.printed:
            visit(node)
    return out


# ------------------------------------------------------------------------------ -nobatch, -dag, -run, -hold, -idle

def job_table(rows: Sequence[Row], mode: str, context: Context, max_width: int = 0) -> list[str]:
    """The header and one line per job of a standard layout, in condor_q's order."""
    if mode == "nobatch" and not context.dag and not max_width:
        return _nobatch_lines(sort_rows(rows), context)
    shape = layout(mode, context)
    nodes = link(rows, dag=context.dag, batch=False)
    cells = shape.cells
    longest_name = 0
    for node in nodes:
        node.cells = row_cells = cells(node.row)
        name = row_cells[NAME_COLUMN]
        if name is not None and len(name) > longest_name:
            longest_name = len(name)
    if context.dag:
        for node in nodes:
            name = node.cells[NAME_COLUMN]
            if name is not None and node.row.get("DAGManJobId") is not None:
                longest_name = max(longest_name, len(name) + 3, len(name) + 2 + node.generation)
    name_width = _fix_widths(shape.columns, nodes, longest_name)
    if context.dag:
        for node in nodes:
            name = node.cells[NAME_COLUMN]
            if name is not None and node.row.get("DAGManJobId") is not None:
                prefix = " " * node.generation + "|-"
                node.cells[NAME_COLUMN] = prefix + name[:max(0, name_width - len(prefix))]
    columns = shape.columns
    return [header_line(columns, max_width)] + [row_line(columns, n.cells, max_width)
                                                for n in print_order(nodes, context.dag)]


# What a -nobatch line shows besides the job id: jobs equal in these (the procs of a cluster,
# mostly) share the rest of their line, made once.  Python's equality is the test (1 equals
# 1.0 and true), which these attributes, each of one type in a job ad, do not run into.
_NOBATCH_TAIL = ("Owner", "QDate", "JobStatus", "JobPrio", "MemoryUsage", "ImageSize", "Cmd", "Args", "Arguments",
                 "JobDescription", "MATCH_EXP_JobDescription", "TransferringInput", "TransferringOutput",
                 "TransferQueued", "RemoteUserCpu", "ShadowBday", "JobCurrentStartDate", "LastRemoteWallClockTime",
                 "RemoteWallClockTime")


def _nobatch_lines(rows: Sequence[Row], context: Context) -> list[str]:
    """``-nobatch`` without ``-dag``, the view of a whole queue: the same lines as the general
    path, each a job id and the rest of the line, which is made once for the jobs that agree in
    what it shows (10,000 procs of one cluster: one rest, 10,000 ids)."""
    max_cluster = max((r.get("ClusterId") or 0 for r in rows), default=0)
    max_proc = max((r.get("ProcId") or 0 for r in rows), default=0)
    longest = max((len(o) for o in (r.get("Owner") for r in rows) if isinstance(o, str)), default=0)
    cluster_w, proc_w, size_w = 4, 3, 4
    if max_cluster >= 9999 or max_proc >= 999 or longest > 14:
        cluster_w = max(4, min(9, len(str(max_cluster))))
        proc_w = max(3, min(9, len(str(max_proc))))
        largest = largest_size(rows)
        size_w = 4 if largest is None else max(4, len(f"{largest:.1f}"))
    now, current_run = context.now, context.current_run
    lines = [f"{' ID':<{cluster_w + 1}}{' ':<{proc_w}} {'OWNER':<14} {'  SUBMITTED':<11} {'    RUN_TIME':<12} ST PRI "
             f"{'SIZE':<{size_w}} CMD"]
    prio_w = 3  # PRI is WIDTH AUTO: it widens at the first longer value, for that line and those after it
    tails: dict[tuple, str] = {}

    def tail_of(row: Row) -> str:
        nonlocal prio_w
        get = row.get
        prio = get("JobPrio")
        prio = "" if prio is None else str(prio)
        if len(prio) > prio_w:
            prio_w = len(prio)
            tails.clear()  # made with the narrower column
        owner, qdate, size = get("Owner"), get("QDate"), memory_mb(row)
        run = format_time(int(job_time(row, now, current_run))) if _number(get("RemoteUserCpu")) is not None else ""
        return (f"{owner if isinstance(owner, str) else '??':<14} "
                f"{format_date(int(qdate)) if _number(qdate) is not None else '':>11} {run:>12} "
                f"{status_code(row) or '':<0} {prio:<{prio_w}} {'' if size is None else f'{size:.1f}':>{size_w}} "
                f"{description(row) or ''}")

    for row in rows:
        get = row.get
        key = tuple(map(get, _NOBATCH_TAIL))
        try:
            tail = tails.get(key)
        except TypeError:  # a ClassAd list among the values: this job's rest is its own
            tail = tail_of(row)
        else:
            if tail is None:
                tail = tail_of(row)
                tails[key] = tail
        lines.append(f"{get('ClusterId') or 0:{cluster_w}d}.{get('ProcId') or 0:<{proc_w}d} {tail}".rstrip())
    return lines


def _fix_widths(columns: list[Column], nodes: Sequence[Node], longest_name: int) -> int:
    """condor_q's fixup of the id, name and SIZE columns to the data, done only when an id or a
    name outgrows the default widths; returns the width a DAG node's name is cut to."""
    if not nodes:
        return 14
    max_cluster = max(n.cluster for n in nodes)
    max_proc = max(n.proc for n in nodes)
    if max_cluster < 9999 and max_proc < 999 and longest_name <= 14:
        return 14
    cluster_width, proc_width = len(str(max_cluster)), len(str(max_proc))
    if 4 < cluster_width <= 9:
        columns[0].width = cluster_width + 1
        for node in nodes:
            node.cells[0] = f"{node.cluster:{cluster_width}d}."
    if 3 < proc_width <= 9:
        columns[1].width = proc_width
        for node in nodes:
            node.cells[1] = f"{node.proc:<{proc_width}d}"
    size = next((c for c in columns if c.heading == "SIZE"), None)
    largest = largest_size([n.row for n in nodes]) if size else None
    if largest is not None:
        size.width = max(size.width, len(f"{largest:.1f}"))
    return columns[NAME_COLUMN].width


# ------------------------------------------------------------------------------ the batch view

@dataclass
class _Progress:
    nodes_total: int = 0
    nodes_done: int = 0
    unknown_total: int = 0
    states: dict[int, int] = field(default_factory=dict)
    min_job: tuple[int, int] | None = None
    max_job: tuple[int, int] = (0, 0)
    jobs: list[Row] = field(default_factory=list)


@dataclass
class Batch:
    """One line of condor_q's batch view: its owner (or with ``dag`` a node's name), its name
    (the batch name, ``DAG: N``, ``NODE: X`` or ``ID: N``), its first job's QDate, its counts
    (0 where condor_q prints ``_``), the range of its job ids, and its jobs in the queue (the
    DAGMan jobs and node jobs of a DAG's batch among them), in condor_q's order."""

    owner: str | None
    name: str
    submitted: float | None
    done: int
    running: int
    idle: int
    held: int
    total: int
    ids: str
    jobs: list[Row]


def batches(rows: Sequence[Row], *, dag: bool = False, partial: bool = False) -> list[Batch]:
    """condor_q's default view: one batch per line (a DAG with its sub-DAGs and node jobs, a
    batch name, or a cluster), with DONE, RUN, IDLE, HOLD and TOTAL and the range of job ids.
    ``partial`` (a constraint or job ids chose only some of a cluster's jobs) leaves the
    clusters' DONE uncounted, as condor_q does."""
    nodes = link(rows, dag=True, batch=True)
    found: list[Batch] = []
    for node in nodes:
        if node.folded:
            continue
        progress = _Progress()
        _reduce_children(progress, [node], partial)
        states = progress.states
        row = node.row
        done = 0 if progress.unknown_total else progress.nodes_done
        total = 0 if progress.unknown_total else progress.nodes_total
        idle = states.get(JobStatus.IDLE, 0) + states.get(JobStatus.SUSPENDED, 0)
        running = states.get(JobStatus.RUNNING, 0) + states.get(JobStatus.TRANSFERRING_OUTPUT, 0)
        name = _text(row.get("JobBatchName"))
        if name is None and node.schedd_universe:
            name = f"DAG: {node.cluster}"
        elif name is None and row.get("DAGManJobId") is not None and _text(row.get("DAGNodeName")):
            name = "NODE: " + row.get("DAGNodeName")
        elif name is None:
            name = f"ID: {node.cluster}"
        low, high = (progress.min_job, progress.max_job) if progress.min_job else ((0, 0), (0, 0))
        if low == high:
            ids = f"{low[0]}.{low[1]}"
        elif low[0] == high[0]:
            ids = f"{low[0]}.{low[1]}-{high[1]}"
        else:
            ids = f"{low[0]}.{low[1]} ... {high[0]}.{high[1]}"
        owner = _text(row.get("DAGNodeName")) if dag and row.get("DAGManJobId") is not None else None
        found.append(Batch(owner or _text(row.get("Owner")), name, _number(row.get("QDate")), done, running, idle,
                           states.get(JobStatus.HELD, 0), total, ids, progress.jobs))
    return found


def batch_table(rows: Sequence[Row], *, dag: bool = False, partial: bool = False, max_width: int = 0,
                show_hold: bool = False) -> list[str]:
    """condor_q's default view as it prints it (:func:`batches`); HOLD shows when a job is held
    or ``show_hold`` (``-global``)."""
    cooked = [[b.owner, b.name, None if b.submitted is None else format_date(int(b.submitted)), b.done, b.running,
               b.idle, b.held, b.total, b.ids] for b in batches(rows, dag=dag, partial=partial)]
    columns = [Column("OWNER", 5, left=True, alt="??", auto=True), Column("BATCH_NAME", 12, left=True),
               Column("   SUBMITTED", 12)]
    columns += [Column(heading, 6, alt="_") for heading in ("  DONE", "  RUN ", "  IDLE", "  HOLD", " TOTAL")]
    columns.append(Column("JOB_IDS", 0))
    if cooked:
        owner_width = max(len(cells[0] or "??") for cells in cooked)
        columns[0].width = max(8, owner_width) if owner_width < columns[0].width else owner_width
        columns[1].width = max(10, max(len(cells[1]) for cells in cooked))
        for offset in range(5):
            columns[3 + offset].width = max(6, max(len(str(cells[3 + offset])) for cells in cooked))
        columns[6].hidden = not show_hold and not any(cells[6] for cells in cooked)
    lines = [header_line(columns, max_width)]
    for cells in cooked:
        counts = [str(n) if n > 0 else None for n in cells[3:8]]
        lines.append(row_line(columns, cells[:3] + counts + cells[8:], max_width))
    return lines


def _reduce_children(progress: _Progress, chain: list[Node], partial: bool) -> None:
    """Fold a batch's jobs into its first row: each node, its procs, its batch siblings and,
    depth first, its children (condor_q's reduce_children)."""
    for node in [n for first in chain for n in (first, *first.siblings)]:
        last_proc = _reduce_procs(progress, node, partial)
        if not node.schedd_universe:
            low, high = (node.cluster, node.proc), (node.cluster, last_proc)
            progress.min_job = low if progress.min_job is None else min(progress.min_job, low)
            progress.max_job = max(progress.max_job, high)
        node.folded = True
        if node.children:
            _reduce_children(progress, node.children, partial)


def _reduce_procs(progress: _Progress, node: Node, partial: bool) -> int:
    """Count a cluster's procs into the batch (condor_q's reduce_procs); its last proc.  A
    DAGMan job brings its DAG's node counts; a cluster outside a DAG its TotalSubmitProcs,
    whose procs no longer in the queue are done."""
    total_submit = num_procs = made = 0
    if node.schedd_universe:
        progress.jobs.append(node.row)  # in the batch's jobs, not in its counts
        progress.nodes_total += _number(node.row.get("DAG_NodesTotal")) or 0
        progress.nodes_done += _number(node.row.get("DAG_NodesDone")) or 0
    else:
        declared = _number(node.row.get("TotalSubmitProcs"))
        if declared is not None:
            total_submit, num_procs = int(declared), 1
            # a cluster that materializes late: done are those made and gone, not those to come
            made = int(_number(node.row.get("JobMaterializeNextProcId")) or total_submit)
        _count(progress, node)
    last_proc = node.proc
    proc = node.next_proc
    while proc is not None:
        if not proc.folded:
            _count(progress, proc)
            proc.folded = True
            last_proc = proc.proc
        num_procs += 1
        proc = proc.next_proc
    if not node.schedd_universe and not node.dag_parent:
        if total_submit:
            progress.nodes_total += total_submit
            if not partial:
                progress.nodes_done += made - num_procs
        else:
            progress.unknown_total += 1
    return last_proc


def _count(progress: _Progress, node: Node) -> None:
    progress.jobs.append(node.row)
    status = node.row.get("JobStatus") or 0
    progress.states[status] = progress.states.get(status, 0) + 1


# ------------------------------------------------------------------------------ header, totals, history

def summarize_address(address: str) -> str:
    """condor_q's short form of a schedd address: everything up to its ``?`` parameters."""
    head, sep, _ = address.partition("?")
    return head + "?..." if sep else address


# condor_q -factory's MODE, from the factory's JobFactoryPaused: a factory that made all its jobs
# stays Norm on the pool (0), as 23.9.6 shows it
FACTORY_MODES = {1: "Held", 2: "Done", 3: "Rmvd"}
FACTORY_HEADING = " ID      OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST"


def factory_table(ads: Sequence[Mapping[str, object]]) -> list[str]:
    """condor_q -factory's header and one line per late-materializing cluster: its limit, its
    jobs in the queue by state, the next proc it makes, whether it is paused (Held), and the
    digest of its submit file (none on the embedded schedd)."""
    digests = [str(ad.get("JobMaterializeDigestFile") or "") for ad in ads]
    width = max(map(len, digests), default=0)
    lines = [FACTORY_HEADING + " " * max(0, width - len("DIGEST"))]
    for ad, digest in zip(ads, digests):
        mode = FACTORY_MODES.get(ad.get("JobFactoryPaused"), "Norm")
        submitted = time.strftime("%m/%d %H:%M", time.localtime(ad.get("QDate") or 0))
        counts = [_evaluated(ad, key) for key in ("JobMaterializeLimit", "JobsPresent", "JobsRunning", "JobsIdle",
                                                  "JobsHeld", "JobMaterializeNextProcId")]
        cells = " ".join(f"{'' if value is None else value:>6}" for value in counts)
        lines.append(f"{ad.get('ClusterId'):>4}.    {str(ad.get('Owner') or '')[:14]:<14} {submitted:>11} {cells} "
                     f"{mode} {digest}".rstrip())
    return lines


def _evaluated(ad: Mapping[str, object], key: str) -> int | float | str | None:
    """A cell of condor_q -factory: an expression (``condor_qedit 5 JobMaterializeLimit 1+2``)
    shown as its value in the ad, as condor_q does; nothing for one that is not a number."""
    value = ad.get(key)
    if hasattr(value, "eval") and hasattr(ad, "eval"):
        value = ad.eval(key)
    return value if type(value) in (int, float, str) else None


def header(schedd_name: str, address: str, when: float, submitter: str | None = None) -> str:
    """condor_q's line above a schedd's jobs; ``condor_q -submitter`` names the submitter first."""
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(when))
    if submitter is not None:
        return f"-- Submitter: {submitter} : {summarize_address(address)} : {schedd_name} @ {stamp}"
    return f"-- Schedd: {schedd_name} : {summarize_address(address)} @ {stamp}"


_TOTAL_PARTS = ("Completed", "Removed", "Idle", "Running", "Held", "Suspended")


def totals(summary: Mapping[str, int], owner: str | None) -> list[str]:
    """condor_q's closing lines: the query's jobs, the user's (when the query was the user's
    own jobs) and all users', DAGMan jobs not counted; the first two end with a space, as
    condor_q's do."""
    def line(label: str, prefix: str) -> str:
        parts = ", ".join(f"{summary.get(prefix + p, 0)} {p.lower()}" for p in _TOTAL_PARTS)
        return f"Total for {label}: {summary.get(prefix + 'Jobs', 0)} jobs; {parts}"

    lines = [line("query", "")]
    if owner is not None:
        lines.append(line(owner, "My"))
    lines.append(line("all users", "Allusers"))
    return [text + " " for text in lines[:-1]] + lines[-1:]


HISTORY_PROJECTION = ("ClusterId", "ProcId", "Owner", "QDate", "RemoteWallClockTime", "RemoteUserCpu", "JobStatus",
                      "CompletionDate", "Cmd", "Args", "Arguments")


def history_table(rows: Sequence[Row]) -> list[str]:
    """condor_history's default layout (23.9), newest first as the rows come."""
    columns = [Column(" ID", 7, left=True, auto=True), Column("OWNER", 14, left=True, alt="??"),
               Column("SUBMITTED", 11), Column("RUN_TIME", 12), Column("ST", 0), Column("COMPLETED", 11),
               Column("CMD", 15, left=True)]
    lines = [header_line(columns)]
    for row in rows:
        qdate, completed = _number(row.get("QDate")), _number(row.get("CompletionDate"))
        # condor_history's render_hist_runtime: the wall clock if the ad has one, else the CPU
        # time; a job that ran under a second (or never) shows none
        wall = _number(row.get("RemoteWallClockTime"))
        wall = int(wall if wall is not None else _number(row.get("RemoteUserCpu")) or 0)
        status = row.get("JobStatus")
        # an ad without its id or QDate (a history file cut or written by hand): blank, as on the pool
        known = isinstance(row.get("ClusterId"), int) and isinstance(row.get("ProcId"), int)
        cells = ["{}.{}".format(*job_id(row)) if known else "", _text(row.get("Owner")),
                 format_date(int(qdate)) if qdate else None,
                 format_time(wall) if wall else "", _LETTERS[status] + " " if status in _LETTERS else None,
                 format_date(int(completed)) if completed else None, command_and_args(row)]
        lines.append(" ".join(c.cell(text) for c, text in zip(columns, cells)))
    return lines
