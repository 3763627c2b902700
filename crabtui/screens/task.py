"""One task: its jobs (``crab status --long``), its ``condor_q -dag`` tree, its sites, its errors
by exit code and its DAG's log, live; and the actions on them."""

from __future__ import annotations

from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Log, Static

from crabtui.screens.polling import PollingScreen, log_info
from crabtui.snapshots import NODE_STATES, ErrorGroup, SiteRow, TaskSnapshot, error_groups, site_rows, state_counts
from crabtui.task_status import POSTPROCESSING, compress_ids, countdown, exit_code_meaning, shown_state, to_hms
from crabtui.widgets import states
from crabtui.widgets.dag_tree import DagTree
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable, RowValues
from crabtui.widgets.states import Palette
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed
from engine.crab.client.status import JobView, job_sort_key
from engine.crab.taskworker.taskdb import kill_refusal, killable

LOG_LINES = 5000
MAX_NAMED = 12  # jobs a dialog lists by name before "and N more"


class TaskRows(NamedTuple):
    """A snapshot and what the screen shows of it, derived in the fetch's thread: with 10,000 jobs,
    deriving them on the UI thread took most of a refresh's time there."""

    snapshot: TaskSnapshot
    jobs: dict[str, JobView]
    values: dict[str, tuple]  # the job table's row_values
    counts: dict[str, int]  # jobs per shown state
    sites: dict[str, SiteRow]
    errors: dict[str, ErrorGroup]  # by exit code


