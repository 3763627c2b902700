"""A state directory with tasks whose files say exactly what the snapshot tests show, at a fixed
time: no job of theirs is in the queue, so nothing moves."""

from __future__ import annotations

import json
import os

from engine.crab.ap import stages
from engine.crab.ap.retry_policy import Attempt, JobState, save_state, state_path
from engine.crab.ap.sites import record_attempt, write_data_sites
from engine.crab.taskworker.taskdb import COMPLETED, SUBMITTED, SUBMIT, Task, TaskDB
from engine.crab.wn import fjr
from engine.state import StateDir

NOW = 1_700_000_000.0
OK = "Job and stageout wrappers finished successfully (exit code 0)."
READ = "FileReadError (May be a site error)."
NO_FJR = "Job did not produce a FJR; will retry."


def attempt(n: int, site: str | None, code: int | None, action: str | None, reason: str, *, start: float,
            seconds: float, memory: int = 2000) -> Attempt:
    return Attempt(crab_retry=n, dag_retry=n, rrn=n + 1, epoch=0, request_memory_mb=memory, max_runtime_min=1250,
                   site=site, exit_code=code, start_time=start, end_time=start + seconds, action=action,
                   reason=reason)


def write_job(task_dir: str, job: str, *attempts: Attempt, cooloff_until: float | None = None) -> None:
    with open(os.path.join(task_dir, f"job_input.{job}.json"), "w") as f:
        f.write("{}")
    closed = [a for a in attempts if a.action is not None]
    save_state(state_path(task_dir, job), JobState(job, dag_retry=len(closed), crab_retry=len(closed),
                                                   rrn=len(attempts), cooloff_until=cooloff_until,
                                                   attempts=tuple(attempts)))
    for a in closed:
        record_attempt(task_dir, job, a)
        runtime = (a.end_time - a.start_time) * 60
        fjr.write_report(os.path.join(task_dir, f"{fjr.FJR_NAME}.{job}.{a.crab_retry}"), fjr.build_report(
            exit_code=a.exit_code, exit_msg=a.reason, site=a.site, start=a.start_time, stop=a.end_time, inputs=[],
            cpu={"TotalJobTime": runtime, "TotalJobCPU": runtime * 0.9},
            memory={"PeakValueRss": 900 + 37 * int(job.split("-")[-1])}))


def task_dir(state: StateDir, name: str) -> str:
    path = state.task_dir(name)
    os.makedirs(path)
    with open(os.path.join(path, "task.json"), "w") as f:
        json.dump({"time_scale": 60, "num_cores": 1, "max_memory_mb": 2000, "max_runtime_min": 1250,
                   "site_whitelist": [], "site_blacklist": ["T2_DE_DESY"]}, f)
    write_data_sites(path, ["T2_XX_Local", "T2_CH_CERN", "T1_US_FNAL", "T2_US_Nebraska", "T2_DE_DESY", "T2_IT_Pisa"])
    return path


def build(state: StateDir) -> None:
    """Two tasks: ``ttbar`` completed; ``lumis`` with jobs finished, cooling off, failed, unsubmitted,
    and the long message of a resubmit."""
    db = TaskDB(state.tasks)
    done = "231114_200000:alice_crab_ttbar"
    path = task_dir(state, done)
    for job in "123":
        write_job(path, job, attempt(0, "T2_CH_CERN", 0, "ok", OK, start=NOW - 7000, seconds=60))
    db.insert(Task(done, "ttbar", "alice", COMPLETED, SUBMIT, "ttbar.toml", path, NOW - 7200, NOW - 6800))
    live = "231114_211000:alice_crab_lumis"
    path = task_dir(state, live)
    write_job(path, "1", attempt(0, "T2_XX_Local", 0, "ok", OK, start=NOW - 1500, seconds=40))
    write_job(path, "2", attempt(0, "T2_US_Nebraska", 8021, "retry", READ, start=NOW - 1500, seconds=20),
              attempt(1, "T1_US_FNAL", 0, "ok", OK, start=NOW - 900, seconds=45))
    write_job(path, "3", attempt(0, "T2_US_Nebraska", 8021, "retry", READ, start=NOW - 1200, seconds=25),
              cooloff_until=NOW + 272)
    write_job(path, "4", attempt(0, "T2_XX_Local", 50115, "retry", NO_FJR, start=NOW - 1400, seconds=30),
              attempt(1, "T2_IT_Pisa", 99, "fatal", "Job wrapper finished with exit code 99.", start=NOW - 700,
                      seconds=30, memory=2600))
    write_job(path, "5", attempt(0, "T1_US_FNAL", 8021, "retry", READ, start=NOW - 600, seconds=10),
              cooloff_until=NOW + 45)
    for job in "678":
        with open(os.path.join(path, f"job_input.{job}.json"), "w") as f:
            f.write("{}")
    db.insert(Task(live, "lumis", "alice", SUBMITTED, SUBMIT, "lumis.toml", path, NOW - 1800, NOW - 1700,
                   message="resubmitted job(s) 4 (epoch 1); they run when the task's running DAG has ended"))
    db.close()


def build_automatic(state: StateDir) -> str:
    """``auto``, a completed automatic task: probes 0-1 (finished) and 0-2 (failed), processing jobs
    1 (finished) and 2 (failed, its lumis taken by tail job 1-1, finished); returns its name."""
    name = "231114_220000:alice_crab_auto"
    path = task_dir(state, name)
    with open(os.path.join(path, "task.json")) as f:
        task = json.load(f)
    with open(os.path.join(path, "task.json"), "w") as f:
        json.dump({**task, "automatic": {"minutes": 180}}, f)
    stages.write_estimate(path, 12.5, 5001.0, ["0-1"])
    for job, code, action, reason in (("0-1", 0, "ok", OK), ("0-2", 8021, "fatal", READ), ("1", 0, "ok", OK),
                                      ("2", 8021, "fatal", READ), ("1-1", 0, "ok", OK)):
        write_job(path, job, attempt(0, "T2_CH_CERN", code, action, reason, start=NOW - 5000, seconds=60))
    db = TaskDB(state.tasks)
    db.insert(Task(name, "auto", "alice", COMPLETED, SUBMIT, "auto.toml", path, NOW - 5400, NOW - 4000,
                   dagman_id=9999))
    db.close()
    return name


def build_probing(state: StateDir) -> str:
    """``probe``, an automatic task that has only its probes so far: 0-1 finished, 0-2 waiting to
    retry, 0-3 not run yet; returns its name."""
    name = "231114_230000:alice_crab_probe"
    path = task_dir(state, name)
    with open(os.path.join(path, "task.json")) as f:
        task = json.load(f)
    with open(os.path.join(path, "task.json"), "w") as f:
        json.dump({**task, "automatic": {"minutes": 180}}, f)
    write_job(path, "0-1", attempt(0, "T2_CH_CERN", 0, "ok", OK, start=NOW - 600, seconds=60))
    write_job(path, "0-2", attempt(0, "T2_CH_CERN", 8021, "retry", READ, start=NOW - 600, seconds=30),
              cooloff_until=NOW + 100)
    with open(os.path.join(path, "job_input.0-3.json"), "w") as f:
        f.write("{}")
    db = TaskDB(state.tasks)
    db.insert(Task(name, "probe", "alice", SUBMITTED, SUBMIT, "probe.toml", path, NOW - 700, NOW - 600,
                   dagman_id=9998))
    db.close()
    return name
