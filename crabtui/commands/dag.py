"""``crabtui dag``: DAGMan DAG files."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time

import click

from crabtui.commands.backend import again, backend, embedded_only, fail, schedd
from engine.schedd.api import JobStatus, ScheddError
from engine.schedd.local.submit import parse_raw_arguments


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
    from engine.dagman.runner import STOP_SIGNALS

    embedded_only(ctx, "dag run runs the embedded DAGMan in the foreground; on an HTCondor pool, "
                       "`crabtui --backend htcondor dag submit` queues the pool's condor_dagman")
    state = ctx.find_root().obj["state_dir"]
    argv = _dagman_argv(list(args))
    # Ctrl-C while the DAG is read waits for DAGMan's handler: a graceful stop, recovered by the next run
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        code = dagman_main([*argv, *(["--state-dir", state] if state else [])], prog=ctx.command_path)
    finally:  # a daemon this process starts later must not inherit them blocked
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    sys.exit(code)


# condor_submit_dag's flags (csd_args' names) as the foreground DAGMan spells them; the DAGMan
# job's own (-append, -batch-name, -notification, -no_submit...) mean nothing to `dag run`.
_DAGMAN_SPELLING = {
    "-MaxJobs": "-maxjobs", "-MaxIdle": "-maxidle", "-MaxPre": "-maxpre", "-MaxPost": "-maxpost",
    "-MaxHold": "-maxhold", "-Config": "-config", "-Force": "-force", "-f": "-force", "-Dag": "-Dag",
    "-DoRescueFrom": "-dorescuefrom", "-AutoRescue": "-AutoRescue", "-AlwaysRunPost": "-AlwaysRunPost",
    "-DoRecovery": "-DoRecovery", "-Priority": "-priority", "-load_save": "-load_save",
    "-outfile_dir": "-outfile_dir", "-Debug": "-debug", "-suppress_notification": "-suppress_notification",
    "-Lockfile": "-Lockfile",  # condor_dagman's own, which condor_submit_dag writes into the .condor.sub
}
# Taken and left alone, as by `dag submit`: the DAG runs in its own directory either way.
_NO_EFFECT = ("-UseDagDir", "-no_recurse", "-do_recurse", "-Verbose", "-v", "-AllowVersionMismatch")


def _dagman_argv(args: list[str]) -> list[str]:
    """`dag run`'s words with each option spelt as DAGMan's parser takes it: in any case and
    shortened as condor_submit_dag reads them (``-MaxJobs 2``, ``-maxj 2``, as a .condor.sub's
    arguments write them); an option of the DAGMan job alone is refused in one line."""
    from engine.dagman.csd_args import find_flag, wants_help

    argv = []
    for word in args:
        flag = find_flag(word) if word.startswith("-") and not word.startswith("--") else None
        if wants_help(word):
            argv.append("--help")
        elif flag is None:
            argv.append(word)
        elif flag.name in _DAGMAN_SPELLING:
            argv.append(_DAGMAN_SPELLING[flag.name])
        elif flag.name not in _NO_EFFECT:
            fail(f"{word}: this condor_submit_dag option sets up the DAGMan job that `crabtui dag submit` queues; "
                 "`crabtui dag run` runs DAGMan in the foreground: leave it out, or submit the DAG")
    return argv


@dag.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def submit(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Queue DAGMan for DAG_FILE as a scheduler-universe job (like condor_submit_dag).

    \b
    crabtui dag submit [OPTIONS] DAG_FILE
    Options are condor_submit_dag's, shortened and in any case as it takes them (-maxj 2 is
    -maxjobs 2, -no_s is -no_submit); --NAME in full works too:
      -maxjobs N  -maxidle N  -maxpre N  -maxpost N  -maxhold N   DAGMan's throttles
      -force (-f)          overwrite an earlier run's files; ignore its rescue DAGs
      -update_submit       overwrite an earlier run's DAG_FILE.condor.sub only
      -DoRecovery          rebuild the DAG's state from DAG_FILE.nodes.log, as DAGMan does
                           after a crash (an earlier run's files may stay)
      -dorescuefrom N      run from rescue DAG number N
      -autorescue 0|1      0: run the DAG from the start, not from its newest rescue DAG
      -load_save FILE      run from a SAVE_POINT_FILE (a bare name is looked for in save_files/)
      -config FILE         a DAGMan configuration file (DAGMAN_* knobs)
      -AlwaysRunPost       run POST scripts even after a failed PRE script
      -priority N          added to every node job's priority
      -batch-name NAME     the batch name condor_q shows (default FILE+ID)
      -append COMMAND      a submit command added to DAG_FILE.condor.sub (repeatable)
      -insert_sub_file F   the submit commands of file F added to DAG_FILE.condor.sub
      -notification WHEN   never, always, complete or error: the DAGMan job's e-mail
      -suppress_notification  node jobs send no e-mail, whatever their submit files say
      -outfile_dir DIR     write DAG_FILE.dagman.out in DIR
      -no_submit           write DAG_FILE.condor.sub but queue nothing
      -debug LEVEL         DAGMan's verbosity in DAG_FILE.dagman.out, 0 to 7
      -insert_env 'K=V;K2=V2'  set variables in DAGMan's environment (and its scripts')
      -include_env A,B     pass these of your variables to DAGMan too
      -import_env          pass your whole environment to DAGMan
      -dagman PATH         (--backend htcondor) the pool's condor_dagman to run
      -usedagdir, -no_recurse, -do_recurse, -verbose and -AllowVersionMismatch are taken and
      change nothing here: the DAG always runs in its own directory, and sub-DAG files are
      written when their nodes are submitted.
    -help (-h, --help) shows this text; the rest of condor_submit_dag's options are refused, saying
    what to do instead.

    The DAG runs in the schedd after this command returns: follow it with
    `crabtui q -nobatch -dag`, `crabtui dag status ID`, or its .dagman.out file.
    """
    from engine.dag import DagError
    from engine.dag.rescue import rescue_files
    from engine.dagman.csd_args import ArgumentError, parse, wants_help, wants_version
    from engine.dagman.submit_dag import (condor_dagman, files, format_condor_dagman_sub, format_condor_sub,
                                          prepare, write_condor_sub)

    if any(wants_help(word) for word in args):
        click.echo(ctx.get_help())
        ctx.exit(0)
    if any(wants_version(word) for word in args):
        from crabtui import __version__
        click.echo(f"crabtui {__version__}")
        ctx.exit(0)
    try:
        given = parse(list(args))
        dag_file = _one_dag_file(given, list(args))
        options = _submit_options(given, backend(ctx))
    except ArgumentError as e:
        fail(str(e))
    try:
        with schedd(ctx) as client:
            if backend(ctx) == "htcondor" and not given.has("-no_submit"):
                _check_dagman_can_write(client, dag_file)
            if backend(ctx) == "htcondor":  # a .condor.sub written to queue later crashes the same
                _check_no_done_line(dag_file)
            renamed = [path for _, path in rescue_files(dag_file)] if options.force else []
            rescue = prepare(dag_file, options)
            if backend(ctx) == "htcondor":
                text = format_condor_dagman_sub(dag_file, options, given.last("-DAGMan") or condor_dagman(),
                                                client.condor_version)
            else:
                text = format_condor_sub(dag_file, options, client.state.path)
            write_condor_sub(dag_file, text)
            if not given.has("-no_submit"):
                result = client.submit(text, submit_file=dag_file + ".condor.sub",
                                       cwd=os.path.dirname(os.path.abspath(dag_file)))
    except DagError as e:
        for error in e.errors:
            click.echo(f"ERROR: {error}", err=True)
        sys.exit(1)
    except (OSError, ScheddError) as e:
        fail(f"{dag_file}: {e}")
    rule = "-" * 71
    click.echo("")  # condor_submit_dag 23.9.6 starts with an empty line, then says what -force renamed
    if options.force:
        click.echo("\n".join(["Renaming rescue DAGs newer than number 0", *(f"Renaming {path}" for path in renamed)]),
                   err=True)
    if rescue is not None:
        click.echo(f"Running rescue DAG {rescue}")
    click.echo(rule)
    for label, path in files(dag_file, options).items():
        click.echo(f"{label:<51}: {path}")
    if given.has("-no_submit"):  # the command with this one's schedd, else it queues DAGMan elsewhere
        click.echo(f"\n-no_submit given, not submitting DAG to HTCondor. You can do this with:\n"
                   f"\"{again(ctx)} job submit {dag_file}.condor.sub\"\n{rule}")
        return
    click.echo(f"\nSubmitting job(s).\n1 job(s) submitted to cluster {result.cluster}.\n{rule}")


