"""The automatic retry budget: 10 executions of a job per submit or resubmit (seeds 000 and 003),
set by the task worker's ``numAutomJobRetries`` (CRAB's name) in ``taskworker.toml``."""

from __future__ import annotations

from pathlib import Path

import pytest

from crab_tasks import config_text, crabtui, wait_status
from engine.crab.taskworker.config import TaskWorkerConfig, TaskWorkerConfigError, load_config

JOB3_ALWAYS_FAILS = '{job = "3", attempt = "*", exitCode = 8001}'  # Other CMS Exception: recoverable
# 2000 simulated seconds a second: a failed attempt's 20 minutes and the 900 s cooloff take under a
# second each, and the runtime limit (1250 minutes) 37 s, which no attempt nears on a busy machine.
SCALE = 2000


def test_a_job_failing_recoverably_runs_ten_times_then_fails_for_good(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("budget", scale=SCALE, plan=JOB3_ALWAYS_FAILS))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "budget", tmp_path, "FAILED", timeout=180)
    three = next(j for j in status["jobs"] if j["id"] == "3")
    assert three["state"] == "failed"
    assert [a["exit_code"] for a in three["attempts"]] == [8001] * 10
    assert [a["action"] for a in three["attempts"]] == ["retry"] * 9 + ["fatal"]
    assert three["attempts"][-1]["reason"] == (
        "Other CMS Exception. This is job retry number 10. The maximum allowed number of retries is 10. "
        "The retry handler indicated this was a recoverable error, but the maximum number of retries was already "
        "hit. DAGMan will not retry.")
    dag = (Path(status["task_dir"]) / "RunJobs.dag").read_text()
    assert "RETRY Job3 10 UNLESS-EXIT 2" in dag
    assert "My.CRAB_NumAutomJobRetries = 10" in (Path(status["task_dir"]) / "Job.submit").read_text()


def test_the_budget_is_the_task_workers_num_autom_job_retries(tmp_path, state):
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomJobRetries = 2\n")
    (tmp_path / "crab.toml").write_text(config_text("two", scale=SCALE, plan=JOB3_ALWAYS_FAILS))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "two", tmp_path, "FAILED", timeout=120)
    three = next(j for j in status["jobs"] if j["id"] == "3")
    assert [a["action"] for a in three["attempts"]] == ["retry", "fatal"]
    assert "RETRY Job3 2 UNLESS-EXIT 2" in (Path(status["task_dir"]) / "RunJobs.dag").read_text()


def test_the_configuration_file_is_read_with_crabs_names(tmp_path):
    assert load_config(str(tmp_path / "none.toml")) == TaskWorkerConfig()
    assert TaskWorkerConfig().num_autom_job_retries == 10
    path = tmp_path / "taskworker.toml"
    path.write_text("[TaskWorker]\nnumAutomJobRetries = 4\nnumAutomaticProbes = 2\n")
    config = load_config(str(path))
    assert (config.num_autom_job_retries, config.automatic.num_probes) == (4, 2)
    for text, message in (("numAutomJobRetries = 0", "TaskWorker.numAutomJobRetries: must be a whole number >= 1"),
                          ("numAutomJobRetries = 2.5", "TaskWorker.numAutomJobRetries: must be a whole number"),
                          ("numAutomJobRetrys = 3", 'did you mean "numAutomJobRetries"?'),
                          ("numAutomaticProbes = 0", "TaskWorker.numAutomaticProbes: must be > 0")):
        path.write_text(f"[TaskWorker]\n{text}\n")
        with pytest.raises(TaskWorkerConfigError) as e:
            load_config(str(path))
        assert str(e.value).startswith(str(path)) and message in str(e.value)
