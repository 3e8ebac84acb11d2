"""The verdict's words: counts of what ran, checks as rules (harness.report.verdict_words)."""

from __future__ import annotations

from harness.report.verdict_words import check_item_html, headline_text


def test_a_one_evaluator_run_counts_one_evaluator_and_the_panel_apart():
    # regression: a one-evaluator run read "1 of 2 evaluators (panel checks included)"
    text = headline_text({"ref-vit-clip": ["failed", "passed"], "panel": ["passed"]})
    assert text == ("1 of 1 evaluator fails at least one check: ref-vit-clip; "
                    "panel checks (across the selected evaluators): 0 of 1 failed")
    assert headline_text({"a": ["passed"], "b": ["skipped"]}) == "0 of 2 evaluators fail at least one check"
    assert headline_text({"a": ["failed"], "b": ["failed"]}).startswith("2 of 2 evaluators fail at least one check: a, b")


def test_a_failing_check_reads_as_a_rule_with_its_card_and_test():
    check = {"metric": "rho[pitch]", "evaluator": "x", "estimate": 2.439, "interval": [1.2, 3.0],
             "compare": "estimate", "tested": 2.439, "op": "<=", "threshold_name": "peak_rho_max",
             "threshold": 1.0, "passed": False, "card_id": "ecc-v1-sha256:" + "a" * 64, "blocks": 2}
    item = check_item_html(check, "audit_tests/t.py::test[x]")
    assert item.startswith("<li>ρ[pitch] 2.44 (95% CI [1.20, 3.00]; small sample: 2 prompt blocks, under 10), "
                           "must be ≤ 1.00 (peak_rho_max): fails<br>")
    assert "tested estimate" not in item and "ecc-v1-sha256:aaaa" in item
    panel = check_item_html({**check, "card_id": ""}, "t")
    assert "no card (a panel check)" in panel
