"""Property tests: model -> text -> model, and text -> model -> text -> model.

``format_dag`` must write a :class:`~engine.dag.model.Dag` so that ``parse_text`` reads back
an equal model (Dag equality ignores locations and warnings).  The strategies respect the
language: node names without '+', whitespace or quotes and not PARENT/CHILD/ALL_NODES; at most
one FINAL and one PROVISIONER; RETRY, PRIORITY, CATEGORY, ABORT-DAG-ON, DONE and dependencies
only on JOB/SUBDAG nodes; inline submit bodies made of stripped, non-blank, non-comment lines.
"""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.dag import format_dag, parse_file, parse_text
from engine.dag.model import (
    AbortDagOn,
    Dag,
    Dependency,
    Dot,
    Node,
    NodeKind,
    NodeStatusFile,
    Script,
    ScriptKind,
    Var,
    VarsPlacement,
)

SETTINGS = settings(
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

RESERVED = {"PARENT", "CHILD", "ALL_NODES"}
PRINTABLE = "".join(c for c in string.printable if c not in "\n\r\x0b\x0c")

# ---------------------------------------------------------------------------- atoms

# Node names: no '+', whitespace, quotes or backslash; punctuation DAGMan does not reserve is fine.
_NAME_CHARS = string.ascii_letters + string.digits + "_.-:@$%~,!{}[]()=^&*?<>|/#"
node_names = st.one_of(
    st.sampled_from(["A", "B", "node_1", "My.X", "a-b", "N.1", "x:y", "_x", "Dir", "NOOP", "pre",
                     "EXTERNAL", "DEFER", "PREPEND", "APPEND", "parents", "children", "ALL", "#x", "//y"]),
    st.text(_NAME_CHARS, min_size=1, max_size=8),
).filter(lambda s: s.upper() not in RESERVED)

_SIMPLE = string.ascii_letters + string.digits + "_.-"
simple_tokens = st.text(_SIMPLE, min_size=1, max_size=8)

# File names: anything on one line, including blanks, quotes and backslashes (the writer quotes).
file_names = st.one_of(
    st.sampled_from(["a.sub", "dir/b.sub", "my file.sub", 'q"uote.sub', "back\\slash.sub",
                     "it's.sub", "trail\\", " lead", "tab\there", "#hash", "$(JOB).sub"]),
    st.text(PRINTABLE + "éü", min_size=1, max_size=12),
).filter(lambda s: s != "{" and not s.startswith("@="))


def _job_submit_ok(submit: str) -> bool:
    return not submit.endswith(".condor.sub")


# VARS values: quotes, backslashes, blanks, macros.
var_values = st.one_of(
    st.sampled_from(["", "plain", "with space", 'dq"inside', "sq'inside", "back\\slash", "trail\\",
                     "\\\"both\\\"", "$(JOB)", "$(RETRY) and $(JOB)", "  padded  ", "\ttab", "a=b",
                     'Greg\\"\\"_LeMond']),
    st.text(PRINTABLE + "é", max_size=16),
)

var_names = st.one_of(
    st.sampled_from(["x", "My.X", "My.Attr_1", "first", "a.b.c", "_u", "JOB9", "PREPEND", "APPEND"]),
    st.text(string.ascii_letters + string.digits + "_.", min_size=1, max_size=8),
).filter(lambda s: not s.lower().startswith("queue") and s.lower() != "my.")

categories = st.one_of(simple_tokens, simple_tokens.map(lambda s: "+" + s))

# A raw script command: the rest of the line, stripped, never ending in a continuation '\'.
script_commands = st.one_of(
    st.sampled_from(["pre.sh", "post.sh $RETURN", "/bin/echo $JOB $RETRY", 'x "a b" \'c\'',
                     "cmd   with   gaps", "a\\b c", "# not a comment"]),
    st.text(PRINTABLE, min_size=1, max_size=20),
).map(str.strip).filter(lambda s: s and not s.endswith("\\"))

# Inline submit description lines: stripped, non-blank, not comments, no continuation.
body_lines = st.one_of(
    st.sampled_from(["executable = /bin/true", "arguments = \"a b\"", "queue", "}", "} trailing",
                     "@desc", "@desc x", "@desc_", "{", "}x", "log = $(JOB).log", "+My.Attr = \"v\""]),
    st.text(PRINTABLE, min_size=1, max_size=20),
).map(str.strip).filter(lambda s: s and not s.startswith(("#", "//")) and not s.endswith("\\"))

inline_bodies = st.lists(body_lines, max_size=5).map(lambda ls: "".join(line + "\n" for line in ls))

# SET_JOB_ATTR: rest of the line after '=', stripped.
attr_values = st.text(PRINTABLE, min_size=1, max_size=16).map(str.strip).filter(
    lambda s: s and not s.endswith("\\"))
env_assignments = st.tuples(
    st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=6),
    st.text(string.ascii_letters + string.digits + "_=./:- ", max_size=8),
).map(lambda kv: f"{kv[0]}={kv[1]}".strip())
env_names = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=8)


