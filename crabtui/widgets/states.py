"""How states look: a glyph and a word for every node state, task status and DAG state, coloured
from the current theme, so that no meaning rests on colour alone (condor_watch_q's rule), and the
progress bar with condor_watch_q's glyphs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text

from crabtui.snapshots import NODE_STATES
from crabtui.task_status import NO_OUTPUT, RESCHEDULED

# node state -> (glyph, colour role)
NODE_LOOK = {
    "unsubmitted": ("·", "muted"),
    "cooloff": ("◷", "warning"),
    "idle": ("○", "plain"),
    "running": ("▶", "primary"),
    "transferring": ("⇅", "primary"),
    "held": ("‖", "warning"),
    "finished": ("✔", "success"),
    NO_OUTPUT: ("∅", "muted"),
    RESCHEDULED: ("↻", "warning"),
    "failed": ("✖", "error"),
    "killing": ("✗", "error"),
    "killed": ("✗", "error"),
}
# task status (the task table's) -> (glyph, colour role)
TASK_LOOK = {
    "NEW": ("✚", "plain"), "QUEUED": ("…", "plain"), "UPLOADED": ("⏸", "warning"), "SUBMITTED": ("▶", "primary"),
    "COMPLETED": ("✔", "success"), "FAILED": ("✖", "error"), "KILLED": ("✗", "error"),
    "SUBMITFAILED": ("✖", "error"), "KILLFAILED": ("✖", "error"), "RESUBMITFAILED": ("✖", "error"),
}
# a DAG's state (DagSummary.state) -> (glyph, colour role)
DAG_LOOK = {
    "idle": ("○", "plain"), "running": ("▶", "primary"), "recovering": ("↻", "primary"),
    "halted": ("⏸", "warning"), "held": ("‖", "warning"), "removing": ("✗", "error"),
    "aborting": ("✖", "error"),
    "completed": ("✔", "success"), "failed": ("✖", "error"), "removed": ("✗", "error"),
}
# a DAG node's state (DAGMan's, its queued nodes split by their jobs: crabtui.dag_view.DAG_COUNTS),
# and a node job's JobStatus word -> (glyph, colour role); htcondor dag status's glyphs where it has them
DAG_NODE_LOOK = {
    "done": ("✔", "success"), "failed": ("✖", "error"), "futile": ("⊘", "error"), "held": ("‖", "warning"),
    "running": ("▶", "primary"), "idle": ("○", "plain"), "pre": ("◔", "primary"), "post": ("◕", "primary"),
    "ready": ("»", "plain"), "unready": ("·", "muted"), "queued": ("○", "plain"),
    "transferring": ("⇅", "primary"), "suspended": ("‖", "warning"), "removed": ("✗", "error"),
    "completed": ("✔", "success"),
}
# condor_watch_q's progress bar glyphs, extended to CRAB's states; the order the bar is drawn in.
BAR_GLYPHS = (("finished", "#"), (NO_OUTPUT, "#"), (RESCHEDULED, "~"), ("transferring", ">"), ("running", "="),
              ("idle", "-"), ("cooloff", "-"), ("held", "!"), ("failed", "x"), ("killing", "x"), ("killed", "x"),
              ("unsubmitted", " "))
BAR_LEGEND = ("# finished (or an automatic task's probe, no output)  ~ rescheduled  > transferring  = running  "
              "- idle or cooloff  ! held  x failed or killed")
DONE_STATES = ("finished", NO_OUTPUT, RESCHEDULED)
"""Jobs with nothing left to do: the bar's percentage.  An automatic task's ended probes and
failed processing jobs are done too: the tail jobs, counted as they are made, redo the lumis."""


@dataclass(frozen=True)
class Palette:
    """Rich styles for the colour roles, taken from a theme's variables (an ANSI theme's are the
    terminal's own red, yellow, green and blue).  Without colour (NO_COLOR) the roles that need
    attention keep it through weight alone, at full contrast: warnings bold, errors bold and
    reversed; the others are plain, told apart by their glyphs."""

    styles: Mapping[str, str]

    @classmethod
    def from_variables(cls, variables: Mapping[str, str], *, no_color: bool = False) -> Palette:
        if no_color:
            return cls({"plain": "", "muted": "", "primary": "", "success": "", "warning": "bold",
                        "error": "bold reverse"})

        def colour(name: str, fallback: str) -> str:
            value = variables.get(name, "")
            return value if value.startswith("#") and len(value) == 7 else fallback

        return cls({"plain": "", "muted": "dim", "primary": colour("primary", "blue"),
                    "success": colour("success", "green"), "warning": colour("warning", "yellow"),
                    "error": f"bold {colour('error', 'red')}"})

    def style(self, role: str) -> str:
        return self.styles.get(role, "")


DEFAULT_PALETTE = Palette.from_variables({})


def node_state(state: str, palette: Palette, suffix: str = "") -> Text:
    """``✔ finished``; ``suffix`` is added after the word (a cooloff's time left)."""
    glyph, role = NODE_LOOK.get(state, ("?", "plain"))
    return Text(f"{glyph} {state}{suffix}", style=palette.style(role), no_wrap=True, end="")


def task_status(status: str, palette: Palette) -> Text:
    glyph, role = TASK_LOOK.get(status, ("?", "plain"))
    return Text(f"{glyph} {status}", style=palette.style(role), no_wrap=True, end="")


def dag_state(state: str, palette: Palette) -> Text:
    """``▶ running``, ``⏸ halted``."""
    glyph, role = DAG_LOOK.get(state, ("?", "plain"))
    return Text(f"{glyph} {state}", style=palette.style(role), no_wrap=True, end="")


def dag_node_state(state: str, palette: Palette) -> Text:
    """``» ready``, ``⊘ futile``: a DAG node's state (or its job's) as a glyph and a word."""
    glyph, role = DAG_NODE_LOOK.get(state, ("?", "plain"))
    return Text(f"{glyph} {state}", style=palette.style(role), no_wrap=True, end="")


def dag_node_counts(counts: Mapping[str, int], palette: Palette) -> Text:
    """``✔3 ▶1 ·2``: a DAG's nodes in each state there are, in DAG_NODE_LOOK's order."""
    text = Text(no_wrap=True, end="")
    for state, (glyph, role) in DAG_NODE_LOOK.items():
        n = counts.get(state, 0)
        if n:
            if text:
                text.append(" ")
            text.append(f"{glyph}{n}", style=palette.style(role))
    return text


def progress_bar(counts: Mapping[str, int], total: int, width: int, palette: Palette) -> Text:
    """``[###==--  ] 42%``: each state's share of ``width`` cells, and the share of done jobs."""
    text = Text("[", no_wrap=True, end="")
    used = 0
    if total:
        shares = [(state, glyph, counts.get(state, 0) * width / total) for state, glyph in BAR_GLYPHS
                  if counts.get(state, 0)]
        cells = {state: max(1, int(share)) for state, _, share in shares}  # a state that is there shows
        by_remainder = sorted(shares, key=lambda s: s[2] - int(s[2]), reverse=True)
        for state, _, _ in by_remainder:  # the largest remainders get the cells left over
            if sum(cells.values()) >= width:
                break
            cells[state] += 1
        while sum(cells.values()) > width:
            cells[max(cells, key=cells.get)] -= 1
        for state, glyph, _ in shares:
            text.append(glyph * cells[state], style=palette.style(NODE_LOOK[state][1]))
            used += cells[state]
    text.append(" " * (width - used) + "]")
    done = sum(counts.get(state, 0) for state in DONE_STATES)
    text.append(f" {int(done * 100 / total) if total else 0:3d}%")
    return text


def state_counts(counts: Mapping[str, int], palette: Palette) -> Text:
    """``✔3 ▶1 ◷1``: the jobs in each state there are, in the states' order."""
    text = Text(no_wrap=True, end="")
    for state in NODE_STATES:
        n = counts.get(state, 0)
        if n:
            glyph, role = NODE_LOOK[state]
            if text:
                text.append(" ")
            text.append(f"{glyph}{n}", style=palette.style(role))
    return text


def short_duration(seconds: float) -> str:
    """``45s``, ``12m``, ``3h``, ``5d``: an age at a glance."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def shown_path(path: str) -> str:
    """A path as short as it reads unambiguously: relative to the directory crabtui was started
    in when it is below it (``./run/d.dag``), else with ``~`` for the home directory."""
    import os

    try:
        here = os.getcwd()
    except OSError:
        here = "/"
    if here != "/" and (path == here or path.startswith(here + os.sep)):
        return "." + path[len(here):]
    home = os.path.expanduser("~")
    if home not in ("/", "") and path.startswith(home + os.sep):
        return "~" + path[len(home):]
    return path
