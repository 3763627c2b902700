"""``q``, ``hold``, ``release``, ``rm``, ``qedit`` and ``dag submit`` on the embedded engine, typed as
HTCondor users type condor_q, condor_hold, condor_release, condor_rm, condor_qedit and condor_submit_dag:
their options, their layouts, their messages and exit codes.  tests/htcondor/test_condor_tools.py
runs the same commands against the real tools on the test pool."""

from __future__ import annotations

import getpass
import json
import re
import socket

import pytest

from schedd_harness import wait_for
from crabtui import queue_format
from engine.schedd.api import JobStatus

USER = getpass.getuser()
HELD = "executable = /bin/sleep\narguments = 300\nhold = true\n"


def out_lines(result) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line.strip()]


def job_ids(result) -> list[str]:
    """The job ids a -nobatch or -dag table lists, in its order."""
    return [line.split()[0] for line in out_lines(result) if re.match(r" *\d+\.\d+ ", line)]


@pytest.fixture
def held(schedd):
    """Eleven held clusters (ids past 9 sort wrongly as text), cluster 3 with three procs."""
    for cluster in range(1, 12):
        count = 3 if cluster == 3 else 1
        extra = "batch_name = three\n" if cluster == 3 else ""
        assert schedd.submit(HELD + extra + f"queue {count}\n", name=f"c{cluster}.sub").cluster == cluster
    return schedd


def test_q_lists_jobs_in_job_id_order(held):
    expected = ["1.0", "2.0", "3.0", "3.1", "3.2"] + [f"{c}.0" for c in range(4, 12)]
    assert job_ids(held.cli("q", "-nobatch")) == expected
    assert out_lines(held.cli("q", "-af:j", "Owner"))[:6] == [f"{job} {USER}" for job in expected[:6]]
    batch = out_lines(held.cli("q"))
    assert [line.split()[1] for line in batch[2:-3]] == ["ID:", "ID:", "three", "ID:", "ID:", "ID:", "ID:", "ID:",
                                                       "ID:", "ID:", "ID:"]
    assert batch[4].split()[-1] == "3.0-2", "one line for the batch, its job id range last"


def test_single_dash_options_are_read_as_condor_q_reads_them(held):
    full = held.cli("q", "-nobatch", "-constraint", "ClusterId == 3").stdout
    for spelling in (["-nob", "-cons", "ClusterId == 3"], ["--nobatch", "--constraint", "ClusterId == 3"],
                     ["-nobatch", "-c", "ClusterId == 3"]):
        again = held.cli("q", *spelling)
        assert again.returncode == 0 and _timeless(again.stdout) == _timeless(full), spelling
    assert "HELD_SINCE  HOLD_REASON" in held.cli("q", "-ho", "3").stdout, "-ho is -hold"
    assert "Usage:" in held.cli("q", "-h").stdout, "-h is -help, as in condor_q"
    for argv, message in ((["-nobat"], None), (["--nob"], "unrecognized argument --nob"),
                          (["-autoc"], "does not support condor_q's -autocluster"), (["-zzz"], "unrecognized argument -zzz"),
                          (["-cputime"], "does not support condor_q's -cputime"),
                          (["-better-analyze:summary"], "does not support condor_q's -better-analyze:summary"),
                          (["-analyze:reverse", "3.0"], "does not support condor_q's -analyze:reverse"),
                          # 23.9.6's lines are not the same with it: in the schedd's order, not sorted
                          (["-stream-results", "-nobatch"], "crabtui q lists the jobs in job id order"),
                          (["-af"], "-af requires at least one attribute"), (["-run", "-hold"], "incompatible")):
        result = held.cli("q", *argv)
        if message is None:
            assert result.returncode == 0, result.stderr
            continue
        assert result.returncode == 1 and result.stdout == "", argv
        assert result.stderr.count("\n") == 1 and message in result.stderr, (argv, result.stderr)


def test_a_refused_option_says_what_to_type_instead_and_that_works(held):
    """condor_q -cputime, -hold-codes, -userlog, condor_rm -long: one line naming a crabtui command
    that shows the same, which runs as written."""
    held.write("job.log", "")
    for tool, argv in (("q", ["-cputime"]), ("q", ["-hold-codes"]), ("q", ["-userlog", "job.log"]),
                       ("q", ["-slotads", "slots.ads"]), ("rm", ["-long", "3"]), ("hold", ["-vers"])):
        result = held.cli(tool, *argv)
        assert result.returncode == 1 and result.stderr.count("\n") == 1, (argv, result.stderr)
        instead = re.search(r"; (crabtui [^;]*?) (lists|shows|matches)|; (crabtui --version)$", result.stderr.strip())
        assert instead, (argv, result.stderr)
        words = (instead.group(1) or instead.group(3)).replace("JOB", "3.0").replace("FILE", "job.log").split()[1:]
        assert held.cli(*words).returncode == 0, words


def _timeless(text: str) -> str:
    return re.sub(r"@ [\d/]+ [\d:]+", "@", text)


def test_restrictions_as_condor_q_has_them(held):
    assert job_ids(held.cli("q", "-nobatch", "3.1", "11")) == ["3.1", "11.0"]
    assert job_ids(held.cli("q", "-nobatch", USER, "-constraint", "ClusterId > 9")) == ["10.0", "11.0"]
    assert job_ids(held.cli("q", "-nobatch", "nobody")) == []
    held.cli("release", "2")
    wait_for(lambda: held.job("2.0")["JobStatus"] in (JobStatus.IDLE, JobStatus.RUNNING), "2.0 released")
    assert job_ids(held.cli("q", "-hold", "-allusers"))[:2] == ["1.0", "3.0"]
    assert "2.0" not in job_ids(held.cli("q", "-hold"))
    idle_or_run = job_ids(held.cli("q", "-idle")) + job_ids(held.cli("q", "-run"))
    assert idle_or_run == ["2.0"]


