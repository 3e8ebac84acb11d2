"""Are failures accounted for? (study Appendix I: a failure is a failure, never a score of 0)"""


def test_failed_share(audit_evaluator, audit_records, audit_summary, audit_check):
    failed = audit_records["status"].eq("failed")
    assert not audit_records.loc[failed, "score"].notna().any(), "a failed record carries a score"
    audit_check.metric(audit_summary, "failed_share")
