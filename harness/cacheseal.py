"""Seals for cache entries: what was written, for which key, checked on every read.

A *seal* is one line of canonical JSON written at publish time::

    {"format":"t3d-audit-cache/1","key":"<key>","sha256":"<hex of the payload>","size":<bytes>}

It is either embedded (a *sealed file*: the seal, ``\\n``, then the payload bytes; used for
score segments, text embeddings and summaries) or kept in a sidecar next to a payload that
other tools read as is (records CSV files: ``<key>.csv.seal``). A read checks the seal's
bytes are canonical, its format, that its key is the key being looked up (so an entry moved or
copied under another key is caught) and that the payload's size and sha256 match. Any single
changed, added or removed byte therefore fails the check.

A failed check is never served: the caller discards the entry, recomputes it and calls
:func:`discarded`, which warns (:class:`CacheCorruptionWarning`) and counts it per cache kind
in this process; the session sends the counts to the xdist controller with its worker facts.
Entries written before seals existed have none and are recomputed the same way.
"""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

from harness.hashing import canonical_json, sha256_bytes

FORMAT = "t3d-audit-cache/1"
SIDECAR_SUFFIX = ".seal"

_lock = threading.Lock()
_counts: dict[str, int] = {}


class CacheCorruptionWarning(UserWarning):
    """A cache entry failed verification; it was discarded and is being recomputed."""


class CorruptEntry(Exception):
    """A cache entry exists but fails verification (the message says how)."""


def seal(key: str, payload: bytes) -> bytes:
    """The seal line (canonical JSON, no newline) of ``payload`` written for ``key``."""
    return canonical_json(
        {"format": FORMAT, "key": key, "sha256": sha256_bytes(payload), "size": len(payload)}
    )


def sealed(key: str, payload: bytes) -> bytes:
    """A sealed file's bytes: the seal, a newline, then ``payload``."""
    return seal(key, payload) + b"\n" + payload


def check_seal(seal_bytes: bytes, key: str, payload: bytes) -> None:
    """Raise :class:`CorruptEntry` unless ``seal_bytes`` seals exactly ``payload`` for ``key``."""
    try:
        head = json.loads(seal_bytes)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptEntry(f"seal is not JSON ({exc})") from exc
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise CorruptEntry(f"no {FORMAT} seal (written by an older version, or damaged)")
    if head.get("key") != key:
        raise CorruptEntry(f"entry was written for key {str(head.get('key'))[:80]!r}, not {key!r}")
    if head.get("size") != len(payload):
        raise CorruptEntry(f"payload has {len(payload)} bytes, the seal says {head.get('size')}")
    if head.get("sha256") != sha256_bytes(payload):
        raise CorruptEntry("payload sha256 differs from the seal")
    if canonical_json(head) != seal_bytes:
        raise CorruptEntry("seal is not in canonical form")


def unseal(data: bytes, key: str) -> bytes:
    """The payload of a sealed file written for ``key``; :class:`CorruptEntry` if it fails."""
    head, sep, payload = data.partition(b"\n")
    if not sep:
        raise CorruptEntry("no seal line (truncated, or written by an older version)")
    check_seal(head, key, payload)
    return payload


def read_sealed(path: Path, key: str) -> bytes:
    """Read and :func:`unseal` ``path`` (an unreadable file is a :class:`CorruptEntry`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptEntry(f"unreadable: {exc}") from exc
    return unseal(data, key)


def sidecar(path: Path) -> Path:
    """The seal file of a payload kept as is: ``<path><SIDECAR_SUFFIX>``."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def check_sidecar(path: Path, key: str) -> None:
    """Check ``path`` against its sidecar seal; :class:`CorruptEntry` if either fails."""
    try:
        seal_bytes = sidecar(path).read_bytes()
        payload = path.read_bytes()
    except OSError as exc:
        raise CorruptEntry(f"unreadable: {exc}") from exc
    check_seal(seal_bytes, key, payload)


def discarded(kind: str, where: Path | str, reason: str) -> None:
    """Report one discarded entry of cache ``kind``: warn and count it (thread-safe)."""
    with _lock:
        _counts[kind] = _counts.get(kind, 0) + 1
    warnings.warn(
        f"{kind} cache entry {where} failed verification ({reason}); discarded and recomputed",
        CacheCorruptionWarning,
        stacklevel=3,
    )


def discarded_counts() -> dict[str, int]:
    """Entries discarded in this process so far, by cache kind (a copy)."""
    with _lock:
        return dict(_counts)
