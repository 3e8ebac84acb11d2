"""Render cache: keys, verified reads, corruption recovery, and multi-process races."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.core.cacheseal import CacheCorruptionWarning
from harness.core.errors import RenderError
from harness.protocol.configurations import RenderConfig
from harness.render import settings
from harness.render.cache import RenderCache, decode_png, encode_png

CFG = RenderConfig(resolution_px=32, samples=2)
IDENT = "a" * 64


def _image(seed: int = 0, size: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (size, size, 4), dtype=np.uint8)


def test_key_is_stable_and_covers_every_input(monkeypatch):
    key = RenderCache.key(IDENT, CFG)
    assert key == RenderCache.key(IDENT, RenderConfig(resolution_px=32, samples=2))
    assert len(key) == 64
    others = {
        RenderCache.key("b" * 64, CFG),
        RenderCache.key(IDENT, replace(CFG, seed=1)),
        RenderCache.key(IDENT, replace(CFG, lighting="night")),
        RenderCache.key(IDENT, replace(CFG, denoise=True)),
        RenderCache.key(IDENT, CFG, device="gpu"),
    }
    monkeypatch.setattr(settings, "RENDERER_REVISION", "test-rev")
    import harness.render.cache as cache_mod

    monkeypatch.setattr(cache_mod, "RENDERER_REVISION", "test-rev")
    others.add(RenderCache.key(IDENT, CFG))
    monkeypatch.setattr(cache_mod, "blender_version", lambda: "9.9.9")
    others.add(RenderCache.key(IDENT, CFG))
    assert key not in others and len(others) == 7


def test_round_trip_and_layout(tmp_path):
    cache = RenderCache(tmp_path)
    key = cache.key(IDENT, CFG)
    assert cache.get(key) is None and not cache.contains(key)
    img = _image()
    out = cache.get_or_render(key, lambda: img, {"scene_id": "s"})
    np.testing.assert_array_equal(out, img)
    entry = tmp_path / "objects" / key[:2] / key
    assert sorted(p.name for p in entry.iterdir()) == ["image.png", "meta.json"]
    np.testing.assert_array_equal(cache.get(key), img)
    meta = cache.meta(key)
    assert meta["scene_id"] == "s" and meta["shape"] == [8, 8, 4] and meta["key"] == key
    assert not any((tmp_path / "tmp").iterdir())  # no temp dirs left behind


def test_png_is_deterministic():
    img = _image(3, 16)
    assert encode_png(img) == encode_png(img.copy())
    np.testing.assert_array_equal(decode_png(encode_png(img)), img)


def test_cache_hit_does_not_call_render(tmp_path):
    cache = RenderCache(tmp_path)
    key = cache.key(IDENT, CFG)
    cache.get_or_render(key, lambda: _image())

    def boom() -> np.ndarray:
        raise AssertionError("rendered twice")

    np.testing.assert_array_equal(cache.get_or_render(key, boom), _image())


@pytest.mark.parametrize("damage", ["truncate", "flip", "meta_garbage", "no_image", "wrong_shape"])
def test_corrupt_entry_is_discarded_and_rerendered(tmp_path, damage):
    cache = RenderCache(tmp_path)
    key = cache.key(IDENT, CFG)
    cache.get_or_render(key, lambda: _image(1))
    entry = cache.entry_dir(key)
    png = entry / "image.png"
    if damage == "truncate":
        png.write_bytes(png.read_bytes()[:40])
    elif damage == "flip":
        data = bytearray(png.read_bytes())
        data[len(data) // 2] ^= 0xFF
        png.write_bytes(bytes(data))
    elif damage == "meta_garbage":
        (entry / "meta.json").write_text("{not json", encoding="utf-8")
    elif damage == "no_image":
        png.unlink()
    else:  # a valid PNG of another shape with a matching sha: caught by the shape check
        import json

        from harness.core.hashing import canonical_json, sha256_bytes, sha256_json

        other = encode_png(_image(2, 4))
        png.write_bytes(other)
        meta = json.loads((entry / "meta.json").read_text())
        meta["png_sha256"] = sha256_bytes(other)
        del meta["meta_sha256"]
        meta["meta_sha256"] = sha256_json(meta)  # a consistent forgery: only the shape differs
        (entry / "meta.json").write_bytes(canonical_json(meta))
    with pytest.warns(CacheCorruptionWarning, match="shape" if damage == "wrong_shape" else ""):
        assert cache.get(key) is None
    assert not entry.exists()
    calls = []
    out = cache.get_or_render(key, lambda: calls.append(1) or _image(1))
    assert calls == [1]
    np.testing.assert_array_equal(out, _image(1))
    np.testing.assert_array_equal(cache.get(key), _image(1))


def test_failures_are_not_cached(tmp_path):
    cache = RenderCache(tmp_path)
    key = cache.key(IDENT, CFG)

    def fail() -> np.ndarray:
        raise RenderError("no")

    with pytest.raises(RenderError):
        cache.get_or_render(key, fail)
    assert cache.get(key) is None and not cache.contains(key)
    with pytest.raises(RenderError, match="expected an"):
        cache.get_or_render(key, lambda: np.zeros((4, 4, 3), np.uint8))
    assert not cache.contains(key)


def test_malformed_key_rejected(tmp_path):
    with pytest.raises(RenderError):
        RenderCache(tmp_path).entry_dir("../../etc")


# -- races between processes -----------------------------------------------------------------


def _race_worker(root: str, key: str, counter: str, barrier, out: str) -> None:
    cache = RenderCache(Path(root))

    def slow_render() -> np.ndarray:
        fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, b"x")
        os.close(fd)
        time.sleep(0.3)
        return _image(7, 32)

    barrier.wait()
    image = cache.get_or_render(key, slow_render)
    Path(out).write_bytes(image.tobytes())


def test_processes_racing_on_one_key_render_once(tmp_path):
    n = 4
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(n)
    key = RenderCache.key(IDENT, CFG)
    counter = tmp_path / "renders.count"
    procs = [
        ctx.Process(
            target=_race_worker,
            args=(str(tmp_path / "cache"), key, str(counter), barrier, str(tmp_path / f"out{i}")),
        )
        for i in range(n)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert counter.read_bytes() == b"x"  # exactly one render
    outs = {(tmp_path / f"out{i}").read_bytes() for i in range(n)}
    assert outs == {_image(7, 32).tobytes()}
    # the published entry holds the same bytes
    assert RenderCache(tmp_path / "cache").get(key).tobytes() in outs


def test_prune_tmp_removes_only_stale_dirs(tmp_path):
    cache = RenderCache(tmp_path)
    stale, fresh = tmp_path / "tmp" / "k.dead", tmp_path / "tmp" / "k.live"
    stale.mkdir(parents=True)
    fresh.mkdir()
    (stale / "image.png").write_bytes(b"half")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    assert cache.prune_tmp(3600) == 1
    assert not stale.exists() and fresh.exists()
