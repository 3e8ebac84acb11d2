"""``t3d-audit leaderboard``: ranking across report directories, the mixed-run refusal, the four
outputs and the page's escaping and Content-Security-Policy."""

from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.core.errors import AuditError
from harness.report.ranking import build_leaderboard, render_html, write_leaderboard


@pytest.fixture(autouse=True)
def _synthetic_runs(monkeypatch):
    """These directories are hand-made (no scores/, no hashes): the ranking is tested here, the
    validate checks every real run passes first in tests/test_leaderboard_trust.py."""
    from harness.report import ranking

    monkeypatch.setattr(ranking, "verify_run", lambda report: [])
    monkeypatch.setattr(ranking, "failed_shares", lambda report: {})


def make_report(root: Path, run_id: str, entries: dict, *, profile: str = "smoke",
                scenes: str = "a" * 64, cards: dict | None = None, results: list | None = None,
                agreement: dict | None = None) -> Path:  # fmt: skip
    report = root / run_id
    report.mkdir(parents=True)
    (report / "summary.json").write_text(json.dumps({"evaluators": entries}))
    (report / "manifest.json").write_text(json.dumps(
        {"run_id": run_id, "options": {"profile": profile, "scene_set_sha256": scenes}}))
    (report / "results.json").write_text(json.dumps({"run_id": run_id, "results": results or []}))
    (report / "cards").mkdir()
    for ev, card in (cards or {}).items():
        (report / "cards" / f"{ev}.json").write_text(json.dumps(card))
    if agreement is not None:
        (report / "agreement.json").write_text(json.dumps({"evaluators": agreement}))
    return report


def entry(peak, lo=None, hi=None, w=None, top1=None, disc=None):
    return {"peak_rho": peak, "peak_rho_ci": None if lo is None else [lo, hi], "min_w": w,
            "max_top1": top1, "content_accuracy": disc, "failed_share": 0.0}  # fmt: skip


def card(pair):
    return {"companion_check": {"agreement": {"pair_agreement": pair, "ranking_tau": 0.5}}}


@pytest.fixture()
def two_runs(tmp_path):
    a = make_report(tmp_path, "smoke-aaa", {"alpha": entry(2.0, 1.0, 3.0, 0.8, 2, 0.9),
                                            "beta": entry(0.5, 0.2, 0.9, 0.9, 1, 0.7)},
                    cards={"alpha": card(0.8), "beta": card(0.5)},
                    results=[{"evaluator": "alpha", "outcome": "failed"},
                             {"evaluator": "beta", "outcome": "passed"}],
                    agreement={"beta": {"spearman": 0.61, "pearson": 0.66}})  # fmt: skip
    b = make_report(tmp_path, "smoke-bbb", {"alpha": entry(2.0, 1.5, 2.5, 0.9, 1, 0.8),
                                            "gamma": entry(None)})  # fmt: skip
    return a, b


def test_rows_are_ranked_on_the_headline_measures(two_runs):
    board = build_leaderboard(list(two_runs))
    got = [(r.rank, r.evaluator, r.run_id) for r in board.rows]
    # beta (rho 0.5) first; the two alpha rows tie on rho 2.0 and the higher min W wins;
    # gamma (rho unknown) last
    assert got == [(1, "beta", "smoke-aaa"), (2, "alpha", "smoke-bbb"), (3, "alpha", "smoke-aaa"),
                   (4, "gamma", "smoke-bbb")]  # fmt: skip
    beta = board.rows[0]
    assert (beta.peak_rho_low, beta.peak_rho_high, beta.min_w, beta.max_top1) == (0.2, 0.9, 0.9, 1)
    assert (beta.c0_agreement, beta.competent, beta.human_spearman, beta.verdict) == (0.5, False, 0.61, "passed")
    assert board.rows[2].competent is True and board.rows[2].verdict == "failed"
    assert board.rows[1].c0_agreement is None and board.rows[1].verdict == "not run"
    assert not board.mixed


def test_equal_keys_share_a_rank(tmp_path):
    a = make_report(tmp_path, "r1", {"x": entry(1.0, w=0.5), "y": entry(1.0, w=0.5)})
    assert [r.rank for r in build_leaderboard([a]).rows] == [1, 1]


def test_runs_over_other_scenes_or_profiles_are_refused_unless_allowed(tmp_path):
    a = make_report(tmp_path, "r1", {"x": entry(1.0)})
    b = make_report(tmp_path, "r2", {"x": entry(2.0)}, scenes="b" * 64)
    c = make_report(tmp_path, "r3", {"x": entry(2.0)}, profile="default")
    with pytest.raises(AuditError, match=r"differ in scene set.*--allow-mixed"):
        build_leaderboard([a, b])
    with pytest.raises(AuditError, match="differ in profile"):
        build_leaderboard([a, c])
    assert build_leaderboard([a, b, c], allow_mixed=True).mixed


def test_bad_inputs_are_typed_errors(tmp_path):
    with pytest.raises(AuditError, match=r"no summary\.json"):
        build_leaderboard([tmp_path])
    with pytest.raises(AuditError, match="not a report directory"):
        build_leaderboard([tmp_path / "missing"])
    a = make_report(tmp_path, "r1", {"x": entry(1.0)})
    with pytest.raises(AuditError, match="given twice"):
        build_leaderboard([a, a])


