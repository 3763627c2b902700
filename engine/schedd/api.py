"""The Schedd API: one interface for the embedded schedd and for a real HTCondor schedd.

It mirrors ``htcondor2.Schedd`` so that code above it (DAGMan, the CRAB layer, the UI) reads the
same on both: jobs are ClassAds with HTCondor's attribute names, constraints are ClassAd
expressions, actions are named as in ``htcondor2.JobAction``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, Protocol

import classad2


class JobStatus(IntEnum):
    """HTCondor's JobStatus values."""

    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7

    @property
    def letter(self) -> str:
        """The ST column of condor_q."""
        return "IRXCH>S"[self - 1]


class JobAction(str, Enum):
    """The actions of ``htcondor2.JobAction`` that the schedd performs on jobs."""

    Hold = "Hold"
    Release = "Release"
    Remove = "Remove"
    RemoveX = "RemoveX"


# HoldReasonCode values HTCondor uses for the holds the embedded schedd can produce.
HOLD_CODE_USER = 1  # UserRequest: condor_hold
HOLD_CODE_JOB_POLICY = 3  # JobPolicy: periodic_hold / on_exit_hold
HOLD_CODE_SUBMITTED_ON_HOLD = 15  # SubmittedOnHold: hold = true
HOLD_CODE_JOB_DURATION = 46  # JobDurationExceeded: allowed_job_duration


class ScheddError(Exception):
    """A request the schedd refuses; the message says what and what to do, and nothing changed."""


class ScheddUnreachable(ScheddError):
    """No schedd answered (not located, or silent: down, restarting): nothing was refused, and
    the same request can be made again once it answers."""


@dataclass(frozen=True, slots=True)
class SubmitResult:
    cluster: int
    first_proc: int
    num_procs: int

    def job_ids(self) -> list[str]:
        return [f"{self.cluster}.{p}" for p in range(self.first_proc, self.first_proc + self.num_procs)]


@dataclass(frozen=True, slots=True)
class ActResult:
    """How many jobs an action changed, and why the others were left alone: as text, and
    counted as the schedd's action result ad counts them (TotalNotFound, TotalBadStatus,
    TotalAlreadyDone, TotalPermissionDenied; TotalJobAds is every job in the queue)."""

    changed: int
    refused: tuple[str, ...] = ()
    not_found: int = 0
    bad_status: int = 0
    already_done: int = 0
    permission_denied: int = 0
    job_ads: int = 0


SUMMARY_STATES = {JobStatus.IDLE: "Idle", JobStatus.RUNNING: "Running", JobStatus.REMOVED: "Removed",
                  JobStatus.COMPLETED: "Completed", JobStatus.HELD: "Held", JobStatus.SUSPENDED: "Suspended"}
"""The counters of a schedd's summary ad, by job status (TRANSFERRING_OUTPUT counts as Running)."""


def summarize(jobs: Iterable[tuple[int, int]], everyone: Iterable[tuple[int, int]]) -> dict[str, int]:
    """A schedd's query summary ad from (JobStatus, JobUniverse) pairs: ``Jobs``, ``Idle``... for
    the query's jobs and ``AllusersJobs``... for the whole queue, scheduler universe jobs (DAGMan)
    apart, as the schedd counts them for condor_q's totals."""
    summary: dict[str, int] = {}
    scheduler = ["Scheduler" + name for name in ("Jobs", *SUMMARY_STATES.values()) if name != "Suspended"]
    for prefix, pairs in (("", jobs), ("Allusers", everyone)):
        counts = dict.fromkeys(("Jobs", *SUMMARY_STATES.values(), *scheduler), 0)
        for (status, universe), n in Counter(pairs).items():  # a few distinct pairs, however long the queue
            name = SUMMARY_STATES.get(JobStatus.RUNNING if status == JobStatus.TRANSFERRING_OUTPUT else status)
            apart = "Scheduler" if universe == 7 else ""  # the schedd's SchedulerJobs, SchedulerIdle...
            counts[apart + "Jobs"] += n
            if name and apart + name in counts:
                counts[apart + name] += n
        summary.update({prefix + k: v for k, v in counts.items()})
    return summary


JobSpec = str | int | Sequence[str]
"""``"12.0"``, a cluster number, a list of ``"c.p"`` ids, or a ClassAd constraint string."""


class Schedd(Protocol):
    """What crabtui needs from a schedd. Both backends raise :class:`ScheddError`."""

    def submit(self, description: str, *, count: int = 0, itemdata: Iterable[dict[str, str]] | None = None,
               submit_file: str | None = None, cwd: str | None = None,
               prepend: Mapping[str, str] | None = None, append: Mapping[str, str] | None = None) -> SubmitResult:
        """Queue the jobs of a submit description (HTCondor's submit language).

        ``prepend`` and ``append`` are macros set as values, never parsed as submit text, before
        the description is read (it may override them) or after it (before its queue
        statement), as ``condor_submit -a`` and DAGMan's VARS set them."""

    def query(self, constraint: str = "true", projection: Sequence[str] = ()) -> list[classad2.ClassAd]:
        """Jobs in the queue matching a ClassAd constraint, with only ``projection`` if given."""

    def query_values(self, constraint: str, projection: Sequence[str]) -> list[Mapping[str, Any]]:
        """Matching jobs as mappings of the projected attributes that are set, evaluated."""

    def factories(self, constraint: str = "true") -> list[classad2.ClassAd]:
        """The cluster ads of clusters that materialize their jobs late (``condor_q -factory``),
        those matching a constraint, with their counts (JobsPresent, JobsIdle, ...)."""

    def summary(self, constraint: str = "false") -> dict[str, int]:
        """The queue's totals in one moment, as the schedd's summary ad gives them: see
        :func:`summarize`."""

    def owner(self) -> str:
        """Who the schedd knows us as: the Owner of the jobs we submit."""

    @property
    def schedd_log(self) -> str | None:
        """The schedd's own log, where this machine can read it (None: it cannot): what the schedd
        says only there, such as why it cannot start a scheduler-universe job."""

    def act(self, action: JobAction, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        """Hold, release or remove jobs.  Jobs named by id that have left the queue or cannot take
        the action are left out and named in ``refused`` (an error if no job could take it); for a
        constraint the result counts them."""

    def edit(self, job_spec: JobSpec, attr: str | Mapping[str, str], value: str | None = None) -> int:
        """Set ``attr`` to the ClassAd expression ``value``, or each attribute of a mapping to its
        expression in one transaction; returns the number of jobs edited."""

    def history(self, constraint: str = "true", projection: Sequence[str] = (),
                match: int = -1) -> list[classad2.ClassAd]:
        """Jobs that left the queue, newest first."""
