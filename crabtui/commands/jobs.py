"""Job commands modelled on HTCondor's tools: ``job submit`` (condor_submit), ``q`` (condor_q),
``hold``, ``release``, ``rm`` (condor_hold, condor_release, condor_rm) and ``history``
(condor_history).

``q``, ``hold``, ``release``, ``rm`` and ``history`` read their command lines as HTCondor's
tools do (see :mod:`crabtui.condor_args`), print what those print, and exit as they exit.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from typing import NamedTuple

import classad2
import click

from crabtui import queue_format
from crabtui.ad_format import AutoFormat, FormatError, PrintfFormat, json_form, json_lines, long_form, xml_form
from crabtui.commands.backend import backend, fail, look_up_pool, nothing_at_exit, schedd, schedd_title
from crabtui.condor_args import JOB_ID, ArgumentError, Option, Parsed, check_constraint, parse
from engine.schedd.api import JobAction, ScheddError, summarize
from engine.state import StateDirError

# Click hands these commands their arguments untouched (but for --backend and --help).
RAW = {"ignore_unknown_options": True, "allow_interspersed_args": True, "help_option_names": ["--help"]}
INT_MAX = 2**31 - 1


# condor_submit 23.9.6's words, on stderr, for a file with several queue statements
MULTI_QUEUE_WARNING = """\
Warning: Use of multiple queue statements in a single submit file is deprecated.
         This functionality will be removed in the V24 feature series. To see
         how multiple queue statements can be converted into one visit:
https://htcondor.readthedocs.io/en/latest/auto-redirect.html?category=example&tag=convert-multi-queue-statements"""


@click.group()
def job() -> None:
    """Submit jobs to the schedd."""


# condor_submit's options crabtui reads, in its order; the others are refused by name.
SUBMIT_OPTIONS = [Option("verbose", 1), Option("spool", 1), Option("disable", 2), Option("append", 1, values=1),
                  Option("batch-name", 1, values=1), Option("help", 1), Option("terse", 3),
                  Option("dry-run", 3, values=1), Option("dump", 2, values=1)]
_POOL = "--backend htcondor submits to the schedd of the pool CONDOR_CONFIG names"
SUBMIT_UNSUPPORTED = (
    Option("debug", 2, colon=True, instead="drop it"),
    Option("file", 2, values=1, instead="name the submit file alone: crabtui job submit FILE"),
    Option("factory", 2), Option("maxjobs", 3, values=1),
    Option("single-cluster", 3), Option("address", 2, values=1, instead=_POOL),
    Option("remote", 1, values=1, instead=_POOL), Option("name", 1, values=1, instead=_POOL),
    Option("pool", 2, values=1, instead=_POOL),
    Option("unused", 2), Option("interactive", 1), Option("capabilities", 2),
)
DRY_RUN_CLUSTER = 1  # condor_submit -dry-run and -dump ask no schedd for a cluster id
STDIN_NAME = "<stdin>"  # what messages call a submit file read from standard input


def _split_queue(argv: list[str]) -> tuple[list[str], str | None]:
    """condor_submit 23.9.6's ``-queue``/``-q`` takes the arguments up to the next option as a queue
    statement (``-queue 2 -terse job.sub``), as does an ``-append``/``-a`` whose command is a
    queue statement (``-a 'queue 2'``, as the manual says)."""
    for n, arg in enumerate(argv):
        if arg.startswith("-") and "queue".startswith(arg[1:]) and len(arg) > 1:
            end = next((k for k in range(n + 1, len(argv)) if argv[k].startswith("-")), len(argv))
            if end == n + 1:
                raise ArgumentError(f"{arg} requires at least one argument (the queue statement, as in "
                                    f"{arg} 3 or {arg} in a b c)")
            return argv[:n] + argv[end:], " ".join(argv[n + 1:end])
        if arg.startswith("-") and arg.lstrip("-") and "append".startswith(arg.lstrip("-")) and n + 1 < len(argv) and \
                re.match(r"\s*queue(\s|$)", argv[n + 1], re.IGNORECASE):
            return argv[:n] + argv[n + 2:], argv[n + 1].strip()[len("queue"):].strip()
    return argv, None


class _SubmitOptions(NamedTuple):
    """condor_submit's command line as ``job submit`` read it."""

    files: list[str]  # exactly one: the submit file, or - for standard input
    queue_args: str | None  # -queue's (or -append 'queue ...''s) queue statement
    prepend: dict[str, str]  # NAME=VALUE macros, set before the file is read
    append: dict[str, str]  # -append's, -batch-name's and -disable's commands, over the file's
    terse: bool
    verbose: bool
    spool: bool
    without_schedd: tuple[str, str] | None  # ("dry-run" or "dump", OUTFILE)


def _submit_options(ctx: click.Context, args: tuple[str, ...]) -> _SubmitOptions | None:
    """``job submit``'s command line read as condor_submit 23.9.6 reads it; a bad one fails in one
    line, and -help prints the help and gives None."""
    files, prepend, append = [], {}, {}
    terse = verbose = spool = False
    without_schedd = None  # ("dry-run" or "dump", OUTFILE)
    try:
        argv, queue_args = _split_queue(list(args))
        for item in parse(argv, SUBMIT_OPTIONS, "job submit", unsupported=SUBMIT_UNSUPPORTED,
                          condor_tool="condor_submit"):
            if item.name == "help":  # condor_submit's -help, from -h
                click.echo(ctx.get_help())
                return None
            if item.name in ("terse", "verbose"):  # the later of the two wins, as in condor_submit 23.9.6
                terse, verbose = item.name == "terse", item.name == "verbose"
            elif item.name == "spool":
                spool = True
            elif item.name == "disable":
                append["skip_filechecks"] = "true"
            elif item.name in ("dry-run", "dump"):
                without_schedd = (item.name, item.values[0])
            elif item.name is None and "=" in item.arg:
                name, _, value = item.arg.partition("=")
                prepend[name.strip()] = value.strip()
            elif item.name is None:
                files.append(item.arg)
            else:
                name, _, value = (item.values[0].partition("=") if item.name == "append"
                                  else ("batch_name", "=", item.values[0]))
                if not _ or not name.strip():
                    raise ArgumentError(f"{item.arg} {item.values[0]!r}: give a submit command, "
                                        "as in -append 'request_memory = 2 GB'")
                append[name.strip()] = value.strip()
        if not files and queue_args is not None and " " in queue_args:
            *statement, last = queue_args.split()
            raise ArgumentError(f"-queue {queue_args}: -queue takes the arguments up to the next option, so name "
                                f"the submit file before it: crabtui job submit {last} -queue {' '.join(statement)}")
        if len(files) != 1:
            raise ArgumentError("name one submit file (- for standard input): crabtui job submit "
                                "[-append COMMAND]... SUBMIT_FILE" if not files
                                else f"{files[1]}: one submit file at a time; submit each on its own")
    except ArgumentError as e:
        fail(str(e))
    return _SubmitOptions(files, queue_args, prepend, append, terse, verbose, spool, without_schedd)


