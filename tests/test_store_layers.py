"""Store wrappers (``harness.store.layers``): ReadOnlyStore and LayeredStore, by hand-written
cases and Hypothesis properties; the render and score caches on them (one class each, whatever
the store); and cache files written before the caches moved onto the Store protocol, read back
byte for byte."""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule

from harness.core.cacheseal import KEY_ENV, KEY_FILE_ENV, CacheCorruptionWarning, discarded_counts
from harness.evaluators.cache import ScoreCache
from harness.evaluators.score_store import StoreScoreCache, open_score_cache
from harness.protocol.configurations import RenderConfig
from harness.render.cache import RenderCache, RenderCacheBase
from harness.render.store_cache import StoreMissing, StoreRenderCache, open_render_cache
from harness.store import (
    LayeredStore,
    LocalStore,
    ReadOnlyStore,
    Store,
    StoreError,
    StoreReadOnly,
    open_store,
    writable,
)
from harness.store.stores import read_entry_files

CFG = RenderConfig(32, samples=1)


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)


class DictStore:
    """A store in a dict (for fast properties); counts every mutation it receives."""

    def __init__(self, name: str = "dict"):
        self.url = f"dict://{name}"
        self.data: dict[str, bytes] = {}
        self.mutations = 0

    @property
    def read_only(self) -> bool:
        return False

    def read(self, key: str) -> bytes | None:
        return self.data.get(key)

    def read_entry(self, prefix, names, commit):
        return read_entry_files(self, prefix, names, commit)

    def exists(self, key: str) -> bool:
        return key in self.data

    def write(self, key: str, data: bytes, *, if_absent: bool = False) -> bool:
        self.mutations += 1
        if if_absent and key in self.data:
            return False
        self.data[key] = data
        return True

    def delete(self, key: str) -> bool:
        self.mutations += 1
        return self.data.pop(key, None) is not None

    def list(self, prefix: str) -> list[str]:
        return sorted(k for k in self.data if k.startswith(prefix + "/"))

    def write_entry(self, prefix: str, files: Mapping[str, bytes], commit: str, *,
                    replace_uncommitted: bool = False) -> bool:  # fmt: skip
        self.mutations += 1
        if f"{prefix}/{commit}" in self.data:
            return False
        self.data.update({f"{prefix}/{n}": b for n, b in files.items()})
        return True

    def delete_entry(self, prefix: str, names: list[str], commit: str) -> None:
        self.mutations += 1
        for n in {commit, *names}:
            self.data.pop(f"{prefix}/{n}", None)

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        return 0


def _image(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (6, 5, 4), dtype=np.uint8)


# ------------------------------------------------------------------------ the protocol


def test_every_store_says_whether_it_is_read_only(tmp_path):
    local = open_store(tmp_path)
    assert isinstance(local, Store) and local.read_only is False
    assert open_store("memory://t3d/layers").read_only is False
    assert ReadOnlyStore(local).read_only is True
    assert LayeredStore(local, ReadOnlyStore(DictStore())).read_only is False
    assert LayeredStore(ReadOnlyStore(local), DictStore()).read_only is True
    for store in (ReadOnlyStore(local), LayeredStore(local, DictStore()), DictStore()):
        assert isinstance(store, Store)


# ------------------------------------------------------------------------ ReadOnlyStore


def test_read_only_store_reads_through_and_refuses_every_write(tmp_path):
    inner = LocalStore(tmp_path)
    inner.write("a/b.bin", b"one")
    inner.write_entry("e/1", {"image.png": b"png", "meta.json": b"{}"}, "meta.json")
    ro = ReadOnlyStore(inner)
    assert ro.url == inner.url and writable(ro) is inner and writable(inner) is inner
    assert ro.read("a/b.bin") == b"one" and ro.exists("a/b.bin") and not ro.exists("a/x")
    assert ro.list("a") == ["a/b.bin"]
    assert ro.read_entry("e/1", ["image.png", "meta.json"], "meta.json") == {
        "image.png": b"png", "meta.json": b"{}"}  # fmt: skip
    refused = [
        lambda: ro.write("a/b.bin", b"two"),
        lambda: ro.write("a/new", b"x", if_absent=True),
        lambda: ro.write_entry("e/2", {"meta.json": b"{}"}, "meta.json"),
        lambda: ro.delete("a/b.bin"),
        lambda: ro.delete_entry("e/1", ["image.png", "meta.json"], "meta.json"),
    ]
    for op in refused:
        with pytest.raises(StoreReadOnly, match="read-only store") as info:
            op()
        assert isinstance(info.value, StoreError)  # one family of store errors
    assert ro.prune_tmp(0) == 0
    assert inner.read("a/b.bin") == b"one" and inner.list("e") == ["e/1/image.png", "e/1/meta.json"]
    assert not inner.exists("a/new")


