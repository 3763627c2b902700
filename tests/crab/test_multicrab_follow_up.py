"""Multi-crab scripts that follow their tasks after submission, as analyses write them: crab status
to see which jobs finished, crab getoutput and crab getlog to fetch what is missing from results/,
crab report to check the events and lumis processed, crab resubmit for the failed jobs, each through
``crabCommand`` and run with ``task submit --multicrab``.  What each call returns is CRABClient's
dictionary, from the same code as the command line's ``task report``/``getoutput``/``getlog``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from crab_tasks import crabtui, wait_status

CORPUS = Path(__file__).parent / "corpus"
REQUEST = "ZMuMu_Run3Summer23_skim"
PROJECT = f"crab_zmumu/crab_{REQUEST}"

CRAB_REPORT_KEYS = {"numFilesProcessed", "numEventsRead", "numEventsWritten", "inputDatasetLumis",
                    "inputDatasetDuplicateLumis", "lumisToProcess", "processedLumis", "outputDatasetsLumis",
                    "outputDatasetsNumEvents", "outputFilesDuplicateLumis", "notProcessedLumis", "commandStatus"}
"""The keys of the dictionary CRABClient's report returns (Commands/report.py)."""

CALLS = """\
import json
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
import CRABAPI

d = '{project}'


def call(*args, **kwargs):
    try:
        return crabCommand(*args, **kwargs)
    except ClientException as e:
        print('ClientException %s: %s' % (type(e).__name__, e))
    except CRABAPI.APIException as e:
        print('CRABAPI %s: %s' % (type(e).__name__, e))


call('getoutput', dir=d, jobids='42')
call('report', dir=d, recovery='notPublished')
call('report', dir=d, recovery='lost')
call('getoutput', dir=d, parallel=4)
dump = call('getoutput', d, '--dump', jobids='1')
print('dump %s %d %s' % (sorted(dump), len(dump['pfn']), dump['lfn']))
rep = call('report', dir=d, recovery='failed', outputdir='recovery')
print('report %s' % json.dumps(rep, sort_keys=True))
print('getlog %s' % call('getlog', dir=d, jobids='1'))
print('getlog again %s' % call('getlog', dir=d, jobids='1'))
print('quantity %s' % sorted(call('getoutput', dir=d, quantity=2, outputpath='two')['success']))
"""


def _lumis(compact: dict) -> set[tuple[int, int]]:
    return {(int(run), lumi) for run, ranges in compact.items() for first, last in ranges
            for lumi in range(first, last + 1)}


@pytest.fixture
def failed_task(tmp_path, state):
    """The corpus' follow-up analysis, submitted as its crabConfig.py is (sped up, with its job 2
    failing at every attempt), once the task has ended FAILED."""
    here = tmp_path / "multicrab_follow_up_get_report"
    shutil.copytree(CORPUS / here.name, here, ignore=shutil.ignore_patterns("__pycache__"))
    with open(here / "crabConfig.py", "a", encoding="utf-8") as f:
        f.write("config.Debug.timeScale = 2000\n"
                "config.Debug.failurePlan = [{'job': '2', 'attempt': '*', 'exitCode': 8006}]\n")
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=here)
    assert submitted.returncode == 0, submitted.stderr
    status = wait_status(state, REQUEST, here, "FAILED", timeout=300)
    assert [j["id"] for j in status["jobs"] if j["state"] != "finished"] == ["2"]
    return here, status


