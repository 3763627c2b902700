"""Tests for :mod:`engine.schedd.local.pool`: the pool file, slot ads, matchmaking and analysis.

Everything is evaluated by the real classad2 (with htcondor2 imported, as the pool module does),
so these tests also pin what the installed bindings do offline: stringListMember works, MY. and
TARGET. resolve, and an unscoped name missing from the job is looked up in the slot.
"""

from __future__ import annotations

import collections
import textwrap

import classad2
import pytest

from engine.schedd.local import pool as pool_module
from engine.schedd.local.pool import (
    DEFAULT_DISK_KB,
    DEFAULT_MEMORY_MB,
    DEFAULT_SITE,
    Pool,
    PoolConfigError,
    Site,
    analyze,
    conjuncts,
    default_pool,
    load_pool,
    matches,
    parse_pool,
)

FILE = "pool.toml"
CRAB_REQUIREMENTS = "stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)"


# ------------------------------------------------------------------------------------ helpers

def toml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def config_error(text: str) -> str:
    with pytest.raises(PoolConfigError) as e:
        parse_pool(toml(text), FILE)
    return str(e.value)


def job(requirements: str | None = "true", **attrs) -> classad2.ClassAd:
    """Job 7.0 with these Requirements (None: without) and attributes (ExprTree values stay expressions)."""
    ad = classad2.ClassAd()
    ad["ClusterId"], ad["ProcId"] = 7, 0
    if requirements is not None:
        ad["Requirements"] = classad2.ExprTree(requirements)
    for name, value in attrs.items():
        ad[name] = value
    return ad


def crab_job(sites: str, **attrs) -> classad2.ClassAd:
    return job(CRAB_REQUIREMENTS, DESIRED_Sites=sites, **attrs)


def sites_pool(*sites: Site) -> Pool:
    return Pool(list(sites))


@pytest.fixture
def three_sites() -> Pool:
    """CERN: 2 big fast slots; MIT: 2 small slots that refuse bob; DESY: 1 slot with 4 CPUs."""
    return parse_pool(toml("""
        [[site]]
        name = "T2_CH_CERN"
        slots = 2
        memory = 4000
        disk = 5000000
        [site.attributes]
        Speed = 2.0

        [[site]]
        name = "T2_US_MIT"
        slots = 2
        memory = 1000
        start = 'TARGET.Owner =!= "bob"'
        [site.attributes]
        Speed = 1.0

        [[site]]
        name = "T2_DE_DESY"
        cpus = 4
        memory = 8000
        [site.attributes]
        Speed = 3.0
    """), FILE)


# ------------------------------------------------------------------------------------ pool file

