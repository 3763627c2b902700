"""``crabtui task status`` laid out as ``crab status`` prints it (CRABClient ``Commands/status.py``, crab-spec §5).

Pure functions: a task's facts and its jobs (:class:`engine.crab.client.status.JobView`) and the time
``now`` in, lines out.  What is CRAB's, in CRAB's order and formats: the task header, ``Status on
the scheduler``, the jobs status summary with its percentages, the Error Summary (with
``--verboseErrors`` the messages), the ``--long`` table, the "Summary of run jobs" with its
warnings, the ``--summary`` site table and the ``--sort`` listings; ``--jobids`` with CRAB's range
syntax and messages.  Where crabtui differs, on purpose:

* A job cooling off before its next try shows ``cooloff`` and the time left (``cooloff 4:59``)
  where CRAB shows ``toRetry``; the summary line of cooloff jobs ends with the nearest retry.
* Each exit code of the Error Summary says what the retry policy makes of it: the message of
  :data:`engine.crab.ap.retry_policy.EXIT_RETRY_POLICY`, the message of the removal codes CRAB
  assigns itself, or ``unknown, fatal``.  ``--verboseErrors`` lists the jobs of each message, in
  the ``--jobids`` syntax (``3,7-9``), after CRAB's "for example, job N".
* The run-job statistics are computed as CRAB means them: minimum memory and runtime over the
  jobs that count (CRAB's minimum memory compares runtimes, and its minimum runtime includes
  running jobs), and the CPU average is total CPU over total runtime of the jobs with a known CPU
  time.  Ties in ``--sort`` listings go by job id in CRAB's order, not as strings.
* No Dashboard or Task URL lines (there is no server); ``CRAB project directory`` is the task
  directory.  Commands named in messages are crabtui's.  The publication line is CRAB's when
  ``Data.publication`` is off; crabtui publishes nothing, so with it on the line says that.
* ``Status on the CRAB server`` says SUBMITTED for a task whose DAG has ended, as CRAB's task table
  does; only ``Status on the scheduler`` says COMPLETED or FAILED (the task list shows the task
  table's crabtui status, COMPLETED or FAILED).
* The Error Summary says what each code means for jobs that failed for good
  (:func:`final_meaning`): no "will retry", and a limit's code (50664, 50660) says which limit
  without saying who enforced it (a removal on the worker node, or a never-resubmit guard).
* Automatic splitting: the probes' summary is printed once, with probes that ended as
  ``no output`` (CRAB prints it twice with ``--long``, and relabels only there).
* The ``--summary`` site table lists every site of the task, also those no job ran at, with a
  last column ``Blacklisted`` (no, or why: globally blacklisted, not in whitelist, blacklisted,
  automatic) and a line per site saying why it is or is not blacklisted, with the automatic
  blacklist's counts and thresholds (:mod:`engine.crab.ap.sites`).  The task's warnings are those
  its submission found (skipped blocks), then the site lists' (CRAB's SiteInfoResolver wording),
  for the lists as they are now.
* Runtimes are simulated seconds (``Debug.timeScale``), as the job reports give them; the cooloff
  countdown is real time, as long as the user will wait.
* Automatic splitting: CRAB's summaries, relabels (:func:`shown_state`) and preamble, with the
  paths of the task's PreDAG logs (``automatic_splitting/predag.<N>.txt``) where CRAB links its
  webdir, and the throughput lines made from the probes' estimate
  (:class:`engine.crab.client.status.AutomaticView`) rather than copied from lines 2, 5 and 6 of the log.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from engine.crab.ap.sites import SiteUsability
from engine.crab.client.status import AutomaticView, JobView, job_sort_key

SORT_KEYS = ("state", "site", "runtime", "memory", "cpu", "retries", "waste", "exitcode")
TEMPORARY_STATUSES = ("WAITING", "NEW", "HOLDING", "QUEUED", "TAPERECALL", "KILLRECALL")  # ServerUtilities
DEFAULT_MAX_MEMORY_MB = 2000  # CRABClient parametersMapping maxmemory default: no warning at or below it
POSTPROCESSING = 90000
_ROW = "%4s %-12s %-20s %10s %9s %5s %8s %9s %10s %14s"
_SITE_ROW = "%-20s %10s %10s %10s %10s %10s %10s"
_METRIC_EXCLUDED = ("idle", "running", "unsubmitted")
NO_OUTPUT = "no output"  # an automatic task's probe that ended: it measured, its output is not kept
RESCHEDULED = "rescheduled"  # an automatic task's failed processing job: a tail job redoes its lumis
RESCHEDULED_AS_TAILS = "rescheduled as tail jobs"  # the same in the summary
AUTOMATIC_FAQ = "https://twiki.cern.ch/twiki/bin/view/CMSPublic/CRAB3FAQ#What_is_the_Automatic_splitting"


class StatusOptionError(ValueError):
    """Options CRAB refuses; the message is CRAB's."""


