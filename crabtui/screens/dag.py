"""One DAG a user submitted: its status and node counts, its ``condor_q -dag`` tree and its
``dagman.out``, live; and hold/release, halt/unhalt and removal."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Log, Static

from crabtui.screens.polling import PollingScreen, log_info
from crabtui.snapshots import SCHEDULER_UNIVERSE, DagSnapshot
from crabtui.widgets import states
from crabtui.widgets.dag_tree import DagTree
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.states import Palette, dag_state
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed
from engine.schedd.api import JobStatus

LOG_LINES = 5000
BAR_WIDTH = 20
ACTIONS = ("hold", "release", "halt", "remove")


class DagScreen(PollingScreen):
    BINDINGS = [
        Binding("h", "hold", "Hold", id="hold",
                tooltip="Hold the job under the cursor (on the DAGMan job: stop DAGMan gracefully)"),
        Binding("r", "release", "Release", id="release",
                tooltip="Release the held job under the cursor (DAGMan restarts in recovery mode)"),
        Binding("H", "halt", "Halt/unhalt", id="halt", tooltip="Halt the DAG (no new jobs start), or resume it"),
        Binding("K", "remove", "Remove", id="remove-dag",
                tooltip="Remove the DAG: its DAGMan job and node jobs (a rescue DAG is written)"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the job id under the cursor"),
        Binding("C", "copy('file')", "Copy file", id="copy-file", show=False, tooltip="Copy the DAG file's path"),
        Binding("escape", "back", "Back", id="back", tooltip="Go back to the DAGs"),
    ]

    def __init__(self, cluster: int) -> None:
        super().__init__()
        self.cluster = cluster
        self.snapshot: DagSnapshot | None = None

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Tabbed(initial="dag"):
            with Pane("DAG", id="dag"):
                yield DagTree(id="dag-tree")
            with Pane("Log", id="log"):
                yield Log(max_lines=LOG_LINES, id="dagman-out")
        yield Static("", id="info")
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = f"crabtui › DAGs › {self.cluster}"
        super().on_mount()

    def on_unmount(self) -> None:
        self.app.backend.forget_dag_log(self.cluster)

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> DagSnapshot:
        return self.app.backend.dag(self.cluster, now)

    def show(self, snapshot: DagSnapshot) -> None:
        first = self.snapshot is None
        in_queue_before = self.snapshot is not None and self.snapshot.where == "queue"
        self.snapshot = snapshot
        if first or in_queue_before != (snapshot.where == "queue"):  # the actions' dimming changed
            self.refresh_bindings()
        with self.app.batch_update():
            self._show_summary()
            self._show_tree()
            if snapshot.log_lines:
                self.query_one(Log).write_lines(snapshot.log_lines)
            self._update_info()

    def _show_summary(self) -> None:
        snapshot, palette = self.snapshot, self.app.palette
        dag = snapshot.dag
        if dag is None:
            self.update_static("summary", Text(f"There is no DAGMan job {self.cluster} in the queue or its history.",
                                                no_wrap=True))
            return
        first = dag_state(dag.state, palette)
        first.append(f"  DAGMan job {dag.id}  {dag.dag_file}")
        if snapshot.halted:
            first.append("  ")
            first.append(" HALTED ", style=f"reverse {palette.style('warning')}")
        if dag.job_status == JobStatus.HELD and dag.hold_reason:
            first.append(f"  {dag.hold_reason}", style=palette.style("warning"))
        elif not dag.in_queue:
            first.append("  left the queue" + ("" if dag.exit_code is None else f", exit code {dag.exit_code}"),
                         style="dim")
        second = states.progress_bar(dag.counts, dag.total, BAR_WIDTH, palette)
        second.append("  ")
        second.append(states.state_counts(dag.counts, palette))
        second.append(f"  {dag.describe_nodes()}")
        self.update_static("summary", Text("\n").join([first, second]))

    def _show_tree(self) -> None:
        self.query_one(DagTree).update_queue(self.snapshot.queue, self.snapshot.at, self.app.palette,
                                             f"DAGMan job {self.cluster} is not in the queue: the DAG has ended.")

    def set_palette(self, palette: Palette) -> None:
        if self.snapshot is not None:
            self._show_summary()
            self._show_tree()

    def _update_info(self) -> None:
        if self.query_one(Tabbed).active == "log":
            log = self.query_one(Log)
            name = self.snapshot.dag.dag_file if self.snapshot and self.snapshot.dag else "the DAG"
            text = log_info(log, f"{name}.dagman.out")
        else:
            text = "condor_q -dag: the DAGMan job and its node jobs (and sub-DAGs) in the queue"
        self.update_static("info", text)

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        event.pane.query_one("DagTree, Log").focus()
        if self.snapshot is not None:
            self._update_info()

    # -------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ACTIONS and (self.snapshot is None or self.snapshot.where != "queue"):
            return None  # greyed out until the DAG is read, and once its DAGMan job has left the queue
        if action == "copy" and self.snapshot is None:
            return None
        return True

    def _target(self) -> dict[str, Any] | None:
        """The job the cursor is on in the tree, else the DAGMan job."""
        snapshot = self.snapshot
        jobs = {f"{ad['ClusterId']}.{ad['ProcId']}": ad for ad in snapshot.queue}
        node = self.query_one(DagTree).cursor_node
        if self.query_one(Tabbed).active == "dag" and node is not None and node.data in jobs:
            return jobs[node.data]
        return jobs.get(snapshot.dagman_job)

    def _describe(self, ad: dict[str, Any]) -> str:
        job = f"{ad['ClusterId']}.{ad['ProcId']}"
        status = JobStatus(ad.get("JobStatus", JobStatus.IDLE)).name.lower()
        if ad.get("JobUniverse") == SCHEDULER_UNIVERSE:
            return f"DAGMan job {job} ({status})"
        return f"job {job} of node {ad.get('DAGNodeName', '?')} ({status})"

    def action_hold(self) -> None:
        self._hold_or_release(hold=True)

    def action_release(self) -> None:
        self._hold_or_release(hold=False)

    def _hold_or_release(self, hold: bool) -> None:
        ad = self._target()
        verb = "hold" if hold else "release"
        if ad is None:
            self.app.notify(f"Nothing to {verb}: no job of the DAG is in the queue.", severity="warning")
            return
        status = ad.get("JobStatus")
        if hold and status not in (JobStatus.IDLE, JobStatus.RUNNING):
            self.app.notify(f"Nothing to hold: {self._describe(ad)} is not idle or running.", severity="warning")
            return
        if not hold and status != JobStatus.HELD:
            self.app.notify(f"Nothing to release: {self._describe(ad)} is not held.", severity="warning")
            return
        job = f"{ad['ClusterId']}.{ad['ProcId']}"
        dagman = ad.get("JobUniverse") == SCHEDULER_UNIVERSE
        if hold and dagman:
            effect = ("DAGMan stops gracefully: no new node job is submitted and no script runs; queued node "
                      "jobs go on running. Releasing it (r) restarts DAGMan in recovery mode.")
        elif hold:
            effect = "A held job stops where it runs and keeps its place in the queue; DAGMan waits for it."
        elif dagman:
            effect = ("DAGMan restarts in recovery mode: it reads its nodes log, so finished nodes do not run "
                      "again and queued jobs are picked up where they are.")
        else:
            effect = "The job goes back to idle and runs again from the start."
        dag = self.snapshot.dag
        details = f"{self._describe(ad)}\nDAG {dag.dag_file}\n\n{effect}"
        backend = self.app.backend
        self.app.confirm(f"{verb.title()} {job}?", details, verb.title(),
                         lambda: self.app.act(verb.title(), backend.hold if hold else backend.release, [job],
                                              done=lambda r: _act_result(verb, job, r)))

    def action_halt(self) -> None:
        dag = self.snapshot.dag
        backend = self.app.backend
        if self.snapshot.halted:
            self.app.act("Unhalt", backend.unhalt_dag, dag.dag_file,
                         done=lambda ok: f"Resumed DAG {dag.id}." if ok else "The DAG was not halted.")
            return
        details = (f"DAG {dag.dag_file} (DAGMan job {dag.id})\n\n"
                   "No new node job is submitted and no PRE script runs; queued and running jobs and their POST "
                   "scripts finish. Then DAGMan runs the FINAL node, writes a rescue DAG and exits. Until then, "
                   "H again resumes the DAG.")
        self.app.confirm(f"Halt DAG {dag.id}?", details, "Halt",
                         lambda: self.app.act("Halt", backend.halt_dag, dag.dag_file, done=lambda ok: (
                             f"Halted DAG {dag.id}." if ok else "The DAG was halted already.")))

    def action_remove(self) -> None:
        snapshot = self.snapshot
        dag = snapshot.dag
        nodes = [ad for ad in snapshot.queue if ad.get("ClusterId") != dag.id]
        details = (f"DAGMan job {dag.id} running {dag.dag_file}\nand its {len(nodes)} node job(s) and sub-DAG(s) "
                   "in the queue\n\nDAGMan removes its node jobs, runs the FINAL node if the DAG has one, writes a "
                   "rescue DAG and exits; submitting the DAG again runs what did not finish.")
        backend = self.app.backend
        self.app.confirm(f"Remove DAG {dag.id}?", details, "Remove",
                         lambda: self.app.act("Remove", backend.remove, [snapshot.dagman_job],
                                              done=lambda r: f"Removed DAG {dag.id}; its DAGMan job is leaving "
                                                             "the queue."))

    def action_copy(self, what: str) -> None:
        if what == "file":
            if self.snapshot.dag is not None:
                self.app.copy(self.snapshot.dag.dag_file)
        else:
            node = self.query_one(DagTree).cursor_node
            self.app.copy(node.data if node is not None and node.data else self.snapshot.dagman_job)

    def action_back(self) -> None:
        self.app.pop_screen()


def _act_result(verb: str, job: str, result) -> str:
    text = f"{'Held' if verb == 'hold' else 'Released'} {job}."
    if result.refused:
        text += " Refused: " + "; ".join(result.refused)
    return text
