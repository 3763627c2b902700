"""Inputs as users (and accidents) write them, generated for fuzzing, and what each reader must do
with them: return, or refuse with its own one-line error; never another exception, never a hang
(issue 20, part 4).  tests/test_bad_input.py runs a bounded number of each kind in the suite;
bench/fuzz.py runs 10,000 of each and counts.

A kind is a hypothesis strategy and a check: ``check(case, workdir)`` returns "accepted" or
"refused", raises AssertionError when a refusal is not one line naming the file, and lets any
other exception through: that is a traceback a user would have seen.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from dag.test_fuzz import check_parse, file_sets, line_soups, mutants, soups

# Values users mistype: words for numbers, digits of other scripts, numbers too long to read or to
# fit, NUL, quotes, non-UTF-8 text, expressions.
NASTY = ["two", "high", "²", "٣", "1e3", "-1", "0", "1", "2", "3.5", "+7", "9" * 30, "9" * 5000, "\x00", "\\u0000",
         '"', "'", "''", '""', "é", "\u2028", "true", "false", "[", "]", "{", "}", "=", "#", "$(x)", "$(Process)",
         "ClusterId == 1", "TARGET.Memory > 2", "((", "/dev/zero", "/nonexistent/x", "a b", "\t", ""]
nasty = st.sampled_from(NASTY)
values = st.one_of(nasty, nasty, nasty, st.text(max_size=12), st.integers(-2**70, 2**70).map(str))


@st.composite
def lines_of(draw, keys: list[str], separator: str = " = ", header: list[str] = ()) -> str:
    """Lines ``key = value`` of the commands a file knows, mistyped keys and stray text."""
    lines = list(header)
    for _ in range(draw(st.integers(0, 10))):
        key = draw(st.one_of(st.sampled_from(keys), st.text(min_size=1, max_size=8)))
        lines.append(draw(st.one_of(st.just(f"{key}{separator}{draw(values)}"), values)))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


def encoded(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """The text as UTF-8, now and then with bytes that are not UTF-8 spliced in."""
    def splice(args):
        text, junk, at = args
        data = text.encode("utf-8", "surrogateescape")
        at = min(at, len(data))
        return data[:at] + junk + data[at:]
    return st.tuples(texts, st.sampled_from([b"", b"", b"", b"\xff", b"\xc3", b"\x80\xfe"]),
                     st.integers(0, 400)).map(splice)


def _one_line(message: str, file: str | None = None) -> None:
    assert message and "\n" not in message.strip(), f"not one line: {message!r}"
    assert "Traceback" not in message, message
    if file is not None:
        assert file in message, f"the message does not name {file}: {message!r}"


# ------------------------------------------------------------------------------------ DAG files

def dag_cases():
    return st.one_of(soups().map(lambda t: {"main.dag": t}), line_soups().map(lambda t: {"main.dag": t}),
                     mutants().map(lambda t: {"main.dag": t}), file_sets(), st.builds(_deep_includes, st.integers(1, 120)))


def _deep_includes(depth: int) -> dict[str, str]:
    files = {f"inc{i}.dag": f"INCLUDE inc{i + 1}.dag\n" for i in range(depth)}
    files[f"inc{depth}.dag"] = "JOB A a.sub\nRETRY A " + "9" * 5000 + "\nINCLUDE /dev/zero\n"
    files["main.dag"] = "INCLUDE inc0.dag\n"
    return files


def check_dag(files: dict[str, str], workdir: Path) -> str:
    """The DAG in ``files`` (name: text; a name ending in ``.fifo`` is made a FIFO) parses, or
    is refused with located errors."""
    for name, text in files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".fifo"):
            os.mkfifo(path)
        else:
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
    from engine.dag import parse_file

    main = workdir / ("main.dag" if "main.dag" in files else sorted(files)[0])
    return "accepted" if check_parse(lambda: parse_file(main)) is not None else "refused"


# ------------------------------------------------------------------------------------ submit files

SUBMIT_KEYS = ["executable", "arguments", "environment", "getenv", "input", "output", "error", "log",
               "initialdir", "universe", "request_cpus", "request_memory", "request_disk", "priority", "hold",
               "max_retries", "success_exit_code", "requirements", "rank", "periodic_hold", "on_exit_remove",
               "kill_sig", "batch_name", "+MyAttr", "My.Other", "exectuable", "queue"]
QUEUE_LINES = ["queue", "queue 2", "queue 100000000", "queue " + "9" * 5000, "queue $(n)", "queue x in (a, b)",
               "queue x from (", "queue 2 x matching *.none", "queue two", "queue -1", ""]


@st.composite
def submit_cases(draw) -> bytes:
    text = draw(lines_of(SUBMIT_KEYS, header=["executable = /bin/true"]))
    return draw(encoded(st.just(text + "\n" + draw(st.sampled_from(QUEUE_LINES)) + "\n")))


def check_submit(data: bytes, workdir: Path) -> str:
    from engine.schedd.api import ScheddError
    from engine.schedd.local.submit import SubmitDescription, build_job_ads, read_submit_file

    path = workdir / "job.sub"
    path.write_bytes(data)
    try:
        text = read_submit_file(str(path))
        build_job_ads(SubmitDescription(text, str(path), str(workdir)), 1, now=0)
    except ScheddError as e:
        _one_line(str(e), str(path))
        return "refused"
    return "accepted"


# ------------------------------------------------------------------------------------ TOML files

@dataclass(frozen=True)
class TomlKind:
    name: str
    valid: str  # a file the reader takes, which the cases mutate
    keys: list[str]
    load: Callable[[str], object]
    error: Callable[[], type]


@st.composite
def mutated(draw, valid: str, keys: list[str]) -> str:
    """``valid`` with up to three lines deleted, replaced by or added as ``key = value`` or stray text."""
    lines = valid.splitlines()
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(lines)))
        new = draw(lines_of(keys)).split("\n")[:1] or [""]
        action = draw(st.sampled_from(["insert", "replace", "delete"]))
        if action == "insert" or at == len(lines):
            lines[at:at] = new
        elif action == "replace":
            lines[at] = new[0]
        else:
            del lines[at]
    if draw(st.integers(0, 30)) == 0:
        lines.append("nest = " + "[" * 2000 + "]" * 2000)
    return "\n".join(lines) + "\n"


def _toml_cases(kind: TomlKind):
    return encoded(mutated(kind.valid, kind.keys))


def _check_toml(kind: TomlKind) -> Callable[[bytes, Path], str]:
    def check(data: bytes, workdir: Path) -> str:
        path = workdir / f"{kind.name}.toml"
        path.write_bytes(data)
        try:
            kind.load(str(path))
        except kind.error() as e:
            _one_line(str(e), str(path))
            return "refused"
        return "accepted"
    return check


def _load_pool(path: str):
    from engine.schedd.local.pool import load_pool
    return load_pool(path, os.path.dirname(path))


def _pool_error():
    from engine.schedd.local.pool import PoolConfigError
    return PoolConfigError


def _load_task(path: str):
    from engine.crab.client.config import load_config
    return load_config(path)


def _task_error():
    from engine.crab.client.config import ConfigError
    return ConfigError


def _load_knobs(path: str):
    from engine.crab.taskworker.config import load_config
    return load_config(path)


def _knobs_error():
    from engine.crab.taskworker.config import TaskWorkerConfigError
    return TaskWorkerConfigError


def _load_keymap(path: str):
    from crabtui.keymap import load_keymap
    return load_keymap(path, ["hold", "release", "kill", "quit"])


def _keymap_error():
    from crabtui.keymap import KeymapError
    return KeymapError


TOML_KINDS = [
    TomlKind("pool", '[[site]]\nname = "T2_CH_CERN"\nslots = 2\nmemory = 2000\nstart = "true"\n'
                     '[site.attributes]\nSpeed = 1.5\n[[site]]\nname = "T2_DE_DESY"\n',
             ["name", "slots", "cpus", "memory", "disk", "start", "speed", "failures", "Speed", "OpSys", "[[site]]"],
             _load_pool, _pool_error),
    TomlKind("taskconfig", '[General]\nrequestName = "fuzz"\n[JobType]\npluginName = "Analysis"\n'
                           'psetName = "pset.py"\n[Data]\ninputDataset = "/A/B/MINIAOD"\nsplitting = "FileBased"\n'
                           'unitsPerJob = 1\n[Site]\nstorageSite = "T2_CH_CERN"\n',
             ["requestName", "workArea", "transferOutputs", "pluginName", "psetName", "maxMemoryMB", "numCores",
              "inputDataset", "splitting", "unitsPerJob", "totalUnits", "storageSite", "whitelist", "blacklist",
              "maxJobRuntimeMin", "outputFiles", "[Debug]"],
             _load_task, _task_error),
    TomlKind("taskworker", "[TaskWorker]\nminAutomaticRuntimeMins = 30\nnumAutomaticProbes = 5\n"
                           "automaticTailRuntimeFraction = 0.2\nminAutomaticTailTriggers = [50, 80, 100]\n",
             ["numAutomJobRetries", "minAutomaticRuntimeMins", "numAutomaticProbes", "automaticTailRuntimeMinimumMins",
              "automaticTailRuntimeFraction", "minAutomaticTailTriggers", "maxJobsPerTask", "[TaskWorker]"],
             _load_knobs, _knobs_error),
    TomlKind("keymap", '[keys]\nhold = "ctrl+h"\nkill = "K,ctrl+k"\n', ["hold", "release", "kill", "quit", "nothing"],
             _load_keymap, _keymap_error),
]


# ------------------------------------------------------------------------------------ state directories

@dataclass(frozen=True)
class StateCase:
    path: str  # relative to the work directory; blank for an empty --state-dir
    kind: str  # what is there: missing, dir, file, link, fifo
    mode: int  # of the directory
    planted: tuple[str, str] | None  # (how, name): a file of the state directory as a link, or loose


state_cases = st.builds(
    StateCase,
    st.one_of(st.sampled_from(["", " ", "state", "a/b/state", "x" * 300, "st\x00ate", "état", "\udcff"]),
              st.text(min_size=1, max_size=20)),
    st.sampled_from(["missing", "dir", "dir", "file", "link", "fifo"]),
    st.sampled_from([0o700, 0o755, 0o775, 0o777, 0o500, 0o000, 0o702]),
    st.one_of(st.none(), st.tuples(st.sampled_from(["link", "loose"]),
                                   st.sampled_from(["schedd.sqlite3", "spool", "schedd.sock", "schedd.log"]))))


def check_state_dir(case: StateCase, workdir: Path) -> str:
    from engine.state import StateDir, StateDirError, check_state, state_dir

    argument = case.path
    if case.path.strip() and "\x00" not in case.path:
        argument = str(workdir / "s" / case.path.lstrip("/"))
        _make_state(case, argument, workdir)
    try:
        state = state_dir(argument)
        check_state(StateDir(state.path))
    except StateDirError as e:
        _one_line(str(e))
        return "refused"
    finally:
        _unlock(workdir)
    return "accepted"


def _make_state(case: StateCase, path: str, workdir: Path) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if case.kind == "dir":
            os.mkdir(path)
            if case.planted:
                how, name = case.planted
                planted = os.path.join(path, name)
                if how == "link":
                    os.symlink(workdir, planted)
                else:
                    Path(planted).write_text("")
                    os.chmod(planted, 0o666)
            os.chmod(path, case.mode)
        elif case.kind == "file":
            Path(path).write_text("")
        elif case.kind == "link":
            os.symlink(workdir, path)
        elif case.kind == "fifo":
            os.mkfifo(path)
    except (OSError, ValueError, UnicodeEncodeError):
        pass  # a name the file system refuses: state_dir must say so itself


def _unlock(workdir: Path) -> None:
    """Make every directory of the case removable again."""
    for root, dirs, _ in os.walk(workdir):
        for d in dirs:
            try:
                full = os.path.join(root, d)
                if not os.path.islink(full):
                    os.chmod(full, stat.S_IRWXU)
            except OSError:
                pass


# ------------------------------------------------------------------------------------ job ids on the command line

id_words = st.one_of(st.sampled_from(["1", "1.0", "2", "1.1", "0", "0.0", "²", "1.²", "٣", "99999999999999999999999",
                                      "1.99999999999999999999", "-1", "1.", ".1", "1..2", "1.0.0", " 1", "1 ",
                                      "", "\x00", "ClusterId == 1", "true", "-constraint", "é"]),
                     st.text(max_size=10), st.integers(-2**80, 2**80).map(str))
cli_cases = st.tuples(st.sampled_from(["rm", "hold", "release", "q", "history"]), st.lists(id_words, max_size=4),
                      st.sampled_from([None, None, "true", "ClusterId == 1", "((", "x ==", "\x00", "ProcId > 99999999999999999999"]))


def check_cli(case, runner_state: str) -> str:
    """One command through the real command line (click's runner, in this process); a refusal
    says why (as HTCondor's tools word it: a line per job id) with a non-zero exit status."""
    from click.testing import CliRunner

    from crabtui.cli import main

    command, ids, constraint = case
    args = ["--state-dir", runner_state, command, *ids]
    if constraint is not None:
        args += ["-constraint", constraint]
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    if result.exit_code == 0:
        return "accepted"
    assert result.output.strip(), "a refusal says why"  # in condor_rm's words, a line per id
    return "refused"


HUGE = "1" + "0" * 5000
KNOWN = {  # the cases issue 20 found, each kind's first
    "DAG files": [{"main.dag": f"JOB A a.sub\nRETRY A {HUGE}\n"}, _deep_includes(250),
                  {"main.dag": "INCLUDE x.fifo\n", "x.fifo": ""}, {"main.dag": "INCLUDE /dev/zero\n"}],
    "submit files": [f"executable = /bin/true\n{line}\n".encode() for line in
                     ("request_cpus = two\nqueue", "priority = high\nqueue", "queue 100000000", f"queue {HUGE}")]
                    + [b"executable = /bin/\xff\nqueue\n"],
    "pool.toml": [b'[[site]]\nname = "A"\nstart = "\\u0000"\n', b'[[site]]\nname = "A"\nslots = 100000000\n',
                  f'[[site]]\nname = "A"\nslots = {HUGE}\n'.encode(), b'[[site]]\nname = "\xff"\n'],
    "taskconfig.toml": [f'[General]\nrequestName = "x"\ntransferOutputs = {HUGE}\n'.encode(),
                        b'[General]\nrequestName = "\xff\xfe"\n'],
    "taskworker.toml": [f"[TaskWorker]\nnumAutomaticProbes = {HUGE}\n".encode(), b"[TaskWorker]\n\xff = 1\n"],
    "keymap.toml": [f"[keys]\nhold = {HUGE}\n".encode(), b'[keys]\nhold = "\xff"\n'],
    "state directories": [StateCase("f", "file", 0o700, None), StateCase("ro", "dir", 0o500, None),
                          StateCase("", "missing", 0o700, None), StateCase("gw", "dir", 0o777, None)],
}
KNOWN_CLI = [("rm", ["²"], None), ("rm", ["99999999999999999999999"], None), ("hold", ["1"], "true")]

KINDS: dict[str, tuple[st.SearchStrategy, Callable]] = {
    "DAG files": (dag_cases(), check_dag),
    "submit files": (submit_cases(), check_submit),
    **{f"{kind.name}.toml": (_toml_cases(kind), _check_toml(kind)) for kind in TOML_KINDS},
    "state directories": (state_cases, check_state_dir),
}
