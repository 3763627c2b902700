"""crabConfig.py files as CMS analyses write them run as they are: ``crabtui task submit`` accepts each
and its jobs start.

``corpus/`` holds one directory per configuration, written for these tests in the forms real
analyses use (CRABClient's ``config()`` and WMCore's ``Configuration``, ``getUsernameFromCRIC``,
PrivateMC, ``userInputFiles``, ``scriptExe``, ``pyCfgParams``, certification JSONs beside them or
at an address, run ranges, ``useParent`` and secondary datasets, multi-threaded jobs, multi-crab
scripts whose ``crabCommand`` loop sits in a ``__main__`` block or at module level (or inside a loop
over the eras their arguments choose), helper modules
and files beside them, and every splitting mode), with the psets, scripts and input files they name.
None of their datasets is in the catalogue and most storage sites are described nowhere: nothing
is prepared for them.  Each is submitted from its own directory to the simulated grid's pool, as
its user would type it, and the test waits for one of each task's jobs to run (of a task with a
script, to finish: the script finds PSet.py and its input files where it runs), then kills the task;
multi-crab scripts with a ``__main__`` block are also run with ``--multicrab``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from crab_tasks import crabtui, task_status
from engine.crab.ap.sites import matches
from engine.crab.client.config import load_config
from engine.crab.grid import install_grid
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir

CORPUS = Path(__file__).parent / "corpus"
STARTED = ("running", "transferring", "finished")


def configs() -> list[Path]:
    found = []
    for directory in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        scripts = sorted(p for p in directory.glob("*.py")
                         if re.search(r"^(from (CRABClient\.UserUtilities|WMCore\.Configuration) import|\s+from "
                                      r"CRABClient\.UserUtilities import config$)", p.read_text(), re.M))
        texts = {p: p.read_text() for p in scripts}  # a helper module the script imports is not the config
        scripts = [p for p in scripts if not any(re.search(rf"^\s*(import|from) {p.stem}\b", text, re.M)
                                                 for other, text in texts.items() if other != p)]
        assert len(scripts) == 1, f"{directory.name}: one CRAB configuration, not {scripts}"
        found.append(scripts[0])
    return found


def copied(config: Path, tmp_path: Path) -> Path:
    """The config in a copy of its analysis directory, where task submit makes its project
    directory (General.workArea, against the directory it runs in) outside the repository."""
    here = tmp_path / config.parent.name
    shutil.copytree(config.parent, here, ignore=shutil.ignore_patterns("__pycache__"))
    return here / config.name


def grid_state():
    """An embedded schedd's state directory with the simulated grid as its pool."""
    state = StateDir(tempfile.mkdtemp(prefix="crabcorpus-", dir="/tmp"))
    install_grid(state)
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


@pytest.fixture(scope="module")
def grid():
    """One for the whole corpus."""
    yield from grid_state()


@pytest.fixture
def own_grid():
    """One for a test whose tasks would otherwise be named as another's, made the same second."""
    yield from grid_state()


def test_every_multicrab_script_with_a_main_block_is_run_as_a_script():
    texts = {c.parent.name: c.read_text() for c in configs()}
    assert {name for name, text in texts.items()
            if re.search(r"^\s*if \(?__name__ == (['\"])__main__\1\)? ?:", text, re.M) and "crabCommand" in text} \
        == set(MAIN_BLOCK_TASKS)


