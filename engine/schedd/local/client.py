"""The Schedd API over the embedded schedd daemon's socket, starting the daemon when needed.

Submitting works as condor_submit does: the client asks the schedd for a cluster number,
builds the job ads here (relative paths and ``getenv`` are the submitter's), and sends them.
"""

from __future__ import annotations

import fcntl
import getpass
import os
import select
import shlex
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import classad2

from engine.schedd.api import ActResult, JobAction, JobSpec, ScheddError, SubmitResult
from engine.schedd.local import columns, protocol
from engine.state import StateDir, StateDirError, check_state, full_disk

DAEMON_MODULE = "engine.schedd.local.daemon"
_RETRIED = {"ping", "query", "query_values", "query_columns", "history", "analyze", "new_cluster", "submit_ads"}
_CHANGES = {"submit_ads": "submit", "act": None, "edit": "edit"}
_COMMANDS = {"Hold": "hold", "Release": "release", "Remove": "rm", "RemoveX": "rm -forcex"}  # as the user typed it
TIMEOUT_KNOB = "CRABTUI_SCHEDD_TIMEOUT"
DEFAULT_TIMEOUT = 20.0  # condor_q's Q_QUERY_TIMEOUT
MAX_TIMEOUT = (2**31 - 1) // 1000  # poll() takes its timeout in int milliseconds


class _NoAnswer(Exception):
    """The daemon made no progress at all for a whole timeout: stopped, or hung."""


