"""How much would picking the best camera pose per scene inflate scores? (study §4.6)

Best-view inflation: median over scenes of the best pitch/yaw score over the default-view score.
"""


def test_best_view_inflation(audit_evaluator, audit_summary, audit_check):
    audit_check.metric(audit_summary, "best_view_inflation")
