"""Submit descriptions: how condor_submit turns them into job ads, and what happens on bad input.

Most cases call ``build_job_ads`` directly (it is what the client runs before it sends the ads);
each kind of bad input is also submitted once through the real ``crabtui job submit``, which must
exit non-zero with a message naming the file and the command, and leave nothing in the queue.
Refused actions (hold of a completed job, release of a job that is not held, an unknown id) are
tried against a real daemon, through the API and the CLI, and must leave the queue as it was.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import classad2
import pytest

from engine.schedd.api import JobAction, JobStatus, ScheddError
from engine.schedd.local.submit import (
    NoJobsQueued,
    SubmitDescription,
    SubmitError,
    build_job_ads,
    parse_raw_arguments,
    parse_raw_environment,
)

CLUSTER = 42


def build(text: str, cwd: Path, file: str | None = None, **kwargs) -> list[classad2.ClassAd]:
    file = file or str(cwd / "job.sub")
    return build_job_ads(SubmitDescription(text, file, str(cwd)), CLUSTER, now=1_700_000_000, **kwargs)


def arguments(ads: list[classad2.ClassAd]) -> list[str]:
    """Each job's arguments as stored: new syntax in Arguments, old in Args."""
    return [ad.get("Arguments", ad.get("Args", "")) for ad in ads]


# ------------------------------------------------------------------------------------ building ads

