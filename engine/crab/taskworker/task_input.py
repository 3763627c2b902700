"""What a task reads, as CRAB's TaskWorker discovers it: a dataset, the user's files, or generated events.

CRAB's TaskWorker picks one discovery action per task (``Handler``): DBS/Rucio for
``Data.inputDataset``, ``UserDataDiscovery`` for ``Data.userInputFiles``, ``MakeFakeFileSet`` for
PrivateMC.  :class:`InputSpec` says which, as ``task submit`` resolved it, and :func:`load_input`
makes the :class:`~engine.crab.taskworker.datasets.Dataset` the splitting cuts, the same in the
task worker and in PreDAG (which splits automatic splitting's later stages on the access point):

* a dataset: the catalogue's, else its synthetic stand-in
  (:mod:`engine.crab.taskworker.stand_ins`) when the spec allows one;
* user files: one block ``UserFilesFakeBlock`` of one file per entry, each one lumi of run 1 (its
  position, from 1; CRAB counts from 0, which is not a lumi) and one event, at the processing
  sites, as ``UserDataDiscovery`` makes them;
* PrivateMC: one file ``MCFakeFile`` in ``MCFakeBlock`` at the processing sites except Tier-1s
  (``MakeFakeFileSet``), holding run 1's lumis as WMCore's EventBased splitting numbers them: each
  job ``ceil(events per job / events per lumi)`` lumis of ``events per lumi`` events, its last
  lumi the rest;
* ``blocks`` keeps only those blocks (``Data.inputBlocks``, and the blocks the site lists leave);
  ``sites`` puts every block at those sites (``Data.ignoreLocality``: any site of the pool);
  ``use_parent`` gives the dataset's files their parents (``Data.useParent``), ``secondary``
  pairs them with that dataset's files holding their lumis (``Data.secondaryInputDataset``;
  :mod:`engine.crab.taskworker.parents`).

:func:`locality` is DagmanCreator's check of where each block can run: the block's sites, minus
the global blacklist, within the whitelist, minus the blacklist (:class:`engine.crab.ap.sites.SiteLists`),
and on the embedded engine within the pool's sites.  Blocks left with no site are skipped, with
CRAB's warning (:func:`skipped_warning`); a task left with none is refused in CRAB's words
(:func:`refusal`).  Standard library only, as the modules PreDAG imports are.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.crab.ap.sites import SiteLists, matches
from engine.crab.taskworker import stand_ins
from engine.crab.taskworker.datasets import SITES, Block, Catalogue, Dataset, File, Lumis
from engine.crab.taskworker.parents import with_parents, with_secondary

__all__ = ["InputSpec", "Locality", "load_input", "locality", "refusal", "skipped_warning"]

MC_FAKE_FILE = "MCFakeFile"
USER_FILES_BLOCK = "UserFilesFakeBlock"


@dataclass(frozen=True)
class InputSpec:
    """Where a task's input comes from (one of ``dataset``, ``user_files``, ``events``) and how it is narrowed."""

    dataset: str | None = None  # Data.inputDataset
    stand_in: bool = False  # read a synthetic stand-in if the catalogue does not know the dataset
    user_files: tuple[str, ...] = ()  # Data.userInputFiles
    events: int | None = None  # PrivateMC: events to generate (Data.totalUnits) ...
    events_per_job: int | None = None  # ... in jobs of Data.unitsPerJob ...
    events_per_lumi: int | None = None  # ... in lumis of this many
    blocks: tuple[str, ...] | None = None  # only these blocks; None: every block
    # blocks the site lists leave nowhere to run: not read, but split with the others when
    # Data.totalUnits counts units, as CRAB's Splitter counts them before DagmanCreator skips them
    skipped: tuple[str, ...] = ()
    sites: tuple[str, ...] | None = None  # every block at these sites instead of its own; None: its own
    processing_sites: tuple[str, ...] = field(default=())  # the pool's sites when the task was submitted
    use_parent: bool = False  # Data.useParent: each file with its parents
    secondary: str | None = None  # Data.secondaryInputDataset: each file with that dataset's files of its lumis

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InputSpec:
        tuples = ("user_files", "blocks", "sites", "processing_sites", "skipped")
        return cls(**{k: (tuple(v) if k in tuples and v is not None else v) for k, v in data.items()})

    def with_blocks(self, blocks: Iterable[str] | None) -> InputSpec:
        return InputSpec(**{**asdict(self), "blocks": None if blocks is None else tuple(blocks)})

    def with_skipped(self) -> InputSpec:
        """The input as CRAB's Splitter sees it: the skipped blocks too (their jobs are dropped after)."""
        if not self.skipped:
            return self
        return InputSpec(**{**asdict(self), "blocks": (*(self.blocks or ()), *self.skipped)})


