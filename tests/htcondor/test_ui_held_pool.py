"""The held jobs view on the real test pool (``--backend htcondor``): the pool's held jobs with
their hold reasons, grouped by reason, and the jobs of one reason released together, which the
pool's schedd then runs again."""

from __future__ import annotations

import shutil
import tempfile
import time

import htcondor2
import pytest

from crabtui.app import CrabApp
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.screens.held import HeldScreen
from crabtui.snapshots import Backend
from crosscheck import submit
from engine.schedd.api import JobAction
from engine.schedd.htcondor import HTCondorSchedd
from engine.state import StateDir
from test_ui_dags_pool import JOB, remove, run, wait_for, write
from ui.ui_tasks import cells

pytestmark = pytest.mark.htcondor

DAG = "JOB A job.sub\nJOB B job.sub\nJOB C job.sub\n"


def node_jobs(dagman: int) -> dict[str, int]:
    """The DAG's node jobs in the pool's queue, by node."""
    return {ad["DAGNodeName"]: ad["ClusterId"] for ad in htcondor2.Schedd().query(
        f"DAGManJobId == {dagman}", ["ClusterId", "DAGNodeName"])}


def status(cluster: int) -> int:
    return htcondor2.Schedd().query(f"ClusterId == {cluster}", ["JobStatus"])[0]["JobStatus"]


def test_the_pools_held_jobs_grouped_by_reason_and_released_together(htcondor_pool, shared_dir):
    write(shared_dir, "job.sub", JOB)
    dagman = submit(write(shared_dir, "held.dag", DAG), ["--backend", "htcondor"])
    state = tempfile.mkdtemp(prefix="uist-", dir="/tmp")
    try:
        deadline = time.monotonic() + 120
        while len(jobs := node_jobs(dagman)) < 3:  # the pool's DAGMan submits the three at once
            assert time.monotonic() < deadline, "the three node jobs were not submitted"
            time.sleep(0.5)
        HTCondorSchedd().act(JobAction.Hold, f"ClusterId == {jobs['A']} || ClusterId == {jobs['C']}",
                   "scratch disk full on the worker")
        HTCondorSchedd().act(JobAction.Hold, f"ClusterId == {jobs['B']}", "proxy expired")

        async def scenario(pilot):
            app = pilot.app
            await pilot.press("o")
            await wait_for(pilot, lambda: isinstance(app.screen, HeldScreen) and app.screen.snapshot is not None,
                           "the held jobs")
            screen = app.screen
            table = screen.table
            a, b, c = (f"{jobs[n]}.0" for n in "ABC")
            await wait_for(pilot, lambda: {a, b, c} <= set(table.items), "the pool's three held jobs")
            shown = [k for k in table.shown_keys() if k in (a, b, c)]
            assert shown == [a, c, b], "grouped by reason, the largest group first"
            row = [cell.strip() for cell in cells(table, a)]
            # the pool's schedd says who held it, as condor_q -hold shows it
            assert f"DAG {dagman} node A" in row and "scratch disk full on the worker (by user crab)" in row, row
            table.move_cursor(row=table.get_row_index(a))
            await pilot.press("g")
            assert table.marked == {a, c}, "g marks the jobs held for the same reason"
            await pilot.press("r")
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen) and dialog.question == "Release 2 held jobs?"
            assert "scratch disk full" in dialog.details and "proxy expired" not in dialog.details
            await pilot.press("y")
            await wait_for(pilot, lambda: status(jobs["A"]) in (1, 2) and status(jobs["C"]) in (1, 2),
                           "A and C released on the pool")
            await wait_for(pilot, lambda: not {a, c} & set(table.items), "A and C gone from the view")
            assert b in table.items and status(jobs["B"]) == 5

        run(CrabApp(Backend(StateDir(state), "htcondor"), interval=0.5), scenario, size=(160, 40))
    finally:
        remove(dagman)
        shutil.rmtree(state, ignore_errors=True)
