"""Replace a file's content all at once, so a reader or a crash never sees half of it."""

from __future__ import annotations

import os


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through ``<path>.tmp`` and a rename, after an fsync; on failure the
    old file stays and no temporary file is left."""
    path = os.fspath(path)
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
