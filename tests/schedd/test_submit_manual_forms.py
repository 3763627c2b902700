"""Submit files written as the HTCondor manual's "Submitting a Job" chapter and the condor_submit
manual page write them, whose job ads the test pool's condor_submit 23.9.6 -dry-run decided."""

from __future__ import annotations

from pathlib import Path

import classad2
import pytest

from engine.schedd.local.submit import (SubmitDescription, SubmitError, build_job_ads, check_macro_functions,
                                        unused_line_warnings)


def build(text: str, cwd: Path) -> list[classad2.ClassAd]:
    return build_job_ads(SubmitDescription(text, str(cwd / "job.sub"), str(cwd)), 7, now=1_700_000_000)


def test_a_quoted_batch_name_loses_its_quotes_as_on_the_pool(tmp_path):
    """condor_submit -dry-run on the pool: JobBatchName="quoted name" and "fromattr"; a lone quote
    stays (JobBatchName="\\"abc")."""
    ads = build('executable = /bin/true\nbatch_name = "quoted name"\nqueue\n', tmp_path)
    assert ads[0]["JobBatchName"] == "quoted name"
    ads = build('executable = /bin/true\nJobBatchName = "fromattr"\nqueue\n', tmp_path)
    assert ads[0]["JobBatchName"] == "fromattr"
    ads = build('executable = /bin/true\nbatch_name = "abc\nqueue\n', tmp_path)
    assert ads[0]["JobBatchName"] == '"abc'


def test_a_row_with_fewer_words_keeps_the_row_befores_value_as_on_the_pool(tmp_path):
    """queue a b c from ( ... ): the pool's condor_submit gave the row 'p,q' c = 'z w', the row
    before's, as it does for rows of a file."""
    ads = build("executable = /bin/echo\narguments = $(a) $(b) $(c)\n"
                "queue a b c from (\nx y z w\np,q\nr, s , t\n)\n", tmp_path)
    assert [ad["Args"] for ad in ads] == ["x y z w", "p q z w", "r s , t"]


def test_a_blank_row_of_an_inline_list_is_a_job_as_on_the_pool(tmp_path):
    """condor_submit 23.9.6 -dry-run: a blank row queues a job whose first variable is empty and
    whose others keep the row before's values; a comment row queues none."""
    ads = build("executable = /bin/echo\narguments = $(a) $(b) $(c)\n"
                "queue a b c from (\n  x y z\n\n  p q\n# not a job\n  u,v w\n)\n", tmp_path)
    assert [ad["Args"] for ad in ads] == ["x y z", "y z", "p q z", "u v w"]
    ads = build("executable = /bin/echo\narguments = <$(a)>\nqueue a from (\n  x\n\n  y\n)\n", tmp_path)
    assert [ad["Args"] for ad in ads] == ["<x>", "<>", "<y>"]


def test_a_queue_variable_named_as_a_builtin_macro_wins_as_on_the_pool(tmp_path):
    """condor_submit 23.9.6 -dry-run: queue Row, Word from ( ... ) gives $(Row) the row's own
    value (Args="02 c orld" for the row '2, world'), even in $INT() and $CHOICE(); a queue
    variable named Process or Cluster wins too, while the job's ProcId stays its own."""
    ads = build("executable = /bin/echo\narguments = $INT(Row,%02d) $CHOICE(Row, a, b, c) $SUBSTR(Word, 1)\n"
                "queue Row, Word from (\n 0, hello\n 2, world\n)\n", tmp_path)
    assert [ad["Args"] for ad in ads] == ["00 a ello", "02 c orld"]
    ads = build("executable = /bin/echo\narguments = p=$(Process) c=$(Cluster) s=$(Step)\n"
                "queue Process, Cluster, Step from (\n 5, 6, 7\n 8, 9, 10\n)\n", tmp_path)
    assert [(ad["Args"], ad["ProcId"]) for ad in ads] == [("p=5 c=6 s=7", 0), ("p=8 c=9 s=10", 1)]


