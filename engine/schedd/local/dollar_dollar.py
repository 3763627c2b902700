"""``$$()`` in a job's ad, expanded against the slot it matched, as the schedd does at match time.

A submit file may name what it needs from the machine it lands on: ``executable =
povray.$$(OpSys).$$(Arch)``, ``arguments = -j $$(Cpus)``, ``$$(GLIDEIN_CMSSite:Unknown)`` (a
default for a slot without the attribute), ``$$([Memory * 0.9])`` (an expression, evaluated
with the slot as MY and the job as TARGET).  The job's ad keeps its ``$$()`` text; what HTCondor
23.9.6 adds at each match, and what this module computes, is ``MATCH_<Name>`` for each
``$$(Name)`` (its value, or the default) and ``MATCH_EXP_<Attr>`` for each string attribute that
holds a ``$$()`` (the attribute with every reference replaced), which the job runs with.  A
reference that cannot be expanded puts the job on hold: "Cannot expand $$ expression (pwd)."
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import classad2

__all__ = ["CannotExpand", "expand", "expanded"]


class CannotExpand(Exception):
    """A ``$$()`` the slot cannot give a value; ``str()`` is the job's hold reason."""

    def __init__(self, reference: str) -> None:
        super().__init__(f"Cannot expand $$ expression ({reference}).")


def expand(job: classad2.ClassAd, slot: classad2.ClassAd) -> dict[str, Any]:
    """The ``MATCH_<Name>`` and ``MATCH_EXP_<Attr>`` attributes of ``job`` matched to ``slot``
    (none for a job without ``$$()``); :class:`CannotExpand` for the first reference the slot
    cannot fill."""
    found: dict[str, Any] = {}
    for attr in job.keys():
        text = job.get(attr)
        if isinstance(text, str) and "$$(" in text:
            found[f"MATCH_EXP_{attr}"] = _expand_text(text, job, slot, found)
    return found


def expanded(job: classad2.ClassAd, match: Mapping[str, Any]) -> classad2.ClassAd:
    """A copy of ``job`` with each attribute that held ``$$()`` replaced by its expansion
    (``match`` as :func:`expand` gives it): the ad the job runs with."""
    ad = classad2.ClassAd()
    ad.update(job)
    ad.update(match)
    for name, value in match.items():
        if name.startswith("MATCH_EXP_"):
            ad[name[len("MATCH_EXP_"):]] = value
    return ad


def _expand_text(text: str, job: classad2.ClassAd, slot: classad2.ClassAd, found: dict[str, Any]) -> str:
    out: list[str] = []
    pos = 0
    while (start := text.find("$$(", pos)) >= 0:
        if text.startswith("[", start + 3):
            end = text.find("])", start + 4)
            if end < 0:
                break  # unterminated: left as written, as the schedd leaves it
            reference = text[start + 3:end + 1]
            value = _evaluate(reference[1:-1], reference, job, slot)
            close = end + 2
        else:
            end = text.find(")", start + 3)
            if end < 0:
                break
            reference = text[start + 3:end]
            name, colon, default = reference.partition(":")
            if name == "DOLLARDOLLAR":
                value = "$$"
            elif name in slot:
                value = _evaluate(name, reference, job, slot)
                found[f"MATCH_{name}"] = value
            elif colon:
                value = found[f"MATCH_{name}"] = default
            else:
                raise CannotExpand(reference)
            close = end + 1
        out.append(text[pos:start])
        out.append(_render(value))
        pos = close
    out.append(text[pos:])
    return "".join(out)


def _evaluate(expression: str, reference: str, job: classad2.ClassAd, slot: classad2.ClassAd) -> Any:
    try:
        value = classad2.ExprTree(expression).eval(scope=slot, target=job)
    except classad2.ClassAdException:
        raise CannotExpand(reference) from None
    if isinstance(value, (classad2.Value, classad2.ClassAd, classad2.ExprTree, list)):
        raise CannotExpand(reference)  # undefined, an error, or no single value to write
    return value


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
