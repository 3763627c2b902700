"""The bottom line: the keys of what has the focus and of its screen, as Textual's Footer shows them.

Footer makes a widget for every key and makes them all again whenever the bindings change, which
is at every change of focus or tab: on the task screen that was 20-30 ms a key press.  This is
one widget that draws the same keys as one line of text.  A click on a key presses it, a key
that cannot be used now is dimmed, and the command palette's key sits at the right end.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget


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

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        app = self.app
        active = self.screen.active_bindings
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        spots = []
        actions = set()
        for _, binding, enabled, _ in active.values():
            if not binding.show or binding.action in actions:
                continue
            actions.add(binding.action)
            start = text.cell_len
            text.append_text(_key(app.get_key_display(binding), binding.description, enabled, key_style,
                                  description_style))
            spots.append((start, text.cell_len, binding.key, enabled))
        palette = active.get(app.COMMAND_PALETTE_BINDING) if app.ENABLE_COMMAND_PALETTE else None
        if palette is not None:
            _, binding, enabled, _ = palette
            right = _key(app.get_key_display(binding), binding.description, enabled, key_style, description_style)
            start = max(0, self.size.width - right.cell_len)
            text.truncate(max(0, start - 1), overflow="ellipsis", pad=True)
            text.append(" ")
            text.append_text(right)
            spots.append((start, text.cell_len, binding.key, enabled))
        self._spots = spots
        return text

    def on_click(self, event: events.Click) -> None:
        for start, end, key, enabled in self._spots:
            if start <= event.x < end:
                if enabled:
                    self.app.simulate_key(key)
                else:
                    self.app.bell()
                return


def _key(display: str, description: str, enabled: bool, key_style: Style, description_style: Style) -> Text:
    """`` h Hold``: the key and what it does, dimmed if it cannot be used now."""
    dim = Style(dim=True) if not enabled else Style()
    return Text.assemble((f" {display} ", key_style + dim), (f"{description} ", description_style + dim))
