"""The job wrapper of crabtui's simulated grid: the executable of every CRAB job.

Run as ``python3 -m engine.crab.wn.wrapper`` (what CRAB's ``CMSRunAnalysis.sh`` is on the grid). It
reads the job's ClassAd (``_CONDOR_JOB_AD``) and the slot's machine ad (``_CONDOR_MACHINE_AD``,
written by the embedded starter and by HTCondor's; read by :mod:`engine.crab.wn.jobad`), decides
whether the simulated grid makes this attempt fail, runs the payload, always leaves a framework
job report (:mod:`engine.crab.wn.fjr`) and exits with the report's exit code modulo 256. Standard
library only: it runs on any execute node, with ``engine`` on ``PYTHONPATH`` (the wrapper passes
that on to the simulated cmsRun).

The job ad attributes it reads (names in ClassAd case-insensitivity; ``CRABTUI_`` ones are
crabtui's, set by the task's submit files)::

    CRAB_Id               job id (string or integer), required
    CRAB_Retry            crab_retry, default 0
    CRAB_ReqName          the task's name; seeds the randomness with the job id and attempt
    RequestMemory         MB; more (simulated) resident memory ends the job as below
    NumHolds              how often the schedd has held the job; a released job is not held again
    CRABTUI_Attempt       the attempt (from 1, across retries and resubmissions); default CRAB_Retry + 1
    CRABTUI_TimeScale     simulated seconds per real second, default 1
    CRABTUI_InputFile     the simulated cmsRun's input (engine.crab.wn.job_input), required without a script
    CRABTUI_StopAfter     simulated seconds after which cmsRun begins no new lumi; absent or <= 0: no limit
    CRABTUI_FailurePlan   JSON string: Debug.failurePlan entries in the config's form,
                          [{"job": "2", "attempt": 1, "exitCode": 8021}, {"job": "4", "attempt": "*", ...}]
                          (this job's entries or the whole plan; see plan_json)
    CRABTUI_ScriptExe     the user's executable (JobType.scriptExe) instead of the simulated cmsRun
    CRABTUI_ScriptArgs    JSON string: a list of its arguments (JobType.scriptArgs), after the job id
    CRABTUI_Sandbox       the task's sandbox directory (engine.crab.client.sandbox): the script, PSet.py and
                          JobType.inputFiles, copied into a scratch directory ``scratch.<id>.<attempt>``
                          where the script runs (CRABTUI_ScriptExe is then its name there), as CRAB's job
                          unpacks its sandbox in the glidein's working directory
    CRAB_AdditionalOutputFiles  JSON string: the file names the script must write (JobType.outputFiles),
                          renamed <name>_<CRAB_Id><ext> and listed in the report's outputs for stage-out;
                          a successful script that did not write one fails with 60302, as cmscp fails it
    CRABTUI_JobReport     where to write the report; default jobReport.json.<CRAB_Id> in the job's directory
    CRABTUI_OutputFile    where the simulated cmsRun writes its (placeholder) output file on success

From the machine ad: ``GLIDEIN_CMSSite`` (the report's ``executed_site``; else the job ad's
``MATCH_GLIDEIN_CMSSite``), ``CRABTUI_SiteSpeed`` (default 1.0) and ``CRABTUI_SiteFailures`` (the
site's failure profile as JSON, see :mod:`engine.schedd.local.pool`).

Which failure an attempt gets: the failure plan's entry for (job id, attempt), an exact attempt
before ``"*"``; else one draw from the site's failure profile with a generator seeded by (task,
job id, attempt), so the same attempt fails the same way every time. A plan entry with
``exitCode = 0`` forces success (no site failure either), and so does one with ``stageout = N``:
its failure comes later, in PostJob's stage-out (:mod:`engine.crab.ap.stageout`).

What the caller sees, per kind of failure:

* ``exitCode = N``: the payload fails with N part-way through (cmsRun: at a lumi drawn from the
  seed); the report's ``exitCode`` is N, the process exits ``N % 256`` (8021 -> 85), as on the grid.
  With a user script, N replaces the script's exit code if the script succeeded.
* ``memoryMB = M``: the payload's resident memory grows to M MB (simulated: nothing is allocated).
  The report's ``PeakValueRss`` is M. If M exceeds RequestMemory the job ends there, as a job over
  its memory does on the grid: the report says exit code 50660 "Job killed by HTCondor due to
  excessive memory use (M MB used vs. R MB requested)", and the wrapper then kills itself with
  SIGKILL, so the schedd records ExitBySignal = true, ExitSignal = 9 (DAGMan's $RETURN is -9). The
  schedd's own MemoryUsage stays what was really used; callers read the report.
* ``hold = C``: the wrapper does not run the payload; it writes a report with exit code
  :data:`~engine.crab.wn.failure_plan.HOLD_EXIT_CODE` and exits with it at once. A job cannot
  hold itself, so the submit description must carry the plan's
  :func:`~engine.crab.wn.failure_plan.exit_hold_commands`: then the schedd (embedded or real)
  holds the job with HoldReasonCode 3 (OnExitHold) and HoldReasonSubCode C. Without them, the job
  simply completes with exit code 213. Only the attempt's first execution is held: once the schedd
  (or the user) has released it (``NumHolds`` > 0), it runs its payload, as a job whose stage-in
  failed once does. A release policy reads the code through
  :data:`~engine.crab.wn.failure_plan.PLANNED_HOLD_CODE`.

The report's ``crabtui`` section says where the wrapper's code came from (``code``: the directory
holding ``engine``, or on a pool the job's sandbox archive in its scratch directory), so a test can
tell that a worker node read nothing of crabtui's checkout.

Problems of the wrapper's own (a bad job ad, an unreadable input) give exit code 50113 (CRAB's
"missing arguments"); a script that cannot start 10040; a payload that exits 0 without a usable
report 50115 (CRAB's "no FJR"); a payload killed by signal S 128 + S (137 for SIGKILL).

A job that HTCondor stops (SIGTERM: removed with its task, held, evicted) ends as CRAB's wrapper
ends it (``CMSRunAnalysis.sighandler``): exit code 50669, "Job was killed with signal 15".  The
report says so at once, with the site and the time run so far, in case HTCondor's SIGKILL follows
its grace time; the wrapper then passes the signal on to its process group (HTCondor's starter
signals the job's first process alone; the embedded one signals the group, so there the payload
has it twice) and waits for its payload, so that a payload that winds down gets the grace time,
and one that ignores the signal runs until the SIGKILL (the job shows ``killing`` meanwhile).

A job that fails takes at least :data:`MIN_FAILED_RUNTIME_S` (20 simulated minutes, seed 000:
"the CRAB3 wrapper forces the minimum job runtime to be at least 20 minutes; this prevents a
single worker node from failing too many jobs"): the wrapper sleeps out the rest before it exits,
as CRAB's ``CMSRunAnalysis.py`` (``mintime``) did for failing jobs, unless ``CRAB3_RUNTIME_DEBUG``
is set in its environment, as there.  A job that succeeds, is held by the plan, or is killed for
its memory (HTCondor kills it, so no wrapper code runs) ends at once; so does one whose job ad
cannot be read, since its clock is unknown.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.crab.wn import cmsrun, fjr
from engine.crab.wn.failure_plan import HOLD_EXIT_CODE, check_plan, planned_failure, seeded_rng
from engine.crab.wn.jobad import Ad, Expression, read_ad, site_failures, site_speed

__all__ = ["Failure", "WrapperError", "choose_failure", "main", "run_job"]

MISSING_ARGUMENT = 50113  # CRAB's EC_MissingArg
WRAPPER_ERROR = 10040  # CRAB's EC_CMSRunWrapper
NO_REPORT = 50115  # CRAB's EC_ReportHandlingErr
OUTPUT_MISSING = 60302  # cmscp's code for an output file the job did not write
KILLED_BY_SIGNAL = 50669  # CRAB's wrapper exits with it on SIGTERM
MIN_FAILED_RUNTIME_S = 20 * 60  # seed 000; simulated seconds
# The interpreter for cmsRun: this one, which Python cannot name when a job's ``#!/usr/bin/env
# python3`` found it without a PATH (HTCondor gives a job none of its own); then env's default path.
_PYTHON = sys.executable or shutil.which("python3", path=os.environ.get("PATH") or os.defpath) or "python3"
_PACKAGE_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))  # where engine/ is


class WrapperError(Exception):
    """What stops the wrapper before the payload runs; ``code`` is the report's exit code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------------------------ the failure plan

