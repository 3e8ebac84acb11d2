"""The repeatability measurement (harness/measure/repeatability.py): hand-computed comparison,
repeatable evaluators at exactly 0, each pass able to catch what the others cannot, failures
that are never a 0, and the per-evaluator cache (in process, tiny scenes, box rasterizer)."""

from __future__ import annotations

import math
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.evaluators.registry import register
from harness.measure import repeatability as rep
from harness.measure.repeatability import PASSES, Repeatability, c0_sample, compare
from harness.run.repeatability import card_repeatability
from harness.testing import TinySpec
from tests._audit_project import tiny_session


def test_compare_takes_the_largest_absolute_difference_from_the_batch_of_1_pass():
    passes = {"batch of 1": [1.0, 2.0, 3.0], "batch of N": [1.0, 2.5, 3.0], "fresh process": [0.75, 2.0, 3.0]}
    labels = [("s0", "a"), ("s1", "b"), ("s2", "c")]
    worst, where = compare(passes, labels)
    assert worst == 0.5
    assert where == {"pass": "batch of N", "row": 1, "scene": "s1", "caption": "b", "reference": 2.0, "value": 2.5}
    assert compare({"batch of 1": [1.0], "batch of N": [1.0], "fresh process": [1.0]}, [("s", "c")]) == (0.0, None)


@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), min_size=1, max_size=8))
def test_compare_is_the_largest_difference_and_zero_only_when_every_score_agrees(rows):
    passes = {name: [r[i] for r in rows] for i, name in enumerate(PASSES)}
    worst, where = compare(passes, [(f"s{i}", "c") for i in range(len(rows))])
    assert worst == max(max(abs(r[1] - r[0]), abs(r[2] - r[0])) for r in rows)
    assert (where is None) == (worst == 0.0)
    if where is not None:
        assert abs(where["value"] - where["reference"]) == worst


def test_the_card_field_reads_the_tolerance_and_a_failure_is_never_repeatable():
    measured = Repeatability(0.25, {"pass": "fresh process"}, 4, [1, 4], "", {"in_process": 1.0})
    assert card_repeatability(measured, 0.3)["repeatable"] is True
    assert card_repeatability(measured, 0.0)["repeatable"] is False
    assert "seconds" not in card_repeatability(measured, 0.0)  # a card is a function of its inputs
    failed = Repeatability(None, None, 4, [1, 4], "fresh process: a row failed: down")
    assert card_repeatability(failed, math.inf)["repeatable"] is False
    assert card_repeatability(measured, None)["repeatable"] is False  # undeclared: judged against 0


def test_the_sample_is_c0_rows_spread_over_the_plan(tmp_path):
    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    plan = session.inputs.plan
    rows = c0_sample(plan, 3)
    c0 = [r for r in plan.rows if r.factor == "baseline" and r.level == "c0"]
    assert len(rows) == 3 and all(r in c0 for r in rows)
    assert rows[0] is c0[0] and len({r.image.scene for r in rows}) == 3
    assert c0_sample(plan, len(c0) + 5) == c0


@pytest.mark.parametrize("grid", [True, False])
def test_a_deterministic_evaluator_is_repeatable_to_exactly_zero_and_cached(tmp_path, monkeypatch, grid):
    spec = TinySpec("tiny-grid" if grid else "tiny-pairs", grid=grid)
    session = tiny_session(tmp_path, [spec])
    found = session.repeatability.result(spec.id)
    assert found.error == "" and found.max_abs_diff == 0.0 and found.where is None
    assert found.inputs == rep.SAMPLE_SIZE and found.batch_sizes == [1, rep.SAMPLE_SIZE]
    assert found.seconds["fresh_process"] > 0
    from harness.cards.card_format import validate_card

    card = session.cards.card(spec.id)
    validate_card(card)  # the schema knows the field
    assert card["repeatability"] == card_repeatability(found, None) and card["repeatability"]["repeatable"]
    (cached,) = (tmp_path / "cache" / "repeatability").glob("*.json")

    def refuse(*a, **k):
        raise AssertionError("measured again")

    monkeypatch.setattr(rep, "measure_repeatability", refuse)
    again = tiny_session(tmp_path, [spec]).repeatability.result(spec.id)
    assert again == found  # read from the sealed cache entry, seconds included
    cached.write_bytes(cached.read_bytes().replace(b'"max_abs_diff":0.0', b'"max_abs_diff":0.1'))
    with pytest.raises(AssertionError, match="measured again"), pytest.warns(match="failed verification"):
        tiny_session(tmp_path, [spec]).repeatability.result(spec.id)  # a forged entry is discarded


def test_an_evaluator_whose_rows_fail_is_a_failure_not_a_zero_and_is_not_cached(tmp_path):
    spec = TinySpec("tiny-grid", fail_all=True)
    found = tiny_session(tmp_path, [spec]).repeatability.result(spec.id)
    assert found.max_abs_diff is None and "batch of 1: a row failed" in found.error
    assert not list((tmp_path / "cache" / "repeatability").glob("*.json"))


