"""Benchmark: ``crabtui q`` on a queue of 10,000 jobs, end to end, and where its time goes.

    python3 bench/schedd_query.py [--jobs 10000] [--clusters 4] [--json] [--keep]

Set-up (not timed): a fresh embedded schedd daemon in a temporary state directory under /tmp
(a short path: a Unix socket path holds at most 107 bytes), started through
``engine.schedd.local.client.LocalScheddClient``, and ``--jobs`` jobs in ``--clusters``
clusters that stay in the queue: every other cluster is submitted on hold (``hold = true``,
so the HOLD column shows), the others idle with ``requirements = false`` (no slot matches, so
they never run); half the clusters have a ``batch_name``.  Each cluster is submitted with
``client.submit()``, as users submit; should the daemon refuse that (one request of every job
ad of a cluster), the ads of the cluster are sent in requests of 50 and the refusal is
reported.

What is measured, all in one run on the same queue (the machine is shared and noisy; the
parts below are measured side by side so that their split is visible even when absolute
seconds drift), each best of 5:

* end to end: the ``crabtui`` console script pip installed next to this interpreter, as a
  subprocess, ``crabtui q`` (default batch view) and ``crabtui q -nobatch``, its output read
  from a pipe; the target applies to these two numbers.  When the ``crabtui`` on PATH is
  another file (a pyenv shim, say), ``crabtui q`` through it is timed too, for information;
* the Python start-up floor: ``python3 -c pass`` and ``python3 -c "import crabtui.cli"``,
  with this interpreter
  (what every ``crabtui`` command pays before it does anything);
* in this process, the same query as ``crabtui q`` makes (``client.query("true")``, every
  attribute), on an open connection, and split into the request answered by the daemon
  (sent, evaluated and serialised there, received and JSON-decoded here: a list of ad
  texts) and the parsing of those texts into ``classad2.ClassAd`` here;
* in this process, the formatting of the rows ``crabtui q`` asks for (``client.query_values``
  with the layout's projection): ``queue_format.batch_table`` and ``queue_format.job_table``,
  each with ``totals``, as ``crabtui q`` calls them.

Target: ``crabtui q`` and ``crabtui q -nobatch`` each under 0.5 s.
"""

from __future__ import annotations

import argparse
import getpass
import os
import subprocess
import sys
import time

from benchlib import best_of, crabtui_scripts, embedded_schedd, report, run_main, scratch_dir, verdict
from schedd_throughput import submit_in_chunks

TARGET_S = 0.5
RUNS = 5
CHUNK = 50