_key = st.sampled_from(["a", "a/b", "a/c", "b/x", "e/1/meta.json", "e/1/image.png"])
_op = st.one_of(
    st.tuples(st.just("write"), _key, st.binary(max_size=4), st.booleans()),
    st.tuples(st.just("delete"), _key),
    st.tuples(st.just("write_entry"), st.sampled_from(["e/1", "e/2"])),
    st.tuples(st.just("delete_entry"), st.sampled_from(["e/1", "e/2"])),
    st.tuples(st.just("read"), _key),
    st.tuples(st.just("list"), st.sampled_from(["a", "e", "e/1"])),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_key, st.binary(max_size=4), max_size=4), st.lists(_op, max_size=12))
def test_a_read_only_store_never_writes(initial, ops):
    inner = DictStore()
    inner.data.update(initial)
    before = dict(inner.data)
    ro = ReadOnlyStore(inner)
    for op in ops:
        if op[0] in ("read", "list"):
            assert getattr(ro, op[0])(op[1]) == getattr(inner, op[0])(op[1])
            continue
        with pytest.raises(StoreReadOnly):
            if op[0] == "write":
                ro.write(op[1], op[2], if_absent=op[3])
            elif op[0] == "delete":
                ro.delete(op[1])
            elif op[0] == "write_entry":
                ro.write_entry(op[1], {"meta.json": b"{}"}, "meta.json")
            else:
                ro.delete_entry(op[1], ["meta.json"], "meta.json")
    assert inner.mutations == 0 and inner.data == before


# ------------------------------------------------------------------------ LayeredStore


def test_layered_reads_local_first_then_shared_and_promotes_a_shared_hit():
    local, shared = DictStore("local"), DictStore("shared")
    shared.write("k", b"shared")
    shared.write("both", b"shared")
    local.write("both", b"local")
    layered = LayeredStore(local, shared)
    assert layered.read("both") == b"local"  # the local layer wins
    assert layered.read("k") == b"shared" and local.read("k") == b"shared"  # promoted
    assert layered.read("absent") is None and not layered.exists("absent")
    assert layered.list("") == [] and sorted(layered.list("x")) == []
    assert LayeredStore(DictStore(), shared, promote=False).read("k") == b"shared"


def test_layered_promotes_an_entry_whole_and_never_a_partial_one(tmp_path):
    shared = DictStore("shared")
    files = {"image.png": b"png", "meta.json": b"{}"}
    shared.write_entry("e/1", files, "meta.json")
    shared.write("e/2/meta.json", b"{}")  # damaged: no image.png
    local = LocalStore(tmp_path)
    layered = LayeredStore(local, shared)
    assert layered.read_entry("e/1", list(files), "meta.json") == files
    assert local.read_entry("e/1", list(files), "meta.json") == files  # one entry, renamed in
    assert layered.read_entry("e/2", list(files), "meta.json") == {"meta.json": b"{}"}
    assert not (tmp_path / "e" / "2").exists()  # a damaged entry is not copied


