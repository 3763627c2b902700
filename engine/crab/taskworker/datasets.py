"""The local dataset catalogue: what DBS and Rucio tell CRAB about an input dataset.

A dataset (``/Primary/Processed-vN/TIER``) holds blocks (``<dataset>#<id>``), each hosted at one
or more CMS sites; a block holds files (LFNs under ``/store/``) with a size in bytes; a file holds
lumi sections, each a (run, lumi, events) triple, and its events are the sum of its lumis' events.

Two sources feed the :class:`Catalogue`:

* Shipped synthetic datasets (:data:`SYNTHETIC`), generated on demand and deterministically from a
  compact definition and a fixed seed, so the repository carries no big files. Every block is at
  ``T2_XX_Local`` (the embedded pool's default site, so any shipped dataset runs out of the box)
  and at up to two more sites, so that site white- and blacklists have something to act on.
* The user's datasets: one JSON file per dataset, ``<state dir>/datasets/*.json``
  (``crabtui dataset add NAME --from FILE`` checks one and puts it there, :meth:`Catalogue.add`)::

      {
        "name": "/MyPrimary/MyProcessed-v1/USER",
        "blocks": [
          {
            "name": "/MyPrimary/MyProcessed-v1/USER#0001",      optional; default <dataset>#<position>
            "sites": ["T2_XX_Local", "T2_CH_CERN"],             at least one CMS site name
            "files": [
              {
                "lfn": "/store/user/me/f1.root",                under /store/, unique in the dataset
                "size": 2500000000,                             bytes
                "events": 960,                                  optional; if given, the lumis' sum
                "lumis": [[1, 1, 480], [1, 2, 480]],            [run, lumi, events], at least one
                "parents": ["/store/user/me/aod/f1.root"]       optional; what it was made from (Data.useParent)
              }
            ]
          }
        ]
      }

  Runs and lumis count from 1; events may be 0; all three fit in 32 bits. A (run, lumi) appears
  once per file, but may appear in several files, as a lumi split across files does in DBS. Unknown
  keys are errors, so that a misspelt optional key is not silently ignored. An invalid file raises
  :class:`DatasetError` naming the file and the field (``mine.json: blocks[1].files[3].size: ...``,
  list items counted from 1, as in the pool file) and leaves the other datasets listed.

A name neither source knows may still be read as a synthetic stand-in
(:mod:`engine.crab.taskworker.stand_ins`), which this catalogue's datasets always replace.

Lumis are stored per file as three parallel ``array('I')`` columns (:class:`Lumis`), 12 bytes a
lumi instead of a tuple's ~100, so the million-lumi dataset loads in a fraction of a second and
under 20 MB. The module is standard library only, so scripts DAGMan runs may import it.
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import sys
import uuid
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from engine.atomic import write_atomically
from engine.crab.jsonfile import read_json
from engine.hints import did_you_mean
from engine.state import StateDir

__all__ = [
    "SITES", "SYNTHETIC", "Block", "Catalogue", "Dataset", "DatasetError", "File", "Lumi", "Lumis",
    "Synthetic", "UnknownDataset", "generate", "load_json", "user_dir",
]

SITES = ("T2_XX_Local", "T1_US_FNAL", "T2_CH_CERN", "T2_DE_DESY", "T2_IT_Pisa", "T2_US_Nebraska")
"""The sites shipped datasets are hosted at; the first, the embedded pool's default, hosts every block."""

_UINT32 = 2 ** 32
_DATASET_NAME = re.compile(r"/[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9._-]*/[A-Z][A-Z0-9-]*")
_SITE_NAME = re.compile(r"T[0-3]_[A-Z]{2}_[A-Za-z0-9_-]+")


class DatasetError(Exception):
    """A dataset that cannot be loaded; the message names the file and field where there is one."""


