"""The framework job report (FJR): the ``jobReport.json`` a CRAB job leaves for its PostJob.

This module is the one place that reads and writes it. The shape is the one CRAB's job wrapper
(``CMSRunAnalysis.py``) writes from WMCore's ``Report.__to_json__`` and CRAB's PostJob and RetryJob
read (sources: CRABServer ``scripts/job_wrapper/CMSRunAnalysis.py``, ``TaskWorker/Actions/PostJob.py``
and ``RetryJob.py``)::

    {
      "exitCode": 8021,                 the job's exit code: 0, a CMSSW code (8021) or a wrapper code (50660)
      "exitMsg": "...",                 "OK" on success, else what failed
      "exitAcronym": "FAILED",          "OK" or "FAILED"
      "jobExitCode": 8021,              the payload's own exit code (CRAB's ExeExitCode)
      "executed_site": "T2_US_Nebraska",
      "steps": {
        "cmsRun": {
          "status": 8021, "start": 1718000000, "stop": 1718000123,    unix times
          "input": {"source": [                                       files read, with the lumis processed
            {"lfn": "/store/...", "pfn": "root://...", "input_source_class": "PoolSource",
             "input_type": "primaryFiles", "module_label": "source", "catalog": "", "guid": "",
             "events": 1380, "runs": {"1": [4, 5, 6]}}              "secondaryFiles": a parent read too
          ]},
          "output": {"output": [                                      output module -> files (success only)
            {"module_label": "output", "output_module_class": "PoolOutputModule", "lfn": "",
             "pfn": "output.root", "events": 1380, "size": 6900000, "runs": {"1": [4, 5, 6]}}
          ]},
          "errors": [{"type": "FileReadError", "details": "...", "exitCode": 8021}],
          "performance": {
            "cpu": {"TotalJobTime": "183.0", "TotalJobCPU": "160.2", "TotalInitTime": "10.0",
                    "TotalLoopTime": "173.0", "TotalLoopCPU": "151.2", "EventThroughput": "15.0",
                    "AvgEventTime": "0.0667", "NumberOfThreads": "1", "NumberOfStreams": "1"},
            "memory": {"PeakValueRss": "1234.5", "PeakValueVsize": "1975.2"},       MB
            "storage": {"readTotalMB": "0.0", "writeTotalMB": "6.6"},
            "multicore": {}
          },
          "site": {}, "parameters": {}, "analysis": {}, "cleanup": {}, "logs": {}
        }
      },
      "crabtui": {...}                  crabtui's own facts about the simulated run, see below
    }

Performance values are strings, as CMSSW writes them; this module also accepts numbers. Durations
are in (simulated) seconds, memory in MB, sizes in bytes. Run numbers are object keys, so strings.

The ``crabtui`` section (absent from real reports, optional here) holds: ``site_speed``,
``time_scale``, ``attempt``, ``request_memory_mb``, ``injected`` (the failure the simulated grid
injected: ``{"source": "plan" | "site", "exitCode": n}`` or ``"memoryMB"``/``"hold"``; null for
none), ``stopped_early`` (the stop-after limit ended the run) and ``unprocessed`` (``{"run":
[lumis]}`` the job was given but did not process, because of the limit or a failure).

:func:`read_report` validates what PostJob relies on and raises :class:`FJRError` naming the file
and the key (``jobReport.json.3: steps.cmsRun.input.source[2].runs: ...``, list items counted from
1); unknown keys are kept, since real reports hold many more. :func:`summarize` gives the numbers
``crab status`` shows; :func:`performance` reads only those numbers, quickly, for a status of
thousands of jobs. The module is standard library only: it runs in jobs and DAGMan scripts.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

from engine.atomic import write_atomically
from engine.crab.jsonfile import read_json

__all__ = [
    "FJR_NAME", "FJRError", "Summary", "build_report", "minimal_report", "performance", "read_report",
    "runs_json", "summarize", "validate", "write_report",
]

FJR_NAME = "jobReport.json"
"""The report's name in the job's scratch directory. On the submit side CRAB keeps it as
``jobReport.json.<job id>`` (``transfer_output_remaps``)."""

_RUNS_EXAMPLE = '{"1": [4, 5, 6]}'


class FJRError(ValueError):
    """A job report that cannot be used; the message names the file and the key."""


# ------------------------------------------------------------------------------------ writing

def _number_text(value: float) -> str:
    """A performance value as CMSSW writes it: a decimal string (``"1"`` for a count)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return repr(round(float(value), 4))


def runs_json(lumis: dict[int, list[int]]) -> dict[str, list[int]]:
    """``{run: [lumi, ...]}`` with run numbers as strings, as the FJR keys them."""
    return {str(run): list(numbers) for run, numbers in sorted(lumis.items())}


