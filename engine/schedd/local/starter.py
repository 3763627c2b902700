"""The embedded condor_starter: a small process that owns a running job instead of the schedd.

HTCondor's schedd does not own a running job: a starter does, so a schedd restart reconnects to
running jobs and collects the ones that finished meanwhile instead of running them again.  This
file holds both programs of that split, standard library only, so that they start fast:

* the spawner, ``python -I -S starter.py SCHEDD_PID SOCKET_FD``, which the schedd daemon starts
  once.  It keeps starters forked ahead of need (a small process forks far faster than the daemon,
  and no fork is then between a request and its job's start) and dies with the daemon
  (``PR_SET_PDEATHSIG``); a starter running a job does not.
* the starters, waiting on the socket the schedd shares with all of them (``SOCK_SEQPACKET``: each
  request, one JSON object, goes to exactly one starter).  A starter supervises one job at a time:
  it creates and locks the run's record file, writes the job and machine ads, starts the job in
  its own session and process group from an argument list (never a shell string), waits for it as
  the child subreaper of everything the job starts, kills what the job leaves behind, records the
  exit status, CPU usage and times, and only then tells the schedd (a message on the socket).  It
  then waits for the next request, warm; one whose schedd is gone exits instead.

To stop a job, the schedd writes the request (``hold``, ``remove``, ``vacate`` or ``kill``) to the
run's control file and sends the starter SIGUSR1: the job's kill signal (to its process group; to
a scheduler universe job's own process, as the schedd signals DAGMan), then SIGKILL after the
grace time (JobMaxVacateTime), a timer the starter keeps across a schedd restart.  A stale signal
finds no control file for the run at hand and is ignored.

The record file (``spool/<cluster>.<proc>.<run>.starter``) is locked (``flock``) by its starter
for as long as some process of the job lives.  A new schedd therefore knows, from the file alone,
whether a run started (a ``started`` line), finished (an ``exited`` line), and whether its job's
processes may still run (the lock is held).  Its lines, which the notifications repeat after the
job id::

    started STARTER_PID JOB_PID START_TIME
    exited WAIT_STATUS USER_CPU SYSTEM_CPU END_TIME WALL_SECONDS VACATED
    failed HOLD_REASON_CODE HOLD_REASON_SUBCODE MESSAGE

The record is written with single ``write`` calls before the schedd hears of it; like the job
queue (SQLite in WAL mode, ``synchronous=NORMAL``), it survives the crash of any process.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import socket
import sys
import time

STOP = signal.SIGUSR1  # "read your run's control file"
STOP_REQUESTS = ("vacate", "remove", "hold", "kill")  # the job's KillSig, RemoveKillSig, HoldKillSig; SIGKILL now
IDLE_STARTERS = 2  # waiting at any time, so that no fork is between a request and its job's start
IDLE_TIMEOUT_S = 60  # a starter left waiting this long (after a burst) exits
MAX_REQUEST_BYTES = 1 << 17  # a larger request goes through a file in the spool
# HTCondor's HoldReasonCodes for a job that could not start (the subcode is the errno)
HOLD_CODE_START_FAILED = 6  # FailedToCreateProcess
HOLD_CODE_OPEN_OUTPUT = 7  # UnableToOpenOutput
HOLD_CODE_OPEN_INPUT = 8  # UnableToOpenInput
HOLD_CODE_IWD = 14  # IwdError

# What a starter tells the spawner through its pipe.
_TAKEN, _WAITING, _LEFT, _HUNG_UP = b"t", b"w", b"l", b"h"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_prctl = None


# ------------------------------------------------------------------------------------ the record

class Record:
    """What a run's record file says: whether it started, how it ended, and whether its starter
    still holds the file (some process of the job may live)."""

    __slots__ = ("starter_pid", "job_pid", "start_time", "exit", "failed", "hold_code", "alive")

    def __init__(self) -> None:
        self.starter_pid: int | None = None
        self.job_pid: int | None = None
        self.start_time: float | None = None
        self.exit: Exit | None = None
        self.failed: str | None = None
        self.hold_code = (HOLD_CODE_START_FAILED, 0)  # the HoldReasonCode and subcode of a failed start
        self.alive = False


class Exit:
    """A job's end as its starter saw it: the wait status, CPU seconds, when it ended, how long it
    ran, and whether the schedd had asked the starter to stop it before it ended."""

    __slots__ = ("status", "user_cpu", "system_cpu", "end_time", "wall", "vacated")

    def __init__(self, status: int, user_cpu: float, system_cpu: float, end_time: float, wall: float,
                 vacated: bool) -> None:
        self.status = status
        self.user_cpu = user_cpu
        self.system_cpu = system_cpu
        self.end_time = end_time
        self.wall = wall
        self.vacated = vacated

    def fields(self) -> str:
        return (f"{self.status} {self.user_cpu!r} {self.system_cpu!r} {self.end_time!r} {self.wall!r} "
                f"{int(self.vacated)}")

    @classmethod
    def parse(cls, fields: list[str]) -> Exit:
        status, user, system, end, wall, vacated = fields
        return cls(int(status), float(user), float(system), float(end), float(wall), vacated == "1")


def apply_line(record: Record, kind: str, rest: str) -> None:
    """Fold one record line (or notification, without its job id) into ``record``; ValueError
    for a line that is not one."""
    if kind == "started":
        starter, job, start = rest.split()
        record.starter_pid, record.job_pid, record.start_time = int(starter), int(job), float(start)
    elif kind == "exited":
        record.exit = Exit.parse(rest.split())
    elif kind == "failed":  # "CODE SUBCODE reason"; a record of an older starter holds the reason only
        coded = re.match(r"(\d+) (\d+) (.*)\Z", rest, re.DOTALL)
        record.failed = coded[3] if coded else rest
        record.hold_code = (int(coded[1]), int(coded[2])) if coded else (HOLD_CODE_START_FAILED, 2)
    else:
        raise ValueError(f"not a starter's line: {kind} {rest}")


def read_record(path: str) -> Record | None:
    """The record at ``path``, None if there is none; ``alive`` tells whether its starter holds it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        record = Record()
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            record.alive = True
        text = b""
        while chunk := os.read(fd, 65536):
            text += chunk
    finally:
        os.close(fd)
    for line in text.decode("utf-8", "replace").splitlines():
        kind, _, rest = line.partition(" ")
        try:
            apply_line(record, kind, rest)
        except ValueError:
            continue  # a line cut short by a full disk: as if it were not there
    return record


