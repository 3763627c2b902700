"""DAGMan's output files, byte for byte as DAGMan 23.9.6 writes them.

The expected texts are derived by hand from the C++ at tag v23.9.6 of htcondor/htcondor; each
test names the file and function it follows.  Local time is pinned to a fixed zone two hours
east of UTC (a POSIX TZ string, so no tz database is needed), which also shows that the
files use local time, as DAGMan's ctime() and dprintf do.
"""

from __future__ import annotations

import json
import os
import re
import time

import classad2
import pytest

from engine.dagman.dagman_out import DagmanOut, Deferrals, NodeDump
from engine.dagman.jobstate_log import JobstateLine, JobstateLog, job_tag, parse_line, read_jobstate_log
from engine.dagman.metrics import DagMetrics, GraphMetrics, format_metrics, read_metrics, write_metrics
from engine.dagman.node_status import (
    DAG_ERROR_JOB_SKIPPED,
    DagOutcome,
    NodeInfo,
    NodeState,
    after_retries_text,
    format_node_status,
    job_event_failed_text,
    job_proc_failed_text,
    post_script_failed_text,
    pre_script_failed_text,
    read_node_status,
    write_node_status,
)

T0 = 1700000000  # Tue Nov 14 22:13:20 2023 UTC, Wed Nov 15 00:13:20 2023 in the zone below


@pytest.fixture(autouse=True)
def local_time(time_zone):
    time_zone("XYZ-2")


# -- metrics: src/condor_dagman/dagman_metrics.cpp, DagmanMetrics::WriteMetricsFile ------------

FAILED_RUN = DagMetrics(
    start_time=T0 + 0.25, end_time=T0 + 42.0, exitcode=1, dag_status=2, dagman_id=42,
    jobs=4, jobs_failed=1, jobs_succeeded=2, dag_jobs=1, dag_jobs_succeeded=1,
)


def test_metrics_bytes():
    assert format_metrics(FAILED_RUN) == (
        "{\n"
        '    "client":"condor_dagman",\n'
        '    "version":"23.9.6",\n'
        '    "type":"metrics",\n'
        '    "start_time":1700000000.250,\n'
        '    "end_time":1700000042.000,\n'
        '    "duration":41.750,\n'
        '    "exitcode":1,\n'
        '    "dagman_id":"42",\n'
        '    "parent_dagman_id":"",\n'
        '    "rescue_dag_number":0,\n'
        '    "jobs":4,\n'
        '    "jobs_failed":1,\n'
        '    "jobs_succeeded":2,\n'
        '    "dag_jobs":1,\n'
        '    "dag_jobs_failed":0,\n'
        '    "dag_jobs_succeeded":1,\n'
        '    "total_jobs":5,\n'
        '    "total_jobs_run":4,\n'
        '    "DagStatus":2\n'
        "}\n"
    )


def test_metrics_graph_keys_come_last_but_one_and_sub_dag_has_parent():
    m = DagMetrics(start_time=T0, end_time=T0 + 1.0625, exitcode=0, dag_status=0, dagman_id=43,
                   parent_dagman_id=42, rescue_dag_number=2, jobs=3, jobs_succeeded=3,
                   graph=GraphMetrics(height=3, width=1, num_edges=2, num_vertices=3))
    text = format_metrics(m)
    # %.3f of an exact tie rounds to even, in C as in Python
    assert '    "end_time":1700000001.062,\n    "duration":1.062,\n' in text
    assert '    "parent_dagman_id":"42",\n    "rescue_dag_number":2,\n' in text
    assert text.endswith(
        '    "total_jobs_run":3,\n'
        '    "graph_height":3,\n'
        '    "graph_width":1,\n'
        '    "graph_num_edges":2,\n'
        '    "graph_num_vertices":3,\n'
        '    "DagStatus":0\n'
        "}\n"
    )
    assert list(json.loads(text))[-5:] == [
        "graph_height", "graph_width", "graph_num_edges", "graph_num_vertices", "DagStatus"]


