"""The DAG input language as data: one :class:`Dag` per DAG file, as DAGMan's parser builds it.

The model keeps what a file says, not what DAGMan derives from it: splices stay nested
(:class:`Splice` holds the spliced file's own :class:`Dag`) and PARENT/CHILD lines stay as
declared, so that :mod:`engine.dag.writer` can write the file back.  Lifting splices into
``splice+node`` names, join nodes and cycle checks live in :mod:`engine.dag.graph`.

Names follow DAGMan's: ``retry`` is RETRY's maximum, ``unless_exit`` its UNLESS-EXIT value,
``pre_skip`` PRE_SKIP's exit code.  INCLUDEd commands are merged into the including file's
:class:`Dag`, as DAGMan does; every object remembers the file and line it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from engine.dag.errors import Diagnostic, Location

_NOWHERE = Location("<model>")


class NodeKind(StrEnum):
    """The DAG command that declared a node."""

    JOB = "JOB"
    FINAL = "FINAL"
    SUBDAG = "SUBDAG"
    PROVISIONER = "PROVISIONER"
    SERVICE = "SERVICE"


class ScriptKind(StrEnum):
    PRE = "PRE"
    POST = "POST"
    HOLD = "HOLD"


class VarsPlacement(StrEnum):
    """Where VARS macros go relative to the submit file (DAGMan's default is PREPEND)."""

    PREPEND = "PREPEND"
    APPEND = "APPEND"


@dataclass(slots=True)
class Script:
    """``SCRIPT [DEFER status time] [DEBUG file stream] PRE|POST|HOLD node command``.

    ``command`` is the rest of the line, kept raw: DAGMan splits it on blanks when it runs the
    script, after replacing whole-token macros such as ``$RETURN``.
    """

    kind: ScriptKind
    command: str
    defer_status: int | None = None
    defer_time: int | None = None
    debug_file: str | None = None
    debug_stream: str | None = None  # STDOUT, STDERR or ALL

    @property
    def argv(self) -> list[str]:
        return self.command.split()


@dataclass(slots=True)
class Var:
    """One VARS macro. ``+name`` is stored as ``My.name``, as DAGMan rewrites it."""

    name: str
    value: str
    placement: VarsPlacement | None = None  # None: the DAG's default (DAGMAN_DEFAULT_APPEND_VARS)


@dataclass(frozen=True, slots=True)
class AbortDagOn:
    exit_value: int
    return_value: int | None = None


@dataclass(slots=True)
class Node:
    """A node as declared: what to run and the per-node commands that apply to it."""

    name: str
    kind: NodeKind
    submit: str  # submit file, SUBMIT-DESCRIPTION name, or the DAG file of a SUBDAG
    inline_submit: str | None = None  # the body of ``JOB name { ... }``
    dir: str | None = None
    noop: bool = False
    done: bool = False
    scripts: dict[ScriptKind, Script] = field(default_factory=dict)
    pre_skip: int | None = None
    retry: int = 0
    unless_exit: int | None = None
    abort_dag_on: AbortDagOn | None = None
    vars: list[Var] = field(default_factory=list)
    priority: int = 0
    category: str | None = None
    save_point_file: str | None = None
    location: Location = field(default=_NOWHERE, compare=False, repr=False)


@dataclass(slots=True)
class Dependency:
    """``PARENT p... CHILD c...`` as written; names are nodes or splices of the same file."""

    parents: tuple[str, ...]
    children: tuple[str, ...]
    location: Location = field(default=_NOWHERE, compare=False, repr=False)


@dataclass(slots=True)
class Splice:
    """``SPLICE name file [DIR dir]``; ``dag`` is the spliced file, parsed in its own scope."""

    name: str
    file: str
    dir: str | None
    dag: Dag
    location: Location = field(default=_NOWHERE, compare=False, repr=False)


@dataclass(slots=True)
class Connect:
    """``CONNECT parent_splice child_splice``: PIN_OUT n of the first feeds PIN_IN n of the second."""

    parent: str
    child: str
    location: Location = field(default=_NOWHERE, compare=False, repr=False)


@dataclass(slots=True)
class Dot:
    file: str
    update: bool | None = None
    overwrite: bool | None = None
    include: str | None = None


@dataclass(slots=True)
class NodeStatusFile:
    file: str
    min_update: int = 60
    always_update: bool = False


@dataclass(slots=True)
class Dag:
    """One DAG file with everything it INCLUDEs."""

    file: str
    nodes: dict[str, Node] = field(default_factory=dict)
    dependencies: list[Dependency] = field(default_factory=list)
    splices: dict[str, Splice] = field(default_factory=dict)
    connects: list[Connect] = field(default_factory=list)
    pins_in: dict[int, list[str]] = field(default_factory=dict)
    pins_out: dict[int, list[str]] = field(default_factory=dict)
    submit_descriptions: dict[str, str] = field(default_factory=dict)
    max_jobs: dict[str, int] = field(default_factory=dict)
    config: str | None = None
    set_job_attrs: dict[str, str] = field(default_factory=dict)
    env_get: list[str] = field(default_factory=list)
    env_set: list[str] = field(default_factory=list)
    dot: Dot | None = None
    node_status_file: NodeStatusFile | None = None
    jobstate_log: str | None = None
    reject: bool = False
    reject_location: Location | None = field(default=None, compare=False, repr=False)
    warnings: list[Diagnostic] = field(default_factory=list, compare=False, repr=False)

    @property
    def final(self) -> Node | None:
        return next((n for n in self.nodes.values() if n.kind is NodeKind.FINAL), None)
