"""Rescue DAGs and save point files: DAGMan's partial rescue file, its ``X.dag.rescueNNN``
names, the SAVE_POINT_FILE written in the same format, the full rescue DAG, and applying one.

A partial rescue DAG holds only DONE and RETRY lines; DAGMan reads it on top of the original
DAG, so a node marked DONE is never run again while the DAG's structure comes from the
original file.  The format is the one real DAGMan 23.9.6 writes (version 2.0.1): RETRY lines
carry the declared count, as ``DAGMAN_RESET_RETRIES_UPON_RESCUE`` (true by default) asks,
and the FINAL node is never written as DONE.  A save point file is the same partial file,
written as its node starts, and read back by ``-load_save``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from engine.atomic import write_atomically
from engine.dag.errors import DagError, Diagnostic, Location
from engine.dag.graph import Graph
from engine.dag.model import NodeKind, ScriptKind

RESCUE_DAG_VERSION = "2.0.1"
MAX_RESCUE_NUM = 100  # DAGMAN_MAX_RESCUE_NUM
_RESCUE_SUFFIX = re.compile(r"\.rescue(\d{3})\Z")


@dataclass(slots=True)
class RescueNode:
    """A node's state when the rescue DAG is written."""

    name: str
    done: bool = False
    failed: bool = False
    final: bool = False
    retry: int = 0  # the RETRY count declared for the node
    unless_exit: int | None = None
    retries: int = 0  # retries performed
    return_value: int | None = None  # the node's last return value


@dataclass(slots=True)
class Rescue:
    """What a rescue DAG says: the nodes DONE and the RETRY counts it sets."""

    file: str
    done: list[str] = field(default_factory=list)
    retry: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def location(self, name: str) -> Location:
        return Location(self.file, self.lines.get(name))


def rescue_path(dag_file: str, number: int) -> str:
    return f"{dag_file}.rescue{number:03d}"


def rescue_files(dag_file: str) -> list[tuple[int, str]]:
    """Existing rescue DAGs of ``dag_file`` as (number, path), oldest first."""
    directory = os.path.dirname(dag_file) or "."
    base = os.path.basename(dag_file)
    found = []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:
        if name.startswith(base):
            match = _RESCUE_SUFFIX.match(name[len(base):])
            if match:
                found.append((int(match.group(1)), os.path.join(os.path.dirname(dag_file), name)))
    return sorted(found)


def next_rescue_path(dag_file: str, max_rescue: int = MAX_RESCUE_NUM) -> str:
    """The name DAGMan gives the next rescue DAG: one past the newest, the last one at the cap."""
    existing = rescue_files(dag_file)
    number = existing[-1][0] + 1 if existing else 1
    return rescue_path(dag_file, min(number, max_rescue))


