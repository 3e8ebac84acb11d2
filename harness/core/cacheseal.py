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

*Keyed seals.* A plain seal catches accidents (a torn write, a bad disk, a copied entry), not a
writer who knows the scheme: anyone can recompute a sha256. When the user holds a secret
(:data:`KEY_ENV`, or a file named by :data:`KEY_FILE_ENV`) every seal written also carries
``"hmac"``, the HMAC-SHA256 under that secret of the plain seal's canonical JSON, and every
read requires it: an entry sealed without the secret, with another secret, or forged with a
recomputed plain seal fails like a damaged one; an entry sealed with a secret fails on a reader
that has none. Threat model: docs/cache.md.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import threading
import warnings
from pathlib import Path

from harness.core import bounded_input
from harness.core.errors import AuditError
from harness.core.hashing import canonical_json, sha256_bytes

FORMAT = "t3d-audit-cache/1"
SIDECAR_SUFFIX = ".seal"
#: The secret of keyed seals, as text (UTF-8 bytes are the HMAC key).
KEY_ENV = "T3D_AUDIT_CACHE_KEY"
#: A file holding the secret (its bytes, one trailing newline stripped); used when
#: :data:`KEY_ENV` is unset.
KEY_FILE_ENV = "T3D_AUDIT_CACHE_KEY_FILE"
KEY_FILE_MAX = 65536  # bytes: a key file is a secret of a few dozen bytes, never a device
#: The shortest secret accepted, in bytes (an HMAC key shorter than this is guessable).
MIN_KEY_BYTES = 16

_lock = threading.Lock()
_counts: dict[str, int] = {}


class CacheCorruptionWarning(UserWarning):
    """A cache entry failed verification; it was discarded and is being recomputed."""


class CorruptEntry(Exception):
    """A cache entry exists but fails verification (the message says how)."""


class CacheKeyError(AuditError):
    """The cache secret (``T3D_AUDIT_CACHE_KEY`` / ``T3D_AUDIT_CACHE_KEY_FILE``) is unusable."""


def secret() -> bytes | None:
    """The user's cache secret, or ``None`` when neither variable is set (plain seals).

    Raises :class:`CacheKeyError` when the key file cannot be read or a secret is shorter than
    :data:`MIN_KEY_BYTES`. Read from the environment on each call (cheap; the file is read once
    per path)."""
    raw = os.environ.get(KEY_ENV)
    if raw is not None:
        return _checked(raw.encode("utf-8"), f"${KEY_ENV}")
    path = os.environ.get(KEY_FILE_ENV)
    if path:
        return _key_file(path)
    return None


@functools.lru_cache(maxsize=4)
def _key_file(path: str) -> bytes:
    try:
        data = bounded_input.read_bytes(path, limit=KEY_FILE_MAX, what="cache key file")
    except OSError as exc:
        raise CacheKeyError(f"cannot read the cache key file: {exc.strerror or exc}", where=path,
                            hint=f"point ${KEY_FILE_ENV} at a readable file, or unset it") from exc
    return _checked(data.removesuffix(b"\n").removesuffix(b"\r"), path)


def _checked(key: bytes, where: str) -> bytes:
    if len(key) < MIN_KEY_BYTES:
        raise CacheKeyError(
            f"the cache key has {len(key)} bytes, fewer than {MIN_KEY_BYTES}", where=where,
            hint="use a random secret, e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`",
        )
    return key


def mac(data: bytes, key: bytes) -> str:
    """Hex HMAC-SHA256 of ``data`` under ``key``."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def check_mac(found: object, data: bytes, key: bytes | None, what: str) -> None:
    """Raise :class:`CorruptEntry` unless ``found`` (the entry's ``hmac`` field, ``None`` when
    absent) is what the reader's secret ``key`` expects of ``data``."""
    if key is None:
        if found is not None:
            raise CorruptEntry(f"{what} was sealed with a key (HMAC-SHA256) and this process has "
                               f"none: set ${KEY_ENV} or ${KEY_FILE_ENV}")
        return
    if not isinstance(found, str):
        raise CorruptEntry(f"{what} has no keyed seal (written without the cache key, or forged)")
    if not hmac.compare_digest(found, mac(data, key)):
        raise CorruptEntry(f"{what}'s keyed seal does not verify (another key, or forged)")


def seal(key: str, payload: bytes) -> bytes:
    """The seal line (canonical JSON, no newline) of ``payload`` written for ``key``; with the
    user's :func:`secret` it also carries ``hmac`` over the plain seal."""
    head: dict[str, object] = {
        "format": FORMAT, "key": key, "sha256": sha256_bytes(payload), "size": len(payload)
    }
    k = secret()
    if k is not None:
        head["hmac"] = mac(canonical_json(head), k)
    return canonical_json(head)


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
    plain = {k: v for k, v in head.items() if k != "hmac"}
    check_mac(head.get("hmac"), canonical_json(plain), secret(), "entry")
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
