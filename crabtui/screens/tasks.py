"""The first screen: every task with its owner, status, a progress bar, its jobs per state and its
age; ``u`` shows only the user's own tasks, and the line under the table counts them per user."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.binding import Binding

from crabtui.screens.listing import ListScreen
from crabtui.snapshots import TasksSnapshot, TaskSummary
from crabtui.widgets.live_table import Column, LiveTable, plural
from crabtui.widgets.states import DONE_STATES, Palette, progress_bar, state_counts, task_status
from engine.crab.client.project import directory
from engine.crab.taskworker.taskdb import TaskError, killable

BAR_WIDTH = 10


class TasksScreen(ListScreen):
    BINDINGS = [
        Binding("enter", "open_task", "Open", id="open-task", tooltip="Open the task: its jobs, DAG, sites, errors and log"),
        Binding("K", "kill", "Kill", id="kill", tooltip="Kill the task(s): remove their DAGs and jobs (crab kill)"),
        Binding("R", "resubmit", "Resubmit", id="resubmit", tooltip="Resubmit the task's failed jobs (crab resubmit)"),
        Binding("u", "toggle_users", "Mine", id="users", tooltip="Show only your own tasks, or every user's"),
        Binding("d", "dags", "DAGs", id="dags",
                tooltip="The DAGs submitted with dag submit (not tasks): watch and control them"),
        Binding("o", "held", "Held jobs", id="held-jobs",
                tooltip="The held jobs, grouped by hold reason: release or remove them"),
        Binding("b", "queue", "Queue", id="queue",
                tooltip="The queue by batch, as condor_q shows it: every job, plain ones too"),
        Binding("c", "copy('name')", "Copy name", id="copy-name", show=False, tooltip="Copy the task's name"),
        Binding("C", "copy('dir')", "Copy dir", id="copy-dir", show=False, tooltip="Copy the task's crab project directory"),
        Binding("escape", "clear", "Clear", id="clear", show=False, tooltip="Clear the marks, then the filter"),
    ]
    TABLE_ID, CRUMBS, NOUN = "tasks", "crabtui › tasks", "tasks"
    EMPTY = "No tasks yet: 'crabtui task submit CONFIG' makes one; d shows the DAGs."  # a pool's, or plain ones

    def __init__(self) -> None:
        super().__init__()
        self.started = False
        self.mine_only = False
        self.snapshot: TasksSnapshot | None = None

    def columns(self) -> list[Column]:
        return [
            self.stale_column(lambda s: s.error),
            Column("task", "Task", self._task_label),
            Column("status", "Status", lambda s: s.task.status, lambda v, s, p: task_status(v, p), width=16),
            Column("progress", "Progress", _progress, _render_progress, width=BAR_WIDTH + 7),
            Column("jobs", "Jobs", lambda s: " ".join(f"{k}:{n}" for k, n in s.counts.items()),
                   lambda v, s, p: state_counts(s.counts, p), width=18, grow=True),
            Column("owner", "Owner", lambda s: s.task.user, width=8),
            self.age_column(lambda s: s.task.submitted_at),
            Column("message", "Message", lambda s: s.error or s.task.message),
        ]

    def fetch(self, now: float) -> TasksSnapshot:
        backend = self.app.backend
        if not self.started:
            backend.start()
            self.started = True
        return backend.tasks(now)

    def show(self, snapshot: TasksSnapshot) -> None:
        self.snapshot = snapshot
        super().show(snapshot)

    def on_polling_screen_fetch_failed(self, message: ListScreen.FetchFailed) -> None:
        """A pool that does not answer before the first list: the task table's tasks, as ``task
        list`` lists them, rather than an empty list (the status bar says STALE and why)."""
        if self.snapshot is None and self.app.backend.backend == "htcondor":
            try:
                listed = self.app.backend.listed(self.app.clock(), message.error)
            except TaskError:  # the table cannot be read either: the banner says why the fetch failed
                return
            self.show(listed)

    def rows(self, snapshot: TasksSnapshot) -> dict[str, TaskSummary]:
        uses = Counter(s.task.request_name for s in snapshot.tasks)
        self._shared_names = {name for name, n in uses.items() if n > 1}
        return {s.task.name: s for s in snapshot.tasks if not self.mine_only or s.task.user == snapshot.owner}

    _shared_names: set[str] = set()

    def _task_label(self, s: TaskSummary) -> str:
        """The task's request name, and its submit time where another task has that request name
        too (task commands then take its full name, which that makes)."""
        name = s.task.request_name
        return f"{name} {s.task.name.split(':')[0]}" if name in self._shared_names else name

    def info_text(self) -> str:
        """The table's summary, and the tasks per user (also those not shown)."""
        text = super().info_text()
        snapshot = self.snapshot
        if snapshot is None or not snapshot.tasks:
            return text
        if not self.table.items:
            return f"None of your tasks here; {len(snapshot.tasks)} of other users (u shows them)."
        current = self.current()
        if current is not None and current.error:  # the Message column may be out of sight
            return f"⚠ {current.error}"
        users: dict[str, int] = {}
        for s in snapshot.tasks:
            users[s.task.user] = users.get(s.task.user, 0) + 1
        who = f"{snapshot.owner}'s only (u: all)" if self.mine_only else "all users' (u: yours only)"
        per_user = ", ".join(f"{user} {n}" for user, n in sorted(users.items()))
        return f"{text} · {who} · per user: {per_user}"

    def on_line_table_row_highlighted(self, event: LiveTable.RowHighlighted) -> None:
        self.update_info()  # the info line names what holds up the task under the cursor

    def action_toggle_users(self) -> None:
        self.mine_only = not self.mine_only
        self.refresh_bindings()
        if self.snapshot is not None:
            self.table.set_items(self.rows(self.snapshot))
            self.update_info()

    def key_description(self, binding: Binding) -> str | None:
        """u on the key bar says what a press does now: yours only, or every user's again."""
        return ("All users" if self.mine_only else "Mine") if binding.action == "toggle_users" else None

    # -------------------------------------------------------------- actions

    def open_current(self) -> None:
        self.action_open_task()

    def action_open_task(self) -> None:
        from crabtui.screens.task import TaskScreen

        current = self.current()
        if current is not None:
            self.app.push_screen(TaskScreen(current.task.name))

    def action_dags(self) -> None:
        from crabtui.screens.dags import DagsScreen

        self.app.push_screen(DagsScreen())

    def action_held(self) -> None:
        from crabtui.screens.held import HeldScreen

        self.app.push_screen(HeldScreen())

    def action_queue(self) -> None:
        from crabtui.screens.batches import BatchesScreen

        self.app.push_screen(BatchesScreen())

    def action_kill(self) -> None:
        chosen = [self.table.items[k] for k in self.table.selection()]
        if not chosen:
            return
        targets = [s for s in chosen if killable(s.task)]
        left = [f"{s.task.request_name} ({s.task.status})" for s in chosen if not killable(s.task)]
        if not targets:
            self.app.notify(f"Nothing to kill: a task that has finished, or is killed, cannot be killed "
                            f"({', '.join(left)}).", severity="warning")
            return
        lines = []
        for s in targets:
            queued = sum(s.counts.get(state, 0) for state in ("idle", "running", "transferring", "held"))
            dag = f"DAGMan job {s.task.dagman_id}" if s.task.dagman_id is not None else "no DAG yet"
            lines.append(f"{s.task.request_name}: {dag}, {queued} job(s) queued or running")
        if left:
            lines.append(f"Left alone: {', '.join(left)}")
        self.app.confirm_kill([s.task for s in targets], "\n".join(lines))

    def action_resubmit(self) -> None:
        current = self.current()
        if current is not None:
            failed = current.counts.get("failed", 0)
            self.app.resubmit(current.task, plural(failed, "jobs") if failed else "none")

    def action_copy(self, what: str) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(current.task.name if what == "name" else directory(current.task.task_dir, current.task.name))

    def action_clear(self) -> None:
        self.clear()


def _render_progress(value: tuple, s: TaskSummary, palette: Palette) -> Text:
    """The bar, or while an automatic task has only its probes, that it is probing (how many
    jobs it will have is not known: a bar of its probes would read as the whole task)."""
    if s.probing:
        ended = sum(s.counts.get(state, 0) for state in DONE_STATES)
        return Text(f"probing {ended}/{s.total}", style=palette.style("primary"), end="")
    return progress_bar(s.counts, s.total, BAR_WIDTH, palette)


def _progress(s: TaskSummary) -> tuple:
    """The finished share (what the column sorts by), then every count (what the bar shows)."""
    return (s.counts.get("finished", 0) / s.total if s.total else 0.0, tuple(sorted(s.counts.items())))
