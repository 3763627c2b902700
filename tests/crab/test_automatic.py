"""Automatic splitting: the knobs, the probe split and estimate, the processing and tail splits,
the tail stages, and a simulated cmsRun that reports the lumis it left.

The whole chain runs on the shipped MC dataset with the real simulated cmsRun (1,000,000 times
faster than real time) and checks that every lumi is processed once by a successful job.
"""

from __future__ import annotations

import os
import subprocess
import sys
from array import array
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.crab.taskworker.automatic import (
    AutomaticConfig, AutomaticSplittingError, Estimate, TailStage, events_per_job, missing_lumis, probe_estimate,
    probe_split, processing_split, stage_of, tail_lumis, tail_split, tail_stages,
)
from engine.crab.taskworker.dagman_creator import job_input
from engine.crab.taskworker.datasets import SITES, SYNTHETIC, Block, Dataset, File, Lumis, generate
from engine.crab.taskworker.splitting import SplittingError
from engine.crab.wn import cmsrun, fjr
from engine.crab.wn.job_input import DEFAULT_BYTES_PER_EVENT, make_input, read_input, write_input

ROOT = Path(__file__).resolve().parent.parent.parent
MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
SCALE = 1e6


@pytest.fixture(scope="module")
def mc() -> Dataset:
    return generate(SYNTHETIC[MC])


def make_dataset(blocks: list[tuple[tuple[str, ...], list[list[tuple[int, int, int]]]]]) -> Dataset:
    """A dataset from (sites, files), each file a list of (run, lumi, events)."""
    made, n = [], 0
    for b, (sites, files) in enumerate(blocks, 1):
        fs = []
        for lumis in files:
            n += 1
            cols = [array("I", (t[i] for t in lumis)) for i in range(3)]
            fs.append(File(f"/store/user/me/{n}.root", 1000, sum(cols[2]), Lumis(*cols)))
        made.append(Block(f"/Hand/Made-v1/USER#{b}", tuple(sorted(sites)), tuple(fs)))
    return Dataset("/Hand/Made-v1/USER", tuple(made), "test")


def lumis_of(job) -> dict[int, list[int]]:
    """run -> lumi numbers of a JobSplit."""
    return {run: [n for a, b in ranges for n in range(a, b + 1)] for run, ranges in job.lumi_mask().items()}


def pairs(lumis) -> list[tuple[int, int]]:
    return [(run, n) for run, numbers in lumis.items() for n in numbers]


def all_lumis(dataset: Dataset) -> set[tuple[int, int]]:
    return {(lu.run, lu.lumi) for f in dataset.files for lu in f.lumis}


def report_file(tmp_path: Path, name: str, *, exit_code: int = 0, throughput: float = 10.0, events: int = 1000,
                size: int = 5_000_000) -> Path:
    """A probe's job report with these figures, written by the FJR module."""
    path = tmp_path / name
    fjr.write_report(path, fjr.build_report(
        exit_code=exit_code, exit_msg="OK" if not exit_code else "failed", site="T2_XX_Local", start=0, stop=1,
        inputs=[{"lfn": "/store/a.root", "events": events, "lumis": {1: [1]}}],
        outputs=[] if exit_code else [{"pfn": "output.root", "events": events, "size": size, "lumis": {1: [1]}}],
        errors=[{"type": "FileReadError", "details": "failed", "exitCode": exit_code}] if exit_code else [],
        cpu={"EventThroughput": throughput}))
    return path


# ------------------------------------------------------------------------------------ knobs

def test_the_knobs_default_to_crabs():
    c = AutomaticConfig()
    assert c.crab() == {
        "minAutomaticRuntimeMins": 180, "numAutomaticProbes": 5, "automaticProbeRuntimeMins": 15,
        "automaticTailRuntimeMinimumMins": 45, "automaticTailRuntimeFraction": 0.2,
        "automaticProcessingOverheadMins": 60, "automaticOutputSizeMaximum": 5_000_000_000,
        "minAutomaticTailSize": 100, "minAutomaticTailTriggers": [50, 80, 100], "automaticRuntimeMargin": 0.75,
        "maxJobsPerTask": 10_000}
    assert AutomaticConfig.from_crab(c.crab()) == c
    assert c.probe_stop_after_s == 900 and c.processing_wall_mins(480) == 540
    assert c.tail_runtime_mins(180) == 45 and c.tail_runtime_mins(480) == 96
    assert AutomaticConfig.from_crab({"automaticOutputSizeMaximum": 5e9}).output_size_maximum == 5_000_000_000


