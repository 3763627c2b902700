"""DAGs a user submits with ``crabtui dag submit``, watched and controlled in the UI on a real
embedded engine: the DAG list (fresh counts and where they come from, ended DAGs kept from the
history, owners, bulk actions), a DAG's node view and log, a node's drilldown, hold and release
of a node job and of DAGMan, halt and unhalt, and removal, each asked first."""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from crabtui.app import CrabApp
from crabtui.dag_view import TOP_LEVEL_DAGMAN
from crabtui.screens.dag import DAG_ROW, DagScreen
from crabtui.screens.dags import DagsScreen
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.screens.node import NodeScreen
from crabtui.snapshots import Backend
from crabtui.widgets.log_view import LogView
from engine.crab.taskworker.taskdb import TaskDB
from engine.dagman.halt import is_halted
from engine.schedd.api import JobStatus
from engine.schedd.local.client import LocalScheddClient
from test_ui_views import INTERVAL, drive
from ui_tasks import cells, crabtui, submit, wait_for, wait_task

# Every node job says who it is and waits for go.<node> in the DAG's directory, then exits $(code).
GATED_SUB = ("executable = /bin/sh\n"
             "arguments = \"-c 'echo out of $(JOB); echo err of $(JOB) >&2; "
             "while [ ! -e go.$(JOB) ]; do sleep 0.1; done; exit $(code)'\"\n"
             "output = $(JOB).out\nerror = $(JOB).err\nlog = $(JOB).log\n"
             "queue\n")
DAG = ('JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\nPARENT A CHILD B\n')


def submit_dag(state, directory: Path, text: str = DAG, env: dict[str, str] | None = None) -> tuple[int, Path]:
    """``crabtui dag submit d.dag`` in ``directory``; DAGMan's ClusterId and the DAG file."""
    (directory / "job.sub").write_text(GATED_SUB)
    dag = directory / "d.dag"
    dag.write_text(text)
    result = crabtui(state, "dag", "submit", "d.dag", cwd=directory, env=env)
    assert result.returncode == 0, result.stderr
    return int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1)), dag


def go(directory: Path, *nodes: str) -> None:
    for node in nodes:
        (directory / f"go.{node}").touch()


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
    dags = pilot.app.screen if isinstance(pilot.app.screen, DagsScreen) else await open_dags(pilot)
    table = dags.table
    await wait_for(pilot, lambda: str(cluster) in table.items, "the DAG in the list")
    table.move_cursor(row=table.get_row_index(str(cluster)))
    await pilot.press("enter")
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, DagScreen) and app.screen.snapshot is not None,
                   "the DAG screen")
    return app.screen


def summary(screen) -> str:
    return screen.query_one("#summary").render().plain


def info(screen) -> str:
    return screen.query_one("#info").render().plain


def rows(screen: DagScreen) -> dict[str, list[str]]:
    """The node table's rows by key: their cells as the user reads them (the mark cell left out)."""
    table = screen.table
    return {key: [c.strip() for c in cells(table, key)[1:]] for key in table.shown_keys()}


def lines(screen: DagScreen) -> list[str]:
    """The node table as drawn: its header, then its rows."""
    table = screen.table
    return [strip.text for strip in (table.render_line(y) for y in range(min(table.size.height, table.row_count + 1)))]


@pytest.fixture(scope="module")
def running_task(engine, tmp_path_factory) -> str:
    """A CRAB task whose DAG is in the queue: the task list shows it, the DAGs list does not."""
    name = submit(engine, tmp_path_factory.mktemp("task"), "steady", scale=1)
    wait_task(engine, name, "SUBMITTED")
    return name