class TestQueueStatements:
    SUB = "executable = /bin/echo\narguments = $(Cluster).$(Process).$(Step) $(x) $(y)\n"

    def test_queue_n_numbers_procs_and_steps(self, tmp_path):
        ads = build("executable = /bin/echo\narguments = $(Cluster) $(Process) $(ClusterId) $(ProcId)\nqueue 3\n",
                    tmp_path)
        assert [(ad["ClusterId"], ad["ProcId"]) for ad in ads] == [(CLUSTER, 0), (CLUSTER, 1), (CLUSTER, 2)]
        assert arguments(ads) == [f"{CLUSTER} {p} {CLUSTER} {p}" for p in range(3)]
        assert all(ad["TotalSubmitProcs"] == 3 for ad in ads)

    def test_queue_n_of_a_dag_node_with_vars_prepend_numbers_each_proc(self, tmp_path):
        """A DAG's ``VARS A PREPEND arguments="$(Process)"`` for a node whose submit file has no
        macro and ``queue 3``: each proc gets its own number, as from condor_submit; without a
        macro anywhere the procs differ by ProcId alone."""
        text = "executable = /bin/echo\nqueue 3\n"
        ads = build_job_ads(SubmitDescription(text, str(tmp_path / "job.sub"), str(tmp_path),
                                              prepend={"arguments": "$(Process)"}), CLUSTER, now=1_700_000_000)
        assert arguments(ads) == ["0", "1", "2"]
        plain = build(text, tmp_path)
        assert [ad["ProcId"] for ad in plain] == [0, 1, 2]
        assert {str(ad).replace(f"ProcId = {ad['ProcId']}", "") for ad in plain} == \
            {str(plain[0]).replace("ProcId = 0", "")}

    def test_queue_count_from_a_macro(self, tmp_path):  # VARS n "3" in a DAG gives a node's job 3 procs
        ads = build("n = 3\nexecutable = /bin/echo\narguments = $(Process)\nqueue $(n)\n", tmp_path)
        assert arguments(ads) == ["0", "1", "2"]

    def test_a_slice_picks_the_items_as_on_the_pool(self, tmp_path):
        """The test pool's condor_submit gave these jobs: Python's slice of the items, each
        keeping its $(ItemIndex) and $(Row) among all of them."""
        sub = "executable = /bin/echo\narguments = $(Item) $(ItemIndex) $(Row) $(Step) $(Process)\n"
        ads = build(sub + "queue 2 in [1:3] (a b c d)\n", tmp_path)
        assert arguments(ads) == ["b 1 1 0 0", "b 1 1 1 1", "c 2 2 0 2", "c 2 2 1 3"]
        assert arguments(build(sub + "queue Item in [-2:] (a, b, c)\n", tmp_path)) == ["b 1 1 0 0", "c 2 2 0 1"]
        (tmp_path / "params.txt").write_text("alpha 1\nbeta 2\ngamma 3\n")
        ads = build("executable = /bin/echo\narguments = $(name)\nqueue name,seed from [::2] params.txt\n", tmp_path)
        assert arguments(ads) == ["alpha", "gamma"]
        (tmp_path / "blank.txt").write_text("one\n\ntwo\nthree\n")  # the bindings refuse it: read as 23.9.6 does
        ads = build("executable = /bin/echo\narguments = [$(x)]\nqueue x from [1:3] blank.txt\n", tmp_path)
        assert arguments(ads) == ["[]", "[two]"]

    def test_queue_in_list(self, tmp_path):
        ads = build(self.SUB.replace(" $(y)", "") + "queue x in (red, green, blue)\n", tmp_path)
        assert arguments(ads) == [f"{CLUSTER}.0.0 red", f"{CLUSTER}.1.0 green", f"{CLUSTER}.2.0 blue"]

    def test_queue_n_in_list_repeats_each_item_with_steps(self, tmp_path):
        ads = build(self.SUB.replace(" $(y)", "") + "queue 2 x in (red, green)\n", tmp_path)
        assert arguments(ads) == [f"{CLUSTER}.0.0 red", f"{CLUSTER}.1.1 red",
                                  f"{CLUSTER}.2.0 green", f"{CLUSTER}.3.1 green"]

    def test_item_index_and_row_number_the_items(self, tmp_path):  # as condor_submit 23.9.6 -dry-run shows
        for name in ("a.dat", "b.dat"):
            (tmp_path / name).write_text("")
        ads = build("executable = /bin/echo\narguments = $(Item) $(Process) $(ItemIndex) $(Step) r=$(Row)\n"
                    "queue 2 matching files *.dat\n", tmp_path)
        assert arguments(ads) == ["a.dat 0 0 0 r=0", "a.dat 1 0 1 r=0", "b.dat 2 1 0 r=1", "b.dat 3 1 1 r=1"]
        (plain,) = build("executable = /bin/echo\narguments = $(ItemIndex) $(Row)\nqueue\n", tmp_path)
        assert arguments([plain]) == ["0 0"]

    def test_queue_0_and_an_empty_item_list_queue_nothing_naming_the_file(self, tmp_path):
        (tmp_path / "empty.txt").write_text("")
        for queue in ("queue 0", "queue x from empty.txt"):
            with pytest.raises(NoJobsQueued, match=r'^".*job\.sub" has only empty "queue" commands'):
                build(f"executable = /bin/true\n{queue}\n", tmp_path)

    def test_several_queue_statements_continue_the_procs(self, tmp_path):  # as condor_submit 23.9.6 -dry-run
        ads = build("executable = /bin/echo\narguments = one $(Process)\noutput = mu.$(Process)\nqueue\n"
                    "arguments = two $(Process) $(Step) $(x)\nqueue 2\n"
                    "arguments = three $(Process) $(x)\nqueue x from (\n  red\n  green\n)\n", tmp_path)
        assert arguments(ads) == ["one 0", "two 1 0", "two 2 1", "three 3 red", "three 4 green"]
        assert [ad["Out"] for ad in ads] == [f"mu.{p}" for p in range(5)]  # relative to Iwd, as on the pool
        assert all(ad["TotalSubmitProcs"] == 5 for ad in ads)

    def test_a_bad_command_between_queue_statements_is_named_by_its_line(self, tmp_path):
        with pytest.raises(SubmitError, match=r"job\.sub:4: not a submit command"):
            build("executable = /bin/echo\nqueue\narguments = two\nthis is not a command\nqueue\n", tmp_path)

    def test_queue_from_inline_list(self, tmp_path):
        ads = build(self.SUB + "queue x, y from (\n  red 1\n  green 2\n)\n", tmp_path)
        assert arguments(ads) == [f"{CLUSTER}.0.0 red 1", f"{CLUSTER}.1.0 green 2"]

    def test_queue_from_file(self, tmp_path):
        (tmp_path / "items.txt").write_text("red 1\ngreen 2\n")
        ads = build(self.SUB + "queue x, y from items.txt\n", tmp_path)
        assert arguments(ads) == [f"{CLUSTER}.0.0 red 1", f"{CLUSTER}.1.0 green 2"]

    def test_queue_matching_files_in_the_submit_directory(self, tmp_path):
        for name in ("b.txt", "a.txt", "c.dat"):
            (tmp_path / name).write_text("")
        ads = build(self.SUB.replace(" $(y)", "") + "queue x matching *.txt\n", tmp_path)
        assert arguments(ads) == [f"{CLUSTER}.0.0 a.txt", f"{CLUSTER}.1.0 b.txt"]

    def test_cluster_and_process_in_file_names(self, tmp_path):
        ads = build("executable = /bin/true\noutput = out.$(Cluster).$(Process)\nerror = err.$(Process)\n"
                    "log = job.$(Cluster).log\nqueue 2\n", tmp_path)
        assert [ad["Out"] for ad in ads] == [f"out.{CLUSTER}.{p}" for p in range(2)]
        assert [ad["Err"] for ad in ads] == [f"err.{p}" for p in range(2)]
        assert {ad["UserLog"] for ad in ads} == {str(tmp_path / f"job.{CLUSTER}.log")}


