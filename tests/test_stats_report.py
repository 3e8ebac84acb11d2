"""``t3d-audit report`` end to end on small synthetic records, and the table builders."""

from __future__ import annotations

import csv
import json

import pytest

from harness.cli import main
from harness.protocol.records import write_records
from harness.report.tables import build_tables, pct
from harness.stats.audit_stats import compute_audit
from harness.stats.synthetic import SyntheticSpec, synthetic_records

TABLE_KEYS = {
    "table01_decisions",
    "table02_evaluators",
    "table03_template_slots",
    "table03_best_template",
    "table04_reversals",
    "table08_lighting",
    "table09_envelopes",
    "table10_probe_outcomes",
    "table13_dispersion",
    "table14_rho",
    "table_movement",
    "table15_rho_uncertainty",
    "table16_rank_stability",
    "table17_discrimination",
    "table18_best_worst",
    "failures",
}


@pytest.fixture(scope="module")
def records():
    spec = SyntheticSpec(evaluators=2, prompt_free=1, prompts=6, templates=15, render_levels=3,
                         failure_rate=0.01, seed=4)
    return synthetic_records(spec)


def test_report_command_writes_tables_and_summary(records, tmp_path, capsys):
    files = []
    for name, g in records.groupby("evaluator"):
        suffix = ".csv" if name == "eval0" else ".parquet"
        files.append(str(write_records(g.reset_index(drop=True), tmp_path / f"{name}{suffix}")))
    out = tmp_path / "out"
    rc = main(["report", "--scores", *files, "--out", str(out), "--bootstrap", "60", "--seed", "5"])
    assert rc == 0
    assert "failed (excluded)" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simultaneous"]["B"] == 60 and summary["simultaneous"]["seed"] == 5
    assert set(summary["evaluators"]) == {"eval0", "eval1", "iqa2"}
    keys = {p.stem for p in (out / "tables").glob("*.csv")}
    # the study's tables; a statistic with its own compute adds table_registered
    from harness.report.registered import report_metrics

    assert keys == TABLE_KEYS | ({"table_registered"} if report_metrics() else set())
    with open(out / "tables" / "table13_dispersion.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "Evaluator" and len(rows) == 4
    # slot effects came from the caption grammar
    t3 = (out / "tables" / "table03_template_slots.md").read_text()
    assert "viewpoint" in t3 and "noun" in t3


def test_report_command_reports_bad_input(tmp_path, capsys):
    rc = main(["report", "--scores", str(tmp_path / "missing.csv"), "--out", str(tmp_path)])
    assert rc == 2
    assert "not found" in capsys.readouterr().err


def test_tables_match_the_result(records):
    result = compute_audit(records, bootstrap=0, seed=1)
    tables = {t.key: t for t in build_tables(result)}
    t17 = tables["table17_discrimination"]
    row = next(r for r in t17.rows if r[0] == "eval0")
    ev = result.evaluators["eval0"]
    assert row[1] == pct(ev.discrimination["keep_half"])
    assert row[-1] == pct(ev.content_accuracy)
    t9 = tables["table09_envelopes"]
    for r in t9.rows:
        counts = [int(c.split("/")[0]) for c in r[2:5]]
        assert sum(counts) == 15  # the categories partition the pairs
    md = tables["table01_decisions"].to_markdown()
    assert md.startswith("**Table 1") and "| Audit question |" in md
