"""Load a CRAB task configuration as ``crab submit`` would accept it, from TOML or ``crabConfig.py``.

Both forms use CRAB's section and parameter names (``General.requestName``, ``Data.unitsPerJob``,
...), so a user's existing ``crabConfig.py`` loads unchanged and a TOML file reads the same way.
:func:`load_config` returns a frozen :class:`TaskConfig`; anything CRAB would refuse raises
:class:`ConfigError`, whose message starts with the file name and keeps CRAB's wording
("Invalid CRAB configuration: Parameter Data.unitsPerJob must be > 0, not 0.") followed by what
to change.  Sources: CRABClient ``ClientMapping.py`` (names, types, defaults, renamed and
deprecated parameters), ``Commands/SubCommand.py`` and ``Commands/submit.py`` (client checks),
``JobType/Analysis.py`` (psetName, splitting names, input data), CRABServer ``Regexps.py`` (site,
request name, extraJDL syntax) and ``DagmanSubmitter.checkMemoryWalltime`` (memory cap).

A ``crabConfig.py`` is executed, as ``crab submit`` does, with fake ``CRABClient.UserUtilities``
and ``WMCore.Configuration`` modules present in ``sys.modules`` only while it runs, so no CMS
software is needed.  Executing it runs the user's code: load configs in the user's own process
(the CLI), not in a shared daemon.

Where CRAB leaves room, or crabtui differs, and why:

* Every parameter CRAB knows is accepted (a real ``crabConfig.py`` must load).  Those with no
  effect on a simulated grid (``General.workArea``, ``Data.publication``, ``Data.outLFNDirBase``,
  ``JobType.outputFiles``, ...) are type-checked and kept in :attr:`TaskConfig.ignored`, so the
  caller can say they were ignored.  Those that would change which data a task reads or how it
  runs (``Data.userInputFiles``, ``Data.runRange``, ``Site.requireAccelerator``, ...) are refused
  when set to anything but CRAB's default: crabtui would otherwise run a different task than CRAB.
* ``JobType.psetName`` or ``JobType.scriptExe`` (the issue's ``JobType.executable`` is accepted as a
  crabtui alias) must be given; both together are allowed, as in CRAB, where the script runs
  instead of cmsRun with the pset at hand.  CRAB always requires psetName; crabtui does not, since
  its payload is a simulated cmsRun or the script, and never reads the pset.  The script must
  exist (CRAB's check); the pset need not.
* Relative paths (psetName, scriptExe, lumiMask) are resolved against the config file's directory,
  not the current directory as in CRAB, so a task loads the same from anywhere.
* ``General.requestName`` may be omitted: CRAB then names the task after the time of submission
  (its project directory is ``crab_YYYYMMDD_HHMMSS``), and so does this loader, with
  ``request_name = "YYYYMMDD_HHMMSS"``.  Allowed characters are those of CRABServer's RX_TASKNAME
  (letters, digits, ``-``, ``_``, ``:``), at most 100 (the client's limit).
* ``Data.splitting`` is required, although CRAB defaults it to ``Automatic``: crabtui's Automatic
  splitting is the next issue's work, so silently choosing it would be a surprise.  Automatic is
  accepted when named, with CRAB's rules (unitsPerJob 180..2700 minutes, default 480; no
  ``JobType.maxJobRuntimeMin``).  ``EventBased`` is refused, as for CRAB's Analysis job type.
* ``Data.inputDataset`` is required: crabtui reads datasets from its catalogue and supports no
  ``Data.userInputFiles``.  Whether the dataset exists is for the caller to check (catalogue).
* ``Site.storageSite`` is required, as in CRAB, unless ``General.transferOutputs`` and
  ``General.transferLogs`` are both false; it gets no default, so the file stays valid for real
  CRAB.  The embedded pool's own site is ``T2_XX_Local``.
* ``JobType.maxMemoryMB`` is 30..max(3000, numCores x 2500) MB: CRAB's submit-time cap, and the
  lower limit of ``crab resubmit --maxmemory``.  ``JobType.maxJobRuntimeMin`` is 60..20160 minutes,
  the ``crab resubmit --maxjobruntime`` range (CRAB's client has no submit-time range; its task
  worker lowers values above 2750 to 2750 with a warning, which is the task worker's business).
* ``Data.totalUnits`` must be an integer >= 0 (0: everything).  CRAB also accepts a float.
* Empty or ``None`` values count as absent, as CRAB's ``getattr(..., None)`` reads them.
* ``Data.lumiMask`` must be a local JSON file (no URL) holding a non-empty object; its ranges are
  sorted and merged, as LumiList does.
* crabtui's own ``Debug`` parameters: ``timeScale`` (simulated seconds per real second, > 0,
  default 1) and ``failurePlan`` (see :class:`PlannedFailure`).  For one job, an entry for the
  exact attempt takes precedence over a ``"*"`` entry; two entries for the same job and attempt
  are refused.  List entries in messages are counted from 1.  ``automaticBlacklist`` sets the
  automatic site blacklist's thresholds (:class:`engine.crab.ap.sites.Thresholds`), a table of
  ``completedJobs``, ``successfulJobs``, ``siteFailures`` (whole numbers >= 0) and
  ``siteSuccessRate`` (0..1); those not given keep seed 000's 10, 5, 5 and 0.5.
* ``Site.ignoreGlobalBlacklist`` (CRAB's) lets the task's jobs run at globally blacklisted sites.
"""

from __future__ import annotations

