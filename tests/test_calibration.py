"""The interval policy's calibration at the sizes users run, against known answers.

Small seeded versions of ``benchmarks/bench_calibration.py`` (its tables are in
docs/intervals.md): coverage of the study's intervals at 6 prompts under the known-truth model
of ``tests/_calibration.py``, false confirmations under nulls (best configuration, concordance,
the stability check at its boundary) and the noisy planted evaluators (planted-boundary at its
threshold, planted-noise without an effect). Each rate is held to its nominal level plus
Monte Carlo error (a binomial 99.9 % quantile), and each regression check also runs under the
plain percentile policy (no expansion, no minimum), where it must fail.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.human import protocol_dependence as hp
from harness.peers.rank_concordance import concordance
from harness.stats.bootstrap import prompt_weights
from harness.stats.intervals import DEFAULT_POLICY, IntervalPolicy, interval
from tests._calibration import (
    PLAIN,
    Model,
    agreement_null,
    concordance_null,
    draw,
    drop_boundary,
    statistics,
    true_values,
)


def tolerance(reps: int, rate: float) -> int:
    """The most events a ``rate`` process gives in ``reps`` trials but 1 time in 1000."""
    return int(sps.binom.ppf(0.999, reps, rate))


def test_the_minimum_is_six_prompts_at_95_percent():
    # 2^-n, the most extreme sign pattern of n prompts under a symmetric null, must not exceed
    # the lower bound's one-sided error 2.5 %: 2^-5 = 3.1 % > 2.5 % >= 2^-6 = 1.6 %
    assert DEFAULT_POLICY.min_blocks() == 6 and 2.0**-5 > 0.025 >= 2.0**-6


# ------------------------------------------------------------------------------ coverage


def _coverage(n_prompts: int, names: tuple[str, ...], reps: int, skewed: bool, seed: int) -> dict:
    """(statistic, policy) → intervals holding the population value, of ``reps`` replications."""
    truth = true_values(Model(skewed=skewed))
    rng = np.random.default_rng(seed)
    held = {(n, p): 0 for n in names for p in ("study", "plain")}
    for r in range(reps):
        stats_ = statistics(draw(Model(skewed=skewed), n_prompts, rng))
        weights = prompt_weights(n_prompts, 400, seed * 1000 + r)
        for name in names:
            d = stats_[name](weights)
            for key, policy in (("study", DEFAULT_POLICY), ("plain", PLAIN)):
                lo, hi = interval(d, n_blocks=n_prompts, policy=policy).as_tuple()
                held[(name, key)] += lo <= truth[name] <= hi
    return held


@pytest.mark.parametrize("skewed", [False, True], ids=["symmetric", "skewed"])
def test_six_prompt_intervals_cover_at_the_nominal_level(skewed):
    """Kendall's W, discrimination and agreement r at 6 prompts: the study method covers within
    Monte Carlo error of 95 %; the plain percentile interval, on the same draws, does not."""
    reps = 150
    names = ("kendall_w", "discrimination", "agreement_r")
    held = _coverage(6, names, reps, skewed, seed=3 + skewed)
    misses_study = sum(reps - held[(n, "study")] for n in names)
    misses_plain = sum(reps - held[(n, "plain")] for n in names)
    bound = tolerance(len(names) * reps, 0.05)
    assert misses_study <= bound, (held, bound)
    assert misses_plain > bound, (held, bound)


def test_rho_at_six_prompts_is_covered_more_often_than_by_the_plain_percentile():
    """ρ's estimator is biased low with few prompts (its denominator holds the prompts' noise),
    so no percentile-type interval reaches 95 % at 6 (docs/intervals.md): the study method
    covers clearly more often than the plain percentile, and misses only on the low side."""
    reps = 800
    held = _coverage(6, ("rho",), reps, False, seed=5)
    assert held[("rho", "study")] >= 0.83 * reps > held[("rho", "plain")], held


# ------------------------------------------------------------------------------ confirmations


def _best_confirmed(n_prompts: int, reps: int, policy: IntervalPolicy, seed: int) -> tuple[int, set[str]]:
    rng = np.random.default_rng(seed)
    confs = ["c0", *[f"f={i}" for i in range(5)]]
    hits, reasons = 0, set()
    for r in range(reps):
        scores, human, prompts = agreement_null(n_prompts, len(confs), rng)
        best = hp.best_configuration(scores, human, prompts, confs, "c0", r, n_draws=300, policy=policy)
        hits += best["confirmed"]
        reasons.add(best["reason"])
    return hits, reasons


def test_best_configuration_is_not_confirmable_on_three_held_out_prompts():
    """6 prompts leave 3 held out: the plain percentile confirms about 9 % of null picks there."""
    hits, reasons = _best_confirmed(6, 120, DEFAULT_POLICY, seed=1)
    assert hits == 0
    assert reasons <= {"not confirmable: 3 held-out prompts (needs 6)",
                       "c0 agrees best on the selection half: nothing to confirm"}
    plain, _ = _best_confirmed(6, 120, PLAIN, seed=1)
    assert plain > tolerance(120, 0.025), plain


def test_best_configuration_on_six_held_out_prompts_holds_its_nominal_rate():
    hits, _ = _best_confirmed(12, 150, DEFAULT_POLICY, seed=2)
    assert hits <= tolerance(150, 0.025), hits


def _concordance_false(n_prompts: int, reps: int, policy: IntervalPolicy, seed: int) -> tuple[int, set[str]]:
    rng = np.random.default_rng(seed)
    hits, reasons = 0, set()
    for r in range(reps):
        scores = concordance_null(n_prompts, 3, 6, rng)
        found = concordance(scores, ("a", "b", "c"), tuple("ghijkl"), n_draws=300, seed=r, policy=policy)
        hits += bool(found.disagreements)
        reasons.add(found.reason)
    return hits, reasons


def test_concordance_confirms_nothing_on_two_prompts_and_says_why():
    """No preset reverses anything; with 2 prompts the plain percentile band calls a disagreement in most runs."""
    hits, reasons = _concordance_false(2, 40, DEFAULT_POLICY, seed=4)
    assert hits == 0 and reasons == {"not confirmable: 2 prompts (needs 6)"}
    plain, _ = _concordance_false(2, 40, PLAIN, seed=4)
    assert plain > 20, plain


def test_concordance_on_six_prompts_is_family_wise_at_five_percent():
    hits, reasons = _concordance_false(6, 150, DEFAULT_POLICY, seed=5)
    assert reasons == {""} and hits <= tolerance(150, 0.05), hits


def _stability_false(n_prompts: int, reps: int, policy: IntervalPolicy, seed: int) -> tuple[int, int]:
    """(checks failed, checks not confirmable) with one level's true drop exactly at 0.1."""
    rng = np.random.default_rng(seed)
    fails = refused = 0
    for r in range(reps):
        scores, human, blocks = drop_boundary(n_prompts, 1, 0.1, rng)
        w = prompt_weights(n_prompts, 400, 10_000 + r)
        f = hp.factor_envelopes(hp.configuration_draws(scores, human, blocks, w), ["c0", "f=0"], {"f=0": ("f", "0")},
                                "c0", drops=hp.paired_drop_draws(scores, human, blocks, w, 0), n_blocks=n_prompts,
                                policy=policy)["f"]  # fmt: skip
        refused += not f["interval"]["confirmable"]
        lo = f["max_drop_ci"][0]
        fails += f["interval"]["confirmable"] and lo is not None and lo > 0.1
    return fails, refused


