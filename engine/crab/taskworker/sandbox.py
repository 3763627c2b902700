"""The task's two archives, as CRAB ships its TaskManager tarball to the schedd and its job
sandbox to the worker node: engine's source for the access point and for the job, written into
the task directory by the TaskWorker, so that nothing on a pool's hosts needs crabtui installed.

* :data:`AP_ARCHIVE`, a zip archive of the access point's scripts and what they import (:mod:`engine.crab.ap`,
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

import modulefinder
import os
import shutil
import tempfile
import zipapp

import engine
from engine.crab.taskworker.dagman_creator import JOB_SANDBOX

AP_ARCHIVE = "TaskManager.zip"
JOB_MAIN = "engine.crab.wn.wrapper:main"
"""The job zipapp's entry point, whose return value is the job's exit status.  zipapp's own
``main=`` calls it and drops what it returns, so every job exited 0 on a pool, failed or not
(its ExitCode in the queue and the history, DAGMan's return value, ``on_exit_hold``)."""
JOB_INTERPRETER = "/usr/bin/env python3"

# What each archive starts from; they hold these and every module of engine these import, as
# Python's modulefinder follows the imports (the import rules, tests/test_imports.py, keep that
# closure to the standard library and the modules the place may use).
AP_SCRIPTS = ("engine/crab/ap/prejob.py", "engine/crab/ap/postjob.py", "engine/crab/ap/predag.py")
JOB_SCRIPTS = ("engine/crab/wn/wrapper.py", "engine/crab/wn/cmsrun.py")


def write_sandboxes(task_dir: str) -> tuple[str, str]:
    """Write both archives into ``task_dir``; returns their paths (access point's, job's)."""
    ap = os.path.join(task_dir, AP_ARCHIVE)
    job = os.path.join(task_dir, JOB_SANDBOX)
    _archive(ap, AP_SCRIPTS, main=None)
    _archive(job, JOB_SCRIPTS, main=JOB_MAIN)
    return ap, job


def sources(scripts: tuple[str, ...]) -> list[str]:
    """The source files of ``scripts`` (paths under the directory holding ``engine``) and of every
    module and package of engine they import, as paths under that directory."""
    root = _root()
    finder = modulefinder.ModuleFinder(path=[root])  # the standard library is on the pool already
    for script in scripts:
        finder.run_script(os.path.join(root, script))
    files = {os.path.relpath(module.__file__, root) for name, module in finder.modules.items()
             if name == "engine" or name.startswith("engine.")}
    return sorted(files | set(scripts))


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(engine.__file__)))


def _archive(target: str, scripts: tuple[str, ...], main: str | None) -> None:
    """A zip of ``scripts`` and what they import of engine, replaced atomically; with ``main``
    (``module:function``), an executable zipapp that exits with what it returns."""
    root = _root()
    with tempfile.TemporaryDirectory(prefix=".sandbox-", dir=os.path.dirname(target)) as staging:
        tree = os.path.join(staging, "tree")
        for name in sources(scripts):
            os.makedirs(os.path.join(tree, os.path.dirname(name)), exist_ok=True)
            shutil.copyfile(os.path.join(root, name), os.path.join(tree, name))
        built = os.path.join(staging, os.path.basename(target))
        if main is None:
            shutil.make_archive(built, "zip", tree)
            os.replace(built + ".zip", target)
        else:
            module, function = main.split(":")
            with open(os.path.join(tree, "__main__.py"), "w") as entry:
                entry.write(f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n")
            zipapp.create_archive(tree, built, interpreter=JOB_INTERPRETER)
            os.replace(built, target)
