"""A CRAB task's DAG (DagmanCreator's files, PreJob, the job wrapper, PostJob) run by the embedded
DAGMan on the simulated grid: the retry policy's paths, forced by the failure plan."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from engine.crab.ap.prejob import load_job_state
from engine.crab.grid import install_grid
from engine.crab.taskworker.dagman_creator import TaskAd, write_task
from engine.crab.taskworker.datasets import Catalogue
from engine.crab.taskworker.splitting import split
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir
from installed import CRABTUI

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"


@pytest.fixture
def grid():
    state = StateDir(tempfile.mkdtemp(prefix="crabdag-", dir="/tmp"))
    install_grid(state)
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def run_task(task_dir: Path, state: StateDir, plan: tuple[dict, ...], **ad) -> int:
    dataset = Catalogue(None).load(MC)
    jobs = split(dataset, algorithm="FileBased", units_per_job=5)
    settings = dict(name="221126_100000:alice_crab_t", user="alice", dataset=MC, max_memory_mb=2000,
                    max_runtime_min=1250, num_cores=1, priority=10, site_whitelist=(),
                    site_blacklist=("T2_US_Nebraska", "T2_DE_DESY"), storage_site="T2_XX_Local", time_scale=500.0,
                    max_retries=3, failure_plan=plan)
    settings.update(ad)
    write_task(str(task_dir), TaskAd(**settings), dataset, jobs)
    return subprocess.run([CRABTUI, "--state-dir", state.path, "dag", "run", "RunJobs.dag"],
                          cwd=task_dir, capture_output=True, timeout=300).returncode


def attempts(task_dir: Path, job: str) -> list[tuple]:
    return [(a.site, a.exit_code, a.action) for a in load_job_state(str(task_dir), job).attempts]


def test_retry_policy_paths_on_the_simulated_grid(tmp_path, grid):
    plan = ({"job": "2", "attempt": 1, "exitCode": 8021}, {"job": "3", "attempt": "*", "exitCode": 1},
            {"job": "4", "attempt": 1, "exitCode": 50115}, {"job": "1", "attempt": 1, "exitCode": 7})
    assert run_task(tmp_path, grid, plan) == 1, "job 3 and job 1 fail for good, so the DAG fails"
    first, second = attempts(tmp_path, "2")
    assert first == ("T2_XX_Local", 8021, "retry") and second[1:] == (0, "ok")
    assert second[0] != "T2_XX_Local", "8021 (FileReadError) retries at another site"
    assert attempts(tmp_path, "3") == [("T2_XX_Local", 1, "retry")] * 2 + [("T2_XX_Local", 1, "fatal")], \
        "three executions in all (RRN 1, 2, 3 with CRAB_NumAutomJobRetries 3)"
    four = load_job_state(str(tmp_path), "4")
    assert [a.action for a in four.attempts] == ["retry", "ok"]
    assert (four.attempts[0].request_memory_mb, four.attempts[1].request_memory_mb) == (2000, 2600), \
        "50115 (no FJR) retries with 1.3 times the memory"
    assert attempts(tmp_path, "1") == [("T2_XX_Local", 7, "fatal")], "an unknown exit code is fatal"
    assert "RETRY Job1 3 UNLESS-EXIT 2" in (tmp_path / "RunJobs.dag").read_text()
