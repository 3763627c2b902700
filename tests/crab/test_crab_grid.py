"""The simulated grid: site profiles in the pool file, the machine ad reaching jobs, the simulated
cmsRun, the framework job report and the job wrapper.

Simulated time runs 1000 times faster than real time here (or on a fake clock), so a job of
minutes takes milliseconds; every random choice is seeded, so every run is the same.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import classad2
import pytest

from engine.crab.client.config import PlannedFailure
from engine.crab.grid import grid_path, install_grid
from engine.crab.wn import cmsrun, failure_plan, fjr, jobad, wrapper
from engine.crab.wn.job_input import (DEFAULT_BYTES_PER_EVENT, DEFAULT_EVENTS_PER_SECOND, DEFAULT_INIT_SECONDS, InputError,
                                      make_input, read_input, write_input)
from engine.schedd.api import JobStatus
from engine.schedd.local.pool import FAILURES_ATTRIBUTE, SPEED_ATTRIBUTE, PoolConfigError, load_pool, parse_pool
from engine.state import StateDir

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "schedd"))
from schedd_harness import PERIODIC_ENV, SOCKET_PATH_MAX, Harness, stop_daemon  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
SCALE = 1000.0
TASK = "240601_120000:alice_crab_grid"


def toml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def pool_error(text: str) -> str:
    with pytest.raises(PoolConfigError) as e:
        parse_pool(toml(text), "pool.toml")
    return str(e.value)


def job_input(tmp_path: Path, **extra) -> Path:
    """Two files, five lumis, 400 events."""
    document = make_input([("/store/mc/a.root", [(1, 1, 100), (1, 2, 100), (1, 3, 100)]),
                           ("/store/mc/b.root", [(2, 7, 50), (2, 8, 50)])], **extra)
    path = tmp_path / "input.json"
    write_input(path, document)
    return path


class FakeClock:
    """monotonic() and sleep() for cmsrun.run: sleeping advances the clock, nothing waits."""

    def __init__(self):
        self.now = 100.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert 0 < seconds <= 0.25, "cmsRun sleeps in small steps"
        self.now += seconds
        self.slept += seconds


def simulate(tmp_path: Path, settings: cmsrun.Settings, **extra) -> tuple[dict, FakeClock]:
    clock = FakeClock()
    job = read_input(job_input(tmp_path, **extra))
    report = cmsrun.run(job, settings, tmp_path / "jobReport.json", sleep=clock.sleep,
                        monotonic=clock.monotonic, out=io.StringIO())
    return report, clock


# ------------------------------------------------------------------------------------ pool file

class TestSiteProfiles:
    def test_speed_and_failures_reach_every_slot_ad(self):
        pool = parse_pool(toml("""
            [[site]]
            name = "T2_US_Nebraska"
            slots = 2
            speed = 1.5
            failures = [{probability = 0.1, exitCode = 8021}, {probability = 0.05, memoryMB = 3000}]

            [[site]]
            name = "T2_IT_Pisa"
        """), "pool.toml")
        nebraska, pisa = pool.sites
        assert nebraska.speed == 1.5 and [f.as_json() for f in nebraska.failures] == [
            {"probability": 0.1, "exitCode": 8021}, {"probability": 0.05, "memoryMB": 3000}]
        for slot in pool.slots[:2]:
            assert slot.ad["GLIDEIN_CMSSite"] == "T2_US_Nebraska"
            assert slot.ad[SPEED_ATTRIBUTE] == 1.5
            assert json.loads(slot.ad[FAILURES_ATTRIBUTE]) == [
                {"probability": 0.1, "exitCode": 8021}, {"probability": 0.05, "memoryMB": 3000}]
        assert (pisa.speed, pisa.failures) == (1.0, ())
        assert pool.slots[2].ad[SPEED_ATTRIBUTE] == 1.0 and pool.slots[2].ad[FAILURES_ATTRIBUTE] == "[]"

    def test_a_job_can_match_on_speed(self):
        pool = parse_pool(toml("""
            [[site]]
            name = "T2_A_Slow"
            speed = 0.5
            [[site]]
            name = "T2_B_Fast"
            speed = 2
        """), "pool.toml")
        job = classad2.ClassAd({"ClusterId": 1, "ProcId": 0})
        job["Requirements"] = classad2.ExprTree("TARGET.CRABTUI_SiteSpeed > 1")
        assert pool.match(job).site == "T2_B_Fast"

    @pytest.mark.parametrize(("text", "expected"), [
        ('[[site]]\nname = "T2_A"\nspeed = 0\n', "pool.toml: site[1].speed: must be a positive number, the site's "
                                                "CPU speed relative to 1.0 (1.5 runs jobs 1.5 times as fast), got 0"),
        ('[[site]]\nname = "T2_A"\nspeed = "fast"\n', 'pool.toml: site[1].speed: must be a positive number'),
        ('[[site]]\nname = "T2_A"\nspeed = true\n', "pool.toml: site[1].speed: must be a positive number"),
        ('[[site]]\nname = "T2_A"\nspeed = inf\n', "pool.toml: site[1].speed: must be a positive number"),
        ('[[site]]\nname = "T2_A"\nsped = 1\n', 'pool.toml: site[1].sped: unknown key; did you mean "speed"?'),
        ('[[site]]\nname = "T2_A"\nfailures = 3\n',
         "pool.toml: site[1].failures: must be an array of tables, such as failures = [{probability = 0.1, "
         "exitCode = 8021}, {probability = 0.05, memoryMB = 3000}], got 3"),
        ('[[site]]\nname = "T2_A"\nfailures = [{probability = 0.1, exitcode = 8021}]\n',
         'pool.toml: site[1].failures[1].exitcode: unknown key; did you mean "exitCode"?'),
        ('[[site]]\nname = "T2_A"\nfailures = [{exitCode = 8021}]\n',
         "pool.toml: site[1].failures[1].probability: missing"),
        ('[[site]]\nname = "T2_A"\nfailures = [{probability = 1.5, exitCode = 8021}]\n',
         "pool.toml: site[1].failures[1].probability: must be a number from 0 to 1, got 1.5"),
        ('[[site]]\nname = "T2_A"\nfailures = [{probability = 0.1}]\n',
         "pool.toml: site[1].failures[1]: give exactly one of exitCode (the payload fails with it) and memoryMB "
         "(the payload grows to that much memory), got neither"),
        ('[[site]]\nname = "T2_A"\nfailures = [{probability = 0.1, exitCode = 1, memoryMB = 3000}]\n',
         "pool.toml: site[1].failures[1]: give exactly one of exitCode"),
        ('[[site]]\nname = "T2_A"\nfailures = [{probability = 0.1, exitCode = 0}]\n',
         "pool.toml: site[1].failures[1].exitCode: must be an exit code, a whole number from 1 to 2147483647, got 0"),
        ('[[site]]\nname = "T2_A"\nfailures = [{probability = 0.1, memoryMB = "3 GB"}]\n',
         'pool.toml: site[1].failures[1].memoryMB: must be a memory size in MB'),
        ('[[site]]\nname = "T2_A"\n[[site]]\nname = "T2_B"\nfailures = [{probability = 0.6, exitCode = 1}, '
         '{probability = 0.6, exitCode = 2}]\n',
         "pool.toml: site[2].failures: the probabilities add up to 1.2; they may add up to at most 1"),
        ('[[site]]\nname = "T2_A"\n[site.attributes]\nCRABTUI_SiteSpeed = 2.0\n',
         'pool.toml: site[1].attributes.CRABTUI_SiteSpeed: set with the site key "speed"'),
        ('[[site]]\nname = "T2_A"\n[site.expressions]\ncrabtui_sitefailures = "1"\n',
         'pool.toml: site[1].expressions.crabtui_sitefailures: set with the site key "failures"'),
    ])
    def test_errors(self, text, expected):
        message = pool_error(text)
        assert message.startswith(expected), message


class TestShippedGrid:
    def test_the_grid_loads_with_its_sites(self, tmp_path):
        pool = load_pool(grid_path(), tmp_path)
        sites = {site.name: site for site in pool.sites}
        assert list(sites) == ["T2_XX_Local", "T2_CH_CERN", "T1_US_FNAL", "T2_US_Nebraska", "T2_DE_DESY", "T2_IT_Pisa"]
        assert {name: site.speed for name, site in sites.items()} == {
            "T2_XX_Local": 1.0, "T2_CH_CERN": 1.5, "T1_US_FNAL": 1.2, "T2_US_Nebraska": 1.0, "T2_DE_DESY": 0.8,
            "T2_IT_Pisa": 0.7}
        assert [f.as_json() for f in sites["T2_US_Nebraska"].failures] == [{"probability": 0.2, "exitCode": 8021}]
        assert [f.as_json() for f in sites["T2_DE_DESY"].failures] == [{"probability": 0.1, "memoryMB": 3000}]
        assert all(2 <= site.slots <= 4 for site in pool.sites)

    def test_install_copies_it_to_the_state_dir(self, tmp_path):
        state = StateDir(str(tmp_path))
        path = install_grid(state)
        assert path == state.pool_config and Path(path).read_text() == Path(grid_path()).read_text()
        with pytest.raises(FileExistsError, match="pool.toml exists already"):
            install_grid(state)
        Path(path).write_text("# mine\n")
        install_grid(state, overwrite=True)
        assert Path(path).read_text() == Path(grid_path()).read_text()


# ------------------------------------------------------------------------------------ the machine ad in a job

@pytest.fixture
def schedd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An embedded schedd daemon of its own (as tests/schedd's fixture), stopped at the end."""
    for name, value in PERIODIC_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CRABTUI_STATE_DIR", raising=False)
    path = tmp_path / "state"
    if len(os.fsencode(path / "schedd.sock")) > SOCKET_PATH_MAX:
        import tempfile
        path = Path(tempfile.mkdtemp(prefix="crabtui-", dir="/tmp")) / "state"
    path.mkdir(mode=0o700)
    work = tmp_path / "work"
    work.mkdir()
    harness = Harness(StateDir(str(path)), work)
    try:
        yield harness
    finally:
        harness.stop()
        stop_daemon(harness.state)


