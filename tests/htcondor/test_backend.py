"""``--backend htcondor``: the Schedd API and the CLI on a real HTCondor 23.9.6 pool, and the
same commands behaving the same on the embedded engine."""

from __future__ import annotations

import os
import re
import shutil
import time
import tempfile
from pathlib import Path

import htcondor2
import pytest

from crosscheck import crabtui, dagman_exit, submit
from engine.schedd.api import JobAction, JobStatus
from engine.schedd.htcondor import HTCondorSchedd
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir

pytestmark = pytest.mark.htcondor

HELD_JOB = ("executable = /bin/sh\narguments = \"-c 'echo hi; exit 7'\"\noutput = out.txt\n"
            "log = job.log\nhold = true\nqueue\n")
# A node job that runs until the test creates go.<node>.
GATED = ("executable = /bin/sh\n"
         "arguments = \"-c 'while [ ! -e go.$(JOB) ]; do sleep 0.2; done'\"\n"
         "queue\n")


@pytest.fixture
def shared_dir():
    """A directory the pool's unprivileged job user can write, at the same path inside the pool."""
    path = Path(tempfile.mkdtemp(prefix="backend-", dir="/tmp"))
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def embedded_state():
    state = StateDir(tempfile.mkdtemp(prefix="be-", dir="/tmp"))
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    os.chmod(path, 0o666)
    return path


def terminated(log: Path, timeout: int = 120) -> htcondor2.JobEvent:
    for event in htcondor2.JobEventLog(str(log)).events(stop_after=timeout):
        if event.type == htcondor2.JobEventType.JOB_TERMINATED:
            return event
    raise AssertionError(f"no JOB_TERMINATED in {log} within {timeout} s")


def test_submit_query_edit_act_and_history_on_the_pool(htcondor_pool, shared_dir):
    write(shared_dir, "job.sub", HELD_JOB)
    schedd = HTCondorSchedd()
    result = schedd.submit(HELD_JOB, submit_file=str(shared_dir / "job.sub"), cwd=str(shared_dir))
    job = f"{result.cluster}.0"
    ad = schedd.query(f"ClusterId == {result.cluster}", ["JobStatus", "Owner", "Iwd"])[0]
    assert (ad["JobStatus"], ad["Owner"], ad["Iwd"]) == (JobStatus.HELD, "crab", str(shared_dir))
    assert schedd.edit(result.cluster, {"CrabtuiNote": '"checked"', "CrabtuiCount": "3"}) == 1
    assert schedd.query_values(f"ClusterId == {result.cluster}", ["CrabtuiNote", "CrabtuiCount"]) == \
        [{"CrabtuiNote": "checked", "CrabtuiCount": 3}]
    assert schedd.act(JobAction.Release, job).changed == 1
    assert terminated(shared_dir / "job.log")["ReturnValue"] == 7
    assert (shared_dir / "out.txt").read_text() == "hi\n"
    history = schedd.history(f"ClusterId == {result.cluster}", ["ExitCode", "CrabtuiNote"], match=1)
    assert history and history[0]["ExitCode"] == 7 and history[0]["CrabtuiNote"] == "checked"


def test_another_users_job_is_refused_with_a_message(htcondor_pool, shared_dir):
    write(shared_dir, "job.sub", HELD_JOB)
    cluster = HTCondorSchedd().submit(HELD_JOB, cwd=str(shared_dir)).cluster
    refused = crabtui("--backend", "htcondor", "rm", str(cluster), cwd=shared_dir,
                      env={"_CONDOR_SEC_CLAIMTOBE_USER": "nobody"})
    assert refused.returncode == 1
    assert "permission denied (another user's job)" in refused.stderr and "Traceback" not in refused.stderr
    assert HTCondorSchedd().query(f"ClusterId == {cluster}", ["JobStatus"]), "the job is still there"
    assert crabtui("--backend", "htcondor", "rm", str(cluster), cwd=shared_dir).returncode == 0


def test_an_unreachable_pool_is_a_message_not_a_traceback(htcondor_pool, shared_dir):
    config = write(shared_dir, "nowhere.config", "COLLECTOR_HOST = 127.0.0.1:9\nCONDOR_HOST = 127.0.0.1\n")
    result = crabtui("--backend", "htcondor", "q", cwd=shared_dir, env={"CONDOR_CONFIG": str(config)})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("ERROR: cannot locate the schedd through the collector 127.0.0.1:9")
    assert f"CONDOR_CONFIG={config}" in result.stderr