@pytest.mark.parametrize(("values", "message"), [
    ({"numAutomaticProbe": 3},
     'numAutomaticProbe: not a knob of automatic splitting; did you mean "numAutomaticProbes"?'),
    ({"numAutomaticProbes": 0}, "numAutomaticProbes: must be > 0, got 0"),
    ({"numAutomaticProbes": 2.5}, "numAutomaticProbes: must be a whole number, got 2.5"),
    ({"automaticProbeRuntimeMins": "15"}, "automaticProbeRuntimeMins: must be a number, got '15'"),
    ({"minAutomaticTailTriggers": [50, 100, 80]}, "minAutomaticTailTriggers: must be ascending percentages"),
    ({"minAutomaticTailTriggers": [50, 80]}, "minAutomaticTailTriggers: must be ascending percentages in 1..100 "
                                             "ending with 100"),
    ({"automaticRuntimeMargin": 1.5}, "automaticRuntimeMargin: must be a fraction, at most 1, got 1.5"),
])
def test_a_bad_knob_is_named(values, message):
    with pytest.raises(ValueError) as e:
        AutomaticConfig.from_crab(values)
    assert str(e.value).startswith(message)


def test_a_runtime_under_the_minimum_is_refused_with_crabs_message():
    AutomaticConfig().check_runtime(180)
    with pytest.raises(AutomaticSplittingError, match="^Minimum runtime requirement for automatic splitting is "
                                                      "180 minutes. Raise Data.unitsPerJob from 120."):
        AutomaticConfig().check_runtime(120)
    AutomaticConfig(min_runtime_mins=3).check_runtime(5)


def test_job_ids_name_their_stage():
    assert [stage_of(i) for i in ("0-1", "0-5", "1", "17", "1-1", "3-12")] == [
        "probe", "probe", "processing", "processing", "tail", "tail"]


# ------------------------------------------------------------------------------------ probes

def test_probes_are_a_shuffled_sample_of_the_input(mc):
    probes = probe_split(mc, AutomaticConfig(), seed="task_a")
    assert [p.id for p in probes] == ["0-1", "0-2", "0-3", "0-4", "0-5"]
    block_of = {f.lfn: b.name for b in mc.blocks for f in b.files}
    order = [f.lfn for f in mc.files]
    assert [len(p.files) for p in probes] == [4, 4, 2, 4, 4], "ceil(20 / 5) files a probe, within the two blocks"
    for p in probes:
        assert len({block_of[lfn] for lfn in p.files}) == 1
        assert {(r, n) for r, n in pairs(lumis_of(p))} == {
            (lu.run, lu.lumi) for f in mc.files if f.lfn in p.files for lu in f.lumis}
    assert any([order.index(lfn) for lfn in p.files] != sorted(order.index(lfn) for lfn in p.files) for p in probes)
    assert probe_split(mc, AutomaticConfig(), seed="task_a") == probes, "the same task splits the same way"
    assert probe_split(mc, AutomaticConfig(num_probes=50), seed="x")[-1].id == "0-20", "one file a probe at most"


def test_probes_keep_to_the_lumi_mask(mc):
    first = next(mc.files)
    mask = {1: [(first.lumis.numbers[0], first.lumis.numbers[0])]}
    probes = probe_split(mc, AutomaticConfig(), seed="t", lumi_mask=mask)
    assert [(p.id, p.files, p.nlumis) for p in probes] == [("0-1", (first.lfn,), 1)]


def test_the_estimate_averages_the_probes_that_succeeded(tmp_path):
    reports = {"0-1": report_file(tmp_path, "r1", throughput=8.0, events=1000, size=5_000_000),
               "0-2": report_file(tmp_path, "r2", throughput=12.0, events=1000, size=7_000_000),
               "0-3": report_file(tmp_path, "r3", exit_code=8021, throughput=100.0),
               "0-4": None}
    e = probe_estimate(reports)
    assert e == Estimate(throughput=10.0, event_size=(5001 + 7001) / 2, probes=("0-1", "0-2"))


