"""CRAB3's automatic retry policy: exit-code table, never-resubmit guards, counters and their file.

Standard library only: PreJob and PostJob import this module when DAGMan runs them as scripts,
on the embedded engine or on a real submit host.

One attempt of one job goes through three calls, each on a :class:`JobState` loaded from and
saved back to ``retry_state/job.<id>.json`` (:func:`state_path`, :func:`load_state`,
:func:`save_state`):

1. PreJob: while :func:`cooloff_remaining` is positive it waits (exit ``DEFER`` 4, or sleep if the
   wait is short); then :func:`begin_attempt` opens the attempt with this attempt's memory,
   runtime and sites to avoid, and bumps the RRN, the count of executions in this epoch.
2. PostJob, on its first run (not on its ASO DEFER re-runs): :func:`decide` classifies the
   attempt as RetryJob does and returns a :class:`Decision` whose ``status`` is the POST script's
   exit (0 OK, 1 recoverable, 2 fatal, 3 abort DAG); :func:`check_abort_dag` may turn it into an
   abort; :func:`record` closes the attempt, bumps crab_retry and stores the cooloff deadline and
   the next attempt's parameters.
3. ``crab resubmit`` (AdjustSites on the restarted DAG): :func:`resubmit` starts a new epoch for
   the listed jobs: RRN back to 0 and new parameters; crab_retry and the history continue.

Counters (seed 003): ``dag_retry`` is DAGMan's ``$RETRY`` of the latest attempt; ``crab_retry``
the number of attempts PostJob has closed (the ``<id>.<crab_retry>`` of log names, never reset);
``rrn`` the executions in the current resubmit ``epoch`` (reset to 0 by a resubmit).  Times in
the state are real UNIX seconds; durations in :class:`Limits` and in the table are simulated
seconds, divided by ``Limits.time_scale`` (TaskConfig.time_scale) before they are waited for,
while measured wall times are multiplied by it, so a demo at ``time_scale=60`` keeps every ratio.
Job parameters (memory MB, runtime minutes) are simulated values, like TaskConfig's; whoever
enforces a runtime scales it.

Where crabtui departs from CRAB's code (crab-spec §2) or chooses between the seeds and the code:

* The retry delay is applied.  CRAB stores ``retry_delay_until`` (900 s) but PreJob looks it up
  under the wrong key, so it never waits (issue #9348).  Here the deadline is the job state's
  ``cooloff_until``: ``now + max(delay, 60 s x next $RETRY)``, the second term being PreJob's
  own cooloff sleep; a UI can count down to it.  The DAG needs ``SCRIPT DEFER 4 <s> PRE`` on every
  node for PreJob to wait by deferring (CRAB adds it only with ``CRAB_JobReleaseTimeout``).
* Memory and runtime boosts (x1.3 for 50115/195 and 60403/243) apply on every automatic retry.
  CRAB applies them only to jobs left out of a ``crab resubmit`` list; ``change_site`` it applies
  always.  A boost never lowers a request: CRAB's ``min(x * 1.3, cap)`` would cut a 10,000 MB
  (4-core) request to 7500 MB.  Parameters given to ``crab resubmit`` replace boosted values.
* ``change_site`` avoids only the site of the failed attempt, and only while another candidate
  remains that the task's pool has (:func:`choose_sites`); as in CRAB it is no blacklist.  CRAB
  counts any other site of the job; a site with no slot in the pool would leave the job idle for
  ever.
* Codes not in the table are fatal (CRAB's "neutral" default falls through to FatalError).
  CRAB's handlers for 8020/8021/8022/8028, 134 and 8001 read the job's stdout only to refine the
  message or report a corrupt file; the code stays recoverable, so the table's message stands.
* Never-resubmit guards (seed 000) apply to a recoverable failure and make it fatal: no usable
  framework job report (CRAB's code retries these; the seed says never) from a job that exited,
  the last attempt over
  24 h, all attempts of this epoch together over 36 h, more than 2 GB of memory used, and the
  retry limit.  The per-attempt wall and memory limits are the larger of the seed's value and the
  attempt's own request: CRAB's RetryJob compared with the job's RequestMemory and
  MaxWallTimeMins (defaults 2 GB and 21.5 h), and a fixed 2 GB would forbid retrying any job
  the memory boost had raised above it.  The cumulative budget restarts with each epoch, as the
  RRN does, so a resubmitted job can be retried at all.
* A job whose wrapper was killed by a signal (``$RETURN`` -S: an OOM killer, a batch system's
  SIGKILL) had no chance to write a report: it is recoverable, as CRAB's RetryJob makes any job
  without one (``check_empty_report``), and as its table makes a payload killed so (137).
* A job removed after being held is retried without a report (CRAB checks this first); jobs
  removed for memory, wall clock, disk or idle time are fatal with CRAB's codes 50660, 50664,
  50662, 50665.
* Retry limit: a recoverable failure of execution RRN >= ``max_retries`` is fatal, so a job
  runs at most ``max_retries`` times per epoch.  The default is 10 (both seeds); CRAB's code
  now ships 3.  The DAG's ``RETRY`` count must be at least as large.
* Interrupted PreJob: an attempt that was opened but never closed is reused with its RRN
  (seed 003 ``reuse_rrn``).  If that attempt's job did run (its ``job_out`` exists), PreJob must
  not call :func:`begin_attempt`: it exits 1 so that DAGMan runs POST (``$RETURN`` -1004), whose
  :func:`decide` closes the attempt, as CRAB's PreJob does.
* A resubmit epoch older than the job's is an error, not a skip: it "should never happen".
* RetryJob's "any other exception returns 0 (OK)" is not copied: errors propagate.
* The state is JSON with a fixed schema, validated on read, written by atomic replace.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from engine.atomic import write_atomically

__all__ = [
    "ACTIONS", "DEFAULT_DELAY_S", "EXIT_RETRY_POLICY", "HELD_REMOVE_REASON", "LIMIT_MEANINGS",
    "MAX_JOB_RUNTIME_AUTOMATIC_RESUBMIT", "MAX_MEMORY_AUTOMATIC_RESUBMIT", "NUM_AUTOM_JOB_RETRIES", "PRE_SKIPPED",
    "REMOVE_REASONS",
    "SCHEMA",
    "Attempt", "Decision", "JobReturnCode", "JobState", "Limits", "Params", "RetryPolicy",
    "RetryStateError", "begin_attempt", "check_abort_dag", "choose_sites", "cooloff_remaining",
    "decide", "load_job_state", "load_state", "policy_for", "record", "resubmit", "save_state", "state_path",
]


class JobReturnCode(enum.IntEnum):
    """PostJob/RetryJob exit statuses (CRAB's JOB_RETURN_CODES), wired in the DAG as
    ``RETRY ... UNLESS-EXIT 2``, ``ABORT-DAG-ON ... 3``, ``SCRIPT DEFER 4`` and ``PRE_SKIP ... 5``."""

    OK = 0
    RECOVERABLE_ERROR = 1
    FATAL_ERROR = 2
    DAG_ABORT = 3
    DEFER = 4
    DONE = 5  # PreJob only: the job had succeeded, its PostJob died before it said so (``PRE_SKIP``)


ACTIONS = {"ok": JobReturnCode.OK, "retry": JobReturnCode.RECOVERABLE_ERROR,
           "fatal": JobReturnCode.FATAL_ERROR, "abort_dag": JobReturnCode.DAG_ABORT}
"""Each :class:`Decision` action and the POST exit status that carries it to DAGMan."""

MAX_MEMORY_AUTOMATIC_RESUBMIT = 7500  # MB, CRABServer ServerUtilities
MAX_JOB_RUNTIME_AUTOMATIC_RESUBMIT = 47 * 60  # minutes, CRABServer ServerUtilities
NUM_AUTOM_JOB_RETRIES = 10
"""CRAB_NumAutomJobRetries: executions of a job per submit or resubmit (seeds 000 and 003)."""
DEFAULT_DELAY_S = 900
"""Retry delay of every table entry, and of recoverable failures the table does not name."""


@dataclass(frozen=True)
class RetryPolicy:
    """One recoverable exit code: CRAB's message, the delay before the retry (simulated
    seconds) and what the retry changes."""

    msg: str
    delay: float = DEFAULT_DELAY_S
    memory_factor: float | None = None  # next RequestMemory x this, up to 7500 MB
    runtime_factor: float | None = None  # next max runtime x this, up to 47 h
    change_site: bool = False  # avoid the failed attempt's site next time
    meaning: str = ""  # what the code means without the retry ``msg`` promises ("": ``msg`` says only that)

    @property
    def what(self) -> str:
        """What the code means, for a job that failed with it whether or not it was retried."""
        return self.meaning or self.msg


_STAGEOUT_ERROR = "Error during attempted file stageout."
_TABLE = {  # CRABServer RetryJob.EXIT_RETRY_POLICY (ee725156); every entry is recoverable
    1: RetryPolicy("Job failed w/o messages; likely a worker node issue."),
    50513: RetryPolicy("Job did not find functioning CMSSW on worker node."),
    50115: RetryPolicy("Job did not produce a FJR; will retry.", memory_factor=1.3,
                       meaning="Job did not produce a FJR."),
    137: RetryPolicy("SIGKILL; likely an unrelated batch system kill."),
    10034: RetryPolicy("Required application version not found at the site."),
    10040: RetryPolicy("Site Error: failed to generate cmsRun cfg file at runtime."),
    60403: RetryPolicy("Timeout during attempted file stageout.", runtime_factor=1.3),
    60307: RetryPolicy(_STAGEOUT_ERROR),
    60311: RetryPolicy(_STAGEOUT_ERROR),
    8028: RetryPolicy("Job failed to open local and fallback files."),
    8021: RetryPolicy("FileReadError (May be a site error).", change_site=True),
    8020: RetryPolicy("FileOpenError (Likely a site error).", change_site=True),
    8022: RetryPolicy("FatalRootError."),
    134: RetryPolicy("SIGABRT Abort (ANSI) or IOT trap (4.2 BSD) (most likely user application crashed)."),
    8001: RetryPolicy("Other CMS Exception."),
}
# A shell passes on only the low 8 bits of an exit status (8021 arrives as 85), so each code is
# also known by ``code & 0xff``, as CRAB adds them; a code listed itself keeps its own entry.
EXIT_RETRY_POLICY: dict[int, RetryPolicy] = dict(_TABLE)
for _code, _policy in _TABLE.items():
    EXIT_RETRY_POLICY.setdefault(_code & 0xFF, _policy)
del _code, _policy


def policy_for(exit_code: int) -> RetryPolicy | None:
    """The retry policy of a non-zero exit code, or None: the code is fatal."""
    return EXIT_RETRY_POLICY.get(exit_code)


HELD_REMOVE_REASON = "Removed due to job being held"
REMOVE_REASONS = (  # PeriodicRemoveReason prefix -> CRAB's fake FJR code and message
    ("Removed due to memory use", 50660,
     "Job killed by HTCondor due to excessive memory use. Will not retry it."),
    ("Removed due to wall clock limit", 50664,
     "Not retrying job due to wall clock limit (job automatically killed on the worker node)"),
    ("Removed due to disk usage", 50662,
     "Not retrying job due to excessive disk usage (job automatically killed on the worker node)"),
    ("Removed due to idle time limit", 50665,
     "Not retrying job due to excessive idle time (job automatically killed on the grid scheduler)"),
)
"""Removals by the grid job's ``periodic_remove`` (crab-spec §2.6) that are never retried."""