class LocalScheddClient:
    """A connection to the embedded schedd of one state directory."""

    def __init__(self, state: StateDir, *, autostart: bool = True, daemon_args: Sequence[str] = (),
                 patient: bool = False):
        """``patient``: wait for a stopped or hung schedd for ever (its own DAGMan, whose submit given
        up on could still be queued once the schedd goes on, and then again by a retry)."""
        self.state = state
        self.autostart = autostart
        self.patient = patient
        self.daemon_args = list(daemon_args)
        self._sock: socket.socket | None = None
        self._peer: int | None = None
        self._old_daemon = False  # one that answers query_values only row by row

    # -------------------------------------------------------------- the Schedd API

    def submit(self, description: str, *, count: int = 0, itemdata: Iterable[dict[str, str]] | None = None,
               submit_file: str | None = None, cwd: str | None = None,
               prepend: Mapping[str, str] | None = None, append: Mapping[str, str] | None = None) -> SubmitResult:
        from engine.schedd.local.submit import SubmitDescription, build_job_ads  # htcondor2 loads slowly

        cwd = os.path.abspath(cwd or os.getcwd())
        desc = SubmitDescription(description, submit_file or "<submit description>", cwd, prepend, append)
        cluster = self._call("new_cluster")
        ads = build_job_ads(desc, cluster, count=count, itemdata=itemdata, now=int(time.time()))
        return SubmitResult(*self._call("submit_ads", cluster=cluster, ads=protocol.ads_to_wire(ads)))

    def query(self, constraint: str = "true", projection: Sequence[str] = ()) -> list[classad2.ClassAd]:
        return protocol.ads_from_wire(self._call("query", constraint=constraint, projection=list(projection)))

    def factories(self, constraint: str = "true") -> list[classad2.ClassAd]:
        return protocol.ads_from_wire(self._call("factories", constraint=constraint))

    def query_values(self, constraint: str, projection: Sequence[str]) -> list[dict[str, Any]]:
        """Matching jobs as plain mappings of the projected attributes that are set (for tables)."""
        if not self._old_daemon:
            try:
                return columns.decode(self._call("query_columns", constraint=constraint, projection=list(projection)),
                                      projection)
            except ScheddError as e:
                if "unknown request" not in str(e):
                    raise
                self._old_daemon = True  # started by an older crabtui: asked row by row
        rows = self._call("query_values", constraint=constraint, projection=list(projection))
        return [{a: v for a, v in zip(projection, row) if v is not None} for row in rows]

    def act(self, action: JobAction | str, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        result = self._call("act", action=JobAction(action).value, job_spec=_wire_spec(job_spec), reason=reason)
        # A daemon started by an older crabtui answers without the counts: none, then.
        return ActResult(result["changed"], tuple(result["refused"]), not_found=result.get("not_found", 0),
                         bad_status=result.get("bad_status", 0),
                         already_done=result.get("already_done", 0), job_ads=result.get("job_ads", -1))

    def summary(self, constraint: str = "false") -> dict[str, int]:
        return self._call("summary", constraint=constraint)

    def owner(self) -> str:
        """The embedded schedd runs jobs as the user who runs it: us."""
        return getpass.getuser()

    @property
    def schedd_log(self) -> str | None:
        """The embedded schedd starts every DAGMan it queues, or holds it saying why: no log to read."""
        return None

    def edit(self, job_spec: JobSpec, attr: str | Mapping[str, str], value: str | None = None) -> int:
        attrs = {attr: value} if isinstance(attr, str) else dict(attr)
        return self._call("edit", job_spec=_wire_spec(job_spec), attrs=attrs)

    def history(self, constraint: str = "true", projection: Sequence[str] = (), match: int = -1) -> list[classad2.ClassAd]:
        return protocol.ads_from_wire(self._call("history", constraint=constraint, projection=list(projection),
                                                 match=match))

    def analyze(self, job: str) -> str:
        return self._call("analyze", job=job)

    # -------------------------------------------------------------- the daemon

    def ping(self) -> dict[str, Any]:
        return self._call("ping")

    def sites(self, info: Mapping[str, Any] | None = None) -> dict[str, dict[str, int]]:
        """Each site of the embedded pool with its largest slot (``cpus``, ``memory``), as the
        daemon says in ``info`` (its ping, asked if not given); a daemon that does not say runs
        another crabtui's code, and is named with the way out."""
        info = self.ping() if info is None else info
        sites = info.get("sites")
        if isinstance(sites, dict) and all(isinstance(size, dict) and isinstance(size.get("cpus"), int)
                                           and isinstance(size.get("memory"), int) for size in sites.values()):
            return sites
        raise ScheddError(f"the schedd daemon of {self.state.path} (pid {info.get('pid', '?')}) does not say which "
                          f"sites and slots its pool has: it runs another version of crabtui. Stop it with 'crabtui "
                          f"--state-dir {shlex.quote(self.state.path)} pool stop' (its jobs run again when it restarts) and submit "
                          f"again.")

    def pool_file_changed(self, info: Mapping[str, Any]) -> str | None:
        """What to say when ``pool.toml`` was written, changed or removed after the daemon that
        answered ``info`` (its ping) read its pool, which it keeps until it restarts."""
        if "pool_file" not in info:  # a daemon of an older crabtui: it does not say
            return None
        from engine.schedd.local.pool import pool_file_stamp

        if pool_file_stamp(self.state.pool_config) == info["pool_file"]:
            return None
        return (f"{self.state.pool_config} changed after the schedd daemon (pid {info.get('pid', '?')}) read it, "
                f"and it still runs the sites and slots it read then; 'crabtui --state-dir {shlex.quote(self.state.path)} pool "
                f"stop' (its running jobs run again) makes the next command start it with the file as it is now.")

    def running(self) -> bool:
        """Whether a daemon answers, without starting one."""
        try:
            self._connect(autostart=False)
            return True
        except ScheddError:
            return False

    def shutdown(self) -> bool:
        """Stop the daemon if it runs; wait until it has let go of its lock."""
        if not self.running():
            return False
        pid = self._call("ping")["pid"]
        try:
            self._call("shutdown")
        except ScheddError:
            pass  # the daemon went away before its answer reached us: what was asked
        self.close()
        with open(self.state.lock, "a") as lock:  # blocks until the daemon is gone
            fcntl.flock(lock, fcntl.LOCK_EX)
            fcntl.flock(lock, fcntl.LOCK_UN)
        return bool(pid)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = self._peer = None

    def __enter__(self) -> LocalScheddClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -------------------------------------------------------------- plumbing

    def _call(self, op: str, **args) -> Any:
        """One request.  A request that can safely be made twice is made again, once, to the
        schedd that replaces one that died before it answered (a resent ``submit_ads`` returns
        the first one's result): a schedd crash costs its clients nothing.  A schedd that makes
        no progress at all (stopped, or hung) is given up on, as condor_q gives up on a schedd
        that does not answer; a busy one, however long it takes, is not."""
        request = protocol.encode({"op": op, **args})
        for attempt in range(2 if op in _RETRIED and self.autostart else 1):
            if self._sock is None:
                self._connect(autostart=self.autostart)
            try:
                line = self._exchange(request)
            except _NoAnswer as e:
                self.close()
                raise ScheddError(f"{e}{self._may_have(op, args)}") from None  # not again: it would wait as long
            except OSError as e:
                line, lost = b"", f"lost the connection to the schedd ({e})"
            else:
                lost = "the schedd closed the connection before it answered"
            if line:
                break
            self.close()
            if attempt == 0 and op in _RETRIED and self.autostart:
                self._wait_for_daemon_exit()
        else:
            raise ScheddError(f"{lost}; see {self.state.log}{self._may_have(op, args)}")
        reply = protocol.decode(line)
        if not reply["ok"]:
            raise ScheddError(reply["error"])
        return reply["result"]

    def _may_have(self, op: str, args: Mapping[str, Any]) -> str:
        """For a change the schedd may have committed before it stopped answering: that it may
        have, and how to see whether it did."""
        if op not in _CHANGES:
            return ""
        what = _CHANGES[op] or _COMMANDS[args["action"]]
        spec = args.get("job_spec", args.get("cluster"))
        if isinstance(spec, list):
            jobs = " " + " ".join(str(j) for j in spec)
        elif isinstance(spec, int) or (isinstance(spec, str) and spec.replace(".", "", 1).isdigit()):
            jobs = f" {spec}"
        else:
            jobs = f" -constraint {shlex.quote(spec)}" if spec else ""
        return f"; the {what} may have taken effect, check with: crabtui --state-dir {shlex.quote(self.state.path)} q{jobs}"

    def _exchange(self, request: bytes) -> bytes:
        """Send a request and read its one-line reply (empty if the daemon closed the
        connection), waiting for as long as the daemon makes progress."""
        sock, view, reply = self._sock, memoryview(request), bytearray()
        while view:
            self._await(select.POLLOUT)
            view = view[sock.send(view):]
        while not reply.endswith(b"\n"):
            self._await(select.POLLIN)
            chunk = sock.recv(1 << 20)
            if not chunk:
                return b""
            reply += chunk
        return bytes(reply)

    def _await(self, event: int) -> None:
        """Until the socket is ready for ``event``.  Each timeout with no byte moved, look at the
        daemon: one that is stopped, or used no CPU the whole time, is given up on."""
        poller = select.poll()
        poller.register(self._sock, event)
        if poller.poll(0):
            return  # ready at once, as nearly always: no need to look at the daemon
        timeout = None if self.patient else _timeout()
        cpu = _process_stat(self._peer)[1]
        while not poller.poll(None if timeout is None else timeout * 1000):
            state, now = _process_stat(self._peer)
            if state in ("T", "t"):
                why = "it is stopped"
                todo = f"'kill -CONT {self._peer}' resumes it, 'kill -9 {self._peer}' ends it (the next command starts another)"
            elif state in ("R", "D") or (now is not None and now != cpu):
                cpu = now
                continue  # busy (computing, waiting for a CPU or for its disk): slow, not stuck
            else:
                why = "it used no CPU in that time" if now is not None else "no byte came"
                todo = f"'kill -9 {self._peer}' ends it (the next command starts another)" if self._peer else \
                    f"'crabtui --state-dir {shlex.quote(self.state.path)} pool stop' stops it"
            pid = f" (pid {self._peer})" if self._peer else ""
            raise _NoAnswer(f"the schedd{pid} did not answer in {timeout:g} s: {why}; see {self.state.log}; {todo}")

    def _wait_for_daemon_exit(self, timeout: float = 10.0) -> None:
        """Until the daemon that dropped us has let go of its lock (it is gone, sockets and all),
        so that the request goes again to the next one, not to the dying one's socket."""
        deadline = time.monotonic() + timeout
        with open(self.state.lock, "a") as lock:
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    return
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        return  # still held: let the next attempt find out
                    time.sleep(0.02)

    def _connect(self, autostart: bool) -> None:
        try:
            check_state(self.state)  # never a socket, log or queue someone else could have put there
        except StateDirError as e:
            raise ScheddError(str(e)) from None
        timeout = None if self.patient else _timeout()
        for attempt in range(2):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if timeout is not None:
                # A full backlog (a stopped daemon's, or a busy one's with many clients) holds a
                # blocking connect() until there is room; SO_SNDTIMEO bounds that wait, where a
                # socket timeout would make connect() fail at once (EAGAIN).
                whole = int(timeout)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                                struct.pack("ll", whole, int((timeout - whole) * 1_000_000)))
            try:
                sock.connect(self.state.socket)
            except BlockingIOError:
                sock.close()
                raise ScheddError(f"the schedd did not accept a connection in {timeout:g} s; see {self.state.log}; "
                                  f"'crabtui --state-dir {shlex.quote(self.state.path)} pool status' says whether it runs") from None
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
                if not autostart or attempt:
                    raise ScheddError(f"no schedd is running for {self.state.path}; start it with 'crabtui --state-dir "
                                      f"{self.state.path} pool start'") from None
                self._start_daemon()
                continue
            sock.setblocking(False)
            self._sock = sock
            self._peer = _peer_pid(sock)
            return

    def _start_daemon(self) -> None:
        """Start the daemon detached and wait until it says it serves (or why it could not).

        ``-P``: ``python -m`` would put the working directory first on ``sys.path``, and the daemon
        would import any ``engine`` package found there (another crabtui checkout, an older one)
        instead of this one, which PYTHONPATH names."""
        read_fd, write_fd = os.pipe()
        log_fd = os.open(self.state.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with open(log_fd, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", DAEMON_MODULE, "--state-dir", self.state.path,
                 "--ready-fd", str(write_fd), *self.daemon_args],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(write_fd,), start_new_session=True,
                env={**os.environ, "PYTHONPATH": _project_root() + os.pathsep + os.environ.get("PYTHONPATH", "")})
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as ready:
            answer = ready.readline()
        if answer.startswith(b"error "):
            proc.wait()
            raise ScheddError(answer[6:].decode("utf-8", "replace").strip())
        if answer == b"ready\n":
            return
        if proc.wait() != 3:  # a daemon that could not commit its recovery to a full disk names that
            raise ScheddError(full_disk(self.state.path)
                              or f"the schedd daemon did not start (exit status {proc.returncode}); see {self.state.log}")
        self._wait_for_daemon_serving()  # 3: another client's daemon won the race, and may still be starting

    def _wait_for_daemon_serving(self, timeout: float = 120.0) -> None:
        """Until the daemon holding the lock listens on its socket, or no daemon holds the lock (it
        failed to start: the next connection attempt says so).  A daemon recovering a large queue
        holds the lock for a while before it serves."""
        deadline = time.monotonic() + timeout
        with open(self.state.lock, "a") as lock:
            while time.monotonic() < deadline:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    try:
                        sock.connect(self.state.socket)
                        return
                    except (FileNotFoundError, ConnectionRefusedError):
                        pass
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    return
                except BlockingIOError:
                    time.sleep(0.02)


