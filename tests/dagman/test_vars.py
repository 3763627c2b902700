"""VARS values reach the job as values, as ``condor_submit -a`` passes them, never as submit text:
a value ending in a backslash, or with blanks around it, cannot change another submit command.
The job reads the value back from its own ClassAd (``description = $(v)`` makes it the job's
JobDescription, copied as it is, or none for an empty value; on the test pool DAGMan 23.9.6 gave a job ``\\``, ``  lead and
trail  `` and ``q"uote\\"x`` exactly)."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.dag import build_graph, parse_file
from engine.dagman.runner import DagMan, Options

# The job: writes its JobDescription, read from the job ad the starter gives it, to out.<node>.
READER = """\
import os, sys, classad2
ad = classad2.parseOne(open(os.environ["_CONDOR_JOB_AD"]).read())
open("out." + sys.argv[1], "w", encoding="utf-8", newline="").write(ad.get("JobDescription", ""))
"""
SUBMIT = f"""\
executable = {sys.executable}
arguments = reader.py $(JOB)
description = $(v)
queue
"""


def quoted(value: str) -> str:
    """A VARS value as the manual writes one: double-quoted, ``\\`` and ``"`` escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seen_by_jobs(dag_dir: Path, schedd, values: list[str]) -> list[str]:
    (dag_dir / "reader.py").write_text(READER)
    (dag_dir / "v.sub").write_text(SUBMIT)
    names = [f"N{i}" for i in range(len(values))]
    dag = dag_dir / "vars.dag"
    dag.write_text("".join(f"JOB {n} v.sub\nVARS {n} v={quoted(v)}\n" for n, v in zip(names, values)),
                   encoding="utf-8")
    dagman = DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=0.05))
    assert dagman.run() == 0, (dag_dir / "vars.dag.dagman.out").read_text()[-2000:]
    seen = [(dag_dir / f"out.{n}").read_text(encoding="utf-8") for n in names]
    for n in names:
        (dag_dir / f"out.{n}").unlink()
    return seen


def test_the_issues_values_reach_the_job_as_they_are(dag_dir, schedd):
    values = ["\\", "  lead and trail  ", 'q"uote\\"x', "#hash", "x = y", "queue 5"]
    assert seen_by_jobs(dag_dir, schedd, values) == values


def test_a_trailing_backslash_no_longer_swallows_the_next_submit_line(dag_dir, schedd):
    """The issue's DAG: with the value written into the submit text, ``e = \\`` continued onto
    ``queue`` and the job failed with "executable: no executable given"."""
    (dag_dir / "e.sub").write_text("executable = /bin/sh\narguments = \"-c 'echo ran >> runs.txt'\"\nqueue\n")
    dag = dag_dir / "e.dag"
    dag.write_text('JOB A e.sub\nVARS A e="\\\\"\n')
    assert DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=0.05)).run() == 0
    assert (dag_dir / "runs.txt").read_text() == "ran\n"


def test_a_value_ending_in_a_backslash_inside_a_quoted_job_attribute_is_kept_as_on_the_pool(dag_dir, schedd):
    """``My.Extra = "$(v)"`` with ``VARS D v="trail\\\\"`` gives the ClassAd ``"trail\\"``: condor_submit
    reads it in the old syntax, a backslash before the closing quote being itself, and the job's
    Extra is ``trail\\`` (seen on the 23.9.6 pool); it used to fail every submit attempt."""
    (dag_dir / "x.sub").write_text('executable = /bin/sh\narguments = "-c true"\nMy.Extra = "$(v)"\nqueue\n')
    dag = dag_dir / "x.dag"
    dag.write_text('JOB D x.sub\nVARS D v="trail\\\\"\nJOB C x.sub\nVARS C v="C:\\\\dir\\\\"\n')
    assert DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=0.05)).run() == 0
    ads = schedd.history("DAGNodeName =!= undefined", ["DAGNodeName", "Extra"])
    seen = {ad["DAGNodeName"]: ad["Extra"] for ad in ads}
    assert seen == {"D": "trail\\", "C": "C:\\dir\\"}


# Any text a DAG file can hold in a quoted value: no line breaks, no NUL, and no "$" (DAGMan
# expands $(...) in values, as the manual says: $(JOB) is the node's name).
VALUES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00$"), max_size=40)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(VALUES, min_size=1, max_size=4))
def test_any_value_the_parser_accepts_reaches_the_job_exactly(dag_dir, schedd, values):
    parsed = [node.node.vars[0].value for node in build_graph(parse_file_text(dag_dir, values)).nodes.values()]
    assert parsed == values, "the parser reads back what was written"
    assert seen_by_jobs(dag_dir, schedd, values) == values


def parse_file_text(dag_dir: Path, values: list[str]):
    path = dag_dir / "check.dag"
    path.write_text("".join(f"JOB N{i} v.sub\nVARS N{i} v={quoted(v)}\n" for i, v in enumerate(values)),
                    encoding="utf-8")
    return parse_file(str(path))


def test_a_node_var_set_again_after_all_nodes_is_said_in_dagmans_words_and_the_last_wins(dag_dir, schedd):
    """The OSG DAGMan tutorial's VARS diamond: a default for every node, then each node's own.  The
    test pool's DAGMan 23.9.6 wrote these two lines a node to dagman.out, and the job got the last value."""
    (dag_dir / "reader.py").write_text(READER)
    (dag_dir / "v.sub").write_text(SUBMIT)
    dag = dag_dir / "diamond.dag"
    dag.write_text('JOB job1 v.sub\nJOB job2 v.sub\nVARS ALL_NODES v="No message provided."\n'
                   'VARS job1 v="DAGMan is scary."\nPARENT job1 CHILD job2\n')
    dagman = DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=0.05))
    assert dagman.run() == 0
    out = (dag_dir / "diamond.dag.dagman.out").read_text()
    assert 'Warning: VAR "v" is already defined in node "job1" (Discovered at file "diamond.dag", line 4)\n' in out
    assert out.count('Warning: Setting VAR "v" = "DAGMan is scary."\n') == 1 and "defined again" not in out
    assert [(dag_dir / f"out.{n}").read_text() for n in ("job1", "job2")] == ["DAGMan is scary.", "No message provided."]


def test_a_node_var_set_again_to_json_is_said_and_the_dag_runs(dag_dir, schedd):
    """A value with braces (JSON, as analyses pass parameters) set again for a node: DAGMan says
    so with the value as written; the braces ended the embedded DAGMan in a KeyError traceback."""
    (dag_dir / "reader.py").write_text(READER)
    (dag_dir / "v.sub").write_text(SUBMIT)
    dag = dag_dir / "json.dag"
    dag.write_text('JOB job1 v.sub\nVARS job1 v="{}"\nVARS job1 v="{cuts} {0}"\n')
    dagman = DagMan(build_graph(parse_file(str(dag))), schedd, Options(scan_interval=0.05))
    assert dagman.run() == 0
    out = (dag_dir / "json.dag.dagman.out").read_text()
    assert 'Warning: Setting VAR "v" = "{cuts} {0}"\n' in out
    assert (dag_dir / "out.job1").read_text() == "{cuts} {0}"
