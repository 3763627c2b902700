"""``crabtui dag check``: the real command line, through click's runner and once as a process."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from crabtui.cli import main
from installed import CRABTUI

DATA = Path(__file__).parent / "data"
DIAMOND = DATA / "diamond.dag"
LOCATED = re.compile(r"[^:\n]+:\d+: .+")


def run(*args: str, cwd: Path | None = None):
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart
    if cwd is None:
        return runner.invoke(main, list(args))
    with runner.isolated_filesystem(temp_dir=cwd):
        return runner.invoke(main, list(args))


def test_help_lists_the_dag_group() -> None:
    result = run("--help")
    assert result.exit_code == 0
    assert re.search(r"^\s+dag\s+\S", result.output, re.M)
    result = run("dag", "--help")
    assert result.exit_code == 0 and "check" in result.output
    result = run("dag", "check", "--help")
    assert result.exit_code == 0 and "--json" in result.output


def test_check_valid_dag_prints_the_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA.parent.parent.parent)
    result = run("dag", "check", "tests/dag/data/diamond.dag")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "tests/dag/data/diamond.dag: 4 nodes, 4 edges, 0 sub-DAGs, 0 splices, no FINAL node\n"
    assert result.stderr == ""


def test_check_summary_counts_joins_subdags_splices_and_final(tmp_path: Path) -> None:
    (tmp_path / "top.dag").write_text(
        "JOB A a\nJOB B b\nJOB C c\nJOB D d\nPARENT A B CHILD C D\nSUBDAG EXTERNAL E e.dag\nSPLICE S s.dag\n"
        "FINAL F f\nSERVICE V v\n")
    (tmp_path / "s.dag").write_text("JOB X x\nSPLICE T t.dag\n")
    (tmp_path / "t.dag").write_text("JOB Y y\n")
    result = run("dag", "check", str(tmp_path / "top.dag"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (f"{tmp_path / 'top.dag'}: 9 nodes (1 join node), 4 edges, 1 sub-DAG, 2 splices, "
                             "FINAL node F\n")


def test_check_invalid_dag_reports_every_error_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "bad.dag"
    path.write_text("JOB A a.sub\nJOB B\nFOO bar\nPARENT A CHILD Z\nRETRY A many\n")
    result = run("dag", "check", str(path))
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert all(LOCATED.fullmatch(line) for line in lines), lines
    assert "Traceback" not in result.stderr


def test_check_error_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "main.dag").write_text("JOB A a\nINCLUDE inc.dag\n")
    (tmp_path / "inc.dag").write_text("JOB B b\nRETRY B -1\n")
    result = run("dag", "check", str(tmp_path / "main.dag"))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"{tmp_path / 'inc.dag'}:2: ")


def test_check_cycle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "cycle.dag"
    path.write_text("JOB A a\nJOB B b\nPARENT A CHILD B\nPARENT B CHILD A\n")
    result = run("dag", "check", str(path))
    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert re.fullmatch(rf"{re.escape(str(path))}:[34]: cycle in the DAG: (A -> B -> A|B -> A -> B)", line)


def test_check_warnings_go_to_stderr_and_exit_zero(tmp_path: Path) -> None:
    path = tmp_path / "warn.dag"
    path.write_text("JOB A a\nPRE_SKIP A 0\nPRIORITY A 1\nPRIORITY A 2\n")
    result = run("dag", "check", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{path}: 1 node, 0 edges, 0 sub-DAGs, 0 splices, no FINAL node\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    for line, n in zip(lines, (2, 4)):
        assert line.startswith(f"{path}:{n}: warning: "), line


def test_check_warnings_come_before_errors(tmp_path: Path) -> None:
    path = tmp_path / "both.dag"
    path.write_text("JOB A a\nPRE_SKIP A 0\nBOGUS\n")
    result = run("dag", "check", str(path))
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"{path}:2: warning: ") and "PRE_SKIP" in lines[0]
    assert lines[1].startswith(f"{path}:3: ") and "BOGUS" in lines[1]
    assert not lines[1][len(f"{path}:3: "):].startswith("warning")


def test_check_json(tmp_path: Path) -> None:
    result = run("dag", "check", "--json", str(DIAMOND))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["summary"] == f"{DIAMOND}: 4 nodes, 4 edges, 0 sub-DAGs, 0 splices, no FINAL node"
    assert data["file"] == str(DIAMOND)
    assert list(data["model"]["nodes"]) == ["A", "B", "C", "D"]
    assert data["model"]["nodes"]["C"]["retry"] == 1
    assert data["model"]["nodes"]["A"]["kind"] == "JOB"
    assert data["model"]["nodes"]["A"]["location"] == f"{DIAMOND}:2"
    graph = {entry["name"]: entry for entry in data["graph"]}
    assert list(graph) == ["A", "B", "C", "D"]
    assert graph["A"]["children"] == ["B", "C"]
    assert graph["D"]["parents"] == ["B", "C"]
    assert set(graph["A"]) >= {"name", "kind", "dir", "category", "parents", "children", "join"}
    assert data["warnings"] == []


def test_check_json_of_splices_and_warnings(tmp_path: Path) -> None:
    (tmp_path / "top.dag").write_text("JOB A a\nSPLICE S s.dag DIR sd\nPARENT A CHILD S\nPRE_SKIP A 0\n")
    (tmp_path / "sd").mkdir()
    (tmp_path / "sd" / "s.dag").write_text("JOB X x\nCATEGORY X c\n")
    result = run("dag", "check", "--json", str(tmp_path / "top.dag"))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    graph = {entry["name"]: entry for entry in data["graph"]}
    assert graph["S+X"] == {"name": "S+X", "kind": "JOB", "dir": "sd", "category": "S+c", "parents": ["A"],
                            "children": [], "join": False}
    assert data["model"]["splices"]["S"]["dag"]["nodes"]["X"]["name"] == "X"
    [warning] = data["warnings"]
    assert warning.startswith(f"{tmp_path / 'top.dag'}:4: ") and "PRE_SKIP" in warning
    assert result.stderr.startswith(f"{tmp_path / 'top.dag'}:4: warning: ")


def test_check_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.dag"
    result = run("dag", "check", str(missing))
    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{missing}: ") and "nope.dag" in line[len(str(missing)):]
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_check_without_a_file_is_a_usage_error() -> None:
    result = run("dag", "check")
    assert result.exit_code == 1, "a usage error exits 1, as condor_submit_dag's does"
    [line] = result.stderr.splitlines()
    assert line.startswith("ERROR: Missing argument 'DAG_FILE'; see '") and line.endswith(" dag check --help'")


def test_check_lone_continuation_line_is_reported_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "cont.dag"
    path.write_text("JOB A a.sub\n\\\n")
    result = run("dag", "check", str(path))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1)
    assert "Traceback" not in result.stderr


def test_console_script_runs_as_a_process(tmp_path: Path) -> None:
    ok = subprocess.run([CRABTUI, "dag", "check", str(DIAMOND)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == f"{DIAMOND}: 4 nodes, 4 edges, 0 sub-DAGs, 0 splices, no FINAL node\n"
    missing = subprocess.run([CRABTUI, "dag", "check", str(tmp_path / "nope.dag")], capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert "Traceback" not in missing.stderr
    assert missing.stderr.startswith(f"{tmp_path / 'nope.dag'}: ")


def test_every_option_of_dag_run_says_what_it_does() -> None:
    from engine.dagman.main import options_parser

    assert [a.option_strings for a in options_parser()._actions if not a.help] == []


def test_check_warns_of_a_vars_escape_23_9_6_refuses(tmp_path: Path) -> None:
    """A generated LIGO-style VARS value with a regex (``\\d``): 23.9.6 refuses the whole DAG at
    start-up ("ERROR: top.dag (line 3): Unknown escape sequence", seen on the pool), so `dag check`
    says so, naming the line; ``\\\\`` and ``\\"`` are fine."""
    path = tmp_path / "top.dag"
    path.write_text('JOB 0a1b2c3d4e5f60718293a4b5c6d7e8f9 echo.sub\n'
                    'VARS 0a1b2c3d4e5f60718293a4b5c6d7e8f9 macroid="n1" macrochannel="L1:GDS \\"quoted\\""\n'
                    'VARS 0a1b2c3d4e5f60718293a4b5c6d7e8f9 macroregex="^H1:.*\\d+$"\n'
                    'VARS 0a1b2c3d4e5f60718293a4b5c6d7e8f9 macrodir="C:\\\\frames" macrorel="a\\tb"\n')
    result = run("dag", "check", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f'{path}:3: warning: VARS macroregex: "\\d" is read as "d", but HTCondor 23.9.6 refuses the DAG for it '
        '("Unknown escape sequence"): only \\\\ and \\" escape in its VARS values; write "\\\\d" for a backslash '
        'followed by d',
        f'{path}:4: warning: VARS macrorel: "\\t" is read as "t", but HTCondor 23.9.6 refuses the DAG for it '
        '("Unknown escape sequence"): only \\\\ and \\" escape in its VARS values; write "\\\\t" for a backslash '
        'followed by t']


