"""The DAGs users submitted themselves (``crabtui dag submit``, condor_submit_dag): each DAGMan
job in the queue with its status, a progress bar of its nodes, its node counts, its age and its
DAG file.  CRAB tasks' DAGs are not here: the task list shows them."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.screens.polling import PollingScreen
from crabtui.screens.tasks import shown_age
from crabtui.snapshots import DagsSnapshot, DagSummary
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable
from crabtui.widgets.states import Palette, progress_bar, short_duration, state_counts
from crabtui.widgets.status_bar import StatusBar

BAR_WIDTH = 8
# a DAG's state (DagSummary.state) -> (glyph, colour role): a glyph and a word, never colour alone
DAG_LOOK = {
    "idle": ("○", "plain"), "running": ("▶", "primary"), "recovering": ("↻", "primary"),
    "halted": ("⏸", "warning"), "held": ("‖", "warning"), "removing": ("✗", "error"),
    "aborting": ("✖", "error"),
    "completed": ("✔", "success"), "failed": ("✖", "error"), "removed": ("✗", "error"),
}


def dag_state(state: str, palette: Palette) -> Text:
    """``▶ running``, ``⏸ halted``."""
    glyph, role = DAG_LOOK.get(state, ("?", "plain"))
    return Text(f"{glyph} {state}", style=palette.style(role), no_wrap=True, end="")


class DagsScreen(PollingScreen):
    BINDINGS = [
        Binding("enter", "open_dag", "Open", id="open-dag", tooltip="Open the DAG: its condor_q -dag tree and its log"),
        Binding("slash", "filter", "Filter", id="filter", tooltip="Filter the DAGs"),
        Binding("f", "find", "Find", id="find", tooltip="Find a DAG: move to the next one that matches"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the DAGMan job's id"),
        Binding("C", "copy('file')", "Copy file", id="copy-file", show=False, tooltip="Copy the DAG file's path"),
        Binding("escape", "back", "Back", id="back",
                tooltip="Clear the marks, then the filter, then go back to the tasks"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.stale = False

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield LiveTable(self._columns(), id="dags")
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = "crabtui › DAGs"
        super().on_mount()

    def _columns(self) -> list[Column]:
        def marker(d: DagSummary) -> str:
            return "⚠" if self.stale else ""

        return [
            Column("stale", "!", marker, lambda v, d, p: Text(v, style=p.style("error"), end=""), width=1),
            Column("dag", "DAG", lambda d: d.id, width=6, right=True),
            Column("status", "Status", lambda d: d.state, lambda v, d, p: dag_state(v, p), width=12),
            Column("progress", "Progress", _progress,
                   lambda v, d, p: progress_bar(d.counts, d.total, BAR_WIDTH, p), width=BAR_WIDTH + 7),
            Column("nodes", "Nodes", _nodes, _render_nodes, width=15),
            Column("age", "Age", lambda d: shown_age(self.app.clock() - d.submitted_at),
                   lambda v, d, p: Text(short_duration(v), end=""), width=4, live=True, right=True),
            Column("file", "DAG file", lambda d: d.dag_file, _render_file),
        ]

    @property
    def table(self) -> LiveTable:
        return self.query_one("#dags", LiveTable)

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> DagsSnapshot:
        return self.app.backend.dags(now)

    def show(self, snapshot: DagsSnapshot) -> None:
        self.stale = False
        self.table.set_items({str(d.id): d for d in snapshot.dags})
        if not snapshot.dags:
            self.query_one("#info", Static).update(
                "No DAGs in the queue: submit one with 'crabtui dag submit FILE.dag' (CRAB tasks' DAGs are tasks).")

    def stale_changed(self) -> None:
        self.stale = True
        self.table.recompute()

    def tick(self) -> None:
        self.table.tick()

    def set_palette(self, palette: Palette) -> None:
        self.table.set_palette(palette)

    def on_live_table_view_changed(self, event: LiveTable.ViewChanged) -> None:
        if event.table.items:
            self.query_one("#info", Static).update(event.table.describe("DAGs"))

    # -------------------------------------------------------------- actions

    def on_line_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        event.stop()
        self.action_open_dag()

    def _current(self) -> DagSummary | None:
        key = self.table.cursor_key
        return None if key is None else self.table.items.get(key)

    def action_open_dag(self) -> None:
        from crabtui.screens.dag import DagScreen

        current = self._current()
        if current is not None:
            self.app.push_screen(DagScreen(current.id))

    def action_filter(self) -> None:
        self.query_one(FilterBar).open(self.table)

    def action_find(self) -> None:
        self.query_one(FilterBar).open(self.table, "find")

    def action_copy(self, what: str) -> None:
        current = self._current()
        if current is not None:
            self.app.copy(str(current.id) if what == "id" else current.dag_file)

    def action_back(self) -> None:
        if self.table.clear_marks():
            return
        if self.table.filter:
            self.table.filter = ""
            return
        self.app.pop_screen()


def _nodes(d: DagSummary) -> str:
    """``1/3 finished:1 running:2``: done of all nodes, then the nodes per state."""
    return " ".join([f"{d.done}/{d.total}" if d.total else "-", *(f"{k}:{n}" for k, n in d.counts.items())])


def _render_nodes(value: str, d: DagSummary, palette: Palette) -> Text:
    """``1/3 ✔1 ▶2``."""
    text = Text(value.split(" ", 1)[0] + " ", no_wrap=True, end="")
    return text.append_text(state_counts(d.counts, palette))


def _render_file(value: str, d: DagSummary, palette: Palette) -> Text:
    """``d.dag  /home/alice/run/``: the file's name first, so that a narrow terminal shows it."""
    directory, _, name = value.rpartition("/")
    text = Text(name, no_wrap=True, end="")
    text.append(f"  {directory}/", style="dim")
    return text


def _progress(d: DagSummary) -> tuple:
    """The done share (what the column sorts by), then every count (what the bar shows)."""
    return (d.done / d.total if d.total else 0.0, tuple(sorted(d.counts.items())))
