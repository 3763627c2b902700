"""A simulated cmsRun: processes its lumi sections at a site's speed, really taking the time, and
writes the framework job report (:mod:`engine.crab.wn.fjr`) a real cmsRun job leaves.

Run as ``python3 -m engine.crab.wn.cmsrun INPUT [options]`` (the job wrapper, :mod:`engine.crab.wn.wrapper`,
does this for every job whose task names no ``JobType.scriptExe``). Standard library only: it runs
as a job on any execute node.

The input file (JSON; what a real job gets as ``job_input_file_list_N.txt`` and ``job_lumis_N.json``
together, with the events per lumi a simulation needs)::

    {
      "files": [                                          at least one file, processed in this order
        {"lfn": "/store/mc/.../A.root",                   the file's logical name
         "lumis": [[1, 4, 480], [1, 5, 470]]}             [run, lumi, events], at least one, in order
      ],
      "eventsPerSecond": 10.0,                            optional: throughput at site speed 1.0 (default 10)
      "bytesPerEvent": 5000,                              optional: output bytes per event (default 5000)
      "initSeconds": 10.0                                 optional: start-up time in seconds (default 10)
    }

:func:`make_input` builds one (from :class:`engine.crab.taskworker.datasets.File` objects or plain tuples) and
:func:`write_input` writes it. Unknown keys are errors; :class:`InputError` names the file and key.

How a run goes, in simulated seconds (every real wait is the simulated time divided by
``--time-scale``; every figure reported is simulated):

* start-up takes ``initSeconds``; then each lumi takes ``events / (eventsPerSecond x speed)``;
  the speed is ``--speed``, else the machine ad's ``CRABTUI_SiteSpeed`` (``_CONDOR_MACHINE_AD``),
  else 1.0; the site (``executed_site``) likewise ``--site``, else the ad's ``GLIDEIN_CMSSite``.
* ``--stop-after S``: once S seconds have passed (start-up included), no new lumi is begun (CMSSW's
  ``maxSecondsUntilRampdown``; a lumi split across files is still read to its end); the run ends
  with exit code 0 and the lumis not begun are listed in the report's ``crabtui.unprocessed``, so
  that automatic splitting's tail jobs process them (:mod:`engine.crab.taskworker.automatic`).
* ``--fail-exit-code N``: the run fails with N while reading lumi ``floor(fail_at x lumis)``
  (``--fail-at``, default from the seed), after half that lumi's time, or at the stop-after limit
  if that comes first (planned trouble always happens); the lumis before it count as processed,
  the rest as unprocessed.
* Memory: the resident memory stays at a plausible 400-900 MB (drawn from the seed), unless
  ``--fail-memory M`` makes it grow to M MB at that same lumi. The report's ``PeakValueRss`` is
  the peak. If the peak exceeds ``--memory-limit`` (the job's RequestMemory), the run ends there
  with exit code 50660 and CRAB's message "Job killed by HTCondor due to excessive memory use";
  no memory is really allocated.
* CPU time is the loop time times an efficiency of 88-97 % (from the seed) plus 80 % of start-up.
* On success the output is one file of ``events x bytesPerEvent`` bytes (reported; a small
  placeholder is written only with ``--output-file``).

The report always gets written (``--report``, default ``jobReport.json``). The process exits with
the report's exit code modulo 256, as cmsRun's exit codes reach the shell (a code whose low byte
is 0, such as 8192, exits 1 so that it cannot pass for success). Everything random comes from
``--seed`` (the wrapper passes ``task/job/attempt``), so a run is the same every time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.atomic import write_atomically
from engine.crab.wn import fjr
from engine.crab.wn.jobad import read_ad, site_speed
from engine.crab.jsonfile import read_json
from engine.hints import did_you_mean

__all__ = [
    "DEFAULT_BYTES_PER_EVENT", "DEFAULT_EVENTS_PER_SECOND", "DEFAULT_INIT_SECONDS", "MEMORY_EXIT_CODE",
    "InputError", "InputFile", "JobInput", "Settings", "exit_status", "main", "make_input", "read_input",
    "run", "seeded_rng", "write_input",
]

DEFAULT_EVENTS_PER_SECOND = 10.0
"""Events per second at speed 1.0: a typical analysis of AOD; a 1,800-event file takes 3 minutes."""
DEFAULT_BYTES_PER_EVENT = 5000
"""Output bytes per event: an analysis ntuple."""
DEFAULT_INIT_SECONDS = 10.0
"""cmsRun's start-up (configuration, conditions, first file open)."""
MEMORY_EXIT_CODE = 50660
"""CRAB's code for a job killed for using more memory than it requested."""