MEMORY_KILLED = 50660  # CRAB's fake FJR code for a job HTCondor killed over its memory
MAX_SIGNAL = 64  # DAGMan's $RETURN of a job killed by signal S is -S (the manual); its own codes are -1001 and below
PRE_SKIPPED = -1004  # DAGMan's $RETURN for a job its PRE script skipped: PreJob refused the attempt
JOB_ABORTED = -1002  # DAGMan's $RETURN for a job removed from the queue (condor_rm, periodic_remove)
LIMIT_MEANINGS = {
    50660: "Excessive memory use: removed on the worker node, or not retried after using more than allowed.",
    50664: "Wall clock time over the limit: removed on the worker node, or not retried after running longer "
           "than allowed.",
    50662: "Excessive disk usage: removed on the worker node.",
    50665: "Excessive idle time: removed from the grid scheduler.",
    PRE_SKIPPED: "Not submitted: PreJob found no site to run the job at (DAGMan's code for a job its PRE script skipped).",
    JOB_ABORTED: "Removed from the queue by hand (condor_rm, x in the UI): no job report comes back from a removed job "
                 "(DAGMan's code for a job removed).",
}
"""What CRAB's own codes for a limit mean, whichever enforced it: a removal (:data:`REMOVE_REASONS`)
or a never-resubmit guard (24 h, 36 h, 2 GB); and DAGMan's :data:`PRE_SKIPPED` and :data:`JOB_ABORTED`."""


