"""Fuzz tests: malformed DAG text never crashes the parser or the graph builder.

Whatever text ``parse_text`` or ``parse_file`` is given, it either returns a :class:`Dag` or
raises :class:`DagError` whose every error (and warning) renders as ``FILE:LINE: message``;
only a file that cannot be read at all may be reported as ``FILE: message``.  Likewise
``load_graph`` on any DAG that parsed raises nothing but :class:`DagError`.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.dag import Dag, DagError, Diagnostic, load_graph, parse_file, parse_text

SETTINGS = settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                           HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

LOCATED = re.compile(r"[^:\n]+:\d+: .+")
UNLOCATED = re.compile(r"[^:\n]+: .+")


def _check_diagnostic(d: Diagnostic, unreadable: set[str]) -> None:
    assert isinstance(d, Diagnostic), d
    text = str(d)
    assert "\n" not in text, text
    if d.location.line is None:
        # Only a file that cannot be read at all has no line to point at.
        assert d.location.file in unreadable, text
        assert UNLOCATED.fullmatch(text), text
    else:
        assert d.location.line >= 1, text
        assert LOCATED.fullmatch(text), text


def _check_error(e: DagError, unreadable: set[str] = frozenset()) -> None:
    assert e.errors, "a DagError must carry at least one error"
    for d in e.errors:
        _check_diagnostic(d, unreadable)
    for d in e.warnings:
        _check_diagnostic(d, unreadable)


def check_parse(parse, unreadable: set[str] = frozenset()) -> Dag | None:
    """Run ``parse``; it must return a Dag or raise a well-formed DagError, nothing else.

    A Dag that parsed is then lifted: load_graph may refuse it only with a DagError too.
    """
    try:
        dag = parse()
    except DagError as e:
        _check_error(e, unreadable)
        return None
    assert isinstance(dag, Dag)
    for d in dag.warnings:
        _check_diagnostic(d, unreadable)
    try:
        graph = load_graph(dag)
    except DagError as e:
        _check_error(e, unreadable)
        return dag
    assert set(graph.nodes) >= set(dag.nodes)
    return dag


# ---------------------------------------------------------------------------- token soup

KEYWORDS = [
    "JOB", "FINAL", "SUBDAG", "EXTERNAL", "SPLICE", "PARENT", "CHILD", "SCRIPT", "PRE", "POST", "HOLD",
    "DEFER", "DEBUG", "STDOUT", "ALL", "RETRY", "UNLESS-EXIT", "unless_exit", "ABORT-DAG-ON", "abort_dag_on",
    "RETURN", "VARS", "PREPEND", "APPEND", "PRIORITY", "CATEGORY", "MAXJOBS", "PRE_SKIP", "Pre-Skip", "DONE",
    "NOOP", "DIR", "SAVE_POINT_FILE", "CONFIG", "SET_JOB_ATTR", "ENV", "GET", "SET", "DOT", "UPDATE",
    "DONT-UPDATE", "OVERWRITE", "INCLUDE", "NODE_STATUS_FILE", "ALWAYS-UPDATE", "JOBSTATE_LOG", "REJECT",
    "CONNECT", "PIN_IN", "PIN_OUT", "SUBMIT-DESCRIPTION", "PROVISIONER", "SERVICE", "ALL_NODES", "all_nodes",
    "job", "parent", "child", "vars", "retry", "WEAK", "TOLERANCE", "DATA", "NODE",
]
NAMES = ["A", "B", "C", "D", "S", "S+A", "+cat", "cat", "My.X", "_condor_join_node1", "a.sub", "b.sub",
         "inner.dag", "sub.dag", "x.condor.sub", "inc.dag", "missing.dag", "."]
PUNCT = ['"', "'", "\\", "{", "}", "@=", "@=t", "@t", "=", "x=\"v\"", "x='v'", "x=v", "+x=\"1\"", "queue=1",
         '"a b"', "'a\\'b'", '"\\"', "$(JOB)", "$RETURN", ";", "K=V;L=W", "#", "//", "%", "\x00", "é",
         "\u2028", "\x0c", "\x85"]
NUMBERS = ["0", "1", "-1", "2", "3", "42", "255", "256", "-256", "3x", "1.5", "+7", "99999999999999999999999",
           "0x10", "", "1%"]
SEPARATORS = [" ", " ", " ", "\t", "\n", "\n", "\r\n", " \\\n", "\\\n", "\n\n", "\n#c\n", "\n//c\n", "\r"]

tokens = st.one_of(
    st.sampled_from(KEYWORDS),
    st.sampled_from(NAMES),
    st.sampled_from(PUNCT),
    st.sampled_from(NUMBERS),
    st.text(max_size=6),
)


@st.composite
def soups(draw) -> str:
    parts = []
    for token in draw(st.lists(tokens, max_size=60)):
        parts.append(token)
        parts.append(draw(st.sampled_from(SEPARATORS)))
    return "".join(parts)


@st.composite
def line_soups(draw) -> str:
    """Lines that start with a keyword, so that most of them reach a command's own checks."""
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        words = [draw(st.sampled_from(KEYWORDS))] + draw(st.lists(tokens, max_size=8))
        lines.append(" ".join(words))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n", "\\\n", "\\"]))


