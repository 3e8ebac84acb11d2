"""Scoring under protocol presets goes through the audit's measurement pipeline
(``harness.measure.images.measure_images``): one call per preset, one model for all presets,
rows identical to scoring each preset image by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from harness.protocol.presets import get_preset
from harness.testing import BoxRasterizer, TinySpec, write_tiny_scene_set


@pytest.fixture
def tiny_set(tmp_path):
    from harness.scenes.scene_source import load_scene_set

    return load_scene_set(write_tiny_scene_set(tmp_path / "set", generators=("g1", "g2"), prompts=("p01",)))


def test_presets_are_measured_by_the_pipeline_with_one_model(tiny_set, tmp_path, monkeypatch):
    import harness.peers.measure as peers

    calls: list[str] = []
    real = peers.measure_images

    def counted(spec, plan, renderer, **kwargs):
        calls.append(plan.view_policy)
        return real(spec, plan, renderer, **kwargs)

    monkeypatch.setattr(peers, "measure_images", counted)
    builds: list[str] = []
    closes: list[str] = []

    def load(spec):
        builds.append(spec.id)
        model = spec.build()
        model.close = lambda: closes.append(spec.id)
        return model

    mate = get_preset("mate3d").scaled(max_views=2, resolution_px=64, samples=1)
    best = replace(mate, name="mate3d-max", aggregation="max")  # not a registered preset
    table = peers.score_protocols(TinySpec("tiny", grid=False), tiny_set, [mate, best], template="-.-.-.-.-",
                                  cache_dir=tmp_path / "cache", renderer=BoxRasterizer(), load_evaluator=load)
    assert calls == [f"preset:{mate.name}", "preset:mate3d-max"]
    assert builds == ["tiny"] and closes == ["tiny"]
    assert list(table["preset"]) == [mate.name, mate.name, "mate3d-max", "mate3d-max"]
    assert list(table["status"]) == ["ok"] * 4
    # by hand: each view composited on the preset's background, scored, then mean / max
    from harness.captions import realize
    from harness.protocol.configurations import background_rgb
    from harness.render.composite import composite

    model = TinySpec("tiny", grid=False).build()
    for preset, row in zip([mate, mate, best, best], table.itertuples(), strict=True):
        scene = next(s for s in tiny_set.scenes if s.id == row.scene_id)
        images = [composite(BoxRasterizer().render(scene, tiny_set.root, "", cfg), background_rgb(preset.background))
                  for cfg in preset.render_configs("shaded")]
        values = [r.score for r in model.score(images, [realize("-.-.-.-.-", scene.prompt)] * len(images))]
        assert math.isclose(row.score, preset.reduce(values), rel_tol=0, abs_tol=1e-12)


def test_a_render_failure_fails_the_scene_with_its_reason(tiny_set, tmp_path):
    from harness.core.errors import RenderError
    from harness.peers.measure import score_protocols

    class Broken(BoxRasterizer):
        def render(self, scene, scene_root, identity, cfg):
            if scene.generator == "g2":
                raise RenderError("no GPU")
            return super().render(scene, scene_root, identity, cfg)

    mate = get_preset("mate3d").scaled(max_views=2, resolution_px=64, samples=1)
    table = score_protocols(TinySpec("tiny"), tiny_set, [mate], template="-.-.-.-.-",
                            cache_dir=tmp_path / "cache", renderer=Broken())
    by_generator = {g: (s, e) for g, s, e in zip(table["generator"], table["status"], table["error"], strict=True)}
    assert by_generator["g1"] == ("ok", "")
    assert by_generator["g2"] == ("failed", "render failed: no GPU")
    assert math.isnan(table.loc[table["generator"] == "g2", "score"].iloc[0])


def test_scene_images_renders_a_preset_without_a_caption_template(tiny_set):
    """``scene_images`` only renders: it needs no caption template, so it must not realize one."""
    from harness.peers.measure import preset_plan, scene_images

    mate = get_preset("mate3d").scaled(max_views=2, resolution_px=64, samples=1)
    scene = sorted(tiny_set.scenes, key=lambda s: s.generator)[0]
    images = scene_images(BoxRasterizer(), tiny_set, scene, mate)
    assert not isinstance(images, str) and len(images) == 2
    height, width, _ = images[0].shape
    grid = replace(mate, name="grid", tiling=(2, 1))
    (sheet,) = scene_images(BoxRasterizer(), tiny_set, scene, grid)
    assert sheet.shape == (height, 2 * width, 3)
    bare = preset_plan(tiny_set, mate, None)
    assert sorted(row.caption for row in bare.rows) == sorted(s.prompt for s in tiny_set.scenes)
