"""``crabtui dag``: DAGMan DAG files."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

import click

from crabtui.commands.backend import backend, embedded_only, fail, schedd
from engine.schedd.api import ScheddError
from engine.schedd.local.submit import parse_arguments


@click.group()
def dag() -> None:
    """Check, run, submit, halt and follow DAGMan DAG files."""


@dag.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Run a DAG in the foreground, like condor_dagman -f, with jobs on the embedded schedd.

    Takes condor_submit_dag's options: -maxjobs N, -maxidle N, -maxpre N, -maxpost N, -force,
    -dorescuefrom N, -load_save FILE, -config FILE, -AlwaysRunPost (run with --help for all).
    Exits with DAGMan's exit code.
    """
    from engine.dagman.main import main as dagman_main

    embedded_only(ctx, "dag run runs the embedded DAGMan in the foreground; on an HTCondor pool, "
                       "`crabtui --backend htcondor dag submit` queues the pool's condor_dagman")
    state = ctx.find_root().obj["state_dir"]
    sys.exit(dagman_main([*args, *(["--state-dir", state] if state else [])]))


@dag.command(context_settings={"token_normalize_func": str.lower})
@click.argument("dag_file", type=click.Path(dir_okay=False))
@click.option("-maxjobs", "--maxjobs", type=click.IntRange(0), default=0, help="Most nodes with jobs in the queue.")
@click.option("-maxidle", "--maxidle", type=click.IntRange(0), default=0, help="Most idle node job procs.")
@click.option("-maxpre", "--maxpre", type=click.IntRange(0), default=0, help="Most PRE scripts at once.")
@click.option("-maxpost", "--maxpost", type=click.IntRange(0), default=0, help="Most POST scripts at once.")
@click.option("-force", "-f", "--force", is_flag=True, help="Overwrite an earlier run's files; ignore its rescue DAGs.")
@click.option("-dorescuefrom", "--dorescuefrom", type=click.IntRange(1), help="Run from rescue DAG number N.")
@click.option("-alwaysrunpost", "--always-run-post", "always_run_post", is_flag=True,
              help="Run POST scripts even after a failed PRE script.")
@click.option("-batch-name", "--batch-name", "batch_name", help="The batch name condor_q shows (default FILE+ID).")
@click.option("-config", "--config", "config", type=click.Path(exists=True, dir_okay=False),
              help="A DAGMan configuration file (DAGMAN_* knobs).")
@click.option("-append", "--append", "append", multiple=True, metavar="COMMAND",
              help="A submit command added to the DAGMan job's .condor.sub (repeatable), e.g. 'My.Tag = \"x\"'.")
@click.option("-notification", "--notification", type=click.Choice(["never", "always", "complete", "error"]),
              help="When HTCondor e-mails about the DAGMan job.")
@click.option("-outfile_dir", "--outfile-dir", "outfile_dir", type=click.Path(exists=True, file_okay=False),
              help="Write DAG_FILE.dagman.out in this directory.")
@click.option("-load_save", "--load-save", "load_save", metavar="FILE",
              help="Run from a SAVE_POINT_FILE (a bare name is looked for in save_files/).")
@click.pass_context
def submit(ctx: click.Context, dag_file: str, maxjobs: int, maxidle: int, maxpre: int, maxpost: int,
           force: bool, dorescuefrom: int | None, always_run_post: bool, batch_name: str | None,
           config: str | None, append: tuple[str, ...], notification: str | None, outfile_dir: str | None,
           load_save: str | None) -> None:
    """Queue DAGMan for DAG_FILE as a scheduler-universe job (like condor_submit_dag).

    Options are condor_submit_dag's, in any case (-MaxJobs is -maxjobs). The DAG runs in the
    schedd after this command returns: follow it with `crabtui q -nobatch -dag`,
    `crabtui dag status ID`, or its .dagman.out file.
    """
    from engine.dag import DagError
    from engine.dagman.submit_dag import (DagSubmitOptions, condor_dagman, files, format_condor_dagman_sub,
                                          format_condor_sub, prepare, write_condor_sub)

    options = DagSubmitOptions(max_jobs=maxjobs, max_idle=maxidle, max_pre=maxpre, max_post=maxpost, force=force,
                               do_rescue_from=dorescuefrom, always_run_post=always_run_post, batch_name=batch_name,
                               config=os.path.abspath(config) if config else None, append=append,
                               notification=notification.capitalize() if notification else None,
                               outfile_dir=os.path.abspath(outfile_dir) if outfile_dir else None, load_save=load_save)
    try:
        with schedd(ctx) as client:
            prepare(dag_file, options)
            if backend(ctx) == "htcondor":
                text = format_condor_dagman_sub(dag_file, options, condor_dagman(), client.condor_version)
            else:
                text = format_condor_sub(dag_file, options, client.state.path)
            write_condor_sub(dag_file, text)
            result = client.submit(text, submit_file=dag_file + ".condor.sub",
                                   cwd=os.path.dirname(os.path.abspath(dag_file)))
    except DagError as e:
        for error in e.errors:
            click.echo(f"ERROR: {error}", err=True)
        sys.exit(1)
    except (OSError, ScheddError) as e:
        fail(f"{dag_file}: {e}")
    rule = "-" * 71
    click.echo(rule)
    for label, path in files(dag_file, options).items():
        click.echo(f"{label:<51}: {path}")
    click.echo(f"\nSubmitting job(s).\n1 job(s) submitted to cluster {result.cluster}.\n{rule}")


