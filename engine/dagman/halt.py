"""Halting a DAG as ``htcondor dag halt`` does: the ``<dag>.halt`` file DAGMan looks for each cycle.

While the file exists DAGMan starts nothing new (no PRE script, no submission); queued and running
jobs and their POST scripts finish, then the FINAL node runs and DAGMan writes a rescue DAG and
exits with DAG status 6.  Removing the file before it has drained resumes the DAG.  The same file
works for the embedded DAGMan and for HTCondor's condor_dagman.
"""

from __future__ import annotations

import os

HALT_SUFFIX = ".halt"
LOCK_SUFFIX = ".lock"  # condor_submit_dag's -Lockfile: there while a DAGMan runs the DAG, or will recover it


def halt_file(dag_file: str) -> str:
    return dag_file + HALT_SUFFIX


def dagman_running(dag_file: str) -> bool:
    """Whether a DAGMan runs the DAG, or will again in recovery (its job held): its lock file is
    there.  A halt file with no DAGMan halts nothing, and the next run deletes it."""
    return os.path.exists(dag_file + LOCK_SUFFIX)


def is_halted(dag_file: str) -> bool:
    return os.path.exists(halt_file(dag_file))


def halt(dag_file: str) -> bool:
    """Halt the DAG; False if it was halted already."""
    path = halt_file(dag_file)
    try:
        with open(path, "x", encoding="utf-8"):
            pass
    except FileExistsError:
        return False
    return True


def unhalt(dag_file: str) -> bool:
    """Resume a halted DAG; False if it was not halted."""
    try:
        os.unlink(halt_file(dag_file))
    except FileNotFoundError:
        return False
    return True