import datetime
import difflib
import getpass
import json
import math
import os
import re
import runpy
import sys
import threading
import tomllib
import types
from dataclasses import dataclass, field
from typing import Any

from engine.crab.ap.sites import CONFIG_KEYS, Thresholds
from engine.crab.ap.stageout import PERMANENT, RECOVERABLE, STAGEOUT_CODES

__all__ = ["ConfigError", "PlannedFailure", "TaskConfig", "load_config", "SPLITTING_ALGORITHMS"]

SPLITTING_ALGORITHMS = ("FileBased", "LumiBased", "EventAwareLumiBased", "Automatic")
"""What ``Data.splitting`` may be: CRAB's Analysis job type's algorithms plus Automatic."""

DEFAULT_MAX_MEMORY_MB = 2000  # ClientMapping 'maxmemory'
DEFAULT_MAX_JOB_RUNTIME_MIN = 1250  # ClientMapping 'maxjobruntime'
DEFAULT_PRIORITY = 10  # ClientMapping 'priority'
DEFAULT_AUTOMATIC_UNITS = 480  # ClientMapping 'algoargs': minutes per job for Automatic
MIN_MEMORY_MB = 30  # crab resubmit --maxmemory
MAX_MEMORY_SINGLE_CORE = 3000  # CRABServer ServerUtilities
MAX_MEMORY_PER_CORE = 2500
MIN_RUNTIME_MIN, MAX_RUNTIME_MIN = 60, 20160  # crab resubmit --maxjobruntime
AUTOMATIC_UNITS_RANGE = (180, 2700)  # CRABClient submit.py
REQUEST_NAME_LIMIT = 100  # CRABClient submit.py
_UNITS = {"FileBased": "files", "LumiBased": "lumi sections", "EventAwareLumiBased": "events"}


class ConfigError(Exception):
    """A configuration ``crab submit`` would refuse.

    ``str(error)`` is the whole message, starting with the file (``FILE:LINE:`` where a line is
    known).  ``path``, ``parameter`` ("Section.name") and ``line`` let a UI point at the problem.
    """

    def __init__(self, message: str, *, path: str | None = None, parameter: str | None = None,
                 line: int | None = None):
        super().__init__(message)
        self.path = path
        self.parameter = parameter
        self.line = line


@dataclass(frozen=True, slots=True)
class PlannedFailure:
    """One ``Debug.failurePlan`` entry: what the simulated grid does to one attempt of one job.

    ``attempt`` counts every execution of the job id from 1, across automatic retries and
    resubmissions; ``None`` (``"*"`` in the config) means every attempt.  Exactly one of the
    effects is set: the payload exits with ``exit_code``, the job is held with HoldReasonCode
    ``hold_code``, the payload uses ``memory_mb`` of memory (and is killed if over its request),
    or the job succeeds and the stage-out of its outputs fails with exit code ``stageout``
    (one of :data:`engine.crab.ap.stageout.STAGEOUT_CODES`).
    """

    job: str
    attempt: int | None
    exit_code: int | None = None
    hold_code: int | None = None
    memory_mb: int | None = None
    stageout: int | None = None


@dataclass(frozen=True, kw_only=True)
class TaskConfig:
    """A validated CRAB task configuration, one field per parameter crabtui acts on.

    Fields are grouped by CRAB section; defaults are CRAB's (ClientMapping.py).  Paths are
    absolute.  ``ignored`` maps "Section.name" to the value of each CRAB parameter that was set
    but has no effect in crabtui.
    """

    source: str  # the configuration file, absolute
    # General
    request_name: str
    transfer_outputs: bool = True
    transfer_logs: bool = False
    # JobType
    pset_name: str | None = None
    script_exe: str | None = None
    script_args: tuple[str, ...] = ()
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    max_job_runtime_min: int = DEFAULT_MAX_JOB_RUNTIME_MIN
    num_cores: int = 1
    priority: int = DEFAULT_PRIORITY
    # Data
    input_dataset: str
    splitting: str
    units_per_job: int
    total_units: int = 0  # 0: all
    lumi_mask_file: str | None = None
    lumi_mask: dict[int, list[tuple[int, int]]] | None = None  # run -> sorted, merged lumi ranges
    # Site
    storage_site: str | None = None
    site_whitelist: tuple[str, ...] = ()
    site_blacklist: tuple[str, ...] = ()
    ignore_global_blacklist: bool = False
    # Debug
    extra_jdl: tuple[str, ...] = ()
    time_scale: float = 1.0  # simulated seconds per real second
    failure_plan: tuple[PlannedFailure, ...] = ()
    automatic_blacklist: Thresholds = Thresholds()
    # CRAB parameters given that crabtui does not act on
    ignored: dict[str, Any] = field(default_factory=dict)

    def planned_failure(self, job: str, attempt: int) -> PlannedFailure | None:
        """The failure planned for this attempt (from 1) of job ``job``, if any; exact beats "*"."""
        every = None
        for entry in self.failure_plan:
            if entry.job == job:
                if entry.attempt == attempt:
                    return entry
                if entry.attempt is None:
                    every = entry
        return every


# --- the parameters -------------------------------------------------------------------------
# kind: how a value is checked; use: USED (a TaskConfig field), IGNORED (kept in `ignored`),
# UNSUPPORTED (refused unless it has CRAB's default value, i.e. is false or empty).
USED, IGNORED, UNSUPPORTED = "used", "ignored", "unsupported"