def test_layouts_of_run_hold_idle_and_totals(held):
    hold = out_lines(held.cli("q", "-hold", "1"))
    assert hold[1] == " ID      OWNER          HELD_SINCE  HOLD_REASON"
    assert re.fullmatch(rf"   1\.0   {USER:<14} [ \d/:]{{11}} submitted on hold at user's request", hold[2])
    assert hold[-2].startswith("Total for query: 1 jobs;"), "jobs named: no line for the user's own"
    idle = out_lines(held.cli("q", "-idle", "-allusers"))
    assert idle[1] == " ID      OWNER          UNIVERSE  CPUS MEMORY STARTS LAST_HOST" and len(idle) == 2, \
        "-idle has no totals"
    run = out_lines(held.cli("q", "-run"))
    assert run[1] == " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)" and len(run) == 2
    totals = out_lines(held.cli("q", "-totals"))
    assert len(totals) == 4 and totals[0].startswith("-- Schedd: ")
    assert totals[1] == "Total for query: 13 jobs; 0 completed, 0 removed, 0 idle, 0 running, 13 held, 0 suspended "
    assert totals[2] == f"Total for {USER}: 13 jobs; 0 completed, 0 removed, 0 idle, 0 running, 13 held, 0 suspended "
    cut = held.cli("q", "-nobatch", "-wide:40", "1").stdout.splitlines()
    assert cut[3] == " ID      OWNER            SUBMITTED     RU"[:39] and len(cut[4]) == 39


def test_cumulative_time_counts_every_run_of_a_held_job(held):
    """-nobatch's RUN_TIME of a held job is its last run's; -cumulative-time's all runs' (the
    attribute behind it is fetched only for that option)."""
    assert held.cli("qedit", "1", "RemoteWallClockTime", "90061.0", "LastRemoteWallClockTime", "61.0").returncode == 0
    assert out_lines(held.cli("q", "-nobatch", "1"))[2].split()[4] == "0+00:01:01"
    assert out_lines(held.cli("q", "-nobatch", "-cumulative-time", "1"))[2].split()[4] == "1+01:01:01"
    assert out_lines(held.cli("q", "-nobatch", "-cumulative-time", "-currentrun", "1"))[2].split()[4] == "0+00:01:01"


def test_af_evaluates_expressions_with_condor_qs_options(held):
    assert out_lines(held.cli("q", "1", "-af", "RemoteUserCpu/60", 'strcat(Owner, "x")', "NoSuch", "ProcId + 1")) == \
        [f"0.0 {USER}x undefined 1"]
    assert out_lines(held.cli("q", "3.1", "-af:jV", "Owner", "JobPrio")) == [f'3.1 "{USER}" 0']
    assert out_lines(held.cli("q", "3.1", "-af:l", "Owner", "ProcId")) == [f"Owner = {USER} ProcId = 1"]
    assert out_lines(held.cli("q", "3.1", "-af:t,", "Owner", "ProcId")) == [f"{USER},\t1"]
    assert out_lines(held.cli("q", "3.1", "-af:r", "Cmd", "ProcId == 1")) == ['"/bin/sleep" ProcId == 1']
    assert held.cli("q", "3.1", "-af:lrng", "ProcId", "Owner").stdout == f'\nProcId = 1\nOwner = "{USER}"\n'
    headed = held.cli("q", "3", "-af:jh", "ProcId", "Owner").stdout.splitlines()
    owner_width = max(5, len(USER))
    assert headed[0] == f"{' ID':<8} ProcId {'Owner':<{owner_width}}"
    assert headed[1:] == [f"   3.{p}   {p:<6} {USER:<{owner_width}}" for p in range(3)]
    none = held.cli("q", "-af:jh", "ClusterId", "JobStatus", "-constraint", "JobStatus == 4").stdout
    assert none == " ID      ClusterId JobStatus\n", "the test pool's condor_q heads no job so too"
    printed = held.cli("q", "3", "-format", "%d.", "ClusterId", "-format", "%d|", "ProcId", "-format", "%s\\n",
                       "Owner", "-format", "[%d]", "Owner").stdout
    assert printed == "".join(f"3.{p}|{USER}\n" for p in range(3)), "%d of a string prints nothing"
    mixed = held.cli("q", "3", "-format", "%d.", "ClusterId", "-af", "ProcId", "-format", "[%s]", "Owner").stdout
    assert mixed == "".join(f"3. {p} [{USER}]\n" for p in range(3)), "the pool's condor_q prints -format on -af's line"
    bad = held.cli("q", "-af", "Owner ==")
    assert bad.returncode == 1 and "'Owner ==' is not a ClassAd expression" in bad.stderr


def test_a_later_af_h_heads_only_its_own_columns_as_condor_q_does(held):
    """condor_q 23.9.6 on the test pool: `-af ClusterId -af:h User Owner` printed `User Owner  `
    over `1968 crab@vm crab ` (its headings laid out from the first column on), and
    `-af:h ClusterId -af:j User` headed the later columns ` ID` and `(expr)`, the id between."""
    assert held.cli("q", "3", "-af", "ProcId", "-af:h", "Cmd", "JobPrio").stdout.splitlines() == \
        ["Cmd JobPrio   ", *[f"{p} /bin/sleep 0      " for p in range(3)]]
    assert held.cli("q", "3.1", "-af:h", "ProcId", "-af:j", "Cmd").stdout.splitlines() == \
        ["ProcId  ID      (expr)    ", "1         3.1   /bin/sleep"]
    assert held.cli("q", "3.1", "-af", "ProcId", "-af:j", "Cmd").stdout == "1 3.1 /bin/sleep\n"


def test_af_h_with_wide_leaves_each_jobs_last_value_unpadded_as_condor_q(held):
    """condor_q 23.9.6 on the test pool: `-af:h ProcId Cmd -wide` pads its heading line but not a
    job's last value; `-wide:40`, and no -wide, pad it as they pad the others."""
    assert held.cli("q", "3.1", "-af:h", "Cmd", "ProcId", "-wide").stdout.splitlines() == \
        ["Cmd        ProcId", "/bin/sleep 1"]
    assert held.cli("q", "3.1", "-wide", "-af:hj", "ProcId").stdout.splitlines() == [" ID      ProcId", "   3.1   1"]
    for wide in (["-wide:40"], []):
        assert held.cli("q", "3.1", "-af:h", "Cmd", "ProcId", *wide).stdout.splitlines() == \
            ["Cmd        ProcId", "/bin/sleep 1     "], wide


