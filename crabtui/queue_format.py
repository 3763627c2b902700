"""condor_q's and condor_history's text layouts, for ``crabtui q`` and ``crabtui history``.

The default view groups jobs into batches (JobBatchName, or ``ID: <cluster>``, or a DAG's
``<file>+<cluster>``); ``-nobatch`` lists every job; ``-dag`` indents node jobs under their
DAGMan job as ``condor_q -dag -nobatch`` does.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence

import classad2

from engine.schedd.api import JobStatus

# What the batch and -nobatch tables read, so that a query can ask for just these.
TABLE_ATTRIBUTES = ("ClusterId", "ProcId", "Owner", "QDate", "JobStatus", "JobUniverse", "JobBatchName",
                    "DAGManJobId", "DAGNodeName", "TotalSubmitProcs", "DAG_NodesDone", "DAG_NodesTotal",
                    "RemoteWallClockTime", "JobCurrentStartDate", "JobPrio", "ImageSize", "Cmd", "Arguments", "Args")
TOTAL_STATES = (("completed", JobStatus.COMPLETED), ("removed", JobStatus.REMOVED), ("idle", JobStatus.IDLE),
                ("running", JobStatus.RUNNING), ("held", JobStatus.HELD), ("suspended", JobStatus.SUSPENDED))


def header(schedd_name: str, address: str, now: float) -> str:
    return f"-- Schedd: {schedd_name} : <{address}> @ {time.strftime('%m/%d/%y %H:%M:%S', time.localtime(now))}"


def totals(matched: Sequence[classad2.ClassAd], everyone: Sequence[classad2.ClassAd], owner: str) -> list[str]:
    """condor_q's closing lines: the query's jobs, the user's jobs, and all users' jobs."""
    mine = [ad for ad in everyone if ad.get("Owner") == owner]
    return [_total("query", matched), _total(owner, mine), _total("all users", everyone)]


def _total(label: str, ads: Sequence[classad2.ClassAd]) -> str:
    counts = Counter(ad["JobStatus"] for ad in ads)
    parts = ", ".join(f"{counts.get(status, 0)} {name}" for name, status in TOTAL_STATES)
    return f"Total for {label}: {len(ads)} jobs; {parts}"


def batch_table(ads: Sequence[classad2.ClassAd]) -> list[str]:
    """condor_q's default view: one row per batch."""
    batches: dict[str, list[classad2.ClassAd]] = {}
    owners: dict[str, str] = {}
    dag_ids = {ad["ClusterId"] for ad in ads if ad.get("JobUniverse") == 7 and "DAGManJobId" not in ad}
    for ad in ads:
        top = _top_dagman(ad, dag_ids)
        name = ad.get("JobBatchName") or (f"ID: {top}" if top is not None else f"ID: {ad['ClusterId']}")
        batches.setdefault(name, []).append(ad)
        owners.setdefault(name, ad.get("Owner", ""))
    held = any(ad["JobStatus"] == JobStatus.HELD for ad in ads)
    columns = ["OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE"] + (["HOLD"] if held or not ads else []) + [
        "TOTAL", "JOB_IDS"]
    rows = []
    for name, members in batches.items():
        jobs = [ad for ad in members if ad.get("JobUniverse") != 7]
        dagman = next((ad for ad in members if ad.get("JobUniverse") == 7), None)
        counts = Counter(ad["JobStatus"] for ad in jobs)
        if dagman is not None and "DAG_NodesTotal" in dagman:
            done, total = dagman.get("DAG_NodesDone", 0), dagman["DAG_NodesTotal"]
        else:
            total = max((ad.get("TotalSubmitProcs", 1) for ad in jobs), default=0)
            done = max(total - len(jobs), 0)
        row = [owners[name], name, _date(min(ad["QDate"] for ad in members)), _count(done),
               _count(counts.get(JobStatus.RUNNING, 0)), _count(counts.get(JobStatus.IDLE, 0))]
        if "HOLD" in columns:
            row.append(_count(counts.get(JobStatus.HELD, 0)))
        row += [_count(total), _job_ids(jobs or members)]
        rows.append(row)
    return _columns(columns, rows, right={"DONE", "RUN", "IDLE", "HOLD", "TOTAL"})


