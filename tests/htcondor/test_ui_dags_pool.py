"""The UI's DAG screens on a real HTCondor 23.9.6 pool (``--backend htcondor``), whose condor_dagman
refreshes its job ad every 5 minutes: the DAG list counts nodes from dagman.out and says so, keeps
a DAG that has left the queue (from the pool's history) and opens it, shows owners and acts on
marked DAGs; a DAG's node view is what the pool's DAGMan writes in its node status file, and its
nodes open with their ClassAd; a DAG whose directory this machine cannot see is read from its ad,
and halting it says plainly that it cannot be done from here."""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from crabtui.app import CrabApp
from crabtui.screens.dag import DagScreen
from crabtui.screens.dags import DagsScreen
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.screens.node import NodeScreen
from crabtui.snapshots import Backend
from crosscheck import GATED, crabtui, dagman_exit, submit
from engine.dagman.halt import is_halted
from engine.dagman.node_status import NodeState, read_node_status
from engine.dagman.progress import DagWatcher
from engine.schedd.api import JobAction, JobStatus
from engine.schedd.htcondor import HTCondorSchedd
from engine.state import StateDir
from ui.ui_tasks import cells, wait_for as wait_for_app

pytestmark = pytest.mark.htcondor

# node jobs that say who they are, wait for go.<node>, then exit $(code) (0 without VARS: an empty exit)
JOB = ("executable = /bin/sh\n"
       "arguments = \"-c 'echo out of $(JOB); while [ ! -e go.$(JOB) ]; do sleep 0.2; done; exit $(code)'\"\n"
       "output = $(JOB).out\nlog = $(JOB).log\nqueue\n")


@pytest.fixture
def state():
    """The state directory the UI keeps its task table in (empty: there are no CRAB tasks)."""
    path = tempfile.mkdtemp(prefix="uist-", dir="/tmp")
    yield StateDir(path)
    shutil.rmtree(path, ignore_errors=True)


wait_for = functools.partial(wait_for_app, timeout=120)  # the pool is slower than the embedded engine


def write(directory: Path, name: str, text: str, mode: int = 0o666) -> Path:
    path = directory / name
    path.write_text(text)
    os.chmod(path, mode)
    return path


def go(directory: Path, *nodes: str) -> None:
    for node in nodes:
        write(directory, f"go.{node}", "")


def remove(*clusters: int) -> None:
    for cluster in clusters:
        try:
            HTCondorSchedd().act(JobAction.Remove, f"ClusterId == {cluster} || DAGManJobId == {cluster}")
        except Exception:  # gone already
            pass


def run(app: CrabApp, scenario, size=(120, 30)) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await scenario(pilot)

    asyncio.run(main())


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def node_rows(screen: DagScreen) -> dict[str, list[str]]:
    table = screen.table
    return {key: [c.strip() for c in cells(table, key)[1:]] for key in table.shown_keys()}


async def open_list(pilot) -> DagsScreen:
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DagsScreen), "the DAGs screen")
    return pilot.app.screen


async def open_dag(pilot, cluster: int) -> DagScreen:
    table = pilot.app.screen.table
    await wait_for(pilot, lambda: str(cluster) in table.items, f"DAG {cluster} in the list")
    table.move_cursor(row=table.get_row_index(str(cluster)))
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DagScreen) and pilot.app.screen.snapshot is not None,
                   "the DAG screen")
    return pilot.app.screen


