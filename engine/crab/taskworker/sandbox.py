"""The task's two archives, as CRAB ships its TaskManager tarball to the schedd and its job
sandbox to the worker node: engine's source for the access point and for the job, written into
the task directory by the TaskWorker, so that nothing on a pool's hosts needs crabtui installed.

* :data:`AP_ARCHIVE`, a zip archive of what the access point's scripts import (:mod:`engine.crab.ap`,
  the TaskWorker code PreDAG runs again, the worker node's formats, the user log and the
  standard-library helpers; ``tests/test_imports.py`` holds them to that).  The DAG's scripts
  run ``python3 -m engine.crab.ap.prejob`` with it as their ``PYTHONPATH`` (zipimport), under the
  pool's own python3 and condor_dagman.
* :data:`~engine.crab.taskworker.dagman_creator.JOB_SANDBOX`, a zipapp of the worker node (:mod:`engine.crab.wn`) whose ``__main__`` is
  the job wrapper: the job's executable, which HTCondor transfers to the job's scratch directory
  with its input; the wrapper puts the same archive on the simulated cmsRun's ``PYTHONPATH``.

Both hold Python source, not bytecode: the pool's python3 need not be the TaskWorker's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipapp

import engine
from engine.crab.taskworker.dagman_creator import JOB_SANDBOX

AP_ARCHIVE = "TaskManager.zip"
JOB_MAIN = "engine.crab.wn.wrapper:main"
JOB_INTERPRETER = "/usr/bin/env python3"

_HELPERS = ("engine/__init__.py", "engine/atomic.py", "engine/hints.py", "engine/crab/__init__.py",
            "engine/crab/jsonfile.py")
_WN = ("engine/crab/wn",)
_AP = (*_WN, "engine/crab/ap", "engine/state.py", "engine/tomlfile.py", "engine/schedd/__init__.py",
       "engine/schedd/local/__init__.py", "engine/schedd/local/userlog.py", "engine/crab/taskworker/__init__.py",
       *(f"engine/crab/taskworker/{m}.py" for m in ("dagman_creator", "splitting", "automatic", "datasets",
                                                   "stand_ins", "task_input")))


def write_sandboxes(task_dir: str) -> tuple[str, str]:
    """Write both archives into ``task_dir``; returns their paths (access point's, job's)."""
    ap = os.path.join(task_dir, AP_ARCHIVE)
    job = os.path.join(task_dir, JOB_SANDBOX)
    _archive(ap, _HELPERS + _AP, main=None)
    _archive(job, _HELPERS + _WN, main=JOB_MAIN)
    return ap, job


def _archive(target: str, members: tuple[str, ...], main: str | None) -> None:
    """A zip of ``members`` (files, or packages whose .py files all go in), replaced atomically;
    with ``main``, an executable zipapp that runs it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(engine.__file__)))
    with tempfile.TemporaryDirectory(prefix=".sandbox-", dir=os.path.dirname(target)) as staging:
        tree = os.path.join(staging, "tree")
        for member in members:
            source = os.path.join(root, member)
            names = ([os.path.join(member, n) for n in sorted(os.listdir(source)) if n.endswith(".py")]
                     if os.path.isdir(source) else [member])
            for name in names:
                os.makedirs(os.path.join(tree, os.path.dirname(name)), exist_ok=True)
                shutil.copyfile(os.path.join(root, name), os.path.join(tree, name))
        built = os.path.join(staging, os.path.basename(target))
        if main is None:
            shutil.make_archive(built, "zip", tree)
            os.replace(built + ".zip", target)
        else:
            zipapp.create_archive(tree, built, interpreter=JOB_INTERPRETER, main=main)
            os.replace(built, target)
