"""``crabtui task``: CRAB3 tasks (crab submit, crab status, crab kill, crab resubmit, crab report,
crab getoutput, crab getlog, crab tasks).

``task submit`` makes crab's project directory (:mod:`engine.crab.client.project`), through which
the other commands find the task from any directory (``-d/--dir``).

On the embedded engine the commands only record what the user wants in the task table; the task
worker beside the embedded schedd carries it out, as CRAB's REST server and TaskWorker share the
work.  On a pool (``--backend htcondor``) each command carries the table's pending commands out
itself, against the pool's schedd, before it answers (:mod:`engine.crab.taskworker.pool`).
"""

from __future__ import annotations

import datetime
import functools
import getpass
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click

from crabtui import __version__
from crabtui.cli import OneLineGroup
from crabtui.commands.backend import again, backend, fail, schedd
from engine.schedd.api import ScheddError


DEFAULT_CONFIG = "crabConfig.py"  # what crab submit reads when no configuration is given
WAIT_LIMIT = 900  # seconds crab submit --wait waits for the task to be processed, at most (checkStatusLoop)
WAIT_POLL = 0.5  # seconds between two looks at the task table (crab asks its server every 30 s)
_RX_PARAMETER_VALUE = re.compile(r"[A-Za-z]+\.[A-Za-z]+=")  # crab submit's Section.parameter=value arguments


def task_argument(command):
    """TASK as crab's commands take it: positional or ``--task``, the task's full name or its
    requestName, or crab's project directory (``-d/--dir crab_projects/crab_<requestName>``, or a
    positional path), whose record names the task and the state directory and backend that hold
    it (:func:`_from_project_dir`).  No task at all is the last one submitted or named in the
    state directory, as crab uses the project directory of its last command (:func:`_named`)."""

    @functools.wraps(command)
    def run(*args, name: str | None, project_dir: str | None, task_name: str | None, **kwargs):
        try:
            return located(*args, name=name, project_dir=project_dir, task_name=task_name, **kwargs)
        except SystemExit as e:
            if e.code and not click.get_current_context().meta.get("crabtui.logged"):
                _log_refused(click.get_current_context(), name or task_name, project_dir is not None)
            raise

    def located(*args, name: str | None, project_dir: str | None, task_name: str | None, **kwargs):
        given = [n for n in (name, project_dir, task_name) if n is not None]
        if not given:
            return command(*args, name=None, **kwargs)  # the last task: resolved by _named
        if len(given) != 1:
            fail("give one task: TASK (its name or requestName), -d/--dir crab_projects/crab_<requestName> "
                 "(crab's project directory) or --task NAME; got more than one"
                 f"; see '{click.get_current_context().command_path} --help'")
        if project_dir is not None or (task_name is None and ("/" in given[0] or _is_project(given[0]))):
            given[0] = _from_project_dir(click.get_current_context(), given[0])
        return command(*args, name=given[0], **kwargs)

    run = click.option("--task", "task_name", metavar="NAME", help="The task's full name (as crab's --task).")(run)
    run = click.option("-d", "--dir", "project_dir", metavar="DIR",
                       help="crab's project directory, General.workArea/crab_<requestName>, from any directory.")(run)
    return click.argument("name", metavar="[TASK]", required=False)(run)


def _log_refused(ctx: click.Context, name: str | None, dir_given: bool) -> None:
    """A command refused before it reached its task (its options, a bad combination) is logged in
    the task's ``crab.log`` all the same, as crab's client logs every command, failures included:
    the task is the one ``-d`` named (none if it named no project: not the last task, which the
    command did not name), else the one the name or the last task names, if the state directory
    already knows it (nothing is made or started to find it)."""
    from engine.crab.client import project
    from engine.crab.client.last_task import recall
    from engine.crab.taskworker.taskdb import TaskDB, TaskError
    from engine.state import StateDir, state_path

    found = ctx.meta.get("crabtui.project")
    if found is None and dir_given:
        return
    if found is None:
        state = StateDir(state_path(ctx.find_root().obj.get("state_dir")))
        if not os.path.isfile(state.tasks):
            return
        name = name if name is not None else recall(state)
        if name is None or "/" in name:
            return
        try:
            db = TaskDB(state.tasks)
        except Exception:  # an unreadable table: the refusal itself was said, the log is a convenience
            return
        try:
            task = db.get(name)
        except TaskError:
            return
        finally:
            db.close()
        found = project.linked(task.task_dir, task.name)
    if found is not None:
        project.log_command(found, sys.argv[1:])


def _is_project(path: str) -> bool:
    """Whether a bare TASK (no '/') is a project directory here rather than a name: only if it has
    a record, so that a directory named like a task does not hide it."""
    from engine.crab.client.project import RECORD

    return os.path.isfile(os.path.join(path, RECORD))


def _from_project_dir(ctx: click.Context, path: str) -> str:
    """The task of project directory ``path``, as crab reads its ``.requestcache``.  The command
    then uses the state directory and backend the record names, as crab uses the server the
    directory names: typed from anywhere, ``-d`` finds the task.  Only a --state-dir or --backend
    given on the command line that says otherwise is refused, since the user asked for two
    different places.  A path that does not exist names the task of that requestName, as before
    task submit made the directories (``crab_projects/crab_X``: task X)."""
    from click.core import ParameterSource

    from engine.crab.client import project
    from engine.state import state_path

    how = "give the directory task submit printed as 'Project dir:', or the task's name"
    if os.path.isdir(path):
        try:
            found = project.read(path)
        except project.ProjectError as e:
            fail(str(e))
        if found is None:
            fail(f"{path} is not a valid CRAB project directory: it has no {project.RECORD}; {how}")
    elif os.path.lexists(path):
        fail(f"{path} is not a valid CRAB project directory: it is not a directory; {how}")
    else:
        directory = os.path.basename(path.rstrip("/"))
        if not directory.startswith("crab_") or directory == "crab_":
            fail(f"{path}: crab's project directory of a task is named crab_<requestName> "
                 "(General.workArea/crab_<General.requestName>); give that, or the task's name")
        ctx.meta["crabtui.project_dir"] = path
        return directory[len("crab_"):]
    ctx.meta["crabtui.project"] = found  # where this command reads and writes, moved or not
    root = ctx.find_root()
    obj = root.obj
    if not os.path.isdir(found.state_dir):
        fail(f"{path}: task {found.task} lived in state directory {found.state_dir}, which is no longer there")
    if state_path(obj.get("state_dir")) != found.state_dir:
        if root.get_parameter_source("state_dir") == ParameterSource.COMMANDLINE:
            fail(f"{path}: task {found.task} lives in state directory {found.state_dir}, not in --state-dir "
                 f"{obj['state_dir']}; give --state-dir {shlex.quote(found.state_dir)}, or leave --state-dir out")
        obj["state_dir"] = found.state_dir
    if backend(ctx) != found.backend:
        if root.get_parameter_source("backend") == ParameterSource.COMMANDLINE or obj.get("backend_given"):
            fail(f"{path}: task {found.task} was submitted with --backend {found.backend}; give that, or leave "
                 "--backend out")
        obj["backend"] = found.backend
    return found.task


def crab_options(command):
    """crab's options common to its commands (CRABOptParser.addCommonOptions): ``--instance``, the
    CRAB server (one of CRAB's, checked as crab checks it; there is no server here), and
    ``--proxy``, the grid proxy (there is no grid credential here): a crab command line pasted as it
    is works, and they change nothing."""

    @functools.wraps(command)
    def run(*args, instance: str | None, proxy: str | None, **kwargs):
        if (refused := instance_refusal(instance)) is not None:
            fail(refused)
        return command(*args, **kwargs)

    run = click.option("--proxy", metavar="FILE",
                       help="crab's grid proxy: accepted, and unused (no grid credential here).")(run)
    return click.option("--instance", metavar="NAME",
                        help="crab's CRAB server instance (prod, preprod, ...): checked, and unused.")(run)