class TestParse:
    def test_sites_become_slots_in_file_order(self, three_sites):
        assert [s.name for s in three_sites.slots] == [
            "slot1@t2-ch-cern.crabtui.local", "slot2@t2-ch-cern.crabtui.local",
            "slot1@t2-us-mit.crabtui.local", "slot2@t2-us-mit.crabtui.local",
            "slot1@t2-de-desy.crabtui.local",
        ]
        assert [s.site for s in three_sites.slots] == ["T2_CH_CERN"] * 2 + ["T2_US_MIT"] * 2 + ["T2_DE_DESY"]
        assert [site.name for site in three_sites.sites] == ["T2_CH_CERN", "T2_US_MIT", "T2_DE_DESY"]

    def test_slot_ad_has_htcondor_attributes(self, three_sites):
        ad = three_sites.slots[1].ad
        assert isinstance(ad, classad2.ClassAd)
        assert ad["Name"] == "slot2@t2-ch-cern.crabtui.local"
        assert ad["Machine"] == "t2-ch-cern.crabtui.local"
        assert ad["MyType"] == "Machine"
        assert (ad["SlotID"], ad["Cpus"], ad["Memory"], ad["Disk"]) == (2, 1, 4000, 5000000)
        assert ad["GLIDEIN_CMSSite"] == "T2_CH_CERN"
        assert ad["Speed"] == 2.0
        assert ad.eval("Start") is True
        assert str(ad.lookup("Requirements")) == "START && WithinResourceLimits"

    def test_start_expression_is_kept_as_an_expression(self, three_sites):
        ad = three_sites.slots[2].ad
        assert str(ad.lookup("Start")) == 'TARGET.Owner isnt "bob"'

    def test_omitted_keys_take_the_documented_defaults(self):
        pool = parse_pool('[[site]]\nname = "T2_XX_Tiny"\n', FILE)
        (slot,) = pool.slots
        assert (slot.ad["Cpus"], slot.ad["Memory"], slot.ad["Disk"]) == (1, DEFAULT_MEMORY_MB, DEFAULT_DISK_KB)
        assert slot.ad.eval("Start") is True

    def test_attributes_and_expressions(self):
        pool = parse_pool(toml("""
            [[site]]
            name = "T2_IT_Pisa"
            [site.attributes]
            Speed = 1.5
            HasSingularity = true
            CVMFS_Revision = 42
            Owner_Group = "cms"
            [site.expressions]
            IsFast = "Speed > 1"
            Sites = '{"a", "b"}'
        """), FILE)
        ad = pool.slots[0].ad
        assert (ad["Speed"], ad["HasSingularity"], ad["CVMFS_Revision"], ad["Owner_Group"]) == (1.5, True, 42, "cms")
        assert isinstance(ad["IsFast"], classad2.ExprTree)
        assert ad.eval("IsFast") is True
        assert ad.eval("Sites") == ["a", "b"]

    def test_site_may_stand_for_another_platform(self):
        pool = parse_pool('[[site]]\nname = "T2_XX_Arm"\n[site.attributes]\nArch = "aarch64"\nOpSys = "LINUX"\n', FILE)
        assert (pool.slots[0].ad["Arch"], pool.slots[0].ad["OpSys"]) == ("aarch64", "LINUX")

    @pytest.mark.parametrize(("system", "machine", "opsys", "arch"), [
        ("Linux", "x86_64", "LINUX", "X86_64"),
        ("Linux", "i686", "LINUX", "INTEL"),
        ("Linux", "aarch64", "LINUX", "aarch64"),
        ("Darwin", "arm64", "OSX", "arm64"),
        ("Windows", "AMD64", "WINDOWS", "X86_64"),
    ])
    def test_opsys_and_arch_use_htcondor_names(self, monkeypatch, system, machine, opsys, arch):
        monkeypatch.setattr(pool_module.platform, "system", lambda: system)
        monkeypatch.setattr(pool_module.platform, "machine", lambda: machine)
        ad = sites_pool(Site("T2_XX_P")).slots[0].ad
        assert (ad["OpSys"], ad["Arch"]) == (opsys, arch)