class TestCommands:
    def test_an_include_that_cannot_be_opened_is_named_with_its_line(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)  # condor_submit reads an include from the directory it runs in
        (tmp_path / "common.inc").write_text("extra = included\n")
        (ad,) = build("executable = /bin/echo\ninclude : common.inc\narguments = $(extra)\nqueue\n", tmp_path)
        assert arguments([ad]) == ["included"]
        with pytest.raises(SubmitError, match=r"job\.sub:2: include: can't open file nope\.inc: No such file"):
            build("executable = /bin/true\ninclude : nope.inc\nqueue\n", tmp_path)

    def test_an_include_command_whose_output_is_refused_is_named_with_its_line(self, tmp_path, monkeypatch):
        """condor_submit runs the command without a shell: ``echo "MY.X = 1"`` prints the quotes,
        which the pool's condor_submit refuses ("Illegal Identifier"), in both spellings; the
        unquoted one sets X."""
        monkeypatch.chdir(tmp_path)
        (ad,) = build("executable = /bin/true\ninclude command : echo MY.X = 1\nqueue\n", tmp_path)
        assert ad["X"] == 1
        for line in ('include command : echo "MY.X = 1"', 'include : echo "MY.X = 1" |'):
            with pytest.raises(SubmitError, match=r"job\.sub:2: include command: the submit language parser refused "
                                                  r"what 'echo \"MY\.X = 1\"' printed; run it"):
                build(f"executable = /bin/true\n{line}\nqueue\n", tmp_path)

    def test_arguments_both_syntaxes(self, tmp_path):
        (new,) = build("""executable = /bin/echo\narguments = "one 'two words' ""q"" 'it''s'"\nqueue\n""", tmp_path)
        (old,) = build("executable = /bin/echo\narguments = one  two\tthree\nqueue\n", tmp_path)
        assert new["Arguments"] == "one two' 'words \"q\" it''''s"  # as condor_submit 23.9.6 stores it
        assert parse_raw_arguments(new["Arguments"]) == ["one", "two words", '"q"', "it's"]
        assert (old["Args"], "Arguments" in old, "Args" in new) == ("one two three", False, False), \
            "as condor_submit keeps them: the old syntax in Args, the new in Arguments"

    def test_old_syntax_takes_escaped_double_quotes(self, tmp_path):
        (ad,) = build('executable = /bin/echo\narguments = say \\"hello\\" twice\nqueue\n', tmp_path)
        assert ad["Args"] == 'say "hello" twice'  # as condor_submit 23.9.6 stores it

    def test_transfer_input_files_that_exist_urls_and_directories_are_accepted(self, tmp_path):
        (tmp_path / "run" / "data").mkdir(parents=True)
        (tmp_path / "run" / "in.dat").write_text("x")
        (tmp_path / "abs.dat").write_text("x")
        build(f"""executable = /bin/true
            initialdir = run
            transfer_input_files = in.dat, data, data/, {tmp_path}/abs.dat, http://example.org/a.dat, \\
                osdf:///ospool/ap20/data/b.dat, file:///nonexistent/c.dat
            queue
            """, tmp_path)
        build("executable = /bin/true\ntransfer_input_files = nosuch.dat\nqueue\n", tmp_path)  # not read at submit

    def test_condor_submits_own_commands_close_to_others_are_not_taken_for_misspellings(self, tmp_path):
        # a FIFE jobsub submit file's lines; condor_submit 23.9.6 on the test pool queues it
        (ad,) = build("executable = /bin/true\ntransfer_output = True\ntransfer_error = True\n"
                      "transfer_output_files = .empty_file\nqueue\n", tmp_path)
        assert ad["TransferOutput"] == ".empty_file"

    def test_environment_both_syntaxes(self, tmp_path):
        (new,) = build("""executable = /bin/true\nenvironment = "A=1 B='x y'"\nqueue\n""", tmp_path)
        (old,) = build("executable = /bin/true\nenvironment = A=1;B=x y\nqueue\n", tmp_path)
        assert new["Environment"] == old["Environment"] == "A=1 B=x' 'y"  # as condor_submit 23.9.6
        assert parse_raw_environment(new["Environment"]) == {"A": "1", "B": "x y"}

    def test_sizes_priority_batch_name_and_custom_attributes(self, tmp_path):
        (ad,) = build("""
executable = /bin/true
request_memory = 2 GB
request_disk = 1 MB
request_cpus = 2
priority = 7
batch_name = my batch
+DESIRED_Sites = "T2_A,T2_B"
My.Answer = 6 * 7
requirements = stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)
queue
""", tmp_path)
        assert (ad["RequestMemory"], ad["RequestDisk"], ad["RequestCpus"]) == (2048, 1024, 2)
        assert ad["JobPrio"] == 7
        assert ad["JobBatchName"] == "my batch"
        assert ad["DESIRED_Sites"] == "T2_A,T2_B"
        assert ad.eval("Answer") == 42
        assert "stringListMember" in str(ad.lookup("Requirements"))

    def test_priority_and_max_retries_are_evaluated_as_condor_submit_does(self, tmp_path):
        """The test pool's condor_submit -dry-run: ``priority = $(Process) * 10 - 5`` gives JobPrio
        -5, 5 and 15, ``2.5`` gives 2, ``true`` 1, ``max_retries = 1 + 2`` 3; ``abc`` is refused."""
        ads = build("executable = /bin/true\npriority = $(Process) * 10 - 5\nmax_retries = 1 + 2\nqueue 3\n",
                    tmp_path)
        assert [(ad["JobPrio"], ad["JobMaxRetries"]) for ad in ads] == [(-5, 3), (5, 3), (15, 3)]
        assert [build(f"executable = /bin/true\npriority = {value}\nqueue\n", tmp_path)[0]["JobPrio"]
                for value in ("2.5", "true")] == [2, 1]
        with pytest.raises(SubmitError, match=r"job.sub:2: priority: expected a whole number .* got 'abc'"):
            build("executable = /bin/true\npriority = abc\nqueue\n", tmp_path)

    def test_hold_true(self, tmp_path):
        (ad,) = build("executable = /bin/true\nhold = true\nqueue\n", tmp_path)
        assert ad["JobStatus"] == JobStatus.HELD
        assert ad["HoldReasonCode"] == 15
        assert ad["HoldReason"] == "submitted on hold at user's request"

    def test_universes(self, tmp_path):
        for name, number in (("vanilla", 5), ("scheduler", 7), ("local", 12)):
            (ad,) = build(f"universe = {name}\nexecutable = /bin/true\nqueue\n", tmp_path)
            assert ad["JobUniverse"] == number

    def test_relative_executable_is_found_from_the_submit_directory_not_initialdir(self, tmp_path):
        """condor_submit resolves ``executable`` against its own working directory
        (``full_path(ename, false)`` in SetExecutable); only the job's files use initialdir."""
        script = tmp_path / "run.sh"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        (tmp_path / "out").mkdir()
        (ad,) = build("executable = run.sh\ninitialdir = out\noutput = o.txt\nqueue\n", tmp_path)
        assert ad["Cmd"] == str(script)
        assert ad["Out"] == "o.txt"  # in Iwd
        assert ad["Iwd"] == str(tmp_path / "out")

    def test_hold_reasons_are_expressions(self, tmp_path):
        """periodic_hold_reason and on_exit_hold_reason are ClassAd expressions that evaluate to
        the HoldReason (condor_submit: AssignJobExpr(ATTR_PERIODIC_HOLD_REASON, ...))."""
        (ad,) = build("""
executable = /bin/true
periodic_hold = MemoryUsage > RequestMemory
periodic_hold_reason = "Memory usage above request_memory"
on_exit_hold = ExitCode != 0
on_exit_hold_reason = strcat("exit code ", ExitCode)
queue
""", tmp_path)
        ad["ExitCode"] = 3
        assert ad.eval("PeriodicHoldReason") == "Memory usage above request_memory"
        assert ad.eval("OnExitHoldReason") == "exit code 3"

    def test_max_retries_keeps_the_users_on_exit_remove(self, tmp_path):
        """With max_retries, condor_submit's OnExitRemove is
        ``NumJobCompletions > JobMaxRetries || ExitCode =?= 0 || (on_exit_remove)`` (SetJobRetries)."""
        (ad,) = build("executable = /bin/true\nmax_retries = 5\non_exit_remove = ExitCode == 7\nqueue\n", tmp_path)
        assert ad["JobMaxRetries"] == 5
        ad["NumJobCompletions"] = 1
        ad["ExitCode"] = 1
        assert ad.eval("OnExitRemove") is False, "exit 1 is retried"
        ad["ExitCode"] = 0
        assert ad.eval("OnExitRemove") is True, "success ends the retries"
        ad["ExitCode"] = 7
        assert ad.eval("OnExitRemove") is True, "the user's on_exit_remove ends them too"
        ad["ExitCode"] = 1
        ad["NumJobCompletions"] = 6
        assert ad.eval("OnExitRemove") is True, "and so does running out of retries"

    @pytest.mark.parametrize("line, value", [("", 0), ("notification = Never", 0), ("notification = Always", 1),
                                             ("notification = Complete", 2), ("notification = error", 3),
                                             ("notification = START", 4)])
    def test_notification_sets_job_notification_as_the_pool_does(self, tmp_path, line, value):
        """The values the test pool's condor_submit (23.9.6) gave; NEVER when it is not set."""
        (ad,) = build(f"executable = /bin/true\n{line}\nqueue\n", tmp_path)
        assert ad["JobNotification"] == value