# ---------------------------------------------------------------------------- nodes

@st.composite
def scripts(draw, kind: ScriptKind) -> Script:
    defer = draw(st.none() | st.tuples(st.integers(1, 255), st.integers(0, 3600)))
    debug = draw(st.none() | st.tuples(simple_tokens, st.sampled_from(["STDOUT", "STDERR", "ALL"])))
    return Script(
        kind,
        draw(script_commands),
        defer_status=defer[0] if defer else None,
        defer_time=defer[1] if defer else None,
        debug_file=debug[0] if debug else None,
        debug_stream=debug[1] if debug else None,
    )


@st.composite
def nodes(draw, name: str, kind: NodeKind) -> Node:
    node_like = kind in (NodeKind.JOB, NodeKind.SUBDAG)
    inline = None
    if kind is not NodeKind.SUBDAG and draw(st.booleans()):
        inline = draw(inline_bodies)
        submit = ""
    else:
        submit = draw(file_names.filter(_job_submit_ok) if kind is NodeKind.JOB else file_names)
    node = Node(name=name, kind=kind, submit=submit, inline_submit=inline)
    if kind in (NodeKind.JOB, NodeKind.SUBDAG, NodeKind.FINAL):
        node.dir = draw(st.none() | file_names)
        node.noop = draw(st.booleans())
        for script_kind in draw(st.lists(st.sampled_from(list(ScriptKind)), unique=True, max_size=3)):
            node.scripts[script_kind] = draw(scripts(script_kind))
        node.pre_skip = draw(st.none() | st.integers(1, 255))
    if node_like:
        node.done = draw(st.booleans())
        node.retry = draw(st.integers(0, 10))
        node.unless_exit = draw(st.none() | st.integers(-255, 255).filter(bool))
        if draw(st.booleans()):
            node.abort_dag_on = AbortDagOn(draw(st.integers(0, 255)), draw(st.none() | st.integers(0, 255)))
        node.priority = draw(st.integers(-50, 50))
        node.category = draw(st.none() | categories)
        node.save_point_file = draw(st.none() | file_names)
    node.vars = draw(st.lists(
        st.builds(Var, var_names, var_values, st.sampled_from([None, VarsPlacement.PREPEND, VarsPlacement.APPEND])),
        max_size=3,
    ))
    return node


_KINDS = [NodeKind.JOB, NodeKind.JOB, NodeKind.JOB, NodeKind.SUBDAG, NodeKind.SERVICE,
          NodeKind.FINAL, NodeKind.PROVISIONER]


