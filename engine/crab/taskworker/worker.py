"""CRAB's TaskWorker on one machine: carries out the task table's pending commands.

A thread of the embedded schedd's daemon (:func:`start`), so tasks move while any client has the
daemon up.  For SUBMIT it splits the dataset, writes the task's DAG (:mod:`engine.crab.taskworker.dagman_creator`)
and queues DAGMan; for KILL it removes the DAGMan job, which removes the task's jobs with it.
It follows each SUBMITTED task: keeps its status cache up to date, so a status (CLI or UI) reads it
warm, and notices when its DAGMan job has ended, to mark the task COMPLETED or FAILED.  Every
step is written to the table before the next is taken, and a task found half done (QUEUED) after a
crash is finished from where it stands: a DAGMan job already queued for it is adopted, not doubled.

RESUBMIT is CRAB's DagmanResubmitter and AdjustSites in one (:meth:`TaskWorker.resubmit`,
:mod:`engine.crab.taskworker.resubmitter`): the jobs to resubmit are the failed ones (within the
user's ``--jobids``); the worker fixes the new epoch and the ids in the task's arguments, writes
the epoch's entry to the resubmit record (:mod:`engine.crab.ap.resubmit_record`), clears the
automatic site blacklist's statistics and puts each listed job in the new epoch (RRN 0, the new
memory and runtime).  A DAG that still runs (SUBMITTED, failed jobs while others run) is made to
retry the listed nodes at once, as CRAB does: their RETRY counts raised, their POST results made
recoverable in the nodes log, and the DAGMan job held and released, so that it recovers from its
log; the other jobs run on undisturbed.  A DAG that has ended runs again from the rescue DAG it
wrote: only the nodes not done run, and PreJob gives the listed ones the epoch's parameters (and
refuses the failed ones no resubmit listed).  An automatic task's tail stage whose sub-DAG has
ended while the task's DAG still runs waits for that to end (``waiting_for`` in the task's
arguments), and is then rerun from the rescue DAGs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, replace

from engine.crab.ap.predag import is_automatic, node_outcome, task_outcome
from engine.crab.ap.sites import SiteLists
from engine.crab.ap.resubmit_record import ResubmitRecordError, next_epoch, read_record
from engine.crab.ap.prejob import close_failed_pre, close_removed, decide_ended
from engine.crab.ap.retry_policy import RetryStateError, load_job_state
from engine.crab.client.resubmit import make_entry, resubmit_pool_sites, select_jobs
from engine.crab.client.status import RACY_NS, job_ids, refresh_cache, task_jobs
from engine.crab.taskworker.automatic import probe_split
from engine.crab.taskworker.config import load_config
from engine.crab.taskworker.dagman_creator import DAG_FILE, TaskAd, read_task, task_ad, write_task
from engine.crab.taskworker.sandbox import AP_ARCHIVE, write_sandboxes
from engine.crab.taskworker.datasets import Catalogue, DatasetError, user_dir
from engine.crab.taskworker.resubmitter import dag_of, enter_epoch, retry_in_running_dags, running_dagmans
from engine.crab.taskworker.splitting import MASK_PARAMETERS, SplittingError, count_lumis, split
from engine.crab.taskworker.task_input import InputSpec, load_input, locality, refusal
from engine.crab.wn.job_input import DEFAULT_EVENTS_PER_SECOND
from engine.crab.taskworker.taskdb import (COMPLETED, EMBEDDED, FAILED, FAILURE_STATUS, HTCONDOR, KILL, KILLED,
                                           QUEUED, RESUBMIT, RESUBMITFAILED, SUBMIT, SUBMITTED, Task, TaskDB,
                                           kill_refusal)
from engine.dag import DagError
from engine.dagman.dagman_out import failed_at_pre
from engine.dagman.submit_dag import (DagSubmitOptions, format_condor_dagman_sub, format_condor_sub, prepare,
                                      write_condor_sub)
from engine.schedd.api import JobAction, JobStatus, Schedd, ScheddError, ScheddUnreachable
from engine.crashpoint import crash_point
from engine.schedd.scheduler_start import not_writable, run_as
from engine.state import StateDir

REQUEST_FILE = "request.json"
# The status cache trusts a state file only once it is RACY_NS old: an ended task's cache is kept
# up to date that long (and a few rounds more), so the last jobs' rows are trusted too.
CACHE_SETTLE_S = RACY_NS / 1e9 + 3
log = logging.getLogger(__name__)


def write_request(task_dir: str, *, input: InputSpec, splitting: str, units_per_job: int, total_units: float,
                  lumi_mask: dict[int, list[tuple[int, int]]] | None, ad: TaskAd,
                  events_per_lumi: int | None = None, mask_from: Sequence[str] = MASK_PARAMETERS) -> None:
    """What ``task submit`` hands the worker: the checked configuration, as JSON (the worker never
    runs the user's crabConfig.py); ``mask_from`` names the parameters that made ``lumi_mask``."""
    os.makedirs(task_dir, exist_ok=True)
    request = {"input": input.as_json(), "splitting": splitting, "units_per_job": units_per_job,
               "total_units": total_units, "events_per_lumi": events_per_lumi,
               "lumi_mask": None if lumi_mask is None else {str(r): ranges for r, ranges in lumi_mask.items()},
               "mask_from": list(mask_from), "ad": asdict(ad)}
    with open(os.path.join(task_dir, REQUEST_FILE), "w", encoding="utf-8") as f:
        json.dump(request, f, indent=1)


class TaskWorker:
    """The worker of the task table of ``state``, submitting to ``schedd``: the embedded one, or
    with ``dagman`` (the pool's condor_dagman) a real pool's, where the task ships its scripts and
    its job as archives (:mod:`engine.crab.taskworker.sandbox`).  It takes up only the tasks of
    its own backend."""

    def __init__(self, state: StateDir, schedd: Schedd, dagman: str | None = None) -> None:
        self.state = state
        self.schedd = schedd
        self.dagman = dagman
        self.backend = EMBEDDED if dagman is None else HTCONDOR
        self.db = TaskDB(state.tasks)

    def work_once(self) -> None:
        for task in self.db.pending(self.backend):
            self.carry_out(task)
        now = time.time()
        for task in self.db.tasks():
            if task.backend != self.backend:
                continue
            if task.status == SUBMITTED and task.dagman_id is not None:
                self.follow(task)
            elif task.status in (COMPLETED, FAILED, KILLED) and now - task.updated_at < CACHE_SETTLE_S:
                self.refresh(task)

    def carry_out(self, task: Task) -> None:
        command = task.command
        task = self.db.update(task, status=QUEUED)
        crash_point(f"taskworker:{command.lower()}:queued")
        try:
            if command == SUBMIT:
                self.submit(task)
            elif command == KILL:
                self.kill(task)
            elif command == RESUBMIT:
                self.resubmit(task)
        except ScheddUnreachable:
            raise  # nothing was refused: the task stays QUEUED, and the next command goes on as after a crash
        except (OSError, ValueError, KeyError, DagError, DatasetError, SplittingError, ScheddError,
                RetryStateError, ResubmitRecordError) as e:
            log.info("task %s: %s failed: %s", task.name, command, e)
            self.db.update(task, status=FAILURE_STATUS[command], message=str(e))

    def submit(self, task: Task) -> None:
        queued = self._queued_dagman(task, ended=True)
        if queued is not None:  # a worker that died after queueing DAGMan: adopt that job
            self.db.update(task, status=SUBMITTED, dagman_id=queued)
            return
        with open(os.path.join(task.task_dir, REQUEST_FILE), encoding="utf-8") as f:
            request = json.load(f)
        spec = InputSpec.from_json(request["input"]) if "input" in request else InputSpec(dataset=request["dataset"])
        dataset = load_input(spec, Catalogue.for_state(self.state))
        if not dataset.blocks:
            raise ValueError("no block of the input is left to read: the site lists leave none where the pool runs")
        mask = request["lumi_mask"]
        lumi_mask = None if mask is None else {int(r): [tuple(x) for x in v] for r, v in mask.items()}
        mask_from = request.get("mask_from", MASK_PARAMETERS)  # a request written before it was recorded
        self._check_locality(request["ad"], dataset, lumi_mask, self.backend)
        config = load_config(self.state.taskworker_config)
        ad = replace(task_ad(request["ad"]), input_lumis=count_lumis(dataset, lumi_mask),
                     max_retries=config.num_autom_job_retries)
        if request["splitting"] == "Automatic":  # the probes first; PreDAG splits the rest
            knobs = config.automatic
            knobs.check_runtime(request["units_per_job"])
            jobs = probe_split(dataset, knobs, seed=task.name, lumi_mask=lumi_mask, mask_from=mask_from)
            ad = replace(ad, automatic={"minutes": request["units_per_job"], "config": knobs.crab(),
                                        "probes": [job.id for job in jobs], "lumi_mask": mask,
                                        "catalogue": user_dir(self.state), "input": spec.as_json()})
        else:
            whole = load_input(spec.with_skipped(), Catalogue.for_state(self.state)) if spec.skipped else dataset
            jobs = split(whole, algorithm=request["splitting"], units_per_job=request["units_per_job"],
                         total_units=request["total_units"], lumi_mask=lumi_mask,
                         events_per_lumi=request.get("events_per_lumi"), mask_from=mask_from, skipped=spec.skipped)
        if self.dagman is not None:  # the pool's python3 runs the scripts and the job from the task's archives
            ad = replace(ad, file_transfer=True, python="python3", python_path=os.path.join(task.task_dir, AP_ARCHIVE))
            write_sandboxes(task.task_dir)
        write_task(task.task_dir, ad, dataset, jobs)
        # in the table before DAGMan is queued: a worker that dies between the two adopts the job
        # with the task's message as it is
        # An automatic task's jobs here are its probes: its processing jobs come later, and a
        # "3 jobs" would read as the whole task beside their count.
        made = f"{len(jobs)} probe job{'s' * (len(jobs) != 1)}" if ad.automatic else f"{len(jobs)} jobs"
        task = self.db.update(task, message=f"{made}{long_jobs_note(jobs, ad)}")
        self.db.update(task, status=SUBMITTED, dagman_id=self._queue_dag(task, force=True))

    @staticmethod
    def _check_locality(ad: dict, dataset, lumi_mask, backend: str) -> None:
        """DagmanCreator's refusal of an input none of whose blocks (with a lumi in the mask) can run
        at a site of the pool.  ``task submit`` checks it first; this sees what changed since, as the
        resubmission of a SUBMITFAILED task does (a user dataset replaced, another global blacklist)."""
        pool = ad.get("pool_sites")
        if pool is None:
            return
        lists = SiteLists.of_task(ad)
        found = locality(dataset, lists, pool, lumi_mask)
        if found.blocks and not found.usable:
            request = f"{ad['num_cores']} core(s) and {ad['max_memory_mb']} MB"
            raise ValueError(refusal(ad.get("dataset") or "", found, lists, pool, request, sorted(pool), backend == HTCONDOR))

    def _queue_dag(self, task: Task, *, force: bool) -> int:
        """condor_submit_dag of the task's DAG; without ``force`` DAGMan starts from the newest
        rescue DAG (prepare refuses a DAG that has none).  Returns DAGMan's ClusterId."""
        dag = os.path.join(task.task_dir, DAG_FILE)
        # CRAB_ReqName in the DAGMan job's ad, as CRAB's DagmanSubmitter puts it: the job is the task's
        options = DagSubmitOptions(force=force, batch_name=task.name, append=(f"My.CRAB_ReqName = {json.dumps(task.name)}",))
        prepare(dag, options)
        # -force clears the earlier run's files only: CRAB's DAGMan is not given it, so that a
        # retried SUBDAG node of automatic splitting goes on from its own rescue DAG
        options = dataclasses.replace(options, force=False)
        if self.dagman is not None:
            owner = self.schedd.owner()
            if denied := not_writable(task.task_dir, owner):  # DAGMan would wait in the queue forever
                raise ScheddError(f"the pool runs the task's DAGMan as {owner}, who cannot {denied}; {run_as(owner)}")
            text = format_condor_dagman_sub(dag, options, self.dagman, self.schedd.condor_version)
        else:
            text = format_condor_sub(dag, options, self.state.path)
        write_condor_sub(dag, text)
        cluster = self.schedd.submit(text, submit_file=dag + ".condor.sub", cwd=task.task_dir).cluster
        crash_point("taskworker:dagman-queued")  # queued, not yet in the table: adopted next time
        return cluster

    def _queued_dagman(self, task: Task, *, ended: bool = False) -> int | None:
        """The task's own DAGMan job in the queue (not a sub-DAG's), if any; with ``ended`` also one
        that has left it already (a worker that died after queueing it, the DAG having run since)."""
        queued = running_dagmans(self.schedd, task.task_dir).get(DAG_FILE)
        if queued is None and ended:
            done = self.schedd.history(f"JobUniverse == 7 && Iwd == {json.dumps(task.task_dir)} && "
                                       "DAGNodeName =?= undefined", ["ClusterId"], match=1)
            queued = int(done[0]["ClusterId"]) if done else None
        return queued

    def resubmit(self, task: Task) -> None:
        """crab resubmit: see the module's description.  Each step can be taken again after a crash."""
        args = task.arguments
        ad = read_task(task.task_dir)
        if "epoch" not in args:
            jobs = task_jobs(task.task_dir, job_ids(task.task_dir), self.schedd, task.dagman_id)
            ids = select_jobs({j.id: j.state for j in jobs}, args.get("resubmit_jobids"),
                              automatic=ad.get("automatic") is not None)
            epoch = next_epoch(read_record(task.task_dir))
            make_entry(ad, args, epoch=epoch, job_ids=ids, now=time.time())  # refuse before recording
            task = self.db.update(task, arguments={**args, "epoch": epoch, "job_ids": ids})
            args = task.arguments
        entry, warning = make_entry(ad, args, epoch=args["epoch"], job_ids=args["job_ids"], now=time.time())
        sites = resubmit_pool_sites(ad, args, self.schedd.sites())
        if sites is not None:  # PreJob places the listed jobs (only) among the sites the pool has for them now
            entry = replace(entry, pool_sites=tuple(sites))
        enter_epoch(task.task_dir, entry)
        crash_point("taskworker:resubmit:recorded")
        message = _resubmitted(args) + (f". {warning}" if warning else "")
        left = retry_in_running_dags(self.schedd, task.task_dir, entry.job_ids)
        queued = self._queued_dagman(task)
        if left and queued is not None and queued == task.dagman_id:  # a tail stage's DAG ended, not the task's
            self.db.update(task, status=SUBMITTED, arguments={**args, "waiting_for": queued},
                           message=f"{message}; they run when the task's running DAG has ended")
            return
        if left and queued is None:
            queued = self._queue_dag(task, force=False)
        self.db.update(task, status=SUBMITTED, dagman_id=queued if queued is not None else task.dagman_id,
                       message=message)

    def kill(self, task: Task) -> None:
        """CRAB's DagmanKiller: remove the DAGMan job, which takes the node jobs with it.  A DAG that
        completed after the user asked (before this worker noticed) is not killed: the task is
        COMPLETED, as a kill of a finished task is refused."""
        if task.dagman_id is not None:
            if self.schedd.query(f"ClusterId == {task.dagman_id}", ["JobStatus"]):
                self.schedd.act(JobAction.Remove, str(task.dagman_id), "Killed by the user (crab kill)")
                crash_point("taskworker:kill:removed")
            elif self._outcome(task)[0] == COMPLETED:
                self.db.update(task, status=COMPLETED, message="")
                log.info("task %s: not killed: %s", task.name, kill_refusal(replace(task, status=COMPLETED)))
                return
        self.db.update(task, status=KILLED, message="")

    def follow(self, task: Task) -> None:
        """A SUBMITTED task whose DAGMan has left the queue is COMPLETED (exit 0) or FAILED.  Its
        status cache is brought up to date on the way, after the look at the queue (once DAGMan
        has left, every PostJob has recorded its job), so whoever asks for the status finds it warm."""
        running = self.schedd.query(f"ClusterId == {task.dagman_id}", ["JobStatus"])
        if not running:
            self._decide_dead_scripts(task)
        self.refresh(task)
        if running:
            return
        if task.command == RESUBMIT and task.arguments.get("waiting_for") == task.dagman_id:
            if self._outcome(task) is not None:
                self._rerun_after_wait(task)
            return
        outcome = self._outcome(task)
        if outcome is not None:
            if outcome[1] == DAG_REMOVED:
                self._fail_removed(task)
            self.db.update(task, status=outcome[0], message=outcome[1])

    def _fail_removed(self, task: Task) -> None:
        """A DAGMan job removed from outside crab kill (condor_rm) leaves its jobs in flight failed,
        as DAGMan's last node status dump says (STATUS_ERROR), so that the task can be resubmitted;
        crab kill's jobs stay killed."""
        for job in job_ids(task.task_dir):
            state = load_job_state(task.task_dir, job)
            last = state.attempts[-1] if state.attempts else None
            if last is not None and (last.action is None or (last.action == "retry" and state.epoch <= last.epoch)):
                close_removed(task.task_dir, job, task.dagman_id)
        self.refresh(task)

    @staticmethod
    def _decide_dead_scripts(task: Task) -> None:
        """A PostJob killed on its node's last retry fails the node, and DAGMan, with no retry left
        to run PreJob, ends with the job's attempt undecided: its decision is taken here, as PreJob
        takes it on a retry (:func:`engine.crab.ap.prejob.decide_ended`), so that a job that
        succeeded is finished, not killed, and a rescue DAG does not run it again.  In an automatic
        task, PreDAG has decided the probes and processing jobs before it split the next stage
        (:meth:`engine.crab.ap.predag.PreDag.dead_postjob`); its tail jobs are decided here.  A
        PreJob killed (or failing) on its node's last retry failed the node before its job was
        submitted: the job is recorded failed here (PreDAG does so for a processing job at once),
        so that it can be resubmitted rather than read unsubmitted for ever."""
        automatic = None
        pre_failures = functools.cache(lambda dag: failed_at_pre(os.path.join(task.task_dir, f"{dag}.dagman.out")))
        for job in job_ids(task.task_dir):
            state = load_job_state(task.task_dir, job)
            if state.open_attempt is not None:
                said = io.StringIO()  # the scripts' words go to their DAG's log; here to ours, not the command's output
                with contextlib.redirect_stdout(said):
                    decide_ended(task.task_dir, job, state)
                if said.getvalue():
                    log.info("task %s: %s", task.name, said.getvalue().strip())
            if node_outcome(task.task_dir, job) is not None:
                continue
            automatic = is_automatic(task.task_dir) if automatic is None else automatic
            reason, _ = pre_failures(dag_of(job, automatic)).get(f"Job{job}", (None, 0))
            if reason is not None:
                close_failed_pre(task.task_dir, job, reason)
                log.info("task %s: job %s: its PreJob ended before the job was submitted (%s)", task.name, job, reason)

    def _outcome(self, task: Task) -> tuple[str, str] | None:
        """COMPLETED or FAILED and why, for a task whose DAGMan has left the queue (None: the
        history does not have it yet)."""
        done = self.schedd.history(f"ClusterId == {task.dagman_id}", ["ExitCode", "JobStatus"], match=1)
        if not done:
            return None
        ad = done[0]
        if is_automatic(task.task_dir):  # probes and processing jobs may fail; the tails decide
            why = task_outcome(task.task_dir)
            return (FAILED if why else COMPLETED), why
        if ad.get("JobStatus") == JobStatus.COMPLETED and ad.get("ExitCode") == 0:
            return COMPLETED, ""
        if ad.get("JobStatus") == JobStatus.COMPLETED and all_finished(task.task_dir):
            return COMPLETED, ""  # its failed node's job succeeded; the PostJob that would have said so died
        if ad.get("JobStatus") == JobStatus.REMOVED:
            return FAILED, DAG_REMOVED
        return FAILED, f"DAGMan exited {ad.get('ExitCode', 'on removal')}"

    def refresh(self, task: Task) -> None:
        """Bring the task's status cache up to date (:func:`engine.crab.client.status.refresh_cache`)."""
        try:
            refresh_cache(task.task_dir)
        except Exception:  # derived data: a cache that cannot be refreshed must not hold the task up
            log.exception("task %s: cannot bring the status cache up to date", task.name)

    def _rerun_after_wait(self, task: Task) -> None:
        """The DAGMan a resubmit waited for has ended: run its rescue DAG for the resubmitted jobs."""
        args = {k: v for k, v in task.arguments.items() if k != "waiting_for"}
        try:
            cluster = self._queued_dagman(task) or self._queue_dag(task, force=False)
        except (OSError, DagError, ScheddError) as e:
            log.info("task %s: resubmit failed: %s", task.name, e)
            self.db.update(task, status=RESUBMITFAILED, arguments=args, message=str(e))
            return
        self.db.update(task, dagman_id=cluster, arguments=args, message=_resubmitted(args))


DAG_REMOVED = "DAGMan exited on removal"


def all_finished(task_dir: str) -> bool:
    """Whether every job of the task has succeeded, by its retry state."""
    states = [load_job_state(task_dir, job) for job in job_ids(task_dir)]
    return bool(states) and all(s.attempts and s.attempts[-1].action == "ok" for s in states)


def _resubmitted(args: dict) -> str:
    return f"resubmitted job(s) {','.join(args['job_ids'])} (epoch {args['epoch']})"


def start(state: StateDir, interval: float = 1.0) -> threading.Event:
    """Run a worker in a daemon thread until the returned event is set."""
    from engine.schedd.local.client import LocalScheddClient

    stop = threading.Event()

    def loop() -> None:
        worker = None
        with LocalScheddClient(state, autostart=False) as schedd:
            while not stop.wait(interval):
                # Whatever goes wrong in one round (the task table locked by a command opening it at
                # the same moment, a schedd call failing), the next round tries again: a worker
                # thread that died would leave every task NEW without a word.
                try:
                    worker = worker or TaskWorker(state, schedd)
                    worker.work_once()
                except Exception:
                    log.exception("task worker: this round failed; trying again")
    threading.Thread(target=loop, name="crab-task-worker", daemon=True).start()
    return stop


LONG_JOB_S = 3600  # real seconds of the longest job beyond which the task's message says how long


def long_jobs_note(jobs, ad: TaskAd) -> str:
    """What a configuration written for the grid does not expect here: the simulated cmsRun reads
    its events at the grid's pace, on a clock of ``Debug.timeScale``, so a tutorial's task of
    MINIAODSIM files runs for hours of real time at the default scale of 1."""
    if ad.script_exe or ad.automatic or not jobs:
        return ""
    events = max(job.events for job in jobs)
    seconds = events / DEFAULT_EVENTS_PER_SECOND / ad.time_scale
    if seconds < LONG_JOB_S:
        return ""
    return (f"; the largest reads {events:,} events, about {seconds / 3600:.1f} h of real time at "
            f"{DEFAULT_EVENTS_PER_SECOND:g} events/s: set Debug.timeScale (simulated seconds per real second) "
            f"to go faster")
