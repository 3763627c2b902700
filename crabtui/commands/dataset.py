"""``crabtui dataset``: the local dataset catalogue, which stands in for DBS and Rucio."""

from __future__ import annotations

import json
import sys

import click
import humanize

from crabtui.commands.backend import fail
from engine.crab.taskworker.datasets import Catalogue, Dataset, DatasetError
from engine.state import state_dir

COLUMNS = ("FILES", "LUMIS", "EVENTS", "SIZE", "SITES")


def _catalogue(ctx: click.Context) -> Catalogue:
    return Catalogue.for_state(state_dir(ctx.find_root().obj["state_dir"]))


def _summary(name: str, files: int, lumis: int, events: int, size: int, sites) -> dict:
    return {"name": name, "files": files, "lumis": lumis, "events": events, "size": size, "sites": list(sites)}


def _dataset_summary(d: Dataset) -> dict:
    return _summary(d.name, d.nfiles, d.lumis, d.events, d.size, d.sites) | {"source": d.source}


def _table(header: tuple[str, ...], rows: list[tuple[str, dict]]) -> None:
    """Columns as condor_q prints them: the label left-aligned, numbers right-aligned, sites last."""
    cells = [header] + [(label, str(r["files"]), str(r["lumis"]), str(r["events"]),
                         humanize.naturalsize(r["size"]), ", ".join(r["sites"])) for label, r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    for row in cells:
        padded = [row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:-1], widths[1:])), row[-1]]
        click.echo("  ".join(padded).rstrip())


@click.group()
def dataset() -> None:
    """The input datasets tasks read: shipped synthetic ones and your own.

    Add your own as one JSON file per dataset in <state dir>/datasets/; the format is described
    in the engine.crab.taskworker.datasets module.
    """


@dataset.command("list")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list, one object per dataset.")
@click.pass_context
def list_datasets(ctx: click.Context, json_output: bool) -> None:
    """List the datasets: files, lumis, events, size and sites of each.

    An invalid dataset file is reported on stderr, the other datasets are listed, and the exit
    status is 1.
    """
    catalogue = _catalogue(ctx)
    rows = [_dataset_summary(catalogue.load(name)) for name in catalogue.names()]
    if json_output:
        click.echo(json.dumps(rows, indent=2))
    else:
        _table(("DATASET", *COLUMNS), [(r["name"], r) for r in rows])
    for error in catalogue.errors:
        click.echo(f"ERROR: {error}", err=True)
    if catalogue.errors:
        sys.exit(1)


@dataset.command()
@click.argument("name")
@click.option("--json", "json_output", is_flag=True, help="Print the dataset and its blocks as JSON.")
@click.pass_context
def show(ctx: click.Context, name: str, json_output: bool) -> None:
    """Show dataset NAME: its totals, runs and blocks with their sites."""
    try:
        d = _catalogue(ctx).load(name)
    except DatasetError as e:
        fail(str(e))
    runs = d.runs()
    blocks = [_summary(b.name, len(b.files), b.lumis, b.events, b.size, b.sites) for b in d.blocks]
    if json_output:
        click.echo(json.dumps(_dataset_summary(d) | {"runs": len(runs), "run_range": [runs[0], runs[-1]],
                                                    "blocks": blocks}, indent=2))
        return
    run_range = f"run {runs[0]}" if len(runs) == 1 else f"{len(runs)} runs {runs[0]}-{runs[-1]}"
    click.echo(f"{d.name}  ({d.source})")
    click.echo(f"  {d.nfiles} files, {d.lumis} lumis in {run_range}, {d.events} events, "
               f"{humanize.naturalsize(d.size)}")
    click.echo(f"  sites: {', '.join(d.sites)}")
    _table(("BLOCK", *COLUMNS), [("#" + b["name"].partition("#")[2], b) for b in blocks])
