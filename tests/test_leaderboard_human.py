"""The leaderboard shows the human agreement an ``--audit-human`` run put on its cards (it used
to read only ``agreement.json`` of ``t3d-audit agreement --out``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.ranking import build_leaderboard, write_leaderboard


@pytest.fixture(autouse=True)
def _synthetic_runs(monkeypatch):
    """Hand-made report directories (no scores/, no hashes): what is read is tested here; the
    validate checks a real run passes first are in tests/test_leaderboard_trust.py."""
    from harness.report import ranking

    monkeypatch.setattr(ranking, "verify_run", lambda report: [])
    monkeypatch.setattr(ranking, "failed_shares", lambda report: {})


def _report(root: Path, cards: dict, agreement: dict | None = None) -> Path:
    report = root / "smoke-h"
    (report / "cards").mkdir(parents=True)
    entries = {ev: {"peak_rho": 1.0, "peak_rho_ci": [0.5, 1.5], "min_w": 0.9, "max_top1": 1,
                    "content_accuracy": 0.8, "failed_share": 0.0} for ev in ("a", "b", "c")}  # fmt: skip
    (report / "summary.json").write_text(json.dumps({"evaluators": entries}))
    (report / "manifest.json").write_text(json.dumps(
        {"run_id": "smoke-h", "options": {"profile": "smoke", "scene_set_sha256": "a" * 64}}))
    for ev, card in cards.items():
        (report / "cards" / f"{ev}.json").write_text(json.dumps(card))
    if agreement is not None:
        (report / "agreement.json").write_text(json.dumps({"evaluators": agreement}))
    return report


def _human_card(spearman: float, pearson: float) -> dict:
    return {"human_agreement": {"c0": {"pearson": pearson, "spearman": spearman,
                                       "kendall_tau_b": 0.4, "pairwise_accuracy": 0.7,
                                       "pearson_ci": [0.1, 0.9]}}}  # fmt: skip


def test_the_cards_human_agreement_reaches_the_leaderboard(tmp_path):
    report = _report(tmp_path, {"a": _human_card(0.42, 0.55), "b": {}, "c": _human_card(0.3, 0.2)},
                     agreement={"c": {"spearman": 0.61, "pearson": 0.66}})  # fmt: skip
    rows = {r.evaluator: r for r in build_leaderboard([report]).rows}
    assert (rows["a"].human_spearman, rows["a"].human_pearson) == (0.42, 0.55)
    assert (rows["b"].human_spearman, rows["b"].human_pearson) == (None, None)
    # an agreement.json written for the run is the explicit source and wins
    assert (rows["c"].human_spearman, rows["c"].human_pearson) == (0.61, 0.66)
    out = tmp_path / "board"
    write_leaderboard(build_leaderboard([report]), out)
    assert "0.42" in (out / "leaderboard.md").read_text()


def test_a_malformed_card_figure_is_refused_naming_the_card(tmp_path):
    """A figure that is no number is refused like every other value the leaderboard ranks
    (a real run's cards are schema-checked first); a figure group of another shape is unknown."""
    from harness.core.errors import AuditError

    report = _report(tmp_path, {"a": {"human_agreement": {"c0": {"spearman": "high"}}},
                                "b": {}, "c": {}})  # fmt: skip
    with pytest.raises(AuditError, match=r"cards/a\.json#/human_agreement/c0/spearman"):
        build_leaderboard([report])
    report_b = _report(tmp_path / "b", {"b": {"human_agreement": ["x"]}})
    rows = {r.evaluator: r for r in build_leaderboard([report_b]).rows}
    assert rows["b"].human_spearman is None