SMALL_GRID = """
    [[site]]
    name = "T2_CH_CERN"
    speed = 1.5
    failures = [{probability = 0.25, exitCode = 8021}]
    [[site]]
    name = "T2_IT_Pisa"
    speed = 0.5
"""


class TestMachineAd:
    def test_a_job_reads_its_slots_machine_ad(self, schedd):
        schedd.write_pool(SMALL_GRID)
        script = schedd.write("show.sh", '#!/bin/sh\ncat "$_CONDOR_MACHINE_AD"\necho "FILE=$_CONDOR_MACHINE_AD"\n',
                              executable=True)
        result = schedd.submit(f"""
            executable = {script}
            requirements = TARGET.GLIDEIN_CMSSite == "T2_CH_CERN"
            output = out.txt
            log = job.log
            queue
            """)
        ad = schedd.wait_history(f"{result.cluster}.0")
        assert ad["ExitCode"] == 0
        text = (schedd.work / "out.txt").read_text()
        ad_text, _, file_line = text.rpartition("FILE=")
        machine = classad2.parseOne(ad_text)
        assert machine["GLIDEIN_CMSSite"] == "T2_CH_CERN"
        assert machine["Name"] == "slot1@t2-ch-cern.crabtui.local"
        assert machine[SPEED_ATTRIBUTE] == 1.5
        assert json.loads(machine[FAILURES_ATTRIBUTE]) == [{"probability": 0.25, "exitCode": 8021}]
        # the wrapper's own reader agrees with classad2
        mine = jobad.parse_ad(ad_text)
        assert mine["glidein_cmssite"] == "T2_CH_CERN" and jobad.site_speed(mine) == 1.5
        assert jobad.site_failures(mine) == [{"probability": 0.25, "exitCode": 8021}]
        assert not os.path.exists(file_line.strip()), "the machine ad file is removed when the job ends"

    def test_the_wrapper_runs_cmsrun_at_the_sites_speed_and_a_planned_hold_holds(self, schedd):
        schedd.write_pool(SMALL_GRID)
        job_input(schedd.work)
        plan = [PlannedFailure(job="2", attempt=1, hold_code=13)]
        lines = [
            f"executable = {sys.executable}",
            'arguments = "-m engine.crab.wn.wrapper"',
            f'environment = "PYTHONPATH={ROOT}"',
            'requirements = TARGET.GLIDEIN_CMSSite == "T2_IT_Pisa"',
            f"+CRAB_ReqName = {classad2.quote(TASK)}",
            "+CRAB_Retry = 0",
            f"+CRABTUI_TimeScale = {SCALE}",
            '+CRABTUI_InputFile = "input.json"',
            f"+CRABTUI_FailurePlan = {classad2.quote(failure_plan.plan_json(plan))}",
            "request_memory = 2000",
            *(f"{k} = {v}" for k, v in failure_plan.exit_hold_commands(plan).items()),
            "log = job.log",
        ]
        submit = "\n".join(lines) + "\n"
        ok = schedd.submit(submit + '+CRAB_Id = "1"\noutput = out.1\nerror = out.1\nqueue\n', name="job1.sub")
        held = schedd.submit(submit + '+CRAB_Id = "2"\noutput = out.2\nerror = out.2\nqueue\n', name="job2.sub")
        ad = schedd.wait_history(f"{ok.cluster}.0")
        assert ad["ExitCode"] == 0, (schedd.work / "out.1").read_text()
        report = fjr.read_report(schedd.work / "jobReport.json.1")
        summary = fjr.summarize(report)
        assert summary.site == "T2_IT_Pisa" and summary.exit_code == 0
        assert summary.throughput == pytest.approx(DEFAULT_EVENTS_PER_SECOND * 0.5)
        assert summary.events == 400 and summary.lumi_count == 5
        held_ad = schedd.wait_status(f"{held.cluster}.0", JobStatus.HELD)
        assert held_ad["HoldReasonCode"] == 3 and held_ad["HoldReasonSubCode"] == 13
        assert held_ad["HoldReason"] == "Held by the crabtui failure plan (hold code 13)"
        assert fjr.read_report(schedd.work / "jobReport.json.2")["exitCode"] == failure_plan.HOLD_EXIT_CODE


