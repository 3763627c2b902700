"""engine.crab.ap.retry_policy: CRAB's exit-code table, never-resubmit guards, counters and state file."""

from __future__ import annotations

import json
import os
import re

import pytest

from engine.crab.ap import retry_policy as rp
from engine.crab.ap.retry_policy import (
    EXIT_RETRY_POLICY, Attempt, JobState, Limits, Params, RetryStateError, begin_attempt,
    check_abort_dag, choose_sites, cooloff_remaining, decide, load_state, policy_for, record, resubmit,
    save_state, state_path,
)

NOW = 1_700_000_000.0
HOUR = 3600.0
TASK = Params(memory_mb=2000, runtime_min=1250)
LIMITS = Limits()


def opened(state: JobState | None = None, dag_retry: int = 0, params: Params = TASK) -> JobState:
    return begin_attempt(state or JobState("7"), dag_retry=dag_retry, task_params=params)


def ad(site: str = "T2_CH_CERN", ran: float = HOUR, end: float = NOW, **extra) -> dict:
    return {"JOBGLIDEIN_CMSSite": site, "JobCurrentStartDate": end - ran, "CompletionDate": end, **extra}


def fjr(code: int, **extra) -> dict:
    return {"exitCode": code, **extra}


def run(state: JobState, code: int, limits: Limits = LIMITS, report: dict | None = None, now: float = NOW,
        **ad_args) -> tuple[rp.Decision, JobState]:
    """Decide the open attempt of ``state`` as failed with ``code`` and record it."""
    decision = decide(code & 0xFF, fjr(code) if report is None else report, state, limits, now,
                      job_ad=ad(end=now, **ad_args))
    return decision, record(state, decision)


# --- the table --------------------------------------------------------------------------------

def test_success_closes_the_attempt():
    decision, state = run(opened(), 0)
    assert (decision.action, decision.status, decision.exit_code) == ("ok", 0, 0)
    assert decision.next is None and decision.cooloff_until is None
    assert state.crab_retry == 1 and state.open_attempt is None
    assert state.attempts[0].action == "ok" and state.attempts[0].site == "T2_CH_CERN"


@pytest.mark.parametrize("code", sorted(rp._TABLE))
def test_every_table_code_is_recoverable_after_900_s(code):
    decision, _ = run(opened(), code)
    policy = rp._TABLE[code]
    assert (decision.action, decision.status, decision.exit_code) == ("retry", 1, code)
    assert decision.reason == policy.msg
    assert decision.delay == 900 and decision.cooloff_until == NOW + 900


@pytest.mark.parametrize("code", sorted(rp._TABLE))
def test_short_alias_of_every_code(code):
    short = code & 0xFF
    assert policy_for(short) is policy_for(code)
    decision, _ = run(opened(), short)
    assert (decision.action, decision.exit_code, decision.reason) == ("retry", short, rp._TABLE[code].msg)


def test_aliases_as_listed_in_crab_spec():
    expected = {50513: 81, 50115: 195, 10034: 50, 10040: 56, 60403: 243, 60307: 147, 60311: 151,
                8028: 92, 8021: 85, 8020: 84, 8022: 86, 8001: 65}
    for code, short in expected.items():
        assert EXIT_RETRY_POLICY[short] is EXIT_RETRY_POLICY[code]
    assert set(EXIT_RETRY_POLICY) == set(rp._TABLE) | set(expected.values())


@pytest.mark.parametrize("code", [50115, 195])
def test_memory_boost_and_cap(code):
    assert rp._TABLE[50115].memory_factor == 1.3
    memories = []
    state = opened()
    for _ in range(6):
        decision, state = run(state, code)
        memories.append(decision.next.memory_mb)
        state = opened(state, dag_retry=len(memories))
        assert state.open_attempt.request_memory_mb == memories[-1]
    assert memories == [2600, 3380, 4394, 5712, 7425, 7500]
    assert decision.next.runtime_min == 1250 and decision.next.avoid_sites == ()


def test_memory_boost_never_lowers_a_request():
    decision, _ = run(opened(params=Params(10000, 1250)), 50115)
    assert decision.next.memory_mb == 10000


@pytest.mark.parametrize("code", [60403, 243])
def test_runtime_boost_and_cap(code):
    decision, state = run(opened(), code)
    assert (decision.next.memory_mb, decision.next.runtime_min) == (2000, 1625)
    decision, _ = run(opened(state, dag_retry=1), code)
    assert decision.next.runtime_min == 2112
    decision, _ = run(opened(params=Params(2000, 2500)), code)
    assert decision.next.runtime_min == 47 * 60
    decision, _ = run(opened(params=Params(2000, 3000)), code)
    assert decision.next.runtime_min == 3000


