"""Throttles (-maxjobs, CATEGORY MAXJOBS, -maxpre), SCRIPT DEFER, PRIORITY and halt, as a user
sees them: measured from the nodes log DAGMan itself reads, and from what jobs and scripts record."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import htcondor2

from engine.dag import ScriptKind, build_graph, parse_file
from engine.dag.rescue import rescue_files
from engine.dagman.metrics import read_metrics
from engine.dagman.node_status import NodeState
from engine.dagman.runner import DagMan, DagStatus, Options

# A job that says who it is, then runs until the test (or the DAG) creates go.<node>.
GATED_SUB = ("executable = /bin/sh\n"
             "arguments = \"-c 'echo $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.02; done'\"\n"
             "queue\n")
# A job that lasts a little, so that jobs submitted together are in the queue together.
SHORT_SUB = ("executable = /bin/sh\n"
             "arguments = \"-c 'echo $(JOB) >> runs.txt; sleep 0.2'\"\n"
             "queue\n")


def dagman_for(path: Path, schedd, **options) -> DagMan:
    return DagMan(build_graph(parse_file(str(path))), schedd, Options(scan_interval=0.05, **options))


def run(path: Path, schedd, **options) -> DagMan:
    dagman = dagman_for(path, schedd, **options)
    dagman.exit_code = dagman.run()
    return dagman


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def until(predicate: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def queued_at_once(dag: Path, nodes: Iterable[str] | None = None) -> int:
    """The most node jobs in the queue together, replayed from <dag>.nodes.log: a cluster is in
    the queue from its submit event to its terminated (or aborted) event. ``nodes`` limits the
    count to those nodes' jobs (the submit event's notes name the node)."""
    wanted = set(nodes) if nodes is not None else None
    T = htcondor2.JobEventType
    queued: set[int] = set()
    most = 0
    for event in htcondor2.JobEventLog(str(dag) + ".nodes.log").events(stop_after=0):
        if event.type == T.SUBMIT:
            node = (event.get("LogNotes") or "").removeprefix("DAG Node: ")
            if wanted is None or node in wanted:
                queued.add(event.cluster)
                most = max(most, len(queued))
        elif event.type in (T.JOB_TERMINATED, T.JOB_ABORTED):
            queued.discard(event.cluster)
    return most


def submitted_nodes(dag: Path) -> list[str]:
    return [(e.get("LogNotes") or "").removeprefix("DAG Node: ")
            for e in htcondor2.JobEventLog(str(dag) + ".nodes.log").events(stop_after=0)
            if e.type == htcondor2.JobEventType.SUBMIT]


# ---------------------------------------------------------------------- -maxjobs, CATEGORY


def test_maxjobs_keeps_at_most_that_many_node_jobs_in_the_queue(dag_dir, schedd):
    (dag_dir / "short.sub").write_text(SHORT_SUB)
    dag = dag_dir / "six.dag"
    dag.write_text("".join(f"JOB N{i} short.sub\n" for i in range(6)))
    dagman = run(dag, schedd, max_jobs=2)
    assert dagman.exit_code == 0
    assert sorted(lines(dag_dir / "runs.txt")) == [f"N{i}" for i in range(6)]
    assert queued_at_once(dag) == 2, "never more than -maxjobs 2 in the queue, and the throttle is used"


def test_maxjobs_deferrals_are_counted_once_a_scan_interval_as_dagman_submits(dag_dir, schedd):
    """DAGMan's submit cycle comes once a scan interval and counts the nodes it holds back; the
    embedded one cycles far more often, so it counts them at most once a scan interval. With
    the clock standing still, that is the first cycle's two (seen on the pool: 33 for four 2 s
    jobs under -maxjobs 1 with a 1 s interval, where counting every cycle made 243)."""
    (dag_dir / "m.dag").write_text('JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\n')
    now = time.time()
    dagman = DagMan(build_graph(parse_file(str(dag_dir / "m.dag"))), schedd,
                    Options(scan_interval=0.05, max_jobs=1), clock=lambda: now)
    assert dagman.run() == 0
    notes = [line[18:] for line in (dag_dir / "m.dag.dagman.out").read_text().splitlines() if "-MaxJobs limit" in line]
    assert notes[-1] == "Note: 2 total job deferrals because of -MaxJobs limit (1)"


def test_maxjobs_unset_puts_every_ready_node_in_the_queue_at_once(dag_dir, schedd):
    """The control for the test above: the measure does see more than 2 when nothing throttles."""
    (dag_dir / "short.sub").write_text(SHORT_SUB)
    dag = dag_dir / "six.dag"
    dag.write_text("".join(f"JOB N{i} short.sub\n" for i in range(6)))
    assert run(dag, schedd).exit_code == 0
    assert queued_at_once(dag) == 6


def test_max_submits_per_interval_at_its_default_counts_a_cycle_and_the_next_follows_at_once(dag_dir, schedd):
    """With neither DAGMAN_MAX_SUBMITS_PER_INTERVAL nor DAGMAN_USER_LOG_SCAN_INTERVAL set, a cycle
    that submitted its limit is followed at once: 5 jobs, 2 a cycle, in an hour's scan interval."""
    (dag_dir / "short.sub").write_text(SHORT_SUB)
    dag = dag_dir / "five.dag"
    dag.write_text("".join(f"JOB N{i} short.sub\n" for i in range(5)))
    dagman = DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=3600, max_submits_per_interval=2))
    hold = threading.Timer(60, setattr, (dagman, "held", True))  # condor_hold stops DAGMan at its next cycle
    hold.start()
    try:
        assert dagman.run() == 0, "paced by the scan interval, the third job would wait an hour"
    finally:
        hold.cancel()
    assert sorted(lines(dag_dir / "runs.txt")) == [f"N{i}" for i in range(5)]


