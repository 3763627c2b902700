"""engine.crab.client.config: CRAB task configurations from TOML and crabConfig.py, and CRAB's refusals."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import getpass
import http.client
import http.server
import multiprocessing
import socket
import json
import sys
import textwrap
import threading

import pytest

from engine.crab.client.config import ConfigError, PlannedFailure, TaskConfig, load_config, run_crab_config
from engine.crab.client.crab_config_py import SubmitFailed

DROP = object()

BASE = {
    "General": {"requestName": "ttbar_2024"},
    "JobType": {"psetName": "pset.py", "maxMemoryMB": 2500, "maxJobRuntimeMin": 1315, "numCores": 1},
    "Data": {"inputDataset": "/TTbar/Run2024-v1/AODSIM", "splitting": "FileBased", "unitsPerJob": 10,
             "totalUnits": 100, "lumiMask": "golden.json"},
    "Site": {"whitelist": ["T2_CH_CERN"], "blacklist": ["T2_US_*"], "storageSite": "T2_XX_Local"},
    "Debug": {"extraJDL": ["+Foo = 1"], "timeScale": 60,
              "failurePlan": [{"job": "2", "attempt": 1, "exitCode": 8021},
                              {"job": "4", "attempt": "*", "exitCode": 1},
                              {"job": "5", "attempt": 1, "hold": 13},
                              {"job": "6", "attempt": 1, "memoryMB": 3000}]},
}
GOLDEN = {"316187": [[40, 90], [1, 37]], "316200": [[5, 5]]}

CRAB_CONFIG_PY = """\
from CRABClient.UserUtilities import config, getUsernameFromCRIC
config = config()

config.General.requestName = 'ttbar_2024'
config.General.workArea = 'crab_projects'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'
config.JobType.maxMemoryMB = 2500
config.JobType.maxJobRuntimeMin = 1315
config.JobType.numCores = 1

config.Data.inputDataset = '/TTbar/Run2024-v1/AODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 10
config.Data.totalUnits = 100
config.Data.lumiMask = 'golden.json'
config.Data.outLFNDirBase = '/store/user/%s/' % ('someone' if getUsernameFromCRIC() else '')

config.Site.whitelist = ['T2_CH_CERN']
config.Site.blacklist = ['T2_US_*']
config.Site.storageSite = 'T2_XX_Local'

config.Debug.extraJDL = ['+Foo = 1']
config.Debug.timeScale = 60
config.Debug.failurePlan = [
    {'job': '2', 'attempt': 1, 'exitCode': 8021},
    {'job': '4', 'attempt': '*', 'exitCode': 1},
    {'job': '5', 'attempt': 1, 'hold': 13},
    {'job': '6', 'attempt': 1, 'memoryMB': 3000},
]

if __name__ == '__main__':  # CRAB imports the file as a module: this never runs
    raise SystemExit('ran as __main__')
"""

WMCORE_CONFIG_PY = """\
from WMCore.Configuration import Configuration
config = Configuration()
config.section_('General')
config.General.requestName = 'ttbar_2024'
config.General.workArea = 'crab_projects'
config.section_('JobType')
config.JobType.psetName = 'pset.py'
config.JobType.maxMemoryMB = 2500
config.JobType.maxJobRuntimeMin = 1315
config.section_('Data')
config.Data.inputDataset = '/TTbar/Run2024-v1/AODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 10
config.Data.totalUnits = 100
config.Data.lumiMask = 'golden.json'
config.Data.outLFNDirBase = '/store/user/someone/'
config.section_('Site')
config.Site.whitelist = ['T2_CH_CERN']
config.Site.blacklist = ['T2_US_*']
config.Site.storageSite = 'T2_XX_Local'
config.section_('Debug')
config.Debug.extraJDL = ['+Foo = 1']
config.Debug.timeScale = 60
config.Debug.failurePlan = [{'job': '2', 'attempt': 1, 'exitCode': 8021},
                            {'job': '4', 'attempt': '*', 'exitCode': 1},
                            {'job': '5', 'attempt': 1, 'hold': 13},
                            {'job': '6', 'attempt': 1, 'memoryMB': 3000}]
"""


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def write_toml(tmp_path, changes=None, name="task.toml"):
    """BASE with "Section.param" -> value (DROP removes it), written next to golden.json."""
    sections = {s: dict(p) for s, p in BASE.items()}
    for key, value in (changes or {}).items():
        section, param = key.split(".", 1)
        if value is DROP:
            sections.get(section, {}).pop(param, None)
        else:
            sections.setdefault(section, {})[param] = value
    (tmp_path / "golden.json").write_text(json.dumps(GOLDEN))
    text = "".join(f"[{s}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in p.items())
                   for s, p in sections.items())
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(path, *fragments, parameter=None):
    """load_config refuses; the message names the file and contains every fragment."""
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    message = str(info.value)
    assert message.startswith(str(path)), message
    for fragment in fragments:
        assert fragment in message, message
    if parameter is not None:
        assert info.value.parameter == parameter
    return message


# --- what loads ------------------------------------------------------------------------------

def test_the_note_on_ignored_parameters_names_those_set_to_something_crabtui_does_not_do(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.publication": True, "JobType.sendVenvFolder": False})))
    assert cfg.ignored_note() == (f"{tmp_path / 'task.toml'}: accepted, with no effect here: "
                                  "Data.publication (nothing is published).")


def test_toml_loads_every_field(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.publication": False})))
    assert cfg == TaskConfig(
        source=str(tmp_path / "task.toml"),
        request_name="ttbar_2024",
        pset_name=str(tmp_path / "pset.py"),
        max_memory_mb=2500, max_job_runtime_min=1315, num_cores=1,
        input_dataset="/TTbar/Run2024-v1/AODSIM", primary_dataset="TTbar", splitting="FileBased", units_per_job=10,
        total_units=100,
        lumi_mask_file=str(tmp_path / "golden.json"),
        lumi_mask={316187: [(1, 37), (40, 90)], 316200: [(5, 5)]},
        storage_site="T2_XX_Local", site_whitelist=("T2_CH_CERN",), site_blacklist=("T2_US_*",),
        extra_jdl=("+Foo = 1",), time_scale=60.0,
        failure_plan=(PlannedFailure("2", 1, exit_code=8021), PlannedFailure("4", None, exit_code=1),
                      PlannedFailure("5", 1, hold_code=13), PlannedFailure("6", 1, memory_mb=3000)),
        ignored={"Data.publication": False},
    )
    assert cfg.ignored_note() is None, "publication switched off asks for nothing crabtui would do"
    assert cfg.planned_failure("2", 1).exit_code == 8021
    assert cfg.planned_failure("2", 2) is None
    assert cfg.planned_failure("4", 7).exit_code == 1


CFG_CONFIG_PY = CRAB_CONFIG_PY.replace("import config,", "import config as crab_config,").replace(
    "config = config()", "cfg = crab_config()").replace("config.", "cfg.")
"""The same, its Configuration named otherwise: crab submit takes the first the module holds."""


@pytest.mark.parametrize("text", [CRAB_CONFIG_PY, WMCORE_CONFIG_PY, CFG_CONFIG_PY],
                         ids=["UserUtilities", "WMCore", "named cfg"])
def test_crab_config_py_equals_toml(tmp_path, text):
    toml_cfg = load_config(str(write_toml(tmp_path, {"General.workArea": "crab_projects",
                                                     "Data.outLFNDirBase": "/store/user/someone/"})))
    py = tmp_path / "crabConfig.py"
    py.write_text(text)
    py_cfg = load_config(str(py))
    assert py_cfg.source == str(py)
    assert dataclasses.replace(py_cfg, source=toml_cfg.source) == toml_cfg
    assert (py_cfg.ignored, py_cfg.out_lfn_dir_base) == ({}, "/store/user/someone/")
    assert py_cfg.work_area == "crab_projects"  # where task submit makes the project directory


def test_fake_modules_are_gone_afterwards_and_real_ones_restored(tmp_path, monkeypatch):
    sentinel = object()
    monkeypatch.setitem(sys.modules, "WMCore", sentinel)
    write_toml(tmp_path)
    py = tmp_path / "crabConfig.py"
    py.write_text(CRAB_CONFIG_PY)
    load_config(str(py))
    assert "CRABClient" not in sys.modules and "CRABClient.UserUtilities" not in sys.modules
    assert "WMCore.Configuration" not in sys.modules
    assert sys.modules["WMCore"] is sentinel
    py.write_text("from CRABClient.UserUtilities import config\nconfig = config()\n1/0\n")
    with pytest.raises(ConfigError):
        load_config(str(py))
    assert "CRABClient" not in sys.modules and sys.modules["WMCore"] is sentinel


def test_defaults_follow_crab(tmp_path):
    path = write_toml(tmp_path, {"General.requestName": DROP, "JobType.maxMemoryMB": DROP,
                                 "JobType.maxJobRuntimeMin": DROP, "JobType.numCores": DROP,
                                 "Data.totalUnits": DROP, "Data.lumiMask": DROP, "Debug.timeScale": DROP,
                                 "Debug.failurePlan": DROP, "Debug.extraJDL": DROP})
    cfg = load_config(str(path), now=datetime.datetime(2025, 3, 4, 5, 6, 7))
    assert cfg.request_name == "20250304_050607"  # CRAB's crab_<YYYYMMDD_HHMMSS>
    assert (cfg.max_memory_mb, cfg.max_job_runtime_min, cfg.num_cores, cfg.priority) == (2000, 1250, 1, 10)
    assert (cfg.total_units, cfg.lumi_mask, cfg.time_scale, cfg.failure_plan) == (0, None, 1.0, ())
    assert (cfg.transfer_outputs, cfg.transfer_logs) == (True, False)


def test_automatic_splitting_as_crab(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.splitting": "Automatic", "Data.unitsPerJob": DROP,
                                                "JobType.maxJobRuntimeMin": DROP})))
    assert (cfg.splitting, cfg.units_per_job) == ("Automatic", 480)
    refused(write_toml(tmp_path, {"Data.splitting": "Automatic", "Data.unitsPerJob": 600}),
            "'maxJobRuntimeMin' parameter is not compatible with the 'Automatic' splitting mode", "Remove it",
            parameter="JobType.maxJobRuntimeMin")
    refused(write_toml(tmp_path, {"Data.splitting": "Automatic", "JobType.maxJobRuntimeMin": DROP,
                                  "Data.unitsPerJob": 100}),
            "Automatic splitting, the Data.unitsPerJob parameter must be in the [180, 2700] minutes range",
            "You asked for 100 minutes")


def test_script_exe_beside_the_pset_and_the_executable_alias(tmp_path):
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    cfg = load_config(str(write_toml(tmp_path, {"JobType.scriptExe": "run.sh", "JobType.scriptArgs": ["n=3"]})))
    assert (cfg.pset_name, cfg.script_exe, cfg.script_args) == (
        str(tmp_path / "pset.py"), str(tmp_path / "run.sh"), ("n=3",))
    alias = load_config(str(write_toml(tmp_path, {"JobType.executable": "run.sh"})))
    assert alias.script_exe == str(tmp_path / "run.sh")
    refused(write_toml(tmp_path, {"JobType.scriptExe": "run.sh", "JobType.executable": "run.sh"}),
            "Only one of JobType.scriptExe or JobType.executable", "remove one")
    refused(write_toml(tmp_path, {"JobType.scriptExe": "missing.sh"}),
            f"Cannot find the file {tmp_path / 'missing.sh'} specified in the JobType.scriptExe",
            parameter="JobType.scriptExe")
    refused(write_toml(tmp_path, {"JobType.psetName": DROP}),
            "Invalid CRAB configuration: Parameter JobType.psetName not specified", "Set JobType.psetName")
    # CRABClient's plugins require the pset whatever else runs (Analysis.validateBasicConfig)
    for other in ({"JobType.scriptExe": "run.sh"}, {"JobType.executable": "run.sh"},
                  {"JobType.pluginName": "PrivateMC", "Data.inputDataset": DROP, "Data.splitting": "EventBased",
                   "Data.unitsPerJob": 10, "Data.totalUnits": 100}):
        refused(write_toml(tmp_path, {"JobType.psetName": DROP, **other}),
                "Parameter JobType.psetName not specified", parameter="JobType.psetName")


def test_storage_site_needed_only_when_something_is_transferred(tmp_path):
    refused(write_toml(tmp_path, {"Site.storageSite": DROP}),
            "Invalid CRAB configuration: Parameter Site.storageSite is missing", "T2_XX_Local",
            parameter="Site.storageSite")
    cfg = load_config(str(write_toml(tmp_path, {"Site.storageSite": DROP, "General.transferOutputs": False,
                                                "Data.publication": False})))
    assert cfg.storage_site is None and cfg.transfer_outputs is False
    refused(write_toml(tmp_path, {"Site.storageSite": DROP, "General.transferOutputs": False,
                                  "Data.publication": False, "General.transferLogs": True}),
            "Site.storageSite is missing")


def test_outputs_not_transferred_need_publication_off_which_is_on_unless_set(tmp_path):
    """crab submit's check: Data.publication is True by default, so turning the transfer of the
    outputs off alone is refused."""
    for publication in (DROP, True):
        refused(write_toml(tmp_path, {"General.transferOutputs": False, "Data.publication": publication}),
                "Invalid CRAB configuration: Data.publication is True, but General.transferOutputs is False. "
                "Publication can not be performed if the output files are not transferred to a permanent storage.",
                "Set Data.publication = False", parameter="Data.publication")


# --- names and types ---------------------------------------------------------------------------

def test_parameters_crab_removed_say_what_replaced_them(tmp_path):
    """Older tutorial configs set Data.publishWithGroupName (removed from CRAB in 2022) and
    User.email: CRAB no longer knows them, and the refusal says what to do, not 'Did you mean
    Data.publishDBS?'."""
    (tmp_path / "pset_tutorial_analysis.py").write_text("import FWCore.ParameterSet.Config as cms\n")
    for line, fragments in (
            ("config.Data.publishWithGroupName = True",
             ("Invalid CRAB configuration: Parameter Data.publishWithGroupName is not known.",
              "CRAB removed it in 2022", "Data.outLFNDirBase = '/store/group/<group>/'")),
            ("config.User.email = 'me@cern.ch'", ("Parameter User.email is not known.", "CRAB removed it"))):
        (tmp_path / "crabConfig.py").write_text(textwrap.dedent("""\
            from WMCore.Configuration import Configuration
            config = Configuration()
            config.section_("General")
            config.General.requestName = 'tutorial_May2015_MC_analysis'
            config.section_("JobType")
            config.JobType.pluginName = 'Analysis'
            config.JobType.psetName = 'pset_tutorial_analysis.py'
            config.section_("Data")
            config.Data.inputDataset = '/GenericTTbar/HC-CMSSW_5_3_1_START53_V5-v1/GEN-SIM-RECO'
            config.Data.splitting = 'FileBased'
            config.Data.unitsPerJob = 10
            config.section_("Site")
            config.Site.storageSite = 'T2_CH_CERN'
            config.section_("User")
            """) + line + "\n")
        message = refused(tmp_path / "crabConfig.py", *fragments, parameter=line.split()[0][len("config."):])
        assert "Did you mean" not in message and "\n" not in message, message


