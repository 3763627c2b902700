"""condor_q's and condor_history's text layouts, for ``crabtui q`` and ``crabtui history``.

Rows are the jobs as mappings of attribute to value (``query_values``).  condor_q's way is kept:
the jobs are sorted by id, each is rendered into cells, procs are linked to their cluster and
node jobs to their DAGMan job, then the layout is either printed in id order (``-nobatch``),
with node jobs under their DAGMan job (``-dag``), or folded into one row per batch (the
default).  Column widths, what an absent value shows and condor_q's own quirks (the order of a
multi-proc node's later procs under ``-dag``) follow HTCondor 23.9's condor_q.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import classad2

from engine.schedd.api import JobStatus

Row = Mapping[str, object]
UNIVERSE_SCHEDULER = 7
UNIVERSE_LOCAL = 12
UNIVERSE_NAMES = {1: "Standard", 5: "Vanilla", 7: "Scheduler", 9: "Grid", 10: "Java", 11: "Parallel",
                  12: "Local", 13: "VM"}
NAME_COLUMN = 2  # the owner (or DAG node name) column, counted as condor_q counts: cluster, proc, owner


def value(row: Row, attr: str):
    """An attribute's value, or None when the job does not have it (or it is undefined)."""
    found = row.get(attr)
    if isinstance(found, classad2.ExprTree):
        found = row.eval(attr)
    return None if isinstance(found, classad2.Value) else found


def _int(row: Row, attr: str) -> int | None:
    found = value(row, attr)
    if isinstance(found, bool) or not isinstance(found, (int, float)):
        return None
    return int(found)


def _float(row: Row, attr: str) -> float | None:
    found = value(row, attr)
    return float(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None


def _str(row: Row, attr: str) -> str | None:
    found = value(row, attr)
    return found if isinstance(found, str) else None


def job_id(row: Row) -> tuple[int, int]:
    return _int(row, "ClusterId") or 0, _int(row, "ProcId") if _int(row, "ProcId") is not None else -1


# ------------------------------------------------------------------------------ values as condor_q prints them

def format_date(epoch: float) -> str:
    """condor's QDATE: month/day hour:minute, the month right- and the day left-aligned."""
    if epoch < 0:
        return "    ???    "
    t = time.localtime(epoch)
    return f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"


def format_time(seconds: float) -> str:
    """condor's ``%T``: days+hh:mm:ss."""
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    return f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def job_time(row: Row, now: float, current_run: bool = True) -> float:
    """condor_q's RUN_TIME: the wall time of the current run (``-currentrun``, the default: of
    the last run for an idle or held job), or with ``-cumulative-time`` of all runs."""
    status = _int(row, "JobStatus")
    birth = _int(row, "ShadowBday") or _int(row, "JobCurrentStartDate") or 0
    total = 0.0 if current_run else (_float(row, "RemoteWallClockTime") or 0.0)
    if status in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED) and birth:
        total += now - birth
    elif status in (JobStatus.IDLE, JobStatus.HELD) and current_run:
        total = _float(row, "LastRemoteWallClockTime") or 0.0
    return total


def memory_mb(row: Row) -> float | None:
    """condor_q's SIZE: MemoryUsage (MB), or ImageSize (KB) when the job has no MemoryUsage."""
    usage = _int(row, "MemoryUsage")
    if usage is not None:
        return float(usage)
    image = _int(row, "ImageSize")
    return image / 1024.0 if image is not None else None


def status_code(row: Row) -> str | None:
    """condor_q's ST column: the status letter and a second character for file transfer."""
    status = _int(row, "JobStatus")
    if status is None:
        return None
    code = [JobStatus(status).letter if 1 <= status <= 7 else "?", " "]
    if value(row, "TransferringInput") is True:
        code = ["<", "q" if value(row, "TransferQueued") is True else " "]
    if value(row, "TransferringOutput") is True or status == JobStatus.TRANSFERRING_OUTPUT:
        code = ["q" if value(row, "TransferQueued") is True else " ", ">"]
    return "".join(code)


