"""Scripts and files named as the DAGMan manual and tutorial name them: ``SCRIPT PRE A pre.sh A 77``,
``sub/pre.sh``, absolute paths, nodes with DIR, splices with DIR and SUBDAG EXTERNAL.  DAGMan
23.9.6 runs a script from the node's directory and never looks it up on PATH; a script that
cannot start is logged with DaemonCore's reason and counts as having exited 1 (seen on the test
pool, and in tests/htcondor/test_crosscheck.py)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from engine.dag import build_graph, parse_file
from engine.dagman.jobstate_log import read_jobstate_log
from engine.dagman.node_status import NodeState, read_node_status
from engine.dagman.progress import DagWatcher
from engine.dagman.runner import DagMan, Options


def run(path: Path, schedd, **options) -> DagMan:
    dagman = DagMan(build_graph(parse_file(str(path))), schedd, Options(scan_interval=0.05, **options))
    dagman.exit_code = dagman.run()
    return dagman


def script(path: Path, body: str | None = None, executable: bool = True) -> None:
    """A shell script that appends its name and arguments to scripts.txt in its working directory."""
    body = body or f'echo "{path.name} $*" >> scripts.txt\n'

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def dagman_out(dag: Path) -> list[str]:
    """dagman.out without DAGMan's ``MM/DD/YY HH:MM:SS `` prefix."""
    return [line[18:] for line in lines(Path(f"{dag}.dagman.out"))]


def test_the_tutorials_pre_and_post_scripts_run_from_the_dag_directory(dag_dir, schedd):
    script(dag_dir / "pre.sh")
    script(dag_dir / "post.sh")
    dag = dag_dir / "tutorial.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT PRE A pre.sh A 77\nSCRIPT POST A post.sh A $RETURN\n')
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0
    assert lines(dag_dir / "scripts.txt") == ["pre.sh A 77", "post.sh A 0"]
    assert lines(dag_dir / "runs.txt") == ["A 0"]


def test_relative_absolute_and_dir_scripts_are_found_from_the_nodes_directory(dag_dir, schedd):
    script(dag_dir / "sub" / "pre.sh")
    script(dag_dir / "abs.sh")
    (dag_dir / "nd").mkdir()
    (dag_dir / "nd" / "job.sub").write_text((dag_dir / "job.sub").read_text())
    script(dag_dir / "nd" / "only_here.sh")
    script(dag_dir / "nd" / "sub" / "pre.sh")
    script(dag_dir / "top.sh")  # not in nd/: a DIR node's "top.sh" is nd/top.sh, which does not exist
    dag = dag_dir / "dirs.dag"
    dag.write_text('JOB A job.sub\nSCRIPT PRE A sub/pre.sh A\n'
                   f'JOB B job.sub\nSCRIPT PRE B {dag_dir / "abs.sh"} B\n'
                   'JOB C job.sub DIR nd\nSCRIPT PRE C only_here.sh C\n'
                   'JOB D job.sub DIR nd\nSCRIPT PRE D sub/pre.sh D\n'
                   'JOB E job.sub DIR nd\nSCRIPT PRE E top.sh E\n'
                   'VARS ALL_NODES code="0"\n')
    dagman = run(dag, schedd)
    assert sorted(lines(dag_dir / "scripts.txt")) == ["abs.sh B", "pre.sh A"]
    assert sorted(lines(dag_dir / "nd" / "scripts.txt")) == ["only_here.sh C", "pre.sh D"]
    assert sorted(lines(dag_dir / "nd" / "runs.txt")) == ["C 0", "D 0"], "a DIR node's job runs in its DIR"
    assert dagman.nodes["E"].status is NodeState.ERROR
    assert 'Create_Process: Cannot access specified executable "top.sh": errno = 2 (No such file or directory)' \
        in dagman_out(dag)
    assert dagman.exit_code == 1


def test_a_script_is_never_looked_up_on_path(dag_dir, schedd):
    dag = dag_dir / "path.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT PRE A sh -c true\n')
    dagman = run(dag, schedd)
    assert dagman.nodes["A"].status is NodeState.ERROR, "DAGMan 23.9.6 runs 'sh' from the node's directory"
    assert 'Create_Process: Cannot access specified executable "sh": errno = 2 (No such file or directory)' \
        in dagman_out(dag)
    assert lines(dag_dir / "runs.txt") == []