def test_metrics_write_read_and_atomic(tmp_path, monkeypatch):
    path = tmp_path / "x.dag.metrics"
    write_metrics(path, FAILED_RUN)
    data = read_metrics(path)
    assert list(data) == [
        "client", "version", "type", "start_time", "end_time", "duration", "exitcode",
        "dagman_id", "parent_dagman_id", "rescue_dag_number", "jobs", "jobs_failed",
        "jobs_succeeded", "dag_jobs", "dag_jobs_failed", "dag_jobs_succeeded", "total_jobs",
        "total_jobs_run", "DagStatus"]
    assert (data["dagman_id"], data["duration"], data["DagStatus"]) == ("42", 41.75, 2)

    def crash(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError):
        write_metrics(path, DagMetrics(start_time=T0, end_time=T0, exitcode=0, dag_status=0))
    assert read_metrics(path) == data  # the old file is untouched
    assert os.listdir(tmp_path) == ["x.dag.metrics"]  # and no temporary file is left


# -- node status file: src/condor_dagman/dag.cpp, Dag::DumpNodeStatus ---------------------------

RUNNING_DIAMOND = dict(
    dag_files=["diamond.dag"],
    nodes=[
        NodeInfo("A", NodeState.DONE),
        NodeInfo("B", NodeState.SUBMITTED, procs_queued=1, procs_idle=1, idle=True),
        NodeInfo("C", NodeState.POSTRUN, retry_count=1),
        NodeInfo("D", NodeState.NOT_READY),
    ],
    outcome=DagOutcome.RUNNING,
    timestamp=T0,
    end_time=T0 + 1,
    min_update_time=60,
)


def test_node_status_running_bytes():
    assert format_node_status(**RUNNING_DIAMOND) == (
        "[\n"
        '  Type = "DagStatus";\n'
        "  DagFiles = {\n"
        '    "diamond.dag"\n'
        "  };\n"
        '  Timestamp = 1700000000; /* "Wed Nov 15 00:13:20 2023" */\n'
        '  DagStatus = 3; /* "STATUS_SUBMITTED ()" */\n'
        "  NodesTotal = 4;\n"
        "  NodesDone = 1;\n"
        "  NodesPre = 0;\n"
        "  NodesQueued = 1;\n"
        "  NodesPost = 1;\n"
        "  NodesReady = 0;\n"
        "  NodesUnready = 1;\n"
        "  NodesFutile = 0;\n"
        "  NodesFailed = 0;\n"
        "  JobProcsHeld = 0;\n"
        "  JobProcsIdle = 1; /* includes held */\n"
        "]\n"
        "[\n"
        '  Type = "NodeStatus";\n'
        '  Node = "A";\n'
        '  NodeStatus = 5; /* "STATUS_DONE" */\n'
        '  StatusDetails = "";\n'
        "  RetryCount = 0;\n"
        "  JobProcsQueued = 0;\n"
        "  JobProcsHeld = 0;\n"
        "]\n"
        "[\n"
        '  Type = "NodeStatus";\n'
        '  Node = "B";\n'
        '  NodeStatus = 3; /* "STATUS_SUBMITTED" */\n'
        '  StatusDetails = "idle";\n'
        "  RetryCount = 0;\n"
        "  JobProcsQueued = 1;\n"
        "  JobProcsHeld = 0;\n"
        "]\n"
        "[\n"
        '  Type = "NodeStatus";\n'
        '  Node = "C";\n'
        '  NodeStatus = 4; /* "STATUS_POSTRUN" */\n'
        '  StatusDetails = "";\n'
        "  RetryCount = 1;\n"
        "  JobProcsQueued = 0;\n"
        "  JobProcsHeld = 0;\n"
        "]\n"
        "[\n"
        '  Type = "NodeStatus";\n'
        '  Node = "D";\n'
        '  NodeStatus = 0; /* "STATUS_NOT_READY" */\n'
        '  StatusDetails = "";\n'
        "  RetryCount = 0;\n"
        "  JobProcsQueued = 0;\n"
        "  JobProcsHeld = 0;\n"
        "]\n"
        "[\n"
        '  Type = "StatusEnd";\n'
        '  EndTime = 1700000001; /* "Wed Nov 15 00:13:21 2023" */\n'
        '  NextUpdate = 1700000061; /* "Wed Nov 15 00:14:21 2023" */\n'
        "]\n"
    )


