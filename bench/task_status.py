"""Benchmark: ``crabtui task status --long`` on a finished task (10,000 jobs, or --jobs), end to end.

    python3 bench/task_status.py [--jobs 10000] [--runs 5] [--json] [--keep]

Set-up (not timed), in a fresh state directory under /tmp:

* the task directory as the task worker leaves it: ``engine.crab.taskworker.dagman_creator.write_task`` of
  the shipped dataset /JetMET0/Run2023D-PromptReco-v1/MINIAOD split FileBased, one file per job
  (task.json, RunJobs.dag, Job.submit, every job_input and job_sites file);
* each job's history as PreJob and PostJob write it, through the real code: ``begin_attempt``,
  a framework job report written by ``fjr.write_report`` (``jobReport.json.<id>.<retry>``), the
  policy's ``decide`` on that report and ``record``, the state saved by ``save_state``.  Most jobs
  succeed at once; every 20th fails first with 8021 and succeeds at another site; every 50th
  fails with 8028 until the retry limit (3) makes it fatal; every 100th fails with 99 (unknown,
  fatal); every 200th is removed for its memory (50660, fatal);
* each job's user log (``job_log.<id>``) as the schedd writes it, through the real writer
  (:mod:`engine.schedd.local.userlog`): submit, execute and end of every attempt, and for every
  25th job an eviction and a second execute in its first attempt (a restart the status counts);
* the task's row in the task table (``engine.crab.taskworker.taskdb.TaskDB``), FAILED, its DAGMan gone;
* the embedded daemon, started by ``crabtui --state-dir S pool start`` (and stopped at the end).

Timed, with the ``crabtui`` console script installed next to this interpreter (the one on PATH
may be a wrapper, such as a pyenv shim, which adds its own start-up; it is timed apart, for
information), output read from a pipe:

* cold: the first ``task status --long``, which reads every retry state and report and writes
  the task's status cache (``status_cache.json``, see :mod:`engine.crab.client.status`);
* warm: the same again, best of ``--runs``; the target applies to this number, what a user (or
  the UI, refreshing) sees on every status but the first;
* one changed: one job's state written anew before each run (as a PostJob does), so the retry
  state directory is scanned and that job read again; best of ``--runs``;
* for where the time goes: ``python3 -c pass``, ``python3 -c 'import crabtui.cli'``, and in this
  process ``task_view`` (warm) and ``render``.

With ``--pool`` (and CONDOR_CONFIG naming a running pool's configuration, such as the test pool's
``eval "$(scripts/htcondor-testpool env)"``), the same command with ``--backend htcondor`` is
timed in the same run on the same task: the task table's commands carried out first, the pool's
schedd asked for the task's jobs, the same cache read.

Target: ``crabtui task status --long`` under 0.5 s, on both backends.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from benchlib import announce, best_of, crabtui_scripts, report, run_main, scratch_dir, verdict

TARGET_S = 0.5
DATASET = "/JetMET0/Run2023D-PromptReco-v1/MINIAOD"
REQUEST = "bench_status"


def run(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def plan(n: int) -> list[tuple[int, str | None]]:
    """The exit code of each attempt of job ``n`` and the removal reason that ended it, if any."""
    if n % 200 == 0:
        return [(0, "Removed due to memory use")]
    if n % 100 == 0:
        return [(99, None)]
    if n % 50 == 0:
        return [(8028, None)] * 3
    if n % 20 == 0:
        return [(8021, None), (0, None)]
    return [(0, None)]


def fabricate_job(task_dir: str, job, start: float) -> int:
    """Job ``job``'s attempts as PreJob, the job wrapper and PostJob leave them; returns how many."""
    from engine.crab.wn import fjr
    from engine.crab.ap.retry_policy import (JobState, Limits, Params, begin_attempt, choose_sites, decide, record,
                                             save_state, state_path)
    from engine.schedd.local.userlog import UserLog

    rng = random.Random(int(job.id))
    limits = Limits(max_retries=3)
    state = JobState(job.id)
    events = []
    lumis = {run: [n for first, last in ranges for n in range(first, last + 1)]
             for run, ranges in job.lumi_mask().items()}
    t = start
    for dag_retry, (code, removed) in enumerate(plan(int(job.id))):
        state = begin_attempt(state, dag_retry=dag_retry, task_params=Params(2500, 1250))
        sites = choose_sites(job.sites, state.attempts[-1].avoid_sites)
        site = sites[rng.randrange(len(sites))]
        wall = rng.uniform(1200, 5400)
        end = t + wall
        rss = 4000.0 if removed else rng.uniform(900, 1900)
        if removed:
            report = fjr.minimal_report(50660, "Job killed by HTCondor due to excessive memory use.", site,
                                        start=t, stop=end)
        else:
            inputs = [{"lfn": job.files[0], "events": job.events, "lumis": lumis}]
            outputs = [{"pfn": "output.root", "events": job.events, "size": job.events * 5000, "lumis": lumis}]
            errors = [{"type": "CmsRunFailure", "details": f"exit code {code}", "exitCode": code}] if code else []
            report = fjr.build_report(
                exit_code=code, exit_msg="OK" if code == 0 else f"cmsRun failed with {code}", site=site, start=t,
                stop=end, inputs=inputs, outputs=outputs if code == 0 else None, errors=errors,
                cpu={"TotalJobTime": wall, "TotalJobCPU": wall * rng.uniform(0.7, 0.98),
                     "EventThroughput": job.events / wall},
                memory={"PeakValueRss": rss}, storage={"writeTotalMB": job.events * 5000 / 1e6})
        fjr.write_report(os.path.join(task_dir, f"{fjr.FJR_NAME}.{job.id}.{state.crab_retry}"), report)
        ad = {"JobCurrentStartDate": t, "CompletionDate": end, "MATCH_GLIDEIN_CMSSite": site,
              "ResidentSetSize": int(rss * 1024)}
        if removed:
            ad["RemoveReason"] = removed
        events += job_log_events(int(job.id), dag_retry, t, end, code, removed)
        decision = decide(code, report, state, limits, end + 5, job_ad=ad)
        state = record(state, decision)
        if decision.action != "retry":
            break
        t = end + 900
    save_state(state_path(task_dir, job.id), state)
    with UserLog(os.path.join(task_dir, f"job_log.{job.id}")) as log:
        log.write(*events)
    return len(state.attempts)


