"""A job outside CRAB tasks and DAGs, for its drilldown from the queue view: its ClassAd
(``condor_q -l`` or ``condor_history -l``) and the ends of its stdout, stderr and user log,
read as a DAG node's drilldown reads its job's (:func:`crabtui.dag_view.node_snapshot`), so both
say the same of a file this machine cannot read; of the log, the job's own events.  Nothing here
imports textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crabtui.dag_view import node_snapshot
from crabtui.snapshots import job_ad
from engine.schedd.local.userlog import events_by_job


@dataclass(frozen=True)
class CondorJobSnapshot:
    """A job outside CRAB tasks and DAGs, for its drilldown: its ClassAd (condor_q -l or
    condor_history -l) and the ends of its stdout, stderr and user log (its own events)."""

    id: str
    ad_text: str  # "" if it is neither in the queue nor in the history
    where: str  # "queue", "history" or ""
    status: int | None
    hold_reason: str
    files: dict[str, str]  # tab -> path: stdout, stderr, log
    texts: dict[str, str | None]  # tab -> the file's end (None: it cannot be read)
    notes: dict[str, str]  # tab -> why there is no text
    at: float


def condor_job_snapshot(backend: Any, job: str, now: float) -> CondorJobSnapshot:
    """Job ``cluster.proc``'s ClassAd and files, as a DAG node's drilldown reads its job's."""
    with backend.schedd() as schedd:
        ad, where = job_ad(schedd, job)
    read = node_snapshot(0, job, None, ad, where, now)
    files = {tab: path for tab, path in read.files.items() if tab in ("stdout", "stderr", "log")}
    texts = {tab: read.texts.get(tab) for tab in ("stdout", "stderr", "log")}
    notes = {tab: note for tab, note in read.notes.items() if tab in ("stdout", "stderr", "log")}
    if "log" in files and texts["log"] is not None:
        cluster, _, proc = job.partition(".")
        # its own events: a log of a cluster of 10,000 procs holds 10,000 others' submit events
        texts["log"] = "".join(events_by_job(files["log"]).get((int(cluster), int(proc or 0)), []))
        if not texts["log"]:
            notes["log"] = f"{files['log']} holds no event of this job yet"
    elif ad is None:
        notes = {tab: f"job {job} is neither in the queue nor in the history" for tab in ("stdout", "stderr", "log")}
    status = ad.get("JobStatus") if ad is not None else None
    return CondorJobSnapshot(job, read.ad_text, where, status, read.hold_reason, files, texts, notes, now)
