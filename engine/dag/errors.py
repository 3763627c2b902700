"""Problems found in DAG files, each located as ``FILE:LINE`` so an editor can jump to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Location(NamedTuple):
    """Where a command was read: the file that holds the line, not the file that included it.

    A named tuple because a large DAG creates one per node and tuples are the cheapest to build.
    """

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    location: Location
    message: str
    strict: int = 0  # a warning DAGMan makes fatal when DAGMAN_USE_STRICT is this or higher (0: never)
    logged: str = ""  # the line DAGMan writes to dagman.out as it parses, ``{where}`` for ``file: line``

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class DagError(Exception):
    """A DAG that cannot be used. Carries every error found, as a compiler reports them all."""

    def __init__(self, errors: list[Diagnostic], warnings: list[Diagnostic] | None = None):
        self.errors = errors
        self.warnings = warnings or []
        super().__init__("\n".join(str(e) for e in errors))
