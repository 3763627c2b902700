"""One job: every attempt with its site, times, memory, exit code and what the retry policy did
next; the job's ClassAd; and the stdout, stderr and framework job report of the attempt under the
cursor (crab-spec §5's drilldown)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.screens.polling import PollingScreen
from crabtui.snapshots import JobSnapshot
from crabtui.task_status import shown_state, to_hms
from crabtui.widgets import states
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable
from crabtui.widgets.log_view import LogView
from crabtui.widgets.states import Palette
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed
from engine.crab.client.status import JobView

ACTION_LOOK = {"ok": ("✔ ok", "success"), "retry": ("⟳ retry", "warning"), "fatal": ("✖ fatal", "error"),
               "abort_dag": ("✖ abort DAG", "error"), None: ("▶ open", "primary")}
TEXT_TABS = ("classad", "stdout", "stderr", "report", "events", "why")
TITLES = ("ClassAd", "Stdout", "Stderr", "Job report", "User log", "Why")
FOLLOWED = ("stdout", "stderr", "events")  # text that grows at its end: shown from there
WRAPPED = ("why",)  # prose: wrapped to the view, as a terminal wraps it


class JobScreen(PollingScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back", tooltip="Back to the task"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", tooltip="Copy the HTCondor job id (cluster.proc)"),
        Binding("C", "copy('path')", "Copy path", id="copy-path", tooltip="Copy the path of the file shown"),
    ]

    def __init__(self, task: str, job_id: str) -> None:
        super().__init__()
        self.task_name = task
        self.job_id = job_id
        self.attempt: int | None = None  # None: the latest
        self.snapshot: JobSnapshot | None = None
        self._texts: dict[str, str | None] = {}

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Tabbed(initial="attempts"):
            with Pane("Attempts", id="attempts"):
                yield LiveTable(self._columns(), markable=False, id="attempt-table")
            for tab, title in zip(TEXT_TABS, TITLES):
                with Pane(title, id=tab):
                    yield LogView(id=f"{tab}-text", follow=tab in FOLLOWED, wrap=tab in WRAPPED)
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = f"crabtui › {self.task_name.split('_crab_')[-1]} › job {self.job_id}"
        super().on_mount()

    def _columns(self) -> list[Column]:
        def action(value: str | None, a: dict, palette: Palette) -> Text:
            word, role = ACTION_LOOK.get(value, (str(value), "plain"))
            return Text(word, style=palette.style(role), end="")

        return [
            Column("n", "#", lambda a: a["n"], right=True),
            Column("site", "Site", lambda a: a.get("site") or ""),
            Column("start", "Started", lambda a: a.get("start"), _clock),
            Column("end", "Ended", lambda a: a.get("end"), _clock),
            Column("runtime", "Runtime", lambda a: a.get("runtime_s"),
                   lambda v, a, p: Text("" if v is None else to_hms(v), end=""), right=True),
            Column("memory", "Mem (MB)", lambda a: None if a.get("memory_mb") is None else int(a["memory_mb"]),
                   right=True),
            Column("request", "Req (MB)", lambda a: a.get("request_memory"), right=True),
            Column("exit", "Exit", lambda a: a.get("exit_code"), right=True),
            Column("action", "Then", lambda a: a.get("action"), action),
            Column("reason", "Why", lambda a: (a.get("reason") or "").replace("\n", " ")),
        ]

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> JobSnapshot:
        return self.app.backend.job(self.task_name, self.job_id, now, self.attempt)

    def show(self, snapshot: JobSnapshot) -> None:
        self.snapshot = snapshot
        job = snapshot.job
        palette = self.app.palette
        if job is None:
            self.update_static("summary", f"Task {snapshot.task.name} has no job {self.job_id}.")
            return
        line = Text(f"Job {job.id}  ", no_wrap=True)
        line.append(states.node_state(shown_state(job, snapshot.automatic), palette))
        line.append(f"  retries {job.retries}  site {job.site or '-'}")
        if job.exit_code is not None:
            line.append(f"  last exit code {job.exit_code}")
        ran = any(a.get("start") or a.get("action") for a in job.attempts)  # an HTCondor job of it existed
        where = {"queue": "in the queue", "history": "from the history",
                 "": "no longer in the history" if ran else "not submitted yet"}[snapshot.ad_where]
        second = Text(f"ClassAd {where}; files of attempt {snapshot.attempt}", style="dim", no_wrap=True)
        self.update_static("summary", Text("\n").join([line, second]))
        table = self.query_one("#attempt-table", LiveTable)
        first = not table.items
        table.set_items({str(i): {**a, "n": i} for i, a in enumerate(_with_open_attempt(job, snapshot.started))})
        if first and table.row_count:
            table.move_cursor(row=table.row_count - 1)  # the latest attempt, whose files are shown
        self._set_text("classad", snapshot.ad_text or (
            "The schedd's history no longer holds this job's ClassAd: its history files rotate "
            "(MAX_HISTORY_LOG, MAX_HISTORY_ROTATIONS). The attempts, report and user log keep what it did."
            if ran else "No HTCondor job has run for this job yet."))
        missing = f"(no file yet: {{}} of attempt {snapshot.attempt})"
        # the attempt shown has ended once a later one exists or its HTCondor job has left the queue
        ended = snapshot.ad_where != "queue" or snapshot.attempt < len(job.attempts) - 1
        empty = f"(empty: attempt {snapshot.attempt} wrote nothing to {{}}{'' if ended else ' so far'})"
        for tab, text, path in (("stdout", snapshot.stdout, snapshot.files.stdout),
                                ("stderr", snapshot.stderr, snapshot.files.stderr)):
            self._set_text(tab, missing.format(path) if text is None else text or empty.format(path))
        self._set_text("report", snapshot.report if snapshot.report is not None else
                       missing.format(snapshot.files.report))
        self._set_text("events", snapshot.user_log if snapshot.user_log is not None else
                       f"(no user log yet: {snapshot.files.user_log})")
        self._set_text("why", snapshot.why or _why_not_waiting(job.state))
        self._update_info()

    def _set_text(self, tab: str, text: str) -> None:
        """Replace a text tab's content, only if it changed (keeps the reader's scroll position)."""
        if self._texts.get(tab) == text:
            return
        self._texts[tab] = text
        log = self.query_one(f"#{tab}-text", LogView)
        log.show_text(text)
        if tab not in FOLLOWED:
            log.scroll_home(animate=False)

    def set_palette(self, palette: Palette) -> None:
        self.query_one("#attempt-table", LiveTable).set_palette(palette)
        if self.snapshot is not None:
            self.show(self.snapshot)

    def _update_info(self) -> None:
        tab = self.query_one(Tabbed).active
        snapshot = self.snapshot
        if snapshot is None:
            return
        paths = self._paths()
        if tab == "attempts":
            table = self.query_one("#attempt-table", LiveTable)  # its count, sort and columns off screen
            text = f"{table.describe('attempts')} · tabs 3-5 show the cursor's attempt"
        elif tab == "classad":
            text = "The job's ClassAd (condor_q -l / condor_history -l)"
        elif tab == "why":
            text = "Why the job waits: its hold reason, or its matchmaking (condor_q -better-analyze)"
        else:
            text = self.query_one(f"#{tab}-text", LogView).describe(paths[tab])
        self.update_static("info", Text(text, no_wrap=True, overflow="ellipsis"))

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        event.pane.query_one("LiveTable, LogView").focus()
        self._update_info()

    def on_line_table_row_highlighted(self, event: LiveTable.RowHighlighted) -> None:
        key = event.table.cursor_key  # where the cursor is now, not where an older event left it
        if key is None or self.snapshot is None or self.snapshot.job is None:
            return
        chosen = int(key)
        latest = len(self.snapshot.job.attempts) - 1
        wanted = None if chosen == latest else chosen
        if wanted != self.attempt:
            self.attempt = wanted
            self.refresh_now(even_if_paused=True)

    # -------------------------------------------------------------- actions

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_copy(self, what: str) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        if what == "id":
            self.app.copy(snapshot.condor_id or f"{snapshot.task.name} {self.job_id}")
            return
        self.app.copy(self._paths().get(self.query_one(Tabbed).active, snapshot.task.task_dir))

    def _paths(self) -> dict[str, str]:
        files = self.snapshot.files
        return {"stdout": files.stdout, "stderr": files.stderr, "report": files.report, "events": files.user_log}


def _with_open_attempt(job: JobView, started: float | None) -> list[dict]:
    """The job's attempts, the one still open with where and how long it runs now, as the Jobs tab
    and ``task status --long`` show it, and since when (``started``: its job's JobCurrentStartDate
    in the queue): PostJob records an attempt's site, times and figures only when it ends, and the
    row of a running job read blank beside a header naming its site."""
    attempts = list(job.attempts)
    if not attempts or attempts[-1].get("action") is not None:
        return attempts
    if started and attempts[-1].get("start") is None:
        attempts[-1] = {**attempts[-1], "start": started}
    open_attempt = attempts[-1]
    sited = sum(1 for a in attempts[:-1] if a.get("site"))
    if len(job.site_history) > sited and not open_attempt.get("site"):  # the queue's site is this attempt's
        attempts[-1] = {**open_attempt, "site": job.site,
                        "runtime_s": open_attempt.get("runtime_s") if open_attempt.get("runtime_s") is not None
                        else job.runtime_s,
                        "memory_mb": open_attempt.get("memory_mb") if open_attempt.get("memory_mb") is not None
                        else job.memory_mb}
    return attempts


def _why_not_waiting(state: str) -> str:
    return (f"The job is {state}: it waits for nothing in the queue (a held job would show its hold "
            "reason here, an idle one why it does or does not match a slot).")


def _clock(value: float | None, item: object, palette: Palette) -> Text:
    return Text("" if value is None else time.strftime("%m/%d %H:%M:%S", time.localtime(value)), end="")

