"""``crabtui task submit|list|status|kill`` against a real embedded schedd and its task worker."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import classad2
import htcondor2

from crab_tasks import MC, config_text, crab_config_py, crabtui, task_row, task_status, wait_status, wait_until
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir
from installed import CRABTUI

JOB2_MOVES = '{job = "2", attempt = 1, exitCode = 8021}'


def test_a_task_is_submitted_runs_its_retries_and_completes(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("ttbar", plan=JOB2_MOVES))
    submitted = crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    assert "Task name: " in submitted.stdout and ":" in submitted.stdout.split("Task name: ")[1]
    status = wait_status(state, "ttbar", tmp_path, "COMPLETED")
    jobs = {j["id"]: j for j in status["jobs"]}
    assert sorted(jobs) == ["1", "2", "3", "4"] and all(j["state"] == "finished" for j in jobs.values())
    two = jobs["2"]
    assert (two["retries"], [a["exit_code"] for a in two["attempts"]]) == (1, [8021, 0])
    assert two["site_history"][0] == "T2_XX_Local" and two["site_history"][1] != "T2_XX_Local"
    assert two["attempts"][0]["action"] == "retry" and two["attempts"][0]["request_memory"] == 2000
    listing = crabtui(state, "task", "list", cwd=tmp_path).stdout
    assert "COMPLETED" in listing and status["name"] in listing
    long = crabtui(state, "task", "status", "ttbar", "--long", cwd=tmp_path).stdout
    assert "Jobs status:                    finished     \t\t100.0% (4/4)" in long

    refused = crabtui(state, "task", "kill", "ttbar", cwd=tmp_path)  # CRAB refuses to kill a finished task
    assert refused.returncode == 1
    assert refused.stderr.startswith("ERROR: You cannot kill a task if it is in the COMPLETED status")
    after = wait_status(state, "ttbar", tmp_path, "COMPLETED")
    assert (after["status"], after["scheduler_status"], after["command"]) == ("COMPLETED", "COMPLETED", "SUBMIT")


def test_kill_removes_the_tasks_jobs(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("slow", scale=0.5))
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "slow", tmp_path, "SUBMITTED")
    deadline = time.monotonic() + 60
    while not LocalScheddClient(state).query(f"DAGManJobId == {status['dagman_id']}", ["ClusterId"]):
        assert time.monotonic() < deadline, "no job started"
        time.sleep(0.2)
    killed = crabtui(state, "task", "kill", "slow", cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    wait_status(state, "slow", tmp_path, "KILLED")
    deadline = time.monotonic() + 60
    while LocalScheddClient(state).query("true", ["ClusterId"]):
        assert time.monotonic() < deadline, "jobs left after the kill"
        time.sleep(0.2)
    again = crabtui(state, "task", "kill", "slow", cwd=tmp_path)
    assert again.returncode == 1 and "You cannot kill a task if it is in the KILLED status" in again.stderr


def test_a_bad_configuration_is_refused_and_an_unknown_dataset_reads_its_stand_in(tmp_path, state):
    (tmp_path / "bad.toml").write_text(config_text("x").replace("unitsPerJob = 5", "unitsPerJob = 0"))
    bad = crabtui(state, "task", "submit", "bad.toml", cwd=tmp_path)
    assert bad.returncode == 1 and "bad.toml" in bad.stderr and "unitsPerJob" in bad.stderr
    typo = MC.replace("/TTbar_", "/TTbarr_")
    (tmp_path / "nodata.toml").write_text(config_text("y", dataset=typo))
    standing_in = crabtui(state, "task", "submit", "nodata.toml", cwd=tmp_path)
    assert standing_in.returncode == 0, standing_in.stderr
    notes = [line for line in standing_in.stdout.splitlines() if line.startswith("Note: ")]
    assert len(notes) == 1 and f"Data.inputDataset {typo} is not in the dataset catalogue (did you mean '{MC}'?)" \
        in notes[0] and f"crabtui dataset add {typo} --from FILE" in notes[0]
    listed = {d["name"]: d for d in json.loads(crabtui(state, "dataset", "list", "--json", cwd=tmp_path).stdout)}
    assert listed[typo]["source"] == "stand-in"
    status = wait_until("a job of the stand-in's task to run", lambda: _running(state, tmp_path, "y"))
    assert status["status"] == "SUBMITTED"
    assert crabtui(state, "task", "kill", "y", cwd=tmp_path).returncode == 0


def _running(state, cwd, name):
    status = task_status(state, name, cwd)
    return status if any(j["state"] in ("running", "transferring", "finished") for j in status["jobs"]) else None


def test_a_task_submitted_to_a_pool_that_does_not_answer_is_refused_in_one_line(tmp_path, state, monkeypatch):
    monkeypatch.setenv("CONDOR_CONFIG", str(tmp_path / "no_such_config"))
    (tmp_path / "crab.toml").write_text(config_text("nopool"))
    result = crabtui(state, "--backend", "htcondor", "task", "submit", "crab.toml", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("ERROR: ") and result.stderr.count("\n") == 1, result.stderr
    assert "CONDOR_CONFIG" in result.stderr and "Traceback" not in result.stderr
    listed = crabtui(state, "--backend", "htcondor", "task", "list", cwd=tmp_path)
    assert listed.returncode == 0 and "nopool" not in listed.stdout  # nothing recorded


def test_a_users_script_runs_as_the_payload_and_extra_jdl_reaches_the_jobs(tmp_path, state):
    (tmp_path / "run.sh").write_text('#!/bin/sh\necho "payload for job $1"\n')
    (tmp_path / "run.sh").chmod(0o755)
    config = (config_text("script").replace('psetName = "pset.py"', 'psetName = "pset.py"\nscriptExe = "run.sh"')
              .replace("[Debug]\n", '[Debug]\nextraJDL = ["+CrabtuiExtra = 42"]\n'))
    (tmp_path / "crab.toml").write_text(config)
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path).returncode == 0
    status = wait_status(state, "script", tmp_path, "COMPLETED")
    ads = LocalScheddClient(state).history("CRAB_Id =!= undefined", ["CrabtuiExtra", "CRAB_Id", "Cmd", "Arguments"])
    assert len(ads) == 4 and all(ad["CrabtuiExtra"] == 42 for ad in ads)
    # each job as CRAB's DagmanCreator makes it, which condor_q shows an operator: its wrapper, with the job id
    assert {(Path(ad["Cmd"]).name, ad["Arguments"]) for ad in ads} == {
        ("gWMS-CMSRunAnalysis.sh", f"--jobId={i}") for i in range(1, 5)}
    assert "payload for job 1" in (Path(status["task_dir"]) / "job_out.1.0.txt").read_text()


def test_a_script_runs_beside_its_pset_and_input_files_as_shipped_at_submit(tmp_path, state):
    """CRAB's sandbox: a NanoAOD-tools style script runs ``python3 crab_script.py`` from its working
    directory, where PSet.py and JobType.inputFiles are (one from another directory, a directory
    whole); what it ships is what was there at submit."""
    (tmp_path / "crab").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "haddnano.py").write_text("print('haddnano')\n")
    (tmp_path / "crab" / "data").mkdir()
    (tmp_path / "crab" / "data" / "keep_and_drop.txt").write_text("keep Muon_*\n")
    (tmp_path / "crab" / "PSet.py").write_text("# fake PSet\n")
    (tmp_path / "crab" / "skim_cfg.py").write_text("# the pset CRAB ships as PSet.py\n")
    (tmp_path / "crab" / "crab_script.py").write_text(
        "import os, sys\n"
        "print('job', sys.argv[1], 'sees', ' '.join(sorted(os.listdir('.'))))\n"
        "print('pset', open('PSet.py').read().strip(), 'keep', open('data/keep_and_drop.txt').read().strip())\n")
    (tmp_path / "crab" / "crab_script.sh").write_text("#!/bin/sh\nexec python3 crab_script.py $1\n")
    (tmp_path / "crab" / "crab_script.sh").chmod(0o755)
    config = (config_text("sandbox").replace('psetName = "pset.py"', 'psetName = "skim_cfg.py"\nscriptExe = "crab_script.sh"\n'
                                             'inputFiles = ["crab_script.py", "../scripts/*.py", "data"]'))
    (tmp_path / "crab" / "crab.toml").write_text(config)
    assert crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path / "crab").returncode == 0
    (tmp_path / "crab" / "crab_script.py").write_text("raise SystemExit(3)\n")  # after submit: not the task's
    status = wait_status(state, "sandbox", tmp_path, "COMPLETED")
    out = (Path(status["task_dir"]) / "job_out.1.0.txt").read_text()
    assert "job 1 sees PSet.py crab_script.py crab_script.sh data haddnano.py" in out
    assert "pset # the pset CRAB ships as PSet.py keep keep Muon_*" in out
    assert not list(Path(status["task_dir"]).glob("scratch.*")), "each attempt's scratch directory goes with it"
    missing = config.replace('"data"]', '"data", "weights/*.xml"]')
    (tmp_path / "crab" / "crab.toml").write_text(missing.replace('"sandbox"', '"nosandbox"'))
    refused = crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path / "crab")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "The input file 'weights/*.xml' taken from parameter config.JobType.inputFiles cannot be found" in \
        refused.stderr


def test_submit_from_a_directory_holding_another_engine_package_uses_crabtuis_own(tmp_path, state):
    """The daemon that the first command starts imports crabtui's engine, not an ``engine``
    package in the user's working directory (another checkout, an older one)."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("raise ImportError('not crabtui')\n")
    (tmp_path / "crab.toml").write_text(config_text("here"))
    submitted = crabtui(state, "task", "submit", "crab.toml", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    assert wait_status(state, "here", tmp_path, "SUBMITTED")["dagman_id"]


class _OlderDaemon:
    """What a daemon of an older crabtui answers to ping: no sites (it cannot be started from this
    checkout, so its answer is written here)."""
    state = type("State", (), {"path": "/tmp/crabtui-state"})()

    def ping(self):
        return {"pid": 4242, "jobs": 0, "running": 0, "slots": 2, "busy_slots": 0, "state_dir": self.state.path}


def test_a_daemon_that_does_not_say_its_sites_is_named_in_one_line_with_the_way_out():
    from engine.schedd.api import ScheddError
    from engine.schedd.local.client import LocalScheddClient

    try:
        daemon = _OlderDaemon()
        LocalScheddClient.sites(daemon, daemon.ping())
    except ScheddError as e:
        message = str(e)
    assert "\n" not in message and "(pid 4242)" in message and "runs another version of crabtui" in message
    assert "'crabtui --state-dir /tmp/crabtui-state pool stop'" in message


MULTICRAB = """\
import sys
from CRABClient.UserUtilities import config
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from multiprocessing import Process

config = config()
config.JobType.psetName = 'pset.py'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']
config.Debug.timeScale = 500

def submit(cfg):
    try:
        crabCommand('submit', config=cfg)
    except ClientException as cle:
        print("Failed submitting task: %s" % (cle))

if __name__ == '__main__':
    for name in sys.argv[1:]:
        config.General.requestName = name
        config.Data.inputDataset = 'DATASET'
        p = Process(target=submit, args=(config,))
        p.start()
        p.join()
"""


def test_multicrab_sums_up_what_its_processes_submitted_and_what_was_refused(tmp_path, state):
    (tmp_path / "multicrab.py").write_text(MULTICRAB.replace("DATASET", MC))
    none = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", cwd=tmp_path)
    assert none.returncode == 1 and none.stderr.count("\n") == 1
    assert "its __main__ block (run as 'python multicrab.py') passed no config to crabCommand('submit')" in none.stderr
    done = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", "one", "bad/name", "two", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stdout + done.stderr
    assert re.findall(r"^Task name: \S+_crab_(\S+)$", done.stdout, re.M) == ["one", "two"]
    assert "Failed submitting task: " in done.stdout and "requestName parameter ('bad/name')" in done.stdout
    assert "1 of the 3 config(s) it passed to crabCommand('submit') were not submitted (2 were); the first " \
           "because: " in done.stderr and "'bad/name'" in done.stderr
    for name in ("one", "two"):
        assert wait_status(state, name, tmp_path, "SUBMITTED")["dagman_id"]
    # a project directory per crabCommand('submit'), where crab makes it; none for the refused config
    assert sorted(p.name for p in tmp_path.glob("crab_*")) == ["crab_one", "crab_two"]


def test_arguments_for_a_script_need_multicrab_and_multicrab_needs_a_python_file(tmp_path, state):
    (tmp_path / "crab.toml").write_text(config_text("plain"))
    extra = crabtui(state, "task", "submit", "crab.toml", "2018", cwd=tmp_path)
    assert extra.returncode == 1 and extra.stderr == (f"ERROR: {tmp_path / 'crab.toml'}: arguments after the "
                                                      "configuration (2018) are for a multi-crab script; add "
                                                      "--multicrab to run it with them (crab's parameters are "
                                                      "written Section.parameter=value).\n")
    script = crabtui(state, "task", "submit", "crab.toml", "--m", cwd=tmp_path)  # a script's own, not --multicrab
    assert script.returncode == 1 and "arguments after the configuration (--m) are for a multi-crab script; add " \
        "--multicrab" in script.stderr, script.stderr
    toml = crabtui(state, "task", "submit", "--multicrab", "crab.toml", cwd=tmp_path)
    assert toml.returncode == 1 and "--multicrab runs a crabConfig.py (*.py) as a script" in toml.stderr


def test_a_config_submitted_twice_is_refused_for_its_project_directory_and_crabs_short_names_work(tmp_path, state):
    """crab submit refuses a second submission of one requestName into the same work area; into
    another one it makes a second task of that requestName, which the commands then take by its
    full name or project directory."""
    (tmp_path / "crabConfig.py").write_text(crab_config_py("ttbar_again", scale=500))
    first = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    refused = crabtui(state, "task", "sub", "crabConfig.py", cwd=tmp_path)  # crab's short name
    assert refused.returncode == 1 and refused.stderr == (
        f"ERROR: {tmp_path / 'crabConfig.py'}: General.requestName: Working area '{tmp_path / 'crab_ttbar_again'}' "
        "already exists; please change the requestName in the config file (or General.workArea), or remove that "
        "directory\n")
    time.sleep(1 - time.time() % 1)  # task names carry the second of their submission
    second = crabtui(state, "task", "sub", "crabConfig.py", "General.workArea=again", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    names = [out.stdout.split("Task name: ")[1].split("\n")[0] for out in (first, second)]
    assert f"'crabtui --state-dir {state.path} task status -d crab_ttbar_again'" in first.stdout  # as it can be typed
    assert (f"Note: requestName ttbar_again is also that of {names[0]}: task commands take this task by its full "
            f"name, {names[1]}.") in second.stdout
    assert f"'crabtui --state-dir {state.path} task status -d again/crab_ttbar_again'" in second.stdout
    ambiguous = crabtui(state, "task", "status", "ttbar_again", cwd=tmp_path)
    assert ambiguous.returncode == 1 and f"({', '.join(sorted(names))}); give the full task name" in ambiguous.stderr
    for name in names:
        assert task_status(state, name, tmp_path)["name"] == name
    short = crabtui(state, "task", "st", names[1], cwd=tmp_path)
    assert short.returncode == 0 and f"Task name:\t\t\t{names[1]}\n" in short.stdout
    by_dir = crabtui(state, "task", "st", "-d", "again/crab_ttbar_again", cwd=tmp_path)
    assert by_dir.returncode == 0 and f"Task name:\t\t\t{names[1]}\n" in by_dir.stdout


SCRIPT_ARGS = """\
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'nano_args'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'crab_script.sh'
config.JobType.scriptArgs = ['isData=1', 'era=2023C', 'cut = pt_20', 'sel=a=b', 'files=/store/x.root,/store/y.root']
config.Data.inputDataset = 'DATASET'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']
config.Debug.timeScale = 500
"""


def test_script_args_reach_the_script_after_the_job_number_each_as_one_argument(tmp_path, state):
    """JobType.scriptArgs: CRAB runs ``scriptExe jobNumber arg...``; each entry arrives whole,
    spaces and '=' in it included."""
    (tmp_path / "PSet.py").write_text("# fake PSet\n")
    (tmp_path / "crab_script.sh").write_text('#!/bin/sh\nfor a in "$@"; do echo "arg[$a]"; done\n')
    (tmp_path / "crab_script.sh").chmod(0o755)
    (tmp_path / "crabConfig.py").write_text(SCRIPT_ARGS.replace("DATASET", MC))
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    status = wait_status(state, "nano_args", tmp_path, "COMPLETED")
    for job in ("1", "4"):
        out = (Path(status["task_dir"]) / f"job_out.{job}.0.txt").read_text()
        seen = [line[4:-1] for line in out.splitlines() if line.startswith("arg[")]
        assert seen == [job, "isData=1", "era=2023C", "cut = pt_20", "sel=a=b", "files=/store/x.root,/store/y.root"]
    # the same submit line as condor_submit reads it, for a pool's jobs
    submit = htcondor2.Submit((Path(status["task_dir"]) / "Job.submit").read_text())
    assert json.loads(classad2.ExprTree(submit["My.CRABTUI_ScriptArgs"]).eval()) == \
        ["isData=1", "era=2023C", "cut = pt_20", "sel=a=b", "files=/store/x.root,/store/y.root"]


def test_submit_prints_its_warnings_before_success_as_crab_submit_does(tmp_path, state):
    """An unreachable lumi mask is a warning; like every warning of crab submit, it comes before
    the Success line that ends the command's output."""
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        address = f"https://127.0.0.1:{free.getsockname()[1]}/Cert_Collisions2023_366442_370790_Golden.json"
    (tmp_path / "crabConfig.py").write_text(crab_config_py("golden", scale=500, more=f"config.Data.lumiMask = '{address}'\n"))
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    lines = submitted.stdout.splitlines()
    warning = next(i for i, line in enumerate(lines) if line.startswith("Warning: ") and "lumi mask" in line)
    success = next(i for i, line in enumerate(lines) if line.startswith("Success: "))
    assert warning < success and success == len(lines) - 1, submitted.stdout
    wait_status(state, "golden", tmp_path, "SUBMITTED")  # a task still QUEUED is refused a kill, as by CRAB
    assert crabtui(state, "task", "kill", "golden", cwd=tmp_path).returncode == 0


WHITELIST_ONE_SITE = """\
from CRABClient.UserUtilities import config, getUsername
config = config()

config.General.requestName = 'ttbar_cern_only'
config.General.transferLogs = False
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = 'DATASET'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.outLFNDirBase = '/store/user/%s/ttbar' % (getUsername())
config.Site.storageSite = 'T2_XX_Local'
config.Site.whitelist = ['T2_CH_*']
config.Debug.timeScale = 500
"""


def test_blocks_skipped_at_submit_stay_among_the_warnings_task_status_prints(tmp_path, state):
    """CRAB's TaskWorker uploads "Some blocks ... were skipped" to the task, so crab status shows
    it as long as the task lives, not only the submit that found it."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(WHITELIST_ONE_SITE.replace("DATASET", MC))
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    skipped = f"Some blocks from dataset {MC} were skipped because they are only present at blacklisted, "
    assert f"Warning: {skipped}" in submitted.stdout
    wait_status(state, "ttbar_cern_only", tmp_path, "SUBMITTED")
    printed = crabtui(state, "task", "status", "ttbar_cern_only", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    warnings = [line for line in printed.stdout.splitlines() if line.startswith("Warning:\t\t\t")]
    assert len(warnings) == 1 and warnings[0].startswith(f"Warning:\t\t\t{skipped}"), printed.stdout
    assert "1 (out of 2) blocks are only present at blacklisted" in warnings[0]
    killed = crabtui(state, "task", "kill", "ttbar_cern_only", cwd=tmp_path)  # its two jobs may be done already
    assert killed.returncode == 0 or "in the COMPLETED status" in killed.stderr, killed.stderr


def test_a_pool_file_edited_while_the_schedd_runs_is_noted_at_submit(tmp_path, state):
    """The user adds a site to pool.toml after the first submit started the schedd: the next
    submit says that the daemon still runs the pool it read, and how to restart it."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("before_edit", scale=500))
    first = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert first.returncode == 0 and "pool.toml" not in first.stdout, first.stdout + first.stderr
    with open(state.pool_config, "a", encoding="utf-8") as f:
        f.write('\n[[site]]\nname = "T2_US_Purdue"\nslots = 2\ncpus = 8\nmemory = 16000\n')
    (tmp_path / "crabConfig.py").write_text(crab_config_py("after_edit", scale=500))
    second = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    notes = [line for line in second.stdout.splitlines() if "pool.toml" in line]
    assert notes == [f"Note: {state.pool_config} changed after the schedd daemon (pid "
                     f"{LocalScheddClient(state).ping()['pid']}) read it, and it still runs the sites and slots it "
                     f"read then; 'crabtui --state-dir {state.path} pool stop' (its running jobs run again) makes "
                     f"the next command start it with the file as it is now."]
    for name in ("before_edit", "after_edit"):
        wait_status(state, name, tmp_path, "SUBMITTED")
        assert crabtui(state, "task", "kill", name, cwd=tmp_path).returncode == 0


def test_task_commands_take_crabs_project_directory_as_crab_users_type_it(tmp_path, state):
    """crab status -d crab_projects/crab_<requestName> (or the directory alone, or --task) is how
    CRAB users name a task; the directory is General.workArea's, which task submit makes."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("dimuon", scale=50,  # still running at the kill
                                                           more="config.General.workArea = 'crab_projects'\n"))
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    status = wait_status(state, "dimuon", tmp_path, "SUBMITTED")
    name = status["name"]
    for spelling in (["-d", "crab_projects/crab_dimuon"], ["--dir=crab_projects/crab_dimuon/"],
                     ["crab_projects/crab_dimuon"], ["--task", name]):
        shown = crabtui(state, "task", "status", *spelling, cwd=tmp_path)
        assert shown.returncode == 0 and f"Task name:\t\t\t{name}\n" in shown.stdout, (spelling, shown.stderr)
    # as for a task submitted before task submit made project directories: none, and none recorded
    shutil.rmtree(tmp_path / "crab_projects")
    (Path(status["task_dir"]) / "project_dir").unlink()
    for spelling in (["-d", "crab_projects/crab_dimuon"], ["crab_projects/crab_dimuon"]):
        shown = crabtui(state, "task", "status", *spelling, cwd=tmp_path)  # the path names the requestName
        assert shown.returncode == 0 and f"Task name:\t\t\t{name}\n" in shown.stdout, (spelling, shown.stderr)
    wrong = crabtui(state, "task", "status", "-d", "crab_projects/dimuon", cwd=tmp_path)
    assert wrong.returncode == 1 and wrong.stderr == (
        "ERROR: crab_projects/dimuon: crab's project directory of a task is named crab_<requestName> "
        "(General.workArea/crab_<General.requestName>); give that, or the task's name\n")
    both = crabtui(state, "task", "status", "dimuon", "--task", name, cwd=tmp_path)
    assert both.returncode == 1 and "got more than one" in both.stderr
    killed = crabtui(state, "task", "kill", "-d", "crab_projects/crab_dimuon", "--killwarning",
                     "wrong JEC tag, resubmitting as dimuon_v2", cwd=tmp_path)
    assert killed.returncode == 0 and name in killed.stdout, killed.stderr
    wait_status(state, "dimuon", tmp_path, "KILLED")
    shown = crabtui(state, "task", "status", "dimuon", cwd=tmp_path).stdout  # crab kill's warning, as CRAB adds it
    assert "\nWarning:\t\t\twrong JEC tag, resubmitting as dimuon_v2\nStatus on the scheduler:" in shown, shown


def test_submit_takes_the_configuration_as_crab_submit_does(tmp_path, state):
    """crab submit -c FILE, --config=FILE, or nothing (crabConfig.py in the current directory),
    and parameters after it (General.requestName=x) set over the file's, as crab's client sets them."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crab_zmumu.py").write_text(crab_config_py("zmumu_c", scale=500))
    (tmp_path / "crabConfig.py").write_text(crab_config_py("zmumu_default", scale=500))
    for args, name in ((["-c", "crab_zmumu.py"], "zmumu_c"), ([], "zmumu_default")):
        done = crabtui(state, "task", "submit", *args, cwd=tmp_path)
        assert done.returncode == 0 and f"crab_{name}" in done.stdout, (args, done.stderr)
        wait_status(state, name, tmp_path, "SUBMITTED")  # a task still QUEUED is refused a kill, as by CRAB
        assert crabtui(state, "task", "kill", name, cwd=tmp_path).returncode == 0
    override = crabtui(state, "task", "submit", "--config=crab_zmumu.py", "General.requestName=zmumu_x",
                       "Data.unitsPerJob=2", "Site.blacklist=['T2_US_Nebraska', 'T2_DE_DESY', 'T2_IT_Pisa']",
                       cwd=tmp_path)
    assert override.returncode == 0 and "crab_zmumu_x" in override.stdout, override.stderr
    status = wait_status(state, "zmumu_x", tmp_path, "SUBMITTED")
    assert len(status["jobs"]) == 10, "20 files, 2 a job"
    assert crabtui(state, "task", "kill", "zmumu_x", cwd=tmp_path).returncode == 0
    bad = crabtui(state, "task", "submit", "crab_zmumu.py", "Data.unitsPerJob=two", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr == (
        f"ERROR: {tmp_path / 'crab_zmumu.py'}: Data.unitsPerJob=two (on the command line): Data.unitsPerJob takes a "
        "Python literal, such as 10, True or ['T2_CH_CERN']; quote the argument for the shell.\n")
    (tmp_path / "crabConfig.py").unlink()
    none = crabtui(state, "task", "submit", cwd=tmp_path)
    assert none.returncode == 1 and none.stderr == (
        f"ERROR: no configuration given, and there is no crabConfig.py (crab submit's default) in {tmp_path}; "
        "give the file: crabtui task submit FILE (or -c FILE).\n")


def test_crabs_common_options_are_taken_as_crab_users_paste_them(tmp_path, state):
    """crab's commands all take --proxy, and --instance (the CRAB server): a command line copied from
    a crab session or a script works, an instance CRAB does not know is refused in one line, and
    crab resubmit --publication says why there is nothing to resubmit."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("wjets", scale=0.5))  # running until killed
    submitted = crabtui(state, "task", "submit", "--proxy", "/tmp/x509up_u1000", "--instance=prod", "-c",
                        "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    name = wait_status(state, "wjets", tmp_path, "SUBMITTED")["name"]
    shown = crabtui(state, "task", "status", "-d", "crab_wjets", "--instance", "prod", "--proxy",
                    "/tmp/x509up_u1000", "--long", cwd=tmp_path)
    assert shown.returncode == 0 and f"Task name:\t\t\t{name}\n" in shown.stdout, shown.stderr
    for command in (["status", "wjets"], ["kill", "wjets"], ["resubmit", "wjets"], ["submit", "crabConfig.py"]):
        wrong = crabtui(state, "task", *command, "--instance", "k8s", cwd=tmp_path)
        assert wrong.returncode == 1 and wrong.stderr.startswith(
            'ERROR: Invalid value "k8s" for --instance; valid values are prod, preprod, test2, test11, test12, '
            'test14, other') and wrong.stderr.count("\n") == 1, (command, wrong.stderr)
    logs = crabtui(state, "task", "getlog", "-d", "crab_wjets", "--voRole", "cmsuser", "--voGroup=becms", "--proxy",
                   "/tmp/x509up_u1000", "--dump", cwd=tmp_path)  # crab getlog's and getoutput's VOMS options
    assert logs.returncode == 0 and logs.stderr == "", logs.stderr
    publication = crabtui(state, "task", "resubmit", "wjets", "--publication", cwd=tmp_path)
    assert publication.returncode == 1 and publication.stderr.startswith(
        "ERROR: --publication resubmits a task's failed publications, and crabtui publishes no output dataset")
    killed = crabtui(state, "task", "kill", "--task", name, "--proxy=/tmp/x509up_u1000", cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    wait_status(state, "wjets", tmp_path, "KILLED")


SCRIPT_WITH_OUTPUTS = """\
from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'nanoskim'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'crab_script.sh'
config.JobType.disableAutomaticOutputCollection = True
config.JobType.outputFiles = ['tree.root', 'hists.root']

config.Data.inputDataset = '{dataset}'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.publication = False

config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']
config.Debug.timeScale = 500
"""


def test_a_scripts_output_files_are_staged_out_and_a_missing_one_fails_its_job(tmp_path, state):
    """JobType.outputFiles of a script are what its job must write: each is renamed <name>_<job>.root,
    as CRAB's job renames it, and staged out to the storage site; a job whose script exits 0 without
    writing one fails with cmscp's 60302 ("Output file hists.root does not exist.")."""
    (tmp_path / "PSet.py").write_text("# fake PSet\n")
    (tmp_path / "crab_script.sh").write_text(
        '#!/bin/sh\necho tree > tree.root\n[ "$1" = 2 ] || echo hists > hists.root\n')
    (tmp_path / "crab_script.sh").chmod(0o755)
    (tmp_path / "crabConfig.py").write_text(SCRIPT_WITH_OUTPUTS.format(dataset=MC))
    submitted = crabtui(state, "task", "submit", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    done = wait_until("every job to end", lambda: (s := task_status(state, "nanoskim", tmp_path))["jobs"]
                      and all(j["state"] in ("finished", "failed") for j in s["jobs"]) and s)
    jobs = {j["id"]: j for j in done["jobs"]}
    assert sorted(jobs) == ["1", "2", "3", "4"]
    assert {i: j["state"] for i, j in jobs.items()} == {"1": "finished", "2": "failed", "3": "finished",
                                                        "4": "finished"}
    assert jobs["2"]["attempts"][-1]["exit_code"] == 60302
    stored = sorted(p.name for p in Path(state.path, "storage", "T2_XX_Local").rglob("*.root"))
    assert stored == sorted(f"{stem}_{n}.root" for stem in ("tree", "hists") for n in (1, 3, 4))
    shown = crabtui(state, "task", "status", "nanoskim", "--verboseErrors", cwd=tmp_path).stdout
    assert "Output file hists.root does not exist." in shown, shown
    bad = SCRIPT_WITH_OUTPUTS.format(dataset=MC).replace("'hists.root'", "'out/*.root'")
    (tmp_path / "crabConfig.py").write_text(bad)
    refused = crabtui(state, "task", "submit", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and (
        "Incorrect 'JobType.outputFiles' parameter. Allowed regexp for each filename: "
        "'^(?=.{0,255}$)([a-zA-Z0-9\\-\\._]+)$' (entry 2, 'out/*.root'" in refused.stderr), refused.stderr


MULTICRAB_CRABCMD = """\
from optparse import OptionParser

from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.UserUtilities import config


def getOptions():
    parser = OptionParser(usage="Usage: %prog --crabCmd CMD [--workArea WAD]")
    parser.add_option('-c', '--crabCmd', dest='crabCmd', default='')
    parser.add_option('-w', '--workArea', dest='workArea', default='crab_projects')
    (options, arguments) = parser.parse_args()
    return options


def main():
    options = getOptions()
    if options.crabCmd != 'submit':
        print('nothing to do for crab %s in %s' % (options.crabCmd, options.workArea))
        return
    for sample in ('DYJets', 'WJets'):
        cfg = config()
        cfg.General.requestName = sample
        cfg.General.workArea = options.workArea
        cfg.JobType.psetName = 'pset.py'
        cfg.Data.inputDataset = '{dataset}'
        cfg.Data.splitting = 'FileBased'
        cfg.Data.unitsPerJob = 5
        cfg.Site.storageSite = 'T2_XX_Local'
        cfg.Debug.timeScale = 500
        try:
            crabCommand('submit', config=cfg)
        except ClientException as e:
            print('failed: %s' % e)


if __name__ == '__main__':
    main()
"""


def test_a_multicrab_scripts_own_dash_c_is_its_own(tmp_path, state):
    """CRAB's multicrab example reads -c/--crabCmd: 'python multicrab.py -c submit -w crab_2018' is how
    users run it, so after --multicrab SCRIPT.py a -c that names no Python file is the script's, not
    crab submit's -c FILE; -c SCRIPT.py still names the script."""
    (tmp_path / "multicrab.py").write_text(MULTICRAB_CRABCMD.format(dataset=MC))
    status = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", "-c", "status", "-w", "crab_2018",
                     cwd=tmp_path)
    assert status.returncode == 1 and "nothing to do for crab status in crab_2018" in status.stdout, status.stderr
    assert "its __main__ block (run as 'python multicrab.py -c status -w crab_2018') passed no config" in status.stderr
    done = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", "-c", "submit", "-w", "crab_2018",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.findall(r"^Task name: \S+_crab_(\S+)$", done.stdout, re.M) == ["DYJets", "WJets"]
    named = crabtui(state, "task", "submit", "--multicrab", "-c", "multicrab.py", "--crabCmd", "status", cwd=tmp_path)
    assert named.returncode == 1 and "nothing to do for crab status in crab_projects" in named.stdout, named.stderr
    for name in ("DYJets", "WJets"):
        assert wait_status(state, name, tmp_path, "SUBMITTED")["dagman_id"]


MULTICRAB_COMMANDS = """\
import os
from optparse import OptionParser

from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.ClientUtilities import LOGLEVEL_MUTE
from CRABClient.UserUtilities import config, setConsoleLogLevel


def getOptions():
    parser = OptionParser(usage="Usage: %prog --crabCmd CMD [--workArea WAD --crabCmdOpts OPTS]")
    parser.add_option('-c', '--crabCmd', dest='crabCmd', default='')
    parser.add_option('-w', '--workArea', dest='workArea', default='crab_projects')
    parser.add_option('-o', '--crabCmdOpts', dest='crabCmdOpts', default='')
    parser.add_option('-s', '--timeScale', dest='timeScale', type='float', default=500)
    return parser.parse_args()[0]


def submit(options):
    for sample in ('DYJets', 'WJets'):
        cfg = config()
        cfg.General.requestName = sample
        cfg.General.workArea = options.workArea
        cfg.JobType.psetName = 'pset.py'
        cfg.Data.inputDataset = '{dataset}'
        cfg.Data.splitting = 'FileBased'
        cfg.Data.unitsPerJob = 5
        cfg.Site.storageSite = 'T2_XX_Local'
        cfg.Debug.timeScale = options.timeScale
        if sample == 'WJets':
            cfg.Debug.failurePlan = [{{'job': '2', 'attempt': 1, 'exitCode': 8006}}]
        crabCommand('submit', config=cfg)


def main():
    options = getOptions()
    if options.crabCmd == 'submit':
        submit(options)
        return
    setConsoleLogLevel(LOGLEVEL_MUTE)
    for d in sorted(os.listdir(options.workArea)):
        try:
            res = crabCommand(options.crabCmd, dir=os.path.join(options.workArea, d), *options.crabCmdOpts.split())
        except ClientException as e:
            print('%s: Failed executing command %s: %s' % (d, options.crabCmd, e))
            continue
        if options.crabCmd != 'status':
            print('%s: %s' % (d, res))
            continue
        failed = sorted(j for j, info in res['jobs'].items() if info['State'] == 'failed')
        print('%s: %s (server %s) %s, %d jobs, failed: %s' % (d, res['status'], res['dbStatus'],
              sorted(res['jobsPerStatus'].items()), len(res['jobList']), ','.join(failed)))


if __name__ == '__main__':
    main()
"""


def test_a_multicrab_script_follows_resubmits_and_kills_its_tasks_with_crab_command(tmp_path, state):
    """CRAB's multicrab example run with -c status|resubmit|kill loops over its work area calling
    crabCommand(CMD, dir=...): status returns crab status's dictionary (status, dbStatus,
    jobsPerStatus, jobList, jobs by id with their State), from the same status as 'task status
    --json'; resubmit and kill do what 'task resubmit' and 'task kill' do and return crab's
    {'status': 'SUCCESS'}, each logged in crab.log as the command line it stands for; what crab
    refuses, and a directory that is no project, is the script's ClientException."""
    (tmp_path / "multicrab.py").write_text(MULTICRAB_COMMANDS.format(dataset=MC))
    (tmp_path / "pset.py").write_text("")

    def multicrab(*args):
        return crabtui(state, "task", "submit", "--multicrab", "multicrab.py", *args, cwd=tmp_path)

    assert multicrab("-c", "submit").returncode == 0
    wait_status(state, "DYJets", tmp_path, "COMPLETED")
    wait_status(state, "WJets", tmp_path, "FAILED")
    (tmp_path / "crab_projects" / "notes").mkdir()
    status = multicrab("-c", "status")
    assert status.returncode == 0 and status.stderr == "", status.stderr
    assert status.stdout.splitlines() == [
        "crab_DYJets: COMPLETED (server SUBMITTED) [('finished', 4)], 4 jobs, failed: ",
        "crab_WJets: FAILED (server SUBMITTED) [('failed', 1), ('finished', 3)], 4 jobs, failed: 2",
        "notes: Failed executing command status: crabCommand('status'): crab_projects/notes is not a valid CRAB "
        f"project directory (in {tmp_path}): give the directory the submission printed as 'Project dir:'"]
    (tmp_path / "crab_projects" / "notes").rmdir()
    dbs = multicrab("-c", "report", "-o", "--dbs=yes")  # crab report's UnknownOptionException, a ClientException
    assert dbs.returncode == 0 and dbs.stdout.splitlines() == [
        f"crab_{name}: Failed executing command report: crabCommand('report'): CRAB command option error: the option "
        "--dbs has been deprecated since CRAB v3.3.1603; drop it (the report is made from the jobs' own reports)"
        for name in ("DYJets", "WJets")], dbs.stdout + dbs.stderr
    k8s = multicrab("--", "-c", "status", "-o", "--instance=k8s")  # checked as crab checks it, also in its API
    assert k8s.returncode == 0 and k8s.stdout.splitlines() == [
        f"crab_{name}: Failed executing command status: crabCommand('status'): Invalid value \"k8s\" for --instance; "
        "valid values are prod, preprod, test2, test11, test12, test14, other ('prod' is crab's default; crabtui "
        "contacts no CRAB server, so any valid value does the same)" for name in ("DYJets", "WJets")], k8s.stdout
    idle = multicrab("--", "-c", "status", "-o", "--idle")  # crab's parser has no status --idle
    assert idle.returncode == 1 and "BadArgumentException: crabCommand('status'): crab status has no --idle option" \
        in idle.stderr, idle.stdout + idle.stderr

    resubmit = multicrab("-c", "resubmit", "-o", "--maxmemory=3000")
    assert resubmit.returncode == 0, resubmit.stderr
    assert resubmit.stdout.splitlines() == [
        "crab_DYJets: Failed executing command resubmit: crabCommand('resubmit'): You cannot resubmit jobs if the "
        f"task is in status COMPLETED. ({task_status(state, 'DYJets', tmp_path)['name']}: every job of it has "
        "finished; there is nothing to resubmit)",
        "crab_WJets: {'status': 'SUCCESS'}"]
    two = {j["id"]: j for j in wait_status(state, "WJets", tmp_path, "COMPLETED")["jobs"]}["2"]
    assert [a["request_memory"] for a in two["attempts"]] == [2000, 3000]

    assert multicrab("-c", "submit", "-w", "crab_slow", "-s", "0.01").returncode == 0
    for name in ("crab_slow/crab_DYJets", "crab_slow/crab_WJets"):
        wait_until(f"{name} on the scheduler", lambda: task_status(state, name, tmp_path)["dagman_id"])
    one_job = multicrab("-c", "kill", "-w", "crab_slow", "-o", "--jobids=1")  # crab's parser has no kill --jobids
    assert one_job.returncode == 1 and "BadArgumentException: crabCommand('kill'): crab kill's --jobids (kill single " \
        "jobs) was removed from CRAB in 2017" in one_job.stderr, one_job.stdout + one_job.stderr
    kill = multicrab("-c", "kill", "-w", "crab_slow")
    assert kill.returncode == 0 and kill.stdout.splitlines() == [
        "crab_DYJets: {'status': 'SUCCESS'}", "crab_WJets: {'status': 'SUCCESS'}"], kill.stdout + kill.stderr
    for name in ("crab_slow/crab_DYJets", "crab_slow/crab_WJets"):
        wait_status(state, name, tmp_path, "KILLED")
    log = (tmp_path / "crab_slow" / "crab_WJets" / "crab.log").read_text().splitlines()
    commands = [line.split(f": in {tmp_path}: ", 1)[1] for line in log]
    assert commands[0] == f"crabtui --state-dir {state.path} task submit --multicrab multicrab.py -c submit -w " \
        "crab_slow -s 0.01" and "crabtui task kill --dir crab_slow/crab_WJets" in commands, commands


def test_a_submitfailed_task_resubmitted_after_its_input_changed_is_checked_for_locations_again(tmp_path, state):
    """crab resubmit of a SUBMITFAILED task submits it anew, and the task worker checks where its
    blocks can run as DagmanCreator does: a user dataset replaced since, now only at a site the pool
    does not have, is refused with CRAB's "No locations found" instead of jobs failing one by one."""
    name = "/DoubleMuon/someone-Skim2018A-v1/USER"
    block = {"name": f"{name}#1", "sites": ["T2_XX_Local"],
             "files": [{"lfn": "/store/user/someone/skim/f1.root", "size": 1000000, "lumis": [[1, 1, 50]]}]}
    (tmp_path / "v1.json").write_text(json.dumps({"name": name, "blocks": [block]}))
    assert crabtui(state, "dataset", "add", name, "--from", "v1.json", cwd=tmp_path).returncode == 0
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "golden.json").write_text('{"315257": [[1, 10]]}')
    (tmp_path / "crabConfig.py").write_text(crab_config_py("dimuon_skim", scale=500, dataset=name,
                                                           more="config.Data.lumiMask = 'golden.json'\n"))
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    failed = wait_status(state, "dimuon_skim", tmp_path, "SUBMITFAILED")
    assert "Data.lumiMask selects no lumi" in failed["message"], failed["message"]
    moved = {**block, "sites": ["T2_FR_GRIF"], "files": [{**block["files"][0], "lumis": [[315257, 1, 50]]}]}
    (tmp_path / "v2.json").write_text(json.dumps({"name": name, "blocks": [moved]}))
    assert crabtui(state, "dataset", "add", name, "--from", "v2.json", "--replace", cwd=tmp_path).returncode == 0
    resubmitted = crabtui(state, "task", "resubmit", "dimuon_skim", cwd=tmp_path)
    assert resubmitted.returncode == 0, resubmitted.stderr
    again = wait_until("the resubmission to fail", lambda: (s := task_status(state, "dimuon_skim", tmp_path))
                       ["status"] == "SUBMITFAILED" and s["message"] != failed["message"] and s)
    assert f"No locations found for dataset {name}." in again["message"], again["message"]
    assert "The data is at T2_FR_GRIF; the pool's sites are " in again["message"], again["message"]


DY_CONFIG = """\
from CRABClient.UserUtilities import config
config = config()
config.General.requestName = 'DYJets_2022'
config.General.workArea = 'crab_projects'
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '/DYJetsToLL_M-50_TuneCP5_13p6TeV-madgraphMLM-pythia8/Run3Summer22NanoAODv12-130X_mcRun3_2022_realistic_v5-v2/NANOAODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.outLFNDirBase = '/store/user/jdoe/'
config.Site.storageSite = 'T3_US_FNALLPC'
config.Site.whitelist = ['T2_US_*']
"""


def test_a_config_whitelisting_real_sites_runs_once_the_pool_has_the_simulated_grid(tmp_path):
    """A fresh state directory's pool is this machine, T2_XX_Local, which a real analysis's
    whitelist leaves out: the refusal says how to get the simulated grid's CMS sites, and
    `pool start --grid` gives them, without overwriting a pool file of the user's own."""
    fresh = StateDir(tempfile.mkdtemp(prefix="crabgrid-", dir="/tmp"))
    try:
        (tmp_path / "crabConfig.py").write_text(DY_CONFIG)
        (tmp_path / "pset.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('A')\n")
        refused = crabtui(fresh, "task", "submit", cwd=tmp_path)
        assert refused.returncode == 1 and len(refused.stderr.splitlines()) == 1
        assert "the pool's sites are T2_XX_Local" in refused.stderr
        assert "'crabtui pool stop', then 'crabtui pool start --grid', put the simulated grid's CMS sites" \
            in refused.stderr
        assert crabtui(fresh, "pool", "stop", cwd=tmp_path).returncode == 0

        started = crabtui(fresh, "pool", "start", "--grid", cwd=tmp_path)
        assert started.returncode == 0, started.stderr
        assert started.stdout.splitlines()[0] == f"pool: the simulated grid's sites written to {fresh.pool_config}"
        again = crabtui(fresh, "pool", "start", "--grid", cwd=tmp_path)
        assert again.returncode == 0 and "already running" in again.stdout and "written" not in again.stdout
        submitted = crabtui(fresh, "task", "submit", cwd=tmp_path)
        assert submitted.returncode == 0, submitted.stderr
        assert "Success: Your task has been delivered" in submitted.stdout

        mine = "[[site]]\nname = \"T2_US_Purdue\"\nslots = 2\n"
        Path(fresh.pool_config).write_text(mine)
        kept = crabtui(fresh, "pool", "start", "--grid", cwd=tmp_path)
        assert kept.returncode == 1
        assert kept.stderr == (f"ERROR: {fresh.pool_config} exists already and describes another pool; move it "
                               "away to start on the simulated grid, or leave out --grid to keep it\n")
        assert Path(fresh.pool_config).read_text() == mine
    finally:
        LocalScheddClient(fresh).shutdown()
        shutil.rmtree(fresh.path, ignore_errors=True)


def test_a_resubmit_after_the_pool_changed_judges_and_runs_on_the_sites_the_pool_has_now(tmp_path):
    """Submitted on this machine's pool (T2_XX_Local), then the pool restarted with the simulated
    grid: a resubmit's --sitewhitelist is judged against the sites the pool has now, as CRAB asks
    its site database again, its refusal names them, and the job resubmitted to one of them runs
    there."""
    fresh = StateDir(tempfile.mkdtemp(prefix="crabnow-", dir="/tmp"))
    try:
        (tmp_path / "pset.py").write_text("# fake PSet\n")
        (tmp_path / "crabConfig.py").write_text(crab_config_py(
            "sites_now", scale=500, more="config.Debug.failurePlan = [{'job': '2', 'attempt': '*', 'exitCode': 8006}]\n"))
        assert crabtui(fresh, "task", "submit", cwd=tmp_path).returncode == 0
        wait_status(fresh, "sites_now", tmp_path, "FAILED")
        assert crabtui(fresh, "pool", "stop", cwd=tmp_path).returncode == 0
        assert crabtui(fresh, "pool", "start", "--grid", cwd=tmp_path).returncode == 0

        refused = crabtui(fresh, "task", "resubmit", "sites_now", "--sitewhitelist", "T2_ZZ_Nowhere", cwd=tmp_path)
        assert refused.returncode == 1
        assert ("the pool's sites are T1_US_FNAL, T2_CH_CERN, T2_DE_DESY, T2_IT_Pisa, T2_US_Nebraska, T2_XX_Local)"
                in refused.stderr), refused.stderr
        sent = crabtui(fresh, "task", "resubmit", "sites_now", "--sitewhitelist", "T2_CH_CERN", cwd=tmp_path)
        assert sent.returncode == 0, sent.stderr
        job = wait_until("job 2's attempt after the resubmission", lambda: next(
            (j for j in task_status(fresh, "sites_now", tmp_path)["jobs"] if j["id"] == "2" and
             len(j["attempts"]) > 1 and j["state"] == "failed"), None))
        assert [a["site"] for a in job["attempts"]][1:] == ["T2_CH_CERN"]
    finally:
        LocalScheddClient(fresh).shutdown()
        shutil.rmtree(fresh.path, ignore_errors=True)


def test_output_files_given_as_a_plain_string_is_that_one_file_with_a_warning(tmp_path, state):
    """JobType.outputFiles = 'Rivet.yoda', as Rivet analyses write it: crab submit accepts a string
    (it iterates it); the job's one file is staged out, and submit says to write a list."""
    (tmp_path / "PSet.py").write_text("# fake PSet\n")
    (tmp_path / "crab_script.sh").write_text("#!/bin/sh\necho histos > Rivet.yoda\necho tree > tree.root\n"
                                             "echo hists > hists.root\n")
    (tmp_path / "crab_script.sh").chmod(0o755)
    config = SCRIPT_WITH_OUTPUTS.format(dataset=MC).replace("['tree.root', 'hists.root']", "'Rivet.yoda'")
    (tmp_path / "crabConfig.py").write_text(config.replace("'nanoskim'", "'rivet'"))
    submitted = crabtui(state, "task", "submit", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    assert (f"Warning: {tmp_path / 'crabConfig.py'}: JobType.outputFiles = 'Rivet.yoda' is a string, not a list"
            in submitted.stdout), submitted.stdout
    assert "Write JobType.outputFiles = ['Rivet.yoda']." in submitted.stdout
    wait_status(state, "rivet", tmp_path, "COMPLETED")  # a file per character would fail every job (60302)
    stored = sorted(p.name for p in Path(state.path, "storage", "T2_XX_Local").rglob("*"))
    assert [n for n in stored if "Rivet" in n] == [f"Rivet_{n}.yoda" for n in (1, 2, 3, 4)]


MULTICRAB_INSTANCE = """\
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.UserUtilities import config

config = config()
config.General.workArea = 'crab_projects'
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '{dataset}'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']

if __name__ == '__main__':
    for name, instance in (('on_k8s', 'k8s'), ('on_preprod', 'preprod')):
        config.General.requestName = name
        try:
            crabCommand('submit', config=config, instance=instance)
        except ClientException as e:
            print("Failed submitting task: %s" % e)
"""


def test_crab_command_checks_its_instance_as_general_instance_is_checked(tmp_path, state):
    """crabCommand('submit', config=..., instance=X) is crab's --instance: over General.instance,
    and refused as crab refuses an instance it does not know."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "multicrab.py").write_text(MULTICRAB_INSTANCE.format(dataset=MC))
    done = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert 'Failed submitting task: ' in done.stdout and 'Invalid value "k8s" for configuration.General.instance' \
        in done.stdout, done.stdout
    assert re.findall(r"^Task name: \S+_crab_(\S+)$", done.stdout, re.M) == ["on_preprod"]
    assert "1 of the 2 config(s) it passed to crabCommand('submit') were not submitted (1 were)" in done.stderr


MULTICRAB_SLOW = """\
import os
import time

from CRABAPI.RawCommand import crabCommand
from CRABClient.UserUtilities import config

config = config()
config.JobType.psetName = 'pset.py'
config.Data.inputDataset = '{dataset}'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']

for era in ('2022', '2023'):
    config.General.requestName = 'dy_' + era
    crabCommand('submit', config=config)
    open('submitted_' + era, 'w').close()
    time.sleep(600)  # the user hits Ctrl-C here
"""


def test_ctrl_c_while_a_configuration_runs_says_keyboard_interrupted_and_what_was_submitted(tmp_path, state):
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(MULTICRAB_SLOW.format(dataset=MC))
    # Ctrl-C's default action even when the tests were started in the background (a shell then
    # starts them with SIGINT ignored, and Python raises no KeyboardInterrupt for an ignored signal)
    process = subprocess.Popen([CRABTUI, "--state-dir", state.path, "task", "submit"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_until("the first task to be submitted", lambda: (tmp_path / "submitted_2022").exists())
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 1 and err.count("\n") == 1 and "Aborted" not in err, err
    name = re.findall(r"^Task name: (\S+)$", out, re.M)[0]
    assert err == (f"ERROR: Keyboard Interrupted while {tmp_path / 'crabConfig.py'} ran. "
                   f"(Submitted before that: {name}.)\n")
    assert wait_status(state, "dy_2022", tmp_path, "SUBMITTED")["name"] == name  # nothing done is lost


def test_blocks_at_the_same_sites_are_split_as_one_as_wmcore_groups_files_by_location(tmp_path, state):
    """CRAB's TaskWorker splits with WMCore, which groups the input files by their set of locations:
    blocks at the same sites (however their JSON lists them) make one group, a job may read files of
    several of them, and a block at other sites is a group of its own."""
    name = "/SingleMuon/someone-Skim2018B-v1/USER"
    where = [["T2_CH_CERN", "T2_XX_Local"], ["T2_XX_Local"], ["T2_XX_Local", "T2_CH_CERN"]]
    blocks = [{"sites": sites, "files": [{"lfn": f"/store/user/someone/skim/b{b}_f{f}.root", "size": 1000000,
                                          "lumis": [[317000, 3 * (3 * b + f) + n, 100] for n in range(1, 4)]}
                                         for f in range(3 if b != 1 else 2)]}
              for b, sites in enumerate(where)]
    (tmp_path / "skim.json").write_text(json.dumps({"name": name, "blocks": blocks}))
    assert crabtui(state, "dataset", "add", name, "--from", "skim.json", cwd=tmp_path).returncode == 0
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    for splitting, units, jobs, what in (("FileBased", 2, 4, "8 files"), ("LumiBased", 4, 7, "24 lumis")):
        request = f"muon_skim_{splitting}"
        (tmp_path / "crabConfig.py").write_text(crab_config_py(request, scale=500, dataset=name, more=(
            f"config.Data.splitting = '{splitting}'\nconfig.Data.unitsPerJob = {units}\n")))
        dry = crabtui(state, "task", "submit", "--dryrun", "crabConfig.py", cwd=tmp_path)
        assert dry.returncode == 0, dry.stderr
        # blocks 1 and 3: 6 files, 18 lumis; block 2: 2 files, 6 lumis (one block at a time: 5 and 8 jobs)
        assert f"Using {splitting} splitting\nTask consists of {jobs} jobs to process {what}\n" in dry.stdout, \
            dry.stdout


def test_crab_submit_dryrun_then_crab_proceed_submits_the_task_as_estimated(tmp_path, state):
    """crab submit --dryrun: the splitting summary crab prints, and the task left UPLOADED with its
    project directory; crab proceed submits that task, under its name, with the jobs estimated."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("dry_zmumu", scale=500))
    dry = crabtui(state, "task", "submit", "--dryrun", "crabConfig.py", "Data.unitsPerJob=3", cwd=tmp_path)
    assert dry.returncode == 0 and dry.stderr == "", dry.stderr
    assert ("Dry run\nUsing FileBased splitting\nTask consists of 8 jobs to process 20 files\n"  # 3 a job, by block
            "The longest job will process 3 files\nThe average job will process 2 files\n"
            "The shortest job will process 1 files\nNo processing time or memory estimates") in dry.stdout, dry.stdout
    name = re.findall(r"^Task name: (\S+)$", dry.stdout, re.M)[0]
    assert dry.stdout.endswith(f"Project dir: crab_dry_zmumu\nDry run requested: task paused\n"
                               f"To continue processing, use 'crabtui --state-dir {state.path} task proceed -d "
                               f"crab_dry_zmumu'\n"), dry.stdout
    assert task_row(state, name, tmp_path)["status"] == "UPLOADED"
    assert "The task has not been submitted to the Grid scheduler yet" in crabtui(
        state, "task", "status", "-d", "crab_dry_zmumu", cwd=tmp_path).stdout
    again = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)  # crab's project directory is taken
    assert again.returncode == 1 and "Working area '" in again.stderr and "already exists" in again.stderr
    dry_again = crabtui(state, "task", "submit", "--dryrun", "crabConfig.py", cwd=tmp_path)  # refused first, as crab
    assert dry_again.returncode == 1 and dry_again.stdout == "" and "already exists" in dry_again.stderr
    proceed = crabtui(state, "task", "proceed", "-d", "crab_dry_zmumu", cwd=tmp_path)
    assert proceed.returncode == 0 and proceed.stdout.startswith(
        f"Task continuation request for task {name} successfully sent"), proceed.stdout + proceed.stderr
    submitted = wait_status(state, name, tmp_path, "SUBMITTED")
    assert submitted["name"] == name
    shown = task_status(state, name, tmp_path)
    assert len(shown["jobs"]) == 8, "the splitting the dry run estimated"
    twice = crabtui(state, "task", "proceed", name, cwd=tmp_path)
    assert twice.returncode == 1 and twice.stderr == (
        f"ERROR: Can only proceed if task is in the UPLOADED status, but it is in the SUBMITTED status ({name}: "
        f"crab proceed continues a task submitted with --dryrun).\n"), twice.stderr
    skipped = crabtui(state, "task", "submit", "crabConfig.py", "--dryrun", "--skip-estimates",
                      "General.requestName=dry_skipped", cwd=tmp_path)
    assert skipped.returncode == 0 and "Task consists of 4 jobs to process 20 files" in skipped.stdout
    assert "estimates" not in skipped.stdout
    automatic = crabtui(state, "task", "submit", "--dryrun", "Data.splitting=Automatic", "Data.unitsPerJob=480",
                        "General.requestName=dry_automatic", cwd=tmp_path)
    assert automatic.returncode == 1 and automatic.stderr.count("\n") == 1 and (
        "The 'dryrun' option is not compatible with the 'Automatic' splitting mode (default)." in automatic.stderr)
    assert not (tmp_path / "crab_dry_automatic").exists(), "a refused dry run leaves nothing"
    (tmp_path / "submit_at_load.py").write_text(crab_config_py("dry_loaded", scale=500) + textwrap.dedent("""\
        from CRABAPI.RawCommand import crabCommand
        print(crabCommand('submit', config=config))
        """))
    loaded = crabtui(state, "task", "submit", "--dryrun", "submit_at_load.py", cwd=tmp_path)
    assert loaded.returncode == 0 and loaded.stdout.count("Using FileBased splitting") == 1, loaded.stdout
    assert "passed 1 config(s) to crabCommand('submit') as it loaded: each was dry run above" in loaded.stdout
    assert crabtui(state, "task", "list", "--json", cwd=tmp_path).stdout.count('"UPLOADED"') == 2


MULTICRAB_DRYRUN = """\
from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from CRABClient.UserUtilities import config

samples = {{'ZMM': '{dataset}', 'ZEE': '{dataset}'}}

if __name__ == '__main__':
    for name, dataset in samples.items():
        cfg = config()
        cfg.General.requestName = 'dry_' + name
        cfg.General.workArea = 'crab_projects'
        cfg.JobType.pluginName = 'Analysis'
        cfg.JobType.psetName = 'pset.py'
        cfg.Data.inputDataset = dataset
        cfg.Data.splitting = 'FileBased'
        cfg.Data.unitsPerJob = 5
        cfg.Site.storageSite = 'T2_CH_CERN'
        cfg.Debug.timeScale = 500
        crabCommand('submit', config=cfg, dryrun=True)
    for name in samples:
        for attempt in (1, 2):
            try:
                print(name, attempt, crabCommand('proceed', dir='crab_projects/crab_dry_' + name))
            except ClientException as e:
                print(name, attempt, type(e).__name__, e)
"""


def test_a_multicrab_script_dry_runs_its_configs_then_proceeds_with_crab_command(tmp_path, state):
    """crabCommand('submit', config=cfg, dryrun=True) then crabCommand('proceed', dir=...) submits
    each task the dry run left UPLOADED, returning crab proceed's dictionary; a second proceed is
    refused with CRAB server's message, which reaches the script as crab's RESTInterfaceException."""
    (tmp_path / "pset.py").write_text("")
    (tmp_path / "multicrab.py").write_text(MULTICRAB_DRYRUN.format(dataset=MC))
    run = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", cwd=tmp_path)
    assert run.returncode == 0 and run.stderr == "", run.stdout + run.stderr
    lines = run.stdout.splitlines()
    for name in ("ZMM", "ZEE"):
        task = task_row(state, f"dry_{name}", tmp_path)["name"]
        assert f"{name} 1 {{'status': 'SUCCESS', 'commandStatus': 'SUCCESS'}}" in lines, run.stdout
        assert (f"{name} 2 RESTInterfaceException crabCommand('proceed'): Can only proceed if task is in the UPLOADED "
                f"status, but it is in the NEW status ({task}: crab proceed continues a task submitted with "
                f"--dryrun).") in lines, run.stdout
        wait_until(f"dry_{name}'s 4 jobs, as the dry run split it",
                   lambda: len(task_status(state, f"dry_{name}", tmp_path)["jobs"]) == 4)
    assert lines[-1] == (f"{tmp_path / 'multicrab.py'}: 2 config(s) dry run: dry_ZMM, dry_ZEE; "
                         "crabCommand('proceed') submitted dry_ZMM, dry_ZEE.")
    log = (tmp_path / "crab_projects" / "crab_dry_ZMM" / "crab.log").read_text()
    assert "task proceed --dir crab_projects/crab_dry_ZMM" in log


def test_a_scripts_dry_run_with_automatic_splitting_raises_configuration_exception(tmp_path, state):
    """CRAB's client refuses --dryrun with Automatic splitting in its validateConfig, so a script's
    crabCommand('submit', config=config, dryrun=True) raises ConfigurationException, which the
    script's except ConfigurationException catches."""
    (tmp_path / "pset.py").write_text("")
    (tmp_path / "multicrab.py").write_text(textwrap.dedent(f"""\
        from CRABAPI.RawCommand import crabCommand
        from CRABClient.ClientExceptions import ConfigurationException
        from CRABClient.UserUtilities import config

        if __name__ == '__main__':
            cfg = config()
            cfg.General.requestName = 'auto_dry'
            cfg.JobType.psetName = 'pset.py'
            cfg.Data.inputDataset = '{MC}'
            cfg.Site.storageSite = 'T2_CH_CERN'
            try:
                crabCommand('submit', config=cfg, dryrun=True)
            except ConfigurationException as e:
                print('Invalid configuration:', e)
        """))
    run = crabtui(state, "task", "submit", "--multicrab", "multicrab.py", cwd=tmp_path)
    assert run.stdout.startswith(f"Invalid configuration: {tmp_path / 'multicrab.py'}: The 'dryrun' option is not "
                                 "compatible with the 'Automatic' splitting mode (default)."), run.stdout + run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "crab_projects").exists()


def test_a_script_submitting_with_wait_waits_as_crab_submit_wait_does(tmp_path, state):
    """crabCommand('submit', config=config, wait=True) is crab submit --wait from a script: the call
    returns once the task worker has processed the task, having printed its status as it changed."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "submit_wait.py").write_text(crab_config_py("zee_wait", scale=0.5) + textwrap.dedent("""\
        from CRABAPI.RawCommand import crabCommand
        res = crabCommand('submit', config=config, wait=True)
        print('returned', res['requestname'])
        """))
    done = crabtui(state, "task", "submit", "submit_wait.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\nWaiting for task to be processed\nTask status: ") == 1, done.stdout
    assert "\nTask status: SUBMITTED\nSuccess: Your task has been processed and your jobs have been submitted " \
           "successfully.\nreturned zee_wait\n" in done.stdout, done.stdout
    assert task_row(state, "zee_wait", tmp_path)["status"] == "SUBMITTED"  # when the call returned, not later


def test_crab_command_lines_as_users_paste_them(tmp_path, state):
    """Parameters alone read crabConfig.py (crab's validateSubmitOptions), --wait waits until the task
    worker has submitted the task, as crab's checkStatusLoop does, crab tasks' options filter the list, and options and commands crab has not (status --idle), no longer
    has (resubmit --force, --numcores) or that mean nothing here (checkwrite) are refused in one line saying what to do."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("wgamma", scale=0.5))  # stays SUBMITTED
    done = crabtui(state, "task", "submit", "--wait", "General.requestName=wgamma_5", "Data.unitsPerJob=5",
                   cwd=tmp_path)
    assert done.returncode == 0 and "Task name: " in done.stdout, done.stderr
    assert "\nWaiting for task to be processed\n" in done.stdout and done.stdout.endswith(
        "\nTask status: SUBMITTED\nSuccess: Your task has been processed and your jobs have been submitted "
        "successfully.\n"), done.stdout
    assert task_row(state, "wgamma_5", tmp_path)["status"] == "SUBMITTED"  # at once, not a while after
    name = wait_status(state, "wgamma_5", tmp_path, "SUBMITTED")["name"]
    listed = crabtui(state, "task", "tasks", "--days=3", "--status=SUBMITTED", cwd=tmp_path)
    assert listed.returncode == 0 and name in listed.stdout, listed.stderr
    assert crabtui(state, "task", "list", "--days=3", "--status=KILLED", cwd=tmp_path).stdout.startswith(
        "No tasks found from ")
    assert name not in crabtui(state, "task", "list", "--fromdate=2099-01-01", cwd=tmp_path).stdout
    for args, message in (
            (["list", "--status=DONE"], "ERROR: Please enter a valid task status. Valid task statuses are: WAITING, "),
            (["list", "--fromdate=2026-1-1"], "ERROR: Please enter date with format 'YYYY-MM-DD'. Example: crabtui "
                                               f"--state-dir {state.path} task tasks --fromdate=2014-01-01\n"),
            (["list", "--days=3", "--fromdate=2026-01-01"], "ERROR: Options --fromdate and --days cannot be used "
                                                             "together."),
            (["status", "wgamma_5", "--long", "--idle"], "ERROR: crab status has no --idle option; the idle jobs"),
            (["resubmit", "wgamma_5", "--jobids=1,3-5", "--force", "--siteblacklist=T2_US_*"],
             "ERROR: crab resubmit's --force (resubmit finished jobs) was removed from CRAB in 2025"),
            (["resubmit", "wgamma_5", "--jobids", "2", "--numcores", "4"],
             "ERROR: crab resubmit's --numcores was removed from CRAB in 2025"),
            (["resubmit", "wgamma_5", "--jobids"],  # the value forgotten: the help to see is resubmit's
             "ERROR: Option '--jobids' requires an argument; see 'crabtui task resubmit --help'\n"),
            (["resubmit", "wgamma_5", "--jobids", "4-2"],  # crab would take every failed job
             "ERROR: The command line option --jobids has the range 4-2, whose first id is above its last: write "
             "it 2-4.\n"),
            (["status", "wgamma_5", "--long", "--jobids", "1,4-2"],
             "ERROR: The command line option --jobids has the range 4-2, whose first id is above its last: write "
             "it 2-4.\n"),
            (["kill", "wgamma_5", "--killwarning"],
             "ERROR: Option '--killwarning' requires an argument; see 'crabtui task kill --help'\n"),
            (["checkwrite", "--site=T2_CH_CERN"], "ERROR: crab checkwrite checks that your grid proxy may write"),
            (["checkusername"], "ERROR: crab checkusername reads your CMS user name from your grid certificate")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode == 1 and refused.stderr.startswith(message), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)
    long = crabtui(state, "task", "status", "wgamma_5", "--long", "--sort=exitcode", cwd=tmp_path)
    assert long.returncode == 0 and "Extended Job Status Table" in long.stdout, long.stderr
    assert crabtui(state, "task", "kill", name, cwd=tmp_path).returncode == 0


def test_crab3commands_options_crab_has_dropped_say_what_to_do_and_crab_version_answers(tmp_path, state):
    """crab --version prints the version; crab kill --jobids (removed in 2017) and crab report --dbs
    (removed in v3.3.1603), as older CRAB3Commands pages type them, are refused in one line saying
    what to do, and crab preparelocal's refusal names the option that shows a task's directory."""
    version = crabtui(state, "task", "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("crabtui, version "), version.stderr
    for args, message in (
            (["kill", "-d", "crab_projects/crab_tutorial", "--jobids", "1,3-5"],
             "ERROR: crab kill's --jobids (kill single jobs) was removed from CRAB in 2017"),
            (["report", "-d", "crab_projects/crab_tutorial", "--dbs=yes"],
             "ERROR: CRAB command option error: the option --dbs has been deprecated since CRAB v3.3.1603; drop it"),
            (["preparelocal", "-d", "crab_projects/crab_tutorial", "--jobid", "1", "--destdir", "/tmp/local"],
             "ERROR: crab preparelocal prepares a job to run on this machine; crabtui's jobs already run here, and "
             "each job's files are in its task directory ('task status TASK --json' gives its task_dir)")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode == 1 and refused.stderr.startswith(message), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)


def test_crab_commands_listed_on_crab3commands_under_their_short_names(tmp_path, state):
    """CRAB3Commands lists checkwrite (chk), remake (rmk), uploadlog (uplog) and purge: each, as the
    tutorial types it, gets the one line that says what to do here, not 'No such command'."""
    for args, message in (
            (["chk", "--site=T2_CH_CERN"], "ERROR: crab checkwrite checks that your grid proxy may write"),
            (["rmk", "--task=180725_163437:username_crab_tutorial"], "ERROR: crab remake rebuilds a project directory"),
            (["uplog", "-d", "crab_projects/crab_tutorial"], "ERROR: crab uploadlog sends crab's log"),
            (["purge", "-d", "crab_projects/crab_tutorial", "--cache"], "ERROR: crab purge deletes a task's files")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode == 1 and refused.stderr.startswith(message), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)


def test_crab_commands_under_the_short_names_crabs_client_gives_them_today(tmp_path, state):
    """CRABClient's checkwrite is chkw (chk before it), checkdataset chkd and recover rec: each gets the
    one line that says what to do here, not 'No such command'."""
    for args, message in ((["chkw", "--site=T2_CH_CERN"], "ERROR: crab checkwrite checks that your grid proxy"),
                          (["chkd", "--dataset=/Muon0/Run2023C-PromptReco-v1/AOD"], "ERROR: crab checkdataset asks"),
                          (["rec", "-d", "crab_projects/crab_tutorial"], "ERROR: crab recover submits a recovery task")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode == 1 and refused.stderr.startswith(message), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)


def test_crabs_own_options_before_the_command_say_to_drop_them(tmp_path, state):
    """crab -q status and crab --debug submit (crab's options before the command) are refused in one
    line saying to drop them, with the command line that works."""
    for args, message in ((["-q", "status", "-d", "crab_projects/crab_tutorial"], "crab's -q (given before the "
                           "command) sets how much crab prints"),
                          (["--debug", "submit", "-c", "crabConfig.py"], "crab's --debug (given before the command)")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode == 1 and refused.stderr.startswith("ERROR: " + message), (args, refused.stderr)
        assert f" task {args[1]} ...')" in refused.stderr.split("drop it ('crabtui")[1]
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)


def test_a_project_directory_before_the_command_is_put_after_it(tmp_path, state):
    """task -d crab_projects/crab_tutorial status (the directory before the command, where crab's -d
    is --debug) is refused with the command line that works, not with one that names the directory
    as the command."""
    refused = crabtui(state, "task", "-d", "crab_projects/crab_tutorial", "status", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("ERROR: crab's -d (given before the command) is its --debug"), refused.stderr
    assert refused.stderr.endswith(" task status -d crab_projects/crab_tutorial ...')\n"), refused.stderr


def test_getoutput_options_for_grid_transfers_say_what_to_do(tmp_path, state):
    """CRAB3Commands' crab getoutput --xrootd, --parallel and --wait, and getlog --command, typed as
    there, are refused in one line naming the option and what to do here (--dump for the paths)."""
    for args, message in (
            (["getoutput", "-d", "crab_projects/crab_tutorial", "--xrootd", "--jobids=1"],
             "ERROR: crab getoutput's --xrootd prints the files' XRootD URLs; crabtui's files are on this machine: "
             "--dump gives each one's path (PFN) and LFN\n"),
            (["out", "-d", "crab_projects/crab_tutorial", "--parallel=10", "--wait=4000"],
             "ERROR: crab getoutput's --parallel sets how many grid transfers run at once"),
            (["getlog", "--dir=crab_projects/crab_tutorial", "--command=LCG", "--jobids=1"],
             "ERROR: crab getlog's --command chooses the grid copy tool (LCG or GFAL)")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode == 1 and refused.stderr.startswith(message), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)


def test_crab_submit_options_misspelt_are_refused_as_crab_refuses_them(tmp_path, state):
    """crab submit --dry-run (crab's is --dryrun) or --skipestimates before the configuration is no
    option of crab submit's: refused in one line naming it and the options submit takes, not read
    as the configuration's file name; nothing is submitted and no project directory made."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("misspelt", scale=0.5))
    for args in (["--dry-run", "crabConfig.py"], ["--skipestimates", "--dryrun"], ["--sitename", "T2_CH_CERN"],
                 ["-n", "crabConfig.py"]):
        refused = crabtui(state, "task", "submit", *args, cwd=tmp_path)
        name = args[0]
        assert refused.returncode == 1 and refused.stderr.startswith(
            f"ERROR: no such option: {name}; task submit takes -c/--config, --dryrun, --skip-estimates, --wait"), \
            (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)
    assert not (tmp_path / "crab_projects").exists()


def test_long_options_shortened_as_crabs_optparse_takes_them(tmp_path, state):
    """crab's commands parse their options with optparse, which takes any unambiguous prefix of a long
    option (crab status --verbose, crab getoutput --jobid 1): so does crabtui; an ambiguous one is
    refused in optparse's words, and options crab no longer has are not completed."""
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("wgamma", scale=0.5))  # stays SUBMITTED
    for args in (["--dry", "General.requestName=wgamma_dry"], ["General.requestName=wgamma_dry5", "Data.unitsPerJob=5",
                                                               "--dry"]):  # crab submit --dry is --dryrun, also after parameters
        done = crabtui(state, "task", "submit", *args, cwd=tmp_path)
        assert done.returncode == 0 and "Dry run\n" in done.stdout and "task paused" in done.stdout, done.stderr
    assert crabtui(state, "task", "submit", cwd=tmp_path).returncode == 0
    wait_status(state, "wgamma", tmp_path, "SUBMITTED")
    long = crabtui(state, "task", "status", "-d", "crab_wgamma", "--verbose", "--lo", "--jobid=1", "--sort", "state",
                   cwd=tmp_path)
    assert long.returncode == 0 and "Extended Job Status Table" in long.stdout, long.stderr
    assert json.loads(crabtui(state, "task", "status", "crab_wgamma", "--js", cwd=tmp_path).stdout)["jobs"]
    for args, message in (
            (["status", "crab_wgamma", "--s"], "ERROR: ambiguous option: --s (--sort, --summary?); see 'crabtui task "
                                               "status --help'\n"),
            (["resubmit", "crab_wgamma", "--site", "T2_CH_CERN"], "ERROR: ambiguous option: --site (--siteblacklist, "
                                                                  "--sitewhitelist?); see 'crabtui task resubmit"),
            (["resubmit", "crab_wgamma", "--fo"], "ERROR: no such option: --fo; task resubmit takes -d/--dir"),  # gone
            (["resubmit", "crab_wgamma", "--maxmem", "3000"], "ERROR: Found no jobs to resubmit.")):
        refused = crabtui(state, "task", *args, cwd=tmp_path)
        assert refused.returncode != 0 and refused.stderr.startswith(message), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and refused.stdout == "", (args, refused.stdout)
    assert crabtui(state, "task", "kill", "--dir", "crab_wgamma", "--killw", "moved", cwd=tmp_path).returncode == 0


def test_an_option_crab_has_not_is_refused_with_the_options_the_command_takes(tmp_path, state):
    """crab status has no --sitename (its optparse says "no such option"): the refusal lists what
    task status takes, not click's look-alike ('Did you mean --instance?')."""
    refused = crabtui(state, "task", "status", "--sitename", "T2_CH_CERN", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout
    assert refused.stderr == ("ERROR: no such option: --sitename; task status takes -d/--dir, --task, --instance, "
                              "--proxy, --long, --sort, --jobids, --summary, --verboseErrors, --json, --backend; "
                              "see 'crabtui task status --help'\n"), refused.stderr
    short = crabtui(state, "task", "st", "--sitename=T2_CH_CERN", cwd=tmp_path)  # short name, value after '='
    assert short.stderr.startswith("ERROR: no such option: --sitename; task status takes -d/--dir"), short.stderr


TUTORIAL = """from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'tutorial_Aug2021_MC_analysis'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset_tutorial_analysis.py'

config.Data.inputDataset = '/DYJetsToLL_M-50_TuneCUETP8M1_13TeV-madgraphMLM-pythia8/RunIISummer16MiniAODv2-PUMoriond17_80X_mcRun2_asymptotic_2016_TrancheIV_v6_ext1-v2/MINIAODSIM'
config.Data.inputDBS = 'global'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 10
config.Data.totalUnits = 30
config.Data.publication = True
config.Data.outputDatasetTag = 'CRAB3_tutorial_Aug2021_MC_analysis'

config.Site.storageSite = "T2_CH_CERN"
"""


def test_a_tutorial_config_whose_jobs_take_hours_of_real_time_says_so_and_how_to_go_faster(tmp_path, state):
    """The CRAB3 tutorial's crabConfig.py as it is: its 10-file MINIAODSIM jobs are simulated at
    the grid's pace in real time, hours each, which the task's message says with the knob."""
    (tmp_path / "pset_tutorial_analysis.py").write_text("import FWCore.ParameterSet.Config as cms\n")
    (tmp_path / "crabConfig_tutorial_MC_analysis.py").write_text(TUTORIAL)
    submitted = crabtui(state, "task", "submit", "-c", "crabConfig_tutorial_MC_analysis.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    status = wait_status(state, "tutorial_Aug2021_MC_analysis", tmp_path, "SUBMITTED")
    assert re.fullmatch(r"3 jobs; the largest reads [\d,]+ events, about \d+\.\d h of real time at 10 events/s: "
                        r"set Debug\.timeScale \(simulated seconds per real second\) to go faster", status["message"]), \
        status["message"]
    listed = crabtui(state, "task", "list", cwd=tmp_path).stdout
    assert "of real time" in listed
    assert crabtui(state, "task", "kill", "tutorial_Aug2021_MC_analysis", cwd=tmp_path).returncode == 0


def test_the_advanced_tutorials_script_runs_cmsrun_and_its_output_is_retrieved(tmp_path, state):
    """CRAB3AdvancedTutorial's user script runs 'cmsRun -j FrameworkJobReport.xml -p PSet.py' between
    two echoes: cmsRun is on its PATH, as CMSSW's is on CRAB's worker nodes, so the job processes its
    input, crab report counts it, and crab getoutput retrieves output_1.root (without it the job
    'succeeded' with the shell's 'cmsRun: not found', and there was nothing to retrieve)."""
    (tmp_path / "pset_tutorial_analysis.py").write_text("import FWCore.ParameterSet.Config as cms\n"
                                                       "process = cms.Process('NoSplit')\n")
    (tmp_path / "myscript.sh").write_text(textwrap.dedent("""\
        #!/bin/sh
        echo "================= CMSRUN starting ===================="
        cmsRun -j FrameworkJobReport.xml -p PSet.py
        echo "================= CMSRUN finished ===================="
        """))
    (tmp_path / "myscript.sh").chmod(0o755)
    (tmp_path / "crabConfig.py").write_text(textwrap.dedent(f"""\
        from CRABClient.UserUtilities import config
        config = config()

        config.General.requestName = 'tutorial_script'
        config.General.workArea = 'crab_projects'
        config.General.transferOutputs = True

        config.JobType.pluginName = 'Analysis'
        config.JobType.psetName = 'pset_tutorial_analysis.py'
        config.JobType.scriptExe = 'myscript.sh'

        config.Data.inputDataset = '{MC}'
        config.Data.splitting = 'FileBased'
        config.Data.unitsPerJob = 1
        config.Data.totalUnits = 1
        config.Data.publication = False

        config.Site.storageSite = 'T2_CH_CERN'
        """))
    submitted = crabtui(state, "task", "submit", "-c", "crabConfig.py", "Debug.timeScale=2000", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    wait_status(state, "tutorial_script", tmp_path, "COMPLETED", timeout=120)
    report = crabtui(state, "task", "report", "-d", "crab_projects/crab_tutorial_script", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "  Number of files processed: 1\n" in report.stdout, report.stdout
    assert re.search(r"^  Number of events read: [1-9]\d*$", report.stdout, re.M), report.stdout
    got = crabtui(state, "task", "getoutput", "-d", "crab_projects/crab_tutorial_script", cwd=tmp_path)
    assert got.returncode == 0 and "Success: Success in retrieving output_1.root" in got.stdout, got.stdout
    assert (tmp_path / "crab_projects" / "crab_tutorial_script" / "results" / "output_1.root").is_file()
    log = crabtui(state, "task", "getlog", "-d", "crab_projects/crab_tutorial_script", "--short", cwd=tmp_path)
    assert log.returncode == 0, log.stderr
    text = (tmp_path / "crab_projects" / "crab_tutorial_script" / "results" / "job_out.1.0.txt").read_text()
    assert "CMSRUN starting" in text and "events in" in text and "CMSRUN finished" in text, text


def test_total_units_counts_the_blocks_the_site_lists_skip_as_crab_splits_before_it_skips(tmp_path, state):
    """CRAB's Splitter splits every block of the input, Data.totalUnits counting them all (its share
    and its cap), and DagmanCreator then skips the jobs of blocks the site lists leave no site,
    numbering the others on: a test task on a share of a dataset keeps the same jobs whatever the
    blacklist takes away, rather than making up the units elsewhere."""
    (tmp_path / "pset.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('Ana')\n")
    # the small MC dataset: block 1 (10 files) at T2_CH_CERN, T2_DE_DESY, T2_XX_Local; block 2 (10) at
    # T2_IT_Pisa, T2_XX_Local
    (tmp_path / "crabConfig.py").write_text(crab_config_py("half_ttbar", scale=500, more=textwrap.dedent("""\
        config.Data.unitsPerJob = 2
        config.Data.totalUnits = 0.5
        config.Site.blacklist = ['T2_IT_Pisa', 'T2_XX_Local']
        """)))
    half = crabtui(state, "task", "submit", "--dryrun", "crabConfig.py", cwd=tmp_path)
    assert half.returncode == 0, half.stderr
    assert "were skipped because they are only present at blacklisted" in half.stdout, half.stdout
    # half of the 20 files are block 1's 10: 5 jobs (the share was taken of the 10 files left, 3 jobs)
    assert "Task consists of 5 jobs to process 10 files\n" in half.stdout, half.stdout
    # the cap reaches past the skipped block 1 into block 2: 4 of its files, jobs numbered from 1
    first = crabtui(state, "task", "submit", "--dryrun", "crabConfig.py", "General.requestName=first_ttbar",
                    "Data.totalUnits=14", "Site.blacklist=['T2_CH_CERN', 'T2_DE_DESY', 'T2_XX_Local']", cwd=tmp_path)
    assert "Task consists of 2 jobs to process 4 files\n" in first.stdout, first.stdout + first.stderr
    proceed = crabtui(state, "task", "proceed", "-d", "crab_first_ttbar", cwd=tmp_path)
    assert proceed.returncode == 0, proceed.stderr
    name = re.findall(r"^Task name: (\S+)$", first.stdout, re.M)[0]
    wait_status(state, name, tmp_path, "SUBMITTED")
    jobs = task_status(state, name, tmp_path)["jobs"]
    assert sorted(j["id"] for j in jobs) == ["1", "2"], "the task worker splits as the dry run"
    cut = crabtui(state, "task", "submit", "--dryrun", "crabConfig.py", "General.requestName=cut_ttbar",
                  "Data.totalUnits=10", "Site.blacklist=['T2_CH_CERN', 'T2_DE_DESY', 'T2_XX_Local']", cwd=tmp_path)
    assert cut.returncode == 1 and cut.stderr.count("\n") == 1, cut.stdout + cut.stderr
    assert "the first 10 files of Data.totalUnits are all in blocks the site lists leave" in cut.stderr, cut.stderr


def test_out_lfn_dir_base_and_output_dataset_tag_name_the_outputs_directory_as_in_crab(tmp_path, state):
    """CRAB stages a job's output to <outLFNDirBase>/<primary dataset>/<outputDatasetTag>/<time>/0000/,
    whether or not it is published: a group's area and a tag are where the user looks for the files."""
    (tmp_path / "pset.py").write_text("import FWCore.ParameterSet.Config as cms\nprocess = cms.Process('Ana')\n")
    (tmp_path / "crabConfig.py").write_text(crab_config_py("dijet_ntuples", scale=500, more=textwrap.dedent("""\
        config.General.workArea = 'crab_projects'
        config.Data.totalUnits = 5
        config.Data.publication = False
        config.Data.outLFNDirBase = '/store/group/phys_exotica/dijet/'
        config.Data.outputDatasetTag = 'Ntuples_v2'
        """)))
    submitted = crabtui(state, "task", "submit", "crabConfig.py", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    assert "outLFNDirBase" not in submitted.stdout and "outputDatasetTag" not in submitted.stdout, submitted.stdout
    name = re.findall(r"^Task name: (\S+)$", submitted.stdout, re.M)[0]
    wait_status(state, name, tmp_path, "COMPLETED")
    dumped = crabtui(state, "task", "getoutput", "--dump", "-d", "crab_projects/crab_dijet_ntuples", cwd=tmp_path)
    assert dumped.returncode == 0, dumped.stderr
    time = name.split(":")[0]
    assert f"   LFN: /store/group/phys_exotica/dijet/TTbar_TuneCP5_13p6TeV/Ntuples_v2/{time}/0000/output_1.root" \
        in dumped.stdout.splitlines(), dumped.stdout
    got = crabtui(state, "task", "getoutput", "-d", "crab_projects/crab_dijet_ntuples", cwd=tmp_path)
    assert got.returncode == 0 and (tmp_path / "crab_projects/crab_dijet_ntuples/results/output_1.root").is_file()
    dotted = crabtui(state, "task", "submit", "crabConfig.py", "General.requestName=dotted", "Data.outputDatasetTag=v1.0",
                     cwd=tmp_path)  # a dataset's processed name has no dot
    assert dotted.returncode == 1 and dotted.stderr.count("\n") == 1, dotted.stdout + dotted.stderr
    assert "Invalid CRAB configuration parameter Data.outputDatasetTag." in dotted.stderr, dotted.stderr
