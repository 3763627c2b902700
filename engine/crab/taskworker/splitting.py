"""Job splitting: how CRAB cuts an input dataset into jobs.

CRAB's TaskWorker hands the dataset to WMCore's job splitting with ``Data.splitting``,
``Data.unitsPerJob`` and ``Data.totalUnits``; :func:`split` does the same for three algorithms:

* ``FileBased``: ``unitsPerJob`` files a job; ``totalUnits`` caps the files.
* ``LumiBased``: ``unitsPerJob`` lumi sections a job; ``totalUnits`` caps the lumis.
* ``EventAwareLumiBased``: about ``unitsPerJob`` events a job, in whole lumis; ``totalUnits`` caps
  the events (the lumi that reaches the cap is the last one taken, as in WMCore).
* ``EventBased`` (PrivateMC): ``unitsPerJob`` events a job from the generated ``MCFakeFile``
  (:mod:`engine.crab.taskworker.task_input`), ``ceil(unitsPerJob / events per lumi)`` of its lumis a
  job, which is how WMCore's EventBased numbers a generated job's lumis.

``totalUnits`` as CRAB's Splitter reads it: 0 or below means all; a fraction below 1 is that share
of the dataset's files, lumis or events, rounded half up (at least 1: CRAB's rounding to 0 would
mean "all"); from 1 up, its whole part.

Rules, as WMCore applies them with CRAB's arguments (``splitOnRun`` and
``halt_job_on_file_boundaries`` off, ``applyLumiCorrection`` on):

* Blocks are grouped by their set of sites, groups in order of first appearance (WMCore's
  ``sortByLocation``), and each group is split as one: a job can span blocks at the same sites,
  never blocks at different ones, so it can run where all its files are.
* A lumi mask keeps only the listed (run, lumi); a file left with no lumi is in no job.
* A lumi is never split between jobs. A lumi DBS lists in several files (split across them) is
  processed once, by the job of its first part, which also reads the files of the other parts
  (WMCore's LumiChecker); its events are the sum of its parts'. FileBased jobs read whole files,
  so there each part is read by the job of its own file, as in CRAB.
* Groups are taken in that order, and blocks, files and lumis within a group in dataset order;
  jobs are numbered from 1 in that order. ``totalUnits`` counts files in dataset order (WMCore's
  FileBased caps the whole file list before grouping), lumis and events in group order (LumiBased
  and EventAwareLumiBased stop in the middle of the groups).

Deliberate differences from WMCore: EventAwareLumiBased counts each lumi's own events, which the
catalogue knows, where WMCore assumes every lumi of a file holds the file's average; and files are
not re-sorted (WMCore sorts by lowest run or by LFN, and its groups by their site sets), so that
the order is the catalogue's.

Automatic splitting re-splits with EventAwareLumiBased: the processing stage on the whole
dataset, each tail on the lumis earlier jobs left, passed as ``lumi_mask`` with ``id_prefix``
``"1-"``, ``"2-"``... :func:`event_aware_starts` is the packing rule alone, for any run of lumis.

Standard library only: DAGMan's PRE and POST scripts may import it. A million lumis split in
well under a second: columns are handled with C-level ``array``/``itertools`` operations and
bisection, and Python loops run per job or per span of consecutive lumis, not per lumi.
"""

from __future__ import annotations

import math
import operator
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, repeat

from engine.crab.taskworker.datasets import Block, Dataset

__all__ = ["ALGORITHMS", "MASK_PARAMETERS", "MAX_JOBS_PER_TASK", "JobSplit", "SplittingError", "event_aware_starts", "split"]

ALGORITHMS = ("FileBased", "LumiBased", "EventAwareLumiBased")
"""What :func:`split` knows of a dataset, besides EventBased for generated events; Automatic is
built from FileBased probes and EventAwareLumiBased."""
_UNITS = {"FileBased": "files", "LumiBased": "lumis"}  # what Data.totalUnits counts; else events

MAX_JOBS_PER_TASK = 10_000  # CRABServer TaskWorker config maxJobsPerTask
MASK_PARAMETERS = ("Data.lumiMask", "Data.runRange")  # what can make a task's lumi mask

LumiMask = Mapping[int, Iterable[Sequence[int]]]
"""run -> [first, last] lumi ranges, inclusive: the CMS lumi-JSON shape with int runs."""


class SplittingError(Exception):
    """The dataset cannot be split as asked; the message says why and what to change."""


