"""HTCondor's history file (the schedd's ``HISTORY``, what ``condor_history -file`` reads): each
job's ad in the old ClassAd syntax, then a banner line that starts with ``***``; the newest job
is the last one."""

from __future__ import annotations

import classad2

from engine.schedd.api import ScheddError


def read_history_file(path: str) -> list[classad2.ClassAd]:
    """The jobs of a history file, newest first (as condor_history lists them)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:  # condor_history 23.9.6's words
        raise ScheddError(f"Error opening history file {path}: {e.strerror}") from None
    ads, chunk, first = [], [], 1
    for number, line in enumerate(lines, 1):
        if line.startswith("***"):
            if chunk:
                ads.append(_parse(chunk, path, first))
            chunk, first = [], number + 1
        elif line.strip():
            chunk.append(line)
    return ads[::-1]  # lines after the last banner are an ad being written: 23.9.6 skips them too


def _parse(chunk: list[str], path: str, first: int) -> classad2.ClassAd:
    try:
        return classad2.parseOne("\n".join(chunk) + "\n", classad2.ParserType.Old)
    except Exception:
        raise ScheddError(f"{path}:{first}: not a job ad of an HTCondor history file (Name = value lines, "
                          "each ad followed by a '***' line)") from None
