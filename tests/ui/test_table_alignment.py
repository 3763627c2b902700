"""Every table's header and data line up, column by column, as drawn: on the task list, each tab
of the task screen and a job's attempts; at first, after a sort, a filter, a resize and a change of
theme (the header was once drawn with the column widths from before the rows widened them)."""

from __future__ import annotations

import asyncio

import pytest

from crabtui.app import CrabApp
from crabtui.snapshots import Backend
from crabtui.widgets.live_table import LiveTable
from ui_fixed import NOW
from ui_tasks import wait_for

LIVE = "231114_211000:alice_crab_lumis"

pytestmark = pytest.mark.usefixtures("utc")


def misaligned(table: LiveTable) -> list[str]:
    """Where a row's cell does not start (left-aligned) or end (right-aligned) where its column's
    label does, on the lines the table draws now; columns scrolled off or cut are not looked at."""
    header = table.render_line(0).text
    problems = []
    top = int(table.scroll_offset.y)
    for y in range(1, min(table.size.height, table.row_count - top + 1)):
        row, key = table.render_line(y).text, table.row_key(top + y - 1)
        start = 0
        for column, cell in zip(table.columns, table.row_cells(key)):
            label, text = column.label.plain, cell.plain
            if not label.strip():  # the marks' column
                continue
            at = header.find(label, start)
            if at < 0:
                break
            start = at + len(label)
            if not text:
                continue
            if column.right:
                drawn, wanted = row[start - len(text):start], text
            else:  # a long cell is cut, with an ellipsis, no sooner than its label's width
                shown = min(len(text), max(1, len(label) - 1))
                drawn, wanted = row[at:at + shown], text[:shown]
            if drawn != wanted:
                problems.append(f"{table.id} row {key} column {label!r}: {drawn!r} under the header, not {wanted!r}"
                                f"\n  {header}\n  {row}")
    return problems


async def check(pilot, tables: list[str], when: str) -> None:
    screen = pilot.app.screen
    for table_id in tables:
        table = screen.query_one(f"#{table_id}", LiveTable)
        if not table.display or not table.region.height:  # on another tab: looked at there
            continue
        await wait_for(pilot, lambda: table.row_count, f"rows in {table_id}")
        await pilot.pause()
        assert not misaligned(table), f"{when}: " + "\n".join(misaligned(table))


async def steps(pilot, tables: list[str], filter_text: str) -> None:
    """The table as first drawn, then after a sort, a filter, a resize and a change of theme."""
    await check(pilot, tables, "first drawn")
    await pilot.press("s", "s")
    await check(pilot, tables, "sorted by the second column")
    await pilot.press("slash", *filter_text, "enter")
    await check(pilot, tables, f"filtered by {filter_text!r}")
    await pilot.press("escape")
    await pilot.resize_terminal(160, 50)
    await check(pilot, tables, "at 160x50")
    await pilot.resize_terminal(80, 24)
    await check(pilot, tables, "back at 80x24")
    await pilot.press("t")
    await check(pilot, tables, "in the light theme")
    await pilot.press("t")


def drive(state, scenario, task: str | None = None) -> None:
    async def main() -> None:
        app = CrabApp(Backend(state), clock=lambda: NOW, task=task)
        async with app.run_test(size=(80, 24)) as pilot:
            await scenario(pilot)

    asyncio.run(main())


def test_the_task_list(fixed):
    async def scenario(pilot):
        await steps(pilot, ["tasks"], "lumis")

    drive(fixed, scenario)


@pytest.mark.parametrize("tab, table, filter_text", [("1", "job-table", "state:cool"),
                                                     ("3", "site-table", "T2"),
                                                     ("4", "error-table", "8021")])
def test_the_task_screens_tables(fixed, tab, table, filter_text):
    async def scenario(pilot):
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "snapshot", None), "the task screen")
        await pilot.press(tab)
        await steps(pilot, [table], filter_text)

    drive(fixed, scenario, task=LIVE)


def test_a_jobs_attempts(fixed):
    async def scenario(pilot):
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "snapshot", None), "the task screen")
        jobs = pilot.app.screen.query_one("#job-table", LiveTable)
        await wait_for(pilot, lambda: jobs.row_count, "the jobs")
        jobs.move_cursor(row=jobs.get_row_index("4"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen.query("#attempt-table"), "the job screen")
        await check(pilot, ["attempt-table"], "first drawn")
        await pilot.press("s", "s")
        await check(pilot, ["attempt-table"], "sorted by the second column")
        await pilot.resize_terminal(160, 50)
        await check(pilot, ["attempt-table"], "at 160x50")
        await pilot.press("t")
        await check(pilot, ["attempt-table"], "in the light theme")

    drive(fixed, scenario, task=LIVE)


def cut_numbers(table: LiveTable) -> list[str]:
    """Right-aligned (number) columns drawn in part at either edge of the table, on the lines
    drawn now: ``90`` cut to ``9`` at the right edge reads as 9."""
    from crabtui.widgets.line_table import PADDING

    x, width = int(table.scroll_offset.x), table.size.width
    spans, edge = [], 0
    for i, (column, w) in enumerate(zip(table.columns, table._widths)):
        start, edge = edge, edge + w + 2 * PADDING
        shift = 0 if i < table.fixed_columns else x
        spans.append((column, start - shift, edge - shift))
    fixed = sum(w + 2 * PADDING for w in table._widths[:table.fixed_columns])
    cut = []
    for y in range(min(table.size.height, table.row_count + 1)):
        line = table.render_line(y).text
        for column, start, end in spans:
            if column.right and (start < fixed < end or start < width < end):
                shown = line[max(start, fixed):min(end, width)]
                if shown.strip():
                    cut.append(f"line {y}, column {column.label.plain!r}: {shown!r}\n  {line}")
    return cut


def test_a_number_column_is_drawn_whole_or_not_at_all(fixed):
    """At 80 columns the Jobs tab's CPU % ended at the edge as its first digit; scrolled
    sideways, the Runtime lost its first digits at the left edge."""
    async def scenario(pilot):
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "snapshot", None), "the task screen")
        jobs = pilot.app.screen.query_one("#job-table", LiveTable)
        await wait_for(pilot, lambda: jobs.row_count, "the jobs")
        await pilot.pause()
        assert not cut_numbers(jobs), "\n".join(cut_numbers(jobs))
        for _ in range(4):
            await pilot.press("right")
            await pilot.pause()
            assert not cut_numbers(jobs), f"scrolled to {jobs.scroll_offset.x}:\n" + "\n".join(cut_numbers(jobs))

    drive(fixed, scenario, task=LIVE)


def test_a_jobs_attempts_say_when_columns_are_off_screen(fixed):
    """At 80 columns the attempts' Exit, Then and Why columns are to the right: the info line says
    so, as every other table's does, and which attempt the file tabs show."""
    async def scenario(pilot):
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "snapshot", None), "the task screen")
        jobs = pilot.app.screen.query_one("#job-table", LiveTable)
        await wait_for(pilot, lambda: jobs.row_count, "the jobs")
        jobs.move_cursor(row=jobs.get_row_index("4"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "snapshot", None)
                       and pilot.app.screen.query("#attempt-table"), "the job screen")
        info = pilot.app.screen.query_one("#info")
        await wait_for(pilot, lambda: "← → more columns" in info.render().plain, "the info line's more columns")
        assert info.render().plain.endswith("tabs 3-5 show the cursor's attempt"), "whole within 80 columns"

    drive(fixed, scenario, task=LIVE)
