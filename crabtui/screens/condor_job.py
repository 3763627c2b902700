"""A job of the queue view that is neither a CRAB task's nor a DAG node's (those open their own
screens): its ClassAd, its stdout and stderr, and its own events from its user log, as a DAG
node's screen shows its job's.  Each file tab says why it is empty or missing."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.batch_view import STATE_WORDS
from crabtui.condor_job_view import CondorJobSnapshot, condor_job_snapshot
from crabtui.screens.polling import PollingScreen
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.log_view import LogView
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed

TABS = (("classad", "ClassAd"), ("stdout", "Out"), ("stderr", "Err"), ("log", "Log"))
FOLLOWED = ("stdout", "stderr", "log")  # text that grows at its end


class CondorJobScreen(PollingScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back", tooltip="Back to the batch"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", tooltip="Copy the job's id"),
        Binding("C", "copy('path')", "Copy path", id="copy-path", tooltip="Copy the path of the file shown"),
    ]

    def __init__(self, job: str) -> None:
        super().__init__()
        self.job = job
        self.snapshot: CondorJobSnapshot | None = None

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Tabbed(initial="classad"):
            for tab, title in TABS:
                with Pane(title, id=f"cj-{tab}"):
                    yield LogView(id=f"cj-{tab}-text", follow=tab in FOLLOWED)
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = f"crabtui › queue › job {self.job}"
        super().on_mount()

    def fetch(self, now: float) -> CondorJobSnapshot:
        return condor_job_snapshot(self.app.backend, self.job, now)

    def show(self, snapshot: CondorJobSnapshot) -> None:
        self.snapshot = snapshot
        state = STATE_WORDS.get(snapshot.status, "") if snapshot.status is not None else ""
        where = f" ({snapshot.where})" if snapshot.where else " (neither in the queue nor in the history)"
        line = Text(f"Job {self.job}  {state}{where}", no_wrap=True)
        reason = Text(f"held: {snapshot.hold_reason}" if snapshot.hold_reason else "", no_wrap=True,
                      overflow="ellipsis", style=self.app.palette.style("warning"))
        self.update_static("summary", Text("\n").join([line, reason]))
        self._set_text("classad", snapshot.ad_text or f"No job {self.job} in the queue or its history.")
        for tab in FOLLOWED:
            text = snapshot.texts.get(tab)
            self._set_text(tab, text if text else f"({snapshot.notes.get(tab, 'nothing here')})")
        self._update_info()

    def _set_text(self, tab: str, text: str) -> None:
        self.query_one(f"#cj-{tab}-text", LogView).update_text(text)

    def _tab(self) -> str:
        return self.query_one(Tabbed).active.removeprefix("cj-")

    def _update_info(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        tab = self._tab()
        if tab in snapshot.files:
            text = self.query_one(f"#cj-{tab}-text", LogView).describe(snapshot.files[tab])
        elif tab == "classad":
            text = "The job's ClassAd (condor_q -l / condor_history -l)" + (
                f", from the {snapshot.where}" if snapshot.where else "")
        else:
            text = snapshot.notes.get(tab, "")
        self.update_static("info", Text(text, no_wrap=True, overflow="ellipsis"))

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        event.pane.query_one(LogView).focus()
        self._update_info()

    def tick(self) -> None:
        self._update_info()

    def action_copy(self, what: str) -> None:
        if what == "id":
            self.app.copy(self.job)
        elif self.snapshot is not None and self._tab() in self.snapshot.files:
            self.app.copy(self.snapshot.files[self._tab()])

    def action_back(self) -> None:
        self.app.pop_screen()
