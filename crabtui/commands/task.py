"""``crabtui task``: CRAB3 tasks (crab submit, crab status, crab kill, crab resubmit, crab tasks).

On the embedded engine the commands only record what the user wants in the task table; the task
worker beside the embedded schedd carries it out, as CRAB's REST server and TaskWorker share the
work.  On a pool (``--backend htcondor``) each command carries the table's pending commands out
itself, against the pool's schedd, before it answers (:mod:`engine.crab.taskworker.pool`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click

from crabtui.commands.backend import again, backend, fail, schedd
from engine.schedd.api import ScheddError


def site_slots(client, info: dict) -> dict[str, dict[str, int]]:
    """Each site of the embedded pool with its largest slot (``cpus``, ``memory``), as the daemon
    says in ``info`` (its ping); a daemon that does not say runs another crabtui's code, and is
    named with the way out."""
    sites = info.get("sites")
    if isinstance(sites, dict) and all(isinstance(size, dict) and isinstance(size.get("cpus"), int)
                                       and isinstance(size.get("memory"), int) for size in sites.values()):
        return sites
    raise ScheddError(f"the schedd daemon of {client.state.path} (pid {info.get('pid', '?')}) does not say which "
                      f"sites and slots its pool has: it runs another version of crabtui. Stop it with 'crabtui "
                      f"--state-dir {client.state.path} pool stop' (its jobs run again when it restarts) and submit "
                      f"again.")


DEFAULT_CONFIG = "crabConfig.py"  # what crab submit reads when no configuration is given
_RX_PARAMETER_VALUE = re.compile(r"[A-Za-z]+\.[A-Za-z]+=")  # crab submit's Section.parameter=value arguments


def task_argument(command):
    """TASK as crab's commands take it: positional or ``--task``, the task's full name or its
    requestName, or crab's project directory (``-d/--dir crab_projects/crab_<requestName>``, or a
    positional path), which names the task of that requestName.  The project directory need not
    exist: crabtui keeps each task under its state directory, not in General.workArea.  No task at
    all is the last one submitted or named in the state directory, as crab uses the project
    directory of its last command (:func:`_named`)."""

    @functools.wraps(command)
    def run(*args, name: str | None, project_dir: str | None, task_name: str | None, **kwargs):
        given = [n for n in (name, project_dir, task_name) if n is not None]
        if not given:
            return command(*args, name=None, **kwargs)  # the last task: resolved by _named
        if len(given) != 1:
            fail("give one task: TASK (its name or requestName), -d/--dir crab_projects/crab_<requestName> "
                 "(crab's project directory) or --task NAME; got more than one"
                 f"; see '{click.get_current_context().command_path} --help'")
        if project_dir is not None or "/" in given[0]:
            directory = os.path.basename(given[0].rstrip("/"))
            if not directory.startswith("crab_") or directory == "crab_":
                fail(f"{given[0]}: crab's project directory of a task is named crab_<requestName> "
                     "(General.workArea/crab_<General.requestName>); give that, or the task's name")
            given[0] = directory[len("crab_"):]
        return command(*args, name=given[0], **kwargs)

    run = click.option("--task", "task_name", metavar="NAME", help="The task's full name (as crab's --task).")(run)
    run = click.option("-d", "--dir", "project_dir", metavar="DIR",
                       help="crab's project directory, crab_projects/crab_<requestName>: the task of that "
                            "requestName.")(run)
    return click.argument("name", metavar="[TASK]", required=False)(run)


def crab_options(command):
    """crab's options common to its commands (CRABOptParser.addCommonOptions): ``--instance``, the
    CRAB server (one of CRAB's, checked as crab checks it; there is no server here), and
    ``--proxy``, the grid proxy (there is no grid credential here): a crab command line pasted as it
    is works, and they change nothing."""

    @functools.wraps(command)
    def run(*args, instance: str | None, proxy: str | None, **kwargs):
        from engine.crab.client.config import SERVICE_INSTANCES

        if instance is not None and instance not in SERVICE_INSTANCES:
            fail(f'Invalid value "{instance}" for --instance; valid values are {", ".join(SERVICE_INSTANCES)} '
                 f"('prod' is crab's default; crabtui contacts no CRAB server, so any valid value does the same)")
        return command(*args, **kwargs)

    run = click.option("--proxy", metavar="FILE",
                       help="crab's grid proxy: accepted, and unused (no grid credential here).")(run)
    return click.option("--instance", metavar="NAME",
                        help="crab's CRAB server instance (prod, preprod, ...): checked, and unused.")(run)


@contextmanager
def _tasks(ctx: click.Context) -> Iterator[tuple]:
    """The task table, its state directory and the schedd of the tasks.  The embedded schedd is
    started (and with it the task worker); on a pool the table's pending commands are carried
    out first."""
    from engine.crab.taskworker.pool import work as work_on_pool
    from engine.crab.taskworker.taskdb import TaskDB
    from engine.state import state_dir

    try:
        with schedd(ctx) as client:
            if backend(ctx) == "htcondor":
                state = state_dir(ctx.find_root().obj["state_dir"])
                work_on_pool(state, client)
            else:
                client.ping()
                state = client.state
            db = TaskDB(state.tasks)
            try:
                yield db, state, client
            finally:
                db.close()
    except ScheddError as e:
        fail(str(e))


def _carry_out(ctx: click.Context, state, client) -> None:
    """On a pool, carry out at once what the command recorded (the embedded worker does it within
    a second)."""
    from engine.crab.taskworker.pool import work as work_on_pool

    if backend(ctx) == "htcondor":
        work_on_pool(state, client)


def _named(ctx: click.Context, db, state, name: str | None, *, quiet: bool = False):
    """The task ``name`` names, or with no name the last one submitted or named in this state
    directory, said as crab says it ("Will use CRAB project directory ..."; on stderr if
    ``quiet``, when stdout is JSON); it becomes the last task."""
    from engine.crab.client.last_task import recall, remember
    from engine.crab.taskworker.taskdb import TaskError

    if name is None:
        name = recall(state)
        if name is None:
            fail("give one task: TASK (its name or requestName), -d/--dir crab_projects/crab_<requestName> "
                 f"(crab's project directory) or --task NAME; no task was submitted or named in {state.path} yet "
                 f"for the command to use, as crab uses its last project directory; see '{again(ctx)} task list'")
        try:
            task = db.get(name)
        except TaskError:
            fail(f"the last task submitted or named in {state.path}, {name}, is no longer there; give one "
                 f"task: TASK, -d/--dir or --task NAME (see '{again(ctx)} task list')")
        click.echo(f"Will use CRAB project directory {task.task_dir} (task {task.name})", err=quiet)
    else:
        try:
            task = db.get(name)
        except TaskError as e:
            fail(str(e))
    remember(state, task.name)
    return task


class CrabCommands(click.Group):
    """The task commands, also under the short names crab gives them (``crab sub``, ``crab st``)."""

    SHORT_NAMES = {"sub": "submit", "st": "status", "rep": "report"}

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, self.SHORT_NAMES.get(name, name))


@click.group(cls=CrabCommands)
def task() -> None:
    """Submit, list, follow, resubmit and kill CRAB3 tasks, and report what they processed, as crab does (its
    short names sub, st and rep work too)."""


@task.command(context_settings={"ignore_unknown_options": True})
@click.argument("config", metavar="[CONFIG]", required=False, type=click.Path(dir_okay=False))
@click.argument("script_args", metavar="[ARGS]...", nargs=-1, type=click.UNPROCESSED)
@click.option("-c", "--config", "config_option", metavar="FILE", type=click.Path(dir_okay=False),
              help="CONFIG, as crab submit -c takes it.")
@click.option("--multicrab", is_flag=True,
              help="Run CONFIG as a script, as 'python CONFIG ARGS' does, and submit every config it passes to "
                   "crabCommand('submit') (also from the processes it starts).")
@crab_options
@click.pass_context
def submit(ctx: click.Context, config: str | None, script_args: tuple[str, ...], config_option: str | None,
           multicrab: bool) -> None:
    """Submit the task CONFIG describes (CRAB's TOML or crabConfig.py; like crab submit).

    CONFIG is crabConfig.py in the current directory if not given, as for crab submit.  A
    crabConfig.py that calls crabCommand('submit', config=X) as it loads submits each X; with
    --multicrab its __main__ block runs too (put ARGS after -- if they look like crabtui's options).
    """
    from engine.crab.client.config import ConfigError, load_config, run_crab_config
    from engine.crab.client.crab_config_py import SubmitFailed

    if config_option is not None and multicrab and _scripts_own_c(config, config_option):
        script_args = ("-c", config_option, *script_args)  # CRAB's multicrab example: -c/--crabCmd CMD
    elif config_option is not None:  # crab submit -c FILE: what follows is the script's
        script_args = (config, *script_args) if config is not None else script_args
        config = config_option
    if config is None:
        config = DEFAULT_CONFIG
        if not os.path.exists(config):
            fail(f"no configuration given, and there is no {DEFAULT_CONFIG} (crab submit's default) in "
                 f"{os.getcwd()}; give the file: crabtui task submit FILE (or -c FILE).")
    path = os.path.abspath(config)
    overrides: tuple[str, ...] = ()
    if script_args and not multicrab:
        if not all(_RX_PARAMETER_VALUE.match(a) for a in script_args):
            fail(f"{path}: arguments after the configuration ({' '.join(script_args)}) are for a multi-crab "
                 f"script; add --multicrab to run it with them (crab's parameters are written "
                 f"Section.parameter=value).")
        overrides, script_args = script_args, ()  # crab submit's parameters, set over the file's
    python = os.path.splitext(path)[1].lower() == ".py"
    if multicrab and not python:
        fail(f"{path}: --multicrab runs a crabConfig.py (*.py) as a script; submit a TOML file without it.")
    with _Submitter(ctx) as submitter:
        try:
            if not python:
                submitter.submit(load_config(path, overrides=overrides))
                return
            ran = run_crab_config(path, submitter, main=multicrab, argv=script_args)
        except ConfigError as e:
            fail(str(e) + submitter.so_far())
        except SubmitFailed as e:
            fail(str(e))
        except KeyboardInterrupt:  # crab says 'Keyboard Interrupted' and exits 1
            fail(f"Keyboard Interrupted while {path} ran.{submitter.so_far()}")
        tasks, refused = submitter.results()
        if not multicrab and not tasks and not refused:  # crab submit: the module-level config
            try:
                submitter.submit(ran.module_config(overrides))
            except (ConfigError, SubmitFailed) as e:
                fail(str(e))
            return
    calls = len(tasks) + len(refused)
    if not multicrab:
        click.echo(f"Note: {path} passed {calls} config(s) to crabCommand('submit') as it loaded: those are its "
                   f"tasks; its module-level config is not submitted again"
                   + (f", and the command line's {' '.join(overrides)} set nothing." if overrides else "."))
    if not calls:
        fail(f"{path}: its __main__ block (run as 'python {os.path.basename(path)}"
             f"{''.join(' ' + a for a in script_args)}') passed no config to crabCommand('submit'), so nothing was "
             f"submitted.")
    if refused:
        fail(f"{path}: {len(refused)} of the {calls} config(s) it passed to crabCommand('submit') were not submitted"
             f"{f' ({len(tasks)} were)' if tasks else ''}; the first because: {refused[0]}")
    click.echo(f"{path}: {len(tasks)} task(s) submitted: {', '.join(tasks)}.")


def _submit_failure(state, name: str) -> str | None:
    """Why the pool's task worker refused task ``name`` just now (None: it did not)."""
    from engine.crab.taskworker.taskdb import SUBMITFAILED, TaskDB

    db = TaskDB(state.tasks)
    try:
        task = db.get(name)
    finally:
        db.close()
    return task.message or "no reason recorded" if task.status == SUBMITFAILED else None


def _scripts_own_c(config: str | None, value: str) -> bool:
    """Whether ``-c VALUE`` after ``--multicrab SCRIPT.py`` is the script's own option (CRAB's
    multicrab example reads ``-c/--crabCmd submit``), not crab submit's ``-c FILE``: SCRIPT.py is
    a file and VALUE names no Python file."""
    return (config is not None and os.path.splitext(config)[1].lower() == ".py" and os.path.isfile(config)
            and not (os.path.splitext(value)[1].lower() == ".py" and os.path.isfile(value)))


class _Submitter:
    """Submits configurations as ``task submit`` does, each on its own connection to the daemon (a
    multi-crab script may call crabCommand in a process it forked), and keeps what came of each in
    a file every such process appends to, so that the command can sum them up."""

    def __init__(self, ctx: click.Context):
        import tempfile

        from engine.state import state_dir

        self.state = state_dir(ctx.find_root().obj["state_dir"])  # resolved before the script changes directory
        self.ctx = ctx
        fd, self.record = tempfile.mkstemp(prefix="submitted-", dir=self.state.path)
        os.close(fd)

    def __enter__(self) -> _Submitter:
        return self

    def __exit__(self, *exc) -> None:
        os.unlink(self.record)

    def submit(self, cfg) -> str:
        from engine.crab.client.crab_config_py import SubmitFailed
        from engine.crab.client.last_task import remember
        from engine.crab.client.submit import SubmitError
        from engine.crab.client.submit import submit as submit_task
        from engine.crab.taskworker.taskdb import TaskDB

        try:
            with schedd(self.ctx) as client:  # the embedded one starts its daemon, and the task worker with it
                db = TaskDB(self.state.tasks)
                try:
                    if backend(self.ctx) == "htcondor":
                        sites = client.sites()
                    else:
                        info = client.ping()  # one answer for the sites and the pool file it read
                        sites = site_slots(client, info)
                        if changed := client.pool_file_changed(info):
                            click.echo(f"Note: {changed}")
                    done = submit_task(cfg, self.state, db, sites)
                finally:
                    db.close()
                _carry_out(self.ctx, self.state, client)
                failure = _submit_failure(self.state, done.name) if backend(self.ctx) == "htcondor" else None
        except (SubmitError, ScheddError) as e:
            self.refused(str(e))
            raise SubmitFailed(str(e)) from None
        if failure is not None:  # carried out at once on a pool, and refused there: crab's 'Submission failed'
            remember(self.state, done.name)
            self.refused(failure)
            raise SubmitFailed(f"task {done.name} ({done.task_dir}) is SUBMITFAILED: {failure}")
        for note in done.notes:
            click.echo(f"Note: {note}")
        for warning in done.warnings:  # before Success, as crab submit logs them while it checks
            click.echo(f"Warning: {warning}")
        click.echo(f"Task name: {done.name}\nProject dir: {done.task_dir}\n"
                   "Success: Your task has been delivered to the task worker; follow it with "
                   f"'{again(self.ctx)} task list' or '{again(self.ctx)} task status {done.handle}'.")
        remember(self.state, done.name)
        self._append({"task": done.name})
        return done.name

    def refused(self, message: str) -> None:
        self._append({"refused": message})

    def _append(self, entry: dict) -> None:
        fd = os.open(self.record, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, (json.dumps(entry) + "\n").encode())
        finally:
            os.close(fd)

    def results(self) -> tuple[list[str], list[str]]:
        """The tasks submitted and the reasons of the refusals, in order."""
        with open(self.record, encoding="utf-8") as f:
            entries = [json.loads(line) for line in f if line.strip()]
        return [e["task"] for e in entries if "task" in e], [e["refused"] for e in entries if "refused" in e]

    def so_far(self) -> str:
        """What was submitted before an error, so that the error line says it is not lost."""
        tasks, _ = self.results()
        return f" (Submitted before that: {', '.join(tasks)}.)" if tasks else ""


@task.command("list")
@click.option("--json", "json_output", is_flag=True, help="One object per task.")
@click.pass_context
def list_tasks(ctx: click.Context, json_output: bool) -> None:
    """Every task with its status (like crab tasks)."""
    with _tasks(ctx) as (db, _, _):
        tasks = db.tasks()
    if json_output:
        click.echo(json.dumps([{"name": t.name, "request_name": t.request_name, "status": t.status,
                                "command": t.command, "dagman_id": t.dagman_id, "submitted_at": t.submitted_at,
                                "message": t.message, "task_dir": t.task_dir} for t in tasks], indent=2))
        return
    width = max((len(t.name) for t in tasks), default=4)
    click.echo(f"{'TASK':<{width}}  {'STATUS':<14}  {'COMMAND':<8}  {'DAGMAN':>6}  MESSAGE")
    for t in tasks:
        click.echo(f"{t.name:<{width}}  {t.status:<14}  {t.command:<8}  {t.dagman_id or '-':>6}  {t.message}")


@task.command()
@task_argument
@crab_options
@click.option("--killwarning", metavar="TEXT", help="A warning that task status shows from then on, as crab kill's.")
@click.pass_context
def kill(ctx: click.Context, name: str, killwarning: str | None) -> None:
    """Kill TASK: its jobs are removed and it ends KILLED (like crab kill)."""
    from engine.crab.taskworker.taskdb import KILL, TaskError

    with _tasks(ctx) as (db, state, client):
        name = _named(ctx, db, state, name).name
        try:
            task = db.request(name, KILL, {"killwarning": killwarning} if killwarning else None)
        except TaskError as e:
            fail(str(e))
        _carry_out(ctx, state, client)
    click.echo(f"Kill request for task {task.name} sent; '{again(ctx)} task list' shows when it is KILLED.")


@task.command()
@task_argument
@crab_options
@click.option("--long", "long_", is_flag=True, help="One line per job: CRAB's extended job status table.")
@click.option("--sort", metavar="KEY",
              help="Also list the jobs by state, site, runtime, memory, cpu, retries, waste or exitcode.")
@click.option("--jobids", metavar="IDS", help="Only these jobs in --long and --sort, e.g. 1,3-5.")
@click.option("--summary", is_flag=True, help="Per site: runtime, waste, and jobs running, done, staging out, failed.")
@click.option("--verboseErrors", "verbose_errors", is_flag=True, help="The failed jobs' error messages, and which jobs.")
@click.option("--json", "json_output", is_flag=True, help="The task and every job, with its attempts.")
@click.pass_context
def status(ctx: click.Context, name: str, long_: bool, sort: str | None, jobids: str | None, summary: bool,
           verbose_errors: bool, json_output: bool) -> None:
    """The task's status and its jobs' states, laid out as crab status prints them."""
    import gc

    from crabtui.task_status import Options, StatusOptionError, TaskInfo, check_options, render, server_status
    from engine.crab.client.status import processed_lumis, scheduler_status, task_view

    options = Options(long=long_, sort=sort, jobids=jobids, summary=summary, verbose_errors=verbose_errors,
                      again=again(ctx))
    try:
        check_options(options)
    except StatusOptionError as e:
        fail(str(e))
    now = time.time()
    with _tasks(ctx) as (db, state, client):
        task = _named(ctx, db, state, name, quiet=json_output)
        view = task_view(task.task_dir, client, task.dagman_id, now=now)
    scheduler = scheduler_status(task.status, task.dagman_id, view)
    if json_output:
        per_status: dict[str, int] = {}
        for j in view.jobs:
            per_status[j.state] = per_status.get(j.state, 0) + 1
        click.echo(json.dumps({"name": task.name, "status": task.status, "command": task.command,
                               "dagman_id": task.dagman_id, "message": task.message,
                               "scheduler_status": scheduler, "dagman_waiting": view.dag_waiting,
                               "task_dir": task.task_dir,
                               "input_lumis": view.input_lumis,
                               # the keys of the dictionary crab status returns to scripts
                               "dbStatus": server_status(task.status, scheduler), "dagStatus": scheduler or "",
                               "jobsPerStatus": per_status, "jobList": [[j.state, j.id] for j in view.jobs],
                               "publicationEnabled": view.publication,
                               "jobs": [{**j.as_json(), "processed_lumis": processed_lumis(task.task_dir, j)}
                                        for j in view.jobs],
                               "sites": [s.as_json() for s in view.sites.sites] if view.sites else [],
                               "site_policy": view.sites.as_json() if view.sites else None}, indent=2))
        return
    gc.disable()  # the 10,000-line layout makes no garbage cycles; collecting would cost a third of it
    info = TaskInfo(name=task.name, task_dir=task.task_dir, status=task.status, command=task.command,
                    message=task.message, scheduler_status=scheduler, num_cores=view.num_cores,
                    max_memory_mb=view.max_memory_mb, max_runtime_min=view.max_runtime_min,
                    warnings=view.warnings + task.kill_warnings, sites=view.sites.sites if view.sites else (),
                    automatic=view.automatic, publication=view.publication)
    try:
        lines = render(info, view.jobs, now, options)
    except StatusOptionError as e:
        fail(str(e))
    click.echo("\n".join(lines))


@task.command()
@task_argument
@crab_options
@click.option("--jobids", metavar="IDS", help="The failed jobs to resubmit, e.g. 1,3-5 (default: every failed job).")
@click.option("--sitewhitelist", metavar="SITES", help="Sites the resubmitted jobs may run at (comma list; '' for none).")
@click.option("--siteblacklist", metavar="SITES", help="Sites the resubmitted jobs must avoid (comma list; '' for none).")
@click.option("--maxjobruntime", type=int, metavar="MIN", help="Max runtime of the resubmitted jobs, 60..20160 minutes.")
@click.option("--maxmemory", type=int, metavar="MB", help="Memory of the resubmitted jobs, 30..30720 MB.")
@click.option("--priority", type=int, metavar="N", help="Priority of the resubmitted jobs (> 0).")
@click.option("--publication", is_flag=True, help="crab's resubmission of failed publications: refused, crabtui "
                                                   "publishes nothing.")
@click.pass_context
def resubmit(ctx: click.Context, name: str, jobids: str | None, sitewhitelist: str | None,
             siteblacklist: str | None, maxjobruntime: int | None, maxmemory: int | None,
             priority: int | None, publication: bool) -> None:
    """Resubmit TASK's failed jobs, with new parameters if given (like crab resubmit).

    Options not given keep the task's original values; the new ones apply to the resubmitted jobs
    only, on their resubmission and on its automatic retries, each with a fresh retry budget.
    """
    from engine.crab.client.resubmit import ResubmitError, jobs_to_resubmit, request_arguments
    from engine.crab.client.status import task_view
    from engine.crab.taskworker.taskdb import RESUBMIT, RESUBMITTABLE, TaskError

    if publication:
        fail("--publication resubmits a task's failed publications, and crabtui publishes no output dataset "
             "(Data.publication has no effect), so there is none; resubmit failed jobs without --publication")
    try:
        arguments = request_arguments(jobids=jobids, sitewhitelist=sitewhitelist, siteblacklist=siteblacklist,
                                      maxjobruntime=maxjobruntime, maxmemory=maxmemory, priority=priority)
    except ResubmitError as e:
        fail(str(e))
    with _tasks(ctx) as (db, state, client):
        task = _named(ctx, db, state, name)
        try:
            if task.status in RESUBMITTABLE:  # the others db.request refuses, or (SUBMITFAILED) submits anew
                if not os.path.isdir(task.task_dir):
                    fail("Status information is unavailable, will not proceed with the resubmission. "
                          "Try again a few seconds later if the task has just been submitted.")
                view = task_view(task.task_dir, client, task.dagman_id)
                jobs_to_resubmit(task.task_dir, {j.id: j.state for j in view.jobs}, arguments,
                                 automatic=view.automatic is not None)
            task = db.request(task.name, RESUBMIT, arguments)
        except (TaskError, ResubmitError) as e:
            fail(str(e))
        _carry_out(ctx, state, client)
    click.echo(f"Resubmit request for task {task.name} sent; '{again(ctx)} task status {task.request_name}' shows "
               "how the resubmission proceeds.")


@task.command()
@task_argument
@crab_options
@click.option("--outputdir", metavar="DIR", help="Where to write the lumi files (default: the task's results/).")
@click.option("--recovery", type=click.Choice(["notFinished", "notPublished", "failed"]), default="notFinished",
              show_default=True, help="Which lumis are left to process: those not finished, or those of failed jobs.")
@click.pass_context
def report(ctx: click.Context, name: str, outputdir: str | None, recovery: str) -> None:
    """What TASK's finished jobs read and wrote, and its lumi files (like crab report).

    processedLumis.json, notFinishedLumis.json (or failedLumis.json with --recovery failed),
    lumisToProcess.json, inputDatasetLumis.json, ... go to the task's results/ directory, or
    --outputdir; a notFinishedLumis.json is the lumi mask of a recovery task.
    """
    from engine.crab.client.report import RESULTS, input_dataset_lumis, make_report, report_lines, write_report
    from engine.crab.client.status import task_view
    from engine.crab.taskworker.datasets import Catalogue

    if recovery == "notPublished":
        fail("The option --recovery=notPublished has been specified (which instructs to determine the not processed "
             "lumis based on published datasets), but crabtui publishes no output dataset; use --recovery "
             "notFinished or failed")
    with _tasks(ctx) as (db, state, client):
        task = _named(ctx, db, state, name)
        if not os.path.isdir(task.task_dir) or not os.listdir(task.task_dir):
            fail("Status information is unavailable, will not proceed with the report. Try again a few minutes "
                 "later if the task has just been submitted.")
        view = task_view(task.task_dir, client, task.dagman_id)
    if recovery == "failed" and view.automatic is not None:
        fail("The option --recovery=failed has been specified but it is not compatible with automatic splitting")
    if not any(j.state == "finished" for j in view.jobs):
        fail("Cannot get all the needed information for the report. Maybe no job has completed yet ? "
             f"('{again(ctx)} task status {task.request_name}' shows the jobs)")
    made = make_report(task.task_dir, view.jobs, recovery=recovery,
                       input_lumis=input_dataset_lumis(task.task_dir, Catalogue.for_state(state)))
    directory = os.path.abspath(outputdir) if outputdir else os.path.join(task.task_dir, RESULTS)
    try:
        write_report(made, directory)
    except OSError as e:
        fail(f"{directory}: cannot write the report files there ({e.strerror}); give another --outputdir")
    click.echo("\n".join(report_lines(made, directory, recovery)))
