"""An automatic task's jobs under the names ``crab status`` gives them, everywhere they show: the
task list's counts, the node table, the job drilldown, ``crabtui watch`` and ``crabtui task status``."""

from __future__ import annotations

import asyncio

import pytest

from crabtui.app import CrabApp
from crabtui.screens.job import JobScreen
from crabtui.snapshots import Backend
from engine.schedd.local.client import LocalScheddClient
from ui_fixed import NOW, build_automatic
from ui_tasks import cells, crabtui, new_state, open_task, remove_state, wait_for


@pytest.fixture(scope="module")
def automatic(tmp_path_factory):
    state = new_state()
    name = build_automatic(state)
    LocalScheddClient(state).ping()  # the engine answers, with an empty queue
    yield state, name
    remove_state(state)


def test_probes_show_no_output_and_failed_processing_jobs_rescheduled(automatic):
    state, name = automatic

    async def scenario(pilot):
        app = pilot.app
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: name in tasks.items, "the task")
        progress, jobs = cells(tasks, name)[4:6]
        assert progress == "[########~~] 100%" and jobs == "✔2 ∅2 ↻1"  # nothing left to do
        await open_task(pilot, name)
        table = app.screen.query_one("#job-table")
        await wait_for(pilot, lambda: table.row_count == 5, "five jobs")
        assert {key: cells(table, key)[2] for key in ("0-1", "0-2", "1", "2", "1-1")} == {
            "0-1": "∅ no output", "0-2": "∅ no output", "1": "✔ finished", "2": "↻ rescheduled",
            "1-1": "✔ finished"}
        assert "✔2 ∅2 ↻1  of 5 jobs" in app.screen.query_one("#summary").render().plain
        table.move_cursor(row=table.get_row_index("2"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "the job screen")
        assert app.screen.query_one("#summary").render().plain.startswith("Job 2  ↻ rescheduled")

    async def main():
        async with CrabApp(Backend(state), clock=lambda: NOW, interval=0.2).run_test(size=(120, 30)) as pilot:
            await scenario(pilot)

    asyncio.run(main())


def test_watch_and_status_use_the_same_names(automatic, tmp_path):
    state, _ = automatic
    watch = crabtui(state, "watch", "auto", "--interval", "0.2", cwd=tmp_path)
    assert watch.returncode == 0, watch.stderr
    assert "finished 2, no output 2, rescheduled 1 of 5" in watch.stdout
    status = crabtui(state, "task", "status", "auto", "--long", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert "Main jobs status:               finished     \t\t 50.0% (1/2)" in lines
    assert "Estimated application throughput from probe jobs :" in lines
    table = lines[lines.index("Extended Job Status Table:") + 3:]
    assert [line[:17] for line in table[:5]] == [" 0-1 no output   ", " 0-2 no output   ", "   1 finished    ",
                                                 "   2 rescheduled ", " 1-1 finished    "]
