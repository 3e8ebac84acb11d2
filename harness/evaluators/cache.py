"""Score cache (on any store) and text-embedding cache (immutable entries, atomic publish).

Score cache
    Logical key: (evaluator identity hash, image sha256, caption) -> score (ok scores only;
    failures are never cached, so they are retried). Physical layout, in a cache directory or
    a store (:class:`harness.store.Store`; one class, :class:`ScoreCache`, for both)::

        <root>/scores/<identity hash>/<image sha[:2]>/<image sha>/<segment sha>.json

    Each ``put`` writes one immutable *segment* (a JSON object caption -> score) named by the
    sha256 of its canonical JSON: writing the same scores twice gives the same file, concurrent
    writers never corrupt each other, and a reader sees a segment whole or not at all (the
    store's create-only write: a temp file under ``<root>/tmp`` hard-linked into place locally,
    a conditional PUT on object stores). ``get`` merges the segments of an image;
    a template sweep of one scene costs one segment, so reads stay a few files per image.
    A score of a hosted evaluator that reported its served model id is stored as
    ``[score, "served model id"]`` instead of a bare number (readers before that skip such
    entries and rescore); scores without one stay bare numbers, so their segments are unchanged.
    A segment is a sealed file (``harness.core.cacheseal``: a seal line naming the key
    ``scores/<identity hash>/<image sha>`` and the payload's sha256, then the JSON); one that
    fails the check (edited, truncated, moved, or unsealed) is deleted, warned about and
    counted, and its pairs are scored again.

Text-embedding cache
    ``<root>/text_emb/<identity hash>/<caption sha[:2]>/<caption sha>.npy`` (a sealed file,
    key ``text_emb/<identity hash>/<caption sha>``, holding a float32 ``.npy`` vector; a bad
    one is discarded like a segment), plus an in-process dict, so the captions of a prompt are encoded once and shared by all
    generators' scenes and across pytest-xdist workers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.cacheseal import CorruptEntry, discarded, read_sealed, sealed, unseal
from harness.core.fileio import write_bytes_atomic
from harness.core.hashing import canonical_json, sha256_bytes
from harness.store import LocalStore, Store, StoreReadOnly

PREFIX = "scores"

if TYPE_CHECKING:
    import numpy as np


def image_sha256(image: np.ndarray) -> str:
    """sha256 of an ``(H, W, 3)`` uint8 image: shape header plus C-order pixel bytes."""
    import numpy as np

    arr = np.ascontiguousarray(image)
    header = f"{arr.dtype.str}:{'x'.join(map(str, arr.shape))}:".encode()
    return sha256_bytes(header + arr.tobytes())


def text_sha256(text: str) -> str:
    """sha256 of the UTF-8 bytes of ``text``."""
    return sha256_bytes(text.encode("utf-8"))


class ScoreCache:
    """Content-addressed cache of ok scores in a store; see the module docstring.

    ``root`` is a directory (the local cache: a :class:`~harness.store.LocalStore` there,
    segments under ``<root>/scores``; :meth:`put` returns paths) or a
    :class:`harness.store.Store` (a shared store, a read-only view of one, a local layer over a
    shared one: segments under ``<store>/scores``; :meth:`put` returns store keys). The same
    class serves all of them: only the store differs. In a read-only store :meth:`put` raises
    :class:`~harness.store.StoreReadOnly`, and a damaged segment is reported but left in place.
    """

    def __init__(self, root: str | Path | Store):
        if isinstance(root, str | Path):
            self.store: Store = LocalStore(Path(root))
            self.root: Path | None = Path(root) / PREFIX
        else:
            self.store, self.root = root, None

    @property
    def url(self) -> str:
        return f"{self.store.url}/{PREFIX}"

    @property
    def read_only(self) -> bool:
        return self.store.read_only

    @staticmethod
    def _key(identity_hash: str, image_sha: str) -> str:
        return f"{PREFIX}/{identity_hash}/{image_sha}"

    @staticmethod
    def _prefix(identity_hash: str, image_sha: str) -> str:
        return f"{PREFIX}/{identity_hash}/{image_sha[:2]}/{image_sha}"

    def _location(self, name: str) -> object:
        """What :meth:`put` returns and warnings name: a path in a local cache, else the key."""
        return Path(self.root.parent, name) if self.root is not None else name

    def _segment(self, name: str, key: str) -> dict | None:
        """A verified segment's content; a bad one is deleted and reported (``None``)."""
        try:
            raw = self.store.read(name)
            if raw is None:
                raise CorruptEntry("listed but unreadable (deleted meanwhile?)")
            payload = unseal(raw, key)
            if sha256_bytes(payload) != name.rsplit("/", 1)[-1].removesuffix(".json"):
                raise CorruptEntry("segment name differs from its content's sha256")
            data = json.loads(payload)
            if not isinstance(data, dict):
                raise CorruptEntry("segment is not a JSON object")
        except (CorruptEntry, ValueError) as exc:
            if self.store.read_only:  # a reader never deletes: leave it to a writer
                discarded("score", self._location(name), f"{exc}; left in the read-only store")
            elif self.store.delete(name):  # else another reader discarded (and reported) it first
                discarded("score", self._location(name), str(exc))
            return None
        return data

    def get(self, identity_hash: str, image_sha: str, captions: Iterable[str]) -> dict[str, float]:
        """Cached scores for those ``captions`` of one image (absent captions are left out)."""
        return {c: v for c, (v, _) in self.get_entries(identity_hash, image_sha, captions).items()}

    def get_entries(
        self, identity_hash: str, image_sha: str, captions: Iterable[str]
    ) -> dict[str, tuple[float, str]]:
        """Cached ``(score, served model id or '')`` for those ``captions`` of one image."""
        wanted = set(captions)
        found: dict[str, tuple[float, str]] = {}
        if not wanted:
            return found
        key = self._key(identity_hash, image_sha)
        names = [k for k in self.store.list(self._prefix(identity_hash, image_sha)) if k.endswith(".json")]
        for segment in names:
            data = self._segment(segment, key)
            if data is None:
                continue  # discarded: its pairs count as misses and are scored again
            for caption, entry in data.items():
                if caption not in wanted:
                    continue
                score, served = entry, ""
                if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str):
                    score, served = entry
                if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
                    found[caption] = (float(score), served)
        return found

    def put(
        self,
        identity_hash: str,
        image_sha: str,
        scores: Mapping[str, float],
        served: Mapping[str, str] | None = None,
    ) -> object:
        """Publish the finite ``scores`` (caption -> score) of one image as one segment;
        ``served`` (caption -> served model id) is stored with the scores that have one.
        Returns where the segment is (a path; a key in a store), ``None`` if nothing was finite."""
        served = served or {}
        clean: dict[str, float | list] = {}
        for c, s in scores.items():
            if math.isfinite(float(s)):
                clean[c] = [float(s), served[c]] if served.get(c) else float(s)
        if not clean:
            return None
        data = canonical_json(clean)
        name = f"{self._prefix(identity_hash, image_sha)}/{sha256_bytes(data)}.json"
        if self.store.read_only:
            raise StoreReadOnly(f"read-only score store: not writing {name}", where=self.url)
        if not self.store.exists(name):  # segments are named by content: one is never rewritten
            self.store.write(name, sealed(self._key(identity_hash, image_sha), data), if_absent=True)
        return self._location(name)


