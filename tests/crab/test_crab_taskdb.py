"""The task table: CRAB's statuses, pending commands and the transitions it allows."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest

from engine.crab.taskworker.taskdb import (COMPLETED, FAILED, HTCONDOR, KILL, KILLED, NEW, QUEUED, RESUBMIT, SUBMIT,
                                           SUBMITFAILED, SUBMITTED, Task, TaskDB, TaskError, task_name)

T0 = 1_790_000_000.0


def new_task(request: str, when: float = T0) -> Task:
    name = task_name(request, "alice", when)
    return Task(name=name, request_name=request, user="alice", status=NEW, command=SUBMIT, config_path="/c.toml",
                task_dir=f"/tasks/{name}", submitted_at=when, updated_at=when)


@pytest.fixture
def db(tmp_path):
    db = TaskDB(str(tmp_path / "tasks.sqlite3"))
    yield db
    db.close()


def test_task_name_has_crabs_form():
    assert task_name("ttbar", "alice", T0).endswith(":alice_crab_ttbar")
    assert len(task_name("ttbar", "alice", T0).split(":")[0]) == len("YYMMDD_HHMMSS")


def test_tasks_persist_and_are_found_by_request_name_when_unique(db, tmp_path):
    db.insert(new_task("ttbar"))
    db.insert(new_task("wjets", T0 + 1))
    again = TaskDB(str(tmp_path / "tasks.sqlite3"))
    assert [t.request_name for t in again.tasks()] == ["wjets", "ttbar"], "newest first"
    assert again.get("ttbar").name == new_task("ttbar").name
    db.insert(new_task("ttbar", T0 + 60))
    with pytest.raises(TaskError, match="names 2 tasks"):
        db.get("ttbar")
    with pytest.raises(TaskError, match="there is no task 'zz'; see 'crabtui task list'"):
        db.get("zz")
    with pytest.raises(TaskError, match="exists already"):
        db.insert(new_task("wjets", T0 + 1))


def test_pending_holds_new_and_half_done_tasks(db):
    a, b, c = new_task("a"), new_task("b", T0 + 1), new_task("c", T0 + 2)
    for t in (a, b, c):
        db.insert(t)
    db.update(b, status=QUEUED)
    db.update(c, status=SUBMITTED, command=SUBMIT, dagman_id=7)
    assert {t.request_name for t in db.pending("embedded")} == {"a", "b"}
    assert db.get("c").dagman_id == 7


def test_pending_is_per_backend_and_a_row_keeps_its_backend(db):
    """One state directory, a task on each backend: each backend's worker is given only its own."""
    db.insert(new_task("here"))
    db.insert(replace(new_task("there", T0 + 1), backend=HTCONDOR))
    assert [t.request_name for t in db.pending("embedded")] == ["here"]
    assert [t.request_name for t in db.pending(HTCONDOR)] == ["there"]
    db.update(db.get("there"), status=SUBMITTED, dagman_id=12)
    assert db.get("there").backend == HTCONDOR, "an update keeps the row's backend"


def test_a_table_made_before_rows_named_their_backend_opens_with_its_tasks_embedded(tmp_path):
    path = str(tmp_path / "tasks.sqlite3")
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE tasks (name TEXT PRIMARY KEY, request_name TEXT, user TEXT, status TEXT, command TEXT,"
                " config_path TEXT, task_dir TEXT, submitted_at REAL, updated_at REAL, dagman_id INTEGER,"
                " message TEXT, arguments TEXT)")
    task = new_task("old")
    old.execute("INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (task.name, "old", "alice", NEW, SUBMIT, "/c.toml", task.task_dir, T0, T0, None, "", "{}"))
    old.commit()
    old.close()
    db = TaskDB(path)
    try:
        assert db.get("old").backend == "embedded" and [t.name for t in db.pending("embedded")] == [task.name]
        db.insert(replace(new_task("new", T0 + 1), backend=HTCONDOR))
        assert db.get("new").backend == HTCONDOR
    finally:
        db.close()


def test_kill_before_the_worker_submits_is_immediate(db):
    db.insert(new_task("a"))
    assert db.request("a", KILL).status == KILLED


def test_kill_and_resubmit_follow_crabs_rules(db):
    task = new_task("a")
    db.insert(task)
    db.update(task, status=QUEUED)
    with pytest.raises(TaskError, match=r"^You cannot kill a task if it is in the QUEUED status \(.*: the task "
                                        r"worker is submitting it to the scheduler; kill it once 'crabtui task "
                                        r"list' shows it SUBMITTED, in a few seconds\)$"):
        db.request("a", KILL)
    db.update(db.get("a"), status=COMPLETED)
    with pytest.raises(TaskError, match="^You cannot kill a task if it is in the COMPLETED status"):
        db.request("a", KILL)  # a finished task is refused, as CRAB's server refused it
    assert db.get("a").status == COMPLETED
    with pytest.raises(TaskError, match=r"^You cannot resubmit jobs if the task is in status COMPLETED\. "):
        db.request("a", RESUBMIT)  # not one of CRAB's resubmittable statuses: every job has finished
    db.update(db.get("a"), status=FAILED)
    resubmit = db.request("a", RESUBMIT, {"jobids": "1,3-5", "maxmemory": 3000})
    assert (resubmit.status, resubmit.command, resubmit.arguments) == (NEW, RESUBMIT, {"jobids": "1,3-5",
                                                                                       "maxmemory": 3000})
    db.update(db.get("a"), status=KILLED)
    with pytest.raises(TaskError, match=r"^You cannot resubmit jobs if the task is in status KILLED\. "):
        db.request("a", RESUBMIT)


def test_resubmit_of_a_task_that_failed_to_submit_submits_it_anew(db):
    task = new_task("a")
    db.insert(task)
    db.update(task, status=SUBMITFAILED, message="no such dataset")
    again = db.request("a", RESUBMIT)
    assert (again.status, again.command, again.message) == (NEW, SUBMIT, "")


def test_a_table_that_cannot_be_used_is_named_with_what_to_do(tmp_path):
    """SQLite says "unable to open database file" or "file is not a database", naming nothing."""
    gone = tmp_path / "gone" / "tasks.sqlite3"
    with pytest.raises(TaskError, match=f"^{gone}: cannot open the task table: the state directory "
                                        f"{gone.parent} is gone .*; give --state-dir the directory"):
        TaskDB(str(gone))
    garbage = tmp_path / "tasks.sqlite3"
    garbage.write_bytes(b"not a database " * 300)
    with pytest.raises(TaskError, match=f"^{garbage}: cannot use the task table \\(file is not a database\\); "
                                        "move it away to start with an empty one$"):
        TaskDB(str(garbage))