def description(row: Row) -> str | None:
    """condor_q's CMD: the job's description in parentheses, or the command's name and arguments."""
    cmd = _str(row, "Cmd")
    if cmd is None:
        return None
    described = _str(row, "MATCH_EXP_JobDescription") or _str(row, "JobDescription")
    if described:
        return f"({described})"
    args = _str(row, "Arguments") or _str(row, "Args") or ""
    name = os.path.basename(cmd)
    return f"{name} {args}" if args else name


def command_and_args(row: Row) -> str | None:
    """condor_history's CMD: the command's path and its arguments."""
    cmd = _str(row, "Cmd")
    if cmd is None:
        return None
    args = _str(row, "Args") or _str(row, "Arguments")
    return f"{cmd} {args}" if args else cmd


def dagman_parent(row: Row) -> int:
    """The cluster of the DAGMan job that submitted the job (DAGManJobId, an int or "c.p"), or 0."""
    found = value(row, "DAGManJobId")
    if isinstance(found, str):
        head = found.partition(".")[0]
        return int(head) if head.isdigit() else 0
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else 0


# ------------------------------------------------------------------------------ columns

@dataclass
class Column:
    """One column of a layout, as condor_q's print formats declare them: a heading, a width
    (0: as wide as the value), how a job renders into it (None: the job has no value, and
    ``alt`` is shown), and whether values are left-aligned, may widen the column, or follow
    the previous column without a space (condor's NOPREFIX)."""

    heading: str
    width: int
    render: Callable[[Row], str | None]
    left: bool = False
    alt: str = ""
    auto: bool = False
    join: bool = False
    hidden: bool = False

    def cell(self, text: str | None) -> str:
        """The text aligned in the column; a longer one is not cut (print formats cut only
        columns marked TRUNCATE, and condor_q's standard ones mark none)."""
        text = self.alt if text is None else text
        if self.auto:
            self.width = max(self.width, len(text))
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


def _id_columns() -> list[Column]:
    return [Column(" ID", 5, lambda r: f"{_int(r, 'ClusterId') or 0:4d}."),
            Column(" ", 3, lambda r: f"{_int(r, 'ProcId') or 0:<3d}", join=True)]


def _owner(row: Row) -> str | None:
    return _str(row, "Owner")


def _remote_host(schedd_host: str) -> Callable[[Row], str | None]:
    def render(row: Row) -> str | None:
        if _int(row, "JobUniverse") in (UNIVERSE_SCHEDULER, UNIVERSE_LOCAL):
            return schedd_host
        if _int(row, "JobUniverse") == 9:
            return _str(row, "EC2RemoteVirtualMachineName") or _str(row, "GridResource")
        return _str(row, "RemoteHost")
    return render


def _run_time(context: Context) -> Callable[[Row], str | None]:
    def render(row: Row) -> str | None:
        if _float(row, "RemoteUserCpu") is None:
            return None
        return format_time(job_time(row, context.now, context.current_run))
    return render


def _size(row: Row) -> str | None:
    mb = memory_mb(row)
    return None if mb is None else f"{mb:.1f}"


def _prio(row: Row) -> str | None:
    prio = _int(row, "JobPrio")
    return None if prio is None else str(prio)


def _dag_owner(context: Context) -> Callable[[Row], str | None]:
    def render(row: Row) -> str | None:
        if context.dag and value(row, "DAGManJobId") is not None:
            return _str(row, "DAGNodeName")
        return _owner(row)
    return render


def _date_of(attr: str) -> Callable[[Row], str | None]:
    def render(row: Row) -> str | None:
        epoch = _int(row, attr)
        return None if epoch is None else format_date(epoch)
    return render


def _printf_int(attr: str, width: int, default: int | None = None) -> Callable[[Row], str | None]:
    def render(row: Row) -> str | None:
        number = _int(row, attr)
        number = default if number is None else number
        return None if number is None else f"{number:{width}d}"
    return render