# ------------------------------------------------------------------------------------ bad input

BAD = {
    # name: (lines, key the message must name, more words it must contain)
    "unknown-command": ("executable = /bin/true\nrequst_memory = 2000", "requst_memory", ["request_memory"]),
    "missing-executable": ("executable = /nonexistent/bin/prog", "executable", ["/nonexistent/bin/prog"]),
    "bad-requirements": ("executable = /bin/true\nrequirements = (Memory > ", "requirements", []),
    "bad-request-memory": ("executable = /bin/true\nrequest_memory = lots", "request_memory", ["lots"]),
    "unsupported-universe": ("universe = grid\nexecutable = /bin/true", "universe", ["grid"]),
    "bad-notification": ("executable = /bin/true\nnotification = sometimes", "notification", ["Complete", "sometimes"]),
    # condor_submit refuses a bare double quote in the old syntax (ArgList's V1 parsing) rather
    # than give the job the arguments '"exit' '3"'
    "old-syntax-double-quote": ('executable = /bin/sh\narguments = -c "exit 3"', "arguments",
                                [":2:", '"exit 3"', "double quotes (new syntax)", "arguments = \"-c 'exit 3'\""]),
    "new-syntax-trailing-text": ('executable = /bin/sh\narguments = "-c" "exit 3"', "arguments",
                                 [":2:", "after the closing double quote"]),
    # condor_submit 23.9.6's reasons for an if it cannot evaluate; $(DEFINED x) is no 23.x macro
    "if-not-a-condition": ("executable = /bin/true\nif $(DEFINED mode)\narguments = fast\nendif", "if",
                           [":2:", "complex conditionals are not supported", "if defined mode"]),
    "else-without-if": ("executable = /bin/true\nelse\narguments = x", "if", [":2:", "else without matching if"]),
    "if-without-endif": ("executable = /bin/true\nif defined mode\narguments = fast", "endif", [":2:"]),
    "should-transfer-files": ("executable = /bin/true\nshould_transfer_files = maybe", "should_transfer_files",
                              [":2:", "maybe", "YES, NO, or IF_NEEDED"]),
    "transfer-disabled": ("executable = /bin/true\nshould_transfer_files = NO\ntransfer_input_files = in.dat",
                          "transfer_input_files", [":3:", "should_transfer_files = YES"]),
    "unquoted-remaps": ("executable = /bin/true\ntransfer_output_remaps = out.txt = res.txt", "transfer_output_remaps",
                        [":2:", "must be a quoted string"]),
    # the pool queues it, and it stays idle on slots with no GPU: said at once rather than "a typo of request_cpus"
    "request-gpus": ("executable = /bin/true\nrequest_cpus = 1\nrequest_gpus = 1\ngpus_minimum_capability = 8.0",
                     "request_gpus", [":3:", "no GPUs", "--backend htcondor"]),
    "custom-resource": ("executable = /bin/true\nrequest_virtualmemory = 1000", "request_virtualmemory",
                        [":2:", "no 'virtualmemory' resource"]),
}


