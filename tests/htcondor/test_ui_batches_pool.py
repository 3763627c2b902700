"""The queue view (``b``) on the real test pool (``--backend htcondor``): plain jobs submitted as
condor_submit takes them, shown as the pool's condor_q groups them, their jobs, and a marked batch
held and removed from the UI, which the pool's schedd then does."""

from __future__ import annotations

import re
import shutil
import tempfile
import time

import htcondor2
import pytest

from crabtui.app import CrabApp
from crabtui.screens.batch import BatchScreen
from crabtui.screens.batches import BatchesScreen
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.snapshots import Backend
from crosscheck import crabtui
from engine.state import StateDir
from test_ui_dags_pool import remove, run, wait_for, write
from ui.ui_tasks import cells

pytestmark = pytest.mark.htcondor

JOBS = ("executable = /bin/sh\n"
        "arguments = \"-c 'while [ ! -e go.$(Process) ]; do sleep 0.2; done'\"\n"
        "output = out.$(Process)\nlog = jobs.log\nbatch_name = {name}\nqueue 3\n")


def statuses(cluster: int) -> list[int]:
    return [ad["JobStatus"] for ad in htcondor2.Schedd().query(f"ClusterId == {cluster}", ["JobStatus"])]


def test_the_pools_plain_jobs_by_batch_held_and_removed_from_the_queue_view(htcondor_pool, shared_dir):
    name = f"batches-{int(time.time())}"
    write(shared_dir, "jobs.sub", JOBS.format(name=name))
    result = crabtui("--backend", "htcondor", "job", "submit", "jobs.sub", cwd=shared_dir)
    assert result.returncode == 0, result.stderr
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    state = tempfile.mkdtemp(prefix="uist-", dir="/tmp")
    try:
        async def scenario(pilot):
            app = pilot.app
            await pilot.press("b")
            await wait_for(pilot, lambda: isinstance(app.screen, BatchesScreen) and app.screen.snapshot is not None,
                           "the queue view")
            screen = app.screen
            table = screen.table
            await pilot.press("u")  # the pool's jobs are user crab's
            key = f"crab {name}"
            await wait_for(pilot, lambda: key in table.items, "the pool's batch")
            row = [c.strip() for c in cells(table, key)][2:]
            assert row[:2] == ["crab", name] and row[-2:] == ["3", f"{cluster}.0-2"], row

            table.move_cursor(row=table.get_row_index(key))
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, BatchScreen) and app.screen.snapshot is not None
                           and len(app.screen.table.items) == 3, "its three jobs")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen, "back to the queue")
            await pilot.press("space", "h")
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen) and dialog.question == f"Hold 3 jobs of {name}?"
            await pilot.press("y")
            await wait_for(pilot, lambda: statuses(cluster) == [5, 5, 5], "the three held on the pool")
            await wait_for(pilot, lambda: table.items[key].held == 3, "the holds in the view")
            await pilot.press("K")
            assert app.screen.question == f"Remove 3 jobs of {name}?"
            await pilot.press("y")
            await wait_for(pilot, lambda: not statuses(cluster), "removed from the pool's queue")
            await wait_for(pilot, lambda: key not in table.items, "gone from the view")

        run(CrabApp(Backend(StateDir(state), "htcondor"), interval=0.5), scenario, size=(160, 40))
    finally:
        remove(cluster)
        shutil.rmtree(state, ignore_errors=True)
