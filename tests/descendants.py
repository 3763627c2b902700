"""A pytest plugin: the run fails when a process the tests started outlives them.

The pytest process makes itself a child subreaper (Linux's PR_SET_CHILD_SUBREAPER): a process
whose parent exits (a schedd daemon that ``crabtui`` started and left running, a job whose starter
died) is re-parented to pytest instead of to init, so every process the tests started stays a
descendant of pytest and can be found at the end of the run.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time

import pytest

PR_SET_CHILD_SUBREAPER = 36


def pytest_configure(config):
    become_subreaper()


@pytest.fixture(scope="session", autouse=True)
def _no_process_outlives_the_run():
    """Set up first, so torn down last (after every fixture that stops a daemon): a process the
    tests started that is still alive then (an embedded schedd daemon, a job, a DAGMan) fails the
    run, as an error at the last test's teardown, and is killed."""
    yield
    left = leftovers(os.getpid())
    if left:
        listed = "\n".join(f"  {pid}: {command}" for pid, command in sorted(left.items()))
        pytest.fail(f"{len(left)} process(es) the tests started outlived them (killed now):\n{listed}", pytrace=False)


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _stat(pid: str) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0]


def descendants(root: int) -> dict[int, str]:
    """Live (not zombie) descendants of ``root``, with their command lines."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(entry)) is not None:
            children.setdefault(stat[0], []).append(int(entry))
            states[int(entry)] = stat[1]
    found: dict[int, str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        if states[pid] not in ("Z", "X"):
            found[pid] = _command_line(pid)
    return found


def kill_users_of(path: str) -> list[int]:
    """SIGKILL the descendants of this process that name ``path`` in their command line or
    environment (a DAGMan or a daemon of a state directory its test is done with, a job whose
    ad file is there), and collect them; returns their pids."""
    needle = os.fsencode(path)
    users = []
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline, open(f"/proc/{pid}/environ", "rb") as environ:
                if needle in cmdline.read() or needle in environ.read():
                    users.append(pid)
        except OSError:
            continue
    kill(users)
    return users


def kill(pids) -> None:
    """SIGKILL ``pids``, and collect those that are children of ours."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass  # not a child of ours: its own parent collects it


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def reap_zombies() -> None:
    """Collect the exit status of every child that has ended (orphans re-parented to us among them)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def leftovers(root: int, grace: float = 10.0) -> dict[int, str]:
    """The descendants of ``root`` still alive after ``grace`` seconds (time for a daemon told to stop
    to exit); they are killed, so that none outlives the run."""
    deadline = time.monotonic() + grace
    while (alive := descendants(root)) and time.monotonic() < deadline:
        reap_zombies()
        time.sleep(0.1)
    kill(alive)
    reap_zombies()
    return alive
