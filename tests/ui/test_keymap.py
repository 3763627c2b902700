"""The user's keymap file: remapped keys reach the app, and mistakes are refused by name."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess

import pytest

from crabtui.keymap import KeymapError, load_keymap
from installed import CRABTUI

IDS = ("hold", "kill", "quit")


def test_a_missing_file_remaps_nothing(tmp_path):
    assert load_keymap(str(tmp_path / "none.toml"), IDS) == {}


def test_a_missing_file_that_crabtui_keymap_names_is_refused(tmp_path, monkeypatch):
    """A mistyped $CRABTUI_KEYMAP would otherwise leave every key as it was, without a word."""
    path = str(tmp_path / "keympa.toml")
    monkeypatch.setenv("CRABTUI_KEYMAP", path)
    refusal = "^" + re.escape(path) + ": no such keymap file, which \\$CRABTUI_KEYMAP names; "
    with pytest.raises(KeymapError, match=refusal):
        load_keymap(path, IDS)


def test_keys_are_mapped_by_binding_id(tmp_path):
    path = tmp_path / "keymap.toml"
    path.write_text('[keys]\nhold = "ctrl+h"\nkill = "K,ctrl+k"\n')
    assert load_keymap(str(path), IDS) == {"hold": "ctrl+h", "kill": "K,ctrl+k"}


@pytest.mark.parametrize("text, message", [
    ('[keys]\nhodl = "x"\n', r"keys.hodl: no binding has this id; the ids are hold, kill, quit"),
    ('[keys]\nhold = "ctrl + h"\n', r"keys.hold: 'ctrl \+ h' is not a key string"),
    ('[keys]\nhold = 3\n', r"keys.hold: 3 is not a key string"),
    ('[key]\nhold = "x"\n', r"unknown table\(s\) key; put the keys under \[keys\]"),
    ('[keys\n', r"keymap.toml:1: invalid TOML: "),
])
def test_mistakes_name_the_file_and_the_key(tmp_path, text, message):
    path = tmp_path / "keymap.toml"
    path.write_text(text)
    with pytest.raises(KeymapError, match=message):
        load_keymap(str(path), IDS)
    assert str(path) in str(pytest.raises(KeymapError, load_keymap, str(path), IDS).value)


def test_a_key_another_binding_of_the_screen_has_is_refused(tmp_path):
    """``hold = "q"`` would take ``q`` away from quit on the task screen, without a word."""
    path = tmp_path / "keymap.toml"
    path.write_text('[keys]\nhold = "q"\n')
    result = subprocess.run([CRABTUI, "--state-dir", str(tmp_path / "state")], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "CRABTUI_KEYMAP": str(path)})
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f'ERROR: {path}: keys.hold: "q" is also the key of quit on the task screen; '
                                    f'choose another key for hold'), result.stderr


@pytest.mark.parametrize("text", ['[keys]\nhold = "ctrl+h"\n', '[keys]\nhold = "q"\nquit = "ctrl+q"\n',
                                  '[keys]\nfilter = "/"\n', '[keys]\nhelp = "?"\n'])
def test_keys_no_other_binding_of_the_screen_has_are_taken(tmp_path, text):
    from crabtui.app import binding_ids, binding_screens

    path = tmp_path / "keymap.toml"
    path.write_text(text)
    assert load_keymap(str(path), binding_ids(), binding_screens())


def test_a_bad_keymap_stops_crabtui_with_its_message_not_a_traceback(tmp_path):
    path = tmp_path / "keymap.toml"
    path.write_text('[keys]\nhodl = "x"\n')
    result = subprocess.run([CRABTUI, "--state-dir", str(tmp_path / "state")], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "CRABTUI_KEYMAP": str(path)})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"ERROR: {path}: keys.hodl: no binding has this id") and "hold" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_remapped_key_acts_and_the_old_one_does_not(tmp_path):
    """`p` pauses the refresh; remapped to ctrl+t it is ctrl+t that pauses."""
    from crabtui.app import CrabApp, binding_ids
    from crabtui.snapshots import Backend
    from engine.state import StateDir

    assert {"hold", "kill", "resubmit", "halt", "filter", "sort", "pause"} <= binding_ids()
    app = CrabApp(Backend(StateDir(str(tmp_path / "state"))))
    app.set_keymap({"pause": "ctrl+t"})

    async def main() -> None:
        async with app.run_test() as pilot:
            await pilot.press("p")
            assert not app.paused
            await pilot.press("ctrl+t")
            assert app.paused

    asyncio.run(main())