def test_follow_up_scripts_report_fetch_and_resubmit_through_crab_command(state, failed_task):
    here, status = failed_task
    finished = sorted((j["id"] for j in status["jobs"] if j["state"] == "finished"), key=int)
    results = here / PROJECT / "results"
    cli = crabtui(state, "task", "report", "-d", PROJECT, "--outputdir", "cli_report", cwd=here)
    assert cli.returncode == 0, cli.stderr
    figures = dict(re.findall(r"^  Number of (files processed|events read): (\d+)$", cli.stdout, re.M))

    # crab report and crab getoutput --dump, then the outputs of jobs 1-3,5 into a directory of its own
    checked = crabtui(state, "task", "submit", "--multicrab", "check_report.py", "-r", "-d", PROJECT,
                      "--jobs", "1-3,5", "--dest", "picked", cwd=here)
    assert checked.returncode == 0 and checked.stderr == "", checked.stderr + checked.stdout
    lines = checked.stdout.splitlines()
    assert lines[:2] == [f"events read: {figures['events read']}", f"files processed: {figures['files processed']}"]
    processed = json.loads((results / "processedLumis.json").read_text())
    assert processed == json.loads((here / "cli_report" / "processedLumis.json").read_text())
    done, left = (int(re.search(rf"^lumis {what}: (\d+)", checked.stdout, re.M).group(1))
                  for what in ("processed", "not processed"))
    assert done == len(_lumis(processed)) and left > 0
    assert done + left == len(_lumis(json.loads((results / "lumisToProcess.json").read_text())))
    assert "WARNING" not in checked.stdout  # the dictionary's processedLumis is the file's
    assert f"output files on storage: {len(finished)}" in lines
    assert [line.strip().rsplit("/", 1)[1] for line in lines if line.startswith("  /store/user/")] == \
        [f"output_{job}.root" for job in finished]
    assert lines[-1] == "copied: output_1.root output_3.root output_5.root"  # job 2 failed: nothing to copy
    assert sorted(p.name for p in (here / "picked").iterdir()) == ["output_1.root", "output_3.root", "output_5.root"]

    # what crab refuses, and the other shapes of what the calls return
    (here / "calls.py").write_text(CALLS.format(project=PROJECT))
    calls = crabtui(state, "task", "submit", "--multicrab", "calls.py", cwd=here)
    assert calls.returncode == 0 and calls.stderr == "", calls.stderr + calls.stdout
    lines = calls.stdout.splitlines()
    assert lines[0] == ("ClientException ConfigurationException: crabCommand('getoutput'): The job with id 42 is not "
                        "in a valid state to retrieve output files")
    assert lines[1].startswith("ClientException ConfigurationException: crabCommand('report'): The option "
                               "--recovery=notPublished has been specified")
    assert lines[2] == ("ClientException ConfigurationException: crabCommand('report'): The --recovery option only "
                        "accepts the following values: ['notFinished', 'notPublished', 'failed']")
    del lines[2]
    assert lines[2] == ("ClientException ConfigurationException: crabCommand('getoutput'): crab getoutput's "
                        "--parallel sets how many grid transfers run at once; crabtui copies files on this machine: "
                        "drop it")
    assert lines[3].startswith("dump ['commandStatus', 'lfn', 'pfn'] 1 ['/store/user/") and \
        lines[3].endswith("/output_1.root']")
    report = json.loads(lines[4].removeprefix("report "))
    assert set(report) == CRAB_REPORT_KEYS and report["commandStatus"] == "SUCCESS"
    assert report["processedLumis"] == processed and report["numEventsRead"] == int(figures["events read"])
    job2 = json.loads((Path(status["task_dir"]) / "job_input.2.json").read_text())
    assert _lumis(report["notProcessedLumis"]) == {(run, lumi) for f in job2["files"] for run, lumi, _ in f["lumis"]}
    assert report["notProcessedLumis"] == json.loads((here / "recovery" / "failedLumis.json").read_text())
    assert lines[5:] == ["getlog {'success': {'job_out.1.0.txt': 'Successfully retrieved'}, 'failed': {}, "
                         "'commandStatus': 'SUCCESS'}",
                         "getlog again {'success': {}, 'failed': {}, 'commandStatus': 'SUCCESS'}",  # skipped
                         f"quantity {[f'output_{job}.root' for job in finished[:2]]}"]
    assert sorted(p.name for p in (here / "two").iterdir()) == [f"output_{job}.root" for job in finished[:2]]

    # the multicrabGet loop: outputs missing from results/, the failed jobs' short logs, a resubmission
    got = crabtui(state, "task", "submit", "--multicrab", "multicrab_get.py", "crab_zmumu", cwd=here)
    assert got.returncode == 0 and got.stderr == "", got.stderr + got.stdout
    name = f"crab_{REQUEST}"
    assert got.stdout.splitlines()[:3] == [
        f"{name}: retrieved {len(finished)} output files, 0 failed",
        f"{name}: short logs of failed jobs: job_out.2.0.txt",
        f"{name}: resubmitted jobs 2"], got.stdout
    assert {f"output_{job}.root" for job in finished} | {"job_out.1.0.txt", "job_out.2.0.txt"} <= \
        {p.name for p in results.iterdir()}
    log = (here / PROJECT / "crab.log").read_text()
    assert f"crabtui task getoutput --dir {PROJECT} --jobids {','.join(finished)}" in log
    assert f"crabtui task getlog --dir {PROJECT} --jobids 2 --short" in log
    assert f"crabtui task report --dir {PROJECT} --recovery failed --outputdir recovery" in log
    assert f"crabtui task resubmit --dir {PROJECT}" in log
