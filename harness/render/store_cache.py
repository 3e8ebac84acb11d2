"""The render cache on a shared :class:`harness.store.Store` (any fsspec URL, a local dir, a
read-only view of one, or a local layer over a shared one).

:class:`StoreRenderCache` is :class:`harness.render.cache.RenderCacheBase`, the one
render-cache implementation, with renders under ``<store>/renders`` and lease markers
(:mod:`harness.store.leases`) instead of file locks between writers, so machines sharing the
store never render one key twice. Same keys, layout and entry format as the local
:class:`~harness.render.cache.RenderCache`, so a directory filled by either is read by
the other.
"""

from __future__ import annotations

from pathlib import Path

from harness.render.cache import (  # noqa: F401  (re-exported: callers import them here)
    BUSY,
    CACHED,
    LEASE_MARGIN_S,
    POLL_S,
    PREFIX,
    RENDERED,
    RenderCache,
    RenderCacheBase,
    StoreMissing,
)
from harness.store import LayeredStore, LocalStore, ReadOnlyStore, Store, open_store


class StoreRenderCache(RenderCacheBase):
    """Renders in ``store`` under ``renders/``, writers coordinated by leases.

    ``lease_ttl_s`` bounds how long a dead renderer's lease blocks others (set it above the
    render timeout). ``read_only`` wraps the store in :class:`~harness.store.ReadOnlyStore`
    (as does passing one): a miss raises :class:`StoreMissing` instead of rendering.
    ``lease_store``: where lease markers live (default: the store itself).
    """

    def __init__(self, store: Store, *, lease_ttl_s: float = 600.0 + LEASE_MARGIN_S,
                 read_only: bool = False, lease_store: Store | None = None):  # fmt: skip
        super().__init__(ReadOnlyStore(store) if read_only else store, prefix=PREFIX,
                         lease_store=lease_store, lease_ttl_s=lease_ttl_s)  # fmt: skip


def open_render_cache(
    location: Path | str | None,
    *,
    read_only: bool = False,
    lease_ttl_s: float | None = None,
    local: Path | str | None = None,
) -> RenderCache | StoreRenderCache:
    """A render cache: a plain path is the local :class:`RenderCache` (file locks; the
    zero-config default), a URL (``file://``, ``s3://``, ...) a :class:`StoreRenderCache`
    over :func:`harness.store.open_store` of it (the renders live under ``<url>/renders``).

    ``local`` (a directory, with a URL): the local layer of a
    :class:`~harness.store.LayeredStore` over the URL's store, read first; a render found only
    in the shared store is copied into it. Renders made here go to the local layer and, unless
    ``read_only`` (the shared store is then only read), through to the shared store; leases
    are taken where the renders are published (the shared store, else the local layer).
    """
    ttl = {} if lease_ttl_s is None else {"lease_ttl_s": lease_ttl_s}
    if not (isinstance(location, str) and "://" in location):
        return RenderCache(location)
    shared = open_store(location)
    if local is None:
        return StoreRenderCache(shared, read_only=read_only, **ttl)
    near = LocalStore(local)
    store = LayeredStore(near, ReadOnlyStore(shared) if read_only else shared, write_through=not read_only)
    return StoreRenderCache(store, lease_store=near if read_only else shared, **ttl)
