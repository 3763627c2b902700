"""What the benchmarks under bench/ share: their scratch directory, the embedded schedd, the DAG
they run and how DAGMan is stopped, timing and memory, and how results are printed.

The engine is imported inside the functions that need it, so that ``--help`` works (and is
quick) without it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

SAMPLE_S = 0.5  # how often run_dagman samples the DAG's progress


@contextlib.contextmanager
def scratch_dir(prefix: str, keep: bool) -> Iterator[str]:
    """A new directory under /tmp, removed on exit unless ``keep``.  /tmp rather than $TMPDIR:
    the embedded schedd's Unix socket lives in it, and a socket path holds at most 107 bytes."""
    path = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    try:
        yield path
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)


def announce(doc: str) -> None:
    """Say on stderr, before any work, what the benchmark measures: its figures come only at the
    end, minutes later for some (stdout keeps them alone, for --json)."""
    first = " ".join(doc.split("\n\n")[0].split()).removeprefix("Benchmark: ").replace("``", "`")
    print(f"{os.path.basename(sys.argv[0])}: {first} Its figures come when it ends.", file=sys.stderr, flush=True)


# Modules a benchmark may need beyond crabtui's own dependencies, and how to get each: a venv made
# by the README's first command (pip install -e .) has none of them.
EXTRA_MODULES = {"hypothesis": "crabtui's test extra (.venv/bin/pip install -e '.[test]')",
                 "textual_fastdatatable": "pip install textual-fastdatatable"}


def run_main(main: Callable[[], None]) -> None:
    """A benchmark's ``__main__``: Ctrl-C ends it in one line instead of a traceback, and so does
    a module it needs that is not installed.  Its scratch directories and schedds are gone by
    then: the interrupt went through their ``with``."""
    try:
        main()
    except ModuleNotFoundError as e:
        if e.name not in EXTRA_MODULES:
            raise
        sys.exit(f"ERROR: {os.path.basename(sys.argv[0])} needs the module {e.name}, which this python3 "
                 f"does not have: install it with {EXTRA_MODULES[e.name]}")
    except KeyboardInterrupt:
        print(f"{os.path.basename(sys.argv[0])}: interrupted (Ctrl-C) before its figures; nothing is left running",
              file=sys.stderr)
        sys.exit(130)


@contextlib.contextmanager
def embedded_schedd(workdir: str, name: str = "s"):
    """A client of a fresh embedded schedd with its own state directory ``workdir/name``, so that
    no other run's jobs share it.  Its daemon starts at the client's first call (start-up time is
    the caller's to leave out) and is stopped on exit, also on error or Ctrl-C, so none is left
    running: a daemon the benchmark killed last is started again first, to take back the jobs its
    starters still run (they outlive it) and evict them as it stops."""
    from engine.schedd.api import ScheddError
    from engine.schedd.local.client import LocalScheddClient
    from engine.state import StateDir

    state = StateDir(os.path.join(workdir, name))
    os.makedirs(state.path, mode=0o700)
    client = LocalScheddClient(state)
    try:
        yield client
    finally:
        try:
            client.ping()
        except ScheddError:
            pass  # it cannot start again: there is nothing to take back
        client.shutdown()


def write_dag(dagdir: str, name: str, lines: Iterable[str]) -> str:
    """Write the DAG file ``dagdir/name`` and, beside it, the ``job.sub`` its nodes run (one
    /bin/true job); return the DAG's path.  Called before the clock starts: never timed."""
    os.makedirs(dagdir, exist_ok=True)
    path = os.path.join(dagdir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)
    with open(os.path.join(dagdir, "job.sub"), "w", encoding="utf-8") as f:
        f.write("executable = /bin/true\nqueue\n")
    return path


