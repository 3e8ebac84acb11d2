"""Tampering with and racing on a shared store, on a moto S3 server on
127.0.0.1 and on a local store alike.

Tampering: an edited payload with a recomputed plain seal (served with plain seals, caught
with the keyed seal), truncated objects, and entries swapped between keys. Races: two
takers of one dead lease, a taker that saw the dead lease late, and a writer that missed
another writer's commit by an instant.
"""

from __future__ import annotations

import json
import threading
import uuid

import numpy as np
import pytest

from harness.core import cacheseal
from harness.core.cacheseal import CacheCorruptionWarning
from harness.core.hashing import canonical_json, sha256_bytes, sha256_json
from harness.evaluators.score_store import StoreScoreCache
from harness.protocol.configurations import RenderConfig
from harness.render.cache import encode_png
from harness.render.store_cache import StoreRenderCache
from harness.store import leases, open_store
from tests._distributed import moto_s3

KEY = "a-secret-of-at-least-16-bytes"
CFG = RenderConfig(32, samples=1)


@pytest.fixture(scope="module")
def s3_url():
    with moto_s3() as url:
        yield url


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path):
    if request.param == "local":
        return open_store(tmp_path.as_uri())
    return open_store(f"{request.getfixturevalue('s3_url')}/{uuid.uuid4().hex[:12]}")


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv(cacheseal.KEY_ENV, raising=False)
    monkeypatch.delenv(cacheseal.KEY_FILE_ENV, raising=False)


def _image(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (6, 5, 4), dtype=np.uint8)


def _forge_render(store, cache: StoreRenderCache, key: str, image: np.ndarray) -> None:
    """Replace a published render by ``image`` with a consistent plain meta.json."""
    prefix = cache._prefix(key)
    meta = json.loads(store.read(f"{prefix}/meta.json"))
    png = encode_png(image)
    meta.pop("meta_hmac", None)
    meta.pop("meta_sha256")
    meta["png_sha256"] = sha256_bytes(png)
    meta["meta_sha256"] = sha256_json(meta)
    store.write(f"{prefix}/image.png", png)
    store.write(f"{prefix}/meta.json", canonical_json(meta))


# ------------------------------------------------------------------------------ tampering


@pytest.mark.parametrize("keyed", [False, True])
def test_forged_render_with_a_recomputed_plain_seal(store, monkeypatch, keyed):
    if keyed:
        monkeypatch.setenv(cacheseal.KEY_ENV, KEY)
    cache = StoreRenderCache(store)
    key = cache.key("scene", CFG)
    cache.put(key, _image(1))
    _forge_render(store, cache, key, _image(2))
    if not keyed:  # a writer who knows the plain scheme wins: what keyed seals are for
        np.testing.assert_array_equal(cache.get(key), _image(2))
        return
    with pytest.warns(CacheCorruptionWarning, match="no keyed seal"):
        assert cache.get(key) is None
    assert not store.exists(f"{cache._prefix(key)}/meta.json")  # discarded
    assert cache.get_or_render(key, lambda: _image(1)) is not None


@pytest.mark.parametrize("keyed", [False, True])
def test_forged_score_segment_with_a_recomputed_plain_seal(store, monkeypatch, keyed):
    if keyed:
        monkeypatch.setenv(cacheseal.KEY_ENV, KEY)
    cache = StoreScoreCache(store)
    image_sha = "ab" * 32
    cache.put("id", image_sha, {"a chair": 0.25})
    [name] = store.list(f"scores/id/{image_sha[:2]}/{image_sha}")
    head = json.loads(store.read(name).partition(b"\n")[0])
    payload = b'{"a chair":0.99}'
    forged = {"format": head["format"], "key": head["key"], "sha256": sha256_bytes(payload), "size": len(payload)}
    store.delete(name)  # the forger replaces the segment by one named after its new content
    store.write(f"{name.rsplit('/', 1)[0]}/{sha256_bytes(payload)}.json", canonical_json(forged) + b"\n" + payload)
    if not keyed:
        assert cache.get("id", image_sha, ["a chair"]) == {"a chair": 0.99}
        return
    with pytest.warns(CacheCorruptionWarning, match="no keyed seal"):
        assert cache.get("id", image_sha, ["a chair"]) == {}
    assert store.list(f"scores/id/{image_sha[:2]}/{image_sha}") == []


