"""The Schedd API: one interface for the embedded schedd and for a real HTCondor schedd.

It mirrors ``htcondor2.Schedd`` so that code above it (DAGMan, the CRAB layer, the UI) reads the
same on both: jobs are ClassAds with HTCondor's attribute names, constraints are ClassAd
expressions, actions are named as in ``htcondor2.JobAction``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Protocol

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
HOLD_CODE_START_FAILED = 6  # FailedToCreateProcess
HOLD_CODE_MEMORY = 34  # JobOutOfResources (memory)


class ScheddError(Exception):
    """A request the schedd refuses; the message says what and what to do, and nothing changed."""


@dataclass(frozen=True, slots=True)
class SubmitResult:
    cluster: int
    first_proc: int
    num_procs: int

    def job_ids(self) -> list[str]:
        return [f"{self.cluster}.{p}" for p in range(self.first_proc, self.first_proc + self.num_procs)]


@dataclass(frozen=True, slots=True)
class ActResult:
    """How many jobs an action changed, and why the others were left alone."""

    changed: int
    refused: tuple[str, ...] = ()


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

    def act(self, action: JobAction, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        """Hold, release or remove jobs."""

    def edit(self, job_spec: JobSpec, attr: str | Mapping[str, str], value: str | None = None) -> int:
        """Set ``attr`` to the ClassAd expression ``value``, or each attribute of a mapping to its
        expression in one transaction; returns the number of jobs edited."""

    def history(self, constraint: str = "true", projection: Sequence[str] = (),
                match: int = -1) -> list[classad2.ClassAd]:
        """Jobs that left the queue, newest first."""
