"""``--backend htcondor``: the Schedd API and the CLI on a real HTCondor 23.9.6 pool, and the
same commands behaving the same on the embedded engine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tempfile
from pathlib import Path

import htcondor2
import pytest

from crosscheck import GATED, crabtui, dagman_exit, submit
from engine.schedd.api import JobAction, JobStatus, ScheddError
from engine.schedd.htcondor import HTCondorSchedd
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir

pytestmark = pytest.mark.htcondor

HELD_JOB = ("executable = /bin/sh\narguments = \"-c 'echo hi; exit 7'\"\noutput = out.txt\n"
            "log = job.log\nhold = true\nqueue\n")


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
    nobody = {"_CONDOR_SEC_CLAIMTOBE_USER": "nobody"}
    refused = crabtui("--backend", "htcondor", "rm", str(cluster), cwd=shared_dir, env=nobody)
    assert (refused.returncode, refused.stderr) == (1, f"\nCouldn't find/remove all jobs in cluster {cluster}\n")
    refused = crabtui("--backend", "htcondor", "rm", f"{cluster}.0", cwd=shared_dir, env=nobody)
    assert (refused.returncode, refused.stderr) == (1, f"\nPermission denied to remove job {cluster}.0\n")
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
        if re.match(r" *\d+\.\d+ ", line):
            name = re.match(r" *\|-\S+|\S+", line[name_at:]).group()
            rows.append((name if "|-" in name else "<dagman>", line[status_at:status_at + 2].strip()))
    return rows


@pytest.mark.parametrize("backend", ["htcondor", "embedded"])
def test_q_dag_hold_release_and_rm_behave_alike(htcondor_pool, shared_dir, embedded_state, backend):
    args = ["--backend", backend] + (["--state-dir", embedded_state.path] if backend == "embedded" else [])
    write(shared_dir, "job.sub", GATED)
    dag = write(shared_dir, "g.dag", "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\n")
    cluster = submit(dag, args)

    def table() -> list[tuple[str, str]]:  # this DAG's jobs only: the pool may run others
        return dag_tree(crabtui(*args, "q", "-nobatch", "-dag", "-constraint",
                                f"ClusterId == {cluster} || DAGManJobId == {cluster}", cwd=shared_dir).stdout)

    try:
        wait_for(lambda: table() == [("<dagman>", "R"), (" |-A", "R")], table)
        mine = f'DAGNodeName == "A" && DAGManJobId == {cluster}'  # the pool runs other DAGs' nodes named A too
        node = HTCondorSchedd().query(mine, ["ClusterId"]) if backend == "htcondor" else \
            LocalScheddClient(embedded_state).query(mine, ["ClusterId"])
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
    finally:  # a failure must not leave a held node job on the shared pool for the next run to pick up
        crabtui(*args, "rm", str(cluster), cwd=shared_dir)


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


DOLLAR_DOLLAR = {  # old-syntax arguments land in Args, new-syntax ones in Arguments
    "old": "executable = /bin/echo\narguments = $$(OpSys) $$(NoSuch:dflt) $$([toLower(OpSys)])\n"
           "output = out.txt\nlog = job.log\nqueue\n",
    "new": 'executable = /bin/echo\narguments = "$$(OpSys) $$(NoSuch:dflt) $$([toLower(OpSys)])"\n'
           "output = out.txt\nlog = job.log\nqueue\n",
    "held": "executable = /bin/echo\narguments = in $$(pwd)\nlog = job.log\nqueue\n",
}


@pytest.mark.parametrize("case", sorted(DOLLAR_DOLLAR))
def test_dollar_dollar_expands_and_holds_alike(htcondor_pool, shared_dir, embedded_state, case):
    """A submit file's $$() on both: the same output and MATCH_ attributes once the job has run,
    or the same hold for a reference no slot can fill."""
    seen = {}
    attrs = ["JobStatus", "HoldReason", "HoldReasonCode", "HoldReasonSubCode", "MATCH_OpSys", "MATCH_NoSuch",
             "MATCH_EXP_Args", "MATCH_EXP_Arguments", "Args", "Arguments"]
    for backend in ("htcondor", "embedded"):
        directory = shared_dir / backend
        directory.mkdir()
        os.chmod(directory, 0o777)
        client = HTCondorSchedd() if backend == "htcondor" else LocalScheddClient(embedded_state)
        cluster = client.submit(DOLLAR_DOLLAR[case], cwd=str(directory)).cluster
        where = f"ClusterId == {cluster}"
        if case == "held":
            wait_for(lambda: [a for a in client.query(where, ["JobStatus"]) if a["JobStatus"] == JobStatus.HELD],
                     lambda: client.query(where, attrs))
            ad = client.query(where, attrs)[0]
            client.act(JobAction.Remove, where)
        else:
            terminated(directory / "job.log")
            wait_for(lambda: client.history(where, ["ClusterId"], match=1), lambda: client.query(where, attrs))
            ad = client.history(where, attrs, match=1)[0]
            assert (directory / "out.txt").read_text() == "LINUX dflt linux\n", backend
        seen[backend] = {a: ad.get(a) for a in attrs if a != "JobStatus"}
    assert seen["embedded"] == seen["htcondor"]


def one_error_line(result) -> str:
    """A failed command's stderr: exactly one ``ERROR:`` line, no traceback."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), result.stderr
    return lines[0]


