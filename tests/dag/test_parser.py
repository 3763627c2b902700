"""Unit tests for :mod:`engine.dag.parser`, one group per DAG command.

Each group checks what a DAG file is parsed into (the :class:`engine.dag.Dag` model) and, for
bad input, the ``FILE:LINE: message`` diagnostics a user sees: the file, the line and the words
of the message that tell what is wrong.  The expected behaviour is HTCondor DAGMan's
(the DAGMan manual's chapter on the DAG input file).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.dag import DagError, Diagnostic, NodeKind, ScriptKind, Var, VarsPlacement, parse_file, parse_text
from engine.dag.model import AbortDagOn, Dependency, Dot, NodeStatusFile

DAG = "test.dag"


# ------------------------------------------------------------------------------------ helpers

def src(*lines: str) -> str:
    """DAG text with one argument per line, so that line N of the file is argument N."""
    return "\n".join(lines) + "\n"


def parse(*lines: str, base_dir: str | None = None):
    return parse_text(src(*lines), file=DAG, base_dir=base_dir)


def errors(*lines: str, base_dir: str | None = None) -> list[Diagnostic]:
    with pytest.raises(DagError) as e:
        parse(*lines, base_dir=base_dir)
    return e.value.errors


def file_errors(path: Path) -> list[Diagnostic]:
    with pytest.raises(DagError) as e:
        parse_file(path)
    return e.value.errors


def the_error(*lines: str) -> Diagnostic:
    """The one error the text has (fails if there are more or fewer)."""
    found = errors(*lines)
    assert len(found) == 1, [str(d) for d in found]
    return found[0]


def check(diag: Diagnostic, file: str | os.PathLike[str], line: int, *fragments: str) -> None:
    """``diag`` is at ``file:line`` and its message contains every fragment (case-insensitive)."""
    assert diag.location.file == os.fspath(file), str(diag)
    assert diag.location.line == line, str(diag)
    assert str(diag) == f"{os.fspath(file)}:{line}: {diag.message}"
    for fragment in fragments:
        assert fragment.lower() in diag.message.lower(), f"{fragment!r} not in {str(diag)!r}"


def write(directory: Path, name: str, *lines: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(src(*lines))
    return path


def warnings_at(dag_or_error) -> list[tuple[int | None, str]]:
    return [(w.location.line, w.message) for w in dag_or_error.warnings]


# ------------------------------------------------------------------------------ lexical rules

def test_keywords_are_case_insensitive_with_dash_and_underscore_interchangeable():
    dag = parse(
        "job A a.sub",
        "Job B b.sub",
        "abort_dag_on A 3 return 4",
        "Pre-Skip A 2",
        "parent A child B",
        "Retry B 1 unless_exit 7",
        "submit_description d {",
        "queue",
        "}",
        "Submit-Description e @=T",
        "queue 2",
        "@T",
        "save-point-file A a.save",
        "Node-Status-File status.txt 5 always_update",
        "dot graph.dot dont_update dont_overwrite",
        "MaxJobs big 2",
        "Category A big",
    )
    a, b = dag.nodes["A"], dag.nodes["B"]
    assert a.abort_dag_on == AbortDagOn(3, 4)
    assert a.pre_skip == 2
    assert dag.dependencies == [Dependency(("A",), ("B",))]
    assert (b.retry, b.unless_exit) == (1, 7)
    assert dag.submit_descriptions == {"d": "queue\n", "e": "queue 2\n"}
    assert a.save_point_file == "a.save"
    assert dag.node_status_file == NodeStatusFile("status.txt", 5, True)
    assert dag.dot == Dot("graph.dot", update=False, overwrite=False)
    assert dag.max_jobs == {"big": 2}
    assert a.category == "big"


def test_comment_and_blank_lines_are_skipped_and_lines_keep_their_numbers():
    found = errors(
        "# a comment",
        "// another comment",
        "",
        "   ",
        "   # indented comment",
        "\t// indented comment",
        "JOB A a.sub",
        "RETRY A lots",
    )
    assert len(found) == 1
    check(found[0], DAG, 8, "RETRY", "lots")


def test_hash_after_a_command_is_not_a_comment():
    check(the_error("JOB A a.sub # my job"), DAG, 1, "'#'")


@pytest.mark.parametrize("keyword", ["DATA", "WEAK", "TOLERANCE", "NODE", "Jobs"])
def test_unknown_command_is_an_error(keyword):
    diag = the_error("JOB A a.sub", f"{keyword} A B CHILD C", "JOB B b.sub")
    check(diag, DAG, 2, "unknown command", repr(keyword))


def test_unclosed_quote_is_an_error():
    check(the_error('JOB A "a.sub'), DAG, 1, "closing")


def test_several_errors_are_all_reported_sorted_by_line():
    found = errors(
        "PARENT A CHILD Missing",  # found only when the file has been read
        "JOB A a.sub",
        "JOB A again.sub",
        "RETRY A many",
        "FROB",
        "VARS A queue_size=1",
    )
    assert [d.location.line for d in found] == [1, 3, 4, 5, 6]
    check(found[0], DAG, 1, "undefined node Missing")
    check(found[1], DAG, 3, "already defined", f"{DAG}:2")
    check(found[2], DAG, 4, "RETRY", "many")
    check(found[3], DAG, 5, "unknown command", "FROB")
    check(found[4], DAG, 6, "queue")


def test_dag_error_text_lists_every_error_as_file_line_message():
    with pytest.raises(DagError) as e:
        parse("JOB A", "RETRY A x")
    assert str(e.value) == "\n".join(str(d) for d in e.value.errors)
    assert str(e.value).splitlines()[0].startswith(f"{DAG}:1: ")
    assert str(e.value).splitlines()[1].startswith(f"{DAG}:2: ")


# ----------------------------------------------------------------------- line continuation

def test_backslash_continues_a_command_joined_with_one_space():
    dag = parse(
        "SCRIPT POST A post.sh \\",
        "    $RETURN \\",
        "# a comment between the pieces is skipped",
        "// and so is this one",
        "    $JOB",
        "JOB A a.sub",
    )
    assert dag.nodes["A"].scripts[ScriptKind.POST].command == "post.sh $RETURN $JOB"


def test_continued_command_errors_are_located_at_its_first_line_and_later_lines_keep_numbers():
    found = errors(
        "JOB A a.sub",
        "RETRY A \\",
        "   lots",
        "RETRY A more",
    )
    assert [(d.location.line) for d in found] == [2, 4]
    check(found[0], DAG, 2, "lots")
    check(found[1], DAG, 4, "more")


def test_continued_job_line():
    dag = parse("JOB A a.sub \\", "  DIR work \\", "  NOOP")
    a = dag.nodes["A"]
    assert (a.submit, a.dir, a.noop) == ("a.sub", "work", True)


@pytest.mark.parametrize(
    "lines",
    [
        ("JOB A a.sub", "\\"),  # a lone backslash on the last line
        ("JOB A a.sub", "\\", "", "JOB B b.sub"),  # a lone backslash followed by a blank line
    ],
    ids=["at-end-of-file", "before-blank-line"],
)
def test_lone_backslash_line_is_not_a_crash(lines):
    # An empty continued command is at most a DagError at its line, never a traceback.
    try:
        dag = parse(*lines)
    except DagError as e:
        assert [d.location.line for d in e.errors] == [2]
    else:
        assert "A" in dag.nodes


# ------------------------------------------------------------------------------------- JOB

def test_job_with_a_submit_file():
    dag = parse("", "JOB A a.sub")
    a = dag.nodes["A"]
    assert a.name == "A"
    assert a.kind is NodeKind.JOB
    assert a.submit == "a.sub"
    assert a.inline_submit is None
    assert (a.dir, a.noop, a.done) == (None, False, False)
    assert (a.location.file, a.location.line) == (DAG, 2)


@pytest.mark.parametrize(
    "options",
    ["DIR work NOOP DONE", "DONE NOOP DIR work", "noop dir work done", "NOOP DONE DIR work"],
)
def test_job_options_in_any_order(options):
    a = parse(f"JOB A a.sub {options}").nodes["A"]
    assert (a.submit, a.dir, a.noop, a.done) == ("a.sub", "work", True, True)


def test_job_options_are_each_optional():
    dag = parse("JOB A a.sub NOOP", "JOB B b.sub DONE", "JOB C c.sub DIR c")
    assert (dag.nodes["A"].noop, dag.nodes["A"].done, dag.nodes["A"].dir) == (True, False, None)
    assert (dag.nodes["B"].noop, dag.nodes["B"].done) == (False, True)
    assert dag.nodes["C"].dir == "c"


def test_job_quoted_paths_are_unquoted():
    dag = parse(
        'JOB A "my job.sub" DIR "run dir"',
        "JOB B 'other job.sub' dir 'b dir'",
    )
    assert (dag.nodes["A"].submit, dag.nodes["A"].dir) == ("my job.sub", "run dir")
    assert (dag.nodes["B"].submit, dag.nodes["B"].dir) == ("other job.sub", "b dir")


@pytest.mark.parametrize(
    "options, word",
    [("NOOP NOOP", "NOOP"), ("DIR x DIR y", "DIR"), ("done DONE", "DONE"), ("dir x NOOP Dir y", "DIR")],
)
def test_job_option_given_twice_is_an_error(options, word):
    check(the_error("JOB A a.sub " + options), DAG, 1, word, "twice")


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("JOB", ["node name", "submit file"]),
        ("JOB A", ["node name", "submit file"]),
        ("JOB A a.sub DIR", ["DIR needs a directory"]),
        ("JOB A a.sub RETRY", ["unexpected 'RETRY'"]),
        ("JOB A a.sub NOOP extra", ["unexpected 'extra'"]),
    ],
)
def test_job_syntax_errors(line, fragments):
    check(the_error("JOB Z z.sub", line), DAG, 2, *fragments)


def test_job_with_a_nested_dag_submit_file_is_rejected():
    diag = the_error("JOB A inner.dag.condor.sub")
    check(diag, DAG, 1, "inner.dag.condor.sub", "SUBDAG EXTERNAL")


def test_job_can_name_a_submit_description():
    dag = parse("JOB A desc", "SUBMIT-DESCRIPTION desc {", "executable = /bin/true", "queue", "}")
    assert dag.nodes["A"].submit == "desc"
    assert dag.submit_descriptions == {"desc": "executable = /bin/true\nqueue\n"}


# ------------------------------------------------------------------ inline submit descriptions

def test_inline_description_in_braces_drops_blank_and_comment_lines():
    dag = parse(
        "JOB A {",
        "    executable = /bin/echo",
        "",
        "    # a comment",
        "    arguments = hello",
        "    queue",
        "}",
        "JOB B b.sub",
    )
    a = dag.nodes["A"]
    assert a.inline_submit == "executable = /bin/echo\narguments = hello\nqueue\n"
    assert a.submit == ""
    assert (a.dir, a.noop, a.done) == (None, False, False)
    assert list(dag.nodes) == ["A", "B"]


def test_inline_description_drops_double_slash_comment_lines():
    # DAGMan's skip_line drops '#' and '//' lines inside an inline description too.
    dag = parse("JOB A {", "executable = /bin/true", "// a comment", "queue", "}")
    assert dag.nodes["A"].inline_submit == "executable = /bin/true\nqueue\n"


def test_inline_description_options_after_the_closing_brace():
    a = parse("JOB A {", "queue", "} DIR work NOOP").nodes["A"]
    assert a.inline_submit == "queue\n"
    assert (a.dir, a.noop, a.done) == ("work", True, False)


def test_inline_description_with_a_tag():
    dag = parse(
        "JOB A @=NodeA",
        "executable = /bin/true",
        "# }",
        "}",
        "queue",
        "@NodeA DONE",
    )
    a = dag.nodes["A"]
    assert a.inline_submit == "executable = /bin/true\n}\nqueue\n"
    assert a.done is True


def test_inline_description_on_final_node():
    dag = parse("FINAL F {", "queue", "} NOOP")
    assert dag.final is dag.nodes["F"]
    assert (dag.nodes["F"].inline_submit, dag.nodes["F"].noop) == ("queue\n", True)


def test_lines_after_an_inline_description_keep_their_numbers():
    check(the_error("JOB A {", "queue", "}", "RETRY A x"), DAG, 4, "'x'")


def test_unclosed_inline_description_is_an_error_at_the_job_line():
    check(the_error("JOB Z z.sub", "JOB A {", "executable = x", "queue"), DAG, 2, "not closed", "}")


def test_unclosed_tagged_description_names_the_tag():
    check(the_error("JOB A @=desc", "queue", "@other"), DAG, 1, "not closed", "@desc")


def test_inline_tag_must_not_be_empty():
    diag = errors("JOB A @=", "queue", "@")[0]
    check(diag, DAG, 1, "tag")


def test_inline_description_with_options_before_the_body_reports_one_error():
    # The options must follow the closing brace.  The block itself is still a block: its
    # lines are not DAG commands and must not be reported as unknown commands.
    found = errors("JOB A { NOOP", "executable = /bin/true", "queue", "}", "JOB B b.sub")
    assert [str(d) for d in found] == [str(found[0])]
    check(found[0], DAG, 1, "NOOP", "closing")


# ------------------------------------------------------------------------ SUBMIT-DESCRIPTION

def test_submit_description_blocks():
    dag = parse(
        "SUBMIT-DESCRIPTION sleep {",
        "  executable = /bin/sleep",
        "",
        "  # comment",
        "  queue",
        "}",
        "SUBMIT-DESCRIPTION touch @=desc",
        "  executable = /bin/touch",
        "@desc",
        "JOB A sleep",
        "JOB B touch",
    )
    assert dag.submit_descriptions == {
        "sleep": "executable = /bin/sleep\nqueue\n",
        "touch": "executable = /bin/touch\n",
    }
    assert (dag.nodes["A"].submit, dag.nodes["B"].submit) == ("sleep", "touch")


@pytest.mark.parametrize(
    "lines, line, fragments",
    [
        (["SUBMIT-DESCRIPTION d"], 1, ["inline description"]),
        (["SUBMIT-DESCRIPTION d d.sub"], 1, ["inline description"]),
        (["SUBMIT-DESCRIPTION d {", "queue", "} NOOP"], 1, ["after the SUBMIT-DESCRIPTION block"]),
        (["SUBMIT-DESCRIPTION d {", "queue"], 1, ["not closed"]),
        (["SUBMIT-DESCRIPTION d {", "}", "SUBMIT-DESCRIPTION d @=x", "@x"], 3, ["d is already defined"]),
    ],
)
def test_submit_description_errors(lines, line, fragments):
    check(the_error(*lines), DAG, line, *fragments)


# ----------------------------------------------------------------------------------- FINAL

def test_final_node():
    dag = parse("JOB A a.sub", "FINAL F final.sub DIR fin NOOP")
    f = dag.nodes["F"]
    assert f.kind is NodeKind.FINAL
    assert (f.submit, f.dir, f.noop) == ("final.sub", "fin", True)
    assert dag.final is f


def test_dag_without_final_node():
    assert parse("JOB A a.sub").final is None


def test_second_final_node_is_an_error_naming_the_first():
    diag = the_error("FINAL F f.sub", "JOB A a.sub", "FINAL G g.sub")
    check(diag, DAG, 3, "at most one FINAL", "F", f"{DAG}:1")


@pytest.mark.parametrize("line", ["PARENT A CHILD F", "PARENT F CHILD A", "PARENT A F CHILD B"])
def test_final_node_cannot_have_parents_or_children(line):
    check(the_error("JOB A a.sub", "JOB B b.sub", "FINAL F f.sub", line), DAG, 4, "FINAL", "F", "parents or children")


@pytest.mark.parametrize(
    "command, keyword",
    [("RETRY F 2", "RETRY"), ("PRIORITY F 3", "PRIORITY"), ("CATEGORY F cat", "CATEGORY"), ("ABORT-DAG-ON F 1", "ABORT-DAG-ON")],
)
@pytest.mark.parametrize("final_first", [True, False], ids=["after-FINAL", "before-FINAL"])
def test_final_node_refuses_per_node_commands(command, keyword, final_first):
    lines = ["FINAL F f.sub", command] if final_first else [command, "FINAL F f.sub"]
    check(the_error(*lines), DAG, lines.index(command) + 1, "FINAL", "F", keyword)


def test_final_node_accepts_scripts_vars_and_pre_skip():
    f = parse("FINAL F f.sub", "SCRIPT PRE F pre.sh", "VARS F x=\"1\"", "PRE_SKIP F 3").nodes["F"]
    assert f.scripts[ScriptKind.PRE].command == "pre.sh"
    assert f.vars == [Var("x", "1")]
    assert f.pre_skip == 3


def test_done_option_on_final_node_is_ignored_with_a_warning():
    dag = parse("FINAL F f.sub DONE")
    assert dag.nodes["F"].done is False
    [(line, message)] = warnings_at(dag)
    assert line == 1 and "DONE" in message


def test_done_command_on_final_node_is_an_error():
    check(the_error("FINAL F f.sub", "DONE F"), DAG, 2, "FINAL", "F", "DONE")


# ------------------------------------------------------------------ PROVISIONER and SERVICE

def test_provisioner_node():
    p = parse("PROVISIONER P prov.sub", "JOB A a.sub").nodes["P"]
    assert (p.kind, p.submit) == (NodeKind.PROVISIONER, "prov.sub")


def test_second_provisioner_is_an_error_naming_the_first():
    check(the_error("PROVISIONER P p.sub", "PROVISIONER Q q.sub"), DAG, 2, "at most one PROVISIONER", "P", f"{DAG}:1")


def test_service_nodes():
    dag = parse("SERVICE S s.sub", "SERVICE T t.sub", "JOB A a.sub")
    assert [(n.name, n.kind) for n in dag.nodes.values()] == [
        ("S", NodeKind.SERVICE), ("T", NodeKind.SERVICE), ("A", NodeKind.JOB)
    ]


@pytest.mark.parametrize("kind", ["SERVICE", "PROVISIONER"])
def test_service_and_provisioner_cannot_have_parents(kind):
    check(the_error(f"{kind} S s.sub", "JOB A a.sub", "PARENT S CHILD A"), DAG, 3, kind, "S", "parents or children")


@pytest.mark.parametrize("kind", ["SERVICE", "PROVISIONER"])
def test_service_and_provisioner_refuse_retry(kind):
    check(the_error(f"{kind} S s.sub", "RETRY S 2"), DAG, 2, kind, "RETRY")


# ----------------------------------------------------------------------------------- SUBDAG

def test_subdag_external():
    dag = parse("SUBDAG EXTERNAL S inner.dag DIR inner NOOP DONE", "subdag external T t.dag")
    s = dag.nodes["S"]
    assert (s.kind, s.submit, s.dir, s.noop, s.done) == (NodeKind.SUBDAG, "inner.dag", "inner", True, True)
    assert dag.nodes["T"].kind is NodeKind.SUBDAG


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("SUBDAG S inner.dag", ["EXTERNAL"]),
        ("SUBDAG", ["EXTERNAL"]),
        ("SUBDAG EXTERNAL S", ["DAG file"]),
        ("SUBDAG EXTERNAL S inner.dag RETRY", ["unexpected 'RETRY'"]),
    ],
)
def test_subdag_errors(line, fragments):
    check(the_error(line), DAG, 1, *fragments)


# ------------------------------------------------------------------------------ node names

@pytest.mark.parametrize("name", ["PARENT", "parent", "Child", "CHILD", "ALL_NODES", "all_nodes", "All_Nodes"])
@pytest.mark.parametrize("command", ["JOB {} a.sub", "FINAL {} f.sub", "SUBDAG EXTERNAL {} s.dag", "SERVICE {} s.sub"])
def test_reserved_words_cannot_be_node_names(name, command):
    check(the_error("JOB Z z.sub", command.format(name)), DAG, 2, name, "reserved")


@pytest.mark.parametrize("name", ["a+b", "+a", "a+"])
def test_plus_is_not_allowed_in_node_names(name):
    check(the_error(f"JOB {name} a.sub"), DAG, 1, name, "'+'")


def test_names_are_case_sensitive_and_may_contain_dots_and_dashes():
    dag = parse("JOB a a.sub", "JOB A b.sub", "JOB node.1-x c.sub")
    assert list(dag.nodes) == ["a", "A", "node.1-x"]


@pytest.mark.parametrize("second", ["JOB A other.sub", "FINAL A f.sub", "SUBDAG EXTERNAL A a.dag", "SERVICE A s.sub"])
def test_duplicate_node_names_where_it_was_first_defined(second):
    diag = the_error("JOB B b.sub", "", "JOB A a.sub", second)
    check(diag, DAG, 4, "node A", "already defined", f"{DAG}:3")


# ---------------------------------------------------------------------------- PARENT / CHILD

def test_parent_child_many_to_many():
    dag = parse("JOB A a", "JOB B b", "JOB C c", "JOB D d", "PARENT A B CHILD C D", "PARENT C CHILD D")
    assert dag.dependencies == [Dependency(("A", "B"), ("C", "D")), Dependency(("C",), ("D",))]
    assert [d.location.line for d in dag.dependencies] == [5, 6]


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("PARENT A B", ["no CHILD"]),
        ("PARENT CHILD B", ["no parent"]),
        ("PARENT", ["no CHILD"]),
        ("PARENT A CHILD", ["no child"]),
        ("PARENT ALL_NODES CHILD B", ["ALL_NODES"]),
        ("PARENT A CHILD all_nodes", ["all_nodes"]),
    ],
)
def test_parent_child_syntax_errors(line, fragments):
    check(the_error("JOB A a", "JOB B b", line), DAG, 3, *fragments)


def test_parent_child_with_undefined_nodes_names_each_of_them():
    found = errors("JOB A a", "JOB B b", "PARENT A Ghost CHILD B Phantom")
    assert len(found) == 2
    check(found[0], DAG, 3, "undefined node Ghost")
    check(found[1], DAG, 3, "undefined node Phantom")


def test_commands_may_name_nodes_declared_further_down():
    dag = parse(
        "PARENT A CHILD B",
        "VARS B x=\"1\"",
        "RETRY B 2",
        "SCRIPT PRE A pre.sh",
        "PRIORITY A 4",
        "JOB A a.sub",
        "JOB B b.sub",
    )
    assert dag.dependencies == [Dependency(("A",), ("B",))]
    assert dag.nodes["B"].vars == [Var("x", "1")]
    assert dag.nodes["B"].retry == 2
    assert dag.nodes["A"].scripts[ScriptKind.PRE].command == "pre.sh"
    assert dag.nodes["A"].priority == 4


def test_forward_reference_to_a_node_that_never_comes_is_an_error_at_the_command():
    found = errors("RETRY Ghost 2", "JOB A a.sub", "VARS Phantom x=\"1\"")
    assert len(found) == 2
    check(found[0], DAG, 1, "undefined node Ghost")
    check(found[1], DAG, 3, "undefined node Phantom")


def test_splice_names_as_parents_and_children(tmp_path):
    write(tmp_path, "s.dag", "JOB X x.sub")
    write(tmp_path, "t.dag", "JOB Y y.sub")
    main = write(
        tmp_path, "main.dag",
        "PARENT A S CHILD T",  # T is declared below: splices are declared in pass 1 too
        "JOB A a.sub",
        "SPLICE S s.dag",
        "SPLICE T t.dag",
        "PARENT T CHILD A",
    )
    dag = parse_file(main)
    assert dag.dependencies == [Dependency(("A", "S"), ("T",)), Dependency(("T",), ("A",))]


# ----------------------------------------------------------------------------------- SCRIPT

@pytest.mark.parametrize("kind", ["PRE", "POST", "HOLD", "pre", "Post", "hold"])
def test_script_types(kind):
    node = parse("JOB A a.sub", f"SCRIPT {kind} A /bin/script.sh arg").nodes["A"]
    script = node.scripts[ScriptKind(kind.upper())]
    assert script.kind is ScriptKind(kind.upper())
    assert script.command == "/bin/script.sh arg"
    assert (script.defer_status, script.defer_time, script.debug_file, script.debug_stream) == (None, None, None, None)


def test_pre_post_and_hold_scripts_coexist():
    scripts = parse("JOB A a", "SCRIPT PRE A pre.sh", "SCRIPT POST A post.sh", "SCRIPT HOLD A hold.sh").nodes["A"].scripts
    assert {k: s.command for k, s in scripts.items()} == {
        ScriptKind.PRE: "pre.sh", ScriptKind.POST: "post.sh", ScriptKind.HOLD: "hold.sh",
    }


@pytest.mark.parametrize(
    "options",
    ["DEFER 4 30 DEBUG dbg.log STDERR", "DEBUG dbg.log STDERR DEFER 4 30", "defer 4 30 debug dbg.log stderr"],
)
def test_script_defer_and_debug_in_either_order(options):
    script = parse("JOB A a.sub", f"SCRIPT {options} POST A post.sh $RETURN").nodes["A"].scripts[ScriptKind.POST]
    assert (script.defer_status, script.defer_time) == (4, 30)
    assert (script.debug_file, script.debug_stream) == ("dbg.log", "STDERR")
    assert script.command == "post.sh $RETURN"


@pytest.mark.parametrize("stream", ["STDOUT", "STDERR", "ALL", "all"])
def test_script_debug_streams(stream):
    script = parse("JOB A a", f"SCRIPT DEBUG d.log {stream} PRE A x.sh").nodes["A"].scripts[ScriptKind.PRE]
    assert script.debug_stream == stream.upper()


def test_script_command_is_kept_raw():
    line = "SCRIPT POST A  /bin/post.sh  \"a b\"  'c'   $RETURN x=$JOB  "
    script = parse("JOB A a.sub", line).nodes["A"].scripts[ScriptKind.POST]
    assert script.command == "/bin/post.sh  \"a b\"  'c'   $RETURN x=$JOB"
    assert script.argv == ["/bin/post.sh", '"a', 'b"', "'c'", "$RETURN", "x=$JOB"]


def test_second_script_of_a_type_replaces_the_first_with_a_warning():
    dag = parse("JOB A a.sub", "SCRIPT PRE A first.sh", "SCRIPT POST A post.sh", "SCRIPT PRE A second.sh")
    assert dag.nodes["A"].scripts[ScriptKind.PRE].command == "second.sh"
    assert dag.nodes["A"].scripts[ScriptKind.POST].command == "post.sh"
    [(line, message)] = warnings_at(dag)
    assert line == 4
    assert "PRE" in message and "A" in message and "replaces" in message


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("SCRIPT", ["PRE, POST or HOLD"]),
        ("SCRIPT A run.sh", ["PRE, POST or HOLD", "'A'"]),
        ("SCRIPT MIDDLE A run.sh", ["PRE, POST or HOLD", "'MIDDLE'"]),
        ("SCRIPT PRE", ["node and a command"]),
        ("SCRIPT PRE A", ["node and a command"]),
        ("SCRIPT PRE A   ", ["node and a command"]),
        ("SCRIPT DEFER x 10 PRE A run.sh", ["DEFER status", "'x'"]),
        ("SCRIPT DEFER 4 soon PRE A run.sh", ["DEFER time", "'soon'"]),
        ("SCRIPT DEFER 4 PRE A run.sh", ["DEFER time", "'PRE'"]),
        ("SCRIPT DEFER 4 -10 PRE A run.sh", ["DEFER time", "negative"]),
        ("SCRIPT DEFER", ["DEFER needs an exit status and a time"]),
        ("SCRIPT DEBUG d.log BOTH PRE A run.sh", ["STDOUT, STDERR or ALL"]),
        ("SCRIPT DEBUG d.log", ["STDOUT, STDERR or ALL"]),
    ],
)
def test_script_errors(line, fragments):
    check(the_error("JOB A a.sub", line), DAG, 2, *fragments)


def test_script_on_an_undefined_node_is_an_error():
    check(the_error("JOB A a.sub", "SCRIPT PRE B pre.sh"), DAG, 2, "undefined node B")


# --------------------------------------------------------------------------------- PRE_SKIP

@pytest.mark.parametrize("code", [1, 2, 255])
def test_pre_skip(code):
    assert parse("JOB A a.sub", f"PRE_SKIP A {code}").nodes["A"].pre_skip == code


def test_pre_skip_zero_warns_and_has_no_effect():
    dag = parse("JOB A a.sub", "PRE_SKIP A 0")
    assert dag.nodes["A"].pre_skip is None
    [(line, message)] = warnings_at(dag)
    assert line == 2 and "PRE_SKIP 0" in message


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("PRE_SKIP A 256", ["between 1 and 255", "256"]),
        ("PRE_SKIP A -1", ["between 1 and 255", "-1"]),
        ("PRE_SKIP A one", ["integer", "'one'"]),
        ("PRE_SKIP A", ["node and an exit code"]),
        ("PRE_SKIP A 1 2", ["node and an exit code"]),
    ],
)
def test_pre_skip_errors(line, fragments):
    check(the_error("JOB A a.sub", line), DAG, 2, *fragments)


def test_pre_skip_zero_on_an_undefined_node_is_still_an_error():
    # PRE_SKIP 0 only warns, but a misspelt node name is still a mistake like in any other command.
    with pytest.raises(DagError) as e:
        parse("JOB A a.sub", "PRE_SKIP Typo 0")
    [diag] = e.value.errors
    check(diag, DAG, 2, "undefined node Typo")


# ------------------------------------------------------------------------------------ RETRY

def test_retry():
    dag = parse("JOB A a", "JOB B b", "JOB C c", "RETRY A 3", "RETRY B 2 UNLESS-EXIT 42", "RETRY C 0")
    assert (dag.nodes["A"].retry, dag.nodes["A"].unless_exit) == (3, None)
    assert (dag.nodes["B"].retry, dag.nodes["B"].unless_exit) == (2, 42)
    assert (dag.nodes["C"].retry, dag.nodes["C"].unless_exit) == (0, None)


def test_retry_defaults_to_zero():
    assert parse("JOB A a").nodes["A"].retry == 0


@pytest.mark.parametrize("keyword", ["UNLESS-EXIT", "unless_exit", "Unless-Exit"])
def test_retry_unless_exit_spellings(keyword):
    a = parse("JOB A a", f"RETRY A 5 {keyword} -3").nodes["A"]
    assert (a.retry, a.unless_exit) == (5, -3)


def test_retry_unless_exit_zero_is_ignored():
    a = parse("JOB A a", "RETRY A 4 UNLESS-EXIT 0").nodes["A"]
    assert (a.retry, a.unless_exit) == (4, None)


def test_later_retry_replaces_earlier_one_including_unless_exit():
    a = parse("JOB A a", "RETRY A 4 UNLESS-EXIT 3", "RETRY A 1").nodes["A"]
    assert (a.retry, a.unless_exit) == (1, None)


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("RETRY A -1", ["negative", "-1"]),
        ("RETRY A 3x", ["integer", "'3x'"]),
        ("RETRY A many", ["integer", "'many'"]),
        ("RETRY A", ["node and a count"]),
        ("RETRY", ["node and a count"]),
        ("RETRY A 1 UNLESS-EXIT", ["RETRY"]),
        ("RETRY A 1 UNLESS 3", ["unexpected 'UNLESS'"]),
        ("RETRY A 1 UNLESS-EXIT x", ["UNLESS-EXIT", "'x'"]),
        ("RETRY A 1 UNLESS-EXIT 2 3", ["RETRY"]),
    ],
)
def test_retry_errors(line, fragments):
    check(the_error("JOB A a.sub", line), DAG, 2, *fragments)


# ----------------------------------------------------------------------------- ABORT-DAG-ON

def test_abort_dag_on():
    dag = parse(
        "JOB A a", "JOB B b", "JOB C c", "JOB D d",
        "ABORT-DAG-ON A 3",
        "ABORT-DAG-ON B 2 RETURN 0",
        "ABORT-DAG-ON C -1 return 255",
    )
    assert dag.nodes["A"].abort_dag_on == AbortDagOn(3, None)
    assert dag.nodes["B"].abort_dag_on == AbortDagOn(2, 0)
    assert dag.nodes["C"].abort_dag_on == AbortDagOn(-1, 255)
    assert dag.nodes["D"].abort_dag_on is None


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("ABORT-DAG-ON A 3 RETURN 256", ["RETURN", "0 and 255", "256"]),
        ("ABORT-DAG-ON A 3 RETURN -1", ["RETURN", "0 and 255", "-1"]),
        ("ABORT-DAG-ON A 3 RETURN x", ["RETURN", "'x'"]),
        ("ABORT-DAG-ON A x", ["exit value", "'x'"]),
        ("ABORT-DAG-ON A", ["node and an exit value"]),
        ("ABORT-DAG-ON A 3 EXIT 2", ["unexpected 'EXIT'"]),
        ("ABORT-DAG-ON A 3 RETURN", ["ABORT-DAG-ON"]),
    ],
)
def test_abort_dag_on_errors(line, fragments):
    check(the_error("JOB A a.sub", line), DAG, 2, *fragments)


# ------------------------------------------------------------------------------------- VARS

def test_vars_placement():
    dag = parse("JOB A a", "VARS A x=\"1\"", "VARS A PREPEND y=\"2\"", "VARS A append z=\"3\"")
    assert dag.nodes["A"].vars == [
        Var("x", "1", None), Var("y", "2", VarsPlacement.PREPEND), Var("z", "3", VarsPlacement.APPEND),
    ]


def test_vars_value_quoting():
    a = parse(
        "JOB A a",
        "VARS A d=\"double quoted\" s='single quoted' bare=plain",
        "VARS A spaced = \"around equals\"",
    ).nodes["A"]
    assert [(v.name, v.value) for v in a.vars] == [
        ("d", "double quoted"), ("s", "single quoted"), ("bare", "plain"),
        ("spaced", "around equals"),
    ]


def test_vars_escapes_in_quoted_values():
    a = parse(
        "JOB A a",
        r"""VARS A q="say \"hi\"" b="back\\slash" x="\x" s='it\'s'""",
    ).nodes["A"]
    assert [(v.name, v.value) for v in a.vars] == [
        ("q", 'say "hi"'), ("b", "back\\slash"), ("x", "x"), ("s", "it's"),
    ]


def test_vars_macro_references_are_kept():
    a = parse("JOB A a", 'VARS A args="$(JOB) $(RETRY)" first="Greg\\"\\"_LeMond"').nodes["A"]
    assert [(v.name, v.value) for v in a.vars] == [("args", "$(JOB) $(RETRY)"), ("first", 'Greg""_LeMond')]


def test_vars_plus_prefix_becomes_my_attribute():
    a = parse("JOB A a", 'VARS A +Owner="\\"me\\"" My.Group="g" my.lower="l"').nodes["A"]
    assert [(v.name, v.value) for v in a.vars] == [("My.Owner", '"me"'), ("My.Group", "g"), ("my.lower", "l")]


@pytest.mark.parametrize(
    "pairs, fragments",
    [
        ('queue="1"', ["queue"]),
        ('QueueSize="1"', ["QueueSize", "queue"]),
        ('+="1"', ["'+'"]),
        ('My.="1"', ["My."]),
        ("x=", ["x", "value"]),
        ("x", ["x", "'='"]),
        ('x="unclosed', ["x", 'closing "']),
        ("x='unclosed", ["x", "closing '"]),
        ('x=a"b', ["x", "quote"]),
        ("PREPEND", ['name="value"']),
        ('a+b="1"', ["a+b"]),
        ('x="1" y', ["y", "'='"]),
    ],
)
def test_vars_errors(pairs, fragments):
    check(the_error("JOB A a.sub", f"VARS A {pairs}"), DAG, 2, *fragments)


def test_vars_plus_queue_is_allowed():
    # +queue becomes My.queue: only names that begin with 'queue' are refused.
    assert parse("JOB A a.sub", 'VARS A +queue="1"').nodes["A"].vars == [Var("My.queue", "1")]


def test_vars_without_pairs_is_an_error():
    check(the_error("JOB A a.sub", "VARS A"), DAG, 2, "name=\"value\"")


def test_vars_redefinition_warns_and_the_last_value_wins():
    dag = parse("JOB A a", "VARS A x=\"1\" y=\"2\"", "VARS A X=\"3\"")
    assert [(v.name, v.value) for v in dag.nodes["A"].vars] == [("x", "1"), ("y", "2"), ("X", "3")]
    [(line, message)] = warnings_at(dag)
    assert line == 3 and "X" in message and "A" in message


def test_vars_redefinition_on_one_line_also_warns():
    dag = parse("JOB A a", 'VARS A x="1" x="2"')
    assert [(v.name, v.value) for v in dag.nodes["A"].vars] == [("x", "1"), ("x", "2")]
    assert [line for line, _ in warnings_at(dag)] == [2]


# -------------------------------------------------------------------- PRIORITY, CATEGORY, MAXJOBS

def test_priority():
    dag = parse("JOB A a", "JOB B b", "JOB C c", "PRIORITY A 10", "PRIORITY B -5")
    assert [n.priority for n in dag.nodes.values()] == [10, -5, 0]


def test_priority_reset_to_a_different_value_warns():
    dag = parse("JOB A a", "PRIORITY A 10", "PRIORITY A 10", "PRIORITY A 20")
    assert dag.nodes["A"].priority == 20
    [(line, message)] = warnings_at(dag)
    assert line == 4 and "20" in message and "10" in message


@pytest.mark.parametrize(
    "line, fragments",
    [("PRIORITY A high", ["PRIORITY", "'high'"]), ("PRIORITY A", ["node and a priority"]), ("PRIORITY A 1 2", ["node and a priority"])],
)
def test_priority_errors(line, fragments):
    check(the_error("JOB A a", line), DAG, 2, *fragments)


def test_category_and_maxjobs():
    dag = parse("JOB A a", "JOB B b", "CATEGORY A big", "CATEGORY B +shared", "MAXJOBS big 2", "MAXJOBS +shared 0")
    assert (dag.nodes["A"].category, dag.nodes["B"].category) == ("big", "+shared")
    assert dag.max_jobs == {"big": 2, "+shared": 0}


def test_later_category_replaces_earlier():
    assert parse("JOB A a", "CATEGORY A one", "CATEGORY A two").nodes["A"].category == "two"


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("CATEGORY A", ["category name"]),
        ("CATEGORY A b c", ["category name"]),
        ("MAXJOBS big", ["category and a limit"]),
        ("MAXJOBS big -1", ["negative", "-1"]),
        ("MAXJOBS big two", ["MAXJOBS limit", "'two'"]),
        ("MAXJOBS big 1 2", ["category and a limit"]),
    ],
)
def test_category_and_maxjobs_errors(line, fragments):
    check(the_error("JOB A a", line), DAG, 2, *fragments)


# ------------------------------------------------------------------------------------- DONE

def test_done_command():
    dag = parse("JOB A a", "JOB B b", "DONE A", "DONE C", "SUBDAG EXTERNAL C c.dag")
    assert [n.done for n in dag.nodes.values()] == [True, False, True]


@pytest.mark.parametrize(
    "lines, line, fragments",
    [
        (["JOB A a", "DONE"], 2, ["exactly one node"]),
        (["JOB A a", "DONE A B"], 2, ["exactly one node"]),
        (["JOB A a", "DONE Ghost"], 2, ["undefined node Ghost"]),
        (["JOB A a", "DONE ALL_NODES"], 2, ["ALL_NODES"]),
        (["SERVICE S s", "DONE S"], 2, ["SERVICE", "DONE"]),
    ],
)
def test_done_errors(lines, line, fragments):
    check(the_error(*lines), DAG, line, *fragments)


# ------------------------------------------------------------------------- DAG-wide commands

def test_config():
    assert parse("CONFIG dagman.conf").config == "dagman.conf"
    assert parse("CONFIG 'my dagman.conf'").config == "my dagman.conf"


def test_config_given_twice_with_the_same_file_is_fine():
    assert parse("CONFIG a.conf", "JOB A a", "CONFIG a.conf").config == "a.conf"


def test_second_different_config_is_an_error():
    check(the_error("CONFIG a.conf", "CONFIG b.conf"), DAG, 2, "only one CONFIG", "a.conf")


@pytest.mark.parametrize("line", ["CONFIG", "CONFIG a.conf b.conf"])
def test_config_needs_one_file(line):
    check(the_error(line), DAG, 1, "CONFIG needs exactly one file")


def test_set_job_attr():
    dag = parse("SET_JOB_ATTR Owner = \"me\"", "set_job_attr Count=3", "SET_JOB_ATTR Expr = a + b == 2")
    assert dag.set_job_attrs == {"Owner": '"me"', "Count": "3", "Expr": "a + b == 2"}


@pytest.mark.parametrize("line", ["SET_JOB_ATTR Owner", "SET_JOB_ATTR = 3", "SET_JOB_ATTR Owner =", "SET_JOB_ATTR"])
def test_set_job_attr_errors(line):
    check(the_error(line), DAG, 1, "SET_JOB_ATTR", "<name> = <value>")


def test_env_get_and_set():
    dag = parse("ENV GET PATH HOME", "ENV get USER", "ENV SET A=1;B=two ; C=x=y;")
    assert dag.env_get == ["PATH", "HOME", "USER"]
    assert dag.env_set == ["A=1", "B=two", "C=x=y"]


@pytest.mark.parametrize(
    "line, fragments",
    [("ENV", ["GET", "SET"]), ("ENV GET", ["GET", "SET"]), ("ENV PUT X", ["GET", "SET"]), ("ENV SET novalue", ["'novalue'"])],
)
def test_env_errors(line, fragments):
    check(the_error(line), DAG, 1, *fragments)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("DOT dag.dot", Dot("dag.dot")),
        ("DOT dag.dot UPDATE OVERWRITE", Dot("dag.dot", update=True, overwrite=True)),
        ("DOT dag.dot DONT-UPDATE DONT-OVERWRITE", Dot("dag.dot", update=False, overwrite=False)),
        ("DOT dag.dot dont_update INCLUDE header.dot", Dot("dag.dot", update=False, include="header.dot")),
        ('DOT "my dag.dot" include header.dot overwrite', Dot("my dag.dot", overwrite=True, include="header.dot")),
    ],
)
def test_dot(line, expected):
    assert parse(line).dot == expected


@pytest.mark.parametrize(
    "line, fragments",
    [("DOT", ["DOT needs a file"]), ("DOT d.dot SOMETIMES", ["'SOMETIMES'"]), ("DOT d.dot INCLUDE", ["'INCLUDE'"])],
)
def test_dot_errors(line, fragments):
    check(the_error(line), DAG, 1, *fragments)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("NODE_STATUS_FILE status.txt", NodeStatusFile("status.txt", 60, False)),
        ("NODE_STATUS_FILE status.txt 30", NodeStatusFile("status.txt", 30, False)),
        ("NODE_STATUS_FILE status.txt ALWAYS-UPDATE", NodeStatusFile("status.txt", 60, True)),
        ("NODE_STATUS_FILE status.txt 0 always_update", NodeStatusFile("status.txt", 0, True)),
        ("NODE_STATUS_FILE 'my status.txt' 5", NodeStatusFile("my status.txt", 5, False)),
    ],
)
def test_node_status_file(line, expected):
    assert parse(line).node_status_file == expected


def test_first_node_status_file_wins_and_later_ones_warn():
    dag = parse("NODE_STATUS_FILE first.txt 10", "JOB A a", "NODE_STATUS_FILE second.txt 20 ALWAYS-UPDATE")
    assert dag.node_status_file == NodeStatusFile("first.txt", 10, False)
    [(line, message)] = warnings_at(dag)
    assert line == 3 and "second.txt" in message and "first.txt" in message


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("NODE_STATUS_FILE", ["needs a file"]),
        ("NODE_STATUS_FILE s.txt often", ["'often'"]),
        ("NODE_STATUS_FILE s.txt -5", ["negative"]),
        ("NODE_STATUS_FILE s.txt 5 6", ["'6'"]),
    ],
)
def test_node_status_file_errors(line, fragments):
    check(the_error(line), DAG, 1, *fragments)


def test_first_jobstate_log_wins_and_later_ones_warn():
    dag = parse("JOBSTATE_LOG 'first.log'", "JOBSTATE_LOG second.log")
    assert dag.jobstate_log == "first.log"
    [(line, message)] = warnings_at(dag)
    assert line == 2 and "second.log" in message


@pytest.mark.parametrize("line", ["JOBSTATE_LOG", "JOBSTATE_LOG a.log b.log"])
def test_jobstate_log_needs_one_file(line):
    check(the_error(line), DAG, 1, "JOBSTATE_LOG")


def test_reject_is_kept_with_its_line_for_the_graph_to_refuse():
    dag = parse("JOB A a", "REJECT")
    assert dag.reject is True and dag.reject_location.line == 2
    assert parse("JOB A a").reject is False


def test_reject_takes_no_arguments():
    check(the_error("REJECT now"), DAG, 1, "REJECT takes no arguments")


# -------------------------------------------------------------------------- SAVE_POINT_FILE

def test_save_point_file_default_name_is_node_dash_dag_file(tmp_path):
    main = write(tmp_path, "work.dag", "JOB A a.sub", "SAVE_POINT_FILE A", "SAVE_POINT_FILE B", "JOB B b.sub")
    dag = parse_file(main)
    assert dag.nodes["A"].save_point_file == "A-work.dag.save"
    assert dag.nodes["B"].save_point_file == "B-work.dag.save"


def test_save_point_file_with_a_file_name():
    dag = parse("JOB A a", "JOB B b", "SAVE_POINT_FILE A a.save", "SAVE_POINT_FILE B \"my b.save\"")
    assert (dag.nodes["A"].save_point_file, dag.nodes["B"].save_point_file) == ("a.save", "my b.save")


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("SAVE_POINT_FILE ALL_NODES", ["ALL_NODES"]),
        ("SAVE_POINT_FILE all_nodes x.save", ["ALL_NODES"]),
        ("SAVE_POINT_FILE", ["SAVE_POINT_FILE <node> [file]"]),
        ("SAVE_POINT_FILE A a.save extra", ["SAVE_POINT_FILE <node> [file]"]),
        ("SAVE_POINT_FILE Ghost", ["undefined node Ghost"]),
    ],
)
def test_save_point_file_errors(line, fragments):
    check(the_error("JOB A a", line), DAG, 2, *fragments)


# ---------------------------------------------------------------------------------- INCLUDE

def test_include_merges_the_included_file(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub", "RETRY B 2", "PARENT A CHILD B", "CONFIG inc.conf")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "INCLUDE inc.dag", "VARS B x=\"1\"")
    dag = parse_file(main)
    assert list(dag.nodes) == ["A", "B"]
    assert dag.nodes["B"].retry == 2
    assert dag.nodes["B"].vars == [Var("x", "1")]
    assert dag.dependencies == [Dependency(("A",), ("B",))]
    assert dag.config == "inc.conf"
    loc = dag.nodes["B"].location
    assert (loc.file, loc.line) == (str(tmp_path / "inc.dag"), 1)
    loc = dag.dependencies[0].location
    assert (loc.file, loc.line) == (str(tmp_path / "inc.dag"), 3)


def test_include_with_quoted_path(tmp_path):
    write(tmp_path, "my inc.dag", "JOB B b.sub")
    main = write(tmp_path, "main.dag", "JOB A a.sub", 'INCLUDE "my inc.dag"')
    assert list(parse_file(main).nodes) == ["A", "B"]


def test_include_with_parse_text_uses_base_dir(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub")
    dag = parse_text("JOB A a.sub\nINCLUDE inc.dag\n", file="mem.dag", base_dir=str(tmp_path))
    assert list(dag.nodes) == ["A", "B"]


def test_errors_in_an_included_file_are_located_there(tmp_path):
    inc = write(tmp_path, "inc.dag", "", "JOB B b.sub", "RETRY B many", "JOB A dup.sub")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "", "INCLUDE inc.dag", "RETRY A lots")
    found = file_errors(main)
    assert len(found) == 3
    inc_errors = [d for d in found if d.location.file == str(inc)]
    main_errors = [d for d in found if d.location.file == str(main)]
    check(inc_errors[0], inc, 3, "'many'")
    check(inc_errors[1], inc, 4, "node A", "already defined", f"{main}:1")
    check(main_errors[0], main, 4, "'lots'")


def test_recursive_include_is_an_error(tmp_path):
    inc = write(tmp_path, "inc.dag", "JOB B b.sub", "INCLUDE main.dag")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "INCLUDE inc.dag")
    [diag] = file_errors(main)
    check(diag, inc, 2, "recursive", "main.dag")


def test_file_including_itself_is_an_error(tmp_path):
    main = write(tmp_path, "main.dag", "JOB A a.sub", "INCLUDE main.dag")
    [diag] = file_errors(main)
    check(diag, main, 2, "recursive")


def test_missing_include_file_is_an_error_at_the_include_line(tmp_path):
    main = write(tmp_path, "main.dag", "JOB A a.sub", "", "INCLUDE nowhere.dag")
    [diag] = file_errors(main)
    check(diag, main, 3, "nowhere.dag")


def test_missing_top_level_file_is_a_dag_error(tmp_path):
    with pytest.raises(DagError) as e:
        parse_file(tmp_path / "absent.dag")
    [diag] = e.value.errors
    assert diag.location.file == str(tmp_path / "absent.dag")
    assert "absent.dag" in diag.message


@pytest.mark.parametrize("line", ["INCLUDE", "INCLUDE a.dag b.dag"])
def test_include_needs_one_file(line):
    check(the_error(line), DAG, 1, "INCLUDE needs exactly one file")


def test_same_file_may_be_included_twice_in_sequence(tmp_path):
    # Not recursive: the first INCLUDE is finished when the second starts.  Its node is then a duplicate.
    inc = write(tmp_path, "inc.dag", "JOB B b.sub")
    main = write(tmp_path, "main.dag", "INCLUDE inc.dag", "INCLUDE inc.dag")
    [diag] = file_errors(main)
    check(diag, inc, 1, "node B", "already defined", f"{inc}:1")


def test_node_order_is_own_nodes_first_then_included_nodes(tmp_path):
    write(tmp_path, "i1.dag", "JOB B1 b", "INCLUDE i3.dag", "JOB B2 b")
    write(tmp_path, "i2.dag", "JOB C c")
    write(tmp_path, "i3.dag", "JOB X x")
    main = write(tmp_path, "main.dag", "JOB A a", "INCLUDE i1.dag", "JOB D d", "INCLUDE i2.dag", "JOB E e")
    assert list(parse_file(main).nodes) == ["A", "D", "E", "B1", "B2", "X", "C"]


def test_command_naming_a_node_of_a_later_include_tells_to_move_the_include(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "RETRY B 2", "PARENT A CHILD B", "INCLUDE inc.dag")
    found = file_errors(main)
    assert len(found) == 2
    check(found[0], main, 2, "B", "INCLUDE", "move")
    check(found[1], main, 3, "B", "INCLUDE", "move")


def test_include_may_name_nodes_of_the_including_file_declared_below_it(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub", "PARENT B CHILD C", "RETRY C 4")
    main = write(tmp_path, "main.dag", "INCLUDE inc.dag", "JOB C c.sub")
    dag = parse_file(main)
    assert dag.nodes["C"].retry == 4
    assert dag.dependencies == [Dependency(("B",), ("C",))]


def test_include_may_name_nodes_of_an_earlier_include(tmp_path):
    write(tmp_path, "one.dag", "JOB B b.sub")
    write(tmp_path, "two.dag", "RETRY B 3")
    main = write(tmp_path, "main.dag", "INCLUDE one.dag", "INCLUDE two.dag")
    assert parse_file(main).nodes["B"].retry == 3


# ---------------------------------------------------------------------------------- SPLICE

def test_splice_keeps_its_nodes_in_its_own_dag(tmp_path):
    inner = write(tmp_path, "inner.dag", "JOB A x.sub", "JOB B y.sub", "PARENT A CHILD B", "RETRY B 2")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "SPLICE S inner.dag", "PARENT A CHILD S")
    dag = parse_file(main)
    assert list(dag.nodes) == ["A"]
    splice = dag.splices["S"]
    assert (splice.name, splice.file, splice.dir) == ("S", "inner.dag", None)
    assert (splice.location.file, splice.location.line) == (str(main), 2)
    assert list(splice.dag.nodes) == ["A", "B"]
    assert splice.dag.nodes["B"].retry == 2
    assert splice.dag.dependencies == [Dependency(("A",), ("B",))]
    assert splice.dag.file == str(inner)


def test_splice_with_dir_reads_the_file_from_that_directory(tmp_path):
    write(tmp_path, "sub/inner.dag", "JOB X x.sub")
    main = write(tmp_path, "main.dag", 'SPLICE S inner.dag DIR sub', "SPLICE T 'inner.dag' dir 'sub'")
    dag = parse_file(main)
    assert (dag.splices["S"].dir, dag.splices["S"].file) == ("sub", "inner.dag")
    assert list(dag.splices["S"].dag.nodes) == ["X"]
    assert dag.splices["T"].dir == "sub"


def test_final_node_in_a_splice_is_an_error_in_the_splice_file(tmp_path):
    inner = write(tmp_path, "inner.dag", "JOB X x.sub", "FINAL F f.sub")
    main = write(tmp_path, "main.dag", "SPLICE S inner.dag")
    [diag] = file_errors(main)
    check(diag, inner, 2, "FINAL", "splice")


def test_errors_inside_a_splice_are_located_in_the_splice_file(tmp_path):
    inner = write(tmp_path, "inner.dag", "PARENT X CHILD Ghost", "JOB X x.sub", "RETRY X many")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "SPLICE S inner.dag")
    found = file_errors(main)
    assert len(found) == 2
    check(found[0], inner, 1, "undefined node Ghost")
    check(found[1], inner, 3, "'many'")


def test_splice_nodes_are_not_visible_to_the_outer_dag(tmp_path):
    write(tmp_path, "inner.dag", "JOB X x.sub")
    main = write(tmp_path, "main.dag", "SPLICE S inner.dag", "RETRY X 2")
    [diag] = file_errors(main)
    check(diag, main, 2, "undefined node X")


def test_main_all_nodes_does_not_reach_splice_nodes(tmp_path):
    write(tmp_path, "inner.dag", "JOB X x.sub")
    main = write(tmp_path, "main.dag", "RETRY ALL_NODES 5", "SPLICE S inner.dag", "JOB A a.sub")
    dag = parse_file(main)
    assert dag.nodes["A"].retry == 5
    assert dag.splices["S"].dag.nodes["X"].retry == 0


def test_splice_all_nodes_stays_in_the_splice(tmp_path):
    write(tmp_path, "inner.dag", "JOB X x.sub", "RETRY ALL_NODES 2")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "SPLICE S inner.dag", "JOB B b.sub")
    dag = parse_file(main)
    assert dag.splices["S"].dag.nodes["X"].retry == 2
    assert (dag.nodes["A"].retry, dag.nodes["B"].retry) == (0, 0)


def test_dag_wide_commands_in_a_splice_are_ignored_with_a_warning(tmp_path):
    inner = write(tmp_path, "inner.dag", "JOB X x", "CONFIG c.conf", "DOT d.dot", "JOBSTATE_LOG j.log", "NODE_STATUS_FILE n.txt")
    main = write(tmp_path, "main.dag", "SPLICE S inner.dag")
    dag = parse_file(main)
    inner_dag = dag.splices["S"].dag
    assert (inner_dag.config, inner_dag.dot, inner_dag.jobstate_log, inner_dag.node_status_file) == (None, None, None, None)
    assert (dag.config, dag.dot, dag.jobstate_log, dag.node_status_file) == (None, None, None, None)
    assert [(w.location.file, w.location.line) for w in dag.warnings] == [(str(inner), n) for n in (2, 3, 4, 5)]


@pytest.mark.parametrize(
    "lines, line, fragments",
    [
        (["SPLICE S inner.dag", "JOB S a.sub"], 2, ["S", "splice name"]),
        (["JOB S a.sub", "SPLICE S inner.dag"], 2, ["S", "node name"]),
        (["SPLICE S inner.dag", "SPLICE S inner.dag"], 2, ["splice S", "already defined", ":1"]),
        (["SPLICE a+b inner.dag"], 1, ["'a+b'"]),
        (["SPLICE ALL_NODES inner.dag"], 1, ["ALL_NODES"]),
        (["SPLICE S"], 1, ["name and a DAG file"]),
        (["SPLICE S inner.dag extra"], 1, ["'extra'"]),
        (["SPLICE S inner.dag DIR"], 1, ["DIR"]),
        (["SPLICE S inner.dag", "RETRY S 3"], 2, ["S is a splice, not a node"]),
        (["RETRY S 3", "SPLICE S inner.dag"], 1, ["S is a splice, not a node"]),
        (["SPLICE S inner.dag", "DONE S"], 2, ["S is a splice"]),
    ],
)
def test_splice_errors(tmp_path, lines, line, fragments):
    write(tmp_path, "inner.dag", "JOB X x.sub")
    main = write(tmp_path, "main.dag", *lines)
    [diag] = file_errors(main)
    check(diag, main, line, *fragments)


def test_missing_splice_file_is_an_error_at_the_splice_line(tmp_path):
    main = write(tmp_path, "main.dag", "JOB A a.sub", "SPLICE S nowhere.dag")
    [diag] = file_errors(main)
    check(diag, main, 2, "nowhere.dag")


def test_recursive_splice_is_an_error(tmp_path):
    inner = write(tmp_path, "inner.dag", "JOB X x.sub", "SPLICE Again main.dag")
    main = write(tmp_path, "main.dag", "SPLICE S inner.dag")
    [diag] = file_errors(main)
    check(diag, inner, 2, "recursive")


def test_include_inside_a_splice_belongs_to_the_splice(tmp_path):
    inc = write(tmp_path, "inc.dag", "JOB Y y.sub", "RETRY Y bad")
    write(tmp_path, "inner.dag", "JOB X x.sub", "INCLUDE inc.dag")
    main = write(tmp_path, "main.dag", "SPLICE S inner.dag")
    [diag] = file_errors(main)
    check(diag, inc, 2, "'bad'")
    write(tmp_path, "inc.dag", "JOB Y y.sub")
    dag = parse_file(main)
    assert list(dag.splices["S"].dag.nodes) == ["X", "Y"]
    assert list(dag.nodes) == []


# ----------------------------------------------------------------- CONNECT / PIN_IN / PIN_OUT

def test_connect_with_matching_pins(tmp_path):
    write(tmp_path, "p.dag", "JOB X x", "JOB Y y", "PIN_OUT X 1", "PIN_OUT Y 2")
    write(tmp_path, "c.dag", "PIN_IN Z 1", "PIN_IN W 2", "JOB Z z", "JOB W w")
    main = write(tmp_path, "main.dag", "SPLICE P p.dag", "SPLICE C c.dag", "CONNECT P C")
    dag = parse_file(main)
    assert [(c.parent, c.child, c.location.line) for c in dag.connects] == [("P", "C", 3)]
    assert dag.splices["P"].dag.pins_out == {1: ["X"], 2: ["Y"]}
    assert dag.splices["C"].dag.pins_in == {1: ["Z"], 2: ["W"]}


def test_several_nodes_on_one_pin(tmp_path):
    write(tmp_path, "p.dag", "JOB X x", "JOB Y y", "PIN_OUT X 1", "PIN_OUT Y 1")
    main = write(tmp_path, "main.dag", "SPLICE P p.dag")
    assert parse_file(main).splices["P"].dag.pins_out == {1: ["X", "Y"]}


def test_connect_with_mismatched_pin_counts_is_an_error(tmp_path):
    write(tmp_path, "p.dag", "JOB X x", "JOB Y y", "PIN_OUT X 1", "PIN_OUT Y 2")
    write(tmp_path, "c.dag", "JOB Z z", "PIN_IN Z 1")
    main = write(tmp_path, "main.dag", "SPLICE P p.dag", "SPLICE C c.dag", "", "CONNECT P C")
    [diag] = file_errors(main)
    check(diag, main, 4, "P", "2 PIN_OUT", "C", "1 PIN_IN")


def test_connect_with_a_gap_in_pin_numbers_is_an_error(tmp_path):
    write(tmp_path, "p.dag", "JOB X x", "JOB Y y", "PIN_OUT X 1", "PIN_OUT Y 3")
    write(tmp_path, "c.dag", "JOB Z z", "JOB W w", "PIN_IN Z 1", "PIN_IN W 2")
    main = write(tmp_path, "main.dag", "SPLICE P p.dag", "SPLICE C c.dag", "CONNECT P C")
    [diag] = file_errors(main)
    check(diag, main, 3, "P", "PIN_OUT", "1, 3")


@pytest.mark.parametrize(
    "line, fragments",
    [("CONNECT P Q", ["Q", "not a splice"]), ("CONNECT P", ["two splice names"]), ("CONNECT P P P", ["two splice names"])],
)
def test_connect_errors(tmp_path, line, fragments):
    write(tmp_path, "p.dag", "JOB X x")
    main = write(tmp_path, "main.dag", "SPLICE P p.dag", line)
    [diag] = file_errors(main)
    check(diag, main, 2, *fragments)


@pytest.mark.parametrize(
    "line, fragments",
    [
        ("PIN_IN X 0", ["pin numbers start at 1"]),
        ("PIN_OUT X -2", ["pin numbers start at 1"]),
        ("PIN_IN X one", ["pin number", "'one'"]),
        ("PIN_OUT X", ["node and a pin number"]),
        ("PIN_IN Ghost 1", ["undefined node Ghost"]),
    ],
)
def test_pin_errors(tmp_path, line, fragments):
    inner = write(tmp_path, "p.dag", "JOB X x", line)
    main = write(tmp_path, "main.dag", "SPLICE P p.dag")
    [diag] = file_errors(main)
    check(diag, inner, 2, *fragments)


# -------------------------------------------------------------------------------- ALL_NODES

def test_all_nodes_applies_to_job_and_subdag_nodes_only():
    dag = parse(
        "JOB A a",
        "SUBDAG EXTERNAL S s.dag",
        "RETRY ALL_NODES 2",
        "SCRIPT POST ALL_NODES post.sh",
        "VARS ALL_NODES v=\"1\"",
        "PRIORITY ALL_NODES 4",
        "CATEGORY ALL_NODES cat",
        "PRE_SKIP ALL_NODES 9",
        "ABORT-DAG-ON ALL_NODES 3 RETURN 1",
        "FINAL F f",
        "SERVICE V v",
        "PROVISIONER P p",
    )
    for name in ("A", "S"):
        n = dag.nodes[name]
        assert (n.retry, n.priority, n.category, n.pre_skip) == (2, 4, "cat", 9)
        assert n.scripts[ScriptKind.POST].command == "post.sh"
        assert n.vars == [Var("v", "1")]
        assert n.abort_dag_on == AbortDagOn(3, 1)
    for name in ("F", "V", "P"):
        n = dag.nodes[name]
        assert (n.retry, n.priority, n.category, n.pre_skip, n.abort_dag_on) == (0, 0, None, None, None)
        assert (n.scripts, n.vars) == ({}, [])


@pytest.mark.parametrize("spelling", ["ALL_NODES", "all_nodes", "All_Nodes"])
def test_all_nodes_is_case_insensitive_and_reaches_nodes_declared_later(spelling):
    dag = parse("JOB A a", f"RETRY {spelling} 3", "JOB B b", "SUBDAG EXTERNAL C c.dag")
    assert [n.retry for n in dag.nodes.values()] == [3, 3, 3]


@pytest.mark.parametrize(
    "lines, expected",
    [
        (["JOB A a", "RETRY ALL_NODES 3", "RETRY A 10"], 10),
        (["RETRY ALL_NODES 3", "RETRY A 10", "JOB A a"], 10),
        (["RETRY ALL_NODES 3", "JOB A a", "RETRY A 10"], 10),
        (["JOB A a", "RETRY A 10", "RETRY ALL_NODES 3"], 3),
        (["RETRY A 10", "RETRY ALL_NODES 3", "JOB A a"], 3),
        (["RETRY A 10", "JOB A a", "RETRY ALL_NODES 3"], 3),
    ],
)
def test_all_nodes_last_definition_wins(lines, expected):
    assert parse(*lines).nodes["A"].retry == expected


def test_all_nodes_last_definition_wins_for_vars_and_scripts():
    dag = parse("VARS ALL_NODES x=\"all\"", "SCRIPT PRE ALL_NODES all.sh", "SCRIPT PRE A mine.sh", "JOB A a", "JOB B b")
    assert dag.nodes["A"].scripts[ScriptKind.PRE].command == "mine.sh"
    assert dag.nodes["B"].scripts[ScriptKind.PRE].command == "all.sh"
    assert dag.nodes["B"].vars == [Var("x", "all")]


def test_all_nodes_before_an_include_does_not_reach_included_nodes(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "RETRY ALL_NODES 3", "INCLUDE inc.dag", "JOB C c.sub")
    dag = parse_file(main)
    assert {n: v.retry for n, v in dag.nodes.items()} == {"A": 3, "C": 3, "B": 0}


def test_all_nodes_after_an_include_reaches_included_nodes(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "INCLUDE inc.dag", "RETRY ALL_NODES 3")
    dag = parse_file(main)
    assert {n: v.retry for n, v in dag.nodes.items()} == {"A": 3, "B": 3}


def test_all_nodes_inside_an_include_reaches_the_including_files_nodes(tmp_path):
    write(tmp_path, "inc.dag", "JOB B b.sub", "RETRY ALL_NODES 4")
    write(tmp_path, "later.dag", "JOB D d.sub")
    main = write(tmp_path, "main.dag", "JOB A a.sub", "INCLUDE inc.dag", "JOB C c.sub", "INCLUDE later.dag")
    dag = parse_file(main)
    assert {n: v.retry for n, v in dag.nodes.items()} == {"A": 4, "C": 4, "B": 4, "D": 0}


def test_all_nodes_in_an_include_versus_a_command_in_the_including_file(tmp_path):
    # DAGMan's pass 2 runs the INCLUDE in place: what comes after it in the including file wins.
    write(tmp_path, "inc.dag", "RETRY ALL_NODES 4")
    main = write(tmp_path, "main.dag", "RETRY A 10", "INCLUDE inc.dag", "RETRY B 10", "JOB A a", "JOB B b")
    dag = parse_file(main)
    assert (dag.nodes["A"].retry, dag.nodes["B"].retry) == (4, 10)


@pytest.mark.parametrize("line", ["DONE ALL_NODES", "SAVE_POINT_FILE ALL_NODES", "PIN_IN ALL_NODES 1"])
def test_commands_that_do_not_take_all_nodes(line):
    check(the_error("JOB A a", line), DAG, 2, "ALL_NODES")


def test_all_nodes_command_errors_are_reported_once_at_their_line():
    check(the_error("JOB A a", "JOB B b", "RETRY ALL_NODES -1"), DAG, 3, "negative")


def test_a_spliced_node_named_outside_its_splice_says_where_the_line_belongs(tmp_path):
    """DAGMan 23.9.6 fails with "Unknown Job S1+P" (seen on the pool); the line belongs in the spliced file."""
    (tmp_path / "d1").mkdir()
    (tmp_path / "d1" / "one.dag").write_text("JOB P ok.sub\n")
    dag = tmp_path / "top.dag"
    dag.write_text("SPLICE S1 one.dag DIR d1\nCATEGORY S1+P cat\nMAXJOBS cat 1\n")
    with pytest.raises(DagError) as e:
        parse_file(str(dag))
    check(e.value.errors[0], dag, 2, "undefined node S1+P", "put this line in the spliced file")


def test_inline_arguments_23_9_6_cannot_submit_are_a_warning_naming_the_line():
    """The manual's inline description with new-syntax arguments: 23.9.6's DAGMan fails each submit
    of an argument holding a blank ("Cannot represent 'exit 0' in V1 arguments syntax", seen on the
    pool), so ``dag check`` says so at its line; one without a blank, or in a submit file, is fine."""
    dag = parse("JOB A {",
                "    executable = /bin/sh",
                "    arguments  = \"-c 'exit 0'\"",
                "}",
                "SUBMIT-DESCRIPTION s {",
                "    executable = /bin/sh",
                "    arguments  = \"-c exit\"",
                "}",
                "JOB B s",
                "JOB C c.sub")
    [(line, message)] = warnings_at(dag)
    assert line == 3
    assert "23.9.6" in message and "'exit 0'" in message and "submit file" in message