class UnknownDataset(DatasetError):
    """No dataset has the name; :attr:`suggestions` holds the close ones."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = "; did you mean " + " or ".join(f'"{s}"' for s in suggestions) + "?" if suggestions else ""
        super().__init__(f'unknown dataset "{name}"{hint} (crabtui dataset list shows them all)')


class Lumi(NamedTuple):
    run: int
    lumi: int
    events: int


@dataclass(frozen=True, slots=True)
class Lumis:
    """A file's lumi sections as parallel columns; iterating yields :class:`Lumi` tuples.

    The arrays are shared, not copied: treat them as read-only.
    """

    runs: array
    numbers: array
    events: array

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[Lumi]:
        return map(Lumi, self.runs, self.numbers, self.events)


@dataclass(frozen=True, slots=True)
class File:
    lfn: str
    size: int
    events: int
    lumis: Lumis
    parents: tuple[str, ...] = ()  # the files it was made from (DBS's parentage), for Data.useParent


@dataclass(frozen=True, slots=True)
class Block:
    name: str
    sites: tuple[str, ...]
    files: tuple[File, ...]

    @property
    def lumis(self) -> int:
        return sum(len(f.lumis) for f in self.files)

    @property
    def events(self) -> int:
        return sum(f.events for f in self.files)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    blocks: tuple[Block, ...]
    source: str
    """``synthetic`` for a shipped dataset, ``stand-in`` for a synthetic stand-in
    (:mod:`engine.crab.taskworker.stand_ins`), else the path of the user's JSON file."""

    @property
    def synthetic(self) -> bool:
        """Whether it was generated (shipped, or a stand-in) rather than described by the user."""
        return self.source in ("synthetic", "stand-in")

    @property
    def files(self) -> Iterator[File]:
        """All files, block after block (a fresh iterator each time)."""
        return (f for b in self.blocks for f in b.files)

    @property
    def nfiles(self) -> int:
        return sum(len(b.files) for b in self.blocks)

    @property
    def lumis(self) -> int:
        return sum(b.lumis for b in self.blocks)

    @property
    def events(self) -> int:
        return sum(b.events for b in self.blocks)

    @property
    def size(self) -> int:
        return sum(b.size for b in self.blocks)

    @property
    def sites(self) -> list[str]:
        return sorted({s for b in self.blocks for s in b.sites})

    def runs(self) -> list[int]:
        return sorted({r for f in self.files for r in set(f.lumis.runs)})


# -- shipped synthetic datasets ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Synthetic:
    """The compact definition a shipped dataset is generated from.

    The dataset's lumis (``runs`` runs from ``first_run``, run 1 for MC) are cut into ``files``
    consecutive files, and the files into ``blocks`` consecutive blocks; piece sizes vary by up to
    ``jitter`` of their mean, so totals are exact. Events per lumi are uniform in
    ``events_per_lumi``; a file's size is its events times ``bytes_per_event``, give or take 10 %.
    Every block is at ``SITES[0]`` and at a few ``hosts``.  The runs follow each other at gaps of
    1 to 12 run numbers or, with ``last_run``, are ``runs`` numbers drawn from ``first_run`` to
    ``last_run`` (a data-taking era, of which a dataset holds the runs with its triggers).
    """

    name: str
    seed: int
    files: int
    blocks: int
    lumis: int
    runs: int
    first_run: int
    events_per_lumi: tuple[int, int]
    bytes_per_event: int
    lfn_base: str
    jitter: float = 0.25
    hosts: tuple[str, ...] = SITES[1:]
    """Where blocks are besides ``SITES[0]``: ``extra_hosts`` (low, high) of these, drawn per block."""
    extra_hosts: tuple[int, int] = (0, 2)
    source: str = "synthetic"
    """The generated dataset's :attr:`Dataset.source`."""
    last_run: int | None = None

    @property
    def mc(self) -> bool:
        return self.first_run == 1


SYNTHETIC = {d.name: d for d in (
    # Small MC for demos and tests: 20 files of 2-6 lumis, ~1,800 events and ~2.3 GB each.
    Synthetic("/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM", seed=2023_2, files=20, blocks=2,
              lumis=80, runs=1, first_run=1, events_per_lumi=(400, 500), bytes_per_event=1_300_000,
              lfn_base="/store/mc/Run3Summer23/TTbar_TuneCP5_13p6TeV/AODSIM/130X_mcRun3_2023_realistic_v14-v1"),
    # Collision data over 8 runs for lumi masks: 200 files of ~30 lumis, ~3.3 GB each.
    Synthetic("/Muon0/Run2023C-PromptReco-v1/AOD", seed=2023_3, files=200, blocks=8, lumis=6_000,
              runs=8, first_run=367_100, events_per_lumi=(100, 1000), bytes_per_event=200_000,
              lfn_base="/store/data/Run2023C/Muon0/AOD/PromptReco-v1"),
    # The splitting benchmark's input: 10,000 files of ~100 lumis (~2.7 GB) over 500 runs.
    Synthetic("/JetMET0/Run2023D-PromptReco-v1/MINIAOD", seed=2023_4, files=10_000, blocks=100,
              lumis=1_000_000, runs=500, first_run=369_800, events_per_lumi=(100, 1000),
              bytes_per_event=50_000, lfn_base="/store/data/Run2023D/JetMET0/MINIAOD/PromptReco-v1"),
)}


