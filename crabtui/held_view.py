"""What the UI shows of held jobs: every held job of the schedd with when it was held and why,
grouped by its reason, for operators who release them by cause.  Nothing here imports textual."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.schedd.api import JobStatus

HELD_CONSTRAINT = f"JobStatus == {int(JobStatus.HELD)}"
HELD_PROJECTION = ("ClusterId", "ProcId", "Owner", "EnteredCurrentStatus", "QDate", "HoldReason", "HoldReasonCode",
                   "HoldReasonSubCode", "JobBatchName", "DAGManJobId", "DAGNodeName", "CRAB_ReqName", "CRAB_Id",
                   "JobUniverse")


@dataclass(frozen=True)
class HeldJob:
    """One held job: its id, owner, since when it is held, its hold reason and code, and what it
    belongs to (a CRAB task's job, a DAG's node, a batch)."""

    id: str  # "cluster.proc"
    owner: str
    since: float  # EnteredCurrentStatus: when it was held
    reason: str
    code: int | None  # HoldReasonCode
    subcode: int | None
    of: str  # "task T job 3", "DAG 12 node B", its batch name, or ""

    @property
    def cause(self) -> str:
        """What jobs are grouped by: their hold reason as HTCondor words it, with its code."""
        return f"[{self.code}] {self.reason}" if self.code is not None else self.reason


@dataclass(frozen=True)
class HeldSnapshot:
    jobs: list[HeldJob]  # grouped by cause (the largest group first), then held longest first
    owner: str  # who the schedd knows us as
    at: float


def held_jobs(ads: Iterable[Mapping[str, Any]]) -> list[HeldJob]:
    """The held jobs of ``ads`` (HELD_PROJECTION), grouped by cause: the largest group first."""
    jobs = [HeldJob(f"{ad['ClusterId']}.{ad['ProcId']}", str(ad.get("Owner", "")),
                    float(ad.get("EnteredCurrentStatus") or ad.get("QDate") or 0),
                    str(ad.get("HoldReason") or "no reason given"), _int(ad.get("HoldReasonCode")),
                    _int(ad.get("HoldReasonSubCode")), _of(ad)) for ad in ads]
    sizes: dict[str, int] = {}
    for job in jobs:
        sizes[job.cause] = sizes.get(job.cause, 0) + 1
    return sorted(jobs, key=lambda j: (-sizes[j.cause], j.cause, j.since, tuple(map(int, j.id.split(".")))))


def causes(jobs: Iterable[HeldJob]) -> list[tuple[str, int]]:
    """Each cause with its jobs, the largest first."""
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job.cause] = counts.get(job.cause, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _of(ad: Mapping[str, Any]) -> str:
    if ad.get("CRAB_ReqName"):
        return f"task {ad['CRAB_ReqName']} job {ad.get('CRAB_Id', '?')}"
    if ad.get("DAGNodeName"):
        return f"DAG {ad.get('DAGManJobId', '?')} node {ad['DAGNodeName']}"
    return str(ad.get("JobBatchName") or "")


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
