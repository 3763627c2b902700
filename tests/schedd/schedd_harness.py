"""Helpers for the embedded schedd's tests: waiting on events and processes, and a harness
that owns one daemon (see conftest.py for the fixtures that use them)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import textwrap
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import classad2
import htcondor2

from engine.schedd.api import JobStatus, ScheddError, SubmitResult
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir
from installed import CRABTUI

SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the terminating NUL
WAIT = 15.0  # the longest any single wait may take before the test fails
# The daemon's timers, short for tests: a requeued job (on_exit_remove false) starts again a second
# after its exit rather than at HTCondor's next negotiation cycle (60 s) or queue scan (5 s).
PERIODIC_ENV = {"CRABTUI_PERIODIC_EXPR_INTERVAL": "0.2", "CRABTUI_JOB_MAX_VACATE_TIME": "2",
                "CRABTUI_NEGOTIATOR_INTERVAL": "1", "CRABTUI_SCHEDD_MIN_INTERVAL": "1"}

_ALL_STATE_DIRS: list[StateDir] = []


# ------------------------------------------------------------------------------------ waiting

def wait_for(predicate: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
    """Poll ``predicate`` until it returns something true; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


def describe(event: htcondor2.JobEvent) -> str:
    return f"{event.type.name}({event.cluster}.{event.proc})"


class EventReader:
    """Follows one user log with ``htcondor2.JobEventLog``, remembering every event it read."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        wait_for(lambda: os.path.exists(self.path), f"the user log {self.path} to appear")
        self.log = htcondor2.JobEventLog(self.path)
        self.seen: list[htcondor2.JobEvent] = []

    def wait(self, predicate: Callable[[htcondor2.JobEvent], bool], what: str,
             timeout: float = WAIT) -> htcondor2.JobEvent:
        """The next event (after those already returned) for which ``predicate`` holds; blocks in
        ``JobEventLog.events(stop_after=...)`` until it is written."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                seen = ", ".join(describe(e) for e in self.seen) or "nothing"
                raise AssertionError(f"no {what} in {self.path} within {timeout:.0f} s; the log holds {seen}")
            for event in self.log.events(stop_after=max(1, math.ceil(remaining))):
                self.seen.append(event)
                if predicate(event):
                    return event
                if time.monotonic() > deadline:
                    break

    def wait_type(self, event_type: htcondor2.JobEventType, job: str | None = None,
                  timeout: float = WAIT) -> htcondor2.JobEvent:
        def match(event: htcondor2.JobEvent) -> bool:
            return event.type == event_type and (job is None or f"{event.cluster}.{event.proc}" == job)
        return self.wait(match, f"{event_type.name} event" + (f" for job {job}" if job else ""), timeout)

    def all(self) -> list[htcondor2.JobEvent]:
        """Every event in the log now (read afresh)."""
        return list(htcondor2.JobEventLog(self.path).events(stop_after=0))


def read_events(path: str | os.PathLike[str]) -> list[htcondor2.JobEvent]:
    return list(htcondor2.JobEventLog(os.fspath(path)).events(stop_after=0))


def types_for(events: Iterable[htcondor2.JobEvent], job: str) -> list[htcondor2.JobEventType]:
    """The types of ``job``'s events in order, without IMAGE_SIZE: HTCondor logs one whenever the
    job's measured memory changes, at any moment while it runs, so they are not part of a sequence."""
    return [e.type for e in events
            if f"{e.cluster}.{e.proc}" == job and e.type != htcondor2.JobEventType.IMAGE_SIZE]


# ------------------------------------------------------------------------------------ processes

def process_gone(pid: int) -> bool:
    """Whether ``pid`` has exited with all its threads (a zombie waiting for a parent that will not
    reap it counts). The leader of a threaded process turns zombie before its other threads have
    died, and only then are its files (a listening socket) closed."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return True
    return all(_task_state(f"/proc/{pid}/task/{tid}/stat") in (None, "Z", "X") for tid in threads)


def _task_state(stat: str) -> str | None:
    """The state letter in a /proc stat file, or None once the task is gone (its directory vanishes,
    or a read races its exit and the kernel says ESRCH)."""
    try:
        with open(stat) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def process_alive(pid: int) -> bool:
    return not process_gone(pid)


def kill_group(pid: int) -> None:
    """SIGKILL a job's process group (a test's safety net, for jobs a killed daemon left behind)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ------------------------------------------------------------------------------------ daemons

