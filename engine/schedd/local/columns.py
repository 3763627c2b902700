"""Projected job values as columns, the wire form of ``query_values`` answers.

A monitor asks the whole queue for a dozen attributes every so often; at 100,000 jobs, reading
each value out of its ClassAd (about a microsecond a value) and sending each as a JSON item
were most of the answer.  The schedd reads each job's values once after it saves the job, in
its spare time (:class:`JobValues`), and sends a column whose neighbouring values repeat (a
cluster's Owner, QDate, UserLog, batch name) as runs of ``[value, count]``: a queue's columns
are mostly runs.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Iterable, Sequence
from itertools import compress, repeat
from typing import Any

import classad2

PLAIN, RUNS = "v", "r"
_PLANS_KEPT = 16  # projections a layout keeps the plan of: the few a monitor asks for over and over


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


class JobValues:
    """Each job's values as a table shows them, read out of its ad once after the job is saved
    (:meth:`read`, in the schedd's spare time after it commits), so that no answer reads a
    ClassAd that did not change since, not even a projection's first: a value costs about a
    microsecond to read, and a monitor's first look at 100,000 jobs asks 1.4 million of them.
    A job's values are one tuple, in the order of its attribute names, which the jobs of one
    submission share (a :class:`_Layout`); an expression's value is evaluated in its ad when
    asked."""

    def __init__(self) -> None:
        self._jobs: dict[Hashable, tuple[_Layout, tuple]] = {}
        self._layouts: dict[tuple, _Layout] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self._jobs

    def read(self, key: Hashable, ad: Any) -> tuple[_Layout, tuple]:
        """Read the job's values out of its ad (once it is saved: they are kept until dropped)."""
        names = list(ad)
        values = list(map(ad.__getitem__, names))
        exprs: tuple[int, ...] = ()
        if not _LITERALS.issuperset(map(type, values)):
            exprs = tuple(i for i, value in enumerate(values) if isinstance(value, classad2.ExprTree))
            values = [value if type(value) in _LITERALS else None if isinstance(value, classad2.ExprTree)
                      else str(value) for value in values]  # a list or a nested ad: its text
        shape = (tuple(map(str.lower, names)), exprs)
        layout = self._layouts.get(shape)
        if layout is None:
            layout = self._layouts[shape] = _Layout(*shape)
        values.append(None)  # what an attribute the job lacks reads
        last = layout.last  # the values a cluster's jobs share, kept once: a third of the memory
        if last is not None:
            values = [old if new == old and type(new) is type(old) else new for new, old in zip(values, last)]
        entry = self._jobs[key] = (layout, tuple(values))
        layout.last = entry[1]
        return entry

    def drop(self, key: Hashable) -> None:
        """The job changed (its values are read again) or left the queue."""
        self._jobs.pop(key, None)

    def rows(self, projection: Sequence[str], jobs: Iterable[tuple[Hashable, Any]]) -> list[tuple]:
        """The rows of ``jobs`` (job id, ad), each as :func:`plain_row` makes it."""
        projection = tuple(projection)
        out = []
        for key, ad in jobs:
            layout, values = self._jobs.get(key) or self.read(key, ad)
            plan = layout.plans.get(projection) or layout.plan(projection)
            row = plan[0](values)
            if plan[1]:
                row = list(row)
                for at, attr in plan[1]:
                    row[at] = _evaluated(ad, attr, ad.lookup(attr))
                row = tuple(row)
            out.append(row)
        return out


class _Layout:
    """The attribute names (lower case) of the jobs that share it, which of them are expressions,
    and how a projection's row is taken from their values."""

    def __init__(self, names: tuple[str, ...], exprs: tuple[int, ...]) -> None:
        self.index = {name: i for i, name in enumerate(names)}
        self.exprs = frozenset(exprs)
        self.last: tuple | None = None  # the values of the last job read
        self.plans: dict[tuple[str, ...], tuple[Any, tuple[tuple[int, str], ...]]] = {}

    def plan(self, projection: tuple[str, ...]) -> tuple[Any, tuple[tuple[int, str], ...]]:
        """A function of the values giving the row, and the row's expressions: (place, attribute)."""
        missing = len(self.index)
        at = [self.index.get(attr.lower(), missing) for attr in projection]
        if len(at) > 1:
            getter = operator.itemgetter(*at)
        else:
            getter = (lambda values: (values[at[0]],)) if at else (lambda values: ())
        if len(self.plans) >= _PLANS_KEPT:
            del self.plans[next(iter(self.plans))]
        plan = self.plans[projection] = (getter, tuple((n, projection[n]) for n, i in enumerate(at) if i in self.exprs))
        return plan


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
