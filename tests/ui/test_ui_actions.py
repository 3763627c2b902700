"""The UI's actions on real tasks of a real embedded engine: hold and release, halt and unhalt,
kill, resubmit; every one asked first; and what the UI shows when the engine stops answering."""

from __future__ import annotations

import os
import time

import pytest

from crabtui.app import CrabApp
from crabtui.screens.dialogs import ConfirmScreen, ResubmitScreen
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from engine.crab.taskworker.taskdb import TaskDB
from engine.dagman.halt import is_halted
from engine.schedd.api import JobStatus
from engine.schedd.local.client import LocalScheddClient
from installed import CRABTUI
from ui_terminal import Terminal
from test_ui_views import INTERVAL, drive
from textual.widgets import Input
from ui_tasks import cells, open_task, submit, submit_failing_to_submit, wait_for, wait_task


@pytest.fixture(scope="module")
def running_task(engine, tmp_path_factory) -> str:
    """A task whose four jobs run for minutes (real time: timeScale 1)."""
    name = submit(engine, tmp_path_factory.mktemp("running"), "steady", scale=1)
    wait_task(engine, name, "SUBMITTED")
    return name


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def job_status(state, condor_id: str) -> int:
    with LocalScheddClient(state) as schedd:
        return schedd.query(f"ClusterId == {condor_id.split('.')[0]}", ["JobStatus"])[0]["JobStatus"]


def test_hold_asks_first_then_holds_and_releases_the_job(engine, running_task):
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, running_task)
        jobs = screen.query_one("#job-table")
        await wait_for(pilot, lambda: "1" in screen.snapshot.node_jobs and jobs.items["1"].state == "running",
                       "job 1 running")
        jobs.move_cursor(row=jobs.get_row_index("1"))
        condor_id = screen.snapshot.node_jobs["1"]
        await pilot.press("h")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.focused.id == "no"
        assert dialog.question == "Hold 1 job(s) of steady?" and f"job 1 ({condor_id}, running at " in dialog.details
        await pilot.press("enter")  # No has the focus
        assert app.screen is screen and job_status(engine, condor_id) == JobStatus.RUNNING

        await pilot.press("h")
        await pilot.press("y")
        await wait_for(pilot, lambda: jobs.items["1"].state == "held", "job 1 held")
        assert cells(jobs, "1")[2] == "‖ held" and job_status(engine, condor_id) == JobStatus.HELD
        assert "Held 1 job(s)." in notices(app)

        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen) and "go back to idle" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: jobs.items["1"].state != "held", "job 1 released")
        assert job_status(engine, condor_id) in (JobStatus.IDLE, JobStatus.RUNNING)
        await pilot.press("r")  # nothing held any more: nothing to ask
        assert app.screen is screen and "Nothing to release" in notices(app)[-1]

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_halt_stops_the_dag_and_h_again_resumes_it(engine, running_task):
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, running_task)
        dag = os.path.join(screen.snapshot.task.task_dir, "RunJobs.dag")
        await pilot.press("H")
        assert isinstance(app.screen, ConfirmScreen) and "writes a rescue DAG" in app.screen.details
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.snapshot.halted, "the DAG halted")
        assert is_halted(dag) and "HALTED" in screen.query_one("#summary").render().plain
        await pilot.press("H")  # resuming needs no confirmation
        await wait_for(pilot, lambda: not screen.snapshot.halted, "the DAG resumed")
        assert not is_halted(dag) and "Resumed the DAG of steady." in notices(app)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_kill_from_the_task_list_names_the_task_and_kills_it(engine, tmp_path):
    name = submit(engine, tmp_path, "doomed", scale=1)
    wait_task(engine, name, "SUBMITTED")

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: name in tasks.items, "the task")
        tasks.move_cursor(row=tasks.get_row_index(name))
        await pilot.press("K")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Kill doomed?" and name in dialog.details
        await pilot.press("escape")
        assert app.screen is not dialog and TaskDB(engine.tasks).get(name).status == "SUBMITTED"
        await pilot.press("K")
        await pilot.press("y")
        await wait_for(pilot, lambda: tasks.items[name].task.status == "KILLED", "the task killed", timeout=90)
        assert cells(tasks, name)[3] == "✗ KILLED"
        await pilot.press("R")  # a kill is final: refused in one line, before any form
        assert not isinstance(app.screen, ResubmitScreen)
        assert notices(app)[-1].startswith("Nothing to resubmit: You cannot resubmit jobs if the task is in "
                                           "status KILLED.") and "\n" not in notices(app)[-1]

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_resubmit_of_a_task_that_failed_to_submit_submits_it_anew_as_crab_resubmit_does(engine, tmp_path):
    """crab resubmit takes a SUBMITFAILED task and submits it anew, and so does task resubmit; R on
    such a task said 'Nothing to resubmit: You cannot resubmit jobs if the task is in status
    SUBMITFAILED', naming the statuses a resubmit takes, which left it out."""
    name = submit_failing_to_submit(engine, tmp_path)
    db = TaskDB(engine.tasks)
    first = db.get(name).updated_at

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: name in tasks.items, "the task")
        tasks.move_cursor(row=tasks.get_row_index(name))
        await pilot.press("R")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and name in dialog.details, notices(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: "Resubmit request for nomask sent; it is submitted anew." in notices(app),
                       "the resubmit sent")
        await wait_for(pilot, lambda: db.get(name).updated_at > first and db.get(name).status == "SUBMITFAILED",
                       "the task submitted anew (and refused again: its lumi mask still selects nothing)")

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
    finally:
        db.close()