def test_scripts_that_cannot_start_fail_their_node_with_the_reason_in_dagman_out(dag_dir, schedd):
    script(dag_dir / "noexec.sh", executable=False)
    (dag_dir / "badinterp.sh").write_text("#!/no/such/interpreter\nexit 0\n")
    (dag_dir / "badinterp.sh").chmod(0o755)
    dag = dag_dir / "broken.dag"
    # DEFER 1 would re-run a script that exits 1; one that cannot start is never deferred.
    dag.write_text('JOB F job.sub\nSCRIPT DEFER 1 3600 PRE F missing.sh F\n'
                   'JOB G job.sub\nSCRIPT PRE G noexec.sh G\n'
                   'JOB H job.sub\nSCRIPT PRE H badinterp.sh H\n'
                   'JOB I job.sub\nSCRIPT POST I missing.sh I\n'
                   'VARS ALL_NODES code="0"\nJOBSTATE_LOG js.log\n')
    dagman = run(dag, schedd)
    out = dagman_out(dag)
    assert dagman.exit_code == 1
    for node, reason in (("F", 'Create_Process: Cannot access specified executable "missing.sh": '
                               "errno = 2 (No such file or directory)"),
                         ("G", 'Create_Process: Cannot access specified executable "noexec.sh": '
                               "errno = 13 (Permission denied)"),
                         ("H", "Create_Process(badinterp.sh): child failed with errno 2 "
                               "(No such file or directory) before exec()")):
        at = out.index(f"Running PRE script of Node {node}...")
        assert out[at + 1:at + 4] == [reason, f"Error: Failed to execute PRE for Node {node}",
                                      f"PRE Script of Job {node} failed with status 1"]
        assert dagman.nodes[node].error == "PRE Script failed with status 1"
    assert "Error: Failed to execute POST for Node I" in out
    assert dagman.nodes["I"].error == "Job failed due to DAGMAN error 0 and POST Script failed with status 1"
    assert lines(dag_dir / "runs.txt") == ["I 0"], "no PRE-failed node ran its job"
    events = [(line.node, line.event) for line in read_jobstate_log(dag_dir / "js.log")]
    assert events.count(("F", "PRE_SCRIPT_STARTED")) == 1 and ("F", "PRE_SCRIPT_FAILURE") in events
    assert ("I", "POST_SCRIPT_TERMINATED") in events and ("I", "POST_SCRIPT_FAILURE") in events


def test_pre_skip_with_a_script_named_as_the_tutorial_names_it(dag_dir, schedd):
    script(dag_dir / "A.pre", body="exit 3\n")
    dag = dag_dir / "skip.dag"
    dag.write_text('JOB A job.sub\nSCRIPT PRE A A.pre\nPRE_SKIP A 3\nJOB B job.sub\nPARENT A CHILD B\n'
                   'VARS ALL_NODES code="0"\n')
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0
    assert lines(dag_dir / "runs.txt") == ["B 0"], "A's job and POST are skipped, A is done"


def test_splice_dir_finds_its_dag_submit_files_and_scripts_in_that_directory(dag_dir, schedd):
    (dag_dir / "s1" / "s2").mkdir(parents=True)
    for d in ("s1", "s1/s2"):
        (dag_dir / d / "job.sub").write_text((dag_dir / "job.sub").read_text())
        script(dag_dir / d / "pre.sh")
    (dag_dir / "s1" / "outer.dag").write_text('JOB X job.sub\nSCRIPT PRE X pre.sh X\nVARS X code="0"\n'
                                              "SPLICE IN inner.dag DIR s2\nPARENT X CHILD IN\n")
    (dag_dir / "s1" / "s2" / "inner.dag").write_text('JOB Y job.sub\nSCRIPT PRE Y pre.sh Y\nVARS Y code="0"\n')
    dag = dag_dir / "spliced.dag"
    dag.write_text("SPLICE S outer.dag DIR s1\n")
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0
    assert lines(dag_dir / "s1" / "scripts.txt") == ["pre.sh X"]
    assert lines(dag_dir / "s1" / "s2" / "scripts.txt") == ["pre.sh Y"]
    assert lines(dag_dir / "s1" / "s2" / "runs.txt") == ["S+IN+Y 0"]