class TestConfigErrors:
    """Every message names the file and the key, and says what is wrong."""

    def test_message_from_the_brief(self):
        message = config_error('[[site]]\nname = "T2_CH_CERN"\nmemory = "lots"\n')
        assert message == 'pool.toml: site[1].memory: must be a positive integer (MB), got "lots"'

    def test_toml_syntax_error_names_file_and_line(self):
        message = config_error('[[site]]\nname = "T2_CH_CERN"\nslots = = 4\n')
        assert message.startswith("pool.toml:3: invalid TOML: ")
        assert "(column 9)" in message

    def test_toml_error_without_position(self):
        message = config_error('[[site]]\nname = "T2_CH_CERN"\nslots = [1, 2')
        assert message.startswith("pool.toml") and "invalid TOML" in message

    @pytest.mark.parametrize(("text", "expected"), [
        ('pools = 1\n', "pool.toml: pools: unknown key; the file holds only [[site]] tables"),
        ('', "pool.toml: no [[site]] table; a pool needs at least one site"),
        ('site = 3\n', "pool.toml: site: must be an array of tables, written [[site]], got 3"),
        ('[site]\nname = "T2_CH_CERN"\n', "pool.toml: site: must be an array of tables"),
        ('[[site]]\nname = "T2_CH_CERN"\nslot = 4\n',
         'pool.toml: site[1].slot: unknown key; did you mean "slots"? a [[site]] table holds name, slots,'),
        ('[[site]]\nname = "T2_CH_CERN"\ncolor = 4\n', "pool.toml: site[1].color: unknown key; a [[site]] table holds"),
        ('[[site]]\nslots = 4\n', 'pool.toml: site[1].name: missing; every site needs a name such as "T2_CH_CERN"'),
        ('[[site]]\nname = "T2 CH"\n', 'pool.toml: site[1].name: must be a site name of letters, digits, "_" and "-"'),
        ('[[site]]\nname = "T2_A,T2_B"\n', 'pool.toml: site[1].name: must be a site name of letters, digits, "_" and "-" '
         '(it goes into comma-separated site lists), got "T2_A,T2_B"'),
        ('[[site]]\nname = 3\n', "pool.toml: site[1].name: must be a site name"),
        ('[[site]]\nname = "T2_CH_CERN"\n[[site]]\nname = "t2_ch_cern"\n',
         'pool.toml: site[2].name: "t2_ch_cern" is already the name of site[1]'),
        ('[[site]]\nname = "T2_CH_CERN"\nslots = 0\n', "pool.toml: site[1].slots: must be a positive integer, got 0"),
        ('[[site]]\nname = "T2_CH_CERN"\nslots = "4"\n', 'pool.toml: site[1].slots: must be a positive integer, got "4"'),
        ('[[site]]\nname = "T2_CH_CERN"\nslots = true\n', "pool.toml: site[1].slots: must be a positive integer, got true"),
        ('[[site]]\nname = "T2_CH_CERN"\ncpus = -1\n', "pool.toml: site[1].cpus: must be a positive integer, got -1"),
        ('[[site]]\nname = "T2_CH_CERN"\nmemory = 9223372036854775808\n',
         "pool.toml: site[1].memory: 9223372036854775808 does not fit in a 64-bit ClassAd integer"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\nBig = -9223372036854775809\n',
         "pool.toml: site[1].attributes.Big: -9223372036854775809 does not fit in a 64-bit ClassAd integer"),
        ('[[site]]\nname = "T2_CH_CERN"\ndisk = 1.5\n', "pool.toml: site[1].disk: must be a positive integer (KB), got 1.5"),
        ('[[site]]\nname = "T2_CH_CERN"\nstart = true\n',
         "pool.toml: site[1].start: must be a string holding a ClassAd expression, got true"),
        ('[[site]]\nname = "T2_CH_CERN"\nstart = "TARGET.Memory >"\n',
         'pool.toml: site[1].start: not a ClassAd expression: "TARGET.Memory >"'),
        ('[[site]]\nname = "T2_CH_CERN"\nstart = "true; Cpus = 64"\n',
         'pool.toml: site[1].start: not a ClassAd expression: "true; Cpus = 64"'),
        ('[[site]]\nname = "T2_CH_CERN"\nattributes = 3\n',
         "pool.toml: site[1].attributes: must be a table, written [site.attributes], got 3"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\n"bad name" = 1\n',
         "pool.toml: site[1].attributes.bad name: not a ClassAd attribute name"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\nCpus = 8\n',
         'pool.toml: site[1].attributes.Cpus: set with the site key "cpus"'),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\nSTART = false\n',
         'pool.toml: site[1].attributes.START: set with the site key "start"'),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.expressions]\nRequirements = "true"\n',
         "pool.toml: site[1].expressions.Requirements: set by the pool to START && WithinResourceLimits"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\nSites = ["a", "b"]\n',
         'pool.toml: site[1].attributes.Sites: must be a string, number or boolean, got ["a", "b"]; '
         "write other ClassAd values as text in [site.expressions]"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\nWhen = 2024-01-01\n',
         "pool.toml: site[1].attributes.When: must be a string, number or boolean"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.attributes]\nSpeed = 1\n[site.expressions]\nspeed = "2"\n',
         "pool.toml: site[1].expressions.speed: the same ClassAd attribute as attributes.Speed"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.expressions]\nIsFast = 1\n',
         "pool.toml: site[1].expressions.IsFast: must be a string holding a ClassAd expression, got 1"),
        ('[[site]]\nname = "T2_CH_CERN"\n[site.expressions]\nIsFast = "Speed >"\n',
         'pool.toml: site[1].expressions.IsFast: not a ClassAd expression: "Speed >"'),
        ('[[site]]\nname = "T2_CH_CERN"\n[[site]]\nname = "T2_US_MIT"\nmemory = 0\n',
         "pool.toml: site[2].memory: must be a positive integer (MB), got 0"),
        ('[[site]]\nname = "T2_CH_CERN"\nspeed = -1.5\n', "pool.toml: site[1].speed: must be a positive number"),
        ('[[site]]\nname = "T2_CH_CERN"\nfailures = [{probability = 2, exitCode = 8021}]\n',
         "pool.toml: site[1].failures[1].probability: must be a number from 0 to 1, got 2"),
    ])
    def test_error(self, text, expected):
        message = config_error(text)
        assert message.startswith(expected), message
        assert isinstance(PoolConfigError(message), ValueError)

    def test_missing_file(self, tmp_path):
        path = tmp_path / "pool.toml"
        with pytest.raises(PoolConfigError, match=rf"^{path}: cannot read the pool file: No such file"):
            load_pool(path, tmp_path)

    def test_file_that_is_not_utf8(self, tmp_path):
        path = tmp_path / "pool.toml"
        path.write_bytes(b'[[site]]\nname = "T2_\xff"\n')
        with pytest.raises(PoolConfigError, match=rf"^{path}:2: not UTF-8 text \(byte 0xff\)"):
            load_pool(path, tmp_path)

    def test_errors_name_the_real_path(self, tmp_path):
        path = tmp_path / "mypool.toml"
        path.write_text('[[site]]\nname = "T2_CH_CERN"\ncpus = 0\n')
        with pytest.raises(PoolConfigError, match=rf"^{path}: site\[1\]\.cpus: "):
            load_pool(path, tmp_path)


