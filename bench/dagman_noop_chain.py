"""Benchmark: the embedded DAGMan running a long chain of NOOP nodes.

    python3 bench/dagman_noop_chain.py [--nodes 100000] [--scan-interval S] [--timeout T] [--json] [--keep]

The DAG is a chain: ``JOB N0 job.sub NOOP`` ... ``JOB N<n-1> job.sub NOOP`` and
``PARENT N<k> CHILD N<k+1>`` for every k, written once to a temporary directory under /tmp (a
short path: the embedded schedd's Unix socket path holds at most 107 bytes), so writing it is
never timed.  A NOOP node's job never reaches the schedd: DAGMan writes a fake submit event and a
fake terminate event to ``chain.dag.nodes.log`` and learns that the node is done by reading them
back with ``htcondor2.JobEventLog``, as condor_dagman does.  A chain lets exactly one node be
ready at a time, so the run is as many DAGMan cycles as there are nodes: it measures the cost of
one cycle, and how that cost grows with the size of the DAG.

What is measured, in this process, against a real embedded schedd (a fresh daemon in its own
state directory, started and stopped by ``engine.schedd.local.client.LocalScheddClient``; its
start-up is not timed, and it is stopped with ``client.shutdown()`` at the end, also on error):

* the whole run, parse to exit: ``build_graph(parse_file(path))``, then
  ``DagMan(graph, client, Options(scan_interval=S)).run()``, which must return 0 with every node
  DONE; the parse alone is reported too;
* progress: how many NOOP nodes had been started, sampled by a thread every 0.5 s, reported as
  nodes/s over the first and the last tenth of the run; a rate that falls as the run goes on
  means a cycle costs more the more nodes are done (work proportional to the DAG's size per
  cycle, so quadratic in all);
* peak memory: ``ru_maxrss`` of this process (the daemon is a separate process and not counted)
  after the imports and at the end;
* how busy the machine was: a fixed pure-Python loop (10,000,000 additions) timed just before
  the parse and just after the run, against the 0.34 s it takes on the development machine when
  it is quiet.  The ratio of the slower of the two to 0.34 s is printed with the total divided by
  it, an estimate of the run on a quiet machine; the verdict is on the measured time only.

``--scan-interval`` and ``--max-idle`` default to ``Options()``'s values, what ``python -m
engine.dagman`` and ``crabtui dag run`` use.  ``--timeout T`` (default: twice the time target) stops
a run that has not finished by then the way condor_hold stops DAGMan (SIGTERM: DAGMan returns at the end of its
cycle), and so does a stall (no node started for 10 s); the verdict is then FAIL and the
progress so far is reported.

Targets: the whole run (parse to exit) under 10 s for 100,000 nodes; from 1,000,000 nodes
(``--nodes 1000000``, issue 22) under 60 s with a peak RSS under 2.5 GB.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from benchlib import (add_dagman_arguments, dagman_options, embedded_schedd, maxrss_mb, report, run_dagman, run_main,
                      scratch_dir, verdict, write_dag)

TARGETS = ((1_000_000, 60.0, 2500.0), (0, 10.0, None))  # (from nodes, seconds, peak RSS MB or None)
STALL_S = 10.0
QUIET_LOOP_S = 0.34  # calibration_loop() on the development machine when nothing else runs


def calibration_loop() -> float:
    """Seconds for 10,000,000 additions in the interpreter: how fast Python runs right now."""
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - start  # no NOOP node started for this long: the DAG is stuck, stop it


def chain(nodes: int):
    """The DAG's lines: N0 -> N1 -> ... -> N<nodes-1>, every node NOOP."""
    yield from (f"JOB N{k} job.sub NOOP" for k in range(nodes))
    yield from (f"PARENT N{k} CHILD N{k + 1}" for k in range(nodes - 1))