_PARAMETERS: dict[str, tuple[str, str]] = {
    "General.requestName": ("str", USED),
    "General.transferOutputs": ("bool", USED),
    "General.transferLogs": ("bool", USED),
    "General.activity": ("str", IGNORED),
    "General.failureLimit": ("int", IGNORED),
    "General.workArea": ("str", IGNORED),
    "General.instance": ("str", IGNORED),
    "General.restHost": ("str", IGNORED),
    "General.dbInstance": ("str", IGNORED),
    "JobType.pluginName": ("str", USED),
    "JobType.psetName": ("str", USED),
    "JobType.scriptExe": ("str", USED),
    "JobType.executable": ("str", USED),  # crabtui's alias of scriptExe (the name)
    "JobType.scriptArgs": ("strlist", USED),
    "JobType.maxMemoryMB": ("int", USED),
    "JobType.maxJobRuntimeMin": ("int", USED),
    "JobType.numCores": ("int", USED),
    "JobType.priority": ("int", USED),
    "JobType.outputFiles": ("strlist", IGNORED),
    "JobType.inputFiles": ("strlist", IGNORED),
    "JobType.pyCfgParams": ("strlist", IGNORED),
    "JobType.allowUndistributedCMSSW": ("bool", IGNORED),
    "JobType.sendVenvFolder": ("bool", IGNORED),
    "JobType.sendExternalFolder": ("bool", IGNORED),
    "JobType.disableAutomaticOutputCollection": ("bool", IGNORED),
    "JobType.externalPluginFile": ("str", UNSUPPORTED),
    "JobType.generator": ("str", UNSUPPORTED),
    "JobType.copyCatTaskname": ("str", UNSUPPORTED),
    "JobType.copyCatInstance": ("str", IGNORED),
    "JobType.copyCatWorkdir": ("str", UNSUPPORTED),
    "Data.inputDataset": ("str", USED),
    "Data.splitting": ("str", USED),
    "Data.unitsPerJob": ("int", USED),
    "Data.totalUnits": ("int", USED),
    "Data.lumiMask": ("str", USED),
    "Data.allowNonValidInputDataset": ("bool", IGNORED),
    "Data.inputDBS": ("str", IGNORED),
    "Data.outLFNDirBase": ("str", IGNORED),
    "Data.publication": ("bool", IGNORED),
    "Data.publishDBS": ("str", IGNORED),
    "Data.outputDatasetTag": ("str", IGNORED),
    "Data.outputPrimaryDataset": ("str", UNSUPPORTED),
    "Data.userInputFiles": ("strlist", UNSUPPORTED),
    "Data.useParent": ("bool", UNSUPPORTED),
    "Data.secondaryInputDataset": ("str", UNSUPPORTED),
    "Data.ignoreLocality": ("bool", UNSUPPORTED),
    "Data.partialDataset": ("bool", UNSUPPORTED),
    "Data.inputBlocks": ("strlist", UNSUPPORTED),
    "Data.runRange": ("str", UNSUPPORTED),
    "Data.lumisPerFile": ("int", UNSUPPORTED),
    "Site.storageSite": ("str", USED),
    "Site.whitelist": ("strlist", USED),
    "Site.blacklist": ("strlist", USED),
    "Site.ignoreGlobalBlacklist": ("bool", USED),
    "Site.requireAccelerator": ("bool", UNSUPPORTED),
    "Site.acceleratorParams": ("dict", UNSUPPORTED),
    "User.voRole": ("str", IGNORED),
    "User.voGroup": ("str", IGNORED),
    "Debug.extraJDL": ("strlist", USED),
    "Debug.timeScale": ("number", USED),  # crabtui
    "Debug.failurePlan": ("tablelist", USED),  # crabtui
    "Debug.automaticBlacklist": ("dict", USED),  # crabtui
    "Debug.oneEventMode": ("bool", UNSUPPORTED),
    "Debug.scheddName": ("str", IGNORED),
    "Debug.collector": ("str", IGNORED),
}
_SECTIONS = ("General", "JobType", "Data", "Site", "User", "Debug")  # UserUtilities.config()

_RENAMED = {  # ClientMapping.renamedParams: old -> (new, since)
    "General.transferOutput": ("General.transferOutputs", None),
    "General.saveLogs": ("General.transferLogs", None),
    "Data.outlfn": ("Data.outLFNDirBase", "v3.3.16"),
    "Data.outLFN": ("Data.outLFNDirBase", "v3.3.16"),
    "Data.dbsUrl": ("Data.inputDBS", None),
    "Data.publishDbsUrl": ("Data.publishDBS", None),
    "Data.userInputFile": ("Data.userInputFiles", None),
    "JobType.numcores": ("JobType.numCores", None),
    "JobType.maxmemory": ("JobType.maxMemoryMB", None),
    "JobType.maxjobruntime": ("JobType.maxJobRuntimeMin", None),
    "JobType.allowNonProductionCMSSW": ("JobType.allowUndistributedCMSSW", "v3.3.16"),
    "Data.secondaryDataset": ("Data.secondaryInputDataset", "v3.3.1511"),
    "Data.primaryDataset": ("Data.outputPrimaryDataset", "v3.3.1511"),
    "Data.publishDataName": ("Data.outputDatasetTag", "v3.3.1511"),
}
_DEPRECATED = {  # ClientMapping.deprecatedParams
    "JobType.sendPythonFolder": "Now pythonFolder is always added to sandbox",
    "JobType.eventsPerLumi": "Use Data.lumisPerFile instead",
}

_KIND_NAMES = {"str": "string", "int": "integer", "bool": "boolean", "strlist": "list of strings",
               "dict": "dictionary", "number": "number", "tablelist": "list of tables"}
