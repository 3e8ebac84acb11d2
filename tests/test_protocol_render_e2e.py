"""Protocol presets end to end with real renders and a real image evaluator: two
bundled scenes, tiny renders (64 px, 1 sample), ref-vit-clip. Marked slow."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from harness.peers.measure import scene_images, score_protocols
from harness.protocol.presets import get_preset

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_scenes():
    from harness.scenes.scene_source import load_scene_set

    return load_scene_set(None).select_for_profile(1, ["faithful", "confused"])


@pytest.fixture(scope="module")
def renderer(tmp_path_factory):
    pytest.importorskip("bpy")
    from harness.render.service import RenderService

    return RenderService(tmp_path_factory.mktemp("renders"))


def test_scores_under_two_presets_share_renders_and_tile(two_scenes, renderer, tmp_path):
    pytest.importorskip("open_clip")
    from harness.peers.inputs import evaluator_spec

    spec = evaluator_spec("ref-vit-clip")
    mate = get_preset("mate3d").scaled(max_views=2, resolution_px=64, samples=1)  # views 0 and 3
    best = replace(mate, name="mate3d-max", aggregation="max")  # the same views, another reduction
    table = score_protocols(spec, two_scenes, [mate], template="-.-.-.-.-", cache_dir=tmp_path, renderer=renderer)
    assert list(table["status"]) == ["ok", "ok"] and np.isfinite(table["score"]).all()
    first = renderer.rendered
    assert first == 4  # 2 scenes x 2 views
    def never(_spec):
        raise AssertionError("the score cache serves every pair: the model must not load")

    again = score_protocols(spec, two_scenes, [best], template="-.-.-.-.-", cache_dir=tmp_path, renderer=renderer,
                            load_evaluator=never)
    assert renderer.rendered == first  # a view two presets share renders once
    assert (again["score"].to_numpy() >= table["score"].to_numpy() - 1e-9).all()  # max ≥ mean

    grid = replace(mate, name="grid", tiling=(2, 1))
    scene = sorted(two_scenes.scenes, key=lambda s: s.generator)[0]
    images = scene_images(renderer, two_scenes, scene, grid)
    assert len(images) == 1 and images[0].shape == (64, 128, 3)
    assert renderer.rendered == first  # the grid reuses the same two renders


def test_normal_pass_preset_renders_and_scores(two_scenes, renderer, tmp_path):
    pytest.importorskip("open_clip")
    from harness.peers.inputs import evaluator_spec

    gpt = get_preset("gpteval3d").scaled(resolution_px=64, samples=1)
    scene = sorted(two_scenes.scenes, key=lambda s: s.generator)[0]
    images = scene_images(renderer, two_scenes, scene, gpt)
    assert len(images) == 1 and images[0].shape == (256, 128, 3)  # RGB 2 x 2 sheet above the normal sheet
    assert not np.array_equal(images[0][:128], images[0][128:])
    table = score_protocols(evaluator_spec("ref-vit-clip"), two_scenes, [gpt], template="-.-.-.-.-",
                            cache_dir=tmp_path, renderer=renderer)
    assert list(table["status"]) == ["ok", "ok"]
