"""DAGs a user submits with ``crabtui dag submit``, watched and controlled in the UI on a real
embedded engine: the DAGs list (without the CRAB tasks' DAGs), a DAG's tree and log, hold and
release of a node job and of DAGMan, halt and unhalt, and removal, each asked first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crabtui.app import CrabApp
from crabtui.screens.dag import DagScreen
from crabtui.screens.dags import DagsScreen
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.snapshots import Backend
from engine.crab.taskworker.taskdb import TaskDB
from engine.dagman.halt import is_halted
from engine.schedd.api import JobStatus
from engine.schedd.local.client import LocalScheddClient
from test_ui_views import INTERVAL, drive
from textual.widgets import Log
from ui_tasks import cells, crabtui, submit, tree_labels, wait_for, wait_task

# Every node job waits for go.<node> in the DAG's directory.
GATED_SUB = ("executable = /bin/sh\n"
             "arguments = \"-c 'while [ ! -e go.$(JOB) ]; do sleep 0.1; done'\"\n"
             "queue\n")
DAG = "JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nPARENT A CHILD B\n"


def submit_dag(state, directory: Path) -> tuple[int, Path]:
    """``crabtui dag submit d.dag`` in ``directory``; DAGMan's ClusterId and the DAG file."""
    (directory / "job.sub").write_text(GATED_SUB)
    dag = directory / "d.dag"
    dag.write_text(DAG)
    result = crabtui(state, "dag", "submit", "d.dag", cwd=directory)
    assert result.returncode == 0, result.stderr
    return int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1)), dag


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def job_status(state, cluster: int) -> int | None:
    with LocalScheddClient(state) as schedd:
        found = schedd.query(f"ClusterId == {cluster}", ["JobStatus"])
    return found[0]["JobStatus"] if found else None


async def open_dags(pilot) -> DagsScreen:
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DagsScreen), "the DAGs screen")
    return pilot.app.screen


async def open_dag(pilot, cluster: int) -> DagScreen:
    dags = await open_dags(pilot)
    table = dags.table
    await wait_for(pilot, lambda: str(cluster) in table.items, "the DAG in the list")
    table.move_cursor(row=table.get_row_index(str(cluster)))
    await pilot.press("enter")
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, DagScreen) and app.screen.snapshot is not None,
                   "the DAG screen")
    return app.screen


def summary(screen: DagScreen) -> str:
    return screen.query_one("#summary").render().plain


@pytest.fixture(scope="module")
def running_task(engine, tmp_path_factory) -> str:
    """A CRAB task whose DAG is in the queue: the task list shows it, the DAGs list does not."""
    name = submit(engine, tmp_path_factory.mktemp("task"), "steady", scale=1)
    wait_task(engine, name, "SUBMITTED")
    return name