KNOWN_CRASHERS = ["\\\n", " \\\n\nJOB A a.sub\n", "JOB A a.sub\n\\", "JOB A a.sub\n\\\n# comment\n"]


@SETTINGS
@given(soups())
def test_token_soup(text: str) -> None:
    check_parse(lambda: parse_text(text, file="soup.dag"))


@SETTINGS
@given(line_soups())
def test_keyword_lines(text: str) -> None:
    check_parse(lambda: parse_text(text, file="lines.dag"))


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text(text: str) -> None:
    check_parse(lambda: parse_text(text, file="any.dag"))


@pytest.mark.parametrize("text", KNOWN_CRASHERS)
def test_lone_continuation_lines(text: str) -> None:
    """A '\\' continuing into nothing (end of file, blank line) is at worst a located error."""
    check_parse(lambda: parse_text(text, file="cont.dag"))


# ---------------------------------------------------------------------------- mutations of a valid DAG

VALID = """\
# a DAG that uses most of the language
CONFIG dagman.config
SET_JOB_ATTR My.Owner = "me"
ENV GET PATH HOME
ENV SET A=1;B=2
SUBMIT-DESCRIPTION shared {
    executable = /bin/true
    queue
}
JOB A a.sub DIR adir
JOB B {
    executable = /bin/echo
    arguments = "hello world"
    queue
} NOOP
JOB C @=desc
    executable = /bin/false
@desc DONE
JOB D shared
SUBDAG EXTERNAL E inner.dag DIR sub
FINAL F f.sub
SERVICE Svc svc.sub
PROVISIONER Prov prov.sub
SCRIPT DEFER 4 30 DEBUG pre.log STDOUT PRE A pre.sh $JOB
SCRIPT POST A post.sh $RETURN
SCRIPT HOLD B hold.sh
PRE_SKIP A 3
VARS A PREPEND x="a \\"quoted\\" \\\\ value" +Attr='v'
VARS ALL_NODES APPEND y=bare
RETRY B 3 UNLESS-EXIT 42
RETRY ALL_NODES 1
ABORT-DAG-ON C 2 RETURN 1
PRIORITY A 5
CATEGORY A +global
CATEGORY B local
MAXJOBS +global 2
MAXJOBS local 1
SAVE_POINT_FILE B
PARENT A B CHILD C D
PARENT D CHILD E \\
    
PARENT C CHILD E
DOT dag.dot UPDATE DONT-OVERWRITE INCLUDE header.dot
NODE_STATUS_FILE status.txt 30 ALWAYS-UPDATE
JOBSTATE_LOG jobstate.log
"""

_PIECES = re.compile(r"\s+|[\"'{}\\=;@+]|[^\s\"'{}\\=;@+]+")


def test_valid_base_dag_parses() -> None:
    dag = check_parse(lambda: parse_text(VALID, file="valid.dag"))
    assert dag is not None and len(dag.nodes) == 8