@dataclass(frozen=True, slots=True)
class JobSplit:
    """One job's input: files of blocks at the same sites, the lumis to process in them, where it can run.

    The lumis are kept as packed ``(run, first, last)`` triples of native 32-bit ints in dataset
    order (``ranges``), 12 bytes a range instead of ~100 for tuples of ints, so 100,000 jobs stay
    small; :meth:`lumi_mask` gives them in the CMS lumi-JSON shape.
    """

    id: str
    """"1", "2", ... as CRAB numbers jobs (with :func:`split`'s ``id_prefix`` in front)."""
    files: tuple[str, ...]
    """LFNs in dataset order, then any other files holding parts of the job's split lumis."""
    ranges: bytes
    nlumis: int
    events: int
    """Events in the job's lumis, counting every part of a split lumi."""
    sites: tuple[str, ...]
    """Where every file of the job is: its blocks' sites (with those of any split lumi's other parts), sorted."""

    def lumi_mask(self) -> dict[int, list[tuple[int, int]]]:
        """run -> merged inclusive lumi ranges, runs ascending."""
        flat = array("I")
        flat.frombytes(self.ranges)
        by_run: dict[int, list[tuple[int, int]]] = {}
        for run, first, last in zip(flat[0::3], flat[1::3], flat[2::3]):
            by_run.setdefault(run, []).append((first, last))
        return {run: _merge(by_run[run]) for run in sorted(by_run)}


