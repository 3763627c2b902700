"""A log that follows its end, with search (toolong's way of reading a growing file).

It follows the end while it is scrolled there; scrolled up, it stays where the reader is and
counts the lines written since (``12 new lines``), and End follows again.  ``/`` (or ``f``)
finds text: the first line from the top of the view that holds it, case-insensitive, is
brought into view and drawn reversed; ``n`` and ``N`` go to the next and previous one,
wrapping around.  The search line is the screen's :class:`crabtui.widgets.filter_bar.FilterBar`
in its find mode, which asks this widget what it asks a table.

A text shown whole (``show_text``, such as ``crab status``' summaries) is wrapped to the view's
width when ``wrap`` is set, as a terminal wraps it, and wrapped again when the view is resized;
a log's lines are not, and scroll sideways instead (their columns stay aligned).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from rich.style import Style
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import Log


class LogView(Log):
    BINDINGS = [
        Binding("slash,f", "search", "Search", id="search", tooltip="Search the log: the next line that holds the text"),
        Binding("n", "find_next", "Next match", id="find-next", show=False, tooltip="The next line that matches"),
        Binding("N", "find_previous", "Previous match", id="find-previous", show=False,
                tooltip="The previous line that matches"),
        Binding("end", "follow", "Follow", id="follow", show=False, tooltip="Go to the end and follow it"),
    ]

    def __init__(self, *, max_lines: int | None = None, id: str | None = None, follow: bool = True,
                 wrap: bool = False) -> None:
        super().__init__(max_lines=max_lines, id=id, auto_scroll=follow)
        self.pending = 0  # lines written while scrolled up
        self.find_text = ""
        self.match_line: int | None = None
        self.wrap = wrap
        self._text = ""  # what show_text shows
        self._wrapped_at = 0  # the width it was wrapped to
        self._updated: str | None = None  # the last text update_text was given

    # -------------------------------------------------------------- a text shown whole

    def show_text(self, text: str) -> None:
        """Replace what is shown by ``text``, keeping the reader's place (a log that follows its end
        follows the new end)."""
        self._text = text
        self._wrapped_at = self.scrollable_content_region.width
        top = self.scroll_offset.y
        self.clear()
        self.write_lines(wrapped(text, self._wrapped_at) if self.wrap else text.splitlines())
        if not self.auto_scroll:
            self.scroll_to(y=top, animate=False)

    def update_text(self, text: str) -> None:
        """Show ``text`` if it is not what is shown already: the reader's place and search stay.
        A followed file that only grew gets its new lines (``12 new lines`` while scrolled up);
        any other text replaces the view's, from its top when it is not followed."""
        before, self._updated = self._updated, text
        if before == text:
            return
        if before is not None and self.auto_scroll and before.endswith("\n") and text.startswith(before):
            self.write_lines(text[len(before):].splitlines())
            return
        self.show_text(text)
        if not self.auto_scroll:
            self.scroll_home(animate=False)

    def on_resize(self) -> None:
        if self.wrap and self._text and self.scrollable_content_region.width != self._wrapped_at:
            self.show_text(self._text)

    # -------------------------------------------------------------- following

    def write_lines(self, lines: Iterable[str], scroll_end: bool | None = None) -> LogView:
        lines = list(lines)
        following = self.is_vertical_scroll_end
        super().write_lines(lines, scroll_end)
        if not following and self.auto_scroll:
            self.pending += sum(len(line.splitlines()) or 1 for line in lines)
        return self

    def clear(self) -> LogView:
        self.pending, self.match_line = 0, None
        return super().clear()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.is_vertical_scroll_end:
            self.pending = 0

    def action_follow(self) -> None:
        self.scroll_end(animate=False)
        self.pending = 0

    def describe(self, name: str) -> str:
        """``120 lines of x.dagman.out · following``, or scrolled up with the new lines counted."""
        text = f"{self.line_count} line{'s' if self.line_count != 1 else ''} of {name} · "
        if not self.auto_scroll:
            text = text[:-3]
        elif self.is_vertical_scroll_end:
            text += "following"
        else:
            text += "scrolled up" + (f", {self.pending} new line{'s' if self.pending != 1 else ''}"
                                     if self.pending else "") + ": End follows again"
        if self.find_text:
            text += (f" · {self.find_text!r} at line {self.match_line + 1} (n / N)" if self.match_line is not None
                     else f" · no line holds {self.find_text!r}")
        if self.virtual_size.width > self.size.width > 0:
            text += " · ← → long lines"
        return text

    # -------------------------------------------------------------- search (FilterBar's find)

    @property
    def cursor_row(self) -> int:
        return self.match_line if self.match_line is not None else int(self.scroll_offset.y)

    @property
    def filter(self) -> str:
        return ""

    def move_cursor(self, *, row: int) -> None:
        """Back to where a search started (Escape)."""
        self.match_line = None
        self.scroll_to(y=row, animate=False)
        self.refresh()

    def action_search(self) -> None:
        from crabtui.widgets.filter_bar import FilterBar

        self.screen.query_one(FilterBar).open(self, "find")

    def find(self, text: str, *, start: int | None = None, backward: bool = False) -> bool:
        """Show the first line from ``start`` (default: the top of the view) on, or back, that
        holds ``text``, wrapping around; False if none does."""
        self.find_text = text
        needle = text.strip().lower()
        lines = self.lines
        if not needle or not lines:
            self.match_line = None
            self.refresh()
            return False
        count = len(lines)
        first = self.cursor_row if start is None else start
        order = (range(first, first - count, -1) if backward else range(first, first + count))
        for i in order:
            row = i % count
            if needle in lines[row].lower():
                self.match_line = row
                self.scroll_to(y=max(0, row - self.size.height // 3), animate=False)
                self.refresh()
                return True
        self.match_line = None
        self.refresh()
        return False

    def action_find_next(self) -> None:
        if self.find_text and not self.find(self.find_text, start=self.cursor_row + 1):
            self.app.notify(f"No line holds {self.find_text!r}.", severity="warning")

    def action_find_previous(self) -> None:
        if self.find_text and not self.find(self.find_text, start=self.cursor_row - 1, backward=True):
            self.app.notify(f"No line holds {self.find_text!r}.", severity="warning")

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.match_line is not None and int(self.scroll_offset.y) + y == self.match_line:
            strip = strip.apply_style(Style(reverse=True))
        return strip


def wrapped(text: str, width: int) -> list[str]:
    """``text``'s lines, each longer than ``width`` broken at spaces (at ``width`` if a word is
    longer; a path is not broken at its hyphens), its continuation indented as far as the line
    itself and two more; as they are while the view has no width yet (it is wrapped once it has)."""
    if width <= 0:
        return text.splitlines()
    lines = []
    for line in text.splitlines():
        if len(line) <= width:
            lines.append(line)
            continue
        indent = " " * min(len(line) - len(line.lstrip(" ")) + 2, width // 2)
        lines.extend(textwrap.wrap(line, width, subsequent_indent=indent, replace_whitespace=False,
                                   break_on_hyphens=False))
    return lines
