"""The queue view (``b``): condor_q's batches on a real embedded engine, with plain jobs submitted
as condor_submit takes them (``queue 3`` under a batch name, ``queue from`` a file), a batch's
jobs, a job's ClassAd and output, and hold, release and remove of marked batches, each asked first."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from textual.app import App

from crabtui.app import CrabApp
from crabtui.screens.batch import BatchScreen
from crabtui.screens.batches import BatchesScreen
from crabtui.screens.condor_job import CondorJobScreen
from crabtui.screens.dags import DagsScreen
from crabtui.screens.dialogs import ConfirmScreen
from crabtui.screens.help import HelpScreen
from crabtui.snapshots import Backend
from crabtui.widgets.log_view import LogView
from crabtui.widgets.states import DEFAULT_PALETTE
from crabtui.widgets.status_bar import StatusBar
from engine.schedd.api import JobStatus
from engine.schedd.local.client import LocalScheddClient
from test_ui_dags import Queries, info, held_and_released
from test_ui_views import INTERVAL, drive
from ui_tasks import cells, crabtui, wait_for

# Each proc says who it is, waits for go.<proc> in its directory, then exits with its proc id.
GATED = ("executable = /bin/sh\n"
         "arguments = \"-c 'echo out of $(Process); while [ ! -e go.$(Process) ]; do sleep 0.1; done; "
         "exit $(Process)'\"\n"
         "output = out.$(Process)\nerror = err.$(Process)\nlog = jobs.log\n")
# A DAG node's job, without a log of its own: waits for go.<node> in its directory.
GATED_NODE = ("executable = /bin/sh\narguments = \"-c 'while [ ! -e go.$(JOB) ]; do sleep 0.1; done'\"\n"
              "queue\n")


def job_submit(state, directory: Path, text: str, name: str = "jobs.sub", *files: tuple[str, str]) -> int:
    """``crabtui job submit NAME`` in ``directory``; the cluster it queued."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)
    for file, content in files:
        (directory / file).write_text(content)
    result = crabtui(state, "job", "submit", name, cwd=directory)
    assert result.returncode == 0, result.stderr
    return int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))


def statuses(state, cluster: int) -> list[int]:
    with LocalScheddClient(state) as schedd:
        return [ad["JobStatus"] for ad in schedd.query_values(f"ClusterId == {cluster}", ["JobStatus"])]


async def open_queue(pilot) -> BatchesScreen:
    await pilot.press("b")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, BatchesScreen) and pilot.app.screen.snapshot,
                   "the queue view")
    return pilot.app.screen


def batch_line(state, name: str) -> list[str]:
    """``crabtui q``'s line of batch ``name``, split into its columns."""
    result = crabtui(state, "q", cwd=Path("/tmp"))
    line = next(line for line in result.stdout.splitlines() if f" {name} " in line)
    return line.split()