def add_dagman_arguments(parser) -> None:
    """--scan-interval and --max-idle, the DagMan options a benchmark may vary."""
    parser.add_argument("--scan-interval", type=float, default=None, metavar="S",
                        help="Options.scan_interval (default: the Options default, as `crabtui dag run` uses)")
    parser.add_argument("--max-idle", type=int, default=None, metavar="N",
                        help="Options.max_idle, -maxidle (default: the Options default; 0: no limit)")


def dagman_options(args):
    """DagMan Options with --scan-interval and --max-idle where given, else Options()'s own
    defaults: what ``python -m engine.dagman`` and ``crabtui dag run`` use."""
    from engine.dagman.runner import Options

    given = {"scan_interval": args.scan_interval, "max_idle": args.max_idle}
    return Options(**{k: v for k, v in given.items() if v is not None})


@dataclass
class DagRun:
    """How ``run_dagman`` went: ``samples`` are (seconds since start, progress count)."""

    exit_code: int
    end: float  # time.perf_counter() when DagMan.run() returned
    stopped: bool  # by the timeout or a stall
    stalled_at: int | None  # the progress count when a stall stopped it
    samples: list[tuple[float, int]]


def run_dagman(dagman, start: float, timeout: float, progress: Callable[[], int], stall_s: float) -> DagRun:
    """``dagman.run()``, stopped once ``timeout`` seconds have passed since ``start`` or
    ``progress()`` (a count of nodes) has not moved for ``stall_s`` seconds, so that a slow or stuck
    DAG still ends with a report.  It is stopped the way condor_hold stops DAGMan, by SIGTERM:
    run() returns at the end of its cycle.  ``progress()`` is sampled every SAMPLE_S seconds
    from another thread."""
    stopped, sampling = threading.Event(), threading.Event()
    samples: list[tuple[float, int]] = [(0.0, 0)]
    stalled_at = None

    def stop() -> None:
        stopped.set()
        os.kill(os.getpid(), signal.SIGTERM)

    def sample() -> None:
        nonlocal stalled_at
        moved = time.perf_counter()  # a stall counts from the run, not from the parse before it
        while not sampling.wait(SAMPLE_S):
            now, count = time.perf_counter(), progress()
            if count != samples[-1][1]:
                moved = now
            samples.append((now - start, count))
            if now - moved > stall_s and stalled_at is None:
                stalled_at = count
                stop()

    sampler = threading.Thread(target=sample, daemon=True)
    timer = threading.Timer(max(0.0, timeout - (time.perf_counter() - start)), stop)
    timer.daemon = True
    # A SIGTERM that lands outside run() (which installs its own handler) must not kill us.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    sampler.start()
    timer.start()
    try:
        code = dagman.run()
    finally:
        end = time.perf_counter()
        timer.cancel()
        sampling.set()
        sampler.join()
        signal.signal(signal.SIGTERM, previous)
    return DagRun(code, end, stopped.is_set(), stalled_at, samples)


def best_of(runs: int, fn) -> tuple[float, object]:
    """Smallest wall time of ``runs`` calls to ``fn`` (the least disturbed by a noisy machine),
    and the result of the last call."""
    best, result = float("inf"), None
    for _ in range(runs):
        result = None  # free the last result before the next call
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def crabtui_scripts() -> tuple[str, str | None]:
    """The console script pip installed next to this interpreter, and the ``crabtui`` on PATH if
    that is something else (a pyenv shim is a bash script running ``pyenv exec``), timed apart."""
    crabtui = os.path.join(os.path.dirname(sys.executable), "crabtui")
    if not os.access(crabtui, os.X_OK):
        sys.exit(f"no crabtui console script at {crabtui}; install the project (pip install -e .)")
    on_path = shutil.which("crabtui")
    return crabtui, on_path if on_path and os.path.realpath(on_path) != os.path.realpath(crabtui) else None


def maxrss_mb() -> float:
    """Peak RSS of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def report(result: dict, as_json: bool, print_report: Callable[[dict], None]) -> None:
    """Print ``result`` as one JSON object (``--json``, for scripts), else as ``print_report``
    lays it out for people."""
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)