def _check_dagman_can_write(client, dag_file: str) -> None:
    """A pool's schedd starts DAGMan as the Owner of its job, in the DAG's directory; where that
    user cannot write, the DAGMan job waits in the queue forever and only the schedd's log says why."""
    from engine.schedd.scheduler_start import not_writable

    owner = client.owner()
    if denied := not_writable(os.path.dirname(os.path.abspath(dag_file)), owner):
        fail(f"{dag_file}: the pool runs DAGMan as {owner}, who cannot {denied}, so it would never start; "
             f"submit the DAG from a directory {owner} can write")


def _check_no_done_line(dag_file: str) -> None:
    """The pool's DAGMan crashes on a DONE line as it starts and its job is queued again for ever."""
    from engine.dag import parse_file
    from engine.dag.parser import DONE_LINE_CRASH

    for warning in parse_file(dag_file).warnings:
        if DONE_LINE_CRASH in warning.message:
            fail(str(warning))


def _one_dag_file(given, argv: list[str]) -> str:
    """The one DAG file crabtui runs; several, or none, are refused saying what to do."""
    from engine.dagman.csd_args import ArgumentError, find_flag

    if not given.dag_files:
        raise ArgumentError("name the DAG file to submit: crabtui dag submit [OPTIONS] DAG_FILE")
    if len(given.dag_files) > 1:
        first = given.dag_files[0]
        hint = "submit each on its own, or join them in one DAG with SUBDAG EXTERNAL or SPLICE"
        before = argv[argv.index(first) - 1] if argv.index(first) else ""
        flag = find_flag(before) if before.startswith("-") else None
        if flag is not None and flag.value is None and not os.path.isfile(first):  # -a 'My.X = 1': -AllowVersionMismatch
            hint = (f"{before} is {flag.name}, which takes no value, so {first!r} was read as a DAG file; "
                    "for a submit command write -append COMMAND (at least -ap)")
        raise ArgumentError(f"{' '.join(given.dag_files)}: crabtui dag submit runs one DAG file; {hint}")
    return given.dag_files[0]