def test_subdag_external_with_dir_runs_its_dag_from_that_directory(dag_dir, schedd):
    (dag_dir / "sd").mkdir()
    (dag_dir / "sd" / "job.sub").write_text((dag_dir / "job.sub").read_text())
    script(dag_dir / "sd" / "pre.sh")
    (dag_dir / "sd" / "inner.dag").write_text('JOB X job.sub\nSCRIPT PRE X pre.sh X\nVARS X code="0"\n')
    dag = dag_dir / "outer.dag"
    dag.write_text("SUBDAG EXTERNAL S inner.dag DIR sd\n")
    dagman = run(dag, schedd, state_dir=schedd.state.path)
    assert dagman.exit_code == 0
    assert lines(dag_dir / "sd" / "scripts.txt") == ["pre.sh X"]
    assert (dag_dir / "sd" / "inner.dag.dagman.out").exists(), "the sub-DAG's files are written beside it"


def test_missing_submit_and_subdag_files_are_submit_failures_as_dagman_reports_them(dag_dir, schedd):
    (dag_dir / "nd").mkdir()
    dag = dag_dir / "top.dag"
    dag.write_text("JOB N missing.sub DIR nd\nSUBDAG EXTERNAL M missing.dag\nJOBSTATE_LOG js.log\n")
    dagman = run(dag, schedd, max_submit_attempts=2)
    out = dagman_out(dag)
    assert dagman.exit_code == 1
    assert "ERROR: submit attempt failed, errno=2 No such file or directory" in out
    assert "could not open submit file : missing.sub - can't open file missing.sub: No such file or directory" in out
    assert "ERROR: condor_submit_dag -no_submit failed for node M." in out
    for node in ("N", "M"):
        assert dagman.nodes[node].error == "Job submit failed"
        assert f"Shortcutting node {node} retries because of submit failure(s)" in out
    events = [(line.node, line.event) for line in read_jobstate_log(dag_dir / "js.log")]
    assert events.count(("N", "SUBMIT_FAILURE")) == 2 and events.count(("M", "SUBMIT_FAILURE")) == 2
    assert not os.path.exists(dag_dir / "missing.dag.condor.sub")


def test_a_debug_file_gets_each_run_of_its_script_under_dagmans_header_line(dag_dir, schedd):
    """23.9.6 appends a script's output when it reaps it, under ``*** Node=... Cmd='...'`` with its
    wait status (seen on the pool); a deferred script's two runs are told apart by it."""
    script(dag_dir / "pre.sh", 'echo "out $*"\necho "err $*" >&2\n'
                               '[ -e deferred ] || { touch deferred; exit 4; }\n')
    script(dag_dir / "post.sh", 'echo "post $*"\nexit $2\n')
    dag = dag_dir / "debug.dag"
    dag.write_text('JOB A job.sub\nVARS A code="3"\n'
                   'SCRIPT DEFER 4 1 DEBUG pre.out ALL PRE A pre.sh $JOB $RETRY\n'
                   'SCRIPT DEBUG post.out STDOUT POST A post.sh $JOB $RETURN\n')
    assert run(dag, schedd).exit_code == 1

    def debug_lines(name: str) -> list[str]:  # the completion time, in seconds since 1970, as T
        return [re.sub(r"Completion=\d+ ", "Completion=T ", line) for line in lines(dag_dir / name)]

    assert debug_lines("pre.out") == [
        "*** Node=A Type=PRE Status=1024 Completion=T Cmd='pre.sh A 0'", "out A 0", "err A 0",
        "*** Node=A Type=PRE Status=0 Completion=T Cmd='pre.sh A 0'", "out A 0", "err A 0"]
    assert debug_lines("post.out") == ["*** Node=A Type=POST Status=768 Completion=T Cmd='post.sh A 3'", "post A 3"]


def test_a_post_script_failure_that_unless_exit_stops_keeps_the_tries_text(dag_dir, schedd):
    """RETRY ... UNLESS-EXIT: 23.9.6's RestartNode ends the retries and leaves the node's text as
    the POST script's reaper set it; a node whose retries ran out gets the whole story (both seen
    in the pool's node status file)."""
    script(dag_dir / "post.sh", "exit $1\n")
    dag = dag_dir / "unless.dag"
    dag.write_text('JOB B job.sub\nJOB C job.sub\nVARS B code="3"\nVARS C code="5"\n'
                   'RETRY B 1 UNLESS-EXIT 5\nRETRY C 3 UNLESS-EXIT 5\n'
                   'SCRIPT POST B post.sh $RETURN\nSCRIPT POST C post.sh $RETURN\n'
                   'NODE_STATUS_FILE unless.status\n')
    assert run(dag, schedd).exit_code == 1
    details = {ad["Node"]: ad["StatusDetails"] for ad in read_node_status(dag_dir / "unless.status")
               if ad["Type"] == "NodeStatus"}
    assert details == {"B": "Job exited with status 3 and POST Script failed with status 3 (after 1 node retries)",
                       "C": "POST script failed with status 5"}


