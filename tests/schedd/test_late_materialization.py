"""Late materialization (``max_materialize``, ``max_idle``) as the HTCondor 23.9.6 test pool does
it: a CLUSTER_SUBMIT (proc -1) first, each job's SUBMIT only when it is made, at most the limit
of the cluster's jobs in the queue at once (or idle at once), proc ids in order, and a
CLUSTER_REMOVE ("Materialized N jobs from 0 items. Complete") once the last job left; condor_rm
of the cluster stops it ("Incomplete"), condor_hold pauses it (FACTORY_PAUSED) and condor_release
resumes it (FACTORY_RESUMED), and a schedd killed mid-way makes the rest, none twice."""

from __future__ import annotations

import pytest
from htcondor2 import JobEventType as ET

from schedd_harness import EventReader, daemon_pid, process_gone, read_events, wait_for
from engine.crashpoint import ENV_VAR


def in_queue_at_once(events) -> int:
    """The most jobs of the log's cluster in the queue at one time, as its events tell."""
    present = most = 0
    for event in events:
        if event.type == ET.SUBMIT:
            present += 1
        elif event.type in (ET.JOB_TERMINATED, ET.JOB_ABORTED):
            present -= 1
        most = max(most, present)
    return most


def test_max_materialize_keeps_that_many_jobs_in_the_queue(schedd):
    schedd.write("mat.sub", """
        executable = /bin/true
        log = mat.log
        max_materialize = 2
        queue 5
        """)
    result = schedd.cli("job", "submit", "mat.sub")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines()[-1] == "5 job(s) submitted to cluster 1."
    log = EventReader(schedd.work / "mat.log")
    log.wait_type(ET.CLUSTER_REMOVE)
    events = log.seen
    assert (events[0].type, events[0].proc) == (ET.CLUSTER_SUBMIT, -1)
    assert [e.proc for e in events if e.type == ET.SUBMIT] == [0, 1, 2, 3, 4]
    assert in_queue_at_once(events) == 2
    text = (schedd.work / "mat.log").read_text()
    assert text.endswith("Cluster removed\n\tMaterialized 5 jobs from 0 items.\tComplete\n...\n")
    done = schedd.client.history("ClusterId == 1")
    assert sorted(ad["ProcId"] for ad in done) == [0, 1, 2, 3, 4]
    assert {ad["JobMaterializeLimit"] for ad in done} == {2}
    assert {ad["TotalSubmitProcs"] for ad in done} == {5}


def test_max_idle_with_max_materialize_keeps_both_limits(schedd):
    """The pool's cluster 7 (max_idle = 1, max_materialize = 3, queue 6): the next job is made when
    the idle one starts, until three are in the queue; then as they leave, in proc order."""
    schedd.write("both.sub", """
        executable = /bin/sleep
        arguments = 0.3
        log = both.log
        max_idle = 1
        max_materialize = 3
        queue 5
        """)
    assert schedd.cli("job", "submit", "both.sub").returncode == 0
    log = EventReader(schedd.work / "both.log")
    log.wait_type(ET.CLUSTER_REMOVE, timeout=30)
    # A started job's EXECUTE comes from its starter, after the next job's SUBMIT, on the pool too
    # (7.1's SUBMIT before 7.0's EXECUTE): the idle ones cannot be counted from the log.
    assert in_queue_at_once(log.seen) <= 3
    assert [e.proc for e in log.seen if e.type == ET.SUBMIT] == [0, 1, 2, 3, 4]
    assert (schedd.work / "both.log").read_text().endswith("\tMaterialized 5 jobs from 0 items.\tComplete\n...\n")


NO_SLOT = """
    executable = /bin/true
    log = idle.log
    requirements = Memory > 100000000
    max_idle = 1
    queue 3
    """  # no slot has that much memory: every job stays idle


