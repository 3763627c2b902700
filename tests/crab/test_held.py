"""Held jobs: CRAB's automatic release (seed 000: stage-in style hold codes, at most once every 5
minutes) and its removal of a job held longer than 7 minutes, on the task's scaled clock; and the
restarts a hold costs, as ``task status`` counts them from the job's user log."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import classad2
import htcondor2
import pytest

from crab_tasks import config_text, crabtui, task_status, wait_status, wait_until
from engine.crab.ap.joblog import restarts
from engine.crab.taskworker.dagman_creator import HELD_REMOVE_S, RELEASE_AFTER_S, TaskAd, job_limits
from engine.schedd.local.userlog import (ExecuteEvent, JobAbortedEvent, JobEvictedEvent, JobHeldEvent,
                                         JobReleasedEvent, JobTerminatedEvent, SubmitEvent, UserLog)

ET = htcondor2.JobEventType
SCALE = 100  # 5 simulated minutes are 3 s, 7 are 4.2 s
# Job 1 is held with a code CRAB releases (13, a stage-in failure), job 2 with one it does not (21).
PLAN = '{job = "1", attempt = 1, hold = 13}, {job = "2", attempt = 1, hold = 21}'


def events_by_cluster(path: Path) -> list[list[htcondor2.JobEvent]]:
    """The job's events, one list per attempt (cluster), in order, without IMAGE_SIZE."""
    clusters: dict[int, list] = {}
    for event in htcondor2.JobEventLog(str(path)).events(stop_after=0):
        if event.type != ET.IMAGE_SIZE:
            clusters.setdefault(event.cluster, []).append(event)
    return [clusters[c] for c in sorted(clusters)]


def test_a_stage_in_hold_is_released_after_5_minutes_and_another_removed_after_7(tmp_path, state, monkeypatch):
    monkeypatch.setenv("CRABTUI_PERIODIC_EXPR_INTERVAL", "0.5")  # read by the daemon the CLI starts
    (tmp_path / "crab.toml").write_text(config_text("held", scale=SCALE, plan=PLAN))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0

    seen_held = set()

    def both_seen_held():
        seen_held.update(j["id"] for j in task_status(state, "held", tmp_path)["jobs"] if j["state"] == "held")
        return seen_held >= {"1", "2"}

    wait_until("jobs 1 and 2 to show as held", both_seen_held)
    status = wait_status(state, "held", tmp_path, "COMPLETED", timeout=120)
    jobs = {j["id"]: j for j in status["jobs"]}
    assert all(j["state"] == "finished" for j in jobs.values())

    released = jobs["1"]  # the same attempt ran again: a restart, not a retry
    assert (released["retries"], released["restarts"], len(released["attempts"])) == (0, 1, 1)
    removed = jobs["2"]  # removed as held, then retried by RetryJob
    assert (removed["retries"], removed["restarts"]) == (1, 1)
    assert [a["action"] for a in removed["attempts"]] == ["retry", "ok"]
    assert removed["attempts"][0]["reason"] == ("Will retry held job; last hold reason: "
                                                "Held by the crabtui failure plan (hold code 21)")
    assert removed["attempts"][0]["exit_code"] is None, "held, it never ended: no exit code, as in CRAB's status"
    assert [jobs[i]["restarts"] for i in ("3", "4")] == [0, 0]
    # It ran until its hold, at once: the 7 minutes it then waited held are no runtime, nor Waste
    # (CRAB's cache_status closes its WallDurations slot at the JobHeldEvent)
    assert removed["attempts"][0]["runtime_s"] < HELD_REMOVE_S / 2
    assert removed["waste_s"] == removed["WallDurations"][0] < HELD_REMOVE_S / 2

    task_dir = Path(status["task_dir"])
    (first,) = events_by_cluster(task_dir / "job_log.1")
    assert [e.type for e in first] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_HELD, ET.JOB_RELEASED, ET.EXECUTE,
                                       ET.JOB_TERMINATED]
    held, release = first[2], first[3]
    assert (held["HoldReasonCode"], held["HoldReasonSubCode"]) == (3, 13)
    assert release.timestamp - held.timestamp >= RELEASE_AFTER_S / SCALE, "released before 5 minutes"
    attempt_1, attempt_2 = events_by_cluster(task_dir / "job_log.2")
    assert [e.type for e in attempt_1] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_HELD, ET.JOB_ABORTED]
    assert attempt_1[3].timestamp - attempt_1[2].timestamp >= HELD_REMOVE_S / SCALE
    assert attempt_1[3]["Reason"] == "Removed due to job being held"
    assert [e.type for e in attempt_2] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_TERMINATED]

    long = crabtui(state, "task", "status", "held", "--long", cwd=tmp_path).stdout.splitlines()
    header = next(i for i, line in enumerate(long) if line.split()[:2] == ["Job", "State"])
    restarts_column = {line.split()[0]: line.split()[7] for line in long[header + 1:header + 5]}
    assert restarts_column == {"1": "1", "2": "1", "3": "0", "4": "0"}


