"""A DataTable of keyed items that a refresh updates in place.

Each refresh hands the table every item (a job, a task, a site) by key.  The table keeps each
row's plain column values and repaints only the cells whose value changed, adds and removes rows
by key, and keeps the cursor on the same item through refreshes, sorts and filters (htop and k9s
users' first complaint is a cursor that jumps).  Values also drive sorting (by the raw value,
not its text) and the ``/`` filter; only visible rows of ``live`` columns (a countdown) are
recomputed on a clock tick.  Rows can be marked for bulk actions; the marks live in a one-cell
column of their own, which also carries the row's key for sorting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

from crabtui.widgets.states import DEFAULT_PALETTE, Palette

MARK = "●"
_MARK_COLUMN = "_mark"
REBUILD_SHARE = 0.3  # more rows than this leaving at once: clear and add again (remove_row is O(rows))


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


class KeyCell(Text):
    """The mark cell, which also carries its row's key (DataTable sorts by cell values only)."""

    def __init__(self, key: str, marked: bool) -> None:
        super().__init__(MARK if marked else " ", style="bold" if marked else "", end="")
        self.key = key


@dataclass(frozen=True)
class Filter:
    """``/`` filter text: a substring of any column (case-insensitive); ``column:text`` looks in
    the column whose label starts with ``column``, ``column:=text`` wants it exactly; a leading
    ``!`` keeps the rows that do not match."""

    text: str

    def compile(self, columns: list[Column]) -> Callable[[tuple], bool] | None:
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

        def passes(values: tuple) -> bool:
            shown = values if index is None else (values[index],)
            texts = (("" if v is None else str(v)).lower() for v in shown)
            found = any(t == needle for t in texts) if exact else any(needle in t for t in texts)
            return found != invert

        return passes


