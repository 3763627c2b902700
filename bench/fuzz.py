"""Benchmark: bad input at volume; no input may give a traceback or hang.

    python3 bench/fuzz.py [--cases 10000] [--kind NAME ...] [--timeout 10] [--json]

Runs ``--cases`` generated inputs of each kind the suite fuzzes (tests/fuzz_inputs.py: DAG files,
submit files, pool.toml, a CRAB task's TOML, taskworker.toml, the keymap, state directories, job
ids and constraints on the command line), the cases issue 20 found among them, each through the
reader a user's input goes through: the DAG parser and graph builder, the submit file reader,
the TOML readers, the state directory checks, and for job ids the real ``crabtui`` command line
(in this process) against a running schedd daemon.

Each case must be accepted, or refused with its reader's one-line error.  Counted as a
traceback: any other exception (or a refusal on several lines, or not naming the file); as a
hang: a case still running after ``--timeout`` seconds; memory is capped (4 GB of address space)
so that a blow-up shows as a MemoryError, a traceback.  The first traceback of each kind is
printed.  Hypothesis generates the cases, randomly (no shrinking), so each run tries new ones.

Target: 0 tracebacks and 0 hangs in every kind.  Exit status 0 when met.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from benchlib import announce, report, run_main, verdict  # noqa: E402

MEMORY_CAP = 4 << 30


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run_kind(name: str, strategy, check, known: list, cases: int, timeout: float, workroot: Path) -> dict:
    """Run ``known`` then ``cases`` generated inputs through ``check``; count what happened."""
    from hypothesis import HealthCheck, Phase, given, settings

    counts = {"cases": 0, "accepted": 0, "refused": 0, "tracebacks": 0, "hangs": 0, "first_traceback": None}

    def one(case) -> None:
        workdir = Path(tempfile.mkdtemp(dir=workroot))
        counts["cases"] += 1
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            counts[check(case, workdir)] += 1
        except Hang:
            counts["hangs"] += 1
        except BaseException as e:  # noqa: BLE001 - what the benchmark counts
            if isinstance(e, KeyboardInterrupt):
                raise
            counts["tracebacks"] += 1
            if counts["first_traceback"] is None:
                counts["first_traceback"] = f"{case!r:.300}\n" + "".join(traceback.format_exception(e))[-3000:]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            for root, dirs, _ in os.walk(workdir):
                for d in dirs:
                    try:
                        os.chmod(os.path.join(root, d), 0o700)
                    except OSError:
                        pass
            shutil.rmtree(workdir, ignore_errors=True)

    for case in known:
        one(case)
    generated = settings(max_examples=cases, database=None, deadline=None, phases=[Phase.generate],
                         suppress_health_check=list(HealthCheck))(given(strategy)(one))
    start = time.perf_counter()
    generated()
    counts["seconds"] = round(time.perf_counter() - start, 1)
    counts["kind"] = name
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="generated cases of each kind (default 10000)")
    parser.add_argument("--kind", action="append", help="only this kind (repeatable); default: all")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds after which a case is a hang")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    announce(__doc__)

    import fuzz_inputs
    from schedd.schedd_harness import stop_daemon

    from engine.schedd.local.client import LocalScheddClient
    from engine.state import StateDir

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    signal.signal(signal.SIGALRM, _alarm)
    kinds = {**{name: (s, c, fuzz_inputs.KNOWN[name]) for name, (s, c) in fuzz_inputs.KINDS.items()},
             "command-line job ids": (fuzz_inputs.cli_cases, None, fuzz_inputs.KNOWN_CLI)}
    chosen = args.kind or list(kinds)
    results = []
    workroot = Path(tempfile.mkdtemp(prefix="cbt_fuzz_", dir="/tmp"))
    try:
        for name in chosen:
            strategy, check, known = kinds[name]
            if check is None:  # the command line needs a schedd, with jobs to act on
                state = StateDir(str(workroot / "state"))
                os.makedirs(state.path, mode=0o700)
                with LocalScheddClient(state) as client:
                    client.submit("executable = /bin/sleep\narguments = 300\nhold = true\nqueue 2\n", cwd=state.path)
                try:
                    result = run_kind(name, strategy, lambda case, _: fuzz_inputs.check_cli(case, state.path),
                                      known, args.cases, args.timeout, workroot)
                finally:
                    stop_daemon(state)
                with open(state.log, errors="replace") as f:
                    if "Traceback" in f.read():
                        result["tracebacks"] += 1
                        result["first_traceback"] = result["first_traceback"] or f"the schedd logged one: {state.log}"
            else:
                result = run_kind(name, strategy, check, known, args.cases, args.timeout, workroot)
            results.append(result)
            if not args.json:
                print_row(result)
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    ok = all(r["tracebacks"] == 0 and r["hangs"] == 0 for r in results)
    summary = {"cases_per_kind": args.cases, "timeout_s": args.timeout, "kinds": results, "pass": ok}
    if args.json:
        report(summary, True, lambda r: None)
    else:
        print(f"verdict: {verdict(ok)} (target: 0 tracebacks, 0 hangs)")
    sys.exit(0 if ok else 1)


def print_row(r: dict) -> None:
    print(f"{r['kind']:<22} {r['cases']:6d} cases  {r['accepted']:6d} accepted  {r['refused']:6d} refused  "
          f"{r['tracebacks']:4d} tracebacks  {r['hangs']:3d} hangs  {r['seconds']:7.1f} s", flush=True)
    if r["first_traceback"]:
        print("  first traceback:\n    " + r["first_traceback"].replace("\n", "\n    "))


if __name__ == "__main__":
    run_main(main)