def test_category_maxjobs_throttles_its_nodes_only(dag_dir, schedd):
    (dag_dir / "short.sub").write_text(SHORT_SUB)
    dag = dag_dir / "cat.dag"
    dag.write_text("".join(f"JOB S{i} short.sub\nCATEGORY S{i} slow\n" for i in range(3))
                   + "".join(f"JOB U{i} short.sub\nCATEGORY U{i} other\n" for i in range(3))
                   + "MAXJOBS slow 1\n")
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0
    assert queued_at_once(dag, ["S0", "S1", "S2"]) == 1, "MAXJOBS slow 1: one slow job at a time"
    assert queued_at_once(dag, ["U0", "U1", "U2"]) == 3, "the other category's jobs are all queued at once"


def test_category_maxjobs_counts_together_with_maxjobs(dag_dir, schedd):
    """Both limits apply: -maxjobs 3 overall and 2 for the category."""
    (dag_dir / "short.sub").write_text(SHORT_SUB)
    dag = dag_dir / "both.dag"
    dag.write_text("".join(f"JOB C{i} short.sub\nCATEGORY C{i} cat\n" for i in range(4))
                   + "".join(f"JOB F{i} short.sub\n" for i in range(4)) + "MAXJOBS cat 2\n")
    assert run(dag, schedd, max_jobs=3).exit_code == 0
    assert queued_at_once(dag) == 3
    assert queued_at_once(dag, [f"C{i}" for i in range(4)]) == 2


# ---------------------------------------------------------------------- -maxpre


def test_maxpre_1_runs_pre_scripts_one_at_a_time(dag_dir, schedd):
    (dag_dir / "pre.sh").write_text('echo "start $1" >> pre.txt\nsleep 0.1\necho "end $1" >> pre.txt\n')
    dag = dag_dir / "pre.dag"
    dag.write_text("".join(f'JOB P{i} job.sub\nVARS P{i} code="0"\nSCRIPT PRE P{i} /bin/sh pre.sh $JOB\n'
                           for i in range(4)))
    dagman = run(dag, schedd, max_pre=1)
    assert dagman.exit_code == 0
    record = [line.split() for line in lines(dag_dir / "pre.txt")]
    assert len(record) == 8
    for start, end in zip(record[0::2], record[1::2]):
        assert start[0] == "start" and end == ["end", start[1]], f"PRE scripts overlapped: {record}"
    assert sorted(s[1] for s in record[0::2]) == ["P0", "P1", "P2", "P3"]


# ---------------------------------------------------------------------- SCRIPT DEFER


