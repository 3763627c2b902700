"""``crabtui dag status``: a DAG's progress from its DAGMan job's ad, as ``htcondor dag status``
prints it (HTCondor's htcondor_cli/dagman.py), without its slips: a day reads ``1 day and 01:01:01``
rather than 23.9.6's ``1 day01:01:01`` (or newer versions' `` and 00:00:49`` under a day), and the
status sentences are spelled right."""

from __future__ import annotations

import math
import os
from datetime import datetime

import classad2

from engine.schedd.api import JobStatus

STATUS_SENTENCES = {
    0: "is running normally.",
    1: "had an error occur.",
    2: "had at least one node fail.",
    3: "is aborting because it received a DAG abort value.",
    4: "has received a signal to be removed.",
    5: "has detected a cycle.",
    6: "has been halted.",
}
ENDED_SENTENCES = {
    0: "completed successfully.",
    1: "ended on an error.",
    2: "ended with at least one node failed.",
    3: "was aborted by a DAG abort value.",
    4: "was removed.",
    5: "ended on a cycle.",
    6: "ended halted; submitting it again runs its rescue DAG.",
}
"""How a DAG whose DAGMan has left the queue ended, by DAG_Status: htcondor dag status says
"running normally" of every DAG that succeeded."""
_JOB_STATES = {1: "idle", 2: "running", 3: "removed from the queue", 5: "held", 6: "transferring output",
               7: "suspended"}


def duration(seconds: float) -> str:
    """``1 day and 01:01:01`` or ``00:00:49``."""
    days, rest = divmod(int(max(seconds, 0)), 86400)
    hours, rest = divmod(rest, 3600)
    clock = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    if not days:
        return clock
    return f"{days} day{'s' if days > 1 else ''} and {clock}"


def _count(n: int, past: bool = False) -> str:
    verb = ("have" if past else "are") if n > 1 else ("has" if past else "is")
    return f"{n:3d} {verb}"


def fresh_ad(ad: classad2.ClassAd) -> tuple[classad2.ClassAd, str]:
    """The DAGMan job's ad with what is fresher than it: the node and job counts and DAG status
    of its dagman.out (when this machine can read it), and DAG status 6 while its halt file exists;
    and, for a DAGMan that exited before any node, the error its dagman.out gives ("" if none)."""
    from crabtui.dag_view import dag_file_of, dagman_out_of
    from engine.dagman.halt import is_halted
    from engine.dagman.progress import DagWatcher

    values = {k: ad.eval(k) for k in ad.keys()}
    dag_file = dag_file_of(values)
    if dag_file is None:
        return ad, ""
    fresh = classad2.ClassAd()
    fresh.update(ad)
    progress = DagWatcher(dag_file, dagman_out_of(values, dag_file), values.get("ClusterId")).read(
        left_queue=values.get("JobStatus") in (JobStatus.REMOVED, JobStatus.COMPLETED))
    # a dagman.out whose last run began before this job was queued is an earlier DAGMan's (its
    # file's times are whole seconds)
    earlier = progress.started_at is not None and progress.started_at < values.get("QDate", 0) - 1
    # a DAGMan that failed before its first node: the DAG file's nodes (which this machine may
    # read where that DAGMan could not) say nothing of its run
    refused = progress.ended and progress.exit_status != 0 and not any(
        progress.counts.get(word) for word in ("done", "pre", "queued", "post", "failed", "futile"))
    if not progress.read_error and progress.started_at is not None and progress.nodes and not earlier \
            and not refused:
        counts = progress.counts
        for word, attr in (("done", "Done"), ("pre", "Prerun"), ("queued", "Queued"), ("post", "Postrun"),
                           ("ready", "Ready"), ("unready", "Unready"), ("failed", "Failed"), ("futile", "Futile")):
            fresh[f"DAG_Nodes{attr}"] = counts.get(word, 0)
        fresh["DAG_NodesTotal"] = progress.total
        if "DAG_JobsSubmitted" in ad:  # a DAGMan that has written its ad once: the counts it writes next
            for word, n in progress.jobs.items():
                fresh[f"DAG_Jobs{word.title()}"] = n
        if progress.dag_status is not None:
            fresh["DAG_Status"] = progress.dag_status
    if ad.get("JobStatus") == JobStatus.RUNNING and is_halted(dag_file):
        fresh["DAG_Status"] = 6
    start_error = progress.error if progress.ended and (refused or not progress.nodes) and not earlier else ""
    return fresh, start_error


