"""The screenshot script's drawing: screens drawn from the engine as it was at one moment, with
the clock stopped then, as SVG and as PNG whose every character sits in its own cell."""

from __future__ import annotations

import asyncio
import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.style import Style
from rich.terminal_theme import SVG_EXPORT_THEME

from crabtui.snapshots import Backend
from ui_fixed import NOW

LIVE = "231114_211000:alice_crab_lumis"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshots"


def load_script():
    loader = importlib.machinery.SourceFileLoader("screenshots_script", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    sys.modules[loader.name] = module  # its dataclasses look their module up
    loader.exec_module(module)
    return module


def test_the_screens_are_drawn_from_one_moment_into_files(fixed, utc, tmp_path):
    script = load_script()
    frozen = script.Frozen(Backend(fixed), NOW, tasks=[LIVE], jobs=[(LIVE, "2")])
    shots = [script.Shot("tasks", frozen, NOW, caption="tasks"),
             script.Shot("jobs", frozen, NOW, task=LIVE, caption="jobs"),
             script.Shot("sites", frozen, NOW, task=LIVE, keys=("3",), caption="sites"),
             script.Shot("job", frozen, NOW, task=LIVE, job="2", caption="job"),
             script.Shot("confirm", frozen, NOW, task=LIVE, keys=("K",), caption="confirm")]
    written = script.render(shots, str(tmp_path), size=(100, 30))

    svgs = {Path(p).stem: Path(p).read_text() for p in written if p.endswith(".svg")}
    assert list(svgs) == ["tasks", "jobs", "sites", "job", "confirm"]
    assert all(text.startswith("<svg") for text in svgs.values())
    words = {name: text.replace("&#160;", " ") for name, text in svgs.items()}
    assert "lumis" in words["tasks"] and "ttbar" in words["tasks"]
    assert "cooloff 4:32" in words["jobs"] and "cooloff 0:45" in words["jobs"], "countdowns at the stopped clock"
    assert "T2_US_Nebraska" in words["sites"] and "blacklisted" in words["sites"]
    assert "T1_US_FNAL" in words["job"] and "8021" in words["job"]  # job 2's two attempts
    assert "Kill lumis?" in words["confirm"]
    pngs = [p for p in written if p.endswith(".png")]
    assert [Path(p).stem for p in pngs] == list(svgs)
    assert all(Path(p).read_bytes().startswith(b"\x89PNG") for p in pngs)

    index = Path(script.write_index(shots, str(tmp_path))).read_text()
    assert "![jobs](jobs.svg)" in index and "![confirm](confirm.svg)" in index


@pytest.mark.parametrize("shot", [dict(name="job", task=LIVE, job="2"), dict(name="sites", task=LIVE, keys=("3",))])
def test_the_png_draws_each_character_in_its_own_cell(fixed, utc, tmp_path, shot):
    """Column by column, as in a terminal: a cell holding a character has ink in it (its glyph
    starts there), and a blank cell has none (no glyph from a neighbour runs into it), whatever
    the glyphs' own widths: a proportional font, or a fallback glyph wider than a cell, fails."""
    script = load_script()
    frozen = script.Frozen(Backend(fixed), NOW, tasks=[LIVE], jobs=[(LIVE, "2")])
    lines = asyncio.run(script._draw(script.Shot(clock=NOW, backend=frozen, **shot), str(tmp_path / "shot.svg"),
                                     (100, 30)))
    terminal = script.Terminal()
    image = terminal.draw(lines)
    width, height = terminal.cell
    assert image.size == (100 * width, 30 * height)
    inked = blank = 0
    for y, line in enumerate(lines):
        x = 0
        for segment in line:
            fg, bg = script.colours(segment.style or Style(), SVG_EXPORT_THEME)
            for char in segment.text:
                cells = cell_len(char)
                # The cell's inside (a glyph may touch its neighbour's edge pixel, as in a terminal).
                inside = image.crop((x * width + 1, y * height, (x + cells) * width - 1, (y + 1) * height))
                ink = inside.getcolors(1 << 16) != [(inside.width * inside.height, bg)]
                if char == " ":
                    assert not ink, f"line {y}, column {x}: ink in a blank cell of {_plain(line)!r}"
                    blank += 1
                elif fg != bg and not char.isspace():
                    assert ink, f"line {y}, column {x}: no ink for {char!r} of {_plain(line)!r}"
                    inked += 1
                x += cells
    assert inked > 300 and blank > 300


def _plain(line) -> str:
    return "".join(segment.text for segment in line)


def test_the_frozen_backend_answers_every_call_the_screens_make():
    """The script's frozen backend stands in for Backend: each method it overrides takes what
    Backend's takes (a DAG list's ``ask`` it lacked once stopped the script at that screen)."""
    import inspect

    frozen = load_script().Frozen
    overridden = [name for name, member in vars(frozen).items()
                  if inspect.isfunction(member) and not name.startswith("_") and hasattr(Backend, name)]
    assert {"tasks", "task", "dags", "dag", "node", "job"} <= set(overridden)
    for name in overridden:
        theirs = inspect.signature(getattr(Backend, name)).parameters
        ours = inspect.signature(getattr(frozen, name)).parameters
        assert list(ours) == list(theirs), name


def test_the_script_takes_help_and_a_relative_out_dir_from_where_it_is_typed(tmp_path, monkeypatch):
    """`scripts/screenshots --help` ran the whole demo and wrote its files into a directory named
    --help inside the demo's state directory, which it then deleted, as it did any relative OUT_DIR."""
    import subprocess

    from installed import PYTHON

    helped = subprocess.run([PYTHON, str(SCRIPT), "--help"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: scripts/screenshots [-h] [OUT_DIR]")
    assert list(tmp_path.iterdir()) == [], "nothing drawn, nothing written"
    monkeypatch.chdir(tmp_path)
    assert load_script().output_dir(["shots"]) == str(tmp_path / "shots")


def test_the_script_run_by_a_python_without_the_test_extra_says_how_to_run_it(tmp_path):
    """``python3 scripts/screenshots`` outside the venv (here: site-packages left out with -S) fails
    in one line naming Pillow and the venv, not with an ImportError's traceback."""
    import subprocess

    from installed import PYTHON

    run = subprocess.run([PYTHON, "-S", str(SCRIPT)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout, list(tmp_path.iterdir())) == (1, "", [])
    assert run.stderr.startswith("ERROR: scripts/screenshots needs Pillow, from crabtui's test extra: install it "
                                 "(.venv/bin/pip install -e '.[test]'") and run.stderr.count("\n") == 1, run.stderr
    assert "run it with the venv active (. .venv/bin/activate)" in run.stderr


def test_the_script_in_a_venv_without_the_test_extra_says_to_install_it(tmp_path):
    """The README's first command makes a venv without the test extra: there, activating the
    venv (what the message said) changed nothing; it names the install to run."""
    import subprocess

    from installed import PYTHON

    blocked = ("import runpy, sys; sys.modules['PIL'] = None; sys.argv = [sys.argv[1]]; "
               "runpy.run_path(sys.argv[0], run_name='__main__')")
    run = subprocess.run([PYTHON, "-c", blocked, str(SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert (run.returncode, run.stdout, list(tmp_path.iterdir())) == (1, "", [])
    assert "install it (.venv/bin/pip install -e '.[test]'" in run.stderr and run.stderr.count("\n") == 1, run.stderr
