"""CRAB's PreDAG: ``python3 -m engine.crab.ap.predag processing|tail COMPLETION STAGE TASK_DIR``.

The PRE script of automatic splitting's SUBDAG nodes (:mod:`engine.crab.taskworker.automatic` has the
rules).  ``Job0SubJobs`` (``processing <probes> 0``) waits until every probe has finished or
failed, estimates the throughput from their reports, splits the whole input into processing jobs
and writes them, with one SUBDAG node per tail stage, into ``RunJobs0.subdag``.  ``JobNSubJobs``
(``tail <completion> N``) waits until ``completion`` processing jobs are finished or failed, then
splits the lumis the finished ones left and every lumi of the failed ones into
``RunJobsN.subdag``.  While it waits it exits 4, which the node's ``SCRIPT DEFER 4`` turns into
"run me again later".

What it decided is kept in ``automatic_splitting/`` (:mod:`engine.crab.ap.stages`); a stage's file
is written last, so a PreDAG re-run after a crash or by a rescue DAG changes nothing, and the
processing ids the tail stages take are updated under a lock, since their PreDAGs run at once.

Exit codes: 0 the sub-DAG is written, 1 the split failed (no probe gave figures), 4 wait, and
:data:`~engine.crab.taskworker.dagman_creator.NOTHING_TO_SPLIT` for a tail stage with nothing left to
process, which the DAG's ``PRE_SKIP`` turns into a node done without its sub-DAG.  Standard library
only, but for a job whose PostJob died on its node's last retry (its decision, taken here, needs
htcondor2 as PostJob does) or whose PreJob did (DAGMan says so in dagman.out, read with classad2 at hand).
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import os
import sys
from collections.abc import Callable, Container, Iterator
from contextlib import contextmanager

from engine.atomic import write_atomically
from engine.crab.ap import postjob, stages
from engine.crab.ap.prejob import close_failed_pre, decide_ended
from engine.crab.ap.retry_policy import JobReturnCode, load_job_state, load_state, state_path
from engine.crab.ap.stages import stage_jobs
from engine.crab.taskworker.automatic import (AutomaticConfig, AutomaticSplittingError, Estimate, missing_lumis,
                                              probe_estimate, processing_split, tail_lumis, tail_split, tail_stages)
from engine.crab.taskworker.dagman_creator import (DAG_FILE, NOTHING_TO_SPLIT, format_dag, read_task, stage_node,
                                                   subdag_file, task_ad, write_jobs)
from engine.crab.taskworker.datasets import Catalogue, Dataset, DatasetError
from engine.crab.taskworker.splitting import JobSplit, SplittingError
from engine.crab.taskworker.task_input import InputSpec, load_input
from engine.crab.wn import fjr
from engine.crab.wn.job_input import read_input


def node_outcome(task_dir: str, job_id: str) -> str | None:
    """``finished`` or ``failed`` once the job's last attempt is closed for good; else None."""
    path = state_path(task_dir, job_id)
    if not os.path.exists(path):
        return None
    attempts = load_state(path).attempts
    action = attempts[-1].action if attempts else None
    return {"ok": "finished", "fatal": "failed", "abort_dag": "failed"}.get(action)


def pre_script_failures(dagman_out: str) -> dict[str, tuple[str, int]]:
    """:func:`engine.dagman.dagman_out.failed_at_pre`, imported only when a job may need it (it
    needs the bindings' classad2, as a dead PostJob's decision needs htcondor2)."""
    from engine.dagman.dagman_out import failed_at_pre

    return failed_at_pre(dagman_out)


def report_path(task_dir: str, job_id: str) -> str | None:
    """The report of the job's last closed attempt, if it left one."""
    attempts = load_state(state_path(task_dir, job_id)).attempts
    path = os.path.join(task_dir, f"jobReport.json.{job_id}.{attempts[-1].crab_retry}")
    return path if os.path.exists(path) else None


def is_automatic(task_dir: str) -> bool:
    """Whether the task splits automatically (its ``task.json`` has the stages' settings)."""
    return read_task(task_dir).get("automatic") is not None


def task_outcome(task_dir: str) -> str:
    """Why an automatic task whose DAG has ended failed ("" if it completed), CRAB's
    ``collapseDAGStatus`` said with lumis: it completed when every processing job either finished
    or was taken by a tail stage and every tail job finished; a failed probe or a failed
    processing job alone does not fail it (the tails reprocess their lumis)."""
    processing = stage_jobs(task_dir, 0)
    if processing is None:
        errors = stages.log_errors(task_dir, 0)
        return errors[-1] if errors else "the processing stage was never split"
    handled = set(stages.processed(task_dir))
    left = [job for job in processing if job not in handled]
    if left:
        return f"{len(left)} processing job(s) were never handed to a tail stage ({', '.join(left[:5])})"
    tails = [job for stage in range(1, len(processing) + 1) if (ids := stage_jobs(task_dir, stage)) is not None
             for job in ids]
    failed = [job for job in tails if node_outcome(task_dir, job) != "finished"]
    if failed:
        return f"{len(failed)} tail job(s) did not finish ({', '.join(failed[:5])})"
    return ""


