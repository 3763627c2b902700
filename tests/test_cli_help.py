"""Every command's help, as a user reads it: it opens, it names the --backend every command
takes, and a group's summary names what its commands do."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cli_commands import leaves
from crabtui.cli import main


@pytest.mark.parametrize("path", leaves(), ids=" ".join)
def test_every_commands_help_opens_and_names_the_backend_option(path):
    result = CliRunner().invoke(main, [*path, "--help"], prog_name="crabtui")
    assert result.exit_code == 0, result.output
    if path != ("dag", "run"):  # its help is DAGMan's own; the command refuses --backend htcondor
        assert result.output.startswith(f"Usage: crabtui {' '.join(path)} ") and "--backend" in result.output
        assert "--help" in result.output, "the help says how it was opened"


def test_the_task_groups_summary_names_each_of_its_commands():
    summary = CliRunner().invoke(main, ["--help"]).output.split("\n  task ", 1)[1].split("\n")[0]
    help_text = CliRunner().invoke(main, ["task", "--help"]).output
    assert summary.strip().startswith("Submit, list, follow, resubmit and kill CRAB3 tasks")
    for verb in ("Submit", "list", "resubmit", "kill"):
        assert verb in help_text.split("Options:")[0]


@pytest.mark.parametrize("tool", ["hold", "release", "rm"])
def test_hold_release_and_rm_list_the_options_they_take(tool):
    """condor_hold's -totals is taken (the README lists it): the help names it too."""
    text = CliRunner().invoke(main, [tool, "--help"], prog_name="crabtui").output
    for option in ("-constraint EXPR", "-all", "-reason TEXT", "-totals", "-name SCHEDD", "-pool COLLECTOR"):
        assert option in text, option
