"""``qedit``: condor_qedit, which sets attributes of queued jobs.  It is how a running job sets
an attribute of its own ad (a DAG's PROVISIONER job sets ``ProvisionerState`` so), which is why
the embedded schedd gives its jobs ``condor_qedit`` on their PATH.

The command line is read as condor_qedit 23.9.6 reads it: options in any order, the first bare
argument a job id (with the job ids right after it) or an owner, every later bare argument an
``ATTR=VALUE`` or an ``ATTR`` followed by its ``VALUE`` (which may start with ``-``)."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import NoReturn

import classad2
import click

from crabtui.commands.backend import fail, schedd
from crabtui.condor_args import JOB_ID, is_dash_arg_colon_prefix, is_dash_arg_prefix
from engine.schedd.api import ScheddError

RAW = {"ignore_unknown_options": True, "allow_interspersed_args": False, "help_option_names": []}
_UNSUPPORTED = (("forward", 1), ("dry-run", 3))  # condor_qedit's options crabtui refuses by name
_ATTR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EDITS_FORMS = {"auto": classad2.ParserType.Auto, "long": classad2.ParserType.Old, "xml": classad2.ParserType.XML,
                "json": classad2.ParserType.JSON, "new": classad2.ParserType.New}


class QeditError(Exception):
    """A command line condor_qedit refuses; the message names the argument."""


@dataclass
class Qedit:
    """What to set on which jobs: the constraint condor_qedit builds from its restrictions."""

    name: str | None = None
    pool: str | None = None
    constraints: list[str] = field(default_factory=list)  # ANDed, as condor_qedit's addCustomAND
    job_ids: list[tuple[int, int | None]] = field(default_factory=list)  # ORed among themselves
    edits: dict[str, str] = field(default_factory=dict)  # attribute -> ClassAd expression text

    @property
    def clusters(self) -> dict[int, list[int]]:
        """The job ids by cluster, in cluster order, each with its procs in the order given
        (none: the whole cluster).  As in condor_qedit 23.9.6, a proc named beside its whole
        cluster narrows the cluster to the procs named."""
        procs: dict[int, list[int]] = {}
        for cluster, proc in self.job_ids:
            named = procs.setdefault(cluster, [])
            if proc is not None and proc not in named:
                named.append(proc)
        return dict(sorted(procs.items()))

    @property
    def per_job(self) -> bool:
        """Only CLUSTER.PROC ids: condor_qedit sets each job by its id, and one that is not in the
        queue fails the whole edit."""
        return not self.constraints and all(proc is not None for _, proc in self.job_ids)

    @property
    def constraint(self) -> str:
        """The constraint as condor_qedit 23.9.6 builds it (and names it when nothing matches):
        the restrictions in their order, then the job ids, each part in parentheses."""
        parts = list(self.constraints)
        if self.job_ids:
            parts.append("|| ".join(f"ClusterId == {c} " if not procs else
                                    f"( ClusterId == {c} && {_procs(procs)})" for c, procs in self.clusters.items()))
        return "( " + " && ".join(f"({p})" for p in parts) + " )"


def _procs(procs: list[int]) -> str:
    named = " || ".join(f"ProcId == {p} " for p in procs)
    return named if len(procs) == 1 else f"({named})"


def parse_qedit(argv: list[str]) -> Qedit | None:
    """The edit a command line asks for; None for -help."""
    q = Qedit()
    jobs_named = False  # a job id, an owner or a restriction option has been given
    i = 0

    def value_of(arg: str, what: str) -> str:
        nonlocal i
        i += 1
        if i >= len(argv) or argv[i].startswith("-"):
            raise QeditError(f"{arg} requires {what} after it")
        return argv[i]

    while i < len(argv):
        arg = argv[i]
        if is_dash_arg_prefix(arg, "help", 1):
            return None
        if is_dash_arg_prefix(arg, "name", 1):
            q.name = value_of(arg, "a schedd name")
        elif is_dash_arg_prefix(arg, "pool", 1):
            q.pool = value_of(arg, "a collector's name or address")
        elif is_dash_arg_colon_prefix(arg, "debug", 1)[0]:
            pass  # condor_qedit's tool debugging output; crabtui has none to show
        elif is_dash_arg_prefix(arg, "constraint", 1):
            i += 1
            if i >= len(argv):
                raise QeditError(f"{arg} requires a ClassAd expression after it")
            _check_expression(argv[i], f"invalid constraint {argv[i]!r}")
            q.constraints.append(argv[i])
            jobs_named = True
        elif is_dash_arg_prefix(arg, "owner", 1):
            q.constraints.append(f"Owner=={json.dumps(value_of(arg, 'an owner name'))}")
            jobs_named = True
        elif is_dash_arg_prefix(arg, "jobids", 1):
            q.job_ids += _job_ids(value_of(arg, "a list of job ids"))
            jobs_named = True
        elif (edits := is_dash_arg_colon_prefix(arg, "edits", 2))[0]:
            i += 1
            if i >= len(argv) or argv[i].startswith("-"):
                raise QeditError(f"{arg} requires a file name after it")
            q.edits.update(_read_edits(argv[i], edits[1]))
        elif unsupported := next((name for name, least in _UNSUPPORTED if is_dash_arg_prefix(arg, name, least)), None):
            raise QeditError(f"{arg}: crabtui qedit does not support condor_qedit's -{unsupported}; "
                             "leave it out to set the attributes in the queue")
        elif arg.startswith("-") and len(arg) > 1:
            raise QeditError(f"{arg} is not an option crabtui qedit takes; see 'crabtui qedit -help'")
        elif not jobs_named:
            jobs_named = True
            if arg[:1].isdigit():
                q.job_ids += _job_ids(arg)
                while i + 1 < len(argv) and argv[i + 1][:1].isdigit():
                    i += 1
                    q.job_ids += _job_ids(argv[i])
            else:
                q.constraints.append(f"Owner=={json.dumps(arg)}")
        else:
            attr, equals, value = arg.partition("=")
            if not equals:
                i += 1
                if i >= len(argv):
                    raise QeditError(f"{arg} has no value: give ATTR VALUE pairs, or ATTR=VALUE")
                value = argv[i]
            attr, value = attr.strip(), value.strip()
            if not _ATTR.fullmatch(attr):
                raise QeditError(f"{attr!r} is not an attribute name; nothing was set")
            _check_expression(value, f"{attr}: {value!r} is not a ClassAd expression (write a string "
                                     f"as '\"text\"'); nothing was set")
            q.edits[attr] = value
        i += 1
    if not jobs_named:
        raise QeditError("no jobs given: name them by CLUSTER, CLUSTER.PROC, OWNER, -jobids, -owner or -constraint")
    if not q.edits:
        raise QeditError("no attributes given: add ATTR VALUE pairs (or ATTR=VALUE)")
    return q


def _job_ids(text: str) -> list[tuple[int, int | None]]:
    ids = []
    for word in text.replace(",", " ").split():
        m = JOB_ID.match(word)
        if m is None:
            raise QeditError(f"{word!r} is not a job id: write CLUSTER or CLUSTER.PROC")
        ids.append((int(m.group(1)), None if m.group(2) is None else int(m.group(2))))
    return ids


def _check_expression(text: str, message: str) -> None:
    try:
        ok = text.strip() != "" and classad2.ExprTree(text) is not None
    except (classad2.ClassAdException, ValueError, SyntaxError):
        ok = False
    if not ok:
        raise QeditError(message)


def _read_edits(path: str, form: str | None) -> dict[str, str]:
    """The attributes of the first ad in ``path`` (``-`` for stdin), as expressions."""
    parser = _EDITS_FORMS.get((form or "auto").lower())
    if parser is None:
        raise QeditError(f"-edits:{form}: the form is one of {', '.join(_EDITS_FORMS)}")
    try:
        text = click.get_text_stream("stdin").read() if path == "-" else open(path, encoding="utf-8").read()
    except OSError as e:
        raise QeditError(f"cannot open the file of edits {path}: {e.strerror}") from None
    try:
        ad = next(iter(classad2.parseAds(text, parser)), None)
    except (classad2.ClassAdException, ValueError, SyntaxError):
        ad = None
    if not ad:
        raise QeditError(f"{path}: no ClassAd of edits could be read from it")
    return {attr: str(ad.lookup(attr)) for attr in ad.keys()}


@click.command("qedit", context_settings=RAW)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def qedit(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Set attributes of jobs (like condor_qedit); each VALUE is a ClassAd expression.

    \b
    [-name SCHEDD] [-pool COLLECTOR] {CLUSTER[.PROC] ... | OWNER | -jobids IDS | -owner OWNER | -constraint EXPR}
    {ATTR VALUE | ATTR=VALUE | -edits[:auto|long|xml|json|new] FILE} ...
    Several restrictions must all match; -jobids and the ids after the first take any of their jobs.
    -help (-h, --help) shows this text."""
    try:
        q = parse_qedit(list(args))
    except QeditError as e:
        fail(f"condor_qedit: {e}")
    if q is None:
        click.echo(ctx.get_help())
        return
    first = next(iter(q.edits))
    try:
        with schedd(ctx, name=q.name, pool=q.pool) as client:
            if q.per_job:
                queued = {(ad["ClusterId"], ad["ProcId"]) for ad in client.query(q.constraint, ["ClusterId", "ProcId"])}
                missing = next(((c, p) for c, procs in q.clusters.items() for p in procs if (c, p) not in queued), None)
                if missing:
                    _transaction_failed(f'Failed to set attribute "{first}" for job {missing[0]}.{missing[1]}.')
            count = client.edit(q.constraint, q.edits)
    except ScheddError as e:
        fail(f"condor_qedit: {e}")
    if not count:
        _transaction_failed(f'Failed to set attribute "{first}" by constraint: {q.constraint}')
    for name in q.edits:
        click.echo(f'Set attribute "{name}" for {count} matching jobs.')


def _transaction_failed(why: str) -> NoReturn:
    """condor_qedit's answer when a job named is not in the queue: nothing is set, exit 1."""
    click.echo(f"{why}\nQueue transaction failed.  No attributes were set.", err=True)
    sys.exit(1)
