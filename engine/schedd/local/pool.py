"""The embedded schedd's execution slots and its matchmaker.

A pool is a list of sites. Each site is one machine with identical static slots, and each slot is
a ``classad2.ClassAd`` with the attributes an HTCondor startd and a CMS glidein publish (Name,
Machine, SlotID, Cpus, Memory, Disk, OpSys, Arch, GLIDEIN_CMSSite, Start, Requirements), so job
Requirements written for the grid, such as CRAB's
``stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)``, match here unchanged.

Matching is the negotiator's symmetric match: the job's Requirements is true with MY = job and
TARGET = slot, and the slot's Requirements (``START && WithinResourceLimits``, as a startd
publishes it) is true with MY = slot and TARGET = job. The job's Rank orders the slots it matches.

The pool is described in TOML (see :func:`parse_pool` for the format) or, without a file, is this
machine: one slot per CPU at the site :data:`DEFAULT_SITE`, each the size of a CMS glidein pilot.

Besides HTCondor's, every slot ad carries two attributes of crabtui's simulated grid, which the job
wrapper (``engine.crab.wn.wrapper``) reads from the machine ad file the starter writes
(``_CONDOR_MACHINE_AD``): :data:`SPEED_ATTRIBUTE` (``CRABTUI_SiteSpeed``, a real: the site's CPU
speed relative to 1.0, by which the simulated cmsRun multiplies its throughput) and
:data:`FAILURES_ATTRIBUTE` (``CRABTUI_SiteFailures``, a string holding the site's failure profile as
JSON: a list of ``{"probability": p, "exitCode": n}`` or ``{"probability": p, "memoryMB": n}``
objects, ``[]`` for a site without failures). A real pool's slots lack both; the wrapper then
runs at speed 1.0 without site failures.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import classad2

# Imported for its side effect on classad2, which a negotiator has too. With htcondor2 imported
# (it initialises HTCondor's configuration), classad2 knows the functions HTCondor adds to the
# ClassAd language and looks a name missing from MY up in TARGET; without it, stringListMember(...)
# evaluates to ERROR and `Memory` in a job's Requirements to UNDEFINED (htcondor 25.14, offline).
import htcondor2  # noqa: F401

from engine.hints import did_you_mean
from engine.tomlfile import TomlError, parse_toml, read_toml

__all__ = [
    "DEFAULT_SITE", "FAILURES_ATTRIBUTE", "GLIDEIN_CPUS", "GLIDEIN_MEMORY_MB", "SPEED_ATTRIBUTE", "Pool",
    "PoolConfigError", "Site", "SiteFailure", "Slot", "analyze", "conjuncts", "default_pool", "load_pool", "matches", "parse_pool",
    "pool_file_stamp",
]

DEFAULT_SITE = "T2_XX_Local"
"""The site of the pool made from this machine when there is no pool file.

It has the shape of a CMS site name (``T<tier>_<country>_<name>``), so code that parses site names
or expands ``T2_*`` wildcards accepts it; ``XX`` is no country code, so it can never be mistaken
for a real site in a user's whitelist or blacklist; and T2 is the tier where CRAB jobs usually run.
"""

DEFAULT_MEMORY_MB = 2000
"""Memory of a slot when neither the pool file nor /proc/meminfo says: CRAB's default job memory
(``maxMemoryMB``), so that a default CRAB job fits."""

GLIDEIN_CPUS = 8
GLIDEIN_MEMORY_MB = 20_000
"""What each slot of :func:`default_pool` advertises at least: the 8 cores of a CMS glidein pilot,
and CRAB's largest memory request for 8 cores (2500 MB a core), so that a multi-threaded CRAB job
(``JobType.numCores`` up to 8) runs on any laptop. A job takes one slot whatever it requests: as
many jobs run at a time as the machine has CPUs, and a job's threads are its own business (the
simulated cmsRun uses one)."""

DEFAULT_DISK_KB = 20_000_000
"""Disk of a configured slot when the pool file does not say: the 20 GB beyond which CRAB's
``periodic_remove`` removes a job, so that any job CRAB would let run fits."""

MAX_SLOTS = 4096
"""Slots in a pool file, all sites together: each runs a job on this one machine."""

SPEED_ATTRIBUTE = "CRABTUI_SiteSpeed"
"""The slot attribute holding the site's relative CPU speed (a real; the site key ``speed``)."""

FAILURES_ATTRIBUTE = "CRABTUI_SiteFailures"
"""The slot attribute holding the site's failure profile as a JSON string (the site key ``failures``)."""