def test_the_corpus_covers_what_real_analyses_write():
    texts = {path.parent.name: path.read_text() for path in configs()}
    assert len(texts) >= 45
    every = "\n".join(texts.values())
    for form in ("from WMCore.Configuration import Configuration", "getUsernameFromCRIC", "'PrivateMC'",
                 "userInputFiles", "scriptExe", "pyCfgParams", "lumiMask", "runRange", "crabCommand",
                 "if __name__ == '__main__':", "ignoreLocality", "totalUnits = -1", "totalUnits = 0.1",
                 "numCores = 8", "numCores = 4", "extraJDL", "outputPrimaryDataset", "useParent = True",
                 "secondaryInputDataset", "from httplib import HTTPException", "p = Process(target=submit",
                 "lumiMask = 'https://cms-service-dqmdc.web.cern.ch/", "lumiMask = 'golden.json'",
                 "inputDBS = 'phys03'", "whitelist = ['T2_US_*'", "blacklist = ['T2_US_Vanderbilt', 'T3_*']",
                 "'scripts/haddnano.py'", "% i for i in range(1, 41)]", "lumisPerFile = 2",
                 "os.environ.get('CRAB_UNITS', '3')", "transferLogs = 1", "publication = 0", ".readlines()",
                 "inputBlocks = [", "failureLimit = 50", "partialDataset = True", "maxJobRuntimeMin = 2800",
                 "publishDBS = 'phys03'", "transferOutputs = False", "custom_crab(config)", "outputFiles = ('",
                 "pyCfgParams += [", "sendExternalFolder = True", "numCores = 8", "EventAwareLumiBased'\n",
                 "disableAutomaticOutputCollection = True", "ignoreGlobalBlacklist  = True",
                 "workArea = config.General.requestName", "totalUnits = len(config.Data.userInputFiles)",
                 "'+DESIRED_Sites=\"T2_CH_CERN\"'", "inputDBS = 'https://cmsweb.cern.ch/dbs/prod/global/DBSReader'",
                 "maxMemoryMB = 20000", "dryrun=True", "args = parser.parse_args()",
                 "from CRABClient.UserUtilities import ClientException", 'if (__name__ == "__main__") :',
                 "config.General.activity = 'analysistest'", 'config.section_("General")',
                 "config.Data.totalUnits = config.Data.unitsPerJob * NJOBS",
                 "outLFNDirBase = '/store/user/%s/' % (getUsernameFromCRIC())", "cfg = crab_config()",
                 "with Pool(2) as workers:", "inputFiles = sorted(glob.glob('", "'+REQUIRED_OS=\"rhel8\"'",
                 "inputDataset = '/Muon0/Run2026C-", "RAW#b83949de-530b-4b1c-834a-d91269020eaa'"):
        assert form in every, form
    splittings = {m for text in texts.values() for m in re.findall(r"splitting = '(\w+)'", text)}
    assert splittings == {"FileBased", "LumiBased", "EventAwareLumiBased", "Automatic", "EventBased"}
    assert any("Data.splitting =" not in text for text in texts.values()), "one leaves Data.splitting to CRAB's default"


def started(state: StateDir, name: str, cwd: Path, timeout: float = 120) -> dict:
    """The task's status once one of its jobs runs (or has run)."""
    return next(each_started(state, [name], cwd, timeout))[1]


def each_started(state: StateDir, names: list[str], cwd: Path, timeout: float = 180):
    """Yield (name, status) for each task as soon as one of its jobs runs (or has run), in the order
    they start: tasks submitted together share the slots, and a sibling whose jobs took them first
    must be killed (by the caller, once yielded) before the others can start."""
    deadline = time.monotonic() + timeout
    waiting = list(names)
    while waiting:
        for name in list(waiting):
            status = task_status(state, name, cwd)
            assert status["status"] in ("NEW", "QUEUED", "SUBMITTED"), status["message"]
            if any(job["state"] in STARTED for job in status["jobs"]):
                waiting.remove(name)
                yield name, status
                deadline = time.monotonic() + timeout  # the next has as long, once this one is killed
        if waiting:
            assert time.monotonic() < deadline, f"no job of {waiting} started: {status['message']}, " \
                f"jobs {sorted({job['state'] for job in status['jobs']})}"
            time.sleep(0.3)


def finished(state: StateDir, name: str, cwd: Path, timeout: float = 120) -> None:
    """One of the task's jobs has finished, its script having succeeded."""
    deadline = time.monotonic() + timeout
    while not any(job["state"] == "finished" for job in task_status(state, name, cwd)["jobs"]):
        assert time.monotonic() < deadline, f"no job of {name} finished"
        time.sleep(0.3)


def kill(state: StateDir, name: str, cwd: Path) -> None:
    """Kill the task; one whose last jobs finish before the task worker takes the kill up is
    COMPLETED instead, as CRAB refuses to kill a finished task."""
    killed = crabtui(state, "task", "kill", name, cwd=cwd)
    assert killed.returncode == 0 or "You cannot kill a task if it is in the COMPLETED status" in killed.stderr
    deadline = time.monotonic() + 60
    while (status := task_status(state, name, cwd))["status"] not in ("KILLED", "COMPLETED"):
        assert time.monotonic() < deadline, f"{name} was not killed"
        time.sleep(0.3)
    if status["status"] == "COMPLETED":
        assert all(job["state"] == "finished" for job in status["jobs"]), status["jobs"]