def test_requests_written_as_expressions_are_kept_as_on_the_pool(tmp_path):
    """The manual's request_memory that grows with the job's use, and request_cpus = 2 - 1: the
    pool's condor_submit keeps both expressions as written; a lone name stays refused."""
    ads = build("executable = /bin/true\n"
                "request_memory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage * 3 / 2, 1000)\n"
                "request_cpus = 2 - 1\nrequest_disk = 2048M\nqueue\n", tmp_path)
    assert isinstance(ads[0].lookup("RequestMemory"), classad2.ExprTree) and ads[0].eval("RequestMemory") == 1000
    ads[0]["MemoryUsage"] = 2000
    assert ads[0].eval("RequestMemory") == 3000
    assert (str(ads[0].lookup("RequestCpus")), ads[0]["RequestDisk"]) == ("2 - 1", 2097152)
    with pytest.raises(SubmitError, match="request_memory"):
        build("executable = /bin/true\nrequest_memory = lots\nqueue\n", tmp_path)


def test_a_job_whose_request_memory_is_an_expression_runs_with_its_value(schedd):
    """Its slot gets the expression's value, 1000 MB before the job has used any, in the
    execute event as on the pool."""
    schedd.write("job.sub", "executable = /bin/true\nlog = job.log\n"
                 "request_memory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage * 3 / 2, 1000)\nqueue\n")
    assert schedd.cli("job", "submit", "job.sub").returncode == 0
    assert schedd.wait_history("1.0")["ExitCode"] == 0
    log = (schedd.work / "job.log").read_text()
    assert "Job executing on host" in log and "\tMemory = 1000\n" in log


def test_kill_signals_are_stored_by_name_as_on_the_pool(tmp_path):
    """condor_submit 23.9.6 on the pool: hold_kill_sig = 9 is SIGKILL, sigusr1 is SIGUSR1, a local
    or scheduler universe job gets KillSig SIGTERM, and kill_sig = USR1 is refused."""
    ads = build("executable = /bin/true\nkill_sig = sigusr1\nhold_kill_sig = 9\nqueue\n", tmp_path)
    assert (ads[0]["KillSig"], ads[0]["HoldKillSig"]) == ("SIGUSR1", "SIGKILL")
    ads = build("universe = local\nexecutable = /bin/true\nqueue\n", tmp_path)
    assert ads[0]["KillSig"] == "SIGTERM"
    with pytest.raises(SubmitError, match="kill_sig: invalid signal USR1"):
        build("executable = /bin/true\nkill_sig = USR1\nqueue\n", tmp_path)


def test_a_nice_user_job_is_charged_to_the_nice_user_group_as_on_the_pool(tmp_path):
    """nice_user = true: AccountingGroup nice-user.<owner> and MaxJobRetirementTime 0 from the
    pool's condor_submit; an accounting_group wins over it there."""
    ads = build("executable = /bin/true\nnice_user = true\naccounting_group_user = alice\nqueue\n", tmp_path)
    assert (ads[0]["AcctGroup"], ads[0]["AccountingGroup"], ads[0]["MaxJobRetirementTime"]) == (
        "nice-user", "nice-user.alice", 0)
    ads = build("executable = /bin/true\nnice_user = true\naccounting_group = group_a\n"
                "accounting_group_user = alice\nqueue\n", tmp_path)
    assert (ads[0]["AccountingGroup"], ads[0]["MaxJobRetirementTime"]) == ("group_a.alice", 0)


def test_q_idle_shows_the_value_of_a_request_written_as_an_expression(schedd):
    """condor_q -idle on the pool showed CPUS 1 and MEMORY 1000 for this idle job."""
    schedd.write("job.sub", "executable = /bin/true\nrequirements = TARGET.NoSuchAttr == 1\n"
                 "request_memory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage * 3 / 2, 1000)\n"
                 "request_cpus = 2 - 1\nqueue\n")
    assert schedd.cli("job", "submit", "job.sub").returncode == 0
    row = [line for line in schedd.cli("q", "-idle").stdout.splitlines() if line.lstrip().startswith("1.0")]
    assert row and row[0].split()[3:6] == ["1", "1000", "0"]