def test_unknown_section_and_parameters_with_suggestions(tmp_path):
    refused(write_toml(tmp_path, {"Jobtype.psetName": "x.py"}),
            "Section 'Jobtype' is not known", "Did you mean JobType?")
    refused(write_toml(tmp_path, {"Data.unitPerJob": 5}),
            "Invalid CRAB configuration: Parameter Data.unitPerJob is not known. Did you mean Data.unitsPerJob?",
            parameter="Data.unitPerJob")
    refused(write_toml(tmp_path, {"Data.storageSite": "T2_XX_Local"}),
            "Parameter Data.storageSite is not known. Did you mean Site.storageSite?")
    refused(write_toml(tmp_path, {"Data.zzz": 1}), "Parameter Data.zzz is not known.", "spelling")
    refused(write_toml(tmp_path, {"JobType.maxmemory": 2000}),
            "Parameter JobType.maxmemory has been renamed to JobType.maxMemoryMB", "please change")
    refused(write_toml(tmp_path, {"JobType.sendPythonFolder": True}),
            "Parameter JobType.sendPythonFolder has been deprecated. Please remove it")
    top = tmp_path / "top.toml"
    top.write_text('requestName = "x"\n[Data]\nsplitting = "FileBased"\n')
    refused(top, "Parameter requestName is outside any section", "under [General]")


def test_python_unknown_parameter(tmp_path):
    write_toml(tmp_path)
    py = tmp_path / "crabConfig.py"
    py.write_text(CRAB_CONFIG_PY + "config.Site.blackList = ['T2_US_MIT']\n")
    refused(py, "Parameter Site.blackList is not known. Did you mean Site.blacklist?", parameter="Site.blackList")


@pytest.mark.parametrize("key, value, expected, given", [
    ("Data.unitsPerJob", "ten", "integer", "str was given: 'ten'"),
    ("JobType.numCores", True, "integer", "bool was given: True"),
    ("General.requestName", 5, "string", "int was given: 5"),
    ("Site.whitelist", "T2_CH_CERN", "list of strings", "str was given: 'T2_CH_CERN'"),
    ("General.transferOutputs", "yes", "boolean", "str was given"),
    ("Debug.timeScale", "fast", "number", "str was given: 'fast'"),
])
def test_wrong_types(tmp_path, key, value, expected, given):
    refused(write_toml(tmp_path, {key: value}),
            f"Invalid CRAB configuration: Parameter {key} requires a value of type {expected}",
            given, "Give it", parameter=key)


def test_list_of_strings_entries(tmp_path):
    refused(write_toml(tmp_path, {"Site.blacklist": ["T2_US_*", 3]}),
            "Parameter Site.blacklist has to be a list of strings; entry 2 is 3")


# --- missing and invalid values ------------------------------------------------------------------

@pytest.mark.parametrize("key, fragments", [
    ("Data.inputDataset", ["requires an input dataset or a set of user input files", "Data.userInputFiles",
                           "JobType.pluginName = 'PrivateMC'"]),
    ("Data.unitsPerJob", ["Parameter Data.unitsPerJob is mandatory for 'FileBased' splitting mode",
                          "number of files per job"]),
])
def test_missing_required(tmp_path, key, fragments):
    refused(write_toml(tmp_path, {key: DROP}), *fragments, parameter=key)


def test_splitting_names(tmp_path):
    refused(write_toml(tmp_path, {"Data.splitting": "filebased"}),
            "Parameter Data.splitting has an invalid value ('filebased'). Did you mean FileBased?",
            parameter="Data.splitting")
    refused(write_toml(tmp_path, {"Data.splitting": "EventBased"}),
            "Analysis job type only supports the following splitting algorithms")
    for algo in ("LumiBased", "EventAwareLumiBased"):
        assert load_config(str(write_toml(tmp_path, {"Data.splitting": algo}))).splitting == algo


