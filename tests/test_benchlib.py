"""The benchmarks' embedded schedd leaves nothing running, even when the benchmark killed its
daemon last (``bench/crash_dag.py`` does, 50 times) and is then stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from benchlib import embedded_schedd  # noqa: E402


def wait_until(condition, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:g} s for {what}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_job_whose_daemon_was_killed_is_gone_once_the_benchmark_ends(tmp_path):
    with embedded_schedd(str(tmp_path)) as client:
        cluster = client.submit("executable = /bin/sleep\narguments = 300\nqueue\n", cwd=str(tmp_path)).cluster
        wait_until(lambda: "JobPid" in (client.query(f"ClusterId == {cluster}", ["JobPid"]) or [{}])[0],
                   "the job to start")
        job_pid = client.query(f"ClusterId == {cluster}", ["JobPid"])[0]["JobPid"]
        os.kill(client.ping()["pid"], signal.SIGKILL)
        client.close()
        time.sleep(0.2)
        assert alive(job_pid), "a starter keeps its job running when the daemon dies"
    wait_until(lambda: not alive(job_pid), "the job to be evicted")


def test_a_benchmark_says_what_it_measures_on_stderr_before_its_figures(capsys, monkeypatch):
    from benchlib import announce

    monkeypatch.setattr(sys, "argv", ["/x/bench/crash_dag.py"])
    announce("""Benchmark: a DAG survives ``kill -9``s
    of the schedd.

    Details that stay in the file.""")
    out, err = capsys.readouterr()
    assert out == "" and err == "crash_dag.py: a DAG survives `kill -9`s of the schedd. Its figures come when it ends.\n"


def test_ctrl_c_of_a_benchmark_ends_it_in_one_line_and_leaves_nothing_running(tmp_path):
    """`python3 bench/schedd_throughput.py` typed as the README gives it, then Ctrl-C while its
    schedd runs the jobs: no traceback, exit 130, and its daemon, jobs and /tmp directory gone."""
    from descendants import descendants
    from installed import PYTHON

    bench = Path(__file__).resolve().parent.parent / "bench"
    before = set(Path("/tmp").glob("cbt_*"))
    # a process group of its own, as a terminal's foreground job; SIGINT's default action even
    # when the tests run in the background (started with it ignored)
    process = subprocess.Popen([PYTHON, str(bench / "schedd_throughput.py"), "--jobs", "300", "--runs", "1"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        def daemons() -> list[int]:
            return [pid for pid, command in descendants(process.pid).items() if "engine.schedd.local.daemon" in command]
        wait_until(daemons, "its schedd to start")
        started = daemons()
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130 and "Traceback" not in err, (out, err)
    assert err.splitlines()[-1] == "schedd_throughput.py: interrupted (Ctrl-C) before its figures; nothing is left running"
    wait_until(lambda: not any(alive(pid) for pid in started), "its schedd to be gone", timeout=10)
    assert set(Path("/tmp").glob("cbt_*")) == before, "its scratch directory is removed"


def test_a_benchmark_without_its_extra_module_says_how_to_install_it(tmp_path):
    """``python3 bench/fuzz.py`` in the venv of the README's first command (``pip install -e .``,
    without the test extra, here: hypothesis made unimportable) fails in one line saying what to
    install, not with an ImportError's traceback."""
    from installed import PYTHON

    fuzz = Path(__file__).resolve().parent.parent / "bench" / "fuzz.py"
    code = ("import os, runpy, sys; sys.modules['hypothesis'] = None; sys.argv = [sys.argv[1], '--cases', '1']; "
            "sys.path.insert(0, os.path.dirname(sys.argv[0])); runpy.run_path(sys.argv[0], run_name='__main__')")
    run = subprocess.run([PYTHON, "-c", code, str(fuzz)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout, list(tmp_path.iterdir())) == (1, "", [])
    assert run.stderr.splitlines()[-1] == ("ERROR: fuzz.py needs the module hypothesis, which this python3 does not "
                                           "have: install it with crabtui's test extra (.venv/bin/pip install -e "
                                           "'.[test]')"), run.stderr
    assert "Traceback" not in run.stderr
