"""crabtui's simulated grid: the pool file :file:`grid.toml` shipped with this package.

The embedded schedd reads ``<state dir>/pool.toml`` when its daemon starts (and the pool made
from this machine, site ``T2_XX_Local``, without it). :func:`install_grid` puts the simulated grid
there; :func:`grid_path` names the shipped file, for ``load_pool`` or to show it.
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