def test_max_idle_makes_one_idle_job_and_condor_rm_of_the_cluster_ends_the_factory(schedd):
    schedd.write("idle.sub", NO_SLOT)
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.0")
    assert schedd.cli("q", "-af", "ProcId", "JobMaterializeMaxIdle").stdout == "0 1\n"
    batch = schedd.cli("q").stdout.splitlines()
    line = next(line for line in batch if "ID: 1" in line).split()
    # DONE _ RUN _ IDLE 1 TOTAL 3, as the pool's condor_q: the jobs not made yet are not done
    assert line[-6:] == ["_", "_", "1", "_", "3", "1.0"] or line[-5:] == ["_", "_", "1", "3", "1.0"], batch
    assert schedd.cli("rm", "1").returncode == 0
    log.wait_type(ET.CLUSTER_REMOVE)
    assert [(e.type, e.proc) for e in log.seen] == [(ET.CLUSTER_SUBMIT, -1), (ET.SUBMIT, 0), (ET.JOB_ABORTED, 0),
                                                    (ET.CLUSTER_REMOVE, -1)]
    assert (schedd.work / "idle.log").read_text().endswith("\tMaterialized 1 jobs from 0 items.\tIncomplete\n...\n")
    assert schedd.cli("q", "-af", "ProcId").stdout == ""


def test_condor_hold_of_the_cluster_pauses_the_factory_until_condor_release(schedd):
    """condor_hold of the cluster pauses the factory (FACTORY_PAUSED) and holds its jobs."""
    schedd.write("idle.sub", NO_SLOT)
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.0")
    factory = schedd.cli("q", "-factory").stdout.splitlines()
    assert factory[3] == " ID      OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST"
    # a cluster id named before it (none here) leaves it listed: -factory is no batch view, whose
    # clauses for a DAG's jobs would make the constraint an error on a cluster ad
    assert schedd.cli("q", "-factory", "99", "1").stdout.splitlines()[4:5] == factory[4:5]
    # max_idle alone: 23.9.6 limits the cluster to its own size (LIMIT 3); 1 present, idle, next 1
    assert factory[4].split()[0] == "1." and factory[4].split()[4:] == ["3", "1", "0", "1", "0", "1", "Norm"]
    assert schedd.cli("hold", "1").returncode == 0
    log.wait_type(ET.JOB_HELD, "1.0")
    assert schedd.cli("q", "-af", "ProcId", "JobStatus").stdout == "0 5\n"
    assert schedd.cli("q", "-factory").stdout.split()[-7:] == ["3", "1", "0", "0", "1", "1", "Held"]
    assert schedd.cli("release", "1").returncode == 0
    log.wait_type(ET.JOB_RELEASED, "1.0")
    assert schedd.cli("q", "-af", "ProcId", "JobStatus").stdout == "0 1\n"
    assert [(e.type, e.proc) for e in log.seen] == [(ET.CLUSTER_SUBMIT, -1), (ET.SUBMIT, 0), (ET.FACTORY_PAUSED, -1),
                                                    (ET.JOB_HELD, 0), (ET.FACTORY_RESUMED, -1), (ET.JOB_RELEASED, 0)]
    text = (schedd.work / "idle.log").read_text()
    assert "Job Materialization Paused\n\tvia condor_hold (by user " in text
    assert "\tPauseCode 1\n\tHoldCode 1\n...\n" in text


def test_a_held_job_counts_against_max_idle_as_on_the_pool(schedd):
    """The pool's clusters 590 and 591: hold = true with max_idle = 1 makes one job, held, and no
    more; a job put on hold by condor_hold keeps the next one from being made too."""
    schedd.write("held.sub", NO_SLOT.replace("max_idle", "hold = true\n    max_idle"))
    assert schedd.cli("job", "submit", "held.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.0")  # submitted on hold: no JOB_HELD event, as on the pool
    assert schedd.cli("q", "-af", "ProcId", "JobStatus").stdout == "0 5\n"
    assert schedd.cli("q", "-factory").stdout.split()[-7:] == ["3", "1", "0", "0", "1", "1", "Norm"]
    schedd.write("idle.sub", NO_SLOT)
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log.wait_type(ET.SUBMIT, "2.0")
    assert schedd.cli("hold", "2.0").returncode == 0
    log.wait_type(ET.JOB_HELD, "2.0")
    assert schedd.cli("q", "2", "-af", "ProcId", "JobStatus").stdout == "0 5\n"
    submitted = [(e.cluster, e.proc) for e in log.seen if e.type == ET.SUBMIT]
    assert submitted == [(1, 0), (2, 0)], "one job of each cluster made"


@pytest.mark.parametrize("point", ["submit:after-commit", "exit:before-commit", "exit:after-commit",
                                   "exit:after-log"])