def test_layered_writes_go_local_unless_written_through():
    local, shared = DictStore("local"), DictStore("shared")
    layered = LayeredStore(local, shared)
    assert layered.write("k", b"v") and local.read("k") == b"v" and not shared.exists("k")
    through = LayeredStore(DictStore(), shared, write_through=True)
    assert through.write("k2", b"w") and shared.read("k2") == b"w"
    assert through.write_entry("e/1", {"a": b"1", "c": b"2"}, "c")
    assert shared.read_entry("e/1", ["a", "c"], "c") == {"a": b"1", "c": b"2"}
    assert not through.write_entry("e/1", {"a": b"x", "c": b"y"}, "c")  # exists: no overwrite
    with pytest.raises(StoreError, match="write through to the read-only store"):
        LayeredStore(DictStore(), ReadOnlyStore(shared), write_through=True)


def test_layered_create_only_writes_see_the_shared_layer():
    local, shared = DictStore("local"), DictStore("shared")
    shared.write("lease", b"theirs")
    layered = LayeredStore(local, shared, promote=False)
    assert not layered.write("lease", b"mine", if_absent=True)
    assert layered.read("lease") == b"theirs" and not local.exists("lease")


def test_layered_delete_hides_what_it_may_not_delete():
    local, shared = DictStore("local"), ReadOnlyStore(DictStore("shared"))
    shared.inner.write("k", b"v")
    layered = LayeredStore(local, shared)  # promotes: "k" is copied into local on read
    assert layered.read("k") == b"v" and local.exists("k")
    assert layered.delete("k")
    assert layered.read("k") is None and not layered.exists("k") and layered.list("") == []
    assert shared.read("k") == b"v"  # the shared store is untouched
    layered.write("k", b"new")
    assert layered.read("k") == b"new"
    through = LayeredStore(DictStore(), shared.inner, write_through=True)
    assert through.delete("k") and not shared.exists("k")


class LayeredIsAMapping(RuleBasedStateMachine):
    """Whatever the layers hold to start with, a LayeredStore reads back what was written
    through it, and what was deleted through it is gone: a dict, for ``read``/``exists``/
    ``list`` after ``write``/``delete``/``write_entry``/``delete_entry``."""

    keys = Bundle("keys")

    @initialize(
        shared=st.dictionaries(st.sampled_from(["p/a", "p/b", "q/c"]), st.binary(max_size=3), max_size=3),
        local=st.dictionaries(st.sampled_from(["p/a", "q/d"]), st.binary(max_size=3), max_size=2),
        write_through=st.booleans(),
        promote=st.booleans(),
        read_only_shared=st.booleans(),
    )
    def setup(self, shared, local, write_through, promote, read_only_shared):
        self.local, self.shared = DictStore("local"), DictStore("shared")
        self.shared.data.update(shared)
        self.local.data.update(local)
        self.shared_before = dict(shared)
        self.read_only_shared = read_only_shared and not write_through
        lower = ReadOnlyStore(self.shared) if self.read_only_shared else self.shared
        self.store = LayeredStore(self.local, lower, write_through=write_through, promote=promote)
        self.model = {**shared, **local}

    @rule(target=keys, key=st.sampled_from(["p/a", "p/b", "q/c", "q/d", "p/e"]))
    def key(self, key):
        return key

    @rule(key=keys, data=st.binary(max_size=3), if_absent=st.booleans())
    def write(self, key, data, if_absent):
        wrote = self.store.write(key, data, if_absent=if_absent)
        assert wrote == (not if_absent or key not in self.model)
        if wrote:
            self.model[key] = data

    @rule(key=keys)
    def delete(self, key):
        self.store.delete(key)
        self.model.pop(key, None)

    @rule(prefix=st.sampled_from(["r/1", "r/2"]), data=st.binary(max_size=3))
    def write_entry(self, prefix, data):
        files = {"img": data, "meta": b"m" + data}
        wrote = self.store.write_entry(prefix, files, "meta")
        assert wrote == (f"{prefix}/meta" not in self.model)
        if wrote:
            self.model.update({f"{prefix}/{n}": b for n, b in files.items()})

    @rule(prefix=st.sampled_from(["r/1", "r/2"]))
    def delete_entry(self, prefix):
        self.store.delete_entry(prefix, ["img", "meta"], "meta")
        for n in ("img", "meta"):
            self.model.pop(f"{prefix}/{n}", None)

    @rule(key=keys)
    def read(self, key):
        assert self.store.read(key) == self.model.get(key)
        assert self.store.exists(key) == (key in self.model)

    @rule(prefix=st.sampled_from(["r/1", "r/2"]))
    def read_entry(self, prefix):
        got = self.store.read_entry(prefix, ["img", "meta"], "meta")
        if f"{prefix}/meta" not in self.model:
            assert got is None
        else:
            assert got == {n: self.model[f"{prefix}/{n}"] for n in ("img", "meta")}

    @invariant()
    def listing_is_the_models(self):
        if hasattr(self, "store"):  # before setup ran
            for prefix in ("p", "q", "r"):
                assert self.store.list(prefix) == sorted(k for k in self.model if k.startswith(prefix + "/"))
            if self.read_only_shared:
                assert self.shared.data == self.shared_before and self.shared.mutations == 0


