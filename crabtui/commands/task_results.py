"""crab report, crab getoutput and crab getlog of one task, as ``task report``, ``task getoutput``
and ``task getlog`` and a multi-crab script's ``crabCommand`` of the same names run them: one
function each, so that the command line and the script cannot drift apart.  What crab refuses is
raised (ReportError, RetrieveError) in crab's words, for the command line to print in one line and
the script to see as the CRABClient exception crab raises.
"""

from __future__ import annotations

import os
import re

import click

from crabtui.commands.backend import again


def report_task(ctx: click.Context, state, client, task, results: str, *, outputdir: str | None, recovery: str):
    """crab report of ``task``, for ``task report`` and a script's crabCommand('report'): the
    report, written to ``outputdir`` or ``results`` (the project directory's results/), and that
    directory.  ReportError for what crab refuses, in its words."""
    from engine.crab.client.report import RECOVERY, ReportError, input_dataset_lumis, make_report, write_report
    from engine.crab.client.status import task_view
    from engine.crab.taskworker.datasets import Catalogue

    if recovery not in RECOVERY:  # crab report's validateOptions, not its option parser
        raise ReportError(f"The --recovery option only accepts the following values: {list(RECOVERY)}",
                          "ConfigurationException")
    if recovery == "notPublished":
        raise ReportError("The option --recovery=notPublished has been specified (which instructs to determine the "
                          "not processed lumis based on published datasets), but crabtui publishes no output "
                          "dataset; use --recovery notFinished or failed", "ConfigurationException")
    if not os.path.isdir(task.task_dir) or not os.listdir(task.task_dir):
        raise ReportError("Status information is unavailable, will not proceed with the report. Try again a few "
                          "minutes later if the task has just been submitted.")
    view = task_view(task.task_dir, client, task.dagman_id)
    if recovery == "failed" and view.automatic is not None:
        raise ReportError("The option --recovery=failed has been specified but it is not compatible with automatic "
                          "splitting", "ConfigurationException")
    if not any(j.state == "finished" for j in view.jobs):
        raise ReportError("Cannot get all the needed information for the report. Maybe no job has completed yet ? "
                          f"('{again(ctx)} task status {task.request_name}' shows the jobs)")
    made = make_report(task.task_dir, view.jobs, recovery=recovery,
                       input_lumis=input_dataset_lumis(task.task_dir, Catalogue.for_state(state)))
    directory = os.path.abspath(outputdir) if outputdir else results
    try:
        write_report(made, directory)
    except OSError as e:
        raise ReportError(f"{directory}: cannot write the report files there ({e.strerror}); give another "
                          "--outputdir", "ClientException") from None
    return made, directory


_STORAGE_URL = re.compile(r"^[a-z]+://")  # crab's getcommand takes such an --outputpath as a grid destination

GRID_TRANSFER = {  # crab getoutput's and getlog's options for grid transfers, and what to do here instead
    "xrootd": "prints the files' XRootD URLs; crabtui's files are on this machine: --dump gives each one's path "
              "(PFN) and LFN",
    "parallel": "sets how many grid transfers run at once; crabtui copies files on this machine: drop it",
    "wait": "sets a grid transfer's timeout; crabtui copies files on this machine: drop it",
    "command": "chooses the grid copy tool (LCG or GFAL); crabtui copies files on this machine: drop it",
}


def grid_transfer_refusal(command: str, options: dict) -> str | None:
    """What to say of crab's grid transfer options among crab ``command``'s parsed ``options``
    (taken out of them), or None if none was given: the command line and a script's crabCommand
    refuse them alike."""
    given = [name for name in GRID_TRANSFER if options.pop(f"grid_{name}", None) not in (None, False)]
    return f"crab {command}'s --{given[0]} {GRID_TRANSFER[given[0]]}" if given else None