def _submit_options(given, backend_name: str):
    """condor_submit_dag's options as :class:`DagSubmitOptions`; the directory and files they
    name must exist."""
    from engine.dagman.csd_args import ArgumentError
    from engine.dagman.submit_dag import DagSubmitOptions, read_insert_sub_file

    if given.has("-DAGMan") and backend_name != "htcondor":
        raise ArgumentError(f"{given.typed['-DAGMan']}: the embedded engine runs its own DAGMan; "
                            "-dagman chooses the condor_dagman of an HTCondor pool (--backend htcondor)")
    outfile_dir, config = given.last("-outfile_dir"), given.last("-Config")
    if outfile_dir and not os.path.isdir(outfile_dir):
        raise ArgumentError(f"{given.typed['-outfile_dir']} {outfile_dir}: there is no such directory; "
                            "create it first or name an existing one")
    if config and not os.path.isfile(config):
        raise ArgumentError(f"{given.typed['-Config']} {config}: there is no such file; name the DAGMan config file")
    inserted = given.last("-insert_sub_file")
    try:
        lines = read_insert_sub_file(inserted) if inserted else ()
    except OSError as e:
        raise ArgumentError(f"{given.typed['-insert_sub_file']} {inserted}: cannot read it ({e.strerror}); "
                            "name a file of submit commands") from None
    notification = given.last("-Notification")
    rescue = given.last("-DoRescueFrom")
    insert_env = [pair.strip() for value in given.values.get("-insert_env", ()) for pair in value.split(";")
                  if pair.strip()]
    for pair in insert_env:
        if "=" not in pair or pair.startswith("="):
            raise ArgumentError(f"{given.typed['-insert_env']} {pair!r}: give KEY=VALUE pairs separated by ';', "
                                "e.g. -insert_env 'ANALYSIS=ttbar;RUN=7'")
    include_env = [name for value in given.values.get("-include_env", ()) for name in value.replace(",", " ").split()]
    return DagSubmitOptions(
        max_jobs=given.number("-MaxJobs"), max_idle=given.number("-MaxIdle") if given.has("-MaxIdle") else None,
        max_pre=given.number("-MaxPre"), max_post=given.number("-MaxPost"), max_hold=given.number("-MaxHold"),
        force=given.has("-Force") or given.has("-f"), do_rescue_from=int(rescue) if rescue and int(rescue) else None,
        always_run_post=given.has("-AlwaysRunPost"), batch_name=given.last("-Batch-Name"),
        config=os.path.abspath(config) if config else None, priority=given.number("-Priority"),
        append=(*lines, *given.values.get("-Append", ())),
        notification=notification or None,  # as typed, as condor_submit_dag writes it
        outfile_dir=os.path.abspath(outfile_dir) if outfile_dir else None, load_save=given.last("-load_save"),
        update_submit=given.has("-update_submit"),
        auto_rescue=given.number("-AutoRescue") != 0 if given.has("-AutoRescue") else True,
        import_env=given.has("-import_env"), include_env=tuple(include_env), insert_env=tuple(insert_env),
        debug=int(given.last("-Debug")) if given.has("-Debug") else None, do_recovery=given.has("-DoRecovery"),
        suppress_notification=given.has("-suppress_notification"))


