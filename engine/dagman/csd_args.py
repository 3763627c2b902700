"""condor_submit_dag's command line, read as HTCondor 23.9.6 reads it.

condor_submit_dag lower-cases each word and takes the first flag, in case-insensitive
alphabetical order, that the word begins (dagman_utils.h ``dagOptionsInfoMap`` and
``DagmanOptions::AutoParse``): ``-maxj`` is -MaxJobs, ``-m`` is -MaxHold, ``-no_s`` is
-no_submit, ``-not`` is -Notification, ``-a`` is -AllowVersionMismatch.  A word holding ``-h``
or ``-vers`` asks for help or the version before anything else.  Two dashes spell no option to
condor_submit_dag; crabtui also takes ``--`` with a flag's full name (``--maxjobs``).

Every flag of the real tool is listed: those crabtui implements give values, the others are
refused in one line that says why and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ArgumentError(Exception):
    """A command line refused; the message names the word as typed and what to do."""


@dataclass(frozen=True)
class Flag:
    """One condor_submit_dag flag: its name as the tool spells it, what follows it (``None``
    for a flag alone, else a description of the value), and why crabtui refuses it, if it does."""

    name: str
    value: str | None = None
    integer: bool = False
    refused: str | None = None


_SCHEDD = "crabtui submits to the schedd --backend names: the embedded one, or CONDOR_CONFIG's pool"

# In condor_submit_dag's order (case-insensitive alphabetical), which decides short prefixes.
FLAGS = sorted([
    Flag("-AllowVersionMismatch"),
    Flag("-AlwaysRunPost"),
    Flag("-Append", "a submit command for the DAGMan job, e.g. 'My.Tag = \"x\"'"),
    Flag("-AutoRescue", "0 or 1", integer=True),
    Flag("-Batch-Name", "the batch name condor_q shows"),
    Flag("-Config", "a DAGMan configuration file"),
    Flag("-CsdVersion", "a version", refused="condor_submit_dag writes it itself; leave it out"),
    Flag("-Dag", "a DAG file"),
    Flag("-DAGMan", "the path of condor_dagman"),
    Flag("-Debug", "a verbosity level", integer=True),
    Flag("-do_recurse"),
    Flag("-dont_suppress_notification",
         refused="node jobs' e-mail is not sent from here; -notification sets the DAGMan job's own"),
    Flag("-DontAlwaysRunPost", refused="it is the default: set DAGMAN_ALWAYS_RUN_POST = False in the "
                                       "DAG's CONFIG file if the config turns it on"),
    Flag("-DoRecovery"),
    Flag("-DoRescueFrom", "a rescue DAG number", integer=True),
    Flag("-Dot", refused="it is condor_dagman's; put DOT FILE in the DAG instead"),
    Flag("-DryRun", refused="it is condor_dagman's; `crabtui dag check DAG` checks a DAG without running it"),
    Flag("-DumpRescue", refused="`crabtui dag check --json DAG` shows how the DAG is read"),
    Flag("-f"),
    Flag("-Force"),
    Flag("-import_env"),
    Flag("-include_env", "variable names separated by commas"),
    Flag("-insert_env", "KEY=VALUE pairs separated by ';'"),
    Flag("-insert_sub_file", "a file of submit commands"),
    Flag("-load_save", "a save point file"),
    Flag("-Lockfile", "a lock file", refused="condor_submit_dag names the lock file DAG.lock; leave it out"),
    Flag("-MaxIdle", "a number", integer=True),
    Flag("-MaxHold", "a number", integer=True),
    Flag("-MaxJobs", "a number", integer=True),
    Flag("-MaxPost", "a number", integer=True),
    Flag("-MaxPre", "a number", integer=True),
    Flag("-no_recurse"),
    Flag("-no_submit"),
    Flag("-Notification", "never, always, complete or error"),
    Flag("-outfile_dir", "a directory"),
    Flag("-Priority", "a number", integer=True),
    Flag("-Remote", "a schedd name", refused=_SCHEDD),
    Flag("-schedd-address-file", "a file", refused=_SCHEDD),
    Flag("-schedd-daemon-ad-file", "a file", refused=_SCHEDD),
    Flag("-suppress_notification"),
    Flag("-SubmitMethod", "0 or 1", integer=True, refused="crabtui's DAGMan submits node jobs to its schedd "
                                                         "directly; leave it out"),
    Flag("-update_submit"),
    Flag("-UseDagDir"),
    Flag("-v"),
    Flag("-Valgrind", refused="crabtui's DAGMan is no C++ program; leave it out"),
    Flag("-Verbose"),
], key=lambda f: f.name.lower())

# What each number limits, for the message when it is not a number.
_MEANING = {
    "-MaxJobs": "the most node jobs to have queued at once", "-MaxIdle": "the most idle node job procs",
    "-MaxPre": "the most PRE scripts to run at once", "-MaxPost": "the most POST scripts to run at once",
    "-MaxHold": "the most HOLD scripts to run at once", "-DoRescueFrom": "the number of the rescue DAG to run from",
    "-Priority": "the priority added to every node job's", "-AutoRescue": "0 or 1", "-Debug": "a level from 0 to 7",
    "-SubmitMethod": "0 or 1",
}
# crabtui's earlier long spellings, kept.
_LONG = {"--always-run-post": "-AlwaysRunPost", "--outfile-dir": "-outfile_dir", "--load-save": "-load_save"}
NOTIFICATIONS = ("never", "always", "complete", "error")


def find_flag(word: str) -> Flag | None:
    """The flag ``word`` means to condor_submit_dag 23.9.6 (``-`` and a prefix, first in its
    order), or to crabtui (``--`` and a full name); None for no flag."""
    lower = word.lower()
    if lower in _LONG:
        lower = _LONG[lower].lower()
    elif lower.startswith("--"):
        return next((f for f in FLAGS if f.name.lower() == lower[1:]), None)
    return next((f for f in FLAGS if f.name.lower().startswith(lower)), None) if len(lower) > 1 else None


def wants_help(word: str) -> bool:
    """condor_submit_dag prints its usage for any option word holding ``-h`` (``-help``)."""
    return word.startswith("-") and "-h" in word.lower()


def wants_version(word: str) -> bool:
    return word.startswith("-") and "-vers" in word.lower()


@dataclass
class SubmitDagArgs:
    """The words of a condor_submit_dag command line: the DAG files and each flag's values."""

    dag_files: list[str] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)  # flag name -> values in order
    typed: dict[str, str] = field(default_factory=dict)  # flag name -> the word that gave it

    def has(self, name: str) -> bool:
        return name in self.values

    def last(self, name: str) -> str | None:
        return self.values[name][-1] if self.values.get(name) else None

    def number(self, name: str) -> int:
        return int(self.last(name) or 0)


