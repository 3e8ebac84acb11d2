"""The flip check's words (issue 40). ``test_flip_region``'s interval is a Wilson interval over Sobol
points, and its check says so; every other check keeps "the bootstrap lower bound".
"""

from __future__ import annotations

import pytest

from harness.assertions import AuditCheck, Bound
from harness.check_wording import rule

# ------------------------------------------------------------------------------ wording


def _outcome(**kw):
    recorded = []
    check = AuditCheck(evaluator="ev", thresholds={"max_flip_share": 0.0}, record=recorded.append,
                       blocks=lambda: 2)  # fmt: skip
    with pytest.raises(AssertionError) as info:
        check("flip_share[c0 winner]", 0.02, "max_flip_share", interval=[0.003, 0.08], bound=Bound.LOWER, **kw)
    return recorded[0], str(info.value)


def test_the_flip_check_names_its_wilson_interval_not_a_bootstrap():
    """Regression: the flip share's Wilson interval over Sobol points was called "the bootstrap
    lower bound" with a "small sample: 2 prompt blocks" note."""
    outcome, message = _outcome(interval_kind="Wilson interval over 64 Sobol points")
    assert outcome["interval_kind"] == "Wilson interval over 64 Sobol points" and "blocks" not in outcome
    assert message == ("flip_share[c0 winner] of ev: the lower bound 0.003 (estimate 0.02, 95% Wilson interval "
                       "over 64 Sobol points [0.003, 0.08]), must be ≤ 0.00 (max_flip_share): fails")  # fmt: skip
    assert "bootstrap" not in message and "prompt block" not in message


def test_other_checks_keep_the_bootstrap_wording():
    outcome, message = _outcome()
    assert "interval_kind" not in outcome and outcome["blocks"] == 2
    assert message == ("flip_share[c0 winner] of ev: the bootstrap lower bound 0.003 (estimate 0.02, 95% CI "
                       "[0.003, 0.08]; small sample: 2 prompt blocks, under 10), must be ≤ 0.00 (max_flip_share): "
                       "fails")  # fmt: skip
    missing = rule({**outcome, "tested": None, "interval_kind": "Wilson interval over 8 Sobol points"})
    assert "its Wilson interval over 8 Sobol points is not available" in missing


def test_the_audit_flip_check_passes_its_interval_kind():
    from harness.paths import REPO_ROOT

    text = (REPO_ROOT / "audit_tests" / "test_search.py").read_text()
    assert 'interval_kind=f"Wilson interval over {region[\'points\']} Sobol points"' in text
