"""A state directory whose file system fills up: commands say so in one line and what to do, and
once space is freed everything recorded is there.  The file system is a real one that fills (a
small tmpfs, mounted in a mount namespace of our own), not a simulated write error."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from installed import CRABTUI

SCRIPT = """
set -u
mount -t tmpfs -o size=4m,mode=0700 tmpfs {disk} || exit 77
trap '{crabtui} --state-dir {state} pool stop >/dev/null 2>&1' EXIT
crab() {{ {crabtui} --state-dir {state} "$@"; }}
crab job submit job.sub >/dev/null || exit 78
crab pool stop >/dev/null
dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null
echo "== q"; crab q -af ClusterId 2>&1; echo "rc=$?"
echo "== task list"; crab task list 2>&1; echo "rc=$?"
rm {disk}/filler
echo "== freed"; crab q -af ClusterId JobStatus 2>&1; echo "rc=$?"
"""


def test_a_full_file_system_is_named_and_loses_nothing_once_space_is_freed(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    (tmp_path / "job.sub").write_text("executable = /bin/true\nhold = true\nqueue 3\n")
    script = SCRIPT.format(disk=shlex.quote(str(disk)), state=shlex.quote(str(disk / "st")),
                           crabtui=shlex.quote(CRABTUI))
    try:
        run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        pytest.skip("no unshare(1) to mount a small file system of our own")
    if run.returncode == 77 or "unshare:" in run.stderr:
        pytest.skip(f"cannot mount a tmpfs in a namespace of our own: {run.stderr.strip()}")
    assert run.returncode == 0, run.stdout + run.stderr
    q, task_list, freed = (part.strip().splitlines() for part in run.stdout.split("== ")[1:])
    for lines in (q, task_list):
        assert lines[-1] == "rc=1" and len(lines) == 3, lines
        assert lines[1].startswith(f"ERROR: {disk / 'st'}: no space left on its file system"), lines
        assert lines[1].endswith("free some space there, then run the command again: nothing recorded is lost")
    assert freed[1:] == ["1 5", "1 5", "1 5", "rc=0"], "the three held jobs are still queued"


RECOVERY_SCRIPT = """
set -u
mount -t tmpfs -o size=4m,mode=0700 tmpfs {disk} || exit 77
trap '{crabtui} --state-dir {state} pool stop >/dev/null 2>&1' EXIT
crab() {{ {crabtui} --state-dir {state} "$@"; }}
crab job submit job.sub >/dev/null || exit 78
until [ "$(crab q -af JobStatus)" = 2 ]; do :; done
kill -9 "$(crab pool status | sed -n 's/^schedd running (pid \\([0-9]*\\)).*/\\1/p')"
touch go
until grep -qs '^exited' {state}/spool/*.starter; do :; done
dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null
echo "== q"; crab q -af ClusterId 2>&1; echo "rc=$?"
rm {disk}/filler
echo "== freed"; crab history -af ClusterId JobStatus 2>&1; echo "rc=$?"
"""


def test_a_schedd_that_must_record_a_job_s_end_on_a_full_file_system_says_so(tmp_path):
    """The schedd was killed while its job ran, the job ended meanwhile, and the disk is full
    when the next command starts a schedd, which must commit the end before it serves."""
    disk = tmp_path / "disk"
    disk.mkdir()
    (tmp_path / "gated.sh").write_text("#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\necho ran >> marks\n")
    (tmp_path / "gated.sh").chmod(0o755)
    (tmp_path / "job.sub").write_text("executable = gated.sh\nlog = job.log\nqueue\n")
    script = RECOVERY_SCRIPT.format(disk=shlex.quote(str(disk)), state=shlex.quote(str(disk / "st")),
                                    crabtui=shlex.quote(CRABTUI))
    try:
        run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        pytest.skip("no unshare(1) to mount a small file system of our own")
    if run.returncode == 77 or "unshare:" in run.stderr:
        pytest.skip(f"cannot mount a tmpfs in a namespace of our own: {run.stderr.strip()}")
    assert run.returncode == 0, run.stdout + run.stderr
    q, freed = (part.strip().splitlines() for part in run.stdout.split("== ")[1:])
    assert q[-1] == "rc=1" and len(q) == 3, q
    assert q[1].startswith(f"ERROR: {disk / 'st'}: no space left on its file system"), q
    assert freed[1:] == ["1 4", "rc=0"], "the job completed, once"
    assert (tmp_path / "marks").read_text() == "ran\n"
