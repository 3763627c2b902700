"""The ``/`` filter line: hidden until asked for, it filters a table as you type; Enter keeps the
filter and goes back to the table (whose summary line then shows it), Escape clears it."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input

from crabtui.widgets.live_table import LiveTable


class FilterBar(Input):
    BINDINGS = [Binding("escape", "clear_filter", "Clear filter")]

    def __init__(self) -> None:
        super().__init__(placeholder="filter: text, column:text, !text", classes="filter-bar")
        self.table: LiveTable | None = None

    def open(self, table: LiveTable) -> None:
        self.table = table
        self.value = table.filter
        self.display = True
        self.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.table is not None:
            self.table.filter = event.value

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(keep=True)

    def action_clear_filter(self) -> None:
        self._close(keep=False)

    def _close(self, keep: bool) -> None:
        table = self.table
        if table is not None:
            if not keep:
                table.filter = ""
            table.focus()
        self.display = False
        self.table = None