def test_the_dag_list_counts_nodes_from_dagman_out_not_from_a_stale_ad(engine, running_task, tmp_path):
    cluster, dag = submit_dag(engine, tmp_path)
    task_dagman = TaskDB(engine.tasks).get(running_task).dagman_id

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen
        assert "d DAGs" in tasks.query_one("KeyBar").render().plain, "the task list offers d"
        assert "DAGs" in [c.title for c in app.get_system_commands(tasks)], "and so does the command palette"
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].nodes.get(
            "running") == 2, "A and C running")
        # DAGMan refreshes its ad every 5 minutes on a pool: an ad that says otherwise is not believed
        with LocalScheddClient(engine) as schedd:
            schedd.edit(f"{cluster}.0", {"DAG_NodesDone": "3", "DAG_NodesQueued": "0", "DAG_NodesUnready": "0"})
        await pilot.pause(INTERVAL * 3)
        _, stale, ident, owner, status, progress, nodes, source, age, path = cells(table, str(cluster))
        assert (stale, ident.strip(), status) == ("", str(cluster), "▶ running")
        assert owner.strip() == table.items[str(cluster)].owner != ""
        assert progress == "[=====   ]   0%" and nodes.strip() == "0/3 ▶2 ·1"
        assert re.fullmatch(r"out \d+s", source.strip()), "the counts' source and age"
        assert path.startswith("d.dag  ") and path.endswith("/")
        assert str(task_dagman) not in table.items, "a CRAB task's DAG is shown as a task, not here"
        assert "● live" in dags.status_bar.render().plain
        assert "1 DAG ·" in info(dags), "one DAG, not '1 DAGs'"

        go(tmp_path, "A")
        await wait_for(pilot, lambda: table.items[str(cluster)].done == 1, "A done, without DAGMan's ad")
        assert cells(table, str(cluster))[6].strip() == "1/3 ✔1 ▶2"

        screen = await open_dag(pilot, cluster)
        assert f"DAGMan job {cluster} of " in summary(screen) and str(dag.name) in summary(screen)
        assert "1/3 done" in summary(screen) and re.search(r"dagman\.out \d+s ago, queue now", summary(screen))

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_the_node_view_shows_every_node_with_its_state_and_why_and_opens_a_node(engine, tmp_path):
    (tmp_path / "pre.sh").write_text("#!/bin/sh\necho PRE of $1 ran\n")
    (tmp_path / "pre.sh").chmod(0o755)
    (tmp_path / "sub.dag").write_text('JOB S1 job.sub\nVARS S1 code="0"\n')
    cluster, dag = submit_dag(engine, tmp_path, 'JOB A job.sub\nVARS A code="0"\n'
                                                'SCRIPT DEBUG pre.out ALL PRE A ./pre.sh $JOB\n'
                                                'JOB B job.sub\nVARS B code="3"\nRETRY B 1\n'
                                                'JOB C job.sub\nVARS C code="0"\nJOB D job.sub\nVARS D code="0"\n'
                                                'SUBDAG EXTERNAL SD sub.dag\n'
                                                'PARENT A CHILD B SD\nPARENT B CHILD D\n')

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: rows(screen).get("A", ["", ""])[1] == "▶ running", "A running")
        shown = rows(screen)
        assert list(shown)[:3] == [DAG_ROW, "A", f"A#{shown['A'][2]}"], "the DAG, then A with its job under it"
        assert shown["B"][1:2] == ["· unready"] and shown["B"][-1] == "waiting for A"
        assert shown["SD"][1] == "· unready" and shown["C"][1] == "▶ running"
        assert shown["D"][-1] == "waiting for B"
        header, *_ = lines(screen)
        assert header.split() == ["Node", "State", "Job", "Retry", "Exit", "Since", "Why"]

        go(tmp_path, "A", "B", "C", "S1")
        await wait_for(pilot, lambda: rows(screen).get("D", ["", ""])[1] == "⊘ futile", "B failed for good, D futile")
        shown = rows(screen)
        assert shown["B"][1] == "✖ failed" and shown["B"][3:5] == ["1/1", "3"]
        assert re.fullmatch(r"Job proc \(\d+\.0\.0\) failed with status 3 \(after 1 node retries\)", shown["B"][-1])
        assert shown["D"][-1] == "parent B failed"
        await wait_for(pilot, lambda: "SD/S1" in rows(screen), "the sub-DAG's node under SD")
        drawn = {line.split()[0]: line for line in lines(screen)[2:]}
        columns = {name: line.index(state) for name, line in drawn.items()
                   for state in ("✔", "✖", "⊘", "▶", "·", "»") if state in line}
        assert len(set(columns.values())) == 1, f"the State column starts at one place at every depth: {columns}"

        screen.table.move_cursor(row=screen.table.get_row_index("A"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeScreen) and app.screen.snapshot is not None,
                       "node A's drilldown")
        node = app.screen
        assert "Node A  ✔ done" in summary(node) and "exit code 0" in summary(node)
        assert "Sub-DAG" not in node.query_one("KeyBar").render().plain, "A runs no sub-DAG: no d"
        await pilot.press("d")
        assert app.screen is node, "and d does nothing there"
        for tab, wanted in (("2", 'DAGNodeName = "A"'), ("3", "out of A"), ("4", "err of A"),
                            ("5", "Job terminated"), ("6", "PRE of A ran")):
            await pilot.press(tab)
            shown_text = "\n".join(node.query_one(f"#{node.query_one('Tabbed').active}-text").lines)
            assert wanted in shown_text, (tab, shown_text)
        await pilot.press("7")
        assert "the node has no POST script" in "\n".join(node.query_one("#post-text").lines)
        await pilot.press("8")
        assert "(the node runs no sub-DAG: its DAG's own dagman.out is on the DAG's Log tab)" in \
            node.query_one("#dagman-out-text").lines
        await pilot.press("escape")

        screen.table.move_cursor(row=screen.table.get_row_index("SD"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeScreen) and app.screen.snapshot is not None,
                       "node SD's drilldown")
        assert "d Sub-DAG" in app.screen.query_one("KeyBar").render().plain, "SD runs one: d opens it"
        await pilot.press("8")
        sub_out = app.screen.query_one("#dagman-out-text")
        await wait_for(pilot, lambda: any("Node S1" in line for line in sub_out.lines), "the sub-DAG's dagman.out")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DagScreen) and app.screen.snapshot is not None
                       and app.screen.cluster != cluster, "the sub-DAG's own screen")
        assert "S1" in rows(app.screen)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_a_nodes_log_tab_shows_only_its_own_jobs_events(engine, tmp_path):
    """The DAGMan tutorial's submit file: one ``log = job.log`` for every node."""
    cluster, _ = submit_dag(engine, tmp_path, 'JOB A job.sub\nVARS A code="0"\n'
                                              'JOB B job.sub\nVARS B code="3"\nRETRY B 1\nPARENT A CHILD B\n')
    (tmp_path / "job.sub").write_text(GATED_SUB.replace("log = $(JOB).log", "log = job.log"))
    go(tmp_path, "A", "B")

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: rows(screen).get("B", ["", ""])[1] == "✖ failed", "B failed after its retry")
        screen.table.move_cursor(row=screen.table.get_row_index("B"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeScreen) and app.screen.snapshot is not None,
                       "node B's drilldown")
        node = app.screen
        await pilot.press("5")
        log = "\n".join(node.query_one("#log-text").lines)
        submitted = re.findall(r"^000 \((\d+)\.000\.000\) .*\n    DAG Node: (\S+)", log, re.MULTILINE)
        assert [name for _, name in submitted] == ["B", "B"], f"B's two tries, no other node's job: {log}"
        assert set(re.findall(r"^\d{3} \((\d+)\.", log, re.MULTILINE)) == {c for c, _ in submitted}
        assert len(re.findall(r"^005 \(", log, re.MULTILINE)) == 2, "each try's end"
        assert "job.log (this node's jobs' events)" in info(node)
        shared = (tmp_path / "job.log").read_text()
        assert "DAG Node: A" in shared, "the file itself holds A's events too"

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_ended_dags_stay_in_the_list_and_open(engine, tmp_path):
    (tmp_path / "ok").mkdir()
    (tmp_path / "bad").mkdir()
    ok, _ = submit_dag(engine, tmp_path / "ok")
    bad, bad_dag = submit_dag(engine, tmp_path / "bad", DAG + 'VARS B code="2"\n')
    go(tmp_path / "ok", "A", "B", "C")
    go(tmp_path / "bad", "A", "B", "C")

    async def scenario(pilot):
        app = pilot.app
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: all(str(c) in table.items and table.items[str(c)].ended for c in (ok, bad)),
                       "both DAGs ended, still listed", timeout=90)
        assert cells(table, str(ok))[4] == "✔ completed" and cells(table, str(bad))[4] == "✖ failed"
        assert cells(table, str(bad))[6].strip() == "2/3 ✔2 ✖1"
        assert "ended ones for 1 day" in info(dags)
        gone = f"DAG {bad} has left the queue (failed); only DAGs in the queue can be."
        table.move_cursor(row=table.get_row_index(str(bad)))
        await pilot.press("h")
        assert notices(app)[-1] == f"Nothing to hold: {gone}"
        screen = await open_dag(pilot, bad)
        for key, verb in (("h", "hold"), ("r", "release"), ("H", "halt"), ("K", "remove")):
            assert screen.check_action(verb, ()) is None, "dimmed: it cannot act on a DAG gone from the queue"
            await pilot.press(key)
            assert notices(app)[-1] == f"Nothing to {verb}: {gone}", "a press on the dimmed key says why"
            assert app.screen is screen
        assert "✖ failed" in summary(screen) and "exit code 1" in summary(screen)
        assert re.search(r"dagman\.out \S+ ago$", summary(screen)), "no 'queue now' for a DAG gone from it"
        assert f"rescue DAG {bad_dag}.rescue001" in summary(screen).replace("./", str(Path.cwd()) + "/")
        assert rows(screen)["B"][1] == "✖ failed" and "failed with status 2" in rows(screen)["B"][-1]
        await pilot.press("escape")
        await pilot.press("e")  # one week
        await pilot.press("e")  # not at all
        await wait_for(pilot, lambda: str(ok) not in table.items and str(bad) not in table.items,
                       "the ended DAGs left out")
        assert "Ended DAGs are left out of the list." in notices(app) and "left out" in info(dags)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)

    async def later(pilot):  # two days on, ended DAGs kept for one day are gone
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: dags.status_bar.updated_at is not None, "the list read")
        assert str(ok) not in dags.table.items and str(bad) not in dags.table.items

    drive(CrabApp(Backend(engine), interval=INTERVAL, clock=lambda: time.time() + 2 * 86400), later)


