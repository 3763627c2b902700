"""The README's commands can be typed as written: the files they name are in ``examples/``, and
the job submission's transcript is what the commands print on a fresh state directory."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import click.testing
import pytest

from engine.crab.client.config import load_config
from engine.dag import load_graph, parse_file
from installed import CRABTUI

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_every_example_file_the_readme_names_exists():
    named = set(re.findall(r"examples/[\w./-]*\w", README))
    assert {"examples/sleep.sub", "examples/diamond/diamond.dag", "examples/ttbar/crabConfig.py",
            "examples/multicrab/multicrab.py", "examples/mydataset.json"} <= named
    assert [path for path in sorted(named) if not (ROOT / path).exists()] == []


def test_the_diamond_dag_reads_and_its_submit_files_are_beside_it():
    dag = ROOT / "examples" / "diamond" / "diamond.dag"
    graph = load_graph(parse_file(str(dag)))
    assert sorted(graph.dag.nodes) == ["A", "B", "C", "D"]
    for node in graph.dag.nodes.values():
        assert (dag.parent / node.submit).is_file(), node


def test_the_ttbar_config_is_the_task_the_readme_commands_name():
    config = load_config(ROOT / "examples" / "ttbar" / "crabConfig.py")
    assert config.request_name == "ttbar"
    assert [(p.job, p.attempt, p.exit_code) for p in config.failure_plan] == [("2", 1, 8006)]


def _transcript() -> list[tuple[str, list[str]]]:
    """The ``$ crabtui ...`` commands of the README's job-submission example, each with the
    lines it shows."""
    block = re.search(r"```\n(\$ crabtui job submit .*?)```", README, re.S).group(1)
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def test_the_job_submission_transcript_is_what_the_commands_print(tmp_path):
    env = {**os.environ, "CRABTUI_STATE_DIR": str(tmp_path / "state")}
    env.pop("CRABTUI_BACKEND", None)
    try:
        for command, shown in _transcript():
            words = command.replace("crabtui", CRABTUI).split()
            if command.startswith("crabtui q "):
                # the queue's times, owner and host differ; its header and job lines keep their shape
                out = subprocess.run(words, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
                assert out.returncode == 0, out.stderr
                assert [line.split()[0] for line in out.stdout.splitlines() if re.match(r"\s+\d+\.\d", line)] == \
                    [line.split()[0] for line in shown if re.match(r"\s+\d+\.\d", line)]
                continue
            printed: list[str] = []
            for part in command.split(" && "):
                out = subprocess.run(part.replace("crabtui", CRABTUI).split(), cwd=ROOT, env=env,
                                     capture_output=True, text=True, timeout=120)
                assert out.returncode == 0, (part, out.stderr)
                printed += out.stdout.splitlines()
            assert printed == shown, command
    finally:
        subprocess.run([CRABTUI, "pool", "stop"], env=env, capture_output=True, timeout=120)


@pytest.mark.parametrize("words", [["--state-dir", "D"], []])
def test_a_state_dir_given_on_the_command_line_is_in_the_hints(words):
    """What the README promises of every message that names a command: it can be typed as shown."""
    import click

    from crabtui.commands.backend import again

    @click.command()
    @click.pass_context
    def probe(ctx):
        ctx.obj = {"state_dir": words[1] if words else None, "backend": "htcondor"}
        click.echo(again(ctx))

    env = {k: v for k, v in os.environ.items() if k not in ("CRABTUI_STATE_DIR", "CRABTUI_BACKEND")}
    result = click.testing.CliRunner(env=env).invoke(probe, [])
    assert result.output.strip() == " ".join(["crabtui", *words, "--backend", "htcondor"])
