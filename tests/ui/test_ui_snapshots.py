"""Screens as the user sees them, at 80x24 and 160x50, from tasks fixed in their files and a
fixed clock (``pytest --snapshot-update`` records them again after a deliberate change): a few in
colour, and every screen, tab and dialog without (NO_COLOR), where states show through glyphs
and weight alone."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from crabtui.app import CrabApp
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from ui_fixed import NOW
from ui_tasks import wait_for

LIVE = "231114_211000:alice_crab_lumis"

pytestmark = pytest.mark.usefixtures("utc")  # times on screen do not depend on the machine


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


async def task_shown(pilot, *keys: str) -> None:
    await jobs_shown(pilot)
    for key in keys:
        await pilot.press(key)
        await pilot.pause()


async def job_shown(pilot) -> None:
    await jobs_shown(pilot)
    jobs = pilot.app.screen.query_one("#job-table")
    jobs.move_cursor(row=jobs.get_row_index("4"))  # failed for good, after a retry
    await pilot.press("enter")
    await wait_for(pilot, lambda: getattr(pilot.app.screen, "job_id", None) == "4" and pilot.app.screen.snapshot,
                   "job 4")
    await wait_for(pilot, lambda: pilot.app.screen.query_one("#attempt-table").row_count == 2, "its attempts")
    await pilot.pause()


async def resubmit_filled(pilot) -> None:
    """The resubmit form with a value refused, its error shown, and the focus on the buttons."""
    await task_shown(pilot, "R")
    form = pilot.app.screen
    form.query_one("#maxmemory", Input).value = "99999999"
    form.action_submit()
    form.query_one("#yes").focus()
    await pilot.pause()


VIEWS = {
    "tasks": (None, tasks_shown),
    "jobs": (LIVE, jobs_shown),
    "dag": (LIVE, lambda pilot: task_shown(pilot, "2")),
    "sites": (LIVE, lambda pilot: task_shown(pilot, "3")),
    "errors": (LIVE, lambda pilot: task_shown(pilot, "4")),
    "log": (LIVE, lambda pilot: task_shown(pilot, "5")),
    "job": (LIVE, job_shown),
    "kill": (LIVE, lambda pilot: task_shown(pilot, "K")),
    "resubmit": (LIVE, resubmit_filled),
    "help": (LIVE, lambda pilot: task_shown(pilot, "question_mark")),
    "help-end": (LIVE, lambda pilot: task_shown(pilot, "question_mark", "end")),
}


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("view", list(VIEWS))
def test_without_colour(snap_compare, fixed, monkeypatch, view, size):
    monkeypatch.setenv("NO_COLOR", "1")
    task, shown = VIEWS[view]
    assert snap_compare(app(fixed, task), terminal_size=size, run_before=shown)