def test_an_ended_run_keeps_its_own_counts_when_its_dag_file_runs_again(engine, tmp_path):
    """Both runs append to one d.dag.dagman.out: each row counts its own run's nodes."""
    first, dag = submit_dag(engine, tmp_path, DAG + 'VARS B code="2"\n')
    go(tmp_path, "A", "B", "C")

    async def scenario(pilot):
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(first) in table.items and table.items[str(first)].ended, "run 1 failed",
                       timeout=90)
        (tmp_path / "go.B").unlink()  # the rescue run's B waits
        result = crabtui(engine, "dag", "submit", "d.dag", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        second = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
        await wait_for(pilot, lambda: str(second) in table.items and table.items[str(second)].nodes.get("running"),
                       "run 2's B running")
        assert cells(table, str(second))[6].strip() == "2/3 ✔2 ▶1"
        await pilot.pause(INTERVAL * 3)
        assert cells(table, str(first))[4] == "✖ failed"
        assert cells(table, str(first))[6].strip() == "2/3 ✔2 ✖1", "run 1's counts, not run 2's"
        screen = await open_dag(pilot, first)
        assert rows(screen)["B"][1] == "✖ failed" and "failed with status 2" in rows(screen)["B"][-1]
        go(tmp_path, "B")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_owners_a_toggle_for_all_users_and_totals_per_user(engine, tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "theirs").mkdir()
    mine, _ = submit_dag(engine, tmp_path / "mine")
    theirs, _ = submit_dag(engine, tmp_path / "theirs", env={"USER": "bob", "LOGNAME": "bob"})

    async def scenario(pilot):
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(mine) in table.items, "my DAG")
        assert str(theirs) not in table.items, "only my DAGs, as condor_q shows them"
        assert "u: all users" in info(dags) and "bob 1" in info(dags)
        await pilot.press("u")
        await wait_for(pilot, lambda: str(theirs) in table.items, "every user's DAGs")
        assert "all users (u: yours)" in info(dags), "the way back to one's own, as on the task list"
        assert cells(table, str(theirs))[3].strip() == "bob"
        await pilot.press("slash", *"owner:bob", "enter")
        assert table.shown_keys() == [str(theirs)]
        await pilot.press("slash", "ctrl+u", *"ownr:bob")
        assert "no field 'ownr': the fields are" in dags.query_one(".filter-error").render().plain
        await pilot.press("escape")

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
    finally:
        for d in ("mine", "theirs"):
            go(tmp_path / d, "A", "B", "C")


