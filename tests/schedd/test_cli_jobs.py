"""The job commands of the real ``crabtui`` executable against a real daemon: ``job submit``
(condor_submit), ``q`` (condor_q), ``history`` (condor_history), ``hold``/``release``/``rm``.
Layouts and messages are HTCondor's (condor_q's queue.cpp, condor_rm's rm.cpp, dc_schedd.cpp)."""

from __future__ import annotations

import getpass
import json
import re
import socket

import pytest
from htcondor2 import JobEventType as ET

from schedd_harness import EventReader, read_events, types_for
from engine.schedd.api import JobStatus

USER = getpass.getuser()
DATE = r"[ 1]\d/\d[\d ] \d\d:\d\d"  # condor's QDATE: "%2d/%-2d %02d:%02d"
DURATION = r"\d+\+\d\d:\d\d:\d\d"

POOL = """\
[[site]]
name = "T2_CLI"
slots = 2
"""

# Three jobs that never fit a slot, in a named batch; one cluster that runs (one proc done, one
# running); one job held at submit.
STUCK = "executable = /bin/sleep\narguments = 30\nrequest_memory = 100 TB\nbatch_name = mybatch\nqueue 3\n"
MIXED = "executable = /bin/sleep\narguments = $(secs)\npriority = 5\nlog = mixed.log\nqueue secs in (0, 30)\n"
HELD = "executable = /bin/true\nhold = true\nqueue\n"


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def submit_cli(schedd, name: str, text: str) -> int:
    path = schedd.write(name, text)
    result = schedd.cli("job", "submit", str(path))
    assert result.returncode == 0, result.stderr
    match = re.search(r"^(\d+) job\(s\) submitted to cluster (\d+)\.$", result.stdout, re.MULTILINE)
    assert match, result.stdout
    return int(match.group(2))


def test_submit_queues_every_queue_statement_in_one_cluster_and_warns_as_condor_submit(schedd):
    path = schedd.write("multi.sub", "executable = /bin/echo\narguments = one $(Process)\noutput = mu.$(Process)\n"
                        "queue\narguments = two $(Process)\nqueue 2\n")
    result = schedd.cli("job", "submit", str(path))
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout)[-1] == "3 job(s) submitted to cluster 1."
    assert lines(result.stderr)[0] == "Warning: Use of multiple queue statements in a single submit file is deprecated."
    schedd.wait_history("1.2")
    assert [(schedd.work / f"mu.{p}").read_text() for p in range(3)] == ["one 0\n", "two 1\n", "two 2\n"]


def test_submit_takes_condor_submits_append_batch_name_and_macros(schedd):
    path = schedd.write("opts.sub", "executable = /bin/echo\narguments = $(word)\nrequest_memory = 100\n"
                        "output = opts.out\nqueue\n")
    result = schedd.cli("job", "submit", "-a", "request_memory = 7", "-b", "mybatch", "word=hello", str(path))
    assert result.returncode == 0, result.stderr
    ad = schedd.wait_history("1.0")
    assert (ad["RequestMemory"], ad["JobBatchName"]) == (7, "mybatch")
    assert (schedd.work / "opts.out").read_text() == "hello\n"
    refused = schedd.cli("job", "submit", "-remote", "elsewhere", str(path))
    assert refused.returncode == 1 and lines(refused.stderr) == \
        ["ERROR: -remote: crabtui job submit does not support condor_submit's -remote; --backend htcondor submits to "
         "the schedd of the pool CONDOR_CONFIG names"]
    spool = schedd.cli("job", "submit", "-spool", str(path))  # a pool's (--backend htcondor) option
    assert spool.returncode == 1 and len(lines(spool.stderr)) == 1 and "nothing to spool" in spool.stderr


ITEMS = "executable = /bin/echo\narguments = $(item)\nhold = true\n"