@dataclass(frozen=True)
class Limits:
    """The never-resubmit guards (seed 000) and the time scale, with CRAB's defaults.

    Durations are simulated seconds.  ``max_attempt_wall_s`` and ``max_memory_mb`` are raised to
    the attempt's own max runtime and memory request when those are larger.
    """

    max_retries: int = NUM_AUTOM_JOB_RETRIES  # CRAB_NumAutomJobRetries: executions per epoch
    max_attempt_wall_s: float = 24 * 3600
    max_total_wall_s: float = 36 * 3600  # all attempts of the current epoch
    max_memory_mb: int = 2048
    cooloff_step_s: float = 60  # PreJob: retry k starts >= k x this after the previous PostJob
    failed_node_limit: int = -1  # CRAB_FailedNodeLimit; -1: never abort the DAG
    time_scale: float = 1.0  # simulated seconds per real second (TaskConfig.time_scale)

    def __post_init__(self) -> None:
        if not (self.time_scale > 0 and math.isfinite(self.time_scale)):
            raise ValueError(f"time_scale must be a positive number, not {self.time_scale!r}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {self.max_retries}")


@dataclass(frozen=True)
class Params:
    """What one attempt asks for: memory (MB), max runtime (minutes) and sites to avoid."""

    memory_mb: int
    runtime_min: int
    avoid_sites: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attempt:
    """One execution of a job.  ``action`` is None while the attempt is open (PreJob has run,
    PostJob has not); ``start_time``/``end_time`` are the job's run, in UNIX seconds."""

    crab_retry: int
    dag_retry: int
    rrn: int
    epoch: int
    request_memory_mb: int
    max_runtime_min: int
    avoid_sites: tuple[str, ...] = ()
    site: str | None = None
    exit_code: int | None = None
    start_time: float | None = None
    end_time: float | None = None
    action: str | None = None
    reason: str = ""

    @property
    def params(self) -> Params:
        return Params(self.request_memory_mb, self.max_runtime_min, self.avoid_sites)

    def wall_s(self) -> float:
        """Real seconds the job ran (0 if it never started)."""
        if self.start_time is None or self.end_time is None:
            return 0.0
        return max(0.0, self.end_time - self.start_time)