_MEMINFO = "/proc/meminfo"

# What the slot's Requirements adds to START: the job's requests fit the slot. A request the job
# does not define asks for one CPU and no memory or disk. One expression per resource, so that
# `analyze` can say which one is short.
_FITS = {
    "Cpus": "ifThenElse(TARGET.RequestCpus is undefined, 1, TARGET.RequestCpus) <= MY.Cpus",
    "Memory": "ifThenElse(TARGET.RequestMemory is undefined, 0, TARGET.RequestMemory) <= MY.Memory",
    "Disk": "ifThenElse(TARGET.RequestDisk is undefined, 0, TARGET.RequestDisk) <= MY.Disk",
}
_FIT_EXPRS = {resource: classad2.ExprTree(text) for resource, text in _FITS.items()}
_WITHIN_RESOURCE_LIMITS = classad2.ExprTree(" && ".join(f"({text})" for text in _FITS.values()))
_SLOT_REQUIREMENTS = classad2.ExprTree("START && WithinResourceLimits")
_MY_REQUIREMENTS = classad2.ExprTree("MY.Requirements")
_MY_START = classad2.ExprTree("MY.Start")
_MY_RANK = classad2.ExprTree("MY.Rank")
_REQUESTS = (("RequestCpus", "Cpus", ""), ("RequestMemory", "Memory", " MB"), ("RequestDisk", "Disk", " KB"))

# Attributes the pool computes for every slot; a site may not set them in [site.attributes].
_RESERVED = {
    "name": "set by the pool (slot<N>@<machine>)",
    "machine": "set by the pool from the site name",
    "slotid": "set by the pool",
    "mytype": "set by the pool",
    "cpus": 'set with the site key "cpus"',
    "memory": 'set with the site key "memory"',
    "disk": 'set with the site key "disk"',
    "glidein_cmssite": 'set with the site key "name"',
    "start": 'set with the site key "start"',
    "withinresourcelimits": "set by the pool from the slot's Cpus, Memory and Disk",
    "requirements": 'set by the pool to START && WithinResourceLimits; use the site key "start"',
    SPEED_ATTRIBUTE.lower(): 'set with the site key "speed"',
    FAILURES_ATTRIBUTE.lower(): 'set with the site key "failures"',
}
_SITE_KEYS = ("name", "slots", "cpus", "memory", "disk", "start", "speed", "failures", "attributes", "expressions")
_FAILURE_KEYS = ("probability", "exitCode", "memoryMB")
_FAILURE_EXAMPLE = "failures = [{probability = 0.1, exitCode = 8021}, {probability = 0.05, memoryMB = 3000}]"
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SITE_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")


class PoolConfigError(ValueError):
    """A pool file that cannot be used; the message names the file, the key and what to change."""


@dataclass(frozen=True, slots=True)
class SiteFailure:
    """One entry of a site's failure profile: with ``probability``, a job attempt at the site
    fails with the exit code ``exit_code``, or its payload grows to ``memory_mb`` MB of resident
    memory (memory trouble). Exactly one of the two is set."""

    probability: float
    exit_code: int | None = None
    memory_mb: int | None = None

    def as_json(self) -> dict[str, float | int]:
        """The entry as the pool file and the slot ad's JSON write it."""
        entry: dict[str, float | int] = {"probability": self.probability}
        if self.exit_code is not None:
            entry["exitCode"] = self.exit_code
        if self.memory_mb is not None:
            entry["memoryMB"] = self.memory_mb
        return entry


@dataclass(frozen=True, slots=True)
class Site:
    """One site of the pool: a machine with ``slots`` identical slots.

    ``attributes`` hold ClassAd literals (str, int, float, bool) and ``expressions`` ClassAd
    expressions as text; both go into every slot ad, and may replace the default OpSys and Arch
    so that a site can stand for a platform other than this machine's. ``speed`` and ``failures``
    describe the site to the simulated grid (see the module docstring).
    """

    name: str
    slots: int = 1
    cpus: int = 1
    memory: int = DEFAULT_MEMORY_MB  # MB per slot
    disk: int = DEFAULT_DISK_KB  # KB per slot
    start: str = "true"
    attributes: Mapping[str, str | int | float | bool] = field(default_factory=dict)
    expressions: Mapping[str, str] = field(default_factory=dict)
    speed: float = 1.0
    failures: tuple[SiteFailure, ...] = ()

    @property
    def machine(self) -> str:
        """The site's host name: made from the site name, so a slot's name tells its site.
        Never resolved: the slots all run on this machine."""
        return f"{self.name.lower().replace('_', '-')}.crabtui.local"


