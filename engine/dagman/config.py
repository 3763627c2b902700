"""DAGMan's options (:class:`Options`) and where its configuration knobs come from: a per-DAG
config file (``CONFIG`` in the DAG or ``-config``), then ``_CONDOR_<KNOB>`` environment
variables, as HTCondor reads them.

:data:`KNOBS` holds every ``DAGMAN_*`` knob of HTCondor 23.9.6 that changes what this DAGMan
does, with DAGMan's default and the range ``dagman_main.cpp`` reads it in.  Any other
``DAGMAN_`` knob is accepted and ignored, as a real pool's configuration holds many (the README
lists them and why they do not apply).  Command-line options override all of these
(condor_submit_dag passes them on to DAGMan's argv).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from engine.dag import DagError, Diagnostic, Location

DEFAULT_NODE_LOG = "@(DAG_DIR)/@(DAG_FILE).nodes.log"


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
    rescue_notes: tuple[str, ...] = ()  # dagman.out's lines on the rescue DAGs renamed and the one run
    recovery: bool = False  # rebuild the state of a DAGMan that died from the nodes log
    # dagman.out's notes on the throttles, before the DAG is read: (text, DAGMAN_USE_STRICT level or 0)
    startup_notes: tuple[tuple[str, int], ...] = ()
    found_lock: tuple[str, int] | None = None  # the lock file a DAGMan left behind, and its pid (0: unreadable)
    config_file: str | None = None  # the DAG's CONFIG file or -config's, absolute (DAGMAN_CONFIG_FILE)
    # the knobs' values before the command line's options, which dagman.out's "setting:" lines show
    configured: dict[str, object] | None = None
    state_dir: str | None = None  # the embedded schedd's, for sub-DAG DAGMans (else inherited)
    argv: tuple[str, ...] = ()  # DAGMan's command line after its name, which dagman.out lists
    priority: int = 0  # -priority or DAGMAN_DEFAULT_PRIORITY, added to every node's priority
    force: bool = False  # -force: passed on to the condor_submit_dag -no_submit of each SUBDAG node
    max_submit_attempts: int = 6  # DAGMAN_MAX_SUBMIT_ATTEMPTS
    # the ready queue and submission
    submit_depth_first: bool = False  # DAGMAN_SUBMIT_DEPTH_FIRST
    max_submits_per_interval: int = 100  # DAGMAN_MAX_SUBMITS_PER_INTERVAL
    # Counted per scan interval, as DAGMan's timer-driven cycles count them, once either knob is
    # set (or -maxidle lowered it); else per cycle, and a cycle stopped by it is followed at once.
    paced_submits: bool = False
    aggressive_submit: bool = False  # DAGMAN_AGGRESSIVE_SUBMIT
    submit_delay: int = 0  # DAGMAN_SUBMIT_DELAY, seconds before each submit
    retry_submit_first: bool = True  # DAGMAN_RETRY_SUBMIT_FIRST
    retry_node_first: bool = False  # DAGMAN_RETRY_NODE_FIRST
    prohibit_multi_jobs: bool = False  # DAGMAN_PROHIBIT_MULTI_JOBS
    max_job_holds: int = 100  # DAGMAN_MAX_JOB_HOLDS, 0 = unlimited
    put_failed_jobs_on_hold: bool = False  # DAGMAN_PUT_FAILED_JOBS_ON_HOLD
    generate_subdag_submits: bool = True  # DAGMAN_GENERATE_SUBDAG_SUBMITS
    # what node jobs are submitted with
    default_append_vars: bool = False  # DAGMAN_DEFAULT_APPEND_VARS
    node_record_retry: bool = False  # DAGMAN_NODE_RECORD_INFO = Retry
    record_machine_attrs: str = ""  # DAGMAN_RECORD_MACHINE_ATTRS
    suppress_notification: bool = False  # DAGMAN_SUPPRESS_NOTIFICATION
    suppress_job_logs: bool = False  # DAGMAN_SUPPRESS_JOB_LOGS
    hold_claim_time: int = 20  # DAGMAN_HOLD_CLAIM_TIME
    default_node_log: str = DEFAULT_NODE_LOG  # DAGMAN_DEFAULT_NODE_LOG
    # rescue DAGs, checks and reports
    max_rescue_num: int = 100  # DAGMAN_MAX_RESCUE_NUM, 0 = no rescue DAG
    write_partial_rescue: bool = True  # DAGMAN_WRITE_PARTIAL_RESCUE
    reset_retries_upon_rescue: bool = True  # DAGMAN_RESET_RETRIES_UPON_RESCUE
    auto_rescue: bool = True  # DAGMAN_AUTO_RESCUE
    use_strict: int = 1  # DAGMAN_USE_STRICT: warnings of this severity or worse are fatal
    abort_duplicates: bool = True  # DAGMAN_ABORT_DUPLICATES
    allow_events: int = 114  # DAGMAN_ALLOW_EVENTS
    abort_on_scary_submit: bool = True  # DAGMAN_ABORT_ON_SCARY_SUBMIT
    pending_report_interval: int = 600  # DAGMAN_PENDING_REPORT_INTERVAL
    verbosity: int = 3  # DAGMAN_VERBOSITY
    remove_node_jobs: bool = True  # DAGMAN_REMOVE_NODE_JOBS
    report_graph_metrics: bool = False  # DAGMAN_REPORT_GRAPH_METRICS
    startup_cycle_detect: bool = False  # DAGMAN_STARTUP_CYCLE_DETECT
    use_join_nodes: bool = True  # DAGMAN_USE_JOIN_NODES
    queue_update_interval: int = 1  # DAGMAN_QUEUE_UPDATE_INTERVAL (DAGMan's default is 300: ours keeps q current)
    save_file: str | None = None  # -load_save: the save point file to start from
    outfile_dir: str | None = None  # -outfile_dir: where DAG.dagman.out goes (else beside the DAG)


class Knob(NamedTuple):
    field: str
    kind: type
    low: int | None = None  # DAGMan's accepted range (param_integer's bounds)
    high: int | None = None


KNOBS: dict[str, Knob] = {
    "DAGMAN_MAX_JOBS_SUBMITTED": Knob("max_jobs", int, 0),
    "DAGMAN_MAX_JOBS_IDLE": Knob("max_idle", int, 0),
    "DAGMAN_MAX_PRE_SCRIPTS": Knob("max_pre", int, 0),
    "DAGMAN_MAX_POST_SCRIPTS": Knob("max_post", int, 0),
    "DAGMAN_MAX_HOLD_SCRIPTS": Knob("max_hold", int, 0),
    "DAGMAN_ALWAYS_RUN_POST": Knob("always_run_post", bool),
    "DAGMAN_USER_LOG_SCAN_INTERVAL": Knob("scan_interval", float, 0),
    "DAGMAN_MAX_SUBMIT_ATTEMPTS": Knob("max_submit_attempts", int, 1, 16),
    "DAGMAN_SUBMIT_DEPTH_FIRST": Knob("submit_depth_first", bool),
    "DAGMAN_MAX_SUBMITS_PER_INTERVAL": Knob("max_submits_per_interval", int, 1, 1000),
    "DAGMAN_AGGRESSIVE_SUBMIT": Knob("aggressive_submit", bool),
    "DAGMAN_SUBMIT_DELAY": Knob("submit_delay", int, 0),
    "DAGMAN_DEFAULT_PRIORITY": Knob("priority", int),
    "DAGMAN_RETRY_SUBMIT_FIRST": Knob("retry_submit_first", bool),
    "DAGMAN_RETRY_NODE_FIRST": Knob("retry_node_first", bool),
    "DAGMAN_PROHIBIT_MULTI_JOBS": Knob("prohibit_multi_jobs", bool),
    "DAGMAN_MAX_JOB_HOLDS": Knob("max_job_holds", int, 0, 1_000_000),
    "DAGMAN_PUT_FAILED_JOBS_ON_HOLD": Knob("put_failed_jobs_on_hold", bool),
    "DAGMAN_GENERATE_SUBDAG_SUBMITS": Knob("generate_subdag_submits", bool),
    "DAGMAN_DEFAULT_APPEND_VARS": Knob("default_append_vars", bool),
    "DAGMAN_NODE_RECORD_INFO": Knob("node_record_retry", str),
    "DAGMAN_RECORD_MACHINE_ATTRS": Knob("record_machine_attrs", str),
    "DAGMAN_SUPPRESS_NOTIFICATION": Knob("suppress_notification", bool),
    "DAGMAN_SUPPRESS_JOB_LOGS": Knob("suppress_job_logs", bool),
    "DAGMAN_HOLD_CLAIM_TIME": Knob("hold_claim_time", int, 0, 3600),
    "DAGMAN_DEFAULT_NODE_LOG": Knob("default_node_log", str),
    "DAGMAN_MAX_RESCUE_NUM": Knob("max_rescue_num", int, 0, 999),
    "DAGMAN_WRITE_PARTIAL_RESCUE": Knob("write_partial_rescue", bool),
    "DAGMAN_RESET_RETRIES_UPON_RESCUE": Knob("reset_retries_upon_rescue", bool),
    "DAGMAN_AUTO_RESCUE": Knob("auto_rescue", bool),
    "DAGMAN_USE_STRICT": Knob("use_strict", int, 0, 3),
    "DAGMAN_ABORT_DUPLICATES": Knob("abort_duplicates", bool),
    "DAGMAN_ALLOW_EVENTS": Knob("allow_events", int),
    "DAGMAN_ABORT_ON_SCARY_SUBMIT": Knob("abort_on_scary_submit", bool),
    "DAGMAN_PENDING_REPORT_INTERVAL": Knob("pending_report_interval", int),
    "DAGMAN_VERBOSITY": Knob("verbosity", int, 0, 7),
    "DAGMAN_REMOVE_NODE_JOBS": Knob("remove_node_jobs", bool),
    "DAGMAN_REPORT_GRAPH_METRICS": Knob("report_graph_metrics", bool),
    "DAGMAN_STARTUP_CYCLE_DETECT": Knob("startup_cycle_detect", bool),
    "DAGMAN_USE_JOIN_NODES": Knob("use_join_nodes", bool),
    "DAGMAN_QUEUE_UPDATE_INTERVAL": Knob("queue_update_interval", int, 1),
}
# The order dagman.out lists the settings in (dagman_main.cpp ``Dagman::Config``).
SETTINGS_ORDER = (
    "DAGMAN_USE_STRICT", "DAGMAN_VERBOSITY", "DAGMAN_SUBMIT_DELAY", "DAGMAN_MAX_SUBMIT_ATTEMPTS",
    "DAGMAN_STARTUP_CYCLE_DETECT", "DAGMAN_MAX_SUBMITS_PER_INTERVAL", "DAGMAN_AGGRESSIVE_SUBMIT",
    "DAGMAN_USER_LOG_SCAN_INTERVAL", "DAGMAN_QUEUE_UPDATE_INTERVAL", "DAGMAN_DEFAULT_PRIORITY",
    "DAGMAN_SUPPRESS_NOTIFICATION", "DAGMAN_ALLOW_EVENTS", "DAGMAN_RETRY_SUBMIT_FIRST", "DAGMAN_RETRY_NODE_FIRST",
    "DAGMAN_MAX_JOBS_IDLE", "DAGMAN_MAX_JOBS_SUBMITTED", "DAGMAN_MAX_PRE_SCRIPTS", "DAGMAN_MAX_POST_SCRIPTS",
    "DAGMAN_MAX_HOLD_SCRIPTS", "DAGMAN_PROHIBIT_MULTI_JOBS", "DAGMAN_SUBMIT_DEPTH_FIRST",
    "DAGMAN_ALWAYS_RUN_POST", "DAGMAN_DEFAULT_APPEND_VARS", "DAGMAN_ABORT_DUPLICATES",
    "DAGMAN_ABORT_ON_SCARY_SUBMIT", "DAGMAN_PENDING_REPORT_INTERVAL", "DAGMAN_AUTO_RESCUE",
    "DAGMAN_MAX_RESCUE_NUM", "DAGMAN_WRITE_PARTIAL_RESCUE", "DAGMAN_DEFAULT_NODE_LOG",
    "DAGMAN_GENERATE_SUBDAG_SUBMITS", "DAGMAN_MAX_JOB_HOLDS", "DAGMAN_HOLD_CLAIM_TIME", "DAGMAN_SUPPRESS_JOB_LOGS",
    "DAGMAN_REMOVE_NODE_JOBS",
)
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
    """Options fields set by the environment and then the config file, typed; errors name the knob.

    As in HTCondor, the DAG's config file is read after the environment's ``_CONDOR_``
    settings, so it wins (the tutorial's order, lowest first: configuration files, environment
    variables, the DAG's CONFIG file, the command line)."""
    raw: dict[str, tuple[str, Location]] = {}
    for key, value in environ.items():
        if key.upper().startswith("_CONDOR_DAGMAN_"):
            raw[key[len("_CONDOR_"):].upper()] = (value, Location(f"environment variable {key}"))
    if config_file:
        raw.update(read_config(config_file))
    values: dict[str, object] = {}
    for knob, spec in KNOBS.items():
        if knob not in raw:
            continue
        text, where = raw[knob][0].strip(), raw[knob][1]
        values[spec.field] = _value(knob, spec, text, where)
    return values


def _value(knob: str, spec: Knob, text: str, where: Location) -> object:
    if spec.field == "node_record_retry":  # a list of what to record; 23.9.6 knows "Retry"
        return "retry" in {item.strip().lower() for item in text.replace(",", " ").split()}
    if spec.kind is str:
        return text
    try:
        if spec.kind is bool:
            if text.lower() not in _TRUE + _FALSE:
                raise ValueError
            return text.lower() in _TRUE
        value = spec.kind(text)
        if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
            raise ValueError
        return value
    except ValueError:
        if spec.kind is bool:
            expected = "True or False"
        elif spec.high is not None:
            expected = f"a number from {spec.low} to {spec.high}"
        elif spec.low is not None:
            expected = f"a number no less than {spec.low}"
        else:
            expected = "a whole number"
        raise DagError([Diagnostic(where, f"{knob} = {text!r}: expected {expected}")]) from None


def config_file(in_dag: str | None, option: str | None, dag_file: str) -> str | None:
    """The DAG's CONFIG file, relative to the DAG's directory, or -config's; both must agree,
    and the DAG's must exist."""
    from_dag = os.path.join(os.path.dirname(dag_file), in_dag) if in_dag else None
    if from_dag and option and os.path.abspath(from_dag) != os.path.abspath(option):
        raise DagError([Diagnostic(Location(dag_file), f"CONFIG {in_dag} and -config {option} name different "
                                   "files; DAGMan takes one config file: drop one of them")])
    if from_dag and not os.path.isfile(from_dag):
        raise DagError([Diagnostic(Location(dag_file), f"CONFIG {in_dag}: there is no such file {from_dag}; "
                                   "name the DAGMan config file relative to the DAG file's directory")])
    return from_dag or option