def test_a_refused_authentication_is_one_line(htcondor_pool, shared_dir):
    write(shared_dir, "job.sub", HELD_JOB)
    cluster = HTCondorSchedd().submit(HELD_JOB, cwd=str(shared_dir)).cluster
    # The client offers only SSL, for which it has no credentials: the schedd refuses to authenticate it.
    refused = {"_CONDOR_SEC_CLIENT_AUTHENTICATION_METHODS": "SSL"}
    line = one_error_line(crabtui("--backend", "htcondor", "release", str(cluster), cwd=shared_dir, env=refused))
    assert line.startswith(f"ERROR: release of ClusterId == {cluster} failed: ")
    assert "refused to authenticate us for WRITE: we offered SSL (SEC_CLIENT_AUTHENTICATION_METHODS)" in line
    line = one_error_line(crabtui("--backend", "htcondor", "job", "submit", "job.sub", cwd=shared_dir, env=refused))
    assert "AUTHENTICATE" in line and "we offered SSL" in line
    assert HTCondorSchedd().query_values(f"ClusterId == {cluster}", ["JobStatus"]) == [{"JobStatus": JobStatus.HELD}]
    assert crabtui("--backend", "htcondor", "rm", str(cluster), cwd=shared_dir).returncode == 0


def test_a_missing_configuration_or_schedd_is_one_line(htcondor_pool, shared_dir):
    missing = shared_dir / "nowhere" / "condor_config"
    line = one_error_line(crabtui("--backend", "htcondor", "q", cwd=shared_dir, env={"CONDOR_CONFIG": str(missing)}))
    assert line.startswith(f"ERROR: CONDOR_CONFIG={missing} does not exist: point CONDOR_CONFIG to your pool's")
    write(shared_dir, "job.sub", HELD_JOB)
    write(shared_dir, "a.dag", "JOB A job.sub\n")
    checked = crabtui("dag", "check", "a.dag", cwd=shared_dir, env={"CONDOR_CONFIG": str(missing)})
    assert checked.returncode == 0 and checked.stderr == "", "the embedded engine needs no HTCondor configuration"
    line = one_error_line(crabtui("--backend", "htcondor", "q", cwd=shared_dir, env={"_CONDOR_SCHEDD_NAME": "nosuch"}))
    assert "knows no schedd named 'nosuch' (SCHEDD_NAME)" in line