@pytest.mark.parametrize("code", [8020, 8021, 84, 85])
def test_site_change_avoids_the_failed_site(code):
    decision, state = run(opened(), code, site="T2_IT_Pisa")
    assert decision.next == Params(2000, 1250, ("T2_IT_Pisa",))
    state = opened(state, dag_retry=1)
    assert state.open_attempt.avoid_sites == ("T2_IT_Pisa",)
    assert choose_sites(["T2_IT_Pisa", "T2_CH_CERN", "T1_US_FNAL"], state.open_attempt.avoid_sites) == \
        ["T1_US_FNAL", "T2_CH_CERN"]
    assert choose_sites(["T2_IT_Pisa"], ["T2_IT_Pisa"]) == ["T2_IT_Pisa"]  # the only one left
    decision, _ = run(state, 1, site="T2_CH_CERN")  # a code without change_site avoids nothing
    assert decision.next.avoid_sites == ()


def test_executed_site_of_the_report_wins_over_the_job_ad():
    decision, _ = run(opened(), 8021, report=fjr(8021, executed_site="T2_DE_DESY"), site="T2_IT_Pisa")
    assert decision.attempt.site == "T2_DE_DESY" and decision.next.avoid_sites == ("T2_DE_DESY",)


@pytest.mark.parametrize("code", [8004, 70000, 50664, 2])
def test_unknown_code_is_fatal(code):
    decision, state = run(opened(), code, report=fjr(code, exitMsg="An exception\nof category X"))
    assert (decision.action, decision.status, decision.exit_code) == ("fatal", 2, code)
    assert decision.reason == f"Job wrapper finished with exit code {code}.\nExit message:\n  An exception\n  of category X"
    assert decision.next is None and state.cooloff_until is None and state.attempts[0].action == "fatal"


def test_wrapper_failure_after_a_good_payload_is_recoverable():
    decision = decide(60, fjr(0), opened(), LIMITS, NOW)
    assert (decision.action, decision.exit_code, decision.delay) == ("retry", 60, 900)
    assert decision.reason.endswith("non-zero status 60 (stageout failure)?")
    assert decide(-1004, fjr(0), opened(), LIMITS, NOW).action == "ok"  # PRE skipped a finished job


# --- the guards -------------------------------------------------------------------------------

@pytest.mark.parametrize("report", [None, {}, {"exitMsg": "no code"}, {"exitCode": "x"}, {"exitCode": True}, []])
def test_no_usable_report_is_fatal(report):
    decision = decide(85, report, opened(), LIMITS, NOW)
    assert (decision.action, decision.exit_code) == ("fatal", 85)
    assert decision.reason == "Job did not produce a usable framework job report."


def test_last_attempt_over_24_h_is_never_retried():
    assert run(opened(), 8021, ran=23.9 * HOUR)[0].action == "retry"
    decision, _ = run(opened(), 8021, ran=24.5 * HOUR)
    assert (decision.action, decision.exit_code) == ("fatal", 50664)
    assert "Not retrying a long running job (job ran for 24.5 hours)" in decision.reason
    # a job that asked for 30 h may use them
    assert run(opened(params=Params(2000, 30 * 60)), 8021, ran=24.5 * HOUR)[0].action == "retry"


def test_cumulative_wall_time_over_36_h_in_the_epoch_is_never_retried():
    state = opened()
    for attempt in range(2):
        decision, state = run(state, 8021, ran=13 * HOUR)
        assert decision.action == "retry"
        state = opened(state, dag_retry=attempt + 1)
    decision, state = run(state, 8021, ran=11 * HOUR)
    assert (decision.action, decision.exit_code) == ("fatal", 50664)
    assert "integrated time (across all retries) is 37.0 hours" in decision.reason
    # a resubmit starts a new budget
    state = opened(resubmit(state, 1), dag_retry=3)
    assert run(state, 8021, ran=11 * HOUR)[0].action == "retry"


