"""crabConfig.py files as CMS analyses write them run as they are: ``crabtui task submit`` accepts each
and its jobs start.

``corpus/`` holds one directory per configuration, written for these tests in the forms real
analyses use (CRABClient's ``config()`` and WMCore's ``Configuration``, ``getUsernameFromCRIC``,
PrivateMC, ``userInputFiles``, ``scriptExe``, ``pyCfgParams``, lumi masks and run ranges,
multi-crab scripts whose ``crabCommand`` loop sits in a ``__main__`` block, helper modules and
files beside them, and every splitting mode), with the psets, scripts and input files they name.
None of their datasets is in the catalogue and most storage sites are described nowhere: nothing
is prepared for them.  Each is submitted from its own directory to the simulated grid's pool, as
its user would type it, and the test waits for one of the task's jobs to run, then kills the task.
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
                         if re.search(r"^from (CRABClient\.UserUtilities|WMCore\.Configuration) import", p.read_text(), re.M))
        assert len(scripts) == 1, f"{directory.name}: one CRAB configuration, not {scripts}"
        found.append(scripts[0])
    return found


@pytest.fixture(scope="module")
def grid():
    """One embedded schedd with the simulated grid as its pool, for the whole corpus."""
    state = StateDir(tempfile.mkdtemp(prefix="crabcorpus-", dir="/tmp"))
    install_grid(state)
    yield state
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def test_the_corpus_covers_what_real_analyses_write():
    texts = {path.parent.name: path.read_text() for path in configs()}
    assert len(texts) >= 20
    every = "\n".join(texts.values())
    for form in ("from WMCore.Configuration import Configuration", "getUsernameFromCRIC", "'PrivateMC'",
                 "userInputFiles", "scriptExe", "pyCfgParams", "lumiMask", "runRange", "crabCommand",
                 "if __name__ == '__main__':", "ignoreLocality", "totalUnits = -1", "totalUnits = 0.1",
                 "numCores = 8", "extraJDL", "outputPrimaryDataset"):
        assert form in every, form
    splittings = {m for text in texts.values() for m in re.findall(r"splitting = '(\w+)'", text)}
    assert splittings == {"FileBased", "LumiBased", "EventAwareLumiBased", "Automatic", "EventBased"}
    assert any("Data.splitting =" not in text for text in texts.values()), "one leaves Data.splitting to CRAB's default"


def started(state: StateDir, name: str, cwd: Path, timeout: float = 120) -> dict:
    """The task's status once one of its jobs runs (or has run)."""
    deadline = time.monotonic() + timeout
    while True:
        status = task_status(state, name, cwd)
        assert status["status"] in ("NEW", "QUEUED", "SUBMITTED"), status["message"]
        if any(job["state"] in STARTED for job in status["jobs"]):
            return status
        assert time.monotonic() < deadline, f"no job of {name} started: {status['message']}"
        time.sleep(0.3)


def kill(state: StateDir, name: str, cwd: Path) -> None:
    assert crabtui(state, "task", "kill", name, cwd=cwd).returncode == 0
    deadline = time.monotonic() + 60
    while task_status(state, name, cwd)["status"] != "KILLED":
        assert time.monotonic() < deadline, f"{name} was not killed"
        time.sleep(0.3)


