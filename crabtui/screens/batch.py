"""One batch of the queue view: its jobs, one per proc, with their state and since when, their run
time, their exit code or hold reason and their host; the jobs of its clusters that have left the
queue come from the history.  Enter opens a job: a CRAB task's job as the task's job screen, a DAG
node's job as the node's screen, any other job's ClassAd, output and user log.  Marked jobs
(``space``) take ``h``, ``r`` and ``K``."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.binding import Binding

from crabtui.batch_view import BatchJobsSnapshot, QueueJob, batch_jobs_snapshot
from crabtui.screens.listing import ListScreen, shown_age
from crabtui.widgets.live_table import Column, RowValues
from crabtui.widgets.states import Palette, short_duration
from engine.schedd.api import JobStatus

MAX_NAMED = 12  # jobs a dialog lists before "and N more"
STATE_ROLES = {"running": "success", "held": "warning", "removed": "error", "completed": "dim"}


class BatchScreen(ListScreen):
    BINDINGS = [
        Binding("enter", "open_job", "Open", id="open-batch-job",
                tooltip="Open the job: its ClassAd, output and log (a task's or a DAG node's job: its own screen)"),
        Binding("escape", "back", "Back", id="back", tooltip="Clear the marks, then the filter, then go back"),
        Binding("h", "hold", "Hold", id="hold", tooltip="Hold the marked jobs (or the one under the cursor)"),
        Binding("r", "release", "Release", id="release", tooltip="Release the marked held jobs"),
        Binding("K", "remove", "Remove", id="remove-job", tooltip="Remove the marked jobs (condor_rm)"),
        Binding("c", "copy", "Copy id", id="copy-id", show=False, tooltip="Copy the job's id"),
    ]
    TABLE_ID, NOUN = "batch-jobs", "jobs"

    def __init__(self, key: str, name: str) -> None:
        super().__init__()
        self.key = key
        self.CRUMBS = f"crabtui › queue › {name}"
        self.snapshot: BatchJobsSnapshot | None = None
        self._ask = False
        self._acted: list[str] = []  # the jobs of the last action, not yet refreshed
        self._values = RowValues(self.columns())  # the table's columns, in its order

    def columns(self) -> list[Column]:
        def state(value: str, job: QueueJob, palette: Palette) -> Text:
            return Text(value, style=palette.style(STATE_ROLES.get(value, "")), end="")

        def run_time(value: float | None, job: QueueJob, palette: Palette) -> Text:
            return Text("" if value is None else short_duration(value), end="")

        return [
            self.stale_column(),
            Column("job", "Job", lambda j: j.id, width=9, right=True, order=lambda v: tuple(map(int, v.split(".")))),
            Column("state", "State", lambda j: j.state, state, width=12),
            self.age_column(lambda j: j.since or self.app.clock(), "since", "For"),
            Column("runtime", "Run", self._ran, run_time, width=5, live=True, right=True),
            Column("outcome", "Exit/hold reason", lambda j: j.outcome, width=26),
            Column("host", "Host", lambda j: j.host),
        ]

    def _ran(self, job: QueueJob) -> int | None:
        ran = job.ran(self.app.clock())
        return None if ran is None else shown_age(ran)

    def fetch(self, now: float) -> tuple[BatchJobsSnapshot, dict[str, tuple]]:
        """The batch's jobs and their rows' values, worked out here, off the UI thread: a batch
        of 10,000 procs is 10,000 rows."""
        ask, self._ask = self._ask, False
        acted, self._acted = self._acted, []
        snapshot = batch_jobs_snapshot(self.app.backend, self.key, now, ask, acted, self.app.clock)
        return snapshot, self._values(self.rows(snapshot))

    def action_refresh_now(self) -> None:
        self._ask = True
        super().action_refresh_now()

    def refresh_after_action(self, ids: list[str]) -> None:
        """As the batch list's (:meth:`BatchesScreen.refresh_after_action`)."""
        self._acted = list(ids)
        self.refresh_now(even_if_paused=True)

    def show(self, fetched: tuple[BatchJobsSnapshot, dict[str, tuple]]) -> None:
        before, (self.snapshot, values) = self.snapshot, fetched
        if before is None or before.jobs is not self.snapshot.jobs or self.stale:  # else the clock's tick repaints
            self.stale = False
            self.table.set_items(self.rows(self.snapshot), values)
        self.update_info()

    def rows(self, snapshot: BatchJobsSnapshot) -> dict[str, QueueJob]:
        return {j.id: j for j in snapshot.jobs}

    def info_text(self) -> str:
        snapshot = self.snapshot
        if snapshot is None:
            return ""
        batch = snapshot.batch
        if batch is None:
            return "The batch is no longer in the queue (condor_history has its jobs)."
        counts = [f"{n} {w}" for n, w in ((batch.done, "done"), (batch.running, "running"), (batch.idle, "idle"),
                                          (batch.held, "held")) if n]
        total = f" of {batch.total}" if batch.total else ""
        return " · ".join([self.table.describe(self.NOUN), f"{batch.owner}'s {batch.name}{total}", ", ".join(counts)])

    # -------------------------------------------------------------- actions

    def open_current(self) -> None:
        self.action_open_job()

    def action_open_job(self) -> None:
        job, snapshot = self.current(), self.snapshot
        if job is None or snapshot is None:
            return
        if job.crab_task in snapshot.tasks and job.crab_id:
            from crabtui.screens.job import JobScreen

            self.app.push_screen(JobScreen(job.crab_task, job.crab_id))
        elif job.dagman is not None and job.node:
            from crabtui.screens.node import NodeScreen

            self.app.push_screen(NodeScreen(job.dagman, job.node))
        else:
            from crabtui.screens.condor_job import CondorJobScreen

            self.app.push_screen(CondorJobScreen(job.id))

    def action_hold(self) -> None:
        self._act("Hold", lambda j: j.where == "queue" and j.status in (JobStatus.IDLE, JobStatus.RUNNING),
                  "idle or running", "They stay in the queue, held, until released (r).", self.app.backend.hold)

    def action_release(self) -> None:
        self._act("Release", lambda j: j.where == "queue" and j.status == JobStatus.HELD, "held",
                  "They go back to idle and are matched again.", self.app.backend.release)

    def action_remove(self) -> None:
        self._act("Remove", lambda j: j.where == "queue" and j.status != JobStatus.REMOVED, "in the queue",
                  "They leave the queue (condor_rm).", self.app.backend.remove)

    def _act(self, verb: str, can: Callable[[QueueJob], bool], what: str, effect: str,
             call: Callable[[list[str]], object]) -> None:
        chosen = [self.table.items[k] for k in self.table.selection() if k in self.table.items]
        targets = [j for j in chosen if can(j)]
        if not targets:
            if chosen:
                self.app.notify(f"Nothing to {verb.lower()}: only jobs {what} can be.", severity="warning")
            return
        ids = [j.id for j in targets]
        lines = [f"{j.id} ({_said(j)})" for j in targets[:MAX_NAMED]]
        if len(targets) > MAX_NAMED:
            lines.append(f"… and {len(targets) - MAX_NAMED} more")
        acted = set(ids)  # a set: thousands of marked jobs are looked up in it
        left = [j.id for j in chosen if j.id not in acted]
        if left:
            more = f" and {len(left) - MAX_NAMED} more" if len(left) > MAX_NAMED else ""
            lines.append(f"Left alone (not {what}): {', '.join(left[:MAX_NAMED])}{more}")
        details = "\n".join(lines)
        question = f"{verb} job {ids[0]}?" if len(ids) == 1 else f"{verb} {len(ids)} jobs?"
        self.confirm_jobs(verb, question, f"{details}\n\n{effect}", call, ids)

    def action_copy(self) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(current.id)


def _said(job: QueueJob) -> str:
    """A job's state and outcome for a dialog: ``idle``, ``completed: exit 0``, ``held: disk full``
    (a hold's outcome already says held)."""
    if not job.outcome or job.outcome.startswith(job.state + ":"):
        return job.outcome or job.state
    return f"{job.state}: {job.outcome}"
