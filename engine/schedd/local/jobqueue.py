"""The embedded schedd's durable job queue: job ClassAds in SQLite, the way the schedd keeps its
job_queue.log.

WAL mode with ``synchronous=NORMAL``: a committed transaction survives a crash of any process
(``kill -9`` included), which is the promise every transition makes before it is acted on.
Ads are stored in the new-ClassAd text format and parsed back with classad2.

The outbox holds the user-log events a transaction causes, committed with it and written to the
logs after it: a schedd that dies in between leaves them there, and the next one writes those
the logs lack, so that a log never shows what the queue does not hold, nor misses what it does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import classad2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    cluster INTEGER NOT NULL,
    proc INTEGER NOT NULL,
    ad TEXT NOT NULL,
    PRIMARY KEY (cluster, proc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order jobs left the queue in, finer than seconds
    cluster INTEGER NOT NULL,
    proc INTEGER NOT NULL,
    left_queue INTEGER NOT NULL,
    ad TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_by_job ON history (cluster, proc);
CREATE TABLE IF NOT EXISTS factories (  -- clusters that materialize their jobs late (max_materialize)
    cluster INTEGER PRIMARY KEY,
    next_proc INTEGER NOT NULL,  -- the next job to make; the cluster has ``total``
    total INTEGER NOT NULL,
    paused INTEGER NOT NULL,     -- condor_hold of the cluster
    removed INTEGER NOT NULL,    -- condor_rm of the cluster: it makes no more
    ad TEXT NOT NULL             -- the cluster's, for its limits and its events
);
CREATE TABLE IF NOT EXISTS unmaterialized (
    cluster INTEGER NOT NULL,
    proc INTEGER NOT NULL,
    ad TEXT NOT NULL,
    PRIMARY KEY (cluster, proc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY,  -- the order the events happened in
    path TEXT NOT NULL,       -- the user log they go to
    cluster INTEGER NOT NULL,
    proc INTEGER NOT NULL,
    event TEXT NOT NULL       -- as written to the log
);
"""

OutboxRow = tuple[int, str, tuple[int, int], str]
"""An event waiting for its log: (seq, log path, job id, text)."""


def job_id(ad: classad2.ClassAd) -> tuple[int, int]:
    return ad["ClusterId"], ad["ProcId"]