def layout(mode: str, context: Context) -> list[Column]:
    """The columns of condor_q's standard layouts: ``nobatch`` (its default print format, or
    its DAG one when ``context.dag``), ``run``, ``hold`` and ``idle``."""
    columns = _id_columns()
    if mode == "nobatch":
        owner = Column("OWNER/NODENAME", 17, _dag_owner(context), left=True) if context.dag else \
            Column("OWNER", 14, _owner, left=True, alt="??")
        return columns + [owner, Column("  SUBMITTED", 11, _date_of("QDate")),
                          Column("    RUN_TIME", 12, _run_time(context)), Column("ST", 0, status_code),
                          Column("PRI", 3, _prio, left=True, auto=True), Column("SIZE", 4, _size),
                          Column("CMD", 0, description)]
    owner = Column("OWNER", 14, _owner, left=True, alt="??")
    if mode == "run":
        return columns + [owner, Column("  SUBMITTED", 11, _date_of("QDate"), alt="??"),
                          Column("    RUN_TIME", 12, _run_time(context), alt="??"),
                          Column("HOST(S)", 0, _remote_host(context.schedd_host), alt="??")]
    if mode == "hold":
        return columns + [owner, Column("HELD_SINCE", 11, _date_of("EnteredCurrentStatus"), alt="??"),
                          Column("HOLD_REASON", 0, lambda r: _str(r, "HoldReason"))]
    if mode == "idle":
        return columns + [owner,
                          Column("UNIVERSE ", 9, lambda r: UNIVERSE_NAMES.get(_int(r, "JobUniverse")), left=True),
                          Column("CPUS", 4, _printf_int("RequestCpus", 4)),
                          Column("MEMORY", 6, _printf_int("RequestMemory", 6)),
                          Column("STARTS", 6, _printf_int("NumShadowStarts", 6, default=0)),
                          Column("LAST_HOST", 0, lambda r: _str(r, "LastRemoteHost") or "undefined")]
    raise ValueError(mode)


# Attributes each layout reads, so that a query fetches just these.
_LINKS = ("ClusterId", "ProcId", "JobStatus", "JobUniverse", "DAGManJobId", "DAGNodeName", "Owner")
PROJECTIONS = {
    "nobatch": _LINKS + ("QDate", "RemoteUserCpu", "ShadowBday", "JobCurrentStartDate", "RemoteWallClockTime",
                         "LastRemoteWallClockTime", "JobPrio", "ImageSize", "MemoryUsage", "Cmd", "Args",
                         "Arguments", "JobDescription", "MATCH_EXP_JobDescription", "TransferringInput",
                         "TransferringOutput", "TransferQueued"),
    "run": _LINKS + ("QDate", "RemoteUserCpu", "ShadowBday", "JobCurrentStartDate", "RemoteWallClockTime",
                     "LastRemoteWallClockTime", "RemoteHost", "EC2RemoteVirtualMachineName", "GridResource"),
    "hold": _LINKS + ("EnteredCurrentStatus", "HoldReason"),
    "idle": _LINKS + ("RequestCpus", "RequestMemory", "NumShadowStarts", "LastRemoteHost"),
    "batch": _LINKS + ("QDate", "JobBatchName", "DAG_NodesTotal", "DAG_NodesDone", "TotalSubmitProcs"),
    "totals": ("JobStatus", "JobUniverse"),
}


# ------------------------------------------------------------------------------ linking jobs as condor_q does

@dataclass(eq=False)
class Node:
    """A job's rendered row and its links: the next proc of its cluster, its first child (a
    DAGMan job's node jobs), its next sibling, and how deep it sits under DAGMan jobs."""

    row: Row
    cluster: int
    proc: int
    cells: list = field(default_factory=list)
    dag_parent: int = 0
    generation: int = 0
    schedd_universe: bool = False
    batch_uid: int = 0
    next_proc: Node | None = None
    children: list[Node] = field(default_factory=list)
    siblings: list[Node] = field(default_factory=list)
    printed: bool = False
    folded: bool = False


