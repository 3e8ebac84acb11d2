"""Shared content-addressed stores: where render and score caches live when they are shared.

A *store* is a flat mapping of ``/``-separated keys to immutable bytes at a location: a local
directory (a path or ``file://DIR``) or any fsspec URL (``s3://bucket/prefix``,
``gs://bucket/prefix``, ...). :func:`open_store` picks the implementation; the caches built
on it (``harness.render.render_store``, ``harness.evaluators.score_store``) keep the local
caches' guarantees: content-addressed keys, whole-or-nothing publication, verified reads
(seals), and no duplicate work across machines (:mod:`harness.store.leases`).
"""

from __future__ import annotations

from harness.store.stores import FsspecStore, LocalStore, Store, is_url, open_store

__all__ = ["FsspecStore", "LocalStore", "Store", "is_url", "open_store"]
