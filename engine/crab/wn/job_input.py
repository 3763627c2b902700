"""The job input: what a CRAB job is given to process, as the simulated cmsRun reads it.

The input file (JSON; what a real job gets as ``job_input_file_list_N.txt`` and ``job_lumis_N.json``
together, with the events per lumi a simulation needs)::

    {
      "files": [                                          at least one file, processed in this order
        {"lfn": "/store/mc/.../A.root",                   the file's logical name
         "lumis": [[1, 4, 480], [1, 5, 470]],             [run, lumi, events], at least one, in order
         "parents": ["/store/mc/.../P.root"]}             optional: its parents, read too (Data.useParent)
      ],
      "eventsPerSecond": 10.0,                            optional: throughput at site speed 1.0 (default 10)
      "bytesPerEvent": 5000,                              optional: output bytes per event (default 5000)
      "initSeconds": 10.0                                 optional: start-up time in seconds (default 10)
    }

:func:`make_input` builds one (from :class:`engine.crab.taskworker.datasets.File` objects or
plain tuples) and :func:`write_input` writes it. Unknown keys are errors; :class:`InputError`
names the file and key.

The TaskWorker writes one per job (:mod:`engine.crab.taskworker.dagman_creator`), PreDAG reads
the processing jobs' again for automatic splitting's tails, and cmsRun reads its own.  Standard
library only: it is read on the worker node and on the access point.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.atomic import write_atomically
from engine.crab.jsonfile import read_json
from engine.hints import did_you_mean

DEFAULT_EVENTS_PER_SECOND = 10.0
"""Events per second at speed 1.0: a typical analysis of AOD; a 1,800-event file takes 3 minutes."""
DEFAULT_BYTES_PER_EVENT = 5000
"""Output bytes per event: an analysis ntuple."""
DEFAULT_INIT_SECONDS = 10.0
"""cmsRun's start-up (configuration, conditions, first file open)."""
_INPUT_KEYS = ("files", "eventsPerSecond", "bytesPerEvent", "initSeconds")
_FILE_KEYS = ("lfn", "lumis", "parents")
_UINT32 = 2 ** 32


