"""The embedded schedd end to end: a real daemon per test, real job processes, real user logs
read back with ``htcondor2.JobEventLog``; expectations are HTCondor's (issue 3).
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import classad2
import pytest
from htcondor2 import JobEventType as ET

from schedd_harness import (
    EventReader,
    process_alive,
    process_gone,
    read_events,
    types_for,
    wait_for,
)
from engine.schedd.api import JobAction, JobStatus, ScheddError
from engine.schedd.local.client import LocalScheddClient
from engine.schedd.local.pool import Site
from installed import CRABTUI

SHOW = """\
#!/bin/sh
for a in "$@"; do printf '[%s]\\n' "$a"; done
echo "GREETING=$GREETING"
echo "OTHER=$OTHER"
echo "MARK=$CRABTUI_TEST_MARK"
echo "PWD=$(pwd)"
echo "stderr says $GREETING" >&2
exit "${EXIT:-3}"
"""

# A job that starts a child and waits: hold and remove must kill both (the whole process group).
FAMILY = """\
#!/bin/sh
sleep 30 &
echo $! > child.$1.pid
wait
"""

MEMORY_HOG = """\
import time
block = b"x" * (100 << 20)   # ~100 MB, written, so resident
time.sleep(30)
"""

TWO_SITES_OF_THREE = """\
[[site]]
name = "T2_A"
slots = 1

[[site]]
name = "T2_B"
slots = 1

[[site]]
name = "T2_C"
slots = 2
"""

ONE_SLOT = """\
[[site]]
name = "T2_ONE"
slots = 1
"""


def daemons_of(state_path: str) -> list[int]:
    """Live daemon processes serving ``state_path``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "engine.schedd.local.daemon" in argv and state_path in argv and process_alive(int(entry)):
            pids.append(int(entry))
    return pids


def job_id(event) -> str:
    return f"{event.cluster}.{event.proc}"


# ------------------------------------------------------------------------------------ running jobs