def test_a_fatal_strict_warning_ends_dagman_out_with_the_deferral_notes(dag_dir, schedd):
    """main_shutdown_rescue prints every ``Note: ... deferrals`` line before the last status
    table, an unknown script macro under DAGMAN_USE_STRICT 1 included (seen on the pool)."""
    script(dag_dir / "post.sh")
    dag = dag_dir / "strict.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT POST A post.sh $EXIT_CODE_LIST\n')
    assert run(dag, schedd).exit_code == 1
    out = dagman_out(dag)
    removing = out.index("Removing any/all submitted HTCondor jobs...")
    assert out[removing + 1:removing + 3] == ["Note: 0 total job deferrals because of -MaxJobs limit (0)",
                                              "Note: 0 total job deferrals because of -MaxIdle limit (1000)"]
    assert out[removing + 7] == "DAG status: 1 (DAG_STATUS_ERROR)"


def test_all_nodes_commands_log_that_they_pass_over_the_final_node(dag_dir, schedd):
    """DAGMan 23.9.6 applies ALL_NODES to every node but FINAL, wherever the nodes are declared,
    and says so in dagman.out for each such line (seen on the pool, the stray "s" included)."""
    script(dag_dir / "post.sh")
    dag = dag_dir / "all.dag"
    dag.write_text('VARS ALL_NODES code="0"\nJOB A job.sub\nRETRY ALL_NODES 2\nSCRIPT POST ALL_NODES post.sh $JOB\n'
                   'ABORT-DAG-ON ALL_NODES 42 RETURN 3\nFINAL F job.sub\nVARS F code="0"\n')
    assert run(dag, schedd).exit_code == 0
    assert [line for line in dagman_out(dag) if "skipping node" in line] == [
        "In parse_vars(): skipping node F because final nodes must have VARS set explicitly (all.dag: 1)",
        "In parse_retry(): skipping node F because final nodes cannot have RETRY specifications (all.dag: 3)",
        "In parse_script(): skipping node F because final nodes must have SCRIPT set explicitly (all.dag: 4)",
        "In parse_abort(): skipping node F because final nodes cannot have ABORT-DAG-ON specification (all.dag: 5)s"]
    assert lines(dag_dir / "scripts.txt") == ["post.sh A"], "FINAL's POST is its own to give"


def test_dagman_out_says_what_it_parsed_and_how_many_nodes_were_done_before_it_started(dag_dir, schedd):
    """The start of a run as the pool's dagman.out has it, between the node log and the first submit."""
    (dag_dir / "d.dag").write_text('JOB A job.sub DONE\nJOB B job.sub\nVARS ALL_NODES code="0"\nPARENT A CHILD B\n'
                                   'FINAL F job.sub\n')
    os.chdir(dag_dir)
    dagman = DagMan(build_graph(parse_file("d.dag")), schedd, Options(scan_interval=0.05))
    assert dagman.run() == 0
    out = [line for line in dagman_out(dag_dir / "d.dag") if not line.startswith("DAGMan Runtime Statistics")]
    start = next(i for i, line in enumerate(out) if line.startswith("Default node log file is:")) + 1
    assert out[start:start + 16] == [
        "DAG Lockfile will be written to d.dag.lock", "DAG Input file is d.dag", "Parsing 1 dagfiles",
        "Parsing d.dag ...", "In parse_vars(): skipping node F because final nodes must have VARS set explicitly "
        "(d.dag: 3)", "Adjusting edges", "Dag contains 3 total jobs", "Bootstrapping...",
        "Number of pre-completed nodes: 1", "DAG status: 0 (DAG_STATUS_OK)", "Of 3 nodes total:",
        " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile",
        "  ===     ===      ===     ===     ===        ===      ===      ===",
        "    1       0        0       0       1          1        0        0",  # the table before the first submit
        "0 job proc(s) currently held", "Submitting HTCondor Node B job(s)..."]