@st.composite
def mutants(draw) -> str:
    pieces = _PIECES.findall(VALID)
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    for _ in range(draw(st.integers(1, 8))):
        if not pieces:
            break
        i = rng.randrange(len(pieces))
        op = draw(st.sampled_from(["delete", "duplicate", "truncate", "insert", "swap", "newline"]))
        if op == "delete":
            del pieces[i]
        elif op == "duplicate":
            pieces.insert(i, pieces[i])
        elif op == "truncate":
            pieces[i] = pieces[i][: rng.randrange(len(pieces[i]) + 1)]
        elif op == "insert":
            pieces.insert(i, draw(tokens))
        elif op == "swap":
            j = rng.randrange(len(pieces))
            pieces[i], pieces[j] = pieces[j], pieces[i]
        else:
            pieces.insert(i, draw(st.sampled_from(["\n", "\\\n", " \\\n\n", "\r\n"])))
    text = "".join(pieces)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@SETTINGS
@given(mutants())
def test_mutated_valid_dag(text: str) -> None:
    check_parse(lambda: parse_text(text, file="mutant.dag"))


@st.composite
def line_mutants(draw) -> str:
    lines = VALID.splitlines()
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    for _ in range(draw(st.integers(1, 6))):
        i = rng.randrange(len(lines))
        op = draw(st.sampled_from(["delete", "duplicate", "move", "cut"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "move":
            lines.insert(rng.randrange(len(lines) + 1), lines.pop(i))
        else:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        if not lines:
            break
    return "\n".join(lines) + "\n"


@SETTINGS
@given(line_mutants())
def test_line_mutations_of_valid_dag(text: str) -> None:
    check_parse(lambda: parse_text(text, file="lines.dag"))


# ---------------------------------------------------------------------------- files, INCLUDE and SPLICE

INCLUDE_LINES = [
    "INCLUDE inc.dag", "INCLUDE 'inc.dag'", "INCLUDE main.dag", "INCLUDE missing.dag", "INCLUDE subdir",
    "INCLUDE", "INCLUDE a b", "SPLICE S splice.dag", "SPLICE T splice.dag DIR subdir", "SPLICE U main.dag",
    "SPLICE V missing.dag", "SPLICE W inc.dag", "SPLICE S2 splice.dag DIR nowhere", "SPLICE X subdir",
    "PARENT S CHILD A", "PARENT A CHILD S", "PARENT S CHILD T", "CONNECT S T", "CONNECT S A", "CONNECT T S",
    "PARENT S T CHILD A B", "CATEGORY S+A cat", "VARS S x=\"1\"", "RETRY S 2", "JOB A a.sub", "JOB B b.sub",
    "PARENT A CHILD B", "PARENT B CHILD A", "FINAL F f.sub", "MAXJOBS cat 1",
]
SPLICE_LINES = [
    "JOB A a.sub", "JOB B b.sub", "PARENT A CHILD B", "PARENT B CHILD A", "PIN_IN A 1", "PIN_OUT B 1",
    "PIN_IN B 2", "PIN_OUT A 3", "FINAL F f.sub", "CATEGORY A cat", "CATEGORY B +g", "MAXJOBS cat 2",
    "INCLUDE inc.dag", "INCLUDE splice.dag", "SPLICE N splice.dag", "SPLICE M inner.dag", "CONFIG c.conf",
    "DOT x.dot", "JOB _condor_join_node1 j.sub", "PARENT A B CHILD A B", "DONE A", "VARS ALL_NODES x='1'",
]
INNER_LINES = ["JOB X x.sub", "JOB Y y.sub", "PARENT X CHILD Y", "PIN_IN X 1", "PIN_OUT Y 1", "PARENT Y CHILD X"]


def _soup_line(draw) -> str:
    return " ".join([draw(st.sampled_from(KEYWORDS))] + draw(st.lists(tokens, max_size=5)))


def _file_text(draw, pool: list[str], noise: int, required: list[str] = ()) -> str:
    lines = [draw(st.sampled_from(pool)) if draw(st.integers(0, 9)) >= noise else _soup_line(draw)
             for _ in range(draw(st.integers(0, 8)))]
    lines = list(required) + lines
    draw(st.randoms()).shuffle(lines)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\\\n"]))


@st.composite
def file_sets(draw) -> dict[str, str]:
    noise = draw(st.sampled_from([0, 0, 1, 3, 6]))  # 0: only lines of the pools
    base = ["JOB A a.sub", "JOB B b.sub"]
    return {
        "main.dag": _file_text(draw, INCLUDE_LINES, noise,
                               base + draw(st.lists(st.sampled_from(INCLUDE_LINES[:14]), max_size=3))),
        "inc.dag": _file_text(draw, INCLUDE_LINES + SPLICE_LINES, noise),
        "splice.dag": _file_text(draw, SPLICE_LINES, noise, base),
        "subdir/splice.dag": _file_text(draw, SPLICE_LINES, noise, base),
        "subdir/inc.dag": _file_text(draw, SPLICE_LINES, noise),
        "inner.dag": _file_text(draw, INNER_LINES, noise, ["JOB X x.sub", "JOB Y y.sub"]),
        "subdir/inner.dag": _file_text(draw, INNER_LINES, noise, ["JOB X x.sub", "JOB Y y.sub"]),
    }


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")


@SETTINGS
@given(file_sets())
def test_parse_file_with_includes_and_splices(tmp_path: Path, files: dict[str, str]) -> None:
    _write(tmp_path, files)
    main = str(tmp_path / "main.dag")
    check_parse(lambda: parse_file(main))


@st.composite
def splice_sets(draw) -> dict[str, str]:
    """Mostly valid DAGs made of splices, nested splices, pins and CONNECT lines."""
    def edges(names: list[str], most: int) -> list[str]:
        side = st.lists(st.sampled_from(names), min_size=1, max_size=3)
        return [f"PARENT {' '.join(p)} CHILD {' '.join(c)}" for p, c in draw(st.lists(st.tuples(side, side), max_size=most))]

    def pins(names: list[str]) -> list[str]:
        out = []
        for keyword in ("PIN_IN", "PIN_OUT"):
            for number in range(1, draw(st.integers(0, 2)) + 1):
                out.append(f"{keyword} {draw(st.sampled_from(names))} {number}")
        return out

    inner = ["JOB X x.sub", "JOB Y y.sub DIR ydir"] + edges(["X", "Y"], 2) + pins(["X", "Y"])
    splice = ["JOB A a.sub", "JOB B b.sub", "CATEGORY A cat", "CATEGORY B +g", "MAXJOBS cat 2"]
    members = ["A", "B"]
    if draw(st.booleans()):
        splice.append(draw(st.sampled_from(["SPLICE N inner.dag", "SPLICE N inner.dag DIR deep"])))
        members.append("N")
    splice += edges(members, 3) + pins(["A", "B"])
    main = ["JOB A a.sub", "JOB B b.sub", "SPLICE S splice.dag", "SPLICE T splice.dag DIR sub", "MAXJOBS +g 5"]
    main += edges(["A", "B", "S", "T"], 4)
    if draw(st.booleans()):
        main.append(draw(st.sampled_from(["CONNECT S T", "CONNECT T S", "CONNECT S S"])))
    rnd = draw(st.randoms())
    for lines in (inner, splice, main):
        rnd.shuffle(lines)
    return {"main.dag": "\n".join(main) + "\n", "splice.dag": "\n".join(splice) + "\n",
            "sub/splice.dag": "\n".join(splice) + "\n", "inner.dag": "\n".join(inner) + "\n",
            "deep/inner.dag": "\n".join(inner) + "\n", "sub/inner.dag": "\n".join(inner) + "\n",
            "sub/deep/inner.dag": "\n".join(inner) + "\n"}


@SETTINGS
@given(splice_sets())
def test_parse_file_with_splice_graphs(tmp_path: Path, files: dict[str, str]) -> None:
    _write(tmp_path, files)
    check_parse(lambda: parse_file(str(tmp_path / "main.dag")))


@SETTINGS
@given(mutants())
def test_parse_file_agrees_with_parse_text(tmp_path: Path, text: str) -> None:
    """The same text gives the same result whether read from a file or from memory."""
    path = tmp_path / "same.dag"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    results = []
    for parse in (lambda: parse_file(str(path)), lambda: parse_text(text, file=str(path), base_dir=str(tmp_path))):
        try:
            results.append(("ok", parse()))
        except DagError as e:
            results.append(("error", [str(d) for d in e.errors]))
    assert results[0] == results[1]


@pytest.mark.parametrize("char", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_only_newlines_end_lines(tmp_path: Path, char: str) -> None:
    """DAGMan reads lines up to '\\n'; other Unicode line separators are ordinary characters.

    parse_file (Python's file iteration) already agrees; parse_text must too.
    """
    text = f'JOB A a.sub\nVARS A x="p{char}q"\n'
    path = tmp_path / "sep.dag"
    path.write_text(text, encoding="utf-8")
    from_file = parse_file(str(path))
    assert from_file.nodes["A"].vars[0].value == f"p{char}q"
    from_text = parse_text(text, file=str(path))
    assert from_text == from_file


def test_unreadable_top_level_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.dag")
    with pytest.raises(DagError) as info:
        parse_file(missing)
    _check_error(info.value, {missing})
    assert str(info.value.errors[0]).startswith(f"{missing}: ")

    with pytest.raises(DagError) as info:
        parse_file(str(tmp_path))  # a directory
    _check_error(info.value, {str(tmp_path)})


def test_unreadable_include_is_located_at_the_include_line(tmp_path: Path) -> None:
    (tmp_path / "main.dag").write_text("JOB A a.sub\nINCLUDE missing.dag\nSPLICE S gone.dag\n")
    with pytest.raises(DagError) as info:
        parse_file(str(tmp_path / "main.dag"))
    _check_error(info.value)
    lines = sorted(d.location.line for d in info.value.errors)
    assert lines == [2, 3]


def test_recursive_include_and_splice_are_errors(tmp_path: Path) -> None:
    (tmp_path / "main.dag").write_text("JOB A a.sub\nINCLUDE inc.dag\n")
    (tmp_path / "inc.dag").write_text("JOB B b.sub\nINCLUDE main.dag\n")
    with pytest.raises(DagError) as info:
        parse_file(str(tmp_path / "main.dag"))
    _check_error(info.value)
    assert any("recursive" in d.message.lower() for d in info.value.errors)

    (tmp_path / "self.dag").write_text("JOB A a.sub\nSPLICE S self.dag\n")
    with pytest.raises(DagError) as info:
        parse_file(str(tmp_path / "self.dag"))
    _check_error(info.value)
    assert any("recursive" in d.message.lower() for d in info.value.errors)


def test_non_utf8_bytes_do_not_crash(tmp_path: Path) -> None:
    path = tmp_path / "bytes.dag"
    path.write_bytes(b"JOB A\xff a.sub\nPARENT A\xff CHILD B\xfe\nVARS A\xff x=\"\xc3\"\n\xff\xfe\n")
    check_parse(lambda: parse_file(str(path)))


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_in_a_file(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bin.dag"
    path.write_bytes(data)
    check_parse(lambda: parse_file(str(path)))


# ---------------------------------------------------------------------------- graphs of parsed DAGs

@st.composite
def graph_texts(draw) -> str:
    """Valid-looking DAGs with many PARENT lines: cycles, self-loops, joins, duplicates."""
    names = draw(st.lists(st.sampled_from(["A", "B", "C", "D", "E", "_condor_join_node1", "_condor_join_node2"]),
                          min_size=1, max_size=6, unique=True))
    lines = [f"JOB {n} {n}.sub" for n in names]
    side = st.lists(st.sampled_from(names), min_size=1, max_size=4)
    for parents, children in draw(st.lists(st.tuples(side, side), max_size=8)):
        lines.append(f"PARENT {' '.join(parents)} CHILD {' '.join(children)}")
    if draw(st.booleans()):
        lines.append("FINAL Z z.sub")
    return "\n".join(lines) + "\n"


@SETTINGS
@given(graph_texts())
def test_load_graph_only_raises_dag_error(text: str) -> None:
    check_parse(lambda: parse_text(text, file="graph.dag"))

