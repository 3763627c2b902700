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
  of that year and era, with 100-1000 events a lumi, under ``/store/data/<era>/`` with the run
  number in the path;
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

__all__ = ["STAND_INS_FILE", "definition", "load", "register", "registered"]

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
_DATA_ERA = re.compile(r"(Run(20\d\d)([A-Z]?))")
_YEAR = re.compile(r"20\d\d")
# The runs of each year's collisions, roughly, as (first, last); eras A, B, ... follow each other.
_RUNS = {2010: (136_000, 149_500), 2011: (160_400, 180_300), 2012: (190_400, 208_700),
         2015: (246_900, 260_700), 2016: (272_000, 284_100), 2017: (294_900, 306_500),
         2018: (314_400, 325_200), 2022: (352_300, 362_800), 2023: (365_700, 370_800),
         2024: (378_900, 387_000), 2025: (391_000, 398_900)}
_TIER1 = ("T1_US_FNAL",)
_TIER2 = tuple(s for s in SITES[1:] if s.startswith("T2_"))


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
    lumis = files * rng.randint(*lumis_range)
    blocks = max(1, files // rng.randint(5, 40))
    mc = is_mc(name)
    head, _, rest = processed.partition("-")
    if mc:
        events, runs, first_run = (200, 800), 1, 1
        bytes_per_event = bytes_per_event * 6 // 5
        lfn_base = f"/store/mc/{head}/{primary}/{tier}/{rest or 'v1'}"
        hosts, extra = _TIER2, (1, 3)
    else:
        era = _DATA_ERA.search(processed)
        year_text = era.group(2) if era else (_YEAR.search(processed) or _YEAR.search("2018")).group(0)
        low, high = _RUNS.get(int(year_text), _RUNS[2018])
        letter = era.group(3) if era and era.group(3) else "A"
        first_run = low + (ord(letter) - ord("A")) % 8 * (high - low) // 8 + rng.randint(0, 200)
        events = (100, 1000)
        runs = max(1, min(lumis // rng.randint(80, 400), (high - first_run) // 12))
        if era and processed.startswith(era.group(1)):
            lfn_base = f"/store/data/{era.group(1)}/{primary}/{tier}/{processed[len(era.group(1)) + 1:] or 'v1'}"
        else:
            lfn_base = f"/store/data/{head}/{primary}/{tier}/{rest or 'v1'}"
        hosts, extra = (_TIER1 + _TIER2, (1, 3)) if key in ("RAW", "RECO", "FEVT", "AOD") else (_TIER2 + _TIER1, (1, 3))
    if key == "USER":
        lfn_base = f"/store/user/{head}/{primary}/{processed}"
    return Synthetic(name, seed=rng.getrandbits(63), files=files, blocks=blocks, lumis=lumis, runs=runs,
                     first_run=first_run, events_per_lumi=events, bytes_per_event=bytes_per_event,
                     lfn_base=lfn_base, hosts=hosts, extra_hosts=extra, source=STAND_IN)


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
