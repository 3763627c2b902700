"""The ``crabtui`` command line, modelled on HTCondor's and CRAB's own tools."""

from __future__ import annotations

import click

from crabtui import __version__
from crabtui.commands.backend import BACKENDS, backend_option
from crabtui.commands.dag import dag
from crabtui.commands.dataset import dataset
from crabtui.commands.demo import demo
from crabtui.commands.jobs import JOB_COMMANDS, job
from crabtui.commands.pool import pool
from crabtui.commands.task import task
from crabtui.commands.watch import watch


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, prog_name="crabtui")
@click.option("--state-dir", envvar="CRABTUI_STATE_DIR", metavar="DIR",
              help="Where the embedded schedd keeps its queue and socket "
                   "[default: $XDG_STATE_HOME/crabtui; env CRABTUI_STATE_DIR].")
@click.option("--backend", type=click.Choice(BACKENDS), envvar="CRABTUI_BACKEND", default="embedded",
              show_default=True, help="The embedded schedd, or the HTCondor pool of CONDOR_CONFIG [env CRABTUI_BACKEND].")
@click.pass_context
def main(ctx: click.Context, state_dir: str | None, backend: str) -> None:
    """Watch and steer CRAB3-style grid tasks and HTCondor DAGs.

    Without a command, opens the terminal UI on the tasks of the state directory."""
    ctx.obj = {"state_dir": state_dir, "backend": backend}
    if ctx.invoked_subcommand is None:
        from crabtui.app import run
        from crabtui.snapshots import Backend
        from engine.state import state_dir as find_state_dir

        run(Backend(find_state_dir(state_dir), backend))


main.add_command(dag)
main.add_command(dataset)
main.add_command(demo)
main.add_command(pool)
main.add_command(task)
main.add_command(job)
main.add_command(watch)
for command in JOB_COMMANDS:
    main.add_command(command)
for group in (dag, job):
    for command in group.commands.values():
        backend_option(command)
for command in JOB_COMMANDS:
    backend_option(command)
