"""What a task reads (engine.crab.taskworker.task_input) and what submit refuses before any job is sent."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from engine.crab.ap.sites import SiteLists, write_global_blacklist
from engine.crab.client.config import load_config
from engine.crab.client.submit import SubmitError, submit
from engine.crab.taskworker import stand_ins
from engine.crab.taskworker.datasets import Catalogue
from engine.crab.taskworker.splitting import split
from engine.crab.taskworker.task_input import InputSpec, load_input, locality
from engine.crab.taskworker.taskdb import TaskDB
from engine.state import StateDir

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
GRID = ["T2_XX_Local", "T2_CH_CERN", "T1_US_FNAL", "T2_US_Nebraska", "T2_DE_DESY", "T2_IT_Pisa"]
POOL = {site: {"cpus": 1, "memory": 8000} for site in GRID}  # as the daemon's ping gives the pool


@pytest.mark.parametrize("events, per_job, lumis_per_file", [(1000, 250, 1), (1030, 250, 1), (10_000, 900, 4),
                                                             (7, 10, 3)])
def test_private_mc_jobs_are_wmcores_event_based_jobs(events, per_job, lumis_per_file):
    """Each job gets unitsPerJob events (the last the rest) in ceil(events / events per lumi) lumis of
    events-per-lumi events, numbered on from the previous job's, as WMCore's EventBased makes them."""
    per_lumi = per_job // lumis_per_file
    spec = InputSpec(events=events, events_per_job=per_job, events_per_lumi=per_lumi, sites=tuple(GRID))
    dataset = load_input(spec, Catalogue(None))
    assert [f.lfn for f in dataset.files] == ["MCFakeFile"] and dataset.events == events
    assert dataset.sites == sorted(s for s in GRID if not s.startswith("T1_")), "MakeFakeFileSet: no Tier-1"
    jobs = split(dataset, algorithm="EventBased", units_per_job=per_job, events_per_lumi=per_lumi)
    assert len(jobs) == math.ceil(events / per_job)
    lumi = 1
    for n, job in enumerate(jobs):
        in_job = min(per_job, events - n * per_job)
        lumis = math.ceil(in_job / per_lumi)
        assert (job.events, job.lumi_mask()) == (in_job, {1: [(lumi, lumi + lumis - 1)]})
        lumi += lumis


def test_user_files_are_one_lumi_and_one_event_each_at_the_given_sites():
    files = ("/store/user/me/a.root", "root://xrootd.example.org//store/user/me/b.root")
    dataset = load_input(InputSpec(user_files=files, sites=("T2_CH_CERN", "T2_XX_Local")), Catalogue(None))
    assert [(f.lfn, list(f.lumis)) for f in dataset.files] == [(files[0], [(1, 1, 1)]), (files[1], [(1, 2, 1)])]
    assert dataset.sites == ["T2_CH_CERN", "T2_XX_Local"]
    assert [j.files for j in split(dataset, algorithm="FileBased", units_per_job=1)] == [(files[0],), (files[1],)]


def test_ignore_locality_and_blocks_narrow_the_dataset():
    whole = Catalogue(None).load(MC)
    first = whole.blocks[0].name
    dataset = load_input(InputSpec(dataset=MC, blocks=(first,), sites=("T2_IT_Pisa",)), Catalogue(None))
    assert [b.name for b in dataset.blocks] == [first] and dataset.sites == ["T2_IT_Pisa"]


def test_locality_sorts_blocks_by_where_their_jobs_could_run():
    dataset = Catalogue(None).load(MC)  # every block at T2_XX_Local and up to two more sites
    everywhere = locality(dataset, SiteLists(), GRID)
    assert len(everywhere.usable) == len(dataset.blocks) and not everywhere.banned
    off_pool = locality(dataset, SiteLists(), ["T2_US_Purdue"])
    assert len(off_pool.outside) == len(dataset.blocks) and not off_pool.usable
    banned = locality(dataset, SiteLists(whitelist=("T3_US_FNALLPC",)), GRID)
    assert len(banned.banned) == len(dataset.blocks)
    masked = locality(Catalogue(None).load("/Muon0/Run2023C-PromptReco-v1/AOD"), SiteLists(), GRID, {367100: [(1, 2)]})
    assert masked.blocks == 1, "only the blocks with a lumi the mask selects count"


# --- submit ---------------------------------------------------------------------------------------

CONFIG = """\
[General]
requestName = "{name}"
[JobType]
psetName = "pset.py"
[Data]
inputDataset = "{dataset}"
splitting = "FileBased"
unitsPerJob = 5
{data}
[Site]
storageSite = "T2_XX_Local"
{site}
"""


def config(tmp_path: Path, name: str = "t", dataset: str = MC, data: str = "", site: str = ""):
    path = tmp_path / f"{name}.toml"
    path.write_text(CONFIG.format(name=name, dataset=dataset, data=data, site=site))
    return load_config(path)


@pytest.fixture
def state(tmp_path):
    (tmp_path / "state").mkdir()
    return StateDir(str(tmp_path / "state"))


def refused(cfg, state, pool=POOL) -> str:
    with pytest.raises(SubmitError) as e:
        submit(cfg, state, TaskDB(state.tasks), pool)
    message = str(e.value)
    assert "\n" not in message and message.startswith(cfg.source)
    assert not Path(state.path, "tasks").exists() or not list(Path(state.path, "tasks").iterdir()), "nothing left"
    return message


def test_lists_that_leave_no_site_holding_the_data_are_refused_in_crabs_words(tmp_path, state):
    message = refused(config(tmp_path, site='whitelist = ["T2_US_Purdue"]'), state)
    assert "Site.whitelist/Site.blacklist: The CRAB server backend refuses to send jobs to the Grid scheduler. No " \
           f"locations found for dataset {MC}. (or at least for what passed the lumi-mask and/or run-range " \
           "selection). Found 2 (out of 2) blocks present only at blacklisted not-whitelisted sites. User whitelist " \
           "is ['T2_US_Purdue']." in message
    assert f"'crabtui dataset show {MC}' lists the blocks' locations" in message
    every_site = sorted({s for b in Catalogue(None).load(MC).blocks for s in b.sites})
    message = refused(config(tmp_path, site=f"blacklist = {json.dumps(every_site)}"), state)
    assert "present only at blacklisted not-whitelisted sites" in message and "User blacklist is [" in message
    write_global_blacklist(state.global_blacklist, every_site)
    assert f"Global blacklist is {every_site}" in refused(config(tmp_path), state)


USER_FILES_WILDCARD = """\
from WMCore.Configuration import Configuration
config = Configuration()

