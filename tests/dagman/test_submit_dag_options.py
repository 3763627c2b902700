"""``crabtui dag submit`` typed as condor_submit_dag is typed: its options shortened as 23.9.6
reads them, the ones crabtui does not do refused in one line, and a DAG whose CONFIG file
DAGMan would refuse refused before anything is queued."""

from __future__ import annotations

import re
import subprocess

import pytest

from engine.dagman.csd_args import find_flag
from engine.schedd.local.submit import parse_raw_arguments
from installed import CRABTUI
from test_dag_submit import crabtui, finished, gated, release, runs  # noqa: F401  (gated: a fixture)

DAG = "# diamond, as the DAGMan tutorial writes it\nJOB A job.sub\nVARS A code=\"0\"\n"


def one_error_line(result, prefix: str = "ERROR: ") -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith(prefix) and "Usage:" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(("typed", "flag"), [
    ("-maxj", "-MaxJobs"), ("-maxi", "-MaxIdle"), ("-maxpr", "-MaxPre"), ("-maxpo", "-MaxPost"),
    ("-MAXP", "-MaxPost"), ("-m", "-MaxHold"), ("-no_s", "-no_submit"), ("-not", "-Notification"),
    ("-no", "-no_recurse"), ("-a", "-AllowVersionMismatch"), ("-ap", "-Append"), ("-f", "-f"),
    ("-fo", "-Force"), ("-d", "-Dag"), ("-de", "-Debug"), ("-u", "-update_submit"), ("-us", "-UseDagDir"),
    ("-o", "-outfile_dir"), ("-c", "-Config"), ("-b", "-Batch-Name"), ("--maxjobs", "-MaxJobs"),
])
def test_shortened_options_mean_what_they_mean_to_condor_submit_dag(typed, flag):
    assert find_flag(typed).name == flag


def test_no_such_option_as_typed():
    assert find_flag("-zz") is None and find_flag("--maxj") is None, "two dashes want the full name"


