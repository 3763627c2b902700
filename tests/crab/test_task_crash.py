"""The embedded daemon (schedd and task worker) killed with SIGKILL in the middle of a task, then
started again: the task completes with nothing lost and nothing run again.  The jobs that were
running, DAGMan's among them, run on under their starters, and the new daemon collects them."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import htcondor2
import pytest

from crab_tasks import config_text, crab_config_py, crabtui, task_status, wait_status, wait_until
from engine.crab.ap import postjob, prejob
from engine.crab.taskworker.dagman_creator import TaskAd, write_task
from engine.crab.taskworker.datasets import Catalogue
from engine.crab.taskworker.splitting import split
from engine.crab.wn import fjr
from engine.crashpoint import ENV_VAR
from engine.schedd.local.client import LocalScheddClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "schedd"))
from schedd_harness import process_gone  # noqa: E402

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
# The payload: each execution appends its job id to runs.txt; jobs 3 and 4 then wait for the gate.
PAYLOAD = """#!/bin/sh
echo "$1" >> {runs}
if [ "$1" -gt 2 ]; then
    while [ ! -e {gate} ]; do sleep 0.1; done
fi
"""


def post_ends(task_dir: Path) -> set[str]:
    """The nodes whose POST script DAGMan has logged as ended."""
    log = task_dir / "RunJobs.dag.nodes.log"
    if not log.exists():
        return set()
    return {e["DAGNodeName"] for e in htcondor2.JobEventLog(str(log)).events(stop_after=0)
            if e.type == htcondor2.JobEventType.POST_SCRIPT_TERMINATED}


def test_a_daemon_killed_mid_task_loses_nothing_and_runs_nothing_again(tmp_path, state):
    runs, gate = tmp_path / "runs.txt", tmp_path / "gate"
    (tmp_path / "run.sh").write_text(PAYLOAD.format(runs=runs, gate=gate))
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("crash").replace('psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0

    def half_done():
        status = task_status(state, "crash", tmp_path)
        jobs = {j["id"]: j["state"] for j in status["jobs"]}
        if [jobs.get(i) for i in "1234"] != ["finished", "finished", "running", "running"]:
            return None
        return post_ends(Path(status["task_dir"])) >= {"Job1", "Job2"} and status

    before = wait_until("jobs 1 and 2 done (DAGMan has logged their POST) while 3 and 4 run", half_done)
    task_dir = Path(before["task_dir"])
    reports = {job: (task_dir / f"jobReport.json.{job}.0").read_bytes() for job in ("1", "2")}
    with LocalScheddClient(state) as client:
        daemon = client.ping()["pid"]
    os.kill(daemon, signal.SIGKILL)
    wait_until("the killed daemon to be gone", lambda: process_gone(daemon))

    restarted = task_status(state, "crash", tmp_path)  # the next command starts the daemon again
    assert restarted["status"] == "SUBMITTED" and restarted["dagman_id"] == before["dagman_id"]
    assert {j["id"]: j["state"] for j in restarted["jobs"]} == {
        "1": "finished", "2": "finished", "3": "running", "4": "running"}, "reconnected to, not evicted"
    gate.touch()
    done = wait_status(state, "crash", tmp_path, "COMPLETED")

    jobs = {j["id"]: j for j in done["jobs"]}
    assert all(j["state"] == "finished" for j in jobs.values())
    assert {i: (len(j["attempts"]), j["retries"], j["restarts"]) for i, j in jobs.items()} == {
        "1": (1, 0, 0), "2": (1, 0, 0), "3": (1, 0, 0), "4": (1, 0, 0)}
    assert sorted(runs.read_text().split()) == ["1", "2", "3", "4"], "every job ran once"
    assert {job: (task_dir / f"jobReport.json.{job}.0").read_bytes() for job in ("1", "2")} == reports
    with LocalScheddClient(state) as client:
        ads = client.history("CRAB_Id =!= undefined || JobUniverse == 7", ["CRAB_Id", "NumJobStarts"])
    assert sorted((str(ad.get("CRAB_Id", "DAGMan")), ad["NumJobStarts"]) for ad in ads) == [
        ("1", 1), ("2", 1), ("3", 1), ("4", 1), ("DAGMan", 1)], "one start of every job, DAGMan's too"
    assert "Running in RECOVERY mode" not in (task_dir / "RunJobs.dag.dagman.out").read_text()


def test_a_postjob_run_again_after_a_crash_repeats_its_decision(tmp_path):
    """DAGMan runs a POST script again in recovery when it died before logging the script's end,
    even if the script had recorded its decision: the second run changes nothing."""
    dataset = Catalogue(None).load(MC)
    ad = TaskAd(name="240101_000000:alice_crab_again", user="alice", dataset=MC, max_memory_mb=2000,
                max_runtime_min=60, num_cores=1, priority=10, site_whitelist=(), site_blacklist=(),
                storage_site=None, time_scale=100.0, max_retries=3)
    task_dir = str(tmp_path)
    write_task(task_dir, ad, dataset, split(dataset, algorithm="FileBased", units_per_job=5, total_units=5))
    assert prejob.main(["0", "1", task_dir]) == 0
    fjr.write_report(os.path.join(task_dir, "jobReport.json.1.0"), fjr.minimal_report(0, "OK", "T2_XX_Local"))
    args = ["7.0", "0", "0", "3", "1", task_dir]
    assert postjob.main(args) == 0
    recorded = (tmp_path / "retry_state" / "job.1.json").read_bytes()
    assert postjob.main(args) == 0
    assert (tmp_path / "retry_state" / "job.1.json").read_bytes() == recorded
    assert [a["action"] for a in json.loads(recorded)["attempts"]] == ["ok"]


def _waiting_for_lock(path: Path) -> list[int]:
    """The pids of the processes blocked in flock() on ``path`` (/proc/locks' ``->`` lines)."""
    inode = os.stat(path).st_ino
    waiting = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "->" and fields[6].rsplit(":", 1)[-1] == str(inode):
            waiting.append(int(fields[5]))
    return waiting


def _kill_a_blocked_postjob(task_dir: Path, what: str, gate: Path | None = None,
                            which=lambda job: True) -> str:
    """kill -9 of a PostJob of the task that is blocked on the site statistics' lock, before it
    records its decision: the lock is held here (``gate``, if given, is touched once it is, to let
    the jobs end), and the first blocked PostJob whose job ``which`` accepts is killed.  Returns
    that job's id."""
    import fcntl

    from engine.crab.ap import sites

    lock = Path(sites._statistics_path(str(task_dir)) + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the PostJobs wait here, before they record their decision
        if gate is not None:
            gate.touch()

        def blocked_postjob():
            for pid in _waiting_for_lock(lock):
                job = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[-3].decode()
                if which(job):
                    return pid, job
            return None

        postjob, job = wait_until(what, blocked_postjob)
        os.kill(postjob, signal.SIGKILL)
    finally:
        os.close(fd)
    return job


def test_a_postjob_killed_before_it_decides_does_not_run_its_finished_job_again(tmp_path, state):
    """kill -9 of a PostJob: DAGMan fails the POST script and retries the node, which ran the job
    that had succeeded a second time.  Its PreJob now takes the dead PostJob's decision instead,
    and skips the job (PRE_SKIP)."""
    runs, gate = tmp_path / "runs.txt", tmp_path / "gate"
    (tmp_path / "run.sh").write_text(f'#!/bin/sh\necho "$1" >> {runs}\nwhile [ ! -e {gate} ]; do sleep 0.1; done\n')
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("postkill", units=10).replace('psetName = "pset.py"',
                                                                                    'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    task_dir = Path(wait_until("the task's DAG", lambda: (lambda s: s["status"] == "SUBMITTED" and s)(
        task_status(state, "postkill", tmp_path)))["task_dir"])
    job = _kill_a_blocked_postjob(task_dir, "a PostJob blocked before its decision", gate)

    done = wait_status(state, "postkill", tmp_path, "COMPLETED")
    assert sorted(runs.read_text().split()) == ["1", "2"], "each job ran once"
    assert all(j["state"] == "finished" for j in done["jobs"])
    out = (task_dir / "RunJobs.dag.dagman.out").read_text()
    assert f"POST Script of node Job{job} died on signal 9" in out
    assert f"PRE_SKIP return value 5 indicates we are done (successfully) with node Job{job}" in out
    state_file = json.loads((task_dir / "retry_state" / f"job.{job}.json").read_text())
    assert [(a["crab_retry"], a["action"]) for a in state_file["attempts"]] == [(0, "ok")]


