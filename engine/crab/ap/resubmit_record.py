"""The resubmit record: what each ``crab resubmit`` of a task asked for, as PreJob reads it.

Standard library only: PreJob imports this module when DAGMan runs it as a script.

The record is ``resubmit_record.json`` in the task directory, written only by the task worker
(:func:`write_entry`) and read by PreJob (:func:`read_record`).  It plays the part of CRAB's
``CRAB_ResubmitRecord`` ad and ``rrn_info/resubmit_record.json`` (seed 003) together with the
parameters DagmanResubmitter edits into the DAGMan job's ad (``CRAB_ResubmitList``,
``CRAB_SiteWhitelist``/``Blacklist``, ``MaxWallTimeMinsRun``, ``CRAB_RequestedMemory``,
``JobPrio``).  It keeps every epoch, not only the newest, because a job resubmitted in epoch 1
must keep epoch 1's parameters on its automatic retries after an epoch 2 that does not list it
(CRAB keeps them per retry in ``resubmit_info``)::

    {"schema": "crabtui.resubmit_record/1",
     "epochs": [{"epoch": 1, "job_ids": ["3"], "memory_mb": 3000, "runtime_min": 1250,
                 "site_whitelist": [], "site_blacklist": ["T2_DE_DESY"], "priority": 10,
                 "requested_at": 1700000000.0, "pool_sites": ["T2_CH_CERN"]}]}

``pool_sites`` (absent for a task whose pool is not known) are the sites of the pool whose slots hold
the listed jobs with the entry's memory: they govern those jobs only, the others keep the task's.

A job's epoch (:class:`engine.crab.ap.retry_policy.JobState` ``epoch``) says which entry governs it:
PreJob applies the newest entry listing the job when it is newer than the job's epoch
(:func:`apply_record`, idempotent, as AdjustSites' ``resetRRN``), and then takes the memory,
runtime, site lists and priority of the entry of the job's epoch; epoch 0 means the task's own.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

from engine.atomic import write_atomically
from engine.crab.ap.retry_policy import JobState, Params, resubmit

RECORD_FILE = "resubmit_record.json"
SCHEMA = "crabtui.resubmit_record/1"


class ResubmitRecordError(Exception):
    """A resubmit record that cannot be read, or that contradicts a job's state."""


@dataclass(frozen=True)
class ResubmitEntry:
    """One ``crab resubmit``: its epoch, the jobs it resubmits and their new parameters."""

    epoch: int
    job_ids: tuple[str, ...]
    memory_mb: int
    runtime_min: int
    site_whitelist: tuple[str, ...]
    site_blacklist: tuple[str, ...]
    priority: int
    requested_at: float
    pool_sites: tuple[str, ...] | None = None

    @property
    def params(self) -> Params:
        """What the listed jobs' next attempt asks for (no site to avoid: a fresh start)."""
        return Params(self.memory_mb, self.runtime_min)


def record_path(task_dir: str) -> str:
    return os.path.join(task_dir, RECORD_FILE)


def read_record(task_dir: str) -> list[ResubmitEntry]:
    """The task's resubmissions, oldest first; none if it was never resubmitted."""
    path = record_path(task_dir)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return []
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise ResubmitRecordError(f"{path}: cannot read the resubmit record: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("epochs"), list):
        raise ResubmitRecordError(f"{path}: not a resubmit record of schema {SCHEMA} "
                                  "(an object with 'schema' and a list 'epochs')")
    return [_entry(item, path, i) for i, item in enumerate(data["epochs"])]


def write_entry(task_dir: str, entry: ResubmitEntry) -> None:
    """Add ``entry`` to the record, replacing one of the same epoch (a worker that died half-way
    writes it again), atomically."""
    entries = [e for e in read_record(task_dir) if e.epoch != entry.epoch] + [entry]
    entries.sort(key=lambda e: e.epoch)
    data = {"schema": SCHEMA, "epochs": [
        {"epoch": e.epoch, "job_ids": list(e.job_ids), "memory_mb": e.memory_mb, "runtime_min": e.runtime_min,
         "site_whitelist": list(e.site_whitelist), "site_blacklist": list(e.site_blacklist),
         "priority": e.priority, "requested_at": e.requested_at,
         **({} if e.pool_sites is None else {"pool_sites": list(e.pool_sites)})} for e in entries]}
    write_atomically(record_path(task_dir), json.dumps(data, indent=1) + "\n")


def next_epoch(entries: list[ResubmitEntry]) -> int:
    return max((e.epoch for e in entries), default=0) + 1


def apply_record(state: JobState, entries: list[ResubmitEntry]) -> tuple[JobState, ResubmitEntry | None]:
    """PreJob: enter the newest epoch that lists the job, if the job is not in it yet (RRN 0, the
    entry's memory and runtime; :func:`engine.crab.ap.retry_policy.resubmit`), and return the state
    with the entry that governs it (None: epoch 0, the task's own parameters)."""
    listing = [e for e in entries if state.job_id in e.job_ids]
    if listing and listing[-1].epoch > state.epoch:
        state = resubmit(state, listing[-1].epoch, listing[-1].params)
    if state.epoch == 0:
        return state, None
    for entry in listing:
        if entry.epoch == state.epoch:
            return state, entry
    raise ResubmitRecordError(f"job {state.job_id} is in resubmit epoch {state.epoch}, but the resubmit record "
                              f"has no such epoch listing it")


def _entry(item: Any, path: str, i: int) -> ResubmitEntry:
    def fail(message: str) -> ResubmitRecordError:
        return ResubmitRecordError(f"{path}: epochs[{i}]: {message}")

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def names(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(s, str) and s for s in v)

    checks = {"epoch": (lambda v: is_int(v) and v >= 1, "an integer >= 1"),
              "job_ids": (names, "a list of job ids"),
              "memory_mb": (lambda v: is_int(v) and v >= 1, "an integer >= 1"),
              "runtime_min": (lambda v: is_int(v) and v >= 1, "an integer >= 1"),
              "site_whitelist": (names, "a list of site names"),
              "site_blacklist": (names, "a list of site names"),
              "priority": (is_int, "an integer"),
              "requested_at": (lambda v: (is_int(v) or isinstance(v, float)) and math.isfinite(v),
                               "a UNIX time")}
    optional = {"pool_sites": (names, "a list of site names")}
    if not isinstance(item, dict):
        raise fail("must be a JSON object")
    if not set(checks) <= set(item) <= set(checks) | set(optional):
        extra, missing = sorted(set(item) - set(checks) - set(optional)), sorted(set(checks) - set(item))
        raise fail(f"unknown field {extra[0]}" if extra else f"field {missing[0]} is missing")
    for name, (test, what) in {**checks, **optional}.items():
        if name in item and not test(item[name]):
            raise fail(f"field {name} must be {what}, not {json.dumps(item[name])[:60]}")
    return ResubmitEntry(**{k: tuple(v) if isinstance(v, list) else v for k, v in item.items()})
