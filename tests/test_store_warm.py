"""``warm`` into a shared store with the local backend (Blender replaced by a fake renderer):
concurrent runs on one store render each key once (leases), a crash leaves a lease that a
later run takes over once it expires, and the backend switch dispatches."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from harness.backends import warm_on
from harness.protocol.profiles import get_profile
from harness.render import blender
from harness.render.cache_warmer import resolve_jobs
from harness.render.job_plan import render_plan
from harness.render.store_cache import StoreRenderCache
from harness.scenes.model import Room, Scene
from harness.store import leases, open_store


class SlowFake:
    """Stands in for Blender: a few ms per render, thread-safe call log."""

    device = "cpu"

    def __init__(self):
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def render(self, scene, scene_root, identity, cfg, *, timeout_s=None):
        time.sleep(0.02)
        with self.lock:
            self.calls.append(f"{identity}:{cfg.key}")
        return np.full((4, 4, 4), len(identity) % 256, np.uint8)


def _requests(tmp_path):
    profile = replace(get_profile("smoke"), probes=())
    scenes = [Scene(f"s{i}", "g", f"p{i}", "x", "t", Room((4.0, 4.0), 2.5), ()) for i in range(2)]
    requests, _ = resolve_jobs(render_plan(profile, scenes), scenes, tmp_path)
    return requests


def test_two_concurrent_local_warms_on_one_store_render_each_key_once(tmp_path, monkeypatch):
    fake = SlowFake()
    monkeypatch.setattr(blender, "get_renderer", lambda device="cpu": fake)
    requests = _requests(tmp_path)
    url = (tmp_path / "store").as_uri()
    results = {}
    barrier = threading.Barrier(2)

    def run(name):
        barrier.wait()
        results[name] = warm_on("local", requests, url)

    threads = [threading.Thread(target=run, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(fake.calls) == len(set(fake.calls)) == len(requests)  # no key rendered twice
    assert results["a"].failures == results["b"].failures == []
    a, b = results["a"], results["b"]
    assert a.rendered + b.rendered == len(requests)  # each run counts only its own renders
    assert a.rendered + a.cached == b.rendered + b.cached == len(requests)
    assert open_store(url).list("leases") == []


def test_a_dead_renderers_lease_blocks_until_it_expires(tmp_path, monkeypatch):
    fake = SlowFake()
    monkeypatch.setattr(blender, "get_renderer", lambda device="cpu": fake)
    requests = _requests(tmp_path)[:1]
    url = (tmp_path / "store").as_uri()
    store = open_store(url)
    cache = StoreRenderCache(store)
    key = cache.key(requests[0].identity, requests[0].cfg)
    leases.acquire(store, f"renders/{key}", ttl_s=1.0)  # a renderer that died holding it
    start = time.monotonic()
    result = warm_on("local", requests, url)
    assert result.rendered == 1 and len(fake.calls) == 1
    assert time.monotonic() - start >= 0.9  # waited for the expiry, then took it over


def test_an_unknown_backend_is_a_clear_error(tmp_path):
    from harness.backends.shared import BackendError

    with pytest.raises(BackendError, match="unknown backend 'dask'"):
        warm_on("dask", [], tmp_path)
