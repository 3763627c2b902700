"""Synthetic stand-ins: the input datasets the catalogue does not know, made up from their names.

There is no DBS or Rucio here, so a task whose ``Data.inputDataset`` is in no catalogue file
reads a stand-in: a dataset generated from the name alone (:func:`definition`), the same on every
machine and every call (its files, lumis, events and sites all come from a seed that is a hash
of the name).  It resembles what the name says:

* the data tier sets the bytes per event and so the files' sizes (about 1-4 GB a file, as CMS
  writes them), how many files there are and how many lumis a file holds (a RAW file a few
  lumis, a NANOAOD file a thousand);
* MC (a ``*SIM`` tier, GEN, LHE, or a campaign name such as ``RunIISummer20UL18...``) is run 1
  with lumis of 200-800 events under ``/store/mc/<campaign>/``; data (``Run2018D-...``) holds runs
  of that era, with 100-1000 events a lumi, under ``/store/data/<era>/`` with the run number in
  the path.  The runs are drawn from the era's real run range (:data:`ERAS`, and :data:`HEAVY_ION_ERAS` for
  ``HIRun2018A``, ``PARun2016C``...; a year without an era letter, or an era not listed, spans its
  year's pp runs, or its heavy-ion runs for heavy-ion data), one run number in 2 to 4, each with at least
  a lumi or two: so a certification JSON of that era (``Cert_..._Collisions18_JSON.txt``), which
  lists some of the era's runs, selects lumis of the stand-in, as it would of the real dataset;
* each block is at a few of the simulated grid's sites (data tiers mostly at the Tier-1, MC at
  Tier-2s), and at ``T2_XX_Local``, the embedded pool's own site, so it runs on a laptop as it is.

The user replaces a stand-in with a real description (``crabtui dataset add NAME --from FILE``,
the JSON format of :mod:`engine.crab.taskworker.datasets`); the catalogue's own datasets always
win over stand-ins.  :func:`register` notes a stand-in's name in ``stand-ins.txt`` beside the
user's dataset files, so that ``crabtui dataset list`` can show it; loading never depends on that
file.  Standard library only: PreDAG loads the input again on the access point.
"""

from __future__ import annotations

import hashlib
import os
import random
import re

from engine.atomic import write_atomically
from engine.crab.taskworker.datasets import SITES, Catalogue, Dataset, Synthetic, UnknownDataset, generate

__all__ = ["STAND_INS_FILE", "definition", "load", "lumis_per_file", "register", "registered"]

STAND_INS_FILE = "stand-ins.txt"
STAND_IN = "stand-in"
"""The :attr:`Dataset.source` of a stand-in."""