def test_a_schedd_killed_mid_way_makes_the_rest_none_twice(schedd, monkeypatch, point):
    schedd.write("mark.sh", "#!/bin/sh\necho $1 >> marks\n", executable=True)
    monkeypatch.setenv(ENV_VAR, point)
    pid = schedd.client.ping()["pid"]
    monkeypatch.delenv(ENV_VAR)
    try:
        schedd.submit("""
            executable = mark.sh
            arguments = $(Process)
            log = crash.log
            max_materialize = 1
            queue 4
            """)
    except Exception:
        pass  # the daemon died before it answered
    wait_for(lambda: process_gone(pid), "the daemon to kill itself at its crash point")
    schedd.close_client()
    assert daemon_pid(schedd.state) != pid  # the next request starts a new daemon
    wait_for(lambda: len(schedd.client.history("ClusterId == 1")) == 4, "the four jobs to finish")
    assert sorted((schedd.work / "marks").read_text().split()) == ["0", "1", "2", "3"]
    events = read_events(schedd.work / "crash.log")
    assert [e.proc for e in events if e.type == ET.SUBMIT] == [0, 1, 2, 3]
    assert [e.type for e in events if e.proc == -1] == [ET.CLUSTER_SUBMIT, ET.CLUSTER_REMOVE]
    assert in_queue_at_once(events) == 1


def test_dry_run_prints_the_cluster_ad_alone(schedd):
    """23.9.6's condor_submit -dry-run of such a cluster: its cluster ad, without the limits (the
    schedd makes the jobs), a blank line, and the count of jobs it would make."""
    schedd.write("mat.sub", """
        executable = /bin/true
        max_materialize = 2
        queue 5
        """)
    result = schedd.cli("job", "submit", "-dry-run", "-", "mat.sub")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["Dry-Run job(s)", "ClusterId=1"] and lines[-2:] == ["", "5 job(s) dry-run to cluster 1."]
    assert not [line for line in lines if line.startswith(("ProcId=", "JobMaterialize")) or line == "."]


def test_qedit_of_the_cluster_reaches_the_jobs_made_later(schedd):
    """condor_qedit of the cluster edits its cluster ad: on the pool the jobs made afterwards
    have the new value (MyAttr 7 on 69.1 and 69.2 after ``condor_qedit 69 MyAttr 7``)."""
    schedd.write("idle.sub", NO_SLOT.replace("max_idle", "max_materialize"))
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.0")
    edited = schedd.cli("qedit", "1", "MyAttr", "7")
    assert edited.returncode == 0, edited.stderr
    assert schedd.cli("rm", "1.0").returncode == 0
    log.wait_type(ET.SUBMIT, "1.1")
    assert schedd.cli("q", "-af", "ProcId", "MyAttr").stdout == "1 7\n"


def test_a_paused_factory_with_no_job_queued_is_released_and_removed_as_on_the_pool(schedd):
    """The pool (cluster 268): condor_hold 268, condor_rm 268.0 leaves the paused factory alone
    in the queue; condor_release 268 says "All jobs in cluster 268 have been released" (exit 0)
    and 268.1 is made; condor_rm 268 then ends it."""
    schedd.write("idle.sub", NO_SLOT.replace("max_idle", "max_materialize"))
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.0")
    assert schedd.cli("hold", "1").returncode == 0
    assert schedd.cli("rm", "1.0").returncode == 0
    log.wait_type(ET.JOB_ABORTED, "1.0")
    assert schedd.cli("q", "-af", "ProcId").stdout == ""
    released = schedd.cli("release", "1")
    assert (released.returncode, released.stdout) == (0, "All jobs in cluster 1 have been released\n")
    log.wait_type(ET.SUBMIT, "1.1")
    removed = schedd.cli("rm", "1")
    assert (removed.returncode, removed.stdout) == (0, "All jobs in cluster 1 have been marked for removal\n")
    log.wait_type(ET.CLUSTER_REMOVE)
    assert [(e.type, e.proc) for e in log.seen if e.type != ET.JOB_HELD] == [
        (ET.CLUSTER_SUBMIT, -1), (ET.SUBMIT, 0), (ET.FACTORY_PAUSED, -1), (ET.JOB_ABORTED, 0),
        (ET.FACTORY_RESUMED, -1), (ET.SUBMIT, 1), (ET.JOB_ABORTED, 1), (ET.CLUSTER_REMOVE, -1)]