def job_log_events(n: int, dag_retry: int, start: float, end: float, code: int, removed: str | None) -> list:
    """The user log events of one attempt of job ``n`` (its own cluster, as DAGMan submits each)."""
    from engine.schedd.local.userlog import (ExecuteEvent, JobAbortedEvent, JobEvictedEvent, JobTerminatedEvent,
                                             SubmitEvent)

    job = {"cluster": n * 10 + dag_retry, "proc": 0}
    at = lambda t: {**job, "time": datetime.fromtimestamp(t).astimezone()}  # noqa: E731
    host = "<127.0.0.1:0>"
    events = [SubmitEvent(**at(start - 60), submit_host=host, log_notes=f"DAG Node: Job{n}"),
              ExecuteEvent(**at(start), execute_host=host)]
    if n % 25 == 0 and dag_retry == 0:
        events += [JobEvictedEvent(**at(start + 60), reason="The job's schedd went away while the job ran"),
                   ExecuteEvent(**at(start + 120), execute_host=host)]
    if removed:
        return events + [JobAbortedEvent(**at(end), reason=removed)]
    return events + [JobTerminatedEvent(**at(end), return_value=code % 256)]


def fabricate(state_dir: str, jobs_wanted: int) -> tuple[str, str, int, int]:
    """The task directory, its row and its jobs' histories; returns (task name, task dir, jobs, attempts)."""
    import getpass
    import json

    from engine.crab.taskworker.dagman_creator import TaskAd, write_task
    from engine.crab.taskworker.datasets import Catalogue
    from engine.crab.taskworker.splitting import split
    from engine.crab.taskworker.taskdb import FAILED, SUBMIT, Task, TaskDB, task_name
    from engine.state import StateDir

    state = StateDir(state_dir)
    now = time.time()
    user = getpass.getuser()
    name = task_name(REQUEST, user, now - 86400)
    task_dir = state.task_dir(name)
    dataset = Catalogue.for_state(state).load(DATASET)
    jobs = split(dataset, algorithm="FileBased", units_per_job=1, total_units=jobs_wanted)
    ad = TaskAd(name=name, user=user, dataset=DATASET, max_memory_mb=2500, max_runtime_min=1250, num_cores=1,
                priority=10, site_whitelist=(), site_blacklist=(), storage_site="T2_XX_Local", time_scale=1.0,
                max_retries=3)
    write_task(task_dir, ad, dataset, jobs)
    with open(os.path.join(task_dir, "request.json"), "w", encoding="utf-8") as f:
        json.dump({"dataset": DATASET, "splitting": "FileBased", "units_per_job": 1}, f)
    start = now - 86400 + 600
    with ThreadPoolExecutor(8) as pool:  # the writers fsync every file: overlap the waits
        attempts = sum(pool.map(lambda job: fabricate_job(task_dir, job, start), jobs))
    db = TaskDB(state.tasks)
    db.insert(Task(name=name, request_name=REQUEST, user=user, status=FAILED, command=SUBMIT,
                   config_path="crab.toml", task_dir=task_dir, submitted_at=now - 86400, updated_at=now,
                   dagman_id=1, message="DAGMan exited 1"))
    db.close()
    return name, task_dir, len(jobs), attempts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in the task (at most 10,000)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each timed command (best counts)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the state directory")
    parser.add_argument("--pool", action="store_true", help="also time it on the pool of CONDOR_CONFIG")
    args = parser.parse_args()
    announce(__doc__)

    crabtui, wrapper = crabtui_scripts()

    with scratch_dir("cbst_", args.keep) as workdir:
        state_dir = os.path.join(workdir, "s")
        os.makedirs(state_dir, mode=0o700)
        t0 = time.perf_counter()
        name, task_dir, njobs, nattempts = fabricate(state_dir, args.jobs)
        setup = time.perf_counter() - t0
        base = [crabtui, "--state-dir", state_dir]
        run(base + ["pool", "start"])
        try:
            from engine.crab.ap.retry_policy import load_state, save_state, state_path
            from engine.crab.client.status import RACY_NS, task_view

            time.sleep(RACY_NS / 1e9 + 0.1)  # files younger than that are not trusted by the cache
            command = base + ["task", "status", REQUEST, "--long"]
            t0 = time.perf_counter()
            cold_out = run(command)
            cold = time.perf_counter() - t0
            time.sleep(RACY_NS / 1e9 + 0.1)
            warm, out = best_of(args.runs, lambda: run(command))
            wrapped = best_of(args.runs, lambda: run([wrapper, *command[1:]]))[0] if wrapper else None

            one = state_path(task_dir, "7")
            state = load_state(one)

            def changed_one() -> str:
                save_state(one, state)  # a new file (new inode), as a PostJob's save
                return run(command)

            changed, _ = best_of(args.runs, changed_one)
            on_pool = None
            if args.pool:
                time.sleep(RACY_NS / 1e9 + 0.1)
                pool_command = base + ["--backend", "htcondor", "task", "status", REQUEST, "--long"]
                run(pool_command)
                on_pool, pool_out = best_of(args.runs, lambda: run(pool_command))
            time.sleep(RACY_NS / 1e9 + 0.1)
            run(command)  # trusted again
            python_pass, _ = best_of(args.runs, lambda: run([sys.executable, "-c", "pass"]))
            python_import, _ = best_of(args.runs, lambda: run([sys.executable, "-c", "import crabtui.cli"]))
            gather, view = best_of(args.runs, lambda: task_view(task_dir, None, None))
            from crabtui.task_status import Options, TaskInfo, render

            info = TaskInfo(name=name, task_dir=task_dir, status="FAILED", scheduler_status="FAILED",
                            max_memory_mb=2500, max_runtime_min=1250)
            now = time.time()
            layout, _ = best_of(args.runs, lambda: render(info, view.jobs, now, Options(long=True)))
            cache_mb = os.path.getsize(os.path.join(task_dir, "status_cache.json")) / 1e6
        finally:
            run(base + ["pool", "stop"])

    lines = out.splitlines()
    result = {
        "jobs": njobs, "attempts": nattempts, "setup_s": round(setup, 1),
        "cold_s": round(cold, 4), "warm_s": round(warm, 4), "one_changed_s": round(changed, 4),
        "output_lines": len(lines), "same_output_cold_warm": cold_out == out,
        "crabtui_script": crabtui, "crabtui_on_path": wrapper,
        "crabtui_on_path_warm_s": round(wrapped, 4) if wrapped else None,
        "python_pass_s": round(python_pass, 4), "python_import_crabtui_cli_s": round(python_import, 4),
        "task_view_warm_s": round(gather, 4), "render_s": round(layout, 4), "status_cache_mb": round(cache_mb, 2),
        "restarts": sum(j.restarts for j in view.jobs),
        "summary": [line for line in lines if "status:" in line or line.startswith("\t\t\t\t")][:8],
        "pool_warm_s": round(on_pool, 4) if on_pool is not None else None,
        "pool_same_output": pool_out == out if on_pool is not None else None,
        "target_s": TARGET_S, "pass": warm < TARGET_S and (on_pool is None or on_pool < TARGET_S),
        "state_dir": state_dir if args.keep else None,
    }
    report(result, args.json, print_report)
    sys.exit(0 if result["pass"] else 1)


