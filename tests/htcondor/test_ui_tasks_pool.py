"""The UI's task screens, and ``crabtui watch``, on a CRAB task running on the real test pool: one
headless pass through the task list, the task's jobs, its ``condor_q -dag`` tree from the pool's
queue, sites, errors and dagman.out, and a job's drilldown with its ClassAd from the pool."""

from __future__ import annotations

import asyncio
import functools
import shutil

import htcondor2
import pytest

from crabtui.app import CrabApp
from crabtui.screens.job import JobScreen
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from engine.state import StateDir
from textual.widgets import Log
from pool_user import STEADY_SITES, PoolUser, config
from ui.ui_tasks import cells, wait_for as wait_for_app

pytestmark = pytest.mark.htcondor

wait_for = functools.partial(wait_for_app, timeout=300)


@pytest.fixture
def user(htcondor_pool):
    user = PoolUser(htcondor_pool)
    yield user
    htcondor2.Schedd().act(htcondor2.JobAction.Remove, f'regexp("^{user.state}/", Iwd)')
    shutil.rmtree(user.home, ignore_errors=True)


def test_the_task_screens_follow_a_task_on_the_pool(user):
    plan = '{job = "2", attempt = 1, exitCode = 8021}, {job = "3", attempt = 1, exitCode = 8006}'
    name = user.submit("crab.toml", config("uipool", plan=plan, total=40, scale=40,
                                           sites=STEADY_SITES))
    doomed = user.submit("doomed.toml", config("doomed", total=40, scale=2, sites=("T2_XX_Local",)))

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: name in tasks.items, "the task in the task list")
        tasks.move_cursor(row=tasks.get_row_index(name))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot is not None,
                       "the task screen")
        screen = app.screen
        await pilot.press("2")
        queue = screen.query_one("#queue-table")
        await wait_for(pilot, lambda: any(r.is_dagman for r in queue.items.values())
                       and any(r.word == "running" and not r.is_dagman for r in queue.items.values()),
                       "a job running under the task's DAGMan in the pool's queue")
        await wait_for(pilot, lambda: screen.snapshot.task.status == "FAILED", "the task FAILED")
        await pilot.press("1")
        jobs = screen.query_one("#job-table")
        await wait_for(pilot, lambda: jobs.row_count == 4 and cells(jobs, "3")[2] == "✖ failed", "four jobs")
        assert cells(jobs, "2")[2] == "✔ finished" and cells(jobs, "2")[8] == "1"  # one retry
        await pilot.press("3")
        sites = screen.query_one("#site-table")
        assert {"T2_CH_CERN", "T1_US_FNAL", "T2_XX_Local"} <= set(sites.items)
        await pilot.press("4")
        assert cells(screen.query_one("#error-table"), "8006")[1:3] == ["8006", "1"]
        await pilot.press("5")
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: any("EXITING WITH STATUS 1" in line for line in log.lines),
                       "the pool's dagman.out")
        await pilot.press("1")
        jobs.move_cursor(row=jobs.get_row_index("2"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "the job screen")
        job = app.screen
        attempts = job.query_one("#attempt-table")
        await wait_for(pilot, lambda: attempts.row_count == 2, "two attempts")
        first, second = cells(attempts, "0"), cells(attempts, "1")
        assert first[8:10] == ["8021", "⟳ retry"] and second[8:10] == ["0", "✔ ok"] and first[2] != second[2]
        await pilot.press("2")
        classad = "\n".join(job.query_one("#classad-text").lines)
        assert 'CRAB_Id = "2"' in classad and "GLIDEIN_CMSSite" in classad  # the pool's ad: matched a site

        await pilot.press("escape", "escape")  # the task list: kill the other task from the keyboard
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: doomed in tasks.items, "the running task in the list")
        tasks.move_cursor(row=tasks.get_row_index(doomed))
        await pilot.press("K")
        await pilot.press("y")
        await wait_for(pilot, lambda: tasks.items[doomed].task.status == "KILLED", "the task killed on the pool")
        dagman = tasks.items[doomed].task.dagman_id
        assert not htcondor2.Schedd().query(f"ClusterId == {dagman}", ["JobStatus"]) or \
            htcondor2.Schedd().query(f"ClusterId == {dagman}", ["JobStatus"])[0]["JobStatus"] == 3

    async def main() -> None:
        backend = Backend(StateDir(str(user.state)), "htcondor")
        async with CrabApp(backend, interval=0.5).run_test(size=(120, 30)) as pilot:
            await scenario(pilot)

    asyncio.run(main())
    watched = user.run("watch", "uipool", "--interval", "0.5")
    assert watched.returncode == 1 and "FAILED" in watched.stdout, watched.stdout + watched.stderr
