"""condor_submit_dag: check a DAG, write ``<dag>.condor.sub`` and queue DAGMan as a job.

The DAGMan job is a scheduler-universe job running ``condor_dagman`` (the embedded DAGMan's
program in the state directory) in the DAG's directory.  As with HTCondor, ``remove_kill_sig = SIGUSR1`` turns condor_rm into DAGMan's
remove-and-write-a-rescue path, holding it sends SIGTERM (a graceful stop that keeps the lock
file, so a release recovers), and ``OtherJobRemoveRequirements`` makes the schedd remove the
node jobs together with their DAGMan.  Sub-DAG nodes are submitted the same way, by the DAGMan
that runs their parent DAG.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import classad2

from engine.dag import DagError, Diagnostic, Location, build_graph, parse_file
from engine.dag.rescue import rescue_files, rescue_path, save_file_path
from engine.dagman.config import config_file, knob_values
from engine.dagman.dagman_out import dagman_out_path
from engine.dagman.lockfile import holder_alive, read_lock
from engine.schedd.local import job_tools
from engine.schedd.local.submit import quote_arguments

# condor_submit_dag's default on_exit_remove: a DAGMan that crashed (signal 11 aside) or was
# killed is queued again by the schedd, and comes back in recovery mode.
# The files of a previous run that -force deletes and that stop a submit without it (or
# -update_submit, which keeps them and rewrites the first).
_OVERWRITTEN = (".condor.sub", ".dagman.log", ".lib.out", ".lib.err")

ON_EXIT_REMOVE = "(ExitSignal =?= 11 || (ExitCode =!= UNDEFINED && ExitCode >=0 && ExitCode <= 2))"

# The variables condor_submit_dag 23.9.6 lets the DAGMan job import (its .condor.sub's getenv).
DAGMAN_GETENV = ("CONDOR_CONFIG,_CONDOR_*,PATH,PYTHONPATH,PERL*,PEGASUS_*,TZ,HOME,USER,LANG,LC_ALL,"
                 "BEARER_TOKEN,BEARER_TOKEN_FILE,XDG_RUNTIME_DIR")


@dataclass(frozen=True)
class DagSubmitOptions:
    """condor_submit_dag's options that crabtui supports; 0 limits mean DAGMan's defaults."""

    max_jobs: int = 0
    max_idle: int | None = None  # None: not given (condor_submit_dag passes 1000); 0: none passed
    max_pre: int = 0
    max_post: int = 0
    max_hold: int = 0
    force: bool = False
    do_rescue_from: int | None = None
    always_run_post: bool = False
    batch_name: str | None = None
    config: str | None = None  # a DAGMan config file, relative to the DAG's directory or absolute
    priority: int = 0  # added to every node's priority (a sub-DAG gets its SUBDAG node's)
    load_save: str | None = None  # -load_save: a SAVE_POINT_FILE to start from
    append: tuple[str, ...] = ()  # -append: submit commands added to <dag>.condor.sub
    notification: str | None = None  # -notification: the DAGMan job's (and its nodes') e-mail setting
    outfile_dir: str | None = None  # -outfile_dir: where <dag>.dagman.out goes
    debug: int | None = None  # -debug: DAGMan's verbosity (DAGMAN_VERBOSITY)
    update_submit: bool = False  # -update_submit: an earlier run's <dag>.condor.sub may be overwritten
    auto_rescue: bool = True  # -autorescue 0: the newest rescue DAG is not run (DAGMAN_AUTO_RESCUE)
    import_env: bool = False  # -import_env: DAGMan gets the submitter's whole environment
    include_env: tuple[str, ...] = ()  # -include_env: more of the submitter's variables for DAGMan
    insert_env: tuple[str, ...] = ()  # -insert_env: KEY=VALUE pairs set in DAGMan's environment
    do_recovery: bool = False  # -DoRecovery: DAGMan rebuilds the DAG's state from its nodes log
    suppress_notification: bool = False  # -suppress_notification: node jobs get notification = never


def dagman_out(dag_file: str, options: DagSubmitOptions) -> str:
    """``<dag>.dagman.out``: beside the DAG, or in -outfile_dir."""
    return dagman_out_path(dag_file, options.outfile_dir)


def files(dag_file: str, options: DagSubmitOptions | None = None) -> dict[str, str]:
    """The files condor_submit_dag names for a DAG, as its banner lists them."""
    return {
        "File for submitting this DAG to HTCondor": dag_file + ".condor.sub",
        "Log of DAGMan debugging messages": dagman_out(dag_file, options or DagSubmitOptions()),
        "Log of HTCondor library output": dag_file + ".lib.out",
        "Log of HTCondor library error messages": dag_file + ".lib.err",
        "Log of the life of condor_dagman itself": dag_file + ".dagman.log",
    }


# The -MaxIdle condor_submit_dag 23.9.6 passes when none is given.
SUBMIT_DAG_MAX_IDLE = 1000


def max_idle(options: DagSubmitOptions) -> int:
    """The -MaxIdle condor_submit_dag 23.9.6 passes (0: none): the one given, else 1000 whatever
    DAGMAN_MAX_JOBS_IDLE the DAG's CONFIG file or the submitter's environment sets (seen on the
    pool: ``DAGMAN_MAX_JOBS_IDLE setting: 4`` then ``-MaxIdle limit (1000)``; with
    ``_CONDOR_DAGMAN_MAX_JOBS_IDLE=5`` too); -maxidle 0 passes none, leaving it to DAGMan's
    configuration, the DAG's CONFIG file among it."""
    return SUBMIT_DAG_MAX_IDLE if options.max_idle is None else options.max_idle