def test_editing_another_users_job_says_whose_it_is(htcondor_pool, shared_dir):
    cluster = HTCondorSchedd().submit(HELD_JOB, cwd=str(shared_dir)).cluster
    # Another process, claiming to be someone else (a process reuses its security session with the schedd).
    script = ("import sys\nfrom engine.schedd.api import ScheddError\nfrom engine.schedd.htcondor import HTCondorSchedd\n"
              "for job in sys.argv[1:]:\n    try:\n        print(HTCondorSchedd().edit(job, 'CrabtuiNote', '\"mine\"'))\n"
              "    except ScheddError as e:\n        print(e)\n")
    result = subprocess.run([sys.executable, "-c", script, str(cluster), str(cluster + 100000)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "_CONDOR_SEC_CLAIMTOBE_USER": "nobody"})
    refused, absent = result.stdout.splitlines()
    assert refused.startswith(f"editing {cluster} failed: ")
    assert refused.endswith("permission denied (another user's job: owned by crab, and we are nobody)")
    assert absent == "0", "a job not in the queue is no edit, as the embedded schedd counts it (qedit then says so)"
    assert "CrabtuiNote" not in HTCondorSchedd().query(f"ClusterId == {cluster}", ["CrabtuiNote"])[0]
    HTCondorSchedd().act(JobAction.Remove, str(cluster))


def test_history_through_the_cli(htcondor_pool, shared_dir):
    write(shared_dir, "job.sub", HELD_JOB.replace("hold = true\n", ""))
    submitted = crabtui("--backend", "htcondor", "job", "submit", "job.sub", cwd=shared_dir)
    cluster = int(re.search(r"submitted to cluster (\d+)\.", submitted.stdout).group(1))
    terminated(shared_dir / "job.log")
    wait_for(lambda: crabtui("history", str(cluster), "-af", "ExitCode", "Owner", "--backend", "htcondor",
                             cwd=shared_dir).stdout.split() == ["7", "crab"],
             lambda: crabtui("--backend", "htcondor", "history", str(cluster), cwd=shared_dir).stdout)
    table = crabtui("--backend", "htcondor", "history", "-match", "1", "-constraint", f"ClusterId == {cluster}",
                    cwd=shared_dir).stdout.splitlines()
    assert len(table) == 2 and table[1].startswith(f"{cluster}.0 ") and " C " in table[1], table


GATED_RUNS = ("executable = /bin/sh\n"
              "arguments = \"-c 'echo $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.2; done'\"\n"
              "queue\n")


def terminations(dag: Path) -> list[int]:
    """The return values of the DAGMan job's JOB_TERMINATED events so far."""
    return [int(e.get("ReturnValue", -1)) for e in htcondor2.JobEventLog(f"{dag}.dagman.log").events(stop_after=0)
            if e.type == htcondor2.JobEventType.JOB_TERMINATED]


