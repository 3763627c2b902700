"""CRAB's PostJob: ``python3 -m engine.crab.postjob JOBID RETURN DAG_RETRY MAX_RETRIES JOB_ID TASK_DIR``.

It classifies the attempt that just ended (:func:`engine.crab.retry_policy.decide`, CRAB's
RetryJob), records it in the job's retry state, and exits with CRAB's code for DAGMan: 0 done,
1 retry (after the cooloff PreJob waits out), 2 fatal, 3 abort the DAG.  What it knows of the job
comes from the job's own event log (its times, a hold or removal) and its framework job report.
Standard library plus htcondor2's event-log reader, which real HTCondor's DAG hosts have too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from engine.crab import fjr
from engine.crab.dagman_creator import TASK_FILE
from engine.crab.prejob import load_job_state
from engine.crab.retry_policy import Limits, decide, record, save_state, state_path


def job_facts(log_path: str, cluster: int) -> dict:
    """The finished job's ClassAd facts RetryJob reads, from its user log: run times, and the
    hold or removal that ended it."""
    import htcondor2  # only here: PreJob and the tests of the policy need no bindings

    facts: dict = {}
    if not os.path.exists(log_path):
        return facts
    T = htcondor2.JobEventType
    for event in htcondor2.JobEventLog(log_path).events(stop_after=0):
        if event.cluster != cluster:
            continue
        if event.type == T.EXECUTE:
            facts["JobCurrentStartDate"] = event.timestamp
        elif event.type == T.JOB_HELD:
            facts["HoldReason"] = event.get("HoldReason", "")
        elif event.type in (T.JOB_TERMINATED, T.JOB_ABORTED):
            facts["CompletionDate"] = event.timestamp
            if event.type == T.JOB_ABORTED:
                facts["RemoveReason"] = event.get("Reason", "")
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m engine.crab.postjob")
    parser.add_argument("condor_id", help="DAGMan's $JOBID: cluster.proc")
    parser.add_argument("return_value", type=int, help="DAGMan's $RETURN")
    parser.add_argument("dag_retry", type=int)
    parser.add_argument("max_retries", type=int)
    parser.add_argument("job_id")
    parser.add_argument("task_dir")
    args = parser.parse_args(argv)
    with open(os.path.join(args.task_dir, TASK_FILE), encoding="utf-8") as f:
        task = json.load(f)
    state = load_job_state(args.task_dir, args.job_id)
    report_path = os.path.join(args.task_dir, f"jobReport.json.{args.job_id}.{state.crab_retry}")
    try:
        report = fjr.read_report(report_path)
    except (OSError, fjr.FJRError):
        report = None
    cluster = int(args.condor_id.split(".")[0] or 0)
    facts = job_facts(os.path.join(args.task_dir, f"job_log.{args.job_id}"), cluster)
    limits = Limits(max_retries=task["max_retries"], time_scale=task["time_scale"])
    decision = decide(args.return_value, report, state, limits, time.time(), job_ad=facts)
    save_state(state_path(args.task_dir, args.job_id), record(state, decision))
    print(f"job {args.job_id}: {decision.action}: {decision.reason}")
    return decision.status


if __name__ == "__main__":
    sys.exit(main())