class JobQueue:
    """Job ads by (cluster, proc), the history of jobs that left the queue, and the cluster counter."""

    def __init__(self, path: str):
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self._next_seq = (self.db.execute("SELECT MAX(seq) FROM outbox").fetchone()[0] or 0) + 1

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group changes so they are durable together, before the caller acts on them."""
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        self.db.execute("ROLLBACK")

    def add_events(self, events: Iterable[tuple[str, tuple[int, int], str]]) -> list[OutboxRow]:
        """Inside a transaction: queue (log path, job id, text) events for their logs."""
        rows = []
        for path, key, text in events:
            rows.append((self._next_seq, path, key, text))
            self._next_seq += 1
        if rows:
            self.db.executemany("INSERT INTO outbox (seq, path, cluster, proc, event) VALUES (?, ?, ?, ?, ?)",
                                [(seq, path, *key, text) for seq, path, key, text in rows])
        return rows

    def forget_events(self, seqs: Iterable[int]) -> None:
        """Inside a transaction: drop events that are in their logs."""
        self.db.executemany("DELETE FROM outbox WHERE seq = ?", [(seq,) for seq in seqs])

    def outbox(self) -> list[OutboxRow]:
        """Events committed and perhaps not yet in their logs, oldest first."""
        return [(seq, path, (cluster, proc), text) for seq, path, cluster, proc, text in
                self.db.execute("SELECT seq, path, cluster, proc, event FROM outbox ORDER BY seq")]

    def new_cluster(self) -> int:
        with self.transaction():
            row = self.db.execute("SELECT value FROM meta WHERE key = 'next_cluster'").fetchone()
            cluster = row[0] if row else 1
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_cluster', ?)", (cluster + 1,))
        return cluster

    def load(self) -> list[classad2.ClassAd]:
        """Every job in the queue, in cluster and proc order."""
        return [classad2.ClassAd(text) for (text,) in self.db.execute("SELECT ad FROM jobs ORDER BY cluster, proc")]

    def put(self, ads: Iterable[classad2.ClassAd]) -> dict[tuple[int, int], str]:
        """Write ads (inside a transaction when several changes belong together); returns their text."""
        texts = {job_id(ad): str(ad) for ad in ads}
        if texts:
            self.db.executemany("INSERT OR REPLACE INTO jobs (cluster, proc, ad) VALUES (?, ?, ?)",
                                [(*key, text) for key, text in texts.items()])
        return texts

    def factories(self) -> list[tuple[int, int, int, bool, bool, classad2.ClassAd]]:
        """Each late-materializing cluster: (cluster, next proc, total, paused, removed, its ad)."""
        rows = self.db.execute("SELECT cluster, next_proc, total, paused, removed, ad FROM factories ORDER BY cluster")
        return [(cluster, next_proc, total, bool(paused), bool(removed), classad2.ClassAd(text))
                for cluster, next_proc, total, paused, removed, text in rows]

    def put_factory(self, cluster: int, next_proc: int, total: int, paused: bool, removed: bool,
                    ad: classad2.ClassAd) -> None:
        """Inside a transaction: write a factory's state."""
        self.db.execute("INSERT OR REPLACE INTO factories (cluster, next_proc, total, paused, removed, ad) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (cluster, next_proc, total, int(paused), int(removed), str(ad)))

    def drop_factory(self, cluster: int) -> None:
        """Inside a transaction: forget a factory and the jobs it did not make."""
        self.db.execute("DELETE FROM factories WHERE cluster = ?", (cluster,))
        self.db.execute("DELETE FROM unmaterialized WHERE cluster = ?", (cluster,))

    def put_unmaterialized(self, ads: Iterable[classad2.ClassAd]) -> None:
        """Inside a transaction: keep the ads of jobs a factory makes later."""
        self.db.executemany("INSERT OR REPLACE INTO unmaterialized (cluster, proc, ad) VALUES (?, ?, ?)",
                            [(*job_id(ad), str(ad)) for ad in ads])

    def unmaterialized(self, cluster: int) -> list[classad2.ClassAd]:
        """The ads of the jobs a factory has yet to make, in proc order."""
        return [classad2.ClassAd(text) for (text,) in
                self.db.execute("SELECT ad FROM unmaterialized WHERE cluster = ? ORDER BY proc", (cluster,))]

    def take_unmaterialized(self, cluster: int, count: int) -> list[classad2.ClassAd]:
        """Inside a transaction: the factory's next ``count`` jobs, no longer kept here."""
        rows = self.db.execute("SELECT proc, ad FROM unmaterialized WHERE cluster = ? ORDER BY proc LIMIT ?",
                               (cluster, count)).fetchall()
        self.db.executemany("DELETE FROM unmaterialized WHERE cluster = ? AND proc = ?",
                            [(cluster, proc) for proc, _ in rows])
        return [classad2.ClassAd(text) for _, text in rows]

    def retire(self, jobs: Sequence[tuple[int, int, int, str]]) -> None:
        """Inside a transaction: move jobs that left the queue (completed or removed) to the
        history, in the order they left, given as (cluster, proc, when it left, ad text)."""
        if not jobs:
            return
        self.db.executemany("DELETE FROM jobs WHERE cluster = ? AND proc = ?", [job[:2] for job in jobs])
        self.db.executemany("INSERT INTO history (cluster, proc, left_queue, ad) VALUES (?, ?, ?, ?)", jobs)

    def history(self, limit: int = -1) -> Iterator[classad2.ClassAd]:
        """Jobs that left the queue, newest first."""
        rows = self.db.execute("SELECT ad FROM history ORDER BY seq DESC LIMIT ?", (limit,))
        for (text,) in rows:
            yield classad2.ClassAd(text)

    def has_left(self, cluster: int, proc: int) -> bool:
        """Whether job ``cluster.proc`` is in the history."""
        return self.db.execute("SELECT 1 FROM history WHERE cluster = ? AND proc = ? LIMIT 1",
                               (cluster, proc)).fetchone() is not None

    def in_history(self, cluster: int, proc: int | None = None) -> list[classad2.ClassAd]:
        if proc is None:
            rows = self.db.execute("SELECT ad FROM history WHERE cluster = ? ORDER BY proc", (cluster,))
        else:
            rows = self.db.execute("SELECT ad FROM history WHERE cluster = ? AND proc = ?", (cluster, proc))
        return [classad2.ClassAd(text) for (text,) in rows]