def test_totals_with_long_or_af_show_the_schedds_summary_ad_as_condor_q(held):
    """condor_q 23.9.6 -totals -long (-json, -xml) prints the schedd's summary ad, and an -af or
    -format after -totals formats it (its line, then a newline); an -af before -totals is dropped
    for the totals."""
    text = held.cli("q", "3", "-totals", "-long", "-attributes", "Jobs").stdout
    assert {"Jobs = 3", "Held = 3", "Idle = 0", "SchedulerJobs = 0", "AllusersJobs = 13", 'MyType = "Summary"',
            "ErrorCode = 0"} <= set(text.splitlines()) and "ClusterId" not in text, text
    assert held.cli("q", "3", "-totals", "-af", "Jobs", "Held", "AllusersJobs").stdout == "3 3 13\n\n"
    assert held.cli("q", "-totals", "-af:h", "MyJobs", "MyName").stdout == f"MyJobs MyName\n13     {USER:<6}\n\n"
    assert held.cli("q", "3", "-totals", "-format", "%d jobs\\n", "Jobs").stdout == "3 jobs\n\n"
    after = held.cli("q", "3", "-af", "ClusterId", "-totals").stdout
    assert "Total for query: 3 jobs; 0 completed, 0 removed, 0 idle, 0 running, 3 held, 0 suspended" in after


def test_jobs_have_the_user_the_schedd_names_them_by(held):
    """The pool's schedd sets `User = "crab@vm"` (Owner@UID_DOMAIN, its host) on each job queued,
    and scripts select on it as condor_q's manual does."""
    user = f"{USER}@{socket.gethostname()}"
    assert out_lines(held.cli("q", "3", "-af", "ProcId", "User")) == [f"{p} {user}" for p in range(3)]
    assert out_lines(held.cli("q", "-const", f'User == "{user}" && ClusterId == 3', "-af", "ProcId")) == ["0", "1", "2"]
    assert held.cli("q", "-const", 'User == "alice@cern.ch"', "-af", "ProcId").stdout == ""


def test_af_h_widens_a_column_by_an_undefined_value_from_its_row_on(held):
    """condor_q 23.9.6 on the test pool: `-af:h ProcId Xy ProcId` over jobs where Xy is "cd",
    undefined, "ab": the values measure the column, then the rows print in order, and the
    "undefined" widens it for the rows after it only."""
    assert held.cli("qedit", "3.0", "Xy", '"cd"').returncode == 0
    assert held.cli("qedit", "3.2", "Xy", '"ab"').returncode == 0
    assert held.cli("q", "3", "-af:h", "ProcId", "Xy", "ProcId").stdout.splitlines() == [
        "ProcId Xy ProcId", "0      cd 0     ", "1      undefined 1     ", "2      ab        2     "]


def test_long_and_attributes(held):
    text = held.cli("q", "3.2", "-long").stdout
    names = [line.split(" = ")[0] for line in text.strip().splitlines()]
    assert names == sorted(names, key=str.lower) and "ClusterId" in names and text.endswith("\n\n")
    assert held.cli("q", "3.2", "-l", "-attributes", "ProcId,Owner").stdout == f'Owner = "{USER}"\nProcId = 2\n\n'


def test_json_is_laid_out_as_condor_q_and_condor_history_lay_it_out(held):
    """Sorted attributes, expressions as the ClassAd library writes them, a "," line between two
    ads; condor_q prints nothing for no jobs, condor_history an empty list."""
    assert held.submit(HELD + "requirements = TARGET.Memory > 0\nqueue 2\n", name="expr.sub").cluster == 12
    text = held.cli("q", "12", "-json", "-attributes", "ProcId,Requirements,Owner,ClusterId").stdout
    ad = '{{\n  "ClusterId": 12,\n  "Owner": "{}",\n  "ProcId": {},\n  "Requirements": "\\/Expr(TARGET.Memory > 0)\\/"\n}}'
    assert text == "[\n" + ad.format(USER, 0) + "\n,\n" + ad.format(USER, 1) + "\n]\n", text
    names = [line.split('"')[1] for line in held.cli("q", "3.2", "-json").stdout.splitlines() if line.startswith('  "')]
    assert names == sorted(names, key=str.lower) and "JobStatus" in names and "ServerTime" not in names
    assert held.cli("q", "-json", "99").stdout == ""
    assert held.cli("history", "-json", "99").stdout == "[\n]\n"


def test_history_prints_a_whole_ads_json_in_the_classad_librarys_order_as_condor_history(held):
    """condor_history 23.9.6 -json, -jsonl and -xml without -attributes: the attributes by length,
    then name ("In", "Cmd", "Err", ..., "Owner", "QDate"); -jsonl writes an expression as -json
    does ("\\/Expr(...)\\/") and shows only the -attributes asked for, by name.  An expression
    with a list is one line in -xml, as the ClassAd library writes it (23.9.6's RequestDisk)."""
    assert held.submit(HELD + "requirements = TARGET.Memory > 0\n+Pick = MAX({ 1024, (RequestCpus + 1) * 1.25 })\n"
                       "queue\n", name="expr.sub").cluster == 12
    assert '<a n="Pick"><e>MAX({ 1024,(RequestCpus + 1) * 1.250000000000000E+00 })</e></a>' in \
        held.cli("q", "12", "-xml", "-attributes", "Pick").stdout
    held.cli("rm", "12")
    held.wait_history("12.0")
    names = [line.split('"')[1] for line in held.cli("history", "12", "-json").stdout.splitlines()
             if line.startswith('  "')]
    assert names == sorted(names, key=lambda name: (len(name), name.lower())) and "Cmd" in names, names
    xml = [line.split('"')[1] for line in held.cli("history", "12", "-xml").stdout.splitlines() if "<a n=" in line]
    assert xml == names
    (line,) = held.cli("history", "12", "-jsonl").stdout.splitlines()
    assert [key for key in json.loads(line)] == names and '"Requirements": "\\/Expr(TARGET.Memory > 0)\\/"' in line
    assert held.cli("history", "12", "-jsonl", "-attributes", "Requirements,Cmd,ProcId").stdout == \
        '{"Cmd": "/bin/sleep","ProcId": 0,"Requirements": "\\/Expr(TARGET.Memory > 0)\\/"}\n'


