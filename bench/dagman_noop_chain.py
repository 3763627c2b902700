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
  after the imports and at the end.

``--scan-interval`` and ``--max-idle`` default to ``Options()``'s values, what ``python -m
engine.dagman`` and ``crabtui dag run`` use.  ``--timeout T`` (default 120 s) stops a run that has
not finished by then the way condor_hold stops DAGMan (SIGTERM: DAGMan returns at the end of its
cycle), and so does a stall (no node started for 10 s); the verdict is then FAIL and the
progress so far is reported.

Target: the whole run (parse to exit) under 10 s for 100,000 nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time

TARGET_S = 10.0
SAMPLE_S = 0.5
STALL_S = 10.0  # no NOOP node started for this long: the DAG is stuck, stop it


def maxrss_mb() -> float:
    """Peak RSS of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def write_dag(path: str, nodes: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for k in range(nodes):
            f.write(f"JOB N{k} job.sub NOOP\n")
        for k in range(nodes - 1):
            f.write(f"PARENT N{k} CHILD N{k + 1}\n")


class Sampler(threading.Thread):
    """Every SAMPLE_S seconds, (elapsed s, NOOP nodes started so far) from the DagMan's counter;
    if that count has not moved for STALL_S seconds, stop the DAG (``on_stall``)."""

    def __init__(self, start: float, on_stall):
        super().__init__(daemon=True)
        self.start_time = start
        self.on_stall = on_stall
        self.dagman = None
        self.samples: list[tuple[float, int]] = [(0.0, 0)]
        self.stalled_at: int | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        moved = time.perf_counter()
        while not self.stop.wait(SAMPLE_S):
            dagman = self.dagman
            if dagman is None:
                continue
            now = time.perf_counter()
            started = getattr(dagman, "noop_counter", 0)
            if started != self.samples[-1][1]:
                moved = now
            self.samples.append((now - self.start_time, started))
            if now - moved > STALL_S and self.stalled_at is None:
                self.stalled_at = started
                self.on_stall()


def rate(samples: list[tuple[float, int]], lo: float, hi: float) -> float | None:
    """Nodes/s between the samples nearest to elapsed times ``lo`` and ``hi``."""
    inside = [s for s in samples if lo <= s[0] <= hi]
    if len(inside) < 2 or inside[-1][0] == inside[0][0]:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000, help="number of NOOP nodes in the chain (default 100000)")
    parser.add_argument("--scan-interval", type=float, default=None, metavar="S",
                        help="Options.scan_interval (default: the Options default, as `crabtui dag run` uses)")
    parser.add_argument("--max-idle", type=int, default=None, metavar="N",
                        help="Options.max_idle, -maxidle (default: the Options default; 0: no limit)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="T",
                        help="stop the DAG after T seconds if it has not finished (default 120)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    args = parser.parse_args()
    n = args.nodes

    from engine.dag import build_graph, parse_file
    from engine.dagman.node_status import NodeState
    from engine.dagman.runner import EXIT_RESTART, DagMan, Options
    from engine.schedd.local.client import LocalScheddClient
    from engine.state import StateDir

    scan_interval = Options().scan_interval if args.scan_interval is None else args.scan_interval
    max_idle = Options().max_idle if args.max_idle is None else args.max_idle
    rss_imports = maxrss_mb()
    workdir = tempfile.mkdtemp(prefix="cbn_", dir="/tmp")  # short: the socket path must fit 107 bytes
    dag_path = os.path.join(workdir, "chain.dag")
    write_dag(dag_path, n)
    with open(os.path.join(workdir, "job.sub"), "w") as f:
        f.write("executable = /bin/true\nqueue\n")
    state = StateDir(os.path.join(workdir, "s"))
    os.makedirs(state.path, mode=0o700)
    client = LocalScheddClient(state)
    timed_out = threading.Event()

    def stop_dag() -> None:  # what condor_hold does to DAGMan: run() returns at the end of its cycle
        timed_out.set()
        os.kill(os.getpid(), signal.SIGTERM)

    old_cwd = os.getcwd()
    try:
        client.ping()  # starts the daemon; not timed
        os.chdir(workdir)  # DAGMan runs in the DAG's directory
        start = time.perf_counter()
        sampler = Sampler(start, stop_dag)
        sampler.start()
        graph = build_graph(parse_file(dag_path))
        parsed = time.perf_counter()
        dagman = DagMan(graph, client, Options(scan_interval=scan_interval, max_idle=max_idle))
        sampler.dagman = dagman
        remaining = max(0.0, args.timeout - (time.perf_counter() - start))
        timer = threading.Timer(remaining, stop_dag)
        timer.daemon = True
        # A SIGTERM that lands outside run() (which installs its own handler) must not kill us.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
        timer.start()
        try:
            code = dagman.run()
        finally:
            timer.cancel()
            signal.signal(signal.SIGTERM, previous)
        end = time.perf_counter()
        sampler.stop.set()
        sampler.join()
        done = sum(1 for node in dagman.nodes.values() if node.status is NodeState.DONE)
        started = getattr(dagman, "noop_counter", done)
    finally:
        os.chdir(old_cwd)
        client.shutdown()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    total = end - start
    finished = code == 0 and done == n and not timed_out.is_set()
    samples = sampler.samples + [(total, started)]
    tenth = total / 10
    first, last = rate(samples, 0.0, tenth), rate(samples, total - tenth, total)
    peak = maxrss_mb()
    result = {
        "nodes": n,
        "edges": max(0, n - 1),
        "scan_interval_s": scan_interval,
        "max_idle": max_idle,
        "timeout_s": args.timeout,
        "exit_code": None if code == EXIT_RESTART and timed_out.is_set() else code,
        "timed_out": timed_out.is_set(),
        "stalled_at": sampler.stalled_at,
        "nodes_done": done,
        "parse_s": round(parsed - start, 3),
        "run_s": round(end - parsed, 3),
        "total_s": round(total, 3),
        "nodes_per_s": round(done / total, 1) if total else None,
        "ms_per_node": round(1000 * total / done, 3) if done else None,
        "rate_first_tenth_nodes_per_s": round(first, 1) if first is not None else None,
        "rate_last_tenth_nodes_per_s": round(last, 1) if last is not None else None,
        "rss_after_imports_mb": round(rss_imports, 1),
        "peak_rss_mb": round(peak, 1),
        "target_s": TARGET_S,
        "pass": finished and total < TARGET_S,
        "workdir": workdir if args.keep else None,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)
    sys.exit(0 if result["pass"] else 1)


def print_report(r: dict) -> None:
    verdict = {True: "PASS", False: "FAIL"}
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
    print(f"peak RSS:     {r['peak_rss_mb']} MB (this process; {r['rss_after_imports_mb']} MB after imports)")
    print(f"total:        {r['total_s']:8.3f} s  parse to exit  (target < {r['target_s']:g} s)  {verdict[r['pass']]}")
    if r["workdir"]:
        print(f"workdir:      {r['workdir']}")


if __name__ == "__main__":
    main()
