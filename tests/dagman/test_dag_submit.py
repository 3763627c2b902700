"""``crabtui dag submit``: DAGMan as a scheduler-universe job of the embedded schedd, and what
condor_q, condor_rm, condor_hold/release, halt and sub-DAGs do to it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from dagman_waits import wait_until
from engine.dag.rescue import rescue_files
from installed import CRABTUI, PYTHON

# Every job appends "<node>" to runs.txt in its DAG's directory and waits for go.<node> there.
GATED_SUB = ("executable = /bin/sh\n"
             "arguments = \"-c 'echo $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.02; done; "
             "exit $(code)'\"\n"
             "queue\n")


@pytest.fixture
def gated(dag_dir):
    (dag_dir / "job.sub").write_text(GATED_SUB)
    return dag_dir


def crabtui(schedd, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CRABTUI, "--state-dir", schedd.state.path, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def submit(schedd, dag: str, cwd: Path, *options: str) -> int:
    result = crabtui(schedd, "dag", "submit", *options, dag, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))


def runs(directory: Path) -> list[str]:
    path = directory / "runs.txt"
    return path.read_text().splitlines() if path.exists() else []


def release(directory: Path, *nodes: str) -> None:
    for node in nodes:
        (directory / f"go.{node}").touch()


def finished(schedd, cluster: int):
    """The DAGMan job's ad once it has left the queue."""
    wait_until(lambda: schedd.history(f"ClusterId == {cluster}", match=1), f"DAGMan job {cluster} to finish")
    return schedd.history(f"ClusterId == {cluster}", match=1)[0]


def exit_line(dag: Path) -> str:
    return dag.with_name(dag.name + ".dagman.out").read_text().splitlines()[-1]


def assert_recovered(out: str) -> None:
    """The dagman.out of a 2-node d.dag rerun after its DAGMan stopped (exit 3) says why it
    recovers and that it did, as condor_dagman 23.9.6 does."""
    assert "Running in RECOVERY mode" in out
    pid = re.search(r"pid (\d+) EXITING WITH STATUS 3", out).group(1)
    assert re.search(r"Dag contains 2 total jobs\n.* Lock file d\.dag\.lock detected,\n"
                     rf".* Duplicate DAGMan PID {pid} is no longer alive; this DAGMan should continue\.\n"
                     r".* Bootstrapping\.\.\.\n", out), "as condor_dagman 23.9.6 says why it recovers"
    assert re.search(r"\[recovery mode\]\n(.*\n)*.*     -{30}\n.*        HTCondor Recovery Complete\n"
                     r".*     -{30}\n.* \.\.\.done with RECOVERY mode <<<", out)