def format_dag_status(ad: classad2.ClassAd, now: float, width: int = 50, start_error: str = "") -> str:
    """``start_error``: why DAGMan could not start the DAG, for a DAGMan job that ended before
    its first node (htcondor dag status says only "completed" and its date)."""
    from crabtui.dag_view import dag_file_of

    cluster = ad["ClusterId"]
    own_file = dag_file_of({k: ad.eval(k) for k in ad.keys()})
    if "JobBatchName" in ad and not ("DAGManJobId" in ad and own_file):
        dag_file = str(ad["JobBatchName"]).rsplit("+", 1)[0]
    else:  # a sub-DAG's DAGMan has its top DAG's batch name; DAGMan names its batch once it has
        # read the DAG: not a DAG it could not start
        dag_file = os.path.basename(own_file or "UNKNOWN")

    def get(attr: str) -> int:
        return int(ad.get(attr, 0) or 0)

    lines = []
    status = JobStatus(ad["JobStatus"])
    if status is JobStatus.RUNNING:
        if get("DAG_InRecovery"):
            lines.append(f"DAG {cluster} [{dag_file}] is in recovery mode and attempting to restore previous progress.")
        else:
            state = "halted" if get("DAG_Status") == 6 else "running"
            lines.append(f"DAG {cluster} [{dag_file}] has been {state} for "
                         f"{duration(now - get('JobStartDate'))}")
    elif status is JobStatus.COMPLETED:
        when = datetime.fromtimestamp(get("EnteredCurrentStatus")).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"DAG {cluster} [{dag_file}] completed {when}")
        code = get("ExitCode")
        if not get("DAG_NodesTotal") and code:
            lines.append(f"DAGMan exited with status {code} before running any node"
                         + (f": {start_error}" if start_error else "; its dagman.out says why"))
    else:
        lines.append(f"DAG {cluster} [{dag_file}] has been {_JOB_STATES.get(int(status), 'idle')} for "
                     f"{duration(now - get('EnteredCurrentStatus'))}")
        if status is JobStatus.HELD:
            lines.append(f"Hold Reason: {ad.get('HoldReason', '')}")
    if "DAG_JobsSubmitted" in ad:
        submitted, idle, held = get("DAG_JobsSubmitted"), get("DAG_JobsIdle"), get("DAG_JobsHeld")
        running, completed = get("DAG_JobsRunning"), get("DAG_JobsCompleted")
        removed = 0
        if status in (JobStatus.COMPLETED, JobStatus.REMOVED):  # its ad's last counts: they left the queue with it
            removed, idle, held, running = idle + held + running, 0, 0, 0
        lines.append(f"DAG has submitted {submitted} job(s), of which:")
        for n, what in ((idle, "submitted and waiting for resources."), (held, "held."), (running, "running.")):
            if n > 0:
                lines.append(f"\t    {_count(n)} {what}")
        for n, what in ((completed, "completed."), (removed, "been removed."),
                        (submitted - removed - idle - held - running - completed, "failed.")):
            if n > 0:
                lines.append(f"\t    {_count(n, past=True)} {what}")
    total = get("DAG_NodesTotal")
    if total:
        lines += _node_lines(ad, get, total, width, ended=status in (JobStatus.COMPLETED, JobStatus.REMOVED))
    return "\n".join(lines)


def _node_lines(ad, get, total: int, width: int, ended: bool) -> list[str]:
    done, pre, queued, post = get("DAG_NodesDone"), get("DAG_NodesPrerun"), get("DAG_NodesQueued"), get("DAG_NodesPostrun")
    ready, unready, futile, failed = get("DAG_NodesReady"), get("DAG_NodesUnready"), get("DAG_NodesFutile"), get("DAG_NodesFailed")
    running = pre + queued + post
    lines = [f"DAG contains {total} node(s) total, of which:"]
    if done:
        lines.append(f"\t[#] {_count(done, past=True)} completed.")
    if running:
        parts = [f"{n} {what}{'s' if n > 1 else ''}" for n, what in
                 ((pre, "pre-script"), (queued, "job"), (post, "post-script")) if n]
        lines.append(f"\t[=] {_count(running)} running: {', '.join(parts)}.")
    if ready:
        lines.append(f"\t[»] {_count(ready)} ready to start.")
    if unready:
        lines.append(f"\t[-] {_count(unready)} waiting on other nodes to finish.")
    if futile:
        lines.append(f"\t[!] {futile:3d} will never run.")
    if failed:
        lines.append(f"\t[!] {_count(failed, past=True)} failed.")
    bar_width = max(width - 2, 10)
    parts = {char_key: math.ceil(n / total * bar_width) for char_key, n in
             (("#", done), ("=", running), ("»", ready), ("-", unready), ("!f", futile), ("!", failed))}
    largest = max(parts, key=lambda k: parts[k])
    parts[largest] += max(bar_width - sum(parts.values()), 0)
    bar = "".join(key[0] * n for key, n in parts.items())
    if ended:
        dag_status = get("DAG_Status")
        if dag_status == 0 and ad.get("JobStatus") == JobStatus.REMOVED:
            dag_status = 4  # DAGMan had stopped (its job held) before the removal: its last word was OK
        lines.append(f"DAG {ENDED_SENTENCES.get(dag_status, 'ended in an unknown state.')}")
    else:
        possible = (1 - (futile + failed) / total) * 100
        only = f" Only {possible:.2f}% of the DAG can complete." if possible < 100 else ""
        lines.append(f"DAG {STATUS_SENTENCES.get(get('DAG_Status'), 'is in an unknown state.')}{only}")
    lines.append(f"[{bar}] DAG is {done / total * 100:.2f}% complete.")
    return lines
