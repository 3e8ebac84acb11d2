"""``t3d-audit warm`` renders exactly the renders the audit measures: none for a factor that
cannot change a scene (lighting on 3D Gaussian splats) and none, nor a failure, for a probe
that does not apply to an object scene (Blender replaced by a recorder)."""

from __future__ import annotations

from types import SimpleNamespace

from harness.cli import main
from harness.measure.plan import build_plan
from harness.protocol.profiles import get_profile
from harness.render.scene_inputs import load_profile_scenes
from tests._splat_scenes import splat_set


def test_warm_renders_what_the_audit_measures_and_nothing_else(tmp_path, monkeypatch, capsys):
    scenes = splat_set(tmp_path)  # gen-mesh and gen-gs (splats), 2 prompts, single objects
    capsys.readouterr()
    asked = []

    def record(backend, requests, location, **kw):
        asked.extend(requests)
        kw["on_start"](0, len(requests))
        return SimpleNamespace(failures=[], rendered=len(requests), cached=0, retries=0)

    monkeypatch.setattr("harness.backends.warm_on", record)
    code = main(["warm", "--profile", "smoke", "--scenes", str(scenes), "--cache-dir", str(tmp_path / "c")])
    out = capsys.readouterr()
    assert code == 0, out.err  # not-applicable probes are no failures
    profile = get_profile("smoke")
    sset = load_profile_scenes(profile, scenes)
    plan = build_plan(sset, profile.for_scene_kind(sset.kind))
    used = {(plan.scenes[k].identity, cfg) for k, cfg in plan.renders}
    got = [(r.identity, r.cfg) for r in asked]
    assert len(got) == len(set(got)) and set(got) == used
    # by hand: the smoke profile's 11 render configs of an object scene (c0 and the other
    # levels), minus the two lighting levels other than c0's for each of the 2 splat scenes;
    # no probe applies to a single object
    assert len(got) == 4 * 11 - 2 * 2
    lit = {r.cfg.lighting for r in asked if r.scene.generator == "gen-gs"}
    assert lit == {profile.c0.lighting}
    assert "render plan: 40 renders for 4 scenes" in out.out and "failed" not in out.err


def test_warm_under_a_preset_renders_the_presentation_probes_too(tmp_path, monkeypatch, capsys):
    # regression: the probes of an audit under a preset rendered after the warm step, at the
    # preset's own size, for most of the audit's time
    from harness.peers.measure import preset_plan
    from harness.peers.presentation_probes import PROBES
    from harness.protocol.presets import get_preset

    asked = []

    def record(backend, requests, location, **kw):
        asked.extend(requests)
        kw["on_start"](0, len(requests))
        return SimpleNamespace(failures=[], rendered=len(requests), cached=0, retries=0)

    monkeypatch.setattr("harness.backends.warm_on", record)
    code = main(["warm", "--profile", "smoke", "--cache-dir", str(tmp_path / "c"), "--view-policy", "preset:3dcodebench"])
    out = capsys.readouterr()
    assert code == 0, out.err
    profile = get_profile("smoke")
    sset = load_profile_scenes(profile, None)
    plan = build_plan(sset, profile.for_scene_kind(sset.kind), view_policy="preset:3dcodebench")
    planned = {(plan.scenes[k].identity, cfg) for k, cfg in plan.renders}
    probes = set()
    for probe in PROBES:
        for protocol in probe.protocols(get_preset("3dcodebench")):
            for row in preset_plan(sset, protocol, None).rows:
                probes |= {(sset.identity(v.scene), v.render) for v in row.image.view_keys()}
    got = [(r.identity, r.cfg) for r in asked]
    assert len(got) == len(set(got)) and set(got) == planned | probes
    # by hand: 12 scenes x 4 views at 512 px x 16 samples for the preset itself, its
    # untextured, normal-map and point presentations (the tiled grid reuses the views)
    extra = set(got) - planned
    assert len(extra) == 12 * 4 * 4 and {(c.resolution_px, c.samples) for _, c in extra} == {(512, 16)}
    assert f"render plan: {len(planned) + 192} renders for 12 scenes" in out.out
    assert "192 of them for the presentation probes under preset:3dcodebench" in out.out
