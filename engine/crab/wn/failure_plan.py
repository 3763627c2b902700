"""The failure plan: which attempts of which jobs the simulated grid makes fail, and how.

The plan is the task configuration's ``Debug.failurePlan`` (:class:`engine.crab.client.config.PlannedFailure`
entries, or dicts in the config's form): ``{"job": "2", "attempt": 1 or "*", and one of
exitCode, hold, memoryMB, stageout}``.  A job carries its entries in its ad as the JSON string
``CRABTUI_FailurePlan`` (:func:`plan_json`, written by PreJob), which the job wrapper reads
(:func:`check_plan`, :func:`planned_failure`); PostJob's stage-out reads the task's plan for its
``stageout`` entries; a planned hold needs submit commands (:func:`exit_hold_commands`) and a
release policy that reads its code (:data:`PLANNED_HOLD_CODE`).  Where the plan says nothing, the
simulated grid draws from a site's failure profile with :func:`seeded_rng`, so that the same
attempt fails the same way every time.

Standard library only: read on the worker node and on the access point.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from typing import Any

HOLD_EXIT_CODE = 213
"""The exit code by which the wrapper asks to be held (see :func:`exit_hold_commands`). It is the
low byte of no exit code in CRAB's retry policy."""


def seeded_rng(seed: str) -> random.Random:
    """A random generator that gives the same numbers for the same text on every machine and run."""
    return random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))


def _entry(item: Any) -> dict[str, Any]:
    """A plan entry in the config's form, from a dict or an engine.crab.client.config.PlannedFailure."""
    if isinstance(item, Mapping):
        return dict(item)
    entry: dict[str, Any] = {"job": item.job, "attempt": "*" if item.attempt is None else item.attempt}
    for key, attr in (("exitCode", "exit_code"), ("hold", "hold_code"), ("memoryMB", "memory_mb"),
                      ("stageout", "stageout")):
        if getattr(item, attr) is not None:
            entry[key] = getattr(item, attr)
    return entry


def plan_json(plan: Iterable[Any], job: str | None = None) -> str:
    """The failure plan (``TaskConfig.failure_plan`` or config-form dicts) as the JSON string for
    ``CRABTUI_FailurePlan``; with ``job``, only that job's entries, to keep job ads small."""
    entries = [_entry(item) for item in plan]
    if job is not None:
        entries = [e for e in entries if str(e.get("job")) == str(job)]
    return json.dumps(entries, separators=(",", ":"))


def check_plan(entries: object) -> list[dict[str, Any]]:
    """The entries of a job ad's ``CRABTUI_FailurePlan`` (its JSON, loaded), checked; a ValueError
    names the first bad one."""
    if not isinstance(entries, list):
        raise ValueError("must be a JSON list of failure plan entries")
    for i, e in enumerate(entries, start=1):
        ok = (isinstance(e, dict) and isinstance(e.get("job"), str)
              and (e.get("attempt") == "*" or (type(e.get("attempt")) is int and e["attempt"] >= 1))
              and sum(1 for k in ("exitCode", "hold", "memoryMB", "stageout") if type(e.get(k)) is int) == 1)
        if not ok:
            raise ValueError(f'entry {i} ({json.dumps(e)[:80]}) is not {{"job": "2", "attempt": 1 or "*", '
                             f'and one of exitCode, hold, memoryMB, stageout}}')
    return entries


def planned_failure(plan: Iterable[Any], job: str, attempt: int) -> dict[str, Any] | None:
    """The plan's entry for this attempt of ``job``: an exact attempt before ``"*"``; None if none."""
    every = None
    for entry in map(_entry, plan):
        if str(entry.get("job")) == job:
            if entry.get("attempt") == attempt:
                return entry
            if entry.get("attempt") in ("*", None):
                every = entry
    return every


_ATTEMPT = ("ifThenElse(isUndefined(CRABTUI_Attempt), ifThenElse(isUndefined(CRAB_Retry), 1, CRAB_Retry + 1), "
            "CRABTUI_Attempt)")


def exit_hold_commands(plan: Iterable[Any]) -> dict[str, str]:
    """Submit commands that make the schedd hold a job whose attempt the plan holds (``hold = C``):
    ``on_exit_hold`` when the wrapper exits with :data:`HOLD_EXIT_CODE`, with HoldReasonSubCode C
    and a reason naming it. Empty when the plan holds nothing. The attempt is the job ad's
    CRABTUI_Attempt, else CRAB_Retry + 1, as the wrapper counts it."""
    holds = [e for e in map(_entry, plan) if e.get("hold") is not None]
    if not holds:
        return {}
    ordered = ([e for e in holds if e.get("attempt") not in ("*", None)]
               + [e for e in holds if e.get("attempt") in ("*", None)])
    subcode = "0"
    for e in reversed(ordered):
        condition = f'string(CRAB_Id) =?= "{e["job"]}"'
        if e.get("attempt") not in ("*", None):
            condition += f" && {_ATTEMPT} =?= {int(e['attempt'])}"
        subcode = f"ifThenElse({condition}, {int(e['hold'])}, {subcode})"
    return {
        "on_exit_hold": f"ExitCode =?= {HOLD_EXIT_CODE} && ({subcode}) > 0",
        "on_exit_hold_subcode": subcode,
        "on_exit_hold_reason": f'strcat("Held by the crabtui failure plan (hold code ", string({subcode}), ")")',
    }


PLANNED_HOLD_CODE = (f"ifThenElse(HoldReasonCode =?= 3 && ExitCode =?= {HOLD_EXIT_CODE}, HoldReasonSubCode, "
                     "HoldReasonCode)")
"""The code a held job's release policy should test, as a ClassAd expression: HoldReasonCode,
except for a hold of :func:`exit_hold_commands`, which stands for the grid holding the job with the
planned code and arrives as HoldReasonCode 3 (OnExitHold) with that code as HoldReasonSubCode."""
