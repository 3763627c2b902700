"""What ``crabtui dag check`` reports about a valid DAG: a one-line summary and a JSON view."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from engine.dag.errors import Location
from engine.dag.graph import Graph
from engine.dag.model import Dag, NodeKind


def count_splices(dag: Dag) -> int:
    return sum(1 + count_splices(s.dag) for s in dag.splices.values())


def summary_line(graph: Graph) -> str:
    nodes = [n for n in graph.nodes.values() if n.kind is not NodeKind.SERVICE]
    joins = sum(n.join for n in nodes)
    subdags = sum(n.kind is NodeKind.SUBDAG for n in nodes)
    splices = count_splices(graph.dag)
    final = graph.final
    parts = [
        _plural(len(nodes), "node") + (f" ({_plural(joins, 'join node')})" if joins else ""),
        _plural(graph.edge_count, "edge"),
        _plural(subdags, "sub-DAG"),
        _plural(splices, "splice"),
        f"FINAL node {final.name}" if final else "no FINAL node",
    ]
    return f"{graph.file}: " + ", ".join(parts)


def as_json(graph: Graph) -> dict[str, Any]:
    """The parsed model and the lifted graph, with every location as ``file:line``."""
    return {
        "file": graph.file,
        "summary": summary_line(graph),
        "model": _plain(graph.dag),
        "graph": [
            {
                "name": n.name,
                "kind": n.kind.value,
                "dir": n.dir,
                "category": n.category,
                "parents": n.parents,
                "children": n.children,
                "join": n.join,
            }
            for n in graph.nodes.values()
        ],
        "warnings": [str(w) for w in graph.dag.warnings],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, Location):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "warnings"}
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
