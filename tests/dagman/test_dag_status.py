"""``crabtui dag status``'s text, from a DAGMan job's ad."""

from __future__ import annotations

import classad2

from crabtui.dag_status import duration, format_dag_status


def dagman_ad(**attrs) -> classad2.ClassAd:
    base = {"ClusterId": 1024, "JobStatus": 2, "JobStartDate": 1000, "EnteredCurrentStatus": 1000,
            "JobBatchName": "diamond.dag+1024", "DAG_Status": 0, "DAG_InRecovery": 0,
            "DAG_NodesTotal": 4, "DAG_NodesDone": 1, "DAG_NodesQueued": 2, "DAG_NodesUnready": 1,
            "DAG_JobsSubmitted": 3, "DAG_JobsIdle": 1, "DAG_JobsRunning": 1, "DAG_JobsCompleted": 1}
    base.update(attrs)
    return classad2.ClassAd(base)


def test_running_dag_reads_like_htcondor_dag_status():
    *lines, bar = format_dag_status(dagman_ad(), now=1049, width=42).splitlines()
    assert lines == [
        "DAG 1024 [diamond.dag] has been running for 00:00:49",
        "DAG has submitted 3 job(s), of which:",
        "\t      1 is submitted and waiting for resources.",
        "\t      1 is running.",
        "\t      1 has completed.",
        "DAG contains 4 node(s) total, of which:",
        "\t[#]   1 has completed.",
        "\t[=]   2 are running: 2 jobs.",
        "\t[-]   1 is waiting on other nodes to finish.",
        "DAG is running normally.",
    ]
    assert bar.endswith("] DAG is 25.00% complete.")
    assert bar.count("#") == 10 and bar.count("=") == 20 and bar.count("-") == 10, "proportional, width - 2"


def test_failed_and_futile_nodes_say_how_much_can_still_complete():
    text = format_dag_status(dagman_ad(DAG_Status=2, DAG_NodesQueued=0, DAG_NodesUnready=0, DAG_NodesFailed=1,
                                       DAG_NodesFutile=2), now=1049)
    assert "\t[!]   2 will never run." in text and "\t[!]   1 has failed." in text
    assert "DAG had at least one node fail. Only 25.00% of the DAG can complete." in text


def test_held_dagman_shows_its_hold_reason_and_halt_is_named():
    held = format_dag_status(dagman_ad(JobStatus=5, EnteredCurrentStatus=1000, HoldReason="via crabtui hold"),
                             now=1000 + 86400 + 3661)
    assert held.splitlines()[:2] == ["DAG 1024 [diamond.dag] has been held for 1 day and 01:01:01",
                                     "Hold Reason: via crabtui hold"]
    halted = format_dag_status(dagman_ad(DAG_Status=6), now=1010)
    assert halted.startswith("DAG 1024 [diamond.dag] has been halted for 00:00:10")
    assert "DAG has been halted." in halted


def test_a_dagman_job_removed_while_held_reads_removed_not_successful():
    """A held DAGMan stops with DAG status 0 and writes nothing more when its job is removed
    (seen on the test pool): the DAG did not complete."""
    text = format_dag_status(dagman_ad(JobStatus=3, EnteredCurrentStatus=1000), now=1004)
    assert text.splitlines()[0] == "DAG 1024 [diamond.dag] has been removed from the queue for 00:00:04"
    assert "DAG was removed." in text and "successfully" not in text
    assert "DAG completed successfully." in format_dag_status(dagman_ad(JobStatus=4, DAG_NodesDone=4, DAG_NodesQueued=0,
                                                                        DAG_NodesUnready=0), now=1004)


def test_durations():
    assert (duration(49), duration(86400 * 2 + 5)) == ("00:00:49", "2 days and 00:00:05")


def test_a_dag_that_left_the_queue_has_no_job_running_whatever_its_ad_said_last():
    """DAGMan's ad is last updated before it removes its jobs and exits: `crabtui dag status`
    of a removed DAG said "1 is running" under "has been removed from the queue"."""
    text = format_dag_status(dagman_ad(JobStatus=3, DAG_Status=4, EnteredCurrentStatus=1040), now=1049)
    assert text.splitlines()[:4] == [
        "DAG 1024 [diamond.dag] has been removed from the queue for 00:00:09",
        "DAG has submitted 3 job(s), of which:",
        "\t      1 has completed.",
        "\t      2 have been removed.",
    ]
    assert "DAG was removed." in text


def test_job_counts_come_from_dagman_out_like_the_node_counts(tmp_path):
    """The pool's DAGMan writes its ad's DAG_Jobs* counts at its start and then every 300 s:
    `crabtui --backend htcondor dag status` said "submitted 0 job(s)" over "1 is running: 1 job".
    The dagman.out is the test pool's 23.9.6 DAGMan's, node A's job running."""
    from pathlib import Path

    from crabtui.dag_status import fresh_ad

    dag = tmp_path / "diamond.dag"
    dag.write_text("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub\nPARENT A CHILD B C\nPARENT B C CHILD D\n")
    out = Path(__file__).parent / "data" / "pool_diamond_a_running.dagman.out"
    (tmp_path / "diamond.dag.dagman.out").write_text(out.read_text())
    stale = dagman_ad(ClusterId=104, JobBatchName="diamond.dag+104", Iwd=str(tmp_path), QDate=0,
                      Arguments="-p 0 -f -l . -Lockfile diamond.dag.lock -AutoRescue 1 -DoRescueFrom 0 -Dag diamond.dag",
                      DAG_NodesDone=0, DAG_NodesQueued=0, DAG_NodesReady=1, DAG_NodesUnready=3, DAG_JobsSubmitted=0,
                      DAG_JobsIdle=0, DAG_JobsRunning=0, DAG_JobsCompleted=0)
    ad, _ = fresh_ad(stale)
    assert format_dag_status(ad, now=1005).splitlines()[1:6] == [
        "DAG has submitted 1 job(s), of which:",
        "\t      1 is running.",
        "DAG contains 4 node(s) total, of which:",
        "\t[=]   1 is running: 1 job.",
        "\t[-]   3 are waiting on other nodes to finish.",
    ]
