"""The ``crabtui`` command line, modelled on HTCondor's and CRAB's own tools."""

from __future__ import annotations

import importlib
import os

import click


def _load_bindings_quietly() -> None:
    """Load htcondor2 with stderr silenced when CONDOR_CONFIG names no file: the bindings would
    print a paragraph about it to every command; the htcondor backend says it in one line, and
    the embedded one needs no HTCondor configuration."""
    config = os.environ.get("CONDOR_CONFIG", "")
    if not config or config == "ONLY_ENV" or os.path.exists(config):
        return
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            importlib.import_module("htcondor2")
    finally:
        os.dup2(saved, 2)
        os.close(saved)


_load_bindings_quietly()

from crabtui import __version__  # noqa: E402  (after the bindings, see above)
from crabtui.commands.backend import BACKENDS, backend_option
from crabtui.commands.dag import dag
from crabtui.commands.dataset import dataset
from crabtui.commands.demo import demo
from crabtui.commands.jobs import JOB_COMMANDS, job
from crabtui.commands.pool import pool
from crabtui.commands.task import task
from crabtui.commands.watch import watch


class _Main(click.Group):
    """The command group; a state directory that cannot be used stops any command with one line."""

    def invoke(self, ctx: click.Context):
        from engine.state import StateDirError

        try:
            return super().invoke(ctx)
        except StateDirError as e:
            click.echo(f"ERROR: {e}", err=True)
            ctx.exit(1)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
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
# Every command takes --backend after its name too (the schedd-less ones ignore it).
for command in main.commands.values():
    for leaf in command.commands.values() if isinstance(command, click.Group) else (command,):
        backend_option(leaf)
