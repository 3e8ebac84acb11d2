"""The measurement pipeline: rows, shared work, caching and failure rows (numpy components)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.errors import RenderError
from harness.measure.images import measure
from harness.measure.plan import build_plan
from harness.protocol.profiles import get_profile
from harness.scenes.sceneset import SceneSet
from harness.testing import (
    BoxRasterizer,
    TinyEvaluator,
    TinyGridEvaluator,
    TinySpec,
    write_tiny_scene_set,
)


class CountingRenderer(BoxRasterizer):
    """Counts renders per (scene, config); fails for ``fail_lighting`` with a typed error."""

    def __init__(self, fail_lighting: str = ""):
        self.calls: Counter = Counter()
        self.fail_lighting = fail_lighting

    def render(self, scene, scene_root, identity, cfg):
        self.calls[(scene.id, cfg)] += 1
        if cfg.lighting == self.fail_lighting:
            raise RenderError(f"planted failure under {cfg.lighting}", where=scene.id)
        return super().render(scene, scene_root, identity, cfg)


class RecordingEvaluator(TinyGridEvaluator):
    def __init__(self, spec, log):
        super().__init__(spec)
        self.log = log

    def score_grid(self, images, captions):
        from harness.evaluators.cache import image_sha256

        self.log.extend(image_sha256(im) for im in images)
        return super().score_grid(images, captions)


@pytest.fixture(scope="module")
def scene_set(tmp_path_factory):
    return SceneSet.load(write_tiny_scene_set(tmp_path_factory.mktemp("scenes")))


@pytest.fixture(scope="module")
def plan(scene_set):
    return build_plan(scene_set, get_profile("smoke"))


def test_plan_has_baseline_every_level_and_probes_per_scene(plan, scene_set):
    profile = get_profile("smoke")
    for scene in scene_set.scenes:
        rows = [r for r in plan.rows if r.group == scene.id]
        keys = {(r.factor, r.level) for r in rows}
        assert rows[0].factor == "baseline" and rows[0].level == "c0"
        for factor, levels in profile.levels.items():
            if factor != "paraphrase":
                assert {(factor, lv) for lv in levels} <= keys
        assert {("probe", p) for p in profile.probes} <= keys
        baseline_caption = rows[0].caption
        probe_rows = [r for r in rows if r.factor == "probe"]
        assert all(r.caption == baseline_caption for r in probe_rows)  # original prompt


def test_backgrounds_and_templates_do_not_rerender(plan, tmp_path):
    renderer = CountingRenderer()
    measure(TinySpec("tiny-grid"), plan, renderer, cache_dir=tmp_path)
    assert set(renderer.calls.values()) == {1}  # each (scene, render config) rendered once
    distinct = {(r.image.scene, r.image.render) for r in plan.rows if r.image is not None}
    assert len(renderer.calls) == len(distinct) == len(plan.renders)


def test_each_image_encoded_once_and_second_run_is_served_from_cache(plan, tmp_path):
    encoded: list[str] = []
    builds = []

    def load(spec):
        builds.append(spec.id)
        return RecordingEvaluator(spec, encoded)

    spec = TinySpec("tiny-grid")
    first = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path, load_evaluator=load)
    assert builds == ["tiny-grid"]
    assert len(encoded) == len(set(encoded))  # no image went through the model twice
    second = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path, load_evaluator=load)
    assert builds == ["tiny-grid"]  # everything came from the score cache: no model load
    assert first.equals(second)


def test_pairwise_and_grid_variants_agree(plan, tmp_path):
    grid = measure(TinySpec("t", grid=True), plan, BoxRasterizer(), cache_dir=tmp_path / "a")
    pairs = measure(TinySpec("t", grid=False), plan, BoxRasterizer(), cache_dir=tmp_path / "b")
    ok = grid["status"].eq("ok")
    np.testing.assert_allclose(grid.loc[ok, "score"], pairs.loc[ok, "score"])


def test_render_and_score_failures_become_failed_rows(plan, tmp_path):
    spec = TinySpec("tiny-refuse", grid=False, fail_word="Bird")
    frame = measure(spec, plan, CountingRenderer(fail_lighting="night"), cache_dir=tmp_path)
    night = frame[(frame["factor"] == "lighting") & (frame["level"] == "night")]
    assert (night["status"] == "failed").all()
    assert night["error"].str.contains("planted failure under night").all()
    refused = frame[frame["caption"].str.contains("Bird")]
    assert len(refused) and (refused["status"] == "failed").all()
    assert refused["error"].str.contains("refused caption").all()
    failed = frame[frame["status"] == "failed"]
    assert failed["score"].map(math.isnan).all()  # never a number
    assert frame[frame["status"] == "ok"]["score"].map(math.isfinite).all()


def test_prompt_free_evaluator_stores_empty_captions(plan, tmp_path):
    frame = measure(TinySpec("ctrl", needs_text=False), plan, BoxRasterizer(), cache_dir=tmp_path)
    assert (frame["caption"] == "").all()
    assert list(frame.columns) == [
        "evaluator", "generator", "prompt_id", "scene_sha256", "factor", "level", "caption",
        "score", "status", "error",
    ]


def test_probe_rows_carry_the_edited_scene_identity(plan, tmp_path):
    frame = measure(TinySpec("tiny-grid"), plan, BoxRasterizer(), cache_dir=tmp_path)
    for (gen, pid), group in frame.groupby(["generator", "prompt_id"]):
        base = group[group["factor"] == "baseline"]["scene_sha256"].iloc[0]
        probes = group[(group["factor"] == "probe") & (group["status"] == "ok")]
        assert (probes["scene_sha256"] != base).all(), (gen, pid)


_LEVELS = {
    "resolution": ("196", "224", "256"),
    "focal_length": ("35", "50", "85"),
    "lighting": ("city", "night"),
    "background": ("255", "0", "red"),
    "pitch": ("0", "45", "90"),
    "yaw": ("0", "180"),
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    chosen=st.fixed_dictionaries(
        {}, optional={f: st.lists(st.sampled_from(lv), min_size=1, unique=True) for f, lv in _LEVELS.items()}
    ),
    probes=st.lists(st.sampled_from(["keep_half", "biggest_only", "scrambled"]), unique=True),
)
def test_plan_invariants(scene_set, chosen, probes):
    from harness.protocol.configurations import RenderConfig
    from harness.protocol.profiles import Profile

    c0 = RenderConfig(resolution_px=224)
    profile = Profile("prop", "", c0, {f: tuple(v) for f, v in chosen.items()}, None, None, tuple(probes), (), 0)
    plan = build_plan(scene_set, profile)
    keys = [(r.group, r.factor, r.level) for r in plan.rows]
    assert len(keys) == len(set(keys))
    per_scene = 1 + sum(len(v) for v in chosen.values()) + len(probes)
    assert len(plan.rows) == per_scene * len(scene_set.scenes)
    renders = set(plan.renders)
    assert len(renders) == len(plan.renders)
    assert {(r.image.scene, r.image.render) for r in plan.rows if r.image is not None} == renders
    for row in plan.rows:
        if row.factor == "background":  # composited over the c0 render, never re-rendered
            assert row.image.render == c0
    distinct_cfgs = {cfg for cfg in (c.render for c in profile.configurations())}
    assert len(renders) == len(scene_set.scenes) * (len(distinct_cfgs) + len(probes))


class ServedEvaluator(TinyEvaluator):
    """A pairwise evaluator that reports a served model id per result, like the hosted judge."""

    def score(self, images, captions):
        from harness.evaluators.base import ScoreResult

        return [ScoreResult.ok(r.score, model=f"served-{len(c) % 2}") if r.status == "ok" else r
                for r, c in zip(super().score(images, captions), captions, strict=True)]  # fmt: skip


def test_served_model_reaches_the_records_and_survives_the_score_cache(plan, tmp_path):
    from harness.protocol.records import COLUMNS, read_records, write_records

    spec = TinySpec("hosted", grid=False, fail_word="bedroom")
    first = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path, load_evaluator=ServedEvaluator)
    assert list(first.columns) == [*COLUMNS, "served_model"]
    ok = first["status"] == "ok"
    assert ok.any() and (~ok).any()
    expected = first.loc[ok, "caption"].map(lambda c: f"served-{len(c) % 2}")
    assert first.loc[ok, "served_model"].equals(expected)
    assert (first.loc[~ok, "served_model"] == "").all()  # a failure reports no served model

    class Other(ServedEvaluator):  # would report other ids: ok rows must come from the cache
        def score(self, images, captions):
            return [type(r)(r.score, r.status, r.error, r.truncated, {"model": "other"})
                    for r in super().score(images, captions)]  # fmt: skip

    again = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path, load_evaluator=Other)
    assert again.equals(first)
    path = tmp_path / "served.csv"
    write_records(first, path)
    assert path.read_text().splitlines()[0] == ",".join([*COLUMNS, "served_model"])
    assert read_records(path).equals(first)


def test_a_served_model_outside_the_pattern_is_recorded_as_unrecognised(plan, tmp_path):
    # any evaluator's reported model text, not only the judge's, passes the pattern or is replaced
    class Odd(ServedEvaluator):
        def score(self, images, captions):
            return [type(r)(r.score, r.status, r.error, r.truncated,
                            {"model": "gpt-4o (sk-live-XQ7r2Lm9)" if len(c) % 2 else "gpt-4o"})
                    for r, c in zip(super().score(images, captions), captions, strict=True)]  # fmt: skip

    spec = TinySpec("hosted-odd", grid=False)
    first = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path, load_evaluator=Odd)
    ok = first["status"] == "ok"
    expected = first.loc[ok, "caption"].map(lambda c: "unrecognised model id" if len(c) % 2 else "gpt-4o")
    assert first.loc[ok, "served_model"].equals(expected)
    assert set(expected) == {"gpt-4o", "unrecognised model id"}
    cached = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path, load_evaluator=Odd)
    assert cached.equals(first)  # the cache holds only what a record may hold
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or b"sk-live" not in path.read_bytes(), path


def test_evaluators_without_a_served_model_keep_ten_columns(plan, tmp_path):
    from harness.protocol.records import COLUMNS, write_records

    for spec in (TinySpec("grid"), TinySpec("pairs", grid=False)):
        frame = measure(spec, plan, BoxRasterizer(), cache_dir=tmp_path)
        assert list(frame.columns) == list(COLUMNS)
        write_records(frame, tmp_path / f"{spec.id}.csv")
        assert (tmp_path / f"{spec.id}.csv").read_text().splitlines()[0] == ",".join(COLUMNS)


def test_an_empty_score_cache_serves_no_pair_and_repeats_count_as_reused(plan, tmp_path):
    # regression: "30 pairs from the score cache" on an empty cache: a pair the plan
    # repeats (scored in one group, met again in another) was counted as a cache hit
    from harness.measure.images import MeasureStats

    class SameForEveryScene(BoxRasterizer):
        """Two generators' scenes of one prompt look alike: their pairs repeat across groups."""

        def render(self, scene, scene_root, identity, cfg):
            n = max(8, int(cfg.resolution_px) // 8)
            return np.full((n, n, 4), (int(cfg.pitch_deg) % 200, 90, 60, 255), dtype=np.uint8)

    spec, first, second = TinySpec("tiny-grid"), MeasureStats(), MeasureStats()
    measure(spec, plan, SameForEveryScene(), cache_dir=tmp_path, stats=first)
    assert first.cached_pairs == 0 and first.reused_pairs > 0 and first.scored_pairs > 0
    measure(spec, plan, SameForEveryScene(), cache_dir=tmp_path, stats=second)
    assert second.scored_pairs == second.reused_pairs == 0
    assert second.cached_pairs == first.scored_pairs + first.reused_pairs


def test_the_measured_line_names_each_count_by_its_cause():
    from harness.run.aggregate import measured_line

    counts = {"images": 4752, "renders": 0, "scored_pairs": 4000, "cached_pairs": 0,
              "reused_pairs": 30}
    assert measured_line(counts) == (
        "measured here: 4752 images (0 rendered by the tests, 4752 read from the render "
        "cache), 30 repeated pairs scored once and reused, "
        "4000 pairs scored, 0 pairs from the score cache of earlier runs")
    assert "reused" not in measured_line(counts | {"reused_pairs": 0})
    # a --no-warm run renders in the tests: the line credits no warm step it did not have
    no_warm = measured_line(counts | {"renders": 4000})
    assert "(4000 rendered by the tests, 752 read from the render cache)" in no_warm and "warm" not in no_warm
