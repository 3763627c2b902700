"""Where a CRAB job may run: the global blacklist, the user's site lists and the automatic blacklist.

Standard library only: PreJob and PostJob import this module when DAGMan runs them as scripts.

An attempt's ``DESIRED_Sites`` are the sites that hold the job's data, narrowed as CRAB narrows
them (crab-spec §3: SiteInfoResolver, DagmanCreator, PreJob.redoSites)::

    available = data sites - global blacklist     (unless Site.ignoreGlobalBlacklist)
    available = available & whitelist             (if there is a whitelist)
    available = available - (blacklist - whitelist)

(:class:`SiteLists`; entries may be wildcards such as ``T2_US_*``).  Then the automatic
blacklist may take away the site where the job's previous attempt failed (:func:`attempt_sites`),
and the retry policy's ``change_site`` the site of an 8020/8021 failure
(:func:`engine.crab.ap.retry_policy.choose_sites`).  The whitelist wins over the blacklist, and the
global blacklist over the whitelist; a site in both is reported with CRAB's warnings
(:meth:`SiteLists.warnings`).

The global blacklist
    CRAB's TaskWorker writes the sites the Site Status Board calls ``not_usable`` to
    ``blacklistedSites.txt`` (a JSON list) every 15 minutes, and each task's PreDAG fetches it.
    crabtui's is that file in the state directory (``StateDir.global_blacklist``), kept by
    whoever runs the pool; ``task.json`` names it and PreJob reads it at every attempt, so a
    change applies to the next attempt of every running task.  It is the CRAB server's list, not
    the pool's: a site on it keeps its slots for other work, the pool file (read once when the
    daemon starts) stays the schedd's, and the same list serves a real HTCondor pool.  While the
    file cannot be read, PreJob defers (exit 4) and tries again, as CRAB keeps its previous list
    when the Site Status Board cannot be read; a file that does not exist bans no site.

The automatic blacklist
    CRAB never implemented it (``PreJob.calculate_blacklist`` stayed a stub), so the design is
    seed 000's conditions over the task's job attempts, which PostJob records here
    (:func:`record_attempt`).  An attempt of a job leaves out site S when ALL hold (the defaults of
    :class:`Thresholds`; the config's ``Debug.automaticBlacklist`` sets others, for demos):

    * the job's previous attempt failed at S;
    * the task has more than 10 completed jobs (failed or successful);
    * at least 5 of them were successful (a task that fails everywhere blacklists nothing);
    * the success rate of the task's jobs at S is below 50 %;
    * at least 5 of them failed at S;
    * another site remains for the job.

    A "job" of these counts is one attempt, one PostJob, as CRAB's RetryJob counted them in its
    ``task_statistics.<site>.<status>`` files.  ``crab resubmit`` clears the statistics
    (:func:`clear_statistics`, AdjustSites' ``clearAutomaticBlacklist``).

The statistics file, ``site_statistics.json`` in the task directory::

    {"schema": "crabtui.site_statistics/1", "epoch": 1,
     "sites": {"T2_CH_CERN": {"succeeded": ["1.0"], "failed": ["3.0", "4.0"]},
               "T2_XX_Local": {"succeeded": ["3.1"], "failed": []}}}

lists at each site the attempts (``<job id>.<crab_retry>``) that succeeded (exit code 0) and
those that failed, as CRAB's files list job ids, so a PostJob run again for the same attempt
counts it once, and a reader only counts; ``epoch`` is the resubmit that last cleared it.  PostJobs of different jobs run at the same time: each holds an exclusive lock on
``site_statistics.json.lock`` while it reads, changes and atomically replaces the file; readers
need no lock.  Every site of the task and why it is or is not blacklisted: :func:`site_view`.
"""

from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from engine.atomic import write_atomically
from engine.crab.jsonfile import read_json

if TYPE_CHECKING:
    from engine.crab.ap.retry_policy import Attempt, JobState

__all__ = [
    "CONFIG_KEYS", "DATA_SITES_FILE", "REASONS", "STATISTICS_FILE", "SiteListError",
    "SiteLists", "SiteStatisticsError", "SiteUsability", "SiteView", "Statistics", "Thresholds",
    "attempt_sites", "automatic_conditions", "clear_statistics", "load_statistics", "matches",
    "previous_failure", "read_global_blacklist", "record_attempt", "site_view", "write_data_sites",
    "write_global_blacklist",
]

STATISTICS_FILE = "site_statistics.json"
DATA_SITES_FILE = "data_sites.json"  # every site holding data of the task, written with its DAG
SCHEMA = "crabtui.site_statistics/1"
RESUBMIT_RECORD = "resubmit_record.json"  # engine.crab.ap.resubmit_record.RECORD_FILE, imported only once there is one
_OUTCOMES = ("succeeded", "failed")

