"""Are pairwise generator comparisons settled across all shared protocols? (study §4.3)

The margin envelope of a generator pair is [min, max] of its mean-score difference over every
shared protocol. Declare ``min_strict_pairs`` / ``max_sign_crossings`` in
``[tool.t3d-audit.thresholds]`` to gate on them; undeclared gates are skipped, not passed.
"""


def test_strict_pairs(audit_evaluator, audit_stats, audit_check):
    audit_check("strictly ordered pairs", audit_stats["envelopes"]["strict"], "min_strict_pairs")


def test_sign_crossings(audit_evaluator, audit_stats, audit_check):
    audit_check("sign-crossing pairs", audit_stats["envelopes"]["sign_crossing"], "max_sign_crossings")