def test_plain_jobs_show_as_condor_q_batches_and_open_to_their_jobs_and_output(engine, tmp_path):
    named = job_submit(engine, tmp_path / "named", GATED + "batch_name = analysis\nqueue 3\n")
    listed = job_submit(engine, tmp_path / "listed", GATED.replace("$(Process);", "$(Process) $(item);")
                        + "queue item from args.txt\n", "listed.sub", ("args.txt", "alpha\nbeta\n"))
    (tmp_path / "named" / "go.0").touch()  # proc 0 ends with exit 0, the others wait

    async def scenario(pilot):
        screen = await open_queue(pilot)
        table = screen.table
        owner = screen.snapshot.owner
        key, other = f"{owner} analysis", f"{owner} ID: {listed}"
        await wait_for(pilot, lambda: key in table.items and table.items[key].done == 1
                       and table.items[key].running + table.items[key].idle == 2, "proc 0 done, 1 and 2 queued")
        await wait_for(pilot, lambda: other in table.items and table.items[other].total == 2, "the listed cluster")
        row = [c.strip() for c in cells(table, key)][2:]  # the mark and stale cells left out
        assert row[:2] == [owner, "analysis"] and row[-1] == f"{named}.1-2"
        assert row[3] == "1" and row[-2] == "3", "done 1 of total 3"
        q = batch_line(engine, "analysis")  # crabtui q's line of the same batch: the same counts
        assert q[0] == owner and q[-1] == f"{named}.1-2" and q[-2] == "3"
        assert [c.strip() for c in cells(table, other)][-1] == f"{listed}.0-1"

        table.move_cursor(row=table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BatchScreen) and pilot.app.screen.snapshot,
                       "the batch's jobs")
        jobs = pilot.app.screen
        await wait_for(pilot, lambda: {f"{named}.{p}" for p in range(3)} <= set(jobs.table.items),
                       "its three procs, the ended one from the history")
        first = [c.strip() for c in cells(jobs.table, f"{named}.0")][2:]
        assert first[1] == "completed" and first[4] == "exit 0"
        assert [c.strip() for c in cells(jobs.table, f"{named}.1")][3] in ("idle", "running")
        assert "3 jobs" in info(jobs) and f"{owner}'s analysis of 3" in info(jobs)
        await wait_for(pilot, lambda: any(j.state == "running" for j in jobs.table.items.values()), "a proc running")
        running = next(j.id for j in jobs.table.items.values() if j.state == "running")
        row = [c.strip() for c in cells(jobs.table, running)][2:]
        assert row[3].endswith(("s", "m")) and row[5], f"its run time and its host: {row}"

        jobs.table.move_cursor(row=jobs.table.get_row_index(f"{named}.1"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CondorJobScreen) and pilot.app.screen.snapshot,
                       "the job's drilldown")
        job = pilot.app.screen
        assert 'JobBatchName = "analysis"' in job.snapshot.ad_text and job.snapshot.where == "queue"
        await wait_for(pilot, lambda: (job.snapshot.texts.get("stdout") or "") == "out of 1\n", "its stdout")
        log = job.snapshot.texts.get("log") or ""
        assert {tuple(map(int, m)) for m in re.findall(r"^\d{3} \((\d+)\.(\d+)\.\d+\)", log, re.M)} == {(named, 1)}, \
            f"its own events from its user log, not the other procs': {log}"
        assert "000 (" in log, "its submit event"
        await pilot.press("2")
        assert job.query_one("#cj-stdout-text", LogView).lines[0] == "out of 1"
        for p in (1, 2):
            (tmp_path / "named" / f"go.{p}").touch()
        for p in (0, 1):
            (tmp_path / "listed" / f"go.{p}").touch()

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(120, 30))


def test_marked_batches_are_held_released_and_removed_each_asked_first(engine, tmp_path):
    first = job_submit(engine, tmp_path / "a", GATED + "batch_name = first\nqueue 2\n")
    second = job_submit(engine, tmp_path / "b", GATED + "batch_name = second\nqueue 1\n")
    alone = job_submit(engine, tmp_path / "c", GATED + "batch_name = alone\nqueue 1\n")

    async def scenario(pilot):
        app = pilot.app
        screen = await open_queue(pilot)
        table = screen.table
        owner = screen.snapshot.owner
        keys = [f"{owner} first", f"{owner} second"]
        await wait_for(pilot, lambda: set(keys) <= set(table.items), "both batches")
        for key in keys:
            table.move_cursor(row=table.get_row_index(key))
            await pilot.press("space")
        await pilot.press("h")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Hold 3 jobs of 2 batches?"
        assert f"first of {owner}: 2 jobs ({first}.0-1)" in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: statuses(engine, first) == [JobStatus.HELD] * 2
                       and statuses(engine, second) == [JobStatus.HELD], "both batches held")
        await wait_for(pilot, lambda: table.items[keys[0]].held == 2 and table.items[keys[1]].held == 1,
                       "the holds in the view")
        assert JobStatus.HELD not in statuses(engine, alone), "the unmarked batch is left alone"
        await pilot.press("r")
        assert app.screen.question == "Release 3 jobs of 2 batches?"
        await pilot.press("y")
        await wait_for(pilot, lambda: JobStatus.HELD not in statuses(engine, first) + statuses(engine, second),
                       "both released")
        await pilot.press("K")
        assert app.screen.question == "Remove 3 jobs of 2 batches?"
        await pilot.press("n")
        assert statuses(engine, first) and statuses(engine, second), "No removes nothing"
        await pilot.press("K", "y")
        await wait_for(pilot, lambda: not statuses(engine, first) and not statuses(engine, second), "both removed")
        await wait_for(pilot, lambda: not set(keys) & set(table.items), "gone from the view")
        assert f"{owner} alone" in table.items
        (tmp_path / "c" / "go.0").touch()

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(120, 30))


