"""``crabtui task submit|list|status|kill`` against a real embedded schedd and its task worker."""

from __future__ import annotations

import json
import time
from pathlib import Path

from crab_tasks import MC, config_text, crabtui, task_status, wait_status, wait_until
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


def test_a_bad_configuration_is_refused_and_an_unknown_dataset_reads_its_stand_in(tmp_path, state):
    (tmp_path / "bad.toml").write_text(config_text("x").replace("unitsPerJob = 5", "unitsPerJob = 0"))
    bad = crabtui(state, "task", "submit", "bad.toml", cwd=tmp_path)
    assert bad.returncode == 1 and "bad.toml" in bad.stderr and "unitsPerJob" in bad.stderr
    typo = MC.replace("/TTbar_", "/TTbarr_")
    (tmp_path / "nodata.toml").write_text(config_text("y", dataset=typo))
    standing_in = crabtui(state, "task", "submit", "nodata.toml", cwd=tmp_path)
    assert standing_in.returncode == 0, standing_in.stderr
    notes = [line for line in standing_in.stdout.splitlines() if line.startswith("Note: ")]
    assert len(notes) == 1 and f"Data.inputDataset {typo} is not in the dataset catalogue (did you mean '{MC}'?)" \
        in notes[0] and f"crabtui dataset add {typo} --from FILE" in notes[0]
    listed = {d["name"]: d for d in json.loads(crabtui(state, "dataset", "list", "--json", cwd=tmp_path).stdout)}
    assert listed[typo]["source"] == "stand-in"
    status = wait_until("a job of the stand-in's task to run", lambda: _running(state, tmp_path, "y"))
    assert status["status"] == "SUBMITTED"
    assert crabtui(state, "task", "kill", "y", cwd=tmp_path).returncode == 0


def _running(state, cwd, name):
    status = task_status(state, name, cwd)
    return status if any(j["state"] in ("running", "transferring", "finished") for j in status["jobs"]) else None


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
