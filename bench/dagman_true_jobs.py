"""Benchmark: the embedded DAGMan running many independent /bin/true nodes, against the schedd alone.

    python3 bench/dagman_true_jobs.py [--nodes 10000] [--scan-interval S] [--max-idle N] [--timeout T] [--json] [--keep]

The DAG has ``--nodes`` nodes ``JOB N<k> job.sub`` and no edges; ``job.sub`` is
``executable = /bin/true`` and ``queue``.  It is written once to a temporary directory under /tmp
(a short path: the embedded schedd's Unix socket path holds at most 107 bytes), so writing it is
never timed.  Every node is one cluster of one job, submitted by DAGMan through the Schedd API
with DAGMan's macros; DAGMan learns what its jobs did by reading ``jobs.dag.nodes.log``.

What is measured, in one run (the machine is shared and noisy, so absolute seconds drift from
run to run; the ratio compares DAGMan with the schedd alone on the same machine at the same
moment, and is the number the target applies to), each against a fresh embedded schedd daemon
in its own state directory, started through ``engine.schedd.local.client.LocalScheddClient``
(start-up not timed) and stopped with ``client.shutdown()`` at the end, also on error:

* the schedd alone: the same jobs submitted directly, as ``bench/schedd_throughput.py`` does it
  (its ``run_schedd``): one cluster of ``--nodes`` ``/bin/true`` jobs with a user log, timed
  from just before ``client.submit()`` until the log holds that many JOB_TERMINATED events;
* DAGMan: parse to exit, ``build_graph(parse_file(path))`` then
  ``DagMan(graph, client, Options(scan_interval=S, max_idle=N)).run()`` in this process, which
  must return 0 with every node DONE;
* for both, the CPU time used meanwhile by the daemon and by this process (DAGMan itself, or
  the client following the log), from /proc and ``time.process_time()``: it shows which
  process is the bottleneck;
* ratio = DAGMan time / schedd-alone time.

``--scan-interval`` and ``--max-idle`` default to ``Options()``'s values, what
``python -m engine.dagman`` and ``crabtui dag run`` use (``-maxidle`` default).  ``--timeout T``
(default 1800 s) stops a DAG that has not finished by then the way condor_hold stops DAGMan
(SIGTERM: DAGMan returns at the end of its cycle), and so does a stall (no node finished for
60 s); the verdict is then FAIL and the progress so far is reported.

Target: DAGMan adds at most 2x over the schedd alone (ratio <= 2).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time

from benchlib import (add_dagman_arguments, announce, dagman_options, embedded_schedd, report, run_dagman, run_main,
                      scratch_dir, verdict, write_dag)
from schedd_throughput import cpu_times, daemon_log_error, run_schedd

RATIO_TARGET = 2.0
STALL_S = 60.0  # no node finished for this long: the DAG is stuck, stop it


def measure_schedd(workdir: str, n: int) -> dict:
    with embedded_schedd(workdir, "s1") as client:
        ping = client.ping()  # starts the daemon; not timed
        run = run_schedd(client, workdir, n, ping["pid"], 0)
    run.update(slots=ping["slots"], daemon_log_last_error=daemon_log_error(client.state.log))
    return run


def measure_dagman(workdir: str, n: int, options, timeout: float) -> dict:
    from engine.dag import build_graph, parse_file
    from engine.dagman.node_status import NodeState
    from engine.dagman.runner import DagMan

    dagdir = os.path.join(workdir, "dag")
    dag_path = write_dag(dagdir, "jobs.dag", (f"JOB N{k} job.sub" for k in range(n)))
    with embedded_schedd(workdir, "s2") as client:
        ping = client.ping()  # starts the daemon; not timed
        with contextlib.chdir(dagdir):  # DAGMan runs in the DAG's directory
            gc.collect()
            daemon_cpu0, jobs_cpu0 = cpu_times(ping["pid"])
            own_cpu0 = time.process_time()
            start = time.perf_counter()
            graph = build_graph(parse_file(dag_path))
            parsed = time.perf_counter()
            dagman = DagMan(graph, client, options)

            def nodes_done() -> int:
                return sum(1 for node in list(dagman.nodes.values()) if node.status is NodeState.DONE)

            run = run_dagman(dagman, start, timeout, nodes_done, STALL_S)
            own_cpu = time.process_time() - own_cpu0
            daemon_cpu1, jobs_cpu1 = cpu_times(ping["pid"])
    return {"total_s": run.end - start, "parse_s": parsed - start, "exit_code": run.exit_code,
            "nodes_done": nodes_done(), "stopped": run.stopped, "stalled_at": run.stalled_at,
            "daemon_cpu_s": daemon_cpu1 - daemon_cpu0, "jobs_cpu_s": jobs_cpu1 - jobs_cpu0, "dagman_cpu_s": own_cpu,
            "slots": ping["slots"], "daemon_log_last_error": daemon_log_error(client.state.log)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000, help="number of /bin/true nodes (default 10000)")
    add_dagman_arguments(parser)
    parser.add_argument("--timeout", type=float, default=1800.0, metavar="T",
                        help="stop the DAG after T seconds if it has not finished (default 1800)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    args = parser.parse_args()
    announce(__doc__)
    n = args.nodes

    options = dagman_options(args)
    schedd = None
    schedd_error = None
    with scratch_dir("cbt_", args.keep) as workdir:
        try:
            schedd = measure_schedd(workdir, n)
        except Exception as e:  # noqa: reported, and the DAGMan half still runs
            schedd_error = f"{type(e).__name__}: {e}"
        dagman = measure_dagman(workdir, n, options, args.timeout)

    finished = dagman["exit_code"] == 0 and dagman["nodes_done"] == n and not dagman["stopped"]
    ok = schedd is not None and finished
    ratio = dagman["total_s"] / schedd["total_s"] if ok else None
    result = {
        "nodes": n,
        "slots": dagman["slots"],
        "scan_interval_s": options.scan_interval,
        "max_idle": options.max_idle,
        "schedd_s": round(schedd["total_s"], 3) if schedd else None,
        "schedd_jobs_per_s": round(n / schedd["total_s"], 1) if schedd else None,
        "schedd_submit_call_s": round(schedd["submit_s"], 3) if schedd else None,
        "schedd_submit_refused": schedd["submit_refused"] if schedd else None,
        "schedd_daemon_cpu_s": round(schedd["daemon_cpu_s"], 2) if schedd else None,
        "schedd_client_cpu_s": round(schedd["client_cpu_s"], 2) if schedd else None,
        "schedd_error": schedd_error,
        "dagman_s": round(dagman["total_s"], 3),
        "dagman_parse_s": round(dagman["parse_s"], 3),
        "dagman_exit_code": dagman["exit_code"],
        "dagman_nodes_done": dagman["nodes_done"],
        "dagman_stopped": dagman["stopped"],
        "dagman_stalled_at": dagman["stalled_at"],
        "dagman_jobs_per_s": round(dagman["nodes_done"] / dagman["total_s"], 1),
        "dagman_daemon_cpu_s": round(dagman["daemon_cpu_s"], 2),
        "dagman_own_cpu_s": round(dagman["dagman_cpu_s"], 2),
        "dagman_daemon_log_last_error": dagman["daemon_log_last_error"],
        "ratio": round(ratio, 2) if ratio is not None else None,
        "ratio_target": RATIO_TARGET,
        "pass": ok and ratio <= RATIO_TARGET,
        "workdir": workdir if args.keep else None,
    }
    report(result, args.json, print_report)
    sys.exit(0 if result["pass"] else 1)


def print_report(r: dict) -> None:
    n = r["nodes"]
    print(f"jobs:        {n:,} x /bin/true, {r['slots']} slot(s); DAGMan Options(scan_interval={r['scan_interval_s']:g}, "
          f"max_idle={r['max_idle']})")
    if r["schedd_error"]:
        print(f"schedd:      FAILED: {r['schedd_error']}")
    else:
        refused = "  (one submit() refused; ads sent in chunks)" if r["schedd_submit_refused"] else ""
        print(f"schedd:      {r['schedd_s']:8.3f} s  {r['schedd_jobs_per_s']:7.1f} jobs/s  alone, one cluster of {n:,}, "
              f"submit to last JOB_TERMINATED (submit() {r['schedd_submit_call_s']:.3f} s){refused}")
        print(f"             CPU meanwhile: daemon {r['schedd_daemon_cpu_s']:.2f} s "
              f"({1000 * r['schedd_daemon_cpu_s'] / n:.2f} ms/job), client {r['schedd_client_cpu_s']:.2f} s")
    if r["dagman_stalled_at"] is not None:
        state = f"STALLED (no node finished for {STALL_S:g} s), stopped with {r['dagman_nodes_done']:,} of {n:,} done"
    elif r["dagman_stopped"]:
        state = f"stopped after the timeout with {r['dagman_nodes_done']:,} of {n:,} done"
    else:
        state = f"exit {r['dagman_exit_code']}, {r['dagman_nodes_done']:,} of {n:,} nodes done"
    print(f"DAGMan:      {r['dagman_s']:8.3f} s  {r['dagman_jobs_per_s']:7.1f} jobs/s  parse to exit "
          f"(parse {r['dagman_parse_s']:.3f} s); {state}")
    print(f"             CPU meanwhile: daemon {r['dagman_daemon_cpu_s']:.2f} s "
          f"({1000 * r['dagman_daemon_cpu_s'] / n:.2f} ms/job), DAGMan (this process) {r['dagman_own_cpu_s']:.2f} s "
          f"({1000 * r['dagman_own_cpu_s'] / n:.2f} ms/node)")
    if r["dagman_daemon_log_last_error"]:
        print(f"             daemon log: {r['dagman_daemon_log_last_error']}")
    if r["ratio"] is None:
        print(f"ratio:       none  (target: DAGMan adds at most {RATIO_TARGET:g}x over the schedd alone)  FAIL")
    else:
        print(f"ratio:       {r['ratio']:.2f}x DAGMan / schedd alone  "
              f"(target: DAGMan adds at most {RATIO_TARGET:g}x over the schedd alone)  {verdict(r['pass'])}")
    print(f"verdict:     {verdict(r['pass'])}")
    if r["workdir"]:
        print(f"workdir:     {r['workdir']}")


if __name__ == "__main__":
    run_main(main)
