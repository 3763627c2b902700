"""Projected job values as columns, the wire form of ``query_values`` answers.

A monitor asks the whole queue for a dozen attributes every so often; at 100,000 jobs, reading
each value out of its ClassAd (about a microsecond a value) and sending each as a JSON item
were most of the answer.  The schedd keeps each job's projected row from its last saved text
(:class:`RowCache`), and sends a column whose neighbouring values repeat (a cluster's Owner,
QDate, UserLog, batch name) as runs of ``[value, count]``: a queue's columns are mostly runs.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import compress, repeat
from typing import Any

import classad2

PLAIN, RUNS = "v", "r"
_PROJECTIONS_KEPT = 4  # the few a monitor asks for over and over


_LITERALS = frozenset((type(None), bool, int, float, str))
_DISTINCT = frozenset((type(None), str))  # equal to no value of another type


def plain_row(ad: Any, projection: Sequence[str]) -> tuple:
    """The projected values as a table wants them: None where unset or undefined, literals as
    they are, an expression evaluated in its job's ad (``request_memory = ifThenElse(...)`` shows
    its value in ``q -idle``, as in condor_q and the htcondor backend's rows), and one whose value
    is a list or a nested ad as its text."""
    row = tuple(map(ad.get, projection))
    if _LITERALS.issuperset(map(type, row)):
        return row
    return tuple(value if type(value) in _LITERALS else _evaluated(ad, attr, value)
                 for attr, value in zip(projection, row))


def _evaluated(ad: Any, attr: str, value: Any) -> Any:
    if isinstance(value, classad2.ExprTree):
        result = ad.eval(attr)
        if isinstance(result, classad2.Value):  # undefined or error
            return None
        if isinstance(result, (int, float, str)):
            return result
    return str(value)


class RowCache:
    """Each job's row of a projection, valid while the job's saved text is the same object it
    was made under (the schedd replaces a job's text each time it saves the job)."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, ...], dict[Hashable, tuple[Any, tuple]]] = {}

    def rows(self, projection: Sequence[str], jobs: Iterable[tuple[Hashable, Any]],
             saved: Mapping[Hashable, Any], whole: bool) -> list[tuple]:
        """The rows of ``jobs`` (job id, ad); ``whole``: these are every job, so rows of jobs
        not among them are dropped."""
        projection = tuple(projection)
        kept = self._rows.pop(projection, {})
        fresh = {} if whole else kept
        out = []
        for key, ad in jobs:
            text = saved.get(key)
            entry = kept.get(key)
            if entry is None or entry[0] is not text:
                entry = (text, plain_row(ad, projection))
            fresh[key] = entry
            out.append(entry[1])
        self._rows[projection] = fresh  # the newest last
        while len(self._rows) > _PROJECTIONS_KEPT:
            del self._rows[next(iter(self._rows))]
        return out


def encode(rows: Sequence[tuple], width: int) -> list[list]:
    """``rows`` as ``width`` columns, each ``["v", values]`` or ``["r", [value, count, ...]]``."""
    columns = list(zip(*rows)) if rows else [()] * width
    return [_encode_column(column) for column in columns]


def _encode_column(column: Sequence[Any]) -> list:
    count = len(column)
    changes = map(operator.ne, column[1:], column[:-1])
    if len(set(map(type, column)) - _DISTINCT) > 1:  # 1 == 1.0 == True: a run is of one type
        types = list(map(type, column))
        changes = map(operator.or_, changes, map(operator.is_not, types[1:], types[:-1]))
    starts = [0, *compress(range(1, count), changes)] if count else []
    if 2 * len(starts) >= count:  # about as many runs as values: plainer as they are
        return [PLAIN, list(column)]
    runs: list = []
    for start, end in zip(starts, starts[1:] + [count]):
        runs += (column[start], end - start)
    return [RUNS, runs]


def decode(columns: Sequence[list], projection: Sequence[str]) -> list[dict[str, Any]]:
    """The rows as mappings of the projected attributes that are set."""
    dense, sparse = [], []
    for attr, (kind, data) in zip(projection, columns):
        unset = None in (data[::2] if kind == RUNS else data)
        (sparse if unset else dense).append((attr, kind, data))
    count = sum(data[1::2]) if columns and columns[0][0] == RUNS else len(columns[0][1]) if columns else 0
    if dense:
        names = [attr for attr, _, _ in dense]
        out = [dict(zip(names, values)) for values in zip(*(_expand(kind, data) for _, kind, data in dense))]
    else:
        out = [{} for _ in range(count)]
    for attr, kind, data in sparse:
        if kind == PLAIN:
            for job, value in zip(out, data):
                if value is not None:
                    job[attr] = value
            continue
        start = 0
        for i in range(0, len(data), 2):
            value, end = data[i], start + data[i + 1]
            if value is not None:
                for job in out[start:end]:
                    job[attr] = value
            start = end
    return out


def _expand(kind: str, data: list) -> list:
    if kind == PLAIN:
        return data
    values: list = []
    for i in range(0, len(data), 2):
        values += repeat(data[i], data[i + 1])
    return values
