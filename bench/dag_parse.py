"""Benchmark: parse and validate a CRAB3-sized DAG file with engine.dag.

    python3 bench/dag_parse.py [--nodes 100000] [--json]

What is measured, on one generated file (written once to a temporary directory, so writing
it is never timed):

* baseline: the time Python needs just to read the file and split it into lines
  (``open(path).read().splitlines()``), best of 5;
* parse: ``load_graph(parse_file(path))`` -- parse, lift splices and check for cycles, the
  work ``crabtui dag check`` does -- best of 3;
* ratio = parse / baseline.  The machine this runs on is shared and noisy, so absolute
  seconds drift from run to run; the ratio compares the parser with the cheapest possible
  reading of the same file on the same machine at the same moment, and is the number the
  target applies to;
* peak memory: in a fresh subprocess (this script with ``--child``), ``ru_maxrss`` right
  after the imports and again after one parse, both as total peak RSS and as the increase.
  It runs before the timings: on Linux a child starts with its parent's ``ru_maxrss``.

The file has the shape of a CRAB3 task DAG: per node ``JobK`` the lines of CRAB's
DagmanCreator DAG_FRAGMENT exactly as CRAB writes them (a blank line, JOB, SCRIPT PRE,
SCRIPT DEFER ... POST, a commented-out PRE_SKIP, RETRY, four VARS with two comment lines
among them, ABORT-DAG-ON), and every 100th node is a merge node, the child of the 99 nodes before it
(one PARENT line with 99 parents), so the graph has edges but no cycle.

Targets (from the issue): ratio at most 10x, peak RSS under 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from benchlib import best_of, maxrss_mb, run_main, verdict

RATIO_TARGET = 10.0
RSS_TARGET_MB = 300.0
MERGE_EVERY = 100

TASK = "261122_064200:alice_crab_ttbar_powheg_2026"
TEMP_DIR = "/store/temp/user/alice.1234abcd/ttbar/260101_000000/0000"
DEST_DIR = "/store/user/alice/ttbar/260101_000000/0000"
BLOCK = "/TTbar_TuneCP5_13p6TeV-powheg/Run3Summer23-v1/MINIAODSIM#0f6c1e2a-1234-4d5e-9abc-def012345678"
DEST_URL = "davs://eoscms.cern.ch:443/eos/cms/store/user/alice/ttbar"


def fragment(k: int) -> str:
    """CRAB's DAG_FRAGMENT for node Job<k>, comment lines and leading blank line included."""
    return (
        "\n"
        f"JOB Job{k} Job.{k}.submit\n"
        f"SCRIPT  PRE  Job{k} dag_bootstrap.sh PREJOB $RETRY {k} {TASK} LOCAL processing\n"
        f"SCRIPT DEFER 4 1800 POST Job{k} dag_bootstrap.sh POSTJOB $JOBID $RETURN $RETRY $MAX_RETRIES "
        f"{TASK} {k} {TEMP_DIR} {DEST_DIR} cmsRun_{k}.log.tar.gz processing output_{k}.root\n"
        f"#PRE_SKIP Job{k} 3\n"
        f"RETRY Job{k} 3 UNLESS-EXIT 2\n"
        f'VARS Job{k} count="{k}"\n'
        "# following 3 classAds could possibly be moved to Job.submit but as they are job-dependent\n"
        "# would need to be done in the PreJob... doing it here is a bit ugly, but simpler\n"
        f'VARS Job{k} My.CRAB_localOutputFiles="\\"output.root=output_{k}.root\\""\n'
        f'VARS Job{k} My.CRAB_DataBlock="\\"{BLOCK}\\""\n'
        f'VARS Job{k} My.CRAB_Destination="\\"{DEST_URL}/output_{k}.root\\""\n'
        f"ABORT-DAG-ON Job{k} 3\n"
    )


def write_dag(path: str, nodes: int) -> None:
    """Write the DAG; a merge node's PARENT line follows its own fragment (all names declared)."""
    with open(path, "w", encoding="utf-8") as f:
        for k in range(1, nodes + 1):
            f.write(fragment(k))
            if k % MERGE_EVERY == 0:
                parents = " ".join(f"Job{p}" for p in range(k - MERGE_EVERY + 1, k))
                f.write(f"PARENT {parents} CHILD Job{k}\n")


def read_lines(path: str) -> list[str]:
    with open(path) as f:
        return f.read().splitlines()


def child(path: str) -> None:
    """--child mode: one parse in this fresh process; print peak RSS before and after as JSON."""
    import engine.dag  # noqa: the import's own memory is part of the "after imports" figure

    after_imports = maxrss_mb()
    graph = engine.dag.load_graph(engine.dag.parse_file(path))
    after_parse = maxrss_mb()
    print(json.dumps({"rss_after_imports_mb": after_imports, "rss_after_parse_mb": after_parse,
                      "nodes": len(graph.nodes)}))


def measure_memory(path: str) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000, help="number of nodes (default 100000)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--child", metavar="DAG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return

    import engine.dag

    with tempfile.TemporaryDirectory(prefix="dag_bench_") as tmp:
        path = os.path.join(tmp, "RunJobs.dag")
        write_dag(path, args.nodes)
        size_mb = os.path.getsize(path) / 1e6

        # Memory first: a child inherits its parent's ru_maxrss across fork and exec on Linux,
        # so the child must start while this process is still small.
        memory = measure_memory(path)
        baseline, lines = best_of(5, lambda: read_lines(path))
        line_count = len(lines)
        del lines
        parse, graph = best_of(3, lambda: engine.dag.load_graph(engine.dag.parse_file(path)))
        node_count, edge_count = len(graph.nodes), graph.edge_count

    ratio = parse / baseline
    peak = memory["rss_after_parse_mb"]
    result = {
        "nodes_requested": args.nodes,
        "file_mb": round(size_mb, 2),
        "lines": line_count,
        "graph_nodes": node_count,
        "graph_edges": edge_count,
        "baseline_s": round(baseline, 4),
        "parse_s": round(parse, 4),
        "ratio": round(ratio, 2),
        "rss_after_imports_mb": round(memory["rss_after_imports_mb"], 1),
        "peak_rss_mb": round(peak, 1),
        "rss_increase_mb": round(peak - memory["rss_after_imports_mb"], 1),
        "ratio_target": RATIO_TARGET,
        "rss_target_mb": RSS_TARGET_MB,
        "ratio_pass": ratio <= RATIO_TARGET,
        "rss_pass": peak < RSS_TARGET_MB,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"DAG file:   {result['file_mb']} MB, {line_count:,} lines")
    print(f"graph:      {node_count:,} nodes, {edge_count:,} edges")
    print(f"baseline:   {baseline:.3f} s  read + splitlines, best of 5")
    print(f"parse:      {parse:.3f} s  parse_file + load_graph, best of 3")
    print(f"ratio:      {ratio:.1f}x  (target <= {RATIO_TARGET:g}x)  {verdict(result['ratio_pass'])}")
    print(f"peak RSS:   {result['peak_rss_mb']} MB total, +{result['rss_increase_mb']} MB over "
          f"{result['rss_after_imports_mb']} MB after imports  (target < {RSS_TARGET_MB:g} MB total)  "
          f"{verdict(result['rss_pass'])}")


if __name__ == "__main__":
    run_main(main)
