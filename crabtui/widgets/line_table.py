"""A table whose every row is one line, drawn as one strip and kept until the row changes.

Textual's DataTable draws a screenful cell by cell through several layers of Rich renderables,
and redoes much of it after a sort, a filter or a tab switch: on a 160x50 terminal that was 45 ms
and more a key, as much for 100 rows as for 10,000.  Here a row's line is made once, from its
cells' Texts, and cached under the row's key and how it is shown (even, odd, under the cursor);
a sort or a filter only changes which keys are on which line, so the lines drawn after one are
mostly the ones already made.  Rows are given as keys, in their order (:meth:`LineTable.show_rows`);
a subclass says what a row's cells are (:meth:`LineTable.row_cells`).

It looks and behaves as DataTable with a row cursor: a header that stays on top (a click on it
sorts), zebra stripes, fixed columns that stay when the table scrolls sideways, the cursor keys,
a click on the cursor's row to select it, and the same component classes' colours.  Enter is
left to the screen, whose binding says what it does there (a table's own would hide it from the
key bar).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

CACHED_LINES = 400  # a few screenfuls of each kind
PADDING = 1  # blank cells each side of a cell's content, as DataTable's cell_padding


@dataclass
class TableColumn:
    """``width`` is the content's (without padding); None: as wide as the widest cell so far, and
    so is a ``grow`` column at least ``width`` wide (counts that outgrow their usual width).
    ``marker`` (one cell: a sort direction) is drawn in the header's padding beside the label, so
    it never cuts a label that fills its column."""

    key: str
    label: Text
    width: int | None = None
    right: bool = False
    marker: str = ""
    grow: bool = False
    whole: bool = False  # shown whole or not at all at the edges, as a number column is (``out 12s``)


class LineTable(ScrollView, can_focus=True):
    """See the module's description."""

    COMPONENT_CLASSES = {"line-table--header", "line-table--even-row", "line-table--cursor"}

    DEFAULT_CSS = """
    LineTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .line-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .line-table--header {
                background-tint: $foreground 5%;
            }
        }
        &:dark > .line-table--even-row {
            background: $surface-darken-1 40%;
        }
        & > .line-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .line-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .line-table--even-row {
            background: $surface-lighten-1 50%;
        }
        & > .line-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    BINDINGS = [
        Binding("up", "cursor_up", "Cursor up", show=False),
        Binding("down", "cursor_down", "Cursor down", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,ctrl+home", "first_row", "First row", show=False),
        Binding("end,ctrl+end", "last_row", "Last row", show=False),
    ]

    class RowHighlighted(Message):
        """The cursor moved to the row ``row_key`` (line ``cursor_row``)."""

        def __init__(self, table: LineTable, cursor_row: int, row_key: str) -> None:
            super().__init__()
            self.table, self.cursor_row, self.row_key = table, cursor_row, row_key

        @property
        def control(self) -> LineTable:
            return self.table

    class RowSelected(RowHighlighted):
        """A click on the cursor's row."""

    class HeaderSelected(Message):
        """A click on the header of the column ``column_key``."""

        def __init__(self, table: LineTable, column_key: str) -> None:
            super().__init__()
            self.table, self.column_key = table, column_key

        @property
        def control(self) -> LineTable:
            return self.table

    def __init__(self, *, fixed_columns: int = 0, zebra_stripes: bool = True, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.fixed_columns = fixed_columns
        self.zebra_stripes = zebra_stripes
        self.columns: list[TableColumn] = []
        self.cursor_row = 0
        self._keys: list[str] = []  # the rows shown, in their order
        self._index: dict[str, int] | None = {}  # line of each key, made when asked (None: to make)
        self._widths: list[int] = []  # each column's content width
        self._lines: LRUCache[tuple[str, str, int], Strip] = LRUCache(CACHED_LINES)  # by key, kind, look
        self._headers: dict[int, Strip] = {}  # by look
        # A look is the styles a line is drawn in (base, header, even row, cursor), which change with
        # the focus: the lines of both looks are kept, so that focus going and coming costs nothing.
        self._looks: dict[tuple[Style, ...], int] = {}

    # -------------------------------------------------------------- what it shows

    def set_columns(self, columns: Sequence[TableColumn]) -> None:
        self.columns = list(columns)
        self._widths = [c.width if c.width is not None else c.label.cell_len for c in self.columns]
        self._measure(self._keys)
        self._changed()

    def row_cells(self, key: str) -> Sequence[Text]:
        """The cells of the row ``key``, one Text per column."""
        raise NotImplementedError

    @property
    def row_count(self) -> int:
        return len(self._keys)

    def row_key(self, row: int) -> str:
        return self._keys[row]

    def get_row_index(self, key: str) -> int:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self._keys)}
        return self._index[key]

    def show_rows(self, keys: Sequence[str]) -> None:
        """Show the rows ``keys``, in this order.  The cursor stays at its line (clamped)."""
        self._keys = list(keys)
        self._index = None
        if self._measure(self._keys):
            self._changed()  # a column grew: the header and the lines made before are too narrow
        else:
            self._update_size()
        self.move_cursor(row=self.cursor_row)
        self.refresh()

    def redraw(self, keys: Sequence[str] | None = None) -> None:
        """Make the lines of ``keys`` (None: every row) anew: their cells changed."""
        if keys is None:
            self._lines.clear()
            if self._measure(self._keys):
                self._changed()
            self.refresh()
            return
        if self._measure(keys):
            self._changed()
        for key in keys:
            for kind in ("odd", "even", "cursor"):
                for look in self._looks.values():
                    self._lines.discard((key, kind, look))
        if self._index is None or len(keys) > self.size.height:
            self.refresh()
            return
        top = int(self.scroll_offset.y)
        for key in keys:
            row = self._index.get(key)
            if row is not None and top <= row < top + self.size.height:
                self._refresh_row(row)

    def visible_keys(self) -> list[str]:
        """The keys of the rows on screen."""
        top = int(self.scroll_offset.y)
        return self._keys[top:top + max(0, self.size.height - 1)]

    def _measure(self, keys: Sequence[str]) -> bool:
        """Widen the columns that fit their content to the cells of ``keys``; True if one grew."""
        auto = [i for i, c in enumerate(self.columns) if c.width is None]
        grow = [i for i, c in enumerate(self.columns) if c.grow]
        grew = False
        for key in keys if auto else ():
            cells = self.row_cells(key)
            for i in auto:
                if cells[i].cell_len > self._widths[i]:
                    self._widths[i] = cells[i].cell_len
                    grew = True
        for key in keys if grow else ():
            for i in grow:
                width = self.cell_width(key, i)
                if width > self._widths[i]:
                    self._widths[i] = width
                    grew = True
        return grew

    def cell_width(self, key: str, column: int) -> int:
        """The cells a ``grow`` column's cell of row ``key`` takes."""
        return self.row_cells(key)[column].cell_len

    def _changed(self) -> None:
        """Columns or their widths changed: every line is made again."""
        self._lines.clear()
        self._headers.clear()
        self._update_size()
        self.refresh()

    def _update_size(self) -> None:
        width = sum(w + 2 * PADDING for w in self._widths)
        self.virtual_size = Size(width, len(self._keys) + 1)

    # -------------------------------------------------------------- the cursor

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        """Put the cursor on line ``row`` (clamped) and scroll it into view."""
        row = max(0, min(row, len(self._keys) - 1))
        old, self.cursor_row = self.cursor_row, row
        if old != row:
            self._refresh_row(old)
            self._refresh_row(row)
        self._scroll_to_cursor()
        if self._keys and (old != row or self._highlighted != self._keys[row]):
            self._highlighted = self._keys[row]
            self.post_message(self.RowHighlighted(self, row, self._keys[row]))

    _highlighted: str | None = None  # the key the last RowHighlighted named

    @property
    def cursor_key(self) -> str | None:
        return self._keys[self.cursor_row] if self._keys else None

    def _scroll_to_cursor(self) -> None:
        rows = max(1, self.size.height - 1 - (self.scrollbar_size_horizontal if self.show_horizontal_scrollbar else 0))
        top = int(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + rows:
            self.scroll_to(y=self.cursor_row - rows + 1, animate=False, immediate=True)

    def _refresh_row(self, row: int) -> None:
        y = row - int(self.scroll_offset.y) + 1
        if 0 < y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def on_resize(self) -> None:
        self._scroll_to_cursor()

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(row=self.cursor_row - max(1, self.size.height - 2))

    def action_page_down(self) -> None:
        self.move_cursor(row=self.cursor_row + max(1, self.size.height - 2))

    def action_first_row(self) -> None:
        self.move_cursor(row=0)

    def action_last_row(self) -> None:
        self.move_cursor(row=len(self._keys) - 1)

    def select_cursor(self) -> None:
        if self._keys:
            self.post_message(self.RowSelected(self, self.cursor_row, self._keys[self.cursor_row]))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x)
            if column is not None:
                self.post_message(self.HeaderSelected(self, self.columns[column].key))
            return
        row = int(self.scroll_offset.y) + offset.y - 1
        if row >= len(self._keys):
            return
        if row == self.cursor_row:
            self.select_cursor()
        else:
            self.move_cursor(row=row)

    def _column_at(self, x: int) -> int | None:
        """The column drawn at ``x`` on screen (fixed columns do not scroll)."""
        fixed = sum(w + 2 * PADDING for w in self._widths[:self.fixed_columns])
        if x >= fixed:
            x += int(self.scroll_offset.x)
        for i, width in enumerate(self._widths):
            x -= width + 2 * PADDING
            if x < 0:
                return i
        return None

    # -------------------------------------------------------------- drawing

    def render_lines(self, crop: Region) -> list[Strip]:
        self._look = self._current_look()  # once a paint, not a line: each is 0.1 ms
        try:
            return super().render_lines(crop)
        finally:
            self._look = None

    _look: tuple[int, tuple[Style, ...]] | None = None

    def render_line(self, y: int) -> Strip:
        look, (base, header, even, cursor) = self._look or self._current_look()
        width = self.size.width
        if y == 0:
            line = self._headers.get(look)
            if line is None:
                line = self._headers[look] = self._line([c.label for c in self.columns], header, None, header=True)
        else:
            row = int(self.scroll_offset.y) + y - 1
            if row >= len(self._keys):
                return Strip.blank(width, base)
            key = self._keys[row]
            kind = "cursor" if row == self.cursor_row else "even" if self.zebra_stripes and row % 2 else "odd"
            line = self._lines.get((key, kind, look))
            if line is None:
                style, post = {"cursor": (base, cursor), "even": (even, None), "odd": (base, None)}[kind]
                line = self._lines[(key, kind, look)] = self._line(self.row_cells(key), style, post)
        return self._crop(line, width, base)

    def _current_look(self) -> tuple[int, tuple[Style, ...]]:
        """The look the lines are drawn in now, and its number."""
        base = self.rich_style
        styles = (base, base + self.get_component_rich_style("line-table--header"),
                  base + self.get_component_rich_style("line-table--even-row"),
                  self.get_component_rich_style("line-table--cursor"))
        look = self._looks.get(styles)
        if look is None:
            if len(self._looks) > 3:  # the theme changed: the old looks are gone for good
                self._looks.clear()
                self._lines.clear()
                self._headers.clear()
            look = self._looks[styles] = len(self._looks)
        return look, styles

    def _line(self, cells: Sequence[Text], style: Style, post: Style | None, header: bool = False) -> Strip:
        """One row (or the header) across every column, in ``style`` under its cells' own
        and ``post`` over them (the cursor's colours win over a cell's, as in DataTable)."""
        segments: list[Segment] = []
        pad = Segment(" " * PADDING)
        console = self.app.console
        for cell, column, width in zip(cells, self.columns, self._widths):
            marker = Segment(column.marker.ljust(PADDING)) if header and column.marker else pad
            length = cell.cell_len
            if length > width or "\n" in cell.plain:
                cell = cell.copy()
                cell.plain = cell.plain.split("\n", 1)[0]
                cell.truncate(width, overflow="ellipsis")
                length = cell.cell_len
            segments.append(marker if column.right else pad)
            if column.right and length < width:
                segments.append(Segment(" " * (width - length)))
            if cell.spans:
                segments.extend(cell.render(console))
            elif cell.plain:  # Text.render leaves out the style of a text without spans
                segments.append(Segment(cell.plain, console.get_style(cell.style) if cell.style else None))
            if not column.right and length < width:
                segments.append(Segment(" " * (width - length)))
            segments.append(pad if column.right else marker)
        total = sum(w + 2 * PADDING for w in self._widths)
        return Strip(Segment.apply_style(segments, style, post), total)

    def _crop(self, line: Strip, width: int, base: Style) -> Strip:
        """What shows of ``line`` at the horizontal scroll: its fixed columns, then the rest from
        the scroll offset on, without a number column cut at either edge (``841`` cut to ``84``,
        or a CPU % of ``90`` to ``9``, reads as another number): its cells stay blank."""
        x = int(self.scroll_offset.x)
        fixed = sum(w + 2 * PADDING for w in self._widths[:self.fixed_columns])
        start, end = fixed + x, x + width
        left, right = self._whole_numbers(start, end)
        if x or left > start or right < end:
            parts = [line.crop(0, fixed)]
            if left > start:
                parts.append(Strip.blank(left - start, base))
            if right > left:
                parts.append(line.crop(left, right))
            line = Strip.join(parts)
        return line.crop_extend(0, width, base)

    def _whole_numbers(self, start: int, end: int) -> tuple[int, int]:
        """Where the part of the line shown from ``start`` to ``end`` begins and ends once a
        right-aligned (or ``whole``) column cut by either edge is left out."""
        left, right, edge = start, end, 0
        for column, w in zip(self.columns, self._widths):
            column_start, edge = edge, edge + w + 2 * PADDING
            whole = column.right or column.whole
            if whole and column_start < start < edge:
                left = edge
            if whole and column_start < end < edge:
                right = column_start
        return left, right
