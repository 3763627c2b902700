"""Late materialization: a cluster whose submit file sets ``max_materialize`` or ``max_idle``
keeps its jobs out of the queue and makes them a few at a time, in proc order, as HTCondor's
schedd does with a job factory: each made job gets its SUBMIT event when it is made, the
cluster a CLUSTER_SUBMIT before them and a CLUSTER_REMOVE once its last job left the queue.

The jobs not made yet live in the job queue's store with the factory's state, changed in the
same transaction as the jobs made from them: a schedd killed at any point makes none twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import classad2

from engine.schedd.api import JobStatus

LIMIT = "JobMaterializeLimit"  # max_materialize
MAX_IDLE = "JobMaterializeMaxIdle"  # max_idle, materialize_max_idle
NEXT_PROC = "JobMaterializeNextProcId"  # condor_q's DONE for such a cluster: made, no longer queued
PAUSED = "JobMaterializePaused"

JobId = tuple[int, int]


def wants_factory(ad: classad2.ClassAd) -> bool:
    """Whether a cluster's ads ask for late materialization."""
    return LIMIT in ad or MAX_IDLE in ad


@dataclass(slots=True)
class Factory:
    """One cluster's factory: the jobs it made so far (``next_proc``) out of ``total``."""

    cluster: int
    next_proc: int
    total: int
    paused: bool
    removed: bool
    ad: classad2.ClassAd  # the cluster's: proc -1, as its events name it
    present: set[JobId] = field(default_factory=set)  # the jobs it made that may still be queued

    @property
    def done(self) -> bool:
        """Makes no more jobs: all made, or condor_rm of the cluster."""
        return self.removed or self.next_proc >= self.total

    def prune(self, jobs: Mapping[JobId, classad2.ClassAd]) -> None:
        """Forget the jobs it made that have left the queue."""
        self.present = {key for key in self.present if key in jobs}

    def room(self, jobs: Mapping[JobId, classad2.ClassAd]) -> int:
        """How many jobs to make now (after :meth:`prune`): up to the limit of jobs in the queue
        and of idle or held ones, each evaluated in the cluster ad as the pool does (``1+2`` is 3)."""
        if self.paused or self.done:
            return 0
        room = self.total - self.next_proc
        limit = self.limit(LIMIT)
        if limit is not None:
            room = min(room, limit - len(self.present))
        max_idle = self.limit(MAX_IDLE)
        if max_idle is not None:
            # a held job counts as idle, as on the pool: hold = true with max_idle = 1 makes one job
            idle = sum(1 for key in self.present if jobs[key]["JobStatus"] in (JobStatus.IDLE, JobStatus.HELD))
            room = min(room, max_idle - idle)
        return max(room, 0)

    def limit(self, attr: str) -> int | None:
        """A limit's value in the cluster ad; none when it is not a number (undefined, say)."""
        if attr not in self.ad:
            return None
        value = self.ad.eval(attr)
        return value if type(value) is int else None

    def scope(self) -> classad2.ClassAd:
        """The cluster ad as a pool's schedd keeps it, for a constraint to match: no ``ProcId`` and
        no ``JobStatus`` (its jobs have them), so ``JobStatus == 1`` does not match it."""
        ad = classad2.ClassAd(str(self.ad))
        for attr in ("ProcId", "JobStatus"):
            del ad[attr]
        return ad


def counts(made: Factory, jobs: Mapping[JobId, classad2.ClassAd]) -> dict[str, int]:
    """The attributes of a pool's factory cluster ad that condor_q -factory shows (after
    :meth:`Factory.prune`)."""
    states = [jobs[key]["JobStatus"] for key in made.present]
    return {"JobsPresent": len(states), "JobsIdle": states.count(JobStatus.IDLE),
            "JobsRunning": states.count(JobStatus.RUNNING), "JobsHeld": states.count(JobStatus.HELD),
            NEXT_PROC: made.next_proc, "JobFactoryPaused": int(made.paused), "ClusterSize": len(states)}


def cluster_ad(ad: classad2.ClassAd) -> classad2.ClassAd:
    """The cluster's ad from its first job's: proc -1, the id of its events."""
    cluster = classad2.ClassAd(str(ad))
    cluster["ProcId"] = -1
    return cluster
