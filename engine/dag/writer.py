"""Write a :class:`~engine.dag.model.Dag` back as DAG file text that parses to the same model.

Node commands are written per node in DAGMan's rescue-DAG order (JOB, SCRIPT PRE, PRE_SKIP,
SCRIPT POST, VARS, ...), then the PARENT/CHILD lines as declared.  Spliced files are not
rewritten: a SPLICE line names its file, as the original did.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from engine.atomic import write_atomically
from engine.dag.model import Dag, Node, NodeKind, Script, ScriptKind

_NEEDS_QUOTES = frozenset(" \t\"'\\")


def format_dag(dag: Dag) -> str:
    out: list[str] = []
    w = out.append
    if dag.config is not None:
        w(f"CONFIG {_quote(dag.config)}")
    for name, value in dag.set_job_attrs.items():
        w(f"SET_JOB_ATTR {name} = {value}")
    if dag.env_get:
        w("ENV GET " + " ".join(dag.env_get))
    if dag.env_set:
        w("ENV SET " + ";".join(dag.env_set))
    if dag.reject:
        w("REJECT")
    for name, body in dag.submit_descriptions.items():
        w(f"SUBMIT-DESCRIPTION {name} " + _block(body))
    for splice in dag.splices.values():
        line = f"SPLICE {splice.name} {_quote(splice.file)}"
        if splice.dir is not None:
            line += f" DIR {_quote(splice.dir)}"
        w(line)
    for node in dag.nodes.values():
        _write_node(node, w)
    for dep in dag.dependencies:
        w(f"PARENT {' '.join(dep.parents)} CHILD {' '.join(dep.children)}")
    for connect in dag.connects:
        w(f"CONNECT {connect.parent} {connect.child}")
    for keyword, pins in (("PIN_IN", dag.pins_in), ("PIN_OUT", dag.pins_out)):
        for number, names in pins.items():
            for name in names:
                w(f"{keyword} {name} {number}")
    for category, limit in dag.max_jobs.items():
        w(f"MAXJOBS {category} {limit}")
    if dag.dot is not None:
        dot = dag.dot
        line = f"DOT {_quote(dot.file)}"
        if dot.update is not None:
            line += " UPDATE" if dot.update else " DONT-UPDATE"
        if dot.overwrite is not None:
            line += " OVERWRITE" if dot.overwrite else " DONT-OVERWRITE"
        if dot.include is not None:
            line += f" INCLUDE {_quote(dot.include)}"
        w(line)
    if dag.node_status_file is not None:
        status = dag.node_status_file
        w(f"NODE_STATUS_FILE {_quote(status.file)} {status.min_update}" + (" ALWAYS-UPDATE" if status.always_update else ""))
    if dag.jobstate_log is not None:
        w(f"JOBSTATE_LOG {_quote(dag.jobstate_log)}")
    return "\n".join(out) + "\n" if out else ""


def write_dag(dag: Dag, path: str) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(format_dag(dag))


_RETRY_LINE = re.compile(r"^([ \t]*RETRY[ \t]+)(\S+)([ \t]+)(\d+)", re.IGNORECASE | re.MULTILINE)


def set_retries(path: str, counts: Mapping[str, int]) -> bool:
    """Give the nodes of ``counts`` those RETRY counts in the DAG file (or partial rescue DAG) at
    ``path``, as CRAB's AdjustSites raises them for a resubmission; every other byte stays.  The
    file is replaced whole.  Returns whether anything changed (doing it again changes nothing)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()

    def count(m: re.Match) -> str:
        wanted = counts.get(m.group(2))
        return m.group(0) if wanted is None else f"{m.group(1)}{m.group(2)}{m.group(3)}{wanted}"

    edited = _RETRY_LINE.sub(count, text)
    if edited == text:
        return False
    write_atomically(path, edited)
    return True


def _write_node(node: Node, w) -> None:
    name = node.name
    keyword = "SUBDAG EXTERNAL" if node.kind is NodeKind.SUBDAG else node.kind.value
    submit = _block(node.inline_submit) if node.inline_submit is not None else _quote(node.submit)
    options = ""
    if node.dir is not None:
        options += f" DIR {_quote(node.dir)}"
    if node.noop:
        options += " NOOP"
    if node.done:
        options += " DONE"
    w(f"{keyword} {name} {submit}{options}")
    for kind in (ScriptKind.PRE, ScriptKind.POST, ScriptKind.HOLD):
        script = node.scripts.get(kind)
        if script is not None:
            w(_script_line(name, script))
        if kind is ScriptKind.PRE and node.pre_skip is not None:
            w(f"PRE_SKIP {name} {node.pre_skip}")
    for var in node.vars:
        placement = f" {var.placement.value}" if var.placement is not None else ""
        w(f'VARS {name}{placement} {var.name}="{_escape(var.value)}"')
    if node.retry or node.unless_exit is not None:
        line = f"RETRY {name} {node.retry}"
        if node.unless_exit is not None:
            line += f" UNLESS-EXIT {node.unless_exit}"
        w(line)
    if node.abort_dag_on is not None:
        line = f"ABORT-DAG-ON {name} {node.abort_dag_on.exit_value}"
        if node.abort_dag_on.return_value is not None:
            line += f" RETURN {node.abort_dag_on.return_value}"
        w(line)
    if node.priority:
        w(f"PRIORITY {name} {node.priority}")
    if node.category is not None:
        w(f"CATEGORY {name} {node.category}")
    if node.save_point_file is not None:
        w(f"SAVE_POINT_FILE {name} {_quote(node.save_point_file)}")


def _script_line(name: str, script: Script) -> str:
    line = "SCRIPT"
    if script.defer_status is not None:
        line += f" DEFER {script.defer_status} {script.defer_time}"
    if script.debug_file is not None:
        line += f" DEBUG {script.debug_file} {script.debug_stream}"
    return f"{line} {script.kind.value} {name} {script.command}"


def _block(body: str) -> str:
    """An inline description, closed by ``}`` unless a line of it would close it early."""
    lines = body.splitlines()
    end, opener = "}", "{"
    if any(line == "}" or line.startswith(("} ", "}\t")) for line in lines):
        tag = "desc"
        while any(line == "@" + tag or line.startswith(("@" + tag + " ", "@" + tag + "\t")) for line in lines):
            tag += "_"
        end, opener = "@" + tag, "@=" + tag
    return "\n".join([opener, *lines, end])


def _quote(token: str) -> str:
    """Quote a file name that would not read back as one token (blanks include Unicode spaces)."""
    if token and not (_NEEDS_QUOTES & set(token)) and len(token.split()) == 1:
        return token
    return f'"{_escape(token)}"'


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
