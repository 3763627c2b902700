"""Dialogs: the confirmation every destructive action goes through, and CRAB's resubmit form.

The confirmation names what it touches and what will happen, and ``No`` has the focus: Enter or
Escape leave everything as it was; only ``y`` or the Yes button go ahead (k9s users asked for
Cancel as the default after deleting by accident).  The buttons show their keys, and the arrow
keys move between them.  Both fit a terminal of 80x24 (one-line fields
and buttons), and scroll, with the focus, where they do not.  The resubmit form closes only once
its request is accepted: a refusal is shown under the fields, which keep what was typed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from engine.crab.client.resubmit import MAX_MEMORY_MB, MAX_RUNTIME_MIN, MIN_MEMORY_MB, MIN_RUNTIME_MIN


class ConfirmScreen(ModalScreen[bool]):
    """Asks ``question``; ``details`` lists what the action touches."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No"),
                Binding("left,up,shift+tab", "app.focus_previous", "Previous button", show=False),
                Binding("right,down,tab", "app.focus_next", "Next button", show=False)]

    def __init__(self, question: str, details: str, *, yes: str = "Yes") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.details = details
        self.yes = yes

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog", can_focus=False):
            yield Label(self.question, id="question")
            yield Static(self.details, id="details", markup=False)
            with Horizontal(id="buttons"):
                yield Button("No (n)", id="no", variant="primary", compact=True)
                yield Button(f"{self.yes} (y)", id="yes", variant="error", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ResubmitScreen(ModalScreen[dict[str, Any] | None]):
    """``crab resubmit``'s options for a task; dismissed with the checked request arguments
    (:func:`engine.crab.client.resubmit.request_arguments`) or None.  Empty fields keep the task's values.
    With ``send``, the form sends the request itself (in a thread) and is dismissed only once it
    is accepted: a refusal (no failed job of those ids, no site left) is shown under the fields,
    which keep what the user typed."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "submit", "Resubmit")]
    # the arrow keys stay with the text fields (the cursor in a value); tab moves between fields and buttons
    FIELDS = (
        ("jobids", "Job ids", "every failed job, or e.g. 1,3-5"),
        ("sitewhitelist", "Site whitelist", "comma list, '' for none"),
        ("siteblacklist", "Site blacklist", "comma list, '' for none"),
        ("maxjobruntime", "Max runtime (min)", f"{MIN_RUNTIME_MIN}..{MAX_RUNTIME_MIN}"),
        ("maxmemory", "Max memory (MB)", f"{MIN_MEMORY_MB}..{MAX_MEMORY_MB}"),
        ("priority", "Priority", "> 0"),
    )

    def __init__(self, task: str, failed: str, jobids: str = "", blacklist: str = "",
                 send: Callable[[dict[str, Any]], Any] | None = None) -> None:
        super().__init__(classes="dialog")
        self.task_name = task
        self.failed = failed  # the failed jobs, as the form names them
        self.filled = {"jobids": jobids, "siteblacklist": blacklist}
        self.send = send
        self.sending = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog", can_focus=False):
            yield Label(f"Resubmit failed jobs of {self.task_name}", id="question")
            yield Static(f"Failed now: {self.failed}. Only failed jobs can be resubmitted; each gets a fresh "
                         "retry budget. Options left empty keep the task's values.", id="details", markup=False)
            with Grid(id="form"):
                for key, label, placeholder in self.FIELDS:
                    yield Label(label)
                    yield Input(self.filled.get(key, ""), placeholder=placeholder, id=key, compact=True,
                                type="integer" if key in ("maxjobruntime", "maxmemory", "priority") else "text")
            yield Static("", id="error", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Cancel (esc)", id="no", variant="primary", compact=True)
                yield Button("Resubmit (ctrl+s)", id="yes", variant="warning", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "yes":
            self.action_submit()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_cancel(self) -> None:
        if not self.sending:  # a request on its way cannot be called back
            self.dismiss(None)

    def action_submit(self) -> None:
        from engine.crab.client.resubmit import ResubmitError, request_arguments

        values: dict[str, Any] = {}
        for key, _, _ in self.FIELDS:
            text = self.query_one(f"#{key}", Input).value.strip()
            if key in ("sitewhitelist", "siteblacklist") and text in ("''", '""'):
                values[key] = ""
            elif text:
                values[key] = int(text) if key in ("maxjobruntime", "maxmemory", "priority") else text
        try:
            arguments = request_arguments(**values)
        except (ResubmitError, ValueError) as e:
            self.query_one("#error", Static).update(str(e))
            return
        if self.send is None:
            self.dismiss(arguments)
        elif not self.sending:
            self.sending = True
            self.query_one("#error", Static).update("Sending the resubmit request...")
            self.run_worker(partial(self._send, arguments), thread=True, group="resubmit", exit_on_error=False)

    def _send(self, arguments: dict[str, Any]) -> None:
        from crabtui.screens.polling import describe_error

        try:
            self.send(arguments)
        except Exception as e:  # every refusal the engine explains, shown as it says it
            self.app.call_from_thread(self._refused, describe_error(e))
            return
        self.app.call_from_thread(self.dismiss, arguments)

    def _refused(self, message: str) -> None:
        self.sending = False
        self.query_one("#error", Static).update(message)
