"""Screens as the user sees them, at 80x24 and 160x50, from tasks fixed in their files, a DAG run to
its end and a fixed clock (``pytest --snapshot-update`` records them again after a deliberate
change): a few in colour, and every screen, tab and dialog without (NO_COLOR), where states show
through glyphs and weight alone."""

from __future__ import annotations

import re
import time

import pytest
from textual.widgets import Input

from crabtui.app import CrabApp
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from crabtui.screens.dag import DagScreen
from crabtui.screens.dags import DagsScreen
from crabtui.screens.node import NodeScreen
from engine.schedd.local.client import LocalScheddClient
from ui_fixed import NOW
from ui_tasks import crabtui, wait_for

LIVE = "231114_211000:alice_crab_lumis"

pytestmark = pytest.mark.usefixtures("utc")  # times on screen do not depend on the machine


def app(state, task: str | None = None) -> CrabApp:
    return CrabApp(Backend(state), clock=lambda: NOW, task=task)


OWNER = {"LOGNAME": "alice", "USER": "alice"}
DAG_JOB = "executable = /bin/sh\narguments = \"-c 'echo $(JOB); exit $(code)'\"\noutput = $(JOB).out\nqueue\n"
DAG = ('JOB A job.sub\nJOB D job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\n'
       'VARS B code="2"\nRETRY B 1\nPARENT A CHILD B\nPARENT B CHILD C\n')


@pytest.fixture(scope="module")
def dag_run(fixed, tmp_path_factory):
    """A DAG of alice's run to its end on the fixed engine, as its first jobs: A and D done, B
    failed after its retry, C futile.  Its directory is ``./dag`` of the directory returned."""
    base = tmp_path_factory.mktemp("dagrun")
    directory = base / "dag"
    directory.mkdir()
    (directory / "job.sub").write_text(DAG_JOB)
    (directory / "d.dag").write_text(DAG)
    result = crabtui(fixed, "dag", "submit", "d.dag", cwd=directory, env=OWNER)
    assert result.returncode == 0, result.stderr
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    deadline = time.monotonic() + 90
    with LocalScheddClient(fixed) as schedd:
        while schedd.query(f"ClusterId == {cluster}", ["JobStatus"]):
            assert time.monotonic() < deadline, "the DAG did not end"
            time.sleep(0.1)
    return base, cluster


async def dags_shown(pilot) -> None:
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DagsScreen) and pilot.app.screen.table.row_count,
                   "the DAG list")
    await pilot.pause()


async def dag_shown(pilot) -> None:
    await dags_shown(pilot)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DagScreen) and pilot.app.screen.table.row_count == 5,
                   "the DAG's nodes")
    await pilot.pause()


async def node_shown(pilot) -> None:
    await dag_shown(pilot)
    table = pilot.app.screen.table
    table.move_cursor(row=table.get_row_index("B"))
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, NodeScreen) and pilot.app.screen.snapshot,
                   "node B")
    await pilot.pause()


DAG_VIEWS = {"dags": dags_shown, "dag-nodes": dag_shown, "node": node_shown}


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("view", list(DAG_VIEWS))
def test_dag_screens(snap_compare, fixed, dag_run, monkeypatch, view, size):
    base, _ = dag_run
    monkeypatch.chdir(base)  # paths on screen are shown from here: ./dag/d.dag
    for name, value in OWNER.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(app(fixed), terminal_size=size, run_before=DAG_VIEWS[view])


def test_dag_nodes_in_colour_80x24(snap_compare, fixed, dag_run, monkeypatch):
    monkeypatch.chdir(dag_run[0])
    for name, value in OWNER.items():
        monkeypatch.setenv(name, value)
    assert snap_compare(app(fixed), terminal_size=(80, 24), run_before=dag_shown)


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
    "job-why": (LIVE, lambda pilot: job_tab(pilot, "7")),
}


async def job_tab(pilot, tab: str) -> None:
    await job_shown(pilot)
    await pilot.press(tab)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("view", list(VIEWS))
def test_without_colour(snap_compare, fixed, monkeypatch, view, size):
    monkeypatch.setenv("NO_COLOR", "1")
    task, shown = VIEWS[view]
    assert snap_compare(app(fixed, task), terminal_size=size, run_before=shown)
