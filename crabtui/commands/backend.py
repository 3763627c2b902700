"""Which schedd a command talks to."""

from __future__ import annotations

import click

from engine.schedd.local.client import LocalScheddClient
from engine.state import state_dir


def schedd(ctx: click.Context, autostart: bool = True) -> LocalScheddClient:
    """The embedded schedd of the state directory chosen on the command line."""
    return LocalScheddClient(state_dir(ctx.find_root().obj["state_dir"]), autostart=autostart)