class PreDag:
    """One stage's split, for the task in ``task_dir``."""

    def __init__(self, task_dir: str, stage: int) -> None:
        self.task_dir = task_dir
        self.stage = stage
        task = read_task(task_dir)
        self.ad = task_ad(task)
        self.auto = task["automatic"]
        self.config = AutomaticConfig.from_crab(self.auto["config"])
        self.minutes = self.auto["minutes"]

    def log(self, message: str) -> None:
        stages.log(self.task_dir, self.stage, message)

    def dataset(self):
        """The task's input as the task worker read it (tasks split before InputSpec name the dataset)."""
        spec = InputSpec.from_json(self.auto["input"]) if "input" in self.auto else InputSpec(dataset=self.ad.dataset)
        return load_input(spec, Catalogue(self.auto["catalogue"]))

    def done(self, ids: list[str], dag_file: str) -> dict[str, str]:
        """The outcomes of the jobs of ``ids`` (nodes of ``dag_file``) that are finished or failed."""
        post_ends = functools.cache(lambda: postjob.post_ends(os.path.join(self.task_dir, f"{dag_file}.nodes.log")))
        pre_failures = functools.cache(lambda: pre_script_failures(os.path.join(self.task_dir, f"{dag_file}.dagman.out")))
        outcomes = {job: node_outcome(self.task_dir, job) or self.dead_postjob(job, post_ends)
                    or self.dead_prejob(job, pre_failures) for job in ids}
        return {job: outcome for job, outcome in outcomes.items() if outcome is not None}

    def dead_prejob(self, job_id: str, pre_failures: Callable[[], dict[str, tuple[str, int]]]) -> str | None:
        """``failed`` for a job whose node DAGMan failed at its PRE script on the last retry (a
        PreJob killed, or failing, before the job was submitted): DAGMan neither runs nor retries
        it, so the stage would wait for it forever; CRAB's PreDAG reads such a node as failed, and
        the tail stages take its lumis.  ``pre_failures``: dagman.out's, read once a run.  The
        retry is the later of the job's state's and DAGMan's word for it: a PreJob that died
        before it recorded its attempt left the state a retry behind, on each try."""
        if self.ad.dag_retries(job_id) == 0 and os.path.exists(os.path.join(self.task_dir, f"job_log.{job_id}")):
            return None  # its only attempt was submitted (a processing job's): dagman.out is not read for it
        failure = pre_failures().get(f"Job{job_id}")
        if failure is None:
            return None
        reason, dagman_retry = failure
        state = load_job_state(self.task_dir, job_id)
        last = state.attempts[-1] if state.attempts else None
        dag_retry = 0 if last is None else last.dag_retry + (last.action is not None)
        if max(dag_retry, dagman_retry) < self.ad.dag_retries(job_id):
            return None  # DAGMan retries the node: its next PreJob runs
        with self.locked():  # the tail stages' PreDAGs run at once: one records it
            if node_outcome(self.task_dir, job_id) is None:
                close_failed_pre(self.task_dir, job_id, reason)
        return node_outcome(self.task_dir, job_id)

    def dead_postjob(self, job_id: str, post_ends: Callable[[], Container[tuple[str, int]]]) -> str | None:
        """The outcome of a job whose PostJob died on the node's last retry, before it recorded
        its decision: no PreJob follows to take it, and the DAG runs on, so the stage would wait
        for the job forever.  PreDAG takes the decision as PreJob would
        (:func:`engine.crab.ap.prejob.decide_ended`), once DAGMan has logged the POST script's end
        (``post_ends``: the DAG's nodes log, read once for all the jobs a run looks at)."""
        state = load_job_state(self.task_dir, job_id)
        if state.open_attempt is None or state.open_attempt.dag_retry < self.ad.dag_retries(job_id):
            return None  # not ended, or a retry's PreJob decides
        with self.locked():  # the tail stages' PreDAGs run at once: one decides, the others find it decided
            state = load_job_state(self.task_dir, job_id)
            if state.open_attempt is not None:
                decide_ended(self.task_dir, job_id, state, post_ends)
        return node_outcome(self.task_dir, job_id)

    def write_stage(self, dataset: Dataset, jobs: list[JobSplit], dag_text: str) -> None:
        """The stage's job files, its sub-DAG, and last the stage file that says it is split."""
        write_jobs(self.task_dir, dataset, jobs)
        write_atomically(os.path.join(self.task_dir, subdag_file(self.stage)), dag_text)
        stages.write_stage_jobs(self.task_dir, self.stage, [job.id for job in jobs])

    def processing(self, completion: int) -> int:
        probes = self.auto["probes"]
        done = self.done(probes, DAG_FILE)
        if len(done) < completion:
            self.log(f"waiting for the probes: {len(done)} of {completion} done")
            return JobReturnCode.DEFER
        estimate = probe_estimate({job: report_path(self.task_dir, job) for job in probes})
        dataset = self.dataset()
        mask = self.auto.get("lumi_mask")
        jobs = processing_split(dataset, self.config, self.minutes, estimate,
                                lumi_mask=None if mask is None else {int(r): [tuple(x) for x in v]
                                                                     for r, v in mask.items()})
        stages.write_estimate(self.task_dir, estimate.throughput, estimate.event_size, list(estimate.probes))
        tails = tail_stages(self.config, len(jobs))
        for stage in tails:  # as CRAB ships RunJobs0.subdag: a sub-DAG file exists before its PreDAG runs
            write_atomically(os.path.join(self.task_dir, subdag_file(stage.number)), "")
        dag = format_dag(self.ad, jobs) + "".join(stage_node(self.ad, "tail", s.completion, s.number)
                                                   for s in tails)
        self.write_stage(dataset, jobs, dag)
        self.log(f"estimated throughput {estimate.throughput:.3g} events/s and {estimate.event_size:.0f} bytes "
                 f"per event from probes {', '.join(estimate.probes)}; {len(jobs)} processing jobs of "
                 f"{self.minutes:g} min; tail stages at {', '.join(str(s.completion) for s in tails)} jobs done")
        return JobReturnCode.OK

    def tail(self, completion: int) -> int:
        processing = stage_jobs(self.task_dir, 0)
        if processing is None:
            self.log("the processing stage has not been split")
            return JobReturnCode.DEFER
        done = self.done(processing, subdag_file(0))
        if len(done) < completion:
            self.log(f"waiting: {len(done)} of {completion} processing jobs done")
            return JobReturnCode.DEFER
        with self.locked():
            split_before = stage_jobs(self.task_dir, self.stage)
            if split_before is not None:  # a re-run: the stage was split
                return JobReturnCode.OK if split_before else NOTHING_TO_SPLIT
            handled = set(stages.processed(self.task_dir))
            taken = [job for job in processing if job in done and job not in handled]
            missing, failed = [], []
            for job in taken:
                given = read_input(os.path.join(self.task_dir, f"job_input.{job}.json")).lumis()
                if done[job] == "failed":
                    failed.append(given)
                else:
                    missing.append(missing_lumis(given, fjr.summarize(fjr.read_report(report_path(self.task_dir, job)))))
            lumis = tail_lumis(missing, failed)
            dataset = self.dataset()
            estimate = stages.read_estimate(self.task_dir)
            jobs = tail_split(dataset, self.config, self.minutes,
                              Estimate(estimate["throughput"], estimate["event_size"], tuple(estimate["probes"])),
                              lumis, self.stage) if lumis else []
            self.write_stage(dataset, jobs, format_dag(self.ad, jobs))
            stages.write_processed(self.task_dir, list(handled.union(taken)))
        lumi_count = sum(len(v) for v in lumis.values())
        self.log(f"{len(taken)} processing jobs taken ({len(failed)} failed); {lumi_count} lumis left "
                 f"-> {len(jobs)} tail jobs")
        return JobReturnCode.OK if jobs else NOTHING_TO_SPLIT

    @contextmanager
    def locked(self) -> Iterator[None]:
        with open(stages.lock_path(self.task_dir), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m engine.crab.ap.predag")
    parser.add_argument("stage_kind", choices=("processing", "tail"))
    parser.add_argument("completion", type=int, help="jobs of the previous stage that must be done first")
    parser.add_argument("stage", type=int, help="0 for processing, N for tail stage N")
    parser.add_argument("task_dir")
    args = parser.parse_args(argv)
    predag = PreDag(os.path.abspath(args.task_dir), args.stage)
    if stage_jobs(predag.task_dir, args.stage) is not None and args.stage_kind == "processing":
        return JobReturnCode.OK  # a re-run (rescue DAG, recovery): the processing split stands
    try:
        if args.stage_kind == "processing":
            return predag.processing(args.completion)
        return predag.tail(args.completion)
    except (AutomaticSplittingError, SplittingError, DatasetError, fjr.FJRError, OSError) as e:
        predag.log(f"ERROR: {e}")
        print(f"{DAG_FILE} stage {args.stage}: {e}", file=sys.stderr)
        return JobReturnCode.RECOVERABLE_ERROR


if __name__ == "__main__":
    sys.exit(main())