@dataclass(eq=False, slots=True)
class Slot:
    """An execution slot: its ad and the id (``"cluster.proc"``) of the job it runs, if any."""

    name: str
    site: str
    ad: classad2.ClassAd
    job_id: str | None = None

    @property
    def busy(self) -> bool:
        return self.job_id is not None


class Pool:
    """The slots of the embedded schedd, which of them run which job, and the matchmaker."""

    def __init__(self, sites: Sequence[Site]):
        self.sites = tuple(sites)
        self.slots: list[Slot] = []
        for site in self.sites:
            for slot_id in range(1, site.slots + 1):
                ad = _slot_ad(site, slot_id)
                self.slots.append(Slot(ad["Name"], site.name, ad))
        self._by_name = {slot.name: slot for slot in self.slots}
        self._by_job: dict[str, Slot] = {}

    def slot(self, name: str) -> Slot:
        """The slot called ``name`` (a job's RemoteHost), to claim it again after a restart."""
        return self._by_name[name]

    def free_slots(self) -> list[Slot]:
        return [slot for slot in self.slots if slot.job_id is None]

    def match(self, job_ad: classad2.ClassAd) -> Slot | None:
        """The free slot the negotiator would give this job: the matching one of highest Rank,
        the first in pool order among equals; None when no free slot matches."""
        best: Slot | None = None
        best_rank = 0.0
        for slot in self.slots:
            if slot.job_id is None and matches(job_ad, slot.ad):
                rank = _rank(job_ad, slot.ad)
                if best is None or rank > best_rank:
                    best, best_rank = slot, rank
        return best

    def claim(self, slot: Slot, job_id: str) -> None:
        """Record that ``slot`` runs ``job_id``. A busy slot or a job already running is a bug of
        the caller, reported before anything changes."""
        if slot.job_id is not None:
            raise ValueError(f"{slot.name} already runs job {slot.job_id}; release it before claiming it for {job_id}")
        if job_id in self._by_job:
            raise ValueError(f"job {job_id} already runs on {self._by_job[job_id].name}")
        slot.job_id = job_id
        self._by_job[job_id] = slot

    def release(self, job_id: str) -> Slot | None:
        """Free the slot running ``job_id`` and return it; None if the job runs nowhere, so that
        releasing twice (say, after a restart) is harmless."""
        slot = self._by_job.pop(job_id, None)
        if slot is not None:
            slot.job_id = None
        return slot


# ------------------------------------------------------------------------------------ slot ads

def _slot_ad(site: Site, slot_id: int) -> classad2.ClassAd:
    """The ad of slot ``slot_id`` (from 1) of ``site``, with HTCondor's attribute names."""
    ad = classad2.ClassAd()
    ad["MyType"] = "Machine"
    ad["Name"] = f"slot{slot_id}@{site.machine}"
    ad["Machine"] = site.machine
    ad["SlotID"] = slot_id
    ad["Cpus"] = site.cpus
    ad["SlotWeight"] = classad2.ExprTree("Cpus")  # the startd's default SLOT_WEIGHT
    ad["Memory"] = site.memory
    ad["Disk"] = site.disk
    ad["GLIDEIN_CMSSite"] = site.name
    ad[SPEED_ATTRIBUTE] = float(site.speed)
    ad[FAILURES_ATTRIBUTE] = json.dumps([failure.as_json() for failure in site.failures])
    ad["OpSys"], ad["Arch"] = _platform()
    for name, value in site.attributes.items():
        ad[name] = value
    for name, text in site.expressions.items():
        ad[name] = classad2.ExprTree(text)
    ad["Start"] = classad2.ExprTree(site.start)
    ad["WithinResourceLimits"] = _WITHIN_RESOURCE_LIMITS
    ad["Requirements"] = _SLOT_REQUIREMENTS
    return ad


def _platform() -> tuple[str, str]:
    """OpSys and Arch as HTCondor names them (sysapi_translate_opsys/arch): LINUX, X86_64, ..."""
    system, machine = platform.system(), platform.machine()
    opsys = {"Linux": "LINUX", "Darwin": "OSX"}.get(system, system.upper())
    if machine.lower() in ("x86_64", "amd64"):
        arch = "X86_64"
    elif re.fullmatch(r"i[3-6]86", machine):
        arch = "INTEL"
    else:
        arch = machine
    return opsys, arch


