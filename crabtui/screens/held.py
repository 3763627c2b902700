"""The held jobs: each with its owner, how long it has been held, its hold reason and code and
what it belongs to, grouped by reason (the largest group first), so that an operator releases
the jobs of one cause together: ``g`` marks the jobs held for the reason under the cursor, ``r``
releases the marked jobs, ``K`` removes them.  By default the user's own jobs, as condor_q
shows them; ``u`` shows every user's."""

from __future__ import annotations

from collections.abc import Callable

from textual.binding import Binding

from crabtui.held_view import HeldJob, HeldSnapshot, causes
from crabtui.screens.listing import UsersListScreen
from crabtui.widgets.live_table import Column, plural

MAX_NAMED = 12  # jobs a dialog lists before "and N more"
CAUSES_SHOWN = 3  # reasons the info line counts
REASON_WIDTH = 40


class HeldScreen(UsersListScreen):
    BINDINGS = [
        Binding("enter", "show_reason", "Reason", id="show-reason", tooltip="Show the whole hold reason"),
        Binding("r", "release", "Release", id="release-held", tooltip="Release the marked jobs (or the one under the cursor)"),
        Binding("g", "mark_cause", "Mark reason", id="mark-cause",
                tooltip="Mark every job held for the reason under the cursor"),
        Binding("K", "remove", "Remove", id="remove-held", tooltip="Remove the marked jobs (condor_rm)"),
        Binding("u", "toggle_users", "All users", id="held-users", tooltip="Show every user's held jobs, or only yours"),
        Binding("c", "copy", "Copy id", id="copy-held", show=False, tooltip="Copy the job's id"),
        Binding("escape", "back", "Back", id="back-held", tooltip="Clear the marks, then the filter, then go back"),
    ]
    TABLE_ID, CRUMBS, NOUN = "held", "crabtui › held jobs", "held jobs"
    EMPTY = "No held jobs."

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: HeldSnapshot | None = None

    def columns(self) -> list[Column]:
        return [
            self.stale_column(),
            Column("job", "Job", lambda j: j.id, width=9, right=True),
            Column("owner", "Owner", lambda j: j.owner, width=8),
            self.age_column(lambda j: j.since, "held", "Held"),
            Column("code", "Code", lambda j: "" if j.code is None else str(j.code), width=4, right=True),
            Column("reason", "Reason", lambda j: j.reason, width=REASON_WIDTH),  # first: it is what 80 columns show
            Column("of", "Of", lambda j: j.of),
        ]

    def fetch(self, now: float) -> HeldSnapshot:
        return self.app.backend.held(now)

    def rows(self, snapshot: HeldSnapshot) -> dict[str, HeldJob]:
        return {j.id: j for j in snapshot.jobs if self.all_users or j.owner == snapshot.owner}

    def info_text(self) -> str:
        """The table's summary, whose jobs it shows, and the largest groups by reason."""
        snapshot = self.snapshot
        if snapshot is None:
            return ""
        if not self.table.items:
            if snapshot.jobs:
                return f"None of your jobs is held; {plural(len(snapshot.jobs), 'jobs')} of other users (u shows them)."
            return self.EMPTY
        groups = causes(self.table.items.values())
        shown = [f"{n}× {cause}" for cause, n in groups[:CAUSES_SHOWN]]
        more = len(groups) - len(shown)
        who = "all users (u: yours)" if self.all_users else f"{snapshot.owner}'s (u: all users)"
        return " · ".join([self.table.describe(self.NOUN), who, plural(len(groups), "reasons") + ": " + "; ".join(shown)
                           + (f"; {more} more" if more else "")])

    # -------------------------------------------------------------- actions

    def open_current(self) -> None:
        self.action_show_reason()

    def action_show_reason(self) -> None:
        current = self.current()
        if current is not None:
            code = "" if current.code is None else f" (HoldReasonCode {current.code}, subcode {current.subcode})"
            self.app.notify(f"{current.reason}{code}", title=f"Job {current.id} held", timeout=10)

    def action_mark_cause(self) -> None:
        current = self.current()
        if current is not None:
            keys = [k for k, j in self.table.items.items() if j.cause == current.cause]
            self.table.mark(keys)

    def action_release(self) -> None:
        self._act("Release", "They go back to idle and are matched again; a cause that is not fixed holds them "
                  "again.", self.app.backend.release)

    def action_remove(self) -> None:
        self._act("Remove", "They leave the queue (condor_rm); a DAG's node or a CRAB job fails and can be "
                  "retried or resubmitted.", self.app.backend.remove)

    def _act(self, verb: str, effect: str, call: Callable[[list[str]], object]) -> None:
        chosen = [self.table.items[k] for k in self.table.selection() if k in self.table.items]
        if not chosen:
            return
        ids = [j.id for j in chosen]
        lines = [f"{j.id} of {j.owner}{' (' + j.of + ')' if j.of else ''}: {j.reason}" for j in chosen[:MAX_NAMED]]
        if len(chosen) > MAX_NAMED:
            lines.append(f"… and {len(chosen) - MAX_NAMED} more")
        question = f"{verb} job {ids[0]}?" if len(ids) == 1 else f"{verb} {len(ids)} held jobs?"
        self.confirm_jobs(verb, question, "\n".join(lines) + f"\n\n{effect}", call, ids)

    def action_copy(self) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(current.id)
