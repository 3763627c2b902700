"""One task: its jobs (``crab status --long``), its ``condor_q -dag`` tree, its sites, its errors
by exit code and its DAG's log, live; and the actions on them."""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from crabtui.dag_view import QueueRow, queue_rows, run_time
from crabtui.screens.polling import PollingScreen
from crabtui.snapshots import (NODE_STATES, ErrorGroup, SiteRow, TaskSnapshot, error_groups, only_probes, site_rows,
                               state_counts)
from crabtui.task_status import (POSTPROCESSING, compress_ids, countdown, cpu_percent, exit_code_meaning, shown_state,
                                 to_hms)
from crabtui.task_trend import ENDED as TREND_ENDED
from crabtui.task_trend import Trend, trend
from crabtui.widgets import states
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.live_table import Column, LiveTable, RowValues, plural
from crabtui.widgets.log_view import LogView
from crabtui.widgets.states import Palette, short_duration
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed
from engine.crab.client.project import directory
from engine.crab.client.status import JobView, job_sort_key
from engine.crab.taskworker.taskdb import kill_refusal, killable, resubmit_refusal, resubmittable

LOG_LINES = 5000
# the actions that act on one tab's rows: that tab's id, title and key
ON_TAB = {"blacklist": ("sites", "Sites", "3"), "kill_jobs": ("jobs", "Jobs", "1"), "hold": ("jobs", "Jobs", "1"),
          "release": ("jobs", "Jobs", "1")}
# the actions an ended task's status rules out, as crab kill and resubmit refuse them: can act, why not
STATUS_ACTIONS = {"kill": (killable, lambda t: f"Nothing to kill: {kill_refusal(t)}."),
                  "resubmit": (resubmittable, lambda t: f"Nothing to resubmit: {resubmit_refusal(t)}")}
TREND_EVERY = 5.0  # seconds between two makings of the task's pace (it reads every attempt)
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
    trend: Trend | None  # None: as before (it is made again every TREND_EVERY seconds)


