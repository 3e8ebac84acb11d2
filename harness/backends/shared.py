"""What every compute backend shares: :class:`BackendError` and the render store every node
reaches (a local path cannot be one)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from harness.core.errors import AuditError

if TYPE_CHECKING:
    from harness.render.store_cache import StoreRenderCache


class BackendError(AuditError):
    """A compute backend cannot be used (not installed, cannot connect, workers lost)."""


def shared_render_cache(store_url: str, backend: str) -> StoreRenderCache:
    """The render cache on the store at ``store_url`` that every node of ``backend`` (``ray``,
    ``slurm``) reads and writes; :class:`BackendError` for a local path, which other nodes
    cannot reach."""
    from harness.render.store_cache import StoreRenderCache, open_render_cache

    cache = open_render_cache(store_url)
    if not isinstance(cache, StoreRenderCache):
        raise BackendError(
            f"--backend {backend} needs a shared store URL, got the local path {store_url!r}",
            where="--store",
            hint=f"pass --store file://{os.path.abspath(store_url)} on a filesystem every node mounts (or an s3:// URL)",
        )
    return cache
