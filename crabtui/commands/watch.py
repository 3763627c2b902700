"""``crabtui watch TASK``: a task's progress, live, until it ends (like condor_watch_q); the
work is in :mod:`crabtui.watch`, imported only when the command runs."""

from __future__ import annotations

import click

from crabtui.commands.backend import again, backend
from engine.state import state_dir


@click.command()
@click.argument("name", metavar="TASK")
@click.option("--interval", type=click.FloatRange(0.1), default=2.0, show_default=True, metavar="SECONDS",
              help="How often to look.")
@click.pass_context
def watch(ctx: click.Context, name: str, interval: float) -> None:
    """Follow TASK's progress until it ends, like condor_watch_q; exits 0 if it COMPLETED."""
    from crabtui.snapshots import Backend
    from crabtui.watch import follow

    try:
        follow(Backend(state_dir(ctx.find_root().obj["state_dir"]), backend(ctx)), name, interval, again(ctx))
    except KeyboardInterrupt:  # how a watch is usually ended, as condor_watch_q's; the task goes on
        click.echo(f"Stopped watching {name}; the task goes on: `{again(ctx)} watch {name}` follows it again.",
                   err=True)
        ctx.exit(130)