config.section_("General")
config.General.requestName = "PbPbMC2018_dijetHistograms"
config.section_("JobType")
config.JobType.pluginName = "Analysis"
config.JobType.psetName = "PSet.py"
config.section_("Data")
config.Data.userInputFiles = open("forest_files.txt").readlines()
config.Data.splitting = "FileBased"
config.Data.unitsPerJob = 5
config.Data.outputPrimaryDataset = "diJetPbPbMCHistograms"
config.section_("Site")
config.Site.whitelist = {whitelist}
config.Site.storageSite = "T2_XX_Local"
"""


@pytest.mark.parametrize("whitelist, expanded", [(["T2_ZZ_*"], True), (["T3_KR_*", "T2_ZZ_*"], True),
                                                 (["T2_US_*"], False)])
def test_a_whitelist_pattern_that_matches_no_site_is_named_in_crabs_words(tmp_path, state, whitelist, expanded):
    """A wildcard of Site.whitelist that no site crabtui knows matches gets CRAB's "Cannot expand site
    ... to anything", naming the pattern and the sites there are; one that matches a site of the grid
    (T2_US_Nebraska) but none of the pool keeps the usual refusal."""
    (tmp_path / "forest_files.txt").write_text("".join(f"/store/user/someone/HiForestAOD_{i}.root\n"
                                                       for i in range(12)))
    path = tmp_path / "crabConfig.py"
    path.write_text(USER_FILES_WILDCARD.format(whitelist=whitelist))
    message = refused(load_config(path), state, pool={"T2_XX_Local": {"cpus": 8, "memory": 20000}})
    assert "No locations found for the task's input." in message
    if expanded:
        assert f"Site.whitelist/Site.blacklist: Cannot expand site {whitelist[0]} to anything: no site of the pool " \
               f"or the simulated grid, nor any holding the input, matches Site.whitelist's " \
               f"{', '.join(repr(p) for p in whitelist)} (the sites are T1_US_FNAL, T2_CH_CERN, " in message
    else:
        assert "Cannot expand" not in message


def test_user_files_whitelisted_only_at_sites_the_pool_lacks_say_which_sites_it_has(tmp_path, state):
    """Heavy-ion analyses pin their user-file jobs to their own Tier-2 (T2_US_MIT): the refusal
    leads with what to change, the pool's sites, rather than with blocks at blacklisted sites alone."""
    (tmp_path / "forest_files.txt").write_text("/store/user/someone/HiForestAOD_1.root\n")
    path = tmp_path / "crabConfig.py"
    path.write_text(USER_FILES_WILDCARD.format(whitelist=["T2_US_MIT"]))
    message = refused(load_config(path), state, pool=POOL)
    assert f"Site.whitelist/Site.blacklist: Site.whitelist ['T2_US_MIT'] names no site of this pool, and the jobs " \
           f"of user files or generated events run only at whitelisted sites: add one of the pool's sites " \
           f"({', '.join(sorted(POOL))}) to Site.whitelist to run here. The CRAB server backend refuses" in message
    path.write_text(USER_FILES_WILDCARD.format(whitelist=["T2_US_MIT", "T2_US_*"]))  # T2_US_Nebraska is there
    assert Path(submit(load_config(path), state, TaskDB(state.tasks), POOL).task_dir, "request.json").exists()