@dataclass(frozen=True)
class TaskInfo:
    """The task's row in the task table and what its DAG says of it."""

    name: str
    task_dir: str
    status: str  # on the CRAB server (the task table)
    command: str = ""
    message: str = ""
    scheduler_status: str | None = None  # None: not on the scheduler yet
    num_cores: int = 1
    max_memory_mb: int | None = None
    max_runtime_min: int | None = None
    warnings: tuple[str, ...] = ()  # CRAB's task warnings (the submission's, the site lists')
    publication: bool | None = None  # Data.publication (None: not recorded, no publication line)
    sites: tuple[SiteUsability, ...] = ()  # every site of the task and why it is or is not blacklisted
    automatic: AutomaticView | None = None  # automatic splitting's stages (None: another splitting)


@dataclass(frozen=True)
class Options:
    long: bool = False
    sort: str | None = None
    jobids: str | None = None
    summary: bool = False
    verbose_errors: bool = False
    again: str = "crabtui"  # how the hints spell the next command: with this one's --state-dir and --backend


# --- options --------------------------------------------------------------------------------

def check_options(options: Options, automatic: bool = False) -> list[str] | None:
    """CRAB's ``validateOptions``; returns the ``--jobids`` asked for (None: all)."""
    if options.sort is not None and options.sort not in SORT_KEYS:
        raise StatusOptionError(f"Only the following values are accepted for --sort option: {list(SORT_KEYS)}")
    ids = parse_jobids(options.jobids, ranges=not automatic) if options.jobids else None
    if ids and not (options.long or options.sort):
        raise StatusOptionError("Parameter --jobids can only be used in combination with --long or --sort options.")
    return ids


def parse_jobids(text: str, ranges: bool = True) -> list[str]:
    """CRAB's ``validateJobids``: ``1,3-5`` -> ``['1', '3', '4', '5']`` (CRAB's order, no repeats).
    Without ``ranges`` (an automatic task, whose ids have dashes) ``1,3-5`` is jobs 1 and 3-5; the
    rule is :func:`engine.crab.client.resubmit.expand_job_ids`, as for ``task resubmit --jobids``."""
    from engine.crab.client.resubmit import ResubmitError, expand_job_ids, parse_job_ids

    try:
        ids = expand_job_ids(parse_job_ids(text), ranges=ranges)
    except ResubmitError as e:
        raise StatusOptionError(str(e)) from None
    return sorted(ids, key=job_sort_key)


def check_jobids(wanted: Iterable[str], jobs: Sequence[JobView]) -> None:
    """CRAB's ``checkUserJobids``."""
    known = {j.id for j in jobs}
    missing = [job for job in wanted if job not in known]
    if missing:
        raise StatusOptionError(f"The following jobids were not found in the task: {missing}")


def compress_ids(ids: Iterable[str]) -> str:
    """Job ids in the ``--jobids`` syntax: ``1,3-5``."""
    ids = list(ids)
    numbers = sorted({int(i) for i in ids if i.isdigit()})
    parts, others = [], sorted((i for i in ids if not i.isdigit()), key=job_sort_key)
    start = prev = None
    for n in numbers + [None]:
        if n is not None and prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    return ",".join(parts + others)


# --- formatting helpers -----------------------------------------------------------------------

def to_hms(seconds: float) -> str:
    """CRAB's ``to_hms``: whole seconds as ``H:MM:SS``."""
    seconds = int(seconds)
    return "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