def test_marked_dags_are_held_released_and_removed_together(engine, tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, _ = submit_dag(engine, tmp_path / "one")
    two, _ = submit_dag(engine, tmp_path / "two")

    async def scenario(pilot):
        app = pilot.app
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: {str(one), str(two)} <= set(table.items), "both DAGs")
        for cluster in (one, two):
            table.move_cursor(row=table.get_row_index(str(cluster)))
            await pilot.press("space")
        await pilot.press("h")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Hold 2 DAGs?"
        assert f"DAG {one} of" in dialog.details and f"DAG {two} of" in dialog.details
        buttons = [str(b.label) for b in dialog.query("Button")]
        assert buttons == ["No (n)", "Hold (y)"], "the dialog shows its keys"
        assert dialog.focused.id == "no"
        await pilot.press("right")
        assert dialog.focused.id == "yes", "the arrow keys reach the buttons"
        await pilot.press("enter")
        await wait_for(pilot, lambda: job_status(engine, one) == job_status(engine, two) == JobStatus.HELD,
                       "both DAGMan jobs held")
        await wait_for(pilot, lambda: cells(table, str(one))[4] == "‖ held" == cells(table, str(two))[4],
                       "both shown held")
        await pilot.press("r", "y")
        await wait_for(pilot, lambda: job_status(engine, one) == job_status(engine, two) == JobStatus.RUNNING,
                       "both released")
        await pilot.press("K")
        assert app.screen.question == "Remove 2 DAGs?"
        await pilot.press("y")
        await wait_for(pilot, lambda: job_status(engine, one) is None and job_status(engine, two) is None,
                       "both removed", timeout=90)
        await wait_for(pilot, lambda: cells(table, str(one))[4] == "✗ removed", "shown removed, from the history")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_halt_unhalt_and_remove_are_asked_first_and_a_removed_dag_queues_nothing(engine, tmp_path):
    cluster, dag = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: rows(screen).get("A", ["", ""])[1] == "▶ running", "A running")
        await pilot.press("H")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == f"Halt DAG {cluster}?" and str(dag) in dialog.details
        assert "rescue DAG" in dialog.details and "cannot be seen" not in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.halted, "the DAG halted")
        assert is_halted(str(dag)) and "HALTED" in summary(screen) and "⏸ halted" in summary(screen)
        assert f"Halted DAG {cluster}." in notices(app)
        status = crabtui(engine, "dag", "status", str(cluster), cwd=tmp_path)
        assert "has been halted" in status.stdout and "DAG has been halted." in status.stdout, status.stdout
        await pilot.press("H")  # resuming needs no confirmation
        await wait_for(pilot, lambda: not screen.snapshot.halted, "the DAG resumed")
        assert not is_halted(str(dag)) and f"Resumed DAG {cluster}." in notices(app)

        await pilot.press("K")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == f"Remove DAG {cluster}?"
        assert f"DAGMan job {cluster} running {dag}" in dialog.details and "2 node job(s)" in dialog.details
        await pilot.press("enter")  # No has the focus
        assert app.screen is screen and job_status(engine, cluster) == JobStatus.RUNNING
        await pilot.press("K", "y")
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "DAGMan gone from the queue", timeout=90)
        assert "✗ removed" in summary(screen)
        assert not screen.snapshot.dag.nodes.keys() & {"running", "idle", "held", "pre", "post"}, \
            f"nothing is queued after a removal: {screen.snapshot.dag.nodes}"
        assert all(r[1] != "▶ running" for r in rows(screen).values())
        # as DAGMan's last node status file says: A failed (it was queued), B unready, not futile:
        # the rescue DAG runs it
        assert rows(screen)["A"][1] == "✖ failed" and rows(screen)["A"][-1] == "was queued when DAGMan exited"
        assert rows(screen)["B"][1] == "· unready" and rows(screen)["B"][-1] == "waiting for A", rows(screen)["B"]
        assert any(n.startswith(f"Removed DAG {cluster}") for n in notices(app))
        assert (tmp_path / "d.dag.rescue001").exists(), "DAGMan wrote a rescue DAG"
        await pilot.press("H")  # nothing left to act on: the keys are greyed out
        assert app.screen is screen

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_a_dag_held_then_removed_leaves_no_node_running(engine, tmp_path):
    """Held, DAGMan stops to be restarted (exit 3) and leaves its nodes queued; removed, it never is."""
    cluster, dag = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: rows(screen).get("A", ["", ""])[1] == "▶ running", "A running")
        screen.table.move_cursor(row=screen.table.get_row_index(DAG_ROW))
        await pilot.press("h", "y")
        await wait_for(pilot, lambda: screen.snapshot.dag.state == "held", "DAGMan held")
        await wait_for(pilot, lambda: "EXITING WITH STATUS 3" in Path(f"{dag}.dagman.out").read_text(),
                       "DAGMan stopped to be restarted")
        await pilot.press("K", "y")
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "DAGMan gone from the queue", timeout=90)
        assert "✗ removed" in summary(screen)
        await wait_for(pilot, lambda: rows(screen).get("A", ["", ""])[1] == "✖ failed", "A stopped for good")
        assert rows(screen)["A"][-1] == "was queued when DAGMan exited"
        assert not screen.snapshot.dag.nodes.keys() & {"running", "idle", "held"}, screen.snapshot.dag.nodes
        await pilot.press("escape")
        table = app.screen.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].ended, "the row")
        assert "▶" not in cells(table, str(cluster))[6], "the list's row has no node running either"

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_hold_and_release_a_node_job_then_dagman_itself(engine, tmp_path):
    cluster, dag = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: rows(screen).get("A", ["", ""])[1] == "▶ running", "A running")
        table = screen.table
        a_job = rows(screen)["A"][2]
        table.move_cursor(row=table.get_row_index("A"))
        await pilot.press("h")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == f"Hold {a_job}?" and "of node A (running)" in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: rows(screen)["A"][1] == "‖ held", "node A held")
        assert rows(screen)["A"][-1].startswith("held: "), "why: the hold reason"
        assert job_status(engine, int(a_job.split(".")[0])) == JobStatus.HELD and f"Held {a_job}." in notices(app)
        await pilot.press("enter")  # the node's own screen says held too, as the table does
        await wait_for(pilot, lambda: isinstance(app.screen, NodeScreen) and app.screen.snapshot is not None,
                       "node A's drilldown")
        assert summary(app.screen).startswith(f"Node A  ‖ held  job {a_job}")
        assert "State:       held" in "\n".join(app.screen.query_one("#node-text").lines)
        await pilot.press("escape")
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen) and "back to idle" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: rows(screen)["A"][1] != "‖ held", "node A released")

        table.move_cursor(row=table.get_row_index(DAG_ROW))  # on DAGMan: a graceful stop, a recovery restart
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
        go(tmp_path, "A", "B", "C")
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "the DAG finished", timeout=90)
        assert screen.snapshot.dag.state == "completed"
        assert rows(screen)[DAG_ROW][1] == "✔ completed", "the DAG's state in full, not cut short"
        assert {r[1] for key, r in rows(screen).items() if key != DAG_ROW} == {"✔ done"}

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_a_dag_whose_directory_is_not_here_is_halted_plainly_or_held(engine, tmp_path):
    """As on a pool whose DAG directories this machine does not see: the DAGMan job's Iwd names a
    directory that does not exist here."""
    cluster, dag = submit_dag(engine, tmp_path)
    with LocalScheddClient(engine) as schedd:
        schedd.edit(f"{cluster}.0", {"Iwd": '"/nonexistent/elsewhere"'})
    halted = crabtui(engine, "dag", "halt", str(cluster), cwd=tmp_path)
    assert halted.returncode == 1 and "Traceback" not in halted.stderr
    assert halted.stderr.startswith("ERROR: cannot write /nonexistent/elsewhere/d.dag.halt from this machine")
    assert f"(`crabtui --state-dir {engine.path} hold {cluster}`)" in halted.stderr
    assert len(halted.stderr.splitlines()) == 1

    async def scenario(pilot):
        app = pilot.app
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: screen.snapshot.dag.total == 3, "the counts from DAGMan's ad")
        assert "DAGMan's job ad" in summary(screen) and "cannot be read from this machine" in summary(screen)
        await pilot.press("2")
        assert "/nonexistent/elsewhere/d.dag.dagman.out cannot be read from this machine" in info(screen)
        await pilot.press("1", "H")
        assert "Hold its DAGMan job instead" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: any("cannot write /nonexistent/elsewhere/d.dag.halt" in n for n in notices(app)),
                       "the halt refused, plainly")
        assert not any("FileNotFoundError" in n for n in notices(app))

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
    finally:
        go(tmp_path, "A", "B", "C")


