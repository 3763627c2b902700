"""Every command of the ``crabtui`` command line, as the words that name it (``("dag", "run")``)."""

from __future__ import annotations

import click

from crabtui.cli import main


def leaves() -> list[tuple[str, ...]]:
    paths = []
    with click.Context(main) as ctx:
        commands = {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}
    for name, command in commands.items():
        if isinstance(command, click.Group):
            paths += [(name, sub) for sub in command.commands]
        else:
            paths.append((name,))
    return paths
