"""condor_dagman's command line: parse the DAG, pick up a rescue DAG, run, exit with DAGMan's code."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from engine.dag import DagError, Diagnostic, Location, build_graph, parse_file
from engine.dag.rescue import (MAX_RESCUE_NUM, apply_rescue, read_rescue, rescue_files, rescue_path,
                               save_file_path)
from engine.dagman.config import Options, config_file, knob_values
from engine.dagman.dagman_out import ALWAYS, DagmanOut, dagman_out_path
from engine.dagman.lockfile import Lock, holder_alive, read_lock, write_lock
from engine.dagman.node import DagStatus
from engine.dagman.node_status import NodeState
from engine.dagman.runner import EXIT_ERROR, EXIT_OKAY, EXIT_RESTART, DagMan
from engine.schedd.local.client import LocalScheddClient
from engine.state import state_dir


class OneLineParser(argparse.ArgumentParser):
    """A command line refused in one line, exit status 1, as condor_dagman refuses one."""

    def error(self, message: str):
        self.exit(1, f"ERROR: {message}; see '{self.prog} --help'\n")


def options_parser(prog: str = "python -m engine.dagman") -> argparse.ArgumentParser:
    parser = OneLineParser(prog=prog, description="Run a DAG file as condor_dagman does.")
    parser.add_argument("dag", nargs="?", help="the DAG file")
    parser.add_argument("-Dag", "--dag", dest="dag_option", metavar="DAG", help="the DAG file (as condor_dagman takes it)")
    parser.add_argument("-maxjobs", "-MaxJobs", "--maxjobs", type=int, help="most nodes with jobs in the queue (0: no limit)")
    parser.add_argument("-maxidle", "-MaxIdle", "--maxidle", type=int, help="most idle job procs (default 1000)")
    parser.add_argument("-maxpre", "-MaxPre", "--maxpre", type=int, help="most PRE scripts at once (default 20)")
    parser.add_argument("-maxpost", "-MaxPost", "--maxpost", type=int, help="most POST scripts at once (default 20)")
    parser.add_argument("-maxhold", "-MaxHold", "--maxhold", type=int, help="most HOLD scripts at once (default 20)")
    parser.add_argument("-config", "--config", metavar="FILE", help="a DAGMan configuration file (DAGMAN_* knobs)")
    parser.add_argument("-force", "--force", action="store_true", help="ignore existing rescue DAGs (renamed .old)")
    parser.add_argument("-dorescuefrom", "-DoRescueFrom", "--dorescuefrom", type=int, metavar="N",
                        help="run from rescue DAG number N")
    parser.add_argument("-AutoRescue", "-autorescue", "--autorescue", type=int, choices=(0, 1),
                        help="1: run from the newest rescue DAG, if any (default DAGMAN_AUTO_RESCUE, True)")
    parser.add_argument("-AlwaysRunPost", "--always-run-post", action="store_true", dest="always_run_post",
                        default=None, help="run POST scripts even after a failed PRE script")
    parser.add_argument("-DoRecovery", "--do-recovery", action="store_true", dest="do_recovery",
                        help="rebuild the state from the nodes log even without a lock file")
    parser.add_argument("-Lockfile", "--lockfile", help="the lock file (default: DAG.lock)")
    parser.add_argument("-priority", "-Priority", "--priority", type=int,
                        help="added to every node's priority (a sub-DAG's DAGMan gets its SUBDAG node's); "
                             "default DAGMAN_DEFAULT_PRIORITY")
    parser.add_argument("-load_save", "--load-save", dest="load_save", metavar="FILE",
                        help="run from a SAVE_POINT_FILE (a bare name is looked for in save_files/)")
    parser.add_argument("-outfile_dir", "--outfile-dir", dest="outfile_dir", metavar="DIR",
                        help="write DAG.dagman.out in DIR instead of beside the DAG")
    parser.add_argument("-debug", "--debug", type=int, metavar="LEVEL",
                        help="DAGMan's verbosity, 0 to 7 (default DAGMAN_VERBOSITY, 3)")
    parser.add_argument("-suppress_notification", "--suppress-notification", action="store_true", default=None,
                        dest="suppress_notification", help="node jobs send no e-mail, whatever their submit files say "
                                                           "(default DAGMAN_SUPPRESS_NOTIFICATION)")
    parser.add_argument("--state-dir", help="the embedded schedd's state directory")
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m engine.dagman") -> int:
    parser = options_parser(prog)
    args, extra = parser.parse_known_args(argv)
    files = [word for word in extra if not word.startswith("-")]
    if files and (args.dag or args.dag_option) and len(files) == len(extra):  # condor_submit_dag a.dag b.dag
        parser.error(f"{' '.join([args.dag or args.dag_option, *files])}: {prog} runs one DAG file; run each "
                     "on its own, or join them in one DAG with SUBDAG EXTERNAL or SPLICE")
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    dag_file = args.dag_option or args.dag
    if not dag_file:
        parser.error("name the DAG file")
    if args.load_save and (args.dorescuefrom or args.do_recovery):
        parser.error("-load_save cannot be combined with -dorescuefrom or -DoRecovery")
    lock_path = args.lockfile or dag_file + ".lock"
    dagman_id = int(os.environ.get("CONDOR_ID", "0").split(".")[0] or 0)
    state = state_dir(args.state_dir)
    try:
        dag = parse_file(dag_file)
        config = config_file(dag.config, args.config, dag_file)
        knobs = knob_values(config)
        given = {"max_jobs": args.maxjobs, "max_idle": args.maxidle, "max_pre": args.maxpre,
                 "max_post": args.maxpost, "max_hold": args.maxhold, "always_run_post": args.always_run_post,
                 "priority": args.priority, "auto_rescue": None if args.autorescue is None else args.autorescue == 1,
                 "save_file": args.load_save, "outfile_dir": args.outfile_dir,
                 "verbosity": args.debug, "suppress_notification": args.suppress_notification}
        configured = dict(knobs)
        knobs.update({name: value for name, value in given.items() if value is not None})
        options = Options(**knobs, dagman_id=dagman_id, state_dir=state.path, configured=configured, force=args.force,
                          argv=tuple(sys.argv[1:] if argv is None else argv),
                          config_file=os.path.abspath(config) if config else None)
        lock = read_lock(lock_path)
        if lock is not None and options.abort_duplicates and holder_alive(lock, dag_file):
            print(f"ERROR: {lock_path}: DAGMan (pid {lock.pid}) is still running {dag_file}; "
                  f"remove that DAGMan first (or wait for it to exit)", file=sys.stderr)
            return EXIT_ERROR
        options.recovery = lock is not None or args.do_recovery
        options.found_lock = None if lock is None else (lock_path, lock.pid)
        graph = build_graph(dag, join_nodes=options.use_join_nodes)
        if options.recovery and lock is not None:  # the rescue DAG the run that died started from
            options.rescue_dag_number = lock.rescue_dag_number
            rescue = rescue_path(dag_file, lock.rescue_dag_number) if lock.rescue_dag_number else None
            if rescue is not None:
                options.rescue_notes = _using(rescue, f"Found rescue DAG number {lock.rescue_dag_number}")
        elif options.save_file and not args.force:  # started from the save file: no rescue DAG is looked for
            rescue = None
        else:
            rescue, options.rescue_notes = choose_rescue(dag_file, args.force, args.dorescuefrom, options.auto_rescue,
                                                         options.max_rescue_num)
            options.rescue_dag_number = int(rescue.rsplit("rescue", 1)[1]) if rescue else 0
        if options.save_file:  # loaded instead of any rescue DAG (again by the restart of a held DAGMan)
            apply_rescue(graph, read_rescue(save_file_path(dag_file, options.save_file)))
        elif rescue is not None:
            apply_rescue(graph, read_rescue(rescue))
        if options.startup_cycle_detect and graph.find_cycle() is not None:
            print(f"ERROR: {dag_file}: a cycle exists in the dag, please check input", file=sys.stderr)
            return EXIT_ERROR
    except DagError as e:
        for error in e.errors:
            print(f"ERROR: {error}", file=sys.stderr)
        log_startup_errors(dag_file, args.outfile_dir, e.errors)
        return EXIT_ERROR
    adjust_for_max_idle(options, knobs)
    options.paced_submits = ("scan_interval" in knobs or "max_submits_per_interval" in knobs
                             or options.max_submits_per_interval != Options.max_submits_per_interval)
    if not options.recovery:  # condor_submit_dag deletes a stale halt file
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dag_file + ".halt")
    write_lock(lock_path, Lock(os.getpid(), dagman_id, options.rescue_dag_number))
    with LocalScheddClient(state, patient=True) as schedd:
        try:
            dagman = DagMan(graph, schedd, options)
        except OSError as e:  # the nodes log (DAGMAN_DEFAULT_NODE_LOG) cannot be written
            print(f"ERROR: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
            remove_lock(lock_path)
            return EXIT_ERROR
        code = dagman.run()
    if code != EXIT_RESTART:  # a graceful stop keeps the lock, so the restart recovers
        remove_lock(lock_path)
    if code != EXIT_OKAY:
        print(f"ERROR: {ending(dagman, code)}", file=sys.stderr)
    return code


def log_startup_errors(dag_file: str, outfile_dir: str | None, errors: list) -> None:
    """A DAG or CONFIG file DAGMan cannot start on: the errors go to dagman.out too, the file
    people and ``crabtui dag status`` read first, not only to the job's .lib.err."""
    with contextlib.suppress(OSError), DagmanOut(dagman_out_path(dag_file, outfile_dir)) as out:
        for error in errors:
            out.line(f"ERROR: {error}", ALWAYS)
        out.exiting_with_status(EXIT_ERROR)