# --- the policy's expressions, as HTCondor evaluates them ------------------------------------------

def task_ad(*, plan: tuple[dict, ...] = (), scale: float = 1.0) -> TaskAd:
    return TaskAd(name="240101_000000:alice_crab_x", user="alice", dataset="/A/B/C", max_memory_mb=2000,
                  max_runtime_min=60, num_cores=1, priority=10, site_whitelist=(), site_blacklist=(),
                  storage_site=None, time_scale=scale, max_retries=3, failure_plan=plan)


def policy(ad: TaskAd) -> dict[str, classad2.ExprTree]:
    """job_limits' submit lines as the job attributes condor_submit makes of them."""
    names = {"periodic_remove": "PeriodicRemove", "periodic_release": "PeriodicRelease",
             "My.PeriodicRemoveReason": "PeriodicRemoveReason"}
    lines = (line.split(" = ", 1) for line in job_limits(ad))
    return {names[key]: classad2.ExprTree(value) for key, value in lines}


def evaluate(expr: classad2.ExprTree, **attrs):
    return expr.eval(scope=classad2.ClassAd(attrs))


HELD_FOR = lambda seconds: {"JobStatus": 5, "EnteredCurrentStatus": int(time.time()) - seconds}  # noqa: E731


@pytest.mark.parametrize("hold, released", [
    ({"HoldReasonCode": 13}, True), ({"HoldReasonCode": 6}, True), ({"HoldReasonCode": 28}, True),
    ({"HoldReasonCode": 30}, True), ({"HoldReasonCode": 21}, False), ({"HoldReasonCode": 1}, False),
    ({"HoldReasonCode": 3, "HoldReasonSubCode": 13, "ExitCode": 213}, False)])
def test_without_planned_holds_the_release_is_crabs(hold, released):
    release = policy(task_ad())["PeriodicRelease"]
    assert evaluate(release, **HELD_FOR(RELEASE_AFTER_S + 2), **hold) is released
    assert evaluate(release, **HELD_FOR(RELEASE_AFTER_S - 2), **hold) is False, "at most once every 5 minutes"


def test_a_planned_hold_is_released_as_the_hold_code_it_stands_for():
    release = policy(task_ad(plan=({"job": "1", "attempt": 1, "hold": 13},), scale=60))["PeriodicRelease"]
    held = HELD_FOR(RELEASE_AFTER_S / 60 + 2)
    assert evaluate(release, **held, HoldReasonCode=3, HoldReasonSubCode=13, ExitCode=213) is True
    assert evaluate(release, **held, HoldReasonCode=3, HoldReasonSubCode=21, ExitCode=213) is False
    assert evaluate(release, **held, HoldReasonCode=3, HoldReasonSubCode=13, ExitCode=1) is False, \
        "another job policy's hold (a user's periodic_hold) keeps its code 3"
    assert evaluate(release, **held, HoldReasonCode=13) is True
    assert evaluate(release, **HELD_FOR(1), HoldReasonCode=3, HoldReasonSubCode=13, ExitCode=213) is False


