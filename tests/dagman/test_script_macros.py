"""The manual's diamond with PRE and POST scripts, its script macros and what DAGMan logs of
them, as the HTCondor 23.9.6 test pool ran the same DAG: a POST script's result is read back as
the ``POST_SCRIPT_TERMINATED`` event (once, whatever the node does next), a NOOP node's POST
script sees the fake job id and no job, and a PRE_SKIP is logged as such."""

from __future__ import annotations

import stat
from pathlib import Path

from engine.dag import build_graph, parse_file
from engine.dagman.jobstate_log import read_jobstate_log
from engine.dagman.runner import DagMan, Options

DIAMOND = """\
# Filename: diamond.dag
JOB  A  A.sub
JOB  B  B.sub
JOB  C  C.sub
JOB  D  D.sub
SCRIPT PRE  A pre.sh $JOB $RETRY $MAX_RETRIES $DAG_STATUS $FAILED_COUNT $NODE_COUNT $QUEUED_COUNT $DONE_COUNT
SCRIPT POST B post.sh $JOB $RETRY $MAX_RETRIES $RETURN $PRE_SCRIPT_RETURN $SUCCESS $JOB_COUNT
SCRIPT PRE  C pre.sh $JOB $RETRY
SCRIPT POST C post.sh $JOB $RETRY $MAX_RETRIES $RETURN $PRE_SCRIPT_RETURN $SUCCESS $JOB_COUNT
SCRIPT POST D postfail.sh $JOB $RETRY $RETURN $DAG_STATUS $FAILED_COUNT $DONE_COUNT $QUEUED_COUNT
RETRY B 2
RETRY D 1
PARENT A CHILD B C
PARENT B C CHILD D
FINAL F F.sub
SCRIPT PRE F pre.sh $JOB $DAG_STATUS $FAILED_COUNT $NODE_COUNT $DONE_COUNT
SCRIPT POST F post.sh $JOB $RETURN $DAG_STATUS $FAILED_COUNT $SUCCESS
JOBSTATE_LOG diamond.jobstate.log
"""

SUBMIT = """\
executable = job.sh
arguments  = "$(DAG_NODE_NAME) $(JOB) $(RETRY) $(DAG_STATUS) $(FAILED_COUNT) '$(DAG_PARENT_NAMES)'"
output     = $(JOB).out
error      = $(JOB).err
log        = diamond.log
queue
"""

JOB = """\
echo "job $*" >> runs.txt
case "$1" in B) [ "$3" = 0 ] && exit 1 ;; C) exit 2 ;; esac
exit 0
"""


