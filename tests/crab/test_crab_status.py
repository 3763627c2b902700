"""``crabtui task status``: CRAB's layout from fabricated jobs at a fixed time, the jobs' views
from a task directory and its status cache, and the command on a real task."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from crabtui.task_status import (Options, StatusOptionError, TaskInfo, check_options, compress_ids, countdown,
                                 error_lines, header_lines, parse_jobids, percentage, render, run_summary_lines,
                                 site_lines, sort_lines, summary_lines, table_lines, to_hms)
from engine.crab.ap.retry_policy import Attempt, JobState, save_state, state_path
from engine.crab.client import status as crab_status
from engine.crab.client.status import Attempts, JobView, job_state, scheduler_status, task_view
from engine.crab.wn import fjr
from engine.schedd.api import JobStatus
from crab_tasks import config_text, crab_config_py, crabtui, wait_status

NOW = 1_700_000_000.0
OK = "Job and stageout wrappers finished successfully (exit code 0)."
READ = "FileReadError (May be a site error)."


def attempt(site, code, runtime, action="ok", reason=OK, memory=1000.0, cpu=None):
    return {"site": site, "exit_code": code, "request_memory": 2000, "max_runtime": 1250, "start": NOW - 9000,
            "end": None if runtime is None else NOW - 9000 + runtime, "action": action, "reason": reason, "runtime_s": runtime,
            "cpu_s": cpu, "memory_mb": memory}


def job(id, state, *attempts, cooloff_until=None, runtime=..., memory=..., cpu_pct=None, sites=()):
    """A JobView as task_view makes it from ``attempts`` (the latest one gives the figures, unless
    given; ``sites``: the queue's site of a running job)."""
    last = attempts[-1] if attempts else None
    closed = [a for a in attempts if a["action"]]
    return JobView(id, state, max(0, len(attempts) - 1), cooloff_until,
                   tuple(a["site"] for a in attempts if a["site"]) + sites,
                   closed[-1]["exit_code"] if closed else None, attempts, 0,
                   last and last["runtime_s"] if runtime is ... else runtime,
                   last and last["memory_mb"] if memory is ... else memory, cpu_pct,
                   sum(a["runtime_s"] or 0 for a in attempts[:-1]), closed[-1]["reason"] if closed else None)


def twelve() -> list[JobView]:
    """CRAB's example summary (crab-spec §5): 2 failed, 7 finished, 2 running, 1 to retry, of 12."""
    jobs = [job(str(i), "finished", attempt("T2_CH_CERN", 0, 3723, cpu=3500), cpu_pct=94.0) for i in range(1, 8)]
    jobs += [job("8", "running", attempt(None, None, None, action=None), runtime=600.0, sites=("T2_US_MIT",)),
             job("9", "running", attempt(None, None, None, action=None), runtime=60.0, sites=("T2_US_MIT",)),
             job("10", "cooloff", attempt("T2_US_MIT", 8021, 721, "retry", READ), cooloff_until=NOW + 299, cpu_pct=51.0),
             job("11", "failed", attempt("T1_DE_KIT", 8021, 2400, "retry", READ),
                 attempt("T1_DE_KIT", 99, 41, "fatal", "Job wrapper finished with exit code 99.\nExit message:\n  boom"),
                 memory=None, cpu_pct=None),
             job("12", "failed", attempt("T2_CH_CERN", 8021, 100, "fatal", READ + " Job could be retried, but the "
                                         "maximum allowed number of retries (3) was hit."))]
    return jobs


# --- the layout -----------------------------------------------------------------------------

def test_summary_has_crabs_percentages_and_the_cooloff_countdown():
    assert summary_lines(twelve(), NOW) == [
        "",
        "Jobs status:                    cooloff      \t\t  8.3% ( 1/12)\t(next retry in 4:59)",
        "\t\t\t\tfailed       \t\t 16.7% ( 2/12)",
        "\t\t\t\tfinished     \t\t 58.3% ( 7/12)",
        "\t\t\t\trunning      \t\t 16.7% ( 2/12)",
    ]
    assert percentage(200, 10000) == "  2.0% (  200/10000)" and percentage(4, 4) == "100.0% (4/4)"
    assert percentage(9, 10) == " 90.0% ( 9/10)"


def test_long_table_columns():
    lines = table_lines(twelve(), NOW)
    assert lines[:3] == ["", "Extended Job Status Table:", ""]
    assert lines[3] == (" Job State        Most Recent Site        Runtime  Mem (MB) CPU %  Retries  Restarts"
                        "      Waste  Last ExitCode")
    rows = {line.split()[0]: line for line in lines[4:]}
    assert rows["1"] == "   1 finished     T2_CH_CERN              1:02:03      1000    94        0         0    0:00:00              0"
    assert rows["8"] == "   8 running      T2_US_MIT               0:10:00      1000 Unknown        0         0    0:00:00        Unknown"
    assert rows["10"] == "  10 cooloff 4:59 T2_US_MIT               0:12:01      1000    51        0         0    0:00:00           8021"
    assert rows["11"] == "  11 failed       T1_DE_KIT               0:00:41   Unknown Unknown        1         0    0:40:00             99"
    post = job("13", "failed", attempt("T2_CH_CERN", 90000, 0.0, "fatal", "stage-out failed"))
    assert table_lines([post], NOW)[4] == ("  13 failed       T2_CH_CERN              0:00:00      1000     0        0"
                                           "         0    0:00:00  Postprocessing failed")  # no runtime: CPU 0
    assert len(lines) == 4 + 12


def test_cooloff_countdown_and_times():
    assert countdown(299.2) == "5:00" and countdown(0) == "0:00" and countdown(-5) == "0:00"
    assert countdown(3725) == "1:02:05" and to_hms(3723.9) == "1:02:03" and to_hms(0) == "0:00:00"
    overdue = job("1", "cooloff", attempt("A", 1, 10, "retry"), cooloff_until=NOW - 30)
    assert table_lines([overdue], NOW)[4].split()[1:3] == ["cooloff", "0:00"]


def test_error_summary_groups_by_exit_code_with_the_policys_meaning():
    lines = error_lines(twelve())
    assert lines == [
        "", "Error Summary: (use crabtui task status --verboseErrors for details about the errors)", "",
        " 1 jobs failed with exit code 8021 (FileReadError (May be a site error).)", "",
        " 1 jobs failed with exit code 99 (unknown, fatal)", "",
        "Have a look at https://twiki.cern.ch/twiki/bin/viewauth/CMSPublic/JobExitCodes for a description of "
        "the exit codes."]
    # by count first; --sort=exitcode by code; CRAB's own removal codes say what they are
    more = twelve() + [job(str(i), "failed", attempt("A", 99, 5, "fatal", f"msg {i % 2}")) for i in (13, 14, 15)]
    more += [job("16", "failed", attempt("A", 50660, 5, "fatal", "memory")), job("17", "failed")]
    text = "\n".join(error_lines(more))
    assert text.index("exit code 99") < text.index("exit code 50660") < text.index("exit code 8021")  # CRAB's ties
    assert " 4 jobs failed with exit code 99 (unknown, fatal)" in text
    assert "exit code 50660 (Excessive memory use: removed on the worker node, or not retried after using more " \
           "than allowed.)" in text
    assert "Could not find exit code details for 1 jobs." in text
    by_code = "\n".join(error_lines(more, sort="exitcode"))
    assert by_code.index("exit code 99 ") < by_code.index("exit code 8021") < by_code.index("exit code 50660")
    assert error_lines([j for j in twelve() if j.state != "failed"]) == []


def test_verbose_errors_list_the_messages_and_their_jobs():
    jobs = twelve() + [job(str(i), "failed", attempt("A", 99, 5, "fatal", "m"), ) for i in (13, 14, 15, 17)]
    text = "\n".join(error_lines(jobs, verbose=True))
    assert "Error Summary:\n\n 5 jobs failed with exit code 99 (unknown, fatal):" in text
    assert ("\t 4 jobs failed with following error message: (for example, job 13)\n\n\t\tm\n\n"
            "\t\tJobs: 13-15,17") in text
    assert ("\t 1 jobs failed with following error message: (for example, job 11)\n\n"
            "\t\tJob wrapper finished with exit code 99.\n\t\tExit message:\n\t\t  boom\n\n\t\tJobs: 11") in text
    many = [job(str(i), "failed", attempt("A", 1, 5, "fatal", f"m{i}")) for i in range(1, 6)]
    text = "\n".join(error_lines(many, verbose=True))
    assert "(Showing only the 3 most frequent errors messages for this exit code)" in text
    assert "For the error messages of the other 2 jobs (1-2), please have a look at 'crabtui task status --json'." \
        in text


def test_run_summary_and_its_warnings():
    lines = run_summary_lines(twelve(), max_memory_mb=2500, max_runtime_min=1250)
    assert lines[-6:] == ["Summary of run jobs:", " * Memory: 1000MB min, 1000MB max, 1000MB ave",
                          " * Runtime: 0:00:41 min, 1:02:03 max, 0:44:52 ave", " * CPU eff: 51% min, 94% max, 93% ave",
                          " * Waste: 0:40:00 (8% of total)", ""]
    warnings = [line for line in lines if line.startswith("Warning")]
    assert len(warnings) == 2 and "max jobs memory is less than 70% of the task requested value (2500 MB)" in \
        warnings[0] and "max jobs runtime is less than 30% of the task requested value (1250 min)" in warnings[1]
    assert not [line for line in run_summary_lines(twelve(), max_memory_mb=2000) if line.startswith("Warning")]
    slow = [job("1", "finished", attempt("A", 0, 1000), cpu_pct=20.0)]
    assert any("CPU efficiency is less than 50%" in line for line in run_summary_lines(slow))
    assert run_summary_lines([job("1", "unsubmitted")]) == []


def test_run_summary_memory_average_lies_between_its_min_and_max():
    """A job whose peak RSS is 526.7 MB shows 526 in --long's Mem column: the summary's min, max and
    average are of the MB the table shows (crab's ResidentSetSize/1024), not 526, 526 and 527."""
    jobs = [job("1", "finished", attempt("T2_CH_CERN", 0, 6791, memory=526.7, cpu=6400), cpu_pct=94.0)]
    assert table_lines(jobs, NOW)[4].split()[4] == "526"
    assert " * Memory: 526MB min, 526MB max, 526MB ave" in run_summary_lines(jobs)
    two = jobs + [job("2", "finished", attempt("T2_CH_CERN", 0, 6000, memory=600.9, cpu=5000), cpu_pct=83.0)]
    assert " * Memory: 526MB min, 600MB max, 563MB ave" in run_summary_lines(two)


def test_site_table():
    assert site_lines(twelve()) == [
        "Site Summary Table (including retries):", "",
        "Site                    Runtime      Waste    Running Successful   Stageout     Failed",
        "T1_DE_KIT               0:00:00    0:40:41          0          0          0          2",
        "T2_CH_CERN              7:14:21    0:01:40          0          7          0          1",
        "T2_US_MIT               0:11:00    0:12:01          2          0          0          1", ""]
    assert site_lines([job("1", "unsubmitted")]) == ["No SiteHistory retrieved for any job", ""]


def test_sort_listings():
    jobs = twelve()
    assert sort_lines(jobs, "runtime", NOW)[:5] == ["", "Jobs sorted by runtime used:", "Runtime    Job Id",
                                                     "0:00:41      11 ", "0:01:00      9  "]
    memory = sort_lines(jobs, "memory", NOW)
    assert memory[1:3] == ["Jobs sorted by memory used:", "Memory (MB)   Job Id  "]
    assert memory[-3].split() == ["Unknown", "11"]
    assert sort_lines(jobs, "exitcode", NOW)[1:] == [
        "Jobs sorted by exit code:", "", "Exit Code            Job Id(s)           ", "",
        "0                    1, 2, 3, 4, 5, 6, 7", "99                   11",
        "8021                 10, 12", "Unknown              8, 9", ""]
    state = sort_lines(jobs, "state", NOW)
    assert state[1:] == ["Jobs sorted by state:", "", "State                Job Id(s)           ", "", "finished             1, 2, 3, 4, 5, 6, 7", "running              8, 9",
                         "cooloff              10", "failed               11, 12", ""]


def test_jobids_syntax_and_errors():
    assert parse_jobids("1,3-5,3") == ["1", "3", "4", "5"] and parse_jobids("7") == ["7"]
    for bad in ("1, 2", "1-2-3", "a", "1,,2", "-1"):
        with pytest.raises(StatusOptionError, match="takes a comma separated list of integers or ranges"):
            parse_jobids(bad)
    with pytest.raises(StatusOptionError, match="^Parameter --jobids can only be used in combination with --long"):
        check_options(Options(jobids="1"))
    assert check_options(Options(jobids="2-3", sort="cpu")) == ["2", "3"]
    # the CLI says "ERROR: " before it: CRAB's own "Error: " prefix would say it twice
    with pytest.raises(StatusOptionError, match=r"^Only the following values are accepted for --sort option: "
                                                r"\['state', 'site', 'runtime'"):
        check_options(Options(sort="name"))
    info = TaskInfo("t", "/d", "SUBMITTED", scheduler_status="RUNNING")
    with pytest.raises(StatusOptionError, match=r"^The following jobids were not found in the task: \['13', '14'\]$"):
        render(info, twelve(), NOW, Options(long=True, jobids="11-14"))
    lines = render(info, twelve(), NOW, Options(long=True, jobids="2,10-11"))
    table = lines[lines.index("Extended Job Status Table:") + 3:]
    assert [line.split()[0] for line in table[:3]] == ["2", "10", "11"] and table[3] == ""
    assert compress_ids(["1", "2", "3", "5", "7", "8"]) == "1-3,5,7-8"


def test_header_and_the_order_of_the_parts():
    info = TaskInfo("240101_000000:u_crab_x", "/tasks/x", "NEW", command="SUBMIT")
    assert header_lines(info) == [
        "CRAB project directory:\t\t/tasks/x", "Task name:\t\t\t240101_000000:u_crab_x",
        "Status on the CRAB server:\tNEW on command SUBMIT",
        "The task has not been submitted to the Grid scheduler yet. Not printing job information."]
    assert render(info, [], NOW) == header_lines(info)
    failed = TaskInfo("t", "/d", "FAILED", message="DAGMan exited 1", scheduler_status="FAILED",
                      max_memory_mb=2500, max_runtime_min=1250, publication=False)
    lines = render(failed, twelve(), NOW, Options(long=True, summary=True))
    # Only the scheduler says the DAG failed; CRAB's task table keeps a submitted task SUBMITTED.
    assert lines[2:5] == ["Status on the CRAB server:\tSUBMITTED", "Message:\t\t\tDAGMan exited 1",
                          "Status on the scheduler:\tFAILED"]
    publication = lines.index("No publication information (publication has been disabled in the CRAB "
                              "configuration file)")
    assert lines[publication - 1] == ""
    starts = [next(i for i, line in enumerate(lines) if line.startswith(p)) for p in (
        "Jobs status:", "No publication information", "Error Summary:", "Site Summary Table",
        "Extended Job Status Table:", "Summary of run jobs:")]
    assert starts == sorted(starts)
    assert sum(line.startswith("Summary of run jobs:") for line in lines) == 1
    short = render(failed, twelve(), NOW)
    assert "Summary of run jobs:" in short and "Extended Job Status Table:" not in short
    published = render(TaskInfo("t", "/d", "COMPLETED", scheduler_status="COMPLETED", publication=True), [], NOW)
    assert published[2] == "Status on the CRAB server:\tSUBMITTED" and published[-2:] == [
        "", "No publication information (crabtui publishes no output dataset: Data.publication has no effect)"]
    assert header_lines(TaskInfo("t", "/d", "KILLFAILED", scheduler_status="RUNNING"))[2] == \
        "Status on the CRAB server:\tKILLFAILED"


def test_the_error_summary_says_what_a_code_means_for_jobs_that_failed_for_good():
    """No "will retry" for a job that will not be, and a 50664 of the 24 h guard is not said to be a
    removal on the worker node."""
    no_fjr = job("1", "failed", attempt("A", 50115, 60, "fatal", "Job did not produce a FJR; will retry. This is "
                                                                  "job retry number 10. ..."))
    long_run = job("2", "failed", attempt("A", 50664, 90000, "fatal", "Other CMS Exception. Not retrying a long "
                                                                      "running job (job ran for 25.0 hours)."))
    text = "\n".join(error_lines([no_fjr, long_run]))
    assert "will retry" not in text and "killed on the worker node" not in text
    assert "\n1 jobs failed with exit code 50115 (Job did not produce a FJR.)" in text
    assert ("\n1 jobs failed with exit code 50664 (Wall clock time over the limit: removed on the worker node, or "
            "not retried after running longer than allowed.)") in text


# --- the views ------------------------------------------------------------------------------

def closed(i, site, code, action, start, *, epoch=0, reason=""):
    return Attempt(crab_retry=i, dag_retry=i, rrn=i + 1, epoch=epoch, request_memory_mb=2000, max_runtime_min=1250,
                   site=site, exit_code=code, start_time=start, end_time=start + 2, action=action, reason=reason)


def test_job_state():
    done = JobState("1", crab_retry=1, attempts=(closed(0, "A", 0, "ok", NOW),))
    retry = JobState("1", crab_retry=1, cooloff_until=NOW + 60, attempts=(closed(0, "A", 1, "retry", NOW),))
    fatal = JobState("1", crab_retry=1, attempts=(closed(0, "A", 99, "fatal", NOW),))
    running = JobState("1", crab_retry=1, attempts=(closed(0, "A", 1, "retry", NOW),
                                                   Attempt(1, 1, 2, 0, 2000, 1250)))
    assert job_state(JobState("1"), None) == "unsubmitted" and job_state(done, None) == "finished"
    assert job_state(retry, None, NOW) == "cooloff" and job_state(retry, None, NOW + 100) == "cooloff"
    assert job_state(retry, None, dag_active=False) == "killed" and job_state(fatal, None) == "failed"
    assert job_state(JobState("1", crab_retry=1, epoch=1, attempts=fatal.attempts), None) == "unsubmitted"
    assert job_state(running, JobStatus.RUNNING) == "running" and job_state(running, JobStatus.HELD) == "held"
    assert job_state(running, None) == "idle" and job_state(running, None, ran=True) == "transferring"
    assert job_state(running, None, dag_active=False) == "killed"


def make_task(task_dir: Path, scale: float = 10.0) -> None:
    """Three jobs: 1 finished after an 8021 retry, 2 cooling off, 3 failed without a report; 4 never ran."""
    task_dir.mkdir(exist_ok=True)
    (task_dir / "task.json").write_text(json.dumps({"time_scale": scale, "num_cores": 2, "max_memory_mb": 2000,
                                                    "max_runtime_min": 1250}))
    for i in range(1, 5):
        (task_dir / f"job_input.{i}.json").write_text("{}")
    (task_dir / "RunJobs.dag").write_text("JOB Job1 Job.1.submit\n")

    def report(job, retry, code, wall, cpu, rss):
        fjr.write_report(task_dir / f"jobReport.json.{job}.{retry}", fjr.build_report(
            exit_code=code, exit_msg="x", site="A", start=NOW, stop=NOW + 2, inputs=[],
            cpu={"TotalJobTime": wall, "TotalJobCPU": cpu}, memory={"PeakValueRss": rss}))

    report(1, 0, 8021, 100.0, 50.0, 900.0)
    report(1, 1, 0, 300.0, 240.0, 1200.5)
    report(2, 0, 8028, 40.0, 40.0, 700.0)
    save_state(state_path(task_dir, "1"), JobState("1", crab_retry=2, attempts=(
        closed(0, "A", 8021, "retry", NOW - 100, reason=READ), closed(1, "B", 0, "ok", NOW - 50, reason=OK))))
    save_state(state_path(task_dir, "2"), JobState("2", crab_retry=1, cooloff_until=NOW + 90, attempts=(
        closed(0, "C", 8028, "retry", NOW - 20, reason="failed to open"),)))
    save_state(state_path(task_dir, "3"), JobState("3", crab_retry=1, attempts=(
        closed(0, "D", 50660, "fatal", NOW - 10, reason="memory"),)))


def test_task_view_takes_figures_from_the_reports_and_the_attempts(tmp_path):
    make_task(tmp_path)
    view = task_view(str(tmp_path), None, None, now=NOW)
    jobs = {j.id: j for j in view.jobs}
    assert [j.id for j in view.jobs] == ["1", "2", "3", "4"] and view.num_cores == 2
    one = jobs["1"]
    assert (one.state, one.retries, one.site_history, one.exit_code, one.error) == ("finished", 1, ("A", "B"), 0, OK)
    assert (one.runtime_s, one.memory_mb, one.cpu_pct, one.waste_s) == (300.0, 1200.5, 40.0, 100.0)
    assert [a["runtime_s"] for a in one.attempts] == [100.0, 300.0] and one.attempts[0]["reason"] == READ
    assert jobs["2"].state == "cooloff" and jobs["2"].cooloff_until == NOW + 90
    three = jobs["3"]  # no report: the job log's 2 s, times the time scale
    assert (three.state, three.runtime_s, three.memory_mb, three.cpu_pct, three.exit_code) == \
        ("failed", 20.0, None, None, 50660)
    assert (jobs["4"].state, jobs["4"].retries, list(jobs["4"].attempts)) == ("unsubmitted", 0, [])
    as_json = one.as_json()
    assert {"id", "state", "retries", "restarts", "site_history", "exit_code", "attempts", "cooloff_until",
            "runtime_s", "memory_mb", "cpu_pct", "waste_s", "error"} <= set(as_json)
    assert set(as_json["attempts"][0]) >= {"site", "exit_code", "request_memory", "max_runtime", "start", "end",
                                           "action", "reason"}
    assert scheduler_status("FAILED", 7, view) == "FAILED" and scheduler_status("NEW", None, view) is None


class FakeSchedd:
    def __init__(self, ads):
        self.ads = ads

    def query(self, constraint, projection):
        return self.ads


def test_task_view_with_the_queue_and_after_the_dag(tmp_path):
    make_task(tmp_path)
    save_state(state_path(tmp_path, "4"), JobState("4", attempts=(Attempt(0, 0, 1, 0, 2000, 1250),)))
    queue = FakeSchedd([{"ClusterId": 7}, {"ClusterId": 8, "CRAB_Id": "4", "JobStatus": 2,
                                           "MATCH_GLIDEIN_CMSSite": "T2_X", "JobCurrentStartDate": NOW - 30,
                                           "ResidentSetSize": 512000}])
    view = task_view(str(tmp_path), queue, 7, now=NOW)
    four = view.jobs[3]
    assert (four.state, four.site_history, four.runtime_s, four.memory_mb) == ("running", ("T2_X",), 300.0, 500.0)
    assert view.dag_queued and scheduler_status("SUBMITTED", 7, view) == "RUNNING"
    gone = task_view(str(tmp_path), FakeSchedd([]), 7, now=NOW)  # DAGMan removed: in flight and cooloff killed
    assert [j.state for j in gone.jobs] == ["finished", "killed", "failed", "killed"]
    assert scheduler_status("KILLED", 7, gone) == "FAILED"
    fjr.write_report(tmp_path / "jobReport.json.4.0", fjr.minimal_report(1, "x"))
    assert task_view(str(tmp_path), FakeSchedd([{"ClusterId": 7}]), 7, now=NOW).jobs[3].state == "transferring"


def test_the_status_cache_reads_only_what_changed(tmp_path, monkeypatch):
    from engine.crab.ap import retry_policy

    make_task(tmp_path)
    monkeypatch.setattr(crab_status, "RACY_NS", 0)  # trust stamps at once (the test waits past the granularity)
    reads = []
    real_load = retry_policy.load_state
    monkeypatch.setattr(retry_policy, "load_state", lambda path: reads.append(os.path.basename(path)) or real_load(path))
    time.sleep(0.05)
    first = task_view(str(tmp_path), None, None, now=NOW)
    assert sorted(reads) == ["job.1.json", "job.2.json", "job.3.json"]
    assert json.loads((tmp_path / "status_cache.json").read_text())["schema"] == crab_status.CACHE_SCHEMA
    reads.clear()
    again = task_view(str(tmp_path), None, None, now=NOW)
    assert reads == [] and [j.as_json() for j in again.jobs] == [j.as_json() for j in first.jobs]
    save_state(state_path(tmp_path, "2"), JobState("2", crab_retry=1, attempts=(
        closed(0, "C", 8028, "fatal", NOW - 20, reason="no more"),)))
    time.sleep(0.05)
    changed = task_view(str(tmp_path), None, None, now=NOW)
    assert reads == ["job.2.json"] and changed.jobs[1].state == "failed" and changed.jobs[1].error == "no more"
    (tmp_path / "status_cache.json").write_text("{not json")
    reads.clear()
    assert [j.state for j in task_view(str(tmp_path), None, None, now=NOW).jobs] == [j.state for j in changed.jobs]
    assert len(reads) == 3


def test_a_long_lived_reader_keeps_the_cache_in_memory_and_the_unchanged_jobs_views(tmp_path, monkeypatch):
    make_task(tmp_path)
    monkeypatch.setattr(crab_status, "RACY_NS", 0)
    monkeypatch.setattr(crab_status, "_PARSED", {})
    monkeypatch.setattr(crab_status, "_WRITTEN", {})
    time.sleep(0.05)
    first = task_view(str(tmp_path), None, None, now=NOW)
    written = (tmp_path / "status_cache.json").stat().st_ino
    save_state(state_path(tmp_path, "2"), JobState("2", crab_retry=1, attempts=(
        closed(0, "C", 8028, "fatal", NOW - 20, reason="no more"),)))
    time.sleep(0.05)
    changed = task_view(str(tmp_path), None, None, now=NOW)
    assert changed.jobs[1].state == "failed"  # seen at once ...
    assert (tmp_path / "status_cache.json").stat().st_ino == written  # ... though the file waits its turn
    assert changed.jobs[0] is first.jobs[0] and changed.jobs[2] is first.jobs[2] and changed.jobs[1] is not first.jobs[1]
    crab_status._PARSED.clear()  # another process: reads the file, whose stamps say what to read again
    assert [j.as_json() for j in task_view(str(tmp_path), None, None, now=NOW).jobs] == \
        [j.as_json() for j in changed.jobs]
    monkeypatch.setattr(crab_status, "CACHE_WRITE_EVERY_S", 0.0)
    save_state(state_path(tmp_path, "3"), JobState("3", crab_retry=1, attempts=(
        closed(0, "D", 50660, "fatal", NOW - 10, reason="still memory"),)))
    time.sleep(0.05)
    assert task_view(str(tmp_path), None, None, now=NOW).jobs[2].error == "still memory"
    assert (tmp_path / "status_cache.json").stat().st_ino != written  # its turn came: written


def test_attempts_are_read_when_looked_at():
    lazy = Attempts('[["A",0,2000,1250,1.0,2.0,"ok","fine",1.0,null,null]]')
    assert lazy[0]["site"] == "A" and len(lazy) == 1 and lazy == ({**lazy[0]},)
    assert list(Attempts("[]")) == []


# --- the command ----------------------------------------------------------------------------

STATUS_PLAN = '{job = "2", attempt = 1, exitCode = 8021}, {job = "4", attempt = "*", exitCode = 99}'


def test_status_command_prints_crabs_layout(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("layout", plan=STATUS_PLAN))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "layout", tmp_path, "FAILED")
    assert status["scheduler_status"] == "FAILED" and status["task_dir"].startswith(state.path)
    jobs = {j["id"]: j for j in status["jobs"]}
    assert [jobs[i]["state"] for i in "1234"] == ["finished", "finished", "finished", "failed"]
    assert jobs["2"]["retries"] == 1 and jobs["2"]["waste_s"] > 0 and jobs["1"]["runtime_s"] > 0
    assert jobs["4"]["exit_code"] == 99 and jobs["4"]["error"].startswith("Job wrapper finished with exit code 99.")
    # CRAB's status_cache fields, for scripts written against crab status, and the RRN design's counters
    two = jobs["2"]
    assert (two["State"], two["Retries"], two["Restarts"], two["RecordedSite"]) == ("finished", 1, 0, True)
    assert two["SiteHistory"] == two["site_history"] and len(two["WallDurations"]) == 2
    assert all(w > 0 for w in two["WallDurations"]) and len(two["ResidentSetSize"]) == 2
    assert (two["rrn"], two["epoch"], two["crab_retry"]) == (2, 0, 2)
    assert jobs["4"]["Error"][:2] == [99, jobs["4"]["error"]] and "Error" not in jobs["1"]
    assert (status["dbStatus"], status["dagStatus"]) == ("SUBMITTED", "FAILED")
    assert status["jobsPerStatus"] == {"finished": 3, "failed": 1} and ["failed", "4"] in status["jobList"]
    result = crabtui(state, "task", "status", "layout", "--long", "--summary", "--verboseErrors", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"CRAB project directory:\t\t{tmp_path / 'crab_layout'}", f"Task name:\t\t\t{status['name']}"]
    assert "Status on the CRAB server:\tSUBMITTED" in lines and "Status on the scheduler:\tFAILED" in lines
    assert "No publication information (crabtui publishes no output dataset: Data.publication has no effect)" in lines
    assert "Jobs status:                    failed       \t\t 25.0% (1/4)" in lines
    assert "\t\t\t\tfinished     \t\t 75.0% (3/4)" in lines
    assert "1 jobs failed with exit code 99 (unknown, fatal):" in lines
    assert "\t\tJobs: 4" in lines and "Site Summary Table (including retries):" in lines
    header = lines.index("Extended Job Status Table:") + 2
    assert lines[header].split() == ["Job", "State", "Most", "Recent", "Site", "Runtime", "Mem", "(MB)", "CPU", "%",
                                     "Retries", "Restarts", "Waste", "Last", "ExitCode"]
    two = lines[header + 2].split()
    assert two[0:2] == ["2", "finished"] and two[-4:-2] == ["1", "0"] and two[-1] == "0" and two[-2] != "0:00:00"
    four = lines[header + 4].split()
    assert four[:2] == ["4", "failed"] and four[-1] == "99"
    assert "Summary of run jobs:" in lines and any(line.startswith(" * CPU eff: ") for line in lines)
    only = crabtui(state, "task", "status", "layout", "--jobids=2-3", "--sort=exitcode", cwd=tmp_path)
    assert only.returncode == 0 and "Extended Job Status Table:" not in only.stdout
    assert "0                    2, 3" in only.stdout.splitlines()
    # the follow-up hint can be typed as it is: with the --state-dir this command was given
    assert (f"Error Summary: (use crabtui --state-dir {state.path} task status --verboseErrors for details about "
            "the errors)") in only.stdout.splitlines()
    bad = crabtui(state, "task", "status", "layout", "--long", "--jobids=3-9", cwd=tmp_path)
    assert bad.returncode == 1 and "The following jobids were not found in the task: ['5', '6', '7', '8', '9']" \
        in bad.stderr
    assert "can only be used in combination with --long or --sort" in \
        crabtui(state, "task", "status", "layout", "--jobids=1", cwd=tmp_path).stderr