class TaskScreen(PollingScreen):
    BINDINGS = [
        Binding("enter", "open", "Open", id="open-job",
                tooltip="Open the job: its attempts, ClassAd, output and report (on Errors: the jobs with that exit code)"),
        Binding("h", "hold", "Hold", id="hold", tooltip="Hold the marked jobs (or the one under the cursor)"),
        Binding("r", "release", "Release", id="release", tooltip="Release the marked held jobs"),
        Binding("H", "halt", "Halt/unhalt", id="halt", tooltip="Halt the DAG (no new jobs start), or resume it"),
        Binding("K", "kill", "Kill", id="kill", tooltip="Kill the task: remove its DAG and jobs (crab kill)"),
        Binding("R", "resubmit", "Resubmit", id="resubmit", tooltip="Resubmit failed jobs, with new options (crab resubmit)"),
        Binding("slash", "filter", "Filter", id="filter", tooltip="Filter the table"),
        Binding("f", "find", "Find", id="find", tooltip="Find in the table: move to the next row that matches"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the job id(s)"),
        Binding("C", "copy('dir')", "Copy dir", id="copy-dir", show=False, tooltip="Copy the task's directory"),
        Binding("escape", "back", "Back", id="back", tooltip="Clear the marks, then the filter, then go back to the tasks"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.task_name = name
        self.snapshot: TaskSnapshot | None = None
        self.counts: dict[str, int] = {}  # the snapshot's jobs per shown state
        self.automatic = False  # the task splits automatically: its jobs' states are shown as CRAB names them
        self.job_columns = self._job_columns()
        self._job_values = RowValues(self.job_columns, clocked=lambda j: j.state == "cooloff")

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Tabbed(initial="jobs"):
            with Pane("Jobs", id="jobs"):
                yield LiveTable(self.job_columns, fixed_columns=2, id="job-table")
            with Pane("DAG", id="dag"):
                yield DagTree(id="dag-tree")
            with Pane("Sites", id="sites"):
                yield LiveTable(self._site_columns(), id="site-table")
            with Pane("Errors", id="errors"):
                yield LiveTable(self._error_columns(), id="error-table")
            with Pane("Log", id="log"):
                yield Log(max_lines=LOG_LINES, id="dagman-out")
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = f"crabtui › {self.task_name}"
        super().on_mount()

    def on_unmount(self) -> None:
        if self.snapshot is not None:
            self.app.backend.forget_log(self.snapshot.task.name)

    # -------------------------------------------------------------- columns

    def _job_columns(self) -> list[Column]:
        def state(j: JobView) -> str:
            if j.state == "cooloff" and j.cooloff_until is not None:
                return f"cooloff {countdown(j.cooloff_until - self.app.clock())}"
            return shown_state(j, self.automatic)

        def render_state(value: str, j: JobView, palette: Palette) -> Text:
            shown = shown_state(j, self.automatic)
            return states.node_state(shown, palette, value[len(shown):])

        def exit_code(j: JobView) -> int | None:
            return 0 if j.state == "finished" else j.exit_code

        return [
            Column("job", "Job", lambda j: j.id, width=5, right=True, order=job_sort_key),
            Column("state", "State", state, render_state, width=15, live=True, order=_state_order),
            Column("site", "Most Recent Site", lambda j: j.site, width=16),
            Column("exit", "Exit", exit_code, _exit_code, width=8, right=True),
            Column("runtime", "Runtime", lambda j: j.runtime_s, _hms, width=8, right=True),
            Column("memory", "Mem (MB)", lambda j: None if j.memory_mb is None else int(j.memory_mb), width=8,
                   right=True),
            Column("cpu", "CPU %", lambda j: None if j.cpu_pct is None else int(j.cpu_pct), width=5, right=True),
            Column("retries", "Retries", lambda j: j.retries, width=7, right=True),
            Column("restarts", "Restarts", lambda j: j.restarts, width=8, right=True),
            Column("waste", "Waste", lambda j: j.waste_s, _hms, width=8, right=True),
            Column("error", "Last error", lambda j: (j.error or "").split("\n")[0] if exit_code(j) else "", width=60),
        ]

    def _site_columns(self) -> list[Column]:
        def rate(r: SiteRow) -> int | None:
            return None if r.success_rate is None else round(r.success_rate * 100)

        def blacklisted(value: str, r: SiteRow, palette: Palette) -> Text:
            if r.usable is None:
                return Text("")
            if not r.usable:
                return Text(f"⊘ {value}", style=palette.style("error"), end="")
            return Text("✔ whitelisted" if r.whitelisted else "✔ no", style=palette.style("success"), end="")

        return [
            Column("site", "Site", lambda r: r.site),
            Column("running", "Running", lambda r: r.running, right=True),
            Column("succeeded", "Succeeded", lambda r: r.succeeded, right=True),
            Column("failed", "Failed", lambda r: r.failed, right=True),
            Column("rate", "Success %", rate, right=True),
            Column("blacklisted", "Blacklisted", lambda r: r.label, blacklisted),
            Column("why", "Why", lambda r: r.why),
        ]

    def _error_columns(self) -> list[Column]:
        return [
            Column("code", "Exit code", lambda g: g.exit_code, right=True),
            Column("failed", "Failed", lambda g: len(g.failed), right=True),
            Column("retrying", "To retry", lambda g: len(g.retrying), right=True),
            Column("meaning", "What the retry policy makes of it", lambda g: _meaning(g.exit_code)),
            Column("jobs", "Jobs", lambda g: compress_ids(g.failed + g.retrying)),
        ]

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> TaskRows:
        snapshot = self.app.backend.task(self.task_name, now)
        self.automatic = snapshot.view.automatic is not None  # a task's splitting never changes
        view = snapshot.view
        jobs = {j.id: j for j in view.jobs}
        return TaskRows(snapshot, jobs, self._job_values(jobs), state_counts(view.jobs, self.automatic),
                        {r.site: r for r in site_rows(view.jobs, view.sites)},
                        {str(g.exit_code): g for g in error_groups(view.jobs)})

    def show(self, fetched: TaskRows) -> None:
        snapshot = fetched.snapshot
        first = self.snapshot is None
        self.snapshot = snapshot
        self.counts = fetched.counts
        if first:  # the task's actions are no longer greyed out: show it in the footer at once
            self.refresh_bindings()
        with self.app.batch_update():
            self._show_summary()
            self.query_one("#job-table", LiveTable).set_items(fetched.jobs, fetched.values)
            self._show_tree()
            self.query_one("#site-table", LiveTable).set_items(fetched.sites)
            self.query_one("#error-table", LiveTable).set_items(fetched.errors)
            if snapshot.log_lines:
                self.query_one(Log).write_lines(snapshot.log_lines)
            self._update_info()

    def _show_summary(self) -> None:
        snapshot, palette = self.snapshot, self.app.palette
        task = snapshot.task
        first = states.task_status(task.status, palette)
        first.append(f"  scheduler: {snapshot.scheduler_status or 'not submitted yet'}")
        if task.dagman_id is not None:
            first.append(f"  DAGMan: {task.dagman_id}")
        if snapshot.halted:
            first.append("  ")
            first.append(" HALTED ", style=f"reverse {palette.style('warning')}")
        if task.message:
            first.append(f"  {task.message}", style="dim")
        second = states.progress_bar(self.counts, len(snapshot.view.jobs), 20, palette)
        second.append("  ")
        second.append(states.state_counts(self.counts, palette))
        second.append(f"  of {len(snapshot.view.jobs)} jobs")
        self.update_static("summary", Text("\n").join([first, second]))

    def _show_tree(self) -> None:
        snapshot = self.snapshot
        if snapshot.task.dagman_id is None:
            empty = "The task has no DAG on the scheduler yet."
        else:
            empty = f"DAGMan job {snapshot.task.dagman_id} is not in the queue: the DAG has ended."
        self.query_one(DagTree).update_queue(snapshot.queue, snapshot.at, self.app.palette, empty)

    def tick(self) -> None:
        self.query_one("#job-table", LiveTable).tick()

    def set_palette(self, palette: Palette) -> None:
        for table in self.query(LiveTable):
            table.set_palette(palette)
        if self.snapshot is not None:
            self._show_summary()
            self._show_tree()

    # -------------------------------------------------------------- the info line

    def _active_table(self) -> LiveTable | None:
        tab = self.query_one(Tabbed).active
        tables = {"jobs": "#job-table", "sites": "#site-table", "errors": "#error-table"}
        return self.query_one(tables[tab], LiveTable) if tab in tables else None

    def _update_info(self) -> None:
        table = self._active_table()
        tab = self.query_one(Tabbed).active
        if table is not None:
            text = table.describe({"jobs": "jobs", "sites": "sites", "errors": "exit codes"}[tab])
        elif tab == "log":
            log = self.query_one(Log)
            text = log_info(log, "RunJobs.dag.dagman.out")
        else:
            text = "condor_q -dag: the task's DAGMan jobs and their node jobs in the queue"
        self.update_static("info", text)

    def on_live_table_view_changed(self, event: LiveTable.ViewChanged) -> None:
        self._update_info()

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        table = self._active_table()
        (table or event.pane.query_one("DagTree, Log")).focus()
        self._update_info()

    # -------------------------------------------------------------- actions

    @property
    def jobs_table(self) -> LiveTable:
        return self.query_one("#job-table", LiveTable)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("hold", "release", "halt", "kill", "resubmit", "open", "copy") and self.snapshot is None:
            return None  # greyed out until the task has been read
        if action == "open" and self.query_one(Tabbed).active not in ("jobs", "errors"):
            return None  # nothing to open on this tab
        return True

    def on_line_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        """The job under the cursor; on the Errors tab, the jobs that failed with the exit code there."""
        from crabtui.screens.job import JobScreen

        tab = self.query_one(Tabbed).active
        if tab == "jobs" and self.jobs_table.cursor_key is not None:
            self.app.push_screen(JobScreen(self.snapshot.task.name, self.jobs_table.cursor_key))
        elif tab == "errors" and (code := self.query_one("#error-table", LiveTable).cursor_key) is not None:
            self.query_one(Tabbed).active = "jobs"
            self.jobs_table.filter = f"exit:={code}"

    def _selected_jobs(self) -> list[JobView]:
        table = self.jobs_table
        return [table.items[k] for k in table.selection()]

    def action_hold(self) -> None:
        self._hold_or_release(hold=True)

    def action_release(self) -> None:
        self._hold_or_release(hold=False)

    def _hold_or_release(self, hold: bool) -> None:
        snapshot = self.snapshot
        chosen = self._selected_jobs()
        if hold:
            targets = [j for j in chosen if j.id in snapshot.node_jobs and j.state not in ("held", "killing")]
        else:
            targets = [j for j in chosen if j.id in snapshot.node_jobs and j.state == "held"]
        verb = "hold" if hold else "release"
        if not targets:
            why = ("only jobs in the queue (idle, running) can be held" if hold else "only held jobs can be released")
            self.app.notify(f"Nothing to {verb}: {why}.", severity="warning")
            return
        ids = [snapshot.node_jobs[j.id] for j in targets]
        lines = [f"job {j.id} ({snapshot.node_jobs[j.id]}, {j.state}{' at ' + j.site if j.site else ''})"
                 for j in targets]
        left = [f"{j.id} ({j.state})" for j in chosen if j not in targets]
        if hold:
            effect = ("A held job stops where it runs and keeps its place in the queue; DAGMan waits for it. "
                      "Release it with r.")
        else:
            effect = "Released jobs go back to idle and run again from the start."
        details = _named(lines) + (f"\nLeft alone: {', '.join(left)}" if left else "") + f"\n\n{effect}"
        self.app.confirm(
            f"{verb.title()} {len(ids)} job(s) of {snapshot.task.request_name}?", details, verb.title(),
            lambda: self.app.act(verb.title(), self.app.backend.hold if hold else self.app.backend.release, ids,
                                 done=lambda r: _act_result(verb, r)))

    def action_halt(self) -> None:
        task = self.snapshot.task
        backend = self.app.backend
        if self.snapshot.halted:
            self.app.act("Unhalt", backend.unhalt, task.name,
                         done=lambda ok: f"Resumed the DAG of {task.request_name}." if ok else "The DAG was not halted.")
            return
        details = (f"DAG {task.task_dir}/RunJobs.dag (DAGMan job {task.dagman_id})\n\n"
                   "No new job starts and no PRE script runs; queued and running jobs and their POST scripts "
                   "finish. Then DAGMan writes a rescue DAG and exits (the task FAILS; resubmit reruns what did "
                   "not finish). Until then, H again resumes the DAG.")
        self.app.confirm(f"Halt the DAG of {task.request_name}?", details, "Halt",
                         lambda: self.app.act("Halt", backend.halt, task.name, done=lambda ok: (
                             "Halted the DAG." if ok else "The DAG was halted already.")))

    def action_kill(self) -> None:
        snapshot = self.snapshot
        if not killable(snapshot.task):
            self.app.notify(f"Nothing to kill: {kill_refusal(snapshot.task)}.", severity="warning")
            return
        queued = [ad for ad in snapshot.queue if "CRAB_Id" in ad]
        details = [f"DAGMan job {snapshot.task.dagman_id} and its {len(queued)} node job(s) in the queue"
                   if snapshot.task.dagman_id is not None else "The task has no DAG yet"]
        self.app.confirm_kill([snapshot.task], "\n".join(details))

    def action_resubmit(self) -> None:
        def failed(jobs: list[JobView]) -> list[str]:  # an automatic task's tail jobs only
            return [j.id for j in jobs if shown_state(j, self.automatic) == "failed"]

        failed_ids = failed(self.snapshot.view.jobs)
        marked = failed(self._selected_jobs()) if self.jobs_table.marked else []
        self.app.resubmit(self.snapshot.task, compress_ids(failed_ids) if failed_ids else "none",
                          compress_ids(marked) if marked else "")

    def action_filter(self) -> None:
        table = self._active_table()
        if table is not None:
            self.query_one(FilterBar).open(table)

    def action_find(self) -> None:
        table = self._active_table()
        if table is not None:
            self.query_one(FilterBar).open(table, "find")

    def action_copy(self, what: str) -> None:
        if what == "dir":
            self.app.copy(self.snapshot.task.task_dir)
        else:
            ids = self.jobs_table.selection()
            if ids:
                self.app.copy(",".join(ids))

    def action_back(self) -> None:
        table = self._active_table()
        if table is not None and table.clear_marks():
            return
        if table is not None and table.filter:
            table.filter = ""
            return
        self.app.pop_screen()


def _state_order(value: str) -> int:
    """Where a shown state (``cooloff 4:59``, ``no output``) sorts: in :data:`NODE_STATES` order."""
    return next((i for i, state in enumerate(NODE_STATES) if value.startswith(state)), len(NODE_STATES))


def _hms(value: float | None, item: object, palette: Palette) -> Text:
    return Text("" if value is None else to_hms(value), end="")


def _exit_code(value: int | None, item: object, palette: Palette) -> Text:
    if value is None:
        return Text("")
    if value == POSTPROCESSING:
        return Text("postproc", style=palette.style("error"), end="")
    return Text(str(value), style=palette.style("error") if value else "", end="")


def _meaning(code: int) -> str:
    return "Postprocessing failed" if code == POSTPROCESSING else exit_code_meaning(code)


def _named(lines: list[str]) -> str:
    shown = lines[:MAX_NAMED]
    more = len(lines) - len(shown)
    return "\n".join(shown) + (f"\n… and {more} more" if more else "")


def _act_result(verb: str, result) -> str:
    done = {"hold": "Held", "release": "Released"}[verb]
    text = f"{done} {result.changed} job(s)."
    if result.refused:
        text += " Refused: " + "; ".join(result.refused)
    return text

