"""Benchmark: ``crabtui --backend htcondor q -nobatch`` against the pool's own ``condor_q -nobatch``
on 10,000 queued jobs of a real schedd.

    python3 bench/htcondor_q.py [--jobs 10000] [--runs 7] [--json]

Needs the running pool of ``scripts/htcondor-testpool`` (it is not started or stopped here: the
pool is shared).  Set-up (not timed): ``--jobs`` jobs submitted on hold (``hold = true``, so no
slot is taken and the queue stays as it is) in one cluster with a batch name of their own,
through htcondor2 with the pool's client configuration; the cluster is removed at the end, also
on error.  Other users' jobs may be in the queue too: both tools list the same queue.

What is measured, in one run (the machine is shared and noisy: the two commands alternate, and
the ratio compares them at about the same moments), each best of ``--runs``, crabtui's modules
compiled to bytecode first, as an installed package has them (with PYTHONDONTWRITEBYTECODE set,
an editable checkout would otherwise compile them again in every run, about 0.03 s):

* ``condor_q -nobatch``: HTCondor 23.9.6's own, run inside the pool's tree as its job user
  (``chroot --userspec=crab ROOT condor_q -nobatch``, a clean environment, the tree's own
  configuration), its output read from a pipe;
* ``crabtui --backend htcondor q -nobatch``: the console script next to this interpreter, with
  the pool's client configuration, its output read from a pipe;
* ratio = crabtui / condor_q (target: <= 1, no slower than condor_q);
* that both printed the same lines, the header's clock and RUN_TIME seconds aside;
* where crabtui's time goes: ``python3 -c pass``, ``python3 -c 'import crabtui.cli'``, and in
  this process the query (``HTCondorSchedd.query`` with the layout's projection), the conversion
  of the ads to rows (``query_values`` less the query) and the layout (``job_table``).
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
import time

from backends_dag import TESTPOOL, pool_env
from benchlib import best_of, crabtui_scripts, report, run_main, verdict

RUNS = 7
_VOLATILE = re.compile(r"@ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$|\d+\+\d\d:\d\d:\d\d")


def run(argv: list[str], env: dict[str, str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout


def same_lines(a: str, b: str) -> tuple[int, int]:
    """How many lines agree once the clock is masked, of how many."""
    left = [_VOLATILE.sub("T", line) for line in a.splitlines()]
    right = [_VOLATILE.sub("T", line) for line in b.splitlines()]
    return sum(x == y for x, y in zip(left, right)), max(len(left), len(right))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs to queue (default 10000)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs of each command, best kept (default {RUNS})")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()

    if subprocess.run([TESTPOOL, "status"], capture_output=True).returncode != 0:
        sys.exit("the HTCondor test pool is not running: start it with scripts/htcondor-testpool start")
    penv = pool_env()
    os.environ.update(penv)  # before htcondor2 is imported: it reads CONDOR_CONFIG once
    import htcondor2

    import crabtui
    import engine
    from crabtui import queue_format
    from engine.schedd.htcondor import HTCondorSchedd

    for package in (crabtui, engine):
        compileall.compile_dir(os.path.dirname(package.__file__), quiet=1)

    root = penv["CRABTUI_TESTPOOL_ROOT"]
    condor_q = ["env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", f"TZ={os.environ.get('TZ', '')}",
                shutil.which("chroot") or "/usr/sbin/chroot", f"--userspec={penv['CRABTUI_TESTPOOL_USER']}", root, "condor_q", "-nobatch"]
    crabtui, _ = crabtui_scripts()
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CONDOR_")}
    schedd = htcondor2.Schedd()
    submit = htcondor2.Submit({"executable": "/bin/sleep", "arguments": "300", "hold": "true", "initialdir": "/tmp",
                               "batch_name": f"bench_htcondor_q_{os.getpid()}"})
    start = time.perf_counter()
    cluster = schedd.submit(submit, count=args.jobs).cluster()
    setup = time.perf_counter() - start
    try:
        queued = len(schedd.query(projection=["ProcId"]))
        times: dict[str, float] = {"condor_q": float("inf"), "crabtui": float("inf")}
        outputs: dict[str, str] = {}
        for _ in range(args.runs):  # alternate, so that both see the same moments of the machine
            for name, argv in (("condor_q", condor_q), ("crabtui", [crabtui, "--backend", "htcondor", "q", "-nobatch"])):
                seconds, outputs[name] = best_of(1, lambda argv=argv: run(argv, env))
                times[name] = min(times[name], seconds)
        agree, lines = same_lines(outputs["condor_q"], outputs["crabtui"])

        python_pass, _ = best_of(args.runs, lambda: run([sys.executable, "-c", "pass"], env))
        python_import, _ = best_of(args.runs, lambda: run([sys.executable, "-c", "import crabtui.cli"], env))
        client = HTCondorSchedd()
        projection = list(queue_format.PROJECTIONS["nobatch"])
        query_s, _ = best_of(args.runs, lambda: client.query("true", projection))
        values_s, rows = best_of(args.runs, lambda: client.query_values("true", projection))
        context = queue_format.Context(now=time.time())
        table_s, _ = best_of(args.runs, lambda: queue_format.job_table(rows, "nobatch", context))
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")

    ratio = times["crabtui"] / times["condor_q"]
    result = {
        "jobs_submitted": args.jobs,
        "jobs_in_queue": queued,
        "setup_s": round(setup, 2),
        "condor_version": penv.get("CRABTUI_TESTPOOL_CONDOR_VERSION"),
        "condor_q_nobatch_s": round(times["condor_q"], 4),
        "crabtui_q_nobatch_s": round(times["crabtui"], 4),
        "ratio_crabtui_over_condor_q": round(ratio, 2),
        "target_ratio": 1.0,
        "pass": ratio <= 1.0,
        "lines_agree": agree,
        "lines": lines,
        "python_pass_s": round(python_pass, 4),
        "python_import_crabtui_cli_s": round(python_import, 4),
        "query_s": round(query_s, 4),
        "rows_s": round(values_s - query_s, 4),
        "table_s": round(table_s, 4),
        "runs": args.runs,
    }
    report(result, args.json, print_report)
    sys.exit(0 if result["pass"] and agree == lines else 1)


def print_report(r: dict) -> None:
    print(f"queue:      {r['jobs_in_queue']:,} jobs ({r['jobs_submitted']:,} of ours, held, queued in "
          f"{r['setup_s']:.1f} s, not timed); {r['condor_version']}")
    print(f"condor_q -nobatch                         {r['condor_q_nobatch_s']:.3f} s")
    print(f"crabtui --backend htcondor q -nobatch     {r['crabtui_q_nobatch_s']:.3f} s")
    print(f"ratio crabtui / condor_q: {r['ratio_crabtui_over_condor_q']:.2f} (target <= 1)  {verdict(r['pass'])}")
    print(f"same output: {r['lines_agree']:,} of {r['lines']:,} lines (the clock aside)")
    print(f"where crabtui's time goes (each best of {r['runs']}):")
    print(f"  python3 -c pass                 {r['python_pass_s']:.3f} s")
    print(f"  python3 -c 'import crabtui.cli' {r['python_import_crabtui_cli_s']:.3f} s")
    print(f"  the query (htcondor2)           {r['query_s']:.3f} s")
    print(f"  ads to rows                     {r['rows_s']:.3f} s")
    print(f"  the -nobatch layout             {r['table_s']:.3f} s")


if __name__ == "__main__":
    run_main(main)