LOADING_SUBMITS = {"multicrab_module_level_py2": 2}
"""Scripts that call crabCommand('submit') at module level, and how many times."""
MULTICRAB_ONLY = {"multicrab_process_loop", "multicrab_argparse_year_loop", "multicrab_argparse_crabop",
                  "multicrab_pool_map"}
"""Multi-crab scripts whose module-level config is incomplete, or that exit without their arguments: only
their __main__ block submits."""


def task_names(submitted) -> list[str]:
    return re.findall(r"^Task name: (\S+)$", submitted.stdout, re.M)


def check_started(grid: StateDir, config: Path, cfg, name: str, status: dict) -> None:
    """One of the task's jobs runs (or has run), where the config says; then the task is killed."""
    jobs = status["jobs"]
    ran = [job for job in jobs if job["state"] in STARTED]
    if cfg.site_whitelist:  # the jobs run at whitelisted sites only, ignoreLocality or not
        sites = {job["site_history"][-1] for job in ran if job["site_history"]}
        assert sites and all(matches(site, cfg.site_whitelist) for site in sites), sites
    if cfg.job_type == "PrivateMC":  # totalUnits events in jobs of unitsPerJob
        assert len(jobs) == cfg.total_units // cfg.units_per_job
    if cfg.user_input_files:
        assert len(jobs) == -(-len(cfg.user_input_files) // cfg.units_per_job)
    if cfg.script_exe:  # the script finds its sandbox (PSet.py, JobType.inputFiles) where it runs
        finished(grid, name, config.parent)
    kill(grid, name, config.parent)


DRY_RUNS = {"multicrab_module_level_dryrun": ["pPb8TeV_Skim_PAHighMult1", "pPb8TeV_Skim_PAHighMult2"]}
"""Scripts whose crabCommand('submit', ..., dryrun=True) calls run as they load, and their requests."""


BANNED_FIRST = {  # configs whose Data.totalUnits is used up by blocks the site lists ban, and the reason given
    # /ZeroBias/Run2023C-v1/RAW's first block, at T2_IT_Pisa, is not whitelisted, and the blocks at its sites
    # hold more than 60 lumis: WMCore's LumiBased takes them first, group by group, and DagmanCreator drops them
    "multithreaded_reco": "the first 60 lumis of Data.totalUnits are all in blocks the site lists leave with no site",
}


@pytest.mark.parametrize("config", [c for c in configs() if c.parent.name not in MULTICRAB_ONLY | set(DRY_RUNS)],
                         ids=lambda p: p.parent.name)
def test_a_real_style_config_is_accepted_and_its_jobs_start(grid, config, tmp_path):
    config = copied(config, tmp_path)
    text = config.read_text()
    submitted = crabtui(grid, "task", "submit", config.name, cwd=config.parent)
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stderr == "" and "Traceback" not in submitted.stdout
    assert "Failed submitting task" not in submitted.stdout
    names = task_names(submitted)
    notes = [line for line in submitted.stdout.splitlines() if line.startswith("Note: ")]
    warnings = [line for line in submitted.stdout.splitlines() if line.startswith("Warning: ")]
    if "inputDataset" in text and "'PrivateMC'" not in text:
        assert any("the task reads a synthetic stand-in made from its name" in n for n in notes), submitted.stdout
    if re.search(r"^config\.Data\.lumiMask = 'https://", text, re.M):  # fetched if this machine has network
        assert load_config(config).lumi_mask is not None or any(
            "the lumi mask could not be fetched from https://" in w and "runs over every lumi of its input" in w
            for w in warnings), submitted.stdout
    if config.parent.name in LOADING_SUBMITS:  # crabCommand('submit') as the file loads: those are its tasks
        calls = LOADING_SUBMITS[config.parent.name]
        assert len(names) == calls and f"passed {calls} config(s) to crabCommand('submit') as it loaded" in \
            submitted.stdout
        assert re.findall(r"^Submitted \S+ as (\S+)$", submitted.stdout, re.M) == names, "crabCommand's return"
    elif "crabCommand" in text:
        assert any("is a multi-crab script: crabtui task submit submits its module-level config only" in n
                   and "--multicrab" in n for n in notes), submitted.stdout
        assert len(names) == 1
    else:
        assert len(names) == 1

    if config.parent.name in BANNED_FIRST:  # the task worker fails it, as CRAB's DagmanCreator would
        status = task_status(grid, names[0], config.parent)
        deadline = time.monotonic() + 90
        while status["status"] in ("NEW", "QUEUED"):
            assert time.monotonic() < deadline, status
            time.sleep(0.3)
            status = task_status(grid, names[0], config.parent)
        assert status["status"] == "SUBMITFAILED" and BANNED_FIRST[config.parent.name] in status["message"], status
        return
    cfg = load_config(config)  # what the test expects of the task
    for name, status in each_started(grid, names, config.parent):
        check_started(grid, config, cfg, name, status)


@pytest.mark.parametrize("multicrab", [False, True], ids=["crab submit", "python script"])
@pytest.mark.parametrize("directory", DRY_RUNS)
def test_a_scripts_crab_command_with_dryrun_prints_each_configs_jobs_and_leaves_it_uploaded(own_grid, tmp_path,
                                                                                            directory, multicrab):
    """Heavy-ion groups' multi-crab files call crabCommand('submit', config=config, dryrun=True) first, to see
    the splitting: each config gets crab submit --dryrun's summary, and its task is left UPLOADED, with its
    project directory, for crab proceed, as CRAB leaves it."""
    config = copied(next(c for c in configs() if c.parent.name == directory), tmp_path)
    before = json.loads(crabtui(own_grid, "task", "list", "--json", cwd=config.parent).stdout)
    ran = crabtui(own_grid, "task", "submit", *(["--multicrab"] if multicrab else []), config.name, cwd=config.parent)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    assert "Failed submitting task" not in ran.stdout and "Traceback" not in ran.stdout
    requests = DRY_RUNS[directory]
    assert ran.stdout.count("\nDry run\nUsing LumiBased splitting\nTask consists of ") == len(requests), ran.stdout
    for request in requests:
        assert f"To continue processing, use 'crabtui --state-dir {own_grid.path} task proceed -d " \
               f"crab_pPb_skims/crab_{request}' ({config} asked for the dry run with crabCommand('submit', ..., " \
               "dryrun=True))" in ran.stdout, ran.stdout
    assert ran.stdout.rstrip().endswith(
        f"{config}: {len(requests)} config(s) dry run: {', '.join(requests)}; nothing was submitted." if multicrab else
        f"Note: {config} passed {len(requests)} config(s) to crabCommand('submit') as it loaded: each was dry run "
        "above, nothing was submitted, and its module-level config is not submitted.")
    after = json.loads(crabtui(own_grid, "task", "list", "--json", cwd=config.parent).stdout)
    uploaded = [t for t in after if t not in before]
    assert sorted((t["request_name"], t["status"]) for t in uploaded) == [(r, "UPLOADED") for r in requests]
    assert sorted(p.name for p in (config.parent / "crab_pPb_skims").iterdir()) == [f"crab_{r}" for r in requests]


MAIN_BLOCK_TASKS = {"multicrab_main_block": 2, "multicrab_helper_module": 3, "multicrab_process_loop": 2,
                    "multicrab_argparse_year_loop": 2, "multicrab_argparse_crabop": 2, "multicrab_pool_map": 2}
"""The multi-crab scripts whose __main__ block submits, and how many tasks."""
SCRIPT_ARGS = {"multicrab_argparse_year_loop": ["--mc", "--tag", "Nov26"],
               "multicrab_argparse_crabop": ["--crabop", "submit", "--pycfg", "ntupleTree_cfg.py", "--samples",
                                             "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM",
                                             "/WJetsToLNu_TuneCP5_13TeV-madgraphMLM-pythia8/RunIISummer20UL18"
                                             "MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v2/MINIAODSIM"]}
"""The arguments their authors give the scripts that parse their own (and exit without them)."""


@pytest.mark.parametrize("config", [c for c in configs() if c.parent.name in MAIN_BLOCK_TASKS],
                         ids=lambda p: p.parent.name)
def test_multicrab_submits_every_config_the_scripts_main_block_passes_to_crab_command(grid, config, tmp_path):
    config = copied(config, tmp_path)
    args = SCRIPT_ARGS.get(config.parent.name, [])
    if config.parent.name in MULTICRAB_ONLY:  # as crab submit: the module-level config, and the way out
        refused = crabtui(grid, "task", "submit", config.name, cwd=config.parent)
        assert refused.returncode == 1 and refused.stdout == ""
        text = config.read_text()
        if "def main()" in text or not args and not re.search(r"^\w+ = \w+\(\)$", text, re.M):
            # the whole script is in main(), or its configs are made by a function: no module-level config
            assert refused.stderr.count("\n") == 1 and "it defines no 'config' at module level" in refused.stderr
            assert f"'crabtui task submit --multicrab {config}' runs its __main__ block" in refused.stderr
        elif args:  # the script's argument parser says why on the lines before crabtui's one
            last = refused.stderr.splitlines()[-1]
            assert last.startswith(f"ERROR: {config}:") and "it called sys.exit(2)" in last
            assert f"'crabtui task submit --multicrab {config} ARGS...' runs it as 'python3 {config.name} " \
                   "ARGS...' does" in last
        else:
            assert refused.stderr.count("\n") == 1
            assert f"'crabtui task submit --multicrab {config}' runs that block" in refused.stderr
    submitted = crabtui(grid, "task", "submit", "--multicrab", config.name, *args, cwd=config.parent)
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stderr == "" and "Traceback" not in submitted.stdout and "Failed submitting" not in submitted.stdout
    names = task_names(submitted)
    requests = {name.split("_crab_", 1)[1] for name in names}
    assert len(names) == len(requests) == MAIN_BLOCK_TASKS[config.parent.name], submitted.stdout
    assert submitted.stdout.rstrip().endswith(f"{len(names)} task(s) submitted: {', '.join(names)}.")
    cfg = load_config(config) if config.parent.name not in MULTICRAB_ONLY else None
    for name, status in each_started(grid, names, config.parent):
        assert status["jobs"], name
        if cfg is not None and cfg.site_whitelist:
            sites = {job["site_history"][-1] for job in status["jobs"] if job["site_history"]}
            assert all(matches(site, cfg.site_whitelist) for site in sites), sites
        kill(grid, name, config.parent)


def test_on_a_bare_machine_a_config_without_site_lists_runs_and_a_whitelist_elsewhere_is_refused(tmp_path):
    """No pool file: the pool is this machine (T2_XX_Local), where every stand-in is hosted, with slots
    the size of a glidein pilot, where a 4-core job runs."""
    state = StateDir(str(tmp_path / "state"))
    try:
        for directory in ("ttbar_semilep_mc", "privatemc_minbias_gen", "private_nano_4threads"):
            here = copied(CORPUS / directory / "crabConfig.py", tmp_path).parent
            submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=here)
            assert submitted.returncode == 0, submitted.stderr
            name = re.search(r"^Task name: (\S+)$", submitted.stdout, re.M).group(1)
            status = started(state, name, here)
            assert all(job["site_history"] in ([], ["T2_XX_Local"]) for job in status["jobs"]), status["jobs"]
            kill(state, name, here)
        here = copied(CORPUS / "user_input_files" / "crabConfig.py", tmp_path).parent
        refused = crabtui(state, "task", "submit", "crabConfig.py", cwd=here)
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1
        assert "The CRAB server backend refuses to send jobs to the Grid scheduler." in refused.stderr
        assert "User whitelist is ['T2_CH_CERN']." in refused.stderr
        assert "the pool's sites are T2_XX_Local" in refused.stderr and "pool.toml" in refused.stderr
    finally:
        LocalScheddClient(state).shutdown()