def instance_refusal(instance: str | None) -> str | None:
    """Why crab would refuse ``--instance INSTANCE`` (one CRAB does not know), or None."""
    from engine.crab.client.config import SERVICE_INSTANCES

    if instance is None or instance in SERVICE_INSTANCES:
        return None
    return (f'Invalid value "{instance}" for --instance; valid values are {", ".join(SERVICE_INSTANCES)} '
            f"('prod' is crab's default; crabtui contacts no CRAB server, so any valid value does the same)")


@contextmanager
def _tasks(ctx: click.Context, *, listing: bool = False) -> Iterator[tuple]:
    """The task table, its state directory and the schedd of the tasks.  The embedded schedd is
    started (and with it the task worker); on a pool the table's pending commands are carried
    out first.  ``listing``: the table is all the command reads, so a pool that does not answer
    stops it only when a command is pending there (which must say why it cannot go on)."""
    from engine.crab.taskworker.pool import work as work_on_pool
    from engine.crab.taskworker.taskdb import TaskDB
    from engine.schedd.api import ScheddUnreachable
    from engine.state import state_dir

    try:
        with schedd(ctx) as client:
            if backend(ctx) == "htcondor":
                state = state_dir(ctx.find_root().obj["state_dir"])
                try:
                    work_on_pool(state, client)
                except ScheddUnreachable as e:
                    if not listing or _pending_on_pool(state):
                        raise
                    click.echo(f"Warning: {e}; the tasks' states are as last seen", err=True)
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


def _pending_on_pool(state) -> bool:
    """Whether the task table of ``state`` holds a command for the pool still to carry out."""
    from engine.crab.taskworker.taskdb import HTCONDOR, TaskDB

    db = TaskDB(state.tasks)
    try:
        return bool(db.pending(HTCONDOR))
    finally:
        db.close()


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
    from engine.crab.client import project
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
        click.echo(f"Will use CRAB project directory {_project_dir(task)} (task {task.name})", err=quiet)
    else:
        try:
            task = db.get(name)
        except TaskError as e:
            path = ctx.meta.get("crabtui.project_dir")
            fail(f"{path} is not a valid CRAB project directory (there is no such directory) and {e}" if path
                 else str(e))
        path = ctx.meta.get("crabtui.project_dir")
        where = project.recorded(task.task_dir) if path else None
        if where is not None:  # a moved or removed project directory, or a typo: not the task's own files
            if os.path.abspath(path) == os.path.normpath(where):
                fail(f"{path} is not a valid CRAB project directory (there is no such directory): task {task.name}'s "
                     f"project directory was there and has been removed or moved; give the directory it is in now, "
                     f"or the task's name")
            gone = "" if os.path.isdir(where) else ", which is no longer there either"
            fail(f"{path} is not a valid CRAB project directory (there is no such directory); task {task.name} has "
                 f"its project directory at {where}{gone}; give that directory, or the task's name")
        given = ctx.meta.get("crabtui.project")
        if given is not None and given.task == task.name and project.linked(task.task_dir, task.name) is None:
            project.point(task.task_dir, given.path)  # moved: the task's name finds it there from now on
    if task.backend != backend(ctx):  # the other backend's worker would never carry out a command for it
        fail(f"task {task.name} runs on the {task.backend} backend, not on the {backend(ctx)} one; "
             f"give --backend {task.backend}")
    remember(state, task.name)
    found = _project(task)
    if found is not None:
        project.log_command(found, sys.argv[1:])
    ctx.meta["crabtui.logged"] = True
    return task


def _project(task):
    """The task's project directory: the one ``-d`` named (wherever it was moved to), else the one
    its submission made, if it is still there."""
    from engine.crab.client import project

    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get("crabtui.project") if ctx is not None else None
    if given is not None and given.task == task.name:
        return given
    return project.linked(task.task_dir, task.name)


def _project_dir(task) -> str:
    """The task's crab project directory, or for a task submitted without one its directory under
    the state directory."""
    found = _project(task)
    return found.path if found is not None else task.task_dir


def _results(task) -> str:
    """Where crab report, getoutput and getlog write by default: the project directory's results/."""
    from engine.crab.client.project import RESULTS

    return os.path.join(_project_dir(task), RESULTS)


class CrabCommand(click.Command):
    """A task command whose long options may be shortened to any unambiguous prefix, as crab's
    optparse parser takes them (``crab status --verbose``, ``crab getoutput --jobid 3``)."""

    OWN = {"--multicrab"}
    """crabtui's own options, which crab has not: written in full, so that a multi-crab script's
    option (``--mc``) is never taken for one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._unabbreviated(ctx, args))

    def _spelled(self, options: list[click.Option]) -> str:
        """The options shown in the command's help, as its usage line spells them."""
        return ", ".join("/".join(o.opts) for o in options
                         if not o.hidden and "--help" not in o.opts and not self.OWN & set(o.opts))

    def _unabbreviated(self, ctx: click.Context, args: list[str]) -> list[str]:
        options = [p for p in self.get_params(ctx) if isinstance(p, click.Option)]
        longs = {o: p for p in options for o in p.opts + p.secondary_opts if o.startswith("--")}
        shorts = {o for p in options if not (p.is_flag or p.count) for o in p.opts if not o.startswith("--")}
        shown = sorted(o for o, p in longs.items() if not p.hidden and o not in self.OWN)
        out, rest, positional = [], list(args), False
        while rest:
            arg = rest.pop(0)
            if arg == "--":
                return out + [arg] + rest
            if arg.startswith("--"):
                name, eq, value = arg.partition("=")
                if name not in longs:
                    candidates = [o for o in shown if o.startswith(name)]
                    if len(candidates) > 1:
                        raise click.UsageError(f"ambiguous option: {name} ({', '.join(candidates)}?)", ctx)
                    if candidates:
                        name = candidates[0]
                        arg = name + eq + value
                    elif not ctx.ignore_unknown_options or not (positional or "--multicrab" in args):
                        # crab's optparse names no look-alike; submit passes on a multi-crab script's options
                        raise click.UsageError(f"no such option: {name}; task {self.name} takes "
                                               f"{self._spelled(options)}", ctx)
                param = longs.get(name)
                out.append(arg)
                if param is not None and not (param.is_flag or param.count) and not eq and rest:
                    out.append(rest.pop(0))  # the option's value
            elif arg.startswith("-") and len(arg) > 1:
                if (ctx.ignore_unknown_options and not (positional or "--multicrab" in args)
                        and not any(arg[:2] in p.opts for p in options)):  # submit's, as above
                    raise click.UsageError(f"no such option: {arg[:2]}; task {self.name} takes "
                                           f"{self._spelled(options)}", ctx)
                out.append(arg)
                if arg in shorts and rest:
                    out.append(rest.pop(0))
            elif self.name == "submit" and "--multicrab" in out:  # the script, then its own arguments
                return out + [arg] + rest
            else:
                out.append(arg)
                positional = True
        return out


