"""Command lines as HTCondor's tools read them.

condor_q, condor_rm and friends take single-dash long options that may be shortened down to a
minimum length (``-nob`` is ``-nobatch``), and the same options with two dashes only when spelled
in full (``--nobatch``); some take ``:options`` after the name (``-af:jh``).  The options are
tried in the tool's own order, so a short prefix means what it means to the tool (``-h`` is
``-help`` to condor_q, ``-ho`` is ``-hold``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import classad2


JOB_ID = re.compile(r"(\d+)(?:\.(\d+))?\Z")  # CLUSTER or CLUSTER.PROC, as the tools take a job id


class ArgumentError(Exception):
    """A command line the tool would refuse; the message says which argument and what to do."""


def check_constraint(arg: str, value: str) -> str:
    """A ``-constraint`` value, checked as the tool's own ClassAd parser checks it before any
    schedd is asked, so that a typo is named as typed (and not as the query built around it)."""
    try:
        classad2.ExprTree(value)
    except Exception:
        raise ArgumentError(f"{arg} {value!r} is not a ClassAd expression; quote strings in it, as in "
                            f"{arg} 'Owner == \"alice\" && JobStatus == 5'") from None
    return value


@dataclass(frozen=True)
class Option:
    """One option: its full name, the shortest prefix the tool accepts, whether it takes
    ``:options``, and how many values follow it."""

    name: str
    min_len: int
    colon: bool = False
    values: int = 0
    instead: str = ""
    """For an option crabtui refuses: what to type instead."""


def is_dash_arg_prefix(arg: str, name: str, min_len: int) -> bool:
    """HTCondor's is_dash_arg_prefix: ``-`` and a prefix of ``name`` at least ``min_len`` long,
    or ``--`` and all of ``name``."""
    return is_dash_arg_colon_prefix(arg, name, min_len, colon=False)[0]


def is_dash_arg_colon_prefix(arg: str, name: str, min_len: int, colon: bool = True) -> tuple[bool, str | None]:
    """Like :func:`is_dash_arg_prefix`, also accepting ``-name:options``; the options (or None)."""
    if not arg.startswith("-"):
        return False, None
    body = arg[1:]
    exact = body.startswith("-")
    if exact:
        body = body[1:]
    word, sep, options = body.partition(":") if colon else (body, "", "")
    if not word or not name.startswith(word):
        return False, None
    if exact and word != name:
        return False, None
    if len(word) < min_len:
        return False, None
    return True, options if sep else None


@dataclass
class Parsed:
    """One recognised argument: the option's name (None for a positional argument), its
    ``:options``, its values, and the argument as typed."""

    name: str | None
    options: str | None
    values: list[str]
    arg: str


def parse(argv: list[str], table: list[Option], tool: str, *, greedy: tuple[str, ...] = (),
          unsupported: tuple[Option, ...] = (), condor_tool: str | None = None) -> list[Parsed]:
    """Read ``argv`` against ``table`` (in the tool's order).  Options named in ``greedy`` take
    every following argument that does not start with ``-`` (as ``-af`` does), and a lone ``-``
    ends that list.  An option of the real tool (``condor_tool``, else condor_TOOL) that crabtui
    does not implement, and an unknown option, are :class:`ArgumentError`."""
    out: list[Parsed] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            out.append(Parsed(None, None, [], arg))
            continue
        option, options = _match(arg, table)
        if option is None:
            other, _ = _match(arg, list(unsupported))
            if other is not None:
                raise ArgumentError(f"{arg}: crabtui {tool} does not support {condor_tool or 'condor_' + tool}'s "
                                    f"-{other.name}" + (f"; {other.instead}" if other.instead else ""))
            raise ArgumentError(f"unrecognized argument {arg}; 'crabtui {tool} --help' lists the options")
        values: list[str] = []
        if option.name in greedy:
            while i < len(argv) and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
            if i < len(argv) and argv[i] == "-":
                i += 1
        else:
            if i + option.values > len(argv):
                raise ArgumentError(f"{arg} requires {_count(option.values)} after it")
            values = argv[i:i + option.values]
            i += option.values
        out.append(Parsed(option.name, options, values, arg))
    return out


def _match(arg: str, table: list[Option]) -> tuple[Option | None, str | None]:
    for option in table:
        ok, options = is_dash_arg_colon_prefix(arg, option.name, option.min_len, colon=option.colon)
        if ok:
            return option, options
    return None, None


def _count(n: int) -> str:
    return "a value" if n == 1 else f"{n} values"
