"""The line under the table that filters it (``/``) or finds in it (``f``): hidden until asked
for, it acts as you type.  A filter hides the rows that do not match; Enter keeps it and goes
back to the table (whose summary line then shows it), Escape clears it.  A find moves the cursor
to the first matching row from where it was, hiding nothing; Enter stays there (``n`` and ``N``
go on to the next and previous match), Escape puts the cursor back.

A ``field:`` that is no column of the table is said at the right end of the line, with the
fields there are, and the rows stay as the last valid text left them; Enter does not keep it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Static

from crabtui.widgets.live_table import FilterError, LiveTable

PLACEHOLDERS = {"filter": "filter: text, field:text, field:=text, !text",
                "find": "find: text, field:text, field:=text (then n / N for the next / previous)"}


ERROR_SHARE = 0.7  # of the line, the error's at most (app.tcss: .filter-error's max-width)


class FilterInput(Input):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def action_cancel(self) -> None:
        self.parent.close(keep=False)


class FilterBar(Horizontal):
    def __init__(self, covers: str = "#info") -> None:
        super().__init__(classes="filter-bar")
        self.covers = covers  # the line it shows in place of, so that the table keeps its size
        self.table: LiveTable | None = None
        self.mode = "filter"
        self.error = ""
        self._from_row = 0  # where a find started

    def compose(self) -> ComposeResult:
        yield FilterInput(compact=True)
        yield Static("", classes="filter-error", markup=False)

    @property
    def input(self) -> FilterInput:
        return self.query_one(FilterInput)

    @property
    def value(self) -> str:
        return self.input.value

    def open(self, table: LiveTable, mode: str = "filter") -> None:
        self.table, self.mode = table, mode
        field = self.input
        field.placeholder = PLACEHOLDERS[mode]
        self._from_row = table.cursor_row
        field.value = table.filter if mode == "filter" else table.find_text
        self.screen.query_one(self.covers).display = False
        self.display = True
        field.focus()

    def _show_error(self, error: str) -> None:
        """Only a change of the error touches its line: an update lays the screen out again."""
        if error == self.error:
            return
        self.error = error
        line = self.query_one(".filter-error", Static)
        line.update(error)
        line.display = bool(error)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        table = self.table
        if table is None:
            return
        try:
            if self.mode == "filter":
                table.filter = event.value
            elif not table.find(event.value, start=self._from_row) and event.value.strip():
                table.move_cursor(row=self._from_row)
        except FilterError as e:
            self._show_error(e.fitted(int(self.size.width * ERROR_SHARE) - 2))  # its padding: 0 1
        else:
            self._show_error("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.error:
            self.close(keep=True)

    def close(self, keep: bool) -> None:
        table = self.table
        if table is not None:
            if not keep and self.mode == "filter":
                table.filter = ""
            elif not keep:
                table.find_text = ""
                table.move_cursor(row=self._from_row)
            table.focus()
        self._show_error("")
        self.display = False
        self.screen.query_one(self.covers).display = True
        self.table = None