class CrabCommands(OneLineGroup):
    """The task commands, also under the short names crab gives them (``crab sub``, ``crab st``)."""

    command_class = CrabCommand

    SHORT_NAMES = {"sub": "submit", "st": "status", "rep": "report", "tasks": "list", "output": "getoutput",
                   "out": "getoutput", "log": "getlog", "chkw": "checkwrite", "chk": "checkwrite",  # chk: before 2023
                   "chkd": "checkdataset", "rec": "recover", "rmk": "remake", "uplog": "uploadlog"}
    CRAB_ONLY = {  # crab's commands that have no meaning here, and what to do instead
        "checkwrite": "checks that your grid proxy may write to a site's storage; crabtui's storage sites are "
                      "directories of the state directory, which your tasks write, so there is nothing to check "
                      "(Site.storageSite is checked at submit)",
        "checkusername": "reads your CMS user name from your grid certificate; crabtui has none, and "
                         "getUsername()/getUsernameFromCRIC() in a crabConfig.py give your local login, "
                         f"{getpass.getuser()!r}",
        "createmyproxy": "stores a grid proxy on a myproxy server; crabtui needs no grid credential",
        "checkdataset": "asks Rucio where a dataset is; crabtui's datasets are its catalogue: 'crabtui dataset list' "
                        "and 'crabtui dataset show NAME'",
        "checkfile": "asks Rucio and DBS about a file; crabtui's files are in its catalogue: 'crabtui dataset show "
                     "NAME'",
        "setdatasetstatus": "changes a published dataset's status in DBS; crabtui publishes nothing",
        "setfilestatus": "changes a published file's status in DBS; crabtui publishes nothing",
        "remake": "rebuilds a project directory from the CRAB server; crabtui's task commands also take a task "
                  "by name ('task list' shows them), with or without its project directory",
        "recover": "submits a recovery task; with crabtui, 'task report TASK' writes notFinishedLumis.json "
                   "(or failedLumis.json with --recovery failed): give it as Data.lumiMask of a new task",
        "uploadlog": "sends crab's log to the CRAB server; there is none here",
        "preparelocal": "prepares a job to run on this machine; crabtui's jobs already run here, and each job's "
                        "files are in its task directory ('task status TASK --json' gives its task_dir)",
        "purge": "deletes a task's files from its schedd and the CRAB cache; crabtui's are in the state directory "
                 "('task status --json' gives its task_dir), and go with it",
        "getsandbox": "downloads a task's sandbox from the CRAB server; crabtui keeps it in the task directory",
        "remote_copy": "copies outputs with Rucio; crabtui's outputs are files under the state directory",
    }

    CRAB_GLOBAL = ("-q", "--quiet", "-d", "--debug")  # crab's own options, typed before the command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if (args[:1] == ["-d"] and len(args) > 2 and self._names_command(ctx, args[2])
                and not self._names_command(ctx, args[1])):
            # the project directory typed before the command: crab would read -d as its --debug
            fail(f"crab's -d (given before the command) is its --debug; a project directory goes after the "
                 f"command ('{again(ctx)} task {args[2]} -d {shlex.quote(args[1])} ...')")
        if args and args[0] in self.CRAB_GLOBAL:
            fail(f"crab's {args[0]} (given before the command) sets how much crab prints; crabtui's task commands "
                 f"print what crab prints without it: drop it ('{again(ctx)} task {' '.join(args[1:2]) or 'COMMAND'} "
                 "...')")
        return super().parse_args(ctx, args)

    def _names_command(self, ctx: click.Context, name: str) -> bool:
        return name in self.SHORT_NAMES or name in self.CRAB_ONLY or name in self.list_commands(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        name = self.SHORT_NAMES.get(name, name)
        found = super().get_command(ctx, name)
        if found is None and name in self.CRAB_ONLY:
            reason = self.CRAB_ONLY[name]

            @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                           add_help_option=False)
            def crab_only() -> None:
                fail(f"crab {name} {reason}; crabtui has no such command (see '{again(ctx)} task --help').")

            return crab_only
        return found


@click.group(cls=CrabCommands)
@click.version_option(__version__, prog_name="crabtui", help="Show the version and exit (crab --version).")
def task() -> None:
    """Submit, list, follow, resubmit and kill CRAB3 tasks, report what they processed and retrieve their outputs
    and logs, as crab does (its short names sub, st, rep, out and log work too)."""


@task.command(context_settings={"ignore_unknown_options": True})
@click.argument("config", metavar="[CONFIG]", required=False, type=click.Path(dir_okay=False))
@click.argument("script_args", metavar="[ARGS]...", nargs=-1, type=click.UNPROCESSED)
@click.option("-c", "--config", "config_option", metavar="FILE", type=click.Path(dir_okay=False),
              help="CONFIG, as crab submit -c takes it.")
@click.option("--multicrab", is_flag=True,
              help="Run CONFIG as a script, as 'python CONFIG ARGS' does, and submit every config it passes to "
                   "crabCommand('submit') (also from the processes it starts).")
@click.option("--dryrun", is_flag=True,
              help="Submit nothing: check CONFIG and print the jobs the task would have, as crab submit --dryrun "
                   "(without its time and memory estimates: there is no cmsRun to test).")
@click.option("--skip-estimates", "skip_estimates", is_flag=True,
              help="crab's: with --dryrun, no estimates (crabtui never gives them).")
@click.option("--wait", is_flag=True, help="Wait until the task has been processed (SUBMITTED or SUBMITFAILED), as "
                                           "crab submit --wait waits.")