def test_submit_dry_run_to_stdout_prints_the_ads_as_condor_submit_and_queues_nothing(schedd):
    schedd.write("items.sub", ITEMS)
    result = schedd.cli("job", "submit", "-dry-run", "-", "items.sub", "-queue", "in", "a", "b")
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    # condor_submit 23.9.6: the cluster ad, then each proc's ProcId, JobStatus and differences
    assert out[:2] == ["Dry-Run job(s)", "ClusterId=1"] and 'Args="a"' in out and 'Cmd="/bin/echo"' in out
    assert out[out.index("ProcId=0"):] == ["ProcId=0", "JobStatus=5", ".", "ProcId=1", "JobStatus=5", 'Args="b"', ".",
                                           "2 job(s) dry-run to cluster 1."]
    assert schedd.client.query("true") == []


def test_submit_dry_run_to_a_file_prints_a_dot_a_job_and_terse_prints_the_range(schedd):
    schedd.write("items.sub", ITEMS + "queue 3\n")
    result = schedd.cli("job", "submit", "-dry-run", "ads.txt", "items.sub")
    assert (result.returncode, result.stdout) == (0, "Dry-Run job(s)...\n3 job(s) dry-run to cluster 1.\n")
    written = (schedd.work / "ads.txt").read_text().splitlines()
    # to a file, 23.9.6 puts each ad after a blank line, with no '.' (seen on the test pool)
    assert written[:2] == ["", "ClusterId=1"] and written.count("") == 3 and "." not in written
    assert written[written.index("ProcId=0"):] == ["ProcId=0", "JobStatus=5", "", "ProcId=1", "JobStatus=5", "",
                                                   "ProcId=2", "JobStatus=5"]
    terse = schedd.cli("job", "submit", "-terse", "-dry-run", "ads.txt", "items.sub")
    assert (terse.returncode, terse.stdout) == (0, "1.0 - 1.2\n")
    bad = schedd.cli("job", "submit", "-dry-run", "nodir/ads.txt", "items.sub")
    assert bad.returncode == 1 and lines(bad.stderr)[-1].startswith("ERROR: -dry-run nodir/ads.txt: cannot write it")
    assert schedd.client.query("true") == []


def test_submit_queue_from_the_command_line_and_terse_ids(schedd):
    schedd.write("items.sub", ITEMS)
    result = schedd.cli("job", "submit", "-terse", "items.sub", "-queue", "in", "x", "y", "z")
    assert (result.returncode, result.stdout) == (0, "1.0 - 1.2\n"), result.stderr
    ads = sorted(schedd.client.query("ClusterId == 1"), key=lambda ad: ad["ProcId"])
    assert [ad["Args"] for ad in ads] == ["x", "y", "z"]
    counted = schedd.cli("job", "submit", "items.sub", "-q", "2")
    assert lines(counted.stdout)[-1] == "2 job(s) submitted to cluster 2."


def test_submit_queue_takes_the_arguments_up_to_the_next_option_and_append_queue_is_queue(schedd):
    """condor_submit 23.9.6 reads `-queue 2 -terse items.sub` (the statement ends at the next option)
    and, as its manual says, `-a 'queue in (p q)'` as `-queue in (p q)`."""
    schedd.write("items.sub", ITEMS)
    for n, args in enumerate([["-queue", "2", "-terse", "items.sub"], ["-q", "in", "x", "y", "-disable", "-terse",
                                                                       "items.sub"],
                              ["-a", "queue in (p q)", "-terse", "items.sub"],
                              ["-append", "arguments = z", "-append", "queue 2", "-terse", "items.sub"]], start=1):
        result = schedd.cli("job", "submit", *args)
        assert (result.returncode, result.stdout) == (0, f"{n}.0 - {n}.1\n"), (args, result.stderr)
    assert [ad["Args"] for ad in sorted(schedd.client.query("ClusterId >= 2"), key=lambda ad: (ad["ClusterId"],
            ad["ProcId"]))] == ["x", "y", "p", "q", "z", "z"]
    misplaced = schedd.cli("job", "submit", "-queue", "3", "items.sub")
    assert (misplaced.returncode, misplaced.stderr) == (1, "ERROR: -queue 3 items.sub: -queue takes the arguments up to "
                                                           "the next option, so name the submit file before it: crabtui "
                                                           "job submit items.sub -queue 3\n")


