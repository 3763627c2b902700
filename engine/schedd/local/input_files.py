"""Input files a job's transfer would send and cannot: the hold that stops it where 23.9.6's shadow does.

condor_submit 23.9.6 does not look at ``transfer_input_files`` (``SUBMIT_SKIP_FILECHECKS`` is true
by default), so a file a DAG's earlier node writes may be named before it exists.  A job whose
files move (``should_transfer_files = YES``) is held when its shadow cannot read one, code 13 and
the errno as subcode, with the pool's reason; with ``IF_NEEDED`` or ``NO`` nothing moves on a shared
file system (the embedded schedd's case), and the job runs where its files are.  URLs are fetched
by plugins and directories are sent whole: neither is looked at.
"""

from __future__ import annotations

import os
import re

import classad2

TRANSFER_INPUT_FAILURE = 13  # HoldReasonCode: TransferInputError
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://.")  # a URL as HTCondor's IsUrl sees one


def unreadable(ad: classad2.ClassAd) -> tuple[str, OSError] | None:
    """The first input file the job's transfer could not read, with why; None when it moves no
    files or can read every one."""
    if str(ad.get("ShouldTransferFiles", "")).upper() != "YES":
        return None
    iwd = str(ad.get("Iwd", "/"))
    for name in str(ad.get("TransferInput", "")).split(","):
        name = name.strip()
        if not name or _URL.match(name) or "$$(" in name:
            continue
        path = name if os.path.isabs(name) else os.path.normpath(os.path.join(iwd, name))
        if os.path.isdir(path):
            continue
        try:
            os.close(os.open(path, os.O_RDONLY))
        except OSError as e:
            return path, e
    return None


def hold_reason(path: str, error: OSError, access_point: str, slot: str) -> str:
    """The hold reason 23.9.6 gives, as the test pool wrote it."""
    return (f"Transfer input files failure at access point {access_point} while sending files to execution point "
            f"{slot}. Details: reading from file {path}: (errno {error.errno}) {os.strerror(error.errno)}")
