"""Where a DAG's counts come from (:mod:`crabtui.dag_view`): dagman.out of the current run, split by
the queue; else DAGMan's ad, saying how old it is and why dagman.out was not used."""

from __future__ import annotations

from engine.dagman.node_status import NodeState
from engine.dagman.progress import DagProgress, NodeProgress

from crabtui.dag_view import FROM_AD, FROM_DAGMAN_OUT, dagman_out_of, queue_rows, summarize

AD = {"ClusterId": 12, "ProcId": 0, "JobStatus": 2, "Owner": "alice", "Iwd": "/home/alice/run",
      "Arguments": "-p 0 -f -l . -Lockfile d.dag.lock -Dag d.dag", "QDate": 1000, "DAG_Status": 0,
      "DAG_NodesTotal": 4, "DAG_NodesDone": 0, "DAG_NodesQueued": 0, "DAG_NodesPrerun": 1, "DAG_NodesUnready": 3,
      "DAG_AdUpdateTime": 1001}
QUEUED = {"B": [{"JobStatus": 5, "DAGNodeName": "B"}], "C": [{"JobStatus": 2, "DAGNodeName": "C"}]}


def progress(**kw) -> DagProgress:
    nodes = (NodeProgress("A", NodeState.DONE), NodeProgress("B", NodeState.SUBMITTED),
             NodeProgress("C", NodeState.SUBMITTED), NodeProgress("D", NodeState.SUBMITTED))
    return DagProgress("/home/alice/run/d.dag", "/home/alice/run/d.dag.dagman.out", nodes=nodes,
                       last_line_at=1290.0, started_at=1001.0, **kw)


def test_counts_come_from_dagman_out_split_by_what_the_queue_says_now():
    dag = summarize(AD, True, progress(), QUEUED)
    assert (dag.source, dag.as_of, dag.total) == (FROM_DAGMAN_OUT, 1290.0, 4)
    assert dag.nodes == {"done": 1, "held": 1, "running": 1, "idle": 1}, "D's job is not in the queue yet: idle"
    assert dag.describe_source(1300) == "dagman.out 10s ago, queue now"
    assert dag.owner == "alice" and dag.dag_file == "/home/alice/run/d.dag"


def test_the_ad_is_used_only_when_dagman_out_cannot_be_read_and_says_how_old_it_is():
    dag = summarize(AD, True, progress(read_error="/home/alice/run/d.dag.dagman.out: No such file or directory"),
                    QUEUED)
    assert (dag.source, dag.as_of) == (FROM_AD, 1001.0)
    assert dag.nodes == {"pre": 1, "unready": 3}, "DAGMan's own (stale) counts, nothing queued in them"
    assert dag.describe_source(1301).startswith("DAGMan's job ad 5m ago (refreshed every 5 min: ")
    assert "cannot be read from this machine" in dag.unreadable


def test_a_dagman_out_of_an_earlier_run_is_not_this_dags():
    earlier = DagProgress("/home/alice/run/d.dag", "/home/alice/run/d.dag.dagman.out",
                          nodes=(NodeProgress("A", NodeState.DONE),), started_at=500.0)
    assert summarize(AD, True, earlier, {}).source == FROM_AD


def test_dagman_out_is_looked_for_where_dag_submit_outfile_dir_put_it():
    """``crabtui dag submit -outfile_dir logs d.dag``: the embedded DAGMan job gets -outfile_dir on its
    command line (the pool's gets _CONDOR_DAGMAN_LOG), and its dagman.out is in logs/, not beside the DAG."""
    embedded = {**AD, "Arguments": "-Lockfile d.dag.lock -AutoRescue 1 -MaxIdle 1000 -outfile_dir logs -Dag d.dag"}
    assert dagman_out_of(embedded, "/home/alice/run/d.dag") == "/home/alice/run/logs/d.dag.dagman.out"
    pool = {**AD, "Environment": "_CONDOR_DAGMAN_LOG=/tmp/logs/d.dag.dagman.out _CONDOR_MAX_DAGMAN_LOG=0"}
    assert dagman_out_of(pool, "/home/alice/run/d.dag") == "/tmp/logs/d.dag.dagman.out"
    assert dagman_out_of(AD, "/home/alice/run/d.dag") == "/home/alice/run/d.dag.dagman.out"


def test_the_queue_table_puts_each_job_under_its_dagman():
    queue = [{"ClusterId": 1, "ProcId": 0, "JobUniverse": 7, "JobBatchName": "RunJobs.dag+1"},
             {"ClusterId": 3, "ProcId": 0, "JobUniverse": 7, "DAGManJobId": 1, "DAGNodeName": "Job0SubJobs"},
             {"ClusterId": 2, "ProcId": 0, "JobUniverse": 5, "DAGManJobId": 1, "DAGNodeName": "Job1", "JobStatus": 5,
              "HoldReason": "via condor_hold"},
             {"ClusterId": 4, "ProcId": 0, "JobUniverse": 5, "DAGManJobId": 3, "DAGNodeName": "Job1-1"}]
    rows = queue_rows(queue)
    assert [(k, r.depth, r.name) for k, r in rows.items()] == [
        ("1.0", 0, "RunJobs.dag+1"), ("3.0", 1, "Job0SubJobs"), ("4.0", 2, "Job1-1"), ("2.0", 1, "Job1")]
    assert rows["2.0"].word == "held" and rows["2.0"].describe() == "via condor_hold"


# DAGMan job 269's ad in the 23.9.6 pool's history: ABORT-DAG-ON B 7 RETURN 1 fired while C's job
# was queued; DAGMan removed it and exited, its last update counting C as queued.
ABORTED = {"ClusterId": 269, "ProcId": 0, "JobStatus": 4, "ExitCode": 1, "Owner": "crab", "Iwd": "/home/crab/w-ui",
           "Arguments": "-p 0 -f -l . -Lockfile pool.dag.lock -Dag pool.dag -MaxIdle 1000 -AutoRescue 1 "
                        "-DoRescueFrom 0",
           "QDate": 1795858661, "CompletionDate": 1795858732, "DAG_AdUpdateTime": 1795858732, "DAG_Status": 3,
           "DAG_NodesTotal": 4, "DAG_NodesDone": 1, "DAG_NodesFailed": 1, "DAG_NodesFutile": 1,
           "DAG_NodesQueued": 1, "DAG_NodesPrerun": 0, "DAG_NodesPostrun": 0, "DAG_NodesReady": 0,
           "DAG_NodesUnready": 0}


def test_an_ended_dag_read_from_its_ad_has_nothing_idle_and_says_it_was_aborted():
    """A pool's DAG whose dagman.out this machine cannot read: once it has left the queue, the node
    its ad counted queued is not idle (its job was removed as DAGMan exited), and DAG_Status 3
    says why it ended."""
    unread = DagProgress("/home/crab/w-ui/pool.dag", "/home/crab/w-ui/pool.dag.dagman.out",
                         read_error="/home/crab/w-ui/pool.dag.dagman.out: No such file or directory")
    dag = summarize(ABORTED, False, unread, {})
    assert dag.source == FROM_AD and dag.state == "failed"
    assert dag.nodes == {"done": 1, "failed": 2, "futile": 1}
    assert dag.describe_nodes() == "1/4 done, 2 failed, 1 futile"
    assert dag.end_why == "aborted by ABORT-DAG-ON"
