"""The TOML files users write for crabtui (pool.toml, taskworker.toml, storage.toml, a CRAB task
configuration, the UI's keymap), read with tomllib and refused in one line that names the file,
the line and what is wrong, whatever the bytes: not UTF-8, too large, nested too deeply, a number
too long for Python to read."""

from __future__ import annotations

import os
import re
import tomllib

MAX_BYTES = 4 << 20
_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\Z")


class TomlError(ValueError):
    """A TOML file that cannot be read; ``line`` is where, when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def read_toml(path: str | os.PathLike[str]) -> dict:
    """The document in the file at ``path``.  OSError (FileNotFoundError for one) is the caller's
    to word; everything wrong with the content is a :class:`TomlError`."""
    file = os.fspath(path)
    with open(file, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise TomlError(f"{file}: larger than {MAX_BYTES >> 20} MB; is it the right file?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise TomlError(f"{file}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x}); TOML files are UTF-8",
                        line) from None
    return parse_toml(text, file)


def parse_toml(text: str, file: str) -> dict:
    """The document in ``text``, the content of ``file`` (named in errors)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        position = _POSITION.search(message)
        if position is None:
            raise TomlError(f"{file}: invalid TOML: {message}") from None
        line, column = position.groups()
        raise TomlError(f"{file}:{line}: invalid TOML: {message[:position.start()]} (column {column})",
                        int(line)) from None
    except RecursionError:
        raise TomlError(f"{file}: arrays or tables nested too deeply to read; no setting needs that") from None
    except ValueError:  # int() refuses more digits than sys.get_int_max_str_digits()
        raise TomlError(f"{file}: a number too long to read (more than 4300 digits); "
                        "no setting takes one that large") from None
