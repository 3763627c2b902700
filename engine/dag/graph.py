"""The DAG as DAGMan runs it: splices lifted, join nodes added, one flat set of nodes and edges.

DAGMan lifts every splice into its parent, renaming its nodes ``splice+node`` and its
categories ``splice+category`` (categories that start with ``+`` are global), and prefixing
the splice's DIR to its nodes' directories.  A PARENT line with several parents and several
children becomes a NOOP join node ``_condor_join_nodeN`` between them; join nodes count as
nodes everywhere (totals, rescue DAGs, node status files).  DAGMan 23.9 numbers them from 1,
splices first, because it reads splices before the PARENT lines of the file that splices them.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.dag.errors import DagError, Diagnostic, Location
from engine.dag.model import Dag, Node, NodeKind
from engine.gcpause import gc_paused

JOIN_NODE_PREFIX = "_condor_join_node"


@dataclass(slots=True)
class GraphNode:
    """One node of the lifted DAG. ``node`` is its declaration, shared with the model."""

    name: str
    node: Node
    dir: str = ""
    category: str | None = None
    # Lists once the node has an edge; an empty tuple until then, which keeps 100,000-node
    # DAGs of independent nodes (a CRAB task) small.
    parents: list[str] | tuple[()] = ()
    children: list[str] | tuple[()] = ()
    parent_sources: list[Location] | tuple[()] = field(default=(), repr=False)
    join: bool = False
    done: bool = False  # DONE in the DAG file or in the rescue DAG applied on top of it
    retry: int = 0
    unless_exit: int | None = None

    @property
    def kind(self) -> NodeKind:
        return self.node.kind


@dataclass(slots=True)
class Graph:
    """The flat DAG of a top-level DAG file, nodes in DAGMan's order."""

    dag: Dag
    nodes: dict[str, GraphNode]
    max_jobs: dict[str, int]
    # a splice's MAXJOBS (or its lack) that a higher level's overrides, in dagman.out's words
    overridden: list[str] = field(default_factory=list)

    @property
    def file(self) -> str:
        return self.dag.file

    @property
    def final(self) -> GraphNode | None:
        return next((n for n in self.nodes.values() if n.kind is NodeKind.FINAL), None)

    @property
    def edge_count(self) -> int:
        return sum(len(n.children) for n in self.nodes.values())

    def dfs_shape(self) -> tuple[int, int]:
        """DAGMAN_REPORT_GRAPH_METRICS' height and width, measured as 23.9.6's ``Dag::DFSVisit``
        does: depth-first from each node without parents, in node order, a node's depth being the
        one it is first reached at.  Its width is not a node count: ``MAX(width, widths[d] += 1)``
        is a macro that evaluates the increment again when it wins (seen on the test pool: two
        independent nodes have width 6)."""
        height = width = 0
        widths: dict[int, int] = {}
        visited: set[str] = set()
        for root, node in self.nodes.items():
            if node.parents or root in visited:
                continue
            stack = [(root, 0)]
            while stack:
                name, depth = stack.pop()
                if name in visited:
                    continue
                visited.add(name)
                height = max(height, depth)
                level = widths.get(depth, 0) + 2
                if width <= level:
                    level += 1
                    width = level
                widths[depth] = level
                stack.extend((child, depth + 1) for child in reversed(self.nodes[name].children))
        return height, width

    def find_cycle(self) -> list[str] | None:
        """Return the nodes of one cycle, first node repeated at the end, or None."""
        indegree = {name: len(n.parents) for name, n in self.nodes.items()}
        ready = [name for name, d in indegree.items() if d == 0]
        seen = 0
        while ready:
            name = ready.pop()
            seen += 1
            for child in self.nodes[name].children:
                indegree[child] -= 1
                if indegree[child] == 0:
                    ready.append(child)
        if seen == len(self.nodes):
            return None
        # Every node left has a parent that is left too: walk parents until a node repeats.
        start = next(name for name, d in indegree.items() if d > 0)
        path, index = [], {}
        name = start
        while name not in index:
            index[name] = len(path)
            path.append(name)
            name = next(p for p in self.nodes[name].parents if indegree[p] > 0)
        cycle = path[index[name]:]
        cycle.reverse()
        return cycle + [cycle[0]]

    def cycle_error(self) -> Diagnostic | None:
        """A diagnostic naming the nodes on a cycle, at the PARENT line that closes it."""
        cycle = self.find_cycle()
        if cycle is None:
            return None
        last, first = cycle[-2], cycle[-1]
        child = self.nodes[first]
        location = child.parent_sources[child.parents.index(last)]
        shown = [n for n in cycle if not self.nodes[n].join] or cycle
        if shown[-1] != shown[0]:
            shown.append(shown[0])
        return Diagnostic(location, "cycle in the DAG: " + " -> ".join(shown))


