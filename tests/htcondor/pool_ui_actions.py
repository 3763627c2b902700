"""The task screen's actions from the keyboard, as the pool's user runs the UI on an access point:
run as that user (``PoolUser.python``), so the halt file, the rescue DAG and the task table it
writes are that user's, as the pool's condor_dagman (which runs as that user) needs them.

``python pool_ui_actions.py STATE_DIR TASK OUT``: drives ``CrabApp`` headless on ``--backend
htcondor`` through hold, release, halt, unhalt and resubmit of TASK (whose job 2 fails once with
8021 and job 3 for good with 8006), and writes what the user saw, and what the pool's queue said
at that moment, to OUT as JSON; a wait that timed out is its ``error``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import traceback

import htcondor2

from crabtui.app import CrabApp
from crabtui.screens.dialogs import ConfirmScreen, ResubmitScreen
from crabtui.screens.task import TaskScreen
from crabtui.snapshots import Backend
from engine.state import StateDir

TIMEOUT = 300  # seconds for one step on a loaded pool


async def wait_for(pilot, condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            screen = pilot.app.screen
            shown = ({key: cells(screen.jobs_table, key) for key in screen.jobs_table.items}
                     if isinstance(screen, TaskScreen) else type(screen).__name__)
            raise AssertionError(f"timed out waiting for {what}; the screen showed {shown}")
        await pilot.pause(0.1)


def cells(table, key: str) -> list[str]:
    return [cell.plain for cell in table.row_cells(key)]


def queued(dagman: int, job: str) -> list[dict]:
    """The pool's queue entries of the task's node ``job``: what ``condor_q`` says, not the UI."""
    ads = htcondor2.Schedd().query(f'DAGManJobId == {dagman} && CRAB_Id == "{job}"', ["ClusterId", "JobStatus"])
    return [{"cluster": ad["ClusterId"], "status": ad["JobStatus"]} for ad in ads]


async def scenario(pilot, name: str, seen: dict) -> None:
    app = pilot.app
    tasks = app.screen.query_one("#tasks")
    await wait_for(pilot, lambda: name in tasks.items, "the task in the task list")
    tasks.move_cursor(row=tasks.get_row_index(name))
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.snapshot is not None,
                   "the task screen")
    screen = app.screen
    jobs = screen.query_one("#job-table")
    summary = screen.query_one("#summary")
    notices = lambda: [n.message for n in app._notifications]  # noqa: E731
    await wait_for(pilot, lambda: "1" in screen.snapshot.node_jobs and jobs.items["1"].state == "running",
                   "job 1 running")
    dagman = screen.snapshot.task.dagman_id
    seen["dagman"] = dagman
    # running in the queue (JobStatus 2) comes before the starter executes it: wait for its start,
    # or a hold would cut a run that never began and the job would start only once
    first = screen.snapshot.node_jobs["1"].split(".")[0]
    await wait_for(pilot, lambda: htcondor2.Schedd().query(f"ClusterId == {first}", ["NumJobStarts"])[0]
                   .get("NumJobStarts", 0) >= 1, "job 1 started by the pool's starter")

    # hold job 1, running: h asks, y holds it in the pool's queue; r releases it (before CRAB's
    # periodic_remove of a job held 7 minutes takes it away)
    jobs.move_cursor(row=jobs.get_row_index("1"))
    held = screen.snapshot.node_jobs["1"]
    await pilot.press("h")
    seen["hold_question"] = app.screen.question if isinstance(app.screen, ConfirmScreen) else None
    await pilot.press("y")
    await wait_for(pilot, lambda: jobs.items["1"].state == "held", "job 1 held in the UI")
    await wait_for(pilot, lambda: cells(jobs, "1")[-1] != "", "job 1's hold reason in the UI")
    seen["held"] = {"cell": cells(jobs, "1")[2], "why": cells(jobs, "1")[-1], "job": held, "queue": queued(dagman, "1"),
                    "reason": htcondor2.Schedd().query(f"ClusterId == {held.split('.')[0]}", ["HoldReason"])[0]
                    .get("HoldReason"), "notices": notices()}
    await pilot.press("r")
    seen["release_question"] = app.screen.question if isinstance(app.screen, ConfirmScreen) else None
    await pilot.press("y")
    await wait_for(pilot, lambda: jobs.items["1"].state != "held", "job 1 released in the UI")
    seen["released"] = {"cell": cells(jobs, "1")[2], "queue": queued(dagman, "1"), "notices": notices()}

    # halt: the pool's DAGMan reads the halt file the UI wrote; H again resumes the DAG
    dagman_out = os.path.join(screen.snapshot.task.task_dir, "RunJobs.dag.dagman.out")
    seen["halt_pressed_at"] = time.time()
    await pilot.press("H")
    seen["halt_question"] = app.screen.question if isinstance(app.screen, ConfirmScreen) else None
    await pilot.press("y")
    await wait_for(pilot, lambda: screen.snapshot.halted, "the DAG halted")
    seen["halted_summary"] = summary.render().plain
    await wait_for(pilot, lambda: "DAG is halted because halt file" in open(dagman_out).read(),
                   "the pool's DAGMan halted")
    seen["resumed_at"] = time.time()
    await pilot.press("H")  # resuming asks nothing
    await wait_for(pilot, lambda: not screen.snapshot.halted, "the DAG resumed")
    seen["resumed_summary"] = summary.render().plain
    seen["resumed_notices"] = notices()

    await wait_for(pilot, lambda: screen.snapshot.task.status == "FAILED", "the task FAILED (job 3)")
    seen["failed"] = {job: cells(jobs, job)[2] for job in ("1", "2", "3", "4")}
    seen["retries"] = {job: cells(jobs, job)[8] for job in ("1", "2", "3", "4")}

    # resubmit the failed job from the keyboard: a rescue DAG on the pool, the task COMPLETED
    jobs.move_cursor(row=jobs.get_row_index("3"))
    await pilot.press("space", "R")
    form = app.screen
    seen["resubmit_form"] = form.query_one("#jobids").value if isinstance(form, ResubmitScreen) else None
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: any("Resubmit request" in n for n in notices()), "the resubmit request")
    await wait_for(pilot, lambda: screen.snapshot.task.status == "COMPLETED", "the task COMPLETED")
    seen["completed"] = {"cells": {job: cells(jobs, job)[2] for job in ("1", "2", "3", "4")},
                         "dagman": screen.snapshot.task.dagman_id, "summary": summary.render().plain}


async def main(state: str, name: str, seen: dict) -> None:
    async with CrabApp(Backend(StateDir(state), "htcondor"), interval=0.5).run_test(size=(140, 40)) as pilot:
        await scenario(pilot, name, seen)


if __name__ == "__main__":
    state, name, out = sys.argv[1:]
    seen: dict = {}
    try:
        asyncio.run(main(state, name, seen))
    except Exception as e:  # noqa: BLE001: the test reports it with what was seen until then
        seen["error"] = f"{e}\n{traceback.format_exc()}"
    with open(out, "w") as f:
        json.dump(seen, f, indent=1)
    sys.exit(1 if "error" in seen else 0)
