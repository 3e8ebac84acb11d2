"""Factorial blocks: cell encoding, profile parsing, the decomposition against hand-computed
values, block statistics, records and pivoting, summaries and the run-id contract."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.checks.thresholds import Thresholds, block_thresholds
from harness.core.errors import ProtocolError
from harness.protocol.configurations import BLOCK
from harness.protocol.levels import Block, cell_level, check_level, parse_block_id, parse_cell
from harness.protocol.profiles import _parse_profile, get_profile
from harness.stats.interactions import additive_prediction, block_stats, scene_sums_of_squares
from harness.stats.summary import EvaluatorSummary, MetricError, Status

# ---------------------------------------------------------------------------- cell encoding


def test_cell_round_trip_and_record_order():
    assert parse_cell("lighting=night,pitch=45") == (("lighting", "night"), ("pitch", "45"))
    assert cell_level((("focal_length", "35"), ("background", "red"))) == "focal_length=35,background=red"
    check_level(BLOCK, "resolution=196,lighting=studio,template=-.-.-.-.-")  # three factors


@pytest.mark.parametrize(
    "level",
    [
        "pitch=45,lighting=night",  # out of record order: one spelling per cell
        "lighting=night",  # one factor
        "lighting=night,lighting=city",  # repeated
        "lighting=night,pitch=46",  # not a Table 11 level
        "lighting=night, pitch=45",  # space
        "lighting=night,pitch=45,",  # stray comma
        "lighting=night,pitch==45",
        "yaw=0,pitch=45",  # yaw cannot be crossed
        "pitch=45,paraphrase=p1",
        "resolution=196,focal_length=35,lighting=night,pitch=45",  # four factors
        "",
        "c0",
    ],
)
def test_malformed_cells_are_rejected(level):
    with pytest.raises(ProtocolError):
        parse_cell(level)


def test_block_ids():
    assert parse_block_id("lighting:pitch") == ("lighting", "pitch")
    for bad in ("pitch:lighting", "pitch", "yaw:pitch", "lighting:lighting", "a:b"):
        with pytest.raises(ProtocolError):
            parse_block_id(bad)


# ---------------------------------------------------------------------------- profiles


def _profile(blocks, levels=None):
    levels = levels or {"lighting": ["city", "night", "studio"], "pitch": ["0", "45", "90"]}
    return _parse_profile("t", {"levels": levels, "blocks": blocks})


def test_interactions_profile_blocks_and_dedup():
    p = get_profile("interactions")
    assert [b.id for b in p.blocks] == ["lighting:pitch", "focal_length:background"]
    assert p.levels == get_profile("smoke").levels
    cells = [c for c in p.configurations() if c.factor == BLOCK]
    assert len(cells) == 18 and len({c.level for c in cells}) == 18
    # pitch x lighting adds the 4 off-default renders; focal x background only re-composites
    assert len(p.render_configs()) == len(get_profile("smoke").render_configs()) + 4
    assert not get_profile("default").blocks and not get_profile("paper").blocks


def test_block_cell_configuration_sets_every_factor():
    p = get_profile("interactions")
    cell = next(c for c in p.configurations() if c.level == "lighting=night,pitch=45")
    assert (cell.render.lighting, cell.render.pitch_deg) == ("night", 45.0)
    assert cell.render.resolution_px == p.c0.resolution_px and cell.background == "255"
    bg = next(c for c in p.configurations() if c.level == "focal_length=85,background=red")
    assert (bg.render.focal_length_mm, bg.background) == (85.0, "red")


def test_profile_block_order_is_canonical():
    (block,) = _profile([{"pitch": ["0", "90"], "lighting": ["city", "night"]}]).blocks
    assert block == Block(("lighting", "pitch"), (("city", "night"), ("0", "90")))


@pytest.mark.parametrize(
    "blocks",
    [
        [{"pitch": ["0", "15"], "lighting": ["city", "night"]}],  # 15 not an OFAT level
        [{"pitch": ["0"], "lighting": ["city", "night"]}],  # one level
        [{"pitch": ["0", "0"], "lighting": ["city", "night"]}],
        [{"pitch": ["0", "45"]}],  # one factor
        [{"yaw": ["0", "45"], "pitch": ["0", "45"]}],
        [{"pitch": ["0", "45"], "lighting": ["city", "night"]}, {"lighting": ["city", "studio"], "pitch": ["0", "90"]}],
        {"pitch": ["0", "45"]},
    ],
)
def test_bad_blocks_are_refused(blocks):
    with pytest.raises(ProtocolError):
        _profile(blocks)


# ---------------------------------------------------------------------------- decomposition


def test_two_way_decomposition_by_hand():
    # grand 3.5; row effects -2, +2 -> SS_A = 4 cells * 4 = 16; column effects -1.5, +1.5 ->
    # SS_B = 4 * 2.25 = 9; total 6.25 + 2.25 + 0.25 + 20.25 = 29; residuals +-1 -> SS_AB = 4
    main, inter, total = scene_sums_of_squares(np.array([[1.0, 2.0], [3.0, 8.0]]), 2)
    assert main.tolist() == [16.0, 9.0]
    assert inter == pytest.approx(4.0) and total == pytest.approx(29.0)


def test_indicator_interaction_is_one_fifth():
    # y = x u v^T, u = v = (0, 1, 1): SS_AB = x^2 (6/9)^2, SS_A = SS_B = 8/9 x^2, total 20/9 x^2
    x = 0.5
    u = np.array([0.0, 1.0, 1.0])
    main, inter, total = scene_sums_of_squares(x * np.outer(u, u), 2)
    assert main == pytest.approx([8 / 9 * x**2] * 2)
    assert inter == pytest.approx(4 / 9 * x**2)
    assert total == pytest.approx(20 / 9 * x**2)


def test_three_way_additive_has_no_interaction():
    a, b, c = np.array([0.0, 1.0]), np.array([0.0, 2.0, 5.0]), np.array([1.0, -1.0])
    y = a[:, None, None] + b[None, :, None] + c[None, None, :]
    main, inter, total = scene_sums_of_squares(y, 3)
    assert inter == pytest.approx(0.0, abs=1e-12)
    assert main.sum() == pytest.approx(total)
    # SS of factor a: 12 cells * 0.5^2 = 3
    assert main[0] == pytest.approx(3.0)


def test_incomplete_scene_is_left_out():
    y = np.array([[[1.0, 2.0], [3.0, np.nan]], [[1.0, 2.0], [3.0, 8.0]]])
    main, inter, total = scene_sums_of_squares(y, 2)
    assert np.isnan(total[0]) and np.isnan(inter[0]) and np.isnan(main[:, 0]).all()
    assert total[1] == pytest.approx(29.0)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, (3, 2, 3), elements=st.floats(-5, 5)),
       arrays(np.float64, (3, 1, 1), elements=st.floats(-5, 5)),
       arrays(np.float64, (3, 2, 1), elements=st.floats(-5, 5)))
def test_decomposition_sums_and_ignores_additive_terms(y, scene_shift, row_shift):
    main, inter, total = scene_sums_of_squares(y, 2)
    assert np.allclose(main.sum(axis=0) + inter, total, atol=1e-9)
    assert (main >= 0).all() and (inter >= -1e-12).all()
    # adding a per-scene constant or a main effect leaves the interaction unchanged
    _, inter2, _ = scene_sums_of_squares(y + scene_shift + row_shift, 2)
    assert np.allclose(inter, inter2, atol=1e-8)


def test_additive_prediction_by_hand():
    base = np.array([[1.0]])  # (G=1, P=1)
    a = np.array([[[1.0, 3.0]]])  # OFAT levels of factor A: c0-equivalent 1.0, then 3.0
    b = np.array([[[1.0, 2.0, 5.0]]])
    pred = additive_prediction([a, b], base)
    assert pred[0, 0].tolist() == [[1.0, 2.0, 5.0], [3.0, 4.0, 7.0]]


# ---------------------------------------------------------------------------- block statistics


def _two_scene_block():
    # generators g0, g1; one prompt; 2 x 2 cells
    s0 = np.array([[1.0, 2.0], [3.0, 8.0]])  # SS_AB 4, total 29
    s1 = np.array([[0.0, 1.0], [1.0, 0.0]])  # pure interaction: SS_AB 1, total 1
    return np.stack([s0, s1])[:, None]  # (2, 1, 2, 2)


def test_pooled_shares_and_rho_by_hand():
    y = _two_scene_block()
    baseline = np.array([[1.0], [0.0]])  # generator signal Var(1, 0) = 0.25
    ofat = [y[:, :, :, 0], y[:, :, 0, :]]  # the cells with the other factor at c0
    stats = block_stats("lighting:pitch", ("lighting", "pitch"), (("a", "b"), ("c", "d")),
                        y, baseline, ofat, None)
    assert stats.interaction_share == pytest.approx(5 / 30)
    assert stats.main_share == pytest.approx({"lighting": 16 / 30, "pitch": 9 / 30})
    # mean per-scene SS_AB / 4 cells = 5/2/4 = 0.625; over 0.25 -> 2.5
    assert stats.rho_interaction == pytest.approx(2.5)
    assert stats.rho_block == pytest.approx(15 / 4 / 0.25)
    # generator means per cell: g0 (1, 2, 3, 8), g1 (0, 1, 1, 0): g0 leads everywhere
    assert stats.sign_crossings == 0 and stats.winner_count == 1
    # additive prediction of g0's (b, d) cell: 3 + 2 - 1 = 4 vs 8; g1's: 1 + 1 - 0 = 2 vs 0
    assert stats.predicted[:, 3].tolist() == [4.0, 2.0]
    assert stats.max_additivity_error == pytest.approx(4.0)
    assert stats.additivity_rmse == pytest.approx(math.sqrt((16 + 4) / 8))
    assert np.isnan(stats.interaction_share_ci).all()


def test_sign_crossing_inside_a_block():
    y = np.zeros((2, 1, 2, 2))
    y[0] = [[1.0, 1.0], [1.0, 0.0]]  # g0 wins unless both factors move
    y[1] = [[0.5, 0.5], [0.5, 0.5]]
    st_ = block_stats("lighting:pitch", ("lighting", "pitch"), (("a", "b"), ("c", "d")),
                      y, y[:, :, 0, 0], [y[:, :, :, 0], y[:, :, 0, :]], None)
    assert st_.sign_crossings == 1 and st_.winner_count == 2


def test_a_block_that_moves_nothing_has_share_zero_not_nan():
    y = np.full((3, 4, 3, 3), 0.1)  # 0.1 is not exact in binary: the means round
    weights = np.ones((5, 4), dtype=np.int32)
    stats = block_stats("lighting:pitch", ("lighting", "pitch"), (("a", "b", "c"),) * 2,
                        y, y[:, :, 0, 0] + np.arange(3)[:, None], [y[:, :, :, 0], y[:, :, 0, :]], weights)
    assert stats.interaction_share == 0.0 and stats.main_share == {"lighting": 0.0, "pitch": 0.0}
    assert stats.interaction_share_ci == (0.0, 0.0)


def test_bootstrap_interval_brackets_the_estimate():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(3, 8, 3, 3))
    from harness.stats.bootstrap import prompt_weights

    w = prompt_weights(8, 300, 1)
    stats = block_stats("lighting:pitch", ("lighting", "pitch"), (("a", "b", "c"),) * 2,
                        y, y[:, :, 0, 0], [y[:, :, :, 0], y[:, :, 0, :]], w)
    lo, hi = stats.interaction_share_ci
    assert 0.0 <= lo <= stats.interaction_share <= hi <= 1.0


# ---------------------------------------------------------------------------- records and pivot


def _records(levels_scores):
    rows = []
    for gen, prompt, factor, level, score in levels_scores:
        rows.append({"evaluator": "e", "generator": gen, "prompt_id": prompt,
                     "scene_sha256": f"{hash((gen, prompt)) & (2**64 - 1):064x}",
                     "factor": factor, "level": level, "caption": f"{factor} {level}",
                     "score": score, "status": "ok", "error": ""})
    return pd.DataFrame(rows)


def test_records_accept_block_rows_and_reject_malformed_cells():
    from harness.core.errors import RecordsError
    from harness.protocol.records import validate_records

    good = _records([("g", "p", "baseline", "c0", 0.5), ("g", "p", BLOCK, "lighting=night,pitch=45", 0.4)])
    validate_records(good)
    bad = _records([("g", "p", BLOCK, "pitch=45,lighting=night", 0.4)])
    with pytest.raises(RecordsError, match="row 1, column 'level'"):
        validate_records(bad)


def test_pivot_places_cells_on_their_axes():
    from harness.stats.table import pivot_records

    rows = []
    for g, off in (("g0", 0.0), ("g1", 1.0)):
        rows.append((g, "p", "baseline", "c0", off))
        for i, light in enumerate(("city", "night")):
            for j, pitch in enumerate(("0", "45", "90")):
                rows.append((g, "p", BLOCK, f"lighting={light},pitch={pitch}", off + 10 * i + j))
    t = pivot_records(_records(rows))["e"]
    assert set(t.blocks) == {"lighting:pitch"} and "block" not in t.factors
    b = t.blocks["lighting:pitch"]
    assert b.levels == (("city", "night"), ("0", "45", "90"))
    assert b.scores.shape == (2, 1, 2, 3)
    assert b.scores[1, 0].tolist() == [[1.0, 2.0, 3.0], [11.0, 12.0, 13.0]]


# ---------------------------------------------------------------------------- summaries


def test_summary_metrics_of_blocks():
    entry = {"blocks": {"lighting:pitch": {"factors": ["lighting", "pitch"], "interaction_share": 0.2,
                                           "interaction_share_ci": [0.1, 0.3], "sign_crossings": 6}}}
    s = EvaluatorSummary.from_entry("e", entry)
    m = s.metric("interaction_share", "lighting:pitch")
    assert (m.value, m.interval, m.threshold, m.status) == (0.2, (0.1, 0.3), "max_interaction_share",
                                                            Status.MEASURED)
    assert s.metric("block_sign_crossings", "lighting:pitch").value == 6
    absent = s.metric("interaction_share", "focal_length:background")
    assert absent.status is Status.NOT_IN_PROFILE and "no block focal_length:background" in absent.reason
    with pytest.raises(MetricError):
        s.metric("interaction_share", "pitch:lighting")  # a typo never becomes a skip
    with pytest.raises(MetricError):
        s.metric("interaction_share")


def test_ofat_summaries_have_no_blocks_key():
    from harness.stats.audit_stats import compute_audit

    rows = [(g, p, "baseline", "c0", s) for g, s in (("g0", 0.1), ("g1", 0.9)) for p in ("p1", "p2")]
    summary = compute_audit(_records(rows), bootstrap=0).to_summary()
    assert "blocks" not in summary["evaluators"]["e"]


# ---------------------------------------------------------------------------- thresholds / run id


def test_block_thresholds_leave_ofat_runs_alone():
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession

    table = {"peak_rho_max": 1.0, "max_interaction_share": 0.1,
             "overrides": {"x*": {"max_block_sign_crossings": 1, "peak_rho_max": 2.0}}}
    full = Thresholds.from_table(table)
    plain = Thresholds.from_table({"peak_rho_max": 1.0, "overrides": {"x*": {"peak_rho_max": 2.0}}})
    assert full.without(block_thresholds()).to_dict() == plain.to_dict()
    smoke = AuditSession(AuditOptions(profile="smoke", thresholds=full))
    assert smoke.gate_thresholds.to_dict() == plain.to_dict()
    assert "max_interaction_share" not in smoke.gate_thresholds.for_evaluator("xy")
    inter = AuditSession(AuditOptions(profile="interactions", thresholds=full))
    assert inter.gate_thresholds is full
    assert inter.gate_thresholds.for_evaluator("xy")["max_block_sign_crossings"] == 1


def test_validate_coverage_requires_every_block_cell():
    from harness.report.validation import check_coverage

    records = _records([("g", "p", "baseline", "c0", 0.5), ("g", "p", BLOCK, "lighting=night,pitch=45", 0.4)])
    cells = ("lighting=night,pitch=45", "lighting=city,pitch=0")
    assert check_coverage(records, ({}, ()), None, cells[:1]) == []
    assert check_coverage(records, ({}, ()), None, cells) == [
        "scores/e.csv: no block=lighting=city,pitch=0 for g/p"]