def rate(samples: list[tuple[float, int]], lo: float, hi: float) -> float | None:
    """Nodes/s between the samples nearest to elapsed times ``lo`` and ``hi``."""
    inside = [s for s in samples if lo <= s[0] <= hi]
    if len(inside) < 2 or inside[-1][0] == inside[0][0]:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000, help="number of NOOP nodes in the chain (default 100000)")
    add_dagman_arguments(parser)
    parser.add_argument("--timeout", type=float, default=None, metavar="T",
                        help="stop the DAG after T seconds if it has not finished (default: twice the target)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    args = parser.parse_args()
    n = args.nodes
    target_s, target_mb = next((s, mb) for low, s, mb in TARGETS if n >= low)
    timeout = args.timeout if args.timeout is not None else 2 * target_s

    from engine.dag import build_graph, parse_file
    from engine.dagman.node_status import NodeState
    from engine.dagman.runner import EXIT_RESTART, DagMan

    options = dagman_options(args)
    rss_imports = maxrss_mb()
    with scratch_dir("cbn_", args.keep) as workdir:
        dag_path = write_dag(workdir, "chain.dag", chain(n))
        with embedded_schedd(workdir) as client:
            client.ping()  # starts the daemon; not timed
            with contextlib.chdir(workdir):  # DAGMan runs in the DAG's directory
                loop_before = calibration_loop()
                start = time.perf_counter()
                graph = build_graph(parse_file(dag_path))
                parsed = time.perf_counter()
                dagman = DagMan(graph, client, options)
                run = run_dagman(dagman, start, timeout, lambda: dagman.noop_counter, STALL_S)
                slowdown = max(loop_before, calibration_loop()) / QUIET_LOOP_S
    done = sum(1 for node in dagman.nodes.values() if node.status is NodeState.DONE)

    total = run.end - start
    finished = run.exit_code == 0 and done == n and not run.stopped
    samples = run.samples + [(total, dagman.noop_counter)]
    tenth = total / 10
    first, last = rate(samples, 0.0, tenth), rate(samples, total - tenth, total)
    peak = maxrss_mb()
    result = {
        "nodes": n,
        "edges": max(0, n - 1),
        "scan_interval_s": options.scan_interval,
        "max_idle": options.max_idle,
        "timeout_s": timeout,
        "exit_code": None if run.exit_code == EXIT_RESTART and run.stopped else run.exit_code,
        "timed_out": run.stopped,
        "stalled_at": run.stalled_at,
        "nodes_done": done,
        "parse_s": round(parsed - start, 3),
        "run_s": round(run.end - parsed, 3),
        "total_s": round(total, 3),
        "nodes_per_s": round(done / total, 1) if total else None,
        "ms_per_node": round(1000 * total / done, 3) if done else None,
        "rate_first_tenth_nodes_per_s": round(first, 1) if first is not None else None,
        "rate_last_tenth_nodes_per_s": round(last, 1) if last is not None else None,
        "rss_after_imports_mb": round(rss_imports, 1),
        "peak_rss_mb": round(peak, 1),
        "machine_slowdown": round(slowdown, 2),
        "total_at_quiet_speed_s": round(total / slowdown, 3),
        "target_s": target_s,
        "target_peak_rss_mb": target_mb,
        "pass": finished and total < target_s and (target_mb is None or peak < target_mb),
        "workdir": workdir if args.keep else None,
    }
    report(result, args.json, print_report)
    sys.exit(0 if result["pass"] else 1)


def print_report(r: dict) -> None:
    n = r["nodes"]
    print(f"DAG:          {n:,} NOOP nodes in a chain, {r['edges']:,} edges; "
          f"Options(scan_interval={r['scan_interval_s']:g}, max_idle={r['max_idle']})")
    print(f"parse:        {r['parse_s']:8.3f} s  build_graph(parse_file(path))")
    if r["stalled_at"] is not None:
        print(f"run:          {r['run_s']:8.3f} s  STALLED: no node started for {STALL_S:g} s once "
              f"{r['stalled_at']:,} had been; stopped (SIGTERM) with {r['nodes_done']:,} of {n:,} nodes done")
    elif r["timed_out"]:
        print(f"run:          {r['run_s']:8.3f} s  stopped (SIGTERM) after the {r['timeout_s']:g} s timeout: "
              f"{r['nodes_done']:,} of {n:,} nodes done")
    else:
        print(f"run:          {r['run_s']:8.3f} s  DagMan.run() returned {r['exit_code']}, "
              f"{r['nodes_done']:,} of {n:,} nodes done")
    if r["nodes_done"]:
        print(f"throughput:   {r['nodes_per_s']:8.1f} nodes/s  ({r['ms_per_node']:.3f} ms per node, whole run)")
    if r["rate_first_tenth_nodes_per_s"] is not None and r["rate_last_tenth_nodes_per_s"] is not None:
        print(f"progress:     {r['rate_first_tenth_nodes_per_s']:8.1f} nodes/s in the first tenth of the run, "
              f"{r['rate_last_tenth_nodes_per_s']:.1f} in the last")
    if r["timed_out"] and r["stalled_at"] is None and r["nodes_done"]:
        print(f"              at the whole run's rate, {n:,} nodes would take at least "
              f"{n / r['nodes_per_s']:,.0f} s")
    limit = f"  (target < {r['target_peak_rss_mb']:g} MB)" if r["target_peak_rss_mb"] else ""
    print(f"peak RSS:     {r['peak_rss_mb']} MB (this process; {r['rss_after_imports_mb']} MB after imports){limit}")
    print(f"total:        {r['total_s']:8.3f} s  parse to exit  (target < {r['target_s']:g} s)  {verdict(r['pass'])}")
    print(f"machine:      Python ran {r['machine_slowdown']:.2f}x slower than on the quiet development machine "
          f"({QUIET_LOOP_S:g} s loop); at its speed the total would be about {r['total_at_quiet_speed_s']:.1f} s")
    if r["workdir"]:
        print(f"workdir:      {r['workdir']}")


if __name__ == "__main__":
    run_main(main)
