"""A CRAB task's DAG (DagmanCreator's files, PreJob, the job wrapper, PostJob, and automatic
splitting's PreDAG and sub-DAGs) run unchanged by real condor_dagman on the test pool, and by the
embedded DAGMan: both end with the same attempts per job."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import htcondor2
import pytest

import engine
from crosscheck import crabtui, dagman_exit, submit
from engine.crab.ap.joblog import restarts
from engine.crab.ap.predag import task_outcome
from engine.crab.ap.prejob import load_job_state
from engine.crab.ap.stages import stage_jobs
from engine.crab.client.resubmit import make_entry, request_arguments
from engine.crab.grid import install_grid
from engine.crab.taskworker.automatic import AutomaticConfig, probe_split
from engine.crab.taskworker.dagman_creator import TaskAd, write_task
from engine.crab.taskworker.datasets import Catalogue
from engine.crab.taskworker.resubmitter import enter_epoch, retry_in_running_dags, running_dagmans
from engine.crab.taskworker.splitting import count_lumis, split
from engine.crab.wn import fjr
from engine.schedd.htcondor import HTCondorSchedd
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir

pytestmark = pytest.mark.htcondor

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
PROJECT = str(Path(engine.__file__).resolve().parent.parent)  # bound at the same path in the pool
# Job 2 fails once with a recoverable code and is retried; job 3 fails for good (unknown code).
PLAN = ({"job": "2", "attempt": 1, "exitCode": 1}, {"job": "3", "attempt": 1, "exitCode": 7})


def write(task_dir: Path, plan: tuple[dict, ...] = PLAN, **ad) -> list[str]:
    dataset = Catalogue(None).load(MC)
    jobs = split(dataset, algorithm="FileBased", units_per_job=5, total_units=20)
    settings = dict(name="221126_100000:crab_crab_pool", user="crab", dataset=MC, max_memory_mb=1000,
                    max_runtime_min=60, num_cores=1, priority=10, site_whitelist=("T2_XX_Local",), site_blacklist=(),
                    storage_site=None, time_scale=500.0, max_retries=3, failure_plan=plan)
    write_task(str(task_dir), TaskAd(**{**settings, **ad}), dataset, jobs)
    return [job.id for job in jobs]


def wait_until(what: str, predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


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


def test_held_jobs_are_released_or_removed_alike_on_real_htcondor_and_the_embedded_engine(htcondor_pool, pool_task_dir,
                                                                                          grid, tmp_path):
    """The plan's holds arrive as on_exit_hold holds (code 3, the planned code as subcode): the
    task's periodic_release lets the stage-in one (13) run again, and its periodic_remove takes the
    other (21) after 7 minutes held, so RetryJob retries it.  Both cost one restart of the attempt."""
    holds = ({"job": "1", "attempt": 1, "hold": 13}, {"job": "2", "attempt": 1, "hold": 21})
    jobs = write(pool_task_dir, plan=holds, python="/usr/bin/python3", python_path=PROJECT)
    subprocess.run(["chown", "-R", f"{htcondor_pool.uid}:{htcondor_pool.uid}", str(pool_task_dir)], check=True)
    dag = pool_task_dir / "RunJobs.dag"
    submit(dag, ["--backend", "htcondor"])
    assert dagman_exit(dag, timeout=600) == 0, (dag.parent / "RunJobs.dag.dagman.out").read_text()[-3000:]

    assert write(tmp_path, plan=holds) == jobs
    ran = crabtui("--state-dir", grid.path, "dag", "run", "RunJobs.dag", cwd=tmp_path,
                  env={"CRABTUI_PERIODIC_EXPR_INTERVAL": "0.5"})
    assert ran.returncode == 0, ran.stderr

    real, mine = outcome(pool_task_dir, jobs), outcome(tmp_path, jobs)
    assert real == mine
    assert real["1"] == [("T2_XX_Local", 0, "ok")]
    assert real["2"] == [("T2_XX_Local", None, "retry"), ("T2_XX_Local", 0, "ok")]  # removed held: no exit code, as CRAB
    for task_dir in (pool_task_dir, tmp_path):
        assert [restarts(str(task_dir / f"job_log.{job}")).count for job in jobs] == [1, 1, 0, 0], task_dir
        held = [e for e in htcondor2.JobEventLog(str(task_dir / "job_log.1")).events(stop_after=0)
                if e.type in (htcondor2.JobEventType.JOB_HELD, htcondor2.JobEventType.JOB_RELEASED)]
        assert [(e.type, e.get("HoldReasonCode"), e.get("HoldReasonSubCode")) for e in held] == [
            (htcondor2.JobEventType.JOB_HELD, 3, 13), (htcondor2.JobEventType.JOB_RELEASED, None, None)], task_dir


def test_a_resubmit_reruns_a_failed_job_of_a_running_task_at_once_on_real_dagman(htcondor_pool, pool_task_dir):
    """CRAB's live resubmit against the pool's condor_dagman, through the Schedd API and the task's
    files only: job 3 fails for good while job 1 runs (until the test writes a file); the resubmit
    holds and releases DAGMan, which recovers from its edited nodes log and runs job 3 again at once,
    while job 1 goes on running in its same job."""
    go = pool_task_dir / "go.1"
    script = pool_task_dir / "payload.sh"
    script.write_text(f'#!/bin/sh\nif [ "$1" = 1 ]; then while [ ! -e {go} ]; do sleep 0.2; done; fi\n')
    script.chmod(0o755)
    write(pool_task_dir, plan=({"job": "3", "attempt": 1, "exitCode": 7},), python="/usr/bin/python3",
          python_path=PROJECT, script_exe=str(script), max_runtime_min=2750)  # job 1 waits for minutes
    subprocess.run(["chown", "-R", f"{htcondor_pool.uid}:{htcondor_pool.uid}", str(pool_task_dir)], check=True)
    dag = pool_task_dir / "RunJobs.dag"
    dagman = submit(dag, ["--backend", "htcondor"])
    schedd = HTCondorSchedd()

    def running(job: str) -> list:
        return schedd.query(f'CRAB_Id == "{job}" && JobStatus == 2', ["ClusterId"])

    def failed_while_one_runs() -> bool:
        attempts = load_job_state(str(pool_task_dir), "3").attempts
        return bool(attempts and attempts[-1].action == "fatal" and running("1"))

    wait_until("job 3 to fail for good while job 1 runs", failed_while_one_runs, timeout=240)
    (one,) = running("1")
    task = json.loads((pool_task_dir / "task.json").read_text())
    entry, _ = make_entry(task, request_arguments(jobids="3"), epoch=1, job_ids=["3"], now=time.time())
    enter_epoch(str(pool_task_dir), entry)
    subprocess.run(["chown", "-R", f"{htcondor_pool.uid}:{htcondor_pool.uid}", str(pool_task_dir)], check=True)
    assert running_dagmans(schedd, str(pool_task_dir)) == {"RunJobs.dag": dagman}
    assert retry_in_running_dags(schedd, str(pool_task_dir), ["3"]) == [], "the DAG runs: nothing left for a rescue"

    def rerun() -> bool:
        return [a.exit_code for a in load_job_state(str(pool_task_dir), "3").attempts] == [7, 0]

    wait_until("job 3 to run again while job 1 runs", rerun, timeout=240)
    assert [ad["ClusterId"] for ad in running("1")] == [one["ClusterId"]], "job 1 runs on, in the same job"
    assert "Running in RECOVERY mode" in (pool_task_dir / "RunJobs.dag.dagman.out").read_text()
    go.write_text("")
    assert dagman_exit(dag, timeout=300) == 0, (pool_task_dir / "RunJobs.dag.dagman.out").read_text()[-3000:]
    assert [(a.rrn, a.epoch, a.exit_code) for a in load_job_state(str(pool_task_dir), "3").attempts] == [
        (1, 0, 7), (1, 1, 0)]
    assert [a.exit_code for a in load_job_state(str(pool_task_dir), "1").attempts] == [0]
    assert restarts(str(pool_task_dir / "job_log.1")).count == 0


def test_an_automatic_task_processes_every_lumi_once_on_real_dagman(htcondor_pool, pool_task_dir):
    """Automatic splitting's DAG and sub-DAGs (probes, PreDAG's processing and tail stages) run
    unchanged under real condor_dagman.  Knobs scaled down so that a small dataset makes a few
    jobs: 30-minute processing jobs, two probes."""
    dataset = Catalogue(None).load(MC)
    knobs = AutomaticConfig(min_runtime_mins=10, num_probes=2)
    probes = probe_split(dataset, knobs, seed="pool")
    plan = ({"job": "2", "attempt": "*", "exitCode": 8021},)  # a processing job fails: a tail redoes it
    write_task(str(pool_task_dir), TaskAd(
        name="221126_100000:crab_crab_auto", user="crab", dataset=MC, max_memory_mb=1000, max_runtime_min=1250,
        num_cores=1, priority=10, site_whitelist=("T2_XX_Local",), site_blacklist=(), storage_site=None,
        time_scale=1800.0, max_retries=3, failure_plan=plan, python="/usr/bin/python3", python_path=PROJECT,
        automatic={"minutes": 30, "config": knobs.crab(), "probes": [p.id for p in probes], "lumi_mask": None,
                   "catalogue": None}), dataset, probes)
    subprocess.run(["chown", "-R", f"{htcondor_pool.uid}:{htcondor_pool.uid}", str(pool_task_dir)], check=True)
    dag = pool_task_dir / "RunJobs.dag"
    submit(dag, ["--backend", "htcondor"])
    dagman_exit(dag, timeout=600)  # 1: processing job 2 failed; the task's outcome is the tails'
    assert task_outcome(str(pool_task_dir)) == "", (pool_task_dir / "RunJobs0.subdag.dagman.out").read_text()[-3000:]

    processing, tails = stage_jobs(str(pool_task_dir), 0), stage_jobs(str(pool_task_dir), 1)
    assert len(processing) >= 3 and tails
    assert outcome(pool_task_dir, ["2"]) == {"2": [("T2_XX_Local", 8021, "fatal")]}
    counts: dict[tuple[int, int], int] = {}
    for job in processing + tails:
        if outcome(pool_task_dir, [job])[job][-1][2] == "ok":
            for lumi in processed(pool_task_dir, job):
                counts[lumi] = counts.get(lumi, 0) + 1
    assert len(counts) == count_lumis(dataset) and set(counts.values()) == {1}