def print_report(r: dict) -> None:
    print(f"task:             {r['jobs']:,} jobs, {r['attempts']:,} attempts, fabricated in {r['setup_s']:.1f} s "
          "(not timed)")
    print(f"crabtui task status --long, {r['output_lines']:,} lines of output:")
    print(f"  warm (status cache up to date)  {r['warm_s']:.3f} s  (target < {r['target_s']:g} s)  "
          f"{verdict(r['pass'])}")
    print(f"  one job changed since           {r['one_changed_s']:.3f} s")
    if r["pool_warm_s"] is not None:
        print(f"  warm, --backend htcondor        {r['pool_warm_s']:.3f} s  (target < {r['target_s']:g} s; the same "
              f"output: {r['pool_same_output']})")
    print(f"  cold (first status, no cache)   {r['cold_s']:.3f} s  (writes a {r['status_cache_mb']:.1f} MB cache; "
          f"{r['restarts']} restarts counted from the job logs)")
    if not r["same_output_cold_warm"]:
        print("  WARNING: the cold and warm outputs differ")
    if r["crabtui_on_path"]:
        print(f"  (the crabtui on PATH, {r['crabtui_on_path']}, wraps {r['crabtui_script']}: warm through it "
              f"{r['crabtui_on_path_warm_s']:.3f} s)")
    print("where the time goes (each best of the runs):")
    print(f"  python3 -c pass                 {r['python_pass_s']:.3f} s")
    print(f"  python3 -c 'import crabtui.cli' {r['python_import_crabtui_cli_s']:.3f} s")
    print(f"  task_view() in-process, warm    {r['task_view_warm_s']:.3f} s")
    print(f"  render() --long in-process      {r['render_s']:.3f} s")
    for line in r["summary"]:
        print(f"  | {line.expandtabs()}")
    if r["state_dir"]:
        print(f"state dir:        {r['state_dir']}")


if __name__ == "__main__":
    run_main(main)