def test_submit_queue_refusals_name_the_option(schedd):
    schedd.write("items.sub", ITEMS)
    schedd.write("queued.sub", ITEMS + "queue\n")
    for args, message in [
            (["items.sub", "-queue"], "ERROR: -queue requires at least one argument"),
            (["items.sub", "-q", "-3"], "ERROR: -q requires at least one argument"),
            (["queued.sub", "-queue", "2"], "ERROR: queued.sub: -queue argument conflicts with queue statement in "
                                            "submit file"),
            (["-dry-run"], "ERROR: -dry-run requires a value after it")]:
        result = schedd.cli("job", "submit", *args)
        assert result.returncode == 1 and len(lines(result.stderr)) == 1, (args, result.stderr)
        assert lines(result.stderr)[0].startswith(message), args
    assert schedd.client.query("true") == []


def test_submit_help_is_condor_submits_h_and_help_and_queues_nothing(schedd):
    path = schedd.write("help.sub", "executable = /bin/true\nqueue\n")
    for flag in ("-h", "-help", "--help"):
        shown = schedd.cli("job", "submit", flag, str(path))
        assert shown.returncode == 0 and shown.stdout.startswith("Usage: crabtui job submit"), (flag, shown.stderr)
    assert schedd.client.query("true") == []


def test_submit_of_queue_0_warns_and_succeeds_as_condor_submit(schedd):
    path = schedd.write("none.sub", "executable = /bin/true\nqueue 0\n")
    result = schedd.cli("job", "submit", str(path))
    assert result.returncode == 0, result.stderr
    assert lines(result.stderr) == [f'WARNING: "{path}" has only empty "queue" commands -- no jobs queued']
    assert "submitted to cluster" not in result.stdout and schedd.client.query("true") == []


@pytest.fixture
def queue(schedd):
    """Clusters 1 (stuck, batch 'mybatch'), 2 (proc 0 done, proc 1 running) and, if asked, 3 (held)."""
    schedd.write_pool(POOL)
    assert schedd.submit(STUCK, name="stuck.sub").cluster == 1
    assert schedd.submit(MIXED, name="mixed.sub").cluster == 2
    schedd.wait_history("2.0")
    schedd.wait_running("2.1")
    return schedd


def test_submit_prints_how_many_jobs_went_to_which_cluster(schedd):
    path = schedd.write("three.sub", "executable = /bin/true\nqueue 3\n")
    result = schedd.cli("job", "submit", str(path))
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout)[-1] == "3 job(s) submitted to cluster 1."
    assert result.stdout.startswith("Submitting job(s)")
    again = schedd.cli("job", "submit", str(path))
    assert lines(again.stdout)[-1] == "3 job(s) submitted to cluster 2."
    # a relative path is read from, and resolved against, the directory it is given from
    sub = schedd.work / "sub"
    sub.mkdir()
    (sub / "rel.sub").write_text("executable = /bin/echo\narguments = here\noutput = out.txt\nqueue\n")
    rel = schedd.cli("job", "submit", "rel.sub", cwd=sub)
    assert lines(rel.stdout)[-1] == "1 job(s) submitted to cluster 3."
    schedd.wait_history("3.0")
    assert (sub / "out.txt").read_text() == "here\n"


def test_q_default_batch_layout(queue):
    result = queue.cli("q")
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert re.fullmatch(r"-- Schedd: \S+ : <.+> @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d", out[0])
    assert out[1].split() == ["OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE", "TOTAL", "JOB_IDS"]
    assert re.fullmatch(rf"{USER}\s+mybatch\s+{DATE}\s+_\s+_\s+3\s+3\s+1\.0-2", out[2]), out[2]
    assert re.fullmatch(rf"{USER}\s+ID: 2\s+{DATE}\s+1\s+1\s+_\s+2\s+2\.1", out[3]), out[3]
    assert out[4].startswith("Total for query: 4 jobs; 0 completed, 0 removed, 3 idle, 1 running, 0 held, 0 suspended")

    submit_cli(queue, "held.sub", HELD)
    out = lines(queue.cli("q").stdout)
    assert out[1].split() == ["OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE", "HOLD", "TOTAL", "JOB_IDS"]
    assert re.fullmatch(rf"{USER}\s+ID: 3\s+{DATE}\s+_\s+_\s+_\s+1\s+1\s+3\.0", out[4]), out[4]


