"""Read DAG files as condor_dagman does, and report every problem as ``FILE:LINE: message``.

DAGMan reads a file twice: pass 1 declares nodes (JOB, FINAL, SUBDAG, SPLICE, ...), pass 2
applies everything else in file order, INCLUDE files being read in place during pass 2.  This
parser reads each file once and gets the same result: a command that names a node not yet
declared waits until the declaration, then runs before any later command on that node.  Which
declarations a waiting command may see follows DAGMan's passes: those of the files being read
when the command was seen (the file itself and the files that INCLUDE it), never those of an
INCLUDE further down, which DAGMan would not have read yet.

The language is HTCondor's (see docs "DAGMan reference"): keywords are case-insensitive with
``-`` and ``_`` interchangeable, ``#`` and ``//`` start whole-line comments, a trailing ``\\``
continues a command, and VARS values may be double-quoted, single-quoted or bare.
"""

from __future__ import annotations

import io
import operator
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from engine.dag.errors import DagError, Diagnostic, Location
from engine.gcpause import gc_paused
from engine.dag.model import (
    AbortDagOn,
    Connect,
    Dag,
    Dependency,
    Dot,
    Node,
    NodeKind,
    NodeStatusFile,
    Script,
    ScriptKind,
    Splice,
    Var,
    VarsPlacement,
)

__all__ = ["parse_file", "parse_text", "RESERVED_NODE_NAMES", "ALL_NODES"]

ALL_NODES = "ALL_NODES"
RESERVED_NODE_NAMES = frozenset({"PARENT", "CHILD", ALL_NODES})
SUBDAG_SUBMIT_SUFFIX = ".condor.sub"

