"""Which schedd a command talks to: the embedded one (the default) or a real HTCondor pool's.

``--backend`` is taken before the command (``crabtui --backend htcondor q``) or after it
(``crabtui q --backend htcondor``); ``CRABTUI_BACKEND`` sets the default.
"""

from __future__ import annotations

import os
import shlex
import socket
import sys
from typing import NoReturn

import click

from engine.schedd.api import ScheddError
from engine.state import state_dir

BACKENDS = ("embedded", "htcondor")


def _remember(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.ensure_object(dict)
        ctx.find_root().obj["backend"] = value
        ctx.find_root().obj["backend_given"] = True  # on the command line: a task's project directory may not override it


backend_option = click.option(
    "--backend", type=click.Choice(BACKENDS), expose_value=False, callback=_remember, is_eager=True,
    help="The schedd to use: the embedded one, or the HTCondor pool of CONDOR_CONFIG [env CRABTUI_BACKEND].")


def backend(ctx: click.Context) -> str:
    return (ctx.find_root().obj or {}).get("backend", "embedded")


def again(ctx: click.Context) -> str:
    """``crabtui`` with the state directory and backend this command was given on its command
    line, for the commands a message tells the user to type next: without them the next command
    would look at another schedd.  What the environment sets, the next command gets too."""
    words = ["crabtui"]
    root = ctx.find_root()
    given = (root.obj or {}).get("state_dir")
    if given and given != os.environ.get("CRABTUI_STATE_DIR"):
        words += ["--state-dir", shlex.quote(given)]
    if backend(ctx) != os.environ.get("CRABTUI_BACKEND", "embedded"):
        words += ["--backend", backend(ctx)]
    return " ".join(words)


NOTHING_AT_EXIT = "crabtui.nothing_at_exit"


def nothing_at_exit(ctx: click.Context) -> None:
    """Says that the command, done, leaves nothing for the interpreter's teardown to finish (no
    file to flush or close, no state to save): crabtui, run as a program, then ends without
    that teardown, which for ``q`` on a large queue is freeing every row and module (0.02 s of
    10,000 jobs)."""
    ctx.meta[NOTHING_AT_EXIT] = True


def fail(message: str) -> NoReturn:
    """Exit 1 with ``ERROR: message`` on stderr: one line saying what went wrong and what to do."""
    click.echo(f"ERROR: {message}", err=True)
    sys.exit(1)


def embedded_only(ctx: click.Context, message: str) -> None:
    """Stop with ``ERROR: message`` (what to do instead) if the command, which runs on the
    embedded engine only, was given --backend htcondor."""
    if backend(ctx) == "htcondor":
        fail(message)


def schedd(ctx: click.Context, autostart: bool = True, name: str | None = None, pool: str | None = None):
    """The schedd of the chosen backend; the embedded one of the state directory on the command
    line.  ``name`` and ``pool`` are condor_q's -name and -pool: on the embedded engine the only
    schedd is its own, and there is no pool to ask.  Only the chosen backend's client is imported."""
    if backend(ctx) == "htcondor":
        from engine.schedd.htcondor import HTCondorSchedd  # the bindings load slowly

        return HTCondorSchedd(name, pool)
    if pool is not None:
        raise ScheddError(f"-pool {pool}: the embedded engine has no pool of schedds; "
                          "use --backend htcondor to ask an HTCondor pool")
    from engine.schedd.local.client import LocalScheddClient

    if name is not None and name != EMBEDDED_NAME:
        raise ScheddError(f"-name {name}: the embedded engine's only schedd is {EMBEDDED_NAME}; "
                          "use --backend htcondor for an HTCondor pool's schedds")
    return LocalScheddClient(state_dir(ctx.find_root().obj["state_dir"]), autostart=autostart)


def look_up_pool(ctx: click.Context, pool: str | None) -> None:
    """condor_q and condor_hold/release/rm 23.9.6 look the -pool host up first, and stop when the
    DNS knows no such host, even where they then ask the local schedd (no -name); condor_history
    and condor_qedit keep -pool as text until a -name needs it."""
    if pool is None or backend(ctx) != "htcondor":
        return  # the embedded engine refuses -pool with its own words
    address = pool.strip().lstrip("<").split(">")[0].split("?")[0]
    host = address.rpartition(":")[0] if ":" in address else address
    try:
        socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        raise ScheddError(f"unknown host {host}: -pool names the central manager of a pool, and the DNS "
                          "lookup of that host name failed") from None


EMBEDDED_NAME = f"crabtui@{socket.gethostname()}"


def schedd_title(client) -> tuple[str, str]:
    """The name and address condor_q's header shows for the schedd (the embedded one's address
    is its socket, in its state directory)."""
    state = getattr(client, "state", None)
    if state is not None:
        return EMBEDDED_NAME, f"<{state.socket}>"
    return client.title