def test_the_queue_view_follows_the_jobs_logs_instead_of_querying_the_queue(state, tmp_path, monkeypatch):
    cluster = job_submit(state, tmp_path, GATED + "batch_name = followed\nqueue 2\n")
    queries = Queries(monkeypatch)

    async def scenario(pilot):
        screen = await open_queue(pilot)
        table = screen.table
        key = f"{screen.snapshot.owner} followed"
        await wait_for(pilot, lambda: key in table.items, "the batch")
        asked = len(queries.constraints)
        held_and_released(state, f"{cluster}.1", hold=True)
        await wait_for(pilot, lambda: table.items[key].held == 1, "the hold, from the jobs' log")
        (tmp_path / "go.0").touch()
        await wait_for(pilot, lambda: table.items[key].done == 1 and table.items[key].ids == f"{cluster}.1",
                       "proc 0 done, from the log")
        assert queries.constraints[asked:] == [], "no query: the log told it all"
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: len(queries.constraints) > asked, "ctrl+r asks the schedd")
        held_and_released(state, f"{cluster}.1", hold=False)
        (tmp_path / "go.1").touch()

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_b_opens_the_queue_from_the_task_and_dag_lists_within_80_columns(state, tmp_path):
    job_submit(state, tmp_path, GATED + "queue 1\n")
    job_submit(state, tmp_path / "held", "executable = /bin/true\nhold = true\nqueue 1\n")

    async def scenario(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: app.screen.status_bar.updated_at is not None, "the task list read")
        bar = app.screen.query_one("KeyBar").render().plain
        assert " b Queue " in bar and "u Mine" not in bar, "b takes u's place on the task list's bar at 80 columns"
        await pilot.press("question_mark")
        assert ("b", "The queue by batch, as condor_q shows it: every job, plain ones too") in app.screen.key_rows
        await pilot.press("escape")
        screen = await open_queue(pilot)
        await wait_for(pilot, lambda: screen.table.items, "the job's batch")
        await pilot.pause()
        header = screen.table.render_line(0).text
        assert header.split()[1:10] == ["Owner", "Batch", "name", "Submitted", "Done", "Run", "Idle", "Hold",
                                        "Total"], f"the counts up to Total within 80 columns: {header}"
        await wait_for(pilot, lambda: info(screen).endswith(", 1 held"), "the held job counted")
        assert len(info(screen)) <= 80, f"the info line within 80 columns: {info(screen)}"
        assert screen.query_one("KeyBar").render().plain == (
            " ⏎ Open  esc Back  q Quit  / Filter  f Find  K Remove  h Hold".ljust(80 - len(" ? more ")) + " ? more ")
        await pilot.press("escape", "d")
        await wait_for(pilot, lambda: isinstance(app.screen, DagsScreen), "the DAG list")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen) and any(key == "b" for key, _ in app.screen.key_rows)
        await pilot.press("escape", "b")
        await wait_for(pilot, lambda: isinstance(app.screen, BatchesScreen), "the queue from the DAG list")
        (tmp_path / "go.0").touch()

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(80, 24))


