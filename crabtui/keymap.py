"""The user's key remapping: ``$XDG_CONFIG_HOME/crabtui/keymap.toml`` (``~/.config/...``).

It maps the ids of the UI's bindings, as the help screen (``?``) lists them, to keys written as
Textual writes them; several keys are separated by commas::

    [keys]
    hold = "ctrl+h"
    kill = "K,ctrl+k"

A file that cannot be read, an unknown id, a value that is not a key string, or a key that two
bindings of one screen would then share is refused with the file, the key and what to do: a UI
that silently ignored a remapping, or let it take a key away from another binding, would act on
the wrong key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

import click
from textual.keys import _character_to_key

from engine.tomlfile import TomlError, read_toml

ENV_VAR = "CRABTUI_KEYMAP"
_KEYS = re.compile(r"^[^\s,]+(,[^\s,]+)*$")


class KeymapError(click.ClickException):
    """The keymap file is wrong; the message names the file and the key (click prints it, without
    a traceback, wherever the UI is opened from the command line), as ``ERROR: ...`` as every
    command's failure reads."""

    def show(self, file=None) -> None:
        click.echo(f"ERROR: {self.message}", err=True)


def keymap_path() -> str:
    """``$CRABTUI_KEYMAP``, else ``$XDG_CONFIG_HOME/crabtui/keymap.toml`` (XDG's default base)."""
    return os.environ.get(ENV_VAR) or keymap_default()


def keymap_default() -> str:
    """``$XDG_CONFIG_HOME/crabtui/keymap.toml``, XDG's default base being ``~/.config``."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "crabtui", "keymap.toml")


def load_keymap(path: str, binding_ids: Iterable[str],
                screens: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, str]:
    """Binding id -> keys from ``path`` ({} if there is no such file, unless ``$CRABTUI_KEYMAP`` names it:
    a mistyped name there would leave every key as it was without a word).  ``screens``: each
    screen's bindings (the app's included), binding id -> its default keys, to refuse a remapped
    key that another binding of the same screen has."""
    try:
        document = read_toml(path)
    except FileNotFoundError:
        if path == os.environ.get(ENV_VAR):
            raise KeymapError(f"{path}: no such keymap file, which ${ENV_VAR} names; fix the name, or unset "
                              f"{ENV_VAR} for {keymap_default()}") from None
        return {}
    except OSError as e:
        raise KeymapError(f"{path}: cannot read the keymap: {e.strerror}") from None
    except TomlError as e:
        raise KeymapError(str(e)) from None
    known = sorted(set(binding_ids))
    extra = set(document) - {"keys"}
    if extra:
        raise KeymapError(f"{path}: unknown table(s) {', '.join(sorted(extra))}; put the keys under [keys]")
    keys = document.get("keys", {})
    if not isinstance(keys, dict):
        raise KeymapError(f"{path}: keys must be a table of binding ids, such as [keys] hold = \"ctrl+h\"")
    for name, value in keys.items():
        if name not in known:
            raise KeymapError(f"{path}: keys.{name}: no binding has this id; the ids are {', '.join(known)}")
        if not isinstance(value, str) or not _KEYS.match(value):
            raise KeymapError(f"{path}: keys.{name}: {repr(value)[:40]} is not a key string; write keys as Textual "
                              f"does, such as \"ctrl+h\" or \"K,ctrl+k\"")
    for screen, bindings in (screens or {}).items():
        _refuse_shared_keys(path, screen, bindings, keys)
    return dict(keys)


def _key(key: str) -> str:
    """A key as Textual names it: ``?`` is ``question_mark``."""
    return _character_to_key(key) if len(key) == 1 else key


def _refuse_shared_keys(path: str, screen: str, bindings: Mapping[str, str], keys: Mapping[str, str]) -> None:
    """Two bindings of one screen on one key, one of them remapped: the other would lose its key."""
    owner: dict[str, str] = {}
    for name in sorted(bindings, key=lambda n: n not in keys):  # the remapped ones first, to be named first
        for key in {_key(k) for k in keys.get(name, bindings[name]).split(",")}:
            other = owner.setdefault(key, name)
            if other != name and (name in keys or other in keys):
                raise KeymapError(f"{path}: keys.{other}: \"{key}\" is also the key of {name} on the {screen} "
                                  f"screen; choose another key for {other}")