def retrieve_files(ctx: click.Context, client, task, results: str, *, outputpath: str | None, jobids: str | None,
                   dump: bool, quantity: str | None, checksum: str, logs: bool, short: bool = False, say=click.echo):
    """crab getoutput / crab getlog of ``task``, for the commands and a script's crabCommand, in
    crab's messages (getcommand, remote_copy), each given to ``say``, the files copied to
    ``outputpath`` or ``results`` (the project directory's results/).  Returns the dictionary crab
    returns (``success`` and ``failed`` by file, or with ``--dump`` the ``pfn`` and ``lfn`` lists;
    getlog ``--short``'s lists of names) and, if some copies failed, the line the command ends
    with.  RetrieveError for what crab refuses."""
    from crabtui.task_status import StatusOptionError, parse_jobids
    from engine.crab.client import retrieve
    from engine.crab.client.retrieve import RetrieveError
    from engine.crab.client.status import job_sort_key, task_view
    from engine.crab.taskworker.dagman_creator import read_task

    nothing = {"success": [], "failed": []} if logs and short else {"success": {}, "failed": {}}
    if checksum not in ("yes", "no"):
        raise RetrieveError(f"You specified to use {checksum} checksum. Only lowercase yes/no is accepted to turn "
                            "ADLER32 checksum")
    if outputpath is not None and _STORAGE_URL.match(outputpath):
        raise RetrieveError(f"--outputpath {outputpath} is a storage URL, which crab copies to with grid tools; crabtui "
                            "copies the files on this machine: give --outputpath a directory (and copy them on from "
                            "there)", "ConfigurationException")
    limit = retrieve.parse_quantity(quantity)
    try:
        stageout = read_task(task.task_dir).get("stageout")
    except (OSError, ValueError):
        raise RetrieveError("Cannot retrieve job list from the status command. "
                            f"('{again(ctx)} task status {task.request_name}' shows whether the task has jobs yet)",
                            "ClientException") from None
    view = task_view(task.task_dir, client, task.dagman_id)
    if not logs and stageout is None:
        say("No files to retrieve. Files not transferred to storage since task configuration parameter "
            "General.transferOutputs is False.")
        return {**nothing, "commandStatus": "SUCCESS"}, None
    try:
        wanted = parse_jobids(jobids, ranges=view.automatic is None) if jobids else None
    except StatusOptionError as e:
        raise RetrieveError(str(e)) from None
    jobs = retrieve.select(view.jobs, wanted)
    files = (retrieve.log_files if logs else retrieve.output_files)(task.task_dir, jobs)
    if limit is not None and wanted is None:
        files = files[:limit]
    if not files:
        say("No files to retrieve.")
        return {**nothing, "commandStatus": "SUCCESS"}, None
    if dump:
        files = sorted(files, key=lambda f: (job_sort_key(f.job), f.name))
        say(_dump(files))
        return {"pfn": [f.source for f in files], "lfn": [f.lfn for f in files if f.lfn],
                "commandStatus": "SUCCESS"}, None
    destination = os.path.abspath(outputpath) if outputpath else results
    if os.path.exists(destination) and not os.path.isdir(destination):
        raise RetrieveError(f"{destination}: Destination directory is a file; give --outputpath a directory")
    try:
        os.makedirs(destination, exist_ok=True)
    except OSError as e:
        raise RetrieveError(f"{destination}: cannot make the destination directory ({e.strerror}); give another "
                            "--outputpath", "ClientException") from None
    say(f"Setting the destination to {destination}")
    say(f"Retrieving {len(files)} files")
    success, failed = {}, {}
    for item in files:
        try:
            copied = retrieve.copy(item, destination, checksum=checksum == "yes")
        except (OSError, RetrieveError) as e:
            failed[item.name] = str(getattr(e, "strerror", None) or e)
            say(f"Warning: Failed retrieving {item.name}: {failed[item.name]}")
            continue
        if copied:
            success[item.name] = "Successfully retrieved"  # remote_copy's word for each
        say(f"Success: Success in retrieving {item.name}" if copied
            else f"Skipping {item.name} as file already exists in {destination}")
    done = ({"success": list(success), "failed": list(failed)} if logs and short else
            {"success": success, "failed": failed})
    if not failed:
        say("Success: All files successfully retrieved")
        return {**done, "commandStatus": "SUCCESS"}, None
    say(f"Number of files successfully retrieved: {len(files) - len(failed)}\n"
        f"Number of files failed to be retrieved: {len(failed)}")
    first = next(iter(failed))
    return {**done, "commandStatus": "SUCCESS"}, (
        f"{len(failed)} of the {len(files)} files could not be retrieved, the first {first}; the others are in "
        f"{destination}, and the command retrieves only what is missing when run again")


def _dump(files) -> str:
    """crab getoutput --dump: the files of each job (``files`` in job order), numbered, with their
    PFN (here a path) and LFN."""
    lines, job = [], None
    for item in files:
        if item.job != job:
            lines.append(f"{'' if job is None else chr(10)}=== Files from job {item.job}:")
            job, number = item.job, 1
        lines.append(f"{number}) PFN: {item.source}")
        if item.lfn:
            lines.append(f"{' ' * len(str(number))}  LFN: {item.lfn}")
        number += 1
    return "\n".join(lines)
