"""The render cache on a shared :class:`harness.store.Store` (any fsspec URL or a local dir).

Same keys, layout and entry format as :class:`harness.render.render_cache.RenderCache`
(``renders/objects/<key[:2]>/<key>/{image.png, meta.json}``, meta sealed with ``meta_sha256``
and the PNG's sha256), so a directory filled by either can be read by the other. What
differs is how writers coordinate: instead of a local file lock, a lease marker with an
expiry (:mod:`harness.store.leases`) keeps machines from rendering the same key twice, and
publication is the store's (directory rename locally; image then ``meta.json`` as the commit
object, created only if absent, on object stores). Reads are verified; a bad entry is
discarded, counted (``harness.cacheseal.discarded``) and rendered again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from harness.cacheseal import CorruptEntry, discarded
from harness.errors import RenderError
from harness.paths import default_cache_dir
from harness.render.render_cache import (
    IMAGE,
    META,
    RenderCache,
    check_image,
    entry_files,
    verify_entry,
)
from harness.store import Store, leases, open_store

PREFIX = "renders"
LEASE_MARGIN_S = 120.0  # added to the render timeout: the lease outlives any live render
POLL_S = 0.25

#: what :meth:`StoreRenderCache.try_render` did
RENDERED, CACHED, BUSY = "rendered", "cached", "busy"


class StoreMissing(RenderError):
    """A read-only store lacks an entry (``--audit-store`` without ``--audit-store-fill``)."""


class StoreRenderCache:
    """Verified, immutable, content-addressed renders in ``store`` under ``renders/``.

    ``lease_ttl_s`` bounds how long a dead renderer's lease blocks others (set it above the
    render timeout). ``read_only``: a miss raises :class:`StoreMissing` instead of rendering.
    """

    key = staticmethod(RenderCache.key)

    def __init__(self, store: Store, *, lease_ttl_s: float = 600.0 + LEASE_MARGIN_S,
                 read_only: bool = False):  # fmt: skip
        self.store = store
        self.lease_ttl_s = lease_ttl_s
        self.read_only = read_only
        self.missing: set[str] = set()  # keys found absent in read-only mode

    @property
    def url(self) -> str:
        return f"{self.store.url}/{PREFIX}"

    @property
    def log_dir(self) -> Path:
        """Blender's output stays on this machine: ``<local cache dir>/logs``."""
        return default_cache_dir() / "logs"

    def _prefix(self, key: str) -> str:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise RenderError(f"malformed render-cache key {key!r}", where=self.url)
        return f"{PREFIX}/objects/{key[:2]}/{key}"

    # -- reading ---------------------------------------------------------------------------

    def contains(self, key: str) -> bool:
        """Whether a published entry exists (its commit file; unverified, for planning)."""
        return self.store.exists(f"{self._prefix(key)}/{META}")

    def _read(self, key: str) -> np.ndarray | None:
        prefix = self._prefix(key)
        raw = self.store.read(f"{prefix}/{META}")
        if raw is None:
            return None
        data = self.store.read(f"{prefix}/{IMAGE}")
        if data is None:
            raise CorruptEntry("meta.json without image.png")
        return verify_entry(key, raw, data)

    def get(self, key: str) -> np.ndarray | None:
        """The cached (H, W, 4) uint8 image, or ``None`` if absent or found corrupt (then
        discarded and reported)."""
        try:
            return self._read(key)
        except CorruptEntry as exc:
            self.store.delete_entry(self._prefix(key), [IMAGE, META], META)
            discarded("render", f"{self.url}/objects/{key[:2]}/{key}", str(exc))
            return None

    def meta(self, key: str) -> dict[str, Any] | None:
        import json

        raw = self.store.read(f"{self._prefix(key)}/{META}")
        try:
            return None if raw is None else json.loads(raw)
        except ValueError:
            return None

    # -- writing ---------------------------------------------------------------------------

    def _publish(
        self, key: str, image: np.ndarray, meta: dict[str, Any] | None, *, leased: bool = False
    ) -> None:
        """Publish ``image``; ``leased``: we hold the key's lease, so uncommitted files of
        another writer are a dead writer's and may be replaced (else they are left alone)."""
        check_image(image, key)
        self.store.write_entry(self._prefix(key), entry_files(key, image, meta), META,
                               replace_uncommitted=leased)  # fmt: skip

    def put(self, key: str, image: np.ndarray, meta: dict[str, Any] | None = None) -> None:
        """Publish ``image`` under ``key`` unless a valid entry already exists."""
        if self.get(key) is None:
            self._publish(key, image, meta)

    def try_render(
        self, key: str, fn: Callable[[], np.ndarray], meta: dict[str, Any] | None = None
    ) -> tuple[str, np.ndarray | None]:
        """Render ``key`` unless it is cached or leased by another worker; never waits.

        Returns ``(CACHED, image)``, ``(RENDERED, image)`` or ``(BUSY, None)``. Exceptions from
        ``fn`` propagate (the lease is released, nothing is stored).
        """
        image = self.get(key)
        if image is not None:
            return CACHED, image
        if self.read_only:
            self.missing.add(key)
            raise StoreMissing(f"render {key[:16]}... is not in the store", where=self.url,
                               hint="fill the store first (t3d-audit warm --store ...)")  # fmt: skip
        lease = leases.acquire(self.store, f"{PREFIX}/{key}", self.lease_ttl_s)
        if lease is None:
            return BUSY, None
        try:
            image = self.get(key)  # published by the previous holder just before we took it
            if image is not None:
                return CACHED, image
            image = fn()
            self._publish(key, image, meta, leased=True)
            return RENDERED, image
        finally:
            leases.release(self.store, lease)

    def get_or_render(
        self,
        key: str,
        fn: Callable[[], np.ndarray],
        meta: dict[str, Any] | None = None,
    ) -> np.ndarray:
        """The cached image, or ``fn()`` rendered once across every machine sharing the store
        (waits while another holds the key's lease), published and returned."""
        while True:
            status, image = self.try_render(key, fn, meta)
            if status != BUSY:
                assert image is not None
                return image
            time.sleep(POLL_S)

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        """Remove old temp files of a local store (object stores have none)."""
        prune = getattr(self.store, "prune_tmp", None)
        return int(prune(max_age_s)) if callable(prune) else 0


def open_render_cache(
    location: Path | str | None, *, read_only: bool = False, lease_ttl_s: float | None = None
) -> RenderCache | StoreRenderCache:
    """A render cache: a plain path is the local :class:`RenderCache` (file locks; the
    zero-config default), a URL (``file://``, ``s3://``, ...) a :class:`StoreRenderCache`
    over :func:`harness.store.open_store` of it (the renders live under ``<url>/renders``)."""
    if isinstance(location, str) and "://" in location:
        ttl = {} if lease_ttl_s is None else {"lease_ttl_s": lease_ttl_s}
        return StoreRenderCache(open_store(location), read_only=read_only, **ttl)
    return RenderCache(location)