def test_submitted_dag_runs_in_the_schedd_and_q_dag_shows_nodes_under_dagman(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    result = crabtui(schedd, "dag", "submit", "d.dag", cwd=gated)
    assert "File for submitting this DAG to HTCondor           : d.dag.condor.sub" in result.stdout
    cluster = int(re.search(r"1 job\(s\) submitted to cluster (\d+)\.", result.stdout).group(1))
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    table = crabtui(schedd, "q", "-nobatch", "-dag", cwd=gated).stdout.splitlines()
    rows = [line for line in table if re.match(r" *\d+\.\d+ ", line)]
    assert rows[0].lstrip().startswith(f"{cluster}.0 ") and " R " in rows[0]
    # as condor_q -dag -nobatch shows a DAG's DAGMan on the 23.9.6 pool: condor_dagman and its arguments
    assert rows[0].endswith(" condor_dagman -Lockfile d.dag.lock -AutoRescue 1 -MaxIdle 1000 -Dag d.dag"), rows[0]
    assert re.match(rf" *{cluster + 1}\.0 +\|-A ", rows[1]), "the node job is indented under its DAGMan"
    ad = schedd.query(f"ClusterId == {cluster}", ["JobUniverse", "JobBatchName", "RemoveKillSig", "Cmd"])[0]
    assert Path(ad["Cmd"]).name == "condor_dagman", "the DAGMan job's Cmd names condor_dagman, as on a pool"
    assert (ad["JobUniverse"], ad["JobBatchName"], ad["RemoveKillSig"]) == (7, f"d.dag+{cluster}", "SIGUSR1")
    node = schedd.query(f"DAGManJobId == {cluster}", ["JobBatchName", "DAGNodeName"])[0]
    assert (node["DAGNodeName"], node["JobBatchName"]) == ("A", f"d.dag+{cluster}"), "condor_q groups them"
    release(gated, "A", "B")
    ad = finished(schedd, cluster)
    assert ad["ExitCode"] == 0 and runs(gated) == ["A", "B"]
    status = crabtui(schedd, "dag", "status", str(cluster), cwd=gated).stdout
    print(status)
    assert f"DAG {cluster} [d.dag] completed " in status
    assert "\t[#]   2 have completed." in status and "DAG is 100.00% complete." in status
    assert not (gated / "d.dag.lock").exists()


def test_submit_refuses_to_overwrite_an_earlier_runs_files_unless_forced(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nVARS A code=\"0\"\n")
    release(gated, "A")
    finished(schedd, submit(schedd, "d.dag", gated))
    again = crabtui(schedd, "dag", "submit", "d.dag", cwd=gated)
    assert again.returncode == 1
    assert "d.dag.condor.sub" in again.stderr and "-force" in again.stderr
    finished(schedd, submit(schedd, "d.dag", gated, "-force"))
    assert runs(gated) == ["A", "A"]


def test_submit_reports_dag_errors_with_file_and_line(gated, schedd):
    (gated / "bad.dag").write_text("JOB A job.sub\nPARENT A CHILD Z\n")
    result = crabtui(schedd, "dag", "submit", "bad.dag", cwd=gated)
    assert result.returncode == 1
    assert "bad.dag:2:" in result.stderr
    assert not (gated / "bad.dag.condor.sub").exists() and schedd.query() == []


def test_status_of_a_dag_dagman_could_not_start_names_the_dag_and_the_error(gated, schedd):
    """The DAG changed between `dag submit -no_submit` and the submit of its .condor.sub: DAGMan
    exits at start-up, before it names its batch; dag status still names the DAG, and says why."""
    (gated / "d.dag").write_text("JOB A job.sub\nVARS A code=\"0\"\n")
    assert crabtui(schedd, "dag", "submit", "-no_submit", "d.dag", cwd=gated).returncode == 0
    with open(gated / "d.dag", "a") as dag:
        dag.write("PARENT A CHILD B\n")
    result = crabtui(schedd, "job", "submit", "d.dag.condor.sub", cwd=gated)
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    assert finished(schedd, cluster)["ExitCode"] == 1
    status = crabtui(schedd, "dag", "status", str(cluster), cwd=gated)
    assert status.returncode == 0 and runs(gated) == []
    assert status.stdout.splitlines()[0].startswith(f"DAG {cluster} [d.dag] completed ")
    assert status.stdout.splitlines()[1] == ("DAGMan exited with status 1 before running any node: d.dag:3: undefined node B: "
                                          "declare it with JOB (or FINAL, SUBDAG EXTERNAL, SERVICE) in this DAG, or fix the name")


def test_rm_of_the_dagman_job_removes_its_nodes_writes_a_rescue_dag_and_runs_final(gated, schedd):
    (gated / "f.sh").write_text('echo "final $1" >> runs.txt\n')
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n"
                                 "SCRIPT POST A /bin/sh f.sh post\n"
                                 "FINAL F job.sub\nSCRIPT PRE F /bin/sh f.sh $DAG_STATUS\n")
    release(gated, "F")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    result = crabtui(schedd, "rm", str(cluster), cwd=gated)
    assert result.returncode == 0, result.stderr
    ad = finished(schedd, cluster)
    assert ad["JobStatus"] == 3
    ran = runs(gated)
    assert (ran[0], sorted(ran[1:])) == ("A", ["F", "final 4", "final post"]), \
        "FINAL runs with $DAG_STATUS 4 (removed), and removed A's POST script too, as 23.9.6 does; B never starts"
    assert ran.index("final 4") < ran.index("F"), "F's PRE script runs before its job; A's POST runs beside them"
    # FINAL succeeded, so DAGMan 23.9.6 exits 0 even though it was removed (seen on the test pool);
    # the metrics keep DagStatus 4.
    assert exit_line(gated / "d.dag").endswith("EXITING WITH STATUS 0")
    rescue = (gated / "d.dag.rescue001").read_text().splitlines()
    assert "# Nodes premarked DONE: 0" in rescue and "#   <ENDLIST>" in rescue and "DONE A" not in rescue, \
        "written as DAGMan was removed, with A still queued: neither done nor failed, as 23.9.6 writes it"
    assert schedd.query(f"DAGManJobId == {cluster}") == []
    a = schedd.history('DAGNodeName == "A"', ["JobStatus", "RemoveReason"], match=1)[0]
    assert a["JobStatus"] == 3
    assert a["RemoveReason"].startswith("DAG Removed: User removed scheduler job from queue."), \
        "DAGMan removes its node jobs before the schedd would (OtherJobRemoveRequirements), as on the pool"
    assert json.loads((gated / "d.dag.metrics").read_text())["DagStatus"] == 4


