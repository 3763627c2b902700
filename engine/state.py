"""Where crabtui keeps its state: ``$XDG_STATE_HOME/crabtui`` unless told otherwise."""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_VAR = "CRABTUI_STATE_DIR"


@dataclass(frozen=True, slots=True)
class StateDir:
    path: str

    @property
    def db(self) -> str:
        return os.path.join(self.path, "schedd.sqlite3")

    @property
    def socket(self) -> str:
        return os.path.join(self.path, "schedd.sock")

    @property
    def lock(self) -> str:
        return os.path.join(self.path, "schedd.lock")

    @property
    def log(self) -> str:
        return os.path.join(self.path, "schedd.log")

    @property
    def spool(self) -> str:
        return os.path.join(self.path, "spool")

    @property
    def pool_config(self) -> str:
        """The pool configuration the embedded schedd reads, if the user wrote one."""
        return os.path.join(self.path, "pool.toml")

    @property
    def tasks(self) -> str:
        """CRAB's task table (engine.crab.taskworker.taskdb)."""
        return os.path.join(self.path, "tasks.sqlite3")

    @property
    def global_blacklist(self) -> str:
        """The CRAB server's global site blacklist, CRAB's blacklistedSites.txt (engine.crab.ap.sites)."""
        return os.path.join(self.path, "blacklistedSites.txt")

    @property
    def taskworker_config(self) -> str:
        """The task worker's configuration (automatic splitting's knobs), if the user wrote one."""
        return os.path.join(self.path, "taskworker.toml")

    def task_dir(self, task_name: str) -> str:
        """Where a task's DAG, scripts' state and job outputs live (no ':' in the path: HTCondor
        reads a colon in some paths as a separator)."""
        return os.path.join(self.path, "tasks", task_name.replace(":", "_"))


def state_dir(explicit: str | None = None) -> StateDir:
    """``--state-dir``, else ``$CRABTUI_STATE_DIR``, else ``$XDG_STATE_HOME/crabtui`` (XDG's default)."""
    path = explicit or os.environ.get(ENV_VAR)
    if not path:
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        path = os.path.join(base, "crabtui")
    path = os.path.abspath(path)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return StateDir(path)
