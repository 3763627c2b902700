"""Job splitting: FileBased, LumiBased and EventAwareLumiBased on the shipped and on random datasets.

The split is checked against properties (every lumi in exactly one job, units per job, caps,
blocks, sites) and against :func:`reference`, the same rules written plainly, lumi by lumi.
"""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.crab.taskworker.datasets import SITES, SYNTHETIC, Block, Dataset, File, Lumis, generate
from engine.crab.taskworker.splitting import (
    ALGORITHMS, MAX_JOBS_PER_TASK, JobSplit, SplittingError, event_aware_starts, split,
)

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
DATA = "/Muon0/Run2023C-PromptReco-v1/AOD"
BIG = "/JetMET0/Run2023D-PromptReco-v1/MINIAOD"
FB, LB, EA = ALGORITHMS


@pytest.fixture(scope="module")
def mc() -> Dataset:
    return generate(SYNTHETIC[MC])


@pytest.fixture(scope="module")
def data() -> Dataset:
    return generate(SYNTHETIC[DATA])


def make_dataset(blocks: list[tuple[tuple[str, ...], list[list[tuple[int, int, int]]]]],
                 name: str = "/Hand/Made-v1/USER") -> Dataset:
    """A dataset from (sites, files), each file a list of (run, lumi, events)."""
    made, n = [], 0
    for b, (sites, files) in enumerate(blocks, 1):
        fs = []
        for lumis in files:
            n += 1
            cols = [array("I", (t[i] for t in lumis)) for i in range(3)]
            fs.append(File(f"/store/user/me/{n}.root", 1000, sum(cols[2]), Lumis(*cols)))
        made.append(Block(f"{name}#{b}", tuple(sorted(sites)), tuple(fs)))
    return Dataset(name, tuple(made), "test")


def in_mask(mask, run: int, lumi: int) -> bool:
    return mask is None or any(a <= lumi <= b for a, b in mask.get(run, ()))