def job_table(ads: Sequence[classad2.ClassAd], now: float, dag: bool = False) -> list[str]:
    """condor_q -nobatch, and with ``dag`` the -dag tree of DAGMan jobs and their nodes."""
    ordered = _dag_order(ads) if dag else [(ad, 0) for ad in ads]
    rows = []
    for ad, depth in ordered:
        name = ad.get("Owner", "") if depth == 0 else " " * depth + "|-" + str(ad.get("DAGNodeName", ad["ClusterId"]))
        rows.append([f"{ad['ClusterId']}.{ad['ProcId']}", name, _date(ad["QDate"]), run_time(ad, now),
                     JobStatus(ad["JobStatus"]).letter, str(ad.get("JobPrio", 0)),
                     f"{ad.get('ImageSize', 0) / 1024:.1f}", command(ad)])
    label = "OWNER/NODENAME" if dag else "OWNER"
    return _columns(["ID", label, "SUBMITTED", "RUN_TIME", "ST", "PRI", "SIZE", "CMD"], rows, right={"RUN_TIME", "SIZE"})


def history_table(ads: Sequence[classad2.ClassAd]) -> list[str]:
    rows = [[f"{ad['ClusterId']}.{ad['ProcId']}", ad.get("Owner", ""), _date(ad["QDate"]),
             _duration(float(ad.get("RemoteWallClockTime", 0))), JobStatus(ad["JobStatus"]).letter,
             _date(ad.get("CompletionDate") or ad.get("EnteredCurrentStatus", 0)), command(ad)] for ad in ads]
    return _columns(["ID", "OWNER", "SUBMITTED", "RUN_TIME", "ST", "COMPLETED", "CMD"], rows, right={"RUN_TIME"})


def autoformat(ads: Sequence[classad2.ClassAd], attrs: Sequence[str]) -> list[str]:
    """condor_q -af: values separated by a space, strings unquoted, missing ones as ``undefined``."""
    lines = []
    for ad in ads:
        values = []
        for attr in attrs:
            value = ad.eval(attr) if attr in ad else None
            values.append("undefined" if value is None or isinstance(value, classad2.Value) else
                          str(value).lower() if isinstance(value, bool) else str(value))
        lines.append(" ".join(values))
    return lines


def run_time(ad: classad2.ClassAd, now: float) -> str:
    seconds = float(ad.get("RemoteWallClockTime", 0))
    if ad["JobStatus"] == JobStatus.RUNNING and "JobCurrentStartDate" in ad:
        seconds += max(0.0, now - ad["JobCurrentStartDate"])
    return _duration(seconds)


def command(ad: classad2.ClassAd) -> str:
    name = os.path.basename(ad.get("Cmd", ""))
    args = ad.get("Arguments") or ad.get("Args") or ""
    return f"{name} {args}".strip()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    return f"{days}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def _date(epoch: int) -> str:
    t = time.localtime(epoch)
    return f"{t.tm_mon}/{t.tm_mday} {t.tm_hour:02d}:{t.tm_min:02d}"


def _count(n: int) -> str:
    return str(n) if n else "_"


def _job_ids(ads: Sequence[classad2.ClassAd]) -> str:
    ids = sorted((ad["ClusterId"], ad["ProcId"]) for ad in ads)
    if not ids:
        return ""
    first, last = ids[0], ids[-1]
    if first == last:
        return f"{first[0]}.{first[1]}"
    if first[0] == last[0] and len(ids) == last[1] - first[1] + 1:
        return f"{first[0]}.{first[1]}-{last[1]}"
    return f"{first[0]}.{first[1]} ... {last[0]}.{last[1]}"


def _top_dagman(ad: classad2.ClassAd, dag_ids: set[int]) -> int | None:
    if ad.get("JobUniverse") == 7 and "DAGManJobId" not in ad:
        return ad["ClusterId"]
    parent = ad.get("DAGManJobId")
    return parent if parent in dag_ids else None


def _dag_order(ads: Sequence[classad2.ClassAd]) -> list[tuple[classad2.ClassAd, int]]:
    """Each job after its DAGMan job, indented one step per nesting level."""
    children: dict[int, list[classad2.ClassAd]] = {}
    clusters = {ad["ClusterId"] for ad in ads}
    roots = []
    for ad in ads:
        parent = ad.get("DAGManJobId")
        if isinstance(parent, int) and parent in clusters and parent != ad["ClusterId"]:
            children.setdefault(parent, []).append(ad)
        else:
            roots.append(ad)
    out: list[tuple[classad2.ClassAd, int]] = []

    def visit(ad: classad2.ClassAd, depth: int) -> None:
        out.append((ad, depth))
        if ad.get("JobUniverse") == 7 and ad["ProcId"] == 0:
            for child in children.get(ad["ClusterId"], []):
                visit(child, depth + 1)

    for ad in roots:
        visit(ad, 0)
    return out


def _columns(names: list[str], rows: list[list[str]], right: set[str]) -> list[str]:
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]

    def fmt(cells: list[str]) -> str:
        return " ".join(c.rjust(w) if names[i] in right else c.ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [fmt(names)] + [fmt(r) for r in rows]