class EmbeddingCache:
    """Text embeddings by (identity hash, caption): in memory, and on disk when ``root`` is set."""

    def __init__(self, identity_hash: str, root: str | Path | None = None, max_items: int = 65536):
        self.identity_hash = identity_hash
        self.root = Path(root) / "text_emb" / identity_hash if root is not None else None
        self.max_items = max_items
        self._memory: dict[str, np.ndarray] = {}

    def _path(self, text: str) -> Path:
        assert self.root is not None
        sha = text_sha256(text)
        return self.root / sha[:2] / f"{sha}.npy"

    def _key(self, text: str) -> str:
        return f"text_emb/{self.identity_hash}/{text_sha256(text)}"

    def _load(self, path: Path, text: str) -> np.ndarray | None:
        """A verified embedding; a bad file is deleted and reported (``None``)."""
        import io

        import numpy as np

        try:
            vec = np.load(io.BytesIO(read_sealed(path, self._key(text))), allow_pickle=False)
            if vec.dtype != np.float32 or vec.ndim != 1:
                raise CorruptEntry(f"expected a float32 vector, found {vec.dtype} {vec.shape}")
        except (CorruptEntry, OSError, ValueError) as exc:
            try:
                path.unlink()
            except FileNotFoundError:
                return None
            discarded("text-embedding", path, str(exc))
            return None
        return vec

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Embeddings already known for ``texts`` (memory first, then disk)."""
        found: dict[str, np.ndarray] = {}
        for text in texts:
            if text in self._memory:
                found[text] = self._memory[text]
            elif self.root is not None:
                path = self._path(text)
                if path.is_file():
                    vec = self._load(path, text)
                    if vec is None:
                        continue
                    self._remember(text, vec)
                    found[text] = vec
        return found

    def put_many(self, embeddings: Mapping[str, np.ndarray]) -> None:
        """Store embeddings (float32 1-D vectors)."""
        import io

        import numpy as np

        for text, vec in embeddings.items():
            vec = np.asarray(vec, dtype=np.float32)
            self._remember(text, vec)
            if self.root is not None:
                path = self._path(text)
                if not path.exists():
                    buffer = io.BytesIO()
                    np.save(buffer, vec, allow_pickle=False)
                    write_bytes_atomic(path, sealed(self._key(text), buffer.getvalue()))

    def _remember(self, text: str, vec: np.ndarray) -> None:
        if len(self._memory) >= self.max_items:
            self._memory.pop(next(iter(self._memory)))
        self._memory[text] = vec


class CachedEvaluator:
    """Wrap an evaluator with a :class:`ScoreCache`: only uncached pairs reach the model.

    Failed results pass through uncached. ``score_grid`` is offered when the wrapped evaluator
    has it; it computes the sub-grid (images with a miss) x (captions missing anywhere).
    """

    def __init__(self, evaluator, cache: ScoreCache):
        self.evaluator = evaluator
        self.spec = evaluator.spec
        self.cache = cache
        self._idh = evaluator.spec.identity_hash

    def score(self, images, captions):
        from harness.evaluators.base import ScoreResult, check_pairs

        check_pairs(self.spec, images, captions)
        shas = [image_sha256(im) for im in images]
        results: list = [None] * len(images)
        missing: list[int] = []
        for i, (sha, cap) in enumerate(zip(shas, captions, strict=True)):
            hit = self.cache.get_entries(self._idh, sha, [cap])
            if cap in hit:
                score, served = hit[cap]
                extra = {"model": served} if served else {}
                results[i] = ScoreResult.ok(score, cached="true", **extra)
            else:
                missing.append(i)
        if missing:
            fresh = self.evaluator.score([images[i] for i in missing], [captions[i] for i in missing])
            by_image: dict[str, dict[str, float]] = {}
            served: dict[str, dict[str, str]] = {}
            for i, res in zip(missing, fresh, strict=True):
                results[i] = res
                if res.status == "ok":
                    by_image.setdefault(shas[i], {})[captions[i]] = res.score
                    if res.metadata.get("model"):
                        served.setdefault(shas[i], {})[captions[i]] = res.metadata["model"]
            for sha, scores in by_image.items():
                self.cache.put(self._idh, sha, scores, served.get(sha))
        return results

    def score_grid(self, images, captions):
        import numpy as np

        shas = [image_sha256(im) for im in images]
        grid = np.full((len(images), len(captions)), np.nan)
        need_rows, need_caps = [], set()
        for i, sha in enumerate(shas):
            hit = self.cache.get(self._idh, sha, captions)
            for j, cap in enumerate(captions):
                if cap in hit:
                    grid[i, j] = hit[cap]
            miss = [c for c in captions if c not in hit]
            if miss:
                need_rows.append(i)
                need_caps.update(miss)
        if need_rows:
            caps = [c for c in dict.fromkeys(captions) if c in need_caps]
            sub = self.evaluator.score_grid([images[i] for i in need_rows], caps)
            for r, i in enumerate(need_rows):
                fresh = {c: float(sub[r, k]) for k, c in enumerate(caps)}
                for j, cap in enumerate(captions):
                    if cap in fresh:
                        grid[i, j] = fresh[cap]
                self.cache.put(self._idh, shas[i], fresh)
        return grid

    def close(self) -> None:
        self.evaluator.close()
