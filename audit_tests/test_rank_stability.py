"""Do generator rankings survive the protocol? (study §4.2, Kendall's W and unique winners)

For each shared factor the levels act as raters ranking the generators by their mean score.
"""


def test_kendall_w(audit_evaluator, audit_shared_factor, audit_summary, audit_check):
    audit_check.metric(audit_summary, "kendall_w", audit_shared_factor)


def test_top1_count(audit_evaluator, audit_shared_factor, audit_summary, audit_check):
    audit_check.metric(audit_summary, "top1_count", audit_shared_factor)
