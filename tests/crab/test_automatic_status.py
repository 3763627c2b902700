"""``crabtui task status`` of an automatic task: CRAB's per-stage summaries, relabels, preamble and
throughput lines, error summary and run summary, from fabricated jobs at a fixed time."""

from __future__ import annotations

from crabtui.task_status import (AUTOMATIC_FAQ, Options, TaskInfo, automatic_summary_lines, error_lines,
                                 parse_jobids, render, run_summary_lines, shown_state, sort_lines, table_lines)
from engine.crab.client.status import AutomaticView, JobView, TaskView, scheduler_status

NOW = 1_700_000_000.0
LOG = "/tasks/x/automatic_splitting/predag.0.txt"
AUTO = AutomaticView(minutes=180, throughput=12.5, event_size=5001.0, probes=("0-1", "0-3"), log=LOG)
PREAMBLE = ["", "The job splitting of this task is 'Automatic', please refer to this FAQ for a description of the "
            "jobs status summary:", AUTOMATIC_FAQ]
DETAILS = ["More details of Automatic Splitting process for this task (including possible failures) are in the "
           "Dagman Log files in:", "/tasks/x/automatic_splitting/"]
THROUGHPUT = ["Estimated application throughput from probe jobs :", "  found 3 completed jobs",
              "  average throughput for 2 jobs: 12.50 evt/s", "  average eventsize for 2 jobs: 5001 bytes"]


def job(id, state, runtime=None, code=None, *, cooloff_until=None, memory=1000.0, retries=0):
    ran = runtime is not None
    return JobView(id, state, retries, cooloff_until, ("T2_CH_CERN",) if ran else (),
                   code if code is not None else 0 if state == "finished" else None, (), 0, runtime,
                   memory if ran else None, 90.0 if ran else None, 0.0, f"exit {code}" if code else None)


def stages() -> list[JobView]:
    """Three probes (one failed), four processing jobs (one failed), three tail jobs (one failed for
    good, one cooling off), in CRAB's order."""
    return [job("0-1", "finished", 900.0), job("0-2", "failed", 60.0, 8021), job("0-3", "finished", 880.0),
            job("1", "finished", 7200.0), job("2", "failed", 5000.0, 8021), job("3", "running"), job("4", "idle"),
            job("1-1", "finished", 2700.0), job("1-2", "failed", 300.0, 8028, retries=3),
            job("1-3", "cooloff", 100.0, 8021, cooloff_until=NOW + 299, retries=1)]


def test_long_summary_has_probe_main_and_tail_jobs():
    assert automatic_summary_lines(stages(), NOW, AUTO, long=True) == PREAMBLE + DETAILS + [
        "", "Probe Jobs status:              no output    \t\t100.0% (3/3)",
        *THROUGHPUT,
        "", "Main jobs status:               finished     \t\t 25.0% (1/4)",
        "\t\t\t\tidle         \t\t 25.0% (1/4)",
        "\t\t\t\trescheduled as tail jobs\t\t 25.0% (1/4)",
        "\t\t\t\trunning      \t\t 25.0% (1/4)",
        "", "Tail jobs status:               cooloff      \t\t 33.3% (1/3)\t(next retry in 4:59)",
        "\t\t\t\tfailed       \t\t 33.3% (1/3)",
        "\t\t\t\tfinished     \t\t 33.3% (1/3)"]


def test_short_summary_merges_the_tails_and_drops_the_failed_main_jobs():
    assert automatic_summary_lines(stages(), NOW, AUTO) == PREAMBLE + DETAILS + [
        "", "Probe Jobs status:              no output    \t\t100.0% (3/3)",
        *THROUGHPUT,
        "", "Jobs status:                    cooloff      \t\t 16.7% (1/6)\t(next retry in 4:59)",
        "\t\t\t\tfailed       \t\t 16.7% (1/6)",
        "\t\t\t\tfinished     \t\t 33.3% (2/6)",
        "\t\t\t\tidle         \t\t 16.7% (1/6)",
        "\t\t\t\trunning      \t\t 16.7% (1/6)"]


def test_before_the_tails_failed_main_jobs_are_rescheduled_and_before_the_split_the_probe_log_shows():
    no_tails = [j for j in stages() if not j.id.startswith("1-")]
    assert automatic_summary_lines(no_tails, NOW, AUTO)[-5:] == [
        "", "Jobs status:                    finished     \t\t 25.0% (1/4)",
        "\t\t\t\tidle         \t\t 25.0% (1/4)",
        "\t\t\t\trescheduled as tail jobs\t\t 25.0% (1/4)",
        "\t\t\t\trunning      \t\t 25.0% (1/4)"]
    probing = [job("0-1", "finished", 900.0), job("0-2", "running"), job("0-3", "idle")]
    waiting = AutomaticView(minutes=180, throughput=None, event_size=None, probes=(), log=LOG)
    assert automatic_summary_lines(probing, NOW, waiting) == PREAMBLE + [f"Probe stage log:\t\t{LOG}"] + DETAILS + [
        "", "Probe Jobs status:              idle         \t\t 33.3% (1/3)",
        "\t\t\t\tno output    \t\t 33.3% (1/3)",
        "\t\t\t\trunning      \t\t 33.3% (1/3)",
        "Estimated application throughput from probe jobs is not available yet"]