def parse(argv: list[str], command: str = "crabtui dag submit") -> SubmitDagArgs:
    """Read ``argv`` as condor_submit_dag does; a refused or unknown flag, a missing or bad
    value is :class:`ArgumentError` naming the word typed."""
    args = SubmitDagArgs()
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if not word.startswith("-") or word == "-":
            args.dag_files.append(word)
            continue
        flag = find_flag(word)
        if flag is None:
            raise ArgumentError(f"{word}: no such condor_submit_dag option; see '{command} --help'")
        shown = word if word.lower().lstrip("-") == flag.name.lower().lstrip("-") else f"{word} ({flag.name})"
        if flag.refused:
            raise ArgumentError(f"{shown}: crabtui does not support this condor_submit_dag option: {flag.refused}")
        if flag.value is None:
            args.values.setdefault(flag.name, [])
            args.typed[flag.name] = word
            continue
        if i >= len(argv) or (argv[i].startswith("-") and not flag.integer):
            raise ArgumentError(f"{shown}: give {flag.value} after it")
        value = argv[i]
        i += 1
        if flag.integer:
            _check_number(shown, flag.name, value)
        if flag.name == "-Notification" and value.lower() not in NOTIFICATIONS:
            raise ArgumentError(f"{shown}: {value!r} is no notification setting; give never, always, complete or error")
        if flag.name == "-Dag":
            args.dag_files.append(value)
            continue
        args.values.setdefault(flag.name, []).append(value)
        args.typed[flag.name] = word
    return args


def _check_number(shown: str, name: str, value: str) -> None:
    try:
        number = int(value)
    except ValueError:
        raise ArgumentError(f"{shown}: {value!r} is not a number; give {_MEANING[name]}") from None
    if number < 0 and name != "-Priority":
        raise ArgumentError(f"{shown}: {value} is negative; give {_MEANING[name]}, 0 for DAGMan's default")
    if name == "-Debug" and number > 7:
        raise ArgumentError(f"{shown}: {value} is above 7; give {_MEANING[name]}")
