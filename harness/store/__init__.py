"""Shared content-addressed stores: where render and score caches live when they are shared.

A *store* is a flat mapping of ``/``-separated keys to immutable bytes at a location: a local
directory (a path or ``file://DIR``) or any fsspec URL (``s3://bucket/prefix``,
``gs://bucket/prefix``, ...). :func:`open_store` picks the implementation;
:mod:`harness.store.layers` wraps one read-only (:class:`ReadOnlyStore`) or layers a local one
over a shared one (:class:`LayeredStore`). The caches built on a store (the render cache,
``harness.render.cache``, and the score cache, ``harness.evaluators.cache``: one
implementation each, whatever the store) keep the same guarantees on every store:
content-addressed keys, whole-or-nothing publication, verified reads (seals), and no duplicate
work across machines (:mod:`harness.store.leases`).
"""

from __future__ import annotations

from harness.store.layers import LayeredStore, ReadOnlyStore, writable
from harness.store.stores import (
    FsspecStore,
    LocalStore,
    Store,
    StoreError,
    StoreReadOnly,
    is_url,
    open_store,
)

__all__ = [
    "FsspecStore",
    "LayeredStore",
    "LocalStore",
    "ReadOnlyStore",
    "Store",
    "StoreError",
    "StoreReadOnly",
    "is_url",
    "open_store",
    "writable",
]
