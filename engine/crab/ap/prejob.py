"""CRAB's PreJob: ``python3 -m engine.crab.ap.prejob DAG_RETRY JOB_ID TASK_DIR``, a node's PRE script.

It opens the job's next attempt (:func:`engine.crab.ap.retry_policy.begin_attempt`: RRN + 1, the
attempt's memory, runtime and sites to avoid) and writes ``Job.<id>.submit``: the task's template
plus this attempt's lines, as CRAB's ``alter_submit`` does.  While the job cools off after a
failure it exits 4, which the DAG's ``SCRIPT DEFER 4`` turns into "run me again later", so the
node shows a countdown instead of a running PRE script.  Exit codes are CRAB's: 0 go, 2 fatal;
and 5, the DAG's ``PRE_SKIP``: the open attempt's job had succeeded, and its PostJob died (``kill
-9``) before it recorded that, so DAGMan retried the node; PreJob takes the PostJob's decision in
its place (:func:`close_undecided`) rather than run a finished job again.

After a ``crab resubmit`` it first reads the resubmit record (:mod:`engine.crab.ap.resubmit_record`): a job
listed in an epoch newer than its own enters it (RRN 0, the epoch's memory and runtime), and a job
in a resubmit epoch takes that epoch's site lists and priority, on its automatic retries too.  A
job that failed for good and was not listed exits 2 without an attempt (the rescue DAG runs every
node that is not done; CRAB reruns only the listed ones).

The attempt's ``DESIRED_Sites`` (:mod:`engine.crab.ap.sites`): the job's data sites outside the
global blacklist, read again at every attempt (it defers while that file cannot be read), within
the user's lists, without a site the automatic blacklist takes, then without the site a
``change_site`` failure avoids; neither takes a site away unless another remains that the task's
pool has (``pool_sites`` in ``task.json``).

Standard library only: it runs wherever DAGMan runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Container
from dataclasses import replace

from engine.atomic import write_atomically
from engine.crab.ap.resubmit_record import ResubmitEntry, apply_record, read_record
from engine.crab.ap.retry_policy import (PRE_SKIPPED, Decision, JobReturnCode, JobState, Params, begin_attempt,
                                         choose_sites, cooloff_remaining, load_job_state, record, save_state,
                                         state_path)
from engine.crab.ap.sites import (SiteListError, SiteLists, Thresholds, attempt_sites, load_statistics,
                                  previous_failure)
from engine.crab.taskworker.dagman_creator import SUBMIT_TEMPLATE, read_task, task_ad
from engine.crab.wn.failure_plan import plan_json


def failed_for_good(state: JobState) -> str:
    """Why the job must not run again ("" if it may): its last attempt failed for good and no
    resubmit has listed it since.  A rescue DAG runs every node that is not done, but ``crab
    resubmit`` reruns only the jobs it lists; the others fail again at once, their state untouched."""
    last = state.attempts[-1] if state.attempts else None
    if last is None or last.action not in ("fatal", "abort_dag") or state.epoch > last.epoch:
        return ""
    return (f"failed for good after attempt {last.crab_retry} ({last.reason or last.action}); not listed by a "
            f"resubmit, so it does not run again")


def job_task(task: dict, entry: ResubmitEntry | None) -> dict:
    """The task's values as they apply to one job: those of the resubmit that listed it last (the
    entry of its epoch; the memory and runtime then also come with its state, and the pool's sites
    that hold that memory), else the task's."""
    if entry is None:
        return task
    return {**task, "max_memory_mb": entry.memory_mb, "max_runtime_min": entry.runtime_min,
            "site_whitelist": list(entry.site_whitelist), "site_blacklist": list(entry.site_blacklist),
            "priority": entry.priority,
            **({} if entry.pool_sites is None else {"pool_sites": list(entry.pool_sites)})}


