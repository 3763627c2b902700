"""Data.useParent and Data.secondaryInputDataset: each input file's parents (or the secondary dataset's
files of its lumis) reach the job's input, the simulated cmsRun reads them as secondary files, and the
job report lists them as CMSSW's does; a task whose files have none is refused as CRAB refuses it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from crab_tasks import crabtui, task_status, wait_until
from engine.crab.taskworker.datasets import Catalogue
from engine.crab.taskworker.parents import MAX_PARENTS, PARENT_TIERS, without_parents
from engine.crab.taskworker.task_input import InputSpec, load_input
from engine.crab.wn import fjr

MINI = "/JetHT/Run2018C-UL2018_MiniAODv2-v1/MINIAOD"
NANO_MC = "/DYJetsToLL_M-50_TuneCP5_13TeV-amcatnloFXFX-pythia8/RunIISummer20UL18NanoAODv9-106X_upgrade2018_realistic_v16_L1v1-v2/NANOAODSIM"


def parents_of(name: str, **spec) -> dict[str, tuple[str, ...]]:
    dataset = load_input(InputSpec(dataset=name, stand_in=True, **spec), Catalogue(None))
    return {f.lfn: f.parents for f in dataset.files}


def test_a_stand_ins_files_have_the_parent_tiers_files_the_same_every_time():
    first, again = parents_of(MINI, use_parent=True), parents_of(MINI, use_parent=True)
    assert first == again and all(first.values())
    for lfn, parents in first.items():
        directory = lfn.rsplit("/", 1)[0].replace("/MINIAOD/", "/AOD/")
        assert 1 <= len(parents) <= MAX_PARENTS and all(p.rsplit("/", 1)[0] == directory for p in parents)
        assert all(re.fullmatch(r"[0-9A-F-]{36}\.root", p.rsplit("/", 1)[1]) for p in parents)
    assert len({p for ps in first.values() for p in ps}) == sum(map(len, first.values())), "no parent shared"
    assert not any(parents_of(MINI).values()), "without useParent, no parents"
    nano = parents_of(NANO_MC, use_parent=True)
    assert all("/MINIAODSIM/" in p for ps in nano.values() for p in ps)
    assert PARENT_TIERS["MINIAOD"] == "AOD" and PARENT_TIERS["NANOAODSIM"] == "MINIAODSIM"


def test_raw_has_no_parents_and_a_users_dataset_gives_its_own(tmp_path):
    raw = load_input(InputSpec(dataset="/ZeroBias/Run2023C-v1/RAW", stand_in=True, use_parent=True), Catalogue(None))
    assert without_parents(raw) is not None
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "mine.json").write_text(json.dumps({"name": "/Mine/Skim-v1/USER", "blocks": [
        {"sites": ["T2_XX_Local"], "files": [
            {"lfn": "/store/user/me/skim_1.root", "size": 10, "lumis": [[1, 1, 5]],
             "parents": ["/store/mc/Camp/Mine/MINIAODSIM/v1/a.root", "/store/mc/Camp/Mine/MINIAODSIM/v1/b.root"]},
            {"lfn": "/store/user/me/skim_2.root", "size": 10, "lumis": [[1, 2, 5]]}]}]}))
    mine = load_input(InputSpec(dataset="/Mine/Skim-v1/USER", use_parent=True), Catalogue(str(tmp_path / "datasets")))
    assert [f.parents for f in mine.files] == [("/store/mc/Camp/Mine/MINIAODSIM/v1/a.root",
                                                 "/store/mc/Camp/Mine/MINIAODSIM/v1/b.root"), ()]
    assert without_parents(mine).lfn == "/store/user/me/skim_2.root"


def test_a_secondary_dataset_pairs_each_file_with_its_files_of_the_same_lumis(tmp_path):
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "raw.json").write_text(json.dumps({"name": "/Mine/Run2023D-v1/RAW", "blocks": [
        {"sites": ["T2_XX_Local"], "files": [
            {"lfn": f"/store/data/Run2023D/Mine/RAW/v1/r{n}.root", "size": 10, "lumis": [[370000, n, 5]]}
            for n in range(1, 6)]}]}))
    (tmp_path / "datasets" / "aod.json").write_text(json.dumps({"name": "/Mine/Run2023D-Reco-v1/AOD", "blocks": [
        {"sites": ["T2_XX_Local"], "files": [
            {"lfn": "/store/data/Run2023D/Mine/AOD/Reco-v1/a.root", "size": 10, "lumis": [[370000, 1, 5], [370000, 2, 5]]},
            {"lfn": "/store/data/Run2023D/Mine/AOD/Reco-v1/b.root", "size": 10, "lumis": [[370000, 9, 5]]}]}]}))
    catalogue = Catalogue(str(tmp_path / "datasets"))
    paired = load_input(InputSpec(dataset="/Mine/Run2023D-Reco-v1/AOD", secondary="/Mine/Run2023D-v1/RAW"), catalogue)
    assert [f.parents for f in paired.files] == [("/store/data/Run2023D/Mine/RAW/v1/r1.root",
                                                   "/store/data/Run2023D/Mine/RAW/v1/r2.root"), ()]
    made_up = load_input(InputSpec(dataset=MINI, stand_in=True, secondary="/JetHT/Run2018C-v1/RAW"), catalogue)
    assert without_parents(made_up) is None
    assert all(p.startswith("/store/data/Run2018C/JetHT/RAW/v1/000/") for f in made_up.files for p in f.parents)


def test_a_use_parent_task_gives_its_jobs_the_parents_and_their_reports_list_them_as_secondary_files(tmp_path, state):
    (tmp_path / "pset.py").write_text("")
    (tmp_path / "crabConfig.py").write_text(f"""\
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'with_parents'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '{MINI}'
config.Data.useParent = True
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 3
config.Data.totalUnits = 6
config.Site.storageSite = 'T2_XX_Local'
config.Site.whitelist = ['T2_XX_Local']
config.Debug.timeScale = 2000
""")
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    status = wait_until("a finished job", lambda: (s := task_status(state, "with_parents", tmp_path)) and any(
        j["state"] == "finished" for j in s["jobs"]) and s, timeout=120)
    job = next(j for j in status["jobs"] if j["state"] == "finished")
    task_dir = Path(status["task_dir"])
    given = json.loads((task_dir / f"job_input.{job['id']}.json").read_text())["files"]
    assert given and all(f["parents"] and all("/AOD/" in p for p in f["parents"]) for f in given)
    report = fjr.read_report(next(task_dir.glob(f"jobReport.json.{job['id']}.*")))
    source = report["steps"]["cmsRun"]["input"]["source"]
    primary = [s for s in source if s["input_type"] == "primaryFiles"]
    secondary = [s for s in source if s["input_type"] == "secondaryFiles"]
    assert {s["lfn"] for s in primary} == {f["lfn"] for f in given}
    assert secondary and {s["lfn"] for s in secondary} <= {p for f in given for p in f["parents"]}
    assert sum(s["events"] for s in secondary) == sum(s["events"] for s in primary) == fjr.summarize(report).events
