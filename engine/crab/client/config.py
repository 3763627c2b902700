"""Load a CRAB task configuration as ``crab submit`` would accept it, from TOML or ``crabConfig.py``.

Both forms use CRAB's section and parameter names (``General.requestName``, ``Data.unitsPerJob``,
...), so a user's existing ``crabConfig.py`` loads unchanged and a TOML file reads the same way.
:func:`load_config` returns a frozen :class:`TaskConfig`; anything CRAB would refuse raises
:class:`ConfigError`, whose message is one line that starts with the file name and keeps CRAB's
wording ("Invalid CRAB configuration: Parameter Data.unitsPerJob must be > 0, not 0.") followed by
what to change.  Sources: CRABClient ``ClientMapping.py`` (names, types, defaults, renamed and
deprecated parameters), ``Commands/SubCommand.py`` and ``Commands/submit.py`` (client checks),
``JobType/Analysis.py`` and ``JobType/PrivateMC.py`` (job types, splitting names, input data),
CRABServer ``Regexps.py`` (site, request name, extraJDL, user file syntax), ``RESTUserWorkflow``
(the primary dataset), ``TaskWorker/Actions/Splitter.py`` (totalUnits) and
``DagmanSubmitter.checkMemoryWalltime`` (memory cap).  A ``crabConfig.py`` is run by
:mod:`engine.crab.client.crab_config_py`; the lumi mask and run range are read by
:mod:`engine.crab.client.lumi_mask`.

Where CRAB leaves room, or crabtui differs, and why:

* Every parameter CRAB knows is accepted (a real ``crabConfig.py`` must load).  Those with no
  effect on a simulated grid (``Data.publication``,
  ``JobType.outputFiles`` without a script, ``Data.partialDataset``: every block of the catalogue is
  on disk, ...)
  are type-checked and kept in :attr:`TaskConfig.ignored`.  ``Data.outLFNDirBase`` and
  ``Data.outputDatasetTag`` name the outputs' directory, as in CRAB, published or not; the first
  must be under ``/store/user/``, ``/store/group/`` or ``/store/local/``, as CRAB's server requires, and
  ``General.instance`` one of CRAB's instances, as its client requires.  The few that crabtui cannot simulate
  (``Site.requireAccelerator``: the pool's slots have no GPUs; ``Debug.oneEventMode``;
  ``JobType.externalPluginFile`` and the CopyCat and Recover job types) are refused when set to
  anything but CRAB's default, each with the reason.
* ``Data.useParent`` gives each job its input files' parents, ``Data.secondaryInputDataset`` the
  secondary dataset's files holding the same lumis (:mod:`engine.crab.taskworker.parents`); as in
  CRAB they cannot go together, and need ``Data.inputDataset`` (PrivateMC ignores useParent).
* Job types: ``Analysis`` (CRAB's default) reads ``Data.inputDataset`` or ``Data.userInputFiles``
  (which CRAB splits FileBased only, and runs at the whitelisted sites); ``PrivateMC`` generates
  ``Data.totalUnits`` events in jobs of ``Data.unitsPerJob`` (``EventBased`` splitting only),
  ``Data.lumisPerFile`` lumis a job (default 1), as CRAB's client turns it into events per lumi.
* ``Data.splitting`` defaults to ``Automatic``, as in CRAB (ClientMapping and the client's checks
  read a missing value as Automatic), with CRAB's rules: unitsPerJob 180..2700 minutes, default
  480; no ``JobType.maxJobRuntimeMin``.  Other algorithms need ``Data.unitsPerJob``.
* ``Data.totalUnits`` is a number, as the client's type check lets a float through: 0 or below
  means everything; a fraction below 1 is that share of the dataset's files, lumis or events
  (CRAB's Splitter rounds half up; where that rounds to 0, which CRAB would read as "all",
  crabtui takes 1); from 1 up, its whole part.  Automatic splitting ignores it, as CRAB does.
* ``Data.outputPrimaryDataset`` names the output's primary dataset in the output LFN; as in CRAB
  it is refused beside ``Data.inputDataset`` (whose primary dataset names the output), and
  without it a task without input is ``CRAB_PrivateMC`` or ``CRAB_UserFiles``.
* ``Data.ignoreLocality`` runs the jobs at the whitelisted sites of the pool whether they hold
  the data or not; CRAB requires ``Site.whitelist`` with it.  ``Data.runRange`` narrows the lumi
  mask to those runs (or selects whole runs without one), as CRAB's client does.
  ``Data.inputBlocks`` keeps those blocks of the dataset.
* ``JobType.psetName`` is required, as CRABClient's job type plugins require it, also with
  ``JobType.scriptExe`` (the issue's ``JobType.executable`` is accepted as a crabtui alias), where
  the script runs instead of cmsRun with the pset at hand.  The script must exist (CRAB's check);
  the pset need not, since the payload is a simulated cmsRun or the script, which never read it.  A script's ``JobType.outputFiles`` (file names, as
  CRAB's server checks them) are what its job must write and what is staged out.  Every ``JobType.inputFiles`` entry (a file, directory
  or glob pattern) must match, as CRABClient's UserTarball requires; a script's sandbox
  (:mod:`engine.crab.client.sandbox`) ships them.
* Relative paths (psetName, scriptExe, lumiMask, inputFiles) are resolved against the config file's
  directory, so a task loads the same from anywhere, and where nothing is there, against the
  directory the command was typed in, as CRAB resolves them.
* ``General.workArea`` is where task submit makes crab's project directory
  (:mod:`engine.crab.client.project`), against the directory the command runs in, as in CRAB.
* ``General.requestName`` may be omitted: CRAB then names the task after the time of submission
  (its project directory is ``crab_YYYYMMDD_HHMMSS``), and so does this loader, with
  ``request_name = "YYYYMMDD_HHMMSS"``.  Allowed characters are those of CRABServer's RX_TASKNAME
  (letters, digits, ``-``, ``_``, ``:``), at most 100 (the client's limit).
* Whether ``Data.inputDataset`` is in the catalogue is for the caller to see; one it does not know
  is read as a synthetic stand-in (:mod:`engine.crab.taskworker.stand_ins`).
* ``Site.storageSite`` is required, as in CRAB, unless ``General.transferOutputs`` and
  ``General.transferLogs`` are both false; it gets no default, so the file stays valid for real
  CRAB.  Any CMS site name is a storage site (:mod:`engine.crab.grid.storage`).
* ``JobType.maxMemoryMB`` is 30..max(3000, numCores x 2500) MB: CRAB's submit-time cap, and the
  lower limit of ``crab resubmit --maxmemory``.  ``JobType.maxJobRuntimeMin`` is 60..20160 minutes,
  the ``crab resubmit --maxjobruntime`` range (CRAB's client has no submit-time range); above
  2750 it is lowered to 2750 with a warning, as CRAB's task worker does at submission.
* Empty or ``None`` values count as absent, as CRAB's ``getattr(..., None)`` reads them.
* crabtui's own ``Debug`` parameters: ``timeScale`` (simulated seconds per real second, > 0,
  default 1) and ``failurePlan`` (see :class:`PlannedFailure`).  For one job, an entry for the
  exact attempt takes precedence over a ``"*"`` entry; two entries for the same job and attempt
  are refused.  List entries in messages are counted from 1.  ``automaticBlacklist`` sets the
  automatic site blacklist's thresholds (:class:`engine.crab.ap.sites.Thresholds`), a table of
  ``completedJobs``, ``successfulJobs``, ``siteFailures`` (whole numbers >= 0) and
  ``siteSuccessRate`` (0..1); those not given keep seed 000's 10, 5, 5 and 0.5.
* ``Site.ignoreGlobalBlacklist`` (CRAB's) lets the task's jobs run at globally blacklisted sites.
* Values CRAB's client passes on unchecked (it checks no types since it runs on Python 3) load as
  CRAB reads them: a whole number written as text for a number parameter (a config that reads
  ``os.environ``), which CRAB's server parses, and 0 or 1 for a flag, sent as ``1 if value else 0``.
  A flag written as text is refused: CRAB would send ``'False'`` as true.
* crab submit's own checks (``submit.validateConfig``): ``Data.publication`` (True by default)
  needs ``General.transferOutputs``; ``Data.inputDBS`` and ``Data.publishDBS`` are CRAB's DBS
  instances; ``General.failureLimit`` gets its deprecation warning.
"""