def test_the_stability_check_is_not_confirmable_on_two_prompts():
    fails, refused = _stability_false(2, 60, DEFAULT_POLICY, seed=6)
    assert fails == 0 and refused == 60
    plain, _ = _stability_false(2, 60, PLAIN, seed=6)
    assert plain > 60 * 0.025, plain  # the plain percentile rule fails it more often than its nominal 2.5 %


def test_the_stability_check_at_its_boundary_holds_its_nominal_rate():
    fails, refused = _stability_false(6, 200, DEFAULT_POLICY, seed=7)
    assert refused == 0 and fails <= tolerance(200, 0.025), fails


def test_a_bound_check_below_the_minimum_is_skipped_as_not_confirmable():
    from harness.checks.assertions import AuditCheck, Bound, CheckSkipped

    def check(blocks: int) -> object:
        audit = AuditCheck(evaluator="ev", thresholds={"peak_rho_max": 1.0}, blocks=lambda: blocks)
        return audit("peak ρ", 1.8, "peak_rho_max", interval=[1.2, 2.5], bound=Bound.LOWER)

    with pytest.raises(CheckSkipped, match=r"not confirmable: 2 prompts \(needs 6\)"):
        check(2)
    with pytest.raises(AssertionError, match=r"lower bound 1\.20"):
        check(6)


