"""The ``condor_q -dag`` tree of a task: its DAGMan job, sub-DAGs and node jobs in the queue, each
with JobStatus and run time, and each DAG with its node counts.  Built once, then relabelled,
grown and pruned by job id on every refresh, so expanded branches and the cursor stay put."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from crabtui.snapshots import SCHEDULER_UNIVERSE, run_time
from crabtui.task_status import to_hms
from crabtui.widgets.states import Palette
from engine.schedd.api import JobStatus

_WORDS = {JobStatus.IDLE: ("idle", "plain"), JobStatus.RUNNING: ("running", "primary"),
          JobStatus.REMOVED: ("removed", "error"), JobStatus.COMPLETED: ("completed", "success"),
          JobStatus.HELD: ("held", "warning"), JobStatus.TRANSFERRING_OUTPUT: ("transferring", "primary"),
          JobStatus.SUSPENDED: ("suspended", "warning")}


def job_label(ad: dict[str, Any], now: float, palette: Palette) -> Text:
    """``12.0  Job3        R running       0:01:05  T2_CH_CERN``, and a DAG's node counts."""
    status = JobStatus(ad.get("JobStatus", 1))
    word, role = _WORDS[status]
    is_dag = ad.get("JobUniverse") == SCHEDULER_UNIVERSE
    name = ad.get("DAGNodeName") or (ad.get("JobBatchName") if is_dag else "") or ""
    text = Text(f"{ad['ClusterId']}.{ad['ProcId']:<4} ", no_wrap=True, end="")
    text.append(f"{'DAGMan ' if is_dag else ''}{name:<12} ", style="bold" if is_dag else "")
    text.append(f"{status.letter} {word:<12}", style=palette.style(role))
    text.append(f" {to_hms(run_time(ad, now)):>8}")
    if is_dag and "DAG_NodesTotal" in ad:
        counts = [f"{ad.get('DAG_NodesDone', 0)}/{ad['DAG_NodesTotal']} done"]
        for attr, what in (("DAG_NodesQueued", "queued"), ("DAG_NodesPrerun", "pre"), ("DAG_NodesPostrun", "post"),
                           ("DAG_NodesReady", "ready"), ("DAG_NodesFailed", "failed"), ("DAG_JobsHeld", "held")):
            if ad.get(attr):
                counts.append(f"{ad[attr]} {what}")
        text.append("  " + ", ".join(counts), style=palette.style("error") if ad.get("DAG_NodesFailed") else "")
        if ad.get("DAG_Status") == 6:
            text.append("  HALTED", style=f"reverse {palette.style('warning')}")
    else:
        site = ad.get("MATCH_GLIDEIN_CMSSite")
        if site:
            text.append(f"  {site}")
        if status == JobStatus.HELD and ad.get("HoldReason"):
            text.append(f"  {ad['HoldReason']}", style=palette.style("warning"))
    return text


class DagTree(Tree[str]):
    """Node data is the job id ``cluster.proc``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("queue", id=id)
        self.show_root = False
        self._job_nodes: dict[str, TreeNode[str]] = {}
        self._labels: dict[str, str] = {}
        self._empty: TreeNode[str] | None = None

    def update_queue(self, queue: Sequence[dict[str, Any]], now: float, palette: Palette, empty: str) -> None:
        """Show ``queue`` (DAGMan jobs before their nodes, as :func:`crabtui.snapshots.dag_jobs`
        orders them); ``empty`` says why there is nothing."""
        ids = {f"{ad['ClusterId']}.{ad['ProcId']}": ad for ad in queue}
        gone = sorted((j for j in self._job_nodes if j not in ids), key=lambda j: bool(self._job_nodes[j].children))
        for job in gone:  # node jobs before their DAGMan, whose removal takes its children along
            node = self._job_nodes.pop(job)
            self._labels.pop(job, None)
            if _attached(node):
                node.remove()
        if queue and self._empty is not None:
            self._empty.remove()
            self._empty = None
        for job, ad in ids.items():
            label = job_label(ad, now, palette)
            signature = label.plain + repr(label.spans)
            node = self._job_nodes.get(job)
            if node is None or not _attached(node):
                parent = self._job_nodes.get(f"{ad.get('DAGManJobId')}.0", self.root)
                if ad.get("JobUniverse") == SCHEDULER_UNIVERSE:
                    node = parent.add(label, data=job, expand=True)
                else:
                    node = parent.add_leaf(label, data=job)
                self._job_nodes[job] = node
            elif self._labels.get(job) != signature:
                node.set_label(label)
            self._labels[job] = signature
        if not queue:
            if self._empty is None:
                self._empty = self.root.add_leaf(empty)
            else:
                self._empty.set_label(empty)


def _attached(node: TreeNode) -> bool:
    """Whether the node is still in the tree (removing a node removes its children with it)."""
    parent = node.parent
    return parent is not None and node in parent.children