def test_rm_while_a_retried_node_runs_ends_its_retries_as_final_starts(gated, schedd):
    """condor_rm of a DAG with FINAL: the running node's abort is read while FINAL runs, so 23.9.6's
    RestartNode ends its retries ("because final node is running"), leaves its text without
    "(after 0 node retries)" and its child unready, not futile (seen on the pool's node status file)."""
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n"
                                 "RETRY A 2\nFINAL F job.sub\nNODE_STATUS_FILE d.status\n")
    release(gated, "F")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    assert crabtui(schedd, "rm", str(cluster), cwd=gated).returncode == 0
    finished(schedd, cluster)
    out = (gated / "d.dag.dagman.out").read_text()
    assert "Aborting further retries of node A because final node is running (last attempt returned -1002)" in out
    status = (gated / "d.status").read_text()
    a_cluster = schedd.history('DAGNodeName == "A"', ["ClusterId"], match=1)[0]["ClusterId"]
    assert f'StatusDetails = "HTCondor reported ULOG_JOB_ABORTED event for job proc ({a_cluster}.0.0)";' in status
    assert "NodesUnready = 1;" in status and "NodesFutile = 0;" in status


def test_rm_of_a_dag_without_final_runs_no_post_script_of_its_removed_jobs(gated, schedd):
    """DAGMan 23.9 exits once it has removed its jobs; with a FINAL node it would still run the
    POST scripts of removed jobs while FINAL runs (the test above)."""
    (gated / "p.sh").write_text('echo "post $1" >> runs.txt\n')
    (gated / "d.dag").write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT POST A /bin/sh p.sh A\n')
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    assert crabtui(schedd, "rm", str(cluster), cwd=gated).returncode == 0
    assert finished(schedd, cluster)["JobStatus"] == 3
    assert exit_line(gated / "d.dag").endswith("EXITING WITH STATUS 2")
    assert runs(gated) == ["A"], "no POST script after the removal"
    a = schedd.history('DAGNodeName == "A"', ["RemoveReason"], match=1)[0]
    assert a["RemoveReason"].startswith("DAG Removed: User removed scheduler job from queue.")


def test_rm_kills_running_scripts_with_sigkill_as_dagman_does(gated, schedd):
    """condor_rm signals DAGMan alone (its remove_kill_sig); DAGMan then kills its running PRE and
    POST scripts with SIGKILL: on the pool 23.9.6 writes "Status=9" in their DEBUG files, and with a
    FINAL node to wait for it reaps them ("PRE Script of node A died on signal 9 (Killed)")."""
    (gated / "slow.sh").write_text('#!/bin/sh\necho "$1 started"\ntouch $1.started\nexec sleep 300\n')
    (gated / "slow.sh").chmod(0o755)
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\n"
                                 "SCRIPT DEBUG pre.debug ALL PRE A slow.sh pre\n"
                                 "SCRIPT DEBUG post.debug ALL POST B slow.sh post\n"
                                 "FINAL F job.sub\n")
    release(gated, "B", "F")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: (gated / "pre.started").exists() and (gated / "post.started").exists(), "both scripts to run")
    assert crabtui(schedd, "rm", str(cluster), cwd=gated).returncode == 0
    finished(schedd, cluster)
    for kind, debug in (("PRE", "pre.debug"), ("POST", "post.debug")):
        header, said = (gated / debug).read_text().splitlines()
        node = "A" if kind == "PRE" else "B"
        assert header.startswith(f"*** Node={node} Type={kind} Status=9 ") and said == f"{kind.lower()} started"
    out = (gated / "d.dag.dagman.out").read_text()
    assert "PRE Script of node A died on signal 9 (Killed)" in out
    said = [line[18:] for line in out.split("Received SIGUSR1\n")[1].splitlines()]
    assert said[:7] == ["Aborting DAG...", "Writing Rescue DAG to d.dag.rescue001...", "Removing submitted jobs...",
                        "Removing any/all submitted HTCondor jobs...", "Removing running scripts...",
                        "Note: 0 total job deferrals because of -MaxJobs limit (0)",
                        "Note: 0 total job deferrals because of -MaxIdle limit (1000)"], "as 23.9.6 logs a condor_rm"