def test_a_limit_that_is_not_a_number_is_refused_in_one_line(schedd):
    schedd.write("bad.sub", """
        executable = /bin/true
        max_materialize = lots
        queue 3
        """)
    result = schedd.cli("job", "submit", "bad.sub")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("ERROR: bad.sub:2: max_materialize: expected a whole number")
    assert schedd.cli("q", "-af", "ProcId").stdout == ""


def test_a_constraint_on_job_status_acts_on_the_jobs_not_the_factory(schedd):
    """A pool's cluster ad has no JobStatus: ``hold -constraint 'ClusterId==1 && JobStatus==1'``
    holds the idle jobs and leaves the factory making jobs (23.9.6: mode Norm, no FACTORY_PAUSED);
    ``ClusterId==1`` alone matches the cluster ad and pauses it."""
    schedd.write("mat.sub", """
        executable = /bin/true
        log = mat.log
        requirements = false
        max_materialize = 2
        queue 6
        """)
    assert schedd.cli("job", "submit", "mat.sub").returncode == 0
    log = EventReader(schedd.work / "mat.log")
    log.wait_type(ET.SUBMIT, "1.1")
    assert schedd.cli("hold", "-constraint", "ClusterId==1 && JobStatus==1").returncode == 0
    assert schedd.cli("release", "-constraint", "ClusterId==1 && JobStatus==5").returncode == 0
    assert schedd.cli("qedit", "-constraint", "JobStatus==1", "Foo", "7").returncode == 0
    assert schedd.cli("rm", "-constraint", "JobStatus==1").returncode == 0
    log.wait_type(ET.SUBMIT, "1.3")
    assert schedd.cli("q", "-af", "ProcId", "Foo").stdout == "2 undefined\n3 undefined\n"
    assert schedd.cli("q", "-factory").stdout.split()[-1] == "Norm"
    assert ET.FACTORY_PAUSED not in [e.type for e in log.seen]
    assert schedd.cli("hold", "-constraint", "ClusterId==1").returncode == 0
    log.wait_type(ET.FACTORY_PAUSED)
    assert schedd.cli("q", "-factory").stdout.split()[-1] == "Held"


def test_qedit_of_a_paused_factory_with_no_job_queued_sets_it_for_the_jobs_made_later(schedd):
    """The pool: ``Set attribute "Foo" for 1 matching jobs.``, exit 0, and the next job has it."""
    schedd.write("idle.sub", NO_SLOT.replace("max_idle", "max_materialize"))
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.0")
    assert schedd.cli("hold", "1").returncode == 0
    assert schedd.cli("rm", "1.0").returncode == 0
    log.wait_type(ET.JOB_ABORTED, "1.0")
    edited = schedd.cli("qedit", "1", "Foo", "7")
    assert (edited.returncode, edited.stdout, edited.stderr) == (0, 'Set attribute "Foo" for 1 matching jobs.\n', "")
    assert schedd.cli("release", "1").returncode == 0
    log.wait_type(ET.SUBMIT, "1.1")
    assert schedd.cli("q", "-af", "ProcId", "Foo").stdout == "1 7\n"


def test_a_limit_edited_to_an_expression_is_evaluated(schedd):
    """The pool: ``condor_qedit 394 JobMaterializeLimit "1+2"`` makes three jobs present, and
    condor_q -factory shows LIMIT 3."""
    schedd.write("mat.sub", """
        executable = /bin/true
        log = mat.log
        requirements = false
        max_materialize = 1
        queue 6
        """)
    assert schedd.cli("job", "submit", "mat.sub").returncode == 0
    log = EventReader(schedd.work / "mat.log")
    log.wait_type(ET.SUBMIT, "1.0")
    assert schedd.cli("qedit", "1", "JobMaterializeLimit", "1+2").returncode == 0
    log.wait_type(ET.SUBMIT, "1.2")
    assert schedd.cli("q", "-af", "ProcId").stdout == "0\n1\n2\n"
    shown = schedd.cli("q", "-factory")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.split()[-7:] == ["3", "3", "0", "3", "0", "3", "Norm"]