def format_rescue(dag_file: str, nodes: Iterable[RescueNode], created: datetime, *,
                  reset_retries: bool = True, save_point: str | None = None,
                  full: FullRescue | None = None) -> str:
    """The text DAGMan writes (``Dag::WriteRescue``); ``nodes`` in DAGMan's node order, FINAL and
    join nodes included.  ``reset_retries`` is DAGMAN_RESET_RETRIES_UPON_RESCUE: RETRY lines
    give the declared count, else the retries left.  A save point file (``save_point`` names the
    node whose start wrote it) has its own first line and always the declared count.  ``full``
    (DAGMAN_WRITE_PARTIAL_RESCUE = False) makes it a whole DAG file."""
    nodes = list(nodes)
    created = created.astimezone(timezone.utc)
    failed = [n.name for n in nodes if n.failed]
    if save_point is not None:
        lines = [f"# Save file written at Start Node {save_point}"]
        reset_retries = True
    else:
        lines = ["# Rescue DAG file, created after running", f"#   the {dag_file} DAG file"]
    lines += [
        f"# Created {created.month}/{created.day}/{created.year} {created:%H:%M:%S} UTC",
        f"# Rescue DAG version: {RESCUE_DAG_VERSION} ({'full' if full else 'partial'})",
        "#",
        f"# Total number of Nodes: {len(nodes)}",
        f"# Nodes premarked DONE: {sum(n.done for n in nodes)}",
        f"# Nodes that failed: {len(failed)}",
        "#   " + "".join(f"{name}," for name in failed) + "<ENDLIST>",
        "",
    ]
    if full is not None:
        lines += full.header()
    for n in nodes:
        if full is not None:
            lines += full.node_lines(n.name)
        if n.done and not n.final:
            lines.append(f"DONE {n.name}")
        if n.retry > 0:
            if n.failed and n.retries < n.retry and n.unless_exit is not None and n.return_value == n.unless_exit:
                lines.append(f"# {n.retries} of {n.retry} retries performed; remaining attempts aborted "
                             f"after node returned {n.return_value}")
            elif not reset_retries:
                lines.append(f"# {n.retries} of {n.retry} retries already performed; {n.retry - n.retries} remaining")
            line = f"RETRY {n.name} {n.retry if reset_retries else n.retry - n.retries}"
            if n.unless_exit is not None:
                line += f" UNLESS-EXIT {n.unless_exit}"
            lines.append(line)
    if full is not None:
        lines += full.footer()
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class FullRescue:
    """What a full rescue DAG adds to a partial one: the DAG itself, as ``WriteNodeToRescue``
    and ``WriteRescue`` print it (23.9.6, where full rescue DAGs are deprecated but written when
    DAGMAN_WRITE_PARTIAL_RESCUE is False)."""

    graph: Graph
    config: str | None = None  # the config file DAGMan read, the DAG's CONFIG or -config's, absolute

    def header(self) -> list[str]:
        dag = self.graph.dag
        lines = []
        if self.config:  # absolute, as condor_submit_dag hands it to DAGMan
            lines += [f"CONFIG {self.config}", ""]
        if dag.node_status_file:
            lines += [f"NODE_STATUS_FILE {dag.node_status_file.file}", ""]
        if dag.jobstate_log:
            lines += [f"JOBSTATE_LOG {dag.jobstate_log}", ""]
        return lines

    def node_lines(self, name: str) -> list[str]:
        node = self.graph.nodes[name]
        declared = node.node
        keyword = {NodeKind.FINAL: "FINAL", NodeKind.SUBDAG: "SUBDAG EXTERNAL"}.get(declared.kind, "JOB")
        job = f"{keyword} {name} {declared.submit or declared.name} "
        if node.dir:
            job += f"DIR {node.dir} "
        if declared.noop:
            job += "NOOP "
        lines = ["", job]
        for kind in (ScriptKind.PRE, ScriptKind.POST):
            script = declared.scripts.get(kind)
            if script is not None:
                defer = f"DEFER {script.defer_status} {script.defer_time or 0} " if script.defer_status is not None else ""
                lines.append(f"SCRIPT {defer}{kind.value} {name} {script.command}")
            if kind is ScriptKind.PRE and declared.pre_skip is not None:
                lines.append(f"PRE_SKIP {name} {declared.pre_skip}")
        if declared.vars:  # a name given twice keeps its first place and its last value, as DAGMan's AddVar
            values: dict[str, tuple[str, str]] = {}
            for var in declared.vars:
                values[var.name.lower()] = (values.get(var.name.lower(), (var.name,))[0], var.value)
            pairs = "".join(f' {key}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                            for key, value in values.values())
            lines.append(f"VARS {name}{pairs}")
        if declared.abort_dag_on is not None:
            abort = declared.abort_dag_on
            lines.append(f"ABORT-DAG-ON {name} {abort.exit_value}"
                         + (f" RETURN {abort.return_value}" if abort.return_value is not None else ""))
        if declared.priority:
            lines.append(f"PRIORITY {name} {declared.priority}")
        if node.category:
            lines.append(f"CATEGORY {name} {node.category}")
        return lines

    def footer(self) -> list[str]:
        lines = [""]
        for name, node in self.graph.nodes.items():
            if node.children:
                lines.append(f"PARENT {name} CHILD " + "".join(f" {child}" for child in node.children))
        lines += [f"MAXJOBS {category} {limit}" for category, limit in sorted(self.graph.max_jobs.items())]
        return lines


def write_rescue(path: str, dag_file: str, nodes: Iterable[RescueNode], created: datetime, **how) -> None:
    """Write atomically, so a crash never leaves half a rescue DAG for the next run to trust."""
    write_atomically(path, format_rescue(dag_file, nodes, created, **how))


def save_file_path(dag_file: str, save_file: str) -> str:
    """Where DAGMan writes and reads a SAVE_POINT_FILE (``ResolveSaveFile``): a bare file name
    goes in ``save_files/`` beside the DAG file; a path (``./name`` too) is taken from the DAG's
    directory, where DAGMan runs."""
    base = os.path.dirname(os.path.abspath(dag_file))
    if os.path.basename(save_file) == save_file:
        return os.path.join(base, "save_files", save_file)
    return os.path.join(base, save_file)


def read_rescue(path: str) -> Rescue:
    """Read a partial rescue DAG; errors are reported as ``FILE:LINE: message``."""
    rescue = Rescue(path)
    errors: list[Diagnostic] = []
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DagError([Diagnostic(Location(path), f"cannot read rescue DAG: {e.strerror or e}")]) from None
    full = any(line.startswith("# Rescue DAG version:") and line.endswith("(full)") for line in lines[:6])
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("#", "//")):
            continue
        tokens = line.split()
        keyword = tokens[0].upper()
        if len(tokens) > 1:
            rescue.lines.setdefault(tokens[1], lineno)
        if keyword == "DONE" and len(tokens) == 2:
            rescue.done.append(tokens[1])
        elif keyword == "RETRY" and len(tokens) in (3, 5) and _int(tokens[2]) is not None and (
                len(tokens) == 3 or (tokens[3].upper().replace("_", "-") == "UNLESS-EXIT" and _int(tokens[4]) is not None)):
            unless_exit = _int(tokens[4]) if len(tokens) == 5 else None
            rescue.retry[tokens[1]] = (_int(tokens[2]), unless_exit or None)
        elif full:
            raise DagError([Diagnostic(Location(path, lineno), "a full rescue DAG (DAGMAN_WRITE_PARTIAL_RESCUE = "
                                       "False) cannot be run on top of its DAG, as DAGMan runs a rescue DAG; "
                                       "submit it as the DAG file itself, or rename it")])
        else:
            errors.append(Diagnostic(Location(path, lineno),
                                     "a partial rescue DAG holds only 'DONE <node>' and 'RETRY <node> <count> [UNLESS-EXIT <code>]' lines"))
    if errors:
        raise DagError(errors)
    return rescue


def apply_rescue(graph: Graph, rescue: Rescue) -> None:
    """Mark the rescue's DONE nodes done and set its RETRY counts, as DAGMan does at start-up."""
    errors = []
    for name in rescue.done:
        node = graph.nodes.get(name)
        if node is None:
            errors.append(Diagnostic(rescue.location(name), f"DONE names {name}, but {graph.file} has no such node"))
        elif node.kind is not NodeKind.FINAL:
            node.done = True
    for name, (count, unless_exit) in rescue.retry.items():
        node = graph.nodes.get(name)
        if node is None:
            errors.append(Diagnostic(rescue.location(name), f"RETRY names {name}, but {graph.file} has no such node"))
        else:
            node.retry, node.unless_exit = count, unless_exit
    if errors:
        raise DagError(errors)


def _int(token: str) -> int | None:
    return int(token) if re.fullmatch(r"[+-]?[0-9]+", token) else None
