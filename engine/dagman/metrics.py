"""The ``<dag>.metrics`` file, byte for byte as DAGMan 23.9.6 writes it.

DAGMan prints this JSON with ``fprintf`` rather than a JSON library
(src/condor_dagman/dagman_metrics.cpp, ``DagmanMetrics::WriteMetricsFile`` at v23.9.6), so
the layout is fixed: 4-space indentation, ``"key":value`` with no space, times and duration
``%.3f``, the DAGMan ids as strings.  23.9.6 has no ``metrics_version`` or ``has_final_node``
and counts nodes under the old ``jobs`` names; the graph metrics appear only with
``DAGMAN_REPORT_GRAPH_METRICS``.  Real DAGMan overwrites the file in place; we replace it
atomically so a reader never sees half of one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from engine.atomic import write_atomically

DAGMAN_VERSION = "23.9.6"  # what "version" says: the DAGMan whose files we match


@dataclass(frozen=True, slots=True)
class GraphMetrics:
    """Written only when ``DAGMAN_REPORT_GRAPH_METRICS`` is true.

    DAGMan leaves height and width 0 when the DAG has a cycle (``Dag::ReportMetrics``).
    """

    height: int
    width: int
    num_edges: int
    num_vertices: int


@dataclass(frozen=True, slots=True)
class DagMetrics:
    """One DAGMan run's figures.

    ``jobs`` counts the non-SUBDAG nodes (FINAL, NOOP and PROVISIONER included, SERVICE
    excluded) and ``dag_jobs`` the SUBDAG EXTERNAL ones; ``*_succeeded`` counts the DONE
    nodes (those DONE from a rescue DAG too, as 23.9.6 counts them) and ``*_failed`` the failed ones.
    """

    start_time: float
    end_time: float
    exitcode: int
    dag_status: int  # DAG_Status, 0..6
    dagman_id: int | None = None  # the DAGMan job's cluster
    parent_dagman_id: int | None = None  # the parent DAGMan's cluster, for a sub-DAG
    rescue_dag_number: int = 0
    jobs: int = 0
    jobs_failed: int = 0
    jobs_succeeded: int = 0
    dag_jobs: int = 0
    dag_jobs_failed: int = 0
    dag_jobs_succeeded: int = 0
    graph: GraphMetrics | None = None
    version: str = DAGMAN_VERSION


def _id(cluster: int | None) -> str:
    return "" if cluster is None else str(cluster)


def format_metrics(m: DagMetrics) -> str:
    total_run = m.jobs_succeeded + m.jobs_failed + m.dag_jobs_succeeded + m.dag_jobs_failed
    lines = [
        '"client":"condor_dagman"',
        f'"version":"{m.version}"',
        '"type":"metrics"',
        f'"start_time":{m.start_time:.3f}',
        f'"end_time":{m.end_time:.3f}',
        f'"duration":{m.end_time - m.start_time:.3f}',
        f'"exitcode":{m.exitcode}',
        f'"dagman_id":"{_id(m.dagman_id)}"',
        f'"parent_dagman_id":"{_id(m.parent_dagman_id)}"',
        f'"rescue_dag_number":{m.rescue_dag_number}',
        f'"jobs":{m.jobs}',
        f'"jobs_failed":{m.jobs_failed}',
        f'"jobs_succeeded":{m.jobs_succeeded}',
        f'"dag_jobs":{m.dag_jobs}',
        f'"dag_jobs_failed":{m.dag_jobs_failed}',
        f'"dag_jobs_succeeded":{m.dag_jobs_succeeded}',
        f'"total_jobs":{m.jobs + m.dag_jobs}',
        f'"total_jobs_run":{total_run}',
    ]
    if m.graph is not None:
        lines += [
            f'"graph_height":{m.graph.height}',
            f'"graph_width":{m.graph.width}',
            f'"graph_num_edges":{m.graph.num_edges}',
            f'"graph_num_vertices":{m.graph.num_vertices}',
        ]
    lines.append(f'"DagStatus":{m.dag_status}')
    return "{\n" + ",\n".join("    " + line for line in lines) + "\n}\n"


def write_metrics(path: str | os.PathLike[str], m: DagMetrics) -> None:
    """Replace ``path`` atomically: a monitor polling the file never reads a torn one."""
    path = os.fspath(path)
    write_atomically(path, format_metrics(m))


def read_metrics(path: str | os.PathLike[str]) -> dict:
    """The metrics as a dict in file order (real DAGMan's files included)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)
