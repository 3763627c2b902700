"""CRAB tasks on the real test pool through ``crabtui --backend htcondor task ...``, as a user of an
access point types them: the TaskWorker's steps carried out by the commands themselves, the DAG's
scripts run from the task's TaskManager.zip by the pool's condor_dagman, the jobs from their
sandbox on the pool's slots at its several sites (scripts/htcondor-testpool)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import htcondor2
import pytest

from engine.crab.taskworker.automatic import stage_of
from installed import CRABTUI
from pool_user import FLAKY, MC, POOL_SITES, STEADY_SITES, PoolUser, attempts, config

pytestmark = pytest.mark.htcondor

THRESHOLDS = 'automaticBlacklist = {completedJobs = 4, successfulJobs = 2, siteFailures = 2, siteSuccessRate = 0.5}'


@pytest.fixture
def user(htcondor_pool):
    user = PoolUser(htcondor_pool)
    yield user
    schedd = htcondor2.Schedd()
    schedd.act(htcondor2.JobAction.Remove, f'Iwd =?= "{user.state}" || regexp("^{user.state}/", Iwd)')
    shutil.rmtree(user.home, ignore_errors=True)


def test_the_life_of_a_lumibased_task_on_the_pool(user):
    """A planned 8021 is retried at another site, a 50115 with 30 % more memory, an 8006 fails
    for good; the flaky site's failures feed the automatic blacklist; the failed job resubmitted
    with new memory succeeds and the task ends COMPLETED.  Every job ran from its sandbox in a
    scratch directory of its own, with no crabtui installed on the worker node."""
    plan = ('{job = "2", attempt = 1, exitCode = 8021}, {job = "3", attempt = 1, exitCode = 50115}, '
            '{job = "4", attempt = 1, exitCode = 8006}')
    name = user.submit("crab.toml", config("life", plan=plan, debug=THRESHOLDS))
    status = user.wait(name, "FAILED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert len(jobs) == 8 and status["scheduler_status"] == "FAILED"

    two = attempts(jobs["2"])
    assert two[0][1:] == (8021, "retry") and two[-1][1:] == (0, "ok") and two[1][0] != two[0][0], two
    three = jobs["3"]["attempts"]
    assert (three[0]["exit_code"], three[0]["action"]) == (50115, "retry")
    assert three[1]["request_memory"] == int(three[0]["request_memory"] * 1.3), three
    assert attempts(jobs["4"]) == [(jobs["4"]["attempts"][0]["site"], 8006, "fatal")]
    assert jobs["4"]["state"] == "failed"
    assert all(j["state"] == "finished" for i, j in jobs.items() if i != "4")
    ran_at = {a["site"] for j in jobs.values() for a in j["attempts"]}
    assert ran_at <= set(POOL_SITES) and len(ran_at) > 1, ran_at  # real matchmaking across the pool's sites

    # The flaky site's failures (its machine ad's failure profile) and the automatic blacklist.
    flaky = [(j["id"], n) for j in jobs.values() for n, a in enumerate(j["attempts"]) if a["site"] == FLAKY]
    failed_there = [a for j in jobs.values() for a in j["attempts"] if a["site"] == FLAKY and a["exit_code"] == 8021]
    sites = {s["site"]: s for s in status["sites"]}
    if len(failed_there) >= 2:  # counted, and the site blacklisted unless half its jobs there succeeded
        rule = sites[FLAKY]["automatic"]
        assert rule["site_failures"]["met"] and rule["completed_jobs"]["met"], rule
        assert sites[FLAKY]["usable"] == (not rule["site_success_rate"]["met"]), sites[FLAKY]
    assert flaky, "no attempt ran at the flaky site"

    # What ran on the worker nodes: the sandbox, from a scratch directory under an execute
    # directory, not the checkout nor the task directory (bound inside the pool at their paths).
    task_dir = Path(status["task_dir"])
    checkout = str(Path(__file__).resolve().parents[2])
    for job in jobs:
        report = json.loads((task_dir / f"jobReport.json.{job}.0").read_text())
        code = report["crabtui"]["code"]
        assert code.endswith("/CMSRunAnalysis.pyz") and code.startswith("/var/lib/condor/execute"), code
        assert not code.startswith((checkout, str(task_dir)))
    submit = (task_dir / "Job.1.submit").read_text()
    assert "should_transfer_files = YES" in submit and "executable = CMSRunAnalysis.pyz" in submit
    assert 'arguments = "--jobId=$(count)"' in submit, "CRAB's argument to its job wrapper (DagmanCreator)"
    assert "PYTHONPATH" not in submit and checkout not in submit
    dag = (task_dir / "RunJobs.dag").read_text()
    assert f"PYTHONPATH={task_dir}/TaskManager.zip python3 -m engine.crab.ap.prejob" in dag and checkout not in dag

    # crab resubmit of the failed job with new memory: a rescue DAG on the pool.
    out = user.ok("task", "resubmit", "life", "--maxmemory", "3000")
    assert "Resubmit request for task" in out
    status = user.wait(name, "COMPLETED")
    four = {j["id"]: j for j in status["jobs"]}["4"]
    assert four["state"] == "finished" and four["attempts"][-1]["request_memory"] == 3000
    assert attempts(four)[-1][1:] == (0, "ok")
    assert (task_dir / "RunJobs.dag.rescue001").exists()
    listed = user.ok("task", "list")
    assert f"{name}  COMPLETED" in listed


def test_a_killed_task_on_the_pool(user):
    """crab kill: the DAGMan job and its running jobs leave the pool's queue; the task is KILLED
    and its running jobs killed."""
    name = user.submit("kill.toml", config("tokill", scale=5, total=40))
    deadline = time.monotonic() + 120
    # a job that has run a while (50 simulated seconds: its payload started, past its input transfer)
    while not any(j["state"] == "running" and (j["runtime_s"] or 0) >= 50 for j in user.status(name)["jobs"]):
        assert time.monotonic() < deadline, "no job of the task started running"
    out = user.ok("task", "kill", "tokill")
    assert "Kill request for task" in out
    status = user.status(name)
    assert status["status"] == "KILLED"
    states = {j["state"] for j in status["jobs"]}
    assert "running" not in states and states & {"killing", "killed"}, states
    deadline = time.monotonic() + 120
    while "killing" in (states := {j["state"] for j in user.status(name)["jobs"]}):  # until the pool let them go
        assert time.monotonic() < deadline, "jobs stayed killing"
    assert "running" not in states and "killed" in states, states
    # The pool brings no file of a removed job back: its site (and memory) come from its log.
    killed = [j for j in user.status(name)["jobs"] if j["state"] == "killed" and j["runtime_s"]]
    assert killed and all(j["site_history"][-1] in POOL_SITES for j in killed), killed
    assert not htcondor2.Schedd().query(f"ClusterId == {status['dagman_id']} || DAGManJobId == {status['dagman_id']}",
                                        ["ClusterId"])


def test_an_automatic_task_on_the_pool_processes_every_lumi_once(user):
    """Automatic splitting through ``task submit``: probes, then PreDAG's processing and tail stages
    as SUBDAG EXTERNAL nodes of the pool's condor_dagman; a processing job that fails has its lumis
    redone by a tail job, and every lumi of the input is processed by exactly one successful job."""
    user.state.mkdir(mode=0o700)
    os.chown(user.state, user.uid, user.uid)
    user.write("state/taskworker.toml", "[TaskWorker]\nnumAutomaticProbes = 2\nminAutomaticTailSize = 1\n")
    plan = '{job = "1", attempt = "*", exitCode = 8021}'
    name = user.submit("auto.toml", config("auto", splitting="Automatic", units=180, total=0, scale=3600, plan=plan,
                                           sites=STEADY_SITES))
    status = user.wait(name, "COMPLETED", timeout=900)
    task_dir = Path(status["task_dir"])
    assert "SUBDAG EXTERNAL Job0SubJobs RunJobs0.subdag" in (task_dir / "RunJobs.dag").read_text()
    assert (task_dir / "RunJobs0.subdag.dagman.out").exists()  # the pool's DAGMan ran the processing stage
    jobs = {j["id"]: j for j in status["jobs"]}
    assert jobs["1"]["state"] == "failed" and attempts(jobs["1"])[-1][1] == 8021
    counts: dict[tuple[str, int], int] = {}
    stages = {stage_of(job) for job in jobs}
    assert {"probe", "processing", "tail"} <= stages, stages
    for job in jobs.values():
        if stage_of(job["id"]) != "probe" and job["state"] == "finished":
            for run, lumis in job["processed_lumis"].items():
                for lumi in lumis:
                    counts[(run, lumi)] = counts.get((run, lumi), 0) + 1
    assert len(counts) == status["input_lumis"] and set(counts.values()) == {1}


EMBEDDED_POOL = """\
[[site]]
name = "T2_CH_CERN"
slots = 2
memory = 8000
speed = 1.5
[[site]]
name = "T1_US_FNAL"
slots = 1
memory = 8000
speed = 1.2
[[site]]
name = "T2_XX_Local"
slots = 4
memory = 8000
"""


def test_the_same_task_has_the_same_outcome_on_the_embedded_engine_and_on_the_pool(user, tmp_path):
    """Cross-check: one config, seed and failure plan on both backends (the embedded pool made of
    the test pool's sites but the flaky one): each job ends in the same state after the same
    attempts, with the same exit code and policy decision for each; only sites may differ, where
    the matchmaker chose freely."""
    plan = ('{job = "1", attempt = 1, exitCode = 8021}, {job = "3", attempt = 1, exitCode = 50115}, '
            '{job = "5", attempt = 1, exitCode = 8006}, {job = "6", attempt = 1, exitCode = 134}, '
            '{job = "6", attempt = 2, exitCode = 8028}')
    text = config("cross", plan=plan, sites=STEADY_SITES)
    embedded = tmp_path / "state"
    embedded.mkdir(mode=0o700)
    (embedded / "pool.toml").write_text(EMBEDDED_POOL)
    (tmp_path / "crab.toml").write_text(text)

    def local(*args: str) -> str:
        done = subprocess.run([CRABTUI, "--state-dir", str(embedded), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    try:
        names = {"pool": user.submit("crab.toml", text),
                 "embedded": local("task", "submit", "crab.toml").split("Task name: ")[1].split("\n")[0]}
        deadline = time.monotonic() + 600
        while (mine := json.loads(local("task", "status", names["embedded"], "--json")))["status"] != "FAILED":
            assert mine["status"] in ("NEW", "QUEUED", "SUBMITTED") and time.monotonic() < deadline, mine["status"]
            time.sleep(1)
        outcome = {"pool": user.wait(names["pool"], "FAILED"), "embedded": mine}
    finally:
        local("pool", "stop")

    def per_job(status: dict) -> dict:
        return {j["id"]: (j["state"], [(a["exit_code"], a["action"], a["request_memory"]) for a in j["attempts"]])
                for j in status["jobs"]}

    assert per_job(outcome["pool"]) == per_job(outcome["embedded"])
    jobs = per_job(outcome["pool"])
    assert jobs["5"] == ("failed", [(8006, "fatal", 2000)])
    assert jobs["6"][1][:2] == [(134, "retry", 2000), (8028, "retry", 2000)]
    assert [e for e, *_ in jobs["3"][1]] == [50115, 0]
    for backend, status in outcome.items():  # a retry after 8021 moves to another site on both
        one = {j["id"]: j for j in status["jobs"]}["1"]["attempts"]
        assert one[0]["site"] != one[1]["site"], (backend, one)


def test_a_task_command_killed_at_any_step_loses_nothing_and_submits_nothing_twice(user):
    """``kill -9`` of the command carrying a task out on the pool (CRABTUI_CRASH_POINT), after it
    took the submission up, after it queued DAGMan but before the task table knew, after a
    resubmission was recorded, and after its rescue DAG was queued: the next command finishes
    what was left, adopting the DAGMan job already queued, and the task ends COMPLETED with one
    DAGMan job per submission."""
    user.write("crab.toml", config("crash", plan='{job = "2", attempt = 1, exitCode = 8006}', total=40,
                                          sites=STEADY_SITES))
    assert user.run("task", "submit", "crab.toml", crash_at="taskworker:submit:queued").returncode == -9
    assert user.run("task", "list", crash_at="taskworker:dagman-queued").returncode == -9
    [row] = json.loads(user.ok("task", "list", "--json"))
    assert row["status"] == "SUBMITTED" and row["dagman_id"] is not None
    name, task_dir = row["name"], row["task_dir"]

    def dagmans() -> set[int]:
        where = f'JobUniverse == 7 && Iwd == "{task_dir}"'
        schedd = htcondor2.Schedd()
        return {int(ad["ClusterId"]) for ad in [*schedd.query(where, ["ClusterId"]),
                                                *schedd.history(where, ["ClusterId"])]}

    assert dagmans() == {row["dagman_id"]}
    user.wait(name, "FAILED")
    assert user.run("task", "resubmit", "crash", crash_at="taskworker:resubmit:recorded").returncode == -9
    assert user.run("task", "status", "crash", crash_at="taskworker:dagman-queued").returncode == -9
    status = user.wait(name, "COMPLETED")
    assert len(dagmans()) == 2 and status["dagman_id"] in dagmans()
    two = {j["id"]: j for j in status["jobs"]}["2"]
    assert attempts(two)[0][1:] == (8006, "fatal") and attempts(two)[-1][1:] == (0, "ok") and len(two["attempts"]) == 2


def test_the_demo_runs_its_two_tasks_on_the_pool(user):
    """``crabtui demo --backend htcondor``: the demo's tasks go to the pool of CONDOR_CONFIG and end
    as on the embedded engine: the automatic one COMPLETED, the lumi-based one FAILED with the
    one job that fails for good."""
    names = user.ok("demo", "--no-ui", "--state-dir", str(user.home / "demo")).split()
    user.state = user.home / "demo"
    assert len(names) == 2 and "automatic" in names[0] and "lumis" in names[1]
    assert user.wait(names[0], "COMPLETED", timeout=900)["scheduler_status"] == "COMPLETED"
    lumis = user.wait(names[1], "FAILED", timeout=900)
    assert [j["state"] for j in lumis["jobs"]].count("failed") == 1


@pytest.mark.parametrize("splitting, units", [("FileBased", 2), ("EventAwareLumiBased", 20000)])
def test_file_and_event_aware_splitting_on_the_pool(user, splitting, units):
    name = user.submit("crab.toml", config(f"split{len(splitting)}", splitting=splitting, units=units, total=-1,
                                           sites=STEADY_SITES))
    status = user.wait(name, "COMPLETED")
    assert len(status["jobs"]) > 1 and all(j["state"] == "finished" for j in status["jobs"])
    lumis = [(run, lumi) for j in status["jobs"] for run, ls in j["processed_lumis"].items() for lumi in ls]
    assert len(lumis) == len(set(lumis)) == status["input_lumis"]


def test_a_dry_run_on_the_pool_waits_uploaded_until_proceed_submits_it(user):
    """task submit --dryrun leaves the task UPLOADED (nothing reaches the pool's schedd); task proceed
    submits that task there, under its name, with the jobs the dry run counted."""
    user.write("crab.toml", config("dryproceed", total=20, sites=("T2_XX_Local",)))
    dry = user.ok("task", "submit", "--dryrun", "crab.toml")
    jobs = int(dry.split("Task consists of ")[1].split(" jobs")[0])
    name = dry.split("Task name: ")[1].split("\n")[0]
    assert "Dry run requested: task paused" in dry and user.status(name)["status"] == "UPLOADED"
    assert user.ok("task", "proceed", "-d", "crab_dryproceed").startswith(f"Task continuation request for task {name}")
    status = user.wait(name, "COMPLETED")
    assert len(status["jobs"]) == jobs and all(j["state"] == "finished" for j in status["jobs"])


def test_a_users_script_travels_in_the_jobs_sandbox(user):
    """JobType.scriptExe: transferred with the job's input, run from its scratch directory."""
    script = user.write("run.sh", '#!/bin/sh\necho "payload for job $1 in $(pwd)"\nfor a in "$@"; do echo "arg[$a]"; done\n')
    script.chmod(0o755)
    text = config("script", total=20, sites=("T2_XX_Local",)).replace(
        'psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"\nscriptArgs = ["isData=1", "cut = pt_20", "sel=a=b"]')
    status = user.wait(user.submit("crab.toml", text), "COMPLETED")
    out = (Path(status["task_dir"]) / "job_out.1.0.txt").read_text()
    assert "payload for job 1 in /var/lib/condor/execute" in out, out
    assert [line for line in out.splitlines() if line.startswith("arg[")] == \
        ["arg[1]", "arg[isData=1]", "arg[cut = pt_20]", "arg[sel=a=b]"], out


def test_the_tutorials_script_runs_cmsrun_on_the_pool_and_its_output_comes_back(user):
    """CRAB3AdvancedTutorial's script runs 'cmsRun -j FrameworkJobReport.xml -p PSet.py': on the
    pool's execute node too cmsRun is on its PATH, and its output_<id>.root comes back with the
    job's report, is staged out, and the task completes (written in a subdirectory of the execute
    directory, it did not come back, and PostJob retried the job until it failed)."""
    script = user.write("myscript.sh", '#!/bin/sh\necho "================= CMSRUN starting ===================="\n'
                                       'cmsRun -j FrameworkJobReport.xml -p PSet.py\n'
                                       'echo "================= CMSRUN finished ===================="\n')
    script.chmod(0o755)
    text = config("tutorial_script", total=20, sites=("T2_XX_Local",)).replace(
        'psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "myscript.sh"')
    status = user.wait(user.submit("crab.toml", text), "COMPLETED")
    assert all(j["state"] == "finished" and j["processed_lumis"] for j in status["jobs"]), status["jobs"]
    out = (Path(status["task_dir"]) / "job_out.1.0.txt").read_text()
    assert "CMSRUN starting" in out and " events in 10 lumis" in out and "CMSRUN finished" in out, out
    assert (Path(status["task_dir"]) / "output_1.root").is_file()


def test_a_scripts_output_files_come_back_from_the_pool(user):
    """JobType.outputFiles of a script: renamed hist_<id>.root and moved beside the job's report,
    they come back from the execute node and are staged out (left in the scratch subdirectory, they
    stayed on the node, and PostJob retried the job until it failed)."""
    script = user.write("run.sh", '#!/bin/sh\necho "histograms of job $1" > hist.root\n')
    script.chmod(0o755)
    text = config("script_outputs", total=10, sites=("T2_XX_Local",)).replace(
        'psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"\noutputFiles = ["hist.root"]')
    status = user.wait(user.submit("crab.toml", text), "COMPLETED")
    assert [j["state"] for j in status["jobs"]] == ["finished"]
    assert (Path(status["task_dir"]) / "hist_1.root").read_text() == "histograms of job 1\n"


def test_a_failed_jobs_exit_code_reaches_the_pools_history(user):
    """The job's executable (the sandbox zipapp) exits with its payload's status, as on the embedded
    engine: condor_history shows a job that failed with 8006 as ExitCode 70 (8006's low byte), one
    that succeeded as 0, and the DAG's nodes log the same return values."""
    user.write("pset.py", "import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    name = user.submit("crabConfig.py", f"""\
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'exitcode'
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '{MC}'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 10
config.Data.totalUnits = 20
config.Data.ignoreLocality = True
config.Site.whitelist = ['T2_XX_Local']
config.Site.storageSite = 'T2_XX_Local'
config.Debug.timeScale = 500
config.Debug.failurePlan = [{{'job': '2', 'attempt': 1, 'exitCode': 8006}}]
""")
    status = user.wait(name, "FAILED")
    assert [(j["id"], j["state"]) for j in status["jobs"]] == [("1", "finished"), ("2", "failed")]
    ads = htcondor2.Schedd().history(f"DAGManJobId == {status['dagman_id']}", ["DAGNodeName", "ExitCode"])
    assert sorted((ad["DAGNodeName"], ad["ExitCode"]) for ad in ads) == [("Job1", 0), ("Job2", 8006 % 256)]
    nodes_log = (Path(status["task_dir"]) / "RunJobs.dag.nodes.log").read_text()
    assert "Normal termination (return value 70)" in nodes_log


def test_a_planned_hold_holds_the_job_on_the_pool_until_its_release(user):
    """``Debug.failurePlan``'s ``hold``: the pool's schedd holds the attempt (on_exit_hold, the
    planned code as HoldReasonSubCode), CRAB's periodic_release lets it go, and it runs again to
    the end, as on the embedded engine."""
    user.write("pset.py", "import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    name = user.submit("crabConfig.py", f"""\
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'planned_hold'
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '{MC}'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 10
config.Data.totalUnits = 20
config.Data.ignoreLocality = True
config.Site.whitelist = ['T2_XX_Local']
config.Site.storageSite = 'T2_XX_Local'
config.Debug.timeScale = 500
config.Debug.failurePlan = [{{'job': '2', 'attempt': 1, 'hold': 13}}]
""")
    deadline = time.monotonic() + 300
    while (status := user.status(name))["jobs"][1]["state"] != "held":
        assert status["status"] == "SUBMITTED" and time.monotonic() < deadline, status["jobs"]
        time.sleep(1)  # as PoolUser.wait polls: each status is a whole crabtui command
    held = htcondor2.Schedd().query(f"DAGManJobId == {status['dagman_id']} && JobStatus == 5",
                                    ["DAGNodeName", "HoldReasonCode", "HoldReasonSubCode", "HoldReason"])
    assert [(ad["DAGNodeName"], ad["HoldReasonCode"], ad["HoldReasonSubCode"]) for ad in held] == [("Job2", 3, 13)]
    assert held[0]["HoldReason"] == "Held by the crabtui failure plan (hold code 13)"
    two = {j["id"]: j for j in user.wait(name, "COMPLETED")["jobs"]}["2"]
    assert two["state"] == "finished" and two["restarts"] == 1 and attempts(two)[-1][1:] == (0, "ok"), two


def _postjobs_waiting_for(lock: Path) -> dict[str, int]:
    """The pool's PostJobs blocked in flock() on ``lock`` (/proc/locks' ``->`` lines), by job id
    (the POST script's argument before the task directory)."""
    inode, found = lock.stat().st_ino, {}
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 6 and fields[1] == "->" and fields[6].rsplit(":", 1)[-1] == str(inode):
            args = Path(f"/proc/{fields[5]}/cmdline").read_bytes().split(b"\0")
            found[args[-3].decode()] = int(fields[5])
    return found


def test_a_postjob_killed_on_its_nodes_last_retry_on_the_pool(user):
    """kill -9 of a PostJob run by the pool's DAGMan, with no DAG retry left (numAutomJobRetries =
    1): the node fails and the DAG ends with the attempt undecided.  The next task command takes
    the decision (the job succeeded: finished, its words in no command's output), and the rescue
    DAG of a resubmit of the job that failed for good skips it: every job ran once, but the failed one."""
    import fcntl

    from engine.crab.ap.sites import _statistics_path

    user.state.mkdir(mode=0o700)
    os.chown(user.state, user.uid, user.uid)
    user.write("state/taskworker.toml", "[TaskWorker]\nnumAutomJobRetries = 1\n")
    name = user.submit("crab.toml", config("lastpost", plan='{job = "2", attempt = 1, exitCode = 8006}', total=40,
                                           sites=STEADY_SITES))
    task_dir = Path(user.status(name)["task_dir"])
    lock = Path(_statistics_path(str(task_dir)) + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    os.fchown(fd, user.uid, user.uid)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the PostJobs wait here, before they record their decision
        deadline = time.monotonic() + 300
        while not (blocked := {job: pid for job, pid in _postjobs_waiting_for(lock).items() if job != "2"}):
            assert time.monotonic() < deadline, "no PostJob of a job that succeeded blocked on the statistics lock"
            time.sleep(0.1)
        job, pid = min(blocked.items())
        os.kill(pid, signal.SIGKILL)
    finally:
        os.close(fd)

    failed = user.wait(name, "FAILED")
    assert f"POST Script of node Job{job} died on signal 9" in (task_dir / "RunJobs.dag.dagman.out").read_text()
    assert {j["id"]: j["state"] for j in failed["jobs"]} == {"1": "finished", "2": "failed", "3": "finished",
                                                             "4": "finished"}
    user.ok("task", "resubmit", "lastpost")
    done = user.wait(name, "COMPLETED")
    assert all(j["state"] == "finished" for j in done["jobs"])
    ads = htcondor2.Schedd().history(f'JobUniverse == 5 && Iwd == "{task_dir}"', ["DAGNodeName"])
    assert sorted(ad["DAGNodeName"] for ad in ads) == ["Job1", "Job2", "Job2", "Job3", "Job4"]
    assert f"PRE_SKIP return value 5 indicates we are done (successfully) with node Job{job}" in \
        (task_dir / "RunJobs.dag.dagman.out").read_text()


def test_a_command_the_schedd_could_not_hear_is_carried_out_once_it_answers(user):
    """A kill taken up (the command killed there: CRABTUI_CRASH_POINT), then the next command run
    while no schedd can be reached (a schedd restarting, a collector down): it says why in one line
    and leaves the kill pending, not KILLFAILED; the command after it, with the pool answering,
    kills the task."""
    name = user.submit("crab.toml", config("unheard", scale=5, total=40, sites=STEADY_SITES))
    assert user.run("task", "kill", "unheard", crash_at="taskworker:kill:queued").returncode == -9
    live = user.env["CONDOR_CONFIG"]
    user.env["CONDOR_CONFIG"] = str(user.write("dead.config", Path(live).read_text() + "COLLECTOR_HOST = 127.0.0.1:9\nSCHEDD_ADDRESS_FILE = /nonexistent\n"))
    try:
        unheard = user.run("task", "list")
    finally:
        user.env["CONDOR_CONFIG"] = live
    assert unheard.returncode == 1 and "cannot locate the schedd" in unheard.stderr, unheard.stderr
    assert len(unheard.stderr.strip().splitlines()) == 1, unheard.stderr
    status = user.status(name)
    assert status["status"] == "KILLED", status["message"]
    dagman = htcondor2.Schedd().query(f"ClusterId == {status['dagman_id']}", ["JobStatus"])
    assert all(ad["JobStatus"] == htcondor2.JobStatus.REMOVED for ad in dagman), dagman  # removed, or gone already


def test_task_list_with_the_pool_down_lists_the_table_when_nothing_is_pending(user):
    """The pool stopped under a running task (its schedd or collector down): task list still
    lists the task table, as the README says, and says in one line that the tasks' states are
    as last seen.  It printed no table, only the schedd's error, and exited 1."""
    name = user.submit("crab.toml", config("downlist", scale=5, total=40, sites=STEADY_SITES))
    live = user.env["CONDOR_CONFIG"]
    user.env["CONDOR_CONFIG"] = str(user.write("dead.config", Path(live).read_text() + "COLLECTOR_HOST = 127.0.0.1:9\nSCHEDD_ADDRESS_FILE = /nonexistent\n"))
    try:
        listed = user.run("task", "list")
    finally:
        user.env["CONDOR_CONFIG"] = live
    assert listed.returncode == 0, listed.stderr
    row = next(line.split() for line in listed.stdout.splitlines() if line.startswith(name))
    assert row[1:3] == ["SUBMITTED", "SUBMIT"], listed.stdout
    (said,) = listed.stderr.strip().splitlines()
    assert said.startswith("Warning: ") and "cannot locate the schedd" in said and "as last seen" in said, said
    user.ok("task", "kill", "downlist")


def test_a_task_no_slot_can_hold_is_refused_naming_the_pools_own_slots(user):
    """On a pool the sites and slots are the startds' (their GLIDEIN_CMSSite): the refusal says how
    to list them, not how to edit the embedded pool's pool.toml, which a pool does not read."""
    user.write("crabConfig.py", f"""\
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'manycores'
config.JobType.psetName = 'pset.py'
config.JobType.numCores = 16
config.Data.inputDataset = '{MC}'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Site.storageSite = 'T2_XX_Local'
""")
    refused = user.run("task", "submit", "-c", "crabConfig.py")
    assert refused.returncode == 1, refused.stdout
    assert "with slots for jobs of 16 core(s) and 2000 MB at none" in refused.stderr, refused.stderr
    assert "'condor_status -af Name GLIDEIN_CMSSite Cpus Memory' lists each slot's site" in refused.stderr
    assert "pool.toml" not in refused.stderr