class TestLoad:
    def test_load_file(self, tmp_path):
        path = tmp_path / "pool.toml"
        path.write_text('[[site]]\nname = "T2_CH_CERN"\nslots = 3\n')
        pool = load_pool(path, tmp_path)
        assert [s.name for s in pool.slots] == [f"slot{i}@t2-ch-cern.crabtui.local" for i in (1, 2, 3)]

    def test_no_file_is_this_machine(self, tmp_path, monkeypatch):
        monkeypatch.setattr(pool_module.os, "cpu_count", lambda: 3)
        pool = load_pool(None, tmp_path)
        assert [site.name for site in pool.sites] == [DEFAULT_SITE]
        assert len(pool.slots) == 3


class TestDefaultPool:
    @pytest.fixture
    def machine(self, tmp_path, monkeypatch):
        """A machine with 4 CPUs, 8000 MB of memory and 400000 KB free on the execute disk."""
        meminfo = tmp_path / "meminfo"
        meminfo.write_text("MemFree:  1000 kB\nMemTotal:  8192000 kB\n")
        monkeypatch.setattr(pool_module, "_MEMINFO", str(meminfo))
        monkeypatch.setattr(pool_module.os, "cpu_count", lambda: 4)
        usage = collections.namedtuple("usage", "total used free")
        monkeypatch.setattr(pool_module.shutil, "disk_usage", lambda path: usage(0, 0, 400000 * 1024))
        return meminfo

    def test_one_slot_per_cpu_the_size_of_a_glidein_pilot_with_a_share_of_disk(self, machine, tmp_path):
        pool = default_pool(tmp_path)
        assert [site.name for site in pool.sites] == ["T2_XX_Local"]
        assert [s.name for s in pool.slots] == [f"slot{i}@t2-xx-local.crabtui.local" for i in (1, 2, 3, 4)]
        for i, slot in enumerate(pool.slots, start=1):
            assert slot.ad["SlotID"] == i
            assert (slot.ad["Cpus"], slot.ad["Memory"], slot.ad["Disk"]) == (8, 20000, 100000)
            assert slot.ad["GLIDEIN_CMSSite"] == "T2_XX_Local"

    def test_a_multi_threaded_crab_job_fits_a_slot_and_one_bigger_than_a_pilot_does_not(self, machine, tmp_path):
        slots = default_pool(tmp_path).slots
        assert all(matches(job(RequestCpus=8, RequestMemory=20000), s.ad) for s in slots)
        assert not any(matches(job(RequestCpus=9, RequestMemory=2000), s.ad) for s in slots)
        assert not any(matches(job(RequestCpus=4, RequestMemory=20001), s.ad) for s in slots)

    def test_slots_carry_a_neutral_site_profile(self, machine, tmp_path):
        """The simulated grid's attributes are there with their defaults: speed 1, no failures."""
        for slot in default_pool(tmp_path).slots:
            assert slot.ad[pool_module.SPEED_ATTRIBUTE] == 1.0
            assert slot.ad[pool_module.FAILURES_ATTRIBUTE] == "[]"

    def test_a_cpus_share_of_memory_larger_than_a_pilots_is_advertised(self, machine, tmp_path):
        machine.write_text("MemTotal:  131072000 kB\n")  # 128000 MB, 32000 a CPU
        assert {s.ad["Memory"] for s in default_pool(tmp_path).slots} == {32000}
        machine.unlink()  # not Linux: a pilot's memory
        assert {s.ad["Memory"] for s in default_pool(tmp_path).slots} == {20000}

    def test_unknown_cpu_count_is_one_slot(self, machine, tmp_path, monkeypatch):
        monkeypatch.setattr(pool_module.os, "cpu_count", lambda: None)
        machine.write_text("MemTotal:  40960000 kB\n")
        pool = default_pool(tmp_path)
        assert len(pool.slots) == 1
        assert pool.slots[0].ad["Memory"] == 40000

    def test_real_machine(self, tmp_path):
        pool = default_pool(tmp_path)
        assert len(pool.slots) >= 1
        assert all(s.ad["Memory"] > 0 and s.ad["Disk"] > 0 for s in pool.slots)


# ------------------------------------------------------------------------------------ matchmaking

