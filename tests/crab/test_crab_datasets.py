"""The dataset catalogue: shipped synthetic datasets, the user's JSON files, and ``crabtui dataset``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from crabtui.cli import main
from engine.crab.client.lumi_mask import read_mask
from engine.crab.client.config import load_config
from engine.crab.taskworker import stand_ins
from engine.crab.taskworker.splitting import split
from engine.crab.taskworker.datasets import (
    SITES, SYNTHETIC, Catalogue, Dataset, DatasetError, Lumi, UnknownDataset, generate, load_json,
)
from engine.state import state_dir

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
DATA = "/Muon0/Run2023C-PromptReco-v1/AOD"
BIG = "/JetMET0/Run2023D-PromptReco-v1/MINIAOD"
MINE = "/MyPrimary/MyProcessed-v1/USER"


def run(*args: str):
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart
    return runner.invoke(main, list(args))


def user_dataset(name: str = MINE) -> dict:
    return {"name": name, "blocks": [
        {"sites": ["T2_XX_Local", "T2_CH_CERN"], "files": [
            {"lfn": "/store/user/me/a.root", "size": 1000, "lumis": [[1, 1, 10], [1, 2, 20]]},
            {"lfn": "/store/user/me/b.root", "size": 2000, "events": 5, "lumis": [[2, 7, 5]]},
        ]},
        {"name": f"{name}#second", "sites": ["T1_US_FNAL"], "files": [
            {"lfn": "/store/user/me/c.root", "size": 3000, "lumis": [[2, 8, 0], [1, 2, 4]]},
        ]},
    ]}


def write(directory: Path, filename: str, document: object) -> Path:
    (directory / "datasets").mkdir(exist_ok=True)
    path = directory / "datasets" / filename
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


# -- shipped datasets -------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "files", "blocks", "lumis", "runs"), [
    (MC, 20, 2, 80, 1),
    (DATA, 200, 8, 6000, 8),
])
def test_shipped_dataset_shape(name: str, files: int, blocks: int, lumis: int, runs: int) -> None:
    d = Catalogue().load(name)
    assert (d.name, d.source, d.nfiles, len(d.blocks), d.lumis, len(d.runs())) == (
        name, "synthetic", files, blocks, lumis, runs)
    all_lumis: set[tuple[int, int]] = set()
    lfns = set()
    for block in d.blocks:
        assert block.name.startswith(name + "#")
        assert 1 <= len(block.sites) <= 3 and "T2_XX_Local" in block.sites and set(block.sites) <= set(SITES)
        for f in block.files:
            assert f.lfn.startswith("/store/mc/" if runs == 1 else "/store/data/") and f.lfn.endswith(".root")
            lfns.add(f.lfn)
            pairs = {(lumi.run, lumi.lumi) for lumi in f.lumis}
            assert len(pairs) == len(f.lumis) >= 1
            assert sum(lumi.events for lumi in f.lumis) == f.events
            assert all(100 <= lumi.events <= 1000 for lumi in f.lumis)
            assert 1e9 < f.size < 6e9  # files of a few GB
            all_lumis |= pairs
    assert len(lfns) == files and len(all_lumis) == lumis  # no file and no lumi twice in the dataset
    assert d.events == sum(f.events for f in d.files)
    assert d.size == sum(f.size for f in d.files)


def test_mc_files_hold_a_few_lumis_of_run_1() -> None:
    d = Catalogue().load(MC)
    assert d.runs() == [1]
    assert all(2 <= len(f.lumis) <= 6 and 1000 <= f.events <= 3000 for f in d.files)


def test_data_files_may_span_runs() -> None:
    """Lumi masks over a run boundary inside one file must be exercised."""
    d = Catalogue().load(DATA)
    assert any(len(set(f.lumis.runs)) > 1 for f in d.files)


def test_generation_is_deterministic() -> None:
    first, second = generate(SYNTHETIC[MC]), Catalogue().load(MC)
    assert first == second and first is not second
    assert generate(SYNTHETIC[DATA]) == generate(SYNTHETIC[DATA])
    # Pinned, so that tests elsewhere may rely on the exact content.
    assert (first.events, first.size) == (35843, 46828263277)
    f = next(first.files)
    assert f.lfn == ("/store/mc/Run3Summer23/TTbar_TuneCP5_13p6TeV/AODSIM/130X_mcRun3_2023_realistic_v14-v1/"
                     "2530000/" + f.lfn.rsplit("/", 1)[1])
    assert list(f.lumis)[0] == Lumi(1, 1, f.lumis.events[0])


def test_the_million_lumi_dataset_loads() -> None:
    d = Catalogue().load(BIG)
    assert (d.nfiles, d.lumis, len(d.blocks), len(d.runs())) == (10_000, 1_000_000, 100, 500)
    assert all(sum(f.lumis.events) == f.events for f in d.files)
    assert d.sites == sorted(SITES)


def test_names_are_listed_without_generating() -> None:
    assert Catalogue().names() == sorted([MC, DATA, BIG])


# -- the user's datasets ----------------------------------------------------------------------------

def test_user_dataset_is_listed_and_loaded(tmp_path: Path) -> None:
    path = write(tmp_path, "mine.json", user_dataset())
    catalogue = Catalogue.for_state(state_dir(str(tmp_path)))
    assert catalogue.names() == sorted([MC, DATA, BIG, MINE]) and catalogue.errors == []
    d = catalogue.load(MINE)
    assert isinstance(d, Dataset) and d.source == str(path)
    assert [b.name for b in d.blocks] == [f"{MINE}#1", f"{MINE}#second"]
    assert d.blocks[0].sites == ("T2_CH_CERN", "T2_XX_Local")
    assert (d.nfiles, d.lumis, d.events, d.size, d.sites) == (3, 5, 39, 6000, ["T1_US_FNAL", "T2_CH_CERN", "T2_XX_Local"])
    assert list(d.blocks[1].files[0].lumis) == [Lumi(2, 8, 0), Lumi(1, 2, 4)]
    assert d.runs() == [1, 2]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("name"), "mine.json: name: missing; a dataset needs name, blocks"),
    (lambda d: d.update(name="MyPrimary"), "mine.json: name: must be a dataset name /Primary/Processed/TIER"),
    (lambda d: d.update(blocks=[]), "mine.json: blocks: must be a non-empty list of blocks"),
    (lambda d: d["blocks"][1].update(sites=["CERN"]), 'mine.json: blocks[2].sites[1]: must be a CMS site name'),
    (lambda d: d["blocks"][1].update(name="/Other/X-v1/USER#1"), "mine.json: blocks[2].name: must be the dataset name"),
    (lambda d: d["blocks"][0]["files"][1].update(lumi=[]), 'mine.json: blocks[1].files[2].lumi: unknown key; '
                                                            'did you mean "lumis"?'),
    (lambda d: d["blocks"][0]["files"][0].update(size=-1), "mine.json: blocks[1].files[1].size: must be a whole number"),
    (lambda d: d["blocks"][0]["files"][0].update(size="1 GB"), "mine.json: blocks[1].files[1].size: must be"),
    (lambda d: d["blocks"][0]["files"][1].update(events=6), "mine.json: blocks[1].files[2].events: 6 is not the sum"),
    (lambda d: d["blocks"][0]["files"][1].update(lfn="/tmp/b.root"), "mine.json: blocks[1].files[2].lfn: must be "
                                                                      "a logical file name under /store/"),
    (lambda d: d["blocks"][0]["files"][1].update(parents=["a.root"]), "mine.json: blocks[1].files[2].parents[1]: must "
                                                                       "be a logical file name under /store/"),
    (lambda d: d["blocks"][0]["files"][1].update(parents=[]), "mine.json: blocks[1].files[2].parents: must be a "
                                                              "non-empty list of parent files' LFNs"),
    (lambda d: d["blocks"][1]["files"][0].update(lfn="/store/user/me/a.root"),
     "mine.json: blocks[2].files[1].lfn: /store/user/me/a.root is already a file of this dataset"),
    (lambda d: d["blocks"][0]["files"][0]["lumis"].append([1, 2, 3]),
     "mine.json: blocks[1].files[1].lumis[3]: run 1 lumi 2 is already in this file"),
    (lambda d: d["blocks"][0]["files"][0]["lumis"].append([1, 3]),
     "mine.json: blocks[1].files[1].lumis[3]: must be [run, lumi, events], three whole numbers"),
    (lambda d: d["blocks"][0]["files"][0]["lumis"].append([0, 3, 1]),
     "mine.json: blocks[1].files[1].lumis[3]: run and lumi count from 1"),
    (lambda d: d["blocks"][0]["files"][0].update(lumis=[]), "mine.json: blocks[1].files[1].lumis: must be a non-empty"),
])
def test_invalid_user_file_names_file_and_field(tmp_path: Path, change, message: str) -> None:
    document = user_dataset()
    change(document)
    path = write(tmp_path, "mine.json", document)
    with pytest.raises(DatasetError) as e:
        load_json(str(path))
    assert str(e.value).startswith(str(path)) and message in str(e.value)


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.json", '{"name": "/A/B-v1/USER",\n "blocks": [}\n')
    with pytest.raises(DatasetError, match=r"broken\.json:2: invalid JSON: .* \(column \d+\)"):
        load_json(str(path))


def test_invalid_files_are_reported_and_the_others_still_list(tmp_path: Path) -> None:
    write(tmp_path, "a-good.json", user_dataset())
    write(tmp_path, "b-bad.json", user_dataset("/Bad/Bad-v1/USER") | {"blocks": "none"})
    write(tmp_path, "c-shipped.json", user_dataset(MC))
    write(tmp_path, "d-twice.json", user_dataset())
    write(tmp_path, "e-garbage.json", "not json")
    catalogue = Catalogue.for_state(state_dir(str(tmp_path)))
    assert catalogue.names() == sorted([MC, DATA, BIG, MINE])
    errors = [str(e) for e in catalogue.errors]
    assert len(errors) == 4
    assert "b-bad.json: blocks: must be a non-empty list" in errors[0]
    assert f'c-shipped.json: name: "{MC}" is a shipped dataset' in errors[1]
    assert f'd-twice.json: name: "{MINE}" is already the dataset of {tmp_path}/datasets/a-good.json' in errors[2]
    assert "e-garbage.json:1: invalid JSON" in errors[3]
    assert catalogue.load(MINE).source.endswith("a-good.json")
    assert catalogue.load(MC).source == "synthetic"
    with pytest.raises(DatasetError, match="b-bad.json: blocks: must be"):  # not "unknown dataset"
        catalogue.load("/Bad/Bad-v1/USER")

    result = run("--state-dir", str(tmp_path), "dataset", "list")
    assert result.exit_code == 1
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["DATASET", BIG, DATA, MINE, MC]
    assert result.stderr.count("ERROR: ") == 4 and "b-bad.json: blocks:" in result.stderr


# -- unknown names --------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "suggestions"), [
    ("/Muon0/Run2023C-PromptReco-v2/AOD", [DATA]),
    ("/TTbar/Run3Summer23-v1/AODSIM", [MC]),
    ("ttbar", [MC]),
    ("PromptReco", [BIG, DATA]),
    ("/Nothing/Like-v1/THIS", []),
])
def test_unknown_name_suggests_close_ones(name: str, suggestions: list[str]) -> None:
    with pytest.raises(UnknownDataset) as e:
        Catalogue().load(name)
    assert e.value.suggestions == suggestions
    assert str(e.value).startswith(f'unknown dataset "{name}"')
    assert all(f'"{s}"' in str(e.value) for s in suggestions)


# -- the command line -------------------------------------------------------------------------------

def test_dataset_list_text(tmp_path: Path) -> None:
    write(tmp_path, "mine.json", user_dataset())
    result = run("--state-dir", str(tmp_path), "dataset", "list")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["DATASET", "FILES", "LUMIS", "EVENTS", "SIZE", "SOURCE", "SITES"]
    rows = {line.split()[0]: re.split(r"\s{2,}", line.strip()) for line in lines[1:]}
    assert list(rows) == [BIG, DATA, MINE, MC]
    assert rows[MINE] == [MINE, "3", "5", "39", "6.0 kB", "mine.json", "T1_US_FNAL, T2_CH_CERN, T2_XX_Local"]
    assert rows[BIG][1:3] == ["10000", "1000000"] and rows[BIG][4].endswith("TB") and rows[BIG][5] == "synthetic"


def test_dataset_list_json(tmp_path: Path) -> None:
    write(tmp_path, "mine.json", user_dataset())
    result = run("--state-dir", str(tmp_path), "dataset", "list", "--json")
    assert result.exit_code == 0, result.stderr
    listed = {d["name"]: d for d in json.loads(result.stdout)}
    assert list(listed) == [BIG, DATA, MINE, MC]
    assert listed[MINE] == {"name": MINE, "files": 3, "lumis": 5, "events": 39, "size": 6000,
                            "sites": ["T1_US_FNAL", "T2_CH_CERN", "T2_XX_Local"],
                            "source": str(tmp_path / "datasets" / "mine.json"), "synthetic": False}
    assert (listed[MC]["files"], listed[MC]["lumis"], listed[MC]["source"], listed[MC]["synthetic"]) == (
        20, 80, "synthetic", True)


def test_dataset_show(tmp_path: Path) -> None:
    result = run("--state-dir", str(tmp_path), "dataset", "show", DATA)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{DATA}  (synthetic)"
    assert lines[1].startswith("  200 files, 6000 lumis in 8 runs 367100-")
    assert lines[3].split()[:2] == ["BLOCK", "FILES"] and len(lines) == 4 + 8
    assert all(line.startswith("#") and "T2_XX_Local" in line for line in lines[4:])

    result = run("--state-dir", str(tmp_path), "dataset", "show", "--json", MC)
    shown = json.loads(result.stdout)
    assert (shown["files"], shown["runs"], shown["run_range"], len(shown["blocks"])) == (20, 1, [1, 1], 2)
    assert sum(b["files"] for b in shown["blocks"]) == 20
    assert all(b["name"].startswith(MC + "#") and b["sites"] for b in shown["blocks"])


def test_dataset_show_of_a_name_the_catalogue_lacks_shows_the_stand_in_a_task_would_read(tmp_path: Path) -> None:
    """task submit's refusal for a stand-in's locations says 'crabtui dataset show NAME' lists them."""
    fresh = "/ZZZ/Fresh-v9/MINIAODSIM"
    result = run("--state-dir", str(tmp_path), "dataset", "show", fresh)
    assert result.exit_code == 0, result.stderr
    d = generate(stand_ins.definition(fresh))
    assert result.stdout.splitlines()[:3] == [f"{fresh}  (synthetic stand-in)",
                                              f"  {d.nfiles} files, {d.lumis} lumis in run 1, {d.events} events, "
                                              f"{result.stdout.splitlines()[1].rsplit(', ', 1)[1]}",
                                              f"  sites: {', '.join(d.sites)}"]
    assert result.stderr == (f"Note: {fresh} is not in the dataset catalogue; a task reading it gets this "
                             "synthetic stand-in made from its name.\n")

    typo = "/Muon/Run2023C-PromptReco-v1/AOD"
    result = run("--state-dir", str(tmp_path), "dataset", "show", typo)
    assert result.exit_code == 0 and result.stdout.startswith(f"{typo}  (synthetic stand-in)\n")
    assert f"(did you mean '{DATA}'?)" in result.stderr

    result = run("--state-dir", str(tmp_path), "dataset", "show", "no-such-name")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == 'ERROR: unknown dataset "no-such-name" (crabtui dataset list shows them all)\n'


def test_state_dir_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "mine.json", user_dataset())
    monkeypatch.setenv("CRABTUI_STATE_DIR", str(tmp_path))
    result = run("dataset", "show", MINE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"{MINE}  ({tmp_path / 'datasets' / 'mine.json'})"


# -- synthetic stand-ins ----------------------------------------------------------------------------

SINGLE_MUON = "/SingleMuon/Run2018D-UL2018_MiniAODv2-v3/MINIAOD"
TT_MC = "/TTToSemiLeptonic_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v2/MINIAODSIM"
NANO = "/Muon/Run2022F-PromptNanoAODv10_v1-v2/NANOAOD"
RAW = "/ZeroBias/Run2023C-v1/RAW"


def shape(d: Dataset) -> tuple:
    return (d.nfiles, [b.name for b in d.blocks], [b.sites for b in d.blocks],
            [(f.lfn, f.size, f.events, list(f.lumis)) for f in d.files])


def test_a_stand_in_is_the_same_every_time_and_different_for_another_name() -> None:
    first, again = (generate(stand_ins.definition(SINGLE_MUON)) for _ in range(2))
    assert shape(first) == shape(again) and first.source == "stand-in" and first.synthetic
    other = generate(stand_ins.definition(SINGLE_MUON.replace("-v3", "-v2")))
    assert shape(other) != shape(first)


def test_a_stand_in_resembles_what_its_name_says() -> None:
    data, mc, nano, raw = (generate(stand_ins.definition(n)) for n in (SINGLE_MUON, TT_MC, NANO, RAW))
    runs = data.runs()
    assert 320_394 <= runs[0] and runs[-1] <= 325_273 and len(runs) > 1000, "Run2018D's runs, one in 2 to 4"
    assert all(f.lfn.startswith("/store/data/Run2018D/SingleMuon/MINIAOD/UL2018_MiniAODv2-v3/000/")
               for f in data.files)
    assert mc.runs() == [1] and all(f.lfn.startswith("/store/mc/RunIISummer20UL18MiniAODv2/TTToSemiLeptonic_")
                                    for f in mc.files)
    for d in (data, mc, raw):  # CMS writes files of a few GB, whatever the tier
        assert 0.5e9 < d.size / d.nfiles < 5e9
    per_file = {d.name: d.lumis / d.nfiles for d in (data, nano, raw)}
    assert per_file[RAW] < per_file[SINGLE_MUON] < per_file[NANO], "RAW files hold few lumis, NANOAOD many"
    assert all("T2_XX_Local" in b.sites and len(b.sites) >= 2 for d in (data, mc) for b in d.blocks)
    assert "T1_US_FNAL" not in {s for b in mc.blocks for s in b.sites}, "MC is at Tier-2s"
    assert stand_ins.is_mc(TT_MC) and not stand_ins.is_mc(SINGLE_MUON) and stand_ins.is_mc("/QCD/Camp-v1/GEN-SIM")


GOLDEN_2018 = (Path(__file__).parent / "corpus" / "singlemuon_2018_golden_json"
               / "Cert_314472-325175_13TeV_Legacy2018_Collisions18_JSON.txt")


def test_a_data_stand_in_holds_runs_of_its_era_and_a_certification_json_of_the_year_selects_some() -> None:
    golden = read_mask(str(GOLDEN_2018), url=False)
    for year, eras in stand_ins.ERAS.items():
        for letter, (first, last) in eras.items():
            d = generate(stand_ins.definition(f"/SingleMuon/Run{year}{letter}-UL{year}_MiniAODv2-v1/MINIAOD"))
            runs = d.runs()
            assert first <= runs[0] and runs[-1] <= last and len(runs) >= (last - first + 1) // 4, (year, letter)
            if year == 2018:
                selected = {run for f in d.files for run, lumi in zip(f.lumis.runs, f.lumis.numbers)
                            if any(low <= lumi <= high for low, high in golden.get(run, ()))}
                assert len(selected) >= 5, f"Run2018{letter}: the golden JSON selects lumis of {len(selected)} runs"
    year_only = generate(stand_ins.definition("/SingleMuon/Run2018-v1/RAW")).runs()
    assert 315_252 <= year_only[0] and year_only[-1] <= 325_273 and year_only[-1] > 320_394, "a year spans its eras"
    runs_2025 = generate(stand_ins.definition("/Muon0/Run2025C-PromptReco-v1/MINIAOD")).runs()
    runs_2026 = generate(stand_ins.definition("/JetMET0/Run2026B-PromptReco-v1/NANOAOD")).runs()
    assert runs_2025[-1] < runs_2026[0], "a year of no known run follows the last known one, not 2018"


def test_the_catalogues_own_dataset_wins_over_the_stand_in(tmp_path: Path) -> None:
    catalogue = Catalogue(str(tmp_path / "datasets"))
    with pytest.raises(UnknownDataset):
        stand_ins.load(catalogue, MINE, stand_in=False)
    assert stand_ins.load(catalogue, MINE, stand_in=True).source == "stand-in"
    write(tmp_path, "mine.json", user_dataset())
    assert stand_ins.load(Catalogue(str(tmp_path / "datasets")), MINE, stand_in=True).nfiles == 3


def test_dataset_list_marks_stand_ins_and_add_replaces_one(tmp_path: Path) -> None:
    stand_ins.register(str(tmp_path / "datasets"), MINE)
    stand_ins.register(str(tmp_path / "datasets"), SINGLE_MUON)
    listed = {d["name"]: d for d in json.loads(run("--state-dir", str(tmp_path), "dataset", "list", "--json").stdout)}
    assert (listed[MINE]["source"], listed[MINE]["synthetic"]) == ("stand-in", True)
    text = run("--state-dir", str(tmp_path), "dataset", "list").stdout
    assert re.search(rf"^{re.escape(SINGLE_MUON)} .*  synthetic stand-in  T", text, re.M)

    (tmp_path / "mine.json").write_text(json.dumps(user_dataset()))
    added = run("--state-dir", str(tmp_path), "dataset", "add", MINE, "--from", str(tmp_path / "mine.json"))
    assert added.exit_code == 0, added.stderr
    assert "3 files, 5 lumis, 39 events" in added.stdout
    listed = {d["name"]: d for d in json.loads(run("--state-dir", str(tmp_path), "dataset", "list", "--json").stdout)}
    assert listed[MINE]["synthetic"] is False and listed[MINE]["files"] == 3
    assert listed[SINGLE_MUON]["source"] == "stand-in"
    again = run("--state-dir", str(tmp_path), "dataset", "add", MINE, "--from", str(tmp_path / "mine.json"))
    assert again.exit_code == 1 and "add --replace to replace it" in again.stderr
    assert run("--state-dir", str(tmp_path), "dataset", "add", MINE, "--replace", "--from",
               str(tmp_path / "mine.json")).exit_code == 0


@pytest.mark.parametrize(("name", "document", "message"), [
    (MINE, user_dataset(MINE.replace("My", "Your")), 'name: the file describes "/YourPrimary/'),
    (MC, user_dataset(MC), "is a shipped dataset; give yours another name"),
    (MINE, {"name": MINE, "blocks": []}, "blocks: must be a non-empty list of blocks"),
])
def test_dataset_add_refuses_what_cannot_stand_for_the_name(tmp_path: Path, name, document, message) -> None:
    (tmp_path / "d.json").write_text(json.dumps(document))
    result = run("--state-dir", str(tmp_path), "dataset", "add", name, "--from", str(tmp_path / "d.json"))
    assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "datasets").exists() or not list((tmp_path / "datasets").glob("*.json"))


HI_FOREST = """\
from WMCore.Configuration import Configuration
config = Configuration()

