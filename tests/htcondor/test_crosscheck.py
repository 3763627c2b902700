"""The same DAGs on the embedded engine and on real HTCondor 23.9.6: their metrics, rescue DAGs,
jobstate logs and node status files must agree once ids and times are set aside, and so must
what ran (in order where DAGMan's order is the point).  Differences we keep on purpose are in
the README's table and are normalised here, each with its reason.

The corpus runs every DAG command the embedded DAGMan implements and every DAGMAN_* knob it
honours at least once, with DAGs written as the manual writes them: scripts named without a
directory, nested splices and SUBDAGs with DIR, CONNECT with pins, ALL_NODES, INCLUDE, save
points, VARS values that used to leak into the submit text, and the knobs set in a CONFIG file.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest

from crosscheck import (crabtui, dagman_exit, dagman_out, files_under, jobstate, metrics, node_status, rescue,
                        scripts_and_runs, submit)
from engine.schedd.htcondor import HTCondorSchedd
from engine.schedd.local.client import LocalScheddClient
from engine.schedd.local.userlog import JobTerminatedEvent, UserLog
from engine.state import StateDir

pytestmark = pytest.mark.htcondor

JOB = ("executable = /bin/sh\n"
       "arguments = \"-c 'echo $(JOB) >> runs.txt; exit $(code)'\"\n"
       "queue\n")
OK = "executable = /bin/sh\narguments = \"-c 'echo $(JOB) >> runs.txt'\"\nqueue\n"
# A node job that runs until the test creates go.<node> (the "remove" DAG's B never gets it).
GATE = ("executable = /bin/sh\n"
        "arguments = \"-c 'echo $(JOB) >> runs.txt; while [ ! -e go.$(JOB) ]; do sleep 0.2; done'\"\n"
        "queue\n")
# Retries tell apart in what ran; X fails its first attempt.
RETRIED = ("executable = /bin/sh\n"
           "arguments = \"-c 'echo $(JOB) >> runs.txt; sleep 0.5; [ $(RETRY) -gt 0 ] || [ $(JOB) != X ]'\"\n"
           "queue\n")
X = 0o777  # scripts run by the pool's own user
FILES = {"job.sub": JOB, "ok.sub": OK, "gate.sub": GATE, "retried.sub": RETRIED,
         "ok.sh": "exit 0\n", "fail.sh": "exit 1\n",
         "echo.sh": 'echo "$@" >> scripts.txt\nexit 0\n', "halt.sh": "touch $1.halt\n"}
STATUS = "JOBSTATE_LOG js.log\nNODE_STATUS_FILE ns.txt\n"
SHELL_SCRIPT = '#!/bin/sh\necho "$(basename $0) $*" >> scripts.txt\n'


@dataclass
class Case:
    """One DAG, the files beside it (``(text, mode)`` for an executable), how to submit it,
    what to do while it runs, and which of its outputs to compare beyond the usual ones."""

    dag: str
    files: dict[str, str | tuple[str, int]] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    ordered: bool = False  # runs.txt compared in order: the order is what DAGMan decides here
    while_running: Callable[[Path, str], None] | None = None  # (the DAG, backend)
    dagman_out: tuple[str, ...] = ()  # dagman.out lines starting so, compared in order
    dagman_out_timed: bool = False  # those lines come from independent nodes, as timing has it: compared sorted
    job_ads: tuple[str, ...] = ()  # node job attributes compared, by node
    status: bool = True  # JOBSTATE_LOG and NODE_STATUS_FILE added and compared
    status_file_timed: bool = False  # its node status file's last dump depends on timing (README)
    jobstate_timed: bool = False  # its jobstate lines interleave as timing has it: compared sorted
    dagman_ad: tuple[str, ...] = ()  # the DAGMan job's own attributes compared
    submit_env: dict[str, str] = field(default_factory=dict)  # the submitter's environment (ENV GET)
    dot: str | None = None  # its DOT file: the first and the last dump compared


def remove_once_b_runs(dag: Path, backend: str, state: str) -> None:
    wait_for_line(dag.with_name("js.log"), "B EXECUTE")  # DAGMan has seen B run
    removed = crabtui("--backend", backend, "rm", str(CLUSTERS[dag]), cwd=dag.parent,
                      env={"CRABTUI_STATE_DIR": state})
    assert removed.returncode == 0, removed.stderr


def duplicate_terminate_of_a(dag: Path, backend: str, state: str) -> None:
    """A job that ends twice cannot happen for real: the same second terminate event of A is
    appended to both nodes logs once B runs, as a log would hold it."""
    wait_for_line(dag.with_name("js.log"), "B EXECUTE")
    cluster = next(line.split()[3].split(".")[0] for line in dag.with_name("js.log").read_text().splitlines()
                   if " A SUBMIT " in line)
    log = UserLog(str(dag) + ".nodes.log")
    log.write(JobTerminatedEvent(cluster=int(cluster), proc=0, time=datetime.now().astimezone(), return_value=0))
    log.close()
    wait_for_line(Path(str(dag) + ".dagman.out"), "BAD EVENT")
    dag.with_name("go.B").touch()
    os.chmod(dag.with_name("go.B"), 0o666)


INNER = 'JOB X job.sub\nJOB Y job.sub\nVARS X code="0"\nVARS Y code="1"\nPARENT X CHILD Y\n'
TUTORIAL_SCRIPTS = {"pre.sh": (SHELL_SCRIPT, X), "post.sh": (SHELL_SCRIPT, X), "nd/job.sub": JOB,
                    "nd/sub/pre.sh": (SHELL_SCRIPT, X), "noexec.sh": SHELL_SCRIPT,
                    "badinterp.sh": ("#!/no/such/interpreter\nexit 0\n", X)}
CONNECT_FILES = {
    "s1/out.dag": "JOB X ok.sub\nJOB Y ok.sub\nPIN_OUT X 1\nPIN_OUT Y 2\nSPLICE N nested.dag DIR deep\n"
                  "PARENT X CHILD N\n",
    "s1/ok.sub": OK, "s1/deep/nested.dag": "JOB Z ok.sub\n", "s1/deep/ok.sub": OK,
    "s2/in.dag": "JOB P ok.sub\nJOB Q ok.sub\nPIN_IN P 1\nPIN_IN Q 2\n", "s2/ok.sub": OK,
    "inc.dag": "JOB I ok.sub\nPARENT S2 CHILD I\n"}
NESTED_FILES = {
    "pre.sh": (SHELL_SCRIPT, X), "post.sh": (SHELL_SCRIPT, X), "sd/ok.sub": OK, "sd/pre.sh": (SHELL_SCRIPT, X),
    "sd/mid.dag": "JOB M ok.sub\nSCRIPT PRE M pre.sh M\nSUBDAG EXTERNAL T inner.dag DIR deeper\nPARENT M CHILD T\n",
    "sd/deeper/inner.dag": "JOB X ok.sub\nSCRIPT POST X post.sh X $RETURN\n", "sd/deeper/ok.sub": OK,
    "sd/deeper/post.sh": (SHELL_SCRIPT, X)}
ONCE = ("executable = /bin/sh\narguments = \"-c 'echo $(JOB) >> runs.txt; if [ -e flag ]; then exit 0; fi; "
        "touch flag; exit 1'\"\nqueue\n")
# Proc 1 fails once procs 0 and 2 are over: its failure is the cluster's last event.
MULTI = ("executable = /bin/sh\narguments = \"-c 'echo $(JOB).$(Process) >> runs.txt; "
         "[ $(Process) != 1 ] && exec touch over.$(Process); "
         "while [ ! -e over.0 ] || [ ! -e over.2 ]; do sleep 0.2; done; sleep 2; exit 3'\"\nqueue 3\n")
EVERY_POST_MACRO = ("$JOB $RETRY $MAX_RETRIES JOBID=$JOBID CLUSTERID=$CLUSTERID $RETURN $PRE_SCRIPT_RETURN "
                    "$DAG_STATUS $FAILED_COUNT $FUTILE_COUNT $DONE_COUNT $QUEUED_COUNT $NODE_COUNT $JOB_COUNT "
                    "$JOB_ABORT_COUNT $SUCCESS $EXIT_CODES $EXIT_CODE_COUNTS DAGID=$DAGID")
VARS_SUB = "executable = /bin/sh\narguments = \"-c true\"\ndescription = $(v)\nqueue\n"
TWO_CHAINS = "JOB A1 ok.sub\nJOB A2 ok.sub\nJOB B1 ok.sub\nJOB B2 ok.sub\nPARENT A1 CHILD A2\nPARENT B1 CHILD B2\n"
FULL_DAG = ('JOB A job.sub\nJOB B job.sub DIR sub NOOP\nJOB C job.sub\nRETRY C 2 UNLESS-EXIT 7\n'
            'VARS ALL_NODES code="0"\nVARS C code="1" x="a\\"b"\nVARS C APPEND z="3"\n'
            'SCRIPT PRE C /bin/sh ok.sh pre\nSCRIPT DEFER 3 10 POST C /bin/sh fail.sh post $RETURN\n'
            'PRE_SKIP C 9\nABORT-DAG-ON A 5 RETURN 2\nPRIORITY C 4\nCATEGORY C cat\nMAXJOBS cat 3\n'
            'JOB D job.sub\nPARENT A CHILD B C\nPARENT C CHILD D\nSUBDAG EXTERNAL S s.dag DIR sub\n'
            'PARENT A B CHILD S D\n')


# What DAGMan's environment gives the scripts it runs (ENV), and what it gives node jobs.
ENV_SCRIPT = '#!/bin/sh\necho "$1 FOO=$FOO BAZ=$BAZ TAG=$CRABTUI_XC_TAG" >> scripts.txt\n'
ENV_JOB = "executable = /bin/sh\narguments = \"-c 'echo $(JOB) FOO=$FOO TAG=$CRABTUI_XC_TAG >> runs.txt'\"\nqueue\n"
DIAMOND = ('JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nJOB D job.sub\nVARS ALL_NODES code="0"\nVARS B code="1"\n'
           "PARENT A CHILD B C\nPARENT B C CHILD D\n")


# PROVISIONER and SERVICE as the manual writes them: the provisioner sets ProvisionerState = 2 on
# its own ad with condor_qedit; the service runs until the DAG's end removes it (or a minute passes).
PROVISIONER_FILES = {
    "provisioner.sub": "executable = /bin/sh\narguments = \"provisioner.sh $(Cluster)\"\nqueue\n",
    "provisioner.sh": ("echo provisioner >> runs.txt\nsleep 2\necho provisioned >> runs.txt\n"
                       "condor_qedit $1 ProvisionerState 2\nsleep 2\n", X),
    "service.sub": "executable = /bin/sh\narguments = service.sh\nqueue\n",
    "service.sh": ("echo service >> scripts.txt\ni=0\nwhile [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done\n", X)}


def config(*knobs: str) -> dict[str, str]:
    return {"x.config": "".join(f"{knob}\n" for knob in knobs)}


CASES: dict[str, Case] = {
    "retry": Case('JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\nVARS B code="1"\nRETRY B 2\n'
                  "SCRIPT PRE A /bin/sh echo.sh pre $JOB $RETRY\nSCRIPT POST A /bin/sh echo.sh post $JOB $RETURN\n"
                  "PARENT A CHILD B\n"),
    "post_masks": Case('JOB A job.sub\nVARS A code="3"\nSCRIPT POST A /bin/sh ok.sh\nJOB B job.sub\nVARS B code="0"\n'
                       "PARENT A CHILD B\n"),
    "pre_fails": Case('JOB A job.sub\nVARS A code="0"\nSCRIPT PRE A /bin/sh fail.sh\nJOB B job.sub\nVARS B code="0"\n'
                      "PARENT A CHILD B\n"),
    "abort": Case('JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\nVARS B code="3"\n'
                  "ABORT-DAG-ON B 3 RETURN 2\nPARENT A CHILD B\nPARENT B CHILD C\n"),
    "final": Case('JOB A job.sub\nVARS A code="2"\nFINAL F job.sub\nVARS F code="0"\n'
                  "SCRIPT PRE F /bin/sh echo.sh final $DAG_STATUS $FAILED_COUNT\n"),
    "noop_preskip": Case('JOB A job.sub NOOP\nJOB B job.sub\nVARS B code="1"\nSCRIPT PRE B /bin/sh fail.sh\n'
                         "PRE_SKIP B 1\nJOB C job.sub\nVARS C code=\"0\"\nPARENT A CHILD B\nPARENT B CHILD C\n"),
    "halt": Case('JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\nSCRIPT POST A /bin/sh halt.sh halt.dag\n'
                 "PARENT A CHILD B\nFINAL F job.sub\n"),
    "splice": Case('SPLICE S inner.dag\nJOB A job.sub\nVARS A code="0"\nPARENT A CHILD S\n', {"inner.dag": INNER}),
    "subdag": Case('JOB A job.sub\nVARS A code="0"\nSUBDAG EXTERNAL S inner.dag\nPARENT A CHILD S\n',
                   {"inner.dag": INNER}),
    # condor_rm of the DAGMan job while B runs: B is removed, FINAL runs, a rescue DAG is written.
    "remove": Case('JOB A job.sub\nVARS ALL_NODES code="0"\nJOB B gate.sub\nJOB C job.sub\nFINAL F job.sub\n'
                   "SCRIPT PRE F /bin/sh echo.sh final $DAG_STATUS $FAILED_COUNT\nPARENT A CHILD B\n"
                   "PARENT B CHILD C\n", while_running=remove_once_b_runs),
    # Scripts as the tutorial names them, and ones that cannot start.
    "tutorial_scripts": Case(
        'JOB A job.sub\nSCRIPT PRE A pre.sh A 77\nSCRIPT POST A post.sh A $RETURN\nJOB B job.sub DIR nd\n'
        'SCRIPT PRE B sub/pre.sh B\nJOB C job.sub\nSCRIPT PRE C missing.sh C\nJOB D job.sub\n'
        'SCRIPT POST D noexec.sh D\nJOB E job.sub\nSCRIPT PRE E badinterp.sh E\nVARS ALL_NODES code="0"\n'
        'PARENT A CHILD B\n', TUTORIAL_SCRIPTS,
        dagman_out=("Create_Process", "Error: Failed to execute", "PRE Script of Job", "POST Script of node"),
        dagman_out_timed=True),
    "all_nodes": Case(
        'JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nVARS ALL_NODES code="0"\nVARS C code="2"\n'
        'RETRY ALL_NODES 1\nSCRIPT POST ALL_NODES /bin/sh echo.sh post $JOB $RETURN $RETRY $MAX_RETRIES\n'
        'PRIORITY ALL_NODES 3\nCATEGORY ALL_NODES grp\nMAXJOBS grp 1\nPRE_SKIP ALL_NODES 9\n'
        'ABORT-DAG-ON ALL_NODES 7\nPARENT A CHILD B\nFINAL F job.sub\nVARS F code="0"\n', job_ads=("JobPrio",)),
    "connect": Case("JOB A ok.sub\nJOB D ok.sub DONE\nSPLICE S1 out.dag DIR s1\nSPLICE S2 in.dag DIR s2\n"
                    "CONNECT S1 S2\nPARENT A CHILD S1\nINCLUDE inc.dag\n", CONNECT_FILES, jobstate_timed=True),
    "nested_subdag": Case("JOB A ok.sub\nSUBDAG EXTERNAL S mid.dag DIR sd\nSCRIPT PRE S pre.sh S\n"
                          "SCRIPT POST S post.sh S $RETURN\nPARENT A CHILD S\n", NESTED_FILES),
    "subdag_retry": Case("SUBDAG EXTERNAL S inner.dag\nRETRY S 1\n",
                         {"inner.dag": "JOB X ok.sub\nJOB Y once.sub\nPARENT X CHILD Y\n", "once.sub": ONCE}),
    "halt_pre": Case('JOB A job.sub\nSCRIPT PRE A /bin/sh halt.sh halt_pre.dag\nJOB B job.sub\nPARENT A CHILD B\n'
                     'FINAL F job.sub\nVARS ALL_NODES code="0"\n'),
    "always_run_post": Case(
        'CONFIG x.config\nJOB A job.sub\nSCRIPT PRE A /bin/sh fail.sh\n'
        'SCRIPT POST A /bin/sh echo.sh post A $PRE_SCRIPT_RETURN $RETURN\nJOB B job.sub\n'
        'SCRIPT PRE B /bin/sh fail.sh\nSCRIPT POST B /bin/sh fail.sh\nVARS ALL_NODES code="0"\n',
        config("DAGMAN_ALWAYS_RUN_POST = True")),
    "multiproc": Case(f"JOB M multi.sub\nRETRY M 1\nSCRIPT POST M /bin/sh echo.sh post {EVERY_POST_MACRO}\n",
                      {"multi.sub": MULTI}, jobstate_timed=True),
    # Inline descriptions take old-syntax arguments: 23.9.6 cannot submit new-syntax ones (README).
    "inline": Case("SUBMIT-DESCRIPTION shared {\nexecutable = /bin/sh\narguments = rec.sh $(JOB) $(who)\n"
                   "who = desc\n}\nJOB A shared\nJOB B {\nexecutable = /bin/sh\narguments = rec.sh $(JOB) $(who)\n"
                   '}\nVARS B who="vars"\nVARS A who="vars"\nJOB C own.sub\nVARS C who="vars"\n',
                   {"own.sub": "executable = /bin/sh\narguments = rec.sh $(JOB) $(who)\nwho = file\nqueue\n",
                    "rec.sh": 'echo "$@" >> runs.txt\n'}),
    "append_vars": Case('CONFIG x.config\nJOB C own.sub\nVARS C who="vars"\nJOB D own.sub\nVARS D PREPEND who="vars"\n',
                        {**config("DAGMAN_DEFAULT_APPEND_VARS = True"),
                         "own.sub": "executable = /bin/sh\narguments = rec.sh $(JOB) $(who)\nwho = file\nqueue\n",
                         "rec.sh": 'echo "$@" >> runs.txt\n'}),
    "vars_values": Case('JOB A v.sub\nVARS A v="\\\\"\nJOB B v.sub\nVARS B v="  lead and trail  "\n'
                        'JOB C v.sub\nVARS C v="q\\"uote\\\\\\"x"\nJOB D v.sub\nVARS D v="a $(JOB) b"\n'
                        'JOB E v.sub\nVARS E v="#hash"\n', {"v.sub": VARS_SUB}, job_ads=("JobDescription",)),
    # A quoted job attribute holding a value that ends in a backslash: condor_submit's old ClassAd syntax.
    "vars_in_attribute": Case('JOB A attr.sub\nVARS A v="trail\\\\"\nJOB B attr.sub\nVARS B v="C:\\\\dir\\\\"\n',
                              {"attr.sub": "executable = /bin/sh\narguments = \"-c true\"\nMy.Extra = \"$(v)\"\nqueue\n"},
                              job_ads=("Extra",)),
    # A node marked DONE on its JOB line: Done in the DOT file DAGMan writes once the DAG is parsed.
    "done_dot": Case('JOB D job.sub DONE\nJOB A job.sub\nVARS ALL_NODES code="0"\nPARENT D CHILD A\nDOT done.dot\n',
                     dot="done.dot"),
    "save_points": Case("JOB A ok.sub\nJOB B ok.sub\nJOB C ok.sub\nRETRY B 2\nPARENT A CHILD B\nPARENT B CHILD C\n"
                        "SAVE_POINT_FILE B\nSAVE_POINT_FILE C ./sub/c.save\n", {"sub/keep": ""}),
    "strict0": Case("CONFIG x.config\nJOB A ok.sub\nSCRIPT PRE A /bin/sh echo.sh $FOO $RETURN\n",
                    config("DAGMAN_USE_STRICT = 0")),
    "strict3": Case('CONFIG x.config\nJOB A ok.sub\nVARS A x="1"\nVARS A x="2"\nJOB B ok.sub\nPARENT A CHILD B\n',
                    config("DAGMAN_USE_STRICT = 3"), status=False),
    "depth_first": Case("CONFIG x.config\n" + TWO_CHAINS, config("DAGMAN_MAX_JOBS_SUBMITTED = 1",
                                                                 "DAGMAN_SUBMIT_DEPTH_FIRST = True"), ordered=True),
    "priorities": Case("CONFIG x.config\nJOB P1 ok.sub\nJOB P2 ok.sub\nJOB P3 ok.sub\nJOB P4 ok.sub\nPRIORITY P2 5\n"
                       "PRIORITY P3 10\nPRIORITY P4 5\nPARENT P1 P2 P3 P4 CHILD Z\nJOB Z ok.sub\n",
                       config("DAGMAN_MAX_JOBS_SUBMITTED = 1", "DAGMAN_DEFAULT_PRIORITY = 3"), ordered=True,
                       job_ads=("JobPrio",)),
    "retry_node_first": Case("CONFIG x.config\nJOB X retried.sub\nJOB Y retried.sub\nJOB Z retried.sub\nRETRY X 1\n",
                             config("DAGMAN_MAX_JOBS_SUBMITTED = 1", "DAGMAN_RETRY_NODE_FIRST = True",
                                    "DAGMAN_NODE_RECORD_INFO = Retry"), ordered=True,
                             job_ads=("DAGManNodeRetry",)),
    "retry_submit_first": Case("CONFIG x.config\nJOB S missing.sub\nJOB T ok.sub\nJOB U ok.sub\n",
                               config("DAGMAN_MAX_SUBMIT_ATTEMPTS = 2", "DAGMAN_RETRY_SUBMIT_FIRST = False",
                                      "DAGMAN_MAX_SUBMITS_PER_INTERVAL = 1"),
                               dagman_out=("Submitting HTCondor Node", "Job submit try", "Job submit failed")),
    "pending": Case("CONFIG x.config\nJOB A slow.sub\n",
                    {**config("DAGMAN_PENDING_REPORT_INTERVAL = 1"),
                     "slow.sub": "executable = /bin/sh\narguments = \"-c 'sleep 4'\"\nqueue\n"}),
    "full_rescue": Case("CONFIG x.config\n" + FULL_DAG, {
        **config("DAGMAN_WRITE_PARTIAL_RESCUE = False", "DAGMAN_RESET_RETRIES_UPON_RESCUE = False",
                 "DAGMAN_REPORT_GRAPH_METRICS = True", "DAGMAN_USE_JOIN_NODES = False"),
        "sub/s.dag": "JOB Y ../ok.sub\n"}, jobstate_timed=True),
    "no_rescue": Case('CONFIG x.config\nJOB A job.sub\nVARS A code="1"\nJOB B two.sub\nPARENT B CHILD A\n',
                      {**config("DAGMAN_MAX_RESCUE_NUM = 0", "DAGMAN_PROHIBIT_MULTI_JOBS = True",
                                "DAGMAN_MAX_SUBMIT_ATTEMPTS = 1", "DAGMAN_VERBOSITY = 1",
                                "DAGMAN_DEFAULT_APPEND_VARS = True"),
                       "two.sub": "executable = /bin/true\nqueue 2\n"},
                      dagman_out=("No rescue DAG written", "Job submit failed", "Submitting HTCondor Node")),
    "bad_event": Case('CONFIG x.config\nJOB A ok.sub\nJOB B gate.sub\nPARENT A CHILD B\n',
                      config("DAGMAN_ALLOW_EVENTS = 0"), while_running=duplicate_terminate_of_a,
                      dagman_out=("ERROR: aborting DAG because of bad event",), status_file_timed=True),
    # SET_JOB_ATTR and ENV as the manual writes them: condor_submit_dag puts them in the DAGMan job.
    "dagman_job": Case('SET_JOB_ATTR MyTag = "crab"\nSET_JOB_ATTR Answer = 42\nENV GET CRABTUI_XC_TAG\n'
                       'ENV SET FOO=bar;BAZ="a b"\nJOB A env.sub\nSCRIPT PRE A env.sh pre\nSCRIPT POST A env.sh post\n',
                       {"env.sub": ENV_JOB, "env.sh": (ENV_SCRIPT, X)}, submit_env={"CRABTUI_XC_TAG": "xc42"},
                       dagman_ad=("MyTag", "Answer")),
    "dot_update": Case(DIAMOND + "DOT graph.dot UPDATE INCLUDE header.dot\n",
                       {"header.dot": "    size=\"4,4\";\n    node [color=blue];\n"}, dot="graph.dot"),
    "dot_numbered": Case(DIAMOND + "DOT numbered.dot UPDATE DONT-OVERWRITE\n", dot="numbered.dot"),
    # ABORT-DAG-ON on a success value: the child is left ready, the DAG exits 0 as aborted.
    "abort_on_success": Case('JOB A job.sub\nVARS A code="0"\nABORT-DAG-ON A 0\nJOB B job.sub\nPARENT A CHILD B\n',
                             dagman_out=("Aborting DAG", "Writing Rescue", "Removing", "All jobs")),
    # A failing DAG removes its service job with the others before FINAL, which reads its abort.
    "service_final": Case('SERVICE srv service.sub\nJOB A job.sub\nVARS A code="5"\nJOB B job.sub\nPARENT A CHILD B\n'
                          'FINAL F job.sub\nVARS F code="0"\nSCRIPT PRE F /bin/sh echo.sh final $DAG_STATUS $NODE_COUNT\n',
                          PROVISIONER_FILES, jobstate_timed=True,
                          dagman_out=("ERROR: the following", "Aborting DAG", "Writing Rescue", "Removing",
                                      "Starting final", "All jobs")),
    "provisioner": Case('PROVISIONER prov provisioner.sub\nSERVICE srv service.sub\nJOB A job.sub\nJOB B job.sub\n'
                        'VARS ALL_NODES code="0"\nPARENT A CHILD B\n', PROVISIONER_FILES, ordered=True,
                        jobstate_timed=True),
    # The manual's POST scripts in a chain, so that dagman.out's order is DAGMan's: a NOOP node's
    # POST, a POST that masks a failed job, a POST that fails and retries its node, a signal.
    "post_results": Case('JOB A job.sub NOOP\nSCRIPT POST A /bin/sh echo.sh $JOB $JOBID $RETURN $JOB_COUNT $SUCCESS\n'
                         'JOB B job.sub\nVARS B code="3"\nSCRIPT POST B /bin/sh echo.sh $JOB $RETURN $EXIT_CODES\n'
                         'JOB C job.sub\nVARS C code="0"\nSCRIPT POST C /bin/sh fail.sh\nRETRY C 1\n'
                         'JOB D kill.sub\nSCRIPT POST D /bin/sh echo.sh $JOB $RETURN $EXIT_CODES $EXIT_CODE_COUNTS\n'
                         "PARENT A CHILD B\nPARENT B CHILD D\nPARENT D CHILD C\n",
                         {"kill.sub": "executable = kill.sh\nqueue\n", "kill.sh": ("#!/bin/sh\nkill -TERM $$\n", X)},
                         dagman_out=("Event: ULOG_", "Node A job", "Node B job", "Node C job", "Node D job",
                                     "POST Script of node", "POST for Node", "Number of idle job procs")),
}
REMOVED = "remove"
CLUSTERS: dict[Path, int] = {}


def lay_out(root: Path, name: str) -> Path:
    directory = root / name
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)  # jobs on the real pool run as an unprivileged user
    case = CASES[name]
    dag_text = case.dag + (STATUS if case.status else "")
    for file, content in {**FILES, **case.files, f"{name}.dag": dag_text}.items():
        text, mode = content if isinstance(content, tuple) else (content, 0o666)
        path = directory / file
        for parent in reversed(path.relative_to(directory).parents[:-1]):
            (directory / parent).mkdir(mode=0o777, exist_ok=True)
            os.chmod(directory / parent, 0o777)
        path.write_text(text)
        os.chmod(path, mode)
    return directory / f"{name}.dag"


@pytest.fixture(scope="module")
def both_runs(htcondor_pool):
    """Every DAG submitted to both backends at once, then waited for: {name: (real, embedded, exits)}."""
    root = Path(tempfile.mkdtemp(prefix="crosscheck-", dir="/tmp"))
    os.chmod(root, 0o777)
    state = StateDir(tempfile.mkdtemp(prefix="xc-", dir="/tmp"))
    embedded_env = {"CRABTUI_STATE_DIR": state.path}
    runs = {}
    try:
        for side in ("real", "embedded"):
            (root / side).mkdir()
            os.chmod(root / side, 0o777)
        for name, case in CASES.items():
            real, mine = lay_out(root / "real", name), lay_out(root / "embedded", name)
            CLUSTERS[real] = submit(real, ["--backend", "htcondor"], case.submit_env, *case.options)
            CLUSTERS[mine] = submit(mine, ["--backend", "embedded"], {**embedded_env, **case.submit_env}, *case.options)
            runs[name] = (real, mine)
        for name, case in CASES.items():
            if case.while_running:
                for dag, backend in zip(runs[name], ("htcondor", "embedded")):
                    case.while_running(dag, backend, state.path)
        exits = {name: (dagman_exit(real), dagman_exit(mine)) for name, (real, mine) in runs.items()}
        yield {name: (real, mine, exits[name]) for name, (real, mine) in runs.items()}, state
    finally:
        LocalScheddClient(state).shutdown()
        shutil.rmtree(state.path, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


def wait_for_line(path: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and text in path.read_text()):
        assert time.monotonic() < deadline, f"{path}: no {text!r} within {timeout} s"
        time.sleep(0.2)


def run_of(both_runs, name):
    runs, _ = both_runs
    return runs[name]


@pytest.mark.parametrize("name", list(CASES))
def test_exit_code_and_metrics_agree(both_runs, name):
    real, mine, (real_exit, my_exit) = run_of(both_runs, name)
    assert my_exit == real_exit
    assert Path(f"{mine}.metrics").exists() == Path(f"{real}.metrics").exists()
    if Path(f"{real}.metrics").exists():
        assert metrics(mine) == metrics(real)


@pytest.mark.parametrize("name", list(CASES))
def test_rescue_dags_agree(both_runs, name):
    """Every rescue DAG of the run, sub-DAGs' too, with the DAG's directory set aside."""
    real, mine, _ = run_of(both_runs, name)
    assert files_under(mine.parent, ".rescue") == files_under(real.parent, ".rescue")
    for relative in files_under(real.parent, ".rescue"):
        assert rescue(mine.parent / relative) == rescue(real.parent / relative), relative


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.status])
def test_jobstate_logs_agree(both_runs, name):
    real, mine, _ = run_of(both_runs, name)
    assert real.with_name("js.log").exists() and mine.with_name("js.log").exists()
    timed = CASES[name].jobstate_timed
    assert jobstate(mine.with_name("js.log"), timed) == jobstate(real.with_name("js.log"), timed)


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.status and not case.status_file_timed])
def test_node_status_files_agree(both_runs, name):
    real, mine, _ = run_of(both_runs, name)
    assert node_status(mine.with_name("ns.txt")) == node_status(real.with_name("ns.txt"))  # both must exist


@pytest.mark.parametrize("name", list(CASES))
def test_what_ran_agrees(both_runs, name):
    """Every runs.txt and scripts.txt under the DAG's directory (DIR nodes, splices, sub-DAGs)."""
    real, mine, _ = run_of(both_runs, name)
    assert scripts_and_runs(mine.parent, CASES[name].ordered) == scripts_and_runs(real.parent, CASES[name].ordered)


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.dagman_out])
def test_dagman_out_lines_agree(both_runs, name):
    real, mine, _ = run_of(both_runs, name)
    case = CASES[name]
    order = sorted if case.dagman_out_timed else list
    assert order(dagman_out(mine, case.dagman_out)) == order(dagman_out(real, case.dagman_out))


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.job_ads])
def test_node_job_ads_agree(both_runs, name):
    """The attributes each node's jobs got, read from each schedd's history by DAGMan job id."""
    runs, state = both_runs
    real, mine, _ = runs[name]
    attrs = CASES[name].job_ads
    with LocalScheddClient(state) as local:
        backends = ((HTCondorSchedd(), real), (local, mine))
        seen = []
        for schedd, dag in backends:
            ads = schedd.history(f"DAGManJobId == {CLUSTERS[dag]}", ["DAGNodeName", *attrs])
            seen.append(sorted(repr((ad["DAGNodeName"], *(ad.get(a) for a in attrs))) for ad in ads))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.dagman_ad])
