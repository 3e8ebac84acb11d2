"""Are pairwise generator comparisons settled across all shared protocols? (study §4.3)

The margin envelope of a generator pair is [min, max] of its mean-score difference over every
shared protocol. The project gates ``max_sign_crossings = 0``: no pair's reported order may
depend on the protocol. ``min_strict_pairs`` (also excluding pairs whose envelope only touches
zero) is left for a project to declare; an undeclared gate is skipped, not passed.
"""


def test_strict_pairs(audit_evaluator, audit_summary, audit_check):
    """Opt-in: gates only where the project declares ``min_strict_pairs`` under
    ``[tool.t3d-audit.thresholds]``. The study has no default for it (a built-in value would
    enter every run id and card), so elsewhere this skips with the reason "no threshold
    min_strict_pairs declared" (tests/test_gate_integrity.py checks both ways)."""
    audit_check.metric(audit_summary, "envelopes", "strict")


def test_sign_crossings(audit_evaluator, audit_summary, audit_check):
    audit_check.metric(audit_summary, "envelopes", "sign_crossing")
