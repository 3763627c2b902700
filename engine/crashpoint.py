"""Named points where a process of ours can be made to die, for the tests that prove every one is safe.

``CRABTUI_CRASH_POINT=exit:after-commit`` in the daemon's environment makes it kill itself with
SIGKILL the first time it reaches that point: a real crash of a real daemon, at a moment no timing
could hit reliably.  Each unit of work (``submit``, ``start``, ``started``, ``exit``, ``hold``,
``release``, ``remove``, ...) passes ``<unit>:before-commit``, ``<unit>:after-commit`` (committed,
its events not yet in the logs) and ``<unit>:after-log`` (logged, its processes not yet acted on).
The TaskWorker passes ``taskworker:<command>:queued`` (a command taken up), ``taskworker:dagman-queued``
(DAGMan submitted, the task table not yet told), ``taskworker:kill:removed`` and
``taskworker:resubmit:recorded``: a task command on a pool dies there itself.  Any process that
replaces a file atomically passes ``replace:<file name>`` with the new content written and synced,
the old name not yet replaced (``replace:.requestcache``: a ``task submit`` killed mid-record).
"""

from __future__ import annotations

import os
import signal

ENV_VAR = "CRABTUI_CRASH_POINT"
_POINT = os.environ.get(ENV_VAR) or None


def crash_point(name: str) -> None:
    if name == _POINT:
        os.kill(os.getpid(), signal.SIGKILL)
