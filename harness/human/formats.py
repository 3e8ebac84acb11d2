"""Importers for public human-judgment formats that carry more than ratings.

Each ratings importer returns a string frame in the generic ratings columns of
:mod:`harness.human.data`; each scores reader returns the long frame of
:func:`harness.human.join.read_scores` (``evaluator, configuration, item_id, generator,
prompt_id, score, failed``); the votes importer returns the generic votes columns.

- ``tifa``: TIFA v1.0's ``human_annotations_with_scores.json`` (Yushi-Hu/tifa,
  ``human_annotations/``): ``{"<image id>": {"text_id", "text", "human_scores": [r0, r1],
  "human_avg", "<metric>": score, ...}}``, 1–5 faithfulness Likert, 800 text-to-image images.
  Ratings are keyed by ``item_id`` (the image id, also the image file stem) with ``prompt_id``
  = ``text_id``; raters are positional (``r0``, ``r1``). The numeric keys other than the
  human ones are the per-image metric scores (METEOR, BLEU, ROUGE, SPICE, CLIPScore, TIFA with
  five VQA models): :func:`tifa_scores` reads them as evaluators.
- ``dsg``: DSG's TIFA160 Likert file (j-min/DSG ``dsg/data/tifa160-likert-anns.csv``):
  ``t2i_model, item_id, worker_id, answer`` (1–5), one row per worker rating. Keyed by scene:
  ``generator`` = ``t2i_model``, ``prompt_id`` = ``item_id``; ``rater`` = ``worker_id``.
  :func:`dsg_vqa_scores` reads DSG's released VQA answers (``vqa_answers_release/*.csv``:
  ``qg_model, t2i_model, item_id, question, answer`` and, for DSG questions, ``question_id,
  dependency_id``) into item scores as DSG defines them: the share of questions answered
  ``yes``; with dependencies, a question whose parent was not answered ``yes`` scores 0 (an
  item whose dependency list does not parse is scored without dependencies, as DSG's loader
  does). An item with no answers has no score (DSG's script scores it 0; here it is left out
  and counted as unjoined).
- ``gpteval3d``: GPTEval3D's ``comparisons.json`` (3DTopia/GPTEval3D ``assets/data_format.md``):
  ``{"<criterion>": [{"m1", "m2", "prompt", "result"}]}`` with result −1 (m1 wins), 1 (m2
  wins) or 0 (a draw). The votes carry no rater id, so each vote is its own rater ``v<k>``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from harness.core import bounded_input
from harness.core.errors import HumanDataError
from harness.core.jsonout import JSONValue
from harness.human.data import read_table, scene_item

TIFA_HUMAN_KEYS = ("human_scores", "human_avg")
TIFA_TEXT_KEYS = ("text_id", "image_path", "text")
DSG_LIKERT_COLUMNS = ("t2i_model", "item_id", "worker_id", "answer")
DSG_VQA_COLUMNS = ("qg_model", "t2i_model", "item_id", "question", "answer")
GPTEVAL3D_RESULTS = {-1: "a", 1: "b", 0: "tie"}
SCORE_COLUMNS = ["evaluator", "configuration", "item_id", "generator", "prompt_id", "score", "failed"]


def read_json(path: str | Path, what: str) -> JSONValue:
    """A ratings or votes JSON file through the bounded reader (size, depth, regular files
    only); any failure is a :class:`HumanDataError` naming the file."""
    path = Path(path)
    try:
        return bounded_input.read_json(path, what=f"{what} JSON")
    except bounded_input.InputFileError as exc:
        raise HumanDataError(exc.what, where=path, hint=exc.hint) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HumanDataError(f"cannot read {what} JSON: {exc}", where=path) from None


def is_tifa(doc: object) -> bool:
    """A TIFA human-annotations document: an object of objects with ``human_scores``."""
    return isinstance(doc, dict) and bool(doc) and all(
        isinstance(v, dict) and "human_scores" in v for v in doc.values())


def _tifa_entries(path: str | Path) -> dict[str, dict]:
    doc = read_json(path, "TIFA")
    if not is_tifa(doc):
        raise HumanDataError("expected TIFA's object of images, each with 'human_scores'",
                             where=f"{path}#/", hint="see docs/human-agreement.md 'Public formats'")
    return doc


def import_tifa(path: str | Path) -> pd.DataFrame:
    """TIFA v1.0 JSON → generic ratings frame keyed by ``item_id`` (one row per rating)."""
    rows = []
    for image, entry in _tifa_entries(path).items():
        ratings = entry["human_scores"]
        if not isinstance(ratings, list) or not ratings:
            raise HumanDataError("'human_scores' must be a non-empty list",
                                 where=f"{path}#/{image}/human_scores")
        for r, value in enumerate(ratings):
            rows.append({"item_id": str(image), "prompt_id": str(entry.get("text_id", image)),
                         "rater": f"r{r}", "rating": str(value), "dimension": "faithfulness",
                         "prompt": str(entry.get("text", ""))})
    return pd.DataFrame(rows, columns=["item_id", "prompt_id", "rater", "rating", "dimension", "prompt"])


def tifa_scores(path: str | Path) -> pd.DataFrame:
    """The per-image metric scores of a TIFA JSON: one evaluator per numeric key that is not
    a human one. A missing or non-numeric score is a failure (NaN, ``failed``)."""
    entries = _tifa_entries(path)
    metrics = sorted({k for e in entries.values() for k in e
                      if k not in TIFA_HUMAN_KEYS and k not in TIFA_TEXT_KEYS})
    rows = []
    for image, entry in entries.items():
        for metric in metrics:
            v = entry.get(metric)
            ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            rows.append((metric, "baseline", str(image), "", str(entry.get("text_id", "")),
                         float(v) if ok else math.nan, not ok))
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def import_dsg(path: str | Path) -> pd.DataFrame:
    """DSG TIFA160 Likert CSV → generic ratings frame keyed by (t2i_model, item_id)."""
    frame = read_table(path)
    missing = [c for c in DSG_LIKERT_COLUMNS if c not in frame.columns]
    if missing:
        raise HumanDataError(f"DSG Likert table lacks column(s) {', '.join(missing)}", where=path,
                             hint="columns: t2i_model, item_id, worker_id, answer")
    return pd.DataFrame({"generator": frame["t2i_model"], "prompt_id": frame["item_id"],
                         "rater": frame["worker_id"], "rating": frame["answer"],
                         "dimension": "consistency",
                         "prompt": frame.get("source_id", pd.Series("", index=frame.index))})


def is_dsg_vqa(columns: object) -> bool:
    return set(DSG_VQA_COLUMNS) <= set(columns)


def _parents(text: str) -> list[int] | None:
    """``"1,2"`` → [1, 2]; None when a token is not a question id. DSG's released questions
    carry a few object names there (``"1, outside"`` for tifa160_67)."""
    tokens = [p.strip() for p in str(text).split(",") if p.strip()]
    return [int(p) for p in tokens] if all(p.isdigit() for p in tokens) else None


def dsg_item_score(answers: list[str], qids: list[int] | None, parents: list[list[int]] | None
                   ) -> tuple[float, float]:
    """(score with dependencies, score without) of one item: the share of questions answered
    ``yes``; with dependencies a question whose parent (a ``question_id``; 0 = none) was not
    answered ``yes`` scores 0. Without ``parents`` both are the plain share."""
    yes = np.array([a.strip().lower() == "yes" for a in answers], dtype=float)
    plain = float(yes.mean())
    if parents is None or qids is None:
        return plain, plain
    by_id = dict(zip(qids, yes, strict=True))
    kept = [0.0 if any(by_id.get(p, 0.0) == 0.0 for p in ps if p != 0) else y
            for y, ps in zip(yes, parents, strict=True)]
    return float(np.mean(kept)), plain


def dsg_vqa_scores(path: str | Path) -> pd.DataFrame:
    """DSG VQA answers CSV → scores keyed by scene (``t2i_model/item_id``). The evaluator is
    the file stem (e.g. ``mplug_dsg``); a file with ``dependency_id`` also gives
    ``<stem>-no-dependency``. An empty answer counts as not ``yes`` (as DSG scores it)."""
    path = Path(path)
    frame = read_table(path)
    if not is_dsg_vqa(frame.columns):
        raise HumanDataError(f"DSG VQA answers need columns {', '.join(DSG_VQA_COLUMNS)}", where=path)
    dep = {"question_id", "dependency_id"} <= set(frame.columns)
    rows = []
    for (gen, item), sub in frame.groupby(["t2i_model", "item_id"], sort=True):
        answers = sub["answer"].tolist()
        if dep:
            qids = [int(q) if q.isdigit() else -1 for q in sub["question_id"]]
            parents = [_parents(d) for d in sub["dependency_id"]]
            # as DSG's own loader does: an item whose dependencies do not parse is scored
            # without them (its published PaLI-17B figure, 0.571, depends on this)
            parsed = None if any(p is None for p in parents) else parents
            with_dep, plain = dsg_item_score(answers, qids, parsed)
        else:
            with_dep, plain = dsg_item_score(answers, None, None)
        key = scene_item(gen, item)
        rows.append((path.stem, "baseline", key, gen, item, with_dep, False))
        if dep:
            rows.append((f"{path.stem}-no-dependency", "baseline", key, gen, item, plain, False))
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def is_gpteval3d(doc: object) -> bool:
    """GPTEval3D comparisons: an object of criteria, each a list of ``m1, m2, result`` objects."""
    return isinstance(doc, dict) and bool(doc) and all(
        isinstance(v, list) and all(isinstance(c, dict) and {"m1", "m2", "result"} <= set(c) for c in v)
        for v in doc.values())


def import_gpteval3d_votes(path: str | Path, criterion: str | None = None) -> pd.DataFrame:
    """GPTEval3D ``comparisons.json`` → generic votes frame (strings) for one criterion
    (``criterion``, or the only one)."""
    doc = read_json(path, "GPTEval3D comparisons")
    if not is_gpteval3d(doc):
        raise HumanDataError("expected GPTEval3D comparisons: {criterion: [{m1, m2, prompt, result}]}",
                             where=f"{path}#/")
    if criterion is None:
        if len(doc) != 1:
            raise HumanDataError(f"the votes have criteria {', '.join(doc)}: choose one",
                                 where="--votes-criterion")
        criterion = next(iter(doc))
    if criterion not in doc:
        raise HumanDataError(f"no criterion {criterion!r} in the votes (have {', '.join(doc)})",
                             where="--votes-criterion")
    rows = []
    for k, c in enumerate(doc[criterion]):
        try:
            winner = GPTEVAL3D_RESULTS[int(c["result"])]
        except (KeyError, TypeError, ValueError):
            raise HumanDataError(f"result {c.get('result')!r} is not -1, 0 or 1",
                                 where=f"{path}#/{criterion}/{k}/result",
                                 hint="-1: m1 wins, 1: m2 wins, 0: a draw") from None
        rows.append({"prompt_id": str(c.get("prompt", "")), "generator_a": str(c["m1"]),
                     "generator_b": str(c["m2"]), "winner": winner, "rater": f"v{k}"})
    return pd.DataFrame(rows, columns=["prompt_id", "generator_a", "generator_b", "winner", "rater"])