def _bad_text(name: str, tmp_path: Path) -> str:
    lines = BAD[name][0]
    (tmp_path / "in.dat").write_text("an input file that exists\n")
    return lines + "\nqueue\n"


@pytest.mark.parametrize("name", list(BAD))
def test_bad_submit_description_names_file_and_key(name, tmp_path):
    file = str(tmp_path / f"{name}.sub")
    with pytest.raises(SubmitError) as error:
        build(_bad_text(name, tmp_path), tmp_path, file=file)
    message = str(error.value)
    _, key, words = BAD[name]
    assert file in message
    assert key in message
    for word in words:
        assert word in message


@pytest.mark.parametrize("name", list(BAD))
def test_bad_submit_file_via_cli_queues_nothing(name, schedd):
    path = schedd.write(f"{name}.sub", _bad_text(name, schedd.work))
    result = schedd.cli("job", "submit", str(path))
    assert result.returncode != 0
    assert "submitted to cluster" not in result.stdout
    _, key, words = BAD[name]
    assert result.stderr.startswith("ERROR: ")
    assert len(result.stderr.splitlines()) == 1, result.stderr  # nothing the bindings print themselves
    assert str(path) in result.stderr
    assert key in result.stderr
    for word in words:
        assert word in result.stderr
    assert schedd.client.query() == []
    assert schedd.client.history() == []


