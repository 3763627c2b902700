"""Replace a file's content all at once, so a reader or a crash never sees half of it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import BinaryIO


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through ``<path>.tmp`` and a rename, after an fsync; on failure the
    old file stays and no temporary file is left."""
    _replace(os.fspath(path), ".tmp", lambda f: f.write(text.encode("utf-8")))


def copy_atomically(source: str, path: str) -> None:
    """Copy ``source`` to ``path`` the same way, through ``<path>.part`` (a transfer's name for
    it), then make the rename itself durable: the copy is an output that must not be lost."""
    with open(source, "rb") as src:
        _replace(path, ".part", lambda f: shutil.copyfileobj(src, f))
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace(path: str, suffix: str, fill: Callable[[BinaryIO], object]) -> None:
    tmp = path + suffix
    try:
        with open(tmp, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
