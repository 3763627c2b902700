"""``crabtui watch TASK``: a task's progress, live, until it ends (like condor_watch_q).

On a terminal the progress line is redrawn in place; into a pipe or file one line is printed each
time it changes, so a log of the run reads well.  An engine that stops answering is reported and
asked again; the command does not give up on it.  Exit status 0 when the task ends COMPLETED,
1 when it ends otherwise (FAILED, KILLED, SUBMITFAILED) or cannot be found.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from crabtui.commands.backend import fail
from crabtui.snapshots import NODE_STATES, Backend, TaskSnapshot, is_done, state_counts
from crabtui.task_status import countdown
from crabtui.widgets.states import DEFAULT_PALETTE, progress_bar, task_status
from crabtui.widgets.states import state_counts as glyph_counts
from engine.crab.taskworker.taskdb import COMPLETED, FAILED, KILLFAILED, RESUBMITFAILED, SUBMITFAILED, TaskError
from engine.schedd.api import ScheddError

BAR_WIDTH = 30
SHORT_BAR = 10


RESUBMITTABLE = (FAILED, KILLFAILED, RESUBMITFAILED)
"""The ends of a task whose failed jobs ``task resubmit`` runs again, as CRAB's server does; it
submits a SUBMITFAILED task anew and refuses a KILLED one."""


def progress_line(snapshot: TaskSnapshot, now: float, countdowns: bool = True, width: int | None = None) -> Text:
    """``ttbar  ▶ SUBMITTED  [###==-    ]  30%  finished 3, running 2, cooloff 1 (next retry 0:42) of 10``;
    without ``countdowns`` the line changes only when the jobs do.  Wider than ``width`` (a
    terminal's), it takes a shorter bar and glyphs for the states (``✔3 ▶2 ◷1 of 10``), and what
    still does not fit goes on to the next line rather than being cut."""
    line = _line(snapshot, now, countdowns, BAR_WIDTH, words=True)
    if width is not None and line.cell_len > width:
        line = _line(snapshot, now, countdowns, SHORT_BAR, words=False)
        line.no_wrap = False
    return line


def _line(snapshot: TaskSnapshot, now: float, countdowns: bool, bar: int, words: bool) -> Text:
    jobs = snapshot.view.jobs
    counts = state_counts(jobs, snapshot.view.automatic is not None)
    line = Text(f"{snapshot.task.request_name}  ", no_wrap=True)
    line.append(task_status(snapshot.task.status, DEFAULT_PALETTE))
    line.append("  ")
    line.append(progress_bar(counts, len(jobs), bar, DEFAULT_PALETTE))
    if not words:
        line.append("  ")
        line.append(glyph_counts(counts, DEFAULT_PALETTE))
        line.append(f" of {len(jobs)}" if jobs else "no jobs yet")
        return _flags(line, snapshot)
    parts = []
    for state in NODE_STATES:
        if counts.get(state):
            part = f"{state} {counts[state]}"
            if state == "cooloff" and countdowns:
                deadlines = [j.cooloff_until for j in jobs if j.state == "cooloff" and j.cooloff_until is not None]
                if deadlines:
                    part += f" (next retry {countdown(min(deadlines) - now)})"
            parts.append(part)
    line.append(f"  {', '.join(parts) or 'no jobs yet'} of {len(jobs)}")
    return _flags(line, snapshot)


def _flags(line: Text, snapshot: TaskSnapshot) -> Text:
    """What holds the whole task up: its DAG halted, or its DAGMan not started and why."""
    if snapshot.halted:
        line.append("  HALTED")
    if snapshot.view.dag_waiting:
        line.append(f"  {snapshot.view.dag_waiting}", style="yellow")
        line.no_wrap = False  # a reason cut at the terminal's edge says nothing
    return line


def follow(engine: Backend, name: str, interval: float, crabtui: str = "crabtui") -> None:
    """Print TASK's progress until it ends; exit 0 if it COMPLETED, 1 otherwise, naming the
    commands (``crabtui`` with this one's state directory and backend) that say why."""
    console = Console(highlight=False)
    try:
        engine.start()
    except ScheddError as e:
        fail(str(e))
    last = ""
    live = Live(console=console, auto_refresh=False, transient=False) if console.is_terminal else None
    if live is not None:
        live.start()
    try:
        while True:
            now = time.time()
            try:
                snapshot = engine.task(name, now)
                line = progress_line(snapshot, now, countdowns=live is not None,
                                     width=console.width if live is not None else None)
            except TaskError as e:
                fail(str(e))
            except ScheddError as e:
                snapshot = None
                line = Text(f"{name}: the engine is not answering ({e}); asking again", style="yellow")
            if live is not None:
                live.update(line, refresh=True)
            elif line.plain != last:
                console.print(line, soft_wrap=True)
                last = line.plain
            if snapshot is not None and is_done(snapshot.task):
                break
            time.sleep(interval)
    finally:
        if live is not None:
            live.stop()
    if snapshot.task.status != COMPLETED:
        resubmit = (f", `{crabtui} task resubmit {name}` runs its failed jobs again"
                    if snapshot.task.status in RESUBMITTABLE else
                    f", `{crabtui} task resubmit {name}` submits it anew" if snapshot.task.status == SUBMITFAILED else "")
        fail(f"task {name} ended {snapshot.task.status}: `{crabtui} task status {name} --long` says why{resubmit}")
