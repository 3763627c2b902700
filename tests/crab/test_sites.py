"""Site lists and the automatic site blacklist: CRAB's precedence of the global blacklist and the
user's lists, seed 000's thresholds, the statistics PostJob keeps, PreJob's DESIRED_Sites, what
``task status`` says of every site, and real tasks on a grid with a site where every job fails."""

from __future__ import annotations

import json
import multiprocessing
import re
from pathlib import Path

import pytest

from engine.crab.ap import prejob
from engine.crab.ap.resubmit_record import ResubmitEntry, write_entry
from engine.crab.ap.retry_policy import Attempt, JobState, save_state, state_path
from engine.crab.ap.sites import (SiteListError, SiteLists, SiteStatisticsError, Statistics, Thresholds, attempt_sites,
                                  automatic_conditions, clear_statistics, load_statistics, previous_failure,
                                  read_global_blacklist, record_attempt, site_view, write_data_sites)
from engine.crab.client.config import ConfigError, load_config
from engine.crab.taskworker.dagman_creator import TaskAd, write_task
from engine.crab.taskworker.datasets import Catalogue, user_dir
from engine.crab.taskworker.splitting import split
from crab_tasks import config_text, crabtui, task_status, wait_status, wait_until

CERN, FNAL, LOCAL, PISA = "T2_CH_CERN", "T1_US_FNAL", "T2_XX_Local", "T2_IT_Pisa"
MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"


def attempt(retry: int, site: str | None, code: int | None, action: str | None = "retry") -> Attempt:
    return Attempt(crab_retry=retry, dag_retry=retry, rrn=retry + 1, epoch=0, request_memory_mb=2000,
                   max_runtime_min=1250, site=site, exit_code=code, action=action)


# --- precedence ---------------------------------------------------------------------------------

def test_global_blacklist_beats_the_whitelist_which_beats_the_blacklist():
    lists = SiteLists(whitelist=(CERN, "T2_US_*"), blacklist=(CERN, FNAL), global_blacklist=("T2_US_Nebraska",))
    data = [LOCAL, CERN, FNAL, "T2_US_Nebraska", "T2_US_MIT"]
    assert lists.available(data) == [CERN, "T2_US_MIT"]
    assert lists.reasons("T2_US_Nebraska") == ("global",)
    assert lists.reasons(LOCAL) == ("not_whitelisted",)
    assert lists.reasons(FNAL) == ("not_whitelisted", "blacklisted")
    assert lists.reasons(CERN) == (), "in both user lists: the whitelist wins"
    ignored = SiteLists(whitelist=lists.whitelist, blacklist=lists.blacklist,
                        global_blacklist=lists.global_blacklist, ignore_global_blacklist=True)
    assert ignored.available(data) == [CERN, "T2_US_Nebraska", "T2_US_MIT"]
    only_black = SiteLists(blacklist=("T2_DE_*",), global_blacklist=(PISA,))
    assert only_black.available([LOCAL, "T2_DE_DESY", PISA, CERN]) == [LOCAL, CERN]


def test_warnings_have_crabs_wording():
    lists = SiteLists(whitelist=("T2_US_*", CERN), blacklist=(CERN,), global_blacklist=("T2_US_Nebraska",))
    assert lists.warnings([LOCAL, "T2_US_Nebraska"]) == [
        "The following sites from the user site whitelist are blacklisted by the CRAB server: ['T2_US_Nebraska']. "
        "Since the CRAB server blacklist has precedence, these sites are not considered in the user whitelist.",
        "The following sites appear in both the user site blacklist and whitelist: ['T2_CH_CERN']. Since the "
        "whitelist has precedence, these sites are not considered in the blacklist."]
    assert SiteLists(whitelist=("T2_US_Nebraska",), global_blacklist=("T2_US_Nebraska",),
                     ignore_global_blacklist=True).warnings([]) == []