def test_xml_is_the_classad_librarys_xml_as_condor_q_and_condor_history_print_it(held):
    """-xml and -long:xml: typed values, expressions and strings escaped, sorted as -long sorts;
    condor_history with a blank line before each ad and two after the list."""
    assert held.submit(HELD + 'requirements = TARGET.Memory > 0 && true\n+Note = "a<b & c"\n+Ratio = 2.5\n'
                       '+Sites = {"T2_CH_CERN", 3}\n+Flag = false\nqueue\n', name="xml.sub").cluster == 12
    body = ('<c>\n    <a n="ClusterId"><i>12</i></a>\n    <a n="Flag"><b v="f"/></a>\n    <a n="Note"><s>a&lt;b &amp; c</s></a>\n'
            '    <a n="Ratio"><r>2.500000000000000E+00</r></a>\n'
            '    <a n="Requirements"><e>TARGET.Memory &gt; 0 &amp;&amp; true</e></a>\n'
            '    <a n="Sites"><l><s>T2_CH_CERN</s><i>3</i></l></a>\n</c>\n')
    head = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'
    wanted = "Sites,Requirements,Ratio,Note,ClusterId,Flag"
    for view in ("-xml", "-long:xml"):
        result = held.cli("q", "12", view, "-attributes", wanted)
        assert (result.returncode, result.stdout) == (0, head + body + "</classads>\n"), (view, result.stderr)
    assert held.cli("q", "-xml", "99").stdout == head + "</classads>\n"
    held.cli("rm", "12")
    held.wait_history("12.0")
    assert held.cli("history", "12", "-xml", "-attributes", wanted).stdout == head + "\n" + body + "\n</classads>\n\n"


def test_long_json_and_xml_with_af_show_the_attributes_condor_q_fetches_for_it(held):
    """condor_q -long -af ATTR fetches only what -af (and -attributes) name, and the job id: the
    ad shows those, not the whole job."""
    assert held.cli("q", "3.1", "-long", "-af", "JobPrio").stdout == "ClusterId = 3\nJobPrio = 0\nProcId = 1\n\n"
    assert held.cli("q", "3.1", "-l", "-attributes", "Owner", "-format", "%d", "JobPrio").stdout == \
        f'ClusterId = 3\nJobPrio = 0\nOwner = "{USER}"\nProcId = 1\n\n'
    assert held.cli("q", "3.1", "-json", "-af", "strcat(Owner, Cmd)").stdout == \
        f'[\n{{\n  "ClusterId": 3,\n  "Cmd": "/bin/sleep",\n  "Owner": "{USER}",\n  "ProcId": 1\n}}\n]\n'


def test_history_long_with_af_shows_what_the_expressions_read(held):
    """condor_history -long -af ATTR shows the attributes -af reads and the -attributes, without
    the job id condor_q adds."""
    held.cli("rm", "3")
    held.wait_history("3.2")
    assert held.cli("history", "3.1", "-long", "-af", "ProcId").stdout == "ProcId = 1\n\n"
    assert held.cli("history", "3.1", "-l", "-attributes", "Owner", "-af", "strcat(Cmd, Args)").stdout == \
        f'Args = "300"\nCmd = "/bin/sleep"\nOwner = "{USER}"\n\n'


def test_long_sorts_names_as_condor_q_and_condor_history_sort_them(held):
    """condor_q -long sorts attribute names ignoring case, condor_history -long byte by byte
    (23.9.6 prints GPUsProvisioned before GlobalJobId)."""
    held.cli("qedit", "3.0", "aaa", "1", "Zzz", "2")
    names = [line.split(" = ")[0] for line in held.cli("q", "-l", "3.0").stdout.splitlines() if line]
    assert names[0] == "aaa" and names[-1] == "Zzz", names
    held.cli("rm", "3.0")
    held.wait_history("3.0")
    names = [line.split(" = ")[0] for line in held.cli("history", "-l", "3.0").stdout.splitlines() if line]
    assert names == sorted(names) and names.index("Zzz") < names.index("aaa") == len(names) - 1, names
    assert held.cli("history", "-l", "3.0", "-attributes", "aaa,ProcId,Zzz").stdout == "ProcId = 0\nZzz = 2\naaa = 1\n\n"


def test_run_time_is_the_current_run_and_size_is_memory_usage():
    """condor_q's RUN_TIME counts from the current run's start (the shadow's birthday), not all
    runs; SIZE is MemoryUsage in MB, ImageSize only when there is none."""
    now = 1_800_000_000
    running = {"ClusterId": 5, "ProcId": 0, "Owner": "u", "QDate": now - 100, "JobStatus": 2, "JobPrio": 0,
               "RemoteUserCpu": 0.0, "RemoteWallClockTime": 26.0, "ShadowBday": now - 3, "MemoryUsage": 5,
               "ImageSize": 100_000, "Cmd": "/bin/sleep", "Arguments": "60"}
    held_again = {**running, "ProcId": 1, "JobStatus": 5, "LastRemoteWallClockTime": 7.0, "MemoryUsage": None}
    lines = queue_format.job_table([held_again, running], "nobatch", queue_format.Context(now=now))
    assert lines[1].split()[4:8] == ["0+00:00:03", "R", "0", "5.0"] and lines[1].endswith("sleep 60")
    assert lines[2].split()[4:8] == ["0+00:00:07", "H", "0", "97.7"]
    cumulative = queue_format.job_table([running], "nobatch", queue_format.Context(now=now, current_run=False))
    assert cumulative[1].split()[4] == "0+00:00:29"


def test_rm_forcex_forces_out_only_jobs_being_removed(held):
    """condor_rm -forcex 2.0 on a held (idle, running) job is refused in 23.9.6: it forces out only
    a job already in X state; a constraint's -forcex, and condor_release's, count only the jobs
    they can act on, the others being no 'Bad Status'."""
    result = held.cli("rm", "-forcex", "2.0")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "\nJob 2.0 not in `X' state to be forcibly removed\n")
    cluster = held.cli("rm", "-forcex", "2")
    assert (cluster.returncode, cluster.stderr) == (1, "\nCouldn't find/remove all jobs in cluster 2\n")
    assert held.job("2.0")["JobStatus"] == JobStatus.HELD, "nothing removed"
    assert held.cli("release", "1.0").returncode == 0
    totals = held.cli("release", "-totals", "-constraint", "ClusterId <= 2")
    assert totals.stdout.splitlines()[0] == "1 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, " \
                                            "0 Permission Denied", "1.0 is idle: not counted"