class TaskScreen(PollingScreen):
    BINDINGS = [
        Binding("enter", "open", "Open", id="open-job",
                tooltip="Open the job: its attempts, ClassAd, output and report (on Errors: the jobs with that exit code)"),
        Binding("h", "hold", "Hold", id="hold", tooltip="Hold the marked jobs (or the one under the cursor)"),
        Binding("r", "release", "Release", id="release", tooltip="Release the marked held jobs (or the one under the cursor)"),
        Binding("H", "halt", "Halt/unhalt", id="halt", tooltip="Halt the DAG (no new jobs start), or resume it"),
        Binding("K", "kill", "Kill", id="kill", tooltip="Kill the task: remove its DAG and jobs (crab kill)"),
        Binding("R", "resubmit", "Resubmit", id="resubmit", tooltip="Resubmit failed jobs, with new options (crab resubmit)"),
        Binding("slash", "filter", "Filter", id="filter", tooltip="Filter the table"),
        Binding("f", "find", "Find", id="find", tooltip="Find in the table: move to the next row that matches"),
        Binding("x", "kill_jobs", "Kill jobs", id="kill-jobs",
                tooltip="Kill the marked jobs (or the one under the cursor): condor_rm; they fail, to resubmit"),
        Binding("b", "blacklist", "Blacklist", id="blacklist",
                tooltip="On Sites: add the site under the cursor to the next resubmit's site blacklist, or take it out"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", show=False, tooltip="Copy the job id(s)"),
        Binding("C", "copy('dir')", "Copy dir", id="copy-dir", show=False, tooltip="Copy the task's crab project directory"),
        Binding("o", "copy('output')", "Copy outputs", id="copy-output", show=False,
                tooltip="Copy where the marked jobs' outputs were staged out (crab getoutput)"),
        Binding("l", "copy('logs')", "Copy logs", id="copy-logs", show=False,
                tooltip="Copy the paths of the marked jobs' stdout, stderr and user log (crab getlog)"),
        Binding("escape", "back", "Back", id="back", tooltip="Clear the marks, then the filter, then go back to the tasks"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.task_name = name
        self.snapshot: TaskSnapshot | None = None
        self.counts: dict[str, int] = {}  # the snapshot's jobs per shown state
        self.automatic = False  # the task splits automatically: its jobs' states are shown as CRAB names them
        self.job_columns = self._job_columns()
        self._job_values = RowValues(self.job_columns, clocked=lambda j: j.state in ("cooloff", "idle", "held"))
        self._reasons: dict[str, str] = {}  # why jobs in the queue wait (held, idle)
        self.blacklist_next: set[str] = set()  # sites the next resubmit blacklists (b on Sites)
        self._summary_wanted = False  # the Summary tab is shown: the fetch adds crab status' summaries

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Horizontal(id="trend"):
            yield Static("", id="pace")
            yield Static("running", classes="trend-label")
            yield Sparkline([], id="running-trend", summary_function=max)
            yield Static("done", classes="trend-label")
            yield Sparkline([], id="done-trend", summary_function=max)
        with Tabbed(initial="jobs"):
            with Pane("Jobs", id="jobs"):
                yield LiveTable(self.job_columns, fixed_columns=2, id="job-table")
            with Pane("DAG", id="dag"):
                yield LiveTable(queue_columns(self), fixed_columns=1, markable=False, id="queue-table")
            with Pane("Sites", id="sites"):
                yield LiveTable(self._site_columns(), markable=False, id="site-table")
            with Pane("Errors", id="errors"):
                yield LiveTable(self._error_columns(), markable=False, id="error-table")
            with Pane("Log", id="log"):
                yield LogView(max_lines=LOG_LINES, id="dagman-out")
            with Pane("Summary", id="summary-tab"):
                yield LogView(id="summary-text", follow=False, wrap=True)
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
                left = j.cooloff_until - self.app.clock()
                return f"cooloff {countdown(left)}" if left > 0 else "cooloff due"
            return shown_state(j, self.automatic)

        def render_state(value: str, j: JobView, palette: Palette) -> Text:
            shown = shown_state(j, self.automatic)
            return states.node_state(shown, palette, value[len(shown):])

        def exit_code(j: JobView) -> int | None:
            return 0 if j.state == "finished" else j.exit_code

        def why(j: JobView) -> str:
            """A held job's hold reason, an idle one's matchmaking, a failed or retried one's last error."""
            reason = self._reasons.get(j.id)
            if reason and j.state in ("held", "idle"):
                return reason
            return (j.error or "").split("\n")[0] if exit_code(j) else ""

        return [
            Column("job", "Job", lambda j: j.id, width=5, right=True, order=job_sort_key),
            Column("state", "State", state, render_state, width=15, live=True, order=_state_order),
            Column("site", "Most Recent Site", lambda j: j.site, width=16),
            Column("exit", "Exit", exit_code, _exit_code, width=8, right=True),
            Column("runtime", "Runtime", lambda j: j.runtime_s, _hms, width=8, right=True),
            Column("memory", "Mem (MB)", lambda j: None if j.memory_mb is None else int(j.memory_mb), width=8,
                   right=True),
            Column("cpu", "CPU %", cpu_percent, width=5, right=True),
            Column("retries", "Retries", lambda j: j.retries, width=7, right=True),
            Column("restarts", "Restarts", lambda j: j.restarts, width=8, right=True),
            Column("waste", "Waste", lambda j: j.waste_s, _hms, width=8, right=True),
            Column("why", "Why", why, _render_why, width=60, live=True),
        ]

    def _site_columns(self) -> list[Column]:
        def rate(r: SiteRow) -> int | None:
            return None if r.success_rate is None else round(r.success_rate * 100)

        def blacklisted(value: str, r: SiteRow, palette: Palette) -> Text:
            if r.site in self.blacklist_next:
                return Text("⊘ at next resubmit", style=palette.style("warning"), end="")
            if r.usable is None:
                return Text("")
            if not r.usable:
                return Text(f"⊘ {r.label}", style=palette.style("error"), end="")
            return Text("✔ whitelisted" if r.whitelisted else "✔ no", style=palette.style("success"), end="")

        return [
            Column("site", "Site", lambda r: r.site),
            Column("running", "Running", lambda r: r.running, right=True),
            Column("succeeded", "Succeeded", lambda r: r.succeeded, right=True),
            Column("failed", "Failed", lambda r: r.failed, right=True),
            Column("rate", "Success %", rate, right=True),
            Column("blacklisted", "Blacklisted",
                   lambda r: "next resubmit" if r.site in self.blacklist_next else r.label, blacklisted),
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
        snapshot = self.app.backend.task(self.task_name, now, summary=self._summary_wanted)
        self.automatic = snapshot.view.automatic is not None  # a task's splitting never changes
        self._reasons = snapshot.reasons
        view = snapshot.view
        jobs = {j.id: j for j in view.jobs}
        pace = None
        left = sum(1 for j in view.jobs if j.state not in TREND_ENDED)
        # made again at once when jobs end or come back (a resubmission): '0 to go, done' under
        # counts that show a job idle again read as a contradiction
        if time.monotonic() - self._trend_at >= TREND_EVERY or left != self._trend_left:
            self._trend_at = time.monotonic()
            pace = trend(view.jobs, now)
            self._trend_left = pace.left
        return TaskRows(snapshot, jobs, self._job_values(jobs), state_counts(view.jobs, self.automatic),
                        {r.site: r for r in site_rows(view.jobs, view.sites)},
                        {str(g.exit_code): g for g in error_groups(view.jobs)}, pace)

    _trend_at = -TREND_EVERY
    _trend_left = -1

    def show(self, fetched: TaskRows) -> None:
        snapshot = fetched.snapshot
        was = self.snapshot.task.status if self.snapshot is not None else None
        self.snapshot = snapshot
        self.counts = fetched.counts
        if snapshot.task.status != was:  # read at last, or K and R can (no longer) act: the footer says so
            self.refresh_bindings()
        with self.app.batch_update():
            self._show_summary()
            self.query_one("#job-table", LiveTable).set_items(fetched.jobs, fetched.values)
            self._show_tree()
            self.query_one("#site-table", LiveTable).set_items(fetched.sites)
            self.query_one("#error-table", LiveTable).set_items(fetched.errors)
            if snapshot.log_lines:
                self.query_one("#dagman-out", LogView).write_lines(snapshot.log_lines)
            if snapshot.summary is not None:
                self._show_status(snapshot.summary)
            if fetched.trend is not None:
                self._show_trend(fetched.trend)
            self._update_info()

    def _show_status(self, lines: list[str]) -> None:
        text = "\n".join(lines).expandtabs(8)
        if text != self._status_text:
            self._status_text = text
            self.query_one("#summary-text", LogView).show_text(text)

    _status_text = ""

    def _show_trend(self, pace: Trend) -> None:
        """Throughput, time left, and the jobs running and done over the task's life."""
        if pace.per_minute is None:
            text = "no job done yet" if pace.left else "every job done" if pace.jobs else "no jobs yet"
        else:
            eta = "done" if not pace.left else f"~{short_duration(pace.eta_s)} left" if pace.eta_s else ""
            text = f"{pace.per_minute:.1f} jobs/min, {pace.left} to go, {eta}"
        self.update_static("pace", text, layout=True)  # its width follows its text
        # No attempt started yet: no data, which Sparkline draws as a low line (one value is a full bar).
        self.query_one("#running-trend", Sparkline).data = list(pace.running)
        self.query_one("#done-trend", Sparkline).data = list(pace.done)

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
        jobs = snapshot.view.jobs
        if snapshot.view.dag_waiting:  # in full on the Summary tab, whose text wraps
            second = Text(f"⚠ {snapshot.view.dag_waiting}", style=palette.style("error"), no_wrap=True)
        elif self.automatic and only_probes(jobs):
            second = Text("probing  ", style="bold", no_wrap=True)
            second.append(states.state_counts(self.counts, palette))
            second.append(f"  of {plural(len(jobs), 'probes')}: the processing jobs are made once they end")
        else:
            second = states.progress_bar(self.counts, len(jobs), 20, palette)
            second.append("  ")
            second.append(states.state_counts(self.counts, palette))
            second.append(f"  of {plural(len(jobs), 'jobs')}")
        self.update_static("summary", Text("\n").join([first, second]))

    def _show_tree(self) -> None:
        self.query_one("#queue-table", LiveTable).set_items(queue_rows(self.snapshot.queue))

    def _queue_empty(self) -> str:
        """Why the ``condor_q -dag`` table is empty."""
        task = self.snapshot.task
        if task.dagman_id is None:
            return "The task has no DAG on the scheduler yet."
        return f"DAGMan job {task.dagman_id} is not in the queue: the DAG has ended."

    def tick(self) -> None:
        self.query_one("#job-table", LiveTable).tick()
        self.query_one("#queue-table", LiveTable).tick()

    def set_palette(self, palette: Palette) -> None:
        for table in self.query(LiveTable):
            table.set_palette(palette)
        if self.snapshot is not None:
            self._show_summary()

    # -------------------------------------------------------------- the info line

    def _active_table(self) -> LiveTable | None:
        tab = self.query_one(Tabbed).active
        tables = {"jobs": "#job-table", "dag": "#queue-table", "sites": "#site-table", "errors": "#error-table"}
        return self.query_one(tables[tab], LiveTable) if tab in tables else None

    def _update_info(self) -> None:
        table = self._active_table()
        tab = self.query_one(Tabbed).active
        if table is not None:
            text = table.describe({"jobs": "jobs", "dag": "jobs in the queue", "sites": "sites",
                                   "errors": "exit codes"}[tab])
            if tab == "dag" and not table.items and self.snapshot is not None:
                text = self._queue_empty()
        elif tab == "log":
            text = self._log_info()
        elif tab == "summary-tab":
            text = "crab status: the jobs per state, the errors by exit code, the summary of run jobs"
        elif self.snapshot is not None and not self.snapshot.queue:
            text = self._queue_empty()
        else:
            text = "condor_q -dag: the task's DAGMan jobs and their node jobs in the queue"
        self.update_static("info", text)

    def _log_info(self) -> str:
        log = self.query_one("#dagman-out", LogView)
        if not log.line_count and self.snapshot is not None:
            from crabtui.dag_view import unreadable
            from engine.crab.client.monitor import dagman_out

            path = dagman_out(self.snapshot.task.task_dir)
            why = unreadable(path)
            if why or not os.path.exists(path):
                return why or ("RunJobs.dag.dagman.out does not exist yet: "
                               + (self.snapshot.view.dag_waiting or "the task's DAGMan has not started"))
        return log.describe("RunJobs.dag.dagman.out")

    def on_live_table_view_changed(self, event: LiveTable.ViewChanged) -> None:
        self._update_info()

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        table = self._active_table()
        (table or event.pane.query_one("LiveTable, LogView")).focus()
        wanted = event.pane.id == "summary-tab"
        if wanted != self._summary_wanted:
            self._summary_wanted = wanted
            if wanted:
                self.refresh_now(even_if_paused=True)
        self._update_info()

    # -------------------------------------------------------------- actions

    @property
    def jobs_table(self) -> LiveTable:
        return self.query_one("#job-table", LiveTable)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("hold", "release", "halt", "kill", "resubmit", "open", "copy", "kill_jobs",
                      "blacklist") and self.snapshot is None:
            return None  # greyed out until the task has been read
        if action in STATUS_ACTIONS and not STATUS_ACTIONS[action][0](self.snapshot.task):
            return None  # an ended task: as crab, nothing to kill (or resubmit)
        tab = self.query_one(Tabbed).active
        if action == "open" and tab not in ("jobs", "errors"):
            return None  # nothing to open on this tab
        if action in ON_TAB and tab != ON_TAB[action][0]:
            return None
        return True

    def on_key(self, event: events.Key) -> None:
        """A press of a key dimmed on this tab says where it acts, and one dimmed for the task's
        status why it cannot act: a silent key reads as a key that did not arrive."""
        if self.snapshot is None:
            return
        tab = self.query_one(Tabbed).active
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if binding.action in STATUS_ACTIONS and not STATUS_ACTIONS[binding.action][0](self.snapshot.task):
                event.stop()
                self.app.notify(STATUS_ACTIONS[binding.action][1](self.snapshot.task), severity="warning")
                return
            if binding.action in ON_TAB and tab != ON_TAB[binding.action][0]:
                event.stop()
                _, title, digit = ON_TAB[binding.action]
                self.app.notify(f"{binding.description} acts on the {title} tab: {digit} goes there.",
                                severity="warning")
                return

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
        if not self.snapshot.view.dag_queued:  # a halt file left behind would stop a resubmit's DAG at its start
            self.app.notify(f"Nothing to halt: the DAG of {task.request_name} is not in the queue ({task.status}).",
                            severity="warning")
            return
        details = (f"DAG {task.task_dir}/RunJobs.dag (DAGMan job {task.dagman_id})\n\n"
                   "No new job starts and no PRE script runs; queued and running jobs and their POST scripts "
                   "finish. Then DAGMan writes a rescue DAG and exits (the task FAILS; resubmit reruns what did "
                   "not finish). Until then, H again resumes the DAG.")
        self.app.confirm(f"Halt the DAG of {task.request_name}?", details, "Halt",
                         lambda: self.app.act("Halt", backend.halt, task.name, done=lambda ok: (
                             "Halted the DAG." if ok else "The DAG was halted already.")))

    def action_kill(self) -> None:
        snapshot = self.snapshot  # an ended task's K is dimmed: on_key says why
        queued = [ad for ad in snapshot.queue if "CRAB_Id" in ad]
        details = [f"DAGMan job {snapshot.task.dagman_id} and its {len(queued)} node job(s) in the queue"
                   if snapshot.task.dagman_id is not None else "The task has no DAG yet"]
        self.app.confirm_kill([snapshot.task], "\n".join(details))

    def action_resubmit(self) -> None:
        """CRAB's resubmit form, with the marked failed jobs' ids and the sites marked on the
        Sites tab (b) filled in; marked jobs that are not failed are named as left out."""
        def failed(jobs: list[JobView]) -> list[str]:  # an automatic task's tail jobs only
            return [j.id for j in jobs if shown_state(j, self.automatic) == "failed"]

        failed_ids = failed(self.snapshot.view.jobs)
        chosen = self._selected_jobs() if self.jobs_table.marked else []
        marked = failed(chosen)
        left = [j.id for j in chosen if j.id not in marked]
        now = (f"job{'s' if len(failed_ids) > 1 else ''} {compress_ids(failed_ids)}" if failed_ids else "none")
        if left:
            now += f" (marked but not failed, left out: {compress_ids(left)})"
        blacklist = set(self.blacklist_next)
        if blacklist and self.snapshot.view.sites is not None:  # the form replaces the task's blacklist
            blacklist.update(self.snapshot.view.sites.lists.blacklist)
        self.app.resubmit(self.snapshot.task, now, compress_ids(marked) if marked else "",
                          ",".join(sorted(blacklist)), sent=self._resubmit_sent)

    def _resubmit_sent(self) -> None:
        """The sites marked with b went into the resubmit just sent (or were taken out of its form):
        they no longer wait for the next one, and the Sites tab shows the task's lists again."""
        self.blacklist_next.clear()
        self.query_one("#site-table", LiveTable).recompute()

    def action_kill_jobs(self) -> None:
        """``condor_rm`` of the marked jobs' HTCondor jobs: PostJob finds no job report and fails
        them for good (they can be resubmitted); the task goes on."""
        snapshot = self.snapshot
        chosen = self._selected_jobs()
        targets = [j for j in chosen if j.id in snapshot.node_jobs]
        if not targets:
            self.app.notify("Nothing to kill: only jobs in the queue (idle, running, held) can be killed.",
                            severity="warning")
            return
        ids = [snapshot.node_jobs[j.id] for j in targets]
        lines = [f"job {j.id} ({snapshot.node_jobs[j.id]}, {j.state}{' at ' + j.site if j.site else ''})"
                 for j in targets]
        left = [f"{j.id} ({j.state})" for j in chosen if j not in targets]
        details = (_named(lines) + (f"\nLeft alone (not in the queue): {', '.join(left)}" if left else "")
                   + "\n\nTheir HTCondor jobs are removed (condor_rm). PostJob finds no job report and fails them "
                     "for good; the rest of the task goes on. Resubmit them with R.")
        question = f"Kill job {targets[0].id}?" if len(targets) == 1 else f"Kill {len(targets)} jobs?"
        self.app.confirm(question, details, "Kill", lambda: self.app.act(
            "Kill jobs", self.app.backend.remove, ids, done=lambda r: _act_result("kill", r)))

    def action_blacklist(self) -> None:
        """The site under the cursor goes into the next resubmit's site blacklist (or out of it)."""
        site = self.query_one("#site-table", LiveTable).cursor_key
        if site is None:
            return
        if site in self.blacklist_next:
            self.blacklist_next.discard(site)
            self.app.notify(f"{site} is no longer in the next resubmit's blacklist.", title="Blacklist")
        else:
            self.blacklist_next.add(site)
            self.app.notify(f"{site} goes into the site blacklist of the next resubmit (R).", title="Blacklist")
        self.query_one("#site-table", LiveTable).recompute()

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
            self.app.copy(directory(self.snapshot.task.task_dir, self.snapshot.task.name))
            return
        jobs = self._selected_jobs()
        if what == "id":
            if jobs:
                self.app.copy(",".join(j.id for j in jobs))
            return
        paths = job_paths(self.snapshot.task.task_dir, jobs, what)
        if paths:
            self.app.copy("\n".join(paths))
        else:
            self.app.notify("None yet: " + ("no output was staged out for these jobs." if what == "output"
                                            else "these jobs have not run."), severity="warning")

    def action_back(self) -> None:
        table = self._active_table()
        if table is not None and table.clear_marks():
            return
        if table is not None and table.filter:
            table.filter = ""
            return
        self.app.pop_screen()


def queue_columns(screen: TaskScreen) -> list[Column]:
    """``condor_q -dag``'s columns: ID, the node indented under its DAGMan job, ST, run time, and
    the DAGMan job's node counts or a job's site or hold reason."""
    def render_name(value: str, row: QueueRow, palette: Palette) -> Text:
        text = Text("  " * row.depth, no_wrap=True, end="")
        text.append(("DAGMan " if row.is_dagman else "") + value, style="bold" if row.is_dagman else "")
        return text

    def render_state(value: str, row: QueueRow, palette: Palette) -> Text:
        return states.dag_node_state(value, palette)

    def render_time(value: float, row: QueueRow, palette: Palette) -> Text:
        return Text(to_hms(value), end="")

    return [
        Column("id", "ID", lambda r: r.key, width=10, right=True),
        Column("node", "Node", lambda r: r.name, render_name, width=24),
        Column("state", "State", lambda r: r.word, render_state, width=14),
        Column("runtime", "Run time", lambda r: run_time(r.ad, screen.app.clock()), render_time, width=8,
               right=True, live=True),
        Column("what", "Counts, site or hold reason", lambda r: r.describe()),
    ]


def job_paths(task_dir: str, jobs: list[JobView], what: str) -> list[str]:
    """``output``: where the jobs' outputs were staged out (as ``crab getoutput`` fetches them);
    ``logs``: their latest attempt's stdout and stderr and their user log (``crab getlog``)."""
    from engine.crab.ap.stageout import staged_outputs
    from engine.crab.client.monitor import job_files

    paths = []
    for j in jobs:
        if not j.attempts:
            continue
        retry = len(j.attempts) - 1
        if what == "output":
            paths += staged_outputs(task_dir, j.id, retry)
        else:
            files = job_files(task_dir, j.id, retry)
            paths += [files.stdout, files.stderr, files.user_log]
    return paths


def _render_why(value: str, j: JobView, palette: Palette) -> Text:
    role = ("warning" if j.state == "held" else "error" if value.startswith("matches no slot")
            else "error" if j.state == "failed" else "")
    return Text(value, style=palette.style(role) if role else "", end="")


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
    done = {"hold": "Held", "release": "Released", "kill": "Killed"}[verb]
    text = f"{done} {result.changed} job(s)."
    if result.refused:
        text += " Refused: " + "; ".join(result.refused)
    return text

