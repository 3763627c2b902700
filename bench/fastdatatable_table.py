"""The job table on textual-fastdatatable, for ``bench/ui_task.py --table fastdatatable``.

crabtui's :class:`crabtui.widgets.live_table.LiveTable` draws through
:class:`crabtui.widgets.line_table.LineTable`; here the same LiveTable runs on
textual_fastdatatable's DataTable (Arrow backend) instead, so that the benchmark measures the two
on the same screens, data and keys.  What LiveTable asks of its base is done the way the library
offers it: the rows shown (a sort or a filter changes them) become a new Arrow backend, since the
table cannot hide, reorder or clear rows in place ("mount a new one instead"), and a changed row
is written cell by cell with ``update_cell``; cells are the rows' Rich Texts as markup, which the
table parses when it draws them.  Only for measuring: it needs ``pip install textual-fastdatatable``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual_fastdatatable import ArrowBackend, DataTable

from crabtui.widgets import live_table
from crabtui.widgets.line_table import LineTable, TableColumn


class FastLineTable(DataTable):
    """What LiveTable asks of LineTable, on a fastdatatable DataTable."""

    RowHighlighted = LineTable.RowHighlighted
    RowSelected = LineTable.RowSelected
    HeaderSelected = LineTable.HeaderSelected

    def __init__(self, *, fixed_columns: int = 0, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(backend=ArrowBackend.from_pydict({"": []}), fixed_columns=fixed_columns, zebra_stripes=True,
                         cursor_type="row", show_row_labels=False, id=id, classes=classes, render_markup=True)
        self.line_columns: list[TableColumn] = []
        self._keys: list[str] = []
        self._index: dict[str, int] = {}

    def set_columns(self, columns: Sequence[TableColumn]) -> None:
        self.line_columns = list(columns)
        self._rebuild()

    def row_cells(self, key: str) -> Sequence[Text]:
        raise NotImplementedError

    def row_key(self, row: int) -> str:
        return self._keys[row]

    def get_row_index(self, key: str) -> int:
        return self._index[key]

    @property
    def cursor_key(self) -> str | None:
        return self._keys[self.cursor_row] if self._keys and self.cursor_row < len(self._keys) else None

    def show_rows(self, keys: Sequence[str]) -> None:
        self._keys = list(keys)
        self._index = {k: i for i, k in enumerate(self._keys)}
        self._rebuild()

    def redraw(self, keys: Sequence[str] | None = None) -> None:
        if keys is None:
            self._rebuild()
            return
        for key in keys:
            row = self._index.get(key)
            if row is None:
                continue
            for column, cell in enumerate(self.row_cells(key)):
                self.update_cell(row, column, cell.markup)

    def visible_keys(self) -> list[str]:
        top = int(self.scroll_offset.y)
        return self._keys[top:top + max(0, self.size.height - 1)]

    def _rebuild(self) -> None:
        """A new backend of the rows shown, in their order: the table's only way to change them."""
        labels = [c.label.plain + (c.marker or "") or f"_{i}" for i, c in enumerate(self.line_columns)]
        columns: dict[str, list[str]] = {label: [] for label in labels}
        for key in self._keys:
            for label, cell in zip(labels, self.row_cells(key)):
                columns[label].append(cell.markup)
        self.backend = ArrowBackend.from_pydict(columns)
        self.backend.render_markup = True
        self._column_labels = [Text(label) for label in labels]
        self._column_widths = [c.width for c in self.line_columns]
        self._ordered_columns = None
        self._require_update_dimensions = True
        self._update_count += 1
        row = min(self.cursor_row, max(0, len(self._keys) - 1))
        self.move_cursor(row=row)
        self.refresh()
        self.check_idle()


def _fast_init(self, columns, *, fixed_columns: int = 0, id: str | None = None, classes: str | None = None) -> None:
    """LiveTable's ``__init__``, on FastLineTable."""
    FastLineTable.__init__(self, fixed_columns=fixed_columns, id=id, classes=classes)
    self.table_columns = list(columns)
    self.palette = live_table.DEFAULT_PALETTE
    self.items = {}
    self.marked = set()
    self.sort_column = None
    self.sort_reverse = False
    self._filter = live_table.Filter("")
    self._select = None
    self._values = {}
    self._texts = {}
    self._order = {}
    self._sorted = None
    self._shown = {}
    self._live = [i for i, c in enumerate(self.table_columns) if c.live]
    self._set_headers()


def install() -> type:
    """LiveTable on FastLineTable, put where the screens look LiveTable up."""
    import crabtui.screens.listing
    import crabtui.screens.task

    methods = {k: v for k, v in vars(live_table.LiveTable).items() if k not in ("__init__", "__dict__", "__weakref__")}
    fast = type("LiveTable", (FastLineTable,), {**methods, "__init__": _fast_init})
    for module in (crabtui.screens.task, crabtui.screens.listing):
        module.LiveTable = fast
    return fast