_KIND_EXAMPLES = {"str": "a quoted string", "int": "a whole number without quotes, e.g. 10",
                  "bool": "true or false (True or False in Python)",
                  "strlist": 'a list of quoted strings, e.g. ["T2_CH_CERN"]',
                  "dict": "a table of keys and values", "number": "a number without quotes, e.g. 60",
                  "tablelist": 'a list of tables, e.g. [{job = "2", attempt = 1, exitCode = 8021}]'}

# CRABServer Regexps.py
_RX_TASKNAME_CHARS = re.compile(r"[a-zA-Z0-9\-_:]+")
_RX_CMSSITE = re.compile(r"(?=.{0,255}$)T[0-3](_[A-Z]{2}((_[A-Za-z0-9]+)|_?\*$)+|_?\*)")
_RX_CMSSITE_EXACT = re.compile(r"T[0-3]_[A-Z]{2}(_[A-Za-z0-9]+)+")  # crab resubmit's, no wildcard
_RX_DATASET = re.compile(r"(/[a-zA-Z0-9.\-_]{1,100}){3}")  # RX_BLOCK without the '#block' part
_RX_SCRIPTARGS = re.compile(r'[+a-zA-Z0-9\-.,_:?/"]+ ?= ?[a-zA-Z0-9\-=.,_:?/"()]+')
_RX_JOBID = re.compile(r"\d+(-\d+)?")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def load_config(path: str | os.PathLike[str], *, now: datetime.datetime | None = None) -> TaskConfig:
    """Read and validate the CRAB configuration at ``path`` (``*.toml`` or ``*.py``).

    ``now`` names the task when the config has no General.requestName (default: the local time).
    Raises :class:`ConfigError` for anything ``crab submit`` would refuse.
    """
    source = os.path.abspath(os.fspath(path))
    if not os.path.isfile(source):
        raise ConfigError(f"{source}: CRAB configuration file {source} not found.", path=source)
    suffix = os.path.splitext(source)[1].lower()
    if suffix == ".toml":
        raw = _read_toml(source)
    elif suffix == ".py":
        raw = _read_python(source)
    else:
        raise ConfigError(f"{source}: unknown kind of CRAB configuration file; name it *.toml (TOML) "
                          f"or *.py (a crabConfig.py).", path=source)
    return _Builder(source, raw, now).build()


# --- TOML ------------------------------------------------------------------------------------

def _read_toml(source: str) -> dict[str, dict[str, Any]]:
    try:
        with open(source, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+), column (\d+)", str(exc))
        line = int(m.group(1)) if m else None
        where = f"{source}:{line}" if line else source
        raise ConfigError(f"{where}: invalid TOML: {exc}. Fix the syntax there "
                          f"(sections are [General], [JobType], [Data], [Site], [Debug]).",
                          path=source, line=line) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot read the CRAB configuration: {exc}.", path=source) from None
    raw: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if not isinstance(value, dict):
            homes = [p.split(".")[0] for p in _PARAMETERS if p.split(".")[1] == key]
            hint = f" under [{homes[0]}]" if homes else " under its section, e.g. [General]"
            raise ConfigError(f"{source}: Invalid CRAB configuration: Parameter {key} is outside any "
                              f"section; put it{hint}.", path=source, parameter=key)
        raw[key] = value
    return raw


# --- crabConfig.py ---------------------------------------------------------------------------

