"""The score cache on a shared :class:`harness.store.Store` (any fsspec URL, a local dir, a
read-only view of one, or a local layer over a shared one).

:class:`StoreScoreCache` is :class:`harness.evaluators.cache.ScoreCache`, the one score-cache
implementation, over a store: same logical keys, layout and sealed segment format
(``scores/<identity hash>/<image sha[:2]>/<image sha>/<segment sha>.json``), so either reads
what the other wrote. Segments are named by the sha256 of their content, so writers never
conflict: a segment is created only if absent (a conditional put on object stores, a temp file
+ link locally) and two machines scoring the same pairs publish the same object. Reads are
verified; a bad segment is deleted, counted and its pairs are scored again.
"""

from __future__ import annotations

from pathlib import Path

from harness.evaluators.cache import PREFIX, ScoreCache  # noqa: F401  (PREFIX re-exported)
from harness.store import LayeredStore, LocalStore, ReadOnlyStore, Store, open_store


class StoreScoreCache(ScoreCache):
    """:class:`ScoreCache` whose segments live in ``store`` under ``scores/``.

    ``read_only`` (``pytest --audit-store``) wraps the store in
    :class:`~harness.store.ReadOnlyStore`: :meth:`put` raises
    :class:`~harness.store.StoreReadOnly` instead of writing.
    """

    def __init__(self, store: Store, *, read_only: bool = False):
        super().__init__(ReadOnlyStore(store) if read_only else store)


def open_score_cache(location, *, read_only: bool = False, local: Path | str | None = None) -> ScoreCache:
    """A score cache: a plain path is the local :class:`ScoreCache` under ``<path>/scores``,
    a URL a :class:`StoreScoreCache` over :func:`harness.store.open_store` of it.

    ``local`` (a directory, with a URL): a :class:`~harness.store.LayeredStore` with the local
    cache directory read first and the URL's store under it; segments found only in the
    shared store are copied into the local one; new ones are written to both, or only
    locally when ``read_only``."""
    if not (isinstance(location, str) and "://" in location):
        return ScoreCache(location)
    shared = open_store(location)
    if local is None:
        return StoreScoreCache(shared, read_only=read_only)
    store = LayeredStore(LocalStore(local), ReadOnlyStore(shared) if read_only else shared,
                         write_through=not read_only)  # fmt: skip
    return StoreScoreCache(store)
