"""``crab report``: what a task's successful jobs read and wrote, and the lumi files of its
``results/`` directory, from the jobs' own framework job reports.

As CRAB's client computes them: files processed and events read are the input (``primaryFiles``)
of the jobs in status ``finished``; events written are counted by output file type (EDM for
``PoolOutputModule``, TFileService, other); the lumis to process are every job's input lumis;
the ``notFinished`` lumis are those minus the processed ones, the ``failed`` lumis those of the
jobs in status ``failed``.  The files are the CMS lumi JSON (:func:`lumi_mask.compact`), and the
file lists JSON lists of LFNs, each written only when it has something to say, as crab does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.crab.client.lumi_mask import compact
from engine.crab.client.status import JobView, latest_report
from engine.crab.wn import fjr
from engine.crab.wn.job_input import InputError, read_input

RECOVERY = ("notFinished", "notPublished", "failed")  # crab report --recovery's strategies
EVENT_TYPES = {"PoolOutputModule": "EDM", "TFileService": "TFile"}  # else FAKE, crab's 'other type'


class ReportError(Exception):
    """A report that cannot be made; the message is crab's, in one line, and ``exception`` the
    CRABClient exception crab report raises for it (what a script's crabCommand sees)."""

    def __init__(self, message: str, exception: str = "CommandFailedException"):
        super().__init__(message)
        self.exception = exception


@dataclass
class Report:
    files_processed: int = 0
    events_read: int = 0
    events_written: dict[str, int] = field(default_factory=lambda: {"EDM": 0, "TFile": 0, "FAKE": 0})
    lumi_files: dict[str, dict] = field(default_factory=dict)  # file name -> content, in crab's order
    file_lists: dict[str, list[str]] = field(default_factory=dict)
    extra_files: dict[str, dict] = field(default_factory=dict)  # "Additional report lumi files"


def make_report(task_dir: str, jobs: Sequence[JobView], *, recovery: str = "notFinished",
                input_lumis: tuple[dict[int, list[int]], dict[int, list[int]]] | None = None) -> Report:
    """The report of a task's ``jobs`` (as ``task_view`` sees them); ``input_lumis``: the lumis
    of the task's input dataset and those split across its files (:func:`input_dataset_lumis`;
    None: it has none, PrivateMC or user files)."""
    to_process: dict[int, set[int]] = {}
    per_job: dict[str, tuple[dict[int, list[int]], list[str]]] = {}
    for job in jobs:
        try:
            given = read_input(os.path.join(task_dir, f"job_input.{job.id}.json"))
        except (OSError, InputError):
            continue  # a job PreDAG has not written yet
        per_job[job.id] = (given.lumis(), [f.lfn for f in given.files])
        for run, lumis in per_job[job.id][0].items():
            to_process.setdefault(run, set()).update(lumis)
    report = Report()
    processed: dict[int, set[int]] = {}
    seen: dict[tuple[int, int], int] = {}  # (run, lumi) -> finished jobs that processed it
    read_files: set[str] = set()
    failed_files: set[str] = set()
    failed_lumis: dict[int, set[int]] = {}
    for job in jobs:
        if job.state == "failed" and job.id in per_job:
            failed_files.update(per_job[job.id][1])
            for run, lumis in per_job[job.id][0].items():
                failed_lumis.setdefault(run, set()).update(lumis)
        if job.state != "finished" or (fjr_report := latest_report(task_dir, job)) is None:
            continue
        step = fjr_report["steps"]["cmsRun"]
        for item in step["input"].get("source", []):
            if item.get("input_type", "primaryFiles") != "primaryFiles":
                continue
            read_files.add(item["lfn"])
        for files in step["output"].values():
            for item in files:
                kind = EVENT_TYPES.get(item.get("output_module_class", ""), "FAKE")
                report.events_written[kind] += item["events"]
        summary = fjr.summarize(fjr_report)
        report.events_read += summary.events
        for run, lumis in summary.lumis.items():
            processed.setdefault(run, set()).update(lumis)
            if not job.id.startswith("0-"):  # automatic splitting's probes, as crab skips them
                for lumi in lumis:
                    seen[(run, lumi)] = seen.get((run, lumi), 0) + 1
    report.files_processed = len(read_files)
    if processed:
        report.lumi_files["processedLumis.json"] = compact(processed)
    if recovery == "notFinished":
        missing = {run: lumis - processed.get(run, set()) for run, lumis in to_process.items()}
    elif recovery == "failed":
        missing = failed_lumis
    else:
        raise ValueError(recovery)
    if any(missing.values()):
        report.lumi_files[f"{recovery}Lumis.json"] = compact(missing)
    duplicates: dict[int, set[int]] = {}
    for (run, lumi), count in seen.items():
        if count > 1:
            duplicates.setdefault(run, set()).add(lumi)
    if duplicates:
        report.lumi_files["outputFilesDuplicateLumis.json"] = compact(duplicates)
    all_files = sorted({lfn for _, lfns in per_job.values() for lfn in lfns})
    for name, files in (("filesToProcess.json", all_files), ("processedFiles.json", sorted(read_files)),
                        ("failedFiles.json", sorted(failed_files))):
        if files:
            report.file_lists[name] = files
    if input_lumis and input_lumis[0]:
        report.extra_files["inputDatasetLumis.json"] = compact(input_lumis[0])
    if input_lumis and input_lumis[1]:
        report.extra_files["inputDatasetDuplicateLumis.json"] = compact(input_lumis[1])
    if to_process:
        report.extra_files["lumisToProcess.json"] = compact(to_process)
    return report


def crab_dict(report: Report, recovery: str) -> dict:
    """What crab report returns to a script (``crabCommand('report')``), as CRABClient's
    ``report.__call__`` fills it: the figures, and the lumis as LumiList's compact lists; the
    output datasets' are empty, as nothing is published."""
    return {"numFilesProcessed": report.files_processed, "numEventsRead": report.events_read,
            "numEventsWritten": dict(report.events_written),
            "inputDatasetLumis": report.extra_files.get("inputDatasetLumis.json", {}),
            "inputDatasetDuplicateLumis": report.extra_files.get("inputDatasetDuplicateLumis.json", {}),
            "lumisToProcess": report.extra_files.get("lumisToProcess.json", {}),
            "processedLumis": report.lumi_files.get("processedLumis.json", {}),
            "outputDatasetsLumis": {}, "outputDatasetsNumEvents": {},
            "outputFilesDuplicateLumis": report.lumi_files.get("outputFilesDuplicateLumis.json", {}),
            "notProcessedLumis": report.lumi_files.get(f"{recovery}Lumis.json", {}),
            "commandStatus": "SUCCESS"}


def write_report(report: Report, directory: str) -> None:
    """Each of the report's files into ``directory`` (made if missing), one JSON document a file."""
    os.makedirs(directory, exist_ok=True)
    for name, content in (*report.lumi_files.items(), *report.file_lists.items(), *report.extra_files.items()):
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            json.dump(content, f)
            f.write("\n")


def report_lines(report: Report, directory: str, recovery: str) -> list[str]:
    """What crab report prints, line by line, in its words."""
    lines = [f"Will put report files in directory {directory}",
             "Summary from successful jobs (i.e. in status 'finished'):",
             f"  Number of files processed: {report.files_processed}",
             f"  Number of events read: {report.events_read}",
             f"  Number of events written in EDM files: {report.events_written['EDM']}",
             f"  Number of events written in TFileService files: {report.events_written['TFile']}",
             f"  Number of events written in other type of files: {report.events_written['FAKE']}"]
    if "processedLumis.json" in report.lumi_files:
        lines.append("  Processed lumis written to processedLumis.json")
    if f"{recovery}Lumis.json" in report.lumi_files:
        how = ("the lumis to process minus the processed lumis." if recovery == "notFinished"
               else "the lumis to process by jobs in status 'failed'.")
        lines += [f"  Warning: '{recovery}' lumis written to {recovery}Lumis.json",
                  f"           The '{recovery}' lumis were calculated as: {how}"]
    if "outputFilesDuplicateLumis.json" in report.lumi_files:
        lines.append("  Warning: Duplicate lumis in output files written to outputFilesDuplicateLumis.json")
    said = {"filesToProcess.json": "Files to process written to filesToProcess.json",
            "processedFiles.json": "Files processed by successful jobs written to processedFiles.json",
            "failedFiles.json": "Files processed by failed jobs written to failedFiles.json"}
    lines += [f"  {said[name]}" for name in report.file_lists]
    if report.extra_files:
        lines.append("Additional report lumi files:")
    if "inputDatasetLumis.json" in report.extra_files:
        lines.append("  Input dataset lumis (from DBS, at task submission time) written to inputDatasetLumis.json")
    if "inputDatasetDuplicateLumis.json" in report.extra_files:
        lines.append("  Input dataset duplicate lumis (from DBS, at task submission time) written to "
                     "inputDatasetDuplicateLumis.json")
    if "lumisToProcess.json" in report.extra_files:
        lines.append("  Lumis to process written to lumisToProcess.json")
    return lines


def input_dataset_lumis(task_dir: str, catalogue) -> tuple[dict[int, list[int]], dict[int, list[int]]] | None:
    """run -> lumis of the task's ``Data.inputDataset``, as the task worker read it, and those of
    its lumis split across files (None for a task without one, or whose request is gone)."""
    from engine.crab.taskworker.datasets import DatasetError
    from engine.crab.taskworker.task_input import InputSpec, load_input
    from engine.crab.taskworker.worker import REQUEST_FILE

    try:
        with open(os.path.join(task_dir, REQUEST_FILE), encoding="utf-8") as f:
            request = json.load(f)
        spec = InputSpec.from_json(request["input"]) if "input" in request else InputSpec(dataset=request["dataset"])
        if spec.dataset is None:
            return None
        dataset = load_input(spec, catalogue)
    except (OSError, ValueError, KeyError, DatasetError):
        return None
    lumis: dict[int, set[int]] = {}
    split: dict[int, set[int]] = {}
    for f in dataset.files:
        for run, lumi, _ in f.lumis:
            if lumi in lumis.setdefault(run, set()):
                split.setdefault(run, set()).add(lumi)
            lumis[run].add(lumi)
    return ({run: sorted(numbers) for run, numbers in lumis.items()},
            {run: sorted(numbers) for run, numbers in split.items()})