def test_a_dags_batch_lists_its_dagman_and_node_jobs_and_a_node_job_opens_its_node(engine, tmp_path):
    from crabtui.screens.node import NodeScreen
    from test_ui_dags import go, submit_dag

    dagman, _ = submit_dag(engine, tmp_path)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_queue(pilot)
        table = screen.table
        await wait_for(pilot, lambda: any(b.dagman == dagman and len(b.jobs) == 3 for b in table.items.values()),
                       "the DAG's batch: DAGMan and nodes A and C")
        key = next(k for k, b in table.items.items() if b.dagman == dagman)
        assert table.items[key].name == f"d.dag+{dagman}" and table.items[key].total == 3, "as condor_q names it"
        table.move_cursor(row=table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BatchScreen) and len(app.screen.table.items) == 3,
                       "DAGMan and its two node jobs")
        jobs = app.screen
        node_a = next(j for j in jobs.table.items.values() if j.node == "A")
        jobs.table.move_cursor(row=jobs.table.get_row_index(node_a.id))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeScreen) and app.screen.snapshot is not None,
                       "node A's screen")
        assert (app.screen.dag, app.screen.path) == (dagman, "A")
        go(tmp_path, "A", "B", "C")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(120, 30))


def test_a_crab_tasks_job_in_the_queue_view_opens_as_the_tasks_job(engine, tmp_path):
    from crabtui.screens.job import JobScreen
    from ui_tasks import submit, wait_task

    name = submit(engine, tmp_path, "queued", scale=1)  # scale 1: its jobs take real minutes
    wait_task(engine, name, "SUBMITTED")

    async def scenario(pilot):
        app = pilot.app
        screen = await open_queue(pilot)
        table = screen.table
        await wait_for(pilot, lambda: any(b.name == name and len(b.jobs) > 1 for b in table.items.values()),
                       "the task's batch, named by the task as its DAGMan job is")
        key = next(k for k, b in table.items.items() if b.name == name)
        table.move_cursor(row=table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BatchScreen) and any(
            j.crab_id for j in app.screen.table.items.values()), "the task's jobs")
        jobs = app.screen
        job = next(j for j in jobs.table.items.values() if j.crab_id)
        jobs.table.move_cursor(row=jobs.table.get_row_index(job.id))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen), "the task's job screen")
        assert (app.screen.task_name, app.screen.job_id) == (name, job.crab_id)
        assert crabtui(engine, "task", "kill", name, cwd=tmp_path).returncode == 0

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(120, 30))


def test_an_event_written_between_the_query_and_the_logs_mark_shows_without_another_query(state, tmp_path,
                                                                                           monkeypatch):
    cluster = job_submit(state, tmp_path, GATED + "batch_name = between\nqueue 2\n")
    answer = LocalScheddClient.query_values
    whole = []

    def held_after_answering(client, constraint="true", *args, **kwargs):
        found = answer(client, constraint, *args, **kwargs)
        if str(constraint) == "true" and not whole:  # the first answer; then proc 1 is held before its log is marked
            whole.append(found)
            held_and_released(state, f"{cluster}.1", hold=True)
        elif str(constraint) == "true":
            whole.append(found)
        return found

    monkeypatch.setattr(LocalScheddClient, "query_values", held_after_answering)

    async def scenario(pilot):
        screen = await open_queue(pilot)
        table = screen.table
        key = f"{screen.snapshot.owner} between"
        await wait_for(pilot, lambda: key in table.items and table.items[key].held == 1,
                       "the hold written just after the answer")
        assert len(whole) == 1, "the whole queue asked once"
        held_and_released(state, f"{cluster}.1", hold=False)
        for p in (0, 1):
            (tmp_path / f"go.{p}").touch()

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_a_batchs_first_cluster_that_left_the_queue_still_lists_its_ended_procs(engine, tmp_path):
    first = job_submit(engine, tmp_path / "first", GATED + "batch_name = twice\nqueue 2\n")
    second = job_submit(engine, tmp_path / "second", GATED + "batch_name = twice\nqueue 1\n")

    async def scenario(pilot):
        screen = await open_queue(pilot)
        key = f"{screen.snapshot.owner} twice"
        await wait_for(pilot, lambda: key in screen.table.items, "the batch of two clusters")
        screen.table.move_cursor(row=screen.table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BatchScreen) and pilot.app.screen.snapshot,
                       "the batch's jobs")
        jobs = pilot.app.screen
        await wait_for(pilot, lambda: set(jobs.table.items) == {f"{first}.0", f"{first}.1", f"{second}.0"},
                       "the three procs of both clusters")
        for p in (0, 1):
            (tmp_path / "first" / f"go.{p}").touch()
        await wait_for(pilot, lambda: jobs.snapshot.batch is not None and jobs.snapshot.batch.ids == f"{second}.0",
                       "the first cluster out of the queue")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: {j.id: (j.state, j.outcome) for j in jobs.table.items.values()
                                       if j.id != f"{second}.0"}
                       == {f"{first}.0": ("completed", "exit 0"), f"{first}.1": ("completed", "exit 1")}
                       and f"{second}.0" in jobs.table.items, "the first cluster's procs, from the history")
        (tmp_path / "second" / "go.0").touch()

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(120, 30))


