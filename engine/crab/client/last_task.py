"""The task of the last task command, as CRAB's client keeps ``crab_project_directory`` in
``~/.crab3``: ``crab status`` alone then means the task last submitted or named.

crabtui keeps it per state directory (its ``last_task`` file), since a task lives there: a bare
command with another ``--state-dir`` must not pick a task of another schedd.  The file holds the
task's full name, one line.
"""

from __future__ import annotations

import os

from engine.atomic import write_atomically
from engine.state import StateDir


def _path(state: StateDir) -> str:
    return os.path.join(state.path, "last_task")


def remember(state: StateDir, name: str) -> None:
    """Record ``name`` (a task's full name) as the one a bare task command uses."""
    try:
        write_atomically(_path(state), name + "\n")
    except OSError:
        pass  # only a convenience: the command itself succeeded


def recall(state: StateDir) -> str | None:
    """The full name of the task last submitted or named in this state directory, if any."""
    try:
        with open(_path(state), encoding="utf-8") as f:
            return f.readline().strip() or None
    except (OSError, UnicodeDecodeError):
        return None