def test_periodic_remove_after_7_minutes_held_or_over_memory():
    limits = policy(task_ad(scale=2))
    remove, reason = limits["PeriodicRemove"], limits["PeriodicRemoveReason"]
    assert evaluate(remove, **HELD_FOR(HELD_REMOVE_S / 2 + 2)) is True
    assert evaluate(reason, **HELD_FOR(HELD_REMOVE_S / 2 + 2)) == "Removed due to job being held"
    assert evaluate(remove, **HELD_FOR(HELD_REMOVE_S / 2 - 2)) is False
    running = {"JobStatus": 2, "EnteredCurrentStatus": int(time.time()) - 10_000, "RequestMemory": 2000}
    assert evaluate(remove, **running, MemoryUsage=2001) is True
    assert evaluate(reason, **running, MemoryUsage=2001) == "Removed due to memory use"
    assert evaluate(remove, **running, MemoryUsage=1999) is False
    assert evaluate(remove, **running) is False, "not measured yet"


def test_periodic_remove_over_the_attempts_max_wall_time_on_the_tasks_clock():
    """CRAB removes a job that runs longer than MaxWallTimeMinsRun (PreJob's, per attempt) with
    the reason RetryJob turns into 50664; at 60 simulated seconds a real second, 60 minutes are 60 s."""
    limits = policy(task_ad(scale=60))
    remove, reason = limits["PeriodicRemove"], limits["PeriodicRemoveReason"]
    now = int(time.time())
    over = {"JobStatus": 2, "EnteredCurrentStatus": now - 62, "MaxWallTimeMinsRun": 60, "RequestMemory": 2000,
            "MemoryUsage": 500}
    assert evaluate(remove, **over) is True
    assert evaluate(reason, **over) == "Removed due to wall clock limit"
    assert evaluate(remove, **{**over, "EnteredCurrentStatus": now - 58}) is False
    assert evaluate(remove, **{**over, "MaxWallTimeMinsRun": 78}) is False, "a 60403 boost gives the retry more time"
    assert evaluate(remove, **{**over, "JobStatus": 1}) is False, "only a running job"
    assert evaluate(reason, **{**over, "MemoryUsage": 2001}) == "Removed due to memory use"


# --- restarts from the user log ---------------------------------------------------------------------

def test_restarts_count_evictions_and_holds_of_a_running_job_as_crab_status_does(tmp_path):
    log = tmp_path / "job_log.7"
    assert restarts(str(log)) == (0, ()), "no log yet"
    t = datetime(2024, 1, 1, tzinfo=timezone.utc)
    job = {"cluster": 11, "proc": 0, "time": t}
    again = {"cluster": 12, "proc": 0, "time": t}
    with UserLog(str(log)) as out:
        out.write(SubmitEvent(**job, submit_host="<127.0.0.1:0>", log_notes="DAG Node: Job7"),
                  ExecuteEvent(**job, execute_host="<127.0.0.1:0>"),
                  JobEvictedEvent(**job, reason="The schedd shut down"),  # 1
                  JobHeldEvent(**job, reason="idle: no restart", code=1, subcode=0),
                  JobReleasedEvent(**job, reason="via condor_release"),
                  ExecuteEvent(**job, execute_host="<127.0.0.1:0>"),
                  JobHeldEvent(**job, reason="stage-in", code=13, subcode=0),  # 2
                  JobAbortedEvent(**job, reason="Removed due to job being held"),
                  SubmitEvent(**again, submit_host="<127.0.0.1:0>", log_notes="DAG Node: Job7"),
                  ExecuteEvent(**again, execute_host="<127.0.0.1:0>"),
                  JobEvictedEvent(**again, reason="The schedd shut down"),  # 3
                  ExecuteEvent(**again, execute_host="<127.0.0.1:0>"),
                  JobTerminatedEvent(**again, return_value=0))
    assert restarts(str(log)).count == 3 and restarts(str(log)).lost_s == 0


