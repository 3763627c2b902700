"""The TaskWorker's configuration: ``<state dir>/taskworker.toml``, CRAB's TaskWorker config in TOML::

    [TaskWorker]
    numAutomJobRetries = 10      # executions of a job per submit or resubmit (CRAB_NumAutomJobRetries)
    numAutomaticProbes = 3       # automatic splitting's knobs (engine.crab.taskworker.automatic)

Every knob has CRAB's name (``config.TaskWorker.<name>``); a knob not given keeps its default.
``numAutomJobRetries`` defaults to 10, the seeds' budget ("10 resubmits are allowed after any
submit/resubmit", the RRN design's "now 10, up from 2"), where CRAB's code has shipped 2, 10 and
lately 3.  The worker reads the file at each submission, so a change applies to the next task.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from engine.crab.ap.retry_policy import NUM_AUTOM_JOB_RETRIES
from engine.crab.taskworker.automatic import KNOBS, AutomaticConfig

__all__ = ["TaskWorkerConfig", "TaskWorkerConfigError", "load_config"]

_OWN_KNOBS = {"numAutomJobRetries": "num_autom_job_retries"}


class TaskWorkerConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the knob."""


@dataclass(frozen=True)
class TaskWorkerConfig:
    """The knobs the task worker acts on."""

    num_autom_job_retries: int = NUM_AUTOM_JOB_RETRIES
    """Executions of a job per submit or resubmit: the DAG's RETRY and PostJob's RRN limit."""
    automatic: AutomaticConfig = field(default_factory=AutomaticConfig)

    @classmethod
    def from_crab(cls, values: dict[str, Any]) -> TaskWorkerConfig:
        """From the ``[TaskWorker]`` table; ValueError names an unknown or invalid knob."""
        known = [*_OWN_KNOBS, *KNOBS]
        for key in values:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                raise ValueError(f"{key}: not a knob of the task worker" + (f'; did you mean "{close[0]}"?' if close
                                                                            else "") + " The knobs are " + ", ".join(known))
        retries = values.get("numAutomJobRetries", NUM_AUTOM_JOB_RETRIES)
        if type(retries) is not int or retries < 1:
            raise ValueError(f"numAutomJobRetries: must be a whole number >= 1 (executions of a job per submit or "
                             f"resubmit), got {retries!r}")
        return cls(retries, AutomaticConfig.from_crab({k: v for k, v in values.items() if k not in _OWN_KNOBS}))


def load_config(path: str) -> TaskWorkerConfig:
    """The configuration in ``path``; the defaults when the file does not exist.
    :class:`TaskWorkerConfigError` names the file and what is wrong."""
    from engine.tomlfile import TomlError, read_toml  # here only: the DAG's scripts read the task, not this file

    try:
        document = read_toml(path)
    except FileNotFoundError:
        return TaskWorkerConfig()
    except OSError as e:
        raise TaskWorkerConfigError(f"{path}: cannot read it: {e.strerror}") from None
    except TomlError as e:
        raise TaskWorkerConfigError(str(e)) from None
    unknown = set(document) - {"TaskWorker"}
    if unknown:
        raise TaskWorkerConfigError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}; the knobs go under "
                                    "[TaskWorker]")
    try:
        return TaskWorkerConfig.from_crab(document.get("TaskWorker", {}))
    except ValueError as e:
        raise TaskWorkerConfigError(f"{path}: TaskWorker.{e}") from None
