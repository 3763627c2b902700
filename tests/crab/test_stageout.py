"""Output stage-out in the POST step: files landing at the storage site under CRAB's names, its
failures through the retry policy, ``transferring`` while it runs, the storage sites file, and a
PostJob re-run after a crash (on a fake clock)."""

from __future__ import annotations

import getpass
import json
import os
import re
import time
from pathlib import Path

import pytest

from crab_tasks import config_text, crabtui, task_status, wait_status
from engine.crab.ap.retry_policy import JobState, Limits, Params, begin_attempt, decide
from engine.crab.ap.stageout import ASO_TIMEOUT_S, job_lfn, lfn_base, stage_out, transfer_path
from engine.crab.grid.storage import DEFAULT_BANDWIDTH, StorageError, parse_storage, stageout_ad, storage_site
from engine.crab.wn import fjr
from engine.state import StateDir

PRIMARY = "TTbar_TuneCP5_13p6TeV"


def storage_dir(state: StateDir, status: dict, request: str, site: str = "T2_XX_Local") -> Path:
    """Where CRAB puts the task's outputs: /store/user/<user>/<primary>/crab_<request>/<time>/0000."""
    timestamp = status["name"].split(":")[0]
    return (Path(state.path) / "storage" / site / "store/user" / getpass.getuser() / PRIMARY / f"crab_{request}"
            / timestamp / "0000")


def landed(state: StateDir, status: dict, request: str) -> dict[str, int]:
    directory = storage_dir(state, status, request)
    return {p.name: p.stat().st_size for p in directory.iterdir()} if directory.is_dir() else {}


def stageout_column(text: str) -> dict[str, int]:
    """Site -> Stageout of the ``--summary`` site table."""
    lines = text.split("Site Summary Table (including retries):")[1].splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Site "))
    column = lines[header].split().index("Stageout")
    rows = lines[header + 1:lines.index("", header)]
    return {row.split()[0]: int(row.split()[column]) for row in rows}


# --- on the embedded schedd -------------------------------------------------------------------

def test_outputs_land_at_the_storage_site_with_crabs_names_and_sizes(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("landing"))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "landing", tmp_path, "COMPLETED")
    task_dir = Path(status["task_dir"])
    ids = [j["id"] for j in status["jobs"]]
    assert landed(state, status, "landing") == {
        f"output_{i}.root": (task_dir / f"output_{i}.root").stat().st_size for i in ids}
    for i in ids:
        stored = storage_dir(state, status, "landing") / f"output_{i}.root"
        assert stored.read_bytes() == (task_dir / f"output_{i}.root").read_bytes()
        report = fjr.read_report(task_dir / f"jobReport.json.{i}.0")
        assert report["postjob"] == {"exitCode": 0, "exitMsg": ""}, "PostJob's section of the job report"
    table = crabtui(state, "task", "status", "landing", "--summary", cwd=tmp_path).stdout
    assert "Stageout" in table and "finished     \t\t100.0% (4/4)" in table


def test_private_mc_outputs_land_under_the_output_primary_dataset_at_a_site_no_file_describes(tmp_path, state):
    (tmp_path / "gen.toml").write_text(
        '[General]\nrequestName = "gen"\n[JobType]\npluginName = "PrivateMC"\npsetName = "gen_cfg.py"\n'
        '[Data]\noutputPrimaryDataset = "MinBias_TuneCP5"\nsplitting = "EventBased"\nunitsPerJob = 300\n'
        'totalUnits = 1000\n[Site]\nstorageSite = "T3_US_FNALLPC"\n[Debug]\ntimeScale = 500\n')
    assert crabtui(state, "task", "submit", "gen.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "gen", tmp_path, "COMPLETED")
    directory = (Path(state.path) / "storage" / "T3_US_FNALLPC" / "store/user" / getpass.getuser() / "MinBias_TuneCP5"
                 / "crab_gen" / status["name"].split(":")[0] / "0000")
    assert sorted(p.name for p in directory.iterdir()) == [f"output_{i}.root" for i in range(1, 5)]
    events = [fjr.summarize(fjr.read_report(Path(status["task_dir"]) / f"jobReport.json.{i}.0")).events
              for i in range(1, 5)]
    assert events == [300, 300, 300, 100], "1000 events in jobs of 300"


def test_a_recoverable_failure_is_retried_and_a_permanent_one_fails_the_job(tmp_path, state):
    plan = '{job = "2", attempt = 1, stageout = 60307}, {job = "3", attempt = "*", stageout = 60324}'
    (tmp_path / "crab.toml").write_text(config_text("flaky", plan=plan))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "flaky", tmp_path, "FAILED")
    jobs = {j["id"]: j for j in status["jobs"]}
    two, three = jobs["2"], jobs["3"]
    assert [(a["exit_code"], a["action"]) for a in two["attempts"]] == [(60307, "retry"), (0, "ok")]
    assert two["state"] == "finished" and "Error during attempted file stageout." in two["attempts"][0]["reason"]
    assert [(a["exit_code"], a["action"]) for a in three["attempts"]] == [(60324, "fatal")]
    assert (three["state"], three["exit_code"]) == ("failed", 60324), "permanent: no retry"
    assert sorted(landed(state, status, "flaky")) == ["output_1.root", "output_2.root", "output_4.root"]
    task_dir = Path(status["task_dir"])
    assert fjr.read_report(task_dir / "jobReport.json.2.0")["postjob"]["ASOExitCode"] == 60307
    section = fjr.read_report(task_dir / "jobReport.json.3.0")["postjob"]
    assert (section["exitCode"], section["ASOExitCode"]) == (2, 60324)
    text = crabtui(state, "task", "status", "flaky", cwd=tmp_path).stdout
    assert "1 jobs failed with exit code 60324 (permanent stageout failure: " in text


