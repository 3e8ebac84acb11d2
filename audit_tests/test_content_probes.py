"""Do scores drop when the scene content is degraded? (study §4.5, content probes)

Directional discrimination: over intact/probe scene pairs, a strict drop counts 1, an exact tie
0.5 and a rise 0; chance is 50 %.
"""

import pytest

from harness.thresholds import PROBE_THRESHOLDS


def test_discrimination(audit_evaluator, audit_probe, audit_stats, audit_check):
    if audit_probe not in audit_stats["discrimination"]:
        pytest.skip(f"no {audit_probe} records in this run")
    audit_check(
        f"discrimination[{audit_probe}]",
        audit_stats["discrimination"][audit_probe],
        PROBE_THRESHOLDS[audit_probe],
        interval=audit_stats["intervals"]["discrimination"].get(audit_probe),
    )