def test_q_totals_lines_follow_condor_q(queue):
    """condor_q prints the query's totals, the user's and all users' (queue.cpp standard_summary3);
    the last two count every job in the schedd, not only those the constraint selected."""
    out = lines(queue.cli("q", "-constraint", "ClusterId == 1").stdout)
    counts = "{} jobs; 0 completed, 0 removed, {} idle, {} running, 0 held, 0 suspended"
    assert out[-3:] == [  # the first two end with a space, as condor_q's do
        "Total for query: " + counts.format(3, 3, 0) + " ",
        f"Total for {USER}: " + counts.format(4, 3, 1) + " ",
        "Total for all users: " + counts.format(4, 3, 1),
    ]
    by_id = lines(queue.cli("q", "1").stdout)  # jobs named: not the user's own jobs, so no line for the user
    assert [line.split(":")[0] for line in by_id[-2:]] == ["Total for query", "Total for all users"]


def test_q_nobatch_layout(queue):
    submit_cli(queue, "held.sub", HELD)
    result = queue.cli("q", "-nobatch")
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert out[1].split() == ["ID", "OWNER", "SUBMITTED", "RUN_TIME", "ST", "PRI", "SIZE", "CMD"]
    rows = out[2:7]
    for proc, row in enumerate(rows[:3]):
        assert re.fullmatch(rf"   1\.{proc}   {USER:<14} {DATE}   0\+00:00:00 I  0    0\.0 sleep 30", row), row
    assert re.fullmatch(rf"   2\.1   {USER:<14} {DATE} +{DURATION} R  5 +\d+\.\d sleep 30", rows[3]), rows[3]
    assert re.fullmatch(rf"   3\.0   {USER:<14} {DATE}   0\+00:00:00 H  0    0\.0 true", rows[4]), rows[4]
    assert out[7].startswith("Total for query: 5 jobs; 0 completed, 0 removed, 3 idle, 1 running, 1 held, 0 suspended")


def test_q_constraint_and_job_ids_select_jobs(queue):
    submit_cli(queue, "held.sub", HELD)
    held = lines(queue.cli("q", "-nobatch", "-constraint", "JobStatus == 5").stdout)
    assert [row.split()[0] for row in held[2:] if not row.startswith("Total")] == ["3.0"]
    by_id = lines(queue.cli("q", "-nobatch", "1.1", "2").stdout)
    assert [row.split()[0] for row in by_id[2:] if not row.startswith("Total")] == ["1.1", "2.1"]
    bad = queue.cli("q", "-constraint", "JobStatus ==")
    assert bad.returncode != 0
    assert "JobStatus ==" in bad.stderr


def test_q_limit_shows_the_first_n_jobs_as_condor_q(queue):
    limited = queue.cli("q", "-limit", "2", "-nobatch")
    assert limited.returncode == 0, limited.stderr
    out = lines(limited.stdout)
    assert [row.split()[0] for row in out[2:4]] == ["1.0", "1.1"]
    assert out[4].startswith("Total for query: 2 jobs; 0 completed, 0 removed, 2 idle, 0 running, 0 held")
    assert queue.cli("q", "-lim", "1", "-af", "ClusterId", "ProcId").stdout == "1 0\n"
    for value, message in (("x", "ERROR: Unable to convert (x) to a number for -limit."),
                           ("0", "ERROR: 0 is not a valid for -limit."), ("-3", "ERROR: -3 is not a valid for -limit.")):
        bad = queue.cli("q", "-limit", value)
        assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", message + "\n")


def test_q_submitter_shows_that_users_jobs_under_a_submitter_header(queue):
    host = socket.gethostname()
    for name in (USER, f"{USER}@{host}"):
        shown = queue.cli("q", "-submitter", name, "-nobatch")
        assert shown.returncode == 0, shown.stderr
        out = lines(shown.stdout)
        assert re.fullmatch(rf"-- Submitter: {USER}@{re.escape(host)} : <.*> : crabtui@{re.escape(host)} @ .*", out[0])
        # the collector's submitter name finds the schedd, but its jobs' Owner is the user alone:
        # condor_q 23.9.6 -submitter crab@vm shows none of crab's jobs
        assert [row.split()[0] for row in out[2:-2]] == (["1.0", "1.1", "1.2", "2.1"] if name == USER else [])
        assert "Total for all users: 4 jobs" in shown.stdout and f"Total for {USER}" not in shown.stdout
    unknown = queue.cli("q", "-submitter", "nobody")
    assert (unknown.returncode, unknown.stdout, unknown.stderr) == \
        (1, "", "ERROR: Collector has no record of schedd/submitter\n")
    assert queue.cli("q", "-submitter").stderr == "ERROR: -submitter requires a value after it\n"