@pytest.mark.parametrize("text, said", [
    ("executable = /bin/true\narguments = 1\nqueue 3 in (a b\n",
     "q.sub:3: cannot expand 'queue 3 in (a b': Reached end of file without finding closing brace ')' "
     "for Queue command"),
    ("executable = /bin/true\nqueue abc\n", "q.sub:2: cannot expand 'queue abc': Invalid Queue count expression"),
])
def test_a_bad_queue_statement_is_named_by_its_line(text, said, schedd):
    """condor_submit says "on Line 3 of submit file"; the bindings' own words said "on line -2"."""
    schedd.write("q.sub", text)
    result = schedd.cli("job", "submit", "q.sub")
    assert (result.returncode, result.stderr) == (1, f"ERROR: {said}\n")
    assert schedd.client.query() == []


def test_a_bad_proc_queues_none_of_its_cluster(schedd):
    with pytest.raises(SubmitError, match="/nonexistent/prog"):
        schedd.submit("executable = $(prog)\nqueue prog in (/bin/true, /nonexistent/prog)\n")
    assert schedd.client.query() == []
    assert schedd.client.history() == []


# ------------------------------------------------------------------------------------ refused actions

@pytest.fixture
def steady_queue(schedd):
    """A queue that does not change by itself: one job held at submit, one idle that fits no slot,
    and one job that completed and left."""
    held = schedd.submit("executable = /bin/true\nhold = true\nqueue\n", name="held.sub")
    idle = schedd.submit("executable = /bin/true\nrequest_memory = 100 TB\nqueue\n", name="idle.sub")
    done = schedd.submit("executable = /bin/true\nqueue\n", name="done.sub")
    schedd.wait_history(f"{done.cluster}.0")
    ids = {"held": f"{held.cluster}.0", "idle": f"{idle.cluster}.0", "done": f"{done.cluster}.0"}
    assert schedd.job(ids["held"])["JobStatus"] == JobStatus.HELD
    assert schedd.job(ids["idle"])["JobStatus"] == JobStatus.IDLE
    return schedd, ids


def snapshot(schedd) -> list[str]:
    return [str(ad) for ad in schedd.client.query()]


@pytest.mark.parametrize("action, which, words", [
    (JobAction.Hold, "done", ["completed"]),
    (JobAction.Release, "idle", ["not held"]),
    (JobAction.Release, "unknown", ["not in the queue"]),
    (JobAction.Hold, "unknown", ["not in the queue"]),
    (JobAction.Remove, "unknown", ["not in the queue"]),
])
def test_refused_action_raises_and_leaves_the_queue_unchanged(steady_queue, action, which, words):
    schedd, ids = steady_queue
    job = ids.get(which, "999.0")
    before = snapshot(schedd)
    with pytest.raises(ScheddError) as error:
        schedd.client.act(action, job)
    assert job in str(error.value)
    for word in words:
        assert word in str(error.value)
    assert snapshot(schedd) == before


@pytest.mark.parametrize("command, which", [("hold", "done"), ("release", "idle"), ("rm", "unknown")])
def test_refused_action_via_cli_exits_non_zero(steady_queue, command, which):
    schedd, ids = steady_queue
    job = ids.get(which, "999.0")
    before = snapshot(schedd)
    result = schedd.cli(command, job)
    assert result.returncode == 1, "as condor_hold/release/rm exit"
    blank, line = result.stderr.splitlines()  # condor_hold's blank line, then the job's
    assert blank == "" and job in line, result.stderr
    assert result.stdout == ""
    assert snapshot(schedd) == before


def test_bad_job_id_via_cli(steady_queue):
    schedd, _ = steady_queue
    before = snapshot(schedd)
    result = schedd.cli("hold", "twelve")  # condor_hold takes a word that is not a number for an owner
    assert (result.returncode, result.stderr) == (1, '\nCouldn\'t find/hold all jobs of user "twelve"\n')
    result = schedd.cli("hold", "1.x")
    assert (result.returncode, result.stderr) == (1, '\nCouldn\'t find/hold all jobs of user "1.x"\n')
    assert snapshot(schedd) == before


def test_unreadable_submit_file_via_cli(schedd):
    result = schedd.cli("job", "submit", str(schedd.work / "missing.sub"))
    assert result.returncode != 0
    assert "missing.sub" in result.stderr


# -------------------------------------------------------- as condor_submit 23.9.6 read them on the pool