def sort_rows(rows: Sequence[Row]) -> list[Row]:
    """Jobs in job id order, as condor_q lists them."""
    return sorted(rows, key=job_id)


def link(rows: Sequence[Row], *, dag: bool, batch: bool) -> list[Node]:
    """condor_q's linkup: procs of a cluster chained to its first proc; with ``dag`` or
    ``batch`` a cluster's first proc under its DAGMan job (only the first proc: condor_q
    prints a node's other procs in id order, after the whole tree); in ``batch`` the first
    procs of clusters sharing a batch name and owner chained to the oldest."""
    nodes = [Node(row, *job_id(row)) for row in sort_rows(rows)]
    by_id = {(n.cluster, n.proc): n for n in nodes}
    batch_names: dict[tuple[str, str], int] = {}
    first_use: dict[int, Node] = {}
    for index, node in enumerate(nodes):
        node.schedd_universe = _int(node.row, "JobUniverse") == UNIVERSE_SCHEDULER
        if dag or batch:
            node.dag_parent = dagman_parent(node.row)
            if not node.dag_parent and batch:
                node.batch_uid = _batch_uid(node.row, batch_names)
        if index == 0:
            if node.batch_uid:
                first_use[node.batch_uid] = node
            continue
        prev = nodes[index - 1]
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
    return nodes


def _batch_uid(row: Row, names: dict[tuple[str, str], int]) -> int:
    name = _str(row, "JobBatchName")
    if name is None and value(row, "DAGManJobId") is not None and _str(row, "DAGNodeName") is not None:
        name = "NODE: " + _str(row, "DAGNodeName")
    if name is None:
        return 0
    return names.setdefault((name, _str(row, "Owner") or ""), len(names) + 1)


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
    columns = layout(mode, context)
    nodes = link(rows, dag=context.dag, batch=False)
    longest_name = 0
    for node in nodes:
        node.cells = [c.render(node.row) for c in columns]
        name = node.cells[NAME_COLUMN]
        if name is not None:
            extra = 3 if context.dag and value(node.row, "DAGManJobId") is not None else 0
            longest_name = max(longest_name, len(name) + extra)
            if context.dag and node.generation > 1:
                longest_name = max(longest_name, len(name) + 2 + node.generation)
    name_width = _fix_widths(columns, nodes, longest_name)
    if context.dag:
        for node in nodes:
            name = node.cells[NAME_COLUMN]
            if name is not None and value(node.row, "DAGManJobId") is not None:
                prefix = " " * node.generation + "|-"
                node.cells[NAME_COLUMN] = prefix + name[:max(0, name_width - len(prefix))]
    lines = [header_line(columns, max_width)]
    lines += [row_line(columns, n.cells, max_width) for n in print_order(nodes, context.dag)]
    return lines


def _fix_widths(columns: list[Column], nodes: Sequence[Node], longest_name: int) -> int:
    """condor_q's fixup of the id, name and SIZE columns to the data, done only when an id or a
    name outgrows the default widths; the width a DAG node's name is cut to."""
    if not nodes:
        return 14
    max_cluster = max(n.cluster for n in nodes)
    max_proc = max(n.proc for n in nodes)
    if max_cluster < 9999 and max_proc < 999 and longest_name <= 14:
        return 14
    cluster_width, proc_width = len(str(max_cluster)), len(str(max_proc))
    if 4 < cluster_width <= 9:
        columns[0].width = cluster_width + 1
        columns[0].render = lambda r, w=cluster_width: f"{_int(r, 'ClusterId') or 0:{w}d}."
        for node in nodes:
            node.cells[0] = columns[0].render(node.row)
    if 3 < proc_width <= 9:
        columns[1].width = proc_width
        for node in nodes:
            node.cells[1] = f"{node.proc:<{proc_width}d}"
    sizes = [memory_mb(n.row) for n in nodes if any(c.render is _size for c in columns)]
    sizes = [s for s in sizes if s is not None]
    for column in columns:
        if column.render is _size and sizes:
            column.width = max(column.width, len(f"{max(sizes):.1f}"))
    return columns[NAME_COLUMN].width


