"""DAGMan's options (:class:`Options`) and where its configuration knobs come from: a per-DAG
config file (``CONFIG`` in the DAG or ``-config``), then ``_CONDOR_<KNOB>`` environment
variables, as HTCondor reads them.

Only the knobs that change what this DAGMan does are honoured; any other ``DAGMAN_`` knob is
accepted and ignored, as a real pool's configuration holds many.  Command-line options override
all of these (condor_submit_dag passes them on to DAGMan's argv).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from engine.dag import DagError, Diagnostic, Location


@dataclass
class Options:
    """condor_submit_dag's options and the DAGMan configuration knobs that matter here."""

    max_jobs: int = 0  # DAGMAN_MAX_JOBS_SUBMITTED, 0 = unlimited
    max_idle: int = 1000  # DAGMAN_MAX_JOBS_IDLE
    max_pre: int = 20  # DAGMAN_MAX_PRE_SCRIPTS
    max_post: int = 20  # DAGMAN_MAX_POST_SCRIPTS
    max_hold: int = 20  # DAGMAN_MAX_HOLD_SCRIPTS
    always_run_post: bool = False  # DAGMAN_ALWAYS_RUN_POST
    scan_interval: float = 1.0  # DAGMAN_USER_LOG_SCAN_INTERVAL (DAGMan's default is 5)
    dagman_id: int = 0  # the DAGMan job's ClusterId (CONDOR_ID), 0 when run by hand
    rescue_dag_number: int = 0  # the rescue DAG applied at start-up, for the metrics
    recovery: bool = False  # rebuild the state of a DAGMan that died from the nodes log
    state_dir: str | None = None  # the embedded schedd's, for sub-DAG DAGMans (else inherited)
    priority: int = 0  # -priority: the enclosing SUBDAG nodes' priorities, added to every node's
    max_submit_attempts: int = 6  # DAGMAN_MAX_SUBMIT_ATTEMPTS
    outfile_dir: str | None = None  # -outfile_dir: where DAG.dagman.out goes (else beside the DAG)


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