def test_actions_say_what_happened_to_which_job(held):
    def act(*args: str):
        result = held.cli(*args)
        return result.returncode, result.stdout.splitlines(), result.stderr.splitlines()

    # held at submission (hold = true): 23.9.6's condor_hold holds it again, as the user's hold,
    # which no periodic_release lets go; only a job condor_hold held is already held
    assert (held.job("1.0")["HoldReasonCode"], act("hold", "1.0")) == (15, (0, ["Job 1.0 held"], []))
    assert (held.job("1.0")["HoldReasonCode"], held.job("1.0")["HoldReason"]) == (1, f"via condor_hold (by user {USER})")
    assert act("hold", "1.0") == (1, [], ["", "Job 1.0 already held"])
    assert act("release", "-constraint", "ClusterId == 999999") == \
        (1, [], ["", "Couldn't find/release all jobs matching constraint (ClusterId == 999999)"])
    assert act("release", "3.1", "99999") == (1, ["Job 3.1 released"], ["", "Couldn't find/release all jobs in cluster 99999"])
    assert act("release", "3.1") == (1, [], ["", "Job 3.1 not held to be released"])
    assert act("rm", "3.9") == (1, [], ["", "Job 3.9 not found"])
    assert act("rm", "3.2", "-constraint", "ClusterId == 999999") == \
        (1, ["Job 3.2 marked for removal"], ["Warning, -constraint is ignored for fully qualified job ids",
                                             "", "Couldn't find/remove all jobs matching constraint (ClusterId == 999999)"])
    assert act("release", "4", "-constraint", "ProcId == 0") == \
        (0, ["All jobs matching constraint ((ProcId == 0) && (ClusterId == 4)) have been released"], [])
    assert act("hold", USER, "-reason", "checking") == (0, [f'All jobs of user "{USER}" have been held'], [])
    assert held.job("4.0")["HoldReason"] == f"checking (by user {USER})", "the schedd signs the reason, as 23.9.6 does"
    assert act("release", "0") == (1, [], ["ERROR: You did not specify any jobs (Invalid cluster # from 0.)"])
    assert act("rm", "99999999999999999999999") == \
        (1, [], ["ERROR: You did not specify any jobs (Invalid cluster # from 99999999999999999999999.)"])
    assert act("rm", "-totals", "5") == \
        (0, ["1 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 0 Permission Denied",
             "All jobs in cluster 5 have been marked for removal"], [])
    zeros = "0 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 0 Permission Denied"
    assert act("release", "-totals", "7.0", "7.3") == (0, [zeros, "Job 7.0 released"], ["Job 7.3 not found"]), \
        "condor_release -totals of job ids: its request by id answers with no totals, so zeros"
    assert act("hold", "-forcex", "6")[0] == 1, "-forcex is condor_rm's"
    assert act("rm", "-all", "8") == (1, [], ["ERROR: condor_rm: can't mix -all with other constraints"]), \
        "condor_rm refuses a job after -all, as before it; nothing is removed"
    assert held.job("8.0")["JobStatus"] == JobStatus.HELD
    wait_for(lambda: held.job("5.0") is None, "5.0 to leave the queue")


def test_dag_view_lists_sub_dags_and_nodes_under_their_dagman(schedd):
    """``q -nobatch -dag ID`` shows the DAGMan job with its node jobs and its sub-DAG's (found by
    JobBatchId, which DAGMan gives them all), a multi-proc node's later procs after the tree;
    the batch line folds the sub-DAG's jobs in; the totals leave DAGMan jobs out."""
    schedd.write("held.sub", HELD + "queue\n")
    schedd.write("held2.sub", HELD + "queue 2\n")
    schedd.write("inner.dag", "JOB X held.sub\n")
    schedd.write("top.dag", "JOB A held2.sub\nSUBDAG EXTERNAL S inner.dag\nJOB B held.sub\nPARENT A S CHILD B\n")
    result = schedd.cli("dag", "submit", "top.dag")
    dagman = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))

    def tree() -> list[tuple[str, str]]:
        table = out_lines(schedd.cli("q", "-nobatch", "-dag", str(dagman)))
        column = table[1].index("OWNER/NODENAME")
        return [(line.split()[0], line[column:column + 17].rstrip()) for line in table if re.match(r" *\d+\.\d+ ", line)]

    wait_for(lambda: len(tree()) == 5, "the DAG's jobs to be queued")
    names = [name for _, name in tree()]
    assert names == [USER, " |-A", " |-S", "  |-X", " |-A"], tree()
    ids = [job for job, _ in tree()]
    assert ids[1].endswith(".0") and ids[4] == ids[1][:-1] + "1", "A's second proc after the whole tree"
    assert job_ids(schedd.cli("q", "-nobatch", str(dagman))) == [f"{dagman}.0"], "without -dag, only the job named"
    batch = out_lines(schedd.cli("q", str(dagman)))
    assert batch[1].split() == ["OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE", "HOLD", "TOTAL", "JOB_IDS"]
    last = max(int(job.split(".")[0]) for job in ids)
    # Three held of four nodes (the top DAG's A, S and B, and the sub-DAG's X), and the jobs' id range.
    assert re.fullmatch(rf"{USER} +top\.dag\+{dagman} +[\d/ :]+ +_ +_ +_ +3 +4 {ids[1]} \.\.\. {last}\.0",
                        batch[2]), batch[2]
    assert batch[-2].startswith("Total for query: 3 jobs; ") and " 3 held," in batch[-2], "DAGMan jobs not counted"
    assert schedd.cli("rm", str(dagman)).returncode == 0


