"""The wire format between crabtui's clients and the schedd daemon: one JSON object per line.

A request is ``{"op": name, ...arguments}``; a reply is ``{"ok": true, "result": ...}`` or
``{"ok": false, "error": message}``.  ClassAds travel as their new-ClassAd text, which classad2
parses back exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import classad2


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    return json.loads(line)


def ads_to_wire(ads: Iterable[classad2.ClassAd]) -> list[str]:
    return [str(ad) for ad in ads]


def ads_from_wire(texts: Iterable[str]) -> list[classad2.ClassAd]:
    return [classad2.ClassAd(text) for text in texts]