def test_q_autoformat(queue):
    result = queue.cli("q", "-af", "ClusterId", "ProcId", "JobBatchName", "JobStatus", "NoSuchAttr")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == [
        "1 0 mybatch 1 undefined", "1 1 mybatch 1 undefined", "1 2 mybatch 1 undefined",
        "2 1 undefined 2 undefined"]


def test_q_autoformat_takes_attributes_as_separate_arguments_like_condor_q(queue):
    """``condor_q -af ClusterId ProcId`` reads attribute names up to the next option
    (queue.cpp parse_autoformat_args): the usual way to write it."""
    result = queue.cli("q", "-af", "ClusterId", "ProcId", "JobStatus")
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == ["1 0 1", "1 1 1", "1 2 1", "2 1 2"]


def test_q_json(queue):
    result = queue.cli("q", "--json")
    assert result.returncode == 0, result.stderr
    ads = json.loads(result.stdout)
    assert [(ad["ClusterId"], ad["ProcId"], ad["JobStatus"]) for ad in ads] == [
        (1, 0, 1), (1, 1, 1), (1, 2, 1), (2, 1, 2)]
    assert all(ad["Cmd"] == "/bin/sleep" and ad["Owner"] == USER for ad in ads)
    assert ads[0]["JobBatchName"] == "mybatch"


def test_history(queue):
    result = queue.cli("history")
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert out[0] == " ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD            "
    assert re.fullmatch(rf"2\.0     {USER:<14} {DATE} (?: {{12}}| *{DURATION}) C  {DATE} /bin/sleep 0   ", out[1]), out[1]
    assert len(out) == 2

    queue.client.act("Remove", "1")
    queue.wait_history("1.2")
    table = lines(queue.cli("history").stdout)
    st = table[0].index(" ST ") + 1
    statuses = {row.split()[0]: row[st] for row in table[1:]}
    never_ran = [row for row in table[1:] if row.startswith("1.")]
    assert len(never_ran) == 3 and all(re.match(rf"1\.\d +{USER} +{DATE} {' ' * 12} X ", row) for row in never_ran), \
        never_ran  # no RUN_TIME, as condor_history's render_hist_runtime shows none under a second
    assert statuses == {"1.0": "X", "1.1": "X", "1.2": "X", "2.0": "C"}
    assert lines(queue.cli("history", "2").stdout)[1].split()[0] == "2.0"
    assert len(lines(queue.cli("history", "-match", "1").stdout)) == 2
    assert lines(queue.cli("history", "2", "-af", "ClusterId", "ProcId", "ExitCode").stdout) == ["2 0 0"]
    ads = json.loads(queue.cli("history", "--json", "-constraint", "JobStatus == 4").stdout)
    assert [(ad["ClusterId"], ad["ProcId"], ad["ExitCode"]) for ad in ads] == [(2, 0, 0)]


def test_history_lists_newest_first(queue):
    """condor_history reads the history file backwards: the job that left the queue last comes
    first, also when several left within the same second."""
    queue.client.act("Remove", "1.1")
    queue.wait_history("1.1")
    queue.client.act("Remove", "1.0")
    queue.wait_history("1.0")
    ids = [row.split()[0] for row in lines(queue.cli("history").stdout)[1:]]
    assert ids == ["1.0", "1.1", "2.0"]
    assert lines(queue.cli("history", "-match", "1").stdout)[1].split()[0] == "1.0"
    # -backwards is the default; -forwards reads from the oldest, as condor_history 23.9.6 does
    assert lines(queue.cli("history", "-backwards", "-af:j", "ProcId").stdout) == ["1.0 0", "1.1 1", "2.0 0"]
    assert lines(queue.cli("history", "-forw", "-limit", "2", "-af:j", "ProcId").stdout) == ["2.0 0", "1.1 1"]


