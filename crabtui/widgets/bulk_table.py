"""A DataTable for 10,000 rows: its rows are set all at once, and a cell is made and drawn only
when it comes on screen.

Textual's DataTable (8.2) adds and removes one row at a time, each removal O(rows); measures every
cell of every new row when idle, even in columns of a fixed width; recomputes the list of all
rows' line offsets after every change; and draws a cell through four layers of Rich renderables.
On a task of 10,000 jobs that made the first paint take seconds and clearing a filter as long.
:class:`BulkTable` keeps DataTable's behaviour, bindings, messages and looks, and replaces those
four paths: :meth:`BulkTable.show_rows` sets the rows (their order, their cells) in one step;
columns of a fixed width are not measured; a row is one line, so a line's row is found by index;
and a one-line Text cell is drawn directly into the segments Rich would have made of it.
These reach into DataTable's private state, so they are written against Textual 8.2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._two_way_dict import TwoWayDict
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import CellKey, ColumnKey, Row, RowKey


CACHED_LINES = 200


class LazyRow(dict):
    """One row's cells by column key, each made by ``make(row, column_key)`` (from ``values``)
    when the table first asks for it, which it does when it draws the row."""

    __slots__ = ("key", "meta", "values", "make")

    def __init__(self, key: str, values: tuple, make: Callable[[LazyRow, ColumnKey], Any]) -> None:
        super().__init__()
        self.key = RowKey(key)
        self.meta = Row(self.key, 1)
        self.values = values
        self.make = make

    def __missing__(self, column_key: ColumnKey) -> Any:
        cell = self[column_key] = self.make(self, column_key)
        return cell


class BulkTable(DataTable):
    """See the module's description.  Rows are :class:`LazyRow`\\ s, one line high, set only
    through :meth:`show_rows` (not ``add_row``, ``remove_row``, ``sort`` or ``clear``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A few screenfuls, not DataTable's 1,000 rows and lines and 10,000 cells: what they
        # hold (a hundred thousand segments) is walked by every full garbage collection.
        self._row_render_cache = LRUCache(CACHED_LINES)
        self._line_cache = LRUCache(CACHED_LINES)
        self._cell_render_cache = LRUCache(CACHED_LINES * 16)
        self._paint_styles: dict[tuple[str, ...], Any] | None = None

    def show_rows(self, rows: Sequence[LazyRow]) -> None:
        """Show exactly ``rows``, in this order.  The cursor stays at its row number (clamped),
        as after DataTable's own ``remove_row``."""
        was_empty = not self.rows
        data = self._data
        if len(rows) != len(data) or any(row.key not in data for row in rows):  # not just a new order
            data = {row.key: row for row in rows}
            if self._fits_content():
                self._new_rows.update(key for key in data if key not in self._data)
            if self._updated_cells:
                self._updated_cells = {cell for cell in self._updated_cells if cell.row_key in data}
            self._data = data
            self.rows = {row.key: row.meta for row in rows}
        self._row_locations = TwoWayDict({row.key: index for index, row in enumerate(rows)})
        self._require_update_dimensions = True
        self._changed()
        self.cursor_coordinate = self.cursor_coordinate
        self.hover_coordinate = self.hover_coordinate
        if was_empty and self.rows and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()
        self.check_idle()
        self.refresh()

    def redraw(self, rows: Iterable[LazyRow]) -> None:
        """Draw ``rows`` again: cells dropped from them are made anew (and their columns widened
        if they fit their content)."""
        if self._fits_content():
            auto = [column.key for column in self.columns.values() if column.auto_width]
            self._updated_cells.update(CellKey(row.key, column) for row in rows for column in auto)
            self._require_update_dimensions = True
            self.check_idle()
        self._changed()
        self.refresh()

    def _changed(self) -> None:
        """Every line drawn so far is out of date: DataTable keys its caches by an update count."""
        self._clear_caches()
        self._update_count += 1

    def _fits_content(self) -> bool:
        return any(column.auto_width for column in self.columns.values())

    # -------------------------------------------------------------- DataTable's paths, replaced

    def render_lines(self, crop: Region) -> list[Strip]:
        """DataTable asks for its own style and three component styles for every line it draws,
        each worked out again from the CSS of every ancestor: here once a paint."""
        self._paint_styles = {}
        try:
            return super().render_lines(crop)
        finally:
            self._paint_styles = None

    @property
    def rich_style(self) -> Style:
        styles = getattr(self, "_paint_styles", None)
        if styles is None:
            return super().rich_style
        if () not in styles:
            styles[()] = super().rich_style
        return styles[()]

    def get_component_styles(self, *names: str) -> Any:
        styles = getattr(self, "_paint_styles", None)
        if styles is None:
            return super().get_component_styles(*names)
        if names not in styles:
            styles[names] = _PaintStyles(super().get_component_styles(*names))
        return styles[names]

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """Measure new rows only where a column fits its content.  DataTable keeps the lines it
        painted before at the old column widths: paint them again when such a column may have grown."""
        fits = self._fits_content()
        super()._update_dimensions(new_rows if fits else ())
        if fits:
            self.notify_style_update()
            self.refresh()

    @property
    def _total_row_height(self) -> int:
        return len(self.rows)

    def _get_offsets(self, y: int) -> tuple[RowKey, int]:
        if self.show_header:
            if y < self.header_height:
                return self._header_row_key, y
            y -= self.header_height
        if not 0 <= y < len(self.rows):
            raise LookupError(f"Y coord {y!r} is greater than total height")
        return self._row_locations.get_key(y), 0

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int, cursor: bool = False,
                     hover: bool = False) -> list[list[Segment]]:
        """DataTable's, but a one-line Text cell goes straight to its segments (five times faster)."""
        if row_index < 0 or column_index < 0:  # the header, row labels
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        cache_key = (row_key, self._column_locations.get_key(column_index), base_style, cursor, hover,
                     self._show_hover_cursor, self._update_count, self._pseudo_class_state)
        lines = self._cell_render_cache.get(cache_key)
        if lines is not None:
            return lines
        cell = self._get_row_renderables(row_index).cells[column_index]
        if not isinstance(cell, Text) or self.rows[row_key].height != 1:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        component_style, post_style = self._get_styles_to_render_cell(
            False, False, row_index < self.fixed_rows or column_index < self.fixed_columns, hover, cursor,
            self.show_cursor, self._show_hover_cursor, self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css")
        pre_style = base_style + Style.from_meta({"row": row_index, "column": column_index}) + component_style
        lines = [text_line(self.app.console, cell, width, self.cell_padding, pre_style, post_style)]
        self._cell_render_cache[cache_key] = lines
        return lines


class _PaintStyles:
    """Component styles for the length of one paint, their Rich style worked out once."""

    __slots__ = ("styles", "rich_style")

    def __init__(self, styles: Any) -> None:
        self.styles = styles
        self.rich_style = styles.rich_style

    def __getattr__(self, name: str) -> Any:
        return getattr(self.styles, name)


def text_line(console: Console, text: Text, width: int, padding: int, pre_style: Style,
              post_style: Style) -> list[Segment]:
    """The segments ``console.render_lines(Styled(Padding(text, (0, padding)), pre_style, post_style))``
    makes of ``text`` in a cell ``width`` wide and one line high (Text.__rich_console__'s wrap and
    join, the padding, the two styles), without the layers in between."""
    inner = width - 2 * padding
    content = _fitting_line(console, text, inner)
    if content is None:
        lines = text.wrap(console, inner, justify=text.justify or "default", overflow=text.overflow or "fold",
                          tab_size=(console.tab_size if text.tab_size is None else text.tab_size) or 8,
                          no_wrap=True if text.no_wrap is None else text.no_wrap)
        content = list(Text("\n").join(lines[:1]).render(console))
    content = Segment.adjust_line_length(content, inner)
    blank = Segment(" " * padding) if padding else None
    line = [blank, *content, blank] if blank else content
    if post_style:
        return [Segment(s.text, (pre_style + s.style if s.style else pre_style) + post_style) for s in line]
    return [Segment(s.text, pre_style + s.style if s.style else pre_style) for s in line]


def _fitting_line(console: Console, text: Text, width: int) -> list[Segment] | None:
    """What wrap, justify and join make of a one-line ``text`` that fits in ``width``: the text,
    padded with its own style when justified left or right (None: any other text)."""
    plain = text.plain
    justify = text.justify or "default"
    if (not plain or "\n" in plain or "\t" in plain or text.no_wrap is False
            or justify not in ("default", "left", "right") or (justify == "right" and plain != plain.rstrip())
            or any(span.end > len(plain) for span in text.spans)):
        return None
    room = width - cell_len(plain)
    if room < 0:
        return None
    if text.spans or not text.style:
        segments = list(text.render(console))
    else:  # join gives the style a span of its own, which render (unlike for a text without spans) applies
        segments = [Segment(plain, console.get_style(text.style, default=Style.null()))]
    if room and justify != "default":
        pad = Segment(" " * room, console.get_style(text.style, default=Style.null()) if text.style else None)
        segments = [*segments, pad] if justify == "left" else [pad, *segments]
    return segments
