"""A task's pace: its jobs running and done over time, its throughput and when it should end.

Pure: the jobs (:class:`engine.crab.client.status.JobView`, whose attempts carry their start and
end times) and ``now`` in, numbers out.  A job is done once an attempt ended ``ok`` (finished)
or the job failed for good; the throughput is the jobs done per minute over the last
:data:`WINDOW` seconds (or since the first attempt started, if later), and the time left is the
jobs not done at that pace.  Nothing here imports textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.crab.client.status import JobView

BUCKETS = 24
WINDOW = 15 * 60.0
ENDED = ("finished", "failed", "killed")


@dataclass(frozen=True)
class Trend:
    running: tuple[int, ...]  # jobs running at the end of each bucket, oldest first
    done: tuple[int, ...]  # jobs done by the end of each bucket
    per_minute: float | None  # jobs done per minute lately (None: none done yet)
    eta_s: float | None  # seconds until every job is done at that pace (None: not known)
    left: int  # jobs not done yet
    jobs: int  # the task's jobs (0: not split yet, as a dry run's task)


def trend(jobs: Sequence[JobView], now: float, buckets: int = BUCKETS) -> Trend:
    spans: list[tuple[float, float]] = []  # (start, end or now) of every attempt that started
    done_at: list[float] = []
    first = now
    for j in jobs:
        for a in j.attempts:
            start = a.get("start")
            if start:
                end = a.get("end") or now
                spans.append((start, end))
                first = min(first, start)
        if j.state in ENDED:
            ends = [a.get("end") for a in j.attempts if a.get("end")]
            if ends:
                done_at.append(max(ends))
    left = sum(1 for j in jobs if j.state not in ENDED)
    if not spans:
        return Trend((), (), None, None, left, len(jobs))
    # Over the task's life: up to now while a job is left, else up to its last job's end (a task
    # looked at long after it ended would otherwise draw all of its life in the first bucket).
    until = now if left else max(end for _, end in spans)
    step = max(1.0, (until - first) / buckets)
    edges = [first + step * (i + 1) for i in range(buckets)]
    running = tuple(sum(1 for start, end in spans if start <= t < end) for t in edges)
    done_at.sort()
    done = tuple(_count_upto(done_at, t) for t in edges)
    since = max(first, now - WINDOW)
    recent = len(done_at) - _count_upto(done_at, since)
    minutes = (now - since) / 60
    per_minute = recent / minutes if recent and minutes > 0 else None
    eta = left / per_minute * 60 if per_minute else (0.0 if not left else None)
    return Trend(running, done, per_minute, eta, left, len(jobs))


def _count_upto(sorted_times: list[float], t: float) -> int:
    from bisect import bisect_right

    return bisect_right(sorted_times, t)