def test_check_warns_of_a_done_line_23_9_6_crashes_on(tmp_path: Path) -> None:
    """The manual's DONE command on a diamond's top node: 23.9.6's DAGMan stops at "Adjusting
    edges" with "Assertion ERROR on (GetStatus() != STATUS_DONE)" (job.cpp:804) and its job is
    queued again for ever (seen on the pool, with and without edges), while ``JOB A a.sub DONE``
    runs; `dag check` names the line and the form that works."""
    path = tmp_path / "diamond.dag"
    path.write_text("JOB A a.sub\nJOB B b.sub DONE\nJOB C c.sub\nJOB D d.sub\n"
                    "PARENT A CHILD B C\nPARENT B C CHILD D\nDONE A\n")
    result = run("dag", "check", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"{path}:7: warning: DONE A: HTCondor 23.9.6's DAGMan crashes on a DONE line of the DAG it runs "
        '("Assertion ERROR on (GetStatus() != STATUS_DONE)", job.cpp line 804) and its job restarts for ever; '
        "mark the node on its JOB line instead (JOB A <submit file> DONE)"]


def test_check_of_a_bindings_dag_with_max_jobs_per_category_says_to_write_maxjobs(tmp_path: Path) -> None:
    """htcondor2.dags writes a DAG's max_jobs_per_category as `CATEGORY cat 2`, which DAGMan reads
    as putting node "cat" in category "2" (23.9.6: "ERROR: job cat not found!", seen on the pool)."""
    import htcondor2
    from htcondor2 import dags

    dag = dags.DAG()
    dag.max_jobs_per_category["analysis"] = 2
    dag.layer(name="split", submit_description=htcondor2.Submit({"executable": "/bin/true"}),
              vars=[{"n": "1"}, {"n": "2"}], category="analysis")
    path = dags.write_dag(dag, tmp_path, dag_file_name="bindings.dag")
    result = run("dag", "check", str(path))
    assert result.exit_code == 1
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text == "CATEGORY analysis 2")
    assert result.stderr.splitlines() == [
        f"{path}:{line}: undefined node analysis: CATEGORY puts a node in a category; to run at most 2 jobs of "
        "category analysis at once, write MAXJOBS analysis 2"]


def test_check_warns_of_a_splices_maxjobs_that_the_dag_overrides(tmp_path):
    (tmp_path / "x.dag").write_text("SPLICE S s.dag\nMAXJOBS S+local 2\n")
    (tmp_path / "s.dag").write_text("JOB P1 t.sub\nJOB P2 t.sub\nCATEGORY P1 local\nCATEGORY P2 local\nMAXJOBS local 1\n")
    result = run("dag", "check", str(tmp_path / "x.dag"))
    assert result.exit_code == 0
    assert result.stderr == (f"{tmp_path / 'x.dag'}: warning: higher-level (root) maxjobs value of 2 for category "
                             "S+local overrides splice S value of 1\n")
