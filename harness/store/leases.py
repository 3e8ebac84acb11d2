"""Lease markers: "I am computing this key until <expiry>", so machines sharing a store do not
compute the same entry twice.

A lease is one small object, ``leases/<name>.lease``, created only if absent (local: a hard
link; object stores: a conditional put), holding canonical JSON::

    {"expires": 1767225600.0, "owner": "host:pid", "token": "<uuid4 hex>"}

Whoever creates it holds the lease until ``expires`` (seconds since the epoch, the holder's
clock) or until it deletes it. A lease past its expiry belongs to a worker that died: it is
deleted and taken. Leases only save work; correctness never depends on them (entries are
content-addressed and verified on read, so two writers of one key publish equal entries, and
a damaged one is discarded). Two machines taking over the same expired lease at the same
instant may both compute its entry once; clocks should agree within a few seconds of the TTL.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass

from harness.hashing import canonical_json
from harness.store.stores import Store

PREFIX = "leases"


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
    if raw is None:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def acquire(store: Store, name: str, ttl_s: float, *, now: float | None = None) -> Lease | None:
    """Take the lease on ``name`` for ``ttl_s`` seconds; ``None`` if someone else holds it."""
    key = lease_key(name)
    for _ in range(2):  # second round: after removing an expired lease
        t = time.time() if now is None else now
        lease = Lease(key, uuid.uuid4().hex, t + ttl_s)
        body = canonical_json({"expires": lease.expires, "owner": _owner(), "token": lease.token})
        if store.write(key, body, if_absent=True):
            return lease
        record = holder(store, name)
        expires = record.get("expires") if record else None
        if isinstance(expires, int | float) and expires > t:
            return None  # held, and its holder is alive as far as we know
        store.delete(key)  # expired or unreadable: its holder died mid-work
    return None


def release(store: Store, lease: Lease) -> None:
    """Give the lease back (only if it is still ours: an expired one may have been taken)."""
    record = holder(store, lease.key.removeprefix(f"{PREFIX}/").removesuffix(".lease"))
    if record is not None and record.get("token") == lease.token:
        store.delete(lease.key)


def release_if_owner(store: Store, name: str, owner: str) -> bool:
    """Break the lease on ``name`` if ``owner`` (``host:pid``) holds it: the driver does this
    for a worker it knows is dead, instead of waiting for the lease to expire."""
    record = holder(store, name)
    if record is not None and record.get("owner") == owner:
        store.delete(lease_key(name))
        return True
    return False
