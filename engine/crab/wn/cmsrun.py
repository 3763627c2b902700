"""A simulated cmsRun: processes its lumi sections at a site's speed, really taking the time, and
writes the framework job report (:mod:`engine.crab.wn.fjr`) a real cmsRun job leaves.

Run as ``python3 -m engine.crab.wn.cmsrun INPUT [options]`` (the job wrapper, :mod:`engine.crab.wn.wrapper`,
does this for every job whose task names no ``JobType.scriptExe``). Standard library only: it runs
as a job on any execute node.

Its input is a job input file (:mod:`engine.crab.wn.job_input`): the files, each lumi's events,
and the throughput at speed 1.0.

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
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.atomic import write_atomically
from engine.crab.wn import fjr
from engine.crab.wn.failure_plan import seeded_rng
from engine.crab.wn.job_input import InputError, JobInput, read_input
from engine.crab.wn.jobad import read_ad, site_speed

__all__ = ["MEMORY_EXIT_CODE", "Settings", "exit_status", "main", "run"]

MEMORY_EXIT_CODE = 50660
"""CRAB's code for a job killed for using more memory than it requested."""

ERROR_TYPES = {
    8001: "CMS Exception", 8002: "StdException", 8020: "FileOpenError", 8021: "FileReadError",
    8022: "FatalRootError", 8028: "FallbackFileOpenError", 50660: "MemoryLimitExceeded",
}
"""The ``errors[].type`` a report gives an exit code (CMSSW's exception categories)."""

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


# ------------------------------------------------------------------------------------ running

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
    # Data.useParent: each lumi's events are read from one parent of its file too, the parents
    # taking the file's lumis in turn, as cmsRun reads the secondary files holding an event
    secondary_of = {(f.lfn, r, lumi): f.parents[k * len(f.parents) // len(f.lumis)]
                    for f in job.files if f.parents for k, (r, lumi, _) in enumerate(f.lumis)}
    secondary: dict[str, dict[str, Any]] = {}
    index = 0
    for index, (f, (run_number, lumi, n)) in enumerate(lumis):
        stopping = (settings.stop_after is not None and clock.simulated >= settings.stop_after
                    and (run_number, lumi) not in begun)
        if stopping and fail_index is not None and index <= fail_index:
            # The run would stop at or before the lumi of its planned trouble: the trouble comes
            # first, at this lumi, so that a planned failure never turns into a success.
            fail_index = index
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
        trouble = index == fail_index  # the planned trouble comes halfway through this lumi
        if trouble and settings.fail_memory_mb:
            peak = max(peak, float(settings.fail_memory_mb))
        if limit is not None and peak > limit:  # injected, or even without injected trouble
            if trouble:
                clock.advance(n / rate / 2)
            exit_code = MEMORY_EXIT_CODE
            exit_msg = (f"Job killed by HTCondor due to excessive memory use ({peak:.0f} MB used vs. "
                        f"{limit:.0f} MB requested)")
            break
        if trouble and settings.fail_exit_code:
            clock.advance(n / rate / 2)
            exit_code = settings.fail_exit_code
            exit_msg = (f"Fatal Exception while reading run {run_number}, lumi {lumi} of {f.lfn} "
                        f"(injected by the simulated grid)")
            break
        clock.advance(n / rate)
        processed[f.lfn].setdefault(run_number, []).append(lumi)
        events_by_file[f.lfn] += n
        events += n
        parent = secondary_of.get((f.lfn, run_number, lumi))
        if parent is not None:
            if parent not in secondary:
                secondary[parent] = {"lfn": parent, "events": 0, "lumis": {}, "input_type": "secondaryFiles"}
                print(f"%MSG-i crabtui: opened secondary file {parent}", file=out, flush=True)
            secondary[parent]["events"] += n
            secondary[parent]["lumis"].setdefault(run_number, []).append(lumi)
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
    inputs += secondary.values()
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