def test_a_task_adopted_after_a_crash_says_how_many_jobs_as_a_normal_submit(tmp_path, state):
    """The task worker killed once DAGMan is queued, before the task table is told: the restarted
    worker adopts that DAGMan job, and the task reads as a submission that never crashed."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("adopted", scale=1))
    submitted = crabtui(state, "task", "submit", cwd=tmp_path, env={ENV_VAR: "taskworker:dagman-queued"})
    assert submitted.returncode == 0, submitted.stderr
    # the daemon dies at that point; the next command starts it again
    status = wait_status(state, "adopted", tmp_path, "SUBMITTED")
    assert status["message"] == "4 jobs"
    with LocalScheddClient(state) as client:
        dagmans = client.query("JobUniverse == 7", ["ClusterId"]) + client.history("JobUniverse == 7", ["ClusterId"])
    assert [ad["ClusterId"] for ad in dagmans] == [status["dagman_id"]], "adopted, not queued twice"


def test_a_postjob_killed_on_its_nodes_last_retry_leaves_its_job_finished_and_never_run_again(tmp_path, state):
    """With one execution per job (numAutomJobRetries = 1: no DAG retry), kill -9 of a PostJob
    fails its node and ends the DAG, with no PreJob left to take the decision: the job that
    succeeded must read finished, not killed, and the rescue DAG of a resubmit of the job that
    failed for good must not run it again (PRE_SKIP)."""
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomJobRetries = 1\n")
    runs, gate = tmp_path / "runs.txt", tmp_path / "gate"
    (tmp_path / "run.sh").write_text(f'#!/bin/sh\necho "$1" >> {runs}\n'
                                     f'if [ "$1" != 2 ]; then while [ ! -e {gate} ]; do sleep 0.1; done; fi\n')
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("lastpost", scale=100, plan='{job = "2", attempt = 1, exitCode = 8006}')
                                        .replace('psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    task_dir = Path(wait_until("job 2 failed for good", lambda: (lambda s: any(
        j["id"] == "2" and j["state"] == "failed" for j in s["jobs"]) and s)(
        task_status(state, "lastpost", tmp_path)))["task_dir"])
    job = _kill_a_blocked_postjob(task_dir, "a PostJob blocked before its decision", gate)

    failed = wait_status(state, "lastpost", tmp_path, "FAILED")
    assert f"POST Script of node Job{job} died on signal 9" in (task_dir / "RunJobs.dag.dagman.out").read_text()
    assert {j["id"]: j["state"] for j in failed["jobs"]} == {"1": "finished", "2": "failed", "3": "finished",
                                                             "4": "finished"}
    assert crabtui(state, "task", "resubmit", "lastpost", cwd=tmp_path).returncode == 0
    done = wait_status(state, "lastpost", tmp_path, "COMPLETED")
    assert all(j["state"] == "finished" for j in done["jobs"])
    assert sorted(runs.read_text().split()) == ["1", "2", "2", "3", "4"], "only the failed job ran again"
    assert f"PRE_SKIP return value 5 indicates we are done (successfully) with node Job{job}" in \
        (task_dir / "RunJobs.dag.dagman.out").read_text()
    state_file = json.loads((task_dir / "retry_state" / f"job.{job}.json").read_text())
    assert [(a["crab_retry"], a["action"]) for a in state_file["attempts"]] == [(0, "ok")]



MUON = "/Muon0/Run2023C-PromptReco-v1/AOD"  # 6,000 lumis: 44 processing jobs of 180 min
# Which job's PostJob is killed at each stage of an automatic task, once the stage is there, and
# which DAG runs it; processing job 3 fails, so that a tail stage has lumis to split.
STAGES = {"probe": (lambda job: job.startswith("0-"), None, "RunJobs.dag"),
          "processing": (lambda job: "-" not in job and job != "3", 0, "RunJobs0.subdag"),
          "tail": (lambda job: job.startswith("1-"), 1, "RunJobs1.subdag")}


@pytest.mark.parametrize("stage", STAGES)
def test_a_postjob_killed_on_its_nodes_last_retry_in_an_automatic_task_reruns_nothing(tmp_path, state, stage):
    """With one execution per job, kill -9 of a PostJob fails its node and no PreJob follows to
    take the decision, while the task's DAG runs on: a probe's or processing job's is taken by the
    PreDAG of the next stage (it waited for the job forever), a tail job's by the task worker once
    DAGMan has left (the task FAILED).  The job reads finished, and no tail job processes its lumis again."""
    from collections import Counter

    from engine.crab.ap.stages import read_estimate, stage_jobs

    killed, split_stage, dag = STAGES[stage]
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomaticProbes = 2\nnumAutomJobRetries = 1\n")
    (tmp_path / "PSet.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    (tmp_path / "crabConfig.py").write_text(
        "from CRABClient.UserUtilities import config\n"
        "config = config()\n"
        "config.General.requestName = 'Muon0_2023C_auto_postkill'\n"
        "config.General.workArea = 'crab_auto'\n"
        "config.JobType.pluginName = 'Analysis'\n"
        "config.JobType.psetName = 'PSet.py'\n"
        f"config.Data.inputDataset = '{MUON}'\n"
        "config.Data.splitting = 'Automatic'\n"
        "config.Data.unitsPerJob = 180\n"
        "config.Site.storageSite = 'T2_CH_CERN'\n"
        "config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']\n"
        "config.Debug.timeScale = 3600\n"
        "config.Debug.failurePlan = [{'job': '3', 'attempt': '*', 'exitCode': 8021}]\n")
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    name = "Muon0_2023C_auto_postkill"
    task_dir = Path(wait_until("the task's DAG", lambda: (lambda s: s["task_dir"] and s)(
        task_status(state, name, tmp_path)))["task_dir"])
    if split_stage is not None:
        wait_until(f"stage {split_stage} split", lambda: stage_jobs(str(task_dir), split_stage), timeout=300)
    job = _kill_a_blocked_postjob(task_dir, f"a {stage} job's PostJob blocked before its decision", which=killed)

    done = wait_status(state, name, tmp_path, "COMPLETED", timeout=600)
    assert f"POST Script of node Job{job} died on signal 9" in (task_dir / f"{dag}.dagman.out").read_text()
    jobs = {j["id"]: j for j in done["jobs"]}
    assert jobs[job]["state"] == "finished" and len(jobs[job]["attempts"]) == 1
    state_file = json.loads((task_dir / "retry_state" / f"job.{job}.json").read_text())
    assert [a["action"] for a in state_file["attempts"]] == ["ok"]
    if stage == "probe":
        assert job in read_estimate(str(task_dir))["probes"], "its throughput counts"
    counts: Counter = Counter()
    for j in done["jobs"]:
        if j["state"] == "finished" and not j["id"].startswith("0-"):
            counts.update((run, lumi) for run, lumis in j["processed_lumis"].items() for lumi in lumis)
    assert len(counts) == 6000 and set(counts.values()) == {1}, "each lumi once, by one successful job"


def test_a_predag_reads_the_nodes_log_once_however_many_postjobs_it_waits_for(tmp_path, monkeypatch):
    """PreDAG waits for the probes whose PostJobs defer (their outputs in transfer) and decides the
    one whose PostJob died on its last retry, reading the DAG's nodes log once for them all: it is
    long for a stage of thousands of jobs, and every tail stage's PreDAG looks again every poll."""
    from datetime import datetime, timezone

    from engine.crab.ap import predag
    from engine.crab.taskworker.automatic import AutomaticConfig, probe_split
    from engine.schedd.local.userlog import JobTerminatedEvent, PostScriptTerminatedEvent, SubmitEvent, UserLog

    dataset = Catalogue(None).load(MC)
    knobs = AutomaticConfig()
    probes = probe_split(dataset, knobs, seed="auto")
    ad = TaskAd(name="240101_000000:alice_crab_auto", user="alice", dataset=MC, max_memory_mb=2000,
                max_runtime_min=180, num_cores=1, priority=10, site_whitelist=(), site_blacklist=(),
                storage_site=None, time_scale=100.0, max_retries=1,
                automatic={"minutes": 180, "config": knobs.crab(), "probes": [j.id for j in probes]})
    task_dir = str(tmp_path)
    write_task(task_dir, ad, dataset, probes)
    now = datetime(2024, 1, 1, tzinfo=timezone.utc)
    nodes = UserLog(os.path.join(task_dir, "RunJobs.dag.nodes.log"))
    for cluster, job in enumerate((j.id for j in probes), start=10):
        assert prejob.main(["0", job, task_dir]) == 0
        fjr.write_report(os.path.join(task_dir, f"jobReport.json.{job}.0"), fjr.minimal_report(0, "OK", "T2_XX_Local"))
        events = (SubmitEvent(cluster=cluster, proc=0, time=now, submit_host="<127.0.0.1:9618>",
                              log_notes=f"DAG Node: Job{job}"),
                  JobTerminatedEvent(cluster=cluster, proc=0, time=now, return_value=0))
        UserLog(os.path.join(task_dir, f"job_log.{job}")).write(*events)
        nodes.write(*events)
    dead = probes[0].id
    nodes.write(PostScriptTerminatedEvent(cluster=10, proc=0, time=now, dag_node_name=f"Job{dead}", signal_number=9))
    reads = []
    real = htcondor2.JobEventLog
    monkeypatch.setattr(htcondor2, "JobEventLog", lambda path: reads.append(os.path.basename(path)) or real(path))

    assert len(probes) > 2
    assert predag.main(["processing", str(len(probes)), "0", task_dir]) == 4  # DEFER: the others wait
    assert reads.count("RunJobs.dag.nodes.log") == 1
    assert predag.node_outcome(task_dir, dead) == "finished"
    assert [predag.node_outcome(task_dir, j.id) for j in probes[1:]] == [None] * (len(probes) - 1)


