"""What a CRAB user needs on the task screen: why a job waits (its hold reason, a job that matches
no slot), crab status' summaries, actions on marked jobs (kill, resubmit with their ids, a site
blacklisted from the Sites tab, their output and log paths), the task's pace, searching its logs,
field filters, an automatic task that is still probing, and the smaller things users tripped on."""

from __future__ import annotations

import asyncio
import os
import re

import pytest
from textual.app import App

from crabtui.app import CrabApp
from crabtui.screens.dialogs import ConfirmScreen, ResubmitScreen
from crabtui.screens.help import HelpScreen
from crabtui.screens.job import JobScreen
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from crabtui.watch import progress_line
from crabtui.widgets.log_view import LogView
from crabtui.widgets.status_bar import StatusBar
from engine.crab.taskworker.taskdb import SUBMIT, SUBMITTED, Task, TaskDB
from test_ui_views import INTERVAL, drive
from ui_fixed import NOW, build_probing, task_dir
from ui_tasks import cells, open_task, wait_for, wait_task

NOWHERE = 'extraJDL = ["+DESIRED_Sites = \\"T2_XX_Nowhere\\""]'  # its jobs match no slot of the grid


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def info(screen) -> str:
    return screen.query_one("#info").render().plain


@pytest.fixture(scope="module")
def stuck_task(engine, tmp_path_factory) -> str:
    """A task whose jobs ask for a site no slot has: they stay idle.  Its clock runs 5 times real
    time, so that CRAB's removal of a job held for 7 minutes comes after the test has looked at one."""
    from crab.crab_tasks import config_text, crabtui

    directory = tmp_path_factory.mktemp("stuck")
    (directory / "crab.toml").write_text(config_text("stuck", scale=5, debug=NOWHERE))
    result = crabtui(engine, "task", "submit", "crab.toml", cwd=directory)
    assert result.returncode == 0, result.stderr
    name = result.stdout.split("Task name: ")[1].split("\n")[0]
    wait_task(engine, name, "SUBMITTED")
    return name


def test_why_a_job_waits_and_actions_on_marked_jobs(engine, stuck_task):
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, stuck_task)
        jobs = screen.jobs_table
        await wait_for(pilot, lambda: jobs.row_count == 4 and all(
            cells(jobs, k)[11].startswith("matches no slot") for k in jobs.items), "every job idle, and why")
        assert cells(jobs, "1")[11] == "matches no slot: stringListMember(TARGET.GLIDEIN_CMSSite,MY.DESIRED_Sites)"

        jobs.move_cursor(row=jobs.get_row_index("1"))
        await pilot.press("h", "y")
        await wait_for(pilot, lambda: cells(jobs, "1")[11].startswith("held: held from crabtui"), "job 1 held, and why")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "job 1's drilldown")
        await pilot.press("7")
        assert "Held since" in "\n".join(app.screen.query_one("#why-text").lines)
        assert "held from crabtui" in "\n".join(app.screen.query_one("#why-text").lines)
        await pilot.press("escape")
        jobs.move_cursor(row=jobs.get_row_index("2"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "job 2's drilldown")
        await pilot.press("7")
        why = "\n".join(app.screen.query_one("#why-text").lines)
        assert "matches none of the" in why and "<- matches no slot" in why, "condor_q -better-analyze's text"
        await pilot.press("escape")

        for job in ("2", "3"):  # kill two jobs, not the task
            jobs.move_cursor(row=jobs.get_row_index(job))
            await pilot.press("space")
        await pilot.press("x")
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.question == "Kill 2 jobs?"
        assert "job 2 (" in dialog.details and "job 3 (" in dialog.details and "Resubmit them with R" in dialog.details
        from crab.crab_tasks import crabtui

        gone = screen.snapshot.node_jobs["3"]  # removed from another terminal while the dialog asks
        assert crabtui(engine, "rm", gone, cwd=engine.path).stdout == f"Job {gone} marked for removal\n"
        await pilot.press("y")
        outcome = lambda: [n.message for n in app._notifications if n.title.startswith("Kill jobs")]  # noqa: E731
        await wait_for(pilot, outcome, "the kill's outcome")
        assert outcome()[-1] == (f"Killed 1 job(s). Refused: job {gone} is no longer in the queue: it is removed; "
                                 f"see 'crabtui history {gone.split('.')[0]}'"), "job 2 killed, and 3 named as gone"
        await wait_for(pilot, lambda: jobs.items["2"].state == "failed" and jobs.items["3"].state == "failed",
                       "jobs 2 and 3 failed for good", timeout=90)
        assert jobs.items["4"].state == "idle", "the others go on"
        assert TaskDB(engine.tasks).get(stuck_task).status == "SUBMITTED"

        await pilot.press("l")  # their logs' paths, as crab getlog
        copied = [n for n in notices(app) if "job_out.2." in n]
        assert copied and "job_out.3." in copied[-1] and "job_log.2" in copied[-1]

        await pilot.press("3")  # Sites: CERN into the next resubmit's blacklist
        sites = screen.query_one("#site-table")
        await wait_for(pilot, lambda: "T2_CH_CERN" in sites.items, "the sites")
        sites.move_cursor(row=sites.get_row_index("T2_CH_CERN"))
        await pilot.press("b")
        assert cells(sites, "T2_CH_CERN")[6] == "⊘ at next resubmit"
        await pilot.press("1", "R")
        form = app.screen
        assert isinstance(form, ResubmitScreen)
        assert form.query_one("#jobids").value == "2-3", "the marked failed jobs filled in"
        assert form.query_one("#siteblacklist").value == "T2_CH_CERN,T2_DE_DESY,T2_US_Nebraska"
        assert "Failed now: jobs 2-3." in str(form.query_one("#details").render())
        await pilot.press("escape")

    try:
        drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)
    finally:
        from crab.crab_tasks import crabtui

        crabtui(engine, "task", "kill", "stuck", cwd=engine.path)


