"""The measurement pipeline through the real Blender render service (slow: renders)."""

from __future__ import annotations

import pytest

from harness.measure.images import measure
from harness.measure.plan import build_plan
from harness.protocol.configurations import RenderConfig
from harness.protocol.profiles import Profile
from harness.render.renderer import default_renderer
from harness.scenes.scene_source import load_scene_set
from harness.testing import TinySpec

pytestmark = pytest.mark.slow


def test_bundled_scene_measured_through_blender(tmp_path):
    scenes = load_scene_set(None)
    one = scenes.select(1, [scenes.generators[0]])
    profile = Profile(
        name="render-check",
        description="one scene, two backgrounds, two pitches, one probe",
        c0=RenderConfig(resolution_px=196, samples=4),
        levels={"background": ("255", "red"), "pitch": ("0", "45")},
        prompts=1,
        generators=None,
        probes=("keep_half",),
        evaluators=(),
        bootstrap=0,
    )
    plan = build_plan(one, profile)
    renderer = default_renderer(tmp_path / "renders")
    frame = measure(TinySpec("tiny-grid"), plan, renderer, cache_dir=tmp_path)
    assert (frame["status"] == "ok").all(), frame[frame["status"] != "ok"]["error"].tolist()
    # baseline, pitch=0 and both backgrounds share the c0 render; pitch=45 and the probe add two
    assert len(plan.renders) == 3
    by = frame.set_index(["factor", "level"])["score"]
    assert by[("background", "255")] == by[("baseline", "c0")] == by[("pitch", "0")]
    assert by[("background", "red")] != by[("background", "255")]
