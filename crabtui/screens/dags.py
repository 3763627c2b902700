"""The DAGs users submitted themselves (``crabtui dag submit``, condor_submit_dag): each DAGMan
job in the queue with its status, a progress bar of its nodes, its node counts, its age and its
DAG file.  CRAB tasks' DAGs are not here: the task list shows them."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from crabtui.screens.dag import DagScreen
from crabtui.screens.listing import ListScreen
from crabtui.snapshots import DagsSnapshot, DagSummary
from crabtui.widgets.live_table import Column
from crabtui.widgets.states import Palette, dag_state, progress_bar, state_counts

BAR_WIDTH = 8


class DagsScreen(ListScreen):
    BINDINGS = [
        Binding("enter", "open_dag", "Open", id="open-dag", tooltip="Open the DAG: its condor_q -dag tree and its log"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the DAGMan job's id"),
        Binding("C", "copy('file')", "Copy file", id="copy-file", show=False, tooltip="Copy the DAG file's path"),
        Binding("escape", "back", "Back", id="back",
                tooltip="Clear the marks, then the filter, then go back to the tasks"),
    ]
    TABLE_ID, CRUMBS, NOUN = "dags", "crabtui › DAGs", "DAGs"
    EMPTY = "No DAGs in the queue: submit one with 'crabtui dag submit FILE.dag' (CRAB tasks' DAGs are tasks)."

    def columns(self) -> list[Column]:
        return [
            self.stale_column(),
            Column("dag", "DAG", lambda d: d.id, width=6, right=True),
            Column("status", "Status", lambda d: d.state, lambda v, d, p: dag_state(v, p), width=12),
            Column("progress", "Progress", _progress,
                   lambda v, d, p: progress_bar(d.counts, d.total, BAR_WIDTH, p), width=BAR_WIDTH + 7),
            Column("nodes", "Nodes", _nodes, _render_nodes, width=15),
            self.age_column(lambda d: d.submitted_at),
            Column("file", "DAG file", lambda d: d.dag_file, _render_file),
        ]

    def fetch(self, now: float) -> DagsSnapshot:
        return self.app.backend.dags(now)

    def rows(self, snapshot: DagsSnapshot) -> dict[str, DagSummary]:
        return {str(d.id): d for d in snapshot.dags}

    # -------------------------------------------------------------- actions

    def open_current(self) -> None:
        self.action_open_dag()

    def action_open_dag(self) -> None:

        current = self.current()
        if current is not None:
            self.app.push_screen(DagScreen(current.id))

    def action_copy(self, what: str) -> None:
        current = self.current()
        if current is not None:
            self.app.copy(str(current.id) if what == "id" else current.dag_file)

    def action_back(self) -> None:
        if not self.clear():
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
