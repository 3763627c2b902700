"""What the UI shows of a real task that has ended: the task list, the task's tabs, a job's
drilldown, filtering, sorting and pausing; and ``crabtui watch``."""

from __future__ import annotations

import asyncio
import os

from crabtui.app import CrabApp
from crabtui.screens.job import JobScreen
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from crabtui.widgets.tabbed import TabBar, Tabbed
from engine.crab.taskworker.taskdb import COMPLETED, SUBMIT, SUBMITTED, UPLOADED, Task, TaskDB
from engine.schedd.local.client import LocalScheddClient
from textual.widgets import Log
from ui_fixed import NOW, task_dir
from ui_tasks import cells, crabtui, open_task, submit, submit_failing_to_submit, wait_for, wait_task

INTERVAL = 0.2


def drive(app: CrabApp, scenario, size=(120, 30)) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await scenario(pilot)

    asyncio.run(main())


def test_the_task_list_shows_status_progress_and_counts(engine, failed_task):
    async def scenario(pilot):
        tasks = pilot.app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: failed_task in tasks.items, "the task")
        _, stale, request, status, progress, jobs, owner, age, message = cells(tasks, failed_task)
        assert (stale, request, status, owner.strip()) == ("", "looked", "✖ FAILED", tasks.items[failed_task].task.user)
        assert progress == "[########xx]  75%" and jobs == "✔3 ✖1"
        assert age.strip().endswith(("s", "m")) and "DAGMan exited" in message
        assert "● live" in pilot.app.screen.status_bar.render().plain
        info = pilot.app.screen.query_one("#info").render().plain
        assert "all users' (u: yours only)" in info and f"per user: {owner.strip()} " in info

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_the_task_screen_has_jobs_sites_errors_and_log(engine, failed_task):
    async def scenario(pilot):
        screen = await open_task(pilot, failed_task)
        jobs = screen.query_one("#job-table")
        await wait_for(pilot, lambda: jobs.row_count == 4, "four jobs")
        row = cells(jobs, "4")
        assert row[1:3] == ["4", "✖ failed"] and row[4] == "99" and "exit code 99" in row[11]
        assert cells(jobs, "2")[1:3] == ["2", "✔ finished"] and cells(jobs, "2")[8] == "1"  # one retry
        summary = screen.query_one("#summary").render().plain
        assert "✖ FAILED" in summary and "✔3 ✖1" in summary and "of 4 jobs" in summary

        await pilot.press("3")
        sites = screen.query_one("#site-table")
        assert cells(sites, "T2_DE_DESY")[6:8] == ["⊘ blacklisted", "in the site blacklist"]
        local = cells(sites, "T2_XX_Local")
        assert local[3:7] == ["2", "2", "50", "✔ no"]  # jobs 1, 3 succeeded there; job 2's 8021, job 4's 99 failed

        await pilot.press("4")
        errors = screen.query_one("#error-table")
        assert cells(errors, "99")[1:5] == ["99", "1", "0", "unknown, fatal"]
        await pilot.press("enter")  # the jobs of that exit code
        assert screen.query_one(Tabbed).active == "jobs"
        await wait_for(pilot, lambda: jobs.row_count == 1, "the jobs filtered to exit code 99")
        assert jobs.cursor_key == "4" and "1 of 4 jobs" in screen.query_one("#info").render().plain

        tab_bar = screen.query_one(TabBar)
        await pilot.click(TabBar, offset=(tab_bar.render().plain.index("Log") + 1, 0))  # the mouse switches too
        assert screen.query_one(Tabbed).active == "log"
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: log.line_count, "dagman.out")
        assert any("EXITING WITH STATUS 1" in line for line in log.lines)

        await pilot.press("2")
        assert screen.query_one("#queue-table").row_count == 0
        assert "not in the queue: the DAG has ended" in screen.query_one("#info").render().plain

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_the_job_drilldown_shows_attempts_classad_output_and_report(engine, failed_task):
    async def scenario(pilot):
        screen = await open_task(pilot, failed_task)
        jobs = screen.query_one("#job-table")
        jobs.move_cursor(row=jobs.get_row_index("2"))
        await pilot.press("enter")
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "the job screen")
        job = app.screen
        attempts = job.query_one("#attempt-table")
        await wait_for(pilot, lambda: attempts.row_count == 2, "two attempts")
        first, second = cells(attempts, "0"), cells(attempts, "1")
        assert first[2] == "T2_XX_Local" and first[8:10] == ["8021", "⟳ retry"] and "FileReadError" in first[10]
        assert second[8:10] == ["0", "✔ ok"] and second[2] != "T2_XX_Local"  # change_site: another site
        assert attempts.cursor_key == "1" and job.snapshot.attempt == 1  # the latest attempt's files

        await pilot.press("2")
        assert 'CRAB_Id = "2"' in "\n".join(job.query_one("#classad-text").lines)
        await pilot.press("5")
        assert '"exitCode": 0' in "\n".join(job.query_one("#report-text").lines)
        await pilot.press("6")
        assert "Job submitted from host" in "\n".join(job.query_one("#events-text").lines)

        await pilot.press("1", "up")  # the first attempt: its output and report
        await wait_for(pilot, lambda: job.snapshot.attempt == 0, "the first attempt's files")
        await pilot.press("3")
        await wait_for(pilot, lambda: any("exit code 8021" in line for line in job.query_one("#stdout-text").lines),
                       "the first attempt's stdout")
        await pilot.press("escape")
        assert isinstance(app.screen, TaskScreen)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_sort_filter_and_pause_keep_the_cursor_and_say_so(engine, failed_task):
    async def scenario(pilot):
        screen = await open_task(pilot, failed_task)
        jobs = screen.query_one("#job-table")
        await wait_for(pilot, lambda: jobs.row_count == 4, "four jobs")
        jobs.move_cursor(row=jobs.get_row_index("4"))
        await pilot.press("s", "s")  # by Job, then by State
        info = screen.query_one("#info")
        assert "sorted by State ▲" in info.render().plain
        assert jobs.shown_keys()[-1] == "4" and jobs.cursor_key == "4"  # failed sorts after finished
        await pilot.press("S")
        assert jobs.shown_keys()[0] == "4" and jobs.cursor_key == "4"

        await pilot.press("slash", *"state:fin", "enter")
        assert jobs.row_count == 3 and "3 of 4 jobs · filter 'state:fin'" in info.render().plain
        await pilot.press("escape")  # clears the filter first
        assert jobs.row_count == 4 and jobs.filter == ""

        await pilot.press("f", *"state:fin")  # find: moves the cursor, hides nothing
        first = jobs.cursor_key
        assert jobs.row_count == 4 and jobs.items[first].state == "finished"
        await pilot.press("enter", "n")
        second = jobs.cursor_key
        assert second != first and jobs.items[second].state == "finished"
        await pilot.press("N")
        assert jobs.cursor_key == first
        await pilot.press("f", "escape")  # a find given up puts the cursor back
        assert jobs.cursor_key == first and jobs.row_count == 4

        await pilot.press("space", "space")  # marks two rows
        assert "2 marked" in info.render().plain
        await pilot.press("escape")
        assert not jobs.marked
        await pilot.press("c")
        assert [n.message for n in pilot.app._notifications][-1] == jobs.cursor_key  # copied, and said so

        bar = screen.status_bar
        await pilot.press("p")
        assert "PAUSED" in bar.render().plain
        paused_at = bar.updated_at
        await pilot.pause(5 * INTERVAL)
        assert bar.updated_at == paused_at  # no refresh while paused
        await pilot.press("p")
        await wait_for(pilot, lambda: bar.updated_at != paused_at, "a refresh after resuming")
        assert "● live" in bar.render().plain

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_help_lists_the_screens_keys_and_the_palette_has_its_actions(engine, failed_task):
    async def scenario(pilot):
        await open_task(pilot, failed_task)
        app = pilot.app
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Hold", "Release", "Halt/unhalt", "Kill", "Resubmit", "Filter"} <= set(commands)
        await pilot.press("question_mark")
        keys = dict(app.screen.key_rows)
        assert keys["h"].startswith("Hold the marked jobs") and keys["H"].startswith("Halt the DAG")
        assert keys["q"].startswith("Quit crabtui") and keys["/"] == "Filter the table"
        await pilot.press("escape")
        assert isinstance(app.screen, TaskScreen)
        await pilot.press("t")
        assert not app.current_theme.dark

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(80, 24))