@dataclass(frozen=True)
class JobState:
    """The retry counters and history of one job id; what ``retry_state/job.<id>.json`` holds.

    ``cooloff_until`` (UNIX seconds) is when the next attempt may start; ``next`` its parameters
    (None: the task's current values)."""

    job_id: str
    dag_retry: int = 0
    crab_retry: int = 0
    rrn: int = 0
    epoch: int = 0
    cooloff_until: float | None = None
    next: Params | None = None
    attempts: tuple[Attempt, ...] = ()

    @property
    def open_attempt(self) -> Attempt | None:
        if self.attempts and self.attempts[-1].action is None:
            return self.attempts[-1]
        return None


@dataclass(frozen=True)
class Decision:
    """What PostJob does with an attempt.

    ``delay`` is real seconds before the next attempt may start and ``cooloff_until`` the same
    as a UNIX time; ``next`` is the retry's parameters; ``attempt`` the closed attempt that
    :func:`record` stores (None when there was no open attempt to close)."""

    action: str
    reason: str
    exit_code: int | None
    attempt: Attempt | None
    delay: float = 0.0
    cooloff_until: float | None = None
    next: Params | None = None

    @property
    def status(self) -> int:
        """The POST script's exit status for DAGMan."""
        return int(ACTIONS[self.action])


class RetryStateError(Exception):
    """A job state that cannot be read or a step that contradicts it; says which file and field."""


# --- the three steps --------------------------------------------------------------------------

def cooloff_remaining(state: JobState, now: float) -> float:
    """Real seconds PreJob must still wait before :func:`begin_attempt` (0: go)."""
    return 0.0 if state.cooloff_until is None else max(0.0, state.cooloff_until - now)


def begin_attempt(state: JobState, *, dag_retry: int, task_params: Params) -> JobState:
    """PreJob: open the next attempt with ``state.next`` (or the task's current parameters) and
    RRN + 1.  An attempt still open is one whose PreJob was interrupted: it is reused, same RRN."""
    current = state.open_attempt
    if current is not None:
        reused = dataclasses.replace(current, dag_retry=dag_retry)
        return dataclasses.replace(state, dag_retry=dag_retry, attempts=state.attempts[:-1] + (reused,))
    p = state.next or task_params
    rrn = state.rrn + 1
    attempt = Attempt(crab_retry=state.crab_retry, dag_retry=dag_retry, rrn=rrn, epoch=state.epoch,
                      request_memory_mb=p.memory_mb, max_runtime_min=p.runtime_min,
                      avoid_sites=tuple(p.avoid_sites))
    return dataclasses.replace(state, dag_retry=dag_retry, rrn=rrn, cooloff_until=None, next=None,
                               attempts=state.attempts + (attempt,))


