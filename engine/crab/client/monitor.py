"""What a monitor shows of a task beyond ``crab status`` (:mod:`engine.crab.client.status`): a job's
output files, report and ClassAd, and the DAG's log as it grows.

Cheap enough to call on every refresh: text files are read from their end, at most
:data:`MAX_TEXT` bytes, and a followed log only from where the last read stopped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import classad2

from engine.crab.taskworker.dagman_creator import DAG_FILE
from engine.crab.wn import fjr
from engine.schedd.api import Schedd

MAX_TEXT = 64 * 1024
# The names Job.submit gives each attempt's files (dagman_creator.submit_template).
STDOUT = "job_out.{job}.{retry}.txt"
STDERR = "job_err.{job}.{retry}.txt"
USER_LOG = "job_log.{job}"


@dataclass(frozen=True)
class JobFiles:
    """Where one attempt of a job left its output (the paths need not exist yet)."""

    stdout: str
    stderr: str
    report: str  # the framework job report, jobReport.json.<id>.<crab_retry>
    user_log: str  # the job's HTCondor user log, every attempt in one file


def job_files(task_dir: str, job_id: str, crab_retry: int) -> JobFiles:
    return JobFiles(os.path.join(task_dir, STDOUT.format(job=job_id, retry=crab_retry)),
                    os.path.join(task_dir, STDERR.format(job=job_id, retry=crab_retry)),
                    os.path.join(task_dir, f"{fjr.FJR_NAME}.{job_id}.{crab_retry}"),
                    os.path.join(task_dir, USER_LOG.format(job=job_id)))


def dagman_out(task_dir: str) -> str:
    """The task DAG's ``.dagman.out``."""
    return os.path.join(task_dir, DAG_FILE + ".dagman.out")


def dag_file(task_dir: str) -> str:
    return os.path.join(task_dir, DAG_FILE)


def read_tail(path: str, limit: int = MAX_TEXT) -> str | None:
    """The end of a text file (whole lines, at most ``limit`` bytes); None if it does not exist."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            data = f.read(limit)
    except FileNotFoundError:
        return None
    if size > limit:
        data = data[data.find(b"\n") + 1:]
    return data.decode("utf-8", errors="replace")


def report_text(path: str) -> str | None:
    """A framework job report as indented JSON; a report that does not validate as the reason
    followed by its raw text; None if there is none (yet)."""
    if not os.path.exists(path):
        return None
    try:
        return json.dumps(fjr.read_report(path), indent=2)
    except fjr.FJRError as e:
        return f"{e}\n\n{read_tail(path) or ''}"


def job_ad(schedd: Schedd, task_name: str, job_id: str) -> tuple[classad2.ClassAd | None, str]:
    """The ClassAd of the job's latest HTCondor job and where it was found: ``queue``,
    ``history`` or ``""`` (not submitted yet)."""
    constraint = f"CRAB_ReqName == {json.dumps(task_name)} && CRAB_Id == {json.dumps(job_id)}"
    queued = schedd.query(constraint)
    if queued:
        return max(queued, key=lambda ad: (ad.get("ClusterId", 0), ad.get("ProcId", 0))), "queue"
    done = schedd.history(constraint, match=1)
    return (done[0], "history") if done else (None, "")


class LogFollower:
    """The lines appended to a log since the last :meth:`read`.  The first read gives the last
    ``backlog`` bytes; a file replaced or cut short (a new DAGMan run) is read again from its top."""

    def __init__(self, path: str, backlog: int = MAX_TEXT) -> None:
        self.path = path
        self.backlog = backlog
        self._inode: int | None = None
        self._offset = 0
        self._partial = b""

    def read(self) -> list[str]:
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return []
        with f:
            st = os.fstat(f.fileno())
            skip = False
            if st.st_ino != self._inode or st.st_size < self._offset:
                start = 0 if self._inode is not None else max(0, st.st_size - self.backlog)
                skip = start > 0  # begin at a line start
                self._inode, self._offset, self._partial = st.st_ino, start, b""
            f.seek(self._offset)
            data = f.read()
        self._offset += len(data)
        if skip:
            data = data[data.find(b"\n") + 1:]
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        return [line.decode("utf-8", errors="replace") for line in lines]