def final_failed_nodes() -> list[NodeInfo]:
    return [
        NodeInfo("A", NodeState.DONE, pre_done=True),
        NodeInfo("B", NodeState.ERROR, retry_count=2,
                 error_text=after_retries_text(job_proc_failed_text(12, 0, status=1), 2)),
        NodeInfo("C", NodeState.SUBMITTED, procs_queued=2, procs_held=1, procs_idle=1, idle=True),
        NodeInfo("D", NodeState.PRERUN),
        NodeInfo("E", NodeState.POSTRUN, procs_queued=0),
        NodeInfo("F", NodeState.FUTILE),
        NodeInfo("G", NodeState.READY),
    ]


def test_node_status_closing_dump_marks_unfinished_nodes_failed():
    text = format_node_status(dag_files=["a.dag", "b.dag"], nodes=final_failed_nodes(),
                              outcome=DagOutcome.FAILED, timestamp=T0)
    assert text.startswith(
        "[\n"
        '  Type = "DagStatus";\n'
        "  DagFiles = {\n"
        '    "a.dag",\n'
        '    "b.dag"\n'
        "  };\n"
        '  Timestamp = 1700000000; /* "Wed Nov 15 00:13:20 2023" */\n'
        '  DagStatus = 6; /* "STATUS_ERROR (failed)" */\n'
        "  NodesTotal = 7;\n"
        "  NodesDone = 1;\n"
        "  NodesPre = 0;\n"
        "  NodesQueued = 0;\n"
        "  NodesPost = 0;\n"
        "  NodesReady = 1;\n"
        "  NodesUnready = 0;\n"
        "  NodesFutile = 1;\n"
        "  NodesFailed = 4;\n"
        "  JobProcsHeld = 0;\n"
        "  JobProcsIdle = 0; /* includes held */\n"
        "]\n"
    )
    assert text.endswith(
        "[\n"
        '  Type = "StatusEnd";\n'
        '  EndTime = 1700000000; /* "Wed Nov 15 00:13:20 2023" */\n'
        '  NextUpdate = 0; /* "none" */\n'
        "]\n"
    )
    ads = classad2.parseAds(text)
    dag, *nodes, end = ads
    assert dag["DagFiles"] == ["a.dag", "b.dag"]
    got = {ad["Node"]: (ad["NodeStatus"], ad["StatusDetails"], ad["JobProcsQueued"],
                        ad["JobProcsHeld"], ad["RetryCount"]) for ad in nodes}
    assert got == {
        "A": (5, "User defined as DONE", 0, 0, 0),
        "B": (6, "Job proc (12.0.0) failed with status 1 (after 2 node retries)", 0, 0, 2),
        "C": (6, "Was STATUS_SUBMITTED", 0, 0, 0),  # its proc counts are cleared
        "D": (6, "Was STATUS_PRERUN", 0, 0, 0),
        "E": (6, "Was STATUS_POSTRUN", 0, 0, 0),
        "F": (7, "Had an ancestor node fail", 0, 0, 0),
        "G": (1, "", 0, 0, 0),
    }
    assert (end["EndTime"], end["NextUpdate"]) == (T0, 0)