class TestRunToCompletion:
    def test_new_syntax_arguments_environment_initialdir_and_files(self, schedd):
        script = schedd.write("show.sh", SHOW, executable=True)
        (schedd.work / "run").mkdir()
        result = schedd.submit(f"""
            executable = {script}
            arguments = "one 'two words' ""quoted"" 'it''s'"
            environment = "GREETING=hello OTHER='a b'"
            initialdir = run
            output = out.$(Cluster).$(Process)
            error = err.$(Cluster).$(Process)
            log = job.log
            queue
            """)
        assert (result.num_procs, result.first_proc) == (1, 0)
        job = f"{result.cluster}.0"
        ad = schedd.wait_history(job)
        run = schedd.work / "run"
        out = (run / f"out.{result.cluster}.0").read_text()
        assert out.splitlines() == ["[one]", "[two words]", '["quoted"]', "[it's]", "GREETING=hello",
                                    "OTHER=a b", "MARK=", f"PWD={run}"]
        assert (run / f"err.{result.cluster}.0").read_text() == "stderr says hello\n"
        assert schedd.job(job) is None, "a completed job leaves the queue"
        assert ad["JobStatus"] == JobStatus.COMPLETED
        assert ad["ExitCode"] == 3
        assert ad["ExitBySignal"] is False
        assert ad["NumJobStarts"] == 1
        assert isinstance(ad["RemoteWallClockTime"], float) and ad["RemoteWallClockTime"] > 0
        assert ad["CompletionDate"] >= ad["QDate"]
        assert ad["Iwd"] == str(run)
        assert ad["Cmd"] == str(script)

        events = read_events(run / "job.log")  # log is relative to initialdir
        assert [(e.type, job_id(e)) for e in events] == [
            (ET.SUBMIT, job), (ET.EXECUTE, job), (ET.JOB_TERMINATED, job)]
        terminated = events[-1]
        assert terminated["TerminatedNormally"] is True
        assert terminated["ReturnValue"] == 3

    def test_job_and_machine_ad_files_are_old_syntax_one_attribute_a_line(self, schedd):
        """As condor_starter writes .job.ad and .machine.ad: job scripts grep them."""
        script = schedd.write("ads.sh", """\
            #!/bin/sh
            grep '^ClusterId = ' "$_CONDOR_JOB_AD"
            grep '^Arguments = ' "$_CONDOR_JOB_AD"
            cp "$_CONDOR_JOB_AD" job.ad
            cp "$_CONDOR_MACHINE_AD" machine.ad
            """.replace("            ", ""), executable=True)
        result = schedd.submit(f"""
            executable = {script}
            arguments = "-c 'exit 3'"
            +Note = "say \\"hi\\""
            output = out.txt
            queue
            """)
        schedd.wait_history(f"{result.cluster}.0")
        assert (schedd.work / "out.txt").read_text() == f"ClusterId = {result.cluster}\nArguments = \"-c exit' '3\"\n"
        for name in ("job.ad", "machine.ad"):
            text = (schedd.work / name).read_text()
            assert all(re.match(r"[A-Za-z_][\w.]* = \S", line) for line in text.splitlines()), text
        job = classad2.parseOne((schedd.work / "job.ad").read_text())
        assert (job["ClusterId"], job["ProcId"], job["Cmd"]) == (result.cluster, 0, str(script))
        assert (job["Arguments"], job["Note"]) == ("-c exit' '3", 'say "hi"')  # as condor_submit 23.9.6 stores them
        machine = classad2.parseOne((schedd.work / "machine.ad").read_text())
        assert machine["MyType"] == "Machine" and machine["Cpus"] >= 1

    def test_old_syntax_arguments_and_environment_and_getenv(self, schedd, monkeypatch):
        monkeypatch.setenv("CRABTUI_TEST_MARK", "from-the-submitter")
        script = schedd.write("show.sh", SHOW, executable=True)
        result = schedd.submit(f"""
            executable = {script}
            arguments = alpha  beta gamma
            environment = GREETING=hi;OTHER=x y;EXIT=0
            getenv = true
            output = out.txt
            log = job.log
            queue
            """)
        ad = schedd.wait_history(f"{result.cluster}.0")
        assert ad["ExitCode"] == 0
        assert (schedd.work / "out.txt").read_text().splitlines()[:6] == [
            "[alpha]", "[beta]", "[gamma]", "GREETING=hi", "OTHER=x y", "MARK=from-the-submitter"]

    @pytest.mark.parametrize("queue, expected", [
        ("queue 3", ["{c}.0", "{c}.1", "{c}.2"]),
        ("queue item in (red, green)", ["{c}.0 red", "{c}.1 green"]),
        ("queue item matching *.txt", ["{c}.0 a.txt", "{c}.1 b.txt"]),
        ("queue item from (\n  red\n  green\n)", ["{c}.0 red", "{c}.1 green"]),
    ], ids=["count", "in", "matching", "from"])
    def test_queue_statements_expand_cluster_process_and_items(self, schedd, queue, expected):
        for name in ("a.txt", "b.txt", "c.dat"):
            (schedd.work / name).write_text("")
        item = " $(item)" if "item" in queue else ""
        result = schedd.submit(
            "executable = /bin/echo\n"
            f"arguments = $(Cluster).$(Process){item}\n"
            "output = out.$(Cluster).$(Process)\n"
            "log = job.log\n" + queue + "\n")
        c = result.cluster
        assert result.num_procs == len(expected)
        for proc, line in enumerate(expected):
            schedd.wait_history(f"{c}.{proc}")
            assert (schedd.work / f"out.{c}.{proc}").read_text() == line.format(c=c) + "\n"
        terminated = [e for e in read_events(schedd.work / "job.log") if e.type == ET.JOB_TERMINATED]
        assert sorted(job_id(e) for e in terminated) == [f"{c}.{p}" for p in range(len(expected))]

    def test_signal_termination(self, schedd):
        result = schedd.submit("""
            executable = /bin/sh
            arguments = "-c 'kill -9 $$'"
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        ad = schedd.wait_history(job)
        assert ad["JobStatus"] == JobStatus.COMPLETED
        assert ad["ExitBySignal"] is True
        assert ad["ExitSignal"] == signal.SIGKILL
        assert "ExitCode" not in ad
        (terminated,) = [e for e in read_events(schedd.work / "job.log") if e.type == ET.JOB_TERMINATED]
        assert job_id(terminated) == job
        assert terminated["TerminatedNormally"] is False
        assert terminated["TerminatedBySignal"] == signal.SIGKILL


# ------------------------------------------------------------------------------------ hold, release, remove

class TestHoldReleaseRemove:
    def test_an_output_or_input_that_cannot_be_opened_holds_with_htcondors_codes(self, schedd):
        """As 23.9.6 on the pool: UnableToOpenOutput (7) or UnableToOpenInput (8), the errno as
        the subcode, so that a periodic_release keyed on the code sees what HTCondor's would."""
        out = schedd.submit("executable = /bin/true\noutput = /nonexistent/dir/out\nlog = job.log\nqueue\n")
        ad = schedd.wait_status(f"{out.cluster}.0", JobStatus.HELD)
        assert (ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == (7, 2)
        assert ad["HoldReason"] == (f"Error from {ad['RemoteHost']}: Failed to open '/nonexistent/dir/out' as standard "
                                    "output: No such file or directory (errno 2)"), "the slot named, as HTCondor names it"
        in_ = schedd.submit("executable = /bin/true\ninput = missing.txt\nskip_filechecks = true\nqueue\n")
        ad = schedd.wait_status(f"{in_.cluster}.0", JobStatus.HELD)
        assert (ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == (8, 2)
        assert "as standard input: No such file or directory (errno 2)" in ad["HoldReason"]

    def test_hold_true_submits_held_and_release_runs_it(self, schedd):
        result = schedd.submit("""
            executable = /bin/true
            hold = true
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        ad = schedd.job(job)
        assert ad["JobStatus"] == JobStatus.HELD
        assert ad["HoldReasonCode"] == 15
        assert ad["HoldReason"] == "submitted on hold at user's request"
        assert ad["NumJobStarts"] == 0
        log = EventReader(schedd.work / "job.log")
        log.wait_type(ET.SUBMIT, job)
        assert types_for(log.seen, job) == [ET.SUBMIT], "HTCondor 23.9 logs no held event for hold = true"

        assert schedd.client.act(JobAction.Release, job).changed == 1
        log.wait_type(ET.JOB_TERMINATED, job)
        assert types_for(log.seen, job) == [ET.SUBMIT, ET.JOB_RELEASED, ET.EXECUTE, ET.JOB_TERMINATED]
        assert schedd.wait_history(job)["NumJobStarts"] == 1

    def test_hold_kills_a_running_job_and_keeps_it_release_runs_it_again(self, schedd):
        script = schedd.write("family.sh", FAMILY, executable=True)
        result = schedd.submit(f"""
            executable = {script}
            arguments = $(Cluster).$(Process)
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        log = EventReader(schedd.work / "job.log")
        ad = schedd.wait_running(job)
        pid = ad["JobPid"]
        child_file = schedd.work / f"child.{job}.pid"
        child = int(wait_for(lambda: child_file.exists() and child_file.read_text().strip(), "the job's child pid"))
        assert process_alive(pid) and process_alive(child)

        assert schedd.client.act(JobAction.Hold, job).changed == 1
        ad = schedd.wait_status(job, JobStatus.HELD)
        assert ad["HoldReasonCode"] == 1
        assert ad["HoldReason"] == f"via condor_hold (by user {getpass.getuser()})"
        held = log.wait_type(ET.JOB_HELD, job)
        assert held["HoldReasonCode"] == 1
        assert held["HoldReason"] == ad["HoldReason"]
        wait_for(lambda: process_gone(pid) and process_gone(child), "the held job's processes to be killed", 5)
        ad = schedd.job(job)
        assert ad is not None and ad["JobStatus"] == JobStatus.HELD, "a held job stays in the queue"
        assert ad["NumJobStarts"] == 1

        child_file.unlink()
        assert schedd.client.act(JobAction.Release, job).changed == 1
        log.wait_type(ET.JOB_RELEASED, job)
        log.wait_type(ET.EXECUTE, job)
        ad = schedd.wait_running(job)
        assert ad["NumJobStarts"] == 2
        assert ad["JobPid"] != pid
        assert "HoldReason" not in ad and "HoldReasonCode" not in ad
        # HTCondor logs the held event once the job has stopped, after JOB_EVICTED
        assert types_for(log.seen, job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_HELD, ET.JOB_RELEASED,
                                            ET.EXECUTE]

    def test_remove_kills_a_running_job_and_logs_an_abort(self, schedd):
        script = schedd.write("family.sh", FAMILY, executable=True)
        result = schedd.submit(f"""
            executable = {script}
            arguments = $(Cluster).$(Process)
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        pid = schedd.wait_running(job)["JobPid"]
        child_file = schedd.work / f"child.{job}.pid"
        child = int(wait_for(lambda: child_file.exists() and child_file.read_text().strip(), "the job's child pid"))

        assert schedd.client.act(JobAction.Remove, job, reason="not needed").changed == 1
        ad = schedd.wait_history(job)
        assert ad["JobStatus"] == JobStatus.REMOVED
        assert ad["RemoveReason"] == f"not needed (by user {getpass.getuser()})"
        assert schedd.job(job) is None
        wait_for(lambda: process_gone(pid) and process_gone(child), "the removed job's processes to be killed", 5)
        log = EventReader(schedd.work / "job.log")
        aborted = log.wait_type(ET.JOB_ABORTED, job)
        assert aborted["Reason"] == f"not needed (by user {getpass.getuser()})"
        assert types_for(log.all(), job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_ABORTED]

    def test_a_list_of_jobs_one_of_which_left_acts_on_the_others_and_names_it(self, schedd):
        """As the pool's schedd answers a list (condor_rm 5.0 5.1 5.2 with 5.1 gone removes 5.0 and
        5.2 and says "Job 5.1 not found"): what the UI's actions on marked jobs send."""
        cluster = schedd.submit("executable = /bin/sleep\narguments = 600\nhold = true\nqueue 3\n").cluster
        jobs = [f"{cluster}.{proc}" for proc in range(3)]
        schedd.client.act(JobAction.Remove, jobs[1])
        schedd.wait_history(jobs[1])
        released = schedd.client.act(JobAction.Release, jobs)
        assert (released.changed, released.not_found) == (2, 1)
        assert released.refused == (f"job {jobs[1]} is no longer in the queue: it is removed; "
                                    f"see 'crabtui history {cluster}'",)
        assert [schedd.job(job)["JobStatus"] != JobStatus.HELD for job in (jobs[0], jobs[2])] == [True, True]
        assert schedd.client.act(JobAction.Remove, jobs).changed == 2
        schedd.wait_history(jobs[0])
        schedd.wait_history(jobs[2])
        with pytest.raises(ScheddError, match=f"job {jobs[0]} is no longer in the queue.*nothing was changed"):
            schedd.client.act(JobAction.Hold, jobs)


# ------------------------------------------------------------------------------------ policy

class TestPolicy:
    def test_on_exit_hold(self, schedd):
        result = schedd.submit("""
            executable = /bin/sh
            arguments = "-c 'exit 3'"
            on_exit_hold = ExitCode == 3
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        ad = schedd.wait_status(job, JobStatus.HELD, timeout=5)
        assert ad["HoldReasonCode"] == 3
        assert ad["HoldReasonSubCode"] == 0
        assert ad["HoldReason"] == "The job attribute OnExitHold expression 'ExitCode == 3' evaluated to TRUE"
        assert ad["ExitCode"] == 3
        log = EventReader(schedd.work / "job.log")
        held = log.wait_type(ET.JOB_HELD, job)
        assert held["HoldReasonCode"] == 3
        assert types_for(log.seen, job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_HELD]

    def test_on_exit_remove_false_with_max_retries_reruns_until_retries_are_spent(self, schedd):
        result = schedd.submit("""
            executable = /bin/sh
            arguments = "-c 'exit 1'"
            on_exit_remove = false
            max_retries = 2
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        ad = schedd.wait_history(job)
        assert ad["JobStatus"] == JobStatus.COMPLETED
        assert ad["JobMaxRetries"] == 2
        assert ad["NumJobCompletions"] == 3  # first run + 2 retries: NumJobCompletions > JobMaxRetries
        assert ad["NumJobStarts"] == 3
        assert ad["ExitCode"] == 1
        types = types_for(read_events(schedd.work / "job.log"), job)
        assert types.count(ET.EXECUTE) == 3
        assert types.count(ET.JOB_TERMINATED) == 1
        assert types[-1] == ET.JOB_TERMINATED

    def test_requeue_is_logged_as_an_eviction_terminated_and_requeued(self, schedd):
        """HTCondor's shadow logs a job that exits and stays in the queue (OnExitRemove false) as
        JOB_EVICTED with terminate_and_requeued and the exit status (BaseShadow::logRequeueEvent)."""
        result = schedd.submit("""
            executable = /bin/sh
            arguments = "-c 'exit 1'"
            max_retries = 1
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        schedd.wait_history(job)
        events = [e for e in read_events(schedd.work / "job.log") if job_id(e) == job and e.type != ET.IMAGE_SIZE]
        assert [e.type for e in events] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.EXECUTE, ET.JOB_TERMINATED]
        evicted = events[2]
        assert evicted["TerminatedAndRequeued"] is True
        assert evicted["TerminatedNormally"] is True
        assert evicted["ReturnValue"] == 1
        # the expression as 23.9.6 quotes it (seen on the test pool), in HTCondor's syntax: =?=, not "is"
        reason = "The job attribute OnExitRemove expression 'NumJobCompletions > JobMaxRetries || ExitCode =?= 0' " \
                 "evaluated to FALSE"
        assert reason in (schedd.work / "job.log").read_text()

    def test_periodic_hold_when_memory_usage_exceeds_request_memory(self, schedd):
        hog = schedd.write("hog.py", MEMORY_HOG)
        result = schedd.submit(f"""
            executable = {sys.executable}
            arguments = {hog}
            request_memory = 20 MB
            periodic_hold = MemoryUsage > RequestMemory
            periodic_hold_reason = "Memory usage above request_memory"
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        pid = schedd.wait_running(job)["JobPid"]
        ad = schedd.wait_status(job, JobStatus.HELD, timeout=8)
        assert ad["RequestMemory"] == 20
        assert ad["MemoryUsage"] > 20
        assert ad["HoldReasonCode"] == 3
        wait_for(lambda: process_gone(pid), "the held job's process to be killed", 5)
        log = EventReader(schedd.work / "job.log")
        held = log.wait_type(ET.JOB_HELD, job)
        sizes = [e for e in log.seen if e.type == ET.IMAGE_SIZE and job_id(e) == job]
        assert sizes, "an image-size event is logged when the job's memory is measured"
        assert max(e["MemoryUsage"] for e in sizes) > 20
        assert held["HoldReasonCode"] == 3
        assert ET.JOB_EVICTED not in types_for(log.seen, job), "the shadow's hold, as on the test pool"
        # periodic_hold_reason is a ClassAd expression (condor_submit inserts it with AssignJobExpr);
        # the string it evaluates to is the HoldReason, without the quotes.
        assert ad["HoldReason"] == "Memory usage above request_memory"
        assert held["HoldReason"] == "Memory usage above request_memory"

    def test_periodic_remove(self, schedd):
        result = schedd.submit("""
            executable = /bin/sh
            arguments = "-c 'echo $$ > pid; exec sleep 30'"
            periodic_remove = JobStatus == 2 && time() - JobCurrentStartDate > 1
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        ad = schedd.wait_history(job)
        pid = int((schedd.work / "pid").read_text())  # written in the second the job ran
        assert ad["JobStatus"] == JobStatus.REMOVED
        assert ad["RemoveReason"] == (f"The job attribute PeriodicRemove expression '{ad['PeriodicRemove']}' "
                                      "evaluated to TRUE")
        assert "JobCurrentStartDate" in ad["RemoveReason"]
        wait_for(lambda: process_gone(pid), "the removed job's process to be killed", 5)
        log = EventReader(schedd.work / "job.log")
        log.wait_type(ET.JOB_ABORTED, job)
        # HTCondor's shadow carries out a running job's policy: JOB_ABORTED with no JOB_EVICTED
        # before it (23.9.6 on the test pool), unlike a condor_rm's
        assert types_for(log.seen, job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_ABORTED]

    def test_periodic_release_comes_before_remove_and_spares_user_holds(self, schedd):
        """HTCondor's order: a held job that both expressions match is released; a job the user
        held is never released by policy, so the remove takes it, with its PeriodicRemoveReason."""
        policy = """
            on_exit_hold = ExitCode =?= 1 && NumHolds == 0
            periodic_release = true
            periodic_remove = JobStatus == 5
            My.PeriodicRemoveReason = "Removed due to job being held"
            log = job.log
            queue
            """
        exits_1 = schedd.submit("executable = /bin/sh\narguments = \"-c 'exit 1'\"" + policy)
        sleeps = schedd.submit("executable = /bin/sleep\narguments = 30" + policy, name="sleep.sub")
        released, user_held = f"{exits_1.cluster}.0", f"{sleeps.cluster}.0"
        schedd.wait_running(user_held)
        assert schedd.client.act(JobAction.Hold, user_held).changed == 1
        assert schedd.wait_history(released)["JobStatus"] == JobStatus.COMPLETED
        removed = schedd.wait_history(user_held)
        assert (removed["JobStatus"], removed["RemoveReason"]) == (JobStatus.REMOVED, "Removed due to job being held")
        events = read_events(schedd.work / "job.log")
        assert types_for(events, released) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_HELD, ET.JOB_RELEASED, ET.EXECUTE,
                                               ET.JOB_TERMINATED]
        assert types_for(events, user_held) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_HELD, ET.JOB_ABORTED]
        # 23.9.6's words, in the released event and in ReleaseReason: the expression quoted
        said = "The job attribute PeriodicRelease expression 'true' evaluated to TRUE"
        assert [e["Reason"] for e in events if e.type == ET.JOB_RELEASED] == [said]
        assert schedd.wait_history(released)["ReleaseReason"] == said

    def test_a_policy_reason_quotes_a_list_on_one_line(self, schedd):
        """A periodic_release testing the hold code against a list, as CRAB writes it: the reason
        quotes it as HTCondor prints it, on the released event's one line."""
        result = schedd.submit("""
            executable = /bin/sh
            arguments = "-c 'exit 13'"
            on_exit_hold = ExitCode =?= 13 && NumHolds == 0
            periodic_release = member(HoldReasonSubCode, {28, 30, 13, 6})
            on_exit_hold_subcode = ExitCode
            log = job.log
            queue
            """)
        job = f"{result.cluster}.0"
        schedd.wait_history(job)
        released = [e for e in read_events(schedd.work / "job.log") if e.type == ET.JOB_RELEASED]
        assert [e["Reason"] for e in released] == \
            ["The job attribute PeriodicRelease expression 'member(HoldReasonSubCode,{ 28,30,13,6 })' evaluated to TRUE"]


# ------------------------------------------------------------------------------------ matchmaking

class TestMatchmaking:
    CRAB = """
        executable = /bin/true
        +DESIRED_Sites = "{sites}"
        requirements = stringListMember(TARGET.GLIDEIN_CMSSite, MY.DESIRED_Sites)
        log = job.log
        queue {count}
        """

    def test_jobs_run_only_on_their_desired_sites(self, schedd):
        schedd.write_pool(TWO_SITES_OF_THREE)
        result = schedd.submit(self.CRAB.format(sites="T2_A,T2_B", count=6))
        ads = [schedd.wait_history(job) for job in result.job_ids()]
        sites = [ad["MATCH_GLIDEIN_CMSSite"] for ad in ads]
        assert set(sites) == {"T2_A", "T2_B"}, sites  # the first two start at once, one on each site
        for ad in ads:
            assert ad["RemoteHost"] == f"slot1@{Site(ad['MATCH_GLIDEIN_CMSSite']).machine}"
            assert ad["ExitCode"] == 0
        executes = [e for e in read_events(schedd.work / "job.log") if e.type == ET.EXECUTE]
        assert len(executes) == 6
        assert all(Site("T2_C").machine not in e["SlotName"] for e in executes)

    def test_job_matching_no_site_stays_idle_and_analyze_names_the_clause(self, schedd):
        schedd.write_pool(TWO_SITES_OF_THREE)
        stuck = schedd.submit(self.CRAB.format(sites="T2_Z", count=1), name="stuck.sub")
        # Another job runs and completes afterwards, so the schedd has matched again since.
        other = schedd.submit(self.CRAB.format(sites="T2_C", count=1), name="other.sub")
        assert schedd.wait_history(f"{other.cluster}.0")["MATCH_GLIDEIN_CMSSite"] == "T2_C"
        job = f"{stuck.cluster}.0"
        ad = schedd.job(job)
        assert ad["JobStatus"] == JobStatus.IDLE
        assert ad["NumJobStarts"] == 0
        text = schedd.client.analyze(job)
        clause = [line for line in text.splitlines() if "stringListMember" in line and "GLIDEIN_CMSSite" in line
                  and "matches no slot" in line]
        assert clause, text
        assert "T2_Z" in text
        assert "matches none of the 4 slots" in text

    def test_request_memory_larger_than_every_slot_stays_idle(self, schedd):
        schedd.write_pool(TWO_SITES_OF_THREE)  # 2000 MB per slot
        big = schedd.submit("executable = /bin/true\nrequest_memory = 4 GB\nqueue\n", name="big.sub")
        small = schedd.submit("executable = /bin/true\nrequest_memory = 1 GB\nqueue\n", name="small.sub")
        schedd.wait_history(f"{small.cluster}.0")
        job = f"{big.cluster}.0"
        ad = schedd.job(job)
        assert ad["JobStatus"] == JobStatus.IDLE
        assert ad["RequestMemory"] == 4096
        text = schedd.client.analyze(job)
        (line,) = [line for line in text.splitlines() if line.strip().startswith("RequestMemory")]
        assert "0 of 4 slots have enough Memory" in line, text


# ------------------------------------------------------------------------------------ the daemon

class TestDaemon:
    def test_pool_start_status_stop(self, schedd):
        status = schedd.cli("pool", "status")
        assert status.returncode != 0
        assert "no schedd is running" in status.stdout + status.stderr

        start = schedd.cli("pool", "start")
        assert start.returncode == 0, start.stderr
        assert start.stdout.startswith("schedd started (pid ")
        pid = schedd.daemon_pid()
        assert pid is not None and f"(pid {pid})" in start.stdout
        mode = os.stat(schedd.state.socket).st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o600

        again = schedd.cli("pool", "start")
        assert again.returncode == 0
        assert "already running" in again.stdout and f"(pid {pid})" in again.stdout

        status = schedd.cli("pool", "status")
        assert status.returncode == 0
        assert status.stdout.startswith(f"schedd running (pid {pid})")

        stop = schedd.cli("pool", "stop")
        assert stop.returncode == 0
        assert stop.stdout.startswith("schedd stopped")
        wait_for(lambda: process_gone(pid), "the daemon to exit", 10)
        assert not os.path.exists(schedd.state.socket)
        assert schedd.cli("pool", "status").returncode != 0

    def test_a_pool_file_written_after_the_daemon_started_is_said_with_the_way_out(self, schedd):
        """The daemon reads pool.toml when it starts, as a startd reads its configuration; a file
        written later changes nothing until a restart, and pool status and start say so."""
        stopped = schedd.cli("pool", "status")
        assert f"start it with 'crabtui --state-dir {schedd.state.path} pool start'" in stopped.stderr
        assert schedd.cli("pool", "start").returncode == 0
        assert "note:" not in schedd.cli("pool", "status").stdout
        Path(schedd.state.pool_config).write_text(TWO_SITES_OF_THREE)
        for command in ("status", "start"):
            said = schedd.cli("pool", command)
            assert said.returncode == 0, said.stderr
            (note,) = [line for line in said.stdout.splitlines() if line.startswith("  note: ")]
            assert note == (f"  note: {schedd.state.pool_config} changed after the schedd daemon (pid "
                            f"{schedd.daemon_pid()}) read it, and it still runs the sites and slots it read then; "
                            f"'crabtui --state-dir {schedd.state.path} pool stop' (its running jobs run again) "
                            f"makes the next command start it with the file as it is now.")
        assert schedd.cli("pool", "stop").returncode == 0
        restarted = schedd.cli("pool", "start")
        assert "4 slots" in restarted.stdout and "note:" not in restarted.stdout

    def test_a_client_starts_the_daemon_on_demand(self, schedd):
        with pytest.raises(ScheddError, match="no schedd is running"):
            LocalScheddClient(schedd.state, autostart=False).query()
        assert schedd.client.query() == []
        info = schedd.client.ping()
        assert process_alive(info["pid"])
        assert info["state_dir"] == schedd.state.path
        assert LocalScheddClient(schedd.state, autostart=False).running()

    def test_a_daemon_whose_state_directory_is_removed_stops_and_evicts_its_jobs(self, schedd):
        """``rm -rf`` of the state directory leaves a daemon that no command can reach again: it
        stops within seconds and its running jobs are killed and logged as evicted, rather than
        running on with deleted files; the next command starts afresh in the new directory."""
        result = schedd.submit("""
            executable = /bin/sleep
            arguments = 300
            log = job.log
            queue 2
            """)
        jobs = [f"{result.cluster}.{proc}" for proc in range(2)]
        pids = [schedd.wait_running(job)["JobPid"] for job in jobs]
        daemon = schedd.daemon_pid()
        schedd.close_client()

        shutil.rmtree(schedd.state.path)
        wait_for(lambda: process_gone(daemon) and all(process_gone(pid) for pid in pids),
                 "the daemon and its jobs to stop", 30)
        events = read_events(schedd.work / "job.log")
        for job in jobs:
            assert types_for(events, job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED]
        os.mkdir(schedd.state.path, 0o700)
        assert schedd.client.query() == []
        assert schedd.daemon_pid() != daemon

    def test_two_daemons_cannot_serve_one_state_dir(self, schedd):
        pid = schedd.client.ping()["pid"]
        second = subprocess.run([sys.executable, "-m", "engine.schedd.local.daemon", "--state-dir", schedd.state.path],
                                capture_output=True, text=True, timeout=30)
        assert second.returncode != 0
        assert "already running" in second.stderr
        assert schedd.fresh_client().ping()["pid"] == pid

    def test_clients_starting_at_once_share_one_daemon(self, schedd):
        clients = [subprocess.Popen([CRABTUI, "--state-dir", schedd.state.path, "q", "-af", "ClusterId"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for _ in range(6)]
        results = [(c.wait(timeout=60), c.stderr.read()) for c in clients]
        for c in clients:
            c.stdout.close()
            c.stderr.close()
        assert results == [(0, "")] * 6
        assert len(daemons_of(schedd.state.path)) == 1


# ------------------------------------------------------------------------------------ universes

def test_scheduler_and_local_universe_jobs_run_without_a_slot(schedd):
    schedd.write_pool(ONE_SLOT)
    vanilla = schedd.submit("executable = /bin/sleep\narguments = 30\nqueue 2\n", name="vanilla.sub")
    busy, waiting = vanilla.job_ids()
    schedd.wait_running(busy)
    assert schedd.job(waiting)["JobStatus"] == JobStatus.IDLE
    for universe in ("scheduler", "local"):
        result = schedd.submit(f"universe = {universe}\nexecutable = /bin/sh\narguments = \"-c 'exit 7'\"\n"
                               "log = job.log\nqueue\n", name=f"{universe}.sub")
        ad = schedd.wait_history(f"{result.cluster}.0")
        assert ad["JobStatus"] == JobStatus.COMPLETED
        assert ad["ExitCode"] == 7
        assert ad["JobUniverse"] == {"scheduler": 7, "local": 12}[universe]
    assert schedd.job(busy)["JobStatus"] == JobStatus.RUNNING, "the slot stayed with its vanilla job"
    assert schedd.job(waiting)["JobStatus"] == JobStatus.IDLE


def test_scheduler_universe_jobs_get_no_image_size_events(schedd):
    """HTCondor runs scheduler-universe jobs (DAGMan) without a starter, so it never measures
    them: real DAGMan's jobstate log shows no IMAGE_SIZE line for a SUBDAG node, and neither may ours."""
    hog = schedd.write("hog.py", MEMORY_HOG)
    dagman_like = schedd.submit(f"universe = scheduler\nexecutable = {sys.executable}\narguments = {hog}\n"
                                "log = job.log\nqueue\n", name="scheduler.sub")
    scheduler_job = f"{dagman_like.cluster}.0"
    schedd.wait_running(scheduler_job)
    vanilla = schedd.submit(f"executable = {sys.executable}\narguments = {hog}\nlog = job.log\nqueue\n",
                            name="vanilla.sub")
    log = EventReader(schedd.work / "job.log")
    log.wait_type(ET.IMAGE_SIZE, f"{vanilla.cluster}.0", timeout=15)
    assert [e for e in log.seen if e.type == ET.IMAGE_SIZE and job_id(e) == scheduler_job] == []
    assert "ImageSize" not in schedd.job(scheduler_job) or schedd.job(scheduler_job)["ImageSize"] == 0


def test_a_running_job_held_or_removed_logs_job_evicted_first_and_the_nodes_log_follows_its_mask(schedd):
    """As HTCondor 23.9.6 logs them: once a running job held or removed has stopped, JOB_EVICTED (a
    usage table for a job that had a slot, none for a scheduler-universe one), then JOB_HELD or
    JOB_ABORTED.  DAGMan's nodes log gets only the events in the job's DAGManNodesMask (no
    IMAGE_SIZE); the job's own log gets them all."""
    from engine.dagman.ready_queue import NODES_LOG_EVENTS

    hog = schedd.write("hog.py", MEMORY_HOG)
    nodes_log = schedd.work / "dag.nodes.log"
    node = (f'My.DAGManNodesLog = "{nodes_log}"\nMy.DAGManNodesMask = "{NODES_LOG_EVENTS}"\n'
            "log = job.log\nqueue\n")
    vanilla = f"executable = {sys.executable}\narguments = {hog}\n" + node
    held = f"{schedd.submit(vanilla).cluster}.0"
    removed = f"{schedd.submit(vanilla, name='rm.sub').cluster}.0"
    scheduler = "universe = scheduler\nexecutable = /bin/sleep\narguments = 30\n" + node
    scheduler = f"{schedd.submit(scheduler, name='s.sub').cluster}.0"
    log = EventReader(schedd.work / "job.log")
    log.wait_type(ET.IMAGE_SIZE, held, timeout=15)
    log.wait_type(ET.IMAGE_SIZE, removed, timeout=15)
    schedd.wait_running(scheduler)
    assert schedd.client.act(JobAction.Hold, held).changed == 1
    assert schedd.client.act(JobAction.Remove, removed).changed == 1
    assert schedd.client.act(JobAction.Hold, scheduler).changed == 1
    ends = {(held, ET.JOB_HELD), (removed, ET.JOB_ABORTED), (scheduler, ET.JOB_HELD)}
    wait_for(lambda: ends <= {(job_id(e), e.type) for e in log.all()}, "the three jobs' last events")

    everything, nodes = log.all(), read_events(nodes_log)
    for job, last in ((held, ET.JOB_HELD), (removed, ET.JOB_ABORTED), (scheduler, ET.JOB_HELD)):
        assert types_for(everything, job) == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, last]
        assert [e.type for e in nodes if job_id(e) == job] == [ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, last]
    assert [e for e in everything if e.type == ET.IMAGE_SIZE], "the job's own log gets every event"
    assert not [e for e in nodes if e.type == ET.IMAGE_SIZE], "IMAGE_SIZE is not in DAGManNodesMask"
    blocks = {block.split(" ", 2)[1]: block for block in (schedd.work / "job.log").read_text().split("...\n")
              if block.startswith("004 ")}  # JOB_EVICTED's text, by "(cluster.proc.subproc)"

    def evicted(job: str) -> str:
        cluster, proc = job.split(".")
        return blocks[f"({int(cluster):03d}.{int(proc):03d}.000)"]

    assert "Job was evicted.\n\t(0) CPU times\n\t\tUsr " in evicted(held)
    assert "\tPartitionable Resources :" in evicted(held) and "\tPartitionable Resources :" in evicted(removed)
    assert "Partitionable" not in evicted(scheduler), "a scheduler-universe job has no slot to report"


STUBBORN = "#!/bin/sh\ntrap '' TERM\nwhile true; do sleep 0.2; done\n"  # outlives the kill signal: SIGKILL ends it
STUBBORN_LOG = "\nlog = job.log\nqueue\n"


def test_a_job_released_before_its_process_stopped_logs_its_hold_first_and_waits_for_it(schedd):
    script = schedd.write("stubborn.sh", STUBBORN, executable=True)
    job = f"{schedd.submit(f'executable = {script}' + STUBBORN_LOG).cluster}.0"
    old_pid = schedd.wait_running(job)["JobPid"]
    assert schedd.client.act(JobAction.Hold, job).changed == 1
    assert schedd.client.act(JobAction.Release, job).changed == 1
    assert process_alive(old_pid), "it ignores SIGTERM: SIGKILL comes after the vacate time"
    ad = schedd.wait_status(job, JobStatus.RUNNING, check=lambda ad: ad.get("NumJobStarts") == 2 and "JobPid" in ad)
    schedd.pids.append(ad["JobPid"])
    assert process_gone(old_pid), "it ran again only once its last run's process was gone"
    assert types_for(read_events(schedd.work / "job.log"), job) == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_HELD, ET.JOB_RELEASED, ET.EXECUTE]


def test_a_job_held_while_running_keeps_its_events_when_the_schedd_dies_before_it_stopped(schedd, monkeypatch):
    # a vacate time the restarted daemon's first answer comes well within, however loaded the machine
    monkeypatch.setenv("CRABTUI_JOB_MAX_VACATE_TIME", "10")
    script = schedd.write("stubborn.sh", STUBBORN, executable=True)
    job = f"{schedd.submit(f'executable = {script}' + STUBBORN_LOG).cluster}.0"
    old_pid = schedd.wait_running(job)["JobPid"]
    daemon = schedd.client.ping()["pid"]
    assert schedd.client.act(JobAction.Hold, job).changed == 1
    os.kill(daemon, signal.SIGKILL)  # before the vacate time's SIGKILL of the job
    wait_for(lambda: process_gone(daemon), "the killed daemon to be gone", 5)
    ad = schedd.fresh_client().query(f"ClusterId == {job.split('.')[0]}")[0]
    assert ad["JobStatus"] == JobStatus.HELD and ad["JobPid"] == old_pid, "held, its process not gone yet"
    # The starter's SIGKILL after the vacate time outlives the schedd that asked for it.
    schedd.wait_status(job, JobStatus.HELD, check=lambda ad: "JobPid" not in ad)
    assert process_gone(old_pid)
    assert types_for(read_events(schedd.work / "job.log"), job) == [
        ET.SUBMIT, ET.EXECUTE, ET.JOB_EVICTED, ET.JOB_HELD]


def test_a_tables_values_keep_their_types_and_an_edit_shows_in_the_next_answer(schedd):
    """query_values answers as columns of runs and keeps each job's row until the job changes:
    1, 1.0 and true side by side stay an integer, a real and a boolean, and condor_qedit's value
    is in the next answer of the same query."""
    scores = ["1"] * 4 + ["1.0"] * 4 + ["true"] * 4 + ['"1"'] * 4  # runs of equal values of four types
    text = ("executable = /bin/true\nrequirements = false\nMy.Score = $(score)\nqueue score from (\n"
            + "".join(f"{score}\n" for score in scores) + ")\n")
    cluster = schedd.client.submit(text, cwd=str(schedd.work)).cluster
    first = schedd.client.query_values(f"ClusterId == {cluster}", ["ProcId", "Score", "HoldReason"])
    assert [(type(j["Score"]), j["Score"]) for j in first] == \
        [(int, 1)] * 4 + [(float, 1.0)] * 4 + [(bool, True)] * 4 + [(str, "1")] * 4
    assert all("HoldReason" not in j for j in first), "an attribute a job lacks is absent, not None"
    schedd.client.edit(f"{cluster}.1", "Score", "2")
    again = schedd.client.query_values(f"ClusterId == {cluster}", ["ProcId", "Score", "HoldReason"])
    assert [j["Score"] for j in again][:5] == [1, 2, 1, 1, 1.0]
