"""``crab status`` with no task uses the project directory of the last command: ``crabtui task
status|kill|resubmit`` alone use the task last submitted or named in the state directory."""

from __future__ import annotations

import json
import shutil
import tempfile

from crab_tasks import crab_config_py, crabtui, wait_status

from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir


def test_bare_task_commands_use_the_task_last_submitted_or_named_and_say_which(tmp_path, state):
    (tmp_path / "pset.py").write_text("# fake PSet\n")
    fresh = crabtui(state, "task", "status", cwd=tmp_path)
    assert fresh.returncode == 1 and fresh.stderr.count("\n") == 1, fresh.stderr
    assert f"no task was submitted or named in {state.path} yet" in fresh.stderr
    names = {}
    for request in ("zmumu", "wjets"):
        (tmp_path / "crabConfig.py").write_text(crab_config_py(request, scale=20))
        submitted = crabtui(state, "task", "submit", cwd=tmp_path)  # crab submit: crabConfig.py here
        assert submitted.returncode == 0, submitted.stderr
        names[request] = wait_status(state, request, tmp_path, "SUBMITTED")["name"]
    # wait_status named each task: the last named is wjets, as it was the last submitted
    bare = crabtui(state, "task", "status", cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout.startswith(f"Will use CRAB project directory {tmp_path / 'crab_wjets'} "
                                  f"(task {names['wjets']})\n")
    assert f"Task name:\t\t\t{names['wjets']}\n" in bare.stdout
    assert crabtui(state, "task", "status", "-d", "crab_zmumu", cwd=tmp_path).returncode == 0
    as_json = crabtui(state, "task", "st", "--json", cwd=tmp_path)  # stdout stays JSON; the line goes to stderr
    assert json.loads(as_json.stdout)["name"] == names["zmumu"]
    assert f"Will use CRAB project directory {tmp_path / 'crab_zmumu'}" in as_json.stderr
    resubmitted = crabtui(state, "task", "resubmit", cwd=tmp_path)  # nothing failed yet: crab's refusal
    assert f"(task {names['zmumu']})" in resubmitted.stdout
    killed = crabtui(state, "task", "kill", cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    assert f"Kill request for task {names['zmumu']} sent" in killed.stdout
    assert wait_status(state, "zmumu", tmp_path, "KILLED")
    assert wait_status(state, "wjets", tmp_path, "SUBMITTED")["status"] == "SUBMITTED"  # the other one runs on
    other = StateDir(tempfile.mkdtemp(prefix="crabother-", dir="/tmp"))
    try:  # the last task is the state directory's: another schedd's tasks are not picked
        elsewhere = crabtui(other, "task", "status", cwd=tmp_path)
        assert elsewhere.returncode == 1 and f"no task was submitted or named in {other.path}" in elsewhere.stderr
    finally:
        LocalScheddClient(other).shutdown()
        shutil.rmtree(other.path, ignore_errors=True)
    assert crabtui(state, "task", "kill", "wjets", cwd=tmp_path).returncode == 0