REFUSED = {  # what real configurations set that cannot run here, and the reason given
    "config.Data.useParent = True\nconfig.Data.inputDataset = '/ZeroBias/Run2023C-v1/RAW'":
        "Data.useParent: The CRAB3 server backend refuses to submit jobs to the Grid scheduler because you specified "
        "useParents=True but some your files have no parents. Example: /store/data/Run2023C/ZeroBias/RAW/v1/",
    "config.Data.useParent = True\nconfig.Data.secondaryInputDataset = '/TTbar/Fall17-v1/GEN-SIM-RAW'":
        "Parameters Data.useParent and Data.secondaryInputDataset cannot be used together",
    "config.Site.requireAccelerator = True": "Site.requireAccelerator (True) cannot be simulated: its jobs must run on "
                                             "GPU slots (request_GPUs), and the embedded pool's slots advertise no "
                                             "GPUs.",
    "config.JobType.pluginName = 'CopyCat'": "JobType.pluginName ('CopyCat') cannot be simulated: the CopyCat job type "
                                             "starts from a task of a CRAB server",
    "config.Data.outputPrimaryDataset = 'MyTTbar'": "Analysis job type with input dataset does not accept an output "
                                                    "primary dataset name to be specified",
    "config.Data.splitting = 'EventBased'": "EventBased splitting generates events: it needs JobType.pluginName = "
                                            "'PrivateMC'.",
    "config.Site.whitelist = ['T2_US_Purdue']": "User whitelist is ['T2_US_Purdue'].",
    "config.Data.ignoreLocality = True\nconfig.Site.whitelist = ['T2_US_*']\nconfig.JobType.numCores = 2":
        "The lists allow T2_US_Nebraska, whose slots cannot hold jobs of 2 core(s) and 2500 MB: ask for less "
        "(JobType.numCores, JobType.maxMemoryMB) to run there.",
    "config.JobType.numCores = 16\nconfig.JobType.maxMemoryMB = 30000":
        "no slot for jobs of 16 core(s) and 30000 MB",
    # a stand-in takes the blocks of its dataset that DAS names (raw_rereco_das_block_ids), not another dataset's
    "config.Data.inputBlocks = ['/TTToSemiLeptonic_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL17MiniAODv2-106X_mc2017_"
    "realistic_v9-v1/MINIAODSIM#9c3a2c4e-0d4f-4c43-9e58-5b1f3f1c2a77']": "Data.inputBlocks: none of its 1 block(s) is "
                                                                           "a block of dataset",
    "config.JobType.sendPythonFolder = True": "Parameter JobType.sendPythonFolder has been deprecated. Please remove "
                                              "it. Reason: Now pythonFolder is always added to sandbox.",
    "config.JobType.pluginName = 'PrivateMC'\nconfig.Data.unitsPerJob = 1000\nconfig.JobType.eventsPerLumi = 250":
        "Reason: Use Data.lumisPerFile instead. With Data.unitsPerJob = 1000, Data.lumisPerFile = 4 makes lumis of 250 "
        "events.",
    "config.JobType.inputFiles = ['btag_sf_2018.csv']": "The input file 'btag_sf_2018.csv' taken from parameter "
                                                        "config.JobType.inputFiles cannot be found",
    "import yaml_settings_of_this_analysis": "No module named 'yaml_settings_of_this_analysis'. Make the module "
                                            "yaml_settings_of_this_analysis importable where crabtui runs.",
}


