"""The "did you mean" of the error messages that name an unknown key in a file a user wrote."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``did you mean "name"? `` for the known word closest to ``word``; "" if none is close."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f'did you mean "{close[0]}"? ' if close else ""
