"""Where crabtui keeps its state: ``$XDG_STATE_HOME/crabtui`` unless told otherwise.

The state directory holds the jobs the schedd will run as you, so it must be yours alone: like
ssh with ``~/.ssh``, crabtui refuses one (or a database, socket or spool in it) that another user
owns or could write to, saying what to fix, and makes what it creates private (0700, 0600).
"""

from __future__ import annotations

import os
import pwd
import shlex
import stat
from dataclasses import dataclass

ENV_VAR = "CRABTUI_STATE_DIR"


class StateDirError(Exception):
    """A state directory crabtui cannot use; the message names it and what to do."""


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


def state_path(explicit: str | None = None) -> str:
    """The state directory :func:`state_dir` uses, without making or checking it."""
    path = explicit or os.environ.get(ENV_VAR)
    if not path:
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        path = os.path.join(base, "crabtui")
    return path if "\0" in path else os.path.abspath(path)


def state_dir(explicit: str | None = None) -> StateDir:
    """``--state-dir``, else ``$CRABTUI_STATE_DIR``, else ``$XDG_STATE_HOME/crabtui`` (XDG's
    default): created private if missing, checked (:func:`check_private`) if not."""
    if explicit is not None and not explicit.strip():
        raise StateDirError("--state-dir is empty; give a directory, or leave the option out for "
                            "$XDG_STATE_HOME/crabtui")
    path = state_path(explicit)
    if "\0" in path:
        raise StateDirError(f"{path!r}: a path cannot hold a NUL character; give --state-dir another directory")
    path = os.path.abspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except FileExistsError:
        raise StateDirError(f"{_shown(path)}: not a directory; give --state-dir a directory (it is created if "
                            "missing)") from None
    except OSError as e:
        raise StateDirError(f"{_shown(path)}: cannot create the state directory: {e.strerror}; give --state-dir "
                            "a directory you can write to") from None
    check_private(path, "state directory")
    if os.statvfs(path).f_flag & os.ST_RDONLY:  # chmod cannot help there
        raise StateDirError(f"{_shown(path)}: the state directory is on a read-only file system; remount it "
                            "read-write or give --state-dir another one")
    if not os.stat(path).st_mode & stat.S_IWUSR or not os.access(path, os.W_OK | os.X_OK):
        raise StateDirError(f"{_shown(path)}: the state directory is read-only; make it writable "
                            f"(chmod u+w {_typed(path)}) or give --state-dir another one")
    return StateDir(path)


def check_state(state: StateDir) -> None:
    """What the schedd daemon checks before it trusts a state directory: the directory, then
    its database, socket, lock, log and spool, whichever exist."""
    check_private(state.path, "state directory")
    for path, what in ((state.db, "job queue"), (state.db + "-wal", "job queue's log"),
                       (state.db + "-shm", "job queue's index"), (state.socket, "schedd socket"),
                       (state.lock, "schedd lock"), (state.log, "schedd log"), (state.spool, "spool directory")):
        if os.path.lexists(path):
            check_private(path, what)


# Below this much free space SQLite cannot commit (a transaction's pages go to the WAL first) and
# the daemon cannot write its start-up files: the file system counts as full.
FULL_BELOW_BYTES = 1 << 20


def full_disk(path: str) -> str | None:
    """Why nothing can be written under ``path`` when its file system is full, else None.

    SQLite reports a full disk as "database or disk is full" or, for its WAL index, "disk I/O
    error"; the usual advice for an unreadable database (move it away) would then lose every job
    and task for want of space that freeing some gives back."""
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    if info.f_bavail * info.f_frsize >= FULL_BELOW_BYTES:
        return None
    return (f"{_shown(path)}: no space left on its file system ({info.f_bavail * info.f_frsize // 1024} KiB free); "
            "free some space there, then run the command again: nothing recorded is lost")


def check_private(path: str, what: str) -> None:
    """Refuse ``path`` unless it is ours and nobody else can write to it, with a message that
    says what to fix; take away the read access of others (0700 for a directory, 0600 else)."""
    try:
        info = os.lstat(path)
    except OSError as e:
        gone = what == "state directory" and isinstance(e, FileNotFoundError)
        raise StateDirError(f"{_shown(path)}: cannot examine the {what}: {e.strerror}" + (
            "; it was removed or moved: give --state-dir the directory that holds your tasks" if gone else "")) from None
    if stat.S_ISLNK(info.st_mode) and what != "state directory":
        raise StateDirError(f"{_shown(path)}: the {what} is a symbolic link; remove it (crabtui recreates it)")
    if stat.S_ISLNK(info.st_mode):
        info = os.stat(path)
    if what == "state directory" and not stat.S_ISDIR(info.st_mode):
        raise StateDirError(f"{_shown(path)}: not a directory; give --state-dir a directory (it is created if missing)")
    if info.st_uid != os.getuid():
        raise StateDirError(f"{_shown(path)}: bad ownership of the {what}: it belongs to {_user(info.st_uid)}, not to "
                            f"you ({_user(os.getuid())}), and jobs found there would run as you; use a "
                            "directory of your own")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022 and mode & stat.S_ISVTX and what == "state directory":
        # a shared directory such as /tmp: chmod go-w there would break everyone else's use of it
        raise StateDirError(f"{_shown(path)}: bad permissions on the {what}: it is a directory shared by every user "
                            f"(mode {mode:04o}); give --state-dir a directory of your own in it, such as "
                            f"{_shown(os.path.join(path, 'crabtui-' + _user(os.getuid())))}")
    if mode & 0o022:
        raise StateDirError(f"{_shown(path)}: bad permissions on the {what}: it is {'group' if mode & 0o020 else 'world'}"
                            f"-writable (mode {mode:04o}), so others could have planted jobs there; check its "
                            f"content, then: chmod go-w {_typed(path)}")
    if mode & 0o077:
        os.chmod(path, mode & 0o700)


def _shown(path: str) -> str:
    """A path for a one-line message: quoted with escapes if it holds a newline or other control."""
    return path if path.isprintable() else repr(path)


def _typed(path: str) -> str:
    """A path as a shell command in a message takes it, quoted if it holds a space or the like."""
    return shlex.quote(path) if path.isprintable() else repr(path)


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