@pytest.mark.parametrize("line", REFUSED, ids=lambda line: line.split("=")[0].split()[-1])
def test_what_cannot_run_is_refused_in_one_line_that_says_why(grid, tmp_path, line):
    base = (CORPUS / "ttbar_semilep_mc" / "crabConfig.py").read_text()
    (tmp_path / "ntuplizer_cfg.py").write_text("")
    (tmp_path / "crabConfig.py").write_text(base + line + "\n")
    before = json.loads(crabtui(grid, "task", "list", "--json", cwd=tmp_path).stdout)
    result = crabtui(grid, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"ERROR: {tmp_path / 'crabConfig.py'}") and result.stderr.count("\n") == 1
    assert REFUSED[line] in result.stderr
    assert json.loads(crabtui(grid, "task", "list", "--json", cwd=tmp_path).stdout) == before, "no task recorded"


MEANINGS = {  # what crab submit makes of configurations that write values its client passes on unchecked
    "flags_as_integers": {"transfer_logs": True, "transfer_outputs": True, "units_per_job": 35000,
                          "max_memory_mb": 2500},  # flags as 0/1, numbers as text
    "env_driven_dataset": {"units_per_job": 3, "max_memory_mb": 2500, "storage_site": "T2_DE_DESY"},
    "phys03_publish_long_runtime": {"max_job_runtime_min": 2750},  # lowered, as CRAB's task worker does
    "logs_only_no_output_transfer": {"transfer_outputs": False, "transfer_logs": True},
    "userfiles_readlines": {"user_input_files": tuple(f"/store/user/someone/HNL_M5_ctau10mm/GENSIM/230412_101010/0000/"
                                                      f"gensim_{i}.root" for i in range(1, 7))},  # lines stripped
    "custom_crab_helper": {"storage_site": "T3_US_NotreDame"},  # set by the helper the file calls
    "reco_8cores_16gb_tuple_outputs": {"num_cores": 8, "max_memory_mb": 16000},
    "digi_8cores_20gb_user_files": {"num_cores": 8, "max_memory_mb": 20000, "max_job_runtime_min": 2750},
    "userfiles_script_workarea_is_request": {"total_units": 5, "work_area": "dijetPbPb2023_pfJets_eta1v6_mixing_part1"},
}


