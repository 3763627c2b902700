"""``transfer_input_files`` as condor_submit 23.9.6 takes it: not read at submit (a DAG's node names
the file its parent node writes, as the OSG DAGMan tutorial's recombine node names ``echo/``), and a
file the transfer cannot read holds the job, code 13, when its files move, as the test pool's shadow
holds it; with no transfer (the default on a shared file system) the job runs where its files are."""

from __future__ import annotations

import socket

from engine.schedd.api import JobStatus


def test_an_input_file_not_there_yet_is_queued_and_the_job_runs_where_its_files_are(schedd):
    result = schedd.submit("""
        executable = /bin/sh
        arguments = "-c 'ls echo.*.out'"
        transfer_input_files = echo/, ../data.csv
        queue
        """)
    (schedd.work / "echo.1.out").write_text("x")
    assert schedd.wait_history(f"{result.cluster}.0")["ExitCode"] == 0


def test_an_input_file_the_transfer_cannot_read_holds_the_job_with_the_pools_reason(schedd):
    result = schedd.submit("""
        executable = /bin/true
        should_transfer_files = YES
        transfer_input_files = nothere.csv
        queue
        """)
    held = schedd.wait_status(f"{result.cluster}.0", JobStatus.HELD)
    assert (held["HoldReasonCode"], held["HoldReasonSubCode"]) == (13, 2)
    assert held["HoldReason"].startswith(f"Transfer input files failure at access point {socket.gethostname()} while "
                                         "sending files to execution point ")
    assert held["HoldReason"].endswith(f". Details: reading from file {schedd.work}/nothere.csv: (errno 2) "
                                       "No such file or directory")
    assert held.get("NumJobStarts", 0) == 0, "it never ran"