def test_watch_prints_the_progress_until_the_task_ends(engine, failed_task, tmp_path):
    result = crabtui(engine, "watch", failed_task, "--interval", "0.2", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the task ended FAILED, and says what to do
    assert result.stderr == (f"ERROR: task {failed_task} ended FAILED: `crabtui --state-dir {engine.path} task status "
                             f"{failed_task} --long` says why, `crabtui --state-dir {engine.path} task resubmit "
                             f"{failed_task}` runs its failed jobs again\n")
    assert "looked  ✖ FAILED  [" in result.stdout and "finished 3, failed 1 of 4" in result.stdout
    missing = crabtui(engine, "watch", "nosuch", cwd=tmp_path)
    assert missing.returncode == 1 and "there is no task 'nosuch'" in missing.stderr


def test_watch_of_a_killed_task_does_not_offer_a_resubmit_it_would_refuse(engine, tmp_path):
    name = submit(engine, tmp_path, "stopped", scale=500)
    wait_task(engine, name, "SUBMITTED")  # a task being submitted (QUEUED) cannot be killed yet, as in CRAB
    killed = crabtui(engine, "task", "kill", name, cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    wait_task(engine, name, "KILLED")
    result = crabtui(engine, "watch", name, "--interval", "0.2", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == (
        f"ERROR: task {name} ended KILLED: `crabtui --state-dir {engine.path} task status {name} --long` says why\n")


def test_watch_of_a_task_that_failed_to_submit_says_a_resubmit_submits_it_anew(engine, tmp_path):
    """task resubmit (as crab resubmit) submits a SUBMITFAILED task anew: watch says so."""
    name = submit_failing_to_submit(engine, tmp_path)
    result = crabtui(engine, "watch", name, "--interval", "0.2", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == (
        f"ERROR: task {name} ended SUBMITFAILED: `crabtui --state-dir {engine.path} task status {name} --long` says why, "
        f"`crabtui --state-dir {engine.path} task resubmit {name}` submits it anew\n")


def test_the_task_list_keeps_only_your_own_tasks_on_u(fixed, monkeypatch):
    monkeypatch.setenv("LOGNAME", "carol")  # who the embedded schedd knows us as: not alice, who owns them

    async def scenario(pilot):
        screen = pilot.app.screen
        tasks = screen.query_one("#tasks")
        await wait_for(pilot, lambda: tasks.row_count == 2, "alice's two tasks")
        assert {cells(tasks, key)[6].strip() for key in tasks.items} == {"alice"}
        await pilot.press("u")
        assert tasks.row_count == 0
        assert screen.query_one("#info").render().plain == "None of your tasks here; 2 of other users (u shows them)."
        await pilot.press("u")
        assert tasks.row_count == 2

    drive(CrabApp(Backend(fixed), interval=INTERVAL), scenario)


def test_a_task_whose_jobs_have_not_started_draws_flat_trends(state):
    """Nothing ran yet: the running and done sparklines lie flat, not as full bars."""
    name = "231114_233000:alice_crab_fresh"
    path = task_dir(state, name)
    for job in "123":
        with open(f"{path}/job_input.{job}.json", "w") as f:
            f.write("{}")
    db = TaskDB(state.tasks)
    db.insert(Task(name, "fresh", "alice", SUBMITTED, SUBMIT, "fresh.toml", path, NOW - 60, NOW - 50))
    db.close()
    LocalScheddClient(state).ping()

    async def scenario(pilot):
        screen = await open_task(pilot, name)
        await wait_for(pilot, lambda: screen.query_one("#pace").render().plain == "no job done yet", "the pace")
        await pilot.pause()
        for trend in ("#running-trend", "#done-trend"):
            drawn = screen.query_one(trend).render_line(0).text
            assert drawn and set(drawn) == {"▁"}, (trend, drawn)

    drive(CrabApp(Backend(state), interval=INTERVAL, clock=lambda: NOW), scenario)


def test_a_dry_runs_task_has_no_jobs_yet_rather_than_every_job_done(state):
    """task submit --dryrun leaves the task UPLOADED, not split: its pace says it has no jobs yet."""
    name = "231114_233000:alice_crab_dry"
    db = TaskDB(state.tasks)
    db.insert(Task(name, "dry", "alice", UPLOADED, SUBMIT, "crabConfig.py", task_dir(state, name), NOW - 60,
                   NOW - 60))
    db.close()
    LocalScheddClient(state).ping()

    async def scenario(pilot):
        screen = await open_task(pilot, name)
        await wait_for(pilot, lambda: screen.query_one("#pace").render().plain == "no jobs yet", "the pace")

    drive(CrabApp(Backend(state), interval=INTERVAL, clock=lambda: NOW), scenario)


def test_a_task_ended_long_ago_draws_its_jobs_done_over_its_life(fixed):
    """ttbar's three jobs ran two hours before the clock: the done sparkline still rises to them."""
    async def scenario(pilot):
        screen = await open_task(pilot, "231114_200000:alice_crab_ttbar")
        await wait_for(pilot, lambda: screen.query_one("#pace").render().plain == "every job done", "the pace")
        await pilot.pause()
        done = screen.query_one("#done-trend")
        assert (done.data[0], done.data[-1]) == (0, 3), done.data
        drawn = done.render_line(0).text
        assert drawn[0] == "▁" and drawn[-1] == "█", drawn

    drive(CrabApp(Backend(fixed), interval=INTERVAL, clock=lambda: NOW), scenario)


def test_the_jobs_tab_shows_the_cpu_percent_crab_status_long_prints(state, tmp_path):
    """Job 1 used 88.7% of its CPU: ``task status --long`` prints 89 (rounded, as crab does), and
    the Jobs tab showed 88, cut; the two now agree on every job."""
    from ui_fixed import OK, attempt, write_job
    from engine.crab.wn import fjr

    name = "231114_233000:alice_crab_cpu"
    path = task_dir(state, name)
    for job, share in (("1", 0.887), ("2", 0.5)):
        done = attempt(0, "T2_XX_Local", 0, "ok", OK, start=NOW - 600, seconds=100)
        write_job(path, job, done)
        runtime = 100 * 60
        fjr.write_report(os.path.join(path, f"{fjr.FJR_NAME}.{job}.0"), fjr.build_report(
            exit_code=0, exit_msg=OK, site="T2_XX_Local", start=done.start_time, stop=done.end_time, inputs=[],
            cpu={"TotalJobTime": runtime, "TotalJobCPU": runtime * share}, memory={"PeakValueRss": 900}))
    db = TaskDB(state.tasks)
    db.insert(Task(name, "cpu", "alice", COMPLETED, SUBMIT, "cpu.toml", path, NOW - 900, NOW - 890,
                   dagman_id=999))
    db.close()
    LocalScheddClient(state).ping()
    result = crabtui(state, "task", "status", name, "--long", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    table = result.stdout.split("Extended Job Status Table:")[1].split("\n\n")[1].splitlines()
    printed = {line.split()[0]: line.split()[5] for line in table[1:]}  # job, state, site, runtime, mem, CPU %
    assert printed == {"1": "89", "2": "50"}, table

    async def scenario(pilot):
        screen = await open_task(pilot, name)
        jobs = screen.jobs_table
        await wait_for(pilot, lambda: jobs.row_count == 2, "the two jobs")
        column = [c.key for c in screen.job_columns].index("cpu") + 1  # after the mark column
        assert {job: cells(jobs, job)[column].strip() for job in "12"} == printed

    drive(CrabApp(Backend(state), interval=INTERVAL, clock=lambda: NOW), scenario)


def test_an_empty_task_list_points_to_the_dags(state):
    """Who runs only DAGs (a pool's, with --backend htcondor) opens on an empty task list: its info
    line says, within 80 columns, that d shows the DAGs, and d does."""
    from crabtui.screens.dags import DagsScreen

    LocalScheddClient(state).ping()

    async def scenario(pilot):
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.query_one("#info").render().plain.startswith("No tasks"), "the list")
        line = screen.query_one("#info").render().plain
        assert "d shows the DAGs" in line and len(line) < 80, line
        await pilot.press("d")
        assert isinstance(pilot.app.screen, DagsScreen)

    drive(CrabApp(Backend(state), interval=INTERVAL), scenario, size=(80, 24))


def test_an_ended_tasks_kill_and_resubmit_keys_are_dimmed_and_say_why(fixed):
    """A COMPLETED task has nothing to kill or resubmit, as crab says: its screen dims K and R on
    the key bar, as a DAG's screen dims its actions once it has left the queue, and a press on
    either says why in one line, before any dialog or form."""
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, "231114_200000:alice_crab_ttbar")
        assert screen.snapshot.task.status == COMPLETED
        assert screen.check_action("kill", ()) is None and screen.check_action("resubmit", ()) is None
        await pilot.press("K")
        assert app.screen is screen and [n.message for n in app._notifications][-1] == (
            "Nothing to kill: You cannot kill a task if it is in the COMPLETED status (231114_200000:alice_crab_ttbar: "
            "every job of it has finished; there is nothing left to kill).")
        await pilot.press("R")
        assert app.screen is screen and [n.message for n in app._notifications][-1].startswith(
            "Nothing to resubmit: You cannot resubmit jobs if the task is in status COMPLETED.")

    drive(CrabApp(Backend(fixed), interval=INTERVAL, clock=lambda: NOW), scenario)


def test_a_job_whose_classad_left_the_history_does_not_read_as_never_submitted(fixed):
    """A busy pool rotates its history files: a job that ran (its attempts say so) whose ClassAd is
    in neither the queue nor the history is said to be gone from the history, not 'not submitted
    yet' with 'No HTCondor job has run for this job yet'."""
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, "231114_200000:alice_crab_ttbar")
        jobs = screen.jobs_table
        jobs.move_cursor(row=jobs.get_row_index("1"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "job 1's drilldown")
        job = app.screen
        assert "ClassAd no longer in the history" in job.query_one("#summary").render().plain
        await pilot.press("2")
        classad = "\n".join(job.query_one("#classad-text").lines)
        assert classad.startswith("The schedd's history no longer holds this job's ClassAd"), classad

    drive(CrabApp(Backend(fixed), interval=INTERVAL, clock=lambda: NOW), scenario)


def test_a_key_dimmed_on_a_tab_says_which_tab_it_acts_on(engine, failed_task):
    """b blacklists a site of the Sites tab, x, h and r act on jobs of the Jobs tab: pressed on
    another tab they say where to go, rather than do nothing."""
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, failed_task)
        await pilot.press("b")
        assert [n.message for n in app._notifications][-1] == "Blacklist acts on the Sites tab: 3 goes there."
        await pilot.press("3", "x")
        assert [n.message for n in app._notifications][-1] == "Kill jobs acts on the Jobs tab: 1 goes there."
        await pilot.press("h")
        assert [n.message for n in app._notifications][-1] == "Hold acts on the Jobs tab: 1 goes there."
        assert app.screen is screen and screen.query_one(Tabbed).active == "sites"

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