def test_the_global_blacklist_file(tmp_path):
    path = tmp_path / "blacklistedSites.txt"
    assert read_global_blacklist(str(path)) == () and read_global_blacklist(None) == ()
    path.write_text('["T2_US_Nebraska", "T2_DE_DESY"]')
    assert read_global_blacklist(str(path)) == ("T2_US_Nebraska", "T2_DE_DESY")
    path.write_text('["T2_US_Nebraska",\n  T2_DE_DESY]')
    with pytest.raises(SiteListError, match=rf"^{re.escape(str(path))}:2: invalid JSON"):
        read_global_blacklist(str(path))
    path.write_text('{"T2_US_Nebraska": "not_usable"}')
    with pytest.raises(SiteListError, match="must be a JSON list of site names"):
        read_global_blacklist(str(path))


# --- the automatic blacklist -----------------------------------------------------------------------

def test_every_condition_of_seed_000_is_needed():
    seed = Thresholds()
    assert (seed.completed_jobs, seed.successful_jobs, seed.site_success_rate, seed.site_failures) == (10, 5, 0.5, 5)
    armed = Statistics(0, 11, 5, {CERN: (1, 5), LOCAL: (4, 1)})
    assert attempt_sites([CERN, LOCAL], CERN, armed, seed)[0] == [LOCAL]
    for counts, why in [
            (Statistics(0, 10, 5, {CERN: (1, 5), LOCAL: (4, 0)}), "10 completed jobs is not more than 10"),
            (Statistics(0, 11, 4, {CERN: (0, 5), LOCAL: (4, 2)}), "4 successful jobs is fewer than 5"),
            (Statistics(0, 11, 5, {CERN: (5, 5), LOCAL: (0, 1)}), "a success rate of 50% is not below 50%"),
            (Statistics(0, 11, 5, {CERN: (1, 4), LOCAL: (4, 2)}), "4 failures are fewer than 5")]:
        assert attempt_sites([CERN, LOCAL], CERN, counts, seed) == ([CERN, LOCAL], ""), why
    assert attempt_sites([CERN, LOCAL], LOCAL, armed, seed)[0] == [CERN, LOCAL], "the previous failure was elsewhere"
    assert attempt_sites([CERN, LOCAL], None, armed, seed)[0] == [CERN, LOCAL], "no previous failure"
    assert attempt_sites([CERN], CERN, armed, seed)[0] == [CERN], "no other site could run the job"
    sites, why = attempt_sites([CERN, LOCAL, PISA], CERN, armed, seed)
    assert sites == [LOCAL, PISA]
    assert why == ("T2_CH_CERN is automatically blacklisted for this attempt, where the previous one failed: 11 "
                   "completed jobs in the task > 10; 5 successful >= 5; site success rate 17% < 50%; 5 failed here >= 5")
    demo = Thresholds(completed_jobs=2, successful_jobs=1, site_success_rate=0.5, site_failures=2)
    assert attempt_sites([CERN, LOCAL], CERN, Statistics(0, 3, 1, {CERN: (0, 2), LOCAL: (1, 0)}), demo)[0] == [LOCAL]
    assert automatic_conditions(PISA, armed, seed)["site_success_rate"] == {"value": None, "threshold": 0.5,
                                                                            "met": False}


def test_the_previous_failure_is_the_latest_closed_attempt():
    assert previous_failure(JobState("1")) is None
    failed = JobState("1", crab_retry=1, attempts=(attempt(0, CERN, 8001), attempt(1, None, None, None)))
    assert previous_failure(failed) == CERN, "the open attempt PreJob just began does not count"
    ok = JobState("1", crab_retry=2, attempts=(attempt(0, CERN, 8001), attempt(1, LOCAL, 0, "ok")))
    assert previous_failure(ok) is None
    nowhere = JobState("1", crab_retry=1, attempts=(attempt(0, None, 50115),))
    assert previous_failure(nowhere) is None


# --- the statistics file -------------------------------------------------------------------------

def _record_many(task_dir: str, job: str) -> None:
    for retry in range(10):
        record_attempt(task_dir, job, attempt(retry, CERN if retry % 2 else LOCAL, retry % 2, "retry"))


