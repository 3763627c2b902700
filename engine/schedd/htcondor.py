"""The Schedd API over a real HTCondor schedd, through the official bindings (htcondor2).

The schedd is found as condor_q finds it: the configuration named by CONDOR_CONFIG (and the
``_CONDOR_*`` environment) gives the collector, which locates the schedd (``SCHEDD_NAME`` or the
local one).  Errors from the pool become :class:`ScheddError` messages that say what failed and
what to check; no binding exception reaches the user.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import classad2
import htcondor2

from engine.schedd.api import ActResult, JobAction, JobSpec, ScheddError, SubmitResult

class HTCondorSchedd:
    """One HTCondor schedd; the connection is made on first use."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or htcondor2.param.get("SCHEDD_NAME") or None
        self._schedd: htcondor2.Schedd | None = None
        self.address = ""
        self._version = ""

    # -------------------------------------------------------------- the Schedd API

    def submit(self, description: str, *, count: int = 0, itemdata: Iterable[dict[str, str]] | None = None,
               submit_file: str | None = None, cwd: str | None = None) -> SubmitResult:
        where = submit_file or "<submit description>"
        try:
            submit = htcondor2.Submit(description)
        except Exception as e:  # the bindings raise plain exceptions for parse errors
            raise ScheddError(f"{where}: {_message(e)}") from None
        if cwd and not submit.get("initialdir") and not submit.get("initial_dir"):
            submit["initialdir"] = os.path.abspath(cwd)  # relative paths are the submitter's
        with self._errors(f"submitting {where}"):
            extra = {"itemdata": iter(itemdata)} if itemdata is not None else {}
            result = self._connect().submit(submit, count=count, **extra)
        return SubmitResult(result.cluster(), result.first_proc(), result.num_procs())

    def query(self, constraint: str = "true", projection: Sequence[str] = ()) -> list[classad2.ClassAd]:
        with self._errors("querying the queue"):
            return list(self._connect().query(constraint=constraint, projection=list(projection)))

    def query_values(self, constraint: str, projection: Sequence[str]) -> list[dict[str, Any]]:
        """Matching jobs as plain mappings of the projected attributes that are set."""
        return [{attr: _value(ad, attr) for attr in projection if attr in ad}
                for ad in self.query(constraint, projection)]

    def act(self, action: JobAction | str, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        action = JobAction(action)
        with self._errors(f"{action.value.lower()} of {job_spec}"):
            result = self._connect().act(getattr(htcondor2.JobAction, action.value), _spec(job_spec), reason)
        refused = []
        for attr, why in (("TotalPermissionDenied", "permission denied (another user's job)"),
                          ("TotalBadStatus", "not in a state that allows it"),
                          ("TotalNotFound", "not found"), ("TotalAlreadyDone", "already done")):
            n = int(result.get(attr, 0) or 0)
            if n:
                refused.append(f"{n} job(s): {why}")
        changed = int(result.get("TotalSuccess", 0) or 0)
        if not changed and refused:
            raise ScheddError(f"{action.value.lower()} of {job_spec} did nothing: " + "; ".join(refused))
        return ActResult(changed, tuple(refused))

    def edit(self, job_spec: JobSpec, attr: str | Mapping[str, str], value: str | None = None) -> int:
        attrs = {attr: value} if isinstance(attr, str) else dict(attr)
        edited = 0
        with self._errors(f"editing {job_spec}"):
            schedd = self._connect()
            for name, text in attrs.items():
                edited = max(edited, int(schedd.edit(_spec(job_spec), name, text)))
        return edited

    def history(self, constraint: str = "true", projection: Sequence[str] = (), match: int = -1) -> list[classad2.ClassAd]:
        with self._errors("reading the history"):
            return list(self._connect().history(constraint=constraint, projection=list(projection), match=match))

    def analyze(self, job: str) -> str:
        raise ScheddError("-better-analyze is not available with --backend htcondor; run condor_q -better-analyze "
                          f"{job} on the pool")

    @property
    def condor_version(self) -> str:
        """The schedd's ``$CondorVersion: ... $`` (condor_dagman's -CsdVersion must not be newer)."""
        self._connect()
        return self._version

    def close(self) -> None:
        self._schedd = None

    def __enter__(self) -> HTCondorSchedd:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -------------------------------------------------------------- plumbing

    def _connect(self) -> htcondor2.Schedd:
        if self._schedd is not None:
            return self._schedd
        collector_host = htcondor2.param.get("COLLECTOR_HOST", "")
        config = os.environ.get("CONDOR_CONFIG", "")
        config = f"CONDOR_CONFIG={config}" if config not in ("", "/dev/null") else "no configuration (CONDOR_CONFIG is not set)"
        try:
            collector = htcondor2.Collector()
            if self.name:
                ad = collector.locate(htcondor2.DaemonType.Schedd, self.name)
            else:
                ad = collector.locate(htcondor2.DaemonType.Schedd)
        except Exception as e:
            raise ScheddError(f"cannot locate the schedd{f' {self.name}' if self.name else ''} through the "
                              f"collector {collector_host or '(COLLECTOR_HOST is not set)'} of {config}: "
                              f"{_message(e)}. Check that the pool runs and that CONDOR_CONFIG points to "
                              "its client configuration") from None
        self.address = str(ad.get("MyAddress", ""))
        self._version = str(ad.get("CondorVersion", ""))
        self._schedd = htcondor2.Schedd(ad)
        return self._schedd

    @contextlib.contextmanager
    def _errors(self, what: str):
        try:
            yield
        except ScheddError:
            raise
        except Exception as e:
            message = _message(e)
            hint = ""
            lowered = message.lower()
            if "authenticat" in lowered or "permission" in lowered or "not authorized" in lowered:
                hint = "; the pool refused us: check SEC_CLIENT_AUTHENTICATION_METHODS and that you own the jobs"
            elif "connect" in lowered or "timed out" in lowered:
                hint = f"; the schedd at {self.address or '(unknown address)'} did not answer: is the pool running?"
            raise ScheddError(f"{what} failed: {message}{hint}") from None


def _spec(job_spec: JobSpec):
    """Our job spec as the bindings take it (they take ``c.p``, lists, constraints and ints)."""
    if isinstance(job_spec, str) and job_spec.isdigit():
        return int(job_spec)
    return job_spec if isinstance(job_spec, (str, int)) else list(job_spec)


def _value(ad: classad2.ClassAd, attr: str):
    value = ad.eval(attr)
    return None if isinstance(value, classad2.Value) else value


def _message(e: Exception) -> str:
    return str(e).strip().rstrip(".") or type(e).__name__