def test_a_wide_terminal_gives_the_batch_name_its_room(state, tmp_path):
    job_submit(state, tmp_path, GATED + "batch_name = calibration_2026_run3\nqueue 1\n")

    async def scenario(pilot):
        screen = await open_queue(pilot)
        key = f"{screen.snapshot.owner} calibration_2026_run3"
        await wait_for(pilot, lambda: key in screen.table.items, "the batch")
        await pilot.pause()
        line = screen.table.render_line(1 + screen.table.get_row_index(key)).text
        assert " calibration_2026_run3 " in line, f"not cut at 120 columns: {line}"
        (tmp_path / "go.0").touch()

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(120, 30))


def test_a_cluster_submitted_while_no_log_can_be_followed_shows_without_waiting_for_the_whole_query(state, tmp_path):
    unlogged = GATED.replace("log = jobs.log\n", "")  # no user log: the view asks for these jobs by cluster
    job_submit(state, tmp_path / "first", unlogged + "batch_name = first\nqueue 1\n")

    async def scenario(pilot):
        screen = await open_queue(pilot)
        owner = screen.snapshot.owner
        await wait_for(pilot, lambda: f"{owner} first" in screen.table.items, "the first batch")
        asked = screen.snapshot.asked_at
        later = job_submit(state, tmp_path / "later", unlogged + "batch_name = later\nqueue 2\n")
        await wait_for(pilot, lambda: f"{owner} later" in screen.table.items, "the cluster submitted since")
        assert screen.table.items[f"{owner} later"].ids == f"{later}.0-1"
        assert screen.snapshot.asked_at == asked, "found without asking for the whole queue again"
        for directory in ("first", "later"):
            for p in (0, 1):
                (tmp_path / directory / f"go.{p}").touch()

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_a_dags_node_jobs_without_a_log_are_followed_through_the_dags_nodes_log(state, tmp_path, monkeypatch):
    from test_ui_dags import go

    # a node's submit file without ``log =``, as the HTCondor manual's DAG examples write them
    (tmp_path / "job.sub").write_text(GATED_NODE)
    (tmp_path / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\n")
    result = crabtui(state, "dag", "submit", "d.dag", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    dagman = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    with LocalScheddClient(state) as schedd:  # both nodes queued before the view first asks
        for _ in range(600):
            if len(schedd.query_values(f"DAGManJobId == {dagman}", ["ClusterId"])) == 2:
                break
            time.sleep(0.1)
    queries = Queries(monkeypatch)

    async def scenario(pilot):
        screen = await open_queue(pilot)
        table = screen.table

        def batch():
            return next((b for b in table.items.values() if b.dagman == dagman), None)

        await wait_for(pilot, lambda: batch() is not None and len(batch().jobs) == 3, "DAGMan and nodes A and B")
        asked = len(queries.constraints)
        held_and_released(state, batch().jobs[1], hold=True)
        await wait_for(pilot, lambda: batch().held == 1, "the node job's hold, from the DAG's nodes log")
        assert queries.constraints[asked:] == [], "no query: the nodes log told it"
        held_and_released(state, batch().jobs[1], hold=False)
        go(tmp_path, "A", "B")

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_holding_every_marked_job_of_a_batch_counts_the_jobs_it_leaves_alone(state, tmp_path):
    held = "".join(f"{'true' if p >= 5 else 'false'}\n" for p in range(20))  # procs 5-19 held, 0-4 queued
    cluster = job_submit(state, tmp_path, "executable = /bin/true\nrequirements = false\nhold = $(held)\n"
                         "batch_name = mixed\nqueue held from held.txt\n", "jobs.sub", ("held.txt", held))

    async def scenario(pilot):
        app = pilot.app
        screen = await open_queue(pilot)
        key = f"{screen.snapshot.owner} mixed"
        await wait_for(pilot, lambda: key in screen.table.items and screen.table.items[key].held == 15, "the batch")
        screen.table.move_cursor(row=screen.table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BatchScreen) and len(app.screen.table.items) == 20,
                       "its 20 jobs")
        await pilot.press("ctrl+a", "h")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Hold 5 jobs?"
        left = ", ".join(f"{cluster}.{p}" for p in range(5, 17))
        assert f"Left alone (not idle or running): {left} and 3 more" in dialog.details, dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: statuses(state, cluster) == [JobStatus.HELD] * 20, "every job held")
        await wait_for(pilot, lambda: all(j.state == "held" for j in app.screen.table.items.values()), "shown held")
        await pilot.press("r")
        assert app.screen.question == "Release 20 jobs?"
        assert f"{cluster}.5 (held: submitted on hold" in app.screen.details, "said held once"
        await pilot.press("n")

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(120, 30))


