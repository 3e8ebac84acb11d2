"""Do scores drop when the scene content is degraded? (study §4.5, content probes)

Directional discrimination: over intact/probe scene pairs, a strict drop counts 1, an exact tie
0.5 and a rise 0; chance is 50 %. Each probe has its own threshold (scrambled:
``min_scramble_discrimination``, keep_half and biggest_only: ``min_removal_discrimination``,
worst_objects: ``min_worst_objects_discrimination``).
"""


def test_discrimination(audit_evaluator, audit_probe, audit_summary, audit_check):
    audit_check.metric(audit_summary, "discrimination", audit_probe)
