"""``job submit``, ``history`` and ``q`` options typed as users type condor_submit, condor_history
and condor_q, with the output the test pool's 23.9.6 tools gave for the same command lines:
a submit file from standard input, -verbose, -dump, -disable, -completedsince, -jsonl, -io and
-goodput."""

from __future__ import annotations

import json
import re
import subprocess
import time

from installed import CRABTUI
from crabtui.commands.jobs import MULTI_QUEUE_WARNING

SLEEP = "executable = /bin/sleep\narguments = 30\n"


def submit_stdin(schedd, text: str, *args: str) -> subprocess.CompletedProcess:
    """``crabtui job submit ... -`` with ``text`` on standard input, from the work directory."""
    return subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "job", "submit", *args, "-"], input=text,
                          cwd=schedd.work, capture_output=True, text=True, timeout=60)


def test_a_submit_file_on_standard_input_is_queued_and_its_ads_printed(schedd):
    result = submit_stdin(schedd, "executable = /bin/true\narguments = $(Process)\nhold = true\nqueue 2\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["", "** Proc 1.0:"], "as 23.9.6: no 'Submitting job(s)', each job's ad instead"
    assert 'Args = "1"' in lines[lines.index("** Proc 1.1:"):]
    assert f'Iwd = "{schedd.work}"' in lines, "relative names are from the directory submitted from"
    assert "submitted to cluster" not in result.stdout
    assert sorted(ad["ProcId"] for ad in schedd.client.query("ClusterId == 1")) == [0, 1]


def test_a_bad_submit_file_on_standard_input_names_its_line(schedd):
    result = submit_stdin(schedd, "executable = /bin/true\nrequest_memory = lots\nqueue\n")
    assert result.returncode == 1
    assert result.stderr.startswith("ERROR: <stdin>:2: request_memory:") and len(result.stderr.splitlines()) == 1
    assert schedd.client.query() == []


def test_terse_stdin_prints_the_ids_only(schedd):
    result = submit_stdin(schedd, "executable = /bin/true\nqueue 3\n", "-terse")
    assert (result.returncode, result.stdout) == (0, "1.0 - 1.2\n")


def test_the_later_of_terse_and_verbose_wins_as_in_condor_submit(schedd):
    """condor_submit -terse -verbose job.sub on the pool printed the ads ("** Proc 1164.0:"), and
    -verbose -terse the range ("1165.0 - 1165.0")."""
    schedd.write("job.sub", "executable = /bin/true\nhold = true\nqueue\n")
    verbose = schedd.cli("job", "submit", "-terse", "-verbose", "job.sub")
    assert verbose.stdout.splitlines()[:2] == ["Submitting job(s)", "** Proc 1.0:"]
    terse = schedd.cli("job", "submit", "-verbose", "-terse", "job.sub")
    assert terse.stdout == "2.0 - 2.0\n"


def test_verbose_prints_each_ad_sorted_and_no_count(schedd):
    schedd.write("job.sub", "executable = /bin/true\nqueue 2\n")
    result = schedd.cli("job", "submit", "-verbose", "job.sub")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["Submitting job(s)", "** Proc 1.0:"]
    first = lines[2:lines.index("")]
    assert [line.split(" = ")[0] for line in first] == sorted((line.split(" = ")[0] for line in first), key=str.lower)
    assert "** Proc 1.1:" in lines and "submitted to cluster" not in result.stdout
    # the ads as submitted, as condor_submit prints them: not as the queue holds them a moment later,
    # when a /bin/true may have started (JobStatus 2) or already left the queue (no Proc 1.1)
    assert [line for line in lines if line.startswith("JobStatus = ")] == ["JobStatus = 1"] * 2


def test_the_dots_count_the_jobs(schedd):
    schedd.write("job.sub", "executable = /bin/true\nqueue 3\n")
    result = schedd.cli("job", "submit", "job.sub")
    assert result.stdout == "Submitting job(s)...\n3 job(s) submitted to cluster 1.\n"


def test_dump_writes_the_ads_and_queues_nothing(schedd):
    schedd.write("job.sub", "executable = /bin/true\narguments = $(Process)\nqueue 3\n")
    result = schedd.cli("job", "submit", "-dump", "ads.txt", "job.sub")
    assert (result.returncode, result.stdout) == (0, "Storing job ClassAd(s)...\n3 job(s) submitted to cluster 1.\n")
    text = (schedd.work / "ads.txt").read_text()
    # as the test pool's condor_submit -dump writes them: each ad after a blank line, no '.'
    assert text.startswith("\nClusterId=1\n") and text.count("\n\n") == 2 and "\n.\n" not in text
    assert text.endswith('\n\nProcId=2\nJobStatus=1\nArgs="2"\n')
    bare = schedd.cli("job", "submit", "-dump", "-", "job.sub")  # the ads alone, and a blank line after them

    def timeless(ads: str) -> str:
        return re.sub(r"(?m)^(QDate|EnteredCurrentStatus)=\d+$", "", ads)

    assert (bare.returncode, timeless(bare.stdout)) == (0, timeless(text) + "\n")
    assert schedd.client.query() == []


def test_dry_run_to_standard_output_puts_no_blank_line_between_clusters(schedd):
    """condor_submit 23.9.6 -dry-run - on the pool: each proc ended by '.', the next cluster's
    ad right after."""
    schedd.write("job.sub", "executable = /bin/true\nqueue\nexecutable = /bin/echo\nqueue\n")
    out = schedd.cli("job", "submit", "-dry-run", "-", "job.sub").stdout.splitlines()
    assert out[0] == "Dry-Run job(s)" and "" not in out
    assert out[out.index("ClusterId=2") - 1] == "."


def test_a_log_in_a_directory_not_there_is_queued_and_the_job_runs_and_disable_is_accepted(schedd):
    """condor_submit 23.9.6 opens no log at submit (SUBMIT_SKIP_FILECHECKS): on the test pool such a
    DAG node's job ran and its DAG exited 0; its log's events are lost, as the schedd's writes lose them."""
    schedd.write("job.sub", "executable = /bin/true\nlog = not-yet-made/job.log\nqueue\n")
    queued = schedd.cli("job", "submit", "-terse", "job.sub")
    assert queued.returncode == 0 and queued.stderr == "", queued.stderr
    assert schedd.wait_history(queued.stdout.split()[0])["ExitCode"] == 0
    assert not (schedd.work / "not-yet-made").exists()
    assert schedd.cli("job", "submit", "-disable", "job.sub").returncode == 0


def test_history_completedsince_and_jsonl(schedd):
    schedd.write("job.sub", "executable = /bin/true\nqueue 2\n")
    assert schedd.cli("job", "submit", "job.sub").returncode == 0
    schedd.wait_history("1.0")
    schedd.wait_history("1.1")
    since = int(time.time()) - 3600
    recent = schedd.cli("history", "-completedsince", str(since), "-af", "ClusterId", "ProcId")
    assert sorted(recent.stdout.splitlines()) == ["1 0", "1 1"], recent.stderr
    # 23.9.6 stops at the first job with CompletionDate <= TIME, newest first
    assert schedd.cli("history", "-completedsince", "CompletionDate", "-af", "ClusterId").stdout == ""
    lines = schedd.cli("history", "-jsonl", "-attributes", "ClusterId,ProcId").stdout.splitlines()
    assert sorted(json.dumps(json.loads(line), sort_keys=True) for line in lines) == [
        '{"ClusterId": 1, "ProcId": 0}', '{"ClusterId": 1, "ProcId": 1}']
    bad = schedd.cli("history", "-completedsince", "(")
    assert bad.returncode == 1 and "'(' not valid parameter for -completedsince" in bad.stderr


def test_q_goodput_and_io(schedd):
    schedd.submit(SLEEP + "queue\n")
    schedd.wait_running("1.0")
    goodput = schedd.cli("q", "-goodput").stdout.splitlines()
    assert goodput[3] == " ID      OWNER            SUBMITTED     RUN_TIME GOODPUT  CPU_UTIL  Mb/s   "
    assert goodput[4].startswith("   1.0   ") and goodput[4].endswith(" [??????] [???????] [?????]")
    assert len(goodput) == 5, "the goodput print format has no totals"
    io = schedd.cli("q", "-io").stdout.splitlines()
    assert io[3] == " ID      OWNER          RUNS ST  INPUT  OUTPUT  RATE      MISC"
    assert io[5].startswith("Total for query: 0 jobs;"), "only jobs moving files; the embedded schedd moves none"
    assert io[7].startswith("Total for all users: 1 jobs;")


def test_a_new_executable_between_queue_statements_starts_a_new_cluster(schedd):
    schedd.write("job.sub", """executable = /bin/true
arguments = a
queue
arguments = b
queue 2
executable = /bin/echo
queue
""")
    result = schedd.cli("job", "submit", "job.sub")
    assert result.stdout == ("Submitting job(s)....\n3 job(s) submitted to cluster 1.\n"
                             "1 job(s) submitted to cluster 2.\n"), result.stderr
    assert "multiple queue statements" in result.stderr
    for job in ("1.0", "1.1", "1.2", "2.0"):
        schedd.wait_history(job)
    assert sorted((ad["ClusterId"], ad["ProcId"], ad["Cmd"]) for ad in schedd.client.history()) == [
        (1, 0, "/bin/true"), (1, 1, "/bin/true"), (1, 2, "/bin/true"), (2, 0, "/bin/echo")]
    terse = schedd.cli("job", "submit", "-dry-run", "ads.txt", "-terse", "job.sub")
    assert terse.stdout == "1.0 - 1.2\n2.0 - 2.0\n"


def test_one_bad_cluster_queues_none(schedd):
    schedd.write("job.sub", "executable = /bin/true\nqueue\nexecutable = /nonexistent/prog\nqueue\n")
    result = schedd.cli("job", "submit", "job.sub")
    assert result.returncode == 1 and "/nonexistent/prog" in result.stderr
    assert schedd.client.query() == [] and schedd.client.history() == []


def test_hold_takes_an_expression_and_refuses_yes_as_condor_submit_does(schedd):
    """``hold = $(Process) == 1`` held every job or none; the test pool's condor_submit holds
    proc 1 only, takes ``hold = 2`` as true and refuses ``hold = yes``."""
    schedd.write("held.sub", "executable = /bin/sleep\narguments = 30\nhold = $(Process) == 1\nqueue 3\n")
    result = schedd.cli("job", "submit", "held.sub")
    assert result.returncode == 0, result.stderr
    statuses = {ad["ProcId"]: ad["JobStatus"] for ad in schedd.client.query("ClusterId == 1", ["ProcId", "JobStatus"])}
    assert statuses[1] == 5 and statuses[0] != 5 and statuses[2] != 5, statuses
    assert schedd.cli("rm", "1").returncode == 0
    result = submit_stdin(schedd, "executable = /bin/true\nhold = 2\nqueue\n", "-dry-run", "-")
    assert "JobStatus=5" in result.stdout.split(), result.stdout
    queued = len(schedd.client.query())
    result = submit_stdin(schedd, "executable = /bin/true\nhold = yes\nqueue\n")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("ERROR: <stdin>:2: hold = yes is invalid: it must evaluate to a boolean"), result.stderr
    assert len(schedd.client.query()) == queued, "nothing queued"


def test_dry_run_and_verbose_print_values_in_the_old_syntax_as_condor_submit(schedd):
    """The test pool's condor_submit -dry-run printed these lines for this file: backslashes
    as written, and =?= rather than the new syntax's ``is``."""
    schedd.write("bs.sub", r"""executable = /bin/true
My.Pattern = "a\.b\d\n"
requirements = regexp("\.example\.org$", Machine)
max_retries = 2
queue
""")
    result = schedd.cli("job", "submit", "-dry-run", "-", "bs.sub")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert r'Pattern="a\.b\d\n"' in lines
    assert r'Requirements=regexp("\.example\.org$",Machine)' in lines
    assert "OnExitRemove=NumJobCompletions > JobMaxRetries || ExitCode =?= 0" in lines
    verbose = submit_stdin(schedd, (schedd.work / "bs.sub").read_text().replace("queue", "hold = true\nqueue"))
    assert r'Pattern = "a\.b\d\n"' in verbose.stdout.splitlines(), verbose.stdout


def test_requirements_on_the_slots_memory_or_disk_warn_as_condor_submit(schedd):
    """The manual's `requirements = (TARGET.OpSys == "LINUX") && (TARGET.Memory > 100)` is queued
    with condor_submit 23.9.6's warning on stderr, once (its capitals as it writes them); Disk's
    comes first."""
    memory = ("WARNING: your Requirements expression refers to TARGET.Memory. This is obsolete. Set request_memory "
              "and condor_submit will modify the Requirements expression as needed.")
    disk = ("WARNING: Your Requirements expression refers to TARGET.Disk. This is obsolete. Set request_disk and "
            "condor_submit will modify the Requirements expression as needed.")
    manual = 'executable = /bin/true\nhold = true\nrequirements = (TARGET.OpSys == "LINUX") && (TARGET.Memory > 100)\n'
    result = submit_stdin(schedd, manual + "queue 2\n", "-terse")
    assert (result.returncode, result.stdout, result.stderr) == (0, "1.0 - 1.1\n", memory + "\n")
    both = submit_stdin(schedd, "executable = /bin/true\nhold = true\nrequirements = Memory > 1 && Disk > 1\nqueue\n",
                        "-terse")
    assert both.stderr.splitlines() == [disk, memory]
    plain = submit_stdin(schedd, 'executable = /bin/true\nhold = true\nrequirements = TARGET.OpSys == "LINUX"\nqueue\n',
                         "-terse")
    assert (plain.returncode, plain.stderr) == (0, "")


def test_submit_warnings_come_where_condor_submit_writes_them(schedd):
    """On a terminal (one stream) condor_submit 23.9.6 writes the multi-queue warning on its own
    lines after the dots and the Requirements warning after the count, not inside `Submitting job(s)`."""
    schedd.write("mq.sub", "executable = /bin/true\nrequirements = (Memory > 99999999)\nhold = true\nqueue\n"
                           "arguments = x\nqueue\n")
    result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "job", "submit", "mq.sub"], cwd=schedd.work,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    warning = ("WARNING: your Requirements expression refers to TARGET.Memory. This is obsolete. Set request_memory "
               "and condor_submit will modify the Requirements expression as needed.")
    assert result.stdout.splitlines() == ["Submitting job(s)..", *MULTI_QUEUE_WARNING.splitlines(), "",
                                          "2 job(s) submitted to cluster 1.", warning], result.stdout