def test_deferred_pre_script_runs_again_after_the_delay_and_the_job_runs_once(dag_dir, schedd):
    (dag_dir / "pre.sh").write_text(
        'echo "pre $(date +%s%N)" >> pre.txt\n'
        'if [ ! -e deferred ]; then touch deferred; exit 4; fi\n')
    dag = dag_dir / "defer.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT DEFER 4 1 PRE A /bin/sh pre.sh\n')
    dagman = run(dag, schedd)
    assert dagman.exit_code == 0
    assert dagman.nodes["A"].status is NodeState.DONE
    assert dagman.nodes["A"].retries == 0, "a deferral is not a node retry"
    times = [int(line.split()[1]) for line in lines(dag_dir / "pre.txt")]
    assert len(times) == 2, "the PRE script ran twice"
    assert times[1] - times[0] >= 1_000_000_000, "re-run no earlier than DEFER's 1 s"
    assert lines(dag_dir / "runs.txt") == ["A 0"], "the job ran once"


def test_deferred_pre_script_frees_its_maxpre_slot_and_waits_for_one_to_run_again(dag_dir, schedd):
    """-maxpre 1: A's PRE defers for 1 s; B's PRE (1.5 s) runs meanwhile, since a deferred
    script does not count; A's PRE, due again while B's runs, waits for it."""
    (dag_dir / "defer.sh").write_text(
        'echo "start $1" >> pre.txt\n'
        'if [ ! -e deferred ]; then touch deferred; echo "end $1" >> pre.txt; exit 4; fi\n'
        'echo "end $1" >> pre.txt\n')
    (dag_dir / "slow.sh").write_text('echo "start $1" >> pre.txt\nsleep 1.5\necho "end $1" >> pre.txt\n')
    dag = dag_dir / "defer.dag"
    dag.write_text('JOB A job.sub\nSCRIPT DEFER 4 1 PRE A /bin/sh defer.sh A\n'
                   'JOB B job.sub\nSCRIPT PRE B /bin/sh slow.sh B\nVARS ALL_NODES code="0"\n')
    dagman = run(dag, schedd, max_pre=1)
    assert dagman.exit_code == 0
    assert lines(dag_dir / "pre.txt") == ["start A", "end A", "start B", "end B", "start A", "end A"]


# ---------------------------------------------------------------------- PRIORITY


def test_priority_orders_submission_highest_first(dag_dir, schedd):
    priorities = {"A": 1, "B": 5, "C": -2, "D": 10, "E": 0}
    dag = dag_dir / "prio.dag"
    dag.write_text("".join(f'JOB {n} job.sub\nPRIORITY {n} {p}\n' for n, p in priorities.items())
                   + 'VARS ALL_NODES code="0"\n')
    dagman = run(dag, schedd, max_jobs=1)
    assert dagman.exit_code == 0
    assert [line.split()[0] for line in lines(dag_dir / "runs.txt")] == ["D", "B", "A", "E", "C"]
    assert submitted_nodes(dag) == ["D", "B", "A", "E", "C"]


# ---------------------------------------------------------------------- halt


HALT_DAG = """\
JOB A gated.sub
JOB B job.sub
JOB C job.sub
VARS B code="0"
VARS C code="0"
SCRIPT POST A /bin/sh post.sh A
PARENT A CHILD B C
"""


def halt_dag(dag_dir: Path, extra: str = "") -> Path:
    (dag_dir / "gated.sub").write_text(GATED_SUB)
    (dag_dir / "post.sh").write_text('echo "post $1" >> runs.txt\n')
    (dag_dir / "pre.sh").write_text('echo "pre $1" >> runs.txt\n')
    dag = dag_dir / "halt.dag"
    dag.write_text(HALT_DAG + extra)
    return dag


def run_with(dagman: DagMan, helper: Callable[[], None], release: Path) -> int:
    """Run DAGMan here (it installs signal handlers, so it needs the main thread) while
    ``helper`` acts in another thread; ``release`` is created at the end in any case so that
    a failing helper cannot leave the gated job, and so DAGMan, waiting for ever."""
    failure: list[BaseException] = []

    def act():
        try:
            helper()
        except BaseException as e:  # reported by the main thread
            failure.append(e)
        finally:
            release.touch()

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    code = dagman.run()
    thread.join(timeout=30)
    if failure:
        raise failure[0]
    return code