def test_bulk_kill_leaves_a_finished_task_alone_and_says_so(engine, tmp_path):
    done = submit(engine, tmp_path, "finished", scale=5000)
    wait_task(engine, done, "COMPLETED")
    doomed = submit(engine, tmp_path, "doomedtoo", scale=1)
    wait_task(engine, doomed, "SUBMITTED")

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: {done, doomed} <= set(tasks.items), "both tasks")
        tasks.move_cursor(row=tasks.get_row_index(done))
        await pilot.press("K")  # the finished task alone: nothing to ask
        assert app.screen.query_one("#tasks") is tasks and "Nothing to kill" in notices(app)[-1]
        assert "finished (COMPLETED)" in notices(app)[-1]
        await pilot.press("space")
        tasks.move_cursor(row=tasks.get_row_index(doomed))
        await pilot.press("space", "K")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Kill doomedtoo?"
        assert doomed in dialog.details and done not in dialog.details
        assert "Left alone: finished (COMPLETED)" in dialog.details
        await pilot.press("y")
        await wait_for(pilot, lambda: tasks.items[doomed].task.status == "KILLED", "the task killed", timeout=90)
        assert TaskDB(engine.tasks).get(done).status == "COMPLETED"

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_resubmit_form_checks_crabs_options_and_resubmits_the_marked_failed_job(engine, tmp_path):
    name = submit(engine, tmp_path, "again", scale=500, plan='{job = "4", attempt = "*", exitCode = 99}')
    wait_task(engine, name, "FAILED")

    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, name)
        jobs = screen.query_one("#job-table")
        jobs.move_cursor(row=jobs.get_row_index("4"))
        await pilot.press("space", "R")
        form = app.screen
        assert isinstance(form, ResubmitScreen) and form.query_one("#jobids", Input).value == "4"
        form.query_one("#maxmemory", Input).value = "10"
        await pilot.press("ctrl+s")
        assert app.screen is form and "must be between 30 and 30720 MB" in str(form.query_one("#error").render())
        form.query_one("#maxmemory", Input).value = "3000"
        form.query_one("#jobids", Input).value = "1,4"  # job 1 finished: the engine refuses, the form stays
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Not possible to resubmit the following jobs: 1 (1: finished)" in
                       str(form.query_one("#error").render()), "the refusal under the fields")
        assert app.screen is form and form.query_one("#maxmemory", Input).value == "3000"
        assert not str(form.query_one("#error").render()).startswith("ResubmitError")
        form.query_one("#jobids", Input).value = "4"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen), "the form to close once accepted")
        await wait_for(pilot, lambda: any("Resubmit request for again sent" in n for n in notices(app)),
                       "the resubmit request")

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
    db = TaskDB(engine.tasks)
    deadline = time.monotonic() + 60
    while (task := db.get(name)).arguments.get("job_ids") != ["4"]:  # the task worker took the request
        assert time.monotonic() < deadline, f"the resubmit was not carried out: {task}"
        time.sleep(0.1)
    assert task.command == "RESUBMIT" and task.arguments["maxmemory"] == 3000


def test_a_site_marked_for_the_next_resubmit_is_blacklisted_once_it_is_sent(engine, tmp_path):
    """b marks a site 'at next resubmit'; once R's resubmit with it is accepted the mark is spent:
    the Sites tab shows the site blacklisted by the task, as ``crab status`` and the next resubmit see it."""
    name = submit(engine, tmp_path, "marked", scale=500, plan='{job = "4", attempt = "*", exitCode = 99}')
    wait_task(engine, name, "FAILED")

    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, name)
        await pilot.press("3")
        sites = screen.query_one("#site-table")
        await wait_for(pilot, lambda: "T2_CH_CERN" in sites.items, "the sites")
        sites.move_cursor(row=sites.get_row_index("T2_CH_CERN"))
        await pilot.press("b")
        assert cells(sites, "T2_CH_CERN")[6] == "⊘ at next resubmit"
        await pilot.press("R")
        form = app.screen
        assert isinstance(form, ResubmitScreen) and "T2_CH_CERN" in form.query_one("#siteblacklist", Input).value
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen), "the resubmission accepted")
        await wait_for(pilot, lambda: cells(sites, "T2_CH_CERN")[6] == "⊘ blacklisted",
                       "CERN in the task's blacklist", timeout=60)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_rows_and_status_line_turn_stale_when_the_engine_stops_answering(state, tmp_path):
    name = submit(state, tmp_path, "orphan", scale=1)

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        bar = app.screen.status_bar
        await wait_for(pilot, lambda: name in tasks.items and bar.updated_at, "the task")
        assert cells(tasks, name)[1] == ""
        LocalScheddClient(state).shutdown()
        await wait_for(pilot, lambda: bar.error, "the status line to notice")
        assert "STALE" in bar.render().plain and "schedd" in bar.error  # closed, or not running
        assert cells(tasks, name)[1] == "⚠" and tasks.items[name].task.request_name == "orphan"

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario)


