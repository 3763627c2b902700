"""Running one DAG on both backends and reducing DAGMan's files to what must agree.

Ids and times differ between two runs by nature: cluster ids become ``c1, c2...`` in order of
first appearance, and times are dropped.  What is left (node states, retries, return values,
sequence numbers, DAG status and exit codes) is what a user reads in these files.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import htcondor2

from engine.dagman.jobstate_log import read_jobstate_log
from engine.dagman.metrics import read_metrics
from engine.dagman.node_status import read_node_status
from installed import CRABTUI

# A node job that runs until the test creates go.<node>.
GATED = ("executable = /bin/sh\n"
         "arguments = \"-c 'while [ ! -e go.$(JOB) ]; do sleep 0.2; done'\"\n"
         "queue\n")

_JOB_ID = re.compile(r"\b(\d+)\.(\d+)(?:\.(\d+))?\b")
VOLATILE_METRICS = {"client", "version", "start_time", "end_time", "duration", "dagman_id", "parent_dagman_id"}


def crabtui(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([CRABTUI, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def submit(dag: Path, backend_args: list[str], env: dict[str, str] | None = None, *options: str) -> int:
    result = crabtui(*backend_args, "dag", "submit", *options, dag.name, cwd=dag.parent, env=env)
    assert result.returncode == 0, result.stderr
    return int(re.search(r"submitted to cluster (\d+)\.", result.stdout).group(1))


def dagman_exit(dag: Path, timeout: float = 240) -> int:
    """Wait for the DAGMan job's own log to say it terminated; its return value."""
    log = htcondor2.JobEventLog(str(dag) + ".dagman.log")
    for event in log.events(stop_after=timeout):
        if event.type == htcondor2.JobEventType.JOB_TERMINATED:
            return int(event.get("ReturnValue", -1))
        if event.type == htcondor2.JobEventType.JOB_ABORTED:
            return -1
    raise AssertionError(f"{dag}: DAGMan did not finish within {timeout} s")


class Ids:
    """Cluster ids numbered in order of first appearance, per DAG run."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        def rename(m: re.Match) -> str:
            cluster = m.group(1)
            if cluster == "0":  # NOOP and PRE_SKIP fake ids are the same everywhere
                return m.group(0)
            name = self.names.setdefault(cluster, f"c{len(self.names) + 1}")
            return name + m.group(0)[len(cluster):]
        return _JOB_ID.sub(rename, text)


def metrics(dag: Path) -> dict:
    data = read_metrics(str(dag) + ".metrics")
    return {k: v for k, v in data.items() if k not in VOLATILE_METRICS}


def rescue(dag: Path, number: int = 1) -> list[str]:
    """A rescue DAG (``dag`` a DAG file, or the rescue or save file itself) without its creation
    time, and with the DAG's directory written ``<dir>`` (a full rescue DAG's CONFIG line)."""
    path = dag if ".rescue" in dag.name or dag.name.endswith(".save") else Path(f"{dag}.rescue{number:03d}")
    if not path.exists():
        return []
    return [line.replace(str(dag.parent), "<dir>") for line in path.read_text().splitlines()
            if not line.startswith("# Created ")]


def files_under(directory: Path, part: str) -> list[str]:
    """Relative paths of the files under ``directory`` whose name holds ``part`` (not .old ones)."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob(f"*{part}*")
                  if p.is_file() and not p.name.endswith(".old"))


_IDS_IN_SCRIPTS = re.compile(r"\b(JOBID|CLUSTERID|DAGID)=\d+")


def scripts_and_runs(directory: Path, ordered: bool = False) -> dict[str, list[str]]:
    """What every runs.txt and scripts.txt under ``directory`` says (sorted: nodes run
    concurrently, unless ``ordered``), with the job ids scripts print set aside."""
    seen = {}
    for path in sorted(directory.rglob("*.txt")):
        if path.name in ("runs.txt", "scripts.txt"):
            lines = [_IDS_IN_SCRIPTS.sub(r"\1=ID", line) for line in path.read_text().splitlines()]
            seen[str(path.relative_to(directory))] = lines if ordered else sorted(lines)
    return seen


def dagman_out(dag: Path, prefixes: tuple[str, ...]) -> list[str]:
    """dagman.out's lines that start with one of ``prefixes`` (after the time), in order,
    cluster ids renumbered in order of appearance, event lines without their event's time."""
    ids = Ids()
    lines = Path(f"{dag}.dagman.out").read_text().splitlines()
    return [re.sub(r"HTCondor ID (\d+)", lambda m: "HTCondor ID " + ids(m.group(1) + ".0")[:-2],
                   ids(_EVENT_TIME.sub("", line[18:])))
            for line in lines if line[18:].startswith(prefixes)]


_EVENT_TIME = re.compile(r" \{\d\d/\d\d/\d\d \d\d:\d\d:\d\d\}")


def jobstate(path: Path, timed: bool = False) -> dict[str, list[str]]:
    """Each node's lines in order (nodes run concurrently, so only per-node order is fixed), its
    clusters numbered in their order within the node.  ``timed``: the node's lines sorted and
    without sequence numbers, for DAGs whose interleaving depends on timing (procs of one cluster,
    independent nodes racing)."""
    ids: dict[str, Ids] = {}
    lines: dict[str, list[str]] = {}
    for line in read_jobstate_log(path):
        condor_id = line.condor_id
        if line.node == "INTERNAL":
            condor_id = "" if line.event == "DAGMAN_STARTED" else condor_id
        elif _JOB_ID.fullmatch(condor_id):
            condor_id = ids.setdefault(line.node, Ids())(condor_id)
        seq = "" if timed else line.seq
        lines.setdefault(line.node, []).append(f"{line.event} {condor_id} {line.job_tag} {seq}".rstrip())
    return {node: sorted(entries) for node, entries in lines.items()} if timed else lines


def node_status(path: Path) -> list[dict]:
    ads = []
    for ad in read_node_status(str(path)):
        kept = {k: ad[k] for k in ad.keys() if k not in ("Timestamp", "EndTime", "NextUpdate")}
        if "StatusDetails" in kept:
            kept["StatusDetails"] = _JOB_ID.sub("ID", str(kept["StatusDetails"]))
        ads.append(kept)
    return ads