# ------------------------------------------------------------------------------------ cmsRun

class TestCmsRun:
    def test_processes_every_lumi_at_the_sites_speed(self, tmp_path):
        settings = cmsrun.Settings(speed=1.5, site="T2_CH_CERN", time_scale=60.0, seed="t/1/1")
        report, clock = simulate(tmp_path, settings, events_per_second=20.0, bytes_per_event=1000)
        assert fjr.read_report(tmp_path / "jobReport.json") == report
        s = fjr.summarize(report)
        assert (s.exit_code, s.site, s.events, s.output_size) == (0, "T2_CH_CERN", 400, 400_000)
        assert s.lumis == {1: [1, 2, 3], 2: [7, 8]} and s.unprocessed == {}
        assert s.throughput == pytest.approx(30.0)
        wall = DEFAULT_INIT_SECONDS + 400 / 30.0
        assert s.wall_s == pytest.approx(wall, abs=1e-3)
        assert 0.85 < s.cpu_efficiency < 0.97
        assert 400 <= s.peak_rss_mb <= 900
        assert clock.slept == pytest.approx(wall / 60.0), "every wait is the simulated time over the time scale"
        step = report["steps"]["cmsRun"]
        assert [f["lfn"] for f in step["input"]["source"]] == ["/store/mc/a.root", "/store/mc/b.root"]
        assert step["input"]["source"][0]["runs"] == {"1": [1, 2, 3]}
        assert step["output"]["output"][0]["size"] == 400_000 and step["errors"] == []
        assert report["exitMsg"] == "OK" and report["exitAcronym"] == "OK"
        assert isinstance(step["performance"]["cpu"]["TotalJobTime"], str), "CMSSW writes figures as strings"

    def test_slower_site_takes_longer(self, tmp_path):
        fast, _ = simulate(tmp_path, cmsrun.Settings(speed=2.0, time_scale=SCALE))
        slow, _ = simulate(tmp_path, cmsrun.Settings(speed=0.5, time_scale=SCALE))
        assert fjr.summarize(slow).wall_s - 10 == pytest.approx(4 * (fjr.summarize(fast).wall_s - 10))

    def test_stop_after_leaves_the_rest_unprocessed(self, tmp_path):
        # 10 s start-up, then 10 s per 100-event lumi: after 25 s no third lumi is begun
        report, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, stop_after=25))
        s = fjr.summarize(report)
        assert s.exit_code == 0 and report["crabtui"]["stopped_early"] is True
        assert s.lumis == {1: [1, 2]} and s.unprocessed == {1: [3], 2: [7, 8]}
        assert s.events == 200 and s.wall_s == pytest.approx(30.0)
        assert s.output_size == 200 * DEFAULT_BYTES_PER_EVENT

    def test_an_injected_exit_code_fails_part_way(self, tmp_path):
        report, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, fail_exit_code=8021, fail_at=0.5))
        s = fjr.summarize(report)
        assert s.exit_code == 8021 and report["exitAcronym"] == "FAILED"
        assert s.lumis == {1: [1, 2]} and s.unprocessed == {1: [3], 2: [7, 8]}
        assert report["steps"]["cmsRun"]["errors"][0]["type"] == "FileReadError"
        assert report["steps"]["cmsRun"]["output"] == {}
        assert cmsrun.exit_status(8021) == 85 and cmsrun.exit_status(8192) == 1

    @pytest.mark.parametrize("fail_at", [0.5, 0.9], ids=["at-the-limit", "past-the-limit"])
    def test_an_injected_exit_code_happens_when_the_stop_after_limit_comes_first(self, tmp_path, fail_at):
        # After 25 s no new lumi is begun: lumi (1, 3), the third, is the first not begun. Trouble
        # planned for it (0.5 x 5 lumis) or for a later one still happens, at that lumi: a planned
        # failure (a probe's failure plan) is never a success.
        report, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, stop_after=25, fail_exit_code=8021,
                                                       fail_at=fail_at))
        s = fjr.summarize(report)
        assert s.exit_code == 8021 and report["steps"]["cmsRun"]["output"] == {}
        assert s.lumis == {1: [1, 2]} and s.unprocessed == {1: [3], 2: [7, 8]}

    def test_memory_trouble_over_the_request_kills_under_it_does_not(self, tmp_path):
        over, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, fail_memory_mb=3000, memory_limit_mb=2000))
        s = fjr.summarize(over)
        assert s.exit_code == cmsrun.MEMORY_EXIT_CODE and s.peak_rss_mb == 3000
        assert over["exitMsg"].startswith("Job killed by HTCondor due to excessive memory use (3000 MB used vs. 2000 MB")
        under, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, fail_memory_mb=3000, memory_limit_mb=4000))
        assert fjr.summarize(under).exit_code == 0 and fjr.summarize(under).peak_rss_mb == 3000

    def test_the_seed_decides_everything(self, tmp_path):
        a, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, seed="x", fail_exit_code=1))
        b, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, seed="x", fail_exit_code=1))
        c, _ = simulate(tmp_path, cmsrun.Settings(time_scale=SCALE, seed="y", fail_exit_code=1))
        for key in ("input", "performance"):
            assert a["steps"]["cmsRun"][key] == b["steps"]["cmsRun"][key]
        assert a["steps"]["cmsRun"]["performance"] != c["steps"]["cmsRun"]["performance"]

    def test_command_line_reads_the_machine_ad_and_really_waits(self, tmp_path):
        path = job_input(tmp_path)
        (tmp_path / "machine.ad").write_text('[ GLIDEIN_CMSSite = "T1_US_FNAL"; CRABTUI_SiteSpeed = 1.2 ]')
        env = {**os.environ, "PYTHONPATH": str(ROOT), "_CONDOR_MACHINE_AD": str(tmp_path / "machine.ad")}
        done = subprocess.run([sys.executable, "-m", "engine.crab.wn.cmsrun", str(path), "--time-scale", "200",
                               "--report", "r.json", "--output-file", "out.root"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        s = fjr.summarize(fjr.read_report(tmp_path / "r.json"))
        assert s.site == "T1_US_FNAL" and s.throughput == pytest.approx(12.0)
        wall = 10 + 400 / 12.0
        assert s.wall_s == pytest.approx(wall, abs=1e-3)
        real = fjr.read_report(tmp_path / "r.json")["crabtui"]["real_wall_s"]
        assert wall / 200 <= real < wall / 200 + 2
        assert json.loads((tmp_path / "out.root").read_text())["events"] == 400

    @pytest.mark.parametrize(("document", "expected"), [
        ([], 'must be a JSON object with a list "files"'),
        ({"files": []}, "files: must be a non-empty list of files"),
        ({"files": [{"lfn": "/store/a", "lumis": [[1, 1]]}]}, "files[1].lumis[1]: must be [run, lumi, events]"),
        ({"files": [{"lfn": "/store/a", "lumis": [[0, 1, 5]]}]}, "files[1].lumis[1]: must be [run, lumi, events]"),
        ({"files": [{"lfn": "", "lumis": [[1, 1, 5]]}]}, "files[1].lfn: must be the file's logical name"),
        ({"files": [{"lfn": "/store/a", "lumis": [[1, 1, 5]], "size": 3}]}, "files[1].size: unknown key"),
        ({"files": [{"lfn": "/store/a", "lumis": [[1, 1, 5]]}], "eventsPerSec": 3},
         'eventsPerSec: unknown key; did you mean "eventsPerSecond"?'),
        ({"files": [{"lfn": "/store/a", "lumis": [[1, 1, 5]]}], "eventsPerSecond": 0}, "eventsPerSecond: must be a number > 0"),
    ])
    def test_input_errors(self, tmp_path, document, expected):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(document))
        with pytest.raises(InputError) as e:
            read_input(path)
        assert str(e.value).startswith(f"{path}: {expected}"), str(e.value)


# ------------------------------------------------------------------------------------ the report

class TestReport:
    def report(self) -> dict:
        return fjr.build_report(exit_code=0, exit_msg="OK", site="T2_CH_CERN", start=1, stop=2,
                                inputs=[{"lfn": "/store/a", "events": 5, "lumis": {1: [1, 2]}}],
                                outputs=[{"pfn": "o.root", "events": 5, "size": 10, "lumis": {1: [1, 2]}}],
                                cpu={"TotalJobTime": 1.5}, memory={"PeakValueRss": 700})

    def test_round_trip(self, tmp_path):
        fjr.write_report(tmp_path / "jobReport.json", self.report())
        back = fjr.read_report(tmp_path / "jobReport.json")
        assert back == self.report() and back["steps"]["cmsRun"]["performance"]["memory"]["PeakValueRss"] == "700"
        assert fjr.summarize(back).wall_s == 1.5 and fjr.summarize(back).output_size == 10

    def test_a_minimal_report_is_valid(self):
        report = fjr.minimal_report(50115, "no report", "T2_A")
        fjr.validate(report)
        assert fjr.summarize(report).errors[0]["exitCode"] == 50115

    @pytest.mark.parametrize(("change", "expected"), [
        (lambda r: r.pop("exitCode"), "jobReport.json: exitCode: missing; a job report needs the job's exit code"),
        (lambda r: r.update(exitCode="0"), 'jobReport.json: exitCode: must be the job\'s exit code, a whole number, got "0"'),
        (lambda r: r["steps"].pop("cmsRun"), 'jobReport.json: steps.cmsRun: missing'),
        (lambda r: r["steps"]["cmsRun"]["input"]["source"][0].update(runs={"x": [1]}),
         "jobReport.json: steps.cmsRun.input.source[1].runs.x: not a run number"),
        (lambda r: r["steps"]["cmsRun"]["input"]["source"][0].update(runs={"1": [0]}),
         "jobReport.json: steps.cmsRun.input.source[1].runs.1: must be a list of lumi numbers from 1"),
        (lambda r: r["steps"]["cmsRun"]["output"]["output"][0].update(size=-1),
         "jobReport.json: steps.cmsRun.output.output[1].size: must be a whole number >= 0, got -1"),
        (lambda r: r["steps"]["cmsRun"]["performance"]["cpu"].update(TotalJobTime="soon"),
         'jobReport.json: steps.cmsRun.performance.cpu.TotalJobTime: must be a number or a decimal string, got "soon"'),
        (lambda r: r["steps"]["cmsRun"]["errors"].append({"type": "X"}),
         "jobReport.json: steps.cmsRun.errors[1].details: missing"),
    ])
    def test_validation_names_the_key(self, change, expected):
        report = self.report()
        change(report)
        with pytest.raises(fjr.FJRError) as e:
            fjr.validate(report)
        assert str(e.value).startswith(expected), str(e.value)

    def test_unreadable_files(self, tmp_path):
        with pytest.raises(fjr.FJRError, match="no such file; the job left no framework job report"):
            fjr.read_report(tmp_path / "jobReport.json.1")
        (tmp_path / "bad.json").write_text("{\n  'exitCode': 0}")
        with pytest.raises(fjr.FJRError, match=r"bad.json:2: invalid JSON"):
            fjr.read_report(tmp_path / "bad.json")


# ------------------------------------------------------------------------------------ failure injection

PROFILE = [{"probability": 0.2, "exitCode": 8021}, {"probability": 0.1, "memoryMB": 3000}]


class TestFailureChoice:
    def test_the_plan_comes_first_exact_attempts_before_every_attempt(self):
        plan = [PlannedFailure(job="2", attempt=1, exit_code=8021), PlannedFailure(job="2", attempt=None, exit_code=1),
                PlannedFailure(job="5", attempt=1, hold_code=13), PlannedFailure(job="6", attempt=1, memory_mb=3000),
                PlannedFailure(job="7", attempt=1, exit_code=0)]
        entries = json.loads(failure_plan.plan_json(plan))
        assert entries[1] == {"job": "2", "attempt": "*", "exitCode": 1}
        assert wrapper.choose_failure(entries, [], TASK, "2", 1) == wrapper.Failure("plan", exit_code=8021)
        assert wrapper.choose_failure(entries, [], TASK, "2", 7) == wrapper.Failure("plan", exit_code=1)
        assert wrapper.choose_failure(plan, [], TASK, "5", 1) == wrapper.Failure("plan", hold=13)
        assert wrapper.choose_failure(plan, [], TASK, "6", 1) == wrapper.Failure("plan", memory_mb=3000)
        assert wrapper.choose_failure(plan, [], TASK, "6", 2) is None
        # exitCode 0 forces success even at a site that always fails
        assert wrapper.choose_failure(plan, [{"probability": 1.0, "exitCode": 1}], TASK, "7", 1) is None
        assert json.loads(failure_plan.plan_json(plan, job="2")) == entries[:2]

    def test_the_site_profile_is_deterministic_and_has_its_rates(self):
        draws = [wrapper.choose_failure([], PROFILE, TASK, str(job), 1) for job in range(1, 2001)]
        again = [wrapper.choose_failure([], PROFILE, TASK, str(job), 1) for job in range(1, 2001)]
        assert draws == again
        read_errors = sum(1 for d in draws if d and d.exit_code == 8021)
        memory = sum(1 for d in draws if d and d.memory_mb == 3000)
        assert 340 < read_errors < 460 and 150 < memory < 250
        assert {d.source for d in draws if d} == {"site"}
        other_task = [wrapper.choose_failure([], PROFILE, "other", str(job), 1) for job in range(1, 2001)]
        assert other_task != draws

    def test_exit_hold_commands_give_the_planned_subcode(self):
        plan = [PlannedFailure(job="5", attempt=1, hold_code=13), PlannedFailure(job="5", attempt=None, hold_code=6),
                PlannedFailure(job="2", attempt=1, exit_code=1)]
        commands = failure_plan.exit_hold_commands(plan)

        def evaluate(name: str, **attrs):
            ad = classad2.ClassAd({"ExitCode": failure_plan.HOLD_EXIT_CODE, **attrs})
            ad["X"] = classad2.ExprTree(commands[name])
            return ad.eval("X")

        assert evaluate("on_exit_hold_subcode", CRAB_Id="5", CRAB_Retry=0) == 13
        assert evaluate("on_exit_hold_subcode", CRAB_Id="5", CRAB_Retry=3) == 6
        assert evaluate("on_exit_hold_subcode", CRAB_Id=5, CRABTUI_Attempt=1, CRAB_Retry=4) == 13
        assert evaluate("on_exit_hold", CRAB_Id="5", CRAB_Retry=0) is True
        assert evaluate("on_exit_hold", CRAB_Id="2", CRAB_Retry=0) is False
        assert evaluate("on_exit_hold_reason", CRAB_Id="5") == "Held by the crabtui failure plan (hold code 13)"
        assert failure_plan.exit_hold_commands([PlannedFailure(job="1", attempt=1, exit_code=1)]) == {}


class TestAdFiles:
    def test_both_syntaxes(self):
        ad = classad2.ClassAd({"S": 'a"b\\c', "I": -3, "R": 1.5, "B": True, "J": json.dumps([{"x": "é"}])})
        ad["E"] = classad2.ExprTree('stringListMember(GLIDEIN_CMSSite, "a;b,c") && { "x" } =!= undefined')
        for text in (str(ad), "S = \"a\\\"b\\c\"\nI = -3\nR = 1.5\nB = true\nJ = \"[{\\\"x\\\": \\\"\\u00e9\\\"}]\""):
            parsed = jobad.parse_ad(text)
            assert parsed["s"] == 'a"b\\c' and parsed["I"] == -3 and parsed["R"] == 1.5 and parsed["B"] is True
            assert json.loads(parsed["J"]) == [{"x": "é"}]
        expression = jobad.parse_ad(str(ad))["E"]
        assert isinstance(expression, jobad.Expression) and "a;b,c" in expression

    def test_not_an_ad(self):
        with pytest.raises(ValueError, match="not an attribute definition"):
            jobad.parse_ad("[ A = 1; 3 ]")


# ------------------------------------------------------------------------------------ the wrapper

def run_wrapper(tmp_path: Path, attrs: dict, machine: dict | None = None, **env_vars: str) -> subprocess.CompletedProcess:
    ad = classad2.ClassAd({"CRAB_ReqName": TASK, "CRAB_Retry": 0, "RequestMemory": 2000,
                           "CRABTUI_TimeScale": SCALE, **attrs})
    (tmp_path / "job.ad").write_text(ad.printOld())  # as condor_starter writes .job.ad
    env = {**os.environ, "PYTHONPATH": str(ROOT), "_CONDOR_JOB_AD": str(tmp_path / "job.ad"), **env_vars}
    env.pop("_CONDOR_MACHINE_AD", None)
    if machine is not None:
        (tmp_path / "machine.ad").write_text(classad2.ClassAd(machine).printOld())
        env["_CONDOR_MACHINE_AD"] = str(tmp_path / "machine.ad")
    return subprocess.run([sys.executable, "-m", "engine.crab.wn.wrapper"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


CERN = {"GLIDEIN_CMSSite": "T2_CH_CERN", "CRABTUI_SiteSpeed": 1.5, "CRABTUI_SiteFailures": "[]"}


class TestWrapper:
    def test_runs_the_simulated_cmsrun(self, tmp_path):
        job_input(tmp_path)
        done = run_wrapper(tmp_path, {"CRAB_Id": "4", "CRABTUI_InputFile": "input.json"}, CERN)
        assert done.returncode == 0, done.stdout + done.stderr
        report = fjr.read_report(tmp_path / "jobReport.json.4")
        s = fjr.summarize(report)
        assert (s.site, s.exit_code, s.events) == ("T2_CH_CERN", 0, 400)
        assert s.throughput == pytest.approx(15.0)
        assert report["crabtui"]["job"] == "4" and report["crabtui"]["attempt"] == 1
        assert report["crabtui"]["injected"] is None and report["crabtui"]["payload"] == "cmsRun"

    def test_a_planned_exit_code_for_this_attempt_only(self, tmp_path):
        job_input(tmp_path)
        plan = failure_plan.plan_json([PlannedFailure(job="4", attempt=2, exit_code=8021)])
        attrs = {"CRAB_Id": 4, "CRABTUI_InputFile": "input.json", "CRABTUI_FailurePlan": plan}
        assert run_wrapper(tmp_path, attrs, CERN).returncode == 0
        done = run_wrapper(tmp_path, {**attrs, "CRAB_Retry": 1}, CERN)
        assert done.returncode == 8021 % 256
        report = fjr.read_report(tmp_path / "jobReport.json.4")
        assert report["exitCode"] == 8021 and report["crabtui"]["injected"] == {"source": "plan", "exitCode": 8021}
        assert report["crabtui"]["attempt"] == 2 and report["crabtui"]["unprocessed"]

    def test_the_site_profile_fails_the_same_attempts_every_time(self, tmp_path):
        job_input(tmp_path)
        machine = {**CERN, "CRABTUI_SiteFailures": json.dumps([{"probability": 0.5, "exitCode": 8021}])}
        expected = {job: wrapper.choose_failure([], [{"probability": 0.5, "exitCode": 8021}], TASK, str(job), 1)
                    for job in (1, 2, 3, 4)}
        assert None in expected.values() and any(expected.values())
        for job, failure in expected.items():
            done = run_wrapper(tmp_path, {"CRAB_Id": str(job), "CRABTUI_InputFile": "input.json"}, machine)
            assert done.returncode == (85 if failure else 0), done.stdout
            injected = fjr.read_report(tmp_path / f"jobReport.json.{job}")["crabtui"]["injected"]
            assert injected == (failure.as_json() if failure else None)

    def test_memory_over_the_request_ends_like_a_memory_kill(self, tmp_path):
        job_input(tmp_path)
        plan = failure_plan.plan_json([PlannedFailure(job="6", attempt=1, memory_mb=3000)])
        done = run_wrapper(tmp_path, {"CRAB_Id": "6", "CRABTUI_InputFile": "input.json",
                                      "CRABTUI_FailurePlan": plan}, CERN)
        assert done.returncode == -signal.SIGKILL
        s = fjr.summarize(fjr.read_report(tmp_path / "jobReport.json.6"))
        assert s.exit_code == 50660 and s.peak_rss_mb == 3000 and s.site == "T2_CH_CERN"

    def test_a_failed_job_runs_at_least_20_simulated_minutes(self, tmp_path):
        """Seed 000: the wrapper sleeps a failed job out to 20 minutes (1.2 s at 1000 simulated
        seconds a real second); a job that succeeds ends at once, and CRAB3_RUNTIME_DEBUG skips it."""
        job_input(tmp_path)
        plan = failure_plan.plan_json([PlannedFailure(job="4", attempt=1, exit_code=8001)])
        failing = {"CRAB_Id": "4", "CRABTUI_InputFile": "input.json", "CRABTUI_FailurePlan": plan}

        def timed(attrs: dict, **env: str) -> tuple[int, float]:
            started = time.monotonic()
            done = run_wrapper(tmp_path, attrs, CERN, **env)
            return done.returncode, time.monotonic() - started

        code, seconds = timed(failing)
        assert code == 8001 % 256 and seconds >= 20 * 60 / SCALE
        assert "Job runtime is less than 20 minutes" in (run_wrapper(tmp_path, failing, CERN).stdout)
        code, quick = timed(failing, CRAB3_RUNTIME_DEBUG="1")
        assert code == 8001 % 256 and quick < 20 * 60 / SCALE
        code, fine = timed({"CRAB_Id": "4", "CRABTUI_InputFile": "input.json"})
        assert code == 0 and fine < 20 * 60 / SCALE

    def test_a_planned_hold_skips_the_payload(self, tmp_path):
        plan = failure_plan.plan_json([PlannedFailure(job="5", attempt=None, hold_code=13)])
        done = run_wrapper(tmp_path, {"CRAB_Id": "5", "CRABTUI_InputFile": "missing.json",
                                      "CRABTUI_FailurePlan": plan}, CERN)
        assert done.returncode == failure_plan.HOLD_EXIT_CODE
        report = fjr.read_report(tmp_path / "jobReport.json.5")
        assert report["exitCode"] == failure_plan.HOLD_EXIT_CODE and report["crabtui"]["injected"]["hold"] == 13

    def test_a_user_executable(self, tmp_path):
        script = tmp_path / "analyze.sh"
        script.write_text('#!/bin/sh\necho "job $1 args $2 $3 retry $CRAB_Retry" > result.txt\nexit "${EXIT:-0}"\n')
        script.chmod(0o755)
        attrs = {"CRAB_Id": "3", "CRABTUI_ScriptExe": str(script), "CRABTUI_ScriptArgs": json.dumps(["a=1", "b=2"])}
        done = run_wrapper(tmp_path, attrs, CERN)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (tmp_path / "result.txt").read_text() == "job 3 args a=1 b=2 retry 0\n"
        report = fjr.read_report(tmp_path / "jobReport.json.3")
        assert report["exitCode"] == 0 and report["executed_site"] == "T2_CH_CERN"
        assert report["crabtui"]["payload"] == str(script)
        # its own failure
        script.write_text("#!/bin/sh\nexit 3\n")
        done = run_wrapper(tmp_path, attrs, CERN)
        assert done.returncode == 3 and fjr.read_report(tmp_path / "jobReport.json.3")["exitCode"] == 3
        # a planned failure replaces a success
        script.write_text("#!/bin/sh\nexit 0\n")
        plan = failure_plan.plan_json([PlannedFailure(job="3", attempt=1, exit_code=8020)])
        done = run_wrapper(tmp_path, {**attrs, "CRABTUI_FailurePlan": plan}, CERN)
        assert done.returncode == 8020 % 256
        assert fjr.read_report(tmp_path / "jobReport.json.3")["steps"]["cmsRun"]["errors"][0]["type"] == "FileOpenError"

    def test_a_script_that_writes_its_own_report_keeps_it(self, tmp_path):
        mine = fjr.build_report(exit_code=0, exit_msg="mine", site=None, start=1, stop=2, inputs=[],
                                cpu={"TotalJobTime": 42})
        script = tmp_path / "own.py"
        script.write_text(f"#!{sys.executable}\nimport json, os\n"
                          f"json.dump({mine!r}, open(os.environ['CRABTUI_JOB_REPORT'], 'w'))\n")
        script.chmod(0o755)
        assert run_wrapper(tmp_path, {"CRAB_Id": "8", "CRABTUI_ScriptExe": str(script)}, CERN).returncode == 0
        report = fjr.read_report(tmp_path / "jobReport.json.8")
        assert report["exitMsg"] == "mine" and fjr.summarize(report).wall_s == 42
        assert report["executed_site"] == "T2_CH_CERN"

    def test_a_script_runs_in_a_copy_of_the_sandbox_and_its_listed_outputs_stay(self, tmp_path, monkeypatch):
        """The attempt's scratch directory holds the sandbox; the script's own files there are its
        own; a report listing an output written there is pointed at it, and the directory stays."""
        sandbox = tmp_path / "sandbox"
        sandbox.mkdir()
        (sandbox / "weights.txt").write_text("w=1\n")
        mine = fjr.build_report(exit_code=0, exit_msg="mine", site=None, start=1, stop=2, inputs=[],
                                outputs=[{"pfn": "tree.root", "events": 3, "size": 4, "lumis": {}}])
        (sandbox / "own.py").write_text(
            f"#!{sys.executable}\nimport json, os\nassert open('weights.txt').read() == 'w=1\\n'\n"
            f"open('weights.txt', 'w').write('changed by job ' + os.environ['CRAB_Id'])\n"
            f"open('tree.root', 'w').write('tree')\n"
            f"if os.environ.get('LIST'): json.dump({mine!r}, open(os.environ['CRABTUI_JOB_REPORT'], 'w'))\n")
        (sandbox / "own.py").chmod(0o755)
        attrs = {"CRAB_Id": "8", "CRABTUI_ScriptExe": "own.py", "CRABTUI_Sandbox": "sandbox"}
        assert run_wrapper(tmp_path, attrs, CERN).returncode == 0
        assert (sandbox / "weights.txt").read_text() == "w=1\n", "the sandbox is the task's, not the job's"
        assert not (tmp_path / "scratch.8.1").exists() and not (tmp_path / "tree.root").exists()
        monkeypatch.setenv("LIST", "1")  # now the script lists tree.root in its own report
        assert run_wrapper(tmp_path, {**attrs, "CRABTUI_Attempt": 2}, CERN).returncode == 0
        [output] = fjr.read_report(tmp_path / "jobReport.json.8")["steps"]["cmsRun"]["output"]["output"]
        assert output["pfn"] == "scratch.8.2/tree.root" and (tmp_path / output["pfn"]).read_text() == "tree"

    def test_output_files_join_what_a_scripts_own_report_lists(self, tmp_path):
        """JobType.outputFiles (CRAB_AdditionalOutputFiles) that the script's own report lists stay as
        it lists them; the others are renamed <name>_<job id>, moved beside the job's report (where a
        pool's execute node sends files back from) and added to the report."""
        sandbox = tmp_path / "sandbox"
        sandbox.mkdir()
        mine = fjr.build_report(exit_code=0, exit_msg="mine", site=None, start=1, stop=2, inputs=[],
                                outputs=[{"pfn": "tree.root", "events": 3, "size": 4, "lumis": {}}])
        (sandbox / "own.py").write_text(
            f"#!{sys.executable}\nimport json, os\nopen('tree.root', 'w').write('tree')\n"
            f"open('hists.root', 'w').write('hists')\n"
            f"json.dump({mine!r}, open(os.environ['CRABTUI_JOB_REPORT'], 'w'))\n")
        (sandbox / "own.py").chmod(0o755)
        attrs = {"CRAB_Id": "8", "CRABTUI_ScriptExe": "own.py", "CRABTUI_Sandbox": "sandbox",
                 "CRAB_AdditionalOutputFiles": json.dumps(["tree.root", "hists.root"])}
        assert run_wrapper(tmp_path, attrs, CERN).returncode == 0
        outputs = fjr.read_report(tmp_path / "jobReport.json.8")["steps"]["cmsRun"]["output"]["output"]
        assert [o["pfn"] for o in outputs] == ["scratch.8.1/tree.root", "hists_8.root"]
        assert [(tmp_path / o["pfn"]).read_text() for o in outputs] == ["tree", "hists"]

    def test_problems_still_leave_a_report(self, tmp_path):
        done = run_wrapper(tmp_path, {"CRABTUI_InputFile": "input.json"}, CERN)  # no CRAB_Id
        assert done.returncode == 50113 % 256
        report = fjr.read_report(tmp_path / "jobReport.json")
        assert report["exitCode"] == 50113 and "CRAB_Id" in report["exitMsg"]
        (tmp_path / "input.json").write_text('{"files": []}')  # cmsRun cannot read its input
        done = run_wrapper(tmp_path, {"CRAB_Id": "9", "CRABTUI_InputFile": "input.json"}, CERN)
        report = fjr.read_report(tmp_path / "jobReport.json.9")
        assert report["exitCode"] == 50113 and "files: must be a non-empty list" in report["exitMsg"]
        # a payload that crashes without a report
        script = tmp_path / "crash.sh"
        script.write_text("#!/bin/sh\nkill -9 $$\n")
        script.chmod(0o755)
        done = run_wrapper(tmp_path, {"CRAB_Id": "10", "CRABTUI_ScriptExe": str(script)}, CERN)
        report = fjr.read_report(tmp_path / "jobReport.json.10")
        assert done.returncode == 137 and report["exitCode"] == 137
        # no machine ad (a real pool without the simulated grid's attributes): speed 1, no site failures
        job_input(tmp_path)
        done = run_wrapper(tmp_path, {"CRAB_Id": "11", "CRABTUI_InputFile": "input.json"})
        assert done.returncode == 0
        assert fjr.summarize(fjr.read_report(tmp_path / "jobReport.json.11")).throughput == pytest.approx(10.0)
