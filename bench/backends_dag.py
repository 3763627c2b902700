"""Benchmark: the same DAG of /bin/true nodes on the embedded backend and on a real HTCondor pool.

    python3 bench/backends_dag.py [--nodes 1000] [--timeout T] [--json] [--keep]

The DAG has ``--nodes`` nodes ``JOB N<k> job.sub`` and no edges; ``job.sub`` is
``executable = /bin/true`` and ``queue``.  It is written, untimed, into a temporary directory
under /tmp (a short path: the embedded schedd's Unix socket path holds at most 107 bytes), once
per backend, each copy in its own directory.  The directories are mode 0777 and the files 0666:
on the real pool the jobs and condor_dagman run as the pool's unprivileged job user.

What is measured, one backend after the other (so that they never compete for the CPUs; the
machine is shared and noisy, so absolute seconds drift from run to run, and the ratio compares
the two at about the same moment):

* embedded: a fresh state directory, its daemon started with ``crabtui --state-dir S pool start``
  (start-up not timed: the real pool is already up too) and its slots read from
  ``crabtui --state-dir S pool status``; then ``crabtui --state-dir S dag submit jobs.dag`` in
  a subprocess, timed from just before that command until the DAGMan job's own event log
  ``jobs.dag.dagman.log``, followed with ``htcondor2.JobEventLog``, shows its JOB_TERMINATED.
  The daemon is stopped with ``crabtui --state-dir S pool stop`` at the end, also on error;
* real HTCondor: the pool of ``scripts/htcondor-testpool`` (started if it is not running, and
  then stopped again at the end, also on error; left running if it already ran), its client
  configuration from ``htcondor-testpool env``; its slots from the collector's startd ads.
  Then ``crabtui --backend htcondor dag submit jobs.dag`` (HTCondor's own condor_dagman as a
  scheduler-universe job) with that CONDOR_CONFIG, timed the same way.  A DAGMan job still in
  the queue after a timeout or an error is removed;
* for both: the DAG succeeded if DAGMan's JOB_TERMINATED has return value 0 and its metrics
  file ``jobs.dag.metrics`` says ``"exitcode": 0`` and ``jobs_succeeded`` == ``--nodes``;
  also reported, DAGMan's own ``duration`` from that file (its run, without the wait for the
  schedd to start it or to log its exit);
* ratio = embedded time / real HTCondor time (lower is better for crabtui).

``--timeout T`` (default 1800 s) gives up on a backend whose DAGMan has not terminated by then.
There is no pass/fail target; the exit status is 0 if both DAGs succeeded, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

from benchlib import announce, crabtui_scripts, report, run_main, scratch_dir, write_dag

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTPOOL = os.path.join(REPO, "scripts", "htcondor-testpool")
DAG = "jobs.dag"
WAIT_S = 5  # seconds (an int, as htcondor2 wants it): JobEventLog.events(stop_after=...): how long one wait for the next event blocks

# The collector's startd ads (and the schedd's queue length), in a subprocess whose environment
# has the pool's CONDOR_CONFIG: htcondor2 reads its configuration when it is first imported.
SLOTS_QUERY = r"""
import json, htcondor2
ads = htcondor2.Collector().query(htcondor2.AdTypes.Startd,
                                  projection=["Name", "SlotType", "Cpus", "TotalCpus", "DetectedCpus", "Memory"])
queue = htcondor2.Schedd().query(projection=["ClusterId"])
print(json.dumps({"slots": [{k: ad.get(k) for k in ("Name", "SlotType", "Cpus", "TotalCpus", "DetectedCpus", "Memory")}
                            for ad in ads], "queued": len(queue)}))
