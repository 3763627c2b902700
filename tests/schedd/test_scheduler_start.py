"""Why a DAGMan job the schedd has not started waits: a task or DAG directory against the user the
schedd runs DAGMan as (engine.schedd.scheduler_start), on real directories of this machine."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest

from engine.schedd.scheduler_start import not_writable, why_waiting

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs directories of root's and another user's")

OTHER = "nobody"  # a user of every Debian machine, never root


@pytest.fixture
def tree():
    top = Path(tempfile.mkdtemp(prefix="schedstart-"))
    top.chmod(0o755)
    (top / "state" / "task").mkdir(parents=True)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def test_a_user_of_this_machine_is_checked_by_its_uid_and_groups(tree):
    task = tree / "state" / "task"
    (tree / "state").chmod(0o700)
    assert not_writable(str(task), OTHER) == f"enter {tree / 'state'} (drwx------ root)"
    (tree / "state").chmod(0o755)
    task.chmod(0o755)
    assert not_writable(str(task), OTHER) == f"write {task} (drwxr-xr-x root)"
    os.chown(task, pwd.getpwnam(OTHER).pw_uid, -1)
    assert not_writable(str(task), OTHER) is None
    assert not_writable(str(task), "root") is None


def test_a_name_this_machine_does_not_know_is_judged_only_on_roots_directories(tree):
    """A pool's user unknown here (its schedd in a chroot, as the test pool's) is never root, whose
    jobs a schedd refuses; whose uid it has otherwise cannot be told."""
    task = tree / "state" / "task"
    (tree / "state").chmod(0o700)
    assert not_writable(str(task), "crab-elsewhere") == f"enter {tree / 'state'} (drwx------ root)"
    os.chown(tree / "state", 1000, 1000)
    os.chown(task, 1000, 1000)
    task.chmod(0o700)
    assert not_writable(str(task), "crab-elsewhere") is None
    assert not_writable(str(tree / "missing"), "crab-elsewhere") is None  # not on this machine: no verdict


def test_why_waiting_reads_the_hold_reason_then_the_directory(tree):
    task = tree / "state" / "task"
    (tree / "state").chmod(0o700)
    ad = {"ClusterId": 12, "JobStatus": 1, "Owner": OTHER, "Iwd": str(task)}
    assert why_waiting(ad) == (f"the schedd cannot start DAGMan job 12: it runs it as {OTHER}, who cannot enter "
                               f"{tree / 'state'} (drwx------ root); run crabtui as {OTHER}, the user the pool runs "
                               f"your jobs as, with a state directory of {OTHER}'s")
    assert why_waiting({**ad, "NumJobStarts": 1}) is None  # it ran: its dagman.out says the rest
    assert why_waiting({**ad, "JobStatus": 2}) is None
    assert why_waiting({**ad, "JobStatus": 5, "HoldReason": "via condor_hold (by user nobody)"}) == (
        "DAGMan job 12 is held: via condor_hold (by user nobody)")
    log = tree / "SchedLog"
    log.write_text(f"11/27/26 09:30:12 (pid:4088) Error: chdir({task}) failed: Permission denied\n"
                   "11/27/26 09:30:12 (pid:4088) Open of RunJobs.dag.lib.out failed, errno 13\n")
    assert why_waiting(ad, str(log)).startswith(
        f"the schedd cannot start DAGMan job 12 as {OTHER}: chdir({task}) failed: Permission denied (its log, {log}); ")