class Queries:
    """Every query the embedded schedd's clients make, by constraint."""

    def __init__(self, monkeypatch) -> None:
        self.constraints: list[str] = []
        for name in ("query", "query_values", "history"):
            method = getattr(LocalScheddClient, name)

            def counted(client, constraint="true", *args, _method=method, **kwargs):
                self.constraints.append(str(constraint))
                return _method(client, constraint, *args, **kwargs)

            monkeypatch.setattr(LocalScheddClient, name, counted)


def held_and_released(state, job: str, hold: bool) -> None:
    """Hold or release a job through the schedd, as another user's command would (not the UI)."""
    with LocalScheddClient(state) as schedd:
        schedd.act("Hold" if hold else "Release", [job], "held by the test" if hold else None)


def test_the_dag_list_follows_its_dags_logs_instead_of_querying_the_queue(state, tmp_path, monkeypatch):
    cluster, _ = submit_dag(state, tmp_path)
    queries = Queries(monkeypatch)

    async def scenario(pilot):
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].nodes.get(
            "running") == 2, "A and C running")
        node_queries = [c for c in queries.constraints if c.startswith(("DAGManJobId ==", "member(DAGManJobId"))]
        assert len(node_queries) == 1, f"the node jobs were asked for once: {queries.constraints}"
        with LocalScheddClient(state) as schedd:
            (c,) = schedd.query_values(f'DAGManJobId == {cluster} && DAGNodeName == "C"', ["ClusterId", "ProcId"])
        job_c = f"{c['ClusterId']}.{c['ProcId']}"
        asked = len(queries.constraints)

        held_and_released(state, job_c, hold=True)
        await wait_for(pilot, lambda: table.items[str(cluster)].nodes == {"running": 1, "held": 1, "unready": 1},
                       "C held, from the nodes log")
        assert cells(table, str(cluster))[6].strip() == "0/3 ‖1 ▶1 ·1"
        held_and_released(state, job_c, hold=False)
        await wait_for(pilot, lambda: table.items[str(cluster)].nodes.get("held", 0) == 0, "C released")
        go(tmp_path, "A")
        await wait_for(pilot, lambda: table.items[str(cluster)].done == 1 and table.items[str(cluster)].nodes.get(
            "running", 0) + table.items[str(cluster)].nodes.get("idle", 0) == 2, "A done, B queued")
        assert queries.constraints[asked:] == [], "no query: the logs told it all"
        go(tmp_path, "B", "C")

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_a_dag_screen_follows_its_logs_instead_of_querying_the_queue(state, tmp_path, monkeypatch):
    cluster, _ = submit_dag(state, tmp_path)
    queries = Queries(monkeypatch)

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: rows(screen).get("A", ["", ""])[1] == "▶ running", "A running")
        asked = len(queries.constraints)
        job_a = rows(screen)["A"][2]

        held_and_released(state, job_a, hold=True)
        await wait_for(pilot, lambda: rows(screen)["A"][1] == "‖ held", "A's job held, from the nodes log")
        assert rows(screen)["A"][-1].startswith("held: held by the test"), "why: the hold reason, from the held event"
        assert rows(screen)[f"A#{job_a}"][1] == "‖ held"
        assert "‖1 ▶1 ·1  0/3 done" in summary(screen), "the counts above the table too"
        held_and_released(state, job_a, hold=False)
        await wait_for(pilot, lambda: rows(screen)["A"][1] in ("▶ running", "· idle"), "A's job released")
        go(tmp_path, "A")
        await wait_for(pilot, lambda: rows(screen)["A"][1] == "✔ done", "A done")
        await wait_for(pilot, lambda: rows(screen)["B"][1] in ("▶ running", "· idle") and any(
            key.startswith("B#") for key in rows(screen)), "B's job in the queue, under B")
        assert f"A#{job_a}" not in rows(screen), "A's job has left the queue"
        assert queries.constraints[asked:] == [], "no query: the logs told it all"
        go(tmp_path, "B", "C")

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_a_sort_of_the_node_table_keeps_each_job_under_its_node_and_the_dag_first(engine, tmp_path):
    """s sorted the node tree as a flat list: the DAG's own row went below its nodes and a node's
    job row away from its node.  Now each row's children are sorted under it."""
    cluster, _ = submit_dag(engine, tmp_path)

    def in_tree(keys: list[str]) -> bool:
        return keys[0] == DAG_ROW and all("#" not in key or keys[i - 1] == key.split("#")[0]
                                          for i, key in enumerate(keys))

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: any("#" in key for key in screen.table.shown_keys()), "A's job under A")
        table = screen.table
        for press in ("s", "s", "S", "s", "S"):  # Node, State, State reversed, Job, Job reversed
            await pilot.press(press)
            keys = table.shown_keys()
            assert in_tree(keys), (table.sort_column, table.sort_reverse, keys)
        assert table.sort_column == "job"
        go(tmp_path, "A", "B", "C")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_a_dag_submitted_while_the_list_was_closed_shows_when_it_opens(state, tmp_path, monkeypatch):
    """The DAGMan jobs are asked for every 30 s; a DAG submitted after the list was last open did
    not show when d opened it again, until that query came round."""
    (tmp_path / "first").mkdir()
    first, _ = submit_dag(state, tmp_path / "first")

    async def scenario(pilot):
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: str(first) in dags.table.items, "the first DAG")
        await pilot.press("escape")
        second_dir = tmp_path / "second"
        second_dir.mkdir()
        second, _ = submit_dag(state, second_dir)
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: dags.snapshot is not None, "the list read again")
        assert str(second) in dags.table.items, "on the list's first refresh"
        go(tmp_path / "first", "A", "B", "C")
        go(second_dir, "A", "B", "C")

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario)


