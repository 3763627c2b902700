"""Job commands modelled on HTCondor's tools: ``job submit`` (condor_submit), ``q`` (condor_q),
``hold``, ``release``, ``rm`` and ``history``."""

from __future__ import annotations

import getpass
import json
import os
import re
import time

import click

from crabtui import queue_format
from crabtui.commands.backend import fail, schedd, schedd_title
from engine.schedd.api import JobAction, ScheddError


_JOB_ID = re.compile(r"[0-9]+(\.[0-9]+)?\Z")


@click.group()
def job() -> None:
    """Submit jobs to the schedd."""


@job.command("submit")
@click.argument("submit_file", type=click.Path(dir_okay=False))
@click.pass_context
def submit(ctx: click.Context, submit_file: str) -> None:
    """Queue the jobs of SUBMIT_FILE, an HTCondor submit description (like condor_submit)."""
    try:
        with open(submit_file, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read submit file {submit_file}: {e.strerror}")
    click.echo("Submitting job(s)" + ".")
    try:
        with schedd(ctx) as client:
            result = client.submit(text, submit_file=submit_file, cwd=os.path.dirname(os.path.abspath(submit_file)))
    except ScheddError as e:
        fail(str(e))
    click.echo(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.")


def _constraint(ids: tuple[str, ...], constraint: str | None) -> str:
    clauses = []
    if ids:
        parts = []
        for spec in ids:
            cluster, _, proc = spec.partition(".")
            if not cluster.isdigit() or (proc and not proc.isdigit()):
                fail(f"{spec!r} is not a job id; give CLUSTER or CLUSTER.PROC")
            parts.append(f"(ClusterId == {cluster}" + (f" && ProcId == {proc})" if proc else ")"))
        clauses.append("(" + " || ".join(parts) + ")")
    if constraint:
        clauses.append(f"({constraint})")
    return " && ".join(clauses) or "true"


def _split_af(ids: tuple[str, ...], attrs: str | None) -> tuple[tuple[str, ...], list[str]]:
    """condor_q reads attribute names after -af until the next option: words that are not job ids."""
    if attrs is None:
        return ids, []
    names = attrs.replace(",", " ").split() + [w for w in ids if not _JOB_ID.match(w)]
    return tuple(w for w in ids if _JOB_ID.match(w)), names


@click.command("q")
@click.argument("ids", nargs=-1)
@click.option("-nobatch", "--nobatch", "nobatch", is_flag=True, help="One line per job instead of per batch.")
@click.option("-dag", "--dag", "dag", is_flag=True, help="With -nobatch, show node jobs under their DAGMan job.")
@click.option("-constraint", "--constraint", "constraint", metavar="EXPR", help="Only jobs matching a ClassAd expression.")
@click.option("-af", "--af", "attrs", metavar="ATTRS", help="Print these attributes (comma or space separated).")
@click.option("-better-analyze", "--better-analyze", "analyze", is_flag=True, help="Explain why idle jobs do not run.")
@click.option("--json", "json_output", is_flag=True, help="Print the job ads as JSON.")
@click.pass_context
def q(ctx, ids, nobatch, dag, constraint, attrs, analyze, json_output) -> None:
    """Show the job queue (like condor_q)."""
    ids, af = _split_af(ids, attrs)
    query = _constraint(ids, constraint)
    try:
        with schedd(ctx) as client:
            tables = not (json_output or af or analyze)
            ads = client.query_values(query, queue_format.TABLE_ATTRIBUTES) if tables else client.query(query)
            everyone = ads if query == "true" else client.query_values("true", ["JobStatus", "Owner"])
            analyses = [client.analyze(f"{ad['ClusterId']}.{ad['ProcId']}") for ad in ads] if analyze else []
    except ScheddError as e:
        fail(str(e))
    if json_output:
        click.echo(json.dumps([json.loads(ad.printJson()) for ad in ads], indent=2))
        return
    if af:
        for line in queue_format.autoformat(ads, af):
            click.echo(line)
        return
    if analyze:
        for ad, text in zip(ads, analyses):
            click.echo(f"\n{ad['ClusterId']}.{ad['ProcId']}: {text}")
        return
    now = time.time()
    click.echo("\n" + queue_format.header(*schedd_title(client), now))
    table = queue_format.job_table(ads, now, dag=dag) if nobatch else queue_format.batch_table(ads)
    for line in table:
        click.echo(line)
    click.echo()
    for line in queue_format.totals(ads, everyone, getpass.getuser()):
        click.echo(line)


def _act(action: JobAction, past: str, cluster_past: str):
    """A condor_hold-like command; messages as HTCondor's tools print them."""
    @click.argument("ids", nargs=-1)
    @click.option("-reason", "--reason", "reason", help="Why; recorded in the job ad and its event log.")
    @click.option("-constraint", "--constraint", "constraint", metavar="EXPR", help="Act on jobs matching an expression.")
    @click.pass_context
    def command(ctx, ids, reason, constraint, forcex: bool = False) -> None:
        if not ids and not constraint:
            fail("give job ids (CLUSTER or CLUSTER.PROC) or -constraint EXPR")
        chosen = JobAction.RemoveX if forcex else action
        try:
            with schedd(ctx) as client:
                if ids:
                    result = client.act(chosen, list(ids), reason)
                else:
                    result = client.act(chosen, constraint, reason)
        except ScheddError as e:
            fail(str(e))
        for spec in ids:
            click.echo(f"Job {spec} {past}" if "." in spec else f"All jobs in cluster {spec} have been {cluster_past}")
        if constraint:
            click.echo(f"All jobs matching constraint ({constraint}) have been {cluster_past}")
            for refusal in result.refused:
                click.echo(f"  left alone: {refusal}")
    return command


hold = click.command("hold", help="Hold jobs: running ones are stopped and keep their place (like condor_hold).")(
    _act(JobAction.Hold, "held", "held"))
release = click.command("release", help="Release held jobs back to idle (like condor_release).")(
    _act(JobAction.Release, "released", "released"))
rm = click.command("rm", help="Remove jobs from the queue; running ones are killed (like condor_rm).")(
    click.option("-forcex", "--forcex", "forcex", is_flag=True,
                 help="Kill at once and forget jobs already being removed (a DAGMan still running FINAL).")(
        _act(JobAction.Remove, "marked for removal", "marked for removal")))


@click.command()
@click.argument("ids", nargs=-1)
@click.option("-constraint", "--constraint", "constraint", metavar="EXPR")
@click.option("-match", "--match", "match", type=int, default=-1, help="At most this many jobs.")
@click.option("-af", "--af", "attrs", metavar="ATTRS")
@click.option("--json", "json_output", is_flag=True)
@click.pass_context
def history(ctx, ids, constraint, match, attrs, json_output) -> None:
    """Show jobs that left the queue, newest first (like condor_history)."""
    ids, af = _split_af(ids, attrs)
    try:
        with schedd(ctx) as client:
            ads = client.history(_constraint(ids, constraint), match=match)
    except ScheddError as e:
        fail(str(e))
    if json_output:
        click.echo(json.dumps([json.loads(ad.printJson()) for ad in ads], indent=2))
    elif af:
        for line in queue_format.autoformat(ads, af):
            click.echo(line)
    else:
        for line in queue_format.history_table(ads):
            click.echo(line)


JOB_COMMANDS = (q, hold, release, rm, history)
