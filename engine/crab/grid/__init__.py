"""The simulated grid: the world a laptop pretends to be, where CRAB's real one has CMS sites.

Its sites and slots are the pool file :file:`grid.toml` shipped with this package (each site a
speed and a failure profile), its storage elements :mod:`.storage` (:file:`storage.toml`), and
:mod:`.demo` sets up a state directory that shows all of it in a minute.  The datasets the grid
holds are the TaskWorker's catalogue's (:mod:`engine.crab.taskworker.datasets`), which generates
the synthetic ones on demand.

The embedded schedd reads ``<state dir>/pool.toml`` when its daemon starts (and the pool made
from this machine, site ``T2_XX_Local``, without it). :func:`install_grid` puts the simulated grid
there; :func:`grid_path` names the shipped file, for ``load_pool`` or to show it.

Where it runs: on the user's machine, where the CLI sets up a state directory; the embedded
schedd reads the files it installs.  Nothing of it runs on an access point or a worker node:
what a job needs of the grid reaches it in its machine ad (:mod:`engine.crab.wn.jobad`) and
what PostJob needs in the task's ``task.json``.

What it may import: anything in ``engine``, never the UI.
"""

from __future__ import annotations

import os
import shutil

from engine.state import StateDir

__all__ = ["GRID_FILE", "grid_path", "install_grid"]

GRID_FILE = "grid.toml"


def grid_path() -> str:
    """The shipped pool file of the simulated grid (six CMS sites with speeds and failure profiles)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), GRID_FILE)


def install_grid(state: StateDir, *, overwrite: bool = False, source: str | None = None) -> str:
    """Copy the simulated grid (or the pool file ``source``, such as the demo's) to the state
    directory's pool file and return its path. A pool file the user already has is kept
    (FileExistsError) unless ``overwrite``. The running daemon keeps its pool until it restarts."""
    target = state.pool_config
    if os.path.exists(target) and not overwrite:
        raise FileExistsError(f"{target} exists already; keep it, or install the simulated grid over it "
                              "with overwrite=True")
    os.makedirs(state.path, exist_ok=True)
    tmp = target + ".tmp"
    shutil.copyfile(source or grid_path(), tmp)
    os.replace(tmp, target)
    return target