# ------------------------------------------------------------------------------------ matchmaking

def matches(job_ad: classad2.ClassAd, slot_ad: classad2.ClassAd) -> bool:
    """Whether the negotiator would match the job to the slot: both Requirements are true, each
    evaluated with MY = its own ad and TARGET = the other. A job without Requirements matches
    nothing, as in HTCondor (condor_submit always writes one)."""
    return (_true(_MY_REQUIREMENTS.eval(scope=job_ad, target=slot_ad))
            and _true(_MY_REQUIREMENTS.eval(scope=slot_ad, target=job_ad)))


def _true(value: object) -> bool:
    """ClassAd truth as the negotiator's EvalBool has it: true, or a non-zero number."""
    if isinstance(value, bool):
        return value
    number = _number(value)
    return number is not None and number != 0


def _number(value: object) -> float | None:
    """An evaluated value as a number, or None. classad2's UNDEFINED and ERROR are an IntEnum
    (2 and 1), and booleans are ints in Python: neither is a ClassAd number."""
    if isinstance(value, (bool, classad2.Value)) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _rank(job_ad: classad2.ClassAd, slot_ad: classad2.ClassAd) -> float:
    """The job's Rank of the slot: a number, true as 1; anything else (undefined, a string) 0."""
    value = _MY_RANK.eval(scope=job_ad, target=slot_ad)
    if isinstance(value, bool):
        return float(value)
    return _number(value) or 0.0


# ------------------------------------------------------------------------------------ analysis

def conjuncts(expression: str) -> list[str]:
    """The clauses of a ClassAd expression that is a conjunction ``A && B && ...``: top-level
    ``&&`` operands, outer parentheses removed, nested conjunctions such as ``(A && B) && C``
    flattened; an expression that is no conjunction is its own single clause.

    classad2 does not expose the parse tree, so this splits the text classad2 unparses. Parentheses,
    brackets and braces nest; string literals ("...") and quoted attribute names ('...') are skipped
    with their backslash escapes. Only ``||`` and ``?:`` bind more loosely than ``&&``: with either
    at the top level the expression is not a conjunction.
    """
    inner = _strip_parentheses(expression.strip())
    cuts = []
    for i, depth in _unquoted(inner):
        if depth:
            continue
        pair = inner[i:i + 2]
        if pair == "||" or (inner[i] == "?" and inner[i - 1] != "="):  # `=?=` is not `?:`
            return [inner]
        if pair == "&&" and (not cuts or cuts[-1] != i - 1):
            cuts.append(i)
    if not cuts:
        return [inner]
    parts, start = [], 0
    for cut in cuts:
        parts.append(inner[start:cut])
        start = cut + 2
    parts.append(inner[start:])
    return [clause for part in parts for clause in conjuncts(part)]


def _unquoted(text: str) -> Iterator[tuple[int, int]]:
    """(index, nesting depth) of each character of ``text`` outside string literals and quoted
    attribute names; a bracket counts at the depth outside it."""
    depth = 0
    quote = ""
    escaped = False
    for i, c in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
            continue
        if c in "\"'":
            quote = c
            continue
        if c in ")]}":
            depth -= 1
        yield i, depth
        if c in "([{":
            depth += 1


def _strip_parentheses(text: str) -> str:
    """``text`` without the parentheses that enclose all of it, however many pairs."""
    while text.startswith("(") and all(depth > 0 for i, depth in _unquoted(text) if 0 < i < len(text) - 1):
        text = text[1:-1].strip()
    return text