def test_history_since_stops_at_a_job_or_an_expression_as_condor_history(queue):
    queue.client.act("Remove", "1")
    queue.wait_history("1.2")
    every = [row.split()[0] for row in lines(queue.cli("history").stdout)[1:]]
    assert sorted(every) == ["1.0", "1.1", "1.2", "2.0"] and every[-1] == "2.0"
    newer = every[:every.index("1.1")]
    assert [row.split()[0] for row in lines(queue.cli("history", "-since", "1.1").stdout)[1:]] == newer
    # the -since job stops the scan even when the other restrictions leave it out
    assert lines(queue.cli("history", "-since", "2.0", "-af:j", "ProcId", "-constraint", "ProcId == 0").stdout) == \
        (["1.0 0"] if "1.0" in every[:3] else [])
    assert lines(queue.cli("history", "-since", "ClusterId == 2", "-forwards", "-af:j", "ProcId").stdout) == \
        [f"{job} {job[2]}" for job in every[:3][::-1]]
    assert lines(queue.cli("history", "-since", "2", "-limit", "1", "-af:j", "ProcId").stdout) == \
        [f"{every[0]} {every[0][2]}"]
    for value in ("foo ==", "1.x"):
        bad = queue.cli("history", "-since", value)
        assert (bad.returncode, bad.stdout, bad.stderr) == \
            (1, "", f"ERROR: invalid -since constraint: {value}: constraint must be a job-id, or expression.\n")


# Two jobs as a 23.9.6 schedd writes them in its HISTORY file: each ad, then its '***' banner;
# the lines after the last banner are a job still being written.
HISTORY_FILE = """\
ClusterId = 7
ProcId = 0
Owner = "alice"
Cmd = "/bin/true"
QDate = 1700000000
CompletionDate = 1700000060
RemoteWallClockTime = 60.0
JobStatus = 4
ExitCode = 0
*** Offset = 0 ClusterId = 7 ProcId = 0 Owner = "alice" CompletionDate = 1700000060
ClusterId = 8
ProcId = 1
Owner = "bob"
Cmd = "/bin/false"
QDate = 1700000100
CompletionDate = 1700000200
RemoteWallClockTime = 100.0
JobStatus = 4
ExitCode = 1
*** Offset = 200 ClusterId = 8 ProcId = 1 Owner = "bob" CompletionDate = 1700000200
ClusterId = 9
ProcId = 0
"""


def test_history_file_reads_an_htcondor_history_file_newest_first(schedd):
    path = schedd.write("history", HISTORY_FILE)
    assert lines(schedd.cli("history", "-file", str(path), "-af", "ClusterId", "ProcId", "Owner", "ExitCode").stdout) \
        == ["8 1 bob 1", "7 0 alice 0"]
    table = lines(schedd.cli("history", "-file", "history", "alice").stdout)
    assert table[0].startswith(" ID     OWNER") and table[1].split()[:2] == ["7.0", "alice"] and len(table) == 2
    assert lines(schedd.cli("history", "-fi", "history", "-forwards", "-limit", "1", "-af", "ClusterId").stdout) == ["7"]
    assert lines(schedd.cli("history", "-file", "history", "-since", "7.0", "-af", "ClusterId").stdout) == ["8"]
    assert json.loads(schedd.cli("history", "-file", "history", "-json", "-attributes", "ExitCode", "8").stdout) == \
        [{"ExitCode": 1}]
    missing = schedd.cli("history", "-file", "nosuch")
    assert (missing.returncode, missing.stderr) == \
        (1, "ERROR: Error opening history file nosuch: No such file or directory\n")


