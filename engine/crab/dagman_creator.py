"""What CRAB's DagmanCreator writes for a task: the DAG, the job submit template and each job's input.

The DAG is CRAB's (``DAG_FRAGMENT``): independent nodes ``JobN``, each with PreJob as PRE script
(deferred with exit 4 while the job cools off), the job, PostJob as POST script (deferred with exit
4 while its output is staged out), ``RETRY ... UNLESS-EXIT 2`` and ``ABORT-DAG-ON ... 3``.  The
scripts are ``python3 -m engine.crab.prejob|postjob`` so the same DAG runs on a real HTCondor pool;
everything they share is in the task directory as JSON (:data:`TASK_FILE`, the per-job inputs and
the retry states of :mod:`engine.crab.retry_policy`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from engine.atomic import write_atomically
from engine.crab.cmsrun import make_input, write_input
from engine.crab.datasets import Dataset
from engine.crab.splitting import JobSplit
from engine.crab.wrapper import exit_hold_commands

TASK_FILE = "task.json"
DAG_FILE = "RunJobs.dag"
SUBMIT_TEMPLATE = "Job.submit"
POSTJOB_DEFER_S = 1800  # CRAB re-runs a deferred PostJob after 30 minutes (stage-out pending)
COOLOFF_POLL_S = 60  # how often a cooling-off PreJob looks again, in simulated seconds


@dataclass(frozen=True)
class TaskAd:
    """The task's facts the DAG scripts need (CRAB keeps them in the DAGMan job's ad)."""

    name: str
    user: str
    dataset: str
    max_memory_mb: int
    max_runtime_min: int
    num_cores: int
    priority: int
    site_whitelist: tuple[str, ...]
    site_blacklist: tuple[str, ...]
    storage_site: str | None
    time_scale: float
    max_retries: int  # CRAB_NumAutomJobRetries
    failure_plan: tuple[dict, ...] = ()  # Debug.failurePlan entries in the config's form
    script_exe: str | None = None  # JobType.scriptExe: the wrapper runs it instead of cmsRun
    extra_jdl: tuple[str, ...] = ()  # Debug.extraJDL: submit lines added to every job, as CRAB adds them
    python: str = sys.executable  # the interpreter of the DAG's scripts and of the job wrapper
    python_path: str = ""  # their PYTHONPATH where the engine is not installed (a real pool's hosts)

    @property
    def real(self) -> float:
        """Real seconds per simulated second."""
        return 1 / self.time_scale


def write_task(task_dir: str, ad: TaskAd, dataset: Dataset, jobs: Sequence[JobSplit]) -> str:
    """Write the task's files into ``task_dir`` (made if missing); returns the DAG's path."""
    os.makedirs(task_dir, exist_ok=True)
    write_atomically(os.path.join(task_dir, TASK_FILE), json.dumps(asdict(ad), indent=1) + "\n")
    by_lfn = {f.lfn: f for f in dataset.files}
    for job in jobs:
        write_input(os.path.join(task_dir, f"job_input.{job.id}.json"), job_input(job, by_lfn))
        write_atomically(os.path.join(task_dir, f"job_sites.{job.id}.json"), json.dumps(list(job.sites)) + "\n")
    write_atomically(os.path.join(task_dir, SUBMIT_TEMPLATE), submit_template(ad))
    dag = os.path.join(task_dir, DAG_FILE)
    write_atomically(dag, format_dag(ad, jobs))
    return dag


def job_input(job: JobSplit, by_lfn: dict) -> dict:
    """The simulated cmsRun's input: the job's files with only the lumis it must process."""
    wanted = {(run, lumi) for run, ranges in job.lumi_mask().items() for first, last in ranges
              for lumi in range(first, last + 1)}
    files = []
    for lfn in job.files:
        lumis = [(r, n, e) for r, n, e in by_lfn[lfn].lumis if (r, n) in wanted]
        if lumis:
            files.append((lfn, lumis))
    return make_input(files)


def format_dag(ad: TaskAd, jobs: Sequence[JobSplit]) -> str:
    """CRAB's DAG_FRAGMENT for every job, with the task's interpreter running the scripts (through
    ``env`` when they need a PYTHONPATH: DAGMan gives its scripts only its own environment)."""
    python = f"/usr/bin/env PYTHONPATH={ad.python_path} {ad.python}" if ad.python_path else ad.python
    cooloff = max(1, round(COOLOFF_POLL_S * ad.real))
    defer = max(1, round(POSTJOB_DEFER_S * ad.real))
    lines = []
    for job in jobs:
        n = job.id
        lines += [
            f"JOB Job{n} Job.{n}.submit",
            f"SCRIPT DEFER 4 {cooloff} PRE Job{n} {python} -m engine.crab.prejob $RETRY {n} .",
            f"SCRIPT DEFER 4 {defer} POST Job{n} {python} -m engine.crab.postjob $JOBID $RETURN $RETRY "
            f"$MAX_RETRIES {n} .",
            f"RETRY Job{n} {ad.max_retries} UNLESS-EXIT 2",
            f'VARS Job{n} count="{n}"',
            f"ABORT-DAG-ON Job{n} 3",
            "",
        ]
    return "\n".join(lines)


def submit_template(ad: TaskAd) -> str:
    """``Job.submit``: what every job shares; PreJob adds each attempt's own lines (its retry
    counters, memory, runtime and sites) to make ``Job.N.submit``."""
    return "\n".join([
        "universe = vanilla",
        f"executable = {ad.python}",
        'arguments = "-m engine.crab.wrapper"',
        *([f'environment = "PYTHONPATH={ad.python_path}"'] if ad.python_path else []),
        "output = job_out.$(count).$(CRAB_Retry).txt",
        "error = job_err.$(count).$(CRAB_Retry).txt",
        "log = job_log.$(count)",
        f'My.CRAB_ReqName = "{ad.name}"',
        f'My.CRAB_UserHN = "{ad.user}"',
        'My.CRAB_Id = "$(count)"',
        f"My.CRAB_NumAutomJobRetries = {ad.max_retries}",
        f"My.CRABTUI_TimeScale = {ad.time_scale}",
        'My.CRABTUI_InputFile = "job_input.$(count).json"',
        'My.CRABTUI_JobReport = "jobReport.json.$(count).$(CRAB_Retry)"',
        *(f"{k} = {v}" for k, v in exit_hold_commands(ad.failure_plan).items()),
        *([f"My.CRABTUI_ScriptExe = {json.dumps(ad.script_exe)}"] if ad.script_exe else []),
        *ad.extra_jdl,
        f"request_cpus = {ad.num_cores}",
        f"priority = {ad.priority}",
        "requirements = stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)",
        # CRAB's condor-side limits (DagmanCreator.makeJobSubmit), on the scaled clock.
        "periodic_remove = JobStatus == 2 && MemoryUsage > RequestMemory",
        'My.PeriodicRemoveReason = "Removed due to memory use"',
        "periodic_release = member(HoldReasonCode, {28, 30, 13, 6})",
        "",
    ])
