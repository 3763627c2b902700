"""The Why column of an idle job: -better-analyze's verdict in a few words, read from the text the
embedded pool's matchmaking writes for it."""

from __future__ import annotations

import classad2

from crabtui.snapshots import why_idle
from engine.schedd.local.pool import Pool, Site, analyze


def idle_job(cluster: int = 12) -> classad2.ClassAd:
    ad = classad2.ClassAd({"ClusterId": cluster, "ProcId": 0, "JobStatus": 1, "RequestCpus": 1,
                           "RequestMemory": 100, "RequestDisk": 1000})
    ad["Requirements"] = classad2.ExprTree("true")
    return ad


def test_a_job_waiting_for_a_busy_slot_says_so():
    """The verdict's own ': it waits for one' was taken for condor_q's '12.0: ' prefix, so the
    column said only 'it waits for one.'"""
    pool = Pool([Site("T2_CH_CERN", slots=2)])
    for slot, holder in zip(pool.slots, ("1.0", "2.0")):
        pool.claim(slot, holder)
    text = analyze(idle_job(), pool)
    assert why_idle(text) == "idle: 2 of the 2 slots of the pool, all busy; waits for one"
    assert why_idle("12.0: " + text) == why_idle(text)  # as condor_q -better-analyze puts the job first


def test_a_job_that_can_run_now_says_where():
    text = analyze(idle_job(), Pool([Site("T2_CH_CERN", slots=2)]))
    assert why_idle(text) == "idle: can run on 2 of the 2 slots of the pool"
