"""Automatic splitting (``Data.splitting = "Automatic"``): the user gives the minutes a job should
run (``Data.unitsPerJob``) and CRAB finds the splitting, in three stages.

* Probes (:func:`probe_split`): jobs ``0-1`` ... ``0-N`` each run the payload for at most
  ``probe_runtime_mins`` on a sample of the input, with no output transferred. Their job reports
  give the event throughput and the output bytes per event (:func:`probe_estimate`).
* Processing (:func:`processing_split`): the whole dataset, split EventAwareLumiBased so that a
  job is expected to take the target: events per job = 0.75 x minutes x 60 x throughput, capped
  so that its output stays within ``output_size_maximum`` (:func:`events_per_job`). Jobs ``1`` ...
  ``N`` begin no lumi after ``minutes`` (cmsRun's ``--stop-after``) and have no automatic retries.
* Tails (:func:`tail_stages`, :func:`tail_split`): when 50, 80 and 100 % of the processing jobs
  are done (one stage at 100 % for at most ``min_tail_size`` of them), the lumis the finished jobs
  left (:func:`missing_lumis`) and every lumi of the failed ones are split again, into jobs
  ``<stage>-1``, ``<stage>-2`` ... of max(45 min, 0.2 x minutes), with no time limit and normal
  retries.

Each lumi is in one processing job; a finished job's missing lumis and a failed job's lumis are
in one tail job, as long as each processing job is handed to one tail stage (the caller keeps the
handled ids, CRAB's ``automatic_splitting/processed``). So every lumi is processed once by a
successful job.

Sources: CRABServer ``TaskWorker/Actions/Splitter.py`` (probes), ``PreDAG.py`` (processing, tails),
``PostJob.py`` (throughputs, missing lumis); crab-spec section 4. Where crabtui differs: CRAB
truncates the target to whole minutes (``int(0.75 x minutes)``) before multiplying, crabtui does
not, so that runtimes scaled down for a demo keep their proportions; the probes' file shuffle is
seeded (by the task), so a task splits the same every time.

Standard library only: DAGMan's PRE and POST scripts call it on a real submit host.
"""

from __future__ import annotations

import difflib
import math
import os
import random
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from engine.crab.taskworker.datasets import Dataset
from engine.crab.taskworker.splitting import (MASK_PARAMETERS, MAX_JOBS_PER_TASK, JobSplit, LumiMask, SplittingError,
                                              split)
from engine.crab.wn import fjr

__all__ = [
    "KNOBS", "PROBE_STAGE", "AutomaticConfig", "AutomaticSplittingError", "Estimate", "TailStage", "events_per_job",
    "missing_lumis", "probe_estimate", "probe_figures", "probe_split", "processing_split", "stage_of",
    "tail_lumis", "tail_split", "tail_stages",
]

PROBE_STAGE = 0
"""Probe ids are ``0-1`` ... (CRAB's ``parentDag`` 0); tail stages count from 1."""

Lumis = Mapping[int, Iterable[int]]
"""run -> lumi numbers: the FJR's ``runs`` shape with int runs."""

_CRAB_NAMES = {
    "min_runtime_mins": "minAutomaticRuntimeMins",
    "num_probes": "numAutomaticProbes",
    "probe_runtime_mins": "automaticProbeRuntimeMins",
    "tail_runtime_minimum_mins": "automaticTailRuntimeMinimumMins",
    "tail_runtime_fraction": "automaticTailRuntimeFraction",
    "processing_overhead_mins": "automaticProcessingOverheadMins",
    "output_size_maximum": "automaticOutputSizeMaximum",
    "min_tail_size": "minAutomaticTailSize",
    "tail_triggers": "minAutomaticTailTriggers",
    "runtime_margin": "automaticRuntimeMargin",  # a literal 0.75 in CRAB's PreDAG
    "max_jobs_per_task": "maxJobsPerTask",
}


KNOBS = tuple(_CRAB_NAMES.values())
"""The knobs' names in CRAB's TaskWorker configuration (``<state dir>/taskworker.toml``,
:mod:`engine.crab.taskworker.config`)."""


