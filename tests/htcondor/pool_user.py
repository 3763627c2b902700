"""crabtui run on the test pool as a user of an access point runs it: as the pool's job user, with
a state directory of that user's, so that the pool's condor_dagman and jobs (which run as that
user) read and write the task directories crabtui makes, as they do on a user's own access point."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from installed import CRABTUI, PYTHON

MC = "/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM"
POOL_SITES = ("T2_CH_CERN", "T1_US_FNAL", "T2_IT_Pisa", "T2_XX_Local")  # scripts/htcondor-testpool's
FLAKY = "T2_IT_Pisa"  # 80 % of its attempts fail with 8021
STEADY_SITES = tuple(site for site in POOL_SITES if site != FLAKY)
"""Where a job fails only as its failure plan says: for tests that count attempts."""


class PoolUser:
    """Runs ``crabtui --backend htcondor`` as the pool's job user, with a state directory of its own."""

    def __init__(self, pool) -> None:
        self.uid = pool.uid
        self.home = Path(tempfile.mkdtemp(prefix="pooluser-", dir="/tmp"))
        os.chown(self.home, self.uid, self.uid)
        self.state = self.home / "state"
        self.env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(self.home), "USER": "crab",
                    "LOGNAME": "crab", "CONDOR_CONFIG": pool.env["CONDOR_CONFIG"], "LANG": "C.UTF-8"}
        if (tried := self.run("--version")).returncode != 0:
            why = (f"the pool's job user (uid {self.uid}) cannot run {CRABTUI}: {tried.stderr.strip()}; put the "
                   "checkout and its virtual environment where that user can read them")
            if os.environ.get("CI"):
                pytest.fail(why, pytrace=False)
            pytest.skip(why)

    def write(self, name: str, text: str) -> Path:
        path = self.home / name
        path.write_text(text)
        os.chown(path, self.uid, self.uid)
        return path

    def run(self, *args: str, backend: str = "htcondor", timeout: float = 300,
            crash_at: str | None = None) -> subprocess.CompletedProcess:
        """``crash_at``: the crash point (CRABTUI_CRASH_POINT) where the command kills itself."""
        # setpriv, as su would: the user's process starts crabtui from wherever the tests' own is
        return subprocess.run(["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", CRABTUI,
                               "--state-dir", str(self.state), "--backend", backend, *args], cwd=self.home,
                              env={**self.env, **({"CRABTUI_CRASH_POINT": crash_at} if crash_at else {})},
                              capture_output=True, text=True, timeout=timeout)

    def python(self, script: Path, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
        """``script`` run by the tests' Python as the user, from its home: the UI driven headless as that user."""
        return subprocess.run(["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", PYTHON,
                               str(script), *args], cwd=self.home, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def ok(self, *args: str, **kw) -> str:
        result = self.run(*args, **kw)
        assert result.returncode == 0, f"crabtui {' '.join(args)}: {result.stderr}"
        return result.stdout

    def submit(self, config: str, text: str, **kw) -> str:
        """``task submit``; returns the task's full name."""
        self.write(config, text)
        return self.ok("task", "submit", config, **kw).split("Task name: ")[1].split("\n")[0]

    def status(self, name: str, **kw) -> dict:
        return json.loads(self.ok("task", "status", name, "--json", **kw))

    def wait(self, name: str, wanted: str, timeout: float = 600, **kw) -> dict:
        deadline = time.monotonic() + timeout
        while (status := self.status(name, **kw))["status"] != wanted:
            assert status["status"] in ("NEW", "QUEUED", "SUBMITTED") or status["status"] == wanted, status["message"]
            assert time.monotonic() < deadline, f"task {name} stayed {status['status']}, wanted {wanted}"
            time.sleep(1)
        return status


def config(name: str, *, plan: str = "", splitting: str = "LumiBased", units: int = 10, total: int = 120,
           sites: tuple[str, ...] = POOL_SITES, scale: float = 500, debug: str = "") -> str:
    """A LumiBased task of the small MC dataset at ``sites`` (its data read anywhere:
    Data.ignoreLocality), outputs to T2_XX_Local."""
    return f"""\
[General]
requestName = "{name}"
[JobType]
psetName = "pset.py"
[Data]
inputDataset = "{MC}"
splitting = "{splitting}"
unitsPerJob = {units}
totalUnits = {total}
ignoreLocality = true
[Site]
storageSite = "T2_XX_Local"
whitelist = {json.dumps(list(sites))}
[Debug]
timeScale = {scale}
failurePlan = [{plan}]
{debug}"""


def attempts(job: dict) -> list[tuple]:
    return [(a["site"], a["exit_code"], a["action"]) for a in job["attempts"]]