def analyze(job_ad: classad2.ClassAd, pool: Pool) -> str:
    """Why the job does (not) match the pool's slots, in the manner of ``condor_q -better-analyze``.

    It shows the job's Requirements clause by clause with how many slots each matches (a clause
    that matches no slot is the one to fix), what the job requests and how many slots have that
    much, and a summary in which each slot counts once, under the first reason it cannot run the
    job: the job's Requirements, the slot's START, too small, busy; the rest can run it now.
    """
    job = _job_name(job_ad)
    slots = pool.slots
    total = len(slots)
    by_requirements = [_true(_MY_REQUIREMENTS.eval(scope=job_ad, target=s.ad)) for s in slots]
    by_start = [_true(_MY_START.eval(scope=s.ad, target=job_ad)) for s in slots]
    fits = {r: [_true(e.eval(scope=s.ad, target=job_ad)) for s in slots] for r, e in _FIT_EXPRS.items()}

    rejected_by_job = rejected_by_start = too_small = busy = available = 0
    short = dict.fromkeys(_FITS, 0)
    for i, slot in enumerate(slots):
        if not by_requirements[i]:
            rejected_by_job += 1
        elif not by_start[i]:
            rejected_by_start += 1
        elif not all(fits[r][i] for r in _FITS):
            too_small += 1
            for r in _FITS:
                short[r] += not fits[r][i]
        elif slot.busy:
            busy += 1
        else:
            available += 1

    if available:
        verdict = f"{job.capitalize()} can run now on {available} of the {total} slots of the pool."
    elif busy:
        verdict = f"{job.capitalize()} matches {busy} of the {total} slots of the pool, all busy: it waits for one."
    else:
        verdict = f"{job.capitalize()} matches none of the {total} slots of the pool."
    if job_ad.get("JobStatus") == 2:  # running: condor_q says so rather than what it waits for
        host = job_ad.get("RemoteHost")
        verdict = f"{job.capitalize()} is running{f' on {host}' if host else ''}: it waits for no slot."
    elif job_ad.get("JobStatus") == 5:  # held: condor_q says so first, with the hold reason
        verdict = (f"{job.capitalize()} is held, and is matched only once released (hold reason: "
                   f"{job_ad.get('HoldReason', 'none given')}). Released, it {verdict.split(' ', 2)[2]}")
    lines = [verdict, ""]
    lines += _requirements_section(job_ad, job, slots)
    lines += _requests_section(job_ad, job, total, fits)
    width = len(str(total))
    lines.append(f"Of the {total} slots of the pool,")
    for count, text in (
        (rejected_by_job, "are rejected by your job's Requirements"),
        (rejected_by_start, "reject your job because of their START expression"),
        (too_small, "are too small for your job's requests" + _shortfalls(short)),
        (busy, "match but are busy running other jobs"),
        (available, "are able to run your job"),
    ):
        lines.append(f"    {count:>{width}} {text}")
    lines.append("")
    sites = (f"{site.name} ({site.slots} slot{'s' * (site.slots != 1)})" for site in pool.sites)
    lines.append("Sites: " + ", ".join(sites))
    return "\n".join(lines) + "\n"


def _job_name(job_ad: classad2.ClassAd) -> str:
    cluster, proc = job_ad.get("ClusterId"), job_ad.get("ProcId")
    return f"job {cluster}.{proc}" if cluster is not None and proc is not None else "the job"


def _requirements_section(job_ad: classad2.ClassAd, job: str, slots: Sequence[Slot]) -> list[str]:
    if "Requirements" not in job_ad:
        return [f"{job.capitalize()} has no Requirements expression, so it matches no slot "
                "(condor_submit always writes one).", ""]
    requirements = job_ad.lookup("Requirements")
    lines = [f"The Requirements expression of {job} is", "", f"    {_one_line(str(requirements))}", ""]
    defined = [name for name in job_ad.internalRefs(requirements) if name]  # classad2 answers [""] for none
    if defined:
        lines += [f"{job.capitalize()} defines the attributes it uses:", ""]
        lines += [f"    {name} = {_one_line(str(job_ad.lookup(name)))}" for name in defined]
        lines.append("")
    clauses = conjuncts(str(requirements))
    lines += ["which reduces to these conditions:" if len(clauses) > 1 else "which is one condition:", ""]
    lines += ["         Slots", "Step    Matched  Condition", "-----  --------  ---------"]
    for step, clause in enumerate(clauses):
        expr = classad2.ExprTree(clause)
        matched = sum(_true(expr.eval(scope=job_ad, target=s.ad)) for s in slots)
        note = "   <- matches no slot" if slots and not matched else ""
        lines.append(f"{f'[{step}]':<5}  {matched:>8}  {_one_line(clause)}{note}")
    lines.append("")
    return lines


def _requests_section(job_ad: classad2.ClassAd, job: str, total: int, fits: Mapping[str, list[bool]]) -> list[str]:
    """Each request as the job writes it, with its value when it is an expression that has one
    without a slot (one that reads TARGET has a value per slot, and the counts tell the rest)."""
    lines = [f"{job.capitalize()} requests:", ""]
    width = max(len(request) for request, _, _ in _REQUESTS)
    for request, resource, unit in _REQUESTS:
        raw = job_ad.get(request, classad2.Value.Undefined)
        if raw is classad2.Value.Undefined:
            shown = f"undefined, taken as {1 if resource == 'Cpus' else 0}{unit}"
        elif isinstance(raw, classad2.ExprTree):
            value = raw.eval(scope=job_ad)
            shown = _one_line(str(raw))
            if _number(value) is not None:
                shown += f", which is {_value(value)}{unit}"
        elif _number(raw) is not None:
            shown = f"{_value(raw)}{unit}"
        else:
            shown = f"{_value(raw)}, not a number"
        lines.append(f"    {request:<{width}} = {shown}; {sum(fits[resource])} of {total} slots have enough {resource}")
    lines.append("")
    return lines