def test_a_failed_attempt_counts_the_wall_time_its_job_ran_as_crab_does(tmp_path, state):
    """A failed job's wrapper runs at least 20 minutes (it sleeps out what its payload left):
    Runtime, WallDurations and Waste count that wall time, not the payload's runtime alone."""
    (tmp_path / "crabConfig.py").write_text(crab_config_py(
        "wall", scale=200, more="config.Debug.failurePlan = [{'job': '2', 'attempt': 1, 'exitCode': 8021}, "
                                "{'job': '3', 'attempt': 1, 'exitCode': 7}]\n"))
    assert crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path).returncode == 0
    status = wait_status(state, "wall", tmp_path, "FAILED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert (jobs["2"]["state"], jobs["3"]["state"]) == ("finished", "failed")
    assert jobs["2"]["WallDurations"][0] >= 20 * 60 and jobs["2"]["waste_s"] >= 20 * 60
    assert jobs["2"]["WallDurations"][1] < 20 * 60, "a successful attempt keeps its payload's runtime"
    assert jobs["3"]["runtime_s"] >= 20 * 60 and jobs["3"]["WallDurations"][0] >= 20 * 60
    lines = crabtui(state, "task", "status", "wall", "--long", cwd=tmp_path).stdout.splitlines()
    header = lines.index("Extended Job Status Table:") + 2
    two, three = lines[header + 2].split(), lines[header + 3].split()
    assert two[:2] == ["2", "finished"] and two[-2] >= "0:20:00", two  # Waste
    assert three[:2] == ["3", "failed"] and three[3] >= "0:20:00", three  # Runtime
    waste = next(line for line in lines if line.startswith(" * Waste: "))
    assert waste.split()[2] >= "0:20:00", waste


def test_a_job_killed_over_its_memory_reads_as_retryjobs_message(tmp_path, state):
    """A job HTCondor kills over its memory fails with 50660 and RetryJob's check_memory_report
    words, which --verboseErrors prints, not the wrapper's report wrapped in 'Job wrapper finished'."""
    (tmp_path / "crabConfig.py").write_text(crab_config_py("overmem", scale=500, more=(
        "config.JobType.maxMemoryMB = 2000\n"
        "config.Debug.failurePlan = [{'job': '2', 'attempt': 1, 'memoryMB': 3000}]\n")))
    assert crabtui(state, "task", "submit", "-c", "crabConfig.py", cwd=tmp_path).returncode == 0
    status = wait_status(state, "overmem", tmp_path, "FAILED")
    (failed,) = [j for j in status["jobs"] if j["state"] == "failed"]
    message = "Job killed by HTCondor due to excessive memory use (3000 used vs. 2000 requested) Will not retry it."
    assert (failed["id"], failed["Error"][:2]) == ("2", [50660, message])
    text = crabtui(state, "task", "status", "-d", "crab_overmem", "--verboseErrors", cwd=tmp_path).stdout
    assert f"\n\t\t{message}\n" in text
