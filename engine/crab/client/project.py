"""crab's project directory, ``<General.workArea>/crab_<General.requestName>``, as crab submit makes it.

CRABClient's ``createWorkArea`` makes the directory in the current directory's
``General.workArea`` (unset or ``'.'``: ``$CRAB_WORKING_AREA``, else the current directory), refuses
one that exists ("Working area '...' already exists"), and makes ``results/`` and ``inputs/`` in
it; every later command finds the task through ``-d DIR``, logs into its ``crab.log`` and writes
``results/``.  crabtui keeps a task's own files (DAG, job outputs, status cache) under its state
directory, where its schedd reads them; the project directory is where the user looks, and its
record says where the task lives.  Files:

* ``.requestcache``: the record, JSON (CRAB's is a pickle of the server and task name; here the
  task's full name, its requestName, and the state directory and backend that hold it);
* ``crab.log``: one line per command run on the task (time, directory, command line), appended;
* ``inputs/``: the configuration file as submitted (CRAB's debug files hold it there);
* ``results/``: where ``task report``, ``task getoutput`` and ``task getlog`` write.

The task's directory under the state directory keeps the project directory's path (its
``project_dir`` file), so a command that names the task by name writes where ``-d`` would; a
``-d`` on the directory moved elsewhere points it there.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import time
from dataclasses import dataclass

from engine.atomic import leftover, write_atomically

__all__ = ["INPUTS", "LOG", "RECORD", "RESULTS", "Project", "ProjectError", "create", "directory", "display_path", "linked",
           "log_command", "point", "project_path", "read", "recorded", "remove", "work_area"]

RECORD = ".requestcache"
LOG = "crab.log"
RESULTS = "results"
INPUTS = "inputs"
_POINTER = "project_dir"  # in the task's directory under the state directory
_SCHEMA = 1


class ProjectError(Exception):
    """A project directory that cannot be made or read; the message is one line naming it, and
    ``parameter`` the configuration parameter to change (General.requestName unless it is the work
    area that cannot be made)."""

    def __init__(self, message: str, parameter: str = "General.requestName"):
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True, slots=True)
class Project:
    path: str  # absolute
    task: str  # the task's full name
    request_name: str
    state_dir: str  # absolute
    backend: str  # "embedded" or "htcondor"

    @property
    def results(self) -> str:
        return os.path.join(self.path, RESULTS)


def _area(configured: str | None) -> str:
    """``General.workArea`` as written; unset or ``'.'``: ``$CRAB_WORKING_AREA`` or the current
    directory, as CRABClient's createWorkArea."""
    if configured in (None, "", "."):
        return os.environ.get("CRAB_WORKING_AREA") or "."
    return configured


def work_area(configured: str | None, cwd: str) -> str:
    """The absolute work area (:func:`_area`) against ``cwd``."""
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(_area(configured))))


def display_path(configured: str | None, request_name: str) -> str:
    """The project directory as crab submit prints it (``Project dir: crab_projects/crab_X``):
    relative where the work area was given relative."""
    return os.path.normpath(os.path.join(_area(configured), project_name(request_name)))


def project_name(request_name: str) -> str:
    return f"crab_{request_name}"


def project_path(area: str, request_name: str) -> str:
    return os.path.join(area, project_name(request_name))


def create(path: str) -> tuple[int, bool]:
    """Make the project directory with ``results/`` and ``inputs/``; refuse one that exists, in
    crab's words (the check and the making are one mkdir: two submits cannot both have it).

    Returns the claim on it, an open descriptor holding an exclusive lock that the submission keeps
    until it has written the record or taken the directory away, and whether the directory was
    taken over: one that a submission killed before its record left (no record, nothing in it but
    what this function makes, and no live claim) is the next submission's, so that a crash never
    leaves a config that cannot be submitted again."""
    area = os.path.dirname(path)
    try:
        os.makedirs(area, exist_ok=True)
    except OSError as e:
        why = "a file is in the way" if isinstance(e, FileExistsError) else e.strerror
        raise ProjectError(f"cannot make the work area {area}: {why}; set General.workArea to a directory you can "
                           f"write to", "General.workArea") from None
    try:
        os.mkdir(path)
    except FileExistsError:
        claim = _take_over(path)
        if claim is None:
            raise ProjectError(f"Working area '{path}' already exists; please change the requestName in the config "
                               f"file (or General.workArea), or remove that directory") from None
        return claim, True
    except OSError as e:
        raise ProjectError(f"cannot make the project directory {path}: {e.strerror}; set General.workArea to a "
                           f"directory you can write to", "General.workArea") from None
    claim = _claim(path, blocking=True)
    for sub in (RESULTS, INPUTS):
        os.mkdir(os.path.join(path, sub))
    return claim, False