def test_the_dagman_jobs_are_asked_again_30s_after_their_last_answer_not_after_the_question(state, tmp_path,
                                                                                           monkeypatch):
    """As the queue view counts: an answer that came 18 s after its question left the list 12 s
    of following the logs before it asked again."""
    cluster, _ = submit_dag(state, tmp_path)
    now = [1_700_000_000.0]
    answer = LocalScheddClient.query_values
    asked = []

    def slow(client, constraint="true", *args, **kwargs):
        found = answer(client, constraint, *args, **kwargs)
        if str(constraint) == TOP_LEVEL_DAGMAN:
            asked.append(now[0])
            now[0] += 18  # a busy schedd: the answer comes 18 s after the question
        return found

    monkeypatch.setattr(LocalScheddClient, "query_values", slow)

    async def scenario(pilot):
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: str(cluster) in dags.table.items, "the DAG")
        answered = now[0]
        for later in (13, 29):  # 31 and 47 s after the question: the logs tell, the schedd is not asked
            now[0] = answered + later
            await wait_for(pilot, lambda: dags.snapshot.at == now[0], f"a refresh {later} s after the answer")
        assert len(asked) == 1, "asked once: 30 s have not passed since the answer"
        now[0] = answered + 31
        await wait_for(pilot, lambda: len(asked) == 2, "the DAGMan jobs asked again 30 s after the answer")
        go(tmp_path, "A", "B", "C")

    drive(CrabApp(Backend(state, discover_every=30), clock=lambda: now[0], interval=INTERVAL), scenario)


def test_the_empty_dag_list_says_how_to_submit_one_within_80_columns(state):
    """With no DAG in the queue, the DAG list's info line says in full, at 80x24, how to submit
    one: it was cut after "(CRAB tasks' DAGs are"."""
    from rich.cells import cell_len

    async def scenario(pilot):
        app = pilot.app
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DagsScreen) and "No DAGs" in info(app.screen),
                       "the empty DAG list")
        line = app.screen.query_one("#info")
        assert info(app.screen) == DagsScreen.EMPTY and "crabtui dag submit FILE.dag" in DagsScreen.EMPTY
        assert cell_len(DagsScreen.EMPTY) <= line.content_size.width, (DagsScreen.EMPTY, line.content_size)

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(80, 24))


def test_a_failed_nodes_since_is_when_it_failed_not_when_the_dag_aborted(engine, tmp_path):
    """DAGMan waits for the running nodes after one fails, then dumps the failed node again as it
    aborts: the dump changes nothing, and the node has been failed since its job failed."""
    cluster, dag = submit_dag(engine, tmp_path, 'JOB A job.sub\nVARS A code="3"\nJOB C job.sub\nVARS C code="0"\n'
                                                'JOB D job.sub\nVARS D code="0"\nPARENT A C CHILD D\n')
    out = Path(f"{dag}.dagman.out")
    now: list[float] = []

    def failed_at() -> float | None:
        found = re.search(r"^(\S+ \S+) Node A job proc \(\d+\.0\.0\) failed with status 3", out.read_text()
                          if out.exists() else "", re.MULTILINE)
        return time.mktime(time.strptime(found.group(1), "%m/%d/%y %H:%M:%S")) if found else None

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        go(tmp_path, "A")
        await wait_for(pilot, lambda: failed_at() is not None, "A failed, C still running")
        failed = failed_at()
        await wait_for(pilot, lambda: time.time() >= failed + 2, "dagman.out's clock past A's failure")
        go(tmp_path, "C")
        await wait_for(pilot, lambda: rows(screen)[DAG_ROW][1] == "✖ failed", "the DAG aborted once C ended")
        assert "Aborting DAG..." in out.read_text()
        now.append(failed + 40)
        await wait_for(pilot, lambda: rows(screen)["A"][5] == "40s", "A's time in its state counted from its failure")
        assert rows(screen)["A"][1] == "✖ failed"

    drive(CrabApp(Backend(engine), interval=INTERVAL, clock=lambda: now[0] if now else time.time()), scenario)


def test_why_a_dags_log_cannot_be_read_is_shown_whole_in_80_columns(engine, tmp_path):
    """A DAG whose directory this machine cannot see (moved away here, as a pool's DAG is seen
    from elsewhere): its Log tab says why in full, wrapped, where the end is what explains it."""
    directory = tmp_path / "a-directory-with-a-long-name-as-analysis-areas-have" / "dags"
    directory.mkdir(parents=True)
    cluster, dag = submit_dag(engine, directory)
    go(directory, "A", "B", "C")

    async def scenario(pilot):
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: str(cluster) in dags.table.items and dags.table.items[str(cluster)].ended,
                       "the DAG done", timeout=90)
        directory.rename(tmp_path / "moved")
        screen = await open_dag(pilot, cluster)
        await pilot.press("2")
        log = screen.query_one(LogView)
        await wait_for(pilot, lambda: log.line_count, "the Log tab's message")
        shown = [str(line) for line in log.lines]
        width = log.scrollable_content_region.width
        assert all(len(line) <= width for line in shown), f"each line fits the {width} columns: {shown}"
        assert re.sub(r"\s", "", "".join(shown)) == re.sub(r"\s", "", (
            f"{dag}.dagman.out cannot be read from this machine: its directory {directory} is not here"))

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(80, 24))