@pytest.mark.parametrize("changes, fragments, parameter", [
    ({"Data.unitsPerJob": 0}, ["Parameter Data.unitsPerJob must be > 0, not 0."], "Data.unitsPerJob"),
    ({"Data.unitsPerJob": -3}, ["must be > 0, not -3"], "Data.unitsPerJob"),
    ({"General.requestName": "a/b"}, ["The '/' character is not accepted in the requestName parameter",
                                      "General.workArea"], "General.requestName"),
    ({"General.requestName": "x" * 101}, ["Parameter General.requestName should not be longer than 100 characters"],
     "General.requestName"),
    ({"General.requestName": "tt bar!"}, ["General.requestName ('tt bar!') contains characters CRAB does not accept",
                                          "' !'", "letters, digits"], "General.requestName"),
    ({"JobType.maxMemoryMB": 3001}, ["Task requests 3001 MB of memory, above the allowed maximum of 3000 for a 1 core(s) job",
                                     "Lower JobType.maxMemoryMB"], "JobType.maxMemoryMB"),
    ({"JobType.maxMemoryMB": 29}, ["JobType.maxMemoryMB (29 MB) must be between 30 and 3000 MB"],
     "JobType.maxMemoryMB"),
    ({"JobType.maxJobRuntimeMin": 59}, ["JobType.maxJobRuntimeMin (59 minutes) must be between 60 and 20160"],
     "JobType.maxJobRuntimeMin"),
    ({"JobType.maxJobRuntimeMin": 20161}, ["must be between 60 and 20160 minutes"], "JobType.maxJobRuntimeMin"),
    ({"JobType.numCores": 0}, ["Parameter JobType.numCores must be >= 1, not 0"], "JobType.numCores"),
    ({"JobType.pluginName": "Analysys"}, ["JobType.pluginName has an invalid value ('Analysys'). Did you mean "
                                          "Analysis?", "Analysis, PrivateMC"], "JobType.pluginName"),
    ({"JobType.pluginName": "Recover"}, ["JobType.pluginName ('Recover') cannot be simulated: the Recover job type "
                                         "starts from a task of a CRAB server"], "JobType.pluginName"),
    ({"Data.inputDataset": "TTbar/AODSIM"}, ["Data.inputDataset ('TTbar/AODSIM') is not a CMS dataset name",
                                            "/Primary/Processed/TIER"], "Data.inputDataset"),
    ({"Site.whitelist": ["T2_CH_CERN", "CERN"]}, ["Parameter Site.whitelist entry 2 ('CERN') is not a CMS site name",
                                                 "T2_US_*"], "Site.whitelist"),
    ({"Site.storageSite": "T2_US_*"}, ["Site.storageSite ('T2_US_*') is not a CMS site name", "no wildcards"],
     "Site.storageSite"),
    ({"Debug.extraJDL": ["Foo"]}, ["Parameter Debug.extraJDL entry 1 ('Foo') is not of the form 'name=value'"],
     "Debug.extraJDL"),
    ({"Debug.timeScale": 0}, ["Parameter Debug.timeScale must be > 0, not 0", "1 is real time"], "Debug.timeScale"),
    ({"Data.runRange": "1-10"}, ["The intersection between the lumi mask and the run range is null."],
     "Data.runRange"),
    ({"Data.runRange": "316187, 316200"}, ["Parameter Data.runRange should be a comma separated list of integers or "
                                           "(inclusive) ranges. Example: '12345,99900-99910'"], "Data.runRange"),
    ({"Data.runRange": "316200-316187"}, ["316200-316187 has its first run after its last"], "Data.runRange"),
    ({"Data.lumiMask": DROP, "Data.runRange": "1-60000"}, ["Data.runRange includes 60000 runs. When Data.lumiMask "
                                                           "is not specified"], "Data.runRange"),
    ({"Data.useParent": True, "Data.secondaryInputDataset": "/TTbar/Run2024-v1/GEN-SIM-RAW"},
     ["Parameters Data.useParent and Data.secondaryInputDataset cannot be used together"], "Data.useParent"),
    ({"Data.useParent": True, "Data.inputDataset": DROP, "Data.userInputFiles": ["/store/user/me/a.root"],
      "Data.publication": False},
     ["Parameter Data.useParent reads the parents of Data.inputDataset's files; user input files have none."],
     "Data.useParent"),
    ({"Data.secondaryInputDataset": "RAW"}, ["Parameter Data.secondaryInputDataset ('RAW') is not a CMS dataset name"],
     "Data.secondaryInputDataset"),
    ({"Site.requireAccelerator": True}, ["cannot be simulated: its jobs must run on GPU slots (request_GPUs), and the "
                                         "embedded pool's slots advertise no GPUs"], "Site.requireAccelerator"),
    ({"Data.outputPrimaryDataset": "MyOutput"}, ["Analysis job type with input dataset does not accept an output "
                                                 "primary dataset name"], "Data.outputPrimaryDataset"),
    ({"Data.ignoreLocality": True, "Site.whitelist": DROP}, ["when ignoreLocality is set a valid site white list must "
                                                             "be specified using the Site.whitelist parameter"],
     "Site.whitelist"),
])
def test_invalid_values(tmp_path, changes, fragments, parameter):
    refused(write_toml(tmp_path, changes), *fragments, parameter=parameter)


def test_memory_cap_grows_with_cores_and_wildcards_are_accepted(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"JobType.numCores": 4, "JobType.maxMemoryMB": 10000,
                                                "Site.blacklist": ["T2_US_*", "T1_*", "T3*"]})))
    assert (cfg.num_cores, cfg.max_memory_mb, cfg.site_blacklist) == (4, 10000, ("T2_US_*", "T1_*", "T3*"))


def test_use_parent_and_a_secondary_dataset_are_kept_and_privatemc_ignores_use_parent(tmp_path):
    assert load_config(str(write_toml(tmp_path, {"Data.useParent": True}))).use_parent
    secondary = load_config(str(write_toml(tmp_path, {"Data.secondaryInputDataset": "/TTbar/Run2024-v1/GEN-SIM-RAW"})))
    assert (secondary.use_parent, secondary.secondary_dataset) == (False, "/TTbar/Run2024-v1/GEN-SIM-RAW")
    mc = load_config(str(write_toml(tmp_path, {"JobType.pluginName": "PrivateMC", "Data.inputDataset": DROP,
                                               "Data.splitting": "EventBased", "Data.totalUnits": 1000,
                                               "Data.lumiMask": DROP, "Data.publication": False,
                                               "Data.useParent": True})))
    assert not mc.use_parent and mc.ignored["Data.useParent"] is True


def test_unsupported_parameters_at_their_default_are_accepted(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.useParent": False, "Data.ignoreLocality": False,
                                                "Data.userInputFiles": []})))
    assert cfg.ignored == {}


# --- failure plan ------------------------------------------------------------------------------------

@pytest.mark.parametrize("entry, fragment", [
    ({"job": 2, "attempt": 1, "exitCode": 1}, '"job" must be a job id as a string, such as "2" (got 2)'),
    ({"job": "x", "attempt": 1, "exitCode": 1}, '"job" must be a job id'),
    ({"job": "2", "attempt": 0, "exitCode": 1}, '"attempt" must be a whole number >= 1 or "*"'),
    ({"job": "2", "attempt": "all", "exitCode": 1}, "(got 'all')"),
    ({"job": "2", "attempt": 1}, "give exactly one of exitCode, hold, memoryMB and stageout (got none)"),
    ({"job": "2", "attempt": 1, "stageout": 8021}, "stageout must be one of CRAB's stage-out exit codes: 60307"),
    ({"job": "2", "attempt": 1, "exitCode": 1, "hold": 13}, "(got exitCode, hold)"),
    ({"job": "2", "attempt": 1, "exitCode": "8021"}, "exitCode must be a whole number >= 0 (got '8021')"),
    ({"job": "2", "attempt": 1, "memoryMB": 0}, "memoryMB must be a whole number >= 1"),
    ({"job": "2", "attempt": 1, "exitcode": 1}, "key 'exitcode' is not known. Did you mean exitCode?"),
])
def test_failure_plan_entries(tmp_path, entry, fragment):
    plan = [{"job": "1", "attempt": 1, "exitCode": 8021}, entry]
    refused(write_toml(tmp_path, {"Debug.failurePlan": plan}),
            "Invalid CRAB configuration: Parameter Debug.failurePlan entry 2 (", fragment,
            parameter="Debug.failurePlan")


def test_user_input_files_read_with_readlines_lose_their_newlines_blanks_and_duplicates_with_crabs_warning(tmp_path):
    """CRAB's validation template reads Data.userInputFiles with open(...).readlines(): each line keeps
    its newline, a blank line is empty and a repeated line a duplicate; crab submit strips them, drops
    the empty ones and warns that duplicates will be removed, and so does crabtui."""
    files = [f"/store/mc/HC/GenericTTbar/GEN-SIM-RECO/v1/0010/file_{i}.root" for i in (1, 2, 3, 2)]
    (tmp_path / "userinputfiles.txt").write_text("\n".join(files) + "\n\n")
    py = tmp_path / "crabConfig.py"
    py.write_text("from WMCore.Configuration import Configuration\nconfig = Configuration()\n"
                  "config.section_('General')\nconfig.General.requestName = 'user_files'\n"
                  "config.section_('JobType')\nconfig.JobType.psetName = 'pset.py'\nconfig.section_('Data')\n"
                  "config.Data.userInputFiles = open('userinputfiles.txt').readlines()\n"
                  "config.Data.splitting = 'FileBased'\nconfig.Data.unitsPerJob = 1\n"
                  "config.Data.outputPrimaryDataset = 'GenericTTbar'\nconfig.section_('Site')\n"
                  "config.Site.storageSite = 'T2_CH_CERN'\nconfig.Site.whitelist = ['T2_CH_CERN']\n")
    cfg = load_config(py)
    assert cfg.user_input_files == tuple(files[:3])
    assert f"{py}: CRAB configuration parameter Data.userInputFiles contains duplicated entries. Duplicated " \
           "entries will be removed (1 of 4)." in cfg.warnings
    (tmp_path / "userinputfiles.txt").write_text("\n".join(files[:3]) + "\n\n")
    assert not any("duplicated" in w for w in load_config(py).warnings), "blank lines are no duplicates"


def test_failure_plan_duplicates_and_precedence(tmp_path):
    refused(write_toml(tmp_path, {"Debug.failurePlan": [{"job": "3", "attempt": "*", "exitCode": 1},
                                                        {"job": "3", "attempt": "*", "hold": 13}]}),
            "Debug.failurePlan entry 2", "entry 1 already plans every attempt of job 3; keep one")
    cfg = load_config(str(write_toml(tmp_path, {"Debug.failurePlan": [
        {"job": "3", "attempt": "*", "exitCode": 1}, {"job": "3", "attempt": 2, "exitCode": 0}]})))
    assert cfg.planned_failure("3", 2).exit_code == 0
    assert cfg.planned_failure("3", 1).exit_code == 1
    refused(write_toml(tmp_path, {"Debug.failurePlan": ["job 2 fails"]}), "entry 1", "it is not a table")


