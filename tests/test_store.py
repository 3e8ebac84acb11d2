"""Shared stores: a local directory and S3 (a moto server on 127.0.0.1) behave alike:
whole-object publication, create-only writes, entries with a commit file, leases with an
expiry, and the render and score caches on top (verified reads; corruption detected, then
recomputed)."""

from __future__ import annotations

import json
import uuid
import warnings

import numpy as np
import pytest

from harness.core.cacheseal import CacheCorruptionWarning, discarded_counts
from harness.evaluators.score_store import StoreScoreCache, open_score_cache
from harness.protocol.configurations import RenderConfig
from harness.render.cache import RenderCache
from harness.render.store_cache import BUSY, CACHED, RENDERED, StoreRenderCache, open_render_cache
from harness.store import LocalStore, is_url, leases, open_store
from tests._distributed import moto_s3
from tests._extras import need


@pytest.fixture(scope="module")
def s3_url():
    with moto_s3() as url:
        yield url


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path):
    if request.param == "local":
        return open_store(tmp_path.as_uri())
    base = request.getfixturevalue("s3_url")
    return open_store(f"{base}/{uuid.uuid4().hex[:12]}")


def test_open_store_picks_the_implementation(tmp_path):
    assert isinstance(open_store(tmp_path), LocalStore)
    assert isinstance(open_store(f"file://{tmp_path}"), LocalStore)
    assert open_store(f"file://{tmp_path}").root == tmp_path.resolve()
    assert is_url("s3://b/p") and not is_url(str(tmp_path))


def test_open_store_opens_an_fsspec_url():
    need("fsspec")
    assert open_store("memory://t3d/x").url == "memory://t3d/x"


def test_objects_round_trip_and_create_only_writes(store):
    assert store.read("a/b.bin") is None and not store.exists("a/b.bin")
    assert store.write("a/b.bin", b"one")
    assert store.read("a/b.bin") == b"one" and store.exists("a/b.bin")
    assert not store.write("a/b.bin", b"two", if_absent=True)  # conditional create loses
    assert store.read("a/b.bin") == b"one"
    assert store.write("a/b.bin", b"two")  # plain write replaces
    assert store.read("a/b.bin") == b"two"
    store.write("a/c/d.bin", b"x")
    assert store.list("a") == ["a/b.bin", "a/c/d.bin"]
    assert store.list("nothing") == []
    store.delete("a/b.bin")
    store.delete("a/b.bin")  # already gone: no error
    assert store.read("a/b.bin") is None and store.list("a") == ["a/c/d.bin"]


def test_malformed_keys_are_rejected(store):
    from harness.store.stores import StoreError

    for key in ("", "/abs", "a/../b", "a//b"):
        with pytest.raises(StoreError, match="malformed store key"):
            store.read(key)


def test_entries_exist_once_committed(store):
    files = {"image.png": b"png", "meta.json": b"{}"}
    assert store.write_entry("e/1", files, "meta.json")
    assert not store.write_entry("e/1", {"image.png": b"other", "meta.json": b"[]"}, "meta.json")
    assert store.read("e/1/image.png") == b"png" and store.read("e/1/meta.json") == b"{}"
    store.delete_entry("e/1", ["image.png", "meta.json"], "meta.json")
    assert store.list("e") == []


def test_a_lease_is_held_until_released_or_expired(store):
    lease = leases.acquire(store, "renders/k1", ttl_s=60)
    assert lease is not None
    assert leases.acquire(store, "renders/k1", ttl_s=60) is None  # held by a live holder
    record = leases.holder(store, "renders/k1")
    assert record["token"] == lease.token and record["expires"] == lease.expires
    leases.release(store, lease)
    assert leases.holder(store, "renders/k1") is None
    again = leases.acquire(store, "renders/k1", ttl_s=60)
    assert again is not None and again.token != lease.token


def test_an_expired_lease_is_taken_over_and_its_old_holder_cannot_release_it(store):
    dead = leases.acquire(store, "k2", ttl_s=10, now=1000.0)  # expired long ago
    assert dead is not None
    taker = leases.acquire(store, "k2", ttl_s=60)
    assert taker is not None and taker.token != dead.token
    leases.release(store, dead)  # a late release by the dead holder leaves the new lease
    assert leases.holder(store, "k2")["token"] == taker.token


def test_a_driver_breaks_the_lease_of_a_worker_it_knows_is_dead(store):
    lease = leases.acquire(store, "k3", ttl_s=600)
    owner = leases.holder(store, "k3")["owner"]
    assert not leases.release_if_owner(store, "k3", "other-host:1")
    assert leases.holder(store, "k3")["token"] == lease.token
    assert leases.release_if_owner(store, "k3", owner)
    assert leases.acquire(store, "k3", ttl_s=600) is not None


def _image(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (6, 5, 4), dtype=np.uint8)


def test_render_cache_on_a_store_publishes_and_reads_back_verified(store):
    cache = StoreRenderCache(store)
    key = cache.key("scene-identity", RenderConfig(32, samples=1))
    calls = []

    def render():
        calls.append(1)
        return _image(1)

    assert not cache.contains(key) and cache.get(key) is None
    assert np.array_equal(cache.get_or_render(key, render, {"scene_id": "s"}), _image(1))
    assert np.array_equal(cache.get_or_render(key, render), _image(1))
    assert calls == [1] and cache.contains(key)
    assert cache.meta(key)["scene_id"] == "s" and cache.meta(key)["key"] == key
    assert store.list("leases") == []  # released after publishing