def build_graph(dag: Dag, *, join_nodes: bool = True) -> Graph:
    """Lift ``dag`` and its splices into one flat graph (references are assumed checked);
    ``join_nodes`` False is DAGMAN_USE_JOIN_NODES = False (every parent gets every child).

    Raises :class:`DagError` if a file says REJECT, which DAGMan refuses to run wherever it is
    (a splice included), or if a node's name is taken by a join node DAGMan would add.
    """
    rejected = _rejected(dag)
    if rejected:
        raise DagError([Diagnostic(location, "REJECT: DAGMan refuses to run a DAG with a REJECT line (it marks "
                                   "the rescue DAG of a DAG that failed to parse); remove the line")
                        for location in rejected], dag.warnings)
    with gc_paused():
        several: dict[int, GraphNode] = {}
        overridden: list[str] = []
        nodes, max_jobs = _lift(dag, itertools.count(1), join_nodes, several, overridden)
        if several:
            _in_node_order(nodes, several.values())
    return Graph(dag, nodes, max_jobs, overridden)


def _in_node_order(nodes: dict[str, GraphNode], several: Iterable[GraphNode]) -> None:
    """DAGMan keeps a node's parents and children in node order, not in the order PARENT lines
    name them: children become ready in that order (seen on the test pool)."""
    index = {name: i for i, name in enumerate(nodes)}
    for node in several:
        if len(node.children) > 1:
            node.children.sort(key=index.__getitem__)
        keys = list(map(index.__getitem__, node.parents))
        if len(keys) > 1 and any(a > b for a, b in zip(keys, itertools.islice(keys, 1, None))):
            order = sorted(range(len(keys)), key=keys.__getitem__)
            node.parents = [node.parents[i] for i in order]
            node.parent_sources = [node.parent_sources[i] for i in order]


def _rejected(dag: Dag) -> list[Location]:
    """Where ``dag`` and the files it splices say REJECT."""
    found = [dag.reject_location or Location(dag.file)] if dag.reject else []
    for splice in dag.splices.values():
        found += _rejected(splice.dag)
    return found


def load_graph(dag: Dag) -> Graph:
    """Build the graph and refuse it if it has a cycle, as ``crabtui dag check`` does."""
    with gc_paused():
        graph = build_graph(dag)
        problem = graph.cycle_error()
    if problem is not None:
        raise DagError([problem], dag.warnings)
    return graph


def _lift(dag: Dag, join_numbers, join_nodes: bool, several: dict[int, GraphNode], overridden: list[str],
          level: str = "root") -> tuple[dict[str, GraphNode], dict[str, int]]:
    lifted = []
    for splice in dag.splices.values():
        # a splice's own level is named by its scope as DAGMan gives it: "S+" (for S inside T, "S+" too)
        sub_nodes, sub_max = _lift(splice.dag, join_numbers, join_nodes, several, overridden, f"{splice.name}+")
        lifted.append((splice, _rename(sub_nodes, splice.name, splice.dir), sub_max))

    nodes = {name: _graph_node(node) for name, node in dag.nodes.items()}
    max_jobs = dict(dag.max_jobs)
    ends: dict[str, tuple[list[str], list[str]]] = {}
    for splice, sub_nodes, sub_max in lifted:
        nodes.update(sub_nodes)
        _take_max_jobs(max_jobs, dag.max_jobs, splice.name, sub_nodes, sub_max, overridden, level)
        initial = [n.name for n in sub_nodes.values() if not n.parents]
        terminal = [n.name for n in sub_nodes.values() if not n.children]
        ends[splice.name] = (initial, terminal)

    joins: dict[str, GraphNode] = {}
    edges: dict[str, set[str]] = {}
    for dep in dag.dependencies:
        parents = _expand(dep.parents, ends, terminal=True)
        children = _expand(dep.children, ends, terminal=False)
        if join_nodes and len(parents) > 1 and len(children) > 1:
            name = f"{JOIN_NODE_PREFIX}{next(join_numbers)}"
            if name in nodes:
                raise DagError([Diagnostic(dep.location, f"DAGMan names the join node of this PARENT line {name}, "
                                                         f"which is already node {name} at {nodes[name].node.location}; "
                                                         "rename that node")])
            join = GraphNode(name, Node(name, NodeKind.JOB, "noop.sub", noop=True, location=dep.location), join=True)
            joins[name] = join
            nodes[name] = join
            for parent in parents:
                _connect(nodes, edges, parent, name, dep.location, several)
            parents = [name]
        for parent in parents:
            for child in children:
                _connect(nodes, edges, parent, child, dep.location, several)

    for connect in dag.connects:
        outs = dag.splices[connect.parent].dag.pins_out
        ins = dag.splices[connect.child].dag.pins_in
        for pin in sorted(outs):
            for parent in outs[pin]:
                for child in ins.get(pin, ()):
                    _connect(nodes, edges, f"{connect.parent}+{parent}", f"{connect.child}+{child}", connect.location,
                             several)

    if not lifted and not joins:
        return nodes, max_jobs
    # DAGMan's order: the file's own nodes, then join nodes, then the lifted splices.
    order = {name: nodes[name] for name in dag.nodes}
    order.update(joins)
    for _, sub_nodes, _ in lifted:
        order.update(sub_nodes)
    return order, max_jobs


