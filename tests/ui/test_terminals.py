"""crabtui in a real terminal (a pseudo-terminal) of 16 colours (TERM=xterm) and without colour
(NO_COLOR): what it writes to the terminal, escape sequence by escape sequence."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

import pytest
from rich.color import EIGHT_BIT_PALETTE

from engine.schedd.local.client import LocalScheddClient
from installed import CRABTUI
from ui_fixed import build

LIVE = "231114_211000:alice_crab_lumis"
SGR = re.compile(rb"\x1b\[([0-9;]*)m")


@pytest.fixture(scope="module")
def fixed():
    from conftest import new_state, remove_state

    state = new_state()
    build(state)
    LocalScheddClient(state).ping()
    yield state
    remove_state(state)


def terminal_output(state, env: dict[str, str], wanted: bytes) -> bytes:
    """What crabtui, opened on the lumis task in an 80x24 terminal, writes until ``wanted`` shows."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "NO_COLOR", "TEXTUAL_COLOR_SYSTEM")}
    ui = subprocess.Popen([CRABTUI, "--state-dir", state.path], stdin=side, stdout=side, stderr=side,
                          start_new_session=True, env={**environment, **env})
    os.close(side)
    seen = b""
    try:
        for want, then in ((b"lumis", b"\r"), (wanted, b"q")):
            deadline = time.monotonic() + 60
            while want not in seen:
                assert time.monotonic() < deadline, f"the UI did not show {want!r}: {seen[-300:]!r}"
                if select.select([main], [], [], 0.5)[0]:
                    seen += os.read(main, 65536)
            os.write(main, then)
        deadline = time.monotonic() + 30
        while ui.poll() is None:  # reading on, or the UI blocks writing and never quits
            assert time.monotonic() < deadline, "q did not quit"
            if select.select([main], [], [], 0.2)[0]:
                try:
                    os.read(main, 65536)
                except OSError:
                    break
        return seen
    finally:
        if ui.poll() is None:
            ui.kill()
            ui.wait()
        os.close(main)


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
    output = terminal_output(fixed, {"TERM": "xterm"}, "✖ failed".encode())
    assert not re.search(rb"\x1b\[[0-9;]*[34]8;[25];", output), "a 256-colour or 24-bit colour was written"
    assert {"1", "31"} <= style_before(output, "✖ failed")  # bold red
    assert "33" in style_before(output, "◷ cooloff")  # yellow
    assert {"30", "47"} <= style_before(output, "✔ finished")  # job 1, the cursor's row: black on white


def test_without_colour_failures_are_bold_and_reversed_in_greys(fixed):
    output = terminal_output(fixed, {"TERM": "xterm-256color", "NO_COLOR": "1"}, "✖ failed".encode())
    assert {"1", "7"} <= style_before(output, "✖ failed")
    assert "1" in style_before(output, "◷ cooloff")
    colours = [int(n) for n in re.findall(rb"\x1b\[[0-9;]*?[34]8;5;(\d+)", output)]
    assert colours and all(len(set(EIGHT_BIT_PALETTE[n])) == 1 for n in colours), "only greys"