def test_the_summary_tab_pace_and_log_search(engine, failed_task):
    async def scenario(pilot):
        screen = await open_task(pilot, failed_task)
        await pilot.press("6")
        summary = screen.query_one("#summary-text")
        await wait_for(pilot, lambda: summary.line_count > 5, "crab status' summaries")
        text = "\n".join(summary.lines)
        assert re.search(r"Jobs status: +failed +25\.0% \(1/4\)", text), text
        assert "finished" in text and "75.0% (3/4)" in text
        assert "Error Summary:" in text and "exit code 99" in text
        assert "Summary of run jobs:" in text and " * Memory: " in text and " * CPU eff: " in text
        await wait_for(pilot, lambda: screen.query_one("#pace").render().plain, "the task's pace")
        pace = screen.query_one("#pace").render().plain
        assert "jobs/min" in pace and "0 to go" in pace
        assert len(screen.query_one("#done-trend").data) == 24 and screen.query_one("#done-trend").data[-1] == 4

        await pilot.press("5")
        log = screen.query_one("#dagman-out", LogView)
        await wait_for(pilot, lambda: log.line_count, "dagman.out")
        await pilot.press("slash", *"EXITING", "enter")
        assert log.match_line is not None and "EXITING" in log.lines[log.match_line]
        assert f"'EXITING' at line {log.match_line + 1} (n / N)" in info(screen)
        first = log.match_line
        await pilot.press("slash", "ctrl+u", *"Node Job", "enter")
        second = log.match_line
        await pilot.press("n")
        assert log.match_line != second and "node job" in log.lines[log.match_line].lower()
        await pilot.press("N")
        assert log.match_line == second and first is not None

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_the_summary_tab_wraps_long_lines_to_a_narrow_terminal(engine, failed_task):
    warning = ("Warning: the max jobs runtime is less than 30% of the task requested value (1250 min), please "
               "consider to request a lower value for failed jobs (allowed through crabtui task resubmit)")

    def shown(summary) -> tuple[list[str], str]:
        lines = list(summary.lines)
        assert all(len(line) <= summary.scrollable_content_region.width for line in lines), lines
        return lines, " ".join(line.strip() for line in lines)

    async def scenario(pilot):
        screen = await open_task(pilot, failed_task)
        await pilot.press("6")
        summary = screen.query_one("#summary-text")
        await wait_for(pilot, lambda: summary.line_count > 5, "crab status' summaries")
        lines, text = shown(summary)
        assert warning in text, "CRAB's warning is all there, wrapped"
        # crab status' header: the project directory task submit made (crab_<requestName>), unbroken
        assert any(line.strip().endswith(f"{os.sep}crab_looked") for line in lines), lines
        assert not any(f"{engine.path}/tasks/" in line for line in lines), "not the task's files under the state dir"
        narrow = len(lines)
        await pilot.resize_terminal(160, 40)
        await wait_for(pilot, lambda: summary.line_count < narrow, "the summary wrapped again, wider")
        lines, text = shown(summary)
        assert warning in text and any(line.startswith("Warning: ") and len(line) > 80 for line in lines)

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(80, 24))