@dataclass(frozen=True, slots=True)
class Failure:
    """The failure the simulated grid gives one attempt; ``source`` is "plan" or "site"."""

    source: str
    exit_code: int | None = None
    memory_mb: int | None = None
    hold: int | None = None

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"source": self.source}
        for key, value in (("exitCode", self.exit_code), ("memoryMB", self.memory_mb), ("hold", self.hold)):
            if value is not None:
                entry[key] = value
        return entry


def choose_failure(plan: Iterable[Any], profile: list[dict[str, Any]], task: str, job: str,
                   attempt: int) -> Failure | None:
    """The failure of this attempt: the plan's entry if any (``exitCode = 0`` or ``stageout``:
    none), else one deterministic draw from the site's ``profile``."""
    entry = planned_failure(plan, job, attempt)
    if entry is not None:
        if entry.get("exitCode") == 0 or entry.get("stageout") is not None:
            return None
        return Failure("plan", exit_code=entry.get("exitCode"), memory_mb=entry.get("memoryMB"),
                       hold=entry.get("hold"))
    draw = seeded_rng(f"{task}/{job}/{attempt}/site").random()
    total = 0.0
    for item in profile:
        total += float(item["probability"])
        if draw < total:
            return Failure("site", exit_code=item.get("exitCode"), memory_mb=item.get("memoryMB"))
    return None


