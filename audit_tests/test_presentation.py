"""Does the verdict depend on the presentation alone? (docs/protocols.md)

Under ``--audit-view-policy=preset:NAME`` each presentation probe (textured vs untextured, shaded
vs normal map, separate views vs one tiled grid, mesh vs points) scores the scenes twice around
the preset. The *presentation agreement* is the share of (generator pair, prompt) comparisons
whose order is the same under both; ``min_presentation_agreement`` bounds it from below. Runs
under any other view policy do not collect this check.
"""

from harness.audit_api import MIN_PRESENTATION_AGREEMENT, PRESENTATION_AGREEMENT


def test_presentation_agreement(audit_evaluator, audit_presentation_probe, audit_presentation, audit_check):
    r = audit_presentation
    audit_check(f"{PRESENTATION_AGREEMENT}[{audit_presentation_probe}]", r.agreement, MIN_PRESENTATION_AGREEMENT,
                interval=(r.lo, r.hi))