def test_dag_with_run_idle_or_hold_as_condor_q_shows_them(schedd):
    """condor_q 23.9.6: -dag -run (or -idle) draws -dag's tree of the jobs chosen, with the totals
    (which leave DAGMan out); -dag -hold is the -hold table, each held node job under its owner."""
    schedd.write("held.sub", HELD + "queue\n")
    schedd.write("x.dag", "JOB A held.sub\nJOB B held.sub\n")
    dagman = int(re.search(r"submitted to cluster (\d+)\.", schedd.cli("dag", "submit", "x.dag").stdout).group(1))
    wait_for(lambda: len(job_ids(schedd.cli("q", "-nobatch", "-dag"))) == 3, "the DAG's jobs to be queued")
    for run in (["-dag", "-run"], ["-run", "-dag"], ["-dag", "-run", "-nobatch"]):
        table = out_lines(schedd.cli("q", *run))
        assert table[1].split() == ["ID", "OWNER/NODENAME", "SUBMITTED", "RUN_TIME", "ST", "PRI", "SIZE", "CMD"], run
        assert job_ids(schedd.cli("q", *run)) == [f"{dagman}.0"], run
        assert table[-3].startswith("Total for query: 0 jobs; "), run
    idle = out_lines(schedd.cli("q", "-dag", "-idle"))
    assert "OWNER/NODENAME" in idle[1] and idle[-3].startswith("Total for query: 0 jobs; ")
    held = out_lines(schedd.cli("q", "-dag", "-hold"))
    assert [line.split()[:2] for line in held[2:4]] == [[f"{dagman + 1}.0", USER], [f"{dagman + 2}.0", USER]]
    assert schedd.cli("rm", str(dagman)).returncode == 0


def test_dag_submit_takes_condor_submit_dags_tagging_options(schedd, tmp_path):
    schedd.write("held.sub", HELD + "queue\n")
    schedd.write("d.dag", "JOB A held.sub\n")
    outdir = tmp_path / "logs"
    outdir.mkdir()
    result = schedd.cli("dag", "submit", "-APPEND", 'My.CrabtuiTag = "run7"', "-append", "My.CrabtuiRound = 2",
                        "-Batch-Name", "tagged", "-notification", "Complete", "-outfile_dir", str(outdir),
                        "-MaxJobs", "3", "d.dag")
    assert result.returncode == 0, result.stderr
    assert f"Log of DAGMan debugging messages                   : {outdir}/d.dag.dagman.out" in result.stdout
    dagman = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    ad = schedd.client.query(f"ClusterId == {dagman}", ["CrabtuiTag", "CrabtuiRound", "JobBatchName"])[0]
    assert (ad["CrabtuiTag"], ad["CrabtuiRound"], ad["JobBatchName"]) == ("run7", 2, "tagged")
    sub = (schedd.work / "d.dag.condor.sub").read_text()
    assert "notification\t= Complete\n" in sub and sub.endswith('My.CrabtuiTag = "run7"\nMy.CrabtuiRound = 2\nqueue\n')
    wait_for(lambda: (outdir / "d.dag.dagman.out").exists(), "dagman.out in -outfile_dir")
    assert not (schedd.work / "d.dag.dagman.out").exists()
    node = wait_for(lambda: schedd.client.query(f"DAGManJobId == {dagman}", ["JobBatchName", "JobBatchId"]), "node A")
    assert (node[0]["JobBatchName"], node[0]["JobBatchId"]) == ("tagged", f"{dagman}.0")
    assert out_lines(schedd.cli("q", "-af", "JobBatchName", "-constraint", 'JobBatchName == "tagged"')) == \
        ["tagged", "tagged"]
    assert schedd.cli("rm", str(dagman)).returncode == 0


def test_name_and_pool_on_the_embedded_engine(held):
    assert held.cli("q", "-name", f"crabtui@{socket.gethostname()}", "1", "-af", "ProcId").stdout == "0\n"
    for argv in (["-name", "elsewhere"], ["-pool", "cm.example.org"]):
        result = held.cli("q", *argv)
        assert result.returncode == 1 and result.stderr.count("\n") == 1 and "--backend htcondor" in result.stderr
    assert held.cli("q", "-global", "1", "-af", "ProcId").stdout == "0\n"


def test_nobatch_lines_of_a_large_queue_are_the_general_layouts():
    """The whole-queue -nobatch view makes the rest of a line once for the jobs that agree in it;
    lines of jobs that differ in any shown value differ as the general layout has them, PRI
    widens from the job with the longer priority on, and ids past 999 widen the id columns."""
    now = 1_800_000_000
    proc = {"ClusterId": 12345, "Owner": "alice", "QDate": now - 100, "JobStatus": 5, "JobPrio": 0,
            "RemoteUserCpu": 0.0, "ImageSize": 45, "Cmd": "/bin/sleep", "Args": "300"}
    rows = [{**proc, "ProcId": p} for p in range(1200)]
    rows[3] = {**rows[3], "JobStatus": 2, "ShadowBday": now - 61, "MemoryUsage": 123456}
    rows[4] = {**rows[3], "ProcId": 4, "ShadowBday": now - 122}
    rows[500] = {**rows[500], "JobPrio": 10000}  # PRI is WIDTH AUTO: wider from here on, not before
    rows[700] = {**rows[700], "JobDescription": "probe"}
    rows[800] = {**rows[800], "TransferringOutput": True}
    rows[600] = {**rows[600], "MemoryUsage": 2}
    rows[900] = {**rows[900], "Arguments": "60 s"}  # before Args, as condor_q reads them
    rows[1000] = {**rows[1000], "Owner": None}
    context = queue_format.Context(now=now)
    fast = queue_format.job_table(rows, "nobatch", context)
    general = [line.rstrip() for line in queue_format.job_table(rows, "nobatch", context, max_width=1000)]
    assert fast == general
    assert fast[1].startswith("12345.0    alice ") and fast[4].split()[4:8] == ["0+00:01:01", "R", "0", "123456.0"]
    assert fast[5].split()[4] == "0+00:02:02"
    assert fast[500].split()[6] == "0" and fast[501].split()[6] == "10000" and fast[502].split()[5:7] == ["H", "0"]
    assert fast[701].endswith("(probe)") and fast[801].split()[5] == ">" and fast[802].split()[5] == "H"
    assert fast[601].split()[7] == "2.0" and fast[602].split()[7] == "0.0"
    assert fast[901].endswith("sleep 60 s") and fast[1001].split()[1] == "??"


