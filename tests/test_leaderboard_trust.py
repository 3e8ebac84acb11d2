"""The leaderboard ranks only what verifies: each run passes
``t3d-audit validate``'s checks first, one directory is one run however it is named, the
failed share is counted from the score files and outranks the statistics, and a value that is
not a JSON number is refused, not ranked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.core.errors import AuditError
from harness.report.ranking import build_leaderboard, failed_shares


def _edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.slow
def test_a_real_run_verifies_and_its_failed_share_is_counted(report):
    board = build_leaderboard([report])
    summary = json.loads((report / "summary.json").read_text())["evaluators"]
    assert {r.evaluator for r in board.rows} == set(summary)
    counted = failed_shares(report)
    for row in board.rows:
        assert row.failed_share == pytest.approx(counted[row.evaluator])
        assert row.failed_share == pytest.approx(summary[row.evaluator]["failed_share"])


def _set_peak(doc):
    ev = sorted(doc["evaluators"])[0]
    doc["evaluators"][ev]["peak_rho"] = 0.0001


def _flip(doc):
    for result in doc["results"]:
        result["outcome"] = "passed"


@pytest.mark.slow
@pytest.mark.parametrize("tamper", ["peak_rho", "outcomes", "agreement", "scores"])
def test_a_tampered_run_is_refused_not_ranked(report, tamper, capsys):
    if tamper == "peak_rho":
        _edit(report / "summary.json", _set_peak)
    elif tamper == "outcomes":
        _edit(report / "results.json", _flip)
    elif tamper == "agreement":
        evs = json.loads((report / "summary.json").read_text())["evaluators"]
        (report / "agreement.json").write_text(json.dumps(
            {"evaluators": {ev: {"spearman": 0.99, "pearson": 0.99} for ev in evs}}))
    else:
        path = next((report / "scores").glob("*.csv"))
        path.write_text(path.read_text().replace(",ok,", ",failed,", 1))
    with pytest.raises(AuditError, match="does not verify") as info:
        build_leaderboard([report])
    assert "validate" in str(info.value)
    assert cli_main(["leaderboard", str(report)]) == 2
    assert "does not verify" in capsys.readouterr().err


@pytest.mark.slow
def test_one_run_named_twice_through_a_symlink_or_dotdot_is_refused(report, tmp_path):
    link = tmp_path / "same-run"
    link.symlink_to(report)
    for other in (link, report.parent / ".." / report.parent.name / report.name):
        with pytest.raises(AuditError, match="given twice"):
            build_leaderboard([report, other])


@pytest.mark.slow
def test_a_copied_run_is_two_runs(report, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(report, copy)
    assert len(build_leaderboard([report, copy]).rows) == 2 * len(build_leaderboard([report]).rows)
