"""``crab resubmit``: its options, checked as CRABClient checks them, which jobs it may take, and
the resubmit record's entry it makes of them (:mod:`engine.crab.ap.resubmit_record`).

Every value is resolved when the resubmit is carried out: an option the user did not give takes
the task's original value (CRAB's ``GetResubmitParams_sql``), not a previous resubmit's.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.crab.ap.resubmit_record import ResubmitEntry
from engine.crab.ap.sites import SiteListError, SiteLists, pool_sites, read_global_blacklist
from engine.crab.taskworker.automatic import stage_of
from engine.crab.taskworker.dagman_creator import read_task

MIN_MEMORY_MB, MAX_MEMORY_MB = 30, 30 * 1024  # CRABClient resubmit --maxmemory
MIN_RUNTIME_MIN, MAX_RUNTIME_MIN = 60, 336 * 60  # CRABClient resubmit --maxjobruntime
MAX_MEMORY_SINGLE_CORE_ON_RESUBMIT = 5000  # CRABServer ServerUtilities; DagmanSubmitter.checkMemoryWalltime
MAX_MEMORY_PER_CORE = 2500
STD_MAX_JOB_RUNTIME_MIN = 2750  # checkMemoryWalltime's "guaranteed" runtime: a warning above it
FAILED = "failed"
_RX_JOBIDS = re.compile(r"^\d+((?!(-\d+-))(\,|\-)\d+)*$")  # CRABClient validateJobids
_RX_SITE = re.compile(r"^T[1-3]_[A-Z]{2}(_[A-Za-z0-9]+)+$")  # CRABClient resubmit's sn_re


class ResubmitError(ValueError):
    """A resubmission CRAB would refuse; the message is CRAB's, with what to do."""


# --- the command's options (CRABClient resubmit.validateOptions) ------------------------------

def parse_job_ids(text: str) -> list[str]:
    """``--jobids``: a comma list of ids and ranges (``1,3-5``), checked as CRAB's client checks
    it and kept as given, without repeats; :func:`expand_job_ids` reads it once the task is known."""
    if not _RX_JOBIDS.match(text):
        raise ResubmitError("The command line option --jobids takes a comma separated list of integers or "
                            "ranges, without whitespaces (e.g. --jobids 1,3-5).")
    return list(dict.fromkeys(text.split(",")))


def expand_job_ids(parts: Iterable[str], *, ranges: bool) -> list[str]:
    """The job ids ``parts`` (of :func:`parse_job_ids`) name: ``3-5`` is the range 3, 4, 5, except
    in a task with automatic splitting (``ranges`` False), whose ids ``0-1`` (probes) and ``1-2``
    (tails) are written that way.  CRAB's client reads them as ranges there too, so that a tail
    job cannot be named; crabtui names it."""
    if not ranges:
        return list(dict.fromkeys(parts))
    ids: set[int] = set()
    for part in parts:
        first, _, last = part.partition("-")
        if last and int(first) > int(last):  # CRAB's client reads it as no id, and then as every job
            raise ResubmitError(f"The command line option --jobids has the range {part}, whose first id is above "
                                f"its last: write it {last}-{first}.")
        ids.update(range(int(first), int(last or first) + 1))
    return [str(i) for i in sorted(ids)]


def parse_sites(option: str, text: str | None) -> list[str] | None:
    """``--sitewhitelist``/``--siteblacklist``: None if not given, ``''`` is an empty list."""
    if text is None:
        return None
    if text == "":
        return []
    sites = text.split(",")
    for site in sites:
        if "*" not in site and not _RX_SITE.match(site):
            raise ResubmitError(f"The site name '{site}' given to --{option} does not look like a valid CMS "
                                f"site name (it is not matching the regular expression '{_RX_SITE.pattern}').")
    return sites


def request_arguments(*, jobids: str | None = None, sitewhitelist: str | None = None,
                      siteblacklist: str | None = None, maxjobruntime: int | None = None,
                      maxmemory: int | None = None, priority: int | None = None) -> dict[str, Any]:
    """The resubmit options checked as CRABClient checks them, as the task table's arguments
    (CRAB's ``tm_arguments`` names; None: not given, the task's original value applies)."""
    if maxjobruntime is not None and not MIN_RUNTIME_MIN <= maxjobruntime <= MAX_RUNTIME_MIN:
        raise ResubmitError(f"The requested maximum job runtime ({maxjobruntime} minutes) must be between "
                            f"{MIN_RUNTIME_MIN} and {MAX_RUNTIME_MIN} minutes.")
    if maxmemory is not None and not MIN_MEMORY_MB <= maxmemory <= MAX_MEMORY_MB:
        raise ResubmitError(f"The requested per-job memory ({maxmemory} MB) must be between {MIN_MEMORY_MB} "
                            f"and {MAX_MEMORY_MB} MB.")
    if priority is not None and priority < 1:
        raise ResubmitError(f"The requested priority ({priority}) must be greater than 0.")
    return {"resubmit_jobids": None if jobids is None else parse_job_ids(jobids),
            "site_whitelist": parse_sites("sitewhitelist", sitewhitelist),
            "site_blacklist": parse_sites("siteblacklist", siteblacklist),
            "maxjobruntime": maxjobruntime, "maxmemory": maxmemory, "priority": priority}