@pytest.mark.parametrize("outcome, status, comment, closing, next_update", [
    (DagOutcome.HELD, 3, "STATUS_SUBMITTED (held)", False, T0 + 30),
    (DagOutcome.REMOVED_FINAL_RUNNING, 3, "STATUS_SUBMITTED (removed)", False, 0),
    (DagOutcome.ABORTED_FINAL_RUNNING, 3, "STATUS_SUBMITTED (aborted)", False, T0 + 30),
    (DagOutcome.SUCCESS, 5, "STATUS_DONE (success)", True, 0),
    (DagOutcome.ABORTED, 6, "STATUS_ERROR (aborted)", True, 0),
    (DagOutcome.REMOVED, 6, "STATUS_ERROR (removed)", True, 0),
    (DagOutcome.CYCLE, 6, "STATUS_ERROR (cycle)", False, 0),
])
def test_node_status_outcomes(outcome, status, comment, closing, next_update):
    text = format_node_status(dag_files=["x.dag"], nodes=final_failed_nodes(), outcome=outcome,
                              timestamp=T0, min_update_time=30)
    assert f'  DagStatus = {status}; /* "{comment}" */\n' in text
    dag, *nodes, end = classad2.parseAds(text)
    assert end["NextUpdate"] == next_update
    c = next(ad for ad in nodes if ad["Node"] == "C")
    if closing:
        assert (dag["NodesFailed"], dag["NodesQueued"], dag["JobProcsHeld"]) == (4, 0, 0)
        assert (c["NodeStatus"], c["StatusDetails"]) == (6, "Was STATUS_SUBMITTED")
    else:
        counts = (dag["NodesFailed"], dag["NodesPre"], dag["NodesQueued"], dag["NodesPost"])
        assert counts == (1, 1, 1, 1)
        assert (dag["JobProcsHeld"], dag["JobProcsIdle"]) == (1, 1)
        assert (c["NodeStatus"], c["StatusDetails"], c["JobProcsQueued"], c["JobProcsHeld"]) == (
            3, "idle", 2, 1)


def test_node_status_strings_are_classad_escaped(tmp_path):
    odd = 'we"ird\\name\tx'
    text = format_node_status(dag_files=["dir/my dag.dag"], outcome=DagOutcome.RUNNING, timestamp=T0,
                              nodes=[NodeInfo(odd, NodeState.ERROR, error_text='say "hi"\n')])
    assert '  Node = "we\\"ird\\\\name\\tx";\n' in text
    assert '  StatusDetails = "say \\"hi\\"\\n";\n' in text
    _, node, _ = classad2.parseAds(text)
    assert (node["Node"], node["StatusDetails"]) == (odd, 'say "hi"\n')


def test_node_status_write_is_atomic_through_a_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "x.status"
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append((os.path.basename(src), os.path.basename(dst)))
        with open(src) as f:  # complete before it takes the real name
            assert f.read().endswith(
                '  NextUpdate = 1700000061; /* "Wed Nov 15 00:14:21 2023" */\n]\n')
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    write_node_status(path, **RUNNING_DIAMOND)
    ((temporary, final),) = renames
    assert re.fullmatch(r"\.x\.status\.[0-9a-f]{16}\.tmp", temporary) and final == "x.status", renames
    assert os.listdir(tmp_path) == ["x.status"]
    dag, a, b, c, d, end = read_node_status(path)
    assert (dag["Type"], dag["NodesTotal"], dag["NodesDone"]) == ("DagStatus", 4, 1)
    assert [ad["Node"] for ad in (a, b, c, d)] == ["A", "B", "C", "D"]
    assert (end["Type"], end["NextUpdate"]) == ("StatusEnd", T0 + 61)