def attempt_lines(task: dict, state: JobState, sites: list[str]) -> list[str]:
    """The lines ``alter_submit`` adds for one attempt."""
    attempt = state.attempts[-1]
    desired = ",".join(sorted(sites))
    return [
        f"CRAB_Retry = {state.crab_retry}",
        f"My.CRAB_Retry = {state.crab_retry}",
        f"My.CRAB_RRN = {attempt.rrn}",
        f"My.CRABTUI_Attempt = {len(state.attempts)}",
        f"request_memory = {attempt.request_memory_mb}",
        f"My.MaxWallTimeMins = {attempt.max_runtime_min}",
        f"My.MaxWallTimeMinsRun = {attempt.max_runtime_min}",
        f"My.EstimatedWallTimeMins = {attempt.max_runtime_min}",
        f'My.DESIRED_Sites = "{desired}"',
        "My.CRAB_SiteBlacklist = {" + ", ".join(f'"{s}"' for s in task["site_blacklist"]) + "}",
        "My.CRAB_SiteWhitelist = {" + ", ".join(f'"{s}"' for s in task["site_whitelist"]) + "}",
        f"My.PostJobPrio2 = {state.crab_retry}",
        # A ClassAd string literal escapes as JSON does: the plan's JSON, quoted again.
        f"My.CRABTUI_FailurePlan = {json.dumps(plan_json(task['failure_plan'], job=state.job_id))}",
        *task_ad(task).stage_lines(state.job_id),
    ]


def no_sites_reason(task: dict) -> str:
    """CRAB's PreJob message for an attempt with nowhere to run, and what the user can do."""
    lists = "".join(f" {what} is {task[key]}." for what, key in (("Site whitelist", "site_whitelist"),
                                                                 ("Site blacklist", "site_blacklist")) if task[key])
    return ("Can not submit since DESIRED_Sites list is empty: no site of the pool holds the job's data outside the "
            f"global blacklist and within the site lists.{lists} Resubmit it with other --sitewhitelist/--siteblacklist.")


def refusal(state: JobState, reason: str) -> Decision:
    """The open attempt closed as failed for good without running: DAGMan fails the node whose PRE
    script fails, and skips its job (:data:`PRE_SKIPPED`), so the job is ``failed`` and can be
    resubmitted, not left in flight."""
    attempt = replace(state.attempts[-1], exit_code=PRE_SKIPPED, action="fatal", reason=reason)
    return Decision("fatal", reason, PRE_SKIPPED, attempt)


def close_failed_pre(task_dir: str, job_id: str, reason: str) -> None:
    """Record the job as failed for good without running when DAGMan failed its node at the PRE
    script on its last retry (PreJob killed, or ended by an error, before the job was submitted):
    the node is failed and nothing runs it again, so an attempt left open (or never opened) would
    read as a job waiting for ever, and an automatic task's next stage would wait for it."""
    reason = f"Its PreJob ended before the job was submitted ({reason}), on the node's last retry."
    _close_failed(task_dir, job_id, lambda state: refusal(state, reason))


def close_removed(task_dir: str, job_id: str, dagman_id: int) -> None:
    """Record as failed for good a job in flight (queued, running or cooling off) when its DAGMan
    job was removed from outside CRAB (condor_rm): DAGMan's last node status dump says its node
    is STATUS_ERROR, which CRAB's status shows as ``failed``, so ``crab resubmit`` runs it again."""
    reason = (f"Its DAGMan job ({dagman_id}) was removed (condor_rm) while the job was in flight; "
              "crab resubmit runs it again.")

    def failed(state: JobState) -> Decision:
        attempt = replace(state.attempts[-1], action="fatal", reason=reason)
        return Decision("fatal", reason, attempt.exit_code, attempt)
    _close_failed(task_dir, job_id, failed)


def _close_failed(task_dir: str, job_id: str, decision: Callable[[JobState], Decision]) -> None:
    """Close the job's open attempt (or a new one, for a job between attempts) with ``decision``."""
    task = read_task(task_dir)
    state, entry = apply_record(load_job_state(task_dir, job_id), read_record(task_dir))
    if state.open_attempt is None:
        task = job_task(task, entry)
        state = begin_attempt(state, dag_retry=state.attempts[-1].dag_retry + 1 if state.attempts else 0,
                              task_params=Params(task["max_memory_mb"],
                                                 task_ad(task).runtime_min(job_id, task["max_runtime_min"])))
    save_state(state_path(task_dir, job_id), record(state, decision(state)))


def close_undecided(task_dir: str, job_id: str, state: JobState, dag_retry: int) -> int | None:
    """A PostJob killed before it recorded its decision fails the POST script, and DAGMan retries
    the node: the open attempt's job had ended (its report is there), so the PostJob's decision is
    taken now, and a job that succeeded is not run again (:data:`JobReturnCode.DONE`, the DAG's
    ``PRE_SKIP``).  The decision's status, None if there is no such attempt."""
    current = state.open_attempt
    if current is None or dag_retry <= current.dag_retry:
        return None
    return decide_ended(task_dir, job_id, state)


