"""The JOBSTATE_LOG, line for line as DAGMan 23.9.6 writes it.

Source: src/condor_dagman/jobstate_log.cpp (``JobstateLog``) at v23.9.6, with the sequence
numbers and job tags of src/condor_dagman/job.cpp (``GetJobstateSequenceNum``,
``GetJobstateJobTag``).  A line is ``<time> <node> <event> <condorID> <jobTag> - <seq>``;
DAGMan's own lines are ``<time> INTERNAL *** <WHAT> [<arg>] ***``.

Each node attempt gets the next number of one counter, on its first line; a retry starts a
new attempt.  In recovery mode DAGMan replays the nodes log and so generates again the lines
it wrote before the crash; ``initialize_recovery`` reads the file first so that those lines
are not written twice (any line older than the last real one is dropped, and so is a line
of that same second already present).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

INTERNAL = "INTERNAL"
_LEADING_INT = re.compile(r"\s*[+-]?\d+")


def _now() -> int:
    return int(time.time())


def _condor_id(cluster: int | None, proc: int) -> str:
    return "-" if cluster is None or cluster == -1 else f"{cluster}.{proc}"


@dataclass(frozen=True, slots=True)
class JobstateLine:
    """One parsed line.

    For DAGMan's own lines ``node`` is ``INTERNAL``, ``event`` is DAGMAN_STARTED and so on,
    ``condor_id`` is the DAGMan job id or exit code ("" for the recovery lines) and ``seq`` 0.
    For JOB_SUCCESS and JOB_FAILURE ``condor_id`` holds the node's return value.
    """

    timestamp: int
    node: str
    event: str
    condor_id: str
    job_tag: str
    seq: int


def parse_line(line: str) -> JobstateLine | None:
    """None for a line DAGMan itself could not parse (``JobstateLog::ParseLine``)."""
    tokens = line.rstrip("\r\n").split(" ")
    if len(tokens) < 2 or not (m := _LEADING_INT.match(tokens[0])):
        return None
    timestamp, node = int(m.group()), tokens[1]
    if node == INTERNAL:
        words = tokens[3:-1] if tokens[-1] == "***" else tokens[3:]
        return JobstateLine(timestamp, node, words[0] if words else "",
                            " ".join(words[1:]), "", 0)
    tokens += [""] * (7 - len(tokens))
    seq = 0
    if len(tokens) > 6 and tokens[6]:
        if not (s := _LEADING_INT.match(tokens[6])):
            return None
        seq = int(s.group())
    return JobstateLine(timestamp, node, tokens[2], tokens[3], tokens[4], seq)


def read_jobstate_log(path: str | os.PathLike[str]) -> Iterator[JobstateLine]:
    """The lines DAGMan would accept, in file order."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            if (parsed := parse_line(line)) is not None:
                yield parsed


def job_tag(submit_text: str) -> str:
    """The jobTag column for a node whose submit file reads ``submit_text``.

    DAGMan scans the file's raw lines (``MultiLogFiles::loadValueFromSubFile``), not the
    parsed description: ``+job_tag_name`` (default ``+pegasus_site``) names the attribute
    whose value is the tag, quotes stripped, "-" when absent.  Keys keep their ``+``, so
    ``MY.pegasus_site`` does not count, and values with macros are ignored.
    """
    lines = submit_text.replace("\\\r\n", "").replace("\\\n", "").splitlines()

    def value(key: str) -> str:
        found = ""
        for line in lines:
            parts = [p.strip() for p in line.split("=")]
            parts = [p for p in parts if p]
            if len(parts) >= 2 and parts[0].lower() == key.lower():
                found = parts[1]
        return "" if "$" in found else _unquote(found)

    tag_name = value("+job_tag_name") or "+pegasus_site"
    return value(tag_name) or "-"


def _unquote(s: str) -> str:
    if not s:
        return s
    begin = 1 if s[0] == '"' else 0
    end = len(s) - 1 if s[-1] == '"' else len(s)
    return s[begin:end]