def test_a_macro_an_include_line_names_is_not_warned_of(schedd):
    """cfg = prod used only by include : conf/$(cfg).inc: the pool's condor_submit warned of nothing."""
    (schedd.work / "conf").mkdir()
    schedd.write("conf/prod.inc", "arguments = prod-config\n")
    schedd.write("job.sub", "cfg = prod\nexecutable = /bin/echo\ninclude : conf/$(cfg).inc\nhold = true\nqueue\n")
    result = schedd.cli("job", "submit", "job.sub")
    assert (result.returncode, result.stderr) == (0, "")


def test_a_queue_statement_in_an_included_file_is_refused_naming_the_include_line(tmp_path, monkeypatch):
    """The pool's condor_submit: "Queue statement not allowed in include file or command"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples.inc").write_text("sample = s1\nqueue\n")
    with pytest.raises(SubmitError, match=r"job.sub:3: include: samples.inc has a queue statement"):
        build("executable = /bin/echo\narguments = $(sample)\ninclude : samples.inc\n", tmp_path)


def test_paths_keep_the_form_written_as_on_the_pool(tmp_path):
    """queue d matching dirs d*: condor_submit gives Iwd "<dir>/d1/" and UserLog "<dir>/d1/../job.log",
    as written; executable = ./prog.sh is "<dir>/./prog.sh"."""
    (tmp_path / "d1").mkdir()
    (tmp_path / "prog.sh").write_text("#!/bin/sh\n")
    (tmp_path / "prog.sh").chmod(0o755)
    ads = build("executable = ./prog.sh\ninitialdir = $(d)\nlog = ../job.log\nqueue d matching dirs d*\n", tmp_path)
    assert (ads[0]["Iwd"], ads[0]["UserLog"], ads[0]["Cmd"]) == (
        f"{tmp_path}/d1/", f"{tmp_path}/d1/../job.log", f"{tmp_path}/./prog.sh")


def test_a_log_written_another_way_than_the_nodes_log_gets_each_event_once(schedd):
    """log = ./job.log and DAGMan's dagman_log naming the same file: one submit event, not two."""
    schedd.write("job.sub", f"executable = /bin/true\nlog = ./job.log\ndagman_log = {schedd.work}/job.log\n"
                 "hold = true\nqueue\n")
    assert schedd.cli("job", "submit", "job.sub").returncode == 0
    assert (schedd.work / "job.log").read_text().count("Job submitted from host") == 1


@pytest.mark.parametrize("value, said", [
    ("$INT(Process*10+1)", "'Process*10+1' does not evaluate to an integer"),
    ("$CHOICE(5, a, b)", "the index 5 is past the end of the list of 2"),
    ("$CHOICE(-1, a, b)", "the index '-1' is not a number from 0"),
    ("$REAL(xyz)", "'xyz' does not evaluate to a number"),
    ("$SUBSTR(name, x)", "the start index 'x' is not a whole number"),
    ("$RANDOM_CHOICE()", "has nothing to choose from"),
    ("$RANDOM_INTEGER(5, 1)", "min 5 is greater than max 1"),
    ("$RANDOM_INTEGER(1, 5, 0)", "the step 0 is not 1 or more"),
    ("$CHOICE($(Process), a, b)", "a $(...) cannot be one"),
    ("$INT(1,%5.1f)", "'%5.1f' is not a valid format specifier for $INT()"),
    ("$REAL(2.5,%s)", "'%s' is not a valid format specifier for $REAL()"),
])
def test_a_macro_function_the_pool_refuses_is_refused_at_its_line(tmp_path, value, said):
    """condor_submit 23.9.6 stops at the queue statement on these (on $CHOICE(5, a, b) it crashes);
    the bindings expand them to nothing and would queue the job."""
    with pytest.raises(SubmitError) as refused:
        build(f"executable = /bin/echo\nname = abc\nfoo = {value}\narguments = $(foo)\nqueue\n", tmp_path)
    assert str(refused.value).startswith(f"{tmp_path / 'job.sub'}:3: foo: {value.split(')')[0]}")
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_macro_functions_the_pool_takes_are_expanded_as_on_the_pool(tmp_path):
    """The manual's forms, as condor_submit 23.9.6 -dry-run expanded them; a bad function in a
    macro nothing uses is no error there; the index of proc 2 is past the list of 2."""
    text = ("executable = /bin/echo\nn = $(Process)*10+1\nunused = $CHOICE(9, a)\nlst = x,y\n"
            "arguments = $INT(n) $INT(n,%03d) $CHOICE(Process, a, b) $CHOICE(Process, lst) $REAL(true) $INT(2.7)\n"
            "queue 2\n")
    ads = build(text, tmp_path)
    assert [ad["Args"] for ad in ads] == ["1 001 a x 1 2", "11 011 b y 1 2"]
    assert unused_line_warnings(SubmitDescription(text, str(tmp_path / "job.sub"), str(tmp_path))) == [
        "WARNING: the line 'unused = $CHOICE(9, a)' was unused by condor_submit. Is it a typo?"]
    with pytest.raises(SubmitError, match=r"job.sub:2: My.Pick: .*the index 2 is past the end of the list of 2"):
        build('executable = /bin/true\nMy.Pick = "$CHOICE(Process, a, b)"\nqueue 3\n', tmp_path)


