"""Behaviours of real DAGMan 23.9.6 that the embedded one copies, each seen on the test pool by
running the same DAG on both (scripts/htcondor-testpool) and comparing the files they leave."""

from __future__ import annotations

from pathlib import Path

from engine.dag import build_graph, parse_file
from engine.dagman.jobstate_log import read_jobstate_log
from engine.dagman.metrics import read_metrics
from engine.dagman.node_status import read_node_status
from engine.dagman.progress import DagWatcher
from engine.dagman.runner import DagMan, Options

FILES = "JOBSTATE_LOG js.log\nNODE_STATUS_FILE ns.txt\n"


def run(dag_dir: Path, schedd, text: str, **options) -> int:
    (dag_dir / "x.dag").write_text(text + FILES)
    (dag_dir / "sleep.sub").write_text("executable = /bin/sleep\narguments = 60\nqueue\n")
    (dag_dir / "echo.sh").write_text('echo "$@" >> scripts.txt\n')
    graph = build_graph(parse_file(str(dag_dir / "x.dag")))
    # DAGMan ends a submit cycle that has outlasted the scan interval: at 0.05 s, one submit slowed
    # to a second by a loaded machine would leave a node the DAG expects queued unsubmitted
    options.setdefault("aggressive_submit", True)
    return DagMan(graph, schedd, Options(scan_interval=0.05, **options)).run()


def scripts(dag_dir: Path) -> list[str]:
    path = dag_dir / "scripts.txt"
    return sorted(path.read_text().splitlines()) if path.exists() else []


def node_ads(dag_dir: Path) -> dict[str, dict]:
    ads = read_node_status(str(dag_dir / "ns.txt"))
    return {str(ad.get("Node", ad["Type"])): {k: ad[k] for k in ad.keys()} for ad in ads}


def events(dag_dir: Path, node: str) -> list[str]:
    return [line.event for line in read_jobstate_log(dag_dir / "js.log") if line.node == node]


def rescue_header(dag_dir: Path) -> list[str]:
    return [line for line in (dag_dir / "x.dag.rescue001").read_text().splitlines()
            if line.startswith(("#   ", "DONE")) and not line.startswith("#   the ")]


def test_pre_scripts_start_as_their_nodes_become_ready_whatever_the_job_throttles(dag_dir, schedd):
    """A node's PRE script starts when the node is ready (DAGMan's StartNode), before the jobs of
    nodes made ready with it are submitted; CATEGORY/MAXJOBS and -maxjobs hold back jobs only."""
    code = run(dag_dir, schedd, 'JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nJOB D job.sub\nVARS ALL_NODES code="0"\n'
               "CATEGORY B cat\nCATEGORY C cat\nCATEGORY D cat\nMAXJOBS cat 1\nPARENT A CHILD B C D\n"
               "SCRIPT PRE C /bin/sh echo.sh C $QUEUED_COUNT $DONE_COUNT\n"
               "SCRIPT PRE D /bin/sh echo.sh D $QUEUED_COUNT $DONE_COUNT\n")
    assert code == 0
    assert scripts(dag_dir) == ["C 0 1", "D 0 1"], "both PRE scripts ran before B's job was queued"


def test_jobstate_sequence_numbers_follow_submission_order(dag_dir, schedd):
    """An attempt is numbered when DAGMan submits it, not when its SUBMIT event is read: here the
    join node (a NOOP, logged at once) comes after Z, submitted just before it."""
    code = run(dag_dir, schedd, 'JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nJOB D job.sub\nJOB Z job.sub\n'
               'VARS ALL_NODES code="0"\nPRIORITY A 10\nPRIORITY B 1\nPARENT A B CHILD C D\nPRIORITY D 3\n'
               "CATEGORY ALL_NODES cat\nMAXJOBS cat 1\n")
    assert code == 0
    seq = {line.node: line.seq for line in read_jobstate_log(dag_dir / "js.log") if line.node != "INTERNAL"}
    assert seq == {"A": 1, "B": 2, "Z": 3, "_condor_join_node1": 4, "D": 5, "C": 6}


def test_abort_without_final_exits_at_once_leaving_queued_nodes_unfinished(dag_dir, schedd):
    """DAGMan exits as soon as it has removed its jobs: the running node is reported "Was
    STATUS_SUBMITTED", is neither done nor failed in the rescue DAG and the metrics, and its
    removal is never read."""
    code = run(dag_dir, schedd, 'JOB A job.sub\nJOB B job.sub\nJOB C sleep.sub\n'
               'VARS ALL_NODES code="0"\nVARS B code="2"\n'
               "ABORT-DAG-ON B 2\nRETRY B 3\nPARENT A CHILD B C\n")
    assert code == 2, "without RETURN DAGMan exits with the node's value"
    ads = node_ads(dag_dir)
    assert ads["C"]["NodeStatus"] == 6 and ads["C"]["StatusDetails"] == "Was STATUS_SUBMITTED"
    assert ads["B"]["StatusDetails"].endswith("failed with status 2 (after 0 node retries)"), \
        "ABORT-DAG-ON ends the retries, and the note says so"
    assert ads["DagStatus"]["NodesFailed"] == 2
    assert rescue_header(dag_dir) == ["#   B,<ENDLIST>", "DONE A"]
    metrics = read_metrics(str(dag_dir / "x.dag.metrics"))
    assert (metrics["jobs_succeeded"], metrics["jobs_failed"], metrics["DagStatus"]) == (1, 1, 3)
    assert "JOB_ABORTED" not in events(dag_dir, "C")


