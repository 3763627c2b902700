"""The lumis a task may read: ``Data.lumiMask`` and ``Data.runRange``, as CRAB's client makes them.

A lumi mask is the CMS lumi JSON (``{"316187": [[1, 37], [40, 90]]}``): a local file (relative to
the configuration's directory) or an ``http(s)`` address, which is downloaded as CRAB's LumiList
does; an address that does not answer (no network) raises :class:`Unreachable`, which the loader
turns into a warning.  Its ranges are sorted and merged.  ``Data.runRange``
(``"316000-316100,316200"``, CRAB's syntax) narrows the mask to those runs; without a mask it
selects those runs whole (at most 50,000 runs, CRAB's limit).  An empty intersection is refused,
as CRAB refuses it.

Every function raises :class:`MaskError` with a message that says what is wrong; the loader
(:mod:`engine.crab.client.config`) puts the file and the parameter in front.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

__all__ = ["ALL_LUMIS", "MaskError", "LumiMask", "Unreachable", "compact", "intersect_runs", "parse_mask",
           "read_mask", "run_list"]

LumiMask = dict[int, list[tuple[int, int]]]
"""run -> sorted, merged inclusive lumi ranges."""
ALL_LUMIS = (1, 0xFFFFFFF)
"""A whole run, as LumiList(runs=...) writes it."""
MAX_RUNS = 50_000  # CRABClient Analysis.py: a run range without a lumi mask
DOWNLOAD_TIMEOUT_S = 30
_RX_RUN_RANGE = re.compile(r"^\d+((?!(-\d+-))(\,|\-)\d+)*$")  # CRABClient Analysis.py
_EXAMPLE = 'a JSON object mapping run numbers to [first, last] lumi ranges, e.g. {"316187": [[1, 37], [40, 90]]}'


class MaskError(ValueError):
    """A lumi mask or run range that cannot be used."""


class Unreachable(MaskError):
    """An address no answer came from (no network, no such host, refused, timed out): the mask
    may be right, but it cannot be known here.  ``reason`` says why, as the network said it."""

    def __init__(self, reason: object):
        super().__init__(f"cannot download it ({reason})")
        self.reason = str(reason)


def read_mask(where: str, *, url: bool) -> LumiMask:
    """The lumi mask in the file (or at the address, if ``url``) ``where``."""
    try:
        if url:
            with urllib.request.urlopen(where, timeout=DOWNLOAD_TIMEOUT_S) as response:  # noqa: S310 (http(s) only)
                text = response.read().decode("utf-8")
        else:
            with open(where, encoding="utf-8") as f:
                text = f.read()
    except FileNotFoundError:
        raise MaskError("no such file") from None
    except urllib.error.HTTPError as e:
        raise MaskError(f"cannot download it (HTTP {e.code} {e.reason})") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        if url:
            raise Unreachable(reason) from None
        raise MaskError(f"cannot read it ({reason})") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise MaskError(f"cannot {'download' if url else 'read'} it ({e})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise MaskError(f"not valid JSON ({e}); a lumi mask is {_EXAMPLE}") from None
    return parse_mask(data)


def parse_mask(data: Any) -> LumiMask:
    """The mask a lumi JSON document holds, ranges merged; runs ascending."""
    if not isinstance(data, dict) or not data:
        raise MaskError(("it selects no runs" if isinstance(data, dict) else "it is not a JSON object")
                        + f"; a lumi mask is {_EXAMPLE}")
    mask: LumiMask = {}
    for run_text, ranges in data.items():
        if not (run_text.isascii() and run_text.isdigit() and int(run_text) > 0):
            raise MaskError(f"{run_text!r} is not a run number; a lumi mask is {_EXAMPLE}")
        if not isinstance(ranges, list) or not ranges:
            raise MaskError(f"run {run_text}: {_short(ranges)} is not a non-empty list of [first, last] ranges")
        pairs = []
        for r in ranges:
            if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) and 1 <= r[0] <= r[1]):
                raise MaskError(f"run {run_text}: {_short(r)} is not a [first, last] lumi range with "
                                f"1 <= first <= last")
            pairs.append((r[0], r[1]))
        mask[int(run_text)] = _merge(pairs)
    return dict(sorted(mask.items()))


def _ranges(text: str) -> list[tuple[int, int]]:
    """The (first, last) runs of a ``Data.runRange`` such as ``"316000-316005,316100"``."""
    if not _RX_RUN_RANGE.match(text):
        raise MaskError("Invalid CRAB configuration: Parameter Data.runRange should be a comma separated list of "
                        "integers or (inclusive) ranges. Example: '12345,99900-99910'")
    ranges = []
    for item in text.split(","):
        first, _, last = item.partition("-")
        low, high = int(first), int(last or first)
        if high < low:  # CRAB reads it as no run, and then runs on every run
            raise MaskError(f"Invalid CRAB configuration: Parameter Data.runRange ({text!r}): {item} has its "
                            f"first run after its last, so it selects no run")
        ranges.append((low, high))
    return ranges


def run_list(text: str) -> list[int]:
    """The runs of a ``Data.runRange``, ascending, each once (at most 50,000, CRAB's limit)."""
    ranges = _ranges(text)
    count = sum(high - low + 1 for low, high in ranges)
    if count > MAX_RUNS:
        raise MaskError(f"CRAB configuration parameter Data.runRange includes {count} runs. When Data.lumiMask is "
                        f"not specified, Data.runRange can not include more than {MAX_RUNS} runs.")
    return sorted({run for low, high in ranges for run in range(low, high + 1)})


def intersect_runs(mask: LumiMask | None, text: str) -> LumiMask:
    """``mask`` narrowed to the runs of the run range ``text``; without a mask, those runs whole."""
    if mask is None:
        return {run: [ALL_LUMIS] for run in run_list(text)}
    ranges = _ranges(text)
    narrowed = {run: lumis for run, lumis in mask.items() if any(low <= run <= high for low, high in ranges)}
    if not narrowed:
        raise MaskError("Invalid CRAB configuration: The intersection between the lumi mask and the run range "
                        "is null.")
    return narrowed


def _merge(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for first, last in sorted(pairs):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def compact(lumis: dict[int, set[int] | list[int]]) -> dict[str, list[list[int]]]:
    """``{run: lumis}`` as the CMS lumi JSON writes it (LumiList's compact list): runs as sorted
    strings, each with its sorted, merged ``[first, last]`` ranges; a run without lumis is left out."""
    out: dict[str, list[list[int]]] = {}
    for run in sorted(lumis):
        ranges: list[list[int]] = []
        for lumi in sorted(set(lumis[run])):
            if ranges and lumi == ranges[-1][1] + 1:
                ranges[-1][1] = lumi
            else:
                ranges.append([lumi, lumi])
        if ranges:
            out[str(run)] = ranges
    return out