def test_memory_over_2_gb_is_never_retried():
    peak = {"steps": {"cmsRun": {"performance": {"memory": {"PeakValueRss": "2100.5"}}}}}
    decision, _ = run(opened(), 8021, report=fjr(8021, **peak))
    assert (decision.action, decision.exit_code) == ("fatal", 50660)
    assert decision.reason.startswith("FileReadError") and "excessive memory use (2100 MB)" in decision.reason
    assert run(opened(), 8021, report=fjr(8021, steps={}))[0].action == "retry"
    # the job ad's ResidentSetSize (KB) when the report has no peak
    assert run(opened(), 8021, ResidentSetSize=2200 * 1024)[0].action == "fatal"
    assert run(opened(), 8021, ResidentSetSize=2000 * 1024)[0].action == "retry"
    # a boosted request raises the limit
    assert run(opened(params=Params(2600, 1250)), 8021, report=fjr(8021, **peak))[0].action == "retry"


def test_retry_limit_counts_executions_per_epoch():
    limits = Limits(max_retries=3)
    state = opened()
    actions = []
    for dag_retry in range(1, 4):
        decision, state = run(state, 8021, limits)
        actions.append((state.attempts[-1].rrn, decision.action))
        if decision.action == "retry":
            state = opened(state, dag_retry=dag_retry)
    assert actions == [(1, "retry"), (2, "retry"), (3, "fatal")]
    assert decision.reason.endswith("This is job retry number 3. The maximum allowed number of retries is 3. The "
                                    "retry handler indicated this was a recoverable error, but the maximum number "
                                    "of retries was already hit. DAGMan will not retry.")
    assert decision.exit_code == 8021 and decision.status == 2
    assert run(opened(), 8021, Limits(max_retries=0))[0].action == "fatal"  # Automatic's processing stage


@pytest.mark.parametrize("reason, code", [("Removed due to memory use", 50660),
                                          ("Removed due to wall clock limit", 50664),
                                          ("Removed due to disk usage", 50662),
                                          ("Removed due to idle time limit", 50665)])
def test_periodic_removals_are_fatal(reason, code):
    decision = decide(-1002, None, opened(), LIMITS, NOW, job_ad=ad(RemoveReason=reason))
    assert (decision.action, decision.exit_code) == ("fatal", code)


def test_a_removal_for_memory_says_what_the_job_used_against_its_request():
    """RetryJob's check_memory_report: the job's ResidentSetSize (KB) // 1000 against its RequestMemory."""
    decision = decide(-1002, None, opened(), LIMITS, NOW,
                      job_ad=ad(RemoveReason="Removed due to memory use", ResidentSetSize=2_612_345))
    assert decision.reason == ("Job killed by HTCondor due to excessive memory use (2612 used vs. 2000 requested) "
                               "Will not retry it.")


def test_held_and_removed_job_is_retried_without_a_report():
    job_ad = ad(RemoveReason="Removed due to job being held", HoldReason="Transfer input files failure")
    decision = decide(-1002, None, opened(), LIMITS, NOW, job_ad=job_ad)
    assert (decision.action, decision.delay) == ("retry", 900)
    assert decision.reason == "Will retry held job; last hold reason: Transfer input files failure"


# --- counters, epochs, interrupted PreJob -----------------------------------------------------

def test_counters_across_retries_and_a_resubmit_epoch():
    limits = Limits(max_retries=2)
    state = opened()
    decision, state = run(state, 8021, limits)
    state = opened(state, dag_retry=1)
    decision, state = run(state, 8021, limits)
    assert decision.action == "fatal"
    assert (state.dag_retry, state.crab_retry, state.rrn, state.epoch) == (1, 2, 2, 0)

    new = Params(3000, 1500)
    state = resubmit(state, 1, new)
    assert (state.crab_retry, state.rrn, state.epoch, state.next) == (2, 0, 1, new)
    assert resubmit(state, 1, Params(9, 9)) is state  # AdjustSites ran again: nothing changes
    state = opened(state, dag_retry=2)
    attempt = state.open_attempt
    assert (attempt.crab_retry, attempt.rrn, attempt.epoch, attempt.params) == (2, 1, 1, new)
    decision, state = run(state, 8021, limits)
    assert decision.action == "retry"  # a fresh budget
    state = opened(state, dag_retry=3)
    decision, state = run(state, 8021, limits)
    assert decision.action == "fatal"
    assert [(a.crab_retry, a.dag_retry, a.rrn, a.epoch, a.action) for a in state.attempts] == [
        (0, 0, 1, 0, "retry"), (1, 1, 2, 0, "fatal"), (2, 2, 1, 1, "retry"), (3, 3, 2, 1, "fatal")]
    assert (state.crab_retry, state.rrn, state.epoch) == (4, 2, 1)