@pytest.mark.parametrize("config", configs(), ids=lambda p: p.parent.name)
def test_a_real_style_config_is_accepted_and_its_jobs_start(grid, config):
    text = config.read_text()
    submitted = crabtui(grid, "task", "submit", config.name, cwd=config.parent)
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stderr == "" and "Traceback" not in submitted.stdout
    name = re.search(r"^Task name: (\S+)$", submitted.stdout, re.M).group(1)
    notes = [line for line in submitted.stdout.splitlines() if line.startswith("Note: ")]
    if "inputDataset" in text and "'PrivateMC'" not in text:
        assert any("the task reads a synthetic stand-in made from its name" in n for n in notes), submitted.stdout
    if "crabCommand" in text:
        assert any("is a multi-crab script: crabtui task submit submits its module-level config only" in n
                   for n in notes), submitted.stdout

    cfg = load_config(config)  # what the test expects of the task
    status = started(grid, name, config.parent)
    jobs = status["jobs"]
    ran = [job for job in jobs if job["state"] in STARTED]
    if cfg.site_whitelist:  # the jobs run at whitelisted sites only, ignoreLocality or not
        sites = {job["site_history"][-1] for job in ran if job["site_history"]}
        assert sites and all(matches(site, cfg.site_whitelist) for site in sites), sites
    if cfg.job_type == "PrivateMC":  # totalUnits events in jobs of unitsPerJob
        assert len(jobs) == cfg.total_units // cfg.units_per_job
    if cfg.user_input_files:
        assert len(jobs) == -(-len(cfg.user_input_files) // cfg.units_per_job)
    kill(grid, name, config.parent)


def test_on_a_bare_machine_a_config_without_site_lists_runs_and_a_whitelist_elsewhere_is_refused(tmp_path):
    """No pool file: the pool is this machine (T2_XX_Local), where every stand-in is hosted."""
    state = StateDir(str(tmp_path / "state"))
    try:
        for directory in ("ttbar_semilep_mc", "privatemc_minbias_gen"):
            submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=CORPUS / directory)
            assert submitted.returncode == 0, submitted.stderr
            name = re.search(r"^Task name: (\S+)$", submitted.stdout, re.M).group(1)
            started(state, name, CORPUS / directory)
            kill(state, name, CORPUS / directory)
        refused = crabtui(state, "task", "submit", "crabConfig.py", cwd=CORPUS / "user_input_files")
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1
        assert "The CRAB server backend refuses to send jobs to the Grid scheduler." in refused.stderr
        assert "User whitelist is ['T2_CH_CERN']." in refused.stderr
        assert "the pool's sites are T2_XX_Local" in refused.stderr and "pool.toml" in refused.stderr
    finally:
        LocalScheddClient(state).shutdown()


REFUSED = {  # what real configurations set that cannot run here, and the reason given
    "config.Data.useParent = True": "Data.useParent (True) cannot be simulated: its jobs would also read each input "
                                    "file's parent files, and the dataset catalogue knows no parentage.",
    "config.Data.secondaryInputDataset = '/TTbar/Fall17-v1/GEN-SIM-RAW'":
        "Data.secondaryInputDataset ('/TTbar/Fall17-v1/GEN-SIM-RAW') cannot be simulated",
    "config.Site.requireAccelerator = True": "Site.requireAccelerator (True) cannot be simulated: its jobs must run on "
                                             "GPU slots, and no site of the simulated grid has one.",
    "config.JobType.pluginName = 'CopyCat'": "JobType.pluginName ('CopyCat') cannot be simulated: the CopyCat job type "
                                             "starts from a task of a CRAB server",
    "config.Data.outputPrimaryDataset = 'MyTTbar'": "Analysis job type with input dataset does not accept an output "
                                                    "primary dataset name to be specified",
    "config.Data.splitting = 'EventBased'": "EventBased splitting generates events: it needs JobType.pluginName = "
                                            "'PrivateMC'.",
    "config.Site.whitelist = ['T2_US_Purdue']": "User whitelist is ['T2_US_Purdue'].",
    "config.JobType.numCores = 16\nconfig.JobType.maxMemoryMB = 30000":
        "no slot for jobs of 16 core(s) and 30000 MB",
    "config.Data.inputBlocks = ['9c3a2c4e-0d4f-4c43-9e58-5b1f3f1c2a77']": "Data.inputBlocks: none of its 1 block(s) is "
                                                                         "a block of dataset",
    "config.Data.lumiMask = 'https://127.0.0.1:9/Cert_Collisions18_JSON.txt'": "cannot download it (",
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
