"""The Ray backend on a local Ray cluster (``ray.init(num_cpus=2)``), rendering a small part
of the smoke plan (one scene: c0, two other configs and a probe, at 48 px and 2 samples):

* renders byte-identical to the local backend's (same keys, same PNG bytes);
* a worker killed mid-run is replaced and its render retried, with the identical result;
* two concurrent ``warm`` runs on one store render every key exactly once between them;
* a render that hangs past its timeout has its actor killed and is reported; the rest
  completes, and a rerun renders the missing one;

and scoring on Ray (one actor per evaluator, tiny numpy evaluators and the box rasterizer)
stores exactly the scores the local backend stores.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from harness.protocol.profiles import get_profile
from harness.render.cache import RenderCache
from harness.render.cache_warmer import resolve_jobs, warm
from harness.render.job_plan import render_plan
from harness.render.scene_inputs import apply_probe, load_profile_scenes
from harness.render.store_cache import StoreRenderCache
from harness.store import open_store
from tests._distributed import need

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_cluster():
    ray = need("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def smoke_subset():
    """Render requests: the first smoke scene under c0, two more configs and one probe."""
    pytest.importorskip("bpy")
    profile = get_profile("smoke")
    sset = load_profile_scenes(profile)
    scene = sset.scenes[0]
    jobs = render_plan(profile, [scene])
    # resolution levels would all become 48 px: keep c0, two other configs and a probe
    same_res = [j for j in jobs if j.probe is None and j.cfg.resolution_px == profile.c0.resolution_px]
    jobs = [*same_res[:3], next(j for j in jobs if j.probe == "keep_half")]
    small = [replace(j, cfg=replace(j.cfg, resolution_px=48, samples=2)) for j in jobs]
    requests, failures = resolve_jobs(small, [scene], sset.root, probe_fn=apply_probe)
    assert failures == [] and len(requests) == 4
    assert len({(r.identity, r.cfg) for r in requests}) == 4
    return requests


@pytest.fixture(scope="module")
def local_pngs(smoke_subset, tmp_path_factory):
    """key -> image.png bytes rendered by the local backend (in this process)."""
    root = tmp_path_factory.mktemp("local") / "renders"
    result = warm(smoke_subset, root, jobs=1)
    assert (result.rendered, result.failures) == (len(smoke_subset), [])
    cache = RenderCache(root)
    keys = {cache.key(r.identity, r.cfg) for r in smoke_subset}
    return {k: (cache.entry_dir(k) / "image.png").read_bytes() for k in keys}


def _store_pngs(url: str) -> dict[str, bytes]:
    store = open_store(url)
    return {k.split("/")[-2]: store.read(k) for k in store.list("renders/objects")
            if k.endswith("/image.png")}  # fmt: skip


def test_ray_renders_are_byte_identical_to_the_local_backend(ray_cluster, smoke_subset, local_pngs,
                                                             tmp_path):  # fmt: skip
    from harness.backends.ray.render import warm_ray

    url = (tmp_path / "store").as_uri()
    ticks = []
    result = warm_ray(smoke_subset, url, actors=2, progress=ticks.append)
    assert (result.rendered, result.cached, result.failures, result.retries) == (4, 0, [], 0)
    assert sum(ticks) == 4
    assert _store_pngs(url) == local_pngs
    again = warm_ray(smoke_subset, url, actors=2)
    assert (again.rendered, again.cached) == (0, 4)
    for key in local_pngs:  # and every entry verifies
        assert StoreRenderCache(open_store(url)).get(key) is not None


def test_a_worker_killed_mid_run_is_retried_with_an_identical_result(ray_cluster, smoke_subset,
                                                                    local_pngs, tmp_path):  # fmt: skip
    from harness.backends.ray.render import warm_ray

    url = (tmp_path / "store").as_uri()
    marker = tmp_path / "killed-once"
    result = warm_ray(smoke_subset, url, actors=1, fault_marker=str(marker))
    assert marker.exists()  # a worker really died mid-render (after rendering, before publishing)
    assert (result.rendered, result.failures, result.retries) == (4, [], 1)
    assert _store_pngs(url) == local_pngs
    assert open_store(url).list("leases") == []  # the dead worker's lease was broken


def test_two_concurrent_warm_runs_on_one_store_make_no_duplicate_renders(ray_cluster, smoke_subset,
                                                                        local_pngs, tmp_path):  # fmt: skip
    from harness.backends.ray.render import warm_ray

    url = (tmp_path / "store").as_uri()
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def run(name: str) -> None:
        barrier.wait()
        results[name] = warm_ray(smoke_subset, url, actors=1)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    a, b = results["a"], results["b"]
    assert a.failures == [] and b.failures == []
    # every key rendered by exactly one run; the other found it published
    assert a.rendered + b.rendered == 4
    assert a.rendered + a.cached == 4 and b.rendered + b.cached == 4
    assert _store_pngs(url) == local_pngs


def test_scoring_on_ray_stores_the_scores_the_local_backend_stores(ray_cluster, tmp_path):
    from harness.commands.materialize import score_plan
    from harness.testing import TinySpec
    from tests._audit_project import tiny_session

    specs = [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)]

    def session(tag: str, store: str, fill: str = "local"):
        return tiny_session(tmp_path, specs, store=store, store_fill=fill,
                            cache_dir=tmp_path / f"cache-{tag}")  # fmt: skip

    ray_url, local_url = (tmp_path / "ray").as_uri(), (tmp_path / "local").as_uri()
    on_ray = score_plan(session("ray", ray_url), backend="ray", log=lambda _: None)
    on_local = score_plan(session("local", local_url), backend="local", log=lambda _: None)
    assert set(on_ray) == {"tiny-grid", "tiny-pairs"}
    for e in on_ray:
        assert on_ray[e].scored_pairs == on_local[e].scored_pairs > 0
    ray_store, local_store = open_store(ray_url), open_store(local_url)
    keys = ray_store.list("scores")
    assert keys and keys == local_store.list("scores")
    assert all(ray_store.read(k) == local_store.read(k) for k in keys)  # byte-identical segments
    again = score_plan(session("again", ray_url), backend="ray", log=lambda _: None)
    assert all(s.scored_pairs == 0 and not s.model_loaded for s in again.values())
    reader = session("read", ray_url, fill="none")  # pytest --audit-store reads them back
    assert reader.record_cache.records("tiny-grid").equals(session("read2", local_url, "none").record_cache.records("tiny-grid"))


def test_a_hung_render_times_out_its_actor_is_replaced_and_the_rest_completes(
        ray_cluster, smoke_subset, local_pngs, tmp_path):  # fmt: skip
    from harness.backends.ray.render import warm_ray

    url = (tmp_path / "store").as_uri()
    result = warm_ray(smoke_subset, url, actors=1, timeout_s=15, timeout_grace_s=0,
                      fault_marker=str(tmp_path / "hung-once"), fault_mode="hang")  # fmt: skip
    assert result.rendered == 3 and len(result.failures) == 1
    assert "render timed out after 15 s" in result.failures[0]
    stored = _store_pngs(url)
    assert len(stored) == 3 and all(local_pngs[k] == v for k, v in stored.items())
    assert open_store(url).list("leases") == []  # the killed actor's lease was broken
    again = warm_ray(smoke_subset, url, actors=1)  # a rerun renders the one that timed out
    assert (again.rendered, again.cached, again.failures) == (1, 3, [])
    assert _store_pngs(url) == local_pngs


def test_a_render_actor_starts_blender_before_it_gets_work(tmp_path):
    """Regression: the driver timed a render from when it was sent, and a fresh actor started
    Blender inside its first render, so on a loaded machine a replacement actor's first render
    timed out too (the hung-render test above failed so). ``RenderWorker.start`` (what the
    driver waits for before sending work) must leave Blender started. Run in a fresh process,
    where no renderer exists yet."""
    import subprocess
    import sys

    pytest.importorskip("bpy")
    from harness.core.paths import REPO_ROOT

    code = ("from harness.backends.ray.render import RenderWorker\n"
            "from harness.render import blender\n"
            f"w = RenderWorker({(tmp_path / 'store').as_uri()!r}, 60.0, 'cpu', 1)\n"
            "assert not blender._RENDERERS\n"
            "owner = w.start()\n"
            "assert blender._RENDERERS and owner == w.owner(), owner\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