def test_postjobs_running_at_once_lose_no_count(tmp_path):
    processes = [multiprocessing.Process(target=_record_many, args=(str(tmp_path), str(job))) for job in range(8)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(60)
    assert [p.exitcode for p in processes] == [0] * 8
    counts = load_statistics(str(tmp_path))
    assert (counts.completed, counts.successful) == (80, 40)
    assert counts.by_site == {LOCAL: (40, 0), CERN: (0, 40)}


def test_an_attempt_counts_once_and_resubmit_clears_the_counts(tmp_path):
    task_dir = str(tmp_path)
    record_attempt(task_dir, "3", attempt(0, CERN, 8001))
    record_attempt(task_dir, "3", attempt(0, CERN, 8001))  # PostJob run again for the same attempt
    record_attempt(task_dir, "3", attempt(1, None, None))  # ran nowhere: nothing to count
    record_attempt(task_dir, "4", attempt(0, LOCAL, 0, "ok"))
    assert load_statistics(task_dir) == Statistics(0, 2, 1, {CERN: (0, 1), LOCAL: (1, 0)})
    data = json.loads((tmp_path / "site_statistics.json").read_text())
    assert data == {"schema": "crabtui.site_statistics/1", "epoch": 0,
                    "sites": {CERN: {"succeeded": [], "failed": ["3.0"]}, LOCAL: {"succeeded": ["4.0"], "failed": []}}}
    record_attempt(task_dir, "3", attempt(0, LOCAL, 0, "ok"))  # another outcome of the same attempt replaces it
    assert load_statistics(task_dir) == Statistics(0, 2, 2, {CERN: (0, 0), LOCAL: (2, 0)})
    clear_statistics(task_dir, 1)
    record_attempt(task_dir, "3", attempt(1, LOCAL, 0, "ok"))
    clear_statistics(task_dir, 1)  # the same resubmit carried out again keeps what came since
    assert load_statistics(task_dir) == Statistics(1, 1, 1, {LOCAL: (1, 0)})
    (tmp_path / "site_statistics.json").write_text('{"schema": "crabtui.site_statistics/1", "epoch": 1, "sites": []}')
    with pytest.raises(SiteStatisticsError, match=r"site_statistics.json: field sites must be an object"):
        load_statistics(task_dir)


# --- PreJob and the status view on a task directory ----------------------------------------------

@pytest.fixture
def task_dir(tmp_path) -> Path:
    dataset = Catalogue(None).load(MC)
    jobs = split(dataset, algorithm="FileBased", units_per_job=5)
    ad = TaskAd(name="240101_000000:alice_crab_sites", user="alice", dataset=MC, max_memory_mb=2000,
                max_runtime_min=1250, num_cores=1, priority=10, site_whitelist=(), site_blacklist=(PISA,),
                storage_site=LOCAL, time_scale=100.0, max_retries=3,
                global_blacklist=str(tmp_path / "blacklistedSites.txt"),
                automatic_blacklist={"completed_jobs": 2, "successful_jobs": 1, "site_success_rate": 0.5,
                                     "site_failures": 2})
    write_task(str(tmp_path / "task"), ad, dataset, jobs)
    (tmp_path / "task" / "job_sites.1.json").write_text(json.dumps([LOCAL, CERN, FNAL, PISA]))
    write_data_sites(str(tmp_path / "task"), [LOCAL, CERN, FNAL, PISA, *dataset.sites])
    return tmp_path / "task"


def desired_sites(task_dir: Path, job: str = "1") -> list[str]:
    text = (task_dir / f"Job.{job}.submit").read_text()
    return re.search(r'^My\.DESIRED_Sites = "(.*)"$', text, re.M).group(1).split(",")


def test_prejob_reads_the_global_blacklist_at_every_attempt(task_dir, capsys):
    assert prejob.main(["0", "1", str(task_dir)]) == 0
    assert desired_sites(task_dir) == [FNAL, CERN, LOCAL], "the user's blacklist keeps T2_IT_Pisa out"
    (task_dir.parent / "blacklistedSites.txt").write_text(f'["{CERN}", ')
    assert prejob.main(["0", "1", str(task_dir)]) == 4, "an unreadable global blacklist: wait, and try again"
    assert "blacklistedSites.txt:1: invalid JSON" in capsys.readouterr().err
    (task_dir.parent / "blacklistedSites.txt").write_text(f'["{CERN}", "{FNAL}"]')
    assert prejob.main(["0", "1", str(task_dir)]) == 0
    assert desired_sites(task_dir) == [LOCAL]
    task = json.loads((task_dir / "task.json").read_text())
    (task_dir / "task.json").write_text(json.dumps({**task, "ignore_global_blacklist": True}))
    assert prejob.main(["0", "1", str(task_dir)]) == 0
    assert desired_sites(task_dir) == [FNAL, CERN, LOCAL]


def test_prejob_leaves_out_the_site_the_automatic_blacklist_takes(task_dir, capsys):
    save_state(state_path(str(task_dir), "1"), JobState("1", crab_retry=1, rrn=1, attempts=(attempt(0, CERN, 8001),)))
    record_attempt(str(task_dir), "1", attempt(0, CERN, 8001))
    record_attempt(str(task_dir), "2", attempt(0, CERN, 8001))
    assert prejob.main(["1", "1", str(task_dir)]) == 0
    assert desired_sites(task_dir) == [FNAL, CERN, LOCAL], "2 completed jobs, none successful: not yet"
    record_attempt(str(task_dir), "3", attempt(0, LOCAL, 0, "ok"))
    save_state(state_path(str(task_dir), "1"), JobState("1", crab_retry=1, rrn=1, attempts=(attempt(0, CERN, 8001),)))
    assert prejob.main(["1", "1", str(task_dir)]) == 0
    assert desired_sites(task_dir) == [FNAL, LOCAL]
    assert "job 1: T2_CH_CERN is automatically blacklisted for this attempt" in capsys.readouterr().out


def test_the_status_view_says_why_for_every_site(task_dir):
    (task_dir.parent / "blacklistedSites.txt").write_text(f'["{FNAL}"]')
    for job, site, code in (("1", CERN, 8001), ("2", CERN, 8001), ("3", LOCAL, 0), ("4", LOCAL, 8001)):
        record_attempt(str(task_dir), job, attempt(0, site, code, "ok" if code == 0 else "retry"))
    task = json.loads((task_dir / "task.json").read_text())
    view = site_view(str(task_dir), task)
    by_site = {s.site: s for s in view.sites}
    assert set(by_site) >= {LOCAL, CERN, FNAL, PISA}
    assert by_site[FNAL].reasons == ("global",) and by_site[FNAL].label == "globally blacklisted"
    assert by_site[PISA].reasons == ("blacklisted",) and by_site[PISA].detail == "in the site blacklist"
    assert by_site[CERN].reasons == ("automatic",) and (by_site[CERN].successful, by_site[CERN].failed) == (0, 2)
    assert by_site[CERN].detail == ("automatically blacklisted for the jobs whose previous attempt failed here, if "
                                    "another site can run them: 4 completed jobs in the task > 2; 1 successful >= 1; "
                                    "site success rate 0% < 50%; 2 failed here >= 2")
    assert by_site[LOCAL].usable and by_site[LOCAL].label == "no"
    assert by_site[LOCAL].detail == "usable; not automatically blacklisted: site success rate 50% not < 50%; 1 failed here < 2"
    assert by_site[LOCAL].as_json()["automatic"]["site_failures"] == {"value": 1, "threshold": 2, "met": False}
    assert view.as_json()["thresholds"] == {"completed_jobs": 2, "successful_jobs": 1, "site_success_rate": 0.5,
                                            "site_failures": 2}
    write_entry(str(task_dir), ResubmitEntry(1, ("1",), 2000, 1250, (CERN,), (), 10, 0.0))
    clear_statistics(str(task_dir), 1)
    view = site_view(str(task_dir), task)
    assert view.lists_from == "resubmit epoch 1" and view.statistics.completed == 0
    assert {s.site: s.reasons for s in view.sites}[LOCAL] == ("not_whitelisted",)
    assert {s.site: s.reasons for s in view.sites}[CERN] == ()
    (task_dir.parent / "blacklistedSites.txt").write_text("[")
    assert any("blacklistedSites.txt:1: invalid JSON" in w for w in site_view(str(task_dir), task).warnings)


# --- the configuration ----------------------------------------------------------------------------

TOML = """[General]
requestName = "sites"
[JobType]
psetName = "pset.py"
[Data]
inputDataset = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
splitting = "FileBased"
unitsPerJob = 5
[Site]
storageSite = "T2_XX_Local"
ignoreGlobalBlacklist = true
[Debug]
automaticBlacklist = {completedJobs = 4, siteSuccessRate = 0.25}
"""
PY = """from CRABClient.UserUtilities import config
config = config()
config.General.requestName = "sites"
config.JobType.psetName = "pset.py"
config.Data.inputDataset = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
config.Data.splitting = "FileBased"
config.Data.unitsPerJob = 5
config.Site.storageSite = "T2_XX_Local"
config.Site.ignoreGlobalBlacklist = True
config.Debug.automaticBlacklist = {"completedJobs": 4, "siteSuccessRate": 0.25}
"""


def test_the_config_sets_the_thresholds_and_ignoreGlobalBlacklist(tmp_path):
    (tmp_path / "crab.toml").write_text(TOML)
    (tmp_path / "crabConfig.py").write_text(PY)
    for name in ("crab.toml", "crabConfig.py"):
        cfg = load_config(str(tmp_path / name))
        assert cfg.ignore_global_blacklist is True
        assert cfg.automatic_blacklist == Thresholds(completed_jobs=4, successful_jobs=5, site_success_rate=0.25,
                                                     site_failures=5)
    (tmp_path / "bad.toml").write_text(TOML.replace("completedJobs = 4", "completedJob = 4"))
    with pytest.raises(ConfigError, match=r"bad.toml: .*Debug.automaticBlacklist: key 'completedJob' is not known. "
                                          r"Did you mean completedJobs\?"):
        load_config(str(tmp_path / "bad.toml"))
    (tmp_path / "bad.toml").write_text(TOML.replace("0.25", "1.5"))
    with pytest.raises(ConfigError, match="siteSuccessRate must be a number from 0 to 1"):
        load_config(str(tmp_path / "bad.toml"))


# --- real tasks ---------------------------------------------------------------------------------

BAD_GRID = f"""\
[[site]]
name = "{CERN}"   # first in the pool: free slots there are matched first; every attempt fails with 8001
slots = 8
memory = 8000
failures = [{{probability = 1.0, exitCode = 8001}}]

[[site]]
name = "{LOCAL}"
slots = 8
memory = 8000
"""
DATASET = "/Blacklist/Sites-v1/USER"
THRESHOLDS = "automaticBlacklist = {completedJobs = 7, successfulJobs = 3, siteSuccessRate = 0.5, siteFailures = 5}"


def bad_grid(state, files: int) -> None:
    """The pool: T2_CH_CERN, where every job fails, and T2_XX_Local; a dataset of ``files`` files of
    50 events hosted at both, one job per file."""
    Path(state.pool_config).write_text(BAD_GRID)
    Path(user_dir(state)).mkdir(exist_ok=True)
    blocks = [{"sites": [CERN, LOCAL], "files": [
        {"lfn": f"/store/user/sites/f{i}.root", "size": 1000000, "lumis": [[1, i, 50]]} for i in range(1, files + 1)]}]
    Path(user_dir(state), "sites.json").write_text(json.dumps({"name": DATASET, "blocks": blocks}))


def sites_of(status: dict) -> dict[str, dict]:
    return {s["site"]: s for s in status["sites"]}


def test_a_failing_site_is_blacklisted_automatically_and_resubmit_clears_its_counts(tmp_path, state):
    bad_grid(state, 8)
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomJobRetries = 3\n")
    # Every job starts at T2_CH_CERN; jobs 1-3 are made to succeed there, the others fail: 8 completed,
    # 3 successful, 5 failed at a 3/8 success rate crosses every threshold once the first attempts end.
    plan = ", ".join([f'{{job = "{j}", attempt = 1, exitCode = 0}}' for j in "123"]
                     + ['{job = "8", attempt = "*", exitCode = 1}'])
    (tmp_path / "crab.toml").write_text(config_text("auto", scale=1000, plan=plan, dataset=DATASET, units=1,
                                                    site="", debug=THRESHOLDS))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "auto", tmp_path, "FAILED", timeout=180)
    jobs = {j["id"]: j for j in status["jobs"]}
    assert [j["state"] for j in jobs.values()] == ["finished"] * 7 + ["failed"]
    for job in "4567":  # without the automatic blacklist every retry would go back to T2_CH_CERN and fail
        sites = [a["site"] for a in jobs[job]["attempts"]]
        assert sites[0] == CERN and sites[-1] == LOCAL and jobs[job]["attempts"][-1]["exit_code"] == 0, sites
    assert all(a["exit_code"] != 0 for j in "45678" for a in jobs[j]["attempts"] if a["site"] == CERN)
    cern = sites_of(status)[CERN]
    assert cern["reasons"] == ["automatic"] and not cern["usable"]
    assert cern["successful"] == 3 and cern["failed"] >= 5
    assert all(c["met"] for c in cern["automatic"].values())
    assert sites_of(status)[LOCAL]["reasons"] == [] and "usable" in sites_of(status)[LOCAL]["detail"]
    summary = crabtui(state, "task", "status", "auto", "--summary", cwd=tmp_path).stdout
    assert re.search(r"^T2_CH_CERN .* automatic$", summary, re.M), summary
    assert "Site blacklisting:" in summary

    assert crabtui(state, "task", "resubmit", "auto", cwd=tmp_path).returncode == 0
    wait_status(state, "auto", tmp_path, "SUBMITTED")
    again = wait_status(state, "auto", tmp_path, "FAILED", timeout=180)
    job8 = [j for j in again["jobs"] if j["id"] == "8"][0]
    assert len(job8["attempts"]) == 6, "three more executions in the resubmit's epoch"
    policy = again["site_policy"]
    assert (policy["completed_jobs"], policy["successful_jobs"], policy["statistics_epoch"]) == (3, 0, 1), \
        "only the resubmitted attempts count"
    assert sites_of(again)[CERN]["reasons"] == []


