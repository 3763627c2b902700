"""DAGMan's configuration knobs, set as the tutorial sets them: a ``CONFIG x.config`` line in the
DAG and ``DAGMAN_...`` lines in that file, run by condor_dagman's command line
(``python -m engine.dagman``).  Orders are measured by the order jobs start; what each knob
does is what 23.9.6 did with the same DAG on the test pool (the expected orders and texts)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import htcondor2
import pytest

from engine.dag.rescue import rescue_files
from engine.dagman.main import main
from engine.schedd.api import JobAction
from engine.schedd.local.userlog import JobTerminatedEvent, SubmitEvent, UserLog

# A job that records its node and retry, lasts a moment (so that jobs submitted together are
# queued together), and fails once if it is node X.
JOB = ("executable = /bin/sh\n"
       "arguments = \"-c 'echo $(JOB) >> runs.txt; sleep 0.3; [ $(RETRY) -gt 0 ] || [ $(JOB) != X ]'\"\n"
       "queue\n")
GATED = ("executable = /bin/sh\n"
         "arguments = \"-c 'echo $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.05; done; exit $(code)'\"\n"
         "queue\n")


@pytest.fixture
def knobs(dag_dir):
    """A DAG directory with job.sub and gated.sub; ``run(dag_text, config_text)`` runs x.dag."""
    (dag_dir / "job.sub").write_text(JOB)
    (dag_dir / "gated.sub").write_text(GATED)
    return dag_dir


def dagman(dag_dir: Path, schedd, dag: str, config: str = "", *args: str, helper: Callable[[], None] | None = None) -> int:
    """Write x.dag (with ``CONFIG x.config`` when ``config``) and run condor_dagman on it here,
    ``helper`` acting meanwhile in another thread; every go.<node> is created at the end."""
    if config:
        (dag_dir / "x.config").write_text(config)
        dag = "CONFIG x.config\n" + dag
    (dag_dir / "x.dag").write_text(dag)
    failure: list[BaseException] = []

    def act():
        try:
            if helper:
                helper()
        except BaseException as e:
            failure.append(e)
        finally:
            for node in "ABCDEFXYZ":
                (dag_dir / f"go.{node}").touch()

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    try:
        code = main(["--state-dir", schedd.state.path, *args, "x.dag"])
    finally:
        thread.join(timeout=60)
    if failure:
        raise failure[0]
    return code


def runs(dag_dir: Path) -> list[str]:
    path = dag_dir / "runs.txt"
    return path.read_text().split() if path.exists() else []


def out(dag_dir: Path) -> list[str]:
    return [line[18:] for line in text(dag_dir / "x.dag.dagman.out").splitlines()]


def text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def until(predicate: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


TWO_CHAINS = "JOB A1 job.sub\nJOB A2 job.sub\nJOB B1 job.sub\nJOB B2 job.sub\nPARENT A1 CHILD A2\nPARENT B1 CHILD B2\n"


@pytest.mark.parametrize("depth_first, order", [("False", ["A1", "B1", "A2", "B2"]), ("True", ["B1", "B2", "A1", "A2"])])
def test_submit_depth_first_orders_the_ready_queue_as_on_the_pool(knobs, schedd, depth_first, order):
    config = f"DAGMAN_MAX_JOBS_SUBMITTED = 1\nDAGMAN_SUBMIT_DEPTH_FIRST = {depth_first}\n"
    assert dagman(knobs, schedd, TWO_CHAINS, config) == 0
    assert runs(knobs) == order


def test_priorities_and_the_default_priority_order_the_jobs_and_set_their_priority(knobs, schedd):
    dag = "JOB P1 job.sub\nJOB P2 job.sub\nJOB P3 job.sub\nJOB P4 job.sub\nPRIORITY P2 5\nPRIORITY P3 10\nPRIORITY P4 5\n"
    assert dagman(knobs, schedd, dag, "DAGMAN_MAX_JOBS_SUBMITTED = 1\nDAGMAN_DEFAULT_PRIORITY = 3\n") == 0
    assert runs(knobs) == ["P3", "P2", "P4", "P1"], "equal priorities keep the DAG's order"
    prio = {ad["DAGNodeName"]: ad["JobPrio"] for ad in schedd.history("DAGNodeName =!= undefined", ["DAGNodeName", "JobPrio"])}
    assert prio == {"P1": 3, "P2": 8, "P3": 13, "P4": 8}


@pytest.mark.parametrize("first, order", [("False", ["X", "Y", "Z", "X"]), ("True", ["X", "X", "Y", "Z"])])
def test_retry_node_first_puts_a_retried_node_in_front(knobs, schedd, first, order):
    config = f"DAGMAN_MAX_JOBS_SUBMITTED = 1\nDAGMAN_RETRY_NODE_FIRST = {first}\n"
    assert dagman(knobs, schedd, "JOB X job.sub\nJOB Y job.sub\nJOB Z job.sub\nRETRY X 1\n", config) == 0
    assert runs(knobs) == order


@pytest.mark.parametrize("first, attempts", [("True", ["S", "S", "T", "U"]), ("False", ["S", "T", "U", "S"])])
def test_retry_submit_first_retries_a_failed_submit_before_the_others(knobs, schedd, first, attempts):
    config = f"DAGMAN_MAX_SUBMIT_ATTEMPTS = 2\nDAGMAN_RETRY_SUBMIT_FIRST = {first}\n"
    assert dagman(knobs, schedd, "JOB S missing.sub\nJOB T job.sub\nJOB U job.sub\n", config) == 1
    submits = [line.split()[3] for line in out(knobs) if line.startswith("Submitting HTCondor Node ")]
    assert submits == attempts


def submit_times(dag_dir: Path) -> list[int]:
    """Whole seconds, as events log them: submits a second apart may share one, never two."""
    return [e.timestamp for e in htcondor2.JobEventLog(str(dag_dir / "x.dag.nodes.log")).events(stop_after=0)
            if e.type == htcondor2.JobEventType.SUBMIT and e.cluster > 0]


FOUR = "JOB A job.sub NOOP\nJOB B job.sub\nJOB C job.sub\nJOB D job.sub\nJOB E job.sub\n"


def test_max_submits_per_interval_submits_one_job_a_scan_interval(knobs, schedd):
    config = "DAGMAN_MAX_SUBMITS_PER_INTERVAL = 1\nDAGMAN_USER_LOG_SCAN_INTERVAL = 1\n"
    assert dagman(knobs, schedd, FOUR, config) == 0
    times = submit_times(knobs)
    assert len(times) == 4 and times[-1] - times[0] >= 2, "a NOOP node's submit does not count"
    assert dagman(knobs, schedd, FOUR, "DAGMAN_USER_LOG_SCAN_INTERVAL = 1\n") == 0
    assert submit_times(knobs)[-1] - submit_times(knobs)[0] <= 1, "the control: 100 a scan interval"


def test_maxidle_lowers_the_submits_per_interval_as_dagman_guesses(knobs, schedd):
    """With -maxidle 5 DAGMan submits max(1, 5 // 10) = 1 job a scan interval."""
    assert dagman(knobs, schedd, FOUR, "DAGMAN_USER_LOG_SCAN_INTERVAL = 1\n", "-maxidle", "5") == 0
    assert submit_times(knobs)[-1] - submit_times(knobs)[0] >= 2
    assert out(knobs)[out(knobs).index(f"Default node log file is: <{knobs}/./x.dag.nodes.log>") + 1:][:3] == [
        "Note:  DAGMAN_MAX_JOBS_IDLE has been changed from the default setting; if your submit files create "
        "multiple procs, you should probably set DAGMAN_MAX_SUBMITS_PER_INTERVAL to 1",
        "Note:  DAGMAN_MAX_SUBMITS_PER_INTERVAL has been changed to 1 because of your DAGMAN_MAX_JOBS_IDLE setting of 5",
        "DAG Lockfile will be written to x.dag.lock"], "as 23.9.6 says so"


def test_maxidle_against_a_set_submits_per_interval_is_a_strict_level_2_warning(knobs, schedd):
    """Seen on the pool: `condor_submit_dag -maxidle 5` of a DAG whose CONFIG sets
    DAGMAN_MAX_SUBMITS_PER_INTERVAL = 2 warns, and DAGMAN_USE_STRICT = 2 makes it fatal before the DAG
    is read: DAGMan exits 1 and nothing runs, with no rescue DAG."""
    config = "DAGMAN_MAX_SUBMITS_PER_INTERVAL = 2\nDAGMAN_USER_LOG_SCAN_INTERVAL = 1\n"
    warning = "Warning: your DAGMAN_MAX_SUBMITS_PER_INTERVAL setting of 2 may interfere with your " \
              "DAGMAN_MAX_JOBS_IDLE setting of 5"
    assert dagman(knobs, schedd, FOUR, config, "-maxidle", "5") == 0
    assert warning in out(knobs)
    assert dagman(knobs, schedd, FOUR, config + "DAGMAN_USE_STRICT = 2\n", "-maxidle", "5") == 1
    said = out(knobs)[out(knobs).index(warning, out(knobs).index("DAGMAN_USE_STRICT setting: 2")):]
    assert said[1:3] == ["ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting", "Aborting DAG..."]
    assert said[3].endswith("EXITING WITH STATUS 1") and not list(knobs.glob("x.dag.rescue*"))
    assert len(runs(knobs)) == 4, "only the first run's jobs ran"


def test_submit_delay_waits_before_each_submit_and_aggressive_submit_keeps_submitting(knobs, schedd):
    config = "DAGMAN_SUBMIT_DELAY = 2\nDAGMAN_USER_LOG_SCAN_INTERVAL = 1\n"
    assert dagman(knobs, schedd, "JOB A job.sub\nJOB B job.sub\n", config) == 0
    assert any(line.startswith("Warning: Submit cycle elapsed time (") and line.endswith(
        "s) has exceeded log scan interval (1 s); bailing out of submit loop") for line in out(knobs)), \
        "A's submit waited 2 s (more on a busy machine): B waits for the next cycle"
    (knobs / "runs.txt").unlink()
    assert dagman(knobs, schedd, "JOB A job.sub\nJOB B job.sub\n", config + "DAGMAN_AGGRESSIVE_SUBMIT = True\n") == 0
    assert not any("bailing out" in line for line in out(knobs)[-60:])


def test_config_option_is_named_in_dagman_out_and_the_full_rescue_dag(knobs, schedd):
    """condor_submit_dag -config knobs.conf (no CONFIG line): 23.9.6 says 'Using DAGMan config file:'
    before its settings, and its full rescue DAG names the file as a CONFIG line (seen on the pool)."""
    (knobs / "fail.sub").write_text("executable = /bin/false\nqueue\n")
    (knobs / "knobs.conf").write_text("DAGMAN_WRITE_PARTIAL_RESCUE = False\n")
    assert dagman(knobs, schedd, "JOB A fail.sub\n", "", "-config", "knobs.conf") == 1
    said = out(knobs)
    assert said[said.index("DAGMAN_USE_STRICT setting: 1") - 1] == f"Using DAGMan config file: {knobs / 'knobs.conf'}"
    rescue = (knobs / "x.dag.rescue001").read_text().splitlines()
    assert rescue[9:12] == ["", f"CONFIG {knobs / 'knobs.conf'}", ""], rescue


def test_max_rescue_num_caps_the_rescue_dags_and_zero_writes_none(knobs, schedd):
    (knobs / "fail.sub").write_text("executable = /bin/false\nqueue\n")
    assert dagman(knobs, schedd, "JOB A fail.sub\n", "DAGMAN_MAX_RESCUE_NUM = 0\n") == 1
    assert rescue_files(str(knobs / "x.dag")) == []
    assert "No rescue DAG written because DAGMAN_MAX_RESCUE_NUM is 0" in out(knobs)
    for _ in range(3):
        assert dagman(knobs, schedd, "JOB A fail.sub\n", "DAGMAN_MAX_RESCUE_NUM = 2\n") == 1
    assert [n for n, _ in rescue_files(str(knobs / "x.dag"))] == [1, 2], "the third run overwrote rescue002"


FULL_DAG = """\
JOB A job.sub
JOB B fail.sub DIR sub NOOP
JOB C fail.sub
RETRY C 2 UNLESS-EXIT 7
VARS C x="a\\"b" y="2"
VARS C APPEND z="3"
SCRIPT PRE C /bin/true pre
SCRIPT DEFER 3 10 POST C /bin/false post $RETURN
PRE_SKIP C 9
ABORT-DAG-ON A 5 RETURN 2
PRIORITY C 4
CATEGORY C cat
MAXJOBS cat 3
MAXJOBS aaa 1
CATEGORY A aaa
JOB D job.sub
PARENT A CHILD B C
PARENT C CHILD D
NODE_STATUS_FILE ns.txt
JOBSTATE_LOG js.log
SUBDAG EXTERNAL S s.dag DIR sub
FINAL F job.sub
PARENT A B CHILD S D
"""


def test_full_rescue_dag_with_retries_left_is_written_as_23_9_6_wrote_it(knobs, schedd):
    (knobs / "sub").mkdir()
    (knobs / "fail.sub").write_text("executable = /bin/sh\narguments = \"-c 'exit 1'\"\nqueue\n")
    (knobs / "sub" / "s.dag").write_text("JOB Y ../job.sub\n")
    config = "DAGMAN_WRITE_PARTIAL_RESCUE = False\nDAGMAN_RESET_RETRIES_UPON_RESCUE = False\n"
    assert dagman(knobs, schedd, FULL_DAG, config) == 0, "FINAL succeeded"
    rescue = (knobs / "x.dag.rescue001").read_text().splitlines()
    assert rescue[2].startswith("# Created ")
    # What DAGMan 23.9.6 wrote for this DAG on the test pool, but for the CONFIG path.
    assert rescue[:2] + rescue[3:] == [
        "# Rescue DAG file, created after running", "#   the x.dag DAG file",
        "# Rescue DAG version: 2.0.1 (full)", "#", "# Total number of Nodes: 7", "# Nodes premarked DONE: 4",
        "# Nodes that failed: 1", "#   C,<ENDLIST>", "", f"CONFIG {knobs / 'x.config'}", "",
        "NODE_STATUS_FILE ns.txt", "", "JOBSTATE_LOG js.log", "", "",
        "JOB A job.sub ", "ABORT-DAG-ON A 5 RETURN 2", "CATEGORY A aaa", "DONE A", "",
        "JOB B fail.sub DIR sub NOOP ", "DONE B", "",
        "JOB C fail.sub ", "SCRIPT PRE C /bin/true pre", "PRE_SKIP C 9",
        "SCRIPT DEFER 3 10 POST C /bin/false post $RETURN", 'VARS C x="a\\"b" y="2" z="3"', "PRIORITY C 4",
        "CATEGORY C cat", "# 2 of 2 retries already performed; 0 remaining", "RETRY C 0 UNLESS-EXIT 7", "",
        "JOB D job.sub ", "", "SUBDAG EXTERNAL S s.dag DIR sub ", "DONE S", "", "FINAL F job.sub ", "",
        "JOB _condor_join_node1 noop.sub NOOP ", "DONE _condor_join_node1", "",
        "PARENT A CHILD  B C _condor_join_node1", "PARENT B CHILD  _condor_join_node1", "PARENT C CHILD  D",
        "PARENT _condor_join_node1 CHILD  D S", "MAXJOBS aaa 1", "MAXJOBS cat 3"], "children in node order"
    text = (knobs / "x.dag.dagman.out").read_text()
    assert re.search(r"DAGMAN_MAX_RESCUE_NUM setting: 100\n.{17} \n\nWARNING: DAGMan is configured to write Full "
                     r"Rescue DAG files\.\nThis is Deprecated and will be removed during V24 feature series of "
                     r"HTCondor!\n\n.{17} DAGMAN_WRITE_PARTIAL_RESCUE setting: False\n", text), "as on the pool"
    assert dagman(knobs, schedd, FULL_DAG, config) == 1, "DAGMan cannot run a full rescue DAG on top of its DAG"


def test_auto_rescue_false_ignores_the_rescue_dag(knobs, schedd):
    (knobs / "flag").write_text("1")
    (knobs / "flaky.sub").write_text("executable = /bin/sh\narguments = \"-c 'echo $(JOB) >> runs.txt; "
                                     "exit `cat flag`'\"\nqueue\n")
    dag = "JOB A job.sub\nJOB B flaky.sub\nPARENT A CHILD B\n"
    assert dagman(knobs, schedd, dag) == 1
    (knobs / "flag").write_text("0")
    (knobs / "runs.txt").unlink()
    assert dagman(knobs, schedd, dag, "DAGMAN_AUTO_RESCUE = False\n") == 0
    assert runs(knobs) == ["A", "B"], "the rescue DAG's DONE A was not used"


@pytest.mark.parametrize("append, code", [("False", 5), ("True", 0)])
def test_default_append_vars_decides_whether_vars_or_the_submit_file_win(knobs, schedd, append, code):
    (knobs / "own.sub").write_text("executable = /bin/sh\narguments = \"-c 'exit $(code)'\"\ncode = 5\nqueue\n")
    assert dagman(knobs, schedd, 'JOB A own.sub\nVARS A code="0"\n', f"DAGMAN_DEFAULT_APPEND_VARS = {append}\n") \
        == (1 if code else 0)


def test_use_strict_0_passes_unknown_and_post_macros_to_a_pre_script_as_written(knobs, schedd):
    (knobs / "pre.sh").write_text('echo "$@" >> scripts.txt\n')
    assert dagman(knobs, schedd, "JOB A job.sub\nSCRIPT PRE A /bin/sh pre.sh $FOO $RETURN\n",
                  "DAGMAN_USE_STRICT = 0\n") == 0
    assert (knobs / "scripts.txt").read_text() == "$FOO $RETURN\n"
    assert "Warning: unrecognized macro $FOO in node A PRE script arguments" in out(knobs)
    assert "Warning: $RETURN macro should not be used as a PRE script argument!" in out(knobs)


def test_use_strict_1_ends_the_dag_on_an_unknown_macro(knobs, schedd):
    assert dagman(knobs, schedd, "JOB A job.sub\nSCRIPT PRE A /bin/true $FOO\n") == 1
    assert "ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting" in out(knobs)
    assert runs(knobs) == [] and rescue_files(str(knobs / "x.dag"))


def test_use_strict_3_makes_a_vars_redefinition_fatal_at_parse_time(knobs, schedd):
    dag = 'JOB A job.sub\nVARS A x="1"\nVARS A x="2"\nJOB B job.sub\nPARENT A CHILD B\n'
    assert dagman(knobs, schedd, dag, "DAGMAN_USE_STRICT = 3\n") == 1
    assert "ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting" in out(knobs)
    assert runs(knobs) == []
    assert "# Total number of Nodes: 2" in (knobs / "x.dag.rescue001").read_text()
    assert not (knobs / "x.dag.metrics").exists(), "as on the pool: a parse-time fatal warning writes no metrics"
    assert dagman(knobs, schedd, dag, "DAGMAN_USE_STRICT = 2\n") == 0


def test_use_strict_2_makes_a_category_without_nodes_fatal(knobs, schedd):
    dag = "JOB A job.sub\nMAXJOBS empty 2\nCATEGORY A nolimit\n"
    assert dagman(knobs, schedd, dag, "DAGMAN_USE_STRICT = 2\n") == 1
    lines = out(knobs)
    at = lines.index("Warning: category empty has no assigned nodes, so the throttle setting (2) will have no effect")
    assert lines[at + 1] == "ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting"
    assert json.loads((knobs / "x.dag.metrics").read_text())["DagStatus"] == 1
    assert dagman(knobs, schedd, dag) == 0, "a warning only at the default DAGMAN_USE_STRICT = 1"
    assert "Warning: category nolimit has no throttle value set" in out(knobs)


def test_prohibit_multi_jobs_fails_a_node_whose_submit_queues_two_procs(knobs, schedd):
    (knobs / "two.sub").write_text("executable = /bin/true\nqueue 2\n")
    config = "DAGMAN_PROHIBIT_MULTI_JOBS = True\nDAGMAN_MAX_SUBMIT_ATTEMPTS = 1\n"
    assert dagman(knobs, schedd, "JOB A two.sub\n", config) == 1
    assert "Job submit failed after 1 try." in out(knobs)
    assert dagman(knobs, schedd, "JOB A two.sub\n") == 0


def write_events(dag_dir: Path, *events) -> None:
    log = UserLog(dag_dir / "x.dag.nodes.log")
    log.write(*events)
    log.close()


def a_ran_b_runs(dag_dir: Path, schedd) -> int:
    until(lambda: "B" in runs(dag_dir), "B to start")
    return schedd.history('DAGNodeName == "A"', ["ClusterId"])[0]["ClusterId"]


@pytest.mark.parametrize("allow, code", [("114", 0), ("0", 1)])
def test_allow_events_tolerates_a_second_terminate_event_or_aborts_the_dag(knobs, schedd, allow, code):
    """A job that ends twice cannot happen for real: the event is written into the nodes log."""
    def duplicate_terminate():
        cluster = a_ran_b_runs(knobs, schedd)
        write_events(knobs, JobTerminatedEvent(cluster=cluster, proc=0, time=datetime.now().astimezone(), return_value=0))
        until(lambda: "BAD EVENT" in text(knobs / "x.dag.dagman.out"), "the bad event")

    dag = 'JOB A job.sub\nJOB B gated.sub\nVARS B code="0"\nPARENT A CHILD B\n'
    assert dagman(knobs, schedd, dag, f"DAGMAN_ALLOW_EVENTS = {allow}\n", helper=duplicate_terminate) == code
    bad = next(line for line in out(knobs) if line.startswith("BAD EVENT"))
    assert bad.endswith("ended, total end count != 1 (2)")
    if code:
        assert any(line.startswith("ERROR: aborting DAG because of bad event (BAD EVENT") for line in out(knobs))
        assert rescue_files(str(knobs / "x.dag"))
    else:
        assert any(line.startswith("Continuing with DAG in spite of bad event") for line in out(knobs))


@pytest.mark.parametrize("abort, code", [("True", 1), ("False", 0)])
def test_abort_on_scary_submit_when_the_log_names_another_job_for_a_node(knobs, schedd, abort, code):
    def scary_submit():
        until(lambda: "B" in runs(knobs), "B to start")
        write_events(knobs, SubmitEvent(cluster=99999, proc=0, time=datetime.now().astimezone(),
                                        submit_host="<x>", log_notes="DAG Node: B"))
        until(lambda: "doesn't match ID reported earlier" in text(knobs / "x.dag.dagman.out"), "the check")
        if abort == "False":  # the log is trusted: B is now job 99999, which ends
            write_events(knobs, JobTerminatedEvent(cluster=99999, proc=0, time=datetime.now().astimezone(),
                                                   return_value=0))

    dag = 'JOB B gated.sub\nVARS B code="0"\n'
    assert dagman(knobs, schedd, dag, f"DAGMAN_ABORT_ON_SCARY_SUBMIT = {abort}\n", helper=scary_submit) == code


def test_pending_report_interval_lists_the_nodes_dagman_waits_for(knobs, schedd):
    def wait_for_report():
        until(lambda: "Pending DAG nodes:" in text(knobs / "x.dag.dagman.out"), "the report")

    dag = 'JOB B gated.sub\nVARS B code="0"\n'
    assert dagman(knobs, schedd, dag, "DAGMAN_PENDING_REPORT_INTERVAL = 1\n", helper=wait_for_report) == 0
    lines = out(knobs)
    at = lines.index("Pending DAG nodes:")
    assert lines[at - 1].endswith("seconds since last log event")
    cluster = schedd.history('DAGNodeName == "B"', ["ClusterId"])[0]["ClusterId"]
    assert lines[at + 1] == f"  Node B, HTCondor ID {cluster}, status STATUS_SUBMITTED"


def test_node_record_info_retry_puts_the_retry_in_the_job_ad(knobs, schedd):
    assert dagman(knobs, schedd, "JOB X job.sub\nRETRY X 1\n", "DAGMAN_NODE_RECORD_INFO = Retry\n") == 0
    ads = schedd.history('DAGNodeName == "X"', ["DAGManNodeRetry"])
    assert sorted(ad.get("DAGManNodeRetry", 0) for ad in ads) == [0, 1], "only a retry carries it, as in DAGMan"
    said = out(knobs)
    at = said.index("DAGMAN_DEFAULT_APPEND_VARS setting: False")
    assert said[at + 1:at + 4] == ["DAGMAN_NODE_RECORD_INFO recording:", "\t-NODE Retries",
                                   "DAGMAN_ABORT_DUPLICATES setting: True"], "as 23.9.6 lists it (seen on the pool)"


def test_record_machine_attrs_records_the_slots_values_in_the_node_jobs_ad(knobs, schedd):
    """DAGMAN_RECORD_MACHINE_ATTRS = OpSys: the node job is submitted with job_machine_attrs, and
    its ad keeps the slot's values as MachineAttr<Name>0, beside the schedd's own Cpus and
    SlotWeight (seen on the pool: MachineAttrCpus0, MachineAttrOpSys0, MachineAttrSlotWeight0)."""
    assert dagman(knobs, schedd, 'JOB Y job.sub\n', "DAGMAN_RECORD_MACHINE_ATTRS = OpSys\n") == 0
    (ad,) = schedd.history('DAGNodeName == "Y"', [])
    assert ad["JobMachineAttrs"] == "OpSys"
    assert ad["JobAdInformationAttrs"] == "MachineAttrOpSys0,DAGNodeName"
    assert ad["MachineAttrOpSys0"] == "LINUX"
    assert ad["MachineAttrSlotWeight0"] == ad["MachineAttrCpus0"] > 0
    assert ad["DAGManNodesLog"] == f"{knobs}/./x.dag.nodes.log", "as 23.9.6 names the default node log"


def test_verbosity_1_keeps_only_the_quiet_lines(knobs, schedd):
    (knobs / "fail.sub").write_text("executable = /bin/false\nqueue\n")
    assert dagman(knobs, schedd, "JOB A job.sub\nJOB B fail.sub\n", "DAGMAN_VERBOSITY = 1\n") == 1
    lines = out(knobs)
    assert not any(line.startswith(("Submitting HTCondor Node", "Event: ", "Running ")) for line in lines)
    assert "ERROR: the following job(s) failed:" in lines and lines[-1].endswith("EXITING WITH STATUS 1")


def test_max_job_holds_removes_a_node_whose_job_is_held_that_often(knobs, schedd):
    def hold_b():
        until(lambda: "B" in runs(knobs), "B to start")
        schedd.act(JobAction.Hold, 'DAGNodeName == "B"', "held by the test")

    assert dagman(knobs, schedd, 'JOB B gated.sub\nVARS B code="0"\n', "DAGMAN_MAX_JOB_HOLDS = 1\n", helper=hold_b) == 1
    assert any(line.startswith("Total hold count for job") and "DAGMAN_MAX_JOB_HOLDS (1)" in line for line in out(knobs))
    ad = schedd.history('DAGNodeName == "B"', ["JobStatus", "RemoveReason"])[0]
    assert ad["JobStatus"] == 3 and "DAG Limit: Max number of held jobs was reached." in ad["RemoveReason"]


def test_put_failed_jobs_on_hold_resubmits_the_failed_job_on_hold(knobs, schedd):
    (knobs / "flag").write_text("3")
    (knobs / "flaky.sub").write_text("executable = /bin/sh\narguments = \"-c 'echo $(JOB) >> runs.txt; "
                                     "exit `cat flag`'\"\nqueue\n")

    def release_the_second_try():
        until(lambda: len(schedd.query('DAGNodeName == "A" && JobStatus == 5')) == 1, "A held")
        (knobs / "flag").write_text("0")
        schedd.act(JobAction.Release, 'DAGNodeName == "A"')

    assert dagman(knobs, schedd, "JOB A flaky.sub\n", "DAGMAN_PUT_FAILED_JOBS_ON_HOLD = True\n",
                  helper=release_the_second_try) == 0
    assert runs(knobs) == ["A", "A"]


def test_graph_metrics_are_reported_as_dagman_measures_them(knobs, schedd):
    dag = ("JOB A job.sub NOOP\nJOB B job.sub NOOP\nJOB C job.sub NOOP\nJOB D job.sub NOOP\nJOB E job.sub NOOP\n"
           "PARENT A CHILD B C\nPARENT B C CHILD D\nPARENT A CHILD E\nPARENT E CHILD D\n")
    assert dagman(knobs, schedd, dag, "DAGMAN_REPORT_GRAPH_METRICS = True\n") == 0
    metrics = json.loads((knobs / "x.dag.metrics").read_text())
    assert [metrics[k] for k in ("graph_height", "graph_width", "graph_num_edges", "graph_num_vertices")] == [2, 8, 6, 5]


def test_startup_cycle_detect_refuses_a_cycle_before_anything_runs(knobs, schedd):
    dag = "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\nPARENT B CHILD A\nFINAL F job.sub\n"
    assert dagman(knobs, schedd, dag, "DAGMAN_STARTUP_CYCLE_DETECT = True\n") == 1
    assert runs(knobs) == [] and rescue_files(str(knobs / "x.dag")) == []
    assert dagman(knobs, schedd, dag) == 0, "without it the cycle is found at the end, and FINAL decides"
    assert runs(knobs) == ["F"]


def test_use_join_nodes_false_connects_every_parent_to_every_child(knobs, schedd):
    dag = "JOB A job.sub NOOP\nJOB B job.sub NOOP\nJOB C job.sub NOOP\nJOB D job.sub NOOP\nPARENT A B CHILD C D\n"
    assert dagman(knobs, schedd, dag, "DAGMAN_USE_JOIN_NODES = False\nDAGMAN_REPORT_GRAPH_METRICS = True\n") == 0
    metrics = json.loads((knobs / "x.dag.metrics").read_text())
    assert (metrics["graph_num_vertices"], metrics["graph_num_edges"]) == (4, 4)
    assert dagman(knobs, schedd, dag, "DAGMAN_REPORT_GRAPH_METRICS = True\n") == 0
    metrics = json.loads((knobs / "x.dag.metrics").read_text())
    assert (metrics["graph_num_vertices"], metrics["graph_num_edges"]) == (5, 4)


def test_default_node_log_names_the_nodes_log(knobs, schedd):
    assert dagman(knobs, schedd, "JOB A job.sub\n", "DAGMAN_DEFAULT_NODE_LOG = @(DAG_DIR)/logs/@(DAG_FILE).events\n") \
        == 1, "no logs/ directory: DAGMan cannot log its node events"
    (knobs / "logs").mkdir()
    assert dagman(knobs, schedd, "JOB A job.sub\n", "DAGMAN_DEFAULT_NODE_LOG = @(DAG_DIR)/logs/@(DAG_FILE).events\n") == 0
    events = list(htcondor2.JobEventLog(str(knobs / "logs" / "x.dag.events")).events(stop_after=0))
    assert [e.type for e in events][0] == htcondor2.JobEventType.SUBMIT


def test_generate_subdag_submits_false_needs_the_sub_dags_condor_sub(knobs, schedd):
    (knobs / "inner.dag").write_text("JOB X job.sub\n")
    config = "DAGMAN_GENERATE_SUBDAG_SUBMITS = False\nDAGMAN_MAX_SUBMIT_ATTEMPTS = 1\n"
    assert dagman(knobs, schedd, "SUBDAG EXTERNAL S inner.dag\n", config) == 1
    assert "could not open submit file : inner.dag.condor.sub - can't open file inner.dag.condor.sub: " \
           "No such file or directory" in out(knobs)


def test_remove_node_jobs_false_leaves_the_removal_to_the_schedd(knobs, schedd):
    import os
    import signal

    def remove_dagman():
        until(lambda: "B" in runs(knobs), "B to start")
        os.kill(os.getpid(), signal.SIGUSR1)  # what condor_rm of the DAGMan job sends

    assert dagman(knobs, schedd, 'JOB B gated.sub\nVARS B code="0"\n', "DAGMAN_REMOVE_NODE_JOBS = False\n",
                  helper=remove_dagman) == 2
    said = out(knobs)[out(knobs).index("Received SIGUSR1"):]
    assert said[3:5] == ["Removing submitted jobs...", "Note: 0 total job deferrals because of -MaxJobs limit (0)"], \
        "no 'Removing any/all submitted HTCondor jobs...' (seen on the pool with this knob)"
    schedd.act(JobAction.Remove, 'DAGNodeName == "B"')


def test_suppress_job_logs_keeps_node_jobs_from_writing_their_own_logs(knobs, schedd):
    (knobs / "logged.sub").write_text("executable = /bin/true\nlog = own.log\nqueue\n")
    assert dagman(knobs, schedd, "JOB A logged.sub\n", "DAGMAN_SUPPRESS_JOB_LOGS = True\n") == 0
    assert not (knobs / "own.log").exists()
    assert dagman(knobs, schedd, "JOB A logged.sub\n") == 0
    assert (knobs / "own.log").exists()


@pytest.mark.parametrize("suppress, notification", [("True", 0), ("False", 2)])
def test_suppress_notification_overrides_the_submit_files_notification(knobs, schedd, suppress, notification):
    (knobs / "mail.sub").write_text("executable = /bin/true\nnotification = Complete\nqueue\n")
    assert dagman(knobs, schedd, "JOB A mail.sub\n", f"DAGMAN_SUPPRESS_NOTIFICATION = {suppress}\n") == 0
    assert schedd.history('DAGNodeName == "A"', ["JobNotification"])[0]["JobNotification"] == notification


def test_abort_duplicates_false_lets_a_second_dagman_recover_a_running_dag(knobs, schedd):
    """Two DAGMans on one DAG: the second, not refused, recovers from the nodes log and submits
    nothing again; both see the one job finish."""
    import subprocess
    import sys

    dag = 'JOB B gated.sub\nVARS B code="0"\n'
    (knobs / "x.config").write_text("DAGMAN_ABORT_DUPLICATES = False\n")
    (knobs / "x.dag").write_text("CONFIG x.config\n" + dag)
    first = subprocess.Popen([sys.executable, "-m", "engine.dagman", "--state-dir", schedd.state.path, "x.dag"],
                             cwd=knobs, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        until(lambda: "B" in runs(knobs) and (knobs / "x.dag.lock").exists(), "B to start")
        assert dagman(knobs, schedd, dag, "DAGMAN_ABORT_DUPLICATES = False\n") == 0
        _, err = first.communicate(timeout=60)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 0, err
    assert "Running in RECOVERY mode... " + ">" * 30 in out(knobs)
    assert runs(knobs) == ["B"] and len(schedd.history('DAGNodeName == "B"', ["ClusterId"])) == 1