def output_file(item: dict[str, Any]) -> dict[str, Any]:
    """One output file of the report's ``steps.cmsRun.output``, from ``{"pfn", "size", "events",
    "lumis"}`` (and optionally ``"lfn"``, ``"guid"``)."""
    return {"module_label": "output", "output_module_class": "PoolOutputModule", "lfn": item.get("lfn", ""),
            "pfn": item["pfn"], "events": int(item["events"]), "size": int(item["size"]),
            "runs": runs_json(item["lumis"]), "checksums": {}, "guid": item.get("guid", "")}


def build_report(*, exit_code: int, exit_msg: str, site: str | None, start: float, stop: float,
                 inputs: list[dict[str, Any]], outputs: list[dict[str, Any]] | None = None,
                 errors: list[dict[str, Any]] | None = None, cpu: dict[str, float] | None = None,
                 memory: dict[str, float] | None = None, storage: dict[str, float] | None = None,
                 job_exit_code: int | None = None, crabtui: dict[str, Any] | None = None,
                 unprocessed: dict[int, list[int]] | None = None) -> dict[str, Any]:
    """A complete report. ``inputs`` are ``{"lfn", "pfn", "events", "lumis": {run: [lumi]}}`` (and
    ``"input_type": "secondaryFiles"`` for a parent file read beside its child, Data.useParent);
    ``outputs`` ``{"pfn", "lfn", "events", "size", "lumis"}`` (module "output"); ``cpu``,
    ``memory`` and ``storage`` map CMSSW's performance names to numbers; ``unprocessed`` the
    lumis the job was given and did not process (``crabtui.unprocessed``, sorted, each once)."""
    source = [{
        "lfn": item["lfn"], "pfn": item.get("pfn", item["lfn"]), "input_source_class": "PoolSource",
        "input_type": item.get("input_type", "primaryFiles"), "module_label": "source", "catalog": "",
        "guid": item.get("guid", ""),
        "events": int(item["events"]), "runs": runs_json(item["lumis"]),
    } for item in inputs]
    files = [output_file(item) for item in outputs or []]
    report: dict[str, Any] = {
        "exitCode": int(exit_code),
        "exitMsg": exit_msg,
        "exitAcronym": "OK" if exit_code == 0 else "FAILED",
        "jobExitCode": int(exit_code if job_exit_code is None else job_exit_code),
        "steps": {"cmsRun": {
            "status": int(exit_code), "start": int(start), "stop": int(stop),
            "input": {"source": source},
            "output": {"output": files} if files else {},
            "errors": list(errors or []),
            "performance": {
                "cpu": {k: _number_text(v) for k, v in (cpu or {}).items()},
                "memory": {k: _number_text(v) for k, v in (memory or {}).items()},
                "storage": {k: _number_text(v) for k, v in (storage or {}).items()},
                "multicore": {},
            },
            "site": {}, "parameters": {}, "analysis": {}, "cleanup": {}, "logs": {},
        }},
    }
    if site:
        report["executed_site"] = site
    if unprocessed is not None:
        crabtui = {**(crabtui or {}), "unprocessed": runs_json({run: sorted(set(numbers))
                                                                for run, numbers in unprocessed.items() if numbers})}
    if crabtui is not None:
        report["crabtui"] = crabtui
    return report