def _scorer_session(tmp_path, cls):
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession
    from harness.testing import BoxRasterizer, write_tiny_scene_set

    write_tiny_scene_set(tmp_path / "scenes")
    options = AuditOptions(profile="smoke", evaluators=(cls.name,), scenes=tmp_path / "scenes",
                           report_dir=tmp_path / "reports", cache_dir=tmp_path / "cache", bootstrap=20)
    return AuditSession(options, renderer_factory=lambda _: BoxRasterizer(), extra_evaluators=[cls.spec()])


SALTED = '''
import random

from harness.evaluators import Scorer

SALT = random.SystemRandom().random() / 1000  # drawn once per process, at import


class Salted(Scorer):
    """Repeatable in one process, not across processes."""
    name = "salted"
    needs_text = False

    def score_batch(self, images, texts):
        return [float(im.mean()) / 255 + SALT for im in images]
'''


def test_only_the_fresh_process_catches_state_drawn_once_per_process(tmp_path, monkeypatch):
    (tmp_path / "salted_scorer.py").write_text(textwrap.dedent(SALTED))
    monkeypatch.syspath_prepend(str(tmp_path))
    import salted_scorer

    register(salted_scorer.Salted)
    session = _scorer_session(tmp_path, salted_scorer.Salted)
    found = session.repeatability.result("salted")
    assert found.error == "", found.error
    assert found.where is not None and found.where["pass"] == PASSES[2]
    assert 0 < found.max_abs_diff < 0.002


def test_a_scorer_a_fresh_process_cannot_rebuild_is_a_failure_with_the_reason(tmp_path):
    from harness.evaluators import Scorer

    class Local(Scorer):  # defined in a function: no module attribute to import it from
        name = "local-only"
        needs_text = False

        def score_batch(self, images, texts):
            return [0.5] * len(images)

    register(Local)
    found = _scorer_session(tmp_path, Local).repeatability.result("local-only")
    assert found.max_abs_diff is None and found.error.startswith("the fresh process could not score")


def _bundled_session(tmp_path, evaluators):
    from harness.evaluators.reference.specs import repeatability_planted_specs
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession
    from harness.testing import BoxRasterizer

    options = AuditOptions(profile="smoke", evaluators=tuple(evaluators), report_dir=tmp_path / "reports",
                           cache_dir=tmp_path / "cache", bootstrap=20)
    return AuditSession(options, renderer_factory=lambda _: BoxRasterizer(),
                        extra_evaluators=repeatability_planted_specs())


def test_planted_jitter_fails_in_the_batch_of_n_pass_and_planted_robust_is_exact(tmp_path):
    session = _bundled_session(tmp_path, ["planted-jitter", "planted-robust"])
    jitter = session.repeatability.result("planted-jitter")
    assert jitter.error == "" and jitter.max_abs_diff > 0
    assert jitter.where["pass"] == "batch of N"  # the fresh process repeats the batch of N exactly
    robust = session.repeatability.result("planted-robust")
    assert robust.error == "" and robust.max_abs_diff == 0.0


def test_planted_jitter_is_one_offset_per_call():
    from harness.evaluators.reference.planted import CallNoise

    noise = CallNoise(sigma=1.0)
    noise.start_call()
    first = {noise.offset(None), noise.offset(None)}
    noise.start_call()
    second = noise.offset(None)
    assert len(first) == 1 and second not in first


class _Backbone:
    """Fixed unit embeddings (no torch): image i gets row i."""

    def __init__(self, images):
        import numpy as np

        rng = np.random.default_rng(3)
        self.img = rng.standard_normal((len(images), 512)).astype(np.float32)
        self.img /= np.linalg.norm(self.img, axis=1, keepdims=True)
        self.txt = rng.standard_normal((2, 512)).astype(np.float32)
        self.txt /= np.linalg.norm(self.txt, axis=1, keepdims=True)

    def text_embeddings(self, prompts):
        return self.txt, [0, 1]

    def image_embeddings(self, images):
        images = list(images)
        return self.img[[int(im[0, 0, 0]) for im in images]], list(range(len(images)))


def test_clip_iqa_scores_an_image_alone_and_in_a_batch_bit_for_bit():
    """Before: a (1, d) @ (d, 2) product took another BLAS kernel than (n, d) @ (d, 2), so
    ref-clipiqa's batch-of-1 and batch-of-N scores differed in the last bit (5e-16)."""
    import numpy as np

    from harness.evaluators.clipiqa import ClipIqaEvaluator
    from harness.evaluators.registry import get

    images = [np.full((2, 2, 3), i, np.uint8) for i in range(64)]
    ev = ClipIqaEvaluator(get("ref-clipiqa"), _Backbone(images))
    together = ev.image_scores(images)
    alone = np.concatenate([ev.image_scores([im]) for im in images])
    assert together.tobytes() == alone.tobytes()
