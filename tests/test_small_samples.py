"""The small-sample rule (fewer than 10 prompt blocks) everywhere an interval is shown:
check lines, the terminal table, report.html's banner and comparison.md."""

from __future__ import annotations

from harness.checks.wording import SMALL_SAMPLE_BLOCKS, is_small_sample, small_sample_note
from harness.release.baselines import render_markdown
from harness.report.terminal import dash_notes, rows_from
from harness.report.verdict_words import small_sample_banner_html


def _card(n):
    return {"scene_artifact_source": {"n_prompts": n}}


def _document(n_prompts):
    metric = {"kind": "rho", "subject": "pitch", "baseline": 0.5, "candidate": 2.0, "difference": 1.5,
              "ci": [0.8, 2.2], "margin": 0.1, "harmful": "increase", "verdict": "regression"}
    pair = {"baseline_evaluator": "a", "candidate_evaluator": "b", "n_prompts": n_prompts,
            "bootstrap": 100, "seed": 1, "correction": "max-t", "q": 2.1, "not_compared": [],
            "verdicts": {"regression": 1}, "metrics": [metric],
            "failures": {"baseline": {"failed": 0, "rows": 10}, "candidate": {"failed": 0, "rows": 10},
                         "excluded_rows": 0}}
    return {"baseline": "r1", "candidate": "r2", "pairs": [pair], "exit_code": 1,
            "verified": {"baseline": True, "candidate": True},
            "unpaired": {"baseline": [], "candidate": []}, "allow_unpaired": False}


def test_the_rule():
    assert SMALL_SAMPLE_BLOCKS == 10
    assert [is_small_sample(n) for n in (1, 2, 9, 10, 50, None, 0, True)] == [
        True, True, True, False, False, False, False, False]
    assert small_sample_note(1) == "small sample: 1 prompt block, under 10"
    assert small_sample_note(12) == ""


def test_a_comparison_on_two_prompts_is_indicative():
    # regression: compare called a 2-prompt difference a confirmed regression
    text = render_markdown(_document(2))
    assert "| **regression (indicative)** |" in text
    assert "small sample: 2 prompt blocks, under 10**: every verdict below is indicative" in text
    assert text.rstrip().endswith("Gate: FAIL (exit 1); indicative: a pair has fewer than 10 prompt blocks")
    plenty = render_markdown(_document(40))
    assert "indicative" not in plenty and "| **regression** |" in plenty


def test_the_terminal_table_and_the_page_flag_a_small_sample():
    summary = {"evaluators": {"a": {"peak_rho": 2.0, "peak_rho_ci": [0.4, 200.0]}}}
    (row,) = rows_from(summary, [], {"a": _card(2)})
    assert row["peak_rho_ci"] == "[0.40, 200.00]*"
    assert any(n.startswith("*: interval from fewer than 10 prompt blocks") for n in dash_notes([row]))
    (big,) = rows_from(summary, [], {"a": _card(60)})
    assert big["peak_rho_ci"] == "[0.40, 200.00]"
    assert "Small sample" in small_sample_banner_html({"a": _card(6)}) and "6 prompt blocks" in small_sample_banner_html({"a": _card(6)})
    assert small_sample_banner_html({"a": _card(60)}) == ""


def test_each_card_on_the_page_flags_a_small_sample():
    from harness.report.verdict_words import card_sample_html

    assert "⚠ small sample: 6 prompt blocks, under 10: its intervals are indicative" in card_sample_html(_card(6))
    assert card_sample_html(_card(50)) == "" and card_sample_html(None) == ""
