"""Tasks for the UI tests, submitted as a user would, and waiting on the UI without sleeping."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from crab.crab_tasks import config_text, crabtui
from crabtui.screens.task import TaskScreen
from engine.crab.grid import install_grid
from engine.crab.taskworker.taskdb import TaskDB
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir


def new_state() -> StateDir:
    """A state directory with the simulated grid (its daemon starts on first use)."""
    state = StateDir(tempfile.mkdtemp(prefix="crabui-", dir="/tmp"))  # short: a socket path fits
    install_grid(state)
    return state


def remove_state(state: StateDir) -> None:
    LocalScheddClient(state).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def submit(state: StateDir, directory: Path, name: str, *, scale: float, plan: str = "") -> str:
    """Submit a task with ``crabtui task submit``; returns its full name."""
    (directory / "crab.toml").write_text(config_text(name, scale=scale, plan=plan))
    result = crabtui(state, "task", "submit", "crab.toml", cwd=directory)
    assert result.returncode == 0, result.stderr
    return result.stdout.split("Task name: ")[1].split("\n")[0]


def submit_failing_to_submit(state: StateDir, directory: Path) -> str:
    """A crabConfig.py task (``nomask``) whose lumi mask selects no lumi: it ends SUBMITFAILED."""
    from crab.crab_tasks import crab_config_py

    (directory / "pset.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    (directory / "golden.json").write_text('{"999999": [[1, 10]]}\n')
    (directory / "crabConfig.py").write_text(crab_config_py("nomask", scale=50, more="config.Data.lumiMask = 'golden.json'\n"))
    result = crabtui(state, "task", "submit", "crabConfig.py", cwd=directory)
    assert result.returncode == 0, result.stderr
    name = result.stdout.split("Task name: ")[1].split("\n")[0]
    wait_task(state, name, "SUBMITFAILED")
    return name


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


async def open_task(pilot, name: str, timeout: float = 60) -> TaskScreen:
    """Open task ``name`` from the task list as a user does (cursor to its row, Enter); returns its screen
    once it shows the task."""
    app = pilot.app
    tasks = app.screen.query_one("#tasks")
    await wait_for(pilot, lambda: name in tasks.items, "the task in the task list", timeout)
    tasks.move_cursor(row=tasks.get_row_index(name))
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot is not None,
                   "the task screen", timeout)
    return app.screen


def cells(table, key: str) -> list[str]:
    """A row's cells as the user reads them (mark cell first)."""
    return [cell.plain for cell in table.row_cells(key)]


def tree_labels(screen) -> list[str]:
    """The lines of the screen's ``condor_q -dag`` tree, each indented by its depth."""
    lines = []

    def walk(node, depth: int) -> None:
        for child in node.children:
            lines.append("  " * depth + str(child.label))
            walk(child, depth + 1)

    walk(screen.query_one("#dag-tree").root, 0)
    return lines
