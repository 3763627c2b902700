"""``crabtui dataset``: the local dataset catalogue, which stands in for DBS and Rucio."""

from __future__ import annotations

import json
import os
import sys

import click
import humanize

from crabtui.commands.backend import fail
from engine.crab.taskworker import stand_ins
from engine.crab.client.config import is_dataset_name
from engine.crab.taskworker.datasets import Catalogue, Dataset, DatasetError, UnknownDataset
from engine.state import state_dir

COLUMNS = ("FILES", "LUMIS", "EVENTS", "SIZE", "SOURCE", "SITES")


def _catalogue(ctx: click.Context) -> Catalogue:
    return Catalogue.for_state(state_dir(ctx.find_root().obj["state_dir"]))


def _summary(name: str, files: int, lumis: int, events: int, size: int, sites) -> dict:
    return {"name": name, "files": files, "lumis": lumis, "events": events, "size": size, "sites": list(sites)}


def _dataset_summary(d: Dataset) -> dict:
    return _summary(d.name, d.nfiles, d.lumis, d.events, d.size, d.sites) | {"source": d.source,
                                                                              "synthetic": d.synthetic}


def _source(r: dict) -> str:
    """Where a dataset comes from, in a word: synthetic ones say so."""
    if r["source"] == stand_ins.STAND_IN:
        return "synthetic stand-in"
    return r["source"] if r.get("synthetic") else os.path.basename(r["source"])


def _table(header: tuple[str, ...], rows: list[tuple[str, dict]]) -> None:
    """Columns as condor_q prints them: the label left-aligned, numbers right-aligned, sites last."""
    cells = [header] + [(label, str(r["files"]), str(r["lumis"]), str(r["events"]),
                         humanize.naturalsize(r["size"]), *((_source(r),) if "source" in r else ()),
                         ", ".join(r["sites"])) for label, r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header) - 1)]
    for row in cells:
        padded = [row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:5], widths[1:5])),
                  *(c.ljust(w) for c, w in zip(row[5:-1], widths[5:])), row[-1]]
        click.echo("  ".join(padded).rstrip())


@click.group()
def dataset() -> None:
    """The input datasets tasks read: shipped synthetic ones, your own, and stand-ins.

    A task whose input dataset is in neither reads a synthetic stand-in made from its name.
    Describe a dataset yourself with 'crabtui dataset add NAME --from FILE' (the JSON format is
    in the README, under "Datasets").
    """


@dataset.command("list")
@click.option("--json", "json_output", is_flag=True, help="Print a JSON list, one object per dataset.")
@click.pass_context
def list_datasets(ctx: click.Context, json_output: bool) -> None:
    """List the datasets: files, lumis, events, size, source and sites of each.

    SOURCE is "synthetic" for the shipped datasets, "synthetic stand-in" for those made up for
    tasks whose input the catalogue did not know, else your file.  An invalid dataset file is
    reported on stderr, the other datasets are listed, and the exit status is 1.
    """
    catalogue = _catalogue(ctx)
    known = catalogue.names()
    standing_in = [n for n in stand_ins.registered(catalogue.directory) if n not in known]
    rows = [_dataset_summary(catalogue.load(name)) for name in known]
    rows += [_dataset_summary(stand_ins.load(catalogue, name, stand_in=True)) for name in standing_in]
    rows.sort(key=lambda r: r["name"])
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
    """Show dataset NAME: its totals, runs and blocks with their sites.

    A name the catalogue does not know shows the stand-in a task reading it would get, with a note
    on stderr, as task submit says it (submit's refusals point here for the data's locations).
    """
    catalogue = _catalogue(ctx)
    try:
        d = catalogue.load(name)
    except UnknownDataset as e:
        if not is_dataset_name(name):
            fail(str(e))
        d = stand_ins.load(catalogue, name, stand_in=True)
        close = f" (did you mean {' or '.join(repr(s) for s in e.suggestions)}?)" if e.suggestions else ""
        click.echo(f"Note: {name} is not in the dataset catalogue{close}; a task reading it gets this synthetic "
                   f"stand-in made from its name.", err=True)
    except DatasetError as e:
        fail(str(e))
    runs = d.runs()
    blocks = [_summary(b.name, len(b.files), b.lumis, b.events, b.size, b.sites) for b in d.blocks]
    if json_output:
        click.echo(json.dumps(_dataset_summary(d) | {"runs": len(runs), "run_range": [runs[0], runs[-1]],
                                                    "blocks": blocks}, indent=2))
        return
    run_range = f"run {runs[0]}" if len(runs) == 1 else f"{len(runs)} runs {runs[0]}-{runs[-1]}"
    click.echo(f"{d.name}  ({'synthetic stand-in' if d.source == stand_ins.STAND_IN else d.source})")
    click.echo(f"  {d.nfiles} files, {d.lumis} lumis in {run_range}, {d.events} events, "
               f"{humanize.naturalsize(d.size)}")
    click.echo(f"  sites: {', '.join(d.sites)}")
    _table(("BLOCK", *(c for c in COLUMNS if c != "SOURCE")), [("#" + b["name"].partition("#")[2], b) for b in blocks])


@dataset.command()
@click.argument("name")
@click.option("--from", "source", required=True, type=click.Path(dir_okay=False),
              help="The dataset's description, a JSON file (the format is in the README).")
@click.option("--replace", is_flag=True, help="Replace your earlier description of NAME.")
@click.pass_context
def add(ctx: click.Context, name: str, source: str, replace: bool) -> None:
    """Describe dataset NAME with the JSON file FILE, in place of its synthetic stand-in.

    The file is checked and copied into <state dir>/datasets/; tasks submitted from then on read
    it.  Tasks already split keep the input they were given.
    """
    catalogue = _catalogue(ctx)
    try:
        target = catalogue.add(name, source, replace=replace)
    except DatasetError as e:
        fail(str(e))
    d = catalogue.load(name)
    click.echo(f"Dataset {name} added from {source} as {target}: {d.nfiles} files, {d.lumis} lumis, "
               f"{d.events} events at {', '.join(d.sites)}")
