"""``crab getoutput`` and ``crab getlog``: copy a task's staged-out outputs, or its jobs' logs, to
the user's machine (CRABClient ``Commands/getcommand.py``, ``getoutput.py``, ``getlog.py`` and
``remote_copy.py``).

Which jobs: those in a state with something to retrieve (CRAB's ``processAndStoreJobIds``:
transferring, cooloff, held, finished, failed); ``--jobids`` naming another is refused in CRAB's
words.  Outputs are the files a job's stage-out landed at the storage site (the transfer records
of :mod:`engine.crab.ap.stageout`), so a job whose transfer has not ended has none yet.  Logs are
each attempt's ``job_out.<id>.<retry>.txt``, the scheduler's short logs of ``crab getlog
--short``: crabtui's jobs transfer no log tarball to storage.

A copy goes through a temporary file and a rename; with ``--checksum yes`` (CRAB's default) it
is compared with its source by ADLER32, as CRAB's copy checks it.  A file already at the
destination with the source's size is skipped, as ``remote_copy`` skips it.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.atomic import copy_atomically
from engine.crab.ap.stageout import transfer_files
from engine.crab.client.monitor import STDOUT
from engine.crab.client.status import JobView

__all__ = ["RETRIEVABLE", "RetrieveError", "Retrievable", "adler32", "copy", "log_files", "output_files",
           "parse_quantity", "select"]

RETRIEVABLE = ("transferring", "cooloff", "held", "finished", "failed")  # getcommand.processAndStoreJobIds


class RetrieveError(Exception):
    """An option or job CRAB's client would refuse; the message is CRAB's, in one line, and
    ``exception`` the CRABClient exception getcommand raises for it (what a script's crabCommand
    sees)."""

    def __init__(self, message: str, exception: str = "ConfigurationException"):
        super().__init__(message)
        self.exception = exception


@dataclass(frozen=True, slots=True)
class Retrievable:
    job: str
    source: str  # a path on this machine (the storage site's file, or the task's log)
    name: str  # the file's name at the destination
    lfn: str | None = None  # an output's logical file name


def parse_quantity(text: str | None) -> int | None:
    """``--quantity N``, ``all`` or ``-1`` (what crab's getcommand turns ``all`` into, and sends on
    as such) (None: all).  0, or a number below -1, asks for no file: crab sends it on as the
    server's limit, whose query keeps the rows numbered up to it, none, and says "No files to
    retrieve."."""
    if text is None or text in ("all", "-1"):
        return None
    if not re.fullmatch(r"-?[0-9]+", text):
        raise RetrieveError(f"--quantity takes a number of files, or 'all' (or -1) (not {text!r})")
    return max(int(text), 0)


def select(jobs: Sequence[JobView], wanted: Iterable[str] | None) -> list[JobView]:
    """The jobs to retrieve from: those ``wanted`` (each must be in a state to retrieve from), or
    every such job."""
    by_id = {j.id: j for j in jobs}
    if wanted is None:
        return [j for j in jobs if j.state in RETRIEVABLE]
    chosen = []
    for job in wanted:
        if job not in by_id or by_id[job].state not in RETRIEVABLE:
            raise RetrieveError(f"The job with id {job} is not in a valid state to retrieve output files")
        chosen.append(by_id[job])
    return chosen


def output_files(task_dir: str, jobs: Iterable[JobView]) -> list[Retrievable]:
    """The outputs each job's stage-out landed, from its latest attempt that landed them all."""
    found = []
    for job in jobs:
        for retry in range(job.crab_retry, -1, -1):
            files = transfer_files(task_dir, job.id, retry)
            if files and all(os.path.isfile(f["pfn"]) for f in files):
                found += [Retrievable(job.id, f["pfn"], os.path.basename(f["lfn"]), f["lfn"]) for f in files]
                break
    return found


def log_files(task_dir: str, jobs: Iterable[JobView]) -> list[Retrievable]:
    """Each attempt's stdout, ``job_out.<id>.<retry>.txt``, that the task holds."""
    found = []
    for job in jobs:
        for retry in range(job.crab_retry + 1):
            name = STDOUT.format(job=job.id, retry=retry)
            path = os.path.join(task_dir, name)
            if os.path.isfile(path):
                found.append(Retrievable(job.id, path, name))
    return found


def adler32(path: str) -> int:
    value = 1
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            value = zlib.adler32(block, value)
    return value


def copy(item: Retrievable, destination: str, *, checksum: bool) -> bool:
    """Copy ``item`` into ``destination``; False if a file of its size is there already (skipped).
    Raises OSError, or RetrieveError for a copy whose checksum differs (removed)."""
    target = os.path.join(destination, item.name)
    if os.path.isfile(target) and os.path.getsize(target) == os.path.getsize(item.source):
        return False
    copy_atomically(item.source, target)
    if checksum and adler32(target) != adler32(item.source):
        os.unlink(target)
        raise RetrieveError(f"{item.name}: the copy's ADLER32 checksum differs from the source's")
    return True