from __future__ import annotations

import ast
import datetime
import difflib
import glob
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.crab.ap.sites import CONFIG_KEYS, Thresholds
from engine.crab.ap.stageout import PERMANENT, RECOVERABLE, STAGEOUT_CODES
from engine.crab.client.crab_config_py import (SECTIONS, Commands, LoadError, Loaded, SubmitFailed, run_config,
                                              typed_in)
from engine.crab.client.lumi_mask import LumiMask, MaskError, Unreachable, intersect_runs, read_mask
from engine.tomlfile import TomlError, read_toml

__all__ = ["ConfigError", "CrabConfigPy", "PlannedFailure", "Submitter", "TaskConfig", "load_config", "run_crab_config",
           "SPLITTING_ALGORITHMS"]

SPLITTING_ALGORITHMS = ("FileBased", "LumiBased", "EventAwareLumiBased", "Automatic")
"""What ``Data.splitting`` may be for the Analysis job type: its algorithms plus Automatic."""
MC_SPLITTING = ("EventBased",)
"""What ``Data.splitting`` may be for the PrivateMC job type."""
JOB_TYPES = ("Analysis", "PrivateMC")

DEFAULT_MAX_MEMORY_MB = 2000  # ClientMapping 'maxmemory'
DEFAULT_MAX_JOB_RUNTIME_MIN = 1250  # ClientMapping 'maxjobruntime'
DEFAULT_PRIORITY = 10  # ClientMapping 'priority'
DEFAULT_AUTOMATIC_UNITS = 480  # ClientMapping 'algoargs': minutes per job for Automatic
MIN_MEMORY_MB = 30  # crab resubmit --maxmemory
MAX_MEMORY_SINGLE_CORE = 3000  # CRABServer ServerUtilities
MAX_MEMORY_PER_CORE = 2500
MIN_RUNTIME_MIN, MAX_RUNTIME_MIN = 60, 20160  # crab resubmit --maxjobruntime
STD_MAX_JOB_RUNTIME_MIN = 2750  # what a submitted task gets at most (DagmanSubmitter.checkMemoryWalltime)
AUTOMATIC_UNITS_RANGE = (180, 2700)  # CRABClient submit.py
REQUEST_NAME_LIMIT = 100  # CRABClient submit.py
_ONE_FILE_STRINGS = {"JobType.outputFiles"}  # a plain string CRAB's client iterates (Analysis.py) instead of refusing
_DBS = "https://cmsweb.cern.ch/dbs/prod"
DBS_READERS = {alias: f"{_DBS}/{alias}/DBSReader" for alias in ("global", "phys01", "phys02", "phys03")}
DBS_WRITERS = {"phys03": f"{_DBS}/phys03/DBSWriter"}  # CRABClient ClientUtilities.DBSURLS
SERVICE_INSTANCES = ("prod", "preprod", "test2", "test11", "test12", "test14", "other")  # ServerUtilities.py
MAX_LUMIS_PER_FILE = 1000  # CRABClient PrivateMC.py
MAX_JOBS_PER_TASK = 10_000  # CRABServer TaskWorker maxJobsPerTask (also taskworker.splitting's)
_UNITS = {"FileBased": "files", "LumiBased": "lumi sections", "EventAwareLumiBased": "events",
          "EventBased": "events"}
