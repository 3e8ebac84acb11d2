"""Public human-judgment formats: TIFA v1.0, DSG (TIFA160), StanfordT23D, MATE-3D and
GPTEval3D votes, each checked against its published values where the data is present."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import HumanDataError
from harness.human import item_agreement as hc
from harness.human.data import Scale, validate_ratings
from harness.human.formats import (
    dsg_item_score,
    dsg_vqa_scores,
    import_dsg,
    import_gpteval3d_votes,
    import_tifa,
    tifa_scores,
)
from harness.human.importers import detect_format, import_human, read_votes_file
from harness.human.join import join_scores
from tests._human_data import TIFA_PUBLISHED, human_data

# j-min/DSG @ 7330119a README.md "Human correlation on TIFA-160" (Spearman, Kendall to 3 dp)
DSG_PUBLISHED = {
    "mplug_dsg": (0.463, 0.380), "mplug_dsg-no-dependency": (0.464, 0.378),
    "mplug_vq2a": (0.212, 0.164),
    "instructblip_dsg": (0.442, 0.364), "instructblip_dsg-no-dependency": (0.436, 0.355),
    "instructblip_vq2a": (0.426, 0.352),
    "pali17b_dsg": (0.571, 0.458), "pali17b_dsg-no-dependency": (0.570, 0.457),
    "pali17b_vq2a": (0.207, 0.157),
}


def _mean_and_scores(ratings, score_frames, *, allow_unjoined=False):
    items, _, matrix = ratings.matrix(ratings.dimensions()[0])
    joined = join_scores(score_frames, ratings, items, allow_unjoined=allow_unjoined)
    return items, np.nanmean(matrix, axis=1), joined


def test_tifa_v1_reproduces_the_published_correlation_table() -> None:
    tifa = human_data("tifa") / "human_annotations_with_scores.json"
    ratings = validate_ratings(import_tifa(tifa), Scale(1, 5), str(tifa))
    assert (len(ratings.frame), ratings.frame["item"].nunique(), ratings.frame["prompt_id"].nunique()) \
        == (1600, 800, 160)
    _items, mean, joined = _mean_and_scores(ratings, [tifa_scores(tifa)])
    assert joined.counts()["joined"] == 800 and joined.failed == 0
    assert sorted(e for e, _ in joined.series) == sorted(TIFA_PUBLISHED)
    for (metric, _), scores in zip(joined.series, joined.scores, strict=True):
        r, tau = TIFA_PUBLISHED[metric]
        assert hc.pearson(scores, mean) == pytest.approx(r, abs=1e-12), metric
        assert hc.kendall_tau(scores, mean, "b") == pytest.approx(tau, abs=1e-12), metric
    # the notebook's "Spearman" is Pearson: the true Spearman of CLIPScore differs
    clip = joined.scores[[e for e, _ in joined.series].index("clipscore_vitb32")]
    assert hc.spearman(clip, mean) == pytest.approx(0.3198, abs=1e-4)


def test_dsg_tifa160_reproduces_the_published_spearman_and_kendall() -> None:
    dsg = human_data("dsg_tifa160")
    ratings = validate_ratings(import_dsg(dsg / "tifa160-likert-anns.csv"), Scale(1, 5), "dsg")
    assert (len(ratings.frame), ratings.frame["item"].nunique()) == (3995, 800)
    for vqa in ("mplug", "instructblip", "pali17b"):
        frames = [dsg_vqa_scores(dsg / f"{vqa}_{qg}.csv") for qg in ("dsg", "vq2a")]
        items, mean, joined = _mean_and_scores(ratings, frames, allow_unjoined=True)
        assert joined.unjoined_human == [] and joined.failed == 0
        for (name, _), scores in zip(joined.series, joined.scores, strict=True):
            unscored = [i for i, s in zip(items, scores, strict=True) if np.isnan(s)]
            # tifa160_134 has no DSG answers; DSG's script scores it 0, so the published
            # figure is over 800 items with those five zeros
            assert unscored == ([] if "vq2a" in name else
                                [f"{g}/tifa160_134" for g in sorted({i.split('/')[0] for i in items})])
            filled = np.where(np.isnan(scores), 0.0, scores)
            rho, tau = DSG_PUBLISHED[name]
            assert round(hc.spearman(filled, mean), 3) == rho, name
            assert round(hc.kendall_tau(filled, mean, "b"), 3) == tau, name


def test_dsg_item_score_zeroes_questions_whose_parent_failed() -> None:
    # q1 yes, q2 no, q3 yes but depends on q2, q4 yes depending on q1 (0 = no parent)
    answers, qids, parents = ["yes", "no", "yes", "yes"], [1, 2, 3, 4], [[0], [1], [2], [1]]
    assert dsg_item_score(answers, qids, parents) == (0.5, 0.75)
    assert dsg_item_score(["no train", "Yes"], None, None) == (0.5, 0.5)  # only "yes" counts


def test_dsg_files_written_by_hand(tmp_path: Path) -> None:
    likert = tmp_path / "likert.csv"
    likert.write_text("dsg_prompt_split,t2i_model,item_id,source_id,worker_id,question,answer\n"
                      "tifa160,m1,i1,s,w1,q,5\ntifa160,m1,i1,s,w2,q,4\n"
                      "tifa160,m2,i1,s,w1,q,1\ntifa160,m2,i1,s,w2,q,2\n")
    vqa = tmp_path / "x_dsg.csv"
    vqa.write_text("dsg_prompt_split,qg_model,t2i_model,item_id,question,question_id,dependency_id,answer\n"
                   "tifa160,dsg,m1,i1,a?,1,0,yes\ntifa160,dsg,m1,i1,b?,2,1,yes\n"
                   "tifa160,dsg,m2,i1,a?,1,0,no\ntifa160,dsg,m2,i1,b?,2,1,yes\n"
                   "tifa160,dsg,m2,i2,a?,1,\"1, outside\",yes\n")
    assert detect_format(likert) == "dsg"
    ratings = validate_ratings(import_human(likert, "dsg"), Scale(1, 5), str(likert))
    assert ratings.keyed_by == "scene" and ratings.dimensions() == ["consistency"]
    scores = dsg_vqa_scores(vqa).set_index(["evaluator", "item_id"])["score"]
    assert scores[("x_dsg", "m1/i1")] == 1.0 and scores[("x_dsg", "m2/i1")] == 0.0
    assert scores[("x_dsg-no-dependency", "m2/i1")] == 0.5
    assert scores[("x_dsg", "m2/i2")] == 1.0  # an unparsable dependency: scored without them


def _tifa_doc() -> dict:
    def entry(text_id: str, human: list, metric: float) -> dict:
        return {"text_id": text_id, "image_path": "x.jpg", "text": "a cat", "human_scores": human,
                "human_avg": float(np.mean(human)), "clipscore": metric}
    return {"t1_a": entry("t1", [5, 4], 0.9), "t1_b": entry("t1", [2, 1], 0.2),
            "t2_a": entry("t2", [3, 3], 0.5), "t2_b": entry("t2", [4, 5], 0.7)}


def test_agreement_reads_a_tifa_json_by_content(tmp_path: Path, capsys) -> None:
    """Regression: a TIFA file went to the StanfordT23D reader ("entry needs a 'models'
    object"); it is recognised by content and its metric scores join as evaluators."""
    path = tmp_path / "tifa.json"
    path.write_text(json.dumps(_tifa_doc()))
    assert detect_format(path) == "tifa"
    assert main(["agreement", "--human", str(path), "--scores", str(path), "--bootstrap", "2",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["human_source"]["scale"] == "1-5" and doc["human_source"]["dimension"] == "faithfulness"
    assert doc["join"]["joined"] == 4 and doc["bootstrap"]["blocks"] == 2
    # hand-computed: means 4.5, 1.5, 3, 4.5 against 0.9, 0.2, 0.5, 0.7
    m, s = np.array([4.5, 1.5, 3.0, 4.5]), np.array([0.9, 0.2, 0.5, 0.7])
    assert doc["evaluators"]["clipscore"]["pearson"] == pytest.approx(np.corrcoef(m, s)[0, 1])
    assert doc["evaluators"]["clipscore"]["kendall_tau_b"] == pytest.approx(5 / np.sqrt(6 * 5))


def test_unknown_json_and_bad_entries_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"a": {"b": 1}}))
    with pytest.raises(HumanDataError, match="not a known human-judgment JSON"):
        detect_format(path)
    bad = _tifa_doc()
    bad["t1_a"]["human_scores"] = []
    path.write_text(json.dumps(bad))
    with pytest.raises(HumanDataError, match="non-empty list") as info:
        import_tifa(path)
    assert "#/t1_a/human_scores" in str(info.value)


