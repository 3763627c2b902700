"""The storage sites of crabtui's simulated grid: where ``Site.storageSite`` sends a task's outputs.

A storage site is a directory on this machine standing for a CMS site's storage element; a file
with the LFN ``/store/user/alice/...`` lands at ``<directory>/store/user/alice/...``, the trivial
lfn-to-pfn rule of a site's storage.  It has a bandwidth and a latency, which time the transfers
(:mod:`engine.crab.ap.stageout`), and a failure profile.

Any CMS site name is a storage site, as any site with storage is one for CRAB: one that no file
describes transfers at :data:`DEFAULT_BANDWIDTH`, with no latency and no failures, into
``<state dir>/storage/<name>``, so each state directory has its own storage.  The shipped
:file:`storage.toml` describes the simulated grid's sites (:mod:`engine.crab.grid`), and
``<state dir>/storage.toml`` adds sites or describes shipped ones again (its table wins).  The
file::

    [[storage]]
    name = "T2_CH_CERN"        # required: the CMS site name Site.storageSite gives
    bandwidth = 100            # MB/s of one transfer (simulated), default 100
    latency = 30               # seconds before a transfer starts (simulated), default 0
    failures = [{probability = 0.1, exitCode = 60311}]   # default none; codes: stageout.STAGEOUT_CODES
    directory = "/data/cern"   # default <state dir>/storage/<name>; relative: to this file

Storage sites are kept apart from the pool's sites (``pool.toml``): a CMS storage node is not a
processing site, and the schedd has no business with storage.  :func:`stageout_ad` resolves
``Site.storageSite`` at submit time into the ``stageout`` the task's ``task.json`` carries, so that
PostJob needs neither this module nor the state directory (it runs on a real submit host too).
Bad files raise :class:`StorageError` naming the file and the key, as
``storage.toml: storage[2].bandwidth: ...`` (sites counted from 1).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass

from engine.crab.ap.stageout import STAGEOUT_CODES, lfn_base
from engine.hints import did_you_mean
from engine.tomlfile import TomlError, parse_toml
from engine.state import StateDir

__all__ = ["DEFAULT_BANDWIDTH", "STORAGE_FILE", "StorageError", "StorageSite", "load_storage", "parse_storage",
           "shipped_path", "stageout_ad", "storage_file", "storage_site"]

STORAGE_FILE = "storage.toml"
DEFAULT_BANDWIDTH = 100.0  # MB/s
_KEYS = ("name", "bandwidth", "latency", "failures", "directory")
_FAILURE_EXAMPLE = "failures = [{probability = 0.1, exitCode = 60311}]"
_CMS_SITE = re.compile(r"T[0-3]_[A-Z]{2}(_[A-Za-z0-9]+)+")  # CRABServer's RX_CMSSITE without wildcards


class StorageError(ValueError):
    """A storage file that cannot be used, or a storage site that is not in it."""


@dataclass(frozen=True, slots=True)
class StorageSite:
    name: str
    directory: str  # absolute
    bandwidth: float = DEFAULT_BANDWIDTH  # MB/s, simulated
    latency: float = 0.0  # s, simulated
    failures: tuple[tuple[float, int], ...] = ()  # (probability, exit code)


def shipped_path() -> str:
    """The shipped storage sites of the simulated grid."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), STORAGE_FILE)


def storage_file(state: StateDir) -> str:
    """``<state dir>/storage.toml``, the user's storage sites (it need not exist)."""
    return os.path.join(state.path, STORAGE_FILE)


def load_storage(state: StateDir) -> dict[str, StorageSite]:
    """The described storage sites of ``state``, by name: the shipped ones, then the user's."""
    root = os.path.join(state.path, "storage")
    sites = _read(shipped_path(), root)
    own = storage_file(state)
    if os.path.exists(own):
        sites.update(_read(own, root))
    return sites


def _read(path: str, root: str) -> dict[str, StorageSite]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise StorageError(f"{path}: cannot read the storage sites: {e}") from None
    return parse_storage(text, path, root)


def storage_site(state: StateDir, name: str) -> StorageSite:
    """The storage site ``name``: as a storage file describes it, else with the defaults."""
    if not _CMS_SITE.fullmatch(name):
        raise StorageError(f"{name!r} is not a CMS site name; a storage site is named like 'T2_CH_CERN'")
    described = load_storage(state).get(name)
    return described or StorageSite(name, os.path.join(state.path, "storage", name))