def test_numbers_with_leading_zeros_or_in_c_forms_are_taken_as_on_the_pool(tmp_path):
    """condor_submit 23.9.6 -dry-run: $INT() and $CHOICE() read 08 and 010 in base 10 (Args="8 i",
    "10 k"), as zero-padded run numbers are written; $REAL() reads what C's strtod reads (1., 0x1F,
    inf); 1_000, 4x and 08 + 1 stay refused there and here."""
    text = ("executable = /bin/echo\narguments = $INT(Item) $CHOICE(Item, a, b, c, d, e, f, g, h, i, j, k)\n"
            "queue in (08, 010, -0)\n")
    assert [ad["Args"] for ad in build(text, tmp_path)] == ["8 i", "10 k", "0 a"]
    text = "executable = /bin/echo\narguments = $REAL(Item, %.2f)\nqueue in (1., 0x1F, 0x1p3, -09.5e1)\n"
    assert [ad["Args"] for ad in build(text, tmp_path)] == ["1.00", "31.00", "8.00", "-95.00"]
    for value in ("1_000", "4x", "08 + 1"):
        with pytest.raises(SubmitError, match="does not evaluate to"):
            build(f"executable = /bin/echo\nv = {value}\narguments = $INT(v) $REAL(v)\nqueue\n", tmp_path)


def test_printf_formats_the_pool_takes_are_expanded_as_there(tmp_path):
    """condor_submit 23.9.6 -dry-run: Arguments="2a %42 2.50% 2.500000 +42"; a format that prints
    no number of the function's kind (%5.1f for $INT, %d for $REAL, 100%%) stops it."""
    ads = build('executable = /bin/echo\nx = 42\ny = 2.5\n'
                'arguments = "$INT(x,%x) $INT(x,%%%d) $REAL(y,%.2f%%) $REAL(y,%lf) $INT(x,%+d)"\nqueue\n', tmp_path)
    assert ads[0]["Arguments"] == "2a %42 2.50% 2.500000 +42"
    for bad in ("$INT(x,%5.1f)", "$REAL(y,%d)", "$INT(x,100%%)"):
        with pytest.raises(SubmitError, match="is not a valid format specifier"):
            build(f"executable = /bin/echo\nx = 42\ny = 2.5\narguments = {bad}\nqueue\n", tmp_path)


def test_the_pools_check_gives_a_queue_variable_named_row_its_rows_value(tmp_path):
    """--backend htcondor checks the functions before the bindings queue: $CHOICE(Row, a, b) with
    rows 0, 1, 0 picks a, b, a on the pool (the queue variable wins), no index past the list."""
    text = "executable = /bin/echo\narguments = $CHOICE(Row, a, b)\nqueue Row from (\n0\n1\n0\n)\n"
    check_macro_functions(SubmitDescription(text, str(tmp_path / "job.sub"), str(tmp_path)))
    assert [ad["Args"] for ad in build(text, tmp_path)] == ["a", "b", "a"]