def test_an_action_on_followed_jobs_shows_from_their_log_without_asking_for_the_whole_queue(state, tmp_path,
                                                                                           monkeypatch):
    cluster = job_submit(state, tmp_path, GATED + "batch_name = acted\nqueue 3\n")
    queries = Queries(monkeypatch)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_queue(pilot)
        key = f"{screen.snapshot.owner} acted"
        await wait_for(pilot, lambda: key in screen.table.items, "the batch")
        screen.table.move_cursor(row=screen.table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BatchScreen) and len(app.screen.table.items) == 3,
                       "its 3 jobs")
        jobs = app.screen
        asked = len(queries.constraints)
        await pilot.press("ctrl+a", "h")
        assert app.screen.question == "Hold 3 jobs?"
        await pilot.press("y")
        await wait_for(pilot, lambda: all(j.state == "held" for j in jobs.table.items.values()), "shown held")
        await pilot.press("escape", "escape")  # the marks, then back to the batch list
        await wait_for(pilot, lambda: app.screen is screen and screen.table.items[key].held == 3, "the list's count")
        assert "true" not in queries.constraints[asked:], "the jobs' log told what the hold did"
        held_and_released(state, f"{cluster}", hold=False)
        for p in range(3):
            (tmp_path / f"go.{p}").touch()

    drive(CrabApp(Backend(state, discover_every=3600), interval=INTERVAL), scenario)


def test_thousands_of_jobs_are_counted_in_full_on_the_info_line_at_80_columns(state, tmp_path):
    for name, held in (("waiting", "false"), ("stopped", "true")):
        job_submit(state, tmp_path / name, "executable = /bin/true\nrequirements = false\n"
                   f"hold = {held}\nbatch_name = {name}\nqueue 1500\n")

    async def scenario(pilot):
        screen = await open_queue(pilot)
        await wait_for(pilot, lambda: info(screen).endswith("1500 idle, 1500 held"), "both batches")
        assert info(screen).endswith("0 running, 1500 idle, 1500 held") and len(info(screen)) <= 78, \
            f"every count whole within 80 columns: {info(screen)}"

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(80, 24))