# --- lumi mask -------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, fragment", [
    (None, "no such file."),
    ("{not json", "not valid JSON"),
    ("[[1, 2]]", "it is not a JSON object; a lumi mask is a JSON object mapping run numbers"),
    ("{}", "it selects no runs; a lumi mask is"),
    ('{"run1": [[1, 2]]}', "'run1' is not a run number; a lumi mask is"),
    ('{"1": []}', "run 1: [] is not a non-empty list"),
    ('{"1": [[5, 2]]}', "run 1: [5, 2] is not a [first, last] lumi range"),
    ('{"1": [[0, 2]]}', "1 <= first <= last"),
])
def test_lumi_mask_refusals(tmp_path, content, fragment):
    path = write_toml(tmp_path, {"Data.lumiMask": "masks/mine.json"})
    if content is not None:
        (tmp_path / "masks").mkdir()
        (tmp_path / "masks" / "mine.json").write_text(content)
    message = refused(path, f"Failed to load lumi mask {tmp_path / 'masks' / 'mine.json'} (Data.lumiMask)", fragment,
                      parameter="Data.lumiMask")
    assert "\n" not in message


@pytest.fixture
def web(tmp_path):
    """An HTTP server on this machine serving ``tmp_path/web``, as a certification page serves lumi masks."""
    root = tmp_path / "web"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_lumi_mask_from_an_address_is_downloaded_as_crab_does_and_ranges_merged(tmp_path, web):
    root, address = web
    (root / "Cert_Collisions18_JSON.txt").write_text('{"10": [[5, 9], [1, 3], [4, 4], [20, 30], [25, 26]], '
                                                     '"2": [[1, 1]]}')
    cfg = load_config(str(write_toml(tmp_path, {"Data.lumiMask": f"{address}/Cert_Collisions18_JSON.txt"})))
    assert cfg.lumi_mask == {2: [(1, 1)], 10: [(1, 9), (20, 30)]}
    assert list(cfg.lumi_mask) == [2, 10] and cfg.lumi_mask_file == f"{address}/Cert_Collisions18_JSON.txt"
    refused(write_toml(tmp_path, {"Data.lumiMask": f"{address}/missing.txt"}),
            f"Failed to load lumi mask {address}/missing.txt (Data.lumiMask): cannot download it (HTTP 404 ")
    refused(write_toml(tmp_path, {"Data.lumiMask": "ftp://example.org/golden.json"}),
            "only http and https addresses can be downloaded")


