"""Rescue DAGs: the exact text DAGMan 23.9.6 writes, their names, writing, reading and applying."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from engine.dag import DagError, load_graph, parse_file, parse_text
from engine.dag.rescue import (
    MAX_RESCUE_NUM,
    Rescue,
    RescueNode,
    apply_rescue,
    format_rescue,
    next_rescue_path,
    read_rescue,
    rescue_files,
    rescue_path,
    write_rescue,
)

DATA = Path(__file__).parent / "data"
CREATED = datetime(2026, 11, 22, 5, 57, 7, tzinfo=timezone.utc)

# What real DAGMan 23.9.6 printed for the diamond DAG whose node C (RETRY C 1) failed.
DIAMOND_RESCUE = """\
# Rescue DAG file, created after running
#   the diamond.dag DAG file
# Created 11/22/2026 05:57:07 UTC
# Rescue DAG version: 2.0.1 (partial)
#
# Total number of Nodes: 4
# Nodes premarked DONE: 2
# Nodes that failed: 1
#   C,<ENDLIST>

DONE A
DONE B
RETRY C 1
"""


def diamond_nodes() -> list[RescueNode]:
    return [
        RescueNode("A", done=True),
        RescueNode("B", done=True),
        RescueNode("C", failed=True, retry=1, retries=1, return_value=1),
        RescueNode("D"),
    ]


# ---------------------------------------------------------------------------- format

def test_diamond_rescue_matches_dagman_23_9_6() -> None:
    assert format_rescue("diamond.dag", diamond_nodes(), CREATED) == DIAMOND_RESCUE


def test_created_time_is_utc_with_unpadded_month_and_day() -> None:
    local = CREATED.astimezone(timezone(timedelta(hours=-7)))  # the same instant elsewhere
    assert format_rescue("diamond.dag", diamond_nodes(), local) == DIAMOND_RESCUE
    early = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert "# Created 1/2/2025 03:04:05 UTC\n" in format_rescue("x.dag", [], early)


def test_unless_exit_comment_precedes_the_retry_line() -> None:
    nodes = [RescueNode("X", failed=True, retry=3, unless_exit=42, retries=1, return_value=42)]
    text = format_rescue("u.dag", nodes, CREATED)
    body = text.split("\n\n", 1)[1]
    assert body == ("# 1 of 3 retries performed; remaining attempts aborted after node returned 42\n"
                    "RETRY X 3 UNLESS-EXIT 42\n")
    assert "#   X,<ENDLIST>\n" in text


def test_no_unless_exit_comment_when_the_node_did_not_return_the_code() -> None:
    nodes = [RescueNode("X", failed=True, retry=3, unless_exit=42, retries=3, return_value=1),
             RescueNode("Y", done=True, retry=2, unless_exit=5, retries=0, return_value=0)]
    body = format_rescue("u.dag", nodes, CREATED).split("\n\n", 1)[1]
    assert body == "RETRY X 3 UNLESS-EXIT 42\nDONE Y\nRETRY Y 2 UNLESS-EXIT 5\n"


def test_done_nodes_with_retry_keep_their_retry_line() -> None:
    nodes = [RescueNode("A", done=True, retry=4), RescueNode("B", failed=True)]
    body = format_rescue("r.dag", nodes, CREATED).split("\n\n", 1)[1]
    assert body == "DONE A\nRETRY A 4\n"


def test_final_node_is_never_written_done_but_is_counted() -> None:
    nodes = [RescueNode("A", done=True), RescueNode("B", failed=True), RescueNode("FIN", done=True, final=True)]
    text = format_rescue("f.dag", nodes, CREATED)
    assert "DONE FIN" not in text
    assert "# Total number of Nodes: 3\n" in text
    assert text.endswith("\nDONE A\n")


def test_join_nodes_are_written_done_and_counted() -> None:
    nodes = [RescueNode("A", done=True), RescueNode("B", done=True), RescueNode("C", failed=True),
             RescueNode("D"), RescueNode("_condor_join_node1", done=True)]
    text = format_rescue("j.dag", nodes, CREATED)
    assert "# Total number of Nodes: 5\n# Nodes premarked DONE: 3\n" in text
    assert text.endswith("\nDONE A\nDONE B\nDONE _condor_join_node1\n")


def test_failed_list_names_every_failed_node_in_order() -> None:
    nodes = [RescueNode("B_B", failed=True), RescueNode("B_A", done=True), RescueNode("B_C", failed=True)]
    text = format_rescue("job_dagman_final-B.dag", nodes, CREATED)
    assert "# Nodes that failed: 2\n#   B_B,B_C,<ENDLIST>\n\nDONE B_A\n" in text


def test_nothing_failed_gives_an_empty_list() -> None:
    text = format_rescue("ok.dag", [RescueNode("A")], CREATED)
    assert "# Nodes that failed: 0\n#   <ENDLIST>\n\n" in text
    assert text.endswith("<ENDLIST>\n\n")


# ---------------------------------------------------------------------------- names

def test_rescue_path() -> None:
    assert rescue_path("diamond.dag", 1) == "diamond.dag.rescue001"
    assert rescue_path("/x/y.dag", 42) == "/x/y.dag.rescue042"
    assert rescue_path("y.dag", 100) == "y.dag.rescue100"


def test_rescue_files_lists_only_this_dags_rescues_in_number_order(tmp_path: Path) -> None:
    dag = tmp_path / "d.dag"
    for name in ["d.dag.rescue010", "d.dag.rescue002", "d.dag.rescue001.old", "d.dag.rescue1000", "d.dag.rescue01",
                 "dd.dag.rescue003", "d.dag2.rescue004", "x.dag.rescue005", "d.dag.rescue003"]:
        (tmp_path / name).write_text("")
    assert rescue_files(str(dag)) == [(2, str(tmp_path / "d.dag.rescue002")),
                                      (3, str(tmp_path / "d.dag.rescue003")),
                                      (10, str(tmp_path / "d.dag.rescue010"))]


def test_rescue_files_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("d.dag.rescue001").write_text("")
    assert rescue_files("d.dag") == [(1, "d.dag.rescue001")]
    assert next_rescue_path("d.dag") == "d.dag.rescue002"


def test_rescue_files_of_a_missing_directory(tmp_path: Path) -> None:
    assert rescue_files(str(tmp_path / "nowhere" / "d.dag")) == []


def test_next_rescue_path_numbers_from_one(tmp_path: Path) -> None:
    dag = str(tmp_path / "d.dag")
    assert next_rescue_path(dag) == dag + ".rescue001"


def test_next_rescue_path_is_highest_plus_one_despite_gaps(tmp_path: Path) -> None:
    dag = str(tmp_path / "d.dag")
    for n in (1, 2, 7):
        Path(rescue_path(dag, n)).write_text("")
    assert next_rescue_path(dag) == dag + ".rescue008"


def test_next_rescue_path_overwrites_the_last_at_the_cap(tmp_path: Path) -> None:
    dag = str(tmp_path / "d.dag")
    Path(rescue_path(dag, MAX_RESCUE_NUM)).write_text("")
    assert MAX_RESCUE_NUM == 100
    assert next_rescue_path(dag) == dag + ".rescue100"
    Path(rescue_path(dag, 4)).write_text("")
    assert next_rescue_path(dag, max_rescue=5) == dag + ".rescue005"
    Path(rescue_path(dag, 5)).write_text("")
    assert next_rescue_path(dag, max_rescue=5) == dag + ".rescue005"
    assert next_rescue_path(dag, max_rescue=999) == dag + ".rescue101"


# ---------------------------------------------------------------------------- write and read

def test_write_rescue_writes_the_formatted_text(tmp_path: Path) -> None:
    path = str(tmp_path / "diamond.dag.rescue001")
    write_rescue(path, "diamond.dag", diamond_nodes(), CREATED)
    assert Path(path).read_text() == DIAMOND_RESCUE
    assert os.listdir(tmp_path) == ["diamond.dag.rescue001"]


def test_write_rescue_replaces_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "d.dag.rescue001")
    Path(path).write_text("OLD\n")
    seen = {}
    real_replace = os.replace

    def spy(src, dst):
        # When the new file takes the old one's place it is complete, and the old one is intact.
        seen["src"] = Path(src).read_text()
        seen["dst"] = Path(dst).read_text()
        real_replace(src, dst)

    monkeypatch.setattr("engine.dag.rescue.os.replace", spy)
    write_rescue(path, "diamond.dag", diamond_nodes(), CREATED)
    assert seen == {"src": DIAMOND_RESCUE, "dst": "OLD\n"}
    assert Path(path).read_text() == DIAMOND_RESCUE


def test_failed_write_leaves_the_old_rescue_alone(tmp_path: Path) -> None:
    path = str(tmp_path / "d.dag.rescue001")
    Path(path).write_text("OLD\n")

    def nodes():
        yield RescueNode("A", done=True)
        raise RuntimeError("crash while writing")

    with pytest.raises(RuntimeError):
        write_rescue(path, "d.dag", nodes(), CREATED)
    assert Path(path).read_text() == "OLD\n"


def test_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "d.dag.rescue001")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("engine.dag.rescue.os.fsync", broken_fsync)
    with pytest.raises(OSError):
        write_rescue(path, "d.dag", diamond_nodes(), CREATED)
    assert os.listdir(tmp_path) == []


def test_read_rescue_round_trip(tmp_path: Path) -> None:
    path = str(tmp_path / "diamond.dag.rescue001")
    nodes = diamond_nodes() + [RescueNode("U", failed=True, retry=3, unless_exit=42, retries=1, return_value=42),
                               RescueNode("FIN", done=True, final=True)]
    write_rescue(path, "diamond.dag", nodes, CREATED)
    rescue = read_rescue(path)
    assert rescue == Rescue(path, done=["A", "B"], retry={"C": (1, None), "U": (3, 42)})
    assert rescue.location("C") == rescue.location("C")
    assert str(rescue.location("C")) == f"{path}:13"
    assert str(rescue.location("A")) == f"{path}:11"


def test_read_rescue_accepts_dagman_spellings(tmp_path: Path) -> None:
    path = tmp_path / "r.rescue001"
    path.write_text("done A\n  DONE B  \n\n// comment\nretry C 2 unless_exit 3\nRetry D 1 UNLESS-EXIT 0\n")
    rescue = read_rescue(str(path))
    assert rescue.done == ["A", "B"]
    assert rescue.retry == {"C": (2, 3), "D": (1, None)}


@pytest.mark.parametrize("line", [
    "JOB A a.sub", "PARENT A CHILD B", "VARS A x=\"1\"", "DONE", "DONE A B", "RETRY A", "RETRY A x",
    "RETRY A 1 UNLESS-EXIT", "RETRY A 1 FOO 2", "RETRY A 1 UNLESS-EXIT x", "SPLICE S s.dag",
])
def test_read_rescue_reports_other_commands_at_their_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "d.dag.rescue001"
    path.write_text(f"# header\nDONE A\n{line}\nDONE B\n")
    with pytest.raises(DagError) as info:
        read_rescue(str(path))
    [error] = info.value.errors
    assert str(error).startswith(f"{path}:3: ")
    assert error.location.line == 3


def test_read_rescue_reports_every_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "d.dag.rescue001"
    path.write_text("JOB A a\nDONE A\nFOO\n")
    with pytest.raises(DagError) as info:
        read_rescue(str(path))
    assert [e.location.line for e in info.value.errors] == [1, 3]


def test_read_rescue_of_a_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "none.rescue001")
    with pytest.raises(DagError) as info:
        read_rescue(path)
    [error] = info.value.errors
    assert str(error).startswith(f"{path}: cannot read rescue DAG")


# ---------------------------------------------------------------------------- apply

def diamond_graph():
    return load_graph(parse_file(str(DATA / "diamond.dag")))


def test_apply_rescue_marks_done_and_overrides_retry(tmp_path: Path) -> None:
    path = tmp_path / "diamond.dag.rescue001"
    path.write_text(DIAMOND_RESCUE.replace("RETRY C 1", "RETRY C 5 UNLESS-EXIT 9"))
    graph = diamond_graph()
    assert graph.nodes["C"].retry == 1
    apply_rescue(graph, read_rescue(str(path)))
    assert {n for n, g in graph.nodes.items() if g.done} == {"A", "B"}
    assert (graph.nodes["C"].retry, graph.nodes["C"].unless_exit) == (5, 9)
    assert (graph.nodes["D"].retry, graph.nodes["D"].unless_exit) == (0, None)
    # the model, which is what the DAG file says, is left alone
    assert not graph.dag.nodes["A"].done and graph.dag.nodes["C"].retry == 1


def test_apply_rescue_written_by_format_rescue(tmp_path: Path) -> None:
    path = str(tmp_path / "diamond.dag.rescue001")
    write_rescue(path, "diamond.dag", diamond_nodes(), CREATED)
    graph = diamond_graph()
    apply_rescue(graph, read_rescue(path))
    assert [n for n, g in graph.nodes.items() if g.done] == ["A", "B"]
    assert graph.nodes["C"].retry == 1


def test_apply_rescue_unknown_node_is_an_error_at_the_rescue_line(tmp_path: Path) -> None:
    path = tmp_path / "diamond.dag.rescue001"
    path.write_text("DONE A\n# gone\nDONE Z\nRETRY Q 2\n")
    graph = diamond_graph()
    with pytest.raises(DagError) as info:
        apply_rescue(graph, read_rescue(str(path)))
    rendered = [str(e) for e in info.value.errors]
    assert len(rendered) == 2
    assert rendered[0].startswith(f"{path}:3: ") and "Z" in rendered[0]
    assert rendered[1].startswith(f"{path}:4: ") and "Q" in rendered[1]


def test_apply_rescue_ignores_done_on_the_final_node(tmp_path: Path) -> None:
    graph = load_graph(parse_text("JOB A a\nFINAL F f\n", file="f.dag"))
    path = tmp_path / "f.dag.rescue001"
    path.write_text("DONE A\nDONE F\n")
    apply_rescue(graph, read_rescue(str(path)))
    assert graph.nodes["A"].done
    assert not graph.nodes["F"].done


def test_apply_rescue_to_join_and_splice_nodes(tmp_path: Path) -> None:
    (tmp_path / "top.dag").write_text("JOB A a\nJOB B b\nSPLICE S s.dag\nPARENT A B CHILD S\n")
    (tmp_path / "s.dag").write_text("JOB X x\nJOB Y y\n")
    graph = load_graph(parse_file(str(tmp_path / "top.dag")))
    path = tmp_path / "top.dag.rescue001"
    path.write_text("DONE A\nDONE B\nDONE _condor_join_node1\nDONE S+X\nRETRY S+Y 2\n")
    apply_rescue(graph, read_rescue(str(path)))
    assert [n for n, g in graph.nodes.items() if g.done] == ["A", "B", "_condor_join_node1", "S+X"]
    assert graph.nodes["S+Y"].retry == 2
