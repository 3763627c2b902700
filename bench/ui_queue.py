"""Benchmark: the UI's queue view (``b``) on a busy schedd: 100,000 jobs, one batch of 10,000 procs.

    python3 bench/ui_queue.py [--backend embedded|htcondor] [--dags 450] [--jobs 200] [--big 10000]
                              [--runs 2] [--window 20] [--size 160x50] [--json] [--keep]
                              [--baseline CHECKOUT]

Set-up (not timed, but reported): the queue of bench/ui_dags.py (``--dags`` DAGs of ``--jobs``
node jobs, DAGMan jobs held, node jobs idle matching no slot and one in ten held, with their DAG
files, nodes logs and dagman.out; each DAG's node jobs one cluster, for condor_q groups a
cluster's jobs under its first's DAG), and one plain cluster of ``--big`` procs with a user log
(``log = big.log``, ``batch_name = big``), one in ten held, as condor_submit queues it: 100,451
jobs in 451 batches by default.  On the pool (``--backend htcondor``) the jobs are removed at the
end, by cluster id.

Each run is a fresh process that opens the app headless on the queue view, as ``b`` does, with
a fixed clock and no refresh unasked, and measures
* first paint: app start to the batch list's rows on screen; then Enter on the big batch to its
  10,000 jobs on screen;
* one refresh tick, nothing changed and after one job of the big batch was held (through the
  schedd, not the UI): CPU of the UI thread (``time.thread_time`` on the event loop's thread) and
  of the whole process, on the batch list and on the big batch's screen;
* the schedd's load while the batch list, then the big batch's screen, refresh every second for
  ``--window`` seconds each: queries a minute and the schedd daemon's CPU;
* peak RSS of the process.
The baseline, in the same run, is bench/ui_dags.py's: ``condor_q -nobatch`` (``crabtui q
-nobatch`` on the embedded engine) run ``--polls`` times, the schedd's CPU for one run being what
polling it every second asks of it every second; loads are counted above the schedd's own.
With ``--baseline CHECKOUT`` (a checkout of another version, ``git archive``'s say), its code is
measured too, its runs alternated with this one's on the same queue, and the first paints are
compared.

Targets (issue 22): first paint < 2 s, a refresh tick < 50 ms of UI-thread CPU, RSS < 500 MB, and
less schedd load than condor_q every second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from contextlib import ExitStack

from benchlib import announce, report, run_main, scratch_dir, verdict
from ui_dags import (NOWHERE, REFRESHES, TARGETS, best_tick, daemon_cpu, engine, fabricate, instrumented_app,
                     poll_condor_q, refresh_tick)
from ui_task import app_until, python_loop

BIG = "big"


def fabricate_big(schedd, workdir: str, procs: int) -> int:
    """One cluster of ``procs`` jobs with a user log, one in ten held: a plain condor_submit."""
    directory = os.path.join(workdir, BIG)
    os.makedirs(directory)
    os.chmod(directory, 0o777)  # the pool writes the log as its job user
    items = "".join(f"{'true' if n % 10 == 9 else 'false'}\n" for n in range(procs))
    text = (f"executable = /bin/true\nrequirements = {NOWHERE}\nlog = {BIG}.log\nbatch_name = {BIG}\n"
            f"hold = $(held)\nqueue held from (\n{items})\n")
    return schedd.submit(text, cwd=directory).cluster


# -------------------------------------------------------------- one run, in its own process

async def session(args: argparse.Namespace) -> dict:
    from textual import events

    from crabtui.screens.batch import BatchScreen
    from crabtui.screens.batches import BatchesScreen
    from crabtui.snapshots import Backend
    from engine.state import StateDir

    BenchApp, calls, walls, queries = instrumented_app(BatchesScreen, (BatchesScreen, BatchScreen))

    def until(condition, what: str):
        return app_until(app, condition, what, timeout=600)

    def refresh():
        return refresh_tick(app, pilot, calls)

    async def until_held(count, job: str) -> list[dict]:
        """Refreshes until ``count()`` grew after ``job`` was held through the schedd."""
        before = count()
        await asyncio.to_thread(_hold, args, job)
        changed = []
        for _ in range(REFRESHES):
            changed.append(await refresh())
            if count() > before:
                break
        return changed

    backend = Backend(StateDir(args.measure), args.backend)
    now = time.time()
    app = BenchApp(backend, clock=time.time if args.window else lambda: now,
                   interval=1.0 if args.window else 3600)
    start = time.perf_counter()
    result: dict = {}
    async with app.run_test(size=tuple(int(n) for n in args.size.split("x"))) as pilot:
        await until(lambda: BatchesScreen in app.shown, "the batch list")
        result["first_paint_s"] = app.shown[BatchesScreen] - start
        result["first_fetch_s"], result["first_queries_s"] = walls[0], queries[1]
        batches = app.screen
        await until(lambda: any(b.name == BIG for b in batches.table.items.values()), "the big batch")
        big = next(key for key, b in batches.table.items.items() if b.name == BIG)
        result["rows"] = batches.table.row_count

        def list_held() -> int:
            return batches.table.items[big].held

        jobs = iter(f"{args.big_cluster}.{n}" for n in range(args.first_proc, args.big, 10))
        if args.window:  # the schedd's load while the list, then the batch, refresh every second
            loads = {}
            for where in ("list", "batch"):
                if where == "batch":
                    batches.table.move_cursor(row=batches.table.get_row_index(big))
                    await app._post_message(events.Key("enter", "\r"))
                    await until(lambda: BatchScreen in app.shown, "the big batch's screen")
                screen = app.screen
                cpu, asked, t0 = daemon_cpu(args.pid), queries[0], time.perf_counter()
                await asyncio.sleep(args.window / 2)
                job = await asyncio.to_thread(_hold, args, next(jobs))
                await asyncio.sleep(args.window / 2)
                wall = time.perf_counter() - t0
                saw = (list_held() if where == "list" else
                       screen.table.items[job].status == 5 if job in screen.table.items else False)
                loads[where] = {"cpu_s": daemon_cpu(args.pid) - cpu, "queries": queries[0] - asked,
                                "wall_s": wall, "saw_hold": bool(saw)}
            result["loads"] = loads
            return result
        await pilot.pause()
        result["list_refresh"] = best_tick([await refresh() for _ in range(REFRESHES)])
        held = list_held()
        result["list_refresh_changed"] = (await until_held(list_held, next(jobs)))[-1]
        result["list_saw_hold"] = list_held() > held
        batches.table.move_cursor(row=batches.table.get_row_index(big))
        opened = time.perf_counter()
        await app._post_message(events.Key("enter", "\r"))
        await until(lambda: BatchScreen in app.shown, "the big batch's screen")
        result["batch_first_paint_s"] = app.shown[BatchScreen] - opened
        screen = app.screen
        await until(lambda: screen.table.row_count >= args.big, f"{args.big} jobs")
        result["batch_rows"] = screen.table.row_count
        await pilot.pause()
        result["batch_refresh"] = best_tick([await refresh() for _ in range(REFRESHES)])

        def batch_held() -> int:
            return sum(1 for j in screen.table.items.values() if j.status == 5)

        result["batch_refresh_changed"] = (await until_held(batch_held, next(jobs)))[-1]
        result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result["queries"] = queries[0]
    return result


def _hold(args: argparse.Namespace, job: str) -> str:
    """Hold ``job`` through the schedd, and wait until its event is in the big batch's log."""
    if args.backend == "htcondor":
        from engine.schedd.htcondor import HTCondorSchedd

        schedd = HTCondorSchedd()
    else:
        from engine.schedd.local.client import LocalScheddClient
        from engine.state import StateDir

        schedd = LocalScheddClient(StateDir(args.measure))
    size = os.path.getsize(args.big_log)
    with schedd:
        schedd.act("Hold", [job], "held by bench/ui_queue.py")
    deadline = time.monotonic() + 60
    while os.path.getsize(args.big_log) == size and time.monotonic() < deadline:
        time.sleep(0.01)
    return job


