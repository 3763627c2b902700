"""crabtui's Textual app: routing between the screens and the actions every screen shares.

The app opens on the task list of one state directory (``CrabApp(Backend(StateDir(path)))``,
which is also how a demo opens it on the state it prepared), optionally straight on one task.
Engine calls never run on the UI thread: screens read snapshots in thread workers
(:mod:`crabtui.screens.polling`), and actions run in thread workers too, reporting back as
notifications.  ``clock`` is what "now" means for countdowns and ages (fixed in screenshots).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import Theme

from crabtui.keymap import keymap_path, load_keymap
from crabtui.screens.dialogs import ConfirmScreen, ResubmitScreen
from crabtui.screens.help import HelpScreen
from crabtui.screens.polling import PollingScreen, describe_error
from crabtui.screens.task import TaskScreen
from crabtui.screens.tasks import TasksScreen
from crabtui.snapshots import DEFAULT_ENDED_FOR, Backend
from crabtui.widgets.live_table import LiveTable
from crabtui.widgets.states import Palette
from engine.crab.taskworker.taskdb import SUBMITFAILED, Task, resubmit_refusal, resubmittable

DEFAULT_INTERVAL = 1.0
THEMES = ("textual-dark", "textual-light")
ANSI_THEMES = ("ansi-dark", "ansi-light")  # a terminal of 16 colours (TERM=xterm): its own colours, exactly
FULL_COLLECTION_EVERY = 1000  # middle-generation collections between full ones (Python's default: 10)


class CrabApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "crabtui"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit crabtui (the tasks keep running)"),
        Binding("question_mark", "help", "Help", id="help", tooltip="Every key of this screen, and the legend"),
        Binding("p", "toggle_pause", "Pause", id="pause", tooltip="Pause or resume the refresh"),
        Binding("t", "toggle_theme", "Theme", id="theme", show=False, tooltip="Switch between dark and light"),
    ]

    def __init__(self, backend: Backend, *, interval: float = DEFAULT_INTERVAL,
                 clock: Callable[[], float] = time.time, task: str | None = None,
                 ended_for: float | None = DEFAULT_ENDED_FOR) -> None:
        super().__init__()
        self.backend = backend
        self.ended_for = ended_for  # how long the DAG list keeps DAGs that left the queue (None: not at all)
        self.interval = interval
        self.clock = clock
        self.first_task = task
        self.paused = False
        self.palette = Palette.from_variables({})
        self._gc_thresholds: tuple[int, int, int] | None = None

    @property
    def themes(self) -> tuple[str, str]:
        """The dark and light themes: truecolor and 256-colour themes turn into the nearest of 16
        colours on a terminal that has only those, which mixed up error and warning and put the
        cursor's white on cyan; the ANSI themes use the terminal's red, yellow and reverse video."""
        sixteen = self.console.color_system in ("standard", "windows")
        return ANSI_THEMES if sixteen and not self.no_color else THEMES  # NO_COLOR greys a 24-bit theme

    def on_mount(self) -> None:
        if self.theme not in self.themes:
            self.theme = self.themes[0]
        self.palette = Palette.from_variables(self.theme_variables, no_color=self.no_color)
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.push_screen(TasksScreen())
        if self.first_task is not None:
            self.push_screen(TaskScreen(self.first_task))

    def on_ready(self) -> None:
        """Python's full collections walk every object: with a task of 10,000 jobs they took
        100-300 ms, every few seconds, and froze the UI.  What the app keeps for its whole run
        (Textual's DOM and styles, the modules) is frozen out of them, and they come a hundred
        times less often; the refreshes' garbage has no cycles, so it is freed all the same."""
        self._gc_thresholds = gc.get_threshold()
        gc.freeze()
        young, middle, _ = self._gc_thresholds
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)

    def on_unmount(self) -> None:
        if self._gc_thresholds is not None:
            gc.unfreeze()
            gc.set_threshold(*self._gc_thresholds)

    def _theme_changed(self, theme: Theme) -> None:
        self.palette = Palette.from_variables(self.theme_variables, no_color=self.no_color)
        for screen in self._polling_screens():
            screen.set_palette(self.palette)
        for bar in self.screen.query("StatusBar"):
            bar.refresh()

    def _polling_screens(self) -> Iterable[PollingScreen]:
        return (s for s in self.screen_stack if isinstance(s, PollingScreen))

    # -------------------------------------------------------------- app-wide keys

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        for screen in self._polling_screens():
            screen.set_paused(self.paused)

    def action_toggle_theme(self) -> None:
        self.theme = self.themes[1] if self.current_theme.dark else self.themes[0]

    def action_help(self) -> None:
        if isinstance(self.screen, PollingScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette lists every action the screen offers, besides Textual's own."""
        yield from super().get_system_commands(screen)
        seen = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if not binding.description or not active.enabled or binding.action in seen or binding.action == "quit":
                continue
            seen.add(binding.action)
            yield SystemCommand(binding.description, binding.tooltip or f"key {self.get_key_display(binding)}",
                                partial(self.run_action, binding.action, active.node))

    # -------------------------------------------------------------- shared actions

    def confirm(self, question: str, details: str, yes: str, then: Callable[[], Any]) -> None:
        """Ask first (No is the default); ``then`` runs only on a Yes."""
        def answered(yes: bool | None) -> None:
            if yes:
                then()

        self.push_screen(ConfirmScreen(question, details, yes=yes), answered)

    def act(self, what: str, call: Callable[..., Any], *args: Any, done: Callable[[Any], str]) -> None:
        """Run an engine action in a thread; its outcome (``done(result)``) or its error becomes a
        notification, and the screen refreshes."""
        def run() -> None:
            try:
                result = call(*args)
            except Exception as e:  # every refusal the engine explains, shown as it says it
                self.notify(describe_error(e), title=f"{what} failed", severity="error", timeout=10)
                return
            self.notify(done(result), title=what)
            self.call_from_thread(self._refresh_screen, *args)

        self.run_worker(run, thread=True, group="action", exit_on_error=False)

    def _refresh_screen(self, *acted: Any) -> None:
        """As ctrl+r does, unless the screen knows better (:meth:`PollingScreen.refresh_after_action`):
        the DAG list asks the schedd again rather than wait for its next query (a removed DAG on a
        pool, whose logs are not here, read 'running' for up to 30 s)."""
        if isinstance(self.screen, PollingScreen):
            self.screen.refresh_after_action(*acted)

    def confirm_kill(self, tasks: list[Task], details: str) -> None:
        names = "\n".join(t.name for t in tasks)
        question = f"Kill {tasks[0].request_name}?" if len(tasks) == 1 else f"Kill {len(tasks)} tasks?"
        text = (f"{names}\n{details}\n\nEvery job of the task is removed and the task ends KILLED. "
                "A killed task cannot be resubmitted (crab kill is final).")

        def kill() -> None:
            for task in tasks:
                self.act("Kill", self.backend.kill, task.name,
                         done=lambda t: f"Kill request for {t.request_name} sent; it ends KILLED shortly.")

        self.confirm(question, text, "Kill", kill)

    def resubmit(self, task: Task, failed: str, jobids: str = "", blacklist: str = "",
                 sent: Callable[[], None] | None = None) -> None:
        """CRAB's resubmit form for ``task``; ``failed`` names its failed jobs, ``jobids`` and
        ``blacklist`` fill in the job ids and the site blacklist; ``sent`` is called once the request
        is accepted.  A task CRAB would refuse (killed, completed) is refused at once, in one line,
        as K refuses a kill, not after the form."""
        if not resubmittable(task):
            self.notify(f"Nothing to resubmit: {resubmit_refusal(task)}", severity="warning")
            return
        if task.status == SUBMITFAILED:  # no jobs to choose: crab resubmit submits the task anew
            self.confirm(f"Submit {task.request_name} again?",
                         f"{task.name}\n{task.message}\n\nThe task failed to submit; a resubmit submits it anew, "
                         "as it was configured (as crab resubmit does).", "Resubmit",
                         lambda: self.act("Resubmit", self.backend.resubmit, task.name, {},
                                          done=lambda t: f"Resubmit request for {t.request_name} sent; it is "
                                                         "submitted anew."))
            return

        def submitted(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:  # the form sent it, and it was accepted
                self.notify(f"Resubmit request for {task.request_name} sent.", title="Resubmit")
                if sent is not None:
                    sent()
                self._refresh_screen()

        self.push_screen(ResubmitScreen(task.request_name, failed, jobids, blacklist,
                                        send=partial(self.backend.resubmit, task.name)), submitted)

    def open_dag(self, cluster: int) -> None:
        """The screen of DAG ``cluster`` (a node's sub-DAG opens it from the node's screen)."""
        from crabtui.screens.dag import DagScreen

        self.push_screen(DagScreen(cluster))

    def copy(self, text: str) -> None:
        """To the clipboard of the terminal (OSC 52), and say what was copied."""
        self.copy_to_clipboard(text)
        self.notify(text, title="Copied")


def binding_ids() -> set[str]:
    """The ids of every binding a keymap file may remap."""
    from crabtui.screens.batch import BatchScreen
    from crabtui.screens.batches import BatchesScreen
    from crabtui.screens.condor_job import CondorJobScreen
    from crabtui.screens.dag import DagScreen
    from crabtui.screens.dags import DagsScreen
    from crabtui.screens.held import HeldScreen
    from crabtui.screens.job import JobScreen
    from crabtui.screens.listing import ListScreen
    from crabtui.screens.node import NodeScreen
    from crabtui.widgets.log_view import LogView

    return {b.id for cls in (CrabApp, TasksScreen, TaskScreen, JobScreen, DagsScreen, DagScreen, NodeScreen, HeldScreen,
                             ListScreen, PollingScreen, LiveTable, LogView, BatchesScreen, BatchScreen, CondorJobScreen)
            for b in cls.BINDINGS if isinstance(b, Binding) and b.id}


def binding_screens() -> dict[str, dict[str, str]]:
    """Each screen's bindings with the app's, as a keymap file may clash with them: binding id (an
    unnamed binding's action) -> its keys, by screen ("task" for the task screen)."""
    from crabtui.screens.batch import BatchScreen
    from crabtui.screens.batches import BatchesScreen
    from crabtui.screens.condor_job import CondorJobScreen
    from crabtui.screens.dag import DagScreen
    from crabtui.screens.dags import DagsScreen
    from crabtui.screens.held import HeldScreen
    from crabtui.screens.job import JobScreen
    from crabtui.screens.listing import ListScreen
    from crabtui.screens.node import NodeScreen

    def bindings(cls: type) -> dict[str, str]:
        return {b.id or b.action: b.key for base in reversed(cls.__mro__) for b in base.__dict__.get("BINDINGS", ())
                if isinstance(b, Binding)}

    app = bindings(CrabApp)
    return {cls.__name__.removesuffix("Screen").lower(): {**app, **bindings(cls)}
            for cls in (TasksScreen, TaskScreen, JobScreen, DagsScreen, DagScreen, NodeScreen, HeldScreen, ListScreen,
                        BatchesScreen, BatchScreen, CondorJobScreen)}


def run(backend: Backend, *, interval: float = DEFAULT_INTERVAL, task: str | None = None,
        ended_for: float | None = DEFAULT_ENDED_FOR) -> None:
    """Open the UI, with the user's keymap (KeymapError names what is wrong in it)."""
    keymap = load_keymap(keymap_path(), binding_ids(), binding_screens())
    app = CrabApp(backend, interval=interval, task=task, ended_for=ended_for)
    app.set_keymap(keymap)
    app.run()
