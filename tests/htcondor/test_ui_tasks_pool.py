"""The UI's task screens, and ``crabtui watch``, on a CRAB task running on the real test pool: one
headless pass through the task list, the task's jobs, its ``condor_q -dag`` tree from the pool's
queue, sites, errors and dagman.out, and a job's drilldown with its ClassAd from the pool; and the
task screen's hold, release, halt and resubmit keys, the UI run as the pool's user."""

from __future__ import annotations

import asyncio
import datetime
import functools
import json
import re
import shutil
from pathlib import Path

import htcondor2
import pytest

from crabtui.app import CrabApp
from crabtui.screens.job import JobScreen
from crabtui.snapshots import Backend
from engine.state import StateDir
from textual.widgets import Log
from pool_user import STEADY_SITES, PoolUser, config
from ui.ui_tasks import cells, open_task, wait_for as wait_for_app

pytestmark = pytest.mark.htcondor

wait_for = functools.partial(wait_for_app, timeout=300)


@pytest.fixture
def user(htcondor_pool):
    user = PoolUser(htcondor_pool)
    yield user
    htcondor2.Schedd().act(htcondor2.JobAction.Remove, f'regexp("^{user.state}/", Iwd)')
    shutil.rmtree(user.home, ignore_errors=True)


def test_the_task_screens_follow_a_task_on_the_pool(user):
    plan = '{job = "2", attempt = 1, exitCode = 8021}, {job = "3", attempt = 1, exitCode = 8006}'
    name = user.submit("crab.toml", config("uipool", plan=plan, total=40, scale=40,
                                           sites=STEADY_SITES))
    doomed = user.submit("doomed.toml", config("doomed", total=40, scale=2, sites=("T2_XX_Local",)))

    async def scenario(pilot):
        app = pilot.app
        screen = await open_task(pilot, name, timeout=300)
        await pilot.press("2")
        queue = screen.query_one("#queue-table")
        await wait_for(pilot, lambda: any(r.is_dagman for r in queue.items.values())
                       and any(r.word == "running" and not r.is_dagman for r in queue.items.values()),
                       "a job running under the task's DAGMan in the pool's queue")
        await wait_for(pilot, lambda: screen.snapshot.task.status == "FAILED", "the task FAILED")
        await pilot.press("1")
        jobs = screen.query_one("#job-table")
        await wait_for(pilot, lambda: jobs.row_count == 4 and cells(jobs, "3")[2] == "✖ failed", "four jobs")
        assert cells(jobs, "2")[2] == "✔ finished" and cells(jobs, "2")[8] == "1"  # one retry
        await pilot.press("3")
        sites = screen.query_one("#site-table")
        assert {"T2_CH_CERN", "T1_US_FNAL", "T2_XX_Local"} <= set(sites.items)
        await pilot.press("4")
        assert cells(screen.query_one("#error-table"), "8006")[1:3] == ["8006", "1"]
        await pilot.press("5")
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: any("EXITING WITH STATUS 1" in line for line in log.lines),
                       "the pool's dagman.out")
        await pilot.press("1")
        jobs.move_cursor(row=jobs.get_row_index("2"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot is not None,
                       "the job screen")
        job = app.screen
        attempts = job.query_one("#attempt-table")
        await wait_for(pilot, lambda: attempts.row_count == 2, "two attempts")
        first, second = cells(attempts, "0"), cells(attempts, "1")
        assert first[8:10] == ["8021", "⟳ retry"] and second[8:10] == ["0", "✔ ok"] and first[2] != second[2]
        await pilot.press("2")
        classad = "\n".join(job.query_one("#classad-text").lines)
        assert 'CRAB_Id = "2"' in classad and "GLIDEIN_CMSSite" in classad  # the pool's ad: matched a site

        await pilot.press("escape", "escape")  # the task list: kill the other task from the keyboard
        tasks = app.screen.query_one("#tasks")
        await wait_for(pilot, lambda: doomed in tasks.items, "the running task in the list")
        tasks.move_cursor(row=tasks.get_row_index(doomed))
        await pilot.press("K")
        await pilot.press("y")
        await wait_for(pilot, lambda: tasks.items[doomed].task.status == "KILLED", "the task killed on the pool")
        dagman = tasks.items[doomed].task.dagman_id
        left = htcondor2.Schedd().query(f"ClusterId == {dagman}", ["JobStatus"])  # once: it may leave meanwhile
        assert not left or left[0]["JobStatus"] == 3, left

    async def main() -> None:
        backend = Backend(StateDir(str(user.state)), "htcondor")
        async with CrabApp(backend, interval=0.5).run_test(size=(120, 30)) as pilot:
            await scenario(pilot)

    asyncio.run(main())
    watched = user.run("watch", "uipool", "--interval", "0.5")
    assert watched.returncode == 1 and "FAILED" in watched.stdout, watched.stdout + watched.stderr


def dagman_lines(dagman_out: Path, pattern: str) -> list[float]:
    """When the pool's DAGMan wrote lines matching ``pattern`` in its dagman.out."""
    return [datetime.datetime.strptime(line[:17], "%m/%d/%y %H:%M:%S").timestamp()
            for line in dagman_out.read_text().splitlines() if re.search(pattern, line)]


def test_hold_release_halt_and_resubmit_from_the_keyboard_as_the_pools_user(user):
    """The UI run by the pool's user (its halt file, rescue DAG and task table that user's, as the
    pool's condor_dagman needs them): a held job is held in the pool's queue and runs again once
    released; the pool's DAGMan is halted while the UI says so and submits nothing until H resumes
    it; the job that failed for good, resubmitted with R, runs again in a rescue DAG and the task
    ends COMPLETED."""
    plan = '{job = "2", attempt = 1, exitCode = 8021}, {job = "3", attempt = 1, exitCode = 8006}'
    name = user.submit("acts.toml", config("uiact", plan=plan, total=40, scale=15, sites=STEADY_SITES))
    out = user.home / "seen.json"
    ran = user.python(Path(__file__).with_name("pool_ui_actions.py"), str(user.state), name, str(out))
    seen = json.loads(out.read_text()) if out.exists() else {}
    assert ran.returncode == 0, f"{seen.get('error')}\n{ran.stderr[-3000:]}\nseen: {seen}"
    schedd = htcondor2.Schedd()

    assert seen["hold_question"] == "Hold 1 job(s) of uiact?"
    held = seen["held"]
    assert held["cell"] == "‖ held" and "Held 1 job(s)." in held["notices"]
    assert held["queue"] == [{"cluster": int(held["job"].split(".")[0]), "status": 5}]  # condor_q: H
    assert held["reason"].startswith("held from crabtui") and "held from crabtui" in held["why"], held
    assert seen["release_question"] == "Release 1 job(s) of uiact?"
    released = seen["released"]
    assert released["queue"][0]["status"] in (1, 2) and released["cell"] != "‖ held"  # condor_q: I or R

    assert seen["halt_question"] == "Halt the DAG of uiact?" and "HALTED" in seen["halted_summary"]
    assert "HALTED" not in seen["resumed_summary"] and "Resumed the DAG of uiact." in seen["resumed_notices"]
    assert seen["failed"] == {"1": "✔ finished", "2": "✔ finished", "3": "✖ failed", "4": "✔ finished"}
    assert seen["retries"]["2"] == "1"  # its 8021 retried
    assert seen["resubmit_form"] == "3"
    completed = seen["completed"]
    assert set(completed["cells"].values()) == {"✔ finished"} and "COMPLETED" in completed["summary"]

    # the pool's truth: what its DAGMan and jobs did
    task_dir = Path(user.status(name)["task_dir"])
    dagman_out = task_dir / "RunJobs.dag.dagman.out"
    halted = dagman_lines(dagman_out, "DAG is halted because halt file")
    assert halted and int(seen["halt_pressed_at"]) <= halted[0] and halted[-1] <= seen["resumed_at"] + 2, halted
    submitted = dagman_lines(dagman_out, "Submitting HTCondor Node")
    assert not [t for t in submitted if halted[0] < t < int(seen["resumed_at"])], (submitted, halted)
    assert len(dagman_lines(dagman_out, "Submitting HTCondor Node Job2 ")) == 2  # after its 8021
    assert "Exiting because DAG is halted" not in dagman_out.read_text()
    assert not (task_dir / "RunJobs.dag.halt").exists() and (task_dir / "RunJobs.dag.rescue001").exists()
    dagmans = sorted(ad["ClusterId"] for ad in schedd.history(
        f'JobUniverse == 7 && Iwd == "{task_dir}"', ["ClusterId"], match=10))
    assert dagmans == [seen["dagman"], completed["dagman"]]  # the rescue DAG: a second DAGMan job
    job3 = schedd.history(f'DAGManJobId == {completed["dagman"]} && CRAB_Id == "3"', ["ExitCode"], match=5)
    assert [ad["ExitCode"] for ad in job3] == [0]
    job1 = schedd.history(f'DAGManJobId == {seen["dagman"]} && CRAB_Id == "1"', ["NumJobStarts"], match=5)
    assert [ad["NumJobStarts"] for ad in job1] == [2]  # ran, held, released: ran again


def test_the_task_list_opened_while_the_pool_does_not_answer_lists_the_task_table(user):
    """The UI started while the pool is down (its collector does not answer): the task list shows
    the task table's tasks, each marked with why its jobs cannot be shown, under the STALE
    banner, as task list lists them; it showed an empty list until the pool answered."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "ui"))
    from installed import CRABTUI
    from ui_terminal import Terminal

    user.submit("crab.toml", config("downui", scale=5, total=40, sites=STEADY_SITES))
    live = user.env["CONDOR_CONFIG"]
    dead = user.write("dead.config", Path(live).read_text() + "COLLECTOR_HOST = 127.0.0.1:9\nSCHEDD_ADDRESS_FILE = /nonexistent\n")
    argv = ["setpriv", f"--reuid={user.uid}", f"--regid={user.uid}", "--clear-groups", CRABTUI,
            "--state-dir", str(user.state), "--backend", "htcondor"]
    with Terminal(argv, {**user.env, "CONDOR_CONFIG": str(dead), "TERM": "xterm-256color"}) as terminal:
        terminal.wait_for(b"STALE", b"downui", timeout=30)
        assert terminal.quit() == 0
    user.ok("task", "kill", "downui")
