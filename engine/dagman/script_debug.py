"""A script's SCRIPT DEBUG file, written as DAGMan 23.9.6 writes it.

DAGMan catches a script's output while it runs and appends it when it reaps the script, under
a line that names the node, the script, its wait status, when it ended and the command line it
ran (seen on the pool: ``*** Node=B Type=POST Status=768 Completion=1795794637 Cmd='post.sh B 3'``),
so that the runs of a retried or deferred script can be told apart in one file.
"""

from __future__ import annotations

import shutil
import tempfile


class DebugCapture:
    """The output of one run of a script with a DEBUG file, kept until the script is reaped."""

    def __init__(self, path: str, node: str, kind: str, argv: list[str]) -> None:
        self.path, self.node, self.kind, self.command = path, node, kind, " ".join(argv)
        self.buffer = tempfile.TemporaryFile()

    def reaped(self, code: int, completion: int) -> None:
        """Append the header and the output; ``code`` is the exit code, or minus the signal."""
        status = code << 8 if code >= 0 else -code  # the wait status DAGMan prints
        header = f"*** Node={self.node} Type={self.kind} Status={status} Completion={completion} Cmd='{self.command}'\n"
        try:
            with open(self.path, "ab") as debug:
                debug.write(header.encode())
                self.buffer.seek(0)
                shutil.copyfileobj(self.buffer, debug)
        finally:
            self.buffer.close()

    def discard(self) -> None:
        self.buffer.close()