@pytest.mark.parametrize("backend", ["htcondor", "embedded"])
def test_dag_submit_options_dagman_hold_halt_rescue_and_force(htcondor_pool, shared_dir, embedded_state, backend):
    """condor_submit_dag's options crabtui takes, on the pool's condor_dagman and on ours alike: the
    limits and -config's knobs reach DAGMan's ad, -maxjobs holds; the DAGMan job is held and released
    (recovery); `dag halt`/`unhalt` by job id; -dorescuefrom runs the rest; -force runs it all."""
    args = ["--backend", backend] + (["--state-dir", embedded_state.path] if backend == "embedded" else [])
    client = HTCondorSchedd() if backend == "htcondor" else LocalScheddClient(embedded_state)
    write(shared_dir, "gated.sub", GATED_RUNS)
    write(shared_dir, "ok.sh", "exit 0\n")  # a PRE script: see the test below
    write(shared_dir, "dagman.config", "DAGMAN_MAX_JOBS_IDLE = 4\n")
    dag = write(shared_dir, "g.dag", "JOB A gated.sub\nJOB B gated.sub\nJOB C gated.sub\nSCRIPT POST A /bin/sh ok.sh\n")

    def dag_submit(*options: str) -> int:
        result = crabtui(*args, "dag", "submit", *options, "g.dag", cwd=shared_dir)
        assert result.returncode == 0, result.stderr
        return int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))

    cluster = dag_submit("-maxjobs", "1", "-maxpre", "1", "-maxpost", "1", "-config", "dagman.config")

    def nodes() -> list[tuple[str, int]]:
        return sorted((n["DAGNodeName"], n["JobStatus"])
                      for n in client.query_values(f"DAGManJobId == {cluster}", ["DAGNodeName", "JobStatus"]))

    def dagman() -> dict:
        found = client.query_values(f"ClusterId == {cluster}", ["JobStatus", "DAGMan_MaxJobs", "DAGMan_MaxIdle",
                                                                  "DAGMan_MaxPreScripts", "DAGMan_MaxPostScripts"])
        return found[0] if found else {}

    # -MaxIdle is condor_submit_dag's own 1000, which the -config file's DAGMAN_MAX_JOBS_IDLE does not change
    limits = {"DAGMan_MaxJobs": 1, "DAGMan_MaxIdle": 1000, "DAGMan_MaxPreScripts": 1, "DAGMan_MaxPostScripts": 1}
    wait_for(lambda: len(nodes()) == 1 and nodes()[0][1] == JobStatus.RUNNING and limits.items() <= dagman().items(),
             lambda: (nodes(), dagman()))
    first = nodes()[0][0]
    time.sleep(3)
    assert len(nodes()) == 1, "-maxjobs 1: one node job at a time"
    out = Path(f"{dag}.dagman.out")

    assert crabtui(*args, "hold", str(cluster), cwd=shared_dir).returncode == 0
    wait_for(lambda: dagman().get("JobStatus") == JobStatus.HELD and nodes() == [(first, JobStatus.RUNNING)],
             lambda: (dagman(), nodes()))
    recoveries = out.read_text().count("Running in RECOVERY mode")
    assert crabtui(*args, "release", str(cluster), cwd=shared_dir).returncode == 0
    wait_for(lambda: dagman().get("JobStatus") == JobStatus.RUNNING
             and out.read_text().count("Running in RECOVERY mode") == recoveries + 1, dagman)

    halt_file = Path(f"{dag}.halt")
    assert crabtui(*args, "dag", "halt", str(cluster), cwd=shared_dir).returncode == 0 and halt_file.exists()
    assert crabtui(*args, "dag", "unhalt", str(cluster), cwd=shared_dir).returncode == 0 and not halt_file.exists()
    assert crabtui(*args, "dag", "halt", str(cluster), cwd=shared_dir).returncode == 0
    write(shared_dir, f"go.{first}", "")
    wait_for(lambda: terminations(dag) == [1], lambda: terminations(dag))  # halted and drained: a rescue DAG
    assert [line for line in Path(f"{dag}.rescue001").read_text().splitlines() if line.startswith("DONE")] == \
        [f"DONE {first}"]
    assert nodes() == [] and sorted((shared_dir / "runs.txt").read_text().split()) == [first]

    for node in "ABC":
        write(shared_dir, f"go.{node}", "")
    cluster = dag_submit("-dorescuefrom", "1")
    wait_for(lambda: terminations(dag) == [1, 0], lambda: terminations(dag))
    assert sorted((shared_dir / "runs.txt").read_text().split()) == ["A", "B", "C"], "the rescue ran the others"

    cluster = dag_submit("-force")
    wait_for(lambda: terminations(dag) == [0], lambda: terminations(dag))  # -force started a new DAGMan log
    assert sorted((shared_dir / "runs.txt").read_text().split()) == ["A", "A", "B", "B", "C", "C"]
    assert Path(f"{dag}.rescue001.old").exists() and not Path(f"{dag}.rescue001").exists()
    line = one_error_line(crabtui(*args, "dag", "submit", "g.dag", cwd=shared_dir))
    assert "already exists" in line and "-force" in line


def test_status_of_a_dag_the_pools_dagman_refused_says_so(htcondor_pool, shared_dir):
    """DAGMan 23.9.6 refuses an inline description with a queue line (a documented difference:
    crabtui reads it as 25.x does); `dag status` must not call that run a success of a DAG with
    one node ready, as its dagman.out gives no node and only "Failed to parse"."""
    dag = write(shared_dir, "inline.dag", "JOB A {\n  executable = /bin/true\n  queue\n}\n")
    result = crabtui("--backend", "htcondor", "dag", "submit", "inline.dag", cwd=shared_dir)
    assert result.returncode == 0, result.stderr
    cluster = re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1)
    assert dagman_exit(dag) == 1
    status = crabtui("--backend", "htcondor", "dag", "status", cluster, cwd=shared_dir)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0].startswith(f"DAG {cluster} [inline.dag] completed ")
    assert lines[1:] == ["DAGMan exited with status 1 before running any node: DAGMan failed to parse inline.dag"]


