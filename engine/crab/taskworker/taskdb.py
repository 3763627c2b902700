"""CRAB's task table: one row per task with its status and pending command, as TaskDB keeps them.

A user command only records what is wanted (``NEW`` with the command SUBMIT, KILL or RESUBMIT);
the task worker picks pending rows up, marks them ``QUEUED`` and carries them out, so a command
returns at once and a crash of the worker leaves the row to be picked up again.  Statuses and the
transitions allowed from each come from CRAB (crab-spec §1.1); the table lives in SQLite (WAL)
beside the schedd's queue.

Each row names the backend its task runs on: one state directory may hold tasks of the embedded
engine and of a pool, and each backend's worker carries out and follows only its own (a pool's
DAGMan job id means nothing to the embedded schedd, and the other way round).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from engine.state import full_disk

# tm_task_status values crabtui uses (the tape-recall ones have no use on one machine).  UPLOADED: a
# dry run's task (crab submit --dryrun), which the worker leaves alone until crab proceed makes it NEW.
NEW, QUEUED, SUBMITTED, SUBMITFAILED = "NEW", "QUEUED", "SUBMITTED", "SUBMITFAILED"
FAILED, COMPLETED, KILLED, KILLFAILED, RESUBMITFAILED = "FAILED", "COMPLETED", "KILLED", "KILLFAILED", "RESUBMITFAILED"
UPLOADED = "UPLOADED"
STATUSES = (NEW, QUEUED, UPLOADED, SUBMITTED, SUBMITFAILED, FAILED, COMPLETED, KILLED, KILLFAILED, RESUBMITFAILED)
# tm_task_command
SUBMIT, KILL, RESUBMIT = "SUBMIT", "KILL", "RESUBMIT"
# Where a command is accepted (DataWorkflow.py); KILLED is no longer resubmittable (CRAB d6cc4abd).  A task
# whose DAG has finished is refused a kill, as CRAB's server refused one in its COMPLETED status, and a
# resubmit: every job of it has finished (CRAB's resubmit2 takes SUBMITTED, KILLFAILED, RESUBMITFAILED, FAILED).
KILLABLE = (SUBMITTED, KILLFAILED, RESUBMITFAILED, FAILED)
RESUBMITTABLE = (SUBMITTED, KILLFAILED, RESUBMITFAILED, FAILED)
# The status a failed action leaves (MasterWorker.STATE_ACTIONS_MAP).
FAILURE_STATUS = {SUBMIT: SUBMITFAILED, KILL: KILLFAILED, RESUBMIT: RESUBMITFAILED}
EMBEDDED, HTCONDOR = "embedded", "htcondor"  # a row written before rows named their backend is embedded


class TaskError(Exception):
    """A command CRAB would refuse; the message says why and what the user can do."""


@dataclass(frozen=True)
class Task:
    name: str  # YYMMDD_HHMMSS:user_crab_<requestName>
    request_name: str
    user: str
    status: str
    command: str
    config_path: str  # the configuration as the user gave it
    task_dir: str  # where the DAG, its scripts' state and the job outputs live
    submitted_at: float
    updated_at: float
    dagman_id: int | None = None
    message: str = ""  # why the last action failed, for task list and status
    arguments: dict = field(default_factory=dict)  # the pending command's options (resubmit's, kill's)
    backend: str = EMBEDDED  # EMBEDDED or HTCONDOR: whose worker carries out its commands

    @property
    def kill_warnings(self) -> tuple[str, ...]:
        """crab kill --killwarning's text, if it was given, which CRAB adds to the task's warnings."""
        text = self.arguments.get("killwarning") if self.command == KILL else None
        return (text,) if text else ()


def killable(task: Task) -> bool:
    """Whether ``crab kill`` is accepted for the task: one submitted and not finished, or one whose
    submission the worker has not taken up yet."""
    return task.status in KILLABLE or (task.status == NEW and task.command == SUBMIT)


def kill_refusal(task: Task) -> str:
    """Why a kill of ``task`` is refused, in the CRAB server's words."""
    why = {COMPLETED: "every job of it has finished; there is nothing left to kill",
           KILLED: "it is killed already",
           QUEUED: "the task worker is submitting it to the scheduler; kill it once 'crabtui task list' shows it "
                   "SUBMITTED, in a few seconds"}.get(task.status,
                                                     "it can be killed only when it is " + ", ".join(KILLABLE))
    return f"You cannot kill a task if it is in the {task.status} status ({task.name}: {why})"


def resubmittable(task: Task) -> bool:
    """Whether CRAB's server takes a resubmit of ``task``: of its failed jobs, or, for a task that
    failed to submit, a submission anew."""
    return task.status in RESUBMITTABLE or task.status == SUBMITFAILED


def resubmit_refusal(task: Task) -> str:
    """Why a resubmit of ``task`` is refused, in the CRAB server's words, and what the user can do."""
    what = {KILLED: "a kill is final; submit the configuration again as a new task for what is left",
            COMPLETED: "every job of it has finished; there is nothing to resubmit"}.get(
        task.status, "a task can be resubmitted when it is " + ", ".join(RESUBMITTABLE))
    return f"You cannot resubmit jobs if the task is in status {task.status}. ({task.name}: {what})"


def task_name(request_name: str, user: str, when: float) -> str:
    """CRAB's task name: the submission time, the user and the request name."""
    return time.strftime("%y%m%d_%H%M%S", time.localtime(when)) + f":{user}_crab_{request_name}"


