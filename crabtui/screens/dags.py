"""The DAGs users submitted themselves (``crabtui dag submit``, condor_submit_dag): each DAGMan
job with its owner, its status, a progress bar of its nodes, its node counts and where they come
from (and how old they are), its age and its DAG file; DAGs that have ended stay, from the
history, for a period the user sets (``e``, or ``crabtui --ended-for``).  By default the list
shows the user's own DAGs, as condor_q does; ``u`` shows every user's, with totals per user.
Marked rows (``space``) take ``K``, ``h``, ``r`` and ``H`` together.  The DAGs of this state
directory's CRAB tasks are not here: the task list shows them; a CRAB task's DAG of another state
directory (its DAGMan job's CRAB_ReqName says so) reads "CRAB task <requestName>" before its file."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual.binding import Binding

from crabtui.dag_view import DagSummary
from crabtui.screens.dag import DagScreen
from crabtui.screens.listing import UsersListScreen, acted, shown_age
from crabtui.snapshots import DagsSnapshot
from crabtui.widgets.live_table import Column
from crabtui.widgets.states import Palette, dag_node_counts, dag_state, progress_bar, short_duration, shown_path
from engine.schedd.api import JobStatus

BAR_WIDTH = 8
ENDED_PERIODS = (3600.0, 24 * 3600.0, 7 * 24 * 3600.0, None)  # what ``e`` steps through (None: hide them)
MAX_NAMED = 12  # DAGs a dialog lists before "and N more"


class DagsScreen(UsersListScreen):
    BINDINGS = [
        Binding("enter", "open_dag", "Open", id="open-dag", tooltip="Open the DAG: its nodes, their jobs and its log"),
        Binding("K", "remove", "Remove", id="remove-dag",
                tooltip="Remove the marked DAGs (or the one under the cursor): DAGMan jobs and node jobs"),
        Binding("h", "hold", "Hold", id="hold", tooltip="Hold the marked DAGs' DAGMan jobs: DAGMan stops gracefully"),
        Binding("r", "release", "Release", id="release",
                tooltip="Release the marked held DAGMan jobs: DAGMan resumes in recovery mode"),
        Binding("H", "halt", "Halt/unhalt", id="halt", tooltip="Halt the marked DAGs (no new node starts), or resume them"),
        Binding("u", "toggle_users", "All users", id="users", tooltip="Show every user's DAGs, or only your own"),
        Binding("e", "ended_period", "Ended", id="ended",
                tooltip="How long ended DAGs stay in the list: 1 hour, 1 day, 1 week, or not at all"),
        Binding("o", "held", "Held jobs", id="held-jobs",
                tooltip="The held jobs, grouped by hold reason: release or remove them"),
        Binding("b", "queue", "Queue", id="queue",
                tooltip="The queue by batch, as condor_q shows it: every job, plain ones too"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the DAGMan job's id"),
        Binding("C", "copy('file')", "Copy file", id="copy-file", show=False, tooltip="Copy the DAG file's path"),
        Binding("escape", "back", "Back", id="back",
                tooltip="Clear the marks, then the filter, then go back to the tasks"),
    ]
    TABLE_ID, CRUMBS, NOUN = "dags", "crabtui › DAGs", "DAGs"
    EMPTY = "No DAGs: submit one with 'crabtui dag submit FILE.dag' (CRAB's are tasks)."  # fits 80 columns

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: DagsSnapshot | None = None
        self._ask = True  # the next refresh queries the DAGMan jobs (ctrl+r): the first too, so that
        # a DAG submitted since the list was last open shows at once, not at the next periodic query

    def columns(self) -> list[Column]:
        return [
            self.stale_column(),
            Column("dag", "DAG", lambda d: d.id, width=6, right=True),
            Column("owner", "Owner", lambda d: d.owner, width=8),
            Column("status", "Status", lambda d: d.state, lambda v, d, p: dag_state(v, p), width=11),
            Column("progress", "Progress", _progress,
                   lambda v, d, p: progress_bar(d.counts, d.total, BAR_WIDTH, p), width=BAR_WIDTH + 7),
            Column("nodes", "Nodes", _nodes, _render_nodes, width=18, grow=True),  # 2000/2000 ✔1990 ✖10
            Column("from", "From", self._source, self._render_source, width=7, live=True, whole=True),
            self.age_column(lambda d: d.submitted_at),
            Column("file", "DAG file", lambda d: d.dag_file, _render_file),
        ]

    def _source(self, d: DagSummary) -> str:
        """``out 3s`` or ``ad 4m``: where the counts come from and how old that is."""
        if not d.total:
            return ""
        kind = "out" if d.source == "dagman.out" else "ad"
        return kind if d.as_of is None else f"{kind} {short_duration(shown_age(self.app.clock() - d.as_of))}"

    def _render_source(self, value: str, d: DagSummary, palette: Palette) -> Text:
        stale = d.source != "dagman.out" and not d.ended
        return Text(value, style=palette.style("warning") if stale else "dim", end="")

    def fetch(self, now: float) -> DagsSnapshot:
        ask, self._ask = self._ask, False
        return self.app.backend.dags(now, self.app.ended_for, ask=ask, clock=self.app.clock)

    def action_refresh_now(self) -> None:
        """ctrl+r: the DAGMan jobs asked of the schedd now, rather than at the next of its
        periodic queries (the DAGs' logs tell the rest as it happens)."""
        self._ask = True
        super().action_refresh_now()

    def show(self, snapshot: DagsSnapshot) -> None:
        super().show(snapshot)
        if snapshot.pending:
            self._due = True  # the next refresh reads more of the DAGs' files, at once

    def rows(self, snapshot: DagsSnapshot) -> dict[str, DagSummary]:
        return {str(d.id): d for d in snapshot.dags if self.all_users or d.owner == snapshot.owner}

    def info_text(self) -> str:
        """The table's summary, whose DAGs it shows, for how long ended ones stay, and the DAGs
        per user (all of them, also those not shown)."""
        snapshot = self.snapshot
        if snapshot is None:
            return ""
        if not self.table.items:
            if snapshot.dags:
                return f"None of your DAGs here; {len(snapshot.dags)} of other users (u shows them)."
            if self.app.ended_for is None:
                return "No DAGs in the queue; ended ones are left out of the list (e keeps them)."
            return self.EMPTY
        text = self.table.describe(self.NOUN)
        if snapshot.pending:
            text += f" · reading the files of {snapshot.pending} DAGs"
        per_user: dict[str, list[DagSummary]] = {}
        for d in snapshot.dags:
            per_user.setdefault(d.owner, []).append(d)
        users = []
        for owner in sorted(per_user):
            dags = per_user[owner]
            ended = sum(d.ended for d in dags)
            users.append(f"{owner} {len(dags) - ended}" + (f"+{ended} ended" if ended else ""))
        who = "all users (u: yours)" if self.all_users else f"{snapshot.owner}'s (u: all users)"
        period = self.app.ended_for
        ended = f"ended ones for {_period(period)}" if period is not None else "ended ones left out (e keeps them)"
        return " · ".join([text, who, ended] + (["per user: " + ", ".join(users)] if users else []))

    # -------------------------------------------------------------- actions

    def open_current(self) -> None:
        self.action_open_dag()

    def action_open_dag(self) -> None:
        current = self.current()
        if current is not None:
            self.app.push_screen(DagScreen(current.id))

    def action_held(self) -> None:
        from crabtui.screens.held import HeldScreen

        self.app.push_screen(HeldScreen())

    def action_queue(self) -> None:
        from crabtui.screens.batches import BatchesScreen

        self.app.push_screen(BatchesScreen())

    def action_ended_period(self) -> None:
        periods = list(ENDED_PERIODS)
        now = self.app.ended_for
        self.app.ended_for = periods[(periods.index(now) + 1) % len(periods)] if now in periods else periods[0]
        self.app.notify(f"Ended DAGs stay in the list for {_period(self.app.ended_for)}."
                        if self.app.ended_for is not None else "Ended DAGs are left out of the list.",
                        title="Ended DAGs")
        self.refresh_now(even_if_paused=True)

    def _chosen(self) -> list[DagSummary]:
        return [self.table.items[k] for k in self.table.selection() if k in self.table.items]

    def action_remove(self) -> None:
        self._bulk("Remove", lambda d: not d.ended and d.job_status != JobStatus.REMOVED, "still in the queue",
                   "DAGMan removes its node jobs, runs the FINAL node if the DAG has one, writes a rescue DAG "
                   "and exits; submitting the DAG again runs what did not finish.",
                   lambda ids: self.app.backend.remove(ids))

    def action_hold(self) -> None:
        self._bulk("Hold", lambda d: not d.ended and d.job_status in (JobStatus.IDLE, JobStatus.RUNNING),
                   "idle or running",
                   "DAGMan stops gracefully: no new node job is submitted and no script runs; queued node jobs "
                   "go on running. Releasing it (r) restarts DAGMan in recovery mode.",
                   lambda ids: self.app.backend.hold(ids))

    def action_release(self) -> None:
        self._bulk("Release", lambda d: not d.ended and d.job_status == JobStatus.HELD, "held",
                   "DAGMan restarts in recovery mode: it reads its nodes log, so finished nodes do not run again "
                   "and queued jobs are picked up where they are.",
                   lambda ids: self.app.backend.release(ids))

    def _bulk(self, verb: str, can: Callable[[DagSummary], bool], what: str, effect: str,
              call: Callable[[list[str]], object]) -> None:
        chosen = self._chosen()
        targets = [d for d in chosen if can(d)]
        if not targets:
            self.app.notify(chosen[0].left_queue(verb.lower()) if len(chosen) == 1 and chosen[0].ended else
                            f"Nothing to {verb.lower()}: only DAGs that are {what} can be.", severity="warning")
            return
        left = [f"{d.id} ({d.state})" for d in chosen if d not in targets]
        ids = [f"{d.id}.0" for d in targets]
        details = _named([f"DAG {d.id} of {d.owner}: {d.dag_file} ({d.state})" for d in targets])
        details += (f"\nLeft alone: {', '.join(left)}" if left else "") + f"\n\n{effect}"
        question = f"{verb} DAG {targets[0].id}?" if len(targets) == 1 else f"{verb} {len(targets)} DAGs?"

        def done(result) -> str:
            return acted(verb, result.changed, "DAGMan jobs", result.refused)

        self.app.confirm(question, details, verb, lambda: self.app.act(verb, call, ids, done=done))

    def action_halt(self) -> None:
        everything = self._chosen()
        chosen = [d for d in everything if not d.ended]
        if not chosen:
            self.app.notify(everything[0].left_queue("halt") if len(everything) == 1 else
                            "Nothing to halt: only DAGs in the queue can be halted.", severity="warning")
            return
        backend = self.app.backend
        if all(d.halted for d in chosen):
            for d in chosen:
                self.app.act("Unhalt", backend.unhalt_dag, d.dag_file, d.id,
                             done=lambda ok, d=d: f"Resumed DAG {d.id}." if ok else f"DAG {d.id} was not halted.")
            return
        targets = [d for d in chosen if not d.halted]
        unknown = [d for d in targets if d.halt_unknown]
        details = _named([f"DAG {d.id}: {d.dag_file}" for d in targets])
        details += ("\n\nNo new node job is submitted and no PRE script runs; queued and running jobs and their "
                    "POST scripts finish. Then DAGMan runs the FINAL node, writes a rescue DAG and exits. Until "
                    "then, H again resumes the DAG.")
        if unknown:
            details += (f"\n\nThe directory of DAG {', '.join(str(d.id) for d in unknown)} cannot be seen from this "
                        "machine: its halt file cannot be written here. Hold its DAGMan job instead (h).")
        question = f"Halt DAG {targets[0].id}?" if len(targets) == 1 else f"Halt {len(targets)} DAGs?"

        def halt() -> None:
            for d in targets:
                self.app.act("Halt", backend.halt_dag, d.dag_file, d.id,
                             done=lambda ok, d=d: f"Halted DAG {d.id}." if ok else f"DAG {d.id} was halted already.")

        self.app.confirm(question, details, "Halt", halt)

    def action_copy(self, what: str) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(str(current.id) if what == "id" else current.dag_file)

def _period(seconds: float | None) -> str:
    if seconds is None:
        return "no time"
    for size, unit in ((7 * 86400, "week"), (86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{int(seconds)} seconds"


def _named(lines: Sequence[str]) -> str:
    shown = list(lines[:MAX_NAMED])
    more = len(lines) - len(shown)
    return "\n".join(shown) + (f"\n… and {more} more" if more else "")


def _nodes(d: DagSummary) -> str:
    """``1/3 done:1 running:2``: done of all nodes, then the nodes per state."""
    return " ".join([f"{d.done}/{d.total}" if d.total else "-", *(f"{k}:{n}" for k, n in d.nodes.items())])


def _render_nodes(value: str, d: DagSummary, palette: Palette) -> Text:
    """``1/3 ✔1 ▶2``."""
    text = Text(value.split(" ", 1)[0] + " ", no_wrap=True, end="")
    return text.append_text(dag_node_counts(d.nodes, palette))


def _render_file(value: str, d: DagSummary, palette: Palette) -> Text:
    """``d.dag  /home/alice/run/``: the file's name first, so that a narrow terminal shows it; a
    CRAB task's DAG (of another state directory: this one's are tasks) says so first."""
    directory, _, name = shown_path(value).rpartition("/")
    text = Text(no_wrap=True, end="")
    if d.crab_task:
        text.append(f"CRAB task {d.crab_request}", style="bold")
        text.append("  ")
    text.append(name)
    text.append(f"  {directory}/", style="dim")
    return text


def _progress(d: DagSummary) -> tuple:
    """The done share (what the column sorts by), then every count (what the bar shows)."""
    return (d.done / d.total if d.total else 0.0, tuple(sorted(d.nodes.items())))
