"""The ``crabtui`` command line, modelled on HTCondor's and CRAB's own tools."""

from __future__ import annotations

import json
import sys

import click

from crabtui import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="crabtui")
def main() -> None:
    """Watch and steer CRAB3-style grid tasks and HTCondor DAGs."""


@main.group()
def dag() -> None:
    """Check and inspect DAGMan DAG files."""


@dag.command()
@click.argument("dag_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the parsed model and lifted graph as JSON.")
def check(dag_file: str, as_json: bool) -> None:
    """Check DAG_FILE as DAGMan would read it.

    A valid DAG prints a one-line summary and exits 0; otherwise every problem is printed on
    stderr as FILE:LINE: message, and the exit status is 1.
    """
    from engine.dag import DagError, load_graph, parse_file
    from engine.dag.summary import as_json as graph_json, summary_line

    try:
        graph = load_graph(parse_file(dag_file))
    except DagError as e:
        for warning in e.warnings:
            click.echo(f"{warning.location}: warning: {warning.message}", err=True)
        for error in e.errors:
            click.echo(str(error), err=True)
        sys.exit(1)
    for warning in graph.dag.warnings:
        click.echo(f"{warning.location}: warning: {warning.message}", err=True)
    if as_json:
        click.echo(json.dumps(graph_json(graph), indent=2))
    else:
        click.echo(summary_line(graph))
