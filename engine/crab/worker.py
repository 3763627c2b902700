"""CRAB's TaskWorker on one machine: carries out the task table's pending commands.

A thread of the embedded schedd's daemon (:func:`start`), so tasks move while any client has the
daemon up.  For SUBMIT it splits the dataset, writes the task's DAG (:mod:`engine.crab.dagman_creator`)
and queues DAGMan; for KILL it removes the DAGMan job, which removes the task's jobs with it.
It also notices when a task's DAGMan job has ended, to mark the task COMPLETED or FAILED.  Every
step is written to the table before the next is taken, and a task found half done (QUEUED) after a
crash is finished from where it stands: a DAGMan job already queued for it is adopted, not doubled.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import asdict

from engine.crab.dagman_creator import DAG_FILE, TaskAd, write_task
from engine.crab.datasets import Catalogue, DatasetError
from engine.crab.splitting import SplittingError, split
from engine.crab.taskdb import (COMPLETED, FAILED, FAILURE_STATUS, KILL, KILLED, QUEUED, RESUBMIT, SUBMIT,
                                SUBMITTED, Task, TaskDB)
from engine.dag import DagError
from engine.dagman.submit_dag import DagSubmitOptions, format_condor_sub, prepare, write_condor_sub
from engine.schedd.api import JobAction, JobStatus, Schedd, ScheddError
from engine.state import StateDir

REQUEST_FILE = "request.json"
log = logging.getLogger(__name__)


def tasks_path(state: StateDir) -> str:
    return os.path.join(state.path, "tasks.sqlite3")


def write_request(task_dir: str, *, dataset: str, splitting: str, units_per_job: int, total_units: int,
                  lumi_mask: dict[int, list[tuple[int, int]]] | None, ad: TaskAd) -> None:
    """What ``task submit`` hands the worker: the checked configuration, as JSON (the worker never
    runs the user's crabConfig.py)."""
    os.makedirs(task_dir, exist_ok=True)
    request = {"dataset": dataset, "splitting": splitting, "units_per_job": units_per_job,
               "total_units": total_units,
               "lumi_mask": None if lumi_mask is None else {str(r): ranges for r, ranges in lumi_mask.items()},
               "ad": asdict(ad)}
    with open(os.path.join(task_dir, REQUEST_FILE), "w", encoding="utf-8") as f:
        json.dump(request, f, indent=1)


class TaskWorker:
    def __init__(self, state: StateDir, schedd: Schedd) -> None:
        self.state = state
        self.schedd = schedd
        self.db = TaskDB(tasks_path(state))

    def work_once(self) -> None:
        for task in self.db.pending():
            self.carry_out(task)
        for task in self.db.tasks():
            if task.status == SUBMITTED and task.dagman_id is not None:
                self.follow(task)

    def carry_out(self, task: Task) -> None:
        command = task.command
        task = self.db.update(task, status=QUEUED)
        try:
            if command == SUBMIT:
                self.submit(task)
            elif command == KILL:
                self.kill(task)
            elif command == RESUBMIT:
                raise ScheddError("resubmit is not available yet")
        except (OSError, ValueError, KeyError, DagError, DatasetError, SplittingError, ScheddError) as e:
            log.info("task %s: %s failed: %s", task.name, command, e)
            self.db.update(task, status=FAILURE_STATUS[command], message=str(e))

    def submit(self, task: Task) -> None:
        dag = os.path.join(task.task_dir, DAG_FILE)
        queued = self.schedd.query(f'JobUniverse == 7 && Iwd == "{task.task_dir}"', ["ClusterId"])
        if queued:  # a worker that died after queueing DAGMan: adopt that job
            self.db.update(task, status=SUBMITTED, dagman_id=int(queued[0]["ClusterId"]))
            return
        with open(os.path.join(task.task_dir, REQUEST_FILE), encoding="utf-8") as f:
            request = json.load(f)
        dataset = Catalogue.for_state(self.state).load(request["dataset"])
        mask = request["lumi_mask"]
        jobs = split(dataset, algorithm=request["splitting"], units_per_job=request["units_per_job"],
                     total_units=request["total_units"],
                     lumi_mask=None if mask is None else {int(r): [tuple(x) for x in v] for r, v in mask.items()})
        ad = request["ad"]
        ad = TaskAd(**{**ad, "site_whitelist": tuple(ad["site_whitelist"]),
                       "site_blacklist": tuple(ad["site_blacklist"]), "failure_plan": tuple(ad["failure_plan"])})
        write_task(task.task_dir, ad, dataset, jobs)
        options = DagSubmitOptions(force=True, batch_name=task.name)
        prepare(dag, options)
        text = write_condor_sub(dag, format_condor_sub(dag, options, self.state.path))
        result = self.schedd.submit(text, submit_file=dag + ".condor.sub", cwd=task.task_dir)
        self.db.update(task, status=SUBMITTED, dagman_id=result.cluster,
                       message=f"{len(jobs)} jobs")

    def kill(self, task: Task) -> None:
        if task.dagman_id is not None and self.schedd.query(f"ClusterId == {task.dagman_id}", ["JobStatus"]):
            self.schedd.act(JobAction.Remove, str(task.dagman_id), "Killed by the user (crab kill)")
        self.db.update(task, status=KILLED, message="")

    def follow(self, task: Task) -> None:
        """A SUBMITTED task whose DAGMan has left the queue is COMPLETED (exit 0) or FAILED."""
        if self.schedd.query(f"ClusterId == {task.dagman_id}", ["JobStatus"]):
            return
        done = self.schedd.history(f"ClusterId == {task.dagman_id}", ["ExitCode", "JobStatus"], match=1)
        if not done:
            return
        ad = done[0]
        if ad.get("JobStatus") == JobStatus.COMPLETED and ad.get("ExitCode") == 0:
            self.db.update(task, status=COMPLETED, message="")
        else:
            self.db.update(task, status=FAILED, message=f"DAGMan exited {ad.get('ExitCode', 'on removal')}")


def start(state: StateDir, interval: float = 1.0) -> threading.Event:
    """Run a worker in a daemon thread until the returned event is set."""
    from engine.schedd.local.client import LocalScheddClient

    stop = threading.Event()

    def loop() -> None:
        with LocalScheddClient(state, autostart=False) as schedd:
            worker = TaskWorker(state, schedd)
            while not stop.wait(interval):
                try:
                    worker.work_once()
                except ScheddError as e:
                    log.warning("task worker: %s", e)
    threading.Thread(target=loop, name="crab-task-worker", daemon=True).start()
    return stop