def test_data_only_where_the_pool_has_no_slot_is_refused(tmp_path, state):
    message = refused(config(tmp_path), state, pool={"T2_US_Purdue": {"cpus": 8, "memory": 16000}})
    assert "Found 2 (out of 2) blocks present only at sites the lists allow but where the pool has no slot for " \
           "jobs of 1 core(s) and 2000 MB." in message
    assert "the pool's sites are T2_US_Purdue, with slots for jobs of 1 core(s) and 2000 MB at T2_US_Purdue" in message


def test_sites_whose_slots_are_too_small_for_the_jobs_do_not_count(tmp_path, state):
    many = dataclasses.replace(config(tmp_path, name="mt"), num_cores=4)  # the grid's slots have one core
    message = refused(many, state)
    assert "no slot for jobs of 4 core(s) and 2000 MB" in message and "at none (pool.toml" in message
    bigger = {**POOL, "T2_XX_Local": {"cpus": 8, "memory": 16000}}  # every block is at T2_XX_Local
    assert submit(many, state, TaskDB(state.tasks), bigger).warnings == ()


def test_blocks_no_site_can_run_are_skipped_with_crabs_warning(tmp_path, state):
    dataset = Catalogue(None).load(MC)
    only_some = next(s for b in dataset.blocks for s in b.sites if s != "T2_XX_Local")
    done = submit(config(tmp_path, site=f'whitelist = ["{only_some}"]'), state, TaskDB(state.tasks), POOL)
    kept = [b.name for b in dataset.blocks if only_some in b.sites]
    assert 0 < len(kept) < len(dataset.blocks)
    assert any(w.startswith(f"Some blocks from dataset {MC} were skipped because they are only present at "
                            "blacklisted, not-whitelisted sites.") and f"{len(dataset.blocks) - len(kept)} (out of "
               f"{len(dataset.blocks)}) blocks" in w for w in done.warnings)
    request = json.loads(Path(done.task_dir, "request.json").read_text())
    assert request["input"]["blocks"] == kept


