"""``<dag>.lock``: present while a DAGMan runs the DAG, so a restart knows to recover.

DAGMan removes the lock file when it exits on its own; after a crash (or a graceful stop for
condor_hold) the file stays, and the next start goes into recovery mode and rebuilds its state
from the nodes log.  DAGMan keeps a ProcessId there to refuse a second live DAGMan on the same
DAG; ours is a ClassAd that also records the rescue DAG the run started from, so recovery
starts from the same DONE nodes.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import classad2

from engine.atomic import write_atomically


class Lock(NamedTuple):
    pid: int
    dagman_id: int
    rescue_dag_number: int


def write_lock(path: str, lock: Lock) -> None:
    ad = classad2.ClassAd({"ProcessId": lock.pid, "DAGManJobId": lock.dagman_id,
                           "RescueDagNumber": lock.rescue_dag_number})
    write_atomically(path, str(ad) + "\n")


def read_lock(path: str) -> Lock | None:
    """The lock's content, None if there is no lock; an unreadable lock still means recovery."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    try:
        ad = classad2.parseOne(text)
        return Lock(int(ad.get("ProcessId", 0)), int(ad.get("DAGManJobId", 0)), int(ad.get("RescueDagNumber", 0)))
    except (ValueError, TypeError, classad2.ClassAdException):
        return Lock(0, 0, 0)


def holder_alive(lock: Lock, dag_file: str) -> bool:
    """True if the process that wrote the lock still runs a DAGMan of ``dag_file``
    (a recycled pid running something else does not count)."""
    if lock.pid <= 0 or lock.pid == os.getpid():
        return False
    try:
        with open(f"/proc/{lock.pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    name = os.path.basename(dag_file).encode()
    runs_dagman = any(b"dagman" in a or b"crabtui" in a for a in argv[:3])
    return runs_dagman and any(os.path.basename(a) == name for a in argv)
