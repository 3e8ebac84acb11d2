"""``warm``: resumable after a crash (nothing rendered twice), scene-grouped, failures collected."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

from harness.protocol.profiles import get_profile
from harness.render import blender
from harness.render.cache import RenderCache
from harness.render.cache_warmer import pending, resolve_jobs, warm
from harness.render.failures import NothingVisible
from harness.render.job_plan import render_plan
from harness.scenes.model import Room, Scene


class FakeRenderer:
    """Stands in for Blender: records calls, can crash after ``crash_after`` renders."""

    device = "cpu"

    def __init__(self, crash_after: int | None = None, fail_ids: tuple[str, ...] = ()):
        self.calls: list[tuple[str, object]] = []
        self.crash_after = crash_after
        self.fail_ids = fail_ids

    def render(self, scene, scene_root, identity, cfg, *, timeout_s=None):
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt
        self.calls.append((identity, cfg))
        if scene.id in self.fail_ids:
            raise NothingVisible("empty", scene_id=scene.id, cfg=cfg)
        return np.full((4, 4, 4), len(self.calls) % 256, np.uint8)


def _requests(tmp_path):
    profile = replace(get_profile("smoke"), probes=("keep_half",))
    scenes = [Scene(f"s{i}", "g", f"p{i}", "x", "t", Room((4.0, 4.0), 2.5), ()) for i in range(3)]
    jobs = render_plan(profile, scenes)
    probe = lambda s, p: s.with_objects((), id_suffix=p)  # noqa: E731
    requests, failures = resolve_jobs(jobs, scenes, tmp_path, probe_fn=probe)
    assert failures == []
    return requests


def test_crash_then_resume_renders_each_job_once(tmp_path, monkeypatch):
    requests = _requests(tmp_path)
    assert len(requests) == 3 * 11
    cache_root = tmp_path / "renders"
    first = FakeRenderer(crash_after=7)
    monkeypatch.setattr(blender, "get_renderer", lambda device="cpu": first)
    with pytest.raises(KeyboardInterrupt):
        warm(requests, cache_root)
    assert len(first.calls) == 7
    assert len(pending(requests, RenderCache(cache_root))) == len(requests) - 7

    second = FakeRenderer()
    monkeypatch.setattr(blender, "get_renderer", lambda device="cpu": second)
    ticks = []
    result = warm(requests, cache_root, progress=ticks.append)
    assert result.cached == 7 and result.rendered == len(requests) - 7 and not result.failures
    assert len(ticks) == len(requests) - 7
    done = {(i, c) for i, c in first.calls} | {(i, c) for i, c in second.calls}
    assert len(done) == len(first.calls) + len(second.calls) == len(requests)
    # scene-grouped: each identity's renders are contiguous
    idents = [i for i, _ in second.calls]
    assert sum(1 for a, b in pairwise(idents) if a != b) == len(set(idents)) - 1

    third = FakeRenderer()
    monkeypatch.setattr(blender, "get_renderer", lambda device="cpu": third)
    again = warm(requests, cache_root)
    assert third.calls == [] and again.cached == len(requests) and again.rendered == 0


def test_failures_are_collected_not_cached(tmp_path, monkeypatch):
    requests = _requests(tmp_path)
    fake = FakeRenderer(fail_ids=("s1",))
    monkeypatch.setattr(blender, "get_renderer", lambda device="cpu": fake)
    result = warm(requests, tmp_path / "renders")
    assert len(result.failures) == 10 and all("scene s1" in f for f in result.failures)
    assert result.rendered == len(requests) - 10
    assert len(pending(requests, RenderCache(tmp_path / "renders"))) == 10


def test_probe_that_cannot_apply_is_a_failure_not_a_crash(tmp_path):
    from harness.core.errors import SceneError

    profile = replace(get_profile("smoke"), probes=("keep_half", "worst_objects"))
    scenes = [Scene("s0", "g", "p0", "x", "t", Room((4.0, 4.0), 2.5), ())]

    def probe(scene, name):
        if name == "worst_objects":
            raise SceneError("no candidates")
        return scene.with_objects((), id_suffix=name)

    requests, failures = resolve_jobs(render_plan(profile, scenes), scenes, tmp_path, probe_fn=probe)
    assert len(requests) == 11 and len(failures) == 1
    assert "probe worst_objects failed" in failures[0] and "no candidates" in failures[0]


@pytest.mark.slow
def test_warm_in_worker_processes_with_blender(tmp_path):
    pytest.importorskip("bpy")
    from harness.protocol.configurations import RenderConfig
    from harness.render.service import RenderRequest
    from harness.scenes.model import scene_identity
    from tests._render_helpers import box_scene, write_box_assets

    write_box_assets(tmp_path)
    requests = []
    for sid in ("test.w1", "test.w2"):
        scene = box_scene(sid)
        ident = scene_identity(scene, tmp_path)
        for cfg in (RenderConfig(32, samples=1), RenderConfig(32, samples=1, yaw_deg=90.0)):
            requests.append(RenderRequest(scene, tmp_path, ident, cfg))
    ticks, starts = [], []
    result = warm(requests, tmp_path / "renders", jobs=2, progress=ticks.append,
                  on_start=lambda c, t: starts.append((c, t)))
    assert (result.rendered, result.cached, result.failures) == (4, 0, [])
    assert starts == [(0, 4)] and sum(ticks) == 4
    again = warm(requests, tmp_path / "renders", jobs=2)
    assert (again.rendered, again.cached) == (0, 4)
