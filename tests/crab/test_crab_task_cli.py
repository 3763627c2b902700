"""``crabtui task submit|list|status|kill`` against a real embedded schedd and its task worker."""

from __future__ import annotations

import time
from pathlib import Path

from crab_tasks import config_text, crabtui, wait_status
from engine.schedd.local.client import LocalScheddClient

JOB2_MOVES = '{job = "2", attempt = 1, exitCode = 8021}'


def test_a_task_is_submitted_runs_its_retries_and_completes(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("ttbar", plan=JOB2_MOVES))
    submitted = crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    assert "Task name: " in submitted.stdout and ":" in submitted.stdout.split("Task name: ")[1]
    status = wait_status(state, "ttbar", tmp_path, "COMPLETED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert sorted(jobs) == ["1", "2", "3", "4"] and all(j["state"] == "finished" for j in jobs.values())
    two = jobs["2"]
    assert (two["retries"], [a["exit_code"] for a in two["attempts"]]) == (1, [8021, 0])
    assert two["site_history"][0] == "T2_XX_Local" and two["site_history"][1] != "T2_XX_Local"
    assert two["attempts"][0]["action"] == "retry" and two["attempts"][0]["request_memory"] == 2000
    listing = crabtui(state, "task", "list", cwd=tmp_path).stdout
    assert "COMPLETED" in listing and status["name"] in listing
    long = crabtui(state, "task", "status", "ttbar", "--long", cwd=tmp_path).stdout
    assert "Jobs status:                    finished     \t\t100.0% (4/4)" in long

    refused = crabtui(state, "task", "kill", "ttbar", cwd=tmp_path)  # CRAB refuses to kill a finished task
    assert refused.returncode == 1
    assert refused.stderr.startswith("ERROR: You cannot kill a task if it is in the COMPLETED status")
    after = wait_status(state, "ttbar", tmp_path, "COMPLETED")
    assert (after["status"], after["scheduler_status"], after["command"]) == ("COMPLETED", "COMPLETED", "SUBMIT")


def test_kill_removes_the_tasks_jobs(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("slow", scale=0.5))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "slow", tmp_path, "SUBMITTED")
    deadline = time.monotonic() + 60
    while not LocalScheddClient(state).query(f"DAGManJobId == {status['dagman_id']}", ["ClusterId"]):
        assert time.monotonic() < deadline, "no job started"
        time.sleep(0.2)
    killed = crabtui(state, "task", "kill", "slow", cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    wait_status(state, "slow", tmp_path, "KILLED")
    deadline = time.monotonic() + 60
    while LocalScheddClient(state).query("true", ["ClusterId"]):
        assert time.monotonic() < deadline, "jobs left after the kill"
        time.sleep(0.2)
    again = crabtui(state, "task", "kill", "slow", cwd=tmp_path)
    assert again.returncode == 1 and "You cannot kill a task if it is in the KILLED status" in again.stderr


def test_bad_configuration_and_unknown_dataset_are_refused(tmp_path, state):
    (tmp_path / "bad.toml").write_text(config_text("x").replace("unitsPerJob = 5", "unitsPerJob = 0"))
    bad = crabtui(state, "task", "submit", "bad.toml", cwd=tmp_path)
    assert bad.returncode == 1 and "bad.toml" in bad.stderr and "unitsPerJob" in bad.stderr
    (tmp_path / "nodata.toml").write_text(config_text("y").replace("/TTbar_", "/TTbarr_"))
    nodata = crabtui(state, "task", "submit", "nodata.toml", cwd=tmp_path)
    assert nodata.returncode == 1 and "Data.inputDataset" in nodata.stderr and "did you mean" in nodata.stderr
    assert "TASK" in crabtui(state, "task", "list", cwd=tmp_path).stdout


def test_task_commands_on_the_htcondor_backend_say_tasks_need_the_embedded_engine(tmp_path, state):
    result = crabtui(state, "--backend", "htcondor", "task", "list", cwd=tmp_path)
    assert result.returncode == 1
    assert "CRAB tasks run on the embedded engine only" in result.stderr and "Traceback" not in result.stderr


def test_a_users_script_runs_as_the_payload_and_extra_jdl_reaches_the_jobs(tmp_path, state):
    (tmp_path / "run.sh").write_text('#!/bin/sh\necho "payload for job $1"\n')
    (tmp_path / "run.sh").chmod(0o755)
    config = (config_text("script").replace('psetName = "pset.py"', 'scriptExe = "run.sh"')
              .replace("[Debug]\n", '[Debug]\nextraJDL = ["+CrabtuiExtra = 42"]\n'))
    (tmp_path / "crab.toml").write_text(config)
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "script", tmp_path, "COMPLETED")
    ads = LocalScheddClient(state).history("CRAB_Id =!= undefined", ["CrabtuiExtra", "CRAB_Id"])
    assert len(ads) == 4 and all(ad["CrabtuiExtra"] == 42 for ad in ads)
    assert "payload for job 1" in (Path(status["task_dir"]) / "job_out.1.0.txt").read_text()