@pytest.mark.parametrize("backend", ["htcondor", "embedded"])
def test_maxjobs_also_defers_a_node_whose_pre_script_is_done(htcondor_pool, shared_dir, embedded_state, backend):
    args = ["--backend", backend] + (["--state-dir", embedded_state.path] if backend == "embedded" else [])
    client = HTCondorSchedd() if backend == "htcondor" else LocalScheddClient(embedded_state)
    write(shared_dir, "gated.sub", GATED_RUNS)
    write(shared_dir, "ok.sh", "exit 0\n")
    dag = write(shared_dir, "p.dag", "JOB A gated.sub\nJOB B gated.sub\nSCRIPT PRE A /bin/sh ok.sh\n")
    result = crabtui(*args, "dag", "submit", "-maxjobs", "1", "-maxidle", "3", "p.dag", cwd=shared_dir)
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))

    def queued() -> list[str]:
        return sorted(n["DAGNodeName"] for n in client.query_values(f"DAGManJobId == {cluster}", ["DAGNodeName"]))

    out = Path(f"{dag}.dagman.out")
    seen = set()

    def pre_done() -> bool:
        seen.add(len(queued()))
        return out.exists() and "PRE Script of node A completed successfully." in out.read_text()

    wait_for(pre_done, queued)
    assert client.query_values(f"ClusterId == {cluster}", ["DAGMan_MaxIdle"]) == [{"DAGMan_MaxIdle": 3}]
    deadline = time.monotonic() + 4  # DAGMan's next cycles, with A ready to submit
    while time.monotonic() < deadline:
        seen.add(len(queued()))
        time.sleep(0.3)
    for node in "AB":
        write(shared_dir, f"go.{node}", "")
    assert terminations_within(dag) == [0]
    assert seen <= {0, 1}, "-maxjobs 1: at most one node job in the queue"


def terminations_within(dag: Path, timeout: float = 120) -> list[int]:
    wait_for(lambda: terminations(dag), lambda: terminations(dag), timeout)
    return terminations(dag)