class ConfigSection:
    """WMCore's ConfigSection, as far as a crabConfig.py uses it: parameters set as attributes."""

    def __init__(self, name: str | None = None):
        object.__setattr__(self, "_internal_name", name)
        object.__setattr__(self, "_internal_parameters", {})

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_internal"):
            object.__setattr__(self, name, value)
            return
        self._internal_parameters[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._internal_parameters.pop(name, None)
        object.__delattr__(self, name)

    def section_(self, name: str) -> ConfigSection:
        if name not in self._internal_parameters:
            setattr(self, name, ConfigSection(name))
        return getattr(self, name)

    def listSections_(self) -> list[str]:  # noqa: N802 (WMCore's name)
        return list(self._internal_parameters)

    def dictionary_(self) -> dict[str, Any]:
        return dict(self._internal_parameters)


class Configuration:
    """WMCore's Configuration: a set of named sections created with ``section_``."""

    def __init__(self) -> None:
        object.__setattr__(self, "_internal_sections", [])

    def __setattr__(self, name: str, value: Any) -> None:
        if not isinstance(value, ConfigSection):
            raise AttributeError(f"Can only add ConfigSection objects to Configuration; use "
                                 f"config.section_({name!r}) and set parameters in it")
        if name not in self._internal_sections:
            self._internal_sections.append(name)
        object.__setattr__(self, name, value)

    def section_(self, name: str) -> ConfigSection:
        if name not in self._internal_sections:
            setattr(self, name, ConfigSection(name))
        return getattr(self, name)

    def listSections_(self) -> list[str]:  # noqa: N802 (WMCore's name)
        return list(self._internal_sections)


def _crab_config() -> Configuration:
    """CRABClient.UserUtilities.config(): a Configuration with every section CRAB recognizes."""
    config = Configuration()
    for name in _SECTIONS:
        config.section_(name)
    return config


def _username(*_args: Any, **_kwargs: Any) -> str:
    """getUsername / getUsernameFromCRIC: the local user stands in for the CMS user name."""
    return getpass.getuser()


def _fake_modules() -> dict[str, types.ModuleType]:
    crab = types.ModuleType("CRABClient")
    crab.__path__ = []
    utils = types.ModuleType("CRABClient.UserUtilities")
    utils.config = _crab_config
    utils.getUsername = utils.getUsernameFromCRIC = utils.getUsernameFromSiteDB = _username
    crab.UserUtilities = utils
    wmcore = types.ModuleType("WMCore")
    wmcore.__path__ = []
    wmconfig = types.ModuleType("WMCore.Configuration")
    wmconfig.Configuration = Configuration
    wmconfig.ConfigSection = ConfigSection
    wmcore.Configuration = wmconfig
    return {"CRABClient": crab, "CRABClient.UserUtilities": utils,
            "WMCore": wmcore, "WMCore.Configuration": wmconfig}


_MODULES_LOCK = threading.Lock()  # sys.modules is process-wide: one crabConfig.py at a time
_ABSENT = object()


def _read_python(source: str) -> dict[str, dict[str, Any]]:
    fakes = _fake_modules()
    with _MODULES_LOCK:
        saved = {name: sys.modules.get(name, _ABSENT) for name in fakes}
        sys.modules.update(fakes)
        try:
            # CRAB imports the file as a module named after it, so `if __name__ == "__main__"` blocks
            # (multi-submission scripts) do not run; neither do they here.
            namespace = runpy.run_path(source, run_name=os.path.splitext(os.path.basename(source))[0])
        except SyntaxError as exc:
            where = f"{exc.filename or source}:{exc.lineno}" if exc.lineno else source
            raise ConfigError(f"{where}: Error while loading CRAB configuration {source}: "
                              f"SyntaxError: {exc.msg}. Fix the Python syntax there.",
                              path=source, line=exc.lineno) from None
        except (Exception, SystemExit) as exc:  # the file's own code failed: report where
            line = None
            tb = exc.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == source:
                    line = tb.tb_lineno
                tb = tb.tb_next
            where = f"{source}:{line}" if line else source
            raise ConfigError(f"{where}: Error while loading CRAB configuration {source}: "
                              f"{type(exc).__name__}: {exc}. Only CRABClient.UserUtilities (config, "
                              f"getUsername) and WMCore.Configuration (Configuration) are available "
                              f"to a crabConfig.py here.", path=source, line=line) from None
        finally:
            for name, module in saved.items():
                if module is _ABSENT:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
    config = namespace.get("config")
    if not isinstance(config, Configuration):
        what = "defines no 'config'" if config is None else f"sets 'config' to a {type(config).__name__}"
        raise ConfigError(f"{source}: Unable to load Configuration object from file {source}: it {what}. "
                          f"Start it with 'from CRABClient.UserUtilities import config' and "
                          f"'config = config()'.", path=source)
    return {name: getattr(config, name).dictionary_() for name in config.listSections_()}


# --- validation --------------------------------------------------------------------------------

def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """ " Did you mean X?" for the closest choice (ignoring case), or ""."""
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return f" Did you mean {lowered[match[0]]}?" if match else ""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Builder:
    """Validates the sections read from either form and builds the TaskConfig."""

    def __init__(self, source: str, raw: dict[str, dict[str, Any]], now: datetime.datetime | None):
        self.source = source
        self.base = os.path.dirname(source)
        self.raw = raw
        self.now = now
        self.values: dict[str, Any] = {}

    def fail(self, message: str, parameter: str | None = None, invalid: bool = True) -> None:
        prefix = "Invalid CRAB configuration: " if invalid else ""
        raise ConfigError(f"{self.source}: {prefix}{message}", path=self.source, parameter=parameter)

    # - names and types -

    def check_names_and_types(self) -> None:
        for section, params in self.raw.items():
            if section not in _SECTIONS:
                self.fail(f"Section '{section}' is not known.{_suggest(section, _SECTIONS)} "
                          f"CRAB's sections are {', '.join(_SECTIONS)}.", section)
            for param, value in params.items():
                name = f"{section}.{param}"
                if name in _RENAMED:
                    new, since = _RENAMED[name]
                    since = f" starting from CRAB {since}" if since else ""
                    self.fail(f"Parameter {name} has been renamed to {new}{since}; please change your "
                              f"configuration file accordingly.", name)
                if name in _DEPRECATED:
                    self.fail(f"Parameter {name} has been deprecated. Please remove it. "
                              f"Reason: {_DEPRECATED[name]}.", name)
                if name not in _PARAMETERS:
                    same = [p for p in _PARAMETERS if p.split(".")[1].lower() == param.lower()]
                    hint = f" Did you mean {same[0]}?" if same else _suggest(name, list(_PARAMETERS))
                    self.fail(f"Parameter {name} is not known.{hint or ' Check its spelling against the CRAB configuration documentation.'}",
                              name)
                if value is None or value == "" or value == [] or value == ():
                    continue  # CRAB reads these as unset
                self.values[name] = self.check_type(name, value)

    def check_type(self, name: str, value: Any) -> Any:
        kind = _PARAMETERS[name][0]
        ok = {"str": isinstance(value, str), "int": _is_int(value), "bool": isinstance(value, bool),
              "strlist": isinstance(value, (list, tuple)), "dict": isinstance(value, dict),
              "number": (_is_int(value) or isinstance(value, float)),
              "tablelist": isinstance(value, (list, tuple))}[kind]
        if ok and kind == "number" and not math.isfinite(value):
            ok = False
        if not ok:
            self.fail(f"Parameter {name} requires a value of type {_KIND_NAMES[kind]} (while a value "
                      f"of type {type(value).__name__} was given: {_short(value)}). "
                      f"Give it {_KIND_EXAMPLES[kind]}.", name)
        if kind == "strlist":
            for i, item in enumerate(value, 1):
                if not isinstance(item, str):
                    self.fail(f"Parameter {name} has to be a list of strings; entry {i} is "
                              f"{_short(item)}. Quote it.", name)
            return tuple(value)
        if kind == "tablelist":
            return tuple(value)
        return value

    # - the whole -

    def build(self) -> TaskConfig:
        self.check_names_and_types()
        v = self.values
        for name, (_, use) in _PARAMETERS.items():
            if use == UNSUPPORTED and v.get(name):
                self.fail(f"Parameter {name} ({_short(v[name])}) is a CRAB parameter that crabtui does "
                          f"not implement; remove it (crabtui would run a different task than CRAB).",
                          name)
        ignored = {name: value for name, value in v.items() if _PARAMETERS[name][1] == IGNORED}

        request_name = self.request_name()
        splitting, units = self.splitting()
        pset, script = self.job_type(splitting)
        cores = v.get("JobType.numCores", 1)
        whitelist = self.sites("Site.whitelist")
        blacklist = self.sites("Site.blacklist")
        lumi_file, lumi_mask = self.lumi_mask()
        return TaskConfig(
            source=self.source,
            request_name=request_name,
            transfer_outputs=v.get("General.transferOutputs", True),
            transfer_logs=v.get("General.transferLogs", False),
            pset_name=pset,
            script_exe=script,
            script_args=self.jdl_like("JobType.scriptArgs"),
            max_memory_mb=v.get("JobType.maxMemoryMB", DEFAULT_MAX_MEMORY_MB),
            max_job_runtime_min=v.get("JobType.maxJobRuntimeMin", DEFAULT_MAX_JOB_RUNTIME_MIN),
            num_cores=cores,
            priority=v.get("JobType.priority", DEFAULT_PRIORITY),
            input_dataset=self.input_dataset(),
            splitting=splitting,
            units_per_job=units,
            total_units=self.total_units(),
            lumi_mask_file=lumi_file,
            lumi_mask=lumi_mask,
            storage_site=self.storage_site(),
            site_whitelist=whitelist,
            site_blacklist=blacklist,
            ignore_global_blacklist=v.get("Site.ignoreGlobalBlacklist", False),
            extra_jdl=self.jdl_like("Debug.extraJDL"),
            time_scale=self.time_scale(),
            failure_plan=self.failure_plan(),
            automatic_blacklist=self.automatic_blacklist(),
            ignored=ignored,
        )

    # - General -

    def request_name(self) -> str:
        name = self.values.get("General.requestName")
        if name is None:  # CRAB: crab_<YYYYMMDD_HHMMSS>
            return (self.now or datetime.datetime.now()).strftime("%Y%m%d_%H%M%S")
        p = "General.requestName"
        if "/" in name:
            self.fail(f"The '/' character is not accepted in the requestName parameter ({name!r}). If "
                      f"your intention was to specify the location of your task, please use the "
                      f"General.workArea parameter.", p, invalid=False)
        if len(name) > REQUEST_NAME_LIMIT:
            self.fail(f"Parameter {p} should not be longer than {REQUEST_NAME_LIMIT} characters "
                      f"({len(name)} given). Shorten it.", p)
        if not _RX_TASKNAME_CHARS.fullmatch(name):
            bad = sorted({c for c in name if not _RX_TASKNAME_CHARS.fullmatch(c)})
            self.fail(f"Parameter {p} ({name!r}) contains characters CRAB does not accept: "
                      f"{''.join(bad)!r}. Use only letters, digits, '-', '_' and ':'.", p)
        return name

    # - JobType -

    def job_type(self, splitting: str) -> tuple[str | None, str | None]:
        v = self.values
        plugin = v.get("JobType.pluginName", "Analysis")
        if plugin.upper() != "ANALYSIS":
            self.fail(f"Parameter JobType.pluginName has an invalid value ({plugin!r}). crabtui supports "
                      f"only the Analysis job type; remove the parameter or set it to 'Analysis'.",
                      "JobType.pluginName")
        if "JobType.scriptExe" in v and "JobType.executable" in v:
            self.fail("Only one of JobType.scriptExe or JobType.executable parameters can be specified "
                      "(executable is crabtui's other name for scriptExe); remove one.",
                      "JobType.executable")
        script_param = "JobType.executable" if "JobType.executable" in v else "JobType.scriptExe"
        script = v.get(script_param)
        if script is not None:
            script = self.path(script)
            if not os.path.isfile(script):
                self.fail(f"Cannot find the file {script} specified in the {script_param} configuration "
                          f"parameter. Give a path to an existing script (relative paths are read from "
                          f"the configuration file's directory).", script_param, invalid=False)
        pset = v.get("JobType.psetName")
        if pset is None and script is None:
            self.fail("Parameter JobType.psetName not specified. Set JobType.psetName (the simulated "
                      "cmsRun runs) or JobType.scriptExe (your script runs).", "JobType.psetName")
        for name, low in (("JobType.numCores", 1), ("JobType.priority", 1)):
            if name in v and v[name] < low:
                self.fail(f"Parameter {name} must be >= {low}, not {v[name]}.", name)
        cores = v.get("JobType.numCores", 1)
        memory = v.get("JobType.maxMemoryMB", DEFAULT_MAX_MEMORY_MB)
        top = max(MAX_MEMORY_SINGLE_CORE, cores * MAX_MEMORY_PER_CORE)
        if memory > top:
            self.fail(f"Task requests {memory} MB of memory, above the allowed maximum of {top} for a "
                      f"{cores} core(s) job. Lower JobType.maxMemoryMB to {top} or less, or raise "
                      f"JobType.numCores.", "JobType.maxMemoryMB", invalid=False)
        if memory < MIN_MEMORY_MB:
            self.fail(f"Parameter JobType.maxMemoryMB ({memory} MB) must be between {MIN_MEMORY_MB} "
                      f"and {top} MB.", "JobType.maxMemoryMB")
        p = "JobType.maxJobRuntimeMin"
        if p in v:
            if splitting == "Automatic":
                self.fail("The 'maxJobRuntimeMin' parameter is not compatible with the 'Automatic' "
                          "splitting mode. Remove it (Data.unitsPerJob sets the job length).", p,
                          invalid=False)
            if not MIN_RUNTIME_MIN <= v[p] <= MAX_RUNTIME_MIN:
                self.fail(f"Parameter {p} ({v[p]} minutes) must be between {MIN_RUNTIME_MIN} and "
                          f"{MAX_RUNTIME_MIN} minutes.", p)
        return (self.path(pset) if pset is not None else None), script

    def path(self, value: str) -> str:
        return os.path.normpath(os.path.join(self.base, os.path.expanduser(value)))

    def jdl_like(self, name: str) -> tuple[str, ...]:
        """extraJDL and scriptArgs: 'name=value' entries, as CRABServer's RX_SCRIPTARGS accepts."""
        items = self.values.get(name, ())
        for i, item in enumerate(items, 1):
            if not _RX_SCRIPTARGS.fullmatch(item):
                self.fail(f"Parameter {name} entry {i} ({item!r}) is not of the form 'name=value' that "
                          f"CRAB accepts (pattern {_RX_SCRIPTARGS.pattern}). Write it like '+Foo=1'.",
                          name)
        return items

    # - Data -

    def input_dataset(self) -> str:
        p = "Data.inputDataset"
        dataset = self.values.get(p)
        if dataset is None:
            self.fail("Analysis job type requires an input dataset to run on. Set Data.inputDataset "
                      "to a dataset name (crabtui dataset list shows them).", p)
        if not _RX_DATASET.fullmatch(dataset):
            self.fail(f"Parameter {p} ({dataset!r}) is not a CMS dataset name. Write it as "
                      f"/Primary/Processed/TIER, e.g. '/TTbar/Run2024-v1/AODSIM'.", p)
        return dataset

    def splitting(self) -> tuple[str, int]:
        v = self.values
        p = "Data.splitting"
        algo = v.get(p)
        if algo is None:
            self.fail(f"Parameter {p} not specified. Set it to one of {', '.join(SPLITTING_ALGORITHMS)}.", p)
        if algo not in SPLITTING_ALGORITHMS:
            self.fail(f"Parameter {p} has an invalid value ({algo!r}).{_suggest(algo, SPLITTING_ALGORITHMS)} "
                      f"Analysis job type only supports the following splitting algorithms: "
                      f"{', '.join(SPLITTING_ALGORITHMS)}.", p)
        u = "Data.unitsPerJob"
        units = v.get(u)
        if units is None:
            if algo != "Automatic":
                self.fail(f"Parameter {u} is mandatory for '{algo}' splitting mode. Set it to the number "
                          f"of {_UNITS[algo]} per job.", u)
            units = DEFAULT_AUTOMATIC_UNITS
        if units <= 0:
            self.fail(f"Parameter {u} must be > 0, not {units}.", u)
        low, high = AUTOMATIC_UNITS_RANGE
        if algo == "Automatic" and not low <= units <= high:
            self.fail(f"In case of Automatic splitting, the {u} parameter must be in the [{low}, {high}] "
                      f"minutes range. You asked for {units} minutes.", u)
        return algo, units

    def total_units(self) -> int:
        total = self.values.get("Data.totalUnits", 0)
        if total < 0:
            self.fail(f"Parameter Data.totalUnits must be >= 0, not {total}. Use 0 (or leave it out) "
                      f"to process the whole dataset.", "Data.totalUnits")
        return total

    def lumi_mask(self) -> tuple[str | None, dict[int, list[tuple[int, int]]] | None]:
        p = "Data.lumiMask"
        given = self.values.get(p)
        if given is None:
            return None, None
        if _URL.match(given):
            self.fail(f"Failed to load lumi mask {given} ({p}): crabtui reads lumi masks from local files "
                      f"only. Download it and give its path.", p, invalid=False)
        path = self.path(given)

        def bad(reason: str) -> None:
            self.fail(f"Failed to load lumi mask {path} ({p}): {reason}. A lumi mask is a JSON object "
                      f'mapping run numbers to [first, last] lumi ranges, e.g. {{"316187": [[1, 37], '
                      f"[40, 90]]}}.", p, invalid=False)

        if not os.path.isfile(path):
            bad("no such file")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            bad(f"not valid JSON ({exc})")
        if not isinstance(data, dict) or not data:
            bad("it is not a JSON object with at least one run" if not isinstance(data, dict)
                else "it selects no runs")
        mask: dict[int, list[tuple[int, int]]] = {}
        for run_text, ranges in data.items():
            if not (run_text.isascii() and run_text.isdigit() and int(run_text) > 0):
                bad(f"{run_text!r} is not a run number")
            if not isinstance(ranges, list) or not ranges:
                bad(f"run {run_text}: {_short(ranges)} is not a non-empty list of [first, last] ranges")
            pairs = []
            for r in ranges:
                if not (isinstance(r, list) and len(r) == 2 and all(_is_int(x) for x in r)
                        and 1 <= r[0] <= r[1]):
                    bad(f"run {run_text}: {_short(r)} is not a [first, last] lumi range with "
                        f"1 <= first <= last")
                pairs.append((r[0], r[1]))
            merged: list[tuple[int, int]] = []
            for first, last in sorted(pairs):
                if merged and first <= merged[-1][1] + 1:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], last))
                else:
                    merged.append((first, last))
            mask[int(run_text)] = merged
        return path, dict(sorted(mask.items()))

    # - Site -

    def sites(self, name: str) -> tuple[str, ...]:
        items = self.values.get(name, ())
        for i, site in enumerate(items, 1):
            if not _RX_CMSSITE.fullmatch(site):
                self.fail(f"Parameter {name} entry {i} ({site!r}) is not a CMS site name. Write names like "
                          f"'T2_CH_CERN', or patterns like 'T2_US_*'.", name)
        return items

    def storage_site(self) -> str | None:
        v = self.values
        p = "Site.storageSite"
        site = v.get(p)
        if site is None:
            if v.get("General.transferOutputs", True) or v.get("General.transferLogs", False):
                self.fail(f"Parameter {p} is missing. Set it to the site that receives the outputs "
                          f"(the embedded pool's is 'T2_XX_Local'), or set General.transferOutputs and "
                          f"General.transferLogs to false.", p)
            return None
        if not _RX_CMSSITE_EXACT.fullmatch(site):
            self.fail(f"Parameter {p} ({site!r}) is not a CMS site name. Write one site like "
                      f"'T2_CH_CERN' (no wildcards).", p)
        return site

    # - Debug -

    def time_scale(self) -> float:
        scale = self.values.get("Debug.timeScale", 1)
        if scale <= 0:
            self.fail(f"Parameter Debug.timeScale must be > 0, not {scale}. It is how many simulated "
                      f"seconds pass per real second; 1 is real time.", "Debug.timeScale")
        return float(scale)

    def automatic_blacklist(self) -> Thresholds:
        p = "Debug.automaticBlacklist"
        values = {}
        for key, value in self.values.get(p, {}).items():
            if key not in CONFIG_KEYS:
                self.fail(f"Parameter {p}: key {key!r} is not known.{_suggest(key, list(CONFIG_KEYS))} The keys "
                          f"are {', '.join(CONFIG_KEYS)}.", p)
            if key == "siteSuccessRate":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                    self.fail(f"Parameter {p}: siteSuccessRate must be a number from 0 to 1, such as 0.5 "
                              f"(got {_short(value)}).", p)
                value = float(value)
            elif not (_is_int(value) and value >= 0):
                self.fail(f"Parameter {p}: {key} must be a whole number >= 0 (got {_short(value)}).", p)
            values[CONFIG_KEYS[key]] = value
        return Thresholds(**values)

    def failure_plan(self) -> tuple[PlannedFailure, ...]:
        p = "Debug.failurePlan"
        plan: list[PlannedFailure] = []
        seen: dict[tuple[str, int | None], int] = {}
        keys = ("job", "attempt", "exitCode", "hold", "memoryMB", "stageout")
        effects = ("exitCode", "hold", "memoryMB", "stageout")
        for i, entry in enumerate(self.values.get(p, ()), 1):
            def bad(reason: str) -> None:
                self.fail(f"Parameter {p} entry {i} ({_short(entry)}): {reason}.", p)

            if not isinstance(entry, dict):
                bad('it is not a table; write {job = "2", attempt = 1, exitCode = 8021}')
            for key in entry:
                if key not in keys:
                    bad(f"key {key!r} is not known.{_suggest(key, keys)} The keys are {', '.join(keys)}")
            job = entry.get("job")
            if not (isinstance(job, str) and _RX_JOBID.fullmatch(job)):
                bad(f'"job" must be a job id as a string, such as "2" (got {_short(job)})')
            attempt = entry.get("attempt")
            if attempt == "*":
                attempt = None
            elif not (_is_int(attempt) and attempt >= 1):
                bad(f'"attempt" must be a whole number >= 1 or "*" for every attempt (got {_short(attempt)})')
            given = [k for k in effects if k in entry]
            if len(given) != 1:
                bad(f"give exactly one of exitCode, hold, memoryMB and stageout (got {', '.join(given) or 'none'})")
            value = entry[given[0]]
            low = 0 if given[0] == "exitCode" else 1
            if not (_is_int(value) and value >= low):
                bad(f"{given[0]} must be a whole number >= {low} (got {_short(value)})")
            if given[0] == "stageout" and value not in STAGEOUT_CODES:
                bad(f"stageout must be one of CRAB's stage-out exit codes: {', '.join(map(str, RECOVERABLE))} "
                    f"(recoverable), {', '.join(map(str, PERMANENT))} (permanent; 60317 hangs until the ASO "
                    f"timeout) (got {value})")
            if (job, attempt) in seen:
                which = "every attempt" if attempt is None else f"attempt {attempt}"
                bad(f"entry {seen[(job, attempt)]} already plans {which} of job {job}; keep one")
            seen[(job, attempt)] = i
            plan.append(PlannedFailure(job=job, attempt=attempt,
                                       exit_code=entry.get("exitCode"), hold_code=entry.get("hold"),
                                       memory_mb=entry.get("memoryMB"), stageout=entry.get("stageout")))
        return tuple(plan)