def test_halt_file_lets_the_running_job_and_its_post_finish_starts_nothing_new_and_exits_1(dag_dir, schedd):
    dag = halt_dag(dag_dir)
    dagman = dagman_for(dag, schedd)

    def halt_while_a_runs():
        until(lambda: "A" in lines(dag_dir / "runs.txt"), "A's job to start")
        (dag_dir / "halt.dag.halt").touch()

    code = run_with(dagman, halt_while_a_runs, dag_dir / "go.A")
    assert lines(dag_dir / "runs.txt") == ["A", "post A"], "the queued job and its POST finish; B and C never start"
    assert code == 1
    assert dagman.dag_status is DagStatus.HALTED
    assert dagman.nodes["A"].status is NodeState.DONE
    assert dagman.nodes["B"].status is not NodeState.DONE and dagman.nodes["C"].status is not NodeState.DONE
    assert submitted_nodes(dag) == ["A"]
    [(number, rescue)] = rescue_files(str(dag))
    body = [line for line in lines(Path(rescue)) if line and not line.startswith("#")]
    assert body == ["DONE A"]
    metrics = read_metrics(str(dag) + ".metrics")
    assert (metrics["exitcode"], metrics["DagStatus"]) == (1, 6)


def halt_with_final(dag_dir: Path, schedd) -> tuple[Path, DagMan, int]:
    dag = halt_dag(dag_dir, 'FINAL F job.sub\nVARS F code="0"\nSCRIPT PRE F /bin/sh pre.sh F\n'
                            'SCRIPT POST F /bin/sh post.sh F\n')
    dagman = dagman_for(dag, schedd)

    def halt_while_a_runs():
        until(lambda: "A" in lines(dag_dir / "runs.txt"), "A's job to start")
        (dag_dir / "halt.dag.halt").touch()

    return dag, dagman, run_with(dagman, halt_while_a_runs, dag_dir / "go.A")


def test_halted_dag_still_runs_its_final_node_and_its_pre_script(dag_dir, schedd):
    """test_dag_halt.py's HALT_RUN_FINAL case: F's PRE, job and POST run once the halted DAG
    has drained, and DAG_Status stays 6 (halted)."""
    dag, dagman, _ = halt_with_final(dag_dir, schedd)
    assert lines(dag_dir / "runs.txt") == ["A", "post A", "pre F", "F 0", "post F"], "B and C never start"
    assert dagman.dag_status is DagStatus.HALTED
    assert dagman.nodes["F"].status is NodeState.DONE
    assert len(rescue_files(str(dag))) == 1, "the rescue DAG is written before FINAL runs"
    assert read_metrics(str(dag) + ".metrics")["DagStatus"] == 6
    # as 23.9.6 on the pool: once a scan interval while halted, and while FINAL runs, a second line
    said = [line[18:] for line in (dag_dir / "halt.dag.dagman.out").read_text().splitlines()]
    halted = f"DAG is halted because halt file {dag}.halt exists"
    assert said.count(halted) >= 2
    assert said[said.index("Starting final node...") + 1:].count("Continuing to allow final node to run") >= 1


def test_halted_dag_whose_final_node_succeeds_exits_0(dag_dir, schedd):
    """As any FINAL node's success does, and as HALT_RUN_FINAL expects (metrics exitcode 0,
    DagStatus 6): condor_event_timer reaches DoneSuccess(true) -> ExitSuccess()."""
    dag, dagman, code = halt_with_final(dag_dir, schedd)
    assert code == 0
    metrics = read_metrics(str(dag) + ".metrics")
    assert (metrics["exitcode"], metrics["DagStatus"]) == (0, 6)


def test_halt_lifted_before_the_dag_drains_lets_it_finish_normally(dag_dir, schedd):
    """DAGMan 24.0's halt is "the halt file exists" (25.x needs `htcondor dag resume`): deleting
    the file while A's job still runs resumes the DAG, which ends as if never halted."""
    dag = halt_dag(dag_dir)
    dagman = dagman_for(dag, schedd)
    cycles = []
    step = dagman.step

    def counted_step():
        going = step()
        cycles.append(1)
        return going

    dagman.step = counted_step

    def halt_then_resume():
        until(lambda: "A" in lines(dag_dir / "runs.txt"), "A's job to start")
        (dag_dir / "halt.dag.halt").touch()
        seen = len(cycles)
        until(lambda: len(cycles) >= seen + 2, "DAGMan to run a cycle while halted")
        (dag_dir / "halt.dag.halt").unlink()

    code = run_with(dagman, halt_then_resume, dag_dir / "go.A")
    assert code == 0
    assert dagman.dag_status is DagStatus.OK
    assert sorted(lines(dag_dir / "runs.txt")) == ["A", "B 0", "C 0", "post A"]
    assert rescue_files(str(dag)) == []
    metrics = read_metrics(str(dag) + ".metrics")
    assert (metrics["exitcode"], metrics["DagStatus"]) == (0, 0)


