"""The report's words say what is true: each count labelled by what it counts, the
same way in the terminal and the verdict matrix; table sizes pluralised and the failures table
saying "none failed"; counts without decimals; a factor strip's caption about the prompt it
shows; FAIL called expected only for the bundled evaluators."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from harness.checks.wording import count, counts_things, rule
from harness.report.html.data import plural
from harness.report.html.overview import cell
from harness.report.html.page import table_count
from harness.report.html.strips import prompt_winners, usual_winner, winner_caption
from harness.report.terminal import render_table, rows_from
from harness.report.verdict_words import bundled_panel, expected_verdict_note


def test_the_gate_column_and_the_matrix_label_what_they_count():
    # regression: "FAIL (14/42 failed)" counted failures, "pass (30/42)" passes, beside a
    # column "failed" that counted records; the matrix's ✓/✗ counts were unlabelled
    summary = {"evaluators": {"a": {"failed": 0}, "b": {"failed": 12}}}
    results = ([{"evaluator": "a", "outcome": "passed"}] * 30 + [{"evaluator": "a", "outcome": "skipped"}] * 12
               + [{"evaluator": "b", "outcome": "failed"}] * 14 + [{"evaluator": "b", "outcome": "passed"}] * 28)
    rows = rows_from(summary, results)
    assert [r["gate"] for r in rows] == ["pass: 30 of 42 passed", "FAIL: 14 of 42 failed"]
    assert [r["failed"] for r in rows] == ["0", "12"]
    header = render_table(rows)[0]
    assert "failed records" in header and "gate (audit tests)" in header
    assert cell([{"outcome": "passed", "checks": []}] * 9)[1] == "✓ 9 of 9 passed"
    assert cell([{"outcome": "failed", "checks": []}] * 4 + [{"outcome": "passed", "checks": []}] * 5)[1] == "✗ 4 of 9 failed"


def test_table_sizes_are_pluralised_and_the_failures_table_says_none_failed():
    assert plural(1, "row") == "1 row" and plural(0, "row") == "0 rows" and plural(5, "row") == "5 rows"
    header = ["Evaluator", "Records", "Failed", "pitch"]
    none = [[f"ev{i}", "100", "0", "0"] for i in range(5)]
    assert table_count(header, none, "failures") == "none failed, 5 evaluators"
    some = [["a", "100", "3", "3"], ["b", "100", "0", "0"]]
    assert table_count(header, some, "failures") == "3 failed records, 2 evaluators"
    assert table_count(header, [["a", "100", "1", "1"]], "failures") == "1 failed record, 1 evaluator"
    assert table_count(["x"], [["1"]], "table9") == "1 row"


def test_counts_read_as_whole_numbers_and_ratios_keep_two_decimals():
    assert counts_things("max_sign_crossings") and counts_things("min_strict_pairs")
    assert not counts_things("peak_rho_max") and not counts_things(None)
    assert count(12.0) == "12" and count(0) == "0" and count(2.5) == "2.50" and count(None) == "n/a"
    crossing = {"metric": "sign_crossings", "evaluator": "x", "tested": 12.0, "interval": None,
                "op": "<=", "threshold_name": "max_sign_crossings", "threshold": 0.0, "passed": False}
    assert rule(crossing) == "sign_crossings of x 12 (no interval), must be ≤ 0 (max_sign_crossings): fails"
    rho = {**crossing, "metric": "peak_rho", "tested": 2.0, "threshold_name": "peak_rho_max", "threshold": 1.0}
    assert "2.00" in rule(rho) and "≤ 1.00" in rule(rho)


def test_a_strip_caption_speaks_of_the_prompt_it_shows():
    # regression: "winner changes at 6 of 7 levels" over a prompt whose winner never changed
    # (it compared the all-prompt mean ranking with the first level's)
    steady = {lv: {"gen-a": 0.9, "gen-b": 0.5} for lv in "1234567"}
    assert winner_caption(prompt_winners(steady)) == ("same winner (gen-a) at every level", 0)
    moving = {**steady, "6": {"gen-a": 0.1, "gen-b": 0.5}, "7": {"gen-a": 0.1, "gen-b": 0.5}}
    winners = prompt_winners(moving)
    assert usual_winner(winners) == "gen-a"
    assert winner_caption(winners) == ("the winner changes: gen-a at 5 of 7 levels, gen-b at 2 (⇄)", 2)
    assert winner_caption(prompt_winners({"1": {}})) == ("no scores at any level", 0)
    assert prompt_winners({"1": {"b": 0.5, "a": 0.5}}) == {"1": "a"}  # a tie: first by name


def test_the_rendered_strip_of_a_steady_prompt_has_no_flip_mark():
    from harness.report.html.strips import _strip

    class NoThumbs:
        def img(self, *args) -> str:
            return ""

    rows = []
    for level in ("a", "b", "c"):
        for gen, p1, p2 in (("g1", 0.9, 0.1), ("g2", 0.5, 0.8)):
            rows += [{"generator": gen, "prompt_id": "p1", "factor": "pitch", "level": level, "score": p1, "status": "ok"},
                     {"generator": gen, "prompt_id": "p2", "factor": "pitch", "level": level, "score": p2, "status": "ok"}]
    # the all-prompt mean ranking flips at level b; prompt p1's winner (g1) never does
    rows += [{"generator": "g2", "prompt_id": "p3", "factor": "pitch", "level": "b", "score": 9.0, "status": "ok"}]
    html = _strip("ev", pd.DataFrame(rows), "pitch", "p1", NoThumbs())
    assert "same winner (g1) at every level" in html and "⇄" not in html


@given(st.dictionaries(st.sampled_from("abcdefg"), st.dictionaries(st.sampled_from(["g1", "g2", "g3"]),
                                                                   st.floats(0, 1), max_size=3), min_size=1))
def test_the_caption_count_matches_the_levels_off_the_usual_winner(scores):
    winners = prompt_winners(scores)
    text, changes = winner_caption(winners)
    usual = usual_winner(winners)
    assert changes == sum(1 for w in winners.values() if w is not None and w != usual)
    assert (changes == 0) == (not text.startswith("the winner changes"))


def test_fail_is_called_expected_only_for_the_bundled_evaluators():
    panel = sorted(bundled_panel())
    assert {"companion", "ref-vit-clip"} <= set(panel)
    note = expected_verdict_note([*panel, "panel"], failing=True)
    assert note.startswith("FAIL is the expected verdict of the bundled evaluators")
    assert expected_verdict_note(panel, failing=False) == ""
    assert expected_verdict_note(["ref-vit-clip", "my-scorer"], failing=True) == ""
    assert expected_verdict_note([], failing=True) == ""


def test_the_audit_command_calls_fail_expected_for_the_bundled_and_planted_panels_only():
    import argparse

    from harness.commands.audit import _expected_note

    def args(evaluators=None, profile="default"):
        return argparse.Namespace(evaluators=evaluators, profile=profile)

    assert _expected_note(args()).startswith("FAIL is the expected verdict")
    assert _expected_note(args("planted-pitch,planted-robust,companion")).startswith("FAIL is the expected")
    assert _expected_note(args("ref-vit-clip,my-scorer")) == ""
    assert _expected_note(args("ref-*")) == ""  # a glob may reach further than the panel
    assert _expected_note(args(profile="smoke")) == ""  # every evaluator here: not known ahead
    # regression: a project whose configuration audits its own evaluator under the default
    # profile was told FAIL is expected of the bundled ones; the report's evaluators decide
    assert _expected_note(args(), ["colorstat"]) == ""
    assert _expected_note(args(), ["ref-vit-clip", "companion"]).startswith("FAIL is the expected")
