"""The ``crabtui`` command line, modelled on HTCondor's and CRAB's own tools."""

from __future__ import annotations

import atexit
import difflib
import importlib
import os
import signal
import sys

import click
from click.core import ParameterSource


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
from crabtui.commands.backend import BACKENDS, NOTHING_AT_EXIT, backend_option

# Each command's module is imported when the command runs (``crabtui q`` does not pay for the
# CRAB layer's imports); every command takes --backend after its name too.
COMMANDS = {
    "dag": "crabtui.commands.dag:dag", "dataset": "crabtui.commands.dataset:dataset",
    "demo": "crabtui.commands.demo:demo", "pool": "crabtui.commands.pool:pool", "task": "crabtui.commands.task:task",
    "job": "crabtui.commands.jobs:job", "watch": "crabtui.commands.watch:watch", "q": "crabtui.commands.jobs:q",
    "hold": "crabtui.commands.jobs:hold", "release": "crabtui.commands.jobs:release", "rm": "crabtui.commands.jobs:rm",
    "history": "crabtui.commands.jobs:history", "qedit": "crabtui.commands.qedit:qedit",
}


class OneLineUsageError(click.ClickException):
    """A command line crabtui refuses, said in one line, with exit status 1 as HTCondor's tools
    exit on a usage error."""

    exit_code = 1

    def show(self, file=None) -> None:
        click.echo(f"ERROR: {self.message}", err=True)


def one_line(error: click.UsageError, group: click.Context | None = None) -> OneLineUsageError:
    """Click's usage error as one line: the field, what is wrong, and where the help is.

    ``group``: the context of the group whose subcommand's arguments were being parsed, for the
    errors click's parser raises without a context (an option missing its value)."""
    message = error.format_message().rstrip(".")
    param = getattr(error, "param", None)
    if isinstance(error, click.BadParameter) and not isinstance(error, click.MissingParameter) and param:
        names = [n for n in getattr(param, "opts", ()) if n.startswith("-")]
        field = names[0] if names else param.human_readable_name
        if error.ctx is not None and error.ctx.get_parameter_source(param.name) == ParameterSource.ENVIRONMENT:
            field = f"{param.envvar} (which sets {field})"  # not typed: say where it came from
        message = f"{field}: {error.message.rstrip('.')}"
    if error.ctx is not None:
        where = error.ctx.command_path
    elif group is not None:
        where = " ".join(filter(None, [group.command_path, group.invoked_subcommand]))
    else:
        where = "crabtui"
    return OneLineUsageError(f"{message}; see '{where} --help'")


class OneLineGroup(click.Group):
    """A group of subcommands whose command lines click refuses are said in one line naming the
    subcommand's help (click's parser leaves an option missing its value without a context)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            raise one_line(e, ctx) from None


def _unusable_table() -> tuple[type[Exception], ...]:
    """StateDirError and TaskError, of those modules that are loaded: an error of a module not
    imported cannot have been raised, and the commands that never open the task table (``q``
    among them) do not pay for importing it and sqlite3."""
    return tuple(getattr(sys.modules[module], name) for module, name in
                 (("engine.state", "StateDirError"), ("engine.crab.taskworker.taskdb", "TaskError"))
                 if module in sys.modules)


class LazyGroup(click.Group):
    """A group whose commands are imported by name when used; a state directory that cannot be
    used stops any of them with one line, and so does a command line click refuses."""

    as_program = False  # run from the command line (sys.argv), not called in-process

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            raise one_line(e) from None

    def main(self, args=None, *rest, **extra):
        """Click's main; run as the program (the command line from sys.argv), after a command
        that said there is nothing to finish at exit (``nothing_at_exit``) and with no exit
        handler registered, the process ends at once, its output flushed."""
        self.nothing_at_exit = False
        self.as_program = args is None
        try:
            return super().main(args, *rest, **extra)
        except SystemExit as e:
            if args is None and self.nothing_at_exit and not e.code and not atexit._ncallbacks():
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                except OSError:
                    raise e from None  # a closed pipe: said as without this
                os._exit(0)
            raise

    def invoke(self, ctx: click.Context):
        try:
            result = super().invoke(ctx)
            self.nothing_at_exit = ctx.meta.get(NOTHING_AT_EXIT, False)
            return result
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            raise one_line(e, ctx) from None
        except KeyboardInterrupt:  # click would print a bare 'Aborted!'
            click.echo("ERROR: interrupted (Ctrl-C); what crabtui had done stays done, "
                       "and the jobs and tasks it queued run on", err=True)
            ctx.exit(130)
        except Exception as e:
            if not isinstance(e, _unusable_table()):
                raise
            click.echo(f"ERROR: {e}", err=True)  # a task table that cannot be used, whichever command opened it
            ctx.exit(1)
        finally:
            if self.as_program:
                # The command is over and has said so; a Ctrl-C from here on would only break the
                # interpreter's teardown with a traceback (or click's bare 'Aborted!').
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """A mistyped command gets click's suggestion, from every command: click's would be
        drawn from the commands imported so far, which is none."""
        name = args[0]
        if name not in COMMANDS and not name.startswith("-") and not ctx.resilient_parsing:
            close = difflib.get_close_matches(name, COMMANDS, n=1)
            raise click.UsageError(f"No such command {name!r}." + (f" Did you mean {close[0]!r}?" if close else ""),
                                   ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        if name not in self.commands:
            module, _, attr = COMMANDS[name].partition(":")
            command = getattr(importlib.import_module(module), attr)
            for leaf in command.commands.values() if isinstance(command, click.Group) else (command,):
                backend_option(leaf)
            self.commands[name] = command
        return self.commands[name]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, prog_name="crabtui")
@click.option("--state-dir", envvar="CRABTUI_STATE_DIR", metavar="DIR",
              help="Where the embedded schedd keeps its queue and socket "
                   "[default: $XDG_STATE_HOME/crabtui; env CRABTUI_STATE_DIR].")
@click.option("--backend", type=click.Choice(BACKENDS), envvar="CRABTUI_BACKEND", default="embedded",
              show_default=True, help="The embedded schedd, or the HTCondor pool of CONDOR_CONFIG [env CRABTUI_BACKEND].")
@click.option("--ended-for", "ended_for", envvar="CRABTUI_ENDED_FOR", default="1d", metavar="DURATION",
              callback=lambda ctx, param, value: _duration(value), show_default=True,
              help="How long the UI's DAG list keeps DAGs that left the queue: 30m, 12h, 7d, or 0 for none "
                   "[env CRABTUI_ENDED_FOR].")
@click.pass_context
def main(ctx: click.Context, state_dir: str | None, backend: str, ended_for: float | None) -> None:
    """Watch and steer CRAB3-style grid tasks and HTCondor DAGs.

    Without a command, opens the terminal UI on the tasks of the state directory."""
    ctx.obj = {"state_dir": state_dir, "backend": backend}
    if ctx.invoked_subcommand is None:
        from crabtui.app import run
        from crabtui.snapshots import Backend
        from engine.state import state_dir as find_state_dir

        run(Backend(find_state_dir(state_dir), backend), ended_for=ended_for)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _duration(text: str) -> float | None:
    """``90``, ``30m``, ``12h``, ``7d``, ``2w`` in seconds; 0 is None (not at all)."""
    value = text.strip().lower()
    unit = _UNITS.get(value[-1:], None) if value else None
    number = value[:-1] if unit else value
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        raise click.BadParameter(f"{text!r} is no duration: write a number of seconds, or 30m, 12h, 7d") from None
    if seconds < 0:
        raise click.BadParameter(f"{text!r} is negative")
    return seconds or None
