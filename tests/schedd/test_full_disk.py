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