def test_status_details_texts():
    # dag.cpp at v23.9.6: ProcessTerminatedEvent, ProcessAbortEvent, PreScriptReaper,
    # ProcessPostTermEvent; DaemonCore::GetExceptionString for the PRE signal.
    assert job_proc_failed_text(7, 1, signal_number=9) == "Job proc (7.1.0) failed with signal 9"
    assert job_event_failed_text("JOB_ABORTED", 7, 0) == (
        "HTCondor reported ULOG_JOB_ABORTED event for job proc (7.0.0)")
    assert pre_script_failed_text(status=3) == "PRE Script failed with status 3"
    assert pre_script_failed_text(signal_number=9) == "PRE Script died on signal 9 (Killed)"
    assert post_script_failed_text(1, status=2) == (
        "Job exited with status 1 and POST Script failed with status 2")
    assert post_script_failed_text(-9, signal_number=15) == (
        "Job died on signal 9 and POST Script died on signal 15")
    assert post_script_failed_text(0, status=2) == (
        "Job failed due to DAGMAN error 0 and POST Script failed with status 2")
    assert post_script_failed_text(DAG_ERROR_JOB_SKIPPED, status=1) == (
        "Job failed due to DAGMAN error -1004 and POST Script failed with status 1")


# -- jobstate log: src/condor_dagman/jobstate_log.cpp (JobstateLog), job.cpp ---------------------

def test_job_tag_from_submit_files():
    # job.cpp Job::GetJobstateJobTag with the submit files of src/condor_tests/job_dagman_jobstate_log
    assert job_tag('universe = local\n+pegasus_site = "local"\nqueue 2\n') == "local"
    assert job_tag('+job_tag_name = "+job_tag_value"\n+job_tag_value = "viz"\nqueue\n') == "viz"
    assert job_tag("executable = x\nqueue\n") == "-"
    assert job_tag('MY.pegasus_site = "local"\nqueue\n') == "-"  # only the literal +key counts
    assert job_tag('+PEGASUS_SITE = "a"\n+pegasus_site = "b"\n') == "b"  # case-blind, last wins
    assert job_tag('+pegasus_site = "$(site)"\n') == "-"  # macros are not expanded


def run_like_job_dagman_jobstate_log(log: JobstateLog) -> None:
    """Nodes A (two failed procs, POST rescues), B, and E (submit fails, POST rescues), as in
    src/condor_tests/job_dagman_jobstate_log.run; times are event times or "now"."""
    log.script_started("NodeA", "PRE", None)
    log.script_success_or_failure("NodeA", "PRE", 0, None)
    log.job_event("NodeA", "SUBMIT", 101, 0, T0 + 2)
    log.job_event("NodeA", "SUBMIT", 101, 1, T0 + 2)
    log.job_success_or_failure("NodeA", 2, T0 + 5)
    log.script_started("NodeA", "POST", T0 + 5, cluster=101)
    log.job_event("NodeA", "POST_SCRIPT_TERMINATED", 101, 0, T0 + 6)
    log.script_success_or_failure("NodeA", "POST", 0, T0 + 6, cluster=101)
    log.script_started("NodeA", "HOLD", T0 + 6)  # HOLD scripts are never logged
    log.job_event("NodeB", "SUBMIT", 102, 0, T0 + 7)
    log.job_event("NodeB", "JOB_TERMINATED", 102, 0, T0 + 8)
    log.job_success_or_failure("NodeB", 1, T0 + 8)
    log.restart_node("NodeB")  # RETRY: a new attempt, a new sequence number
    log.job_event("NodeB", "ULOG_SUBMIT", 103, 0, T0 + 9)
    log.submit_failure("NodeE", T0 + 9)
    log.script_started("NodeE", "POST", T0 + 9, cluster=None)