def test_resubmit_without_parameters_takes_the_task_values_and_clears_boosts():
    decision, state = run(opened(), 50115, Limits(max_retries=1))
    assert decision.action == "fatal"
    state = opened(resubmit(state, 1), dag_retry=1, params=Params(2500, 1250))
    assert state.open_attempt.params == Params(2500, 1250)


def test_resubmit_errors():
    state = resubmit(run(opened(), 8004)[1], 2)
    with pytest.raises(RetryStateError, match="epoch 1 is older than the job's epoch 2"):
        resubmit(state, 1)
    with pytest.raises(RetryStateError, match="while attempt 1 is running"):
        resubmit(opened(state), 3)


def test_interrupted_prejob_reuses_its_rrn():
    state = opened()
    again = begin_attempt(state, dag_retry=1, task_params=Params(1, 1))
    assert len(again.attempts) == 1 and again.rrn == 1 and again.open_attempt.rrn == 1
    assert again.open_attempt.dag_retry == 1 and again.open_attempt.params == TASK


def test_postjob_without_an_open_attempt_is_fatal():
    state = run(opened(), 0)[1]
    decision = decide(0, fjr(0), state, LIMITS, NOW)
    assert (decision.action, decision.attempt) == ("fatal", None) and "no open attempt" in decision.reason
    assert record(state, decision) is state
    stale = decide(85, fjr(8021), opened(), LIMITS, NOW)
    with pytest.raises(RetryStateError, match="attempt 0, but the open attempt is 1"):
        record(opened(state), stale)


# --- cooloff, time scale, abort ---------------------------------------------------------------

def test_cooloff_deadline_and_prejob_step():
    decision, state = run(opened(), 8021)
    assert state.cooloff_until == NOW + 900
    assert cooloff_remaining(state, NOW + 600) == 300 and cooloff_remaining(state, NOW + 901) == 0
    assert opened(state, dag_retry=1).cooloff_until is None
    # PreJob's own cooloff (retry k waits k minutes) when it is longer than the table's delay
    decision = decide(85, fjr(8021), opened(dag_retry=19), LIMITS, NOW)
    assert decision.delay == 20 * 60


def test_time_scale_scales_delays_and_limits():
    fast = Limits(time_scale=60)
    decision, state = run(opened(), 8021, fast, ran=60)
    assert decision.delay == 15 and state.cooloff_until == NOW + 15
    assert run(opened(), 8021, fast, ran=23 * 60)[0].action == "retry"  # 23 simulated hours
    decision = run(opened(), 8021, fast, ran=25 * 60)[0]
    assert decision.exit_code == 50664 and "ran for 25.0 hours" in decision.reason
    assert decide(85, fjr(8021), opened(dag_retry=19), fast, NOW).delay == 20
    with pytest.raises(ValueError, match="time_scale"):
        Limits(time_scale=0)


def test_check_abort_dag():
    fatal = run(opened(), 8004)[0]
    assert check_abort_dag(fatal, 3, 8, LIMITS) is fatal  # off by default
    limits = Limits(failed_node_limit=10)
    aborted = check_abort_dag(fatal, 3, 8, limits)
    assert (aborted.action, aborted.status, aborted.attempt.action) == ("abort_dag", 3, "abort_dag")
    ok = run(opened(), 0)[0]
    assert check_abort_dag(ok, 3, 8, limits).action == "abort_dag"  # whatever this job did
    assert check_abort_dag(fatal, 6, 5, limits) is fatal
    assert check_abort_dag(fatal, 2, 8, limits) is fatal


# --- the file ---------------------------------------------------------------------------------

def history(tmp_path) -> tuple[str, JobState]:
    state = opened()
    _, state = run(state, 50115, site="T2_IT_Pisa")
    state = opened(state, dag_retry=1)
    _, state = run(state, 8021, site="T2_IT_Pisa")
    state = opened(state, dag_retry=2)
    return state_path(tmp_path, "7"), state


def test_schema_tables_match_the_records():
    import dataclasses
    for kinds, record_type in ((rp._STATE_KINDS, JobState), (rp._PARAMS_KINDS, Params),
                               (rp._ATTEMPT_KINDS, Attempt)):
        assert set(kinds) == {f.name for f in dataclasses.fields(record_type)}