def _print_submitted(results: list, ads: list, terse: bool, verbose: bool) -> None:
    """What condor_submit prints after the dots: -terse's ranges of job ids, -verbose's ads, or
    each cluster's count."""
    if terse:
        for result in results:
            last = result.first_proc + result.num_procs - 1
            click.echo(f"{result.cluster}.{result.first_proc} - {result.cluster}.{last}")
    elif verbose:  # the ads instead of the dots and the count, as condor_submit -verbose
        click.echo("")
        _write(_verbose_text(ads))
    else:
        click.echo("")
        for result in results:
            click.echo(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.")


@job.command("submit", context_settings=RAW)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def submit(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Queue the jobs of SUBMIT_FILE, an HTCondor submit description (like condor_submit).

    \b
    [-append COMMAND]... [-batch-name NAME] [-terse] [-verbose] [-spool] [-disable] [-dry-run OUTFILE|-]
        [-dump OUTFILE|-] [NAME=VALUE]... SUBMIT_FILE|- [-queue QUEUE_ARGS...]
    -append (-a): a submit command that overrides the file's; NAME=VALUE: a macro set before the
    file is read; SUBMIT_FILE - reads standard input (and prints the ads, as -verbose);
    -terse: print the queued job ids as FIRST - LAST; -verbose: print each job's ad; -spool (on a
    pool): send the input files to the schedd's spool, where the output stays for condor_transfer_data;
    -disable: accepted (skip_filechecks; 23.9.6 checks no input file nor log by default); -dry-run: write
    the job ads to OUTFILE (- for standard output) and queue nothing; -dump: the same, said as
    condor_submit -dump says it; -queue (-q): the arguments up to the next option are the queue
    statement of a file that has none, as in -queue 3 or -queue in a b c (-append 'queue 3' too).
    """
    from engine.schedd.local.submit import STDIN, NoJobsQueued, cluster_texts, queue_statements, read_submit_file

    given = _submit_options(ctx, args)
    if given is None:  # -help printed
        return
    files, queue_args, prepend, append, terse, verbose, spool, without_schedd = given
    from_stdin = files[0] == STDIN
    submit_file = STDIN_NAME if from_stdin else files[0]
    cwd = os.getcwd()  # relative names are from where condor_submit runs, not from the file
    verbose = (verbose or from_stdin) and not terse  # condor_submit prints the ads of a file read from stdin
    try:
        text = read_submit_file(files[0])
    except ScheddError as e:
        fail(str(e).replace(f"file {STDIN}:", "file from standard input:"))
    if queue_args is not None:
        if re.search(r"^\s*queue\b", text, re.IGNORECASE | re.MULTILINE):
            fail(f"{submit_file}: -queue argument conflicts with queue statement in submit file; "
                 "remove one of them")
        text = text.rstrip("\n") + f"\nqueue {queue_args}\n"
    if spool and backend(ctx) != "htcondor":
        fail("-spool: the embedded schedd runs its jobs on this machine with their files where they are, so "
             "there is nothing to spool; drop -spool (it is for a pool: --backend htcondor)")
    if without_schedd is not None:
        _without_schedd(ctx, *without_schedd, text, submit_file, cwd, terse, verbose, prepend, append)
        return
    if not terse and not from_stdin:
        click.echo("Submitting job(s)", nl=False)
    parts = cluster_texts(text)  # a new executable starts a new cluster, as in condor_submit
    results, ads = [], []
    embedded = backend(ctx) != "htcondor"
    try:
        if len(parts) > 1 and embedded:  # every cluster checked first: one bad queues none
            for part in parts:
                _build(part, submit_file, cwd, prepend, append, DRY_RUN_CLUSTER)
        with schedd(ctx) as client:
            for part in parts:
                try:
                    results.append(client.submit(part, submit_file=submit_file, cwd=cwd, prepend=prepend or None,
                                                 append=append or None, **({"spool": True} if spool else {})))
                except NoJobsQueued:
                    if part is parts[-1] and not results:
                        raise
                    continue
                if verbose and embedded:  # the ads as submitted: a short job may be gone already
                    ads += _build(part, submit_file, cwd, prepend, append, results[-1].cluster)
            for result in results if verbose and not embedded else []:
                ads += client.query(f"ClusterId == {result.cluster}")
    except NoJobsQueued as e:  # condor_submit 23.9.6 warns and succeeds
        if not terse:
            click.echo("")
        click.echo(f"WARNING: {e}", err=True)
        return
    except (ScheddError, StateDirError) as e:
        if not terse:
            click.echo("")
        fail(str(e))
    if not terse and not verbose:
        click.echo("." * sum(result.num_procs for result in results), nl=False)
    if len(queue_statements(text)) > 1:  # on a line of its own after the dots, as 23.9.6 writes it
        click.echo("\n" + MULTI_QUEUE_WARNING, err=True)
    _print_submitted(results, ads, terse, verbose)
    _warn_of_requirements(parts[0], submit_file, cwd, prepend, append)  # 23.9.6 warns once the jobs are queued
    _warn_of_unused(text, submit_file, cwd, prepend, append)


def _warn_of_requirements(text: str, submit_file: str, cwd: str, prepend: dict, append: dict) -> None:
    """condor_submit's warnings on stderr for a first cluster whose requirements test the slot's
    Disk or Memory."""
    from engine.schedd.local.submit import SubmitDescription, requirements_warnings

    for line in requirements_warnings(SubmitDescription(text, submit_file, cwd, prepend or None, append or None)):
        click.echo(line, err=True)


def _warn_of_unused(text: str, submit_file: str, cwd: str, prepend: dict, append: dict) -> None:
    """condor_submit's warning on stderr, after its other lines, for each submit line nothing used."""
    from engine.schedd.local.submit import SubmitDescription, unused_line_warnings

    for line in unused_line_warnings(SubmitDescription(text, submit_file, cwd, prepend or None, append or None)):
        click.echo(line, err=True)


def _build(text: str, submit_file: str, cwd: str, prepend: dict, append: dict, cluster: int):
    """The job ads of one cluster of the description, numbered ``cluster``."""
    from engine.schedd.local.submit import SubmitDescription, build_job_ads

    description = SubmitDescription(text, submit_file, cwd, prepend or None, append or None)
    return build_job_ads(description, cluster, now=int(time.time()))


def _without_schedd(ctx: click.Context, mode: str, out: str, text: str, submit_file: str, cwd: str, terse: bool,
                    verbose: bool, prepend: dict, append: dict):
    """condor_submit -dry-run and -dump: the ads crabtui's submit reader builds, written as
    condor_submit writes them (each cluster's first ad, then each proc's differences, each
    ended by a '.'), nothing queued, clusters numbered from 1.  The htcondor2 bindings cannot
    build a pool's ads without queueing them."""
    from engine.schedd.local.submit import NoJobsQueued, cluster_texts, queue_statements

    if backend(ctx) == "htcondor":
        fail(f"-{mode}: the htcondor2 bindings cannot build job ads without queueing them; run the pool's "
             f"condor_submit -{mode}, or drop --backend htcondor to see crabtui's own ads")
    header = "Dry-Run job(s)" if mode == "dry-run" else "Storing job ClassAd(s)"
    bare = mode == "dump" and out == "-"  # condor_submit -dump - prints the ads alone
    if not terse and submit_file != STDIN_NAME and not bare:
        click.echo(header, nl=False)  # ended by the ads' first blank line, or by one dot a job
    clusters, parts = [], cluster_texts(text)
    if len(queue_statements(text)) > 1:  # 23.9.6 warns of a dry run too
        click.echo(MULTI_QUEUE_WARNING, err=True)
    _warn_of_requirements(parts[0], submit_file, cwd, prepend, append)
    try:
        for part in parts:
            try:
                clusters.append(_build(part, submit_file, cwd, prepend, append, DRY_RUN_CLUSTER + len(clusters)))
            except NoJobsQueued:
                if part is parts[-1] and not clusters:
                    raise
    except NoJobsQueued as e:
        click.echo("")
        click.echo(f"WARNING: {e}", err=True)
        return
    except ScheddError as e:
        click.echo("")
        fail(str(e))
    if out == "-" and not bare:
        _write("\n" + "".join(_dry_run_text(ads) for ads in clusters))
        verbose = False
    elif bare:
        _write(_dump_text(clusters) + "\n")
        return
    else:
        try:
            with open(out, "w") as f:
                f.write(_dump_text(clusters))
        except OSError as e:
            fail(f"-{mode} {out}: cannot write it ({e.strerror})")
    if terse:
        for ads in clusters:
            click.echo(f"{ads[0]['ClusterId']}.0 - {ads[0]['ClusterId']}.{len(ads) - 1}")
    elif verbose:
        click.echo("")
        _write(_verbose_text([ad for ads in clusters for ad in ads]))
    else:
        if out != "-":
            click.echo("." * sum(len(ads) for ads in clusters))
        verb = "dry-run to" if mode == "dry-run" else "submitted to"
        for ads in clusters:
            click.echo(f"{len(ads)} job(s) {verb} cluster {ads[0]['ClusterId']}.")
    _warn_of_unused(text, submit_file, cwd, prepend, append)  # as a submit does


def _verbose_text(ads) -> str:
    """condor_submit -verbose: each job's ad, ``** Proc C.P:`` then its attributes by name."""
    return "".join(f"** Proc {ad['ClusterId']}.{ad['ProcId']}:\n" + long_form([ad])  # old syntax, as condor_submit
                   for ad in sorted(ads, key=lambda a: a["ProcId"]))


def _dump_text(clusters) -> str:
    """The ads as condor_submit 23.9.6 writes them to a file for -dry-run and -dump (and to
    standard output for -dump -): those of :func:`_dry_run_text`, each ad after a blank line
    instead of before a '.'."""
    return "".join("\n" + block + "\n" for ads in clusters for block in _dry_run_text(ads).split("\n.\n") if block)


def _dry_run_text(ads) -> str:
    """The first proc's ad as the cluster ad (ClusterId first), then per proc its ProcId,
    JobStatus and what differs from the cluster ad, each ended by a '.', as condor_submit
    -dry-run - prints them."""
    per_proc = ("ProcId", "JobStatus")

    def values(ad) -> dict[str, str]:  # in the old ClassAd syntax, as condor_submit prints them
        return dict(line.partition(" = ")[::2] for line in ad.printOld().splitlines() if " = " in line)

    first = values(ads[0])
    cluster = {key: first[key] for key in ads[0].keys() if key not in per_proc}
    # A cluster that materializes late (max_materialize, max_idle): 23.9.6 prints its cluster ad
    # alone, without the limits, and a blank line, as the schedd makes the jobs, not condor_submit.
    late = False
    for key in ("JobMaterializeLimit", "JobMaterializeMaxIdle"):
        late = cluster.pop(key, None) is not None or late
    lines = [f"ClusterId={cluster.pop('ClusterId')}"] + [f"{k}={v}" for k, v in cluster.items()]
    if late:
        return "\n".join(lines) + "\n\n"
    for ad in ads:
        own = values(ad)
        lines += [f"{key}={own[key]}" for key in per_proc if key in ad]
        lines += [f"{key}={own[key]}" for key in ad.keys()
                  if key not in per_proc and key != "ClusterId" and cluster.get(key) != own[key]]
        lines.append(".")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- q

# condor_q's options in the order condor_q tries them (queue.cpp), so that a prefix means what
# it means there; those crabtui does not implement are refused by name.
Q_OPTIONS = [
    Option("wide", 1, colon=True), Option("long", 1, colon=True), Option("json", 2), Option("xml", 3),
    Option("pool", 1, values=1),
    Option("name", 1, values=1), Option("constraint", 1, values=1), Option("attributes", 2, values=1),
    Option("format", 1, values=2), Option("autoformat", 5, colon=True), Option("af", 2, colon=True),
    Option("global", 1), Option("allusers", 2), Option("all-users", 2), Option("help", 1),
    Option("better-analyze", 2, colon=True), Option("better-analyse", 2, colon=True),
    Option("analyze", 2, colon=True), Option("analyse", 2, colon=True), Option("run", 1),
    Option("hold", 2, colon=True), Option("held", 2, colon=True), Option("idle", 3), Option("currentrun", 3),
    Option("cumulative-time", 3), Option("dag", 2), Option("batch", 2, colon=True), Option("nobatch", 3),
    Option("totals", 3), Option("limit", 3, values=1), Option("submitter", 1, values=1), Option("io", 2),
    Option("goodput", 2), Option("factory", 4),
]
_ANALYZE = "crabtui q -better-analyze JOB matches the job against every slot the pool has"
_HOLD_CODES = "crabtui q -hold -af:j HoldReasonCode HoldReasonSubCode HoldReason lists them job by job"
Q_UNSUPPORTED = (
    Option("direct", 1, instead="drop it: crabtui q asks the schedd itself"),
    Option("slotconstraint", 5, instead=_ANALYZE), Option("mconstraint", 2, instead=_ANALYZE),
    Option("machine", 2, instead=_ANALYZE),
    Option("address", 1, instead="name the schedd with -name NAME, as condor_status -schedd lists it"),
    Option("autocluster", 2, colon=True), Option("group-by", 2, colon=True),
    Option("jobset", 5, colon=True), Option("aaf", 3, colon=True),
    Option("print-format", 2, colon=True, instead="choose the columns with -af or -format"),
    Option("schedd-constraint", 5, instead="name a schedd with -name NAME, or ask every schedd with -global"),
    Option("reverse-analyze", 3, colon=True, instead=_ANALYZE), Option("unmatchable", 5, colon=True, instead=_ANALYZE),
    Option("dry-run", 3, colon=True, instead="drop it: crabtui q only reads the queue"),
    Option("verbose", 4, instead="-long prints each job's whole ad"),
    Option("hold-codes", 6, colon=True, instead=_HOLD_CODES), Option("holdcodes", 5, colon=True, instead=_HOLD_CODES),
    Option("cputime", 2, instead="crabtui q -af:j RemoteUserCpu RemoteSysCpu lists the jobs' CPU seconds"),
    Option("grid", 2, colon=True), Option("debug", 3, colon=True, instead="drop it"),
    Option("progress", 3, colon=True, instead="-totals prints the counts alone"), Option("expert", 1),
    Option("jobads", 1, colon=True),
    Option("userlog", 1, instead="crabtui history -userlog FILE lists the log's jobs that ended"),
    Option("slotads", 1, colon=True, instead=_ANALYZE), Option("userprios", 5, colon=True),
    Option("nouserprios", 7, colon=True), Option("version", 1, instead="crabtui --version"),
    Option("profile", 4, colon=True, instead="drop it"),
    Option("stream-results", 2, instead="drop it: crabtui q lists the jobs in job id order, as condor_q does without "
                                        "it (with it, 23.9.6 lists them in the schedd's order)"),
)
_ALIASES = {"all-users": "allusers", "held": "hold", "better-analyse": "better-analyze", "analyze": "better-analyze",
            "analyse": "better-analyze", "autoformat": "af"}


class QueueQuery:
    """condor_q's command line: which jobs, and how to show them."""

    def __init__(self, argv: list[str]):
        self.ids: list[tuple[int, int]] = []
        self.owners: list[str] = []
        self.constraints: list[str] = []
        self.status: str | None = None  # run, hold or idle
        self.allusers = self.nobatch = self.batch = self.dag = self.totals = self.help = False
        self.long = self.json = self.xml = self.analyze = self.global_ = self.io = self.goodput = False
        self.factory = False  # -factory: the late-materializing clusters' factories, not their jobs
        self.attributes: list[str] = []
        self.wide: int | None = None  # None: not given; 0: -wide; N: -wide:N
        self.current_run = True
        self.name = self.pool = self.submitter = None
        self.limit: int | None = None
        self.autoformat: AutoFormat | None = None
        self.formats: list[tuple[str, str]] = []
        for item in parse(argv, Q_OPTIONS, "q", greedy=("af", "autoformat"), unsupported=Q_UNSUPPORTED):
            self._take(item)
        if self.batch and (self.autoformat or self.formats):
            raise ArgumentError("-batch conflicts with -format and -af")

    def _take(self, item: Parsed) -> None:
        name = _ALIASES.get(item.name, item.name)
        if name is None:
            found = JOB_ID.match(item.arg)
            if found:
                self.ids.append((int(found[1]), int(found[2]) if found[2] is not None else -1))
            else:
                self.owners.append(item.arg)
        elif name in ("run", "hold", "idle"):
            if self.status not in (None, name):
                raise ArgumentError("-run and -hold/held or -idle are incompatible")
            self.status = name
        elif name == "af":
            if not item.values:
                raise ArgumentError(f"{item.arg} requires at least one attribute or expression after it")
            self.autoformat = (self.autoformat.then(item.values, item.options or "") if self.autoformat
                               else AutoFormat(item.values, item.options or "").with_printf(self.formats, before=True))
            self.formats = []  # on the -af's line from now on
        elif name == "format" and self.autoformat:
            self.autoformat.with_printf([(item.values[0], item.values[1])])
        elif name == "format":
            self.formats.append((item.values[0], item.values[1]))
        elif name == "constraint":
            self.constraints.append(check_constraint(item.arg, item.values[0]))
        elif name == "attributes":
            self.attributes += [a for a in re.split(r"[,\s]+", item.values[0]) if a]
        elif name == "long" and item.options in ("json", "xml"):  # -long:json is -json, as in condor_q
            setattr(self, item.options, True)
        elif name == "wide":
            self.wide = int(item.options) if item.options and item.options.isdigit() else 0
        elif name in ("name", "pool"):
            setattr(self, name, item.values[0])
        elif name == "limit":  # condor_q 23.9.6's words
            if not re.fullmatch(r"-?\d+", item.values[0]):
                raise ArgumentError(f"Unable to convert ({item.values[0]}) to a number for -limit.")
            if int(item.values[0]) < 1:
                raise ArgumentError(f"{int(item.values[0])} is not a valid for -limit.")
            self.limit = int(item.values[0])
        elif name == "submitter":
            self.submitter = item.values[0]
        elif name == "totals":  # an -af or -format before it is dropped; one after it shows the summary ad
            self.totals, self.autoformat, self.formats = True, None, []
        elif name == "cumulative-time":
            self.current_run = False
        elif name == "currentrun":
            self.current_run = True
        elif name == "global":
            self.global_ = True
        elif name == "better-analyze":
            if item.options:  # :summary's table of autoclusters, :reverse's slots' view
                raise ArgumentError(f"crabtui q does not support condor_q's {item.arg}; drop ':{item.options}' "
                                    "for crabtui's analysis of each job")
            self.analyze = True
        else:
            setattr(self, name.replace("-", "_"), True)

    @property
    def custom(self) -> bool:
        return bool(self.autoformat or self.formats)

    @property
    def ad_attributes(self) -> list[str]:
        """What -long, -json and -xml show: the -attributes (all if none), and with -af or
        -format, whose attributes condor_q then fetches with them, theirs and the job id's."""
        if not self.custom:
            return self.attributes
        return ["ClusterId", "ProcId", *self.projection()]

    @property
    def my_jobs(self) -> bool:
        """condor_q shows only the user's own jobs unless told jobs, owners or -allusers."""
        return not (self.ids or self.owners or self.allusers or self.submitter)

    @property
    def batched(self) -> bool:
        """condor_q's default is one line per batch, except for -nobatch, -run, -idle, -hold
        and the custom formats."""
        if self.batch:
            return True
        return not (self.nobatch or self.custom or self.status or self.long or self.json or self.xml or self.analyze
                    or self.totals or self.io or self.goodput or self.factory)

    @property
    def partial(self) -> bool:
        """Whether the query may choose only some jobs of a cluster (then DONE is not counted)."""
        return bool(self.constraints or self.status or any(proc >= 0 for _, proc in self.ids))

    def constraint(self, me: str | None) -> str:
        """The query as condor_q builds it: the ANDed filters, then the ORed jobs and owners
        (with, in the batch and DAG views, the jobs of the DAGs a cluster id names)."""
        ands = [f"({c})" for c in self.constraints]
        ands += {"run": ["(JobStatus == 2 || JobStatus == 6 || JobStatus == 7)"], "hold": ["(JobStatus == 5)"],
                 "idle": ["(JobStatus == 1)"], None: []}[self.status]
        # -submitter is one more owner, ORed with the jobs and owners given (23.9.6 on the pool)
        owners = self.owners + ([self.submitter] if self.submitter is not None else [])
        ors = [f'(Owner == {json.dumps(owner)})' for owner in owners]
        for cluster, proc in self.ids:
            if proc >= 0:
                ors.append(f"(ClusterId == {cluster} && ProcId == {proc})")
            else:
                ors.append(f"(ClusterId == {cluster})")
            if (self.dag or self.batched) and proc < 1:
                # =?=, where condor_q 23.9.6 writes ==: a job with no JobBatchId made its whole OR an
                # error, so of `condor_q 5 7` it listed cluster 5 alone
                ors += [f"(DAGManJobId =?= {cluster})", f'(int(split(JobBatchId, ".")[0]) =?= {cluster})']
        if self.io:  # the WHERE of condor_q's -io print format: jobs moving files
            ands.append("(JobUniverse == 1 || TransferQueued =?= true || TransferringOutput =?= true "
                        "|| TransferringInput =?= true)")
        if me is not None:
            ands.append(f"(Owner == {json.dumps(me)})")
        parts = [f"( {' && '.join(ands)} )"] if ands else []
        parts += [f"( {' || '.join(ors)} )"] if ors else []
        return " && ".join(parts) or "true"

    def projection(self) -> list[str]:
        if self.autoformat or self.formats:
            names = set()
            for fmt in filter(None, [self.autoformat, self.formats and PrintfFormat(self.formats)]):
                names |= fmt.attributes
            return sorted(names | set(self.attributes))  # as condor_q's: without DAGManJobId, -dag has no tree to show
        if self.long or self.json or self.xml:
            return self.attributes
        if self.totals:
            return list(queue_format.PROJECTIONS["totals"])
        names = list(queue_format.PROJECTIONS[self.layout])
        if not self.current_run and self.layout in ("nobatch", "run"):
            names.append(queue_format.CUMULATIVE_TIME)
        return names + [a for a in queue_format.DAG_ATTRIBUTES if a not in names] if self.dag else names

    @property
    def layout(self) -> str:
        if self.goodput or self.io:
            return "goodput" if self.goodput else "io"
        if self.status == "hold":
            return "hold"  # with -dag too: condor_q 23.9.6 lists held jobs under their owners, with no tree
        if self.dag and self.status:
            return "nobatch"  # -dag -run and -dag -idle: the chosen jobs in -dag's tree, with the totals
        if self.batched:
            return "batch"
        return self.status or "nobatch"


@click.command("q", context_settings=RAW)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def q(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Show the job queue, as condor_q does, with condor_q's options.

    \b
    Jobs: [CLUSTER | CLUSTER.PROC | OWNER]... -constraint EXPR -allusers -run -hold -idle
    Factories: -factory (clusters with max_materialize or max_idle)
    Views: (one line per batch) -nobatch -dag -totals -wide[:N] -currentrun -cumulative-time
    Ads: -long[:json|xml] -attributes A,B -json -xml -af[:jlhVr,tng] EXPR... -format FMT EXPR
    Where: -name SCHEDD -pool COLLECTOR -global -submitter USER
    How many: -limit N (the first N jobs the schedd returns)
    Why idle: -better-analyze
    """
    try:
        query = QueueQuery(list(args))
    except (ArgumentError, FormatError) as e:
        fail(str(e))
    if query.help:
        click.echo(ctx.get_help())
        return
    try:
        look_up_pool(ctx, query.pool)
        if query.submitter is not None:
            clients = _submitter_schedds(ctx, query)
        elif query.global_ and backend(ctx) == "htcondor":
            from engine.schedd.htcondor import HTCondorSchedd

            clients = [(None, client) for client in HTCondorSchedd.all(query.pool)]
        else:
            clients = [(None, schedd(ctx, name=query.name, pool=query.pool))]
        for submitter, client in clients:
            with client:
                _show_queue(client, query, submitter)
    except ScheddError as e:
        fail(str(e))
    except FormatError as e:
        fail(str(e))
    nothing_at_exit(ctx)


def _submitter_schedds(ctx: click.Context, query: QueueQuery) -> list:
    """condor_q -submitter: the schedds where the submitter has jobs (the collector's submitter
    ads; the embedded schedd's own queue), or condor_q's error when there is none."""
    if backend(ctx) == "htcondor":
        from engine.schedd.htcondor import HTCondorSchedd

        found = HTCondorSchedd.submitters(query.submitter, query.pool)
    else:
        client = schedd(ctx, name=query.name, pool=query.pool)
        owners = {row.get("Owner") for row in client.query_values("true", ["Owner"])}
        domain = socket.gethostname()
        name = query.submitter.partition("@")[0]
        found = [(f"{name}@{domain}", client)] if name in owners and query.submitter in (name, f"{name}@{domain}") \
            else []
        if not found:
            client.close()
    if not found:
        raise ScheddError("Collector has no record of schedd/submitter")
    return found


def _show_queue(client, query: QueueQuery, submitter: str | None = None) -> None:
    """One schedd's part of ``q``: fetch, then print in the chosen form."""
    me = client.owner() if query.my_jobs else None
    constraint = query.constraint(me)
    if query.analyze:
        for row in queue_format.sort_rows(client.query_values(constraint, ["ClusterId", "ProcId"])):
            job = "{}.{}".format(*queue_format.job_id(row))
            click.echo(f"\n{job}: {client.analyze(job)}")
        return
    # -factory -totals: the jobs' totals, as 23.9.6's condor_q prints them
    if query.factory and not (query.long or query.json or query.xml or query.custom or query.totals):
        ads = client.factories(constraint)
        name, address = schedd_title(client)
        now = next((ad.get("ServerTime") for ad in ads[:1]), None) or time.time()
        _write("\n".join(["", "", queue_format.header(name, address, now, submitter),
                          *queue_format.factory_table(ads)]) + "\n")
        return
    if query.totals and (query.long or query.json or query.xml or query.custom):
        # condor_q -totals prints the schedd's summary ad in these forms, whatever -attributes says
        ad = _summary_ad(_summary(client, constraint, me), me)
        if query.json:
            _write(json_form([ad]))
        elif query.xml:
            _write(xml_form([ad]))
        elif query.long:
            _write(long_form([ad]))
        else:  # and a newline after it, as 23.9.6 prints one after the summary's line
            _write((query.autoformat.text([ad]) if query.autoformat else "")
                   + (PrintfFormat(query.formats).text([ad]) if query.formats else "") + "\n")
        return
    if query.long or query.json or query.xml or query.custom:
        if query.factory:  # the factories' cluster ads: no proc, no DAG tree
            nodes, ads = [], client.factories(constraint)[:query.limit]
        else:
            found = client.query(constraint, query.projection())[:query.limit]
            nodes = queue_format.print_order(queue_format.link(found, dag=query.dag, batch=False), query.dag)
            ads = [node.row for node in nodes]
        if query.json:
            _write(json_form(ads, query.ad_attributes) if ads else "")  # condor_q -json: nothing for no jobs
        elif query.xml:
            _write(xml_form(ads, query.ad_attributes))
        elif query.long:
            _write(long_form(ads, query.ad_attributes))
        else:
            # condor_q -dag indents the third column of a node job's line, whatever it holds.
            nested = [node.generation if node.dag_parent else None for node in nodes] if query.dag else None
            text = query.autoformat.text(ads, nested, unpadded_last=query.wide == 0) if query.autoformat else ""
            _write(text + (PrintfFormat(query.formats).text(ads) if query.formats else ""))
        return
    rows = [] if query.totals else client.query_values(constraint, query.projection())[:query.limit]
    summary = _summary(client, constraint, me, None if query.totals else rows)
    if query.global_ and not rows and not summary.get("Jobs"):
        return  # condor_q -global shows only the schedds with jobs to show
    name, address = schedd_title(client)
    now = next((r.get("ServerTime") for r in rows[:1] if r.get("ServerTime")), None) or time.time()
    max_width = _max_width(query.wide) if query.layout != "hold" else 0  # 23.9.6 never cuts -hold's lines
    lines = ["", "", queue_format.header(name, address, now, submitter)]
    if query.totals:
        lines += queue_format.totals(summary, me) + [""]
    else:
        if query.layout == "batch":
            lines += queue_format.batch_table(rows, dag=query.dag, partial=query.partial, max_width=max_width,
                                              show_hold=query.global_)
        else:
            context = queue_format.Context(now=now, dag=query.dag and query.layout != "hold",
                                           current_run=query.current_run)
            if query.layout == "run":  # HOST(S) of scheduler universe jobs: a name lookup only -run needs
                context.schedd_host = _host(address)
            if query.layout == "io" and rows:  # only a pool's jobs move files; the embedded schedd's share them
                raise ScheddError("-io: crabtui shows no line for a job that is transferring files; "
                                  "run the pool's condor_q -io")
            lines += queue_format.job_table(rows, query.layout, context, max_width)
        if query.layout not in ("run", "idle", "goodput"):  # goodput's print format has no summary
            lines += [""] + queue_format.totals(summary, me) + [""]
    _write("\n".join(lines) + "\n")


def _summary(client, constraint: str, me: str | None, rows: list | None = None) -> dict[str, int]:
    """The counts condor_q's totals are made of: the query's (the rows', or the schedd's own
    summary of the constraint), all users' (``Allusers*``) and, for the user's own jobs, the
    user's (``My*``)."""
    if rows is None:
        summary = client.summary(constraint)
    else:
        summary = summarize(((r.get("JobStatus"), r.get("JobUniverse")) for r in rows), ())
    everyone = client.summary(f"Owner == {json.dumps(me)}" if me is not None else "false")
    summary.update({k: v for k, v in everyone.items() if k.startswith("Allusers")})
    if me is not None:
        summary.update({"My" + k: v for k, v in everyone.items()
                        if not k.startswith("Allusers") and k not in ("ErrorCode", "ServerTime")})
    return summary


def _summary_ad(summary: dict[str, int], me: str | None) -> classad2.ClassAd:
    """The schedd's summary ad, as condor_q -totals -long (-json, -xml, -af) prints it."""
    ad = classad2.ClassAd(summary)
    ad["ErrorCode"], ad["MyType"] = 0, "Summary"
    ad["ServerTime"] = int(summary.get("ServerTime") or time.time())
    if me is not None:
        ad["MyName"] = me
    return ad


def _max_width(wide: int | None) -> int:
    """condor_q cuts lines to the terminal's width, or -wide:N's N, less one; -wide and a pipe
    do not cut."""
    if wide:
        return wide - 1
    if wide is None and sys.stdout.isatty():
        import shutil  # for a terminal only: a pipe is not cut

        return shutil.get_terminal_size().columns - 1
    return 0


def _host(address: str) -> str:
    """The host name of a schedd's address (HOST(S) of scheduler and local universe jobs)."""
    found = re.match(r"<([0-9.]+):", address)
    if not found:
        return socket.gethostname()
    try:
        return socket.gethostbyaddr(found[1])[0]
    except OSError:
        return found[1]


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------- hold, release, rm

ACT_OPTIONS = [
    Option("totals", 3), Option("constraint", 1, values=1), Option("all", 1), Option("reason", 1, values=1),
    Option("forcex", 1), Option("name", 1, values=1), Option("pool", 1, values=1), Option("help", 1),
]
ACT_UNSUPPORTED = (Option("debug", 1, colon=True, instead="drop it"),
                   Option("long", 1, instead="crabtui q -long JOB shows a job's ad"),
                   Option("addr", 2, instead="name the schedd with -name NAME, as condor_status -schedd lists it"),
                   Option("subcode", 1, instead="give the reason with -reason"), Option("transfer", 2),
                   Option("fast", 2, instead="drop it"), Option("version", 1, instead="crabtui --version"))

# Each tool's words: the action, its past tense in messages, and its default reason.
_WORDS = {JobAction.Hold: ("hold", "held"), JobAction.Release: ("release", "released"),
          JobAction.Remove: ("remove", "marked for removal"),
          JobAction.RemoveX: ("remove", "removed locally (remote state unknown)")}
_FAILED_ONE = {
    "not_found": "Job {} not found",
    "permission_denied": "Permission denied to {verb} job {}",
    "bad_status": {JobAction.Release: "Job {} not held to be released",
                   JobAction.RemoveX: "Job {} not in `X' state to be forcibly removed"},
    "already_done": {JobAction.Hold: "Job {} already held", JobAction.Remove: "Job {} already marked for removal",
                     JobAction.RemoveX: "Job {} already marked for forced removal"},
}


def _act(action: JobAction, tool: str, doc: str):
    """condor_hold, condor_release or condor_rm (rm.cpp): jobs by id are acted on one by one
    and each gets its line; clusters, owners, -constraint and -all together make one
    constraint whose result is one line.  The exit status is 1 when something failed."""

    @click.command(tool, context_settings=RAW, help=doc)
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(ctx: click.Context, args: tuple[str, ...]) -> None:
        try:
            request = ActRequest(list(args), action, tool)
        except ArgumentError as e:
            fail(str(e))
        if request.help:
            click.echo(ctx.get_help())
            return
        try:
            look_up_pool(ctx, request.pool)
            with schedd(ctx, name=request.name, pool=request.pool) as client:
                failed = request.run(client)
        except ScheddError as e:
            fail(str(e))
        sys.exit(1 if failed else 0)

    return command


class ActRequest:
    """condor_hold/release/rm's command line and what it asks the schedd."""

    def __init__(self, argv: list[str], action: JobAction, tool: str):
        self.action, self.tool = action, tool
        self.job_ids: list[str] = []
        self.clusters: list[str] = []  # the tool's "cluster and user" constraint, built in order
        self.cluster_kind: str | None = None  # cluster, user, or complex when several
        self.constraint: str | None = None
        self.constraint_kind: str | None = None
        self.reason = self.name = self.pool = None
        self.help = self.totals = False
        self.errors: list[str] = []
        options = [o for o in ACT_OPTIONS if o.name != "forcex" or action is JobAction.Remove]
        for item in parse(argv, options, tool, unsupported=ACT_UNSUPPORTED):
            self._take(item)
        if not self.help and not self.constraint and not self.clusters and not self.job_ids:
            raise ArgumentError("You did not specify any jobs" + (f" ({'; '.join(self.errors)})" if self.errors else
                                                                 ": give CLUSTER, CLUSTER.PROC, OWNER, -constraint "
                                                                 "EXPR or -all"))

    def _take(self, item: Parsed) -> None:
        if self.constraint_kind == "all" and item.name is None:  # a -constraint after -all replaces it
            raise ArgumentError(f"condor_{self.tool}: can't mix -all with other constraints")
        if item.name is None:
            self._job_or_user(item.arg)
        elif item.name == "constraint":
            self._add_constraint(check_constraint(item.arg, item.values[0]), "simple")
        elif item.name == "all":
            if self.constraint or self.clusters:
                raise ArgumentError(f"condor_{self.tool}: can't mix -all with other constraints")
            self._add_constraint("ClusterId >= 0", "all")
        elif item.name == "forcex":
            self.action = JobAction.RemoveX
        elif item.name in ("reason", "name", "pool"):
            setattr(self, item.name, item.values[0])
        else:
            setattr(self, item.name, True)

    def _job_or_user(self, arg: str) -> None:
        """rm.cpp's procArg: a number is a cluster, ``c.p`` a job, anything else an owner."""
        if re.fullmatch(r"\d+(\.\d*)?|\.\d+", arg):
            cluster, _, proc = arg.partition(".")
            if not cluster or not 0 < int(cluster) <= INT_MAX:  # a cluster id is a C int to the schedd
                self.errors.append(f"Invalid cluster # from {arg}.")
            elif proc and int(proc) > INT_MAX:
                self.errors.append(f"Invalid proc # from {arg}.")
            elif not proc and "." not in arg:
                self._add_cluster(f"ClusterId == {int(cluster)}", "cluster")
            elif proc:
                self.job_ids.append(f"{int(cluster)}.{int(proc)}")
            else:
                self.errors.append(f'Warning: unrecognized "{arg}" skipped.')
        else:
            self._add_cluster(f"Owner == {json.dumps(arg)}", "user")

    def _add_cluster(self, clause: str, kind: str) -> None:
        self.clusters.append(clause)
        self.cluster_kind = kind if len(self.clusters) == 1 else "complex"

    def _add_constraint(self, clause: str, kind: str) -> None:
        """rm.cpp's addConstraint: a second clause wraps both in parentheses."""
        if self.constraint is None or self.constraint_kind == "all":
            self.constraint, self.constraint_kind = clause, kind
        elif self.constraint_kind == "complex":
            self.constraint += f" && ({clause})"
        else:
            self.constraint, self.constraint_kind = f"({self.constraint}) && ({clause})", "complex"

    def run(self, client) -> bool:
        """Do it and print what the tool prints; whether anything failed."""
        failed = bool(self.errors)
        for line in self.errors:
            click.echo(line, err=True)
        verb, past = _WORDS[self.action]
        reason = self.reason or ("via condor_rm -forcex" if self.action is JobAction.RemoveX else f"via condor_{self.tool}")
        if self.job_ids:
            if self.constraint:
                click.echo("Warning, -constraint is ignored for fully qualified job ids", err=True)
            results = [(job, client.act(self.action, _job_constraint(job), reason)) for job in self.job_ids]
            if self.totals:  # the tool's by-id request answers with no totals: it prints zeros
                click.echo(_totals_line(0, 0, 0, 0, 0))
            if not any(result.changed for _, result in results):
                failed = True
                click.echo("", err=True)  # the tools' blank line before the lines of a request that did nothing
            for job, result in results:
                if result.changed:
                    click.echo(f"Job {job} {past}")
                else:
                    click.echo(_failed_one(self.action, job, verb, result, client), err=True)
        if self.clusters:
            self._add_constraint(" || ".join(self.clusters), self.cluster_kind)
        if not self.constraint:
            return failed
        where = {"user": " of user " + self.constraint.partition(" == ")[2],
                 "cluster": " in cluster " + self.constraint.partition(" == ")[2],
                 "all": ""}.get(self.constraint_kind, f" matching constraint ({self.constraint})")
        result = client.act(self.action, self.constraint, reason)
        if self.totals:
            click.echo(_totals_line(result.changed, result.not_found, result.bad_status, result.already_done,
                                    result.permission_denied))
        if result.changed:
            click.echo(f"All jobs{where} have been {past}")
            return failed
        if result.job_ads == 0:
            click.echo(f"condor_{self.tool}:0:There are no jobs in the queue", err=True)  # 23.9.6, its ":0:" too
            return failed
        click.echo(f"\nCouldn't find/{verb} all jobs{where}", err=True)
        return True


def _totals_line(changed: int, not_found: int, bad_status: int, already_done: int, denied: int) -> str:
    return (f"{changed} Succeeded, 0 Failed, {not_found} Not Found, {bad_status} Bad Status, {already_done} Already "
            f"Done, {denied} Permission Denied")


def _job_constraint(job: str) -> str:
    cluster, _, proc = job.partition(".")
    return f"ClusterId == {cluster} && ProcId == {proc}"


def _failed_one(action: JobAction, job: str, verb: str, result, client) -> str:
    """The tool's line for a job by id that was not acted on (dc_schedd.cpp's result strings)."""
    kinds = [kind for kind in ("permission_denied", "bad_status", "already_done") if getattr(result, kind)]
    if not kinds and action in (JobAction.Release, JobAction.RemoveX) and \
            client.query_values(_job_constraint(job), ["JobStatus"]):
        # A pool's schedd releases only the held jobs a constraint matches (forces out only those
        # being removed), and counts none of the others: a job that is there, but not held (not
        # being removed), is what condor_release (condor_rm -forcex) by id calls bad status.
        kinds = ["bad_status"]
    if not kinds and action is JobAction.Hold and client.query_values(f"{_job_constraint(job)} && JobStatus == 4",
                                                                      ["JobStatus"]):
        # A completed job left in the queue (leave_in_queue): 23.9.6's schedd refuses to hold it,
        # counting it nowhere, and condor_hold calls that a denied permission.
        kinds = ["permission_denied"]
    for kind in kinds:
        text = _FAILED_ONE[kind]
        text = text.get(action, "Invalid result for job {}") if isinstance(text, dict) else text
        return text.format(job, verb=verb)
    return _FAILED_ONE["not_found"].format(job)


hold = _act(JobAction.Hold, "hold", "Hold jobs: running ones are stopped and keep their place (like condor_hold).\n\n"
            "\b\nCLUSTER | CLUSTER.PROC | OWNER ... -constraint EXPR -all -reason TEXT -totals -name SCHEDD -pool COLLECTOR")
release = _act(JobAction.Release, "release", "Release held jobs back to idle (like condor_release).\n\n\b\n"
               "CLUSTER | CLUSTER.PROC | OWNER ... -constraint EXPR -all -reason TEXT -totals -name SCHEDD -pool COLLECTOR")
rm = _act(JobAction.Remove, "rm", "Remove jobs from the queue; running ones are killed (like condor_rm).\n\n\b\n"
          "CLUSTER | CLUSTER.PROC | OWNER ... -constraint EXPR -all -reason TEXT -totals -forcex -name SCHEDD "
          "-pool COLLECTOR\n-forcex: forget jobs already being removed (a DAGMan still running FINAL).")


# ---------------------------------------------------------------------------------------- history

HISTORY_OPTIONS = [
    Option("long", 1), Option("jsonl", 5), Option("json", 4), Option("xml", 3), Option("wide", 1, colon=True),
    Option("match", 1, values=1),
    Option("limit", 3, values=1), Option("attributes", 2, values=1), Option("help", 1), Option("format", 1, values=2),
    Option("constraint", 1, values=1), Option("name", 1, values=1), Option("pool", 1, values=1),
    Option("autoformat", 5, colon=True), Option("af", 2, colon=True), Option("backwards", 1), Option("forwards", 4),
    Option("since", 4, values=1), Option("completedsince", 3, values=1), Option("file", 2, values=1),
    Option("userlog", 1, values=1), Option("scanlimit", 4, values=1),
]
HISTORY_UNSUPPORTED = ()


def _since(value: str) -> classad2.ExprTree:
    """condor_history -since: a job id (stop at that job) or an expression (stop at the first
    job it is true for)."""
    found = JOB_ID.fullmatch(value)
    if found:
        text = (f"ClusterId == {found[1]} && ProcId == {found[2]}" if found[2] is not None
                else f"ClusterId == {found[1]}")
        return classad2.ExprTree(text)
    try:
        return classad2.ExprTree(value)
    except Exception:
        raise ArgumentError(f"invalid -since constraint: {value}: constraint must be a job-id, or expression.") \
            from None


def _is_true(expr: classad2.ExprTree, ad: classad2.ClassAd) -> bool:
    try:
        return expr.eval(ad) is True
    except Exception:  # an expression that cannot be evaluated selects nothing, as in a query
        return False


def _project(ad: classad2.ClassAd, names: list[str]) -> classad2.ClassAd:
    wanted = {n.lower() for n in names}
    return classad2.ClassAd({k: ad.lookup(k) for k in ad.keys() if k.lower() in wanted})


@click.command(context_settings=RAW)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def history(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Show jobs that left the queue, newest first, as condor_history does.

    \b
    [CLUSTER | CLUSTER.PROC | OWNER]... -constraint EXPR -match N (-limit N) -backwards -forwards
    -since JOBID|EXPR -completedsince TIME -scanlimit N -long -attributes A,B -json -jsonl -xml -af[:jlhVr,tng] EXPR...
    -format FMT EXPR
    -name SCHEDD -pool COLLECTOR -file HISTORY_FILE -userlog USER_LOG
    -since: stop at that job (or the first job EXPR is true for), newest first; -completedsince:
    stop at the first job that completed at or before TIME; -scanlimit: look at the N newest jobs
    only (the N oldest with -forwards); -jsonl: one JSON ad a line; -file: read an
    HTCondor history file (the schedd's HISTORY) instead of asking the schedd; -userlog: the jobs
    of a job event log that terminated or were aborted, in their order of submission.
    """
    ors, ands, match, attributes = [], [], -1, []
    autoformat, formats, long_, forwards = None, [], False, False
    show_json = show_help = one_a_line = show_xml = False
    name = pool = since = history_file = userlog = None
    width = 0  # -wide:N's N: the default table's lines are cut to N characters
    scan_limit = 0  # -scanlimit N: the jobs looked at, whatever chooses among them
    try:
        for item in parse(list(args), HISTORY_OPTIONS, "history", greedy=("af", "autoformat"),
                          unsupported=HISTORY_UNSUPPORTED):
            if item.name is None:
                found = JOB_ID.match(item.arg)
                if found and found[2] is not None:
                    ors.append(f"(ClusterId == {found[1]} && ProcId == {found[2]})")
                elif found:
                    ors.append(f"(ClusterId == {found[1]})")
                else:
                    ors.append(f"(Owner == {json.dumps(item.arg)})")
            elif item.name == "constraint":
                ands.append(f"({check_constraint(item.arg, item.values[0])})")
            elif item.name in ("match", "limit", "scanlimit"):
                if not item.values[0].isdigit():
                    raise ArgumentError(f"{item.arg} {item.values[0]}: give a number of jobs")
                if item.name == "scanlimit":
                    scan_limit = int(item.values[0])
                else:
                    match = int(item.values[0])
            elif item.name in ("af", "autoformat"):
                autoformat = (autoformat.then(item.values, item.options or "") if autoformat
                              else AutoFormat(item.values, item.options or "").with_printf(formats, before=True))
                formats = []  # on the -af's line from now on, as condor_q prints them
            elif item.name == "format" and autoformat:
                autoformat.with_printf([(item.values[0], item.values[1])])
            elif item.name == "format":
                formats.append((item.values[0], item.values[1]))
            elif item.name == "attributes":
                attributes += [a for a in re.split(r"[,\s]+", item.values[0]) if a]
            elif item.name in ("name", "pool"):
                name, pool = (item.values[0], pool) if item.name == "name" else (name, item.values[0])
            elif item.name in ("backwards", "forwards"):  # the last one given wins, as in condor_history
                forwards = item.name == "forwards"
            elif item.name == "since":
                since = _since(item.values[0])
            elif item.name == "completedsince":  # condor_history: -since 'CompletionDate <= TIME'
                try:
                    since = classad2.ExprTree(f"CompletionDate <= {item.values[0]}")
                except Exception:
                    raise ArgumentError(f"'{item.values[0]}' not valid parameter for -completedsince; give a "
                                        "time in seconds since 1970: -completedsince $(date -d yesterday +%s)") from None
            elif item.name == "wide" and item.options is not None:  # a later -wide alone keeps the width
                width = int(item.options) if item.options.isdigit() else 0
            elif item.name == "file":
                history_file = item.values[0]
            elif item.name == "userlog":
                userlog = item.values[0]
            else:
                long_ = long_ or item.name == "long"
                show_json = show_json or item.name == "json"
                show_xml = show_xml or item.name == "xml"
                one_a_line = one_a_line or item.name == "jsonl"
                show_help = show_help or item.name == "help"
    except (ArgumentError, FormatError) as e:
        fail(str(e))
    if show_help:
        click.echo(ctx.get_help())
        return
    constraint = " && ".join(ands + ([f"({' || '.join(ors)})"] if ors else [])) or "true"
    if autoformat or formats:
        custom = [f for f in (autoformat, formats and PrintfFormat(formats)) if f]
        projection = sorted(set(attributes).union(*(f.attributes for f in custom)))
        # -long, -json and -xml then show what the expressions read and the -attributes, as condor_history does
        attributes = sorted(set(attributes).union(*(f.references for f in custom)))
    elif long_ or show_json or one_a_line or show_xml:
        projection = attributes
    else:
        projection = list(queue_format.HISTORY_PROJECTION)
    try:
        if userlog is not None:  # 23.9.6 lists them as submitted, whatever -limit, -since or -forwards say
            ads = _from_userlog(userlog, constraint)
            ads = [_project(ad, projection) for ad in ads] if projection else ads
        elif since is not None or history_file is not None or scan_limit:
            ads = _scan(ctx, name, pool, history_file, constraint, since, scan_limit, forwards)
            ads = [_project(ad, projection) for ad in ads] if projection else ads
            ads = (ads[::-1] if forwards else ads)
            ads = ads[:match] if match >= 0 else ads
        else:
            with schedd(ctx, name=name, pool=pool) as client:
                if forwards:  # the history read from its oldest job: the first N to leave the queue
                    ads = client.history(constraint, projection, match=-1)[::-1]
                    ads = ads[:match] if match >= 0 else ads
                else:
                    ads = client.history(constraint, projection, match=match)
    except ScheddError as e:
        fail(str(e))
    if one_a_line:  # one ad a line, as condor_history -jsonl
        _write(json_lines(ads, attributes))
    elif show_json:
        _write(json_form(ads, attributes, history=True))
    elif show_xml:
        _write(xml_form(ads, attributes, history=True))
    elif long_:
        _write(long_form(ads, attributes, by_case=True))
    elif autoformat or formats:
        _write((autoformat.text(ads, heading_first=True) if autoformat else "")
               + (PrintfFormat(formats).text(ads) if formats else ""))
    else:
        _write("".join((line[:width] if width else line) + "\n" for line in queue_format.history_table(ads)))


def _from_userlog(path: str, constraint: str) -> list[classad2.ClassAd]:
    """condor_history -userlog: the ads of a log's terminated and aborted jobs that match."""
    import getpass

    from engine.schedd.local.userlog import history_ads

    try:
        chosen = classad2.ExprTree(constraint)
    except Exception:
        raise ScheddError(f"-constraint {constraint}: not a ClassAd expression") from None
    try:
        ads = history_ads(path, getpass.getuser())
    except OSError as e:
        raise ScheddError(str(e)) from None
    return [ad for ad in ads if _is_true(chosen, ad)]


def _scan(ctx: click.Context, name, pool, history_file: str | None, constraint: str,
          since: classad2.ExprTree | None, scan_limit: int = 0, forwards: bool = False) -> list[classad2.ClassAd]:
    """The jobs condor_history reads, newest first, up to (not with) the -since job: every job
    is looked at for -since, the constraint only chooses which are shown.  ``scan_limit``: only
    the newest jobs (the oldest ``forwards``) are read, as condor_history -scanlimit reads them."""
    if history_file is not None:
        from engine.schedd.history_file import read_history_file

        ads = read_history_file(history_file)
    else:
        with schedd(ctx, name=name, pool=pool) as client:
            ads = client.history("true", [], match=scan_limit if scan_limit and not forwards else -1)
    if scan_limit:
        ads = ads[-scan_limit:] if forwards else ads[:scan_limit]
    try:
        chosen = classad2.ExprTree(constraint)
    except Exception:
        raise ScheddError(f"-constraint {constraint}: not a ClassAd expression") from None
    shown = []
    for ad in ads:
        if since is not None and _is_true(since, ad):
            break
        if _is_true(chosen, ad):
            shown.append(ad)
    return shown