EXPECTED_RUN = (
    "1700000000 INTERNAL *** DAGMAN_STARTED 100.0 ***\n"
    "1700000001 NodeA PRE_SCRIPT_STARTED - local - 1\n"
    "1700000001 NodeA PRE_SCRIPT_SUCCESS - local - 1\n"
    "1700000002 NodeA SUBMIT 101.0 local - 1\n"
    "1700000002 NodeA SUBMIT 101.1 local - 1\n"
    "1700000005 NodeA JOB_FAILURE 2 local - 1\n"
    "1700000005 NodeA POST_SCRIPT_STARTED 101.0 local - 1\n"
    "1700000006 NodeA POST_SCRIPT_TERMINATED 101.0 local - 1\n"
    "1700000006 NodeA POST_SCRIPT_SUCCESS 101.0 local - 1\n"
    "1700000007 NodeB SUBMIT 102.0 viz - 2\n"
    "1700000008 NodeB JOB_TERMINATED 102.0 viz - 2\n"
    "1700000008 NodeB JOB_FAILURE 1 viz - 2\n"
    "1700000009 NodeB SUBMIT 103.0 viz - 3\n"
    "1700000009 NodeE SUBMIT_FAILURE - - - 4\n"
    "1700000009 NodeE POST_SCRIPT_STARTED - - - 4\n"
)


def test_jobstate_log_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "time", lambda: T0 + 1.7)  # "now" for lines with no event time
    path = tmp_path / "x.jobstate.log"
    with JobstateLog(path, tags={"NodeA": "local", "NodeB": "viz"}) as log:
        log.dagman_started(100, 0, now=T0)
        run_like_job_dagman_jobstate_log(log)
        log.dagman_finished(0, now=T0 + 10)
    assert path.read_text() == EXPECTED_RUN + "1700000010 INTERNAL *** DAGMAN_FINISHED 0 ***\n"
    lines = list(read_jobstate_log(path))
    assert lines[0] == JobstateLine(T0, "INTERNAL", "DAGMAN_STARTED", "100.0", "", 0)
    assert lines[5] == JobstateLine(T0 + 5, "NodeA", "JOB_FAILURE", "2", "local", 1)
    assert lines[-1] == JobstateLine(T0 + 10, "INTERNAL", "DAGMAN_FINISHED", "0", "", 0)
    assert parse_line("1 INTERNAL *** RECOVERY_STARTED ***") == JobstateLine(
        1, "INTERNAL", "RECOVERY_STARTED", "", "", 0)
    assert parse_line("garbage line") is None


def test_jobstate_log_recovery_writes_no_duplicates(tmp_path, monkeypatch):
    """JobstateLog::InitializeRecovery and Write: the replay regenerates every line; only the
    ones the crashed run had not written yet reach the file."""
    monkeypatch.setattr(time, "time", lambda: T0 + 1.7)
    path = tmp_path / "x.jobstate.log"
    crashed = EXPECTED_RUN.splitlines(keepends=True)[:-2]  # died after NodeB's retry SUBMIT
    path.write_text("".join(crashed))

    monkeypatch.setattr(time, "time", lambda: T0 + 20)
    with JobstateLog(path, tags={"NodeA": "local", "NodeB": "viz"}) as log:
        log.dagman_started(100, 0)
        log.recovery_started()
        log.initialize_recovery()
        monkeypatch.setattr(time, "time", lambda: T0 + 1.7)  # the replay as in the first run
        run_like_job_dagman_jobstate_log(log)
        log.recovery_finished(now=T0 + 21)
    assert path.read_text() == "".join(crashed) + (
        "1700000020 INTERNAL *** DAGMAN_STARTED 100.0 ***\n"
        "1700000020 INTERNAL *** RECOVERY_STARTED ***\n"
        "1700000009 NodeE SUBMIT_FAILURE - - - 4\n"
        "1700000009 NodeE POST_SCRIPT_STARTED - - - 4\n"
        "1700000021 INTERNAL *** RECOVERY_FINISHED ***\n"
    )


def test_jobstate_log_rescue_continues_sequence(tmp_path):
    """JobstateLog::InitializeRescue: a rescue run numbers attempts after the highest seen."""
    path = tmp_path / "x.jobstate.log"
    path.write_text(EXPECTED_RUN + "1700000010 INTERNAL *** DAGMAN_FINISHED 1 ***\n")
    with JobstateLog(path) as log:
        log.dagman_started(200, 0, now=T0 + 30)
        log.initialize_rescue()
        log.script_started("NodeC", "PRE", T0 + 31)
    assert path.read_text().splitlines()[-1] == "1700000031 NodeC PRE_SCRIPT_STARTED - - - 5"