@pytest.mark.parametrize("directory", MEANINGS)
def test_values_written_as_analyses_write_them_mean_what_crab_makes_of_them(directory):
    cfg = load_config(next(c for c in configs() if c.parent.name == directory))
    assert {key: getattr(cfg, key) for key in MEANINGS[directory]} == MEANINGS[directory]


def test_crabs_warnings_for_such_values_are_printed_at_submit(grid, tmp_path):
    """crab submit's warning for General.failureLimit, and its task worker's for a runtime above 2750 minutes."""
    for directory, warning in (("failure_limit_partial_dataset", "You have specified deprecated parameter "
                                                                 "'failureLimit'"),
                               ("phys03_publish_long_runtime", "Task requests 2800 minutes of runtime, but only 2750 "
                                                               "are guaranteed to be available")):
        config = copied(next(c for c in configs() if c.parent.name == directory), tmp_path)
        dry = crabtui(grid, "task", "submit", "--dryrun", config.name, cwd=config.parent)
        assert dry.returncode == 0 and any(line.startswith("Warning: ") and warning in line
                                           for line in dry.stdout.splitlines()), dry.stdout + dry.stderr
    ignored = [line for line in dry.stdout.splitlines() if "accepted, with no effect here: " in line]
    assert ignored == [f"Note: {config}: accepted, with no effect here: "
                       "Data.inputDBS (datasets come from crabtui's catalogue); Data.publication (nothing "
                       "is published); Data.publishDBS (nothing is published)."], dry.stdout


