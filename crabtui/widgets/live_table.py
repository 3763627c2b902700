"""A DataTable of keyed items that a refresh updates in place.

Each refresh hands the table every item (a job, a task, a site) by key.  The table keeps each
row's plain column values and redraws only the rows whose values changed, shows and hides rows
by key, and keeps the cursor on the same item through refreshes, sorts and filters (htop and k9s
users' first complaint is a cursor that jumps).  Values also drive sorting (by the raw value,
not its text) and the ``/`` filter; only visible rows of ``live`` columns (a countdown) are
recomputed on a clock tick.  Rows can be marked for bulk actions; the marks live in a one-cell
column of their own.  A row's cells are made only when its line is drawn
(:mod:`crabtui.widgets.line_table`), and every item keeps its values while the filter hides it,
so that a task of 10,000 jobs costs little more than a screenful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from crabtui.widgets.line_table import LineTable, TableColumn
from crabtui.widgets.states import DEFAULT_PALETTE, Palette

MARK = "●"
_MARK_COLUMN = "_mark"


MAX_CELL_WIDTHS = 10_000  # grow columns' cell widths kept by value


@dataclass(frozen=True)
class Column:
    """One column: ``value(item)`` is the plain value (str, number or None) that sorts, filters and
    decides a repaint; ``render(value, item, palette)`` the cell (default: the value as text)."""

    key: str
    label: str
    value: Callable[[Any], Any]
    render: Callable[[Any, Any, Palette], Text] | None = None
    width: int | None = None  # None: as wide as its content (for small tables only)
    grow: bool = False  # at least ``width``, wider for a wider cell (whose width its value alone decides)
    whole: bool = False  # a value that a cut would misread (``out 12s`` as ``out 1``): whole or blank
    live: bool = False  # the value depends on the clock
    right: bool = False  # numbers: right-aligned
    order: Callable[[Any], Any] | None = None  # the sort key of a (non-None) value, if not the value


def row_values(columns: list[Column], items: Mapping[str, Any]) -> dict[str, tuple]:
    """Every item's column values: what :meth:`LiveTable.set_items` compares.  Pure, so a worker
    thread can compute them for 10,000 rows while the UI thread stays free."""
    getters = [c.value for c in columns]
    return {key: tuple(get(item) for get in getters) for key, item in items.items()}


class RowValues:
    """:func:`row_values` for one table's successive refreshes: an item that is the same object as
    at the last call (the engine's view of a job that did not change) keeps its values, and only
    its live columns are computed again, if ``clocked(item)`` says they depend on the clock."""

    def __init__(self, columns: list[Column], clocked: Callable[[Any], bool] = lambda item: True) -> None:
        self.columns = columns
        self.clocked = clocked
        self._last: dict[str, tuple[Any, tuple]] = {}

    def __call__(self, items: Mapping[str, Any]) -> dict[str, tuple]:
        getters = [c.value for c in self.columns]
        live = [(i, c.value) for i, c in enumerate(self.columns) if c.live]
        last, kept, values, clocked = self._last, {}, {}, self.clocked
        for key, item in items.items():
            before = last.get(key)
            if before is not None and before[0] is item:
                row = before[1]
                for i, get in live if live and clocked(item) else ():
                    value = get(item)
                    if value != row[i]:
                        row = (*row[:i], value, *row[i + 1:])
            else:
                row = tuple(get(item) for get in getters)
            values[key] = row
            kept[key] = (item, row)
        self._last = kept
        return values


class FilterError(ValueError):
    """A filter that names no column: the message says which fields there are."""

    def __init__(self, field: str, names: Sequence[str]) -> None:
        super().__init__(f"no field {field!r}: the fields are " + ", ".join(names))
        self.field, self.names = field, list(names)

    def fitted(self, room: int) -> str:
        """The message in ``room`` cells: the fields that fit, whole, then where the others are
        (a cut list ended mid-name, and at 80 columns after three of them)."""
        text = str(self)
        if len(text) <= room:
            return text
        head, tail, shown = f"no field {self.field!r}: the fields are ", ", … (esc, ? lists them)", []
        for name in self.names:
            if len(head) + len(", ".join([*shown, name])) + len(tail) > room:
                break
            shown.append(name)
        return head + ", ".join(shown) + tail if shown else f"no field {self.field!r} (esc, ? lists the fields)"


@dataclass(frozen=True)
class Filter:
    """``/`` filter text: a substring of any column (case-insensitive); ``field:text`` looks only
    in the column whose key is ``field`` (``state:fail``, ``site:CERN``), ``field:=text`` wants it
    exactly; a leading ``!`` keeps the rows that do not match.  A ``field:`` that names no column
    is a :class:`FilterError` (put the text in quotes to look for a colon: ``"12:30"``)."""

    text: str

    def compile(self, columns: list[Column]) -> Callable[[list[str], dict[str, str]], list[str]] | None:
        """``select(keys, texts)``: the keys whose rows pass, in their order, given every row's
        :func:`row_text`.  One comprehension, no call per row: 10,000 rows take a few ms."""
        text = self.text.strip()
        if not text:
            return None
        invert = text.startswith("!")
        text = text[1:].strip() if invert else text
        index = None
        if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
            text = text[1:-1]
        else:
            name, sep, rest = text.partition(":")
            if sep:
                field = name.strip().lower()
                index = next((i for i, c in enumerate(columns) if c.key == field), None)
                if index is None:
                    raise FilterError(field, field_names(columns))
                text = rest
        exact = index is not None and text.startswith("=")
        needle = text[exact:].strip().lower()
        if index is None:
            if invert:
                return lambda keys, texts: [k for k in keys if needle not in texts[k]]
            return lambda keys, texts: [k for k in keys if needle in texts[k]]
        if exact:
            return lambda keys, texts: [k for k in keys if (texts[k].split("\0")[index] == needle) != invert]
        return lambda keys, texts: [k for k in keys if (needle in texts[k].split("\0")[index]) != invert]


def field_names(columns: Iterable[Column]) -> list[str]:
    """The ``field:`` names of a table's filter: its columns' keys."""
    return [c.key for c in columns if not c.key.startswith("_")]


def plural(n: int, noun: str) -> str:
    """``1 job``, ``2 jobs``, ``1 exit code``, ``1 job in the queue``: ``noun`` given in the plural;
    its head word (the last, or the one before ``in``/``of``) loses its s for one."""
    if n != 1:
        return f"{n} {noun}"
    words = noun.split(" ")
    head = next((i - 1 for i, w in enumerate(words) if i and w in ("in", "of", "on", "at")), len(words) - 1)
    if words[head].endswith(("ches", "shes", "sses", "xes")):  # batches: batch
        words[head] = words[head][:-2]
    elif words[head].endswith("s"):
        words[head] = words[head][:-1]
    return "1 " + " ".join(words)


def row_text(values: tuple) -> str:
    """A row's values as the filter reads them: lower-case, joined by NUL, which no needle holds,
    so that one search finds a needle in any column."""
    return "\0".join(["" if v is None else str(v) for v in values]).lower()


class LiveTable(LineTable):
    """See the module's description.  Keys are strings; items any objects the columns understand."""

    BINDINGS = [
        Binding("space", "toggle_mark", "Mark", id="mark", tooltip="Mark or unmark the row for a bulk action"),
        Binding("ctrl+a", "mark_all", "Mark all", show=False, tooltip="Mark every row the filter shows"),
        Binding("s", "sort_next", "Sort", id="sort", tooltip="Sort by the next column"),
        Binding("S", "sort_reverse", "Reverse", id="sort-reverse", show=False, tooltip="Reverse the sort order"),
        Binding("n", "find_next", "Next match", id="find-next", show=False, tooltip="Move to the next row the find matches"),
        Binding("N", "find_previous", "Previous match", id="find-previous", show=False,
                tooltip="Move to the previous row the find matches"),
    ]

    class ViewChanged(Message):
        """Rows, filter, sort or marks changed: whatever shows a summary of the table updates."""

        def __init__(self, table: LiveTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> LiveTable:
            return self.table

    def __init__(self, columns: Iterable[Column], *, fixed_columns: int = 0, markable: bool = True,
                 tree_parent: Callable[[str], str | None] | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(fixed_columns=fixed_columns, id=id, classes=classes)
        self.table_columns = list(columns)
        self.tree_parent = tree_parent  # a tree's rows: a sort orders each row's children, under it
        self.markable = markable  # False: no bulk action takes its rows, so space offers no marks
        self.palette = DEFAULT_PALETTE
        self.items: dict[str, Any] = {}
        self.marked: set[str] = set()
        self.sort_column: str | None = None  # None: the items' own order
        self.sort_reverse = False
        self._filter = Filter("")
        self._select: Callable[[list[str], dict[str, str]], list[str]] | None = None
        self._values: dict[str, tuple] = {}  # every item's column values, shown or not
        self._cell_widths: dict[tuple[int, Any], int] = {}  # a grow column's cell width by value
        self._texts: dict[str, str] = {}  # rows' row_text, made when a filter asks
        self._order: dict[str, int] = {}
        self._sorted: list[str] | None = None  # every item's key in the sort order (None: to sort again)
        self._shown: dict[str, None] = {}  # the rows on the table, in their order
        self._live = [i for i, c in enumerate(self.table_columns) if c.live]
        self._set_headers()

    def _set_headers(self) -> None:
        """The columns' labels, the sort column's with its direction."""
        columns = [TableColumn(_MARK_COLUMN, Text(" "), 1)]
        for c in self.table_columns:
            marker = ("▼" if self.sort_reverse else "▲") if c.key == self.sort_column else ""
            columns.append(TableColumn(c.key, Text(c.label, end=""), c.width, c.right, marker, c.grow,
                                       c.whole))
        self.set_columns(columns)

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
        old, texts = self._values, self._texts
        sort_index = self._sort_index()
        changed = []
        for key, new in values.items():
            before = old.get(key)
            if before is not None and before != new:
                if sort_index is not None and before[sort_index] != new[sort_index]:
                    self._sorted = None
                texts.pop(key, None)
                changed.append(key)
        if len(old) != len(values) or any(key not in old for key in values):
            for key in [key for key in texts if key not in values]:
                del texts[key]
        self._values = values
        self.marked &= values.keys()
        self._sync(changed)

    def recompute(self) -> None:
        """Compute every value again (what they depend on besides the items changed)."""
        self.set_items(self.items)

    def tick(self) -> None:
        """Recompute the live columns of the rows on screen; redraw the cells whose value changed."""
        if not self._live:
            return
        changed = []
        for key in self.visible_keys():
            item, values = self.items.get(key), self._values.get(key)
            if item is None or values is None:
                continue
            new = list(values)
            for i in self._live:
                new[i] = self.table_columns[i].value(item)
            if tuple(new) != values:
                self._values[key] = tuple(new)
                self._texts.pop(key, None)
                changed.append(key)
        if changed:
            self.redraw(changed)

    def set_palette(self, palette: Palette) -> None:
        self.palette = palette
        self.redraw()

    # -------------------------------------------------------------- filter, sort, marks

    @property
    def filter(self) -> str:
        return self._filter.text

    @filter.setter
    def filter(self, text: str) -> None:
        """FilterError (the filter stays as it was) for a field that is no column."""
        wanted = Filter(text)
        self._select = wanted.compile(self.table_columns)
        self._filter = wanted
        self._sync(force_event=True)

    def sort_by(self, column: str | None, reverse: bool = False) -> None:
        flipped = column == self.sort_column and column is not None and reverse != self.sort_reverse
        self.sort_column, self.sort_reverse = column, reverse
        if flipped and self._sorted is not None and self.tree_parent is None:
            self._sorted.reverse()  # every sort key is distinct (ties go by the items' order); not a tree's
        else:
            self._sorted = None
        self._set_headers()
        self._sync(force_event=True)

    def find(self, text: str, *, start: int | None = None, backward: bool = False) -> bool:
        """Move the cursor to the first row on show that matches ``text`` (the filter's syntax),
        from line ``start`` (default: the cursor's) on, or back, wrapping around; no row is
        hidden.  False if none matches.  ``n`` and ``N`` look for the next and previous."""
        select = Filter(text).compile(self.table_columns)
        self.find_text = text
        if select is None or not self._shown:
            return False
        shown = list(self._shown)
        start = self.cursor_row if start is None else start
        order = shown[start::-1] + shown[:start:-1] if backward else shown[start:] + shown[:start]
        found = select(order, self._row_texts())
        if found:
            self.move_cursor(row=self.get_row_index(found[0]))
        return bool(found)

    find_text = ""

    def action_find_next(self) -> None:
        if self.find_text and not self.find(self.find_text, start=(self.cursor_row + 1) % max(1, self.row_count)):
            self.app.notify(f"No row matches {self.find_text!r}.", severity="warning")

    def action_find_previous(self) -> None:
        if self.find_text and not self.find(self.find_text, start=self.cursor_row - 1, backward=True):
            self.app.notify(f"No row matches {self.find_text!r}.", severity="warning")

    def action_sort_next(self) -> None:
        keys = [None] + [c.key for c in self.table_columns]
        self.sort_by(keys[(keys.index(self.sort_column) + 1) % len(keys)], self.sort_reverse)

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort_column, not self.sort_reverse)

    def on_line_table_header_selected(self, event: LineTable.HeaderSelected) -> None:
        event.stop()
        key = event.column_key
        if key == _MARK_COLUMN:
            return
        self.sort_by(key, not self.sort_reverse if key == self.sort_column else False)

    def shown_keys(self) -> list[str]:
        """The rows on show, in their order on screen."""
        return list(self._shown)

    def selection(self) -> list[str]:
        """What an action applies to: the marked rows (in the items' order), else the cursor's."""
        if self.marked:
            return [key for key in self.items if key in self.marked]
        key = self.cursor_key
        return [] if key is None else [key]

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("toggle_mark", "mark_all") and not self.markable:
            return False  # off the key bar and the command palette: a mark there would do nothing
        return True

    def action_toggle_mark(self) -> None:
        key = self.cursor_key
        if key is None:
            return
        self.marked.symmetric_difference_update({key})
        self._paint_mark(key)
        self.action_cursor_down()
        self.post_message(self.ViewChanged(self))

    def action_mark_all(self) -> None:
        self.mark(self._shown)

    def mark(self, keys: Iterable[str]) -> None:
        """Mark these rows (those shown are painted)."""
        keys = set(keys) & self.items.keys()
        self.marked.update(keys)
        self._paint_mark(*(keys & self._shown.keys()))
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
        """``4 of 12 jobs · filter 'fail' · sorted by State ▼ · 2 marked``; ``noun`` is plural (``jobs``,
        ``exit codes``, ``jobs in the queue``): its first word loses its s for one."""
        parts = [f"{len(self._shown)} of {plural(len(self.items), noun)}" if self._select
                 else plural(len(self.items), noun)]
        if self._select:
            parts.append(f"filter {self.filter!r}")
        if self.sort_column is not None:
            label = next(c.label for c in self.table_columns if c.key == self.sort_column)
            parts.append(f"sorted by {label} {'▼' if self.sort_reverse else '▲'}")
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        if self.virtual_size.width > self.size.width > 0:
            parts.append("← → more columns")
        return " · ".join(parts)

    # -------------------------------------------------------------- the diff

    def cell_width(self, key: str, column: int) -> int:
        """A ``grow`` column's cell width, by its value: drawn once a value, not every refresh of
        every row (a live column changes them all every second)."""
        value = self._values[key][column - 1]
        width = self._cell_widths.get((column, value))
        if width is None:
            if len(self._cell_widths) > MAX_CELL_WIDTHS:  # a long watch of many DAGs' changing counts
                self._cell_widths.clear()
            c = self.table_columns[column - 1]
            cell = c.render(value, self.items[key], self.palette) if c.render is not None else Text(str(value))
            width = self._cell_widths[(column, value)] = cell.cell_len
        return width

    def row_cells(self, key: str) -> list[Text]:
        """The row's cells, when the table draws it: the mark, then each column's."""
        marked = key in self.marked
        cells = [Text(MARK if marked else " ", style="bold" if marked else "", end="")]
        item, palette = self.items[key], self.palette
        for column, value in zip(self.table_columns, self._values[key]):
            if column.render is not None:
                cells.append(column.render(value, item, palette))
            else:
                cells.append(Text("" if value is None else str(value), end=""))
        return cells

    def _paint_mark(self, *keys: str) -> None:
        shown = [key for key in keys if key in self._shown]
        if shown:
            self.redraw(shown)

    def _sync(self, changed: Sequence[str] = (), force_event: bool = False) -> None:
        """Show the rows the filter passes, in the sort order; redraw the ``changed`` ones shown."""
        cursor = self.cursor_key
        if self._sorted is None:
            self._sorted = self._sort_keys()
        order = self._sorted if self._select is None else self._select(self._sorted, self._row_texts())
        rows_before = len(self._shown)
        moved = len(order) != rows_before or order != list(self._shown)
        if moved:
            self._shown = dict.fromkeys(order)
            self.show_rows(order)
        redraw = [key for key in changed if key in self._shown]
        if redraw:
            self.redraw(redraw)
        self._restore_cursor(cursor)
        if force_event or moved:
            self.post_message(self.ViewChanged(self))

    def _row_texts(self) -> dict[str, str]:
        """Every row's :func:`row_text`, made for those that changed since the last filter."""
        texts, values = self._texts, self._values
        if len(texts) != len(values):
            texts.update((key, row_text(v)) for key, v in values.items() if key not in texts)
        return texts

    def _sort_index(self) -> int | None:
        return next((i for i, c in enumerate(self.table_columns) if c.key == self.sort_column), None)

    def _sort_keys(self) -> list[str]:
        """Every item's key in the order of the sort column (by value, no value last), ties and
        no sort column in the items' own order."""
        index = self._sort_index()
        if index is None:
            return list(self.items)
        values, order = self._values, self._order
        key_of = self.table_columns[index].order or (lambda value: value)
        keys: dict[Any, Any] = {}  # by value: many rows share one (a state, a site)

        def by_value(key: str) -> tuple:
            value = values[key][index]
            if value is None:
                return (True, 0, order[key])
            if value not in keys:
                keys[value] = key_of(value)
            return (False, keys[value], order[key])

        if self.tree_parent is None:
            return sorted(self.items, key=by_value, reverse=self.sort_reverse)
        children: dict[str | None, list[str]] = {}
        for key in self.items:
            parent = self.tree_parent(key)
            children.setdefault(parent if parent in self.items else None, []).append(key)
        shown: list[str] = []
        todo = list(reversed(sorted(children.get(None, ()), key=by_value, reverse=self.sort_reverse)))
        while todo:
            key = todo.pop()
            shown.append(key)
            todo += reversed(sorted(children.get(key, ()), key=by_value, reverse=self.sort_reverse))
        return shown

    def _restore_cursor(self, key: str | None) -> None:
        if key is not None and key in self._shown:
            row = self.get_row_index(key)
            if row != self.cursor_row:
                self.move_cursor(row=row, animate=False)