def stageout_ad(site: StorageSite, *, task_name: str, user: str, primary_dataset: str, request_name: str,
                out_lfn_dir_base: str | None = None, output_dataset_tag: str | None = None) -> dict:
    """The task's ``stageout`` (TaskAd.stageout): where its outputs go and how the transfers go."""
    base = lfn_base(task_name, user, primary_dataset, request_name, out_lfn_dir_base=out_lfn_dir_base,
                    output_dataset_tag=output_dataset_tag)
    return {"site": site.name, "directory": site.directory, "lfn_base": base, "bandwidth": site.bandwidth,
            "latency": site.latency, "failures": [{"probability": p, "exitCode": c} for p, c in site.failures]}


def parse_storage(text: str, file: str, default_root: str) -> dict[str, StorageSite]:
    """The storage sites in ``text``, the TOML content of ``file``; a site without ``directory``
    is ``<default_root>/<name>``."""
    try:
        document = parse_toml(text, file)
    except TomlError as e:
        raise StorageError(str(e)) from None
    for key in document:
        if key != "storage":
            raise StorageError(f"{file}: {key}: unknown key; the file holds only [[storage]] tables")
    tables = document.get("storage")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise StorageError(f'{file}: storage: give at least one [[storage]] table, such as\n[[storage]]\n'
                           f'name = "T2_CH_CERN"\nbandwidth = 100')
    sites: dict[str, StorageSite] = {}
    for number, table in enumerate(tables, start=1):
        where = f"{file}: storage[{number}]"
        for key in table:
            if key not in _KEYS:
                hint = did_you_mean(key, _KEYS)
                raise StorageError(f"{where}.{key}: unknown key; {hint}a [[storage]] table holds {', '.join(_KEYS)}")
        name = table.get("name")
        if not isinstance(name, str) or not name:
            raise StorageError(f'{where}.name: missing or not a string; give the CMS site name, such as "T2_CH_CERN"')
        if name in sites:
            raise StorageError(f'{where}.name: "{name}" is named by an earlier [[storage]] table; keep one')
        bandwidth = _number(table, "bandwidth", where, DEFAULT_BANDWIDTH, "MB/s of one transfer", positive=True)
        latency = _number(table, "latency", where, 0.0, "seconds before a transfer starts", positive=False)
        directory = table.get("directory", os.path.join(default_root, name))
        if not isinstance(directory, str) or not directory:
            raise StorageError(f"{where}.directory: must be a directory path, got {json.dumps(directory)}")
        directory = os.path.abspath(os.path.join(os.path.dirname(file), os.path.expanduser(directory)))
        sites[name] = StorageSite(name, directory, bandwidth, latency, _failures(table, where))
    return sites


def _number(table: dict, key: str, where: str, default: float, what: str, *, positive: bool) -> float:
    value = table.get(key, default)
    ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
          and (value > 0 if positive else value >= 0))
    if not ok:
        bound = "a positive number" if positive else "a number >= 0"
        raise StorageError(f"{where}.{key}: must be {bound} ({what}), got {json.dumps(value, default=str)}")
    return float(value)


def _failures(table: dict, where: str) -> tuple[tuple[float, int], ...]:
    value = table.get("failures", [])
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise StorageError(f"{where}.failures: must be an array of tables, such as {_FAILURE_EXAMPLE}")
    failures = []
    for number, entry in enumerate(value, start=1):
        at = f"{where}.failures[{number}]"
        if set(entry) != {"probability", "exitCode"}:
            raise StorageError(f"{at}: give probability and exitCode, and nothing else, such as {_FAILURE_EXAMPLE}")
        probability, code = entry["probability"], entry["exitCode"]
        if isinstance(probability, bool) or not isinstance(probability, (int, float)) or not 0 <= probability <= 1:
            raise StorageError(f"{at}.probability: must be a number from 0 to 1, got {json.dumps(probability)}")
        if code not in STAGEOUT_CODES or isinstance(code, bool):
            raise StorageError(f"{at}.exitCode: must be one of CRAB's stage-out exit codes "
                               f"{', '.join(map(str, STAGEOUT_CODES))}, got {json.dumps(code)}")
        failures.append((float(probability), code))
    total = math.fsum(p for p, _ in failures)
    if total > 1 + 1e-9:
        raise StorageError(f"{where}.failures: the probabilities add up to {total:g}; at most 1, since one draw "
                           "per transfer picks at most one failure")
    return tuple(failures)
