"""The score cache on a shared :class:`harness.store.Store` (any fsspec URL or a local dir).

Same logical keys, layout and sealed segment format as
:class:`harness.evaluators.cache.ScoreCache` (``scores/<identity hash>/<image sha[:2]>/<image
sha>/<segment sha>.json``), so either can read what the other wrote. Segments are named by
the sha256 of their content, so writers never conflict: a segment is created only if absent
(a conditional put on object stores, a temp file + link locally) and two machines scoring the
same pairs publish the same object. Reads are verified; a bad segment is deleted, counted and
its pairs are scored again.
"""

from __future__ import annotations

from harness.cacheseal import CorruptEntry
from harness.evaluators.cache import ScoreCache
from harness.store import Store, open_store
from harness.store.stores import StoreError

PREFIX = "scores"


class StoreScoreCache(ScoreCache):
    """:class:`ScoreCache` whose segments live in ``store`` under ``scores/``.

    ``read_only`` (``pytest --audit-store``): :meth:`put` raises instead of writing.
    """

    def __init__(self, store: Store, *, read_only: bool = False):
        self.store = store
        self.read_only = read_only

    @property
    def url(self) -> str:
        return f"{self.store.url}/{PREFIX}"

    def _prefix(self, identity_hash: str, image_sha: str) -> str:
        return f"{PREFIX}/{identity_hash}/{image_sha[:2]}/{image_sha}"

    def _segment_names(self, identity_hash: str, image_sha: str) -> list[str]:
        return [k for k in self.store.list(self._prefix(identity_hash, image_sha))
                if k.endswith(".json")]  # fmt: skip

    def _read_segment(self, name: str) -> bytes:
        data = self.store.read(name)
        if data is None:
            raise CorruptEntry("listed but unreadable (deleted meanwhile?)")
        return data

    def _drop_segment(self, name: str) -> bool:
        if not self.store.exists(name):
            return False
        self.store.delete(name)
        return True

    def _segment_name(self, identity_hash: str, image_sha: str, digest: str) -> str:
        return f"{self._prefix(identity_hash, image_sha)}/{digest}.json"

    def _publish_segment(self, name: str, data: bytes) -> None:
        if self.read_only:
            raise StoreError(f"read-only score store: not writing {name}", where=self.url)
        self.store.write(name, data, if_absent=True)


def open_score_cache(location, *, read_only: bool = False) -> ScoreCache:
    """A score cache: a plain path is the local :class:`ScoreCache` under ``<path>/scores``,
    a URL a :class:`StoreScoreCache` over :func:`harness.store.open_store` of it."""
    if isinstance(location, str) and "://" in location:
        return StoreScoreCache(open_store(location), read_only=read_only)
    return ScoreCache(location)