def decide(exit_code: int, report: Mapping[str, Any] | None, state: JobState, limits: Limits,
           now: float, *, job_ad: Mapping[str, Any] | None = None) -> Decision:
    """Classify the open attempt as CRAB's RetryJob and PostJob do.

    ``exit_code`` is DAGMan's ``$RETURN`` (the job's exit status, -1004 when PRE failed);
    ``report`` the framework job report (``jobReport.json.<id>``), None if there is none;
    ``job_ad`` the finished job's ClassAd attributes: RemoveReason, HoldReason,
    JobCurrentStartDate, LastVacateTime (a run a hold or eviction ended), CompletionDate or
    EnteredCurrentStatus, JOBGLIDEIN_CMSSite or
    MATCH_GLIDEIN_CMSSite, ResidentSetSize (KB).  Order: removal reason, report, exit code,
    then the guards and the RRN limit on anything recoverable.
    """
    current = state.open_attempt
    if current is None:  # PostJob without PreJob: "should never happen", so never retry
        return Decision("fatal", f"Job {state.job_id}: no open attempt to classify (PreJob did not "
                        "run for it); not retrying.", exit_code, None)
    ad = job_ad or {}
    # HTCondor transfers no output of a removed job: what its wrapper wrote at SIGTERM stays on the
    # worker node, so its exit code never reaches PostJob.  Only where the job ran in the task
    # directory (the embedded engine) is that report here, and then it tells the site alone.
    usable = _usable(report) and exit_code != JOB_ABORTED
    site = ((report.get("executed_site") if _usable(report) else None) or ad.get("JOBGLIDEIN_CMSSite")
            or ad.get("MATCH_GLIDEIN_CMSSite"))
    start = _number(ad.get("JobCurrentStartDate")) or _number(ad.get("JobStartDate"))
    end = (_number(ad.get("LastVacateTime")) or _number(ad.get("CompletionDate"))
           or _number(ad.get("EnteredCurrentStatus")) or now)
    attempt = dataclasses.replace(current, site=str(site) if site else None, start_time=start, end_time=end)

    def close(action: str, code: int | None, reason: str, **retry: Any) -> Decision:
        done = dataclasses.replace(attempt, exit_code=code, action=action, reason=reason)
        return Decision(action, reason, code, done, **retry)

    removed = str(ad.get("RemoveReason") or "")
    code = int(report["exitCode"]) if usable else exit_code
    if removed.startswith(HELD_REMOVE_REASON):  # no exit code: the job did not end (a report left is no payload's)
        code = None
        hold = ad.get("HoldReason") or ad.get("LastHoldReason") or "Unknown"
        policy = RetryPolicy(f"Will retry held job; last hold reason: {hold}")
    else:
        for prefix, fake_code, msg in REMOVE_REASONS:
            if removed.startswith(prefix):
                if fake_code == MEMORY_KILLED:
                    rss_kb = _number(ad.get("ResidentSetSize"))
                    return close("fatal", fake_code, _memory_killed(None if rss_kb is None else int(rss_kb) // 1000, attempt))
                return close("fatal", fake_code, msg + _removal_detail(fake_code, attempt, limits))
        if not usable and not -MAX_SIGNAL <= exit_code < 0:  # DAGMan's -100x codes: removed (-1002), skipped ...
            return close("fatal", exit_code, "Job did not produce a usable framework job report.")
        if not usable:  # $RETURN -S: the wrapper itself was killed by signal S (say the node's OOM killer)
            policy = RetryPolicy(f"Job did not produce a usable framework job report (its wrapper was killed "
                                 f"by signal {-exit_code}).")
        elif code == 0 and exit_code in (0, PRE_SKIPPED):
            return close("ok", 0, "Job and stageout wrappers finished successfully (exit code 0).")
        elif code == 0:
            code = exit_code
            policy = RetryPolicy(f"Payload job was successful, but wrapper exited with non-zero status "
                                 f"{exit_code}" + (" (stageout failure)?" if exit_code > 0 else ""))
        else:
            found = policy_for(code)
            if code == MEMORY_KILLED:  # the job's report says HTCondor killed it for its memory
                return close("fatal", code, _memory_killed(_peak_memory_mb(report, ad), attempt))
            if found is None:
                msg = str(report.get("exitMsg", "UNKNOWN")).replace("\n", "\n  ")
                return close("fatal", code,
                             f"Job wrapper finished with exit code {code}.\nExit message:\n  {msg}")
            policy = found

    guard = _guard(attempt, state, report if usable else None, ad, limits)
    if guard is not None:
        fake_code, msg = guard
        return close("fatal", fake_code, f"{policy.msg} {msg}")
    if attempt.rrn >= limits.max_retries:
        return close("fatal", code, f"{policy.msg} This is job retry number {attempt.rrn}. The maximum allowed "
                     f"number of retries is {limits.max_retries}. The retry handler indicated this was a recoverable "
                     "error, but the maximum number of retries was already hit. DAGMan will not retry.")
    delay = max(policy.delay, limits.cooloff_step_s * (attempt.dag_retry + 1)) / limits.time_scale
    return close("retry", code, policy.msg, delay=delay, cooloff_until=now + delay,
                 next=_next_params(attempt, policy))


def _memory_killed(used_mb: float | None, attempt: Attempt) -> str:
    """RetryJob's ``check_memory_report`` message for a job HTCondor killed over its memory."""
    used = "Unknown" if used_mb is None else f"{used_mb:.0f}"
    return (f"Job killed by HTCondor due to excessive memory use ({used} used vs. {attempt.request_memory_mb} "
            "requested) Will not retry it.")


def _removal_detail(code: int, attempt: Attempt, limits: Limits) -> str:
    """The line RetryJob's ``check_cpu_report`` adds to a removal for the wall clock limit: how
    long the run lasted against its limit, in seconds and as ``datetime.timedelta`` prints them."""
    if code != 50664:
        return ""
    lasted, most = int(attempt.wall_s() * limits.time_scale), attempt.max_runtime_min * 60
    return f"\nJobs lasted {lasted} seconds ({timedelta(seconds=lasted)}) vs. {most} ({timedelta(seconds=most)}) MAX"


def check_abort_dag(decision: Decision, ok_nodes: int, fatal_nodes: int, limits: Limits) -> Decision:
    """PostJob's ``check_abort_dag``: with ``failed_node_limit`` set, once more than that many
    nodes have ended (OK or fatal, this one included) and fatal ones outnumber OK ones, every
    PostJob aborts the DAG, whatever its own job did."""
    if limits.failed_node_limit < 0 or decision.action == "abort_dag":
        return decision
    if ok_nodes + fatal_nodes <= limits.failed_node_limit or fatal_nodes <= ok_nodes:
        return decision
    reason = (f"There are {fatal_nodes} (fatal) failed nodes and {ok_nodes} successful nodes, adding up to "
              f"more than the limit of {limits.failed_node_limit}; failures outnumber successes. Will "
              f"abort the whole DAG.")
    attempt = decision.attempt and dataclasses.replace(decision.attempt, action="abort_dag", reason=reason)
    return Decision("abort_dag", reason, decision.exit_code, attempt)


def record(state: JobState, decision: Decision) -> JobState:
    """PostJob: close the open attempt with ``decision``; crab_retry + 1; store the cooloff
    deadline and the next attempt's parameters."""
    done = decision.attempt
    if done is None:
        return state
    current = state.open_attempt
    if current is None or current.crab_retry != done.crab_retry:
        raise RetryStateError(f"job {state.job_id}: the decision is for attempt {done.crab_retry}, but the "
                              f"open attempt is {current.crab_retry if current else 'none'}")
    return dataclasses.replace(state, crab_retry=state.crab_retry + 1, cooloff_until=decision.cooloff_until,
                               next=decision.next, attempts=state.attempts[:-1] + (done,))


def resubmit(state: JobState, epoch: int, params: Params | None = None) -> JobState:
    """``crab resubmit`` (AdjustSites ``resetRRN``): enter resubmit ``epoch`` with RRN 0 and
    ``params`` (None: the task's values as the resubmit edited them).  Applying the same epoch
    again changes nothing, so a restarted DAG may repeat it."""
    if epoch == state.epoch:
        return state
    if epoch < state.epoch:
        raise RetryStateError(f"job {state.job_id}: resubmit epoch {epoch} is older than the job's epoch "
                              f"{state.epoch}; the resubmit record or the job state is stale")
    if state.open_attempt is not None:
        raise RetryStateError(f"job {state.job_id}: cannot resubmit while attempt "
                              f"{state.open_attempt.crab_retry} is running; only failed jobs are resubmitted")
    return dataclasses.replace(state, rrn=0, epoch=epoch, cooloff_until=None, next=params)


def choose_sites(candidates: Iterable[str], avoid: Iterable[str], pool: Iterable[str] | None = None) -> list[str]:
    """The sorted sites an attempt may run at: ``candidates`` without ``avoid``, unless that
    leaves no site the pool has (CRAB drops the failed site only if another available site
    remains; ``pool`` is the sites the task's pool has, None if unknown: every site counts)."""
    sites = set(candidates)
    rest = sites - set(avoid)
    if pool is not None:
        rest_in_pool = rest & set(pool)
        return sorted(rest) if rest_in_pool else sorted(sites)
    return sorted(rest) or sorted(sites)


# --- helpers ----------------------------------------------------------------------------------

def _usable(report: Mapping[str, Any] | None) -> bool:
    """A report is usable if it is a non-empty mapping with an integer ``exitCode``."""
    if not isinstance(report, Mapping) or isinstance(report.get("exitCode"), bool):
        return False
    try:
        int(report["exitCode"])
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _number(value: Any) -> float | None:
    """A positive finite number from a ClassAd or report value, else None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 and math.isfinite(number) else None


def _peak_memory_mb(report: Mapping[str, Any] | None, ad: Mapping[str, Any]) -> float | None:
    """cmsRun's PeakValueRss (MB) from the report, else the job's ResidentSetSize (KB)."""
    node: Any = report
    for key in ("steps", "cmsRun", "performance", "memory", "PeakValueRss"):
        node = node.get(key) if isinstance(node, Mapping) else None
    peak = _number(node)
    if peak is not None:
        return peak
    rss_kb = _number(ad.get("ResidentSetSize"))
    return None if rss_kb is None else rss_kb / 1024


def _guard(attempt: Attempt, state: JobState, report: Mapping[str, Any] | None,
           ad: Mapping[str, Any], limits: Limits) -> tuple[int, str] | None:
    """The first never-resubmit guard the attempt trips, as (CRAB's fake FJR code, message)."""
    scale = limits.time_scale
    wall = attempt.wall_s() * scale
    if wall > max(limits.max_attempt_wall_s, attempt.max_runtime_min * 60):
        return 50664, f"Not retrying a long running job (job ran for {wall / 3600:.1f} hours)."
    total = wall + scale * sum(a.wall_s() for a in state.attempts[:-1] if a.epoch == attempt.epoch)
    if total > limits.max_total_wall_s:
        return 50664, (f"Not retrying a job because the integrated time (across all retries) is "
                       f"{total / 3600:.1f} hours.")
    peak = _peak_memory_mb(report, ad)
    if peak is not None and peak > max(limits.max_memory_mb, attempt.request_memory_mb):
        return 50660, f"Not retrying job due to excessive memory use ({peak:.0f} MB)."
    return None


def _next_params(attempt: Attempt, policy: RetryPolicy) -> Params:
    """The retry's parameters: the attempt's, boosted as the policy says; never lowered."""
    memory, runtime = attempt.request_memory_mb, attempt.max_runtime_min
    if policy.memory_factor:
        memory = max(memory, min(int(memory * policy.memory_factor), MAX_MEMORY_AUTOMATIC_RESUBMIT))
    if policy.runtime_factor:
        runtime = max(runtime, min(int(runtime * policy.runtime_factor), MAX_JOB_RUNTIME_AUTOMATIC_RESUBMIT))
    avoid = (attempt.site,) if policy.change_site and attempt.site else ()
    return Params(memory, runtime, avoid)


# --- the file ---------------------------------------------------------------------------------

SCHEMA = "crabtui.retry_state/1"
"""The ``schema`` value of a job state file; a change of layout gets a new number."""


def state_path(directory: str | os.PathLike[str], job_id: str) -> str:
    """Where a job's state lives: one file per job, so concurrent PreJobs and PostJobs of
    different jobs never write the same file."""
    return os.path.join(directory, "retry_state", f"job.{job_id}.json")


def load_job_state(task_dir: str, job_id: str) -> JobState:
    """Job ``job_id``'s state in ``task_dir``; a fresh one before its first PreJob."""
    path = state_path(task_dir, job_id)
    return load_state(path) if os.path.exists(path) else JobState(job_id)


def save_state(path: str | os.PathLike[str], state: JobState) -> None:
    """Write ``state`` durably: atomically (:func:`engine.atomic.write_atomically`), then an
    fsync of the directory so the rename survives a crash; readers see the old or the new state,
    never a torn one.  Each job's state has one writer at a time (PreJob, PostJob, or the worker
    resubmitting a job that is not running)."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    write_atomically(path, json.dumps(_to_json(state), indent=1, allow_nan=False) + "\n")
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load_state(path: str | os.PathLike[str]) -> JobState:
    """Read and validate a job state file.  A missing file raises FileNotFoundError (a job with
    no attempt yet: start from ``JobState(job_id)``); anything malformed raises
    :class:`RetryStateError` naming the file and the field."""
    path = os.fspath(path)

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a number JSON allows")

    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f, parse_constant=no_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RetryStateError(f"{path}: not valid JSON: {exc}") from None
    return _from_json(data, path)


def _to_json(state: JobState) -> dict[str, Any]:
    data = dataclasses.asdict(state)  # tuples become lists
    return {"schema": SCHEMA, **data}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_KINDS = {  # kind -> (test, what the value must be)
    "count": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "positive": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "id": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "text": (lambda v: isinstance(v, str), "a string"),
    "site?": (lambda v: v is None or (isinstance(v, str) and v != ""), "a site name or null"),
    "int?": (lambda v: v is None or _is_int(v), "an integer or null"),
    "time?": (lambda v: v is None or ((_is_int(v) or isinstance(v, float)) and 0 <= v < math.inf),
              "a UNIX time (a number >= 0) or null"),
    "action?": (lambda v: v is None or (isinstance(v, str) and v in ACTIONS),
                f"one of {', '.join(map(json.dumps, ACTIONS))} or null"),
    "sites": (lambda v: isinstance(v, list) and all(isinstance(s, str) and s for s in v),
              "a list of site names"),
}


_STATE_KINDS = {"job_id": "id", "dag_retry": "count", "crab_retry": "count", "rrn": "count",
                "epoch": "count", "cooloff_until": "time?", "next": "params?", "attempts": "attempts"}
_PARAMS_KINDS = {"memory_mb": "positive", "runtime_min": "positive", "avoid_sites": "sites"}
_ATTEMPT_KINDS = {"crab_retry": "count", "dag_retry": "count", "rrn": "count", "epoch": "count",
                  "request_memory_mb": "positive", "max_runtime_min": "positive", "avoid_sites": "sites",
                  "site": "site?", "exit_code": "int?", "start_time": "time?", "end_time": "time?",
                  "action": "action?", "reason": "text"}


def _fields(data: Any, kinds: Mapping[str, str], where: str, path: str) -> dict[str, Any]:
    """Check that ``data`` is an object with exactly ``kinds``' keys; return the simple values
    checked, and the others ("params?", "attempts") untouched for the caller."""
    def fail(message: str) -> RetryStateError:
        return RetryStateError(f"{path}: {message}")

    if not isinstance(data, dict):
        raise fail(f"{where or 'the file'} must be a JSON object, not {_short(data)}")
    prefix = f"{where}." if where else ""
    unknown = sorted(set(data) - set(kinds))
    if unknown:
        raise fail(f"field {prefix}{unknown[0]} is not part of schema {SCHEMA}")
    out = {}
    for name, kind in kinds.items():
        if name not in data:
            raise fail(f"field {prefix}{name} is missing")
        value = data[name]
        if kind in ("params?", "attempts"):
            out[name] = value
            continue
        test, what = _KINDS[kind]
        if not test(value):
            raise fail(f"field {prefix}{name} must be {what}, not {_short(value)}")
        out[name] = tuple(value) if kind == "sites" else value
    return out


def _from_json(data: Any, path: str) -> JobState:
    if not isinstance(data, dict):
        raise RetryStateError(f"{path}: the file must be a JSON object, not {_short(data)}")
    if data.get("schema") != SCHEMA:
        raise RetryStateError(f"{path}: field schema must be {json.dumps(SCHEMA)}, not "
                              f"{_short(data.get('schema'))}")
    values = _fields({k: v for k, v in data.items() if k != "schema"}, _STATE_KINDS, "", path)
    if values["next"] is not None:
        values["next"] = Params(**_fields(values["next"], _PARAMS_KINDS, "next", path))
    if not isinstance(values["attempts"], list):
        raise RetryStateError(f"{path}: field attempts must be a list, not {_short(values['attempts'])}")
    attempts = []
    for i, item in enumerate(values["attempts"]):
        where = f"attempts[{i}]"
        attempt = Attempt(**_fields(item, _ATTEMPT_KINDS, where, path))
        if attempt.crab_retry != i:
            raise RetryStateError(f"{path}: field {where}.crab_retry must be {i} (its position), "
                                  f"not {attempt.crab_retry}")
        if attempt.action is None and i != len(values["attempts"]) - 1:
            raise RetryStateError(f"{path}: field {where}.action is null (open) but only the last "
                                  f"attempt may be open")
        attempts.append(attempt)
    values["attempts"] = tuple(attempts)
    state = JobState(**values)
    closed = len(attempts) - (state.open_attempt is not None)
    if state.crab_retry != closed:
        raise RetryStateError(f"{path}: field crab_retry must be {closed} (the closed attempts), "
                              f"not {state.crab_retry}")
    return state


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
