"""No CSV the harness writes holds a cell a spreadsheet would run as a formula; the
records file gets its free text back exactly."""

from __future__ import annotations

import csv
import io
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.csvcells import FORMULA_STARTS, neutral, restore

HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
           "\t=1+1", "\r=1+1", "'=already quoted", "'plain"]  # fmt: skip


def _formula_cells(text: str) -> list[str]:
    """Cells of a CSV text that a spreadsheet would treat as a formula (the test's own rule)."""
    out = []
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell[:1] in FORMULA_STARTS:
                try:
                    float(cell.rstrip("%"))
                except ValueError:
                    out.append(cell)
    return out


@pytest.mark.parametrize("cell, written", [
    ("=1+1", "'=1+1"), ("+x", "'+x"), ("-x", "'-x"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("'x", "''x"), ("x=1", "x=1"), ("-0.5", "-0.5"), ("+3", "+3"), ("-1e-05", "-1e-05"), ("-12%", "-12%"),
    (-0.5, -0.5), (None, None), ("", ""),
])  # fmt: skip
def test_neutral_by_hand(cell, written):
    assert neutral(cell) == written
    assert restore(written) == cell


@given(st.text(max_size=30))
def test_restore_undoes_neutral_and_nothing_written_is_a_formula(text):
    assert restore(neutral(text)) == text
    assert _formula_cells(_one_cell_csv(neutral(text))) == []


def _one_cell_csv(cell: str) -> str:
    buf = io.StringIO()
    csv.writer(buf).writerow([cell])
    return buf.getvalue()


def _records(caption: str, error: str):
    from harness.protocol.records import records_from_rows

    base = {"evaluator": "clip-b32", "generator": "g1", "prompt_id": "bedroom-01", "scene_sha256": "a" * 64,
            "factor": "baseline", "level": "c0", "caption": caption, "score": -0.25, "status": "ok",
            "error": ""}  # fmt: skip
    return records_from_rows([base, {**base, "factor": "yaw", "level": "45", "score": math.nan,
                                     "status": "failed", "error": error}])  # fmt: skip


@pytest.mark.parametrize("hostile", HOSTILE)
def test_records_csv_is_inert_and_reads_back_exactly(tmp_path, hostile):
    from harness.protocol.records import read_records, write_records

    frame = _records(hostile, hostile)
    path = write_records(frame, tmp_path / "r.csv")
    assert _formula_cells(path.read_text()) == []
    back = read_records(path)
    assert list(back["caption"]) == [hostile, hostile] and back["error"].iloc[1] == hostile
    assert back["score"].iloc[0] == -0.25  # numbers stay numbers


def test_report_tables_and_leaderboard_csv_are_inert(tmp_path, monkeypatch):
    from harness.report import ranking
    from harness.report.tables import Table

    table = Table("t", "title", ("=evaluator", "value"), (("=cmd()", "-0.5"), ("@x", "+3")))
    text = table.to_csv()
    assert _formula_cells(text) == [] and "-0.5" in text and "'=cmd()" in text
    row = ranking.Row(1, "=HYPERLINK(1)", "@run", "-p", 1.5, None, None, "=lighting", -0.5, None, None, None,
                      None, None, None, None, None, None, 0.0, "+passed")  # fmt: skip
    board = ranking.Leaderboard((row,), (), False)
    assert _formula_cells(ranking.render_csv(board)) == []


# Regression: the full-width formula starts, and a CSV writer added after the fix
@pytest.mark.parametrize("cell", ['＝HYPERLINK("http://x")', "＋1+cmd", "－x", "＠SUM(A1)"])
def test_full_width_formula_starts_are_neutral(cell):
    assert neutral(cell) == "'" + cell and restore(neutral(cell)) == cell


def test_a_number_in_other_scripts_digits_is_not_taken_for_a_plain_number():
    assert neutral("-٣") == "'-٣" and neutral("-3") == "-3"


def test_concordance_scores_csv_is_inert(tmp_path, monkeypatch, capsys):
    """`concordance --out` wrote its per-scene table (generator names, prompt ids, a user
    scorer's failure reasons) with a bare DataFrame.to_csv."""
    import harness.peers.measure as measure
    from harness.cli import main

    real = measure.score_protocols

    def planted(*args, **kwargs):
        table = real(*args, **kwargs)
        table["error"] = table["error"].astype(object)
        table.loc[table.index[0], "error"] = HOSTILE[0]
        return table

    monkeypatch.setattr(measure, "score_protocols", planted)
    out = tmp_path / "c"
    argv = ["concordance", "--evaluator", "planted-robust", "--presets", "mate3d,3d-defectbench",
            "--bootstrap", "20", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    text = (out / "scores.csv").read_text()
    assert "'=HYPERLINK" in text and _formula_cells(text) == []
