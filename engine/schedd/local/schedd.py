"""The embedded schedd: HTCondor's job model and controls, running jobs on this machine.

It keeps every job ad in memory and in :class:`~engine.schedd.local.jobqueue.JobQueue`, and
commits each transition before acting on it, so a crash loses nothing.  Vanilla jobs run when
matchmaking finds them a slot of the pool; local and scheduler universe jobs (DAGMan) run at
once, on the submit side, as HTCondor runs them.  Policy follows HTCondor: ``OnExitHold`` and
``OnExitRemove`` when a job exits, ``PeriodicHold``/``PeriodicRelease``/``PeriodicRemove`` on a
timer, with the job's ``MemoryUsage`` measured while it runs.  Events go to the job's
``UserLog`` and to ``DAGManNodesLog`` when DAGMan set one.

The process side needs an asyncio loop (``attach``): exits are noticed through a pidfd per job.
"""

from __future__ import annotations

import asyncio
import getpass
import math
import os
import resource
import signal
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

import classad2

from engine.schedd.api import (
    HOLD_CODE_JOB_POLICY,
    HOLD_CODE_START_FAILED,
    HOLD_CODE_USER,
    ActResult,
    JobAction,
    JobSpec,
    JobStatus,
    ScheddError,
    SubmitResult,
    summarize,
)
from engine.schedd.local import starter
from engine.schedd.local.jobqueue import JobQueue, job_id
from engine.schedd.local.pool import Pool, analyze
from engine.schedd.local.submit import SubmitDescription, build_job_ads
from engine.schedd.local.userlog import (
    Event,
    ExecuteEvent,
    JobAbortedEvent,
    JobEvictedEvent,
    JobHeldEvent,
    JobImageSizeEvent,
    JobReleasedEvent,
    JobTerminatedEvent,
    Rusage,
    SubmitEvent,
    UserLog,
)
from engine.state import StateDir

JobId = tuple[int, int]
UNIVERSE_SCHEDULER = 7
SLOTLESS_UNIVERSES = (UNIVERSE_SCHEDULER, 12)  # scheduler and local universe jobs run on the submit side
DEFAULT_PERIODIC_INTERVAL = 5.0  # seconds; HTCondor's PERIODIC_EXPR_INTERVAL is 60
# A job's own PERIODIC_EXPR_INTERVAL, in seconds (a job on a scaled clock, such as a CRAB job of the
# simulated grid, asks for 60 of its simulated seconds); honoured while it runs or is held, down to
# MIN_PERIODIC_INTERVAL.
JOB_PERIODIC_INTERVAL = "CRABTUI_PeriodicExprInterval"
MIN_PERIODIC_INTERVAL = 0.2
DEFAULT_VACATE_TIME = 10.0  # seconds from the kill signal to SIGKILL (JobMaxVacateTime)
_PROTECTED = {"clusterid", "procid", "jobstatus", "mytype", "owner", "qdate"}