config.section_("General")
config.General.requestName = "{name}"
config.section_("JobType")
config.JobType.pluginName = "Analysis"
config.JobType.psetName = "runForestAOD_pponAA_DATA_103X.py"
config.section_("Data")
config.Data.inputDataset = "{dataset}"
config.Data.lumiMask = "{mask}"
config.Data.runRange = "{runs}"
config.Data.splitting = "FileBased"
config.Data.unitsPerJob = 2
config.Data.totalUnits = -1
config.Data.outLFNDirBase = "/store/user/someone/HIRun2018PbPb/"
config.section_("Site")
config.Site.storageSite = "T2_US_MIT"
"""


@pytest.mark.parametrize("dataset, mask, runs", [
    ("/HIHardProbes/HIRun2018A-04Apr2019-v1/AOD", "Cert_326381-327564_HI_PromptReco_Collisions18_JSON.txt",
     "327401-327564"),
    ("/PAHighMultiplicity0/someone-RecoSkim2016_Pbp_V0Cascade_v1-97be9aa52ea60cba5455e64649c12464/USER",
     "Cert_285479-285832_HI8TeV_PromptReco_pPb_Collisions16_JSON_NoL1T.txt", "285479-285832"),
    ("/PAMinimumBias1/PARun2016C-PromptReco-v1/AOD", "Cert_285479-285832_HI8TeV_PromptReco_pPb_Collisions16_JSON_NoL1T.txt",
     "285479-285832"),
])
def test_a_heavy_ion_config_with_its_certification_json_selects_lumis_of_the_stand_in(tmp_path: Path, dataset, mask,
                                                                                        runs) -> None:
    """A heavy-ion analysis's config (HIRun2018A, a pPb skim of 2016) with the certification JSON of its
    runs beside it gets jobs: the stand-in holds runs of the heavy-ion era, not of the pp era whose
    letter or year it shares, where the JSON and run range select nothing."""
    first, last = map(int, runs.split("-"))
    certified = {str(run): [[1, 40]] for run in range(first, last + 1, 3)}
    (tmp_path / mask).write_text(json.dumps(certified))
    path = tmp_path / "crabConfig.py"
    path.write_text(HI_FOREST.format(name="HIForest", dataset=dataset, mask=mask, runs=runs))
    cfg = load_config(path)
    d = generate(stand_ins.definition(dataset))
    assert first - 2000 < d.runs()[0] and d.runs()[-1] < last + 2000, "the heavy-ion era's runs"
    jobs = split(d, algorithm="FileBased", units_per_job=2, lumi_mask=cfg.lumi_mask)
    assert len(jobs) >= 5 and all(first <= run <= last for job in jobs for run in job.lumi_mask())
    pp = generate(stand_ins.definition("/SingleMuon/Run2018A-17Sep2018-v2/MINIAOD")).runs()
    assert pp[-1] <= 316_995, "a pp era keeps its own runs"


HF_LED = """\
dataset = '/JetHT/Run2015D-v1/RAW'
run = '{run}'
jobname = dataset[1:].replace('/','__').replace('RAW','RAW_'+run)