_NO_INPUT_PRIMARY = {"PrivateMC": "CRAB_PrivateMC", "Analysis": "CRAB_UserFiles"}  # CRABServer RESTUserWorkflow


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
    multicrab: bool = False  # a multi-crab script (it uses crabCommand): its module-level config is this
    # General
    request_name: str
    work_area: str | None = None  # General.workArea as written (None: crab's default, the current directory)
    transfer_outputs: bool = True
    transfer_logs: bool = False
    # JobType
    job_type: str = "Analysis"  # or "PrivateMC"
    pset_name: str | None = None
    script_exe: str | None = None
    script_args: tuple[str, ...] = ()
    input_files: tuple[str, ...] = ()  # JobType.inputFiles' matches, absolute: the script's sandbox ships them
    output_files: tuple[str, ...] = ()  # JobType.outputFiles: a script's files to stage out (file names)
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    max_job_runtime_min: int = DEFAULT_MAX_JOB_RUNTIME_MIN
    num_cores: int = 1
    priority: int = DEFAULT_PRIORITY
    # Data
    input_dataset: str | None = None  # None: PrivateMC, or user input files
    user_input_files: tuple[str, ...] = ()  # Data.userInputFiles, duplicates dropped
    primary_dataset: str  # of the output LFN: the input dataset's, Data.outputPrimaryDataset, or CRAB's default
    splitting: str
    units_per_job: int
    total_units: int | float = 0  # <= 0: all; below 1: a share; else a count (events for PrivateMC)
    events_per_lumi: int | None = None  # PrivateMC: Data.unitsPerJob // Data.lumisPerFile
    lumi_mask_file: str | None = None  # Data.lumiMask: a path, or the address it was downloaded from (None: not)
    lumi_mask: LumiMask | None = None  # run -> sorted, merged lumi ranges, within Data.runRange
    run_range: str | None = None
    input_blocks: tuple[str, ...] = ()  # Data.inputBlocks as full block names; (): every block
    ignore_locality: bool = False
    use_parent: bool = False  # Data.useParent: the jobs read their input files' parents too
    secondary_dataset: str | None = None  # Data.secondaryInputDataset: its files holding the input's lumis too
    out_lfn_dir_base: str | None = None  # Data.outLFNDirBase: where the outputs' LFNs start (None: /store/user/<user>)
    output_dataset_tag: str | None = None  # Data.outputDatasetTag: their directory's name (None: crab_<requestName>)
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
    warnings: tuple[str, ...] = ()  # what the user should know of how the task differs from the file, one line each

    def ignored_note(self) -> str | None:
        """One line naming the parameters set that change nothing here, each with why (None if none).
        A flag set to False is left out: it turns off what crabtui does not do anyway (the README's
        own ``Data.publication = False`` drew the note); so is a value that asks for what crabtui
        does anyway (``Data.inputDBS = 'global'``, CRAB's default, by its alias or its address)."""
        named = [name for name, value in self.ignored.items()
                 if value is not False and str(value).rstrip("/") not in _AS_DONE_HERE.get(name, ())]
        if not named:
            return None
        why = "; ".join(f"{name} ({_NO_EFFECT.get(name, 'no effect on a simulated grid')})" for name in named)
        return f"{self.source}: accepted, with no effect here: {why}."

    @property
    def mask_from(self) -> tuple[str, ...]:
        """The parameters that made ``lumi_mask`` (a lumi mask that could not be fetched made nothing)."""
        return tuple(name for name, value in (("Data.lumiMask", self.lumi_mask_file), ("Data.runRange", self.run_range))
                     if value is not None)

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
    "General.workArea": ("str", USED),
    "General.instance": ("str", IGNORED),  # checked against CRAB's instances
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
    "JobType.outputFiles": ("strlist", USED),  # staged for a script; the simulated cmsRun writes its own
    "JobType.inputFiles": ("strlist", USED),
    "JobType.pyCfgParams": ("strlist", IGNORED),
    "JobType.allowUndistributedCMSSW": ("bool", IGNORED),
    "JobType.sendVenvFolder": ("bool", IGNORED),
    "JobType.sendExternalFolder": ("bool", IGNORED),
    "JobType.disableAutomaticOutputCollection": ("bool", IGNORED),
    "JobType.externalPluginFile": ("str", UNSUPPORTED),
    "JobType.generator": ("str", IGNORED),  # the payload reads no LHE file
    "JobType.copyCatTaskname": ("str", IGNORED),  # read by the CopyCat job type only
    "JobType.copyCatInstance": ("str", IGNORED),
    "JobType.copyCatWorkdir": ("str", IGNORED),
    "Data.inputDataset": ("str", USED),
    "Data.splitting": ("str", USED),
    "Data.unitsPerJob": ("int", USED),
    "Data.totalUnits": ("number", USED),
    "Data.lumiMask": ("str", USED),
    "Data.allowNonValidInputDataset": ("bool", IGNORED),
    "Data.inputDBS": ("str", IGNORED),
    "Data.outLFNDirBase": ("str", USED),
    "Data.publication": ("bool", IGNORED),
    "Data.publishDBS": ("str", IGNORED),
    "Data.outputDatasetTag": ("str", USED),
    "Data.outputPrimaryDataset": ("str", USED),
    "Data.userInputFiles": ("strlist", USED),
    "Data.useParent": ("bool", USED),
    "Data.secondaryInputDataset": ("str", USED),
    "Data.ignoreLocality": ("bool", USED),
    "Data.partialDataset": ("bool", IGNORED),  # every block of the catalogue is on disk
    "Data.inputBlocks": ("strlist", USED),
    "Data.runRange": ("str", USED),
    "Data.lumisPerFile": ("int", USED),  # PrivateMC; the Analysis job type ignores it
    "Site.storageSite": ("str", USED),
    "Site.whitelist": ("strlist", USED),
    "Site.blacklist": ("strlist", USED),
    "Site.ignoreGlobalBlacklist": ("bool", USED),
    "Site.requireAccelerator": ("bool", UNSUPPORTED),
    "Site.acceleratorParams": ("dict", IGNORED),  # read only with requireAccelerator
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

_AS_DONE_HERE = {"Data.inputDBS": ("global", DBS_READERS["global"])}  # IGNORED values asking for what is done here

_NO_EFFECT = {  # why an IGNORED parameter changes nothing here, as the submit note says it
    "General.activity": "no CRAB monitoring", "General.failureLimit": "deprecated by CRAB",
    "General.instance": "no CRAB server",
    "General.restHost": "no CRAB server", "General.dbInstance": "no CRAB server",
    "JobType.pyCfgParams": "the simulated cmsRun reads no pset", "JobType.allowUndistributedCMSSW": "no CMSSW release",
    "JobType.sendVenvFolder": "no CMSSW area is shipped", "JobType.sendExternalFolder": "no CMSSW area is shipped",
    "JobType.disableAutomaticOutputCollection": "a job's outputs are its cmsRun's or its script's outputFiles",
    "JobType.generator": "no LHE file is read", "JobType.copyCatTaskname": "CopyCat only",
    "JobType.copyCatInstance": "CopyCat only", "JobType.copyCatWorkdir": "CopyCat only",
    "JobType.outputFiles": "the simulated cmsRun writes its own output; a script's are staged out",
    "Data.allowNonValidInputDataset": "the catalogue's datasets are all valid",
    "Data.inputDBS": "datasets come from crabtui's catalogue", "Data.publication": "nothing is published",
    "Data.publishDBS": "nothing is published",
    "Data.partialDataset": "every block of the catalogue is on disk",
    "Data.lumisPerFile": "PrivateMC only", "Data.inputDataset": "PrivateMC generates its events",
    "Data.useParent": "PrivateMC reads no input", "Site.acceleratorParams": "read with requireAccelerator only",
    "User.voRole": "no grid credential", "User.voGroup": "no grid credential",
    "Debug.scheddName": "the schedd is crabtui's --backend", "Debug.collector": "the schedd is crabtui's --backend",
}
_UNSUPPORTED = {  # why crabtui cannot run a task that sets these
    "JobType.externalPluginFile": "crabtui runs CRAB's own job types (Analysis and PrivateMC), not a job type "
                                  "plugin's code",
    "Site.requireAccelerator": "its jobs must run on GPU slots (request_GPUs), and the embedded pool's slots "
                               "advertise no GPUs",
    "Debug.oneEventMode": "crabtui's payload does not run in CRAB's one-event debugging mode",
}

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

