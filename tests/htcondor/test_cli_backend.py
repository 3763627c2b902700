"""``--backend`` and ``CRABTUI_BACKEND`` reach every command, and commands that cannot act on
an HTCondor pool say so in one line.  No pool is needed: these run everywhere."""

from __future__ import annotations

from click.testing import CliRunner

from cli_commands import leaves
from crabtui.cli import main


def test_every_command_takes_backend_after_its_name():
    runner = CliRunner()
    assert len(leaves()) > 20
    for path in leaves():
        if path == ("dag", "run"):  # its --help is DAGMan's; it refuses the pool (below)
            continue
        result = runner.invoke(main, [*path, "--backend", "htcondor", "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "--backend" in result.output, path


def test_commands_that_need_the_embedded_engine_refuse_the_pool_in_one_line(tmp_path):
    runner = CliRunner()
    for args, env in ((["pool", "start", "--backend", "htcondor"], {}),
                      (["--backend", "htcondor", "pool", "stop"], {}),
                      (["pool", "start"], {"CRABTUI_BACKEND": "htcondor"}),
                      (["dag", "run", "--backend", "htcondor", "x.dag"], {})):
        result = runner.invoke(main, ["--state-dir", str(tmp_path), *args], env=env)
        assert result.exit_code == 1, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ERROR: ") and "embedded" in lines[0], (args, result.output)
    assert not list(tmp_path.iterdir()), "no embedded daemon was started"


def test_tasks_and_the_demo_on_a_pool_that_is_not_there_say_so_in_one_line(tmp_path):
    runner = CliRunner()
    env = {"CONDOR_CONFIG": str(tmp_path / "missing.config")}
    for args, says in ((["demo", "--no-ui", "--backend", "htcondor"], "CONDOR_CONFIG"),
                       (["--backend", "htcondor", "task", "status", "x"], "there is no task 'x'")):
        result = runner.invoke(main, ["--state-dir", str(tmp_path), *args], env=env)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ERROR: ") and says in lines[0], (args, result.output)


def test_the_backend_after_the_command_wins_over_the_environment(tmp_path):
    result = CliRunner().invoke(main, ["--state-dir", str(tmp_path), "pool", "status", "--backend", "embedded"],
                                env={"CRABTUI_BACKEND": "htcondor"})
    assert result.exit_code == 1 and result.output.startswith("ERROR: no schedd is running for")
