"""A DAG that aborts with a RETURN value condor_submit_dag's on_exit_remove does not accept (outside
0-2) keeps its DAGMan job in the queue, and the schedd starts it again: on the 23.9.6 test pool at
its next queue scan, 5 s (SCHEDD_MIN_INTERVAL) after the last, 9 restarts in 45 s.  The embedded
schedd paces it the same way instead of restarting it at once, a rescue DAG each time."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import htcondor2
from htcondor2 import JobEventType as ET

from dagman_waits import wait_until
from engine.dag.rescue import rescue_files
from engine.schedd.local.schedd import DEFAULT_SCHEDD_MIN_INTERVAL
from installed import CRABTUI

# The manual's form: the node's job exits 3, and DAGMan aborts the DAG, exiting 4.
ABORT_DAG = """\
JOB C job.sub
VARS C code="3"
ABORT-DAG-ON C 3 RETURN 4
"""


def crabtui(schedd, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CRABTUI, "--state-dir", schedd.state.path, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_a_dag_aborting_with_return_4_restarts_at_the_schedds_pace_not_at_once(dag_dir, schedd):
    (dag_dir / "d.dag").write_text(ABORT_DAG)
    result = crabtui(schedd, "dag", "submit", "d.dag", cwd=dag_dir)
    assert result.returncode == 0, result.stderr
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    wait_until(lambda: (dag_dir / "d.dag.dagman.log").exists(), "the DAGMan job's log")
    log = htcondor2.JobEventLog(str(dag_dir / "d.dag.dagman.log"))
    starts, requeues = [], []
    deadline = time.monotonic() + 6 * DEFAULT_SCHEDD_MIN_INTERVAL
    while len(starts) < 3 and time.monotonic() < deadline:
        for event in log.events(stop_after=1):
            if event.cluster != cluster:
                continue
            if event.type == ET.EXECUTE:
                starts.append(time.monotonic())
            elif event.type == ET.JOB_EVICTED:
                requeues.append(event)
            if len(starts) == 3:
                break
    assert len(starts) == 3, f"DAGMan started {len(starts)} times; expected a third start within the window"
    assert all(e["TerminatedAndRequeued"] and e["ReturnValue"] == 4 for e in requeues), \
        "each run ended with the DAG's RETURN value and stayed queued"
    assert starts[2] - starts[0] >= 2 * (DEFAULT_SCHEDD_MIN_INTERVAL - 1), \
        "each restart waited for the schedd's next pass"
    rescues = len(rescue_files(str(dag_dir / "d.dag")))
    assert 2 <= rescues <= 3, f"{rescues} rescue DAGs after three runs"
    assert crabtui(schedd, "rm", str(cluster), cwd=dag_dir).returncode == 0
    wait_until(lambda: schedd.history(f"ClusterId == {cluster}", match=1), f"DAGMan job {cluster} to leave the queue")
    assert len(rescue_files(str(dag_dir / "d.dag"))) <= 4