def _timeout() -> float:
    """Seconds without a byte from the daemon before looking at it (``CRABTUI_SCHEDD_TIMEOUT``)."""
    try:
        value = float(os.environ.get(TIMEOUT_KNOB, DEFAULT_TIMEOUT))
    except ValueError:
        raise ScheddError(f"{TIMEOUT_KNOB}={os.environ[TIMEOUT_KNOB]!r} is not a number of seconds; "
                          f"unset it for {DEFAULT_TIMEOUT:g}") from None
    if not 0 < value <= MAX_TIMEOUT:
        raise ScheddError(f"{TIMEOUT_KNOB}={os.environ[TIMEOUT_KNOB]!r} must be more than 0 seconds and at most "
                          f"{MAX_TIMEOUT}")
    return value


def _peer_pid(sock: socket.socket) -> int | None:
    """The pid of the daemon listening on the socket (Linux), to look at when it does not answer."""
    try:
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
    except (AttributeError, OSError):
        return None
    return pid or None


def _process_stat(pid: int | None) -> tuple[str | None, int | None]:
    """A process's state letter and CPU ticks used (``/proc/PID/stat``), or Nones."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None, None
    return fields[0], int(fields[11]) + int(fields[12])


def _wire_spec(job_spec: JobSpec):
    return job_spec if isinstance(job_spec, (str, int)) else list(job_spec)


def _project_root() -> str:
    """The directory holding the ``engine`` package, so the daemon imports this same code."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
