"""The top line of every screen: where you are, and whether what you see is live, paused or stale.

Stale means the engine stopped answering (the last refresh failed, say so and why) or has not
answered for a while: the age turns amber at 3 refresh intervals, red at 10.  Paused is the
user's own freeze (``p``), shown until it is lifted (htop users could not tell they had paused).
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

SLOW_INTERVALS, STALE_INTERVALS = 3, 10


class StatusBar(Static):
    crumbs: reactive[str] = reactive("")
    updated_at: reactive[float | None] = reactive(None)
    error: reactive[str] = reactive("")
    paused: reactive[bool] = reactive(False)

    def on_mount(self) -> None:
        self.set_interval(1, self.refresh)

    def _age(self) -> float:
        return max(0.0, self.app.clock() - (self.updated_at or self.app.clock()))

    def render(self) -> Text:
        palette = self.app.palette
        text = Text(self.crumbs, no_wrap=True, overflow="ellipsis", end="")
        if self.paused:
            marker = Text(" ⏸ PAUSED (p resumes) ", style=f"reverse {palette.style('warning')}")
        elif self.error:
            age = f" {int(self._age())}s" if self.updated_at is not None else ""
            marker = Text(f" ⚠ STALE{age}: {self.error} ", style=f"reverse {palette.style('error')}")
        elif self.updated_at is None:
            marker = Text(" … loading ")
        else:
            age = self._age()
            role = ("error" if age > STALE_INTERVALS * self.app.interval else
                    "warning" if age > SLOW_INTERVALS * self.app.interval else "success")
            marker = Text(f" ● live · {int(age)}s ago ", style=palette.style(role))
        marker.truncate(max(0, self.size.width - 12), overflow="ellipsis")  # the place stays readable
        text.truncate(max(0, self.size.width - marker.cell_len), overflow="ellipsis", pad=True)
        return text + marker
