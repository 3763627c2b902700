"""Automatic splitting end to end on the embedded engine: probes, PreDAG's processing and tail
sub-DAGs, every lumi of the input processed exactly once by a successful job, and CRAB's
resubmit rules for automatic tasks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from crab_tasks import config_text, crabtui, wait_status
from engine.crab.taskworker.dagman_creator import DAG_FILE, subdag_file

MUON = "/Muon0/Run2023C-PromptReco-v1/AOD"  # 6,000 lumis: 44 jobs of 180 min at 10 events/s
# A task of three stages takes a minute on an idle machine and over four on a busy one; the
# bound only says when to give up.
TASK_TIMEOUT = 600


def submit(state, tmp_path: Path, name: str, *, plan: str = "", knobs: str = "numAutomaticProbes = 3") -> None:
    Path(state.taskworker_config).write_text(f"[TaskWorker]\n{knobs}\n")
    (tmp_path / "pset.py").write_text("")
    (tmp_path / f"{name}.toml").write_text(config_text(name, scale=3600, plan=plan, dataset=MUON,
                                                       splitting="Automatic", units=180))
    result = crabtui(state, "task", "submit", f"{name}.toml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def processed_once(status: dict) -> Counter:
    """How many successful jobs processed each lumi: probes produce no output, so they do not count."""
    counts: Counter = Counter()
    for job in status["jobs"]:
        if job["state"] == "finished" and not job["id"].startswith("0-"):
            counts.update((run, lumi) for run, lumis in job["processed_lumis"].items() for lumi in lumis)
    return counts


def test_every_lumi_is_processed_exactly_once_across_processing_and_tail_jobs(state, tmp_path):
    # Probe 0-1 fails once and is retried, as CRAB retries probes; processing job 3 fails (no retry:
    # its lumis go to the tail stage); the slow site leaves lumis of its jobs for the tail too.
    submit(state, tmp_path, "auto", plan='{job = "0-1", attempt = 1, exitCode = 1}, '
                                          '{job = "3", attempt = "*", exitCode = 8021}')
    status = wait_status(state, "auto", tmp_path, "COMPLETED", timeout=TASK_TIMEOUT)
    jobs = {job["id"]: job for job in status["jobs"]}
    assert [j for j in jobs if j.startswith("0-")] == ["0-1", "0-2", "0-3"]
    assert jobs["0-1"]["state"] == "finished" and [a["exit_code"] for a in jobs["0-1"]["attempts"]] == [1, 0]
    assert jobs["3"]["state"] == "failed" and len(jobs["3"]["attempts"]) == 1, "processing jobs get no retry"
    tails = [j for j in jobs if "-" in j and not j.startswith("0-")]
    assert tails and all(jobs[j]["state"] == "finished" for j in tails)
    counts = processed_once(status)
    assert status["input_lumis"] == 6000
    assert len(counts) == 6000 and set(counts.values()) == {1}, "each lumi once, by one successful job"
    assert jobs["3"]["processed_lumis"] == {} or all(
        counts[(run, lumi)] == 1 for run, lumis in jobs["3"]["processed_lumis"].items() for lumi in lumis)

    task_dir = next((Path(state.path) / "tasks").iterdir())
    dag = (task_dir / DAG_FILE).read_text()
    assert "SUBDAG EXTERNAL Job0SubJobs RunJobs0.subdag" in dag
    assert "PRE Job0SubJobs" in dag and "engine.crab.ap.predag processing 3 0" in dag
    processing = (task_dir / subdag_file(0)).read_text()
    assert "SUBDAG EXTERNAL Job1SubJobs RunJobs1.subdag" in processing, "one tail stage for 44 jobs"
    assert "RETRY Job3 0 UNLESS-EXIT 2" in processing
    assert f"JOB Job{tails[0]} Job.{tails[0]}.submit" in (task_dir / subdag_file(1)).read_text()
    estimate = json.loads((task_dir / "automatic_splitting" / "estimate.json").read_text())
    assert estimate["probes"] == ["0-1", "0-2", "0-3"] and estimate["throughput"] > 0
    assert "RETRY Job0-1 10 UNLESS-EXIT 2" in dag, "probes have the task's retries"


def test_no_probe_succeeding_fails_the_task_with_crabs_message(state, tmp_path):
    # 8006 is in no retry policy: each probe fails for good at once, with a report saying so.
    submit(state, tmp_path, "noprobe", plan='{job = "0-1", attempt = "*", exitCode = 8006}, '
                                             '{job = "0-2", attempt = "*", exitCode = 8006}',
           knobs="numAutomaticProbes = 2")
    status = wait_status(state, "noprobe", tmp_path, "FAILED", timeout=120)
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout)
    assert ("Splitting failed because all probe jobs failed or anyhow failed to provide estimates "
            "(0-1: failed with exit code 8006; 0-2: failed with exit code 8006)") in listed[0]["message"]
    assert [j["id"] for j in status["jobs"]] == ["0-1", "0-2"], "no processing job was made"


def test_a_runtime_under_the_minimum_is_refused_by_the_task_worker(state, tmp_path):
    submit(state, tmp_path, "short", knobs="minAutomaticRuntimeMins = 240")
    wait_status(state, "short", tmp_path, "SUBMITFAILED", timeout=60)
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout)
    assert listed[0]["message"].startswith("Minimum runtime requirement for automatic splitting is 240 minutes.")


def test_only_tail_jobs_can_be_resubmitted(state, tmp_path):
    submit(state, tmp_path, "resub", plan='{job = "0-1", attempt = 1, exitCode = 1}, '
                                           '{job = "3", attempt = "*", exitCode = 8021}, '
                                           '{job = "1-1", attempt = 1, exitCode = 7}')
    status = wait_status(state, "resub", tmp_path, "FAILED", timeout=TASK_TIMEOUT)
    assert {j["id"]: j["state"] for j in status["jobs"]}["1-1"] == "failed"
    for wanted, refused in (("3", "3: processing job, not resubmittable"),
                            ("0-1", "0-1: probe job, not resubmittable")):
        result = crabtui(state, "task", "resubmit", "resub", "--jobids", wanted, cwd=tmp_path)
        assert result.returncode == 1 and refused in result.stderr, result.stderr

    result = crabtui(state, "task", "resubmit", "resub", cwd=tmp_path)  # the failed tail job only
    assert result.returncode == 0, result.stderr
    status = wait_status(state, "resub", tmp_path, "COMPLETED", timeout=TASK_TIMEOUT)
    jobs = {j["id"]: j for j in status["jobs"]}
    assert [a["exit_code"] for a in jobs["1-1"]["attempts"]] == [7, 0]
    assert len(jobs["3"]["attempts"]) == 1 and len(jobs["0-1"]["attempts"]) == 2, "not run again"
    counts = processed_once(status)
    assert len(counts) == 6000 and set(counts.values()) == {1}


def test_a_killed_automatic_task_is_refused_in_crabs_words(state, tmp_path):
    """crab resubmit of a task with Automatic splitting after crab kill: CRAB's client refuses it
    with its own sentence before it asks the server."""
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomaticProbes = 2\n")
    (tmp_path / "PSet.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    (tmp_path / "crabConfig.py").write_text(
        "from CRABClient.UserUtilities import config\n"
        "config = config()\n"
        "config.General.requestName = 'SingleMuon_2023C_auto_killed'\n"
        "config.General.workArea = 'crab_auto'\n"
        "config.JobType.pluginName = 'Analysis'\n"
        "config.JobType.psetName = 'PSet.py'\n"
        f"config.Data.inputDataset = '{MUON}'\n"
        "config.Data.splitting = 'Automatic'\n"
        "config.Data.unitsPerJob = 180\n"
        "config.Site.storageSite = 'T2_CH_CERN'\n"
        "config.Debug.timeScale = 3600\n"
        "config.Debug.failurePlan = [{'job': '0-1', 'attempt': '*', 'exitCode': 8006},\n"
        "                            {'job': '0-2', 'attempt': '*', 'exitCode': 8006}]\n")
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    wait_status(state, "SingleMuon_2023C_auto_killed", tmp_path, "FAILED", timeout=120)
    killed = crabtui(state, "task", "kill", "-d", "crab_auto/crab_SingleMuon_2023C_auto_killed", cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    wait_status(state, "SingleMuon_2023C_auto_killed", tmp_path, "KILLED", timeout=60)
    for args in ((), ("--jobids", "1-1")):
        result = crabtui(state, "task", "resubmit", "-d", "crab_auto/crab_SingleMuon_2023C_auto_killed", *args,
                         cwd=tmp_path)
        assert result.returncode == 1
        assert result.stderr.startswith(
            "ERROR: Tasks using automatic splitting cannot be resubmitted after a kill. ("), result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_an_automatic_tasks_message_counts_its_probes_as_probes(state, tmp_path):
    """The task worker's message beside the task's jobs said "3 jobs" while the task had 18: it
    made the probes only."""
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomaticProbes = 3\n")
    (tmp_path / "pset.py").write_text("")
    (tmp_path / "crabConfig.py").write_text(
        "from CRABClient.UserUtilities import config\n"
        "config = config()\n"
        "config.General.requestName = 'autoprobes'\n"
        "config.JobType.pluginName = 'Analysis'\n"
        "config.JobType.psetName = 'pset.py'\n"
        f"config.Data.inputDataset = '{MUON}'\n"
        "config.Data.splitting = 'Automatic'\n"
        "config.Data.unitsPerJob = 180\n"
        "config.Data.publication = False\n"
        "config.Site.storageSite = 'T2_CH_CERN'\n"
        "config.Debug.timeScale = 3600\n")
    result = crabtui(state, "task", "submit", "-c", "crabConfig.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    wait_status(state, "autoprobes", tmp_path, "SUBMITTED", timeout=60)
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout)
    assert [t["message"] for t in listed if t["name"].endswith("_crab_autoprobes")] == ["3 probe jobs"]
    crabtui(state, "task", "kill", "autoprobes", cwd=tmp_path)
