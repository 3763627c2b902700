"""The CRAB3 layer, one package per place where CRAB code runs, as CRAB itself is split:

- :mod:`engine.crab.client`: ``crab submit/status/resubmit/kill`` on the user's machine (CRABClient);
- :mod:`engine.crab.taskworker`: request -> split -> DAG -> submit (CRAB's TaskWorker);
- :mod:`engine.crab.ap`: what condor_dagman runs beside the schedd, on the access point (PreJob,
  PostJob, RetryJob, PreDAG, ASO, site lists);
- :mod:`engine.crab.wn`: what a job runs on the worker node (the job wrapper, the simulated
  cmsRun) and the files it shares (job report, job ad, job input, failure plan);
- :mod:`engine.crab.grid`: the simulated grid (sites, storage, the demo).

Each package's docstring says where it runs and what it may import; ``tests/test_imports.py``
holds them to it.  :mod:`engine.crab.jsonfile` is a standard-library-only helper they share.

DAGs and job submit files written before this layout run ``python3 -m engine.crab.prejob``
(``postjob``, ``predag``, ``wrapper``, ``cmsrun``).  Those old names still run the modules at
their new paths, so that a task in flight when crabtui is upgraded, or resubmitted after it,
runs to its end: :data:`OLD_ENTRY_POINTS`, found by a finder added to :data:`sys.meta_path`.
"""

from __future__ import annotations

import importlib.util
import sys

OLD_ENTRY_POINTS = {
    "engine.crab.prejob": "engine.crab.ap.prejob",
    "engine.crab.postjob": "engine.crab.ap.postjob",
    "engine.crab.predag": "engine.crab.ap.predag",
    "engine.crab.wrapper": "engine.crab.wn.wrapper",
    "engine.crab.cmsrun": "engine.crab.wn.cmsrun",
}


class _OldEntryPoints:
    """A finder for ``python3 -m <old name>``: the new module's source, run under the old name."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        new = OLD_ENTRY_POINTS.get(name)
        if new is None:
            return None
        return importlib.util.spec_from_file_location(name, importlib.util.find_spec(new).origin)


sys.meta_path.append(_OldEntryPoints())