def test_a_deferred_script_is_logged_and_counted_under_each_status_table(dag_dir, schedd):
    """SCRIPT DEFER: dagman.out says so as the script is deferred, and each node table after it
    carries the non-zero deferral count, as the pool's dagman.out does."""
    script(dag_dir / "post.sh", '[ -e deferred ] || { touch deferred; exit 5; }\n')
    dag = dag_dir / "defer.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT DEFER 5 1 POST A post.sh\n')
    assert run(dag, schedd).exit_code == 0
    out = dagman_out(dag)
    assert "Deferring POST script of node A for 1 seconds (exit status was 5)..." in out
    note = "Note: 1 total POST script deferrals because of -MaxPost limit (20) or DEFER"
    tables = [i for i, line in enumerate(out) if line.endswith("job proc(s) currently held")]
    assert out[tables[-2] + 1] == note, "the last table of the run, before the closing one"


def test_the_dag_screen_reads_a_node_whose_retries_unless_exit_ended_as_dagman_says_it(dag_dir, schedd):
    """A retried node that UNLESS-EXIT stops keeps the POST script's text, with no "(after 1 node
    retries)": what the node status file says, the UI's reading of dagman.out says too."""
    script(dag_dir / "post.sh", '[ "$1" = 0 ] && exit 3\nexit 5\n')
    dag = dag_dir / "unless.dag"
    dag.write_text('JOB D job.sub\nVARS D code="1"\nRETRY D 3 UNLESS-EXIT 5\nSCRIPT POST D post.sh $RETRY\n'
                   'NODE_STATUS_FILE unless.status\n')
    assert run(dag, schedd).exit_code == 1
    [status] = [ad for ad in read_node_status(dag_dir / "unless.status") if ad["Type"] == "NodeStatus"]
    [node] = DagWatcher(str(dag)).read().nodes
    assert (status["StatusDetails"], status["RetryCount"]) == ("POST script failed with status 5", 1)
    assert (node.why, node.retries) == ("POST script failed with status 5", 1)


def test_a_hold_script_started_as_the_dag_ends_still_gets_its_debug_file(dag_dir, schedd):
    """A held job removed after DAGMAN_MAX_JOB_HOLDS holds fails its node, and the DAG ends in the
    same cycle as its HOLD script starts: DAGMan reaps the script before it exits, so its output
    reaches its DEBUG file (it was lost, as on 23.9.6, whose DAGMan crashes at that exit on the pool)."""
    (dag_dir / "held.sub").write_text("executable = /bin/true\non_exit_hold = true\nqueue\n")
    script(dag_dir / "hold.sh", 'sleep 1; echo "held $*"\n')  # still running as DAGMan exits
    (dag_dir / "hold.config").write_text("DAGMAN_MAX_JOB_HOLDS = 1\n")
    dag = dag_dir / "hold.dag"
    dag.write_text("CONFIG hold.config\nJOB A held.sub\nSCRIPT DEBUG hold.out STDOUT HOLD A hold.sh $JOB\n")
    assert run(dag, schedd, max_job_holds=1).exit_code == 1
    assert [re.sub(r"Completion=\d+ ", "Completion=T ", line) for line in lines(dag_dir / "hold.out")] == [
        "*** Node=A Type=HOLD Status=0 Completion=T Cmd='hold.sh A'", "held A"]


def test_a_post_macro_in_finals_pre_script_after_abort_dag_on_is_logged_and_final_still_runs(dag_dir, schedd):
    """The manual's ABORT-DAG-ON with a FINAL node whose PRE script names $RETURN: the strict
    warning comes while the abort is already shutting the DAG down, so DAGMan 23.9.6 logs it
    and runs FINAL (``$RETURN`` passed as written); the FINAL node's success makes the exit 0
    (seen on the pool).  Without an abort the same warning ends the DAG (tested above)."""
    script(dag_dir / "final.sh")
    dag = dag_dir / "abort.dag"
    dag.write_text("JOB work job.sub\nVARS work code=\"5\"\nABORT-DAG-ON work 5 RETURN 7\n"
                   "FINAL cleanup job.sub\nVARS cleanup code=\"0\"\n"
                   "SCRIPT PRE cleanup final.sh $JOB $DAG_STATUS $FAILED_COUNT $RETURN\n")
    dagman = run(dag, schedd)
    assert lines(dag_dir / "scripts.txt") == ["final.sh cleanup 3 1 $RETURN"]
    out = dagman_out(dag)
    assert "ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting" in out
    assert lines(dag_dir / "runs.txt") == ["work 0", "cleanup 0"]
    assert dagman.exit_code == 0
