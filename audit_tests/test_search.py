"""Does the verdict break somewhere beyond the grid? (a profile's ``search`` block, docs/search.md)

A profile may declare a search block (objective, budget, split, seed, flip points). Each
evaluator is then searched once: the worst configuration found on the discovery prompts is
measured on held-out prompts, and ``test_worst_case`` fails when it is *confirmed* — the
held-out interval's lower bound exceeds the objective's threshold (``max_worst_case_rho``,
``max_worst_case_ranking_distance`` or ``max_worst_case_pair_reversal``). ``test_flip_region``
bounds the share of a Sobol sample of the space where the pair's order (or the c0 winner)
flips (``max_flip_share``, Wilson lower bound). Under a profile without a search block these
checks are not collected at all, so such a run's results, run id and cards stay as they were.
"""

import pytest

from harness.audit_api import Bound


def test_worst_case(audit_evaluator, audit_search, audit_check):
    held = audit_search["held_out"]
    if held is None:
        pytest.skip("not applicable: the search measured no worst configuration (every trial failed)")
    audit_check(f"worst_case[{audit_search['objective']}]", held["estimate"], held["threshold"]["name"],
                interval=held["interval"], bound=Bound.LOWER)  # fmt: skip


def test_flip_region(audit_evaluator, audit_search, audit_check):
    region = audit_search["flip_region"]
    if region is None:
        pytest.skip("not applicable: the profile's search block samples no flip region (flip_points 0)")
    audit_check(f"flip_share[{region['verdict']}]", region["share"], "max_flip_share",
                interval=region["interval"], bound=Bound.LOWER,  # "points": the defined ones
                interval_kind=f"Wilson interval over {region['points']} Sobol points")  # fmt: skip