# ------------------------------------------------------------------------------------ the job

@dataclass(slots=True)
class _Job:
    job_id: str
    retry: int
    attempt: int
    task: str
    request_memory: float | None
    time_scale: float
    input_file: str | None
    stop_after: float | None
    plan: list[dict[str, Any]]
    script: str | None
    script_args: list[str]
    output_files: list[str]  # JobType.outputFiles: what the script must write
    report: str
    output_file: str | None
    sandbox: str | None = None
    held_before: bool = False  # the schedd held this job already (and released it)

    @property
    def seed(self) -> str:
        return f"{self.task}/{self.job_id}/{self.attempt}"


def _number(ad: Ad, name: str, default: float | None) -> float | None:
    value = ad.get(name)
    if value is None or isinstance(value, Expression):
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WrapperError(MISSING_ARGUMENT, f"job ad attribute {name} must be a number, got {value!r}")
    return float(value)


def _string_list(ad: Ad, name: str) -> list[str]:
    """A job ad attribute holding a JSON list of strings in a ClassAd string; [] when not set."""
    text = ad.get(name)
    if text is None:
        return []
    try:
        items = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        items = None
    if not isinstance(items, list) or not all(isinstance(a, str) for a in items):
        raise WrapperError(MISSING_ARGUMENT, f"job ad attribute {name} must be a JSON list of strings, got {text!r}")
    return items