def _partition(rng: random.Random, total: int, parts: int, jitter: float) -> list[int]:
    """``parts`` positive sizes summing to ``total``, each within ``jitter`` of the mean (cut points jittered)."""
    step = total / parts
    cuts = [0, *(round(step * (i + rng.uniform(-jitter, jitter))) for i in range(1, parts)), total]
    sizes = [b - a for a, b in zip(cuts, cuts[1:])]
    assert min(sizes) > 0, "a synthetic definition too fine for its jitter"
    return sizes


def _uniform_column(rng: random.Random, n: int, low: int, high: int) -> array:
    """``n`` integers uniform in [low, high], drawn in bulk: a million take milliseconds, not a second."""
    raw = array("H")
    raw.frombytes(rng.randbytes(2 * n))
    if sys.byteorder == "big":  # the same numbers on every machine
        raw.byteswap()
    table = [low + (v * (high - low + 1) >> 16) for v in range(1 << 16)]
    return array("I", map(table.__getitem__, raw))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def generate(d: Synthetic) -> Dataset:
    """The dataset ``d`` defines; the same on every call."""
    rng = random.Random(d.seed)
    runs, numbers = array("I"), array("I")
    sizes = _partition(rng, d.lumis, d.runs, d.jitter)
    if d.last_run is None:
        run_numbers, run = [], d.first_run
        for _ in sizes:
            run_numbers.append(run)
            run += rng.randint(1, 12)  # runs too short or without this primary dataset are missing
    else:
        run_numbers = sorted(rng.sample(range(d.first_run, d.last_run + 1), d.runs))
    for run, n in zip(run_numbers, sizes):
        runs.extend(array("I", [run]) * n)
        numbers.extend(array("I", range(1, n + 1)))
    events = _uniform_column(rng, d.lumis, *d.events_per_lumi)

    files: list[File] = []
    start = 0
    for n in _partition(rng, d.lumis, d.files, d.jitter):
        end = start + n
        column = events[start:end]
        nevents = sum(column)
        name = _uuid(rng).upper() + ".root"
        if d.mc:
            lfn = f"{d.lfn_base}/2530000/{name}"
        else:  # data LFNs carry the run number, as /store/data/.../000/367/100/00000/
            r = runs[start]
            lfn = f"{d.lfn_base}/{r // 1000000:03d}/{r // 1000 % 1000:03d}/{r % 1000:03d}/00000/{name}"
        size = round(nevents * d.bytes_per_event * rng.uniform(0.9, 1.1))
        files.append(File(lfn, size, nevents, Lumis(runs[start:end], numbers[start:end], column)))
        start = end

    blocks: list[Block] = []
    start = 0
    for n in _partition(rng, d.files, d.blocks, d.jitter):
        sites = (SITES[0], *rng.sample(d.hosts, rng.randint(*d.extra_hosts)))
        blocks.append(Block(f"{d.name}#{_uuid(rng)}", tuple(sorted(sites)), tuple(files[start:start + n])))
        start += n
    return Dataset(d.name, tuple(blocks), d.source)


# -- the user's datasets ----------------------------------------------------------------------------

