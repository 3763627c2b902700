"""Waiting for what a DAGMan run in another process does."""

from __future__ import annotations

import time


def wait_until(predicate, what: str, timeout: float = 60) -> None:
    """Poll ``predicate`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