def _job(ad: Ad) -> _Job:
    job_id = ad.get("CRAB_Id")
    if job_id is None or isinstance(job_id, (Expression, bool, float)):
        raise WrapperError(MISSING_ARGUMENT, "the job ad has no CRAB_Id (the job id as a string or integer)")
    job_id = str(job_id)
    retry = int(_number(ad, "CRAB_Retry", 0))
    attempt = int(_number(ad, "CRABTUI_Attempt", retry + 1))
    scale = _number(ad, "CRABTUI_TimeScale", 1.0)
    if scale <= 0:
        raise WrapperError(MISSING_ARGUMENT, f"job ad attribute CRABTUI_TimeScale must be > 0, got {scale:g}")
    stop_after = _number(ad, "CRABTUI_StopAfter", None)
    plan_text = ad.get("CRABTUI_FailurePlan")
    plan: list[dict[str, Any]] = []
    if plan_text is not None:
        try:
            plan = check_plan(json.loads(plan_text) if isinstance(plan_text, str) else None)
        except (ValueError, json.JSONDecodeError) as e:
            raise WrapperError(MISSING_ARGUMENT, f"job ad attribute CRABTUI_FailurePlan: {e}") from None
    strings = {}
    for name in ("CRAB_ReqName", "CRABTUI_InputFile", "CRABTUI_ScriptExe", "CRABTUI_JobReport", "CRABTUI_OutputFile",
                 "CRABTUI_Sandbox"):
        value = ad.get(name)
        if value is not None and not isinstance(value, str):
            raise WrapperError(MISSING_ARGUMENT, f"job ad attribute {name} must be a string, got {value!r}")
        strings[name] = value or None
    if strings["CRABTUI_ScriptExe"] is None and strings["CRABTUI_InputFile"] is None:
        raise WrapperError(MISSING_ARGUMENT, "the job ad names neither CRABTUI_ScriptExe (the user's executable) "
                                             "nor CRABTUI_InputFile (the simulated cmsRun's input)")
    return _Job(job_id=job_id, retry=retry, attempt=attempt, task=strings["CRAB_ReqName"] or "",
                request_memory=_number(ad, "RequestMemory", None), time_scale=scale,
                input_file=strings["CRABTUI_InputFile"], stop_after=stop_after if stop_after and stop_after > 0 else None,
                plan=plan, script=strings["CRABTUI_ScriptExe"], script_args=_string_list(ad, "CRABTUI_ScriptArgs"),
                output_files=_string_list(ad, "CRAB_AdditionalOutputFiles"),
                report=strings["CRABTUI_JobReport"] or f"{fjr.FJR_NAME}.{job_id}",
                output_file=strings["CRABTUI_OutputFile"], sandbox=strings["CRABTUI_Sandbox"],
                held_before=_number(ad, "NumHolds", 0) > 0)


def _say(message: str) -> None:
    print(f"==== crabtui wrapper {time.strftime('%Y-%m-%d %H:%M:%S')}: {message}", flush=True)


def _status_code(returncode: int) -> int:
    """A payload's exit code as a shell reports it: 128 + S for a process killed by signal S."""
    return 128 - returncode if returncode < 0 else returncode


def _cmsrun_argv(job: _Job, site: str | None, speed: float, input_file: str, report: str) -> list[str]:
    """The simulated cmsRun's command line for the job, the wrapper's own or its script's."""
    argv = [_PYTHON, "-m", "engine.crab.wn.cmsrun", input_file, "--report", report,
            "--speed", repr(speed), "--time-scale", repr(job.time_scale), "--seed", job.seed]
    if site:
        argv += ["--site", site]
    if job.stop_after is not None:
        argv += ["--stop-after", repr(job.stop_after)]
    if job.request_memory is not None:
        argv += ["--memory-limit", repr(job.request_memory)]
    return argv


def _run_cmsrun(job: _Job, site: str | None, speed: float, failure: Failure | None) -> tuple[int, dict | None]:
    argv = _cmsrun_argv(job, site, speed, job.input_file, job.report)
    if failure is not None and failure.exit_code is not None:
        argv += ["--fail-exit-code", str(failure.exit_code)]
    if failure is not None and failure.memory_mb is not None:
        argv += ["--fail-memory", str(failure.memory_mb)]
    if job.output_file:
        argv += ["--output-file", job.output_file]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    _say("running the simulated cmsRun: " + " ".join(argv[1:]))
    returncode = subprocess.run(argv, env=env).returncode
    try:
        return _status_code(returncode), fjr.read_report(job.report)
    except fjr.FJRError as e:
        _say(f"cmsRun left no usable report: {e}")
        return _status_code(returncode), None