@crab_options
@click.pass_context
def submit(ctx: click.Context, config: str | None, script_args: tuple[str, ...], config_option: str | None,
           multicrab: bool, dryrun: bool, skip_estimates: bool, wait: bool) -> None:
    """Submit the task CONFIG describes (CRAB's TOML or crabConfig.py; like crab submit).

    CONFIG is crabConfig.py in the current directory if not given, as for crab submit.  A
    crabConfig.py that calls crabCommand('submit', config=X) as it loads submits each X; with
    --multicrab its __main__ block runs too (put ARGS after -- if they look like crabtui's options).
    """
    from engine.crab.client.config import ConfigError, load_config, run_crab_config
    from engine.crab.client.crab_config_py import SubmitFailed

    if dryrun and multicrab:
        fail("--dryrun checks one configuration and prints its jobs, as crab submit --dryrun; run it on the "
             "config, without --multicrab (a multi-crab script dry-runs the configs it passes to "
             "crabCommand('submit', config=config, dryrun=True)).")
    if config is not None and _RX_PARAMETER_VALUE.match(config) and not multicrab:
        script_args, config = (config, *script_args), None  # crab submit: parameters alone read crabConfig.py
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
    with _Submitter(ctx, dryrun=dryrun, estimates=not skip_estimates, overrides=overrides,
                    wait=wait and not multicrab) as submitter:
        try:
            if not python:
                submitter.submit(load_config(path, overrides=overrides))
                return
            ran = run_crab_config(path, submitter, main=multicrab, argv=script_args if multicrab else overrides,
                                  commands=submitter.commands)
        except ConfigError as e:
            fail(str(e) + submitter.so_far())
        except SubmitFailed as e:
            fail(str(e))
        except KeyboardInterrupt:  # crab says 'Keyboard Interrupted' and exits 1
            fail(f"Keyboard Interrupted while {path} ran.{submitter.so_far()}")
        tasks, refused = submitter.results()
        dry = submitter.dry_runs()
        others = submitter.commands_run()
        proceeded = submitter.proceeded()
        if not multicrab and not tasks and not refused and not dry:  # crab submit: the module-level config
            try:
                submitter.submit(ran.module_config(overrides))
            except (ConfigError, SubmitFailed) as e:
                fail(str(e))
            return
    calls = len(tasks) + len(refused)
    if dry and not tasks:  # --dryrun, or dryrun=True in each crabCommand('submit') call: dry runs only
        if multicrab:
            click.echo(f"{path}: {len(dry)} config(s) dry run: {', '.join(dry)}; "
                       + (f"crabCommand('proceed') submitted {', '.join(proceeded)}." if proceeded
                          else "nothing was submitted."))
            if refused:
                fail(f"{path}: {len(refused)} of the config(s) it passed to crabCommand('submit') were refused; the "
                     f"first because: {refused[0]}")
            return
        click.echo(f"Note: {path} passed {len(dry) + len(refused)} config(s) to crabCommand('submit') as it loaded: "
                   f"each was dry run above, nothing was submitted, and its module-level config is not "
                   f"{'dry run again' if dryrun else 'submitted'}.")
        if refused:
            fail(f"{path}: {len(refused)} of the config(s) it passed to crabCommand('submit') were refused; the first "
                 f"because: {refused[0]}")
        return
    if not multicrab:
        click.echo(f"Note: {path} passed {calls} config(s) to crabCommand('submit') as it loaded: those are its "
                   f"tasks; its module-level config is not submitted again"
                   + (f", and the command line's {' '.join(overrides)} set nothing." if overrides else "."))
    if not calls and others:  # a script that follows its tasks (crabCommand('status', dir=...)) only
        return
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

    def __init__(self, ctx: click.Context, *, dryrun: bool = False, estimates: bool = True,
                 overrides: tuple[str, ...] = (), wait: bool = False):
        import tempfile

        from engine.state import state_dir

        self.state = state_dir(ctx.find_root().obj["state_dir"])  # resolved before the script changes directory
        self.cwd = os.getcwd()  # where General.workArea is, as for crab submit, wherever the script goes
        self.argv = sys.argv[1:]  # the command line for crab.log: a multi-crab script's run has its own sys.argv
        self.ctx = ctx
        self.dryrun, self.estimates, self.wait = dryrun, estimates, wait
        self.overrides = overrides  # the command line's Section.parameter=value, for the submit it suggests
        fd, self.record = tempfile.mkstemp(prefix="submitted-", dir=self.state.path)
        os.close(fd)

    def __enter__(self) -> _Submitter:
        return self

    def __exit__(self, *exc) -> None:
        os.unlink(self.record)

    def submit(self, cfg, wait: bool = False, asked: str = "") -> str:
        """Make the task's project directory, as crab submit makes it before it sends the task, then
        submit; a refused submission takes the directory away again, so that it can be retried as it
        is (crab keeps it, and the retry is refused for it).  ``wait``: a script's
        crabCommand('submit', wait=True), which waits as --wait does.  A dry run (--dryrun, or the
        script's call ``asked`` for one) prints the splitting and leaves the task UPLOADED, with
        its project directory, for ``task proceed``, as crab leaves it on its server."""
        from engine.crab.client import project
        from engine.crab.client.crab_config_py import SubmitFailed
        from engine.crab.client.last_task import remember

        dryrun = self.dryrun or bool(asked)
        path = project.project_path(project.work_area(cfg.work_area, self.cwd), cfg.request_name)
        try:
            claim, taken_over = project.create(path)
        except project.ProjectError as e:
            self.refused(f"{cfg.source}: {e.parameter}: {e}")
            raise SubmitFailed(f"{cfg.source}: {e.parameter}: {e}") from None
        shown = shlex.quote(project.display_path(cfg.work_area, cfg.request_name))
        try:
            if taken_over and (recorded := self._interrupted(cfg, path)) is not None:
                return recorded
            if dryrun:  # once the project directory is made, as crab makes it before it sends the task
                self._estimate(cfg)
            done, failure = self._submit(cfg, path, dryrun)
        finally:
            if not os.path.exists(os.path.join(path, project.RECORD)):  # nothing was recorded
                project.remove(path)
            os.close(claim)
        if failure is not None:  # carried out at once on a pool, and refused there: crab's 'Submission failed'
            remember(self.state, done.name)
            self.refused(failure)
            raise SubmitFailed(f"task {done.name} (project directory {shown}) is SUBMITFAILED: {failure}")
        if dryrun:  # its notes and warnings came with the splitting
            click.echo(f"Task name: {done.name}\nProject dir: {shown}\nDry run requested: task paused\n"
                       f"To continue processing, use '{again(self.ctx)} task proceed -d {shown}'"
                       + (f" ({cfg.source} asked for the dry run with {asked})" if asked else ""))
            remember(self.state, done.name)
            self._append({"dryrun": cfg.request_name})
            return done.name
        for note in (*done.notes, *filter(None, [cfg.ignored_note()])):
            click.echo(f"Note: {note}")
        for warning in done.warnings:  # before Success, as crab submit logs them while it checks
            click.echo(f"Warning: {warning}")
        click.echo(f"Task name: {done.name}\nProject dir: {shown}\n"
                   "Success: Your task has been delivered to the task worker; follow it with "
                   f"'{again(self.ctx)} task list' or '{again(self.ctx)} task status -d {shown}'.")
        remember(self.state, done.name)
        self._append({"task": done.name})
        if self.wait or wait:
            self._wait(done.name)
        return done.name

    def _wait(self, name: str) -> None:
        """crab submit --wait (checkStatusLoop): the task's status as it changes, until the task
        worker has processed it; a SUBMITFAILED task raises SubmitFailed with its failure message."""
        from engine.crab.client.crab_config_py import SubmitFailed
        from engine.crab.taskworker.taskdb import NEW, QUEUED, SUBMITFAILED, TaskDB

        click.echo("Waiting for task to be processed")
        deadline = time.monotonic() + WAIT_LIMIT
        db = TaskDB(self.state.tasks)
        try:
            shown = None
            while True:
                task = db.get(name)
                if task.status != shown:
                    click.echo(f"Task status: {task.status}")
                    shown = task.status
                if task.status not in (NEW, QUEUED):
                    break
                if time.monotonic() > deadline:
                    click.echo(f"Maximum query time exceeded. Please check the status of the submission later using "
                               f"'{again(self.ctx)} task status {task.request_name}'.")
                    return
                time.sleep(WAIT_POLL)
        finally:
            db.close()
        if task.status == SUBMITFAILED:
            raise SubmitFailed(f"The submission of your task has failed. Failure message: "
                               f"{task.message or 'none recorded'}")
        click.echo("Success: Your task has been processed and your jobs have been submitted successfully.")

    def _interrupted(self, cfg, path: str) -> str | None:
        """The task a submission of ``cfg`` into ``path`` recorded before it was killed, with no
        record in its project directory yet: that record is written now, and nothing is submitted
        again.  None if there is no such task (the killed submission recorded nothing)."""
        from engine.crab.client import project
        from engine.crab.client.last_task import remember
        from engine.crab.taskworker.taskdb import TaskDB

        db = TaskDB(self.state.tasks)
        try:
            orphans = [t for t in db.tasks() if t.request_name == cfg.request_name and t.config_path == cfg.source
                       and project.recorded(t.task_dir) is None]
        finally:
            db.close()
        if not orphans:
            return None
        task = orphans[0]  # the newest
        made = project.fill(path, task=task.name, request_name=cfg.request_name, state_dir=self.state.path,
                            backend=backend(self.ctx), config=cfg.source, task_dir=task.task_dir)
        project.log_command(made, self.argv)
        with schedd(self.ctx) as client:
            _carry_out(self.ctx, self.state, client)
        shown = shlex.quote(project.display_path(cfg.work_area, cfg.request_name))
        click.echo(f"Task name: {task.name}\nProject dir: {shown}\n"
                   f"Success: the submission interrupted earlier had delivered this task ({task.status}); it is not "
                   f"submitted again; follow it with '{again(self.ctx)} task status -d {shown}'.")
        remember(self.state, task.name)
        self._append({"task": task.name})
        return task.name

    def _submit(self, cfg, path: str, dryrun: bool):
        """Submit ``cfg`` (``dryrun``: record it UPLOADED), and fill its project directory ``path``
        once the task is recorded (before a pool's schedd is asked: a task it refuses is
        SUBMITFAILED, and has its directory).  Returns the submission and, on a pool, why the pool
        refused the task (None if it did not)."""
        from engine.crab.client import project
        from engine.crab.client.crab_config_py import SubmitFailed
        from engine.crab.client.submit import SubmitError
        from engine.crab.client.submit import submit as submit_task
        from engine.crab.taskworker.taskdb import TaskDB

        done = None
        try:
            with schedd(self.ctx) as client:  # the embedded one starts its daemon, and the task worker with it
                db = TaskDB(self.state.tasks)
                try:
                    if backend(self.ctx) == "htcondor":
                        sites = client.sites()
                    else:
                        info = client.ping()  # one answer for the sites and the pool file it read
                        sites = client.sites(info)
                        if changed := client.pool_file_changed(info):
                            click.echo(f"Note: {changed}")
                    done = submit_task(cfg, self.state, db, sites, backend=backend(self.ctx), dryrun=dryrun)
                finally:
                    db.close()
                made = project.fill(path, task=done.name, request_name=cfg.request_name, state_dir=self.state.path,
                                    backend=backend(self.ctx), config=cfg.source, task_dir=done.task_dir)
                project.log_command(made, self.argv)
                _carry_out(self.ctx, self.state, client)
                failure = _submit_failure(self.state, done.name) if backend(self.ctx) == "htcondor" else None
        except (SubmitError, ScheddError) as e:
            self.refused(str(e))
            if done is None:
                raise SubmitFailed(str(e)) from None
            raise SubmitFailed(f"{e} (task {done.name} is recorded; its project directory is {path})") from None
        return done, failure

    def dry_run(self, cfg) -> str:
        """A script's crabCommand('submit', config=cfg, dryrun=True): crab submit --dryrun of ``cfg``."""
        return self.submit(cfg, asked="crabCommand('submit', ..., dryrun=True)")

    def _estimate(self, cfg) -> None:
        """crab submit --dryrun's report: the jobs the task will have, before it is recorded."""
        from engine.crab.client.crab_config_py import SubmitFailed
        from engine.crab.client.submit import SubmitError, dry_run

        try:
            with schedd(self.ctx) as client:
                sites = client.sites()
            done = dry_run(cfg, self.state, sites, backend=backend(self.ctx))
        except (SubmitError, ScheddError) as e:
            self.refused(str(e))
            raise SubmitFailed(str(e), configuration=getattr(e, "configuration", False)) from None
        for note in (*done.notes, *filter(None, [cfg.ignored_note()])):
            click.echo(f"Note: {note}")
        for warning in done.warnings:
            click.echo(f"Warning: {warning}")
        click.echo("\n".join(["Dry run", *done.lines()]))
        if self.estimates:
            click.echo("No processing time or memory estimates: crab makes them with a test run of cmsRun, which "
                       "crabtui does not have (as with --skip-estimates).")

    @property
    def commands(self) -> dict:
        """crab's commands besides submit that the script's crabCommand runs here, on tasks of this
        state directory.  Each prints nothing, as crab's with its console log muted, and takes crab's
        arguments (``dir=``, ``d=``, the directory alone, ``task=``, and the command's options)."""
        return {"status": self.status, "kill": self.kill, "resubmit": self.resubmit, "report": self.report,
                "getoutput": self.getoutput, "getlog": self.getlog, "proceed": self.proceed}

    def status(self, arguments: list[str]) -> dict:
        """``crabCommand('status', dir=D)``: the dictionary crab status returns, from what ``task
        status --json`` computes."""
        from crabtui.task_status import crab_status
        from engine.crab.client.status import scheduler_status, task_view

        from engine.crab.client.crab_config_py import CommandFailed

        with self._task("status", arguments) as (task, options, _db, client):
            if options["idle"]:  # not an option of crab status's parser
                raise CommandFailed(f"crabCommand('status'): {_idle_refusal(again(self.ctx))}", "BadArgumentException")
            view = task_view(task.task_dir, client, task.dagman_id, now=time.time())
        return crab_status(task, view, scheduler_status(task.status, task.dagman_id, view))

    def kill(self, arguments: list[str]) -> dict:
        """``crabCommand('kill', dir=D)``: what ``task kill`` does, and crab kill's ``{'status':
        'SUCCESS'}``; a kill CRAB's server refuses raises ClientException with its message."""
        from engine.crab.client.crab_config_py import CommandFailed

        with self._task("kill", arguments) as (task, options, db, client):
            if options["jobids"] is not None:  # not an option of crab kill's parser any more
                raise CommandFailed(f"crabCommand('kill'): {_kill_jobids_refusal(again(self.ctx))}",
                                    "BadArgumentException")
            _request_kill(db, task.name, options["killwarning"])
            _carry_out(self.ctx, self.state, client)
        return {"status": "SUCCESS"}

    def proceed(self, arguments: list[str]) -> dict:
        """``crabCommand('proceed', dir=D)``: what ``task proceed`` does, and crab proceed's ``{'status':
        'SUCCESS'}``; a task not UPLOADED raises RESTInterfaceException with CRAB server's message, as
        the server's refusal reaches crab's client."""
        from engine.crab.client.crab_config_py import CommandFailed
        from engine.crab.taskworker.taskdb import TaskError

        with self._task("proceed", arguments) as (task, _options, db, client):
            try:
                db.proceed(task.name)
            except TaskError as e:
                raise CommandFailed(f"crabCommand('proceed'): {e}", "RESTInterfaceException") from None
            _carry_out(self.ctx, self.state, client)
        self._append({"proceeded": task.request_name})
        return {"status": "SUCCESS", "commandStatus": "SUCCESS"}

    def resubmit(self, arguments: list[str]) -> dict:
        """``crabCommand('resubmit', dir=D, maxmemory=3000)``: what ``task resubmit`` does, and crab
        resubmit's ``{'status': 'SUCCESS'}``; a resubmission crab refuses (no failed job to
        resubmit, a bad option) raises ClientException with crab's message."""
        from engine.crab.client.resubmit import request_resubmit

        keys = ("jobids", "sitewhitelist", "siteblacklist", "maxjobruntime", "maxmemory", "priority", "force",
                "numcores")
        with self._task("resubmit", arguments) as (task, options, db, client):
            _check_publication(task, options["publication"])
            request_resubmit(db, client, task, _resubmit_arguments(
                again(self.ctx), **{key: options[key] for key in keys}))
            _carry_out(self.ctx, self.state, client)
        return {"status": "SUCCESS"}

    def report(self, arguments: list[str]) -> dict:
        """``crabCommand('report', dir=D)``: what ``task report`` does (the files of results/, or
        ``outputdir=``), and the dictionary crab report returns (``numEventsRead``,
        ``processedLumis``, ``notProcessedLumis``, ...)."""
        from crabtui.commands.task_results import report_task
        from engine.crab.client.report import crab_dict

        from engine.crab.client.crab_config_py import CommandFailed

        with self._task("report", arguments) as (task, options, _db, client):
            if options["dbs"] is not None:  # crab report's validateOptions raises UnknownOptionException
                raise CommandFailed(f"crabCommand('report'): {DBS_REFUSAL}", "UnknownOptionException")
            made, _ = report_task(self.ctx, self.state, client, task, _results(task), outputdir=options["outputdir"],
                                  recovery=options["recovery"])
        return crab_dict(made, options["recovery"])

    def getoutput(self, arguments: list[str]) -> dict:
        """``crabCommand('getoutput', dir=D, jobids='1-3,5')``: what ``task getoutput`` does, and crab
        getoutput's dictionary; a file that could not be copied is in its ``failed``, as crab
        returns it, where the command line ends with exit status 1."""
        return self._retrieve("getoutput", arguments)

    def getlog(self, arguments: list[str]) -> dict:
        """``crabCommand('getlog', dir=D)``: what ``task getlog`` does, and crab getlog's dictionary."""
        return self._retrieve("getlog", arguments)

    def _retrieve(self, command: str, arguments: list[str]) -> dict:
        from crabtui.commands.task_results import retrieve_files

        keys = ("outputpath", "jobids", "dump", "quantity", "checksum")
        with self._task(command, arguments) as (task, options, _db, client):
            done, _ = retrieve_files(self.ctx, client, task, _results(task), logs=command == "getlog",
                                      short=options.get("short", False), say=lambda _line: None,
                                      **{key: options[key] for key in keys})
        return done

    @contextmanager
    def _task(self, command: str, arguments: list[str]) -> Iterator[tuple]:
        """The task crab ``command``'s command line ``arguments`` name, its options parsed as the
        crabtui command's, the task table and the schedd; the task's crab.log gets the command line
        the call stands for.  What fails raises CommandFailed, which the script sees as the
        exception crab raises there (ClientException or a subclass; BadArgumentException for
        options crab's parser refuses)."""
        from crabtui.commands.task_results import grid_transfer_refusal
        from engine.crab.client import project
        from engine.crab.client.crab_config_py import CommandFailed
        from engine.crab.client.report import ReportError
        from engine.crab.client.resubmit import ResubmitError
        from engine.crab.client.retrieve import RetrieveError
        from engine.crab.taskworker.pool import work as work_on_pool
        from engine.crab.taskworker.taskdb import TaskDB, TaskError

        self._append({"command": command})
        call = f"crabCommand({command!r})"
        try:
            options = task.get_command(self.ctx, command).make_context(command, list(arguments),
                                                                       parent=self.ctx).params
        except click.ClickException as e:  # crab's option parser exits 2: execRaw raises BadArgumentException
            raise CommandFailed(f"{call}: {e.format_message()}", "BadArgumentException") from None
        if (refused := grid_transfer_refusal(command, options) or instance_refusal(options["instance"])) is not None:
            raise CommandFailed(f"{call}: {refused}", "ConfigurationException")
        name = self._named(call, options)
        try:
            with schedd(self.ctx) as client:
                if backend(self.ctx) == "htcondor":
                    work_on_pool(self.state, client)
                db = TaskDB(self.state.tasks)
                try:
                    found = db.get(name)
                    if found.backend != backend(self.ctx):
                        raise CommandFailed(f"{call}: task {found.name} runs on the {found.backend} backend, not on "
                                            f"the {backend(self.ctx)} one; give --backend {found.backend}")
                    if (logged := project.linked(found.task_dir, found.name)) is not None:  # as the UI's commands
                        project.log_command(logged, ["task", command, *arguments])
                    yield found, options, db, client
                finally:
                    db.close()
        except (TaskError, ResubmitError, ScheddError, ReportError, RetrieveError) as e:
            raise CommandFailed(f"{call}: {e}", getattr(e, "exception", "ClientException")) from None

    def _named(self, call: str, parsed: dict) -> str:
        """The task the command line names: its project directory (``--dir``, ``-d`` or the path
        alone, from the directory the script is in, as crab reads it), a name, or the last task of
        the state directory, as crab uses its last project directory."""
        from engine.crab.client import project
        from engine.crab.client.crab_config_py import CommandFailed
        from engine.crab.client.last_task import recall

        given = [parsed[key] for key in ("name", "project_dir", "task_name") if parsed[key] is not None]
        if len(given) > 1:
            raise CommandFailed(f"{call}: give one task: dir=crab_projects/crab_<requestName> (crab's project "
                                f"directory) or task=NAME; got more than one")
        if not given:
            last = recall(self.state)
            if last is None:
                raise CommandFailed(f"{call}: give the task's project directory, dir=crab_projects/crab_<requestName>")
            return last
        if parsed["project_dir"] is None and "/" not in given[0] and not _is_project(given[0]):
            return given[0]
        path = given[0]
        try:
            found = project.read(path) if os.path.isdir(path) else None
        except project.ProjectError as e:
            raise CommandFailed(f"{call}: {e}") from None
        if found is None:
            raise CommandFailed(f"{call}: {path} is not a valid CRAB project directory (in {os.getcwd()}): give the "
                                f"directory the submission printed as 'Project dir:'")
        if found.state_dir != self.state.path:
            raise CommandFailed(f"{call}: task {found.task} of {path} lives in state directory {found.state_dir}, "
                                f"not in {self.state.path}, which this run uses; run the script with --state-dir "
                                f"{shlex.quote(found.state_dir)}")
        return found.task

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

    def dry_runs(self) -> list[str]:
        """The request names of the configurations dry run (``--dryrun``)."""
        with open(self.record, encoding="utf-8") as f:
            return [e["dryrun"] for e in map(json.loads, filter(str.strip, f)) if "dryrun" in e]

    def proceeded(self) -> list[str]:
        """The request names of the tasks the script's crabCommand('proceed') submitted."""
        with open(self.record, encoding="utf-8") as f:
            return [e["proceeded"] for e in map(json.loads, filter(str.strip, f)) if "proceeded" in e]

    def commands_run(self) -> list[str]:
        """crab's other commands the script called (``status``, ...), answered or refused."""
        with open(self.record, encoding="utf-8") as f:
            return [e["command"] for e in map(json.loads, filter(str.strip, f)) if "command" in e]

    def so_far(self) -> str:
        """What was submitted before an error, so that the error line says it is not lost."""
        tasks, _ = self.results()
        return f" (Submitted before that: {', '.join(tasks)}.)" if tasks else ""