def test_abort_with_final_starts_final_before_reading_the_removals(dag_dir, schedd):
    """FINAL starts the moment the DAG aborts: its $FAILED_COUNT and $DONE_COUNT leave out C,
    whose job was just removed; C's removal is read later and its POST script still runs."""
    code = run(dag_dir, schedd, 'JOB A job.sub\nJOB B job.sub\nJOB C sleep.sub\n'
               'VARS ALL_NODES code="0"\nVARS B code="2"\n'
               "ABORT-DAG-ON B 2 RETURN 1\nPARENT A CHILD B C\nSCRIPT POST C /bin/sh echo.sh postC $RETURN\n"
               "FINAL F job.sub\nVARS F code=\"0\"\n"
               "SCRIPT PRE F /bin/sh echo.sh final $DAG_STATUS $FAILED_COUNT $DONE_COUNT\n")
    assert code == 0, "FINAL succeeded"
    assert scripts(dag_dir) == ["final 3 1 1", "postC -1002"]
    ads = node_ads(dag_dir)
    assert ads["C"]["NodeStatus"] == 5, "its POST script succeeded"
    assert ads["DagStatus"]["DagStatus"] == 5
    assert read_metrics(str(dag_dir / "x.dag.metrics"))["DagStatus"] == 3


def test_removed_job_is_reported_as_dagman_reports_an_abort_event(dag_dir, schedd):
    run(dag_dir, schedd, 'JOB A job.sub\nJOB B sleep.sub\nVARS ALL_NODES code="0"\nVARS A code="2"\n'
        "ABORT-DAG-ON A 2 RETURN 1\nFINAL F job.sub\nVARS F code=\"1\"\n")
    details = node_ads(dag_dir)["B"]["StatusDetails"]
    assert details.startswith("HTCondor reported ULOG_JOB_ABORTED event for job proc (") and details.endswith(".0.0)")


def test_unless_exit_ends_the_retries_without_the_retries_note(dag_dir, schedd):
    assert run(dag_dir, schedd, 'JOB A job.sub\nJOB B job.sub\nVARS A code="42"\nVARS B code="0"\n'
               "RETRY A 3 UNLESS-EXIT 42\nPARENT A CHILD B\n") == 1
    ads = node_ads(dag_dir)
    assert ads["A"]["StatusDetails"].endswith("failed with status 42")
    assert ads["B"]["NodeStatus"] == 0, "UNLESS-EXIT leaves the children unready, not futile"


def test_submit_failure_is_tried_again_then_fails_the_node_with_its_retries_used_up(dag_dir, schedd):
    code = run(dag_dir, schedd, "JOB A missing.sub\nRETRY A 1\nSCRIPT POST A /bin/sh echo.sh post $RETURN $JOBID\n"
               'JOB B missing.sub\nJOB C job.sub\nVARS C code="0"\nPARENT A CHILD C\n', max_submit_attempts=2)
    assert code == 1
    assert scripts(dag_dir) == ["post -1001 -1.-1"], "the POST script runs once, seeing no job id"
    assert events(dag_dir, "A") == ["SUBMIT_FAILURE", "SUBMIT_FAILURE", "POST_SCRIPT_STARTED",
                                    "POST_SCRIPT_TERMINATED", "POST_SCRIPT_SUCCESS"]
    post_terminated = [line for line in read_jobstate_log(dag_dir / "js.log") if line.event == "POST_SCRIPT_TERMINATED"]
    assert post_terminated[0].condor_id == "-"
    assert events(dag_dir, "B") == ["SUBMIT_FAILURE", "SUBMIT_FAILURE"]
    ads = node_ads(dag_dir)
    assert (ads["A"]["NodeStatus"], ads["A"]["RetryCount"]) == (5, 1), "RETRY is used up, not tried"
    assert (ads["B"]["StatusDetails"], ads["C"]["NodeStatus"]) == ("Job submit failed", 5)


def test_post_script_of_a_node_whose_pre_failed_sees_no_job_id(dag_dir, schedd):
    (dag_dir / "exit3.sh").write_text("exit 3\n")
    assert run(dag_dir, schedd, "JOB A job.sub\nSCRIPT PRE A /bin/sh exit3.sh\n"
               "SCRIPT POST A /bin/sh echo.sh $RETURN $PRE_SCRIPT_RETURN $JOBID\n", always_run_post=True) == 0
    assert scripts(dag_dir) == ["-1004 3 -1.-1"]
    assert [line.condor_id for line in read_jobstate_log(dag_dir / "js.log")
            if line.event == "POST_SCRIPT_TERMINATED"] == ["-"]


