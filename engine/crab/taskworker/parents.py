"""Parent files: what ``Data.useParent`` jobs read besides their input, as DBS's parentage says.

In CMS a file of one data tier is made from files of the tier before it (a MINIAOD file from AOD
files, an AOD file from RAW files), and DBS records those as the file's parents.  With
``Data.useParent`` CRAB gives each job its input files' parents too (DagmanCreator's
``{"lfn": ..., "parents": [{"lfn": ...}]}``), cmsRun reads them as secondary files, and a task
whose files have no parents is refused by the TaskWorker.

The catalogue's user datasets say their files' parents (``"parents"`` in the JSON).  A generated
dataset (shipped, or a synthetic stand-in) has them made up, the same every time: a file of a tier
in :data:`PARENT_TIERS` has one parent for each few lumis, as many as a file of the parent tier
holds (:mod:`engine.crab.taskworker.stand_ins`), at most :data:`MAX_PARENTS`, named as the
parent tier's files are (the same path with the parent tier, a name made from the child's);
other tiers (RAW, GEN-SIM, USER, ...) have no parent a name could tell.

``Data.secondaryInputDataset`` pairs files the same way, as CRAB's DBS discovery does: a file's
"parents" are the secondary dataset's files that hold one of its lumis.  A secondary dataset the
catalogue does not know is a stand-in made for the input: for each file, files holding its lumis,
named under the secondary dataset's path as its stand-in would be.  Standard library only: PreDAG
loads the input again on the access point.
"""

from __future__ import annotations

import hashlib
import math
import uuid

from collections.abc import Callable

from engine.crab.taskworker.datasets import SYNTHETIC, Block, Catalogue, Dataset, File, UnknownDataset
from engine.crab.taskworker.stand_ins import STAND_IN, definition, lumis_per_file

__all__ = ["MAX_PARENTS", "PARENT_TIERS", "parent_tier", "why_none", "with_parents", "with_secondary",
           "without_parents"]

PARENT_TIERS = {
    "NANOAOD": "MINIAOD", "NANOAODSIM": "MINIAODSIM", "MINIAOD": "AOD", "MINIAODSIM": "AODSIM",
    "AOD": "RAW", "RECO": "RAW", "ALCARECO": "RAW", "AODSIM": "GEN-SIM-RAW", "GEN-SIM-RECO": "GEN-SIM-RAW",
    "GEN-SIM-RAW": "GEN-SIM-DIGI", "GEN-SIM-DIGI": "GEN-SIM", "GEN-SIM-DIGI-RAW": "GEN-SIM",
}
"""Each data tier and the tier its files are made from, in CMS's processing chain."""
MAX_PARENTS = 20


def parent_tier(dataset: str) -> str | None:
    """The tier the files of ``dataset`` (``/Primary/Processed/TIER``) are made from, if known."""
    return PARENT_TIERS.get(dataset.rsplit("/", 1)[-1].upper())


def with_parents(dataset: Dataset) -> Dataset:
    """``dataset`` with each file's parents: its own where the catalogue gives them, made up for a
    generated dataset's files (module docstring)."""
    tier = parent_tier(dataset.name)
    own = f"/{dataset.name.rsplit('/', 1)[-1]}/"
    if not dataset.synthetic or tier is None:
        return dataset
    return _made_up(dataset, lambda f: f.lfn.rsplit("/", 1)[0].replace(own, f"/{tier}/", 1) if own in f.lfn
                    else None, lumis_per_file(tier), keep=True)


def with_secondary(dataset: Dataset, name: str, catalogue: Catalogue) -> Dataset:
    """``dataset`` with each file paired with the files of the secondary dataset ``name`` that hold
    its lumis (module docstring): the catalogue's dataset, or a stand-in made for the input."""
    try:
        secondary = catalogue.load(name)
    except UnknownDataset:
        base, new = _lfn_base(dataset), definition(name).lfn_base
        return _made_up(dataset, lambda f: new + f.lfn[len(base):].rsplit("/", 1)[0] if base and f.lfn.startswith(
            base) else new, lumis_per_file(name.rsplit("/", 1)[-1]), keep=False)
    holders: dict[tuple[int, int], list[str]] = {}
    for f in secondary.files:
        for key in zip(f.lumis.runs, f.lumis.numbers):
            holders.setdefault(key, []).append(f.lfn)
    blocks = []
    for block in dataset.blocks:
        files = []
        for f in block.files:
            paired = dict.fromkeys(lfn for key in zip(f.lumis.runs, f.lumis.numbers) for lfn in holders.get(key, ()))
            files.append(File(f.lfn, f.size, f.events, f.lumis, tuple(paired)))
        blocks.append(Block(block.name, block.sites, tuple(files)))
    return Dataset(dataset.name, tuple(blocks), dataset.source)


def _made_up(dataset: Dataset, directory: Callable[[File], str | None], per_file: int, *, keep: bool) -> Dataset:
    """``dataset`` whose files get made-up partners in ``directory(file)`` (None: none), one for
    each ``per_file`` lumis; with ``keep``, a file's own parents stay."""
    blocks = []
    for block in dataset.blocks:
        files = []
        for f in block.files:
            where = None if keep and f.parents else directory(f)
            if where is None:
                files.append(f)
                continue
            count = min(MAX_PARENTS, max(1, math.ceil(len(f.lumis) / per_file)))
            files.append(File(f.lfn, f.size, f.events, f.lumis,
                              tuple(f"{where}/{_name(f.lfn + where, i)}.root" for i in range(count))))
        blocks.append(Block(block.name, block.sites, tuple(files)))
    return Dataset(dataset.name, tuple(blocks), dataset.source)


def _lfn_base(dataset: Dataset) -> str | None:
    """Where a generated dataset's files are (its definition's ``lfn_base``); None for the user's."""
    if dataset.name in SYNTHETIC:
        return SYNTHETIC[dataset.name].lfn_base
    return definition(dataset.name).lfn_base if dataset.source == STAND_IN else None


def without_parents(dataset: Dataset) -> File | None:
    """The first file of ``dataset`` that has no parent, if any (CRAB refuses such a task)."""
    return next((f for f in dataset.files if not f.parents), None)


def why_none(dataset: Dataset, secondary: str | None = None) -> str:
    """Why a file of ``dataset`` has no parents (or, with ``secondary``, no partner in that
    dataset), and what to do, in a sentence."""
    if secondary is not None:
        return (f"the secondary dataset {secondary} holds none of its lumis ('crabtui dataset show' lists both "
                f"datasets' files)")
    tier = dataset.name.rsplit("/", 1)[-1]
    if dataset.synthetic:
        what = "a synthetic stand-in" if dataset.source == STAND_IN else "a shipped synthetic dataset"
        return (f"{dataset.name} is {what}, and the files of a {tier} dataset have no parent tier its name could "
                f"tell; describe it with its files' parents (\"parents\" in the JSON of 'crabtui dataset add')")
    return (f"{dataset.name} is described in {dataset.source}, whose files give no \"parents\"; add them and "
            f"'crabtui dataset add {dataset.name} --from FILE --replace'")


def _name(lfn: str, i: int) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256(f"{lfn}#{i}".encode()).digest()[:16], version=4)).upper()