# condor_dagman's options condor_submit_dag passes on, in its order: the DagSubmitOptions field,
# the embedded DAGMan's spelling, and condor_submit_dag 23.9.6's for HTCondor's condor_dagman.
PASSED_ON = (
    ("max_jobs", "-MaxJobs", "-MaxJobs"),
    ("max_idle", "-MaxIdle", "-MaxIdle"),
    ("max_pre", "-MaxPre", "-MaxPre"),
    ("max_post", "-MaxPost", "-MaxPost"),
    ("max_hold", "-MaxHold", "-MaxHold"),
    ("always_run_post", "-AlwaysRunPost", "-AlwaysRunPost"),
    ("priority", "-priority", "-Priority"),
    ("load_save", "-load_save", "-load_save"),
    ("outfile_dir", "-outfile_dir", "-outfile_dir"),
    ("debug", "-debug", "-Debug"),
    ("do_recovery", "-DoRecovery", "-DoRecov"),
)


def passed_on(options: DagSubmitOptions, htcondor: bool) -> list[str]:
    """:data:`PASSED_ON`'s options that are given, as one DAGMan spells them: a flag when True,
    else with its value; a 0 or empty value passes nothing but ``-debug 0``, and -MaxIdle is
    :func:`max_idle`'s."""
    argv: list[str] = []
    for field, embedded, pool in PASSED_ON:
        value = max_idle(options) if field == "max_idle" else getattr(options, field)
        flag = pool if htcondor else embedded
        if value is True:
            argv.append(flag)
        elif value or (field == "debug" and value == 0):
            argv += [flag, str(value)]
    return argv


def dagman_arguments(dag_file: str, options: DagSubmitOptions) -> list[str]:
    """The embedded condor_dagman's command line for the job."""
    argv = ["-Lockfile", dag_file + ".lock", "-AutoRescue", str(int(options.auto_rescue))]
    if options.do_rescue_from is not None:
        argv += ["-DoRescueFrom", str(options.do_rescue_from)]
    argv += passed_on(options, htcondor=False)
    if options.config:
        argv += ["-config", options.config]
    if options.suppress_notification:
        argv.append("-suppress_notification")
    if options.force:  # DAGMan passes it on to its sub-DAGs' condor_submit_dag -no_submit
        argv.append("-force")
    return argv + ["-Dag", dag_file]