# ------------------------------------------------------------------------------ the batch view

@dataclass
class _Progress:
    jobs: int = 0
    nodes_total: int = 0
    nodes_done: int = 0
    unknown_total: int = 0
    states: dict[int, int] = field(default_factory=dict)
    min_job: tuple[int, int] | None = None
    max_job: tuple[int, int] = (0, 0)


def batch_table(rows: Sequence[Row], *, dag: bool = False, partial: bool = False, max_width: int = 0,
                show_hold: bool = False) -> list[str]:
    """condor_q's default view: one line per batch (a DAG with its sub-DAGs and node jobs, a
    batch name, or a cluster), with DONE, RUN, IDLE, HOLD and TOTAL and the range of job ids.
    ``partial`` (a constraint or job ids chose only some of a cluster's jobs) leaves the
    clusters' DONE uncounted, as condor_q does.  HOLD shows when a job is held or
    ``show_hold`` (``-global``)."""
    context = Context(now=0, dag=dag)
    nodes = link(rows, dag=True, batch=True)
    owner_render = _dag_owner(context)
    cooked: list[tuple[Node, list[str | None]]] = []
    for node in nodes:
        if node.folded:
            continue
        progress = _Progress()
        _reduce_children(progress, [node], partial)
        states = progress.states
        done = 0 if progress.unknown_total else progress.nodes_done
        total = 0 if progress.unknown_total else progress.nodes_total
        idle = states.get(JobStatus.IDLE, 0) + states.get(JobStatus.SUSPENDED, 0)
        running = states.get(JobStatus.RUNNING, 0) + states.get(JobStatus.TRANSFERRING_OUTPUT, 0)
        held = states.get(JobStatus.HELD, 0)
        name = _str(node.row, "JobBatchName")
        if name is None and node.schedd_universe:
            name = f"DAG: {node.cluster}"
        elif name is None and value(node.row, "DAGManJobId") is not None and _str(node.row, "DAGNodeName"):
            name = "NODE: " + _str(node.row, "DAGNodeName")
        elif name is None:
            name = f"ID: {node.cluster}"
        low, high = progress.min_job or (0, 0), progress.max_job if progress.min_job else (0, 0)
        if low == high:
            ids = f"{low[0]}.{low[1]}"
        elif low[0] == high[0]:
            ids = f"{low[0]}.{low[1]}-{high[1]}"
        else:
            ids = f"{low[0]}.{low[1]} ... {high[0]}.{high[1]}"
        qdate = _int(node.row, "QDate")
        cooked.append((node, [owner_render(node.row), name, format_date(qdate) if qdate is not None else None,
                              done, running, idle, held, total, ids]))
    counts = ("  DONE", "  RUN ", "  IDLE", "  HOLD", " TOTAL")
    columns = [Column("OWNER", 5, lambda r: None, left=True, alt="??", auto=True),
               Column("BATCH_NAME", 12, lambda r: None, left=True),
               Column("   SUBMITTED", 12, lambda r: None)]
    columns += [Column(heading, 6, lambda r: None, alt="_") for heading in counts]
    columns.append(Column("JOB_IDS", 0, lambda r: None))
    if cooked:
        owner_width = max(len(cells[0] or "??") for _, cells in cooked)
        columns[0].width = max(8, owner_width) if owner_width < columns[0].width else owner_width
        columns[1].width = max(10, max(len(cells[1]) for _, cells in cooked))
        for offset in range(5):
            widest = max(len(str(cells[3 + offset])) for _, cells in cooked)
            columns[3 + offset].width = max(6, widest)
        columns[6].hidden = not show_hold and not any(cells[6] for _, cells in cooked)
    lines = [header_line(columns, max_width)]
    for _, cells in cooked:
        text = cells[:3] + [str(n) if n > 0 else None for n in cells[3:8]] + cells[8:]
        lines.append(row_line(columns, text, max_width))
    return lines


