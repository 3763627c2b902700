"""Output stage-out in the POST step: CRAB's ASO transfers on crabtui's simulated grid.

After a successful job, PostJob (:mod:`engine.crab.ap.postjob`) calls :func:`stage_out`, which
transfers the job's output files (the framework job report's ``steps.cmsRun.output``, written in
the task directory) to the task's storage site: a directory standing for the site's storage
element, where a file's LFN ``/store/user/...`` is the path below the directory (see
:mod:`engine.crab.grid.storage`, which resolves ``Site.storageSite`` into the task's ``stageout``).

A transfer takes the storage site's latency plus the files' size (as the report gives it) over its
bandwidth, in simulated seconds, divided by ``Debug.timeScale``.  Until it is due the job's attempt
stays open, so the node is ``transferring``, and PostJob exits 4: the DAG's ``SCRIPT DEFER 4 ...
POST`` runs it again later, as CRAB's PostJob is re-run while its ASO transfers are pending.  The
last wait, shorter than one deferral, is slept out, so a transfer ends when it is due.  The files
land only then, all together, each through a temporary file and a rename.

The transfer record ``transfer_info/job.<id>.<crab_retry>.json`` (CRAB keeps its transfer documents
in ``transfer_info/`` too) is written on the first run: when the transfer started, when it is due,
the failure it will meet, and each file's source, LFN, destination and size.  The re-runs read it,
so a PostJob re-run after a crash goes on with the same transfer, and a file already at its
destination with the same bytes is not copied again: nothing is transferred twice or lost.

Failures, with CRAB's stage-out exit codes; which one a transfer meets comes from the failure plan
(``stageout = CODE`` for a job and attempt; any plan entry for the attempt rules out the storage
site's failures) or from one draw of the storage site's failure profile, seeded by (task, job,
attempt), so the same attempt fails the same way every time:

* recoverable: 60307 and 60311 (error during stage-out), 60403 (stage-out timeout), the stage-out
  codes of EXIT_RETRY_POLICY.  The attempt is classified as if the job had ended with that code, so
  the retry policy decides: a retry after its cooloff, within the retry count, or fatal.
* permanent (CRAB's ``PermanentStageoutError``): 60322 (permission denied), 60323 (quota exceeded),
  60324 (CRAB's code for a permanent stage-out failure without a known cause): the job fails for
  good with that code, until a ``crab resubmit``.
* 60317: a transfer not done after CRAB's ASO timeout (6 h, scaled) is cancelled and fails for
  good; a plan or profile entry 60317 makes the transfer hang until then.
* The copy's own errors: permission or read-only 60322, a full disk or quota 60323, a missing
  output file or anything else 60307.

Standard library only: PostJob runs it on a real submit host too.
"""

from __future__ import annotations

import dataclasses
import errno
import filecmp
import json
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from engine.atomic import copy_atomically, write_atomically
from engine.crab.ap.retry_policy import Decision, JobState, Limits, decide, policy_for
from engine.crab.jsonfile import read_json

__all__ = [
    "ASO_TIMEOUT_S", "DEFAULT_PERMANENT", "PERMANENT", "RECOVERABLE", "STAGEOUT_CODES", "STUCK", "TransferError",
    "code_meaning", "job_lfn", "lfn_base", "stage_out", "staged_outputs", "transfer_files", "transfer_path",
]

RECOVERABLE = (60307, 60311, 60403)
"""Stage-out codes the retry policy retries (crab-spec §2.4, EXIT_RETRY_POLICY)."""
PERMANENT = {  # ServerUtilities.STAGEOUT_ERRORS' messages; 60324 is PostJob's default code
    60317: "ASO Transfer canceled due to timeout.",
    60322: "Permission denied.",
    60323: "Disk quota exceeded.",
    60324: "Transfer to the storage site failed.",
}
STUCK = 60317
DEFAULT_PERMANENT = 60324
STAGEOUT_CODES = RECOVERABLE + tuple(PERMANENT)
"""Every code a failure plan's ``stageout`` or a storage site's failure profile may name."""
ASO_TIMEOUT_S = 6 * 3600
"""PostJob's wait for its transfers without ``CRAB_ASOTimeout``, in simulated seconds."""
TRANSFER_DIR = "transfer_info"
SCHEMA = "crabtui.transfer/1"
_MB = 1_000_000  # bytes; the report's writeTotalMB counts so


class TransferError(Exception):
    """A transfer record that cannot be read; names the file."""


