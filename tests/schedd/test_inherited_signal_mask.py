"""Signals blocked in the process that starts the schedd: ``crabtui dag run`` blocks DAGMan's stop
signals (SIGUSR1, SIGTERM, SIGINT) while it reads its DAG, and a mask is inherited across fork and
exec.  A schedd started from such a process must still stop its jobs, and ``dag run`` must not
leave them blocked in the process it ran in."""

from __future__ import annotations

import signal

import pytest
from click.testing import CliRunner

from crabtui.cli import main
from engine.dagman.runner import STOP_SIGNALS
from engine.schedd.api import JobAction, JobStatus


def test_a_schedd_started_with_stop_signals_blocked_still_holds_and_removes_its_running_jobs(schedd):
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        result = schedd.submit("""
            executable = /bin/sleep
            arguments = 300
            log = job.log
            queue 2
            """)  # the daemon starts now, with the mask of this process
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    held, removed = f"{result.cluster}.0", f"{result.cluster}.1"
    schedd.wait_running(held), schedd.wait_running(removed)
    assert schedd.client.act(JobAction.Hold, held).changed == 1
    assert schedd.wait_status(held, JobStatus.HELD)["JobStatus"] == JobStatus.HELD
    assert schedd.client.act(JobAction.Remove, removed).changed == 1
    assert schedd.wait_history(removed)["JobStatus"] == JobStatus.REMOVED


@pytest.mark.parametrize("args", [["missing.dag"], ["--help"]])
def test_dag_run_ending_before_dagman_runs_leaves_no_signal_blocked(args, tmp_path, monkeypatch):
    """``dag run --help`` (as the help tests open it, in their own process) and a DAG that is not
    there both end before DAGMan's handlers take the signals over."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["--state-dir", str(tmp_path / "state"), "dag", "run", *args])
    assert result.exit_code == (0 if args == ["--help"] else 1), result.output
    assert not set(STOP_SIGNALS) & signal.pthread_sigmask(signal.SIG_BLOCK, ())
