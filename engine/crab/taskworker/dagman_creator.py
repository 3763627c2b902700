"""What CRAB's DagmanCreator writes for a task: the DAG, the job submit template and each job's input.

The DAG is CRAB's (``DAG_FRAGMENT``): independent nodes ``JobN``, each with PreJob as PRE script
(deferred with exit 4 while the job cools off), the job, PostJob as POST script (deferred with exit
4 while its output is staged out), ``RETRY ... UNLESS-EXIT 2``, ``ABORT-DAG-ON ... 3`` and ``PRE_SKIP ...
5`` (PreJob's word for a job that succeeded while its PostJob died before it said so).  The
scripts are ``python3 -m engine.crab.ap.prejob|postjob`` so the same DAG runs on a real HTCondor pool;
everything they share is in the task directory as JSON (:data:`TASK_FILE`, the per-job inputs and
the retry states of :mod:`engine.crab.ap.retry_policy`).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from engine.atomic import write_atomically
from engine.crab.ap.retry_policy import NUM_AUTOM_JOB_RETRIES
from engine.crab.ap.sites import write_data_sites
from engine.crab.taskworker.automatic import AutomaticConfig, stage_of
from engine.crab.taskworker.datasets import Dataset
from engine.crab.taskworker.splitting import JobSplit
from engine.crab.wn.failure_plan import PLANNED_HOLD_CODE, exit_hold_commands
from engine.crab.wn.job_input import make_input, write_input

TASK_FILE = "task.json"
JOB_WRAPPER = "gWMS-CMSRunAnalysis.sh"  # CRAB's job executable (DagmanCreator), as condor_q shows it
JOB_SANDBOX = "CMSRunAnalysis.pyz"  # the job's executable on a pool (engine.crab.taskworker.sandbox writes it)
DAG_FILE = "RunJobs.dag"
SUBMIT_TEMPLATE = "Job.submit"
# How often a PostJob whose stage-out is pending looks again, in simulated seconds. CRAB waits 30
# minutes (1800 s) to spare its ASO database; here a look is a file read, and the transfer ends
# when it is due (engine.crab.ap.stageout sleeps out the last wait), so jobs are not held back.
POSTJOB_DEFER_S = 60
COOLOFF_POLL_S = 60  # how often a cooling-off PreJob looks again, in simulated seconds
PREDAG_DEFER_S = 300  # how often a waiting PreDAG looks again (CRAB's), in simulated seconds
NOTHING_TO_SPLIT = 5  # PreDAG's exit for a tail stage left with nothing to process (its PRE_SKIP)
RELEASE_HOLD_CODES = (28, 30, 13, 6)  # CRAB's periodic_release: glexec (28, 30), stage-in (13), start (6)
RELEASE_AFTER_S = 5 * 60  # seed 000: such a job "can be released at most once every 5 minutes"
HELD_REMOVE_S = 7 * 60  # CRAB's periodic_remove of a job held longer than 7 minutes
PERIODIC_EXPR_INTERVAL_S = 60  # HTCondor's default: how often the periodic policy is evaluated


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
    max_retries: int = NUM_AUTOM_JOB_RETRIES  # CRAB_NumAutomJobRetries: the task worker's numAutomJobRetries
    failure_plan: tuple[dict, ...] = ()  # Debug.failurePlan entries in the config's form
    script_exe: str | None = None  # JobType.scriptExe: the wrapper runs it instead of cmsRun
    script_args: tuple[str, ...] = ()  # JobType.scriptArgs: the script's arguments after the job id
    output_files: tuple[str, ...] = ()  # JobType.outputFiles: what the script must write, staged out
    sandbox: str | None = None  # the script's sandbox directory (engine.crab.client.sandbox); script_exe is in it
    extra_jdl: tuple[str, ...] = ()  # Debug.extraJDL: submit lines added to every job, as CRAB adds them
    python: str = sys.executable  # the interpreter of the DAG's scripts and of the job wrapper
    python_path: str = ""  # their PYTHONPATH where the engine is not installed (a real pool's hosts)
    ignore_global_blacklist: bool = False  # Site.ignoreGlobalBlacklist
    global_blacklist: str | None = None  # the global blacklist file PreJob reads (engine.crab.ap.sites)
    automatic_blacklist: dict = field(default_factory=dict)  # sites.Thresholds as a dict ({}: seed 000's)
    stageout: dict | None = None  # where and how PostJob stages the outputs out (storage.stageout_ad); None: not
    automatic: dict | None = None  # Automatic splitting: minutes, knobs, probes, catalogue, lumi mask; None: not
    input_lumis: int | None = None  # the lumis the dataset holds within the lumi mask, for the status
    file_transfer: bool = False  # a real pool: the job is the task's JOB_SANDBOX, run with file transfer
    pool_sites: tuple[str, ...] | None = None  # the sites the task's pool has (None: unknown), for PreJob
    publication: bool = True  # Data.publication, for the status's publication line (crabtui publishes nothing)
    warnings: tuple[str, ...] = ()  # found at submit (skipped blocks, Data.inputBlocks), shown by task status

    def max_executions(self, job_id: str) -> int:
        """CRAB_NumAutomJobRetries of one job: executions per resubmit epoch.  Automatic
        splitting's processing jobs run once (a failed one's lumis go to the tails, crab-spec §4);
        probes and tails have the task's budget, as CRAB's DagmanCreator gives them."""
        if self.automatic is not None and stage_of(job_id) == "processing":
            return 1
        return self.max_retries

    def dag_retries(self, job_id: str) -> int:
        """The node's ``RETRY``: the task's retries, none for a job that runs once.  DAGMan runs no
        PreJob after the last one, so no retry takes the decision of a PostJob that died there."""
        return self.max_retries if self.max_executions(job_id) > 1 else 0

    def runtime_min(self, job_id: str, runtime_min: int) -> int:
        """A job's max runtime where the task's (or its resubmit's) is ``runtime_min``: a processing
        job's is its target plus CRAB's overhead, within that (crab-spec §4)."""
        if self.automatic is None or stage_of(job_id) != "processing":
            return runtime_min
        knobs = AutomaticConfig.from_crab(self.automatic["config"])
        return min(runtime_min, math.ceil(knobs.processing_wall_mins(self.automatic["minutes"])))

    def stage_lines(self, job_id: str) -> list[str]:
        """Submit lines of the job's automatic splitting stage: cmsRun's time limit, and no output
        transfer for a probe (CRAB's ``CRAB_TransferOutputs = 0``)."""
        stop_after = self.stop_after_s(job_id)
        return ([] if stop_after is None else [f"My.CRABTUI_StopAfter = {stop_after:g}"]) + \
            (["My.CRAB_TransferOutputs = 0"] if self.automatic is not None and stage_of(job_id) == "probe" else [])

    def stop_after_s(self, job_id: str) -> float | None:
        """Simulated seconds after which the job's cmsRun begins no new lumi (None: no limit):
        probes after their budget, processing jobs after the target runtime, tails never."""
        if self.automatic is None:
            return None
        stage = stage_of(job_id)
        if stage == "probe":
            return AutomaticConfig.from_crab(self.automatic["config"]).probe_stop_after_s
        return self.automatic["minutes"] * 60 if stage == "processing" else None

    @property
    def real(self) -> float:
        """Real seconds per simulated second."""
        return 1 / self.time_scale


def write_task(task_dir: str, ad: TaskAd, dataset: Dataset, jobs: Sequence[JobSplit]) -> str:
    """Write the task's files into ``task_dir`` (made if missing); returns the DAG's path."""
    os.makedirs(task_dir, exist_ok=True)
    write_atomically(os.path.join(task_dir, TASK_FILE), json.dumps(asdict(ad), indent=1) + "\n")
    write_jobs(task_dir, dataset, jobs)
    if not ad.file_transfer:
        wrapper = os.path.join(task_dir, JOB_WRAPPER)
        write_atomically(wrapper, wrapper_script(ad))
        os.chmod(wrapper, 0o755)
    write_atomically(os.path.join(task_dir, SUBMIT_TEMPLATE), submit_template(ad))
    dag = os.path.join(task_dir, DAG_FILE)
    text = format_dag(ad, jobs)
    if ad.automatic is not None:  # the probes, then the processing stage once they are done
        write_atomically(os.path.join(task_dir, subdag_file(0)), "")  # PreDAG writes it
        text += stage_node(ad, "processing", len(jobs), 0)
    write_atomically(dag, text)
    return dag


def read_task(task_dir: str) -> dict:
    """``task.json``, the TaskAd :func:`write_task` wrote, as JSON (:func:`task_ad` makes it a TaskAd)."""
    with open(os.path.join(task_dir, TASK_FILE), encoding="utf-8") as f:
        return json.load(f)


def write_jobs(task_dir: str, dataset: Dataset, jobs: Sequence[JobSplit]) -> None:
    """Each job's input and data sites (PreDAG adds automatic splitting's later stages' jobs)."""
    by_lfn = {f.lfn: f for f in dataset.files}
    for job in jobs:
        write_input(os.path.join(task_dir, f"job_input.{job.id}.json"), job_input(job, by_lfn))
        write_atomically(os.path.join(task_dir, f"job_sites.{job.id}.json"), json.dumps(list(job.sites)) + "\n")
    write_data_sites(task_dir, (site for job in jobs for site in job.sites))


def job_input(job: JobSplit, by_lfn: dict) -> dict:
    """The simulated cmsRun's input: the job's files with only the lumis it must process, and
    their parents (Data.useParent; CRAB's ``{"lfn": ..., "parents": [...]}``)."""
    wanted = {(run, lumi) for run, ranges in job.lumi_mask().items() for first, last in ranges
              for lumi in range(first, last + 1)}
    files = []
    for lfn in job.files:
        lumis = [(r, n, e) for r, n, e in by_lfn[lfn].lumis if (r, n) in wanted]
        if lumis:
            files.append((lfn, lumis, by_lfn[lfn].parents))
    return make_input(files)


def format_dag(ad: TaskAd, jobs: Sequence[JobSplit]) -> str:
    """CRAB's DAG_FRAGMENT for every job, with the task's interpreter running the scripts (through
    ``env`` when they need a PYTHONPATH: DAGMan gives its scripts only its own environment)."""
    python = script_python(ad)
    cooloff = max(1, round(COOLOFF_POLL_S * ad.real))
    defer = max(1, round(POSTJOB_DEFER_S * ad.real))
    lines = []
    for job in jobs:
        n = job.id
        lines += [
            f"JOB Job{n} Job.{n}.submit",
            f"SCRIPT DEFER 4 {cooloff} PRE Job{n} {python} -m engine.crab.ap.prejob $RETRY {n} .",
            f"SCRIPT DEFER 4 {defer} POST Job{n} {python} -m engine.crab.ap.postjob $JOBID $RETURN $RETRY "
            f"$MAX_RETRIES {n} .",
            f"RETRY Job{n} {ad.dag_retries(n)} UNLESS-EXIT 2",
            f'VARS Job{n} count="{n}"',
            f"ABORT-DAG-ON Job{n} 3",
            f"PRE_SKIP Job{n} 5",
            "",
        ]
    return "\n".join(lines)


def script_python(ad: TaskAd) -> str:
    """How the DAG runs Python: through ``env`` when the scripts need a PYTHONPATH, since DAGMan
    gives its scripts only its own environment."""
    return f"/usr/bin/env PYTHONPATH={ad.python_path} {ad.python}" if ad.python_path else ad.python


def subdag_file(stage: int) -> str:
    """Automatic splitting's sub-DAG of a stage: 0 processing, N tail stage N."""
    return f"RunJobs{stage}.subdag"


def stage_node(ad: TaskAd, kind: str, completion: int, stage: int) -> str:
    """A stage of automatic splitting as CRAB adds it: a SUBDAG node whose PRE script (PreDAG,
    re-run every 300 simulated seconds while it waits) splits the stage when ``completion`` jobs
    of the previous one are done.  A tail stage left with nothing to process is skipped."""
    name = f"Job{stage}SubJobs"
    poll = max(1, round(PREDAG_DEFER_S * ad.real))
    return "\n".join([
        f"SUBDAG EXTERNAL {name} {subdag_file(stage)}",
        f"SCRIPT DEFER 4 {poll} PRE {name} {script_python(ad)} -m engine.crab.ap.predag {kind} {completion} {stage} .",
        *([f"PRE_SKIP {name} {NOTHING_TO_SPLIT}"] if kind == "tail" else []),
        "", "",
    ])


def task_ad(data: dict) -> TaskAd:
    """The TaskAd that ``task.json`` (or a task request) holds: JSON lists back to tuples."""
    return TaskAd(**{**data, "site_whitelist": tuple(data["site_whitelist"]),
                     "site_blacklist": tuple(data["site_blacklist"]), "failure_plan": tuple(data["failure_plan"]),
                     "extra_jdl": tuple(data.get("extra_jdl", ())),
                     "script_args": tuple(data.get("script_args", ())),
                     "output_files": tuple(data.get("output_files", ())),
                     "warnings": tuple(data.get("warnings", ())),
                     "pool_sites": None if data.get("pool_sites") is None else tuple(data["pool_sites"])})


def submit_template(ad: TaskAd) -> str:
    """``Job.submit``: what every job shares; PreJob adds each attempt's own lines (its retry
    counters, memory, runtime and sites) to make ``Job.N.submit``."""
    return "\n".join([
        "universe = vanilla",
        *(job_sandbox(ad) if ad.file_transfer else job_in_place(ad)),
        "output = job_out.$(count).$(CRAB_Retry).txt",
        "error = job_err.$(count).$(CRAB_Retry).txt",
        "log = job_log.$(count)",
        f'My.CRAB_ReqName = "{ad.name}"',
        f'My.CRAB_UserHN = "{ad.user}"',
        'My.CRAB_Id = "$(count)"',
        f"My.CRAB_NumAutomJobRetries = {ad.max_retries}",
        f"My.CRABTUI_TimeScale = {ad.time_scale}",
        # The embedded schedd evaluates the job's periodic policy every 60 simulated seconds,
        # HTCondor's PERIODIC_EXPR_INTERVAL, on the task's clock (a real pool keeps its own).
        f"My.CRABTUI_PeriodicExprInterval = {_scaled(PERIODIC_EXPR_INTERVAL_S, ad)}",
        'My.CRABTUI_InputFile = "job_input.$(count).json"',
        'My.CRABTUI_JobReport = "jobReport.json.$(count).$(CRAB_Retry)"',
        # CRAB's remote name of cmsRun's output.root (CRAB_localOutputFiles "output.root=output_N.root"):
        # the jobs share the task directory, so each writes its output under that name.
        'My.CRABTUI_OutputFile = "output_$(count).root"',
        *(f"{k} = {v}" for k, v in exit_hold_commands(ad.failure_plan).items()),
        *([f"My.CRABTUI_ScriptExe = {json.dumps(ad.script_exe)}"] if ad.script_exe else []),
        # JobType.scriptArgs as CRAB's job carries them (its scriptArgs argument): a JSON list, here
        # inside a ClassAd string, which the wrapper passes to the script after the job id.
        *([f"My.CRABTUI_ScriptArgs = {json.dumps(json.dumps(list(ad.script_args)))}"]
          if ad.script_exe and ad.script_args else []),
        *([f"My.CRABTUI_Sandbox = {json.dumps(ad.sandbox)}"] if ad.sandbox else []),
        # JobType.outputFiles, as CRAB's job ad names them (CRAB_AdditionalOutputFiles), here a JSON list
        # in a ClassAd string: the wrapper fails the job (60302) if the script did not write one.
        *([f"My.CRAB_AdditionalOutputFiles = {json.dumps(json.dumps(list(ad.output_files)))}"]
          if ad.script_exe and ad.output_files else []),
        f"request_cpus = {ad.num_cores}",
        f"priority = {ad.priority}",
        "requirements = stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)",
        # CRAB's JOBGLIDEIN_CMSSite: the reference makes the schedd record the matched slot's site
        # in the job's ad (MATCH_GLIDEIN_CMSSite), which a pool does only for a $$() of it.
        'My.JOBGLIDEIN_CMSSite = "$$(GLIDEIN_CMSSite:Unknown)"',
        # and, as CRAB's, logged at the start of each execution (a JobAdInformation event): the
        # site of a job removed from a pool, whose files do not come back, is in its log only
        "job_ad_information_attrs = JOBGLIDEIN_CMSSite",
        *job_limits(ad),
        *ad.extra_jdl,  # last, as CRAB adds it: the user's lines win
        "",
    ])


def job_in_place(ad: TaskAd) -> list[str]:
    """The job as the embedded engine runs it, in the task directory: CRAB's executable and
    arguments (``gWMS-CMSRunAnalysis.sh --jobId=N``), which an operator knows in condor_q, the
    script starting the wrapper from this source (:func:`wrapper_script`)."""
    return [f"executable = {JOB_WRAPPER}", 'arguments = "--jobId=$(count)"',
            *([f'environment = "PYTHONPATH={ad.python_path}"'] if ad.python_path else [])]


def wrapper_script(ad: TaskAd) -> str:
    """The embedded engine's gWMS-CMSRunAnalysis.sh: the wrapper, run by the task's Python."""
    return f'#!/bin/sh\nexec {shlex.quote(ad.python)} -m engine.crab.wn.wrapper "$@"\n'


def job_sandbox(ad: TaskAd) -> list[str]:
    """The job as CRAB sends it to a pool: its sandbox (the wrapper and the simulated cmsRun in
    one zipapp) is the executable, transferred with the job's input (and the user's script) to a
    scratch directory of the job's own, whose new files (the job report, the output) come back.
    The user's script travels in the script's sandbox directory, which the wrapper unpacks there."""
    inputs = ["job_input.$(count).json", *([ad.sandbox] if ad.sandbox else [])]
    return [f"executable = {JOB_SANDBOX}", 'arguments = "--jobId=$(count)"', "should_transfer_files = YES",
            "when_to_transfer_output = ON_EXIT",
            f"transfer_input_files = {', '.join(inputs)}"]



def job_limits(ad: TaskAd) -> list[str]:
    """CRAB's condor-side limits (``DagmanCreator.makeJobSubmit``, crab-spec §2.6) on the task's
    scaled clock: removal over memory, over the attempt's ``MaxWallTimeMinsRun`` (the task's
    ``JobType.maxJobRuntimeMin``, a resubmit's ``--maxjobruntime`` or a 60403 boost, which PreJob
    writes per attempt), or after 7 minutes held, each with the reason RetryJob reads; and the
    automatic release of seed 000.

    CRAB releases holds with codes 28, 30, 13 and 6 at once; the seed adds "at most once every 5
    minutes", which a job held that long before its release keeps (a released job must run and
    be held again).  The release comes before the removal at 7 minutes: HTCondor evaluates
    periodic_release first.  A hold of the failure plan (``hold = C``) stands for the grid holding
    the job with code C; HTCondor lets a job hold itself only through on_exit_hold (code 3, C as
    subcode), so where the plan holds jobs the release tests :data:`PLANNED_HOLD_CODE`, which reads
    C there, and HoldReasonCode otherwise.  The same expression holds on real HTCondor, which keeps
    the ExitCode it tests in a held job's ad."""
    code = PLANNED_HOLD_CODE if exit_hold_commands(ad.failure_plan) else "HoldReasonCode"
    codes = ", ".join(map(str, RELEASE_HOLD_CODES))
    memory = "MemoryUsage =!= undefined && MemoryUsage > RequestMemory"
    wall = f"MaxWallTimeMinsRun =!= undefined && MaxWallTimeMinsRun * {_scaled(60, ad)} < time() - EnteredCurrentStatus"
    return [
        f"periodic_remove = (JobStatus =?= 5 && time() - EnteredCurrentStatus > {_scaled(HELD_REMOVE_S, ad)})"
        f" || (JobStatus =?= 2 && ({memory} || {wall}))",
        'My.PeriodicRemoveReason = ifThenElse(JobStatus =?= 5, "Removed due to job being held", '
        f'ifThenElse({memory}, "Removed due to memory use", "Removed due to wall clock limit"))',
        f"periodic_release = time() - EnteredCurrentStatus > {_scaled(RELEASE_AFTER_S, ad)} "
        f"&& member({code}, {{{codes}}})",
    ]


def _scaled(seconds: float, ad: TaskAd) -> str:
    """Simulated seconds as real ones, for a ClassAd expression."""
    return f"{seconds * ad.real:.6g}"