class TestMatches:
    def test_crab_site_list(self, three_sites):
        j = crab_job("T2_US_MIT,T2_IT_Pisa")
        assert [matches(j, s.ad) for s in three_sites.slots] == [False, False, True, True, False]

    def test_site_list_with_spaces(self, three_sites):
        j = crab_job("T2_DE_DESY, T2_CH_CERN")
        assert [s.site for s in three_sites.slots if matches(j, s.ad)] == ["T2_CH_CERN", "T2_CH_CERN", "T2_DE_DESY"]

    def test_unscoped_names_resolve_in_the_slot(self, three_sites):
        j = job('GLIDEIN_CMSSite == "T2_DE_DESY" && Cpus >= 4 && Memory >= RequestMemory', RequestMemory=100)
        assert [s.site for s in three_sites.slots if matches(j, s.ad)] == ["T2_DE_DESY"]

    def test_my_and_target(self, three_sites):
        j = job("TARGET.Speed > MY.MinSpeed", MinSpeed=1.5)
        assert [s.site for s in three_sites.slots if matches(j, s.ad)] == ["T2_CH_CERN", "T2_CH_CERN", "T2_DE_DESY"]

    def test_memory_fit(self, three_sites):
        fits = lambda mb: [s.site for s in three_sites.slots if matches(job(RequestMemory=mb), s.ad)]
        assert fits(1000) == ["T2_CH_CERN", "T2_CH_CERN", "T2_US_MIT", "T2_US_MIT", "T2_DE_DESY"]
        assert fits(1001) == ["T2_CH_CERN", "T2_CH_CERN", "T2_DE_DESY"]
        assert fits(8001) == []

    def test_cpu_fit(self, three_sites):
        assert [s.site for s in three_sites.slots if matches(job(RequestCpus=4), s.ad)] == ["T2_DE_DESY"]
        assert not any(matches(job(RequestCpus=5), s.ad) for s in three_sites.slots)

    def test_disk_fit(self, three_sites):
        j = job(RequestDisk=6_000_000)
        assert [s.site for s in three_sites.slots if matches(j, s.ad)] == ["T2_US_MIT", "T2_US_MIT", "T2_DE_DESY"]

    def test_undefined_requests_ask_for_one_cpu_and_nothing_else(self):
        slot = sites_pool(Site("T2_XX_A", memory=1, disk=1)).slots[0]
        assert matches(job(), slot.ad)

    def test_expression_valued_request_memory(self, three_sites):
        request = classad2.ExprTree("ifThenElse(MemoryUsage =!= undefined, MemoryUsage, 2048)")
        fresh = job(RequestMemory=request)
        assert [s.site for s in three_sites.slots if matches(fresh, s.ad)] == ["T2_CH_CERN", "T2_CH_CERN", "T2_DE_DESY"]
        grown = job(RequestMemory=request, MemoryUsage=5000)
        assert [s.site for s in three_sites.slots if matches(grown, s.ad)] == ["T2_DE_DESY"]
        small = job(RequestMemory=request, MemoryUsage=500)
        assert all(matches(small, s.ad) for s in three_sites.slots)

    def test_request_evaluated_against_the_slot(self, three_sites):
        j = job(RequestCpus=classad2.ExprTree("TARGET.Cpus"), RequestMemory=classad2.ExprTree("2000 * TARGET.Cpus"))
        assert [s.site for s in three_sites.slots if matches(j, s.ad)] == ["T2_CH_CERN", "T2_CH_CERN", "T2_DE_DESY"]

    def test_start_rejects(self, three_sites):
        mit = [s for s in three_sites.slots if s.site == "T2_US_MIT"]
        assert all(matches(job(Owner="alice"), s.ad) for s in mit)
        assert not any(matches(job(Owner="bob"), s.ad) for s in mit)
        assert all(matches(job(Owner="bob"), s.ad) for s in three_sites.slots if s.site != "T2_US_MIT")

    def test_start_sees_the_slot_as_my(self):
        slot = sites_pool(Site("T2_XX_A", start="MY.Memory >= 2 * TARGET.RequestMemory")).slots[0]
        assert matches(job(RequestMemory=1000), slot.ad)
        assert not matches(job(RequestMemory=1001), slot.ad)

    def test_requirements_false_undefined_and_numbers(self, three_sites):
        slot = three_sites.slots[0].ad
        assert not matches(job("false"), slot)
        assert not matches(job("TARGET.NoSuchAttribute == 1"), slot)
        assert matches(job("1"), slot)
        assert not matches(job("0"), slot)
        assert not matches(job('"yes"'), slot)

    def test_job_without_requirements_matches_nothing(self, three_sites):
        assert not any(matches(job(None), s.ad) for s in three_sites.slots)

    @pytest.mark.parametrize("requirements", [
        "true", CRAB_REQUIREMENTS, "TARGET.Memory >= 4000", 'Owner == "bob"', "Cpus > 1 || Speed < 2",
    ])
    @pytest.mark.parametrize("owner", ["alice", "bob"])
    @pytest.mark.parametrize("memory", [500, 2000, 9000])
    def test_agrees_with_classad2_symmetric_match(self, three_sites, requirements, owner, memory):
        j = job(requirements, DESIRED_Sites="T2_US_MIT,T2_DE_DESY", Owner=owner, RequestMemory=memory, RequestCpus=1)
        for slot in three_sites.slots:
            assert matches(j, slot.ad) == j.symmetricMatch(slot.ad), slot.name


