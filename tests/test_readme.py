"""The README's two commands are the ones CI runs: ``.ci/run`` ends with the test command, word for word."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The lines of the README's first ``sh`` block: install-and-run, then the tests."""
    block = re.search(r"^```sh\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    assert block, "README.md has no ```sh block"
    return block.group(1).splitlines()


def test_the_readme_starts_with_its_two_commands():
    text = (ROOT / "README.md").read_text()
    assert text.index("```sh") < text.index("\n## "), "the commands come before the first section"
    install, tests = readme_commands()
    assert install.startswith("python3 -m venv .venv && ") and install.endswith(" && .venv/bin/crabtui demo")
    assert tests.startswith("python3 -m venv .venv && ") and tests.endswith(" && .venv/bin/pytest")


def test_ci_runs_the_readme_test_command_word_for_word():
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[-1] == readme_commands()[1]
    assert "export CI=" in "\n".join(lines[:-1]) and "scripts/htcondor-testpool start" in lines[:-1]


def _list_length(path: Path, name: str) -> int:
    """How many items the module-level list ``name`` of ``path`` holds, read without importing it."""
    import ast

    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return len(node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else node.value.keys)
    raise AssertionError(f"{path} has no {name}")


def test_the_corpus_and_cross_check_counts_are_the_tests_own():
    """The README counts what the tests run; the counts had fallen behind as cases were added."""
    text = " ".join((ROOT / "README.md").read_text().split())
    corpus = [d for d in (ROOT / "tests" / "crab" / "corpus").iterdir() if d.is_dir()]
    tools = ROOT / "tests" / "htcondor" / "test_condor_tools.py"
    said = {
        "CRAB configs": (r"`tests/crab/corpus/` holds (\d+) `crabConfig.py` files", len(corpus)),
        "cross-checked DAGs": (r"The corpus now holds (\d+) DAGs",
                               _list_length(ROOT / "tests" / "htcondor" / "test_crosscheck.py", "CASES")),
        "q lines": (r"runs (\d+) `q` command lines", _list_length(tools, "Q_ARGS")),
        "hold/release/rm lines": (r"(\d+) `hold`/`release`/`rm` command lines", _list_length(tools, "ACTIONS")),
        "qedit lines": (r"(\d+) `qedit` and \d+ `history` command lines", _list_length(tools, "QEDITS")),
        "history lines": (r"\d+ `qedit` and (\d+) `history` command lines", _list_length(tools, "HISTORY_ARGS")),
    }
    found = {what: re.search(pattern, text) for what, (pattern, _) in said.items()}
    assert {what: int(m.group(1)) if m else None for what, m in found.items()} == \
        {what: n for what, (_, n) in said.items()}
