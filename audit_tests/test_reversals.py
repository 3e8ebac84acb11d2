"""Do winner reversals survive selection-aware inference? (study §4.4, simultaneous band)

A reversal: two levels of one factor with distinct unique winners whose pair intervals exclude
zero in opposite directions. The simultaneous band covers every (evaluator, generator pair,
protocol) contrast, so this test looks at all selected evaluators together. With fewer than 6
prompts no reversal is confirmed (the count is 0; the report says "not confirmable").
"""


def test_confirmed_reversals(audit_panel_summary, audit_check):
    audit_check.metric(audit_panel_summary, "reversals", "simultaneous")
