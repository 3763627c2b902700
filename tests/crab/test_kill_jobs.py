"""Killing a task's running jobs as HTCondor and CRAB do: SIGTERM to the job, ``killing`` while its
processes live, SIGKILL after the grace time, then ``killed``, with the site and runtime it had;
and the wrapper's own end on SIGTERM (CRAB's 50669)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from engine.crab.wn import fjr

from crab_tasks import config_text, crab_config_py, crabtui, task_status, wait_until


def processes_with(marker: str) -> list[int]:
    """The pids of the processes whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_killed_jobs_payload_that_ignores_sigterm_shows_killing_until_sigkill_ends_it(tmp_path, state, monkeypatch):
    monkeypatch.setenv("CRABTUI_JOB_MAX_VACATE_TIME", "3")  # the grace from SIGTERM to SIGKILL, for the daemon
    marker = f"stubborn-{os.getpid()}"
    # Job 1's payload ignores SIGTERM (as its child sleep does: an ignored signal stays ignored across exec).
    (tmp_path / "run.sh").write_text(f"#!/bin/sh\nif [ \"$1\" = 1 ]; then trap '' TERM; exec sh -c 'sleep 3600' {marker}; fi\n")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("stubborn", scale=600).replace('psetName = "pset.py"',
                                                                                    'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0

    def one_running() -> bool:
        jobs = {j["id"]: j["state"] for j in task_status(state, "stubborn", tmp_path)["jobs"]}
        return jobs.get("1") == "running" and processes_with(marker)

    wait_until("job 1's payload to run", one_running)
    time.sleep(1)  # a runtime the status can show
    assert crabtui(state, "task", "kill", "stubborn", cwd=tmp_path).returncode == 0
    seen = []

    def killed() -> bool:
        state_1 = next(j for j in task_status(state, "stubborn", tmp_path)["jobs"] if j["id"] == "1")["state"]
        if not seen or seen[-1][0] != state_1:
            seen.append((state_1, bool(processes_with(marker))))
        return state_1 == "killed"

    wait_until("job 1 killed", killed, timeout=60)
    assert ("killing", True) in seen, f"killing while its processes live: {seen}"
    assert not processes_with(marker), "SIGKILL ended the payload that ignored SIGTERM"
    status = task_status(state, "stubborn", tmp_path)
    assert status["status"] == "KILLED"
    one = next(j for j in status["jobs"] if j["id"] == "1")
    assert one["site_history"] and one["runtime_s"] and one["runtime_s"] >= 600
    long = crabtui(state, "task", "status", "stubborn", "--long", cwd=tmp_path).stdout.splitlines()
    row = next(line.split() for line in long if line.split()[:2] == ["1", "killed"])
    assert row[2] == one["site_history"][-1] and row[3] != "0:00:00", row
    report = Path(status["task_dir"]) / "jobReport.json.1.0"
    assert '"exitMsg": "Job was killed with signal 15"' in report.read_text()
    # The report stops at SIGTERM; the job ran 3 s more (600 simulated s each) until its SIGKILL,
    # and its runtime counts them, as the job log times them (to the second).
    assert one["runtime_s"] >= fjr.performance(str(report))[0] + 2 * 600, one["runtime_s"]


def test_a_wrapper_signalled_alone_passes_sigterm_on_to_its_payload(tmp_path, state):
    """HTCondor's starter sends its soft kill to the job's first process only, the wrapper: on the
    pool a killed task's payloads ran on until the SIGKILL ten minutes later, holding their slots."""
    marker = f"payload-{os.getpid()}"
    (tmp_path / "run.sh").write_text(f"#!/bin/sh\nif [ \"$1\" = 1 ]; then exec sh -c 'sleep 3600' {marker}; fi\n")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("alone", scale=600, units=20).replace(
        'psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    wait_until("the payload to run", lambda: processes_with(marker))
    payload = processes_with(marker)[0]
    with open(f"/proc/{payload}/stat") as f:
        wrapper = int(f.read().rsplit(")", 1)[1].split()[1])  # the payload's parent
    os.kill(wrapper, signal.SIGTERM)  # as a real starter does: the wrapper alone
    wait_until("the payload to end", lambda: payload not in processes_with(marker), timeout=30)
    report = Path(task_status(state, "alone", tmp_path)["task_dir"]) / "jobReport.json.1.0"
    assert '"exitMsg": "Job was killed with signal 15"' in report.read_text()
    assert crabtui(state, "task", "kill", "alone", cwd=tmp_path).returncode == 0


def test_a_killed_running_job_shows_the_memory_its_job_log_recorded(tmp_path, state):
    """A running job removed by ``task kill`` leaves a report that stops at SIGTERM with no memory
    figure; ``crab status --long`` gives the memory its job log recorded (the schedd's last
    ResidentSetSize), as it does on a pool, which brings no file of a removed job back."""
    from engine.crab.ap.joblog import last_run

    (tmp_path / "pset.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("memkill", scale=2))
    assert crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path).returncode == 0
    task_dir = Path(task_status(state, "memkill", tmp_path)["task_dir"])
    wait_until("job 1's log to record its memory", lambda: "006 (" in _text(task_dir / "job_log.1"))
    assert crabtui(state, "task", "kill", "memkill", cwd=tmp_path).returncode == 0
    wait_until("job 1 killed", lambda: task_status(state, "memkill", tmp_path)["jobs"][0]["state"] == "killed")
    one = task_status(state, "memkill", tmp_path)["jobs"][0]
    assert '"memory": {}' in (task_dir / "jobReport.json.1.0").read_text()  # what the report cannot say
    logged = last_run(str(task_dir / "job_log.1")).rss_kb
    assert logged and one["memory_mb"] == logged / 1024, one
    long = crabtui(state, "task", "status", "memkill", "--long", cwd=tmp_path).stdout.splitlines()
    row = next(line.split() for line in long if line.split()[:2] == ["1", "killed"])
    assert row[4] == str(int(logged / 1024)), row  # crab status gives whole MB


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


# The user log of a job the test pool (HTCondor 23.9.6) ran at T2_XX_Local and removed at x's
# condor_rm, as its schedd wrote it (with job_ad_information_attrs = JOBGLIDEIN_CMSSite).
POOL_REMOVED_LOG = """\
000 (094.000.000) 2026-11-27 19:03:53 Job submitted from host: <127.0.0.1:39357?addrs=127.0.0.1-39357&alias=vm>
    DAG Node: Job1
...
028 (094.000.000) 2026-11-27 19:03:53 Job ad information event triggered.
Cluster = 94
EventTime = "2026-11-27T19:03:53.636"
EventTypeNumber = 28
JOBGLIDEIN_CMSSite = "$$(GLIDEIN_CMSSite:Unknown)"
LogNotes = "DAG Node: Job1"
MyType = "SubmitEvent"
Proc = 0
Subproc = 0
TriggerEventTypeName = "ULOG_SUBMIT"
TriggerEventTypeNumber = 0
...
001 (094.000.000) 2026-11-27 19:04:08 Job executing on host: <127.0.0.1:34713?addrs=127.0.0.1-34713&alias=vm>
\tSlotName: slot1_4@vm
\tCondorScratchDir = "/var/lib/condor/execute/dir_23109"
\tCpus = 1
\tDisk = 2048
\tGPUs = 0
\tMemory = 2048
...
028 (094.000.000) 2026-11-27 19:04:08 Job ad information event triggered.
Cluster = 94
EventTime = "2026-11-27T19:04:08.064"
EventTypeNumber = 28
JOBGLIDEIN_CMSSite = "T2_XX_Local"
MyType = "ExecuteEvent"
Proc = 0
SlotName = "slot1_4@vm"
Subproc = 0
TriggerEventTypeName = "ULOG_EXECUTE"
TriggerEventTypeNumber = 1
...
004 (094.000.000) 2026-11-27 19:04:17 Job was evicted.
\t(0) CPU times
\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage
\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage
\t0  -  Run Bytes Sent By Job
\t97988  -  Run Bytes Received By Job
...
009 (094.000.000) 2026-11-27 19:04:17 Job was aborted.
\tremoved from crabtui (by user crab)
...
028 (094.000.000) 2026-11-27 19:04:17 Job ad information event triggered.
Cluster = 94
EventTime = "2026-11-27T19:04:17.679"
EventTypeNumber = 28
JOBGLIDEIN_CMSSite = "$$(GLIDEIN_CMSSite:Unknown)"
MyType = "JobAbortedEvent"
Proc = 0
Reason = "removed from crabtui (by user crab)"
Subproc = 0
TriggerEventTypeName = "ULOG_JOB_ABORTED"
TriggerEventTypeNumber = 9
...
"""


def test_a_job_the_pool_removed_keeps_the_site_its_log_names(tmp_path):
    """x on a pool: no report comes back, so PostJob's attempt takes its site from the job's log,
    the site of its execution, not the unexpanded ``$$(...)`` logged after the removal; crab
    status's Most Recent Site and the attempt table show it, as condor_history's MATCH_GLIDEIN_CMSSite."""
    from engine.crab.ap.postjob import job_facts
    from engine.crab.ap.retry_policy import Attempt, JobState, Limits, decide

    log = tmp_path / "job_log.1"
    log.write_text(POOL_REMOVED_LOG)
    state = JobState("1", rrn=1, attempts=(Attempt(crab_retry=0, dag_retry=0, rrn=1, epoch=0, request_memory_mb=2000,
                                            max_runtime_min=1250),))
    decision = decide(-1002, None, state, Limits(), 1795806260.0, job_ad=job_facts(str(log), 94))
    assert (decision.action, decision.attempt.site) == ("fatal", "T2_XX_Local")


def _remove_running_job_1(tmp_path: Path, state, name: str) -> Path:
    """A task of four jobs whose job 1 is removed with rm while it runs, once its log recorded its
    memory; returns the task directory once job 1 failed."""
    from engine.schedd.local.client import LocalScheddClient

    (tmp_path / "pset.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('ANA')\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py(name, scale=2))
    assert crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path).returncode == 0
    task_dir = Path(task_status(state, name, tmp_path)["task_dir"])
    wait_until("job 1's log to record its memory", lambda: "006 (" in _text(task_dir / "job_log.1"))
    with LocalScheddClient(state) as schedd:
        (ad,) = schedd.query_values('CRAB_Id =?= "1" && JobStatus == 2', ["ClusterId"])
    assert crabtui(state, "rm", str(ad["ClusterId"]), cwd=tmp_path).returncode == 0
    wait_until("job 1 failed", lambda: task_status(state, name, tmp_path)["jobs"][0]["state"] == "failed")
    return task_dir


def test_a_job_removed_with_x_shows_the_memory_its_job_log_recorded(tmp_path, state):
    """condor_rm of one running job (x in the UI): PostJob fails it for good and its report, written
    at SIGTERM (or, on a pool, never brought back), has no memory figure; crab status --long gives
    the memory its job log recorded, as for a job of a killed task, rather than Unknown."""
    from engine.crab.ap.joblog import last_run

    task_dir = _remove_running_job_1(tmp_path, state, "memrm")
    one = task_status(state, "memrm", tmp_path)["jobs"][0]
    logged = last_run(str(task_dir / "job_log.1")).rss_kb
    assert logged and one["memory_mb"] == logged / 1024, one
    long = crabtui(state, "task", "status", "memrm", "--long", cwd=tmp_path).stdout.splitlines()
    row = next(line.split() for line in long if line.split()[:2] == ["1", "failed"])
    assert row[4] == str(int(logged / 1024)), row  # crab status gives whole MB
    crabtui(state, "task", "kill", "memrm", cwd=tmp_path)


def test_a_job_whose_wrapper_is_killed_by_a_signal_is_retried_as_crabs_retryjob_retries_it(tmp_path, state):
    """The wrapper SIGKILLed on its node (an OOM killer, a batch system): no report, $RETURN -9.
    CRAB's RetryJob makes a job without a usable report recoverable (check_empty_report), so the
    job runs again, and finishes; it failed for good before."""
    release = tmp_path / "release"
    (tmp_path / "run.sh").write_text(f'#!/bin/sh\nif [ "$1" = 1 ]; then while [ ! -e {release} ]; do sleep 0.1; done; fi\n')
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("oom", scale=2000).replace('psetName = "pset.py"',
                                                                               'psetName = "pset.py"\nscriptExe = "run.sh"'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    wait_until("job 1 to run", lambda: any((j["id"], j["state"]) == ("1", "running")
                                            for j in task_status(state, "oom", tmp_path)["jobs"]))
    (wrapper,) = [int(line.split()[1]) for line in crabtui(state, "q", "-af", "CRAB_Id", "JobPid", cwd=tmp_path)
                  .stdout.splitlines() if line.split()[0] == "1"]
    os.kill(wrapper, signal.SIGKILL)
    release.touch()
    status = wait_until("the task to end", lambda: (s := task_status(state, "oom", tmp_path))["status"]
                        in ("COMPLETED", "FAILED") and s)
    one = next(j for j in status["jobs"] if j["id"] == "1")
    assert (status["status"], one["state"]) == ("COMPLETED", "finished"), one
    assert [a["exit_code"] for a in one["attempts"]] == [-9, 0]


def test_a_running_job_removed_by_hand_fails_with_dagmans_code_as_on_a_pool(tmp_path, state):
    """condor_rm of one running job: its wrapper writes the 50669 report at SIGTERM, but a pool
    brings no file of a removed job back, so there PostJob fails the job with DAGMan's -1002 and
    'no usable framework job report'.  The embedded engine, whose jobs write into the task
    directory, said 50669 'Job was killed with signal 15' instead: the same job, another error."""
    task_dir = _remove_running_job_1(tmp_path, state, "byhand")
    assert "Job was killed with signal 15" in (task_dir / "jobReport.json.1.0").read_text()  # written, not read
    long = crabtui(state, "task", "status", "byhand", "--long", "--verboseErrors", cwd=tmp_path).stdout
    assert ("1 jobs failed with exit code -1002 (Removed from the queue by hand (condor_rm, x in the UI): no job report "
            "comes back from a removed job (DAGMan's code for a job removed).)") in long, long
    assert "Job did not produce a usable framework job report." in long, long
    row = next(line.split() for line in long.splitlines() if line.split()[:2] == ["1", "failed"])
    assert row[2] == "T2_XX_Local" and row[-1] == "-1002", row  # the site its report names
    crabtui(state, "task", "kill", "byhand", cwd=tmp_path)