CRAB_TASK_STATUSES = ("WAITING", "NEW", "HOLDING", "QUEUED", "TAPERECALL", "KILLRECALL", "UPLOADED", "SUBMITTED",
                      "KILLED", "SUBMITFAILED", "KILLFAILED", "RESUBMITFAILED", "FAILED")  # ServerUtilities.TASKDBSTATUSES


def _since(days: int | None, fromdate: str | None) -> datetime.date | None:
    """crab tasks' --days N / --fromdate YYYY-MM-DD (checked as crab checks them): the first day listed."""
    if days is not None and fromdate is not None:
        fail("Options --fromdate and --days cannot be used together. Please specify only one of them.")
    if days is not None:
        return datetime.date.today() - datetime.timedelta(days=days)
    if fromdate is not None:
        try:
            if len(fromdate) != 10:
                raise ValueError
            return datetime.datetime.strptime(fromdate, "%Y-%m-%d").date()
        except ValueError:
            fail(f"Please enter date with format 'YYYY-MM-DD'. Example: "
                 f"{again(click.get_current_context())} task tasks --fromdate=2014-01-01")
    return None


@task.command("list")
@click.option("--json", "json_output", is_flag=True, help="One object per task.")
@click.option("--days", type=int, metavar="N", help="Only the tasks submitted in the previous N days (crab tasks').")
@click.option("--fromdate", metavar="YYYY-MM-DD", help="Only the tasks submitted since that day (crab tasks').")
@click.option("--status", "status_", metavar="STATUS", help="Only the tasks in that status (crab tasks').")
@click.pass_context
def list_tasks(ctx: click.Context, json_output: bool, days: int | None, fromdate: str | None,
               status_: str | None) -> None:
    """Every task with its status (like crab tasks, also as 'task tasks'; without --days or --fromdate,
    every task of the state directory, where crab tasks lists 30 days)."""
    from engine.crab.taskworker.taskdb import STATUSES

    since = _since(days, fromdate)
    if status_ is not None and status_ not in CRAB_TASK_STATUSES + STATUSES:
        fail(f"Please enter a valid task status. Valid task statuses are: "
             f"{', '.join(dict.fromkeys(CRAB_TASK_STATUSES + STATUSES))}")
    with _tasks(ctx, listing=True) as (db, _, _):
        tasks = [t for t in db.tasks() if (status_ is None or t.status == status_) and
                 (since is None or datetime.date.fromtimestamp(t.submitted_at) >= since)]
    if not tasks and (since is not None or status_ is not None) and not json_output:
        click.echo(f"No tasks found{f' from {since}' if since else ''} until {datetime.date.today()}"
                   f"{f' with status {status_}' if status_ else ''}")
        return
    if json_output:
        click.echo(json.dumps([{"name": t.name, "request_name": t.request_name, "status": t.status,
                                "command": t.command, "dagman_id": t.dagman_id, "submitted_at": t.submitted_at,
                                "message": t.message, "task_dir": t.task_dir,
                                "project_dir": _project_dir(t)} for t in tasks], indent=2))
        return
    width = max((len(t.name) for t in tasks), default=4)
    click.echo(f"{'TASK':<{width}}  {'STATUS':<14}  {'COMMAND':<8}  {'DAGMAN':>6}  MESSAGE")
    for t in tasks:
        click.echo(f"{t.name:<{width}}  {t.status:<14}  {t.command:<8}  {t.dagman_id or '-':>6}  {t.message}")


