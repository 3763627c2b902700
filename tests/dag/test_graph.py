"""The lifted graph: splices renamed and expanded, join nodes, pins, DAGMan's node order, cycles."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from engine.dag import DagError, build_graph, load_graph, parse_file, parse_text
from engine.dag.graph import Graph

DATA = Path(__file__).parent / "data"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / next(iter(files))


def graph_of(root: Path, files: dict[str, str], dirs: tuple[str, ...] = ()) -> Graph:
    """``dirs``: the node directories the DAG names, made as DAGMan wants them (relative to ``root``)."""
    for name in dirs:
        (root / name).mkdir(parents=True, exist_ok=True)
    return load_graph(parse_file(str(write(root, files))))


def edges(graph: Graph) -> set[tuple[str, str]]:
    out = set()
    for name, node in graph.nodes.items():
        assert node.name == name
        for child in node.children:
            out.add((name, child))
            assert name in graph.nodes[child].parents
        for parent in node.parents:
            assert name in graph.nodes[parent].children
    return out


# ---------------------------------------------------------------------------- splices

NESTED = {
    "top.dag": "JOB A a.sub DIR adir\nSPLICE S mid.dag DIR sd\nJOB C c.sub\nPARENT A CHILD S\nPARENT S CHILD C\n"
               "CATEGORY A top\nMAXJOBS top 4\n",
    "sd/mid.dag": "JOB P p.sub\nJOB Q q.sub DIR /tmp\nSPLICE inner inner.dag DIR ind\nPARENT P CHILD inner\n"
                  "CATEGORY P c1\nCATEGORY Q +g\nMAXJOBS c1 7\n",
    "sd/ind/inner.dag": "JOB X x.sub DIR xd\nJOB Y y.sub\nPARENT X CHILD Y\nCATEGORY X c1\nCATEGORY Y +g\n"
                        "MAXJOBS c1 2\nMAXJOBS +g 3\n",
}
NESTED_DIRS = ("adir", "sd/ind/xd")


def test_splice_nodes_are_named_splice_plus_node(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, NESTED, NESTED_DIRS)
    assert list(graph.nodes) == ["A", "C", "S+P", "S+Q", "S+inner+X", "S+inner+Y"]
    assert graph.nodes["S+P"].node.name == "P"  # the declaration is shared with the model
    assert graph.nodes["S+inner+X"].parents == ["S+P"]
    assert graph.nodes["S+inner+X"].children == ["S+inner+Y"]


def test_splice_dir_is_prefixed_to_node_dirs(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, NESTED, NESTED_DIRS)
    assert graph.nodes["A"].dir == "adir"
    assert graph.nodes["C"].dir == ""
    assert graph.nodes["S+P"].dir == "sd"
    assert graph.nodes["S+Q"].dir == "/tmp"  # an absolute DIR is kept
    assert graph.nodes["S+inner+X"].dir == os.path.join("sd", "ind", "xd")
    assert graph.nodes["S+inner+Y"].dir == os.path.join("sd", "ind")


def test_categories_are_scoped_except_plus_categories(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, NESTED, NESTED_DIRS)
    assert graph.nodes["A"].category == "top"
    assert graph.nodes["C"].category is None
    assert graph.nodes["S+P"].category == "S+c1"
    assert graph.nodes["S+Q"].category == "+g"
    assert graph.nodes["S+inner+X"].category == "S+inner+c1"
    assert graph.nodes["S+inner+Y"].category == "+g"


def test_maxjobs_are_scoped_like_categories(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, NESTED, NESTED_DIRS)
    assert graph.max_jobs == {"top": 4, "S+c1": 7, "S+inner+c1": 2, "+g": 3}


def test_splice_parent_means_terminal_nodes_and_child_means_initial_nodes(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, {
        "top.dag": "JOB A a.sub\nJOB B b.sub\nSPLICE S s.dag\nPARENT A CHILD S\nPARENT S CHILD B\n",
        # X and Y are initial, Z and W terminal; M is in the middle.
        "s.dag": "JOB X x\nJOB Y y\nJOB M m\nJOB Z z\nJOB W w\nPARENT X CHILD M\nPARENT Y CHILD M\n"
                 "PARENT M CHILD Z\nPARENT M CHILD W\n",
    })
    assert graph.nodes["A"].children == ["S+X", "S+Y"]
    assert graph.nodes["B"].parents == ["S+Z", "S+W"]
    assert not any(n.join for n in graph.nodes.values())
    assert graph.edge_count == 2 + 2 + 4


def test_isolated_splice_node_is_both_initial_and_terminal(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, {
        "top.dag": "JOB A a\nJOB B b\nSPLICE S s.dag\nPARENT A CHILD S\nPARENT S CHILD B\n",
        "s.dag": "JOB X x\n",
    })
    assert edges(graph) == {("A", "S+X"), ("S+X", "B")}


def test_splice_to_splice_many_to_many_gets_a_join_node(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, {
        "top.dag": "SPLICE S s.dag\nSPLICE T s.dag\nPARENT S CHILD T\n",
        "s.dag": "JOB X x\nJOB Y y\n",
    })
    assert edges(graph) == {("S+X", "_condor_join_node1"), ("S+Y", "_condor_join_node1"),
                            ("_condor_join_node1", "T+X"), ("_condor_join_node1", "T+Y")}
    assert list(graph.nodes) == ["_condor_join_node1", "S+X", "S+Y", "T+X", "T+Y"]


def test_the_same_file_spliced_twice_gives_separate_nodes(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, {
        "top.dag": "SPLICE S1 s.dag\nSPLICE S2 s.dag\n",
        "s.dag": "JOB X x\nCATEGORY X c\nMAXJOBS c 1\n",
    })
    assert list(graph.nodes) == ["S1+X", "S2+X"]
    assert graph.nodes["S1+X"].category == "S1+c"
    assert graph.nodes["S2+X"].category == "S2+c"
    assert graph.max_jobs == {"S1+c": 1, "S2+c": 1}


# ---------------------------------------------------------------------------- join nodes

def test_join_node_for_many_to_many_parent_line() -> None:
    graph = load_graph(parse_text("JOB A a\nJOB B b\nJOB C c\nJOB D d\nPARENT A B CHILD C D\n", file="j.dag"))
    join = graph.nodes["_condor_join_node1"]
    assert join.join and join.node.noop and join.kind.value == "JOB"
    assert join.parents == ["A", "B"] and join.children == ["C", "D"]
    assert graph.nodes["A"].children == ["_condor_join_node1"]
    assert graph.nodes["C"].parents == ["_condor_join_node1"]
    assert graph.edge_count == 4
    assert list(graph.nodes) == ["A", "B", "C", "D", "_condor_join_node1"]
    # the join node is located at the PARENT line that made it
    assert str(join.node.location) == "j.dag:5"


def test_join_nodes_are_numbered_from_one_in_file_order() -> None:
    graph = load_graph(parse_text(
        "JOB A a\nJOB B b\nJOB C c\nJOB D d\nJOB E e\nJOB F f\n"
        "PARENT A B CHILD C D\nPARENT A CHILD B C\nPARENT C D CHILD E\nPARENT C D CHILD E F\n",
        file="j.dag"))
    joins = [n.name for n in graph.nodes.values() if n.join]
    assert joins == ["_condor_join_node1", "_condor_join_node2"]
    assert graph.nodes["_condor_join_node1"].children == ["C", "D"]
    assert graph.nodes["_condor_join_node2"].children == ["E", "F"]
    assert graph.nodes["E"].parents == ["C", "D", "_condor_join_node2"]


def test_one_to_many_and_many_to_one_need_no_join_node() -> None:
    graph = load_graph(parse_text("JOB A a\nJOB B b\nJOB C c\nJOB D d\nPARENT A CHILD B C\nPARENT B C CHILD D\n",
                                  file="x.dag"))
    assert not any(n.join for n in graph.nodes.values())
    assert edges(graph) == {("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")}


def test_duplicate_names_on_a_parent_line_do_not_make_a_join_node() -> None:
    graph = load_graph(parse_text("JOB A a\nJOB B b\nPARENT A A CHILD B B\n", file="d.dag"))
    assert list(graph.nodes) == ["A", "B"]
    assert edges(graph) == {("A", "B")}


JOIN_NAME_CLASHES = {
    # a user node named like the join node DAGMan makes for the PARENT line
    "plain": "JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub\nJOB _condor_join_node1 j.sub\n"
             "PARENT A B CHILD C D\n",
    # the same, acyclic, with an edge into the user node: must not be reported as a cycle
    "edge": "JOB A a\nJOB B b\nJOB C c\nJOB D d\nJOB _condor_join_node1 j\nPARENT _condor_join_node1 CHILD A\n"
            "PARENT A B CHILD C D\n",
    # found by test_fuzz: load_graph raised StopIteration
    "crash": "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nJOB _condor_join_node2 _condor_join_node2.sub\n"
             "PARENT A CHILD _condor_join_node2\nPARENT C _condor_join_node2 CHILD A B\nPARENT A C CHILD A B\n",
}


@pytest.mark.parametrize("case", sorted(JOIN_NAME_CLASHES))
def test_user_node_named_like_a_join_node_is_not_lost(case: str) -> None:
    """A node the user calls _condor_join_nodeN must not be silently replaced by a join node.

    Refusing the clash with a located error is fine; so is naming the join node differently.
    """
    text = JOIN_NAME_CLASHES[case]
    dag = parse_text(text, file="clash.dag")
    user_nodes = [n for n in dag.nodes if n.startswith("_condor_join_node")]
    try:
        graph = load_graph(dag)
    except DagError as e:
        for d in e.errors:
            assert re.fullmatch(r"clash\.dag:\d+: .+", str(d)), str(d)
            assert "cycle" not in d.message, f"an acyclic DAG reported as cyclic: {d}"
        return
    for name in user_nodes:
        user = graph.nodes.get(name)
        assert user is not None and not user.join and user.node.name == name, name
    edges(graph)  # parents and children agree
    assert len(graph.nodes) == len(dag.nodes) + sum(n.join for n in graph.nodes.values())


def test_splice_join_nodes_are_numbered_first(tmp_path: Path) -> None:
    # The PARENT line of the top file comes before the SPLICE line, yet DAGMan reads the splice
    # (pass 1) before the PARENT lines (pass 2), so the splice's join node is number 1.
    graph = graph_of(tmp_path, {
        "top.dag": "JOB A a\nJOB B b\nJOB C c\nJOB D d\nPARENT A B CHILD C D\nSPLICE S s.dag\nSPLICE T t.dag\n",
        "s.dag": "JOB X x\nJOB Y y\nJOB Z z\nJOB W w\nPARENT X Y CHILD Z W\n",
        "t.dag": "SPLICE U s.dag\nJOB K k\nJOB L l\nJOB M m\nPARENT K L CHILD M U\n",
    })
    joins = [n for n in graph.nodes if "_condor_join_node" in n]
    assert sorted(joins, key=lambda n: int(re.search(r"\d+$", n).group())) == [
        "S+_condor_join_node1", "T+U+_condor_join_node2", "T+_condor_join_node3", "_condor_join_node4"]
    assert graph.nodes["S+_condor_join_node1"].parents == ["S+X", "S+Y"]
    assert graph.nodes["S+_condor_join_node1"].children == ["S+Z", "S+W"]
    assert graph.nodes["T+_condor_join_node3"].children == ["T+M", "T+U+X", "T+U+Y"]
    assert graph.nodes["_condor_join_node4"].parents == ["A", "B"]


# ---------------------------------------------------------------------------- CONNECT and pins

def test_connect_joins_pin_out_to_pin_in(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, {
        "top.dag": "SPLICE S out.dag\nSPLICE T in.dag\nCONNECT S T\n",
        "out.dag": "JOB X x\nJOB Y y\nJOB Z z\nPIN_OUT X 1\nPIN_OUT Y 2\nPIN_OUT Z 2\n",
        "in.dag": "JOB P p\nJOB Q q\nPIN_IN P 1\nPIN_IN Q 2\n",
    })
    assert edges(graph) == {("S+X", "T+P"), ("S+Y", "T+Q"), ("S+Z", "T+Q")}
    assert graph.edge_count == 3
    assert str(graph.nodes["T+P"].parent_sources[0]).endswith("top.dag:3")


def test_connect_with_mismatched_pins_is_an_error_at_the_connect_line(tmp_path: Path) -> None:
    write(tmp_path, {
        "top.dag": "SPLICE S out.dag\nSPLICE T in.dag\nCONNECT S T\n",
        "out.dag": "JOB X x\nJOB Y y\nPIN_OUT X 1\nPIN_OUT Y 2\n",
        "in.dag": "JOB P p\nPIN_IN P 1\n",
    })
    with pytest.raises(DagError) as info:
        parse_file(str(tmp_path / "top.dag"))
    assert [str(e.location) for e in info.value.errors] == [f"{tmp_path / 'top.dag'}:3"]


def test_connect_names_must_be_splices(tmp_path: Path) -> None:
    with pytest.raises(DagError) as info:
        parse_text("JOB A a\nJOB B b\nCONNECT A B\n", file="c.dag")
    assert str(info.value.errors[0]).startswith("c.dag:3: ")


# ---------------------------------------------------------------------------- node order

def test_node_order_is_own_nodes_then_join_nodes_then_spliced_nodes(tmp_path: Path) -> None:
    graph = graph_of(tmp_path, {
        "top.dag": "SPLICE S s.dag\nJOB A a\nSPLICE T s.dag\nJOB B b\nJOB C c\nJOB D d\nPARENT A B CHILD C D\n",
        "s.dag": "JOB Y y\nJOB X x\n",
    })
    assert list(graph.nodes) == ["A", "B", "C", "D", "_condor_join_node1", "S+Y", "S+X", "T+Y", "T+X"]


def test_included_nodes_come_after_the_including_files_own_nodes(tmp_path: Path) -> None:
    # INCLUDE is read in DAGMan's pass 2, after every JOB of the including file (pass 1).
    graph = graph_of(tmp_path, {
        "top.dag": "INCLUDE inc.dag\nJOB A a\nJOB B b\n",
        "inc.dag": "JOB I i\n",
    })
    assert list(graph.nodes) == ["A", "B", "I"]


def test_node_fields_are_carried_into_the_graph() -> None:
    graph = load_graph(parse_text(
        "JOB A a DONE\nRETRY A 3 UNLESS-EXIT 7\nFINAL F f\nSERVICE S s\nJOB B b\nPARENT A CHILD B\n", file="f.dag"))
    a = graph.nodes["A"]
    assert a.done and a.retry == 3 and a.unless_exit == 7
    assert graph.final is graph.nodes["F"]
    assert not graph.nodes["F"].parents and not graph.nodes["F"].children
    assert "S" in graph.nodes and graph.nodes["S"].kind.value == "SERVICE"
    assert graph.file == "f.dag"


# ---------------------------------------------------------------------------- edges and cycles

def test_diamond_edge_count() -> None:
    graph = load_graph(parse_file(str(DATA / "diamond.dag")))
    assert list(graph.nodes) == ["A", "B", "C", "D"]
    assert edges(graph) == {("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")}
    assert graph.edge_count == 4
    assert graph.find_cycle() is None and graph.cycle_error() is None


def test_duplicate_edges_count_once() -> None:
    graph = load_graph(parse_text("JOB A a\nJOB B b\nPARENT A CHILD B\nPARENT A CHILD B\nparent A child B\n",
                                  file="dup.dag"))
    assert graph.edge_count == 1
    assert graph.nodes["B"].parents == ["A"]


def _rotations(cycle: list[str]) -> set[str]:
    ring = cycle[:-1]
    return {" -> ".join(ring[i:] + ring[:i] + [ring[i]]) for i in range(len(ring))}


def _check_cycle(text: str, file: str, ring: list[str]) -> str:
    """The DAG parses, but load_graph refuses it at a PARENT line whose edge is on the cycle."""
    dag = parse_text(text, file=file)  # a cycle is not a parse error
    graph = build_graph(dag)
    assert graph.find_cycle() is not None
    with pytest.raises(DagError) as info:
        load_graph(dag)
    [error] = info.value.errors
    rendered = str(error)
    match = re.fullmatch(rf"{re.escape(file)}:(\d+): cycle in the DAG: (.+)", rendered)
    assert match, rendered
    shown = match.group(2)
    assert shown in _rotations(ring + [ring[0]]), rendered
    # The located line is a PARENT line declaring the edge that closes the cycle as shown.
    names = shown.split(" -> ")
    line = text.splitlines()[int(match.group(1)) - 1]
    assert line.split()[0].upper() == "PARENT", rendered
    parents, _, children = line.split(None, 1)[1].upper().partition("CHILD")
    assert names[-2].upper() in parents.split() and names[-1].upper() in children.split(), rendered
    return rendered


def test_cycle_names_the_nodes_on_it() -> None:
    text = "JOB A a\nJOB B b\nJOB C c\nJOB D d\nPARENT A CHILD B\nPARENT B CHILD C\nPARENT C CHILD A\nPARENT C CHILD D\n"
    _check_cycle(text, "cycle.dag", ["A", "B", "C"])


def test_self_loop() -> None:
    rendered = _check_cycle("JOB A a\nJOB B b\nPARENT B CHILD A\nPARENT A CHILD A\n", "self.dag", ["A"])
    assert rendered == "self.dag:4: cycle in the DAG: A -> A"


def test_two_node_cycle() -> None:
    _check_cycle("JOB A a\nJOB B b\nPARENT A CHILD B\nPARENT B CHILD A\n", "two.dag", ["A", "B"])


def test_cycle_through_a_join_node_names_only_real_nodes() -> None:
    text = "JOB A a\nJOB B b\nJOB C c\nJOB D d\nPARENT A B CHILD C D\nPARENT C CHILD A\n"
    dag = parse_text(text, file="j.dag")
    with pytest.raises(DagError) as info:
        load_graph(dag)
    [error] = info.value.errors
    assert error.location.line in (5, 6)
    shown = str(error).split("cycle in the DAG: ")[1]
    assert "_condor_join_node" not in shown
    assert shown in _rotations(["A", "C", "A"])


def test_cycle_through_splice_nodes(tmp_path: Path) -> None:
    write(tmp_path, {
        "top.dag": "JOB A a\nSPLICE S s.dag\nPARENT A CHILD S\nPARENT S CHILD A\n",
        "s.dag": "JOB X x\n",
    })
    dag = parse_file(str(tmp_path / "top.dag"))
    with pytest.raises(DagError) as info:
        load_graph(dag)
    [error] = info.value.errors
    assert error.location.file == str(tmp_path / "top.dag") and error.location.line in (3, 4)
    assert str(error).split("cycle in the DAG: ")[1] in _rotations(["A", "S+X", "A"])


def test_cycle_inside_a_splice_is_located_in_the_spliced_file(tmp_path: Path) -> None:
    write(tmp_path, {
        "top.dag": "JOB A a\nSPLICE S s.dag\n",
        "s.dag": "JOB X x\nJOB Y y\nPARENT X CHILD Y\nPARENT Y CHILD X\n",
    })
    with pytest.raises(DagError) as info:
        load_graph(parse_file(str(tmp_path / "top.dag")))
    [error] = info.value.errors
    assert error.location.file == str(tmp_path / "s.dag") and error.location.line in (3, 4)
    assert str(error).split("cycle in the DAG: ")[1] in _rotations(["S+X", "S+Y", "S+X"])


def test_acyclic_graph_with_many_paths_is_not_a_cycle() -> None:
    lines = [f"JOB N{i} n.sub" for i in range(30)]
    lines += [f"PARENT N{i} CHILD N{j}" for i in range(30) for j in range(i + 1, min(30, i + 4))]
    graph = load_graph(parse_text("\n".join(lines) + "\n", file="wide.dag"))
    assert graph.find_cycle() is None
    assert graph.edge_count == sum(min(30, i + 4) - i - 1 for i in range(30))


def test_a_higher_levels_maxjobs_overrides_the_splices_own(tmp_path):
    """As 23.9.6 on the pool: MAXJOBS S1+local 5 in the DAG beats the splice's MAXJOBS local 1
    (both of its nodes were submitted in one cycle), with DAGMan's warning for each override."""
    (tmp_path / "x.dag").write_text("SPLICE S1 s.dag\nSPLICE S2 s.dag\nJOB T t.sub\nCATEGORY T +shared\n"
                                    "MAXJOBS +shared 1\nMAXJOBS S1+local 5\n")
    (tmp_path / "s.dag").write_text("JOB P t.sub\nJOB Q t.sub\nCATEGORY P +shared\nCATEGORY Q local\nMAXJOBS local 1\n")
    graph = build_graph(parse_file(str(tmp_path / "x.dag")))
    assert graph.max_jobs == {"+shared": 1, "S1+local": 5, "S2+local": 1}
    assert graph.overridden == [
        "Warning: higher-level (root) maxjobs value of 1 for category +shared overrides splice S1 value of -1",
        "Warning: higher-level (root) maxjobs value of 5 for category S1+local overrides splice S1 value of 1",
        "Warning: higher-level (root) maxjobs value of 1 for category +shared overrides splice S2 value of -1"]
