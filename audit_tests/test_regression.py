"""Is this release more fragile than the previous one, beyond noise? (``--audit-baseline``)

Runs only with ``pytest --audit-baseline=PATH`` (a report directory, a saved baseline or a
score file of the previous release); otherwise it is skipped. One test per evaluator and
metric, e.g. ``test_no_regression[clip-v2-rho-pitch]``: it fails when the paired bootstrap's
simultaneous interval of candidate − baseline lies beyond the metric's margin in the harmful
direction. Margins: ``[tool.t3d-audit.compare]``; see docs/release-gate.md.
"""


def test_no_regression(audit_baseline_metric):
    audit_baseline_metric.check()