def _automatic_task(task_dir: str):
    """An automatic-splitting task of MC written into ``task_dir`` with its probes, as the task
    worker writes it: returns the dataset, the automatic knobs and the probe jobs."""
    from engine.crab.taskworker.automatic import AutomaticConfig, probe_split

    dataset = Catalogue(None).load(MC)
    knobs = AutomaticConfig()
    probes = probe_split(dataset, knobs, seed="auto")
    ad = TaskAd(name="240101_000000:alice_crab_auto", user="alice", dataset=MC, max_memory_mb=2000,
                max_runtime_min=180, num_cores=1, priority=10, site_whitelist=(), site_blacklist=(),
                storage_site=None, time_scale=100.0, max_retries=3,
                automatic={"minutes": 180, "config": knobs.crab(), "probes": [j.id for j in probes],
                           "catalogue": None})
    write_task(task_dir, ad, dataset, probes)
    return dataset, knobs, probes


@pytest.mark.parametrize("point", ["replace:job.{job}.json", "replace:Job.{job}.submit"])
def test_a_prejob_killed_on_a_processing_jobs_only_retry_hands_its_lumis_to_the_tail(tmp_path, point):
    """kill -9 of a processing job's PreJob (its node has no retry) before the attempt is recorded,
    or once it is but before the job is submitted: DAGMan fails the node at its PRE script, says so
    only in dagman.out, and submits nothing.  The tail stage's PreDAG waited for that job for ever
    (the task stayed SUBMITTED); it now reads it failed, as CRAB's PreDAG reads a failed node, and
    splits all its lumis into tail jobs; a PreJob run again (DAGMan in recovery) does not run it."""
    import subprocess

    from engine.crab.ap import predag, stages
    from engine.crab.ap.retry_policy import JobReturnCode
    from engine.crab.taskworker.automatic import Estimate, processing_split
    from engine.crab.taskworker.dagman_creator import write_jobs
    from engine.crab.wn.job_input import read_input
    from engine.dagman.dagman_out import DagmanOut
    from installed import PYTHON

    task_dir = str(tmp_path)
    dataset, knobs, probes = _automatic_task(task_dir)
    jobs = processing_split(dataset, knobs, 180, Estimate(10.0, 1000.0, ("0-1",)))
    write_jobs(task_dir, dataset, jobs)
    stages.write_estimate(task_dir, 10.0, 1000.0, ["0-1"])
    stages.write_stage_jobs(task_dir, 0, [j.id for j in jobs])
    *others, victim = [j.id for j in jobs]
    for cluster, job in enumerate(others, start=10):
        assert prejob.main(["0", job, task_dir]) == 0
        fjr.write_report(os.path.join(task_dir, f"jobReport.json.{job}.0"), fjr.minimal_report(0, "OK", "T2_XX_Local"))
        assert postjob.main([f"{cluster}.0", "0", "0", "0", job, task_dir]) == 0
    killed = subprocess.run([PYTHON, "-m", "engine.crab.ap.prejob", "0", victim, task_dir], capture_output=True,
                            env={**os.environ, ENV_VAR: point.format(job=victim)})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with DagmanOut(os.path.join(task_dir, "RunJobs0.subdag.dagman.out")) as out:  # as DAGMan logs it
        out.running_script("PRE", f"Job{victim}")
        out.pre_script_died(f"Job{victim}", signal.SIGKILL)

    assert predag.main(["tail", str(len(jobs)), "1", task_dir]) == JobReturnCode.OK, "split, not waiting"
    assert predag.node_outcome(task_dir, victim) == "failed"
    state_file = json.loads((tmp_path / "retry_state" / f"job.{victim}.json").read_text())
    assert [(a["action"], a["reason"]) for a in state_file["attempts"]] == [
        ("fatal", "Its PreJob ended before the job was submitted (PRE script died on signal 9 (Killed)), "
                  "on the node's last retry.")]
    def lumis(job: str) -> set[tuple[int, int]]:
        given = read_input(os.path.join(task_dir, f"job_input.{job}.json")).lumis()
        return {(run, lumi) for run, numbers in given.items() for lumi in numbers}

    tail_lumis = set().union(*(lumis(job) for job in stages.stage_jobs(task_dir, 1)))
    given = lumis(victim)
    assert given and given <= tail_lumis, "the tail processes every lumi of the job that never ran"
    assert prejob.main(["0", victim, task_dir]) == JobReturnCode.FATAL_ERROR, "never run after its lumis went"


