"""DAGMan's configuration knobs: a per-DAG config file (``CONFIG`` in the DAG or ``-config``),
then ``_CONDOR_<KNOB>`` environment variables, as HTCondor reads them.

Only the knobs that change what this DAGMan does are honoured; any other ``DAGMAN_`` knob is
accepted and ignored, as a real pool's configuration holds many.  Command-line options override
all of these (condor_submit_dag passes them on to DAGMan's argv).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from engine.dag import DagError, Diagnostic, Location

# knob -> (Options field, type)
KNOBS: dict[str, tuple[str, type]] = {
    "DAGMAN_MAX_JOBS_SUBMITTED": ("max_jobs", int),
    "DAGMAN_MAX_JOBS_IDLE": ("max_idle", int),
    "DAGMAN_MAX_PRE_SCRIPTS": ("max_pre", int),
    "DAGMAN_MAX_POST_SCRIPTS": ("max_post", int),
    "DAGMAN_MAX_HOLD_SCRIPTS": ("max_hold", int),
    "DAGMAN_ALWAYS_RUN_POST": ("always_run_post", bool),
    "DAGMAN_USER_LOG_SCAN_INTERVAL": ("scan_interval", float),
    "DAGMAN_MAX_SUBMIT_ATTEMPTS": ("max_submit_attempts", int),
}
_TRUE, _FALSE = ("true", "yes", "1", "t", "y"), ("false", "no", "0", "f", "n")


def read_config(path: str) -> dict[str, tuple[str, Location]]:
    """``NAME = value`` lines (``#`` comments, ``\\`` continuations): upper-cased name ->
    (value, where it was set)."""
    values: dict[str, tuple[str, Location]] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DagError([Diagnostic(Location(path), f"cannot read the DAGMan config file: {e.strerror}")]) from None
    pending, first = "", 0
    for number, line in enumerate(lines, 1):
        if not pending:
            first = number
        stripped = line.strip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        text, pending = pending + stripped, ""
        if not text or text.startswith("#"):
            continue
        name, sep, value = text.partition("=")
        if not sep or not name.strip() or " " in name.strip():
            raise DagError([Diagnostic(Location(path, first), f"expected NAME = value, got {text!r}")])
        values[name.strip().upper()] = (value.strip(), Location(path, first))
    return values


def knob_values(config_file: str | None, environ: Mapping[str, str] = os.environ) -> dict[str, object]:
    """Options fields set by the config file and the environment, typed; errors name the knob."""
    raw = read_config(config_file) if config_file else {}
    for key, value in environ.items():
        if key.upper().startswith("_CONDOR_DAGMAN_"):
            raw[key[len("_CONDOR_"):].upper()] = (value, Location(f"environment variable {key}"))
    values: dict[str, object] = {}
    for knob, (field, kind) in KNOBS.items():
        if knob not in raw:
            continue
        text, where = raw[knob][0].strip(), raw[knob][1]
        try:
            if kind is bool:
                if text.lower() not in _TRUE + _FALSE:
                    raise ValueError
                values[field] = text.lower() in _TRUE
            else:
                values[field] = kind(text)
                if values[field] < 0:
                    raise ValueError
        except ValueError:
            expected = "True or False" if kind is bool else "a number no less than 0"
            raise DagError([Diagnostic(where, f"{knob} = {text!r}: expected {expected}")]) from None
    return values
