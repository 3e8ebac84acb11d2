"""The search through real Blender renders and a pixel-based scorer.

A scorer that reads only pixels (the image's warmth, mean red minus blue) cannot see a
configuration: the search must render each point, score the image and still find the warm
light that moves it, and the held-out prompts must confirm it. Renders use the smoke
profile's 224 px / 8 samples through the shared render cache (content-addressed), one search
axis and one batch, so a rerun costs only cache reads."""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.paths import default_cache_dir
from harness.evaluators import registry
from harness.evaluators.scorer import Scorer, scorer_spec
from harness.search.pipeline import SearchRequest, Split, run_search

pytestmark = pytest.mark.slow


class Warmth(Scorer):
    """Mean (red − blue) / 255 of the image: a pixel statistic that warm light raises."""

    name = "search-test-warmth"
    needs_text = False
    score_range = (-1.0, 1.0)

    def score_batch(self, images, texts):
        return [float(np.mean(im[..., 0].astype(np.float64) - im[..., 2])) / 255.0 for im in images]


@pytest.fixture
def warmth():
    registry.register(Warmth, replace=True)
    yield scorer_spec(Warmth)
    registry.unregister(Warmth.name)


def test_pixel_scorer_search_finds_and_confirms_warm_light(warmth, tmp_path):
    request = SearchRequest(Warmth.name, "smoke", "shift", budget=4, seed=0, batch=4,
                            split=Split(1, 6), axes=("colour_temperature",))  # fmt: skip
    res = run_search(request, cache_dir=default_cache_dir(), spec=warmth, log_path=tmp_path / "log.jsonl")
    assert len(res.trials) == 4 and all(t.status == "ok" for t in res.trials)
    worst = res.worst_configuration()
    assert worst["colour_temperature"] < 4000  # warm light moves a warmth score most
    assert res.discovery_effect > 1.0 and res.confirmed
    assert res.renders["fetched"] > 0  # real renders, read back through the render cache


def test_search_out_writes_the_document_and_the_three_figures(tmp_path):
    """``--out``: search.json, the trace, the worst render beside c0's (two real renders of
    one smoke scene) and the flip region's points."""
    import json

    from harness.commands.search import write_outputs
    from harness.evaluators.reference.specs import search_planted_specs
    from harness.render.renderer import default_renderer

    request = SearchRequest("planted-offgrid", "smoke", "pair:faithful,gridded", budget=16, seed=0,
                            flip_points=64)  # fmt: skip
    res = run_search(request, cache_dir=tmp_path, spec=search_planted_specs()[0], log_path=tmp_path / "l.jsonl")
    written = write_outputs(res, tmp_path / "out", default_renderer(default_cache_dir() / "renders"))
    assert [p.name for p in written] == ["search.json", "search_trace.png", "search_worst_vs_c0.png",
                                         "search_flip_region.png"]  # fmt: skip
    assert json.loads(written[0].read_text())["worst"]["text"] == res.space.text(res.worst)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written[1:])
