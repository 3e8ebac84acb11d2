"""Cross-protocol concordance and reproduction forensics: the known answers with
planted evaluators (no rendering), the statistics against hand-computed values, the commands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.evaluators.reference.planted import FAVOURED
from harness.peers.forensics import (
    Candidate,
    neighbours,
    parse_ordering,
    reported_margin,
    score_outcome,
)
from harness.peers.rank_concordance import concordance, tau
from harness.protocol.presets import get_preset


def run_cli(argv, capsys):
    from harness.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


# ---- statistics, hand-computed -----------------------------------------------------------


def test_tau_hand_computed():
    assert tau(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(1.0)
    assert tau(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    # one discordant pair of three: (2 - 1) / 3
    assert tau(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])) == pytest.approx(1 / 3)


def test_identical_presets_agree_and_flag_nothing():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(6, 8)) + 10.0 * np.arange(6)[:, None]
    result = concordance(np.stack([s, s]), ("a", "b"), tuple("ghijkl"), n_draws=200)
    assert result.taus[0].tau == pytest.approx(1.0) and result.taus[0].lo == pytest.approx(1.0)
    assert result.disagreements == ()
    assert result.rankings[0].order == tuple("lkjihg")


def test_a_reversal_inside_the_noise_is_not_called():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 10))
    b = a[::-1] + rng.normal(scale=0.01, size=(2, 10))  # the two generators swap, within noise
    result = concordance(np.stack([a, b]), ("a", "b"), ("x", "y"), n_draws=300)
    assert result.disagreements == ()


def test_margin_defaults_to_half_the_last_digit():
    assert reported_margin("27.23") == pytest.approx(0.005)
    assert reported_margin("30") == pytest.approx(0.5)
    with pytest.raises(Exception, match="not a number"):
        reported_margin("abc")
    with pytest.raises(Exception, match="distinct"):
        parse_ordering("a>a")


def test_score_outcome_interval_and_consistency():
    scores = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]])
    weights = np.ones((1, 3), dtype=np.int32)  # one draw: the sample itself
    cand = Candidate("p", "", "", get_preset("mate3d"))
    out = score_outcome(cand, scores, ("x", "y"), weights, score=2.0, margin=0.0, generator="x", level=0.95)
    assert out.value == 2.0 and out.lo == out.hi == 2.0 and out.consistent
    out = score_outcome(cand, scores, ("x", "y"), weights, score=2.4, margin=0.5, generator=None, level=0.95)
    assert out.value == pytest.approx(3.5) and not out.consistent


def test_neighbours_move_one_parameter_each():
    cands = neighbours(get_preset("mate3d"))
    assert cands[0].parameter == "" and cands[0].protocol == get_preset("mate3d")
    params = {c.parameter for c in cands[1:]}
    assert {"elevation", "azimuth", "fov", "resolution", "ambient", "background", "texture", "passes",
            "geometry", "tiling", "aggregation", "framing"} <= params
    for c in cands[1:]:
        changed = {k for k, v in c.protocol.to_dict().items() if v != get_preset("mate3d").to_dict()[k]}
        assert changed - {"name"} and len(changed - {"name", "views"}) <= 1


# ---- known answers (planted evaluators, smoke scenes, no rendering) ----------------------


def test_tiling_preference_flips_the_winner_and_the_band_confirms_it(capsys):
    # 6 prompts: the interval policy's minimum for a confirmation (the smoke profile's 2 are not)
    data = run_cli(["concordance", "--evaluator", "preset-tiling", "--presets", "3dcodebench,3d-defectbench",
                    "--profile", "default", "--bootstrap", "300", "--json"], capsys)
    assert data["confirmable"] is True and data["reason"] == "" and data["prompts"] == 6
    assert data["rankings"]["3dcodebench"]["order"][0] == "faithful"
    assert data["rankings"]["3d-defectbench"]["order"][0] in FAVOURED  # the grid crowns a favoured one
    confirmed = {(d["first"], d["second"], d["above_under"]) for d in data["disagreements"]}
    assert ("faithful", "gridded", "3dcodebench") in confirmed
    tau = data["kendall_tau"][0]
    assert tau["lo"] <= tau["tau"] <= tau["hi"] < 1.0
    assert data["answer"].startswith("answer: the order depends on the preset: ")


def test_the_answer_is_one_line_and_the_list_is_cut(capsys):
    """Many confirmed reversals: the terminal lists a few, says how many more and where, and
    ends with the one-line answer."""
    from harness.cli import main

    assert main(["concordance", "--evaluator", "preset-tiling", "--presets", "3dcodebench,3d-defectbench",
                 "--profile", "default", "--bootstrap", "300"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("answer: the order depends on the preset: ")
    listed = [line for line in lines if " above " in line and " below under " in line]
    assert 1 <= len(listed) <= 8
    assert not any(" more confirmed reversals " in line for line in lines) or len(listed) == 8


def test_two_prompts_confirm_no_disagreement_and_say_why(capsys):
    data = run_cli(["concordance", "--evaluator", "preset-tiling", "--presets", "3dcodebench,3d-defectbench",
                    "--bootstrap", "300", "--json"], capsys)
    assert data["rankings"]["3d-defectbench"]["order"][0] in FAVOURED  # the rankings are still given
    assert data["disagreements"] == [] and data["confirmable"] is False
    assert data["reason"] == "not confirmable: 2 prompts (needs 6)"
    assert data["answer"].startswith("answer: not confirmable: 2 prompts (needs 6): whether the order")
    tau = data["kendall_tau"][0]
    assert tau["lo"] <= tau["tau"] <= tau["hi"]  # an interval is still printed


def test_max_over_views_preference_flips_the_winner(capsys):
    data = run_cli(["concordance", "--evaluator", "preset-viewspike", "--presets", "mate3d,t3bench",
                    "--max-views", "210", "--profile", "default", "--bootstrap", "300", "--json"], capsys)
    assert data["protocols"]["t3bench@scaled"]["icosphere"] == [1, 5]
    assert data["rankings"]["mate3d"]["order"][0] == "faithful"
    assert data["rankings"]["t3bench@scaled"]["order"][0] in FAVOURED
    assert any(d["above_under"] == "t3bench@scaled" and d["second"] == "faithful" for d in data["disagreements"])


def test_robust_evaluator_has_no_confirmed_disagreement(capsys):
    data = run_cli(["concordance", "--evaluator", "planted-robust", "--presets", "mate3d,3d-defectbench",
                    "--bootstrap", "200", "--json"], capsys)
    assert data["disagreements"] == [] and data["kendall_tau"][0]["tau"] == pytest.approx(1.0)
    assert data["answer"].startswith("answer: ")


def test_forensics_recovers_the_hidden_preset(capsys):
    presets = "mate3d,3dcodebench,3d-defectbench"
    hidden = run_cli(["concordance", "--evaluator", "preset-viewspike", "--presets", "mate3d,3dcodebench",
                      "--bootstrap", "100", "--json"], capsys)
    reported = f"{hidden['rankings']['mate3d']['means']['gridded']:.3f}"
    data = run_cli(["reproduce", "--evaluator", "preset-viewspike", "--score", reported, "--generator", "gridded",
                    "--presets", presets, "--bootstrap", "300", "--json"], capsys)
    assert "mate3d" in data["consistent"]
    assert "3d-defectbench" not in data["consistent"]
    undisclosed = {(s["preset"], s["parameter"]) for s in data["sensitive"] if not s["disclosed"]}
    assert ("mate3d", "aggregation") in undisclosed  # MATE-3D does not state its view reduction
    assert all(c["lo"] <= c["score"] <= c["hi"] for c in data["candidates"] if c["score"] is not None)


def test_forensics_on_an_ordering(capsys):
    data = run_cli(["reproduce", "--evaluator", "preset-tiling", "--ordering", "cluttered>faithful",
                    "--presets", "3dcodebench,3d-defectbench", "--bootstrap", "200", "--json"], capsys)
    assert "3d-defectbench" in data["consistent"] and "3dcodebench" not in data["consistent"]


def test_bad_generator_is_a_one_line_error(capsys):
    from harness.cli import main

    assert main(["reproduce", "--evaluator", "preset-tiling", "--ordering", "nobody>faithful",
                 "--presets", "mate3d", "--bootstrap", "50"]) == 2
    assert "generator 'nobody' is not in the scored scenes" in capsys.readouterr().err


# ---- presentation probes -----------------------------------------------------------------


def test_order_agreement_hand_computed():
    from harness.peers.presentation_probes import order_agreement

    a = np.array([[3.0, 1.0], [2.0, 2.0], [1.0, 3.0]])  # prompt 0: x > y > z; prompt 1: z > y > x
    assert order_agreement(a, a) == 1.0
    b = a.copy()
    b[:, 1] = [1.0, 2.0, 3.0]  # prompt 1 unchanged order
    b[:, 0] = [1.0, 2.0, 3.0]  # prompt 0 fully reversed: 3 of 6 comparisons flip
    assert order_agreement(a, b) == pytest.approx(0.5)
    weights = np.array([[2, 0], [0, 2]], dtype=np.int32)  # draw 0: prompt 0 twice, draw 1: prompt 1
    assert np.allclose(order_agreement(a, b, weights), [0.0, 1.0])


def test_tiled_probe_fails_an_evaluator_that_prefers_grids(capsys):
    from harness.cli import main

    assert main(["concordance", "--evaluator", "preset-tiling", "--presets", "mate3d,3dcodebench",
                 "--probes", "all", "--bootstrap", "200", "--json"]) == 1
    results = {r["probe"]: r for r in json.loads(capsys.readouterr().out)["presentation_probes"]["results"]}
    assert not results["tiled"]["passed"] and results["tiled"]["agreement"] < 0.8
    assert results["untextured"]["passed"] and results["normal_map"]["passed"]  # it never reads pixels
    assert results["points"]["passed"]


def test_robust_evaluator_passes_every_presentation_probe(capsys):
    data = run_cli(["concordance", "--evaluator", "planted-robust", "--presets", "3d-defectbench,3dcodebench",
                    "--probes", "all", "--bootstrap", "100", "--json"], capsys)
    assert all(r["passed"] and r["agreement"] == 1.0 for r in data["presentation_probes"]["results"])


# ---- invariants -----------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (2, 4, 5), elements=st.floats(-5, 5)), st.permutations(range(4)))
def test_concordance_does_not_depend_on_preset_or_generator_order(scores, perm):
    gens = ("g0", "g1", "g2", "g3")
    base = concordance(scores, ("a", "b"), gens, n_draws=50, seed=3)
    swapped = concordance(scores[::-1], ("b", "a"), gens, n_draws=50, seed=3)
    relabelled = concordance(scores[:, list(perm)], ("a", "b"), tuple(gens[i] for i in perm), n_draws=50, seed=3)
    assert swapped.taus[0].tau == pytest.approx(base.taus[0].tau, nan_ok=True)
    assert relabelled.taus[0].tau == pytest.approx(base.taus[0].tau, nan_ok=True)

    def calls(result):
        return {(frozenset((d.first, d.second)), d.a, d.b, d.first) for d in result.disagreements}

    assert calls(swapped) == calls(base)
    assert {r.preset: r.means for r in relabelled.rankings} == {r.preset: r.means for r in base.rankings}


def test_reproduce_counts_a_repeated_preset_once(capsys):
    once = run_cli(["reproduce", "--evaluator", "preset-tiling", "--score", "0.9", "--presets", "mate3d",
                    "--bootstrap", "50", "--json"], capsys)
    twice = run_cli(["reproduce", "--evaluator", "preset-tiling", "--score", "0.9", "--presets", "mate3d,mate3d",
                     "--bootstrap", "50", "--json"], capsys)
    assert [c["label"] for c in twice["candidates"]] == [c["label"] for c in once["candidates"]]