def test_ignore_locality_runs_at_the_whitelisted_sites_of_the_pool(tmp_path, state):
    cfg = config(tmp_path, data="ignoreLocality = true", site='whitelist = ["T2_US_Purdue"]')
    assert "the pool's sites are T2_CH_CERN, T2_XX_Local" in refused(
        cfg, state, pool={"T2_XX_Local": POOL["T2_XX_Local"], "T2_CH_CERN": POOL["T2_CH_CERN"]})
    cfg = config(tmp_path, data="ignoreLocality = true", site='whitelist = ["T2_IT_*"]')
    done = submit(cfg, state, TaskDB(state.tasks), POOL)
    assert json.loads(Path(done.task_dir, "request.json").read_text())["input"]["sites"] == sorted(GRID)


def test_input_blocks_that_the_dataset_does_not_have_are_refused(tmp_path, state):
    cfg = config(tmp_path, data='inputBlocks = ["0b9bd8f4-1f3c-4c9a-a1b6-26a33e2e5e11"]')
    assert f"Data.inputBlocks: none of its 1 block(s) is a block of dataset {MC} (the catalogue's, with 2 blocks" \
        in refused(cfg, state)


def test_a_stand_in_is_noted_once_and_registered(tmp_path, state):
    name = "/SingleMuon/Run2018D-UL2018_MiniAODv2-v3/MINIAOD"
    done = submit(config(tmp_path, dataset=name), state, TaskDB(state.tasks), POOL)
    assert len(done.notes) == 1 and "synthetic stand-in made from its name" in done.notes[0]
    assert stand_ins.registered(str(Path(state.path, "datasets"))) == [name]
    assert json.loads(Path(done.task_dir, "request.json").read_text())["input"]["stand_in"] is True


def test_a_request_name_used_again_names_the_task_in_full_and_never_touches_the_first(tmp_path, state):
    first = submit(config(tmp_path, name="again"), state, TaskDB(state.tasks), POOL, now=1_800_000_000)
    request = Path(first.task_dir, "request.json").read_bytes()
    assert first.handle == "again" and first.notes == ()

    same_second = config(tmp_path, name="again", dataset="/Muon0/Run2023C-PromptReco-v1/AOD")
    with pytest.raises(SubmitError) as e:
        submit(same_second, state, TaskDB(state.tasks), POOL, now=1_800_000_000.5)
    assert str(e.value) == (f"{same_second.source}: General.requestName: task {first.name} was submitted this same "
                            "second; submit again in a second, or change General.requestName.")
    assert Path(first.task_dir, "request.json").read_bytes() == request, "the first task's request is its own"

    second = submit(same_second, state, TaskDB(state.tasks), POOL, now=1_800_000_001)
    assert second.name != first.name and second.handle == second.name
    assert second.notes == (f"requestName again is also that of {first.name}: task commands take this task by "
                            f"its full name, {second.name}.",)


def test_das_block_ids_of_a_stand_ins_dataset_each_take_one_of_its_blocks(tmp_path, state):
    """A stand-in's blocks are made up: the block ids a config copied from DAS would all be refused.
    Each named block of the dataset takes one of the stand-in's, in order; another dataset's is left out."""
    name = "/JetMET1/Run2023C-v1/RAW"
    ours = [b.name for b in stand_ins.load(Catalogue(None), name, stand_in=True).blocks]
    cfg = config(tmp_path, dataset=name, data=f'inputBlocks = ["{name}#b83949de-530b-4b1c-834a-d91269020eaa", '
                                              f'"e1f0a7c2-5d3b-4c8e-9f21-6a7b3c9d0e14", "/Other/Run2023C-v1/RAW#x"]')
    done = submit(cfg, state, TaskDB(state.tasks), POOL)
    assert json.loads(Path(done.task_dir, "request.json").read_text())["input"]["blocks"] == ours[:2]
    (said,) = [w for w in done.warnings if w.startswith("Data.inputBlocks:")]
    assert f"{name} is a synthetic stand-in, whose blocks are made up: 2 of its blocks stand in for the 2 it names " \
           f"that it does not hold ({ours[0].split('#')[1]} for b83949de-530b-4b1c-834a-d91269020eaa, " in said
    assert said.endswith("1 of its blocks are not blocks of dataset /JetMET1/Run2023C-v1/RAW (a synthetic stand-in) "
                         "and are left out: /Other/Run2023C-v1/RAW#x.")