class LocalSchedd:
    """One machine's schedd. Not thread-safe: the daemon calls it from its event loop only."""

    def __init__(self, state: StateDir, pool: Pool, *, clock: Callable[[], float] = time.time,
                 periodic_interval: float = DEFAULT_PERIODIC_INTERVAL,
                 vacate_time: float = DEFAULT_VACATE_TIME):
        self.state = state
        self.pool = pool
        self.clock = clock
        self.periodic_interval = periodic_interval
        self.vacate_time = vacate_time
        self.queue = JobQueue(state.db)
        self.jobs: dict[JobId, classad2.ClassAd] = {job_id(ad): ad for ad in self.queue.load()}
        self.texts: dict[JobId, str] = {}  # each job's ad as text, kept from its last save, for queries
        self.running: dict[JobId, starter.JobProcess] = {}
        self.host = f"<127.0.0.1:0?addrs=127.0.0.1-0&alias={socket.gethostname()}>"
        self.loop: asyncio.AbstractEventLoop | None = None
        self._idle_order: list[JobId] | None = None  # idle jobs that need a slot, best first; None: rebuild
        self._slotless: list[JobId] = []  # idle scheduler and local universe jobs
        self._timer: asyncio.TimerHandle | None = None
        self._fast_timer: asyncio.TimerHandle | None = None
        self._intervals: dict[JobId, float | None] = {}  # each job's own periodic interval, once looked at
        self._schedule_pending = False
        # Running jobs held or removed whose processes have not exited yet: the held event's fields
        # ({} for a removal), logged after JOB_EVICTED once the job is gone, as HTCondor logs them.
        self._vacating: dict[JobId, dict] = {}

    # ------------------------------------------------------------------ lifecycle

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start work on ``loop``: recover from a previous crash, then schedule and poll."""
        self.loop = loop
        self.recover()
        self.schedule()
        self._timer = loop.call_later(self.periodic_interval, self._periodic_tick)
        self._fast_timer = loop.call_later(MIN_PERIODIC_INTERVAL, self._fast_tick)

    def shutdown(self) -> int:
        """Stop: running jobs are evicted back to idle, as a schedd that goes down evicts them."""
        for timer in (self._timer, self._fast_timer):
            if timer:
                timer.cancel()
        evicted = list(self.running)
        for key in evicted:
            proc = self.running.pop(key)
            self.loop.remove_reader(proc.pidfd)
            os.close(proc.pidfd)
            starter.signal_job(proc, signal.SIGKILL)
            proc.popen.wait()
            self.pool.release(_name(key))
        stopped = [self.jobs[k] for k in evicted if k in self._vacating]
        if stopped:
            self._stopped(stopped)
        evicted = [k for k in evicted if k in self.jobs and self.jobs[k]["JobStatus"] == JobStatus.RUNNING]
        if evicted:
            self._evict([self.jobs[k] for k in evicted], "The schedd shut down; the job will run again.")
        self.queue.close()
        return len(evicted)

    def recover(self) -> None:
        """Jobs left Running by a schedd that died lost their shadow: back to idle, as HTCondor does."""
        lost = [ad for ad in self.jobs.values() if ad["JobStatus"] in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT)]
        for ad in lost:
            for pid in starter.orphans(self._ad_file(job_id(ad))):
                try:
                    os.killpg(os.getpgid(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if lost:
            self._evict(lost, "The job's schedd went away while the job ran; the job will run again.")
        # Held or removed while running, and the schedd died before the job's exit: JobPid, saved
        # with the hold or removal, says so. Its processes go, and its events are logged now.
        stopping = [ad for ad in self.jobs.values()
                    if ad["JobStatus"] in (JobStatus.HELD, JobStatus.REMOVED) and "JobPid" in ad]
        for ad in stopping:
            for pid in starter.orphans(self._ad_file(job_id(ad))):
                try:
                    os.killpg(os.getpgid(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._vacating[job_id(ad)] = _held_fields(ad) if ad["JobStatus"] == JobStatus.HELD else {}
        if stopping:
            self._stopped(stopping)
        removed = [ad for ad in self.jobs.values() if ad["JobStatus"] == JobStatus.REMOVED]
        if removed:
            with self.queue.transaction():
                for ad in removed:
                    self._leave_queue(ad)

    # ------------------------------------------------------------------ the Schedd API

    def new_cluster(self) -> int:
        return self.queue.new_cluster()

    def submit(self, description: SubmitDescription | str, *, count: int = 0,
               itemdata: Iterable[dict[str, str]] | None = None) -> SubmitResult:
        if isinstance(description, str):
            description = SubmitDescription(description)
        cluster = self.new_cluster()
        ads = build_job_ads(description, cluster, count=count, itemdata=itemdata, now=int(self.clock()))
        return self.submit_ads(cluster, ads)

    def submit_ads(self, cluster: int, ads: Sequence[classad2.ClassAd]) -> SubmitResult:
        """Queue the ads a submitter built for ``cluster`` (see :meth:`new_cluster`)."""
        if not ads:
            raise ScheddError("the submit description queues no jobs")
        for ad in ads:
            if ad["ClusterId"] != cluster:
                raise ScheddError(f"job ad for cluster {ad['ClusterId']} submitted as cluster {cluster}")
        with self.queue.transaction():
            self._save(ads)
        for ad in ads:
            self.jobs[job_id(ad)] = ad
            # A job submitted on hold gets no held event: HTCondor logs only the submit.
            self._log(ad, SubmitEvent, submit_host=self.host, log_notes=ad.get("SubmitEventNotes", ""))
        self._idle_order = None
        self._schedule_soon()  # after the reply: a submitter (DAGMan) need not wait for the forks
        asked = [interval for ad in ads if (interval := _float(ad.get(JOB_PERIODIC_INTERVAL))) is not None]
        if asked and self._fast_timer is not None and self.loop is not None:
            due = self.loop.time() + max(min(asked), MIN_PERIODIC_INTERVAL)
            if due < self._fast_timer.when():  # the policy ticks as often as the new jobs ask, from now on
                self._fast_timer.cancel()
                self._fast_timer = self.loop.call_at(due, self._fast_tick)
        return SubmitResult(cluster, ads[0]["ProcId"], len(ads))

    def query(self, constraint: str = "true", projection: Sequence[str] = ()) -> list[classad2.ClassAd]:
        return [_project(ad, projection) for _, ad in self._matching(constraint)]

    def query_values(self, constraint: str, projection: Sequence[str]) -> list[list]:
        """Matching jobs as rows of ``projection`` values (None where unset, expressions as text):
        what a table needs, without printing and parsing whole ads."""
        rows = []
        for _, ad in self._matching(constraint):
            row = []
            for attr in projection:
                value = ad.get(attr)
                row.append(value if value is None or isinstance(value, (int, float, str)) else str(value))
            rows.append(row)
        return rows

    def summary(self, constraint: str = "false") -> dict[str, int]:
        """The query's and the whole queue's totals, from one moment of the queue."""
        return summarize(((ad["JobStatus"], ad["JobUniverse"]) for _, ad in self._matching(constraint)),
                         ((ad["JobStatus"], ad["JobUniverse"]) for ad in self.jobs.values()))

    def history(self, constraint: str = "true", projection: Sequence[str] = (), match: int = -1) -> list[classad2.ClassAd]:
        expr = _constraint(constraint)
        out = []
        for ad in self.queue.history():
            if expr.eval(scope=ad) is True:
                out.append(_project(ad, projection))
                if 0 <= match <= len(out):
                    break
        return out

    def analyze(self, job: str) -> str:
        """Why an idle job does not run, as ``condor_q -better-analyze`` explains it."""
        (key,) = self._resolve(job)
        return analyze(self.jobs[key], self.pool)

    def edit(self, job_spec: JobSpec, attr: str | Mapping[str, str], value: str | None = None) -> int:
        attrs = {attr: value} if isinstance(attr, str) else dict(attr)
        for name in attrs:
            if name.lower() in _PROTECTED:
                raise ScheddError(f"{name} cannot be edited; it is maintained by the schedd")
        exprs = {name: _constraint(text, what="value") for name, text in attrs.items()}
        keys = self._resolve(job_spec)
        with self.queue.transaction():
            for key in keys:
                self.jobs[key].update(exprs)
            self._save(self.jobs[k] for k in keys)
        self._idle_order = None
        self.schedule()
        return len(keys)

    def act(self, action: JobAction | str, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        action = JobAction(action)
        keys = self._resolve(job_spec)
        explicit = not _is_constraint(job_spec)
        allowed, refused, kinds = [], [], Counter()
        for key in keys:
            problem = self._refusal(action, self.jobs[key])
            if problem is None:
                allowed.append(key)
            else:
                kinds[problem[0]] += 1
                refused.append(f"{key[0]}.{key[1]}: {problem[1]}")
        if refused and explicit:
            raise ScheddError("; ".join(refused) + "; nothing was changed")
        ads = [self.jobs[k] for k in allowed]
        if action is JobAction.Hold:
            self._hold(ads, reason or "via condor_hold (by user " + _user() + ")", HOLD_CODE_USER, 0)
        elif action is JobAction.Release:
            self._release(ads, reason or "via condor_release (by user " + _user() + ")")
        else:
            self._remove(ads, reason or "via condor_rm (by user " + _user() + ")", force=action is JobAction.RemoveX)
        self.schedule()
        return ActResult(len(allowed), tuple(refused), bad_status=kinds["bad_status"],
                         already_done=kinds["already_done"], job_ads=len(self.jobs))

    # ------------------------------------------------------------------ scheduling

    def _schedule_soon(self) -> None:
        """One :meth:`schedule` for all the requests the loop handles before it gets there."""
        if self.loop is not None and not self._schedule_pending:
            self._schedule_pending = True
            self.loop.call_soon(self._scheduled)

    def _scheduled(self) -> None:
        self._schedule_pending = False
        self.schedule()

    def schedule(self) -> None:
        """Start every idle job that can start: slotless universes at once, others on a matching slot."""
        if self.loop is None:
            return
        if self._idle_order is None:
            idle = [k for k, ad in self.jobs.items() if ad["JobStatus"] == JobStatus.IDLE]
            idle.sort(key=lambda k: (-_int(self.jobs[k].get("JobPrio")), self.jobs[k]["QDate"], k))
            self._slotless = [k for k in idle if self.jobs[k]["JobUniverse"] in SLOTLESS_UNIVERSES]
            self._idle_order = [k for k in idle if self.jobs[k]["JobUniverse"] not in SLOTLESS_UNIVERSES]
        starts: list[tuple[JobId, object]] = [(k, None) for k in self._slotless if self._is_idle(k)]
        self._slotless = []
        free = len(self.pool.free_slots())
        if free:
            order, remaining = self._idle_order, []
            for index, key in enumerate(order):
                if not free:
                    remaining.extend(order[index:])  # every slot is busy: the rest waits, unexamined
                    break
                ad = self.jobs.get(key)
                if ad is None or ad["JobStatus"] != JobStatus.IDLE:
                    continue
                if key in self.running:  # released before its last run's process exited
                    remaining.append(key)
                    continue
                slot = self.pool.match(ad)
                if slot is None:
                    remaining.append(key)
                    continue
                self.pool.claim(slot, _name(key))
                starts.append((key, slot))
                free -= 1
            self._idle_order = remaining
        if starts:
            self._start(starts)

    def _ad_file(self, key: JobId) -> str:
        return os.path.join(self.state.spool, f"{_name(key)}.job.ad")

    def _is_idle(self, key: JobId) -> bool:
        ad = self.jobs.get(key)
        return ad is not None and ad["JobStatus"] == JobStatus.IDLE and key not in self.running

    def _start(self, starts: list[tuple[JobId, object]]) -> None:
        now = int(self.clock())
        with self.queue.transaction():
            for key, slot in starts:
                ad = self.jobs[key]
                ad["JobStatus"] = int(JobStatus.RUNNING)
                ad["EnteredCurrentStatus"] = now
                ad["NumJobStarts"] = ad.get("NumJobStarts", 0) + 1
                ad["JobRunCount"] = ad.get("JobRunCount", 0) + 1
                ad["JobCurrentStartDate"] = now
                if "JobStartDate" not in ad:
                    ad["JobStartDate"] = now
                if slot is not None:
                    ad["RemoteHost"] = slot.name
                    site = slot.ad.get("GLIDEIN_CMSSite")
                    if site is not None:
                        ad["MATCH_GLIDEIN_CMSSite"] = site
            self._save(self.jobs[k] for k, _ in starts)
        failed = []
        for key, slot in starts:
            ad = self.jobs[key]
            try:
                proc = starter.start(ad, self._ad_file(key), slot.ad if slot is not None else None)
            except OSError as e:
                failed.append((key, f"Error from starter: Failed to execute '{ad['Cmd']}': {e.strerror or e}"))
                continue
            proc.pidfd = os.pidfd_open(proc.pid)
            self.running[key] = proc
            self.loop.add_reader(proc.pidfd, self._reap, key)
            # Shown to queries, not committed: recovery finds orphans by their environment instead.
            ad["JobPid"] = proc.pid
            self.texts.pop(key, None)
            props = {"CondorScratchDir": ad["Iwd"], "Cpus": ad.get("RequestCpus", 1), "Disk": ad.get("RequestDisk", 0),
                     "GPUs": 0, "Memory": ad.get("RequestMemory", 0)} if slot else {}
            self._log(ad, ExecuteEvent, execute_host=self.host, slot_name=slot.name if slot else "", props=props)
        if failed:
            for key, _ in failed:
                self.pool.release(_name(key))
            for key, message in failed:
                self._hold([self.jobs[key]], message, HOLD_CODE_START_FAILED, 2)

    def _reap(self, key: JobId) -> None:
        proc = self.running.pop(key)
        self.loop.remove_reader(proc.pidfd)
        os.close(proc.pidfd)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.popen.returncode = os.waitstatus_to_exitcode(status)
        self.pool.release(_name(key))
        ad = self.jobs.get(key)
        wall = time.monotonic() - proc.started
        if ad is not None:
            self._account(ad, wall, usage, proc)
            if key in self._vacating:
                self._vacated(ad, Rusage(usage.ru_utime, usage.ru_stime), wall, usage.ru_utime + usage.ru_stime)
            if ad["JobStatus"] == JobStatus.REMOVED:
                with self.queue.transaction():
                    self._leave_queue(ad)
            elif ad["JobStatus"] == JobStatus.RUNNING:
                self._exited(ad, status, usage, wall)
            else:  # held (or held and released) while it ran: keep the usage it accumulated
                with self.queue.transaction():
                    self._save([ad])
                if ad["JobStatus"] == JobStatus.IDLE:
                    self._idle_order = None  # it can run again now
        starter.remove_ad_files(self._ad_file(key))
        self.schedule()

    def _account(self, ad: classad2.ClassAd, wall: float, usage: resource.struct_rusage,
                 proc: starter.JobProcess) -> None:
        ad["RemoteWallClockTime"] = float(ad.get("RemoteWallClockTime", 0.0)) + wall
        ad["LastRemoteWallClockTime"] = float(wall)  # the last run's: condor_q's RUN_TIME of an idle or held job
        ad["RemoteUserCpu"] = float(ad.get("RemoteUserCpu", 0.0)) + usage.ru_utime
        ad["RemoteSysCpu"] = float(ad.get("RemoteSysCpu", 0.0)) + usage.ru_stime
        # Only our own samples: a forked child's ru_maxrss counts the parent's pages before exec.
        if proc.peak_rss_kb:
            ad["ResidentSetSize"] = proc.peak_rss_kb
            ad["MemoryUsage"] = math.ceil(proc.peak_rss_kb / 1024)
        ad.pop("JobPid", None)

    def _exited(self, ad: classad2.ClassAd, status: int, usage, wall: float) -> None:
        now = int(self.clock())
        signalled = os.WIFSIGNALED(status)
        ad["ExitBySignal"] = signalled
        if signalled:
            ad["ExitSignal"] = os.WTERMSIG(status)
            ad.pop("ExitCode", None)
        else:
            ad["ExitCode"] = os.WEXITSTATUS(status)
        ad["NumJobCompletions"] = ad.get("NumJobCompletions", 0) + 1
        ad["LastJobStatus"] = int(JobStatus.RUNNING)
        run_usage = Rusage(usage.ru_utime, usage.ru_stime)
        total_usage = Rusage(float(ad["RemoteUserCpu"]), float(ad["RemoteSysCpu"]))
        if _eval(ad, "OnExitHold") is True:
            reason = _reason(ad, "OnExitHoldReason", f"The job attribute OnExitHold expression '{ad['OnExitHold']}' evaluated to TRUE")
            self._hold([ad], reason, HOLD_CODE_JOB_POLICY, _int(_eval(ad, "OnExitHoldSubCode")))
            return
        leave = _eval(ad, "OnExitRemove")
        if leave is True or not isinstance(leave, bool):
            ad["CompletionDate"] = now
            self._log(ad, JobTerminatedEvent,
                      return_value=None if signalled else ad["ExitCode"],
                      signal_number=ad["ExitSignal"] if signalled else None,
                      run_remote_usage=run_usage, total_remote_usage=total_usage,
                      usage=_usage(ad, wall, usage.ru_utime + usage.ru_stime),
                      exited_at=datetime.fromtimestamp(now).astimezone())
            ad["JobStatus"] = int(JobStatus.COMPLETED)
            ad["EnteredCurrentStatus"] = now
            with self.queue.transaction():
                self._leave_queue(ad)
        else:
            self._evict([ad], "The job exited, and its OnExitRemove expression is false: it will run again.",
                        requeued=(None if signalled else ad["ExitCode"], ad["ExitSignal"] if signalled else None))

    # ------------------------------------------------------------------ transitions

    def _hold(self, ads: list[classad2.ClassAd], reason: str, code: int, subcode: int) -> None:
        now = int(self.clock())
        with self.queue.transaction():
            for ad in ads:
                _enter(ad, JobStatus.HELD, now)
                ad["HoldReason"] = reason
                ad["HoldReasonCode"] = code
                ad["HoldReasonSubCode"] = subcode
                ad["NumHolds"] = ad.get("NumHolds", 0) + 1
            self._save(ads)
        for ad in ads:
            if job_id(ad) in self.running:  # logged once the job is gone, after its JOB_EVICTED
                self._vacating[job_id(ad)] = _held_fields(ad)
                self._stop(ad, ad.get("HoldKillSig"))
            else:
                self._log(ad, JobHeldEvent, **_held_fields(ad))

    def _release(self, ads: list[classad2.ClassAd], reason: str) -> None:
        now = int(self.clock())
        with self.queue.transaction():
            for ad in ads:
                _enter(ad, JobStatus.IDLE, now)
                ad["LastHoldReason"] = ad.get("HoldReason", "")
                ad["LastHoldReasonCode"] = ad.get("HoldReasonCode", 0)
                for attr in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
                    ad.pop(attr, None)
                ad["ReleaseReason"] = reason
            self._save(ads)
        for ad in ads:
            if job_id(ad) in self._vacating:  # released before its process exited: its hold comes first
                self._vacated(ad)
            self._log(ad, JobReleasedEvent, reason=reason)
        self._idle_order = None

    def _remove(self, ads: list[classad2.ClassAd], reason: str, force: bool = False) -> None:
        now = int(self.clock())
        ads = self._with_dependents(ads)
        with self.queue.transaction():
            for ad in ads:
                if ad["JobStatus"] != JobStatus.REMOVED:
                    _enter(ad, JobStatus.REMOVED, now)
                ad["EnteredCurrentStatus"] = now
                ad["RemoveReason"] = reason
                if job_id(ad) not in self.running or force:
                    self._vacating.pop(job_id(ad), None)
                    self._leave_queue(ad)
                else:
                    self._vacating.setdefault(job_id(ad), {})  # JOB_EVICTED comes before JOB_ABORTED
                    self._save([ad])
        for ad in ads:
            self._stop(ad, ad.get("RemoveKillSig"), force=force)

    def _with_dependents(self, ads: list[classad2.ClassAd]) -> list[classad2.ClassAd]:
        """Add the jobs a removed job takes with it (``OtherJobRemoveRequirements``, as DAGMan sets)."""
        chosen = {job_id(ad): ad for ad in ads}
        pending = list(ads)
        while pending:
            ad = pending.pop()
            requirement = ad.get("OtherJobRemoveRequirements")
            if not requirement:
                continue
            expr = _constraint(str(requirement))
            for key, other in self.jobs.items():
                if key not in chosen and other["JobStatus"] != JobStatus.REMOVED and expr.eval(scope=other) is True:
                    chosen[key] = other
                    pending.append(other)
        return list(chosen.values())

    def _evict(self, ads: list[classad2.ClassAd], reason: str,
               requeued: tuple[int | None, int | None] | None = None) -> None:
        """Back to idle; ``requeued`` is (return value, signal) when the job exited and OnExitRemove kept it."""
        now = int(self.clock())
        with self.queue.transaction():
            for ad in ads:
                _enter(ad, JobStatus.IDLE, now)
                ad.pop("JobPid", None)
            self._save(ads)
        extra = {}
        if requeued is not None:
            extra = {"terminated_and_requeued": True, "return_value": requeued[0], "signal_number": requeued[1]}
        for ad in ads:
            self._log(ad, JobEvictedEvent, reason=reason, **extra)
        self._idle_order = None

    def _vacated(self, ad: classad2.ClassAd, run_usage: Rusage = Rusage(), wall: float = 0.0,
                 cpu: float = 0.0) -> None:
        """A job held or removed while it ran has stopped: JOB_EVICTED, as HTCondor's shadow logs
        it (a usage table only for a job that had a slot), then the held event its hold waited for."""
        held = self._vacating.pop(job_id(ad))
        usage = _usage(ad, wall, cpu) if ad["JobUniverse"] not in SLOTLESS_UNIVERSES else None
        self._log(ad, JobEvictedEvent, run_remote_usage=run_usage, usage=usage)
        if held:
            self._log(ad, JobHeldEvent, **held)

    def _stopped(self, ads: list[classad2.ClassAd]) -> None:
        """Held or removed jobs whose processes were killed without being reaped (shutdown,
        recovery): their events, and no process left."""
        for ad in ads:
            ad.pop("JobPid", None)
            self._vacated(ad)
        with self.queue.transaction():
            for ad in ads:
                if ad["JobStatus"] == JobStatus.REMOVED:
                    self._leave_queue(ad)
                else:
                    self._save([ad])

    def _leave_queue(self, ad: classad2.ClassAd) -> None:
        """Inside a transaction: a completed or removed job moves to the history."""
        key = job_id(ad)
        now = int(self.clock())
        if ad["JobStatus"] == JobStatus.REMOVED:
            self._log(ad, JobAbortedEvent, reason=ad.get("RemoveReason", ""))
        ad["JobFinishedHookDone"] = now
        self.queue.retire(ad, now)
        del self.jobs[key]
        self.texts.pop(key, None)

    def _stop(self, ad: classad2.ClassAd, kill_sig, force: bool = False) -> None:
        """Signal a running job's processes, then SIGKILL them after the vacate time; a
        scheduler-universe job (DAGMan, which still runs its FINAL node) is left to exit."""
        proc = self.running.get(job_id(ad))
        if proc is None:
            return
        first = signal.SIGKILL if force else starter.signal_number(kill_sig or ad.get("KillSig"), signal.SIGTERM)
        starter.signal_job(proc, first)
        if first != signal.SIGKILL and ad["JobUniverse"] != UNIVERSE_SCHEDULER:
            self.loop.call_later(self.vacate_time, self._kill_if_running, job_id(ad), proc)

    def _kill_if_running(self, key: JobId, proc: starter.JobProcess) -> None:
        if self.running.get(key) is proc:
            starter.signal_job(proc, signal.SIGKILL)

    # ------------------------------------------------------------------ periodic policy

    def _periodic_tick(self) -> None:
        try:
            self.periodic()
        finally:
            self._timer = self.loop.call_later(self.periodic_interval, self._periodic_tick)

    def _fast_tick(self) -> None:
        """The periodic policy of the running and held jobs that ask for a shorter interval than the
        schedd's (:data:`JOB_PERIODIC_INTERVAL`), as often as the most pressed job in the queue
        asks: the release of a job held 5 simulated minutes comes within a simulated minute,
        whatever the task's time scale."""
        delay = self.periodic_interval
        try:
            if len(self._intervals) > 2 * len(self.jobs) + 100:  # forget the jobs that have left
                self._intervals = {key: self._intervals[key] for key in self.jobs if key in self._intervals}
            fast = {}
            for key, ad in self.jobs.items():
                interval = self._intervals.get(key, 0.0)
                if interval == 0.0:  # not looked at yet: the attribute is the job's from its submission
                    interval = self._intervals[key] = _float(ad.get(JOB_PERIODIC_INTERVAL))
                if interval is not None and interval < self.periodic_interval:
                    delay = min(delay, max(interval, MIN_PERIODIC_INTERVAL))
                    if ad["JobStatus"] in (JobStatus.RUNNING, JobStatus.HELD):
                        fast[key] = ad
            if fast:
                self.periodic(fast)
        finally:
            self._fast_timer = self.loop.call_later(delay, self._fast_tick)

    def periodic(self, only: dict[JobId, classad2.ClassAd] | None = None) -> None:
        """Measure running jobs' memory, then apply the periodic policy as HTCondor's
        ``UserPolicy::AnalyzePolicy`` does: PeriodicHold (a job neither held nor completed), then
        PeriodicRelease (a held job, unless a user held it), then PeriodicRemove; the first that
        is true acts.  A removal's reason is the job's PeriodicRemoveReason where it has one.
        ``only``: these jobs, not every job.

        Scheduler-universe jobs (DAGMan) are not measured: HTCondor runs them without a starter,
        so it never updates their image size or logs an IMAGE_SIZE event for them."""
        jobs = self.jobs if only is None else only
        changed = []
        for key, proc in list(self.running.items()):
            ad = jobs.get(key)
            if ad is None or ad["JobUniverse"] == UNIVERSE_SCHEDULER:
                continue
            rss, vsize = starter.memory_kb(proc.pid)
            if rss > proc.peak_rss_kb:
                proc.peak_rss_kb = rss
                ad["ResidentSetSize"] = rss
                ad["MemoryUsage"] = math.ceil(rss / 1024)
                ad["ImageSize"] = max(vsize, _int(ad.get("ImageSize")))
                changed.append(ad)
                self._log(ad, JobImageSizeEvent, image_size=ad["ImageSize"], memory_usage=ad["MemoryUsage"],
                          resident_set_size=rss)
        if changed:
            with self.queue.transaction():
                self._save(changed)
        remove, hold, release = [], [], []
        for ad in list(jobs.values()):
            status = ad["JobStatus"]
            if status == JobStatus.REMOVED:
                continue
            if status not in (JobStatus.HELD, JobStatus.COMPLETED) and _eval(ad, "PeriodicHold") is True:
                hold.append(ad)
            elif (status == JobStatus.HELD and ad.get("HoldReasonCode") != HOLD_CODE_USER
                  and _eval(ad, "PeriodicRelease") is True):
                release.append(ad)
            elif _eval(ad, "PeriodicRemove") is True:
                remove.append(ad)
        for ad in remove:
            default = f"The job attribute PeriodicRemove expression '{ad['PeriodicRemove']}' evaluated to TRUE"
            self._remove([ad], _reason(ad, "PeriodicRemoveReason", default))
        for ad in hold:
            reason = _reason(ad, "PeriodicHoldReason", f"The job attribute PeriodicHold expression '{ad['PeriodicHold']}' evaluated to TRUE")
            self._hold([ad], reason, HOLD_CODE_JOB_POLICY, _int(_eval(ad, "PeriodicHoldSubCode")))
        if release:
            self._release(release, "The job attribute PeriodicRelease expression evaluated to TRUE")
        if remove or hold or release:
            self.schedule()

    # ------------------------------------------------------------------ helpers

    def _save(self, ads: Iterable[classad2.ClassAd]) -> None:
        """Inside a transaction: persist changed ads, keeping their text for queries."""
        self.texts.update(self.queue.put(ads))

    def query_texts(self, constraint: str = "true") -> list[str]:
        """Matching jobs as ClassAd text, what the daemon sends: no ad is printed twice."""
        out = []
        for key, ad in self._matching(constraint):
            text = self.texts.get(key)
            if text is None:
                text = self.texts[key] = str(ad)
            out.append(text)
        return out

    def _matching(self, constraint: str) -> list[tuple[JobId, classad2.ClassAd]]:
        """The queue's jobs for which a ClassAd constraint is true, in job id order."""
        expr = _constraint(constraint)
        return [(key, ad) for key, ad in sorted(self.jobs.items()) if expr.eval(scope=ad) is True]

    def _resolve(self, job_spec: JobSpec) -> list[JobId]:
        """Job ids for a spec: ``c.p``, a cluster, a list of those, or a constraint."""
        if _is_constraint(job_spec):
            return [key for key, _ in self._matching(str(job_spec))]
        specs = [job_spec] if isinstance(job_spec, (str, int)) else list(job_spec)
        keys: list[JobId] = []
        for spec in specs:
            text = str(spec).strip()
            cluster, _, proc = text.partition(".")
            if not cluster.isdigit() or (proc and not proc.isdigit()):
                raise ScheddError(f"{text!r} is not a job id; give CLUSTER or CLUSTER.PROC")
            if proc:
                key = (int(cluster), int(proc))
                if key not in self.jobs:
                    raise ScheddError(self._missing(int(cluster), int(proc)))
                keys.append(key)
            else:
                found = sorted(k for k in self.jobs if k[0] == int(cluster))
                if not found:
                    raise ScheddError(self._missing(int(cluster), None))
                keys.extend(found)
        return list(dict.fromkeys(keys))

    def _missing(self, cluster: int, proc: int | None) -> str:
        name = f"{cluster}.{proc}" if proc is not None else f"cluster {cluster}"
        gone = self.queue.in_history(cluster, proc)
        if gone:
            status = JobStatus(gone[0]["JobStatus"]).name.lower()
            return f"job {name} is no longer in the queue: it is {status}; see 'crabtui history {cluster}'"
        return f"job {name} is not in the queue"

    @staticmethod
    def _refusal(action: JobAction, ad: classad2.ClassAd) -> tuple[str, str] | None:
        """Why a job cannot take the action, as (the schedd's result kind, a sentence)."""
        status = JobStatus(ad["JobStatus"])
        if action is JobAction.Hold and status in (JobStatus.HELD, JobStatus.REMOVED):
            kind = "already_done" if status == JobStatus.HELD else "bad_status"
            return kind, f"cannot hold a job that is {status.name.lower()}"
        if action is JobAction.Release and status != JobStatus.HELD:
            return "bad_status", f"is not held (it is {status.name.lower()})"
        if action is JobAction.Remove and status == JobStatus.REMOVED:
            return "already_done", "is already being removed; use RemoveX (rm -forcex) to force it out"
        return None

    def _log(self, ad: classad2.ClassAd, event_type: type[Event], **fields) -> None:
        """The event to the job's ``UserLog`` (every event) and to ``DAGManNodesLog`` (only the
        event numbers in ``DAGManNodesMask``, when DAGMan set one: no IMAGE_SIZE, for one)."""
        paths = [ad.get("UserLog")]
        if _in_mask(ad.get("DAGManNodesMask"), event_type.type):
            paths.append(ad.get("DAGManNodesLog"))
        paths = [p for p in dict.fromkeys(paths) if p]
        if not paths:
            return
        event = event_type(cluster=ad["ClusterId"], proc=ad["ProcId"],
                           time=datetime.fromtimestamp(self.clock()).astimezone(), **fields)
        for path in paths:
            # Opened for each event, as HTCondor does: the user may move or delete the log meanwhile.
            try:
                with UserLog(path) as log:
                    log.write(event)
            except OSError:
                pass  # a log that became unwritable must not stop the schedd


