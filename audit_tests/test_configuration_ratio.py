"""Does configuration variance rival the generator signal? (study §4.1, ρ and peak ρ)

ρ(f) = mean over scenes of the variance across the levels of factor f, divided by the variance
of the generators' baseline means. ρ > 1: changing the protocol moves scores more than
changing the generator does.
"""

import pytest


def test_rho(audit_evaluator, audit_factor, audit_stats, audit_check):
    if audit_factor not in audit_stats["rho"]:
        pytest.skip(f"no {audit_factor} records in this run")
    audit_check(
        f"rho[{audit_factor}]",
        audit_stats["rho"][audit_factor],
        "peak_rho_max",
        interval=audit_stats["intervals"]["rho"].get(audit_factor),
    )


def test_peak_rho_lower_bound(audit_evaluator, audit_stats, audit_check):
    # fragility confirmed beyond prompt-sampling noise: the bootstrap lower bound exceeds the bound
    audit_check(
        "peak_rho", audit_stats["peak_rho"], "peak_rho_max",
        interval=audit_stats["peak_rho_ci"], compare="lower",
    )