def code_meaning(code: int) -> str | None:
    """CRAB's message for a stage-out exit code; None for other codes."""
    if code in RECOVERABLE:
        policy = policy_for(code)
        return policy.msg if policy else None
    return PERMANENT.get(code)


# --- where files go -------------------------------------------------------------------------

def lfn_base(task_name: str, user: str, primary_dataset: str, request_name: str, *,
             out_lfn_dir_base: str | None = None, output_dataset_tag: str | None = None) -> str:
    """The task's output directory as CRAB names it (DagmanCreator ``makeLFNPrefixes``):
    ``<Data.outLFNDirBase>/<primary dataset>/<Data.outputDatasetTag>/<YYMMDD_HHMMSS>``, by default
    ``/store/user/<user>/<primary dataset>/crab_<requestName>/...``; the primary dataset is the
    input dataset's, or ``Data.outputPrimaryDataset``.  The tag names the directory whether or not
    anything is published."""
    timestamp = task_name.split(":", 1)[0]
    base = (out_lfn_dir_base or f"/store/user/{user}").rstrip("/")
    return f"{base}/{primary_dataset}/{output_dataset_tag or 'crab_' + request_name}/{timestamp}"


def job_lfn(base: str, job_id: str, name: str) -> str:
    """A job's output file in the task's directory: CRAB's ``<counter>/<name>``, the counter
    ``%04d`` of job number // 1000 (the last number of ``N``, ``0-N`` and ``N-M`` ids)."""
    number = int(job_id.split("-")[-1])
    return f"{base}/{number // 1000:04d}/{name}"


def transfer_path(task_dir: str, job_id: str, crab_retry: int) -> str:
    return os.path.join(task_dir, TRANSFER_DIR, f"job.{job_id}.{crab_retry}.json")


def staged_outputs(task_dir: str, job_id: str, crab_retry: int) -> list[str]:
    """Where attempt ``crab_retry`` of the job put its outputs at the storage site (the files of
    its transfer record; none before its transfer began, or if its record cannot be read)."""
    return [f["pfn"] for f in transfer_files(task_dir, job_id, crab_retry)]


def transfer_files(task_dir: str, job_id: str, crab_retry: int) -> list[dict]:
    """The files of attempt ``crab_retry``'s transfer record, each with its ``lfn`` and ``pfn`` (the
    path at the storage site, there once the transfer succeeded); none without a readable record."""
    try:
        return _load(transfer_path(task_dir, job_id, crab_retry))["files"]
    except (OSError, TransferError):
        return []


# --- the transfer ---------------------------------------------------------------------------

def stage_out(task_dir: str, task: Mapping[str, Any], state: JobState, report: dict, ok: Decision, *,
              limits: Limits, job_ad: Mapping[str, Any] | None = None, clock: Callable[[], float] = time.time,
              sleep: Callable[[float], None] = time.sleep) -> Decision | None:
    """PostJob after ``ok`` (its decision for a successful job): the attempt's decision once its
    outputs are staged out (``ok``), or failed to be; None while the transfer is pending, for
    PostJob to exit 4 (DEFER).  ``task`` is the task's ``task.json`` with its ``stageout``.  A
    probe job's outputs are not transferred."""
    # Only here: the configuration and the status import this module for its codes alone.
    from engine.crab.taskworker.automatic import stage_of
    from engine.crab.taskworker.dagman_creator import POSTJOB_DEFER_S  # the DAG's POST DEFER time (format_dag)

    conf = task["stageout"]
    job = state.job_id
    if stage_of(job) == "probe":  # CRAB sets CRAB_TransferOutputs = 0 for automatic splitting's probes
        return ok
    path = transfer_path(task_dir, job, state.crab_retry)
    record = _load(path) if os.path.exists(path) else None
    if record is None:
        record = _plan(task_dir, task, job, len(state.attempts), report, clock())
        if not record["files"]:
            return ok
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, json.dumps(record, indent=1) + "\n")
    due = record["due"]
    end = record["timeout_at"] if due is None else min(due, record["timeout_at"])
    wait = end - clock()
    if wait > max(1, round(POSTJOB_DEFER_S / float(task["time_scale"]))):
        return None
    if wait > 0:
        sleep(wait)
    names = ", ".join(os.path.basename(f["lfn"]) for f in record["files"])
    where = f"to {conf['site']}"
    if due is None or due > record["timeout_at"]:
        return _failed(STUCK, f"Cancelled ASO transfer after timeout of {ASO_TIMEOUT_S} seconds: {names} {where}.",
                       ok, state, report, limits, job_ad, clock())
    failure = record["failure"]
    if failure is not None:
        return _failed(failure["exitCode"], f"Transfer of {names} {where} failed ({failure['source']}: exit code "
                       f"{failure['exitCode']}).", ok, state, report, limits, job_ad, clock())
    for f in record["files"]:
        try:  # a source the DAG's scripts wrote relative to the task directory (theirs is ".")
            _land(f["source"] and os.path.join(task_dir, f["source"]), f["pfn"])
        except OSError as e:
            code = (60322 if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
                    else 60323 if e.errno in (errno.ENOSPC, errno.EDQUOT) else RECOVERABLE[0])
            return _failed(code, f"Transfer of {os.path.basename(f['lfn'])} {where} failed: {e.strerror or e} "
                           f"({e.filename or f['pfn']}).", ok, state, report, limits, job_ad, clock())
    return ok