class AutomaticSplittingError(SplittingError):
    """Automatic splitting cannot go on; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class AutomaticConfig:
    """The knobs of automatic splitting, with CRAB's defaults (its TaskWorker configuration; the
    names in :meth:`from_crab` are CRAB's, but for ``automaticRuntimeMargin``, a literal in its
    PreDAG). A demo scales the runtimes down."""

    min_runtime_mins: float = 180
    """The least ``Data.unitsPerJob`` accepted (:meth:`check_runtime`)."""
    num_probes: int = 5
    probe_runtime_mins: float = 15
    """A probe's cmsRun begins no lumi after this (CMSSW's ``maxSecondsUntilRampdown``)."""
    tail_runtime_minimum_mins: float = 45
    tail_runtime_fraction: float = 0.2
    """A tail job's target is max(``tail_runtime_minimum_mins``, this x the processing target)."""
    processing_overhead_mins: float = 60
    """A processing job's wall limit is its target plus this."""
    output_size_maximum: int = 5_000_000_000
    """Bytes of output a job may write: caps its events at this / bytes per event."""
    min_tail_size: int = 100
    """More processing jobs than this get a tail stage at each of ``tail_triggers``, else one at 100 %."""
    tail_triggers: tuple[int, ...] = (50, 80, 100)
    """Percent of the processing jobs done when tail stage 1, 2, ... fires."""
    runtime_margin: float = 0.75
    """Jobs are split for this fraction of the target (PreDAG's 33 % margin)."""
    max_jobs_per_task: int = MAX_JOBS_PER_TASK

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "tail_triggers":
                if (not isinstance(value, tuple) or not value
                        or not all(type(p) is int and 0 < p <= 100 for p in value)
                        or list(value) != sorted(set(value)) or value[-1] != 100):
                    self._fail(f.name, "must be ascending percentages in 1..100 ending with 100, such as "
                                       "[50, 80, 100]", value)
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                self._fail(f.name, "must be a number", value)
            elif f.type == "int" and type(value) is not int:
                if not float(value).is_integer():
                    self._fail(f.name, "must be a whole number", value)
                object.__setattr__(self, f.name, int(value))  # 5e9 as CRAB writes it
            elif value < 0 if f.name in ("processing_overhead_mins", "min_tail_size") else value <= 0:
                self._fail(f.name, "must be >= 0" if f.name in ("processing_overhead_mins", "min_tail_size")
                           else "must be > 0", value)
        if self.runtime_margin > 1 or self.tail_runtime_fraction > 1:
            name = "runtime_margin" if self.runtime_margin > 1 else "tail_runtime_fraction"
            self._fail(name, "must be a fraction, at most 1", getattr(self, name))

    @staticmethod
    def _fail(name: str, message: str, value: object) -> None:
        raise ValueError(f"{_CRAB_NAMES[name]}: {message}, got {value!r}")

    @classmethod
    def from_crab(cls, values: Mapping[str, Any]) -> AutomaticConfig:
        """The knobs given under CRAB's names (``numAutomaticProbes``, ...), the rest at CRAB's
        defaults; ValueError names an unknown or invalid one."""
        by_crab = {crab: name for name, crab in _CRAB_NAMES.items()}
        given = {}
        for key, value in values.items():
            if key not in by_crab:
                close = difflib.get_close_matches(key, by_crab, n=1)
                raise ValueError(f"{key}: not a knob of automatic splitting"
                                 + (f'; did you mean "{close[0]}"?' if close else "")
                                 + " The knobs are " + ", ".join(by_crab))
            given[by_crab[key]] = tuple(value) if key == "minAutomaticTailTriggers" and isinstance(value, list) \
                else value
        return cls(**given)

    def crab(self) -> dict[str, Any]:
        """The knobs under CRAB's names, as :meth:`from_crab` reads them (JSON-ready)."""
        return {crab: list(getattr(self, name)) if name == "tail_triggers" else getattr(self, name)
                for name, crab in _CRAB_NAMES.items()}

    def check_runtime(self, minutes: float) -> None:
        """Refuse a target under ``min_runtime_mins`` with CRAB's message (its Splitter's check)."""
        if minutes < self.min_runtime_mins:
            raise AutomaticSplittingError(
                f"Minimum runtime requirement for automatic splitting is {self.min_runtime_mins:g} minutes. "
                f"Raise Data.unitsPerJob from {minutes:g}.")

    @property
    def probe_stop_after_s(self) -> float:
        """cmsRun's ``--stop-after`` for a probe."""
        return self.probe_runtime_mins * 60

    def processing_wall_mins(self, minutes: float) -> float:
        """A processing job's wall limit for a target of ``minutes`` (its cmsRun stops at ``minutes``)."""
        return minutes + self.processing_overhead_mins

    def tail_runtime_mins(self, minutes: float) -> float:
        """A tail job's target for a processing target of ``minutes``."""
        return max(self.tail_runtime_minimum_mins, self.tail_runtime_fraction * minutes)