class TaskDB:
    """The task table of one state directory."""

    def __init__(self, path: str) -> None:
        self.path = path
        with self._readable():
            self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tasks (name TEXT PRIMARY KEY, request_name TEXT, user TEXT, status TEXT,"
                " command TEXT, config_path TEXT, task_dir TEXT, submitted_at REAL, updated_at REAL,"
                " dagman_id INTEGER, message TEXT, arguments TEXT, backend TEXT NOT NULL DEFAULT 'embedded')")
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(tasks)")]
            if "backend" not in columns:  # a table made before rows named their backend
                self._db.execute("ALTER TABLE tasks ADD COLUMN backend TEXT NOT NULL DEFAULT 'embedded'")

    @contextmanager
    def _readable(self) -> Iterator[None]:
        """SQLite's errors as one line naming the file and what to do: its own ("unable to open
        database file") name neither, and every reader (the UI's banner, each command) shows it."""
        try:
            yield
        except (sqlite3.OperationalError, sqlite3.DatabaseError) as e:
            raise TaskError(unusable(self.path, e)) from None

    def close(self) -> None:
        self._db.close()

    # -------------------------------------------------------------- reading

    def tasks(self) -> list[Task]:
        """Every task, newest first."""
        with self._readable():
            rows = self._db.execute("SELECT * FROM tasks ORDER BY submitted_at DESC, name").fetchall()
        return [self._task(row) for row in rows]

    def get(self, name: str) -> Task:
        """A task by its full name, or by its request name where that is unique."""
        with self._readable():
            row = self._db.execute("SELECT * FROM tasks WHERE name = ?", (name,)).fetchone()
            if row is not None:
                return self._task(row)
            rows = self._db.execute("SELECT * FROM tasks WHERE request_name = ?", (name,)).fetchall()
        if len(rows) == 1:
            return self._task(rows[0])
        if rows:
            names = ", ".join(sorted(r[0] for r in rows))
            raise TaskError(f"{name!r} names {len(rows)} tasks ({names}); give the full task name")
        raise TaskError(f"there is no task {name!r}; see 'crabtui task list'")

    def pending(self, backend: str) -> list[Task]:
        """``backend``'s tasks with a command to carry out (NEW), or one a crashed worker left half
        done (QUEUED)."""
        with self._readable():
            rows = self._db.execute("SELECT * FROM tasks WHERE status IN (?, ?) AND backend = ? ORDER BY updated_at",
                                    (NEW, QUEUED, backend)).fetchall()
        return [self._task(row) for row in rows]

    # -------------------------------------------------------------- writing

    def insert(self, task: Task) -> None:
        try:
            self._db.execute("INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", _row(task))
        except sqlite3.IntegrityError:
            raise TaskError(f"a task named {task.name} exists already") from None

    def update(self, task: Task, **changes) -> Task:
        """Store ``changes`` to the task (its update time too) and return the new row."""
        new = replace(task, **changes, updated_at=time.time())
        self._db.execute("UPDATE tasks SET request_name=?, user=?, status=?, command=?, config_path=?, task_dir=?,"
                         " submitted_at=?, updated_at=?, dagman_id=?, message=?, arguments=?, backend=? WHERE name=?",
                         _row(new)[1:] + (new.name,))
        return new

    def request(self, name: str, command: str, arguments: dict | None = None) -> Task:
        """Record a user's KILL or RESUBMIT for the worker, if CRAB would accept it in this status."""
        with self._transaction():
            task = self.get(name)
            if command == KILL:
                if not killable(task):
                    raise TaskError(kill_refusal(task))
                if task.status == NEW:
                    return self.update(task, status=KILLED, command=KILL, message="killed before it was submitted",
                                       arguments=arguments or {})
            elif command == RESUBMIT:
                if task.status == SUBMITFAILED:  # CRAB submits such a task anew
                    return self.update(task, status=NEW, command=SUBMIT, message="", arguments=arguments or {})
                if task.status not in RESUBMITTABLE:
                    raise TaskError(resubmit_refusal(task))
            else:
                raise ValueError(command)
            return self.update(task, status=NEW, command=command, message="", arguments=arguments or {})

    def proceed(self, name: str) -> Task:
        """crab proceed: a dry run's task is submitted for real (NEW with SUBMIT), and the worker
        splits and submits it as any other, as CRAB's server accepts it in the UPLOADED status only."""
        with self._transaction():
            task = self.get(name)
            if task.status != UPLOADED:
                raise TaskError(f"Can only proceed if task is in the UPLOADED status, but it is in the {task.status} "
                                f"status ({task.name}: crab proceed continues a task submitted with --dryrun).")
            return self.update(task, status=NEW, command=SUBMIT, message="")

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @staticmethod
    def _task(row: tuple) -> Task:
        *head, arguments, backend = row
        return Task(*head, arguments=json.loads(arguments or "{}"), backend=backend)


def unusable(path: str, error: Exception) -> str:
    """Why the task table ``path`` cannot be used, and what to do."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        return (f"{path}: cannot open the task table: the state directory {directory} is gone (removed or moved); "
                f"give --state-dir the directory that holds your tasks")
    if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        return f"{path}: cannot open the task table: permission denied; make it readable and writable by you"
    if not os.access(directory, os.R_OK | os.W_OK | os.X_OK):
        return (f"{path}: cannot open the task table: permission denied on {directory}; make it readable and "
                f"writable by you, or give --state-dir another directory")
    return full_disk(directory) or f"{path}: cannot use the task table ({error}); move it away to start with an empty one"


def _row(task: Task) -> tuple:
    return (task.name, task.request_name, task.user, task.status, task.command, task.config_path, task.task_dir,
            task.submitted_at, task.updated_at, task.dagman_id, task.message, json.dumps(task.arguments),
            task.backend)