REASONS = {"global": "globally blacklisted", "not_whitelisted": "not in whitelist", "blacklisted": "blacklisted",
           "automatic": "automatic"}
"""Why a site is not usable, in the order they apply, with the site table's label."""

CONFIG_KEYS = {"completedJobs": "completed_jobs", "successfulJobs": "successful_jobs",
               "siteSuccessRate": "site_success_rate", "siteFailures": "site_failures"}
"""``Debug.automaticBlacklist`` keys and the :class:`Thresholds` fields they set."""


class SiteListError(ValueError):
    """A global blacklist that cannot be read; says which file and what to write."""


class SiteStatisticsError(ValueError):
    """A site statistics file that cannot be read; says which file and field."""


def matches(site: str, patterns: Iterable[str]) -> bool:
    """Whether a site list entry names ``site`` (entries may hold ``*`` wildcards)."""
    return any(fnmatch.fnmatchcase(site, p) for p in patterns)


# --- the lists ------------------------------------------------------------------------------

def pool_sites(pool: Mapping[str, Mapping[str, int]], cores: int, memory_mb: int) -> list[str]:
    """The sites of ``pool`` (each with its largest slot's ``cpus`` and ``memory`` in MB) whose
    slots can hold a job of ``cores`` and ``memory_mb``: where the task's jobs may run."""
    return sorted(site for site, size in pool.items() if size["cpus"] >= cores and size["memory"] >= memory_mb)


def read_global_blacklist(path: str | None) -> tuple[str, ...]:
    """The global blacklist at ``path`` (a JSON list of site names, CRAB's ``blacklistedSites.txt``);
    none if ``path`` is None or the file does not exist."""
    if path is None or not os.path.exists(path):
        return ()
    sites = read_json(path, SiteListError, what=" the global site blacklist")
    if not isinstance(sites, list) or not all(isinstance(s, str) and s for s in sites):
        raise SiteListError(f"{path}: the global site blacklist must be a JSON list of site names, such as "
                            f'["T2_US_Nebraska", "T2_DE_DESY"], not {json.dumps(sites)[:60]}')
    return tuple(sites)


def write_global_blacklist(path: str, sites: Iterable[str]) -> None:
    """Replace the global blacklist at ``path`` with ``sites`` (whoever runs the pool keeps it;
    PreJob reads it at every attempt, so it is replaced whole, never half written)."""
    write_atomically(path, json.dumps(list(sites)) + "\n")


@dataclass(frozen=True)
class SiteLists:
    """The three lists of a task (or of a resubmit's jobs) and their precedence."""

    whitelist: tuple[str, ...] = ()
    blacklist: tuple[str, ...] = ()
    global_blacklist: tuple[str, ...] = ()
    ignore_global_blacklist: bool = False  # Site.ignoreGlobalBlacklist

    @classmethod
    def of_task(cls, task: Mapping[str, Any]) -> SiteLists:
        """The lists of ``task.json`` (as PreJob's ``job_task`` adjusts them for a resubmitted
        job), reading the global blacklist it names; :class:`SiteListError` if unreadable."""
        return cls(tuple(task["site_whitelist"]), tuple(task["site_blacklist"]),
                   read_global_blacklist(task.get("global_blacklist")), bool(task.get("ignore_global_blacklist")))

    def reasons(self, site: str) -> tuple[str, ...]:
        """Why the lists keep ``site`` out (keys of :data:`REASONS`); () if they do not."""
        out = []
        if not self.ignore_global_blacklist and matches(site, self.global_blacklist):
            out.append("global")
        whitelisted = matches(site, self.whitelist)
        if self.whitelist and not whitelisted:
            out.append("not_whitelisted")
        if matches(site, self.blacklist) and not whitelisted:
            out.append("blacklisted")
        return tuple(out)

    def available(self, sites: Iterable[str]) -> list[str]:
        """The sites the lists leave, in their order."""
        return [s for s in sites if not self.reasons(s)]

    def warnings(self, universe: Iterable[str]) -> list[str]:
        """SiteInfoResolver's warnings, in CRAB's words.  Wildcards are expanded over ``universe``
        (CRAB expands them over all CMS sites; the sites that matter here are the task's) and
        the sites the lists name."""
        named = set(universe) | {s for s in (*self.whitelist, *self.blacklist, *self.global_blacklist) if "*" not in s}
        white = {s for s in named if matches(s, self.whitelist)}
        out = []
        banned = sorted(s for s in white if matches(s, self.global_blacklist))
        if banned and not self.ignore_global_blacklist:
            out.append(f"The following sites from the user site whitelist are blacklisted by the CRAB server: "
                       f"{banned}. Since the CRAB server blacklist has precedence, these sites are not considered "
                       f"in the user whitelist.")
        both = sorted(s for s in white if matches(s, self.blacklist))
        if both:
            out.append(f"The following sites appear in both the user site blacklist and whitelist: {both}. Since "
                       f"the whitelist has precedence, these sites are not considered in the blacklist.")
        return out