def _shortfalls(short: Mapping[str, int]) -> str:
    parts = [f"{count} lack {resource}" for resource, count in short.items() if count]
    return f" ({', '.join(parts)})" if parts else ""


def _value(value: object) -> str:
    """A value classad2 evaluated, written as the ClassAd language writes it."""
    if isinstance(value, classad2.Value):
        return value.name.lower()
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return classad2.quote(value)
    return str(value)


def _one_line(text: str) -> str:
    """classad2 unparses lists and nested ads over several lines; a table row needs one."""
    return re.sub(r"\n\s*", " ", text)


# ------------------------------------------------------------------------------------ configuration

def load_pool(path: str | os.PathLike[str] | None, execute_dir: str | os.PathLike[str]) -> Pool:
    """The pool described by the TOML file at ``path``, or, when ``path`` is None, this machine's
    pool (:func:`default_pool`), whose slot disks share the free space of ``execute_dir``."""
    if path is None:
        return default_pool(execute_dir)
    file = os.fspath(path)
    try:
        return _pool(read_toml(file), file)
    except OSError as e:
        raise PoolConfigError(f"{file}: cannot read the pool file: {e.strerror}") from None
    except TomlError as e:
        raise PoolConfigError(str(e)) from None


def pool_file_stamp(path: str | os.PathLike[str]) -> int | None:
    """The pool file's modification time (ns), None if there is none: a daemon keeps the stamp of
    the file it read, so that a later edit, which it does not read, can be told to the user."""
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return None


def default_pool(execute_dir: str | os.PathLike[str]) -> Pool:
    """This machine as one site, :data:`DEFAULT_SITE`, divided as a startd divides a machine into
    static slots: one slot per CPU, each with an equal share of the free disk.  Each slot advertises
    what a CMS glidein pilot offers a job (:data:`GLIDEIN_CPUS`, :data:`GLIDEIN_MEMORY_MB`), or the
    CPU's share of memory where that is larger."""
    slots, memory, disk = _machine_share(execute_dir)
    return Pool([Site(DEFAULT_SITE, slots=slots, cpus=GLIDEIN_CPUS, memory=max(memory, GLIDEIN_MEMORY_MB),
                      disk=disk)])


