"""The embedded schedd: HTCondor's job model and controls, running jobs on this machine.

It keeps every job ad in memory and in :class:`~engine.schedd.local.jobqueue.JobQueue`.  Every
change is a unit of work: its ads and the user-log events it causes are committed together, then
the events go to the logs, then processes are acted on.  So a job starts only after its state is
committed, no event is logged before the state behind it, and a crash in between leaves events in
the queue's outbox for the next schedd to write where the logs lack them.  The commits of one
scheduling pass (the exits the starters reported, the jobs they free slots for) are one
transaction.

Jobs run under starters (:mod:`engine.schedd.local.starter`), one small process per job, forked by
a spawner rather than by this large process.  A starter records its job's exit before it reports
it, so a schedd that restarts reconnects to the starters still running and collects the exits
recorded while it was down; only a job whose starter is gone too is evicted and run again, as
HTCondor does.  Vanilla jobs run when matchmaking finds them a slot of the pool; local and
scheduler universe jobs (DAGMan) run at once, on the submit side.  Policy follows HTCondor:
``OnExitHold`` and ``OnExitRemove`` when a job exits, ``PeriodicHold``/``PeriodicRelease``/
``PeriodicRemove`` on a timer, with the job's ``MemoryUsage`` measured while it runs.  Events go
to the job's ``UserLog`` and to ``DAGManNodesLog`` when DAGMan set one.  A cluster submitted with
``max_materialize`` or ``max_idle`` is a factory (:mod:`engine.schedd.local.factory`): every unit of
work ends by making the jobs its changes left room for, in the same transaction.

The process side needs an asyncio loop (``attach``): starters' news arrive on the spawner's pipe.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import getpass
import logging
import math
import os
import re
import select
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime

import classad2

from engine.schedd.api import (
    HOLD_CODE_JOB_DURATION,
    HOLD_CODE_JOB_POLICY,
    HOLD_CODE_USER,
    ActResult,
    JobAction,
    JobSpec,
    JobStatus,
    ScheddError,
    SubmitResult,
    summarize,
)
from engine.schedd.local import columns, crontab, dollar_dollar, factory, input_files, job_tools, shadow, starter
from engine.crashpoint import crash_point
from engine.gcpause import gc_paused
from engine.schedd.local.jobqueue import JobQueue, OutboxRow, job_id
from engine.schedd.local.pool import Pool, analyze
from engine.schedd.local.submit import SubmitDescription, build_job_ads
from engine.schedd.local.userlog import (
    Event,
    ClusterRemoveEvent,
    ClusterSubmitEvent,
    ExecuteEvent,
    FactoryPausedEvent,
    FactoryResumedEvent,
    JobAbortedEvent,
    JobEvictedEvent,
    JobHeldEvent,
    JobImageSizeEvent,
    JobReleasedEvent,
    JobTerminatedEvent,
    Rusage,
    SubmitEvent,
    append_events,
    events_by_job,
    format_event,
)
from engine.state import StateDir

log = logging.getLogger("crabtui.schedd")

JobId = tuple[int, int]
UNIVERSE_SCHEDULER = 7
SLOTLESS_UNIVERSES = (UNIVERSE_SCHEDULER, 12)  # scheduler and local universe jobs run on the submit side
MAX_NEXT_JOB_START_DELAY = 600  # seconds, HTCondor's default for the knob of that name
DEFAULT_PERIODIC_INTERVAL = 5.0  # seconds; HTCondor's PERIODIC_EXPR_INTERVAL is 60
# A job's own PERIODIC_EXPR_INTERVAL, in seconds (a job on a scaled clock, such as a CRAB job of the
# simulated grid, asks for 60 of its simulated seconds); honoured while it runs or is held, down to
# MIN_PERIODIC_INTERVAL.
JOB_PERIODIC_INTERVAL = "CRABTUI_PeriodicExprInterval"
MIN_PERIODIC_INTERVAL = 0.2
VALUES_READ_FOR = 0.005  # seconds of reading jobs' values between two turns of the loop
# When a job that exited was requeued (its exit, in seconds): its next start is paced from there.
REQUEUED_AT = "CRABTUI_RequeuedAt"
DEFAULT_VACATE_TIME = 10.0  # seconds from the kill signal to SIGKILL (JobMaxVacateTime)
# A job that exits and stays in the queue (OnExitRemove false) starts again only on the schedd's
# next pass for it, as in HTCondor 23.9.6: a scheduler or local universe job (DAGMan) at the next
# queue scan, at most one each SCHEDD_MIN_INTERVAL; a job that needs a slot gave its claim back and
# waits for the next negotiation cycle, NEGOTIATOR_INTERVAL.  In seconds: SCHEDD_MIN_INTERVAL is
# HTCondor's; NEGOTIATOR_INTERVAL is 60 there, 5 here, as PERIODIC_EXPR_INTERVAL (a laptop user's
# max_retries should not wait a minute a retry, and the embedded negotiator has no pool to go round).
DEFAULT_SCHEDD_MIN_INTERVAL = 5.0
DEFAULT_NEGOTIATOR_INTERVAL = 5.0
SHUTDOWN_WAIT_S = 10.0  # how long a stopping schedd waits for its starters to end their jobs
UID_DOMAIN = socket.gethostname()  # a personal HTCondor's default UID_DOMAIN: its own host
MAX_JOB_ID = 2**31 - 1  # cluster and proc ids are ClassAd integers HTCondor keeps in an int
# condor_qedit refuses the first six on the pool too (qmgmt's immutable attributes); JobStatus and
# QDate only here: the queue, its events and its history follow them
_PROTECTED = {"clusterid", "procid", "owner", "user", "mytype", "targettype", "jobstatus", "qdate"}
_JOB_ID = re.compile(r"([0-9]+)(?:\.([0-9]+))?\Z")
_RETRY_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EIO)  # a log write that may work later


class LocalSchedd:
    """One machine's schedd. Not thread-safe: the daemon calls it from its event loop only."""

    def __init__(self, state: StateDir, pool: Pool, *, clock: Callable[[], float] = time.time,
                 periodic_interval: float = DEFAULT_PERIODIC_INTERVAL,
                 vacate_time: float = DEFAULT_VACATE_TIME, job_umask: int = 0o022,
                 schedd_min_interval: float = DEFAULT_SCHEDD_MIN_INTERVAL,
                 negotiator_interval: float = DEFAULT_NEGOTIATOR_INTERVAL):
        self.state = state
        self.job_tools: str | None = None  # the directory of condor_qedit, for the jobs' PATH
        self.pool = pool
        self.clock = clock
        self.periodic_interval = periodic_interval
        self.vacate_time = vacate_time
        self.schedd_min_interval = schedd_min_interval
        self.negotiator_interval = negotiator_interval
        self.job_umask = job_umask  # the submitter's: the daemon's own is 077
        self.queue = JobQueue(state.db)
        self.jobs: dict[JobId, classad2.ClassAd] = {job_id(ad): ad for ad in self.queue.load()}
        self.job_factories: dict[int, factory.Factory] = {  # clusters that materialize their jobs late
            cluster: factory.Factory(cluster, next_proc, total, paused=paused, removed=removed, ad=ad)
            for cluster, next_proc, total, paused, removed, ad in self.queue.factories()}
        for key in self.jobs if self.job_factories else ():
            if key[0] in self.job_factories:
                self.job_factories[key[0]].present.add(key)
        self.texts: dict[JobId, str] = {}  # each job's ad as text, kept from its last save, for queries
        self.values = columns.JobValues()  # each job's values as of its last save, for tables
        self._unread: dict[JobId, None] = dict.fromkeys(self.jobs)  # jobs whose values are to read
        self._reading: asyncio.Handle | None = None
        self.running: dict[JobId, shadow.JobProcess] = {}  # every run whose starter may live
        self.host = f"<127.0.0.1:0?addrs=127.0.0.1-0&alias={socket.gethostname()}>"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.spawner: shadow.Spawner | None = None
        self._idle_order: list[JobId] | None = None  # idle jobs that need a slot, best first; None: rebuild
        self._slotless: list[JobId] = []  # idle scheduler and local universe jobs
        self._deferred = False  # an idle job waits for its DeferralTime: the periodic tick schedules again
        self._timer: asyncio.TimerHandle | None = None
        self._fast_timer: asyncio.TimerHandle | None = None
        self._requeue_timer: asyncio.TimerHandle | None = None  # the next requeued job's time to start
        self._requeue_due: float | None = None
        self._cluster_started: dict[int, float] = {}  # each cluster's last job start, for NextJobStartDelay
        self._intervals: dict[JobId, float | None] = {}  # each job's own periodic interval, once looked at
        self._schedule_pending = False
        self._stopping = False
        # Running jobs held or removed whose processes have not exited yet: the held event's fields
        # ({} for a removal), logged after JOB_EVICTED once the job is gone, as HTCondor logs them.
        self._vacating: dict[JobId, dict | None] = {}  # None: its stop logs nothing more
        # The open unit of work: how deeply nested, its name (for crash points), the events it
        # logs and what it does once committed; and the outbox rows already in their logs.
        self._depth = 0
        self._unit_name = ""
        self._events: list[tuple[str, JobId, str]] = []
        self._after: list[Callable[[], None]] = []
        # The unit's changes to the queue, written when it commits: the ads it changed (by job,
        # so that an ad changed twice, or changed and then retired, is written once) and the
        # jobs it moved to the history, as (cluster, proc, when, ad text).
        self._changed: dict[JobId, classad2.ClassAd] = {}
        self._retired: list[tuple[int, int, int, str]] = []
        self._written: list[int] = []
        self._backlog: dict[str, list[OutboxRow]] = {}  # events a full disk kept from their log
        self._machine_ads: dict[str, str] = {}
        self._logs: dict[JobId, tuple[str | None, str | None, frozenset[int] | None]] = {}  # see _event_logs

    # ------------------------------------------------------------------ units of work

    @contextmanager
    def _unit(self, name: str) -> Iterator[None]:
        """One transaction for everything done inside (units nest): commit, then write the events
        it logged, then act on processes.  A failed commit leaves memory ahead of the queue: the
        daemon dies, and the next one starts from what was committed, as after any crash."""
        if self._depth == 0:
            self._unit_name = name
            self.queue.begin()
            if self._written:
                self.queue.forget_events(self._written)
                self._written = []
        self._depth += 1
        try:
            yield
            if self._depth == 1 and self.job_factories:  # last: the jobs the unit's changes make room for
                self._materialize()
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self.queue.rollback()
                self._events, self._after = [], []
                self._changed, self._retired = {}, []
            raise
        self._depth -= 1
        if self._depth:
            return
        events, after = self._events, self._after
        self._events, self._after = [], []
        name = self._unit_name
        changed, retired = self._changed, self._retired
        self._changed, self._retired = {}, []
        try:
            saved = [(key, ad) for key, ad in changed.items() if key in self.jobs]
            self.texts.update(self.queue.put(ad for _, ad in saved))
            self.queue.retire(retired)
            rows = self.queue.add_events(events)
            crash_point(f"{name}:before-commit")
            self.queue.commit()
        except Exception:
            log.exception("cannot commit the job queue (%s); the schedd stops and recovers on its next start", name)
            os._exit(75)
        crash_point(f"{name}:after-commit")
        self._unread_values(key for key, _ in saved)
        self._write_events(rows)
        crash_point(f"{name}:after-log")
        for action in after:
            try:
                action()
            except Exception:  # committed already: the next schedd settles what this left undone
                log.exception("after %s: acting on processes failed", name)

    def _unread_values(self, keys: Iterable[JobId]) -> None:
        """Forget the values of jobs just saved, and read them again in the loop's spare time
        (:meth:`_read_values`): neither a submission's answer nor a job's start waits for them,
        and a table's first question finds them read."""
        for key in keys:
            self.values.drop(key)
            self._unread[key] = None
        if self._unread and self._reading is None and self.loop is not None and not self._stopping:
            self._reading = self.loop.call_soon(self._read_values)

    def _read_values(self) -> None:
        """Read jobs' values for a few milliseconds, then let requests and the loop's other work
        in before the next few (a request waits for one such turn at each of its steps, and a
        query reads the jobs it finds unread itself; by time rather than by count, so that the
        reading keeps up with a stream of submissions however loaded the machine), with the
        collector paused: the values are long-lived."""
        self._reading = None
        until = time.perf_counter() + VALUES_READ_FOR
        with gc_paused():
            while self._unread and time.perf_counter() < until:
                key, _ = self._unread.popitem()
                ad = self.jobs.get(key)
                if ad is not None and key not in self.values:  # a query may have read it meanwhile
                    self.values.read(key, ad)
        self._unread_values(())

    def _after_commit(self, action: Callable[[], None]) -> None:
        self._after.append(action)

    def _write_events(self, rows: list[OutboxRow]) -> None:
        """Append committed events to their logs, each log's in one write.  A log a full disk
        refuses keeps its events back, in order, until a later try succeeds; other failures (a
        log whose directory is gone) lose the event, as a log that became unwritable must not stop
        the schedd."""
        by_path: dict[str, list[OutboxRow]] = {}
        for row in rows:
            by_path.setdefault(row[1], []).append(row)
        for path, path_rows in by_path.items():
            if path in self._backlog:
                self._backlog[path].extend(path_rows)
                continue
            try:
                append_events(path, "".join(row[3] for row in path_rows))
            except OSError as e:
                if e.errno in _RETRY_ERRNOS:
                    self._backlog[path] = list(path_rows)
                    continue
                log.warning("cannot write to user log %s: %s", path, e)
            self._written.extend(row[0] for row in path_rows)

    def _materialize(self) -> None:
        """Inside a unit, last: each factory makes the jobs its limits now allow (max_materialize:
        others left the queue; max_idle: others started or were held), and one whose jobs are all
        made and gone is over, with its CLUSTER_REMOVE."""
        now = int(self.clock())
        for cluster, made in list(self.job_factories.items()):
            made.prune(self.jobs)
            room = made.room(self.jobs)
            if room:
                ads = self.queue.take_unmaterialized(cluster, room)
                for ad in ads:
                    key = job_id(ad)
                    ad["EnteredCurrentStatus"] = now
                    self.jobs[key] = ad
                    made.present.add(key)
                    self._log(ad, SubmitEvent, submit_host=self.host, log_notes=ad.get("SubmitEventNotes", ""))
                made.next_proc += len(ads)
                if len(ads) < room:  # the store has no more: the cluster is complete as made
                    made.total = made.next_proc
                # every job reads the count from its cluster ad on the pool: each queued one has it
                present = [self.jobs[key] for key in made.present]
                for ad in present:
                    ad[factory.NEXT_PROC] = made.next_proc
                self._save(present)
                self._put_factory(made)
                self._idle_order = None
                self._after_commit(self._schedule_soon)
            if made.done and not made.present:  # condor_rm of the cluster: Incomplete, made all or not
                self._log(made.ad, ClusterRemoveEvent, materialized=made.next_proc, items=0,
                          complete=made.next_proc >= made.total and not made.removed)
                self.queue.drop_factory(cluster)
                del self.job_factories[cluster]

    def _put_factory(self, made: factory.Factory) -> None:
        self.queue.put_factory(made.cluster, made.next_proc, made.total, made.paused, made.removed, made.ad)

    def _retry_backlog(self) -> None:
        backlog, self._backlog = self._backlog, {}
        for rows in backlog.values():
            self._write_events(rows)

    def _log(self, ad: classad2.ClassAd, event_type: type[Event], when: float | None = None, **fields) -> None:
        """Inside a unit: the event for the job's ``UserLog`` (every event) and ``DAGManNodesLog``
        (only the event numbers in ``DAGManNodesMask``, when DAGMan set one: no IMAGE_SIZE, for one),
        written once the unit is committed."""
        key = job_id(ad)
        logs = self._logs.get(key)
        if logs is None:
            logs = self._logs[key] = _event_logs(ad)
        user_log, nodes_log, mask = logs
        paths = [user_log] if user_log else []
        if nodes_log and nodes_log != user_log and (mask is None or event_type.type in mask):
            paths.append(nodes_log)
        if not paths:
            return
        event = event_type(cluster=key[0], proc=key[1], time=_moment(int(self.clock() if when is None else when)),
                           **fields)
        text = format_event(event)
        self._events.extend((path, key, text) for path in paths)

    # ------------------------------------------------------------------ lifecycle

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start work on ``loop``: recover from a previous crash, start the spawner, schedule, poll."""
        self.loop = loop
        self.recover()
        self.spawner = shadow.Spawner(self.state.log, self.state.spool)
        self.job_tools = job_tools.install(self.state.path)
        loop.add_reader(self.spawner.fd, self._notified)
        loop.add_reader(self.spawner.pidfd, _spawner_died)
        self.schedule()
        self._timer = loop.call_later(self.periodic_interval, self._periodic_tick)
        self._fast_timer = loop.call_later(MIN_PERIODIC_INTERVAL, self._fast_tick)
        self._unread_values(())

    def shutdown(self) -> int:
        """Stop: running jobs are killed by their starters and evicted back to idle, as a schedd
        that goes down evicts them; jobs that ended on their own meanwhile are collected as such."""
        self._stopping = True
        for timer in (self._timer, self._fast_timer, self._requeue_timer, self._reading):
            if timer:
                timer.cancel()
        for proc in self.running.values():
            if proc.pidfd >= 0:
                self.loop.remove_reader(proc.pidfd)
            try:
                shadow.ask(proc, "kill")
            except OSError as e:  # the spool is gone with the state directory: kill the job ourselves
                log.warning("cannot ask the starter of job %s to stop it (%s); killing its processes",
                            _name(proc.key), e)
                shadow.kill_job(proc)
        evicted_before = {k for k, ad in self.jobs.items() if ad["JobStatus"] == JobStatus.RUNNING}
        if self.spawner is not None:
            self.loop.remove_reader(self.spawner.fd)
            self.loop.remove_reader(self.spawner.pidfd)
            deadline = time.monotonic() + SHUTDOWN_WAIT_S
            while self.running and (left := deadline - time.monotonic()) > 0:
                # Which run each pidfd watched when selected: the news may end a run and its pidfd's
                # number go to the pidfd of a starter that just said it started.
                watched = [(key, proc, proc.pidfd) for key, proc in self.running.items() if proc.pidfd >= 0]
                ready, _, _ = select.select([self.spawner.fd] + [fd for _, _, fd in watched], [], [], left)
                if self.spawner.fd in ready:
                    self._notified()
                for key, proc, fd in watched:
                    if fd in ready and self.running.get(key) is proc and proc.pidfd == fd:
                        self._reconnected_exit(key)
            self.spawner.close()
        if self.running:
            log.warning("%d job(s) still running at shutdown; the next schedd reconnects to them", len(self.running))
        evicted = [k for k in evicted_before if k in self.jobs and self.jobs[k]["JobStatus"] == JobStatus.IDLE]
        self.queue.close()
        return len(evicted)

    def recover(self) -> None:
        """Settle what a schedd that died left: first the events it committed without writing
        them, then every run it had started.  A run whose starter recorded an exit is collected
        (terminated exactly once, with its real exit code and times), a live starter is watched
        again, and only a run whose starter is gone too is evicted (or, if it never started,
        quietly put back to idle)."""
        self._write_outbox()
        with self._unit("recover"):
            for key, ad in list(self.jobs.items()):
                if "ShadowBday" in ad:  # a run was on: committed with its start, gone with its end
                    record = shadow.settled_record(self._record_file(key, ad.get("JobRunCount", 0)))
                    if record is not None:
                        self._resume(ad, record)
                        continue
                self._no_starter(ad)
            removed = [ad for key, ad in self.jobs.items()  # not those left in the queue once gone
                       if ad["JobStatus"] == JobStatus.REMOVED and key not in self.running
                       and "JobFinishedHookDone" not in ad]
            for ad in removed:
                self._leave_queue(ad)
        self._sweep_spool()

    def _write_outbox(self) -> None:
        """Write the committed events a crash kept from their logs: of each job's events waiting
        for a log, those after the last one the log already ends that job's events with."""
        rows = self.queue.outbox()
        if not rows:
            return
        by_path: dict[str, list[OutboxRow]] = {}
        for row in rows:
            by_path.setdefault(row[1], []).append(row)
        missing: list[OutboxRow] = []
        for path, path_rows in by_path.items():
            logged = events_by_job(path)
            by_job: dict[JobId, list[OutboxRow]] = {}
            for row in path_rows:
                by_job.setdefault(row[2], []).append(row)
            for key, job_rows in by_job.items():
                have = [event for event in logged.get(key, []) if not event.startswith(_DAGMAN_EVENTS)]
                done = _logged_prefix(have, [row[3] for row in job_rows])
                self._written.extend(row[0] for row in job_rows[:done])
                missing.extend(job_rows[done:])
        missing.sort()
        self._write_events(missing)

    def _no_starter(self, ad: classad2.ClassAd) -> None:
        """A job whose run has no record: its starter was never forked (the schedd died between
        the commit and the spawn), or its record went with its machine (a reboot)."""
        status = ad["JobStatus"]
        if "ShadowBday" not in ad and status not in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT):
            return
        key = job_id(ad)
        ran = "JobPid" in ad
        if ran:
            shadow.kill_orphans(self._ad_file(key))
        self._run_over(ad)
        if status in (JobStatus.HELD, JobStatus.REMOVED):
            held = _held_fields(ad) if status == JobStatus.HELD else {}
            self._vacating.pop(key, None)
            if ran and not _held_by_policy(ad):
                self._log(ad, JobEvictedEvent)
            if held and not _held_by_policy(ad):
                self._log(ad, JobHeldEvent, **held)
            if status == JobStatus.REMOVED:
                self._leave_queue(ad)
            else:
                self._save([ad])
        elif ran:
            self._evict([ad], "The job's starter went away while the job ran; the job will run again.")
        else:
            _enter(ad, JobStatus.IDLE, int(self.clock()))
            self._save([ad])
            self._idle_order = None

    def _resume(self, ad: classad2.ClassAd, record: starter.Record) -> None:
        """A job whose current run has a record: what it says happened is applied, as if the
        starter's news had reached this schedd."""
        key = job_id(ad)
        proc = shadow.JobProcess(key, self._record_file(key, ad["JobRunCount"]))
        self.running[key] = proc
        host = ad.get("RemoteHost")
        if ad["JobUniverse"] not in SLOTLESS_UNIVERSES and isinstance(host, str):
            try:
                self.pool.claim(self.pool.slot(host), _name(key))
            except (KeyError, ValueError):
                pass  # the pool changed; the slot is not ours to claim
        if _held_by_policy(ad):
            self._vacating[key] = None
        elif ad["JobStatus"] in (JobStatus.HELD, JobStatus.REMOVED):
            self._vacating[key] = _held_fields(ad) if ad["JobStatus"] == JobStatus.HELD else {}
        proc.starter_pid, proc.job_pid, proc.started = record.starter_pid, record.job_pid, record.start_time
        if record.alive and record.starter_pid is not None and shadow.reconnect(proc):
            self._started(key, record.starter_pid, record.job_pid, record.start_time)
            self.loop.add_reader(proc.pidfd, self._reconnected_exit, key)
            status = ad["JobStatus"]
            if status in (JobStatus.HELD, JobStatus.REMOVED):  # its stop may not have reached the starter
                self._stop(ad, "hold" if status == JobStatus.HELD else "remove")
        else:  # ended, also between the first look and the reconnection
            self._settle(key, starter.read_record(proc.record))

    def _lost(self, key: JobId) -> None:
        """A run whose starter died without recording an exit (killed, or the machine rebooted):
        what is left of the job is killed, and the job runs again."""
        proc = self._forget_run(key)
        ad = self.jobs.get(key)
        if ad is not None:
            self._no_starter(ad)
        self._after_commit(lambda: self._remove_run_files(key, proc))

    def _sweep_spool(self) -> None:
        """Remove ad files and records of runs that are over (a crash came before their removal)."""
        keep = set()
        for key, proc in self.running.items():
            keep.update({proc.record, starter.control_file(proc.record), self._ad_file(key),
                         shadow.machine_ad_file(self._ad_file(key))})
        try:
            names = os.listdir(self.state.spool)
        except OSError:
            return
        for name in names:
            path = os.path.join(self.state.spool, name)
            if path not in keep and name.endswith((".starter", ".starter.stop", ".job.ad", ".machine.ad", ".request")):
                shadow.remove_files(path)

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
        """Queue the ads a submitter built for ``cluster`` (see :meth:`new_cluster`).  Sending
        the same ads again (a client whose schedd died before it answered) queues nothing twice:
        the answer is the first one's."""
        if not ads:
            raise ScheddError("the submit description queues no jobs")
        for ad in ads:
            if ad["ClusterId"] != cluster:
                raise ScheddError(f"job ad for cluster {ad['ClusterId']} submitted as cluster {cluster}")
        first = job_id(ads[0])
        if first in self.jobs or cluster in self.job_factories or self.queue.has_left(*first):
            return SubmitResult(cluster, ads[0]["ProcId"], len(ads))
        now = self.clock()
        bad_cron = {}
        for ad in ads:  # the schedd names the job's user as a pool's does, not condor_submit (-dry-run has none)
            ad["User"] = f"{ad['Owner']}@{UID_DOMAIN}"
            if (reason := _schedule_cron(ad, now)) is not None:
                bad_cron[job_id(ad)] = reason
        with self._unit("submit"):
            if factory.wants_factory(ads[0]):  # its jobs are made as _materialize finds room, SUBMIT each
                made = factory.Factory(cluster, ads[0]["ProcId"], ads[0]["ProcId"] + len(ads), paused=False,
                                       removed=False, ad=factory.cluster_ad(ads[0]))
                self._log(made.ad, ClusterSubmitEvent, submit_host=self.host)
                self.queue.put_unmaterialized(ads)
                self._put_factory(made)
                self.job_factories[cluster] = made
            queued = () if cluster in self.job_factories else ads
            self._save(queued)
            for ad in queued:
                self.jobs[job_id(ad)] = ad
                # A job submitted on hold gets no held event: HTCondor logs only the submit.
                self._log(ad, SubmitEvent, submit_host=self.host, log_notes=ad.get("SubmitEventNotes", ""))
        for key, reason in bad_cron.items():  # held as the pool's schedd holds them once queued
            if key in self.jobs:
                self._hold([self.jobs[key]], f"Invalid cron schedule parameters: {reason}", crontab.HOLD_CODE, 0)
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
        """Matching jobs as rows of ``projection`` values (:func:`columns.plain_row`): what a
        table needs, without printing and parsing whole ads."""
        return [list(columns.plain_row(ad, projection)) for _, ad in self._matching(constraint)]

    def query_columns(self, constraint: str, projection: Sequence[str]) -> list[list]:
        """:meth:`query_values` as :mod:`columns` sends it, each job's row taken from the values
        read when it was last saved: no answer reads an ad that did not change."""
        with gc_paused(promote=False):  # 100,000 rows: the collector's passes cost as much as the rows
            rows = self.values.rows(projection, self._matching(constraint))
            return columns.encode(rows, len(projection))

    def factories(self, constraint: str = "true") -> list[classad2.ClassAd]:
        """The factories' cluster ads, as a pool's schedd keeps them: its limits and counts."""
        expr = _constraint(constraint)
        out = []
        for cluster, made in sorted(self.job_factories.items()):
            ad = made.scope()
            made.prune(self.jobs)
            ad.update(factory.counts(made, self.jobs))
            ad["ServerTime"] = int(self.clock())
            if expr.eval(scope=ad) is True:
                out.append(ad)
        return out

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
        with self._unit("edit"):
            factories = self._factories_named(job_spec)
            for made in factories:  # the cluster ad: the jobs made later have it
                made.ad.update(exprs)
                self._put_factory(made)
                later = self.queue.unmaterialized(made.cluster)
                for ad in later:
                    ad.update(exprs)
                self.queue.put_unmaterialized(later)
            for key in keys:
                self.jobs[key].update(exprs)
                self._logs.pop(key, None)
            self._save(self.jobs[k] for k in keys)
            self._idle_order = None
            self.schedule()
        return len(keys) or len(factories)  # a paused factory with no job queued: 1, as on the pool

    def act(self, action: JobAction | str, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        action = JobAction(action)
        # Named jobs that have left the queue are left out and named, as the pool's schedd answers
        # a list (condor_rm 5.0 5.1 5.2 acts on 5.0 and 5.2 and says "Job 5.1 not found").
        gone: list[str] = []
        keys = self._resolve(job_spec, gone)
        explicit = not _is_constraint(job_spec)
        allowed, refused, kinds = [], list(gone), Counter()
        for key in keys:
            problem = self._refusal(action, self.jobs[key])
            if problem is None:
                allowed.append(key)
            elif not explicit and problem[0] == "bad_status" and action in (JobAction.Release, JobAction.RemoveX):
                continue  # as a pool's schedd: a constraint releases the held jobs it matches, counting no others
            else:
                kinds[problem[0]] += 1
                refused.append(f"{key[0]}.{key[1]}: {problem[1]}")
        if refused and explicit and not allowed:
            raise ScheddError("; ".join(refused) + "; nothing was changed")
        ads = [self.jobs[k] for k in allowed]
        # A schedd signs every reason a user gives with who gave it (23.9.6: "disk full (by user crab)").
        tool = {JobAction.Hold: "condor_hold", JobAction.Release: "condor_release"}.get(action, "condor_rm")
        reason = f"{reason or 'via ' + tool} (by user {_user()})"
        with self._unit(action.name.lower() if action is not JobAction.RemoveX else "remove"):
            factories = self._act_on_factories(action, job_spec, reason)
            if action is JobAction.Hold:
                self._hold(ads, reason, HOLD_CODE_USER, 0)
            elif action is JobAction.Release:
                self._release(ads, reason)
            else:
                self._remove(ads, reason, force=action is JobAction.RemoveX)
            self.schedule()
        # a paused factory with no job queued: released or removed all the same, as on the pool
        return ActResult(len(allowed) or factories, tuple(refused), not_found=len(gone), bad_status=kinds["bad_status"],
                         already_done=kinds["already_done"], job_ads=len(self.jobs))

    def _factories_named(self, job_spec: JobSpec) -> list[factory.Factory]:
        """The factories of the clusters a spec names whole (``5``, not ``5.0``), or whose
        cluster ad a constraint matches (a pool's: no ``JobStatus``, no ``ProcId``)."""
        if not self.job_factories:
            return []
        if _is_constraint(job_spec):
            expr = _constraint(str(job_spec))
            return [made for made in self.job_factories.values() if expr.eval(scope=made.scope()) is True]
        specs = [job_spec] if isinstance(job_spec, (str, int)) else list(job_spec)
        clusters = {int(text) for spec in specs if (text := str(spec).strip()).isdigit()}
        return [self.job_factories[cluster] for cluster in sorted(clusters) if cluster in self.job_factories]

    def _act_on_factories(self, action: JobAction, job_spec: JobSpec, reason: str) -> int:
        """Inside a unit: the factories of the clusters named whole (``condor_rm 5``; a pool's
        condor_rm sends ``ClusterId == 5``, which the cluster's ad matches too): removal makes no
        more jobs, hold pauses the factory (FACTORY_PAUSED), release resumes it (FACTORY_RESUMED)."""
        acted = 0
        for made in self._factories_named(job_spec):
            if action is JobAction.Hold and not made.paused:
                made.paused = True
                self._log(made.ad, FactoryPausedEvent, reason=reason)
            elif action is JobAction.Release and made.paused:
                made.paused = False
                self._log(made.ad, FactoryResumedEvent, reason=reason)
            elif action in (JobAction.Remove, JobAction.RemoveX):
                made.removed = True
            else:
                continue
            made.ad[factory.PAUSED] = int(made.paused)
            self._put_factory(made)
            acted += 1
        return acted

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
        if self.spawner is None or self._stopping:
            return
        if self._idle_order is None:
            idle = [k for k, ad in self.jobs.items() if ad["JobStatus"] == JobStatus.IDLE]
            idle.sort(key=lambda k: (-_int(self.jobs[k].get("JobPrio")), self.jobs[k]["QDate"], k))
            self._slotless = [k for k in idle if self.jobs[k]["JobUniverse"] in SLOTLESS_UNIVERSES]
            self._idle_order = [k for k in idle if self.jobs[k]["JobUniverse"] not in SLOTLESS_UNIVERSES]
        now = self.clock()
        self._deferred = False
        starts: list[tuple[JobId, object]] = []
        waiting = []
        for key in self._slotless:
            if self._is_idle(key):
                if self._defers(self.jobs[key], now) or self._requeue_waits(self.jobs[key], now):
                    waiting.append(key)
                else:
                    starts.append((key, None))
        self._slotless = waiting
        matches: dict[JobId, dict] = {}  # the $$() of jobs that have some, expanded for their slots
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
                # released before its last run exited, not yet at its time, or requeued too recently
                if (key in self.running or self._defers(ad, now) or self._requeue_waits(ad, now)
                        or self._start_delayed(ad, now)):
                    remaining.append(key)
                    continue
                slot = self.pool.match(ad)
                if slot is None:
                    remaining.append(key)
                    continue
                try:
                    if self._has_dollar_dollar(key, ad):
                        matches[key] = dollar_dollar.expand(ad, slot.ad)
                except dollar_dollar.CannotExpand as e:
                    self._hold([ad], str(e), 0, 0)  # as the schedd holds it, with no hold code
                    continue
                missing = input_files.unreadable(ad)
                if missing is not None:  # the shadow's transfer fails before the job starts
                    self._hold([ad], input_files.hold_reason(*missing, UID_DOMAIN, slot.name),
                               input_files.TRANSFER_INPUT_FAILURE, missing[1].errno or 0)
                    continue
                self.pool.claim(slot, _name(key))
                starts.append((key, slot))
                self._cluster_started[key[0]] = now
                free -= 1
            self._idle_order = remaining
        if starts:
            self._start(starts, matches)

    def _defers(self, ad: classad2.ClassAd, now: float) -> bool:
        """Whether the job must wait: its DeferralTime has not come (the periodic tick looks
        again), or it was submitted after that time and its DeferralWindow too has passed (then
        it waits for good, as a 23.9.6 job that missed its time matches no slot)."""
        when = _eval(ad, "DeferralTime")
        if not isinstance(when, (int, float)) or isinstance(when, bool):
            return False
        if now < when:
            self._deferred = True
            return True
        window = _eval(ad, "DeferralWindow")
        window = window if isinstance(window, (int, float)) and not isinstance(window, bool) else 0
        return _int(ad.get("QDate")) > when + window

    def _requeue_waits(self, ad: classad2.ClassAd, now: float) -> bool:
        """Whether a job that exited and was requeued must wait for the schedd's next pass:
        SCHEDD_MIN_INTERVAL after its exit for a scheduler or local universe job,
        NEGOTIATOR_INTERVAL for one that needs a slot.  The exit time is committed with the
        requeue (:data:`REQUEUED_AT`), so a restarted schedd keeps the pace; one in the future
        (the clock went back) does not hold the job.  A timer wakes :meth:`schedule`."""
        requeued = ad.get(REQUEUED_AT)
        if requeued is None:
            return False
        slotless = ad["JobUniverse"] in SLOTLESS_UNIVERSES
        due = requeued + (self.schedd_min_interval if slotless else self.negotiator_interval)
        if now >= due or requeued > now:
            return False
        self._wake_at(due, now)
        return True

    def _start_delayed(self, ad: classad2.ClassAd, now: float) -> bool:
        """Whether the job must wait for its cluster's NextJobStartDelay (next_job_start_delay) since
        the cluster's last start, as 23.9.6's schedd spaces them (8 s apart on the test pool for a
        delay of 8), at most MAX_NEXT_JOB_START_DELAY (600 s); a timer wakes :meth:`schedule`."""
        delay = _eval(ad, "NextJobStartDelay")
        last = self._cluster_started.get(ad["ClusterId"])
        if last is None or not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay <= 0:
            return False
        due = last + min(delay, MAX_NEXT_JOB_START_DELAY)
        if now >= due:
            return False
        self._wake_at(due, now)
        return True

    def _wake_at(self, due: float, now: float) -> None:
        """One timer wakes :meth:`schedule` for the earliest job held back until ``due``."""
        if self.loop is not None and (self._requeue_due is None or due < self._requeue_due):
            if self._requeue_timer is not None:
                self._requeue_timer.cancel()
            self._requeue_due = due
            self._requeue_timer = self.loop.call_later(due - now, self._requeue_time)

    def _requeue_time(self) -> None:
        self._requeue_due = self._requeue_timer = None
        self.schedule()

    def _has_dollar_dollar(self, key: JobId, ad: classad2.ClassAd) -> bool:
        """Whether the job's ad holds a ``$$()``, read in the text kept for queries (a job start
        is a hot path; the ad's own text only when this unit changed it, and the kept text is old)."""
        text = self.texts.get(key) if key not in self._changed else None
        return "$$(" in (text if text is not None else str(ad))

    def _ad_file(self, key: JobId) -> str:
        return os.path.join(self.state.spool, f"{_name(key)}.job.ad")

    def _record_file(self, key: JobId, run: int) -> str:
        """The starter's record of the job's ``run``-th run (its JobRunCount)."""
        return os.path.join(self.state.spool, f"{_name(key)}.{run}.starter")

    def _is_idle(self, key: JobId) -> bool:
        ad = self.jobs.get(key)
        return ad is not None and ad["JobStatus"] == JobStatus.IDLE and key not in self.running

    def _start(self, starts: list[tuple[JobId, object]], matches: dict[JobId, dict]) -> None:
        """Commit the jobs as running (with the MATCH_ attributes of their $$(), in ``matches``),
        then ask the spawner for their starters."""
        now = int(self.clock())
        with self._unit("start"):
            for key, slot in starts:
                ad = self.jobs[key]
                _enter(ad, JobStatus.RUNNING, now)
                ad["JobRunCount"] = ad.get("JobRunCount", 0) + 1
                ad["ShadowBday"] = now
                ad["JobCurrentStartDate"] = now
                if slot is not None:
                    ad["RemoteHost"] = slot.name
                    site = slot.ad.get("GLIDEIN_CMSSite")
                    if site is not None:
                        ad["MATCH_GLIDEIN_CMSSite"] = site
                    ad.update(_machine_attrs(ad, slot.ad))
                ad.update(matches.get(key, {}))
                self.running[key] = shadow.JobProcess(key, self._record_file(key, ad["JobRunCount"]))
            self._save(self.jobs[k] for k, _ in starts)
            self._after_commit(lambda: self._spawn(starts, matches))

    def _spawn(self, starts: list[tuple[JobId, object]], matches: dict[JobId, dict]) -> None:
        requests = []
        for key, slot in starts:
            proc = self.running.get(key)
            ad = self.jobs.get(key)
            if proc is None or ad is None:
                continue
            if key in matches:  # the job runs with its $$() expanded; its ad keeps them
                ad = dollar_dollar.expanded(ad, matches[key])
            machine_ad = None
            if slot is not None:
                machine_ad = self._machine_ads.get(slot.name)
                if machine_ad is None:
                    machine_ad = self._machine_ads[slot.name] = shadow.ad_file_text(slot.ad)
            grace = None if ad["JobUniverse"] == UNIVERSE_SCHEDULER else _vacate_time(ad, self.vacate_time)
            requests.append(shadow.request(ad, proc.record, self._ad_file(key), machine_ad,
                                           self.job_umask, grace, self.job_tools, slot.name if slot else None))
        if requests:
            try:
                self.spawner.spawn(requests)
            except BrokenPipeError:
                _spawner_died()

    # ------------------------------------------------------------------ what the starters report

    def _notified(self) -> None:
        """The starters' news (started, failed, exited), settled in one unit with the starts that
        the freed slots allow."""
        lines = self.spawner.read()
        if not lines:
            return
        name = "exit" if any(kind == "exited" for kind, _, _ in lines) else "started"
        with self._unit(name):
            for kind, name, rest in lines:
                key = _parse_key(name)
                if key not in self.running:
                    continue
                record = starter.Record()
                try:
                    starter.apply_line(record, kind, rest)
                except ValueError:
                    log.error("cannot read a starter's news %r", f"{kind} {name} {rest}")
                    continue
                if kind == "started":
                    self._started(key, record.starter_pid, record.job_pid, record.start_time)
                    self._watch_starter(key)
                elif kind == "failed":
                    self._start_failed(key, record.failed, record.hold_code)
                elif kind == "exited":
                    self._collect(key, record.exit)
            self.schedule()

    def _watch_starter(self, key: JobId) -> None:
        """Inside a unit: a starter killed while it runs a job (or between the job's end and its
        record) sends no news; a pidfd on it tells, and its record then says what happened, as it
        does to a schedd that restarts.  Without it the job would stay running, its slot taken."""
        proc = self.running.get(key)
        if proc is None or proc.pidfd >= 0:
            return
        if shadow.reconnect(proc):
            self.loop.add_reader(proc.pidfd, self._reconnected_exit, key)
        else:  # already gone, or its job over: its record has the news the socket may never bring
            self._settle(key, starter.read_record(proc.record))

    def _reconnected_exit(self, key: JobId) -> None:
        """A watched starter has ended (killed, or done after a restart): its record says how."""
        with self._unit("exit"):
            self._settle(key, starter.read_record(self.running[key].record))
            self.schedule()

    def _settle(self, key: JobId, record: starter.Record | None) -> None:
        """Inside a unit: a run whose starter has ended, as its record tells."""
        if record is not None and record.failed is not None:
            self._start_failed(key, record.failed, record.hold_code)
        elif record is not None and record.exit is not None:
            if record.starter_pid is not None:
                self._started(key, record.starter_pid, record.job_pid, record.start_time)
            self._collect(key, record.exit)
        else:
            self._lost(key)

    def _started(self, key: JobId, starter_pid: int, job_pid: int, start: float) -> None:
        """Inside a unit: the job runs (JOB_EXECUTE), with its pid committed."""
        proc = self.running[key]
        proc.starter_pid, proc.job_pid, proc.started = starter_pid, job_pid, start
        if proc.stop is not None:  # asked before the starter was known
            self._ask(proc, proc.stop)
        ad = self.jobs.get(key)
        if ad is None or ad.get("JobPid") == job_pid:  # removed with -forcex; or known before a restart
            return
        ad["JobPid"] = job_pid
        ad["NumJobStarts"] = ad.get("NumJobStarts", 0) + 1
        if "JobStartDate" not in ad:
            ad["JobStartDate"] = int(start)
        slot = ad.get("RemoteHost", "") if ad["JobUniverse"] not in SLOTLESS_UNIVERSES else ""
        props = {"CondorScratchDir": ad["Iwd"], "Cpus": _requested(ad, "RequestCpus", 1),
                 "Disk": _requested(ad, "RequestDisk", 0), "GPUs": 0,
                 "Memory": _requested(ad, "RequestMemory", 0)} if slot else {}
        self._log(ad, ExecuteEvent, when=start, execute_host=self.host, slot_name=slot, props=props)
        self._save([ad])
        duration = _float(_eval(ad, "AllowedJobDuration"))
        if duration is not None and self.loop is not None:  # the shadow's timer, not the periodic policy's
            self.loop.call_later(max(0.0, ad.get("ShadowBday", start) + duration - self.clock()),
                                 self._duration_check, key)

    def _start_failed(self, key: JobId, message: str, hold_code: tuple[int, int]) -> None:
        """Inside a unit: the starter could not start the job, which is held with its message."""
        proc = self._forget_run(key)
        self._after_commit(lambda: self._remove_run_files(key, proc))
        ad = self.jobs.get(key)
        if ad is None:
            return
        self._run_over(ad)
        status = ad["JobStatus"]
        held = self._vacating.pop(key, None)
        if status == JobStatus.RUNNING:
            self._hold([ad], message, *hold_code)
        elif status == JobStatus.REMOVED:
            self._leave_queue(ad)
        else:
            if held:
                self._log(ad, JobHeldEvent, **held)
            self._save([ad])

    def _forget_run(self, key: JobId) -> shadow.JobProcess:
        """The run is over: stop watching its starter, free its slot."""
        proc = self.running.pop(key)
        if proc.pidfd >= 0:
            self.loop.remove_reader(proc.pidfd)
            os.close(proc.pidfd)
            proc.pidfd = -1  # its number is free for the next descriptor opened
        self.pool.release(_name(key))
        return proc

    def _remove_run_files(self, key: JobId, proc: shadow.JobProcess, ads: bool = True) -> None:
        """A run's files: its record, its stop request if it had one, and the ads (which a starter
        that saw its job end has removed itself)."""
        paths = [proc.record] + ([starter.control_file(proc.record)] if proc.stop else [])
        if ads:
            paths += [self._ad_file(key), shadow.machine_ad_file(self._ad_file(key))]
        shadow.remove_files(*paths)

    def _collect(self, key: JobId, exit: starter.Exit) -> None:
        """Inside a unit: a run ended, as its starter recorded it."""
        proc = self._forget_run(key)
        self._after_commit(lambda: self._remove_run_files(key, proc, ads=False))
        ad = self.jobs.get(key)
        if ad is None:
            return
        cpu = exit.user_cpu + exit.system_cpu
        self._account(ad, exit, proc)
        if ad["JobStatus"] != JobStatus.RUNNING and ad["JobUniverse"] not in SLOTLESS_UNIVERSES:
            _exit_status(ad, exit.status)  # held or removed while it ran: the shadow records its end too
        if key in self._vacating:
            self._vacated(ad, Rusage(exit.user_cpu, exit.system_cpu), exit.wall, cpu, exit.end_time)
        if ad["JobStatus"] == JobStatus.REMOVED:
            self._leave_queue(ad)
        elif ad["JobStatus"] == JobStatus.RUNNING:
            if self._stopping and (exit.vacated or proc.killed):
                self._evict([ad], "The schedd shut down; the job will run again.")
            else:
                self._exited(ad, exit)
        else:  # held (or held and released) while it ran: keep the usage it accumulated
            self._save([ad])
            if ad["JobStatus"] == JobStatus.IDLE:
                self._idle_order = None  # it can run again now

    def _run_over(self, ad: classad2.ClassAd) -> None:
        """The job's run is over: no shadow, no process (committed with the change it comes with)."""
        ad.pop("ShadowBday", None)
        ad.pop("JobPid", None)

    def _account(self, ad: classad2.ClassAd, exit: starter.Exit, proc: shadow.JobProcess) -> None:
        ad["RemoteWallClockTime"] = float(ad.get("RemoteWallClockTime", 0.0)) + exit.wall
        ad["LastRemoteWallClockTime"] = float(exit.wall)  # the last run's: condor_q's RUN_TIME of an idle or held job
        ad["RemoteUserCpu"] = float(ad.get("RemoteUserCpu", 0.0)) + exit.user_cpu
        ad["RemoteSysCpu"] = float(ad.get("RemoteSysCpu", 0.0)) + exit.system_cpu
        # Only our own samples: a forked child's ru_maxrss counts the parent's pages before exec.
        if proc.peak_rss_kb:
            ad["ResidentSetSize"] = proc.peak_rss_kb
            ad["MemoryUsage"] = math.ceil(proc.peak_rss_kb / 1024)
        self._run_over(ad)

    def _exited(self, ad: classad2.ClassAd, exit: starter.Exit) -> None:
        """The job ended of its own accord: OnExitHold, else OnExitRemove decides, as the schedd's
        policy does; the times are the starter's, also for an exit collected after a restart."""
        now = int(exit.end_time)
        signalled = _exit_status(ad, exit.status)
        ad["NumJobCompletions"] = ad.get("NumJobCompletions", 0) + 1
        ad["LastJobStatus"] = int(JobStatus.RUNNING)
        run_usage = Rusage(exit.user_cpu, exit.system_cpu)
        total_usage = Rusage(float(ad["RemoteUserCpu"]), float(ad["RemoteSysCpu"]))
        if _eval(ad, "OnExitHold") is True:
            reason = _reason(ad, "OnExitHoldReason", f"The job attribute OnExitHold expression '{_policy_text(ad, 'OnExitHold')}' evaluated to TRUE")
            self._hold([ad], reason, HOLD_CODE_JOB_POLICY, _int(_eval(ad, "OnExitHoldSubCode")))
            return
        leave = _eval(ad, "OnExitRemove")
        if leave is True or not isinstance(leave, bool):
            ad["CompletionDate"] = now
            self._log(ad, JobTerminatedEvent, when=exit.end_time,
                      return_value=None if signalled else ad["ExitCode"],
                      signal_number=ad["ExitSignal"] if signalled else None,
                      run_remote_usage=run_usage, total_remote_usage=total_usage,
                      usage=_usage(ad, exit.wall, exit.user_cpu + exit.system_cpu),
                      exited_at=datetime.fromtimestamp(now).astimezone())
            ad["JobStatus"] = int(JobStatus.COMPLETED)
            ad["EnteredCurrentStatus"] = now
            self._leave_queue(ad)
        else:
            reason = f"The job attribute OnExitRemove expression '{_policy_text(ad, 'OnExitRemove')}' evaluated to FALSE"
            if ad["JobUniverse"] not in SLOTLESS_UNIVERSES:
                ad["RequeueReason"] = reason  # the shadow's record; a scheduler-universe job has none on the pool
            ad[REQUEUED_AT] = exit.end_time
            self._evict([ad], reason,
                        requeued=(None if signalled else ad["ExitCode"], ad["ExitSignal"] if signalled else None))

    # ------------------------------------------------------------------ transitions (inside a unit)

    def _hold(self, ads: list[classad2.ClassAd], reason: str, code: int, subcode: int) -> None:
        now = int(self.clock())
        with self._unit("hold"):
            for ad in ads:
                _enter(ad, JobStatus.HELD, now)
                ad["HoldReason"] = reason
                ad["HoldReasonCode"] = code
                ad["HoldReasonSubCode"] = subcode
                ad["NumHolds"] = ad.get("NumHolds", 0) + 1
                key = job_id(ad)
                if key not in self.running:
                    self._log(ad, JobHeldEvent, **_held_fields(ad))
                elif _held_by_policy(ad):  # the shadow's own hold: logged at once, no JOB_EVICTED (as on the pool)
                    self._vacating[key] = None
                    self._stop(ad, "hold")
                    self._log(ad, JobHeldEvent, **_held_fields(ad))
                else:  # logged once the job is gone, after its JOB_EVICTED
                    self._vacating[key] = _held_fields(ad)
                    self._stop(ad, "hold")
            self._save(ads)

    def _release(self, ads: list[classad2.ClassAd], reason: str) -> None:
        now = int(self.clock())
        with self._unit("release"):
            for ad in ads:
                _enter(ad, JobStatus.IDLE, now)
                ad["LastHoldReason"] = ad.get("HoldReason", "")
                ad["LastHoldReasonCode"] = ad.get("HoldReasonCode", 0)
                for attr in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
                    ad.pop(attr, None)
                ad["ReleaseReason"] = reason
                if job_id(ad) in self._vacating:  # released before its process exited: its hold comes first
                    self._vacated(ad)
                self._log(ad, JobReleasedEvent, reason=reason)
            self._save(ads)
        self._idle_order = None

    def _remove(self, ads: list[classad2.ClassAd], reason: str, force: bool = False, policy: bool = False) -> None:
        """``policy``: a running job's periodic_remove, which HTCondor's shadow carries out: its
        JOB_ABORTED has no JOB_EVICTED before it, unlike a condor_rm's."""
        now = int(self.clock())
        with self._unit("remove"):
            for ad in ads:
                if self.jobs.get(job_id(ad)) is not ad:  # gone with its DAGMan job, earlier in ``ads``
                    continue
                if force and "JobFinishedHookDone" in ad:  # kept by leave_in_queue, its JOB_ABORTED logged
                    ad["LeaveJobInQueue"] = False  # as 23.9.6's condor_rm -forcex sets it: the job leaves
                    self._leave_queue(ad, logged=True)
                    continue
                if ad["JobStatus"] != JobStatus.REMOVED:
                    _enter(ad, JobStatus.REMOVED, now)
                ad["EnteredCurrentStatus"] = now
                ad["RemoveReason"] = reason
                key = job_id(ad)
                if key in self.running:
                    self._stop(ad, "kill" if force or _removed_hard(ad) else "remove")
                if key not in self.running or force:
                    self._vacating.pop(key, None)
                    self._leave_queue(ad)
                else:
                    self._vacating.setdefault(key, None if policy else {})  # JOB_EVICTED comes before JOB_ABORTED
                    self._save([ad])

    def _remove_dependents(self, ad: classad2.ClassAd) -> None:
        """Inside a unit: a job leaving the queue takes with it the jobs its
        ``OtherJobRemoveRequirements`` names (DAGMan's node jobs), as the schedd's
        ``removeOtherJobs`` does once the job has finished: a removed DAGMan removes its node
        jobs itself first, and they keep its reason."""
        requirement = ad.get("OtherJobRemoveRequirements")
        if not requirement:
            return
        expr = _constraint(str(requirement))
        others = [other for other in self.jobs.values()
                  if other["JobStatus"] != JobStatus.REMOVED and expr.eval(scope=other) is True]
        if others:
            self._remove(others, f"removed because <OtherJobRemoveRequirements = {requirement}> fired when job "
                                 f"({ad['ClusterId']}.{ad['ProcId']}) was removed")

    def _evict(self, ads: list[classad2.ClassAd], reason: str,
               requeued: tuple[int | None, int | None] | None = None) -> None:
        """Back to idle; ``requeued`` is (return value, signal) when the job exited and OnExitRemove kept it."""
        now = int(self.clock())
        extra = {}
        if requeued is not None:
            extra = {"terminated_and_requeued": True, "return_value": requeued[0], "signal_number": requeued[1]}
        with self._unit("evict"):
            for ad in ads:
                _enter(ad, JobStatus.IDLE, now)
                self._run_over(ad)
                self._log(ad, JobEvictedEvent, reason=reason, **extra)
            self._save(ads)
        self._idle_order = None

    def _vacated(self, ad: classad2.ClassAd, run_usage: Rusage = Rusage(), wall: float = 0.0,
                 cpu: float = 0.0, when: float | None = None) -> None:
        """A job held or removed while it ran has stopped: JOB_EVICTED, as HTCondor's shadow logs
        it (a usage table only for a job that had a slot), then the held event its hold waited for."""
        held = self._vacating.pop(job_id(ad))
        if held is None:  # stopped by its own policy, as HTCondor's shadow stops it: logged already
            return
        usage = _usage(ad, wall, cpu) if ad["JobUniverse"] not in SLOTLESS_UNIVERSES else None
        self._log(ad, JobEvictedEvent, when=when, run_remote_usage=run_usage, usage=usage)
        if held:
            self._log(ad, JobHeldEvent, when=when, **held)

    def _leave_queue(self, ad: classad2.ClassAd, logged: bool = False) -> None:
        """Inside a unit: a completed or removed job moves to the history, unless its
        ``LeaveJobInQueue`` (leave_in_queue) is true: it stays, status C or X, as 23.9.6 keeps it
        (``JobStatus == 4``: a completed job stays until condor_rm). ``logged``: its end is in the
        user log already (a job kept until condor_rm -forcex)."""
        key = job_id(ad)
        now = int(self.clock())
        if ad["JobStatus"] == JobStatus.REMOVED and not logged:
            self._log(ad, JobAbortedEvent, reason=ad.get("RemoveReason", ""))
        ad["JobFinishedHookDone"] = now
        if _eval(ad, "LeaveJobInQueue") is True:
            self._save([ad])
            return
        self._retired.append((*key, now, str(ad)))
        del self.jobs[key]
        self.texts.pop(key, None)
        self.values.drop(key)
        self._logs.pop(key, None)
        self._remove_dependents(ad)

    def _stop(self, ad: classad2.ClassAd, request: str) -> None:
        """Once the unit is committed, ask the job's starter to stop it: its kill signal, then
        SIGKILL after the vacate time (the starter keeps that time, also across a schedd restart);
        a scheduler-universe job (DAGMan, which still runs its FINAL node) is left to exit."""
        proc = self.running.get(job_id(ad))
        if proc is not None:
            self._ask(proc, request)

    def _ask(self, proc: shadow.JobProcess, request: str) -> None:
        """Once the unit is committed, make the stop ``request`` of the run of ``proc`` if that run
        is still on: one collected later in the same unit is over, its pidfd closed (the number
        may be another starter's by then) and its starter free for another job, or gone."""
        def ask() -> None:
            if self.running.get(proc.key) is proc:
                shadow.ask(proc, request)
        self._after_commit(ask)

    # ------------------------------------------------------------------ periodic policy

    def _periodic_tick(self) -> None:
        try:
            self._retry_backlog()
            self.periodic()
            if self._deferred:  # a job's DeferralTime may have come
                self._idle_order = None
                self.schedule()
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

    def _duration_check(self, key: JobId) -> None:
        ad = self.jobs.get(key)
        if ad is not None and ad["JobStatus"] == JobStatus.RUNNING:
            self.periodic({key: ad})

    def periodic(self, only: dict[JobId, classad2.ClassAd] | None = None) -> None:
        """Measure running jobs' memory, then apply the periodic policy as HTCondor's
        ``UserPolicy::AnalyzePolicy`` does: PeriodicHold (a job neither held nor completed), then
        PeriodicRelease (a held job, unless a user held it), then PeriodicRemove; the first that
        is true acts, after the AllowedJobDuration of a running job, which comes before them all.
        A removal's reason is the job's PeriodicRemoveReason where it has one.
        ``only``: these jobs, not every job.

        Scheduler-universe jobs (DAGMan) are not measured: HTCondor runs them without a starter,
        so it never updates their image size or logs an IMAGE_SIZE event for them."""
        jobs = self.jobs if only is None else only
        with self._unit("periodic"):
            changed = []
            for key, proc in list(self.running.items()):
                ad = jobs.get(key)
                if ad is None or ad["JobUniverse"] == UNIVERSE_SCHEDULER or proc.job_pid is None:
                    continue
                rss, vsize = shadow.memory_kb(proc.job_pid)
                if rss > proc.peak_rss_kb:
                    proc.peak_rss_kb = rss
                    ad["ResidentSetSize"] = rss
                    ad["MemoryUsage"] = math.ceil(rss / 1024)
                    ad["ImageSize"] = max(vsize, _int(ad.get("ImageSize")))
                    changed.append(ad)
                    self._log(ad, JobImageSizeEvent, image_size=ad["ImageSize"], memory_usage=ad["MemoryUsage"],
                              resident_set_size=rss)
            if changed:
                self._save(changed)
            remove, hold, release, overtime = [], [], [], []
            now = self.clock()
            for ad in list(jobs.values()):
                status = ad["JobStatus"]
                if status == JobStatus.REMOVED:
                    continue
                duration = _float(_eval(ad, "AllowedJobDuration")) if status == JobStatus.RUNNING else None
                if duration is not None and now - ad.get("ShadowBday", now) >= duration:
                    overtime.append(ad)
                elif status not in (JobStatus.HELD, JobStatus.COMPLETED) and _eval(ad, "PeriodicHold") is True:
                    hold.append(ad)
                elif (status == JobStatus.HELD and ad.get("HoldReasonCode") != HOLD_CODE_USER
                      and _eval(ad, "PeriodicRelease") is True):
                    release.append(ad)
                elif _eval(ad, "PeriodicRemove") is True:
                    remove.append(ad)
            for ad in remove:
                default = f"The job attribute PeriodicRemove expression '{_policy_text(ad, 'PeriodicRemove')}' evaluated to TRUE"
                self._remove([ad], _reason(ad, "PeriodicRemoveReason", default), policy=True)
            for ad in hold:
                reason = _reason(ad, "PeriodicHoldReason", f"The job attribute PeriodicHold expression '{_policy_text(ad, 'PeriodicHold')}' evaluated to TRUE")
                self._hold([ad], reason, HOLD_CODE_JOB_POLICY, _int(_eval(ad, "PeriodicHoldSubCode")))
            for ad in release:
                expr = _policy_text(ad, "PeriodicRelease")
                self._release([ad], f"The job attribute PeriodicRelease expression '{expr}' evaluated to TRUE")
            for ad in overtime:
                allowed = int(_eval(ad, "AllowedJobDuration"))
                self._hold([ad], f"The job exceeded allowed job duration of {_time_short(allowed)}",
                           HOLD_CODE_JOB_DURATION, 0)
            if remove or hold or release or overtime:
                self.schedule()

    # ------------------------------------------------------------------ helpers

    def _save(self, ads: Iterable[classad2.ClassAd]) -> None:
        """Inside a unit: persist changed ads (when it commits), keeping their text for queries."""
        for ad in ads:
            self._changed[job_id(ad)] = ad

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
        if constraint.strip().lower() == "true":  # the whole queue (a monitor's): no ad to evaluate
            return sorted(self.jobs.items())
        expr = _constraint(constraint)
        return [(key, ad) for key, ad in sorted(self.jobs.items()) if expr.eval(scope=ad) is True]

    def _resolve(self, job_spec: JobSpec, gone: list[str] | None = None) -> list[JobId]:
        """Job ids for a spec: ``c.p``, a cluster, a list of those, or a constraint.  A named job
        or cluster not in the queue is an error, or, given ``gone``, said there and skipped."""
        if _is_constraint(job_spec):
            return [key for key, _ in self._matching(str(job_spec))]
        specs = [job_spec] if isinstance(job_spec, (str, int)) else list(job_spec)
        keys: list[JobId] = []
        for spec in specs:
            text = str(spec).strip()
            match = _JOB_ID.match(text)
            if not match:
                raise ScheddError(f"{text!r} is not a job id; give CLUSTER or CLUSTER.PROC, in digits 0-9")
            cluster, proc = match.groups()
            if len(cluster) > 10 or int(cluster) > MAX_JOB_ID or (proc and (len(proc) > 10 or int(proc) > MAX_JOB_ID)):
                raise ScheddError(f"{text!r} is not a job id: ids go up to {MAX_JOB_ID}")
            if proc:
                key = (int(cluster), int(proc))
                found = [key] if key in self.jobs else []
            else:
                found = sorted(k for k in self.jobs if k[0] == int(cluster))
            if not found and not proc and int(cluster) in self.job_factories:
                continue  # a factory with no job queued now: condor_rm and condor_hold act on it
            if not found:
                missing = self._missing(int(cluster), int(proc) if proc else None)
                if gone is None:
                    raise ScheddError(missing)
                gone.append(missing)
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
        if action is JobAction.Hold and status == JobStatus.COMPLETED:  # left in the queue: 23.9.6 counts it nowhere
            return "completed", "cannot hold a job that is completed"
        if action is JobAction.Hold and status == JobStatus.REMOVED:
            return "bad_status", "cannot hold a job that is removed"
        if action is JobAction.Hold and status == JobStatus.HELD and ad.get("HoldReasonCode") == HOLD_CODE_USER:
            # 23.9.6 holds a job held otherwise (hold = true, a transfer failure...) again, as the
            # user's hold, which periodic_release leaves alone
            return "already_done", "is already held by condor_hold"
        if action is JobAction.Release and status != JobStatus.HELD:
            return "bad_status", f"is not held (it is {status.name.lower()})"
        if action is JobAction.Remove and status == JobStatus.REMOVED:
            return "already_done", "is already being removed; use RemoveX (rm -forcex) to force it out"
        if action is JobAction.RemoveX and status != JobStatus.REMOVED:  # 23.9.6: only a job being removed
            return "bad_status", f"is not being removed (it is {status.name.lower()}); remove it first"
        return None


def _event_logs(ad: classad2.ClassAd) -> tuple[str | None, str | None, frozenset[int] | None]:
    """Where a job's events go: its UserLog, DAGMan's nodes log, and the event numbers its
    DAGManNodesMask (comma separated, as condor_dagman sets it) lets into the nodes log (None:
    every event).  Kept per job, since every event asks, until an edit changes the job."""
    user_log, nodes_log, mask = ad.get("UserLog"), ad.get("DAGManNodesLog"), ad.get("DAGManNodesMask")
    if mask is not None:
        mask = frozenset(int(n) for n in str(mask).replace(",", " ").split() if n.isdigit())
    user_log = user_log if user_log and isinstance(user_log, str) else None
    nodes_log = nodes_log if nodes_log and isinstance(nodes_log, str) else None
    if user_log and nodes_log and os.path.normpath(user_log) == os.path.normpath(nodes_log):
        nodes_log = user_log  # log = ./x.dag.nodes.log names the nodes log: its events once
    return user_log, nodes_log, mask


def _machine_attrs(job: classad2.ClassAd, slot: classad2.ClassAd) -> dict:
    """``MachineAttr<Name>0`` for each attribute of the matched slot that HTCondor 23.9.6's schedd
    records at a match: SYSTEM_JOB_MACHINE_ATTRS' default (Cpus, SlotWeight) and the job's
    ``job_machine_attrs`` (JobMachineAttrs), which DAGMAN_RECORD_MACHINE_ATTRS sets for node jobs.
    One run's worth, as SYSTEM_JOB_MACHINE_ATTRS_HISTORY_LENGTH's default keeps."""
    names = ["Cpus", "SlotWeight", *re.split(r"[\s,]+", str(job.get("JobMachineAttrs", "")))]
    recorded = {}
    for name in dict.fromkeys(n for n in names if n):
        value = slot.eval(name) if name in slot else None
        if isinstance(value, (int, float, str, bool)):
            recorded[f"MachineAttr{name}0"] = value
    return recorded


@functools.lru_cache(maxsize=64)
def _moment(when: int) -> datetime:
    """An event's time, in local time: events show whole seconds, and a busy schedd logs many
    in the same one."""
    return datetime.fromtimestamp(when).astimezone()


def _policy_text(ad: classad2.ClassAd, attr: str) -> str:
    """A policy expression as HTCondor's reasons quote it: as written, in the old ClassAd syntax
    on one line (classad2's str spreads a list over several, which would break a user log)."""
    scratch = classad2.ClassAd()
    scratch["x"] = ad.lookup(attr)
    return scratch.printOld().removeprefix("x = ").rstrip("\n")


def _held_by_policy(ad: classad2.ClassAd) -> bool:
    """A job held by its periodic_hold or allowed_job_duration: while it runs, HTCondor's shadow
    holds it, logging the hold at once and no JOB_EVICTED (on_exit_hold holds a job that has
    already exited)."""
    return ad["JobStatus"] == JobStatus.HELD and ad.get("HoldReasonCode") in (HOLD_CODE_JOB_POLICY,
                                                                               HOLD_CODE_JOB_DURATION)


def _time_short(seconds: int) -> str:
    """HTCondor's format_time_short: ``d+hh:mm:ss`` without its leading zeros, down to ``mm:ss``
    (``00:05``, ``1:00:00``, ``1+00:00:00``)."""
    days, rest = divmod(seconds, 86400)
    text = f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    stripped = text.lstrip(" 0+")
    return stripped[1:] if stripped.startswith(":") else stripped


def _vacate_time(ad: classad2.ClassAd, machine: float) -> float:
    """Seconds from the kill signal to SIGKILL: the job's JobMaxVacateTime (job_max_vacate_time)
    where it is shorter than the machine's, as HTCondor's starter takes the smaller of the two."""
    job = _eval(ad, "JobMaxVacateTime")
    if type(job) in (int, float) and job >= 0:
        return min(machine, float(job))
    return machine


def _exit_status(ad: classad2.ClassAd, status: int) -> bool:
    """Record how the job's process ended (ExitBySignal, then ExitSignal or ExitCode); whether a
    signal ended it."""
    signalled = os.WIFSIGNALED(status)
    ad["ExitBySignal"] = signalled
    if signalled:
        ad["ExitSignal"] = os.WTERMSIG(status)
        ad.pop("ExitCode", None)
    else:
        ad["ExitCode"] = os.WEXITSTATUS(status)
    return signalled


def _held_fields(ad: classad2.ClassAd) -> dict:
    """A held job's JobHeldEvent fields, from its hold attributes."""
    return {"reason": ad.get("HoldReason", ""), "code": ad.get("HoldReasonCode", 0),
            "subcode": ad.get("HoldReasonSubCode", 0)}


def _enter(ad: classad2.ClassAd, status: JobStatus, now: int) -> None:
    """Move a job to ``status``, remembering the one it leaves, as the schedd records it; a
    CronTab job back to idle (requeued or released) gets its next DeferralTime, as there."""
    ad["LastJobStatus"] = ad["JobStatus"]
    ad["JobStatus"] = int(status)
    ad["EnteredCurrentStatus"] = now
    if status == JobStatus.IDLE:
        _schedule_cron(ad, now)


def _removed_hard(ad: classad2.ClassAd) -> bool:
    """Whether removing the running job (condor_rm, periodic_remove) kills it at once: as 23.9.6's
    shadow does for a job whose WantGracefulRemoval is false (the test pool's TERM trap never ran); without the attribute,
    or true, the job gets its RemoveKillSig and SIGKILL after the vacate time.  A scheduler or
    local universe job has no shadow: the schedd sends it its signal."""
    return ad["JobUniverse"] not in SLOTLESS_UNIVERSES and _eval(ad, "WantGracefulRemoval") is False


def _schedule_cron(ad: classad2.ClassAd, now: float) -> str | None:
    """Set a CronTab job's DeferralTime to its next time; the reason it cannot, if so."""
    if not crontab.wants_crontab(ad):
        return None
    try:
        ad["DeferralTime"] = crontab.next_run(ad, now)
    except crontab.CronError as e:
        return str(e)
    return None


def _name(key: JobId) -> str:
    return f"{key[0]}.{key[1]}"


def _constraint(text: str, what: str = "constraint") -> classad2.ExprTree:
    try:
        return classad2.ExprTree(text)
    except Exception:
        raise ScheddError(f"cannot parse {what} {text!r} as a ClassAd expression") from None


def _is_constraint(job_spec: JobSpec) -> bool:
    """A string that is not a job id (in any digits: a bad id is refused as one, not parsed as
    a ClassAd expression)."""
    if isinstance(job_spec, int) or not isinstance(job_spec, str):
        return False
    return not job_spec.replace(".", "").strip().isdigit()


def _project(ad: classad2.ClassAd, projection: Sequence[str]) -> classad2.ClassAd:
    """The projected attributes and, as a 23.9.6 schedd sends them, those their expressions refer to
    in the job's ad, so that an attribute set to an expression of others (``Expr = RequestMemory * 2``)
    evaluates in the projected ad as in the whole one."""
    if not projection:
        return ad
    out = classad2.ClassAd()
    todo = list(projection)
    while todo:
        attr = todo.pop()
        if attr in out or attr not in ad:
            continue
        out[attr] = value = ad.lookup(attr)
        if isinstance(value, classad2.ExprTree):
            for ref in {*ad.internalRefs(value), *ad.externalRefs(value)}:
                scope, _, name = ref.rpartition(".")
                if name and scope.lower() in ("", "my"):
                    todo.append(name)
    return out


def _usage(ad: classad2.ClassAd, wall: float, cpu: float) -> dict[str, int | float]:
    """The terminated event's resources, as a 23.9 dynamic slot reports them: allocated is what
    was requested, CPU usage is CPU time over wall time, times are whole seconds."""
    cpus, memory, disk = (_requested(ad, "RequestCpus", 1), _requested(ad, "RequestMemory", 0),
                          _requested(ad, "RequestDisk", 0))
    return {"Cpus": cpus, "RequestCpus": cpus, "CpusUsage": round(cpu / wall, 2) if wall > 0 else 0, "GPUs": 0,
            "Memory": memory, "RequestMemory": memory, "MemoryUsage": ad.get("MemoryUsage", 0), "Disk": disk,
            "RequestDisk": disk, "TimeExecuteUsage": int(wall), "TimeSlotBusyUsage": math.ceil(wall)}


def _requested(ad: classad2.ClassAd, attr: str, default: int) -> int:
    """A request's amount, its expression evaluated in the job's ad (``request_memory =
    ifThenElse(MemoryUsage =!= undefined, ...)``), as the slot carved for the job gets it."""
    value = _eval(ad, attr)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


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



def _parse_key(text: str) -> JobId | None:
    cluster, _, proc = text.partition(".")
    try:
        return int(cluster), int(proc)
    except ValueError:
        return None


# Events a DAG's nodes log gets from DAGMan, its other writer, among a job's own (POST_SCRIPT_TERMINATED,
# PRESKIP): a schedd that looks for the events it logged before a crash looks past them.
_DAGMAN_EVENTS = ("016 (", "034 (")


def _logged_prefix(logged: list[str], pending: list[str]) -> int:
    """How many of a job's ``pending`` events (oldest first) its log already holds: events are
    written in order, so those written are a prefix of ``pending`` that ends the job's
    ``logged`` events."""
    for count in range(len(pending), 0, -1):
        if logged[-count:] == pending[:count]:
            return count
    return 0


def _spawner_died() -> None:
    """The spawner is gone (killed): the schedd dies too, and its next start recovers every run
    from the starters' records, as after any crash."""
    log.error("the starters' spawner died; the schedd stops and recovers on its next start")
    os._exit(75)
