"""Which schedd a command talks to: the embedded one (the default) or a real HTCondor pool's.

``--backend`` is taken before the command (``crabtui --backend htcondor q``) or after it
(``crabtui q --backend htcondor``); ``CRABTUI_BACKEND`` sets the default.
"""

from __future__ import annotations

import socket
import sys
from typing import NoReturn

import click

from engine.schedd.local.client import LocalScheddClient
from engine.state import state_dir

BACKENDS = ("embedded", "htcondor")


def _remember(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.ensure_object(dict)
        ctx.find_root().obj["backend"] = value


backend_option = click.option(
    "--backend", type=click.Choice(BACKENDS), expose_value=False, callback=_remember, is_eager=True,
    help="The schedd to use: the embedded one, or the HTCondor pool of CONDOR_CONFIG [env CRABTUI_BACKEND].")


def backend(ctx: click.Context) -> str:
    return (ctx.find_root().obj or {}).get("backend", "embedded")


def fail(message: str) -> NoReturn:
    """Exit 1 with ``ERROR: message`` on stderr: one line saying what went wrong and what to do."""
    click.echo(f"ERROR: {message}", err=True)
    sys.exit(1)


def embedded_only(ctx: click.Context, message: str) -> None:
    """Stop with ``ERROR: message`` (what to do instead) if the command, which runs on the
    embedded engine only, was given --backend htcondor."""
    if backend(ctx) == "htcondor":
        fail(message)


def schedd(ctx: click.Context, autostart: bool = True):
    """The schedd of the chosen backend; the embedded one of the state directory on the command line."""
    if backend(ctx) == "htcondor":
        from engine.schedd.htcondor import HTCondorSchedd  # the bindings load slowly

        return HTCondorSchedd()
    return LocalScheddClient(state_dir(ctx.find_root().obj["state_dir"]), autostart=autostart)


def schedd_title(client) -> tuple[str, str]:
    """The name and address condor_q's header shows for the schedd."""
    if isinstance(client, LocalScheddClient):
        return f"crabtui@{socket.gethostname()}", client.state.socket
    return client.name or socket.gethostname(), client.address.strip("<>")  # the header adds them