# --- the automatic blacklist ------------------------------------------------------------------

@dataclass(frozen=True)
class Thresholds:
    """The automatic blacklist's conditions on the task's counts (seed 000's values)."""

    completed_jobs: int = 10  # the task has more than this many completed jobs
    successful_jobs: int = 5  # at least this many of them successful
    site_success_rate: float = 0.5  # the site's success rate is below this
    site_failures: int = 5  # at least this many failed at the site

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Thresholds:
        """From ``task.json`` (``asdict`` of a Thresholds); None or {}: the defaults."""
        return cls(**(data or {}))


@dataclass(frozen=True)
class Statistics:
    """The task's completed jobs, as :func:`record_attempt` counted them since the last resubmit."""

    epoch: int = 0
    completed: int = 0
    successful: int = 0
    by_site: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # site -> (successful, failed)

    def at(self, site: str) -> tuple[int, int]:
        return self.by_site.get(site, (0, 0))


def automatic_conditions(site: str, stats: Statistics, limits: Thresholds) -> dict[str, dict[str, Any]]:
    """The task-wide conditions of the automatic blacklist for ``site``: for each, the count, the
    threshold and whether it is met (the job-level ones, a failure there and another site, are
    :func:`attempt_sites`')."""
    ok, failed = stats.at(site)
    rate = ok / (ok + failed) if ok + failed else None
    return {
        "completed_jobs": {"value": stats.completed, "threshold": limits.completed_jobs,
                           "met": stats.completed > limits.completed_jobs},
        "successful_jobs": {"value": stats.successful, "threshold": limits.successful_jobs,
                            "met": stats.successful >= limits.successful_jobs},
        "site_success_rate": {"value": rate, "threshold": limits.site_success_rate,
                              "met": rate is not None and rate < limits.site_success_rate},
        "site_failures": {"value": failed, "threshold": limits.site_failures, "met": failed >= limits.site_failures},
    }


def previous_failure(state: JobState) -> str | None:
    """The site where the job's latest closed attempt failed; None if it succeeded, ran nowhere
    or there is none."""
    closed = [a for a in state.attempts if a.action is not None]
    last = closed[-1] if closed else None
    return last.site if last is not None and last.site and last.exit_code != 0 else None


def attempt_sites(candidates: Sequence[str], failed_at: str | None, stats: Statistics,
                  limits: Thresholds, pool: Iterable[str] | None = None) -> tuple[list[str], str]:
    """The sites an attempt may run at after the automatic blacklist, and why it took one away
    ("" if it did not): the site of the previous failure goes when every condition holds, the
    last being that another site remains which the task's pool has (``pool``; None: unknown,
    any other site counts)."""
    others = [s for s in candidates if s != failed_at and (pool is None or s in pool)]
    if failed_at is None or failed_at not in candidates or not others:
        return list(candidates), ""
    conditions = automatic_conditions(failed_at, stats, limits)
    if not all(c["met"] for c in conditions.values()):
        return list(candidates), ""
    return ([s for s in candidates if s != failed_at],
            f"{failed_at} is automatically blacklisted for this attempt, where the previous one failed: "
            f"{_explain(conditions)}")


def _explain(conditions: Mapping[str, Mapping[str, Any]], only_unmet: bool = False) -> str:
    """The conditions in words, as ``site_success_rate 20% < 50%``."""
    parts = []
    for name, c in conditions.items():
        if only_unmet and c["met"]:
            continue
        value, limit, met = c["value"], c["threshold"], c["met"]
        if name == "completed_jobs":
            parts.append(f"{value} completed jobs in the task {'>' if met else '<='} {limit}")
        elif name == "successful_jobs":
            parts.append(f"{value} successful {'>=' if met else '<'} {limit}")
        elif name == "site_success_rate":
            rate = "none ended here" if value is None else f"{value:.0%}"
            parts.append(f"site success rate {rate} {'<' if met else 'not <'} {limit:.0%}")
        else:
            parts.append(f"{value} failed here {'>=' if met else '<'} {limit}")
    return "; ".join(parts)