def dag_tree(table: str) -> list[tuple[str, str]]:
    """(name column, ST) for each job row of ``q -nobatch -dag``; the DAGMan row's name is its owner."""
    lines = table.splitlines()
    header = next(line for line in lines if "OWNER/NODENAME" in line)
    name_at, status_at = header.index("OWNER/NODENAME"), header.index(" ST ") + 1
    rows = []
    for line in lines:
        if re.match(r"\d+\.\d+ ", line):
            name = re.match(r" *\|-\S+|\S+", line[name_at:]).group()
            rows.append((name if "|-" in name else "<dagman>", line[status_at:status_at + 2].strip()))
    return rows


@pytest.mark.parametrize("backend", ["htcondor", "embedded"])
def test_q_dag_hold_release_and_rm_behave_alike(htcondor_pool, shared_dir, embedded_state, backend):
    args = ["--backend", backend] + (["--state-dir", embedded_state.path] if backend == "embedded" else [])
    write(shared_dir, "job.sub", GATED)
    dag = write(shared_dir, "g.dag", "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\n")
    cluster = submit(dag, args)

    def table() -> list[tuple[str, str]]:
        return dag_tree(crabtui(*args, "q", "-nobatch", "-dag", cwd=shared_dir).stdout)

    wait_for(lambda: table() == [("<dagman>", "R"), (" |-A", "R")], table)
    node = HTCondorSchedd().query('DAGNodeName == "A"', ["ClusterId"]) if backend == "htcondor" else \
        LocalScheddClient(embedded_state).query('DAGNodeName == "A"', ["ClusterId"])
    a = str(node[0]["ClusterId"])
    held = crabtui(*args, "hold", a, cwd=shared_dir)
    assert held.returncode == 0 and held.stdout.strip() == f"All jobs in cluster {a} have been held"
    wait_for(lambda: table() == [("<dagman>", "R"), (" |-A", "H")], table)
    assert crabtui(*args, "release", a, cwd=shared_dir).returncode == 0
    wait_for(lambda: table() in ([("<dagman>", "R"), (" |-A", "I")], [("<dagman>", "R"), (" |-A", "R")]), table)
    removed = crabtui(*args, "rm", str(cluster), cwd=shared_dir)
    assert removed.stdout.strip() == f"All jobs in cluster {cluster} have been marked for removal"
    assert dagman_exit(dag) == -1, "a removed DAGMan job's log ends with its abort"
    out = (shared_dir / "g.dag.dagman.out").read_text().splitlines()
    assert "Received SIGUSR1" in "\n".join(out) and out[-1].endswith("EXITING WITH STATUS 2"), out[-15:]
    wait_for(lambda: table() == [], table)
    assert (shared_dir / "g.dag.rescue001").exists()


def wait_for(predicate, describe, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; last seen: {describe()}")
        time.sleep(0.3)


def test_user_logs_of_both_backends_read_alike(htcondor_pool, shared_dir, embedded_state):
    """The same held-then-released job on both: the same events in the same order, with the
    fields HTCondor gives them, read by htcondor2.JobEventLog."""
    logs = {}
    for backend, directory in (("htcondor", shared_dir / "real"), ("embedded", shared_dir / "embedded")):
        directory.mkdir()
        os.chmod(directory, 0o777)
        write(directory, "job.sub", HELD_JOB)
        client = HTCondorSchedd() if backend == "htcondor" else LocalScheddClient(embedded_state)
        cluster = client.submit(HELD_JOB, cwd=str(directory)).cluster
        client.act(JobAction.Release, f"{cluster}.0")
        terminated(directory / "job.log")
        logs[backend] = list(htcondor2.JobEventLog(str(directory / "job.log")).events(stop_after=0))
    T = htcondor2.JobEventType
    real = [e for e in logs["htcondor"] if e.type != T.IMAGE_SIZE]  # see the README: we log it later
    mine = [e for e in logs["embedded"] if e.type != T.IMAGE_SIZE]
    assert [e.type for e in mine] == [e.type for e in real] == [T.SUBMIT, T.JOB_RELEASED, T.EXECUTE, T.JOB_TERMINATED]
    for ours, theirs in zip(mine, real):
        missing = set(theirs.keys()) - set(ours.keys()) - {"DiskUsage", "ExecuteProps"}
        assert not missing, f"{ours.type.name} lacks {sorted(missing)}"
    assert mine[-1]["ReturnValue"] == real[-1]["ReturnValue"] == 7
    assert mine[-1]["TerminatedNormally"] is real[-1]["TerminatedNormally"] is True