def stage_of(job_id: str) -> str:
    """``probe``, ``processing`` or ``tail``, from the id's form (CRAB's PreJob stage argument)."""
    head, dash, _ = job_id.partition("-")
    if not dash:
        return "processing"
    return "probe" if head == str(PROBE_STAGE) else "tail"


# ------------------------------------------------------------------------------------ probes

def probe_split(dataset: Dataset, config: AutomaticConfig, *, seed: str,
                lumi_mask: LumiMask | None = None, mask_from: Sequence[str] = MASK_PARAMETERS) -> list[JobSplit]:
    """The probe jobs ``0-1`` ... ``0-<num_probes>`` (fewer for a dataset with fewer files).

    As CRAB's Splitter: FileBased with ceil(files / num_probes) files a job (within a group of blocks at the same sites), the
    first ``num_probes`` jobs kept, each with its files shuffled (by ``seed``, the task's name), so
    that a probe that runs out of time has read a sample of them rather than their first ones.
    """
    files = dataset.nfiles if lumi_mask is None else len(split(
        dataset, algorithm="FileBased", units_per_job=1, lumi_mask=lumi_mask, max_jobs=sys.maxsize,
        mask_from=mask_from))
    jobs = split(dataset, algorithm="FileBased", units_per_job=math.ceil(files / config.num_probes),
                 lumi_mask=lumi_mask, max_jobs=sys.maxsize, mask_from=mask_from)
    rng = random.Random(seed)
    probes = []
    for i, job in enumerate(jobs[:config.num_probes], start=1):
        shuffled = list(job.files)
        rng.shuffle(shuffled)
        probes.append(replace(job, id=f"{PROBE_STAGE}-{i}", files=tuple(shuffled)))
    return probes


@dataclass(frozen=True, slots=True)
class Estimate:
    """What the probes measured, averaged over those that succeeded."""

    throughput: float
    """Events per second (the reports' ``EventThroughput``)."""
    event_size: float
    """Output bytes per input event."""
    probes: tuple[str, ...]
    """The probes averaged."""


def probe_figures(summary: fjr.Summary) -> tuple[float, int] | None:
    """``(EventThroughput, output bytes per event)`` of a probe's report, as CRAB's PostJob saves
    them (``sum(sizes) // events + 1``); None for a failed probe or one without these figures."""
    if summary.exit_code != 0 or not summary.throughput or summary.events <= 0:
        return None
    return summary.throughput, summary.output_size // summary.events + 1


def probe_estimate(reports: Mapping[str, str | os.PathLike[str] | None]) -> Estimate:
    """The mean throughput and event size of the probes' reports (probe id -> report path; None
    for a probe that left none). AutomaticSplittingError, naming each probe and what it lacked,
    if no probe gives figures: the task cannot be split then (CRAB fails it)."""
    figures, why = {}, []
    for job_id, path in reports.items():
        if path is None:
            why.append(f"{job_id}: no job report")
            continue
        try:
            summary = fjr.summarize(fjr.read_report(path))
        except fjr.FJRError as e:
            why.append(f"{job_id}: {e}")
            continue
        got = probe_figures(summary)
        if got is not None:
            figures[job_id] = got
        elif summary.exit_code:
            why.append(f"{job_id}: failed with exit code {summary.exit_code}")
        else:
            why.append(f"{job_id}: processed no event")
    if not figures:
        detail = "; ".join(why) if why else "no probe job ran"
        raise AutomaticSplittingError(
            f"Splitting failed because all probe jobs failed or anyhow failed to provide estimates ({detail}). "
            f"Look at the probe jobs' output (crabtui task status --long), or choose another Data.splitting.")
    n = len(figures)
    return Estimate(throughput=sum(t for t, _ in figures.values()) / n,
                    event_size=sum(s for _, s in figures.values()) / n, probes=tuple(figures))


# ------------------------------------------------------------------------------------ processing

