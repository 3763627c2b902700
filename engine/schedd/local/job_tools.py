"""The HTCondor tools a job of the embedded schedd finds on its PATH, as a job on a pool finds
HTCondor's: ``condor_qedit``, with which a running job sets attributes of its own ad (a DAG's
PROVISIONER job sets ``ProvisionerState`` so), and ``condor_dagman``, the program of every DAGMan
job (so that its ad and condor_q's CMD name it as on a pool).  Each is a small program in the state
directory that runs the crabtui command of the same name, or the embedded DAGMan, against this
schedd."""

from __future__ import annotations

import os
import sys

TOOLS = {"condor_qedit": "qedit"}

# The signal mask DAGMan needs from its first statement comes with the module (engine.dagman.__main__).
_CONDOR_DAGMAN = "import runpy\nrunpy.run_module('engine.dagman', run_name='__main__')\n"


def condor_dagman(state_path: str) -> str:
    """The path of the embedded DAGMan's program, the executable of a DAGMan job's submit file."""
    return os.path.join(os.path.abspath(state_path), "bin", "condor_dagman")


def install(state_path: str) -> str:
    """Write the tools into ``<state>/bin`` and return that directory, for the jobs' PATH."""
    directory = os.path.join(os.path.abspath(state_path), "bin")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    programs = {tool: (f"import sys\nfrom crabtui.cli import main\n"
                       f"main([\"--state-dir\", {os.path.abspath(state_path)!r}, {command!r}, *sys.argv[1:]], "
                       f"prog_name={tool!r})\n") for tool, command in TOOLS.items()}
    programs["condor_dagman"] = _CONDOR_DAGMAN
    for tool, program in programs.items():
        text = f"#!{sys.executable}\n{program}"
        path = os.path.join(directory, tool)
        with open(path + ".new", "w") as f:
            f.write(text)
        os.chmod(path + ".new", 0o700)
        os.replace(path + ".new", path)
    return directory
