"""Lease markers: "I am computing this key until <expiry>", so machines sharing a store do not
compute the same entry twice.

A lease is one small object, ``leases/<name>.lease``, created only if absent (local: a hard
link; object stores: a conditional put), holding canonical JSON::

    {"expires": 1767225600.0, "owner": "host:pid", "token": "<uuid4 hex>"}

Whoever creates it holds the lease until ``expires`` (seconds since the epoch, the holder's
clock) or until it deletes it. A lease past its expiry belongs to a worker that died: it is
deleted and taken. Leases only save work; correctness never depends on them (entries are
content-addressed and verified on read, so two writers of one key publish equal entries, and
a damaged one is discarded). Clocks should agree within a few seconds of the TTL.

Taking over an expired lease is itself guarded: the taker first creates (only if absent) a
*takeover marker* ``leases/<name>.lease.takeover.<id of the dead lease>``, then checks the lease
is still the dead one, deletes it and creates its own. Of several machines that saw the same
dead lease only the one that created the marker proceeds, and one that saw it late finds the
lease replaced and backs off, so it never deletes the new holder's lease. A marker outlives
its taker only if that taker dies mid-takeover; once past its own expiry it is removed and the
next attempt proceeds. Releasing (and a driver breaking a dead worker's lease) takes the same
marker around its check-then-delete, since object stores have no conditional delete: a holder
whose lease expired and is being taken over never deletes the taker's new lease.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass

from harness.core.hashing import canonical_json, sha256_bytes
from harness.store.stores import Store

PREFIX = "leases"
#: How long a takeover marker guards a lease record (its maker finishes in a few requests).
MARKER_TTL_S = 60.0


@dataclass(frozen=True)
class Lease:
    """A held lease: ``key`` in the store, our ``token``, and when it lapses (epoch seconds)."""

    key: str
    token: str
    expires: float


def lease_key(name: str) -> str:
    """The lease object of ``name`` (a content key, ``/`` allowed)."""
    return f"{PREFIX}/{name}.lease"


def _owner() -> str:
    """``host:pid`` of this process (a Ray actor reports the same string to its driver)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def holder(store: Store, name: str) -> dict | None:
    """The current lease record of ``name`` (``None``: free, or unreadable)."""
    raw = store.read(lease_key(name))
    return None if raw is None else _parse(raw)


def acquire(store: Store, name: str, ttl_s: float, *, now: float | None = None) -> Lease | None:
    """Take the lease on ``name`` for ``ttl_s`` seconds; ``None`` if someone else holds it (or
    is taking over its expired lease right now)."""
    key = lease_key(name)
    t = time.time() if now is None else now
    lease = Lease(key, uuid.uuid4().hex, t + ttl_s)
    body = canonical_json({"expires": lease.expires, "owner": _owner(), "token": lease.token})
    if store.write(key, body, if_absent=True):
        return lease
    raw = store.read(key)
    if raw is None:  # released meanwhile
        return lease if store.write(key, body, if_absent=True) else None
    record = _parse(raw)
    expires = record.get("expires") if record else None
    if isinstance(expires, int | float) and expires > t:
        return None  # held, and its holder is alive as far as we know
    # expired or unreadable: its holder died mid-work; take it over, one taker per dead lease
    marker = _marker(key, raw, record)
    if not _mark(store, marker, t):
        return None  # another taker (or the late holder releasing it) is at it
    try:
        if store.read(key) != raw:
            return None  # replaced by another taker (we saw the dead lease late) or released
        store.delete(key)
        return lease if store.write(key, body, if_absent=True) else None
    finally:
        store.delete(marker)


def _marker(key: str, raw: bytes, record: dict | None) -> str:
    """The takeover marker of the lease object ``key`` holding ``raw``: named by its token
    (the sha256 of its bytes when it has none), so it guards that one lease record."""
    token = record.get("token") if record else None
    ident = token if isinstance(token, str) and token.isalnum() else sha256_bytes(raw)
    return f"{key}.takeover.{ident[:64]}"


def _mark(store: Store, marker: str, now: float) -> bool:
    """Create ``marker`` (only if absent); a marker past its expiry (its maker died) is
    removed, and this attempt still fails (the next one proceeds)."""
    body = canonical_json({"expires": now + MARKER_TTL_S, "owner": _owner()})
    if store.write(marker, body, if_absent=True):
        return True
    other = _parse(store.read(marker) or b"")
    lapsed = other.get("expires") if other else None
    if not isinstance(lapsed, int | float) or lapsed <= now:
        store.delete(marker)
    return False


def _delete_if_unchanged(store: Store, key: str, raw: bytes) -> bool:
    """Delete the lease object ``key`` if it still holds ``raw``, holding its takeover marker
    meanwhile, so a taker cannot replace it between our check and our delete (object stores
    have no conditional delete). ``False``: a taker is replacing it, or it changed."""
    marker = _marker(key, raw, _parse(raw))
    if not _mark(store, marker, time.time()):
        return False
    try:
        if store.read(key) != raw:
            return False
        store.delete(key)
        return True
    finally:
        store.delete(marker)


def _parse(raw: bytes) -> dict | None:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def release(store: Store, lease: Lease) -> None:
    """Give the lease back (only if it is still ours: an expired one may have been taken, or
    be being taken, by another worker; then it is left to them)."""
    raw = store.read(lease.key)
    record = None if raw is None else _parse(raw)
    if raw is not None and record is not None and record.get("token") == lease.token:
        _delete_if_unchanged(store, lease.key, raw)


def release_if_owner(store: Store, name: str, owner: str) -> bool:
    """Break the lease on ``name`` if ``owner`` (``host:pid``) holds it: the driver does this
    for a worker it knows is dead, instead of waiting for the lease to expire."""
    key = lease_key(name)
    raw = store.read(key)
    record = None if raw is None else _parse(raw)
    if raw is not None and record is not None and record.get("owner") == owner:
        return _delete_if_unchanged(store, key, raw)
    return False
