"""The arguments of a submit file's macro functions, checked as condor_submit 23.9.6 checks them.

``$INT(name)``, ``$REAL(name)``, ``$CHOICE(index, list)``, ``$SUBSTR(name, start, length)``,
``$RANDOM_CHOICE(list)`` and ``$RANDOM_INTEGER(min, max, step)`` with an argument 23.9.6 cannot
use make its condor_submit stop at the queue statement (``$INT(Process*10+1)``: "does not
evaluate to an integer") or crash (``$CHOICE(5, a, b)``), where the bindings the schedd parses
with expand the function to nothing and queue the job.  A function is checked where condor_submit
expands it: in a command's value, or a macro such a value names, for the proc being queued.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import classad2

__all__ = ["check", "list_macros", "used"]

# a function and its arguments, which end at the first ')' in 23.9.6 (a $(...) inside cuts them)
_FUNCTION = re.compile(r"(?<!\$)\$(INT|REAL|CHOICE|SUBSTR|RANDOM_CHOICE|RANDOM_INTEGER)\(([^)]*)\)?")
_REFERENCE = re.compile(r"(?<!\$)\$(?:F[a-z]*|INT|REAL|CHOICE|SUBSTR|BASENAME|DIRNAME)?\(\s*([A-Za-z_][\w.]*)")
# a printf conversion (%% is none); its last character says what it prints
_CONVERSION = re.compile(r"%(?:%|[-+ #0]*[0-9]*(?:\.[0-9]*)?(?:hh|h|ll|l|L|q|j|z|t)?(.))")
_CONVERSIONS = {"INT": "diouxXc", "REAL": "fFeEgGaA"}
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*\Z")
# what C's strtod reads whole, as $REAL() does before it tries an expression: 1., inf, nan, 0x1F, 0x1p3
_STRTOD = re.compile(r"\s*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan"
                     r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)\s*\Z",
                     re.IGNORECASE)


def used(text: str, *macros: Mapping[str, str] | None) -> bool:
    """Whether a description (and the macros set before or after it) calls a function to check."""
    return any(_FUNCTION.search(t) for t in (text, *(v for m in macros if m for v in m.values())))


def list_macros(value: str) -> list[str]:
    """The macros a value's $CHOICE(index, name) or $RANDOM_CHOICE(name) takes its list from."""
    names = []
    for function, body in _FUNCTION.findall(value):
        args = [a.strip() for a in body.split(",")]
        lists = args[1:] if function == "CHOICE" else args if function == "RANDOM_CHOICE" else []
        if len(lists) == 1 and re.fullmatch(r"[A-Za-z_][\w.]*", lists[0]):
            names.append(lists[0])
    return names