def _kill_jobids_refusal(command: str) -> str:
    """Why crab kill --jobids is refused, and what kills single jobs here; ``command`` is crabtui's
    command line for the message."""
    return (f"crab kill's --jobids (kill single jobs) was removed from CRAB in 2017, and crabtui does not have it: "
            f"crab kill kills the whole task; drop --jobids to kill it, or to kill single jobs open the task in the "
            f"UI ('{command}', Enter on the task) and press x on them (they fail, and can be resubmitted)")


DBS_REFUSAL = ("CRAB command option error: the option --dbs has been deprecated since CRAB v3.3.1603; drop it (the "
               "report is made from the jobs' own reports)")


def _request_kill(db, name: str, killwarning: str | None):
    """crab kill of task ``name``: the request the task worker carries out; TaskError if CRAB's
    server would refuse it."""
    from engine.crab.taskworker.taskdb import KILL

    return db.request(name, KILL, {"killwarning": killwarning} if killwarning else None)


@task.command()
@task_argument
@crab_options
@click.option("--killwarning", metavar="TEXT", help="A warning that task status shows from then on, as crab kill's.")
@click.option("--jobids", hidden=True)  # removed from crab kill: refused, saying what kills single jobs
@click.pass_context
def kill(ctx: click.Context, name: str, killwarning: str | None, jobids: str | None) -> None:
    """Kill TASK: its jobs are removed and it ends KILLED (like crab kill)."""
    from engine.crab.taskworker.taskdb import TaskError

    if jobids is not None:
        fail(_kill_jobids_refusal(again(ctx)))
    with _tasks(ctx) as (db, state, client):
        name = _named(ctx, db, state, name).name
        try:
            task = _request_kill(db, name, killwarning)
        except TaskError as e:
            fail(str(e))
        _carry_out(ctx, state, client)
    click.echo(f"Kill request for task {task.name} sent; '{again(ctx)} task list' shows when it is KILLED.")


