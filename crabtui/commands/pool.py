"""``crabtui pool``: the embedded schedd daemon."""

from __future__ import annotations

import click

from crabtui.commands.backend import backend, embedded_only, fail, schedd, schedd_title
from engine.schedd.api import JobStatus, ScheddError
from engine.state import state_dir


@click.group()
def pool() -> None:
    """Start, stop and inspect the embedded pool (the schedd daemon and its slots)."""


def _embedded_only(ctx: click.Context, what: str) -> None:
    embedded_only(ctx, f"crabtui {what}s only the embedded pool; an HTCondor pool is run by its "
                       "administrators (condor_on, condor_off). Leave out --backend htcondor.")


@pool.command()
@click.option("--grid", is_flag=True,
              help="First write the simulated grid's sites (T2_CH_CERN, T1_US_FNAL, T2_US_Nebraska, ...) as the "
                   "state directory's pool.toml, for CRAB configurations that name real sites.")
@click.pass_context
def start(ctx: click.Context, grid: bool) -> None:
    """Start the schedd daemon in the background (client commands also start it on demand)."""
    _embedded_only(ctx, "start")
    if grid:
        _install_grid(ctx)
    with schedd(ctx) as client:
        already = client.running()
        info = client.ping()
    verb = "is already running" if already else "started"
    click.echo(f"schedd {verb} (pid {info['pid']}): {info['slots']} slots, state in {info['state_dir']}")
    if changed := client.pool_file_changed(info):
        click.echo(f"  note: {changed}")


def _install_grid(ctx: click.Context) -> None:
    """The simulated grid as the pool file, unless the user wrote one of their own."""
    from engine.crab.grid import grid_path, install_grid

    state = state_dir(ctx.find_root().obj["state_dir"])
    try:
        with open(state.pool_config, "rb") as mine, open(grid_path(), "rb") as shipped:
            if mine.read() == shipped.read():
                return
        fail(f"{state.pool_config} exists already and describes another pool; move it away to start "
             "on the simulated grid, or leave out --grid to keep it")
    except FileNotFoundError:
        click.echo(f"pool: the simulated grid's sites written to {install_grid(state)}")


@pool.command()
@click.pass_context
def stop(ctx: click.Context) -> None:
    """Stop the schedd daemon; running jobs go back to idle and run again at the next start."""
    _embedded_only(ctx, "stop")
    with schedd(ctx, autostart=False) as client:
        if not client.running():
            click.echo(f"no schedd is running for {client.state.path}")
            return
        running = client.ping()["running"]
        client.shutdown()
    click.echo(f"schedd stopped; {running} running job(s) were evicted and will run again")


@pool.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Say whether the schedd runs, with its jobs and slots."""
    if backend(ctx) == "htcondor":
        try:
            with schedd(ctx) as client:
                jobs = client.query_values("true", ["JobStatus"])
                name, address = schedd_title(client)
                version = client.condor_version
        except ScheddError as e:
            fail(str(e))
        running = sum(1 for job in jobs if job.get("JobStatus") == JobStatus.RUNNING)
        click.echo(f"HTCondor schedd {name} at {address} ({version.strip('$ ')})")
        click.echo(f"  jobs: {len(jobs)} in the queue, {running} running")
        return
    with schedd(ctx, autostart=False) as client:
        try:
            info = client.ping()
        except ScheddError as e:
            fail(str(e))
    click.echo(f"schedd running (pid {info['pid']}), state in {info['state_dir']}")
    click.echo(f"  jobs: {info['jobs']} in the queue, {info['running']} running")
    click.echo(f"  slots: {info['busy_slots']} busy of {info['slots']}")
    if changed := client.pool_file_changed(info):
        click.echo(f"  note: {changed}")