ERROR_TYPES = {
    8001: "CMS Exception", 8002: "StdException", 8020: "FileOpenError", 8021: "FileReadError",
    8022: "FatalRootError", 8028: "FallbackFileOpenError", 50660: "MemoryLimitExceeded",
}
"""The ``errors[].type`` a report gives an exit code (CMSSW's exception categories)."""

_INPUT_KEYS = ("files", "eventsPerSecond", "bytesPerEvent", "initSeconds")
_FILE_KEYS = ("lfn", "lumis")
_UINT32 = 2 ** 32


class InputError(ValueError):
    """An input file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class InputFile:
    lfn: str
    lumis: tuple[tuple[int, int, int], ...]  # (run, lumi, events)

    @property
    def events(self) -> int:
        return sum(n for _, _, n in self.lumis)


@dataclass(frozen=True, slots=True)
class JobInput:
    files: tuple[InputFile, ...]
    events_per_second: float = DEFAULT_EVENTS_PER_SECOND
    bytes_per_event: int = DEFAULT_BYTES_PER_EVENT
    init_seconds: float = DEFAULT_INIT_SECONDS

    def lumis(self) -> dict[int, list[int]]:
        """run -> sorted lumi numbers the job is given (each once): what its report's processed and
        unprocessed lumis together must cover."""
        given: dict[int, set[int]] = {}
        for f in self.files:
            for run_number, lumi, _ in f.lumis:
                given.setdefault(run_number, set()).add(lumi)
        return {run_number: sorted(given[run_number]) for run_number in sorted(given)}


@dataclass(slots=True)
class Settings:
    """How to run: the site, the limits and the failure to inject (see the module docstring)."""

    speed: float = 1.0
    site: str | None = None
    time_scale: float = 1.0
    stop_after: float | None = None  # simulated seconds
    memory_limit_mb: float | None = None
    fail_exit_code: int | None = None
    fail_memory_mb: int | None = None
    fail_at: float | None = None  # fraction of the lumis; None: drawn from the seed
    seed: str = ""
    output_file: str | None = None
    crabtui: dict[str, Any] = field(default_factory=dict)  # extra facts for the report's crabtui section


# ------------------------------------------------------------------------------------ input

def _show(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _positive_number(document: dict, key: str, default: float, zero: bool = False) -> float:
    value = document.get(key, default)
    low_ok = value >= 0 if zero else value > 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not low_ok:
        raise ValueError(f"{key}: must be a number {'>= 0' if zero else '> 0'}, got {_show(value)}")
    return value


def _parse_input(document: object) -> JobInput:
    if not isinstance(document, dict):
        raise ValueError(f"must be a JSON object with a list \"files\", got {_show(document)}")
    for key in document:
        if key not in _INPUT_KEYS:
            hint = did_you_mean(key, _INPUT_KEYS)
            raise ValueError(f"{key}: unknown key; {hint}an input holds " + ", ".join(_INPUT_KEYS))
    files = document.get("files")
    if not isinstance(files, list) or not files:
        raise ValueError(f"files: must be a non-empty list of files, got {_show(files)}")
    parsed = []
    for i, item in enumerate(files, start=1):
        at = f"files[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at}: must be an object with lfn and lumis, got {_show(item)}")
        for key in item:
            if key not in _FILE_KEYS:
                raise ValueError(f"{at}.{key}: unknown key; a file holds lfn and lumis")
        lfn = item.get("lfn")
        if not isinstance(lfn, str) or not lfn:
            raise ValueError(f"{at}.lfn: must be the file's logical name, a non-empty string, got {_show(lfn)}")
        lumis = item.get("lumis")
        if not isinstance(lumis, list) or not lumis:
            raise ValueError(f"{at}.lumis: must be a non-empty list of [run, lumi, events], got {_show(lumis)}")
        triples = []
        for j, lumi in enumerate(lumis, start=1):
            if not (isinstance(lumi, list) and len(lumi) == 3 and all(type(x) is int for x in lumi)
                    and lumi[0] >= 1 and lumi[1] >= 1 and lumi[2] >= 0 and max(lumi) < _UINT32):
                raise ValueError(f"{at}.lumis[{j}]: must be [run, lumi, events], whole numbers (run and lumi "
                                 f"from 1, events from 0), got {_show(lumi)}")
            triples.append((lumi[0], lumi[1], lumi[2]))
        parsed.append(InputFile(lfn, tuple(triples)))
    eps = _positive_number(document, "eventsPerSecond", DEFAULT_EVENTS_PER_SECOND)
    bpe = document.get("bytesPerEvent", DEFAULT_BYTES_PER_EVENT)
    if type(bpe) is not int or bpe < 0:
        raise ValueError(f"bytesPerEvent: must be a whole number >= 0, got {_show(bpe)}")
    init = _positive_number(document, "initSeconds", DEFAULT_INIT_SECONDS, zero=True)
    return JobInput(tuple(parsed), float(eps), bpe, float(init))


def read_input(path: str | os.PathLike[str]) -> JobInput:
    """The job input at ``path`` (format in the module docstring); :class:`InputError` if invalid."""
    name = os.fspath(path)
    document = read_json(name, InputError, what=" the job input")
    try:
        return _parse_input(document)
    except ValueError as e:
        raise InputError(f"{name}: {e}") from None


def make_input(files: Iterable[Any], *, events_per_second: float | None = None,
               bytes_per_event: int | None = None, init_seconds: float | None = None) -> dict[str, Any]:
    """An input document for ``files``: :class:`engine.crab.taskworker.datasets.File` objects (or anything with
    ``lfn`` and ``lumis`` of (run, lumi, events)), or ``(lfn, [(run, lumi, events), ...])`` pairs."""
    items = []
    for f in files:
        lfn, lumis = (f.lfn, f.lumis) if hasattr(f, "lfn") else f
        items.append({"lfn": lfn, "lumis": [[int(r), int(n), int(e)] for r, n, e in lumis]})
    document: dict[str, Any] = {"files": items}
    if events_per_second is not None:
        document["eventsPerSecond"] = events_per_second
    if bytes_per_event is not None:
        document["bytesPerEvent"] = bytes_per_event
    if init_seconds is not None:
        document["initSeconds"] = init_seconds
    _parse_input(document)  # refuse to write what cannot be read
    return document


def write_input(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    """Write an input document (see :func:`make_input`) at once, one lumi per line."""
    _parse_input(document)
    write_atomically(path, json.dumps(document, separators=(",", ":")).replace('{"lfn"', '\n{"lfn"') + "\n")


# ------------------------------------------------------------------------------------ running

def seeded_rng(seed: str) -> random.Random:
    """A random generator that gives the same numbers for the same text on every machine and run."""
    return random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))


def exit_status(code: int) -> int:
    """The process exit status for an exit code: its low byte, or 1 for a failure whose low byte is 0."""
    status = code & 0xFF
    return 1 if code and not status else status


@dataclass(slots=True)
class _Clock:
    """Simulated time, kept in step with real time divided by the time scale."""

    scale: float
    sleep: Callable[[float], None]
    now: Callable[[], float]
    simulated: float = 0.0
    real_start: float = field(default=0.0)

    def advance(self, seconds: float) -> None:
        self.simulated += seconds
        deadline = self.real_start + self.simulated / self.scale
        while True:
            remaining = deadline - self.now()
            if remaining <= 0:
                return
            self.sleep(min(remaining, 0.25))


def run(job: JobInput, settings: Settings, report_path: str | os.PathLike[str], *,
        sleep: Callable[[float], None] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
        out=None) -> dict[str, Any]:
    """Process ``job`` as ``settings`` say, write the report to ``report_path`` and return it."""
    out = out or sys.stdout
    rng = seeded_rng(settings.seed)
    baseline_rss = rng.uniform(400, 800)
    natural_peak = baseline_rss + rng.uniform(20, 100)
    efficiency = rng.uniform(0.88, 0.97)
    drawn_at = rng.random()
    fail_at = drawn_at if settings.fail_at is None else min(max(settings.fail_at, 0.0), 1.0)

    lumis = [(f, lumi) for f in job.files for lumi in f.lumis]
    fail_index = None
    if settings.fail_exit_code or settings.fail_memory_mb:
        fail_index = min(int(fail_at * len(lumis)), len(lumis) - 1)
    limit = settings.memory_limit_mb
    rate = job.events_per_second * settings.speed
    start_wall = time.time()
    clock = _Clock(settings.time_scale, sleep, monotonic, real_start=monotonic())

    print(f"%MSG-i crabtui: simulated cmsRun at {settings.site or 'an unknown site'} (speed {settings.speed:g}, "
          f"{rate:g} events/s), {len(lumis)} lumis in {len(job.files)} files", file=out, flush=True)
    clock.advance(job.init_seconds)
    init_time = clock.simulated

    peak = natural_peak
    exit_code, exit_msg, error_type = 0, "OK", None
    processed: dict[str, dict[int, list[int]]] = {}
    events_by_file: dict[str, int] = {}
    unprocessed: dict[int, list[int]] = {}
    stopped_early = False
    events = 0
    opened: set[str] = set()
    begun: set[tuple[int, int]] = set()  # a lumi split across files is finished once begun
    index = 0
    for index, (f, (run_number, lumi, n)) in enumerate(lumis):
        stopping = (settings.stop_after is not None and clock.simulated >= settings.stop_after
                    and (run_number, lumi) not in begun)
        if stopping and fail_index is not None and index < fail_index:
            fail_index = index  # the run would stop before its planned trouble: the trouble comes first
            stopping = False
        if stopping:
            if not stopped_early:
                stopped_early = True
                print(f"%MSG-w crabtui: {clock.simulated:.0f} s passed, the stop-after limit of "
                      f"{settings.stop_after:g} s: no new lumi is begun", file=out, flush=True)
            unprocessed.setdefault(run_number, []).append(lumi)
            continue
        begun.add((run_number, lumi))
        if f.lfn not in opened:
            opened.add(f.lfn)
            events_by_file.setdefault(f.lfn, 0)
            processed.setdefault(f.lfn, {})
            print(f"%MSG-i crabtui: opened file {f.lfn}", file=out, flush=True)
        if index == fail_index:
            if settings.fail_memory_mb:
                peak = max(peak, float(settings.fail_memory_mb))
            if limit is not None and peak > limit:
                clock.advance(n / rate / 2)
                exit_code = MEMORY_EXIT_CODE
                exit_msg = (f"Job killed by HTCondor due to excessive memory use ({peak:.0f} MB used vs. "
                            f"{limit:.0f} MB requested)")
                break
            if settings.fail_exit_code:
                clock.advance(n / rate / 2)
                exit_code = settings.fail_exit_code
                exit_msg = (f"Fatal Exception while reading run {run_number}, lumi {lumi} of {f.lfn} "
                            f"(injected by the simulated grid)")
                break
        if limit is not None and peak > limit:  # even without injected trouble
            exit_code = MEMORY_EXIT_CODE
            exit_msg = (f"Job killed by HTCondor due to excessive memory use ({peak:.0f} MB used vs. "
                        f"{limit:.0f} MB requested)")
            break
        clock.advance(n / rate)
        processed[f.lfn].setdefault(run_number, []).append(lumi)
        events_by_file[f.lfn] += n
        events += n
    else:
        index = len(lumis)
    for _, (run_number, lumi, _) in lumis[index:]:
        unprocessed.setdefault(run_number, []).append(lumi)
    if exit_code:
        error_type = ERROR_TYPES.get(exit_code, "Fatal Exception")
        print(f"%MSG-s {error_type}: {exit_msg}", file=out, flush=True)

    wall = clock.simulated
    loop_time = wall - init_time
    loop_cpu = loop_time * efficiency
    cpu = loop_cpu + init_time * 0.8
    throughput = events / loop_time if loop_time > 0 and events else rate
    output_size = events * job.bytes_per_event
    all_lumis: dict[int, list[int]] = {}
    for per_file in processed.values():
        for r, numbers in per_file.items():
            all_lumis.setdefault(r, []).extend(numbers)
    outputs = []
    if exit_code == 0:
        pfn = settings.output_file or "output.root"
        outputs.append({"pfn": pfn, "lfn": "", "events": events, "size": output_size, "lumis": all_lumis})
        if settings.output_file:
            write_atomically(settings.output_file, json.dumps({
                "simulated": "output of crabtui's simulated cmsRun", "events": events, "size": output_size,
                "runs": fjr.runs_json(all_lumis)}) + "\n")
    inputs = [{"lfn": lfn, "events": events_by_file[lfn], "lumis": processed[lfn]} for lfn in processed]
    errors = [{"type": error_type, "details": exit_msg, "exitCode": exit_code}] if exit_code else []
    crabtui = {"simulated": True, "site_speed": settings.speed, "time_scale": settings.time_scale,
               "stopped_early": stopped_early, "real_wall_s": round(monotonic() - clock.real_start, 3),
               **settings.crabtui}
    report = fjr.build_report(
        exit_code=exit_code, exit_msg=exit_msg, site=settings.site, start=start_wall,
        stop=start_wall + (monotonic() - clock.real_start), inputs=inputs, outputs=outputs, errors=errors,
        cpu={"TotalJobTime": wall, "TotalJobCPU": cpu, "TotalInitTime": init_time, "TotalInitCPU": init_time * 0.8,
             "TotalLoopTime": loop_time, "TotalLoopCPU": loop_cpu, "EventThroughput": throughput,
             "AvgEventTime": (loop_time / events) if events else 0.0, "NumberOfThreads": 1, "NumberOfStreams": 1},
        memory={"PeakValueRss": peak, "PeakValueVsize": peak * 1.6},
        storage={"readTotalMB": 0.0, "writeTotalMB": output_size / 1e6},
        crabtui=crabtui, unprocessed=unprocessed,
    )
    fjr.write_report(report_path, report)
    print(f"%MSG-i crabtui: {events} events in {sum(len(v) for v in all_lumis.values())} lumis, "
          f"{wall:.1f} s, exit code {exit_code}; report in {os.fspath(report_path)}", file=out, flush=True)
    return report


# ------------------------------------------------------------------------------------ command line

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m engine.crab.wn.cmsrun",
                                description="A simulated cmsRun: process the lumis of INPUT and write a job report.")
    p.add_argument("input", help="the job input (JSON: files with their [run, lumi, events])")
    p.add_argument("--report", default=fjr.FJR_NAME, help="where to write the job report (default %(default)s)")
    p.add_argument("--speed", type=float, help="site speed (default: CRABTUI_SiteSpeed of $_CONDOR_MACHINE_AD, or 1)")
    p.add_argument("--site", help="site name (default: GLIDEIN_CMSSite of $_CONDOR_MACHINE_AD)")
    p.add_argument("--time-scale", type=float, default=1.0, help="simulated seconds per real second")
    p.add_argument("--stop-after", type=float, help="begin no new lumi after this many (simulated) seconds")
    p.add_argument("--memory-limit", type=float, help="MB; more resident memory ends the run with 50660")
    p.add_argument("--fail-exit-code", type=int, help="fail with this exit code")
    p.add_argument("--fail-memory", type=int, help="grow to this many MB of resident memory")
    p.add_argument("--fail-at", type=float, help="where the failure happens, a fraction of the lumis")
    p.add_argument("--seed", default="", help="text that seeds everything random")
    p.add_argument("--output-file", help="write a small placeholder output file here on success")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.time_scale <= 0 or (args.speed is not None and args.speed <= 0):
        print("cmsrun: --time-scale and --speed must be > 0", file=sys.stderr)
        return 2
    speed, site = args.speed, args.site
    if speed is None or site is None:
        machine = os.environ.get("_CONDOR_MACHINE_AD")
        if machine:
            ad = read_ad(machine)
            speed = site_speed(ad) if speed is None else speed
            site = ad.get("GLIDEIN_CMSSite") if site is None else site
    try:
        job = read_input(args.input)
    except InputError as e:
        print(f"cmsrun: {e}", file=sys.stderr)
        report = fjr.minimal_report(50113, f"cmsRun could not read its input: {e}", site if isinstance(site, str) else None,
                                    error_type="MissingArgument")
        fjr.write_report(args.report, report)
        return exit_status(50113)
    settings = Settings(speed=speed or 1.0, site=site if isinstance(site, str) else None, time_scale=args.time_scale,
                        stop_after=args.stop_after, memory_limit_mb=args.memory_limit,
                        fail_exit_code=args.fail_exit_code, fail_memory_mb=args.fail_memory, fail_at=args.fail_at,
                        seed=args.seed, output_file=args.output_file)
    report = run(job, settings, args.report)
    return exit_status(report["exitCode"])


if __name__ == "__main__":
    sys.exit(main())
