"""Human ratings, votes, importers, the score join and `t3d-audit agreement` end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness.cli import main
from harness.core.errors import HumanDataError
from harness.human.data import parse_scale, read_ratings, read_votes
from harness.human.importers import import_mate3d, import_stanfordt23d
from harness.human.join import join_scores, read_scores


def _csv(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_scale_parsing():
    assert (parse_scale("1-5").low, parse_scale("1-5").high) == (1.0, 5.0)
    assert str(parse_scale("0-10")) == "0-10"
    for bad in ("5-1", "one-five", "3"):
        with pytest.raises(HumanDataError):
            parse_scale(bad)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("rater,rating\nr1,3\n", "lacks column(s) item_id"),
        ("item_id,rater,rating\na,r1,3\na,r1,4\n", "duplicate (rater, item, dimension) in data rows 1, 2"),
        ("item_id,rater,rating\na,r1,6\nb,r1,2\n", "outside the declared scale 1-5 in data row 1"),
        ("item_id,rater,rating\na,r1,good\n", "non-numeric rating in data row 1"),
        ("item_id,rater,rating\na,r1,\n", "non-numeric rating in data row 1"),
        ("item_id,rater,rating\n,r1,3\n", "empty item in data row 1"),
    ],
)
def test_ratings_typed_errors(tmp_path, body, message):
    path = _csv(tmp_path / "r.csv", body)
    with pytest.raises(HumanDataError) as err:
        read_ratings(path, parse_scale("1-5"))
    assert message in str(err.value) and str(path) in str(err.value)


def test_ratings_dimensions_are_kept_apart(tmp_path):
    path = _csv(tmp_path / "r.csv", "item_id,rater,rating,dimension\na,r1,3,geometry\na,r1,4,texture\n")
    r = read_ratings(path, parse_scale("1-5"))
    assert r.dimensions() == ["geometry", "texture"]
    items, raters, m = r.matrix("texture")
    assert items == ["a"] and raters == ["r1"] and m.tolist() == [[4.0]]


def test_parquet_ratings(tmp_path):
    path = tmp_path / "r.parquet"
    pd.DataFrame({"generator": ["g", "g"], "prompt_id": ["1", "2"], "rater": ["x", "x"],
                  "rating": [1, 2]}).to_parquet(path)
    r = read_ratings(path, parse_scale("1-5"))
    assert r.keyed_by == "scene" and sorted(r.frame["item"]) == ["g/1", "g/2"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("prompt_id,generator_a,generator_b,winner\n", "lacks column(s) rater"),
        ("prompt_id,generator_a,generator_b,winner,rater\np,a,b,maybe,r\n", "winner must be a, b or tie"),
        ("prompt_id,generator_a,generator_b,winner,rater\np,a,a,a,r\n", "compared with itself"),
        ("prompt_id,generator_a,generator_b,winner,rater\np,a,b,a,r\np,b,a,tie,r\n", "duplicate (rater, prompt_id"),
    ],
)
def test_votes_typed_errors(tmp_path, body, message):
    with pytest.raises(HumanDataError, match=None) as err:
        read_votes(_csv(tmp_path / "v.csv", body))
    assert message in str(err.value)


def test_votes_arrays(tmp_path):
    v = read_votes(_csv(tmp_path / "v.csv", "prompt_id,generator_a,generator_b,winner,rater\n"
                        "p1,x,y,a,r\np1,y,z,TIE,r\np2,z,x,b,r\n"))
    gens, prompts, arr = v.arrays()
    assert gens == ["x", "y", "z"] and prompts == ["p1", "p2"]
    assert arr["a"].tolist() == [0, 1, 2] and arr["outcome"].tolist() == [1.0, 0.5, 0.0]


def test_importers(tmp_path):
    st = tmp_path / "st.json"
    st.write_text(json.dumps({"0": {"prompt": "A hat", "models": {"m1": [1, 2, 3], "m2": [5, 5, 4]}}}))
    frame = import_stanfordt23d(st)
    assert len(frame) == 6 and set(frame["rater"]) == {"r0", "r1", "r2"}
    mate = _csv(tmp_path / "all.csv", "model,prompt,Alignment,Geometry,Texture,Overall\nm,A cat,4.5,3,2,3.5\n")
    frame = import_mate3d(mate)
    assert sorted(frame["dimension"]) == ["alignment", "geometry", "overall", "texture"]
    with pytest.raises(HumanDataError):
        import_mate3d(_csv(tmp_path / "bad.csv", "model,prompt\nm,p\n"))


def _ratings_and_scores(tmp_path, n_prompts=8, seed=0):
    rng = np.random.default_rng(seed)
    rows, scores = [], []
    for p in range(n_prompts):
        for g in ("ga", "gb", "gc"):
            true = rng.normal(3, 1)
            for r in range(3):
                rows.append((g, str(p), f"r{r}", int(np.clip(np.round(true + rng.normal(0, 0.5)), 1, 5))))
            scores.append((f"{g}/{p}", "good", repr(true + rng.normal(0, 0.3))))
            scores.append((f"{g}/{p}", "noise", repr(rng.normal())))
    human = tmp_path / "h.csv"
    pd.DataFrame(rows, columns=["generator", "prompt_id", "rater", "rating"]).to_csv(human, index=False)
    sc = tmp_path / "s.csv"
    pd.DataFrame(scores, columns=["item_id", "evaluator", "score"]).to_csv(sc, index=False)
    return human, sc


def test_agreement_command_json_keys(tmp_path, capsys):
    human, scores = _ratings_and_scores(tmp_path)
    rc = main(["agreement", "--human", str(human), "--scale", "1-5", "--scores", str(scores),
               "--bootstrap", "300", "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "joined 24 of 24 rated items" in out.err
    doc = json.loads(out.out)
    for name in ("good", "noise"):
        e = doc["evaluators"][name]
        for k in ("n", "pearson", "spearman", "kendall_tau_b", "kendall_tau_c", "pairwise_accuracy",
                  "pairwise_epsilon"):
            assert k in e
        assert set(e["ci"]) >= {"pearson", "spearman", "kendall_tau_b", "kendall_tau_c", "pairwise_accuracy"}
        assert e["generator_level"]["generators"] == ["ga", "gb", "gc"]
    assert doc["evaluators"]["good"]["pearson"] > doc["evaluators"]["noise"]["pearson"]
    for k in ("items", "raters", "ratings", "krippendorff_alpha_interval", "krippendorff_alpha_ordinal",
              "noise_ceiling"):
        assert k in doc["human"]
    assert (doc["human"]["items"], doc["human"]["raters"], doc["human"]["ratings"]) == (24, 3, 72)
    rc = main(["agreement", "--human", str(human), "--scale", "1-5", "--scores", str(scores),
               "--bootstrap", "300", "--json", "--group-by", "prompt_id"])
    grouped = json.loads(capsys.readouterr().out)
    assert grouped["grouped_by"] == "prompt_id"
    assert grouped["evaluators"]["good"]["pearson"] != doc["evaluators"]["good"]["pearson"]
    rc = main(["agreement", "--human", str(human), "--scale", "1-5", "--scores", str(scores), "--bootstrap", "50"])
    text = capsys.readouterr().out
    assert "noise ceiling" in text and "good" in text


def test_unjoined_items_are_an_error_unless_allowed(tmp_path, capsys):
    human, scores = _ratings_and_scores(tmp_path)
    s = pd.read_csv(scores)
    s = s[s["item_id"] != "ga/0"]
    s.loc[len(s)] = ["extra/9", "good", 1.0]
    s.to_csv(scores, index=False)
    rc = main(["agreement", "--human", str(human), "--scale", "1-5", "--scores", str(scores), "--bootstrap", "50"])
    assert rc == 2
    assert "1 of 24 rated items have no score (ga/0)" in capsys.readouterr().err
    rc = main(["agreement", "--human", str(human), "--scale", "1-5", "--scores", str(scores),
               "--bootstrap", "50", "--allow-unjoined"])
    assert rc == 0
    assert "joined 23 of 24 rated items; unjoined: 1 rated without a score, 1 scored without a rating" in (
        capsys.readouterr().out)


def test_records_join_failures_and_configurations(tmp_path):
    import hashlib

    from harness.protocol.records import record, records_frame, write_records

    rows = []
    for p in range(4):
        for g in ("ga", "gb"):
            sha = hashlib.sha256(f"{g}/{p}".encode()).hexdigest()
            rows.append(record("ev", g, str(p), sha, "baseline", "c0", "cap", float(p + (g == "gb")), "ok", ""))
            rows.append(record("ev", g, str(p), sha, "pitch", "90", "cap", float(-p), "ok", ""))
    sha0 = hashlib.sha256(b"ga/0").hexdigest()
    rows[0] = record("ev", "ga", "0", sha0, "baseline", "c0", "cap", float("nan"), "failed", "boom")
    rec = tmp_path / "rec.csv"
    write_records(records_frame(rows), rec)
    human = _csv(tmp_path / "h.csv", "generator,prompt_id,rater,rating\n" + "".join(
        f"{g},{p},r0,{p + 1}\n" for p in range(4) for g in ("ga", "gb")))
    r = read_ratings(human, parse_scale("1-5"))
    items, _, _ = r.matrix("overall")
    j = join_scores([read_scores(rec)], r, items, allow_unjoined=False)
    assert j.series == [("ev", "baseline"), ("ev", "pitch=90")]
    assert j.failed == 1 and np.isnan(j.scores[0, items.index("ga/0")])
    assert j.counts()["joined"] == 8


def test_duplicate_scores_are_an_error(tmp_path):
    human, scores = _ratings_and_scores(tmp_path)
    s = pd.read_csv(scores)
    pd.concat([s, s.head(1)]).to_csv(scores, index=False)
    r = read_ratings(human, parse_scale("1-5"))
    with pytest.raises(HumanDataError, match="score the same item twice"):
        join_scores([read_scores(scores)], r, r.matrix("overall")[0], allow_unjoined=False)


def test_votes_give_bradley_terry(tmp_path, capsys):
    human, _scores = _ratings_and_scores(tmp_path)
    votes = _csv(tmp_path / "v.csv", "prompt_id,generator_a,generator_b,winner,rater\n" + "".join(
        f"{p},ga,gb,a,r{r}\n{p},gb,gc,a,r{r}\n{p},ga,gc,a,r{r}\n" for p in range(4) for r in range(2)))
    rc = main(["agreement", "--human", str(human), "--scale", "1-5", "--votes", str(votes),
               "--bootstrap", "100", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    s = doc["bradley_terry"]["strengths"]
    assert s["ga"]["beta"] > s["gb"]["beta"] > s["gc"]["beta"]
    assert s["ga"]["ci"][0] <= s["ga"]["beta"] <= s["ga"]["ci"][1]


def test_simulated_panel_command_is_labelled_and_recovers_its_reliability(tmp_path, capsys):
    import hashlib

    from harness.protocol.records import record, records_frame, write_records

    rng = np.random.default_rng(3)
    rows = []
    for p in range(50):
        for g in range(6):
            sha = hashlib.sha256(f"{g}/{p}".encode()).hexdigest()
            truth = rng.normal()
            rows.append(record("companion", f"g{g}", f"p{p}", sha, "baseline", "c0", "cap", truth, "ok", ""))
            rows.append(record("other", f"g{g}", f"p{p}", sha, "baseline", "c0", "cap",
                               truth + rng.normal(0, 1), "ok", ""))
    rec = tmp_path / "rec.csv"
    write_records(records_frame(rows), rec)
    rc = main(["agreement", "--simulate-panel", "companion:0.6:3", "--scores", str(rec), "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    doc = json.loads(out.out)
    assert doc["human_source"]["simulated"] is True
    assert doc["human_source"]["file"].startswith("simulated:companion")
    h = doc["human"]
    assert (h["items"], h["raters"]) == (300, 3)
    lo, hi = h["ci"]["krippendorff_alpha_interval"]
    assert lo <= 0.6 <= hi
    assert doc["evaluators"]["companion"]["pearson"] <= h["ci"]["noise_ceiling"][1]
    rc = main(["agreement", "--simulate-panel", "companion:0.6", "--scores", str(rec), "--bootstrap", "50"])
    assert "SIMULATED panel" in capsys.readouterr().out
    assert main(["agreement", "--simulate-panel", "companion:1.5", "--scores", str(rec)]) == 2