def check(roots: list[str], raw: Callable[[str], str | None], expand: Callable[[str], str]) -> tuple[str, str] | None:
    """The first function a value of ``roots`` (command names) uses, itself or through the macros
    it names, whose arguments 23.9.6 refuses: (the name whose value holds it, what to do), else
    None.  ``raw``: a name's value as written (None: not set); ``expand``: its expanded value."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop(0)
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        value = raw(name)
        if value is None:
            continue
        for match in _FUNCTION.finditer(value):
            said = _refusal(match.group(1), match.group(2), match.group(0).endswith(")"), raw, expand)
            if said:
                return name, f"{match.group(0)}: {said}"
        todo += _REFERENCE.findall(value) + list_macros(value)
    return None


def _refusal(function: str, body: str, closed: bool, raw, expand) -> str | None:
    if "$(" in body or not closed:
        return (f"23.9.6 ends ${function}()'s arguments at the first ')', so a $(...) cannot be one; name the "
                "macro without $( ), as in $INT(Process) or $CHOICE(Process, a, b)")
    args = [a.strip() for a in body.split(",")]
    if function in ("INT", "REAL"):
        return _number_refusal(function, args[0], raw, expand) or _format_refusal(function, args[1:])
    if function == "CHOICE":
        return _choice_refusal(args, raw, expand)
    if function == "SUBSTR":
        if len(args) < 2 or not args[1]:
            return "$SUBSTR() takes a macro's name and a start index, as in $SUBSTR(name, 2) or $SUBSTR(name, 2, 3)"
        if not _INTEGER.match(args[1]):
            return (f"the start index '{args[1]}' is not a whole number (23.9.6 takes no macro there); "
                    "write one, as in $SUBSTR(name, 2)")
        if len(args) > 2 and not _INTEGER.match(args[2]):
            return f"the length '{args[2]}' is not a whole number; write one, as in $SUBSTR(name, 2, 3)"
        return None
    if function == "RANDOM_CHOICE":
        if not any(args):
            return "$RANDOM_CHOICE() has nothing to choose from; list the choices, as in $RANDOM_CHOICE(a, b, c)"
        return None
    return _random_integer_refusal(args)


def _number(text: str, raw, expand, real: bool = False) -> float | None:
    """What $INT/$REAL/$CHOICE make of a name: a macro's expanded value, else the text itself,
    read as a number in C's way (base 10 for $INT and $CHOICE, so 08 is 8; strtod's for $REAL), else
    evaluated as a ClassAd expression; None unless a number (true counts as 1)."""
    source = expand(text) if text and raw(text) is not None else text
    if _INTEGER.match(source):
        return float(int(source))
    if real and _STRTOD.match(source):
        source = source.strip()
        return float.fromhex(source) if "x" in source.lower() else float(source)
    try:
        value = classad2.ExprTree(source).eval()
    except Exception:
        return None
    if isinstance(value, classad2.Value) or not isinstance(value, (int, float)):  # Undefined, Error
        return None
    return float(value)


def _number_refusal(function: str, name: str, raw, expand) -> str | None:
    if _number(name, raw, expand, real=function == "REAL") is not None:
        return None
    kind = "an integer" if function == "INT" else "a number"
    return (f"'{name}' does not evaluate to {kind} (23.9.6 takes a macro's name or a constant expression, and "
            f"Process and the like are macros, not attributes); set a macro to it and name that macro, as in "
            f"n = $(Process)*10+1 with ${function}(n)")


def _format_refusal(function: str, formats: list[str]) -> str | None:
    """23.9.6 stops on a format whose first conversion is not of the function's type (``%5.1f``
    for $INT(), ``%s``, none at all), where the bindings print the format itself."""
    if not formats:
        return None
    conversion = next((m.group(1) for m in _CONVERSION.finditer(formats[0]) if m.group(1)), None)
    if conversion is not None and conversion in _CONVERSIONS[function]:
        return None
    example = "%03d" if function == "INT" else "%.2f"
    return (f"'{formats[0]}' is not a valid format specifier for ${function}(); give one that prints "
            f"{'an integer' if function == 'INT' else 'a number'}, as in ${function}(name,{example})")


def _choice_refusal(args: list[str], raw, expand) -> str | None:
    if len(args) < 2 or not args[0]:
        return "$CHOICE() takes an index and the list to choose from, as in $CHOICE(Process, a, b, c)"
    index = _number(args[0], raw, expand)
    if index is None or index < 0:
        return (f"the index '{args[0]}' is not a number from 0; give a macro's name or a number, "
                "as in $CHOICE(Process, a, b, c)")
    choices = args[1:]
    if len(choices) == 1 and raw(choices[0]) is not None:  # $CHOICE(Process, listMacro)
        choices = expand(choices[0]).split(",")
    if int(index) >= len(choices):
        return (f"the index {int(index)} is past the end of the list of {len(choices)} (indexes count from 0; "
                "23.9.6 stops or crashes there); list a choice for every index")
    return None


def _random_integer_refusal(args: list[str]) -> str | None:
    for k, what in enumerate(("min", "max", "step")):
        if k < len(args) and not _INTEGER.match(args[k]) or k < 2 and k >= len(args):
            return (f"the {what} '{args[k] if k < len(args) else ''}' is not a whole number (23.9.6 takes no macro "
                    "there); write $RANDOM_INTEGER(min, max) or $RANDOM_INTEGER(min, max, step)")
    low, high = int(args[0]), int(args[1])
    if low > high:
        return f"min {low} is greater than max {high}; write the smaller first"
    if len(args) > 2 and int(args[2]) < 1:
        return f"the step {int(args[2])} is not 1 or more; write a positive step"
    return None
