"""The user-log writer against HTCondor's text, byte for byte, and against the real reader.

The expected blocks are written out from HTCondor 23.9's condor_event.cpp, not from our output;
the normal-termination one is a real 23.x log (HTCondor's own tutorial, whose copy trimmed the
table's trailing blanks) with those blanks restored.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import htcondor2
import pytest

from engine.schedd.local.userlog import (
    ExecuteEvent,
    JobAbortedEvent,
    JobEvictedEvent,
    JobHeldEvent,
    JobImageSizeEvent,
    JobReleasedEvent,
    JobTerminatedEvent,
    PostScriptTerminatedEvent,
    PreSkipEvent,
    QueueFollower,
    Rusage,
    SubmitEvent,
    UserLog,
    format_event,
    node_events,
)

# A fixed local wall-clock time: the header shows local time, so this reads the same in any TZ.
T = datetime(2024, 5, 1, 10, 0, 0).astimezone()
JOB = {"cluster": 12, "proc": 0, "time": T}
NOOP = {"cluster": 0, "proc": 2147483647, "subproc": 1, "time": T}  # DAGMan's id for PRE_SKIP
SCHEDD = "<127.0.0.1:9618?addrs=127.0.0.1-9618&noUDP&sock=schedd_1_1>"
STARTD = "<127.0.0.1:9618?addrs=127.0.0.1-9618&noUDP&sock=startd_1_1>"


def read(path) -> list[htcondor2.JobEvent]:
    return list(htcondor2.JobEventLog(str(path)).events(stop_after=0))


EXACT = {
    "submit": (
        SubmitEvent(**JOB, submit_host=SCHEDD, log_notes="DAG Node: A"),
        f"000 (012.000.000) 2024-05-01 10:00:00 Job submitted from host: {SCHEDD}\n"
        "    DAG Node: A\n"
        "...\n",
    ),
    "submit-plain": (
        SubmitEvent(**JOB, submit_host=SCHEDD),
        f"000 (012.000.000) 2024-05-01 10:00:00 Job submitted from host: {SCHEDD}\n...\n",
    ),
    "execute": (
        ExecuteEvent(
            **JOB,
            execute_host=STARTD,
            slot_name="slot1_1@localhost",
            props={"Memory": 1024, "GPUs": 0, "Cpus": 1, "Disk": 1049858,
                   "GLIDEIN_ResourceName": "LOCAL", "CondorScratchDir": "/var/lib/condor/execute/dir_12345"},
        ),
        f"001 (012.000.000) 2024-05-01 10:00:00 Job executing on host: {STARTD}\n"
        "\tSlotName: slot1_1@localhost\n"
        '\tCondorScratchDir = "/var/lib/condor/execute/dir_12345"\n'
        "\tCpus = 1\n"
        "\tDisk = 1049858\n"
        '\tGLIDEIN_ResourceName = "LOCAL"\n'
        "\tGPUs = 0\n"
        "\tMemory = 1024\n"
        "...\n",
    ),
    "image-size": (
        JobImageSizeEvent(**JOB, image_size=2500, memory_usage=3, resident_set_size=2500),
        "006 (012.000.000) 2024-05-01 10:00:00 Image size of job updated: 2500\n"
        "\t3  -  MemoryUsage of job (MB)\n"
        "\t2500  -  ResidentSetSize of job (KB)\n"
        "...\n",
    ),
    "terminated-normal": (
        JobTerminatedEvent(
            cluster=5739, proc=0, time=datetime(2025, 4, 28, 10, 46, 11).astimezone(),
            return_value=0,
            sent_bytes=306, received_bytes=683, total_sent_bytes=306, total_received_bytes=683,
            usage={"Cpus": 1, "RequestCpus": 1, "CpusUsage": 0.0,
                   "Disk": 1049858, "RequestDisk": 1048576, "DiskUsage": 139, "GPUs": 0,
                   "Memory": 1024, "RequestMemory": 1024, "MemoryUsage": 4,
                   "TimeExecuteUsage": 12, "TimeSlotBusyUsage": 14},
            exited_at=datetime(2025, 5, 1, 15, 59, 27, tzinfo=timezone.utc),
        ),
        "005 (5739.000.000) 2025-04-28 10:46:11 Job terminated.\n"
        "\t(1) Normal termination (return value 0)\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
        "\t306  -  Run Bytes Sent By Job\n"
        "\t683  -  Run Bytes Received By Job\n"
        "\t306  -  Total Bytes Sent By Job\n"
        "\t683  -  Total Bytes Received By Job\n"
        "\tPartitionable Resources :    Usage  Request Allocated \n"
        "\t   Cpus                 :        0        1         1 \n"
        "\t   Disk (KB)            :      139  1048576   1049858 \n"
        "\t   GPUs                 :                           0 \n"
        "\t   Memory (MB)          :        4     1024      1024 \n"
        "\t   TimeExecute (s)      :       12                    \n"
        "\t   TimeSlotBusy (s)     :       14                    \n"
        "\n"
        "\tJob terminated of its own accord at 2025-05-01T15:59:27Z with exit-code 0.\n"
        "...\n",
    ),
    "terminated-signal": (
        JobTerminatedEvent(
            **JOB, signal_number=9,
            run_remote_usage=Rusage(1.7, 0), total_remote_usage=Rusage(93784, 2),
        ),
        "005 (012.000.000) 2024-05-01 10:00:00 Job terminated.\n"
        "\t(0) Abnormal termination (signal 9)\n"
        "\t(0) No core file\n"
        "\t\tUsr 0 00:00:01, Sys 0 00:00:00  -  Run Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
        "\t\tUsr 1 02:03:04, Sys 0 00:00:02  -  Total Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
        "\t0  -  Run Bytes Sent By Job\n"
        "\t0  -  Run Bytes Received By Job\n"
        "\t0  -  Total Bytes Sent By Job\n"
        "\t0  -  Total Bytes Received By Job\n"
        "...\n",
    ),
    "terminated-core": (
        # A fractional usage pads the column's whole numbers by three blanks (formatUsageAd).
        JobTerminatedEvent(
            **JOB, signal_number=11, core_file="/tmp/core.4242",
            usage={"Cpus": 1, "RequestCpus": 1, "CpusUsage": 0.5,
                   "Memory": 128, "RequestMemory": 128, "MemoryUsage": 3},
            exited_at=datetime(2024, 5, 1, 8, 0, 0, tzinfo=timezone.utc),
        ),
        "005 (012.000.000) 2024-05-01 10:00:00 Job terminated.\n"
        "\t(0) Abnormal termination (signal 11)\n"
        "\t(1) Corefile in: /tmp/core.4242\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
        "\t0  -  Run Bytes Sent By Job\n"
        "\t0  -  Run Bytes Received By Job\n"
        "\t0  -  Total Bytes Sent By Job\n"
        "\t0  -  Total Bytes Received By Job\n"
        "\tPartitionable Resources :    Usage  Request Allocated \n"
        "\t   Cpus                 :     0.50        1         1 \n"
        "\t   Memory (MB)          :     3         128       128 \n"
        "\n"
        "\tJob terminated of its own accord at 2024-05-01T08:00:00Z with signal 11.\n"
        "...\n",
    ),
    "held": (
        JobHeldEvent(**JOB, code=3, reason="The job attribute PeriodicHold expression 'true' evaluated to TRUE"),
        "012 (012.000.000) 2024-05-01 10:00:00 Job was held.\n"
        "\tThe job attribute PeriodicHold expression 'true' evaluated to TRUE\n"
        "\tCode 3 Subcode 0\n"
        "...\n",
    ),
    "held-no-reason": (
        JobHeldEvent(**JOB, reason="", code=1, subcode=2),
        "012 (012.000.000) 2024-05-01 10:00:00 Job was held.\n"
        "\tReason unspecified\n"
        "\tCode 1 Subcode 2\n"
        "...\n",
    ),
    "released": (
        JobReleasedEvent(**JOB, reason="via condor_release (by user crab)"),
        "013 (012.000.000) 2024-05-01 10:00:00 Job was released.\n"
        "\tvia condor_release (by user crab)\n"
        "...\n",
    ),
    "aborted": (
        JobAbortedEvent(**JOB, reason="via condor_rm (by user crab)"),
        "009 (012.000.000) 2024-05-01 10:00:00 Job was aborted.\n\tvia condor_rm (by user crab)\n...\n",
    ),
    "evicted": (
        JobEvictedEvent(
            **JOB, reason="Job was vacated", run_remote_usage=Rusage(61, 0), received_bytes=27,
            usage={"Cpus": 1, "RequestCpus": 1, "CpusUsage": 1},
        ),
        "004 (012.000.000) 2024-05-01 10:00:00 Job was evicted.\n"
        "\t(0) CPU times\n"
        "\t\tUsr 0 00:01:01, Sys 0 00:00:00  -  Run Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
        "\t0  -  Run Bytes Sent By Job\n"
        "\t27  -  Run Bytes Received By Job\n"
        "\tJob was vacated\n"
        "\tPartitionable Resources :    Usage  Request Allocated \n"
        "\t   Cpus                 :        1        1         1 \n"
        "...\n",
    ),
    "post-script": (
        PostScriptTerminatedEvent(**JOB, dag_node_name="A", return_value=1),
        "016 (012.000.000) 2024-05-01 10:00:00 POST Script terminated.\n"
        "\t(1) Normal termination (return value 1)\n"
        "    DAG Node: A\n"
        "...\n",
    ),
    "post-script-signal": (
        PostScriptTerminatedEvent(**JOB, dag_node_name="A", signal_number=15),
        "016 (012.000.000) 2024-05-01 10:00:00 POST Script terminated.\n"
        "\t(0) Abnormal termination (signal 15)\n"
        "    DAG Node: A\n"
        "...\n",
    ),
    "pre-skip": (
        PreSkipEvent(**NOOP, dag_node_name="B"),
        "034 (000.2147483647.001) 2024-05-01 10:00:00 PRE script return value is PRE_SKIP value\n"
        "    DAG Node: B\n"
        "...\n",
    ),
}


@pytest.mark.parametrize("name", EXACT)
def test_text_is_htcondors(name):
    event, text = EXACT[name]
    assert format_event(event) == text


def test_real_reader_reads_every_event(tmp_path):
    path = tmp_path / "job.log"
    with UserLog(path) as log:
        for event, _ in EXACT.values():
            log.write(event)
    events = read(path)
    assert [(e.type, e.cluster, e.proc) for e in events] == [
        (event.type, event.cluster, event.proc) for event, _ in EXACT.values()
    ]
    got = dict(zip(EXACT, events))
    J = htcondor2.JobEventType
    assert got["submit"].type == J.SUBMIT and got["submit"]["LogNotes"] == "DAG Node: A"
    assert got["submit"]["SubmitHost"] == SCHEDD
    assert got["execute"]["SlotName"] == "slot1_1@localhost"
    assert got["execute"]["ExecuteProps"]["CondorScratchDir"] == "/var/lib/condor/execute/dir_12345"
    assert got["execute"]["ExecuteProps"]["Memory"] == 1024
    size = got["image-size"]
    assert (size["Size"], size["MemoryUsage"], size["ResidentSetSize"]) == (2500, 3, 2500)
    normal = got["terminated-normal"]
    assert normal["TerminatedNormally"] is True and normal["ReturnValue"] == 0
    assert (normal["SentBytes"], normal["TotalReceivedBytes"]) == (306, 683)
    assert (normal["Cpus"], normal["RequestDisk"], normal["DiskUsage"], normal["TimeSlotBusyUsage"]) == (
        1, 1048576, 139, 14)
    signal = got["terminated-signal"]
    assert signal["TerminatedNormally"] is False and signal["TerminatedBySignal"] == 9
    assert signal["TotalRemoteUsage"] == "Usr 1 02:03:04, Sys 0 00:00:02"
    core = got["terminated-core"]
    assert (core["TerminatedBySignal"], core["CoreFile"], core["CpusUsage"], core["MemoryUsage"]) == (
        11, "/tmp/core.4242", 0.5, 3)
    held = got["held"]
    assert held.type == J.JOB_HELD and held["HoldReasonCode"] == 3 and held["HoldReasonSubCode"] == 0
    assert held["HoldReason"] == "The job attribute PeriodicHold expression 'true' evaluated to TRUE"
    assert got["released"]["Reason"] == "via condor_release (by user crab)"
    assert got["aborted"]["Reason"] == "via condor_rm (by user crab)"
    assert got["evicted"].type == J.JOB_EVICTED and got["evicted"]["Checkpointed"] is False
    assert got["evicted"]["ReceivedBytes"] == 27
    post = got["post-script"]
    assert (post["DAGNodeName"], post["TerminatedNormally"], post["ReturnValue"]) == ("A", True, 1)
    assert got["post-script-signal"]["TerminatedBySignal"] == 15
    skip = got["pre-skip"]
    assert skip.type == J.PRESKIP and (skip.cluster, skip.proc) == (0, 2147483647)
    assert skip["Subproc"] == 1 and skip["SkipEventLogNotes"] == "DAG Node: B"


def test_shared_log_interleaves_only_between_events(tmp_path):
    # A DAG's nodes log: DAGMan and many jobs append to one file through their own descriptors.
    path = tmp_path / "nodes.log"
    writers = [UserLog(path, fsync=True), UserLog(path)]
    writers[0].write(SubmitEvent(cluster=1, proc=0, time=T, submit_host=SCHEDD, log_notes="DAG Node: A"))
    writers[1].write(SubmitEvent(cluster=2, proc=0, time=T, submit_host=SCHEDD, log_notes="DAG Node: B"))
    writers[0].write(JobTerminatedEvent(cluster=1, proc=0, time=T, return_value=0))
    writers[1].write(JobHeldEvent(cluster=2, proc=0, time=T, reason="held", code=1))

    # Racing threads: os.write drops the GIL, so these appends really are concurrent.
    def append(log: UserLog, cluster: int) -> None:
        for proc in range(200):
            log.write(JobTerminatedEvent(cluster=cluster, proc=proc, time=T, return_value=proc % 256))

    threads = [threading.Thread(target=append, args=(log, 10 + i)) for i, log in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for log in writers:
        log.close()

    events = read(path)
    assert [(e.type, e.cluster) for e in events[:4]] == [(0, 1), (0, 2), (5, 1), (12, 2)]
    assert [e["LogNotes"] for e in events[:2]] == ["DAG Node: A", "DAG Node: B"]
    for cluster in (10, 11):
        procs = [e.proc for e in events[4:] if e.cluster == cluster]
        assert procs == list(range(200))
    assert len(events) == 404
    assert all(e["ReturnValue"] == e.proc % 256 for e in events[4:])


def test_appends_to_an_existing_log(tmp_path):
    path = tmp_path / "job.log"
    for cluster in (1, 2):
        log = UserLog(path)
        log.write(SubmitEvent(cluster=cluster, proc=0, time=T, submit_host=SCHEDD))
        log.close()
    assert [e.cluster for e in read(path)] == [1, 2]


def test_unopenable_path_names_itself(tmp_path):
    path = tmp_path / "missing" / "job.log"
    with pytest.raises(OSError, match=str(path)):
        UserLog(path)


def test_closed_log_refuses_writes(tmp_path):
    log = UserLog(tmp_path / "job.log")
    log.close()
    log.close()
    with pytest.raises(ValueError, match="closed"):
        log.write(SubmitEvent(**JOB, submit_host=SCHEDD))


def test_invalid_events_are_refused():
    with pytest.raises(ValueError, match="time zone"):
        SubmitEvent(cluster=1, proc=0, time=datetime(2024, 5, 1), submit_host=SCHEDD)
    with pytest.raises(ValueError, match="exactly one"):
        JobTerminatedEvent(**JOB)
    with pytest.raises(ValueError, match="exactly one"):
        PostScriptTerminatedEvent(**JOB, dag_node_name="A", return_value=0, signal_number=9)


def test_queue_follower_brings_a_query_up_to_date_from_the_log(tmp_path):
    path = str(tmp_path / "d.dag.nodes.log")
    ids = {"time": T, "proc": 0}
    with UserLog(path) as log:
        log.write(SubmitEvent(cluster=12, submit_host=SCHEDD, log_notes="DAG Node: A", **ids),
                  SubmitEvent(cluster=13, submit_host=SCHEDD, log_notes="DAG Node: B", **ids))
    follower = QueueFollower(path, {"DAGManJobId": 11})
    mark = follower.mark()
    # what a query said after those events: 13.0 was submitted on hold, which no event tells
    follower.seed([{"ClusterId": 12, "ProcId": 0, "JobStatus": 1},
                   {"ClusterId": 13, "ProcId": 0, "JobStatus": 5, "HoldReason": "submitted on hold"}], mark)
    assert follower.read() is False and follower.jobs[(13, 0)]["JobStatus"] == 5
    version = follower.version
    with UserLog(path) as log:
        log.write(ExecuteEvent(cluster=12, execute_host=STARTD, **ids),
                  JobReleasedEvent(cluster=13, **ids),
                  SubmitEvent(cluster=14, submit_host=SCHEDD, log_notes="DAG Node: C", **ids),
                  JobHeldEvent(cluster=14, reason="too much memory", code=34, **ids),
                  JobTerminatedEvent(cluster=12, return_value=0, **ids))
    assert follower.read() is True and follower.version > version
    assert sorted(follower.jobs) == [(13, 0), (14, 0)], "12.0 left the queue"
    assert follower.jobs[(13, 0)]["JobStatus"] == 1
    assert {k: follower.jobs[(14, 0)][k] for k in ("JobStatus", "HoldReason", "DAGNodeName", "DAGManJobId")} == {
        "JobStatus": 5, "HoldReason": "too much memory", "DAGNodeName": "C", "DAGManJobId": 11}
    assert not follower.stale
    open(path, "w").close()  # a new run of DAGMan empties its nodes log: what was seeded is of another run
    assert follower.read() is False and follower.stale


def test_queue_follower_of_a_log_not_written_yet_or_not_here(tmp_path):
    waiting = QueueFollower(str(tmp_path / "new.log"))
    waiting.seed([], waiting.mark())
    assert waiting.read() is False and not waiting.stale, "no job has written to it yet"
    elsewhere = QueueFollower(str(tmp_path / "not-here" / "x.log"))
    elsewhere.seed([], elsewhere.mark())
    assert elsewhere.read() is False and elsewhere.stale, "its directory is not on this machine: ask the schedd"


def test_node_events_are_one_nodes_jobs_in_a_shared_log(tmp_path):
    """A submit file's ``log = job.log`` that every node of a DAG shares: node B's two tries,
    by the clusters DAGMan's notes name, after its DAGMan job's; A's job and an earlier run's left out."""
    path = tmp_path / "job.log"
    with UserLog(path) as log:
        log.write(SubmitEvent(cluster=3, proc=0, time=T, submit_host=SCHEDD, log_notes="DAG Node: B"))  # a run before
        log.write(SubmitEvent(cluster=11, proc=0, time=T, submit_host=SCHEDD, log_notes="DAG Node: A"))
        log.write(SubmitEvent(cluster=12, proc=0, time=T, submit_host=SCHEDD, log_notes="DAG Node: B"))
        log.write(JobTerminatedEvent(cluster=11, proc=0, time=T, return_value=0))
        log.write(JobTerminatedEvent(cluster=12, proc=0, time=T, return_value=3))
        log.write(SubmitEvent(cluster=13, proc=0, time=T, submit_host=SCHEDD, log_notes="DAG Node: B"))
        log.write(JobHeldEvent(cluster=13, proc=0, time=T, reason="held", code=1))
    text = node_events(str(path), "B", after=10)
    assert [line[:17] for line in text.splitlines() if line[:3].isdigit()] == [
        "000 (012.000.000)", "005 (012.000.000)", "000 (013.000.000)", "012 (013.000.000)"]
    assert node_events(str(path), "A", [11], after=10).count("...\n") == 2
    assert node_events(str(path), "C", after=10) == "" and node_events(str(tmp_path / "none.log"), "B") is None