def minimal_report(exit_code: int, exit_msg: str, site: str | None = None, *, error_type: str = "WrapperError",
                   start: float | None = None, stop: float | None = None,
                   crabtui: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report a wrapper leaves when its payload left none (it crashed, or never ran): the exit
    code and message, one error, no input, no output, no performance figures."""
    now = time.time()
    errors = [{"type": error_type, "details": exit_msg, "exitCode": int(exit_code)}] if exit_code else []
    return build_report(exit_code=exit_code, exit_msg=exit_msg, site=site, start=now if start is None else start,
                        stop=now if stop is None else stop, inputs=[], errors=errors, crabtui=crabtui)


def write_report(path: str | os.PathLike[str], report: dict[str, Any]) -> None:
    """Validate ``report`` and write it to ``path`` at once (a reader never sees half of it)."""
    validate(report, os.fspath(path))
    write_atomically(path, json.dumps(report, indent=1, sort_keys=False) + "\n")


# ------------------------------------------------------------------------------------ reading

class _Invalid(Exception):
    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}" if key else message)


def _show(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _get(obj: dict, key: str, at: str, kind: type | tuple[type, ...], what: str, required: bool = True) -> Any:
    where = f"{at}.{key}" if at else key
    if key not in obj:
        if required:
            raise _Invalid(where, f"missing; a job report needs {what}")
        return None
    value = obj[key]
    if kind is int:
        ok = type(value) is int
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise _Invalid(where, f"must be {what}, got {_show(value)}")
    return value


def _runs(value: object, at: str) -> dict[int, list[int]]:
    if not isinstance(value, dict):
        raise _Invalid(at, f"must be an object mapping run numbers to lists of lumi numbers, such as "
                           f"{_RUNS_EXAMPLE}, got {_show(value)}")
    runs: dict[int, list[int]] = {}
    for run, lumis in value.items():
        if not (isinstance(run, str) and run.isascii() and run.isdigit() and int(run) > 0):
            raise _Invalid(f"{at}.{run}", "not a run number (a whole number from 1, as a string key)")
        if isinstance(lumis, dict):  # WMCore's newer form: {"lumi": events}
            lumis = list(lumis)
            if not all(x.isascii() and x.isdigit() for x in lumis):
                raise _Invalid(f"{at}.{run}", f"must list lumi numbers, got {_show(value[run])}")
            lumis = [int(x) for x in lumis]
        if not isinstance(lumis, list) or not all(type(x) is int and x > 0 for x in lumis):
            raise _Invalid(f"{at}.{run}", f"must be a list of lumi numbers from 1, got {_show(lumis)}")
        runs[int(run)] = lumis
    return runs


def _figure(value: object) -> float | None:
    """A performance value (a decimal string or a number) as a float; None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _validate(report: object) -> None:
    if not isinstance(report, dict):
        raise _Invalid("", f"must be a JSON object, got {_show(report)}")
    _get(report, "exitCode", "", int, "the job's exit code, a whole number")
    _get(report, "exitMsg", "", str, "the exit message, a string")
    _get(report, "executed_site", "", str, "the site's name, a string", required=False)
    _get(report, "jobExitCode", "", int, "the payload's exit code, a whole number", required=False)
    steps = _get(report, "steps", "", dict, 'an object "steps" with the step "cmsRun"')
    step = _get(steps, "cmsRun", "steps", dict, 'the step "cmsRun", an object')
    at = "steps.cmsRun"
    inputs = _get(step, "input", at, dict, 'an object "input" (with the list "source")')
    source = _get(inputs, "source", f"{at}.input", list, "the list of input files read", required=False) or []
    for i, item in enumerate(source, start=1):
        where = f"{at}.input.source[{i}]"
        if not isinstance(item, dict):
            raise _Invalid(where, f"must be an object describing an input file, got {_show(item)}")
        _get(item, "lfn", where, str, "the file's logical name, a string")
        events = _get(item, "events", where, int, "the number of events read, a whole number")
        if events < 0:
            raise _Invalid(f"{where}.events", f"must be a whole number >= 0, got {events}")
        _runs(item.get("runs", {}), f"{where}.runs")
    outputs = _get(step, "output", at, dict, 'an object "output" mapping output modules to lists of files')
    for module, files in outputs.items():
        where = f"{at}.output.{module}"
        if not isinstance(files, list):
            raise _Invalid(where, f"must be a list of output files, got {_show(files)}")
        for i, item in enumerate(files, start=1):
            here = f"{where}[{i}]"
            if not isinstance(item, dict):
                raise _Invalid(here, f"must be an object describing an output file, got {_show(item)}")
            for key in ("size", "events"):
                value = _get(item, key, here, int, "a whole number", required=key == "size")
                if value is not None and value < 0:
                    raise _Invalid(f"{here}.{key}", f"must be a whole number >= 0, got {value}")
            if "runs" in item:
                _runs(item["runs"], f"{here}.runs")
    errors = _get(step, "errors", at, list, 'a list "errors" (empty when nothing failed)')
    for i, error in enumerate(errors, start=1):
        where = f"{at}.errors[{i}]"
        if not isinstance(error, dict):
            raise _Invalid(where, f"must be an object with type and details, got {_show(error)}")
        _get(error, "type", where, str, "the error's type, a string")
        _get(error, "details", where, str, "the error's details, a string")
        _get(error, "exitCode", where, int, "an exit code, a whole number", required=False)
    performance = _get(step, "performance", at, dict, 'an object "performance" (cpu, memory, storage)',
                       required=False) or {}
    for group, figures in performance.items():
        where = f"{at}.performance.{group}"
        if not isinstance(figures, dict):
            raise _Invalid(where, f"must be an object of named figures, got {_show(figures)}")
        if group in ("cpu", "memory", "storage"):
            for name, value in figures.items():
                if _figure(value) is None:
                    raise _Invalid(f"{where}.{name}", f"must be a number or a decimal string, got {_show(value)}")
    extra = report.get("crabtui")
    if extra is not None:
        if not isinstance(extra, dict):
            raise _Invalid("crabtui", f"must be an object, got {_show(extra)}")
        if "unprocessed" in extra:
            _runs(extra["unprocessed"], "crabtui.unprocessed")


def validate(report: object, name: str = FJR_NAME) -> None:
    """Raise :class:`FJRError` (``name: key: problem``) unless ``report`` has the shape PostJob reads."""
    try:
        _validate(report)
    except _Invalid as e:
        raise FJRError(f"{name}: {e}") from None


def read_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The validated report at ``path``; :class:`FJRError` if it is missing, not JSON or malformed."""
    name = os.fspath(path)
    report = read_json(name, FJRError, missing="no such file; the job left no framework job report")
    validate(report, name)
    return report


# ------------------------------------------------------------------------------------ summary

@dataclass(frozen=True, slots=True)
class Summary:
    """What ``crab status`` and the retry policy take from a report. Times in seconds, memory in
    MB, sizes in bytes; None where the report does not say."""

    exit_code: int
    exit_msg: str
    job_exit_code: int | None
    site: str | None
    wall_s: float | None  # TotalJobTime
    cpu_s: float | None  # TotalJobCPU
    peak_rss_mb: float | None  # PeakValueRss
    throughput: float | None  # EventThroughput, events per second
    events: int  # input events read
    output_size: int  # bytes, all output files
    lumis: dict[int, list[int]] = field(default_factory=dict)  # processed, run -> sorted lumis
    unprocessed: dict[int, list[int]] = field(default_factory=dict)  # given but not processed (crabtui)
    errors: tuple[dict[str, Any], ...] = ()

    @property
    def cpu_efficiency(self) -> float | None:
        """CPU time over wall time (one core), as ``crab status`` computes CPU %; None if unknown."""
        if self.cpu_s is None or not self.wall_s:
            return None
        return self.cpu_s / self.wall_s

    @property
    def lumi_count(self) -> int:
        return sum(len(v) for v in self.lumis.values())


def summarize(report: dict[str, Any]) -> Summary:
    """The figures of a validated report (see :func:`read_report`)."""
    step = report["steps"]["cmsRun"]
    performance = step.get("performance", {})
    cpu, memory = performance.get("cpu", {}), performance.get("memory", {})
    lumis: dict[int, set[int]] = {}
    events = 0
    for item in step["input"].get("source", []):
        if item.get("input_type", "primaryFiles") != "primaryFiles":
            continue  # a parent file (secondaryFiles): the same events, read beside the input's, as PostJob counts
        events += item["events"]
        for run, numbers in _runs(item.get("runs", {}), "").items():
            lumis.setdefault(run, set()).update(numbers)
    size = sum(item["size"] for files in step["output"].values() for item in files)
    extra = report.get("crabtui") or {}
    return Summary(
        exit_code=report["exitCode"], exit_msg=report["exitMsg"], job_exit_code=report.get("jobExitCode"),
        site=report.get("executed_site"), wall_s=_figure(cpu.get("TotalJobTime")),
        cpu_s=_figure(cpu.get("TotalJobCPU")), peak_rss_mb=_figure(memory.get("PeakValueRss")),
        throughput=_figure(cpu.get("EventThroughput")), events=events, output_size=size,
        lumis={run: sorted(numbers) for run, numbers in sorted(lumis.items())},
        unprocessed=_runs(extra.get("unprocessed", {}), ""), errors=tuple(step["errors"]),
    )


def performance(path: str | os.PathLike[str]) -> tuple[float | None, float | None, float | None] | None:
    """``(TotalJobTime, TotalJobCPU, PeakValueRss)`` of the report at ``path`` (seconds, seconds,
    MB; None where it does not say), or None if there is no readable report.  Unlike
    :func:`read_report` it checks only what it returns, a quarter of the cost: ``crab status``
    reads one report per attempt of every job."""
    try:
        with open(path, "rb") as f:
            report = json.loads(f.read())
    except (OSError, ValueError):
        return None
    step = report.get("steps") if isinstance(report, dict) else None
    step = step.get("cmsRun") if isinstance(step, dict) else None
    performance = step.get("performance") if isinstance(step, dict) else None
    if not isinstance(performance, dict):
        return (None, None, None) if isinstance(step, dict) else None
    cpu, memory = performance.get("cpu"), performance.get("memory")
    cpu = cpu if isinstance(cpu, dict) else {}
    memory = memory if isinstance(memory, dict) else {}
    return _figure(cpu.get("TotalJobTime")), _figure(cpu.get("TotalJobCPU")), _figure(memory.get("PeakValueRss"))
