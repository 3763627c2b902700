"""CRAB's DagmanResubmitter and AdjustSites: a ``crab resubmit`` carried out on a task's files and,
for a DAG that still runs, on its DAGMan job, through the Schedd API alone, so that it works the
same on the embedded engine and on a real HTCondor pool.

:func:`enter_epoch` puts the listed jobs in the resubmit's epoch: the record's entry (which PreJob
reads), the automatic blacklist's statistics cleared, each job's RRN back to 0 with the new
parameters (AdjustSites' ``resetRRN``).

A failed node of a DAG that is still running is not run again by its DAGMan: its POST script
returned 2, which ``RETRY ... UNLESS-EXIT 2`` makes final.  :func:`retry_in_running_dags` does
what CRAB does so that DAGMan retries it at once, and leaves the other nodes and their running
jobs alone:

1. the node's ``RETRY`` count goes up to its retries so far + 1 + its budget, in the DAG file and
   in its rescue DAGs, which a DAGMan started from one reads again (``adjustMaxRetries``);
2. in the DAG's nodes log, the node's POST results 2 become 1, a recoverable failure
   (``adjustPostScriptExitStatus``), each digit written in place, so that the events the schedd
   appends meanwhile stay;
3. the DAGMan job is held, which stops DAGMan gracefully (its lock file stays; node jobs run on),
   and released: DAGMan starts again in recovery mode, replays the nodes log, finds the node's
   last POST recoverable with retries left, and runs it again in its first cycle.

Each step can be taken again after a crash.  CRAB's AdjustSites makes the edits in the
DAGMan job's own start-up; here the task worker makes them before the hold, which comes to the
same: the DAGMan that reads them is the restarted one, and the running one writes nothing for a
failed node.  A DAG that is no longer in the queue is rerun by the caller from its rescue DAG.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from engine.crab.ap.prejob import load_job_state
from engine.crab.ap.resubmit_record import ResubmitEntry, write_entry
from engine.crab.ap.retry_policy import resubmit as new_epoch
from engine.crab.ap.retry_policy import save_state, state_path
from engine.crab.ap.sites import clear_statistics
from engine.crab.taskworker.automatic import stage_of
from engine.crab.taskworker.dagman_creator import DAG_FILE, read_task, subdag_file, task_ad
from engine.dag.rescue import rescue_files
from engine.dag.writer import set_retries
from engine.schedd.api import JobAction, JobStatus, Schedd
from engine.schedd.local.userlog import change_post_results

__all__ = ["dag_of", "enter_epoch", "retry_in_running_dags", "running_dagmans"]

FATAL, RECOVERABLE = 2, 1  # PostJob's exits: JobReturnCode.FATAL_ERROR, RECOVERABLE_ERROR


def enter_epoch(task_dir: str, entry: ResubmitEntry) -> None:
    """The resubmit's entry in the record, the site statistics cleared (AdjustSites'
    ``clearAutomaticBlacklist``), and each listed job in its epoch (``resetRRN``)."""
    write_entry(task_dir, entry)
    clear_statistics(task_dir, entry.epoch)
    for job in entry.job_ids:
        state = load_job_state(task_dir, job)
        new = new_epoch(state, entry.epoch, entry.params)
        if new is not state:  # a job already in the epoch may be running again: leave its file alone
            save_state(state_path(task_dir, job), new)


def dag_of(job_id: str, automatic: bool) -> str:
    """The DAG file whose node runs the job: ``RunJobs.dag``, or for automatic splitting the
    sub-DAG of its stage (probes in ``RunJobs.dag``, processing jobs in ``RunJobs0.subdag``, tail
    stage N's jobs in ``RunJobsN.subdag``)."""
    if not automatic:
        return DAG_FILE
    stage = stage_of(job_id)
    if stage == "probe":
        return DAG_FILE
    return subdag_file(0 if stage == "processing" else int(job_id.split("-")[0]))


def running_dagmans(schedd: Schedd, task_dir: str) -> dict[str, int]:
    """The task's DAGMan jobs in the queue, by the DAG file each runs: the task's own (no
    DAGNodeName) runs ``RunJobs.dag``, a sub-DAG's DAGMan (node ``JobNSubJobs``) ``RunJobsN.subdag``."""
    found = {}
    for ad in schedd.query(f'JobUniverse == 7 && Iwd == "{task_dir}"', ["ClusterId", "DAGNodeName", "JobStatus"]):
        node = ad.get("DAGNodeName")
        if node is None:
            found[DAG_FILE] = int(ad["ClusterId"])
        elif isinstance(node, str) and node.startswith("Job") and node.endswith("SubJobs"):
            found[subdag_file(int(node[3:-len("SubJobs")]))] = int(ad["ClusterId"])
    return found


def retry_in_running_dags(schedd: Schedd, task_dir: str, job_ids: Iterable[str]) -> list[str]:
    """Make the DAGMans still running the listed jobs' DAGs retry them at once (see the module's
    description); returns the jobs whose DAG is no longer in the queue, for a rescue DAG to run."""
    task = task_ad(read_task(task_dir))
    automatic = task.automatic is not None
    by_dag: dict[str, list[str]] = {}
    for job in job_ids:
        by_dag.setdefault(dag_of(job, automatic), []).append(job)
    running = running_dagmans(schedd, task_dir)
    left = []
    for dag, jobs in by_dag.items():
        cluster = running.get(dag)
        if cluster is None:
            left += jobs
            continue
        path = os.path.join(task_dir, dag)
        counts = {f"Job{job}": load_job_state(task_dir, job).dag_retry + 1 + task.max_executions(job) for job in jobs}
        for file in [path, *(rescue for _, rescue in rescue_files(path))]:
            set_retries(file, counts)
        if os.path.exists(path + ".nodes.log"):
            change_post_results(path + ".nodes.log", counts, FATAL, RECOVERABLE)
        if not _restart(schedd, cluster):
            left += jobs
    return left


def _restart(schedd: Schedd, cluster: int) -> bool:
    """Hold and release the DAGMan job (DagmanResubmitter's hold and release); False if it has
    left the queue, its DAG ended before the hold."""
    reason = "crab resubmit: DAGMan restarts in recovery mode to retry the resubmitted nodes"
    schedd.act(JobAction.Hold, f"ClusterId == {cluster} && JobStatus != {int(JobStatus.HELD)}", reason)
    schedd.act(JobAction.Release, f"ClusterId == {cluster} && JobStatus == {int(JobStatus.HELD)}", reason)
    return bool(schedd.query(f"ClusterId == {cluster}", ["JobStatus"]))
