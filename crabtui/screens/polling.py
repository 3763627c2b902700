"""A screen that shows snapshots of the engine, refreshed off the UI thread.

:meth:`PollingScreen.fetch` runs in a thread worker and returns a snapshot (it may block on the
schedd or the task table); :meth:`PollingScreen.show` puts it on screen, on the UI thread.  The
next refresh is armed only when the last one is in, so refreshes never overlap and a slow engine
stretches the period instead of piling up work (dolphie's rule).  No refresh runs while the
screen is covered by another, nor while the user has paused; a failed one marks the screen stale
and is tried again at the next interval.  Covered means not on top (``is_active``): Textual's
``is_current`` also holds for the screen just beneath the top one, which would have kept the task
list reading every task while a task was open.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from crabtui.widgets.status_bar import StatusBar


class PollingScreen(Screen):
    BINDINGS = [Binding("ctrl+r", "refresh_now", "Refresh", id="refresh", show=False, tooltip="Refresh now")]

    class Fetched(Message):
        def __init__(self, snapshot: Any) -> None:
            super().__init__()
            self.snapshot = snapshot

    class FetchFailed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self) -> None:
        super().__init__()
        self._timer: Timer | None = None
        self._fetching = False
        self._due = False  # a refresh was wanted while hidden, paused or running
        self._statics: dict[str, object] = {}  # what each Static updated through update_static shows

    # -------------------------------------------------------------- to implement

    def fetch(self, now: float) -> Any:
        """Read a snapshot from the engine (in a worker thread)."""
        raise NotImplementedError

    def show(self, snapshot: Any) -> None:
        """Put a snapshot on screen (on the UI thread)."""
        raise NotImplementedError

    def tick(self) -> None:
        """Once a second: repaint what depends on the clock (countdowns, ages)."""

    def set_palette(self, palette: Any) -> None:
        """The theme changed: repaint what is coloured by state."""

    def stale_changed(self) -> None:
        """The engine stopped answering (a screen may mark its rows)."""

    def update_static(self, id: str, content: str | Text, layout: bool = False) -> None:
        """Show ``content`` in the Static ``id``, if it changed.  Its size is fixed by the style
        sheet (the info and summary lines) unless ``layout``: laying the whole screen out again
        for a new line of text cost a third of a key press on a task of 10,000 jobs."""
        shown = content if isinstance(content, str) else (content.plain, list(content.spans), content.style)
        if self._statics.get(id) != shown:
            self._statics[id] = shown
            self.query_one(f"#{id}", Static).update(content, layout=layout)

    # -------------------------------------------------------------- the cycle

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    def on_mount(self) -> None:
        self.set_palette(self.app.palette)  # the tables start with the default one
        self.status_bar.paused = self.app.paused
        self.set_interval(1, self._tick)
        self.refresh_now()

    def _tick(self) -> None:
        if self.is_current:
            self.tick()

    def on_screen_resume(self) -> None:
        self.status_bar.paused = self.app.paused
        self.status_bar.covered = False
        if self._due:
            self.refresh_now()

    def on_screen_suspend(self) -> None:
        self._stop_timer()
        self._due = True
        self.status_bar.covered = True

    def set_paused(self, paused: bool) -> None:
        """The app's pause was toggled."""
        self.status_bar.paused = paused
        if not paused:
            self.refresh_now()

    def action_refresh_now(self) -> None:
        self.refresh_now(even_if_paused=True)

    def refresh_after_action(self, *acted: Any) -> None:
        """An action on ``acted`` (what it was given: job ids, a task) is done: as ctrl+r."""
        self.action_refresh_now()

    def refresh_now(self, even_if_paused: bool = False) -> None:
        self._stop_timer()
        if self._fetching or not self.is_active or (self.app.paused and not even_if_paused):
            self._due = True
            return
        self._due = False
        self._fetching = True
        self.status_bar.asked_at = self.app.clock()
        self._fetch(self.app.clock())

    @work(thread=True, exclusive=True, group="fetch", exit_on_error=False)
    def _fetch(self, now: float) -> None:
        try:
            snapshot = self.fetch(now)
        except Exception as e:  # whatever the engine says, the screen shows it and tries again
            self.post_message(self.FetchFailed(describe_error(e)))
        else:
            self.post_message(self.Fetched(snapshot))

    def on_polling_screen_fetched(self, message: Fetched) -> None:
        self._fetching = False
        self.status_bar.error = ""
        self.status_bar.updated_at, self.status_bar.asked_at = self.app.clock(), None
        self.show(message.snapshot)
        self._arm()

    def on_polling_screen_fetch_failed(self, message: FetchFailed) -> None:
        self._fetching = False
        self.status_bar.error, self.status_bar.asked_at = message.error, None
        self.stale_changed()
        self._arm()

    def _arm(self) -> None:
        if self._due and self.is_active and not self.app.paused:
            self.refresh_now()
        elif self.is_active and not self.app.paused:
            self._timer = self.set_timer(self.app.interval, self.refresh_now)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None


def describe_error(e: Exception) -> str:
    """An engine error for the status line: the message of errors that explain themselves."""
    from crabtui.dag_view import HaltError
    from engine.crab.client.resubmit import ResubmitError
    from engine.crab.taskworker.taskdb import TaskError
    from engine.schedd.api import ScheddError

    if isinstance(e, (ScheddError, TaskError, HaltError, ResubmitError)):
        return str(e)
    return f"{type(e).__name__}: {e}"
