"""The line under the table that filters it (``/``) or finds in it (``f``): hidden until asked
for, it acts as you type.  A filter hides the rows that do not match; Enter keeps it and goes
back to the table (whose summary line then shows it), Escape clears it.  A find moves the cursor
to the first matching row from where it was, hiding nothing; Enter stays there (``n`` and ``N``
go on to the next and previous match), Escape puts the cursor back."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input

from crabtui.widgets.live_table import LiveTable

PLACEHOLDERS = {"filter": "filter: text, column:text, column:=text, !text",
                "find": "find: text, column:text, column:=text (then n / N for the next / previous)"}


class FilterBar(Input):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, covers: str = "#info") -> None:
        super().__init__(classes="filter-bar")
        self.covers = covers  # the line it shows in place of, so that the table keeps its size
        self.table: LiveTable | None = None
        self.mode = "filter"
        self._from_row = 0  # where a find started

    def open(self, table: LiveTable, mode: str = "filter") -> None:
        self.table, self.mode = table, mode
        self.placeholder = PLACEHOLDERS[mode]
        self._from_row = table.cursor_row
        self.value = table.filter if mode == "filter" else table.find_text
        self.screen.query_one(self.covers).display = False
        self.display = True
        self.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        table = self.table
        if table is None:
            return
        if self.mode == "filter":
            table.filter = event.value
        elif not table.find(event.value, start=self._from_row) and event.value.strip():
            table.move_cursor(row=self._from_row)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(keep=True)

    def action_cancel(self) -> None:
        self._close(keep=False)

    def _close(self, keep: bool) -> None:
        table = self.table
        if table is not None:
            if not keep and self.mode == "filter":
                table.filter = ""
            elif not keep:
                table.find_text = ""
                table.move_cursor(row=self._from_row)
            table.focus()
        self.display = False
        self.screen.query_one(self.covers).display = True
        self.table = None