def test_a_lumi_mask_address_that_does_not_answer_is_a_warning_and_the_task_reads_every_lumi(tmp_path):
    """No network (here: a port nothing listens on): CRAB would stop; the task runs unmasked, and says so."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        address = f"https://127.0.0.1:{free.getsockname()[1]}/CAF/certification/Cert_314472-325175_Collisions18_JSON.txt"
    cfg = load_config(str(write_toml(tmp_path, {"Data.lumiMask": address})))
    assert (cfg.lumi_mask, cfg.lumi_mask_file) == (None, None)
    [warning] = cfg.warnings
    assert warning.startswith(f"{tmp_path / 'task.toml'}: Data.lumiMask: the lumi mask could not be fetched from "
                              f"{address} (") and "Connection refused" in warning and "\n" not in warning
    assert warning.endswith("so the task runs over every lumi of its input. To apply the mask, download it beside the "
                            "configuration and name the file: config.Data.lumiMask = "
                            "'Cert_314472-325175_Collisions18_JSON.txt'.")
    ranged = load_config(str(write_toml(tmp_path, {"Data.lumiMask": address, "Data.runRange": "316190-316191"})))
    assert ranged.lumi_mask == {316190: [(1, 0xFFFFFFF)], 316191: [(1, 0xFFFFFFF)]}
    assert "runs over every lumi of its input within Data.runRange." in ranged.warnings[0]


def test_run_range_narrows_the_lumi_mask_or_selects_whole_runs(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.runRange": "316190-316300"})))
    assert (cfg.run_range, cfg.lumi_mask) == ("316190-316300", {316200: [(5, 5)]})
    whole = load_config(str(write_toml(tmp_path, {"Data.lumiMask": DROP, "Data.runRange": "7-8,10"})))
    assert whole.lumi_mask == {7: [(1, 0xFFFFFFF)], 8: [(1, 0xFFFFFFF)], 10: [(1, 0xFFFFFFF)]}


# --- the files themselves --------------------------------------------------------------------------

def test_toml_syntax_error_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[General]\nrequestName = "x"\n[Data]\nsplitting == "FileBased"\n')
    with pytest.raises(ConfigError) as info:
        load_config(str(bad))
    assert str(info.value).startswith(f"{bad}:4: invalid TOML:")
    assert "(column 12)" in str(info.value) and info.value.line == 4


def test_python_errors_name_file_and_line(tmp_path, monkeypatch):
    py = tmp_path / "crabConfig.py"
    py.write_text("from CRABClient.UserUtilities import config\nconfig = config()\nconfig.Data.splitting = 'FileBased'\n"
                  "config.Data.unitsPerJob = (\n")
    message = refused(py, "SyntaxError")
    assert message.startswith(f"{py}:4: Error while loading CRAB configuration")
    py.write_text("from CRABClient.UserUtilities import config\nconfig = config()\n\nconfig.Data.unitsPerJob = units\n")
    message = refused(py, "NameError: name 'units' is not defined")
    assert message.startswith(f"{py}:4: ")
    py.write_text("from CRABClient.UserUtilities import getLumiListInValidFiles\n")
    assert refused(py, "ImportError", "Of CRAB's modules, crabtui provides CRABClient.UserUtilities").startswith(
        f"{py}:1: ")
    py.write_text("from WMCore.Configuration import Configuration\nconfig = Configuration()\nconfig.Data = 3\n")
    assert refused(py, "Can only add ConfigSection objects to Configuration").startswith(f"{py}:3: ")
    py.write_text("from WMCore.Configuration import Configuration\nconfig = Configuration()\n"
                  "config.section_('General')\nconfig.General.requestName = 'zmumu'\n"
                  "config.JobType.psetName = 'pset.py'\n")  # the JobType section never made
    assert refused(py, "AttributeError: 'Configuration' object has no attribute 'JobType'. WMCore's Configuration "
                       "has a section only once it is made: add config.section_('JobType') before its "
                       "parameters.").startswith(f"{py}:5: ")
    py.write_text("from CRABClient.UserUtilities import config\nconfig = config()\nprint(config.dictionary_())\n")
    assert "section_" not in refused(py, "AttributeError: 'Configuration' object has no attribute 'dictionary_'.")
    py.write_text("import os\nfrom CRABClient.UserUtilities import config\nconfig = config()\n"
                  "config.JobType.psetName = os.environ['CMSSW_BASE'] + '/src/Analysis/test/ntuple_cfg.py'\n")
    monkeypatch.delenv("CMSSW_BASE", raising=False)  # crabtui runs outside a CMSSW area
    assert refused(py, "KeyError: 'CMSSW_BASE'. CMSSW_BASE is set by cmsenv in a CMSSW area, which crabtui does "
                       "not need: export it before submitting").startswith(f"{py}:4: ")
    py.write_text("cfg = 1\n")
    refused(py, "Unable to load Configuration object from file", "defines no 'config'",
            "config = config()")


def test_missing_file_and_unknown_suffix(tmp_path):
    refused(tmp_path / "nope.toml", "CRAB configuration file", "not found")
    other = tmp_path / "task.yaml"
    other.write_text("x: 1\n")
    refused(other, "name it *.toml (TOML) or *.py")


def test_error_carries_path(tmp_path):
    path = write_toml(tmp_path, {"Data.unitsPerJob": 0})
    with pytest.raises(ConfigError) as info:
        load_config(path)  # a Path works too
    assert info.value.path == str(path) and info.value.line is None


def test_python_config_module_name_is_not_main(tmp_path):
    write_toml(tmp_path)
    py = tmp_path / "crabConfig.py"
    py.write_text(textwrap.dedent(CRAB_CONFIG_PY))
    assert load_config(str(py)).request_name == "ttbar_2024"  # the __main__ block did not raise


# --- CRAB's defaults and the parameters once refused ------------------------------------------------

def test_splitting_defaults_to_automatic_as_crab(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.splitting": DROP, "Data.unitsPerJob": DROP,
                                                "JobType.maxJobRuntimeMin": DROP})))
    assert (cfg.splitting, cfg.units_per_job) == ("Automatic", 480)
    refused(write_toml(tmp_path, {"Data.splitting": DROP}),
            "'maxJobRuntimeMin' parameter is not compatible with the 'Automatic' splitting mode")


@pytest.mark.parametrize("given, kept", [(-1, 0), (0, 0), (0.25, 0.25), (100, 100), (12.7, 12.7)])
def test_total_units_takes_what_crab_takes(tmp_path, given, kept):
    assert load_config(str(write_toml(tmp_path, {"Data.totalUnits": given}))).total_units == kept


def test_private_mc_generates_events_in_event_based_jobs(tmp_path):
    base = {"JobType.pluginName": "PrivateMC", "Data.inputDataset": DROP, "Data.lumiMask": DROP,
            "Data.splitting": "EventBased", "Data.unitsPerJob": 500, "Data.totalUnits": 10000,
            "Data.publication": False}
    cfg = load_config(str(write_toml(tmp_path, base)))
    assert (cfg.job_type, cfg.input_dataset, cfg.splitting, cfg.units_per_job, cfg.total_units) == (
        "PrivateMC", None, "EventBased", 500, 10000)
    assert (cfg.events_per_lumi, cfg.primary_dataset) == (500, "CRAB_PrivateMC")
    cfg = load_config(str(write_toml(tmp_path, {**base, "Data.lumisPerFile": 4, "Data.publication": DROP,
                                                "Data.outputPrimaryDataset": "MyGluino_M1500"})))
    assert (cfg.events_per_lumi, cfg.primary_dataset) == (125, "MyGluino_M1500")
    refused(write_toml(tmp_path, {**base, "Data.splitting": DROP}),
            "Parameter Data.splitting has an invalid value ('Automatic'). MC generation job type only supports the "
            "following splitting algorithms: EventBased (Automatic is the default", parameter="Data.splitting")
    refused(write_toml(tmp_path, {**base, "Data.totalUnits": DROP}),
            "Parameter Data.totalUnits not specified. MC generation job type requires this parameter")
    refused(write_toml(tmp_path, {**base, "Data.totalUnits": 0}), "Data.totalUnits has an invalid value (0)")
    refused(write_toml(tmp_path, {**base, "Data.totalUnits": 10_000_000, "Data.unitsPerJob": 100}),
            "Your task would generate 100000 jobs. The maximum number of jobs in each task is 10000")
    refused(write_toml(tmp_path, {**base, "Data.lumisPerFile": 600}), "a lumi would hold no event")
    refused(write_toml(tmp_path, {**base, "Data.publication": DROP}),
            "Parameter Data.outputPrimaryDataset not specified. MC generation job type requires this parameter "
            "for publication")
    refused(write_toml(tmp_path, {**base, "Data.outputPrimaryDataset": "1bad name"}),
            "Invalid 'primarydataset' parameter ('1bad name', Data.outputPrimaryDataset)")
    refused(write_toml(tmp_path, {"Data.splitting": "EventBased"}),
            "EventBased splitting generates events: it needs JobType.pluginName = 'PrivateMC'.")


def test_user_input_files_are_read_file_based_at_the_whitelisted_sites(tmp_path):
    files = ["/store/user/me/ntuple_1.root", "root://eoscms.cern.ch//eos/cms/store/user/me/ntuple_2.root",
             "/store/user/me/ntuple_1.root", " "]
    base = {"Data.inputDataset": DROP, "Data.lumiMask": DROP, "Data.userInputFiles": files,
            "Data.outputPrimaryDataset": "MyNtuples"}
    cfg = load_config(str(write_toml(tmp_path, base)))
    assert (cfg.input_dataset, cfg.user_input_files, cfg.primary_dataset) == (None, tuple(files[:2]), "MyNtuples")
    assert load_config(str(write_toml(tmp_path, {**base, "Data.outputPrimaryDataset": DROP, "Data.publication": False}))
                       ).primary_dataset == "CRAB_UserFiles"
    refused(write_toml(tmp_path, {**base, "Data.splitting": "LumiBased"}),
            "Analysis job type with user input files only supports file-based splitting. Suggestion: Set "
            "Data.splitting = 'FileBased'.")
    refused(write_toml(tmp_path, {**base, "Site.whitelist": DROP}),
            "when a userInputFiles list is indicated without an inputDataset a valid site white list must be "
            "specified using the Site.whitelist parameter")
    refused(write_toml(tmp_path, {**base, "Data.userInputFiles": ["/store/user/me/a file.root"]}),
            "Incorrect 'Data.userInputFiles' parameter: entry 1 ('/store/user/me/a file.root')")


def test_ignore_locality_and_input_blocks(tmp_path):
    cfg = load_config(str(write_toml(tmp_path, {"Data.ignoreLocality": True, "Data.partialDataset": True,
                                                "Data.inputBlocks": ["0b9bd8f4-1f3c-4c9a-a1b6-26a33e2e5e11",
                                                                     "/TTbar/Run2024-v1/AODSIM#other"]})))
    assert cfg.ignore_locality and cfg.input_blocks == ("/TTbar/Run2024-v1/AODSIM#0b9bd8f4-1f3c-4c9a-a1b6-26a33e2e5e11",
                                                        "/TTbar/Run2024-v1/AODSIM#other")
    assert cfg.ignored == {"Data.partialDataset": True}


# --- the crabConfig.py loader ---------------------------------------------------------------------

def test_helper_modules_and_files_beside_the_config_are_found_from_anywhere(tmp_path, monkeypatch):
    write_toml(tmp_path)
    (tmp_path / "samples.py").write_text("DATASET = '/TTbar/Run2024-v1/AODSIM'\n")
    (tmp_path / "sites.txt").write_text("T2_CH_CERN\n")
    py = tmp_path / "crabConfig.py"
    py.write_text(CRAB_CONFIG_PY.replace("config.Data.inputDataset = '/TTbar/Run2024-v1/AODSIM'",
                                         "from samples import DATASET\nconfig.Data.inputDataset = DATASET")
                  .replace("config.Site.whitelist = ['T2_CH_CERN']",
                           "config.Site.whitelist = [l.strip() for l in open('sites.txt')]"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg = load_config(str(py))
    assert (cfg.input_dataset, cfg.site_whitelist) == ("/TTbar/Run2024-v1/AODSIM", ("T2_CH_CERN",))
    assert "samples" not in sys.modules and str(tmp_path) not in sys.path and str(elsewhere) == str(
        __import__("os").getcwd())


ANALYSIS_CRAB_DIR = """\
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'ZMuMu_2018D'
config.JobType.psetName = 'python/zmumu_cfg.py'
config.JobType.scriptExe = 'scripts/run.sh'
config.JobType.inputFiles = ['data/*.txt']
config.Data.inputDataset = '/DoubleMuon/Run2018D-UL2018_MiniAODv2-v1/MINIAOD'
config.Data.lumiMask = 'Cert_314472-325175_13TeV_Legacy2018_Collisions18_JSON.txt'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 50
config.Site.storageSite = 'T2_CH_CERN'
"""


def test_a_config_in_a_subdirectory_reads_its_files_from_where_crab_submit_is_typed(tmp_path, monkeypatch):
    """crab submit -c crab/crabConfig.py, typed in the analysis directory: crab reads the pset, the
    script, the input files and the lumi mask from there; what is beside the config comes first."""
    for name, text in (("python/zmumu_cfg.py", "# pset\n"), ("scripts/run.sh", "#!/bin/sh\n"),
                       ("data/weights.txt", "1\n"), ("crab/crabConfig.py", ANALYSIS_CRAB_DIR),
                       ("Cert_314472-325175_13TeV_Legacy2018_Collisions18_JSON.txt", '{"320500": [[1, 10]]}')):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    cfg = load_config("crab/crabConfig.py")
    assert (cfg.pset_name, cfg.script_exe, cfg.input_files) == (
        str(tmp_path / "python" / "zmumu_cfg.py"), str(tmp_path / "scripts" / "run.sh"),
        (str(tmp_path / "data" / "weights.txt"),))
    assert cfg.lumi_mask == {320500: [(1, 10)]}

    (tmp_path / "crab" / "python").mkdir()
    (tmp_path / "crab" / "python" / "zmumu_cfg.py").write_text("# the one beside the config\n")
    assert load_config("crab/crabConfig.py").pset_name == str(tmp_path / "crab" / "python" / "zmumu_cfg.py")
    (tmp_path / "scripts" / "run.sh").unlink()
    with pytest.raises(ConfigError, match=r"Cannot find the file .*/crab/scripts/run\.sh specified in the "
                                          r"JobType\.scriptExe"):
        load_config("crab/crabConfig.py")


MULTICRAB = """\
from CRABClient.UserUtilities import config
from CRABClient.ClientExceptions import ClientException
from http.client import HTTPException
config = config()
config.General.workArea = 'crab_projects'
config.JobType.psetName = 'pset.py'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Site.storageSite = 'T2_XX_Local'
{module_level}
if __name__ == '__main__':
    from CRABAPI.RawCommand import crabCommand
    for name, dataset in [('a', '/A/B-v1/AOD'), ('b', '/C/D-v1/AOD')]:
        config.General.requestName = name
        config.Data.inputDataset = dataset
        try:
            crabCommand('submit', config=config)
        except (HTTPException, ClientException) as e:
            print(e)
"""


def test_a_multicrab_script_loads_its_module_level_config(tmp_path):
    py = tmp_path / "multicrab.py"
    py.write_text(MULTICRAB.format(module_level="config.Data.inputDataset = '/A/B-v1/AOD'"))
    cfg = load_config(str(py))
    assert cfg.multicrab and cfg.input_dataset == "/A/B-v1/AOD"
    py.write_text(MULTICRAB.format(module_level=""))
    refused(py, "requires an input dataset", "This is a multi-crab script: crabtui task submit submits its "
            "module-level config, without what its __main__ block sets; "
            f"'crabtui task submit --multicrab {py}' runs that block and submits each config it passes to "
            "crabCommand('submit').)")
    assert not load_config(str(write_toml(tmp_path))).multicrab


MULTICRAB_IN_MAIN = """\
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from http.client import HTTPException

def submit(config):
    try:
        crabCommand('submit', config=config)
    except HTTPException as hte:
        print("Failed submitting task: %s" % (hte.headers))
    except ClientException as cle:
        print("Failed submitting task: %s" % (cle))

if __name__ == '__main__':
    from CRABClient.UserUtilities import config
    config = config()
    config.JobType.psetName = 'nano_cfg.py'
    config.Data.splitting = 'FileBased'
    config.Data.unitsPerJob = 2
    config.Site.storageSite = 'T2_US_Nebraska'
    for name, dataset in [('TTToSemiLeptonic', '/TTToSemiLeptonic_TuneCP5_13TeV-powheg-pythia8/'
                                                'RunIISummer20UL17NanoAODv9-106X_mc2017_realistic_v9-v1/NANOAODSIM')]:
        config.General.requestName = name
        config.Data.inputDataset = dataset
        submit(config)