def test_store_written_with_one_key_is_not_served_under_another(store, monkeypatch):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY)
    cache = StoreRenderCache(store)
    key = cache.key("scene", CFG)
    cache.put(key, _image(1))
    monkeypatch.setenv(cacheseal.KEY_ENV, "the-other-team-secret-key")
    with pytest.warns(CacheCorruptionWarning, match="does not verify"):
        assert cache.get(key) is None
    monkeypatch.delenv(cacheseal.KEY_ENV)
    cache.put(key, _image(1))  # a plain-sealed entry now
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY)
    with pytest.warns(CacheCorruptionWarning, match="no keyed seal"):
        assert cache.get(key) is None


@pytest.mark.parametrize("keyed", [False, True])
@pytest.mark.parametrize("what", ["image.png", "meta.json", "segment"])
def test_truncated_objects_are_discarded(store, monkeypatch, keyed, what):
    if keyed:
        monkeypatch.setenv(cacheseal.KEY_ENV, KEY)
    if what == "segment":
        cache = StoreScoreCache(store)
        cache.put("id", "cd" * 32, {"x": 0.5})
        [name] = store.list(f"scores/id/cd/{'cd' * 32}")
        store.write(name, store.read(name)[:-3])
        with pytest.warns(CacheCorruptionWarning, match="score"):
            assert cache.get("id", "cd" * 32, ["x"]) == {}
        return
    cache = StoreRenderCache(store)
    key = cache.key("scene", CFG)
    cache.put(key, _image(1))
    name = f"{cache._prefix(key)}/{what}"
    store.write(name, store.read(name)[: len(store.read(name)) // 2])
    with pytest.warns(CacheCorruptionWarning, match="render cache entry"):
        assert cache.get(key) is None


@pytest.mark.parametrize("keyed", [False, True])
def test_entries_swapped_between_keys_are_caught(store, monkeypatch, keyed):
    if keyed:
        monkeypatch.setenv(cacheseal.KEY_ENV, KEY)
    cache = StoreRenderCache(store)
    ka, kb = cache.key("scene-a", CFG), cache.key("scene-b", CFG)
    cache.put(ka, _image(1))
    cache.put(kb, _image(2))
    files = {n: (store.read(f"{cache._prefix(ka)}/{n}"), store.read(f"{cache._prefix(kb)}/{n}"))
             for n in ("image.png", "meta.json")}  # fmt: skip
    for n, (a, b) in files.items():
        store.write(f"{cache._prefix(ka)}/{n}", b)
        store.write(f"{cache._prefix(kb)}/{n}", a)
    for k in (ka, kb):
        with pytest.warns(CacheCorruptionWarning, match="written for key"):
            assert cache.get(k) is None
    scores = StoreScoreCache(store)
    scores.put("id", "11" * 32, {"x": 0.1})
    [seg] = store.list(f"scores/id/11/{'11' * 32}")
    moved = f"scores/id/22/{'22' * 32}/{seg.rsplit('/', 1)[1]}"
    store.write(moved, store.read(seg))
    with pytest.warns(CacheCorruptionWarning, match="written for key"):
        assert scores.get("id", "22" * 32, ["x"]) == {}


# ------------------------------------------------------------------------------ races


class StaleLease:
    """A store through which the first read of one lease returns what it held earlier: a
    worker that read the dead lease just before another worker took it over."""

    def __init__(self, store, key: str, stale: bytes):
        self.inner, self.key, self.stale, self.url = store, key, stale, store.url

    def read(self, key):
        if key == self.key and self.stale is not None:
            stale, self.stale = self.stale, None
            return stale
        return self.inner.read(key)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_taker_that_saw_the_dead_lease_late_does_not_steal_the_new_one(store):
    dead = leases.acquire(store, "renders/k", ttl_s=10, now=1000.0)
    stale = store.read(dead.key)
    first = leases.acquire(store, "renders/k", ttl_s=600)
    assert first is not None
    late = leases.acquire(StaleLease(store, dead.key, stale), "renders/k", ttl_s=600)
    assert late is None  # it backs off instead of deleting the first taker's lease
    assert leases.holder(store, "renders/k")["token"] == first.token
    assert [k for k in store.list("leases") if "takeover" in k] == []  # markers cleaned up


def test_a_late_release_never_deletes_the_takers_lease(store):
    """The holder's lease expired and was taken over between its release reading the lease
    and deleting it: the release must leave the new lease alone."""
    mine = leases.acquire(store, "renders/r", ttl_s=10, now=1000.0)
    stale = store.read(mine.key)
    taker = leases.acquire(store, "renders/r", ttl_s=600)
    assert taker is not None
    leases.release(StaleLease(store, mine.key, stale), mine)
    assert leases.holder(store, "renders/r")["token"] == taker.token
    # and while a taker is mid-takeover (holding the marker), the release stays out of it
    store.delete(taker.key)
    mine = leases.acquire(store, "renders/r", ttl_s=10, now=1000.0)
    store.write(f"{mine.key}.takeover.{mine.token}", canonical_json({"expires": 9e18}))
    leases.release(store, mine)
    assert leases.holder(store, "renders/r")["token"] == mine.token  # left to the taker
    assert not leases.release_if_owner(store, "renders/r", leases.holder(store, "renders/r")["owner"])


def test_two_takers_of_one_dead_lease_at_once_one_wins(store):
    leases.acquire(store, "renders/k2", ttl_s=10, now=1000.0)
    barrier = threading.Barrier(2)
    won: list = []

    class Together:  # both takers have read the dead lease before either goes on
        def __init__(self, inner):
            self.inner, self.url, self.reads = inner, inner.url, 0

        def read(self, key):
            data = self.inner.read(key)
            self.reads += 1
            if self.reads == 1:
                barrier.wait(timeout=30)
            return data

        def __getattr__(self, name):
            return getattr(self.inner, name)

    def take():
        won.append(leases.acquire(Together(store), "renders/k2", ttl_s=600))

    threads = [threading.Thread(target=take) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    holders = [lease for lease in won if lease is not None]
    assert len(won) == 2 and len(holders) == 1
    assert leases.holder(store, "renders/k2")["token"] == holders[0].token


def test_a_marker_left_by_a_dead_taker_lapses(store):
    leases.acquire(store, "renders/k3", ttl_s=10, now=1000.0)
    token = leases.holder(store, "renders/k3")["token"]
    store.write(f"leases/renders/k3.lease.takeover.{token}", canonical_json({"expires": 1010.0}))
    assert leases.acquire(store, "renders/k3", ttl_s=600) is None  # removes the lapsed marker
    assert leases.acquire(store, "renders/k3", ttl_s=600) is not None


class MissedCommit:
    """A store through which the first check for the commit object says absent: a writer
    that checked an instant before another writer committed."""

    def __init__(self, inner, commit_key: str):
        self.inner, self.url, self.commit_key, self.fooled = inner, inner.url, commit_key, False

    def exists(self, key):
        if key == self.commit_key and not self.fooled:
            self.fooled = True
            return False
        return self.inner.exists(key)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_late_writer_never_overwrites_a_published_render(store):
    cache = StoreRenderCache(store)
    key = cache.key("scene", CFG)
    cache.put(key, _image(1))  # machine A published
    late = StoreRenderCache(MissedCommit(store, f"{cache._prefix(key)}/meta.json"))
    late._publish(key, _image(2), None)  # machine B's slightly different render
    np.testing.assert_array_equal(cache.get(key), _image(1))  # A's entry is whole


def test_two_writers_of_one_render_never_serve_a_torn_entry(store):
    """Two machines publish different renders of one key at once: readers get one of them,
    whole, or nothing (then render again); never one image under the other's meta."""
    cache = StoreRenderCache(store)
    key = cache.key("scene", CFG)
    for round_ in range(5):
        barrier = threading.Barrier(2)

        def write(seed: int, barrier: threading.Barrier) -> None:
            barrier.wait(timeout=30)
            StoreRenderCache(store)._publish(key, _image(seed), None)

        threads = [threading.Thread(target=write, args=(s, barrier)) for s in (10 + round_, 20 + round_)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        got = cache.get(key)
        assert got is not None
        assert any(np.array_equal(got, _image(s)) for s in (10 + round_, 20 + round_))
        store.delete_entry(cache._prefix(key), ["image.png", "meta.json"], "meta.json")


def test_the_lease_holder_replaces_a_dead_writers_uncommitted_image(store):
    if not store.url.startswith("s3://"):
        pytest.skip("a local store publishes an entry with one rename: nothing is left uncommitted")
    cache = StoreRenderCache(store)
    key = cache.key("scene", CFG)
    prefix = cache._prefix(key)
    store.write(f"{prefix}/image.png", encode_png(_image(7)))  # died before its commit
    cache._publish(key, _image(1), None)  # no lease: another writer's files are left alone
    assert cache.get(key) is None
    assert cache.get_or_render(key, lambda: _image(1)) is not None  # under the lease
    np.testing.assert_array_equal(StoreRenderCache(store).get(key), _image(1))