class TestPool:
    def test_match_takes_the_first_free_slot(self, three_sites):
        assert three_sites.match(job()).name == "slot1@t2-ch-cern.crabtui.local"

    def test_match_none(self, three_sites):
        assert three_sites.match(crab_job("T2_IT_Pisa")) is None

    def test_rank_orders_candidates(self, three_sites):
        assert three_sites.match(job(Rank=classad2.ExprTree("TARGET.Speed"))).site == "T2_DE_DESY"
        slowest = three_sites.match(job(Rank=classad2.ExprTree("-TARGET.Speed")))
        assert slowest.name == "slot1@t2-us-mit.crabtui.local"  # the first of the two slowest

    def test_rank_among_matching_slots_only(self, three_sites):
        j = crab_job("T2_CH_CERN,T2_US_MIT", Rank=classad2.ExprTree("TARGET.Speed"))
        assert three_sites.match(j).site == "T2_CH_CERN"

    def test_rank_that_is_not_a_number_counts_as_zero(self, three_sites):
        j = job(Rank=classad2.ExprTree('ifThenElse(TARGET.GLIDEIN_CMSSite == "T2_US_MIT", 1, "fast")'))
        assert three_sites.match(j).site == "T2_US_MIT"
        assert three_sites.match(job(Rank=classad2.ExprTree("TARGET.NoSuch"))).name == three_sites.slots[0].name

    def test_undefined_and_error_rank_count_as_zero_not_as_their_enum_values(self, three_sites):
        # classad2 returns UNDEFINED and ERROR as an IntEnum (2 and 1), which must not rank above 1.
        for other in ("undefined", "error"):
            j = job(Rank=classad2.ExprTree(f'ifThenElse(TARGET.GLIDEIN_CMSSite == "T2_US_MIT", 1, {other})'))
            assert three_sites.match(j).site == "T2_US_MIT"

    def test_boolean_rank_is_one(self, three_sites):
        j = job(Rank=classad2.ExprTree('TARGET.GLIDEIN_CMSSite == "T2_DE_DESY"'))
        assert three_sites.match(j).site == "T2_DE_DESY"

    def test_claim_and_release(self, three_sites):
        first, second = three_sites.slots[:2]
        three_sites.claim(first, "1.0")
        assert first.busy and first.job_id == "1.0"
        assert first not in three_sites.free_slots()
        assert len(three_sites.free_slots()) == 4
        assert three_sites.match(job()) is second
        three_sites.claim(second, "1.1")
        assert three_sites.match(crab_job("T2_CH_CERN")) is None
        assert three_sites.release("1.0") is first
        assert not first.busy
        assert three_sites.match(crab_job("T2_CH_CERN")) is first
        assert three_sites.release("1.0") is None

    def test_claim_refuses_busy_slot_and_running_job(self, three_sites):
        first, second = three_sites.slots[:2]
        three_sites.claim(first, "1.0")
        with pytest.raises(ValueError, match="slot1@t2-ch-cern.crabtui.local already runs job 1.0"):
            three_sites.claim(first, "2.0")
        with pytest.raises(ValueError, match="job 1.0 already runs on slot1@t2-ch-cern.crabtui.local"):
            three_sites.claim(second, "1.0")
        assert not second.busy

    def test_slot_by_name(self, three_sites):
        assert three_sites.slot("slot1@t2-de-desy.crabtui.local") is three_sites.slots[-1]
        with pytest.raises(KeyError):
            three_sites.slot("slot9@nowhere")


# ------------------------------------------------------------------------------------ analysis