def test_the_global_blacklist_keeps_jobs_away_and_the_whitelist_cannot_bring_them_back(tmp_path, state):
    bad_grid(state, 3)
    Path(state.global_blacklist).write_text(json.dumps([CERN]))
    (tmp_path / "crab.toml").write_text(config_text("banned", scale=100, dataset=DATASET, units=1,
                                                    site=f'whitelist = ["{CERN}", "{LOCAL}"]', debug=THRESHOLDS))
    submitted = crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    warning = ("The following sites from the user site whitelist are blacklisted by the CRAB server: ['T2_CH_CERN']. "
               "Since the CRAB server blacklist has precedence, these sites are not considered in the user whitelist.")
    assert f"Warning: {warning}" in submitted.stdout
    status = wait_status(state, "banned", tmp_path, "COMPLETED", timeout=120)
    assert [a["site"] for j in status["jobs"] for a in j["attempts"]] == [LOCAL] * 3
    assert sites_of(status)[CERN]["reasons"] == ["global"]
    assert status["site_policy"]["global_blacklist"] == [CERN] and status["site_policy"]["warnings"] == [warning]
    text = crabtui(state, "task", "status", "banned", cwd=tmp_path).stdout
    assert f"Warning:\t\t\t{warning}" in text
    assert task_status(state, "banned", tmp_path)["sites"] == status["sites"]


