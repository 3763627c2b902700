"""crabtui in a real terminal: a pseudo-terminal of a given size, and the bytes the UI writes to it.

The UI runs as a process of its own (never a forked copy of pytest), and the terminal is
read while it runs: a UI that cannot write blocks, and would never quit.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], size: tuple[int, int] = (80, 24)) -> None:
        self.main, side = pty.openpty()
        fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.ui = subprocess.Popen(argv, stdin=side, stdout=side, stderr=side, start_new_session=True, env=env)
        os.close(side)
        self.seen = b""

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc) -> None:
        if self.ui.poll() is None:  # still running after a failure: end it
            self.ui.kill()
            self.ui.wait()
        os.close(self.main)

    def _read(self, timeout: float) -> None:
        if select.select([self.main], [], [], timeout)[0]:
            try:
                self.seen += os.read(self.main, 65536)
            except OSError:  # the UI has exited and closed the terminal
                pass

    def wait_for(self, *wanted: bytes, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not all(w in self.seen for w in wanted):
            assert time.monotonic() < deadline, f"the UI did not show {wanted}: {self.seen[-500:]!r}"
            self._read(0.5)

    def press(self, keys: bytes) -> None:
        os.write(self.main, keys)

    def quit(self, timeout: float = 30) -> int:
        """Press q and return the UI's exit status once it has exited."""
        self.press(b"q")
        deadline = time.monotonic() + timeout
        while self.ui.poll() is None:
            assert time.monotonic() < deadline, "q did not quit"
            self._read(0.2)
        return self.ui.returncode