def test_a_stale_reason_too_long_for_80_columns_keeps_its_start_and_its_end(state, tmp_path):
    """At 80 columns the reason the data went stale does not fit beside where you are: it loses its
    middle, so that what failed and what to do both stay; it kept only its end, which read
    '…CONDOR_CONFIG points to its client configuration' with nothing of what had failed."""
    submit(state, tmp_path, "cut", scale=1)

    async def scenario(pilot):
        bar = pilot.app.screen.status_bar
        await wait_for(pilot, lambda: bar.updated_at, "the task list")
        LocalScheddClient(state).shutdown()
        await wait_for(pilot, lambda: bar.error, "the status line to notice")
        shown = bar.render().plain
        reason = bar.error.strip()
        assert len(shown) <= 80 and len(reason) > 60 and "…" in shown, (shown, reason)
        start, end = shown.split("STALE")[1].split(": ", 1)[1].strip().split("…")
        assert len(start) >= 15 and reason.startswith(start) and reason.endswith(end) and len(end) >= 15, shown

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(80, 24))


def test_crabtui_without_a_command_opens_the_ui_and_q_quits(engine):
    with Terminal([CRABTUI, "--state-dir", engine.path], {**os.environ, "TERM": "xterm-256color"}) as terminal:
        terminal.wait_for(b"tasks", b"live")
        assert terminal.quit() == 0


def test_a_running_jobs_open_attempt_says_where_it_runs(engine, running_task):
    """The drilldown's attempt row of a running job names its site, when it started and how long it
    has run, as its header and the Jobs tab do; it read blank until PostJob closed the attempt."""
    from crabtui.screens.job import JobScreen

    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, running_task)
        jobs = screen.query_one("#job-table")
        await wait_for(pilot, lambda: any(j.state == "running" and j.site for j in jobs.items.values()),
                       "a job running")
        job = next(key for key, j in jobs.items.items() if j.state == "running" and j.site)
        site = jobs.items[job].site
        jobs.move_cursor(row=jobs.get_row_index(job))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "the job's screen")
        attempts = app.screen.query_one("#attempt-table")
        await wait_for(pilot, lambda: attempts.row_count, "its attempt")
        last = str(attempts.row_count - 1)
        row = cells(attempts, last)
        assert app.screen.snapshot.job.state == "running", "still running (it runs for minutes)"
        assert row[2].strip() == site and f"site {site}" in app.screen.query_one("#summary").render().plain
        assert row[5].strip(), "its runtime so far"
        assert row[3].strip(), "when it started, as the queue says"
        assert "▶ open" in row

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_the_pace_counts_a_resubmitted_job_to_go_as_soon_as_the_counts_do(engine, tmp_path):
    """The pace is made every few seconds (it reads every attempt), but not while it contradicts
    the counts above it: a resubmitted job is one to go, not 'done'."""
    name = submit(engine, tmp_path, "paced", scale=500, plan='{job = "2", attempt = "*", exitCode = 99}')
    wait_task(engine, name, "FAILED")

    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, name)
        pace = screen.query_one("#pace")
        await wait_for(pilot, lambda: "0 to go, done" in pace.render().plain, "the pace of the ended task")
        await pilot.press("R")
        assert isinstance(app.screen, ResubmitScreen)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen), "the resubmission accepted")
        await wait_for(pilot, lambda: screen.counts.get("failed", 0) == 0, "job 2 no longer failed", timeout=60)
        assert "1 to go" in pace.render().plain, pace.render().plain

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_the_status_line_says_no_answer_when_the_engine_hangs(state, tmp_path):
    """A schedd that is stopped (not gone) answers nothing and the refresh waits: after 10 refresh
    intervals the status line says so instead of 'live', and 'live' again once it answers."""
    import signal

    async def scenario(pilot):
        bar = pilot.app.screen.status_bar
        await wait_for(pilot, lambda: bar.updated_at, "the task list read")
        pid = LocalScheddClient(state).ping()["pid"]
        os.kill(pid, signal.SIGSTOP)
        try:
            await wait_for(pilot, lambda: "no answer for" in bar.render().plain, "the status line to notice")
            assert "live" not in bar.render().plain and not bar.error
        finally:
            os.kill(pid, signal.SIGCONT)
        await wait_for(pilot, lambda: "● live" in bar.render().plain, "live again")

    LocalScheddClient(state).ping()
    drive(CrabApp(Backend(state), interval=INTERVAL), scenario)