def _in_mask(mask, event_type: int) -> bool:
    """Whether a job's DAGManNodesMask (event numbers, comma separated, as condor_dagman sets it)
    lets ``event_type`` into the nodes log; no mask lets every event in."""
    if mask is None:
        return True
    numbers = {int(n) for n in str(mask).replace(",", " ").split() if n.isdigit()}
    return int(event_type) in numbers


def _held_fields(ad: classad2.ClassAd) -> dict:
    """A held job's JobHeldEvent fields, from its hold attributes."""
    return {"reason": ad.get("HoldReason", ""), "code": ad.get("HoldReasonCode", 0),
            "subcode": ad.get("HoldReasonSubCode", 0)}


def _enter(ad: classad2.ClassAd, status: JobStatus, now: int) -> None:
    """Move a job to ``status``, remembering the one it leaves, as the schedd records it."""
    ad["LastJobStatus"] = ad["JobStatus"]
    ad["JobStatus"] = int(status)
    ad["EnteredCurrentStatus"] = now


def _name(key: JobId) -> str:
    return f"{key[0]}.{key[1]}"


def _constraint(text: str, what: str = "constraint") -> classad2.ExprTree:
    try:
        return classad2.ExprTree(text)
    except Exception:
        raise ScheddError(f"cannot parse {what} {text!r} as a ClassAd expression") from None