def run(argv: list[str], env: dict[str, str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout


def description(workdir: str, index: int, per_cluster: int) -> str:
    lines = ["executable = /bin/true", "arguments = --job $(ProcId)", f"log = {workdir}/jobs.log"]
    if index % 2:
        lines.append("requirements = false")
    else:
        lines.append("hold = true")
    if index % 4 < 2:
        lines.append(f"batch_name = bench_task_{index}")
    lines.append(f"queue {per_cluster}")
    return "\n".join(lines) + "\n"


def fill_queue(client, workdir: str, jobs: int, clusters: int) -> str | None:
    """Queue ``jobs`` jobs in ``clusters`` clusters; return why client.submit() was refused, if it was."""
    from engine.schedd.api import ScheddError

    refused = None
    sizes = [jobs // clusters + (i < jobs % clusters) for i in range(clusters)]
    for index, size in enumerate(sizes):
        text = description(workdir, index, size)
        submit_file = os.path.join(workdir, f"c{index}.sub")
        if refused is None:
            try:
                client.submit(text, submit_file=submit_file, cwd=workdir)
                continue
            except ScheddError as e:
                refused = str(e)
        submit_in_chunks(client, text, submit_file, workdir, CHUNK)
    return refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in the queue (default 10000)")
    parser.add_argument("--clusters", type=int, default=4, help="clusters they are submitted in (default 4)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the state directory (its path is printed)")
    args = parser.parse_args()

    from engine.schedd.local import protocol

    from crabtui import queue_format

    crabtui, wrapper = crabtui_scripts()
    with scratch_dir("cbq_", args.keep) as workdir, embedded_schedd(workdir) as client:
        state = client.state
        env = {**os.environ, "CRABTUI_STATE_DIR": state.path}
        start = time.perf_counter()
        refused = fill_queue(client, workdir, args.jobs, args.clusters)
        setup = time.perf_counter() - start
        queued = len(client.query("true", ["ClusterId"]))
        if queued != args.jobs:
            raise RuntimeError(f"{queued} jobs in the queue, expected {args.jobs}; see {state.log}")

        python_pass, _ = best_of(RUNS, lambda: run([sys.executable, "-c", "pass"], env))
        python_import, _ = best_of(RUNS, lambda: run([sys.executable, "-c", "import crabtui.cli"], env))
        q_batch, batch_out = best_of(RUNS, lambda: run([crabtui, "q"], env))
        q_nobatch, nobatch_out = best_of(RUNS, lambda: run([crabtui, "q", "-nobatch"], env))
        q_wrapper = best_of(RUNS, lambda: run([wrapper, "q"], env))[0] if wrapper else None

        api_query, ads = best_of(RUNS, lambda: client.query("true"))
        raw, texts = best_of(RUNS, lambda: client._call("query", constraint="true", projection=[]))
        parse, _ = best_of(RUNS, lambda: protocol.ads_from_wire(texts))
        reply_mb = len(protocol.encode({"ok": True, "result": texts})) / 1e6
        texts = ads = None  # free the replies before the formatting is timed
        user, context = getpass.getuser(), queue_format.Context(now=time.time())
        summary = client.summary(f'Owner == "{user}"')
        batch_rows = client.query_values("true", queue_format.PROJECTIONS["batch"])
        nobatch_rows = client.query_values("true", queue_format.PROJECTIONS["nobatch"])
        fmt_batch, _ = best_of(RUNS, lambda: (queue_format.batch_table(batch_rows), queue_format.totals(summary, user)))
        fmt_nobatch, _ = best_of(RUNS, lambda: (queue_format.job_table(nobatch_rows, "nobatch", context),
                                                queue_format.totals(summary, user)))
        daemon_pid = client.ping()["pid"]

    result = {
        "jobs": args.jobs,
        "clusters": args.clusters,
        "setup_s": round(setup, 2),
        "setup_submit_refused": refused,
        "daemon_pid": daemon_pid,
        "python_pass_s": round(python_pass, 4),
        "python_import_crabtui_cli_s": round(python_import, 4),
        "crabtui_q_s": round(q_batch, 4),
        "crabtui_q_lines": len(batch_out.splitlines()),
        "crabtui_q_nobatch_s": round(q_nobatch, 4),
        "crabtui_q_nobatch_lines": len(nobatch_out.splitlines()),
        "crabtui_script": crabtui,
        "crabtui_on_path": wrapper,
        "crabtui_on_path_q_s": round(q_wrapper, 4) if wrapper else None,
        "api_query_s": round(api_query, 4),
        "api_query_reply_s": round(raw, 4),
        "api_query_parse_s": round(parse, 4),
        "api_query_reply_mb": round(reply_mb, 2),
        "format_batch_s": round(fmt_batch, 4),
        "format_nobatch_s": round(fmt_nobatch, 4),
        "target_s": TARGET_S,
        "crabtui_q_pass": q_batch < TARGET_S,
        "crabtui_q_nobatch_pass": q_nobatch < TARGET_S,
        "state_dir": state.path if args.keep else None,
    }
    report(result, args.json, print_report)
    sys.exit(0 if result["crabtui_q_pass"] and result["crabtui_q_nobatch_pass"] else 1)


def print_report(r: dict) -> None:
    print(f"queue:            {r['jobs']:,} jobs in {r['clusters']} clusters, queued in {r['setup_s']:.1f} s (not timed)")
    if r["setup_submit_refused"]:
        print(f"                  client.submit() was refused ({r['setup_submit_refused']}); "
              f"the ads were sent {CHUNK} per request instead")
    print(f"crabtui q:        {r['crabtui_q_s']:.3f} s  ({r['crabtui_q_lines']} lines)  "
          f"(target < {TARGET_S:g} s)  {verdict(r['crabtui_q_pass'])}")
    print(f"crabtui q -nobatch: {r['crabtui_q_nobatch_s']:.3f} s  ({r['crabtui_q_nobatch_lines']:,} lines)  "
          f"(target < {TARGET_S:g} s)  {verdict(r['crabtui_q_nobatch_pass'])}")
    if r["crabtui_on_path"]:
        print(f"                  (the crabtui on PATH, {r['crabtui_on_path']}, is a wrapper of {r['crabtui_script']}: "
              f"'crabtui q' through it takes {r['crabtui_on_path_q_s']:.3f} s)")
    print("where the time goes (each best of 5):")
    print(f"  python3 -c pass                 {r['python_pass_s']:.3f} s")
    print(f"  python3 -c 'import crabtui.cli' {r['python_import_crabtui_cli_s']:.3f} s")
    print(f"  client.query('true') in-process {r['api_query_s']:.3f} s  = daemon reply "
          f"{r['api_query_reply_s']:.3f} s ({r['api_query_reply_mb']:.1f} MB of JSON, decoded) + parsing the ads "
          f"{r['api_query_parse_s']:.3f} s")
    print(f"  format batch view + totals      {r['format_batch_s']:.3f} s")
    print(f"  format -nobatch view + totals   {r['format_nobatch_s']:.3f} s")
    if r["state_dir"]:
        print(f"state dir:        {r['state_dir']}")


if __name__ == "__main__":
    run_main(main)
