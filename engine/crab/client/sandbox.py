"""The task's sandbox, as CRABClient's UserTarball packs it: what a job finds in its working
directory when the user's script (``JobType.scriptExe``) runs.

CRAB ships the script, the pset as ``PSet.py`` and every ``JobType.inputFiles`` match (directories
whole) under its base name, and each job unpacks them where it runs; scripts such as NanoAOD-tools'
``crab_script.sh`` run ``python3 crab_script.py`` from there.  Here the sandbox is a directory in
the task directory, copied at submit, so a script edited afterwards does not change the task; the
job wrapper copies it into each attempt's scratch directory.  The simulated cmsRun reads none of
it, so a task without a script has none.
"""

from __future__ import annotations

import os
import shutil

from engine.crab.client.config import TaskConfig

SANDBOX = "sandbox"
PSET = "PSet.py"  # CRAB's BOOTSTRAP_CFGFILE


class SandboxError(Exception):
    """A file of the sandbox could not be copied."""


def write_sandbox(task_dir: str, cfg: TaskConfig) -> str | None:
    """Copy the sandbox of ``cfg`` into ``task_dir``; its directory's name, None without a script."""
    if cfg.script_exe is None:
        return None
    target = os.path.join(task_dir, SANDBOX)
    entries = [(path, os.path.basename(path)) for path in cfg.input_files]
    if cfg.pset_name is not None and os.path.isfile(cfg.pset_name):
        entries.append((cfg.pset_name, PSET))
    entries.append((cfg.script_exe, os.path.basename(cfg.script_exe)))  # last: the script is the one run
    try:
        os.makedirs(target, exist_ok=True)
        for source, name in entries:
            if os.path.isdir(source):
                shutil.copytree(source, os.path.join(target, name), symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy2(source, os.path.join(target, name))
    except OSError as e:
        shutil.rmtree(target, ignore_errors=True)
        raise SandboxError(f"cannot copy {e.filename or source} into the task's sandbox {target}: "
                           f"{e.strerror or e}") from None
    return SANDBOX