# tier: (bytes per event, files (low, high), lumis per file (low, high)); MC tiers write ~20 % more
_TIERS = {
    "RAW": (1_000_000, (50, 300), (1, 4)),
    "RECO": (1_500_000, (50, 300), (1, 4)),
    "FEVT": (2_000_000, (50, 300), (1, 3)),
    "AOD": (400_000, (50, 300), (3, 12)),
    "MINIAOD": (50_000, (20, 200), (20, 100)),
    "NANOAOD": (1_500, (3, 20), (300, 1500)),
    "ALCARECO": (100_000, (10, 100), (10, 50)),
    "USER": (30_000, (10, 100), (5, 50)),
    "GEN": (50_000, (10, 100), (5, 20)),
    "LHE": (20_000, (10, 100), (5, 20)),
    "GEN-SIM": (1_000_000, (50, 300), (1, 5)),
    "GEN-SIM-RAW": (1_500_000, (50, 300), (1, 4)),
    "GEN-SIM-DIGI-RAW": (1_500_000, (50, 300), (1, 4)),
    "GEN-SIM-RECO": (1_500_000, (50, 300), (1, 4)),
}
_OTHER_TIER = (300_000, (20, 200), (3, 30))
_MC_TIERS = ("GEN", "LHE")
_MC_CAMPAIGN = re.compile(r"RunII|Run3[A-Z]|realistic|mcRun|Summer|Fall|Winter|Spring|Autumn|Phase2")
_DATA_ERA = re.compile(r"((?:HI|PA|XeXe)?Run(20\d\d)([A-Z]?))")
_YEAR = re.compile(r"20\d\d")
ERAS: dict[int, dict[str, tuple[int, int]]] = {
    2010: {"A": (136_035, 144_114), "B": (146_240, 149_711)},
    2011: {"A": (160_404, 173_692), "B": (175_832, 180_252)},
    2012: {"A": (190_456, 193_621), "B": (193_833, 196_531), "C": (198_022, 203_742), "D": (203_777, 208_686)},
    2015: {"B": (251_027, 252_126), "C": (253_659, 256_464), "D": (256_630, 260_627)},
    2016: {"B": (272_007, 275_376), "C": (275_657, 276_283), "D": (276_315, 276_811), "E": (276_831, 277_420),
           "F": (277_772, 278_808), "G": (278_820, 280_385), "H": (280_919, 284_044)},
    2017: {"B": (297_046, 299_329), "C": (299_368, 302_029), "D": (302_030, 303_434), "E": (303_824, 304_797),
           "F": (305_040, 306_462), "G": (306_546, 306_826), "H": (306_896, 307_082)},
    2018: {"A": (315_252, 316_995), "B": (316_998, 319_312), "C": (319_313, 320_393), "D": (320_394, 325_273)},
    2022: {"B": (355_094, 355_769), "C": (355_862, 357_482), "D": (357_538, 357_900), "E": (359_022, 360_331),
           "F": (360_390, 362_167), "G": (362_433, 362_760)},
    2023: {"B": (366_403, 367_079), "C": (367_080, 369_802), "D": (369_803, 370_790)},
    2024: {"B": (378_971, 379_411), "C": (379_412, 380_252), "D": (380_253, 380_947), "E": (380_948, 381_383),
           "F": (381_384, 383_779), "G": (383_780, 385_813), "H": (385_814, 386_408), "I": (386_409, 386_951),
           "J": (387_474, 387_721)},  # J: the pp reference run
}
"""The first and last run of CMS's collision eras (``Run2018A`` ... ``Run2024J``), by year and letter."""
HEAVY_ION_ERAS: dict[str, tuple[int, int]] = {
    "HIRun2010": (150_431, 153_368), "HIRun2011": (181_530, 183_126), "HIRun2013": (209_948, 211_631),
    "HIRun2015": (262_548, 263_797), "PARun2016B": (285_090, 285_383), "PARun2016C": (285_410, 285_832),
    "PARun2016D": (285_952, 286_520), "XeXeRun2017": (304_899, 304_907), "HIRun2018": (326_381, 327_564),
    "HIRun2018A": (326_381, 327_564), "HIRun2022A": (362_293, 362_323), "HIRun2023A": (374_288, 375_823),
    "HIRun2024A": (387_853, 388_784), "HIRun2024B": (387_853, 388_784),
}
"""Heavy-ion and proton-lead eras (``HIRun2018A``, ``PARun2016C``): their runs, from the certification
JSONs' names where CMS names its runs so (``Cert_326381-327564_HI_..._Collisions18_JSON.txt``).  Their
runs are not in the pp era of the same letter, so each is looked up under its whole name."""
_HEAVY_ION = re.compile(r"(^|/)(HI|PA)[A-Z]|PbPb|pPb|Pbp|XeXe")
"""Names of heavy-ion data: ``/HIHardProbes/...``, ``/PAHighMultiplicity0/...``, ``..._Pbp_...``."""
_YEARS = {2025: (391_000, 398_900)}  # a year of which no era is listed: its runs, roughly
_TIER1 = ("T1_US_FNAL",)
_TIER2 = tuple(s for s in SITES[1:] if s.startswith("T2_"))


def lumis_per_file(tier: str) -> int:
    """How many lumis a stand-in's file of ``tier`` holds, on average."""
    low, high = _TIERS.get(tier.upper(), _OTHER_TIER)[2]
    return (low + high) // 2


