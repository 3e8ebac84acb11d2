"""Does the verdict break somewhere beyond the grid? (a profile's ``search`` block, docs/search.md)

A profile may declare a search block (objective, budget, split, seed, flip points). Each
evaluator is then searched once: the worst configuration found on the discovery prompts is
measured on held-out prompts, and ``test_worst_case`` fails when it is *confirmed* — the
held-out interval's lower bound exceeds the objective's threshold (``max_worst_case_rho``,
``max_worst_case_ranking_distance`` or ``max_worst_case_pair_reversal``); with too few held-out
prompts for a verdict at the nominal level it is skipped, "not confirmable". ``test_flip_region``
bounds the share of a Sobol sample of the space where the pair's order (or the c0 winner)
flips (``max_flip_share``, Wilson lower bound). Under a profile without a search block these
checks are not collected at all, so such a run's results, run id and cards stay as they were.

``test_saved_level`` turns a confirmed worst configuration saved by ``t3d-audit search
--save-level NAME --into FILE`` into a regression check: with ``--audit-profile-file FILE`` each
saved level of the run's profile is measured on the run's prompts against c0 and fails when the
lower bound of its effect exceeds its objective's threshold (collected only with saved levels).
"""

import pytest

from harness.audit_api import Bound


def test_worst_case(audit_evaluator, audit_search, audit_check):
    held = audit_search["held_out"]
    if held is None:
        pytest.skip("not applicable: the search measured no worst configuration (every trial failed)")
    if held.get("reason"):  # too few held-out prompts for any verdict at the nominal level
        pytest.skip(f"not applicable: {held['reason']}")
    audit_check(f"worst_case[{audit_search['objective']}]", held["estimate"], held["threshold"]["name"],
                interval=held["interval"], bound=Bound.LOWER,  # over the held-out prompts, not the run's
                interval_kind=f"{held.get('method', 'bootstrap')} interval over {held['prompts']} held-out prompts")  # fmt: skip


def test_flip_region(audit_evaluator, audit_search, audit_check):
    region = audit_search["flip_region"]
    if region is None:
        pytest.skip("not applicable: the profile's search block samples no flip region (flip_points 0)")
    audit_check(f"flip_share[{region['verdict']}]", region["share"], "max_flip_share",
                interval=region["interval"], bound=Bound.LOWER,  # "points": the defined ones
                interval_kind=f"Wilson interval over {region['points']} Sobol points")  # fmt: skip


def test_saved_level(audit_evaluator, audit_saved_level, audit_check):
    """A confirmed worst configuration of an earlier search, saved as a named level
    (``search --save-level NAME --into FILE``) and audited with ``--audit-profile-file FILE``:
    its effect against c0 on this run's prompts, lower bound against the objective's threshold.
    Collected only when the file gives the run's profile saved levels."""
    level = audit_saved_level
    if level["estimate"] is None and level["error"]:
        pytest.fail(f"saved level {level['name']} could not be measured: {level['error']}", pytrace=False)
    audit_check(f"saved_level[{level['name']}]", level["estimate"], level["threshold"]["name"],
                interval=level["interval"], bound=Bound.LOWER)
