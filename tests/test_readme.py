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