UNUSED = """\
# a typo and a leftover, as users write them
executable = /bin/echo
arguments = $(greeting) $Fn(data)
greeting = hello
data = /data/run1.root
+MyTag = "$(tag)"
MY.Site = "T2_CH_CERN"
tag = run7
if defined debug
  environment = "DEBUG=1"
endif
debug = 1
verbose = 1
if defined verbose
  batch_name = $(greeting)-v
endif
n = 3
memory = 2000
prefix = $(Suffix)
suffix = x
hold = true
queue
"""
# what condor_submit 23.9.6 wrote on the test pool for the same file: by name, last first
UNUSED_WARNINGS = ["WARNING: the line 'suffix = x' was unused by condor_submit. Is it a typo?",
                   "WARNING: the line 'prefix = $(Suffix)' was unused by condor_submit. Is it a typo?",
                   "WARNING: the line 'n = 3' was unused by condor_submit. Is it a typo?",
                   "WARNING: the line 'memory = 2000' was unused by condor_submit. Is it a typo?",
                   "WARNING: the line 'debug = 1' was unused by condor_submit. Is it a typo?"]


def test_a_line_nothing_used_is_warned_of_as_condor_submit_does(schedd):
    """Macros a used line refers to ($(greeting), $Fn(data), in +MyTag, `if defined` below their
    line) are used; `+Attr` and `MY.Attr` set attributes; a macro only an unused line refers to is
    unused too, as is one an `if` above it tested."""
    schedd.write("job.sub", UNUSED)
    result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "job", "submit", "job.sub"], cwd=schedd.work,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == ["Submitting job(s).", "1 job(s) submitted to cluster 1.", *UNUSED_WARNINGS]
    terse = schedd.cli("job", "submit", "-terse", "job.sub", "extra=1", "-a", "batch_name = b")
    assert (terse.stdout, terse.stderr.splitlines()) == (
        "2.0 - 2.0\n", [*UNUSED_WARNINGS[:4], "WARNING: the line 'extra = 1' was unused by condor_submit. Is it a typo?",
                        UNUSED_WARNINGS[4]])
    dry = schedd.cli("job", "submit", "-dry-run", "ads.txt", "job.sub")  # 23.9.6 warns of a dry run too
    assert (dry.stdout, dry.stderr.splitlines()) == ("Dry-Run job(s).\n1 job(s) dry-run to cluster 1.\n", UNUSED_WARNINGS)
    clean = submit_stdin(schedd, "executable = /bin/true\nhold = true\nn = 3\nqueue $(n)\n", "-terse")
    assert (clean.returncode, clean.stderr) == (0, "")


