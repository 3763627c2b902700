"""``?``: every key the screen underneath answers to, from its live bindings (so remapped keys
show as remapped), and what the glyphs and colours mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from crabtui.keymap import keymap_path
from crabtui.screens.polling import PollingScreen
from crabtui.task_status import NO_OUTPUT, RESCHEDULED
from crabtui.widgets.key_bar import IMPORTANCE
from crabtui.widgets.live_table import LiveTable, field_names
from crabtui.widgets.states import BAR_LEGEND, NODE_LOOK
from crabtui.widgets.tabbed import Tabbed


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "Close")]

    def __init__(self, screen: PollingScreen) -> None:
        super().__init__(classes="dialog")
        self.under = screen
        self.key_rows: list[tuple[str, str]] = []  # what the keys table lists

    def compose(self) -> ComposeResult:
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold", no_wrap=True)
        keys.add_column()
        keys.add_column(style="dim", no_wrap=True)  # the id a keymap file remaps it by
        ours = {(b.action, b.description, b.tooltip) for cls in (type(self.under), type(self.app), LiveTable, Tabbed)
                for klass in cls.__mro__ if klass.__module__.startswith("crabtui.")
                for b in vars(klass).get("BINDINGS", ())}
        seen = set()
        tabs, rows = [], []  # rows: (binding id, key, what it does)
        for active in self.under.active_bindings.values():
            binding = active.binding
            what = (binding.action, binding.description, binding.tooltip)
            if what not in ours or what in seen:
                continue
            seen.add(what)
            if binding.action.startswith("show_tab("):
                tabs.append(self.app.get_key_display(binding))
            else:
                rows.append((binding.id or "", self.app.get_key_display(binding), binding.tooltip or binding.description))
        rank = {name: i for i, name in enumerate(IMPORTANCE)}
        rows.sort(key=lambda row: rank.get(row[0], len(rank)))  # as the key bar orders them
        if tabs:
            rows.append(("", f"{tabs[0]}-{tabs[-1]}", "Show the tab whose label has that digit"))
        command_palette = Binding(self.app.COMMAND_PALETTE_BINDING, "command_palette")
        rows.append(("", self.app.get_key_display(command_palette), "The command palette: every action here, by name"))
        for binding_id, key, what in rows:
            self.key_rows.append((key, what))
            keys.add_row(key, what, binding_id)
        legend = Table.grid(padding=(0, 2))
        legend.add_column(no_wrap=True)
        legend.add_column()
        palette = self.app.palette
        for state, (glyph, role) in NODE_LOOK.items():
            legend.add_row(Text(f"{glyph} {state}", style=palette.style(role)), _MEANING[state])
        with VerticalScroll(id="dialog"):
            yield Label(f"Keys of this screen ({self.under.status_bar.crumbs})", id="question")
            yield Static(keys)
            yield Label("Job states", classes="heading")
            yield Static(legend)
            yield Label("Progress bars", classes="heading")
            yield Static(BAR_LEGEND, markup=False)
            yield Static("Filter with / and find with f: text matches any column, field:text only that "
                         "field (state:fail), field:=text it exactly, !text keeps the rows that do not match; "
                         "quote text with a colon (\"12:30\"). Escape clears it.", markup=False)
            for name, fields in self._fields():
                yield Static(f"Fields of {name}: {', '.join(fields)}", markup=False)
            yield Static(f"Keys are remapped by the ids of the third column in {keymap_path()}, "
                         'under [keys], such as: hold = "ctrl+h"', markup=False)

    def _fields(self) -> list[tuple[str, list[str]]]:
        """Each table of the screen underneath and the field names its filter knows."""
        tables = []
        for table in self.under.query(LiveTable):
            pane = next((a for a in table.ancestors if getattr(a, "title", None) and a.id), None)
            name = f"the {pane.title} tab" if pane is not None else "the table"
            tables.append((name, field_names(table.table_columns)))
        return tables

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


_MEANING = {
    "unsubmitted": "not run yet (or resubmitted, waiting for its DAG)",
    "cooloff": "failed, will be retried when the time shown has passed",
    "idle": "queued, waiting for a slot",
    "running": "running at the site shown",
    "transferring": "ran; PostJob is checking its output",
    "held": "held in the queue (release it with r)",
    "finished": "done",
    NO_OUTPUT: "an automatic task's probe that ended: it measured the throughput; its output is not kept",
    RESCHEDULED: "an automatic task's processing job that failed: a tail job processes its lumis again",
    "failed": "failed for good (resubmit it with R)",
    "killing": "being removed",
    "killed": "removed with its task or DAG",
}
