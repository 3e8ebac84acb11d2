"""Render plan: distinct (scene, render config) pairs; background/caption/default levels merged."""

from __future__ import annotations

from dataclasses import replace

from harness.protocol.profiles import get_profile
from harness.render.job_plan import RenderJob, per_scene_counts, plan_summary, render_plan
from harness.scenes.model import Room, Scene


def _scene(i: int) -> Scene:
    return Scene(f"s{i}", "g", f"p{i}", "x", "t", Room((4.0, 4.0), 2.5), ())


def test_paper_profile_is_39_per_scene():
    # 1 c0 + 8 resolution + 6 focal + 7 lighting + 6 pitch + 7 yaw + 4 probes = 39: a count of
    # 40 counts yaw=0 (at 45° pitch) separately, but it is the same render as pitch=45
    profile = get_profile("paper")
    jobs = render_plan(profile, [_scene(0), _scene(1)])
    assert per_scene_counts(jobs) == {"s0": 39, "s1": 39}
    s0 = [j for j in jobs if j.scene_id == "s0"]
    assert s0[0] == RenderJob("s0", profile.c0)
    cfgs = [j.cfg for j in s0 if j.probe is None]
    assert len(set(cfgs)) == 35 == len(cfgs)
    assert sum(1 for c in cfgs if c.pitch_deg == 45 and c.yaw_deg == 0) == 1
    assert [j.probe for j in s0 if j.probe] == list(profile.probes)
    assert all(j.cfg == profile.c0 for j in s0 if j.probe)


def test_default_and_smoke_counts():
    # default: c0 224 px; resolutions 196/256 new; 6 focal, 7 lighting, 6 pitch, 7 yaw
    assert len(render_plan(get_profile("default"), [_scene(0)])) == 1 + 2 + 6 + 7 + 6 + 7 + 4
    # smoke: 196/256, 35/85, night/studio, pitch 45/90, yaw 0@45 (= pitch 45) and 180
    assert len(render_plan(get_profile("smoke"), [_scene(0)])) == 1 + 2 + 2 + 2 + 2 + 1 + 4


def test_background_levels_never_render():
    profile = get_profile("paper")
    cfgs = {j.cfg for j in render_plan(profile, [_scene(0)])}
    bg_renders = {c.render for c in profile.configurations() if c.factor == "background"}
    assert bg_renders == {profile.c0} and profile.c0 in cfgs


def test_probe_fn_can_drop_probes_and_duplicates_merge():
    profile = get_profile("smoke")
    jobs = render_plan(profile, [_scene(0)], lambda s, p: None if p == "keep_half" else s)
    assert [j.probe for j in jobs if j.probe] == ["biggest_only", "scrambled", "worst_objects"]
    twice = render_plan(profile, [_scene(0), _scene(0)])
    assert len(twice) == len(render_plan(profile, [_scene(0)]))


def test_summary():
    profile = replace(get_profile("smoke"), probes=())
    jobs = render_plan(profile, [_scene(0), _scene(1)])
    summary = plan_summary(profile, jobs)
    assert summary["renders"] == 20 and summary["scenes"] == 2 and summary["configs_per_scene"] == 10


def test_profile_configuration_of_any_level():
    import pytest

    from harness.core.errors import ProtocolError

    profile = get_profile("smoke")  # selects only yaw 0/180, but any Table 11 level works
    yaw = profile.configuration("yaw", "90")
    assert (yaw.render.pitch_deg, yaw.render.yaw_deg, yaw.id) == (45.0, 90.0, "yaw=90")
    assert profile.configuration("baseline", "c0").render == profile.c0
    assert profile.configuration("background", "red").render == profile.c0
    with pytest.raises(ProtocolError):
        profile.configuration("yaw", "10")