def test_a_dag_removed_from_the_list_shows_removed_at_once_when_its_logs_are_not_here(engine, tmp_path):
    """A DAG whose logs this machine cannot follow (its directory moved away under the running
    DAGMan, as a pool's DAG is seen from elsewhere) learns its state from the schedd, asked every
    30 s: after K the list asks at once, as ctrl+r does, rather than show it running meanwhile."""
    directory = tmp_path / "here"
    directory.mkdir()
    cluster, _ = submit_dag(engine, directory)
    now = [time.time()]

    async def scenario(pilot):
        app = pilot.app
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].nodes.get(
            "running") == 2, "A and C running")
        directory.rename(tmp_path / "elsewhere")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: table.items[str(cluster)].source != "dagman.out", "the counts from the ad")
        table.move_cursor(row=table.get_row_index(str(cluster)))
        await pilot.press("K")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: job_status(engine, cluster) in (JobStatus.REMOVED, None), "DAGMan removed")
        await wait_for(pilot, lambda: cells(table, str(cluster))[4] in ("✗ removing", "✗ removed"),
                       "no longer running in the list", timeout=10)

    drive(CrabApp(Backend(engine), interval=INTERVAL, clock=lambda: now[0]), scenario)


def test_u_on_the_key_bar_says_what_a_press_does_now(engine, tmp_path):
    """The task list, the DAG list and the held jobs each toggle between yours and every user's:
    once toggled, the key bar offers the way back, not the view already shown."""
    submit_dag(engine, tmp_path)

    def keys(screen) -> str:
        return screen.query_one("KeyBar").render().plain

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen
        await wait_for(pilot, lambda: tasks.status_bar.updated_at is not None, "the task list read")
        assert " u Mine " in keys(tasks)
        await pilot.press("u")
        assert " u All users " in keys(tasks)
        await pilot.press("u")
        assert " u Mine " in keys(tasks)
        for opening in ("d", "o"):
            await pilot.press(opening)
            await wait_for(pilot, lambda: app.screen is not tasks and app.screen.status_bar.updated_at is not None,
                           f"the screen {opening} opens")
            screen = app.screen
            assert " u All users " in keys(screen)
            await pilot.press("u")
            assert " u Mine " in keys(screen)
            await pilot.press("u")
            assert " u All users " in keys(screen)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is tasks, "back on the task list")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_a_crab_tasks_dag_of_another_state_directory_is_labelled_with_its_request_name(engine, running_task,
                                                                                        tmp_path):
    """The same schedd read with another state directory's task table (a pool's schedd holds the
    tasks of every work area of the user): the task's DAG is not this table's task, and reads as
    a CRAB task, by the request name its DAGMan job's CRAB_ReqName carries."""
    cluster = TaskDB(engine.tasks).get(running_task).dagman_id
    elsewhere = TaskDB(str(tmp_path / "tasks.sqlite3"))  # the other state directory's table: empty
    elsewhere.close()

    class OtherStateDir(Backend):
        @contextmanager
        def db(self):
            db = TaskDB(str(tmp_path / "tasks.sqlite3"))
            try:
                yield db
            finally:
                db.close()

    async def scenario(pilot):
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: str(cluster) in dags.table.items, "the task's DAG")
        assert cells(dags.table, str(cluster))[-1].startswith("CRAB task steady  RunJobs.dag"), cells(
            dags.table, str(cluster))

    drive(CrabApp(OtherStateDir(engine), interval=INTERVAL), scenario)

    async def own(pilot):  # with its own table, the task's DAG stays in the task list
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: dags.status_bar.updated_at is not None, "the list read")
        assert str(cluster) not in dags.table.items

    drive(CrabApp(Backend(engine), interval=INTERVAL), own)


def test_an_info_line_too_long_for_80_columns_ends_in_an_ellipsis(state, tmp_path):
    """The DAG list's info line at 80x24 (its count, more columns, whose DAGs, how long ended ones
    stay, the DAGs per user) is longer than the terminal: it ends in '…', where it wrapped to a
    second line the one-line bar hides, and read '... ended ones for 1 day ·' with the rest gone."""
    cluster, _ = submit_dag(state, tmp_path)

    async def scenario(pilot):
        dags = await open_dags(pilot)
        await wait_for(pilot, lambda: str(cluster) in dags.table.items, "the DAG listed")
        line = dags.query_one("#info")
        assert len(info(dags)) > line.content_size.width, "the text does not fit"
        shown = line.render_line(0).text.rstrip()
        assert shown.startswith("1 DAG · ") and shown.endswith("…"), shown

    try:
        drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(80, 24))
    finally:
        go(tmp_path, "A", "B", "C")