class TestConjuncts:
    @pytest.mark.parametrize(("expression", "clauses"), [
        ("a", ["a"]),
        ("a && b && c", ["a", "b", "c"]),
        ("(a) && (b)", ["a", "b"]),
        ("((a && b))", ["a", "b"]),
        ("(a && b) && (c && (d || e))", ["a", "b", "c", "d || e"]),
        ("a && b || c", ["a && b || c"]),
        ("(a && b || c)", ["a && b || c"]),
        ("a ? b && c : d", ["a ? b && c : d"]),
        ("a && (b ? c : d)", ["a", "b ? c : d"]),
        ("x =?= undefined && y =!= 3", ["x =?= undefined", "y =!= 3"]),
        ('s == "a && b" && t', ['s == "a && b"', "t"]),
        ('s == "a || b" && t', ['s == "a || b"', "t"]),
        ('s == "quote \\" && (" && t', ['s == "quote \\" && ("', "t"]),
        ("'odd && name' > 1 && t", ["'odd && name' > 1", "t"]),
        ("member(x, {1, 2}) && [a = 1 && 2].a", ["member(x, {1, 2})", "[a = 1 && 2].a"]),
        ("f(a && b, c) && d", ["f(a && b, c)", "d"]),
        ("(a) && (b) || (c)", ["(a) && (b) || (c)"]),
        ("a & b && c | d", ["a & b", "c | d"]),
    ])
    def test_split(self, expression, clauses):
        assert conjuncts(expression) == clauses

    def test_clauses_of_an_unparsed_expression_parse(self):
        text = str(classad2.ExprTree('(stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)) && '
                                      '(TARGET.Arch == "X86_64") && (member("a && b", {"x", "a && b"}))'))
        clauses = conjuncts(text)
        assert len(clauses) == 3
        for clause in clauses:
            classad2.ExprTree(clause)


