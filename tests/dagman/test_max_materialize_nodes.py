"""A DAG node whose submit file materializes its jobs late (max_materialize): DAGMan follows the
factory's events in the nodes log (CLUSTER_SUBMIT, then each job's SUBMIT as it is made) and
counts the node done when all of its jobs are, as on the 23.9.6 pool."""

from __future__ import annotations

import htcondor2
from htcondor2 import JobEventType as ET

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
