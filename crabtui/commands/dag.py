"""``crabtui dag``: DAGMan DAG files."""

from __future__ import annotations

import json
import sys

import click


@click.group()
def dag() -> None:
    """Check and inspect DAGMan DAG files."""


@dag.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Run a DAG in the foreground, like condor_dagman -f, with jobs on the embedded schedd.

    Takes condor_submit_dag's options: -maxjobs N, -maxidle N, -maxpre N, -maxpost N, -force,
    -dorescuefrom N, -AlwaysRunPost (run with --help for all). Exits with DAGMan's exit code.
    """
    from engine.dagman.main import main as dagman_main

    state = ctx.find_root().obj["state_dir"]
    sys.exit(dagman_main([*args, *(["--state-dir", state] if state else [])]))


@dag.command()
@click.argument("dag_file", type=click.Path(dir_okay=False))
@click.option("--json", "json_output", is_flag=True, help="Print the parsed model and lifted graph as JSON.")
def check(dag_file: str, json_output: bool) -> None:
    """Check DAG_FILE as DAGMan would read it.

    A valid DAG prints a one-line summary and exits 0; otherwise every problem is printed on
    stderr as FILE:LINE: message, and the exit status is 1.
    """
    from engine.dag import DagError, load_graph, parse_file
    from engine.dag.summary import as_json, summary_line

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
    click.echo(json.dumps(as_json(graph), indent=2) if json_output else summary_line(graph))
