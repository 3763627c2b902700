"""Benchmark: how fast the embedded schedd runs many short jobs, against plain subprocess.

    python3 bench/schedd_throughput.py [--jobs 2000] [--runs 1] [--submit-chunk K] [--json] [--keep]

What is measured, in one run (the machine is shared and noisy, so absolute seconds drift from
run to run; the ratio compares the schedd with plain process creation on the same machine at
the same moment, and is the number the target applies to):

* the schedd: a fresh embedded schedd daemon in a temporary state directory under /tmp (a
  short path: a Unix socket path holds at most 107 bytes), started and driven through
  ``engine.schedd.local.client.LocalScheddClient``, as ``crabtui`` starts it.  Its pool is the
  default one, one slot per CPU; its slot count is printed.  One cluster of ``--jobs``
  ``/bin/true`` jobs (``executable = /bin/true``, ``log = ...``, ``queue N``), with a user log
  as real users have, so the schedd writes every event.  Timed from just before
  ``client.submit()`` (which includes building the job ads in the client, as condor_submit
  does) until the user log, followed with ``htcondor2.JobEventLog``, holds N JOB_TERMINATED
  events (waiting for the log to grow, as condor_wait does); then ``query()`` must find no job
  of the cluster left.  Daemon start-up is not
  timed.  With ``--runs R`` the cluster is submitted R times, one after the other to the
  same daemon, and the fastest run is kept (the baselines are best of 3).  Also reported: how
  long the ``submit()`` call itself took, and the CPU time the daemon, its starters and their
  jobs, and this client used meanwhile (from /proc), which shows whether the single-threaded
  daemon is the bottleneck (its CPU milliseconds per job also drift less than wall time on a
  busy machine);
* baseline, same concurrency: plain ``subprocess.Popen(["/bin/true"])`` for the same number
  of processes, with as many running at a time as the daemon has slots (a new one starts as
  soon as one exits; exits are noticed through a pidfd per process, as the schedd notices
  them), best of 3;
* baseline, sequential: ``subprocess.run(["/bin/true"])`` N times, one after the other, best
  of 3 (for information: the floor of one process at a time);
* ratio = schedd time / same-concurrency baseline time (equivalently baseline jobs/s over
  schedd jobs/s).

Should the daemon refuse the one ``submit()`` request that carries every job ad of the cluster
(its request line limit), the refusal is reported, the verdict is FAIL whatever the ratio
(users cannot submit such a cluster), and the clock restarts for a second submission of the
same jobs whose ads are sent 50 per request, still one cluster, so that the throughput is
measured all the same.  ``--submit-chunk K`` sends the ads K per request from the start.

The daemon is stopped (``client.shutdown()``) at the end, also on error or Ctrl-C, and the
state directory removed unless ``--keep``.

Target: ratio at most 2x (issue 22).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import select
import subprocess
import sys
import time

from benchlib import best_of, embedded_schedd, report, run_main, scratch_dir, verdict

RATIO_TARGET = 2.0
TRUE = "/bin/true"
FALLBACK_CHUNK = 50  # ads per request when one request of every ad is refused
TIMEOUT_S = 1800.0  # give up waiting for the schedd after this long
_TICKS = os.sysconf("SC_CLK_TCK")
_RUN_NUMBER = itertools.count(1)


def run_sequential(n: int) -> None:
    for _ in range(n):
        subprocess.run([TRUE], check=True)


def run_concurrent(n: int, width: int) -> None:
    """Run ``n`` processes with at most ``width`` alive at a time; start the next one as soon as
    any exits.  Each exit is seen through its pidfd, so only our own children are reaped (the
    daemon, started by the client, is a child of this process too)."""
    poller = select.poll()
    running: dict[int, subprocess.Popen] = {}  # pidfd -> process
    started = finished = 0
    while finished < n:
        while started < n and len(running) < width:
            proc = subprocess.Popen([TRUE])
            fd = os.pidfd_open(proc.pid)
            running[fd] = proc
            poller.register(fd, select.POLLIN)
            started += 1
        for fd, _ in poller.poll():
            proc = running.pop(fd)
            poller.unregister(fd)
            os.close(fd)
            if proc.wait() != 0:
                raise RuntimeError(f"{TRUE} exited with {proc.returncode}")
            finished += 1


def submit_in_chunks(client, description: str, submit_file: str, cwd: str, chunk: int):
    """``client.submit`` with the job ads sent in requests of at most ``chunk`` ads each, all
    to the same cluster: exactly what ``LocalScheddClient.submit`` does, but split, for a daemon
    whose request size limit refuses one request of every ad."""
    from engine.schedd.api import SubmitResult
    from engine.schedd.local import protocol
    from engine.schedd.local.submit import SubmitDescription, build_job_ads

    desc = SubmitDescription(description, submit_file, cwd)
    cluster = client._call("new_cluster")
    ads = build_job_ads(desc, cluster, now=int(time.time()))
    for i in range(0, len(ads), chunk):
        client._call("submit_ads", cluster=cluster, ads=protocol.ads_to_wire(ads[i:i + chunk]))
    return SubmitResult(cluster, ads[0]["ProcId"], len(ads))


def cpu_times(pid: int) -> tuple[float, float]:
    """(CPU seconds of the daemon itself, CPU seconds of the starters and their jobs), from /proc:
    the starters are the daemon's descendants (forked by its spawner), and each one's reaped
    children are its jobs."""
    def times(p: int) -> list[float]:
        with open(f"/proc/{p}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return [int(x) / _TICKS for x in fields[11:15]] + [int(fields[1])]  # utime stime cutime cstime ppid

    own = times(pid)
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = times(int(entry))
            except (OSError, IndexError):
                continue
    below = 0.0
    for p, t in parents.items():
        ancestor = int(t[4])
        while ancestor > 1 and ancestor != pid:
            ancestor = int(parents[ancestor][4]) if ancestor in parents else 0
        if ancestor == pid:
            below += sum(t[:4])
    return own[0] + own[1], below + own[2] + own[3]


def run_schedd(client, workdir: str, n: int, daemon_pid: int, chunk: int) -> dict:
    """Submit one cluster of ``n`` jobs and follow its user log until all have terminated."""
    import htcondor2

    from engine.schedd.api import ScheddError

    run = next(_RUN_NUMBER)  # each run its own user log, so that it reads only its own events
    log = os.path.join(workdir, f"jobs{run}.log")
    submit_file = os.path.join(workdir, f"true{run}.sub")
    description = f"executable = {TRUE}\nlog = {log}\nqueue {n}\n"
    refused = None
    for attempt in ("whole", "chunks"):
        gc.collect()
        daemon_cpu0, jobs_cpu0 = cpu_times(daemon_pid)
        own_cpu0 = time.process_time()
        start = time.perf_counter()
        if chunk or attempt == "chunks":
            chunk = chunk or FALLBACK_CHUNK
            result = submit_in_chunks(client, description, submit_file, workdir, chunk)
            break
        try:
            result = client.submit(description, submit_file=submit_file, cwd=workdir)
            break
        except ScheddError as e:
            refused = str(e)
    submitted = time.perf_counter()

    terminated = failed = 0
    # events(stop_after=S) sets a deadline S seconds from the call, not from each wait: once it has
    # passed, every next() without a new event returns at once.  So the wait is renewed after each
    # StopIteration, as a client following a log (condor_wait) waits: blocked until the log grows.
    job_log = htcondor2.JobEventLog(log)
    events = job_log.events(stop_after=5)
    while terminated + failed < n:
        try:
            event = next(events)
        except StopIteration:  # nothing for 5 s: still alive?
            if time.perf_counter() - start > TIMEOUT_S:
                raise RuntimeError(f"only {terminated} of {n} jobs terminated after {TIMEOUT_S:g} s") from None
            client.ping()
            events = job_log.events(stop_after=5)
            continue
        if event.cluster != result.cluster:
            continue
        if event.type == htcondor2.JobEventType.JOB_TERMINATED:
            terminated += 1
        elif event.type in (htcondor2.JobEventType.JOB_HELD, htcondor2.JobEventType.JOB_ABORTED):
            failed += 1
    done = time.perf_counter()
    own_cpu = time.process_time() - own_cpu0
    daemon_cpu1, jobs_cpu1 = cpu_times(daemon_pid)
    left = client.query(f"ClusterId == {result.cluster}", ["ClusterId"])
    if failed or left:
        raise RuntimeError(f"{failed} job(s) held or aborted, {len(left)} still in the queue; see {client.state.log}")
    return {"total_s": done - start, "submit_s": submitted - start, "submit_refused": refused,
            "submit_chunk": chunk or None, "daemon_cpu_s": daemon_cpu1 - daemon_cpu0,
            "jobs_cpu_s": jobs_cpu1 - jobs_cpu0, "client_cpu_s": own_cpu}


def daemon_log_error(path: str) -> str | None:
    """The last exception line the daemon logged, if any."""
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if "Error:" in line and not line.startswith(" ")]
    except OSError:
        return None
    return lines[-1] if lines else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000, help="number of /bin/true jobs (default 2000)")
    parser.add_argument("--submit-chunk", type=int, default=0, metavar="K",
                        help="send the job ads K per request from the start (default: one client.submit() "
                             f"call, as users submit; {FALLBACK_CHUNK} per request only if that is refused)")
    parser.add_argument("--runs", type=int, default=1,
                        help="submit the cluster this many times (one after the other) and keep the fastest "
                             "(default 1)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the state directory (its path is printed)")
    args = parser.parse_args()
    n = args.jobs

    from engine.schedd.api import ScheddError

    schedd, error = None, None
    with scratch_dir("cbt_", args.keep) as workdir:
        with embedded_schedd(workdir) as client:
            ping = client.ping()  # starts the daemon; not timed
            slots = ping["slots"]
            concurrent, _ = best_of(3, lambda: run_concurrent(n, slots))
            sequential, _ = best_of(3, lambda: run_sequential(n))
            try:
                for _ in range(args.runs):  # a fresh cluster each time, same daemon; keep the fastest
                    run = run_schedd(client, workdir, n, ping["pid"], args.submit_chunk)
                    if schedd is None or run["total_s"] < schedd["total_s"]:
                        schedd = run
            except (ScheddError, RuntimeError) as e:
                error = f"{type(e).__name__}: {e}"
        # The daemon logs a failed connection's exception when the task is collected, at the
        # latest when it stops: read its log after shutdown.
        logged = daemon_log_error(client.state.log)

    ok = schedd is not None
    ratio = schedd["total_s"] / concurrent if ok else None
    refused = schedd["submit_refused"] if ok else None
    result = {
        "jobs": n,
        "slots": slots,
        "daemon_pid": ping["pid"],
        "subprocess_concurrent_s": round(concurrent, 3),
        "subprocess_concurrent_jobs_per_s": round(n / concurrent, 1),
        "subprocess_sequential_s": round(sequential, 3),
        "subprocess_sequential_jobs_per_s": round(n / sequential, 1),
        "schedd_runs": args.runs,
        "schedd_s": round(schedd["total_s"], 3) if ok else None,
        "schedd_jobs_per_s": round(n / schedd["total_s"], 1) if ok else None,
        "schedd_submit_call_s": round(schedd["submit_s"], 3) if ok else None,
        "schedd_submit_refused": refused,
        "schedd_submit_chunk": schedd["submit_chunk"] if ok else None,
        "schedd_daemon_cpu_s": round(schedd["daemon_cpu_s"], 2) if ok else None,
        "schedd_jobs_cpu_s": round(schedd["jobs_cpu_s"], 2) if ok else None,
        "schedd_client_cpu_s": round(schedd["client_cpu_s"], 2) if ok else None,
        "schedd_error": error,
        "daemon_log_last_error": logged,
        "ratio": round(ratio, 2) if ok else None,
        "ratio_vs_sequential": round(schedd["total_s"] / sequential, 2) if ok else None,
        "ratio_target": RATIO_TARGET,
        "ratio_pass": ok and ratio <= RATIO_TARGET,
        "pass": ok and ratio <= RATIO_TARGET and refused is None,
        "state_dir": client.state.path if args.keep else None,
    }
    report(result, args.json, print_report)
    sys.exit(0 if result["pass"] else 1)


def print_report(r: dict) -> None:
    n, slots = r["jobs"], r["slots"]
    print(f"daemon:      pid {r['daemon_pid']}, {slots} slot(s) (default pool: one per CPU)")
    print(f"subprocess:  {r['subprocess_concurrent_s']:7.3f} s  {r['subprocess_concurrent_jobs_per_s']:7.1f} jobs/s  "
          f"Popen, {slots} at a time, best of 3")
    print(f"subprocess:  {r['subprocess_sequential_s']:7.3f} s  {r['subprocess_sequential_jobs_per_s']:7.1f} jobs/s  "
          "subprocess.run one after the other, best of 3")
    if r["schedd_error"]:
        print(f"schedd:      FAILED: {r['schedd_error']}")
        if r["daemon_log_last_error"]:
            print(f"             daemon log: {r['daemon_log_last_error']}")
        print(f"ratio:       none  (target <= {RATIO_TARGET:g}x)  FAIL")
        return
    if r["schedd_submit_refused"]:
        print(f"submit:      FAIL: one client.submit() of {n} jobs was refused: {r['schedd_submit_refused']}")
        if r["daemon_log_last_error"]:
            print(f"             daemon log: {r['daemon_log_last_error']}")
        print(f"             measured below with the ads sent {r['schedd_submit_chunk']} per request instead")
    how = f"ads sent {r['schedd_submit_chunk']} per request" if r["schedd_submit_chunk"] else "one client.submit()"
    print(f"schedd:      {r['schedd_s']:7.3f} s  {r['schedd_jobs_per_s']:7.1f} jobs/s  from submit to {n} JOB_TERMINATED "
          f"({how}: {r['schedd_submit_call_s']:.3f} s)" + (f", best of {r['schedd_runs']}" if r["schedd_runs"] > 1 else ""))
    print(f"             CPU meanwhile: daemon {r['schedd_daemon_cpu_s']:.2f} s "
          f"({1000 * r['schedd_daemon_cpu_s'] / n:.2f} ms/job), its starters and jobs {r['schedd_jobs_cpu_s']:.2f} s, "
          f"this client {r['schedd_client_cpu_s']:.2f} s")
    print(f"ratio:       {r['ratio']:.2f}x schedd / subprocess at {slots} at a time  (target <= {RATIO_TARGET:g}x)  "
          f"{verdict(r['ratio_pass'])}")
    print(f"             {r['ratio_vs_sequential']:.2f}x schedd / sequential subprocess.run")
    print(f"verdict:     {verdict(r['pass'])}")
    if r["state_dir"]:
        print(f"state dir:   {r['state_dir']}")


if __name__ == "__main__":
    run_main(main)