def test_render_store_layout_is_the_local_cache_layout(tmp_path):
    """A directory filled through the store is read by the local RenderCache, and back."""
    via_store = StoreRenderCache(open_store(tmp_path.as_uri()))
    key = via_store.key("ident", RenderConfig(32, samples=1))
    via_store.put(key, _image(2), {"scene_id": "s"})
    assert np.array_equal(RenderCache(tmp_path / "renders").get(key), _image(2))
    other = RenderCache(tmp_path / "renders").key("ident2", RenderConfig(32, samples=1))
    RenderCache(tmp_path / "renders").put(other, _image(3))
    assert np.array_equal(via_store.get(other), _image(3))


def _corrupt_render(store, key: str, how: str) -> None:
    prefix = f"renders/objects/{key[:2]}/{key}"
    if how == "image":
        data = bytearray(store.read(f"{prefix}/image.png"))
        data[-5] ^= 0xFF
        store.write(f"{prefix}/image.png", bytes(data))
    elif how == "meta":
        meta = json.loads(store.read(f"{prefix}/meta.json"))
        meta["scene_id"] = "edited"
        store.write(f"{prefix}/meta.json", json.dumps(meta).encode())
    elif how == "missing-image":
        store.delete(f"{prefix}/image.png")


@pytest.mark.parametrize("how", ["image", "meta", "missing-image"])
def test_a_corrupt_render_is_detected_discarded_and_rendered_again(store, how):
    cache = StoreRenderCache(store)
    key = cache.key("ident", RenderConfig(32, samples=1))
    cache.put(key, _image(4))
    _corrupt_render(store, key, how)
    before = discarded_counts().get("render", 0)
    with pytest.warns(CacheCorruptionWarning, match="failed verification"):
        assert cache.get(key) is None
    assert discarded_counts().get("render", 0) == before + 1
    assert not cache.contains(key)  # discarded: the commit file is gone
    status, image = cache.try_render(key, lambda: _image(4))
    assert status == RENDERED and np.array_equal(image, _image(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheCorruptionWarning)
        assert np.array_equal(cache.get(key), _image(4))


def test_an_entry_copied_under_another_key_is_caught(store):
    cache = StoreRenderCache(store)
    a = cache.key("a", RenderConfig(32, samples=1))
    b = cache.key("b", RenderConfig(32, samples=1))
    cache.put(a, _image(5))
    for name in ("image.png", "meta.json"):
        store.write(f"renders/objects/{b[:2]}/{b}/{name}",
                    store.read(f"renders/objects/{a[:2]}/{a}/{name}"))  # fmt: skip
    with pytest.warns(CacheCorruptionWarning, match="written for key"):
        assert cache.get(b) is None


def test_a_key_leased_elsewhere_is_busy_then_cached(store):
    cache = StoreRenderCache(store)
    key = cache.key("ident", RenderConfig(32, samples=1))
    other = leases.acquire(store, f"renders/{key}", ttl_s=60)  # another machine is rendering
    status, image = cache.try_render(key, lambda: pytest.fail("must not render"))
    assert (status, image) == (BUSY, None)
    cache.put(key, _image(6))  # ... and publishes
    leases.release(store, other)
    status, image = cache.try_render(key, lambda: pytest.fail("must not render"))
    assert status == CACHED and np.array_equal(image, _image(6))


def test_read_only_render_store_reports_the_miss(store):
    from harness.render.store_cache import StoreMissing

    cache = StoreRenderCache(store, read_only=True)
    key = cache.key("ident", RenderConfig(32, samples=1))
    with pytest.raises(StoreMissing, match="not in the store"):
        cache.get_or_render(key, lambda: _image(0))
    assert cache.missing == {key}
    assert store.list("renders") == []


def test_open_render_cache_plain_path_is_the_local_cache(tmp_path):
    assert isinstance(open_render_cache(tmp_path), RenderCache)
    assert isinstance(open_render_cache(tmp_path.as_uri()), StoreRenderCache)


def test_score_cache_on_a_store_round_trips_and_rescores_a_corrupt_segment(store):
    cache = StoreScoreCache(store)
    sha = "ab" * 32
    name = cache.put("idh", sha, {"a cat": 0.25, "a dog": 0.5}, {"a dog": "served-1"})
    assert cache.get_entries("idh", sha, ["a cat", "a dog", "absent"]) == {
        "a cat": (0.25, ""), "a dog": (0.5, "served-1")}  # fmt: skip
    assert cache.put("idh", sha, {"a cat": 0.25, "a dog": 0.5}, {"a dog": "served-1"}) == name
    cache.put("idh", sha, {"a bird": 1.0})
    assert cache.get("idh", sha, ["a cat", "a bird"]) == {"a cat": 0.25, "a bird": 1.0}
    data = bytearray(store.read(name))
    data[-3] = ord("9")
    store.write(name, bytes(data))
    with pytest.warns(CacheCorruptionWarning):
        assert cache.get("idh", sha, ["a cat", "a bird"]) == {"a bird": 1.0}
    assert not store.exists(name)
    cache.put("idh", sha, {"a cat": 0.25, "a dog": 0.5}, {"a dog": "served-1"})
    assert cache.get("idh", sha, ["a cat"]) == {"a cat": 0.25}


def test_score_store_layout_is_the_local_cache_layout(tmp_path):
    from harness.evaluators.cache import ScoreCache

    StoreScoreCache(open_store(tmp_path.as_uri())).put("idh", "cd" * 32, {"x": 2.0})
    assert ScoreCache(tmp_path).get("idh", "cd" * 32, ["x"]) == {"x": 2.0}
    assert isinstance(open_score_cache(tmp_path.as_uri()), StoreScoreCache)
    assert type(open_score_cache(tmp_path)) is ScoreCache