class TestAsTheTestPoolReadsThem:
    """Submit files as the manual writes them, whose ads the test pool's condor_submit -dry-run
    built differently from crabtui's; each expected value is the pool's."""

    def test_continuation_lines_are_one_command(self, tmp_path):
        (ad,) = build("""# a comment
executable = /bin/echo
   # an indented comment
arguments = one \\
  two \\
  three
requirements = (OpSys == "LINUX") && \\
               (Arch == "X86_64")
queue
""", tmp_path)
        assert ad["Args"] == "one two three"
        assert str(ad.lookup("Requirements")) == '(OpSys == "LINUX") && (Arch == "X86_64")'

    def test_arguments_with_blanks_are_stored_as_the_pool_stores_them(self, tmp_path):
        (ad,) = build("""executable = /bin/echo
arguments = "'a  b' '' 'x''y' q""r ' lead'"
queue
""", tmp_path)
        assert ad["Arguments"] == "a'  'b '' x''''y q\"r ' 'lead"
        assert parse_raw_arguments(ad["Arguments"]) == ["a  b", "", "x'y", 'q"r', " lead"]
        (bare,) = build("executable = /bin/true\nqueue\n", tmp_path)
        assert (bare["Arguments"], bare["Environment"]) == ("", "")

    def test_environment_is_sorted_by_name(self, tmp_path):
        (ad,) = build("""executable = /bin/true\nenvironment = "Z=1 A=2 M='x y' E="\nqueue\n""", tmp_path)
        assert ad["Environment"] == "A=2 E= M=x' 'y Z=1"

    def test_getenv_passes_the_submitters_environment_not_the_bindings_config(self, tmp_path):
        (ad,) = build("executable = /bin/true\ngetenv = True\nqueue\n", tmp_path,
                      environ={"CONDOR_CONFIG": os.devnull, "HOME": "/home/alice", "B": "x y"})
        assert ad["Environment"] == "B=x' 'y HOME=/home/alice"

    @pytest.mark.parametrize("commands, on_exit_remove, attrs", [
        ("max_retries = 3", "NumJobCompletions > JobMaxRetries || ExitCode =?= 0", {"JobMaxRetries": 3}),
        ("max_retries = 3\nretry_until = ExitCode == 7\nsuccess_exit_code = 2",
         "NumJobCompletions > JobMaxRetries || ExitCode =?= JobSuccessExitCode || ExitCode == 7",
         {"JobMaxRetries": 3, "JobSuccessExitCode": 2}),
        ("retry_until = 7", "NumJobCompletions > JobMaxRetries || ExitCode =?= 0 || ExitCode =?= 7",
         {"JobMaxRetries": 2}),
        ("success_exit_code = 3", "NumJobCompletions > JobMaxRetries || ExitCode =?= JobSuccessExitCode",
         {"JobMaxRetries": 2, "JobSuccessExitCode": 3}),
        ("max_retries = 2\non_exit_remove = ExitCode == 5",
         "NumJobCompletions > JobMaxRetries || ExitCode =?= 0 || ExitCode == 5", {"JobMaxRetries": 2}),
    ])
    def test_retries_end_as_the_pool_ends_them(self, tmp_path, commands, on_exit_remove, attrs):
        (ad,) = build(f"executable = /bin/true\n{commands}\nqueue\n", tmp_path)
        assert str(ad.lookup("OnExitRemove")) == str(classad2.ExprTree(on_exit_remove))
        assert {key: ad.get(key) for key in attrs} == attrs

    def test_retry_until_ends_the_retries_at_its_exit_code(self, tmp_path):
        (ad,) = build("executable = /bin/true\nmax_retries = 5\nretry_until = 7\nqueue\n", tmp_path)
        ad["NumJobCompletions"] = 1
        ad["ExitCode"] = 7
        assert ad.eval("OnExitRemove") is True
        ad["ExitCode"] = 8
        assert ad.eval("OnExitRemove") is False  # retried

    def test_file_transfer_commands_are_recorded(self, tmp_path):
        (tmp_path / "list.txt").write_text("a\n")
        (tmp_path / "x.dat").write_text("")
        (ad,) = build("""executable = /bin/true
should_transfer_files = YES
when_to_transfer_output = ON_EXIT_OR_EVICT
transfer_input_files = list.txt, x.dat
transfer_output_files = out.txt
queue
""", tmp_path)
        assert [ad[k] for k in ("ShouldTransferFiles", "WhenToTransferOutput", "TransferInput", "TransferOutput")] \
            == ["YES", "ON_EXIT_OR_EVICT", "list.txt,x.dat", "out.txt"]
        (default,) = build("executable = /bin/true\nqueue\n", tmp_path)
        assert (default["ShouldTransferFiles"], default["WhenToTransferOutput"]) == ("IF_NEEDED", "ON_EXIT")
        (no,) = build("executable = /bin/true\nshould_transfer_files = NO\nqueue\n", tmp_path)
        assert (no["ShouldTransferFiles"], "WhenToTransferOutput" in no) == ("NO", False)

    def test_transfer_output_remaps_is_recorded_per_job(self, tmp_path):
        """The manual's form: one quoted string of name = newname pairs, with macros, as
        condor_submit 23.9.6 puts it in TransferOutputRemaps (seen with its -dry-run)."""
        ads = build("""executable = /bin/true
should_transfer_files = YES
transfer_output_remaps = "out.txt = results/out.$(Process).txt; err.txt=results/err.txt"
queue 2
""", tmp_path)
        assert [ad["TransferOutputRemaps"] for ad in ads] == [
            "out.txt = results/out.0.txt; err.txt=results/err.txt",
            "out.txt = results/out.1.txt; err.txt=results/err.txt"]

    def test_concurrency_limits_notify_user_and_deferral(self, tmp_path):
        (ad,) = build("""executable = /bin/true
concurrency_limits = sw_license:2, DB
notify_user = me@example.org
notification = Complete
deferral_time = 1900000000
queue
""", tmp_path)
        assert (ad["ConcurrencyLimits"], ad["NotifyUser"], ad["JobNotification"]) == \
            ("db,sw_license:2", "me@example.org", 2)
        assert (ad["DeferralTime"], ad["DeferralWindow"], ad["DeferralPrepTime"]) == (1900000000, 0, 300)

    def test_accounting_group_names_the_group_and_user_charged(self, tmp_path):
        """condor_userprio and condor_q -af AccountingGroup see group.user, the owner by default."""
        (ad,) = build("executable = /bin/true\naccounting_group = group_physics\nqueue\n", tmp_path)
        assert (ad["AcctGroup"], ad["AcctGroupUser"], ad["AccountingGroup"]) == \
            ("group_physics", getpass.getuser(), f"group_physics.{getpass.getuser()}")
        (ad,) = build("executable = /bin/true\naccounting_group = group_a\naccounting_group_user = alice\nqueue\n",
                      tmp_path)
        assert (ad["AcctGroupUser"], ad["AccountingGroup"]) == ("alice", "group_a.alice")
        (ad,) = build("executable = /bin/true\naccounting_group_user = alice\nqueue\n", tmp_path)
        assert ("AcctGroup" in ad, ad["AcctGroupUser"], ad["AccountingGroup"]) == (False, "alice", "alice")
        (ad,) = build("executable = /bin/true\nqueue\n", tmp_path)
        assert not {"AcctGroup", "AcctGroupUser", "AccountingGroup"} & set(ad.keys())

    def test_commands_that_look_like_misspellings_but_are_condor_submits_own(self, tmp_path):
        """Each is one letter or word away from a command crabtui acts on; condor_submit 23.9.6
        takes them all without a warning (and none asks for a GPU)."""
        (ad,) = build("""executable = /bin/true
request_gpus = 0
stream_input = false
transfer_input = false
dont_encrypt_input_files = a.txt
dont_encrypt_output_files = b.txt
use_x509userproxy = false
transfer_checkpoint_files = ckpt.dat
concurrency_limits_expr = "a"
submit_event_user_notes = hello
queue
""", tmp_path)
        assert ad["Cmd"] == "/bin/true"
        with pytest.raises(SubmitError, match="did you mean 'request_cpus'"):
            build("executable = /bin/true\nrequest_cpu = 2\nqueue\n", tmp_path)

    def test_backslashes_in_strings_are_kept_as_condor_submit_keeps_them(self, tmp_path):
        """Old ClassAd syntax: a backslash is itself unless it quotes a double quote, so a regexp
        keeps its escaped dots and a Windows-style path its separators (as on the pool)."""
        (ad,) = build(r"""executable = /bin/true
requirements = regexp("\.example\.org$", Machine)
My.Pattern = "a\.b\d\n"
+Win = "C:\temp\new"
My.Quoted = "say \"hi\""
queue
""", tmp_path)
        assert (ad["Pattern"], ad["Win"], ad["Quoted"]) == (r"a\.b\d\n", r"C:\temp\new", 'say "hi"')
        requirements = ad.lookup("Requirements")
        assert requirements.eval(classad2.ClassAd({"Machine": "node1.example.org"})) is True
        assert requirements.eval(classad2.ClassAd({"Machine": "node1-example-org"})) is False

    def test_a_list_file_with_a_blank_line_queues_a_job_for_it(self, tmp_path):
        """The bindings refuse such a file ("invalid qargs"); condor_submit queues one job a line."""
        (tmp_path / "cols.txt").write_text("a b c\na, b, c\n\t t1 ,t2\nsolo\n\n")
        ads = build('executable = /bin/echo\narguments = "[$(x)] [$(y)] $(Row)"\nqueue x,y from cols.txt\n',
                    tmp_path)
        # a variable a line has no word for keeps the line before's value, as on the pool
        assert [ad["Arguments"] for ad in ads] == ["[a] [b c] 0", "[a] [b, c] 1", "[t1] [,t2] 2", "[solo] [,t2] 3",
                                                   "[] [,t2] 4"]
        (one,) = build("executable = /bin/echo\narguments = $(x)\nqueue x from one.txt\n",
                       _write(tmp_path, "one.txt", "# not a comment\n"))
        assert one["Args"] == "# not a comment"


def _write(directory: Path, name: str, text: str) -> Path:
    (directory / name).write_text(text)
    return directory
