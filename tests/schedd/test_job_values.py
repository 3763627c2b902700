"""A table's answer from the embedded schedd: each job's values are read in the schedd's spare time
after the job is saved, so that a projection's first question (the queue view's first look at a
full queue) reads no ClassAd, and the values follow edits and a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import classad2
import pytest

from engine.schedd.local import columns
from engine.schedd.local.pool import default_pool
from engine.schedd.local.schedd import LocalSchedd
from engine.state import StateDir

NOW = 1_700_000_000
SUBMIT = """\
executable = /bin/true
requirements = false
request_memory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage, 300)
My.Sites = {"T2_CH_CERN", "T1_US_FNAL"}
log = values.log
batch_name = values
My.Score = $(score)
queue score from (
1
2.5
"x"
)
"""
PROJECTION = ("ClusterId", "ProcId", "Score", "RequestMemory", "Sites", "HoldReason", "JobBatchName")


def spare_time(loop: asyncio.AbstractEventLoop) -> None:
    """A few turns of the schedd's loop with no request to answer."""
    for _ in range(3):
        loop.call_soon(loop.stop)
        loop.run_forever()


def table(schedd: LocalSchedd) -> list[tuple]:
    return [tuple(row.get(attr) for attr in PROJECTION)
            for row in columns.decode(schedd.query_columns("true", PROJECTION), PROJECTION)]


@contextmanager
def started(state: StateDir, tmp_path) -> Iterator[tuple[LocalSchedd, asyncio.AbstractEventLoop]]:
    """The schedd as its daemon runs it, on a loop of its own, stopped at the end."""
    schedd = LocalSchedd(state, default_pool(tmp_path), clock=lambda: NOW)
    loop = asyncio.new_event_loop()
    schedd.attach(loop)
    try:
        yield schedd, loop
    finally:
        schedd.shutdown()
        loop.close()


def no_ad_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def read(ad, attr):
        raise AssertionError(f"{attr} read out of a ClassAd at question time")
    monkeypatch.setattr(classad2.ClassAd, "__getitem__", read)


def test_the_first_answer_reads_no_ad_and_follows_edits_and_a_restart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "state").mkdir(mode=0o700)
    state = StateDir(str(tmp_path / "state"))
    with started(state, tmp_path) as (schedd, loop):
        cluster = schedd.submit(SUBMIT).cluster
        sites = "['T2_CH_CERN', 'T1_US_FNAL']"  # a list as its text, as before
        expected = [(cluster, 0, 1, 300, sites, None, "values"), (cluster, 1, 2.5, 300, sites, None, "values"),
                    (cluster, 2, "x", 300, sites, None, "values")]
        assert [columns.plain_row(ad, PROJECTION) for ad in schedd.jobs.values()] == expected

        spare_time(loop)
        with monkeypatch.context() as patched:
            no_ad_read(patched)
            assert table(schedd) == expected, "the first question of a projection finds every job read"

        schedd.edit(f"{cluster}.1", "Score", "7")
        schedd.edit(f"{cluster}.2", "MemoryUsage", "512")
        expected[1:] = [(cluster, 1, 7, 300, sites, None, "values"), (cluster, 2, "x", 512, sites, None, "values")]
        assert table(schedd) == expected, "an edit shows in the next answer, before any spare time"

    with started(state, tmp_path) as (schedd, loop):  # the daemon started again: the queue as committed
        spare_time(loop)
        with monkeypatch.context() as patched:
            no_ad_read(patched)
            assert table(schedd) == expected
