"""The embedded DAGMan against a real embedded schedd and real job processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from engine.dag import build_graph, parse_file
from engine.dag.rescue import apply_rescue, read_rescue, rescue_files
from engine.dagman.metrics import read_metrics
from engine.dagman.node_status import read_node_status
from engine.dagman.node_status import NodeState as NodeStatus
from engine.dagman.progress import DagWatcher
from engine.dagman.runner import DagMan, DagStatus, Options
from installed import CRABTUI


def run(path: Path, schedd, rescue: bool = False) -> DagMan:
    graph = build_graph(parse_file(str(path)))
    if rescue:
        apply_rescue(graph, read_rescue(rescue_files(str(path))[-1][1]))
    dagman = DagMan(graph, schedd, Options(scan_interval=0.05))
    dagman.exit_code = dagman.run()
    return dagman


def runs(dag_dir: Path) -> list[str]:
    path = dag_dir / "runs.txt"
    return path.read_text().splitlines() if path.exists() else []


DIAMOND = """\
JOB A job.sub
JOB B job.sub
JOB C job.sub
JOB D job.sub
VARS ALL_NODES code="0"
PARENT A CHILD B C
PARENT B C CHILD D
"""


def test_diamond_runs_every_node_in_dependency_order(dag_dir, schedd):
    (dag_dir / "diamond.dag").write_text(DIAMOND)
    dagman = run(dag_dir / "diamond.dag", schedd)
    assert dagman.exit_code == 0
    order = [line.split()[0] for line in runs(dag_dir)]
    assert order[0] == "A" and order[-1] == "D" and sorted(order[1:3]) == ["B", "C"]
    assert all(n.status is NodeStatus.DONE for n in dagman.nodes.values())
    assert rescue_files(str(dag_dir / "diamond.dag")) == []


def test_failed_node_is_retried_then_written_to_a_rescue_dag_as_dagman_23_9_writes_it(dag_dir, schedd):
    (dag_dir / "diamond.dag").write_text(DIAMOND + 'VARS C code="1"\nRETRY C 1\n')
    dagman = run(dag_dir / "diamond.dag", schedd)
    assert dagman.exit_code == 1
    assert dagman.dag_status is DagStatus.NODE_FAILED
    assert runs(dag_dir).count("C 0") == 1 and runs(dag_dir).count("C 1") == 1, "C ran twice, $(RETRY) 0 then 1"
    assert dagman.nodes["D"].status is NodeStatus.FUTILE
    text = (dag_dir / "diamond.dag.rescue001").read_text().splitlines()
    assert text[0:2] == ["# Rescue DAG file, created after running", "#   the diamond.dag DAG file"]
    assert text[2].startswith("# Created ") and text[2].endswith(" UTC")
    assert text[3:] == ["# Rescue DAG version: 2.0.1 (partial)", "#", "# Total number of Nodes: 4",
                        "# Nodes premarked DONE: 2", "# Nodes that failed: 1", "#   C,<ENDLIST>", "",
                        "DONE A", "DONE B", "RETRY C 1"]


def test_rescue_dag_reruns_only_what_did_not_finish(dag_dir, schedd):
    dag = dag_dir / "diamond.dag"
    dag.write_text(DIAMOND + 'VARS C code="1"\n')
    assert run(dag, schedd).exit_code == 1
    dag.write_text(DIAMOND)  # the user fixes C; the rescue DAG keeps A and B done
    (dag_dir / "runs.txt").unlink()
    dagman = run(dag, schedd, rescue=True)
    assert dagman.exit_code == 0
    assert [line.split()[0] for line in runs(dag_dir)] == ["C", "D"]


def test_abort_dag_on_with_return_0_succeeds_without_a_rescue_dag(dag_dir, schedd):
    (dag_dir / "abort.dag").write_text(DIAMOND + 'VARS B code="5"\nABORT-DAG-ON B 5 RETURN 0\nPARENT B CHILD C\n')
    dagman = run(dag_dir / "abort.dag", schedd)
    assert dagman.exit_code == 0
    assert "D 0" not in runs(dag_dir) and "C 0" not in runs(dag_dir)
    assert rescue_files(str(dag_dir / "abort.dag")) == []


def test_abort_dag_on_returns_its_value_and_writes_a_rescue_dag(dag_dir, schedd):
    (dag_dir / "abort.dag").write_text(DIAMOND + 'VARS A code="3"\nABORT-DAG-ON A 3 RETURN 7\n')
    dagman = run(dag_dir / "abort.dag", schedd)
    assert dagman.exit_code == 7
    assert dagman.dag_status is DagStatus.ABORT
    assert len(rescue_files(str(dag_dir / "abort.dag"))) == 1


def test_final_node_runs_after_a_failure_and_decides_the_exit_code(dag_dir, schedd):
    (dag_dir / "final.dag").write_text(DIAMOND + 'VARS A code="1"\nFINAL F job.sub\nVARS F code="0"\n')
    dagman = run(dag_dir / "final.dag", schedd)
    assert runs(dag_dir)[-1] == "F 0"
    assert dagman.exit_code == 0, "a FINAL node's success makes DAGMan exit 0"
    assert dagman.dag_status is DagStatus.NODE_FAILED
    rescue = (dag_dir / "final.dag.rescue001").read_text()
    assert "DONE F" not in rescue, "the rescue DAG is written before FINAL runs and never lists it"


def test_post_script_masks_a_failed_job_and_sees_its_return_value(dag_dir, schedd):
    # Script arguments are split on blanks with no quoting, as DAGMan does: hence a script file.
    (dag_dir / "ok.sh").write_text("exit 0\n")
    (dag_dir / "post.dag").write_text('JOB A job.sub\nVARS A code="4"\n'
                                      'SCRIPT POST A /bin/sh ok.sh\n'
                                      'JOB B job.sub\nVARS B code="0"\nPARENT A CHILD B\n'
                                      'SCRIPT POST B /bin/sh post.sh $RETURN $JOB\n')
    (dag_dir / "post.sh").write_text('echo "post $2 saw $1" >> runs.txt\n')
    dagman = run(dag_dir / "post.dag", schedd)
    assert dagman.exit_code == 0
    assert "post B saw 0" in runs(dag_dir)


def test_pre_skip_marks_the_node_done_without_running_its_job(dag_dir, schedd):
    (dag_dir / "two.sh").write_text("exit 2\n")
    (dag_dir / "skip.dag").write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT PRE A /bin/sh two.sh\n'
                                      'PRE_SKIP A 2\nJOB B job.sub\nVARS B code="0"\nPARENT A CHILD B\n')
    dagman = run(dag_dir / "skip.dag", schedd)
    assert dagman.exit_code == 0
    assert runs(dag_dir) == ["B 0"]


def test_noop_nodes_run_no_job(dag_dir, schedd):
    (dag_dir / "noop.dag").write_text("JOB A job.sub NOOP\nJOB B job.sub NOOP\nPARENT A CHILD B\n")
    dagman = run(dag_dir / "noop.dag", schedd)
    assert dagman.exit_code == 0
    assert runs(dag_dir) == []
    assert all(n.status is NodeStatus.DONE for n in dagman.nodes.values())


def test_metrics_count_the_nodes_done_from_the_rescue_dag_as_succeeded(dag_dir, schedd):
    dag = dag_dir / "diamond.dag"
    dag.write_text(DIAMOND + 'VARS C code="1"\n')
    run(dag, schedd)
    first = read_metrics(str(dag) + ".metrics")
    assert (first["exitcode"], first["DagStatus"], first["rescue_dag_number"]) == (1, 2, 0)
    assert (first["jobs"], first["jobs_succeeded"], first["jobs_failed"], first["total_jobs_run"]) == (4, 2, 1, 3)
    assert list(first)[-1] == "DagStatus"
    graph = build_graph(parse_file(str(dag)))
    apply_rescue(graph, read_rescue(rescue_files(str(dag))[-1][1]))
    DagMan(graph, schedd, Options(scan_interval=0.05, rescue_dag_number=1)).run()
    second = read_metrics(str(dag) + ".metrics")
    assert second["rescue_dag_number"] == 1
    # Real DAGMan 23.9.6 counts the nodes the rescue DAG marks DONE as succeeded (seen on the test pool).
    assert (second["jobs_succeeded"], second["jobs_failed"], second["total_jobs_run"]) == (2, 1, 3)


def test_crabtui_dag_run_exits_with_dagmans_code(dag_dir, schedd):
    (dag_dir / "diamond.dag").write_text(DIAMOND + 'VARS D code="2"\n')
    result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", "diamond.dag"],
                            cwd=dag_dir, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert (dag_dir / "diamond.dag.rescue001").exists()
    assert result.stderr == (f"ERROR: diamond.dag: 1 failed node(s) (D); DAGMan exit 1: {dag_dir}/diamond.dag.dagman.out "
                             "says why; run it again to go on from diamond.dag.rescue001\n")


def test_node_status_file_tells_the_outcome_of_every_node(dag_dir, schedd):
    dag = dag_dir / "status.dag"
    dag.write_text(DIAMOND + 'VARS C code="3"\nRETRY C 1\nNODE_STATUS_FILE status.txt 0 ALWAYS-UPDATE\n')
    run(dag, schedd)
    dag_ad, *node_ads, end = read_node_status(str(dag_dir / "status.txt"))
    assert (dag_ad["DagStatus"], dag_ad["NodesTotal"], dag_ad["NodesDone"]) == (6, 4, 2)
    assert (dag_ad["NodesFailed"], dag_ad["NodesFutile"], dag_ad["NodesQueued"]) == (1, 1, 0)
    nodes = {ad["Node"]: ad for ad in node_ads}
    assert nodes["C"]["NodeStatus"] == 6 and nodes["C"]["RetryCount"] == 1
    assert nodes["C"]["StatusDetails"].startswith("Job proc (") and "failed with status 3" in nodes["C"]["StatusDetails"]
    assert nodes["C"]["StatusDetails"].endswith("(after 1 node retries)")
    assert nodes["D"]["StatusDetails"] == "Had an ancestor node fail"
    assert end["NextUpdate"] == 0, "the closing dump says no update follows"
    assert '/* "STATUS_ERROR (failed)" */' in (dag_dir / "status.txt").read_text()


def test_dot_file_shows_a_node_marked_done_as_done_from_the_first_dump(dag_dir, schedd):
    """``JOB D job.sub DONE`` is Done in the DOT file DAGMan writes once the DAG is parsed, bold,
    as 23.9.6 writes it (seen on the pool), not idle like the nodes yet to run."""
    dag = dag_dir / "dot.dag"
    dag.write_text('JOB A job.sub\nJOB D job.sub DONE\nVARS ALL_NODES code="0"\nPARENT D CHILD A\nDOT x.dot\n')
    assert run(dag, schedd).exit_code == 0
    lines = (dag_dir / "x.dot").read_text().splitlines()
    assert '    "D" [shape=ellipse label="D (Done)" style=bold];' in lines
    assert '    "A" [shape=ellipse label="A (I)"];' in lines


def test_a_script_given_twice_is_replaced_and_dagman_out_says_so_as_23_9_6_does(dag_dir, schedd):
    """The second SCRIPT PRE of a node wins; dagman.out says which replaced which as it parses
    (seen on the pool, at every DAGMAN_USE_STRICT)."""
    (dag_dir / "pre.sh").write_text('#!/bin/sh\necho "$*" >> scripts.txt\n')
    (dag_dir / "pre.sh").chmod(0o755)
    dag = dag_dir / "twice.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT PRE A pre.sh one $JOB\nSCRIPT PRE A pre.sh two $JOB\n')
    assert run(dag, schedd).exit_code == 0
    assert (dag_dir / "scripts.txt").read_text() == "two A\n"
    said = [line[18:] for line in (dag_dir / "twice.dag.dagman.out").read_text().splitlines()]
    at = next(i for i, line in enumerate(said) if line.startswith("Parsing ") and line.endswith("twice.dag ..."))
    assert said[at + 1:at + 3] == ["Warning: node A already has PRE script <pre.sh one $JOB> assigned; "
                                   "changing to <pre.sh two $JOB>", "Adjusting edges"]


def test_jobstate_log_has_dagmans_lines_and_sequence_numbers(dag_dir, schedd):
    (dag_dir / "ok.sh").write_text("exit 0\n")
    dag = dag_dir / "js.dag"
    dag.write_text('JOB A job.sub\nVARS A code="1"\nRETRY A 1\nSCRIPT POST A /bin/sh ok.sh\n'
                   'JOB B job.sub\nVARS B code="0"\nPARENT A CHILD B\nJOBSTATE_LOG js.log\n')
    assert run(dag, schedd).exit_code == 0
    lines = [line.split(" ", 1)[1] for line in (dag_dir / "js.log").read_text().splitlines()]
    assert lines[0] == "INTERNAL *** DAGMAN_STARTED 0.0 ***" and lines[-1] == "INTERNAL *** DAGMAN_FINISHED 0 ***"
    a = [line for line in lines if line.startswith("A ")]
    events = [line.split()[1] for line in a]
    assert events == ["SUBMIT", "EXECUTE", "JOB_TERMINATED", "JOB_FAILURE", "POST_SCRIPT_STARTED",
                      "POST_SCRIPT_TERMINATED", "POST_SCRIPT_SUCCESS"], "the POST masks the failure: no retry"
    assert all(line.endswith(" - - 1") for line in a), "one attempt, sequence number 1"
    assert [line.split()[1] for line in lines if line.startswith("B ")][-1] == "JOB_SUCCESS"
    assert all(line.endswith(" - - 2") for line in lines if line.startswith("B "))


def test_dagman_out_tells_the_run_and_ends_with_the_exit_status(dag_dir, schedd):
    dag = dag_dir / "diamond.dag"
    dag.write_text(DIAMOND + 'VARS C code="1"\nRETRY C 1\n')
    run(dag, schedd)
    out = (dag_dir / "diamond.dag.dagman.out").read_text().splitlines()
    bodies = [line[18:] for line in out]  # after DAGMan's "MM/DD/YY HH:MM:SS " prefix
    assert "** condor_dagman (CONDOR_DAGMAN) STARTING UP" in bodies
    assert any(b.startswith("Event: ULOG_SUBMIT for HTCondor Node A (") for b in bodies)
    assert "Retrying node C (retry #1 of 1)..." in bodies
    assert any(b.startswith("Writing Rescue DAG to ") for b in bodies)
    assert "Of 4 nodes total:" in bodies
    assert bodies[-1].endswith("EXITING WITH STATUS 1")


def test_the_rescue_dag_a_run_starts_from_is_named_in_dagman_out_as_23_9_names_it(dag_dir, schedd):
    """condor_dagman says which rescue DAG it runs (seen on the pool), and the DAG screen's
    reader takes it from the ``USING RESCUE DAG`` line: picked up by itself, or -DoRescueFrom N,
    which first renames the newer ones."""
    (dag_dir / "r.dag").write_text("# the manual's chain\nJOB A job.sub\nJOB B job.sub\nJOB C job.sub\n"
                                   'VARS ALL_NODES code="0"\nPARENT A CHILD B\nPARENT B CHILD C\n')
    (dag_dir / "r.dag.rescue001").write_text("DONE A\n")
    (dag_dir / "r.dag.rescue002").write_text("DONE A\nDONE B\n")

    def dag_run(*options: str) -> list[str]:
        result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", *options, "r.dag"],
                                cwd=dag_dir, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        out = (dag_dir / "r.dag.dagman.out").read_text().splitlines()
        return [line[18:] for line in out if line[18:].startswith(("Renaming", "Found", "Rescue DAG", "~", "USING"))]

    assert dag_run("-DoRescueFrom", "1") == [
        "Renaming rescue DAGs newer than number 1", "Renaming r.dag.rescue002",
        "Rescue DAG number 1 specified; running r.dag.rescue001 in combination with normal DAG file",
        "~" * 54, "USING RESCUE DAG r.dag.rescue001"]
    assert [line.split()[0] for line in runs(dag_dir)] == ["B", "C"]
    assert DagWatcher(str(dag_dir / "r.dag")).read().rescue_used == str(dag_dir / "r.dag.rescue001")
    (dag_dir / "r.dag.rescue002").write_text("DONE A\nDONE B\n")
    (dag_dir / "r.dag.dagman.out").unlink()  # DAGMan appends to it run after run
    assert dag_run() == ["Found rescue DAG number 2; running r.dag.rescue002 in combination with normal DAG file",
                         "~" * 54, "USING RESCUE DAG r.dag.rescue002"]


def test_dagman_out_names_each_splice_as_it_is_parsed_with_its_directory(dag_dir, schedd):
    """As 23.9.6 on the pool: a splice without DIR is read in ".", a nested one right after its parent."""
    (dag_dir / "d").mkdir()
    (dag_dir / "x.dag").write_text("JOB A job.sub NOOP\nSPLICE S s.dag\nSPLICE U d/u.dag\nPARENT A CHILD S\n")
    (dag_dir / "s.dag").write_text("JOB B job.sub NOOP\nSPLICE T t.dag DIR d\n")
    (dag_dir / "d" / "t.dag").write_text("JOB C job.sub NOOP\n")
    (dag_dir / "d" / "u.dag").write_text("JOB E job.sub NOOP\n")
    assert run(dag_dir / "x.dag", schedd).exit_code == 0
    said = [line[18:] for line in (dag_dir / "x.dag.dagman.out").read_text().splitlines() if "Parsing " in line]
    assert said[2:] == ["Parsing Splice S in directory . with file s.dag",
                    "Parsing Splice T in directory d with file t.dag", "Parsing Splice U in directory . with file d/u.dag"]


def test_dagman_out_warns_of_a_splices_maxjobs_the_dag_overrides_before_adjusting_edges(dag_dir, schedd):
    (dag_dir / "x.dag").write_text("SPLICE S s.dag\nMAXJOBS S+local 2\n")
    (dag_dir / "s.dag").write_text("JOB P1 job.sub NOOP\nJOB P2 job.sub NOOP\nCATEGORY P1 local\nCATEGORY P2 local\n"
                                   "MAXJOBS local 1\n")
    assert run(dag_dir / "x.dag", schedd).exit_code == 0
    said = [line[18:] for line in (dag_dir / "x.dag.dagman.out").read_text().splitlines()]
    warning = "Warning: higher-level (root) maxjobs value of 2 for category S+local overrides splice S value of 1"
    assert said[said.index(warning) + 1] == "Adjusting edges"


def test_dagman_out_names_a_splice_level_that_overrides_a_nested_splices_maxjobs_by_its_scope(dag_dir, schedd):
    """As 23.9.6 said on the pool: a splice's own MAXJOBS for its inner splice's category is
    "higher-level (S+)", one level deeper "(T+)" (the overriding splice's own scope), and the
    root's still "(root)", each as its splice is parsed."""
    (dag_dir / "top.dag").write_text("JOB A job.sub NOOP\nSPLICE S mid.dag\nMAXJOBS S+T+local 4\n")
    (dag_dir / "mid.dag").write_text("JOB M job.sub NOOP\nSPLICE T inner.dag\nMAXJOBS T+local 2\n")
    (dag_dir / "inner.dag").write_text("JOB N job.sub NOOP\nSPLICE U leaf.dag\nMAXJOBS U+local 3\n"
                                       "CATEGORY N local\nMAXJOBS local 1\n")
    (dag_dir / "leaf.dag").write_text("JOB X job.sub NOOP\nJOB Y job.sub NOOP\nCATEGORY X local\nCATEGORY Y local\n"
                                      "MAXJOBS local 1\n")
    assert run(dag_dir / "top.dag", schedd).exit_code == 0
    said = [line[18:] for line in (dag_dir / "top.dag.dagman.out").read_text().splitlines()]
    assert [line for line in said if line.startswith("Warning: higher-level")] == [
        "Warning: higher-level (T+) maxjobs value of 3 for category U+local overrides splice U value of 1",
        "Warning: higher-level (S+) maxjobs value of 2 for category T+local overrides splice T value of 1",
        "Warning: higher-level (root) maxjobs value of 4 for category S+T+local overrides splice S value of 2"]
