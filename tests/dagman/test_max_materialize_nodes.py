"""A DAG node whose submit file asks for late materialization (max_materialize): 23.9.6's DAGMan
submits a node's jobs directly, which ignores it: dagman.out warns of the line as unused, all the
procs are queued at once and the nodes log has no CLUSTER_SUBMIT or CLUSTER_REMOVE."""

from __future__ import annotations

import htcondor2
from htcondor2 import JobEventType as ET

from test_runner import run, runs


def test_a_node_with_max_materialize_queues_all_its_jobs_at_once(dag_dir, schedd):
    (dag_dir / "three.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) $(Process) >> runs.txt'\"\n"
        "max_materialize = 1\n"
        "queue 3\n")
    (dag_dir / "two.dag").write_text("JOB A three.sub\nJOB B three.sub\nPARENT A CHILD B\n")
    dagman = run(dag_dir / "two.dag", schedd)
    assert dagman.exit_code == 0
    assert sorted(runs(dag_dir)) == ["A 0", "A 1", "A 2", "B 0", "B 1", "B 2"]
    out = (dag_dir / "two.dag.dagman.out").read_text().splitlines()
    at = next(i for i, line in enumerate(out) if line.endswith("Submitting node A from file three.sub using "
                                                                "direct job submission"))
    assert out[at + 1].endswith(" Submit warning: Submit:0:the line 'max_materialize = 1' was unused by DAGMAN. "
                                "Is it a typo?")
    assert "assigned HTCondor ID (1.0.0)" in out[at + 2]
    events = list(htcondor2.JobEventLog(str(dag_dir / "two.dag.nodes.log")).events(stop_after=0))
    assert [(e.type, e.proc) for e in events[:3]] == [(ET.SUBMIT, 0), (ET.SUBMIT, 1), (ET.SUBMIT, 2)]
    assert not [e for e in events if e.type in (ET.CLUSTER_SUBMIT, ET.CLUSTER_REMOVE)]


def test_a_node_with_max_idle_queues_all_its_jobs_at_once_without_a_warning(dag_dir, schedd):
    """The pool's DAGMan (cluster 560): no warning for ``max_idle``, both procs queued at once."""
    (dag_dir / "idle.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) $(Process) >> runs.txt'\"\n"
        "max_idle = 1\n"
        "queue 2\n")
    (dag_dir / "one.dag").write_text("JOB A idle.sub\n")
    dagman = run(dag_dir / "one.dag", schedd)
    assert dagman.exit_code == 0
    assert sorted(runs(dag_dir)) == ["A 0", "A 1"]
    assert "was unused by DAGMAN" not in (dag_dir / "one.dag.dagman.out").read_text()
    events = list(htcondor2.JobEventLog(str(dag_dir / "one.dag.nodes.log")).events(stop_after=0))
    assert [(e.type, e.proc) for e in events[:2]] == [(ET.SUBMIT, 0), (ET.SUBMIT, 1)]