def test_the_dags_list_shows_a_submitted_dag_and_its_screen_the_tree_and_log(engine, running_task, tmp_path):
    cluster, dag = submit_dag(engine, tmp_path)
    task_dagman = TaskDB(engine.tasks).get(running_task).dagman_id

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen
        assert "d DAGs" in tasks.query_one("KeyBar").render().plain, "the task list offers d"
        assert "DAGs" in [c.title for c in app.get_system_commands(tasks)], "and so does the command palette"
        await pilot.press("question_mark")
        assert ("d", "The DAGs submitted with dag submit (not tasks): watch and control them") in app.screen.key_rows
        await pilot.press("escape")
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].total == 3,
                       "the DAG with its node counts")
        await wait_for(pilot, lambda: table.items[str(cluster)].counts.get("running") == 2, "A and C running")
        _, stale, ident, status, progress, nodes, age, path = cells(table, str(cluster))
        assert (stale, ident.strip(), status) == ("", str(cluster), "▶ running")
        assert progress == "[=====   ]   0%" and nodes.strip() == "0/3 ·1 ▶2"
        assert path == f"d.dag  {tmp_path}/"
        assert age.strip().endswith("s")
        assert str(task_dagman) not in table.items, "a CRAB task's DAG is shown as a task, not here"
        assert "● live" in dags.status_bar.render().plain

        table.move_cursor(row=table.get_row_index(str(cluster)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DagScreen) and app.screen.snapshot is not None,
                       "the DAG screen")
        screen = app.screen
        assert f"DAGMan job {cluster}  {dag}" in summary(screen) and "0/3 done, 2 queued, 1 unready" in summary(screen)
        await wait_for(pilot, lambda: len(tree_labels(screen)) == 3, "DAGMan and its two node jobs")
        dagman, *nodes = tree_labels(screen)
        assert dagman.startswith(f"{cluster}.0") and "DAGMan d.dag+" in dagman and "0/3 done" in dagman
        assert [n.split()[1:4] for n in nodes] == [["A", "R", "running"], ["C", "R", "running"]]
        assert all(n.startswith("  ") for n in nodes), "the node jobs hang under their DAGMan"

        await pilot.press("2")
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: any("Submitting HTCondor Node A" in line for line in log.lines), "dagman.out")
        assert "lines of " + str(dag) + ".dagman.out" in screen.query_one("#info").render().plain

        (tmp_path / "go.A").touch()  # A finishes, B starts: the screen follows
        await wait_for(pilot, lambda: "1/3 done" in summary(screen), "node A done")
        await wait_for(pilot, lambda: any("Node A job completed" in line or "ULOG_JOB_TERMINATED for HTCondor Node A"
                                          in line for line in log.lines), "A's end in the log")
        await pilot.press("1")
        await wait_for(pilot, lambda: any(" B " in n for n in tree_labels(screen)), "node B in the tree")
        for node in "BC":
            (tmp_path / f"go.{node}").touch()
        await wait_for(pilot, lambda: "DAGMan job" in " ".join(tree_labels(screen)) and "has ended" in
                       " ".join(tree_labels(screen)), "the DAG ended", timeout=90)
        await wait_for(pilot, lambda: "✔ completed" in summary(screen), "the DAG completed")
        assert "left the queue, exit code 0" in summary(screen)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_halt_unhalt_and_remove_are_asked_first(engine, tmp_path):
    cluster, dag = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await pilot.press("H")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == f"Halt DAG {cluster}?" and str(dag) in dialog.details
        assert "rescue DAG" in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.halted, "the DAG halted")
        assert is_halted(str(dag)) and "HALTED" in summary(screen) and "⏸ halted" in summary(screen)
        assert f"Halted DAG {cluster}." in notices(app)
        await pilot.press("H")  # resuming needs no confirmation
        await wait_for(pilot, lambda: not screen.snapshot.halted, "the DAG resumed")
        assert not is_halted(str(dag)) and f"Resumed DAG {cluster}." in notices(app)
        assert "HALTED" not in summary(screen)

        await pilot.press("K")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == f"Remove DAG {cluster}?"
        assert f"DAGMan job {cluster} running {dag}" in dialog.details and "2 node job(s)" in dialog.details
        await pilot.press("enter")  # No has the focus
        assert app.screen is screen and job_status(engine, cluster) == JobStatus.RUNNING
        await pilot.press("K")
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "DAGMan gone from the queue", timeout=90)
        assert "✗ removed" in summary(screen) and "has ended" in tree_labels(screen)[0]
        assert any(n.startswith(f"Removed DAG {cluster}") for n in notices(app))
        assert (tmp_path / "d.dag.rescue001").exists(), "DAGMan wrote a rescue DAG"
        await pilot.press("H")  # nothing left to act on: the keys are greyed out
        assert app.screen is screen

        await pilot.press("escape")
        dags = app.screen
        assert isinstance(dags, DagsScreen)
        await wait_for(pilot, lambda: dags.status_bar.updated_at is not None and str(cluster) not in dags.table.items,
                       "the DAG gone from the list")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_hold_and_release_a_node_job_then_dagman_itself(engine, tmp_path):
    cluster, dag = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        tree = screen.query_one("#dag-tree")
        await wait_for(pilot, lambda: len(tree_labels(screen)) == 3, "DAGMan and its two node jobs")
        dagman_node = tree.root.children[0]
        node_a = next(n for n in dagman_node.children if " A " in str(n.label))
        a_cluster = int(node_a.data.split(".")[0])
        tree.move_cursor(node_a)
        await pilot.press("h")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == f"Hold {a_cluster}.0?" and "of node A (running)" in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: "H held" in str(node_a.label), "node A held in the tree")
        assert job_status(engine, a_cluster) == JobStatus.HELD and f"Held {a_cluster}.0." in notices(app)
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen) and "back to idle" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: job_status(engine, a_cluster) != JobStatus.HELD, "node A released")

        tree.move_cursor(dagman_node)  # on DAGMan: a graceful stop, and a restart in recovery mode
        await pilot.press("h")
        assert isinstance(app.screen, ConfirmScreen) and "DAGMan stops gracefully" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.dag.state == "held", "DAGMan held")
        assert "‖ held" in summary(screen)
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen) and "recovery mode" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.dag.job_status == JobStatus.RUNNING, "DAGMan running again")
        out = Path(f"{dag}.dagman.out")
        await wait_for(pilot, lambda: "Running in RECOVERY mode" in out.read_text(), "DAGMan recovering")
        for node in "ABC":
            (tmp_path / f"go.{node}").touch()
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "the DAG finished", timeout=90)
        assert screen.snapshot.dag.state == "completed"

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
