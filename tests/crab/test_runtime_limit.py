"""``JobType.maxJobRuntimeMin`` enforced where CRAB enforces it: the job's ``periodic_remove``
removes an attempt that runs longer than its ``MaxWallTimeMinsRun``, RetryJob makes that exit code
50664, fatal, and ``crab resubmit --maxjobruntime`` gives the job the time it needs."""

from __future__ import annotations

from datetime import timedelta

from crab_tasks import config_text, crab_config_py, crabtui, wait_status, wait_until

SCALE = 3600  # one simulated hour a real second
# The user's executable: job 2 runs three simulated hours, the others a few minutes.
SCRIPT = '#!/bin/sh\nif [ "$1" = 2 ]; then sleep 3; else sleep 0.1; fi\n'


def test_a_job_over_max_job_runtime_is_removed_and_fails_with_50664(tmp_path, state, monkeypatch):
    monkeypatch.setenv("CRABTUI_PERIODIC_EXPR_INTERVAL", "0.2")  # read by the daemon the CLI starts
    (tmp_path / "run.sh").write_text(SCRIPT)
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "crab.toml").write_text(config_text("walltime", scale=SCALE).replace(
        'psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"\nmaxJobRuntimeMin = 60'))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "walltime", tmp_path, "FAILED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert [jobs[i]["state"] for i in ("1", "3", "4")] == ["finished"] * 3
    (attempt,) = jobs["2"]["attempts"]
    assert (jobs["2"]["state"], jobs["2"]["exit_code"], attempt["action"]) == ("failed", 50664, "fatal")
    # RetryJob's words, and how long the run lasted against its hour, as CRAB's second line gives them
    first, lasted = attempt["reason"].split("\n")
    assert first == "Not retrying job due to wall clock limit (job automatically killed on the worker node)"
    seconds = int(lasted.split()[2])
    assert lasted == f"Jobs lasted {seconds} seconds ({timedelta(seconds=seconds)}) vs. 3600 (1:00:00) MAX"
    assert 3600 <= seconds < 3 * 3600
    assert 3600 <= attempt["runtime_s"] < 3 * 3600, "removed after its hour, before the script's three"

    text = crabtui(state, "task", "status", "walltime", "--long", cwd=tmp_path).stdout
    assert "1 jobs failed with exit code 50664" in text
    row = next(line.split() for line in text.splitlines() if line.split()[:2] == ["2", "failed"])
    assert row[-1] == "50664"

    resubmitted = crabtui(state, "task", "resubmit", "walltime", "--maxjobruntime", "240", cwd=tmp_path)
    assert resubmitted.returncode == 0, resubmitted.stderr
    status = wait_status(state, "walltime", tmp_path, "COMPLETED")
    two = next(j for j in status["jobs"] if j["id"] == "2")
    assert [(a["exit_code"], a["max_runtime"]) for a in two["attempts"]] == [(50664, 60), (0, 240)]


def test_condor_q_shows_max_job_runtime_under_crabs_three_names(tmp_path, state):
    """CRAB's PreJob gives a job its maxJobRuntimeMin as MaxWallTimeMins (what glidein frontends and
    users query), MaxWallTimeMinsRun (what periodic_remove reads) and EstimatedWallTimeMins."""
    (tmp_path / "crabConfig.py").write_text(
        crab_config_py("wallads", scale=1, more="config.JobType.maxJobRuntimeMin = 90\n"))
    assert crabtui(state, "task", "submit", "-c", "crabConfig.py", cwd=tmp_path).returncode == 0

    def job_1_ad() -> str:
        return crabtui(state, "q", "-af", "MaxWallTimeMins", "MaxWallTimeMinsRun", "EstimatedWallTimeMins",
                       "-constraint", 'CRAB_Id == "1"', cwd=tmp_path).stdout.strip()

    assert wait_until("job 1 in the queue", job_1_ad).split() == ["90", "90", "90"]
