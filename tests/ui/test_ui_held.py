"""The held jobs view on a real embedded engine: every held job with how long it has been held
and why, grouped by reason, and the jobs of one reason released together from there."""

from __future__ import annotations

import getpass
import time

from crabtui.app import CrabApp
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.screens.held import HeldScreen
from crabtui.snapshots import Backend
from engine.schedd.api import JobAction, JobStatus
from engine.schedd.local.client import LocalScheddClient
from test_ui_dags import info, job_status, notices, submit_dag
from test_ui_views import INTERVAL, drive
from ui_tasks import cells, wait_for

DAG = "JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code=\"0\"\n"


def node_jobs(state, dagman: int) -> dict[str, int]:
    with LocalScheddClient(state) as schedd:
        return {ad["DAGNodeName"]: ad["ClusterId"]
                for ad in schedd.query(f"DAGManJobId == {dagman}", ["ClusterId", "DAGNodeName"])}


def test_held_jobs_grouped_by_reason_and_released_together(engine, tmp_path):
    dagman, _ = submit_dag(engine, tmp_path, DAG)
    deadline = time.monotonic() + 60
    while len(jobs := node_jobs(engine, dagman)) < 3:  # DAGMan submits the three at once
        assert time.monotonic() < deadline, "the three node jobs were not submitted"
        time.sleep(0.1)
    with LocalScheddClient(engine) as schedd:
        schedd.act(JobAction.Hold, [f"{jobs['A']}.0", f"{jobs['C']}.0"], "scratch disk full on the worker")
        schedd.act(JobAction.Hold, [f"{jobs['B']}.0"], "proxy expired")

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, HeldScreen) and app.screen.snapshot is not None,
                       "the held jobs")
        screen = app.screen
        table = screen.table
        a, b, c = (f"{jobs[n]}.0" for n in "ABC")
        await wait_for(pilot, lambda: {a, b, c} <= set(table.items), "the three held jobs")
        shown = [k for k in table.shown_keys() if k in (a, b, c)]
        assert shown == [a, c, b], "grouped by reason, the largest group first"
        row = [cell.strip() for cell in cells(table, a)]
        by = f" (by user {getpass.getuser()})"  # the schedd signs a reason, as 23.9.6 does
        assert f"DAG {dagman} node A" in row and "scratch disk full on the worker" + by in row
        assert "3 held jobs" in info(screen) and \
            f"2 reasons: 2× [1] scratch disk full on the worker{by}; 1× [1] proxy expired{by}" in info(screen)
        table.move_cursor(row=table.get_row_index(a))
        await pilot.press("g")
        assert table.marked == {a, c}, "g marks the jobs held for the same reason"
        await pilot.press("r")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Release 2 held jobs?"
        assert "scratch disk full" in dialog.details and "proxy expired" not in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: job_status(engine, jobs["A"]) != JobStatus.HELD
                       and job_status(engine, jobs["C"]) != JobStatus.HELD, "A and C released")
        await wait_for(pilot, lambda: notices(app), "the schedd's answer")
        assert notices(app) == ["Released 2 jobs."], "what was done, not 'Release: 2 jobs.'"
        await wait_for(pilot, lambda: set(table.items) & {a, b, c} == {b}, "only B left in the view")
        assert job_status(engine, jobs["B"]) == JobStatus.HELD
        assert "1 held job" in info(screen) and f"1 reason: 1× [1] proxy expired{by}" in info(screen)
        await pilot.press("u")  # every user's: the info line says so, and how to go back
        await wait_for(pilot, lambda: "all users (u: yours)" in info(screen), "every user's held jobs")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(160, 40))


def test_the_held_jobs_key_bar_at_80_columns_offers_enter_esc_and_the_screens_own_actions_first(engine, tmp_path):
    """As on every screen (Enter, esc, q, /, f, then the actions): the held jobs' own keys came
    after Sort and Pause, so that at 80 columns release and back were not on the bar."""
    (tmp_path / "held.sub").write_text("executable = /bin/sleep\narguments = 1000\nhold = true\nqueue\n")
    with LocalScheddClient(engine) as schedd:
        job = f"{schedd.submit((tmp_path / 'held.sub').read_text(), cwd=str(tmp_path)).cluster}.0"

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, HeldScreen) and job in app.screen.table.items,
                       "the held job")
        await pilot.pause()
        assert app.screen.query_one("KeyBar").render().plain == (
            " ⏎ Reason  esc Back  q Quit  / Filter  f Find  r Release  g Mark reason  ? more ")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(80, 24))