@task.command()
@task_argument
@crab_options
@click.pass_context
def proceed(ctx: click.Context, name: str) -> None:
    """Submit for real the task a dry run (task submit --dryrun) left UPLOADED, under the same name;
    the task worker splits it as the dry run showed (like crab proceed)."""
    from engine.crab.taskworker.taskdb import TaskError

    with _tasks(ctx) as (db, state, client):
        name = _named(ctx, db, state, name).name
        try:
            task = db.proceed(name)
        except TaskError as e:
            fail(str(e))
        _carry_out(ctx, state, client)
    click.echo(f"Task continuation request for task {task.name} successfully sent to the task worker\n"
               f"To check task progress, use '{again(ctx)} task status {task.name}'")


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
@click.option("--idle", is_flag=True, hidden=True)  # not crab status's: refused with the way to the idle jobs
@click.pass_context
def status(ctx: click.Context, name: str, long_: bool, sort: str | None, jobids: str | None, summary: bool,
           verbose_errors: bool, json_output: bool, idle: bool) -> None:
    """The task's status and its jobs' states, laid out as crab status prints them."""
    import gc

    if idle:
        fail(_idle_refusal(again(ctx)))

    from crabtui.task_status import Options, StatusOptionError, TaskInfo, check_options, crab_status, render
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
        crab = crab_status(task, view, scheduler)  # what crabCommand('status') returns to a script
        click.echo(json.dumps({"name": task.name, "status": task.status, "command": task.command,
                               "dagman_id": task.dagman_id, "message": task.message,
                               "scheduler_status": scheduler, "dagman_waiting": view.dag_waiting,
                               "task_dir": task.task_dir, "project_dir": _project_dir(task),
                               "input_lumis": view.input_lumis,
                               # the keys of the dictionary crab status returns to scripts
                               **{key: crab[key] for key in ("dbStatus", "dagStatus", "jobsPerStatus", "jobList",
                                                             "publicationEnabled")},
                               "jobs": [{**j.as_json(), "processed_lumis": processed_lumis(task.task_dir, j)}
                                        for j in view.jobs],
                               "sites": [s.as_json() for s in view.sites.sites] if view.sites else [],
                               "site_policy": view.sites.as_json() if view.sites else None}, indent=2))
        return
    gc.disable()  # the 10,000-line layout makes no garbage cycles; collecting would cost a third of it
    info = TaskInfo(name=task.name, task_dir=_project_dir(task), status=task.status, command=task.command,
                    message=task.message, scheduler_status=scheduler, num_cores=view.num_cores,
                    max_memory_mb=view.max_memory_mb, max_runtime_min=view.max_runtime_min,
                    warnings=view.warnings + task.kill_warnings, sites=view.sites.sites if view.sites else (),
                    automatic=view.automatic, publication=view.publication)
    try:
        lines = render(info, view.jobs, now, options)
    except StatusOptionError as e:
        fail(str(e))
    click.echo("\n".join(lines))


def _idle_refusal(command: str) -> str:
    """Why status --idle is refused, and where the idle jobs are; ``command`` is crabtui's command line."""
    return (f"crab status has no --idle option; the idle jobs are those in state idle in '{command} task status "
            f"--long --sort=state' (their number is in the summary, and 'task status --json' gives jobsPerStatus)")


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
@click.option("--force", is_flag=True, hidden=True)  # removed from crab resubmit: refused, saying so
@click.option("--numcores", hidden=True)  # removed from crab resubmit: refused, saying so
@click.pass_context
def resubmit(ctx: click.Context, name: str, jobids: str | None, sitewhitelist: str | None,
             siteblacklist: str | None, maxjobruntime: int | None, maxmemory: int | None,
             priority: int | None, publication: bool, force: bool, numcores: str | None) -> None:
    """Resubmit TASK's failed jobs, with new parameters if given (like crab resubmit).

    Options not given keep the task's original values; the new ones apply to the resubmitted jobs
    only, on their resubmission and on its automatic retries, each with a fresh retry budget.
    """
    from engine.crab.client.resubmit import ResubmitError, request_resubmit
    from engine.crab.taskworker.taskdb import TaskError

    try:
        arguments = _resubmit_arguments(again(ctx), jobids=jobids, sitewhitelist=sitewhitelist,
                                        siteblacklist=siteblacklist, maxjobruntime=maxjobruntime, maxmemory=maxmemory,
                                        priority=priority, force=force, numcores=numcores)
    except ResubmitError as e:
        fail(str(e))
    with _tasks(ctx) as (db, state, client):
        task = _named(ctx, db, state, name)
        try:
            _check_publication(task, publication)
            task = request_resubmit(db, client, task, arguments)
        except (TaskError, ResubmitError) as e:
            fail(str(e))
        _carry_out(ctx, state, client)
    click.echo(f"Resubmit request for task {task.name} sent; '{again(ctx)} task status {task.request_name}' shows "
               "how the resubmission proceeds.")