def _plan(task_dir: str, task: Mapping[str, Any], job: str, attempt: int, report: dict, now: float) -> dict:
    """The transfer record of a new transfer of the job's outputs, starting ``now``."""
    conf = task["stageout"]
    files = []
    for items in report["steps"]["cmsRun"]["output"].values():
        for item in items:
            local = str(item.get("pfn") or "")
            lfn = job_lfn(conf["lfn_base"], job, os.path.basename(local))
            files.append({"source": os.path.join(task_dir, local) if local else "", "lfn": lfn,
                          "pfn": os.path.join(conf["directory"], lfn.lstrip("/")), "size": int(item["size"])})
    scale = float(task["time_scale"])
    code = _failure(task, conf, job, attempt)
    simulated = conf["latency"] + sum(f["size"] for f in files) / _MB / conf["bandwidth"]
    return {"schema": SCHEMA, "site": conf["site"], "start": now,
            "due": None if code is not None and code[0] == STUCK else now + simulated / scale,
            "timeout_at": now + ASO_TIMEOUT_S / scale,
            "failure": None if code is None or code[0] == STUCK else {"exitCode": code[0], "source": code[1]},
            "files": files}


def _failure(task: Mapping[str, Any], conf: Mapping[str, Any], job: str, attempt: int) -> tuple[int, str] | None:
    """(exit code, "plan" or "storage site") of the failure this transfer meets, None for none."""
    from engine.crab.wn.failure_plan import planned_failure, seeded_rng

    entry = planned_failure(task.get("failure_plan") or (), job, attempt)
    if entry is not None:
        return None if entry.get("stageout") is None else (int(entry["stageout"]), "failure plan")
    draw = seeded_rng(f"{task['name']}/{job}/{attempt}/stageout").random()
    total = 0.0
    for item in conf.get("failures") or ():
        total += float(item["probability"])
        if draw < total:
            return int(item["exitCode"]), f"{conf['site']}'s failure profile"
    return None


def _failed(code: int, detail: str, ok: Decision, state: JobState, report: dict, limits: Limits,
            job_ad: Mapping[str, Any] | None, now: float) -> Decision:
    """The decision for a failed transfer: the retry policy's for a recoverable code (as if the
    job had exited with it), else fatal with the code."""
    if code in RECOVERABLE:
        decision = decide(0, {**report, "exitCode": code, "exitMsg": detail}, state, limits, now, job_ad=job_ad)
        reason = f"{decision.reason} {detail}"
        return dataclasses.replace(decision, reason=reason,
                                   attempt=decision.attempt and dataclasses.replace(decision.attempt, reason=reason))
    reason = (f"{PERMANENT.get(code, PERMANENT[DEFAULT_PERMANENT])} {detail} There was at least one permanent "
              f"stageout error; user will need to resubmit.")
    attempt = ok.attempt and dataclasses.replace(ok.attempt, exit_code=code, action="fatal", reason=reason)
    return Decision("fatal", reason, code, attempt)


def _land(source: str, pfn: str) -> None:
    """Put ``source`` at ``pfn`` all at once (a copy to ``<pfn>.part``, fsync, rename), unless
    ``pfn`` already holds the same bytes."""
    if not source or not os.path.isfile(source):
        raise FileNotFoundError(errno.ENOENT, "the job's output file is missing", source or "(no pfn in the report)")
    if os.path.isfile(pfn) and filecmp.cmp(source, pfn, shallow=False):
        return
    os.makedirs(os.path.dirname(pfn), exist_ok=True)
    copy_atomically(source, pfn)


def _load(path: str) -> dict:
    record = read_json(path, TransferError, what=" the transfer record")
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        raise TransferError(f"{path}: not a transfer record of schema {SCHEMA}; delete it to start the "
                            "transfer again")
    return record