_REMOVED = {  # parameters CRAB's client no longer knows, which older configurations still set
    "Data.publishWithGroupName": "CRAB removed it in 2022 (CRABClient #5173): for outputs under a group's area, set "
                                 "Data.outLFNDirBase = '/store/group/<group>/' instead, and remove it",
    "User.email": "CRAB removed it (CRABClient #4096): CRAB sends no e-mail; remove it",
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
# ServerUtilities.checkOutLFN's prefixes, each followed by a user, group or area name
_RX_OUT_LFN = re.compile(r"/store/(test/rucio/(int/)?user|user|group|local)/[^/]+(/|$)")
# WMCore Lexicon's DATASET_RE, which CRABServer checks inputdata and secondarydata against: a USER
# dataset's processed name (<user>-<outputDatasetTag>-<hash>) is often longer than 100 characters
_RX_DATASET = re.compile(r"/[a-zA-Z0-9\-_]{1,99}/[a-zA-Z0-9.\-_]{1,199}/[A-Z0-9\-]{1,99}")
_RX_PUBLISH_NAME = re.compile(r"([a-zA-Z0-9\-_])+")  # WMCore Lexicon's userProcDSParts['publishdataname']
_RX_USERFILE = re.compile(r"(?=.{0,255}$)([a-zA-Z0-9\-._:?/=]+)")
_RX_PRIMARY_DATASET = re.compile(r"[a-zA-Z][a-zA-Z0-9\-_]*")  # WMCore Lexicon's, as RESTUserWorkflow checks it
_RX_SCRIPTARGS = re.compile(r'[+a-zA-Z0-9\-.,_:?/"]+ ?= ?[a-zA-Z0-9\-=.,_:?/"()]+')
_RX_JOBID = re.compile(r"\d+(-\d+)?")
_RX_ADDFILE = re.compile(r"^(?=.{0,255}$)([a-zA-Z0-9\-\._]+)$")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_dataset_name(name: str) -> bool:
    """Whether ``name`` is one crab submit takes as ``Data.inputDataset`` (so a task may read its stand-in)."""
    return bool(_RX_DATASET.fullmatch(name))


def load_config(path: str | os.PathLike[str], *, now: datetime.datetime | None = None,
                overrides: Sequence[str] = ()) -> TaskConfig:
    """Read and validate the CRAB configuration at ``path`` (``*.toml`` or ``*.py``).

    ``now`` names the task when the config has no General.requestName (default: the local time);
    ``overrides`` are crab submit's ``Section.parameter=value`` arguments (:func:`with_overrides`).
    Raises :class:`ConfigError` for anything ``crab submit`` would refuse.  A crabConfig.py's
    ``crabCommand('submit', config=X)`` calls check ``X`` and submit nothing (see
    :func:`run_crab_config`).
    """
    source = _source(path)
    if _is_py(source):
        return run_crab_config(source, argv=overrides, now=now).module_config(overrides)
    return _Builder(source, with_overrides(source, _read_toml(source), overrides), now).build()


def with_overrides(source: str, sections: dict[str, dict[str, Any]],
                   overrides: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``sections`` with crab submit's ``Section.parameter=value`` arguments set over the file's
    values, as CRAB's client sets them: a string parameter takes the text as it is, any other its
    Python literal (``10``, ``True``, ``['T2_CH_CERN']``)."""
    merged = {name: dict(parameters) for name, parameters in sections.items()}
    for item in overrides:
        name, _, text = item.partition("=")
        section, _, parameter = name.partition(".")
        if _PARAMETERS.get(name, ("str",))[0] == "str":
            value: Any = text
        else:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise ConfigError(f"{source}: {item} (on the command line): {name} takes a Python literal, such "
                                  f"as 10, True or ['T2_CH_CERN']; quote the argument for the shell.",
                                  path=source, parameter=name) from None
        merged.setdefault(section, {})[parameter] = value
    return merged


class Submitter(Protocol):
    """Where a crabConfig.py's ``crabCommand('submit', config=X)`` calls go (:func:`run_crab_config`)."""

    def submit(self, cfg: TaskConfig, wait: bool = False) -> str:
        """Submit ``cfg`` and return its task name, or raise
        :class:`~engine.crab.client.crab_config_py.SubmitFailed` saying why it was not; with
        ``wait``, once the task worker has processed the task, as ``crab submit --wait``."""

    def dry_run(self, cfg: TaskConfig) -> str:
        """Print the jobs ``cfg`` will have and record its task UPLOADED, as ``crab submit --dryrun``,
        and return its name, or raise :class:`~engine.crab.client.crab_config_py.SubmitFailed`
        saying why it would not be submitted."""

    def refused(self, message: str) -> None:
        """Note that a configuration passed to crabCommand was refused, with CRAB's message."""


@dataclass(frozen=True)
class CrabConfigPy:
    """A crabConfig.py that ran (:func:`run_crab_config`)."""

    source: str
    loaded: Loaded
    now: datetime.datetime | None

    def module_config(self, overrides: Sequence[str] = ()) -> TaskConfig:
        """Its module-level ``config``, checked: what ``crab submit`` submits of it, with the
        command line's ``Section.parameter=value`` ``overrides``."""
        if self.loaded.sections is None:
            e = self.loaded.error(self.source)
            raise ConfigError(str(e), path=self.source) from None
        sections = with_overrides(self.source, self.loaded.sections, overrides)
        return _Builder(self.source, sections, self.now, self.loaded.multicrab).build()


def run_crab_config(path: str | os.PathLike[str], submitter: Submitter | None = None, *, main: bool = False,
                    argv: Sequence[str] = (), now: datetime.datetime | None = None,
                    commands: Commands | None = None) -> CrabConfigPy:
    """Run the crabConfig.py at ``path`` as ``crab submit`` imports it (or, with ``main``, as
    ``python FILE ARGV`` runs it; without ``main``, ARGV are crab submit's ``Section.parameter=value``
    arguments, which the file finds in ``sys.argv``).  Each ``crabCommand('submit', config=X)`` call checks ``X`` as
    :func:`load_config` checks a file and hands it to ``submitter``; what CRAB would refuse, and
    what ``submitter`` refuses, reaches the script as CRAB's exceptions.  Without ``submitter``
    nothing is submitted (the ``uniquerequestname`` crabCommand returns is empty).  ``commands``
    are crab's other commands the script may call (``crabCommand('status', dir=...)``).  Raises
    :class:`ConfigError` if the file itself fails."""
    source = _source(path)
    if not _is_py(source):
        raise ConfigError(f"{source}: only a crabConfig.py (*.py) runs as a script.", path=source)

    def submit(sections: dict[str, dict[str, Any]], dryrun: bool = False, wait: bool = False) -> dict[str, str]:
        try:
            cfg = _Builder(source, sections, now).build()
        except ConfigError as e:
            if submitter:
                submitter.refused(str(e))
            raise SubmitFailed(str(e), configuration=True) from None
        if dryrun:  # crabCommand('submit', dryrun=True): crab's dry run, the task left for crab proceed
            return {"requestname": cfg.request_name, "uniquerequestname": submitter.dry_run(cfg) if submitter else ""}
        return {"requestname": cfg.request_name, "uniquerequestname": submitter.submit(cfg, wait) if submitter else ""}

    try:
        loaded = run_config(source, submit, main=main, argv=argv, commands=commands)
    except LoadError as e:
        raise ConfigError(str(e), path=source, line=e.line) from None
    return CrabConfigPy(source, loaded, now)


def _is_py(source: str) -> bool:
    return os.path.splitext(source)[1].lower() == ".py"


def _source(path: str | os.PathLike[str]) -> str:
    source = os.path.abspath(os.fspath(path))
    if not os.path.isfile(source):
        raise ConfigError(f"{source}: CRAB configuration file {source} not found.", path=source)
    if os.path.splitext(source)[1].lower() not in (".py", ".toml"):
        raise ConfigError(f"{source}: unknown kind of CRAB configuration file; name it *.toml (TOML) "
                          f"or *.py (a crabConfig.py).", path=source)
    return source


# --- TOML ------------------------------------------------------------------------------------

def _read_toml(source: str) -> dict[str, dict[str, Any]]:
    try:
        data = read_toml(source)
    except TomlError as exc:
        raise ConfigError(f"{exc}. Fix it there (sections are [General], [JobType], [Data], [Site], [Debug]).",
                          path=source, line=exc.line) from None
    except OSError as exc:
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


# --- validation --------------------------------------------------------------------------------

def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """ " Did you mean X?" for the closest choice (ignoring case), or ""."""
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return f" Did you mean {lowered[match[0]]}?" if match else ""


def _file_name(address: str) -> str:
    """The file name an address ends with (``.../Cert_..._JSON.txt``), or a name for it."""
    name = address.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return name if "." in name else "lumi_mask.json"


def _dbs_choices(urls: dict[str, str]) -> str:
    return ", ".join(f"'{alias}' ('{url}')" for alias, url in urls.items())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_RX_WHOLE_NUMBER = re.compile(r"\s*[-+]?\d+\s*")
_RX_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def _as_crab_reads(kind: str, value: Any) -> Any:
    """``value`` as CRAB reads it where its client lets it through unchecked (since it runs on
    Python 3, SubCommand.validateConfig checks no types): a number written as a string, as a
    configuration that reads ``os.environ`` or ``sys.argv`` sets it, reaches CRAB's server as text
    in the request, which parses it; a flag set to 0 or 1 is sent as ``1 if value else 0``."""
    if kind == "int" and isinstance(value, str) and _RX_WHOLE_NUMBER.fullmatch(value):
        return int(value)
    if kind == "number" and isinstance(value, str) and _RX_NUMBER.fullmatch(value):
        number = float(value)
        return int(number) if number.is_integer() and _RX_WHOLE_NUMBER.fullmatch(value) else number
    if kind == "bool" and _is_int(value) and value in (0, 1):
        return bool(value)
    return value


class _Builder:
    """Validates the sections read from either form and builds the TaskConfig."""

    def __init__(self, source: str, raw: dict[str, dict[str, Any]], now: datetime.datetime | None,
                 multicrab: bool = False):
        self.source = source
        self.base = os.path.dirname(source)
        self.raw = raw
        self.now = now
        self.multicrab = multicrab
        self.values: dict[str, Any] = {}
        self.warnings: list[str] = []

    def fail(self, message: str, parameter: str | None = None, invalid: bool = True) -> None:
        prefix = "Invalid CRAB configuration: " if invalid else ""
        note = (f" (This is a multi-crab script: crabtui task submit submits its module-level config, without what "
                f"its __main__ block sets; 'crabtui task submit --multicrab {self.source}' runs that block and "
                f"submits each config it passes to crabCommand('submit').)" if self.multicrab else "")
        raise ConfigError(f"{self.source}: {prefix}{message}{note}", path=self.source, parameter=parameter)

    # - names and types -

    def check_names_and_types(self) -> None:
        for section, params in self.raw.items():
            if section not in SECTIONS:
                self.fail(f"Section '{section}' is not known.{_suggest(section, SECTIONS)} "
                          f"CRAB's sections are {', '.join(SECTIONS)}.", section)
            for param, value in params.items():
                name = f"{section}.{param}"
                if name in _RENAMED:
                    new, since = _RENAMED[name]
                    since = f" starting from CRAB {since}" if since else ""
                    self.fail(f"Parameter {name} has been renamed to {new}{since}; please change your "
                              f"configuration file accordingly.", name)
                if name in _DEPRECATED:
                    self.fail(f"Parameter {name} has been deprecated. Please remove it. "
                              f"Reason: {_DEPRECATED[name]}.{self.lumis_per_file_hint(name, value)}", name)
                if name in _REMOVED:
                    self.fail(f"Parameter {name} is not known. {_REMOVED[name]}.", name)
                if name not in _PARAMETERS:
                    same = [p for p in _PARAMETERS if p.split(".")[1].lower() == param.lower()]
                    hint = f" Did you mean {same[0]}?" if same else _suggest(name, list(_PARAMETERS))
                    self.fail(f"Parameter {name} is not known.{hint or ' Check its spelling against the CRAB configuration documentation.'}",
                              name)
                if value is None or value == "" or value == [] or value == ():
                    continue  # CRAB reads these as unset
                self.values[name] = self.check_type(name, value)

    def lumis_per_file_hint(self, name: str, value: Any) -> str:
        """For JobType.eventsPerLumi of a PrivateMC task, the Data.lumisPerFile that gives jobs of
        Data.unitsPerJob events as many events per lumi (CRAB's client sets eventsPerLumi = unitsPerJob // lumisPerFile)."""
        units = self.raw.get("Data", {}).get("unitsPerJob")
        private_mc = self.raw.get("JobType", {}).get("pluginName") == "PrivateMC"
        if name != "JobType.eventsPerLumi" or not private_mc or not all(type(n) is int and n > 0 for n in (value, units)):
            return ""
        lumis = max(1, units // value)
        return (f" With Data.unitsPerJob = {units}, Data.lumisPerFile = {lumis} makes lumis of "
                f"{units // lumis} events.")

    def check_type(self, name: str, value: Any) -> Any:
        kind = _PARAMETERS[name][0]
        value = _as_crab_reads(kind, value)
        ok = {"str": isinstance(value, str), "int": _is_int(value), "bool": isinstance(value, bool),
              "strlist": isinstance(value, (list, tuple)) or (isinstance(value, str) and name in _ONE_FILE_STRINGS), "dict": isinstance(value, dict),
              "number": (_is_int(value) or isinstance(value, float)),
              "tablelist": isinstance(value, (list, tuple))}[kind]
        if ok and kind == "number" and not math.isfinite(value):
            ok = False
        if not ok:
            quirk = (" (CRAB's client would send any non-empty string, 'False' included, as true)"
                     if kind == "bool" and isinstance(value, str) else "")
            self.fail(f"Parameter {name} requires a value of type {_KIND_NAMES[kind]} (while a value "
                      f"of type {type(value).__name__} was given: {_short(value)}). "
                      f"Give it {_KIND_EXAMPLES[kind]}{quirk}.", name)
        if kind == "strlist" and isinstance(value, str) and name in _ONE_FILE_STRINGS:
            self.warnings.append(
                f"{self.source}: {name} = {value!r} is a string, not a list: CRAB's client takes it as the list of "
                f"its characters, collecting a file per character, and crabtui as the one file {value!r}. "
                f"Write {name} = [{value!r}].")
            return (value,)
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
                self.fail(f"Parameter {name} ({_short(v[name])}) cannot be simulated: {_UNSUPPORTED[name]}.",
                          name, invalid=False)
        ignored = {name: value for name, value in v.items() if _PARAMETERS[name][1] == IGNORED}

        request_name = self.request_name()
        self.instance()
        job_type = self.plugin()
        splitting, units = self.splitting(job_type)
        dataset, files = self.input_data(job_type, splitting)
        if job_type == "Analysis" and "Data.lumisPerFile" in v:
            ignored["Data.lumisPerFile"] = v["Data.lumisPerFile"]
        if dataset is not None and job_type == "PrivateMC":
            ignored["Data.inputDataset"] = dataset  # CRAB's PrivateMC generates its events and reads no input
        if job_type == "PrivateMC" and v.get("Data.useParent"):
            ignored["Data.useParent"] = True  # no input, no parents
        pset, script = self.job_type()
        output_files = self.output_files()
        if script is None and output_files:
            ignored["JobType.outputFiles"] = output_files  # the simulated cmsRun writes only its own output
        cores = v.get("JobType.numCores", 1)
        whitelist = self.sites("Site.whitelist")
        blacklist = self.sites("Site.blacklist")
        lumi_file, lumi_mask = self.lumi_mask()
        self.check_out_lfn()
        self.check_publication()
        self.check_dbs(dataset)
        if "General.failureLimit" in v:
            self.warnings.append(f"{self.source}: You have specified deprecated parameter 'failureLimit' which will "
                                 f"be removed in the near future (crab submit's warning); crabtui ignores it.")
        return TaskConfig(
            source=self.source,
            multicrab=self.multicrab,
            request_name=request_name,
            work_area=v.get("General.workArea"),
            transfer_outputs=v.get("General.transferOutputs", True),
            transfer_logs=v.get("General.transferLogs", False),
            job_type=job_type,
            pset_name=pset,
            script_exe=script,
            script_args=self.jdl_like("JobType.scriptArgs"),
            input_files=self.input_files(),
            output_files=output_files if script is not None else (),
            max_memory_mb=v.get("JobType.maxMemoryMB", DEFAULT_MAX_MEMORY_MB),
            max_job_runtime_min=v.get("JobType.maxJobRuntimeMin", DEFAULT_MAX_JOB_RUNTIME_MIN),
            num_cores=cores,
            priority=v.get("JobType.priority", DEFAULT_PRIORITY),
            input_dataset=dataset if job_type == "Analysis" else None,
            user_input_files=files,
            primary_dataset=self.primary_dataset(job_type, dataset),
            splitting=splitting,
            units_per_job=units,
            total_units=self.total_units(job_type, units),
            events_per_lumi=self.events_per_lumi(units) if job_type == "PrivateMC" else None,
            lumi_mask_file=lumi_file,
            lumi_mask=lumi_mask,
            run_range=v.get("Data.runRange"),
            input_blocks=self.input_blocks(dataset),
            ignore_locality=self.ignore_locality(),
            use_parent=self.use_parent(job_type, dataset),
            secondary_dataset=self.secondary_dataset(job_type, dataset),
            out_lfn_dir_base=v.get("Data.outLFNDirBase"),
            output_dataset_tag=self.output_dataset_tag(),
            storage_site=self.storage_site(),
            site_whitelist=whitelist,
            site_blacklist=blacklist,
            ignore_global_blacklist=v.get("Site.ignoreGlobalBlacklist", False),
            extra_jdl=self.jdl_like("Debug.extraJDL"),
            time_scale=self.time_scale(),
            failure_plan=self.failure_plan(),
            automatic_blacklist=self.automatic_blacklist(),
            ignored=ignored,
            warnings=tuple(self.warnings),
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

    def output_files(self) -> tuple[str, ...]:
        """JobType.outputFiles, as CRAB's server checks each name (RX_ADDFILE: a file name, no
        directory or pattern).  A script's job must write them; the simulated cmsRun writes only its
        own output file, so without a script they are checked and ignored."""
        p = "JobType.outputFiles"
        names = self.values.get(p, ())
        for i, name in enumerate(names, 1):
            if not _RX_ADDFILE.fullmatch(name):
                self.fail(f"Incorrect 'JobType.outputFiles' parameter. Allowed regexp for each filename: "
                          f"'{_RX_ADDFILE.pattern}' (entry {i}, {name!r}, is not: name a file the job writes in "
                          f"its working directory, without a directory or wildcard).", p, invalid=False)
        return tuple(dict.fromkeys(names))

    def instance(self) -> None:
        """General.instance names the CRAB server: one of CRAB's (none is contacted here), as
        ``crab submit`` refuses any other before it reads the rest (SubCommand.serverInstance)."""
        p = "General.instance"
        name = self.values.get(p)
        if name is not None and name not in SERVICE_INSTANCES:
            self.fail(f"Invalid value \"{name}\" for configuration.{p}; valid values are "
                      f"{', '.join(SERVICE_INSTANCES)}.{_suggest(name, SERVICE_INSTANCES)} 'prod' is CRAB's default; "
                      f"crabtui contacts no CRAB server, so any valid value runs the same.", p, invalid=False)
        if name == "other" and not (self.values.get("General.restHost") and self.values.get("General.dbInstance")):
            self.fail(f"{p} = 'other' needs General.restHost and General.dbInstance (the CRAB server to "
                      f"use); set both, or use instance 'prod'.", p, invalid=False)

    # - JobType -

    def job_type(self) -> tuple[str | None, str | None]:
        v = self.values
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
                          f"the configuration file's directory, then the current one).", script_param, invalid=False)
        pset = v.get("JobType.psetName")
        if pset is None:  # CRABClient's Analysis.validateBasicConfig, for PrivateMC and with a script too
            self.fail("Parameter JobType.psetName not specified. Set JobType.psetName to your CMSSW "
                      "configuration (CRAB requires it also beside JobType.scriptExe, whose script gets it "
                      "as PSet.py).", "JobType.psetName")
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
            if not MIN_RUNTIME_MIN <= v[p] <= MAX_RUNTIME_MIN:
                self.fail(f"Parameter {p} ({v[p]} minutes) must be between {MIN_RUNTIME_MIN} and "
                          f"{MAX_RUNTIME_MIN} minutes.", p)
            if v[p] > STD_MAX_JOB_RUNTIME_MIN:  # DagmanSubmitter.checkMemoryWalltime lowers it
                self.warnings.append(f"{self.source}: Task requests {v[p]} minutes of runtime, but only "
                                     f"{STD_MAX_JOB_RUNTIME_MIN} are guaranteed to be available; {p} is lowered to "
                                     f"{STD_MAX_JOB_RUNTIME_MIN}, as CRAB's task worker lowers it.")
                v[p] = STD_MAX_JOB_RUNTIME_MIN
        return self.path(pset), script

    def input_files(self) -> tuple[str, ...]:
        """JobType.inputFiles, each a file, a directory or a glob pattern that must match, as
        CRABClient's UserTarball requires."""
        found: list[str] = []
        for pattern in self.values.get("JobType.inputFiles", ()):
            matches = sorted(glob.glob(self.path(pattern)))
            if not matches:
                self.fail(f"The input file '{pattern}' taken from parameter config.JobType.inputFiles cannot be "
                          f"found (relative paths are read from the configuration file's directory, then the "
                          f"current one).",
                          "JobType.inputFiles", invalid=False)
            found += [m for m in matches if m not in found]
        return tuple(found)

    def path(self, value: str) -> str:
        """A relative path from the configuration file's directory or, when nothing is there, from
        the directory the command was typed in, where crab reads it (``crab submit -c
        crab/crabConfig.py`` typed in the analysis directory, its pset named from there)."""
        value = os.path.expanduser(value)
        beside = os.path.normpath(os.path.join(self.base, value))
        if os.path.isabs(value) or glob.glob(beside):
            return beside
        typed = os.path.normpath(os.path.join(typed_in(), value))
        return typed if glob.glob(typed) else beside

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

    def plugin(self) -> str:
        """JobType.pluginName: Analysis (CRAB's default) or PrivateMC, in any case, as CRAB reads it."""
        p = "JobType.pluginName"
        plugin = self.values.get(p, "Analysis")
        for known in JOB_TYPES:
            if plugin.upper() == known.upper():
                return known
        if plugin.upper() in ("COPYCAT", "RECOVER"):
            self.fail(f"Parameter {p} ({plugin!r}) cannot be simulated: the {plugin} job type starts from a task "
                      f"of a CRAB server, which crabtui does not have. crabtui runs the Analysis and PrivateMC "
                      f"job types.", p, invalid=False)
        self.fail(f"Parameter {p} has an invalid value ({plugin!r}).{_suggest(plugin, JOB_TYPES)} Allowed values "
                  f"are: {', '.join(JOB_TYPES)} (crabtui runs these of CRAB's job types).", p)

    def input_data(self, job_type: str, splitting: str) -> tuple[str | None, tuple[str, ...]]:
        """Data.inputDataset and Data.userInputFiles, as CRAB's job type plugins check them."""
        v = self.values
        p = "Data.inputDataset"
        dataset = v.get(p)
        if dataset is not None and not _RX_DATASET.fullmatch(dataset):
            self.fail(f"Parameter {p} ({dataset!r}) is not a CMS dataset name. Write it as "
                      f"/Primary/Processed/TIER, e.g. '/TTbar/Run2024-v1/AODSIM'.", p)
        u = "Data.userInputFiles"
        files = v.get(u, ())
        if job_type == "PrivateMC":
            if files:
                self.fail(f"Parameter {u} cannot go with JobType.pluginName = 'PrivateMC', which generates its "
                          f"events and reads no input file; for the Analysis job type, leave out "
                          f"JobType.pluginName.", u)
            return dataset, ()
        if dataset is None and not files:
            self.fail("Analysis job type requires an input dataset or a set of user input files to run on. "
                      "Suggestion: To specify an input dataset use the parameter Data.inputDataset. To specify "
                      "a set of user input files use the parameter Data.userInputFiles. (To generate events, "
                      "set JobType.pluginName = 'PrivateMC'.)", p)
        if dataset is not None:
            if "Data.outputPrimaryDataset" in v:
                self.fail("Analysis job type with input dataset does not accept an output primary dataset name "
                          "to be specified, because the later will be extracted from the first. Suggestion: "
                          "Remove the parameter Data.outputPrimaryDataset (the output is named after the input "
                          "dataset's primary dataset either way).", "Data.outputPrimaryDataset")
            return dataset, ()  # CRAB's TaskWorker reads the dataset, not the files, when both are given
        if splitting != "FileBased":
            self.fail("Analysis job type with user input files only supports file-based splitting. Suggestion: "
                      "Set Data.splitting = 'FileBased'.", "Data.splitting")
        if not v.get("Site.whitelist"):
            self.fail("when a userInputFiles list is indicated without an inputDataset a valid site white list "
                      "must be specified using the Site.whitelist parameter (the sites where the files are "
                      "read).", "Site.whitelist")
        unique: list[str] = []
        for i, name in enumerate(f.strip() for f in files):
            if name and name not in unique:
                if not _RX_USERFILE.fullmatch(name):
                    self.fail(f"Incorrect 'Data.userInputFiles' parameter: entry {i + 1} ({name!r}) does not "
                              f"match the allowed regexp for each filename: '{_RX_USERFILE.pattern}'.", u,
                              invalid=False)
                unique.append(name)
        if not unique:
            self.fail(f"No files specified to process: every entry of {u} is empty.", u, invalid=False)
        named = sum(1 for f in files if f.strip())
        if named != len(unique):  # crab submit's warning (a file list read with readlines() repeats a line)
            self.warnings.append(f"{self.source}: CRAB configuration parameter {u} contains duplicated entries. "
                                 f"Duplicated entries will be removed ({named - len(unique)} of {named}).")
        return None, tuple(unique)

    def primary_dataset(self, job_type: str, dataset: str | None) -> str:
        """The output's primary dataset, as CRABServer's RESTUserWorkflow chooses it."""
        v = self.values
        p = "Data.outputPrimaryDataset"
        if dataset is not None:
            return dataset.split("/")[1]
        name = v.get(p)
        if name is None:
            if v.get("Data.publication", True):  # CRAB needs a name to publish the output under
                what = ("MC generation job type requires this parameter for publication" if job_type == "PrivateMC"
                        else "Analysis job type without input dataset requires this parameter for publication")
                self.fail(f"Parameter {p} not specified. {what} (or set Data.publication = False).", p)
            return _NO_INPUT_PRIMARY[job_type]
        if len(name) > 99 or not _RX_PRIMARY_DATASET.fullmatch(name):
            self.fail(f"Invalid 'primarydataset' parameter ({name!r}, {p}). The parameter should not have more "
                      f"than 99 characters and should match the regular expression "
                      f"{_RX_PRIMARY_DATASET.pattern}.", p, invalid=False)
        return name

    def splitting(self, job_type: str) -> tuple[str, int]:
        v = self.values
        p = "Data.splitting"
        algo = v.get(p, "Automatic")  # CRAB's default: ClientMapping, and the client's checks
        if job_type == "PrivateMC":
            if algo not in MC_SPLITTING:
                self.fail(f"Parameter {p} has an invalid value ({algo!r}). MC generation job type only supports "
                          f"the following splitting algorithms: {', '.join(MC_SPLITTING)}"
                          f"{' (Automatic is the default when Data.splitting is not given)' if p not in v else ''}.",
                          p)
        elif algo not in SPLITTING_ALGORITHMS:
            hint = (" EventBased splitting generates events: it needs JobType.pluginName = 'PrivateMC'."
                    if algo == "EventBased" else _suggest(algo, SPLITTING_ALGORITHMS))
            self.fail(f"Parameter {p} has an invalid value ({algo!r}).{hint} Analysis job type only supports the "
                      f"following splitting algorithms: {', '.join(SPLITTING_ALGORITHMS)}.", p)
        if algo == "Automatic" and "JobType.maxJobRuntimeMin" in v:
            self.fail(f"The 'maxJobRuntimeMin' parameter is not compatible with the 'Automatic' splitting mode"
                      f"{' (default)' if p not in v else ''}. Remove it (Data.unitsPerJob sets the job length), "
                      f"or choose another Data.splitting.", "JobType.maxJobRuntimeMin", invalid=False)
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

    def total_units(self, job_type: str, units: int) -> int | float:
        p = "Data.totalUnits"
        total = self.values.get(p)
        if job_type != "PrivateMC":
            return 0 if total is None or total <= 0 else total
        if total is None:
            self.fail(f"Parameter {p} not specified. MC generation job type requires this parameter to know how "
                      f"many events to generate.", p)
        if int(total) <= 0:
            self.fail(f"Parameter {p} has an invalid value ({total}). It must be a natural number.", p)
        jobs = -(-int(total) // units)
        if jobs > MAX_JOBS_PER_TASK:
            self.fail(f"Your task would generate {jobs} jobs. The maximum number of jobs in each task is "
                      f"{MAX_JOBS_PER_TASK}. Raise Data.unitsPerJob or lower {p}.", p, invalid=False)
        return int(total)

    def events_per_lumi(self, units: int) -> int:
        """PrivateMC: events per lumi from Data.lumisPerFile (default 1), as CRAB's client derives it."""
        p = "Data.lumisPerFile"
        lumis = self.values.get(p, 1)
        if lumis <= 0:
            self.fail(f"Parameter {p} must be > 0, not {lumis}.", p)
        per_lumi = units // lumis
        if per_lumi <= 0:
            self.fail(f"Parameter {p} ({lumis}) is larger than Data.unitsPerJob ({units}): a lumi would hold no "
                      f"event (events_per_lumi must be positive).", p)
        if math.ceil(units / per_lumi) > MAX_LUMIS_PER_FILE:
            self.fail(f"Given your input parameters, each output file will contain around "
                      f"{math.ceil(units / per_lumi)} lumis. Please modify your configuration so that the output "
                      f"files contain at most {MAX_LUMIS_PER_FILE} lumis.", p, invalid=False)
        return per_lumi

    def input_blocks(self, dataset: str | None) -> tuple[str, ...]:
        """Data.inputBlocks as full block names (a bare id gets the dataset's name, as CRAB's client does)."""
        blocks = self.values.get("Data.inputBlocks", ())
        if blocks and dataset is None:
            self.fail("Parameter Data.inputBlocks names blocks of Data.inputDataset, which is not set.",
                      "Data.inputBlocks")
        return tuple(b if "#" in b else f"{dataset}#{b}" for b in blocks)

    def use_parent(self, job_type: str, dataset: str | None) -> bool:
        p = "Data.useParent"
        if not self.values.get(p, False) or job_type == "PrivateMC":  # PrivateMC reads no input: nothing to
            return False                                                # read the parents of, as CRAB's ignores it
        if "Data.secondaryInputDataset" in self.values:
            self.fail("Parameters Data.useParent and Data.secondaryInputDataset cannot be used together: the "
                      "first reads the input files' parents, the second a dataset's files with the same lumis. "
                      "Keep one.", p)
        if dataset is None:
            self.fail(f"Parameter {p} reads the parents of Data.inputDataset's files; user input files have none. "
                      f"Set Data.inputDataset, or remove {p}.", p)
        return True

    def secondary_dataset(self, job_type: str, dataset: str | None) -> str | None:
        p = "Data.secondaryInputDataset"
        secondary = self.values.get(p)
        if secondary is None:
            return None
        if not _RX_DATASET.fullmatch(secondary):
            self.fail(f"Parameter {p} ({secondary!r}) is not a CMS dataset name. Write it as "
                      f"/Primary/Processed/TIER, e.g. '/TTbar/Run2024-v1/GEN-SIM-RAW'.", p)
        if dataset is None or job_type == "PrivateMC":
            self.fail(f"Parameter {p} pairs Data.inputDataset's files with the secondary dataset's files holding "
                      f"the same lumis; it needs Data.inputDataset (and the Analysis job type).", p)
        return secondary

    def ignore_locality(self) -> bool:
        if not self.values.get("Data.ignoreLocality", False):
            return False
        if not self.values.get("Site.whitelist"):
            self.fail("when ignoreLocality is set a valid site white list must be specified using the "
                      "Site.whitelist parameter.", "Site.whitelist")
        return True

    def check_out_lfn(self) -> None:
        """CRAB's server refuses an output LFN outside the user, group and local areas
        (ServerUtilities.checkOutLFN).  The user name in it is not compared with anything: here the
        user is the local login, and a real config names its CERN account."""
        lfn = self.values.get("Data.outLFNDirBase")
        if lfn is not None and not _RX_OUT_LFN.match(lfn):
            self.fail(f"The parameter Data.outLFNDirBase in the CRAB configuration file must start with either "
                      f"'/store/user/<username>/' or '/store/group/<groupname>/' (or '/store/local/<something>/' "
                      f"if publication is off), where username is your username as registered in CMS services "
                      f"(i.e. the username of your CERN primary account); it is {lfn!r}.",
                      "Data.outLFNDirBase", invalid=False)

    def output_dataset_tag(self) -> str | None:
        """Data.outputDatasetTag names the outputs' directory, published or not; CRAB's server checks it
        as the middle of a user dataset's processed name (RESTUserWorkflow, WMCore's userprocdataset)."""
        p = "Data.outputDatasetTag"
        tag = self.values.get(p)
        if tag and (len(tag) > 100 or not _RX_PUBLISH_NAME.fullmatch(tag)):  # empty: CRAB's default
            self.fail(f"Invalid CRAB configuration parameter {p}. The combined string '<username>-<{p}>' should "
                      f"not have more than 166 characters and should match the regular expression "
                      f"{_RX_PUBLISH_NAME.pattern} ({tag!r} does not: letters, digits, '-' and '_', at most 100).",
                      p, invalid=False)
        return tag or None

    def check_publication(self) -> None:
        """crab submit refuses publication without the outputs transferred; Data.publication is
        True by default, so a config that only turns General.transferOutputs off is refused too."""
        v = self.values
        if v.get("Data.publication", True) and not v.get("General.transferOutputs", True):
            self.fail("Data.publication is True, but General.transferOutputs is False. Publication can not be "
                      "performed if the output files are not transferred to a permanent storage. Set "
                      "Data.publication = False (it is True unless set).", "Data.publication")

    def check_dbs(self, dataset: str | None) -> None:
        """Data.inputDBS and Data.publishDBS as crab submit checks them: CRAB's aliases or their
        addresses, and a local (phys0x) instance only for a dataset of tier USER."""
        v = self.values
        p = "Data.inputDBS"
        dbs = v.get(p)
        if dbs is not None and dataset is not None:
            if dbs not in DBS_READERS and dbs.rstrip("/") not in DBS_READERS.values():
                self.fail(f"Parameter {p} has an invalid value ({dbs!r}). Allowed values are: "
                          f"{_dbs_choices(DBS_READERS)}. If Data.inputDBS would not be specified, the default "
                          f"'global' would be used.", p)
            local = {alias for alias in DBS_READERS if alias != "global"}
            tier = dataset.rsplit("/", 1)[-1]
            if (dbs in local or dbs.rstrip("/") in {DBS_READERS[a] for a in local}) and tier != "USER":
                self.fail(f"A local DBS instance {dbs!r} was specified for reading an input dataset of tier {tier}. "
                          f"Datasets of tier different than USER must be read from the global DBS instance; this "
                          f"is, set Data.inputDBS = 'global'.", p)
        p = "Data.publishDBS"
        dbs = v.get(p)
        if dbs is not None and v.get("Data.publication", True) and dbs not in DBS_WRITERS \
                and dbs.rstrip("/") not in DBS_WRITERS.values():
            self.fail(f"Parameter {p} has an invalid value ({dbs!r}). Allowed values are: "
                      f"{_dbs_choices(DBS_WRITERS)}. If Data.publishDBS would not be specified, the default "
                      f"'phys03' would be used.", p)

    def lumi_mask(self) -> tuple[str | None, LumiMask | None]:
        """Data.lumiMask (a file, or an address to download it from) within Data.runRange."""
        p = "Data.lumiMask"
        given = self.values.get(p)
        where, mask = None, None
        if given is not None:
            url = bool(_URL.match(given))
            if url and not given.lower().startswith(("http://", "https://")):
                self.fail(f"Failed to load lumi mask {given} ({p}): only http and https addresses can be "
                          f"downloaded. Download it and give its path.", p, invalid=False)
            where = given if url else self.path(given)
            try:
                mask = read_mask(where, url=url)
            except Unreachable as e:  # no network: run, and say so
                where = None
                within = " within Data.runRange" if "Data.runRange" in self.values else ""
                self.warnings.append(
                    f"{self.source}: {p}: the lumi mask could not be fetched from {given} ({e.reason}), so the "
                    f"task runs over every lumi of its input{within}. To apply the mask, download it beside the "
                    f"configuration and name the file: config.Data.lumiMask = '{_file_name(given)}'.")
            except MaskError as e:
                self.fail(f"Failed to load lumi mask {where} ({p}): {e}.", p, invalid=False)
        run_range = self.values.get("Data.runRange")
        if run_range is not None:
            try:
                mask = intersect_runs(mask, run_range)
            except MaskError as e:
                self.fail(str(e), "Data.runRange", invalid=False)
        return where, mask

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

