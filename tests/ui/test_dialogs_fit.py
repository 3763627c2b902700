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