class JobstateLog:
    """Appends lines to one JOBSTATE_LOG; one instance per DAGMan run.

    ``tags`` maps node names to their jobTag (see :func:`job_tag`); nodes not in it get "-".
    Timestamps given as None (or 0) mean "now", as in DAGMan; the script and JOB_SUCCESS/
    FAILURE lines take the node's last job-event time, so that recovery regenerates them
    identically.  Every line is flushed at once.
    """

    def __init__(self, path: str | os.PathLike[str], tags: Mapping[str, str] | None = None) -> None:
        self.path = os.fspath(path)
        self.tags = dict(tags or {})
        self._file = None
        self._seq: dict[str, int] = {}
        self._next_seq = 1
        self._last_time = 0
        self._last_lines: set[str] = set()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> JobstateLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- starting up -----------------------------------------------------------------------

    def initialize_recovery(self) -> None:
        """Before replaying the nodes log: learn what the pre-crash run already wrote."""
        last, lines = 0, set()
        for raw in self._raw_lines():
            parsed = parse_line(raw)
            if parsed is None or parsed.node == INTERNAL:
                continue
            if parsed.timestamp > last:
                last, lines = parsed.timestamp, set()
            if parsed.timestamp == last:
                lines.add(raw)
        self._last_time, self._last_lines = last, lines

    def initialize_rescue(self) -> None:
        """When running a rescue DAG: continue the sequence numbers after the last one used."""
        numbers = (p.seq for raw in self._raw_lines() if (p := parse_line(raw)) is not None)
        self._next_seq = max(numbers, default=0) + 1

    def number(self, node: str) -> None:
        """The node's attempt takes the next sequence number now, if it has none yet: DAGMan
        numbers an attempt when it submits the job (or starts the PRE script), so nodes are
        numbered in submission order even when their first line is the SUBMIT event read later."""
        if node not in self._seq:
            self._seq[node] = self._next_seq
            self._next_seq += 1

    def restart_node(self, node: str) -> None:
        """A retry: the node's next line opens a new attempt with a new sequence number."""
        self._seq.pop(node, None)

    # -- DAGMan's own lines ----------------------------------------------------------------

    def dagman_started(self, cluster: int, proc: int = 0, now: int | None = None) -> None:
        self._write(now, f"{INTERNAL} *** DAGMAN_STARTED {cluster}.{proc} ***")

    def dagman_finished(self, exit_code: int, now: int | None = None) -> None:
        self._write(now, f"{INTERNAL} *** DAGMAN_FINISHED {exit_code} ***")

    def recovery_started(self, now: int | None = None) -> None:
        self._write(now, f"{INTERNAL} *** RECOVERY_STARTED ***")

    def recovery_finished(self, now: int | None = None) -> None:
        self._write(now, f"{INTERNAL} *** RECOVERY_FINISHED ***")

    # -- node lines ------------------------------------------------------------------------

    def job_event(self, node: str, event: str, cluster: int, proc: int, timestamp: int) -> None:
        """A user-log event DAGMan read for the node; ``event`` as ``JobEventType.name``
        (SUBMIT, EXECUTE, JOB_TERMINATED, POST_SCRIPT_TERMINATED, ...)."""
        self._node_line(timestamp, node, event.removeprefix("ULOG_"), _condor_id(cluster, proc))

    def job_success_or_failure(self, node: str, retval: int, last_event_time: int | None) -> None:
        """Once all the node's job procs have left the queue."""
        event = "JOB_SUCCESS" if retval == 0 else "JOB_FAILURE"
        self._node_line(last_event_time, node, event, str(retval))

    def script_started(self, node: str, script: str, last_event_time: int | None,
                       cluster: int | None = None, proc: int = 0) -> None:
        """``script`` is PRE, POST or HOLD (HOLD scripts are not logged).

        POST lines carry ``<cluster>.<proc>`` of the node's job ("-" if it never got one);
        DAGMan uses proc 0 except for NOOP nodes, where it passes the fake proc.
        """
        self._script_line(node, script, "STARTED", last_event_time, cluster, proc)

    def script_success_or_failure(self, node: str, script: str, retval: int,
                                  last_event_time: int | None, cluster: int | None = None,
                                  proc: int = 0) -> None:
        self._script_line(node, script, "SUCCESS" if retval == 0 else "FAILURE",
                          last_event_time, cluster, proc)

    def submit_failure(self, node: str, last_event_time: int | None) -> None:
        self._node_line(last_event_time, node, "SUBMIT_FAILURE", "-")

    # -- internals -------------------------------------------------------------------------

    def _script_line(self, node: str, script: str, what: str, timestamp: int | None,
                     cluster: int | None, proc: int) -> None:
        if script == "HOLD":
            return
        condor_id = _condor_id(cluster, proc) if script == "POST" else "-"
        self._node_line(timestamp, node, f"{script}_SCRIPT_{what}", condor_id)

    def _node_line(self, timestamp: int | None, node: str, event: str, condor_id: str) -> None:
        seq = self._seq.get(node)
        if seq is None:  # numbered on first use even if the line is then suppressed
            seq = self._seq[node] = self._next_seq
            self._next_seq += 1
        self._write(timestamp, f"{node} {event} {condor_id} {self.tags.get(node, '-')} - {seq}")

    def _write(self, timestamp: int | None, info: str) -> None:
        t = timestamp or _now()
        if t < self._last_time:
            return
        line = f"{t} {info}"
        if t == self._last_time and line in self._last_lines:
            return
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8", errors="surrogateescape")
        self._file.write(line + "\n")
        self._file.flush()

    def _raw_lines(self) -> Iterator[str]:
        if self._file is not None:
            self._file.flush()
        try:
            with open(self.path, encoding="utf-8", errors="surrogateescape") as f:
                for raw in f:
                    yield raw.rstrip("\r\n")
        except FileNotFoundError:
            return
