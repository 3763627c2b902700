"""``crabtui task report`` as ``crab report``: the figures of the finished jobs, and the lumi files
of the task's results/ directory, from what the jobs really processed."""

from __future__ import annotations

import json
from pathlib import Path

from crab_tasks import crabtui, wait_status

CONFIG = """\
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'zmm_report'
config.General.workArea = 'crab_projects'
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.publication = False
config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']
config.Debug.timeScale = 500
config.Debug.failurePlan = [{'job': '2', 'attempt': '*', 'exitCode': 8006}]
"""


def _lumis(compact: dict) -> set[tuple[int, int]]:
    return {(int(run), lumi) for run, ranges in compact.items() for first, last in ranges
            for lumi in range(first, last + 1)}


def test_crab_report_after_a_task_with_a_failed_job(tmp_path, state):
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(CONFIG)
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    status = wait_status(state, "zmm_report", tmp_path, "FAILED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert jobs["2"]["state"] == "failed" and all(j["state"] == "finished" for i, j in jobs.items() if i != "2")
    shown = crabtui(state, "task", "report", "-d", "crab_projects/crab_zmm_report", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    results = tmp_path / "crab_projects" / "crab_zmm_report" / "results"  # crab's default
    reports = [json.loads((Path(status["task_dir"]) / f"jobReport.json.{i}.{len(j['attempts']) - 1}").read_text())
               for i, j in jobs.items() if j["state"] == "finished"]
    sources = [s for r in reports for s in r["steps"]["cmsRun"]["input"]["source"]]
    written = sum(f["events"] for r in reports for files in r["steps"]["cmsRun"]["output"].values() for f in files)
    assert shown.stdout.splitlines()[:7] == [
        f"Will put report files in directory {results}",
        "Summary from successful jobs (i.e. in status 'finished'):",
        f"  Number of files processed: {len({s['lfn'] for s in sources})}",
        f"  Number of events read: {sum(s['events'] for s in sources)}",
        f"  Number of events written in EDM files: {written}",
        "  Number of events written in TFileService files: 0",
        "  Number of events written in other type of files: 0"]
    assert "  Processed lumis written to processedLumis.json" in shown.stdout
    assert "  Warning: 'notFinished' lumis written to notFinishedLumis.json" in shown.stdout
    processed = _lumis(json.loads((results / "processedLumis.json").read_text()))
    assert processed == {(int(run), lumi) for s in sources for run, lumis in s["runs"].items() for lumi in lumis}
    job2 = json.loads((Path(status["task_dir"]) / "job_input.2.json").read_text())
    job2_lumis = {(run, lumi) for f in job2["files"] for run, lumi, _ in f["lumis"]}
    assert _lumis(json.loads((results / "notFinishedLumis.json").read_text())) == job2_lumis
    to_process = _lumis(json.loads((results / "lumisToProcess.json").read_text()))
    assert to_process == processed | job2_lumis and not processed & job2_lumis
    assert to_process <= _lumis(json.loads((results / "inputDatasetLumis.json").read_text()))
    # crab's short name, and no task: the one -d named last
    failed = crabtui(state, "task", "rep", "--recovery", "failed", "--outputdir", "recovery", cwd=tmp_path)
    assert failed.returncode == 0, failed.stderr
    assert f"Will put report files in directory {tmp_path / 'recovery'}" in failed.stdout
    assert failed.stdout.startswith(f"Will use CRAB project directory {results.parent}")
    assert _lumis(json.loads((tmp_path / "recovery" / "failedLumis.json").read_text())) == job2_lumis
    assert json.loads((tmp_path / "recovery" / "failedFiles.json").read_text()) == sorted(f["lfn"] for f in job2["files"])
    refused = crabtui(state, "task", "report", "--task", status["name"], "--recovery", "notPublished", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "publishes no output dataset" in refused.stderr


def test_report_before_any_job_finished_says_so_in_crabs_words(tmp_path, state):
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(CONFIG.replace("timeScale = 500", "timeScale = 1"))  # hours of jobs
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    wait_status(state, "zmm_report", tmp_path, "SUBMITTED")
    early = crabtui(state, "task", "report", cwd=tmp_path)
    assert early.returncode == 1 and early.stderr.count("\n") == 1, early.stderr
    assert "ERROR: Cannot get all the needed information for the report. Maybe no job has completed yet ?" in early.stderr
    assert not (Path(state.task_dir(json.loads(crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout)[0]["name"]))
                / "results").exists()
    assert crabtui(state, "task", "kill", cwd=tmp_path).returncode == 0


SPLIT_LUMI = {"name": "/SingleMuon/me-skim-v1/USER", "blocks": [{"sites": ["T2_XX_Local"], "files": [
    {"lfn": "/store/user/me/skim_1.root", "size": 1_000_000, "lumis": [[316187, 1, 50], [316187, 2, 20]]},
    {"lfn": "/store/user/me/skim_2.root", "size": 1_000_000, "lumis": [[316187, 2, 30], [316187, 3, 50]]},
    {"lfn": "/store/user/me/skim_3.root", "size": 1_000_000, "lumis": [[316187, 4, 50]]}]}]}


def test_a_lumi_split_across_files_is_reported_as_crab_reports_duplicates(tmp_path, state):
    """Lumi 2 is in two files of the dataset: FileBased jobs of one file each both process it, and
    crab report names it in inputDatasetDuplicateLumis.json and outputFilesDuplicateLumis.json."""
    (tmp_path / "skim.json").write_text(json.dumps(SPLIT_LUMI))
    added = crabtui(state, "dataset", "add", SPLIT_LUMI["name"], "--from", "skim.json", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(
        CONFIG.replace("/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM", SPLIT_LUMI["name"])
        .replace("unitsPerJob = 5", "unitsPerJob = 1").replace("config.Debug.failurePlan", "# config.Debug.failurePlan")
        .replace("config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']\n", ""))
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    status = wait_status(state, "zmm_report", tmp_path, "COMPLETED")
    shown = crabtui(state, "task", "report", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "  Number of files processed: 3\n  Number of events read: 200\n" in shown.stdout
    assert ("  Warning: Duplicate lumis in output files written to outputFilesDuplicateLumis.json" in shown.stdout
            and "'notFinished' lumis" not in shown.stdout)
    assert ("  Input dataset duplicate lumis (from DBS, at task submission time) written to "
            "inputDatasetDuplicateLumis.json") in shown.stdout
    results = tmp_path / "crab_projects" / "crab_zmm_report" / "results"  # crab's default
    assert status["project_dir"] == str(results.parent)
    assert json.loads((results / "processedLumis.json").read_text()) == {"316187": [[1, 4]]}
    assert json.loads((results / "inputDatasetDuplicateLumis.json").read_text()) == {"316187": [[2, 2]]}
    assert json.loads((results / "outputFilesDuplicateLumis.json").read_text()) == {"316187": [[2, 2]]}
    assert not (results / "notFinishedLumis.json").exists()