def _claim(path: str, *, blocking: bool) -> int | None:
    """An exclusive lock on directory ``path`` (None if another process holds it)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _take_over(path: str) -> int | None:
    """The claim on an interrupted submission's directory (see :func:`create`), or None."""
    try:
        claim = _claim(path, blocking=False)
    except OSError:
        return None
    if claim is not None:
        try:
            left = set(os.listdir(path))
            record_parts = {name for name in left if leftover(name, RECORD)}  # killed while it wrote the record
            left -= record_parts
            if left <= {RESULTS, INPUTS} and not any(os.listdir(os.path.join(path, sub)) for sub in left):
                for name in record_parts:
                    os.unlink(os.path.join(path, name))
                for sub in (RESULTS, INPUTS):
                    os.makedirs(os.path.join(path, sub), exist_ok=True)
                return claim
        except OSError:
            pass
        os.close(claim)
    return None


def remove(path: str) -> None:
    """Take away a project directory :func:`create` made for a submission that was refused."""
    shutil.rmtree(path, ignore_errors=True)


def fill(path: str, *, task: str, request_name: str, state_dir: str, backend: str, config: str,
         task_dir: str) -> Project:
    """Write the record of a submitted task, a copy of its configuration in ``inputs/``, and the
    pointer back from its directory under the state directory."""
    record = {"schema": _SCHEMA, "RequestName": task, "requestName": request_name,
              "StateDir": os.path.abspath(state_dir), "Backend": backend, "OriginalConfig": config}
    write_atomically(os.path.join(path, RECORD), json.dumps(record, indent=1) + "\n")
    try:
        shutil.copyfile(config, os.path.join(path, INPUTS, os.path.basename(config)))
    except OSError:
        pass  # a script that removed its own file: the record still names it
    point(task_dir, path)
    return Project(path, task, request_name, os.path.abspath(state_dir), backend)


def point(task_dir: str, path: str) -> None:
    """Record ``path`` as the task's project directory (at submit, and where the user moved it)."""
    write_atomically(os.path.join(task_dir, _POINTER), path + "\n")


def recorded(task_dir: str) -> str | None:
    """The project directory the task's record points to, there or not; None for a task submitted
    before task submit made project directories."""
    try:
        with open(os.path.join(task_dir, _POINTER), encoding="utf-8") as f:
            return f.readline().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def read(path: str) -> Project | None:
    """The project of directory ``path``; None if it has no record (not made by task submit)."""
    path = os.path.abspath(path)
    record_path = os.path.join(path, RECORD)
    try:
        with open(record_path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ProjectError(f"{record_path}: cannot read the project's record: {e.strerror}") from None
    try:
        record = json.loads(data)
        project = Project(path, str(record["RequestName"]), str(record["requestName"]), str(record["StateDir"]),
                          str(record["Backend"]))
    except (ValueError, KeyError, TypeError):
        raise ProjectError(f"{record_path}: not a crabtui task's record (a project directory made by CRAB's own "
                           f"crab submit has a record crabtui cannot use); name the task by its name "
                           f"instead") from None
    return project


def linked(task_dir: str, task: str) -> Project | None:
    """The project directory the task's submission made, if it is still there and still the
    task's."""
    path = recorded(task_dir)
    try:
        project = read(path) if path else None
    except ProjectError:
        return None
    return project if project is not None and project.task == task else None


def directory(task_dir: str, task: str) -> str:
    """Where a crab user looks for the task: its project directory (``task status``'s "CRAB project
    directory" line), or for a task without one, its directory under the state directory."""
    project = linked(task_dir, task)
    return project.path if project is not None else task_dir


def log_command(project: Project, argv: list[str], *, now: float | None = None) -> None:
    """Append the command line run on the task to the project's ``crab.log``."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if now is None else now))
    line = f"INFO {stamp}: in {os.getcwd()}: {shlex.join(['crabtui', *argv])}\n"
    try:
        with open(os.path.join(project.path, LOG), "a", encoding="utf-8") as f:
            f.write(line)
    except OSError:
        pass  # the log is a convenience: the command itself goes on