def test_qedit_takes_condor_qedits_command_line(held):
    def edit(*args: str) -> tuple[int, list[str], list[str]]:
        result = held.cli("qedit", *args)
        return result.returncode, result.stdout.splitlines(), result.stderr.splitlines()

    def values(attr: str) -> dict[str, object]:
        return {f"{ad['ClusterId']}.{ad['ProcId']}": ad.get(attr) for ad in held.client.query("true", ["ClusterId", "ProcId", attr])
                if attr in ad}

    assert edit("3", "JobPrio=5") == (0, ['Set attribute "JobPrio" for 3 matching jobs.'], [])
    assert edit("1", "2.0", "3.1", "Flavour", '"mint"', "Size", "-7")[1] == \
        ['Set attribute "Flavour" for 3 matching jobs.', 'Set attribute "Size" for 3 matching jobs.']
    assert values("Flavour") == {"1.0": "mint", "2.0": "mint", "3.1": "mint"} and values("Size")["3.1"] == -7
    assert edit("-constraint", "ProcId == 2", "-jobids", "3,4", "Lemon", "true")[1] == \
        ['Set attribute "Lemon" for 1 matching jobs.']
    assert values("Lemon") == {"3.2": True}
    assert edit(USER, "-constraint", "ClusterId > 10", "Late = 1")[0] == 0 and values("Late") == {"11.0": 1}
    (held.work / "edits.ad").write_text('Note = "from a file"\nJobPrio = 9\n')
    assert edit("-owner", USER, "-jobids", "5.0", "-edits", "edits.ad")[0] == 0
    assert (values("Note"), values("JobPrio")["5.0"]) == ({"5.0": "from a file"}, 9)
    for bad, words in ((["3", "JobPrio"], "JobPrio has no value"), (["3", "Note", "a b"], "'a b' is not a ClassAd"),
                       (["-jobids", "3.x", "A=1"], "'3.x' is not a job id"), (["3"], "no attributes given"),
                       (["-edits", "nowhere.ad", "3"], "nowhere.ad"), (["3", "ClusterId=4"], "ClusterId cannot be"),
                       (["3", 'User="x@example.org"'], "User cannot be"), (["3", 'TargetType="Job"'], "TargetType cannot be"),
                       (["-forward", "3", "A=1"], "-forward"), (["-pool", "cm.example.org", "3", "A=1"], "--backend")):
        code, out, err = edit(*bad)
        assert (code, out, len(err)) == (1, [], 1) and words in err[0], (bad, err)
    assert values("JobPrio")["3.0"] == 5, "a refused edit changes nothing"


def test_qedit_of_a_job_not_in_the_queue_sets_nothing_as_condor_qedit(held):
    """condor_qedit 23.9.6 sets CLUSTER.PROC ids job by job in one transaction: one that is not
    queued fails the edit and nothing is set, even on the jobs that are.  Jobs named otherwise
    fail when none matches, with the constraint as condor_qedit builds it (a proc named beside its
    whole cluster narrows it, ids come after the other restrictions)."""
    def edit(*args: str) -> tuple[int, str, list[str]]:
        result = held.cli("qedit", *args)
        return result.returncode, result.stdout, result.stderr.splitlines()

    failed = "Queue transaction failed.  No attributes were set."
    assert edit("3.0", "3.7", "JobPrio", "9", "Note", '"x"') == \
        (1, "", ['Failed to set attribute "JobPrio" for job 3.7.', failed])
    assert held.job("3.0")["JobPrio"] == 0 and "Note" not in held.job("3.0")
    assert edit("-jobids", "99.1,3.2", "A=1") == (1, "", ['Failed to set attribute "A" for job 99.1.', failed])
    assert edit("99", "98.2", "A=1") == \
        (1, "", ['Failed to set attribute "A" by constraint: ( (( ClusterId == 98 && ProcId == 2 )|| ClusterId == 99 ) )',
                 failed])
    assert edit("-owner", "nobody", "-constraint", "ProcId==7", "A=1") == \
        (1, "", ['Failed to set attribute "A" by constraint: ( (Owner=="nobody") && (ProcId==7) )', failed])
    assert edit("3.1", "3", "Lemon", "true") == (0, 'Set attribute "Lemon" for 1 matching jobs.\n', [])
    assert [held.job(f"3.{proc}").get("Lemon") for proc in range(3)] == [None, True, None]


def test_a_constraint_that_does_not_parse_is_named_as_typed(held):
    """condor_q, condor_history and condor_hold refuse a constraint their ClassAd parser cannot read;
    crabtui names the constraint as it was typed (not the query built around it), in one line,
    and nothing is held."""
    for argv in (["q", "-constraint", "Owner =="], ["q", "-nobatch", "-const", "(ClusterId == 3"],
                 ["history", "-constraint", "ExitCode =="], ["hold", "-constraint", "JobStatus == 1 &&"],
                 ["rm", "3", "-constraint", 'Owner == "x'], ["release", "-c", "ClusterId ==", "-reason", "r"]):
        result = held.cli(*argv)
        assert result.returncode == 1 and result.stdout == "", argv
        typed = argv[argv.index(next(a for a in argv if a.startswith("-c"))) + 1]
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("ERROR: -c"), (argv, result.stderr)
        assert f"{typed!r} is not a ClassAd expression" in result.stderr, (argv, result.stderr)
    assert job_ids(held.cli("q", "-nobatch", "3")) == ["3.0", "3.1", "3.2"]
    assert all(held.job(f"3.{proc}")["JobStatus"] == JobStatus.HELD for proc in range(3))


def test_af_of_an_attribute_set_to_an_expression_of_others_evaluates_it(schedd):
    """condor_qedit 3 Expr 'RequestMemory * 2' then condor_q -af Expr: 23.9.6's schedd sends the
    attributes a projected expression refers to, so -af prints its value, not undefined; -long
    still prints only the attributes asked for."""
    schedd.submit(HELD + "request_memory = 100\n+Twice = RequestMemory * 2\nqueue\n")
    assert schedd.cli("qedit", "1", "Quad", "Twice * 2").returncode == 0
    assert out_lines(schedd.cli("q", "1", "-af", "Twice", "Quad", "Quad + 1")) == ["200 400 401"]
    assert out_lines(schedd.cli("q", "1", "-l", "-attributes", "Quad")) == ["Quad = Twice * 2"]
    assert schedd.cli("rm", "1").returncode == 0
    schedd.wait_history("1.0")
    assert out_lines(schedd.cli("history", "1", "-af", "Twice", "Quad")) == ["200 400"], "condor_history's too"