def decide_ended(task_dir: str, job_id: str, state: JobState,
                 post_ends: Callable[[], Container[tuple[str, int]]] | None = None) -> int | None:
    """The dead PostJob's decision on the open attempt of ``state``, if its job has ended (its
    report is there): also taken once the DAG has ended without retrying the node (the PostJob of
    its last retry killed), and by automatic splitting's PreDAG while the DAG runs on, given the
    POST script ends DAGMan has logged (``post_ends``, read only if needed): then only once the
    POST script of the attempt's job is among them.  The decision's status, None if the attempt's
    job (or its POST) has not ended."""
    current = state.open_attempt
    if current is None or not os.path.exists(os.path.join(task_dir, f"jobReport.json.{job_id}.{current.crab_retry}")):
        return None
    from engine.crab.ap import postjob  # only here: it needs htcondor2, as PostJob does

    ended = postjob.ended_job(task_dir, job_id)
    if ended is None or (post_ends is not None and (f"Job{job_id}", ended[0]) not in post_ends()):
        return None
    print(f"job {job_id}: its PostJob died before it recorded attempt {current.crab_retry}: deciding it now")
    return postjob.close_attempt(task_dir, job_id, state, *ended)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m engine.crab.ap.prejob")
    parser.add_argument("dag_retry", type=int)
    parser.add_argument("job_id")
    parser.add_argument("task_dir")
    args = parser.parse_args(argv)
    task = read_task(args.task_dir)
    state, entry = apply_record(load_job_state(args.task_dir, args.job_id), read_record(args.task_dir))
    ended = failed_for_good(state)
    if ended:
        print(f"job {args.job_id}: {ended}", file=sys.stderr)
        return JobReturnCode.FATAL_ERROR
    if state.attempts and state.attempts[-1].action == "ok":  # a rescue DAG's node whose PostJob died
        print(f"job {args.job_id}: attempt {state.attempts[-1].crab_retry} succeeded already: not run again")
        return JobReturnCode.DONE
    closed = close_undecided(args.task_dir, args.job_id, state, args.dag_retry)
    if closed is not None and closed != JobReturnCode.RECOVERABLE_ERROR:
        return JobReturnCode.DONE if closed == JobReturnCode.OK else closed
    if closed is not None:  # a retry, recorded: its next attempt starts as after any PostJob
        state, entry = apply_record(load_job_state(args.task_dir, args.job_id), read_record(args.task_dir))
    task = job_task(task, entry)
    if cooloff_remaining(state, time.time()) > 0:
        return JobReturnCode.DEFER
    try:
        lists = SiteLists.of_task(task)  # the global blacklist as it is now, at every attempt
    except SiteListError as e:
        print(f"job {args.job_id}: {e}; waiting until it can be read", file=sys.stderr)
        return JobReturnCode.DEFER
    state = begin_attempt(state, dag_retry=args.dag_retry,
                          task_params=Params(task["max_memory_mb"],
                                             task_ad(task).runtime_min(args.job_id, task["max_runtime_min"])))
    with open(os.path.join(args.task_dir, f"job_sites.{args.job_id}.json"), encoding="utf-8") as f:
        pool = task.get("pool_sites")
        candidates, automatic = attempt_sites(lists.available(json.load(f)), previous_failure(state),
                                              load_statistics(args.task_dir),
                                              Thresholds.from_json(task.get("automatic_blacklist")), pool)
    if automatic:
        print(f"job {args.job_id}: {automatic}")
    sites = choose_sites(candidates, state.attempts[-1].avoid_sites, pool)
    if not sites:
        reason = no_sites_reason(task)
        state = record(state, refusal(state, reason))
        save_state(state_path(args.task_dir, args.job_id), state)
        print(f"job {args.job_id}: {reason}", file=sys.stderr)
        return JobReturnCode.FATAL_ERROR
    save_state(state_path(args.task_dir, args.job_id), state)
    with open(os.path.join(args.task_dir, SUBMIT_TEMPLATE), encoding="utf-8") as f:
        template = f.read()
    write_atomically(os.path.join(args.task_dir, f"Job.{args.job_id}.submit"),
                     "\n".join(attempt_lines(task, state, sites)) + "\n" + template
                     + f"priority = {task['priority']}\nqueue\n")
    return JobReturnCode.OK


if __name__ == "__main__":
    sys.exit(main())