_INT = re.compile(r"[+-]?[0-9]+\Z")
_VAR_NAME = re.compile(r"\+?[A-Za-z0-9_.]+")
_VAR_PAIR = re.compile(
    r"""[ \t]*(\+?[A-Za-z0-9_.]+)[ \t]*=[ \t]*"""
    r"""(?:"([^"\\]*(?:\\.[^"\\]*)*)"|'([^'\\]*(?:\\.[^'\\]*)*)'|([^\s"']+))(?=[ \t]|\Z)"""
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_SCRIPT_KINDS = {spelling: kind for kind in ScriptKind for spelling in (kind.value, kind.value.lower())}
_DEFER = ("DEFER", "defer", "Defer")
_UNLESS_EXIT = ("UNLESS-EXIT", "unless-exit", "UNLESS_EXIT", "unless_exit")
_RETURN = ("RETURN", "return", "Return")
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
_FIRST_GROUP = operator.itemgetter(1)
_SPECIAL_KINDS = (NodeKind.FINAL, NodeKind.SERVICE, NodeKind.PROVISIONER)


# An inline description's arguments in the new syntax (double-quoted), which 23.9.6 may refuse.
_NEW_SYNTAX_ARGUMENTS = re.compile(r"(?i)(arguments|args)\s*=\s*\"")
# Seen on the 23.9.6 pool, with and without PARENT/CHILD lines; ``JOB A a.sub DONE`` runs.
DONE_LINE_CRASH = "HTCondor 23.9.6's DAGMan crashes on a DONE line of the DAG it runs"


def _literal(text: str) -> str:
    """``text`` as it stands in a :attr:`Diagnostic.logged` template, which is formatted with where
    the line was read: a VARS value's braces (JSON) kept as written."""
    return text.replace("{", "{{").replace("}", "}}")


MAX_NESTING = 64
"""INCLUDE and SPLICE files open at once, one inside the other."""

MAX_FILE_BYTES = 512 << 20
"""The size of each DAG file read (a DAG of a million nodes takes about 100 MB)."""

MAX_INT = 2**31 - 1


class _LineError(Exception):
    """A problem with the command being read; becomes a diagnostic at its line."""


def parse_file(path: str | os.PathLike[str]) -> Dag:
    """Parse a DAG file and every file it INCLUDEs or SPLICEs.

    Relative INCLUDE and SPLICE paths are taken from the DAG file's directory, where DAGMan
    runs.  Raises :class:`DagError` with all errors found; warnings are on ``Dag.warnings``.
    """
    path = os.fspath(path)
    context = _Context(on_disk=True)
    scope = _Scope(context, Dag(file=path), os.path.dirname(path), splice=None)
    with gc_paused():
        scope.read_file(path, path, at=None)
        return context.finish(scope)


def parse_text(text: str, file: str = "<string>", base_dir: str | None = None) -> Dag:
    """Parse DAG text held in memory; INCLUDE and SPLICE paths are taken from ``base_dir`` (else
    the current directory).  Given a ``base_dir``, the DAG lives there: its node DIRs must exist."""
    context = _Context(on_disk=base_dir is not None)
    scope = _Scope(context, Dag(file=file), "." if base_dir is None else base_dir, splice=None)
    with gc_paused():
        scope.read_lines(io.StringIO(text, newline=None), file, at=None)
        return context.finish(scope)


# What DAGMan 23.9.6 logs when an ALL_NODES command passes over the FINAL node (seen on the pool;
# the stray "s" after ABORT-DAG-ON's line is DAGMan's own): the parse function, the reason, the tail.
_FINAL_SKIPPED = {
    "_apply_vars": ("vars", "must have VARS set explicitly", ""),
    "_apply_retry": ("retry", "cannot have RETRY specifications", ""),
    "_apply_script": ("script", "must have SCRIPT set explicitly", ""),
    "_apply_pre_skip": ("pre_skip", "must have PRE_SKIP set explicitly", ""),
    "_apply_abort": ("abort", "cannot have ABORT-DAG-ON specification", "s"),
    "_apply_priority": ("priority", "cannot have PRIORITY specifications", ""),
    "_apply_category": ("category", "cannot have CATEGORY specifications", ""),
}


@dataclass(slots=True)
class _Context:
    """What one parse shares across files and splices: its diagnostics and the file stack."""

    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    open_files: list[str] = field(default_factory=list)
    file_order: dict[str, int] = field(default_factory=dict)
    frame_count: int = 0
    var_names: dict[str, str] = field(default_factory=dict)  # VARS names as written -> checked
    on_disk: bool = False  # the DAG is read from its directory, whose node DIRs must exist

    def finish(self, scope: _Scope) -> Dag:
        scope.close()
        dag = scope.dag
        self.errors = _in_file_order(self.errors, self.file_order)
        self.warnings = _in_file_order(self.warnings, self.file_order)
        dag.warnings = self.warnings
        if self.errors:
            raise DagError(self.errors, self.warnings)
        return dag


@dataclass(slots=True)
class _Waiting:
    """A command that names a node not declared yet (or applies to ALL_NODES)."""

    seq: int
    frames: frozenset[int]
    location: Location
    apply: Callable[..., None] | None  # None: a PARENT/CHILD or PIN reference only checks the name
    args: tuple
    splice_ok: bool = False


class _Frame:
    """One file being read: the INCLUDEd frames and the nodes they declare, for DAGMan's node order.

    The nodes of the root file are not listed: they come first, in the order they were declared.
    """

    __slots__ = ("id", "nodes", "includes")

    def __init__(self, frame_id: int):
        self.id = frame_id
        self.nodes: list[str] = []
        self.includes: list[_Frame] = []

    def included_nodes(self) -> Iterator[str]:
        for include in self.includes:
            yield from include.nodes
            yield from include.included_nodes()


class _Scope:
    """Reads one DAG (the top-level file or a splice) with the files it INCLUDEs."""

    def __init__(self, context: _Context, dag: Dag, base_dir: str, splice: str | None):
        self.context = context
        self.dag = dag
        self.base_dir = base_dir
        self.splice = splice
        self.waiting: dict[str, list[_Waiting]] = {}
        self.all_nodes: list[_Waiting] = []
        self.frames: list[_Frame] = []
        self.root_frame: _Frame | None = None
        self.seq = 0
        self.includes_read = 0  # INCLUDE files read to their end: DAGMan lifts the splices then
        self.connect_context: list[tuple[int, int, int]] = []  # per CONNECT: includes read, PARENT and CONNECT lines before
        self.file = dag.file
        self.lineno = 0
        self.lines: Iterator[tuple[int, str]] = iter(())
        self.applying: Location | None = None  # a waiting command's line while it runs
        self.values: dict[str, str] = {}  # last value per VARS name, so equal values share one string
        self.lower_names: dict[str, str] = {}  # VARS names compare case-insensitively
        self.var_names = context.var_names
        self.aborts: dict[tuple[int, int | None], AbortDagOn] = {}
        self.dispatch: dict[str, Callable[[str], None]] = {}
        self.handlers = {
            "JOB": self._job,
            "FINAL": self._final,
            "PROVISIONER": self._provisioner,
            "SERVICE": self._service,
            "SUBDAG": self._subdag,
            "SPLICE": self._splice,
            "SUBMIT_DESCRIPTION": self._submit_description,
            "SCRIPT": self._script,
            "PARENT": self._parent,
            "RETRY": self._retry,
            "ABORT_DAG_ON": self._abort_dag_on,
            "VARS": self._vars,
            "PRIORITY": self._priority,
            "CATEGORY": self._category,
            "MAXJOBS": self._maxjobs,
            "PRE_SKIP": self._pre_skip,
            "DONE": self._done,
            "SAVE_POINT_FILE": self._save_point_file,
            "CONFIG": self._config,
            "SET_JOB_ATTR": self._set_job_attr,
            "ENV": self._env,
            "DOT": self._dot,
            "NODE_STATUS_FILE": self._node_status_file,
            "JOBSTATE_LOG": self._jobstate_log,
            "REJECT": self._reject,
            "INCLUDE": self._include,
            "CONNECT": self._connect,
            "PIN_IN": self._pin_in,
            "PIN_OUT": self._pin_out,
        }

    # ---------------------------------------------------------------- reading lines

    def read_file(self, path: str, display: str, at: Location | None) -> None:
        """Read ``path`` (shown as ``display``) in place; ``at`` is the line that named it.  Only a
        regular file of at most :data:`MAX_FILE_BYTES`, nested at most :data:`MAX_NESTING` deep, is
        read: a FIFO would hang the parse and /dev/zero fill the memory."""
        where = at or Location(display)
        real = os.path.realpath(path)
        if real in self.context.open_files:
            self._error_at(where, f"recursive INCLUDE or SPLICE: {display} is already being read")
            return
        if len(self.context.open_files) >= MAX_NESTING:
            self._error_at(where, f"INCLUDE and SPLICE nested more than {MAX_NESTING} files deep; "
                                  "flatten the DAG files")
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            self._error_at(where, f"cannot read DAG file {display}: {e.strerror or e}")
            return
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            os.close(fd)
            problem = ("is not a regular file" if not stat.S_ISREG(info.st_mode)
                       else f"is larger than {MAX_FILE_BYTES >> 20} MB")
            self._error_at(where, f"cannot read DAG file {display}: it {problem}")
            return
        stream = open(fd, encoding="utf-8", errors="surrogateescape")
        self.context.open_files.append(real)
        try:
            with stream:
                self.read_lines(stream, display, at)
        finally:
            self.context.open_files.pop()

    def read_lines(self, lines, display: str, at: Location | None) -> None:
        frame = _Frame(self.context.frame_count)
        self.context.frame_count += 1
        self.context.file_order.setdefault(display, len(self.context.file_order))
        if self.frames:
            self.frames[-1].includes.append(frame)
        else:
            self.root_frame = frame
        self.frames.append(frame)
        saved = (self.file, self.lineno, self.lines)
        self.file = display
        self.lines = enumerate(lines, 1)
        try:
            self._loop()
        finally:
            self.file, self.lineno, self.lines = saved
            self.frames.pop()

    def _loop(self) -> None:
        dispatch = self.dispatch
        for lineno, raw in self.lines:
            line = raw.strip()
            if not line:
                continue
            first = line[0]
            if first == "#" or (first == "/" and line[1:2] == "/"):
                continue
            self.lineno = lineno
            self.seq += 1
            if line[-1] == "\\":
                line = self._continued(line)
                if not line:
                    continue
            head = line.split(None, 1)
            keyword = head[0]
            handler = dispatch.get(keyword)
            try:
                if handler is None:
                    handler = self._handler_for(keyword)
                handler(head[1] if len(head) > 1 else "")
            except _LineError as e:
                self._error(str(e))

    def _continued(self, line: str) -> str:
        """Join ``\\``-continued lines with one space, skipping comment lines between them."""
        pieces = [line[:-1].strip()]
        for _, raw in self.lines:
            nxt = raw.strip()
            if nxt[:1] == "#" or nxt[:2] == "//":
                continue
            if nxt[-1:] == "\\":
                pieces.append(nxt[:-1].strip())
                continue
            pieces.append(nxt)
            break
        return " ".join(p for p in pieces if p)

    def _handler_for(self, keyword: str) -> Callable[[str], None]:
        handler = self.handlers.get(keyword.upper().replace("-", "_"))
        if handler is None:
            raise _LineError(f"unknown command {keyword!r}; expected a DAG command such as JOB, PARENT, SCRIPT, VARS or RETRY")
        self.dispatch[keyword] = handler
        return handler

    def _read_block(self, end: str) -> tuple[str, str]:
        """Read an inline submit description up to its ``end`` line; return (body, rest of end line)."""
        start = self.lineno
        body = []
        for lineno, raw in self.lines:
            line = raw.strip()
            if not line or line[0] == "#" or line[:2] == "//":
                continue
            if line == end or line.startswith((end + " ", end + "\t")):
                return "\n".join(body) + ("\n" if body else ""), line[len(end):].strip()
            if _NEW_SYNTAX_ARGUMENTS.match(line):
                self._check_inline_arguments(line, Location(self.file, lineno))
            body.append(line)
        self.lineno = start
        raise _LineError(f"inline submit description is not closed: no line starting with {end!r} follows")

    def _check_inline_arguments(self, line: str, location: Location) -> None:
        """HTCondor 23.9.6's DAGMan submits an inline description with V1 arguments only: one
        with a blank inside an argument, or an empty one, fails every submit attempt ("Cannot
        represent ... in V1 arguments syntax", seen on the pool); a submit file is not affected."""
        from engine.schedd.local.submit import parse_arguments  # only for such a line: it loads htcondor2

        try:
            argv = parse_arguments(line.split("=", 1)[1])
        except ValueError:
            return  # the submit itself says what is wrong, on either DAGMan
        odd = next((arg for arg in argv if not arg or any(c.isspace() for c in arg)), None)
        if odd is not None:
            self._warn(f"inline submit description: HTCondor 23.9.6's DAGMan cannot submit the argument {odd!r} "
                       "(\"Cannot represent ... in V1 arguments syntax\": no blank inside an argument, none empty) "
                       "and fails the node; put the description in a submit file, or pass no such argument "
                       "(a script's name, say), if the DAG is to run on a 23.9 pool", location)

    # ---------------------------------------------------------------- diagnostics

    def _here(self) -> Location:
        return Location(self.file, self.lineno)

    def _error(self, message: str) -> None:
        self.context.errors.append(Diagnostic(self._here(), message))

    def _error_at(self, location: Location, message: str) -> None:
        self.context.errors.append(Diagnostic(location, message))

    def _warn(self, message: str, location: Location | None = None, strict: int = 0) -> None:
        self.context.warnings.append(Diagnostic(location or self.applying or self._here(), message, strict))

    # ---------------------------------------------------------------- node declarations

    def _declare(self, node: Node) -> None:
        name = node.name
        if "+" in name:
            raise _LineError(f"node name {name!r} must not contain '+', which DAGMan reserves for splice names")
        if name[0] in "PpCcAa" and name.upper() in RESERVED_NODE_NAMES:
            raise _LineError(f"{name!r} is a reserved word and cannot be a node name")
        dag = self.dag
        if name in dag.nodes:
            raise _LineError(f"node {name} is already defined at {dag.nodes[name].location}")
        if name in dag.splices:
            raise _LineError(f"node name {name} is already a splice name")
        if node.kind is NodeKind.JOB:
            pass
        elif node.kind is NodeKind.FINAL:
            if self.splice is not None:
                raise _LineError(f"FINAL node {name} is not allowed in a splice (splice {self.splice})")
            final = dag.final
            if final is not None:
                raise _LineError(f"a DAG has at most one FINAL node; {final.name} is already defined at {final.location}")
        elif node.kind is NodeKind.PROVISIONER:
            other = next((n for n in dag.nodes.values() if n.kind is NodeKind.PROVISIONER), None)
            if other is not None:
                raise _LineError(f"a DAG has at most one PROVISIONER node; {other.name} is already defined at {other.location}")
        node.location = Location(self.file, self.lineno)
        dag.nodes[name] = node
        frame = self.frames[-1]
        if frame is not self.root_frame:
            frame.nodes.append(name)
        if self.waiting or self.all_nodes:
            self._release(name, node, frame.id)

    def _release(self, name: str, node: Node | None, frame_id: int) -> None:
        """Run the commands that were waiting for ``name``, in file order."""
        waiting = self.waiting.get(name)
        ready = []
        if waiting:
            ready = [w for w in waiting if frame_id in w.frames]
            if len(ready) == len(waiting):
                del self.waiting[name]
            else:
                self.waiting[name] = [w for w in waiting if frame_id not in w.frames]
        if node is not None and node.kind in (NodeKind.JOB, NodeKind.SUBDAG):
            ready += [w for w in self.all_nodes if frame_id in w.frames]
        if not ready:
            return
        ready.sort(key=lambda w: w.seq)
        for w in ready:
            if node is None:
                if not w.splice_ok:
                    self._error_at(w.location, f"{name} is a splice, not a node")
                elif w.args[0]:
                    self._error_at(w.location, _forgotten_splice(name))
            elif w.apply is not None:
                self.applying = w.location
                try:
                    w.apply(node, *w.args)
                except _LineError as e:
                    self._error_at(w.location, str(e))
                finally:
                    self.applying = None

    def _on_node(self, name: str, apply: Callable[..., None], *args, all_nodes: bool = True) -> None:
        """Apply a per-node command to ``name`` (or ALL_NODES) now or when it is declared."""
        node = self.dag.nodes.get(name)
        if node is not None:
            apply(node, *args)
            return
        if all_nodes and name.upper() == ALL_NODES:
            for node in list(self.dag.nodes.values()):
                if node.kind is NodeKind.JOB or node.kind is NodeKind.SUBDAG:
                    apply(node, *args)
            self.all_nodes.append(self._waiting(apply, args))
            return
        if name in self.dag.splices:
            raise _LineError(f"{name} is a splice, not a node")
        self.waiting.setdefault(name, []).append(self._waiting(apply, args))

    def _reference(self, name: str) -> None:
        """Check that a PARENT/CHILD name is a node or splice of this DAG, now or later."""
        if name in self.dag.nodes:
            return
        if name in self.dag.splices:
            if self.includes_read:
                raise _LineError(_forgotten_splice(name))
            return
        self.waiting.setdefault(name, []).append(self._waiting(None, (self.includes_read,), splice_ok=True))

    def _waiting(self, apply, args, splice_ok: bool = False) -> _Waiting:
        return _Waiting(self.seq, frozenset(f.id for f in self.frames), self._here(), apply, args, splice_ok)

    def close(self) -> None:
        """Report what never resolved, check PARENT/CHILD and CONNECT lines, and order the nodes."""
        dag = self.dag
        for name, waits in self.waiting.items():
            for w in waits:
                if name in dag.nodes or name in dag.splices:
                    self._error_at(w.location, f"{name} is declared only by an INCLUDE below this line; DAGMan reads INCLUDE files in place, so move the INCLUDE above it")
                elif name.upper() == ALL_NODES:
                    self._error_at(w.location, "ALL_NODES cannot be used here")
                elif "+" in name:
                    self._error_at(w.location, f"undefined node {name}: a splice's nodes cannot be named outside "
                                               "it (DAGMan says \"Unknown Job\"); put this line in the spliced file")
                elif w.apply is not None and w.apply.__name__ == "_apply_category" and _INT.match(w.args[0]):
                    # `CATEGORY cat 2`, as htcondor.dags writes a DAG's max_jobs_per_category
                    self._error_at(w.location, f"undefined node {name}: CATEGORY puts a node in a category; "
                                               f"to run at most {w.args[0]} jobs of category {name} at once, "
                                               f"write MAXJOBS {name} {w.args[0]}")
                else:
                    self._error_at(w.location, f"undefined node {name}: declare it with JOB (or FINAL, SUBDAG "
                                               "EXTERNAL, SERVICE) in this DAG, or fix the name")
        self.waiting.clear()
        final = next((n.name for n in dag.nodes.values() if n.kind is NodeKind.FINAL), None)
        for w in self.all_nodes if final is not None else ():
            command, why, tail = _FINAL_SKIPPED[w.apply.__name__]
            message = f"In parse_{command}(): skipping node {final} because final nodes {why}"
            self.context.warnings.append(Diagnostic(w.location, message,
                                                    logged=_literal(message) + " ({where})" + tail))
        special = {n.name: n.kind for n in dag.nodes.values() if n.kind in _SPECIAL_KINDS}
        for dep in dag.dependencies:
            for name in dep.parents + dep.children:
                if name in special:
                    self._error_at(dep.location, f"{special[name]} node {name} cannot have parents or children")
        for connect, context in zip(dag.connects, self.connect_context):
            self._check_connect(connect, *context)
        if self.root_frame is not None and self.root_frame.includes:
            included = list(self.root_frame.included_nodes())
            skip = set(included)
            order = [name for name in dag.nodes if name not in skip] + included
            dag.nodes = {name: dag.nodes[name] for name in order}

    def _check_connect(self, connect: Connect, includes_read: int, parents_before: int, connects_before: int) -> None:
        """DAGMan's checks of a CONNECT line (``parse_connect``, ``Dag::ConnectSplices``)."""
        for name in (connect.parent, connect.child):
            if name not in self.dag.splices:
                self._error_at(connect.location, f"CONNECT names {name}, which is not a splice of this DAG")
                return
            if includes_read:
                self._error_at(connect.location, f"Splice {name} not found! DAGMan 23.9.6 forgets splice names "
                               "once an INCLUDE line above has been read; put the CONNECT line above the INCLUDE")
                return
        outs = self.dag.splices[connect.parent].dag.pins_out
        ins = self.dag.splices[connect.child].dag.pins_in
        if not outs or not ins:  # DAGMan's own words
            self._error_at(connect.location, f"parent splice {connect.parent} has 0 pin_outs" if not outs
                           else f"child splice {connect.child} has 0 pin_ins")
            return
        for pins, splice, what in ((outs, connect.parent, "PIN_OUT"), (ins, connect.child, "PIN_IN")):
            if sorted(pins) != list(range(1, len(pins) + 1)):
                self._error_at(connect.location, f"splice {splice} must number its {what} pins 1..N without gaps, but has {sorted(pins)}")
                return
        if len(outs) != len(ins):
            self._error_at(connect.location, f"splice {connect.parent} has {len(outs)} PIN_OUT pins but splice {connect.child} has {len(ins)} PIN_IN pins")
            return
        orphan = self._orphan(connect.child, parents_before, connects_before)
        if orphan is not None:
            self._error_at(connect.location, f"child splice node {orphan} has no parents after making pin "
                           "connections; add pin_in or parent")

    def _orphan(self, child: str, parents_before: int, connects_before: int) -> str | None:
        """The first node of splice ``child`` left without a parent once this CONNECT is made:
        none inside the splice, no PIN_IN of it, and no PARENT or CONNECT line above naming it."""
        if any(child in dep.children for dep in self.dag.dependencies[:parents_before]) or any(
                c.child == child for c in self.dag.connects[:connects_before]):
            return None  # the splice's initial nodes have parents already
        from engine.dag.graph import build_graph  # the splice as DAGMan has lifted it by now
        splice = self.dag.splices[child].dag
        pinned = {f"{child}+{name}" for names in splice.pins_in.values() for name in names}
        for node in build_graph(splice).nodes.values():
            name = f"{child}+{node.name}"
            if not node.parents and name not in pinned:
                return name
        return None

    # ---------------------------------------------------------------- node commands

    def _job(self, rest: str) -> None:
        words = rest.split()
        # The common forms, ``JOB name file`` with NOOP or DONE or neither, without the tokenizer.
        if 2 <= len(words) <= 3 and words[1][0] not in "{@\"'" and not words[1].endswith(SUBDAG_SUBMIT_SUFFIX):
            flag = words[2].upper() if len(words) == 3 else None
            if flag is None or flag == "NOOP" or flag == "DONE":
                node = Node(words[0], NodeKind.JOB, words[1])
                if flag == "NOOP":
                    node.noop = True
                elif flag == "DONE":
                    node.done = True
                self._declare(node)
                return
        self._node_line(rest, NodeKind.JOB, "JOB <name> <submit file> [DIR <dir>] [NOOP] [DONE]")

    def _final(self, rest: str) -> None:
        self._node_line(rest, NodeKind.FINAL, "FINAL <name> <submit file> [DIR <dir>] [NOOP]")

    def _provisioner(self, rest: str) -> None:
        self._node_line(rest, NodeKind.PROVISIONER, "PROVISIONER <name> <submit file>")

    def _service(self, rest: str) -> None:
        self._node_line(rest, NodeKind.SERVICE, "SERVICE <name> <submit file>")

    def _subdag(self, rest: str) -> None:
        syntax = "SUBDAG EXTERNAL <name> <dag file> [DIR <dir>] [NOOP] [DONE]"
        head = rest.split(None, 1)
        if not head or head[0].upper() != "EXTERNAL":
            raise _LineError(f"SUBDAG needs the EXTERNAL keyword: {syntax}")
        self._node_line(head[1] if len(head) > 1 else "", NodeKind.SUBDAG, syntax)

    def _node_line(self, rest: str, kind: NodeKind, syntax: str) -> None:
        tokens = _split(rest)
        if len(tokens) < 2:
            raise _LineError(f"{kind} needs a node name and a {'DAG' if kind is NodeKind.SUBDAG else 'submit'} file: {syntax}")
        name, submit = tokens[0], _unquote(tokens[1])
        inline = None
        options = tokens[2:]
        if kind is not NodeKind.SUBDAG and (submit == "{" or submit.startswith("@=")):
            end = "}" if submit == "{" else "@" + submit[2:]
            if end == "@":
                raise _LineError("inline submit description needs a tag after '@=', as in @=desc ... @desc")
            inline, after = self._read_block(end)
            if len(tokens) > 2:
                raise _LineError(f"put {' '.join(tokens[2:])!r} after the closing {end} of the inline description: {syntax}")
            submit = ""
            options = _split(after)
        node = Node(name=name, kind=kind, submit=submit, inline_submit=inline)
        self._node_options(node, options, syntax)
        if kind is NodeKind.JOB and submit.endswith(SUBDAG_SUBMIT_SUFFIX):
            raise _LineError(f"submit file {submit} looks like a nested DAG's; declare nested DAGs with SUBDAG EXTERNAL")
        self._declare(node)

    def _node_options(self, node: Node, options: list[str], syntax: str) -> None:
        seen = set()
        i = 0
        while i < len(options):
            word = options[i].upper()
            if word in seen:
                raise _LineError(f"{word} is given twice: {syntax}")
            seen.add(word)
            if word == "DIR":
                if i + 1 >= len(options):
                    raise _LineError(f"DIR needs a directory: {syntax}")
                node.dir = _unquote(options[i + 1])
                self._check_dir(node.dir)
                i += 2
                continue
            if word == "NOOP":
                node.noop = True
            elif word == "DONE":
                if node.kind in (NodeKind.JOB, NodeKind.SUBDAG):
                    node.done = True
                else:
                    self._warn(f"DONE is ignored on {node.kind} node {node.name}")
            else:
                raise _LineError(f"unexpected {options[i]!r} after the submit file: {syntax}")
            i += 1

    def _check_dir(self, directory: str) -> None:
        """DAGMan changes to a node's DIR as it reads the node, so a DIR that is not there fails
        the DAG before anything runs (23.9.6: "can't change to directory ...", seen on the pool)."""
        path = os.path.join(self.base_dir, directory)
        if self.context.on_disk and not os.path.isdir(path):  # reported, and the node still declared
            where = "" if path == directory else f" ({path})"
            self._error(f"DIR {directory}: there is no such directory{where}, and DAGMan refuses a DAG whose "
                        "node directory it cannot change to; create it or fix the name")

    def _submit_description(self, rest: str) -> None:
        syntax = "SUBMIT-DESCRIPTION <name> { ... }"
        tokens = _split(rest)
        if len(tokens) < 2 or not (tokens[1] == "{" or tokens[1].startswith("@=")):
            raise _LineError(f"SUBMIT-DESCRIPTION needs a name and an inline description: {syntax}")
        end = "}" if tokens[1] == "{" else "@" + tokens[1][2:]
        body, after = self._read_block(end)
        if after or len(tokens) > 2:
            raise _LineError(f"unexpected text after the SUBMIT-DESCRIPTION block: {syntax}")
        name = tokens[0]
        if name in self.dag.submit_descriptions:
            raise _LineError(f"SUBMIT-DESCRIPTION {name} is already defined")
        self.dag.submit_descriptions[name] = body

    def _splice(self, rest: str) -> None:
        syntax = "SPLICE <name> <dag file> [DIR <dir>]"
        tokens = _split(rest)
        if len(tokens) < 2:
            raise _LineError(f"SPLICE needs a name and a DAG file: {syntax}")
        name, file = tokens[0], _unquote(tokens[1])
        directory = None
        if len(tokens) > 2:
            if tokens[2].upper() != "DIR" or len(tokens) != 4:
                raise _LineError(f"unexpected {' '.join(tokens[2:])!r} on SPLICE line: {syntax}")
            directory = _unquote(tokens[3])
        if "+" in name or name.upper() in RESERVED_NODE_NAMES:
            raise _LineError(f"{name!r} cannot be a splice name")
        if name in self.dag.nodes:
            raise _LineError(f"splice name {name} is already a node name")
        if name in self.dag.splices:
            raise _LineError(f"splice {name} is already defined at {self.dag.splices[name].location}")
        base = os.path.join(self.base_dir, directory) if directory else self.base_dir
        path = os.path.join(base, file)
        spliced = _Scope(self.context, Dag(file=path), base, splice=name)
        spliced.read_file(path, path, at=self._here())
        spliced.close()
        self.dag.splices[name] = Splice(name, file, directory, spliced.dag, self._here())
        self._release(name, None, self.frames[-1].id)

    # ---------------------------------------------------------------- per-node commands

    def _script(self, rest: str) -> None:
        status = seconds = None
        words = rest.split(None, 2) if rest[:5] not in _DEFER else ()
        if not words:
            words = rest.split(None, 5)
            if len(words) == 6 and _is_count(words[1]) and _is_count(words[2]) and int(words[1]) > 0:
                status, seconds, words = int(words[1]), int(words[2]), words[3:]
            else:
                words = ()
        if len(words) == 3 and words[0] in _SCRIPT_KINDS:
            node = self.dag.nodes.get(words[1])
            if node is not None:
                self._set_script(node, Script(_SCRIPT_KINDS[words[0]], words[2], status, seconds))
                return
        syntax = "SCRIPT [DEFER <status> <seconds>] [DEBUG <file> STDOUT|STDERR|ALL] PRE|POST|HOLD <node> <command>"
        defer_status = defer_time = debug_file = debug_stream = None
        while True:
            word, rest = _next_token(rest)
            upper = word.upper()
            if upper == "DEFER" and defer_status is None:
                status, rest = _next_token(rest)
                seconds, rest = _next_token(rest)
                if not seconds:
                    raise _LineError(f"DEFER needs an exit status and a time in seconds: {syntax}")
                defer_status = _integer(status, "DEFER status")
                defer_time = _integer(seconds, "DEFER time")
                if defer_status <= 0:
                    raise _LineError(f"DEFER status must be a positive exit code, not {defer_status}")
                if defer_time < 0:
                    raise _LineError(f"DEFER time must not be negative, not {defer_time}")
            elif upper == "DEBUG" and debug_file is None:
                debug_file, rest = _next_token(rest)
                stream, rest = _next_token(rest)
                if stream.upper() not in ("STDOUT", "STDERR", "ALL"):
                    raise _LineError(f"DEBUG needs a file and STDOUT, STDERR or ALL: {syntax}")
                debug_stream = stream.upper()
            else:
                break
        if upper not in ("PRE", "POST", "HOLD"):
            found = f"found {word!r}" if word else "found nothing"
            raise _LineError(f"SCRIPT needs PRE, POST or HOLD ({found}): {syntax}")
        node_name, command = _next_token(rest)
        command = command.strip()
        if not node_name or not command:
            raise _LineError(f"SCRIPT {upper} needs a node and a command: {syntax}")
        script = Script(_SCRIPT_KINDS[upper], command, defer_status, defer_time, debug_file, debug_stream)
        self._on_node(node_name, self._apply_script, script)

    def _apply_script(self, node: Node, script: Script) -> None:
        """Give ``node`` its own copy: the same SCRIPT line may apply to many nodes."""
        self._set_script(node, Script(script.kind, script.command, script.defer_status,
                                      script.defer_time, script.debug_file, script.debug_stream))

    def _set_script(self, node: Node, script: Script) -> None:
        old = node.scripts.get(script.kind)
        if old is not None:  # dagman.out says so too, at any DAGMAN_USE_STRICT (seen on the pool)
            self.context.warnings.append(Diagnostic(
                self.applying or self._here(), f"{script.kind} script of node {node.name} replaces the one given before",
                logged=_literal(f"Warning: node {node.name} already has {script.kind} script <{old.command}> "
                                f"assigned; changing to <{script.command}>")))
        node.scripts[script.kind] = script

    def _parent(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) == 3 and tokens[1].upper() == "CHILD":  # ``PARENT a CHILD b``, two declared nodes
            nodes = self.dag.nodes
            parent, child = nodes.get(tokens[0]), nodes.get(tokens[2])
            if parent is not None and child is not None:
                self.dag.dependencies.append(Dependency((parent.name,), (child.name,), Location(self.file, self.lineno)))
                return
        syntax = "PARENT <p1> [p2 ...] CHILD <c1> [c2 ...]"
        split = next((i for i, t in enumerate(tokens) if t.upper() == "CHILD"), None)
        if split is None:
            raise _LineError(f"PARENT line has no CHILD: {syntax}")
        parents, children = tokens[:split], tokens[split + 1:]
        if not parents:
            raise _LineError(f"PARENT line names no parent: {syntax}")
        if not children:
            raise _LineError(f"PARENT line names no child: {syntax}")
        for name in parents + children:
            if name.upper() in RESERVED_NODE_NAMES:
                raise _LineError(f"{name} cannot be used on a PARENT line: {syntax}")
        nodes = self.dag.nodes
        parents = [n.name if (n := nodes.get(name)) is not None else name for name in parents]
        children = [n.name if (n := nodes.get(name)) is not None else name for name in children]
        for name in parents + children:
            self._reference(name)
        self.dag.dependencies.append(Dependency(tuple(parents), tuple(children), self._here()))

    def _retry(self, rest: str) -> None:
        words = rest.split()
        if len(words) == 2 or (len(words) == 4 and words[2] in _UNLESS_EXIT and _is_count(words[3].lstrip("-"))):
            node = self.dag.nodes.get(words[0])
            if node is not None and _is_count(words[1]):
                self._apply_retry(node, int(words[1]), int(words[3]) or None if len(words) == 4 else None)
                return
        syntax = "RETRY <node|ALL_NODES> <count> [UNLESS-EXIT <exit code>]"
        tokens = rest.split()
        if len(tokens) not in (2, 4):
            raise _LineError(f"RETRY needs a node and a count: {syntax}")
        count = _integer(tokens[1], "RETRY count")
        if count < 0:
            raise _LineError(f"RETRY count must not be negative, not {count}")
        unless_exit = None
        if len(tokens) == 4:
            if tokens[2].upper().replace("_", "-") != "UNLESS-EXIT":
                raise _LineError(f"unexpected {tokens[2]!r} on RETRY line: {syntax}")
            unless_exit = _integer(tokens[3], "UNLESS-EXIT exit code") or None
        self._on_node(tokens[0], self._apply_retry, count, unless_exit)

    @staticmethod
    def _apply_retry(node: Node, count: int, unless_exit: int | None) -> None:
        if node.kind is not NodeKind.JOB:
            _refuse_special(node, "RETRY")
        node.retry = count
        node.unless_exit = unless_exit

    def _abort_dag_on(self, rest: str) -> None:
        words = rest.split()
        if (len(words) == 2 or (len(words) == 4 and words[2] in _RETURN and _is_count(words[3])
                                and int(words[3]) <= 255)) and _is_count(words[1].lstrip("-")):
            node = self.dag.nodes.get(words[0])
            if node is not None:
                self._apply_abort(node, self._abort(int(words[1]), int(words[3]) if len(words) == 4 else None))
                return
        syntax = "ABORT-DAG-ON <node|ALL_NODES> <exit value> [RETURN <0..255>]"
        tokens = rest.split()
        if len(tokens) not in (2, 4):
            raise _LineError(f"ABORT-DAG-ON needs a node and an exit value: {syntax}")
        value = _integer(tokens[1], "ABORT-DAG-ON exit value")
        returned = None
        if len(tokens) == 4:
            if tokens[2].upper() != "RETURN":
                raise _LineError(f"unexpected {tokens[2]!r} on ABORT-DAG-ON line: {syntax}")
            returned = _integer(tokens[3], "ABORT-DAG-ON RETURN value")
            if not 0 <= returned <= 255:
                raise _LineError(f"ABORT-DAG-ON RETURN value must be between 0 and 255, not {returned}")
        self._on_node(tokens[0], self._apply_abort, self._abort(value, returned))

    def _abort(self, value: int, returned: int | None) -> AbortDagOn:
        """One shared AbortDagOn per distinct line: CRAB puts the same one on every node."""
        abort = self.aborts.get((value, returned))
        if abort is None:
            abort = self.aborts[value, returned] = AbortDagOn(value, returned)
        return abort

    @staticmethod
    def _apply_abort(node: Node, abort: AbortDagOn) -> None:
        if node.kind is not NodeKind.JOB:
            _refuse_special(node, "ABORT-DAG-ON")
        node.abort_dag_on = abort

    def _vars(self, rest: str) -> None:
        # The common line, one double-quoted pair (VARS node name="value"), without a regex.
        node_name, _, pair = rest.partition(" ")
        var_name, _, quoted = pair.partition("=")
        name = self.var_names.get(var_name)
        if name is not None and len(quoted) > 1 and quoted[0] == '"' and quoted[-1] == '"':
            value = quoted[1:-1]
            node = self.dag.nodes.get(node_name)
            if node is not None:
                if "\\" not in value:
                    if '"' not in value:
                        self._add_var(node, name, value, None)
                        return
                elif (value.count('"') == value.count('\\"') and "\\\\" not in value and value[-1] != "\\"
                      and _odd_escape(value) is None):
                    # Every quote is escaped and nothing else is: unescaping drops the backslashes.
                    self._add_var(node, name, value.replace("\\", ""), None)
                    return
        syntax = 'VARS <node|ALL_NODES> [PREPEND|APPEND] <name>="<value>" ...'
        head = rest.split(None, 1)
        if len(head) < 2:
            raise _LineError(f"VARS needs a node and at least one name=\"value\" pair: {syntax}")
        name, text = head
        placement = None
        first = text.split(None, 1)
        if first[0].upper() in ("PREPEND", "APPEND"):
            placement = VarsPlacement(first[0].upper())
            text = first[1] if len(first) > 1 else ""
        odd: list[tuple[str, str]] = []
        pairs = _parse_vars(text, syntax, self.context.var_names, odd)
        for var_name, escape in odd:
            self._warn(f"VARS {var_name}: \"{escape}\" is read as \"{escape[1]}\", but HTCondor 23.9.6 refuses the "
                       f"DAG for it (\"Unknown escape sequence\"): only \\\\ and \\\" escape in its VARS values; "
                       f"write \"\\{escape}\" for a backslash followed by {escape[1]}")
        self._on_node(name, self._apply_vars, pairs, placement)

    def _apply_vars(self, node: Node, pairs: list[tuple[str, str]], placement: VarsPlacement | None) -> None:
        for var_name, value in pairs:
            self._add_var(node, var_name, value, placement)

    def _add_var(self, node: Node, name: str, value: str, placement: VarsPlacement | None) -> None:
        node_vars = node.vars
        if node_vars:
            lower = self.lower_names
            key = lower.get(name) or lower.setdefault(name, name.lower())
            for var in node_vars:
                if var.name is name or (lower.get(var.name) or lower.setdefault(var.name, var.name.lower())) == key:
                    here = self.applying or self._here()
                    self.context.warnings.append(Diagnostic(
                        here, f"VARS {name} is defined again for node {node.name}; the last value wins", 3,
                        f'Warning: VAR "{_literal(name)}" is already defined in node "{_literal(node.name)}" '
                        f'(Discovered at file "{{file}}", line {{line}})\nWarning: Setting VAR "{_literal(name)}" = '
                        f'"{_literal(value)}"'))
                    break
        last = self.values.get(name)
        if last == value:
            value = last
        else:
            self.values[name] = value
        node_vars.append(Var(name, value, placement))

    def _priority(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) != 2:
            raise _LineError("PRIORITY needs a node and a priority: PRIORITY <node|ALL_NODES> <integer>")
        self._on_node(tokens[0], self._apply_priority, _integer(tokens[1], "PRIORITY"))

    def _apply_priority(self, node: Node, priority: int) -> None:
        _refuse_special(node, "PRIORITY")
        if node.priority and node.priority != priority:
            self._warn(f"PRIORITY {priority} of node {node.name} overrides {node.priority}", strict=2)
        node.priority = priority

    def _category(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) != 2:
            raise _LineError("CATEGORY needs a node and a category name: CATEGORY <node|ALL_NODES> <category>")
        self._on_node(tokens[0], self._apply_category, tokens[1])

    def _apply_category(self, node: Node, category: str) -> None:
        _refuse_special(node, "CATEGORY")
        node.category = category

    def _pre_skip(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) != 2:
            raise _LineError("PRE_SKIP needs a node and an exit code: PRE_SKIP <node|ALL_NODES> <1..255>")
        code = _integer(tokens[1], "PRE_SKIP exit code")
        if not 0 <= code <= 255:
            raise _LineError(f"PRE_SKIP exit code must be between 1 and 255, not {code}")
        if code == 0:
            self._warn("PRE_SKIP 0 has no effect: a PRE script exiting 0 already runs the job")
        self._on_node(tokens[0], self._apply_pre_skip, code or None)

    @staticmethod
    def _apply_pre_skip(node: Node, code: int | None) -> None:
        if code is not None:
            node.pre_skip = code

    def _done(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) != 1:
            raise _LineError("DONE needs exactly one node: DONE <node>")
        self._warn(f"DONE {tokens[0]}: {DONE_LINE_CRASH} (\"Assertion ERROR on (GetStatus() != STATUS_DONE)\", "
                   f"job.cpp line 804) and its job restarts for ever; mark the node on its JOB line instead "
                   f"(JOB {tokens[0]} <submit file> DONE)")
        self._on_node(tokens[0], self._apply_done, all_nodes=False)

    @staticmethod
    def _apply_done(node: Node) -> None:
        if node.kind not in (NodeKind.JOB, NodeKind.SUBDAG):
            raise _LineError(f"{node.kind} node {node.name} cannot be marked DONE")
        node.done = True

    def _save_point_file(self, rest: str) -> None:
        tokens = _split(rest)
        if len(tokens) not in (1, 2):
            raise _LineError("SAVE_POINT_FILE needs a node and optionally a file: SAVE_POINT_FILE <node> [file]")
        name = tokens[0]
        if name.upper() == ALL_NODES:
            raise _LineError("SAVE_POINT_FILE does not accept ALL_NODES; name one node")
        file = _unquote(tokens[1]) if len(tokens) == 2 else f"{name}-{os.path.basename(self.file)}.save"
        self._on_node(name, self._apply_save_point, file, all_nodes=False)

    @staticmethod
    def _apply_save_point(node: Node, file: str) -> None:
        if node.kind in (NodeKind.SERVICE, NodeKind.PROVISIONER):
            raise _LineError(f"SAVE_POINT_FILE cannot be set on {node.kind} node {node.name}")
        node.save_point_file = file

    def _pin(self, rest: str, pins: dict[int, list[str]], keyword: str) -> None:
        tokens = rest.split()
        if len(tokens) != 2:
            raise _LineError(f"{keyword} needs a node and a pin number: {keyword} <node> <pin number>")
        number = _integer(tokens[1], "pin number")
        if number < 1:
            raise _LineError(f"pin numbers start at 1, not {number}")
        name = tokens[0]
        self._on_node(name, lambda node: None, all_nodes=False)
        pins.setdefault(number, []).append(name)

    def _pin_in(self, rest: str) -> None:
        self._pin(rest, self.dag.pins_in, "PIN_IN")

    def _pin_out(self, rest: str) -> None:
        self._pin(rest, self.dag.pins_out, "PIN_OUT")

    def _connect(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) != 2:
            raise _LineError("CONNECT needs two splice names: CONNECT <parent splice> <child splice>")
        self.connect_context.append((self.includes_read, len(self.dag.dependencies), len(self.dag.connects)))
        self.dag.connects.append(Connect(tokens[0], tokens[1], self._here()))

    def _maxjobs(self, rest: str) -> None:
        tokens = rest.split()
        if len(tokens) != 2:
            raise _LineError("MAXJOBS needs a category and a limit: MAXJOBS <category> <limit>")
        limit = _integer(tokens[1], "MAXJOBS limit")
        if limit < 0:
            raise _LineError(f"MAXJOBS limit must not be negative, not {limit}")
        self.dag.max_jobs[tokens[0]] = limit

    # ---------------------------------------------------------------- DAG-wide commands

    def _in_splice(self, keyword: str) -> bool:
        if self.splice is None:
            return False
        self._warn(f"{keyword} is ignored inside splice {self.splice}; DAGMan reads it only from the top-level DAG")
        return True

    def _config(self, rest: str) -> None:
        tokens = _split(rest)
        if len(tokens) != 1:
            raise _LineError("CONFIG needs exactly one file: CONFIG <file>")
        file = _unquote(tokens[0])
        if self._in_splice("CONFIG"):
            return
        if self.dag.config is not None and self.dag.config != file:
            raise _LineError(f"only one CONFIG file is allowed per DAG; {self.dag.config} is already given")
        self.dag.config = file

    def _set_job_attr(self, rest: str) -> None:
        name, equals, value = rest.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name or not value or not _VAR_NAME.fullmatch(name) or "+" in name:
            raise _LineError("SET_JOB_ATTR needs an attribute and a value: SET_JOB_ATTR <name> = <value>")
        self.dag.set_job_attrs[name] = value

    def _env(self, rest: str) -> None:
        head = rest.split(None, 1)
        action = head[0].upper() if head else ""
        if action not in ("GET", "SET") or len(head) < 2:
            raise _LineError("ENV needs GET and variable names, or SET and assignments: ENV GET <VAR> ... | ENV SET <K>=<V>;...")
        if action == "GET":
            self.dag.env_get.extend(head[1].split())
            return
        for assignment in head[1].split(";"):
            assignment = assignment.strip()
            if not assignment:
                continue
            if "=" not in assignment or not assignment.partition("=")[0].strip():
                raise _LineError(f"ENV SET needs KEY=VALUE assignments separated by ';', not {assignment!r}")
            self.dag.env_set.append(assignment)

    def _dot(self, rest: str) -> None:
        syntax = "DOT <file> [UPDATE|DONT-UPDATE] [OVERWRITE|DONT-OVERWRITE] [INCLUDE <header file>]"
        tokens = _split(rest)
        if not tokens:
            raise _LineError(f"DOT needs a file: {syntax}")
        dot = Dot(_unquote(tokens[0]))
        i = 1
        while i < len(tokens):
            word = tokens[i].upper().replace("_", "-")
            if word in ("UPDATE", "DONT-UPDATE"):
                dot.update = word == "UPDATE"
            elif word in ("OVERWRITE", "DONT-OVERWRITE"):
                dot.overwrite = word == "OVERWRITE"
            elif word == "INCLUDE" and i + 1 < len(tokens):
                i += 1
                dot.include = _unquote(tokens[i])
            else:
                raise _LineError(f"unexpected {tokens[i]!r} on DOT line: {syntax}")
            i += 1
        if not self._in_splice("DOT"):
            self.dag.dot = dot

    def _node_status_file(self, rest: str) -> None:
        syntax = "NODE_STATUS_FILE <file> [<minimum seconds between updates>] [ALWAYS-UPDATE]"
        tokens = _split(rest)
        if not 1 <= len(tokens) <= 3:
            raise _LineError(f"NODE_STATUS_FILE needs a file: {syntax}")
        status = NodeStatusFile(_unquote(tokens[0]))
        options = tokens[1:]
        if options and options[-1].upper().replace("_", "-") == "ALWAYS-UPDATE":
            status.always_update = True
            options.pop()
        if options:
            status.min_update = _integer(options[0], "NODE_STATUS_FILE update interval")
            if status.min_update < 0:
                raise _LineError(f"NODE_STATUS_FILE update interval must not be negative, not {status.min_update}")
            if len(options) > 1:
                raise _LineError(f"unexpected {options[1]!r} on NODE_STATUS_FILE line: {syntax}")
        if self._in_splice("NODE_STATUS_FILE"):
            return
        if self.dag.node_status_file is not None:
            self._warn(f"NODE_STATUS_FILE {status.file} is ignored: {self.dag.node_status_file.file} was given first",
                       strict=3)
            return
        self.dag.node_status_file = status

    def _jobstate_log(self, rest: str) -> None:
        tokens = _split(rest)
        if len(tokens) != 1:
            raise _LineError("JOBSTATE_LOG needs exactly one file: JOBSTATE_LOG <file>")
        file = _unquote(tokens[0])
        if self._in_splice("JOBSTATE_LOG"):
            return
        if self.dag.jobstate_log is not None:
            self._warn(f"JOBSTATE_LOG {file} is ignored: {self.dag.jobstate_log} was given first", strict=3)
            return
        self.dag.jobstate_log = file

    def _reject(self, rest: str) -> None:
        if rest:
            raise _LineError("REJECT takes no arguments")
        self.dag.reject = True
        if self.dag.reject_location is None:
            self.dag.reject_location = self._here()

    def _include(self, rest: str) -> None:
        tokens = _split(rest)
        if len(tokens) != 1:
            raise _LineError("INCLUDE needs exactly one file: INCLUDE <file>")
        path = os.path.join(self.base_dir, _unquote(tokens[0]))
        self.read_file(path, path, at=self._here())
        self.includes_read += 1


def _forgotten_splice(name: str) -> str:
    return (f"Unknown Job {name}: DAGMan 23.9.6 forgets splice names once an INCLUDE line above has been "
            "read (it lifts the splices then); put this line above the INCLUDE")


def _in_file_order(diagnostics: list[Diagnostic], file_order: dict[str, int]) -> list[Diagnostic]:
    """Sort by file, in the order the files were opened, then by line."""
    return sorted(diagnostics, key=lambda d: (file_order.get(d.location.file, len(file_order)), d.location.line or 0))


# -------------------------------------------------------------------- tokens and values

def _split(text: str) -> list[str]:
    """Split on blanks; ``"`` and ``'`` quote, and inside quotes ``\\`` escapes (quotes are kept).

    Blanks are all whitespace, as for ``str.split``, where DAGMan has only space, tab and CR.
    """
    if '"' not in text and "'" not in text:
        return text.split()
    tokens: list[str] = []
    current: list[str] = []
    quote = None
    escaped = False
    for ch in text:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch.isspace():
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
            if ch in "\"'":
                quote = ch
    if quote:
        raise _LineError(f"missing closing {quote} in {text!r}")
    if current:
        tokens.append("".join(current))
    return tokens


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] in "\"'" and token[-1] == token[0]:
        return _unescape(token[1:-1])
    return token