"""


def write_open_dag(dagdir: str, n: int) -> str:
    """The DAG of ``n`` independent /bin/true nodes in ``dagdir``, open to every user."""
    dag_path = write_dag(dagdir, DAG, (f"JOB N{k} job.sub" for k in range(n)))
    os.chmod(dagdir, 0o777)
    for name in (DAG, "job.sub"):
        os.chmod(os.path.join(dagdir, name), 0o666)
    return dag_path


def crabtui(args: list[str], env: dict, cwd: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([crabtui_scripts()[0], *args], env=env, cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"crabtui {' '.join(args)} exited with {proc.returncode}: "
                           f"{(proc.stderr or proc.stdout).strip()}")
    return proc


def submitted_cluster(output: str) -> int | None:
    m = re.search(r"submitted to cluster (\d+)", output)
    return int(m.group(1)) if m else None


def wait_dagman(log: str, start: float, timeout: float) -> dict:
    """Follow DAGMan's own event log until its JOB_TERMINATED (or it is held or aborted, or
    ``timeout`` seconds after ``start``); the moment it was read, and what it said."""
    import htcondor2

    while not os.path.exists(log):  # the schedd writes it when it queues the job
        if time.perf_counter() - start > timeout:
            return {"end": None, "outcome": f"no {os.path.basename(log)} after {timeout:g} s", "return_value": None}
        time.sleep(0.02)
    jel = htcondor2.JobEventLog(log)
    events = jel.events(stop_after=WAIT_S)
    try:
        while True:
            try:
                event = next(events)
            except StopIteration:  # nothing for WAIT_S seconds (the iterator stays valid)
                if time.perf_counter() - start > timeout:
                    return {"end": None, "outcome": f"DAGMan not terminated after {timeout:g} s", "return_value": None}
                # its deadline is WAIT_S from the events() call, not from each wait: renew it, or
                # every later next() returns at once and this loop spins beside what it measures
                events = jel.events(stop_after=WAIT_S)
                continue
            if event.type == htcondor2.JobEventType.JOB_TERMINATED:
                return {"end": time.perf_counter(), "outcome": "terminated",
                        "return_value": event.get("ReturnValue"), "event_time": event.timestamp}
            if event.type in (htcondor2.JobEventType.JOB_HELD, htcondor2.JobEventType.JOB_ABORTED):
                reason = event.get("HoldReason") or event.get("Reason") or ""
                return {"end": None, "outcome": f"{event.type.name}: {reason}".rstrip(": "), "return_value": None}
    finally:
        jel.close()


def read_metrics(dag_path: str) -> dict | None:
    try:
        with open(dag_path + ".metrics", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_dag(side: str, dag_path: str, env: dict, global_args: list[str], n: int, timeout: float) -> dict:
    """Submit the DAG with ``crabtui [global_args] dag submit`` and wait for DAGMan's exit.  If it
    did not terminate (timeout, held, aborted, or an error while waiting), its DAGMan job is removed
    with ``crabtui [global_args] rm``."""
    dagdir = os.path.dirname(dag_path)
    start = time.perf_counter()
    proc = crabtui([*global_args, "dag", "submit", DAG], env, cwd=dagdir, check=False)
    submitted = time.perf_counter()
    cluster = submitted_cluster(proc.stdout)
    if proc.returncode != 0 or cluster is None:
        raise RuntimeError(f"{side}: crabtui dag submit exited with {proc.returncode}: "
                           f"{(proc.stderr or proc.stdout).strip()}")
    waited = None
    try:
        waited = wait_dagman(os.path.join(dagdir, DAG + ".dagman.log"), start, timeout)
    finally:
        if waited is None or waited["end"] is None:  # do not leave the DAG running
            crabtui([*global_args, "rm", str(cluster)], env, check=False)
    metrics = read_metrics(dag_path)
    succeeded = metrics.get("jobs_succeeded") if metrics else None
    ok = (waited["end"] is not None and waited["return_value"] == 0 and metrics is not None
          and metrics.get("exitcode") == 0 and succeeded == n)
    return {"total_s": waited["end"] - start if waited["end"] is not None else None,
            "submit_s": submitted - start, "cluster": cluster, "outcome": waited["outcome"],
            "return_value": waited["return_value"],
            "metrics_exitcode": metrics.get("exitcode") if metrics else None,
            "jobs_succeeded": succeeded, "jobs_failed": metrics.get("jobs_failed") if metrics else None,
            "dagman_duration_s": metrics.get("duration") if metrics else None, "ok": ok}


def measure_embedded(workdir: str, n: int, timeout: float) -> dict:
    dag_path = write_open_dag(os.path.join(workdir, "emb"), n)
    state = os.path.join(workdir, "s")
    env = {k: v for k, v in os.environ.items() if k not in ("CRABTUI_BACKEND", "CRABTUI_STATE_DIR")}
    g = ["--state-dir", state]
    crabtui([*g, "pool", "start"], env)  # not timed: the real pool is already running too
    try:
        status = crabtui([*g, "pool", "status"], env).stdout
        m = re.search(r"slots: \d+ busy of (\d+)", status)
        run = run_dag("embedded", dag_path, env, g, n, timeout)
    finally:
        crabtui([*g, "pool", "stop"], env, check=False)
    run.update(slots=int(m.group(1)) if m else None, state_dir=state)
    return run


def pool_env() -> dict:
    """The environment of ``eval "$(htcondor-testpool env)"``: CONDOR_CONFIG and CRABTUI_TESTPOOL_*."""
    out = subprocess.run(["bash", "-c", 'eval "$("$0" env)" && env -0', TESTPOOL],
                         check=True, capture_output=True, text=True).stdout
    pairs = (item.partition("=") for item in out.split("\0") if item)
    return {k: v for k, _, v in pairs if k == "CONDOR_CONFIG" or k.startswith("CRABTUI_TESTPOOL_")}


def measure_real(workdir: str, n: int, timeout: float) -> dict:
    dag_path = write_open_dag(os.path.join(workdir, "real"), n)
    running = subprocess.run([TESTPOOL, "status"], capture_output=True).returncode == 0
    started = False
    try:
        if not running:
            proc = subprocess.run([TESTPOOL, "start"], capture_output=True, text=True)
            started = True  # stop it again even if start failed half way
            if proc.returncode != 0:
                raise RuntimeError(f"htcondor-testpool start exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
        penv = pool_env()
        env = {k: v for k, v in os.environ.items() if not k.startswith("_CONDOR_") and k != "CRABTUI_STATE_DIR"}
        env.update(penv)
        env["CRABTUI_BACKEND"] = "htcondor"
        query = subprocess.run([sys.executable, "-c", SLOTS_QUERY], env=env, capture_output=True, text=True)
        pool = json.loads(query.stdout) if query.returncode == 0 else {"slots": None, "queued": None}
        run = run_dag("htcondor", dag_path, env, ["--backend", "htcondor"], n, timeout)
    finally:
        if started:
            subprocess.run([TESTPOOL, "stop"], capture_output=True)
    run.update(slots=pool["slots"], queued_before=pool["queued"], pool_started=started,
               condor_version=penv.get("CRABTUI_TESTPOOL_CONDOR_VERSION"), condor_config=penv.get("CONDOR_CONFIG"))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000, help="number of /bin/true nodes (default 1000)")
    parser.add_argument("--timeout", type=float, default=1800.0, metavar="T",
                        help="give up on a backend whose DAGMan has not terminated after T seconds (default 1800)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (its path is printed)")
    args = parser.parse_args()
    announce(__doc__)
    n = args.nodes

    embedded = real = None
    errors = {}
    with scratch_dir("cbd_", args.keep) as workdir:
        os.chmod(workdir, 0o755)  # the pool's job user must reach its DAG directory
        try:
            embedded = measure_embedded(workdir, n, args.timeout)
        except Exception as e:  # noqa: reported, and the real half still runs
            errors["embedded"] = f"{type(e).__name__}: {e}"
        try:
            real = measure_real(workdir, n, args.timeout)
        except Exception as e:  # noqa: reported
            errors["htcondor"] = f"{type(e).__name__}: {e}"

    both = embedded is not None and real is not None and embedded["ok"] and real["ok"]
    ratio = embedded["total_s"] / real["total_s"] if both else None

    def side(r: dict | None, name: str) -> dict:
        if r is None:
            return {"error": errors.get(name)}
        total = r["total_s"]
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} | {
            "jobs_per_s": round(n / total, 1) if total else None, "error": None}

    result = {
        "nodes": n,
        "embedded": side(embedded, "embedded"),
        "htcondor": side(real, "htcondor"),
        "ratio": round(ratio, 4) if ratio is not None else None,
        "ok": both,
        "workdir": workdir if args.keep else None,
    }
    report(result, args.json, print_report)
    sys.exit(0 if both else 1)


def describe_slots(slots: list[dict] | None) -> str:
    if not slots:
        return "no startd ads" if slots is not None else "collector query failed"
    cpus = sum(s.get("Cpus") or 0 for s in slots if s.get("SlotType") != "Dynamic")
    kinds = ", ".join(f"{s.get('Name')} {s.get('SlotType')} {s.get('Cpus')} Cpus" for s in slots)
    detected = {s.get("DetectedCpus") for s in slots}
    return f"{len(slots)} slot ad(s), {cpus} core(s) in all ({kinds}; DetectedCpus {', '.join(map(str, detected))})"


def print_report(r: dict) -> None:
    n = r["nodes"]
    e, h = r["embedded"], r["htcondor"]
    print(f"DAG:         {n:,} independent nodes x /bin/true (no edges); one backend after the other")
    if e.get("slots") is not None or "state_dir" in e:
        print(f"embedded:    {e.get('slots')} slot(s) (crabtui pool status), state dir {e.get('state_dir')}")
    if "slots" in h:
        version = (h.get("condor_version") or "").replace("$CondorVersion: ", "").rstrip(" $")
        how = "started by this benchmark, stopped again" if h.get("pool_started") else "already running, left running"
        print(f"htcondor:    htcondor-testpool ({how}), HTCondor {version}")
        print(f"             {describe_slots(h.get('slots'))}; {h.get('queued_before')} job(s) in its queue before")
    for label, s in (("embedded", e), ("htcondor", h)):
        if s.get("error"):
            print(f"{label + ':':<12} FAILED: {s['error']}")
            continue
        if s["total_s"] is None:
            print(f"{label + ':':<12} FAILED: {s['outcome']} (DAGMan job {s['cluster']})")
            continue
        state = (f"DAGMan return value {s['return_value']}, metrics exitcode {s['metrics_exitcode']}, "
                 f"{s['jobs_succeeded']:,} of {n:,} succeeded ({s['jobs_failed']} failed)")
        print(f"{label + ':':<12} {s['total_s']:9.3f} s  {s['jobs_per_s']:7.1f} nodes/s  submit to DAGMan's JOB_TERMINATED "
              f"(submit command {s['submit_s']:.3f} s, DAGMan's own duration {s['dagman_duration_s']} s)")
        print(f"             {state}  {'OK' if s['ok'] else 'FAILED'}")
    if r["ratio"] is None:
        print("ratio:       none (a DAG did not succeed)")
        summary = "FAILED: " + "; ".join(f"{k} " + ("ok" if s.get("ok") else (s.get("error") or s.get("outcome") or "failed"))
                                          for k, s in (("embedded", e), ("htcondor", h)))
    else:
        print(f"ratio:       {r['ratio']:.4f}x embedded / real HTCondor  (lower is better; "
              f"real takes {1 / r['ratio']:.1f}x as long)")
        summary = (f"{n} nodes: embedded {e['total_s']:.2f} s, real HTCondor {h['total_s']:.2f} s, "
                   f"ratio {r['ratio']:.4f} (both DAGs succeeded)")
    print(f"summary:     {summary}")
    if r["workdir"]:
        print(f"workdir:     {r['workdir']}")


if __name__ == "__main__":
    run_main(main)
