"""The same DAGs on the embedded engine and on real HTCondor 23.9.6: their metrics, rescue DAGs,
jobstate logs and node status files must agree once ids and times are set aside.  Differences
we keep on purpose are in the README's table and are normalised here, each with its reason."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from crosscheck import crabtui, dagman_exit, jobstate, metrics, node_status, rescue, submit
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir

pytestmark = pytest.mark.htcondor

JOB = ("executable = /bin/sh\n"
       "arguments = \"-c 'echo $(JOB) >> runs.txt; exit $(code)'\"\n"
       "queue\n")
# A node job that runs until the test creates go.<node> (the "remove" DAG's B never gets it).
GATE = ("executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.2; done'\"\n"
        "queue\n")
FILES = {"job.sub": JOB, "gate.sub": GATE, "ok.sh": "exit 0\n", "fail.sh": "exit 1\n",
         "echo.sh": 'echo "$@" >> scripts.txt\nexit 0\n', "halt.sh": "touch $1.halt\n"}
STATUS = "JOBSTATE_LOG js.log\nNODE_STATUS_FILE ns.txt\n"

DAGS = {
    "retry": 'JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\nVARS B code="1"\nRETRY B 2\n'
             "SCRIPT PRE A /bin/sh echo.sh pre $JOB $RETRY\nSCRIPT POST A /bin/sh echo.sh post $JOB $RETURN\n"
             "PARENT A CHILD B\n",
    "post_masks": 'JOB A job.sub\nVARS A code="3"\nSCRIPT POST A /bin/sh ok.sh\nJOB B job.sub\nVARS B code="0"\n'
                  "PARENT A CHILD B\n",
    "pre_fails": 'JOB A job.sub\nVARS A code="0"\nSCRIPT PRE A /bin/sh fail.sh\nJOB B job.sub\nVARS B code="0"\n'
                 "PARENT A CHILD B\n",
    "abort": 'JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\nVARS B code="3"\n'
             "ABORT-DAG-ON B 3 RETURN 2\nPARENT A CHILD B\nPARENT B CHILD C\n",
    "final": 'JOB A job.sub\nVARS A code="2"\nFINAL F job.sub\nVARS F code="0"\n'
             "SCRIPT PRE F /bin/sh echo.sh final $DAG_STATUS $FAILED_COUNT\n",
    "noop_preskip": 'JOB A job.sub NOOP\nJOB B job.sub\nVARS B code="1"\nSCRIPT PRE B /bin/sh fail.sh\n'
                    "PRE_SKIP B 1\nJOB C job.sub\nVARS C code=\"0\"\nPARENT A CHILD B\nPARENT B CHILD C\n",
    "halt": 'JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\nSCRIPT POST A /bin/sh halt.sh halt.dag\n'
            "PARENT A CHILD B\nFINAL F job.sub\n",
    "splice": 'SPLICE S inner.dag\nJOB A job.sub\nVARS A code="0"\nPARENT A CHILD S\n',
    "subdag": 'JOB A job.sub\nVARS A code="0"\nSUBDAG EXTERNAL S inner.dag\nPARENT A CHILD S\n',
    # condor_rm of the DAGMan job while B runs: B is removed, FINAL runs, a rescue DAG is written.
    "remove": 'JOB A job.sub\nVARS ALL_NODES code="0"\nJOB B gate.sub\nJOB C job.sub\nFINAL F job.sub\n'
              "SCRIPT PRE F /bin/sh echo.sh final $DAG_STATUS $FAILED_COUNT\nPARENT A CHILD B\nPARENT B CHILD C\n",
}
REMOVED = "remove"  # removed with `crabtui rm` once its node B runs
INNER = 'JOB X job.sub\nJOB Y job.sub\nVARS X code="0"\nVARS Y code="1"\nPARENT X CHILD Y\n'


def lay_out(root: Path, name: str) -> Path:
    directory = root / name
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)  # jobs on the real pool run as an unprivileged user
    for file, text in {**FILES, "inner.dag": INNER, f"{name}.dag": DAGS[name] + STATUS}.items():
        (directory / file).write_text(text)
        os.chmod(directory / file, 0o666)
    return directory / f"{name}.dag"


@pytest.fixture(scope="module")
def both_runs(htcondor_pool):
    """Every DAG submitted to both backends at once, then waited for: {name: (real, embedded)}."""
    root = Path(tempfile.mkdtemp(prefix="crosscheck-", dir="/tmp"))
    os.chmod(root, 0o777)
    state = StateDir(tempfile.mkdtemp(prefix="xc-", dir="/tmp"))
    embedded_env = {"CRABTUI_STATE_DIR": state.path}
    runs = {}
    try:
        for side in ("real", "embedded"):
            (root / side).mkdir()
            os.chmod(root / side, 0o777)
        clusters = {}
        for name in DAGS:
            real, mine = lay_out(root / "real", name), lay_out(root / "embedded", name)
            clusters[real] = submit(real, ["--backend", "htcondor"])
            clusters[mine] = submit(mine, ["--backend", "embedded"], env=embedded_env)
            runs[name] = (real, mine)
        for dag, backend in zip(runs[REMOVED], ("htcondor", "embedded")):
            wait_for_line(dag.with_name("js.log"), "B EXECUTE")  # DAGMan has seen B run
            removed = crabtui("--backend", backend, "rm", str(clusters[dag]), cwd=dag.parent, env=embedded_env)
            assert removed.returncode == 0, removed.stderr
        exits = {name: (dagman_exit(real), dagman_exit(mine)) for name, (real, mine) in runs.items()}
        yield {name: (real, mine, exits[name]) for name, (real, mine) in runs.items()}
    finally:
        LocalScheddClient(state).shutdown()
        shutil.rmtree(state.path, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def wait_for_line(path: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and text in path.read_text()):
        assert time.monotonic() < deadline, f"{path}: no {text!r} within {timeout} s"
        time.sleep(0.2)


@pytest.mark.parametrize("name", list(DAGS))
def test_exit_code_and_metrics_agree(both_runs, name):
    real, mine, (real_exit, my_exit) = both_runs[name]
    assert my_exit == real_exit
    assert metrics(mine) == metrics(real)  # read_metrics fails on a missing file


@pytest.mark.parametrize("name", list(DAGS))
def test_rescue_dags_agree(both_runs, name):
    real, mine, _ = both_runs[name]
    assert rescue(mine) == rescue(real)


@pytest.mark.parametrize("name", list(DAGS))
def test_jobstate_logs_agree(both_runs, name):
    real, mine, _ = both_runs[name]
    assert real.with_name("js.log").exists() and mine.with_name("js.log").exists()
    assert jobstate(mine.with_name("js.log")) == jobstate(real.with_name("js.log"))


@pytest.mark.parametrize("name", list(DAGS))
def test_node_status_files_agree(both_runs, name):
    real, mine, _ = both_runs[name]
    assert node_status(mine.with_name("ns.txt")) == node_status(real.with_name("ns.txt"))  # both must exist


@pytest.mark.parametrize("name", list(DAGS))
def test_what_ran_agrees(both_runs, name):
    real, mine, _ = both_runs[name]
    for output in ("runs.txt", "scripts.txt"):
        theirs, ours = real.with_name(output), mine.with_name(output)
        assert (sorted(ours.read_text().splitlines()) if ours.exists() else None) == \
            (sorted(theirs.read_text().splitlines()) if theirs.exists() else None)


def test_a_removed_dag_ran_its_final_node_and_wrote_a_rescue_dag(both_runs):
    real, mine, exits = both_runs[REMOVED]
    assert exits == (-1, -1), "the DAGMan job's own log ends with its abort"
    for dag in (real, mine):
        assert [line for line in rescue(dag) if line.startswith("DONE")] == ["DONE A"]
        assert dag.with_name("scripts.txt").read_text().split()[0] == "final"
