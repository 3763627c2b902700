"""crabtui in a real terminal (a pseudo-terminal) of 16 colours (TERM=xterm) and without colour
(NO_COLOR): what it writes to the terminal, escape sequence by escape sequence."""

from __future__ import annotations

import os
import re

from rich.color import EIGHT_BIT_PALETTE

from installed import CRABTUI
from ui_terminal import Terminal

LIVE = "231114_211000:alice_crab_lumis"
SGR = re.compile(rb"\x1b\[([0-9;]*)m")


def terminal_output(state, env: dict[str, str], wanted: str) -> bytes:
    """What crabtui, opened on the lumis task in an 80x24 terminal, writes until ``wanted`` shows."""
    environment = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "NO_COLOR", "TEXTUAL_COLOR_SYSTEM")}
    with Terminal([CRABTUI, "--state-dir", state.path], {**environment, **env}) as terminal:
        terminal.wait_for(b"lumis")
        terminal.press(b"\r")
        terminal.wait_for(wanted.encode())
        assert terminal.quit() == 0
        return terminal.seen


def style_before(output: bytes, text: str) -> set[str]:
    """The SGR parameters in force where ``text`` is first written (since the last reset)."""
    at = output.index(text.encode())
    params: set[str] = set()
    for match in SGR.finditer(output, 0, at):
        codes = match.group(1).decode().split(";") if match.group(1) else ["0"]
        if "0" in codes or codes == [""]:
            params = set()
        params.update(c for c in codes if c != "0")
    return params


def test_on_a_16_colour_terminal_states_keep_their_own_colours(fixed):
    output = terminal_output(fixed, {"TERM": "xterm"}, "✖ failed")
    assert not re.search(rb"\x1b\[[0-9;]*[34]8;[25];", output), "a 256-colour or 24-bit colour was written"
    assert {"1", "31"} <= style_before(output, "✖ failed")  # bold red
    assert "33" in style_before(output, "◷ cooloff")  # yellow
    assert {"30", "47"} <= style_before(output, "✔ finished")  # job 1, the cursor's row: black on white


def test_without_colour_failures_are_bold_and_reversed_in_greys(fixed):
    output = terminal_output(fixed, {"TERM": "xterm-256color", "NO_COLOR": "1"}, "✖ failed")
    assert {"1", "7"} <= style_before(output, "✖ failed")
    assert "1" in style_before(output, "◷ cooloff")
    colours = [int(n) for n in re.findall(rb"\x1b\[[0-9;]*?[34]8;5;(\d+)", output)]
    assert colours and all(len(set(EIGHT_BIT_PALETTE[n])) == 1 for n in colours), "only greys"