"""


def test_a_multicrab_script_whose_config_is_made_in_its_main_block_is_pointed_to_multicrab(tmp_path):
    """CRAB's own multi-crab example builds its config under ``if __name__ == '__main__':``; given
    to ``task submit`` without ``--multicrab``, the one line says how to run it."""
    py = tmp_path / "multicrab_2017.py"
    py.write_text(MULTICRAB_IN_MAIN)
    message = refused(py, "Unable to load Configuration object from file", "defines no 'config' at module level",
                      f"'crabtui task submit --multicrab {py}' runs its __main__ block")
    assert "\n" not in message and "config = config()" not in message


class Recorder:
    """A Submitter that keeps what it is given, and names tasks as the CLI would."""

    def __init__(self, refuse: str | None = None):
        self.submitted, self.refusals, self.refuse = [], [], refuse

    def submit(self, cfg, wait=False):
        if cfg.request_name == self.refuse:
            self.refused(f"a task named {cfg.request_name} exists already")
            raise SubmitFailed(f"a task named {cfg.request_name} exists already")
        self.submitted.append(cfg)
        return f"250101_000000:me_crab_{cfg.request_name}"

    def refused(self, message):
        self.refusals.append(message)


MODULE_LEVEL_SUBMIT = """\
from CRABClient.UserUtilities import config
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from httplib import HTTPException
config = config()
config.JobType.psetName = 'pset.py'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Site.storageSite = 'T2_XX_Local'
for name, dataset in [('a', '/A/B-v1/AOD'), ('b', '/C/D-v1/AOD'), ('c', 'not a dataset')]:
    config.General.requestName = name
    config.Data.inputDataset = dataset
    try:
        print(crabCommand('submit', config=config))
    except HTTPException as hte:
        print("Failed submitting task: %s" % (hte.headers))
    except ClientException as cle:
        print("Failed submitting task: %s: %s" % (type(cle).__name__, cle))
"""


def test_module_level_crab_command_submit_hands_each_config_over_as_it_was_and_returns_crabs_answer(tmp_path, capsys):
    py = tmp_path / "multicrab.py"
    py.write_text(MODULE_LEVEL_SUBMIT)
    recorder = Recorder(refuse="b")
    run_crab_config(py, recorder)
    assert [(c.request_name, c.input_dataset) for c in recorder.submitted] == [("a", "/A/B-v1/AOD")]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "{'requestname': 'a', 'uniquerequestname': '250101_000000:me_crab_a'}"
    assert out[1] == "Failed submitting task: ClientException: a task named b exists already"
    assert out[2].startswith(f"Failed submitting task: ConfigurationException: {py}: Invalid CRAB configuration: "
                             f"Parameter Data.inputDataset ('not a dataset') is not a CMS dataset name.")
    assert len(recorder.refusals) == 2 and "Data.inputDataset ('not a dataset')" in recorder.refusals[1]
    assert "httplib" not in sys.modules


MUTED_MULTICRAB = """\
from CRABAPI.RawCommand import crabCommand
from CRABClient.UserUtilities import config, setConsoleLogLevel, getConsoleLogLevel
from CRABClient.ClientUtilities import LOGLEVEL_MUTE
from CRABClient.ClientExceptions import ClientException

setConsoleLogLevel(LOGLEVEL_MUTE)
config = config()
config.JobType.psetName = 'pset.py'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 50
config.Site.storageSite = 'T2_XX_Local'
for era in ('B', 'C'):
    config.General.requestName = 'SingleMuon_2017' + era
    config.Data.inputDataset = '/SingleMuon/Run2017%s-UL2017_MiniAODv2-v1/MINIAOD' % era
    try:
        res = crabCommand('submit', config=config)
    except ClientException as cle:
        print("Failed submitting task: %s" % (cle))
print('console log level', getConsoleLogLevel() == LOGLEVEL_MUTE)
"""


def test_a_multicrab_script_muting_crabs_console_log_runs(tmp_path, capsys):
    """The CRAB client library API's way to quiet crabCommand (setConsoleLogLevel(LOGLEVEL_MUTE))
    is there to call; crabtui's own output does not go through CRAB's log."""
    py = tmp_path / "multicrab_2017.py"
    py.write_text(MUTED_MULTICRAB)
    recorder = Recorder()
    run_crab_config(py, recorder)
    assert [c.request_name for c in recorder.submitted] == ["SingleMuon_2017B", "SingleMuon_2017C"]
    assert capsys.readouterr().out.splitlines()[-1] == "console log level True"
    assert "CRABClient.ClientUtilities" not in sys.modules


USER_UTILITIES_IMPORTS = """\
from CRABClient.UserUtilities import ClientException, LOGLEVEL_MUTE, Configuration
from CRABClient.UserUtilities import config as Config
from CRABClient.UserUtilities import setConsoleLogLevel
from CRABAPI.RawCommand import crabCommand

setConsoleLogLevel(LOGLEVEL_MUTE)
for name in ('ok', 'bad'):
    cfg = Config()
    cfg.General.requestName = name
    cfg.JobType.psetName = 'pset.py'
    cfg.Data.inputDataset = '/A/B-v1/AOD' if name == 'ok' else 'not a dataset'
    cfg.Site.storageSite = 'T2_XX_Local'
    try:
        crabCommand('submit', config=cfg)
    except ClientException as exc:
        print("ClientException", isinstance(cfg, Configuration))
"""


def test_a_script_imports_client_exception_and_log_level_from_user_utilities(tmp_path, capsys):
    """CRAB's UserUtilities imports ClientException, LOGLEVEL_MUTE and Configuration, and multi-crab
    scripts import them from there (``from CRABClient.UserUtilities import ClientException``)."""
    py = tmp_path / "crab_submit.py"
    py.write_text(USER_UTILITIES_IMPORTS)
    recorder = Recorder()
    run_crab_config(py, recorder)
    assert [c.request_name for c in recorder.submitted] == ["ok"]
    assert capsys.readouterr().out.splitlines()[-1] == "ClientException True"


CRAB_COMMANDS = """\
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.UserUtilities import config
config = config()
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '/A/B-v1/AOD'
config.Site.storageSite = 'T2_XX_Local'
for command, args, kwargs in (('status', (), {'dir': 'crab_projects/crab_a', 'long': True, 'json': False}),
                              ('resubmit', ('--jobids=2',), {'dir': 'crab_projects/crab_b c', 'maxmemory': 3000})):
    try:
        crabCommand(command, *args, **kwargs)
    except ClientException as cle:
        print("Failed executing command %s: %s" % (command, cle))
"""


def test_crab_commands_other_than_submit_name_the_command_line_they_stand_for(tmp_path, capsys):
    """A multi-crab script's crabCommand('status', dir=...) (CRAB's multicrab example with -c status)
    raises ClientException naming the crabtui command the call stands for, its keywords made
    options as CRABAPI.RawCommand makes them."""
    py = tmp_path / "multicrab.py"
    py.write_text(CRAB_COMMANDS)
    run_crab_config(py, Recorder())
    assert capsys.readouterr().out.splitlines() == [
        "Failed executing command status: crabCommand('status'): crabtui runs crabCommand('submit') only; run "
        "'crabtui task status --dir crab_projects/crab_a --long' instead, the command line this call stands for",
        "Failed executing command resubmit: crabCommand('resubmit'): crabtui runs crabCommand('submit') only; run "
        "'crabtui task resubmit --dir 'crab_projects/crab_b c' --maxmemory 3000 --jobids=2' instead, the command line "
        "this call stands for"]


CRAB_API_ERRORS = """\
import CRABAPI
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
for command in ('st', 'report', 'getoutput'):
    try:
        crabCommand(command, dir='crab_projects/crab_a')
    except ClientException as e:
        print('ClientException %s %s' % (type(e).__name__, e))
    except CRABAPI.APIException as e:
        print('APIException %s %s' % (type(e).__name__, e))
