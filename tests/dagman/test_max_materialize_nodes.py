"""A DAG node whose submit file materializes its jobs late (max_materialize): DAGMan follows the
factory's events in the nodes log (CLUSTER_SUBMIT, then each job's SUBMIT as it is made) and
counts the node done when all of its jobs are, as on the 23.9.6 pool."""

from __future__ import annotations

import subprocess

import htcondor2
from htcondor2 import JobEventType as ET

from installed import CRABTUI
from test_runner import run, runs


def test_a_node_with_max_materialize_is_done_when_all_its_jobs_are(dag_dir, schedd):
    (dag_dir / "three.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) $(Process) >> runs.txt'\"\n"
        "max_materialize = 1\n"
        "queue 3\n")
    (dag_dir / "two.dag").write_text("JOB A three.sub\nJOB B three.sub\nPARENT A CHILD B\n")
    dagman = run(dag_dir / "two.dag", schedd)
    assert dagman.exit_code == 0
    assert runs(dag_dir) == ["A 0", "A 1", "A 2", "B 0", "B 1", "B 2"]
    events = list(htcondor2.JobEventLog(str(dag_dir / "two.dag.nodes.log")).events(stop_after=0))
    present = most = 0
    for event in events:
        present += {ET.SUBMIT: 1, ET.JOB_TERMINATED: -1}.get(event.type, 0)
        most = max(most, present)
    assert most == 1, "one job of a node in the queue at a time"
    assert [e.proc for e in events if e.type == ET.SUBMIT] == [0, 1, 2, 0, 1, 2]


def test_a_failed_job_ends_its_late_materializing_node_at_the_cluster_remove(dag_dir, schedd):
    """Proc 0 fails while the factory has jobs to make (proc 1 runs on): DAGMan removes the node's
    jobs (the factory too, ``Incomplete``), and the node fails at its CLUSTER_REMOVE, as DAGMan's
    ProcessClusterRemoveEvent decides; the jobs never made are not waited for."""
    (dag_dir / "fail.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) $(Process) >> runs.txt; [ $(Process) = 0 ] && exit 3; "
        "while [ ! -e never ]; do sleep 0.05; done'\"\n"
        "max_materialize = 1\n"
        "queue 3\n")
    (dag_dir / "fail.dag").write_text("JOB A fail.sub\nJOB B fail.sub\nPARENT A CHILD B\n")
    result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", "fail.dag"], cwd=dag_dir,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert runs(dag_dir)[0] == "A 0" and "A 2" not in runs(dag_dir) and "B 0" not in runs(dag_dir)
    text = (dag_dir / "fail.dag.nodes.log").read_text()
    assert "\tMaterialized 2 jobs from 0 items.\tIncomplete\n" in text
    assert "#   A,<ENDLIST>" in (dag_dir / "fail.dag.rescue001").read_text()