@dag.command()
@click.argument("dag", metavar="DAG_FILE|ID")
@click.pass_context
def halt(ctx: click.Context, dag: str) -> None:
    """Halt a DAG: no new node starts, running jobs and POST scripts finish, then the FINAL
    node runs and DAGMan writes a rescue DAG and exits with DAG status 6."""
    from engine.dagman.halt import halt_file
    from engine.dagman.halt import halt as halt_dag

    dag_file = _dag_file(ctx, dag, "nothing to halt")
    _no_dagman(dag_file, "nothing to halt")
    try:
        halt_dag(dag_file)
    except OSError as e:
        fail(f"cannot write {halt_file(dag_file)} from this machine ({e.strerror or e}): halt the DAG where its "
             f"directory is, or hold its DAGMan job instead (`{again(ctx)} hold {dag}`), which also stops new nodes")
    click.echo(f"Halted the DAG ({halt_file(dag_file)}); `{again(ctx)} dag unhalt {dag}` resumes it until it has drained.")


@dag.command()
@click.argument("dag", metavar="DAG_FILE|ID")
@click.pass_context
def unhalt(ctx: click.Context, dag: str) -> None:
    """Resume a halted DAG that has not finished draining."""
    from engine.dagman.halt import halt_file
    from engine.dagman.halt import unhalt as unhalt_dag
    from engine.dagman.progress import DagWatcher

    dag_file = _dag_file(ctx, dag, "nothing to unhalt")
    if not os.path.isdir(os.path.dirname(os.path.abspath(dag_file))):
        fail(f"cannot remove {halt_file(dag_file)} from this machine: its directory is not here; unhalt the DAG "
             "where its directory is")
    rescue = f"`{again(ctx)} dag submit {dag_file}` runs its rescue DAG"
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

    ad, start_error = fresh_ad(_dagman_ad(ctx, dagman_id))
    click.echo(format_dag_status(ad, time.time(), width=shutil.get_terminal_size().columns // 2,
                                 start_error=start_error))


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


def _dag_file(ctx: click.Context, dag: str, then: str) -> str:
    """A DAG file given by name, or the one DAGMan job ``dag`` runs; stop (exit 1, saying
    ``then``) if that job has left the queue, whose lock file a DAGMan held and then removed
    leaves behind."""
    if not dag.isdigit():
        if not os.path.isfile(dag):
            fail(f"{dag}: no such DAG file (give a DAG file or a DAGMan job id)")
        return dag
    ad = _dagman_ad(ctx, int(dag))
    argv = parse_raw_arguments(str(ad.get("Arguments", "")))
    name = argv[argv.index("-Dag") + 1] if "-Dag" in argv[:-1] else argv[-1]
    dag_file = os.path.join(str(ad["Iwd"]), name)
    if ad.get("JobStatus") in (JobStatus.REMOVED, JobStatus.COMPLETED):
        fail(f"no DAGMan is running {dag_file}: its DAGMan job {dag} has left the queue "
             f"({JobStatus(ad['JobStatus']).name.lower()}); {then}")
    return dag_file


@dag.command()
@click.argument("dag_file", type=click.Path(dir_okay=False))
@click.option("--json", "json_output", is_flag=True, help="Print the parsed model and lifted graph as JSON.")
def check(dag_file: str, json_output: bool) -> None:
    """Check DAG_FILE as DAGMan would read it, with its CONFIG file's DAGMAN_* values.

    A valid DAG prints a one-line summary and exits 0; otherwise every problem is printed on
    stderr as FILE:LINE: message, and the exit status is 1.
    """
    from engine.dag import DagError, load_graph, parse_file
    from engine.dag.summary import as_json, summary_line
    from engine.dagman.config import config_file, knob_values

    try:
        graph = load_graph(parse_file(dag_file))
        knob_values(config_file(graph.dag.config, None, dag_file))
    except DagError as e:
        for warning in e.warnings:
            click.echo(f"{warning.location}: warning: {warning.message}", err=True)
        for error in e.errors:
            click.echo(str(error), err=True)
        sys.exit(1)
    for warning in graph.dag.warnings:
        click.echo(f"{warning.location}: warning: {warning.message}", err=True)
    for line in graph.overridden:  # a splice's own MAXJOBS that a higher level's replaces
        if not line.endswith(" value of -1"):  # not a global category the splice only uses
            click.echo(f"{dag_file}: {line[0].lower()}{line[1:]}", err=True)
    click.echo(json.dumps(as_json(graph), indent=2) if json_output else summary_line(graph))
