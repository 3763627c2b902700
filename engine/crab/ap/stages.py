"""The files of automatic splitting's stages, in a task's ``automatic_splitting/`` directory.

PreDAG (:mod:`engine.crab.ap.predag`) writes them, the status and the task worker read them; JSON,
not CRAB's pickles:

* ``stage.<N>.json``: the job ids stage N was split into (0: processing, N: tail stage N),
  written last, so a stage whose file exists is split;
* ``estimate.json``: ``{"throughput": events/s, "event_size": bytes, "probes": [ids]}``;
* ``processed.json``: the processing ids some tail stage has taken (CRAB's ``processed``);
* ``predag.<N>.txt``: what stage N's PreDAG did, a line a run (CRAB's ``DagLog<N>.txt``).

Standard library only: DAGMan's PRE scripts use it.
"""

from __future__ import annotations

import json
import os
import time

from engine.atomic import write_atomically

AUTOMATIC_DIR = "automatic_splitting"


def _path(task_dir: str, name: str) -> str:
    return os.path.join(task_dir, AUTOMATIC_DIR, name)


def _read(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def _write(task_dir: str, name: str, data) -> None:
    os.makedirs(os.path.join(task_dir, AUTOMATIC_DIR), exist_ok=True)
    write_atomically(_path(task_dir, name), json.dumps(data) + "\n")


def stage_jobs(task_dir: str, stage: int) -> list[str] | None:
    """The job ids stage ``stage`` was split into; None while it is not."""
    return _read(_path(task_dir, f"stage.{stage}.json"))


def write_stage_jobs(task_dir: str, stage: int, ids: list[str]) -> None:
    _write(task_dir, f"stage.{stage}.json", ids)


def read_estimate(task_dir: str) -> dict | None:
    """``{"throughput", "event_size", "probes"}`` once the probes have been measured."""
    return _read(_path(task_dir, "estimate.json"))


def write_estimate(task_dir: str, throughput: float, event_size: float, probes: list[str]) -> None:
    _write(task_dir, "estimate.json", {"throughput": throughput, "event_size": event_size, "probes": probes})


def processed(task_dir: str) -> list[str]:
    """The processing ids some tail stage has taken."""
    return _read(_path(task_dir, "processed.json")) or []


def write_processed(task_dir: str, ids: list[str]) -> None:
    _write(task_dir, "processed.json", sorted(ids))


def log_path(task_dir: str, stage: int) -> str:
    return _path(task_dir, f"predag.{stage}.txt")


def log(task_dir: str, stage: int, message: str) -> None:
    os.makedirs(os.path.join(task_dir, AUTOMATIC_DIR), exist_ok=True)
    with open(log_path(task_dir, stage), "a", encoding="utf-8") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}\n")


def log_errors(task_dir: str, stage: int) -> list[str]:
    """The ERROR lines of a stage's log, oldest first, without their prefix."""
    try:
        with open(log_path(task_dir, stage), encoding="utf-8") as f:
            return [line.split("ERROR: ", 1)[1].strip() for line in f if "ERROR: " in line]
    except FileNotFoundError:
        return []


def lock_path(task_dir: str) -> str:
    """The file PreDAGs lock while they take processing jobs (tail stages run at once)."""
    os.makedirs(os.path.join(task_dir, AUTOMATIC_DIR), exist_ok=True)
    return _path(task_dir, "lock")
