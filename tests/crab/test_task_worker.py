"""The task worker inside the embedded daemon: submissions and kills that fail for real (SUBMITFAILED,
KILLFAILED, and what the user does next), and the status cache it keeps warm as it follows a task."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import time
from pathlib import Path

from crab_tasks import config_text, crab_config_py, crabtui, task_row, wait_until
from engine.crab.ap import joblog
from engine.crab.client import status
from engine.crab.taskworker.taskdb import HTCONDOR, NEW, SUBMIT, SUBMITTED, Task, TaskDB, task_name
from engine.crab.taskworker.worker import TaskWorker
from engine.schedd.api import JobAction
from engine.schedd.local.client import LocalScheddClient


def wait_task(state, name: str, cwd: Path, wanted: str, timeout: float = 90) -> dict:
    """The task's row once it is ``wanted``, from the task table alone (no status is computed)."""
    return wait_until(f"task {name} to be {wanted}",
                      lambda: (row := task_row(state, name, cwd))["status"] == wanted and row, timeout)


def test_a_lumi_mask_that_selects_nothing_fails_the_submit(tmp_path, state):
    (tmp_path / "mask.json").write_text(json.dumps({"2": [[1, 10]]}))  # the MC dataset has run 1 only
    (tmp_path / "crab.toml").write_text(config_text("nolumi").replace("[Site]", 'lumiMask = "mask.json"\n[Site]'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    row = wait_task(state, "nolumi", tmp_path, "SUBMITFAILED")
    assert row["dagman_id"] is None and row["message"].startswith("Data.lumiMask selects no lumi of ")
    assert row["message"].endswith(". Check Data.lumiMask.") and "runRange" not in row["message"]
    shown = crabtui(state, "task", "status", "nolumi", cwd=tmp_path)
    assert shown.returncode == 0 and "SUBMITFAILED" in shown.stdout


def test_a_run_range_outside_the_dataset_fails_the_submit_naming_run_range(tmp_path, state):
    """No Data.lumiMask at all: the message must not send the user to a parameter they never set alone.
    crab submit --wait waits for the task worker's answer and says the submission failed, and why."""
    (tmp_path / "crabConfig.py").write_text(crab_config_py("norun", scale=500, more="config.Data.runRange = '2-5'\n"))
    waited = crabtui(state, "task", "submit", "--wait", "crabConfig.py", cwd=tmp_path)
    assert waited.returncode == 1 and "\nWaiting for task to be processed\n" in waited.stdout, waited.stdout
    assert waited.stdout.endswith("\nTask status: SUBMITFAILED\n") and waited.stderr.startswith(
        "ERROR: The submission of your task has failed. Failure message: Data.runRange selects no lumi of ") \
        and waited.stderr.count("\n") == 1, waited.stdout + waited.stderr
    row = wait_task(state, "norun", tmp_path, "SUBMITFAILED")
    assert "its runs are 2-5" in row["message"] and row["message"].endswith(". Check Data.runRange.")
    assert "lumiMask" not in row["message"], row["message"]


def test_a_dag_that_cannot_be_queued_fails_the_submit_and_a_resubmit_submits_it_anew(tmp_path, state):
    # The task directory (named by the submission time) holds a directory where condor_submit_dag
    # must write DAGMan's log: made for every second the submission can fall in.
    now = time.time()
    for second in range(-5, 120):
        name = task_name("blocked", getpass.getuser(), now + second)
        os.makedirs(os.path.join(state.task_dir(name), "RunJobs.dag.dagman.log"), exist_ok=True)
    (tmp_path / "crab.toml").write_text(config_text("blocked"))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    row = wait_task(state, "blocked", tmp_path, "SUBMITFAILED")
    obstacle = Path(row["task_dir"]) / "RunJobs.dag.dagman.log"
    assert row["dagman_id"] is None and str(obstacle) in row["message"]
    assert not LocalScheddClient(state).query("JobUniverse == 7", ["ClusterId"]), "no DAGMan was queued"

    obstacle.rmdir()
    resubmitted = crabtui(state, "task", "resubmit", "blocked", cwd=tmp_path)
    assert resubmitted.returncode == 0, resubmitted.stderr
    assert wait_task(state, "blocked", tmp_path, "COMPLETED")["message"] == ""


def test_a_kill_the_schedd_refuses_is_killfailed_and_can_be_tried_again(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("stuck", scale=0.5))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    dagman_id = wait_task(state, "stuck", tmp_path, "SUBMITTED")["dagman_id"]
    schedd = LocalScheddClient(state)
    dagman_pid = wait_until("DAGMan to run", lambda: [ad.get("JobPid") for ad in schedd.query(
        f"ClusterId == {dagman_id}", ["JobPid"])][0])
    # Started up: its signal handlers are set (a removal's SIGUSR1 before that would end it at once).
    out = Path(wait_task(state, "stuck", tmp_path, "SUBMITTED")["task_dir"]) / "RunJobs.dag.dagman.out"
    wait_until("DAGMan to start up", lambda: out.exists() and "STARTING UP" in out.read_text())
    # DAGMan hangs (stopped), and someone removes its job: it stays in the queue, being removed,
    # until DAGMan handles the removal's signal; meanwhile the schedd refuses to remove it again.
    os.kill(dagman_pid, signal.SIGSTOP)
    try:
        assert schedd.act(JobAction.Remove, str(dagman_id), "removed by the operator").changed == 1
        assert crabtui(state, "task", "kill", "stuck", cwd=tmp_path).returncode == 0
        row = wait_task(state, "stuck", tmp_path, "KILLFAILED")
        assert "is already being removed" in row["message"]
    finally:
        os.kill(dagman_pid, signal.SIGCONT)
    wait_until("DAGMan to leave the queue", lambda: not schedd.query(f"ClusterId == {dagman_id}", ["JobStatus"]))
    again = crabtui(state, "task", "kill", "stuck", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert wait_task(state, "stuck", tmp_path, "KILLED")["message"] == ""
    schedd.close()


def test_the_worker_leaves_a_finished_tasks_status_cache_warm(tmp_path, state, monkeypatch):
    plan = '{job = "2", attempt = 1, exitCode = 8021}'
    (tmp_path / "crab.toml").write_text(config_text("warm", plan=plan))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    task_dir = wait_task(state, "warm", tmp_path, "COMPLETED")["task_dir"]  # no status asked meanwhile

    reads: list[str] = []
    row, count = status._row, joblog.restarts
    monkeypatch.setattr(status, "_row", lambda task_dir, job, *rest: reads.append(job) or row(task_dir, job, *rest))
    monkeypatch.setattr(joblog, "restarts", lambda path: reads.append(path) or count(path))
    monkeypatch.setattr(status, "_write_cache", lambda path, data: None)  # this reader leaves no trace

    def warm() -> bool:
        reads.clear()
        status.task_view(task_dir, None, None)
        return not reads

    wait_until("the worker to leave the status cache warm", warm, timeout=30)
    view = {j.id: j.as_json() for j in status.task_view(task_dir, None, None).jobs}
    fresh = tmp_path / "fresh"  # the same files without a cache: read from scratch
    shutil.copytree(task_dir, fresh, ignore=shutil.ignore_patterns(status.STATUS_CACHE))
    assert {j.id: j.as_json() for j in status.task_view(str(fresh), None, None).jobs} == view
    assert view["2"]["retries"] == 1 and all(j["state"] == "finished" for j in view.values())


def test_a_pool_task_in_the_state_directory_is_left_to_the_pool(tmp_path, state):
    """A state directory used with both backends, as the README's sections are typed one after the
    other: the embedded worker neither submits a pool task to the embedded schedd nor follows it by
    its pool DAGMan job id, and its commands on the embedded backend say in one line to give
    --backend htcondor instead of waiting forever for a worker that will not take them."""
    now = time.time()
    db = TaskDB(state.tasks)
    try:
        new, submitted = task_name("onpool", "alice", now), task_name("running", "alice", now)
        db.insert(Task(new, "onpool", "alice", NEW, SUBMIT, "crabConfig.py", state.task_dir(new), now, now,
                       backend=HTCONDOR))
        db.insert(Task(submitted, "running", "alice", SUBMITTED, SUBMIT, "crabConfig.py", state.task_dir(submitted),
                       now, now, dagman_id=1, backend=HTCONDOR))
        with LocalScheddClient(state) as schedd:
            TaskWorker(state, schedd).work_once()
        assert db.get(new).status == NEW, "the embedded worker took up the pool's task"
        assert db.get(submitted).updated_at == now, "the embedded worker followed the pool's DAGMan job id"
    finally:
        db.close()
    refused = crabtui(state, "task", "status", "onpool", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr == (
        f"ERROR: task {new} runs on the htcondor backend, not on the embedded one; give --backend htcondor\n")
