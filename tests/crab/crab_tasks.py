"""Running tasks through the CLI in the task tests: a configuration, the command, waiting for a status."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from engine.state import StateDir
from installed import CRABTUI

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
CONFIG = """\
[General]
requestName = "{name}"
[JobType]
psetName = "pset.py"
[Data]
inputDataset = "{dataset}"
splitting = "{splitting}"
unitsPerJob = {units}
[Site]
storageSite = "T2_XX_Local"
{site}
[Debug]
timeScale = {scale}
failurePlan = [{plan}]
{debug}"""


def config_text(name: str, *, scale: float = 500, plan: str = "", dataset: str = MC, splitting: str = "FileBased",
                units: int = 5, site: str = 'blacklist = ["T2_US_Nebraska", "T2_DE_DESY"]', debug: str = "") -> str:
    """A task's TOML configuration; by default four jobs of five files of the small MC dataset, kept
    off the two flaky sites of the grid.  ``plan``: failure plan entries in TOML, e.g.
    ``{job = "2", attempt = 1, exitCode = 8021}``; ``site`` and ``debug``: more lines for those sections."""
    return CONFIG.format(name=name, scale=scale, plan=plan, dataset=dataset, splitting=splitting, units=units,
                         site=site, debug=debug)


CRAB_CONFIG_PY = """\
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = '{name}'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '{dataset}'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']
config.Debug.timeScale = {scale}
"""


def crab_config_py(name: str, *, scale: float, dataset: str = MC, more: str = "") -> str:
    """The same four jobs as ``config_text``, as a crabConfig.py written the way analyses write it;
    ``more``: lines appended (``config.Data.lumiMask = ...``, ``config.Debug.failurePlan = [...]``)."""
    return CRAB_CONFIG_PY.format(name=name, dataset=dataset, scale=scale) + more


def crabtui(state: StateDir, *args: str, cwd: Path, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([CRABTUI, "--state-dir", state.path, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **env} if env else None)


def task_status(state: StateDir, name: str, cwd: Path) -> dict:
    result = crabtui(state, "task", "status", name, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def wait_status(state: StateDir, name: str, cwd: Path, wanted: str, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while (status := task_status(state, name, cwd))["status"] != wanted:
        assert time.monotonic() < deadline, f"task stayed {status['status']}, wanted {wanted}"
        time.sleep(0.2)
    return status


def wait_until(what: str, predicate, timeout: float = 90):
    """Poll ``predicate`` until it returns something true, and return that; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value


def task_row(state: StateDir, name: str, cwd: Path) -> dict:
    """The task's row in ``task list --json`` (the task table only: it reads no status cache)."""
    listed = crabtui(state, "task", "list", "--json", cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    rows = [t for t in json.loads(listed.stdout) if name in (t["name"], t["request_name"])]
    assert len(rows) == 1, f"task list has {len(rows)} tasks named {name}"
    return rows[0]
