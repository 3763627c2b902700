"""SERVICE and PROVISIONER nodes as the DAGMan manual writes them: the provisioner's job tells
DAGMan it is ready by setting ``ProvisionerState = 2`` on its own ad with ``condor_qedit``."""

from __future__ import annotations

import subprocess

from dagman_waits import wait_until
from engine.dag import build_graph, parse_file
from engine.dagman.main import ending
from engine.dagman.metrics import read_metrics
from engine.dagman.node_status import read_node_status
from engine.dagman.progress import DagWatcher
from engine.dagman.runner import DagMan, Options
from installed import CRABTUI

PROVISIONER_SUB = "executable = /bin/sh\narguments = \"provisioner.sh $(Cluster)\"\nqueue\n"
# The sleep gives a node that did not wait the time to start before the provisioner is ready.
PROVISIONER_SH = ("echo provisioner >> runs.txt\nsleep 1\necho provisioned >> runs.txt\n"
                  "condor_qedit $1 ProvisionerState 2\n")
# A service that would run for ever: the DAG's end removes it.
SERVICE_SUB = ("executable = /bin/sh\narguments = \"-c 'echo service >> runs.txt; "
               "while [ ! -e never ]; do sleep 0.2; done'\"\nqueue\n")


def run(path, schedd) -> tuple[DagMan, int]:
    dagman = DagMan(build_graph(parse_file(str(path))), schedd, Options(scan_interval=0.05))
    return dagman, dagman.run()


def test_nodes_wait_until_the_provisioner_job_sets_provisioner_state_2(dag_dir, schedd):
    (dag_dir / "provisioner.sub").write_text(PROVISIONER_SUB)
    (dag_dir / "provisioner.sh").write_text(PROVISIONER_SH)
    (dag_dir / "p.dag").write_text('JOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\nPARENT A CHILD B\n'
                                   "PROVISIONER prov provisioner.sub\n")
    dagman, code = run(dag_dir / "p.dag", schedd)
    assert code == 0
    assert (dag_dir / "runs.txt").read_text().split() == ["provisioner", "provisioned", "A", "0", "B", "0"]
    assert read_metrics(str(dag_dir / "p.dag.metrics"))["jobs_succeeded"] == 3  # the provisioner is a node


def test_the_dag_ends_without_waiting_for_a_service_node_and_removes_its_job(dag_dir, schedd):
    (dag_dir / "service.sub").write_text(SERVICE_SUB)
    (dag_dir / "s.dag").write_text('SERVICE srv service.sub\nJOB A job.sub\nVARS A code="0"\n')
    dagman, code = run(dag_dir / "s.dag", schedd)
    assert code == 0
    service = dagman.nodes["srv"].cluster
    assert service < dagman.nodes["A"].cluster  # submitted first
    assert "Starting service node srv..." in (dag_dir / "s.dag.dagman.out").read_text()
    wait_until(lambda: schedd.history(f"ClusterId == {service}", ["JobStatus"]), "the service job to leave the queue")
    assert [ad["JobStatus"] for ad in schedd.history(f"ClusterId == {service}", ["JobStatus"])] == [3]  # removed
    assert not schedd.query(f"ClusterId == {service}", ["JobStatus"])
    metrics = read_metrics(str(dag_dir / "s.dag.metrics"))
    assert (metrics["jobs"], metrics["jobs_succeeded"]) == (1, 2)  # as 23.9.6 counts them


