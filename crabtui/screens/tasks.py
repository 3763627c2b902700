"""The first screen: every task with its status, a progress bar, its jobs per state and its age."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.screens.polling import PollingScreen
from crabtui.snapshots import TasksSnapshot, TaskSummary
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable
from crabtui.widgets.states import Palette, progress_bar, short_duration, state_counts, task_status
from crabtui.widgets.status_bar import StatusBar

BAR_WIDTH = 10


class TasksScreen(PollingScreen):
    BINDINGS = [
        Binding("enter", "open_task", "Open", id="open-task", tooltip="Open the task: its jobs, DAG, sites, errors and log"),
        Binding("K", "kill", "Kill", id="kill", tooltip="Kill the task(s): remove their DAGs and jobs (crab kill)"),
        Binding("R", "resubmit", "Resubmit", id="resubmit", tooltip="Resubmit the task's failed jobs (crab resubmit)"),
        Binding("d", "dags", "DAGs", id="dags",
                tooltip="The DAGs submitted with dag submit (not tasks): watch and control them"),
        Binding("slash", "filter", "Filter", id="filter", tooltip="Filter the tasks"),
        Binding("f", "find", "Find", id="find", tooltip="Find a task: move to the next one that matches"),
        Binding("c", "copy('name')", "Copy name", id="copy-name", show=False, tooltip="Copy the task's name"),
        Binding("C", "copy('dir')", "Copy dir", id="copy-dir", show=False, tooltip="Copy the task's directory"),
        Binding("escape", "clear", "Clear", id="clear", show=False, tooltip="Clear the marks, then the filter"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.stale = False
        self.started = False

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield LiveTable(self._columns(), id="tasks")
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = "crabtui › tasks"
        super().on_mount()

    def _columns(self) -> list[Column]:
        def marker(s: TaskSummary) -> str:
            return "⚠" if self.stale or s.error else ""

        return [
            Column("stale", "!", marker, lambda v, s, p: _marker(v, p), width=1),
            Column("task", "Task", lambda s: s.task.request_name),
            Column("status", "Status", lambda s: s.task.status, lambda v, s, p: task_status(v, p), width=16),
            Column("progress", "Progress", _progress, lambda v, s, p: progress_bar(s.counts, s.total, BAR_WIDTH, p),
                   width=BAR_WIDTH + 7),
            Column("jobs", "Jobs", lambda s: " ".join(f"{k}:{n}" for k, n in s.counts.items()),
                   lambda v, s, p: state_counts(s.counts, p), width=18),
            Column("age", "Age", lambda s: shown_age(self.app.clock() - s.task.submitted_at),
                   lambda v, s, p: Text(short_duration(v), end=""), width=4, live=True, right=True),
            Column("message", "Message", lambda s: s.error or s.task.message),
        ]

    @property
    def table(self) -> LiveTable:
        return self.query_one("#tasks", LiveTable)

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> TasksSnapshot:
        backend = self.app.backend
        if not self.started:
            backend.start()
            self.started = True
        return backend.tasks(now)

    def show(self, snapshot: TasksSnapshot) -> None:
        self.stale = False
        self.table.set_items({s.task.name: s for s in snapshot.tasks})
        if not snapshot.tasks:
            self.query_one("#info", Static).update("No tasks yet: submit one with 'crabtui task submit CONFIG'.")

    def stale_changed(self) -> None:
        self.stale = True
        self.table.recompute()

    def tick(self) -> None:
        self.table.tick()

    def set_palette(self, palette: Palette) -> None:
        self.table.set_palette(palette)

    def on_live_table_view_changed(self, event: LiveTable.ViewChanged) -> None:
        if event.table.items:
            self.query_one("#info", Static).update(event.table.describe("tasks"))

    # -------------------------------------------------------------- actions

    def on_line_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        event.stop()
        self.action_open_task()

    def _current(self) -> TaskSummary | None:
        key = self.table.cursor_key
        return None if key is None else self.table.items.get(key)

    def action_open_task(self) -> None:
        from crabtui.screens.task import TaskScreen

        current = self._current()
        if current is not None:
            self.app.push_screen(TaskScreen(current.task.name))

    def action_dags(self) -> None:
        from crabtui.screens.dags import DagsScreen

        self.app.push_screen(DagsScreen())

    def action_kill(self) -> None:
        chosen = [self.table.items[k] for k in self.table.selection()]
        if chosen:
            lines = []
            for s in chosen:
                queued = sum(s.counts.get(state, 0) for state in ("idle", "running", "transferring", "held"))
                dag = f"DAGMan job {s.task.dagman_id}" if s.task.dagman_id is not None else "no DAG yet"
                lines.append(f"{s.task.request_name}: {dag}, {queued} job(s) queued or running")
            self.app.confirm_kill([s.task for s in chosen], "\n".join(lines))

    def action_resubmit(self) -> None:
        current = self._current()
        if current is not None:
            failed = current.counts.get("failed", 0)
            self.app.resubmit(current.task, f"{failed} failed job(s)" if failed else "none")

    def action_filter(self) -> None:
        self.query_one(FilterBar).open(self.table)

    def action_find(self) -> None:
        self.query_one(FilterBar).open(self.table, "find")

    def action_copy(self, what: str) -> None:
        current = self._current()
        if current is not None:
            self.app.copy(current.task.name if what == "name" else current.task.task_dir)

    def action_clear(self) -> None:
        if not self.table.clear_marks():
            self.table.filter = ""


def _progress(s: TaskSummary) -> tuple:
    """The finished share (what the column sorts by), then every count (what the bar shows)."""
    return (s.counts.get("finished", 0) / s.total if s.total else 0.0, tuple(sorted(s.counts.items())))


def shown_age(seconds: float) -> int:
    """The age cut to what :func:`short_duration` shows, so the cell repaints only when its text changes."""
    seconds = max(0, int(seconds))
    for size in (86400, 3600, 60):
        if seconds >= size:
            return seconds - seconds % size
    return seconds


def _marker(value: str, palette: Palette) -> Text:
    return Text(value, style=palette.style("error"), end="")
