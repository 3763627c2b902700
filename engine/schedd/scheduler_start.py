"""Why a scheduler-universe job (a DAGMan) that has never run is still waiting, in one line.

A scheduler-universe job does not match a slot: the schedd starts it itself, as its Owner, in its
Iwd.  When it cannot (the Owner may not enter or write the Iwd), HTCondor 23.9 leaves the job idle
and says so only in its own log, at every try ("Error: chdir(IWD) failed: Permission denied",
"Open of FILE failed, errno 13"); the job ad keeps JobStatus 1 and no reason.  So the reason
comes, in this order, from the hold reason of a held job, from the schedd's log where this
machine can read it (on an access point, ``SCHEDD_LOG`` of its configuration), and from the Iwd's
owner and mode against the job's Owner.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Mapping
from typing import Any

from engine.schedd.api import JobStatus

LOG_TAIL = 512 * 1024
"""How much of the end of the schedd's log is searched: it logs its try every few seconds."""


def why_waiting(ad: Mapping[str, Any], schedd_log: str | None = None) -> str | None:
    """Why the scheduler-universe job ``ad`` (ClusterId, JobStatus, HoldReason, Owner, Iwd,
    NumJobStarts) has not started, or None if it runs, ran, or nothing is known to stop it."""
    status = ad.get("JobStatus")
    cluster = ad.get("ClusterId")
    if status == JobStatus.HELD:
        return f"DAGMan job {cluster} is held: {ad.get('HoldReason') or 'no hold reason given'}"
    if status != JobStatus.IDLE or ad.get("NumJobStarts"):
        return None
    iwd, owner = str(ad.get("Iwd") or ""), str(ad.get("Owner") or "")
    complaint = _schedd_complaint(schedd_log, iwd) if schedd_log and iwd else None
    if complaint:
        return f"the schedd cannot start DAGMan job {cluster} as {owner}: {complaint} (its log, {schedd_log}); {run_as(owner)}"
    denied = not_writable(iwd, owner) if iwd and owner else None
    if denied:
        return f"the schedd cannot start DAGMan job {cluster}: it runs it as {owner}, who cannot {denied}; {run_as(owner)}"
    return None


def run_as(owner: str) -> str:
    """What to do about it: a state directory is its user's alone (engine.state), so the tasks in it
    can only be run by a DAGMan of that user."""
    return f"run crabtui as {owner}, the user the pool runs your jobs as, with a state directory of {owner}'s"


def _schedd_complaint(path: str, iwd: str) -> str | None:
    """The schedd's last complaint in its log about starting a job in ``iwd``."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - LOG_TAIL))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    needle = f"chdir({iwd})"
    for line in reversed(tail.splitlines()):
        if needle in line and "failed" in line:
            return line[line.index("Error: ") + 7:] if "Error: " in line else line.split(") ", 1)[-1]
    return None


def not_writable(iwd: str, owner: str) -> str | None:
    """What ``owner`` cannot do on the way to writing ``iwd`` ("enter DIR (mode owner)" for the first
    directory above it it cannot enter, else "write IWD (mode owner)"); None if it can, or this
    machine cannot tell."""
    try:
        user = pwd.getpwnam(owner)
        uid, gids = user.pw_uid, set(os.getgrouplist(owner, user.pw_gid))
    except (KeyError, OSError):
        uid, gids = None, set()
    iwd = os.path.abspath(iwd)
    parts = iwd.split(os.sep)
    for depth in range(2, len(parts) + 1):
        path = os.sep.join(parts[:depth]) or os.sep
        try:
            st = os.stat(path)
        except OSError:
            return None
        need = stat.S_IXUSR if path != iwd else stat.S_IWUSR | stat.S_IXUSR
        if not _allowed(st, uid, gids, need):
            return f"{'write' if path == iwd else 'enter'} {path} ({_describe(st)})"
    return None


def _allowed(st: os.stat_result, uid: int | None, gids: set[int], need: int) -> bool:
    """Whether ``owner`` (``uid``; None: not a user of this machine) has ``need`` (user bits) on ``st``."""
    if uid == 0:
        return True
    if uid is None:  # a name this machine does not know (the schedd elsewhere, or in a chroot): which
        # uid it has cannot be told, but it is not root's, whose jobs a schedd refuses
        return st.st_uid != 0 or st.st_mode & (need >> 6) == need >> 6
    if st.st_uid == uid:
        return st.st_mode & need == need
    if st.st_gid in gids:
        return st.st_mode & (need >> 3) == need >> 3
    return st.st_mode & (need >> 6) == need >> 6


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _describe(st: os.stat_result) -> str:
    return f"{stat.filemode(st.st_mode)} {_name(st.st_uid)}"