def test_fields_filter_only_their_column_and_the_help_lists_them(engine, failed_task):
    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, failed_task)
        jobs = screen.jobs_table
        await wait_for(pilot, lambda: jobs.row_count == 4, "four jobs")
        await pilot.press("slash", *"site:T2_XX", "enter")
        assert 0 < jobs.row_count < 4 and all(jobs.items[k].site.startswith("T2_XX") for k in jobs.shown_keys())
        await pilot.press("escape", "slash", *"most:T2")
        error = screen.query_one(".filter-error").render().plain
        assert error.startswith("no field 'most': the fields are job, state, site, exit,")
        await pilot.press("enter")  # refused: the filter line stays open with its error
        assert screen.query_one("FilterBar").display
        await pilot.press("escape")
        assert jobs.row_count == 4
        await pilot.press("question_mark")
        help_text = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert isinstance(app.screen, HelpScreen)
        assert "Fields of the Jobs tab: job, state, site, exit, runtime, memory, cpu, retries, restarts, waste, why" \
            in help_text

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario)


def test_an_unknown_fields_error_is_never_cut_off(engine, failed_task):
    """At 80 columns the error line had room for three of the task list's eight field names and
    ended cut after "status, …": it says where the fields are listed instead; wider, it names
    those that fit, each whole, and where the others are."""
    async def scenario(pilot):
        screen = pilot.app.screen
        await wait_for(pilot, lambda: failed_task in screen.query_one("#tasks").items, "the task")
        await pilot.press("slash", *"exit:1")
        line = screen.query_one(".filter-error")
        error = line.render().plain
        assert error == "no field 'exit' (esc, ? lists the fields)", error
        assert len(error) <= line.content_region.width, "drawn whole"

    async def wider(pilot):
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.query_one("#tasks").items, "the tasks")
        await pilot.press("slash", *"exit:1")
        line = screen.query_one(".filter-error")
        error = line.render().plain
        assert error == "no field 'exit': the fields are stale, task, status, … (esc, ? lists them)", error
        assert len(error) <= line.content_region.width, "drawn whole"

    drive(CrabApp(Backend(engine), interval=INTERVAL), scenario, size=(80, 24))
    drive(CrabApp(Backend(engine), interval=INTERVAL), wider, size=(120, 30))


def test_an_automatic_task_still_probing_says_so(fixed):
    name = build_probing(fixed)

    async def scenario(pilot):
        tasks = pilot.app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: name in tasks.items, "the probing task")
        assert cells(tasks, name)[4].strip() == "probing 1/3", "no percentage of a task whose size is unknown"
        await open_task(pilot, name)
        second = pilot.app.screen.query_one("#summary").render().plain.splitlines()[1]
        assert second.startswith("probing  ") and "of 3 probes: the processing jobs are made once they end" in second
        assert "%" not in second

    drive(CrabApp(Backend(fixed), clock=lambda: NOW, interval=INTERVAL), scenario)


