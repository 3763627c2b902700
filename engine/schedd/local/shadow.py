"""The schedd's side of a running job, as HTCondor's shadow is: the starter's request made from the
job ad, the spawner that forks starters (:mod:`engine.schedd.local.starter`), and the handle the
schedd keeps on each run, also on one it reconnected to after a restart.

The job runs from an argument list in its initial directory (its scratch directory too: the
embedded schedd shares the submitter's file system, as ``should_transfer_files = NO`` does), with
its environment and its input, output and error files.  ``_CONDOR_JOB_AD`` names a file holding
the job's ClassAd and, for a job that runs on a slot, ``_CONDOR_MACHINE_AD`` one holding the
slot's machine ad (GLIDEIN_CMSSite and the rest), as on a real execute node; both in the old
ClassAd syntax, one ``Name = value`` a line, as condor_starter writes ``.job.ad`` and
``.machine.ad``: job scripts grep them (``grep ^ClusterId $_CONDOR_JOB_AD``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

import classad2

from engine.schedd.local import starter
from engine.schedd.local.starter import Record, read_record
from engine.schedd.local.submit import UNIVERSES, parse_raw_arguments, parse_raw_environment

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
STARTER_PROGRAM = starter.__file__
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
_SOCKET_BUFFER = 1 << 22  # the requests of a large scheduling pass, as far as the system allows
_WAIT_FOR_STARTED_S = 5.0  # a live starter's record gets its started line within this


@dataclass(slots=True)
class JobProcess:
    """One run of a job: its record file and, once the starter said so, the starter's and the
    job's pids.  ``pidfd`` watches its starter from its start (or its reconnection after a
    restart), since a starter killed sends no news on the spawner's socket (-1 before the starter
    is known, and again once the run is over and it is closed); ``stop`` is the last stop request
    made of it, and ``killed`` says the schedd killed the job itself, its starter out of reach."""

    key: tuple[int, int]
    record: str
    starter_pid: int | None = None
    job_pid: int | None = None
    started: float | None = None
    pidfd: int = -1
    peak_rss_kb: int = 0
    stop: str | None = None
    signals: list[str] = field(default_factory=list)
    killed: bool = False


class Spawner:
    """The spawner process and the socket the schedd shares with its starters: spawn requests
    out, one message each; the starters' news in, one message a line."""

    def __init__(self, log_path: str, spool: str):
        self.spool = spool
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for sock in (self.sock, theirs):
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
                try:
                    sock.setsockopt(socket.SOL_SOCKET, option, _SOCKET_BUFFER)
                except OSError:
                    pass  # the system's limit applies
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", STARTER_PROGRAM, str(os.getpid()), str(theirs.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, pass_fds=(theirs.fileno(),),
                start_new_session=True)
        theirs.close()
        self.sock.setblocking(False)
        self.fd = self.sock.fileno()
        self.pidfd = os.pidfd_open(self.process.pid)  # readable if the spawner dies

    def spawn(self, requests: list[dict]) -> None:
        """Hand each request to a waiting starter (blocking while none is free to take more)."""
        for request in requests:
            message = json.dumps(request, separators=(",", ":")).encode()
            if len(message) > starter.MAX_REQUEST_BYTES:
                path = os.path.join(self.spool, f"{request['key']}.request")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                with open(fd, "wb") as f:
                    f.write(message)
                message = json.dumps({"spooled": path}).encode()
            while True:
                try:
                    self.sock.send(message)
                    break
                except BlockingIOError:
                    select.select([], [self.fd], [])

    def read(self) -> list[tuple[str, str, str]]:
        """The news that arrived, as (kind, job id, rest)."""
        out = []
        while True:
            try:
                message = self.sock.recv(65536)
            except BlockingIOError:
                break
            if not message:
                break
            kind, _, rest = message.decode("utf-8", "replace").partition(" ")
            key, _, rest = rest.partition(" ")
            out.append((kind, key, rest))
        return out

    def close(self) -> None:
        """End the spawner: the starters waiting for work see the socket close; those running a
        job live on, and a later schedd reconnects to them."""
        self.sock.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.pidfd)


