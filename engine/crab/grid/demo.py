"""``crabtui demo``: a state directory set up to show, in about a minute, what crabtui watches.

:func:`prepare` puts into a state directory of its own (a new or empty one, or an earlier demo's):

* the demo grid (:file:`demo_grid.toml`, the pool file format of :file:`grid.toml`): four sites,
  ten slots, with ``T2_IT_Pisa`` first in matching order and flaky (80 % of attempts fail with
  8021, which CRAB retries at another site);
* the task worker's knobs scaled down (:file:`demo_taskworker.toml`: three probes, three tail
  stages from six processing jobs on);
* a global blacklist naming ``T2_DE_DESY``, a site that holds data but has no slots here;
* two CRAB configurations (TOML) in ``<state dir>/demo``, for ``task submit``:

  ``automatic``
      Automatic splitting of three runs of ``/Muon0/...`` (a lumi mask, :file:`demo_lumimask.json`:
      2,044 lumis, 1.1 M events) into 180-minute jobs, at 3600 simulated seconds a real second:
      three probes (one fails once, and is retried), 10 to 15 processing jobs (one fails and its lumis go to a tail
      job, as do the lumis that slower sites leave), tail stages.  It keeps off the flaky site
      (``Site.blacklist``): processing jobs get no retries.  Ends COMPLETED.
  ``lumis``
      LumiBased splitting of ``/TTbar/...`` (5 lumis a job, 16 jobs) at 100 simulated seconds a
      real second, so that a retry's 900 s cooloff lasts 9 real seconds and the UI counts it
      down.  The flaky site fails most attempts; the automatic blacklist's thresholds are low
      (``Debug.automaticBlacklist``), so it soon takes the site away.  Two jobs fail their first
      attempt with codes CRAB retries, and one with a code it does not: the task ends FAILED with
      that job failed, for the user to resubmit (its second attempt succeeds).

The seed chooses which jobs the planned failures hit, so a demo is the same story every time;
the flaky site's own draws follow each task's name, as a real site's trouble would.  Every job
stays within its three executions whatever those draws are, so the end states do not depend on
them.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass

from engine.crab.ap.sites import write_global_blacklist
from engine.crab.grid import install_grid
from engine.state import StateDir

__all__ = ["DEMO_DIR", "DemoError", "DemoTask", "failure_plans", "is_demo", "prepare"]

DEMO_DIR = "demo"
"""Where in the state directory the demo's task configurations go."""
GRID = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo_grid.toml")
KNOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo_taskworker.toml")
LUMI_MASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo_lumimask.json")
FLAKY_SITE = "T2_IT_Pisa"
GLOBALLY_BLACKLISTED = ("T2_DE_DESY",)
AUTOMATIC_SCALE = 3600
LUMI_SCALE = 100  # a retry's 900 s cooloff lasts 9 real seconds
LUMI_JOBS = 16  # /TTbar/... in LumiBased jobs of 5 lumis
PROCESSING_JOBS = 6  # the automatic task makes more processing jobs than this at the fastest site's speed
RETRIED_CODES = (8028, 8001, 134)  # in CRAB's EXIT_RETRY_POLICY: retried where they happened
FATAL_CODE = 8006  # not in the policy: the job fails for good
WORK_AREA = "crab_projects"  # the tasks' project directories, under the demo's directory
THRESHOLDS = {"completedJobs": 4, "successfulJobs": 2, "siteFailures": 2, "siteSuccessRate": 0.5}

_CONFIG = """\
# crabtui demo: {what}
[General]
requestName = "{name}"
workArea = {work_area}
[JobType]
psetName = "pset.py"
[Data]
inputDataset = "{dataset}"
splitting = "{splitting}"
unitsPerJob = {units}
{data}[Site]
storageSite = "T2_XX_Local"
blacklist = {blacklist}
[Debug]
timeScale = {scale}
failurePlan = [
{plan}
]
{debug}"""


class DemoError(Exception):
    """The demo cannot use the state directory; the message says why and what to do."""


@dataclass(frozen=True)
class DemoTask:
    """A demo task: its request name, its configuration file and what it shows."""

    request_name: str
    config: str
    what: str


