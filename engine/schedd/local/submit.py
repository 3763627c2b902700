"""Turn a submit description into job ClassAds, as condor_submit does before it contacts a schedd.

``htcondor2.Submit`` parses the submit language and expands macros (it works without a pool);
its ``jobs()`` needs a schedd, so the ads are built here from the expanded commands.  Like
condor_submit, this runs in the submitter's process: relative paths, ``getenv`` and ``queue ...
matching`` refer to the submitter's directory and environment, not the daemon's.

Errors name the submit file and the command, and nothing is queued: :class:`SubmitError`.
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import getpass
import math
import os
import re
import signal
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import classad2
import htcondor2

from engine.schedd.api import HOLD_CODE_SUBMITTED_ON_HOLD, JobStatus, ScheddError
from engine.schedd.local import factory, macro_functions

UNIVERSES = {"vanilla": 5, "scheduler": 7, "local": 12}
DEFAULT_REQUEST_MEMORY_MB = 128  # HTCondor's JOB_DEFAULT_REQUESTMEMORY
DEFAULT_REQUEST_DISK_KB = 1024
MAX_JOBS_PER_SUBMISSION = 20_000  # HTCondor's default for the knob of that name
MAX_SUBMIT_FILE_BYTES = 16 << 20
_INT32 = 2**31 - 1
# notification's values and the JobNotification each sets (condor_submit 23.9.6); NEVER by default.
_NOTIFICATIONS = {"never": 0, "always": 1, "complete": 2, "error": 3, "start": 4}

# Commands whose value is a ClassAd expression, and the job attribute each sets.
_EXPRESSIONS = {
    "requirements": "Requirements",
    "rank": "Rank",
    "periodic_hold": "PeriodicHold",
    "periodic_release": "PeriodicRelease",
    "periodic_remove": "PeriodicRemove",
    "on_exit_hold": "OnExitHold",
    "on_exit_remove": "OnExitRemove",
    "periodic_hold_subcode": "PeriodicHoldSubCode",
    "on_exit_hold_subcode": "OnExitHoldSubCode",
    "periodic_hold_reason": "PeriodicHoldReason",  # expressions too, as HTCondor's AssignJobExpr
    "on_exit_hold_reason": "OnExitHoldReason",
    "leave_in_queue": "LeaveJobInQueue",
    "allowed_job_duration": "AllowedJobDuration",
    "allowed_execute_duration": "AllowedExecuteDuration",  # recorded; 23.9.6 did not hold a job for it
    "job_max_vacate_time": "JobMaxVacateTime",
    "next_job_start_delay": "NextJobStartDelay",  # the schedd spaces the cluster's starts by it
    "coresize": "CoreSize",
}
# Commands copied as strings.
_STRINGS = {
    "batch_name": "JobBatchName",
    "dag_node_name": "DAGNodeName",
    "dagman_log": "DAGManNodesLog",
    "submit_event_notes": "SubmitEventNotes",
    "kill_sig": "KillSig",
    "remove_kill_sig": "RemoveKillSig",
    "hold_kill_sig": "HoldKillSig",
    "notify_user": "NotifyUser",
}
# The CronTab commands, recorded as strings for the schedd to read (crontab.py).
_CRON = {"cron_minute": "CronMinute", "cron_hour": "CronHour", "cron_day_of_month": "CronDayOfMonth",
         "cron_month": "CronMonth", "cron_day_of_week": "CronDayOfWeek"}
# The job attribute names condor_submit 23.9.6 also takes for these commands (submit_param's second
# name), as older submit files write them: WhenToTransferOutput = ON_EXIT, PeriodicRemove = ...
_ALIASES = {
    "whentotransferoutput": "when_to_transfer_output", "shouldtransferfiles": "should_transfer_files",
    "transferinputfiles": "transfer_input_files", "transferoutputfiles": "transfer_output_files",
    "transferexecutable": "transfer_executable", "periodichold": "periodic_hold", "periodicrelease": "periodic_release",
    "periodicremove": "periodic_remove", "onexithold": "on_exit_hold", "onexitremove": "on_exit_remove",
    "iwd": "initialdir", "userlog": "log", "requestcpus": "request_cpus", "requestmemory": "request_memory",
    "requestdisk": "request_disk", "jobprio": "priority", "prio": "priority", "jobnotification": "notification",
    "notifyuser": "notify_user", "deferraltime": "deferral_time", "killsig": "kill_sig", "jobbatchname": "batch_name",
    "jobmaxretries": "max_retries", "jobsuccessexitcode": "success_exit_code", "accountinggroup": "accounting_group",
    "niceuser": "nice_user", "jobleaseduration": "job_lease_duration", "leavejobinqueue": "leave_in_queue",
    "outputdestination": "output_destination", "jobmaxvacatetime": "job_max_vacate_time",
}
# Commands understood and handled explicitly below, or accepted with no effect on one machine
# (file transfer settings, as the embedded schedd shares the submitter's files; no mail is sent).
_HANDLED = {
    "executable", "arguments", "args", "environment", "env", "getenv", "input", "output", "error",
    "log", "initialdir", "initial_dir", "universe", "request_cpus", "request_memory", "request_disk",
    "priority", "hold", "max_retries", "success_exit_code", "retry_until",
    "should_transfer_files", "when_to_transfer_output", "transfer_input_files",
    "transfer_output_files", "transfer_output_remaps", "transfer_executable", "deferral_time",
    "deferral_window", "deferral_prep_time", "stream_output",
    "stream_error", "notification", "notify_user", "leave_in_queue", "log_xml", "job_max_vacate_time",
    "want_graceful_removal", "coresize", "cron_window", "cron_prep_time",
    "output_destination", "x509userproxy", "job_lease_duration", "keep_claim_idle", "allowed_job_duration",
    "encrypt_input_files", "encrypt_output_files", "skip_filechecks", "copy_to_spool",
    "job_ad_information_attrs", "description", "use_oauth_services", "docker_image",
    "accounting_group", "accounting_group_user", "nice_user", "concurrency_limits", "job_machine_attrs",
    # the macros DAGMan defines for every node job (dagman_submit.cpp)
    "dag_status", "failed_count", "job", "retry", "dag_parent_names",
    # condor_submit 23.9.6 commands close enough to those above to pass for their misspellings
    "stream_input", "transfer_input", "dont_encrypt_input_files", "dont_encrypt_output_files",
    "use_x509userproxy", "transfer_checkpoint_files", "concurrency_limits_expr", "submit_event_user_notes",
} | set(_EXPRESSIONS) | set(_STRINGS) | set(_ALIASES) | set(_CRON)
# The other commands of condor_submit 23.9.6's manual that it looks up for a job of these
# universes, so that a line setting one is used even where crabtui ignores it; those of the grid,
# vm and parallel universes only (grid_resource, ec2_*, vm_*, machine_count, rendezvousdir, ...) it
# warns of as unused.
_LOOKED_UP = frozenset({
    "aws_access_key_id_file", "aws_region", "aws_secret_access_key_file", "checkpoint_destination",
    "checkpoint_exit_code", "container_image", "container_service_names", "container_target_dir",
    "cuda_version", "delegate_job_gsi_credentials_lifetime", "docker_network_type",
    "docker_override_entrypoint", "docker_pull_policy", "email_attributes", "encrypt_execute_directory",
    "erase_output_and_error_on_restart", "gpus_minimum_capability", "gpus_minimum_memory",
    "gpus_minimum_runtime", "gs_access_key_id_file", "gs_secret_access_key_file", "image_size",
    "jar_files", "java_vm_args", "job_machine_attrs_history_length", "kill_sig_timeout", "load_profile",
    "manifest", "manifest_dir", "match_list_length", "max_idle", "max_job_retirement_time", "max_materialize",
    "max_transfer_input_mb", "max_transfer_output_mb", "noop_job", "noop_job_exit_code", "noop_job_exit_signal",
    "periodic_vacate", "preserve_relative_paths", "public_input_files", "remote_initialdir",
    "require_gpus", "run_as_owner", "scitokens_file", "skip_if_dataflow", "stack_size", "starter_debug",
    "starter_log", "transfer_container", "transfer_error", "transfer_output", "transfer_plugins",
    "ulog_execute_attrs", "use_scitokens", "materialize_max_idle", "jobmaterializelimit", "jobmaterializemaxidle",
    # the standard universe's, which 23.9.6 still reads for a vanilla job
    "want_io_proxy", "buffer_size", "buffer_block_size", "buffer_files", "append_files", "compress_files",
    "fetch_files", "local_files", "file_remaps",
})
# A macro a value refers to: $(name), $(name:default), $Fnx(name), $INT(name), ...; not $$(slot
# attribute) nor $ENV(variable).
_MACRO_REF = re.compile(r"(?<!\$)\$(?:F[a-z]*|INT|REAL|CHOICE|SUBSTR)?\(\s*([A-Za-z_][\w.]*)", re.IGNORECASE)
_QUEUE_LINE = re.compile(r"^[ \t]*queue\b(.*)$", re.IGNORECASE | re.MULTILINE)
_INCLUDE_LINE = re.compile(r"^[ \t]*include\b[^:\n]*:(.*)$", re.IGNORECASE | re.MULTILINE)
_IF_LINE = re.compile(r"^[ \t]*(?:if|elif)\b(.*)$", re.IGNORECASE | re.MULTILINE)
_ITEM_NAMES = re.compile(r"\s*(?:[0-9]+\s+)?([A-Za-z_][\w.]*(?:\s*[,\s]\s*[A-Za-z_][\w.]*)*)\s+(?:in|from|matching)\b",
                         re.IGNORECASE)
_OWN_REQUESTS = {"request_cpus", "request_memory", "request_disk"}
_CUSTOM_REQUEST = re.compile(r"request_(\w+)\Z", re.IGNORECASE)  # request_gpus: a slot's custom resource
_LINE_FORMS = re.compile(
    r"\s*(?:$|#|[A-Za-z_+.][\w.+-]*\s*(?:=|:)|queue\b|if\b|elif\b|else\b|endif\b|include\b|use\b"
    r"|error\b|warning\b|@)", re.IGNORECASE)
_CONDITIONAL = re.compile(r"^\s*(?:if|elif|else|endif)\b", re.IGNORECASE | re.MULTILINE)
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)B?\s*\Z", re.IGNORECASE)


class SubmitError(ScheddError):
    """A submit description that cannot be queued; names the file and the command at fault."""


class NoJobsQueued(SubmitError):
    """Every queue statement queues nothing (``queue 0``, an empty item list): condor_submit
    warns and exits 0; to a program that wanted jobs it is an error."""


@dataclass(slots=True)
class SubmitDescription:
    """Submit language text and where it came from (for messages and relative paths)."""

    text: str
    file: str = "<submit description>"
    cwd: str = "."
    prepend: Mapping[str, str] | None = None  # macros set before the text is read (DAGMan VARS PREPEND)
    append: Mapping[str, str] | None = None  # macros set after it (VARS APPEND)


STDIN = "-"  # the submit file name that reads standard input, as condor_submit's


def read_submit_file(path: str) -> str:
    """A submit file's text (:data:`STDIN`: standard input's); SubmitError names the file and
    what is wrong with it."""
    try:
        if path == STDIN:
            data = sys.stdin.buffer.read(MAX_SUBMIT_FILE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_SUBMIT_FILE_BYTES + 1)
    except OSError as e:
        raise SubmitError(f"cannot read submit file {path}: {e.strerror}") from None
    if len(data) > MAX_SUBMIT_FILE_BYTES:
        raise SubmitError(f"{path}: larger than {MAX_SUBMIT_FILE_BYTES >> 20} MB; is it a submit file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise SubmitError(f"{path}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x}); "
                          "save the submit file as UTF-8") from None


def build_job_ads(description: SubmitDescription, cluster: int, *, count: int = 0,
                  itemdata: Iterable[Mapping[str, str]] | None = None, now: int,
                  environ: Mapping[str, str] | None = None) -> list[classad2.ClassAd]:
    """The job ads of one cluster, procs numbered from 0, with every macro expanded; at most
    :data:`MAX_JOBS_PER_SUBMISSION` of them."""
    where = description.file
    environ = os.environ if environ is None else environ
    owner = getpass.getuser()
    ads: list[classad2.ClassAd] = []
    for text in queue_statements(description.text):
        statement = dataclasses.replace(description, text=text)
        lines = _with_aliases(_command_lines(text, where))
        submit = parse_description(statement)
        n, items = _queue_args(submit, _at(where, lines, "queue"), count, itemdata, description.cwd,
                               _inline_rows(text))
        if len(ads) + n * len(items) > MAX_JOBS_PER_SUBMISSION:
            raise SubmitError(f"{where}: queue: {len(ads) + n * len(items)} jobs in one submission; at most "
                              f"{MAX_JOBS_PER_SUBMISSION} are queued at once (HTCondor's "
                              "MAX_JOBS_PER_SUBMISSION): split them into several submissions")
        if description.append:
            for key, value in description.append.items():
                submit[key] = value
        _check_commands(submit, where)
        keys = _with_aliases({key.lower(): key for key in submit.keys()})
        functions = macro_functions.used(text, description.prepend, description.append)
        alike, first = _procs_alike(text, {**(description.prepend or {}), **(description.append or {})}, items,
                                    keys), ""
        for index, item in items:
            for step in range(n):
                if alike and step:  # the ad of step 0 with its ProcId: nothing else tells them apart
                    ad = classad2.ClassAd(first)
                    ad["ProcId"] = len(ads)
                    ads.append(ad)
                    continue
                proc = len(ads)
                # condor_submit numbers the items too: $(ItemIndex), and $(Row) for the same
                for key, value in (("ClusterId", cluster), ("Cluster", cluster), ("ProcId", proc),
                                   ("Process", proc), ("Step", step), ("ItemIndex", index), ("Row", index)):
                    submit[key] = str(value)
                for key, value in item.items():  # after: a queue variable named Row or Step wins, as in 23.9.6
                    submit[key] = value
                # a queue variable may be a command itself: queue arguments from (...)
                commands = keys | {key.lower(): key for key in item}
                if functions:
                    _check_macro_functions(submit, commands, where, lines)
                ads.append(_job_ad(submit, commands, where, lines, description.cwd, cluster, proc, now, environ,
                                   owner))
                if alike:
                    first = str(ads[-1])
    if not ads:
        raise NoJobsQueued(f'"{where}" has only empty "queue" commands -- no jobs queued')
    late = factory.wants_factory(ads[0])
    statements = [m.start() for m in _QUEUE_LINE.finditer(description.text)]
    if late and len(statements) > 1:  # 23.9.6's condor_submit: a job factory has one queue statement
        line = description.text.count("\n", 0, statements[1]) + 1
        raise SubmitError(f"{where}:{line}: Extra data found after queue statement: a cluster with max_materialize "
                          "or max_idle has one queue statement; write one 'queue ... from (...)'")
    for ad in ads:
        ad["TotalSubmitProcs"] = len(ads)
        # max_idle alone, max_materialize = 0 or more than the jobs: 23.9.6 limits the cluster to its
        # own size, as condor_q -factory and the jobs' ads show (max_materialize = 5 with queue 2 is 2)
        if late and not 0 < ad.get(factory.LIMIT, 0) <= len(ads):
            ad[factory.LIMIT] = len(ads)
    return ads


def check_macro_functions(description: SubmitDescription, *, count: int = 0,
                          itemdata: list[Mapping[str, str]] | None = None) -> None:
    """Refuse what :func:`build_job_ads` refuses of the macro functions, for a schedd whose own
    submit would expand them to nothing: proc by proc, with the macros each proc gets."""
    if not macro_functions.used(description.text, description.prepend, description.append):
        return
    where = description.file
    for text in queue_statements(description.text):
        lines = _with_aliases(_command_lines(text, where))
        submit = parse_description(dataclasses.replace(description, text=text))
        for key, value in (description.append or {}).items():
            submit[key] = value
        n, items = _queue_args(submit, _at(where, lines, "queue"), count, itemdata, description.cwd, _inline_rows(text))
        keys = _with_aliases({key.lower(): key for key in submit.keys()})
        proc = 0
        for index, item in items:
            for step in range(n):
                for key, value in (("Process", proc), ("ProcId", proc), ("Step", step),
                                   ("ItemIndex", index), ("Row", index), *item.items()):
                    submit[key] = str(value)
                _check_macro_functions(submit, keys | {key.lower(): key for key in item}, where, lines)
                proc += 1


def _procs_alike(text: str, added: Mapping[str, str], items: list, keys: dict[str, str]) -> bool:
    """Whether every proc of ``queue N`` gets the same ad but for its ProcId: no macro at all
    (``$``) that $(Process), $(Step) or a function could make differ, in the description or what
    is prepended or appended to it (a DAG's VARS), nothing included or used from elsewhere, no
    queue items and no custom ProcId.  Then the ad is made once and copied, as making each costs a large cluster's submit."""
    return (len(items) == 1 and not items[0][1] and "$" not in text
            and not any("$" in str(value) for value in added.values())
            and not _INCLUDE_OR_USE.search(text) and "+procid" not in keys and "my.procid" not in keys)


_INCLUDE_OR_USE = re.compile(r"^\s*(?:include|use)\b", re.IGNORECASE | re.MULTILINE)


def requirements_warnings(description: SubmitDescription) -> list[str]:
    """condor_submit 23.9.6's warnings, once a submission, for a ``requirements`` that names the
    slot's Disk or Memory itself (request_disk and request_memory add those tests), in its words
    (its capitals too); a description that does not parse is left to the submit to refuse."""
    try:
        text = _expand(parse_description(description), "requirements", description.file)
        tree = _expression(text, description.file, "requirements") if text.strip() else None
    except SubmitError:
        return []
    if tree is None:
        return []
    named = {ref.rpartition(".")[2].lower() for ref in classad2.ClassAd().externalRefs(tree)}
    said = "Requirements expression refers to TARGET.{0}. This is obsolete. Set request_{1} and condor_submit " \
           "will modify the Requirements expression as needed."
    return ([f"WARNING: Your {said.format('Disk', 'disk')}"] if "disk" in named else []) + \
        ([f"WARNING: your {said.format('Memory', 'memory')}"] if "memory" in named else [])


def unused_line_warnings(description: SubmitDescription) -> list[str]:
    """condor_submit 23.9.6's warning for each line whose macro nothing used, in its words and
    order (by name, last first), so that a misspelled command (``reqest_memory = 2000``) is
    noticed.  Used: a command condor_submit looks up, a macro a used value, a queue statement,
    an ``if`` or an ``include`` refers to; ``+Attr`` and ``MY.Attr`` lines set job attributes, not macros.  A queue
    statement's variable nothing refers to (and that names no command) is warned of too, in its own words.  A
    description that does not parse is left to the submit to refuse."""
    try:
        submit = parse_description(dataclasses.replace(description, text=queue_statements(description.text)[-1]))
    except SubmitError:
        return []
    for key, value in (description.append or {}).items():
        submit[key] = value
    keys = {key.lower(): key for key in submit.keys()}
    used: set[str] = set()
    pending = [name for name in keys if name in _HANDLED or name in _LOOKED_UP or _CUSTOM_REQUEST.match(name)
               or name.startswith(("my.", "+"))]
    variables: dict[str, str] = {}  # a queue statement's, which 23.9.6 warns of too when nothing uses them
    for qargs in _QUEUE_LINE.findall(description.text):
        items = _ITEM_NAMES.match(qargs)
        variables |= {name.lower(): name for name in (re.split(r"[,\s]+", items.group(1)) if items else [])}
        pending += [ref.lower() for ref in _MACRO_REF.findall(qargs)]
    # a variable named as a command sets it (queue arguments from FILE): used as the command is
    pending += [name for name in variables if name in _HANDLED or name in _LOOKED_UP]
    pending += _tested_by_ifs(description.text, {key.lower() for key in description.prepend or {}})
    for line in _INCLUDE_LINE.findall(description.text):  # include : conf/$(cfg).inc uses cfg
        pending += [ref.lower() for ref in _MACRO_REF.findall(line)]
    while pending:
        name = pending.pop()
        if name in used:
            continue
        used.add(name)
        if name in keys:
            value = submit[keys[name]]  # $CHOICE(Process, listMacro) uses listMacro too
            pending += [ref.lower() for ref in _MACRO_REF.findall(value) + macro_functions.list_macros(value)]
    trailing = _after_last_queue(description.text)  # warned of first, the last line first, as 23.9.6 does
    lines = {name: f"{keys[name]} = {submit[keys[name]]}" for name in keys if name not in used and name not in trailing}
    unused = sorted({*lines, *(name for name in variables if name not in used and name not in trailing)}, reverse=True)
    return [f"WARNING: the line '{line}' was unused by condor_submit. Is it a typo?" for line in reversed(trailing.values())] + [
        f"WARNING: the Queue variable '{variables[name]}' was unused by condor_submit. Is it a typo?"
        if name in variables and name not in lines else
        f"WARNING: the line '{lines[name]}' was unused by condor_submit. Is it a typo?"
        for name in unused]


_ASSIGNMENT = re.compile(r"\s*([A-Za-z_][\w.]*)\s*=\s*(.*?)\s*\Z")


def _after_last_queue(text: str) -> dict[str, str]:
    """The ``name = value`` lines after the last queue statement, which condor_submit 23.9.6 reads
    after it has queued every job, so nothing uses them (``+Attr`` and ``MY.Attr`` lines aside):
    in file order, by name (lower case), as the warning prints them."""
    lines = text.splitlines()
    spans = _queue_spans(lines)
    if not spans:
        return {}
    found = {}
    for line in lines[spans[-1][1] + 1:]:
        match = _ASSIGNMENT.match(line)
        if match and not match.group(1).lower().startswith("my."):
            found[match.group(1).lower()] = f"{match.group(1)} = {match.group(2)}"
    return found


MAX_MATERIALIZE = ("max_materialize", "jobmaterializelimit")
_LATE_MATERIALIZATION = (*MAX_MATERIALIZE, "max_idle", "materialize_max_idle", "jobmaterializemaxidle")


def late_materialization_lines(description: SubmitDescription) -> list[tuple[str, str]]:
    """The lines asking for late materialization (``max_materialize = 1``), as written, by name
    last first: 23.9.6's DAGMan submits a node's jobs directly, all at once, warning of
    :data:`MAX_MATERIALIZE` lines as unused (not of ``max_idle``, which its jobs keep as
    JobMaterializeMaxIdle).  A description that does not parse is left to the submit to refuse."""
    if not re.search(r"max_materialize|max_idle|jobmaterialize", description.text, re.IGNORECASE):
        return []  # most nodes' descriptions: not parsed twice
    try:
        submit = parse_description(dataclasses.replace(description, text=queue_statements(description.text)[-1]))
    except SubmitError:
        return []
    return sorted(((key, submit[key]) for key in submit.keys() if key.lower() in _LATE_MATERIALIZATION),
                  key=lambda line: line[0].lower(), reverse=True)


def _tested_by_ifs(text: str, defined: set[str]) -> list[str]:
    """The macros an ``if`` or ``elif`` tests that a line above it set: one set below is unused
    by the test, as condor_submit reads the file in order."""
    tested = []
    for line in text.splitlines():
        condition = _IF_LINE.match(line)
        if condition:
            names = _MACRO_REF.findall(condition.group(1)) + re.findall(r"\bdefined\s+([\w.]+)", condition.group(1))
            tested += [name.lower() for name in names if name.lower() in defined]
        elif setting := re.match(r"\s*([A-Za-z_][\w.]*)\s*=", line):
            defined.add(setting.group(1).lower())
    return tested


def queue_statements(text: str) -> list[str]:
    """One text per queue statement, for a description with several (deprecated in 23.9.6, still
    read): each holds every command above its statement, as condor_submit's macro table does
    when it reaches it, with the earlier statements blanked so that line numbers stay."""
    lines = text.splitlines(keepends=True)
    spans = _queue_spans(lines)
    if len(spans) < 2:
        return [text]
    return [_keep(lines, spans, [k]) for k in range(len(spans))]


def cluster_texts(text: str) -> list[str]:
    """One text per cluster condor_submit 23.9.6 makes of a description: a queue statement whose
    executable differs from the statement's before starts a new cluster.  Each text holds its
    own statements, the others blanked so that line numbers stay."""
    lines = text.splitlines(keepends=True)
    spans = _queue_spans(lines)
    if len(spans) < 2:
        return [text]
    executables = []
    for statement in queue_statements(text):
        try:
            with _CapturedStderr(statement):
                executables.append(htcondor2.Submit(statement).get("executable"))
        except Exception:  # build_job_ads says what is wrong with it
            return [text]
    groups = [[0]]
    for k in range(1, len(spans)):
        if executables[k] == executables[k - 1]:
            groups[-1].append(k)
        else:
            groups.append([k])
    return [_keep(lines, spans, group) for group in groups]


def _queue_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line index of each queue statement with its inline item list."""
    spans = []
    n = 0
    while n < len(lines):
        if re.match(r"\s*queue\b", lines[n], re.IGNORECASE):
            first = n
            if re.search(r"\(\s*$", lines[n]):  # queue ... from ( ... ): the items run to a ')' line
                while n + 1 < len(lines) and not re.match(r"\s*\)", lines[n]):
                    n += 1
            spans.append((first, n))
        n += 1
    return spans


def _keep(lines: list[str], spans: list[tuple[int, int]], kept_spans: list[int]) -> str:
    """The text up to the last of ``kept_spans``, the other queue statements before it blanked."""
    kept = list(lines[:spans[kept_spans[-1]][1] + 1])
    for k, (first, last) in enumerate(spans[:kept_spans[-1]]):
        if k not in kept_spans:
            kept[first:last + 1] = ["\n"] * (last + 1 - first)
    return "".join(kept)


def parse_arguments(value: str) -> list[str]:
    """Split an ``arguments`` value as condor_submit does (ArgList): the new syntax when it starts
    with a double quote, which must close the value; else the old one, blank-separated, where a
    double quote is written \\" and a bare one is refused (ValueError): the job would otherwise
    get stray quotes in its arguments."""
    text = value.lstrip()
    if text.startswith('"'):
        end = _closing_quote(text)
        if end is None:
            raise ValueError(f"unterminated double quote in {value.strip()!r}")
        if text[end + 1:].strip():
            raise ValueError(f"characters after the closing double quote: {text[end:].strip()!r}; "
                             'a double quote inside the new syntax is written twice ("")')
        return _split_new_syntax(text[1:end].replace('""', '"'))
    bare = re.search(r'(?<!\\)"', text)
    if bare:
        raise ValueError(f"illegal unescaped double quote in the old syntax: {text[bare.start():].strip()!r}; "
                         "write the whole value in double quotes (new syntax), e.g. "
                         "arguments = \"-c 'exit 3'\", or escape the quote as \\\"")
    return text.replace('\\"', '"').split()


def format_arguments(argv: list[str]) -> str:
    """An argument list as HTCondor stores it in ``Arguments`` (ArgList's V2 raw form): blanks
    separate, and each blank or single quote of an argument is quoted on its own (``a' 'b``,
    ``it''''s``), a run of them in one quoted section; an empty argument is ``''``."""
    out = []
    for arg in argv:
        word = "" if arg else "''"
        for ch in arg:
            if ch in " \t\n\r'":
                word = word[:-1] if word.endswith("'") else word + "'"  # join the quoted section before
                word += ("''" if ch == "'" else ch) + "'"
            else:
                word += ch
        out.append(word)
    return " ".join(out)


def quote_arguments(argv: list[str]) -> str:
    """An argument list as a submit file's ``arguments`` or ``environment`` value (new syntax):
    the V2 raw form in double quotes, a double quote in it written twice."""
    return '"' + format_arguments(argv).replace('"', '""') + '"'


def parse_raw_arguments(value: str) -> list[str]:
    """A job ad's ``Arguments`` (the V2 raw form, with no enclosing double quotes) as a list."""
    return _split_new_syntax(value)


def parse_environment(value: str) -> dict[str, str]:
    """``environment``: new syntax (double-quoted, blank-separated) or old (``A=1;B=2``)."""
    value = value.strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return _environment(_split_new_syntax(value[1:-1].replace('""', '"')))
    return _environment([e for e in value.split(";") if e.strip()])


def parse_raw_environment(value: str) -> dict[str, str]:
    """A job ad's ``Environment`` (the V2 raw form) as a mapping."""
    return _environment(_split_new_syntax(value))


def format_environment(env: Mapping[str, str]) -> str:
    """An environment as HTCondor stores it in ``Environment``: V2 raw, sorted by name."""
    return format_arguments([f"{name}={env[name]}" for name in sorted(env)])


def _environment(entries: list[str]) -> dict[str, str]:
    env = {}
    for entry in entries:
        name, equals, val = entry.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"expected NAME=VALUE, got {entry!r}")
        env[name.strip()] = val
    return env


# ------------------------------------------------------------------------------------ internals

def parse_description(description: SubmitDescription) -> htcondor2.Submit:
    """The description parsed by ``htcondor2.Submit``, its prepended macros set before the text is
    read; SubmitError says why the parser refuses it, at its line where it can."""
    where = description.file
    text = description.text
    prepend = description.prepend or {}
    # A prepended macro must exist while the text is read (``if defined``), yet its value must
    # stay a value: a line holds a text-safe stand-in, replaced by the value unless the text
    # set the macro itself (condor_submit -a and DAGMan set values, never submit text).
    stand_ins = {key: _text_safe(value) for key, value in prepend.items()}
    text = "".join(f"{key} = {stand_in}\n" for key, stand_in in stand_ins.items()) + text
    _check_conditionals(description.text, where)
    _check_inline_lists(description.text, where)
    try:
        with _CapturedStderr(text) as said:
            submit = htcondor2.Submit(text)
    except Exception as e:  # htcondor2 raises ValueError or HTCondorException with terse text
        raise SubmitError(_include_error(description.text, where) or _if_error(said.text, description.text, where)
                          or f"{where}: the submit language parser refused this description: {e}") from None
    for key, value in prepend.items():
        if submit.get(key) == stand_ins[key] != value:
            submit[key] = value
    return submit


class _CapturedStderr:
    """What the bindings' C++ side writes to file descriptor 2 while a description is parsed (its
    reason for refusing an ``if``), kept from the user's terminal and read into ``text``.  Only
    for a text with conditionals (nothing else makes the parser print) and in the main thread: a
    process's other threads may be writing there meanwhile (Textual draws the UI on stderr)."""

    def __init__(self, text: str) -> None:
        self._wanted = (threading.current_thread() is threading.main_thread()
                        and _CONDITIONAL.search(text) is not None)

    def __enter__(self) -> _CapturedStderr:
        import tempfile

        self.text = ""
        if not self._wanted:
            return self
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc) -> None:
        if not self._wanted:
            return
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read(1 << 16).decode("utf-8", "replace")
        self._file.close()


def _if_error(said: str, text: str, where: str) -> str | None:
    """condor_submit's words for an ``if`` it cannot evaluate, at the line of the file."""
    match = re.search(r"Parse_config if error: '(.*)' line: (.*)", said)
    if not match:
        return None
    reason, bad = match.group(1), match.group(2).strip()
    lineno = next((n for n, line in enumerate(text.splitlines(), 1) if line.strip() == bad), None)
    at = f"{where}:{lineno}" if lineno else where
    if "if condition" not in reason:
        return f"{at}: {reason}"
    return (f"{at}: {reason}; an if takes 'defined NAME', 'version >= X.Y', a boolean or a number, "
            "as in: if defined mode")


def _check_conditionals(text: str, where: str) -> None:
    """Refuse an ``if`` left open at the queue statement: condor_submit 23.9.6 lets it run to the
    end of the file, the bindings refuse the description without a reason."""
    open_ifs: list[int] = []
    continued = False
    for lineno, line in enumerate(text.splitlines(), 1):
        if continued:
            continued = line.endswith("\\")
            continue
        continued = line.endswith("\\")
        word = line.split(None, 1)[0].lower() if line.strip() else ""
        if word == "if":
            open_ifs.append(lineno)
        elif word == "endif" and open_ifs:
            open_ifs.pop()
        elif word == "queue":
            break
    if open_ifs:
        raise SubmitError(f"{where}:{open_ifs[-1]}: if without endif; close it with an endif line before the "
                          "queue statement")


def _check_inline_lists(text: str, where: str) -> None:
    """Refuse a ``queue ... from (`` whose item list no ``)`` line closes, as condor_submit 23.9.6
    does; the bindings take the rest of the file as the list and queue a job for it."""
    lines = text.splitlines()
    for first, last in _queue_spans(lines):
        if re.search(r"\(\s*$", lines[first]) and not (last > first and re.match(r"\s*\)", lines[last])):
            raise SubmitError(f"{where}:{first + 1}: Reached end of file without finding closing brace ')' for "
                              f"Queue command on line {first + 1}; end the item list with a line holding ')'")


def _include_error(text: str, where: str) -> str | None:
    """What condor_submit says of an ``include : FILE`` it cannot open (the bindings say only
    "parse_up_to_q_line() failed"); FILE is relative to the directory submitted from, as there.
    Of an ``include command`` the parser refused: which command's output to check."""
    lines = text.splitlines()
    for lineno, line in enumerate(lines, 1):
        command = re.match(r"\s*include\s+command\s*:\s*(\S.*?)\s*\|?\s*$|\s*include\s*:\s*(\S.*?)\s*\|\s*$", line,
                           re.IGNORECASE)
        if command and not _parses("\n".join(lines[:lineno - 1] + [""] + lines[lineno:]) + "\n"):
            continue  # the description fails without the command too
        if command:  # include command : CMD, or include : CMD |, runs CMD
            return (f"{where}:{lineno}: include command: the submit language parser refused what "
                    f"'{command.group(1) or command.group(2)}' printed; run it and check that each line it prints is a "
                    "submit command (it runs without a shell, so quotes reach it as they are)")
        match = re.match(r"\s*include\s*:?\s*(\S.*?)\s*$", line, re.IGNORECASE)
        if not match:
            continue
        try:
            with open(match.group(1), "rb") as f:
                included = f.read().decode("utf-8", "replace")
        except OSError as e:
            return (f"{where}:{lineno}: include: can't open file {match.group(1)}: {e.strerror}; a relative name is "
                    f"read from the directory you submit from ({os.getcwd()}), so give the path from there")
        if _QUEUE_LINE.search(included):  # 23.9.6: "Queue statement not allowed in include file or command"
            return (f"{where}:{lineno}: include: {match.group(1)} has a queue statement, which condor_submit does not "
                    f"allow in an included file; move the queue statement into {os.path.basename(where)}")
    return None


def _parses(text: str) -> bool:
    try:
        with _CapturedStderr(text):
            htcondor2.Submit(text)
    except Exception:
        return False
    return True


def _command_lines(text: str, where: str) -> dict[str, int]:
    """The line of the text that last sets each command (lower case), for messages; a line that
    is no submit command is refused, naming it."""
    lines = {}
    continued = False
    for lineno, line in enumerate(text.splitlines(), 1):
        if continued:  # a line that ends in a backslash goes on on the next one
            continued = line.endswith("\\")
            continue
        continued = line.endswith("\\")
        if re.match(r"\s*queue\b", line, re.IGNORECASE):
            lines["queue"] = lineno
            break  # what follows is the queue statement's item list, if any
        if not _LINE_FORMS.match(line):
            raise SubmitError(f"{where}:{lineno}: not a submit command: {line.strip()!r}; "
                              "expected 'name = value' or a queue statement")
        match = re.match(r"\s*([A-Za-z_+.][\w.+-]*)\s*[=:]", line)
        if match:
            lines[match.group(1).lower()] = lineno
    return lines


def _with_aliases(commands: dict) -> dict:
    """``commands`` (by lower-case name) with each alias also under its command's name; the
    command itself wins, as in condor_submit."""
    return {**{_ALIASES[name]: value for name, value in commands.items() if name in _ALIASES}, **commands}


def _at(where: str, lines: Mapping[str, int], *names: str) -> str:
    """``file:line`` of the first of the commands ``names`` the text sets, else the file."""
    for name in names:
        if name in lines:
            return f"{where}:{lines[name]}"
    return where


def _text_safe(value: str) -> str:
    """What a ``key = value`` line can hold of ``value``: one line, no blanks around it (the
    parser trims them), no trailing backslash (a continuation)."""
    return " ".join(value.splitlines()).strip().rstrip("\\").strip()


def _queue_args(submit: htcondor2.Submit, where: str, count: int, itemdata, cwd: str, rows: list[str]):
    qargs = submit.getQArgs() or ""
    count_macro = re.match(r"\s*\$\(([A-Za-z_][\w.]*)\)\s*$", qargs)
    if count_macro and submit.get(count_macro.group(1)) is not None:  # queue $(n): condor_submit expands it
        qargs = submit.expand(count_macro.group(1))
    match = re.match(r"\s*([0-9]+)?", qargs)
    queue_count = 1
    if match.group(1):
        if len(match.group(1)) > 9:
            raise SubmitError(f"{where}: queue {match.group(1)[:20]}...: at most {MAX_JOBS_PER_SUBMISSION} jobs "
                              "are queued at once (HTCondor's MAX_JOBS_PER_SUBMISSION)")
        queue_count = int(match.group(1))
    if count:
        queue_count = count
    if itemdata is not None:
        return queue_count, list(enumerate(dict(i) for i in itemdata))
    if qargs.strip() and not qargs.strip().isdigit():
        old = os.getcwd()
        try:
            os.chdir(cwd)
            items = submit.itemdata()
            items = list(items) if items is not None else []  # an empty list or file: no jobs
            items = _carried_over(qargs, rows, items)
        except Exception as e:
            items = _items_from_file(_SLICE.sub(r"\1", qargs), cwd)
            if items is None:
                items = _inline_items(_SLICE.sub(r"\1", qargs), rows)
            if items is None:
                said = re.sub(r" on line -?\d+", "", str(e))  # the bindings' own count is off; where names it
                raise SubmitError(f"{where}: cannot expand 'queue {qargs}': {said}") from None
        finally:
            os.chdir(old)
        return queue_count, list(enumerate(items or []))[_slice_of(qargs)]  # $(ItemIndex) counts all
    return queue_count, [(0, {})]


_FROM_LIST = re.compile(r"\s*(?:[0-9]+\s+)?([A-Za-z_][\w.]*(?:\s*[,\s]\s*[A-Za-z_][\w.]*)*)\s+from\s+"
                        r"(?:\[[^\]]*\]\s*)?\(\s*\Z", re.IGNORECASE)


def _inline_rows(text: str) -> list[str]:
    """The rows of the last queue statement's inline list, ``queue a, b from ( ... )``: a blank
    row is a job too (its first variable empty), as in condor_submit 23.9.6; a comment is none."""
    lines = text.splitlines()
    spans = _queue_spans(lines)
    if not spans or spans[-1][0] == spans[-1][1]:
        return []
    first, last = spans[-1]
    return [line for line in lines[first + 1:last] if not line.lstrip().startswith("#")]


def carried_over_items(submit: htcondor2.Submit, text: str) -> list[dict[str, str]] | None:
    """The items of a description's inline list of several variables as condor_submit 23.9.6
    gives them (see :func:`_carried_over`), for a schedd that would take the bindings' instead;
    None where the bindings' are the same, or the list has a slice."""
    qargs = submit.getQArgs() or ""
    if not _FROM_LIST.match(qargs) or _SLICE.search(qargs):
        return None
    try:
        items = [dict(i) for i in submit.itemdata() or []]
    except Exception:  # the bindings refuse a blank row ("invalid qargs")
        return _inline_items(qargs, _inline_rows(text))
    carried = _carried_over(qargs, _inline_rows(text), items)
    return carried if carried != items else None


def _inline_items(qargs: str, rows: list[str]) -> list[dict[str, str]] | None:
    """The items of an inline list as condor_submit 23.9.6 reads them (see :func:`_split_rows`),
    for a list the bindings refuse (a blank row); None: not that form."""
    match = _FROM_LIST.match(qargs)
    return _split_rows(rows, [n for n in re.split(r"[,\s]+", match.group(1)) if n]) if match else None


def _carried_over(qargs: str, rows: list[str], items: list) -> list:
    """The bindings' items of an inline list of several variables, with what 23.9.6 gives a
    variable a row has no word for: the row before's value (``queue a b c from (`` with rows
    ``x y z`` then ``p,q`` gives c = z twice), where the bindings give it nothing."""
    match = _FROM_LIST.match(qargs)
    names = [n for n in re.split(r"[,\s]+", match.group(1)) if n] if match else []
    if len(names) < 2 or len(rows) != len(items):
        return items
    return _split_rows(rows, names)


# queue ... in [1:3] (a b c d), from [::2] FILE, matching [:5] GLOB: which items, as in Python
_SLICE = re.compile(r"\b(in|from|matching)\s+\[\s*([+-]?\d*)\s*:\s*([+-]?\d*)\s*(?::\s*([+-]?\d*)\s*)?\]",
                    re.IGNORECASE)


def _slice_of(qargs: str) -> slice:
    """The slice of a queue statement's items (all of them when it has none); the bindings'
    itemdata() leaves it out."""
    match = _SLICE.search(qargs)
    if not match:
        return slice(None)
    start, stop, step = (int(g) if g else None for g in match.groups()[1:])
    return slice(start, stop, step or None)


_FROM_FILE = re.compile(r"\s*(?:[0-9]+\s+)?([A-Za-z_][\w.]*(?:\s*[,\s]\s*[A-Za-z_][\w.]*)*)\s+from\s+([^(\s].*?)\s*\Z",
                        re.IGNORECASE)


def _items_from_file(qargs: str, cwd: str) -> list[dict[str, str]] | None:
    """The items of ``queue VARS from FILE`` read as condor_submit 23.9.6 reads them, for the
    files the bindings refuse ("invalid qargs": a blank line, say): a line a job, leading and
    trailing blanks dropped; with several variables each takes the line's next word (ended by a
    comma or a blank, and the blanks after it) and the last the rest, and a variable the line
    has no word for keeps the line before's value, as 23.9.6 does.  None: not that form."""
    match = _FROM_FILE.match(qargs)
    if not match or match.group(2).endswith("|"):
        return None
    names = [n for n in re.split(r"[,\s]+", match.group(1)) if n]
    try:
        with open(os.path.join(cwd, match.group(2)), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return _split_rows(lines, names)


def _split_rows(lines: list[str], names: list[str]) -> list[dict[str, str]]:
    """The items of rows of several variables, as condor_submit 23.9.6 splits them (see
    :func:`_items_from_file`)."""
    items, values = [], dict.fromkeys(names, "")
    for line in lines:
        rest = line.strip()
        for k, name in enumerate(names):
            if not rest:
                if k == 0:
                    values[name] = ""
                continue
            if k == len(names) - 1:
                values[name], rest = rest, ""
            else:
                word = re.match(r"[^,\s]*", rest).group(0)
                values[name], rest = word, rest[len(word) + 1:].lstrip()
        items.append(dict(values))
    return items


def _check_macro_functions(submit: htcondor2.Submit, commands: dict[str, str], where: str,
                           lines: Mapping[str, int]) -> None:
    """Refuse, at its line, a macro function whose arguments condor_submit 23.9.6 refuses or
    crashes on (see :mod:`macro_functions`); the bindings would expand it to nothing."""
    roots = [key for lower, key in commands.items() if lower in _HANDLED or lower in _LOOKED_UP
             or lower.startswith(("my.", "+")) or _CUSTOM_REQUEST.match(lower)]
    bad = macro_functions.check(roots, submit.get, lambda name: _expand(submit, name, where))
    if bad:
        name, said = bad
        raise SubmitError(f"{_at(where, lines, name.lower())}: {name}: {said}")


def _check_commands(submit: htcondor2.Submit, where: str) -> None:
    """Refuse what looks like a misspelled command (``exectuable``), as it would be silently ignored;
    a command of condor_submit's (``transfer_output``, close to ``transfer_output_files``) is none.

    Any other name is a macro, as in HTCondor: DAGMan's VARS, say, define macros a submit file
    need not use.
    """
    text = " ".join(str(v) for v in submit.values())
    for key in submit.keys():
        lower = key.lower()
        if lower in _HANDLED or lower in _LOOKED_UP or lower.startswith(("my.", "+")) or _CUSTOM_REQUEST.match(lower) or re.search(rf"\$\({re.escape(key)}\b", text, re.I):
            continue
        close = difflib.get_close_matches(lower, _HANDLED, n=1, cutoff=0.8)
        if close:
            raise SubmitError(f"{where}: unknown submit command '{key}' (did you mean '{close[0]}'?); "
                              "custom job attributes are written '+Name = value' or 'My.Name = value'")


def _expand(submit: htcondor2.Submit, key: str, where: str) -> str:
    """The value with its macros expanded; an undefined or empty macro expands to nothing, as
    in condor_submit (the bindings raise KeyError whenever the result is empty: ``log =``,
    DAGMAN_SUPPRESS_JOB_LOGS, a VARS value "")."""
    try:
        return submit.expand(key)
    except KeyError:
        return ""


def _get(submit: htcondor2.Submit, keys: dict[str, str], where: str, *names: str) -> str | None:
    """The expanded value of the first of ``names`` (lower case) the description sets."""
    for name in names:
        actual = keys.get(name)
        if actual is not None:
            value = _expand(submit, actual, where).strip()
            return value or None
    return None


def _integer(value: str, where: str, key: str, what: str, low: int, evaluate: bool = False) -> int:
    """A command's whole-number value, from ``low`` to 2**31-1; SubmitError otherwise.
    ``evaluate``: a command condor_submit 23.9.6 evaluates as an expression first
    (``priority = $(Process) * 10 - 5`` is -5, 5, 15; ``priority = 2.5`` is 2)."""
    if evaluate and not re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
        try:
            number = classad2.ExprTree(value).eval()
        except Exception:
            number = None
        if type(number) in (int, float, bool) and math.isfinite(number):  # not undefined (a Value), true is 1
            value = str(int(number))
    if re.fullmatch(r"[+-]?[0-9]{1,10}", value) and low <= int(value) <= _INT32:
        return int(value)
    bounds = f"from {low} to {_INT32}" if low else f"up to {_INT32}"
    raise SubmitError(f"{where}: {key}: expected a whole number ({what}), {bounds}, got {value[:40]!r}")


def _materialize_limits(ad: classad2.ClassAd, get, at) -> None:
    """Late materialization, as condor_submit asks the schedd for it: ``max_materialize`` (the
    most jobs of the cluster in the queue at once) and ``max_idle`` (the most of them idle)."""
    for attr, names, what in ((factory.LIMIT, ("max_materialize", "jobmaterializelimit"),
                               "the most jobs of the cluster in the queue at once"),
                              (factory.MAX_IDLE, ("max_idle", "materialize_max_idle", "jobmaterializemaxidle"),
                               "the most jobs of the cluster idle at once")):
        value = get(*names)
        if value is not None:
            ad[attr] = _integer(value, at(*names), names[0], what, 0, evaluate=True)


def _expression(value: str, where: str, key: str) -> classad2.ExprTree:
    r"""The expression as condor_submit reads it: in the old ClassAd syntax, where a backslash in
    a string is itself unless it quotes a double quote (``regexp("\.cern\.ch$", Machine)``
    keeps its backslashes), and one before a string's closing quote is itself too (``"C:\dir\"``,
    which the new syntax cannot read).  Checked by the new syntax's parser, or, where only the old
    one reads it, by its reading the whole text: the old parser stops quietly at the first thing
    it cannot read."""
    try:
        expr = classad2.ExprTree(value)
    except Exception:
        expr = None
    if "\\" in value:
        old = classad2.parseOne(f"X = {value}", classad2.ParserType.Old)
        if "X" in old and (expr is not None or "".join(old.printOld().split()) == "X=" + "".join(value.split())):
            return old.lookup("X")
    if expr is None:
        raise SubmitError(f"{where}: {key}: cannot parse {value!r} as a ClassAd expression")
    return expr


def _size(value: str, where: str, key: str, unit: int) -> int:
    """A size such as ``2 GB`` in ``unit`` bytes (MB for memory, KB for disk), as HTCondor reads it."""
    match = _SIZE.match(value)
    if not match:
        raise SubmitError(f"{where}: {key}: expected a size such as 2048 or '2 GB', got {value!r}")
    number, suffix = float(match.group(1)), match.group(2).upper()
    return max(1, int(-(-number * (_UNITS[suffix] if suffix else unit) // unit)))


_KILL_SIGNALS = ("kill_sig", "remove_kill_sig", "hold_kill_sig")


def _signal_name(value: str, where: str, key: str) -> str:
    """A kill signal as condor_submit 23.9.6 stores it: its name, upper case (``9`` is SIGKILL,
    ``sigusr1`` SIGUSR1); a name without SIG, a quoted one or an unknown number is refused."""
    name = value.strip().upper()
    try:
        name = signal.Signals(int(name)).name if name.isascii() and name.isdigit() else name
    except ValueError:
        pass
    if not (name.startswith("SIG") and isinstance(getattr(signal, name, None), signal.Signals)):
        raise SubmitError(f"{where}: {key}: invalid signal {value}; give a signal's name, as SIGUSR1, or its number")
    return name


def _request_expression(value: str) -> classad2.ExprTree | None:
    """A request written as an expression, stored as condor_submit 23.9.6 stores it, as the
    manual's ``request_memory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage * 3 / 2, 2048)``
    and ``request_cpus = 2 - 1``.  None for a number, a size (``2 GB``), what does not parse and a
    lone name (``request_memory = lots``, a typo the pool would leave to never match)."""
    if _SIZE.match(value) or re.fullmatch(r"\s*(?:[A-Za-z_][\w.]*|[+-][0-9.]+)\s*", value):
        return None
    try:
        return classad2.ExprTree(value)
    except Exception:
        return None


def _path(value: str | None, iwd: str, default: str | None = None) -> str | None:
    if value is None:
        return default
    return value if os.path.isabs(value) else os.path.join(iwd, value)  # as written, as condor_submit joins them


def _job_ad(submit: htcondor2.Submit, keys: dict[str, str], where: str, lines: Mapping[str, int], cwd: str,
            cluster: int, proc: int, now: int, environ: Mapping[str, str], owner: str) -> classad2.ClassAd:
    def get(*names: str) -> str | None:
        return _get(submit, keys, where, *names)

    def at(*names: str) -> str:  # FILE:LINE of the command
        return _at(where, lines, *names)

    universe_name = (get("universe") or "vanilla").lower()
    if universe_name not in UNIVERSES:
        raise SubmitError(f"{at('universe')}: universe: '{universe_name}' is not supported by the embedded schedd; "
                          f"use one of {', '.join(UNIVERSES)}")
    iwd = _path(get("initialdir", "initial_dir"), os.path.abspath(cwd)) or os.path.abspath(cwd)
    if not os.path.isdir(iwd):
        raise SubmitError(f"{at('initialdir')}: initialdir: directory {iwd} does not exist")
    cmd = _cmd(get("executable"), cwd, at)

    ad = classad2.ClassAd()
    ad["MyType"] = "Job"
    ad["TargetType"] = "Machine"
    ad["ClusterId"] = cluster
    ad["ProcId"] = proc
    ad["Owner"] = owner
    ad["QDate"] = now
    ad["EnteredCurrentStatus"] = now
    ad["JobStatus"] = int(JobStatus.IDLE)
    ad["JobUniverse"] = UNIVERSES[universe_name]
    ad["Iwd"] = iwd
    ad["Cmd"] = cmd
    ad["ImageSize"] = 0  # KiB, until the job is measured; a job submitted through htcondor2 starts at 0 too
    _arguments_and_environment(ad, get, at, where, lines, environ)
    # 23.9.6 opens no input file nor the log at submit (SUBMIT_SKIP_FILECHECKS, so skip_filechecks and
    # -disable change nothing): an input the transfer cannot read holds the job (input_files), and a
    # log that cannot be written loses its events, as the schedd's writes do, while the job runs
    for key, attr in (("input", "In"), ("output", "Out"), ("error", "Err")):
        ad[attr] = get(key) or "/dev/null"  # as written, relative to Iwd, as condor_submit keeps them
    log = _path(get("log"), iwd)
    if log is not None:
        ad["UserLog"] = log
    xml = get("log_xml")
    if xml is not None and _submit_bool(xml, at("log_xml"), "log_xml"):
        raise SubmitError(f"{at('log_xml')}: log_xml = {xml}: the embedded schedd writes the job's log in "
                          "HTCondor's standard event format only, which htcondor2.JobEventLog, DAGMan and crabtui "
                          "read; remove the line, or submit with --backend htcondor for an XML log")
    _requests(ad, keys, get, at)
    ad["JobPrio"] = _integer(get("priority") or "0", at("priority"), "priority", "a priority, higher runs first",
                             -_INT32, evaluate=True)
    _materialize_limits(ad, get, at)
    notification = (get("notification") or "never").strip().lower()
    if notification not in _NOTIFICATIONS:
        raise SubmitError(f"{at('notification')}: notification: must be 'Never', 'Always', 'Complete', 'Start', "
                          f"or 'Error', not {notification!r}")
    ad["JobNotification"] = _NOTIFICATIONS[notification]
    _before_any_run(ad)
    for key, attr in _EXPRESSIONS.items():
        value = get(key)
        if value is not None:
            ad[attr] = _expression(value, at(key), key)
    for key, attr in _STRINGS.items():
        value = get(key)
        if value is not None:
            ad[attr] = _signal_name(value, at(key), key) if key in _KILL_SIGNALS else value
    if "KillSig" not in ad and universe_name in ("local", "scheduler"):
        ad["KillSig"] = "SIGTERM"  # as condor_submit 23.9.6 gives jobs that run beside the schedd
    batch = get("batch_name")
    if batch is not None and len(batch) > 1 and batch[0] == batch[-1] == '"':
        ad["JobBatchName"] = batch[1:-1]  # batch_name = "my batch": 23.9.6 drops one pair of quotes
    nice = get("nice_user")
    nice = nice is not None and _submit_bool(nice, at("nice_user"), "nice_user")
    if nice:  # a nice user's job leaves its slot at once when asked to, as 23.9.6 sets it
        ad["MaxJobRetirementTime"] = 0
    _accounting(ad, get("accounting_group") or ("nice-user" if nice else None), get("accounting_group_user"), owner)
    _proxy(ad, get("x509userproxy"), get("use_x509userproxy"), iwd, environ,
           at("x509userproxy", "use_x509userproxy"))
    _transfer(ad, get, where, lines)
    limits = get("concurrency_limits")
    if limits:  # lower case and sorted, as condor_submit stores them
        ad["ConcurrencyLimits"] = ",".join(sorted({n.lower() for n in re.split(r"[\s,]+", limits) if n}))
    _deferral(ad, get, at)
    graceful = get("want_graceful_removal")
    if graceful is not None:  # an expression, as condor_submit records it; the schedd reads it at condor_rm
        ad["WantGracefulRemoval"] = _expression(graceful, at("want_graceful_removal"), "want_graceful_removal")
    description = _expand(submit, keys["description"], where) if "description" in keys else ""
    if description:  # copied as it is, blanks included (condor_submit's f_as_string)
        ad["JobDescription"] = description
    for key, attr in (("job_machine_attrs", "JobMachineAttrs"), ("job_ad_information_attrs", "JobAdInformationAttrs")):
        value = get(key)
        if value:  # as written; the schedd reads JobMachineAttrs at each match
            ad[attr] = value
    _retries(ad, get, where, lines)
    _custom_attributes(ad, submit, where, at)
    hold = get("hold")
    if hold is not None and _submit_bool(hold, at("hold"), "hold"):
        ad["JobStatus"] = int(JobStatus.HELD)
        ad["HoldReason"] = "submitted on hold at user's request"
        ad["HoldReasonCode"] = HOLD_CODE_SUBMITTED_ON_HOLD  # and no HoldReasonSubCode, as condor_submit 23.9.6
    return ad


def _cmd(executable: str | None, cwd: str, at) -> str:
    """The job's Cmd, which must be an executable file here: the embedded schedd runs it where it is."""
    if executable is None:
        raise SubmitError(f"{at('executable')}: executable: no executable given")
    cmd = _path(executable, os.path.abspath(cwd))  # condor_submit: from the submit directory, not initialdir
    if "$$(" not in cmd and (not os.path.isfile(cmd) or not os.access(cmd, os.X_OK)):  # $$(): the slot names it
        if os.path.isfile(cmd):  # a pool's file transfer makes it executable; here it runs where it is
            raise SubmitError(f"{at('executable')}: executable: {cmd} is not executable, and the embedded schedd "
                              f"runs it where it is, unlike a pool's file transfer; make it so: chmod +x {cmd}")
        problem = "does not exist" if not os.path.exists(cmd) else "is not an executable file"
        raise SubmitError(f"{at('executable')}: executable: {cmd} {problem}")
    return cmd


def _arguments_and_environment(ad: classad2.ClassAd, get, at, where: str, lines: Mapping[str, int],
                               environ: Mapping[str, str]) -> None:
    """Arguments (or the old syntax's Args) and Environment, as condor_submit writes them."""
    arguments = get("arguments", "args")
    if arguments is not None:
        try:
            argv = parse_arguments(arguments)
        except ValueError as e:
            raise SubmitError(f"{_at(where, lines, 'arguments', 'args')}: arguments: {e}") from None
        if arguments.lstrip().startswith('"'):
            ad["Arguments"] = format_arguments(argv)
        else:  # the old syntax stays old, in Args, as condor_submit keeps it
            ad["Args"] = " ".join(argv)
    else:
        ad["Arguments"] = ""
    env = _getenv(get("getenv"), environ)
    environment = get("environment", "env")
    if environment is not None:
        try:
            env.update(parse_environment(environment))
        except ValueError as e:
            raise SubmitError(f"{at('environment')}: environment: {e}") from None
    ad["Environment"] = format_environment(env)


def _requests(ad: classad2.ClassAd, keys: dict[str, str], get, at) -> None:
    """RequestCpus, RequestMemory (MiB) and RequestDisk (KiB): a number, a size or an expression."""
    cpus = get("request_cpus")
    ad["RequestCpus"] = (_request_expression(cpus) or _integer(cpus, at("request_cpus"), "request_cpus",
                                                               "a number of CPUs", 1) if cpus else 1)
    memory = get("request_memory")
    ad["RequestMemory"] = (_request_expression(memory) or _size(memory, at("request_memory"), "request_memory",
                                                                1024**2) if memory else DEFAULT_REQUEST_MEMORY_MB)
    disk = get("request_disk")
    ad["RequestDisk"] = (_request_expression(disk) or _size(disk, at("request_disk"), "request_disk", 1024)
                         if disk else DEFAULT_REQUEST_DISK_KB)
    _custom_requests(keys, get, at)


def _before_any_run(ad: classad2.ClassAd) -> None:
    """The policy defaults and counters condor_submit 23.9.6 sets before any run."""
    ad["Requirements"] = classad2.ExprTree("true")
    ad["Rank"] = 0.0
    ad["OnExitRemove"] = True
    ad["OnExitHold"] = False
    ad["LeaveJobInQueue"] = False
    ad["ExitBySignal"] = False  # set before any run, as condor_submit 23.9.6 sets them
    ad["ExitStatus"] = 0
    ad["PeriodicHold"] = False
    ad["PeriodicRelease"] = False
    ad["PeriodicRemove"] = False
    for counter in ("NumJobStarts", "NumJobCompletions", "JobRunCount", "NumHolds"):
        ad[counter] = 0
    ad["RemoteWallClockTime"] = 0.0
    ad["RemoteUserCpu"] = 0.0
    ad["RemoteSysCpu"] = 0.0


def _deferral(ad: classad2.ClassAd, get, at) -> None:
    """deferral_time, or the cron_* commands (whose DeferralTime the schedd computes, see
    :mod:`crontab`), with the window and the prep time condor_submit 23.9.6 gives by default;
    cron_window and cron_prep_time are its other names for deferral_window and deferral_prep_time."""
    deferral = get("deferral_time")
    cron = {attr: value for command, attr in _CRON.items() if (value := get(command)) is not None}
    if deferral is None and not cron:
        return
    if deferral is not None:
        if ad["JobUniverse"] == UNIVERSES["scheduler"]:  # condor_submit 23.9.6's refusal (cron_* it takes)
            raise SubmitError(f"{at('deferral_time')}: DeferralTime does not work for scheduler universe jobs; "
                              "consider submitting this job using the local universe, instead")
        ad["DeferralTime"] = _expression(deferral, at("deferral_time"), "deferral_time")
    ad.update(cron)  # as strings, as condor_submit records them: CronMinute = "*/2"
    for attr, command, cron_name, default in (("DeferralWindow", "deferral_window", "cron_window", "0"),
                                              ("DeferralPrepTime", "deferral_prep_time", "cron_prep_time", "300")):
        name = command if get(command) is not None else cron_name
        ad[attr] = _expression(get(name) or default, at(name), name)


def _custom_attributes(ad: classad2.ClassAd, submit: htcondor2.Submit, where: str, at) -> None:
    """The ``My.NAME`` and ``+NAME`` commands: attributes of the job's ad, as expressions."""
    for key in submit.keys():
        lower = key.lower()
        if lower.startswith(("my.", "+")):
            name = key.split(".", 1)[1] if lower.startswith("my.") else key[1:]
            ad[name] = _expression(_expand(submit, key, where), at(key.lower()), key)


def _custom_requests(keys: dict[str, str], get, at) -> None:
    """request_gpus or another request_<resource>: the embedded pool's slots have only CPUs,
    memory and disk, so a job that asks for more than 0 of anything else would never start,
    as on a pool with no such slot; refused, saying so, rather than left idle."""
    for key in keys:
        match = _CUSTOM_REQUEST.match(key)
        if not match or key in _OWN_REQUESTS:
            continue
        value = get(key)
        if value is None or value.strip() in ("0", "0.0"):
            continue
        if match.group(1).lower() == "gpus":
            resource = "GPUs"
        else:  # request_cpu is a custom resource to condor_submit too, and most likely a typo
            close = difflib.get_close_matches(key, _OWN_REQUESTS, n=1, cutoff=0.8)
            resource = f"'{match.group(1)}' resource" + (f" (did you mean '{close[0]}'?)" if close else "")
        raise SubmitError(f"{at(key)}: {key} = {value}: the embedded pool's slots have no {resource}, so the job "
                          "would never start; remove the line, or submit with --backend htcondor to a pool "
                          "whose slots have them")


def _accounting(ad: classad2.ClassAd, group: str | None, user: str | None, owner: str) -> None:
    """AcctGroup, AcctGroupUser and AccountingGroup, the name the negotiator charges, as condor_submit
    23.9.6 sets them: ``group.user``, the user being the owner unless accounting_group_user names one;
    a nice_user job's group is ``nice-user`` unless accounting_group names another."""
    if group is None and user is None:
        return
    user = user or owner
    if group is not None:
        ad["AcctGroup"] = group
    ad["AcctGroupUser"] = user
    ad["AccountingGroup"] = f"{group}.{user}" if group is not None else user


def _proxy(ad: classad2.ClassAd, proxy: str | None, use: str | None, iwd: str, environ: Mapping[str, str],
           where: str) -> None:
    """The grid proxy the job gets, as condor_submit 23.9.6 finds it: ``x509userproxy``, else with
    ``use_x509userproxy = true`` X509_USER_PROXY or /tmp/x509up_u<uid>; one it cannot read is
    refused, as there ("unable to read proxy file"), rather than found missing by the job."""
    if proxy is None:
        if use is None or not _submit_bool(use, where, "use_x509userproxy"):
            return
        proxy = environ.get("X509_USER_PROXY") or f"/tmp/x509up_u{os.getuid()}"
    path = _path(proxy, iwd)
    try:
        os.close(os.open(path, os.O_RDONLY))
    except OSError as e:
        unset = " ($ENV() of a variable that is not set is UNDEFINED)" if proxy == "UNDEFINED" else ""
        raise SubmitError(f"{where}: x509userproxy: unable to read proxy file {path}{unset}: {e.strerror}; make "
                          "one with voms-proxy-init --voms cms, or set X509_USER_PROXY to its path") from None
    ad["x509userproxy"] = path  # the attribute as condor_submit names it


def _submit_bool(value: str, where: str, key: str) -> bool:
    """A boolean submit command as condor_submit 23.9.6 reads it: ``true``/``false``/``1``/``0``
    in any case, else a ClassAd expression that evaluates to a boolean or a number
    (``hold = $(Process) == 1``); ``yes`` and anything else are refused, as there."""
    word = value.strip()
    for literal, result in (("true", True), ("false", False), ("1", True), ("0", False)):
        if word.lower() == literal:
            return result
    try:
        result = classad2.ExprTree(word).eval()
    except Exception:
        result = None
    if isinstance(result, (bool, int, float)) and not isinstance(result, classad2.Value):  # Value is an int enum
        return bool(result)
    raise SubmitError(f"{where}: {key} = {value} is invalid: it must evaluate to a boolean "
                      f"(true or false, or an expression such as $(Process) == 1)")


def _retries(ad: classad2.ClassAd, get, where: str, lines: Mapping[str, int]) -> None:
    """max_retries, retry_until and success_exit_code, as condor_submit 23.9.6 turns them into
    JobMaxRetries (2 unless given), JobSuccessExitCode and an OnExitRemove that ends the retries;
    a whole number for retry_until is the exit code that ends them, and the user's own
    on_exit_remove ends them too."""
    def at(name: str) -> str:
        return _at(where, lines, name)

    retries, until, success = get("max_retries"), get("retry_until"), get("success_exit_code")
    if retries is None and until is None and success is None:
        return
    ad["JobMaxRetries"] = _integer(retries or "2", at("max_retries"), "max_retries", "a number of retries", 0,
                                 evaluate=True)
    clauses = ["NumJobCompletions > JobMaxRetries"]
    if success is None:
        clauses.append("ExitCode =?= 0")
    else:
        ad["JobSuccessExitCode"] = _integer(success, at("success_exit_code"), "success_exit_code", "an exit code",
                                            -_INT32)
        clauses.append("ExitCode =?= JobSuccessExitCode")
    if until is not None:
        clauses.append(f"ExitCode =?= {until}" if re.fullmatch(r"[+-]?[0-9]+", until)
                       else str(_expression(until, at("retry_until"), "retry_until")))
    user = get("on_exit_remove")
    if user is not None:
        clauses.append(str(_expression(user, at("on_exit_remove"), "on_exit_remove")))
    ad["OnExitRemove"] = _expression(" || ".join(clauses), at("on_exit_remove"), "on_exit_remove")


def _transfer(ad: classad2.ClassAd, get, where: str, lines: Mapping[str, int]) -> None:
    """The file transfer commands as the job ad records them (ShouldTransferFiles, IF_NEEDED by
    default; WhenToTransferOutput; TransferInput and TransferOutput as comma lists, TransferOutputRemaps as
    its quoted string holds it), and condor_submit's refusals; the embedded schedd shares the submitter's files and moves none."""
    should = (get("should_transfer_files") or "IF_NEEDED").upper()
    if should not in ("YES", "NO", "IF_NEEDED"):
        raise SubmitError(f"{_at(where, lines, 'should_transfer_files')}: should_transfer_files: invalid value "
                          f"({should.lower()}); specify YES, NO, or IF_NEEDED")
    ad["ShouldTransferFiles"] = should
    executable = get("transfer_executable")
    if executable is not None and not _submit_bool(executable, _at(where, lines, "transfer_executable"),
                                                   "transfer_executable"):
        ad["TransferExecutable"] = False  # recorded only when false, as condor_submit 23.9.6 does
    destination = get("output_destination")
    if destination:
        raise SubmitError(f"{_at(where, lines, 'output_destination')}: output_destination = {destination}: the "
                          f"embedded schedd moves no files, so the output would stay in {ad['Iwd']} instead; remove "
                          "the line to keep it there, or submit with --backend htcondor to a pool that can write there")
    inputs = _comma_list(get("transfer_input_files"))
    outputs = get("transfer_output_files")
    for key, files in (("transfer_input_files", inputs), ("transfer_output_files", outputs)):
        if should == "NO" and files:
            raise SubmitError(f"{_at(where, lines, key)}: {key}: you disabled should_transfer_files; set "
                              "should_transfer_files = YES or drop the files")
    if should != "NO":
        when = (get("when_to_transfer_output") or "ON_EXIT").upper()
        ad["WhenToTransferOutput"] = when if when in ("ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS") else "ON_EXIT"
    if inputs:
        ad["TransferInput"] = inputs
    if outputs == '""':  # transfer_output_files = "": no output at all, rather than every new file
        ad["TransferOutput"] = ""
    elif outputs:
        ad["TransferOutput"] = _comma_list(outputs)
    remaps = get("transfer_output_remaps")
    if remaps is not None:
        if len(remaps) < 2 or remaps[0] != '"' or remaps[-1] != '"':
            raise SubmitError(f"{_at(where, lines, 'transfer_output_remaps')}: transfer_output_remaps must be a "
                              f"quoted string, not: {remaps}; write it as \"name = newname; ...\"")
        ad["TransferOutputRemaps"] = remaps[1:-1]


def _comma_list(value: str | None) -> str:
    """A file list as condor_submit stores it: its names joined by commas, blanks dropped."""
    return ",".join(name.strip() for name in (value or "").split(",") if name.strip())


def _getenv(value: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The submitter's variables ``getenv`` imports: all (true), none (false), or those of a
    list of names, where ``*`` matches any characters and ``!NAME`` leaves variables out, as
    condor_submit reads it (condor_submit_dag's list, for one)."""
    if value is None or value.lower() in ("false", "no", "0"):
        return {}
    # CONDOR_CONFIG=/dev/null is the bindings' own, set in this process when no HTCondor
    # configuration exists: not the submitter's, and not for the job
    environ = {k: v for k, v in environ.items() if (k, v) != ("CONDOR_CONFIG", os.devnull)}
    if value.lower() in ("true", "yes", "1"):
        return dict(environ)
    patterns = [p for p in re.split(r"[\s,]+", value) if p]
    wanted = [p for p in patterns if not p.startswith("!")]
    unwanted = [p[1:] for p in patterns if p.startswith("!")]
    return {name: text for name, text in environ.items()
            if any(fnmatch.fnmatchcase(name, p) for p in wanted)
            and not any(fnmatch.fnmatchcase(name, p) for p in unwanted)}


def _closing_quote(text: str) -> int | None:
    """The index of the double quote that closes ``text`` (which starts with one); ``""`` is a
    literal quote.  None if none does."""
    i = 1
    while i < len(text):
        if text[i] == '"':
            if text[i + 1:i + 2] != '"':
                return i
            i += 1
        i += 1
    return None


def _split_new_syntax(text: str) -> list[str]:
    """HTCondor's V2 raw quoting: blanks separate, single quotes group, '' in them is a quote."""
    args: list[str] = []
    current: list[str] = []
    in_word = in_quotes = False
    i = 0
    while i < len(text):
        ch = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if in_quotes:
            if ch == "'":
                if nxt == "'":
                    current.append("'")
                    i += 2
                    continue
                in_quotes = False
            else:
                current.append(ch)
        elif ch == "'":
            in_quotes = in_word = True
        elif ch in " \t":
            if in_word:
                args.append("".join(current))
                current, in_word = [], False
        else:
            current.append(ch)
            in_word = True
        i += 1
    if in_quotes:
        raise ValueError(f"unbalanced single quote in {text!r}")
    if in_word:
        args.append("".join(current))
    return args


