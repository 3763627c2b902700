"""The end-of-run check: a test run that leaves a process running fails, names it and ends it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from installed import PYTHON

TESTS = Path(__file__).resolve().parent

ORPHAN = '''\
import subprocess

def test_starts_a_daemon_and_forgets_it(tmp_path):
    # The shell exits at once; its background sleep is orphaned, as a detached daemon is.
    subprocess.run(["sh", "-c", "sleep 300 & echo $! > " + str(tmp_path.parent / "orphan.pid")], check=True)
'''

TIDY = '''\
import subprocess

def test_waits_for_what_it_starts():
    subprocess.run(["sh", "-c", "sleep 0.1 & wait"], check=True)
'''


def run_tests(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_it.py").write_text(text)
    return subprocess.run([PYTHON, "-m", "pytest", "-p", "descendants", "-p", "no:cacheprovider", "-q",
                           "--basetemp", str(tmp_path / "base"), str(tmp_path / "test_it.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(TESTS)})


def test_a_process_left_running_fails_the_run_and_is_killed(tmp_path):
    result = run_tests(tmp_path, ORPHAN)
    pid = int((tmp_path / "base" / "orphan.pid").read_text())
    assert result.returncode == 1, result.stdout
    assert f"{pid}: sleep 300" in result.stdout and "1 passed, 1 error" in result.stdout
    assert not os.path.exists(f"/proc/{pid}")  # killed, and reaped by the pytest it was left to


def test_a_run_that_waits_for_its_processes_passes(tmp_path):
    result = run_tests(tmp_path, TIDY)
    assert result.returncode == 0, result.stdout
    assert "1 passed" in result.stdout


def test_kill_users_of_ends_the_processes_that_name_a_directory_and_only_those(tmp_path):
    from descendants import kill_users_of

    mine = tmp_path / "state"
    by_argument = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(300)", "--state-dir", str(mine)])
    by_environment = subprocess.Popen(["sleep", "300"], env={**os.environ, "CRABTUI_STATE_DIR": str(mine)})
    other = subprocess.Popen(["sleep", "300"])
    try:
        assert sorted(kill_users_of(str(mine))) == sorted([by_argument.pid, by_environment.pid])
        assert other.poll() is None
    finally:
        for process in (by_argument, by_environment, other):
            process.kill()
            process.wait()