def _take_max_jobs(max_jobs: dict[str, int], own: dict[str, int], splice: str, sub_nodes: dict[str, GraphNode],
                   sub_max: dict[str, int], overridden: list[str], level: str) -> None:
    """A splice's category limits, unless this level sets the category's MAXJOBS itself: the
    higher level's wins, whatever the splice says (seen on the pool, with DAGMan's warning)."""
    theirs = {_scoped(category, splice): limit for category, limit in sub_max.items()}
    used = dict.fromkeys(n.category for n in sub_nodes.values() if n.category is not None)
    for category in {**used, **dict.fromkeys(theirs)}:
        if category in own:
            if theirs.get(category, -1) != own[category]:
                overridden.append(f"Warning: higher-level ({level}) maxjobs value of {own[category]} for category "
                                  f"{category} overrides splice {splice} value of {theirs.get(category, -1)}")
        elif category in theirs:
            max_jobs[category] = theirs[category]


def _graph_node(node: Node) -> GraphNode:
    return GraphNode(node.name, node, node.dir or "", node.category, done=node.done,
                     retry=node.retry, unless_exit=node.unless_exit)


def _rename(nodes: dict[str, GraphNode], scope: str, directory: str | None) -> dict[str, GraphNode]:
    prefix = scope + "+"
    renamed = {}
    for n in nodes.values():
        n.name = prefix + n.name
        n.parents = [prefix + p for p in n.parents]
        n.children = [prefix + c for c in n.children]
        if n.category is not None:
            n.category = _scoped(n.category, scope)
        if directory and not os.path.isabs(n.dir):
            n.dir = os.path.join(directory, n.dir) if n.dir else directory
        renamed[n.name] = n
    return renamed


def _scoped(category: str, scope: str) -> str:
    return category if category.startswith("+") else f"{scope}+{category}"


def _expand(names: tuple[str, ...], ends, terminal: bool) -> list[str]:
    """Replace splice names by their terminal (as parents) or initial (as children) nodes."""
    out: list[str] = []
    for name in names:
        if name in ends:
            out.extend(ends[name][1 if terminal else 0])
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def _connect(nodes: dict[str, GraphNode], edges: dict[str, set[str]], parent: str, child: str,
             source: Location, several: dict[int, GraphNode]) -> None:
    """Add the edge once; a set of parents is kept only for children with many of them.
    ``several`` collects the nodes given a second parent or child (their lists get sorted)."""
    child_node = nodes[child]
    parents = child_node.parents
    if len(parents) < 16:
        if parent in parents:
            return
    else:
        known = edges.get(child)
        if known is None:
            known = edges[child] = set(parents)
        if parent in known:
            return
        known.add(parent)
    parent_node = nodes[parent]
    children = parent_node.children
    if children:
        children.append(child)
        if len(children) == 2:
            several[id(parent_node)] = parent_node
    else:
        parent_node.children = [child]
    if parents:
        parents.append(parent)
        child_node.parent_sources.append(source)
        if len(parents) == 2:
            several[id(child_node)] = child_node
    else:
        child_node.parents = [parent]
        child_node.parent_sources = [source]
