"""Screens as the user sees them, at 80x24 and 160x50, from tasks fixed in their files and a
fixed clock (``pytest --snapshot-update`` records them again after a deliberate change)."""

from __future__ import annotations

import pytest

from crabtui.app import CrabApp
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from engine.schedd.local.client import LocalScheddClient
from ui_fixed import NOW, build
from ui_tasks import wait_for

LIVE = "231114_211000:alice_crab_lumis"

pytestmark = pytest.mark.usefixtures("utc")  # times on screen do not depend on the machine


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    from conftest import new_state, remove_state

    state = new_state()
    build(state)
    LocalScheddClient(state).ping()  # the engine answers, with an empty queue
    yield state
    remove_state(state)


def app(state, task: str | None = None) -> CrabApp:
    return CrabApp(Backend(state), clock=lambda: NOW, task=task)


async def tasks_shown(pilot) -> None:
    table = pilot.app.screen.query_one("#tasks")
    await wait_for(pilot, lambda: table.row_count == 2, "the two tasks")
    await pilot.pause()


async def jobs_shown(pilot) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, TaskScreen) and pilot.app.screen.snapshot,
                   "the task screen")
    await wait_for(pilot, lambda: pilot.app.screen.query_one("#job-table").row_count == 8, "the eight jobs")
    await pilot.pause()


def test_task_list_80x24(snap_compare, fixed):
    assert snap_compare(app(fixed), terminal_size=(80, 24), run_before=tasks_shown)


def test_node_table_with_cooloff_timers_80x24(snap_compare, fixed):
    assert snap_compare(app(fixed, LIVE), terminal_size=(80, 24), run_before=jobs_shown)


def test_node_table_160x50(snap_compare, fixed):
    assert snap_compare(app(fixed, LIVE), terminal_size=(160, 50), run_before=jobs_shown)


def test_sites_tab_160x50(snap_compare, fixed):
    async def sites(pilot):
        await jobs_shown(pilot)
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(app(fixed, LIVE), terminal_size=(160, 50), run_before=sites)


def test_kill_confirmation_80x24(snap_compare, fixed):
    async def kill(pilot):
        await jobs_shown(pilot)
        await pilot.press("K")
        await pilot.pause()

    assert snap_compare(app(fixed, LIVE), terminal_size=(80, 24), run_before=kill)
