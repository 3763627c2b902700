"""Run a job's process the way HTCondor's starter does, on this machine.

The job runs in its own session and process group (so hold and remove reach every process it
started), from an argument list (never a shell string), in its initial directory, with its
environment and its input, output and error files.  ``_CONDOR_JOB_AD`` names a file holding the
job's ClassAd and, for a job that runs on a slot, ``_CONDOR_MACHINE_AD`` one holding the slot's
machine ad (GLIDEIN_CMSSite and the rest), as on a real execute node. Both files are in the new
ClassAd syntax (``[ Name = value; ... ]``), which classad2 and HTCondor's tools read.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

import classad2

from engine.schedd.local.submit import parse_arguments, parse_environment

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass(slots=True)
class JobProcess:
    """A running job: its process, when it started, and the largest memory seen so far."""

    popen: subprocess.Popen
    started: float  # time.monotonic()
    pidfd: int = -1  # readable once the process exits; the schedd's event loop watches it
    peak_rss_kb: int = 0
    signals: list[int] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.popen.pid


def machine_ad_file(ad_file: str) -> str:
    """Where :func:`start` writes the machine ad of the job whose ad is in ``ad_file``."""
    base = ad_file[:-len(".job.ad")] if ad_file.endswith(".job.ad") else ad_file
    return base + ".machine.ad"


def remove_ad_files(ad_file: str) -> None:
    """Remove the job ad file and the machine ad file of a job that has ended (either may be absent)."""
    for path in (ad_file, machine_ad_file(ad_file)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def start(ad: classad2.ClassAd, ad_file: str, machine_ad: classad2.ClassAd | None = None) -> JobProcess:
    """Start the job of ``ad``, writing its ad to ``ad_file`` for ``_CONDOR_JOB_AD`` and, when it
    runs on a slot, the slot's ``machine_ad`` to :func:`machine_ad_file` for ``_CONDOR_MACHINE_AD``
    (scheduler and local universe jobs have no slot, and no machine ad). Raises OSError.

    The job runs in its initial directory, which is also its scratch directory: the embedded
    schedd shares the submitter's file system, as ``should_transfer_files = NO`` does.
    """
    argv = [ad["Cmd"], *parse_arguments(f'"{ad.get("Arguments", "")}"')]
    env = parse_environment(f'"{ad["Environment"]}"') if "Environment" in ad else {}
    env.setdefault("PATH", DEFAULT_PATH)
    with open(ad_file, "w", encoding="utf-8") as f:
        f.write(str(ad))
    env["_CONDOR_JOB_AD"] = ad_file
    if machine_ad is not None:
        machine_file = machine_ad_file(ad_file)
        with open(machine_file, "w", encoding="utf-8") as f:
            f.write(str(machine_ad))
        env["_CONDOR_MACHINE_AD"] = machine_file
    env["_CONDOR_SCRATCH_DIR"] = ad["Iwd"]
    env["_CONDOR_JOB_IWD"] = ad["Iwd"]
    env["CONDOR_ID"] = f"{ad['ClusterId']}.{ad['ProcId']}"  # how condor_dagman learns its own job id
    stdin = open(ad["In"], "rb")
    try:
        stdout = open(ad["Out"], "wb")
        stderr = stdout if ad["Err"] == ad["Out"] else open(ad["Err"], "wb")
        try:
            popen = subprocess.Popen(argv, cwd=ad["Iwd"], env=env, stdin=stdin, stdout=stdout, stderr=stderr,
                                     start_new_session=True, close_fds=True)
        finally:
            stdout.close()
            if stderr is not stdout:
                stderr.close()
    finally:
        stdin.close()
    return JobProcess(popen, time.monotonic())


def orphans(ad_file: str) -> list[int]:
    """Processes still running a job whose schedd died: those whose environment names its ad file."""
    marker = f"_CONDOR_JOB_AD={ad_file}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def signal_job(job: JobProcess, signum: int) -> None:
    """Send a signal to the job's whole process group."""
    job.signals.append(signum)
    try:
        os.killpg(job.pid, signum)
    except ProcessLookupError:
        pass


def signal_number(name: str | None, default: int) -> int:
    """A submit file's kill signal (``SIGUSR1``, ``USR1`` or ``10``) as a number."""
    if not name:
        return default
    name = name.strip().upper()
    if name.isdigit():
        return int(name)
    return int(getattr(signal, name if name.startswith("SIG") else "SIG" + name, default))


def memory_kb(pid: int) -> tuple[int, int]:
    """Resident and virtual memory of a process and all its descendants, in KB (0, 0 once gone)."""
    rss = vsize = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as f:
                size, resident = f.read().split()[:2]
            vsize += int(size) * _PAGE_KB
            rss += int(resident) * _PAGE_KB
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    pending.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return rss, vsize