def control_file(record: str) -> str:
    """Where the schedd writes a stop request for the run whose record is ``record``."""
    return record + ".stop"


# ------------------------------------------------------------------------------------ the spawner

def main(argv: list[str]) -> int:
    """The spawner: keep :data:`IDLE_STARTERS` starters waiting for requests on the socket the
    schedd gave us (``argv[2]``, a file descriptor)."""
    schedd, sock = int(argv[1]), socket.socket(fileno=int(argv[2]))
    _prctl_call(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())  # STOP must reach the starters, and jobs start with none blocked
    if os.getppid() != schedd:
        return 0  # the schedd died before we could ask to die with it
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # starters are reaped by the kernel
    news, tell = os.pipe()
    import gc
    gc.freeze()  # what the starters share with the spawner stays shared after the fork
    waiting = 0
    while True:
        while waiting < IDLE_STARTERS:
            try:
                pid = os.fork()
            except OSError:
                time.sleep(0.1)  # out of processes for now: the requests wait in the socket
                continue
            if pid == 0:
                os.close(news)
                _starter(sock, tell, os.getppid())
            waiting += 1
        said = os.read(news, 4096)
        if _HUNG_UP in said:
            return 0
        waiting += said.count(_WAITING) - said.count(_TAKEN) - said.count(_LEFT)


