"""DAGMan's sanity check of the events it reads for its node jobs (``CheckEvents``,
src/condor_utils/check_events.cpp at v23.9.6), and DAGMAN_ALLOW_EVENTS.

Each job id's submit, execute, terminate, abort and POST script events are counted; an
impossible sequence (a job that ends twice, runs after it ended, or ends unsubmitted) is a bad
event.  DAGMAN_ALLOW_EVENTS is a bit mask of the bad events to tolerate: a tolerated one is
logged and skipped, any other aborts the DAG.  The default 114 tolerates terminate-then-abort,
execute before submit, a double terminate and duplicates.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import htcondor2

ALLOW_ALMOST_ALL = 1 << 0
ALLOW_TERM_ABORT = 1 << 1
ALLOW_RUN_AFTER_TERM = 1 << 2
ALLOW_GARBAGE = 1 << 3
ALLOW_EXEC_BEFORE_SUBMIT = 1 << 4
ALLOW_DOUBLE_TERMINATE = 1 << 5
ALLOW_DUPLICATE_EVENTS = 1 << 6


class Verdict(enum.Enum):
    OKAY = "okay"
    BAD_EVENT = "bad event"  # tolerated: logged, and the event is not processed
    ERROR = "error"  # not tolerated: DAGMan aborts the DAG
    WARNING = "warning"  # logged, and the event is processed


@dataclass(slots=True)
class _Counts:
    submit: int = 0
    abort: int = 0
    term: int = 0
    post: int = 0

    @property
    def ends(self) -> int:
        return self.abort + self.term


class EventChecker:
    """One DAGMan's ``CheckEvents``: :meth:`check` each event of a node job as it is read."""

    def __init__(self, allow: int) -> None:
        self.allow = allow
        self.jobs: dict[tuple[int, int, int], _Counts] = {}

    def _allows(self, *bits: int) -> bool:
        return any(self.allow & (bit | ALLOW_ALMOST_ALL) for bit in bits)

    def check(self, kind: htcondor2.JobEventType, cluster: int, proc: int, subproc: int = 0) -> tuple[Verdict, str]:
        """The verdict on one event, and DAGMan's ``BAD EVENT: ...`` text when it is not okay."""
        T = htcondor2.JobEventType
        counts = self.jobs.setdefault((cluster, proc, subproc), _Counts())
        who = f"BAD EVENT: job ({cluster}.{proc}.{subproc})"
        verdict, message = Verdict.OKAY, ""
        if kind == T.SUBMIT:
            counts.submit += 1
            if counts.submit != 1:
                message = f"{who} submitted, submit count != 1 ({counts.submit})"
                verdict = Verdict.BAD_EVENT if self._allows(ALLOW_DUPLICATE_EVENTS) else Verdict.ERROR
            if counts.ends:
                message = f"{who} submitted, total end count != 0 ({counts.ends})"
                verdict = Verdict.BAD_EVENT if self._allows(ALLOW_EXEC_BEFORE_SUBMIT) else Verdict.ERROR
        elif kind == T.EXECUTE:
            if counts.submit < 1:
                message = f"{who} executing, submit count < 1 ({counts.submit})"
                verdict = Verdict.WARNING if self._allows(ALLOW_EXEC_BEFORE_SUBMIT, ALLOW_GARBAGE) else Verdict.ERROR
            if counts.ends:
                message = f"{who} executing, total end count != 0 ({counts.ends})"
                verdict = Verdict.BAD_EVENT if self.allow & ALLOW_RUN_AFTER_TERM else Verdict.ERROR
        elif kind in (T.JOB_TERMINATED, T.JOB_ABORTED):
            if kind == T.JOB_TERMINATED:
                counts.term += 1
            else:
                counts.abort += 1
            verdict, message = self._end(who, counts)
        elif kind == T.POST_SCRIPT_TERMINATED:
            counts.post += 1
            if counts.submit < 1:
                message = f"{who} post script ended, submit count < 1 ({counts.submit})"
                verdict = (Verdict.BAD_EVENT if self._allows(ALLOW_DUPLICATE_EVENTS, ALLOW_GARBAGE)
                           else Verdict.ERROR)
            if counts.ends < 1:
                message = f"{who} post script ended, total end count < 1 ({counts.ends})"
                verdict = Verdict.BAD_EVENT if self.allow & ALLOW_ALMOST_ALL else Verdict.ERROR
            if counts.post > 1:
                message = f"{who} post script ended, post script count > 1 ({counts.post})"
                verdict = (Verdict.BAD_EVENT if self._allows(ALLOW_DUPLICATE_EVENTS, ALLOW_GARBAGE)
                           else Verdict.ERROR)
        return verdict, message

    def _end(self, who: str, counts: _Counts) -> tuple[Verdict, str]:
        verdict, message = Verdict.OKAY, ""
        if counts.submit < 1:
            message = f"{who} ended, submit count < 1 ({counts.submit})"
            verdict = Verdict.WARNING if self._allows(ALLOW_EXEC_BEFORE_SUBMIT, ALLOW_GARBAGE) else Verdict.ERROR
        if counts.ends != 1:
            message = f"{who} ended, total end count != 1 ({counts.ends})"
            if ((self._allows(ALLOW_TERM_ABORT) and counts.abort == 1 and counts.term == 1)
                    or (self._allows(ALLOW_DOUBLE_TERMINATE) and counts.term == 2)
                    or self._allows(ALLOW_RUN_AFTER_TERM, ALLOW_DUPLICATE_EVENTS)):
                verdict = Verdict.BAD_EVENT
            else:
                verdict = Verdict.ERROR
        if counts.post:
            message = f"{who} ended, post script count != 0 ({counts.post})"
            verdict = Verdict.BAD_EVENT if self._allows(ALLOW_DUPLICATE_EVENTS) else Verdict.ERROR
        return verdict, message
