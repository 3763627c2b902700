"""The top line of every screen: where you are, and whether what you see is live, paused or stale.

Stale means the engine stopped answering (the last refresh failed, say so and why) or has not
answered for a while: the age turns amber at 3 refresh intervals, and at 10 intervals of the
refresh it was asked for (:attr:`StatusBar.asked_at`; not of a screen that was under another and
asked nothing) it no longer says live but how long the engine has not answered (a schedd
stopped, not gone, answers nothing).  Before a screen's first answer it is loading, and past 10
intervals waiting for that answer: a schedd answering for 100,000 jobs takes seconds, and the
screen has nothing older to call stale.
Paused is the user's own freeze (``p``), shown until it is lifted (htop users could not tell
they had paused).
A screen under a dialog does not refresh, and says so rather than "live".  A message too long
for the line loses its middle, not its end, which says what to do.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

SLOW_INTERVALS, STALE_INTERVALS = 3, 10


class StatusBar(Static):
    crumbs: reactive[str] = reactive("")
    updated_at: reactive[float | None] = reactive(None)
    asked_at: reactive[float | None] = reactive(None)  # when the refresh not yet answered was asked
    error: reactive[str] = reactive("")
    paused: reactive[bool] = reactive(False)
    covered: reactive[bool] = reactive(False)  # a dialog is open over the screen: it does not refresh

    def on_mount(self) -> None:
        self.set_interval(1, self.refresh)

    def _age(self) -> float:
        return max(0.0, self.app.clock() - (self.updated_at or self.app.clock()))

    def _waited(self) -> float:
        """How long the refresh not yet answered has waited for its answer."""
        return max(0.0, self.app.clock() - (self.asked_at or self.app.clock()))

    def render(self) -> Text:
        palette = self.app.palette
        text = Text(self.crumbs, no_wrap=True, overflow="ellipsis", end="")
        room = max(0, self.size.width - min(len(self.crumbs), 16) - 1)
        if self.paused:
            marker = Text(" ⏸ PAUSED (p resumes) ", style=f"reverse {palette.style('warning')}")
        elif self.covered:
            marker = Text(" ‖ not refreshing under the dialog ", style="dim")
        elif self.error:
            age = f" {int(self._age())}s" if self.updated_at is not None else ""
            head, error = f" ⚠ STALE{age}: ", f"{self.error} "
            if len(head) + len(error) > room:  # keep the start, what failed, and the end, what to do
                keep = max(0, room - len(head) - 1)
                error = error[:keep // 2] + "…" + error[len(error) - (keep - keep // 2):]
            marker = Text(head + error, style=f"reverse {palette.style('error')}")
        elif self.updated_at is None:
            waited = self._waited()
            marker = Text(f" … waiting for the first answer · {int(waited)}s "
                          if waited > STALE_INTERVALS * self.app.interval else " … loading ")
        elif (waited := self._waited()) > STALE_INTERVALS * self.app.interval:  # asked, and no answer yet
            marker = Text(f" ⚠ no answer for {int(waited)}s ", style=palette.style("error"))
        else:
            age = self._age()
            role = "warning" if age > SLOW_INTERVALS * self.app.interval else "success"
            marker = Text(f" ● live · {int(age)}s ago ", style=palette.style(role))
        marker.truncate(room, overflow="ellipsis")  # where you are stays readable
        text.truncate(max(0, self.size.width - marker.cell_len), overflow="ellipsis", pad=True)
        return text + marker