def load_input(spec: InputSpec, catalogue: Catalogue) -> Dataset:
    """The dataset ``spec`` describes (module docstring); DatasetError if it names an unknown dataset."""
    if spec.events is not None:
        dataset = _generated(spec.events, spec.events_per_job, spec.events_per_lumi,
                             tuple(s for s in spec.sites or () if not s.startswith("T1_")))
    elif spec.user_files:
        dataset = _user_files(spec.user_files, spec.sites or ())
    else:
        dataset = stand_ins.load(catalogue, spec.dataset, stand_in=spec.stand_in)
        if spec.use_parent:
            dataset = with_parents(dataset)
        if spec.secondary:
            dataset = with_secondary(dataset, spec.secondary, catalogue)
        if spec.sites is not None:
            dataset = Dataset(dataset.name, tuple(Block(b.name, spec.sites, b.files) for b in dataset.blocks),
                              dataset.source)
    if spec.blocks is not None:
        wanted = set(spec.blocks)
        dataset = Dataset(dataset.name, tuple(b for b in dataset.blocks if b.name in wanted), dataset.source)
    return dataset


def _user_files(lfns: Sequence[str], sites: tuple[str, ...]) -> Dataset:
    files = tuple(File(lfn, 1000, 1, Lumis(array("I", [1]), array("I", [i]), array("I", [1])))
                  for i, lfn in enumerate(lfns, start=1))
    return Dataset("", (Block(USER_FILES_BLOCK, tuple(sorted(sites)), files),), "user files")


def _generated(events: int, per_job: int, per_lumi: int, sites: tuple[str, ...]) -> Dataset:
    lumis, counts = array("I"), array("I")
    left = events
    while left > 0:
        in_job = min(per_job, left)
        n = math.ceil(in_job / per_lumi)
        counts.extend([per_lumi] * (n - 1) + [in_job - (n - 1) * per_lumi])
        left -= in_job
    lumis.extend(range(1, len(counts) + 1))
    fake = File(MC_FAKE_FILE, 1000, events, Lumis(array("I", [1]) * len(lumis), lumis, counts))
    return Dataset("", (Block("MCFakeBlock", tuple(sorted(sites)), (fake,)),), "generated")


@dataclass(frozen=True)
class Locality:
    """The blocks of a task's input with lumis to process, by where their jobs could run."""

    usable: tuple[Block, ...]
    banned: tuple[Block, ...]  # the site lists leave none of their sites
    outside: tuple[Block, ...]  # the lists leave sites, but none of the pool's

    @property
    def blocks(self) -> int:
        return len(self.usable) + len(self.banned) + len(self.outside)


def locality(dataset: Dataset, lists: SiteLists, pool_sites: Iterable[str],
             lumi_mask: Mapping[int, Sequence[Sequence[int]]] | None = None) -> Locality:
    """Where each block of ``dataset`` (with a lumi within ``lumi_mask``) can run."""
    pool = set(pool_sites)
    mask = None if lumi_mask is None else {int(r): sorted(tuple(x) for x in v) for r, v in lumi_mask.items()}
    usable, banned, outside = [], [], []
    for block in dataset.blocks:
        if mask is not None and not _selected(block, mask):
            continue
        available = lists.available(block.sites)
        (usable if pool.intersection(available) else outside if available else banned).append(block)
    return Locality(tuple(usable), tuple(banned), tuple(outside))


def _selected(block: Block, mask: Mapping[int, list[tuple[int, int]]]) -> bool:
    """Whether a lumi of ``block`` is within ``mask`` (sorted tuples of ranges by run)."""
    for f in block.files:
        for run, lumi in zip(f.lumis.runs, f.lumis.numbers):
            ranges = mask.get(run)
            if ranges:
                i = bisect_right(ranges, (lumi, 2 ** 32)) - 1
                if i >= 0 and ranges[i][0] <= lumi <= ranges[i][1]:
                    return True
    return False


def _lists(lists: SiteLists) -> str:
    out = ""
    if lists.global_blacklist and not lists.ignore_global_blacklist:
        out += f" Global blacklist is {sorted(lists.global_blacklist)}."
    if lists.blacklist:
        out += f" User blacklist is {list(lists.blacklist)}."
    if lists.whitelist:
        out += f" User whitelist is {list(lists.whitelist)}."
    return out