def command_options(arguments: Mapping[str, Any]) -> list[str]:
    """The options of ``crab resubmit`` that give ``arguments`` (:func:`request_arguments`'), as a
    command line names them: what a resubmission made another way (the UI's form) logs."""
    options = []
    for key, option in (("resubmit_jobids", "--jobids"), ("site_whitelist", "--sitewhitelist"),
                        ("site_blacklist", "--siteblacklist"), ("maxjobruntime", "--maxjobruntime"),
                        ("maxmemory", "--maxmemory"), ("priority", "--priority")):
        value = arguments.get(key)
        if value is not None:
            options += [option, ",".join(value) if isinstance(value, list) else str(value)]
    return options


def select_jobs(states: Mapping[str, str], wanted: Iterable[str] | None, *, automatic: bool = False) -> list[str]:
    """The jobs to resubmit: the failed ones, or those ``wanted`` names (:func:`parse_job_ids`) if
    every one of them is failed.

    ``states`` maps each job id of the task to its state as ``task status`` shows it.  With
    automatic splitting (``automatic``) only tail jobs can be resubmitted (crab-spec §4): a probe
    or processing job counts as in no resubmittable state."""
    if automatic:
        states = {job: state if stage_of(job) == "tail" else f"{stage_of(job)} job, not resubmittable"
                  for job, state in states.items()}
    if wanted is not None:
        wanted = expand_job_ids(wanted, ranges=not automatic)
    failed = [job for job, state in states.items() if state == FAILED]
    if wanted is None:
        if not failed:
            raise ResubmitError("Found no jobs to resubmit. Only jobs in status failed can be resubmitted.")
        return failed
    wanted = list(wanted)
    if not wanted:
        raise ResubmitError("Found no jobs to resubmit. Only jobs in status failed can be resubmitted.")
    refused = [job for job in wanted if states.get(job) != FAILED]
    if refused:
        why = "; ".join(f"{job}: {states.get(job, 'no such job')}" for job in refused)
        raise ResubmitError(f"Not possible to resubmit the following jobs: {','.join(refused)} ({why}). "
                            f"Only jobs in status failed can be resubmitted.")
    return wanted


def jobs_to_resubmit(task_dir: str, states: Mapping[str, str], arguments: Mapping[str, Any], *,
                     automatic: bool = False, pool: Mapping[str, Mapping[str, int]] | None = None) -> list[str]:
    """What the command checks before it sends a resubmit: the jobs it takes (:func:`select_jobs`)
    and that its site lists leave them somewhere to run (:func:`check_sites`) among the sites
    ``pool`` (the schedd's sites and slots, as they are now) has for them."""
    ids = select_jobs(states, arguments["resubmit_jobids"], automatic=automatic)
    task = read_task(task_dir)
    fitting = None if pool is None else resubmit_pool_sites(task, arguments, pool)
    slots = ""
    if fitting is not None and set(fitting) != set(pool):  # the pool has sites whose slots are too small
        memory = arguments.get("maxmemory")
        slots = (f"{', '.join(sorted(pool))}, with slots for jobs of {task.get('num_cores') or 1} core(s) and "
                 f"{task['max_memory_mb'] if memory is None else int(memory)} MB at {', '.join(fitting) or 'none'}")
    check_sites(task_dir, task, arguments, ids, fitting, slots=slots)
    return ids


def request_resubmit(db, schedd, task, arguments: Mapping[str, Any]):
    """crab resubmit of ``task`` (its task-table row) with the checked ``arguments`` of
    :func:`request_arguments`: crab's client checks against the task's jobs and the pool's sites as
    they are now, then the request the task worker carries out.  ResubmitError, or the task
    table's TaskError, says why not.  The command line and the UI both resubmit through it."""
    from engine.crab.client.status import task_view
    from engine.crab.taskworker.taskdb import KILLED, RESUBMIT, RESUBMITTABLE

    if task.status == KILLED and _automatic(task.task_dir):  # crab's client says it before asking
        raise ResubmitError("Tasks using automatic splitting cannot be resubmitted after a kill. "
                            f"({task.name}: submit the configuration again as a new task for what is left)")
    if task.status in RESUBMITTABLE:  # the others db.request refuses, or (SUBMITFAILED) submits anew
        if not os.path.isdir(task.task_dir):
            raise ResubmitError("Status information is unavailable, will not proceed with the resubmission. "
                                "Try again a few seconds later if the task has just been submitted.")
        view = task_view(task.task_dir, schedd, task.dagman_id)
        jobs_to_resubmit(task.task_dir, {j.id: j.state for j in view.jobs}, arguments,
                         automatic=view.automatic is not None, pool=schedd.sites())
    return db.request(task.name, RESUBMIT, arguments)