def test_only_a_run_that_ran_again_after_its_eviction_is_lost_time(tmp_path):
    """A hold evicts a running job before it holds it, and so does a removal before the abort: the
    run a release starts again is waste, the run the removal ended is the attempt's runtime."""
    log = tmp_path / "job_log.3"
    t = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
    at = lambda s: {"cluster": 21, "proc": 0, "time": datetime.fromtimestamp(t + s, timezone.utc)}  # noqa: E731
    with UserLog(str(log)) as out:
        out.write(SubmitEvent(**at(0), submit_host="<127.0.0.1:0>", log_notes="DAG Node: Job3"),
                  ExecuteEvent(**at(10), execute_host="<127.0.0.1:0>"),
                  JobEvictedEvent(**at(40), reason="held"),
                  JobHeldEvent(**at(40), reason="via condor_hold", code=1, subcode=0),
                  JobReleasedEvent(**at(50), reason="via condor_release"),
                  ExecuteEvent(**at(52), execute_host="<127.0.0.1:0>"),
                  JobEvictedEvent(**at(70), reason="removed"),
                  JobAbortedEvent(**at(70), reason="via condor_rm"))
    found = restarts(str(log))
    assert (found.count, found.lost_s) == (2, 30)
    assert found.cut == ((0, 30, None, None),), "the first attempt's run, 10 s to 40 s, with no site logged"


def test_a_run_a_hold_cut_short_is_lost_time_while_held_and_after_the_release(tmp_path):
    """cache_status opens a new WallDurations slot when a running job is held, evicted first
    (condor_hold) or not (a hold of its own, stage-in's code 13): crab status shows the run as
    Waste while the job waits held or released, and after beside the run that finishes."""
    t = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
    at = lambda s: {"cluster": 31, "proc": 0, "time": datetime.fromtimestamp(t + s, timezone.utc)}  # noqa: E731
    held = tmp_path / "job_log.1"
    with UserLog(str(held)) as out:
        out.write(SubmitEvent(**at(0), submit_host="<127.0.0.1:0>", log_notes="DAG Node: Job1"),
                  ExecuteEvent(**at(10), execute_host="<127.0.0.1:0>"),
                  JobEvictedEvent(**at(40), reason="held"),
                  JobHeldEvent(**at(40), reason="via condor_hold", code=1, subcode=0))
    assert restarts(str(held)).cut == ((0, 30, None, None),), "held: the run is cut already"
    with UserLog(str(held)) as out:
        out.write(JobReleasedEvent(**at(50), reason="via condor_release"))
    assert restarts(str(held)).cut == ((0, 30, None, None),), "released, waiting to run: still cut"
    own = tmp_path / "job_log.2"
    with UserLog(str(own)) as out:
        out.write(SubmitEvent(**at(0), submit_host="<127.0.0.1:0>", log_notes="DAG Node: Job2"),
                  ExecuteEvent(**at(10), execute_host="<127.0.0.1:0>"),
                  JobHeldEvent(**at(25), reason="stage-in", code=13, subcode=0),
                  JobReleasedEvent(**at(325), reason="released after 5 minutes"),
                  ExecuteEvent(**at(330), execute_host="<127.0.0.1:0>"),
                  JobTerminatedEvent(**at(400), return_value=0))
    found = restarts(str(own))
    assert (found.count, found.cut) == (1, ((0, 15, None, None),))