def test_dagman_job_ads_agree(both_runs, name):
    """SET_JOB_ATTR's attributes, as condor_q -l shows them on the DAGMan job."""
    runs, state = both_runs
    real, mine, _ = runs[name]
    attrs = CASES[name].dagman_ad
    with LocalScheddClient(state) as local:
        seen = [[tuple(ad.get(a) for a in attrs) for ad in schedd.history(f"ClusterId == {CLUSTERS[dag]}", list(attrs))]
                for schedd, dag in ((HTCondorSchedd(), real), (local, mine))]
    assert seen[1] == seen[0] and None not in seen[0][0]


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case.dot])
def test_dot_files_agree(both_runs, name):
    """The DOT file at the DAG's start and at its end, the time in its label set aside.  With
    DONT-OVERWRITE how many dumps come between depends on timing; the first and last do not."""
    real, mine, _ = run_of(both_runs, name)
    dot = CASES[name].dot
    assert dot_dumps(mine.parent, dot) == dot_dumps(real.parent, dot)


def dot_dumps(directory: Path, dot: str) -> list[list[str]]:
    paths = [directory / dot] if (directory / dot).exists() else sorted(
        directory.glob(f"{dot}.*[0-9]"), key=lambda p: int(p.suffix[1:]))
    assert paths, f"no {dot} in {directory}"
    return [[re.sub(r"status at .*\";", "status at T\";", line) for line in path.read_text().splitlines()]
            for path in dict.fromkeys([paths[0], paths[-1]])]