def daemon_pid(state: StateDir) -> int | None:
    client = LocalScheddClient(state, autostart=False)
    try:
        return client.ping()["pid"]
    except ScheddError:
        return None
    finally:
        client.close()


def stop_daemon(state: StateDir, timeout: float = 20.0) -> None:
    """Stop the daemon of ``state`` if one answers: ``shutdown`` first, SIGKILL if it hangs."""
    pid = daemon_pid(state)
    if pid is None:
        return
    client = LocalScheddClient(state, autostart=False)
    errors: list[BaseException] = []

    def shutdown() -> None:
        try:
            client.shutdown()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    worker = threading.Thread(target=shutdown, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive() or process_alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        worker.join(5)
    client.close()


class Harness:
    """One state directory, its daemon and a work directory for submit files and job outputs."""

    def __init__(self, state: StateDir, work: Path):
        self.state = state
        self.work = work
        self._client: LocalScheddClient | None = None
        self.pids: list[int] = []  # job processes to kill at the end should a test leave any behind

    # -- clients and files

    @property
    def client(self) -> LocalScheddClient:
        if self._client is None:
            self._client = LocalScheddClient(self.state)
        return self._client

    def fresh_client(self) -> LocalScheddClient:
        """A new connection, as the next command a user types opens one."""
        self.close_client()
        return self.client

    def close_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def write_pool(self, text: str) -> None:
        """The pool file; the daemon reads it when it starts, so call this before the first request."""
        assert daemon_pid(self.state) is None, "write the pool file before the daemon starts"
        Path(self.state.pool_config).write_text(textwrap.dedent(text).lstrip())

    def write(self, name: str, text: str, executable: bool = False) -> Path:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
        if executable:
            path.chmod(0o755)
        return path

    def submit(self, text: str, name: str = "job.sub", **kwargs) -> SubmitResult:
        """Write ``text`` as ``name`` in the work directory and submit it from there."""
        path = self.write(name, text)
        return self.client.submit(path.read_text(), submit_file=str(path), cwd=str(self.work), **kwargs)

    def cli(self, *args: str, cwd: str | os.PathLike[str] | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run the real ``crabtui`` command with this state directory."""
        return subprocess.run([CRABTUI, "--state-dir", self.state.path, *args],
                              cwd=cwd or self.work, capture_output=True, text=True, timeout=60,
                              env={**os.environ, **(env or {})})

    # -- jobs

    def job(self, job: str) -> classad2.ClassAd | None:
        """The job's ad in the queue, or None once it left."""
        cluster, proc = job.split(".")
        ads = self.client.query(f"ClusterId == {cluster} && ProcId == {proc}")
        return ads[0] if ads else None

    def history_ad(self, job: str) -> classad2.ClassAd | None:
        cluster, proc = job.split(".")
        ads = self.client.history(f"ClusterId == {cluster} && ProcId == {proc}")
        return ads[0] if ads else None

    def wait_status(self, job: str, status: JobStatus, timeout: float = WAIT,
                    check: Callable[[classad2.ClassAd], bool] = lambda ad: True) -> classad2.ClassAd:
        def reached():
            ad = self.job(job)
            return ad if ad is not None and ad["JobStatus"] == status and check(ad) else None
        return wait_for(reached, f"job {job} to be {status.name}", timeout)

    def wait_history(self, job: str, timeout: float = WAIT) -> classad2.ClassAd:
        return wait_for(lambda: self.history_ad(job), f"job {job} to leave the queue for the history", timeout)

    def wait_running(self, job: str, timeout: float = WAIT) -> classad2.ClassAd:
        """Running, with the process started (JobPid known); the pid is killed at teardown if left."""
        ad = self.wait_status(job, JobStatus.RUNNING, timeout, check=lambda ad: "JobPid" in ad)
        self.pids.append(ad["JobPid"])
        return ad

    def daemon_pid(self) -> int | None:
        return daemon_pid(self.state)

    def stop(self) -> None:
        self.close_client()
        stop_daemon(self.state)
        for pid in self.pids:
            kill_group(pid)