def is_demo(state: StateDir) -> bool:
    """Whether ``state`` is a demo's: its pool is the demo grid."""
    try:
        with open(state.pool_config, "rb") as mine, open(GRID, "rb") as demo:
            return mine.read() == demo.read()
    except FileNotFoundError:
        return False


def prepare(state: StateDir, seed: int) -> list[DemoTask]:
    """Set up ``state`` for the demo (see the module docstring) and return its tasks, not yet
    submitted.  DemoError if the directory holds anything but an earlier demo."""
    os.makedirs(state.path, mode=0o700, exist_ok=True)
    if os.listdir(state.path) and not is_demo(state):
        raise DemoError(f"{state.path} is not empty and not a demo's state directory; the demo needs one of "
                        "its own (leave out --state-dir for a fresh one, or name a new directory)")
    if len(os.fsencode(state.socket)) > 107:
        raise DemoError(f"{state.path}: too long for the schedd's Unix socket ({state.socket} must be at most "
                        "107 bytes); give a shorter --state-dir, such as one under /tmp")
    if not os.path.exists(state.pool_config):
        install_grid(state, source=GRID)
    shutil.copyfile(KNOBS, state.taskworker_config)
    write_global_blacklist(state.global_blacklist, GLOBALLY_BLACKLISTED)
    directory = os.path.join(state.path, DEMO_DIR)
    os.makedirs(directory, exist_ok=True)
    automatic, lumis = failure_plans(seed)
    mask = os.path.basename(LUMI_MASK)
    shutil.copyfile(LUMI_MASK, os.path.join(directory, mask))
    thresholds = ", ".join(f"{k} = {v}" for k, v in THRESHOLDS.items())
    configs = {
        "automatic": dict(what="Automatic splitting: probes, processing jobs and tail stages",
                          dataset="/Muon0/Run2023C-PromptReco-v1/AOD", splitting="Automatic", units=180,
                          data=f'lumiMask = "{mask}"\n', blacklist=json.dumps([FLAKY_SITE]), scale=AUTOMATIC_SCALE,
                          plan=_plan(automatic), debug=""),
        "lumis": dict(what="LumiBased: retries, cooloffs and the automatic blacklist; one job fails for good",
                      dataset="/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM", splitting="LumiBased", units=5,
                      data="", blacklist="[]", scale=LUMI_SCALE, plan=_plan(lumis),
                      debug=f"automaticBlacklist = {{{thresholds}}}\n"),
    }
    work_area = os.path.join(directory, WORK_AREA)  # in the demo's directory, not wherever the demo was typed
    tasks = []
    for name, fields in configs.items():
        task = DemoTask(name, os.path.join(directory, f"{name}.toml"), fields["what"])
        # an earlier demo's project directory goes: its task stays in the state directory, by name
        shutil.rmtree(os.path.join(work_area, f"crab_{name}"), ignore_errors=True)
        with open(task.config, "w", encoding="utf-8") as f:
            f.write(_CONFIG.format(name=name, work_area=json.dumps(work_area), **fields))
        tasks.append(task)
    return tasks


def failure_plans(seed: int) -> tuple[list[dict], list[dict]]:
    """The ``Debug.failurePlan`` entries of the automatic and the lumi-based task, chosen by ``seed``.

    Only first attempts fail as planned, so that a job's retry (or, for the fatal one, its
    resubmission) succeeds."""
    rng = random.Random(seed)
    automatic = [{"job": f"0-{rng.randint(1, 3)}", "attempt": 1, "exitCode": 1},
                 {"job": str(rng.randint(2, PROCESSING_JOBS)), "attempt": 1, "exitCode": 8021}]
    fatal, *retried = rng.sample(range(1, LUMI_JOBS + 1), 3)
    lumis = [{"job": str(fatal), "attempt": 1, "exitCode": FATAL_CODE},
             *({"job": str(job), "attempt": 1, "exitCode": rng.choice(RETRIED_CODES)} for job in sorted(retried))]
    return automatic, lumis


def _plan(entries: list[dict]) -> str:
    return ",\n".join("  {" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in e.items()) + "}" for e in entries)