"""


def test_a_refused_crab_command_raises_the_exception_crabs_api_raises(tmp_path, capsys):
    """crabCommand takes crab's command names ('st' is no module of CRABClient.Commands: CRABAPI's
    BadArgumentException, which is no ClientException); a hook's refusal reaches the script as the
    CRABClient exception it names, a subclass of ClientException."""
    from engine.crab.client.crab_config_py import CommandFailed

    def report(arguments):
        raise CommandFailed(f"report {arguments}: no job has finished", "CommandFailedException")

    def getoutput(arguments):
        raise CommandFailed("No such option '--outpath'.", "BadArgumentException")

    py = tmp_path / "follow.py"
    py.write_text(CRAB_API_ERRORS)
    run_crab_config(py, Recorder(), main=True, commands={"report": report, "getoutput": getoutput})
    assert capsys.readouterr().out.splitlines() == [
        'APIException BadArgumentException Could not find command "st"',
        "ClientException CommandFailedException report ['--dir', 'crab_projects/crab_a']: no job has finished",
        "APIException BadArgumentException No such option '--outpath'."]


def test_main_runs_the_scripts_main_block_with_its_arguments_and_puts_everything_back(tmp_path, monkeypatch):
    py = tmp_path / "multicrab.py"
    py.write_text(MULTICRAB.format(module_level="import sys\nconfig.General.requestName = sys.argv[1]"))
    argv, method = list(sys.argv), multiprocessing.get_start_method(allow_none=True)
    recorder = Recorder()
    run_crab_config(py, recorder, main=True, argv=["first"])
    assert [(c.request_name, c.input_dataset) for c in recorder.submitted] == [("a", "/A/B-v1/AOD"),
                                                                                ("b", "/C/D-v1/AOD")]
    assert sys.argv == argv and multiprocessing.get_start_method(allow_none=True) == method
    imported = Recorder()
    # as `crabtui task submit multicrab.py` imports it (its sys.argv, not pytest's): no __main__ block, nothing submitted
    monkeypatch.setattr(sys, "argv", ["crabtui", "task", "submit", str(py)])
    run_crab_config(py, imported)
    assert imported.submitted == imported.refusals == []
    py.write_text(MULTICRAB.format(module_level="") + "    raise SystemExit(0)\n")
    run_crab_config(py, Recorder(), main=True)  # a script's sys.exit(0) is its normal end
    py.write_text(MULTICRAB.format(module_level="") + "    raise SystemExit(2)\n")
    with pytest.raises(ConfigError) as info:
        run_crab_config(py, Recorder(), main=True)
    last = len(py.read_text().splitlines())
    assert str(info.value) == f"{py}:{last}: Error while loading CRAB configuration {py}: it called sys.exit(2)."


@pytest.mark.parametrize("code, line, fragments", [
    ('print "submitting", config.General.requestName\n', 3,
     ["SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)? This is Python 2; crabtui runs "
      "configurations with Python 3, as CRAB's client does."]),
    ("try:\n    pass\nexcept HTTPException, hte:\n    print(hte.headers)\n", 5,
     ["SyntaxError: multiple exception types must be parenthesized. This is Python 2's 'except E, name:'; crabtui "
      "runs configurations with Python 3, as CRAB's client does: write 'except HTTPException as hte:'."]),
    ("if True:\n        x = 1\n\ty = 2\n", 5,
     ["SyntaxError: inconsistent use of tabs and spaces in indentation. Python 2 read a tab as 8 spaces; crabtui runs "
      "configurations with Python 3, as CRAB's client does, which refuses mixed indentation: indent with spaces only."]),
    ("for i in xrange(3):\n    pass\n", 3,
     ["NameError: name 'xrange' is not defined", "xrange is Python 2's; crabtui runs configurations with Python 3, "
      "as CRAB's client does: use range."]),
    ("import urllib2\n", 3, ["No module named 'urllib2'", "urllib2 is Python 2's; crabtui runs configurations with "
                                                           "Python 3, as CRAB's client does: import urllib.request."]),
    ("for k, v in {}.iteritems():\n    pass\n", 3, ["AttributeError", "use items()"]),
    ("samples = {'TTbar': '/TTbar/Run2024-v1/AODSIM'}\nconfig.Data.inputDataset = samples.values()[0]\n", 4,
     ["TypeError: 'dict_values' object is not subscriptable. Python 2's values() returned a list; crabtui runs "
      "configurations with Python 3, as CRAB's client does: wrap it in list(...) before indexing it."]),
    ("for line in file('datasets.txt'):\n    pass\n", 3, ["NameError: name 'file' is not defined", "use open."]),
])
def test_python_2_leftovers_are_one_line_naming_the_file_and_line(tmp_path, code, line, fragments):
    py = tmp_path / "crabConfig.py"
    py.write_text("from CRABClient.UserUtilities import config\nconfig = config()\n" + code)
    message = refused(py, *fragments)
    assert message.startswith(f"{py}:{line}: Error while loading CRAB configuration {py}: ") and "\n" not in message


def test_httplib_is_python_3s_http_client_while_a_config_runs(tmp_path):
    write_toml(tmp_path)  # and golden.json beside it
    py = tmp_path / "crabConfig.py"
    py.write_text(CRAB_CONFIG_PY + "from httplib import HTTPException\nimport http.client\n"
                  "assert HTTPException is http.client.HTTPException\n")
    assert load_config(py).request_name
    assert "httplib" not in sys.modules


@pytest.mark.parametrize("code, fragments, absent", [
    ("import yaml_of_nowhere\n", ["ModuleNotFoundError: No module named 'yaml_of_nowhere'",
                                  "Make the module yaml_of_nowhere importable where crabtui runs."], "CRABClient"),
    ("open('list_of_files.txt')\n", ["FileNotFoundError", "list_of_files.txt"], "CRABClient"),
    ("import FWCore.ParameterSet.Config as cms\n", ["FWCore is part of CMSSW, which crabtui does not need"],
     "CRABClient"),
    ("from CRABClient.UserUtilities import getLumiListInValidFiles\n",
     ["cannot import name 'getLumiListInValidFiles'", "Of CRAB's modules, crabtui provides"], None),
])
def test_the_loaders_hint_is_given_only_where_it_is_true(tmp_path, code, fragments, absent):
    py = tmp_path / "crabConfig.py"
    py.write_text("from CRABClient.UserUtilities import config\nconfig = config()\n" + code)
    message = refused(py, *fragments)
    assert message.startswith(f"{py}:3: ") and "\n" not in message
    if absent:
        assert absent not in message.split("Error while loading CRAB configuration")[1].replace(str(py), "")


def test_the_readmes_failure_plan_example_is_accepted_as_written(tmp_path):
    """The README's Debug.failurePlan example, pasted into a crabConfig.py, plans what it says."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```python\n(config\.Debug\.failurePlan = .*?)```", readme, re.S).group(1)
    (tmp_path / "pset.py").write_text("# pset\n")
    (tmp_path / "crabConfig.py").write_text(
        "from CRABClient.UserUtilities import config\nconfig = config()\nconfig.JobType.psetName = 'pset.py'\n"
        "config.Data.inputDataset = '/TTbar/Run2024-v1/AODSIM'\nconfig.Data.splitting = 'FileBased'\n"
        "config.Data.unitsPerJob = 10\nconfig.Site.storageSite = 'T2_XX_Local'\n" + block)
    plan = load_config(str(tmp_path / "crabConfig.py")).failure_plan
    assert plan == (PlannedFailure(job="2", attempt=1, exit_code=8021),
                    PlannedFailure(job="4", attempt=None, memory_mb=3000),
                    PlannedFailure(job="5", attempt=1, hold_code=13))
    toml = re.search(r"In TOML: `(failurePlan = [^`]+)`", readme).group(1)
    (tmp_path / "task.toml").write_text(f'[JobType]\npsetName = "pset.py"\n[Data]\ninputDataset = "/TTbar/Run2024-v1/AODSIM"\n'
                                        f'splitting = "FileBased"\nunitsPerJob = 10\n[Site]\nstorageSite = "T2_XX_Local"\n'
                                        f'[Debug]\n{toml}\n')
    assert load_config(str(tmp_path / "task.toml")).failure_plan == (PlannedFailure(job="2", attempt=1, exit_code=8021),)


OUT_LFN_TYPO = """\
from WMCore.Configuration import Configuration
from CRABClient.UserUtilities import getUsernameFromSiteDB

config = Configuration()
config.section_("General")
config.General.requestName = 'DisplacedMuons_2018C'
config.section_("JobType")
config.JobType.psetName = 'pset.py'
config.section_("Data")
config.Data.inputDataset = '/DoubleMuon/Run2018C-UL2018_MiniAODv2-v1/MINIAOD'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 40
config.Data.outLFNDirBase = 'LFN'
config.section_("Site")
config.Site.storageSite = 'T2_US_Nebraska'
"""


def test_an_output_lfn_outside_the_user_group_and_local_areas_is_refused_in_crab_servers_words(tmp_path):
    """crab submit fails at the server (checkOutLFN) for a typo in the area; any user or group
    name passes, since the local login is not the CERN account a config names."""
    py = tmp_path / "crabConfig.py"
    user = getpass.getuser()
    for lfn, value in (("'/store/usr/%s/displaced' % getUsernameFromSiteDB()", f"/store/usr/{user}/displaced"),
                       ("'/store/group/'", "/store/group/"), ("'store/user/jdoe/'", "store/user/jdoe/")):
        py.write_text(OUT_LFN_TYPO.replace("'LFN'", lfn))
        message = refused(py, "The parameter Data.outLFNDirBase in the CRAB configuration file must start with "
                          "either '/store/user/<username>/' or '/store/group/<groupname>/'",
                          parameter="Data.outLFNDirBase")
        assert "\n" not in message and message.endswith(f"; it is {value!r}.")
    for lfn in ("'/store/user/%s/displaced' % getUsernameFromSiteDB()", "'/store/user/jdoe'",
                "'/store/group/phys_exotica/displaced/'", "'/store/local/scratch/'"):
        py.write_text(OUT_LFN_TYPO.replace("'LFN'", lfn))
        assert load_config(str(py)).out_lfn_dir_base.startswith("/store/")


PRINTS_ITS_CONFIG = """\
from WMCore.Configuration import Configuration
config = Configuration()
config.section_("General")
config.General.requestName = 'HToZZ_2018'
config.section_("JobType")
config.JobType.psetName = 'pset.py'
config.JobType.pyCfgParams = ['isMC=1']
config.section_("Data")
config.Data.inputDataset = '/GluGluHToZZTo4L_M125_TuneCP5_13TeV_powheg2_JHUGenV7011_pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v2/MINIAODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.publication = False
config.section_("Site")
config.Site.storageSite = 'T2_CH_CERN'
print(config)
"""


def test_print_config_shows_the_python_that_makes_it_as_wmcores_configuration_does(tmp_path, capsys):
    """Analyses print their config at the end of crabConfig.py to see what crab submit sends."""
    py = tmp_path / "crabConfig.py"
    py.write_text(PRINTS_ITS_CONFIG)
    cfg = load_config(str(py))
    printed = capsys.readouterr().out
    assert printed.splitlines()[:5] == ["from WMCore.Configuration import Configuration", "config = Configuration()",
                                        "config.section_('General')", "config.General.requestName = 'HToZZ_2018'",
                                        "config.section_('JobType')"]
    assert "config.JobType.pyCfgParams = ['isMC=1']\n" in printed and "config.Data.publication = False\n" in printed
    again = tmp_path / "printed" / "crabConfig.py"  # what it prints is itself a configuration
    again.parent.mkdir()
    again.write_text(printed)
    assert load_config(str(again)) == dataclasses.replace(cfg, source=str(again), pset_name=str(again.parent / "pset.py"))


@pytest.mark.parametrize("lines, fragments", [
    ("config.General.instance = 'k8s'\n",
     ['Invalid value "k8s" for configuration.General.instance; valid values are prod, preprod, test2, test11, '
      'test12, test14, other.']),
    ("config.General.instance = 'Prod'\n", ['Invalid value "Prod"', "Did you mean prod?"]),
    ("config.General.instance = 'other'\nconfig.General.restHost = 'cmsweb-test5.cern.ch'\n",
     ["General.instance = 'other' needs General.restHost and General.dbInstance"]),
])
def test_general_instance_is_one_of_crabs(tmp_path, lines, fragments):
    """crab submit refuses an instance it does not know before anything else; the ones it knows
    (an analysis's 'prod', a developer's 'preprod' or 'other' server) load, and change nothing."""
    write_toml(tmp_path)
    py = tmp_path / "crabConfig.py"
    py.write_text(CRAB_CONFIG_PY + lines)
    line = refused(py, *fragments, parameter="General.instance")
    assert "\n" not in line
    for good in ("config.General.instance = 'prod'\n", "config.General.instance = 'preprod'\n",
                 "config.General.instance = 'other'\nconfig.General.restHost = 'cmsweb-test5.cern.ch'\n"
                 "config.General.dbInstance = 'dev'\n"):
        py.write_text(CRAB_CONFIG_PY + good)
        assert load_config(str(py)).ignored["General.instance"] in ("prod", "preprod", "other")