# -- dagman.out: dprintf header (dprintf.cpp), banner and exit (daemon_core_main.cpp),
# -- print_status (dagman_main.cpp), events and node messages (dag.cpp, scriptQ.cpp, job.cpp) ----

def test_dagman_out_transcript(tmp_path):
    now = [T0]
    path = tmp_path / "x.dag.dagman.out"
    with DagmanOut(path, pid=4242, name="condor_scheduniv_exec.100.0", clock=lambda: now[0]) as out:
        out.starting_up(version="$CondorVersion: 23.9.6 2024-08-08 $",
                        platform="$CondorPlatform: X86_64-Debian_13 $",
                        exe_path="/usr/bin/condor_dagman", uid=1000)
        out.setting("DAGMAN_MAX_JOBS_IDLE", 1000)
        out.setting("DAGMAN_ALWAYS_RUN_POST", False)
        out.status(dag_status=0, total=4, done=1, pre=0, queued=2, post=0, ready=0, unready=1,
                   failed=0, futile=0, held_procs=0, deferrals=Deferrals(max_idle_deferred=3))
        out.running_script("PRE", "A")
        out.pre_script_completed_successfully("A")
        out.submitting_node("A")
        out.assigned_id(12, 0)
        out.just_submitted(1)
        now[0] = T0 + 65
        out.event("SUBMIT", "A", 12, 0, T0 + 61)
        out.number_of_idle_job_procs(1)
        out.job_proc_completed_successfully("A", 12, 0)
        out.job_proc_failed("B", 13, 0, status=1)
        out.node_job_completed("A")
        out.pre_script_failed("C", 3)
        out.post_script_failed("B", 2)
        out.retrying_node("B", 1, 2)
        out.all_jobs_completed(Deferrals())
        out.jobs_failed([NodeDump("B", 1, NodeState.ERROR, retval=2, error_text="POST failed",
                                  submit_file="b.sub", post_script="post.sh $RETURN", retry_max=2,
                                  condor_id=(13, 0, 0), parents=["A"], children=["D", "E"])])
        out.writing_rescue_dag("x.dag.rescue001")
        out.exiting_with_status(1)
    h0, h1 = "11/15/23 00:13:20 ", "11/15/23 00:14:25 "
    assert path.read_text() == "".join(f"{h}{text}\n" for h, text in [
        (h0, "******************************************************"),
        (h0, "** condor_scheduniv_exec.100.0 (CONDOR_DAGMAN) STARTING UP"),
        (h0, "** /usr/bin/condor_dagman"),
        (h0, "** SubsystemInfo: name=DAGMAN type=DAGMAN(9) class=CLIENT(2)"),
        (h0, "** Configuration: subsystem:DAGMAN local:<NONE> class:CLIENT"),
        (h0, "** $CondorVersion: 23.9.6 2024-08-08 $"),
        (h0, "** $CondorPlatform: X86_64-Debian_13 $"),
        (h0, "** PID = 4242 RealUID = 1000"),
        (h0, "** Log last touched time unavailable (No such file or directory)"),
        (h0, "******************************************************"),
        (h0, "DAGMAN_MAX_JOBS_IDLE setting: 1000"),
        (h0, "DAGMAN_ALWAYS_RUN_POST setting: False"),
        (h0, "DAG status: 0 (DAG_STATUS_OK)"),
        (h0, "Of 4 nodes total:"),
        (h0, " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile"),
        (h0, "  ===     ===      ===     ===     ===        ===      ===      ==="),
        (h0, "    1       0        2       0       0          1        0        0"),
        (h0, "0 job proc(s) currently held"),
        (h0, "Note: 3 total job deferrals because of -MaxIdle limit (1000)"),
        (h0, "Running PRE script of Node A..."),
        (h0, "PRE Script of node A completed successfully."),
        (h0, "Submitting HTCondor Node A job(s)..."),
        (h0, "\tassigned HTCondor ID (12.0.0)"),
        (h0, "Just submitted 1 job this cycle..."),
        (h1, "Event: ULOG_SUBMIT for HTCondor Node A (12.0.0) {11/15/23 00:14:21}"),
        (h1, "Number of idle job procs: 1"),
        (h1, "Node A job proc (12.0.0) completed successfully."),
        (h1, "Node B job proc (13.0.0) failed with status 1."),
        (h1, "Node A job completed"),
        (h1, "PRE Script of Job C failed with status 3"),
        (h1, "POST Script of node B failed with status 2"),
        (h1, "POST for Node B returned 2"),
        (h1, "Retrying node B (retry #1 of 2)..."),
        (h1, "All jobs Completed!"),
        (h1, "Note: 0 total job deferrals because of -MaxJobs limit (0)"),
        (h1, "Note: 0 total job deferrals because of -MaxIdle limit (1000)"),
        (h1, "Note: 0 total job deferrals because of node category throttles"),
        (h1, "Note: 0 total PRE script deferrals because of -MaxPre limit (20) or DEFER"),
        (h1, "Note: 0 total POST script deferrals because of -MaxPost limit (20) or DEFER"),
        (h1, "Note: 0 total HOLD script deferrals because of -MaxHold limit (20) or DEFER"),
        (h1, "ERROR: the following job(s) failed:"),
        (h1, "---------------------- Job ----------------------"),
        (h1, "      Node Name: B"),
        (h1, "           Noop: false"),
        (h1, "         NodeID: 1"),
        (h1, "    Node Status: STATUS_ERROR    "),
        (h1, "Node return val: 2"),
        (h1, "          Error: POST failed"),
        (h1, "Job Submit File: b.sub"),
        (h1, "    POST Script: post.sh $RETURN"),
        (h1, "          Retry: 2"),
        (h1, " HTCondor Job ID: (13.0.0)"),
        (h1, "PARENTS: A WAITING: 0 CHILDREN: D E"),
        (h1, "---------------------------------------\t<END>"),
        (h1, "Writing Rescue DAG to x.dag.rescue001..."),
        (h1, "**** condor_scheduniv_exec.100.0 (condor_DAGMAN) pid 4242 EXITING WITH STATUS 1"),
    ])