def test_no_probe_that_succeeded_fails_the_task_naming_each(tmp_path):
    (tmp_path / "bad").write_text("{")
    reports = {"0-1": report_file(tmp_path, "r1", exit_code=8021), "0-2": None,
               "0-3": report_file(tmp_path, "r3", events=0), "0-4": tmp_path / "bad"}
    with pytest.raises(AutomaticSplittingError) as e:
        probe_estimate(reports)
    message = str(e.value)
    assert message.startswith("Splitting failed because all probe jobs failed or anyhow failed to provide "
                              "estimates (0-1: failed with exit code 8021; 0-2: no job report; "
                              "0-3: processed no event; 0-4: ")
    assert str(tmp_path / "bad") in message and message.endswith("or choose another Data.splitting.")
    assert isinstance(e.value, SplittingError)
    with pytest.raises(AutomaticSplittingError, match=r"estimates \(no probe job ran\)"):
        probe_estimate({})


# ------------------------------------------------------------------------------------ processing

def test_events_per_job_are_three_quarters_of_the_target():
    e = Estimate(throughput=10.0, event_size=5000, probes=("0-1",))
    assert events_per_job(AutomaticConfig(), 480, e) == 0.75 * 480 * 60 * 10 == 216_000
    assert events_per_job(AutomaticConfig(), 10, e) == 4500
    assert events_per_job(AutomaticConfig(runtime_margin=0.5), 10, e) == 3000
    assert events_per_job(AutomaticConfig(), 1, Estimate(0.001, 5000, ("0-1",))) == 1, "a lumi a job at least"


def test_the_output_size_caps_events_per_job():
    big = Estimate(throughput=10.0, event_size=1_000_000, probes=("0-1",))
    assert events_per_job(AutomaticConfig(), 480, big) == 5000, "5 GB of 1 MB events"
    assert events_per_job(AutomaticConfig(output_size_maximum=2_000_000_000), 480, big) == 2000


def test_processing_jobs_take_the_target(mc):
    e = Estimate(throughput=10.0, event_size=5000, probes=("0-1",))
    jobs = processing_split(mc, AutomaticConfig(), 10, e)
    assert [j.id for j in jobs] == [str(i) for i in range(1, len(jobs) + 1)]
    assert all(j.events <= 4500 or j.nlumis == 1 for j in jobs)
    assert Counter(p for j in jobs for p in pairs(lumis_of(j))) == Counter(all_lumis(mc))
    capped = processing_split(mc, AutomaticConfig(), 10, Estimate(10.0, 5_000_000_000 / 1000, ("0-1",)))
    assert all(j.events <= 1000 or j.nlumis == 1 for j in capped) and len(capped) > len(jobs)
    with pytest.raises(SplittingError, match="generated 80 jobs. The maximum number of jobs in each task is 50"):
        processing_split(mc, AutomaticConfig(max_jobs_per_task=50), 1, Estimate(1.0, 5000, ("0-1",)))


# ------------------------------------------------------------------------------------ tails

@pytest.mark.parametrize(("jobs", "stages"), [
    (1, [(1, 1)]), (100, [(1, 100)]), (101, [(1, 50), (2, 80), (3, 101)]), (1000, [(1, 500), (2, 800), (3, 1000)]),
])
def test_tail_stages_fire_at_50_80_and_100_percent(jobs, stages):
    assert [(s.number, s.completion) for s in tail_stages(AutomaticConfig(), jobs)] == stages


def test_a_tail_stage_fires_once_enough_jobs_are_done():
    assert tail_stages(AutomaticConfig(min_tail_size=2, tail_triggers=(25, 100)), 8) == (TailStage(1, 2),
                                                                                          TailStage(2, 8))
    stage = TailStage(2, 80)
    assert not stage.fires(79) and stage.fires(80) and stage.fires(101)


def test_tails_split_the_lumis_left_and_those_of_failed_jobs(mc):
    e = Estimate(throughput=10.0, event_size=5000, probes=("0-1",))
    c = AutomaticConfig(tail_runtime_minimum_mins=3)
    jobs = processing_split(mc, c, 10, e)
    given = [lumis_of(j) for j in jobs]
    (run, numbers), = given[0].items()
    done = fjr.summarize(fjr.build_report(exit_code=0, exit_msg="OK", site=None, start=0, stop=1, inputs=[
        {"lfn": "/store/x.root", "events": 1, "lumis": {run: numbers[:3]}}]))
    left = missing_lumis(given[0], done)
    assert left and not set(pairs(left)) & set(pairs(done.lumis))
    assert set(pairs(left)) | set(pairs(done.lumis)) == set(pairs(given[0]))
    lumis = tail_lumis([left], [given[1]])
    tails = tail_split(mc, c, 10, e, lumis, stage=2)
    assert [t.id for t in tails] == [f"2-{i}" for i in range(1, len(tails) + 1)]
    assert all(t.events <= 0.75 * 3 * 60 * 10 or t.nlumis == 1 for t in tails)
    assert sorted(p for t in tails for p in pairs(lumis_of(t))) == sorted({*pairs(left), *pairs(given[1])})
    assert tail_split(mc, c, 10, e, tail_lumis([{}], []), stage=1) == [], "nothing left: no tail job"
    with pytest.raises(ValueError, match="tail stages count from 1"):
        tail_split(mc, c, 10, e, lumis, stage=0)