def test_a_dag_stopped_by_abort_dag_on_says_so_once_it_has_ended(engine, tmp_path):
    """ABORT-DAG-ON as the manual writes it: B's exit value 7 aborts the DAG, which leaves the
    queue with RETURN's 1.  Its screen says why it ended, and what gave the abort value, in the
    header and on the DAG's own row: the exit code alone read as any failed node's."""
    cluster, dag = submit_dag(engine, tmp_path, 'JOB A job.sub\nVARS A code="0"\nJOB B job.sub\nVARS B code="7"\n'
                                                'JOB C job.sub\nVARS C code="0"\nPARENT A CHILD B C\n'
                                                'ABORT-DAG-ON B 7 RETURN 1\n')
    go(tmp_path, "A", "B")

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: screen.snapshot.dag is not None and screen.snapshot.dag.ended,
                       "the DAG aborted and gone from the queue", timeout=60)
        why = "aborted by ABORT-DAG-ON: node B's job exited 7"
        assert f"left the queue, exit code 1 ({why})" in summary(screen)
        assert rows(screen)[DAG_ROW][-1].startswith(f"{why}; 1/3 done")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_a_dag_of_a_thousand_nodes_shows_its_counts_whole_in_the_list(engine, tmp_path):
    """A DAG of 1,200 nodes, one at a time (``-maxjobs 1``), half of them children of N0: its
    counts outgrow the Nodes column's usual width, which widens for them instead of cutting the
    unready nodes off."""
    (tmp_path / "job.sub").write_text(GATED_SUB)
    text = "JOB A job.sub\n" + "".join(f"JOB N{i} job.sub\n" for i in range(1199))
    text += 'VARS ALL_NODES code="0"\nPARENT A CHILD ' + " ".join(f"N{i}" for i in range(599)) + "\n"
    text += "PARENT N0 CHILD " + " ".join(f"N{i}" for i in range(599, 1199)) + "\n"
    (tmp_path / "d.dag").write_text(text)
    result = crabtui(engine, "dag", "submit", "-maxjobs", "1", "d.dag", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    cluster = re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1)
    go(tmp_path, "A")

    async def scenario(pilot):
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: cluster in table.items and table.items[cluster].nodes.get("ready") == 598,
                       "A done, N0 queued, its siblings ready", timeout=60)
        await pilot.pause(INTERVAL * 2)
        counts = cells(table, cluster)[6].strip()
        assert re.fullmatch(r"1/1200 ✔1 [▶○]1 »598 ·600", counts), counts
        assert any(counts in line for line in (table.render_line(y).text for y in range(table.size.height))), \
            "drawn whole at 200 columns"

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(200, 50))
    finally:
        crabtui(engine, "rm", cluster, cwd=tmp_path)


def test_the_counts_source_is_never_cut_to_another_age_at_80_columns(engine, tmp_path):
    """At 80 columns the DAG list's right edge falls inside the From column: ``out 12s`` drawn as
    ``out 1`` reads as another age, so the column shows whole or not at all, as numbers do."""
    cluster, _ = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        dags = await open_dags(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].total == 3,
                       "the DAG's counts from its dagman.out")
        await pilot.pause(INTERVAL * 2)
        assert cells(table, str(cluster))[7].strip().startswith("out ")
        row = table.get_row_index(str(cluster)) + 1 - int(table.scroll_offset.y)
        header, drawn = table.render_line(0).text.rstrip(), table.render_line(row).text.rstrip()
        assert not re.search(r"\bout( \d*)?$", drawn) and not re.search(r"\bF(r|ro)?$", header), (header, drawn)
        assert drawn.endswith(("·1", "·2")) or re.search(r"out \d+[smhd]$", drawn), drawn

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(80, 24))
    finally:
        go(tmp_path, "A", "B", "C")


def test_a_dagman_that_exits_outside_0_to_2_says_its_job_runs_it_again(engine, tmp_path):
    """``ABORT-DAG-ON B 7`` without RETURN: DAGMan exits 7, which condor_submit_dag's
    on_exit_remove does not take out of the queue; the job runs DAGMan again from the rescue DAG,
    B fails again, and so on.  The DAG's screen says so, in every run, not only between two."""
    cluster, dag = submit_dag(engine, tmp_path, 'JOB A job.sub\nVARS A code="0"\nJOB B job.sub\nVARS B code="7"\n'
                                                'PARENT A CHILD B\nABORT-DAG-ON B 7\n')
    go(tmp_path, "A")
    requeued = "DAGMan exited 7 (aborted by ABORT-DAG-ON: node B's job exited 7): its job stays queued"

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        go(tmp_path, "B")
        await wait_for(pilot, lambda: Path(f"{dag}.rescue002").exists(), "DAGMan run again, twice", timeout=60)
        # while DAGMan runs again, not only while its job waits to start
        await wait_for(pilot, lambda: screen.snapshot.dag.state == "running" and requeued in summary(screen),
                       "the header saying why it runs again", timeout=60)

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(200, 30))
    finally:
        crabtui(engine, "rm", str(cluster), cwd=tmp_path)


def test_an_idle_node_jobs_row_shows_no_run_time(engine, tmp_path):
    """A node whose job no slot matches: its row says how long it has been idle, and its job's
    row shows no run time (``0:00:00`` under Since read as idle for no time at all)."""
    (tmp_path / "nowhere.sub").write_text("executable = /bin/true\nrequirements = (TARGET.Name == \"nowhere\")\n"
                                          "log = nowhere.log\nqueue\n")
    cluster, _ = submit_dag(engine, tmp_path, "JOB W nowhere.sub\n")

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: any(k.startswith("W#") for k in rows(screen)), "W's job under it")
        job = next(k for k in rows(screen) if k.startswith("W#"))
        await wait_for(pilot, lambda: rows(screen)["W"][5].endswith("s"), "W idle some seconds")
        assert rows(screen)["W"][1] == "○ idle" and rows(screen)[job][1] == "○ idle"
        assert rows(screen)[job][5] == "", "no run time for a job that has not run"

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
    finally:
        crabtui(engine, "rm", str(cluster), cwd=tmp_path)


def test_a_dag_stopped_by_a_strict_warning_names_the_warning(engine, tmp_path):
    """A POST script written with a quote inside its last word: DAGMan warns of an unrecognized
    macro when it runs the script, and DAGMAN_USE_STRICT (1 by default) makes the warning fatal.
    The ended DAG's screen names the warning, not only "Warning is fatal error"."""
    cluster, _ = submit_dag(engine, tmp_path, 'JOB A job.sub\nVARS A code="3"\n'
                                              'SCRIPT POST A /bin/sh -c "exit $RETURN"\n')
    go(tmp_path, "A")

    async def scenario(pilot):
        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: screen.snapshot.dag is not None and screen.snapshot.dag.ended,
                       "DAGMan stopped and gone from the queue", timeout=60)
        why = ("unrecognized macro $RETURN\" in node A POST script arguments (fatal under DAGMAN_USE_STRICT)")
        assert why in summary(screen) and why in rows(screen)[DAG_ROW][-1]

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(200, 30))