LayeredIsAMapping.TestCase.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
test_layered_store_behaves_like_a_dict = LayeredIsAMapping.TestCase


# ------------------------------------------------------------------------ caches on them


def test_one_render_cache_class_for_local_shared_and_layered(tmp_path):
    shared = LocalStore(tmp_path / "shared")
    key = RenderCacheBase.key("scene", CFG)
    StoreRenderCache(shared).put(key, _image(1), {"scene_id": "s"})
    local_dir = tmp_path / "local"
    layered = open_render_cache(shared.url, local=local_dir)
    assert type(layered) is StoreRenderCache and isinstance(layered.store, LayeredStore)
    assert isinstance(RenderCache(tmp_path / "r"), RenderCacheBase)
    np.testing.assert_array_equal(layered.get(key), _image(1))
    # the shared hit was copied, whole, into the local layer (the same layout)
    np.testing.assert_array_equal(StoreRenderCache(LocalStore(local_dir)).get(key), _image(1))
    other = RenderCacheBase.key("scene-2", CFG)
    np.testing.assert_array_equal(layered.get_or_render(other, lambda: _image(2)), _image(2))
    np.testing.assert_array_equal(StoreRenderCache(shared).get(other), _image(2))  # written through
    assert shared.list("leases") == []


def test_a_layered_render_cache_over_a_read_only_store_renders_locally(tmp_path):
    shared = LocalStore(tmp_path / "shared")
    cache = open_render_cache(shared.url, local=tmp_path / "local", read_only=True)
    assert not cache.read_only  # the local layer takes the renders
    key = cache.key("scene", CFG)
    np.testing.assert_array_equal(cache.get_or_render(key, lambda: _image(3)), _image(3))
    assert shared.list("renders") == [] and shared.list("leases") == []
    np.testing.assert_array_equal(RenderCache(tmp_path / "local" / "renders").get(key), _image(3))


def test_a_read_only_render_cache_reports_a_damaged_entry_and_leaves_it(tmp_path):
    store = LocalStore(tmp_path)
    key = RenderCacheBase.key("scene", CFG)
    StoreRenderCache(store).put(key, _image(4))
    png = f"renders/objects/{key[:2]}/{key}/image.png"
    store.write(png, store.read(png)[:-4])
    reader = StoreRenderCache(store, read_only=True)
    before = discarded_counts().get("render", 0)
    with (pytest.warns(CacheCorruptionWarning, match="left in the read-only store"),
          pytest.raises(StoreMissing, match="not in the store")):  # fmt: skip
        reader.get_or_render(key, lambda: pytest.fail("a reader must not render"))
    assert discarded_counts().get("render", 0) == before + 1
    assert reader.missing == {key} and store.exists(png)  # left for a writer to replace
    writer = StoreRenderCache(store)
    with pytest.warns(CacheCorruptionWarning):
        np.testing.assert_array_equal(writer.get_or_render(key, lambda: _image(4)), _image(4))