def format_condor_sub(dag_file: str, options: DagSubmitOptions, state_dir: str) -> str:
    """``<dag>.condor.sub``, with paths relative to the DAG's directory (the job's Iwd).  DAGMan
    gets only the environment condor_submit_dag gives it (:data:`DAGMAN_GETENV`), not the
    submitter's secrets; ``state_dir`` tells it its schedd."""
    name = os.path.basename(dag_file)
    dag = parse_file(dag_file)
    getenv = ",".join([DAGMAN_GETENV, *dag.env_get, *options.include_env])
    environment = [*dag.env_set, *options.insert_env]
    if options.import_env:
        environment = imported_environment(environment)
    environment.append(f"CRABTUI_STATE_DIR={state_dir}")
    return _dagman_job(name, "crabtui dag submit", job_tools.condor_dagman(state_dir), getenv, dagman_arguments(name, options),
                       environment, options, dag.set_job_attrs)


def imported_environment(assignments: list[str], left_out: tuple[str, ...] = ("CRABTUI_STATE_DIR",)) -> list[str]:
    """-import_env: condor_submit_dag 23.9.6 writes the submitter's whole environment, as it is at
    the submit, into ``environment``, the DAG's ENV SET and -insert_env assignments over it, sorted
    by name (seen on the pool), so that DAGMan gets it however late the file is submitted.  A value
    holding a newline cannot be written there and is left out, and so are the variables named in
    ``left_out`` (a name ending in ``*``, those it begins): crabtui's own state directory is the
    job's.  CONDOR_CONFIG=/dev/null is the bindings' own, set in this process when there is no
    HTCondor configuration: not the submitter's."""
    merged = {key: value for key, value in os.environ.items() if "\n" not in value
              and (key, value) != ("CONDOR_CONFIG", os.devnull)
              and not any(key.startswith(name[:-1]) if name.endswith("*") else key == name for name in left_out)}
    merged.update(assignment.split("=", 1) for assignment in assignments)
    return [f"{key}={value}" for key, value in sorted(merged.items())]


def _dagman_job(name: str, generator: str, executable: str, getenv: str, argv: list[str],
                environment: list[str], options: DagSubmitOptions, attrs: dict[str, str]) -> str:
    """The scheduler-universe description both DAGMans share: condor_submit_dag's files,
    removal by SIGUSR1 taking the node jobs along, and its on_exit_remove; then, as
    condor_submit_dag orders them, the DAG's SET_JOB_ATTR attributes, -notification and the
    -append commands.  The DAG's ENV GET names join ``getenv`` and its ENV SET assignments
    ``environment``, so DAGMan and the scripts it runs see them (node jobs do not)."""
    lines = [
        f"# Filename: {name}.condor.sub",
        f"# Generated by {generator}",
        "universe\t= scheduler",
        f"executable\t= {executable}",
        f"getenv\t= {getenv}",
        f"output\t= {name}.lib.out",
        f"error\t= {name}.lib.err",
        f"log\t= {name}.dagman.log",
    ]
    if options.batch_name:
        lines.append(f"My.JobBatchName\t= {classad2.quote(options.batch_name)}")
    lines += [
        "remove_kill_sig\t= SIGUSR1",
        'My.OtherJobRemoveRequirements\t= "DAGManJobId =?= $(cluster)"',
        f"on_exit_remove\t= {ON_EXIT_REMOVE}",
        "copy_to_spool\t= False",
        f"arguments\t= {quote_arguments(argv)}",
    ]
    if environment:
        lines.append(f"environment\t= {quote_arguments(environment)}")
    lines += [f"My.{attr}\t= {value}" for attr, value in attrs.items()]
    if options.notification:
        lines.append(f"notification\t= {options.notification}")
    lines += options.append
    return "\n".join(lines) + "\nqueue\n"


