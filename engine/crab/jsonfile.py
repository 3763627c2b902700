"""Reading the JSON files a task keeps (job inputs, job reports, user datasets) one way: a file
that cannot be read or parsed raises the caller's error, naming the file, and for bad JSON the
line and column.  Standard library only: jobs and DAG scripts read these files."""

from __future__ import annotations

import json
import os
from typing import Any


def read_json(path: str | os.PathLike[str], error: type[Exception], *, what: str = "",
              missing: str | None = None) -> Any:
    """The document at ``path``.  ``what`` names the file in the "cannot read" message;
    ``missing``, if given, is the message for a file that does not exist."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError as e:
        raise error(f"{name}: {missing}" if missing else f"{name}: cannot read{what}: {e}") from None
    except json.JSONDecodeError as e:
        raise error(f"{name}:{e.lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{name}: cannot read{what}: {e}") from None
