"""Dialogs on small terminals: Tab reaches every field and button of the resubmit form and the
kill confirmation, and what has the focus is on screen, at 80x24 and, scrolling, at 80x14."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Button, Input

from crabtui.app import CrabApp
from crabtui.snapshots import Backend
from ui_fixed import NOW
from ui_tasks import wait_for

LIVE = "231114_211000:alice_crab_lumis"


@pytest.mark.parametrize("size", [(80, 24), (80, 14)])
@pytest.mark.parametrize("key, wanted", [("R", ["jobids", "sitewhitelist", "siteblacklist", "maxjobruntime",
                                                "maxmemory", "priority", "no", "yes"]),
                                         ("K", ["no", "yes"])])
def test_tab_reaches_every_control_and_shows_it(fixed, utc, size, key, wanted):
    async def main() -> None:
        app = CrabApp(Backend(fixed), clock=lambda: NOW, task=LIVE)
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: getattr(app.screen, "snapshot", None), "the task screen")
            await pilot.press(key)
            await wait_for(pilot, lambda: app.screen.query(Button), "the dialog")
            reached = []
            for n in range(len(wanted)):  # from the control focused first, on with Tab
                if n:
                    await pilot.press("tab")
                await pilot.pause()
                focused = app.screen.focused
                assert isinstance(focused, (Input, Button)), focused
                visible = focused.region.intersection(app.screen.region)
                assert visible == focused.region and visible.area, f"{focused.id} is off screen at {size}"
                reached.append(focused.id)
            assert reached == wanted

    asyncio.run(main())


def test_a_jobs_seven_tabs_are_all_named_at_80_columns(fixed, utc):
    """At 80 columns a job's seven labels are drawn side by side, each whole: the last one read
    "7" alone, its title cut off."""
    from crabtui.screens.job import JobScreen
    from crabtui.widgets.tabbed import TabBar

    async def main() -> None:
        app = CrabApp(Backend(fixed), clock=lambda: NOW, task=LIVE)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: getattr(app.screen, "snapshot", None), "the task screen")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot, "a job")
            bar = app.screen.query_one(TabBar)
            drawn = bar.render().plain
            assert drawn.startswith(" 1 Attempts ") and drawn.rstrip().endswith(" 7 Why"), drawn
            assert len(drawn.rstrip()) <= bar.size.width

    asyncio.run(main())


def test_the_active_tab_is_shown_on_a_narrow_terminal(fixed, utc):
    """A job's seven tabs do not fit in 64 columns: the one a digit key opens is shown, and the
    labels before it are left out, with a mark saying so; labels after the shown ones are left
    out whole, with a mark too."""
    from crabtui.screens.job import JobScreen
    from crabtui.widgets.tabbed import TabBar

    async def main() -> None:
        app = CrabApp(Backend(fixed), clock=lambda: NOW, task=LIVE)
        async with app.run_test(size=(64, 24)) as pilot:
            await wait_for(pilot, lambda: getattr(app.screen, "snapshot", None), "the task screen")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, JobScreen) and app.screen.snapshot, "a job")
            bar = app.screen.query_one(TabBar)
            drawn = bar.render().plain
            assert drawn.startswith(" 1 Attempts ") and drawn.rstrip().endswith(" ›"), drawn
            await pilot.press("7")
            await pilot.pause()
            drawn = bar.render().plain
            assert drawn.startswith("‹ ") and drawn.rstrip().endswith(" 7 Why"), drawn
            assert len(drawn.rstrip()) <= bar.size.width
            await pilot.click(TabBar, offset=(drawn.index("User log") + 2, 0))  # a click still hits its label
            assert app.screen.query_one("Tabbed").active == "events"
            await pilot.press("1")
            await pilot.pause()
            assert bar.render().plain.startswith(" 1 Attempts ")

    asyncio.run(main())
