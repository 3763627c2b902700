"""The UI's DAGs screens on a real HTCondor 23.9.6 pool (``--backend htcondor``): a DAG submitted
to the pool's condor_dagman is listed, its ``condor_q -dag`` tree and dagman.out are shown, and
halting and removing it from the UI act on the pool."""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import tempfile

import pytest

from crabtui.app import CrabApp
from crabtui.screens.dag import DagScreen
from crabtui.screens.dags import DagsScreen
from crabtui.snapshots import Backend
from crosscheck import GATED, submit
from engine.dagman.halt import is_halted
from engine.schedd.api import JobAction
from engine.schedd.htcondor import HTCondorSchedd
from engine.state import StateDir
from ui.ui_tasks import tree_labels, wait_for as wait_for_app

pytestmark = pytest.mark.htcondor


@pytest.fixture
def state():
    """The state directory the UI keeps its task table in (empty: there are no CRAB tasks)."""
    path = tempfile.mkdtemp(prefix="uist-", dir="/tmp")
    yield StateDir(path)
    shutil.rmtree(path, ignore_errors=True)


wait_for = functools.partial(wait_for_app, timeout=120)  # the pool is slower than the embedded engine


def test_the_dags_screens_watch_and_control_a_dag_on_the_pool(htcondor_pool, shared_dir, state):
    for name, text in (("job.sub", GATED), ("g.dag", "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\n")):
        (shared_dir / name).write_text(text)
        os.chmod(shared_dir / name, 0o666)
    dag = shared_dir / "g.dag"
    cluster = submit(dag, ["--backend", "htcondor"])

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DagsScreen), "the DAGs screen")
        table = app.screen.table
        await wait_for(pilot, lambda: str(cluster) in table.items, "the pool's DAG in the list")
        listed = table.items[str(cluster)]
        assert listed.dag_file == str(dag), "found from the -Dag argument (condor_dagman names its batch later)"
        table.move_cursor(row=table.get_row_index(str(cluster)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DagScreen) and app.screen.snapshot is not None,
                       "the DAG screen")
        screen = app.screen
        await wait_for(pilot, lambda: len(tree_labels(screen)) == 2 and " R " in tree_labels(screen)[1],
                       "condor_dagman and node A running on the pool")
        dagman, node = tree_labels(screen)
        assert dagman.startswith(f"{cluster}.0") and "DAGMan g.dag+" in dagman
        assert node.startswith("  ") and node.split()[1:4] == ["A", "R", "running"]
        await wait_for(pilot, lambda: any("Submitting HTCondor Node A" in line
                                          for line in screen.query_one("#dagman-out").lines), "dagman.out")

        await pilot.press("H")
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.halted, "the DAG halted")
        assert is_halted(str(dag)) and "HALTED" in screen.query_one("#summary").render().plain
        await pilot.press("H")
        await wait_for(pilot, lambda: not screen.snapshot.halted, "the DAG resumed")

        await pilot.press("K")
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "condor_dagman gone from the queue")
        assert screen.snapshot.dag.state == "removed"

    async def main() -> None:
        async with CrabApp(Backend(state, "htcondor"), interval=0.5).run_test(size=(120, 30)) as pilot:
            await scenario(pilot)

    try:
        asyncio.run(main())
    finally:
        try:
            HTCondorSchedd().act(JobAction.Remove, f"ClusterId == {cluster} || DAGManJobId == {cluster}")
        except Exception:  # removed already by the test
            pass