def _starter(sock: socket.socket, tell: int, spawner: int) -> None:
    """A starter: one run after another, until the schedd hangs up or it is left idle; never
    returns.  While it waits it dies with the spawner, so that a schedd that died and the one that
    replaces it agree whether a run began: a record exists exactly for the runs that go on."""
    global _waiting
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        # Installed once: they act on the run at hand (_run), if any; a stop request that comes
        # too late for its run finds none.
        signal.signal(STOP, _on_stop)
        signal.signal(signal.SIGALRM, _on_alarm)
        _prctl_call(_PR_SET_CHILD_SUBREAPER, 1)
        while True:
            _prctl_call(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != spawner:
                return  # the spawner, so the schedd, is gone
            # A blocking recv wakes one waiting starter per request (a poll would wake them all).
            _waiting = True
            signal.alarm(int(IDLE_TIMEOUT_S))
            try:
                message = sock.recv(MAX_REQUEST_BYTES)
            except _IdleTooLong:
                os.write(tell, _LEFT)
                return
            signal.alarm(0)
            _waiting = False
            if not message:
                os.write(tell, _HUNG_UP)
                return
            os.write(tell, _TAKEN)
            request = json.loads(message)
            if "spooled" in request:  # too large for one message: the schedd wrote it to a file
                spooled = request["spooled"]
                with open(spooled, "rb") as f:
                    request = json.loads(f.read())
                os.unlink(spooled)
            try:
                fd = _create_record(request["record"])
            except OSError as e:
                _notify(sock, f"failed {request['key']} {_error_from(request)}: cannot create "
                              f"{request['record']}: {e.strerror}")
                continue
            _prctl_call(_PR_SET_PDEATHSIG, 0)
            if os.getppid() != spawner:
                return  # the spawner died first: the record stays empty, as for a run never started
            try:
                Run(request, fd, sock).run()
            finally:
                os.close(fd)  # the job's processes are gone: its record is free
            if os.getppid() != spawner:
                return  # the schedd that asked for the run is gone: no more runs for this starter
            try:
                os.write(tell, _WAITING)
            except BrokenPipeError:
                return
    except BaseException:
        import traceback
        traceback.print_exc()  # to the schedd's log; the schedd sees a starter gone without an exit
    finally:
        os._exit(0)


class _IdleTooLong(Exception):
    pass


_run: Run | None = None  # the run this starter supervises now, for the signal handlers
_waiting = False  # whether it waits for a request, for as long as IDLE_TIMEOUT_S


def _on_stop(signum: int, frame) -> None:
    if _run is not None:
        _run._stop_requested(signum, frame)


def _on_alarm(signum: int, frame) -> None:
    """The grace time of the run at hand is over, or the starter waited too long for a request
    (a late alarm of a run that is over does nothing)."""
    if _run is not None:
        _run._grace_over(signum, frame)
    elif _waiting:
        raise _IdleTooLong()


def _create_record(path: str) -> int:
    """Create and lock the run's record file, never following a link; one left by a crash goes."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        os.unlink(path)
        fd = os.open(path, flags, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _notify(sock: socket.socket, line: str) -> None:
    """Tell the schedd, if it still listens (one message a line)."""
    try:
        sock.send(line.encode("utf-8", "replace"))
    except OSError:
        pass  # the schedd is gone; a new one reads the record


def _prctl_call(option: int, value: int) -> None:
    global _prctl
    if _prctl is None:
        import ctypes
        _prctl = ctypes.CDLL(None, use_errno=True).prctl
    _prctl(option, value, 0, 0, 0)


# ------------------------------------------------------------------------------------ one run

class StartError(Exception):
    """The job could not be started; the message is the hold reason, as HTCondor's starter words
    it, and ``code`` and ``subcode`` its HoldReasonCode and HoldReasonSubCode (an errno)."""

    def __init__(self, message: str, code: int = HOLD_CODE_START_FAILED, subcode: int = 0) -> None:
        super().__init__(message)
        self.code, self.subcode = code, subcode


class Run:
    """One job under a starter, from its start until every process of it is gone and its exit
    is recorded."""

    def __init__(self, request: dict, record_fd: int, sock: socket.socket):
        self.request = request
        self.key = request["key"]
        self.control = control_file(request["record"])
        self.record_fd = record_fd
        self.sock = sock
        self.job = 0
        self.vacated = False
        self.armed = False

    def run(self) -> None:
        global _run
        try:
            self.job = self._spawn()
        except StartError as e:
            self._record("failed", f"{e.code} {e.subcode} {e}")
            return
        start, clock = time.time(), time.monotonic()
        self._record("started", f"{os.getpid()} {self.job} {start!r}")
        _run = self
        self._stop_requested(STOP, None)  # a request made before the schedd knew whom to signal
        while True:
            pid, status, usage = os.wait4(-1, 0)
            if pid == self.job:
                break
        end, wall = time.time(), time.monotonic() - clock
        self._reap_the_rest()
        for path in (self.request["ad_file"], self.request.get("machine_ad_file")):
            if path:
                try:
                    os.unlink(path)  # the job's, not needed once it is gone
                except OSError:
                    pass
        _run = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        exit = Exit(status, usage.ru_utime, usage.ru_stime, end, wall, self.vacated)
        self._record("exited", exit.fields())

    def _spawn(self) -> int:
        """Write the ads, open the job's files and start it; StartError says what failed."""
        r = self.request
        error_from = _error_from(r)
        for path, text in ((r["ad_file"], r["job_ad"]), (r.get("machine_ad_file"), r.get("machine_ad"))):
            if path:
                try:
                    _write_file(path, text.encode("utf-8"))
                except OSError as e:
                    raise StartError(f"{error_from}: cannot write '{path}': {e.strerror}", subcode=e.errno) from None
        os.umask(r["umask"])
        try:
            os.chdir(r["cwd"])
        except OSError as e:
            raise StartError(f"{error_from}: cannot enter the job's initial directory "
                             f"'{r['cwd']}': {e.strerror}", HOLD_CODE_IWD, e.errno) from None
        fds: list[int] = []
        try:
            for what, path, flags, code in (
                    ("input", r["stdin"], os.O_RDONLY, HOLD_CODE_OPEN_INPUT),
                    ("output", r["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, HOLD_CODE_OPEN_OUTPUT),
                    ("error", r["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, HOLD_CODE_OPEN_OUTPUT)):
                if what == "error" and path == r["stdout"]:
                    fds.append(fds[1])  # output and error to one file, opened once
                    continue
                try:
                    fds.append(os.open(path, flags | os.O_CLOEXEC, 0o666))
                except OSError as e:
                    # as 23.9.6's starter words it, with the errno as the subcode
                    raise StartError(f"{error_from}: Failed to open '{path}' as standard {what}: "
                                     f"{e.strerror} (errno {e.errno})", code, e.errno) from None
            argv = r["argv"]
            try:
                return os.posix_spawn(_which(argv[0], r["env"].get("PATH", "")), argv, r["env"],
                                      file_actions=[(os.POSIX_SPAWN_DUP2, fd, n) for n, fd in enumerate(fds)],
                                      setsid=True, setsigmask=(),
                                      setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, STOP))
            except OSError as e:
                raise StartError(f"{error_from}: Failed to execute '{argv[0]}': {e.strerror}",
                                 subcode=e.errno) from None
        finally:
            for fd in set(fds):
                os.close(fd)

    def _record(self, kind: str, rest: str) -> None:
        """The line to the record, then to the schedd.  A full disk is waited out: the starter
        keeps its lock (the schedd sees it alive) until the line is written."""
        data = f"{kind} {rest}\n".encode("utf-8", "replace")
        while True:
            try:
                os.write(self.record_fd, data)
                break
            except OSError:
                time.sleep(1)
        _notify(self.sock, f"{kind} {self.key} {rest}")

    def _stop_requested(self, signum: int, frame) -> None:
        """The schedd asks the job to stop: its kill signal now, SIGKILL after the grace time."""
        try:
            with open(self.control, encoding="ascii") as f:
                request = f.read().strip()
        except (OSError, ValueError):
            return
        if request not in STOP_REQUESTS:
            return
        self.vacated = True
        if request == "kill":
            self._kill_everything()
            return
        try:
            signal_to = os.kill if self.request.get("kill_signal_to") == "process" else os.killpg
            signal_to(self.job, self.request["kill_signals"][request])
        except ProcessLookupError:
            pass
        grace = self.request["grace"]
        if grace is not None and not self.armed:
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, max(grace, 0.001))

    def _grace_over(self, signum: int, frame) -> None:
        self._kill_everything()

    def _kill_everything(self) -> None:
        """SIGKILL the job's process group and every process left to us (the subreaper)."""
        try:
            os.killpg(self.job, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _reap_the_rest(self) -> None:
        """The job has exited: what it left behind is killed, as HTCondor's starter kills a job's
        process family, and reaped, so that no process of the job outlives its run."""
        try:
            os.killpg(self.job, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                self._kill_everything()
                try:
                    os.waitpid(-1, 0)
                except ChildProcessError:
                    return


def _error_from(request: dict) -> str:
    """How a hold reason of a start that fails begins: HTCondor names the slot ("Error from
    slot1@host"); a job with no slot (scheduler universe), or a request of an older schedd, says starter."""
    return f"Error from {request.get('error_from', 'starter')}"


def _write_file(path: str, data: bytes) -> None:
    """Create ``path`` (never following a link) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _children() -> list[int]:
    """This process's children (orphans of the job included, as their subreaper)."""
    pids = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                pids.extend(int(p) for p in f.read().split())
    except OSError:
        pass
    return pids


def _which(command: str, path: str) -> str:
    """The program to run: a name without a slash is looked up in the job's PATH, as Popen does."""
    if "/" in command:
        return command
    for directory in path.split(os.pathsep):
        candidate = os.path.join(directory or ".", command)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return command  # posix_spawn then fails with "No such file or directory"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