lumi_lists = st.lists(st.tuples(st.integers(1, 3), st.integers(1, 8), st.integers(0, 30)),
                      min_size=1, max_size=6, unique_by=lambda t: (t[0], t[1]))
block_lists = st.lists(st.tuples(st.lists(st.sampled_from(SITES), min_size=1, max_size=3, unique=True),
                                 st.lists(lumi_lists, min_size=1, max_size=4)), min_size=1, max_size=3)
outcomes = st.lists(st.tuples(st.sampled_from(["done", "stopped", "failed"]), st.floats(0, 1)), min_size=40,
                    max_size=40)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(block_lists, st.integers(1, 60), st.integers(0, 4), outcomes, st.randoms(use_true_random=False))
def test_every_lumi_is_processed_once_by_a_successful_job(blocks, units, tail_size, outcome, rng):
    """Processing jobs finish, stop part-way or fail part-way in any order; the tail stages fire as
    jobs are done and split what is left: every lumi is then in one successful job's report."""
    dataset = make_dataset([(tuple(sites), files) for sites, files in blocks])  # lumis may be split across files
    config = AutomaticConfig(min_tail_size=tail_size, tail_runtime_minimum_mins=1)
    e = Estimate(throughput=units / 45, event_size=5000, probes=("0-1",))  # events_per_job = units for 1 minute
    jobs = processing_split(dataset, config, 1, e)
    processed: Counter = Counter()
    missing, failed = {}, {}
    for job, (kind, fraction) in zip(jobs, outcome * (1 + len(jobs) // len(outcome))):
        given_pairs = pairs(lumis_of(job))
        cut = len(given_pairs) if kind == "done" else int(fraction * len(given_pairs))
        lumis: dict[int, list[int]] = {}
        for run, n in given_pairs[:cut]:
            lumis.setdefault(run, []).append(n)
        report = fjr.build_report(exit_code=8021 if kind == "failed" else 0, exit_msg="", site=None, start=0,
                                  stop=1, inputs=[{"lfn": job.files[0], "events": 0, "lumis": lumis}],
                                  unprocessed={r: [n] for r, n in given_pairs[cut:]})
        summary = fjr.summarize(report)
        if kind == "failed":
            failed[job.id] = lumis_of(job)
        else:
            processed.update(pairs(summary.lumis))
            missing[job.id] = missing_lumis(lumis_of(job), summary)
    order = [j.id for j in jobs]
    rng.shuffle(order)
    handled: set[str] = set()
    tail_ids = []
    for stage in tail_stages(config, len(jobs)):
        ids = [i for i in order[:stage.completion] if i not in handled]
        handled.update(ids)
        lumis = tail_lumis([missing[i] for i in ids if i in missing], [failed[i] for i in ids if i in failed])
        for tail in tail_split(dataset, config, 1, e, lumis, stage.number):
            tail_ids.append(tail.id)
            processed.update(pairs(lumis_of(tail)))
    assert handled == set(order)
    assert len(set(tail_ids)) == len(tail_ids)
    assert processed == Counter(all_lumis(dataset))


# ------------------------------------------------------------------------------------ cmsRun

def run_cmsrun(tmp_path: Path, name: str, document: dict, *args: str) -> fjr.Summary:
    """The simulated cmsRun on ``document``, in this process through its command line."""
    write_input(tmp_path / f"{name}.json", document)
    cmsrun.main([str(tmp_path / f"{name}.json"), "--report", str(tmp_path / f"{name}.report"),
                 "--time-scale", str(SCALE), "--seed", name, *args])
    return fjr.summarize(fjr.read_report(tmp_path / f"{name}.report"))


def test_cmsrun_out_of_time_reports_the_lumis_it_did_not_process(tmp_path):
    """A real process: 10 s start-up, 10 s per 100-event lumi, no new lumi after 25 s."""
    document = make_input([("/store/mc/a.root", [(1, 1, 100), (1, 2, 100), (1, 3, 100)]),
                           ("/store/mc/b.root", [(2, 7, 100), (2, 8, 100)])])
    write_input(tmp_path / "input.json", document)
    done = subprocess.run([sys.executable, "-m", "engine.crab.wn.cmsrun", "input.json", "--stop-after", "25",
                           "--time-scale", "1000", "--report", "jobReport.json.1"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "the stop-after limit of 25 s: no new lumi is begun" in done.stdout
    report = fjr.read_report(tmp_path / "jobReport.json.1")
    assert report["crabtui"]["unprocessed"] == {"1": [3], "2": [7, 8]}
    s = fjr.summarize(report)
    assert s.exit_code == 0 and s.lumis == {1: [1, 2]} and s.unprocessed == {1: [3], 2: [7, 8]}
    given = read_input(tmp_path / "input.json").lumis()
    assert given == {1: [1, 2, 3], 2: [7, 8]}
    assert missing_lumis(given, s) == s.unprocessed


def test_cmsrun_finishes_a_lumi_split_across_files_once_begun(tmp_path):
    """Lumi (1, 3) is in both files: begun in the first, it is read in the second after the stop."""
    document = make_input([("/store/mc/a.root", [(1, 2, 100), (1, 3, 100)]),
                           ("/store/mc/b.root", [(1, 3, 50), (1, 4, 100)])])
    s = run_cmsrun(tmp_path, "split", document, "--stop-after", "25")
    assert s.lumis == {1: [2, 3]} and s.unprocessed == {1: [4]} and s.events == 250


def test_the_whole_chain_with_the_simulated_cmsrun(tmp_path, mc):
    """Probes measure, processing jobs run out of time on slow sites or fail, tails finish the rest:
    the successful jobs' reports hold every lumi of the dataset once."""
    config = AutomaticConfig(probe_runtime_mins=1, min_runtime_mins=10, tail_runtime_minimum_mins=3, min_tail_size=2)
    minutes = 10
    config.check_runtime(minutes)
    by_lfn = {f.lfn: f for f in mc.files}

    probes = probe_split(mc, config, seed="chain")
    reports = {}
    for k, probe in enumerate(probes):
        args = ["--stop-after", str(config.probe_stop_after_s)]
        if k == 0:
            args += ["--fail-exit-code", "8021", "--fail-at", "0"]
        s = run_cmsrun(tmp_path, f"job.{probe.id}", job_input(probe, by_lfn), *args)
        assert s.exit_code == (8021 if k == 0 else 0) and (k == 0 or s.unprocessed)
        reports[probe.id] = tmp_path / f"job.{probe.id}.report"
    e = probe_estimate(reports)
    assert e.probes == ("0-2", "0-3", "0-4", "0-5") and e.throughput == pytest.approx(10.0)
    assert e.event_size == DEFAULT_BYTES_PER_EVENT + 1

    jobs = processing_split(mc, config, minutes, e)
    assert len(jobs) >= 6 and all(j.events <= 4500 for j in jobs)
    successful: Counter = Counter()
    missing, failed = {}, {}
    stopped = 0
    for k, job in enumerate(jobs):
        args = ["--stop-after", str(minutes * 60), "--speed", "0.5" if k % 2 else "1"]
        if k == 2:
            args += ["--fail-exit-code", "8021", "--fail-at", "0.5"]
        s = run_cmsrun(tmp_path, f"job.{job.id}", job_input(job, by_lfn), *args)
        given = read_input(tmp_path / f"job.{job.id}.json").lumis()
        if s.exit_code:
            failed[job.id] = given
            continue
        successful.update(pairs(s.lumis))
        missing[job.id] = missing_lumis(given, s)
        assert missing[job.id] == s.unprocessed
        stopped += bool(s.unprocessed)
    assert len(failed) == 1 and stopped >= 2

    handled: set[str] = set()
    for stage in tail_stages(config, len(jobs)):
        ids = [j.id for j in jobs[:stage.completion] if j.id not in handled]
        handled.update(ids)
        lumis = tail_lumis([missing[i] for i in ids if i in missing], [failed[i] for i in ids if i in failed])
        for tail in tail_split(mc, config, minutes, e, lumis, stage.number):
            s = run_cmsrun(tmp_path, f"job.{tail.id}", job_input(tail, by_lfn))
            assert s.exit_code == 0 and not s.unprocessed
            successful.update(pairs(s.lumis))
    assert successful == Counter(all_lumis(mc))