def events_per_job(config: AutomaticConfig, minutes: float, estimate: Estimate) -> int:
    """Events a job of ``minutes`` is given: ``runtime_margin`` x minutes x 60 x throughput,
    capped at ``output_size_maximum`` / event size; at least 1 (a job gets at least one lumi)."""
    by_time = int(config.runtime_margin * minutes * 60 * estimate.throughput)
    by_size = int(config.output_size_maximum / estimate.event_size)
    return max(1, min(by_time, by_size))


def processing_split(dataset: Dataset, config: AutomaticConfig, minutes: float, estimate: Estimate, *,
                     lumi_mask: LumiMask | None = None, mask_from: Sequence[str] = MASK_PARAMETERS) -> list[JobSplit]:
    """The processing jobs ``1`` ... ``N``: ``dataset`` (within ``lumi_mask``) split
    EventAwareLumiBased for jobs of ``minutes``. SplittingError beyond ``max_jobs_per_task``."""
    return split(dataset, algorithm="EventAwareLumiBased", units_per_job=events_per_job(config, minutes, estimate),
                 lumi_mask=lumi_mask, max_jobs=config.max_jobs_per_task)


# ------------------------------------------------------------------------------------ tails

@dataclass(frozen=True, slots=True)
class TailStage:
    """One tail stage: jobs ``<number>-M`` in ``RunJobs<number>.subdag``."""

    number: int
    completion: int
    """How many processing jobs are finished or failed when it fires."""

    def fires(self, done: int) -> bool:
        return done >= self.completion


def tail_stages(config: AutomaticConfig, processing_jobs: int) -> tuple[TailStage, ...]:
    """The tail stages of ``processing_jobs`` jobs: one per trigger percentage (``n x pct // 100``
    jobs done), or for at most ``min_tail_size`` jobs a single one when all are done."""
    if processing_jobs <= config.min_tail_size:
        return (TailStage(1, processing_jobs),)
    return tuple(TailStage(i, processing_jobs * pct // 100) for i, pct in enumerate(config.tail_triggers, start=1))


def missing_lumis(given: Lumis, summary: fjr.Summary) -> dict[int, list[int]]:
    """The lumis a finished processing job was given and its report does not list as processed:
    those a tail must process (CRAB's PostJob, ``automatic_splitting/missing_lumis/<id>``).

    The difference, not the report's own ``unprocessed`` list, so that a payload which reports
    no such list (a user's script) loses no lumi; for crabtui's cmsRun the two are the same."""
    missing = {}
    for run, numbers in given.items():
        left = set(numbers).difference(summary.lumis.get(run, ()))
        if left:
            missing[run] = sorted(left)
    return dict(sorted(missing.items()))


def tail_lumis(missing: Iterable[Lumis], failed: Iterable[Lumis]) -> dict[int, list[int]]:
    """What a tail stage splits: the missing lumis of the finished processing jobs it handles and
    every lumi of the failed ones."""
    union: dict[int, set[int]] = {}
    for lumis in (*missing, *failed):
        for run, numbers in lumis.items():
            union.setdefault(run, set()).update(numbers)
    return {run: sorted(union[run]) for run in sorted(union) if union[run]}


def _ranges(lumis: Lumis) -> dict[int, list[tuple[int, int]]]:
    """run -> inclusive ranges of consecutive lumis (the lumi mask :func:`split` takes)."""
    mask = {}
    for run, numbers in lumis.items():
        ranges: list[tuple[int, int]] = []
        for n in sorted(set(numbers)):
            if ranges and ranges[-1][1] + 1 == n:
                ranges[-1] = (ranges[-1][0], n)
            else:
                ranges.append((n, n))
        if ranges:
            mask[run] = ranges
    return mask


def tail_split(dataset: Dataset, config: AutomaticConfig, minutes: float, estimate: Estimate, lumis: Lumis,
               stage: int) -> list[JobSplit]:
    """Tail stage ``stage``'s jobs ``<stage>-1`` ...: ``lumis`` (:func:`tail_lumis`) split
    EventAwareLumiBased for jobs of :meth:`AutomaticConfig.tail_runtime_mins`; no job when there is
    nothing left to process."""
    if stage <= PROBE_STAGE:
        raise ValueError(f"tail stages count from 1, not {stage}")
    mask = _ranges(lumis)
    if not mask:
        return []
    units = events_per_job(config, config.tail_runtime_mins(minutes), estimate)
    return split(dataset, algorithm="EventAwareLumiBased", units_per_job=units, lumi_mask=mask,
                 max_jobs=config.max_jobs_per_task, id_prefix=f"{stage}-")
