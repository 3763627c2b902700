"""The Schedd API over a real HTCondor schedd, through the official bindings (htcondor2).

The schedd is found as condor_q finds it: the configuration named by CONDOR_CONFIG (and the
``_CONDOR_*`` environment) gives the collector, which locates the schedd (``SCHEDD_NAME`` or the
local one).  Errors from the pool become :class:`ScheddError` messages that say what failed and
what to check; no binding exception reaches the user.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import classad2
import htcondor2

from engine.schedd.api import ActResult, JobAction, JobSpec, ScheddError, ScheddUnreachable, SubmitResult

# The job attributes a 23.9.6 schedd refuses to edit (qmgmt's immutable attributes, tried on the test pool)
_IMMUTABLE = {"clusterid", "procid", "owner", "user", "mytype", "targettype"}

class HTCondorSchedd:
    """One HTCondor schedd; the connection is made on first use.  ``name`` picks a schedd of
    the pool (condor_q -name), ``pool`` another pool's collector (condor_q -pool)."""

    def __init__(self, name: str | None = None, pool: str | None = None, ad: classad2.ClassAd | None = None) -> None:
        self.name = name or htcondor2.param.get("SCHEDD_NAME") or None
        self.pool = pool
        self._schedd: htcondor2.Schedd | None = None
        self._ad: classad2.ClassAd | None = ad
        self.address = ""
        self._version = ""
        self._owner: str | None = None

    @classmethod
    def all(cls, pool: str | None = None) -> list[HTCondorSchedd]:
        """Every schedd the collector knows (condor_q -global)."""
        where = pool or htcondor2.param.get("COLLECTOR_HOST", "")
        try:
            ads = htcondor2.Collector(pool).locateAll(htcondor2.DaemonType.Schedd)
        except Exception as e:
            raise ScheddError(f"cannot list the schedds of the collector {where}: {_message(e)}") from None
        return [cls(str(ad.get("Name", "")), pool, ad) for ad in sorted(ads, key=lambda a: str(a.get("Name", "")))]

    @classmethod
    def submitters(cls, submitter: str, pool: str | None = None) -> list[tuple[str, HTCondorSchedd]]:
        """The schedds where the collector knows ``submitter`` (``user`` or ``user@domain``) to
        have jobs, with the submitter's name there (condor_q -submitter)."""
        where = pool or htcondor2.param.get("COLLECTOR_HOST", "")
        try:
            ads = htcondor2.Collector(pool).query(htcondor2.AdType.Submitter,
                                                  projection=["Name", "ScheddName"])
        except Exception as e:
            raise ScheddError(f"cannot list the submitters of the collector {where}: {_message(e)}") from None
        found = [ad for ad in ads if submitter in (str(ad.get("Name", "")), str(ad.get("Name", "")).partition("@")[0])]
        return [(str(ad["Name"]), cls(str(ad.get("ScheddName", "")), pool))
                for ad in sorted(found, key=lambda a: (str(a.get("ScheddName", "")), str(a.get("Name", ""))))]

    # -------------------------------------------------------------- the Schedd API

    def submit(self, description: str, *, count: int = 0, itemdata: Iterable[dict[str, str]] | None = None,
               submit_file: str | None = None, cwd: str | None = None,
               prepend: Mapping[str, str] | None = None, append: Mapping[str, str] | None = None,
               spool: bool = False) -> SubmitResult:
        """The Schedd API's submit; ``spool``: as condor_submit -spool, the input files are sent to the
        schedd's spool (the jobs wait, held, until they are there) and the output stays there
        for condor_transfer_data."""
        from engine.schedd.local.submit import (  # not for q
            SubmitDescription,
            carried_over_items,
            check_macro_functions,
            parse_description,
            queue_statements,
        )

        where = submit_file or "<submit description>"
        if len(queue_statements(description)) > 1:  # the bindings would queue the first one's jobs only
            raise ScheddError(f"{where}: several queue statements: the htcondor2 bindings queue only the "
                              "first one's jobs; write one 'queue ... from (...)' statement (condor_submit "
                              "23.9.6 deprecates several)")
        submit = parse_description(SubmitDescription(description, where, cwd or ".", prepend))
        for key, value in (append or {}).items():
            submit[key] = value
        if cwd and not submit.get("initialdir") and not submit.get("initial_dir"):
            submit["initialdir"] = os.path.abspath(cwd)  # relative paths are the submitter's
        if submit.get("accounting_group") and not submit.get("accounting_group_user"):
            # condor_submit charges the submitting user (group.user); the bindings leave the user out
            submit["accounting_group_user"] = self.owner()
        if itemdata is None:  # rows with fewer words keep the row before's values, as condor_submit's
            itemdata = carried_over_items(submit, description)
        itemdata = None if itemdata is None else [dict(item) for item in itemdata]
        check_macro_functions(SubmitDescription(description, where, cwd or ".", prepend, append), count=count,
                              itemdata=itemdata)
        with self._errors(f"submitting {where}", "WRITE"):
            extra = {"itemdata": iter(itemdata)} if itemdata is not None else {}
            result = self._connect().submit(submit, count=count, spool=spool, **extra)
        if spool:
            with self._errors(f"spooling the input files of {where}", "WRITE"):
                self._connect().spool(result)
        return SubmitResult(result.cluster(), result.first_proc(), result.num_procs())

    def query(self, constraint: str = "true", projection: Sequence[str] = ()) -> list[classad2.ClassAd]:
        with self._errors("querying the queue"):
            return list(self._connect().query(constraint=constraint, projection=list(projection)))

    def factories(self, constraint: str = "true") -> list[classad2.ClassAd]:
        """The factories' cluster ads: condor_q -factory asks for cluster ads, and lists those
        with the digest a factory makes its jobs from (a 23.9.6 schedd returns the cluster ads of
        other clusters too)."""
        with self._errors("querying the queue"):
            return list(self._connect().query(
                constraint=f"({constraint}) && ProcId is undefined && JobMaterializeDigestFile isnt undefined",
                opts=htcondor2.QueryOpt.IncludeClusterAd))

    def query_values(self, constraint: str, projection: Sequence[str]) -> list[dict[str, Any]]:
        """Matching jobs as plain mappings of the projected attributes that are set, evaluated.
        The ads are converted in one pass through the bindings' JSON writer (reading 10,000
        ads attribute by attribute through the bindings takes several times longer); only an
        attribute holding an expression (MemoryUsage, say) is evaluated on its own."""
        ads = self.query(constraint, projection)
        texts = [ad.printJson() for ad in ads]
        rows = json.loads("[" + ",".join(texts) + "]")
        if "ServerTime" not in projection:  # the bindings add the schedd's clock to every ad
            for row in rows:
                row.pop("ServerTime", None)
        for ad, text, row in zip(ads, texts, rows):
            if ": null" in text or "\\/Expr(" in text:  # an undefined value, or an expression to evaluate
                for attr in [a for a, v in row.items() if v is None or (isinstance(v, str) and v.startswith("/Expr("))]:
                    value = ad.eval(attr) if row[attr] is not None else None
                    if value is None or isinstance(value, classad2.Value):
                        del row[attr]
                    else:
                        row[attr] = value
        return rows

    def summary(self, constraint: str = "false") -> dict[str, int]:
        """The schedd's summary ad for a constraint: the query's totals and all users', in one
        moment of the queue (scheduler universe jobs counted apart, as condor_q shows them)."""
        with self._errors("querying the queue's totals"):
            ads = self._connect().query(constraint=constraint, projection=["ClusterId"],
                                        opts=htcondor2.QueryOpt.SummaryOnly)
        return {k: int(v) for k, v in ads[0].items() if isinstance(v, int)} if ads else {}

    def owner(self) -> str:
        """Who the schedd says we are when we write (the Owner of our jobs): condor_q's "Total
        for" user, which on a pool is not necessarily the local login."""
        if self._owner is None:
            self._connect()
            with self._errors("asking the schedd who we are", "WRITE"):
                who = str(htcondor2.ping(self._ad, "WRITE").get("MyRemoteUserName", ""))
            self._owner = who.partition("@")[0]
        return self._owner

    @property
    def schedd_log(self) -> str | None:
        """``SCHEDD_LOG`` of the configuration (on an access point, the schedd's own), if this
        process can read it and the schedd is the local one."""
        path = htcondor2.param.get("SCHEDD_LOG")
        if self.pool or (self.name and self.name != htcondor2.param.get("SCHEDD_NAME")) or not path:
            return None
        return path if os.access(path, os.R_OK) else None

    def act(self, action: JobAction | str, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        action = JobAction(action)
        with self._errors(f"{action.value.lower()} of {_describe(job_spec)}", "WRITE"):
            # htcondor2 (25.x) drops a reason given as a plain string; as (reason, code) it reaches the
            # schedd, and a hold's reason is then the job's HoldReason, as condor_hold -reason gives it
            result = self._connect().act(getattr(htcondor2.JobAction, action.value), _spec(job_spec),
                                         None if reason is None else (reason, None))
        refused = []
        counts = {}
        for attr, key, why in (("TotalPermissionDenied", "permission_denied", "permission denied (another user's job)"),
                               ("TotalBadStatus", "bad_status", "not in a state that allows it"),
                               ("TotalNotFound", "not_found", "not found"),
                               ("TotalAlreadyDone", "already_done", "already done")):
            counts[key] = n = int(result.get(attr, 0) or 0)
            if n and key == "not_found" and not _is_constraint(job_spec):
                refused += self._gone(job_spec) or [f"{n} job(s): {why}"]
            elif n:
                refused.append(f"{n} job(s): {why}")
        changed = int(result.get("TotalSuccess", 0) or 0)
        if not changed and refused and not _is_constraint(job_spec):
            raise ScheddError(f"{action.value.lower()} of {_describe(job_spec)} did nothing: " + "; ".join(refused))
        return ActResult(changed, tuple(refused), job_ads=int(result.get("TotalJobAds", 0) or 0), **counts)

    def _gone(self, job_spec: JobSpec) -> list[str]:
        """The jobs of ``job_spec`` that have left the queue, each with its last state from the
        history (a job that ended just before the action: "not found" would say nothing of it)."""
        jobs = [str(j).strip() for j in ([job_spec] if isinstance(job_spec, (str, int)) else job_spec)]
        jobs = [j for j in jobs if "." in j]
        with self._errors("reading the queue"):
            queued = {f"{ad['ClusterId']}.{ad['ProcId']}"
                      for ad in self._connect().query(_constraint(jobs), ["ClusterId", "ProcId"])}
        gone = [j for j in jobs if j not in queued]
        if not gone:
            return []
        ended = {f"{ad['ClusterId']}.{ad['ProcId']}": int(ad["JobStatus"])
                 for ad in self.history(_constraint(gone), ["ClusterId", "ProcId", "JobStatus"], match=len(gone))}
        return [f"job {j} has already left the queue ({_STATUS_WORDS.get(ended[j], 'ended')})" if j in ended
                else f"job {j} is not in the queue" for j in gone]

    def edit(self, job_spec: JobSpec, attr: str | Mapping[str, str], value: str | None = None) -> int:
        attrs = {attr: value} if isinstance(attr, str) else dict(attr)
        for name in attrs:
            if name.lower() in _IMMUTABLE:
                # the bindings' own error says only "Unable to edit jobs matching constraint"
                raise ScheddError(f'Update of immutable attribute "{name}" is not allowed; nothing was set')
        edited = 0
        with self._errors(f"editing {_describe(job_spec)}", "WRITE", job_spec):
            schedd = self._connect()
            for name, text in attrs.items():
                try:
                    edited = max(edited, int(schedd.edit(_spec(job_spec), name, text)))
                except Exception:
                    # the bindings fail an edit that matches no job; the embedded schedd counts 0
                    if not schedd.query(_constraint(job_spec), ["ClusterId"], limit=1):
                        return 0
                    raise
        return edited

    def history(self, constraint: str = "true", projection: Sequence[str] = (), match: int = -1) -> list[classad2.ClassAd]:
        with self._errors("reading the history"):
            return list(self._connect().history(constraint=constraint, projection=list(projection), match=match))

    def sites(self) -> dict[str, dict[str, int]]:
        """Each site of the pool (its slots' GLIDEIN_CMSSite) with its largest slot's ``cpus`` and
        ``memory`` (MB; a partitionable slot's whole), as the embedded daemon's ping gives them."""
        self._connect()  # an absent configuration or pool says so first
        where = self.pool or htcondor2.param.get("COLLECTOR_HOST", "")
        try:
            ads = htcondor2.Collector(self.pool).query(
                htcondor2.AdType.Startd, "GLIDEIN_CMSSite =!= undefined",
                ["GLIDEIN_CMSSite", "Cpus", "Memory", "TotalSlotCpus", "TotalSlotMemory"])
        except Exception as e:
            raise ScheddError(f"cannot read the slot ads of the collector {where}: {_message(e)}") from None
        sites: dict[str, dict[str, int]] = {}
        for ad in ads:
            size = sites.setdefault(str(ad["GLIDEIN_CMSSite"]), {"cpus": 0, "memory": 0})
            size["cpus"] = max(size["cpus"], int(ad.get("TotalSlotCpus", ad.get("Cpus", 0))))
            size["memory"] = max(size["memory"], int(ad.get("TotalSlotMemory", ad.get("Memory", 0))))
        return sites

    def analyze(self, job: str) -> str:
        """Why an idle job does (not) run, worked out with classad2 against the pool's slot ads,
        as the embedded schedd explains it (see engine.schedd.local.pool.analyze)."""
        from engine.schedd.local.pool import analyze

        ads = self.query(_constraint(job))
        if not ads:
            raise ScheddError(f"job {job} is not in the queue")
        where = self.pool or htcondor2.param.get("COLLECTOR_HOST", "")
        try:
            slots = htcondor2.Collector(self.pool).query(htcondor2.AdType.Startd)
        except Exception as e:
            raise ScheddError(f"cannot read the slot ads of the collector {where}: {_message(e)}") from None
        return analyze(ads[0], PoolSlots(slots))

    @property
    def title(self) -> tuple[str, str]:
        """The schedd's name and address, as condor_q's header shows them."""
        self._connect()
        return str(self._ad.get("Name", "")) or self.name or "", self.address

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
        named = os.environ.get("CONDOR_CONFIG", "")
        if named not in ("", "ONLY_ENV") and not os.path.exists(named):
            raise ScheddError(f"CONDOR_CONFIG={named} does not exist: point CONDOR_CONFIG to your pool's client "
                              "configuration (condor_config_val -config on a submit host names it)")
        collector_host = htcondor2.param.get("COLLECTOR_HOST", "")
        config = os.environ.get("CONDOR_CONFIG", "")
        config = f"CONDOR_CONFIG={config}" if config not in ("", "/dev/null") else "no configuration (CONDOR_CONFIG is not set)"
        if self._ad is not None:  # located already, by all()
            return self._use(self._ad)
        # Without a name, the local schedd, whatever -pool says: HTCondor's tools ask another
        # pool's collector only for a schedd named with -name (condor_q -pool CM alone lists the
        # local queue, and condor_rm -pool CM alone removes from it).
        pool = self.pool if self.name else None
        try:
            collector = htcondor2.Collector(pool)
            if self.name:
                ad = collector.locate(htcondor2.DaemonType.Schedd, self.name)
            else:
                ad = collector.locate(htcondor2.DaemonType.Schedd)
        except Exception as e:
            if pool:
                collector_host, config = pool, "-pool"
            raise ScheddUnreachable(f"cannot locate the schedd{f' {self.name}' if self.name else ''} through the "
                              f"collector {collector_host or '(COLLECTOR_HOST is not set)'} of {config}: "
                              f"{_message(e)}. Check that the pool runs and that CONDOR_CONFIG points to "
                              "its client configuration") from None
        if ad is None:  # the collector answered, but knows no schedd of that name
            raise ScheddError(f"the collector {collector_host} knows no schedd named {self.name!r} (SCHEDD_NAME): "
                              "condor_status -schedd lists the pool's schedds")
        return self._use(ad)

    def _use(self, ad: classad2.ClassAd) -> htcondor2.Schedd:
        self._ad = ad
        self.address = str(ad.get("MyAddress", ""))
        self._version = str(ad.get("CondorVersion", ""))
        self._schedd = htcondor2.Schedd(ad)
        return self._schedd

    @contextlib.contextmanager
    def _errors(self, what: str, level: str = "READ", job_spec: JobSpec | None = None):
        """Binding exceptions as one line.  Their own text is often only "Error when performing
        action on the schedd": a ping at the command's authorization level then tells an absent
        schedd from a refused authentication, and a query tells another user's job."""
        try:
            yield
        except ScheddError:
            raise
        except Exception as e:
            message = _message(e)
            if "authenticat" in message.lower():
                why = "the schedd refused to authenticate us: " + self._methods()
            else:
                why = self._diagnosis(level, job_spec)
            error = ScheddUnreachable if why == self._silent() else ScheddError
            raise error(f"{what} failed: {message}" + (f"; {why}" if why else "")) from None

    def _methods(self) -> str:
        methods = (htcondor2.param.get("SEC_CLIENT_AUTHENTICATION_METHODS")
                   or htcondor2.param.get("SEC_DEFAULT_AUTHENTICATION_METHODS") or "the default methods")
        return (f"we offered {methods} (SEC_CLIENT_AUTHENTICATION_METHODS); check it and your credentials "
                "against the pool's security configuration")

    def _silent(self) -> str:
        return f"the schedd at {self.address or '(unknown address)'} does not answer: is the pool running?"

    def _diagnosis(self, level: str, job_spec: JobSpec | None) -> str:
        if self._ad is None:
            return ""
        address = self.address or "(unknown address)"
        try:
            htcondor2.ping(self._ad, "READ")
        except Exception:
            return self._silent()
        if level == "READ":
            return ""
        try:
            me = str(htcondor2.ping(self._ad, level).get("MyRemoteUserName", "")).partition("@")[0]
        except Exception:
            return f"the schedd at {address} refused to authenticate us for {level}: " + self._methods()
        if job_spec is None:
            return ""
        try:
            owners = {str(ad.get("Owner")) for ad in self._schedd.query(_constraint(job_spec), ["Owner"])}
        except Exception:
            return ""
        if not owners:
            return "no such job in the queue"
        others = sorted(owners - {me})
        if others:
            return f"permission denied (another user's job: owned by {', '.join(others)}, and we are {me})"
        return ""


class PoolSlots:
    """The pool's slot ads in the shape :func:`engine.schedd.local.pool.analyze` reads: slots
    (an ad, and whether a job holds it) and sites (GLIDEIN_CMSSite, as CMS glideins advertise)."""

    @dataclass
    class Slot:
        ad: classad2.ClassAd
        busy: bool

    @dataclass
    class Site:
        name: str
        slots: int

    def __init__(self, ads: Sequence[classad2.ClassAd]) -> None:
        self.slots = [self.Slot(ad, str(ad.get("State", "")) == "Claimed") for ad in ads]
        sites: dict[str, int] = {}
        for ad in ads:
            site = str(ad.get("GLIDEIN_CMSSite", "") or ad.get("Machine", ""))
            sites[site] = sites.get(site, 0) + 1
        self.sites = [self.Site(name, count) for name, count in sorted(sites.items())]


_STATUS_WORDS = {3: "removed", 4: "completed"}  # JobStatus of a job in the history


def _is_constraint(job_spec: JobSpec) -> bool:
    return isinstance(job_spec, str) and not re.fullmatch(r"\s*\d+(\.\d+)?\s*", job_spec)


def _spec(job_spec: JobSpec):
    """Our job spec as the bindings take it (they take ``c.p``, lists, constraints and ints)."""
    if isinstance(job_spec, str) and job_spec.isdigit():
        return int(job_spec)
    return job_spec if isinstance(job_spec, (str, int)) else list(job_spec)


def _describe(job_spec: JobSpec) -> str:
    return str(job_spec) if isinstance(job_spec, (str, int)) else ", ".join(str(j) for j in job_spec)


def _constraint(job_spec: JobSpec) -> str:
    """The jobs of a job spec as a constraint (the bindings' own reading of ids and lists)."""
    if isinstance(job_spec, (str, int)) and not re.fullmatch(r"\d+(\.\d+)?", str(job_spec)):
        return str(job_spec)
    clauses = []
    for one in [job_spec] if isinstance(job_spec, (str, int)) else job_spec:
        cluster, _, proc = str(one).partition(".")
        clauses.append(f"(ClusterId == {cluster}" + (f" && ProcId == {proc})" if proc else ")"))
    return " || ".join(clauses) or "false"


def _message(e: Exception) -> str:
    return str(e).strip().rstrip(".") or type(e).__name__
