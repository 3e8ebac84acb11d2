"""Is the evaluator repeatable? (docs/evaluators.md, "Repeatability")

The first thing to rule out before any protocol fragility: the same inputs scored again must
give the same numbers. A fixed sample of the run's c0 inputs is scored in batches of 1, in one
batch of N and in a fresh process that builds the evaluator anew, bypassing the score cache;
the largest absolute difference must not exceed ``max_repeatability_diff`` (0 by default; a
project may set a tolerance, e.g. for a GPU scorer). A sample that cannot be scored every way
fails with the reason.
"""

import pytest

from harness.audit_api import MAX_REPEATABILITY_DIFF, REPEATABILITY


def test_repeatability(audit_evaluator, audit_repeatability, audit_check):
    r = audit_repeatability
    if r.error:
        pytest.fail(f"repeatability of {audit_evaluator} could not be measured: {r.error}", pytrace=False)
    w = r.where  # the largest difference: which pass, which scene
    audit_check(REPEATABILITY if w is None else f"{REPEATABILITY}[{w['pass']}, {w['scene']}]",
                r.max_abs_diff, MAX_REPEATABILITY_DIFF)
