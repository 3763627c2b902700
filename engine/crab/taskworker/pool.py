"""The TaskWorker on a real HTCondor pool, where no process of crabtui's runs beside the schedd.

CRAB's TaskWorker is a service; on the embedded engine it is a thread of the schedd's daemon.  On
a pool there is no such daemon, and none is added: every task command, and the UI as it polls,
carries out the task table's pending commands itself, against the pool's schedd, before it reads
(:func:`work`).  The task table stays the record of what was asked and done, and a task's later
states come from its DAGMan job and its files, as CRAB derives them from the schedd; so nothing
has to keep running for a task to move on, and there is no process to start, watch or lose.

One worker at a time: a lock on a file of the state directory (``flock``, which the kernel drops
with a process killed by ``kill -9``) serialises the commands and UIs of one state directory, so
a command found QUEUED under the lock was left half done by a process that died, and is finished
from where it stands (:class:`~engine.crab.taskworker.worker.TaskWorker` adopts a DAGMan job
already queued or run for it, and never submits a task twice).
"""

from __future__ import annotations

import fcntl
import os

from engine.crab.taskworker.worker import TaskWorker
from engine.dagman.submit_dag import condor_dagman
from engine.schedd.api import Schedd
from engine.state import StateDir

LOCK_FILE = "taskworker.lock"


def work(state: StateDir, schedd: Schedd) -> None:
    """Carry out the pending commands of ``state``'s task table on the pool of ``schedd`` and
    follow its submitted tasks, once; waits while another command of the same state directory does."""
    fd = os.open(os.path.join(state.path, LOCK_FILE), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        worker = TaskWorker(state, schedd, dagman=condor_dagman())
        try:
            worker.work_once()
        finally:
            worker.db.close()
    finally:
        os.close(fd)