def test_the_read_only_switch_wraps_and_unwraps_the_store(tmp_path):
    cache = open_render_cache(tmp_path.as_uri(), read_only=True)
    assert cache.read_only and isinstance(cache.store, ReadOnlyStore)
    cache.read_only = False  # what the session does for --audit-store-fill=local
    assert not cache.read_only and isinstance(cache.store, LocalStore)
    key = cache.key("s", CFG)
    cache.put(key, _image(5))
    cache.read_only = True
    np.testing.assert_array_equal(cache.get(key), _image(5))
    with pytest.raises(StoreReadOnly):
        cache.put(cache.key("t", CFG), _image(6))


def test_one_score_cache_class_for_local_shared_and_layered(tmp_path):
    shared = LocalStore(tmp_path / "shared")
    StoreScoreCache(shared).put("idh", "ab" * 32, {"a cat": 0.25})
    layered = open_score_cache(shared.url, local=tmp_path / "local")
    assert isinstance(layered, ScoreCache) and isinstance(layered.store, LayeredStore)
    assert layered.get("idh", "ab" * 32, ["a cat"]) == {"a cat": 0.25}
    assert ScoreCache(tmp_path / "local").get("idh", "ab" * 32, ["a cat"]) == {"a cat": 0.25}
    layered.put("idh", "cd" * 32, {"x": 1.0})
    assert StoreScoreCache(shared).get("idh", "cd" * 32, ["x"]) == {"x": 1.0}  # written through
    ro = open_score_cache(shared.url, read_only=True)
    assert ro.read_only
    with pytest.raises(StoreReadOnly, match="read-only score store"):
        ro.put("idh", "ef" * 32, {"y": 2.0})
    local_only = open_score_cache(shared.url, local=tmp_path / "l2", read_only=True)
    local_only.put("idh", "ef" * 32, {"y": 2.0})
    assert StoreScoreCache(shared).get("idh", "ef" * 32, ["y"]) == {}
    assert local_only.get("idh", "ef" * 32, ["y"]) == {"y": 2.0}


def test_a_read_only_score_cache_leaves_a_damaged_segment(tmp_path):
    store = LocalStore(tmp_path)
    [name] = [StoreScoreCache(store).put("idh", "ab" * 32, {"x": 1.0})]
    store.write(name, store.read(name)[:-2])
    with pytest.warns(CacheCorruptionWarning, match="left in the read-only store"):
        assert StoreScoreCache(store, read_only=True).get("idh", "ab" * 32, ["x"]) == {}
    assert store.exists(name)
    with pytest.warns(CacheCorruptionWarning):
        assert StoreScoreCache(store).get("idh", "ab" * 32, ["x"]) == {}
    assert not store.exists(name)


def test_local_store_replaces_an_entry_directory_without_its_commit_file(tmp_path):
    cache = RenderCache(tmp_path)
    key = cache.key("scene", CFG)
    cache.entry_dir(key).mkdir(parents=True)
    (cache.entry_dir(key) / "image.png").write_bytes(b"left by a hand edit")
    assert not cache.contains(key) and cache.get(key) is None
    np.testing.assert_array_equal(cache.get_or_render(key, lambda: _image(7)), _image(7))
    np.testing.assert_array_equal(RenderCache(tmp_path).get(key), _image(7))


# ------------------------------------------------------------------------ existing caches

# Written by the caches before they moved onto the Store protocol (commit c1f7654), no secret.
OLD_KEY = "0123456789abcdef" * 4
OLD_IMAGE = (np.arange(24, dtype=np.uint8).reshape(2, 3, 4) * 7)
OLD_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAYAAACddGYaAAAAFklEQVR4XmNkYOcTlYEClpCQkBAYBwAlKANAGPPb1wAAAABJRU5ErkJggg=="
)
OLD_META = (
    b'{"key":"' + OLD_KEY.encode() + b'","meta_sha256":"1e14da3f6959d077c433cd0b7e435c0fad3dc00be795ea4355dfa9ba6ff47df2",'
    b'"png_sha256":"6d1e61bd19f99787af085ae7edd3b6e79a7305054c0b4bf176fdc916524e79f2","scene_id":"s","shape":[2,3,4]}'
)
OLD_SHA = "ab" * 32
OLD_SEGMENT_NAME = "aebbca28d17a742ea33291753d465001fe41acf801fc3955b7cb4cc31a258ae6.json"
OLD_SEGMENT = (
    b'{"format":"t3d-audit-cache/1","key":"scores/idh/' + OLD_SHA.encode() + b'",'
    b'"sha256":"aebbca28d17a742ea33291753d465001fe41acf801fc3955b7cb4cc31a258ae6","size":34}\n'
    b'{"a cat":0.25,"a dog":[0.5,"m-1"]}'
)


