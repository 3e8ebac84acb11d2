"""Canonical JSON and sha256 helpers: the one definition of identity used everywhere.

Canonical JSON: keys sorted, no insignificant whitespace, UTF-8, NaN/Infinity forbidden.
The same value therefore gives the same bytes, and the same hash, on every machine.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

_CHUNK = 1 << 20


def canonical_json(value: object) -> bytes:
    """Serialise ``value`` to canonical JSON bytes (sorted keys, compact, UTF-8)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_json(value: object) -> str:
    """Hex sha256 of the canonical JSON of ``value``."""
    return sha256_bytes(canonical_json(value))


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, streamed in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