def test_history_file_job_ids_of_an_ad_without_them_are_blank_as_condor_history_prints_them(schedd):
    """A history file written by hand (or cut) may hold an ad without ClusterId: condor_history
    23.9.6's -af:j prints its id blank, -af:jl drops its "ID = ", -af:jh pads it (checked on the
    test pool); -af:jh ended in a TypeError traceback."""
    schedd.write("history", 'Cmd = "/bin/sleep"\nOwner = "crab"\nJobStatus = 4\nCompletionDate = 1795830000\n'
                 '*** ProcId = 0 Owner = "crab" CompletionDate = 1795830000\n'
                 'ClusterId = 5\nProcId = 0\nCmd = "/bin/true"\nOwner = "crab"\nJobStatus = 4\n'
                 'CompletionDate = 1795830001\n*** ClusterId = 5 ProcId = 0 Owner = "crab" CompletionDate = 1795830001\n')

    def af(options: str) -> list[str]:
        result = schedd.cli("history", "-file", "history", f"-af:{options}", "Cmd")
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    assert af("j") == ["5.0 /bin/true", " /bin/sleep"]
    assert af("jl") == ["ID = 5.0 Cmd = /bin/true", " Cmd = /bin/sleep"]
    assert af("jh") == [" ID      Cmd", "   5.0   /bin/true", "         /bin/sleep"]


def test_history_file_table_leaves_a_missing_id_and_submit_time_blank(schedd):
    """condor_history 23.9.6's default table of ads without QDate, one also without its ids: blank
    ID and SUBMITTED cells (on the test pool), not "0.-1" and "??"."""
    schedd.write("history", 'Cmd = "/bin/sleep"\nOwner = "crab"\nJobStatus = 4\n*** Owner = "crab"\n'
                 'ClusterId = 5\nProcId = 0\nCmd = "/bin/true"\nOwner = "crab"\nJobStatus = 4\n'
                 '*** ClusterId = 5 ProcId = 0 Owner = "crab"\n')
    assert schedd.cli("history", "-file", "history").stdout.splitlines()[1:] == [
        "5.0     crab                                    C              /bin/true      ",
        "        crab                                    C              /bin/sleep     "]


def test_history_file_af_h_columns_keep_their_headings_width_whatever_the_values(schedd):
    """condor_history 23.9.6 -af:jh Cmd Owner: '/bin/true crab ' then '/bin/sleep crab ' (on the
    test pool), each value as long as it is, or padded to its heading; not to the widest value."""
    schedd.write("history", "".join(f'ClusterId = {c}\nProcId = 0\nCmd = "{cmd}"\nOwner = "crab"\nJobStatus = 4\n'
                                    f"CompletionDate = {t}\n*** ClusterId = {c} ProcId = 0 CompletionDate = {t}\n"
                                    for c, cmd, t in ((6, "/bin/sleep", 1795830000), (5, "/bin/true", 1795830001))))
    result = schedd.cli("history", "-file", "history", "-af:jh", "Cmd", "Owner")
    assert result.stdout.splitlines() == [" ID      Cmd Owner", "   5.0   /bin/true crab ", "   6.0   /bin/sleep crab "]


def test_history_cmd_ends_in_a_blank_when_the_arguments_are_empty(schedd):
    """condor_history 23.9.6 prints CMD as Cmd, a blank and the arguments, also when the job has
    ``Arguments = ""`` (what condor_submit stores for a job without arguments): a command longer
    than the column keeps that blank, one without Arguments has none (checked on the test pool)."""
    ads = [HISTORY_FILE.split("***")[0].replace('"/bin/true"', '"/home/alice/analysis/CMSRunAnalysis.sh"'), None]
    ads[1] = ads[0].replace("ClusterId = 7", "ClusterId = 8") + 'Arguments = ""\n'
    schedd.write("history", "".join(f"{ad}*** ClusterId = {7 + i} ProcId = 0\n" for i, ad in enumerate(ads)))
    rows = schedd.cli("history", "-file", "history").stdout.splitlines()[1:]
    assert [row[row.index("/home"):] for row in rows] == [
        "/home/alice/analysis/CMSRunAnalysis.sh ", "/home/alice/analysis/CMSRunAnalysis.sh"]