# --- a site to avoid, on a pool that has no other ---------------------------------------------------

@pytest.fixture
def one_site_state():
    """A state directory with no pool file: the embedded pool is this machine, one site (T2_XX_Local)."""
    import shutil
    import tempfile

    from engine.schedd.local.client import LocalScheddClient
    from engine.state import StateDir

    state = StateDir(tempfile.mkdtemp(prefix="crabone-", dir="/tmp"))
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def test_an_8021_retry_keeps_the_only_site_the_pool_has(tmp_path, one_site_state):
    """The MC dataset is at T2_XX_Local, T2_CH_CERN and T2_DE_DESY; the default pool has only the
    first.  The retry of an 8021 (FileReadError: try another site) stays there, since no other
    available site remains, instead of waiting for ever for a site the pool does not have."""
    (tmp_path / "crab.toml").write_text(config_text("onesite", scale=2000, site="",
                                                    plan='{job = "2", attempt = 1, exitCode = 8021}'))
    assert crabtui(one_site_state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(one_site_state, "onesite", tmp_path, "COMPLETED", timeout=60)
    two = next(j for j in status["jobs"] if j["id"] == "2")
    assert [(a["site"], a["exit_code"]) for a in two["attempts"]] == [(LOCAL, 8021), (LOCAL, 0)]
    assert json.loads((Path(status["task_dir"]) / "task.json").read_text())["pool_sites"] == [LOCAL]


def test_another_site_is_chosen_only_if_the_pool_has_it():
    from engine.crab.ap.retry_policy import choose_sites

    assert choose_sites([LOCAL, CERN], [LOCAL]) == [CERN], "CRAB's rule, when the pool is not known"
    assert choose_sites([LOCAL, CERN], [LOCAL], pool=[LOCAL]) == [CERN, LOCAL]
    assert choose_sites([LOCAL, CERN, FNAL], [LOCAL], pool=[LOCAL, FNAL]) == [FNAL, CERN]
    stats = Statistics(completed=20, successful=10, by_site={CERN: (0, 10)})
    assert attempt_sites([LOCAL, CERN], CERN, stats, Thresholds())[0] == [LOCAL]
    assert attempt_sites([LOCAL, CERN], CERN, stats, Thresholds(), pool=[CERN])[0] == [LOCAL, CERN], \
        "the automatic blacklist keeps a failing site that is the pool's only one"


SMALL_SLOTS_POOL = f"""\
[[site]]
name = "{CERN}"
slots = 2
memory = 8000
[[site]]
name = "{LOCAL}"
slots = 2
memory = 1500
"""


def test_a_resubmit_with_less_memory_opens_the_small_sites_to_its_jobs_only(tmp_path, state):
    """``task resubmit --maxmemory 1000`` of job 2 lets job 2 run at T2_XX_Local, whose slots have
    1500 MB; job 1, retried after an 8021 in the same running DAG with the task's 2000 MB, still
    counts only T2_CH_CERN as the pool's, so it stays there rather than wait for ever for a slot
    at T2_XX_Local that cannot hold it."""
    Path(state.pool_config).write_text(SMALL_SLOTS_POOL)
    runs, gate = tmp_path / "runs.txt", tmp_path / "gate"
    (tmp_path / "run.sh").write_text(f'#!/bin/sh\necho "$1" >> {runs}\n'
                                     f'if [ "$1" = 1 ]; then while [ ! -e {gate} ]; do sleep 0.1; done; fi\n')
    (tmp_path / "run.sh").chmod(0o755)
    plan = '{job = "1", attempt = 1, exitCode = 8021}, {job = "2", attempt = 1, exitCode = 8006}'
    (tmp_path / "crab.toml").write_text(config_text("smallslots", scale=100, plan=plan).replace(
        'psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0

    def two_failed():
        status = task_status(state, "smallslots", tmp_path)
        jobs = {j["id"]: j["state"] for j in status["jobs"]}
        return jobs == {"1": "running", "2": "failed"} and status

    wait_until("job 2 failed for good while job 1 runs", two_failed)
    resubmitted = crabtui(state, "task", "resubmit", "smallslots", "--jobids", "2", "--maxmemory", "1000", cwd=tmp_path)
    assert resubmitted.returncode == 0, resubmitted.stderr
    wait_until("job 2 resubmitted", lambda: len({j["id"]: j for j in task_status(state, "smallslots", tmp_path)[
        "jobs"]}["2"]["attempts"]) == 2)
    gate.touch()
    done = wait_status(state, "smallslots", tmp_path, "COMPLETED", timeout=120)
    jobs = {j["id"]: j for j in done["jobs"]}
    assert [(a["site"], a["exit_code"]) for a in jobs["1"]["attempts"]] == [(CERN, 8021), (CERN, 0)]
    assert jobs["2"]["attempts"][-1]["request_memory"] == 1000 and jobs["2"]["state"] == "finished"
