"""``qedit``: condor_qedit, which sets attributes of queued jobs.  It is how a running job sets
an attribute of its own ad (a DAG's PROVISIONER job sets ``ProvisionerState`` so), which is why
the embedded schedd gives its jobs ``condor_qedit`` on their PATH."""

from __future__ import annotations

import json
import re

import click

from crabtui.commands.backend import fail, schedd
from engine.schedd.api import ScheddError

RAW = {"ignore_unknown_options": True, "allow_interspersed_args": False, "help_option_names": ["--help"]}


@click.command("qedit", context_settings=RAW)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def qedit(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Set attributes of jobs (like condor_qedit); each VALUE is a ClassAd expression.

    \b
    {CLUSTER | CLUSTER.PROC | OWNER | -constraint EXPR} ATTR VALUE [ATTR VALUE ...]"""
    words = list(args)
    if words[:1] in (["-constraint"], ["-const"]):
        if len(words) < 2:
            fail("condor_qedit: -constraint needs an expression")
        spec, words = words[1], words[2:]
    elif words:
        target, words = words[0], words[1:]
        spec = target if re.fullmatch(r"\d+(\.\d+)?", target) else f"Owner == {json.dumps(target)}"
    else:
        fail("condor_qedit: give CLUSTER, CLUSTER.PROC, OWNER or -constraint EXPR, then ATTR VALUE pairs")
    if not words or len(words) % 2:
        fail("condor_qedit: give the attributes as ATTR VALUE pairs")
    edits = dict(zip(words[::2], words[1::2]))
    try:
        with schedd(ctx) as client:
            count = client.edit(int(spec) if spec.isdigit() else spec, edits)
    except ScheddError as e:
        fail(f"condor_qedit: {e}")
    if not count:
        fail("condor_qedit: no matching jobs")
    for name in edits:
        click.echo(f'Set attribute "{name}" for {count} matching jobs.')