@pytest.mark.parametrize("queue", ["queue a,b from (\n1 2\n3 4\n", "queue x from (\n", "queue x from (\n1\n)\nqueue y from (\na\n"])
def test_an_item_list_no_closing_line_ends_is_refused_as_on_the_pool(queue, tmp_path):
    """condor_submit 23.9.6 on the pool: "Reached end of file without finding closing brace ')' for
    Queue command on line 2", exit 1; the rest of the file is no list of items."""
    with pytest.raises(SubmitError) as refused:
        build(f"executable = /bin/true\n{queue}", tmp_path)
    line = 5 if "queue y" in queue else 2
    assert str(refused.value).startswith(
        f"{tmp_path / 'job.sub'}:{line}: Reached end of file without finding closing brace ')' for Queue command "
        f"on line {line}")


def test_log_xml_is_refused_rather_than_ignored(tmp_path):
    """``log_xml = True`` (the manual's command for a ClassAd XML event log): the embedded schedd
    writes the standard format only, so it says so at the line instead of writing another format
    than asked; ``log_xml = false`` is what it writes anyway."""
    with pytest.raises(SubmitError) as refused:
        build("executable = /bin/true\nlog = job.log\nlog_xml = True\nqueue\n", tmp_path)
    assert str(refused.value).startswith(f"{tmp_path / 'job.sub'}:3: log_xml = True: the embedded schedd writes")
    assert "--backend htcondor" in str(refused.value)
    assert build("executable = /bin/true\nlog = job.log\nlog_xml = false\nqueue\n", tmp_path)[0]["UserLog"]


def test_deferral_time_of_a_scheduler_universe_job_is_refused_as_on_the_pool(tmp_path):
    """The manual: "A scheduler universe job defining the deferral_time produces a fatal error when
    submitted"; the pool's condor_submit: "DeferralTime does not work for scheduler universe jobs."
    A local universe job takes it."""
    with pytest.raises(SubmitError) as refused:
        build("universe = scheduler\nexecutable = /bin/true\ndeferral_time = 1900000000\nqueue\n", tmp_path)
    assert str(refused.value) == (f"{tmp_path / 'job.sub'}:3: DeferralTime does not work for scheduler universe jobs; "
                                  "consider submitting this job using the local universe, instead")
    (ad,) = build("universe = local\nexecutable = /bin/true\ndeferral_time = 1900000000\nqueue\n", tmp_path)
    assert ad["DeferralTime"] == 1900000000


def test_lines_after_the_last_queue_statement_are_warned_of_first_as_on_the_pool(tmp_path):
    """condor_submit 23.9.6 -dry-run on the pool: the lines after the last queue statement are
    unused (it has queued every job when it reads them), warned of first, the last line first,
    then the others in its usual order; a ``+Attr`` line there gets no warning."""
    text = "executable = /bin/true\nbb = 1\nyy = 2\nqueue\nzz = 1\naa = 2\n+Foo = 1\nmm = 3\n"
    assert unused_line_warnings(SubmitDescription(text, str(tmp_path / "job.sub"), str(tmp_path))) == [
        f"WARNING: the line '{line}' was unused by condor_submit. Is it a typo?"
        for line in ("mm = 3", "aa = 2", "zz = 1", "yy = 2", "bb = 1")]


def test_transfer_executable_false_is_recorded_as_on_the_pool(tmp_path):
    """condor_submit 23.9.6 -dry-run: ``transfer_executable = false`` (or the attribute name) gives
    TransferExecutable=false; ``true`` records nothing."""
    for line in ("transfer_executable = false", "TransferExecutable = False"):
        assert build(f"executable = /bin/true\n{line}\nqueue\n", tmp_path)[0]["TransferExecutable"] is False
    assert "TransferExecutable" not in build("executable = /bin/true\ntransfer_executable = true\nqueue\n", tmp_path)[0]