def countdown(seconds: float) -> str:
    """Time left as ``M:SS``, or ``H:MM:SS`` from an hour."""
    seconds = max(0, int(seconds + 0.999))
    return to_hms(seconds) if seconds >= 3600 else "%d:%02d" % (seconds // 60, seconds % 60)


def percentage(value: int, total: int) -> str:
    """CRAB's ``_percentageString``: ``%5.1f%% (%Nd/%Nd)`` with N the digits of the larger number."""
    n = len(str(max(value, total)))
    return f"{value * 100 / total:5.1f}% ({value:{n}d}/{total:{n}d})"


def final_meaning(code: int) -> str:
    """What an exit code means for jobs that failed with it for good (the Error Summary's): the
    retry policy's description without the retry it promises, a limit's code (50664, 50660, ...)
    without saying which of the removal or the never-resubmit guard enforced it."""
    from engine.crab.ap.retry_policy import LIMIT_MEANINGS, policy_for  # only when jobs failed

    if code in LIMIT_MEANINGS:
        return LIMIT_MEANINGS[code]
    policy = policy_for(code)
    return policy.what if policy is not None else exit_code_meaning(code)


def exit_code_meaning(code: int) -> str:
    """What the retry policy makes of an exit code; a permanent stage-out failure's code says so."""
    from engine.crab.ap.retry_policy import LIMIT_MEANINGS, REMOVE_REASONS, policy_for  # only when jobs failed
    from engine.crab.ap.stageout import PERMANENT

    policy = policy_for(code)
    if policy is not None:
        return policy.msg
    for _, fake_code, msg in REMOVE_REASONS:
        if code == fake_code:
            return msg
    if code in PERMANENT:
        return f"permanent stageout failure: {PERMANENT[code]}"
    return LIMIT_MEANINGS.get(code, "unknown, fatal")


def state_label(job: JobView, now: float) -> str:
    """The job's state as the table shows it: a cooloff job with the time left."""
    if job.state == "cooloff" and job.cooloff_until is not None:
        return f"cooloff {countdown(job.cooloff_until - now)}"
    return job.state


@functools.cache
def _stage_of() -> Callable[[str], str]:
    """:func:`engine.crab.taskworker.automatic.stage_of`, imported when an automatic task first needs it: it
    pulls in the splitting modules, which the status of any other task does without."""
    from engine.crab.taskworker.automatic import stage_of

    return stage_of


def job_stage(job_id: str) -> str:
    """``probe``, ``processing`` or ``tail``: an automatic task's stage of a job, from its id."""
    return _stage_of()(job_id)


def shown_state(job: JobView, automatic: bool) -> str:
    """The job's state as ``crab status`` names it (``translateJobStatus``), in the CLI and the UI:
    in an automatic task a probe that ended, finished or failed, is ``no output`` (it only
    measured), and a failed processing job is ``rescheduled`` (a tail stage processes its lumis
    again).  Every other job keeps its state (cooloff stays cooloff, see the module's notes)."""
    state = job.state
    if automatic and state in ("finished", "failed"):
        stage = job_stage(job.id)
        if stage == "probe":
            return NO_OUTPUT
        if stage == "processing" and state == "failed":
            return RESCHEDULED
    return state


# --- the parts --------------------------------------------------------------------------------

def server_status(status: str, scheduler_status: str | None) -> str:
    """The task's status as CRAB's task table has it: a task whose DAG has ended stays SUBMITTED
    there; COMPLETED and FAILED are the scheduler's to say."""
    return "SUBMITTED" if status in ("COMPLETED", "FAILED") and scheduler_status is not None else status


def crab_status(task, view, scheduler_status: str | None) -> dict:
    """The dictionary ``crab status`` returns to a script (``makeStatusReturnDict``), for ``task``
    (its task table row), ``view`` (:func:`engine.crab.client.status.task_view`) and the scheduler
    status: ``status`` is the scheduler's once the task has a DAG there, the server's before;
    ``jobs`` is the status cache, by job id; ``taskWarningMsg`` is the warnings as CRAB's task table
    column holds them, a Python list written out."""
    per_status: dict[str, int] = {}
    for j in view.jobs:
        per_status[j.state] = per_status.get(j.state, 0) + 1
    db_status = server_status(task.status, scheduler_status)
    return {"status": scheduler_status or db_status, "dbStatus": db_status, "dagStatus": scheduler_status or "",
            "username": task.user, "command": task.command,
            "taskFailureMsg": task.message if "FAILED" in task.status else "",
            "taskWarningMsg": repr(list(view.warnings + task.kill_warnings)),
            "statusFailureMsg": "" if scheduler_status else
            "The task has not been submitted to the Grid scheduler yet. Not printing job information.",
            "publicationEnabled": view.publication, "jobsPerStatus": per_status,
            "jobList": [[j.state, j.id] for j in view.jobs], "jobs": {j.id: j.status_cache() for j in view.jobs},
            "publication": {}, "publicationFailures": {}}


def header_lines(task: TaskInfo) -> list[str]:
    """``printTaskInfo`` and ``Status on the scheduler``."""
    status = task.status
    if "FAILED" not in status and status in TEMPORARY_STATUSES and task.command:
        status = f"{status} on command {task.command}"
    status = server_status(status, task.scheduler_status)
    lines = [f"CRAB project directory:\t\t{task.task_dir}", f"Task name:\t\t\t{task.name}",
             f"Status on the CRAB server:\t{status}"]
    if task.message:
        if "FAILED" in status:
            lines.append("Failure message from server:\t" + task.message.replace("\n", "\n\t\t\t\t"))
        else:
            lines.append("Message:\t\t\t" + task.message.replace("\n", "\n\t\t\t\t"))
    lines += ["Warning:\t\t\t" + warning.replace("\n", "\n\t\t\t\t") for warning in task.warnings]
    if task.scheduler_status is None:
        lines.append("The task has not been submitted to the Grid scheduler yet. Not printing job information.")
    else:
        lines.append(f"Status on the scheduler:\t{task.scheduler_status}")
    return lines


def _count(jobs: Iterable[JobView]) -> tuple[dict[str, int], list[float]]:
    """Jobs per state, and when the jobs cooling off retry."""
    counts: dict[str, int] = {}
    deadlines = []
    for j in jobs:
        counts[j.state] = counts.get(j.state, 0) + 1
        if j.state == "cooloff" and j.cooloff_until is not None:
            deadlines.append(j.cooloff_until)
    return counts, deadlines


def _relabel(counts: dict[str, int], state: str, label: str) -> None:
    """CRAB's ``terminate``: the jobs in ``state`` counted as ``label``."""
    if state in counts:
        counts[label] = counts.get(label, 0) + counts.pop(state)


def _summary(kind: str, counts: dict[str, int], deadlines: list[float], now: float) -> list[str]:
    """``printSummaryForJobType``: ``<kind> status:`` and a line per state, alphabetically; the
    cooloff line ends with the nearest retry."""
    total = sum(counts.values())
    lines = []
    for i, state in enumerate(sorted(counts)):
        text = f"{state:<13}\t\t{percentage(counts[state], total)}"
        if state == "cooloff" and deadlines:
            text += f"\t(next retry in {countdown(min(deadlines) - now)})"
        lines += ["", f"{kind + ' status:':32}{text}"] if i == 0 else [f"\t\t\t\t{text}"]
    return lines


def publication_lines(task: TaskInfo) -> list[str]:
    """``printPublication``: CRAB's line when publication is off; crabtui publishes no output
    dataset, so with it on the line says so instead of waiting for publication information."""
    if task.publication is None:
        return []
    if not task.publication:
        return ["", "No publication information (publication has been disabled in the CRAB configuration file)"]
    return ["", "No publication information (crabtui publishes no output dataset: Data.publication has no effect)"]


def summary_lines(jobs: Sequence[JobView], now: float) -> list[str]:
    """``printOverview`` of a task without automatic splitting: one line per state."""
    return _summary("Jobs", *_count(jobs), now) if jobs else []


def automatic_summary_lines(jobs: Sequence[JobView], now: float, automatic: AutomaticView,
                            long: bool = False) -> list[str]:
    """``printOverview`` of an automatic task: the preamble with the PreDAG logs, the probes'
    summary (ended probes as ``no output``, as the table shows them) and throughput estimate, then
    with ``long`` a summary of the processing and of the tail jobs (failed processing jobs
    relabelled as the table shows them), without it one of the processing jobs with the tail jobs
    counted in and the failed ones left out (they are the tails' work), or, while there are no
    tail jobs, counted as ``rescheduled as tail jobs``."""
    by_stage: dict[str, list[JobView]] = {"probe": [], "processing": [], "tail": []}
    for j in jobs:
        by_stage[job_stage(j.id)].append(j)
    probes, probe_deadlines = _count(by_stage["probe"])
    main, main_deadlines = _count(by_stage["processing"])
    tails, tail_deadlines = _count(by_stage["tail"])
    _relabel(probes, "failed", NO_OUTPUT)  # an ended probe only measured: no output, whatever the mode
    _relabel(probes, "finished", NO_OUTPUT)
    if long:
        if probes:
            _relabel(main, "failed", RESCHEDULED_AS_TAILS)
        parts = [("Main jobs", main, main_deadlines), ("Tail jobs", tails, tail_deadlines)]
    else:
        if probes and tails:
            main.pop("failed", None)
            for state, n in tails.items():
                main[state] = main.get(state, 0) + n
            main_deadlines += tail_deadlines
        elif probes:
            _relabel(main, "failed", RESCHEDULED_AS_TAILS)
        parts = [("Jobs", main, main_deadlines)]
    lines = ["", "The job splitting of this task is 'Automatic', please refer to this FAQ for a description of "
             "the jobs status summary:", AUTOMATIC_FAQ]
    if probes and not main:
        lines.append(f"Probe stage log:\t\t{automatic.log}")
    lines += ["More details of Automatic Splitting process for this task (including possible failures) are in "
              "the Dagman Log files in:", os.path.dirname(automatic.log) + os.sep]
    if probes:
        lines += _summary("Probe Jobs", probes, probe_deadlines, now)
    lines += throughput_lines(automatic, sum(j.state in ("finished", "failed") for j in by_stage["probe"]))
    for kind, counts, deadlines in parts:
        if counts:
            lines += _summary(kind, counts, deadlines, now)
    return lines


def throughput_lines(automatic: AutomaticView, completed: int) -> list[str]:
    """``printProbeJobsThroughput``: what PreDAG estimated from the ``completed`` probes, in the
    words of CRAB's PreDAG log."""
    text = "Estimated application throughput from probe jobs"
    if automatic.throughput is None or automatic.event_size is None:
        return [text + " is not available yet"]
    n = len(automatic.probes)
    return [text + " :", f"  found {completed} completed jobs",
            f"  average throughput for {n} jobs: {automatic.throughput:.2f} evt/s",
            f"  average eventsize for {n} jobs: {automatic.event_size:.0f} bytes"]


def error_lines(jobs: Sequence[JobView], *, verbose: bool = False, sort: str | None = None,
                tails_only: bool = False, again: str = "crabtui") -> list[str]:
    """``printErrors``: the failed jobs grouped by exit code, then by message; ``tails_only``: of
    an automatic task only the tail jobs (a failed probe or processing job is no one's to fix)."""
    failed = [j for j in jobs if j.state == "failed" and not (tails_only and job_stage(j.id) != "tail")]
    if not failed:
        return []
    messages: dict[int, dict[str, list[str]]] = {}  # code -> message -> job ids, in first-seen order
    unknown = 0
    for j in sorted(failed, key=lambda j: job_sort_key(j.id)):
        if j.exit_code is None:
            unknown += 1
            continue
        messages.setdefault(j.exit_code, {}).setdefault(j.error or "", []).append(j.id)
    counts = {code: sum(len(ids) for ids in by_msg.values()) for code, by_msg in messages.items()}
    if sort == "exitcode":
        codes = sorted(counts)
    else:
        codes = [code for _, code in sorted(((n, code) for code, n in counts.items()), reverse=True)]
    width = len(str(len(jobs)))
    text = "\nError Summary:"
    if not verbose:
        text += f" (use {again} task status --verboseErrors for details about the errors)"
    colon = ":" if verbose else ""
    for code in codes:
        count = counts[code]
        if code == POSTPROCESSING:
            text += f"\n\n{count:>{width}} jobs failed in postprocessing step{colon}"
        else:
            text += f"\n\n{count:>{width}} jobs failed with exit code {code} ({final_meaning(code)}){colon}"
        if not verbose:
            continue
        by_msg = list(messages[code].items())
        ranked = sorted(((len(ids), i) for i, (_, ids) in enumerate(by_msg)), reverse=True)
        if len(by_msg) > 3:
            text += "\n\t(Showing only the 3 most frequent errors messages for this exit code)"
        shown = 0
        for n, i in ranked[:3]:
            msg, ids = by_msg[i]
            text += f"\n\n\t{n:>{width}} jobs failed with following error message: (for example, job {ids[0]})"
            text += "\n\n\t\t" + "\n\t\t".join(line for line in msg.split("\n") if line)
            text += f"\n\n\t\tJobs: {compress_ids(ids)}"
            shown += n
        if count > shown:
            rest = [job for _, i in ranked[3:] for job in by_msg[i][1]]
            text += (f"\n\n\tFor the error messages of the other {count - shown} jobs ({compress_ids(rest)}), "
                     f"please have a look at '{again} task status --json'.")
    if unknown:
        text += f"\n\nCould not find exit code details for {unknown} jobs."
    text += ("\n\nHave a look at https://twiki.cern.ch/twiki/bin/viewauth/CMSPublic/JobExitCodes for a "
             "description of the exit codes.")
    return text.split("\n")


# A line of the long table and the values ``--sort`` orders by: (job, state without countdown,
# site, runtime, memory MB, CPU %, retries, waste, exit code, the line).  Tuples: 10,000 of them.
_JOB, _STATE, _SITE, _RUNTIME, _MEMORY, _CPU, _RETRIES, _WASTE, _EXITCODE, _LINE = range(10)


def _cpu_shown(j: JobView, wall: float) -> float | None:
    """The CPU % the table shows: 0 for a job that ended without running, else known or None."""
    if not wall and j.state in ("cooloff", "failed", "finished"):
        return 0.0
    return j.cpu_pct if wall else None


def cpu_percent(j: JobView) -> int | None:
    """The CPU % of a job's row, rounded as crab prints it: the UI's table and ``--long`` show one
    number (the UI cut 88.7 to 88 where crab printed 89)."""
    cpu = _cpu_shown(j, j.runtime_s or 0.0)
    return None if cpu is None else round(cpu)


def _rows(jobs: Sequence[JobView], now: float, automatic: bool = False) -> list[tuple]:
    rows = []
    append = rows.append
    for j in jobs:
        wall = j.runtime_s or 0.0
        memory = None if j.memory_mb is None else int(j.memory_mb)
        cpu = cpu_percent(j)
        cpu_text = "Unknown" if cpu is None else str(cpu)
        ec = 0 if j.state == "finished" else j.exit_code
        ec_text = "Unknown" if ec is None else " Postprocessing failed" if ec == POSTPROCESSING else ec
        state = shown_state(j, automatic) if automatic else j.state
        label = state_label(j, now) if state == "cooloff" else state
        site = j.site_history[-1] if j.site_history else ""
        waste = j.waste_s
        line = _ROW % (j.id, label, site, to_hms(wall), "Unknown" if memory is None else memory, cpu_text,
                       j.retries, j.restarts, to_hms(waste) if waste else "0:00:00", ec_text)
        append((j.id, state, site, wall, memory, cpu, j.retries, waste, ec, line))
    return rows


def table_lines(jobs: Sequence[JobView], now: float, automatic: bool = False) -> list[str]:
    """The ``--long`` table ("Extended Job Status Table"); states as :func:`shown_state` names them."""
    lines = ["", "Extended Job Status Table:", "",
             _ROW % ("Job", "State", "Most Recent Site", "Runtime", "Mem (MB)", "CPU %", "Retries", "Restarts",
                     "Waste", "Last ExitCode")]
    return lines + [row[_LINE] for row in _rows(jobs, now, automatic)]


def run_summary_lines(jobs: Sequence[JobView], *, num_cores: int = 1, max_memory_mb: int | None = None,
                      max_runtime_min: int | None = None, automatic: bool = False) -> list[str]:
    """The warnings and the "Summary of run jobs" (jobs that are not idle, running or unsubmitted).
    Of an automatic task the probes do not count, and there are no warnings: the splitting is
    CRAB's doing, not the user's."""
    if automatic:
        jobs = [j for j in jobs if job_stage(j.id) != "probe"]
    memories: list[float] = []
    walls: list[float] = []
    cpus: list[float] = []  # the CPU % the table shows
    cpu_time = cpu_wall = waste_sum = 0.0
    for j in jobs:
        if j.state in _METRIC_EXCLUDED:
            continue
        wall = j.runtime_s or 0.0
        walls.append(wall)
        waste_sum += j.waste_s
        if j.memory_mb is not None:  # the MB the Mem column shows, so the average lies between min and max
            memories.append(int(j.memory_mb))
        cpu = _cpu_shown(j, wall)
        if cpu is not None:
            cpus.append(cpu)
            cpu_time += cpu * wall
            cpu_wall += wall
    if not memories and not walls:
        return []
    run_sum = sum(walls)
    wall_sum = run_sum + waste_sum
    cpu_ave = cpu_time / cpu_wall / 100 if cpu_wall else None  # total CPU over total runtime
    lines: list[str] = []
    hint = "improve the jobs splitting (e.g. config.Data.splitting = 'Automatic') in a new task"
    mem_max = max(memories) if memories else 0
    run_max = max(walls) if walls else 0
    for param, value, requested, fraction, floor, unit in (
            ("memory", mem_max, max_memory_mb, 0.7, DEFAULT_MAX_MEMORY_MB, "MB"),
            ("runtime", run_max / 60, max_runtime_min, 0.3, 0, "min")):
        if not automatic and value and requested and requested > floor and value < fraction * requested:
            lines += ["", f"Warning: the max jobs {param} is less than {fraction * 100:.0f}% of the task requested "
                      f"value ({requested} {unit}), please consider to request a lower value for failed jobs "
                      f"(allowed through crabtui task resubmit) and/or {hint}."]
    if not automatic and cpu_ave is not None and cpu_ave < 0.5:
        text = "Warning: the average jobs CPU efficiency is less than 50%, please consider to "
        if num_cores > 1 and cpu_ave < 0.3:
            text += "request a lower number of threads for failed jobs (allowed through crabtui task resubmit) and/or "
        lines += ["", text + hint]
    lines += ["", "Summary of run jobs:"]
    if memories:
        lines.append(" * Memory: %dMB min, %dMB max, %.0fMB ave" % (min(memories), mem_max,
                                                                    sum(memories) / len(memories)))
    if walls:
        lines.append(f" * Runtime: {to_hms(min(walls))} min, {to_hms(run_max)} max, {to_hms(run_sum / len(walls))} ave")
    if run_sum and cpu_ave is not None:
        lines.append(" * CPU eff: %.0f%% min, %.0f%% max, %.0f%% ave" % (min(cpus), max(cpus), cpu_ave * 100))
    if wall_sum:
        waste = wall_sum - run_sum
        lines.append(f" * Waste: {to_hms(waste)} ({waste / wall_sum * 100:.0f}% of total)")
    lines.append("")
    return lines


def site_lines(jobs: Sequence[JobView], usability: Sequence[SiteUsability] = ()) -> list[str]:
    """``--summary``: ``printSummary``, per site the runtime, waste and jobs by outcome, retries included.
    With ``usability``, every site of the task has a row, a last column saying whether it is
    blacklisted and why, and a line under the table explaining each."""
    sites: dict[str, list] = {site.site: [0.0, 0.0, 0, 0, 0, 0] for site in usability}
    seen = False
    for j in jobs:
        if not j.site_history:
            continue
        seen = True
        walls = [a.get("runtime_s") or 0.0 for a in j.attempts if a.get("site")]
        walls += [j.runtime_s or 0.0] * (len(j.site_history) - len(walls))
        for site, wall in zip(j.site_history[:-1], walls[:-1]):
            info = sites.setdefault(site, [0.0, 0.0, 0, 0, 0, 0])
            info[5] += 1
            info[1] += wall
        current = sites.setdefault(j.site_history[-1], [0.0, 0.0, 0, 0, 0, 0])
        wall = walls[len(j.site_history) - 1]
        if j.state in ("failed", "cooloff", "held", "killed", "idle"):
            current[5] += 1
            current[1] += wall
        elif j.state in ("transferring", "running", "finished"):
            current[{"transferring": 4, "running": 2, "finished": 3}[j.state]] += 1
            current[0] += wall
    if not seen and not usability:
        return ["No SiteHistory retrieved for any job", ""]
    labels = {site.site: site.label for site in usability}
    row = _SITE_ROW + " %s" if usability else _SITE_ROW
    heading = ("Blacklisted",) if usability else ()
    lines = ["Site Summary Table (including retries):", "",
             row % ("Site", "Runtime", "Waste", "Running", "Successful", "Stageout", "Failed", *heading)]
    for site in sorted(sites):
        runtime, waste, running, success, stageout, failed = sites[site]
        label = (labels.get(site, "no"),) if usability else ()
        lines.append(row % (site, to_hms(runtime), to_hms(waste), running, success, stageout, failed, *label))
    if usability:
        lines += ["", "Site blacklisting:"] + ["%-20s %s" % (site.site, site.detail) for site in usability]
    return lines + [""]


def sort_lines(jobs: Sequence[JobView], key: str, now: float, automatic: bool = False) -> list[str]:
    """``printSort``: the jobs (in CRAB's order) ordered or grouped by ``key``."""
    rows = _rows(jobs, now, automatic)
    lines = [""]
    if key == "exitcode":
        groups: dict[int, list[str]] = {}
        for row in rows:
            groups.setdefault(999999 if row[_EXITCODE] is None else row[_EXITCODE], []).append(row[_JOB])
        lines += ["Jobs sorted by exit code:", "", "%-20s %-20s" % ("Exit Code", "Job Id(s)"), ""]
        lines += ["%-20s %-s" % ("Unknown" if value == 999999 else value, ", ".join(groups[value]))
                  for value in sorted(groups)]
    elif key in ("state", "site"):
        column = _STATE if key == "state" else _SITE
        by_value: dict[str, list[str]] = {}
        for row in rows:
            by_value.setdefault(row[column], []).append(row[_JOB])
        lines += [f"Jobs sorted by {key}:", "", "%-20s %-20s" % (key.title(), "Job Id(s)"), ""]
        lines += ["%-20s %-s" % (value, ", ".join(ids)) for value, ids in by_value.items()]
    elif key in ("memory", "cpu", "retries"):
        column = {"memory": _MEMORY, "cpu": _CPU, "retries": _RETRIES}[key]
        title = {"memory": "Memory (MB)", "cpu": "CPU", "retries": "Retries"}[key]
        lines += [f"Jobs sorted by {key} used:", "%-10s %-10s" % (title.center(10), "Job Id".center(10))]
        values = sorted((999999 if row[column] is None else row[column], i) for i, row in enumerate(rows))
        lines += ["%10s %10s" % (str("Unknown" if v == 999999 else v).center(10), rows[i][_JOB].center(10))
                  for v, i in values]
        lines.append("")
    else:  # runtime, waste
        column = _RUNTIME if key == "runtime" else _WASTE
        lines += [f"Jobs sorted by {key} used:", "%-10s %-5s" % (key.title(), "Job Id")]
        values2 = sorted((int(row[column]), i) for i, row in enumerate(rows))
        lines += ["%-10s %-5s" % (to_hms(v), rows[i][_JOB].center(5)) for v, i in values2]
        lines.append("")
    return lines + [""]


def render(task: TaskInfo, jobs: Sequence[JobView], now: float, options: Options = Options()) -> list[str]:
    """Everything ``crab status`` prints, in its order, for ``jobs`` in CRAB's order (as
    :func:`engine.crab.client.status.task_view` gives them); raises :class:`StatusOptionError` for
    options CRAB refuses, before anything is printed."""
    automatic = task.automatic is not None
    wanted = check_options(options, automatic)
    lines = header_lines(task)
    if task.scheduler_status is None:
        return lines
    if wanted:
        check_jobids(wanted, jobs)
    if automatic:
        lines += automatic_summary_lines(jobs, now, task.automatic, options.long)
    else:
        lines += summary_lines(jobs, now)
    lines += publication_lines(task)
    lines += error_lines(jobs, verbose=options.verbose_errors, sort=options.sort,
                         tails_only=automatic and not options.long, again=options.again)
    limits = {"num_cores": task.num_cores, "max_memory_mb": task.max_memory_mb,
              "max_runtime_min": task.max_runtime_min, "automatic": automatic}
    if not options.long and not options.sort:
        lines += run_summary_lines(jobs, **limits)
    if options.summary:
        lines += site_lines(jobs, task.sites)
    if options.long or options.sort:
        shown = jobs
        if wanted:
            chosen = set(wanted)
            shown = [j for j in jobs if j.id in chosen]
        if options.long:
            lines += table_lines(shown, now, automatic)
        lines += run_summary_lines(shown, **limits)
        if options.sort:
            lines += sort_lines(shown, options.sort, now, automatic)
    return lines