def test_cli_prints_writes_four_files_and_exits_2_on_mixed(two_runs, tmp_path, capsys):
    out = tmp_path / "lb"
    assert cli_main(["leaderboard", *map(str, two_runs), "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["evaluator"] for r in doc["rows"]] == ["beta", "alpha", "alpha", "gamma"]
    assert sorted(p.name for p in out.iterdir()) == [
        "leaderboard.csv", "leaderboard.html", "leaderboard.json", "leaderboard.md"]
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert rows[0]["evaluator"] == "beta" and rows[3]["peak_rho"] == ""
    assert "| 1 | beta | smoke-aaa |" in (out / "leaderboard.md").read_text()
    other = make_report(tmp_path, "other", {"x": entry(1.0)}, profile="default")
    assert cli_main(["leaderboard", str(two_runs[0]), str(other)]) == 2
    assert "--allow-mixed" in capsys.readouterr().err


def test_the_page_escapes_every_value_and_runs_no_script(tmp_path):
    hostile = '<script>alert(1)</script>"&'
    a = make_report(tmp_path, "r1", {hostile: entry(1.0)}, results=[
        {"evaluator": hostile, "outcome": "<b>failed</b>"}])  # fmt: skip
    page = render_html(build_leaderboard([a]))
    assert "<script" not in page and "alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;" in page
    policy = html.unescape(page.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0])
    assert "unsafe-inline" not in policy and "script-src 'none'" in policy
    assert "style-src 'sha256-" in policy
    write_leaderboard(build_leaderboard([a]), tmp_path / "o")
    assert (tmp_path / "o" / "leaderboard.html").read_text() == page


def test_the_style_hash_matches_the_inline_style(tmp_path):
    import base64
    import hashlib

    a = make_report(tmp_path, "r1", {"x": entry(1.0)})
    page = render_html(build_leaderboard([a]))
    css = page.split("<style>", 1)[1].split("</style>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in html.unescape(page)


# --- values are JSON numbers or refused; the failed share outranks

@pytest.mark.parametrize("bad", ["0.001", True, 10**400, [0.5], {"v": 1}])
def test_a_value_that_is_not_a_json_number_is_refused_naming_it(tmp_path, bad):
    a = make_report(tmp_path, "r1", {"x": {**entry(1.0), "peak_rho": bad}, "y": entry(2.0)})
    with pytest.raises(AuditError, match=r"summary\.json#/evaluators/x/peak_rho"):
        build_leaderboard([a])


@pytest.mark.parametrize("field", ["min_w", "content_accuracy", "peak_rho"])
def test_every_number_field_is_checked(tmp_path, field):
    a = make_report(tmp_path, "r1", {"x": {**entry(1.0), field: "0.5"}})
    with pytest.raises(AuditError, match=field):
        build_leaderboard([a])


@pytest.mark.parametrize("evaluators", [["x"], "x", 3])
def test_evaluators_that_are_not_an_object_are_refused(tmp_path, evaluators):
    report = make_report(tmp_path, "r1", {})
    (report / "summary.json").write_text(json.dumps({"evaluators": evaluators}))
    with pytest.raises(AuditError, match="evaluators"):
        build_leaderboard([report])


def test_an_evaluator_over_the_failed_share_ranks_after_every_one_within_it(tmp_path, monkeypatch):
    from harness.report import ranking

    a = make_report(tmp_path, "r1", {"mostly-failed": entry(0.01, w=1.0), "steady": entry(5.0, w=0.1),
                                     "unknown": entry(None)})
    monkeypatch.setattr(ranking, "failed_shares", lambda report: {"mostly-failed": 0.73, "steady": 0.0,
                                                                   "unknown": 0.0})
    board = build_leaderboard([a])
    assert [r.evaluator for r in board.rows] == ["steady", "unknown", "mostly-failed"]
    assert board.rows[-1].failed_share == 0.73 and board.rows[-1].rank == 3


def _moved(peak_rho, movement, ci=None):
    return entry(peak_rho) | {"registered": {"movement": movement,
                                             "peak_movement": max(movement.values())},
                              "intervals": {"peak_movement": ci}}


def test_the_release_that_moves_scores_more_ranks_worse_though_its_peak_rho_is_lower(tmp_path):
    """v2 spreads the generators apart (peak ρ 3.10) and collapses under lighting (movement 4.2);
    v1's ρ is high only because its generators sit close together. The headline ranks v1 first
    and names the factor that moves v2."""
    report = make_report(tmp_path, "smoke-rel", {
        "v1": _moved(44.96, {"lighting": 1.1, "pitch": 0.8}, [0.9, 1.4]),
        "v2": _moved(3.10, {"lighting": 4.2, "pitch": 0.7}, [3.1, 5.0]),
    })
    board = build_leaderboard([report])
    first, second = board.rows
    assert (first.evaluator, second.evaluator) == ("v1", "v2")
    assert (second.peak_movement, second.movement_factor) == (4.2, "lighting")
    assert (second.peak_movement_low, second.peak_movement_high) == (3.1, 5.0)
    assert "moved most by" in render_html(board) and "lighting" in render_html(board)


def test_a_run_without_movement_ranks_after_one_with_it(tmp_path):
    report = make_report(tmp_path, "smoke-old", {"old": entry(0.1), "new": _moved(9.0, {"pitch": 3.0})})
    assert [r.evaluator for r in build_leaderboard([report]).rows] == ["new", "old"]


def test_a_movement_that_is_not_a_number_is_refused_naming_it(tmp_path):
    bad = _moved(1.0, {"pitch": 1.0}) | {"registered": {"movement": {"pitch": "1.0"}, "peak_movement": 1.0}}
    report = make_report(tmp_path, "smoke-bad", {"x": bad})
    with pytest.raises(AuditError, match="registered/movement/pitch"):
        build_leaderboard([report])