def _automatic(task_dir: str) -> bool:
    """Whether the task splits automatically; False if its files are gone."""
    from engine.crab.ap.predag import is_automatic

    try:
        return is_automatic(task_dir)
    except (OSError, ValueError):
        return False


def resubmit_pool_sites(task: Mapping[str, Any], arguments: Mapping[str, Any],
                        pool: Mapping[str, Mapping[str, int]]) -> list[str] | None:
    """The sites of ``pool`` as it is now whose slots hold the resubmitted jobs (the task's cores,
    the resubmit's memory or the task's), as CRAB asks its site database again on a resubmission;
    None for a task that was submitted without knowing its pool's sites."""
    if task.get("pool_sites") is None:
        return None
    memory = arguments.get("maxmemory")
    return pool_sites(pool, task.get("num_cores") or 1, task["max_memory_mb"] if memory is None else int(memory))


def check_sites(task_dir: str, task: Mapping[str, Any], arguments: Mapping[str, Any], job_ids: Iterable[str],
                pool: Iterable[str] | None = None, *, slots: str = "") -> None:
    """Refuse a resubmit whose site lists leave a resubmitted job no site of the pool to run at,
    as ``task submit`` refuses lists that leave a block none (``task_input.locality``): PreJob
    would find its DESIRED_Sites empty and the job would fail at once.  ``task`` is ``task.json``,
    ``arguments`` those of :func:`request_arguments` (a list not given keeps the task's), ``pool``
    the pool's sites now (:func:`resubmit_pool_sites`; None: those the task was submitted with);
    ``slots`` names every site of the pool and where its slots are large enough, when that is
    what left ``pool`` short (a --maxmemory above a site's slots: a smaller one is the way out)."""
    try:
        banned = read_global_blacklist(task.get("global_blacklist"))
    except SiteListError:
        banned = ()  # PreJob waits until it can read it; the lists alone are judged here
    lists = SiteLists(*(tuple(task[key] if arguments.get(key) is None else arguments[key])
                        for key in ("site_whitelist", "site_blacklist")),
                      banned, bool(task.get("ignore_global_blacklist")))
    pool = task.get("pool_sites") if pool is None else list(pool)
    stranded, where = [], set()
    for job in job_ids:
        try:
            with open(os.path.join(task_dir, f"job_sites.{job}.json"), encoding="utf-8") as f:
                sites = json.load(f)
        except (OSError, ValueError):
            continue  # PreJob judges a job whose sites are not known here
        if not any(pool is None or s in pool for s in lists.available(sites)):
            stranded.append(job)
            where.update(sites)
    if stranded:
        given = " and ".join(f"--{key.replace('_', '')} {','.join(arguments[key]) or repr('')}"
                             for key in ("site_whitelist", "site_blacklist") if arguments.get(key) is not None)
        pool_text = f"; the pool's sites are {slots or ', '.join(sorted(pool))}" if pool is not None else ""
        raise ResubmitError(f"Can not resubmit jobs {','.join(stranded)}: with {given or 'the task site lists'} their "
                            f"DESIRED_Sites list would be empty: no site left where they can run (their jobs may run "
                            f"at {', '.join(sorted(where))}{pool_text}). Choose sites among those"
                            f"{', or a smaller --maxmemory' if slots and arguments.get('maxmemory') is not None else ''}.")


def make_entry(task: Mapping[str, Any], arguments: Mapping[str, Any], *, epoch: int, job_ids: Iterable[str],
               now: float) -> tuple[ResubmitEntry, str]:
    """The record entry of a resubmit, from the task's ``task.json`` values and the request's
    arguments, checked as DagmanResubmitter's ``checkMemoryWalltime`` does; also returns its
    warning ("" if none)."""
    memory = arguments.get("maxmemory")
    memory = task["max_memory_mb"] if memory is None else int(memory)
    runtime = arguments.get("maxjobruntime")
    runtime = task["max_runtime_min"] if runtime is None else int(runtime)
    cores = task.get("num_cores") or 1
    top = max(MAX_MEMORY_SINGLE_CORE_ON_RESUBMIT, cores * MAX_MEMORY_PER_CORE)
    if memory > top:
        raise ResubmitError(f"Task requests {memory} MB of memory, above the allowed maximum of {top} for a "
                            f"{cores} core(s) job. Resubmit with a lower --maxmemory.")
    warning = ""
    if runtime > STD_MAX_JOB_RUNTIME_MIN:
        warning = (f"Task requests {runtime} minutes of runtime, but only {STD_MAX_JOB_RUNTIME_MIN} are "
                   f"guaranteed to be available. Jobs may not find a site where to run.")

    def sites(key: str) -> tuple[str, ...]:
        value = arguments.get(key)
        return tuple(task[key] if value is None else value)

    priority = arguments.get("priority")
    entry = ResubmitEntry(epoch=epoch, job_ids=tuple(job_ids), memory_mb=memory, runtime_min=runtime,
                          site_whitelist=sites("site_whitelist"), site_blacklist=sites("site_blacklist"),
                          priority=task["priority"] if priority is None else int(priority), requested_at=now)
    return entry, warning