def merged(pairs) -> dict[int, list[tuple[int, int]]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for run, lumi in sorted(set(pairs)):
        ranges = out.setdefault(run, [])
        if ranges and ranges[-1][1] + 1 == lumi:
            ranges[-1] = (ranges[-1][0], lumi)
        else:
            ranges.append((lumi, lumi))
    return out


def expand(job: JobSplit) -> list[tuple[int, int]]:
    return [(run, n) for run, ranges in job.lumi_mask().items() for a, b in ranges for n in range(a, b + 1)]


def reference(dataset: Dataset, algorithm: str, units: int, total: int = 0, mask=None) -> list[tuple]:
    """The splitting rules written plainly: (files, lumi mask, nlumis, events, sites) per job."""
    blocks = [(block, [[f.lfn, lu.run, lu.lumi, lu.events, []] for f in block.files for lu in f.lumis
                       if in_mask(mask, lu.run, lu.lumi)]) for block in dataset.blocks]

    def cap(groups):
        capped, seen_files, nlumis, nevents = [], set(), 0, 0
        for sites, lumis in groups:
            kept = []
            for u in lumis:
                if algorithm == FB:
                    if u[0] not in seen_files and len(seen_files) == total:
                        break
                    seen_files.add(u[0])
                elif algorithm == LB:
                    if nlumis == total:
                        break
                    nlumis += 1
                else:
                    if nevents >= total:
                        break
                    nevents += u[3]
                kept.append(u)
            capped.append((sites, kept))
        return capped

    def by_sites(groups):  # blocks at the same set of sites, in order of first appearance
        joined: dict[frozenset, list] = {}
        for sites, lumis in groups:
            joined.setdefault(frozenset(sites), []).extend(lumis)
        return list(joined.items())

    groups = [(block.sites, lumis) for block, lumis in blocks if lumis]  # a block the mask empties orders no group
    if algorithm == FB:  # FileBased caps the files in dataset order, then groups them
        groups = by_sites(cap(groups) if total else groups)
    else:
        groups = by_sites(groups)
        first = {}  # a lumi in several files: its first part takes the others' events and files
        for k, (sites, lumis) in enumerate(groups):
            kept = []
            for u in lumis:
                if (u[1], u[2]) in first:
                    owner = first[u[1], u[2]]
                    owner[3] += u[3]
                    owner[4].append(u[0])
                else:
                    first[u[1], u[2]] = u
                    kept.append(u)
            groups[k] = (sites, kept)
        if total:
            groups = cap(groups)
    where = block_of(dataset)
    jobs = []
    for sites, lumis in groups:
        job = None
        for u in lumis:
            if job is None or (algorithm == FB and u[0] not in job["files"] and len(job["files"]) == units) \
                    or (algorithm == LB and len(job["lumis"]) == units) \
                    or (algorithm == EA and job["events"] + u[3] > units):
                job = {"files": [], "others": [], "lumis": [], "events": 0, "sites": set(sites)}
                jobs.append(job)
            if u[0] not in job["files"]:
                job["files"].append(u[0])
            job["lumis"].append((u[1], u[2]))
            job["events"] += u[3]
            for lfn in u[4]:
                job["others"].append(lfn)
                job["sites"] &= set(where[lfn].sites)
    return [(tuple(dict.fromkeys(j["files"] + j["others"])), merged(j["lumis"]), len(j["lumis"]), j["events"], tuple(sorted(j["sites"])))
            for j in jobs]


def summary(jobs: list[JobSplit]) -> list[tuple]:
    return [(j.files, j.lumi_mask(), j.nlumis, j.events, j.sites) for j in jobs]


def block_of(dataset: Dataset) -> dict[str, Block]:
    return {f.lfn: b for b in dataset.blocks for f in b.files}


def check_common(dataset: Dataset, jobs: list[JobSplit], mask=None, exactly_once: bool = True) -> None:
    """Ids 1..N; each job inside blocks at one set of sites, at those sites; every selected lumi in
    exactly one job."""
    assert [j.id for j in jobs] == [str(i) for i in range(1, len(jobs) + 1)]
    where = block_of(dataset)
    files = {f.lfn: f for f in dataset.files}
    for job in jobs:
        sites = {where[lfn].sites for lfn in job.files}
        assert len(sites) == 1, f"job {job.id} crosses blocks at different sites"
        assert job.sites == where[job.files[0]].sites
        lumis = set(expand(job))
        assert len(lumis) == job.nlumis
        in_files = [lu for lfn in job.files for lu in files[lfn].lumis if (lu.run, lu.lumi) in lumis]
        assert {(lu.run, lu.lumi) for lu in in_files} == lumis
        assert all(any((lu.run, lu.lumi) in lumis for lu in files[lfn].lumis) for lfn in job.files)
        assert job.events == sum(lu.events for lu in in_files)
    if exactly_once:
        selected = sorted((lu.run, lu.lumi) for f in dataset.files for lu in f.lumis if in_mask(mask, lu.run, lu.lumi))
        assert sorted(lu for job in jobs for lu in expand(job)) == selected


# -- the shipped datasets -------------------------------------------------------------------------

CASES = [(FB, 1), (FB, 3), (FB, 7), (LB, 1), (LB, 4), (LB, 50), (EA, 400), (EA, 2000), (EA, 15_000)]


@pytest.mark.parametrize("algorithm,units", CASES)
@pytest.mark.parametrize("name", [MC, DATA])
def test_shipped_datasets_split_as_the_rules_say(request, name, algorithm, units):
    dataset = request.getfixturevalue("mc" if name == MC else "data")
    jobs = split(dataset, algorithm=algorithm, units_per_job=units)
    check_common(dataset, jobs)
    assert summary(jobs) == reference(dataset, algorithm, units)
    assert split(dataset, algorithm=algorithm, units_per_job=units) == jobs  # deterministic


def site_groups(dataset: Dataset) -> dict[tuple[str, ...], list[Block]]:
    """The blocks at each set of sites, in order of first appearance: what is split as one."""
    groups: dict[tuple[str, ...], list[Block]] = {}
    for block in dataset.blocks:
        groups.setdefault(block.sites, []).append(block)
    return groups


def per_group(dataset: Dataset, jobs: list[JobSplit]) -> dict[tuple[str, ...], list[JobSplit]]:
    where = block_of(dataset)
    groups: dict[tuple[str, ...], list[JobSplit]] = {}
    for job in jobs:
        groups.setdefault(where[job.files[0]].sites, []).append(job)
    return groups


def test_filebased_takes_units_files_a_job_per_group_of_blocks_at_the_same_sites(data):
    jobs = split(data, algorithm=FB, units_per_job=7)
    groups = per_group(data, jobs)
    assert list(groups) == list(site_groups(data))  # groups in order of first appearance
    assert len(groups) < len(data.blocks)  # some blocks share their sites
    for sites, blocks in site_groups(data).items():
        got = groups[sites]
        assert [len(j.files) for j in got[:-1]] == [7] * (len(got) - 1)
        assert 1 <= len(got[-1].files) <= 7
        assert [lfn for j in got for lfn in j.files] == [f.lfn for b in blocks for f in b.files]  # file order kept


def test_lumibased_takes_units_lumis_a_job_per_group_of_blocks_at_the_same_sites(data):
    jobs = split(data, algorithm=LB, units_per_job=45)
    for sites, blocks in site_groups(data).items():
        got = per_group(data, jobs)[sites]
        assert [j.nlumis for j in got[:-1]] == [45] * (len(got) - 1)
        assert sum(j.nlumis for j in got) == sum(b.lumis for b in blocks)
    assert len(jobs) == sum(-(-sum(b.lumis for b in blocks) // 45) for blocks in site_groups(data).values())


def test_eventaware_packs_whole_lumis_up_to_the_target(data):
    target = 5000
    jobs = split(data, algorithm=EA, units_per_job=target)
    files = {f.lfn: f for f in data.files}
    for block_jobs in per_group(data, jobs).values():
        for job, following in zip(block_jobs, block_jobs[1:] + [None]):
            assert job.events <= target or job.nlumis == 1
            if following is not None:  # the job stopped because the next lumi would not fit
                lumis = set(expand(following))
                first = next(lu for lu in files[following.files[0]].lumis if (lu.run, lu.lumi) in lumis)
                assert job.events + first.events > target


def test_sites_are_the_blocks_sites(mc):
    jobs = split(mc, algorithm=FB, units_per_job=3)
    assert {j.sites for j in jobs} == {b.sites for b in mc.blocks}
    assert all("T2_XX_Local" in j.sites for j in jobs)


@pytest.mark.parametrize("algorithm,total,measure", [
    (FB, 17, lambda jobs: sum(len(j.files) for j in jobs)),
    (LB, 1234, lambda jobs: sum(j.nlumis for j in jobs)),
])
def test_total_units_caps_files_and_lumis(data, algorithm, total, measure):
    jobs = split(data, algorithm=algorithm, units_per_job=5, total_units=total)
    assert measure(jobs) == total
    check_common(data, jobs, exactly_once=False)
    assert summary(jobs) == reference(data, algorithm, 5, total)


def test_total_units_caps_events_at_the_lumi_that_reaches_it(data):
    total = 250_000
    jobs = split(data, algorithm=EA, units_per_job=20_000, total_units=total)
    got = sum(j.events for j in jobs)
    events = [lu.events for blocks in site_groups(data).values() for b in blocks for f in b.files for lu in f.lumis]
    taken = sum(j.nlumis for j in jobs)
    assert sum(events[:taken]) == got >= total > got - events[taken - 1]
    assert summary(jobs) == reference(data, EA, 20_000, total)


def test_total_units_larger_than_the_dataset_takes_it_all(mc):
    assert split(mc, algorithm=FB, units_per_job=2, total_units=10_000) == split(mc, algorithm=FB, units_per_job=2)


@pytest.mark.parametrize("algorithm,units", [(FB, 2), (LB, 20), (EA, 8000)])
def test_lumi_mask_keeps_only_listed_lumis_and_drops_empty_files(data, algorithm, units):
    runs = data.runs()
    mask = {runs[0]: [(1, 10), (300, 320)], runs[3]: [(50, 700)], runs[5]: [(1, 1)], 1: [(1, 5)]}
    jobs = split(data, algorithm=algorithm, units_per_job=units, lumi_mask=mask)
    check_common(data, jobs, mask)
    assert summary(jobs) == reference(data, algorithm, units, mask=mask)
    used = {lfn for j in jobs for lfn in j.files}
    wanted = {f.lfn for f in data.files if any(in_mask(mask, lu.run, lu.lumi) for lu in f.lumis)}
    assert used == wanted and len(used) < data.nfiles


def test_lumi_mask_ranges_may_be_unsorted_and_overlapping(data):
    run = data.runs()[2]
    messy = {run: [[40, 60], [1, 5], [50, 80], [6, 6]]}
    tidy = {run: [(1, 6), (40, 80)]}
    jobs = split(data, algorithm=LB, units_per_job=10, lumi_mask=messy)
    assert jobs == split(data, algorithm=LB, units_per_job=10, lumi_mask=tidy)
    assert merged(lu for j in jobs for lu in expand(j)) == tidy


def test_jobs_lumi_masks_are_merged_ranges(data):
    job = split(data, algorithm=LB, units_per_job=3000)[0]
    mask = job.lumi_mask()
    assert list(mask) == sorted(mask)
    for ranges in mask.values():
        assert all(a <= b and b + 1 < c for (a, b), (c, _) in zip(ranges, ranges[1:]))


def test_id_prefix_numbers_tail_jobs(mc):
    jobs = split(mc, algorithm=EA, units_per_job=4000, id_prefix="2-")
    assert [j.id for j in jobs] == [f"2-{i}" for i in range(1, len(jobs) + 1)]


# -- EventAwareLumiBased's rules ------------------------------------------------------------------

def test_event_aware_starts_packs_greedily():
    assert event_aware_starts([3, 3, 3, 3], 6) == [0, 2]
    assert event_aware_starts([3, 3, 3, 3], 7) == [0, 2]
    assert event_aware_starts([1, 2, 3, 4, 5], 100) == [0]
    assert event_aware_starts([], 5) == []


def test_event_aware_starts_puts_an_oversized_lumi_alone():
    assert event_aware_starts([2, 2, 50, 2, 2], 5) == [0, 2, 3]
    assert event_aware_starts([50, 0, 0, 1], 5) == [0, 1]  # nothing joins an oversized lumi
    assert event_aware_starts([50, 60, 70], 5) == [0, 1, 2]


def test_event_aware_starts_keeps_empty_lumis_with_the_job_they_follow():
    assert event_aware_starts([5, 0, 0, 1], 5) == [0, 3]
    assert event_aware_starts([0, 0, 0], 1) == [0]


@given(st.lists(st.integers(0, 30), max_size=40), st.integers(1, 40))
def test_event_aware_starts_matches_the_plain_rule(events, target):
    starts, current = [], None
    for i, e in enumerate(events):
        if current is None or current + e > target:
            starts.append(i)
            current = 0
        current += e
    assert event_aware_starts(events, target) == starts


def test_event_aware_split_never_splits_a_lumi_and_isolates_big_ones():
    dataset = make_dataset([(("T2_XX_Local",), [[(1, 1, 10), (1, 2, 500), (1, 3, 10)], [(1, 4, 10), (1, 5, 10)]])])
    jobs = split(dataset, algorithm=EA, units_per_job=25)
    assert [(j.lumi_mask(), j.events, len(j.files)) for j in jobs] == [
        ({1: [(1, 1)]}, 10, 1), ({1: [(2, 2)]}, 500, 1), ({1: [(3, 4)]}, 20, 2), ({1: [(5, 5)]}, 10, 1)]


# -- lumis split across files ---------------------------------------------------------------------

def split_lumi_dataset() -> Dataset:
    return make_dataset([
        (("T2_CH_CERN", "T2_XX_Local"), [[(1, 1, 10), (1, 2, 10)], [(1, 2, 7), (1, 3, 10)]]),
        (("T1_US_FNAL", "T2_XX_Local"), [[(1, 3, 4), (2, 1, 10)]]),
    ])


def test_a_lumi_split_across_files_is_processed_once_with_all_its_files():
    dataset = split_lumi_dataset()
    jobs = split(dataset, algorithm=LB, units_per_job=2)
    lumis = [lu for j in jobs for lu in expand(j)]
    assert sorted(lumis) == [(1, 1), (1, 2), (1, 3), (2, 1)]
    first, second, third = jobs
    assert first.lumi_mask() == {1: [(1, 2)]} and first.events == 27
    assert first.files == ("/store/user/me/1.root", "/store/user/me/2.root")
    assert second.lumi_mask() == {1: [(3, 3)]} and second.events == 14
    assert second.files == ("/store/user/me/2.root", "/store/user/me/3.root")
    assert second.sites == ("T2_XX_Local",)  # where both blocks are
    assert third.lumi_mask() == {2: [(1, 1)]} and third.files == ("/store/user/me/3.root",)


def test_filebased_reads_each_part_of_a_split_lumi_with_its_file():
    jobs = split(split_lumi_dataset(), algorithm=FB, units_per_job=1)
    assert [j.lumi_mask() for j in jobs] == [{1: [(1, 2)]}, {1: [(2, 3)]}, {1: [(3, 3)], 2: [(1, 1)]}]


# -- random datasets against the reference --------------------------------------------------------

lumi_lists = st.lists(st.tuples(st.integers(1, 3), st.integers(1, 8), st.integers(0, 30)),
                      min_size=1, max_size=6, unique_by=lambda t: (t[0], t[1]))
block_lists = st.lists(st.tuples(st.lists(st.sampled_from(SITES), min_size=1, max_size=3, unique=True),
                                 st.lists(lumi_lists, min_size=1, max_size=4)), min_size=1, max_size=3)
masks = st.none() | st.dictionaries(st.integers(1, 4), st.lists(
    st.tuples(st.integers(1, 8), st.integers(0, 4)).map(lambda t: (t[0], t[0] + t[1])), min_size=1, max_size=3),
    max_size=3)


@settings(max_examples=300, deadline=None)
@given(block_lists, st.sampled_from(ALGORITHMS), st.integers(1, 5), st.integers(0, 12), masks)
def test_random_datasets_split_as_the_reference(blocks, algorithm, units, total, mask):
    dataset = make_dataset([(tuple(sites), files) for sites, files in blocks])
    if algorithm == EA:
        units *= 12
        total *= 10
    expected = reference(dataset, algorithm, units, total, mask)
    if not expected:
        with pytest.raises(SplittingError, match="Data.lumiMask and Data.runRange select no lumi of /Hand/Made-v1/USER"):
            split(dataset, algorithm=algorithm, units_per_job=units, total_units=total, lumi_mask=mask)
        return
    jobs = split(dataset, algorithm=algorithm, units_per_job=units, total_units=total, lumi_mask=mask)
    assert summary(jobs) == expected
    assert [j.id for j in jobs] == [str(i) for i in range(1, len(jobs) + 1)]
    if algorithm != FB and not total:  # every selected (run, lumi) once
        selected = {(lu.run, lu.lumi) for f in dataset.files for lu in f.lumis if in_mask(mask, lu.run, lu.lumi)}
        lumis = [lu for j in jobs for lu in expand(j)]
        assert sorted(lumis) == sorted(selected)


# -- errors ---------------------------------------------------------------------------------------

def test_a_mask_that_selects_nothing_is_refused(data):
    with pytest.raises(SplittingError, match=f"^Data.lumiMask and Data.runRange select no lumi of {DATA}: their runs are 1-2, "
                                             r"the dataset's 367100-\d+, 0 run\(s\) in common\. Check Data.lumiMask and Data.runRange\.$"):
        split(data, algorithm=LB, units_per_job=10, lumi_mask={1: [(1, 100)], 2: [(1, 1)]})
    run = data.runs()[0]
    with pytest.raises(SplittingError, match="1 run\\(s\\) in common but none of their lumis"):
        split(data, algorithm=LB, units_per_job=10, lumi_mask={run: [(100_000, 100_001)]})
    with pytest.raises(SplittingError, match=f"^Data.lumiMask and Data.runRange select no lumi of {DATA}. Check"):
        split(data, algorithm=FB, units_per_job=1, lumi_mask={})


@pytest.mark.parametrize("units", [0, -3])
def test_units_per_job_must_be_positive(mc, units):
    with pytest.raises(SplittingError, match=f"Data.unitsPerJob must be > 0, not {units}"):
        split(mc, algorithm=FB, units_per_job=units)
    with pytest.raises(SplittingError, match=f"events per job must be > 0, not {units}"):
        event_aware_starts([1, 2], units)


@pytest.mark.parametrize("algorithm", [FB, LB, EA])
def test_negative_total_units_mean_everything_as_in_crab(mc, algorithm):
    assert split(mc, algorithm=algorithm, units_per_job=3, total_units=-1) == split(mc, algorithm=algorithm,
                                                                                  units_per_job=3)


@pytest.mark.parametrize("algorithm, unit", [(FB, "nfiles"), (LB, "lumis"), (EA, "events")])
def test_a_fraction_of_total_units_is_that_share_of_the_dataset_rounded_half_up(mc, algorithm, unit):
    """CRAB's Splitter: int(fraction x units + 0.5) files, lumis or events; at least one unit."""
    units = getattr(mc, unit)
    whole = int(0.3 * units + 0.5)
    assert split(mc, algorithm=algorithm, units_per_job=1, total_units=0.3) == \
        split(mc, algorithm=algorithm, units_per_job=1, total_units=whole)
    assert split(mc, algorithm=algorithm, units_per_job=1, total_units=1e-9) == \
        split(mc, algorithm=algorithm, units_per_job=1, total_units=1)
    assert split(mc, algorithm=algorithm, units_per_job=1, total_units=7.9) == \
        split(mc, algorithm=algorithm, units_per_job=1, total_units=7)


@pytest.mark.parametrize("algorithm", ["Automatic", "filebased"])
def test_unknown_algorithm_is_refused(mc, algorithm):
    with pytest.raises(SplittingError, match=f"unknown splitting algorithm '{algorithm}'; split knows "
                                             "FileBased, LumiBased, EventAwareLumiBased and EventBased"):
        split(mc, algorithm=algorithm, units_per_job=1)


def test_more_jobs_than_the_limit_is_refused_with_crabs_message(data):
    assert MAX_JOBS_PER_TASK == 10_000
    with pytest.raises(SplittingError, match="^The splitting on your task generated 6000 jobs. The maximum "
                                             "number of jobs in each task is 5999. Raise Data.unitsPerJob"):
        split(data, algorithm=LB, units_per_job=1, max_jobs=5999)
    assert len(split(data, algorithm=LB, units_per_job=1, max_jobs=6000)) == 6000
    with pytest.raises(SplittingError, match="generated 200 jobs. The maximum number of jobs in each task is 10"):
        split(data, algorithm=FB, units_per_job=1, max_jobs=10)


# -- the million-lumi dataset ---------------------------------------------------------------------

def test_the_large_dataset_splits_every_lumi_once():
    big = generate(SYNTHETIC[BIG])
    target = 216_000  # Automatic's processing stage: 0.75 x 480 min x 60 s x 10 events/s
    jobs = split(big, algorithm=EA, units_per_job=target)
    assert 1000 < len(jobs) <= MAX_JOBS_PER_TASK
    assert [j.id for j in jobs] == [str(i) for i in range(1, len(jobs) + 1)]
    assert sum(j.nlumis for j in jobs) == big.lumis and sum(j.events for j in jobs) == big.events
    assert all(j.events <= target or j.nlumis == 1 for j in jobs)
    keys = sorted(run << 32 | n for j in jobs for run, ranges in j.lumi_mask().items()
                  for a, b in ranges for n in range(a, b + 1))
    assert keys == sorted(r << 32 | n for f in big.files for r, n in zip(f.lumis.runs, f.lumis.numbers))
    where = block_of(big)
    assert all(len({where[lfn].sites for lfn in j.files}) == 1 and j.sites == where[j.files[0]].sites for j in jobs)