def _resubmit_arguments(command: str, *, force: bool, numcores: str | None, **options) -> dict:
    """crab resubmit's options as the request records them; ResubmitError for one crab refuses
    (or removed), saying what to do.  ``command`` is crabtui's command line for the messages."""
    from engine.crab.client.resubmit import ResubmitError, request_arguments

    if force:
        raise ResubmitError(
            "crab resubmit's --force (resubmit finished jobs) was removed from CRAB in 2025, and crabtui does not "
            "have it: only failed jobs are resubmitted; drop --force, and to process a finished job's input "
            f"again submit a new task (its lumis are in '{command} task report' processedLumis.json)")
    if numcores is not None:
        raise ResubmitError(
            "crab resubmit's --numcores was removed from CRAB in 2025, and crabtui does not have it: resubmitted jobs "
            "keep the task's JobType.numCores; drop --numcores, and for other cores submit the configuration again "
            "with JobType.numCores set")
    return request_arguments(**options)


def _check_publication(task, publication: bool) -> None:
    """crab resubmit --publication, refused: with Data.publication off in crab's own words, else
    saying that crabtui publishes nothing, so there is no failed publication to resubmit."""
    from engine.crab.client.resubmit import ResubmitError
    from engine.crab.taskworker.dagman_creator import read_task

    if not publication:
        return
    try:
        enabled = read_task(task.task_dir).get("publication")
    except (OSError, ValueError):
        enabled = None
    if enabled is False:
        raise ResubmitError("Publication was disabled for this task. Therefore, there are no publications to "
                            "resubmit.")
    raise ResubmitError(
        "--publication resubmits a task's failed publications, and crabtui publishes no output dataset "
        "(Data.publication has no effect), so there is none; resubmit failed jobs without --publication")


@task.command()
@task_argument
@crab_options
@click.option("--outputdir", metavar="DIR", help="Where to write the lumi files (default: the project directory's "
                                                "results/).")
@click.option("--recovery", default="notFinished", show_default=True, metavar="notFinished|failed",
              help="Which lumis are left to process: those not finished, or those of failed jobs.")
@click.option("--dbs", hidden=True)  # removed from crab report: refused in crab's words
@click.pass_context
def report(ctx: click.Context, name: str, outputdir: str | None, recovery: str, dbs: str | None) -> None:
    """What TASK's finished jobs read and wrote, and its lumi files (like crab report).

    processedLumis.json, notFinishedLumis.json (or failedLumis.json with --recovery failed),
    lumisToProcess.json, inputDatasetLumis.json, ... go to results/ in the task's project directory
    (General.workArea/crab_<requestName>), or --outputdir; a notFinishedLumis.json is the lumi mask
    of a recovery task.
    """
    from crabtui.commands.task_results import report_task
    from engine.crab.client.report import ReportError, report_lines

    if dbs is not None:
        fail(DBS_REFUSAL)
    with _tasks(ctx) as (db, state, client):
        task = _named(ctx, db, state, name)
        try:
            made, directory = report_task(ctx, state, client, task, _results(task), outputdir=outputdir,
                                          recovery=recovery)
        except ReportError as e:
            fail(str(e))
    click.echo("\n".join(report_lines(made, directory, recovery)))


def retrieve_options(command):
    """crab getoutput's and crab getlog's options (getcommand.setOptions) that mean something here."""
    command = click.option("--checksum", default="yes", show_default=True, metavar="yes|no",
                           help="Compare each copy with its source by ADLER32.")(command)
    command = click.option("--quantity", metavar="N|all",
                           help="How many files to retrieve (ignored with --jobids).")(command)
    command = click.option("--dump", is_flag=True, help="List the files' paths instead of copying them.")(command)
    command = click.option("--jobids", metavar="IDS", help="The jobs to retrieve from, e.g. 1,3-5 (default: all "
                                                          "with something to retrieve).")(command)
    command = _grid_transfer_options(command)
    command = _vo_options(command)
    return click.option("--outputpath", metavar="DIR",
                        help="Where to put the files (default: the project directory's results/).")(command)


def _vo_options(command):
    """crab's --voRole and --voGroup (the VOMS role and group of the grid proxy, which crab getoutput
    and crab getlog take): accepted, as --proxy is, and unused, since there is no grid credential."""

    @functools.wraps(command)
    def run(*args, vo_role: str | None, vo_group: str | None, **kwargs):
        return command(*args, **kwargs)

    run = click.option("--voGroup", "vo_group", metavar="GROUP",
                       help="crab's VOMS group of the grid proxy: accepted, and unused.")(run)
    return click.option("--voRole", "vo_role", metavar="ROLE",
                        help="crab's VOMS role of the grid proxy: accepted, and unused.")(run)


def _grid_transfer_options(command):
    """crab's --xrootd, --parallel N, --wait N and --command TOOL, pasted from a crab command line,
    are refused in one line saying what to do, rather than as unknown options."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        from crabtui.commands.task_results import grid_transfer_refusal

        if (refused := grid_transfer_refusal(click.get_current_context().command.name, kwargs)) is not None:
            fail(refused)
        return command(*args, **kwargs)

    run = click.option("--xrootd", "grid_xrootd", is_flag=True, hidden=True)(run)
    for name in ("parallel", "wait", "command"):
        run = click.option(f"--{name}", f"grid_{name}", hidden=True)(run)
    return run


@task.command()
@task_argument
@crab_options
@retrieve_options
@click.pass_context
def getoutput(ctx: click.Context, name: str, outputpath: str | None, jobids: str | None, dump: bool,
              quantity: str | None, checksum: str) -> None:
    """Copy the output files TASK's jobs staged out to its project directory's results/ (like crab
    getoutput; short names output and out)."""
    _retrieve(ctx, name, outputpath=outputpath, jobids=jobids, dump=dump, quantity=quantity, checksum=checksum,
              logs=False)


@task.command()
@task_argument
@crab_options
@retrieve_options
@click.option("--short", is_flag=True, help="crab's short logs from the scheduler: what task getlog always "
                                            "retrieves (the jobs transfer no log archive).")
@click.pass_context
def getlog(ctx: click.Context, name: str, outputpath: str | None, jobids: str | None, dump: bool,
           quantity: str | None, checksum: str, short: bool) -> None:
    """Copy the logs of TASK's jobs, each attempt's job_out.<id>.<retry>.txt, to its project
    directory's results/ (like crab getlog --short; short name log)."""
    _retrieve(ctx, name, outputpath=outputpath, jobids=jobids, dump=dump, quantity=quantity, checksum=checksum,
              logs=True, short=short)


def _retrieve(ctx: click.Context, name: str | None, *, logs: bool, **options) -> None:
    """crab getoutput / crab getlog on the command line: what :func:`retrieve_files` says, and
    exit status 1 if a file could not be copied."""
    from crabtui.commands.task_results import retrieve_files
    from engine.crab.client.retrieve import RetrieveError

    with _tasks(ctx) as (db, state, client):
        task = _named(ctx, db, state, name)
        try:
            _, failure = retrieve_files(ctx, client, task, _results(task), logs=logs, say=click.echo, **options)
        except RetrieveError as e:
            fail(str(e))
    if failure is not None:
        fail(failure)