def test_json_round_trip(tmp_path):
    path, state = history(tmp_path)
    assert path == os.path.join(tmp_path, "retry_state", "job.7.json")
    save_state(path, state)
    assert load_state(path) == state
    assert os.listdir(os.path.dirname(path)) == ["job.7.json"]
    data = json.loads(open(path).read())
    assert data["schema"] == rp.SCHEMA and data["next"] is None and data["cooloff_until"] is None
    assert data["attempts"][1] == {
        "crab_retry": 1, "dag_retry": 1, "rrn": 2, "epoch": 0, "request_memory_mb": 2600,
        "max_runtime_min": 1250, "avoid_sites": [], "site": "T2_IT_Pisa", "exit_code": 8021,
        "start_time": NOW - HOUR, "end_time": NOW, "action": "retry",
        "reason": "FileReadError (May be a site error)."}
    assert data["attempts"][2]["action"] is None and data["attempts"][2]["avoid_sites"] == ["T2_IT_Pisa"]
    after = record(state, decide(0, fjr(0), state, LIMITS, NOW))
    save_state(path, after)
    assert load_state(path) == after


def test_json_round_trip_with_cooloff_and_next(tmp_path):
    _, state = run(opened(), 8021, site="T2_IT_Pisa")
    path = os.path.join(tmp_path, "job.7.json")
    save_state(path, state)
    assert load_state(path) == state and state.next.avoid_sites == ("T2_IT_Pisa",)


def set_in(data: dict, where: str, value) -> None:
    keys = where.replace("[", ".").replace("]", "").split(".")
    node = data
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value


DELETE = object()


@pytest.mark.parametrize("where, value, message", [
    ("schema", "crabtui.retry_state/0", 'field schema must be "crabtui.retry_state/1", not "crabtui.retry_state/0"'),
    ("rrn", DELETE, "field rrn is missing"),
    ("colloff_until", 3, "field colloff_until is not part of schema"),
    ("rrn", -1, "field rrn must be an integer >= 0, not -1"),
    ("dag_retry", True, "field dag_retry must be an integer >= 0, not true"),
    ("job_id", "", 'field job_id must be a non-empty string, not ""'),
    ("cooloff_until", "soon", 'field cooloff_until must be a UNIX time (a number >= 0) or null, not "soon"'),
    ("next", [], "next must be a JSON object, not []"),
    ("next", {"memory_mb": 0, "runtime_min": 1, "avoid_sites": []}, "field next.memory_mb must be an integer >= 1"),
    ("attempts", {}, "field attempts must be a list, not {}"),
    ("attempts[0].exit_code", "8021", 'field attempts[0].exit_code must be an integer or null, not "8021"'),
    ("attempts[1].action", "maybe", 'field attempts[1].action must be one of "ok", "retry", "fatal", "abort_dag" or null'),
    ("attempts[0].avoid_sites", "T2_IT_Pisa", "field attempts[0].avoid_sites must be a list of site names"),
    ("attempts[0].request_memory_mb", 2.5, "field attempts[0].request_memory_mb must be an integer >= 1, not 2.5"),
    ("attempts[0].action", None, "field attempts[0].action is null (open) but only the last attempt may be open"),
    ("attempts[1].crab_retry", 5, "field attempts[1].crab_retry must be 1 (its position), not 5"),
    ("crab_retry", 3, "field crab_retry must be 2 (the closed attempts), not 3"),
])
def test_validation_names_file_and_field(tmp_path, where, value, message):
    path, state = history(tmp_path)
    data = json.loads(json.dumps(rp._to_json(state)))
    set_in(data, where, value)
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        json.dump(data, f)
    with pytest.raises(RetryStateError) as info:
        load_state(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("{'rrn': 1}", "not valid JSON"),  # a Python literal, as CRAB's resubmit_info is
    ('{"cooloff_until": NaN}', "not valid JSON: NaN is not a number JSON allows"),
    ("[]", "the file must be a JSON object, not []"),
])
def test_not_a_state_file(tmp_path, text, message):
    path = tmp_path / "job.1.json"
    path.write_text(text)
    with pytest.raises(RetryStateError, match="^" + re.escape(f"{path}: {message}")):
        load_state(path)


def test_missing_file_and_failed_write_leave_nothing_behind(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError):
        load_state(tmp_path / "job.1.json")
    path = state_path(tmp_path, "1")
    save_state(path, JobState("1"))

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(rp.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        save_state(path, opened(JobState("1")))
    assert os.listdir(os.path.dirname(path)) == ["job.1.json"]
    assert load_state(path) == JobState("1")


def test_attempt_wall_time():
    assert Attempt(0, 0, 1, 0, 2000, 1250, start_time=NOW - 60, end_time=NOW).wall_s() == 60
    assert Attempt(0, 0, 1, 0, 2000, 1250, end_time=NOW).wall_s() == 0