def _merge(ranges: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """Sorted inclusive ranges with overlapping and adjacent ones joined."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            if last > merged[-1][1]:
                merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    return merged


def event_aware_starts(events: Sequence[int], events_per_job: int) -> list[int]:
    """Where EventAwareLumiBased starts each job in a run of lumis with these ``events``.

    A job takes lumis while their events stay within ``events_per_job``, and always at least one,
    so a lumi with more events than that is a job of its own. Job ``i`` is
    ``[starts[i], starts[i + 1])``, the last ends at ``len(events)``. Bisection on the
    cumulative sums makes it O(jobs x log lumis) after one C-level pass.
    """
    if events_per_job <= 0:
        raise SplittingError(f"events per job must be > 0, not {events_per_job}")
    cumulative = array("Q", accumulate(events, initial=0))
    n = len(events)
    starts: list[int] = []
    start = 0
    while start < n:
        starts.append(start)
        # the last lumi boundary whose cumulative events stay within the target (>= start)
        start = max(bisect_right(cumulative, cumulative[start] + events_per_job, start) - 1, start + 1)
    return starts


def _changes(column: array) -> list[int]:
    """0 and each position whose value differs from the previous one's (C-level loops)."""
    if not column:
        return []
    return [0, *compress(range(1, len(column)), map(operator.ne, column[1:], column))]


def _span_starts(runs: array, numbers: array) -> list[int]:
    """0 and each position whose lumi does not follow the previous one (another run, or not +1).

    Between two starts the lumis are ``run, n, n+1, ...``: one (run, first, last) range.
    """
    if not runs:
        return []
    other_run = map(operator.ne, runs[1:], runs)
    not_next = map(operator.ne, numbers[1:], map(operator.add, numbers, repeat(1)))
    return [0, *compress(range(1, len(runs)), map(operator.or_, other_run, not_next))]


class _Selection:
    """The lumis still to split of blocks at the same sites, as columns in group order (owned, not shared).

    ``files`` holds each lumi's index in ``lfns`` (and ``file_blocks``, the block of each file).
    ``extras`` maps a position to the other parts of its split lumi: (LFN, block) of each;
    ``events`` there already counts them.
    """

    __slots__ = ("blocks", "lfns", "file_blocks", "files", "runs", "numbers", "events", "extras", "_span_starts")

    def __init__(self, block: Block):
        self.blocks = [block]
        self.lfns = [f.lfn for f in block.files]
        self.file_blocks = [block] * len(block.files)
        self.files, self.runs, self.numbers, self.events = array("I"), array("I"), array("I"), array("I")
        for i, f in enumerate(block.files):
            self.files.extend(array("I", [i]) * len(f.lumis))
            self.runs.extend(f.lumis.runs)
            self.numbers.extend(f.lumis.numbers)
            self.events.extend(f.lumis.events)
        self.extras: dict[int, list[tuple[str, Block]]] = {}
        self._span_starts: list[int] | None = None

    def join(self, other: _Selection) -> None:
        """Append ``other``'s lumis (a block at the same sites, before split lumis are looked for)."""
        offset = len(self.lfns)
        self.blocks += other.blocks
        self.lfns += other.lfns
        self.file_blocks += other.file_blocks
        self.files.extend(array("I", map(offset.__add__, other.files)))
        self.runs.extend(other.runs)
        self.numbers.extend(other.numbers)
        self.events.extend(other.events)
        self._span_starts = None

    def __len__(self) -> int:
        return len(self.runs)

    def span_starts(self) -> list[int]:
        """Where each run of consecutive lumis starts; kept until the columns change (the costly pass)."""
        if self._span_starts is None:
            self._span_starts = _span_starts(self.runs, self.numbers)
        return self._span_starts

    def spans(self) -> Iterable[tuple[int, int]]:
        """[start, end) of each run of consecutive lumis."""
        starts = self.span_starts()
        return zip(starts, [*starts[1:], len(self)])

    def keep(self, pieces: list[tuple[int, int]]) -> None:
        """Keep only the lumis in these [start, end) pieces (ascending, disjoint)."""
        columns = (self.files, self.runs, self.numbers, self.events)
        kept = tuple(array(column.typecode) for column in columns)
        for start, end in pieces:
            for new, old in zip(kept, columns):
                new.extend(old[start:end])
        self.files, self.runs, self.numbers, self.events = kept
        self._span_starts = None

    def truncate(self, n: int) -> None:
        if n < len(self):
            self.keep([(0, n)])


def _normalise(mask: LumiMask) -> dict[int, list[tuple[int, int]]]:
    return {int(run): _merge((int(a), int(b)) for a, b in ranges) for run, ranges in mask.items()}


def _apply_mask(selection: _Selection, mask: dict[int, list[tuple[int, int]]]) -> None:
    """Keep the lumis the mask lists: each span of consecutive lumis meets the run's ranges."""
    pieces: list[tuple[int, int]] = []
    runs, numbers = selection.runs, selection.numbers
    for start, end in selection.spans():
        ranges = mask.get(runs[start])
        if not ranges:
            continue
        low = numbers[start]
        high = low + end - start - 1
        for first, last in ranges[max(bisect_right(ranges, (low, 2 ** 32)) - 1, 0):]:
            if first > high:
                break
            if last >= low:
                pieces.append((start + max(first, low) - low, start + min(last, high) - low + 1))
    selection.keep(pieces)


def _drop_split_lumis(selections: list[_Selection]) -> None:
    """Keep each (run, lumi) once, at its first part, which gets the later parts' events and files.

    Only runs where two spans of lumis overlap can hold a lumi listed twice, and only their lumis
    are checked one by one: datasets without split lumis pay for a sort of their spans.
    """
    spans = sorted((s.runs[a], s.numbers[a], s.numbers[b - 1]) for s in selections for a, b in s.spans())
    suspect: set[int] = set()
    run, reach = None, 0
    for r, first, last in spans:
        if r != run:
            run, reach = r, last
            continue
        if first <= reach:
            suspect.add(r)
        reach = max(reach, last)
    if not suspect:
        return
    first_part: dict[tuple[int, int], tuple[_Selection, int]] = {}
    added: dict[tuple[_Selection, int], int] = {}  # events of later parts, by first part
    for selection in selections:
        drop = []
        runs, numbers = selection.runs, selection.numbers
        for start, end in selection.spans():
            if runs[start] not in suspect:
                continue
            for p in range(start, end):
                key = (runs[p], numbers[p])
                seen = first_part.get(key)
                if seen is None:
                    first_part[key] = (selection, p - len(drop))  # its position once ``drop`` is dropped
                else:
                    owner, at = seen
                    owner.extras.setdefault(at, []).append((selection.lfns[selection.files[p]],
                                                            selection.file_blocks[selection.files[p]]))
                    added[seen] = added.get(seen, 0) + selection.events[p]
                    drop.append(p)
        if drop:
            bounds = [-1, *drop, len(selection)]
            selection.keep([(a + 1, b) for a, b in zip(bounds, bounds[1:]) if b > a + 1])
    for selection, at in added:  # 64-bit: the sum of 32-bit parts may not fit in 32
        if selection.events.typecode != "Q":
            selection.events = array("Q", selection.events)
        selection.events[at] += added[selection, at]


def _cap(selections: list[_Selection], algorithm: str, total: int) -> list[_Selection]:
    """The selections cut to the first ``total`` units, in their order."""
    kept = []
    for selection in selections:
        if total <= 0:
            break
        if algorithm == "FileBased":
            starts = _changes(selection.files)
            selection.truncate(starts[total] if total < len(starts) else len(selection))
            total -= len(starts)
        elif algorithm == "LumiBased":
            selection.truncate(total)
            total -= len(selection)
        else:  # events: stop at the lumi that reaches the cap, as WMCore does
            cumulative = array("Q", accumulate(selection.events, initial=0))
            n = min(bisect_left(cumulative, total), len(selection))
            selection.truncate(n)
            total -= cumulative[n]
        kept.append(selection)
    return kept


def _by_sites(selections: list[_Selection]) -> list[_Selection]:
    """The selections of blocks at the same set of sites joined, in order of first appearance."""
    groups: dict[frozenset[str], _Selection] = {}
    for selection in selections:
        key = frozenset(selection.blocks[0].sites)
        if key in groups:
            groups[key].join(selection)
        else:
            groups[key] = selection
    return list(groups.values())


def _job_starts(selection: _Selection, algorithm: str, units: int) -> list[int]:
    if algorithm == "FileBased":
        return _changes(selection.files)[::units]
    if algorithm == "LumiBased":
        return list(range(0, len(selection), units))
    return event_aware_starts(selection.events, units)


def _no_lumi(dataset: Dataset, mask: dict[int, list[tuple[int, int]]] | None,
             mask_from: Sequence[str]) -> SplittingError:
    """The error for a split with nothing to split; for a mask, how its runs meet the dataset's
    (as CRAB's diagnoseRunMatch tells), naming only the parameters ``mask_from`` that made it."""
    if mask is None:
        return SplittingError(f"the dataset {dataset.name} has no lumi to split")
    named = " and ".join(mask_from)
    one = len(mask_from) == 1
    message = f"{named} {'selects' if one else 'select'} no lumi of {dataset.name}"
    runs = dataset.runs()
    if mask and runs:
        common = len(set(runs) & set(mask))
        message += (f": {'its' if one else 'their'} runs are {min(mask)}-{max(mask)}, the dataset's "
                    f"{runs[0]}-{runs[-1]}, {common} run(s) in common{' but none of their lumis' if common else ''}")
        if dataset.source == "stand-in" and not common and runs[0] <= max(mask) and min(mask) <= runs[-1]:
            # a real run of the era the stand-in, which holds a sample of them, happens not to hold
            near = sorted(runs[i] for i in {min(bisect_left(runs, r), len(runs) - 1) for r in (min(mask), max(mask))}
                          | {max(bisect_left(runs, r) - 1, 0) for r in (min(mask), max(mask))})
            return SplittingError(
                f"{message}. {dataset.name} is a stand-in made from its name, which holds one run in 2 to 4 of its "
                f"era, and not these: select runs it holds (the nearest are {', '.join(map(str, near))}), or "
                f"describe the dataset with its real runs: crabtui dataset add {dataset.name} --from FILE (the JSON "
                f"format is in the README).")
    return SplittingError(f"{message}. Check {named}.")


def split(dataset: Dataset, *, algorithm: str, units_per_job: int, total_units: float = 0,
          lumi_mask: LumiMask | None = None, max_jobs: int = MAX_JOBS_PER_TASK,
          id_prefix: str = "", events_per_lumi: int | None = None,
          mask_from: Sequence[str] = MASK_PARAMETERS, skipped: Collection[str] = ()) -> list[JobSplit]:
    """The jobs ``algorithm`` cuts ``dataset`` into (rules in the module docstring).

    ``total_units`` 0 (or below) means all; ``lumi_mask`` None means every lumi; ``mask_from``
    names the configuration parameters that made it, for the error; ``events_per_lumi``
    is EventBased's. ``skipped`` names blocks whose jobs could run nowhere: they count towards
    ``total_units`` (its share and its cap), then their group's jobs are left out and the others
    numbered on, as CRAB's Splitter splits every group and DagmanCreator skips a group whose sites
    are all banned. Raises SplittingError when the mask selects nothing, the arguments are
    invalid, or there would be more than ``max_jobs`` jobs (CRAB's limit per task).
    """
    if algorithm not in (*ALGORITHMS, "EventBased"):
        raise SplittingError(f"unknown splitting algorithm {algorithm!r}; split knows "
                             f"{', '.join(ALGORITHMS)} and EventBased (Automatic is built on them)")
    if units_per_job <= 0:
        raise SplittingError(f"Data.unitsPerJob must be > 0, not {units_per_job}")
    if algorithm == "EventBased":  # the generated file's lumis already hold each job's events
        if not events_per_lumi or events_per_lumi <= 0:
            raise SplittingError(f"EventBased splitting needs events per lumi > 0, not {events_per_lumi}")
        return split(dataset, algorithm="LumiBased", units_per_job=math.ceil(units_per_job / events_per_lumi),
                     max_jobs=max_jobs, id_prefix=id_prefix)
    total_units = _total(dataset, algorithm, total_units)

    mask = None if lumi_mask is None else _normalise(lumi_mask)
    selections = [_Selection(block) for block in dataset.blocks]
    if mask is not None:
        for selection in selections:
            _apply_mask(selection, mask)
    selections = [s for s in selections if len(s)]
    if not selections:
        raise _no_lumi(dataset, mask, mask_from)
    if algorithm == "FileBased":
        if total_units:
            selections = _cap(selections, algorithm, total_units)
        selections = _by_sites(selections)
    else:
        selections = _by_sites(selections)
        _drop_split_lumis(selections)
        if total_units:
            selections = _cap(selections, algorithm, total_units)
    if skipped:  # a group's blocks share their sites: all of them are banned or none
        selections = [s for s in selections if s.blocks[0].name not in skipped]
        if not selections:
            raise SplittingError(f"the first {total_units} {_UNITS.get(algorithm, 'events')} of Data.totalUnits are all in blocks "
                                 f"the site lists leave with no site to run at ({len(skipped)} such blocks): raise "
                                 f"Data.totalUnits or change Site.whitelist/Site.blacklist")

    starts = [_job_starts(s, algorithm, units_per_job) for s in selections]
    count = sum(map(len, starts))
    if count > max_jobs:
        raise SplittingError(
            f"The splitting on your task generated {count} jobs. The maximum number of jobs in each "
            f"task is {max_jobs}. Raise Data.unitsPerJob or set Data.totalUnits.")

    jobs: list[JobSplit] = []
    for selection, job_starts in zip(selections, starts):
        _make_jobs(selection, job_starts, id_prefix, jobs)
    return jobs


def _total(dataset: Dataset, algorithm: str, total_units: float) -> int:
    """``Data.totalUnits`` as a count of the algorithm's units (0: all), as CRAB's Splitter reads it."""
    if total_units <= 0:
        return 0
    if total_units >= 1:
        return int(total_units)
    if algorithm == "FileBased":
        units = dataset.nfiles
    elif algorithm == "LumiBased":
        units = dataset.lumis
    else:
        units = dataset.events
    return max(1, int(total_units * units + 0.5))


def _make_jobs(selection: _Selection, starts: list[int], id_prefix: str, jobs: list[JobSplit]) -> None:
    """Append a JobSplit for each [start, next start) of ``selection`` to ``jobs``."""
    lfns = selection.lfns
    group_sites = selection.blocks[0].sites
    files, runs, numbers, events = selection.files, selection.runs, selection.numbers, selection.events
    file_starts = _changes(files)
    span_starts = selection.span_starts()
    extra_at = sorted(selection.extras)
    n = len(selection)
    for start, end in zip(starts, [*starts[1:], n]):
        names = [lfns[files[p]] for p in (start, *file_starts[bisect_right(file_starts, start):
                                                               bisect_left(file_starts, end)])]
        cuts = (start, *span_starts[bisect_right(span_starts, start):bisect_left(span_starts, end)], end)
        flat = array("I")
        for a, b in zip(cuts, cuts[1:]):
            flat.extend((runs[a], numbers[a], numbers[b - 1]))
        nevents = sum(events[start:end])
        sites = group_sites
        for p in extra_at[bisect_left(extra_at, start):bisect_left(extra_at, end)]:
            for lfn, part_block in selection.extras[p]:
                if lfn not in names:
                    names.append(lfn)
                if part_block.sites != sites:
                    sites = tuple(s for s in sites if s in part_block.sites)
        jobs.append(JobSplit(f"{id_prefix}{len(jobs) + 1}", tuple(names), flat.tobytes(), end - start,
                             nevents, sites))


def count_lumis(dataset: Dataset, lumi_mask: LumiMask | None = None) -> int:
    """The distinct lumis of ``dataset`` within ``lumi_mask`` (None: all): what a task must process,
    a lumi split across files counted once."""
    mask = None if lumi_mask is None else _normalise(lumi_mask)
    seen: set[tuple[int, int]] = set()
    for f in dataset.files:
        pairs = zip(f.lumis.runs, f.lumis.numbers)
        if mask is None:
            seen.update(pairs)
            continue
        for run, lumi in pairs:
            ranges = mask.get(run)
            if ranges:
                i = bisect_right(ranges, (lumi, 2 ** 32)) - 1
                if i >= 0 and ranges[i][0] <= lumi <= ranges[i][1]:
                    seen.add((run, lumi))
    return len(seen)