@st.composite
def dags(draw) -> Dag:
    dag = Dag(file=draw(st.sampled_from(["gen.dag", "dir/x.dag", "my dag.dag"])))
    names = draw(st.lists(node_names, max_size=7, unique=True))
    seen_special: set[NodeKind] = set()
    for name in names:
        kind = draw(st.sampled_from(_KINDS))
        if kind in (NodeKind.FINAL, NodeKind.PROVISIONER):
            if kind in seen_special:
                kind = NodeKind.JOB
            seen_special.add(kind)
        dag.nodes[name] = draw(nodes(name, kind))

    linkable = [n.name for n in dag.nodes.values() if n.kind in (NodeKind.JOB, NodeKind.SUBDAG)]
    if linkable:
        side = st.lists(st.sampled_from(linkable), min_size=1, max_size=3).map(tuple)
        for parents, children in draw(st.lists(st.tuples(side, side), max_size=4)):
            dag.dependencies.append(Dependency(parents, children))
        for pins in (dag.pins_in, dag.pins_out):
            for number in draw(st.lists(st.integers(1, 4), unique=True, max_size=2)):
                pins[number] = draw(st.lists(st.sampled_from(linkable), min_size=1, max_size=2))

    for name in draw(st.lists(simple_tokens, unique=True, max_size=2)):
        dag.submit_descriptions[name] = draw(inline_bodies)
    for category in draw(st.lists(categories, unique=True, max_size=3)):
        dag.max_jobs[category] = draw(st.integers(0, 50))
    dag.config = draw(st.none() | file_names)
    for name in draw(st.lists(st.text(string.ascii_letters + string.digits + "_.", min_size=1, max_size=8),
                              unique=True, max_size=2)):
        dag.set_job_attrs[name] = draw(attr_values)
    dag.env_get = draw(st.lists(env_names, max_size=3))
    dag.env_set = draw(st.lists(env_assignments, max_size=3))
    if draw(st.booleans()):
        dag.dot = Dot(draw(file_names), draw(st.none() | st.booleans()), draw(st.none() | st.booleans()),
                      draw(st.none() | file_names))
    if draw(st.booleans()):
        dag.node_status_file = NodeStatusFile(draw(file_names), draw(st.integers(0, 3600)), draw(st.booleans()))
    dag.jobstate_log = draw(st.none() | file_names)
    dag.reject = draw(st.booleans())
    return dag


# ---------------------------------------------------------------------------- model -> text -> model

@SETTINGS
@given(dags())
def test_model_text_model(dag: Dag) -> None:
    text = format_dag(dag)
    parsed = parse_text(text, file=dag.file)
    assert parsed == dag, text


@SETTINGS
@given(dags())
def test_writer_output_is_a_fixed_point(dag: Dag) -> None:
    text = format_dag(dag)
    model = parse_text(text, file=dag.file)
    again = format_dag(model)
    assert again == text
    assert parse_text(again, file=dag.file) == model


# ---------------------------------------------------------------------------- text -> model -> text -> model
#
# Texts written by hand look different from the writer's: keywords in any case and with '-' or
# '_', commands before the JOB they name, ALL_NODES, continuation lines, comments, single-quoted
# or bare VARS values, '+name' VARS.  Whatever such a text parses to must survive the writer.

_BLOCK_START = re.compile(r"(?:JOB|FINAL|SERVICE|PROVISIONER|SUBMIT-DESCRIPTION) \S+ (?:\{|@=(\S+))")


