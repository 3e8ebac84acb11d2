"""Does the evaluator agree with people, and does that agreement survive the protocol? (--audit-human)

With human ratings (``--audit-human FILE``, docs/human-agreement.md "In an audit"), each
evaluator's records are joined with the mean rating of each rated scene. Agreement is Pearson
r, the unit of the raters' noise ceiling. ``min_human_agreement`` bounds it at c0;
``max_human_agreement_drop`` bounds, per factor, the largest drop from c0 over the factor's
levels (each level against c0 on the items both cover) — tested on the lower bound of an
interval simultaneous over the factor's levels, so only a drop the prompts confirm fails, and a
factor with hundreds of levels is not hundreds of chances to fail by noise. With fewer prompts
than the interval policy's minimum (6) the bound confirms nothing and the check skips, "not
confirmable".
Without human data both checks are skipped as not applicable.
"""

import pytest

from harness.checks.assertions import Bound


def test_human_agreement(audit_evaluator, audit_human_agreement, audit_check):
    c0 = audit_human_agreement["c0"]
    audit_check("human agreement (pearson at c0)", c0["pearson"], "min_human_agreement",
                interval=c0["ci"]["pearson"])


def test_human_agreement_stability(audit_evaluator, audit_factor, audit_human_agreement, audit_check):
    factor = audit_human_agreement["factors"].get(audit_factor)
    if factor is None:
        pytest.skip(f"not applicable: no rated scene was measured at a level of {audit_factor}")
    audit_check(f"human agreement drop[{audit_factor}]",
                factor["max_drop"], "max_human_agreement_drop", interval=factor["max_drop_ci"],
                bound=Bound.LOWER)
