"""What DAGMan 23.9.6 refuses to run, ``crabtui dag check`` refuses, naming the file and line:
the four DAGs of the issue that the parser used to accept, each run on the test pool, and the
DAGs next to them that DAGMan runs (a PARENT line above the INCLUDE or the CONNECT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_cli import run


def check(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return run("dag", "check", str(tmp_path / "x.dag"))


def refused(tmp_path: Path, files: dict[str, str], file: str, line: int, *words: str) -> None:
    result = check(tmp_path, files)
    assert result.exit_code == 1, result.stdout
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{tmp_path / file}:{line}: "), first
    for word in words:
        assert word in first


def test_a_reject_line_in_a_spliced_file_is_refused(tmp_path):
    refused(tmp_path, {"x.dag": "JOB A a.sub\nSPLICE S s.dag\n", "s.dag": "JOB X x.sub\nREJECT\n"},
            "s.dag", 2, "REJECT", "DAGMan refuses")


def test_a_reject_line_in_the_dag_itself_is_refused(tmp_path):
    refused(tmp_path, {"x.dag": "JOB A a.sub\nREJECT\n"}, "x.dag", 2, "REJECT")


def test_connect_between_splices_without_pins_is_refused_in_dagmans_words(tmp_path):
    refused(tmp_path, {"x.dag": "SPLICE S1 s.dag\nSPLICE S2 s.dag\nCONNECT S1 S2\n", "s.dag": "JOB X x.sub\n"},
            "x.dag", 3, "parent splice S1 has 0 pin_outs")


def test_a_child_splice_node_left_without_parents_by_connect_is_refused(tmp_path):
    files = {"x.dag": "SPLICE S1 out.dag\nSPLICE S2 in.dag\nCONNECT S1 S2\n",
             "out.dag": "JOB X x.sub\nPIN_OUT X 1\n", "in.dag": "JOB Y y.sub\nJOB Z z.sub\nPIN_IN Y 1\n"}
    refused(tmp_path, files, "x.dag", 3,
            "child splice node S2+Z has no parents after making pin connections; add pin_in or parent")


def test_a_parent_line_above_the_connect_gives_the_splice_node_its_parent(tmp_path):
    files = {"x.dag": "SPLICE S1 out.dag\nSPLICE S2 in.dag\nJOB P p.sub\nPARENT P CHILD S2\nCONNECT S1 S2\n",
             "out.dag": "JOB X x.sub\nPIN_OUT X 1\n", "in.dag": "JOB Y y.sub\nJOB Z z.sub\nPIN_IN Y 1\n"}
    assert check(tmp_path, files).exit_code == 0, "DAGMan 23.9.6 ran it"


@pytest.mark.parametrize("line", ["PARENT A CHILD S", "PARENT S CHILD A"])
def test_a_splice_named_below_an_include_is_an_unknown_job(tmp_path, line):
    files = {"x.dag": f"JOB A a.sub\nSPLICE S s.dag\nINCLUDE inc.dag\n{line}\n",
             "s.dag": "JOB X x.sub\n", "inc.dag": "JOB B b.sub\n"}
    refused(tmp_path, files, "x.dag", 4, "Unknown Job S", "INCLUDE")


def test_a_splice_declared_below_the_include_is_forgotten_too(tmp_path):
    """DAGMan declares every splice first, then reads the other lines and INCLUDEs in order."""
    files = {"x.dag": "JOB A a.sub\nINCLUDE inc.dag\nPARENT A CHILD S\nSPLICE S s.dag\n",
             "s.dag": "JOB X x.sub\n", "inc.dag": "JOB B b.sub\n"}
    refused(tmp_path, files, "x.dag", 3, "Unknown Job S")


def test_connect_below_an_include_does_not_find_its_splices(tmp_path):
    files = {"x.dag": "SPLICE S1 out.dag\nSPLICE S2 in.dag\nINCLUDE inc.dag\nCONNECT S1 S2\n",
             "out.dag": "JOB X x.sub\nPIN_OUT X 1\n", "in.dag": "JOB Y y.sub\nPIN_IN Y 1\n", "inc.dag": "JOB B b.sub\n"}
    refused(tmp_path, files, "x.dag", 4, "Splice S1 not found!")


def test_lines_naming_splices_above_the_include_are_accepted(tmp_path):
    files = {"x.dag": "JOB A a.sub\nSPLICE S s.dag\nPARENT A CHILD S\nINCLUDE inc.dag\n",
             "s.dag": "JOB X x.sub\n", "inc.dag": "JOB B b.sub\nPARENT S CHILD B\n"}
    assert check(tmp_path, files).exit_code == 0, "DAGMan 23.9.6 ran it; the INCLUDEd file names S before it ends"


def test_a_node_dir_that_does_not_exist_is_refused_at_its_job_line(tmp_path):
    # 23.9.6 on the pool: "ERROR: can't change to directory nowhere", DAGMan exits 1 before any job
    refused(tmp_path, {"x.dag": "JOB B b.sub\nJOB A a.sub DIR nowhere\nPARENT B CHILD A\n"}, "x.dag", 2,
            "DIR nowhere", "no such directory")


def test_a_subdag_dir_that_does_not_exist_is_refused_and_an_existing_one_is_not(tmp_path):
    files = {"x.dag": "SUBDAG EXTERNAL S inner.dag DIR sd\n", "inner.dag": "JOB I i.sub\n"}
    refused(tmp_path, files, "x.dag", 1, "DIR sd", "no such directory")
    (tmp_path / "sd").mkdir()
    assert check(tmp_path, files).exit_code == 0


def test_a_node_dir_inside_a_splice_dir_is_looked_for_there(tmp_path):
    (tmp_path / "inner" / "deep").mkdir(parents=True)
    files = {"x.dag": "SPLICE S inner.dag DIR inner\n", "inner/inner.dag": "JOB X x.sub DIR deep\nJOB Y y.sub DIR gone\n"}
    refused(tmp_path, files, "inner/inner.dag", 2, "DIR gone", str(Path("inner") / "gone"))
