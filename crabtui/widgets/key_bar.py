"""The bottom line: the keys of what has the focus and of its screen, most important first, and
``? more`` at the right end for the rest (the help screen lists every key).

Footer makes a widget for every key and makes them all again whenever the bindings change, which
is at every change of focus or tab: on the task screen that was 20-30 ms a key press.  This is
one widget that draws the keys as one line of text.  At 80 columns not every key fits, so keys
are drawn in :data:`IMPORTANCE` order, as many as fit whole: how to open, go back and quit, then
the search, then the actions.  A click on a key presses it, and a key that cannot be used now is
dimmed.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

# Binding ids, most important first; shown keys without an id, or not listed, come after them.
IMPORTANCE = ("open-task", "open-job", "open-dag", "open-node", "open-subdag", "show-reason", "open-batch",
              "open-batch-job", "back", "back-held", "quit", "filter", "find", "search", "kill", "remove-dag",
              "remove-batch", "remove-job", "resubmit", "kill-jobs", "blacklist", "hold", "release", "release-held",
              "mark-cause", "remove-held", "halt", "dags", "queue", "users", "held-users", "ended", "mark", "sort",
              "copy-id", "copy-path", "pause")
HELP = "help"  # the binding drawn last, as "more"


class KeyBar(Widget):
    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description"}

    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
        & > .key-bar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .key-bar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._spots: list[tuple[int, int, str, bool]] = []  # where each key is drawn: start, end, key, enabled

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        self.refresh()

    def shown(self) -> tuple[list[tuple[Binding, bool]], tuple[Binding, bool] | None]:
        """The keys to show, most important first, and the help key (drawn as ``more``)."""
        keys, actions, help_key = [], set(), None
        for _, binding, enabled, _ in self.screen.active_bindings.values():
            if binding.id == HELP:
                help_key = (binding, enabled)
            elif binding.show and binding.action not in actions:
                actions.add(binding.action)
                keys.append((binding, enabled))
        rank = {name: i for i, name in enumerate(IMPORTANCE)}
        keys.sort(key=lambda key: rank.get(key[0].id, len(rank)))  # stable: unlisted keys keep their order
        return keys, help_key

    def render(self) -> Text:
        styles = (self.get_component_rich_style("key-bar--key"), self.get_component_rich_style("key-bar--description"))
        keys, help_key = self.shown()
        more = self._key(*help_key, "more", styles) if help_key else Text()
        room = self.size.width - more.cell_len
        text = Text(no_wrap=True, end="")
        spots = []
        describe = getattr(self.screen, "key_description", None)  # a toggle says what it does now
        for binding, enabled in keys:
            key = self._key(binding, enabled, (describe(binding) if describe else None) or binding.description, styles)
            if text.cell_len + key.cell_len > room:
                break
            spots.append((text.cell_len, text.cell_len + key.cell_len, binding.key, enabled))
            text.append_text(key)
        if help_key:
            text.pad_right(room - text.cell_len)
            spots.append((room, self.size.width, help_key[0].key, help_key[1]))
            text.append_text(more)
        self._spots = spots
        return text

    def _key(self, binding: Binding, enabled: bool, description: str, styles: tuple[Style, Style]) -> Text:
        """`` h Hold``: the key and what it does, dimmed if it cannot be used now."""
        dim = Style(dim=True) if not enabled else Style()
        return Text.assemble((f" {self.app.get_key_display(binding)} ", styles[0] + dim),
                             (f"{description} ", styles[1] + dim))

    def on_click(self, event: events.Click) -> None:
        for start, end, key, enabled in self._spots:
            if start <= event.x < end:
                if enabled:
                    self.app.simulate_key(key)
                else:
                    self.app.bell()
                return