class _Invalid(Exception):
    """A problem at ``field`` (``blocks[1].files[2].size``; empty for the whole document)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)


def _show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def _check_keys(obj: object, field: str, what: str, required: tuple[str, ...], optional: tuple[str, ...]) -> dict:
    if not isinstance(obj, dict):
        raise _Invalid(field, f"must be an object, {what}, got {_show(obj)}")
    known = required + optional
    for key in obj:
        if key not in known:
            hint = did_you_mean(key, known)
            raise _Invalid(_join(field, key), f"unknown key; {hint}{what} holds " + ", ".join(known))
    for key in required:
        if key not in obj:
            raise _Invalid(_join(field, key), f"missing; {what} needs " + ", ".join(required))
    return obj


def _list(obj: dict, key: str, field: str, what: str) -> list:
    value = obj[key]
    if not isinstance(value, list) or not value:
        raise _Invalid(_join(field, key), f"must be a non-empty list of {what}, got {_show(value)}")
    return value


def _count(obj: dict, key: str, field: str) -> int:
    value = obj[key]
    if type(value) is not int or value < 0:
        raise _Invalid(_join(field, key), f"must be a whole number >= 0, got {_show(value)}")
    return value


def _lumis(items: list, field: str) -> Lumis:
    runs, numbers, events = array("I"), array("I"), array("I")
    seen: set[tuple[int, int]] = set()
    for i, item in enumerate(items, start=1):
        if not (isinstance(item, list) and len(item) == 3 and all(type(x) is int for x in item)):
            raise _Invalid(f"{field}[{i}]", f"must be [run, lumi, events], three whole numbers, got {_show(item)}")
        run, lumi, n = item
        if run < 1 or lumi < 1 or n < 0 or max(item) >= _UINT32:
            raise _Invalid(f"{field}[{i}]", f"run and lumi count from 1, events from 0, all below 2**32; "
                                            f"got {_show(item)}")
        if (run, lumi) in seen:
            raise _Invalid(f"{field}[{i}]", f"run {run} lumi {lumi} is already in this file")
        seen.add((run, lumi))
        runs.append(run)
        numbers.append(lumi)
        events.append(n)
    return Lumis(runs, numbers, events)


def _dataset(document: object, source: str) -> Dataset:
    top = _check_keys(document, "", "a dataset", ("name", "blocks"), ())
    name = top["name"]
    if not isinstance(name, str) or not _DATASET_NAME.fullmatch(name):
        raise _Invalid("name", 'must be a dataset name /Primary/Processed/TIER, such as '
                               f'"/MyPrimary/MyProcessed-v1/USER", got {_show(name)}')
    lfns: set[str] = set()
    blocks: list[Block] = []
    for b, block in enumerate(_list(top, "blocks", "", "blocks"), start=1):
        at = f"blocks[{b}]"
        block = _check_keys(block, at, "a block", ("sites", "files"), ("name",))
        block_name = block.get("name", f"{name}#{b}")
        if not isinstance(block_name, str) or not block_name.startswith(name + "#") or block_name == name + "#":
            raise _Invalid(f"{at}.name", f"must be the dataset name, '#' and an id, got {_show(block_name)}")
        sites = _list(block, "sites", at, "site names")
        for s, site in enumerate(sites, start=1):
            if not isinstance(site, str) or not _SITE_NAME.fullmatch(site):
                raise _Invalid(f"{at}.sites[{s}]", f'must be a CMS site name such as "T2_CH_CERN", got {_show(site)}')
        files: list[File] = []
        for n, file in enumerate(_list(block, "files", at, "files"), start=1):
            where = f"{at}.files[{n}]"
            file = _check_keys(file, where, "a file", ("lfn", "size", "lumis"), ("events", "parents"))
            lfn = file["lfn"]
            if not isinstance(lfn, str) or not lfn.startswith("/store/"):
                raise _Invalid(f"{where}.lfn", f"must be a logical file name under /store/, got {_show(lfn)}")
            if lfn in lfns:
                raise _Invalid(f"{where}.lfn", f"{lfn} is already a file of this dataset")
            lfns.add(lfn)
            size = _count(file, "size", where)
            lumis = _lumis(_list(file, "lumis", where, "[run, lumi, events] triples"), f"{where}.lumis")
            events = sum(lumis.events)
            if "events" in file and _count(file, "events", where) != events:
                raise _Invalid(f"{where}.events", f"{file['events']} is not the sum of the lumis' events, {events}")
            parents = tuple(_list(file, "parents", where, "parent files' LFNs")) if "parents" in file else ()
            for p, parent in enumerate(parents, start=1):
                if not isinstance(parent, str) or not parent.startswith("/store/"):
                    raise _Invalid(f"{where}.parents[{p}]", f"must be a logical file name under /store/, got "
                                                            f"{_show(parent)}")
            files.append(File(lfn, size, events, lumis, parents))
        blocks.append(Block(block_name, tuple(sorted(set(sites))), tuple(files)))
    return Dataset(name, tuple(blocks), source)


def load_json(path: str) -> Dataset:
    """The dataset in the user's JSON file ``path`` (format in the module docstring); DatasetError if invalid."""
    document = read_json(path, DatasetError)
    try:
        return _dataset(document, path)
    except _Invalid as e:
        raise DatasetError(f"{path}: {e}") from None


