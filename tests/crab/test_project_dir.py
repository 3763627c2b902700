"""crab's project directory as crab users use it: ``crab submit`` makes
``General.workArea/crab_<requestName>``; ``crab status -d DIR`` finds the task from anywhere; ``crab
report``, ``crab getoutput`` and ``crab getlog`` write into its ``results/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from crab_tasks import MC, crab_config_py, crabtui, task_row, wait_status

from engine.state import StateDir
from installed import CRABTUI

WORK_AREA = "config.General.workArea = 'crab_projects'\n"
JOB_2_FAILS = "config.Debug.failurePlan = [{'job': '2', 'attempt': '*', 'exitCode': 8006}]\n"


def _analysis(tmp_path: Path, name: str, more: str = WORK_AREA) -> Path:
    """An analysis directory with its crabConfig.py and pset, as users keep them."""
    here = tmp_path / "analysis"
    here.mkdir(exist_ok=True)
    (here / "pset.py").write_text("# fake PSet\n")
    (here / "crabConfig.py").write_text(crab_config_py(name, scale=500, more=more))
    return here


def _bare(state: StateDir, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """crabtui as typed, without --state-dir: CRABTUI_STATE_DIR (or nothing) says which."""
    environ = {k: v for k, v in os.environ.items() if k not in ("CRABTUI_STATE_DIR", "CRABTUI_BACKEND")}
    return subprocess.run([CRABTUI, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**environ, "XDG_STATE_HOME": str(cwd / "xdg"), **(env or {})})


def test_submit_makes_the_project_directory_and_refuses_it_when_it_exists(tmp_path, state):
    here = _analysis(tmp_path, "dimuon")
    submitted = crabtui(state, "task", "submit", cwd=here)
    assert submitted.returncode == 0, submitted.stderr
    assert "\nProject dir: crab_projects/crab_dimuon\n" in submitted.stdout
    assert "'crabtui --state-dir " + state.path + " task status -d crab_projects/crab_dimuon'" in submitted.stdout
    project = here / "crab_projects" / "crab_dimuon"
    assert sorted(p.name for p in project.iterdir()) == [".requestcache", "crab.log", "inputs", "results"]
    assert (project / "inputs" / "crabConfig.py").read_text() == (here / "crabConfig.py").read_text()
    record = json.loads((project / ".requestcache").read_text())
    name = submitted.stdout.split("Task name: ")[1].split("\n")[0]
    assert (record["RequestName"], record["StateDir"], record["Backend"]) == (name, state.path, "embedded")
    assert (project / "crab.log").read_text().endswith(
        f": in {here}: crabtui --state-dir {state.path} task submit\n")

    again = crabtui(state, "task", "submit", "crabConfig.py", cwd=here)  # crab refuses: the directory is there
    assert again.returncode == 1 and again.stderr == (
        f"ERROR: {here / 'crabConfig.py'}: General.requestName: Working area '{project}' already exists; please "
        "change the requestName in the config file (or General.workArea), or remove that directory\n")
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=here).stdout)
    assert [t["name"] for t in listed] == [name], "nothing was submitted"
    assert json.loads((project / ".requestcache").read_text())["RequestName"] == name

    time.sleep(1 - time.time() % 1)  # task names carry the second of their submission
    other = crabtui(state, "task", "submit", "crabConfig.py", "General.workArea=crab_v2", cwd=here)
    assert other.returncode == 0 and "\nProject dir: crab_v2/crab_dimuon\n" in other.stdout, other.stderr
    second = json.loads((here / "crab_v2" / "crab_dimuon" / ".requestcache").read_text())["RequestName"]
    for directory, task in ((project, name), (here / "crab_v2" / "crab_dimuon", second)):
        shown = crabtui(state, "task", "status", "-d", str(directory), cwd=tmp_path)  # two of one requestName
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(f"CRAB project directory:\t\t{directory}\nTask name:\t\t\t{task}\n")
    log = [line.split(": ", 2)[2] for line in (project / "crab.log").read_text().splitlines()]
    assert log[0] == f"crabtui --state-dir {state.path} task submit"
    assert f"crabtui --state-dir {state.path} task status -d {project}" in log
    assert not any("crab_v2" in line for line in log), "the other task's commands are in its own crab.log"


def test_work_area_unset_absolute_and_a_refused_submission(tmp_path, state):
    here = _analysis(tmp_path, "zmumu", more="")  # no workArea: crab makes crab_<requestName> right here
    assert crabtui(state, "task", "submit", cwd=here).returncode == 0
    assert (here / "crab_zmumu" / ".requestcache").is_file()
    elsewhere = tmp_path / "scratch" / "projects"  # absolute, and missing: made, as crab makes it
    (here / "crab_abs.py").write_text(crab_config_py("wjets", scale=500,
                                                     more=f"config.General.workArea = '{elsewhere}'\n"))
    done = crabtui(state, "task", "submit", "-c", "crab_abs.py", cwd=here)
    assert done.returncode == 0 and f"\nProject dir: {elsewhere}/crab_wjets\n" in done.stdout, done.stderr
    assert (elsewhere / "crab_wjets" / "results").is_dir()

    (here / "crab_bad.py").write_text(crab_config_py("nowhere", scale=500, more=WORK_AREA +
                                                     "config.Site.whitelist = ['T2_XX_Nowhere']\n"))
    refused = crabtui(state, "task", "submit", "crab_bad.py", cwd=here)
    assert refused.returncode == 1 and "Site.whitelist" in refused.stderr and refused.stderr.count("\n") == 1
    assert not (here / "crab_projects" / "crab_nowhere").exists(), "a refused submission leaves no directory"
    (here / "crab_bad.py").write_text(crab_config_py("nowhere", scale=500, more=WORK_AREA))
    assert crabtui(state, "task", "submit", "crab_bad.py", cwd=here).returncode == 0  # fixed, submitted as it is


def test_a_work_area_that_cannot_be_made_is_refused_naming_general_work_area(tmp_path, state):
    """A config written on lxplus (workArea under /afs, or a file of that name here) is refused in
    one line naming General.workArea, the parameter to change, not General.requestName."""
    here = _analysis(tmp_path, "afs", more="config.General.workArea = 'crab_projects'\n")
    (here / "crab_projects").write_text("notes\n")
    refused = crabtui(state, "task", "submit", cwd=here)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith(f"ERROR: {here / 'crabConfig.py'}: General.workArea: cannot make the work area "
                                     f"{here / 'crab_projects'}: a file is in the way; set General.workArea to a "
                                     "directory you can write to"), refused.stderr


def test_a_project_directory_names_its_state_directory_from_anywhere(tmp_path, state):
    here = _analysis(tmp_path, "ttbar_sd")
    assert _bare(state, "task", "submit", cwd=here, env={"CRABTUI_STATE_DIR": state.path}).returncode == 0
    project = here / "crab_projects" / "crab_ttbar_sd"
    away = tmp_path / "away"
    away.mkdir()
    # no --state-dir, no CRABTUI_STATE_DIR: the record says where the task lives, as crab's says its server
    shown = _bare(state, "task", "status", "-d", str(project), cwd=away)
    assert shown.returncode == 0 and "Task name:\t\t\t" in shown.stdout, shown.stderr
    relative = _bare(state, "task", "st", os.path.relpath(project, away), cwd=away)  # a positional path
    assert relative.returncode == 0, relative.stderr
    beside = _bare(state, "task", "st", "crab_ttbar_sd", cwd=project.parent)  # crab status crab_ttbar_sd
    assert beside.returncode == 0 and "Task name:\t\t\t" in beside.stdout, beside.stderr
    other = StateDir(str(tmp_path / "other"))
    refused = _bare(state, "--state-dir", other.path, "task", "status", "-d", str(project), cwd=away)
    name = json.loads((project / ".requestcache").read_text())["RequestName"]
    assert refused.returncode == 1 and refused.stderr == (
        f"ERROR: {project}: task {name} lives in state directory {state.path}, not in --state-dir {other.path}; "
        f"give --state-dir {state.path}, or leave --state-dir out\n")
    assert not os.path.exists(other.path), "the refused command started nothing there"


def test_a_path_that_is_not_a_project_directory_is_named_in_one_line(tmp_path, state):
    plain = tmp_path / "crab_projects" / "crab_plain"
    plain.mkdir(parents=True)
    (tmp_path / "notes.txt").write_text("x\n")
    how = "give the directory task submit printed as 'Project dir:', or the task's name\n"
    for args, message in (
            (["-d", "crab_projects/crab_plain"],
             f"ERROR: crab_projects/crab_plain is not a valid CRAB project directory: it has no .requestcache; {how}"),
            (["-d", "notes.txt"], f"ERROR: notes.txt is not a valid CRAB project directory: it is not a directory; {how}"),
            (["crab_projects/crab_gone"], "ERROR: crab_projects/crab_gone is not a valid CRAB project directory "
                                          "(there is no such directory) and there is no task 'gone'; see "
                                          "'crabtui task list'\n")):
        shown = crabtui(state, "task", "status", *args, cwd=tmp_path)
        assert (shown.returncode, shown.stderr) == (1, message), args


def test_report_getoutput_and_getlog_fill_results_as_crab_users_find_them(tmp_path, state):
    here = _analysis(tmp_path, "zmm_out", more=WORK_AREA + JOB_2_FAILS)
    assert crabtui(state, "task", "submit", cwd=here).returncode == 0
    status = wait_status(state, "zmm_out", here, "FAILED")
    results = here / "crab_projects" / "crab_zmm_out" / "results"
    assert status["project_dir"] == str(results.parent)
    report = crabtui(state, "task", "report", "-d", "crab_projects/crab_zmm_out", cwd=here)
    assert report.returncode == 0 and f"Will put report files in directory {results}\n" in report.stdout
    assert (results / "processedLumis.json").is_file()

    away = tmp_path / "away"
    away.mkdir()
    got = crabtui(state, "task", "getoutput", "-d", str(results.parent), cwd=away)
    assert got.returncode == 0, got.stderr
    finished = sorted(j["id"] for j in status["jobs"] if j["state"] == "finished")
    names = [f"output_{i}.root" for i in finished]
    assert got.stdout.splitlines() == [f"Setting the destination to {results}", f"Retrieving {len(names)} files",
                                       *[f"Success: Success in retrieving {n}" for n in names],
                                       "Success: All files successfully retrieved"]
    dumped = crabtui(state, "task", "out", "--dump", "--jobids", "1", str(results.parent), cwd=away)  # short name
    lines = dumped.stdout.splitlines()
    assert lines[0] == "=== Files from job 1:" and lines[1].startswith("1) PFN: ")
    assert lines[2].startswith("   LFN: /store/user/") and "/crab_zmm_out/" in lines[2]
    assert lines[2].endswith("/0000/output_1.root")
    assert (results / "output_1.root").read_bytes() == Path(lines[1].split("PFN: ")[1]).read_bytes()
    again = crabtui(state, "task", "getoutput", "--jobids", "1-2", "-d", str(results.parent), cwd=away)
    assert again.stdout.splitlines()[2] == f"Skipping output_1.root as file already exists in {results}"
    one = crabtui(state, "task", "getoutput", "--quantity", "1", "--outputpath", "mine", "--checksum", "no",
                  "-d", str(results.parent), cwd=away)
    assert one.returncode == 0 and sorted(os.listdir(away / "mine")) == [names[0]], one.stderr
    every = crabtui(state, "task", "getoutput", "--quantity=-1", "--dump", "-d", str(results.parent), cwd=away)
    assert every.returncode == 0 and every.stdout.count(") PFN: ") == len(names), every.stderr  # crab's -1 is all
    none = crabtui(state, "task", "getoutput", "--quantity", "0", "--outputpath", "none", "-d", str(results.parent),
                   cwd=away)  # crab sends 0 on as the server's row limit: no row
    assert (none.returncode, none.stdout) == (0, "No files to retrieve.\n") and not (away / "none").exists(), none.stderr
    for args, error in ((["--jobids", "9"], "The job with id 9 is not in a valid state to retrieve output files"),
                        (["--jobids", "1,,3"], "The command line option --jobids takes a comma separated list"),
                        (["--checksum", "YES"], "You specified to use YES checksum. Only lowercase yes/no"),
                        (["--parallel", "4"], "crab getoutput's --parallel sets how many grid transfers run at once"),
                        (["--outputpath=gsiftp://eoscmsftp.cern.ch//eos/cms/store/user/me/zmm"],  # crab's grid copy
                         "--outputpath gsiftp://eoscmsftp.cern.ch//eos/cms/store/user/me/zmm is a storage URL, which "
                         "crab copies to with grid tools; crabtui copies the files on this machine: give --outputpath "
                         "a directory")):
        refused = crabtui(state, "task", "getoutput", *args, "-d", str(results.parent), cwd=away)
        assert refused.returncode == 1 and refused.stderr.startswith(f"ERROR: {error}"), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1
    assert not (away / "gsiftp:").exists()

    logs = crabtui(state, "task", "getlog", "-d", str(results.parent), "--jobids", "2", cwd=away)
    assert logs.returncode == 0, logs.stderr
    attempts = len(next(j for j in status["jobs"] if j["id"] == "2")["attempts"])
    assert sorted(p.name for p in results.glob("job_out.2.*.txt")) == [f"job_out.2.{r}.txt" for r in range(attempts)]
    assert (results / "job_out.2.0.txt").read_bytes() == (Path(status["task_dir"]) / "job_out.2.0.txt").read_bytes()
    assert crabtui(state, "task", "log", "--short", "--jobids", "1", "-d", str(results.parent),
                   cwd=away).returncode == 0


def test_getoutput_of_a_task_that_transfers_no_outputs_says_so_in_crabs_words(tmp_path, state):
    here = _analysis(tmp_path, "no_transfer", more=WORK_AREA + "config.General.transferOutputs = False\n"
                                                            "config.Data.publication = False\n")
    assert crabtui(state, "task", "submit", cwd=here).returncode == 0
    wait_status(state, "no_transfer", here, "COMPLETED")
    got = crabtui(state, "task", "getoutput", "-d", "crab_projects/crab_no_transfer", cwd=here)
    assert got.returncode == 0 and got.stdout == (
        "No files to retrieve. Files not transferred to storage since task configuration parameter "
        "General.transferOutputs is False.\n")
    assert MC in (here / "crab_projects" / "crab_no_transfer" / "inputs" / "crabConfig.py").read_text()


def test_a_moved_project_directory_is_used_where_it_is_and_a_removed_one_is_named(tmp_path, state):
    here = _analysis(tmp_path, "moved_mm")
    assert crabtui(state, "task", "submit", "-c", "crabConfig.py", cwd=here).returncode == 0
    wait_status(state, "moved_mm", here, "COMPLETED")
    moved = tmp_path / "big disk" / "crab_moved_mm"  # the user moves crab_projects' task somewhere roomier
    moved.parent.mkdir()
    (here / "crab_projects" / "crab_moved_mm").rename(moved)
    name = json.loads((moved / ".requestcache").read_text())["RequestName"]

    got = crabtui(state, "task", "getoutput", "-d", str(moved), "--jobids", "1-3", cwd=tmp_path)
    assert got.returncode == 0 and got.stdout.startswith(f"Setting the destination to {moved / 'results'}\n"), got
    assert sorted(os.listdir(moved / "results")) == ["output_1.root", "output_2.root", "output_3.root"]
    assert crabtui(state, "task", "report", "-d", str(moved), cwd=tmp_path).returncode == 0
    assert (moved / "results" / "processedLumis.json").is_file()
    assert "task getoutput -d" in (moved / "crab.log").read_text()
    by_name = crabtui(state, "task", "st", "moved_mm", cwd=tmp_path)  # the task's name finds it there from now on
    assert by_name.stdout.startswith(f"CRAB project directory:\t\t{moved}\n"), by_name.stdout
    assert task_row(state, "moved_mm", tmp_path)["project_dir"] == str(moved)

    old = crabtui(state, "task", "getlog", "-d", "crab_projects/crab_moved_mm", cwd=here)  # not into the state dir
    assert (old.returncode, old.stderr) == (1, (
        f"ERROR: crab_projects/crab_moved_mm is not a valid CRAB project directory (there is no such directory); task "
        f"{name} has its project directory at {moved}; give that directory, or the task's name\n"))
    shutil.rmtree(moved)
    gone = crabtui(state, "task", "status", "-d", str(moved), cwd=tmp_path)
    assert (gone.returncode, gone.stderr) == (1, (
        f"ERROR: {moved} is not a valid CRAB project directory (there is no such directory): task {name}'s project "
        f"directory was there and has been removed or moved; give the directory it is in now, or the task's name\n"))
    assert crabtui(state, "task", "status", "moved_mm", cwd=tmp_path).returncode == 0, "its name still reaches it"


def test_a_submit_killed_before_it_recorded_the_task_leaves_a_config_that_submits_again(tmp_path, state):
    """kill -9 of ``crab submit`` after it made the project directory and before the task was
    recorded: the next ``task submit`` of the same config takes the directory over and submits
    once, instead of refusing it as an existing work area."""
    import signal
    import sqlite3

    from crab_tasks import wait_until

    from engine.crab.taskworker.taskdb import TaskDB

    here = _analysis(tmp_path, "wprime_killed")
    project = here / "crab_projects" / "crab_wprime_killed"
    TaskDB(state.tasks).close()
    blocker = sqlite3.connect(state.tasks, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # the submission waits to record its task
    submit = subprocess.Popen([CRABTUI, "--state-dir", state.path, "task", "submit"], cwd=here,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until("the project directory", lambda: (project / "inputs").is_dir(), timeout=60)
        submit.send_signal(signal.SIGKILL)
        submit.wait(timeout=30)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert submit.returncode == -signal.SIGKILL
    assert not (project / ".requestcache").exists()

    again = crabtui(state, "task", "submit", cwd=here)
    assert again.returncode == 0, again.stderr
    assert "\nProject dir: crab_projects/crab_wprime_killed\n" in again.stdout
    name = again.stdout.split("Task name: ")[1].split("\n")[0]
    assert json.loads((project / ".requestcache").read_text())["RequestName"] == name
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=here).stdout)
    assert [t["name"] for t in listed] == [name]


def test_a_submit_killed_while_it_writes_the_directory_record_is_taken_up_by_the_next(tmp_path, state):
    """kill -9 of ``crab submit`` while it writes ``.requestcache`` (the task recorded, the record's
    temporary file not yet renamed): the next ``task submit`` of that config used to refuse the
    directory as an existing work area, the leftover counting as content."""
    import signal

    here = _analysis(tmp_path, "wprime_mid_record")
    assert crabtui(state, "pool", "start", cwd=here).returncode == 0  # the daemon without the crash point
    killed = crabtui(state, "task", "submit", cwd=here, env={"CRABTUI_CRASH_POINT": "replace:.requestcache"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    project = here / "crab_projects" / "crab_wprime_mid_record"
    assert not (project / ".requestcache").exists() and len(os.listdir(project)) == 3, "inputs, results, the part"

    again = crabtui(state, "task", "submit", cwd=here)
    assert again.returncode == 0, again.stderr
    assert "it is not submitted again" in again.stdout
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=here).stdout)
    assert len(listed) == 1, "one task, not two"
    assert json.loads((project / ".requestcache").read_text())["RequestName"] == listed[0]["name"]
    assert sorted(os.listdir(project)) == [".requestcache", "crab.log", "inputs", "results"]


def test_a_submit_killed_after_it_recorded_the_task_is_not_submitted_twice(tmp_path, state):
    """kill -9 of ``crab submit`` between recording the task and writing its project directory's
    record: the next ``task submit`` of that config completes the directory for that task and
    submits nothing more.  (The directory is put back as such a kill leaves it: the window is too
    short to hit on purpose.)"""
    here = _analysis(tmp_path, "wprime_recorded")
    first = crabtui(state, "task", "submit", cwd=here)
    assert first.returncode == 0, first.stderr
    name = first.stdout.split("Task name: ")[1].split("\n")[0]
    project = here / "crab_projects" / "crab_wprime_recorded"
    for left in (".requestcache", "crab.log", "inputs/crabConfig.py"):
        (project / left).unlink()
    (Path(task_row(state, name, here)["task_dir"]) / "project_dir").unlink()

    again = crabtui(state, "task", "submit", cwd=here)
    assert again.returncode == 0, again.stderr
    assert f"Task name: {name}\nProject dir: crab_projects/crab_wprime_recorded\n" in again.stdout
    assert "it is not submitted again" in again.stdout
    listed = json.loads(crabtui(state, "task", "list", "--json", cwd=here).stdout)
    assert [t["name"] for t in listed] == [name], "one task, not two"
    shown = crabtui(state, "task", "status", "-d", str(project), cwd=tmp_path)
    assert shown.returncode == 0 and f"Task name:\t\t\t{name}\n" in shown.stdout, shown.stderr


def test_crab_log_has_refused_commands_and_the_uis_kill_and_resubmit(tmp_path, state):
    from crabtui.snapshots import Backend
    from engine.crab.client.resubmit import request_arguments
    from engine.crab.taskworker.taskdb import TaskError

    here = _analysis(tmp_path, "logged", more=WORK_AREA + JOB_2_FAILS)
    assert crabtui(state, "task", "submit", cwd=here).returncode == 0
    wait_status(state, "logged", here, "FAILED")
    refused = crabtui(state, "task", "resubmit", "--force", "-d", "crab_projects/crab_logged", cwd=here)
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert crabtui(state, "task", "resubmit", "logged", "--maxmemory", "10", cwd=here).returncode == 1
    name = task_row(state, "logged", here)["name"]
    backend = Backend(state)
    backend.resubmit(name, request_arguments(jobids="2", maxmemory=3000))  # the UI's R, its form sent
    with pytest.raises(TaskError):  # the UI's K, answered Yes: refused while the resubmission is on its way
        backend.kill(name)
    log = [line.split(": ", 2)[2] for line in (here / "crab_projects" / "crab_logged" / "crab.log").read_text()
           .splitlines()]
    assert log[-4:] == [f"crabtui --state-dir {state.path} task resubmit --force -d crab_projects/crab_logged",
                        f"crabtui --state-dir {state.path} task resubmit logged --maxmemory 10",
                        f"crabtui --state-dir {state.path} task resubmit {name} --jobids 2 --maxmemory 3000",
                        f"crabtui --state-dir {state.path} task kill {name}"]


def test_a_command_refused_for_a_project_directory_it_cannot_find_is_logged_in_no_other_task(tmp_path, state):
    """``-d`` naming a directory that is no project (a typo, one removed) is refused; crab.log of
    the task submitted last, which the command did not name, does not get the line."""
    here = _analysis(tmp_path, "kept")
    assert crabtui(state, "task", "submit", cwd=here).returncode == 0
    log = here / "crab_projects" / "crab_kept" / "crab.log"
    before = log.read_text()
    (here / "notaproject").mkdir()
    for argv in (["status", "-d", "crab_projects/crab_kpet"], ["kill", "-d", "notaproject"],
                 ["resubmit", "--force", "-d", "crab_projects/crab_kpet"]):
        refused = crabtui(state, "task", *argv, cwd=here)
        assert refused.returncode == 1, argv
    assert log.read_text() == before