def _comparisons(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "comparisons.json"
    path.write_text(json.dumps(doc))
    return path


def test_gpteval3d_comparisons_become_votes(tmp_path: Path, capsys) -> None:
    """GPTEval3D's comparisons.json (assets/data_format.md): -1 m1 wins, 1 m2 wins, 0 draw."""
    games = [{"m1": "dreamfusion", "m2": "mvdream", "prompt": "0", "result": 1},
             {"m1": "mvdream", "m2": "dreamfusion", "prompt": "1", "result": -1},
             {"m1": "dreamfusion", "m2": "mvdream", "prompt": "2", "result": 0},
             {"m1": "shap-e", "m2": "mvdream", "prompt": "0", "result": 1}]
    path = _comparisons(tmp_path, {"text-asset alignment": games, "3d plausibility": games[:1]})
    with pytest.raises(HumanDataError, match="choose one"):
        import_gpteval3d_votes(path)
    votes = read_votes_file(path, "auto", "text-asset alignment")
    assert votes.frame["winner"].tolist() == ["b", "a", "tie", "b"]
    assert votes.frame["rater"].tolist() == ["v0", "v1", "v2", "v3"]
    stanford = tmp_path / "s.json"
    stanford.write_text(json.dumps({str(p): {"prompt": f"p{p}", "models": {
        "dreamfusion": [1, 2], "mvdream": [4, 5], "shap-e": [1, 1]}} for p in range(3)}))
    assert main(["agreement", "--human", str(stanford), "--votes", str(path),
                 "--votes-criterion", "text-asset alignment", "--bootstrap", "2", "--json"]) == 0
    bt = json.loads(capsys.readouterr().out)["bradley_terry"]["strengths"]
    assert bt["mvdream"]["beta"] > max(bt["dreamfusion"]["beta"], bt["shap-e"]["beta"])
    bad = _comparisons(tmp_path, {"c": [{"m1": "a", "m2": "b", "prompt": "0", "result": 2}]})
    with pytest.raises(HumanDataError, match="not -1, 0 or 1") as info:
        import_gpteval3d_votes(bad)
    assert "#/c/0/result" in str(info.value)


def test_stanfordt23d_and_mate3d_match_their_published_descriptions() -> None:
    """StanfordT23D: 60 prompts x 6 models x 3 raters (1,080 ratings, 1-5), its prompt_idx
    indexing GPTEval3D's prompts.json; MATE-3D: 160 prompts x 8 models, four 0-10 MOS
    dimensions, five prompt-disjoint folds of 1,024/256."""
    path = human_data("stanfordt23d") / "stanfordt23d.json"
    assert detect_format(path) == "stanfordt23d"
    st = validate_ratings(import_human(path, "stanfordt23d"), Scale(1, 5), str(path)).frame
    assert (len(st), st["prompt_id"].nunique(), st["generator"].nunique(), st["rater"].nunique()) \
        == (1080, 60, 6, 3)
    prompts = json.loads((human_data("gpteval3d") / "prompts.json").read_text())
    pairs = st[["prompt_id", "prompt"]].drop_duplicates()
    assert all(prompts[int(i)] == text for i, text in zip(pairs["prompt_id"], pairs["prompt"], strict=True))
    mate = human_data("mate3d") / "all.csv"
    assert detect_format(mate) == "mate3d"
    mf = validate_ratings(import_human(mate, "mate3d"), Scale(0, 10), str(mate)).frame
    assert (len(mf), mf["prompt_id"].nunique(), mf["generator"].nunique()) == (4 * 1280, 160, 8)
    for k in range(1, 6):
        train = set(pd.read_csv(mate.parent / f"train_{k}.csv")["prompt"])
        test = set(pd.read_csv(mate.parent / f"test_{k}.csv")["prompt"])
        assert not train & test and len(train) + len(test) == 160


def test_agreement_command_on_the_real_dsg_files(capsys) -> None:
    dsg = human_data("dsg_tifa160")
    assert main(["agreement", "--human", str(dsg / "tifa160-likert-anns.csv"), "--scores",
                 str(dsg / "mplug_vq2a.csv"), "--bootstrap", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["human_source"]["keyed_by"] == "scene" and doc["join"]["joined"] == 800
    assert round(doc["evaluators"]["mplug_vq2a"]["spearman"], 3) == DSG_PUBLISHED["mplug_vq2a"][0]


@st.composite
def _dsg_items(draw):
    n = draw(st.integers(1, 8))
    answers = draw(st.lists(st.sampled_from(["yes", "no", "", "no train"]), min_size=n, max_size=n))
    parents = [draw(st.lists(st.integers(0, k), max_size=2)) or [0] for k in range(n)]  # ids < own id
    return answers, list(range(1, n + 1)), parents


@given(_dsg_items())
def test_dsg_dependencies_only_lower_a_score(item) -> None:
    answers, qids, parents = item
    with_dep, plain = dsg_item_score(answers, qids, parents)
    assert 0.0 <= with_dep <= plain <= 1.0
    assert plain == sum(a == "yes" for a in answers) / len(answers)
    if all(a == "yes" for a in answers):
        assert with_dep == 1.0


def test_detects_a_generic_table_and_the_api_takes_gpteval3d_votes(tmp_path: Path) -> None:
    from harness.api import agreement

    table = tmp_path / "r.csv"
    table.write_text("generator,prompt_id,rater,rating\ng1,0,a,1\ng1,0,b,2\ng2,0,a,4\ng2,0,b,5\n"
                     "g1,1,a,2\ng1,1,b,2\ng2,1,a,5\ng2,1,b,4\n")
    assert detect_format(table) == "table"
    votes = _comparisons(tmp_path, {"alignment": [{"m1": "g1", "m2": "g2", "prompt": "0", "result": 1},
                                                  {"m1": "g2", "m2": "g1", "prompt": "1", "result": -1}]})
    doc = agreement(table, scale="1-5", votes=votes, bootstrap=2)
    bt = doc["bradley_terry"]["strengths"]
    assert bt["g2"]["beta"] > 0 > bt["g1"]["beta"]


def test_audit_human_recognises_the_public_formats(tmp_path: Path) -> None:
    """Regression: --audit-human sent every .json to the StanfordT23D reader."""
    from harness.human.audit import HumanInput, load_ratings

    path = tmp_path / "tifa.json"
    path.write_text(json.dumps(_tifa_doc()))
    ratings, dim = load_ratings(HumanInput(path))
    assert (dim, str(ratings.scale), ratings.keyed_by) == ("faithfulness", "1-5", "item_id")