def prepare(dag_file: str, options: DagSubmitOptions) -> int | None:
    """condor_submit_dag's checks before it writes ``<dag>.condor.sub``: the DAG parses, its
    CONFIG file (or -config's) is readable and its DAGMAN_* values are ones DAGMan takes, no
    DAGMan runs it, -force clears an earlier run's files, and without -force (or a rescue DAG
    to run) they are not overwritten.  Raises :class:`DagError` naming the file and what to do.
    Returns the number of the rescue DAG DAGMan will run, picked up by itself or named by
    -dorescuefrom, which condor_submit_dag announces ("Running rescue DAG 1"), or None.
    """
    dag = parse_file(dag_file)
    build_graph(dag)
    knobs = knob_values(config_file(dag.config, options.config, dag_file))
    lock = read_lock(dag_file + ".lock")
    if lock is not None and holder_alive(lock, dag_file):
        raise _error(dag_file + ".lock", f"DAGMan (pid {lock.pid}) is still running {dag_file}; "
                     "remove its DAGMan job first")
    if options.load_save and options.do_recovery:
        raise _error(dag_file, "-load_save and -DoRecovery cannot be used together: DAGMan starts from one of them")
    rescues = rescue_files(dag_file)
    if options.do_rescue_from is not None and not os.path.exists(rescue_path(dag_file, options.do_rescue_from)):
        raise _error(rescue_path(dag_file, options.do_rescue_from),  # with -force too, as condor_submit_dag checks
                     f"-dorescuefrom {options.do_rescue_from}: there is no such rescue DAG")
    if options.force:
        for path in (dag_file + suffix for suffix in _OVERWRITTEN):
            if os.path.exists(path):
                os.unlink(path)
        rename_rescue_dags(dag_file)
    elif options.do_rescue_from is not None:
        pass  # a rerun from a rescue DAG writes over the earlier run's files
    elif options.load_save:  # condor_submit_dag: a save file reruns over the earlier run's files
        path = save_file_path(dag_file, options.load_save)
        if not os.path.exists(path):
            raise _error(path, f"-load_save {options.load_save}: there is no such save file")
    elif (not rescues or not options.auto_rescue) and not options.update_submit and not options.do_recovery:
        # with -autorescue 0 a rescue DAG does not excuse them; -update_submit and -DoRecovery do
        # (ensureOutputFilesExist; -DoRecovery seen on the pool)
        for path in (dag_file + suffix for suffix in _OVERWRITTEN):
            if os.path.exists(path):
                raise _error(path, "already exists: some files needed by DAGMan exist from an earlier run; "
                             "rename them, use -force to overwrite them, or -update_submit to update the "
                             "submit file and continue")
    if os.path.exists(dag_file + ".halt"):
        os.unlink(dag_file + ".halt")
    if options.do_rescue_from is not None and not options.force:  # -f renamed it: DAGMan runs the DAG
        return options.do_rescue_from
    if rescues and not options.force and options.do_rescue_from is None and not options.load_save \
            and options.auto_rescue and knobs.get("auto_rescue", True):
        return rescues[-1][0]
    return None


def rename_rescue_dags(dag_file: str) -> None:
    """-force: the DAG's rescue DAGs become ``.old``, so that it runs from its start."""
    for _, path in rescue_files(dag_file):
        os.replace(path, path + ".old")


def recursive_submit_command(dag_file: str, options: DagSubmitOptions) -> str:
    """The condor_submit_dag -no_submit DAGMan 23.9.6 runs for a SUBDAG node, as its dagman.out
    shows it (``Recursive submit command: <...>``), its options in DAGMan's order."""
    argv = ["condor_submit_dag", "-no_submit", "-update_submit"]
    if options.force:
        argv.append("-force")
    if options.priority:
        argv += ["-Priority", str(options.priority)]
    argv += ["-AutoRescue", str(int(options.auto_rescue))]
    if options.suppress_notification:
        argv.append("-suppress_notification")
    return " ".join([*argv, dag_file])