# Where the pool's sites and slots come from, and how to change them: the embedded engine's, a real pool's.
SLOTS_FROM_POOL_TOML = ("pool.toml in the state directory describes the pool's sites and slots; 'crabtui pool stop', "
                        "then 'crabtui pool start --grid', put the simulated grid's CMS sites there")
SLOTS_FROM_GLIDEIN_CMSSITE = ("the pool's slots advertise their site as GLIDEIN_CMSSite; 'condor_status -af Name "
                              "GLIDEIN_CMSSite Cpus Memory' lists each slot's site, cores and memory")


def refusal(name: str, found: Locality, lists: SiteLists, pool_sites: Iterable[str], request: str,
            all_sites: Iterable[str], on_pool: bool) -> str:
    """DagmanCreator's refusal of a task none of whose blocks can run anywhere, in one line.
    ``pool_sites`` are the sites whose slots can hold the task's jobs (``request`` says what they
    ask for), ``all_sites`` every site of the pool; ``on_pool``: a real HTCondor pool's, whose slots say their sites."""
    what = f"dataset {name}" if name else "the task's input"
    message = (f"The CRAB server backend refuses to send jobs to the Grid scheduler. No locations found for {what}. "
               f"(or at least for what passed the lumi-mask and/or run-range selection).")
    known = {*all_sites, *SITES, *(s for b in (*found.usable, *found.banned, *found.outside) for s in b.sites)}
    lost = [p for p in lists.whitelist if "*" in p and not any(matches(site, (p,)) for site in known)]
    if lost:  # what CRAB says of a pattern no CMS site matches, before it looks for locations
        message = (f"Cannot expand site {lost[0]} to anything: no site of the pool or the simulated grid, nor any "
                   f"holding the input, matches Site.whitelist's {', '.join(repr(p) for p in lost)} (the sites are "
                   f"{', '.join(sorted(known))}). {message}")
    elif not name and lists.whitelist and not any(matches(s, lists.whitelist) for s in all_sites):
        # user files and generated events run at any whitelisted site: the pool lacks every one named
        message = (f"Site.whitelist {list(lists.whitelist)} names no site of this pool, and the jobs of user files "
                   f"or generated events run only at whitelisted sites: add one of the pool's sites "
                   f"({', '.join(all_sites)}) to Site.whitelist to run here. {message}")
    if found.banned:
        message += (f" Found {len(found.banned)} (out of {found.blocks}) blocks present only at blacklisted "
                    f"not-whitelisted sites.")
    if found.outside:
        message += (f" Found {len(found.outside)} (out of {found.blocks}) blocks present only at sites the lists "
                    f"allow but where the pool has no slot for jobs of {request}.")
    message += _lists(lists)
    at = sorted({s for b in (*found.banned, *found.outside) for s in b.sites})
    fit = ", ".join(sorted(pool_sites)) or "none"
    message += (f" The {'data is' if name else 'jobs may run'} at {', '.join(at) or 'no site'}; the pool's sites are "
                f"{', '.join(all_sites)}, with slots for jobs of {request} at {fit} ({SLOTS_FROM_GLIDEIN_CMSSITE if on_pool else SLOTS_FROM_POOL_TOML}).")
    small = [s for s in lists.available(all_sites) if s not in set(pool_sites)]
    if small:  # what the lists allow, but whose slots cannot hold the jobs: the request is the obstacle
        message += (f" The lists allow {', '.join(small)}, whose slots cannot hold jobs of {request}: ask for less "
                    f"(JobType.numCores, JobType.maxMemoryMB) to run there.")
    if name:
        message += f" 'crabtui dataset show {name}' lists the blocks' locations; compare them with your black/white list."
    return message


def skipped_warning(name: str, found: Locality, lists: SiteLists) -> str:
    """DagmanCreator's warning for the blocks skipped because their jobs could run nowhere, in one line."""
    skipped = len(found.banned) + len(found.outside)
    where = "blacklisted, not-whitelisted" + (", and/or outside the pool's" if found.outside else "")
    return (f"Some blocks from dataset {name} were skipped because they are only present at {where} sites."
            f"{_lists(lists)} Dataset processing will be incomplete because {skipped} (out of {found.blocks}) "
            f"blocks are only present at blacklisted and/or not whitelisted site(s).")