def _next_token(text: str) -> tuple[str, str]:
    parts = text.split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1] if len(parts) > 1 else ""


def _is_count(token: str) -> bool:
    """A whole number in ASCII digits that fits DAGMan's int (larger ones are refused as no number)."""
    return token.isdigit() and token.isascii() and len(token) <= 10 and int(token) <= MAX_INT


def _unescape(value: str) -> str:
    """Undo ``\\x`` escapes (the callers' patterns guarantee every backslash escapes something)."""
    if "\\" not in value:
        return value
    if "\\\\" not in value:
        return value.replace("\\", "")
    return _UNESCAPE.sub(_FIRST_GROUP, value)


def _integer(token: str, what: str) -> int:
    if not token:
        raise _LineError(f"{what} is missing")
    if not _INT.match(token):
        raise _LineError(f"{what} must be an integer, not {token[:40]!r}")
    if len(token.lstrip("+-")) > 10 or not -MAX_INT - 1 <= int(token) <= MAX_INT:
        raise _LineError(f"{what} {token[:20]}{'...' if len(token) > 20 else ''} is out of range: DAGMan's "
                         f"integers go from {-MAX_INT - 1} to {MAX_INT}")
    return int(token)


def _refuse_special(node: Node, keyword: str) -> None:
    if node.kind is NodeKind.FINAL or node.kind is NodeKind.SERVICE or node.kind is NodeKind.PROVISIONER:
        raise _LineError(f"{node.kind} node {node.name} cannot have {keyword}")


