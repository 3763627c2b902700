"""HTCondor job event logs ("user logs"), written byte for byte as HTCondor 23.9 writes them.

DAGMan, condor_wait and ``htcondor2.JobEventLog`` follow jobs by reading these files, so the text
must be HTCondor's own: each event here reproduces the ``formatHeader``/``formatBody`` pair of its
class in HTCondor's src/condor_utils/condor_event.cpp (v23.9.6), with the default format options
(``USERLOG_FORMAT_DEFAULT`` = ISO_DATE: local time, no sub-seconds, no zone). Classes are named as
there; fields are that file's members in Python spelling.  Readers parse logs with HTCondor's
``JobEventLog``; :func:`holds_events` only tells, from the event headers, whether one is worth it,
and :class:`QueueFollower` follows the jobs of a log for monitors, through ``JobEventLog`` too.
"""

from __future__ import annotations

import errno
import functools
import math
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import ClassVar, NamedTuple

import classad2
from htcondor2 import HTCondorException, JobEventLog, JobEventType

Value = int | float | str
"""A ClassAd literal as the events carry them: machine resources, usage figures, paths."""


class Rusage(NamedTuple):
    """User and system CPU seconds: the two fields of ``struct rusage`` that a user log shows."""

    ru_utime: float = 0.0
    ru_stime: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Event:
    """What every event has: the job id ``(cluster.proc.subproc)`` and when it happened."""

    type: ClassVar[JobEventType]
    cluster: int
    proc: int
    subproc: int = 0
    time: datetime

    def __post_init__(self) -> None:
        # A naive time is ambiguous; HTCondor logs an instant, shown in local time.
        if self.time.tzinfo is None:
            raise ValueError(f"event time {self.time} has no time zone")

    def _body(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class SubmitEvent(Event):
    """000, written by the schedd at submit; ``log_notes`` is the job's SubmitEventNotes,
    which DAGMan sets to ``DAG Node: <name>`` to find its nodes in the shared nodes log."""

    type = JobEventType.SUBMIT
    submit_host: str
    log_notes: str = ""

    def _body(self) -> str:
        notes = f"    {self.log_notes}\n" if self.log_notes else ""
        return f"Job submitted from host: {self.submit_host}\n{notes}"


@dataclass(frozen=True, kw_only=True)
class ExecuteEvent(Event):
    """001, written by the shadow when the job starts; ``props`` are what 23.x copies from the
    starter: CondorScratchDir and the slot's resources (Cpus, Disk, GPUs, Memory)."""

    type = JobEventType.EXECUTE
    execute_host: str
    slot_name: str = ""
    props: Mapping[str, Value] = field(default_factory=dict)

    def _body(self) -> str:
        out = f"Job executing on host: {self.execute_host}\n"
        if self.slot_name:
            out += f"\tSlotName: {self.slot_name}\n"
        # sPrintAdAttrs walks a classad::References: names sorted without regard to case.
        for name in sorted(self.props, key=str.lower):
            out += f"\t{name} = {_unparse(self.props[name])}\n"
        return out


@dataclass(frozen=True, kw_only=True)
class JobImageSizeEvent(Event):
    """006, written by the shadow whenever the job's memory figures change."""

    type = JobEventType.IMAGE_SIZE
    image_size: int  # KB
    memory_usage: int  # MB
    resident_set_size: int  # KB

    def _body(self) -> str:
        return (
            f"Image size of job updated: {self.image_size}\n"
            f"\t{self.memory_usage}  -  MemoryUsage of job (MB)\n"
            f"\t{self.resident_set_size}  -  ResidentSetSize of job (KB)\n"
        )


@dataclass(frozen=True, kw_only=True)
class JobTerminatedEvent(Event):
    """005, written by the shadow when the job exits: set exactly one of ``return_value`` and
    ``signal_number``.

    ``usage`` is the shadow's usage ad, named as HTCondor names it (``Cpus`` allocated,
    ``RequestCpus``, ``CpusUsage``, ``TimeExecuteUsage``, ...); it prints as the Partitionable
    Resources table, and ``JobEventLog`` reads the same names back. ``exited_at`` is when the job
    exited of its own accord (the starter's ToE tag, which 23.x prints last); None omits it, as
    for DAGMan's NOOP nodes. Local usage is always zero: the shadow never fills it in.
    """

    type = JobEventType.JOB_TERMINATED
    return_value: int | None = None
    signal_number: int | None = None
    core_file: str = ""
    run_remote_usage: Rusage = Rusage()
    total_remote_usage: Rusage = Rusage()
    sent_bytes: float = 0
    received_bytes: float = 0
    total_sent_bytes: float = 0
    total_received_bytes: float = 0
    usage: Mapping[str, Value] | None = None
    exited_at: datetime | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_exit(self.return_value, self.signal_number)

    def _body(self) -> str:
        out = "Job terminated.\n" + _termination(self.return_value, self.signal_number, self.core_file)
        out += (
            f"{_rusage(self.run_remote_usage)}  -  Run Remote Usage\n"
            f"{_rusage(Rusage())}  -  Run Local Usage\n"
            f"{_rusage(self.total_remote_usage)}  -  Total Remote Usage\n"
            f"{_rusage(Rusage())}  -  Total Local Usage\n"
            f"\t{self.sent_bytes:.0f}  -  Run Bytes Sent By Job\n"
            f"\t{self.received_bytes:.0f}  -  Run Bytes Received By Job\n"
            f"\t{self.total_sent_bytes:.0f}  -  Total Bytes Sent By Job\n"
            f"\t{self.total_received_bytes:.0f}  -  Total Bytes Received By Job\n"
        )
        if self.usage:
            out += _usage_table(self.usage)
        if self.exited_at is not None:
            how = (
                f"exit-code {self.return_value}"
                if self.signal_number is None
                else f"signal {self.signal_number}"
            )
            out += f"\n\tJob terminated of its own accord at {_utc(self.exited_at)} with {how}.\n"
        return out


@dataclass(frozen=True, kw_only=True)
class JobHeldEvent(Event):
    """012: ``reason``, ``code`` and ``subcode`` are the job's HoldReason, HoldReasonCode and
    HoldReasonSubCode."""

    type = JobEventType.JOB_HELD
    reason: str
    code: int
    subcode: int = 0

    def _body(self) -> str:
        reason = self.reason or "Reason unspecified"
        return f"Job was held.\n\t{reason}\n\tCode {self.code} Subcode {self.subcode}\n"


@dataclass(frozen=True, kw_only=True)
class JobReleasedEvent(Event):
    """013: ``reason`` is the job's ReleaseReason."""

    type = JobEventType.JOB_RELEASED
    reason: str = ""

    def _body(self) -> str:
        return "Job was released.\n" + (f"\t{self.reason}\n" if self.reason else "")


@dataclass(frozen=True, kw_only=True)
class JobAbortedEvent(Event):
    """009, written by the schedd when a job leaves the queue removed: ``reason`` is the job's
    RemoveReason."""

    type = JobEventType.JOB_ABORTED
    reason: str = ""

    def _body(self) -> str:
        return "Job was aborted.\n" + (f"\t{self.reason}\n" if self.reason else "")


@dataclass(frozen=True, kw_only=True)
class JobEvictedEvent(Event):
    """004, written by the shadow when a running job is stopped and goes back to idle
    (23.x says "(0) CPU times" where older versions said "Job was not checkpointed.")."""

    type = JobEventType.JOB_EVICTED
    reason: str = ""
    run_remote_usage: Rusage = Rusage()
    sent_bytes: float = 0
    received_bytes: float = 0
    usage: Mapping[str, Value] | None = None
    # The job exited and OnExitRemove kept it in the queue (baseshadow.cpp logRequeueEvent):
    # set exactly one of return_value and signal_number.
    terminated_and_requeued: bool = False
    return_value: int | None = None
    signal_number: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.terminated_and_requeued:
            _check_exit(self.return_value, self.signal_number)

    def _body(self) -> str:
        how = "Job terminated and was requeued" if self.terminated_and_requeued else "CPU times"
        out = (
            f"Job was evicted.\n\t(0) {how}\n"
            f"{_rusage(self.run_remote_usage)}  -  Run Remote Usage\n"
            f"{_rusage(Rusage())}  -  Run Local Usage\n"
            f"\t{self.sent_bytes:.0f}  -  Run Bytes Sent By Job\n"
            f"\t{self.received_bytes:.0f}  -  Run Bytes Received By Job\n"
        )
        if self.terminated_and_requeued:
            out += _termination(self.return_value, self.signal_number, "")
        if self.reason:
            out += f"\t{self.reason}\n"
        if self.usage:
            out += _usage_table(self.usage)
        return out


@dataclass(frozen=True, kw_only=True)
class PostScriptTerminatedEvent(Event):
    """016, written by DAGMan to the nodes log when a POST script exits: set exactly one of
    ``return_value`` and ``signal_number``."""

    type = JobEventType.POST_SCRIPT_TERMINATED
    dag_node_name: str
    return_value: int | None = None
    signal_number: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_exit(self.return_value, self.signal_number)

    def _body(self) -> str:
        if self.signal_number is None:
            status = f"\t(1) Normal termination (return value {self.return_value})\n"
        else:
            status = f"\t(0) Abnormal termination (signal {self.signal_number})\n"
        return f"POST Script terminated.\n{status}    DAG Node: {self.dag_node_name}\n"


@dataclass(frozen=True, kw_only=True)
class ClusterSubmitEvent(Event):
    """035, written by the schedd for a cluster that materializes its jobs late (max_materialize,
    max_idle), before the SUBMIT of its first job; its id is the cluster's, proc -1."""

    type = JobEventType.CLUSTER_SUBMIT
    submit_host: str

    def _body(self) -> str:
        return f"Cluster submitted from host: {self.submit_host}\n"


@dataclass(frozen=True, kw_only=True)
class ClusterRemoveEvent(Event):
    """036, written once the last job of such a cluster left the queue: how many jobs it made
    (of how many queue items: 0 for ``queue N``), and whether it made them all."""

    type = JobEventType.CLUSTER_REMOVE
    materialized: int
    items: int
    complete: bool

    def _body(self) -> str:
        state = "Complete" if self.complete else "Incomplete"
        return f"Cluster removed\n\tMaterialized {self.materialized} jobs from {self.items} items.\t{state}\n"


@dataclass(frozen=True, kw_only=True)
class FactoryPausedEvent(Event):
    """037: condor_hold of such a cluster pauses it (PauseCode 1, HoldCode 1, as 23.9.6 writes)."""

    type = JobEventType.FACTORY_PAUSED
    reason: str

    def _body(self) -> str:
        return f"Job Materialization Paused\n\t{self.reason}\n\tPauseCode 1\n\tHoldCode 1\n"


@dataclass(frozen=True, kw_only=True)
class FactoryResumedEvent(Event):
    """038: condor_release of a paused cluster."""

    type = JobEventType.FACTORY_RESUMED
    reason: str

    def _body(self) -> str:
        return f"Job Materialization Resumed\n\t{self.reason}\n"


@dataclass(frozen=True, kw_only=True)
class PreSkipEvent(Event):
    """034, written by DAGMan when a PRE script exits with the node's PRE_SKIP value. DAGMan
    gives it a NOOP id: cluster 0, proc 2147483647 (INT_MAX), subproc a counter."""

    type = JobEventType.PRESKIP
    dag_node_name: str

    def _body(self) -> str:
        return f"PRE script return value is PRE_SKIP value\n    DAG Node: {self.dag_node_name}\n"


def format_event(event: Event) -> str:
    """The event's text block, header to the closing ``...`` line (ULogEvent::formatHeader)."""
    return (f"{event.type:03d} ({event.cluster:03d}.{event.proc:03d}.{event.subproc:03d}) "
            f"{_local_time(event.time, time.tzname)} {event._body()}...\n")


@functools.lru_cache(maxsize=64)
def _local_time(when: datetime, zone: tuple[str, str]) -> str:
    """``2024-01-02 03:04:05`` in local time (``zone``: the time zone it is made for), as HTCondor
    writes it without the UTC option; kept for the few instants in use, since a DAG's NOOP nodes
    write thousands of events a second."""
    t = when.astimezone()
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"


class UserLog:
    """Appends events to one user log.

    Each event is one ``write`` on an ``O_APPEND`` descriptor, as WriteUserLog::doWriteEvent does,
    so writers sharing a log (the jobs of a DAG and DAGMan itself on its nodes log) interleave only
    between events. ``fsync`` makes each event durable before ``write`` returns; HTCondor does that
    for DAGMan's nodes log, whose events DAGMan's recovery replays.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = os.fspath(path)
        self._fsync = fsync
        # 0664 as WriteUserLog::openFile; the OSError raised names the path.
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        self._fd: int | None = os.open(self.path, flags, 0o664)

    def size(self) -> int:
        """The log's length now, other writers' events included."""
        return os.fstat(self._fd).st_size

    def write(self, *events: Event) -> int:
        """Append ``events`` together (DAGMan logs a NOOP node's submit and exit as one write);
        returns the number of bytes written."""
        if self._fd is None:
            raise ValueError(f"user log {self.path} is closed")
        data = "".join(format_event(event) for event in events).encode()
        if os.write(self._fd, data) != len(data):
            # A second write would no longer be atomic; HTCondor too reports a short write as failure.
            raise OSError(f"short write to user log {self.path}")
        if self._fsync:
            os.fdatasync(self._fd)
        return len(data)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> UserLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append_events(path: str, text: str) -> None:
    """Append events already formatted (:func:`format_event`) in one write, opening the log for
    it, as the schedd does for each batch (the user may move or delete the log meanwhile).  A
    write cut short by a full disk is taken back, so that the log holds no half event, and raises."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o664)
    try:
        before = os.fstat(fd).st_size
        written = os.write(fd, data)
        if written != len(data):
            if os.fstat(fd).st_size == before + written:
                os.ftruncate(fd, before)
            raise OSError(errno.ENOSPC, f"short write to user log {path}")
    finally:
        os.close(fd)


_EVENT_HEADER = re.compile(r"\d{3} \((\d+)\.(-?\d+)\.\d+\) ")  # proc -1: a factory's (cluster) events


def events_by_job(path: str) -> dict[tuple[int, int], list[str]]:
    """Each job's events in the log at ``path`` as the text :func:`format_event` makes, in the
    order they were written ({} when there is no log): how a schedd restarted after a crash tells
    which committed events reached the log."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return {}
    out: dict[tuple[int, int], list[str]] = {}
    for block in text.split("...\n"):
        block = block.lstrip("\n")
        header = _EVENT_HEADER.match(block)
        if header:
            out.setdefault((int(header.group(1)), int(header.group(2))), []).append(block + "...\n")
    return out


def history_ads(path: str, owner: str) -> list[classad2.ClassAd]:
    """The jobs of a log that terminated or were aborted, as ``condor_history -userlog`` 23.9.6
    makes their ads from the events (read with ``JobEventLog``), in the order they were submitted;
    ``owner`` is the reader's login, as there (a log does not say whose jobs it follows)."""
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise OSError(f"Can't open userlog {path}")
    jobs: dict[tuple[int, int], dict] = {}  # in the order they first appear: 23.9.6 lists them so
    ended: dict[tuple[int, int], classad2.ClassAd] = {}
    try:
        events = list(JobEventLog(path).events(stop_after=0))
    except HTCondorException as e:
        raise OSError(f"{path}: not a job event log ({e})") from None
    for event in events:
        key = (event.cluster, event.proc)
        if event.type == JobEventType.SUBMIT:
            jobs[key] = {"ClusterId": event.cluster, "ProcId": event.proc, "QDate": event.timestamp,
                         "SubmitHost": event.get("SubmitHost", ""), "JobStatus": 1, "NumJobStarts": 0,
                         "ImageSize": 0}
            continue
        job = jobs.setdefault(key, {"ClusterId": event.cluster, "ProcId": event.proc, "QDate": 0, "JobStatus": 1,
                                    "NumJobStarts": 0, "ImageSize": 0})
        if event.type == JobEventType.EXECUTE:
            job.update(JobStatus=2, JobCurrentStartDate=event.timestamp, NumJobStarts=job["NumJobStarts"] + 1,
                       LastRemoteHost=event.get("ExecuteHost", ""), StartdIpAddr=event.get("ExecuteHost", ""))
        elif event.type == JobEventType.IMAGE_SIZE:
            job.update(ImageSize=event.get("Size", 0), ResidentSetSize=event.get("ResidentSetSize", 0),
                       ProportionalSetSize=event.get("ProportionalSetSize", -1))
        elif event.type == JobEventType.JOB_HELD:
            job["JobStatus"] = 5
        elif event.type in (JobEventType.JOB_RELEASED, JobEventType.JOB_EVICTED):
            job["JobStatus"] = 1
        elif event.type in (JobEventType.JOB_TERMINATED, JobEventType.JOB_ABORTED):
            ended[key] = _history_ad(job, event, owner, path)
    return [ended[key] for key in jobs if key in ended]


def _history_ad(job: dict, event, owner: str, path: str) -> classad2.ClassAd:
    terminated = event.type == JobEventType.JOB_TERMINATED
    ad = classad2.ClassAd({
        "ClusterId": job["ClusterId"], "ProcId": job["ProcId"], "Owner": owner, "Cmd": "???",
        "MyType": "Job", "TargetType": "Machine", "JobPrio": 0, "QDate": job["QDate"],
        "GlobalJobId": f"localhost#{job['ClusterId']}.{job['ProcId']}#{job['QDate']}",
        "JobStatus": 4 if terminated else 3, "LastJobStatus": job["JobStatus"],
        "EnteredCurrentStatus": event.timestamp, "CompletionDate": event.timestamp if terminated else 0,
        "NumJobStarts": job["NumJobStarts"], "ImageSize": job["ImageSize"], "NumSystemHolds": 0,
        "TotalSuspensions": 0, "LastSuspensionTime": 0, "UserLog": path,
        "RemoteWallClockTime": float(event.get("TimeExecuteUsage", 0) or 0) if terminated else 0.0,
        "ServerTime": int(time.time()),
    })
    if job.get("SubmitHost"):
        ad["SubmitHost"] = job["SubmitHost"]
    for name in ("JobCurrentStartDate", "LastRemoteHost", "StartdIpAddr", "ResidentSetSize", "ProportionalSetSize"):
        if name in job and terminated:
            ad[name] = job[name]
    for name, usage in (("Remote", "TotalRemoteUsage"), ("Local", "TotalLocalUsage")):
        user, system = _usage_seconds(event.get(usage, "")) if terminated else (0.0, 0.0)
        ad[f"{name}UserCpu"], ad[f"{name}SysCpu"] = user, system
    if terminated:  # the last run's figures too
        for name, usage in (("Remote", "RunRemoteUsage"), ("Local", "RunLocalUsage")):
            ad[f"Last{name}UserCpu"], ad[f"Last{name}SysCpu"] = _usage_seconds(event.get(usage, ""))
        ad["LastRemoteWallClockTime"] = ad["RemoteWallClockTime"]
        normal = bool(event.get("TerminatedNormally", True))
        ad["ExitBySignal"] = not normal
        if normal:
            ad["ExitCode"] = int(event.get("ReturnValue", 0))
        else:
            ad["ExitSignal"] = int(event.get("TerminatedBySignal", 0))
    else:
        ad["RemoveReason"] = str(event.get("Reason", ""))
    return ad


def _usage_seconds(text: str) -> tuple[float, float]:
    """``Usr D HH:MM:SS, Sys D HH:MM:SS`` (a terminated event's usage) as user and system seconds."""
    found = re.findall(r"(\d+) (\d+):(\d+):(\d+)", text)
    seconds = [float(int(d) * 86400 + int(h) * 3600 + int(m) * 60 + int(s)) for d, h, m, s in found]
    return (seconds + [0.0, 0.0])[0], (seconds + [0.0, 0.0])[1]


def node_events(path: str, node: str, jobs: Iterable[int] = (), after: int = 0) -> str | None:
    """The events of one DAG node's jobs in the log at ``path`` (a shared ``log = job.log`` holds
    every node's), in the order they were written: of the clusters ``jobs``, and of each cluster
    above ``after`` (its DAGMan job's) that the log says ran node ``node`` (DAGMan's ``DAG Node:``
    note on its submit event, on each retry's).  None if there is no log."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None
    clusters, note = set(jobs), f"\n    DAG Node: {node}\n"
    kept = []
    for block in text.split("...\n"):
        block = block.lstrip("\n")
        header = _EVENT_HEADER.match(block)
        if header is None:
            continue
        cluster = int(header.group(1))
        if cluster not in clusters and cluster > after and block.startswith("000 ") and note in block:
            clusters.add(cluster)
        if cluster in clusters:
            kept.append(block + "...\n")
    return "".join(kept)


def holds_events(path: str | os.PathLike[str], types: Iterable[JobEventType]) -> bool:
    """Whether the log at ``path`` holds an event of one of ``types``: a scan of its text for their
    headers (``NNN (`` at the start of a line, as :func:`format_event` begins one), far cheaper than
    parsing every event, for a reader that can skip a log without them.  It misses none; a body
    line that looked like such a header would only cost that reader its parse.  No file: False."""
    header = re.compile(rb"^(?:" + b"|".join(b"%03d" % t for t in types) + rb") \(", re.MULTILINE)
    try:
        with open(path, "rb") as f:
            return header.search(f.read()) is not None
    except FileNotFoundError:
        return False


_POST_RESULT = re.compile(rb"^016 \([^\n]*\) [^\n]* POST Script terminated\.\n"
                          rb"\t\(1\) Normal termination \(return value (\d+)\)\n"
                          rb"    DAG Node: ([^\n]+)\n", re.MULTILINE)


def change_post_results(path: str | os.PathLike[str], nodes: Iterable[str], old: int, new: int) -> list[str]:
    """Turn the POST_SCRIPT_TERMINATED events of ``nodes`` whose return value is ``old`` into
    ``new`` (one digit each, as CRAB's AdjustSites turns a fatal 2 into a recoverable 1 for a
    DAGMan that recovers from this log).  Each digit is written in place, so the events others
    append meanwhile stay; doing it again changes nothing.  Returns the nodes changed."""
    if not (0 <= old <= 9 and 0 <= new <= 9):
        raise ValueError("POST return values are changed one digit for one digit")
    wanted = set(nodes)
    with open(path, "r+b") as f:
        data = f.read()
        changed = []
        for m in _POST_RESULT.finditer(data):
            node = m.group(2).decode(errors="surrogateescape")
            if node in wanted and m.group(1) == b"%d" % old:
                os.pwrite(f.fileno(), b"%d" % new, m.start(1))
                changed.append(node)
        if changed:
            os.fsync(f.fileno())
    return changed


def _check_exit(return_value: int | None, signal_number: int | None) -> None:
    if (return_value is None) == (signal_number is None):
        raise ValueError("give exactly one of return_value and signal_number")


def _termination(return_value: int | None, signal_number: int | None, core_file: str) -> str:
    """The first lines of TerminatedEvent::formatBody."""
    if signal_number is None:
        return f"\t(1) Normal termination (return value {return_value})\n"
    core = f"(1) Corefile in: {core_file}" if core_file else "(0) No core file"
    return f"\t(0) Abnormal termination (signal {signal_number})\n\t{core}\n"


def _dhms(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days} {hours:02d}:{minutes:02d}:{secs:02d}"


_NO_USAGE = f"\t\tUsr {_dhms(0)}, Sys {_dhms(0)}"


def _rusage(usage: Rusage) -> str:
    """ULogEvent::formatRusage, led by the tab of the line it sits on: whole seconds as D HH:MM:SS
    (under a second, as most jobs and every NOOP node use, is the common case)."""
    if usage.ru_utime < 1 and usage.ru_stime < 1:
        return _NO_USAGE
    return f"\t\tUsr {_dhms(usage.ru_utime)}, Sys {_dhms(usage.ru_stime)}"


def _utc(when: datetime) -> str:
    """A ToE tag's time: ISO 8601 in UTC (ToE::decode)."""
    u = when.astimezone(timezone.utc)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def _unparse(value: Value) -> str:
    """A literal as HTCondor prints ad attributes in events (old ClassAd syntax)."""
    if type(value) is int:  # the common case, printed as Python prints it
        return str(value)
    return _unparse_literal(type(value), value)


@functools.lru_cache(maxsize=256)
def _unparse_literal(kind: type, value: Value) -> str:
    """:func:`_unparse` through classad2, kept for the few values events repeat (a DAG's
    scratch directory, CPU usage figures); ``kind`` keeps 1, 1.0 and True apart."""
    return classad2.ClassAd({"x": value}).printOld().removeprefix("x = ").rstrip("\n")


# Row labels that formatUsageAd gives the resources it knows the units of.
_UNITS = {
    "Memory": "Memory (MB)",
    "Disk": "Disk (KB)",
    "Gpus": "Gpus (Average)",
    "GpusMemory": "GpusMemory (MB)",
    "TimeExecute": "TimeExecute (s)",
    "TimeSlotBusy": "TimeSlotBusy (s)",
}


def _usage_table(usage: Mapping[str, Value]) -> str:
    """formatUsageAd: the Partitionable Resources table of a usage ad, kept for the usage ads
    that recur (every short job of a cluster has the same), since each terminated event has one."""
    return _usage_table_of(tuple(usage.items()), tuple(map(type, usage.values())))


@functools.lru_cache(maxsize=256)
def _usage_table_of(items: tuple[tuple[str, Value], ...], types: tuple[type, ...]) -> str:
    """:func:`_usage_table` of the usage ad's items (``types``, their values' types, keeps 1,
    1.0 and True apart in the cache)."""
    # Columns: 0 usage, 1 request, 2 allocated, 3 assigned. Rows are keyed without regard to case,
    # as HTCondor's UsageMap is, and sorted the same way.
    rows: dict[str, tuple[str, list[str]]] = {}
    fractional = [False] * 4
    for attr, value in items:
        if attr.startswith("Request"):
            name, column = attr[len("Request") :], 1
        elif attr.startswith("Assigned"):
            name, column = attr[len("Assigned") :], 3
        elif attr.endswith("AverageUsage"):
            name, column = attr[: -len("AverageUsage")], 0
        elif attr.endswith("Usage"):
            name, column = attr[: -len("Usage")], 0
        else:
            name, column = attr, 2
        if isinstance(value, float):
            whole = math.modf(value)[0] <= 0.0  # modf's test: negative fractions print whole too
            text = f"{int(value)}" if whole else f"{value:.2f}"
            fractional[column] |= not whole
        else:
            text = _unparse(value)
        rows.setdefault(name.lower(), (name, [""] * 4))[1][column] = text

    # Whole numbers in a column that has fractions get padded to line up with the decimal points.
    for _, cells in rows.values():
        for column, has_fraction in enumerate(fractional):
            if has_fraction and cells[column].isdigit():
                cells[column] += "   "
    width_name = max([len("Memory (MB)") + 1] + [len(name) for name, _ in rows.values()])
    width_use = max([8] + [len(cells[0]) for _, cells in rows.values()])
    width_req = max([8] + [len(cells[1]) for _, cells in rows.values()])
    width_alloc = max(len(cells[2]) for _, cells in rows.values())
    width_assigned = max(len(cells[3]) for _, cells in rows.values())

    alloc = max(width_alloc, 9)
    out = (
        f"\tPartitionable Resources : {'Usage':>{width_use}} {'Request':>{width_req}} "
        f"{'Allocated' if width_alloc else '':>{alloc}} {'Assigned' if width_assigned else ''}\n"
    )
    for key in sorted(rows):
        name, (use, req, allocated, assigned) = rows[key]
        label = _UNITS.get(name, name)
        out += (
            f"\t   {label:<{width_name + 8}} : {use:>{width_use}} {req:>{width_req}} "
            f"{allocated:>{alloc}} {assigned}\n"
        )
    return out


class QueueFollower:
    """The jobs that write to one user log, as they stand in the queue now: a query's answer
    brought up to date by the events written since, as condor_watch_q follows jobs by their logs
    instead of asking the schedd again.  Monitors use it to spare a busy schedd a query a second.

    Take :meth:`mark` before the query and give its answer to :meth:`seed`: a schedd commits a
    change before it logs it, so the events before the mark are in the answer, and those after
    it are applied over it (twice is harmless: each event sets the status it tells of).  Each
    :meth:`read` applies what was written since, read with HTCondor's ``JobEventLog``.  A log
    cut short or replaced (a new DAGMan run empties its nodes log), or one that cannot be read,
    sets :attr:`stale`: seed it again from a query.  Jobs first seen in a SUBMIT event get
    ``attrs`` and, from DAGMan's ``DAG Node: X`` notes, DAGNodeName."""

    def __init__(self, path: str, attrs: Mapping[str, Value] | None = None) -> None:
        self.path = path
        self.attrs = dict(attrs or {})
        self.jobs: dict[tuple[int, int], dict[str, Value]] = {}
        self.version = 0  # counts the changes to ``jobs``
        self.stale = True
        self._events = None
        self._inode: int | None = None
        self._offset = 0

    def mark(self) -> tuple[int | None, int]:
        """Where the log ends now (its inode and size; None, 0 if there is none yet)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None, 0
        return st.st_ino, st.st_size

    def seed(self, ads: Iterable[Mapping[str, Value]], mark: tuple[int | None, int]) -> None:
        """The jobs as a query found them after ``mark``; the events after it follow."""
        self.jobs = {(int(ad["ClusterId"]), int(ad["ProcId"])): dict(ad) for ad in ads}
        self._inode, self._offset = mark
        self._events = None
        self.stale = False
        self.version += 1

    def read(self) -> bool:
        """Apply the events written since the last read; whether any job changed."""
        if self.stale:
            return False
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._inode is None and os.path.isdir(os.path.dirname(self.path) or "."):
                return False  # no job has written to it yet
            self.stale = True  # gone, or its directory is not on this machine
            return False
        except OSError:
            self.stale = True
            return False
        if self._inode is not None and (st.st_ino != self._inode or st.st_size < self._offset):
            self.stale = True  # replaced or emptied: what was seeded is of another run
            return False
        if st.st_size == self._offset:
            return False
        try:
            if self._events is None:
                self._events = JobEventLog(self.path)
                state, _ = self._events.__getstate__()  # the bindings' pickling hooks: a reader's offset
                self._events.__setstate__((state, self._offset))
            changed = False
            for event in self._events.events(stop_after=-1):  # -1: 0 may wait a whole second
                changed |= self._apply(event)
            self.version += changed
            self._offset = self._events.__getstate__()[1]
        except (OSError, HTCondorException):
            self.stale = True
            return False
        self._inode = st.st_ino
        return changed

    def _apply(self, event) -> bool:
        T = JobEventType
        key, kind, now = (event.cluster, event.proc), event.type, event.timestamp
        job = self.jobs.get(key)
        if kind == T.SUBMIT:
            if job is not None or event.cluster <= 0:
                return False  # seen already, or a NOOP node's made-up job
            job = self.jobs[key] = {**self.attrs, "ClusterId": event.cluster, "ProcId": event.proc,
                                    "JobStatus": 1, "QDate": now, "EnteredCurrentStatus": now}
            notes = event.get("LogNotes") or ""
            if notes.startswith("DAG Node: "):
                job["DAGNodeName"] = notes.removeprefix("DAG Node: ")
            return True
        if job is None:
            return False
        if kind in (T.JOB_TERMINATED, T.JOB_ABORTED):
            del self.jobs[key]  # it leaves the queue
            return True
        status = _STATUS_AFTER.get(kind)
        if status is None:
            return False
        if kind == T.EXECUTE:
            job["JobCurrentStartDate"] = now
        elif kind == T.JOB_EVICTED and job.get("JobCurrentStartDate"):
            job["RemoteWallClockTime"] = float(job.get("RemoteWallClockTime") or 0) + now - job["JobCurrentStartDate"]
        if kind == T.JOB_HELD:
            job["HoldReason"] = event.get("HoldReason") or ""
        job["JobStatus"], job["EnteredCurrentStatus"] = status, now
        return True


_STATUS_AFTER = {JobEventType.EXECUTE: 2, JobEventType.JOB_EVICTED: 1, JobEventType.JOB_HELD: 5,
                 JobEventType.JOB_RELEASED: 1, JobEventType.JOB_SUSPENDED: 7, JobEventType.JOB_UNSUSPENDED: 2,
                 JobEventType.SHADOW_EXCEPTION: 1}
"""The JobStatus an event leaves its job in (condor_watch_q's table); TERMINATED and ABORTED
take the job out of the queue."""