def _reduce_children(progress: _Progress, chain: list[Node], partial: bool) -> None:
    """Fold a batch's jobs into its first row: each node, its procs, its siblings and, depth
    first, its children (condor_q's reduce_children)."""
    for node in _with_siblings(chain):
        last_proc = _reduce_procs(progress, node, partial)
        if not node.schedd_universe:
            low, high = (node.cluster, node.proc), (node.cluster, last_proc)
            progress.min_job = low if progress.min_job is None else min(progress.min_job, low)
            progress.max_job = max(progress.max_job, high)
        node.folded = True
        if node.children:
            _reduce_children(progress, node.children, partial)


def _with_siblings(chain: list[Node]) -> list[Node]:
    out = []
    for node in chain:
        out.append(node)
        out.extend(node.siblings)
    return out


def _reduce_procs(progress: _Progress, node: Node, partial: bool) -> int:
    """Count a cluster's procs into the batch (condor_q's reduce_procs); its last proc."""
    total_submit = 0
    num_procs = 0
    if node.schedd_universe:
        progress.nodes_total += _int(node.row, "DAG_NodesTotal") or 0
        progress.nodes_done += _int(node.row, "DAG_NodesDone") or 0
    else:
        progress.jobs += 1
        declared = _int(node.row, "DAG_NodesTotal")
        declared = _int(node.row, "TotalSubmitProcs") if declared is None else declared
        if declared is not None:
            total_submit, num_procs = declared, 1
        _count(progress, node)
    last_proc = node.proc
    proc = node.next_proc
    while proc is not None:
        if not proc.folded:
            progress.jobs += 1
            _count(progress, proc)
            proc.folded = True
            last_proc = proc.proc
        num_procs += 1
        proc = proc.next_proc
    if not node.schedd_universe and not node.dag_parent:
        if total_submit:
            progress.nodes_total += total_submit
            if not partial:
                progress.nodes_done += total_submit - num_procs
        else:
            progress.unknown_total += 1
    return last_proc


def _count(progress: _Progress, node: Node) -> None:
    status = _int(node.row, "JobStatus") or 0
    progress.states[status] = progress.states.get(status, 0) + 1


# ------------------------------------------------------------------------------ header, totals, history

def summarize_address(address: str) -> str:
    """condor_q's short form of a schedd address: everything up to its ``?`` parameters."""
    head, sep, _ = address.partition("?")
    return head + "?..." if sep else address


def header(schedd_name: str, address: str, when: float) -> str:
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(when))
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
    """condor_history's default layout, newest first as the rows come."""
    columns = [Column(" ID", 7, lambda r: "{}.{}".format(*job_id(r)), left=True, auto=True),
               Column("OWNER", 14, _owner, left=True, alt="??"),
               Column("SUBMITTED", 11, _date_of("QDate"), alt="??"),
               Column("RUN_TIME", 12, lambda r: format_time(_float(r, "RemoteWallClockTime")
                                                            or _float(r, "RemoteUserCpu") or 0)),
               Column("ST", 0, lambda r: (JobStatus(_int(r, "JobStatus")).letter + " ")
                      if _int(r, "JobStatus") in range(1, 8) else None),
               Column("COMPLETED", 11, lambda r: format_date(_int(r, "CompletionDate"))
                      if _int(r, "CompletionDate") else None),
               Column("CMD", 15, command_and_args, left=True)]
    lines = [header_line(columns)]
    for row in rows:
        parts = [c.cell(c.render(row)) for c in columns]
        lines.append(" ".join(parts))
    return lines