def _is_constraint(job_spec: JobSpec) -> bool:
    if isinstance(job_spec, int) or not isinstance(job_spec, str):
        return False
    return not job_spec.replace(".", "").strip().isdigit()


def _project(ad: classad2.ClassAd, projection: Sequence[str]) -> classad2.ClassAd:
    if not projection:
        return ad
    out = classad2.ClassAd()
    for attr in projection:
        if attr in ad:
            out[attr] = ad.lookup(attr)
    return out


def _usage(ad: classad2.ClassAd, wall: float, cpu: float) -> dict[str, int | float]:
    """The terminated event's resources, as a 23.9 dynamic slot reports them: allocated is what
    was requested, CPU usage is CPU time over wall time, times are whole seconds."""
    return {"Cpus": ad.get("RequestCpus", 1), "RequestCpus": ad.get("RequestCpus", 1),
            "CpusUsage": round(cpu / wall, 2) if wall > 0 else 0, "GPUs": 0,
            "Memory": ad.get("RequestMemory", 0), "RequestMemory": ad.get("RequestMemory", 0),
            "MemoryUsage": ad.get("MemoryUsage", 0), "Disk": ad.get("RequestDisk", 0),
            "RequestDisk": ad.get("RequestDisk", 0), "TimeExecuteUsage": int(wall),
            "TimeSlotBusyUsage": math.ceil(wall)}


def _eval(ad: classad2.ClassAd, attr: str):
    """An attribute's value, or None when the job does not define it."""
    return ad.eval(attr) if attr in ad else None


def _reason(ad: classad2.ClassAd, attr: str, default: str) -> str:
    """A policy's hold or removal reason: the job's reason expression evaluated (HTCondor's
    AssignJobExpr), else ``default``."""
    value = _eval(ad, attr)
    return value if isinstance(value, str) and value else default


def _float(value) -> float | None:
    """A positive number of an ad, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return None
    return float(value)


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _user() -> str:
    return getpass.getuser()