def test_qedit_sets_an_attribute_of_a_queued_job(dag_dir, schedd):
    (dag_dir / "held.sub").write_text("executable = /bin/true\nhold = true\nqueue\n")
    env = {"CRABTUI_STATE_DIR": schedd.state.path, "PATH": "/usr/bin:/bin"}
    submitted = subprocess.run([CRABTUI, "job", "submit", "held.sub"], env=env, capture_output=True, text=True)
    cluster = submitted.stdout.split()[-1].rstrip(".")
    edited = subprocess.run([CRABTUI, "qedit", cluster, "Flavour", '"mint"'], env=env, capture_output=True, text=True)
    assert edited.stdout == 'Set attribute "Flavour" for 1 matching jobs.\n', edited.stderr
    assert [ad["Flavour"] for ad in schedd.query(f"ClusterId == {cluster}", ["Flavour"])] == ["mint"]
    missing = subprocess.run([CRABTUI, "qedit", cluster, "Flavour"], env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "ATTR VALUE pairs" in missing.stderr


def test_a_service_node_is_outside_the_node_counts_totals_and_rescue_dag(dag_dir, schedd):
    """DAGMan keeps SERVICE nodes out of its node list (seen on the pool: "Of 2 nodes total" for
    this DAG, and its rescue DAG's "Total number of Nodes: 2")."""
    (dag_dir / "service.sub").write_text(SERVICE_SUB)
    (dag_dir / "echo.sh").write_text('#!/bin/sh\necho "$@" >> scripts.txt\n')
    (dag_dir / "echo.sh").chmod(0o755)
    (dag_dir / "s.dag").write_text(
        "# a service beside a failing node\n"
        "SERVICE srv service.sub\n"
        "JOB A job.sub\n"
        'VARS A code="5"\n'
        "JOB B job.sub\n"
        'VARS B code="0"\n'
        "SCRIPT POST B echo.sh $NODE_COUNT $DONE_COUNT $QUEUED_COUNT\n"
        "PARENT B CHILD A\n")
    dagman, code = run(dag_dir / "s.dag", schedd)
    assert code == 1
    assert (dag_dir / "scripts.txt").read_text() == "2 0 0\n"
    out = (dag_dir / "s.dag.dagman.out").read_text()
    lines = out.splitlines()
    totals = {line[18:] for line in lines if line.endswith(" nodes total:")}
    assert totals == {"Of 2 nodes total:"}
    last = max(i for i, line in enumerate(lines) if line.endswith(" nodes total:"))
    assert lines[last + 3].split()[2:] == ["1", "0", "0", "0", "0", "0", "1", "0"]  # the service's job not queued
    rescue = (dag_dir / "s.dag.rescue001").read_text()
    assert "# Total number of Nodes: 2\n" in rescue and "srv" not in rescue
    progress = DagWatcher(str(dag_dir / "s.dag"), str(dag_dir / "s.dag.dagman.out")).read()
    assert [node.name for node in progress.nodes if node.kind == "service"] == ["srv"]
    assert progress.counts == {"done": 1, "failed": 1}, "the counts dag status and the UI show are DAGMan's"


def test_a_failing_dag_removes_its_service_job_before_final_and_final_reads_its_abort(dag_dir, schedd):
    """As 23.9.6 (seen on the pool): DAGMan's main_shutdown_rescue writes the rescue DAG and removes
    every job of the DAG, the service's too, then starts FINAL, which sees the service job aborted:
    the service counts as a failed job, and FINAL's success still ends the DAG with 0."""
    (dag_dir / "service.sub").write_text(SERVICE_SUB)
    (dag_dir / "f.dag").write_text(
        "SERVICE srv service.sub\n"
        "JOB A job.sub\n"
        'VARS A code="5"\n'
        "JOB B job.sub\n"
        "PARENT A CHILD B\n"
        "FINAL F job.sub\n"
        'VARS F code="0"\n'
        "JOBSTATE_LOG js.log\n")
    dagman, code = run(dag_dir / "f.dag", schedd)
    assert code == 0
    srv = [line.split()[2] for line in (dag_dir / "js.log").read_text().splitlines() if " srv " in line]
    assert srv[0] == "SUBMIT" and srv[-2:] == ["JOB_ABORTED", "JOB_FAILURE"]
    metrics = read_metrics(str(dag_dir / "f.dag.metrics"))
    assert (metrics["jobs"], metrics["jobs_failed"], metrics["jobs_succeeded"]) == (3, 2, 1)
    said = [line[18:].replace(f"{dag_dir}/", "") for line in (dag_dir / "f.dag.dagman.out").read_text().splitlines()]
    ending = [text for text in said if text.startswith(("ERROR: the following", "Aborting DAG", "Writing Rescue",
                                                        "Removing", "Starting final", "All jobs"))]
    assert ending == ["ERROR: the following job(s) failed:", "Aborting DAG...", "Writing Rescue DAG to f.dag.rescue001...",
                      "Removing submitted jobs...", "Removing any/all submitted HTCondor jobs...",
                      "Starting final node...", "All jobs Completed!"]


def test_the_dag_priority_is_not_given_to_a_service_node(dag_dir, schedd):
    """-priority (and DAGMAN_DEFAULT_PRIORITY) raise the DAG's nodes but not its SERVICE nodes, which
    DAGMan keeps out of its node list: with -priority 7, the pool submitted A (JobPrio 7) before the
    service (JobPrio 0), which therefore waits behind the DAG's nodes in the ready queue."""
    (dag_dir / "service.sub").write_text(SERVICE_SUB)
    (dag_dir / "s.dag").write_text('SERVICE Mon service.sub\nJOB A job.sub\nVARS A code="0"\n')
    dagman = DagMan(build_graph(parse_file(str(dag_dir / "s.dag"))), schedd, Options(scan_interval=0.05, priority=7))
    assert dagman.run() == 0
    service, a = dagman.nodes["Mon"].cluster, dagman.nodes["A"].cluster
    assert a < service
    prio = {ad["ClusterId"]: ad["JobPrio"] for ad in schedd.history(f"ClusterId == {a}", ["ClusterId", "JobPrio"])}
    wait_until(lambda: schedd.history(f"ClusterId == {service}", ["JobPrio"]), "the service job to leave the queue")
    prio.update({ad["ClusterId"]: ad["JobPrio"] for ad in schedd.history(f"ClusterId == {service}", ["ClusterId", "JobPrio"])})
    assert prio == {a: 7, service: 0}


def test_a_service_node_still_queued_when_the_dag_ends_is_never_submitted(dag_dir, schedd):
    """With -maxjobs 1 and -priority 7 the service waits behind A, then B; DAGMan exits once B is done
    without submitting it (seen on the pool: only A and B in the nodes log, jobs_succeeded 2)."""
    (dag_dir / "service.sub").write_text(SERVICE_SUB)
    (dag_dir / "s.dag").write_text('SERVICE Mon service.sub\nJOB A job.sub\nJOB B job.sub\nVARS ALL_NODES code="0"\n'
                                   "PARENT A CHILD B\n")
    dagman = DagMan(build_graph(parse_file(str(dag_dir / "s.dag"))), schedd,
                    Options(scan_interval=0.05, priority=7, max_jobs=1))
    assert dagman.run() == 0
    assert dagman.nodes["Mon"].cluster is None
    assert not (dag_dir / "runs.txt").exists() or "service" not in (dag_dir / "runs.txt").read_text()
    metrics = read_metrics(str(dag_dir / "s.dag.metrics"))
    assert (metrics["jobs_succeeded"], metrics["total_jobs_run"]) == (2, 2)


def test_a_provisioner_that_ends_without_setting_its_state_leaves_the_other_nodes_unstarted(dag_dir, schedd):
    """Seen on the pool (23.9.6): "DAG finished but not all nodes are complete", no cycle, DAG
    status 1; the rescue DAG marks only the provisioner done, and FINAL runs with $DAG_STATUS 1."""
    (dag_dir / "provisioner.sub").write_text("executable = /bin/sh\narguments = \"-c 'echo provisioner >> runs.txt'\"\n"
                                             "queue\n")
    (dag_dir / "fin.sh").write_text("#!/bin/sh\necho status $1 failed $2 >> runs.txt\n")
    (dag_dir / "fin.sh").chmod(0o755)
    (dag_dir / "p.dag").write_text("PROVISIONER Prov provisioner.sub\nJOB A job.sub\nJOB B job.sub\n"
                                   'VARS A code="0"\nVARS B code="0"\nPARENT A CHILD B\n'
                                   "FINAL F provisioner.sub\nSCRIPT POST F fin.sh $DAG_STATUS $FAILED_COUNT $RETURN\n"
                                   "NODE_STATUS_FILE p.status\n")
    dagman, code = run(dag_dir / "p.dag", schedd)
    assert (dag_dir / "runs.txt").read_text().splitlines() == ["provisioner", "provisioner", "status 1 failed 0"]
    assert code == 0, "the FINAL node's success decides"
    assert (dag_dir / "p.dag.rescue001").read_text().splitlines()[-1] == "DONE Prov"
    out = (dag_dir / "p.dag.dagman.out").read_text()
    assert "Starting provisioner node..." in out
    # A waits outside DAGMan's ready queue: un-ready in the node table, which is printed before the error
    before = out[:out.index("ERROR: DAG finished but not all nodes are complete -- checking for a cycle...")]
    assert before.splitlines()[-3].split()[2:] == ["1", "0", "0", "0", "0", "3", "0", "0"]
    assert "... ERROR: no cycle found; unknown error condition" in out
    assert "DAG status: 1 (DAG_STATUS_ERROR)" in out
    # DAGMan's node list: every node but FINAL still STATUS_READY, B too, though it waits for A
    listed = [line[18:] for line in out.splitlines() if line[18:].startswith(("      Node Name:", "    Node Status:"))]
    assert [(name.split()[-1], status.split()[-1]) for name, status in zip(listed[::2], listed[1::2])] == [
        ("Prov", "STATUS_DONE"), ("A", "STATUS_READY"), ("B", "STATUS_READY"), ("F", "STATUS_NOT_READY")]
    # the node status file: A's ad says ready, but the counts, like the table, have it un-ready
    dag, *ads, _ = read_node_status(dag_dir / "p.status")
    assert [(ad["Node"], ad["NodeStatus"]) for ad in ads] == [("Prov", 5), ("A", 1), ("B", 0), ("F", 5)]
    assert (dag["NodesDone"], dag["NodesReady"], dag["NodesUnready"]) == (2, 0, 2)


def test_without_final_that_dag_fails_saying_what_the_provisioner_did_not_do(dag_dir, schedd):
    (dag_dir / "provisioner.sub").write_text("executable = /bin/true\nqueue\n")
    (dag_dir / "p.dag").write_text('PROVISIONER Prov provisioner.sub\nJOB A job.sub\nVARS A code="0"\n')
    dagman, code = run(dag_dir / "p.dag", schedd)
    assert code == 1
    assert not (dag_dir / "runs.txt").exists()
    assert "PROVISIONER node Prov ended without its job setting ProvisionerState = 2" in ending(dagman, code)