def _old_cache(root: Path) -> None:
    entry = root / "renders" / "objects" / OLD_KEY[:2] / OLD_KEY
    entry.mkdir(parents=True)
    (entry / "image.png").write_bytes(OLD_PNG)
    (entry / "meta.json").write_bytes(OLD_META)
    seg = root / "scores" / "idh" / OLD_SHA[:2] / OLD_SHA
    seg.mkdir(parents=True)
    (seg / OLD_SEGMENT_NAME).write_bytes(OLD_SEGMENT)


@pytest.mark.parametrize("how", ["local", "store", "layered"])
def test_existing_cache_files_are_read_back(tmp_path, how):
    _old_cache(tmp_path / "cache")
    if how == "local":
        renders, scores = RenderCache(tmp_path / "cache" / "renders"), ScoreCache(tmp_path / "cache")
    elif how == "store":
        renders = open_render_cache((tmp_path / "cache").as_uri(), read_only=True)
        scores = open_score_cache((tmp_path / "cache").as_uri(), read_only=True)
    else:
        renders = open_render_cache((tmp_path / "cache").as_uri(), local=tmp_path / "near")
        scores = open_score_cache((tmp_path / "cache").as_uri(), local=tmp_path / "near")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheCorruptionWarning)
        np.testing.assert_array_equal(renders.get(OLD_KEY), OLD_IMAGE)
        assert renders.meta(OLD_KEY)["scene_id"] == "s"
        assert scores.get_entries("idh", OLD_SHA, ["a cat", "a dog"]) == {
            "a cat": (0.25, ""), "a dog": (0.5, "m-1")}  # fmt: skip


@pytest.mark.parametrize("how", ["local", "store"])
def test_new_entries_have_the_old_bytes_and_paths(tmp_path, how):
    root = tmp_path / "cache"
    if how == "local":
        RenderCache(root / "renders").put(OLD_KEY, OLD_IMAGE, {"scene_id": "s"})
        where = ScoreCache(root).put("idh", OLD_SHA, {"a cat": 0.25, "a dog": 0.5}, {"a dog": "m-1"})
        assert where == root / "scores" / "idh" / OLD_SHA[:2] / OLD_SHA / OLD_SEGMENT_NAME
    else:
        StoreRenderCache(LocalStore(root)).put(OLD_KEY, OLD_IMAGE, {"scene_id": "s"})
        where = StoreScoreCache(LocalStore(root)).put("idh", OLD_SHA, {"a cat": 0.25, "a dog": 0.5},
                                                      {"a dog": "m-1"})  # fmt: skip
        assert where == f"scores/idh/{OLD_SHA[:2]}/{OLD_SHA}/{OLD_SEGMENT_NAME}"
    entry = root / "renders" / "objects" / OLD_KEY[:2] / OLD_KEY
    assert (entry / "image.png").read_bytes() == OLD_PNG
    assert (entry / "meta.json").read_bytes() == OLD_META
    assert (root / "scores" / "idh" / OLD_SHA[:2] / OLD_SHA / OLD_SEGMENT_NAME).read_bytes() == OLD_SEGMENT
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert [f for f in files if not f.startswith("renders/locks/")] == [
        f"renders/objects/{OLD_KEY[:2]}/{OLD_KEY}/image.png",
        f"renders/objects/{OLD_KEY[:2]}/{OLD_KEY}/meta.json",
        f"scores/idh/{OLD_SHA[:2]}/{OLD_SHA}/{OLD_SEGMENT_NAME}",
    ]
    assert json.loads(OLD_META)["key"] == OLD_KEY
