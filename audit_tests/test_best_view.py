"""How much would picking the best camera pose per scene inflate scores? (study §4.6)

Best-view inflation: median over scenes of the best pitch/yaw score over the default-view score.
"""


def test_best_view_inflation(audit_evaluator, audit_stats, audit_check):
    audit_check("best_view_inflation", audit_stats["best_view_inflation"], "max_best_view_inflation")
