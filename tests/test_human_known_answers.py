"""Known answers on public human-judgment data: TIFA v1.0 and StanfordT23D."""

from __future__ import annotations

import csv
import json

import pytest

from harness.cli import main
from tests._human_data import TIFA_PUBLISHED, human_data


def _tifa_tables(tmp_path):
    data = json.loads((human_data("tifa") / "human_annotations_with_scores.json").read_text())
    ratings, scores = tmp_path / "ratings.csv", tmp_path / "scores.csv"
    with ratings.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "prompt_id", "rater", "rating"])
        for key, row in data.items():
            for r, value in enumerate(row["human_scores"]):
                w.writerow([key, row["text_id"], f"r{r}", value])
    with scores.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "evaluator", "score"])
        for key, row in data.items():
            for metric in TIFA_PUBLISHED:
                w.writerow([key, metric, repr(float(row[metric]))])
    return data, ratings, scores


def test_tifa_reproduces_the_published_correlations(tmp_path, capsys):
    data, ratings, scores = _tifa_tables(tmp_path)
    assert len(data) == 800
    rc = main(["agreement", "--human", str(ratings), "--scale", "1-5", "--scores", str(scores),
               "--bootstrap", "200", "--json", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "joined 800 of 800 rated items" in captured.err
    doc = json.loads(captured.out)
    assert doc["human"]["items"] == 800 and doc["human"]["raters"] == 2 and doc["human"]["ratings"] == 1600
    for metric, (pearson, tau_b) in TIFA_PUBLISHED.items():
        got = doc["evaluators"][metric]
        assert got["n"] == 800
        assert abs(got["pearson"] - pearson) <= 1e-9, metric
        assert abs(got["kendall_tau_b"] - tau_b) <= 1e-9, metric
        lo, hi = got["ci"]["pearson"]
        assert lo < got["pearson"] < hi
    assert json.loads((tmp_path / "out" / "agreement.json").read_text()) == doc


def test_stanfordt23d_imports_60x6x3_and_reports_alpha(tmp_path, capsys):
    src = human_data("stanfordt23d") / "stanfordt23d.json"
    out = tmp_path / "generic.csv"
    rc = main(["agreement", "--human", str(src), "--bootstrap", "200", "--json", "--write-human", str(out)])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    h = doc["human"]
    assert (h["items"], h["raters"], h["ratings"]) == (360, 3, 1080)
    assert doc["human_source"]["scale"] == "1-5" and doc["bootstrap"]["blocks"] == 60
    assert 0.0 < h["krippendorff_alpha_interval"] < 1.0
    lo, hi = h["ci"]["krippendorff_alpha_interval"]
    assert lo < h["krippendorff_alpha_interval"] < hi
    kd = pytest.importorskip("krippendorff", reason="optional cross-check of alpha")
    import numpy as np
    import pandas as pd

    table = pd.read_csv(out)
    assert len(table) == 1080 and table.groupby(["generator", "prompt_id"]).ngroups == 360
    wide = table.pivot_table(index=["generator", "prompt_id"], columns="rater", values="rating")
    assert h["krippendorff_alpha_interval"] == pytest.approx(
        kd.alpha(reliability_data=wide.to_numpy(dtype=float).T, level_of_measurement="interval"), abs=1e-12)
    assert np.isfinite(h["noise_ceiling"])