def request(ad: classad2.ClassAd, record: str, ad_file: str, machine_ad: str | None,
            umask: int, grace: float | None, tools: str | None = None, slot: str | None = None) -> dict:
    """What the starter needs to run the job of ``ad`` (as committed when it was set running),
    writing it to ``ad_file`` and, on a slot, ``machine_ad`` (:func:`ad_file_text`) beside it; the
    HTCondor tools of ``tools`` come last on its PATH, so that a PATH of the job's own wins.
    ``slot``: the slot's name, which begins the hold reasons of a start that fails, as HTCondor's
    ("Error from slot1@host: ...")."""
    if "Arguments" in ad:  # the new syntax, stored in its raw form
        argv = [ad["Cmd"], *parse_raw_arguments(ad["Arguments"])]
    else:  # the old syntax, blank-separated, its quotes unescaped as condor_submit stores them
        argv = [ad["Cmd"], *str(ad.get("Args") or "").split()]
    env = parse_raw_environment(ad["Environment"]) if "Environment" in ad else {}
    env.setdefault("PATH", DEFAULT_PATH)
    if tools:
        env["PATH"] = f"{env['PATH']}:{tools}" if env["PATH"] else tools
    env["_CONDOR_JOB_AD"] = ad_file
    machine_file = None
    if machine_ad is not None:
        machine_file = machine_ad_file(ad_file)
        env["_CONDOR_MACHINE_AD"] = machine_file
    env["_CONDOR_SCRATCH_DIR"] = ad["Iwd"]
    env["_CONDOR_JOB_IWD"] = ad["Iwd"]
    env["CONDOR_ID"] = f"{ad['ClusterId']}.{ad['ProcId']}"  # how condor_dagman learns its own job id
    if "x509userproxy" in ad:  # as HTCondor's starter tells a job where its proxy is (here: not copied)
        env["X509_USER_PROXY"] = ad["x509userproxy"]
    kill = signal_number(ad.get("KillSig"), signal.SIGTERM)
    return {
        "key": f"{ad['ClusterId']}.{ad['ProcId']}", "record": record, "argv": argv, "env": env,
        "cwd": ad["Iwd"], "stdin": os.path.join(ad["Iwd"], ad["In"]),
        "stdout": os.path.join(ad["Iwd"], ad["Out"]), "stderr": os.path.join(ad["Iwd"], ad["Err"]),
        "ad_file": ad_file, "job_ad": ad_file_text(ad), "machine_ad_file": machine_file, "machine_ad": machine_ad,
        "umask": umask, "grace": grace, "error_from": slot or "starter",
        "kill_signals": {"vacate": kill, "remove": signal_number(ad.get("RemoveKillSig"), kill),
                         "hold": signal_number(ad.get("HoldKillSig"), kill)},
        # HTCondor's schedd signals a scheduler universe job's own process: DAGMan, which then
        # kills its scripts itself (with SIGKILL), rather than they dying of its remove_kill_sig.
        "kill_signal_to": "process" if ad.get("JobUniverse") == UNIVERSES["scheduler"] else "group",
    }


def ad_file_text(ad: classad2.ClassAd) -> str:
    """An ad as condor_starter writes the job's and the machine's ad files (``fPrintAd``): the old
    ClassAd syntax, one ``Name = value`` a line, which classad2.parseOne reads back."""
    return ad.printOld()


def machine_ad_file(ad_file: str) -> str:
    """Where the starter writes the machine ad of the job whose ad is in ``ad_file``."""
    base = ad_file[:-len(".job.ad")] if ad_file.endswith(".job.ad") else ad_file
    return base + ".machine.ad"


def remove_files(*paths: str) -> None:
    """Remove a finished run's files (any may be absent)."""
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def settled_record(path: str) -> Record | None:
    """The record at ``path``; a live starter that has not yet said it started is given a moment
    (it was forked just before the last schedd died)."""
    deadline = time.monotonic() + _WAIT_FOR_STARTED_S
    while True:
        record = read_record(path)
        if record is None or not record.alive or record.starter_pid is not None or record.failed:
            return record
        if time.monotonic() > deadline:
            return record
        time.sleep(0.01)


def reconnect(proc: JobProcess) -> bool:
    """Watch a live starter (as it starts its job, or again after a schedd restart): a pidfd on
    it, opened while its record is still locked, so that the pid cannot be another process's.
    False if it is gone or its run is over."""
    try:
        pidfd = os.pidfd_open(proc.starter_pid)
    except ProcessLookupError:
        return False
    record = read_record(proc.record)
    if record is None or not record.alive:
        os.close(pidfd)
        return False
    proc.pidfd = pidfd
    return True


def ask(proc: JobProcess, request: str) -> None:
    """Ask the starter to stop its job (one of :data:`starter.STOP_REQUESTS`); a run that has not
    said it started yet gets the request when it does.  ``kill`` overrides the others."""
    if proc.stop == "kill":
        request = "kill"
    proc.stop = request
    if proc.starter_pid is None:
        return
    proc.signals.append(request)
    path = starter.control_file(proc.record)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(fd, "w", encoding="ascii") as f:
        f.write(request)
    try:
        if proc.pidfd >= 0:
            signal.pidfd_send_signal(proc.pidfd, starter.STOP)
        else:
            os.kill(proc.starter_pid, starter.STOP)
    except ProcessLookupError:
        pass


def kill_job(proc: JobProcess) -> None:
    """SIGKILL the job's process group, for when its starter cannot be asked to (its control file
    cannot be written); the starter then reports the exit, which counts as an eviction."""
    proc.killed = True
    if proc.job_pid is not None:
        try:
            os.killpg(proc.job_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def orphans(ad_file: str) -> list[int]:
    """Processes still running a job whose starter died: those whose environment names its ad file."""
    marker = f"_CONDOR_JOB_AD={ad_file}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def kill_orphans(ad_file: str) -> None:
    for pid in orphans(ad_file):
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def signal_number(name: str | None, default: int) -> int:
    """A submit file's kill signal (``SIGUSR1``, ``USR1`` or ``10``) as a number."""
    if not name:
        return default
    name = str(name).strip().upper()
    if name.isascii() and name.isdigit():
        return int(name) if 0 < int(name) < signal.NSIG else default
    return int(getattr(signal, name if name.startswith("SIG") else "SIG" + name, default))


def memory_kb(pid: int) -> tuple[int, int]:
    """Resident and virtual memory of a process and all its descendants, in KB (0, 0 once gone)."""
    rss = vsize = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as f:
                size, resident = f.read().split()[:2]
            vsize += int(size) * _PAGE_KB
            rss += int(resident) * _PAGE_KB
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    pending.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return rss, vsize