def test_unknown_dollar_tokens_are_fatal_and_the_last_status_dump_stands(dag_dir, schedd):
    """23.9.6 knows no $EXIT_CODE_LIST, and any token starting with $ that is no macro ($0, a lone
    $) is a fatal strict warning: rescue DAG, exit 1; the node status file is not rewritten as a
    closing dump (it keeps showing the DAG running)."""
    for argument in ("$EXIT_CODE_LIST", "$0", "$"):
        for name in ("scripts.txt", "ns.txt", "x.dag.rescue001"):
            (dag_dir / name).unlink(missing_ok=True)
        code = run(dag_dir, schedd, f'JOB A job.sub\nVARS A code="0"\nSCRIPT POST A /bin/sh echo.sh {argument}\n')
        assert code == 1, argument
        assert scripts(dag_dir) == [], argument
        assert (dag_dir / "x.dag.rescue001").exists()
        assert node_ads(dag_dir)["DagStatus"]["DagStatus"] == 3, argument
        metrics = read_metrics(str(dag_dir / "x.dag.metrics"))
        assert (metrics["DagStatus"], metrics["jobs_failed"]) == (1, 0)


def test_metrics_count_nodes_marked_done_in_the_dag_file_as_succeeded(dag_dir, schedd):
    assert run(dag_dir, schedd, 'JOB A job.sub DONE\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\n'
               "PARENT B CHILD C\n") == 0
    metrics = read_metrics(str(dag_dir / "x.dag.metrics"))
    assert (metrics["jobs_succeeded"], metrics["total_jobs_run"]) == (3, 3)


def test_a_failure_no_event_reports_leaves_the_last_status_dump_standing(dag_dir, schedd):
    """DAGMan rewrites the node status file only after reading an event: a PRE script's failure
    is not one, so the file still shows the node running its PRE script when DAGMan exits."""
    (dag_dir / "exit8.sh").write_text("exit 8\n")
    assert run(dag_dir, schedd, 'NODE_STATUS_FILE ns.txt 0\nJOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\n'
               "SCRIPT PRE B /bin/sh exit8.sh\nPARENT A CHILD B\n") == 1
    ads = node_ads(dag_dir)
    assert (ads["DagStatus"]["DagStatus"], ads["A"]["NodeStatus"], ads["B"]["NodeStatus"]) == (3, 5, 2)
    assert rescue_header(dag_dir) == ["#   B,<ENDLIST>", "DONE A"]


def test_abort_dag_on_says_what_gave_the_abort_value_as_the_dag_screen_reads_it(dag_dir, schedd):
    """23.9.6 (seen on the pool) writes "Aborting DAG because we got the ABORT exit value from a
    POST script", then "Aborting DAG...", and no rescue DAG for RETURN 0; the DAG screen's
    reader takes what aborted it from that line, and which node's from the line before."""
    (dag_dir / "three.sh").write_text("exit 3\n")
    code = run(dag_dir, schedd, "# ABORT-DAG-ON as the manual writes it\n"
               'JOB A job.sub\nVARS A code="0"\nSCRIPT POST A /bin/sh three.sh\n'
               "ABORT-DAG-ON A 3 RETURN 0\nJOB B job.sub\nPARENT A CHILD B\n")
    assert code == 0
    said = [line[18:] for line in (dag_dir / "x.dag.dagman.out").read_text().splitlines()]
    first = said.index("Aborting DAG because we got the ABORT exit value from a POST script")
    assert said[first + 1:first + 4] == ["Aborting DAG...", "Removing submitted jobs...",
                                         "Removing any/all submitted HTCondor jobs..."]
    assert not (dag_dir / "x.dag.rescue001").exists()
    assert DagWatcher(str(dag_dir / "x.dag")).read().aborting == "node A's POST script exited 3"


def test_abort_dag_on_a_successful_value_leaves_the_children_ready_and_the_dag_aborted(dag_dir, schedd):
    """ABORT-DAG-ON A 0 without RETURN: A's success makes B ready, then aborts the DAG, which
    exits 0 with no rescue DAG; its node status file says aborted (seen on the pool)."""
    code = run(dag_dir, schedd, 'JOB A job.sub\nVARS A code="0"\nABORT-DAG-ON A 0\nJOB B job.sub\nPARENT A CHILD B\n')
    assert code == 0
    ads = node_ads(dag_dir)
    assert ads["DagStatus"]["DagStatus"] == 6 and ads["B"]["NodeStatus"] == 1
    assert not (dag_dir / "x.dag.rescue001").exists()


def test_unless_exit_says_it_aborts_the_retries_in_dagman_out(dag_dir, schedd):
    """As 23.9.6 logs it (seen on the pool): "Aborting further retries of node A (last attempt returned 42)"."""
    assert run(dag_dir, schedd, 'JOB A job.sub\nVARS A code="42"\nRETRY A 3 UNLESS-EXIT 42\n') == 1
    said = [line[18:] for line in (dag_dir / "x.dag.dagman.out").read_text().splitlines()]
    assert said.count("Aborting further retries of node A (last attempt returned 42)") == 1