class InputError(ValueError):
    """An input file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class InputFile:
    lfn: str
    lumis: tuple[tuple[int, int, int], ...]  # (run, lumi, events)
    parents: tuple[str, ...] = ()  # the parent files cmsRun reads as secondary files

    @property
    def events(self) -> int:
        return sum(n for _, _, n in self.lumis)


@dataclass(frozen=True, slots=True)
class JobInput:
    files: tuple[InputFile, ...]
    events_per_second: float = DEFAULT_EVENTS_PER_SECOND
    bytes_per_event: int = DEFAULT_BYTES_PER_EVENT
    init_seconds: float = DEFAULT_INIT_SECONDS

    def lumis(self) -> dict[int, list[int]]:
        """run -> sorted lumi numbers the job is given (each once): what its report's processed and
        unprocessed lumis together must cover."""
        given: dict[int, set[int]] = {}
        for f in self.files:
            for run_number, lumi, _ in f.lumis:
                given.setdefault(run_number, set()).add(lumi)
        return {run_number: sorted(given[run_number]) for run_number in sorted(given)}


def _show(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _positive_number(document: dict, key: str, default: float, zero: bool = False) -> float:
    value = document.get(key, default)
    low_ok = value >= 0 if zero else value > 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not low_ok:
        raise ValueError(f"{key}: must be a number {'>= 0' if zero else '> 0'}, got {_show(value)}")
    return value


def _parse_input(document: object) -> JobInput:
    if not isinstance(document, dict):
        raise ValueError(f"must be a JSON object with a list \"files\", got {_show(document)}")
    for key in document:
        if key not in _INPUT_KEYS:
            hint = did_you_mean(key, _INPUT_KEYS)
            raise ValueError(f"{key}: unknown key; {hint}an input holds " + ", ".join(_INPUT_KEYS))
    files = document.get("files")
    if not isinstance(files, list) or not files:
        raise ValueError(f"files: must be a non-empty list of files, got {_show(files)}")
    parsed = []
    for i, item in enumerate(files, start=1):
        at = f"files[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at}: must be an object with lfn and lumis, got {_show(item)}")
        for key in item:
            if key not in _FILE_KEYS:
                raise ValueError(f"{at}.{key}: unknown key; a file holds lfn, lumis and parents")
        lfn = item.get("lfn")
        if not isinstance(lfn, str) or not lfn:
            raise ValueError(f"{at}.lfn: must be the file's logical name, a non-empty string, got {_show(lfn)}")
        lumis = item.get("lumis")
        if not isinstance(lumis, list) or not lumis:
            raise ValueError(f"{at}.lumis: must be a non-empty list of [run, lumi, events], got {_show(lumis)}")
        triples = []
        for j, lumi in enumerate(lumis, start=1):
            if not (isinstance(lumi, list) and len(lumi) == 3 and all(type(x) is int for x in lumi)
                    and lumi[0] >= 1 and lumi[1] >= 1 and lumi[2] >= 0 and max(lumi) < _UINT32):
                raise ValueError(f"{at}.lumis[{j}]: must be [run, lumi, events], whole numbers (run and lumi "
                                 f"from 1, events from 0), got {_show(lumi)}")
            triples.append((lumi[0], lumi[1], lumi[2]))
        parents = item.get("parents", [])
        if not isinstance(parents, list) or not all(isinstance(p, str) and p for p in parents):
            raise ValueError(f"{at}.parents: must be a list of logical file names, got {_show(parents)}")
        parsed.append(InputFile(lfn, tuple(triples), tuple(parents)))
    eps = _positive_number(document, "eventsPerSecond", DEFAULT_EVENTS_PER_SECOND)
    bpe = document.get("bytesPerEvent", DEFAULT_BYTES_PER_EVENT)
    if type(bpe) is not int or bpe < 0:
        raise ValueError(f"bytesPerEvent: must be a whole number >= 0, got {_show(bpe)}")
    init = _positive_number(document, "initSeconds", DEFAULT_INIT_SECONDS, zero=True)
    return JobInput(tuple(parsed), float(eps), bpe, float(init))


def read_input(path: str | os.PathLike[str]) -> JobInput:
    """The job input at ``path`` (format in the module docstring); :class:`InputError` if invalid."""
    name = os.fspath(path)
    document = read_json(name, InputError, what=" the job input")
    try:
        return _parse_input(document)
    except ValueError as e:
        raise InputError(f"{name}: {e}") from None


def make_input(files: Iterable[Any], *, events_per_second: float | None = None,
               bytes_per_event: int | None = None, init_seconds: float | None = None) -> dict[str, Any]:
    """An input document for ``files``: :class:`engine.crab.taskworker.datasets.File` objects (or anything with
    ``lfn`` and ``lumis`` of (run, lumi, events), and maybe ``parents``), or ``(lfn, [(run, lumi, events), ...])``
    pairs, or ``(lfn, lumis, parents)``."""
    items = []
    for f in files:
        lfn, lumis, *rest = (f.lfn, f.lumis, getattr(f, "parents", ())) if hasattr(f, "lfn") else f
        item: dict[str, Any] = {"lfn": lfn, "lumis": [[int(r), int(n), int(e)] for r, n, e in lumis]}
        if rest and rest[0]:
            item["parents"] = list(rest[0])
        items.append(item)
    document: dict[str, Any] = {"files": items}
    if events_per_second is not None:
        document["eventsPerSecond"] = events_per_second
    if bytes_per_event is not None:
        document["bytesPerEvent"] = bytes_per_event
    if init_seconds is not None:
        document["initSeconds"] = init_seconds
    _parse_input(document)  # refuse to write what cannot be read
    return document


def write_input(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    """Write an input document (see :func:`make_input`) at once, one lumi per line."""
    _parse_input(document)
    write_atomically(path, json.dumps(document, separators=(",", ":")).replace('{"lfn"', '\n{"lfn"') + "\n")
