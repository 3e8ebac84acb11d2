"""Do winner reversals survive selection-aware inference? (study §4.4, simultaneous band)

A reversal: two levels of one factor with distinct unique winners whose pair intervals exclude
zero in opposite directions. The simultaneous band covers every (evaluator, generator pair,
protocol) contrast, so this test looks at all selected evaluators together.
"""


def test_confirmed_reversals(audit_panel, audit_check):
    audit_check(
        "confirmed reversals (simultaneous band)",
        audit_panel["reversals"]["simultaneous"],
        "max_confirmed_reversals",
    )
