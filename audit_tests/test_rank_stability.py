"""Do generator rankings survive the protocol? (study §4.2, Kendall's W and unique winners)

For each shared factor the levels act as raters ranking the generators by their mean score.
"""


def test_kendall_w(audit_evaluator, audit_shared_factor, audit_stats, audit_check):
    audit_check(
        f"kendall_w[{audit_shared_factor}]",
        audit_stats["kendall_w"].get(audit_shared_factor),
        "min_kendall_w",
    )


def test_top1_count(audit_evaluator, audit_shared_factor, audit_stats, audit_check):
    audit_check(
        f"top1_count[{audit_shared_factor}]",
        audit_stats["top1_count"].get(audit_shared_factor),
        "max_top1_count",
    )