class TestAnalyze:
    def test_names_the_clause_that_excludes_every_slot(self, three_sites):
        j = job(f'({CRAB_REQUIREMENTS}) && (TARGET.Memory >= RequestMemory)',
                DESIRED_Sites="T2_IT_Pisa,T2_FR_GRIF", RequestCpus=1, RequestMemory=2000, RequestDisk=1000)
        assert analyze(j, three_sites) == textwrap.dedent("""\
            Job 7.0 matches none of the 5 slots of the pool.

            The Requirements expression of job 7.0 is

                (stringListMember(TARGET.GLIDEIN_CMSSite,MY.DESIRED_Sites)) && (TARGET.Memory >= RequestMemory)

            Job 7.0 defines the attributes it uses:

                DESIRED_Sites = "T2_IT_Pisa,T2_FR_GRIF"
                RequestMemory = 2000

            which reduces to these conditions:

                     Slots
            Step    Matched  Condition
            -----  --------  ---------
            [0]           0  stringListMember(TARGET.GLIDEIN_CMSSite,MY.DESIRED_Sites)   <- matches no slot
            [1]           3  TARGET.Memory >= RequestMemory

            Job 7.0 requests:

                RequestCpus   = 1; 5 of 5 slots have enough Cpus
                RequestMemory = 2000 MB; 3 of 5 slots have enough Memory
                RequestDisk   = 1000 KB; 5 of 5 slots have enough Disk

            Of the 5 slots of the pool,
                5 are rejected by your job's Requirements
                0 reject your job because of their START expression
                0 are too small for your job's requests
                0 match but are busy running other jobs
                0 are able to run your job

            Sites: T2_CH_CERN (2 slots), T2_US_MIT (2 slots), T2_DE_DESY (1 slot)
            """)

    def test_each_slot_counts_under_its_first_reason(self, three_sites):
        # CERN: too few CPUs and too little disk; MIT: START refuses bob; DESY: fits, but busy.
        three_sites.claim(three_sites.slots[-1], "3.0")
        j = job('GLIDEIN_CMSSite =!= "T2_XX_None"', Owner="bob", RequestCpus=2, RequestDisk=6_000_000)
        text = analyze(j, three_sites)
        assert text.startswith("Job 7.0 matches 1 of the 5 slots of the pool, all busy: it waits for one.\n")
        assert text.endswith(textwrap.dedent("""\
            Of the 5 slots of the pool,
                0 are rejected by your job's Requirements
                2 reject your job because of their START expression
                2 are too small for your job's requests (2 lack Cpus, 2 lack Disk)
                1 match but are busy running other jobs
                0 are able to run your job

            Sites: T2_CH_CERN (2 slots), T2_US_MIT (2 slots), T2_DE_DESY (1 slot)
            """))
        assert "    RequestCpus   = 2; 1 of 5 slots have enough Cpus\n" in text
        assert "    RequestDisk   = 6000000 KB; 3 of 5 slots have enough Disk\n" in text

    def test_slots_that_can_run_the_job(self, three_sites):
        text = analyze(job("TARGET.Speed >= 2"), three_sites)
        assert text.startswith("Job 7.0 can run now on 3 of the 5 slots of the pool.\n")
        assert "which is one condition:" in text
        assert "[0]           3  TARGET.Speed >= 2\n" in text
        assert "    2 are rejected by your job's Requirements\n" in text
        assert "    3 are able to run your job\n" in text

    def test_a_held_job_is_said_to_be_held_with_its_reason_before_what_it_would_match(self, three_sites):
        held = job("TARGET.Speed >= 2", JobStatus=5, HoldReason="submitted on hold at user's request")
        assert analyze(held, three_sites).startswith(
            "Job 7.0 is held, and is matched only once released (hold reason: submitted on hold at user's "
            "request). Released, it can run now on 3 of the 5 slots of the pool.\n")

    def test_a_running_job_is_said_to_run_not_to_wait_for_a_slot(self, three_sites):
        three_sites.claim(three_sites.slots[0], "7.0")
        running = job("TARGET.Speed >= 2", JobStatus=2, RemoteHost="slot1@T2_CH_CERN")
        assert analyze(running, three_sites).startswith(
            "Job 7.0 is running on slot1@T2_CH_CERN: it waits for no slot.\n")

    def test_clause_counts_include_busy_slots(self, three_sites):
        for slot, job_id in zip(three_sites.slots, ("1.0", "1.1", "1.2", "1.3", "1.4")):
            three_sites.claim(slot, job_id)
        text = analyze(crab_job("T2_US_MIT"), three_sites)
        assert "[0]           2  stringListMember(TARGET.GLIDEIN_CMSSite,MY.DESIRED_Sites)\n" in text
        assert "    2 match but are busy running other jobs\n" in text

    def test_agrees_with_match(self, three_sites):
        three_sites.claim(three_sites.slots[0], "1.0")
        for j in (job(), crab_job("T2_CH_CERN"), job(Owner="bob", RequestMemory=3000), job("Cpus > 1")):
            able = sum(not s.busy and matches(j, s.ad) for s in three_sites.slots)
            assert f"    {able} are able to run your job\n" in analyze(j, three_sites)
            assert (able > 0) == (three_sites.match(j) is not None)

    def test_expression_valued_request_is_shown_with_its_value(self, three_sites):
        j = job(RequestMemory=classad2.ExprTree("ifThenElse(MemoryUsage =!= undefined, MemoryUsage, 2048)"))
        assert ("    RequestMemory = ifThenElse(MemoryUsage isnt undefined,MemoryUsage,2048), which is 2048 MB; "
                "3 of 5 slots have enough Memory\n") in analyze(j, three_sites)

    def test_request_that_is_not_a_number(self, three_sites):
        text = analyze(job(RequestMemory="lots"), three_sites)
        assert '    RequestMemory = "lots", not a number; 0 of 5 slots have enough Memory\n' in text
        assert "    5 are too small for your job's requests (5 lack Memory)\n" in text

    def test_request_that_reads_the_slot(self, three_sites):
        text = analyze(job(RequestMemory=classad2.ExprTree("1500 * TARGET.Cpus")), three_sites)
        assert "    RequestMemory = 1500 * TARGET.Cpus; 3 of 5 slots have enough Memory\n" in text

    def test_undefined_requests(self, three_sites):
        text = analyze(job(), three_sites)
        assert "    RequestCpus   = undefined, taken as 1; 5 of 5 slots have enough Cpus\n" in text
        assert "    RequestMemory = undefined, taken as 0 MB; 5 of 5 slots have enough Memory\n" in text
        j = classad2.ClassAd("[Requirements = true; RequestDisk = undefined]")
        assert "    RequestDisk   = undefined, taken as 0 KB; 5 of 5 slots have enough Disk\n" in analyze(j, three_sites)

    def test_job_without_requirements(self, three_sites):
        text = analyze(job(None), three_sites)
        assert "Job 7.0 has no Requirements expression, so it matches no slot" in text
        assert "    5 are rejected by your job's Requirements\n" in text

    def test_job_without_id(self, three_sites):
        ad = classad2.ClassAd({"Requirements": classad2.ExprTree("false")})
        text = analyze(ad, three_sites)
        assert text.startswith("The job matches none of the 5 slots of the pool.\n")
        assert "The Requirements expression of the job is" in text
        assert "[0]           0  false   <- matches no slot\n" in text