def remove_lock(path: str) -> None:
    """Remove the lock at exit; a second DAGMan on the DAG (DAGMAN_ABORT_DUPLICATES = False) may
    have removed it first, which is no error, as in DAGMan."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


# DAGMan's own DAGMAN_USER_LOG_SCAN_INTERVAL default, which its guess below compares (ours is 1 s).
DAGMAN_SCAN_INTERVAL = 5


def adjust_for_max_idle(options: Options, knobs: dict[str, object]) -> None:
    """DAGMan's guess (dagman_main.cpp, 23.9.6): with -maxidle changed from 1000, a
    DAGMAN_MAX_SUBMITS_PER_INTERVAL left at its default becomes maxidle / 10 (at least 1), so
    that one cycle's submits cannot overshoot the idle limit; one the user set is kept, with a
    DAGMAN_USE_STRICT level 2 warning.  The same for a scan interval longer than that many
    seconds.  The notes and warnings go into :attr:`Options.startup_notes` for dagman.out."""
    if options.max_idle == Options.max_idle:
        return
    notes = [("Note:  DAGMAN_MAX_JOBS_IDLE has been changed from the default setting; if your submit files create "
              "multiple procs, you should probably set DAGMAN_MAX_SUBMITS_PER_INTERVAL to 1", 0)]
    limit = max(1, options.max_idle // 10)
    if options.max_submits_per_interval > limit:
        if "max_submits_per_interval" not in knobs:
            options.max_submits_per_interval = limit
            notes.append((f"Note:  DAGMAN_MAX_SUBMITS_PER_INTERVAL has been changed to {limit} because of your "
                          f"DAGMAN_MAX_JOBS_IDLE setting of {options.max_idle}", 0))
        else:
            notes.append((f"Warning: your DAGMAN_MAX_SUBMITS_PER_INTERVAL setting of {options.max_submits_per_interval} "
                          f"may interfere with your DAGMAN_MAX_JOBS_IDLE setting of {options.max_idle}", 2))
    submits = options.max_submits_per_interval
    scan = options.scan_interval if "scan_interval" in knobs else DAGMAN_SCAN_INTERVAL
    if scan > submits:
        if "scan_interval" not in knobs:  # ours is already shorter than DAGMan's guess
            notes.append((f"Note:  DAGMAN_USER_LOG_SCAN_INTERVAL has been changed to {submits} because of the "
                          f"DAGMAN_MAX_SUBMITS_PER_INTERVAL setting of {submits}", 0))
        else:
            notes.append((f"Warning: your DAGMAN_USER_LOG_SCAN_INTERVAL setting of {int(scan)} may interfere with "
                          f"the DAGMAN_MAX_SUBMITS_PER_INTERVAL setting of {submits}", 2))
    options.startup_notes = tuple(notes)


ENDINGS = {DagStatus.ERROR: "stopped on an error", DagStatus.ABORT: "was aborted (ABORT-DAG-ON)",
           DagStatus.RM: "was removed", DagStatus.CYCLE: "has a cycle", DagStatus.HALTED: "was halted"}


def ending(dagman: DagMan, code: int) -> str:
    """One line for a run that did not succeed: how it ended, where to read why, how to go on."""
    if code == EXIT_RESTART:
        return (f"{dagman.dag_file}: DAGMan stopped (exit {code}); its node jobs in the queue run on, and "
                "it recovers them where it was when it runs again")
    failed = [n.graph.name for n in dagman.nodes.values() if n.status is NodeState.ERROR]
    how = (f"{len(failed)} failed node(s) ({', '.join(failed[:3])}{', ...' if len(failed) > 3 else ''})"
           if failed else ENDINGS.get(dagman.dag_status, "did not succeed"))
    if dagman.stranded():
        how = (f"its other nodes never started: PROVISIONER node {dagman.provisioner.name} ended without its job "
               "setting ProvisionerState = 2 (condor_qedit $(Cluster) ProvisionerState 2 from the job, once ready)")
    line = f"{dagman.dag_file}: {how}; DAGMan exit {code}: {dagman.out.path} says why"
    if dagman.rescue_path:
        line += f"; run it again to go on from {os.path.basename(dagman.rescue_path)}"
    return line


def choose_rescue(dag_file: str, force: bool, number: int | None, auto: bool = True,
                  max_rescue: int = MAX_RESCUE_NUM) -> tuple[str | None, tuple[str, ...]]:
    """The rescue DAG to apply: none with -force (old ones renamed .old), N with -dorescuefrom N
    (newer ones renamed .old), else the newest up to DAGMAN_MAX_RESCUE_NUM, as DAGMan's
    AutoRescue picks it; and what DAGMan says of it in dagman.out (its ``USING RESCUE DAG``
    line tells monitors which rescue DAG the run started from)."""
    existing = [(n, path) for n, path in rescue_files(dag_file) if n <= max_rescue]
    if force:
        for _, path in rescue_files(dag_file):
            os.replace(path, path + ".old")
        return None, ()
    if number is not None:
        chosen = rescue_path(dag_file, number)
        if not os.path.exists(chosen):
            raise DagError([Diagnostic(Location(chosen), f"-dorescuefrom {number}: there is no rescue DAG {chosen}")])
        notes = [f"Renaming rescue DAGs newer than number {number}"]
        for n, path in existing:
            if n > number:
                notes.append(f"Renaming {path}")
                os.replace(path, path + ".old")
        return chosen, (*notes, *_using(chosen, f"Rescue DAG number {number} specified"))
    if not existing or not auto:
        return None, ()
    number, chosen = existing[-1]
    return chosen, _using(chosen, f"Found rescue DAG number {number}")


def _using(rescue: str, why: str) -> tuple[str, ...]:
    return (f"{why}; running {rescue} in combination with normal DAG file",
            "~" * 54, f"USING RESCUE DAG {rescue}")
