"""One DAG a user submitted, as DAGMan sees it: its status and node counts (from what is fresh,
saying which and how old), every node in run order with its state, retries, job, exit code
and why, its queued jobs under it and each sub-DAG's nodes under its SUBDAG node; and its
``dagman.out``, followed and searchable.  Enter on a node opens it; hold/release, halt/unhalt
and removal act on the DAG or on the marked nodes' jobs."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.dag_view import SCHEDULER_UNIVERSE, DagSnapshot, NodeRow
from crabtui.screens.listing import shown_age
from crabtui.screens.polling import PollingScreen
from crabtui.task_status import to_hms
from crabtui.widgets import states
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable, RowValues
from crabtui.widgets.log_view import LogView, wrapped
from crabtui.widgets.states import Palette, dag_state, short_duration, shown_path
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed
from engine.schedd.api import JobStatus

LOG_LINES = 5000
BAR_WIDTH = 20
ACTIONS = ("hold", "release", "halt", "remove")
NODE_WIDTH = 20
DAG_ROW = "."  # the key of the table's first row: the DAG itself (its DAGMan job)


class DagScreen(PollingScreen):
    BINDINGS = [
        Binding("enter", "open", "Open", id="open-node",
                tooltip="Open the node: its job's ClassAd, hold reason, output, user log and scripts' output"),
        Binding("h", "hold", "Hold", id="hold",
                tooltip="Hold the marked nodes' jobs, or the job under the cursor (on the DAG's row: DAGMan)"),
        Binding("r", "release", "Release", id="release",
                tooltip="Release the marked held jobs (on the DAG's row: DAGMan, which resumes in recovery mode)"),
        Binding("H", "halt", "Halt/unhalt", id="halt", tooltip="Halt the DAG (no new node starts), or resume it"),
        Binding("K", "remove", "Remove", id="remove-dag",
                tooltip="Remove the DAG: its DAGMan job and node jobs (a rescue DAG is written)"),
        Binding("slash", "filter", "Filter", id="filter", tooltip="Filter the nodes"),
        Binding("f", "find", "Find", id="find", tooltip="Find a node: move to the next row that matches"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the job id under the cursor"),
        Binding("C", "copy('file')", "Copy file", id="copy-file", show=False, tooltip="Copy the DAG file's path"),
        Binding("escape", "back", "Back", id="back", tooltip="Clear the marks, then the filter, then go back"),
    ]

    def __init__(self, cluster: int) -> None:
        super().__init__()
        self.cluster = cluster
        self.snapshot: DagSnapshot | None = None
        self.columns = node_columns(self)
        self._values = RowValues(self.columns, clocked=lambda item: False)

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Tabbed(initial="nodes"):
            with Pane("Nodes", id="nodes"):
                yield LiveTable(self.columns, fixed_columns=1, tree_parent=_parent_row, id="node-table")
            with Pane("Log", id="log"):
                yield LogView(max_lines=LOG_LINES, id="dagman-out")
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = f"crabtui › DAGs › {self.cluster}"
        super().on_mount()

    def on_unmount(self) -> None:
        self.app.backend.forget_dag_log(self.cluster)

    @property
    def table(self) -> LiveTable:
        return self.query_one("#node-table", LiveTable)

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> tuple[DagSnapshot, dict[str, Any], dict[str, tuple]]:
        """The DAG, and its table's rows and their values, made in the fetch's thread."""
        snapshot = self.app.backend.dag(self.cluster, now)
        rows: dict[str, Any] = {DAG_ROW: snapshot} if snapshot.dag is not None else {}
        rows.update(snapshot.rows)
        return snapshot, rows, self._values(rows)

    def show(self, fetched: tuple[DagSnapshot, dict[str, Any], dict[str, tuple]]) -> None:
        snapshot, rows, values = fetched
        first = self.snapshot is None
        in_queue_before = self.snapshot is not None and self.snapshot.where == "queue"
        self.snapshot = snapshot
        if first or in_queue_before != (snapshot.where == "queue"):  # the actions' dimming changed
            self.refresh_bindings()
        with self.app.batch_update():
            self._show_summary()
            self.table.set_items(rows, values)
            if snapshot.log_lines:
                self.query_one(LogView).write_lines(snapshot.log_lines)
            self._update_info()

    def _show_summary(self) -> None:
        snapshot, palette = self.snapshot, self.app.palette
        dag = snapshot.dag
        if dag is None:
            self.update_static("summary", Text(f"There is no DAGMan job {self.cluster} in the queue or its history.",
                                                no_wrap=True))
            return
        first = dag_state(dag.state, palette)
        first.append(f"  DAGMan job {dag.id} of {dag.owner}  {shown_path(dag.dag_file)}")
        if snapshot.halted:
            first.append("  ")
            first.append(" HALTED ", style=f"reverse {palette.style('warning')}")
        if dag.job_status == JobStatus.HELD and dag.hold_reason:
            first.append(f"  {dag.hold_reason}", style=palette.style("warning"))
        elif dag.requeued:
            first.append(f"  {dag.requeued}: its job stays queued and runs it again (only 0-2 end it)",
                         style=palette.style("warning"))
        elif not dag.in_queue:
            ended = "  left the queue" + ("" if dag.exit_code is None else f", exit code {dag.exit_code}")
            if dag.end_why:
                ended += f" ({dag.end_why})"
            if dag.rescue:
                ended += f", rescue DAG {shown_path(dag.rescue)}"
            first.append(ended, style="dim")
        second = states.progress_bar(dag.counts, dag.total, BAR_WIDTH, palette)
        second.append("  ")
        second.append(states.dag_node_counts(dag.nodes, palette))
        second.append(f"  {dag.done}/{dag.total} done" if dag.total else "  no node counts yet")
        source = dag.describe_source(self.app.clock())
        if source:
            second.append(f"  · {source}", style="dim" if dag.source == "dagman.out" else palette.style("warning"))
        self.update_static("summary", Text("\n").join([first, second]))

    def tick(self) -> None:
        self.table.tick()
        if self.snapshot is not None and self.snapshot.dag is not None:
            self._show_summary()  # the counts' age

    def set_palette(self, palette: Palette) -> None:
        self.table.set_palette(palette)
        if self.snapshot is not None:
            self._show_summary()

    def _update_info(self) -> None:
        snapshot = self.snapshot
        if self.query_one(Tabbed).active == "log":
            if snapshot is not None and snapshot.log_error:
                text = snapshot.log_error
            else:
                name = snapshot.dag.out_file if snapshot and snapshot.dag else "the DAG's dagman.out"
                text = self.query_one(LogView).describe(name)
        else:
            text = self.table.describe("rows")
            if snapshot is not None and snapshot.dag is not None and snapshot.dag.unreadable:
                text = f"Nodes unknown: {snapshot.dag.unreadable} · {text}"
        self.update_static("info", Text(text, no_wrap=True, overflow="ellipsis"))

    def on_live_table_view_changed(self, event: LiveTable.ViewChanged) -> None:
        self._update_info()

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        event.pane.query_one("LiveTable, LogView").focus()
        if self.snapshot is not None:
            if event.pane.id == "log" and self.snapshot.log_error:
                self.call_after_refresh(self._show_log_error)  # once the log has its width
            self._update_info()

    def _show_log_error(self) -> None:
        """Why the log cannot be read, in the log: a message, not a log's line, so wrapped, or
        its end, which says why, is cut."""
        log = self.query_one(LogView)
        if log.line_count or self.query_one(Tabbed).active != "log":
            return
        if not log.scrollable_content_region.width:  # not laid out yet
            self.call_after_refresh(self._show_log_error)
            return
        log.write_lines(wrapped(self.snapshot.log_error, log.scrollable_content_region.width))

    # -------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ACTIONS and (self.snapshot is None or self.snapshot.where != "queue"):
            return None  # greyed out until the DAG is read, and once its DAGMan job has left the queue
        if action in ("copy", "open") and self.snapshot is None:
            return None
        if action in ("filter", "find", "open") and self.query_one(Tabbed).active != "nodes":
            return None
        return True

    def on_key(self, event: events.Key) -> None:
        """A press of an action's dimmed key on a DAG that has left the queue says why, in the
        DAG list's words: a silent key reads as a key that did not arrive."""
        dag = self.snapshot.dag if self.snapshot is not None else None
        if dag is None or self.snapshot.where == "queue":
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if binding.action in ACTIONS:
                event.stop()
                self.app.notify(dag.left_queue(binding.action), severity="warning")
                return

    def on_line_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        from crabtui.screens.node import NodeScreen

        key = self.table.cursor_key
        if key is None:
            return
        if key == DAG_ROW:
            self.query_one(Tabbed).active = "log"
            return
        self.app.push_screen(NodeScreen(self.cluster, key.split("#")[0]))

    def action_filter(self) -> None:
        self.query_one(FilterBar).open(self.table)

    def action_find(self) -> None:
        self.query_one(FilterBar).open(self.table, "find")

    def _jobs(self) -> list[dict[str, Any]]:
        """The queued jobs the marked rows (or the row under the cursor) stand for: a job row's
        job, a node's jobs, the DAG's row's DAGMan job."""
        snapshot = self.snapshot
        by_id = {f"{ad['ClusterId']}.{ad['ProcId']}": ad for ad in snapshot.queue}
        chosen = []
        for key in self.table.selection():
            if key == DAG_ROW:
                chosen.append(by_id.get(snapshot.dagman_job))
                continue
            row = snapshot.rows.get(key)
            if row is None:
                continue
            if row.is_job:
                chosen.append(by_id.get(row.job))
            else:
                chosen += [by_id.get(k.split("#")[1]) for k in snapshot.rows if k.startswith(key + "#")]
        seen, jobs = set(), []
        for ad in chosen:
            if ad is not None and (job := f"{ad['ClusterId']}.{ad['ProcId']}") not in seen:
                seen.add(job)
                jobs.append(ad)
        return jobs

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
        verb = "hold" if hold else "release"
        chosen = self._jobs()
        if hold:
            targets = [ad for ad in chosen if ad.get("JobStatus") in (JobStatus.IDLE, JobStatus.RUNNING)]
        else:
            targets = [ad for ad in chosen if ad.get("JobStatus") == JobStatus.HELD]
        if not targets:
            what = "idle or running" if hold else "held"
            self.app.notify(f"Nothing to {verb}: no {what} job in the queue under the cursor or the marks.",
                            severity="warning")
            return
        ids = [f"{ad['ClusterId']}.{ad['ProcId']}" for ad in targets]
        dagman = [ad for ad in targets if ad.get("JobUniverse") == SCHEDULER_UNIVERSE]
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
        lines = [self._describe(ad) for ad in targets[:12]] + ([f"… and {len(targets) - 12} more"]
                                                                if len(targets) > 12 else [])
        details = "\n".join(lines) + f"\nDAG {dag.dag_file}\n\n{effect}"
        question = f"{verb.title()} {ids[0]}?" if len(ids) == 1 else f"{verb.title()} {len(ids)} jobs?"
        backend = self.app.backend
        self.app.confirm(question, details, verb.title(),
                         lambda: self.app.act(verb.title(), backend.hold if hold else backend.release, ids,
                                              done=lambda r: _act_result(verb, ids, r)))

    def action_halt(self) -> None:
        dag = self.snapshot.dag
        backend = self.app.backend
        if self.snapshot.halted:
            self.app.act("Unhalt", backend.unhalt_dag, dag.dag_file, dag.id,
                         done=lambda ok: f"Resumed DAG {dag.id}." if ok else "The DAG was not halted.")
            return
        details = (f"DAG {dag.dag_file} (DAGMan job {dag.id})\n\n"
                   "No new node job is submitted and no PRE script runs; queued and running jobs and their POST "
                   "scripts finish. Then DAGMan runs the FINAL node, writes a rescue DAG and exits. Until then, "
                   "H again resumes the DAG.")
        if dag.halt_unknown:
            details += ("\n\nThe DAG's directory cannot be seen from this machine, so its halt file cannot be "
                        "written here. Hold its DAGMan job instead (h on the DAG's row): DAGMan stops starting "
                        "nodes and resumes in recovery mode when released.")
        self.app.confirm(f"Halt DAG {dag.id}?", details, "Halt",
                         lambda: self.app.act("Halt", backend.halt_dag, dag.dag_file, dag.id, done=lambda ok: (
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
        snapshot = self.snapshot
        if what == "file":
            if snapshot.dag is not None:
                self.app.copy(snapshot.dag.dag_file)
            return
        key = self.table.cursor_key
        row = snapshot.rows.get(key) if key else None
        self.app.copy(row.job if row is not None and row.job else snapshot.dagman_job)

    def action_back(self) -> None:
        table = self.table
        if table.clear_marks():
            return
        if table.filter:
            table.filter = ""
            return
        self.app.pop_screen()


def _parent_row(key: str) -> str | None:
    """The row a row is drawn under: a job's node (``A#12.0``), a sub-DAG node's SUBDAG node
    (``SD/S1``), else the DAG's own row, so that a sort keeps the tree."""
    if key == DAG_ROW:
        return None
    if "#" in key:
        return key.split("#", 1)[0]
    return key.rsplit("/", 1)[0] if "/" in key else DAG_ROW


def node_columns(screen: DagScreen) -> list[Column]:
    """The node table's columns; the first row is the DAG itself (a :class:`DagSnapshot`), the
    others :class:`NodeRow`\\ s."""

    def name(item: Any) -> str:
        if isinstance(item, DagSnapshot):
            return item.dag.dag_file.rsplit("/", 1)[-1] if item.dag else str(item.id)
        return item.name

    def render_name(value: str, item: Any, palette: Palette) -> Text:
        if isinstance(item, DagSnapshot):
            return Text(f"▾ {value}", style="bold", no_wrap=True, end="")
        indent = "  " * (item.depth + 1)
        if item.is_job:
            return Text(f"{indent[:-2]}└ {value}", style="dim", no_wrap=True, end="")
        text = Text(indent, no_wrap=True, end="")
        text.append(value, style="bold" if item.node is not None and item.node.subdag else "")
        if item.node is not None and item.node.kind not in ("job", "subdag"):
            text.append(f" {item.node.kind}", style="dim")
        return text

    def state(item: Any) -> str:
        if isinstance(item, DagSnapshot):
            return item.dag.state if item.dag else ""
        return item.state

    def render_state(value: str, item: Any, palette: Palette) -> Text:
        if isinstance(item, DagSnapshot):
            return dag_state(value, palette)
        return states.dag_node_state(value, palette)

    def job(item: Any) -> str:
        if isinstance(item, DagSnapshot):
            return item.dagman_job if item.dag else ""
        return item.job

    def retries(item: Any) -> str:
        if isinstance(item, DagSnapshot) or item.node is None or not (item.node.retries or item.node.retry_max):
            return ""
        return f"{item.node.retries}/{item.node.retry_max}"

    def exit_code(item: Any) -> int | None:
        if isinstance(item, DagSnapshot):
            return item.dag.exit_code if item.dag else None
        return item.node.exit_code if item.node is not None else None

    def since(item: Any) -> float | None:
        """A node's time in its state; a job's run time, none for a job that has not run (an
        idle job's ``0:00:00`` read as idle for no time, beside its node's ``idle 23s``)."""
        if isinstance(item, DagSnapshot) or (item.node is not None and item.node.since is None):
            return None
        if item.is_job:
            return item.runtime if item.runtime or item.state == "running" else None
        return shown_age(screen.app.clock() - item.node.since)

    def render_since(value: float | None, item: Any, palette: Palette) -> Text:
        if value is None:
            return Text("")
        return Text(to_hms(value) if getattr(item, "is_job", False) else short_duration(value), end="")

    def why(item: Any) -> str:
        if isinstance(item, DagSnapshot):
            dag = item.dag
            if dag is None:
                return ""
            if dag.job_status == JobStatus.HELD:
                return dag.hold_reason
            return f"{dag.end_why}; {dag.describe_nodes()}" if dag.end_why else dag.describe_nodes()
        return " ".join(item.why.split("\n"))

    def render_why(value: str, item: Any, palette: Palette) -> Text:
        role = ""
        if isinstance(item, NodeRow) and item.state in ("failed", "futile"):
            role = "error"
        elif isinstance(item, NodeRow) and item.state == "held":
            role = "warning"
        return Text(value, style=palette.style(role) if role else "", no_wrap=True, end="")

    return [
        Column("node", "Node", name, render_name, width=NODE_WIDTH),
        Column("state", "State", state, render_state, width=11),
        Column("job", "Job", job, width=9, right=True),
        Column("retries", "Retry", retries, width=5, right=True),
        Column("exit", "Exit", exit_code, width=4, right=True),
        Column("time", "Since", since, render_since, width=8, right=True, live=True),
        Column("why", "Why", why, render_why),
    ]


def _act_result(verb: str, ids: list[str], result) -> str:
    text = f"{'Held' if verb == 'hold' else 'Released'} {ids[0] if len(ids) == 1 else f'{result.changed} jobs'}."
    if result.refused:
        text += " Refused: " + "; ".join(result.refused)
    return text