# --- values crab submit lets through, and the checks it makes on them -------------------------------

ANALYSIS_PY = """\
import os, sys
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'dimuon_skim_2018'
config.JobType.psetName = 'skim_cfg.py'
config.Data.inputDataset = '/DoubleMuon/Run2018B-UL2018_MiniAODv2-v1/MINIAOD'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 20
config.Data.publication = False
config.Site.storageSite = 'T2_CH_CERN'
"""


def crab_config_py(tmp_path, extra: str):
    path = tmp_path / "crabConfig.py"
    path.write_text(ANALYSIS_PY + textwrap.dedent(extra))
    return path


def test_numbers_written_as_text_and_flags_as_0_or_1_load_as_crab_reads_them(tmp_path, monkeypatch):
    """A config that takes its numbers from the environment gets strings, which crab submit sends
    as they are and CRAB's server parses; CRAB's client sends a flag as 1 if it is true, else 0."""
    monkeypatch.setenv("UNITS_PER_JOB", "35")
    cfg = load_config(crab_config_py(tmp_path, """\
        config.Data.unitsPerJob = os.environ.get('UNITS_PER_JOB', '10')
        config.JobType.maxMemoryMB = os.environ.get('MAX_MEMORY', '2500')
        config.Data.totalUnits = '700'
        config.General.transferLogs = 1
        config.Data.publication = 0
        """))
    assert (cfg.units_per_job, cfg.max_memory_mb, cfg.total_units) == (35, 2500, 700)
    assert cfg.transfer_logs is True and cfg.ignored["Data.publication"] is False


def test_a_flag_written_as_text_is_refused_since_crab_would_read_false_as_true(tmp_path):
    refused(crab_config_py(tmp_path, "config.General.transferLogs = 'False'\n"),
            "Parameter General.transferLogs requires a value of type boolean (while a value of type str was given: "
            "'False')", "'False' included, as true", parameter="General.transferLogs")
    refused(crab_config_py(tmp_path, "config.Data.unitsPerJob = 'twenty'\n"),
            "Parameter Data.unitsPerJob requires a value of type integer", parameter="Data.unitsPerJob")


@pytest.mark.parametrize("line, message", [
    ("config.Data.inputDBS = 'phys3'",
     "Parameter Data.inputDBS has an invalid value ('phys3'). Allowed values are: 'global' "
     "('https://cmsweb.cern.ch/dbs/prod/global/DBSReader'), 'phys01'"),
    ("config.Data.inputDBS = 'phys03'",
     "A local DBS instance 'phys03' was specified for reading an input dataset of tier MINIAOD. Datasets of tier "
     "different than USER must be read from the global DBS instance; this is, set Data.inputDBS = 'global'."),
    ("config.Data.publication = True\nconfig.Data.publishDBS = 'global'",
     "Parameter Data.publishDBS has an invalid value ('global'). Allowed values are: 'phys03' "
     "('https://cmsweb.cern.ch/dbs/prod/phys03/DBSWriter')"),
])
def test_dbs_instances_are_checked_as_crab_submit_checks_them(tmp_path, line, message):
    refused(crab_config_py(tmp_path, line + "\n"), "Invalid CRAB configuration: " + message)


def test_dbs_instances_crab_accepts(tmp_path):
    for line in ("config.Data.inputDBS = 'https://cmsweb.cern.ch/dbs/prod/global/DBSReader/'",
                 "config.Data.inputDBS = 'global'\nconfig.Data.publishDBS = 'global'",  # publication is off
                 "config.Data.publication = True\nconfig.Data.publishDBS = 'phys03'"):
        assert load_config(crab_config_py(tmp_path, line + "\n")).input_dataset


def test_runtime_above_what_crab_guarantees_is_lowered_with_its_warning_and_failure_limit_warned(tmp_path):
    cfg = load_config(crab_config_py(tmp_path, "config.JobType.maxJobRuntimeMin = 2800\n"
                                               "config.General.failureLimit = 50\n"))
    assert cfg.max_job_runtime_min == 2750
    assert any("Task requests 2800 minutes of runtime, but only 2750 are guaranteed to be available; "
               "JobType.maxJobRuntimeMin is lowered to 2750" in w for w in cfg.warnings), cfg.warnings
    assert any("You have specified deprecated parameter 'failureLimit'" in w for w in cfg.warnings), cfg.warnings
    assert load_config(crab_config_py(tmp_path, "config.JobType.maxJobRuntimeMin = 2750\n")).warnings == ()


def test_a_config_reading_an_unset_environment_variable_is_told_to_set_it(tmp_path, monkeypatch):
    monkeypatch.delenv("CRAB_DATASET", raising=False)
    message = refused(crab_config_py(tmp_path, "config.Data.inputDataset = os.environ['CRAB_DATASET']\n"),
                      "KeyError: 'CRAB_DATASET'", "reads the environment variable CRAB_DATASET, which is not set")
    assert message.startswith(f"{tmp_path / 'crabConfig.py'}:11: ")


def test_a_config_reading_sys_argv_finds_crab_submits_command_line(tmp_path):
    """As under 'crab submit crabConfig.py Data.unitsPerJob=5': the file's name, then the parameters."""
    path = crab_config_py(tmp_path, """\
        assert sys.argv[1] == 'submit', sys.argv
        config.General.requestName = 'skim_' + os.path.basename(sys.argv[2]).split('.')[0]
        """)
    assert load_config(path).request_name == "skim_crabConfig"
    assert load_config(path, overrides=["Data.unitsPerJob=5"]).units_per_job == 5


def test_a_config_importing_its_cmssw_pset_is_told_what_to_do_instead(tmp_path):
    """Some configurations import their pset to read its output file name; that needs CMSSW (crab
    submit runs under cmsenv), which crabtui does not provide."""
    (tmp_path / "ntuple_cfg.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('NT')\n")
    message = refused(crab_config_py(tmp_path, """\
        from ntuple_cfg import process
        config.JobType.outputFiles = [process.TFileService.fileName.value()]
        """), "No module named 'FWCore'. FWCore is part of CMSSW, which crabtui does not need and does not provide. "
              "It is imported by ntuple_cfg.py, a CMSSW configuration the file imports")
    assert message.count("\n") == 0
    direct = refused(crab_config_py(tmp_path, "import FWCore.ParameterSet.Config as cms\n"), "FWCore is part of CMSSW")
    assert "It is imported by" not in direct


PHYS03_USER_DATASET = ("/WJetsToLNu_HT-400to600_Tune4C_13TeV-madgraph-tauola/schoef-WJetsToLNu_HT-400to600_Tune4C_"
                       "13TeV-madgraph-tauola_Spring14dr-PU_S14_POSTLS170_V6-v1-92bfc1aa0ef8c674e0edabb945b19298/USER")


@pytest.mark.parametrize("dataset, accepted", [
    (PHYS03_USER_DATASET, True),  # a processed name of 125 characters: DBS takes up to 199
    ("/WJets/" + "p" * 199 + "/USER", True),
    ("/WJets/" + "p" * 200 + "/USER", False),
    ("/WJets/Spring14-v1/user", False),  # the tier is upper case
    ("/W.Jets/Spring14-v1/USER", False),  # no '.' in a primary dataset
])
def test_input_dataset_names_as_crab_server_checks_them(tmp_path, dataset, accepted):
    """A user's phys03 dataset, <user>-<outputDatasetTag>-<hash>, loads: the CRAB server checks inputdata
    against WMCore's DATASET_RE, whose processed name may be 199 characters long."""
    (tmp_path / "defaultMINIAODTupelizer_cfg.py").write_text("import FWCore.ParameterSet.Config as cms\n")
    path = tmp_path / "crab.py"
    path.write_text(textwrap.dedent(f"""\
        from WMCore.Configuration import Configuration
        config = Configuration()
        config.section_("General")
        config.General.requestName = "WJetsToLNu_HT-400to600"
        config.section_("JobType")
        config.JobType.pluginName = 'Analysis'
        config.JobType.psetName = 'defaultMINIAODTupelizer_cfg.py'
        config.section_("Data")
        config.Data.inputDBS = 'phys03'
        config.Data.inputDataset = '{dataset}'
        config.Data.splitting = 'FileBased'
        config.Data.unitsPerJob = 1
        config.section_("Site")
        config.Site.storageSite = 'T2_AT_Vienna'
        """))
    if accepted:
        assert load_config(str(path)).input_dataset == dataset
    else:
        refused(path, f"Parameter Data.inputDataset ('{dataset}') is not a CMS dataset name",
                parameter="Data.inputDataset")


def test_an_error_the_config_raises_with_its_own_full_stop_is_quoted_with_one(tmp_path):
    """A config that checks its own inputs raises with a sentence of its own; the one line quotes it
    as it ends, without a second full stop."""
    py = tmp_path / "crabConfig.py"
    py.write_text(textwrap.dedent("""\
        import re
        from CRABClient.UserUtilities import config
        config = config()
        dataset_name = '/DYJetsToLL_M-50/RunIISummer20UL18MiniAODv2-v2/MINIAODSIM'
        dataset_pattern = r'/(.*)/RunIIAutumn18MiniAOD-(.*)/MINIAODSIM'
        if not re.match(dataset_pattern, dataset_name):
            raise ValueError("Dataset '%s' did not match to pattern '%s'." % (dataset_name, dataset_pattern))
        """))
    message = refused(py, "ValueError: Dataset '/DYJetsToLL_M-50/RunIISummer20UL18MiniAODv2-v2/MINIAODSIM' did not "
                          "match to pattern '/(.*)/RunIIAutumn18MiniAOD-(.*)/MINIAODSIM'.")
    assert message.startswith(f"{py}:7: ") and not message.endswith(".."), message
