"""``crabtui demo``: the embedded pool with a demo grid, two demo tasks on it, and the UI on them
(:mod:`engine.crab.grid.demo` says what they show)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile

import click

from crabtui.commands.backend import backend, fail

DEFAULT_SEED = 1


@click.command()
@click.option("--no-ui", is_flag=True, help="Submit the demo tasks and print their names, without opening the UI.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True,
              help="Chooses which jobs the demo's planned failures hit.")
@click.option("--state-dir", "demo_dir", metavar="DIR",
              help="The demo's own state directory: new, empty or an earlier demo's "
                   "[default: a fresh demo-* directory in crabtui's state directory].")
@click.pass_context
def demo(ctx: click.Context, no_ui: bool, seed: int, demo_dir: str | None) -> None:
    """Start the embedded pool on a demo grid (one flaky site), submit two demo tasks on a scaled
    clock (automatic splitting; lumi-based with retries, cooloffs and the automatic blacklist) and
    open the UI on them.  The tasks run on after the UI closes: `crabtui --state-dir DIR` opens
    it again.  With --backend htcondor the tasks go to the pool of CONDOR_CONFIG, at its sites."""
    from crabtui.commands.task import submit
    from engine.crab.grid.demo import DemoError, prepare
    from engine.schedd.local.client import LocalScheddClient
    from engine.state import StateDir, state_dir

    if demo_dir is None:
        demo_dir = tempfile.mkdtemp(prefix="demo-", dir=state_dir(ctx.find_root().obj["state_dir"]).path)
    state = StateDir(os.path.abspath(demo_dir))
    try:
        tasks = prepare(state, seed)
    except (DemoError, OSError) as e:
        fail(str(e))
    on_pool = backend(ctx) == "htcondor"
    if not on_pool:
        with LocalScheddClient(state) as client:
            client.ping()  # the daemon starts with the demo grid, and the task worker with it
    ctx.find_root().obj["state_dir"] = state.path  # `task submit` below submits to the demo's pool
    names = []
    for task in tasks:
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            ctx.invoke(submit, config=task.config)
        text = output.getvalue()
        names.append(text.split("Task name: ", 1)[1].split("\n", 1)[0])
        for line in text.splitlines():
            if line.startswith("Warning:"):
                click.echo(line, err=True)
    command = f"{invoked_as()} --state-dir {state.path}" + (" --backend htcondor" if on_pool else "")
    if no_ui:
        click.echo("\n".join(names))
        # stderr: stdout stays the task names, for scripts
        click.echo(f"The demo's tasks run in {state.path}; `{command} task list` lists them, `{command}` opens "
                   f"the UI on them" + ("." if on_pool else f", `{command} pool stop` stops its pool."), err=True)
        return
    from crabtui.app import run
    from crabtui.snapshots import Backend

    run(Backend(state, backend(ctx)))
    click.echo(f"The demo's tasks run on in {state.path}; `{command}` opens the UI on them again"
               + ("." if on_pool else f", `{command} pool stop` stops its pool."))


def invoked_as() -> str:
    """``crabtui`` as the user can type it again: its name if PATH finds this one, else its path
    (``.venv/bin/crabtui`` after the README's first command, with no venv activated)."""
    path = os.path.abspath(sys.argv[0])
    if shutil.which("crabtui") == path:
        return "crabtui"
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


