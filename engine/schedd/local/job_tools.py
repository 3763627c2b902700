"""The HTCondor tools a job of the embedded schedd finds on its PATH, as a job on a pool finds
HTCondor's: ``condor_qedit``, with which a running job sets attributes of its own ad (a DAG's
PROVISIONER job sets ``ProvisionerState`` so).  Each is a small program in the state directory
that runs the crabtui command of the same name against this schedd."""

from __future__ import annotations

import os
import sys

TOOLS = {"condor_qedit": "qedit"}


def install(state_path: str) -> str:
    """Write the tools into ``<state>/bin`` and return that directory, for the jobs' PATH."""
    directory = os.path.join(os.path.abspath(state_path), "bin")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for tool, command in TOOLS.items():
        text = (f"#!{sys.executable}\nimport sys\nfrom crabtui.cli import main\n"
                f"main([\"--state-dir\", {os.path.abspath(state_path)!r}, {command!r}, *sys.argv[1:]], "
                f"prog_name={tool!r})\n")
        path = os.path.join(directory, tool)
        with open(path + ".new", "w") as f:
            f.write(text)
        os.chmod(path + ".new", 0o700)
        os.replace(path + ".new", path)
    return directory
