"""A screen that is one live table of things to open: the task list and the DAG list.

What such a screen does besides its columns and its actions is the same for both: the table's
stale marker, its clock tick and colours, the info line that describes it (or says why it is
empty), Enter or a click to open the row under the cursor, ``/`` and ``f``, and Escape that
clears the marks, then the filter, then goes back; and the jobs of marked rows held, released or
removed once asked.  :class:`UsersListScreen` adds ``u``: the user's own rows, or every user's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.screens.polling import PollingScreen
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable, plural
from crabtui.widgets.states import Palette, short_duration
from crabtui.widgets.status_bar import StatusBar


class ListScreen(PollingScreen):
    """Subclasses say what the rows are (:meth:`columns`, :meth:`rows`), how to open one
    (:meth:`open_current`) and, as class attributes, what they are called."""

    BINDINGS = [
        Binding("slash", "filter", "Filter", id="filter", tooltip="Filter the rows"),
        Binding("f", "find", "Find", id="find", tooltip="Find: move to the next row that matches"),
    ]
    TABLE_ID = ""  # the table's id
    CRUMBS = ""  # the status bar's "where you are"
    NOUN = ""  # what a row is, in the plural
    EMPTY = ""  # the info line when there are none

    def __init__(self) -> None:
        super().__init__()
        self.stale = False

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield LiveTable(self.columns(), id=self.TABLE_ID)
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = self.CRUMBS
        super().on_mount()

    @property
    def table(self) -> LiveTable:
        return self.query_one(f"#{self.TABLE_ID}", LiveTable)

    # -------------------------------------------------------------- to implement

    def columns(self) -> list[Column]:
        raise NotImplementedError

    def rows(self, snapshot: Any) -> dict[str, Any]:
        """The snapshot's rows by key, in their own order."""
        raise NotImplementedError

    def open_current(self) -> None:
        """Open the row under the cursor."""
        raise NotImplementedError

    # -------------------------------------------------------------- shared

    def stale_column(self, also: Any = lambda item: False) -> Column:
        """``⚠`` while the engine does not answer, or where ``also(item)`` (a row that could not be read)."""
        return Column("stale", "!", lambda item: "⚠" if self.stale or also(item) else "",
                      lambda value, item, palette: Text(value, style=palette.style("error"), end=""), width=1)

    def age_column(self, since: Any, key: str = "age", label: str = "Age") -> Column:
        """How long ago ``since(item)`` was, as ``3m``."""
        return Column(key, label, lambda item: shown_age(self.app.clock() - since(item)),
                      lambda value, item, palette: Text(short_duration(value), end=""), width=4, live=True, right=True)

    def show(self, snapshot: Any) -> None:
        self.stale = False
        self.table.set_items(self.rows(snapshot))
        self.update_info()

    def info_text(self) -> str:
        """The line under the table: what it shows, or why it is empty."""
        return self.table.describe(self.NOUN) if self.table.items else self.EMPTY

    def update_info(self) -> None:
        self.update_static("info", self.info_text())

    def stale_changed(self) -> None:
        self.stale = True
        self.table.recompute()

    def tick(self) -> None:
        self.table.tick()

    def set_palette(self, palette: Palette) -> None:
        self.table.set_palette(palette)

    def on_live_table_view_changed(self, event: LiveTable.ViewChanged) -> None:
        self.update_info()

    def on_line_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        event.stop()
        self.open_current()

    def current(self) -> Any:
        """The item under the cursor (None: no rows)."""
        key = self.table.cursor_key
        return None if key is None else self.table.items.get(key)

    def action_filter(self) -> None:
        self.query_one(FilterBar).open(self.table)

    def action_find(self) -> None:
        self.query_one(FilterBar).open(self.table, "find")

    def clear(self) -> bool:
        """Clear the marks, else the filter; False if there was neither."""
        if self.table.clear_marks():
            return True
        if self.table.filter:
            self.table.filter = ""
            return True
        return False

    def action_back(self) -> None:
        if not self.clear():
            self.app.pop_screen()

    def confirm_jobs(self, verb: str, question: str, details: str, call: Callable[[list[str]], Any],
                     ids: list[str]) -> None:
        """Ask ``question`` (``details`` below it), then ``call(ids)`` off the UI thread: its jobs
        changed, and the schedd's refusals, become the notification, as condor_hold prints them."""
        def done(result: Any) -> str:
            return acted(verb, result.changed, "jobs", result.refused)

        self.app.confirm(question, details, verb, lambda: self.app.act(verb, call, ids, done=done))


PAST = {"Hold": "Held", "Release": "Released", "Remove": "Removed"}


def acted(verb: str, changed: int, noun: str, refused: list[str]) -> str:
    """What an action did, as the notification says it: ``Released 3 jobs.``, ``Held no DAGMan
    job.``, then what the schedd refused and why."""
    what = plural(changed, noun) if changed else "no " + plural(1, noun).split(" ", 1)[1]
    return f"{PAST.get(verb, verb)} {what}." + (" Refused: " + "; ".join(refused) if refused else "")


class UsersListScreen(ListScreen):
    """A list of the user's own rows by default and of every user's after ``u``, as condor_q
    shows only yours unless ``-allusers``: :meth:`rows` chooses by :attr:`all_users` from the
    :attr:`snapshot` that :meth:`show` keeps."""

    def __init__(self) -> None:
        super().__init__()
        self.all_users = False
        self.snapshot: Any = None

    def show(self, snapshot: Any) -> None:
        self.snapshot = snapshot
        super().show(snapshot)

    def action_toggle_users(self) -> None:
        self.all_users = not self.all_users
        self.refresh_bindings()
        if self.snapshot is not None:
            self.table.set_items(self.rows(self.snapshot))
            self.update_info()

    def key_description(self, binding: Binding) -> str | None:
        """u on the key bar says what a press does now: every user's, or yours only again."""
        return ("Mine" if self.all_users else "All users") if binding.action == "toggle_users" else None


def shown_age(seconds: float) -> int:
    """The age cut to what :func:`short_duration` shows, so the cell repaints only when its text changes."""
    seconds = max(0, int(seconds))
    for size in (86400, 3600, 60):
        if seconds >= size:
            return seconds - seconds % size
    return seconds