def executable(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run(path: Path, schedd) -> DagMan:
    dagman = DagMan(build_graph(parse_file(str(path))), schedd, Options(scan_interval=0.05))
    dagman.exit_code = dagman.run()
    return dagman


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def dagman_out(dag: Path) -> list[str]:
    return [line[18:] for line in lines(Path(f"{dag}.dagman.out"))]


def echo_scripts(directory: Path) -> None:
    executable(directory / "pre.sh", 'echo "pre $*" >> scripts.txt\n')
    executable(directory / "post.sh", 'echo "post $*" >> scripts.txt\n')
    executable(directory / "postfail.sh", 'echo "postfail $*" >> scripts.txt\nexit 5\n')


def test_the_diamond_scripts_see_the_macros_the_pool_gave_them(tmp_path, schedd):
    echo_scripts(tmp_path)
    executable(tmp_path / "job.sh", JOB)
    for node in "ABCDF":
        (tmp_path / f"{node}.sub").write_text(SUBMIT)
    dag = tmp_path / "diamond.dag"
    dag.write_text(DIAMOND)
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0, "the FINAL node succeeded"
    assert sorted(lines(tmp_path / "runs.txt")) == [
        "job A A 0 0 0 ", "job B B 0 0 0 A", "job C C 0 0 0 A",
        "job D D 0 0 0 B,C", "job D D 1 0 0 B,C", "job F F 0 2 1 "]
    assert sorted(lines(tmp_path / "scripts.txt")) == sorted([
        "pre A 0 0 0 0 5 0 0", "pre C 0",
        "post B 0 2 1 -1 True 1", "post C 0 0 2 0 True 1",  # a POST that exits 0 masks the job's failure
        "postfail D 0 0 0 0 3 0", "postfail D 1 0 0 0 3 0",  # the failed POST retries the whole node
        "pre F 2 1 5 3", "post F 0 2 1 True"])


def test_a_post_scripts_result_is_logged_once_per_run_even_when_the_node_is_retried(tmp_path, schedd):
    echo_scripts(tmp_path)
    executable(tmp_path / "job.sh", JOB)
    for node in "ABCDF":
        (tmp_path / f"{node}.sub").write_text(SUBMIT)
    dag = tmp_path / "diamond.dag"
    dag.write_text(DIAMOND)
    run(dag, schedd)
    d_events = [(line.event, line.seq) for line in read_jobstate_log(tmp_path / "diamond.jobstate.log")
                if line.node == "D"]
    one_run = ["SUBMIT", "EXECUTE", "JOB_TERMINATED", "JOB_SUCCESS",
               "POST_SCRIPT_STARTED", "POST_SCRIPT_TERMINATED", "POST_SCRIPT_FAILURE"]
    assert [event for event, _ in d_events] == one_run + one_run
    assert [seq for _, seq in d_events] == [d_events[0][1]] * 7 + [d_events[0][1] + 1] * 7
    out = dagman_out(dag)
    d_post = [line for line in out if "Node D" in line or "node D" in line]
    assert [line.split(" (")[0].split(" {")[0] for line in d_post][:8] == [
        "Submitting HTCondor Node D job(s)...", "Submitting node D from file D.sub using direct job submission",
        "Event: ULOG_SUBMIT for HTCondor Node D",
        "Event: ULOG_EXECUTE for HTCondor Node D", "Event: ULOG_JOB_TERMINATED for HTCondor Node D",
        "Node D job proc", "Node D job completed", "Running POST script of Node D..."]
    event = next(i for i, line in enumerate(out) if line.startswith("Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node D"))
    assert out[event + 1:event + 3] == ["POST Script of node D failed with status 5", "POST for Node D returned 5"]
    assert sum(line.startswith("Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node D") for line in out) == 2


def test_a_noop_nodes_post_script_sees_its_fake_job_and_a_pre_skip_is_logged(tmp_path, schedd):
    echo_scripts(tmp_path)
    executable(tmp_path / "skip.sh", "exit 3\n")
    (tmp_path / "A.sub").write_text("executable = /bin/true\nqueue\n")
    dag = tmp_path / "noop.dag"
    dag.write_text("JOB A A.sub NOOP\n"
                   "SCRIPT POST A post.sh $JOB $JOBID $RETURN $CLUSTERID $JOB_COUNT $SUCCESS\n"
                   "JOB B A.sub\nSCRIPT PRE B skip.sh\nPRE_SKIP B 3\nSCRIPT POST B post.sh $JOB\n"
                   "PARENT A CHILD B\n")
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0
    assert lines(tmp_path / "scripts.txt") == ["post A 0.2147483647 0 0 0 True"], "no job: JOB_COUNT is 0"
    out = [line.split(" {")[0] for line in dagman_out(dag)]
    assert "Node A job proc (0.2147483647.1) completed successfully." in out
    assert "Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node A (0.2147483647.1)" in out
    skip = out.index("PRE Script of Job B failed with status 3")
    assert out[skip + 1:skip + 3] == ["PRE_SKIP return value 3 indicates we are done (successfully) with node B",
                                      "Event: ULOG_PRESKIP for HTCondor Node B (0.2147483647.2)"]
    log = Path(f"{dag}.nodes.log").read_text()
    assert "016 (000.2147483647.001)" in log, "the POST event names the NOOP node's fake job"


def test_dagman_out_counts_idle_procs_and_says_when_a_nodes_job_completed(tmp_path, schedd):
    """'Node X job completed' follows a node's last proc, unless it failed and no POST script
    decides (Dag::ProcessJobProcEnd); 'Number of idle job procs' follows every event that
    changes it, as on the pool."""
    echo_scripts(tmp_path)
    (tmp_path / "ok.sub").write_text("executable = /bin/true\nqueue\n")
    (tmp_path / "fail.sub").write_text("executable = /bin/false\nqueue\n")
    dag = tmp_path / "done.dag"
    dag.write_text("JOB A ok.sub\nJOB B fail.sub\nJOB C fail.sub\nSCRIPT POST C post.sh $RETURN\n"
                   "PARENT A CHILD B C\n")
    assert run(dag, schedd).exit_code == 1
    out = [line.split(" {")[0] for line in dagman_out(dag)]
    assert "Node A job completed" in out and "Node C job completed" in out
    assert "Node B job completed" not in out, "B failed with no POST script"
    a_events = out[out.index(next(line for line in out if line.startswith("Event: ULOG_SUBMIT for HTCondor Node A"))):]
    assert a_events[:4] == [a_events[0], "Number of idle job procs: 1", a_events[2], "Number of idle job procs: 0"]
    assert a_events[2].startswith("Event: ULOG_EXECUTE for HTCondor Node A")


def test_a_job_killed_by_a_signal_returns_minus_the_signal_and_counts_as_exit_code_minus_1(tmp_path, schedd):
    echo_scripts(tmp_path)
    executable(tmp_path / "job.sh", "kill -TERM $$\n")
    (tmp_path / "s.sub").write_text('executable = job.sh\nlog = s.log\nqueue\n')
    dag = tmp_path / "s.dag"
    dag.write_text("JOB S s.sub\nSCRIPT PRE S pre.sh $JOB\n"
                   "SCRIPT POST S post.sh $JOB $RETURN $SUCCESS $EXIT_CODES $EXIT_CODE_COUNTS $PRE_SCRIPT_RETURN "
                   "$JOB_ABORT_COUNT\n")
    assert run(dag, schedd).exit_code == 0, "the POST script masks the failure"
    assert lines(tmp_path / "scripts.txt") == ["pre S", "post S -15 True -1 -1:1 0 0"]


def test_each_submit_cycle_says_how_many_jobs_it_submitted(tmp_path, schedd):
    (tmp_path / "ok.sub").write_text("executable = /bin/true\nqueue\n")
    dag = tmp_path / "cycle.dag"
    dag.write_text("JOB A ok.sub\nJOB B ok.sub\nJOB C ok.sub NOOP\nPARENT A CHILD B C\n")
    assert run(dag, schedd).exit_code == 0
    said = [line for line in dagman_out(dag) if line.startswith("Just submitted")]
    assert said == ["Just submitted 1 job this cycle...", "Just submitted 2 jobs this cycle..."], \
        "a NOOP node counts, as DAGMan counts it"