def test_a_prejob_killed_on_its_nodes_last_retry_leaves_its_job_failed_and_resubmittable(tmp_path):
    """With one execution per job (numAutomJobRetries = 1: no DAG retry), kill -9 of a PreJob once
    it recorded the attempt, before the job was submitted: DAGMan fails the node at its PRE script
    and ends.  The job read unsubmitted, the task FAILED, and ``task resubmit`` found no jobs to
    resubmit, so the job could never run; once DAGMan has left, the task worker records it failed."""
    import subprocess

    from engine.crab.client.resubmit import select_jobs
    from engine.crab.client.status import task_jobs
    from engine.crab.taskworker.taskdb import SUBMIT, SUBMITTED, Task
    from engine.crab.taskworker.worker import TaskWorker
    from engine.dagman.dagman_out import DagmanOut
    from installed import PYTHON

    dataset = Catalogue(None).load(MC)
    ad = TaskAd(name="240101_000000:alice_crab_once", user="alice", dataset=MC, max_memory_mb=2000,
                max_runtime_min=60, num_cores=1, priority=10, site_whitelist=(), site_blacklist=(),
                storage_site=None, time_scale=100.0, max_retries=1)
    task_dir = str(tmp_path)
    write_task(task_dir, ad, dataset, split(dataset, algorithm="FileBased", units_per_job=10, total_units=20))
    assert prejob.main(["0", "1", task_dir]) == 0
    fjr.write_report(os.path.join(task_dir, "jobReport.json.1.0"), fjr.minimal_report(0, "OK", "T2_XX_Local"))
    assert postjob.main(["10.0", "0", "0", "0", "1", task_dir]) == 0
    killed = subprocess.run([PYTHON, "-m", "engine.crab.ap.prejob", "0", "2", task_dir], capture_output=True,
                            env={**os.environ, ENV_VAR: "replace:Job.2.submit"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with DagmanOut(os.path.join(task_dir, "RunJobs.dag.dagman.out")) as out:  # as DAGMan logs it, then exits
        out.running_script("PRE", "Job2")
        out.pre_script_died("Job2", signal.SIGKILL)

    task = Task(ad.name, "once", "alice", SUBMITTED, SUBMIT, "crab.toml", task_dir, 0.0, 0.0, dagman_id=7)
    TaskWorker._decide_dead_scripts(task)
    states = {job.id: job.state for job in task_jobs(task_dir, None, None, None)}
    assert states == {"1": "finished", "2": "failed"}
    assert select_jobs(states, None) == ["2"], "task resubmit runs it"
    TaskWorker._decide_dead_scripts(task)  # the worker looks again: nothing changes
    state_file = json.loads((tmp_path / "retry_state" / "job.2.json").read_text())
    assert [a["action"] for a in state_file["attempts"]] == ["fatal"]


def test_a_probe_whose_prejob_dies_before_recording_on_every_retry_is_read_failed(tmp_path):
    """A probe (RETRY 3) whose PreJob is killed, or fails, before it records an attempt, on each of
    DAGMan's tries: the node fails at its PRE script with no retry left, but the job's state holds
    no attempt, so PreDAG, counting retries from it, took it for one DAGMan would run again and
    waited for it for ever.  DAGMan's own "Retrying node ... (retry #3 of 3)" says it was the last."""
    from engine.crab.ap import predag
    from engine.dagman.dagman_out import DagmanOut

    task_dir = str(tmp_path)
    _, _, probes = _automatic_task(task_dir)
    victim = probes[0].id
    with DagmanOut(os.path.join(task_dir, "RunJobs.dag.dagman.out")) as out:  # as DAGMan logs it
        for retry in range(4):
            if retry:
                out.retrying_node(f"Job{victim}", retry, 3)
            out.running_script("PRE", f"Job{victim}")
            out.pre_script_failed(f"Job{victim}", 1)
    predag.main(["processing", str(len(probes)), "0", task_dir])
    assert predag.node_outcome(task_dir, victim) == "failed"
    state_file = json.loads((tmp_path / "retry_state" / f"job.{victim}.json").read_text())
    assert [a["reason"] for a in state_file["attempts"]] == [
        "Its PreJob ended before the job was submitted (PRE script failed with status 1), on the node's last retry."]