def test_the_standard_universe_commands_condor_submit_still_reads_are_not_warned_of(schedd):
    """condor_submit 23.9.6 on the test pool: want_io_proxy, buffer_size, file_remaps ... of a
    vanilla job pass silently; grid_resource and rendezvousdir, for the grid and parallel
    universes, are warned of."""
    text = ("executable = /bin/true\nhold = true\nwant_io_proxy = true\nbuffer_size = 100\nbuffer_block_size = 10\n"
            "buffer_files = a\nappend_files = a\ncompress_files = a\nfetch_files = a\nlocal_files = a\n"
            "file_remaps = a\ngrid_resource = batch slurm\nrendezvousdir = /tmp\nqueue\n")
    result = submit_stdin(schedd, text, "-terse")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "WARNING: the line 'rendezvousdir = /tmp' was unused by condor_submit. Is it a typo?",
        "WARNING: the line 'grid_resource = batch slurm' was unused by condor_submit. Is it a typo?"]


def test_a_queue_variable_nothing_uses_is_warned_of_as_condor_submit_does(schedd):
    """condor_submit 23.9.6 on the test pool, for this file: the Queue variable's warning sorts
    with the lines', by name, last first."""
    text = ("executable = /bin/true\nhold = true\narguments = $(used)\nzz = $(undefinedthing)\nyy = 2\n"
            "queue Name, used from (\n  a, b\n  c, d\n)\n")
    result = submit_stdin(schedd, text, "-terse")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "WARNING: the line 'zz = $(undefinedthing)' was unused by condor_submit. Is it a typo?",
        "WARNING: the line 'yy = 2' was unused by condor_submit. Is it a typo?",
        "WARNING: the Queue variable 'Name' was unused by condor_submit. Is it a typo?"]


def test_a_queue_variable_named_as_a_command_is_used_and_not_warned_of(schedd):
    """CERN batch docs' `queue arguments from FILE`: the variable sets the command; condor_submit
    23.9.6 on the test pool queues one job a line and warns of nothing."""
    schedd.write("files.txt", "a.root\nb.root\n")
    result = submit_stdin(schedd, "executable = /bin/true\nhold = true\nqueue arguments from files.txt\n", "-terse")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert re.fullmatch(r"(\d+)\.0 - \1\.1\n", result.stdout), result.stdout