def test_a_node_is_transferring_while_its_slow_transfer_is_pending(tmp_path, state):
    (Path(state.path) / "storage.toml").write_text(
        '[[storage]]\nname = "T2_XX_Local"\nbandwidth = 100\nlatency = 5000\n')  # 10 s at timeScale 500
    (tmp_path / "crab.toml").write_text(config_text("slowlink"))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    deadline = time.monotonic() + 90
    while not re.search(r"^(Jobs status:\s+|\t+)transferring ", text := crabtui(  # a state line, not the header's
            state, "task", "status", "slowlink", "--summary", cwd=tmp_path).stdout, re.M):
        assert time.monotonic() < deadline, "no job was seen transferring"
    status = task_status(state, "slowlink", tmp_path)
    moving = [j for j in status["jobs"] if j["state"] == "transferring"]
    assert moving, "the --json states agree"
    assert not any(name == f"output_{j['id']}.root" for j in moving for name in landed(state, status, "slowlink")), \
        "a file lands only when its transfer is done"
    assert sum(stageout_column(text).values()) >= 1, "the site table's Stageout column counts them"
    status = wait_status(state, "slowlink", tmp_path, "COMPLETED")
    assert len(landed(state, status, "slowlink")) == len(status["jobs"])


# --- the transfer on a fake clock ---------------------------------------------------------------

class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _task(tmp_path: Path, plan: tuple = ()) -> dict:
    site = parse_storage('[[storage]]\nname = "T2_CH_CERN"\nbandwidth = 10\nlatency = 400\n', str(tmp_path / "s.toml"),
                         str(tmp_path / "storage"))["T2_CH_CERN"]
    name = "240102_030405:alice_crab_demo"
    return {"name": name, "time_scale": 10.0, "failure_plan": list(plan),
            "stageout": stageout_ad(site, task_name=name, user="alice", primary_dataset="Prim", request_name="demo")}


def _job(tmp_path: Path, job: str = "1012") -> tuple[JobState, dict]:
    state = begin_attempt(JobState(job), dag_retry=0, task_params=Params(2000, 1250))
    (tmp_path / f"output_{job}.root").write_bytes(b"simulated output")
    report = fjr.build_report(exit_code=0, exit_msg="OK", site="T2_XX_Local", start=1, stop=2, inputs=[],
                              outputs=[{"pfn": f"output_{job}.root", "events": 10, "size": 200_000_000, "lumis": {}}])
    return state, report


def test_a_transfer_resumes_after_a_crash_and_never_lands_twice(tmp_path):
    task, clock = _task(tmp_path), Clock(1000.0)
    state, report = _job(tmp_path)
    ok = decide(0, report, state, Limits(time_scale=10), clock())
    run = dict(limits=Limits(time_scale=10), clock=clock, sleep=clock.sleep)
    assert stage_out(str(tmp_path), task, state, report, ok, **run) is None, "400 s + 200 MB at 10 MB/s: pending"
    record = json.loads(Path(transfer_path(str(tmp_path), "1012", 0)).read_text())
    assert record["due"] == 1000.0 + (400 + 20) / 10, "simulated seconds divided by the time scale"
    lfn = "/store/user/alice/Prim/crab_demo/240102_030405/0001/output_1012.root"
    assert record["files"][0]["lfn"] == lfn == job_lfn(lfn_base(task["name"], "alice", "Prim", "demo"),
                                                      "1012", "output_1012.root")
    target = tmp_path / "storage" / "T2_CH_CERN" / lfn.lstrip("/")
    assert not target.exists()
    clock.now = record["due"] - 4  # within one deferral (60 s / 10) of the end: slept out
    assert stage_out(str(tmp_path), task, state, report, ok, **run) == ok
    assert clock.now == record["due"] and target.read_bytes() == b"simulated output"
    # A crash after the file landed, before PostJob recorded the attempt: the re-run finds the same
    # transfer and the file there; a crash in the middle of the copy left a part file: copied again.
    assert stage_out(str(tmp_path), task, state, report, ok, **run) == ok
    assert os.listdir(target.parent) == ["output_1012.root"]
    target.unlink()
    Path(str(target) + ".part").write_bytes(b"half")
    assert stage_out(str(tmp_path), task, state, report, ok, **run) == ok
    assert os.listdir(target.parent) == ["output_1012.root"] and target.read_bytes() == b"simulated output"


