"""DAGMan killed with SIGKILL at several points, then started again: recovery mode rebuilds its
state from the nodes log, no node's job or finished script runs twice, and the outcome is the one
an uninterrupted run has."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dagman_waits import wait_until
from engine.dagman.jobstate_log import read_jobstate_log
from installed import CRABTUI

# Jobs and scripts append "<what> <node>" to runs.txt, then wait until the test creates go.<node>.
GATED = """\
JOB A job.sub
JOB B job.sub
JOB C job.sub
SCRIPT PRE B /bin/sh gate.sh pre B
SCRIPT POST B /bin/sh gate.sh post B
PARENT A CHILD B
PARENT B CHILD C
JOBSTATE_LOG js.log
"""


@pytest.fixture
def gated(dag_dir):
    (dag_dir / "job.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo job $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.02; done'\"\n"
        "queue\n")
    (dag_dir / "gate.sh").write_text(
        'echo $1 $2 >> runs.txt\nwhile [ ! -e go.$1.$2 ]; do sleep 0.02; done\n')
    (dag_dir / "gated.dag").write_text(GATED)
    return dag_dir


def start(dag_dir: Path, schedd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine.dagman", "--state-dir", schedd.state.path, "gated.dag"],
                            cwd=dag_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def runs(dag_dir: Path) -> list[str]:
    path = dag_dir / "runs.txt"
    return path.read_text().splitlines() if path.exists() else []


def reached(dag_dir: Path, line: str) -> None:
    wait_until(lambda: line in runs(dag_dir), line)


def release(dag_dir: Path, gate: str) -> None:
    (dag_dir / f"go.{gate}").touch()


def kill(dagman: subprocess.Popen) -> None:
    dagman.send_signal(signal.SIGKILL)
    dagman.wait()


def finish(dag_dir: Path, schedd) -> int:
    """Start DAGMan again, open every remaining gate, and return its exit code."""
    for gate in ("A", "B", "C", "pre.B", "post.B"):
        release(dag_dir, gate)
    dagman = start(dag_dir, schedd)
    _, err = dagman.communicate(timeout=120)
    assert not err, err
    return dagman.returncode


def test_killed_while_a_job_runs_reattaches_the_job_instead_of_resubmitting(gated, schedd):
    dagman = start(gated, schedd)
    release(gated, "A")
    release(gated, "pre.B")
    reached(gated, "job B")
    kill(dagman)
    assert (gated / "gated.dag.lock").exists(), "a DAGMan that died leaves its lock file"
    assert schedd.query("DAGNodeName == \"B\"", ["JobStatus"]), "B's job runs on without DAGMan"
    assert finish(gated, schedd) == 0
    assert runs(gated) == ["job A", "pre B", "job B", "post B", "job C"]
    assert not (gated / "gated.dag.lock").exists()
    out = (gated / "gated.dag.dagman.out").read_text()
    assert "Running in RECOVERY mode... " in out and "...done with RECOVERY mode " in out


def test_killed_while_a_post_script_runs_reruns_only_the_post_script(gated, schedd):
    dagman = start(gated, schedd)
    for gate in ("A", "pre.B", "B"):
        release(gated, gate)
    reached(gated, "post B")
    kill(dagman)
    assert finish(gated, schedd) == 0
    assert runs(gated) == ["job A", "pre B", "job B", "post B", "post B", "job C"], \
        "the POST's result was never logged, so it runs again; the job does not"


def test_killed_while_a_pre_script_runs_reruns_the_pre_script(gated, schedd):
    dagman = start(gated, schedd)
    release(gated, "A")
    reached(gated, "pre B")
    kill(dagman)
    assert finish(gated, schedd) == 0
    assert runs(gated) == ["job A", "pre B", "pre B", "job B", "post B", "job C"]


def test_killed_after_a_job_finished_unseen_picks_up_its_result_from_the_log(gated, schedd):
    dagman = start(gated, schedd)
    release(gated, "A")
    release(gated, "pre.B")
    reached(gated, "job B")
    kill(dagman)
    release(gated, "B")  # B's job ends while no DAGMan is watching
    wait_until(lambda: not schedd.query('DAGNodeName == "B"', ["JobStatus"]), "B's job to leave the queue")
    assert finish(gated, schedd) == 0
    assert runs(gated) == ["job A", "pre B", "job B", "post B", "job C"]


def test_recovered_jobstate_log_has_each_event_once_between_recovery_lines(gated, schedd):
    dagman = start(gated, schedd)
    release(gated, "A")
    release(gated, "pre.B")
    reached(gated, "job B")
    kill(dagman)
    assert finish(gated, schedd) == 0
    lines = list(read_jobstate_log(gated / "js.log"))
    events = [(line.node, line.event) for line in lines]
    internal = [e for n, e in events if n == "INTERNAL"]
    assert internal == ["DAGMAN_STARTED", "DAGMAN_STARTED", "RECOVERY_STARTED", "RECOVERY_FINISHED",
                        "DAGMAN_FINISHED"], "the killed run never finished"
    a_events = [e for n, e in events if n == "A"]
    assert a_events == ["SUBMIT", "EXECUTE", "JOB_TERMINATED", "JOB_SUCCESS"], "nothing of A is logged twice"
    assert [e for n, e in events if n == "B"].count("SUBMIT") == 1


def test_failed_attempts_before_the_crash_count_against_retry(dag_dir, schedd):
    (dag_dir / "job.sub").write_text(
        "executable = /bin/sh\n"
        "arguments = \"-c 'echo job $(JOB) $(RETRY) >> runs.txt; "
        "while [ ! -e go.$(JOB).$(RETRY) ]; do sleep 0.02; done; exit $(code)'\"\n"
        "queue\n")
    (dag_dir / "gated.dag").write_text('JOB A job.sub\nVARS A code="1"\nRETRY A 2\n')
    dagman = start(dag_dir, schedd)
    release(dag_dir, "A.0")
    reached(dag_dir, "job A 1")
    kill(dagman)
    release(dag_dir, "A.1")
    release(dag_dir, "A.2")
    dagman = start(dag_dir, schedd)
    dagman.communicate(timeout=120)
    assert dagman.returncode == 1
    assert runs(dag_dir) == ["job A 0", "job A 1", "job A 2"], "two retries in all, across the crash"
    assert (dag_dir / "gated.dag.rescue001").exists()


def test_a_second_dagman_on_a_running_dag_is_refused(gated, schedd):
    dagman = start(gated, schedd)
    try:
        wait_until(lambda: (gated / "gated.dag.lock").exists(), "the lock file")
        second = start(gated, schedd)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1
        assert "gated.dag.lock" in err and f"pid {dagman.pid}" in err and "still running" in err
    finally:
        kill(dagman)
    assert os.path.exists(gated / "gated.dag.lock")


def test_submit_do_recovery_rebuilds_from_the_nodes_log_without_the_lock(gated, schedd):
    """condor_submit_dag -DoRecovery: DAGMan recovers from the nodes log though no lock file says
    it died, and an earlier run's files do not stop the submit (as 23.9.6 does on the pool)."""
    crabtui = [CRABTUI, "--state-dir", schedd.state.path, "dag", "submit"]
    subprocess.run([*crabtui, "-no_submit", "gated.dag"], cwd=gated, check=True, capture_output=True)
    dagman = start(gated, schedd)
    release(gated, "A")
    release(gated, "pre.B")
    reached(gated, "job B")
    kill(dagman)
    (gated / "gated.dag.lock").unlink()
    for gate in ("B", "post.B", "C"):
        release(gated, gate)
    result = subprocess.run([*crabtui, "-DoRecovery", "gated.dag"], cwd=gated, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "-DoRecovery" in (gated / "gated.dag.condor.sub").read_text()
    wait_until(lambda: (gated / "gated.dag.dagman.out").exists()
               and "EXITING WITH STATUS 0" in (gated / "gated.dag.dagman.out").read_text(), "DAGMan to finish")
    assert runs(gated) == ["job A", "pre B", "job B", "post B", "job C"], "nothing ran twice"
    recovered = (gated / "gated.dag.dagman.out").read_text().split("STARTING UP")[-1]
    assert "Running in recovery mode because -DoRecovery flag was specified" in recovered, "23.9.6's reason"
    assert "Lock file" not in recovered


def test_a_job_that_ends_while_dagman_recovers_is_not_taken_for_lost(gated, schedd, monkeypatch):
    """B's job ends after DAGMan's recovery read its log, before DAGMan asks the schedd which jobs
    are queued: the job is gone from the queue, its end is in the log, not yet read.  As 23.9.6,
    DAGMan compares the log with its size before the recovery read, sees it grew and reads on,
    instead of "DAGMan lost track of node B" and a DAG aborted with a rescue DAG."""
    from engine.dagman.main import main as dagman_main
    from engine.dagman.dagman_out import DagmanOut

    dagman = start(gated, schedd)
    release(gated, "A")
    release(gated, "pre.B")
    reached(gated, "job B")
    kill(dagman)
    done_with_recovery = DagmanOut.done_with_recovery_mode

    def b_ends_now(out):  # between the recovery read and the query of the queue
        release(gated, "B")
        wait_until(lambda: not schedd.query('DAGNodeName == "B"', ["JobStatus"]), "B's job to leave the queue")
        done_with_recovery(out)

    monkeypatch.setattr(DagmanOut, "done_with_recovery_mode", b_ends_now)
    for gate in ("C", "post.B"):
        release(gated, gate)
    assert dagman_main(["--state-dir", schedd.state.path, "gated.dag"]) == 0
    assert "lost track" not in (gated / "gated.dag.dagman.out").read_text()
    assert runs(gated) == ["job A", "pre B", "job B", "post B", "job C"]