def test_dagman_out_appends_and_reports_log_age(tmp_path):
    path = tmp_path / "x.dag.dagman.out"
    path.write_text("old run\n")
    os.utime(path, (T0 + 3600, T0 + 3600))
    ctime = os.stat(path).st_ctime  # DAGMan takes the later of mtime and ctime
    last = time.localtime(max(ctime, T0 + 3600))
    with DagmanOut(path, pid=1, clock=lambda: T0) as out:
        out.starting_up(version="v", platform="p", uid=0)
        out.running_in_recovery_mode()
        out.done_with_recovery_mode()
        out.exiting_with_status(0)
    lines = path.read_text().splitlines()
    assert lines[0] == "old run"
    assert lines[1:3] == ["11/15/23 00:13:20 " + "*" * 54,
                          "11/15/23 00:13:20 ** condor_dagman (CONDOR_DAGMAN) STARTING UP"]
    assert lines[8] == (f"11/15/23 00:13:20 ** Log last touched {last.tm_mon}/{last.tm_mday} "
                        f"{last.tm_hour:02d}:{last.tm_min:02d}:{last.tm_sec:02d}")
    assert lines[-3:] == [
        "11/15/23 00:13:20 Running in RECOVERY mode... >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>",
        "11/15/23 00:13:20 ...done with RECOVERY mode <<<<<<<<<<<<<<<<<<<<<<<<<<<<<<",
        "11/15/23 00:13:20 **** condor_dagman (condor_DAGMAN) pid 1 EXITING WITH STATUS 0",
    ]