@dag.command()
@click.argument("dag", metavar="DAG_FILE|ID")
@click.pass_context
def halt(ctx: click.Context, dag: str) -> None:
    """Halt a DAG: no new node starts, running jobs and POST scripts finish, then the FINAL
    node runs and DAGMan writes a rescue DAG and exits with DAG status 6."""
    from engine.dagman.halt import halt_file
    from engine.dagman.halt import halt as halt_dag

    dag_file = _dag_file(ctx, dag)
    _no_dagman(dag_file, "nothing to halt")
    try:
        halt_dag(dag_file)
    except OSError as e:
        fail(f"cannot write {halt_file(dag_file)} from this machine ({e.strerror or e}): halt the DAG where its "
             f"directory is, or hold its DAGMan job instead (`crabtui hold {dag}`), which also stops new nodes")
    click.echo(f"Halted the DAG ({halt_file(dag_file)}); `crabtui dag unhalt {dag}` resumes it until it has drained.")


@dag.command()
@click.argument("dag", metavar="DAG_FILE|ID")
@click.pass_context
def unhalt(ctx: click.Context, dag: str) -> None:
    """Resume a halted DAG that has not finished draining."""
    from engine.dagman.halt import halt_file
    from engine.dagman.halt import unhalt as unhalt_dag
    from engine.dagman.progress import DagWatcher

    dag_file = _dag_file(ctx, dag)
    if not os.path.isdir(os.path.dirname(os.path.abspath(dag_file))):
        fail(f"cannot remove {halt_file(dag_file)} from this machine: its directory is not here; unhalt the DAG "
             "where its directory is")
    rescue = f"`crabtui dag submit {dag_file}` runs its rescue DAG"
    _no_dagman(dag_file, rescue)
    if DagWatcher(dag_file).read().halted_exit:
        fail(f"DAGMan has already stopped {dag_file} for its halt and is exiting; once it has, {rescue}")
    if not unhalt_dag(dag_file):
        fail(f"the DAG is not halted: there is no {halt_file(dag_file)}")
    click.echo(f"Resumed the DAG (removed {halt_file(dag_file)}).")


@dag.command()
@click.argument("dagman_id", metavar="ID", type=int)
@click.pass_context
def status(ctx: click.Context, dagman_id: int) -> None:
    """Progress of the DAG run by DAGMan job ID (like htcondor dag status), with node counts
    from its dagman.out where this machine can read it (DAGMan updates its ad every 5 minutes)."""
    from crabtui.dag_status import format_dag_status, fresh_ad

    ad = _dagman_ad(ctx, dagman_id)
    click.echo(format_dag_status(fresh_ad(ad), time.time(), width=shutil.get_terminal_size().columns // 2))


def _dagman_ad(ctx: click.Context, dagman_id: int):
    """The DAGMan job's ad, from the queue or, once it has left, from the history."""
    try:
        with schedd(ctx) as client:
            ads = client.query(f"ClusterId == {dagman_id} && JobUniverse == 7")
            if not ads:
                ads = client.history(f"ClusterId == {dagman_id} && JobUniverse == 7", match=1)
    except ScheddError as e:
        fail(str(e))
    if not ads or "DAG_NodesTotal" not in ads[0] and "-Dag" not in str(ads[0].get("Arguments", "")):
        fail(f"there is no DAGMan job {dagman_id} in the queue or its history")
    return ads[0]


def _no_dagman(dag_file: str, then: str) -> None:
    """Stop (exit 1, nothing changed) if no DAGMan runs ``dag_file``: it has ended, or never ran.
    Where its directory cannot be seen from here, that cannot be told; the file's writing says."""
    from engine.dagman.halt import dagman_running

    if os.path.isdir(os.path.dirname(os.path.abspath(dag_file))) and not dagman_running(dag_file):
        fail(f"no DAGMan is running {dag_file} (it has ended, or has not started): {then}")


def _dag_file(ctx: click.Context, dag: str) -> str:
    """A DAG file given by name, or the one DAGMan job ``dag`` runs."""
    if not dag.isdigit():
        if not os.path.isfile(dag):
            fail(f"{dag}: no such DAG file (give a DAG file or a DAGMan job id)")
        return dag
    ad = _dagman_ad(ctx, int(dag))
    argv = parse_arguments(str(ad.get("Arguments", "")))
    name = argv[argv.index("-Dag") + 1] if "-Dag" in argv[:-1] else argv[-1]
    return os.path.join(str(ad["Iwd"]), name)


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