def _rng(name: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big"))


def is_mc(name: str) -> bool:
    """Whether the dataset ``name`` (``/Primary/Processed/TIER``) is simulation, as its name tells."""
    _, processed, tier = name.split("/")[1:4]
    tier = tier.upper()
    if tier.endswith("SIM") or tier in _MC_TIERS or tier.startswith("GEN-"):
        return True
    return not _DATA_ERA.search(processed) and bool(_MC_CAMPAIGN.search(processed))


def definition(name: str) -> Synthetic:
    """The stand-in for the dataset ``name``: what :func:`generate` makes it from (module docstring)."""
    _, primary, processed, tier = name.split("/")
    rng = _rng(name)
    key = tier.upper()
    bytes_per_event, files_range, lumis_range = _TIERS.get(key.removesuffix("SIM"), _TIERS.get(key, _OTHER_TIER))
    files = rng.randint(*files_range)
    per_file = rng.randint(*lumis_range)
    lumis = files * per_file
    mc = is_mc(name)
    head, _, rest = processed.partition("-")
    last_run = None
    if mc:
        events, runs, first_run = (200, 800), 1, 1
        bytes_per_event = bytes_per_event * 6 // 5
        lfn_base = f"/store/mc/{head}/{primary}/{tier}/{rest or 'v1'}"
        hosts, extra = _TIER2, (1, 3)
    else:
        era = _DATA_ERA.search(processed)
        first_run, last_run = run_range(processed, primary)
        events = (100, 1000)
        runs = max(1, (last_run - first_run + 1) // rng.randint(2, 4))
        if lumis < 2 * runs:  # a lumi or two a run at least: more files of the tier's size
            lumis = 2 * runs
            files = -(-lumis // per_file)
        if era and processed.startswith(era.group(1)):
            lfn_base = f"/store/data/{era.group(1)}/{primary}/{tier}/{processed[len(era.group(1)) + 1:] or 'v1'}"
        else:
            lfn_base = f"/store/data/{head}/{primary}/{tier}/{rest or 'v1'}"
        hosts, extra = (_TIER1 + _TIER2, (1, 3)) if key in ("RAW", "RECO", "FEVT", "AOD") else (_TIER2 + _TIER1, (1, 3))
    if key == "USER":
        lfn_base = f"/store/user/{head}/{primary}/{processed}"
    blocks = max(1, files // rng.randint(5, 40))
    return Synthetic(name, seed=rng.getrandbits(63), files=files, blocks=blocks, lumis=lumis, runs=runs,
                     first_run=first_run, events_per_lumi=events, bytes_per_event=bytes_per_event,
                     lfn_base=lfn_base, hosts=hosts, extra_hosts=extra, source=STAND_IN, last_run=last_run)


def run_range(processed: str, primary: str = "") -> tuple[int, int]:
    """The first and last run of the era a data dataset's processed name (``Run2018A-...``,
    ``HIRun2018A-...``) names: the era's (:data:`ERAS`, :data:`HEAVY_ION_ERAS`), else its year's, else
    2018's.  A year's runs are its heavy-ion eras' when the names are of heavy-ion data (a ``HI`` or
    ``PA`` primary dataset, ``PbPb``, ``pPb``...), else its pp eras'.  A year after the last one known
    (``Run2026B``) follows it, so that its certification JSON's runs are where they will be."""
    era = _DATA_ERA.search(processed)
    year = int(era.group(2) if era else (_YEAR.search(processed) or _YEAR.search("2018")).group(0))
    if era and era.group(1) in HEAVY_ION_ERAS:
        return HEAVY_ION_ERAS[era.group(1)]
    eras = ERAS.get(year, {})
    if era and era.group(1) == f"Run{year}{era.group(3)}" and era.group(3) in eras:
        return eras[era.group(3)]
    heavy_ion = [r for name, r in HEAVY_ION_ERAS.items() if f"Run{year}" in name]
    ranges = heavy_ion if heavy_ion and _HEAVY_ION.search(f"{primary}/{processed}") else list(eras.values())
    if not ranges and year > max(_YEARS):  # a year of no known run: as long as the last, right after it
        first, last = _YEARS[max(_YEARS)]
        start = last + 1 + (year - max(_YEARS) - 1) * (last - first + 1)
        return start, start + last - first
    if not ranges:
        return _YEARS.get(year) or (min(e[0] for e in ERAS[2018].values()), max(e[1] for e in ERAS[2018].values()))
    return min(first for first, _ in ranges), max(last for _, last in ranges)


def load(catalogue: Catalogue, name: str, *, stand_in: bool) -> Dataset:
    """The dataset ``name`` from the catalogue; if it knows none and ``stand_in``, its stand-in."""
    try:
        return catalogue.load(name)
    except UnknownDataset:
        if not stand_in:
            raise
        return generate(definition(name))


def registered(directory: str | None) -> list[str]:
    """The names :func:`register` noted in ``directory`` (the user's dataset directory)."""
    try:
        with open(os.path.join(directory or "", STAND_INS_FILE), encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    except (FileNotFoundError, NotADirectoryError):
        return []


def register(directory: str, name: str) -> None:
    """Note that a task reads the stand-in ``name`` (for the catalogue's listing)."""
    names = registered(directory)
    if name not in names:
        os.makedirs(directory, exist_ok=True)
        write_atomically(os.path.join(directory, STAND_INS_FILE), "".join(f"{n}\n" for n in sorted([*names, name])))