def test_the_dag_screens_on_the_pool_count_from_dagman_out_keep_ended_dags_and_open_nodes(
        htcondor_pool, shared_dir, state):
    write(shared_dir, "job.sub", JOB)
    dag = write(shared_dir, "g.dag", "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\n")
    cluster = submit(dag, ["--backend", "htcondor"])
    schedd = HTCondorSchedd()

    async def scenario(pilot):
        app = pilot.app
        dags = await open_list(pilot)
        table = dags.table
        await wait_for(pilot, lambda: str(cluster) in table.items and table.items[str(cluster)].nodes.get("running"),
                       "the pool's DAG, A running")
        listed = table.items[str(cluster)]
        assert listed.dag_file == str(dag), "found from the -Dag argument (condor_dagman names its batch later)"
        assert listed.owner == htcondor_pool.env["CRABTUI_TESTPOOL_USER"] == dags.snapshot.owner, "mine: listed"
        assert cells(table, str(cluster))[3].strip() == listed.owner
        assert re.fullmatch(r"out \d+s", cells(table, str(cluster))[7].strip())

        go(shared_dir, "A")
        await wait_for(pilot, lambda: table.items[str(cluster)].done == 1, "A done, read from dagman.out")
        ad = schedd.query_values(f"ClusterId == {cluster}", ["DAG_NodesDone", "DAG_AdUpdateTime"])[0]
        assert ad.get("DAG_NodesDone", 0) == 0, "the pool's DAGMan has not updated its ad: it does every 5 minutes"
        assert cells(table, str(cluster))[6].strip().startswith("1/2 ✔1")

        screen = await open_dag(pilot, cluster)
        await wait_for(pilot, lambda: node_rows(screen).get("B", ["", ""])[1] in ("▶ running", "○ idle"),
                       "B queued on the pool")
        shown = node_rows(screen)
        assert shown["A"][1] == "✔ done" and shown["A"][4] == "0"
        assert any(key.startswith("B#") for key in shown), "B's job under B"
        screen.table.move_cursor(row=screen.table.get_row_index("A"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeScreen) and app.screen.snapshot is not None,
                       "node A's drilldown")
        assert 'DAGNodeName = "A"' in app.screen.snapshot.ad_text and app.screen.snapshot.texts["stdout"] == "out of A\n"
        await pilot.press("escape")

        await pilot.press("H", "y")
        await wait_for(pilot, lambda: screen.snapshot.halted, "the DAG halted")
        assert is_halted(str(dag)) and "HALTED" in screen.query_one("#summary").render().plain
        await pilot.press("H")
        await wait_for(pilot, lambda: not screen.snapshot.halted, "the DAG resumed")

        await pilot.press("K", "y")
        await wait_for(pilot, lambda: screen.snapshot.where == "history", "condor_dagman gone from the queue")
        assert screen.snapshot.dag.state == "removed"
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.items.get(str(cluster)) is not None and table.items[str(cluster)].ended,
                       "the removed DAG still listed, from the pool's history")
        assert cells(table, str(cluster))[4] == "✗ removed"
        await open_dag(pilot, cluster)

    try:
        run(CrabApp(Backend(state, "htcondor"), interval=0.5), scenario)
    finally:
        remove(cluster)


def test_marked_dags_on_the_pool_are_held_and_released_together(htcondor_pool, shared_dir, state):
    clusters = []
    for name in ("one", "two"):
        (shared_dir / name).mkdir(mode=0o777)
        os.chmod(shared_dir / name, 0o777)
        write(shared_dir / name, "job.sub", GATED)
        clusters.append(submit(write(shared_dir / name, "d.dag", "JOB A job.sub\n"), ["--backend", "htcondor"]))
    schedd = HTCondorSchedd()

    def statuses() -> set[int]:
        return {ad["JobStatus"] for ad in schedd.query_values(
            " || ".join(f"ClusterId == {c}" for c in clusters), ["JobStatus"])}

    async def scenario(pilot):
        app = pilot.app
        dags = await open_list(pilot)
        table = dags.table
        await wait_for(pilot, lambda: all(str(c) in table.items for c in clusters), "both DAGs")
        for cluster in clusters:
            table.move_cursor(row=table.get_row_index(str(cluster)))
            await pilot.press("space")
        await pilot.press("h")
        assert isinstance(app.screen, ConfirmScreen) and app.screen.question == "Hold 2 DAGs?"
        await pilot.press("right", "enter")  # the arrow reaches Yes
        await wait_for(pilot, lambda: statuses() == {JobStatus.HELD}, "both condor_dagman jobs held")
        # as a user would: release once the list shows them held (it learns so from their logs)
        await wait_for(pilot, lambda: all(table.items[str(c)].job_status == JobStatus.HELD for c in clusters),
                       "the list to show both DAGs held")
        await pilot.press("r", "y")
        await wait_for(pilot, lambda: statuses() <= {JobStatus.RUNNING, JobStatus.IDLE}, "both released")

    try:
        run(CrabApp(Backend(state, "htcondor"), interval=0.5), scenario)
    finally:
        remove(*clusters)


