"""Replace a file's content all at once, so a reader or a crash never sees half of it.

The temporary file beside the target has an unpredictable name (``.<name>.<random>.tmp``) and is
created with ``O_EXCL | O_NOFOLLOW``: in a directory others can write to, nobody can point the
name at one of our files in advance and have it overwritten.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable
from typing import BinaryIO

from engine.crashpoint import crash_point

_ATTEMPTS = 16


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, after an fsync; on
    failure the old file stays and no temporary file is left."""
    _replace(os.fspath(path), ".tmp", lambda f: f.write(text.encode("utf-8")))


def copy_atomically(source: str, path: str) -> None:
    """Copy ``source`` to ``path`` the same way, through a ``.part`` file (a transfer's name for
    it), then make the rename itself durable: the copy is an output that must not be lost."""
    with open(source, "rb") as src:
        _replace(path, ".part", lambda f: shutil.copyfileobj(src, f))
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def leftover(name: str, target: str) -> bool:
    """Whether ``name`` (in the directory of ``target``, a file name) is a temporary file that a
    process killed while it replaced ``target`` left behind."""
    return re.fullmatch(rf"\.{re.escape(target)}\.[0-9a-f]{{16}}\.(tmp|part)", name) is not None


def _replace(path: str, suffix: str, fill: Callable[[BinaryIO], object]) -> None:
    directory, name = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for attempt in range(_ATTEMPTS):
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(8)}{suffix}")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            if attempt == _ATTEMPTS - 1:
                raise
    try:
        with open(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        crash_point(f"replace:{name}")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _remove_leftover(directory, name, suffix)


def _remove_leftover(directory: str, name: str, suffix: str) -> None:
    """``<name><suffix>``, the fixed temporary name of earlier versions, that a crash left:
    removed if it is a plain file of ours, never followed."""
    leftover = os.path.join(directory, name + suffix)
    try:
        info = os.lstat(leftover)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
            os.unlink(leftover)
    except OSError:
        pass
