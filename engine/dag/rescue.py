"""Rescue DAGs: DAGMan's partial rescue file, its ``X.dag.rescueNNN`` names, and applying one.

A partial rescue DAG holds only DONE and RETRY lines; DAGMan reads it on top of the original
DAG, so a node marked DONE is never run again while the DAG's structure comes from the
original file.  The format is the one real DAGMan 23.9.6 writes (version 2.0.1): RETRY lines
carry the declared count, as ``DAGMAN_RESET_RETRIES_UPON_RESCUE`` (true by default) asks,
and the FINAL node is never written as DONE.
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
from engine.dag.model import NodeKind

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


def format_rescue(dag_file: str, nodes: Iterable[RescueNode], created: datetime) -> str:
    """The text DAGMan writes; ``nodes`` in DAGMan's node order, FINAL and join nodes included."""
    nodes = list(nodes)
    created = created.astimezone(timezone.utc)
    failed = [n.name for n in nodes if n.failed]
    lines = [
        "# Rescue DAG file, created after running",
        f"#   the {dag_file} DAG file",
        f"# Created {created.month}/{created.day}/{created.year} {created:%H:%M:%S} UTC",
        f"# Rescue DAG version: {RESCUE_DAG_VERSION} (partial)",
        "#",
        f"# Total number of Nodes: {len(nodes)}",
        f"# Nodes premarked DONE: {sum(n.done for n in nodes)}",
        f"# Nodes that failed: {len(failed)}",
        "#   " + "".join(f"{name}," for name in failed) + "<ENDLIST>",
        "",
    ]
    for n in nodes:
        if n.done and not n.final:
            lines.append(f"DONE {n.name}")
        if n.retry > 0:
            if n.failed and n.retries < n.retry and n.unless_exit is not None and n.return_value == n.unless_exit:
                lines.append(f"# {n.retries} of {n.retry} retries performed; remaining attempts aborted "
                             f"after node returned {n.return_value}")
            line = f"RETRY {n.name} {n.retry}"
            if n.unless_exit is not None:
                line += f" UNLESS-EXIT {n.unless_exit}"
            lines.append(line)
    return "\n".join(lines) + "\n"


def write_rescue(path: str, dag_file: str, nodes: Iterable[RescueNode], created: datetime) -> None:
    """Write atomically, so a crash never leaves half a rescue DAG for the next run to trust."""
    write_atomically(path, format_rescue(dag_file, nodes, created))


def read_rescue(path: str) -> Rescue:
    """Read a partial rescue DAG; errors are reported as ``FILE:LINE: message``."""
    rescue = Rescue(path)
    errors: list[Diagnostic] = []
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DagError([Diagnostic(Location(path), f"cannot read rescue DAG: {e.strerror or e}")]) from None
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
