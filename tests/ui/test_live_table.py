"""The job table with thousands of rows: sorting, filtering, refreshes and marks keep the cursor on
its item and the rows in order, and a cell is drawn exactly as DataTable draws it."""

from __future__ import annotations

import asyncio
import itertools

from rich.console import Console
from rich.padding import Padding
from rich.style import Style
from rich.text import Span, Text
from textual.app import App
from textual.renderables.styled import Styled
from textual.strip import Strip

from crabtui.widgets.bulk_table import text_line
from crabtui.widgets.live_table import Column, LiveTable
from ui_tasks import cells

JOBS = 3000
STATES = ("finished", "failed", "running", "idle")


def job(n: int, memory: int | None = None) -> dict:
    return {"id": str(n), "state": STATES[n % 4], "memory": 1000 + (n * 37) % 2000 if memory is None else memory}


class TableApp(App):
    def compose(self):
        yield LiveTable([Column("job", "Job", lambda j: j["id"], width=5, right=True, order=int),
                         Column("state", "State", lambda j: j["state"], width=10),
                         Column("memory", "Mem (MB)", lambda j: j["memory"], width=8, right=True)], id="table")


def drive(scenario) -> None:
    async def main() -> None:
        app = TableApp()
        async with app.run_test(size=(60, 20)) as pilot:
            await scenario(pilot, app.query_one(LiveTable))

    asyncio.run(main())


def test_sort_filter_refresh_and_marks_keep_the_cursor_on_its_job():
    async def scenario(pilot, table):
        def by_memory() -> list[int]:
            return [table.items[key]["memory"] for key in table.shown_keys()]

        table.set_items({str(n): job(n) for n in range(1, JOBS + 1)})
        await pilot.pause()
        assert table.row_count == JOBS and table.shown_keys()[:3] == ["1", "2", "3"]
        assert cells(table, "2") == [" ", "2", "running", "1074"]
        table.move_cursor(row=table.get_row_index("1234"))

        table.sort_by("memory", reverse=True)
        assert by_memory() == sorted(by_memory(), reverse=True) and table.cursor_key == "1234"

        table.filter = "state:=failed"
        assert table.row_count == JOBS // 4 and "1234" not in table.shown_keys()
        assert all(table.items[key]["state"] == "failed" for key in table.shown_keys())
        table.move_cursor(row=table.get_row_index("5"))
        await pilot.press("space")  # marks job 5 and moves down, to the next failed job
        below = table.cursor_key
        assert below != "5" and table.items[below]["state"] == "failed"
        table.filter = ""
        assert table.row_count == JOBS and table.cursor_key == below
        assert by_memory() == sorted(by_memory(), reverse=True)
        assert table.marked == {"5"} and cells(table, "5")[0] == "●" and cells(table, below)[0] == " "

        table.move_cursor(row=table.get_row_index("42"))
        table.set_items({**{str(n): job(n) for n in range(1, JOBS + 1)}, "42": job(42, memory=99999)})
        assert table.shown_keys()[0] == "42" and table.cursor_key == "42"  # sorted again: the most memory first
        assert cells(table, "42")[3] == "99999"
        table.set_items({str(n): job(n) for n in range(1, JOBS + 1) if n != 5})  # job 5 went away
        assert table.row_count == JOBS - 1 and not table.marked
        await pilot.pause()

    drive(scenario)


def test_a_cell_is_drawn_as_datatable_draws_it():
    console = Console(width=100, force_terminal=True, color_system="truecolor")
    texts = [Text(plain, style=style, justify=justify, no_wrap=no_wrap, overflow=overflow, spans=list(spans), end="")
             for plain, style, justify, no_wrap, overflow, spans in itertools.product(
                 ["12345", "", "✔ finished", "trail ", "wide 日本語 text", "tab\there", "two\nlines",
                  "a failure message much longer than its column"],
                 ["", "green", Style(italic=True)], [None, "left", "right", "center"], [None, True, False],
                 [None, "ellipsis"], [[], [Span(0, 2, "bold")]])]
    styles = [(Style(color="white", bgcolor="black") + Style.from_meta({"row": 1, "column": 2}), Style.null()),
              (Style(bold=True), Style(color="red"))]
    for text, width, padding, (pre, post) in itertools.product(texts, [3, 9, 17, 62], [0, 1], styles):
        options = console.options.update_dimensions(width, 1).update(no_wrap=True)
        want = console.render_lines(Styled(Padding(text, (0, padding)), pre_style=pre, post_style=post), options)[0]
        got = text_line(console, text, width, padding, pre, post)
        assert list(Strip(got).simplify()) == list(Strip(want).simplify()), (text, width, padding)