def test_the_node_view_is_what_the_pools_dagman_says_in_its_node_status_file(htcondor_pool, shared_dir):
    write(shared_dir, "job.sub", JOB)
    write(shared_dir, "script.sh", "#!/bin/sh\necho \"$0 of $1\"\nexit $2\n", 0o777)
    write(shared_dir, "sub.dag", "JOB S1 job.sub\n")
    go(shared_dir, "A", "B", "C", "D", "S1", "Z")
    dag = write(shared_dir, "x.dag", "JOB A job.sub\nSCRIPT PRE A ./script.sh A 0\n"
                                     "JOB B job.sub\nVARS B code=\"3\"\nRETRY B 2\nSCRIPT POST B ./script.sh B $RETURN\n"
                                     "JOB C job.sub\nJOB D job.sub\nJOB P job.sub\nSCRIPT PRE P ./script.sh P 7\n"
                                     "SUBDAG EXTERNAL SD sub.dag\nPARENT A CHILD B C SD\nPARENT B CHILD D\n"
                                     "NODE_STATUS_FILE x.status 0 ALWAYS-UPDATE\n")
    cluster = submit(dag, ["--backend", "htcondor"])
    try:
        assert dagman_exit(dag) == 1
    finally:
        remove(cluster)
    progress = DagWatcher(str(dag)).read()
    expected = {ad["Node"]: ad for ad in read_node_status(str(shared_dir / "x.status")) if ad["Type"] == "NodeStatus"}
    got = {n.name: n for n in progress.nodes}
    assert set(got) == set(expected)
    for name, ad in expected.items():
        assert (name, int(got[name].state), got[name].retries) == (name, ad["NodeStatus"], ad["RetryCount"])
        if got[name].state is NodeState.ERROR:
            assert got[name].why == ad["StatusDetails"]
    assert got["D"].why == "parent B failed" and got["B"].exit_code == 3
    assert progress.exit_status == 1 and progress.rescue_written == "x.dag.rescue001"


def test_a_dag_whose_directory_this_machine_cannot_see_is_read_from_its_ad_and_not_halted_from_here(
        htcondor_pool, state):
    """Submitted inside the pool's tree, as its job user, in a directory the host does not have."""
    env = htcondor_pool.env
    root, user, uid = env["CRABTUI_TESTPOOL_ROOT"], env["CRABTUI_TESTPOOL_USER"], htcondor_pool.uid
    name = os.path.basename(tempfile.mkdtemp(prefix="far-", dir="/tmp"))
    os.rmdir(f"/tmp/{name}")
    inside = f"/home/{user}/{name}"  # its path in the pool's tree: no such directory here
    assert not os.path.exists(inside)
    where = Path(root + inside)
    where.mkdir()
    write(where, "job.sub", GATED)
    write(where, "far.dag", "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\n")
    os.chown(where, uid, uid)
    submitted = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", shutil.which("chroot") or "/usr/sbin/chroot",
                                f"--userspec={user}", root, "env", "-C", inside, "condor_submit_dag", "far.dag"],
                               capture_output=True, text=True, timeout=120)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    cluster = int(re.search(r"submitted to cluster (\d+)\.", submitted.stdout).group(1))
    try:
        halted = crabtui("--backend", "htcondor", "dag", "halt", str(cluster), cwd=Path("/tmp"))
        assert halted.returncode == 1 and "Traceback" not in halted.stderr
        assert halted.stderr.startswith(f"ERROR: cannot write {inside}/far.dag.halt from this machine")
        assert f"(`crabtui --backend htcondor hold {cluster}`)" in halted.stderr
        assert len(halted.stderr.splitlines()) == 1

        async def scenario(pilot):
            app = pilot.app
            await open_list(pilot)
            screen = await open_dag(pilot, cluster)
            await wait_for(pilot, lambda: screen.snapshot.dag.total == 2, "the counts from condor_dagman's ad")
            summary = screen.query_one("#summary").render().plain
            assert "DAGMan's job ad" in summary and "cannot be read from this machine" in summary
            await pilot.press("2")
            assert f"{inside}/far.dag.dagman.out cannot be read from this machine" in \
                screen.query_one("#info").render().plain
            await pilot.press("1", "H")
            assert "Hold its DAGMan job instead" in app.screen.details
            await pilot.press("y")
            await wait_for(pilot, lambda: any(f"cannot write {inside}/far.dag.halt" in n for n in notices(app)),
                           "the halt refused, plainly")
            assert not any("FileNotFoundError" in n for n in notices(app))

        run(CrabApp(Backend(state, "htcondor"), interval=0.5), scenario)
    finally:
        remove(cluster)
        shutil.rmtree(where, ignore_errors=True)
