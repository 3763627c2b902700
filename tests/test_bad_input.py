"""Bad input never gives a traceback (issue 20, part 4): each kind of file or argument users write
is fuzzed, a bounded number of cases each so that the suite stays fast; ``bench/fuzz.py`` runs
10,000 of each.  What each case must do is in fuzz_inputs.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz_inputs import KINDS, KNOWN, KNOWN_CLI, check_cli, cli_cases
from installed import CRABTUI
from schedd.schedd_harness import PERIODIC_ENV, stop_daemon
from engine.state import StateDir

SETTINGS = settings(max_examples=60, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_input_gives_a_traceback(kind):
    strategy, check = KINDS[kind]
    outcomes = set()

    @SETTINGS
    @given(strategy)
    def run(case):
        workdir = Path(tempfile.mkdtemp(prefix="fuzz-", dir="/tmp"))
        try:
            outcomes.add(check(case, workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    for case in KNOWN[kind]:
        run.hypothesis.inner_test(case)
    assert outcomes == {"refused"}, "each case issue 20 found is refused"
    run()
    assert outcomes == {"accepted", "refused"}, f"every case of {kind} went one way: {outcomes}"


@pytest.fixture
def daemon_with_jobs():
    """A daemon with two held jobs for the commands to act on."""
    from engine.schedd.local.client import LocalScheddClient

    path = Path(tempfile.mkdtemp(prefix="fuzz-cli-", dir="/tmp")) / "state"
    path.mkdir(mode=0o700)
    state = StateDir(str(path))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in PERIODIC_ENV.items():
            patch.setenv(name, value)
        with LocalScheddClient(state) as client:
            client.submit("executable = /bin/sleep\narguments = 300\nhold = true\nqueue 2\n", cwd=str(path))
    try:
        yield state
    finally:
        stop_daemon(state)
        shutil.rmtree(path.parent, ignore_errors=True)


def test_job_ids_and_constraints_on_the_command_line_never_give_a_traceback(daemon_with_jobs):
    outcomes = set()

    @SETTINGS
    @given(cli_cases)
    def run(case):
        outcomes.add(check_cli(case, daemon_with_jobs.path))

    for case in KNOWN_CLI:
        run.hypothesis.inner_test(case)
    run()
    assert outcomes == {"accepted", "refused"}
    with open(daemon_with_jobs.log) as f:
        log = f.read()
    assert "Traceback" not in log and "internal error" not in log, "the schedd logged no error of its own"


def failing_dag_run(tmp_path) -> str:
    """``crabtui dag run u.dag`` in ``tmp_path``, one submit attempt a node, which must fail the
    DAG (exit 1) without a traceback; its dagman.out."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    try:
        result = subprocess.run([CRABTUI, "--state-dir", str(state), "dag", "run", "u.dag"],
                                cwd=tmp_path, capture_output=True, text=True, timeout=120,
                                env={**os.environ, "_CONDOR_DAGMAN_MAX_SUBMIT_ATTEMPTS": "1"})
    finally:
        stop_daemon(StateDir(str(state)))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    return (tmp_path / "u.dag.dagman.out").read_text()


def test_a_node_whose_submit_file_is_not_utf8_fails_its_submit_not_dagman(tmp_path):
    """DAGMan reads a node's submit file as condor_submit does: bad bytes fail that submit,
    reported with the file and line, and DAGMan goes on (here: the node fails, the DAG exits 1)."""
    (tmp_path / "a.sub").write_bytes(b"executable = /bin/true\narguments = \xff\nqueue\n")
    (tmp_path / "u.dag").write_text("JOB A a.sub\n")
    out = failing_dag_run(tmp_path)
    assert f"ERROR: {tmp_path}/a.sub:2: not UTF-8 text (byte 0xff)" in out  # DAGMan's lines for a failed submit
    assert "Job submit failed after 1 try." in out


def test_node_submit_files_condor_submit_refuses_fail_their_submits_in_dagman_out(tmp_path):
    """A node whose submit file condor_submit refuses (a bare double quote in old-syntax arguments)
    fails its submit with the refusal in dagman.out, as DAGMan logs condor_submit's error: its job
    never runs with mangled arguments.  (An input file that is not there is not one: 23.9.6 reads
    none at submit, tests/schedd/test_input_files.py.)"""
    (tmp_path / "quote.sub").write_text('executable = /bin/sh\narguments = -c "exit 3"\nqueue\n')
    (tmp_path / "u.dag").write_text("JOB A quote.sub\n")
    out = failing_dag_run(tmp_path)
    assert f"ERROR: {tmp_path}/quote.sub:2: arguments: illegal unescaped double quote" in out
    assert out.count("Job submit failed after 1 try.") == 1
