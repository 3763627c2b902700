"""The first screen: every task with its status, a progress bar, its jobs per state and its age."""

from __future__ import annotations

from textual.binding import Binding

from crabtui.screens.listing import ListScreen
from crabtui.snapshots import TasksSnapshot, TaskSummary
from crabtui.widgets.live_table import Column
from crabtui.widgets.states import progress_bar, state_counts, task_status
from engine.crab.taskworker.taskdb import killable

BAR_WIDTH = 10


class TasksScreen(ListScreen):
    BINDINGS = [
        Binding("enter", "open_task", "Open", id="open-task", tooltip="Open the task: its jobs, DAG, sites, errors and log"),
        Binding("K", "kill", "Kill", id="kill", tooltip="Kill the task(s): remove their DAGs and jobs (crab kill)"),
        Binding("R", "resubmit", "Resubmit", id="resubmit", tooltip="Resubmit the task's failed jobs (crab resubmit)"),
        Binding("d", "dags", "DAGs", id="dags",
                tooltip="The DAGs submitted with dag submit (not tasks): watch and control them"),
        Binding("c", "copy('name')", "Copy name", id="copy-name", show=False, tooltip="Copy the task's name"),
        Binding("C", "copy('dir')", "Copy dir", id="copy-dir", show=False, tooltip="Copy the task's directory"),
        Binding("escape", "clear", "Clear", id="clear", show=False, tooltip="Clear the marks, then the filter"),
    ]
    TABLE_ID, CRUMBS, NOUN = "tasks", "crabtui › tasks", "tasks"
    EMPTY = "No tasks yet: submit one with 'crabtui task submit CONFIG'."

    def __init__(self) -> None:
        super().__init__()
        self.started = False

    def columns(self) -> list[Column]:
        return [
            self.stale_column(lambda s: s.error),
            Column("task", "Task", lambda s: s.task.request_name),
            Column("status", "Status", lambda s: s.task.status, lambda v, s, p: task_status(v, p), width=16),
            Column("progress", "Progress", _progress, lambda v, s, p: progress_bar(s.counts, s.total, BAR_WIDTH, p),
                   width=BAR_WIDTH + 7),
            Column("jobs", "Jobs", lambda s: " ".join(f"{k}:{n}" for k, n in s.counts.items()),
                   lambda v, s, p: state_counts(s.counts, p), width=18),
            self.age_column(lambda s: s.task.submitted_at),
            Column("message", "Message", lambda s: s.error or s.task.message),
        ]

    def fetch(self, now: float) -> TasksSnapshot:
        backend = self.app.backend
        if not self.started:
            backend.start()
            self.started = True
        return backend.tasks(now)

    def rows(self, snapshot: TasksSnapshot) -> dict[str, TaskSummary]:
        return {s.task.name: s for s in snapshot.tasks}

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
            self.app.resubmit(current.task, f"{failed} failed job(s)" if failed else "none")

    def action_copy(self, what: str) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(current.task.name if what == "name" else current.task.task_dir)

    def action_clear(self) -> None:
        self.clear()


def _progress(s: TaskSummary) -> tuple:
    """The finished share (what the column sorts by), then every count (what the bar shows)."""
    return (s.counts.get("finished", 0) / s.total if s.total else 0.0, tuple(sorted(s.counts.items())))
