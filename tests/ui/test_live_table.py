"""The job table with thousands of rows: sorting, filtering, refreshes and marks keep the cursor on
its item and the rows in order; cells are aligned and cut to their columns, fixed columns stay
when the table scrolls sideways, and the mouse sorts, moves the cursor and selects."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.binding import Binding

from crabtui.widgets.key_bar import KeyBar
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


class WideApp(App):
    """Columns wider than the terminal: the first two stay when the table scrolls sideways."""

    BINDINGS = [Binding("question_mark", "help", "Help", id="help"), Binding("q", "quit", "Quit", id="quit")]
    selected: list[str] = []

    def compose(self):
        yield LiveTable([Column("job", "Job", lambda j: j["id"], width=5, right=True, order=int),
                         Column("memory", "Mem (MB)", lambda j: j["memory"], width=8, right=True),
                         Column("error", "Last error", lambda j: j["error"], width=30),
                         Column("site", "Site", lambda j: j["site"], width=12)], fixed_columns=2, id="table")
        yield KeyBar()

    def on_line_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        self.selected.append(event.row_key)


def screen_lines(table: LiveTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


def test_cells_are_aligned_cut_with_an_ellipsis_and_fixed_columns_stay_when_scrolled():
    async def main() -> None:
        app = WideApp()
        async with app.run_test(size=(40, 8)) as pilot:
            table = app.query_one(LiveTable)
            table.set_items({str(n): {"id": str(n), "memory": 100 * n, "error": f"exit code {n}: " + "x" * 40,
                                      "site": f"T2_XX_{n}"} for n in range(1, 20)})
            await pilot.pause()
            lines = screen_lines(table)
            assert lines[0].startswith("      Job  Mem (MB)  Last error")  # after the marks' column
            assert lines[1].startswith("        1       100  exit code 1: xxxx")
            table.scroll_to(x=30, animate=False, immediate=True)
            await pilot.pause()
            lines = screen_lines(table)
            assert lines[0].startswith("      Job ") and "Site" in lines[0] and "Mem" not in lines[0]
            assert lines[1].startswith("        1 xxx") and "x…  T2_XX_1" in lines[1]

            table.scroll_to(x=0, animate=False, immediate=True)
            await pilot.click(LiveTable, offset=(12, 0))  # the header of Mem (MB)
            assert table.sort_column == "memory" and not table.sort_reverse
            await pilot.click(LiveTable, offset=(12, 0))
            assert table.sort_reverse and table.shown_keys()[0] == "19"
            assert "▼Mem (MB) " in screen_lines(table)[0]
            assert table.cursor_key == "1"  # the cursor kept its job, now the last row
            await pilot.press("home")
            await pilot.click(LiveTable, offset=(3, 3))  # the third row: moves the cursor there
            assert table.cursor_key == "17" and app.selected == []
            await pilot.click(LiveTable, offset=(3, 3))  # the cursor's row: selects it
            assert app.selected == ["17"]
            await pilot.press("enter")  # Enter is the screen's key (its key bar says what it does), not the table's
            assert app.selected == ["17"]

    asyncio.run(main())


def test_the_key_bar_shows_the_most_important_keys_that_fit_then_more_and_a_click_presses_one():
    async def main() -> None:
        app = WideApp()
        async with app.run_test(size=(60, 8)) as pilot:
            table = app.query_one(LiveTable)
            table.set_items({str(n): {"id": str(n), "memory": 100 * n, "error": "", "site": "T2_XX_Local"}
                             for n in range(1, 4)})
            await pilot.pause()
            bar = app.query_one(KeyBar).render().plain
            assert bar.startswith(" q Quit  space Mark  s Sort ") and bar.endswith(" ? more ")
            await pilot.click(KeyBar, offset=(bar.index("s Sort") + 1, 0))
            assert table.sort_column == "job"
            await pilot.resize_terminal(24, 8)
            await pilot.pause()
            assert app.query_one(KeyBar).render().plain == " q Quit ".ljust(24 - len(" ? more ")) + " ? more "

    asyncio.run(main())


def test_a_field_query_looks_in_its_field_only_and_an_unknown_field_is_an_error():
    from crabtui.widgets.live_table import FilterError, plural

    async def scenario(pilot, table):
        table.set_items({"1": {"id": "1", "state": "failed", "memory": 1000},
                         "2": {"id": "2", "state": "finished", "memory": 1000},
                         "3": {"id": "3", "state": "running", "memory": 2001}})
        table.filter = "!state:finished"
        assert table.shown_keys() == ["1", "3"], "a field query reads its field only"
        table.filter = "memory:1000"
        assert table.shown_keys() == ["1", "2"]
        try:
            table.filter = "mem:1000"
        except FilterError as e:
            assert str(e) == "no field 'mem': the fields are job, state, memory"
        else:
            raise AssertionError("an unknown field is an error")
        assert table.filter == "memory:1000" and table.shown_keys() == ["1", "2"], "the filter stays as it was"
        table.filter = '"2:"'
        assert table.shown_keys() == [], "quoted: the text itself, colon and all"
        assert table.describe("jobs") == "0 of 3 jobs · filter '\"2:\"'"
        assert (plural(1, "jobs"), plural(1, "exit codes"), plural(1, "jobs in the queue")) == (
            "1 job", "1 exit code", "1 job in the queue")

    drive(scenario)
