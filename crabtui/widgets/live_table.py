"""A DataTable of keyed items that a refresh updates in place.

Each refresh hands the table every item (a job, a task, a site) by key.  The table keeps each
row's plain column values and redraws only the rows whose values changed, shows and hides rows
by key, and keeps the cursor on the same item through refreshes, sorts and filters (htop and k9s
users' first complaint is a cursor that jumps).  Values also drive sorting (by the raw value,
not its text) and the ``/`` filter; only visible rows of ``live`` columns (a countdown) are
recomputed on a clock tick.  Rows can be marked for bulk actions; the marks live in a one-cell
column of their own.  A cell is made only when it is drawn (:mod:`crabtui.widgets.bulk_table`),
and every item keeps its row while the filter hides it, so that a task of 10,000 jobs costs
little more than a screenful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from crabtui.widgets.bulk_table import BulkTable, LazyRow
from crabtui.widgets.states import DEFAULT_PALETTE, Palette

MARK = "●"
_MARK_COLUMN = "_mark"


@dataclass(frozen=True)
class Column:
    """One column: ``value(item)`` is the plain value (str, number or None) that sorts, filters and
    decides a repaint; ``render(value, item, palette)`` the cell (default: the value as text)."""

    key: str
    label: str
    value: Callable[[Any], Any]
    render: Callable[[Any, Any, Palette], RenderableType] | None = None
    width: int | None = None  # None: as wide as its content (for small tables only)
    live: bool = False  # the value depends on the clock
    right: bool = False  # numbers: right-aligned
    order: Callable[[Any], Any] | None = None  # the sort key of a (non-None) value, if not the value


def row_values(columns: list[Column], items: Mapping[str, Any]) -> dict[str, tuple]:
    """Every item's column values: what :meth:`LiveTable.set_items` compares.  Pure, so a worker
    thread can compute them for 10,000 rows while the UI thread stays free."""
    getters = [c.value for c in columns]
    return {key: tuple(get(item) for get in getters) for key, item in items.items()}


@dataclass(frozen=True)
class Filter:
    """``/`` filter text: a substring of any column (case-insensitive); ``column:text`` looks in
    the column whose label starts with ``column``, ``column:=text`` wants it exactly; a leading
    ``!`` keeps the rows that do not match."""

    text: str

    def compile(self, columns: list[Column]) -> Callable[[tuple[str, ...], str], bool] | None:
        """``passes(texts, joined)``: whether a row passes, given its :func:`row_texts`."""
        text = self.text.strip()
        if not text:
            return None
        invert = text.startswith("!")
        text = text[1:] if invert else text
        index = None
        name, sep, rest = text.partition(":")
        if sep:
            matches = [i for i, c in enumerate(columns) if c.label.lower().startswith(name.lower().strip())]
            if matches:
                index, text = matches[0], rest
        exact = index is not None and text.startswith("=")
        needle = text[exact:].strip().lower()
        if index is None:
            return lambda texts, joined: (needle in joined) != invert
        if exact:
            return lambda texts, joined: (texts[index] == needle) != invert
        return lambda texts, joined: (needle in texts[index]) != invert


def row_texts(values: tuple) -> tuple[tuple[str, ...], str]:
    """A row's values as the filter reads them, lower-case, and joined by NUL, which no needle
    holds: one search of the joined text finds a needle in any column."""
    texts = tuple(("" if v is None else str(v)).lower() for v in values)
    return texts, "\0".join(texts)


class LiveTable(BulkTable):
    """See the module's description.  Keys are strings; items any objects the columns understand."""

    BINDINGS = [
        Binding("space", "toggle_mark", "Mark", tooltip="Mark or unmark the row for a bulk action"),
        Binding("ctrl+a", "mark_all", "Mark all", show=False, tooltip="Mark every row the filter shows"),
        Binding("s", "sort_next", "Sort", id="sort", tooltip="Sort by the next column"),
        Binding("S", "sort_reverse", "Reverse", id="sort-reverse", show=False, tooltip="Reverse the sort order"),
    ]

    class ViewChanged(Message):
        """Rows, filter, sort or marks changed: whatever shows a summary of the table updates."""

        def __init__(self, table: LiveTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> LiveTable:
            return self.table

    def __init__(self, columns: Iterable[Column], *, fixed_columns: int = 0, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, fixed_columns=fixed_columns, id=id, classes=classes)
        self.table_columns = list(columns)
        self.palette = DEFAULT_PALETTE
        self.items: dict[str, Any] = {}
        self.marked: set[str] = set()
        self.sort_column: str | None = None  # None: the items' own order
        self.sort_reverse = False
        self._filter = Filter("")
        self._passes: Callable[[tuple[str, ...], str], bool] | None = None
        self._rows: dict[str, LazyRow] = {}  # every item's row, shown or not, with its column values
        self._texts: dict[str, tuple[tuple[str, ...], str]] = {}  # rows' row_texts, made when a filter asks
        self._order: dict[str, int] = {}
        self._sorted: list[str] | None = None  # every item's key in the sort order (None: to sort again)
        self._shown: dict[str, None] = {}  # the rows on the table, in their order
        self._column_index = {_MARK_COLUMN: -1, **{c.key: i for i, c in enumerate(self.table_columns)}}
        self._live = [i for i, c in enumerate(self.table_columns) if c.live]

    def on_mount(self) -> None:
        self.add_column(Text(" "), key=_MARK_COLUMN, width=1)
        for c in self.table_columns:
            label = Text(c.label, justify="right" if c.right else "left")
            self.add_column(label, key=c.key, width=c.width)

    # -------------------------------------------------------------- feeding

    def set_items(self, items: Mapping[str, Any], values: dict[str, tuple] | None = None) -> None:
        """The table's items, in their own order (the order without a sort column); ``values``
        are their :func:`row_values` if computed already."""
        items = dict(items)
        values = values if values is not None else row_values(self.table_columns, items)
        if list(items) != list(self.items):
            self._order = {key: i for i, key in enumerate(items)}
            self._sorted = None
        self.items = items
        rows, texts = self._rows, self._texts
        sort_index = self._sort_index()
        changed = []
        for key, new in values.items():
            row = rows.get(key)
            if row is None:
                rows[key] = LazyRow(key, new, self._make_cell)
            elif row.values != new:
                if sort_index is not None and row.values[sort_index] != new[sort_index]:
                    self._sorted = None
                row.values = new
                row.clear()
                texts.pop(key, None)
                changed.append(row)
        if len(rows) != len(values):
            for key in [key for key in rows if key not in values]:
                del rows[key]
                texts.pop(key, None)
        self.marked &= values.keys()
        self._sync(changed)

    def recompute(self) -> None:
        """Compute every value again (what they depend on besides the items changed)."""
        self.set_items(self.items)

    def tick(self) -> None:
        """Recompute the live columns of the rows on screen; redraw the cells whose value changed."""
        if not self._live or not self.row_count:
            return
        first = int(self.scroll_offset.y)
        changed = []
        for index in range(first, min(self.row_count, first + self.size.height)):
            row = self._data[self._row_locations.get_key(index)]
            item = self.items.get(row.key.value)
            if item is None:
                continue
            values = list(row.values)
            for i in self._live:
                values[i] = self.table_columns[i].value(item)
                if values[i] != row.values[i]:
                    row.pop(self.table_columns[i].key, None)
            if tuple(values) != row.values:
                row.values = tuple(values)
                self._texts.pop(row.key.value, None)
                changed.append(row)
        if changed:
            self.redraw(changed)

    def set_palette(self, palette: Palette) -> None:
        self.palette = palette
        for row in self._rows.values():
            row.clear()
        self.redraw(self._data.values())

    # -------------------------------------------------------------- filter, sort, marks

    @property
    def filter(self) -> str:
        return self._filter.text

    @filter.setter
    def filter(self, text: str) -> None:
        self._filter = Filter(text)
        self._passes = self._filter.compile(self.table_columns)
        self._sync(force_event=True)

    def sort_by(self, column: str | None, reverse: bool = False) -> None:
        flipped = column == self.sort_column and column is not None and reverse != self.sort_reverse
        self.sort_column, self.sort_reverse = column, reverse
        if flipped and self._sorted is not None:  # every sort key is distinct (ties go by the items' order)
            self._sorted.reverse()
        else:
            self._sorted = None
        self._sync(force_event=True)

    def action_sort_next(self) -> None:
        keys = [None] + [c.key for c in self.table_columns]
        self.sort_by(keys[(keys.index(self.sort_column) + 1) % len(keys)], self.sort_reverse)

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort_column, not self.sort_reverse)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        key = event.column_key.value
        if key == _MARK_COLUMN:
            return
        self.sort_by(key, not self.sort_reverse if key == self.sort_column else False)

    @property
    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        return self._row_locations.get_key(self.cursor_row).value

    def shown_keys(self) -> list[str]:
        """The rows on show, in their order on screen."""
        return list(self._shown)

    def selection(self) -> list[str]:
        """What an action applies to: the marked rows (in the items' order), else the cursor's."""
        if self.marked:
            return [key for key in self.items if key in self.marked]
        key = self.cursor_key
        return [] if key is None else [key]

    def action_toggle_mark(self) -> None:
        key = self.cursor_key
        if key is None:
            return
        self.marked.symmetric_difference_update({key})
        self._paint_mark(key)
        self.action_cursor_down()
        self.post_message(self.ViewChanged(self))

    def action_mark_all(self) -> None:
        self.marked.update(self._shown)
        self._paint_mark(*self._shown)
        self.post_message(self.ViewChanged(self))

    def clear_marks(self) -> bool:
        """Unmark every row; False if none was marked."""
        if not self.marked:
            return False
        marked, self.marked = self.marked, set()
        self._paint_mark(*(marked & self._shown.keys()))
        self.post_message(self.ViewChanged(self))
        return True

    def describe(self, noun: str) -> str:
        """``4 of 12 jobs · filter 'fail' · sorted by State ▼ · 2 marked``."""
        parts = [f"{len(self._shown)} of {len(self.items)} {noun}" if self._passes else f"{len(self.items)} {noun}"]
        if self._passes:
            parts.append(f"filter {self.filter!r}")
        if self.sort_column is not None:
            label = next(c.label for c in self.table_columns if c.key == self.sort_column)
            parts.append(f"sorted by {label} {'▼' if self.sort_reverse else '▲'}")
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        return " · ".join(parts)

    # -------------------------------------------------------------- the diff

    def _make_cell(self, row: LazyRow, column_key: ColumnKey) -> RenderableType:
        """A cell of ``row``, when the table draws it."""
        index = self._column_index[column_key]
        key = row.key.value
        if index < 0:
            marked = key in self.marked
            return Text(MARK if marked else " ", style="bold" if marked else "", end="")
        return self._cell(self.table_columns[index], row.values[index], self.items[key])

    def _cell(self, column: Column, value: Any, item: Any) -> RenderableType:
        if column.render is not None:
            return column.render(value, item, self.palette)
        return Text("" if value is None else str(value), justify="right" if column.right else "left", no_wrap=True,
                    end="")

    def _paint_mark(self, *keys: str) -> None:
        rows = [self._rows[key] for key in keys if key in self._shown]
        for row in rows:
            row.pop(_MARK_COLUMN, None)
        if rows:
            self.redraw(rows)

    def _sync(self, changed: Sequence[LazyRow] = (), force_event: bool = False) -> None:
        """Show the rows the filter passes, in the sort order; redraw the ``changed`` ones shown."""
        cursor = self.cursor_key
        if self._sorted is None:
            self._sorted = self._sort_keys()
        order = self._sorted if self._passes is None else [key for key in self._sorted if self._filter_passes(key)]
        rows_before = len(self._shown)
        moved = len(order) != rows_before or order != list(self._shown)
        if moved:
            self.show_rows([self._rows[key] for key in order])
            self._shown = dict.fromkeys(order)
        redraw = [row for row in changed if row.key.value in self._shown]
        if redraw:
            self.redraw(redraw)
        self._restore_cursor(cursor)
        if force_event or moved:
            self.post_message(self.ViewChanged(self))

    def _filter_passes(self, key: str) -> bool:
        texts = self._texts.get(key)
        if texts is None:
            texts = self._texts[key] = row_texts(self._rows[key].values)
        return self._passes(*texts)

    def _sort_index(self) -> int | None:
        return next((i for i, c in enumerate(self.table_columns) if c.key == self.sort_column), None)

    def _sort_keys(self) -> list[str]:
        """Every item's key in the order of the sort column (by value, no value last), ties and
        no sort column in the items' own order."""
        index = self._sort_index()
        if index is None:
            return list(self.items)
        rows, order = self._rows, self._order
        key_of = self.table_columns[index].order or (lambda value: value)
        keys: dict[Any, Any] = {}  # by value: many rows share one (a state, a site)

        def by_value(key: str) -> tuple:
            value = rows[key].values[index]
            if value is None:
                return (True, 0, order[key])
            if value not in keys:
                keys[value] = key_of(value)
            return (False, keys[value], order[key])

        return sorted(self.items, key=by_value, reverse=self.sort_reverse)

    def _restore_cursor(self, key: str | None) -> None:
        if key is not None and key in self._shown:
            row = self.get_row_index(key)
            if row != self.cursor_row:
                self.move_cursor(row=row, animate=False)
