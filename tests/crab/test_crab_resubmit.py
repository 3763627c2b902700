"""``crabtui task resubmit`` against a real embedded schedd and its task worker: only failed jobs,
a new resubmit epoch (RRN from 0) with the new parameters for them, the others left alone."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from engine.crab.ap.prejob import failed_for_good, load_job_state
from engine.crab.ap.resubmit_record import RECORD_FILE, ResubmitRecordError, apply_record, read_record, write_entry
from engine.crab.ap.retry_policy import Attempt, JobState, Params
from engine.crab.client.resubmit import ResubmitError, make_entry, request_arguments, select_jobs
from engine.schedd.local.client import LocalScheddClient
from crab_tasks import config_text, crab_config_py, crabtui, task_status, wait_status

JOB3_FAILS_THREE_TIMES = ", ".join(f'{{job = "3", attempt = {n}, exitCode = 1}}' for n in (1, 2, 3))


def wait_until(what, predicate, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value


def test_failed_job_is_resubmitted_with_new_memory_in_a_new_epoch(tmp_path, state):
    Path(state.taskworker_config).write_text("[TaskWorker]\nnumAutomJobRetries = 3\n")
    (tmp_path / "crab.toml").write_text(config_text("resub", scale=2000, plan=JOB3_FAILS_THREE_TIMES))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "resub", tmp_path, "FAILED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert {i: j["state"] for i, j in jobs.items()} == {"1": "finished", "2": "finished", "3": "failed",
                                                        "4": "finished"}
    assert [a["exit_code"] for a in jobs["3"]["attempts"]] == [1, 1, 1], "RRN 1, 2, 3: the budget of 3"

    # Refused by the command itself: a job that is not failed, options out of CRAB's ranges.
    finished = crabtui(state, "task", "resubmit", "resub", "--jobids", "2-3", cwd=tmp_path)
    assert finished.returncode == 1
    assert "Not possible to resubmit the following jobs: 2 (2: finished)" in finished.stderr
    assert "Only jobs in status failed can be resubmitted" in finished.stderr
    bad = crabtui(state, "task", "resubmit", "resub", "--maxmemory", "20", cwd=tmp_path)
    assert bad.returncode == 1
    assert "The requested per-job memory (20 MB) must be between 30 and 30720 MB." in bad.stderr
    assert task_status(state, "resub", tmp_path)["status"] == "FAILED", "a refused request changes nothing"

    # Refused by the task worker, as CRAB's DagmanResubmitter does: more memory than 5000 MB per core.
    assert crabtui(state, "task", "resubmit", "resub", "--maxmemory", "6000", cwd=tmp_path).returncode == 0
    refused = wait_status(state, "resub", tmp_path, "RESUBMITFAILED")
    assert "above the allowed maximum of 5000" in refused["message"]
    task_dir = Path(json.loads(crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout)[0]["task_dir"])
    assert load_job_state(str(task_dir), "3").epoch == 0 and read_record(str(task_dir)) == []

    done = crabtui(state, "task", "resubmit", "resub", "--maxmemory", "3000", "--priority", "12", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    status = wait_status(state, "resub", tmp_path, "COMPLETED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert all(j["state"] == "finished" for j in jobs.values())
    three = jobs["3"]["attempts"]
    assert [a["exit_code"] for a in three] == [1, 1, 1, 0]
    assert [a["request_memory"] for a in three] == [2000, 2000, 2000, 3000]
    assert [a["max_runtime"] for a in three] == [1250] * 4, "an option not given keeps the task's value"
    assert all(len(jobs[i]["attempts"]) == 1 and jobs[i]["attempts"][0]["request_memory"] == 2000
               for i in ("1", "2", "4")), "jobs not resubmitted keep their single attempt"

    state3 = load_job_state(str(task_dir), "3")
    assert [(a.rrn, a.epoch, a.crab_retry) for a in state3.attempts] == [(1, 0, 0), (2, 0, 1), (3, 0, 2), (1, 1, 3)]
    assert load_job_state(str(task_dir), "1").epoch == 0
    (entry,) = read_record(str(task_dir))
    assert (entry.epoch, entry.job_ids, entry.memory_mb, entry.priority) == (1, ("3",), 3000, 12)
    submit = (task_dir / "Job.3.submit").read_text()
    assert "request_memory = 3000" in submit and "My.CRAB_RRN = 1" in submit
    assert submit.rstrip().endswith("priority = 12\nqueue")

    nothing = crabtui(state, "task", "resubmit", "resub", cwd=tmp_path)
    assert nothing.returncode == 1  # CRAB's server takes no resubmit of a task all of whose jobs finished
    assert nothing.stderr.startswith("ERROR: You cannot resubmit jobs if the task is in status COMPLETED. (")


def test_a_killed_task_cannot_be_resubmitted(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("gone", scale=1))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    wait_status(state, "gone", tmp_path, "SUBMITTED")  # a task still QUEUED is refused a kill, as by CRAB
    assert crabtui(state, "task", "kill", "gone", cwd=tmp_path).returncode == 0
    wait_status(state, "gone", tmp_path, "KILLED")
    refused = crabtui(state, "task", "resubmit", "gone", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("ERROR: You cannot resubmit jobs if the task is in status KILLED. (")


def test_a_task_whose_dagman_is_removed_from_outside_shows_its_jobs_failed_and_can_be_resubmitted(tmp_path, state):
    """`crabtui rm` (condor_rm) of the task's DAGMan job, not crab kill: DAGMan's last node status
    dump says the nodes in flight are STATUS_ERROR, which crab status shows as failed (seen on the
    23.9.6 pool: "Was STATUS_SUBMITTED"), and the task, not KILLED, takes crab resubmit."""
    release = tmp_path / "release"
    (tmp_path / "run.sh").write_text(f'#!/bin/sh\nwhile [ ! -e {release} ]; do sleep 0.1; done\n')
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("ousted", scale=2000)
                                        .replace('psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    wait_until("the jobs to run", lambda: {j["state"] for j in task_status(state, "ousted", tmp_path)["jobs"]}
               == {"running"})
    (task,) = json.loads(crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout)
    assert crabtui(state, "rm", str(task["dagman_id"]), cwd=tmp_path).returncode == 0
    status = wait_status(state, "ousted", tmp_path, "FAILED")
    assert {j["id"]: j["state"] for j in status["jobs"]} == {i: "failed" for i in ("1", "2", "3", "4")}
    resubmitted = crabtui(state, "task", "resubmit", "ousted", cwd=tmp_path)
    assert resubmitted.returncode == 0, resubmitted.stderr
    release.touch()
    status = wait_status(state, "ousted", tmp_path, "COMPLETED")
    assert all(j["state"] == "finished" for j in status["jobs"])


def test_a_resubmit_while_the_dag_runs_reruns_the_job_at_once_and_leaves_the_running_ones_alone(tmp_path, state):
    """CRAB's live resubmit: DAGMan is held and released after its state says the failed node is to
    be retried, so job 3 runs again while job 1 (which waits for a file the test writes) runs on,
    in the same job, undisturbed; the task then completes under the same DAGMan."""
    release = tmp_path / "release"
    (tmp_path / "run.sh").write_text(f'#!/bin/sh\nif [ "$1" = 1 ]; then while [ ! -e {release} ]; do sleep 0.1; done; fi\n')
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("busy", scale=2000, plan='{job = "3", attempt = 1, exitCode = 7}')
                                        .replace('psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0

    def states() -> dict | None:
        status = task_status(state, "busy", tmp_path)
        jobs = {j["id"]: j["state"] for j in status["jobs"]}
        return status if (jobs.get("3"), jobs.get("1")) == ("failed", "running") else None

    status = wait_until("job 3 failed while job 1 runs", states)
    with LocalScheddClient(state) as schedd:
        (running,) = schedd.query('CRAB_Id == "1"', ["ClusterId", "JobStatus"])
    assert crabtui(state, "task", "resubmit", "busy", "--jobids", "3", cwd=tmp_path).returncode == 0

    def rerun() -> dict | None:
        now = task_status(state, "busy", tmp_path)
        three = next(j for j in now["jobs"] if j["id"] == "3")
        return now if [a["exit_code"] for a in three["attempts"]] == [7, 0] else None

    after = wait_until("job 3 to run again while job 1 still runs", rerun, timeout=60)
    assert (after["status"], after["dagman_id"]) == ("SUBMITTED", status["dagman_id"]), "the same DAGMan"
    one = next(j for j in after["jobs"] if j["id"] == "1")
    assert one["state"] == "running" and one["restarts"] == 0 and len(one["attempts"]) == 1
    with LocalScheddClient(state) as schedd:
        assert schedd.query('CRAB_Id == "1"', ["ClusterId", "JobStatus"])[0]["ClusterId"] == running["ClusterId"]
    task_dir = Path(after["task_dir"])
    state3 = load_job_state(str(task_dir), "3")
    assert [(a.rrn, a.epoch) for a in state3.attempts] == [(1, 0), (1, 1)], "a fresh budget in epoch 1"
    assert "RETRY Job3 11 UNLESS-EXIT 2" in (task_dir / "RunJobs.dag").read_text(), "retries so far + 1 + 10"
    assert "Running in RECOVERY mode" in (task_dir / "RunJobs.dag.dagman.out").read_text()

    release.write_text("")
    final = wait_status(state, "busy", tmp_path, "COMPLETED")
    assert final["dagman_id"] == status["dagman_id"]
    jobs = {j["id"]: j for j in final["jobs"]}
    assert all(j["state"] == "finished" for j in jobs.values())
    assert (len(jobs["1"]["attempts"]), jobs["1"]["restarts"]) == (1, 0)


# --- the pieces, without an engine ------------------------------------------------------------

def test_options_are_checked_as_crab_client_checks_them():
    args = request_arguments(jobids="5,1,3-4", sitewhitelist="T2_CH_CERN,T2_US_*", siteblacklist="",
                             maxjobruntime=60, maxmemory=30720, priority=1)
    assert args == {"resubmit_jobids": ["5", "1", "3-4"], "site_whitelist": ["T2_CH_CERN", "T2_US_*"],
                    "site_blacklist": [], "maxjobruntime": 60, "maxmemory": 30720, "priority": 1}
    assert request_arguments()["site_whitelist"] is None, "not given: the task's value applies"
    for options, message in (
            (dict(maxmemory=29), "must be between 30 and 30720 MB"),
            (dict(maxmemory=30721), "must be between 30 and 30720 MB"),
            (dict(maxjobruntime=59), "(59 minutes) must be between 60 and 20160 minutes"),
            (dict(maxjobruntime=20161), "must be between 60 and 20160 minutes"),
            (dict(priority=0), "The requested priority (0) must be greater than 0."),
            (dict(jobids="1,,3"), "--jobids takes a comma separated list of integers or ranges"),
            (dict(jobids="1 3"), "--jobids takes a comma separated list"),
            (dict(siteblacklist="CERN"), "'CERN' given to --siteblacklist does not look like a valid CMS site")):
        with pytest.raises(ResubmitError, match=re.escape(message)):
            request_arguments(**options)


def test_only_failed_jobs_are_taken():
    states = {"1": "finished", "2": "failed", "3": "running", "4": "failed"}
    assert select_jobs(states, None) == ["2", "4"]
    assert select_jobs(states, ["4"]) == ["4"]
    with pytest.raises(ResubmitError, match=re.escape("following jobs: 1,3,9 (1: finished; 3: running; "
                                                      "9: no such job). Only jobs in status failed")):
        select_jobs(states, ["1", "2", "3", "9"])
    with pytest.raises(ResubmitError, match="Found no jobs to resubmit. Only jobs in status failed"):
        select_jobs({"1": "finished"}, None)


def _failed_three_times(job: str) -> JobState:
    attempts = tuple(Attempt(crab_retry=i, dag_retry=i, rrn=i + 1, epoch=0, request_memory_mb=2000,
                             max_runtime_min=1250, site="T2_XX_Local", exit_code=1,
                             action="fatal" if i == 2 else "retry") for i in range(3))
    return JobState(job, dag_retry=2, crab_retry=3, rrn=3, attempts=attempts)


def test_the_record_puts_listed_jobs_in_a_new_epoch_and_leaves_the_others(tmp_path):
    task = {"max_memory_mb": 2000, "max_runtime_min": 1250, "num_cores": 1, "priority": 10,
            "site_whitelist": [], "site_blacklist": ["T2_DE_DESY"]}
    first, warning = make_entry(task, request_arguments(maxmemory=3000, sitewhitelist="T2_CH_CERN"),
                                epoch=1, job_ids=["3"], now=1.0)
    assert warning == "" and first.params == Params(3000, 1250)
    assert (first.site_whitelist, first.site_blacklist, first.priority) == (("T2_CH_CERN",), ("T2_DE_DESY",), 10)
    second, warning = make_entry(task, request_arguments(maxjobruntime=3000), epoch=2, job_ids=["5"], now=2.0)
    assert second.memory_mb == 2000, "an option not given takes the task's original value, not epoch 1's"
    assert "only 2750 are guaranteed" in warning
    with pytest.raises(ResubmitError, match="above the allowed maximum of 5000 for a 1 core"):
        make_entry(task, request_arguments(maxmemory=5001), epoch=3, job_ids=["3"], now=3.0)
    write_entry(str(tmp_path), first)
    write_entry(str(tmp_path), second)
    write_entry(str(tmp_path), first)  # a worker that died half-way writes its epoch again
    entries = read_record(str(tmp_path))
    assert entries == [first, second]

    three = _failed_three_times("3")
    assert failed_for_good(three), "failed, and not resubmitted yet"
    resubmitted, entry = apply_record(three, entries)
    assert entry == first and (resubmitted.epoch, resubmitted.rrn, resubmitted.next) == (1, 0, Params(3000, 1250))
    assert resubmitted.attempts == three.attempts and resubmitted.crab_retry == 3, "the history continues"
    assert not failed_for_good(resubmitted)
    assert apply_record(resubmitted, entries) == (resubmitted, first), "applying an epoch again changes nothing"
    other = _failed_three_times("1")
    assert apply_record(other, entries) == (other, None) and failed_for_good(other), "an unlisted job keeps its state"

    (tmp_path / RECORD_FILE).write_text('{"schema": "crabtui.resubmit_record/1", "epochs": [{"epoch": 0}]}')
    with pytest.raises(ResubmitRecordError, match="epochs\\[0\\]"):
        read_record(str(tmp_path))


def test_adjust_sites_edits_retry_counts_and_post_results_in_place(tmp_path):
    from datetime import datetime

    import htcondor2

    from engine.dag.writer import set_retries
    from engine.schedd.local.userlog import (ExecuteEvent, PostScriptTerminatedEvent, SubmitEvent, UserLog,
                                             change_post_results)

    dag = tmp_path / "RunJobs.dag"
    dag.write_text("JOB Job1 Job.1.submit\nRETRY Job1 10 UNLESS-EXIT 2\nJOB Job12 Job.12.submit\n"
                   "retry Job12 10 UNLESS-EXIT 2\n# RETRY Job1 3\n")
    assert set_retries(str(dag), {"Job1": 14, "Job3": 99})
    assert dag.read_text() == ("JOB Job1 Job.1.submit\nRETRY Job1 14 UNLESS-EXIT 2\nJOB Job12 Job.12.submit\n"
                               "retry Job12 10 UNLESS-EXIT 2\n# RETRY Job1 3\n")
    assert not set_retries(str(dag), {"Job1": 14}), "doing it again changes nothing"

    log = tmp_path / "RunJobs.dag.nodes.log"
    t = datetime(2026, 1, 1, 12, 0).astimezone()
    with UserLog(str(log)) as out:
        out.write(SubmitEvent(cluster=5, proc=0, time=t, submit_host="<127.0.0.1:0>", log_notes="DAG Node: Job1"),
                  PostScriptTerminatedEvent(cluster=5, proc=0, time=t, dag_node_name="Job1", return_value=2),
                  PostScriptTerminatedEvent(cluster=6, proc=0, time=t, dag_node_name="Job12", return_value=2),
                  PostScriptTerminatedEvent(cluster=7, proc=0, time=t, dag_node_name="Job2", return_value=0))
    size = log.stat().st_size
    assert change_post_results(str(log), ["Job1", "Job2"], 2, 1) == ["Job1"]
    with UserLog(str(log)) as out:  # the schedd goes on appending
        out.write(ExecuteEvent(cluster=8, proc=0, time=t, execute_host="<127.0.0.1:0>"))
    assert change_post_results(str(log), ["Job1"], 2, 1) == [] and log.stat().st_size > size
    posts = [(e["DAGNodeName"], e["ReturnValue"]) for e in htcondor2.JobEventLog(str(log)).events(stop_after=0)
             if e.type == htcondor2.JobEventType.POST_SCRIPT_TERMINATED]
    assert posts == [("Job1", 1), ("Job12", 2), ("Job2", 0)]


def test_each_job_is_retried_by_the_dagman_of_its_stage():
    from engine.crab.taskworker.resubmitter import dag_of

    assert [dag_of(job, automatic=False) for job in ("1", "17")] == ["RunJobs.dag"] * 2
    assert [dag_of(job, automatic=True) for job in ("0-2", "4", "1-3", "3-12")] == [
        "RunJobs.dag", "RunJobs0.subdag", "RunJobs1.subdag", "RunJobs3.subdag"]


def test_a_job_prejob_finds_nowhere_to_run_is_failed_and_a_resubmit_leaving_it_nowhere_is_refused(tmp_path, state):
    """PreJob's "Can not submit since DESIRED_Sites list is empty" (here: the global blacklist took
    the sites of job 2's data while it cooled off) leaves the job failed with that message, not
    killed, and resubmittable; a resubmit whose --sitewhitelist leaves no site of the pool is
    refused by the command in one line, changing nothing."""
    (tmp_path / "crabConfig.py").write_text(crab_config_py(
        "nowhere", scale=100, more="config.Debug.failurePlan = [{'job': '2', 'attempt': 1, 'exitCode': 8021}]\n"))
    assert crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path).returncode == 0
    status = wait_until("job 2 to cool off", lambda: (s := task_status(state, "nowhere", tmp_path)) and
                        any(j["id"] == "2" and j["state"] == "cooloff" for j in s["jobs"]) and s)
    blacklist = Path(state.global_blacklist)
    before = blacklist.read_text() if blacklist.exists() else None
    data_sites = json.loads((Path(status["task_dir"]) / "job_sites.2.json").read_text())
    blacklist.write_text(json.dumps(sorted(set(json.loads(before or "[]")) | set(data_sites))))
    failed = wait_status(state, "nowhere", tmp_path, "FAILED")
    two = {j["id"]: j for j in failed["jobs"]}["2"]
    assert two["state"] == "failed" and two["error"].startswith("Can not submit since DESIRED_Sites list is empty")
    long = crabtui(state, "task", "status", "nowhere", "--verboseErrors", cwd=tmp_path).stdout
    assert "Can not submit since DESIRED_Sites list is empty" in long and "killed" not in long
    if before is None:
        blacklist.unlink()
    else:
        blacklist.write_text(before)

    refused = crabtui(state, "task", "resubmit", "nowhere", "--sitewhitelist", "T2_XX_Foo_Bar,T3_*", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("ERROR: Can not resubmit jobs 2: with --sitewhitelist T2_XX_Foo_Bar,T3_* their "
                                     "DESIRED_Sites list would be empty")
    after = task_status(state, "nowhere", tmp_path)
    assert (after["status"], {j["id"]: j["state"] for j in after["jobs"]}["2"]) == ("FAILED", "failed")
    assert read_record(after["task_dir"]) == []

    assert crabtui(state, "task", "resubmit", "nowhere", cwd=tmp_path).returncode == 0
    done = wait_status(state, "nowhere", tmp_path, "COMPLETED")
    assert all(j["state"] == "finished" for j in done["jobs"])


def test_a_resubmit_whose_maxmemory_no_slot_of_its_sites_holds_says_so(tmp_path, state):
    """--maxmemory 10000 for a job whitelisted at T2_XX_Local, whose slots have 8000 MB: the refusal
    names the pool's sites and those with slots that large, and a smaller --maxmemory as a way
    out; it read 'the pool's sites are T1_US_FNAL, T2_CH_CERN', as if the pool had no other."""
    (tmp_path / "crabConfig.py").write_text(crab_config_py(
        "bigmem", scale=500, more="config.Site.whitelist = ['T2_XX_Local']\n"
                                  "config.Debug.failurePlan = [{'job': '2', 'attempt': '*', 'exitCode': 8006}]\n"))
    assert crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path).returncode == 0
    wait_status(state, "bigmem", tmp_path, "FAILED")
    refused = crabtui(state, "task", "resubmit", "bigmem", "--maxmemory", "10000", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert ("the pool's sites are T1_US_FNAL, T2_CH_CERN, T2_DE_DESY, T2_IT_Pisa, T2_US_Nebraska, T2_XX_Local, with "
            "slots for jobs of 1 core(s) and 10000 MB at T1_US_FNAL, T2_CH_CERN). Choose sites among those, or a "
            "smaller --maxmemory.\n") in refused.stderr, refused.stderr
    assert crabtui(state, "task", "resubmit", "bigmem", "--maxmemory", "6000", cwd=tmp_path).returncode == 0


def test_publication_resubmit_of_a_task_that_does_not_publish_is_refused_in_crabs_words(tmp_path, state):
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("nopub", scale=0.5, more="config.Data.publication = False\n"))
    assert crabtui(state, "task", "submit", "-c", "crabConfig.py", cwd=tmp_path).returncode == 0
    wait_status(state, "nopub", tmp_path, "SUBMITTED")
    refused = crabtui(state, "task", "resubmit", "-d", "crab_nopub", "--publication", cwd=tmp_path)
    assert (refused.returncode, refused.stderr) == (
        1, "ERROR: Publication was disabled for this task. Therefore, there are no publications to resubmit.\n")
    assert crabtui(state, "task", "kill", "-d", "crab_nopub", cwd=tmp_path).returncode == 0
    wait_status(state, "nopub", tmp_path, "KILLED")