def user_dir(state: StateDir) -> str:
    """Where the user's dataset files go: ``<state dir>/datasets``."""
    return os.path.join(state.path, "datasets")


class Catalogue:
    """The shipped datasets and the user's, by name.

    User files are read once, on first use; :attr:`errors` then holds one DatasetError per invalid
    file, and the valid ones are listed as usual.
    """

    def __init__(self, directory: str | None = None):
        self.directory = directory
        self._user: dict[str, Dataset | DatasetError] | None = None
        self._errors: list[DatasetError] = []

    @classmethod
    def for_state(cls, state: StateDir) -> Catalogue:
        return cls(user_dir(state))

    def _scan(self) -> dict[str, Dataset | DatasetError]:
        if self._user is not None:
            return self._user
        self._user = {}
        try:
            entries = sorted(e for e in os.listdir(self.directory) if e.endswith(".json")) if self.directory else []
        except FileNotFoundError:
            entries = []
        except OSError as e:
            self._errors.append(DatasetError(f"{self.directory}: cannot read the dataset directory: {e.strerror}"))
            entries = []
        for entry in entries:
            path = os.path.join(self.directory, entry)
            try:
                dataset = load_json(path)
                if dataset.name in SYNTHETIC:
                    raise DatasetError(f'{path}: name: "{dataset.name}" is a shipped dataset; choose another name')
                if isinstance(other := self._user.get(dataset.name), Dataset):
                    raise DatasetError(f'{path}: name: "{dataset.name}" is already the dataset of {other.source}')
                self._user[dataset.name] = dataset
            except DatasetError as e:
                self._errors.append(e)
                name = _name_of(path)  # so that loading it by name says why it is broken
                if name and name not in SYNTHETIC and name not in self._user:
                    self._user[name] = e
        return self._user

    @property
    def errors(self) -> list[DatasetError]:
        self._scan()
        return list(self._errors)

    def names(self) -> list[str]:
        """Every loadable dataset's name, sorted; cheap for shipped datasets (nothing is generated)."""
        return sorted([*SYNTHETIC, *(n for n, d in self._scan().items() if isinstance(d, Dataset))])

    def load(self, name: str) -> Dataset:
        """The dataset ``name``; UnknownDataset with close names, or the DatasetError of its broken file."""
        if name in SYNTHETIC:
            return generate(SYNTHETIC[name])
        found = self._scan().get(name)
        if isinstance(found, DatasetError):
            raise found
        if found is None:
            raise UnknownDataset(name, self.suggest(name))
        return found

    def add(self, name: str, path: str, *, replace: bool = False) -> str:
        """Put the dataset file ``path`` (the JSON format above) in the user's directory as the
        description of ``name`` and return where it went; DatasetError if it is invalid, names
        another dataset or a shipped one, or ``name`` has a file already (unless ``replace``)."""
        dataset = load_json(path)
        if dataset.name != name:
            raise DatasetError(f'{path}: name: the file describes "{dataset.name}", not "{name}"')
        if name in SYNTHETIC:
            raise DatasetError(f'"{name}" is a shipped dataset; give yours another name')
        if self.directory is None:
            raise DatasetError("this catalogue has no directory for your datasets")
        current = self._scan().get(name)
        known = current.source if isinstance(current, Dataset) else None
        if known and not replace:
            raise DatasetError(f'"{name}" is described already by {known}; add --replace to replace it')
        target = known or os.path.join(self.directory, name.strip("/").replace("/", "__") + ".json")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        os.makedirs(self.directory, exist_ok=True)
        write_atomically(target, text)
        self._user = None  # read the directory again on next use
        self._errors = []
        return target

    def suggest(self, name: str) -> list[str]:
        """Up to three known names containing ``name`` (ignoring case), else the most similar.

        All dataset names share the /x/y/z shape, so "similar" means close to the best match,
        not merely above a fixed ratio.
        """
        names = self.names()
        key = name.strip("/").lower()
        containing = [n for n in names if key and key in n.lower()]
        if containing:
            return containing[:3]
        scored = sorted((-difflib.SequenceMatcher(None, name, n).ratio(), n) for n in names)
        return [n for score, n in scored[:3] if -score >= max(0.6, -scored[0][0] - 0.1)]


def _name_of(path: str) -> str | None:
    """The name a (possibly invalid) dataset file declares, if it declares one."""
    try:
        with open(path, encoding="utf-8") as f:
            name = json.load(f).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None