def test_options_typed_short_are_used(gated, schedd):
    (gated / "d.dag").write_text(DAG)
    release(gated, "A")
    result = crabtui(schedd, "dag", "submit", "-maxj", "1", "-maxi", "5", "-ap", "My.Foo = 1", "-usedagdir",
                     "-debug", "5", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    sub = (gated / "d.dag.condor.sub").read_text()
    assert "-MaxJobs 1 -MaxIdle 5" in sub and "My.Foo = 1" in sub
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    ad = finished(schedd, cluster)
    assert ad["ExitCode"] == 0 and ad["Foo"] == 1
    out = (gated / "d.dag.dagman.out").read_text()
    # the settings DAGMan lists are its configuration's, before the command line (seen on the pool)
    assert "DAGMAN_MAX_JOBS_SUBMITTED setting: 0" in out and "DAGMAN_VERBOSITY setting: 3" in out
    assert "Note: 0 total job deferrals because of -MaxJobs limit (1)" in out


def test_suppress_notification_keeps_node_jobs_from_sending_mail(gated, schedd):
    """condor_submit_dag -suppress_notification: the node job of a submit file that asks for mail
    gets JobNotification 0 (never), as on the 23.9.6 pool; without it, the file's setting holds."""
    (gated / "mail.sub").write_text("executable = /bin/true\nnotification = Always\n"
                                    "notify_user = nobody@example.com\nqueue\n")
    (gated / "m.dag").write_text("JOB A mail.sub\n")
    for options, notification in ((["-suppress_notification"], 0), (["-f"], 1)):
        result = crabtui(schedd, "dag", "submit", *options, "m.dag", cwd=gated)
        assert result.returncode == 0, result.stderr
        cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
        finished(schedd, cluster)
        node = schedd.history(f"DAGManJobId == {cluster}", ["JobNotification"], match=1)[0]
        assert node["JobNotification"] == notification, options


def test_a_sub_dag_inherits_suppress_notification_as_on_the_pool(gated, schedd):
    """On the 23.9.6 pool, DAGMan writes -suppress_notification into the SUBDAG EXTERNAL's
    .condor.sub, and the sub-DAG's node job of a file asking for mail gets JobNotification 0."""
    (gated / "mail.sub").write_text("executable = /bin/true\nnotification = Always\n"
                                    "notify_user = nobody@example.com\nqueue\n")
    (gated / "inner.dag").write_text("JOB X mail.sub\n")
    (gated / "outer.dag").write_text("JOB A mail.sub\nSUBDAG EXTERNAL S inner.dag\nPARENT A CHILD S\n")
    result = crabtui(schedd, "dag", "submit", "-suppress_notification", "outer.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    finished(schedd, int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1)))
    nodes = schedd.history('DAGNodeName == "X" || DAGNodeName == "A"', ["DAGNodeName", "JobNotification"])
    assert sorted((ad["DAGNodeName"], ad["JobNotification"]) for ad in nodes) == [("A", 0), ("X", 0)]
    argv = parse_raw_arguments(re.search(r'arguments\s*= "(.*)"', (gated / "inner.dag.condor.sub").read_text())[1])
    assert "-suppress_notification" in argv


def test_dagman_out_lists_its_command_line_and_workflow_as_on_the_pool(gated, schedd):
    """23.9.6's dagman.out after the settings (seen on the pool, outer.dag+252 and its sub-DAG):
    the join-node line, argv, the workflow's batch and accounting group, and for the top DAG the
    DAGNodeName warning; the sub-DAG's workflow is its top DAG's."""
    (gated / "true.sub").write_text("executable = /bin/true\nqueue\n")
    (gated / "inner.dag").write_text("JOB X true.sub\n")
    (gated / "outer.dag").write_text("JOB A true.sub\nSUBDAG EXTERNAL S inner.dag\nPARENT A CHILD S\n")
    result = crabtui(schedd, "dag", "submit", "outer.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    top = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    finished(schedd, top)
    sub = schedd.history('DAGNodeName == "S"', ["ClusterId"])[0]["ClusterId"]
    for dag, cluster, warned in (("outer.dag", top, True), ("inner.dag", sub, False)):
        out = [line[18:] for line in (gated / f"{dag}.dagman.out").read_text().splitlines()]
        said = out[out.index("DAGMAN_REMOVE_NODE_JOBS setting: True") + 1:out.index(next(
            line for line in out if line.startswith("Default node log file is:")))]
        argv = [f'argv[{i}] == "{arg}"' for i, arg in enumerate(
            [f"condor_scheduniv_exec.{cluster}.0", "-Lockfile", f"{dag}.lock", "-AutoRescue", "1", "-MaxIdle",
             "1000", "-Dag", dag])]
        assert said == ["DAGMAN will adjust edges after parsing", *argv, f"Workflow batch-id: <{top}.0>",
                        f"Workflow batch-name: <outer.dag+{top}>", "Workflow accounting_group: <>",
                        "Workflow accounting_group_user: <>"] + ["Warning: failed to get attribute DAGNodeName"] * warned


def test_notification_is_written_as_typed(gated, schedd):
    """condor_submit_dag -notification NEVER writes 'notification = NEVER' (seen on the pool), and
    the DAGMan job's JobNotification is 0."""
    (gated / "d.dag").write_text(DAG)
    release(gated, "A")
    result = crabtui(schedd, "dag", "submit", "-notification", "NEVER", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^notification\s*= NEVER$", (gated / "d.dag.condor.sub").read_text(), re.M)
    cluster = int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))
    assert finished(schedd, cluster)["JobNotification"] == 0


def test_no_submit_writes_the_submit_file_and_queues_nothing(gated, schedd):
    (gated / "d.dag").write_text(DAG)
    result = crabtui(schedd, "dag", "submit", "-no_submit", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert "not submitting" in result.stdout and "submitted to cluster" not in result.stdout
    assert (gated / "d.dag.condor.sub").exists() and schedd.query("true") == []
    said = result.stdout.splitlines()
    command = f"crabtui --state-dir {schedd.state.path} job submit d.dag.condor.sub"
    assert said[-4:] == ["", "-no_submit given, not submitting DAG to HTCondor. You can do this with:",
                         f'"{command}"', "-" * 71], "as 23.9.6 says it, with the command for this schedd"
    queued = subprocess.run([CRABTUI, *command.split()[1:]], cwd=gated, capture_output=True, text=True, timeout=60)
    assert queued.returncode == 0 and "1 job(s) submitted to cluster" in queued.stdout, queued.stderr
    assert [ad["JobUniverse"] for ad in schedd.query("true", ["JobUniverse"])] == [7], "DAGMan, in this schedd"


def test_insert_sub_file_is_copied_with_its_comments_as_condor_submit_dag_copies_it(gated, schedd):
    """23.9.6's condor_submit_dag -insert_sub_file: each line stripped of its blanks, comments and
    blank lines kept, before the -append commands and the queue line."""
    (gated / "d.dag").write_text(DAG)
    (gated / "extra.sub").write_text('# my comment\n+Extra = "yes"\n\n  # indented comment\n'
                                     "\trequest_memory = 100 # trailing  \n")
    result = crabtui(schedd, "dag", "submit", "-no_submit", "-insert_sub_file", "extra.sub", "-append", "+A = 1",
                     "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert (gated / "d.dag.condor.sub").read_text().endswith(
        '\n# my comment\n+Extra = "yes"\n\n# indented comment\nrequest_memory = 100 # trailing\n+A = 1\nqueue\n')


def test_insert_sub_file_continuation_lines_are_joined_as_condor_submit_dag_joins_them(gated, schedd):
    """23.9.6's condor_submit_dag on the test pool: a line ending in a backslash is joined with the
    next, each stripped first ('+Cont = 1 \\' and '  + 2' make '+Cont = 1 + 2')."""
    (gated / "d.dag").write_text(DAG)
    (gated / "extra.sub").write_text("requirements = (Arch == \"X86_64\") && \\\n    (OpSys == \"LINUX\")\n"
                                     "+Cont = 1 \\\n  + 2\n")
    result = crabtui(schedd, "dag", "submit", "-no_submit", "-insert_sub_file", "extra.sub", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert (gated / "d.dag.condor.sub").read_text().endswith(
        '\nrequirements = (Arch == "X86_64") && (OpSys == "LINUX")\n+Cont = 1 + 2\nqueue\n')


def test_a_rescue_dag_to_pick_up_is_announced_as_condor_submit_dag_does(gated, schedd):
    (gated / "d.dag").write_text(DAG)
    for name in ("d.dag.condor.sub", "d.dag.dagman.out", "d.dag.rescue001", "d.dag.rescue002"):
        (gated / name).write_text("# an earlier run's\n")
    result = crabtui(schedd, "dag", "submit", "-no_submit", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == ["", "Running rescue DAG 2", "-" * 71], "after an empty line, as 23.9.6"
    chosen = crabtui(schedd, "dag", "submit", "-no_submit", "-dorescuefrom", "1", "d.dag", cwd=gated)
    assert chosen.returncode == 0 and chosen.stdout.splitlines()[:2] == ["", "Running rescue DAG 1"], chosen.stderr
    forced = crabtui(schedd, "dag", "submit", "-no_submit", "-force", "d.dag", cwd=gated)
    assert forced.returncode == 0 and "Running rescue DAG" not in forced.stdout, forced.stderr
    assert forced.stdout.splitlines()[:2] == ["", "-" * 71]
    assert forced.stderr.splitlines() == ["Renaming rescue DAGs newer than number 0", "Renaming d.dag.rescue001",
                                          "Renaming d.dag.rescue002"], "condor_submit_dag -f says what it renamed"


@pytest.mark.parametrize(("argv", "said"), [
    (["-maxjobs", "x", "d.dag"], "ERROR: -maxjobs: 'x' is not a number; give the most node jobs to have queued at once"),
    (["-notification", "sometimes", "d.dag"], "ERROR: -notification: 'sometimes' is no notification setting"),
    (["-outfile_dir", "nodir", "d.dag"], "ERROR: -outfile_dir nodir: there is no such directory"),
    (["-zz", "d.dag"], "ERROR: -zz: no such condor_submit_dag option"),
    (["-remote", "cms-schedd", "d.dag"], "ERROR: -remote: crabtui does not support this condor_submit_dag option"),
    (["-maxj"], "ERROR: -maxj (-MaxJobs): give a number after it"),
    ([], "ERROR: name the DAG file to submit"),
    (["-a", "My.Foo = 1", "d.dag"], "-a is -AllowVersionMismatch, which takes no value"),
    (["-no_submit", "d.dag", "e.dag"], "ERROR: d.dag e.dag: crabtui dag submit runs one DAG file; submit each on its own"),
])
def test_bad_command_lines_get_one_line(gated, schedd, argv, said):
    (gated / "d.dag").write_text(DAG)
    assert said in one_error_line(crabtui(schedd, "dag", "submit", *argv, cwd=gated))
    assert not (gated / "d.dag.condor.sub").exists() and schedd.query("true") == []


def test_dag_run_takes_dagmans_options_as_condor_submit_dag_spells_them(gated, schedd):
    """The options as a .condor.sub's arguments write them for condor_dagman (-MaxJobs, -Debug), in
    any case and shortened; the DAGMan job's own (-batch-name) are refused in one line."""
    (gated / "d.dag").write_text(DAG)
    release(gated, "A")
    result = crabtui(schedd, "dag", "run", "-MaxJobs", "1", "-MAXPRE", "3", "-Debug", "4", "-usedagdir", "d.dag",
                     cwd=gated)
    assert result.returncode == 0, result.stderr
    out = (gated / "d.dag.dagman.out").read_text()
    assert "Note: 0 total job deferrals because of -MaxJobs limit (1)" in out
    assert "Note: 0 total PRE script deferrals because of -MaxPre limit (3) or DEFER" in out
    said = one_error_line(crabtui(schedd, "dag", "run", "-f", "-batch-name", "x", "d.dag", cwd=gated))
    assert said.startswith("ERROR: -batch-name: this condor_submit_dag option sets up the DAGMan job that "
                           "`crabtui dag submit` queues"), said


def test_dag_run_takes_a_lock_file_in_any_case(gated, schedd):
    """condor_dagman's -Lockfile, as a .condor.sub writes it or typed in lower case, names the lock
    file of the run; -lockfile was refused as an unrecognized argument."""
    (gated / "d.dag").write_text(DAG)
    release(gated, "A")
    for typed in ("-lockfile", "-LOCKFILE"):
        result = crabtui(schedd, "dag", "run", "-f", typed, "my.lock", "d.dag", cwd=gated)
        assert result.returncode == 0, result.stderr
    assert runs(gated) == ["A", "A"]


def test_dag_run_of_several_dag_files_says_what_dag_submit_says(gated, schedd):
    (gated / "d.dag").write_text(DAG)
    (gated / "e.dag").write_text(DAG)
    said = one_error_line(crabtui(schedd, "dag", "run", "-maxjobs", "2", "d.dag", "e.dag", cwd=gated))
    assert said.startswith("ERROR: d.dag e.dag: crabtui dag run runs one DAG file; run each on its own, or join them"), said
    assert not (gated / "d.dag.dagman.out").exists() and schedd.query("true") == []


@pytest.mark.parametrize("argv", [["dag", "status", "fail.dag"], ["dag", "status", "abc"], ["dag", "check"],
                                  ["q", "--no-such"], ["--backend", "nope", "q"], ["task", "status", "a", "--task", "b"],
                                  ["dag", "run", "-maxjobs", "x", "d.dag"], ["dag", "run", "-zz", "d.dag"]])
def test_click_usage_errors_are_one_line_with_the_help_to_read(gated, schedd, argv):
    line = one_error_line(crabtui(schedd, *argv, cwd=gated))
    assert re.search(r"; see 'crabtui( \w+)* --help'$", line) or "'crabtui q --help'" in line, line


@pytest.mark.parametrize(("config", "said"), [
    ("DAGMAN_MAX_JOBS_SUBMITTED = lots\n", "lots.config:1: DAGMAN_MAX_JOBS_SUBMITTED = 'lots': expected a number"),
    ("# per-DAG config\nDAGMAN_ALWAYS_RUN_POST = maybe\n", "lots.config:2: DAGMAN_ALWAYS_RUN_POST = 'maybe': "
                                                           "expected True or False"),
    (None, "d.dag: CONFIG lots.config: there is no such file"),
])
def test_a_config_dagman_refuses_is_refused_by_check_and_submit(gated, schedd, config, said):
    (gated / "d.dag").write_text("CONFIG lots.config\n" + DAG)
    if config is not None:
        (gated / "lots.config").write_text(config)
    assert one_error_line(crabtui(schedd, "dag", "check", "d.dag", cwd=gated), prefix="").startswith(said)
    assert said in one_error_line(crabtui(schedd, "dag", "submit", "d.dag", cwd=gated))
    assert not (gated / "d.dag.condor.sub").exists() and schedd.query("true") == []


def test_dagman_stopped_by_its_config_says_why_in_dagman_out(gated, schedd):
    """The config went bad between submit and start: DAGMan's error reaches dagman.out."""
    (gated / "d.dag").write_text("CONFIG d.config\n" + DAG)
    (gated / "d.config").write_text("DAGMAN_MAX_JOBS_SUBMITTED = 2\n")
    assert crabtui(schedd, "dag", "submit", "-no_submit", "d.dag", cwd=gated).returncode == 0
    (gated / "d.config").write_text("DAGMAN_MAX_JOBS_SUBMITTED = lots\n")
    result = crabtui(schedd, "job", "submit", "d.dag.condor.sub", cwd=gated)
    assert result.returncode == 0, result.stderr
    cluster = int(re.search(r"cluster (\d+)", result.stdout).group(1))
    assert finished(schedd, cluster)["ExitCode"] == 1
    out = (gated / "d.dag.dagman.out").read_text()
    assert "ERROR: d.config:1: DAGMAN_MAX_JOBS_SUBMITTED = 'lots': expected a number" in out
    assert runs(gated) == []


def test_environment_options_reach_dagman_and_its_scripts(gated, schedd, monkeypatch):
    """-insert_env sets variables, -include_env and -import_env pass the submitter's, as
    condor_submit_dag 23.9.6 writes them into the .condor.sub (seen on the pool)."""
    (gated / "env.sh").write_text('echo "$ANALYSIS $RUN $MYVAR $OTHER" >> scripts.txt\n')
    (gated / "d.dag").write_text(DAG + "SCRIPT PRE A /bin/sh env.sh\n")
    release(gated, "A")
    monkeypatch.setenv("MYVAR", "mine")
    monkeypatch.setenv("OTHER", "other")
    result = crabtui(schedd, "dag", "submit", "-insert_env", "ANALYSIS=ttbar;RUN=7", "-include_env", "MYVAR",
                     "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert finished(schedd, int(re.search(r"cluster (\d+)\.", result.stdout).group(1)))["ExitCode"] == 0
    sub = (gated / "d.dag.condor.sub").read_text()
    assert re.search(r"^getenv\s*= CONDOR_CONFIG,.*,MYVAR$", sub, re.M) and "ANALYSIS=ttbar RUN=7" in sub
    result = crabtui(schedd, "dag", "submit", "-f", "-import_env", "-insert_env", "RUN=8", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert finished(schedd, int(re.search(r"cluster (\d+)\.", result.stdout).group(1)))["ExitCode"] == 0
    assert (gated / "scripts.txt").read_text().splitlines() == ["ttbar 7 mine ", " 8 mine other"]
    sub = (gated / "d.dag.condor.sub").read_text()
    assert re.search(r"^getenv\s*= CONDOR_CONFIG,_CONDOR_\*,PATH,.*,XDG_RUNTIME_DIR$", sub, re.M), \
        "-import_env writes the variables in, as 23.9.6 does on the pool, and leaves getenv alone"
    written = parse_raw_arguments(re.search(r'^environment\s*= "(.*)"$', sub, re.M).group(1).replace('""', '"'))
    assert "MYVAR=mine" in written and "OTHER=other" in written and "RUN=8" in written
    assert written[:-1] == sorted(written[:-1]) and written[-1].startswith("CRABTUI_STATE_DIR="), written


def test_bad_insert_env_is_one_line(gated, schedd):
    (gated / "d.dag").write_text(DAG)
    line = one_error_line(crabtui(schedd, "dag", "submit", "-insert_env", "ANALYSIS", "d.dag", cwd=gated))
    assert "-insert_env 'ANALYSIS': give KEY=VALUE pairs separated by ';'" in line


def test_autorescue_0_runs_the_dag_from_the_start_and_keeps_its_rescue_dag(gated, schedd):
    (gated / "d.dag").write_text("JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code=\"0\"\nPARENT A CHILD B\n")
    (gated / "d.dag.rescue001").write_text("# Rescue DAG version: 2.0.1 (partial)\nDONE A\n")
    release(gated, "A", "B")
    result = crabtui(schedd, "dag", "submit", "-autorescue", "0", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert "Running rescue DAG" not in result.stdout and "-AutoRescue 0" in (gated / "d.dag.condor.sub").read_text()
    assert finished(schedd, int(re.search(r"cluster (\d+)\.", result.stdout).group(1)))["ExitCode"] == 0
    assert runs(gated) == ["A", "B"], "A ran again: the rescue DAG was not used"
    assert (gated / "d.dag.rescue001").exists()
    again = one_error_line(crabtui(schedd, "dag", "submit", "-autorescue", "0", "d.dag", cwd=gated))
    assert "d.dag.condor.sub" in again and "already exists" in again, "no rescue DAG excuses the old files"


def test_update_submit_reruns_over_an_earlier_runs_files(gated, schedd):
    """condor_submit_dag 23.9.6 checks none of the earlier run's files with -update_submit (seen
    on the pool with -autorescue 0 beside a rescue DAG), and names it in its refusal."""
    (gated / "d.dag").write_text(DAG)
    release(gated, "A")
    assert finished(schedd, int(re.search(r"cluster (\d+)\.", crabtui(
        schedd, "dag", "submit", "d.dag", cwd=gated).stdout).group(1)))["ExitCode"] == 0
    refused = one_error_line(crabtui(schedd, "dag", "submit", "-autorescue", "0", "d.dag", cwd=gated))
    assert "-update_submit" in refused
    again = crabtui(schedd, "dag", "submit", "-update_submit", "-autorescue", "0", "d.dag", cwd=gated)
    assert again.returncode == 0, again.stderr
    assert finished(schedd, int(re.search(r"cluster (\d+)\.", again.stdout).group(1)))["ExitCode"] == 0
    assert runs(gated) == ["A", "A"]


def test_the_dags_config_does_not_set_maxidle_under_submit_as_condor_submit_dag_passes_1000(gated, schedd):
    """condor_submit_dag 23.9.6 passes -MaxIdle from its own configuration (1000), which the DAG's
    CONFIG file does not change: a generated DAG's DAGMAN_MAX_JOBS_IDLE is listed in dagman.out
    and then loses to the command line (seen on the pool); `dag run` honours it."""
    (gated / "diamond-0.dag.config").write_text("DAGMAN_MAX_JOBS_IDLE = 4\n")
    (gated / "d.dag").write_text("CONFIG diamond-0.dag.config\n" + DAG)
    release(gated, "A")
    result = crabtui(schedd, "dag", "submit", "d.dag", cwd=gated)
    assert result.returncode == 0, result.stderr
    assert finished(schedd, int(re.search(r"cluster (\d+)\.", result.stdout).group(1)))["ExitCode"] == 0
    out = (gated / "d.dag.dagman.out").read_text()
    assert "DAGMAN_MAX_JOBS_IDLE setting: 4" in out
    assert "Note: 0 total job deferrals because of -MaxIdle limit (1000)" in out


def test_maxidle_0_passes_none_and_the_submitters_dagman_max_jobs_idle_does_not_count(gated, schedd, monkeypatch):
    """condor_submit_dag 23.9.6 given -maxidle 0 passes no -MaxIdle (DAGMan's configuration,
    the DAG's CONFIG file among it, decides), and without -maxidle passes 1000 whatever
    _CONDOR_DAGMAN_MAX_JOBS_IDLE the submitter has (both seen on the pool)."""
    (gated / "d.dag").write_text(DAG)

    def arguments(*options: str) -> str:
        result = crabtui(schedd, "dag", "submit", "-no_submit", "-f", *options, "d.dag", cwd=gated)
        assert result.returncode == 0, result.stderr
        return next(line for line in (gated / "d.dag.condor.sub").read_text().splitlines()
                    if line.startswith("arguments")).lower()

    assert "-maxidle" not in arguments("-maxidle", "0")
    monkeypatch.setenv("_CONDOR_DAGMAN_MAX_JOBS_IDLE", "5")
    assert "-maxidle 1000 " in arguments()
    assert "-maxidle 7 " in arguments("-maxidle", "7")


def test_import_env_for_the_pool_writes_the_environment_of_the_submit(tmp_path, monkeypatch):
    """dag submit --backend htcondor -import_env writes the environment as it is at the submit into
    the .condor.sub, as condor_submit_dag 23.9.6 does, so one written with -no_submit and queued
    later still gives DAGMan that environment, not the later submit's (getenv = true did)."""
    from engine.dagman.submit_dag import DagSubmitOptions, format_condor_dagman_sub

    (tmp_path / "d.dag").write_text(DAG)
    monkeypatch.setenv("MYVAR", "mine")
    sub = format_condor_dagman_sub(str(tmp_path / "d.dag"), DagSubmitOptions(import_env=True, insert_env=("RUN=8",)),
                                   "/usr/bin/condor_dagman", "$CondorVersion: 23.9.6 $")
    assert not re.search(r"^getenv\s*=\s*true", sub, re.M | re.I), sub
    written = parse_raw_arguments(re.search(r'^environment\s*= "(.*)"$', sub, re.M).group(1).replace('""', '"'))
    assert "MYVAR=mine" in written and "RUN=8" in written and written == sorted(written)
    assert any(word.startswith("_CONDOR_DAGMAN_LOG=") for word in written)


def test_import_env_leaves_out_the_bindings_own_condor_config(tmp_path, monkeypatch):
    """-import_env writes the submitter's environment, not the CONDOR_CONFIG=/dev/null the
    bindings set in crabtui's own process when the submitter has no HTCondor configuration:
    a user without CONDOR_CONFIG found one in the DAGMan job's environment."""
    from engine.dagman.submit_dag import DagSubmitOptions, format_condor_sub

    (tmp_path / "d.dag").write_text(DAG)
    monkeypatch.setenv("CONDOR_CONFIG", "/dev/null")  # as importing htcondor2 with none sets it
    monkeypatch.setenv("MYVAR", "mine")
    sub = format_condor_sub(str(tmp_path / "d.dag"), DagSubmitOptions(import_env=True), str(tmp_path / "state"))
    written = parse_raw_arguments(re.search(r'^environment\s*= "(.*)"$', sub, re.M).group(1).replace('""', '"'))
    assert "MYVAR=mine" in written
    assert not any(word.startswith("CONDOR_CONFIG=") for word in written), written
    monkeypatch.setenv("CONDOR_CONFIG", "/etc/condor/condor_config")  # the submitter's own is written
    sub = format_condor_sub(str(tmp_path / "d.dag"), DagSubmitOptions(import_env=True), str(tmp_path / "state"))
    assert "CONDOR_CONFIG=/etc/condor/condor_config" in sub


def test_force_for_the_pool_reaches_dagman_as_condor_submit_dag_passes_it(tmp_path):
    """dag submit -f --backend htcondor: the pool's DAGMan gets -force, as condor_submit_dag
    23.9.6 writes it at the end of the arguments (seen on the pool), and passes it on to the
    condor_submit_dag -no_submit of each SUBDAG node, whose rescue DAGs it renames."""
    from engine.dagman.submit_dag import DagSubmitOptions, format_condor_dagman_sub

    (tmp_path / "d.dag").write_text(DAG)
    forced = format_condor_dagman_sub(str(tmp_path / "d.dag"), DagSubmitOptions(force=True),
                                      "/usr/bin/condor_dagman", "$CondorVersion: 23.9.6 $")
    plain = format_condor_dagman_sub(str(tmp_path / "d.dag"), DagSubmitOptions(),
                                     "/usr/bin/condor_dagman", "$CondorVersion: 23.9.6 $")
    words = parse_raw_arguments(re.search(r'^arguments\s*= "(.*)"$', forced, re.M).group(1))
    assert words[-1] == "-force"
    assert "-force" not in plain