def _chunks(text: str) -> list[list[str]]:
    """Split writer output into commands, an inline description staying with its command."""
    chunks: list[list[str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        chunk = [lines[i]]
        match = _BLOCK_START.fullmatch(lines[i])
        if match:
            end = "@" + match.group(1) if match.group(1) else "}"
            i += 1
            while True:
                chunk.append(lines[i])
                if lines[i] == end or lines[i].startswith(end + " "):
                    break
                i += 1
        chunks.append(chunk)
        i += 1
    return chunks


def _respell(rng: random.Random, line: str) -> str:
    keyword, sep, rest = line.partition(" ")
    choice = rng.randrange(4)
    if choice == 1:
        keyword = keyword.lower()
    elif choice == 2:
        keyword = keyword.title()
    if rng.random() < 0.5:
        keyword = keyword.replace("-", "_") if "-" in keyword else keyword.replace("_", "-")
    return keyword + sep + rest


def _continue(rng: random.Random, line: str) -> list[str]:
    """Split a one-line command at a single blank into '\\'-continued lines (same joined text)."""
    spots = [i for i in range(1, len(line) - 1)
             if line[i] == " " and line[i - 1] != " " and line[i + 1] != " "
             and not line[i + 1:].startswith(("#", "//"))]
    if not spots:
        return [line]
    cut = rng.choice(spots)
    return [line[:cut] + " \\", line[cut + 1:]]


def _squote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@st.composite
def extra_lines(draw, dag: Dag) -> list[str]:
    """Commands written in styles the writer never uses."""
    names = [n.name for n in dag.nodes.values()]
    linkable = [n.name for n in dag.nodes.values() if n.kind in (NodeKind.JOB, NodeKind.SUBDAG)]
    targets = st.sampled_from(names + ["ALL_NODES", "all_nodes"]) if names else st.just("ALL_NODES")
    job_targets = st.sampled_from(linkable + ["ALL_NODES"]) if linkable else st.just("ALL_NODES")
    out = []
    for _ in range(draw(st.integers(0, 6))):
        which = draw(st.integers(0, 8))
        if which == 0:
            key = draw(var_names)
            key = "+" + key[3:] if key.startswith("My.") and len(key) > 3 else key
            value = draw(var_values)
            bare = re.fullmatch(r"[^\s\"']*[^\s\"'\\]", value) is not None and draw(st.booleans())
            placement = draw(st.sampled_from(["", " PREPEND", " append"]))
            # 'PREPEND = "v"' would read PREPEND as the placement keyword, in DAGMan too
            spacing = "=" if key.upper() in ("PREPEND", "APPEND") else draw(st.sampled_from(["=", " = ", "= "]))
            out.append(f"Vars {draw(targets)}{placement} {key}{spacing}{value if bare else _squote(value)}")
        elif which == 1:
            unless = draw(st.none() | st.integers(-3, 300))
            out.append(f"retry {draw(job_targets)} {draw(st.integers(0, 9))}"
                       + ("" if unless is None else f" unless_exit {unless}"))
        elif which == 2:
            out.append(f"Priority {draw(job_targets)} {draw(st.integers(-9, 9))}")
        elif which == 3:
            out.append(f"category {draw(job_targets)} {draw(categories)}")
        elif which == 4:
            returned = draw(st.none() | st.integers(0, 255))
            out.append(f"abort_dag_on {draw(job_targets)} {draw(st.integers(0, 255))}"
                       + ("" if returned is None else f" return {returned}"))
        elif which == 5:
            out.append(f"Pre-Skip {draw(job_targets)} {draw(st.integers(1, 255))}")
        elif which == 6:
            out.append(f"script debug dbg.txt all defer 3 60 {draw(st.sampled_from(['pre', 'Post', 'HOLD']))}"
                       f" {draw(job_targets)} {draw(script_commands)}")
        elif which == 7 and linkable:
            out.append(f"done {draw(st.sampled_from(linkable))}")
        elif which == 8 and linkable:
            out.append(f"parent {draw(st.sampled_from(linkable))} child {draw(st.sampled_from(linkable))}")
    return out


@st.composite
def hand_written_texts(draw) -> tuple[str, str]:
    dag = draw(dags())
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    chunks = _chunks(format_dag(dag)) + [[line] for line in draw(extra_lines(dag))]
    # DAGMan reads declarations in pass 1, so commands may come before the nodes they name.
    rng.shuffle(chunks)
    lines: list[str] = []
    for chunk in chunks:
        first = _respell(rng, chunk[0])
        if len(chunk) == 1 and rng.random() < 0.3:
            lines.extend(_continue(rng, first))
        else:
            lines.append(first)
            lines.extend(chunk[1:])
        if rng.random() < 0.2:
            lines.append(rng.choice(["", "# a comment", "// another", "   "]))
    return dag.file, "\n".join(lines) + "\n"


@SETTINGS
@given(hand_written_texts())
def test_text_model_text_model(case: tuple[str, str]) -> None:
    file, text = case
    model = parse_text(text, file=file)
    written = format_dag(model)
    again = parse_text(written, file=file)
    assert again == model, written
    assert format_dag(again) == written


# ---------------------------------------------------------------------------- fixed examples

def test_roundtrip_example_with_every_feature() -> None:
    text = "\n".join([
        "CONFIG my.config",
        "SET_JOB_ATTR My.Attr = \"x y\"",
        "ENV GET PATH HOME",
        "ENV SET A=1;B=two words",
        "SUBMIT-DESCRIPTION desc {",
        "executable = /bin/true",
        "queue",
        "}",
        "JOB A a.sub DIR 'work dir' DONE",
        "JOB B @=tag",
        "executable = /bin/echo",
        "}",
        "@tag NOOP",
        "SUBDAG EXTERNAL S inner.dag DIR sub",
        "FINAL F f.sub NOOP",
        "SERVICE Svc svc.sub",
        "PROVISIONER Prov prov.sub",
        "SCRIPT DEFER 4 30 DEBUG dbg.log STDERR PRE A pre.sh $JOB",
        "SCRIPT POST F post.sh $RETURN",
        "PRE_SKIP A 3",
        "VARS A PREPEND x=\"a \\\"q\\\" \\\\ $(JOB)\" +Attr='v'",
        "VARS B APPEND y=bare",
        "RETRY B 3 UNLESS-EXIT 42",
        "ABORT-DAG-ON S 2 RETURN 0",
        "PRIORITY A -4",
        "CATEGORY A +global",
        "CATEGORY B local",
        "MAXJOBS +global 2",
        "MAXJOBS local 1",
        "SAVE_POINT_FILE B",
        "PARENT A CHILD B S",
        "DOT dag.dot UPDATE DONT-OVERWRITE INCLUDE header.dot",
        "NODE_STATUS_FILE status.txt 30 ALWAYS-UPDATE",
        "JOBSTATE_LOG jobstate.log",
    ]) + "\n"
    model = parse_text(text, file="every.dag")
    assert model.nodes["A"].vars == [Var("x", 'a "q" \\ $(JOB)', VarsPlacement.PREPEND),
                                     Var("My.Attr", "v", VarsPlacement.PREPEND)]
    assert model.nodes["B"].inline_submit == "executable = /bin/echo\n}\n"
    assert model.nodes["B"].save_point_file == "B-every.dag.save"
    written = format_dag(model)
    assert parse_text(written, file="every.dag") == model
    assert format_dag(parse_text(written, file="every.dag")) == written


def test_roundtrip_with_splices_connect_and_includes(tmp_path) -> None:
    """SPLICE lines name their files again; INCLUDEd commands are written inline."""
    (tmp_path / "sd").mkdir()
    (tmp_path / "sd" / "out.dag").write_text("JOB X x.sub\nJOB Y y.sub\nPIN_OUT X 1\nPIN_OUT Y 2\n")
    (tmp_path / "in.dag").write_text("JOB P p.sub\nJOB Q q.sub\nPIN_IN P 1\nPIN_IN Q 2\nCATEGORY P c\nMAXJOBS c 3\n")
    (tmp_path / "inc.dag").write_text("JOB I i.sub\nPARENT I CHILD S\n")
    (tmp_path / "top.dag").write_text(  # INCLUDE below the lines naming splices, which DAGMan needs
        "JOB A a.sub\nSPLICE S out.dag DIR sd\nSPLICE T \"in.dag\"\nCONNECT S T\n"
        "PARENT A CHILD S\nPARENT T CHILD A\nINCLUDE inc.dag\n")
    original = parse_file(str(tmp_path / "top.dag"))
    written = format_dag(original)
    assert "INCLUDE" not in written
    copy = tmp_path / "copy.dag"
    copy.write_text(written)
    again = parse_file(str(copy))
    again.file = original.file
    assert again == original
    assert format_dag(again) == written


@pytest.mark.parametrize("blank", ["\xa0", "\u2009", "\u3000", "\x1f"])
def test_roundtrip_unicode_blank_in_file_names(blank: str) -> None:
    """DAGMan splits tokens on space, tab and CR only; a file name holding another Unicode blank
    (a no-break space pasted from a web page, say) must survive the writer and the parser."""
    dag = Dag(file="u.dag")
    dag.nodes["A"] = Node("A", NodeKind.JOB, f"my{blank}file.sub", dir=f"run{blank}dir",
                          vars=[Var("x", f"a{blank}b")])
    dag.jobstate_log = f"state{blank}.log"
    assert parse_text(format_dag(dag), file="u.dag") == dag
