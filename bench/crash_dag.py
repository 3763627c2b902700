"""Benchmark: a 200-node DAG survives random ``kill -9``s of the schedd and of DAGMan.

    python3 bench/crash_dag.py [--kills 50] [--nodes 200] [--seed 1] [--json] [--keep]

A fresh embedded schedd (its own state directory under /tmp) runs a DAG submitted with
``crabtui dag submit``: ``--nodes`` nodes in layers of ten, each node a child of every node of
the layer before.  Each node's job sleeps 0.3 to 0.9 s (fixed by the seed), then appends its
node's name to a marks file and exits 0; a mark is a job that finished.

While the DAG runs, ``--kills`` times, at random moments 0.3 to 1.2 s apart, either the schedd
daemon or the DAGMan process is killed with SIGKILL (each with probability 1/2, by the seed).  A
killed schedd is started again 0 to 1 s later, by the next client request, as condor_master
would restart it; a killed DAGMan is the schedd's to restart (its job exits by a signal, and
condor_submit_dag's on_exit_remove queues it again), in recovery mode.  Kills stop when the DAG
has ended.

Printed: the kills made of each, the nodes lost (with no mark once DAGMan has exited), the jobs
that ran again after they had finished (marks beyond the first of a node), DAGMan's exit code
and the wall time.  Target: 0 lost, 0 run again, DAGMan exits 0.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import signal
import subprocess
import sys
import time

from benchlib import announce, crabtui_scripts, embedded_schedd, report, run_main, scratch_dir, verdict

NODE_JOB = """#!/bin/sh
sleep "$2"
echo "$1" >> marks
"""
TIMEOUT_S = 900.0


def write_dag(workdir: str, nodes: int, rng: random.Random) -> str:
    with open(os.path.join(workdir, "node.sh"), "w") as f:
        f.write(NODE_JOB)
    os.chmod(os.path.join(workdir, "node.sh"), 0o755)
    with open(os.path.join(workdir, "node.sub"), "w") as f:
        f.write("executable = node.sh\narguments = $(node) $(seconds)\nlog = nodes.log\nqueue\n")
    names = [f"N{i:03d}" for i in range(nodes)]
    lines = []
    for name in names:
        lines.append(f"JOB {name} node.sub")
        lines.append(f'VARS {name} node="{name}" seconds="{rng.uniform(0.3, 0.9):.2f}"')
    layers = [names[i:i + 10] for i in range(0, nodes, 10)]
    for parents, children in zip(layers, layers[1:]):
        lines.append(f"PARENT {' '.join(parents)} CHILD {' '.join(children)}")
    path = os.path.join(workdir, "crash.dag")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def dagman_pid(client, cluster: int) -> int | None:
    ads = client.query(f"ClusterId == {cluster} && JobStatus == 2", ["JobPid"])
    return ads[0].get("JobPid") if ads else None


def run(args) -> dict:
    rng = random.Random(args.seed)
    with scratch_dir("cbt_crash_", args.keep) as workdir, embedded_schedd(workdir) as client:
        dag = write_dag(workdir, args.nodes, rng)
        crabtui, _ = crabtui_scripts()
        start = time.perf_counter()
        submitted = subprocess.run([crabtui, "--state-dir", client.state.path, "dag", "submit", dag],
                                   cwd=workdir, capture_output=True, text=True, timeout=120)
        if submitted.returncode != 0:
            raise SystemExit(f"dag submit failed: {submitted.stderr}")
        cluster = int(re.search(r"submitted to cluster (\d+)", submitted.stdout).group(1))
        kills = collections.Counter()
        while kills.total() < args.kills and client.query(f"ClusterId == {cluster}", ["ClusterId"]):
            time.sleep(rng.uniform(0.3, 1.2))
            victim = rng.choice(["schedd", "dagman"])
            pid = client.ping()["pid"] if victim == "schedd" else dagman_pid(client, cluster)
            if pid is None:
                continue  # DAGMan is between runs: the schedd is about to start it again
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            kills[victim] += 1
            client.close()
            if victim == "schedd":
                time.sleep(rng.uniform(0, 1))  # then the next request starts it, as condor_master would
        while not client.history(f"ClusterId == {cluster}", ["ExitCode"], match=1):
            if time.perf_counter() - start > TIMEOUT_S:
                raise SystemExit(f"the DAG did not end within {TIMEOUT_S:g} s; see {client.state.log}")
            time.sleep(0.5)
        elapsed = time.perf_counter() - start
        (dagman,) = client.history(f"ClusterId == {cluster}", ["ExitCode", "ExitBySignal", "JobStatus"], match=1)
        marks_path = os.path.join(workdir, "marks")
        marks = collections.Counter(open(marks_path).read().split()) if os.path.exists(marks_path) else {}
    names = [f"N{i:03d}" for i in range(args.nodes)]
    lost = [n for n in names if not marks.get(n)]
    reruns = sum(count - 1 for count in marks.values() if count > 1)
    exit_code = dagman.get("ExitCode")
    return {"nodes": args.nodes, "seed": args.seed, "kills_schedd": kills["schedd"], "kills_dagman": kills["dagman"],
            "lost_nodes": len(lost), "lost": lost[:10], "reruns_of_finished_jobs": reruns,
            "dagman_exit_code": exit_code, "seconds": round(elapsed, 1),
            "pass": not lost and reruns == 0 and exit_code == 0 and kills.total() == args.kills}


def print_report(r: dict) -> None:
    print(f"kills:    {r['kills_schedd']} of the schedd, {r['kills_dagman']} of DAGMan (kill -9), seed {r['seed']}")
    print(f"DAG:      {r['nodes']} nodes, DAGMan exit code {r['dagman_exit_code']}, {r['seconds']} s")
    print(f"lost:     {r['lost_nodes']} node(s)" + (f" ({', '.join(r['lost'])} ...)" if r["lost"] else ""))
    print(f"reruns:   {r['reruns_of_finished_jobs']} job(s) that had finished ran again")
    print(f"verdict:  {verdict(r['pass'])} (target: every kill made, 0 lost, 0 reruns, DAGMan exits 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50, help="kill -9s to make (default 50)")
    parser.add_argument("--nodes", type=int, default=200, help="nodes of the DAG, a multiple of 10 (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="chooses the victims, the moments and the job lengths")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args()
    announce(__doc__)
    result = run(args)
    report(result, args.json, print_report)
    sys.exit(0 if result["pass"] else 1)


if __name__ == "__main__":
    run_main(main)