def test_the_info_lines_job_counts_are_of_the_batches_the_filter_shows(state, tmp_path):
    """As condor_q's totals with a constraint count the jobs it matched ("Total for query")."""
    for name, held, count in (("waiting", "false", 3), ("stopped", "true", 2)):
        job_submit(state, tmp_path / name, "executable = /bin/true\nrequirements = false\n"
                   f"hold = {held}\nbatch_name = {name}\nqueue {count}\n")

    async def scenario(pilot):
        screen = await open_queue(pilot)
        await wait_for(pilot, lambda: info(screen).endswith("0 running, 3 idle, 2 held"), "both batches")
        await pilot.press("slash", *"batch:stopped", "enter")
        await wait_for(pilot, lambda: "1 of 2 batches" in info(screen), "the filter on")
        assert info(screen).endswith("0 running, 0 idle, 2 held"), info(screen)
        await pilot.press("u")  # every user's: the info line says so, and how to go back
        await wait_for(pilot, lambda: "all users' (u: yours)" in info(screen), "every user's batches")

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario)


def test_a_slow_answer_is_waited_for_not_called_no_answer_since_the_last_one():
    """100,000 jobs take the schedd seconds to tell: the first answer is waited for, and a list
    back from under a batch's screen (asking again now, its last answer long ago) has not gone
    unanswered; a refresh unanswered for 10 intervals is."""
    now = 1_700_000_000.0

    class BarApp(App):
        palette, interval = DEFAULT_PALETTE, 1.0

        def clock(self) -> float:
            return now

        def compose(self):
            yield StatusBar()

    async def main():
        async with BarApp().run_test(size=(120, 3)) as pilot:
            bar = pilot.app.query_one(StatusBar)
            shown = {}
            for case, (updated, asked) in {"first": (None, now - 15), "back": (now - 40, now - 2),
                                           "stopped": (now - 40, now - 15)}.items():
                bar.updated_at, bar.asked_at = updated, asked
                await pilot.pause()
                shown[case] = bar.render().plain.strip()
            assert shown["first"].endswith("… waiting for the first answer · 15s"), shown
            assert "no answer" not in shown["back"] and "live · 40s ago" in shown["back"], shown
            assert shown["stopped"].endswith("⚠ no answer for 15s"), shown

    asyncio.run(main())


def test_removing_a_dags_batch_removes_its_dagman_and_every_node_job(state, tmp_path):
    from test_ui_dags import notices

    (tmp_path / "job.sub").write_text("executable = /bin/true\nrequirements = false\nqueue\n")  # node jobs stay idle
    (tmp_path / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\n")
    result = crabtui(state, "dag", "submit", "d.dag", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    dagman = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))

    def queued() -> list[dict]:
        with LocalScheddClient(state) as schedd:
            return schedd.query_values(f"ClusterId == {dagman} || DAGManJobId == {dagman}", ["ClusterId"])

    for _ in range(600):  # both nodes queued: the batch's jobs are DAGMan's and theirs
        if len(queued()) == 3:
            break
        time.sleep(0.1)

    async def scenario(pilot):
        app = pilot.app
        screen = await open_queue(pilot)
        table = screen.table
        await wait_for(pilot, lambda: any(b.dagman == dagman and len(b.jobs) == 3 for b in table.items.values()),
                       "DAGMan and nodes A and B")
        key = next(k for k, b in table.items.items() if b.dagman == dagman)
        held_and_released(state, f"{dagman}.0", hold=True)  # DAGMan stopped: its removal takes its nodes at once
        log = tmp_path / "d.dag.dagman.log"
        await wait_for(pilot, lambda: log.exists() and "\n012 (" in "\n" + log.read_text(), "DAGMan held, exited")
        table.move_cursor(row=table.get_row_index(key))
        await pilot.press("K")
        assert app.screen.question == f"Remove 3 jobs of d.dag+{dagman}?"
        await pilot.press("y")
        await wait_for(pilot, lambda: notices(app), "the schedd's answer")
        assert notices(app) == ["Removed 3 jobs."], "every job of the batch removed, none refused"
        await wait_for(pilot, lambda: not queued(), "DAGMan and its node jobs out of the queue")

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario)


