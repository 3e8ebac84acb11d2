"""Release compare covers the factorial-block metrics (interaction_share, block_sign_crossings
per block): hand-computed points and replicates, agreement with the audit's block statistics,
joint masking, margins; OFAT comparisons do not have them (tests/test_compare_unchanged.py)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.release import comparison as cmp
from harness.release.margins import parse_margin_args
from harness.stats import bootstrap as bs
from harness.stats import replicates
from harness.stats.interactions import block_stats
from harness.stats.intervals import interval
from harness.stats.table import BlockScores, pivot_records
from harness.vocab.metrics import METRICS
from tests._compare_tables import BASE_BLOCK, BASE_PITCH, block_release, tiny_release

BLOCK = "lighting:pitch"
# With two prompts a draw holds p0 k times and p1 2 − k times; these weights are k = 1, 2, 0.
WEIGHTS = np.array([[1, 1], [2, 0], [0, 2]])


def _block(cells=BASE_BLOCK) -> BlockScores:
    return pivot_records(block_release(cells))["ev"].blocks[BLOCK]


def test_interaction_share_by_hand():
    # Per scene (2 × 2 cells [[a, b], [c, d]]): SS_int = (a − b − c + d)² / 4, SS_tot = Σ (y − ȳ)².
    #   g0/p0 [[1, 2], [3, 4]]: additive, SS_int 0, SS_tot 5;  g0/p1 [[0, 0], [0, 4]]: 4, 12
    #   g1/p0 [[1, 1], [1, 1]]: 0, 0;                          g1/p1 [[2, 0], [0, 2]]: 4, 4
    # pooled over scenes: (0 + 4 + 0 + 4) / (5 + 12 + 0 + 4) = 8/21
    # k = 2 (p0 twice): 0 / 5 = 0; k = 0 (p1 twice): 8 / 16 = 1/2
    point, draws = replicates.interaction_share_draws(_block(), WEIGHTS)
    assert point == pytest.approx(8 / 21)
    np.testing.assert_allclose(draws, [8 / 21, 0.0, 0.5])


def test_block_sign_crossings_by_hand():
    # generator means per cell (city-0, city-90, night-0, night-90):
    #   g0 (0.5, 1, 1.5, 4), g1 (1.5, 0.5, 0.5, 1.5): g0 − g1 = (−1, .5, 1, 2.5) crosses 0 → 1
    # k = 2 (p0): g0 (1, 2, 3, 4), g1 (1, 1, 1, 1): (0, 1, 2, 3) touches 0, no crossing → 0
    # k = 0 (p1): g0 (0, 0, 0, 4), g1 (2, 0, 0, 2): (−2, 0, 0, 2) crosses → 1
    point, draws = replicates.block_sign_crossing_draws(_block(), WEIGHTS)
    assert point == 1.0
    np.testing.assert_array_equal(draws, [1.0, 0.0, 1.0])


def test_a_block_that_moves_nothing_has_no_interaction():
    flat = {k: (2.0, 2.0, 2.0, 2.0) for k in BASE_BLOCK}
    point, draws = replicates.interaction_share_draws(_block(flat), WEIGHTS)
    assert point == 0.0 and (draws == 0.0).all()


def test_compare_records_gives_both_block_metrics_per_block():
    # candidate: g1/p1 [[4, 0], [0, 4]]: SS_int 16, SS_tot 16 → pooled (0 + 4 + 0 + 16) / 33 = 20/33
    # paired draws: k = 2: 0 − 0; k = 0: 20/28 − 8/16 = 3/14; k = 1: the original difference
    cand = {**BASE_BLOCK, ("g1", "p1"): (4.0, 0.0, 0.0, 4.0)}
    out = cmp.compare_records(block_release(BASE_BLOCK), block_release(cand), bootstrap=400, seed=7)
    by = {m.metric: m for m in out.metrics}
    share = by[f"interaction_share-{BLOCK}"]
    assert (share.kind, share.subject, share.harmful) == ("interaction_share", BLOCK, +1)
    assert (share.baseline, share.candidate) == pytest.approx((8 / 21, 20 / 33))
    k = bs.prompt_weights(2, 400, 7)[:, 0]
    expected = np.select([k == 2, k == 0], [0.0, 3 / 14], 20 / 33 - 8 / 21)
    assert share.se == pytest.approx(np.std(expected, ddof=1))
    assert share.margin == 0.05
    cross = by[f"block_sign_crossings-{BLOCK}"]
    assert (cross.baseline, cross.candidate, cross.margin) == (1.0, 1.0, 1.0)
    assert {"interaction_share", "block_sign_crossings"} <= set(out.margins)
    assert list(by)[-2:] == [f"interaction_share-{BLOCK}", f"block_sign_crossings-{BLOCK}"]
    planned = cmp.planned_metrics(pivot_records(block_release(BASE_BLOCK))["ev"])
    study_rows = [p for p in planned if METRICS.get(p[0]).compute is None]  # computed rows follow
    assert study_rows[-2:] == [("interaction_share", BLOCK), ("block_sign_crossings", BLOCK)]


def test_a_cell_failed_in_one_release_leaves_its_scene_out_of_both():
    cand = block_release(BASE_BLOCK)
    hit = (cand["generator"] == "g1") & (cand["prompt_id"] == "p1") & (cand["level"] == "lighting=night,pitch=90")
    cand.loc[hit, ["score", "status", "error"]] = [np.nan, "failed", "timeout"]
    out = cmp.compare_records(block_release(BASE_BLOCK), cand, bootstrap=50)
    share = {m.metric: m for m in out.metrics}[f"interaction_share-{BLOCK}"]
    # g1/p1 incomplete on both sides: (0 + 4 + 0) / (5 + 12 + 0) = 4/17
    assert share.baseline == pytest.approx(4 / 17) and share.candidate == pytest.approx(4 / 17)


def test_block_margins_are_named_per_block():
    margins = parse_margin_args([f"interaction_share.{BLOCK}=0.5", f"block_sign_crossings-{BLOCK}=2"])
    assert margins == {f"interaction_share.{BLOCK}": 0.5, f"block_sign_crossings.{BLOCK}": 2.0}
    out = cmp.compare_records(block_release(BASE_BLOCK), block_release(BASE_BLOCK), bootstrap=20,
                              margins=margins)
    by = {m.metric: m for m in out.metrics}
    assert by[f"interaction_share-{BLOCK}"].margin == 0.5
    assert by[f"block_sign_crossings-{BLOCK}"].margin == 2.0


def test_ofat_releases_have_no_block_metrics():
    out = cmp.compare_records(tiny_release(BASE_PITCH), tiny_release(BASE_PITCH), bootstrap=20)
    assert not {m.kind for m in out.metrics} & set(cmp.block_kinds())
    assert not set(out.margins) & set(cmp.block_kinds())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_block_metrics_agree_with_the_audits_block_statistics(seed):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(3, 6, 3, 2)) + rng.normal(size=(3, 1, 3, 2))
    scores[1, 2, 0, 1] = np.nan  # one incomplete scene
    block = BlockScores(BLOCK, ("lighting", "pitch"), (("city", "night", "studio"), ("0", "90")), scores)
    weights = bs.prompt_weights(6, 300, seed)
    st = block_stats(BLOCK, block.factors, block.levels, scores, rng.normal(size=(3, 6)),
                     [None, None], weights)
    share, share_d = replicates.interaction_share_draws(block, weights)
    assert share == pytest.approx(st.interaction_share, rel=1e-12)
    assert interval(share_d, n_blocks=6).as_tuple() == pytest.approx(st.interaction_share_ci, rel=1e-12)
    cross, _ = replicates.block_sign_crossing_draws(block, weights)
    assert cross == st.sign_crossings
    ones = np.ones((1, 6), dtype=np.int64)
    assert replicates.interaction_share_draws(block, ones)[1][0] == pytest.approx(share, rel=1e-12)
    assert replicates.block_sign_crossing_draws(block, ones)[1][0] == cross