class LiveTable(DataTable):
    """See the module's description.  Keys are strings; items any objects the columns understand."""

    BINDINGS = [
        Binding("space", "toggle_mark", "Mark", tooltip="Mark or unmark the row for a bulk action"),
        Binding("ctrl+a", "mark_all", "Mark all", show=False, tooltip="Mark every row the filter shows"),
        Binding("s", "sort_next", "Sort", tooltip="Sort by the next column"),
        Binding("S", "sort_reverse", "Reverse", show=False, tooltip="Reverse the sort order"),
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
        self._passes: Callable[[tuple], bool] | None = None
        self._values: dict[str, tuple] = {}  # every item's column values
        self._shown: dict[str, tuple] = {}  # the values each row was painted with
        self._order: dict[str, int] = {}
        self._live = [i for i, c in enumerate(self.table_columns) if c.live]

    def _update_dimensions(self, new_rows) -> None:
        """DataTable measures the rows it added when idle, but keeps the lines it painted before
        at the old column widths (Textual 8.2.8); paint them again when a column fits its content."""
        super()._update_dimensions(new_rows)
        if any(c.width is None for c in self.table_columns):
            self.notify_style_update()
            self.refresh()

    def on_mount(self) -> None:
        self.add_column(Text(" "), key=_MARK_COLUMN, width=1)
        for c in self.table_columns:
            label = Text(c.label, justify="right" if c.right else "left")
            self.add_column(label, key=c.key, width=c.width)

    # -------------------------------------------------------------- feeding

    def set_items(self, items: Mapping[str, Any], values: dict[str, tuple] | None = None) -> None:
        """The table's items, in their own order (the order without a sort column); ``values``
        are their :func:`row_values` if computed already."""
        self.items = dict(items)
        self._order = {key: i for i, key in enumerate(self.items)}
        self._values = values if values is not None else row_values(self.table_columns, self.items)
        self.marked &= self._values.keys()
        self._sync()

    def recompute(self) -> None:
        """Compute every value again (what they depend on besides the items changed)."""
        self.set_items(self.items)

    def tick(self) -> None:
        """Recompute the live columns of the rows on screen; repaint the cells whose text changed."""
        if not self._live or not self.row_count:
            return
        first = int(self.scroll_offset.y)
        last = min(self.row_count, first + self.size.height)
        with self.app.batch_update():
            for row in range(first, last):
                key = self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
                item = self.items.get(key)
                if item is None:
                    continue
                values = list(self._values[key])
                for i in self._live:
                    values[i] = self.table_columns[i].value(item)
                self._values[key] = tuple(values)
                self._paint(key)

    def set_palette(self, palette: Palette) -> None:
        self.palette = palette
        for key in self._shown:
            self._shown[key] = ()  # differs from any values: every cell is painted again
        self._sync()

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
        self.sort_column, self.sort_reverse = column, reverse
        cursor = self.cursor_key
        self._apply_order()
        self._restore_cursor(cursor)
        self.post_message(self.ViewChanged(self))

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
        return self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value

    def shown_keys(self) -> list[str]:
        """The rows on show, in their order on screen."""
        return [row.key.value for row in self.ordered_rows]

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
        for key in self._shown:
            self._paint_mark(key)
        self.post_message(self.ViewChanged(self))

    def clear_marks(self) -> bool:
        """Unmark every row; False if none was marked."""
        if not self.marked:
            return False
        marked, self.marked = self.marked, set()
        for key in marked & self._shown.keys():
            self._paint_mark(key)
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

    def _cells(self, key: str) -> list[RenderableType]:
        values, item = self._values[key], self.items[key]
        return [KeyCell(key, key in self.marked)] + [self._cell(c, v, item) for c, v in zip(self.table_columns, values)]

    def _cell(self, column: Column, value: Any, item: Any) -> RenderableType:
        if column.render is not None:
            return column.render(value, item, self.palette)
        return Text("" if value is None else str(value), justify="right" if column.right else "left", no_wrap=True,
                    end="")

    def _paint(self, key: str) -> None:
        """Repaint the cells of row ``key`` whose value differs from what they show."""
        old, new, item = self._shown[key], self._values[key], self.items[key]
        for i, (column, value) in enumerate(zip(self.table_columns, new)):
            if not old or old[i] != value:
                self.update_cell(key, column.key, self._cell(column, value, item), update_width=column.width is None)
        self._shown[key] = new

    def _paint_mark(self, key: str) -> None:
        if key in self._shown:
            self.update_cell(key, _MARK_COLUMN, KeyCell(key, key in self.marked))

    def _sync(self, force_event: bool = False) -> None:
        cursor = self.cursor_key
        visible = [key for key, values in self._values.items() if self._passes is None or self._passes(values)]
        keep = set(visible)
        leaving = [key for key in self._shown if key not in keep]
        rows_before = len(self._shown)
        if leaving and len(leaving) > max(50, REBUILD_SHARE * len(self._shown)):
            self.clear()
            self._shown = {}
            leaving = []
        sort_index = next((i for i, c in enumerate(self.table_columns) if c.key == self.sort_column), None)
        reorder = False
        with self.app.batch_update():
            for key in leaving:
                self.remove_row(key)
                del self._shown[key]
            for key in visible:
                if key in self._shown:
                    old = self._shown[key]
                    if old != self._values[key]:
                        reorder |= sort_index is not None and (not old or old[sort_index] != self._values[key][sort_index])
                        self._paint(key)
                else:
                    self.add_row(*self._cells(key), key=key)
                    self._shown[key] = self._values[key]
                    reorder = True
            if reorder:
                self._apply_order()
        self._restore_cursor(cursor)
        if force_event or reorder or leaving or rows_before != len(self._shown):
            self.post_message(self.ViewChanged(self))

    def _apply_order(self) -> None:
        index = next((i for i, c in enumerate(self.table_columns) if c.key == self.sort_column), None)
        if index is None:
            order = self._order
            self.sort(_MARK_COLUMN, key=lambda cell: order.get(cell.key, 0))
            return
        values, order = self._values, self._order
        key_of = self.table_columns[index].order or (lambda value: value)

        def by_value(cell: KeyCell) -> tuple:
            value = values[cell.key][index]
            return (value is None, key_of(value) if value is not None else 0, order.get(cell.key, 0))

        self.sort(_MARK_COLUMN, key=by_value, reverse=self.sort_reverse)

    def _restore_cursor(self, key: str | None) -> None:
        if key is not None and key in self._shown:
            row = self.get_row_index(key)
            if row != self.cursor_row:
                self.move_cursor(row=row, animate=False)