IDLE = "executable = /bin/true\nrequirements = false\nlog = jobs.log\n"  # queued, never run


def test_the_whole_queue_is_asked_again_30s_after_its_last_answer_not_after_the_question(state, tmp_path,
                                                                                         monkeypatch):
    job_submit(state, tmp_path, IDLE + "batch_name = slow\nqueue 2\n")
    now = [1_700_000_000.0]
    answer = LocalScheddClient.query_values
    whole = []

    def slow(client, constraint="true", *args, **kwargs):
        found = answer(client, constraint, *args, **kwargs)
        if str(constraint) == "true":
            whole.append(now[0])
            now[0] += 18  # 100,000 jobs on a busy machine: the answer comes 18 s after the question
        return found

    monkeypatch.setattr(LocalScheddClient, "query_values", slow)

    async def scenario(pilot):
        screen = await open_queue(pilot)
        key = f"{screen.snapshot.owner} slow"
        await wait_for(pilot, lambda: key in screen.table.items, "the batch")
        answered = now[0]
        for later in (13, 29):  # 31 and 47 s after the question: the logs tell, the schedd is not asked
            now[0] = answered + later
            await wait_for(pilot, lambda: screen.snapshot.at == now[0], f"a refresh {later} s after the answer")
        assert len(whole) == 1, "asked once: 30 s have not passed since the answer"
        now[0] = answered + 31
        await wait_for(pilot, lambda: len(whole) == 2, "the whole queue asked again 30 s after the answer")

    drive(CrabApp(Backend(state, discover_every=30), clock=lambda: now[0], interval=INTERVAL), scenario)


def test_a_job_its_batchs_detail_answer_lacked_is_asked_again_without_the_whole_queue(state, tmp_path,
                                                                                      monkeypatch):
    cluster = job_submit(state, tmp_path, IDLE + "batch_name = details\nqueue 2\n")
    held_and_released(state, f"{cluster}.1", hold=True)  # before the view opens: only the job's details tell why
    now = [1_700_000_000.0]
    answer = LocalScheddClient.query_values
    asked = []

    def lacking(client, constraint="true", projection=(), *args, **kwargs):
        found = answer(client, constraint, projection, *args, **kwargs)
        if "HoldReason" in projection and str(constraint).startswith("member("):
            asked.append(str(constraint))
            if len(asked) == 1:  # the first answer for the batch's jobs lacks proc 1
                found = [ad for ad in found if ad["ProcId"] != 1]
        return found

    monkeypatch.setattr(LocalScheddClient, "query_values", lacking)

    async def scenario(pilot):
        screen = await open_queue(pilot)
        key = f"{screen.snapshot.owner} details"
        await wait_for(pilot, lambda: key in screen.table.items, "the batch")
        screen.table.move_cursor(row=screen.table.get_row_index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BatchScreen) and pilot.app.screen.snapshot
                       and f"{cluster}.1" in pilot.app.screen.table.items, "the batch's jobs")
        jobs = pilot.app.screen

        def outcome() -> str:
            return [c.strip() for c in cells(jobs.table, f"{cluster}.1")][2:][4]

        assert outcome() == "held: no reason given", "not in the answer: nothing to show yet"
        now[0] += 6
        await wait_for(pilot, lambda: outcome().startswith("held: held by the test"), "its hold reason, asked again")
        assert len(asked) == 2

    drive(CrabApp(Backend(state, discover_every=3600), clock=lambda: now[0], interval=INTERVAL), scenario)