def test_condor_rm_of_a_cluster_whose_jobs_were_all_made_is_incomplete(schedd):
    schedd.write("idle.sub", NO_SLOT.replace("max_idle = 1", "max_materialize = 3"))
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.2")
    assert schedd.cli("rm", "1").returncode == 0
    log.wait_type(ET.CLUSTER_REMOVE)
    assert (schedd.work / "idle.log").read_text().endswith("\tMaterialized 3 jobs from 0 items.\tIncomplete\n...\n")


def test_every_job_has_the_next_proc_id_of_its_cluster(schedd):
    """The pool (max_materialize = 3, queue 6, condor_rm 4.1): ``0 4 / 2 4 / 3 4``."""
    schedd.write("idle.sub", NO_SLOT.replace("max_idle = 1", "max_materialize = 3").replace("queue 3", "queue 6"))
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    log = EventReader(schedd.work / "idle.log")
    log.wait_type(ET.SUBMIT, "1.2")
    assert schedd.cli("rm", "1.1").returncode == 0
    log.wait_type(ET.SUBMIT, "1.3")
    assert schedd.cli("q", "1", "-af", "ProcId", "JobMaterializeNextProcId").stdout == "0 4\n2 4\n3 4\n"


def test_max_materialize_zero_limits_the_cluster_to_its_size(schedd):
    """The pool (cluster 554): ``max_materialize = 0`` with ``queue 3`` is a factory of LIMIT 3."""
    schedd.write("zero.sub", """
        executable = /bin/true
        log = zero.log
        requirements = false
        max_materialize = 0
        queue 3
        """)
    submitted = schedd.cli("job", "submit", "zero.sub")
    assert (submitted.returncode, submitted.stderr) == (0, "")
    log = EventReader(schedd.work / "zero.log")
    log.wait_type(ET.SUBMIT, "1.2")
    assert schedd.cli("q", "-factory", "-af", "JobMaterializeLimit").stdout == "3\n"
    assert (log.seen[0].type, log.seen[0].proc) == (ET.CLUSTER_SUBMIT, -1)


def test_a_limit_above_the_clusters_size_is_its_size_and_a_factory_that_made_all_stays_norm(schedd):
    """The pool's clusters 598 and 599 (max_materialize = 5 with two jobs, from a list and queue 2):
    JobMaterializeLimit 2 in the jobs' ads and condor_q -factory's LIMIT, MODE Norm with all made."""
    schedd.write("five.sub", """
        executable = /bin/true
        arguments = $(x)
        log = five.log
        requirements = false
        max_materialize = 5
        queue x from (
          a
          b
        )
        """)
    assert schedd.cli("job", "submit", "five.sub").returncode == 0
    EventReader(schedd.work / "five.log").wait_type(ET.SUBMIT, "1.1")
    assert schedd.cli("q", "-af", "ProcId", "JobMaterializeLimit").stdout == "0 2\n1 2\n"
    assert schedd.cli("q", "-factory").stdout.split()[-7:] == ["2", "2", "0", "2", "0", "2", "Norm"]


def test_q_factory_totals_counts_the_jobs_as_condor_q_does(schedd):
    """23.9.6's condor_q -factory 598 599 600 -totals on the pool prints the jobs' totals alone."""
    schedd.write("idle.sub", NO_SLOT)
    assert schedd.cli("job", "submit", "idle.sub").returncode == 0
    EventReader(schedd.work / "idle.log").wait_type(ET.SUBMIT, "1.0")
    lines = schedd.cli("q", "-factory", "1", "-totals").stdout.splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("Total")] == ["Total for query",
                                                                                  "Total for all users"]
    assert lines[3].startswith("Total for query: 1 jobs; 0 completed, 0 removed, 1 idle,"), lines


def test_two_queue_statements_with_max_materialize_are_refused(schedd):
    """23.9.6: ``ERROR: on Line 5 of submit file: Extra data found after queue statement``, exit 1."""
    schedd.write("two.sub", """
        executable = /bin/true
        max_materialize = 2
        queue 2
        queue 2
        """)
    result = schedd.cli("job", "submit", "two.sub")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "ERROR: two.sub:4: Extra data found after queue statement")
    assert schedd.cli("q", "-af", "ProcId").stdout == ""