def test_a_hanging_transfer_is_cancelled_after_the_aso_timeout(tmp_path):
    task = _task(tmp_path, plan=({"job": "1012", "attempt": "*", "stageout": 60317},))
    clock = Clock(0.0)
    state, report = _job(tmp_path)
    ok = decide(0, report, state, Limits(time_scale=10), clock())
    run = dict(limits=Limits(time_scale=10), clock=clock, sleep=clock.sleep)
    assert stage_out(str(tmp_path), task, state, report, ok, **run) is None
    clock.now = ASO_TIMEOUT_S / 10 - 1
    decision = stage_out(str(tmp_path), task, state, report, ok, **run)
    assert (decision.action, decision.exit_code, decision.attempt.exit_code) == ("fatal", 60317, 60317)
    assert "Cancelled ASO transfer after timeout of 21600 seconds" in decision.reason


def test_a_recoverable_code_gets_the_retry_policys_decision(tmp_path):
    task = _task(tmp_path, plan=({"job": "1012", "attempt": 1, "stageout": 60403},))
    clock = Clock(0.0)
    state, report = _job(tmp_path)
    ok = decide(0, report, state, Limits(time_scale=10), clock())
    run = dict(limits=Limits(time_scale=10), clock=clock, sleep=clock.sleep)
    assert stage_out(str(tmp_path), task, state, report, ok, **run) is None
    clock.now = 40
    decision = stage_out(str(tmp_path), task, state, report, ok, **run)
    assert (decision.action, decision.exit_code) == ("retry", 60403)
    assert decision.next.runtime_min == int(1250 * 1.3), "60403's policy: 1.3 times the runtime"
    assert decision.cooloff_until == pytest.approx(42 + 900 / 10), "the policy's delay, scaled"


# --- the storage sites -------------------------------------------------------------------------

def test_any_cms_site_is_a_storage_site_and_the_users_file_adds_or_redescribes_sites(tmp_path):
    state = StateDir(str(tmp_path))
    shipped = storage_site(state, "T2_IT_Pisa")
    assert shipped.directory == str(tmp_path / "storage" / "T2_IT_Pisa") and shipped.failures == ((0.02, 60323),)
    anywhere = storage_site(state, "T3_US_FNALLPC")  # described nowhere: the defaults
    assert (anywhere.directory, anywhere.bandwidth, anywhere.latency, anywhere.failures) == (
        str(tmp_path / "storage" / "T3_US_FNALLPC"), DEFAULT_BANDWIDTH, 0.0, ())
    with pytest.raises(StorageError, match="'T2_US_\\*' is not a CMS site name"):
        storage_site(state, "T2_US_*")
    (tmp_path / "storage.toml").write_text('[[storage]]\nname = "T3_XX_Mine"\ndirectory = "here"\n'
                                           '[[storage]]\nname = "T2_IT_Pisa"\nbandwidth = 5\n')
    assert storage_site(state, "T3_XX_Mine").directory == str(tmp_path / "here"), "relative to the file"
    assert storage_site(state, "T2_IT_Pisa").bandwidth == 5 and storage_site(state, "T2_IT_Pisa").failures == ()
    assert storage_site(state, "T1_US_FNAL").bandwidth == 80, "shipped sites the file does not name stay"
    for text, message in [
        ('[[storage]]\nname = "A"\nbandwith = 5\n', r's.toml: storage\[1\].bandwith: unknown key; did you mean "bandwidth"'),
        ('[[storage]]\nname = "A"\nbandwidth = 0\n', r"storage\[1\].bandwidth: must be a positive number"),
        ('[[storage]]\nname = "A"\nfailures = [{probability = 0.5, exitCode = 8021}]\n',
         r"storage\[1\].failures\[1\].exitCode: must be one of CRAB's stage-out exit codes 60307"),
        ('[[site]]\nname = "A"\n', "s.toml: site: unknown key"),
    ]:
        with pytest.raises(StorageError, match=message):
            parse_storage(text, "s.toml", str(tmp_path))