def _scratch(job: _Job) -> str:
    """A fresh copy of the task's sandbox for this attempt, where the script runs: it finds PSet.py
    and its input files beside it, and what it writes there is its own."""
    scratch = os.path.abspath(f"scratch.{job.job_id}.{job.attempt}")
    shutil.rmtree(scratch, ignore_errors=True)  # an execution of this attempt the schedd restarted
    try:
        shutil.copytree(job.sandbox, scratch, symlinks=True)
    except OSError as e:
        raise WrapperError(WRAPPER_ERROR, f"cannot unpack the task's sandbox {os.path.abspath(job.sandbox)}: "
                                          f"{e.strerror or e}") from None
    return scratch


def _kept_outputs(report: dict, scratch: str | None) -> bool:
    """Point the output files a script's own report lists at their place from the job's directory
    (where PostJob reads them, and whose files come back from a pool's execute node): one written
    in its scratch directory there, and the script's cmsRun's beside the report by its name; whether
    any is in the scratch directory."""
    here, kept = os.getcwd(), False
    for item in (item for files in report["steps"]["cmsRun"]["output"].values() for item in files):
        pfn = item.get("pfn")
        if pfn and os.path.isabs(pfn) and os.path.dirname(pfn) == here:
            item["pfn"] = os.path.basename(pfn)
        elif pfn and scratch and not os.path.isabs(pfn):
            item["pfn"] = os.path.join(os.path.basename(scratch), pfn)
            kept = True
    return kept


def _additional_outputs(job: _Job, scratch: str | None, report: dict | None) -> tuple[list[dict], str | None]:
    """The script's JobType.outputFiles, each renamed ``<name>_<job id><ext>``, as CRAB's job renames
    its outputs for stage-out (``hist.root`` is ``hist_3.root``), and moved beside the job's report
    (whose files a pool's execute node sends back, not those of the scratch directory), with its
    path from there; or cmscp's message for the first one it did not write.  Those its own
    ``report`` lists already are left as it lists them."""
    where = scratch or os.getcwd()
    listed = {os.path.basename(str(item.get("pfn") or "")) for files in
              (report["steps"]["cmsRun"]["output"].values() if report else ()) for item in files}
    outputs = []
    for name in (n for n in job.output_files if n not in listed):
        path = os.path.join(where, name)
        if not os.path.isfile(path):
            return [], f"Output file {name} does not exist."
        stem, ext = os.path.splitext(name)
        remote = os.path.abspath(f"{stem}_{job.job_id}{ext}")
        os.replace(path, remote)
        outputs.append({"pfn": os.path.relpath(remote), "size": os.path.getsize(remote), "events": 0, "lumis": {}})
    return outputs, None


def _cmsrun_for_script(job: _Job, site: str | None, speed: float) -> str:
    """A directory holding ``cmsRun`` for the user's script, as CRAB's job puts CMSSW's on its
    PATH (CRAB's script example runs ``cmsRun -j FrameworkJobReport.xml -p PSet.py``): it runs the
    simulated cmsRun on the job's input, whatever its arguments, writing the job's report (which
    the wrapper then reads as the script's own) and, beside it, ``output_<id>.root``, the name
    CRAB's job gives cmsRun's output for stage-out."""
    where = os.path.abspath(f"cmsrun.{job.job_id}.{job.attempt}")
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    argv = [*_cmsrun_argv(job, site, speed, os.path.abspath(job.input_file), os.path.abspath(job.report)),
            "--output-file", os.path.abspath(f"output_{job.job_id}.root")]
    path = os.path.join(where, "cmsRun")
    with open(path, "w") as f:
        f.write(f"#!{_PYTHON}\n\"\"\"cmsRun for a CRAB job's script: crabtui's simulated cmsRun on the job's input.\"\"\"\n"
                f"import os\nos.environ['PYTHONPATH'] = os.pathsep.join(p for p in ({_PACKAGE_ROOT!r}, "
                f"os.environ.get('PYTHONPATH')) if p)\nos.execv({_PYTHON!r}, {argv!r})\n")
    os.chmod(path, 0o755)
    return where