def test_halted_dagman_out_says_why_it_exits(dag_dir, schedd):
    dag = halt_dag(dag_dir)
    dagman = dagman_for(dag, schedd)

    def halt_while_a_runs():
        until(lambda: "A" in lines(dag_dir / "runs.txt"), "A's job to start")
        (dag_dir / "halt.dag.halt").touch()

    assert run_with(dagman, halt_while_a_runs, dag_dir / "go.A") == 1
    bodies = [line[18:] for line in lines(dag_dir / "halt.dag.dagman.out")]
    assert "Exiting because DAG is halted and no jobs or scripts are running" in bodies


def test_halt_keeps_a_deferred_pre_script_from_running_again(dag_dir, schedd):
    """The user halts the DAG while A's PRE script is deferred (here the script itself creates
    the halt file before it asks for the deferral; it would succeed if run again): the PRE script is not run again, A's job
    never starts, and DAGMan exits halted at once, as nothing is queued or in POST."""
    (dag_dir / "defer.sh").write_text(
        'echo "pre $1" >> pre.txt\n'
        'if [ ! -e deferred ]; then touch deferred halt.dag.halt; exit 4; fi\n')
    dag = dag_dir / "halt.dag"
    dag.write_text('JOB A job.sub\nVARS A code="0"\nSCRIPT DEFER 4 1 PRE A /bin/sh defer.sh A\n')
    dagman = run(dag, schedd)
    assert lines(dag_dir / "pre.txt") == ["pre A"]
    assert lines(dag_dir / "runs.txt") == [], "no node job starts while halted"
    assert (dagman.exit_code, dagman.dag_status) == (1, DagStatus.HALTED)
    assert len(rescue_files(str(dag))) == 1


def test_maxpre_deferrals_are_counted_in_dagman_out_as_23_9_counts_them(dag_dir, schedd):
    """Three PRE scripts under -maxpre 1: two wait, and the closing note says so (seen on the pool:
    "Note: 2 total PRE script deferrals because of -MaxPre limit (1) or DEFER")."""
    (dag_dir / "pre.sh").write_text("#!/bin/sh\nsleep 0.2\n")
    (dag_dir / "pre.sh").chmod(0o755)
    dag = dag_dir / "m.dag"
    dag.write_text('JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\n'
                   "SCRIPT PRE A pre.sh A\nSCRIPT PRE B pre.sh B\nSCRIPT PRE C pre.sh C\n")
    dagman = DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=5, max_pre=1))
    assert dagman.run() == 0, "no pass of the event timer while they wait: each is counted once"
    notes = [line for line in lines(Path(f"{dag}.dagman.out")) if "PRE script deferrals" in line]
    assert notes[-1][18:] == "Note: 2 total PRE script deferrals because of -MaxPre limit (1) or DEFER"


def test_maxpre_waiting_pre_scripts_take_turns_at_the_front_at_each_pass_of_the_event_timer(dag_dir, schedd):
    """-maxpre 1 over three ready nodes: B and C wait behind A's PRE script.  Each pass of
    DAGMan's event timer tries the first waiting script, which -maxpre holds back again: it goes
    to the back of the queue and counts one more deferral (seen on the pool: A, C, B, and the
    count rising by one a scan interval).  So after one pass C's PRE runs next, not B's."""
    (dag_dir / "pre.sh").write_text('echo "$1" >> pre.txt\nwhile [ ! -e go.$1 ]; do sleep 0.02; done\n')
    dag = dag_dir / "turns.dag"
    dag.write_text("".join(f'JOB {n} job.sub\nVARS {n} code="0"\nSCRIPT PRE {n} /bin/sh pre.sh {n}\n' for n in "ABC"))
    (dag_dir / "go.B").touch()
    (dag_dir / "go.C").touch()
    dagman = DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=2, max_pre=1))

    def release_a_after_one_pass():
        try:
            until(lambda: dagman.scripts_deferred[ScriptKind.PRE] == 3, "a pass of the event timer", timeout=10)
        finally:
            (dag_dir / "go.A").touch()

    thread = threading.Thread(target=release_a_after_one_pass, daemon=True)
    thread.start()
    assert dagman.run() == 0  # DAGMan takes its signals in the main thread
    thread.join()
    assert lines(dag_dir / "pre.txt") == ["A", "C", "B"]
