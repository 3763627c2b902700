"""A DAG's progress read back from its dagman.out (:mod:`engine.dagman.progress`): node for node
what DAGMan's own node status file says at the end of the run, and while it runs, each node's
state with why it waits; the lines of dagman.out read as they are written."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from engine.dagman.dagman_out import DagmanOutReader
from engine.dagman.node_status import NodeState, read_node_status
from engine.dagman.progress import DagWatcher, run_order
from engine.dag import load_graph, parse_file
from installed import CRABTUI

SCRIPT = "#!/bin/sh\necho \"$0 of $1 says $2\"\nexit $2\n"
DAG = """\
JOB A job.sub
VARS A code="0"
SCRIPT DEBUG pre.out ALL PRE A ./script.sh A 0
JOB B job.sub
VARS B code="3"
RETRY B 2
SCRIPT POST B ./script.sh B $RETURN
JOB C job.sub
VARS C code="0"
JOB D job.sub
VARS D code="0"
JOB E job.sub NOOP
JOB P job.sub
SCRIPT PRE P ./script.sh P 7
JOB F job.sub DONE
SUBDAG EXTERNAL SD sub.dag
PARENT A CHILD B C SD
PARENT B CHILD D
PARENT F CHILD E
FINAL Z job.sub
VARS Z code="0"
NODE_STATUS_FILE x.status 0 ALWAYS-UPDATE
"""


def dag_run(schedd, dag: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", dag.name], cwd=dag.parent,
                          capture_output=True, text=True, timeout=120)


def test_the_progress_of_a_run_is_what_dagmans_node_status_file_says(dag_dir, schedd):
    (dag_dir / "script.sh").write_text(SCRIPT)
    (dag_dir / "script.sh").chmod(0o755)
    (dag_dir / "sub.dag").write_text('JOB S1 job.sub\nVARS S1 code="0"\n')
    dag = dag_dir / "x.dag"
    dag.write_text(DAG)
    assert dag_run(schedd, dag).returncode == 0, "the FINAL node decides the DAG's outcome"

    progress = DagWatcher(str(dag)).read()
    ads = read_node_status(dag_dir / "x.status")
    expected = {ad["Node"]: ad for ad in ads if ad["Type"] == "NodeStatus"}
    got = {n.name: n for n in progress.nodes}
    assert set(got) == set(expected)
    for name, ad in expected.items():
        node = got[name]
        assert (name, int(node.state), node.retries) == (name, ad["NodeStatus"], ad["RetryCount"])
        if node.state is NodeState.ERROR:
            assert node.why == ad["StatusDetails"]
    assert got["B"].why == "Job exited with status 3 and POST Script failed with status 3 (after 2 node retries)"
    assert (got["B"].exit_code, got["B"].retry_max, got["B"].job is not None) == (3, 2, True)
    assert got["P"].why == "PRE Script failed with status 7" and got["P"].exit_code == 7
    assert got["D"].why == "parent B failed"
    assert got["SD"].kind == "subdag" and got["SD"].subdag == str(dag_dir / "sub.dag")
    assert got["A"].scripts["PRE"].output == str(dag_dir / "pre.out")
    assert (dag_dir / "pre.out").read_text().splitlines()[1:] == ["./script.sh of A says 0"], "under DAGMan's *** line"
    status = ads[0]
    assert progress.counts == {w: n for w, n in (
        ("done", status["NodesDone"]), ("failed", status["NodesFailed"]), ("futile", status["NodesFutile"])) if n}
    assert progress.exit_status == 0 and progress.dag_status == 2
    assert progress.rescue_written and progress.rescue_written.endswith("x.dag.rescue001")
    assert [n.name for n in progress.nodes][-1] == "Z", "the FINAL node last"


def test_a_rescue_run_starts_from_the_rescue_dags_done_nodes(dag_dir, schedd):
    dag = dag_dir / "d.dag"
    dag.write_text('JOB A job.sub\nJOB B job.sub\nVARS A code="0"\nVARS B code="1"\nPARENT A CHILD B\n')
    assert dag_run(schedd, dag).returncode == 1
    dag.write_text('JOB A job.sub\nJOB B job.sub\nVARS A code="0"\nVARS B code="0"\nPARENT A CHILD B\n')
    time.sleep(1.1)  # the new run starts in a later second than the rescue DAG was written
    (dag_dir / "runs.txt").unlink()
    assert dag_run(schedd, dag).returncode == 0
    assert (dag_dir / "runs.txt").read_text() == "B 0\n"
    progress = DagWatcher(str(dag)).read()
    assert [(n.name, n.word) for n in progress.nodes] == [("A", "done"), ("B", "done")]
    assert progress.nodes[0].since is None, "A did not run in this run: the rescue DAG said it was done"


def test_nodes_that_have_not_run_say_what_they_wait_for(tmp_path):
    (tmp_path / "w.dag").write_text("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub\nJOB E e.sub\nJOB F f.sub\n"
                                    "PARENT A B C D CHILD E\nPARENT E CHILD F\nFINAL Z z.sub\n")
    progress = DagWatcher(str(tmp_path / "w.dag")).read()
    assert progress.read_error.startswith(f"{tmp_path}/w.dag.dagman.out: No such file")
    watcher = DagWatcher(str(tmp_path / "w.dag"))
    (tmp_path / "w.dag.dagman.out").write_text("")
    why = {n.name: (n.word, n.why) for n in watcher.read().nodes}
    assert why["A"] == ("ready", "")
    assert why["E"] == ("unready", "waiting for A, B, C and 1 more")
    assert why["F"] == ("unready", "waiting for E")
    assert why["Z"] == ("unready", "the FINAL node: runs once every other node has ended")


def test_run_order_puts_parents_first_and_keeps_the_files_order_otherwise(tmp_path):
    (tmp_path / "o.dag").write_text("JOB C c.sub\nJOB B b.sub\nJOB A a.sub\nFINAL Z z.sub\nPARENT A CHILD B\n")
    assert run_order(load_graph(parse_file(str(tmp_path / "o.dag")))) == ["C", "A", "B", "Z"]


def test_dagman_out_is_read_as_it_grows_whole_lines_only(tmp_path):
    out = tmp_path / "x.dag.dagman.out"
    out.write_text("11/26/26 15:31:12 Submitting HTCondor Node B job(s)...\n"
                   "11/26/26 15:31:12 \tassigned HTCondor ID (1613.0.0)\n"
                   "11/26/26 15:31:13 Event: ULOG_EXECUTE for HTCondor Node B (1613.0.0) {11/26/26 15:31:12}\n"
                   "11/26/26 15:31:13 Node B job proc (16")
    reader = DagmanOutReader(str(out))
    assert [(r.what, r.node, r.values) for r in reader.read()] == [
        ("submitting", "B", ()), ("assigned", "", ("1613.0",)), ("event", "B", ("EXECUTE", "1613.0"))]
    with out.open("a") as f:
        f.write("13.0.0) failed with status 3.\n11/26/26 15:31:14 DAG status: 0 (DAG_STATUS_OK)\n"
                "11/26/26 15:31:14 Of 6 nodes total:\n"
                "11/26/26 15:31:14  Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile\n"
                "11/26/26 15:31:14   ===     ===      ===     ===     ===        ===      ===      ===\n"
                "11/26/26 15:31:14     3       0        1       1       0          1        0        0\n")
    assert [(r.what, r.node, r.values) for r in reader.read()] == [
        ("proc_failed", "B", ("1613.0", "status", 3)), ("status", "", (0, 6, 3, 0, 1, 1, 0, 1, 0, 0))]
    assert reader.read() == []
    assert reader.last_line_at == time.mktime(time.strptime("11/26/26 15:31:14", "%m/%d/%y %H:%M:%S"))


def test_each_runs_banner_names_the_dagman_job_that_wrote_it(tmp_path):
    """A schedd runs DAGMan as condor_scheduniv_exec.<cluster>.<proc> (real HTCondor 23.9.6's
    banner); a DAGMan run by hand names no job."""
    out = tmp_path / "x.dag.dagman.out"
    out.write_text("11/27/26 03:39:58 ** condor_scheduniv_exec.154.0 (CONDOR_DAGMAN) STARTING UP\n"
                   "11/27/26 03:40:30 ** condor_dagman (CONDOR_DAGMAN) STARTING UP\n")
    assert [(r.what, r.values) for r in DagmanOutReader(str(out)).read()] == [
        ("starting_up", (154,)), ("starting_up", (None,))]


def test_a_watcher_of_one_dagman_job_keeps_to_its_run(tmp_path):
    (tmp_path / "x.dag").write_text("JOB A a.sub\nJOB B b.sub\n")
    out = tmp_path / "x.dag.dagman.out"
    banner = "11/27/26 0{}:00:00 ** condor_scheduniv_exec.{}.0 (CONDOR_DAGMAN) STARTING UP\n"
    run = ("11/27/26 0{0}:00:01 Submitting HTCondor Node {1} job(s)...\n"
           "11/27/26 0{0}:00:01 \tassigned HTCondor ID ({2}.0.0)\n"
           "11/27/26 0{0}:00:02 Event: ULOG_EXECUTE for HTCondor Node {1} ({2}.0.0) {{11/27/26 0{0}:00:02}}\n")
    out.write_text(banner.format(1, 7) + run.format(1, "A", 8))
    second = DagWatcher(str(tmp_path / "x.dag"), dagman_id=9)
    first = DagWatcher(str(tmp_path / "x.dag"), dagman_id=7)
    assert [n.running for n in first.read().nodes] == [True, False]
    with out.open("a") as f:
        f.write(banner.format(2, 9) + run.format(2, "B", 10))
    assert [(n.running, n.job) for n in first.read().nodes] == [(True, "8.0"), (False, None)], "run 7's, as it was"
    assert first.read().last_line_at == time.mktime(time.strptime("11/27/26 01:00:02", "%m/%d/%y %H:%M:%S"))
    assert [(n.running, n.job) for n in second.read().nodes] == [(False, None), (True, "10.0")], "run 9's only"


def test_a_restart_in_recovery_mode_keeps_when_each_node_last_changed(tmp_path):
    """A released DAGMan re-logs every event of its nodes log at the restart, each with its own
    time in braces: a node done half an hour ago stays done since then, not since the restart."""
    (tmp_path / "x.dag").write_text("JOB A a.sub\nJOB B b.sub\nPARENT A CHILD B\n")
    at = "11/27/26 01:{} Event: ULOG_{} for HTCondor Node {} ({}.0.0) {{11/27/26 01:{}}}{}\n"
    banner = "11/27/26 01:{} ** condor_scheduniv_exec.7.0 (CONDOR_DAGMAN) STARTING UP\n"
    (tmp_path / "x.dag.dagman.out").write_text(
        banner.format("00:00")
        + "11/27/26 01:00:01 Submitting HTCondor Node A job(s)...\n11/27/26 01:00:01 \tassigned HTCondor ID (8.0.0)\n"
        + at.format("00:01", "SUBMIT", "A", 8, "00:01", "") + at.format("00:03", "JOB_TERMINATED", "A", 8, "00:03", "")
        + "11/27/26 01:00:03 Node A job proc (8.0.0) completed successfully.\n11/27/26 01:00:03 Node A job completed\n"
        + "11/27/26 01:00:04 Submitting HTCondor Node B job(s)...\n11/27/26 01:00:04 \tassigned HTCondor ID (9.0.0)\n"
        + at.format("00:04", "SUBMIT", "B", 9, "00:04", "")
        + banner.format("30:00") + "11/27/26 01:30:00 Running in RECOVERY mode... >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>\n"
        + at.format("30:00", "SUBMIT", "A", 8, "00:01", " [recovery mode]")
        + at.format("30:00", "JOB_TERMINATED", "A", 8, "00:03", " [recovery mode]")
        + "11/27/26 01:30:00 Node A job proc (8.0.0) completed successfully.\n11/27/26 01:30:00 Node A job completed\n"
        + at.format("30:00", "SUBMIT", "B", 9, "00:04", " [recovery mode]")
        + "11/27/26 01:30:00 ...done with RECOVERY mode <<<<<<<<<<<<<<<<<<<<<<<<<<<<<<\n"
        + at.format("30:05", "EXECUTE", "B", 9, "30:05", ""))
    nodes = {n.name: n for n in DagWatcher(str(tmp_path / "x.dag"), dagman_id=7).read().nodes}

    def clock(hms: str) -> float:
        return time.mktime(time.strptime(f"11/27/26 01:{hms}", "%m/%d/%y %H:%M:%S"))

    assert (nodes["A"].word, nodes["A"].since) == ("done", clock("00:03"))
    assert (nodes["B"].running, nodes["B"].since) == (True, clock("30:05")), "after the recovery: as it happens"