def test_hold_stops_dagman_and_release_recovers_without_rerunning_anything(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    assert crabtui(schedd, "hold", str(cluster), cwd=gated).returncode == 0
    wait_until(lambda: exit_line(gated / "d.dag").endswith("EXITING WITH STATUS 3"), "DAGMan to stop")
    assert schedd.query(f"ClusterId == {cluster}", ["JobStatus"])[0]["JobStatus"] == 5, "DAGMan stays held"
    assert schedd.query('DAGNodeName == "A"', ["JobStatus"]), "its node job runs on"
    assert (gated / "d.dag.lock").exists() and not rescue_files(str(gated / "d.dag"))
    out = (gated / "d.dag.dagman.out").read_text().splitlines()
    said = [line[18:] for line in out[out.index(next(x for x in out if "Got SIGTERM" in x)):]]
    assert said[:7] == ["Got SIGTERM. Performing graceful shutdown.", "DAG status: 0 (DAG_STATUS_OK)",
                        "Of 2 nodes total:", " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile",
                        "  ===     ===      ===     ===     ===        ===      ===      ===",
                        "    0       0        1       0       0          1        0        0",
                        "0 job proc(s) currently held"], "as condor_dagman 23.9.6 logs a condor_hold"
    assert crabtui(schedd, "release", str(cluster), cwd=gated).returncode == 0
    wait_until(lambda: "All pending job states validated" in (gated / "d.dag.dagman.out").read_text(),
               "DAGMan to find A's job in the queue")
    release(gated, "A", "B")
    ad = finished(schedd, cluster)
    assert ad["ExitCode"] == 0
    assert runs(gated) == ["A", "B"], "A's job was re-attached, not resubmitted"
    out = (gated / "d.dag.dagman.out").read_text()
    assert_recovered(out)
    assert re.search(r"\.\.\.done with RECOVERY mode <<<.*\n"
                     r".* 1 nodes claim to have jobs submitted to queue\. Verifying\.\.\.\n"
                     r".* Querying local schedd for associated jobs in queue\n.* All pending job states validated\n", out)


def test_post_scripts_before_a_hold_still_count_done_after_the_release(gated, schedd):
    """DAGMan's recovery reads A's POST result back from the nodes log; `dag status` (which replays
    dagman.out) counts A done, B running on while DAGMan is held, and nothing failed at the end."""
    (gated / "ok.sh").write_text("#!/bin/sh\nexit 0\n")
    (gated / "ok.sh").chmod(0o755)
    (gated / "r.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\n"
                                 "SCRIPT POST A ok.sh\nPARENT A CHILD B\n")
    release(gated, "A")
    cluster = submit(schedd, "r.dag", gated)
    wait_until(lambda: runs(gated) == ["A", "B"], "node B to start, after A's POST script")

    def status() -> str:
        return crabtui(schedd, "dag", "status", str(cluster), cwd=gated).stdout

    assert crabtui(schedd, "hold", str(cluster), cwd=gated).returncode == 0
    wait_until(lambda: exit_line(gated / "r.dag").endswith("EXITING WITH STATUS 3"), "DAGMan to stop")
    held = status()
    assert "\t[#]   1 has completed." in held and "\t[=]   1 is running: 1 job." in held, held
    assert "failed" not in held and "Only" not in held, "B's job runs on while DAGMan is held"
    assert crabtui(schedd, "release", str(cluster), cwd=gated).returncode == 0
    out = gated / "r.dag.dagman.out"
    wait_until(lambda: "...done with RECOVERY mode" in out.read_text(), "DAGMan to recover")
    recovered = status()
    assert "\t[#]   1 has completed." in recovered and "\t[=]   1 is running: 1 job." in recovered, recovered
    assert "post-script" not in recovered
    assert re.search(r"Event: ULOG_POST_SCRIPT_TERMINATED for HTCondor Node A \(\d+\.0\.0\) \{[^}]+\} "
                     r"\[recovery mode\]\n.* POST Script of node A completed successfully\.\n", out.read_text())
    release(gated, "B")
    assert finished(schedd, cluster)["ExitCode"] == 0
    ended = status()
    assert "\t[#]   2 have completed." in ended and "failed" not in ended, ended
    assert "DAG completed successfully." in ended and "running normally" not in ended


def test_halt_and_unhalt_of_a_dag_no_dagman_runs_change_nothing(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    release(gated, "A", "B")
    cluster = submit(schedd, "d.dag", gated)
    assert finished(schedd, cluster)["ExitCode"] == 0
    for target in ("d.dag", str(cluster)):
        halted = crabtui(schedd, "dag", "halt", target, cwd=gated)
        assert halted.returncode == 1 and "no DAGMan is running" in halted.stderr, halted
        assert len(halted.stderr.splitlines()) == 1 and not (gated / "d.dag.halt").exists()

    (gated / "h.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    (gated / "go.A").unlink()
    (gated / "runs.txt").unlink()
    cluster = submit(schedd, "h.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    assert crabtui(schedd, "dag", "halt", "h.dag", cwd=gated).returncode == 0
    release(gated, "A")
    assert finished(schedd, cluster)["ExitCode"] == 1
    assert "Exiting because DAG is halted" in (gated / "h.dag.dagman.out").read_text()
    resumed = crabtui(schedd, "dag", "unhalt", "h.dag", cwd=gated)
    assert resumed.returncode == 1 and len(resumed.stderr.splitlines()) == 1, resumed
    assert "no DAGMan is running" in resumed.stderr and "rescue DAG" in resumed.stderr
    assert "Resumed" not in resumed.stdout


def test_halt_by_job_id_names_the_state_dir_and_refuses_a_dagman_job_that_left_the_queue(gated, schedd):
    """The unhalt command the halt prints looks at the same state directory; a DAGMan job held
    (which keeps its lock file) and then removed runs no DAG, so there is nothing to halt."""
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    halted = crabtui(schedd, "dag", "halt", str(cluster), cwd=gated)
    assert f"`crabtui --state-dir {schedd.state.path} dag unhalt {cluster}` resumes it" in halted.stdout, halted
    assert crabtui(schedd, "dag", "unhalt", str(cluster), cwd=gated).returncode == 0
    assert crabtui(schedd, "hold", str(cluster), cwd=gated).returncode == 0
    assert crabtui(schedd, "rm", str(cluster), cwd=gated).returncode == 0
    finished(schedd, cluster)
    assert (gated / "d.dag.lock").exists()
    for command in ("halt", "unhalt"):
        refused = crabtui(schedd, "dag", command, str(cluster), cwd=gated)
        assert refused.returncode == 1 and len(refused.stderr.splitlines()) == 1, refused
        assert f"its DAGMan job {cluster} has left the queue (removed)" in refused.stderr
    assert not (gated / "d.dag.halt").exists()


def test_a_dagman_released_in_recovery_counts_the_jobs_it_submitted_before(gated, schedd):
    """`dag status` read "DAG has submitted 0 job(s), of which: 1 has completed." after a hold and
    release: recovery replayed the completed job but not its submission."""
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    release(gated, "A")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A", "B"], "node B to start")
    assert crabtui(schedd, "hold", str(cluster), cwd=gated).returncode == 0
    assert crabtui(schedd, "release", str(cluster), cwd=gated).returncode == 0
    wait_until(lambda: "...done with RECOVERY mode" in (gated / "d.dag.dagman.out").read_text(), "recovery")
    wait_until(lambda: (schedd.query(f"ClusterId == {cluster}", ["DAG_JobsCompleted"]) or [{}])[0]
               .get("DAG_JobsCompleted") == 1, "the ad after recovery")
    (ad,) = schedd.query(f"ClusterId == {cluster}", ["DAG_JobsSubmitted", "DAG_JobsCompleted"])
    assert (ad["DAG_JobsSubmitted"], ad["DAG_JobsCompleted"]) == (2, 1)
    release(gated, "B")
    assert finished(schedd, cluster)["ExitCode"] == 0


def test_dag_status_counts_a_removed_node_job_as_failed_not_completed(gated, schedd):
    """A node job removed with condor_rm is not a completed job: DAGMan 23.9.6's DAG_JobsCompleted
    counts the procs that exited 0 (seen on the test pool: 2 submitted, 1 completed after one was
    removed), so `htcondor dag status` reads "1 has failed." where `dag status` read "completed"."""
    (gated / "rm.dag").write_text("# condor_rm of a node job\n"
                                  "JOB A job.sub\nJOB B job.sub\nJOB D job.sub\nJOB C job.sub\n"
                                  "VARS ALL_NODES code=\"0\"\nPARENT A CHILD C\n")
    release(gated, "B")  # A and B take the two slots; D runs once B is done
    cluster = submit(schedd, "rm.dag", gated)
    wait_until(lambda: sorted(runs(gated)) == ["A", "B", "D"], "nodes A, B and D to start")
    (a,) = schedd.query(f"DAGManJobId == {cluster} && DAGNodeName == \"A\"", ["ClusterId"])
    assert crabtui(schedd, "rm", str(a["ClusterId"]), cwd=gated).returncode == 0
    wait_until(lambda: (schedd.query(f"ClusterId == {cluster}", ["DAG_NodesFailed"]) or [{}])[0]
               .get("DAG_NodesFailed") == 1, "the ad to count A failed")
    (ad,) = schedd.query(f"ClusterId == {cluster}", ["DAG_JobsSubmitted", "DAG_JobsCompleted"])
    assert (ad["DAG_JobsSubmitted"], ad["DAG_JobsCompleted"]) == (3, 1)
    status = crabtui(schedd, "dag", "status", str(cluster), cwd=gated).stdout
    assert "DAG has submitted 3 job(s), of which:" in status, status
    assert "\t      1 is running.\n\t      1 has completed.\n\t      1 has failed." in status, status
    release(gated, "D")
    assert finished(schedd, cluster)["ExitCode"] == 1
    status = crabtui(schedd, "dag", "status", str(cluster), cwd=gated).stdout
    assert "\t      2 have completed.\n\t      1 has failed." in status, status


def test_dag_status_of_a_dagman_not_yet_started_ignores_the_last_runs_dagman_out(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nVARS A code=\"0\"\n")
    release(gated, "A")
    first = submit(schedd, "d.dag", gated)
    assert finished(schedd, first)["ExitCode"] == 0
    time.sleep(2.1)  # the next job is queued over a second after the run's dagman.out began (whole seconds)
    again = submit(schedd, "d.dag", gated, "-f", "-append", "hold = true")  # held at submit: DAGMan never starts
    status = crabtui(schedd, "dag", "status", str(again), cwd=gated)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith(f"DAG {again} [d.dag] has been held for ")
    assert "has completed" not in status.stdout and "DAG contains" not in status.stdout, status.stdout
    assert crabtui(schedd, "rm", str(again), cwd=gated).returncode == 0


def test_halt_drains_runs_final_and_unhalt_before_the_drain_resumes(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    halted = crabtui(schedd, "dag", "halt", str(cluster), cwd=gated)
    assert halted.returncode == 0 and (gated / "d.dag.halt").exists()
    resumed = crabtui(schedd, "dag", "unhalt", "d.dag", cwd=gated)
    assert resumed.returncode == 0 and not (gated / "d.dag.halt").exists()
    release(gated, "A", "B")
    assert finished(schedd, cluster)["ExitCode"] == 0 and runs(gated) == ["A", "B"]

    (gated / "h.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n"
                                 "FINAL F job.sub\n")
    for name in ("go.A", "go.B", "runs.txt"):
        (gated / name).unlink()
    cluster = submit(schedd, "h.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    assert crabtui(schedd, "dag", "halt", "h.dag", cwd=gated).returncode == 0
    wait_until(lambda: "DAG_Status" in (schedd.query(f"ClusterId == {cluster}", ["DAG_Status"]) or [{}])[0], "ad")
    release(gated, "A", "F")
    ad = finished(schedd, cluster)
    assert ad["ExitCode"] == 0 and runs(gated) == ["A", "F"], "B never starts; FINAL runs, and its success decides"
    assert json.loads((gated / "h.dag.metrics").read_text())["DagStatus"] == 6
    assert rescue_files(str(gated / "h.dag"))
    assert ad["DAG_Status"] == 6 and ad["DAG_NodesDone"] == 2


def test_sub_dag_runs_as_a_nested_dagman_with_its_own_rescue_dag(gated, schedd):
    sub = gated / "sub"
    sub.mkdir()
    (sub / "job.sub").write_text(GATED_SUB)
    (sub / "inner.dag").write_text("JOB X job.sub\nJOB Y job.sub\nVARS X code=\"0\"\nVARS Y code=\"1\"\n"
                                   "PARENT X CHILD Y\n")
    (gated / "outer.dag").write_text("JOB A job.sub\nVARS A code=\"0\"\nSUBDAG EXTERNAL S inner.dag DIR sub\n"
                                     "PARENT A CHILD S\n")
    release(gated, "A")
    release(sub, "X")
    cluster = submit(schedd, "outer.dag", gated)
    wait_until(lambda: runs(sub) == ["X", "Y"], "the sub-DAG's node Y to start")
    table = crabtui(schedd, "q", "-nobatch", "-dag", cwd=gated).stdout.splitlines()
    column = next(line for line in table if "OWNER/NODENAME" in line).index("OWNER/NODENAME")
    names = [re.match(r" *\|-\S+|\S+", line[column:]).group() for line in table if re.match(r" *\d+\.\d+ ", line)]
    assert names[1:] == [" |-S", "  |-Y"], "the sub-DAG's DAGMan under its node, its node under it"
    release(sub, "Y")
    ad = finished(schedd, cluster)
    assert ad["ExitCode"] == 1, "Y failed, so S failed, so the DAG failed"
    assert (sub / "inner.dag.rescue001").exists() and (gated / "outer.dag.rescue001").exists()
    assert "DONE X" in (sub / "inner.dag.rescue001").read_text()
    (nested,) = schedd.history(f"DAGManJobId == {cluster} && DAGNodeName == \"S\"", ["ClusterId"], match=1)
    inner_metrics = json.loads((sub / "inner.dag.metrics").read_text())
    assert (inner_metrics["dagman_id"], inner_metrics["parent_dagman_id"]) == (str(nested["ClusterId"]), str(cluster))
    assert json.loads((gated / "outer.dag.metrics").read_text())["parent_dagman_id"] == ""
    status = crabtui(schedd, "dag", "status", str(nested["ClusterId"]), cwd=gated).stdout
    assert status.startswith(f"DAG {nested['ClusterId']} [inner.dag] completed "), "its own DAG, not outer.dag"
    assert crabtui(schedd, "dag", "status", str(cluster), cwd=gated).stdout.startswith(f"DAG {cluster} [outer.dag] ")

    (sub / "inner.dag").write_text("JOB X job.sub\nJOB Y job.sub\nVARS ALL_NODES code=\"0\"\nPARENT X CHILD Y\n")
    assert finished(schedd, submit(schedd, "outer.dag", gated))["ExitCode"] == 0
    assert runs(gated) == ["A"], "A is DONE in the outer rescue DAG"
    assert runs(sub) == ["X", "Y", "Y"], "only Y reruns, from the sub-DAG's own rescue DAG"


def test_force_reaches_the_sub_dags_which_then_run_from_their_start(gated, schedd):
    """``-f`` over a DAG whose SUBDAG failed: DAGMan 23.9.6 runs the sub-DAG's condor_submit_dag
    -no_submit with -force, which renames the sub-DAG's rescue DAG, so its done nodes run again;
    dagman.out shows that command and the .condor.sub it wrote (seen on the pool)."""
    sub = gated / "sub"
    sub.mkdir()
    (sub / "job.sub").write_text(GATED_SUB)
    (sub / "inner.dag").write_text('JOB X job.sub\nJOB Y job.sub\nVARS X code="0"\nVARS Y code="1"\n'
                                   "PARENT X CHILD Y\n")
    (gated / "outer.dag").write_text("SUBDAG EXTERNAL S inner.dag DIR sub\n")
    release(sub, "X", "Y")
    assert crabtui(schedd, "dag", "run", "outer.dag", cwd=gated).returncode == 1
    assert "DONE X" in (sub / "inner.dag.rescue001").read_text()
    assert crabtui(schedd, "dag", "run", "-f", "outer.dag", cwd=gated).returncode == 1
    assert runs(sub) == ["X", "Y", "X", "Y"], "X runs again: the sub-DAG's rescue DAG was renamed"
    assert (sub / "inner.dag.rescue001.old").exists() and not (sub / "inner.dag.rescue002").exists()
    out = (gated / "outer.dag.dagman.out").read_text()
    assert "Recursive submit command: <condor_submit_dag -no_submit -update_submit -force -AutoRescue 1 inner.dag>" in out
    assert "Submitting node S from file inner.dag.condor.sub using direct job submission" in out


def test_config_file_knobs_apply_and_command_line_options_override_them(gated, schedd):
    (gated / "limits.config").write_text("# DAGMan knobs\nDAGMAN_MAX_JOBS_SUBMITTED = 1\nDAGMAN_MAX_PRE_SCRIPTS = 3\n")
    (gated / "c.dag").write_text("CONFIG limits.config\nJOB A job.sub\nVARS A code=\"0\"\n")
    release(gated, "A")
    result = crabtui(schedd, "dag", "run", "-maxpre", "7", "c.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    out = (gated / "c.dag.dagman.out").read_text()
    # DAGMan lists the configuration as read, before its command line (seen on the pool)
    assert "DAGMAN_MAX_JOBS_SUBMITTED setting: 1" in out and "DAGMAN_MAX_PRE_SCRIPTS setting: 3" in out
    assert "Note: 0 total PRE script deferrals because of -MaxPre limit (7) or DEFER" in out


def test_bad_config_value_is_refused_naming_file_line_and_knob(gated, schedd):
    (gated / "bad.config").write_text("DAGMAN_MAX_JOBS_SUBMITTED = 1\nDAGMAN_ALWAYS_RUN_POST = maybe\n")
    (gated / "c.dag").write_text("JOB A job.sub\nVARS A code=\"0\"\n")
    result = crabtui(schedd, "dag", "run", "-config", "bad.config", "c.dag", cwd=gated)
    assert result.returncode == 1
    assert "bad.config:2: DAGMAN_ALWAYS_RUN_POST = 'maybe': expected True or False" in result.stderr
    assert runs(gated) == []


def test_set_job_attr_lands_in_the_dagman_job_ad(gated, schedd):
    (gated / "d.dag").write_text('SET_JOB_ATTR CrabTask = "250101_crab_test"\nJOB A job.sub\nVARS A code="0"\n')
    release(gated, "A")
    ad = finished(schedd, submit(schedd, "d.dag", gated))
    assert ad["CrabTask"] == "250101_crab_test"


def test_sub_dag_nodes_inherit_the_priority_of_their_subdag_node(gated, schedd):
    sub = gated / "sub"
    sub.mkdir()
    (sub / "job.sub").write_text(GATED_SUB)
    (sub / "inner.dag").write_text('JOB X job.sub\nVARS X code="0"\nPRIORITY X 3\n')
    (gated / "outer.dag").write_text("SUBDAG EXTERNAL S inner.dag DIR sub\nPRIORITY S 10\n")
    release(sub, "X")
    finished(schedd, submit(schedd, "outer.dag", gated))
    x = schedd.history('DAGNodeName == "X"', ["JobPrio"], match=1)[0]
    s = schedd.history('DAGNodeName == "S"', ["JobPrio"], match=1)[0]
    assert (s["JobPrio"], x["JobPrio"]) == (10, 13), "effective priority: the node's plus its SUBDAG node's"


def test_hold_script_runs_when_a_node_job_is_held(gated, schedd):
    (gated / "held.sh").write_text('echo "held $1 $2" >> holds.txt\n')
    (gated / "d.dag").write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT HOLD A /bin/sh held.sh $JOB $RETRY\n')
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    a = schedd.query(f"DAGManJobId == {cluster}", ["ClusterId"])[0]["ClusterId"]
    assert crabtui(schedd, "hold", str(a), cwd=gated).returncode == 0
    wait_until(lambda: (gated / "holds.txt").exists(), "the HOLD script")
    assert (gated / "holds.txt").read_text() == "held A 0\n"
    release(gated, "A")
    assert crabtui(schedd, "release", str(a), cwd=gated).returncode == 0
    assert finished(schedd, cluster)["ExitCode"] == 0, "the HOLD script's result changes nothing"


def test_rm_typed_right_after_release_still_writes_a_rescue_dag(gated, schedd):
    """The README's `crabtui hold 12; crabtui release 12` then `crabtui rm 12`, pasted together:
    the rm reaches a DAGMan that is still starting up, and it must still be DAGMan's removal."""
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    cluster = submit(schedd, "d.dag", gated)
    wait_until(lambda: runs(gated) == ["A"], "node A to start")
    for command in ("hold", "release", "rm"):
        assert crabtui(schedd, command, str(cluster), cwd=gated).returncode == 0, command
    finished(schedd, cluster)
    out = (gated / "d.dag.dagman.out").read_text()
    assert out.count("STARTING UP") == 2 and "Received SIGUSR1" in out, out[-2000:]
    assert exit_line(gated / "d.dag").endswith("EXITING WITH STATUS 2")
    assert rescue_files(str(gated / "d.dag")) and not (gated / "d.dag.lock").exists()
    assert schedd.query(f"DAGManJobId == {cluster}") == []
    status = crabtui(schedd, "dag", "status", str(cluster), cwd=gated).stdout
    assert "running." not in status and "DAG was removed." in status, \
        "A's job left the queue with DAGMan, whatever DAGMan's ad said last"


def test_a_dagman_told_to_go_while_it_reads_its_dag_waits_for_its_handler(gated, schedd):
    """condor_rm's SIGUSR1 as soon as DAGMan's process exists (before it has read its DAG): the
    removal is DAGMan's (rescue DAG, exit 2), not Python's default death."""
    nodes = "".join(f"JOB N{i} job.sub\n" for i in range(3000))
    (gated / "d.dag").write_text(f"JOB A job.sub\n{nodes}VARS ALL_NODES code=\"0\"\n"
                                 f"PARENT A CHILD {' '.join(f'N{i}' for i in range(3000))}\n")
    dagman = subprocess.Popen([PYTHON, "-m", "engine.dagman", "-Dag", "d.dag", "--state-dir", schedd.state.path],
                              cwd=gated, stderr=subprocess.PIPE, text=True)
    try:
        def blocked() -> bool:  # engine.dagman's first statement has run: SigBlk holds SIGUSR1 (bit 10)
            status = Path(f"/proc/{dagman.pid}/status").read_text()
            return bool(int(re.search(r"^SigBlk:\s*(\w+)", status, re.M).group(1), 16) & 1 << 9)
        wait_until(blocked, "DAGMan to start")
        assert not (gated / "d.dag.dagman.out").exists(), "sent before DAGMan read its DAG"
        dagman.send_signal(signal.SIGUSR1)
        _, err = dagman.communicate(timeout=120)
    finally:
        dagman.kill()
        dagman.wait()
    assert dagman.returncode == 2, err
    assert "Received SIGUSR1" in (gated / "d.dag.dagman.out").read_text()
    assert rescue_files(str(gated / "d.dag"))


def test_ctrl_c_of_dag_run_stops_dagman_gracefully_and_the_next_run_recovers(gated, schedd):
    """`crabtui dag run` in the foreground, Ctrl-C while a node runs: one line saying how to go
    on (no click 'Aborted!'), the node job runs on, and running the same command again recovers it."""
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    # SIGINT's default action even when the tests run in the background (started with it ignored)
    run = subprocess.Popen([CRABTUI, "--state-dir", schedd.state.path, "dag", "run", "d.dag"], cwd=gated,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_until(lambda: runs(gated) == ["A"], "node A to start")
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 3 and err.count("\n") == 1 and "Aborted" not in err, err
    assert err.startswith("ERROR: d.dag: DAGMan stopped") and "runs again" in err, err
    assert exit_line(gated / "d.dag").endswith("EXITING WITH STATUS 3")
    assert schedd.query('DAGNodeName == "A"', ["JobStatus"]), "its node job runs on"
    release(gated, "A", "B")
    again = crabtui(schedd, "dag", "run", "d.dag", cwd=gated)
    assert again.returncode == 0, again.stderr
    assert runs(gated) == ["A", "B"], "A's job was re-attached, not resubmitted"
    out = (gated / "d.dag.dagman.out").read_text()
    assert_recovered(out)


def test_the_dagman_ad_counts_the_nodes_a_provisioner_held_back_unready(gated, schedd):
    """A provisioner that ends without setting ProvisionerState = 2: its DAGMan job's last ad
    counts A (ready, but never in the ready queue) and B un-ready, as 23.9.6 on the pool
    (DAG_NodesReady 0, DAG_NodesUnready 2, DAG_NodesDone 2 with FINAL)."""
    (gated / "provisioner.sub").write_text("executable = /bin/true\nqueue\n")
    (gated / "p.dag").write_text("PROVISIONER Prov provisioner.sub\nJOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\n"
                                 "FINAL F provisioner.sub\n")
    ad = finished(schedd, submit(schedd, "p.dag", gated))
    assert (ad["DAG_NodesDone"], ad["DAG_NodesReady"], ad["DAG_NodesUnready"]) == (2, 0, 2)
    assert runs(gated) == []
