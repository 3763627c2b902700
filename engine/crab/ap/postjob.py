"""CRAB's PostJob: ``python3 -m engine.crab.ap.postjob JOBID RETURN DAG_RETRY MAX_RETRIES JOB_ID TASK_DIR``.

It classifies the attempt that just ended (:func:`engine.crab.ap.retry_policy.decide`, CRAB's
RetryJob), records it in the job's retry state and in the task's site statistics (the automatic
site blacklist's counts, :mod:`engine.crab.ap.sites`), and exits with CRAB's code for DAGMan: 0 done,
1 retry (after the cooloff PreJob waits out), 2 fatal, 3 abort the DAG.  What it knows of the job
comes from the job's own event log (its times, a hold or removal) and its framework job report.
A successful job's outputs are staged out first (:mod:`engine.crab.ap.stageout`, CRAB's ASO): while
the transfer is pending it exits 4 (DEFER) and the attempt stays open, so the node is
``transferring``; the transfer's outcome is then the attempt's.  Like CRAB's, it adds its own exit
status and message (and a failed stage-out's code) to the report's ``postjob`` section.
Standard library plus htcondor2's event-log reader, which real HTCondor's DAG hosts have too.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from engine.crab.ap.retry_policy import (ACTIONS, Decision, JobReturnCode, JobState, Limits, decide, load_job_state,
                                         record, save_state, state_path)
from engine.crab.ap.sites import record_attempt
from engine.crab.ap.stageout import STAGEOUT_CODES, stage_out
from engine.crab.taskworker.dagman_creator import read_task, task_ad
from engine.crab.wn import fjr


def job_facts(log_path: str, cluster: int) -> dict:
    """The finished job's ClassAd facts RetryJob reads, from its user log: run times, the hold or
    removal that ended it, and the site of its latest execution (``JOBGLIDEIN_CMSSite`` of its
    JobAdInformation events) and its memory (the ResidentSetSize, KB, of its last image size event):
    a pool brings no report back from a job it removed, and once the job has left its slot the
    pool logs the attribute unexpanded, ``$$(GLIDEIN_CMSSite:Unknown)``.
    A run a hold or an eviction ended has ``LastVacateTime``, as HTCondor's ad: a job held, then
    removed after 7 minutes, ran until its hold, and the time it spent held is no wall time."""
    import htcondor2  # only here: PreJob and the tests of the policy need no bindings

    facts: dict = {}
    if not os.path.exists(log_path):
        return facts
    T = htcondor2.JobEventType
    vacated = {T.JOB_HELD, T.JOB_EVICTED, T.SHADOW_EXCEPTION, T.JOB_RECONNECT_FAILED}
    for event in htcondor2.JobEventLog(log_path).events(stop_after=0):
        if event.cluster != cluster:
            continue
        if event.type == T.EXECUTE:
            facts["JobCurrentStartDate"] = event.timestamp
            facts.pop("JOBGLIDEIN_CMSSite", None)
            facts.pop("LastVacateTime", None)
            facts.pop("ResidentSetSize", None)
        elif event.type == T.IMAGE_SIZE and "LastVacateTime" not in facts:
            facts["ResidentSetSize"] = event.get("ResidentSetSize", facts.get("ResidentSetSize"))
        elif event.type == T.JOB_AD_INFORMATION:
            site = event.get("JOBGLIDEIN_CMSSite")
            if isinstance(site, str) and site and site != "Unknown" and not site.startswith("$$("):
                facts["JOBGLIDEIN_CMSSite"] = site
        elif event.type in vacated and "JobCurrentStartDate" in facts:
            facts.setdefault("LastVacateTime", event.timestamp)  # the run's end: the first of a hold's events
        if event.type == T.JOB_HELD:
            facts["HoldReason"] = event.get("HoldReason", "")
        elif event.type in (T.JOB_TERMINATED, T.JOB_ABORTED):
            facts["CompletionDate"] = event.timestamp
            if event.type == T.JOB_ABORTED:
                facts["RemoveReason"] = event.get("Reason", "")
    return facts


def write_postjob_section(report_path: str, report: dict, decision: Decision) -> None:
    """CRAB's ``job_fjr['postjob']``: PostJob's exit status and message, and ``ASOExitCode`` when
    the stage-out failed, in the job's report (CRAB's job_fjr.<id>.<retry>.json is a copy of the
    report; here the report is kept per retry already)."""
    section = {"exitCode": decision.status, "exitMsg": "" if decision.action == "ok" else decision.reason}
    if report["exitCode"] == 0 and decision.exit_code in STAGEOUT_CODES:
        section["ASOExitCode"] = decision.exit_code
    fjr.write_report(report_path, {**report, "postjob": section})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m engine.crab.ap.postjob")
    parser.add_argument("condor_id", help="DAGMan's $JOBID: cluster.proc")
    parser.add_argument("return_value", type=int, help="DAGMan's $RETURN")
    parser.add_argument("dag_retry", type=int)
    parser.add_argument("max_retries", type=int)
    parser.add_argument("job_id")
    parser.add_argument("task_dir")
    args = parser.parse_args(argv)
    state = load_job_state(args.task_dir, args.job_id)
    last = state.attempts[-1] if state.attempts else None
    if state.open_attempt is None and last is not None and last.dag_retry == args.dag_retry:
        # A DAGMan that died after this PostJob recorded the attempt, but before it logged the
        # POST script's end, runs it again in recovery: answer as the first run did.
        print(f"job {args.job_id}: attempt {last.crab_retry} is recorded already: {last.action}")
        return int(ACTIONS[last.action])
    return close_attempt(args.task_dir, args.job_id, state, int(args.condor_id.split(".")[0] or 0), args.return_value)


def close_attempt(task_dir: str, job_id: str, state: JobState, cluster: int, return_value: int) -> int:
    """Classify the open attempt of ``state``, whose job was ``cluster`` and returned
    ``return_value``, record the decision and return its status for DAGMan."""
    task = read_task(task_dir)
    report_path = os.path.join(task_dir, f"jobReport.json.{job_id}.{state.crab_retry}")
    try:
        report = fjr.read_report(report_path)
    except (OSError, fjr.FJRError):
        report = None
    facts = job_facts(os.path.join(task_dir, f"job_log.{job_id}"), cluster)
    limits = Limits(max_retries=task_ad(task).max_executions(job_id), time_scale=task["time_scale"])
    decision = run = decide(return_value, report, state, limits, time.time(), job_ad=facts)
    if decision.action == "ok" and report is not None and task.get("stageout"):
        decision = stage_out(task_dir, task, state, report, decision, limits=limits, job_ad=facts)
        if decision is None:
            print(f"job {job_id}: its outputs are being transferred to {task['stageout']['site']}: "
                  "DEFERRING. PostJob will run again")
            return JobReturnCode.DEFER
    if report is not None:
        write_postjob_section(report_path, report, decision)
    # First: counting it twice changes nothing.  The job's own outcome counts at its site, as CRAB's
    # RetryJob counts it before ASO: a failed stage-out is the storage site's, not the job's site's.
    record_attempt(task_dir, job_id, run.attempt)
    save_state(state_path(task_dir, job_id), record(state, decision))
    print(f"job {job_id}: {decision.action}: {decision.reason}")
    return decision.status


def ended_job(task_dir: str, job_id: str) -> tuple[int, int] | None:
    """The cluster and DAGMan's $RETURN of the job's last run, from its event log; None if its
    last job has not terminated (or never ran)."""
    import htcondor2

    path = os.path.join(task_dir, f"job_log.{job_id}")
    if not os.path.exists(path):
        return None
    ended = None
    for event in htcondor2.JobEventLog(path).events(stop_after=0):
        if event.type == htcondor2.JobEventType.SUBMIT:
            ended = None
        elif event.type == htcondor2.JobEventType.JOB_TERMINATED:
            normal = event.get("TerminatedNormally", True)
            ended = (event.cluster, event["ReturnValue"] if normal else -event["TerminatedBySignal"])
    return ended


def post_ends(nodes_log: str) -> set[tuple[str, int]]:
    """The (node, job cluster) of every POST script end DAGMan has logged in ``nodes_log``: a
    PostJob that left its attempt open there died (a deferral logs no end).  One read serves
    every job of a PreDAG run, since the log of a large stage is long."""
    import htcondor2

    if not os.path.exists(nodes_log):
        return set()
    events = htcondor2.JobEventLog(nodes_log).events(stop_after=0)
    return {(event.get("DAGNodeName"), event.cluster) for event in events
            if event.type == htcondor2.JobEventType.POST_SCRIPT_TERMINATED}


if __name__ == "__main__":
    sys.exit(main())
