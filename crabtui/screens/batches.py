"""The queue as condor_q shows it by default: one row per batch (a batch name, a DAG, or a
cluster) with its owner, when it was submitted, its jobs done, running, idle and held of its total,
and its job ids, the batches ``crabtui q`` prints.  Plain jobs (``crabtui job submit``,
condor_submit) are seen here, and so are DAGs and CRAB tasks' jobs, as condor_q groups them.  By
default the user's own, as condor_q does; ``u`` shows every user's.  Enter opens a batch's jobs;
marked batches (``space``) take ``h``, ``r`` and ``K``, which act on their jobs in the queue."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.binding import Binding

from crabtui.batch_view import BatchRow, QueueSnapshot, queue_snapshot
from crabtui.queue_format import format_date
from crabtui.screens.listing import UsersListScreen
from crabtui.widgets.live_table import Column, plural
from engine.schedd.api import JobStatus

MAX_NAMED = 12  # batches a dialog lists before "and N more"
MAX_NAME_WIDTH = 32  # the batch name column's, on a wide terminal
ACTIVE = (JobStatus.IDLE, JobStatus.RUNNING)


class BatchesScreen(UsersListScreen):
    BINDINGS = [
        Binding("enter", "open_batch", "Open", id="open-batch", tooltip="Open the batch: its jobs, one per row"),
        Binding("escape", "back", "Back", id="back",
                tooltip="Clear the marks, then the filter, then go back"),
        Binding("h", "hold", "Hold", id="hold", tooltip="Hold the idle and running jobs of the marked batches"),
        Binding("r", "release", "Release", id="release", tooltip="Release the held jobs of the marked batches"),
        Binding("K", "remove", "Remove", id="remove-batch",
                tooltip="Remove the jobs of the marked batches (or the one under the cursor), as condor_rm does"),
        Binding("u", "toggle_users", "All users", id="users", tooltip="Show every user's batches, or only yours"),
        Binding("c", "copy", "Copy ids", id="copy-id", show=False, tooltip="Copy the batch's job ids"),
    ]
    TABLE_ID, CRUMBS, NOUN = "batches", "crabtui › queue", "batches"
    EMPTY = "No jobs in the queue: 'crabtui job submit FILE.sub' submits some."

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: QueueSnapshot | None = None
        self._ask = True  # the first refresh asks the schedd, as ctrl+r does
        self._acted: list[str] = []  # the jobs of the last action, not yet refreshed

    def columns(self) -> list[Column]:
        def count(key: str, label: str, get: Callable[[BatchRow], int]) -> Column:
            return Column(key, label, lambda b: get(b) or None,
                          lambda v, b, p: Text("_" if v is None else str(v), end=""), width=5, right=True)

        return [
            self.stale_column(),
            Column("owner", "Owner", lambda b: b.owner, width=8),
            Column("batch", "Batch name", lambda b: b.name, width=self._name_width()),
            Column("submitted", "Submitted", lambda b: b.submitted,
                   lambda v, b, p: Text("" if v is None else format_date(int(v)), end=""), width=11),
            count("done", "Done", lambda b: b.done),
            count("run", "Run", lambda b: b.running),
            count("idle", "Idle", lambda b: b.idle),
            count("hold", "Hold", lambda b: b.held),
            count("total", "Total", lambda b: b.total),
            Column("ids", "Job ids", lambda b: b.ids),
        ]

    def _name_width(self) -> int:
        """12 at 80 columns, so that every count up to Total shows; what a wider terminal has
        beyond 80 goes to the name, up to condor_q's longest (``diamond.dag+12345`` and more)."""
        return max(12, min(MAX_NAME_WIDTH, 12 + self.app.size.width - 80))

    def fetch(self, now: float) -> QueueSnapshot:
        ask, self._ask = self._ask, False
        acted, self._acted = self._acted, []
        return queue_snapshot(self.app.backend, now, ask, acted, self.app.clock)

    def action_refresh_now(self) -> None:
        """ctrl+r (and after an action): the queue asked of the schedd now."""
        self._ask = True
        super().action_refresh_now()

    def refresh_after_action(self, ids: list[str]) -> None:
        """h, r or K is done: the followed logs tell what it did (the schedd is asked only for
        jobs no log here follows), not a query of the whole queue, which takes seconds at 100,000."""
        self._acted = list(ids)
        self.refresh_now(even_if_paused=True)

    def rows(self, snapshot: QueueSnapshot) -> dict[str, BatchRow]:
        return {b.key: b for b in snapshot.batches if self.all_users or b.owner == snapshot.owner}

    def info_text(self) -> str:
        """The table's summary, whose batches it shows, and the jobs by state of the batches it
        shows: with a filter on, those it lets through, as condor_q's totals count the jobs its
        constraint matched ("Total for query"), not the whole queue's."""
        snapshot = self.snapshot
        if snapshot is None:
            return ""
        if not self.table.items:
            if snapshot.batches:
                return f"None of your jobs is queued; {plural(len(snapshot.batches), 'batches')} of other users " \
                       "(u shows them)."
            return self.EMPTY
        shown = [self.table.items[key] for key in self.table.shown_keys()]
        jobs = ", ".join(f"{sum(getattr(b, a) for b in shown)} {a}" for a in ("running", "idle", "held"))
        who = "all users'" if self.all_users else f"{snapshot.owner}'s"
        hint = " (u: yours)" if self.all_users else " (u: all)"  # the way back too, as the task list's
        text = " · ".join([self.table.describe(self.NOUN), who + hint, jobs])
        if len(text) > self.app.size.width - 2:  # 90000 idle at 80 columns: the hint goes, not a count
            text = " · ".join([self.table.describe(self.NOUN), who, jobs])
        return text

    # -------------------------------------------------------------- actions

    def open_current(self) -> None:
        self.action_open_batch()

    def action_open_batch(self) -> None:
        from crabtui.screens.batch import BatchScreen

        current = self.current()
        if current is not None:
            self.app.push_screen(BatchScreen(current.key, current.name))

    def action_hold(self) -> None:
        self._act("Hold", lambda s: s in ACTIVE, "idle or running",
                  "They stay in the queue, held, until released (r).", self.app.backend.hold)

    def action_release(self) -> None:
        self._act("Release", lambda s: s == JobStatus.HELD, "held",
                  "They go back to idle and are matched again.", self.app.backend.release)

    def action_remove(self) -> None:
        self._act("Remove", lambda s: s != JobStatus.REMOVED, "in the queue",
                  "They leave the queue (condor_rm); a DAG's DAGMan job removes its node jobs.",
                  self.app.backend.remove)

    def _act(self, verb: str, can: Callable[[int], bool], what: str, effect: str,
             call: Callable[[list[str]], object]) -> None:
        chosen = [self.table.items[k] for k in self.table.selection() if k in self.table.items]
        targets = [(b, [j for j, s in zip(b.jobs, b.statuses) if can(s)]) for b in chosen]
        targets = [(b, ids) for b, ids in targets if ids]
        if not targets:
            if chosen:
                self.app.notify(f"Nothing to {verb.lower()}: no job of the batch is {what}.", severity="warning")
            return
        ids = [job for _, jobs in targets for job in jobs]
        lines = [f"{b.name} of {b.owner}: {plural(len(jobs), 'jobs')} ({b.ids})" for b, jobs in targets[:MAX_NAMED]]
        if len(targets) > MAX_NAMED:
            lines.append(f"… and {len(targets) - MAX_NAMED} more")
        acted = {b.key for b, _ in targets}
        left = [b.name for b in chosen if b.key not in acted]
        if left:
            more = f" and {len(left) - MAX_NAMED} more" if len(left) > MAX_NAMED else ""
            lines.append(f"Left alone (none {what}): {', '.join(left[:MAX_NAMED])}{more}")
        details = "\n".join(lines)
        question = (f"{verb} {plural(len(ids), 'jobs')} of {targets[0][0].name}?" if len(targets) == 1 else
                    f"{verb} {plural(len(ids), 'jobs')} of {len(targets)} batches?")
        self.confirm_jobs(verb, question, f"{details}\n\n{effect}", call, ids)

    def action_copy(self) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(current.ids)