from WMCore.Configuration import Configuration
config = Configuration()
config.section_("General")
config.General.requestName  = jobname
config.General.workArea     = 'out_crab'
config.section_("JobType")
config.JobType.pluginName   = 'Analysis'
config.JobType.psetName     = 'analysis_Collision_crab_cfg.py'
config.section_("Data")
config.Data.inputDataset    = dataset
config.Data.inputDBS        = 'global'
config.Data.splitting       = 'LumiBased'
config.Data.unitsPerJob     = 30
config.Data.publication     = True
config.Data.publishDBS      = 'phys03'
config.Data.runRange        = run
config.section_("Site")
config.Site.storageSite     = 'T2_CH_CERN'
"""


def test_a_single_run_the_stand_in_does_not_hold_is_refused_with_the_runs_it_holds(tmp_path: Path, state,
                                                                                    monkeypatch) -> None:
    """A calibration config names one run of its era (Data.runRange = '256729'); the stand-in holds a
    sample of the era's runs, so the refusal says so, names the nearest runs it holds and how to
    describe the real dataset, rather than only that the run is not among the dataset's."""
    runs = generate(stand_ins.definition("/JetHT/Run2015D-v1/RAW")).runs()
    missing = next(r for r in range(runs[0], runs[-1]) if r not in runs)
    below, above = max(r for r in runs if r < missing), min(r for r in runs if r > missing)
    monkeypatch.chdir(tmp_path)  # where the dry run makes its project directory (General.workArea)
    (tmp_path / "analysis_Collision_crab_cfg.py").write_text("import FWCore.ParameterSet.Config as cms\n")
    (tmp_path / "crab_HF_LED_cfg.py").write_text(HF_LED.format(run=missing))
    result = CliRunner().invoke(main, ["--state-dir", state.path, "task", "submit", "--dryrun", "-c",
                                       str(tmp_path / "crab_HF_LED_cfg.py")])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
    assert (f"/JetHT/Run2015D-v1/RAW is a stand-in made from its name, which holds one run in 2 to 4 of its era, and "
            f"not these: select runs it holds (the nearest are {below}, {above}), or describe the dataset with its "
            f"real runs: crabtui dataset add /JetHT/Run2015D-v1/RAW --from FILE") in result.stderr
    (tmp_path / "crab_HF_LED_cfg.py").write_text(HF_LED.format(run=below))
    ran = CliRunner().invoke(main, ["--state-dir", state.path, "task", "submit", "--dryrun", "-c",
                                    str(tmp_path / "crab_HF_LED_cfg.py")])
    assert ran.exit_code == 0 and "Using LumiBased splitting" in ran.output, ran.output
