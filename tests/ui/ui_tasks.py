"""Tasks for the UI tests, submitted as a user would, and waiting on the UI without sleeping."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from engine.crab.taskdb import TaskDB
from engine.state import StateDir

CONFIG = """\
[General]
requestName = "{name}"
[JobType]
psetName = "pset.py"
[Data]
inputDataset = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
splitting = "FileBased"
unitsPerJob = 5
[Site]
storageSite = "T2_XX_Local"
blacklist = ["T2_US_Nebraska", "T2_DE_DESY"]
[Debug]
timeScale = {scale}
failurePlan = [{plan}]
"""
"""Four jobs of five files of the small MC dataset, kept off the two flaky sites of the grid."""


def crabtui(state: StateDir, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("crabtui"), "--state-dir", state.path, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def submit(state: StateDir, directory: Path, name: str, *, scale: float, plan: str = "") -> str:
    """Submit a task with ``crabtui task submit``; returns its full name."""
    (directory / "crab.toml").write_text(CONFIG.format(name=name, scale=scale, plan=plan))
    result = crabtui(state, "task", "submit", "crab.toml", cwd=directory)
    assert result.returncode == 0, result.stderr
    return result.stdout.split("Task name: ")[1].split("\n")[0]


def wait_task(state: StateDir, name: str, status: str, timeout: float = 120) -> None:
    """Until the task table says ``status``."""
    db = TaskDB(state.tasks)
    try:
        deadline = time.monotonic() + timeout
        while (now := db.get(name).status) != status:
            assert time.monotonic() < deadline, f"task {name} stayed {now}, wanted {status}"
            time.sleep(0.1)
    finally:
        db.close()


async def wait_for(pilot, condition: Callable[[], object], what: str, timeout: float = 60) -> None:
    """Let the app run until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def cells(table, key: str) -> list[str]:
    """A row's cells as the user reads them (mark cell first)."""
    return [getattr(cell, "plain", str(cell)) for cell in table.get_row(key)]