def test_history_userlog_reads_the_terminated_and_aborted_jobs_of_a_user_log(schedd):
    schedd.write_pool(POOL)
    schedd.write("exits.sub", "executable = /bin/sh\narguments = \"-c 'exit 3'\"\nlog = jobs.log\nqueue\n")
    schedd.write("held.sub", "executable = /bin/true\nhold = true\nlog = jobs.log\nqueue\n")
    assert schedd.cli("job", "submit", "exits.sub").returncode == 0
    schedd.wait_history("1.0")
    assert schedd.cli("job", "submit", "held.sub").returncode == 0
    assert schedd.cli("rm", "2").returncode == 0
    schedd.wait_history("2.0")
    shown = schedd.cli("history", "-userlog", "jobs.log", "-af:j", "Owner", "JobStatus", "LastJobStatus", "ExitCode",
                       "NumJobStarts", "RemoveReason", "UserLog")
    assert lines(shown.stdout) == [f"1.0 {USER} 4 2 3 1 undefined jobs.log",
                                   f"2.0 {USER} 3 1 undefined 0 via condor_rm (by user {USER}) jobs.log"]
    # as submitted, whatever -limit, -since or -forwards say (23.9.6); restrictions choose
    assert lines(schedd.cli("history", "-userlog", "jobs.log", "-limit", "1", "-since", "2.0", "-af",
                            "ClusterId").stdout) == ["1", "2"]
    assert lines(schedd.cli("history", "-userlog", "jobs.log", "2", "-af", "ClusterId").stdout) == ["2"]
    table = lines(schedd.cli("history", "-userlog", "jobs.log", "-constraint", "ExitCode == 3").stdout)
    assert len(table) == 2 and table[1].split()[:2] == ["1.0", USER], table
    assert " C " in table[1] and table[1].rstrip().endswith(" ???"), table  # a log does not name the command
    missing = schedd.cli("history", "-userlog", "nosuch.log")
    assert (missing.returncode, missing.stderr) == (1, "ERROR: Can't open userlog nosuch.log\n")


def test_hold_release_rm(queue):
    hold = queue.cli("hold", "2.1", "-reason", "looking at it")
    assert hold.returncode == 0, hold.stderr
    ad = queue.wait_status("2.1", JobStatus.HELD)
    assert ad["HoldReason"] == f"looking at it (by user {USER})"
    assert ad["HoldReasonCode"] == 1
    log = EventReader(queue.work / "mixed.log")
    assert log.wait_type(ET.JOB_HELD, "2.1")["HoldReason"] == f"looking at it (by user {USER})"

    release = queue.cli("release", "2.1")
    assert release.returncode == 0, release.stderr
    log.wait_type(ET.JOB_RELEASED, "2.1")
    assert queue.wait_running("2.1")["NumJobStarts"] == 2

    rm = queue.cli("rm", "1", "2.1")
    assert rm.returncode == 0, rm.stderr
    for job in ("1.0", "1.1", "1.2", "2.1"):
        assert queue.wait_history(job)["JobStatus"] == JobStatus.REMOVED
    assert queue.client.query() == []
    assert types_for(read_events(queue.work / "mixed.log"), "2.1") == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_HELD, ET.JOB_RELEASED, ET.EXECUTE, ET.JOB_EVICTED,
        ET.JOB_ABORTED]

    submit_cli(queue, "held.sub", HELD)
    by_constraint = queue.cli("rm", "-constraint", "JobStatus == 5")
    assert by_constraint.returncode == 0, by_constraint.stderr
    assert queue.wait_history("3.0")["JobStatus"] == JobStatus.REMOVED


def test_hold_release_rm_messages_are_condors(queue):
    """condor_hold/release/rm print dc_schedd.cpp's per-job results ("Job 2.1 held") and, for a
    cluster, rm.cpp's "All jobs in cluster 1 have been marked for removal"."""
    assert queue.cli("hold", "2.1").stdout == "Job 2.1 held\n"
    assert queue.cli("release", "2.1").stdout == "Job 2.1 released\n"
    assert queue.cli("hold", "1").stdout == "All jobs in cluster 1 have been held\n"
    assert queue.cli("release", "1").stdout == "All jobs in cluster 1 have been released\n"
    assert queue.cli("rm", "2.1").stdout == "Job 2.1 marked for removal\n"
    assert queue.cli("rm", "1").stdout == "All jobs in cluster 1 have been marked for removal\n"
    for tool in ("hold", "release", "rm"):  # nothing matches: condor_hold 23.9.6's line on the test pool, exit 0
        nothing = queue.cli(tool, "99999")
        assert (nothing.returncode, nothing.stdout) == (0, "")
        assert nothing.stderr == f"condor_{tool}:0:There are no jobs in the queue\n"
