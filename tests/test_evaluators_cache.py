"""Score cache and text-embedding cache: keys, atomic immutable segments, wrapper behaviour."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.cacheseal import CacheCorruptionWarning
from harness.evaluators.base import ScoreResult
from harness.evaluators.cache import (
    CachedEvaluator,
    EmbeddingCache,
    ScoreCache,
    image_sha256,
)
from tests._counting_evaluator import CountingEvaluator, img


def test_image_sha_depends_on_pixels_and_shape():
    assert image_sha256(img(1)) == image_sha256(img(1))
    assert image_sha256(img(1)) != image_sha256(img(2))
    assert image_sha256(img(0, (4, 5, 3))) != image_sha256(img(0, (5, 4, 3)))
    strided = np.zeros((4, 10, 3), np.uint8)[:, ::2]
    assert image_sha256(strided) == image_sha256(np.zeros((4, 5, 3), np.uint8))


def test_put_get_roundtrip_and_namespaces(tmp_path):
    cache = ScoreCache(tmp_path)
    sha = image_sha256(img(3))
    cache.put("idA", sha, {"a caption": 0.25, "b": 1.5})
    assert cache.get("idA", sha, ["a caption", "b", "c"]) == {"a caption": 0.25, "b": 1.5}
    assert cache.get("idB", sha, ["a caption"]) == {}
    assert cache.get("idA", image_sha256(img(4)), ["a caption"]) == {}


def test_segments_are_immutable_content_addressed_and_skip_nan(tmp_path):
    cache = ScoreCache(tmp_path)
    first = cache.put("id", "ab" * 32, {"x": 1.0, "bad": math.nan})
    again = cache.put("id", "ab" * 32, {"x": 1.0})
    assert first == again
    assert cache.get("id", "ab" * 32, ["x", "bad"]) == {"x": 1.0}
    assert cache.put("id", "ab" * 32, {"only": math.nan}) is None
    leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_damaged_segment_is_ignored(tmp_path):
    cache = ScoreCache(tmp_path)
    path = cache.put("id", "cd" * 32, {"x": 2.0})
    (path.parent / "junk.json").write_text("{not json")
    with pytest.warns(CacheCorruptionWarning, match="no seal line"):
        assert cache.get("id", "cd" * 32, ["x"]) == {"x": 2.0}
    assert not (path.parent / "junk.json").exists()  # discarded


def test_concurrent_writers_never_corrupt(tmp_path):
    cache = ScoreCache(tmp_path)
    sha = "ef" * 32

    def write(k):
        cache.put("id", sha, {f"c{k}": float(k), "shared": 7.0})

    threads = [threading.Thread(target=write, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = cache.get("id", sha, [f"c{k}" for k in range(16)] + ["shared"])
    assert got == {**{f"c{k}": float(k) for k in range(16)}, "shared": 7.0}


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.text(max_size=30), st.floats(-1e6, 1e6), max_size=8))
def test_roundtrip_any_captions(tmp_path_factory, scores):
    cache = ScoreCache(tmp_path_factory.mktemp("sc"))
    cache.put("id", "01" * 32, scores)
    assert cache.get("id", "01" * 32, list(scores)) == pytest.approx(scores)


def test_embedding_cache_memory_and_disk(tmp_path):
    cache = EmbeddingCache("idh", tmp_path)
    vec = np.arange(4, dtype=np.float32)
    cache.put_many({"a room": vec})
    fresh = EmbeddingCache("idh", tmp_path)  # another process, same disk
    np.testing.assert_array_equal(fresh.get_many(["a room", "other"])["a room"], vec)
    assert "other" not in fresh.get_many(["other"])
    assert EmbeddingCache("other-identity", tmp_path).get_many(["a room"]) == {}
    small = EmbeddingCache("idh", max_items=2)
    small.put_many({"1": vec, "2": vec, "3": vec})
    assert set(small.get_many(["1", "2", "3"])) == {"2", "3"}


def test_cached_evaluator_scores_only_misses(tmp_path):
    inner = CountingEvaluator(fail_on="bad")
    ev = CachedEvaluator(inner, ScoreCache(tmp_path))
    images = [img(0), img(255), img(0)]
    first = ev.score(images, ["a", "bb", "bad"])
    assert [r.status for r in first] == ["ok", "ok", "failed"]
    assert inner.pairs == 3
    second = ev.score(images, ["a", "bb", "bad"])
    assert inner.pairs == 4  # only the failure is retried
    assert [r.score for r in second[:2]] == [r.score for r in first[:2]]
    assert second[0].metadata.get("cached") == "true"


def test_cached_grid_matches_uncached_and_computes_each_cell_once(tmp_path):
    inner = CountingEvaluator()
    ev = CachedEvaluator(inner, ScoreCache(tmp_path))
    images = [img(10), img(20)]
    captions = ["x", "yy", "x"]
    grid = ev.score_grid(images, captions)
    np.testing.assert_allclose(grid, inner.score_grid(images, captions))
    inner.grid_cells = 0
    np.testing.assert_allclose(ev.score_grid(images, captions), grid)
    assert inner.grid_cells == 0
    ev.score_grid([img(10), img(20)], ["x", "zzz"])
    assert inner.grid_cells == 2  # the cached "x" column is not recomputed


def test_served_model_is_cached_with_its_score_and_plain_segments_keep_their_bytes(tmp_path):
    import json

    from harness.core.cacheseal import read_sealed

    cache = ScoreCache(tmp_path)
    key = "scores/id/" + "ef" * 32
    plain = cache.put("id", "ef" * 32, {"x": 1.0, "y": 2.5})
    assert read_sealed(plain, key) == b'{"x":1.0,"y":2.5}'  # no served model: payload as before
    served = cache.put("id", "ef" * 32, {"z": 3.0, "w": 4.0}, {"z": "gpt-4o-2024-11-20"})
    assert json.loads(read_sealed(served, key)) == {"w": 4.0, "z": [3.0, "gpt-4o-2024-11-20"]}
    assert cache.get_entries("id", "ef" * 32, ["x", "z", "w"]) == {
        "x": (1.0, ""), "z": (3.0, "gpt-4o-2024-11-20"), "w": (4.0, "")}  # fmt: skip
    assert cache.get("id", "ef" * 32, ["z"]) == {"z": 3.0}


def test_cached_evaluator_keeps_the_served_model_of_a_hit(tmp_path):
    class Served(CountingEvaluator):
        def score(self, images, captions):
            return [ScoreResult.ok(r.score, model="m-1") for r in super().score(images, captions)]

    inner = Served()
    ev = CachedEvaluator(inner, ScoreCache(tmp_path))
    first = ev.score([img(1)], ["a"])
    second = ev.score([img(1)], ["a"])
    assert inner.pairs == 1
    assert first[0].metadata["model"] == second[0].metadata["model"] == "m-1"
    assert second[0].metadata["cached"] == "true"