# --- the statistics file ------------------------------------------------------------------------

def _statistics_path(task_dir: str) -> str:
    return os.path.join(task_dir, STATISTICS_FILE)


def _read_statistics(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        return {"schema": SCHEMA, "epoch": 0, "sites": {}}
    data = read_json(path, SiteStatisticsError, what=" the site statistics")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or set(data) != {"schema", "epoch", "sites"}:
        raise SiteStatisticsError(f"{path}: not site statistics of schema {SCHEMA} (an object with schema, epoch "
                                  "and sites); delete the file to start counting again")
    if not (isinstance(data["epoch"], int) and data["epoch"] >= 0):
        raise SiteStatisticsError(f"{path}: field epoch must be an integer >= 0, not {json.dumps(data['epoch'])}")
    if not isinstance(data["sites"], dict):
        raise SiteStatisticsError(f"{path}: field sites must be an object")
    for site, lists in data["sites"].items():
        if not (isinstance(lists, dict) and set(lists) == set(_OUTCOMES)
                and all(isinstance(v, list) for v in lists.values())):
            raise SiteStatisticsError(f"{path}: field sites.{site} must be an object of lists of attempts, "
                                      '{"succeeded": ["<job>.<crab_retry>", ...], "failed": [...]}')
    return data


def load_statistics(task_dir: str) -> Statistics:
    """The task's counts; none before the first PostJob."""
    data = _read_statistics(_statistics_path(task_dir))
    by_site = {site: (len(lists["succeeded"]), len(lists["failed"])) for site, lists in data["sites"].items()}
    return Statistics(data["epoch"], sum(ok + failed for ok, failed in by_site.values()),
                      sum(ok for ok, _ in by_site.values()), by_site)


@contextlib.contextmanager
def _locked(task_dir: str) -> Iterator[None]:
    fd = os.open(_statistics_path(task_dir) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write(path: str, data: dict[str, Any]) -> None:
    write_atomically(path, json.dumps(data, separators=(",", ":")) + "\n")


def record_attempt(task_dir: str, job_id: str, attempt: Attempt | None) -> None:
    """PostJob: count the attempt it closed at the attempt's site (nothing for an attempt that
    ran nowhere or that no decision closed)."""
    if attempt is None or not attempt.site or attempt.action is None:
        return
    path = _statistics_path(task_dir)
    key = f"{job_id}.{attempt.crab_retry}"
    outcome = _OUTCOMES[0] if attempt.exit_code == 0 else _OUTCOMES[1]
    with _locked(task_dir):
        data = _read_statistics(path)
        sites = data["sites"]
        if key in sites.get(attempt.site, {}).get(outcome, ()):
            return
        for lists in sites.values():  # counted before with another outcome: that one goes
            for keys in lists.values():
                if key in keys:
                    keys.remove(key)
        sites.setdefault(attempt.site, {name: [] for name in _OUTCOMES})[outcome].append(key)
        _write(path, data)


def clear_statistics(task_dir: str, epoch: int) -> None:
    """``crab resubmit``: forget every count for resubmit ``epoch``; doing it again for the same
    epoch (a task worker that died half-way) keeps what PostJobs counted since."""
    path = _statistics_path(task_dir)
    with _locked(task_dir):
        if _read_statistics(path)["epoch"] < epoch:
            _write(path, {"schema": SCHEMA, "epoch": epoch, "sites": {}})


def write_data_sites(task_dir: str, sites: Iterable[str]) -> None:
    """DagmanCreator: every site holding data of the task, the sites :func:`site_view` reports."""
    write_atomically(os.path.join(task_dir, DATA_SITES_FILE), json.dumps(sorted(set(sites))) + "\n")


# --- every site of a task -------------------------------------------------------------------------

@dataclass(frozen=True)
class SiteUsability:
    """One site of a task and why it is or is not blacklisted."""

    site: str
    reasons: tuple[str, ...]  # keys of REASONS; (): usable
    detail: str  # the reasons in words, with the automatic blacklist's counts and thresholds
    successful: int  # the task's jobs that succeeded here since the last resubmit
    failed: int
    automatic: dict[str, dict[str, Any]]  # automatic_conditions

    @property
    def usable(self) -> bool:
        return not self.reasons

    @property
    def label(self) -> str:
        """The site table's column: the reasons, or ``no``."""
        return ", ".join(REASONS[r] for r in self.reasons) or "no"

    def as_json(self) -> dict[str, Any]:
        return {"site": self.site, "usable": self.usable, "reasons": list(self.reasons), "detail": self.detail,
                "successful": self.successful, "failed": self.failed, "automatic": self.automatic}


@dataclass(frozen=True)
class SiteView:
    """Every site of a task (the sites holding its data, and any where its jobs ran) and the lists
    and counts that decide them; ``lists_from`` says whose lists these are: the task's, or those
    of its latest resubmit, which apply to the jobs it resubmitted."""

    sites: tuple[SiteUsability, ...]
    lists: SiteLists
    lists_from: str
    thresholds: Thresholds
    statistics: Statistics
    warnings: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"lists_from": self.lists_from, "whitelist": list(self.lists.whitelist),
                "blacklist": list(self.lists.blacklist), "global_blacklist": list(self.lists.global_blacklist),
                "ignore_global_blacklist": self.lists.ignore_global_blacklist,
                "thresholds": asdict(self.thresholds), "completed_jobs": self.statistics.completed,
                "successful_jobs": self.statistics.successful, "statistics_epoch": self.statistics.epoch,
                "warnings": list(self.warnings)}


def site_view(task_dir: str, task: Mapping[str, Any]) -> SiteView:
    """Every site of the task and why it is or is not blacklisted now; ``task`` is ``task.json``.
    A list or statistics file that cannot be read becomes a warning."""
    warnings: list[str] = []
    lists_from = "task"
    task = dict(task)
    entries = []
    if os.path.exists(os.path.join(task_dir, RESUBMIT_RECORD)):
        from engine.crab.ap.resubmit_record import ResubmitRecordError, read_record

        try:
            entries = read_record(task_dir)
        except ResubmitRecordError as e:
            warnings.append(str(e))
    if entries:
        latest = entries[-1]
        task.update(site_whitelist=latest.site_whitelist, site_blacklist=latest.site_blacklist)
        lists_from = f"resubmit epoch {latest.epoch}"
    lists = SiteLists(tuple(task.get("site_whitelist", ())), tuple(task.get("site_blacklist", ())), (),
                      bool(task.get("ignore_global_blacklist")))
    try:
        lists = replace(lists, global_blacklist=read_global_blacklist(task.get("global_blacklist")))
    except SiteListError as e:
        warnings.append(f"{e}; jobs wait until it can be read")
    try:
        stats = load_statistics(task_dir)
    except SiteStatisticsError as e:
        warnings.append(str(e))
        stats = Statistics()
    try:
        data_sites = _read_data_sites(task_dir)
    except SiteListError as e:
        warnings.append(str(e))
        data_sites = []
    limits = Thresholds.from_json(task.get("automatic_blacklist"))
    sites = []
    for site in sorted(set(data_sites) | set(stats.by_site)):
        reasons = list(lists.reasons(site))
        conditions = automatic_conditions(site, stats, limits)
        if all(c["met"] for c in conditions.values()):
            reasons.append("automatic")
        ok, failed = stats.at(site)
        sites.append(SiteUsability(site, tuple(reasons), _detail(site, reasons, lists, conditions, ok + failed),
                                   ok, failed, conditions))
    return SiteView(tuple(sites), lists, lists_from, limits, stats, tuple(lists.warnings(data_sites) + warnings))


def _read_data_sites(task_dir: str) -> list[str]:
    path = os.path.join(task_dir, DATA_SITES_FILE)
    if not os.path.exists(path):
        return []
    sites = read_json(path, SiteListError)
    if not isinstance(sites, list) or not all(isinstance(s, str) for s in sites):
        raise SiteListError(f"{path}: must be a JSON list of site names; the task's DAG writes it")
    return sites


def _detail(site: str, reasons: Sequence[str], lists: SiteLists, conditions: Mapping[str, Any], ended: int) -> str:
    parts = []
    if "global" in reasons:
        parts.append("globally blacklisted (by the CRAB server's list)")
    elif matches(site, lists.global_blacklist):
        parts.append("globally blacklisted, but the task ignores the global blacklist (Site.ignoreGlobalBlacklist)")
    if "not_whitelisted" in reasons:
        parts.append("not in the site whitelist")
    if "blacklisted" in reasons:
        parts.append("in the site blacklist")
    elif matches(site, lists.blacklist):
        parts.append("in the site blacklist, but also in the whitelist, which has precedence")
    if "automatic" in reasons:
        parts.append(f"automatically blacklisted for the jobs whose previous attempt failed here, if another site "
                     f"can run them: {_explain(conditions)}")
    elif ended:
        parts.append(f"not automatically blacklisted: {_explain(conditions, only_unmet=True)}")
    if not reasons:
        parts.insert(0, "usable")
    return "; ".join(parts)