def measure(args: argparse.Namespace) -> None:
    print(json.dumps(asyncio.run(session(args))))


# -------------------------------------------------------------- the runs, from the parent

def run_once(setup: dict, args: argparse.Namespace, run: int, window: float = 0, code: str | None = None) -> dict:
    """One run in a fresh process (of ``code``'s crabtui, a checkout's directory, if given); it
    holds jobs of the big batch no run held before (procs ``run*20`` on: each run holds at most
    two outside the window, which holds two more)."""
    argv = [sys.executable, __file__, "--measure", setup["state"], "--backend", args.backend, "--big", str(args.big),
            "--size", args.size, "--window", repr(window), "--pid", str(setup["pid"]),
            "--big-cluster", str(setup["big"]), "--big-log", setup["big_log"], "--first-proc", str(run * 20)]
    env = dict(os.environ, PYTHONPATH=code) if code else None
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode:
        sys.exit(f"the run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("embedded", "htcondor"), default="embedded")
    parser.add_argument("--dags", type=int, default=450, help="DAGs (default 450)")
    parser.add_argument("--jobs", type=int, default=200, help="node jobs in the queue per DAG (default 200)")
    parser.add_argument("--big", type=int, default=10_000, help="procs of the big batch (default 10,000)")
    parser.add_argument("--runs", type=int, default=2, help="runs, each a fresh process (best counts)")
    parser.add_argument("--window", type=float, default=20.0, help="seconds the schedd's load is measured")
    parser.add_argument("--polls", type=int, default=3, help="condor_q runs measured for the baseline")
    parser.add_argument("--size", default="160x50", help="terminal size, WIDTHxHEIGHT")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (the pool's jobs go)")
    parser.add_argument("--baseline", metavar="CHECKOUT", help="also measure the first paints of this checkout's code")
    for hidden in ("--measure", "--pid", "--big-cluster", "--big-log", "--first-proc"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    announce(__doc__)
    if args.measure:
        args.pid, args.big_cluster, args.first_proc = int(args.pid), int(args.big_cluster), int(args.first_proc)
        measure(args)
        return

    with scratch_dir("cbuiqueue_", args.keep) as workdir, ExitStack() as stack:
        schedd, pid, state, condor_q = stack.enter_context(engine(args.backend, workdir))
        # a cluster for each DAG's node jobs: condor_q groups a cluster's jobs by its first's DAG
        setup = fabricate(schedd, workdir, args.dags, args.jobs, args.backend, per_submission=args.jobs)
        start = time.perf_counter()
        setup["big"] = fabricate_big(schedd, workdir, args.big)
        setup["setup_s"] += time.perf_counter() - start
        setup.update(pid=pid, state=state, big_log=os.path.join(workdir, BIG, f"{BIG}.log"))
        runs, baseline = [], []
        for run in range(args.runs):
            runs.append(run_once(setup, args, 2 * run))
            if args.baseline:
                baseline.append(run_once(setup, args, 2 * run + 1, code=os.path.abspath(args.baseline)))
        cpu, start = daemon_cpu(pid), time.perf_counter()
        time.sleep(args.window)  # the schedd alone, busy with its own work
        idle = {"cpu_s": daemon_cpu(pid) - cpu, "wall_s": time.perf_counter() - start}
        load = run_once(setup, args, 2 * args.runs, args.window)["loads"]
        polled = poll_condor_q(condor_q, pid, args.polls)
    jobs = setup["jobs"] + args.dags + args.big
    result = {"backend": args.backend, "jobs": jobs, "batches": args.dags + 1, "big": args.big,
              "setup": f"{jobs:,} jobs in {args.dags + 1} batches queued in {setup['setup_s']:.1f} s",
              "size": args.size, "runs": args.runs, "window_s": args.window, "targets": TARGETS}
    for key in ("first_paint_s", "first_fetch_s", "first_queries_s", "batch_first_paint_s", "rss_mb"):
        result[key] = (min if key != "rss_mb" else max)(r[key] for r in runs)
    for key in ("list_refresh", "list_refresh_changed", "batch_refresh", "batch_refresh_changed"):
        result[key] = {k: min(r[key][k] for r in runs) for k in runs[0][key]}
    if baseline:
        result["baseline"] = {key: min(r[key] for r in baseline) for key in
                              ("first_paint_s", "first_fetch_s", "first_queries_s", "batch_first_paint_s")}
        result["baseline"]["path"] = args.baseline
    result["saw_hold_each"] = [r["list_saw_hold"] for r in runs] + [load[w]["saw_hold"] for w in ("list", "batch")]
    alone = idle["cpu_s"] / idle["wall_s"]
    polled_cpu = polled["cpu_s"] / polled["queries"] - alone * polled["wall_s"] / polled["queries"]
    result["idle"], result["condor_q"] = idle, polled
    result["load"] = {w: {"cpu": load[w]["cpu_s"] / load[w]["wall_s"] - alone,
                          "queries_per_min": load[w]["queries"] / load[w]["wall_s"] * 60} for w in load}
    result["load"]["condor_q_every_second"] = polled_cpu
    result["python_loop_s"] = python_loop()
    result["pass"] = {
        "first_paint": result["first_paint_s"] < TARGETS["first_paint_s"],
        "batch_first_paint": result["batch_first_paint_s"] < TARGETS["first_paint_s"],
        "refresh": max(result[k]["ui_cpu_s"] for k in ("list_refresh", "list_refresh_changed", "batch_refresh",
                                                       "batch_refresh_changed")) < TARGETS["refresh_cpu_s"],
        "rss": result["rss_mb"] < TARGETS["rss_mb"],
        "schedd_load": all(result["load"][w]["cpu"] < polled_cpu and result["load"][w]["queries_per_min"] < 60
                           for w in ("list", "batch")),
        "saw_hold": all(result["saw_hold_each"]),
    }
    report(result, args.json, print_report)
    sys.exit(0 if all(result["pass"].values()) else 1)


def print_report(r: dict) -> None:
    t, ok = r["targets"], r["pass"]

    def ms(s: float) -> str:
        return f"{s * 1000:7.1f} ms"

    print(f"{r['backend']}: {r['setup']}; terminal {r['size']}; best of {r['runs']} runs; "
          f"this machine adds 10M numbers in a Python loop in {r['python_loop_s']:.2f} s")
    print(f"{'first paint: the batch list':52}{ms(r['first_paint_s'])}   < {t['first_paint_s']:g} s  "
          f"{verdict(ok['first_paint'])}")
    print(f"{'  the first fetch (worker thread), wall':52}{ms(r['first_fetch_s'])}")
    print(f"{'  of which the schedd answering its queries':52}{ms(r['first_queries_s'])}")
    print(f"{'first paint: Enter on the big batch to its ' + format(r['big'], ',') + ' jobs':52}"
          f"{ms(r['batch_first_paint_s'])}   < {t['first_paint_s']:g} s  {verdict(ok['batch_first_paint'])}")
    if "baseline" in r:
        b = r["baseline"]
        print(f"baseline {b['path']} (runs alternated with these): first paint {b['first_paint_s']:.2f} s "
              f"(fetch {b['first_fetch_s']:.2f} s, the schedd {b['first_queries_s']:.2f} s), "
              f"x{b['first_paint_s'] / r['first_paint_s']:.1f} of this one's; Enter on the big batch "
              f"{b['batch_first_paint_s']:.2f} s, x{b['batch_first_paint_s'] / r['batch_first_paint_s']:.1f}")
    for key, title in (("list_refresh", "the list, nothing changed"), ("list_refresh_changed", "the list, a job held"),
                       ("batch_refresh", "the batch, nothing changed"),
                       ("batch_refresh_changed", "the batch, a job held")):
        a = r[key]
        print(f"{'refresh tick, ' + title + ': UI thread':52}{ms(a['ui_cpu_s'])}   < {t['refresh_cpu_s'] * 1000:g} ms  "
              f"{verdict(a['ui_cpu_s'] < t['refresh_cpu_s'])}")
        print(f"{'  all threads':52}{ms(a['cpu_s'])}   (fetch {ms(a['fetch_cpu_s'])})")
    print(f"{'peak RSS':52}{r['rss_mb']:7.1f} MB   < {t['rss_mb']:g} MB  {verdict(ok['rss'])}")
    i, q, load = r["idle"], r["condor_q"], r["load"]
    print(f"schedd load (its CPU above the {i['cpu_s'] / i['wall_s'] * 100:.1f} % it uses alone):"
          f"{'queries/min':>12}  {'daemon CPU':>12}   ratio to condor_q")
    base = load["condor_q_every_second"]
    for w, title in (("list", "the batch list"), ("batch", "the big batch")):
        cpu = load[w]["cpu"]
        ratio = f"x{base / cpu:.0f} less" if cpu > 0 else "none above the schedd alone"
        print(f"{'  ' + title + ', refreshing every second for ' + format(r['window_s'], 'g') + ' s':52}"
              f"{load[w]['queries_per_min']:10.1f}  {cpu * 100:10.1f} %   {ratio}")
    print(f"{'  condor_q every second (baseline: ' + str(q['queries']) + ' runs, ' + format(q['wall_s'] / q['queries'], '.1f') + ' s each)':52}"
          f"{60:10.1f}  {base * 100:10.1f} %   {verdict(ok['schedd_load'])}")
    seen = " ".join("yes" if saw else "no" for saw in r["saw_hold_each"])
    print(f"{'a job held through the schedd shows (runs, windows)':52}{seen:>14}  {verdict(ok['saw_hold'])}")


if __name__ == "__main__":
    run_main(main)