def _odd_escape(value: str) -> str | None:
    """The first escape other than ``\\\\`` and ``\\"`` in a double-quoted VARS value, which
    HTCondor 23.9.6 refuses ("Unknown escape sequence") and 25.x reads as the character."""
    for match in _ESCAPE.finditer(value):
        if match.group(1) not in '\\"':
            return match.group(0)
    return None


def _parse_vars(text: str, syntax: str, var_names: dict[str, str],
                odd: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """Parse ``name="value"`` pairs; values may be "double", 'single' or bare, ``\\x`` gives x.
    A double-quoted value's escape 23.9.6 refuses is added to ``odd`` with its name."""
    pairs = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t":
            pos += 1
        if pos >= end:
            break
        match = _VAR_PAIR.match(text, pos)
        if match is None:
            raise _LineError(_vars_problem(text[pos:], syntax))
        name, double, single, bare = match.groups()
        value = double if double is not None else single if single is not None else bare
        if double is not None and odd is not None and "\\" in double and (escape := _odd_escape(double)):
            odd.append((name, escape))
        if bare is None:
            value = _unescape(value)
        pairs.append((var_names.get(name) or _var_name(name, var_names), value))
        pos = match.end()
    if not pairs:
        raise _LineError(f"VARS needs at least one name=\"value\" pair: {syntax}")
    return pairs


def _var_name(name: str, checked: dict[str, str]) -> str:
    """Check a VARS name, rewrite ``+x`` as ``My.x``, and remember it in ``checked``."""
    written = name
    if name[0] == "+":
        name = "My." + name[1:]
    if "+" in name:
        raise _LineError(f"VARS name {name!r}: '+' may only start a name")
    if name.lower() == "my.":
        raise _LineError("VARS name 'My.' needs an attribute name after it")
    if name.lower().startswith("queue"):
        raise _LineError(f"VARS name {name!r} is not allowed: names cannot begin with 'queue'")
    checked[written] = name
    return name


def _vars_problem(text: str, syntax: str) -> str:
    name = re.match(r"[^\s=]*", text).group(0)
    after = text[len(name):].lstrip(" \t")
    if not name:
        return f"VARS expected a name before {text[:20]!r}: {syntax}"
    if not _VAR_NAME.fullmatch(name):
        return f"VARS name {name!r} may contain only letters, digits, '_' and '.', with an optional leading '+'"
    if not after.startswith("="):
        return f"VARS {name} needs '=' and a value: {syntax}"
    value = after[1:].lstrip(" \t")
    if value[:1] in ('"', "'"):
        return f"VARS {name}: the value has no closing {value[0]}"
    if not value:
        return f"VARS {name} has no value: {syntax}"
    return f"VARS {name}: a bare value cannot contain quotes; quote the whole value"
