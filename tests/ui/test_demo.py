"""``crabtui demo``: its own state directory with the demo grid, and two tasks that end as the demo
says: the automatic one COMPLETED through probes, processing and tail jobs; the lumi-based one
FAILED with the one job planned to fail for good, after retries that cooled off."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from crabtui.commands.demo import DEFAULT_SEED
from engine.crab.grid.demo import FATAL_CODE, FLAKY_SITE, failure_plans
from engine.schedd.local.client import LocalScheddClient
from engine.state import StateDir
from installed import CRABTUI
from ui_tasks import crabtui, wait_task


@pytest.fixture
def empty():
    state = StateDir(tempfile.mkdtemp(prefix="crabdemo-", dir="/tmp"))  # short: a socket path fits
    yield state
    LocalScheddClient(state, autostart=False).shutdown()
    shutil.rmtree(state.path, ignore_errors=True)


def status(state: StateDir, name: str, cwd: Path) -> dict[str, dict]:
    result = crabtui(state, "task", "status", name, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return {job["id"]: job for job in json.loads(result.stdout)["jobs"]}


def test_the_demo_tasks_end_as_planned(empty, tmp_path):
    result = crabtui(empty, "demo", "--no-ui", "--state-dir", empty.path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    automatic, lumis = result.stdout.split()
    assert automatic.endswith("_crab_automatic") and lumis.endswith("_crab_lumis")
    assert (Path(empty.pool_config).read_text().count("[[site]]"), Path(empty.taskworker_config).exists()) == (4, True)

    wait_task(empty, lumis, "FAILED", timeout=180)
    wait_task(empty, automatic, "COMPLETED", timeout=180)

    planned_automatic, planned_lumis = failure_plans(DEFAULT_SEED)
    fatal, *retried = planned_lumis
    jobs = status(empty, lumis, tmp_path)
    assert len(jobs) == 16
    assert [j for j in jobs if jobs[j]["state"] != "finished"] == [fatal["job"]]
    assert [(a["exit_code"], a["action"]) for a in jobs[fatal["job"]]["attempts"]] == [(FATAL_CODE, "fatal")]
    for plan in retried:  # a retry after a cooloff, then success
        first, *later = jobs[plan["job"]]["attempts"]
        assert (first["exit_code"], first["action"]) == (plan["exitCode"], "retry")
        assert later and later[-1]["action"] == "ok"
    flaky = [a for job in jobs.values() for a in job["attempts"] if a["site"] == FLAKY_SITE]
    assert all(a["action"] in ("ok", "retry") for a in flaky), "a failure at the flaky site is retried elsewhere"

    jobs = status(empty, automatic, tmp_path)
    probe, processing = (entry["job"] for entry in planned_automatic)
    assert [j for j in jobs if j.startswith("0-")] == ["0-1", "0-2", "0-3"]
    assert [a["exit_code"] for a in jobs[probe]["attempts"]] == [1, 0], "a probe is retried, as CRAB retries it"
    assert jobs[processing]["state"] == "failed" and len(jobs[processing]["attempts"]) == 1
    tails = [j for j in jobs if "-" in j and not j.startswith("0-")]
    assert tails and all(jobs[j]["state"] == "finished" for j in tails), "the failed job's lumis ran in a tail"


def test_the_demo_keeps_out_of_a_directory_with_other_work(empty, tmp_path):
    Path(empty.pool_config).write_text('[[site]]\nname = "T2_CH_CERN"\n')
    result = crabtui(empty, "demo", "--no-ui", "--state-dir", empty.path, cwd=tmp_path)
    assert result.returncode == 1
    assert f"ERROR: {empty.path} is not empty and not a demo's state directory" in result.stderr
    assert not (Path(empty.path) / "demo").exists() and not Path(empty.socket).exists()


def test_the_demo_names_crabtui_as_the_user_can_type_it_again(monkeypatch, tmp_path):
    """After the README's first command no venv is activated: the closing line names
    ``.venv/bin/crabtui``, not a ``crabtui`` that PATH does not find."""
    from crabtui.commands.demo import invoked_as
    from installed import BIN, CRABTUI

    monkeypatch.setattr("sys.argv", [CRABTUI, "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(Path(BIN).parent.parent)
    assert invoked_as() == str(Path(CRABTUI).relative_to(Path(BIN).parent.parent))
    monkeypatch.chdir(tmp_path)
    assert invoked_as() == CRABTUI
    monkeypatch.setenv("PATH", f"{BIN}:/usr/bin:/bin")
    assert invoked_as() == "crabtui"


def test_the_demo_without_ui_says_where_it_runs_and_the_command_to_look_at_it(empty, tmp_path):
    """``crabtui --state-dir X demo --no-ui`` puts the demo in a directory of its own under X: it
    says which, and the command it prints lists the demo's tasks."""
    import re
    import shlex
    import subprocess

    result = crabtui(empty, "demo", "--no-ui", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    names = result.stdout.split()
    found = re.search(r"The demo's tasks run in (\S+); `([^`]+) task list` lists them", result.stderr)
    assert found, result.stderr
    demo = StateDir(found.group(1))
    try:
        assert Path(demo.path).parent == Path(empty.path) and found.group(2).endswith(f"--state-dir {demo.path}")
        listed = subprocess.run([*shlex.split(found.group(2)), "task", "list"], cwd=tmp_path, capture_output=True,
                                text=True, timeout=60, env={"PATH": str(Path(CRABTUI).parent) + ":/usr/bin:/bin"})
        assert listed.returncode == 0 and all(name in listed.stdout for name in names), listed.stdout + listed.stderr
    finally:
        LocalScheddClient(demo, autostart=False).shutdown()


def test_the_demo_run_again_where_it_was_typed_leaves_that_directory_as_it_was(empty, tmp_path):
    """The README's first command typed twice in the clone: each demo keeps its tasks' project
    directories (crab_<requestName>) in its own directory, so the clone gets none and the second
    demo is not refused for the first one's."""
    runs = [crabtui(empty, "demo", "--no-ui", cwd=tmp_path) for _ in range(2)]
    demos = [StateDir(re.search(r"The demo's tasks run in (\S+);", run.stderr).group(1)) for run in runs]
    try:
        assert [run.returncode for run in runs] == [0, 0], [run.stderr for run in runs]
        assert list(tmp_path.iterdir()) == []
        for demo, run in zip(demos, runs):
            for name in run.stdout.split():
                project = Path(demo.path) / "demo" / "crab_projects" / f"crab_{name.rsplit('_crab_', 1)[1]}"
                shown = crabtui(demo, "task", "status", "-d", str(project), "--json", cwd=tmp_path)
                assert shown.returncode == 0 and json.loads(shown.stdout)["name"] == name, shown.stderr
    finally:
        for demo in demos:
            LocalScheddClient(demo, autostart=False).shutdown()
