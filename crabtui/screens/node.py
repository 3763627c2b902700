"""One node of a DAG: what DAGMan says of it (state, retries, exit code, why, its parents, its
submit file and scripts), its job's ClassAd and hold reason, the job's stdout and stderr, its
jobs' events from their user log (which nodes may share), its PRE and POST scripts' output, and
for a SUBDAG node the sub-DAG's own dagman.out (and ``d`` opens the sub-DAG's screen).  Each
file tab says why it is empty or missing."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from crabtui.dag_view import NodeSnapshot
from crabtui.screens.polling import PollingScreen
from crabtui.widgets import states
from crabtui.widgets.filter_bar import FilterBar
from crabtui.widgets.key_bar import KeyBar
from crabtui.widgets.log_view import LogView
from crabtui.widgets.states import shown_path
from crabtui.widgets.status_bar import StatusBar
from crabtui.widgets.tabbed import Pane, Tabbed

TABS = (("node", "Node"), ("classad", "ClassAd"), ("stdout", "Out"), ("stderr", "Err"), ("log", "Log"),
        ("pre", "PRE"), ("post", "POST"), ("dagman.out", "dagman.out"))
FOLLOWED = ("stdout", "stderr", "log", "pre", "post", "dagman.out")  # text that grows at its end
WRAPPED = ("node",)  # prose: wrapped to the view, as a terminal wraps it


class NodeScreen(PollingScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back", tooltip="Back to the DAG"),
        Binding("d", "open_subdag", "Sub-DAG", id="open-subdag", tooltip="Open the sub-DAG this SUBDAG node runs"),
        Binding("c", "copy('id')", "Copy id", id="copy-id", tooltip="Copy the node's HTCondor job id"),
        Binding("C", "copy('path')", "Copy path", id="copy-path", tooltip="Copy the path of the file shown"),
    ]

    def __init__(self, dag: int, path: str) -> None:
        super().__init__()
        self.dag = dag
        self.path = path
        self.snapshot: NodeSnapshot | None = None

    def compose(self) -> ComposeResult:
        yield StatusBar()
        yield Static("", id="summary")
        with Tabbed(initial="node"):
            for tab, title in TABS:
                with Pane(title, id=_pane_id(tab)):
                    yield LogView(id=f"{_pane_id(tab)}-text", follow=tab in FOLLOWED, wrap=tab in WRAPPED)
        yield Static("", id="info")
        yield FilterBar()
        yield KeyBar()

    def on_mount(self) -> None:
        self.status_bar.crumbs = f"crabtui › DAGs › {self.dag} › {self.path}"
        super().on_mount()

    # -------------------------------------------------------------- refresh

    def fetch(self, now: float) -> NodeSnapshot:
        return self.app.backend.node(self.dag, self.path, now)

    def show(self, snapshot: NodeSnapshot) -> None:
        before = self.snapshot
        self.snapshot = snapshot
        if before is None or before.subdag_id != snapshot.subdag_id:
            self.refresh_bindings()  # d appears once a SUBDAG node's DAGMan job exists
        self._show_summary()
        self._set_text("node", self._node_text())
        self._set_text("classad", snapshot.ad_text or "No HTCondor job of this node in the queue or its history.")
        for tab, _ in TABS[2:]:
            text = snapshot.texts.get(tab)
            self._set_text(tab, text if text else f"({snapshot.notes.get(tab, 'nothing here')})")
        self._update_info()

    def _show_summary(self) -> None:
        snapshot, palette = self.snapshot, self.app.palette
        node = snapshot.node
        if node is None:
            self.update_static("summary", f"DAG {self.dag} has no node {self.path} (or its DAG file cannot be read).")
            return
        line = Text(f"Node {self.path}  ", no_wrap=True)
        line.append_text(states.dag_node_state(snapshot.word, palette))  # as the DAG's node table says
        if node.retry_max or node.retries:
            line.append(f"  retries {node.retries}/{node.retry_max}")
        if node.job:
            line.append(f"  job {node.job}")
        if node.exit_code is not None:
            line.append(f"  exit code {node.exit_code}")
        why = snapshot.hold_reason and f"held: {snapshot.hold_reason}" or node.why
        second = Text(why or "", style=palette.style("warning" if snapshot.hold_reason else
                                                     "error" if snapshot.word in ("failed", "futile") else ""),
                      no_wrap=True, overflow="ellipsis")
        self.update_static("summary", Text("\n").join([line, second]))

    def _node_text(self) -> str:
        node = self.snapshot.node
        if node is None:
            return "No such node."
        lines = [f"Node:        {node.name} ({node.kind})", f"State:       {self.snapshot.word}" + (f": {node.why}" if node.why else ""),
                 f"Retries:     {node.retries} of {node.retry_max}",
                 f"Job:         {node.job or '-'}" + (f" ({self.snapshot.ad_where})" if self.snapshot.ad_where else ""),
                 f"Exit code:   {'-' if node.exit_code is None else node.exit_code}",
                 f"Parents:     {' '.join(node.parents) or '-'}",
                 f"Directory:   {shown_path(node.directory) if node.directory else '-'}",
                 f"{'Sub-DAG' if node.subdag else 'Submit file'}: "
                 f"{shown_path(node.submit_file) if node.submit_file else '-'}"]
        for kind, script in node.scripts.items():
            lines.append(f"{kind} script:  {script.command}" + (f"  (output: {script.output})" if script.output else ""))
        if self.snapshot.hold_reason:
            lines.append(f"Hold reason: {self.snapshot.hold_reason}")
        return "\n".join(lines)

    def _set_text(self, tab: str, text: str) -> None:
        self.query_one(f"#{_pane_id(tab)}-text", LogView).update_text(text)

    def _update_info(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        tab = _tab_of(self.query_one(Tabbed).active)
        log = self.query_one(f"#{_pane_id(tab)}-text", LogView)
        if tab == "log" and tab in snapshot.files:
            text = log.describe(f"{snapshot.files[tab]} (this node's jobs' events)")
        elif tab in snapshot.files:
            text = log.describe(snapshot.files[tab])
        elif tab == "classad":
            text = "The job's ClassAd (condor_q -l / condor_history -l)" + (
                f", from the {snapshot.ad_where}" if snapshot.ad_where else "")
        elif tab == "node":
            text = "What DAGMan says of the node (from its DAG file and dagman.out)"
        else:
            text = snapshot.notes.get(tab, "")
        self.update_static("info", Text(text, no_wrap=True, overflow="ellipsis"))

    def on_tabbed_tab_activated(self, event: Tabbed.TabActivated) -> None:
        event.pane.query_one(LogView).focus()
        self._update_info()

    def tick(self) -> None:
        if self.snapshot is not None:
            self._update_info()

    # -------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "open_subdag":
            return self.snapshot is not None and self.snapshot.subdag_id is not None  # shown on a SUBDAG node only
        if action == "copy" and self.snapshot is None:
            return None
        return True

    def action_open_subdag(self) -> None:
        if self.snapshot is not None and self.snapshot.subdag_id is not None:
            self.app.open_dag(self.snapshot.subdag_id)  # the app's: the DAG screen opens this one

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_copy(self, what: str) -> None:
        snapshot = self.snapshot
        if what == "id":
            if snapshot.node is not None and snapshot.node.job:
                self.app.copy(snapshot.node.job)
            return
        tab = _tab_of(self.query_one(Tabbed).active)
        path = snapshot.files.get(tab) or (snapshot.node.submit_file if snapshot.node else None)
        if path:
            self.app.copy(path)


def _pane_id(tab: str) -> str:
    return tab.replace(".", "-")


def _tab_of(pane: str) -> str:
    return "dagman.out" if pane == "dagman-out" else pane
