"""No one else in (issue 20, part 3): a state directory must be the user's alone, everything
crabtui creates there is private, DAGMan gets only the environment condor_submit_dag gives it,
and a temporary file is never written through a name another user prepared."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from installed import CRABTUI
from engine.atomic import write_atomically
from engine.schedd.local.client import LocalScheddClient
from engine.schedd.api import ScheddError
from engine.state import StateDir, state_dir

NOBODY = 65534


def crabtui(state: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([CRABTUI, "--state-dir", state, *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("setup, message", [
    (lambda p: p.mkdir(mode=0o777) or p.chmod(0o777), "group-writable (mode 0777), so others could have planted "
                                                      "jobs there; check its content, then: chmod go-w"),
    (lambda p: p.mkdir() or p.chmod(0o702), "world-writable (mode 0702)"),
    # a shared directory such as /tmp: chmod go-w there would break it for everyone
    (lambda p: p.mkdir() or p.chmod(0o1777), "it is a directory shared by every user (mode 1777); give --state-dir "
                                             "a directory of your own in it, such as "),
    (lambda p: p.mkdir() or os.chown(p, NOBODY, -1), "bad ownership of the state directory: it belongs to nobody"),
    (lambda p: p.write_text("not a directory"), "not a directory; give --state-dir a directory"),
    (lambda p: p.mkdir() or p.chmod(0o500), "the state directory is read-only; make it writable (chmod u+w"),
])
def test_a_state_directory_others_could_write_to_is_refused_saying_what_to_fix(tmp_path, setup, message):
    path = tmp_path / "state"
    setup(path)
    result = crabtui(str(path), "q")
    assert result.returncode == 1
    assert result.stderr.startswith(f"ERROR: {path}: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
    if path.is_dir():
        assert os.listdir(path) == [], "nothing was created there"


def test_an_empty_state_dir_option_is_refused_rather_than_replaced(tmp_path):
    result = crabtui("", "q")
    assert result.returncode == 1
    assert result.stderr.startswith("ERROR: --state-dir is empty;") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("name", ["schedd.sqlite3", "spool", "schedd.sock"])
def test_a_database_spool_or_socket_of_someone_else_is_refused(tmp_path, name):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    planted = state / name
    if name == "spool":
        planted.mkdir()
    else:
        planted.write_text("")
    os.chown(planted, NOBODY, -1)
    with pytest.raises(ScheddError, match=f"^{planted}: bad ownership of the .*: it belongs to nobody"):
        LocalScheddClient(StateDir(str(state))).ping()


def test_a_planted_symbolic_link_is_refused(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (state / "schedd.log").symlink_to(victim)
    with pytest.raises(ScheddError, match="the schedd log is a symbolic link; remove it"):
        LocalScheddClient(StateDir(str(state))).ping()
    assert victim.read_text() == "precious"


def test_everything_the_schedd_creates_is_private_and_a_loose_directory_is_tightened(schedd):
    os.chmod(schedd.state.path, 0o755)
    old = os.umask(0o022)
    try:
        state = state_dir(schedd.state.path)
    finally:
        os.umask(old)
    assert mode(state.path) == 0o700, "tightened, as it is ours and nobody else could write to it"
    schedd.submit("executable = /bin/true\nlog = job.log\nqueue\n")
    schedd.wait_history("1.0")
    for name in ("schedd.sqlite3", "schedd.sqlite3-wal", "schedd.log", "schedd.lock", "schedd.sock"):
        assert mode(os.path.join(state.path, name)) == 0o600, name
    assert mode(state.spool) == 0o700
    assert mode(schedd.work / "job.log") & 0o077 == 0, "the daemon's umask is 077"


SECRET = "CRABTUI_TEST_SECRET_TOKEN"


def test_dag_submit_gives_dagman_only_the_environment_condor_submit_dag_gives_it(schedd):
    (schedd.work / "job.sub").write_text("executable = /bin/true\nqueue\n")
    (schedd.work / "d.dag").write_text("JOB A job.sub\n")
    env = {**os.environ, SECRET: "hunter2", "TZ": "UTC"}
    result = subprocess.run([CRABTUI, "--state-dir", schedd.state.path, "dag", "submit", "d.dag"],
                            capture_output=True, text=True, timeout=60, cwd=schedd.work, env=env)
    assert result.returncode == 0, result.stderr
    (ad,) = schedd.client.query("JobUniverse == 7")
    assert "TZ=UTC" in ad["Environment"] and "PATH=" in ad["Environment"]
    assert SECRET not in ad["Environment"] and "hunter2" not in str(ad)
    assert "getenv\t= CONDOR_CONFIG,_CONDOR_*,PATH,PYTHONPATH," in (schedd.work / "d.dag.condor.sub").read_text()


def test_a_temporary_name_prepared_by_someone_else_is_never_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "x.dag.lock"
    (tmp_path / "x.dag.lock.tmp").symlink_to(victim)  # the name earlier versions wrote through
    write_atomically(target, "pid 1\n")
    assert target.read_text() == "pid 1\n" and victim.read_text() == "precious"
    assert sorted(os.listdir(tmp_path)) == ["victim", "x.dag.lock", "x.dag.lock.tmp"], "the link is left alone"
    assert mode(target) == 0o666 & ~_umask()


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_a_read_only_state_directory_is_named_with_the_command_that_fixes_it_as_typed(tmp_path):
    """A state directory whose path has a space: the chmod the message gives works when pasted."""
    path = tmp_path / "my state"
    path.mkdir(mode=0o500)
    result = crabtui(str(path), "q")
    assert result.returncode == 1
    assert result.stderr == (f"ERROR: {path}: the state directory is read-only; make it writable "
                             f"(chmod u+w '{path}') or give --state-dir another one\n")


def test_a_state_directory_on_a_read_only_file_system_says_to_remount_it_not_to_chmod(tmp_path):
    state = tmp_path / "disk" / "st"
    script = (f"mount -t tmpfs -o size=1m,mode=0700 tmpfs {tmp_path / 'disk'} || exit 77; mkdir -m 700 {state}; "
              f"mount -o remount,ro {tmp_path / 'disk'} || exit 77; {CRABTUI} --state-dir {state} q")
    (tmp_path / "disk").mkdir()
    try:
        run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                             capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        pytest.skip("no unshare(1) to mount a file system of our own")
    if run.returncode == 77 or "unshare:" in run.stderr:
        pytest.skip(f"cannot mount a tmpfs in a namespace of our own: {run.stderr.strip()}")
    assert run.returncode == 1
    assert run.stderr == (f"ERROR: {state}: the state directory is on a read-only file system; remount it "
                          "read-write or give --state-dir another one\n")


def test_a_submit_to_a_read_only_state_directory_ends_its_submitting_line_before_the_error(tmp_path):
    """As condor_submit ends "Submitting job(s)" before its error: on a terminal the two do not run together."""
    path = tmp_path / "state"
    path.mkdir(mode=0o500)
    (tmp_path / "job.sub").write_text("executable = /bin/true\nqueue\n")
    result = crabtui(str(path), "job", "submit", "job.sub", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == "Submitting job(s)\n"
    assert result.stderr.startswith(f"ERROR: {path}: the state directory is read-only;")