def test_the_release_after_5_minutes_keeps_to_the_tasks_clock(tmp_path, state, monkeypatch):
    """A schedd that looks at its periodic policy every 30 s (as slow as HTCondor's, nearly) still
    releases a job of a task at 300 simulated seconds a second within a simulated minute of its 5
    minutes held: the job asks for its policy every 60 simulated seconds (0.2 s here)."""
    monkeypatch.setenv("CRABTUI_PERIODIC_EXPR_INTERVAL", "30")
    (tmp_path / "crab.toml").write_text(config_text("onclock", scale=300, plan='{job = "1", attempt = 1, hold = 13}'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "onclock", tmp_path, "COMPLETED", timeout=60)
    (first,) = events_by_cluster(Path(status["task_dir"]) / "job_log.1")
    held = next(e for e in first if e.type == ET.JOB_HELD)
    released = next(e for e in first if e.type == ET.JOB_RELEASED)
    # Whole-second event times: 1 s of 5 minutes, at most 0.2 s more, and the rounding.
    assert RELEASE_AFTER_S / 300 <= released.timestamp - held.timestamp <= RELEASE_AFTER_S / 300 + 2


def test_the_run_a_hold_evicted_is_waste_as_crab_status_counts_it(tmp_path, state):
    """condor_hold of a running job evicts it first (JOB_EVICTED, then JOB_HELD): CRAB's
    cache_status closes that run's wall time and opens a new slot for the run after the release,
    so crab status --long shows the lost run as the job's Waste beside its restart."""
    (tmp_path / "crab.toml").write_text(config_text("evicted", scale=100))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0

    def running_for_two_seconds() -> str:
        ran = crabtui(state, "q", "-af", "ClusterId", "-constraint",
                      f'CRAB_Id == "1" && JobStatus == 2 && JobCurrentStartDate <= {int(time.time()) - 2}',
                      cwd=tmp_path)
        return ran.stdout.strip()

    cluster = wait_until("job 1 to run for 2 s", running_for_two_seconds)
    assert crabtui(state, "hold", cluster, cwd=tmp_path).returncode == 0
    assert crabtui(state, "release", cluster, cwd=tmp_path).returncode == 0
    status = wait_status(state, "evicted", tmp_path, "COMPLETED", timeout=120)
    jobs = {j["id"]: j for j in status["jobs"]}
    assert (jobs["1"]["retries"], jobs["1"]["restarts"]) == (0, 1)
    assert jobs["1"]["waste_s"] >= 100, "the evicted run, at least 1 s at 100 simulated seconds a second"
    assert [jobs[i]["waste_s"] for i in ("2", "3", "4")] == [0, 0, 0]
    # crab status --json: the evicted run is a WallDurations slot of its own, at its site, before the
    # run after the release, and Waste is the slots before the last (CRABClient's status)
    walls, sites = jobs["1"]["WallDurations"], jobs["1"]["SiteHistory"]
    assert len(walls) == len(sites) == len(jobs["1"]["ResidentSetSize"]) == 2, jobs["1"]
    assert sites == [jobs["1"]["site_history"][0]] * 2 and walls[0] >= 100
    assert sum(walls[:-1]) == jobs["1"]["waste_s"] and walls[-1] == jobs["1"]["runtime_s"]
    assert [len(jobs[i]["WallDurations"]) for i in ("2", "3", "4")] == [1, 1, 1]


def test_a_held_job_removed_by_hand_fails_with_dagmans_code_and_the_run_it_had(tmp_path, state):
    """condor_rm of a job waiting held (before CRAB's 7 minutes): no report of it comes back, so
    PostJob fails it for good with DAGMan's -1002, its run ends at its hold, and the summary says
    it was removed from the queue, not held too long (that removal is retried, with no exit code)."""
    from engine.schedd.local.client import LocalScheddClient

    (tmp_path / "crab.toml").write_text(config_text("heldrm", scale=5, plan='{job = "1", attempt = 1, hold = 21}'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    job_1 = lambda: next((j for j in task_status(state, "heldrm", tmp_path)["jobs"] if j["id"] == "1"), {})  # noqa: E731
    wait_until("job 1 to show as held", lambda: job_1().get("state") == "held")
    with LocalScheddClient(state) as schedd:
        (ad,) = schedd.query_values('CRAB_Id =?= "1" && JobStatus == 5', ["ClusterId"])
    time.sleep(1.5)  # time spent held, which no run is charged
    assert crabtui(state, "rm", str(ad["ClusterId"]), cwd=tmp_path).returncode == 0
    wait_until("job 1 failed", lambda: job_1().get("state") == "failed")
    (attempt,) = job_1()["attempts"]
    assert (attempt["action"], attempt["exit_code"]) == ("fatal", -1002)
    long = crabtui(state, "task", "status", "heldrm", "--long", "--verboseErrors", cwd=tmp_path).stdout
    assert "Job did not produce a usable framework job report." in long, long
    summary = next(line for line in long.splitlines() if "exit code -1002" in line)
    assert summary.strip().startswith("1 jobs failed with exit code -1002 (Removed from the queue by hand"), summary
    assert "held too long" not in summary, summary
    events = events_by_cluster(Path(task_status(state, "heldrm", tmp_path)["task_dir"]) / "job_log.1")[0]
    assert [e.type for e in events] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_HELD, ET.JOB_ABORTED]
    assert attempt["runtime_s"] == (events[2].timestamp - events[1].timestamp) * 5, "its run ended at its hold"
    crabtui(state, "task", "kill", "heldrm", cwd=tmp_path)
