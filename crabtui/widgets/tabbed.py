"""Tabs for a screen's panes, drawn as one line of text.

Textual's TabbedContent makes a widget per tab and an underline that slides under the active
one: a switch restyles every tab through CSS and animates the underline, which on the task
screen was a third of the 50 ms a key may take.  :class:`Tabbed` keeps its use (``with
Tabbed(initial=...)`` around :class:`Pane`\\ s, ``active``, a ``TabActivated`` message) with one
line of labels (a click on one switches to it) over a ContentSwitcher.  The digit keys switch
tabs too, in the order of the panes, and each label shows its digit.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import ContentSwitcher


class Pane(Container):
    """One tab's content; its ``id`` is the tab's."""

    DEFAULT_CSS = "Pane { height: 1fr; }"

    def __init__(self, title: str, *children: Widget, id: str) -> None:
        super().__init__(*children, id=id)
        self.title = title


MORE_LEFT = "‹ "  # drawn first when labels before the shown ones are left out
MORE_RIGHT = "›"  # drawn last when labels after the shown ones are left out


def _span(labels: list[tuple[str, str]], gap: int) -> int:
    """The columns ``labels`` take, ``gap`` blanks apart."""
    return sum(len(label) for _, label in labels) + gap * (len(labels) - 1)


class TabBar(Widget):
    """The labels, the active one marked and always shown; a click on a label makes it active."""

    COMPONENT_CLASSES = {"tab-bar--active", "tab-bar--inactive"}

    DEFAULT_CSS = """
    TabBar {
        height: 1;
        padding: 0 1;
        & > .tab-bar--active {
            color: $foreground;
            background: $primary 40%;
            text-style: bold;
        }
        & > .tab-bar--inactive {
            color: $foreground-muted;
        }
    }
    """

    active: reactive[str] = reactive("")

    class Changed(Message):
        def __init__(self, tab: str) -> None:
            super().__init__()
            self.tab = tab

    def __init__(self, tabs: list[tuple[str, str]], active: str) -> None:
        super().__init__()
        self.tabs = tabs  # (id, title)
        self.set_reactive(TabBar.active, active)
        self._spots: list[tuple[int, int, str]] = []

    def render(self) -> Text:
        active = self.get_component_rich_style("tab-bar--active")
        inactive = self.get_component_rich_style("tab-bar--inactive")
        labels = [(tab, f" {n} {title} ") for n, (tab, title) in enumerate(self.tabs, 1)]
        width = self.size.width
        # A blank between labels while they all fit with it; a narrow terminal (the job screen's
        # seven tabs at 80 columns) draws them side by side, the labels' own blanks apart.
        gap = 1 if _span(labels, 1) <= width else 0
        first = self._first_shown(labels, gap)
        text = Text(no_wrap=True, end="")
        if first:
            text.append(MORE_LEFT, style=inactive)
        self._spots = []
        for i, (tab, label) in enumerate(labels[first:], first):
            more = len(MORE_RIGHT) if i < len(labels) - 1 else 0
            if tab != self.active and text.cell_len + len(label) + more > width:
                text.append(MORE_RIGHT, style=inactive)  # a whole label or none: never a bare digit
                break
            start = text.cell_len
            text.append(label, style=active if tab == self.active else inactive)
            self._spots.append((start, text.cell_len, tab))
            text.append(" " * gap)
        return text

    def _first_shown(self, labels: list[tuple[str, str]], gap: int) -> int:
        """The first label drawn: 0, unless the active one would not fit in a narrow terminal;
        then the labels before it are left out."""
        last = next((i for i, (tab, _) in enumerate(labels) if tab == self.active), 0)
        first = 0
        while first < last and (len(MORE_LEFT) if first else 0) + _span(labels[first:last + 1], gap) > self.size.width:
            first += 1
        return first

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        for start, end, tab in self._spots:
            if offset is not None and start <= offset.x < end:
                self.active = tab

    def watch_active(self, tab: str) -> None:
        self.post_message(self.Changed(tab))


class Tabbed(Widget):
    """See the module's description."""

    DEFAULT_CSS = """
    Tabbed { height: 1fr; }
    Tabbed > ContentSwitcher { height: 1fr; }
    """
    BINDINGS = [Binding(str(n), f"show_tab({n})", f"Tab {n}", show=False, tooltip=f"Show the tab labelled {n}")
                for n in range(1, 10)]

    class TabActivated(Message):
        def __init__(self, tabbed: Tabbed, pane: Pane) -> None:
            super().__init__()
            self.tabbed, self.pane = tabbed, pane

        @property
        def control(self) -> Tabbed:
            return self.tabbed

    def __init__(self, initial: str) -> None:
        super().__init__()
        self._initial = initial
        self._panes: list[Pane] = []

    def compose_add_child(self, widget: Widget) -> None:
        self._panes.append(widget)

    def compose(self) -> ComposeResult:
        yield TabBar([(pane.id, pane.title) for pane in self._panes], self._initial)
        yield ContentSwitcher(*self._panes, initial=self._initial)

    @property
    def active(self) -> str:
        return self.query_one(TabBar).active

    @active.setter
    def active(self, tab: str) -> None:
        self.query_one(TabBar).active = tab

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return action != "show_tab" or parameters[0] <= len(self._panes)

    def action_show_tab(self, n: int) -> None:
        self.active = self._panes[n - 1].id

    def on_tab_bar_changed(self, event: TabBar.Changed) -> None:
        event.stop()
        switcher = self.query_one(ContentSwitcher)
        if switcher.current != event.tab:
            switcher.current = event.tab
            self.post_message(self.TabActivated(self, self.query_one(f"#{event.tab}", Pane)))