GLOBAL_DBS_NOTES = {  # what the note names of configs that write the global DBS, by its alias or its address
    "doublemuon_2018b_golden_url": None,  # its outLFNDirBase and outputDatasetTag name its outputs' directory
    "ppref_forest_dbs_address_desired_sites": "JobType.allowUndistributedCMSSW (no CMSSW release); "
                                              "Data.allowNonValidInputDataset (the catalogue's datasets are all valid).",
}


@pytest.mark.parametrize("directory", GLOBAL_DBS_NOTES)
def test_the_global_dbs_named_as_crab_defaults_it_is_not_noted_as_without_effect(grid, directory, tmp_path):
    """Many analyses write Data.inputDBS = 'global', CRAB's default; a note naming it would be noise."""
    config = copied(next(c for c in configs() if c.parent.name == directory), tmp_path)
    dry = crabtui(grid, "task", "submit", "--dryrun", config.name, cwd=config.parent)
    noted = [line for line in dry.stdout.splitlines() if "accepted, with no effect here: " in line]
    note = GLOBAL_DBS_NOTES[directory]
    assert noted == ([f"Note: {config}: accepted, with no effect here: {note}"] if note else []), dry.stdout


def test_a_config_driven_by_the_environment_takes_its_submit_scripts_values(grid, tmp_path):
    """CRAB_DATASET=... CRAB_UNITS=... crab submit crab_config.py, as its submit script runs it."""
    config = copied(next(c for c in configs() if c.parent.name == "env_driven_dataset"), tmp_path)
    env = {"CRAB_DATASET": "/Tau/Run2018D-UL2018_MiniAODv2-v1/MINIAOD", "CRAB_UNITS": "7",
           "CRAB_REQUESTNAME": "Tau_2018D_skim"}
    dry = crabtui(grid, "task", "submit", "--dryrun", config.name, cwd=config.parent, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "Data.inputDataset /Tau/Run2018D-UL2018_MiniAODv2-v1/MINIAOD is not in the dataset catalogue" in dry.stdout
    assert "The longest job will process 7 files" in dry.stdout, dry.stdout
    refused = crabtui(grid, "task", "submit", config.name, cwd=config.parent, env={"CRAB_UNITS": "seven"})
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "Parameter Data.unitsPerJob requires a value of type integer (while a value of type str was given: " \
           "'seven')" in refused.stderr