def test_the_table_shows_ended_probes_as_no_output_and_failed_processing_jobs_as_rescheduled():
    rows = {line.split()[0]: line for line in table_lines(stages(), NOW, automatic=True)[4:]}
    assert rows["0-1"] == " 0-1 no output    T2_CH_CERN              0:15:00      1000    90        0         0    0:00:00              0"
    assert rows["0-2"] == " 0-2 no output    T2_CH_CERN              0:01:00      1000    90        0         0    0:00:00           8021"
    assert rows["2"] == "   2 rescheduled  T2_CH_CERN              1:23:20      1000    90        0         0    0:00:00           8021"
    assert rows["1-2"] == " 1-2 failed       T2_CH_CERN              0:05:00      1000    90        3         0    0:00:00           8028"
    assert rows["1-3"].split()[1:3] == ["cooloff", "4:59"]
    assert table_lines(stages(), NOW)[4 + 1].split()[1] == "failed"  # another splitting: no relabel
    assert [shown_state(j, True) for j in stages()] == [
        "no output", "no output", "no output", "finished", "rescheduled", "running", "idle", "finished", "failed",
        "cooloff"]
    assert sort_lines(stages(), "state", NOW, automatic=True)[4:7] == [
        "", "no output            0-1, 0-2, 0-3", "finished             1, 1-1"]


def test_error_summary_without_long_has_only_the_tail_jobs():
    assert error_lines(stages(), tails_only=True) == [
        "", "Error Summary: (use crabtui task status --verboseErrors for details about the errors)", "",
        " 1 jobs failed with exit code 8028 (Job failed to open local and fallback files.)", "",
        "Have a look at https://twiki.cern.ch/twiki/bin/viewauth/CMSPublic/JobExitCodes for a description of "
        "the exit codes."]
    assert " 3 jobs failed with exit code 8021 (FileReadError (May be a site error).)" not in error_lines(stages())
    assert " 2 jobs failed with exit code 8021 (FileReadError (May be a site error).)" in error_lines(stages())
    assert error_lines([j for j in stages() if j.id != "1-2"], tails_only=True) == []


def test_run_summary_leaves_out_the_probes_and_warns_of_nothing():
    lines = run_summary_lines(stages(), max_memory_mb=2500, max_runtime_min=1250, automatic=True)
    assert lines == ["", "Summary of run jobs:", " * Memory: 1000MB min, 1000MB max, 1000MB ave",
                     " * Runtime: 0:01:40 min, 2:00:00 max, 0:51:00 ave", " * CPU eff: 90% min, 90% max, 90% ave",
                     " * Waste: 0:00:00 (0% of total)", ""]
    assert any(line.startswith("Warning") for line in run_summary_lines(stages(), max_memory_mb=2500,
                                                                         max_runtime_min=1250))


def test_render_puts_the_parts_in_crabs_order_and_takes_tail_ids_in_jobids():
    info = TaskInfo("t", "/tasks/x", "SUBMITTED", scheduler_status="RUNNING", max_runtime_min=1250, automatic=AUTO)
    short = render(info, stages(), NOW)
    assert short[4:7] == PREAMBLE and "Probe Jobs status:              no output    \t\t100.0% (3/3)" in short
    starts = [short.index(line) for line in ("Probe Jobs status:              no output    \t\t100.0% (3/3)",
                                              THROUGHPUT[0], "Error Summary: (use crabtui task status "
                                              "--verboseErrors for details about the errors)", "Summary of run jobs:")]
    assert starts == sorted(starts) and not [line for line in short if line.startswith("Warning")]
    long = render(info, stages(), NOW, Options(long=True, jobids="0-2,1-2,2"))
    assert sum(line.lower().startswith("probe jobs status:") for line in long) == 1, "the probes' summary once"
    table = long[long.index("Extended Job Status Table:") + 3:]
    assert [line.split()[:3] for line in table[:3]] == [["0-2", "no", "output"], ["2", "rescheduled", "T2_CH_CERN"],
                                                         ["1-2", "failed", "T2_CH_CERN"]]
    assert " 3 jobs failed with exit code 8021 (FileReadError (May be a site error).)" not in long
    assert " 2 jobs failed with exit code 8021 (FileReadError (May be a site error).)" in long  # --long: every job
    assert parse_jobids("1-2,0-1,3,3", ranges=False) == ["0-1", "3", "1-2"] and parse_jobids("1-2") == ["1", "2"]


def test_the_scheduler_status_collapses_the_stages():
    def view(jobs):
        return TaskView(jobs, False, 1, None, None, automatic=AUTO)

    # the DAG has ended and the task table does not say how yet: the tail jobs decide
    assert scheduler_status("SUBMITTED", 7, view(stages())) == "FAILED"  # tail job 1-2 failed
    done = [job(j.id, "finished") if j.id in ("3", "4", "1-2", "1-3") else j for j in stages()]
    assert scheduler_status("SUBMITTED", 7, view(done)) == "COMPLETED"  # a failed probe and processing job
    probes = stages()[:3]
    assert scheduler_status("SUBMITTED", 7, view(probes + [job(i, "finished") for i in "1234"])) == "COMPLETED"
    assert scheduler_status("SUBMITTED", 7, view(probes + [job("1", "finished"), job("2", "failed")])) == "FAILED"
    assert scheduler_status("SUBMITTED", 7, view(stages()[:3])) == "FAILED"  # never split
    assert scheduler_status("SUBMITTED", 7, TaskView(done, False, 1, None, None)) == "FAILED"  # not automatic