def _run_script(job: _Job, site: str | None, speed: float, failure: Failure | None) -> tuple[int, dict | None]:
    scratch = _scratch(job) if job.sandbox else None
    script = os.path.join(scratch, job.script) if scratch else os.path.abspath(job.script)
    argv = [script, job.job_id, *job.script_args]
    env = dict(os.environ)
    env.update({"CRAB_Id": job.job_id, "CRAB_Retry": str(job.retry), "CRABTUI_JOB_REPORT": os.path.abspath(job.report)})
    cmsrun_dir = None
    if job.input_file:
        env["CRABTUI_INPUT_FILE"] = os.path.abspath(job.input_file)
        cmsrun_dir = _cmsrun_for_script(job, site, speed)
        env["PATH"] = os.pathsep.join(p for p in (cmsrun_dir, env.get("PATH") or os.defpath) if p)
    _say("running the user's executable: " + " ".join(argv))
    start, wall0 = time.time(), time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        returncode = subprocess.run(argv, env=env, cwd=scratch).returncode
    except OSError as e:
        raise WrapperError(WRAPPER_ERROR, f"cannot run the user's executable {script}: {e.strerror or e}") from None
    finally:
        if cmsrun_dir:
            shutil.rmtree(cmsrun_dir, ignore_errors=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = _status_code(returncode)
    try:
        report = fjr.read_report(job.report)  # the script wrote its own
    except fjr.FJRError:
        report = None
    outputs, missing = _additional_outputs(job, scratch, report) if code == 0 else ([], None)
    if missing:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        _say(f"ERROR: {missing}")
        return OUTPUT_MISSING, fjr.minimal_report(OUTPUT_MISSING, missing, site, error_type="StageOutFailure",
                                                  start=start)
    listed = report is not None and _kept_outputs(report, scratch)
    if report is not None:  # its own report, and the outputs it did not list
        report["steps"]["cmsRun"]["output"].setdefault("output", []).extend(fjr.output_file(o) for o in outputs)
    if scratch and not outputs and not listed:
        shutil.rmtree(scratch, ignore_errors=True)  # the glidein's working directory goes with the job
    if report is not None:
        return code, report
    wall = (time.monotonic() - wall0) * job.time_scale
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * job.time_scale
    msg = "OK" if code == 0 else f"The user's executable exited with code {code}"
    report = fjr.build_report(
        exit_code=code, exit_msg=msg, site=site, start=start, stop=time.time(), inputs=[],
        outputs=outputs, errors=[{"type": "ExecutableFailure", "details": msg, "exitCode": code}] if code else [],
        cpu={"TotalJobTime": wall, "TotalJobCPU": cpu},
        memory={"PeakValueRss": after.ru_maxrss / 1024},
        crabtui={"simulated": False, "time_scale": job.time_scale})
    return code, report


def _apply_to_script(report: dict, job: _Job, failure: Failure | None) -> dict:
    """An injected failure on a user script's report: its exit code, or its memory trouble."""
    if failure is None or report["exitCode"] != 0:
        return report
    step = report["steps"]["cmsRun"]
    memory = step["performance"].setdefault("memory", {})
    code, msg, kind = 0, "OK", ""
    if failure.memory_mb is not None:
        memory["PeakValueRss"] = repr(float(failure.memory_mb))
        if job.request_memory is not None and failure.memory_mb > job.request_memory:
            code, kind = cmsrun.MEMORY_EXIT_CODE, "MemoryLimitExceeded"
            msg = (f"Job killed by HTCondor due to excessive memory use ({failure.memory_mb} MB used vs. "
                   f"{job.request_memory:.0f} MB requested)")
    elif failure.exit_code is not None:
        code, kind = failure.exit_code, cmsrun.ERROR_TYPES.get(failure.exit_code, "Fatal Exception")
        msg = "Failure injected by the simulated grid after the user's executable succeeded"
    if code:
        report.update(exitCode=code, exitMsg=msg, exitAcronym="FAILED", jobExitCode=code)
        step["status"] = code
        step["errors"] = [{"type": kind, "details": msg, "exitCode": code}]
        step["output"] = {}
    return report


def _sleep_out_failure(start: float, time_scale: float | None) -> None:
    """Seed 000's minimum runtime of a failed job: sleep until it has run 20 simulated minutes."""
    if time_scale is None or "CRAB3_RUNTIME_DEBUG" in os.environ:
        return
    remaining = MIN_FAILED_RUNTIME_S / time_scale - (time.time() - start)
    if remaining > 0:
        _say(f"Job runtime is less than 20 minutes. Sleeping {remaining * time_scale:.0f} simulated seconds "
             f"({remaining:.3g} s)")
        time.sleep(remaining)


class _Termination:
    """The wrapper's SIGTERM handler (see the module's description).  Before the payload has ended
    it writes the 50669 report and lets the payload be waited for; after, the report is the
    payload's, and the wrapper exits at once with its status (no more sleeping out a failure)."""

    def __init__(self, job: _Job, site: str | None, start: float, extra: dict[str, Any]) -> None:
        self.job, self.site, self.start, self.extra = job, site, start, extra
        self.received = False
        self.exit_status: int | None = None  # set once the payload's report is written

    def __call__(self, signum: int, frame: Any) -> None:
        if self.exit_status is not None:
            raise SystemExit(self.exit_status)
        if self.received:
            return
        self.received = True
        now = time.time()
        message = f"Job was killed with signal {signum}"
        _say(f"{message}; waiting for the payload to end")
        fjr.write_report(self.job.report, fjr.build_report(
            exit_code=KILLED_BY_SIGNAL, exit_msg=message, site=self.site, start=self.start, stop=now, inputs=[],
            errors=[{"type": "WrapperKilled", "details": message, "exitCode": KILLED_BY_SIGNAL}],
            cpu={"TotalJobTime": (now - self.start) * self.job.time_scale}, crabtui=self.extra))
        if os.getpgrp() == os.getpid():  # a real starter signals the job's first process alone
            os.killpg(os.getpid(), signum)  # so pass it on to the payload (this handler ignores the echo)


def run_job(job_ad_path: str, machine_ad_path: str | None) -> int:
    """Everything the wrapper does; returns the exit status (the caller may kill itself instead)."""
    start = time.time()
    report_path = fjr.FJR_NAME
    site: str | None = None
    extra: dict[str, Any] = {}
    time_scale: float | None = None  # known once the job ad is read
    try:
        try:
            ad = read_ad(job_ad_path)
        except (OSError, ValueError) as e:
            raise WrapperError(MISSING_ARGUMENT, f"cannot read the job ad {job_ad_path}: {e}") from None
        job = _job(ad)
        report_path = job.report
        time_scale = job.time_scale
        machine = Ad()
        if machine_ad_path:
            try:
                machine = read_ad(machine_ad_path)
            except (OSError, ValueError) as e:
                raise WrapperError(MISSING_ARGUMENT, f"cannot read the machine ad {machine_ad_path}: {e}") from None
        site = machine.get("GLIDEIN_CMSSite") or ad.get("MATCH_GLIDEIN_CMSSite")
        site = site if isinstance(site, str) else None
        speed = site_speed(machine)
        try:
            profile = site_failures(machine)
        except ValueError as e:
            raise WrapperError(MISSING_ARGUMENT, str(e)) from None
        failure = choose_failure(job.plan, profile, job.task, job.job_id, job.attempt)
        if failure is not None and failure.hold is not None and job.held_before:
            failure = None  # released after the planned hold: this execution runs the payload
        extra = {"job": job.job_id, "attempt": job.attempt, "crab_retry": job.retry,
                 "request_memory_mb": job.request_memory, "site_speed": speed, "time_scale": job.time_scale,
                 "injected": failure.as_json() if failure else None,
                 "payload": job.script or "cmsRun", "code": _PACKAGE_ROOT}
        _say(f"job {job.job_id} attempt {job.attempt} at {site or 'an unknown site'} (speed {speed:g})"
             + (f"; the simulated grid injects {failure.as_json()}" if failure else ""))
        try:
            os.unlink(job.report)  # a report left by an earlier attempt is not this one's
        except FileNotFoundError:
            pass
        terminated = _Termination(job, site, start, extra)
        signal.signal(signal.SIGTERM, terminated)
        if failure is not None and failure.hold is not None:
            report = fjr.minimal_report(HOLD_EXIT_CODE, f"The crabtui failure plan holds this attempt (hold code "
                                        f"{failure.hold}); the payload did not run", site, error_type="Held",
                                        start=start, crabtui=extra)
            fjr.write_report(job.report, report)
            _say(f"asking to be held: exit code {HOLD_EXIT_CODE}")
            return HOLD_EXIT_CODE
        if job.script:
            code, report = _run_script(job, site, speed, failure)
            if report is not None:
                report = _apply_to_script(report, job, failure)
        else:
            code, report = _run_cmsrun(job, site, speed, failure)
        if terminated.received:  # its report is written; the payload has ended
            _say(f"the payload has ended (exit code {code}) after the wrapper was killed")
            return cmsrun.exit_status(KILLED_BY_SIGNAL)
        if report is None:
            if code == 0:
                code = NO_REPORT
                msg = "The payload exited with code 0 but left no usable framework job report"
            else:
                msg = f"The payload exited with code {code} and left no usable framework job report"
            report = fjr.minimal_report(code, msg, site, error_type="PayloadFailure", start=start)
        if site and not report.get("executed_site"):
            report["executed_site"] = site
        report["crabtui"] = {**(report.get("crabtui") or {}), **extra}
        fjr.write_report(job.report, report)
        terminated.exit_status = cmsrun.exit_status(report["exitCode"])
        if terminated.received:  # while the report was written: it stands
            return terminated.exit_status
    except WrapperError as e:
        _say(f"failed: {e}")
        report = fjr.minimal_report(e.code, str(e), site, start=start, crabtui=extra or None)
        fjr.write_report(report_path, report)
        _sleep_out_failure(start, time_scale)
        return cmsrun.exit_status(e.code)
    code = report["exitCode"]
    _say(f"finished with exit code {code}; report in {job.report}")
    if code == cmsrun.MEMORY_EXIT_CODE:
        return -signal.SIGKILL
    if code:
        _sleep_out_failure(start, time_scale)
    return cmsrun.exit_status(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m engine.crab.wn.wrapper",
                                     description="Run a CRAB job's payload on crabtui's simulated grid.")
    parser.add_argument("--job-ad", default=os.environ.get("_CONDOR_JOB_AD"),
                        help="the job's ClassAd file (default $_CONDOR_JOB_AD)")
    parser.add_argument("--machine-ad", default=os.environ.get("_CONDOR_MACHINE_AD"),
                        help="the slot's machine ad file (default $_CONDOR_MACHINE_AD)")
    parser.add_argument("--jobId", help="the job's id, as CRAB's DagmanCreator passes it to the wrapper; the job "
                                        "ad's CRAB_Id says the same")
    args = parser.parse_args(argv)
    if not args.job_ad:
        parser.error("no job ad: run as an HTCondor job ($_CONDOR_JOB_AD) or give --job-ad")
    status = run_job(args.job_ad, args.machine_ad)
    if status == -signal.SIGKILL:  # over its memory: end as the grid ends such a job
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return status


if __name__ == "__main__":
    sys.exit(main())
