"""The ClassAd files HTCondor gives a job: its job ad (``_CONDOR_JOB_AD``) and its slot's machine
ad (``_CONDOR_MACHINE_AD``), as the embedded starter and HTCondor's condor_starter write them, and
what crabtui's simulated grid puts in the machine ad (a site's speed and failure profile).

Standard library only: the job wrapper and the simulated cmsRun read these files on any execute
node, where neither crabtui nor the HTCondor bindings need be installed.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any


class Expression(str):
    """A ClassAd value that is no literal (an expression, a list, undefined), as its text."""


class Ad(dict):
    """A ClassAd read from a file: attribute names are case-insensitive, as in ClassAds. Literal
    values are str, int, float and bool; anything else is an :class:`Expression`."""

    def __init__(self, items: Iterable[tuple[str, Any]] = ()):
        super().__init__()
        for name, value in items:
            self[name] = value

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name.lower(), value)

    def __getitem__(self, name: str) -> Any:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


_INT = re.compile(r"[+-]?\d+\Z")
_REAL = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?\Z")
_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=(?!=)\s*(.*)\Z", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", '"': '"', "'": "'", "?": "?"}


def _string(body: str, new_syntax: bool) -> str:
    """The value of a string literal's body: the new syntax has C escapes, the old one only \\"."""
    if not new_syntax:
        return body.replace('\\"', '"')
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            octal = re.match(r"[0-7]{1,3}", body[i + 1:])
            if octal:
                out.append(chr(int(octal.group(), 8)))
                i += 1 + len(octal.group())
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _value(text: str, new_syntax: bool) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and _one_string(text):
        return _string(text[1:-1], new_syntax)
    if _INT.match(text):
        return int(text)
    if _REAL.match(text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return Expression(text)


def _one_string(text: str) -> bool:
    """Whether ``text`` (starting and ending with a quote) is one string literal, not ``"a" + "b"``."""
    i = 1
    while i < len(text) - 1:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return False
        i += 1
    return True


def _statements(body: str) -> list[str]:
    """The ``;``-separated statements of a new-syntax ad's body, outside strings and brackets."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(body):
        c = body[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return [p for p in parts if p.strip()]


def parse_ad(text: str) -> Ad:
    """A ClassAd in the old syntax (``A = 1`` a line, as condor_starter and the embedded starter
    write ``.job.ad``) or the new one (``[ A = 1; B = "x" ]``, as classad2 prints an ad)."""
    stripped = text.strip()
    ad = Ad()
    if stripped.startswith("["):
        if not stripped.endswith("]"):
            raise ValueError("a ClassAd that starts with [ must end with ]")
        statements, new_syntax = _statements(stripped[1:-1]), True
    else:
        statements = [line for line in stripped.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        new_syntax = False
    for statement in statements:
        match = _NAME.match(statement)
        if not match:
            raise ValueError(f"not an attribute definition: {statement.strip()[:80]!r}")
        ad[match.group(1)] = _value(match.group(2), new_syntax)
    return ad


def read_ad(path: str | os.PathLike[str]) -> Ad:
    """The ClassAd in the file at ``path`` (either syntax); OSError or ValueError if unreadable."""
    with open(path, encoding="utf-8") as f:
        return parse_ad(f.read())


def site_speed(machine: Mapping[str, Any]) -> float:
    """The machine ad's ``CRABTUI_SiteSpeed``; 1.0 when absent or not a positive number."""
    value = machine.get("CRABTUI_SiteSpeed")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        return 1.0
    return float(value)


def site_failures(machine: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The machine ad's failure profile (``CRABTUI_SiteFailures``); [] when absent. A malformed
    profile is refused with ValueError rather than quietly ignored."""
    text = machine.get("CRABTUI_SiteFailures")
    if text is None:
        return []
    try:
        entries = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        entries = None
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("probability"), (int, float))
            and (type(e.get("exitCode")) is int or type(e.get("memoryMB")) is int) for e in entries):
        raise ValueError(f"CRABTUI_SiteFailures of the machine ad is not a failure profile: {str(text)[:80]!r}")
    return entries