def test_the_testpool_script_starts_a_running_pool_again_at_once(htcondor_pool):
    script = Path(__file__).resolve().parents[2] / "scripts" / "htcondor-testpool"
    started = time.monotonic()
    again = subprocess.run([str(script), "start"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and time.monotonic() - started < 15, again.stderr
    env = subprocess.run([str(script), "env"], capture_output=True, text=True, timeout=30).stdout
    assert f"export CONDOR_CONFIG={htcondor_pool.env['CONDOR_CONFIG']}\n" in again.stdout and again.stdout == env
    assert subprocess.run([str(script), "status"], capture_output=True, timeout=30).returncode == 0


@pytest.fixture(scope="module")
def held_while_running(htcondor_pool):
    """The same story on both backends, in user logs: a job held while it runs, released, run
    again and finished.  {backend: (log path, cluster)}"""
    T = htcondor2.JobEventType
    gate = "executable = /bin/sh\narguments = \"-c 'while [ ! -e go ]; do sleep 0.2; done'\"\nlog = job.log\nqueue\n"
    root = Path(tempfile.mkdtemp(prefix="held-", dir="/tmp"))
    os.chmod(root, 0o777)
    state = StateDir(tempfile.mkdtemp(prefix="hs-", dir="/tmp"))
    stories = {}
    try:
        for backend in ("htcondor", "embedded"):
            directory = root / backend
            directory.mkdir()
            os.chmod(directory, 0o777)
            log = directory / "job.log"
            client = HTCondorSchedd() if backend == "htcondor" else LocalScheddClient(state)
            cluster = client.submit(gate, cwd=str(directory)).cluster

            def count(kind) -> int:
                return sum(1 for e in htcondor2.JobEventLog(str(log)).events(stop_after=0) if e.type == kind) \
                    if log.exists() else 0

            wait_for(lambda: count(T.EXECUTE) == 1, lambda: log.read_text() if log.exists() else "")
            client.act(JobAction.Hold, str(cluster), "checking the readers")
            wait_for(lambda: count(T.JOB_HELD) == 1, log.read_text)
            client.act(JobAction.Release, str(cluster))
            wait_for(lambda: count(T.EXECUTE) == 2, log.read_text)
            write(directory, "go", "")
            terminated(log)
            stories[backend] = (log, cluster)
        yield stories
    finally:
        LocalScheddClient(state).shutdown()
        shutil.rmtree(state.path, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def test_a_job_held_while_running_reads_alike_through_our_readers(held_while_running):
    """The project's own user-log readers (PostJob's job facts, crab status's restart count, the
    event-header scan) give the same answers on both backends' logs."""
    from engine.crab.ap.joblog import restarts
    from engine.crab.ap.postjob import job_facts
    from engine.schedd.local.userlog import holds_events

    T = htcondor2.JobEventType
    found = {}
    for backend, (log, cluster) in held_while_running.items():
        facts = job_facts(str(log), cluster)
        facts.pop("ResidentSetSize", None)  # from an IMAGE_SIZE event, which each backend logs when it measures
        found[backend] = (restarts(str(log)).count, sorted(facts), holds_events(log, {T.JOB_HELD}),
                          holds_events(log, {T.JOB_ABORTED}))
    assert found["embedded"] == found["htcondor"] == \
        (1, ["CompletionDate", "HoldReason", "JobCurrentStartDate"], True, False)
    held = {backend: [e.get("HoldReason") for e in htcondor2.JobEventLog(str(log)).events(stop_after=0)
                      if e.type == T.JOB_HELD] for backend, (log, _) in held_while_running.items()}
    assert [reason.startswith("checking the readers") for reasons in held.values() for reason in reasons] == \
        [True, True], held  # the reason given reaches both schedds


def test_a_job_held_while_running_logs_the_same_events(held_while_running):
    """JOB_EVICTED, then JOB_HELD, once the job has stopped; IMAGE_SIZE events come when each
    backend measures the job, so they are left out."""
    T = htcondor2.JobEventType
    events = {backend: [e.type for e in htcondor2.JobEventLog(str(log)).events(stop_after=0) if e.type != T.IMAGE_SIZE]
              for backend, (log, _) in held_while_running.items()}
    assert events["embedded"] == events["htcondor"]


def test_several_queue_statements_are_refused_rather_than_cut_to_the_first():
    """The embedded schedd queues every statement as condor_submit does; the bindings would
    silently queue only the first statement's jobs, so that backend says so, and queues nothing."""
    text = "executable = /bin/echo\narguments = one\nqueue\narguments = two\nqueue 2\n"
    with pytest.raises(ScheddError, match=r"^multi\.sub: several queue statements: .*'queue \.\.\. from"):
        HTCondorSchedd().submit(text, submit_file="multi.sub")


@pytest.mark.parametrize("backend", ["htcondor", "embedded"])
def test_a_removed_node_job_is_not_a_completed_job_of_its_dag(htcondor_pool, shared_dir, embedded_state, backend):
    """condor_rm of a node job: DAGMan 23.9.6's DAG_JobsCompleted counts the jobs that exited 0, so
    the removed one is among the "failed" of `dag status`, on the pool's DAGMan and on ours."""
    args = ["--backend", backend] + (["--state-dir", embedded_state.path] if backend == "embedded" else [])
    client = HTCondorSchedd() if backend == "htcondor" else LocalScheddClient(embedded_state)
    write(shared_dir, "job.sub", GATED)
    write(shared_dir, "go.B", "")
    dag = write(shared_dir, "rm.dag", "JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nPARENT A CHILD C\n")
    cluster = submit(dag, args)
    try:
        wait_for(lambda: client.history(f"DAGManJobId == {cluster}", ["ClusterId"]) and
                 client.query_values(f"DAGManJobId == {cluster}", ["JobStatus"]) == [{"JobStatus": 2}],
                 "B done and A running")
        (a,) = client.query_values(f"DAGManJobId == {cluster}", ["ClusterId"])
        assert crabtui(*args, "rm", str(a["ClusterId"]), cwd=shared_dir).returncode == 0
        assert dagman_exit(dag) == 1, "A failed, so C never ran"
        (ad,) = client.history(f"ClusterId == {cluster}", ["DAG_JobsSubmitted", "DAG_JobsCompleted"], match=1)
        assert (ad["DAG_JobsSubmitted"], ad["DAG_JobsCompleted"]) == (2, 1)
        status = crabtui(*args, "dag", "status", str(cluster), cwd=shared_dir).stdout
        assert "\t      1 has completed.\n\t      1 has failed.\n" in status, status
    finally:
        crabtui(*args, "rm", str(cluster), cwd=shared_dir)


def test_removing_a_job_that_has_just_left_the_queue_says_so_and_its_state(htcondor_pool, shared_dir):
    """``x`` on a job that ended a moment ago: the schedd's "not found" becomes the job's own end."""
    write(shared_dir, "quick.sub", "executable = /bin/true\nlog = quick.log\nqueue\n")
    schedd = HTCondorSchedd()
    job = f"{schedd.submit((shared_dir / 'quick.sub').read_text(), cwd=str(shared_dir)).cluster}.0"
    terminated(shared_dir / "quick.log")
    deadline = time.monotonic() + 120
    while schedd.query(f"ClusterId == {job.split('.')[0]}", ["JobStatus"]) and time.monotonic() < deadline:
        time.sleep(0.5)  # the schedd takes the ended job out of its queue on its next cycle
    with pytest.raises(ScheddError) as refused:
        schedd.act(JobAction.Remove, [job])
    assert str(refused.value) == f"remove of {job} did nothing: job {job} has already left the queue (completed)"


def test_a_dag_with_a_done_line_is_refused_on_the_pool_whose_dagman_crashes_on_it(htcondor_pool, shared_dir):
    """23.9.6's DAGMan stops on the manual's DONE line ("Assertion ERROR on (GetStatus() !=
    STATUS_DONE)") and its job is queued again for ever: the submit is refused, naming the line
    and the JOB line's DONE keyword, which the pool runs."""
    write(shared_dir, "t.sub", "executable = /bin/true\nqueue\n")
    dag = write(shared_dir, "done.dag", "JOB A t.sub\nJOB B t.sub\nPARENT A CHILD B\nDONE A\n")
    refused = crabtui("--backend", "htcondor", "dag", "submit", "done.dag", cwd=shared_dir)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("ERROR: done.dag:4: DONE A: HTCondor 23.9.6's DAGMan crashes on a DONE line")
    assert "(JOB A <submit file> DONE)" in refused.stderr and not Path(f"{dag}.condor.sub").exists()
    later = crabtui("--backend", "htcondor", "dag", "submit", "-no_submit", "done.dag", cwd=shared_dir)
    assert later.returncode == 1 and later.stderr == refused.stderr, "a .condor.sub queued later crashes the same"
    assert not Path(f"{dag}.condor.sub").exists()
    dag.write_text("JOB A t.sub DONE\nJOB B t.sub\nPARENT A CHILD B\n")
    result = crabtui("--backend", "htcondor", "dag", "submit", "done.dag", cwd=shared_dir)
    assert result.returncode == 0, result.stderr
    assert dagman_exit(dag) == 0


def test_import_env_gives_the_pools_dagman_the_environment_of_the_submit(htcondor_pool, shared_dir):
    """dag submit --backend htcondor -import_env: DAGMan and its scripts get the submitter's
    variables, but not this host's CONDOR_CONFIG, which the access point may not have (the test
    pool's client.config is outside its root): with it DAGMan exited at once, the DAG never run."""
    write(shared_dir, "t.sub", "executable = /bin/true\nqueue\n")
    write(shared_dir, "env.sh", 'echo "$MYVAR" > myvar.txt\n')
    dag = write(shared_dir, "env.dag", "JOB A t.sub\nSCRIPT PRE A /bin/sh env.sh\n")
    result = crabtui("--backend", "htcondor", "dag", "submit", "-import_env", "env.dag", cwd=shared_dir,
                     env={"MYVAR": "imported"})
    assert result.returncode == 0, result.stderr
    assert dagman_exit(dag) == 0, (shared_dir / "env.dag.lib.err").read_text()
    assert (shared_dir / "myvar.txt").read_text() == "imported\n"