def _machine_share(execute_dir: str | os.PathLike[str]) -> tuple[int, int, int]:
    """(slots, MB, KB): one slot per CPU, and each slot's share of MemTotal and of the free disk
    of ``execute_dir``. Without /proc/meminfo (not Linux) a slot gets :data:`DEFAULT_MEMORY_MB`."""
    slots = os.cpu_count() or 1
    try:
        with open(_MEMINFO, encoding="ascii") as f:
            total_kb = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
        memory = max(1, total_kb // 1024 // slots)
    except (OSError, StopIteration, ValueError, IndexError):
        memory = DEFAULT_MEMORY_MB
    disk = max(1, shutil.disk_usage(execute_dir).free // 1024 // slots)
    return slots, memory, disk


def parse_pool(text: str, file: str) -> Pool:
    """The pool described by ``text``, the TOML content of ``file`` (named in errors). ::

        [[site]]                     # one table per site, in the order the matchmaker tries them
        name = "T2_CH_CERN"          # required; GLIDEIN_CMSSite of every slot of the site
        slots = 4                    # default 1
        cpus = 1                     # per slot, default 1
        memory = 2000                # MB per slot, default 2000 (CRAB's default job memory)
        disk = 10000000              # KB per slot, default 20000000 (CRAB's disk limit)
        start = 'TARGET.RequestMemory <= 2000'   # the slot's START, MY = slot, TARGET = job; default true
        speed = 1.5                  # CPU speed relative to 1.0 (simulated grid), default 1.0
        failures = [                 # the site's failure profile (simulated grid), default none
          {probability = 0.1, exitCode = 8021},    # 10 % of job attempts fail with exit code 8021
          {probability = 0.05, memoryMB = 3000},   # 5 % grow to 3000 MB of resident memory
        ]                            # at most one failure per attempt: probabilities add up to <= 1
        [site.attributes]            # extra ClassAd attributes with literal values
        Speed = 1.5
        OpSys = "LINUX"              # OpSys and Arch default to this machine's
        [site.expressions]           # extra ClassAd attributes whose values are expressions
        IsFast = 'Speed > 1'

    Defaults are constants, not measured, so that a pool file means the same pool on every
    machine. Every problem raises :class:`PoolConfigError` naming the file and the key, as
    ``pool.toml: site[2].memory: ...``, sites counted from 1; unknown keys are errors.
    """
    try:
        document = parse_toml(text, file)
    except TomlError as e:
        raise PoolConfigError(str(e)) from None
    return _pool(document, file)


def _pool(document: dict, file: str) -> Pool:
    for key in document:
        if key != "site":
            raise PoolConfigError(f"{file}: {key}: unknown key; the file holds only [[site]] tables")
    tables = document.get("site")
    example = '[[site]]\nname = "T2_CH_CERN"\nslots = 4'
    if tables is None or tables == []:
        raise PoolConfigError(f"{file}: no [[site]] table; a pool needs at least one site, for example\n{example}")
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise PoolConfigError(f"{file}: site: must be an array of tables, written [[site]], got {_show(tables)}")

    sites: list[Site] = []
    for number, table in enumerate(tables, start=1):
        site = _parse_site(table, f"{file}: site[{number}]")
        if sum(other.slots for other in sites) + site.slots > MAX_SLOTS:
            raise PoolConfigError(f"{file}: site[{number}].slots: the sites have more than {MAX_SLOTS} slots in "
                                  "all; a pool has at most that many")
        for other_number, other in enumerate(sites, start=1):
            if other.name.lower() == site.name.lower():
                raise PoolConfigError(
                    f'{file}: site[{number}].name: "{site.name}" is already the name of site[{other_number}]; '
                    "site names must differ (also in case: they make the machine names)")
        sites.append(site)
    return Pool(sites)


def _parse_site(table: Mapping[str, object], where: str) -> Site:
    for key in table:
        if key not in _SITE_KEYS:
            hint = did_you_mean(key, _SITE_KEYS)
            raise PoolConfigError(f"{where}.{key}: unknown key; {hint}a [[site]] table holds "
                                  + ", ".join(_SITE_KEYS[:-2]) + ", [site.attributes] and [site.expressions]")
    if "name" not in table:
        raise PoolConfigError(f'{where}.name: missing; every site needs a name such as "T2_CH_CERN"')
    name = table["name"]
    if not isinstance(name, str) or not _SITE_NAME.match(name):
        raise PoolConfigError(f'{where}.name: must be a site name of letters, digits, "_" and "-" '
                              f"(it goes into comma-separated site lists), got {_show(name)}")
    slots = _positive(table, "slots", where, "", 1)
    if slots > MAX_SLOTS:
        raise PoolConfigError(f"{where}.slots: {slots} slots; a pool has at most {MAX_SLOTS} (each is a "
                              "process that can run at once on this machine)")
    cpus = _positive(table, "cpus", where, "", 1)
    memory = _positive(table, "memory", where, " (MB)", DEFAULT_MEMORY_MB)
    disk = _positive(table, "disk", where, " (KB)", DEFAULT_DISK_KB)
    start = table.get("start", "true")
    if not isinstance(start, str):
        raise PoolConfigError(f"{where}.start: must be a string holding a ClassAd expression, got {_show(start)}")
    _check_expression(start, f"{where}.start")
    speed = _speed(table, where)
    failures = _failures(table, where)

    attributes = _table(table, "attributes", where)
    expressions = _table(table, "expressions", where)
    seen: dict[str, str] = {}
    for section, values in (("attributes", attributes), ("expressions", expressions)):
        for attr, value in values.items():
            key = f"{where}.{section}.{attr}"
            if not _ATTRIBUTE_NAME.match(attr):
                raise PoolConfigError(f'{key}: not a ClassAd attribute name (letters, digits and "_", '
                                      "not starting with a digit)")
            if attr.lower() in _RESERVED:
                raise PoolConfigError(f"{key}: {_RESERVED[attr.lower()]}")
            if attr.lower() in seen:
                raise PoolConfigError(f"{key}: the same ClassAd attribute as {seen[attr.lower()]} "
                                      "(attribute names ignore case); keep one")
            seen[attr.lower()] = f"{section}.{attr}"
            if isinstance(value, str) and "\0" in value:
                raise PoolConfigError(f"{key}: holds a NUL character (\\u0000); ClassAd strings cannot")
            if section == "attributes":
                if not isinstance(value, (str, int, float, bool)):
                    raise PoolConfigError(f"{key}: must be a string, number or boolean, got {_show(value)}; "
                                          "write other ClassAd values as text in [site.expressions]")
                if isinstance(value, int):
                    _check_int64(value, key)
            if section == "expressions":
                if not isinstance(value, str):
                    raise PoolConfigError(f"{key}: must be a string holding a ClassAd expression, got {_show(value)}")
                _check_expression(value, key)
    return Site(name, slots, cpus, memory, disk, start, attributes, expressions, speed, failures)


def _speed(table: Mapping[str, object], where: str) -> float:
    value = table.get("speed", 1.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise PoolConfigError(f"{where}.speed: must be a positive number, the site's CPU speed relative to 1.0 "
                              f"(1.5 runs jobs 1.5 times as fast), got {_show(value)}")
    return float(value)


def _failures(table: Mapping[str, object], where: str) -> tuple[SiteFailure, ...]:
    value = table.get("failures", [])
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise PoolConfigError(f"{where}.failures: must be an array of tables, such as {_FAILURE_EXAMPLE}, "
                              f"got {_show(value)}")
    failures = []
    for number, entry in enumerate(value, start=1):
        at = f"{where}.failures[{number}]"
        for key in entry:
            if key not in _FAILURE_KEYS:
                hint = did_you_mean(key, _FAILURE_KEYS)
                raise PoolConfigError(f"{at}.{key}: unknown key; {hint}a failure holds probability and "
                                      "one of exitCode and memoryMB")
        if "probability" not in entry:
            raise PoolConfigError(f"{at}.probability: missing; give the share of job attempts that fail, "
                                  "from 0 to 1, such as probability = 0.1")
        probability = entry["probability"]
        if isinstance(probability, bool) or not isinstance(probability, (int, float)) or not 0 <= probability <= 1:
            raise PoolConfigError(f"{at}.probability: must be a number from 0 to 1, got {_show(probability)}")
        effects = [key for key in ("exitCode", "memoryMB") if key in entry]
        if len(effects) != 1:
            got = " and ".join(effects) if effects else "neither"
            raise PoolConfigError(f"{at}: give exactly one of exitCode (the payload fails with it) and memoryMB "
                                  f"(the payload grows to that much memory), got {got}")
        effect = effects[0]
        amount = entry[effect]
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount < 2**31:
            what = "an exit code" if effect == "exitCode" else "a memory size in MB"
            raise PoolConfigError(f"{at}.{effect}: must be {what}, a whole number from 1 to 2147483647, "
                                  f"got {_show(amount)}")
        failures.append(SiteFailure(float(probability), exit_code=entry.get("exitCode"),
                                    memory_mb=entry.get("memoryMB")))
    total = math.fsum(f.probability for f in failures)
    if total > 1 + 1e-9:
        raise PoolConfigError(f"{where}.failures: the probabilities add up to {total:g}; they may add up to at "
                              "most 1, since one draw per job attempt picks at most one failure")
    return tuple(failures)


def _positive(table: Mapping[str, object], key: str, where: str, unit: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PoolConfigError(f"{where}.{key}: must be a positive integer{unit}, got {_show(value)}")
    _check_int64(value, f"{where}.{key}")
    return value


def _check_int64(value: int, key: str) -> None:
    """tomllib reads integers of any size; ClassAd integers, like TOML's by its spec, have 64 bits."""
    if not -2**63 <= value < 2**63:
        raise PoolConfigError(f"{key}: {value} does not fit in a 64-bit ClassAd integer")


def _table(table: Mapping[str, object], key: str, where: str) -> dict:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise PoolConfigError(f"{where}.{key}: must be a table, written [site.{key}], got {_show(value)}")
    return value


def _check_expression(text: str, key: str) -> None:
    """Refuse text that is not exactly one ClassAd expression. classad2.ExprTree would quietly
    keep ``true`` of ``true; Foo = 1``; inside parentheses the rest is a syntax error."""
    try:
        classad2.ExprTree(f"({text})")
    except (classad2.ClassAdException, ValueError):
        raise PoolConfigError(f"{key}: not a ClassAd expression: {_show(text)}") from None


def _show(value: object) -> str:
    """A value as the TOML file writes it, for error messages."""
    return json.dumps(value, ensure_ascii=False, default=str)