def test_save_point_files_agree(both_runs):
    real, mine, _ = run_of(both_runs, "save_points")
    assert files_under(mine.parent, ".save") == files_under(real.parent, ".save") == [
        "save_files/B-save_points.dag.save", "sub/c.save"]
    for relative in files_under(real.parent, ".save"):
        assert rescue(mine.parent / relative) == rescue(real.parent / relative)


def test_pending_nodes_are_reported_alike(both_runs):
    """How many reports a run gets depends on timing; what a report says does not."""
    real, mine, _ = run_of(both_runs, "pending")
    for dag in (real, mine):  # a report before A's submit lists no node: DAGMan reports, then submits
        lines = dagman_out(dag, ("Pending DAG nodes:", "  Node A, HTCondor ID"))
        assert "Pending DAG nodes:" in lines and "  Node A, HTCondor ID c1, status STATUS_SUBMITTED" in lines, dag


def test_a_removed_dag_ran_its_final_node_and_wrote_a_rescue_dag(both_runs):
    real, mine, exits = run_of(both_runs, REMOVED)
    assert exits == (-1, -1), "the DAGMan job's own log ends with its abort"
    for dag in (real, mine):
        assert [line for line in rescue(dag) if line.startswith("DONE")] == ["DONE A"]
        assert dag.with_name("scripts.txt").read_text().split()[0] == "final"