def read_insert_sub_file(path: str) -> tuple[str, ...]:
    """-insert_sub_file's lines, added to ``<dag>.condor.sub`` before -append's as condor_submit_dag
    23.9.6 copies them: each stripped of its blanks, comments and blank lines kept, a line ending in
    ``\\`` joined with the next (``+Cont = 1 \\`` and ``  + 2`` make ``+Cont = 1 + 2``)."""
    with open(path, encoding="utf-8") as f:
        lines, joined = [], ""
        for line in f.read().splitlines():
            line = line.strip()
            if line.endswith("\\"):
                joined += line[:-1]
                continue
            lines.append(joined + line)
            joined = ""
        return tuple(lines + [joined] if joined else lines)


def write_condor_sub(dag_file: str, text: str) -> str:
    """Write ``<dag>.condor.sub`` (for a sub-DAG node, each time it is submitted, as
    ``condor_submit_dag -update_submit`` does) and return its text."""
    with open(dag_file + ".condor.sub", "w", encoding="utf-8") as f:
        f.write(text)
    return text


def condor_dagman() -> str:
    """The pool's condor_dagman: next to the user's HTCondor tools, else where packages put it."""
    return shutil.which("condor_dagman") or "/usr/bin/condor_dagman"


def format_condor_dagman_sub(dag_file: str, options: DagSubmitOptions, dagman: str, csd_version: str) -> str:
    """``<dag>.condor.sub`` for HTCondor's own condor_dagman on a real pool, written as
    condor_submit_dag writes it rather than through ``Submit.from_dag``, which needs condor_dagman
    on the submitting host and leaks the submitter's environment into DAGMan."""
    name = os.path.basename(dag_file)
    notification = ["-notification", options.notification] if options.notification else ["-Suppress_notification"]
    argv = ["-p", "0", "-f", "-l", ".", "-Lockfile", f"{name}.lock", "-AutoRescue", str(int(options.auto_rescue)),
            "-DoRescueFrom", str(options.do_rescue_from or 0), "-Dag", name, *notification,
            "-CsdVersion", csd_version, "-Dagman", dagman]
    argv += passed_on(options, htcondor=True)
    if options.suppress_notification and options.notification:  # else -Suppress_notification is there
        argv.append("-suppress_notification")
    if options.force:  # DAGMan passes it on to its sub-DAGs' condor_submit_dag -no_submit
        argv.append("-force")
    dag = parse_file(dag_file)  # condor_submit_dag reads CONFIG, SET_JOB_ATTR and ENV lines
    environment = [*dag.env_set, *options.insert_env, f"_CONDOR_DAGMAN_LOG={dagman_out(name, options)}", "_CONDOR_MAX_DAGMAN_LOG=0"]
    config = options.config
    if config is None and (in_dag := dag.config):
        config = os.path.join(os.path.dirname(os.path.abspath(dag_file)), in_dag)
    if config:  # condor_submit_dag hands DAGMan its -config file this way
        environment.append(f"_CONDOR_DAGMAN_CONFIG_FILE={config}")
    if options.import_env:  # the whole environment as it is now, not a later submit's (-no_submit), but
        # this host's HTCondor configuration, which the access point may not have (the test pool's
        # client.config is outside its root): its DAGMan would exit at once, unable to read it
        environment = imported_environment(environment, ("CONDOR_CONFIG", "_CONDOR_*"))
    # nor through getenv: not the host's own CONDOR_CONFIG
    getenv = ",".join([*dag.env_get, *options.include_env]) or "false"
    return _dagman_job(name, "crabtui dag submit --backend htcondor", dagman, getenv, argv, environment, options,
                       dag.set_job_attrs)


def _error(path: str, message: str) -> DagError:
    return DagError([Diagnostic(Location(path), message)])
