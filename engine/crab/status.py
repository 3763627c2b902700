"""A task's jobs as ``crab status`` shows them: each job's state, retries, sites and attempts.

The state of a job comes from its retry state (:mod:`engine.crab.retry_policy`), which PreJob and
PostJob keep, and from its job in the queue, as CRAB's ``cache_status`` derives node states from
the DAG's files and the job ads (crab-spec §1.2): unsubmitted, cooloff, idle, running, held,
transferring, finished, failed.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from engine.crab.prejob import load_job_state
from engine.crab.retry_policy import JobState
from engine.schedd.api import JobStatus, Schedd

_QUEUED = {JobStatus.IDLE: "idle", JobStatus.RUNNING: "running", JobStatus.HELD: "held",
           JobStatus.TRANSFERRING_OUTPUT: "transferring"}


@dataclass(frozen=True)
class JobView:
    id: str
    state: str
    retries: int
    cooloff_until: float | None
    site_history: tuple[str, ...]
    exit_code: int | None
    attempts: tuple[dict, ...]

    def as_json(self) -> dict:
        return {"id": self.id, "state": self.state, "retries": self.retries, "restarts": 0,
                "site_history": list(self.site_history), "exit_code": self.exit_code,
                "cooloff_until": self.cooloff_until, "attempts": list(self.attempts)}


def job_state(state: JobState, queued: JobStatus | None, now: float) -> str:
    if queued is not None:
        return _QUEUED.get(queued, "idle")
    if state.open_attempt is not None:
        return "transferring" if state.open_attempt.site else "idle"
    if not state.attempts:
        return "unsubmitted"
    last = state.attempts[-1].action
    if last == "ok":
        return "finished"
    if last == "retry":
        return "cooloff" if state.cooloff_until and state.cooloff_until > now else "unsubmitted"
    return "failed"


def task_jobs(task_dir: str, job_ids: list[str], schedd: Schedd | None, dagman_id: int | None,
              now: float | None = None) -> list[JobView]:
    now = time.time() if now is None else now
    queued: dict[str, JobStatus] = {}
    if schedd is not None and dagman_id is not None:
        for ad in schedd.query(f"DAGManJobId == {dagman_id}", ["CRAB_Id", "JobStatus"]):
            if "CRAB_Id" in ad:
                queued[str(ad["CRAB_Id"])] = JobStatus(ad["JobStatus"])
    views = []
    for job in job_ids:
        state = load_job_state(task_dir, job)
        closed = [a for a in state.attempts if a.action is not None]
        attempts = tuple({"site": a.site, "exit_code": a.exit_code, "request_memory": a.request_memory_mb,
                          "max_runtime": a.max_runtime_min, "start": a.start_time, "end": a.end_time,
                          "action": a.action, "reason": a.reason} for a in state.attempts)
        views.append(JobView(job, job_state(state, queued.get(job), now), max(0, len(state.attempts) - 1),
                             state.cooloff_until, tuple(a.site for a in state.attempts if a.site),
                             closed[-1].exit_code if closed else None, attempts))
    return views


def job_ids(task_dir: str) -> list[str]:
    """The task's job ids, from the inputs DagmanCreator wrote, in CRAB's order."""
    ids = [name[len("job_input."):-len(".json")] for name in os.listdir(task_dir)
           if name.startswith("job_input.") and name.endswith(".json")]
    return sorted(ids, key=lambda i: [int(p) for p in i.split("-")])
