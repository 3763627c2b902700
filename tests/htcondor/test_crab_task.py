"""A CRAB task's DAG (DagmanCreator's files, PreJob, the job wrapper, PostJob) run unchanged by real
condor_dagman on the test pool, and by the embedded DAGMan: both end with the same attempts per job."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import engine
from crosscheck import crabtui, dagman_exit, submit
from engine.crab import fjr
from engine.crab.dagman_creator import TaskAd, write_task
from engine.crab.datasets import Catalogue
from engine.crab.grid import install_grid
from engine.crab.prejob import load_job_state
from engine.crab.splitting import split
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir

pytestmark = pytest.mark.htcondor

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
PROJECT = str(Path(engine.__file__).resolve().parent.parent)  # bound at the same path in the pool
# Job 2 fails once with a recoverable code and is retried; job 3 fails for good (unknown code).
PLAN = ({"job": "2", "attempt": 1, "exitCode": 1}, {"job": "3", "attempt": 1, "exitCode": 7})


def write(task_dir: Path, **ad) -> list[str]:
    dataset = Catalogue(None).load(MC)
    jobs = split(dataset, algorithm="FileBased", units_per_job=5, total_units=20)
    write_task(str(task_dir), TaskAd(
        name="221126_100000:crab_crab_pool", user="crab", dataset=MC, max_memory_mb=1000, max_runtime_min=60,
        num_cores=1, priority=10, site_whitelist=("T2_XX_Local",), site_blacklist=(), storage_site=None,
        time_scale=500.0, max_retries=3, failure_plan=PLAN, **ad), dataset, jobs)
    return [job.id for job in jobs]


def outcome(task_dir: Path, jobs: list[str]) -> dict[str, list[tuple]]:
    return {job: [(a.site, a.exit_code, a.action) for a in load_job_state(str(task_dir), job).attempts]
            for job in jobs}


def processed(task_dir: Path, job: str) -> set[tuple[int, int]]:
    state = load_job_state(str(task_dir), job)
    report = fjr.read_report(str(task_dir / f"jobReport.json.{job}.{state.crab_retry - 1}"))
    return {(run, lumi) for run, lumis in fjr.summarize(report).lumis.items() for lumi in lumis}


@pytest.fixture
def pool_task_dir(htcondor_pool):
    """A task directory the pool's job user owns, at the same path inside the pool."""
    path = Path(tempfile.mkdtemp(prefix="crabpool-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def grid():
    state = StateDir(tempfile.mkdtemp(prefix="crabgrid-", dir="/tmp"))
    install_grid(state)
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def test_a_task_dag_runs_the_same_on_real_dagman_and_on_the_embedded_engine(htcondor_pool, pool_task_dir,
                                                                            grid, tmp_path):
    jobs = write(pool_task_dir, python="/usr/bin/python3", python_path=PROJECT)
    subprocess.run(["chown", "-R", f"{htcondor_pool.uid}:{htcondor_pool.uid}", str(pool_task_dir)], check=True)
    dag = pool_task_dir / "RunJobs.dag"
    submit(dag, ["--backend", "htcondor"])
    assert dagman_exit(dag) == 1, (dag.parent / "RunJobs.dag.dagman.out").read_text()[-3000:]

    assert write(tmp_path) == jobs
    ran = crabtui("--state-dir", grid.path, "dag", "run", "RunJobs.dag", cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr

    real, mine = outcome(pool_task_dir, jobs), outcome(tmp_path, jobs)
    assert real == mine
    assert real["2"] == [("T2_XX_Local", 1, "retry"), ("T2_XX_Local", 0, "ok")]
    assert real["3"] == [("T2_XX_Local", 7, "fatal")]
    assert all(attempts == [("T2_XX_Local", 0, "ok")] for job, attempts in real.items() if job not in ("2", "3"))
    for job in jobs:
        if job != "3":
            assert processed(pool_task_dir, job) == processed(tmp_path, job) != set(), \
                f"job {job} processed the same lumis on both"
    assert "RunJobs.dag.rescue001" in os.listdir(pool_task_dir)
