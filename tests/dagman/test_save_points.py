"""SAVE_POINT_FILE as the DAGMan manual writes it, and -load_save: where, when, under what name
and with what content DAGMan 23.9.6 wrote the save files of this DAG on the test pool."""

from __future__ import annotations

import subprocess
from pathlib import Path

from installed import CRABTUI

DAG = ("JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nJOB D job.sub\nRETRY B 2\n"
       "PARENT A CHILD B\nPARENT B CHILD C\nPARENT C CHILD D\n"
       "SAVE_POINT_FILE B\nSAVE_POINT_FILE C c.save\nSAVE_POINT_FILE D ./sub/d.save\n")


def dag_run(dag_dir: Path, schedd, *args: str) -> int:
    return subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", *args, "x.dag"],
                          cwd=dag_dir, capture_output=True, text=True, timeout=120).returncode


def body(path: Path) -> list[str]:
    """A save file without its "# Created" line."""
    return [line for line in path.read_text().splitlines() if not line.startswith("# Created ")]


def header(node: str, done: int) -> list[str]:
    return [f"# Save file written at Start Node {node}", "# Rescue DAG version: 2.0.1 (partial)", "#",
            "# Total number of Nodes: 4", f"# Nodes premarked DONE: {done}", "# Nodes that failed: 0",
            "#   <ENDLIST>", ""]


def test_save_files_are_written_as_each_node_starts_where_dagman_puts_them(dag_dir, schedd):
    (dag_dir / "sub").mkdir()
    (dag_dir / "x.dag").write_text(DAG + 'VARS ALL_NODES code="0"\n')
    assert dag_run(dag_dir, schedd) == 0
    assert body(dag_dir / "save_files" / "B-x.dag.save") == header("B", 1) + ["DONE A", "RETRY B 2"]
    assert body(dag_dir / "save_files" / "c.save") == header("C", 2) + ["DONE A", "DONE B", "RETRY B 2"]
    assert body(dag_dir / "sub" / "d.save") == header("D", 3) + ["DONE A", "DONE B", "RETRY B 2", "DONE C"]
    out = (dag_dir / "x.dag.dagman.out").read_text()
    assert f"Writing Save File to {dag_dir / 'save_files' / 'c.save'}..." in out
    assert "Writing Save File to ./sub/d.save..." in out, "a path is shown as written"


def test_load_save_reruns_the_dag_from_its_save_point(dag_dir, schedd):
    (dag_dir / "sub").mkdir()
    (dag_dir / "x.dag").write_text(DAG + 'VARS ALL_NODES code="0"\n')
    assert dag_run(dag_dir, schedd) == 0
    (dag_dir / "runs.txt").unlink()
    assert dag_run(dag_dir, schedd, "-load_save", "c.save") == 0
    assert [line.split()[0] for line in (dag_dir / "runs.txt").read_text().splitlines()] == ["C", "D"]
    assert (dag_dir / "save_files" / "c.save.old").exists(), "C started again: its save file was rotated"
    assert "Loading saved progress from c.save for DAG." in (dag_dir / "x.dag.dagman.out").read_text()


def test_load_save_beside_a_rescue_dag_starts_from_the_save_file_alone(dag_dir, schedd):
    """A failed run leaves a rescue DAG; -load_save then starts from the save file, and dagman.out
    neither says it runs the rescue DAG nor names it as the one it started from (seen on the pool:
    only "Loading saved progress from B-x.dag.save for DAG.")."""
    (dag_dir / "sub").mkdir()
    (dag_dir / "x.dag").write_text(DAG + 'VARS A code="0"\nVARS B code="0"\nVARS C code="3"\nVARS D code="0"\n')
    assert dag_run(dag_dir, schedd) == 1
    assert (dag_dir / "x.dag.rescue001").exists()
    (dag_dir / "x.dag").write_text(DAG + 'VARS ALL_NODES code="0"\n')
    (dag_dir / "runs.txt").unlink()
    submitted = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "submit", "-no_submit",
                                "-load_save", "B-x.dag.save", "x.dag"], cwd=dag_dir, capture_output=True, text=True)
    assert submitted.returncode == 0 and "Running rescue DAG" not in submitted.stdout, submitted.stdout
    assert dag_run(dag_dir, schedd, "-load_save", "B-x.dag.save") == 0
    assert [line.split()[0] for line in (dag_dir / "runs.txt").read_text().splitlines()] == ["B", "C", "D"]
    out = (dag_dir / "x.dag.dagman.out").read_text().split("Loading saved progress")[0].splitlines()[-3:]
    assert not any("rescue" in line.lower() for line in out), out


def test_a_retried_node_writes_no_second_save_file(dag_dir, schedd):
    (dag_dir / "x.dag").write_text('JOB B job.sub\nVARS B code="1"\nRETRY B 1\nSAVE_POINT_FILE B\n')
    assert dag_run(dag_dir, schedd) == 1
    assert not (dag_dir / "save_files" / "B-x.dag.save.old").exists(), "written as B started, not as it was retried"


def test_load_save_of_a_missing_file_is_a_clear_error(dag_dir, schedd):
    (dag_dir / "x.dag").write_text(DAG)
    result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", "-load_save",
                             "nothere.save", "x.dag"], cwd=dag_dir, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "save_files/nothere.save" in result.stderr
