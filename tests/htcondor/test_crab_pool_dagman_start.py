"""A CRAB task whose DAGMan the pool cannot start: as the README's commands are typed by someone
who runs crabtui as root on the test pool's host (whose jobs the pool runs as its job user, who
cannot enter root's state directory), and what the pool itself does with such a DAGMan job."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import htcondor2
import pytest

from crabtui.app import CrabApp
from crabtui.snapshots import Backend
from engine.schedd.scheduler_start import why_waiting
from engine.state import StateDir
from installed import CRABTUI
from pool_user import PoolUser
from ui.ui_tasks import open_task, wait_for

pytestmark = pytest.mark.htcondor

ANALYSIS = """\
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'ZMuMu_2018A'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'zmumu_cfg.py'
config.JobType.outputFiles = ['zmumu.root']

config.Data.inputDataset = '/SingleMuon/Run2018A-UL2018_MiniAODv2-v3/MINIAOD'
config.Data.lumiMask = 'golden.json'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 100
config.Data.totalUnits = 300
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CERN'
config.Debug.timeScale = 500
"""
PSET = """\
import FWCore.ParameterSet.Config as cms
process = cms.Process('ZMUMU')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
"""
GOLDEN = (Path(__file__).parents[1] / "crab/corpus/singlemuon_2018a_golden_beside/golden.json").read_text()
"""The 2018 certification JSON, as an analysis keeps it beside its crabConfig.py."""


@pytest.fixture
def root_user(htcondor_pool):
    """An analysis directory and a state directory of root's own, and the crabtui root runs."""
    home = Path(tempfile.mkdtemp(prefix="rootuser-", dir="/tmp"))
    home.chmod(0o755)  # as a home directory is; crabtui makes the state directory in it private
    (home / "zmumu").mkdir()
    (home / "zmumu" / "crabConfig.py").write_text(ANALYSIS)
    (home / "zmumu" / "zmumu_cfg.py").write_text(PSET)
    (home / "zmumu" / "golden.json").write_text(GOLDEN)
    state = home / "state"

    def crabtui(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([CRABTUI, "--backend", "htcondor", *args], cwd=home / "zmumu", capture_output=True,
                              text=True, timeout=300, env={**os.environ, "CRABTUI_STATE_DIR": str(state)})

    yield crabtui, state
    htcondor2.Schedd().act(htcondor2.JobAction.Remove, f'regexp("^{state}/", Iwd)')
    shutil.rmtree(home, ignore_errors=True)


def test_a_task_submitted_as_root_is_refused_with_why(root_user):
    """The pool runs the DAGMan as its job user, who cannot enter root's state directory: the
    submit says so in one line and exits 1, nothing waits in the pool's queue, and task status and
    task list give the same reason."""
    crabtui, state = root_user
    submitted = crabtui("task", "submit")
    assert submitted.returncode == 1, submitted.stdout + submitted.stderr
    error = submitted.stderr.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("ERROR: task "), submitted.stderr
    user = os.environ["CRABTUI_TESTPOOL_USER"]
    why = f"the pool runs the task's DAGMan as {user}, who cannot enter {state} (drwx------ root); run crabtui as {user}"
    assert "is SUBMITFAILED: " + why in error[0] and "Traceback" not in submitted.stderr
    assert not htcondor2.Schedd().query(f'regexp("^{state}/", Iwd)', ["ClusterId"])

    status = crabtui("task", "status")
    assert status.returncode == 0, status.stderr
    assert "Status on the CRAB server:\tSUBMITFAILED" in status.stdout
    assert f"Failure message from server:\t{why}" in status.stdout
    listed = crabtui("task", "list")
    assert "SUBMITFAILED" in listed.stdout and why in listed.stdout


def test_the_pool_leaves_a_dagman_it_cannot_start_idle_and_says_why_only_in_its_log(htcondor_pool):
    """What the pool tells of a scheduler-universe job in a directory its Owner cannot enter (the
    DAGMan job of a task an older crabtui queued from root's state directory): 23.9.6 leaves it
    idle with no reason in its ad, and logs the failed chdir at every try; crabtui's reason comes
    from that log where it can read it, else from the directory's owner and mode."""
    directory = Path(tempfile.mkdtemp(prefix="rootonly-", dir="/tmp"))  # 0700 root
    schedd = htcondor2.Schedd()
    submit = htcondor2.Submit({"universe": "scheduler", "executable": "/bin/sleep", "arguments": "60",
                               "initialdir": str(directory), "log": "sleep.log"})
    cluster = schedd.submit(submit).cluster()
    log = Path(os.environ["CRABTUI_TESTPOOL_ROOT"]) / "var/log/condor/SchedLog"
    try:
        deadline = time.monotonic() + 60
        while f"chdir({directory}) failed" not in log.read_text(errors="replace")[-200000:]:
            assert time.monotonic() < deadline, "the schedd never tried to start the job"
            time.sleep(0.5)
        ad = schedd.query(f"ClusterId == {cluster}", ["ClusterId", "JobStatus", "HoldReason", "Owner", "Iwd",
                                                      "NumJobStarts"])[0]
        assert ad["JobStatus"] == 1 and "HoldReason" not in ad and not ad.get("NumJobStarts")
        user = ad["Owner"]
        assert why_waiting(ad, str(log)) == (
            f"the schedd cannot start DAGMan job {cluster} as {user}: chdir({directory}) failed: Permission denied "
            f"(its log, {log}); run crabtui as {user}, the user the pool runs your jobs as, with a state "
            f"directory of {user}'s")
        assert why_waiting(ad) == (
            f"the schedd cannot start DAGMan job {cluster}: it runs it as {user}, who cannot write {directory} "
            f"(drwx------ root); run crabtui as {user}, the user the pool runs your jobs as, with a state "
            f"directory of {user}'s")
        held = subprocess.run([CRABTUI, "--backend", "htcondor", "hold", str(cluster)], capture_output=True, text=True,
                              timeout=60)
        assert held.returncode == 0, held.stderr
        deadline = time.monotonic() + 30
        while (ad := schedd.query(f"ClusterId == {cluster}", ["ClusterId", "JobStatus", "HoldReason"])[0])[
                "JobStatus"] != 5:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert why_waiting(ad) == f"DAGMan job {cluster} is held: {ad['HoldReason']}" and ad["HoldReason"]
    finally:
        schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {cluster}")
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def user(htcondor_pool):
    user = PoolUser(htcondor_pool)
    yield user
    htcondor2.Schedd().act(htcondor2.JobAction.Remove, f'Iwd =?= "{user.state}" || regexp("^{user.state}/", Iwd)')
    shutil.rmtree(user.home, ignore_errors=True)


def test_status_says_the_tasks_dagman_is_held(user):
    """crab status as a user reads it while the task's DAGMan job is held on the pool (crabtui
    hold of its id): the warning names the hold reason, --json carries it, and it goes with the
    release."""
    (user.home / "zmumu").mkdir()
    os.chown(user.home / "zmumu", user.uid, user.uid)
    for name, text in (("crabConfig.py", ANALYSIS), ("zmumu_cfg.py", PSET), ("golden.json", GOLDEN)):
        user.write(f"zmumu/{name}", text)
    out = subprocess.run(["setpriv", f"--reuid={user.uid}", f"--regid={user.uid}", "--clear-groups", CRABTUI,
                          "--state-dir", str(user.state), "--backend", "htcondor", "task", "submit"],
                         cwd=user.home / "zmumu", env=user.env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    status = user.status("ZMuMu_2018A")
    dagman = status["dagman_id"]
    assert status["dagman_waiting"] is None
    user.ok("hold", str(dagman))
    status = user.status("ZMuMu_2018A")
    assert status["dagman_waiting"].startswith(f"DAGMan job {dagman} is held: "), status["dagman_waiting"]
    text = user.ok("task", "status", "ZMuMu_2018A")
    assert f"Warning:\t\t\tDAGMan job {dagman} is held: " in text
    held = f"DAGMan job {dagman} is held: {status['dagman_waiting'].split(': ', 1)[1]}"

    async def look(pilot):  # the UI in a terminal of 80x24: where the user looks
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: status["name"] in tasks.items, "the task in the task list", 120)
        await wait_for(pilot, lambda: str(app.screen.query_one("#info").render()).startswith(f"⚠ {held}"[:70]),
                       "the reason on the task list's info line", 60)
        screen = await open_task(pilot, status["name"], timeout=120)
        header = str(screen.query_one("#summary").render())
        assert header.splitlines()[1].startswith(f"⚠ {held}"[:60]), header
        await pilot.press("6")
        await wait_for(pilot, lambda: held in " ".join(screen._status_text.split()), "the reason in the Summary", 60)

    async def main():
        async with CrabApp(Backend(StateDir(str(user.state)), "htcondor"), interval=0.5).run_test(
                size=(80, 24)) as pilot:
            await look(pilot)

    asyncio.run(main())
    user.ok("release", str(dagman))
    assert user.status("ZMuMu_2018A")["dagman_waiting"] is None
    assert json.loads(user.ok("task", "status", "ZMuMu_2018A", "--json"))["status"] in ("SUBMITTED", "COMPLETED")


def test_a_dag_submitted_from_a_directory_dagman_cannot_enter_is_refused(htcondor_pool):
    """The README's diamond DAG submitted from a directory of root's: DAGMan, run as the pool's
    job user, could never start there; dag submit says so in one line and queues nothing."""
    home = Path(tempfile.mkdtemp(prefix="rootdag-", dir="/tmp"))  # 0700 root
    shutil.copytree(Path(__file__).parents[2] / "examples/diamond", home / "diamond")
    try:
        out = subprocess.run([CRABTUI, "--backend", "htcondor", "dag", "submit", "diamond.dag"], cwd=home / "diamond",
                             capture_output=True, text=True, timeout=120)
        user = os.environ["CRABTUI_TESTPOOL_USER"]
        assert out.returncode == 1 and out.stderr == (
            f"ERROR: diamond.dag: the pool runs DAGMan as {user}, who cannot enter {home} (drwx------ root), so it "
            f"would never start; submit the DAG from a directory {user} can write\n"), out.stdout + out.stderr
        assert not htcondor2.Schedd().query(f'regexp("^{home}/", Iwd)', ["ClusterId"])
    finally:
        shutil.rmtree(home, ignore_errors=True)
