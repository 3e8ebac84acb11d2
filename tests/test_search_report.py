"""The search in the audit's report and the flip check's words.

report.html's search section shows, beside the trace, the confirmed worst configuration's render
next to c0's for the same scene and the flip-region figure, from files the report writer draws
out of what the session hands in (:mod:`harness.search.figure_inputs`: arrays and numbers; the
report measures nothing). ``test_flip_region``'s interval is a Wilson interval over Sobol
points, and its check says so; every other check keeps "the bootstrap lower bound".
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from harness.checks.assertions import AuditCheck, Bound
from harness.checks.wording import rule
from harness.protocol.profiles import get_profile
from harness.search.figure_inputs import flip_sample, worst_images
from harness.search.flip_region import flip_region, sobol_points
from harness.search.space import space_for


@pytest.fixture(scope="module")
def space():
    return space_for(get_profile("smoke"))


# ------------------------------------------------------------------------------ wording


def _outcome(blocks: int = 2, **kw):
    recorded = []
    check = AuditCheck(evaluator="ev", thresholds={"max_flip_share": 0.0}, record=recorded.append,
                       blocks=lambda: blocks)  # fmt: skip
    with pytest.raises(AssertionError) as info:
        check("flip_share[c0 winner]", 0.02, "max_flip_share", interval=[0.003, 0.08], bound=Bound.LOWER, **kw)
    return recorded[0], str(info.value)


def test_the_flip_check_names_its_wilson_interval_not_a_bootstrap():
    """Regression: the flip share's Wilson interval over Sobol points was called "the bootstrap
    lower bound" with a "small sample: 2 prompt blocks" note."""
    outcome, message = _outcome(interval_kind="Wilson interval over 64 Sobol points")
    assert outcome["interval_kind"] == "Wilson interval over 64 Sobol points" and "blocks" not in outcome
    assert message == ("flip_share[c0 winner] of ev: the lower bound 0.003 (estimate 0.02, 95% Wilson interval "
                       "over 64 Sobol points [0.003, 0.08]), must be ≤ 0.00 (max_flip_share): fails")  # fmt: skip
    assert "bootstrap" not in message and "prompt block" not in message


def test_other_checks_keep_the_bootstrap_wording():
    outcome, message = _outcome(blocks=6)  # 6: the fewest prompt blocks a bound may confirm on
    assert "interval_kind" not in outcome and outcome["blocks"] == 6
    assert message == ("flip_share[c0 winner] of ev: the bootstrap lower bound 0.003 (estimate 0.02, 95% CI "
                       "[0.003, 0.08]; small sample: 6 prompt blocks, under 10), must be ≤ 0.00 (max_flip_share): "
                       "fails")  # fmt: skip
    missing = rule({**outcome, "tested": None, "interval_kind": "Wilson interval over 8 Sobol points"})
    assert "its Wilson interval over 8 Sobol points is not available" in missing


def test_the_audit_flip_check_passes_its_interval_kind():
    from harness.core.paths import REPO_ROOT

    text = (REPO_ROOT / "audit_tests" / "test_search.py").read_text()
    assert 'interval_kind=f"Wilson interval over {region[\'points\']} Sobol points"' in text


# ------------------------------------------------------------------------------ figure inputs


def test_flip_sample_plots_the_axes_that_carry_the_flips(space):
    points = sobol_points(space, 64, 0)
    pitch = [a.name for a in space.axes].index("pitch")
    light = [a.name for a in space.axes].index("colour_temperature")
    outcomes = [bool(40 <= float(p[pitch]) <= 70 and float(p[light]) < 5000) for p in points]
    outcomes[0] = None  # a failed point stays in the figure, hollow
    found = flip_sample(SimpleNamespace(space=space, flip=flip_region(space, points, outcomes, "c0 winner")))
    assert (found.x, found.y) == ("pitch", "colour_temperature")
    assert len(found.points) == 64 and sum(f is True for _, f in found.points) == sum(o is True for o in outcomes)
    assert found.points[0][1] is None and "Wilson" in found.title and "63 Sobol points" in found.title
    assert flip_sample(SimpleNamespace(space=space, flip=None)) is None
    # flips carried by two other axes: the figure plots those
    names = [a.name for a in space.axes]
    many = sobol_points(space, 256, 0)
    carried = [bool(float(p[names.index("focal_length")]) < 60 and float(p[names.index("framing_margin")]) > 0.4)
               for p in many]  # fmt: skip
    region = flip_region(space, many, carried, "c0 winner")
    assert "focal_length" in region.where and "framing_margin" in region.where, region.where
    other = flip_sample(SimpleNamespace(space=space, flip=region))
    assert (other.x, other.y) == ("focal_length", "framing_margin")


class _Renderer:
    def __init__(self):
        self.asked = []

    def render(self, scene, root, identity, config):
        self.asked.append((scene.id, config))
        rgba = np.full((4, 4, 4), 255 if len(self.asked) == 1 else 10, dtype=np.uint8)
        rgba[..., 3] = 255  # opaque
        return rgba


def test_worst_images_render_one_scene_at_c0_and_at_the_worst_point(space):
    from harness.scenes.scene_source import load_scene_set

    scenes = load_scene_set(None)
    prompt = sorted(scenes.prompt_ids)[0]
    worst = space.point({"pitch": 55.0, "colour_temperature": 2500.0, "background": "128"})
    renderer = _Renderer()
    found = worst_images(SimpleNamespace(space=space, worst=worst, discovery_prompts=(prompt,)), renderer, scenes)
    (s0, c0), (s1, moved) = renderer.asked
    assert s0 == s1 and c0 == space.base.render and moved == space.configuration(worst).render
    assert found.scene.endswith(f"/{prompt}") and found.text == space.text(worst)
    assert found.c0.shape == found.worst.shape == (4, 4, 3) and found.c0.dtype == np.uint8
    assert (found.worst == 10).all()  # composited on the worst point's own (opaque) pixels
    none = SimpleNamespace(space=space, worst=None, discovery_prompts=(prompt,))
    assert worst_images(none, renderer, scenes) is None


# ------------------------------------------------------------------------------ report.html


def _png(path, shade):
    from PIL import Image

    Image.fromarray(np.full((4, 4, 3), shade, dtype=np.uint8)).save(path)


def test_the_search_section_shows_the_worst_render_beside_c0_and_the_flip_region(tmp_path):
    from harness.report.html.page import _search

    folder = tmp_path / "search"
    folder.mkdir()
    doc = {"objective": "pair:a,b", "trials": 8, "budget": 8, "seed": 0, "worst": {"text": "pitch=52"},
           "discovery": {"estimate": 0.8}, "held_out": {"estimate": 0.8, "interval": [0.7, 0.9]},
           "optimism": 0.0, "confirmed": True, "flip_region": None}  # fmt: skip
    for ev in ("fragile", "robust"):
        (folder / f"{ev}.json").write_text(json.dumps({**doc, "confirmed": ev == "fragile"}))
        _png(folder / f"{ev}_trace.png", 1)
        _png(folder / f"{ev}_flip_region.png", 2)
    _png(folder / "fragile_worst_vs_c0.png", 3)
    html = _search(SimpleNamespace(dir=tmp_path))
    assert html.count("<img") == 5
    assert 'alt="confirmed worst configuration beside c0 of fragile"' in html
    assert "confirmed worst configuration beside c0 of robust" not in html
    assert 'alt="flip region of fragile"' in html and 'alt="flip region of robust"' in html
    assert html.index("search trace of fragile") < html.index("beside c0 of fragile") < html.index(
        "flip region of fragile")
