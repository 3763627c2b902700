"""The DOT file (``DOT <file>``): the DAG's graph for graphviz, each node labelled with its state.

Written as DAGMan 23.9.6's ``Dag::DumpDotFile`` writes it: once the DAG is parsed and, with
UPDATE, each time the node counts change.  With DONT-OVERWRITE every dump goes to the first
unused ``<file>.<n>``; otherwise ``<file>`` is replaced whole (through ``<file>.temp``).  An
INCLUDE file's text goes in after the label, between two comment lines naming it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from engine.dagman.node_status import NodeState

# State -> (label suffix, extra attributes); FUTILE and NOT_READY fall to DAGMan's default.
_LOOKS = {
    NodeState.READY: ("I", ""),
    NodeState.PRERUN: ("Pre", " style=dotted"),
    NodeState.SUBMITTED: ("R", " peripheries=2"),
    NodeState.POSTRUN: ("Post", " style=dotted"),
    NodeState.DONE: ("Done", " style=bold"),
}


def format_dot(nodes: Iterable[tuple[str, NodeState, Iterable[str]]], now: float, include: str | None,
               directory: str) -> str:
    """``nodes``: (name, state, children) in DAGMan's node order; ``include`` the INCLUDE file
    as the DOT line names it (relative to ``directory``), whose text is copied in; one that
    cannot be read is left out, as DAGMan leaves it."""
    nodes = list(nodes)
    lines = ["digraph DAG {", f'    label="DAGMan Job status at {time.ctime(now)}";', ""]
    if include is not None:
        try:
            with open(os.path.join(directory, include), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            text = None
        if text is not None:
            lines += [f"// Beginning of commands included from {include}.", *text.splitlines(),
                      f"// End of commands included from {include}.", ""]
    for name, state, _ in nodes:
        if state is NodeState.ERROR:
            lines.append(f'    "{name}" [shape=box label="{name} (E)"];')
        else:
            suffix, extra = _LOOKS.get(state, ("I", ""))
            lines.append(f'    "{name}" [shape=ellipse label="{name} ({suffix})"{extra}];')
    lines.append("")
    lines += [f'    "{name}" -> "{child}";' for name, _, children in nodes for child in children]
    return "\n".join(lines) + "\n}\n"


def write_dot(path: str, text: str, overwrite: bool) -> str:
    """Write one dump: to ``path``, or without ``overwrite`` to the first unused ``path.<n>``."""
    if not overwrite:
        n = 0
        while os.path.exists(f"{path}.{n}"):
            n += 1
        path = f"{path}.{n}"
    with open(path + ".temp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".temp", path)
    return path