# ------------------------------------------------------------------------------ noisy planted members


def _boundary_matrices(profile_name: str, factor: str) -> tuple[np.ndarray, list[np.ndarray], tuple[str, ...]]:
    """planted-boundary's scores on the bundled scenes of ``profile_name``: (c0 (G, P), one
    (G, P) matrix per level of ``factor``, generators); no render, no scene read."""
    from harness.evaluators.reference.items import ScoreContext, ScoreItem
    from harness.evaluators.reference.planted import QualityBase, make_planted
    from harness.protocol.profiles import get_profile
    from harness.scenes.scene_source import load_scene_set

    profile = get_profile(profile_name)
    scenes = load_scene_set(None).select(prompts=profile.prompts, generators=profile.generators)
    gens = tuple(sorted({s.generator for s in scenes.scenes}))
    prompts = sorted({s.prompt_id for s in scenes.scenes})
    by_cell = {(s.generator, s.prompt_id): s for s in scenes.scenes}
    evaluator = make_planted("planted-boundary", QualityBase())

    def matrix(cfg) -> np.ndarray:
        items = [ScoreItem(by_cell[(g, p)], None, "", ScoreContext(g, cfg)) for g in gens for p in prompts]
        return np.array([r.score for r in evaluator.score_items(items)]).reshape(len(gens), len(prompts))

    configs = profile.configurations()
    base = matrix(next(c for c in configs if c.factor == "baseline"))
    return base, [matrix(c) for c in configs if c.factor == factor], gens


def test_planted_boundary_sits_at_the_threshold_and_the_held_out_confirmation_holds_its_rate():
    """Every configuration of planted-boundary has true ρ against c0 exactly 1 (the search's
    max_worst_case_rho); each template level of the default profile is an independent
    replication of the held-out confirmation's interval at its own boundary on 6 prompts (the
    held-out method, as :func:`harness.search.confirm.confirm` reads it, from vectorised
    draws); on the smoke profile's 2 prompts ``confirm`` gives no verdict."""
    from harness.search.confirm import confirm
    from harness.search.objectives import parse_objective
    from harness.stats.bootstrap import rho_draws

    base, levels, gens = _boundary_matrices("default", "template")
    objective = parse_objective("shift", gens)
    effects = np.array([objective.effect(base, moved) for moved in levels])
    assert abs(effects.mean() - 1.0) < 4 * effects.std(ddof=1) / math.sqrt(effects.size)  # unbiased at 1
    confirmed = 0
    for i, moved in enumerate(levels):
        w = prompt_weights(6, DEFAULT_POLICY.held_out_min_draws, i)
        draws = rho_draws((((moved - base) / 2.0) ** 2)[None], base, w)[:, 0]  # the shift objective
        found = interval(draws, n_blocks=6, method=DEFAULT_POLICY.held_out_method)
        confirmed += found.confirmable and found.low > 1.0
    assert confirmed <= tolerance(len(levels), 0.025), (confirmed, len(levels))
    base2, levels2, _ = _boundary_matrices("smoke", "pitch")
    smoke = confirm(objective, base2, levels2[-1], threshold=1.0, bootstrap=200, seed=0, min_prompts=6)
    assert not smoke.confirmed and smoke.reason.startswith("not confirmable: 2 held-out prompts")


def test_planted_noise_confirms_no_disagreement_and_not_on_two_prompts(capsys):
    from harness.cli import main

    for profile, confirmable in (("default", True), ("smoke", False)):
        assert main(["concordance", "--evaluator", "planted-noise", "--presets", "3dcodebench,3d-defectbench",
                     "--profile", profile, "--bootstrap", "400", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["disagreements"] == [] and doc["confirmable"] is confirmable
        assert doc["reason"] == ("" if confirmable else "not confirmable: 2 prompts (needs 6)")