def test_dag_submit_force_with_dorescuefrom_of_a_missing_rescue_dag_is_refused(schedd):
    """condor_submit_dag -f -dorescuefrom 1 a.dag refuses a DAG with no a.dag.rescue001 in 23.9.6,
    -f or not, rather than queue a DAGMan that fails as it starts."""
    schedd.write("held.sub", HELD + "queue\n")
    schedd.write("a.dag", "JOB A held.sub\n")
    result = schedd.cli("dag", "submit", "-f", "-dorescuefrom", "1", "a.dag")
    assert (result.returncode, result.stdout) == (1, ""), result.stderr
    assert result.stderr.count("\n") == 1 and "a.dag.rescue001" in result.stderr and "-dorescuefrom 1" in result.stderr
    assert schedd.client.query("true") == []


def test_several_af_options_print_one_line_a_job(held):
    """condor_q 3 -af:j JobStatus -af Cmd and condor_history likewise: each -af adds columns to
    the same line; the last one's separators are used, an earlier j stays (seen on 23.9.6)."""
    assert out_lines(held.cli("q", "3", "-af:j", "JobStatus", "-af", "Cmd")) == \
        ["3.0 5 /bin/sleep", "3.1 5 /bin/sleep", "3.2 5 /bin/sleep"]
    assert held.cli("q", "3.0", "-af:,", "JobStatus", "-af:t", "Cmd", "Owner").stdout == f"5\t/bin/sleep\t{USER}\n"
    held.cli("rm", "1")
    held.wait_history("1.0")
    assert out_lines(held.cli("history", "1", "-af:j", "JobStatus", "-af", "Cmd")) == ["1.0 3 /bin/sleep"]


def test_hold_lines_are_not_cut_by_wide(held):
    """condor_q -hold -wide:40 (or on a narrow terminal) prints the whole hold reason in 23.9.6:
    its print format has no width to cut to, as -nobatch's has."""
    table = out_lines(held.cli("q", "1", "-hold", "-wide:40"))
    assert table[1] == " ID      OWNER          HELD_SINCE  HOLD_REASON"
    assert table[2].endswith("submitted on hold at user's request"), table[2]
    assert len(out_lines(held.cli("q", "1", "-nobatch", "-wide:40"))[2]) == 39, "-nobatch's are cut"


def test_history_af_headings_are_as_wide_as_the_headings_alone(held):
    """condor_history -af:h Cmd ExitCode prints its heading line before it measures the values
    (23.9.6: 'Cmd ExitCode', then '/bin/sleep 0'); condor_q measures them first."""
    held.cli("rm", "1", "2")
    held.wait_history("2.0")
    assert held.cli("history", "1", "2", "-af:h", "Cmd", "ProcId").stdout == \
        "Cmd ProcId\n/bin/sleep 0     \n/bin/sleep 0     \n"
    assert held.cli("history", "2", "-af:jh", "Cmd").stdout == " ID      Cmd\n   2.0   /bin/sleep\n"
    assert held.cli("q", "3.0", "-af:h", "Cmd", "ProcId").stdout == "Cmd        ProcId\n/bin/sleep 0     \n"


def test_history_wide_n_cuts_its_table_to_n_columns_as_condor_history(held):
    """condor_history 23.9.6 -wide:40 cuts each line of its table at 40 characters (a later -wide
    alone keeps the width); -wide and -wide:0 cut nothing, nor is an -af's line cut."""
    held.cli("rm", "1")
    held.wait_history("1.0")
    full = held.cli("history", "1").stdout.splitlines()
    assert len(full[1]) > 40
    for args in (["-wide:40"], ["-wide:40", "-wide"]):
        assert held.cli("history", "1", *args).stdout.splitlines() == [line[:40] for line in full], args
    for args in (["-wide"], ["-wide:0"]):
        assert held.cli("history", "1", *args).stdout.splitlines() == full, args
    assert held.cli("history", "1", "-wide:5", "-af", "Cmd", "ProcId").stdout == "/bin/sleep 0\n"


def test_history_scanlimit_looks_at_the_newest_jobs_only_as_condor_history(held):
    """condor_history 23.9.6 -scanlimit N reads the N newest jobs (the N oldest with -forwards),
    and the job ids, owners and constraints choose among those only."""
    held.cli("rm", "1")
    held.wait_history("1.0")
    held.cli("rm", "2")
    held.wait_history("2.0")
    assert held.cli("history", "-scanlimit", "1", "-af", "ClusterId").stdout == "2\n"
    assert held.cli("history", "-scan", "1", "1", "-af", "ClusterId").stdout == ""
    assert held.cli("history", "-forwards", "-scanlimit", "1", "-af", "ClusterId").stdout == "1\n"
    assert held.cli("history", "-scanlimit", "2", "-limit", "1", "-af", "ClusterId").stdout == "2\n"
    assert held.cli("history", "-scanlimit", "0", "-af", "ClusterId").stdout == "2\n1\n"


def test_af_and_format_evaluate_with_htcondors_classad_functions_and_my(held):
    """condor_q -af MY.JobStatus 'join(",", split("a b"))' 'splitUserName("a@b")' prints
    '5 a,b { "a","b" }' in 23.9.6: MY. is the job's ad, split() and splitUserName() are HTCondor's."""
    assert held.cli("q", "3.0", "-af", "MY.JobStatus", 'join(",", split("a b"))', 'splitUserName("a@b")').stdout \
        == '5 a,b { "a","b" }\n'
    assert held.cli("q", "3.0", "-format", "%d\\n", "MY.JobStatus").stdout == "5\n"


def test_q_of_several_clusters_lists_each_of_them_in_the_batch_view(held):
    """condor_q 23.9.6 ORs `DAGManJobId == C` and `int(split(JobBatchId, ".")[0]) == C` in for each
    cluster named, an error for a job with neither, so `condor_q 1 2` listed cluster 1 alone."""
    batch = out_lines(held.cli("q", "1", "2", "4"))
    assert [line.split()[-1] for line in batch[2:-2]] == ["1.0", "2.0", "4.0"]
    assert batch[-2].startswith("Total for query: 3 jobs;")
    assert job_ids(held.cli("q", "-dag", "-nobatch", "2", "4")) == ["2.0", "4.0"]