def test_tasks_of_one_request_name_are_told_apart_by_their_submit_time(fixed):
    again = "231114_213000:alice_crab_ttbar"  # ttbar submitted again
    db = TaskDB(fixed.tasks)
    db.insert(Task(again, "ttbar", "alice", SUBMITTED, SUBMIT, "ttbar.toml", task_dir(fixed, again), NOW - 600, NOW - 500))
    db.close()

    async def scenario(pilot):
        tasks = pilot.app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: again in tasks.items, "the second ttbar")
        wanted = {"231114_200000:alice_crab_ttbar": "ttbar 231114_200000", again: "ttbar 231114_213000",
                  "231114_211000:alice_crab_lumis": "lumis"}
        assert {key: cells(tasks, key)[2].strip() for key in wanted} == wanted

    drive(CrabApp(Backend(fixed), clock=lambda: NOW, interval=INTERVAL), scenario)


def test_smaller_things(fixed, tmp_path):
    live = "231114_211000:alice_crab_lumis"
    stderr = os.path.join(fixed.task_dir(live), "job_err.4.1.txt")
    open(stderr, "w").close()

    async def scenario(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot, "the task")
        screen = app.screen
        jobs = screen.jobs_table
        await wait_for(pilot, lambda: jobs.row_count == 8, "eight jobs")
        assert cells(jobs, "5")[2].strip() == "◷ cooloff due", "a deadline passed: due, not 0:00"
        assert cells(jobs, "3")[2].strip().startswith("◷ cooloff 3:"), "one not yet passed counts down"
        await pilot.press("4")
        assert info(screen) == "2 exit codes"
        await pilot.press("1", "K")
        assert isinstance(app.screen, ConfirmScreen)
        assert "not refreshing under the dialog" in screen.status_bar.render().plain
        await pilot.press("n")
        await wait_for(pilot, lambda: "● live" in screen.status_bar.render().plain, "live again")
        jobs.move_cursor(row=jobs.get_row_index("4"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None, "job 4")
        await pilot.press("4")
        assert app.screen.query_one("#stderr-text").lines == [  # job 4 has failed: nothing more comes
            f"(empty: attempt 1 wrote nothing to {stderr})"]

    try:
        drive(CrabApp(Backend(fixed), clock=lambda: NOW + 50, interval=INTERVAL, task=live), scenario)
    finally:
        os.unlink(stderr)


def test_the_stale_banner_keeps_its_hint_and_watch_fits_80_columns(fixed):
    hint = "start it with 'crabtui pool start'"
    error = f"the embedded schedd of {'/very/long/state/dir' * 8} is not running: {hint}"

    class BarApp(App):
        palette = CrabApp.palette if hasattr(CrabApp, "palette") else None
        interval = 1.0

        def clock(self) -> float:
            return NOW

        def compose(self):
            yield StatusBar()

    async def main():
        from crabtui.widgets.states import DEFAULT_PALETTE

        app = BarApp()
        app.palette = DEFAULT_PALETTE
        async with app.run_test(size=(160, 5)) as pilot:
            bar = app.query_one(StatusBar)
            bar.crumbs, bar.error, bar.updated_at = "crabtui › tasks", error, NOW - 5
            await pilot.pause()
            text = bar.render().plain
            assert text.rstrip().endswith(hint) and "…" in text and len(text) <= 160

    asyncio.run(main())
    snapshot = Backend(fixed).task("lumis", NOW)
    line = progress_line(snapshot, NOW, width=80)
    assert line.cell_len <= 80 or not line.no_wrap, "a line longer than the terminal wraps, it is not cut"
    assert "of 8" in line.plain and "◷2" in line.plain


def test_space_marks_only_where_a_bulk_action_takes_the_marks(fixed):
    """A job's attempts and a task's DAG, Sites and Errors tabs have no bulk action: space there
    offered "Mark" on the key bar and marked a row that nothing then used."""
    live = "231114_211000:alice_crab_lumis"

    def offered(app) -> bool:
        """Space is on the key bar (when it fits) and in the command palette."""
        return "space" in app.screen.active_bindings

    async def scenario(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot, "the task")
        screen = app.screen
        jobs = screen.jobs_table
        await wait_for(pilot, lambda: jobs.row_count == 8, "eight jobs")
        for tab, table in (("2", "#queue-table"), ("3", "#site-table"), ("4", "#error-table")):
            await pilot.press(tab)
            await pilot.pause()
            assert not offered(app)
            await pilot.press("space")
            assert not screen.query_one(table).marked
        await pilot.press("1")
        await pilot.pause()
        assert offered(app)
        await pilot.press("space")
        assert len(jobs.marked) == 1, "the Jobs tab's marks are what h, r, x and R take"
        await pilot.press("escape")
        jobs.move_cursor(row=jobs.get_row_index("4"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None, "job 4")
        await pilot.pause()
        assert not offered(app)
        await pilot.press("space")
        assert not app.screen.query_one("#attempt-table").marked

    drive(CrabApp(Backend(fixed), clock=lambda: NOW + 50, interval=INTERVAL, task=live), scenario)


def test_halt_of_a_task_whose_dag_has_ended_says_so_and_asks_nothing(fixed):
    """H on a COMPLETED task offered to halt its DAG, whose DAGMan had exited: the halt file it
    wrote would have stopped the DAG of a later resubmit at its start."""
    done = "231114_200000:alice_crab_ttbar"

    async def scenario(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot, "the task")
        screen = app.screen
        await pilot.press("H")
        await pilot.pause()
        assert app.screen is screen, "no dialog"
        assert notices(app)[-1] == "Nothing to halt: the DAG of ttbar is not in the queue (COMPLETED)."
        assert not os.path.exists(os.path.join(fixed.task_dir(done), "RunJobs.dag.halt"))

    drive(CrabApp(Backend(fixed), clock=lambda: NOW, interval=INTERVAL, task=done), scenario)


def test_copy_dir_copies_the_crab_project_directory(fixed, tmp_path):
    """C on a task copied its directory under the state directory; a crab user looks in the
    project directory, which task status names on its "CRAB project directory" line."""
    from engine.crab.client import project

    live = "231114_211000:alice_crab_lumis"
    config = tmp_path / "crabConfig.py"
    config.write_text("")
    path = str(tmp_path / "crab_projects" / "crab_lumis")
    claim, _ = project.create(path)
    os.close(claim)
    project.fill(path, task=live, request_name="lumis", state_dir=fixed.path, backend="embedded",
                 config=str(config), task_dir=fixed.task_dir(live))

    async def scenario(pilot):
        app = pilot.app
        await open_task(pilot, live)
        await pilot.press("C")
        assert app.clipboard == path
        await pilot.press("escape")
        await pilot.press("C")
        assert app.clipboard == path, "the task list's C on the task under the cursor"

    try:
        drive(CrabApp(Backend(fixed), clock=lambda: NOW + 50, interval=INTERVAL), scenario)
    finally:
        os.unlink(os.path.join(fixed.task_dir(live), "project_dir"))


def test_a_state_directory_gone_under_the_ui_is_named_with_what_to_do(state):
    """With the state directory moved away under a job's screen, the stale banner said only
    "OperationalError: unable to open database file": which file, and what now?"""
    from engine.schedd.local.client import LocalScheddClient
    from ui_fixed import build

    build(state)
    LocalScheddClient(state).ping()
    live = "231114_211000:alice_crab_lumis"
    moved = state.path + ".moved"

    async def scenario(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot, "the task")
        jobs = app.screen.jobs_table
        await wait_for(pilot, lambda: jobs.row_count == 8, "eight jobs")
        jobs.move_cursor(row=jobs.get_row_index("1"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None, "job 1")
        os.rename(state.path, moved)
        try:
            await pilot.press("ctrl+r")
            bar = app.screen.status_bar
            await wait_for(pilot, lambda: bar.error, "the stale banner")
            assert bar.error == (f"{state.tasks}: cannot open the task table: the state directory {state.path} is "
                                 "gone (removed or moved); give --state-dir the directory that holds your tasks")
        finally:
            os.rename(moved, state.path)

    drive(CrabApp(Backend(state), clock=lambda: NOW + 50, interval=INTERVAL, task=live), scenario)
