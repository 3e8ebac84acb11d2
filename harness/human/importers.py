"""Importers from public human-judgment formats into the generic ratings table.

Each returns a string frame with the ratings columns of :mod:`harness.human.data`
(``generator, prompt_id, rater, rating, dimension`` plus ``prompt`` text) and the scale the
format declares; :func:`harness.human.data.validate_ratings` then checks it like any file.

- ``stanfordt23d``: t2v_metrics' ``stanfordt23d.json`` — ``{"<prompt_idx>": {"prompt": text,
  "models": {"<method>": [rating per rater, ...]}}}``, 1–5 text-alignment Likert. Raters are
  positional (``r0``, ``r1``, …); ``prompt_id`` is the prompt index.
- ``mate3d``: MATE-3D's ``all.csv`` — ``model, prompt, Alignment, Geometry, Texture, Overall``,
  mean opinion scores on 0–10. One pseudo-rater ``mos`` per row and one dimension per score
  column; ``prompt_id`` is the prompt text (MATE-3D has no prompt index). Rater reliability is
  not defined for a single MOS and is reported as NaN.
- ``tifa`` (TIFA v1.0), ``dsg`` (DSG's TIFA160 Likert ratings): :mod:`harness.human.formats`,
  which also reads the metric scores these formats publish (:func:`read_format_scores`) and
  GPTEval3D's pairwise comparisons (:func:`read_votes_file`).

:func:`detect_format` recognises every format by content (``--human-format auto``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.core.bounded_input import read_json
from harness.core.errors import HumanDataError
from harness.human.data import Scale, read_table

FORMATS = ("table", "stanfordt23d", "mate3d", "tifa", "dsg")
SCALES = {"stanfordt23d": Scale(1.0, 5.0), "mate3d": Scale(0.0, 10.0), "tifa": Scale(1.0, 5.0),
          "dsg": Scale(1.0, 5.0)}
VOTES_FORMATS = ("table", "gpteval3d")
MATE3D_DIMENSIONS = ("Alignment", "Geometry", "Texture", "Overall")


def import_stanfordt23d(path: str | Path) -> pd.DataFrame:
    """StanfordT23D JSON → generic ratings frame (one row per rater rating)."""
    path = Path(path)
    try:
        data = read_json(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HumanDataError(f"cannot read StanfordT23D JSON: {exc}", where=path) from exc
    if not isinstance(data, dict):
        raise HumanDataError("expected an object keyed by prompt index", where=f"{path}#/")
    rows = []
    for pid, entry in data.items():
        models = entry.get("models") if isinstance(entry, dict) else None
        if not isinstance(models, dict):
            raise HumanDataError("entry needs a 'models' object", where=f"{path}#/{pid}")
        for model, ratings in models.items():
            if not isinstance(ratings, list):
                raise HumanDataError("ratings must be a list", where=f"{path}#/{pid}/models/{model}")
            for r, value in enumerate(ratings):
                rows.append(
                    {
                        "generator": str(model).strip(),
                        "prompt_id": str(pid),
                        "rater": f"r{r}",
                        "rating": str(value),
                        "dimension": "alignment",
                        "prompt": str(entry.get("prompt", "")),
                    }
                )
    return pd.DataFrame(rows, columns=["generator", "prompt_id", "rater", "rating", "dimension", "prompt"])


def import_mate3d(path: str | Path) -> pd.DataFrame:
    """MATE-3D CSV → generic ratings frame (pseudo-rater ``mos``, four dimensions)."""
    frame = read_table(path)
    missing = [c for c in ("model", "prompt", *MATE3D_DIMENSIONS) if c not in frame.columns]
    if missing:
        raise HumanDataError(f"MATE-3D table lacks column(s) {', '.join(missing)}", where=path)
    parts = []
    for dim in MATE3D_DIMENSIONS:
        parts.append(
            pd.DataFrame(
                {
                    "generator": frame["model"],
                    "prompt_id": frame["prompt"],
                    "rater": "mos",
                    "rating": frame[dim],
                    "dimension": dim.lower(),
                    "prompt": frame["prompt"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def detect_format(path: str | Path) -> str:
    """The ratings format of ``path`` from its content: a JSON file is ``tifa`` (images with
    ``human_scores``) or ``stanfordt23d`` (prompts with ``models``); a table is ``mate3d``
    (``model, prompt, Alignment, …``), ``dsg`` (``t2i_model, item_id, worker_id, answer``) or
    the generic ``table``. Raises HumanDataError for a JSON file of neither kind."""
    from harness.human.formats import DSG_LIKERT_COLUMNS, is_tifa, read_json

    path = Path(path)
    if path.suffix.lower() == ".json":
        doc = read_json(path, "human ratings")
        if is_tifa(doc):
            return "tifa"
        if isinstance(doc, dict) and doc and all(isinstance(v, dict) and "models" in v for v in doc.values()):
            return "stanfordt23d"
        raise HumanDataError(
            "not a known human-judgment JSON (TIFA v1.0 or StanfordT23D)", where=path,
            hint="pass --human-format, or convert it to a ratings table (docs/human-agreement.md)")
    columns = set(read_table(path).columns)
    if {"model", "prompt", *MATE3D_DIMENSIONS} <= columns:
        return "mate3d"
    if set(DSG_LIKERT_COLUMNS) <= columns and "rater" not in columns:
        return "dsg"
    return "table"


def import_human(path: str | Path, fmt: str) -> pd.DataFrame:
    """Dispatch on ``fmt`` (one of :data:`FORMATS`; ``table`` reads the generic file)."""
    from harness.human.formats import import_dsg, import_tifa

    if fmt == "stanfordt23d":
        return import_stanfordt23d(path)
    if fmt == "mate3d":
        return import_mate3d(path)
    if fmt == "tifa":
        return import_tifa(path)
    if fmt == "dsg":
        return import_dsg(path)
    if fmt == "table":
        return read_table(path)
    raise HumanDataError(f"unknown human format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")


def read_format_scores(path: str | Path) -> pd.DataFrame | None:
    """The metric scores a public format carries (a TIFA JSON's metrics, a DSG VQA answers
    CSV), as :func:`harness.human.join.read_scores` frames; None for any other file."""
    from harness.human.formats import dsg_vqa_scores, is_dsg_vqa, is_tifa, read_json, tifa_scores

    path = Path(path)
    if path.suffix.lower() == ".json":
        return tifa_scores(path) if is_tifa(read_json(path, "scores")) else None
    if path.suffix.lower() == ".csv" and is_dsg_vqa(read_table(path).columns):
        return dsg_vqa_scores(path)
    return None


def read_scores_any(path: str | Path) -> pd.DataFrame:
    """A scores file in a public format (:func:`read_format_scores`) or a records file /
    plain table (:func:`harness.human.join.read_scores`)."""
    from harness.human.join import read_scores

    found = read_format_scores(path)
    return read_scores(path) if found is None else found


def read_votes_file(path: str | Path, fmt: str = "auto", criterion: str | None = None):
    """Validated votes (:class:`harness.human.data.Votes`) from a generic votes table or, with
    ``fmt`` ``gpteval3d`` (auto: a ``.json`` file), GPTEval3D comparisons of ``criterion``."""
    from harness.human.data import read_votes, validate_votes
    from harness.human.formats import import_gpteval3d_votes

    path = Path(path)
    if fmt == "auto":
        fmt = "gpteval3d" if path.suffix.lower() == ".json" else "table"
    if fmt == "gpteval3d":
        return validate_votes(import_gpteval3d_votes(path, criterion), str(path))
    if fmt == "table":
        return read_votes(path)
    raise HumanDataError(f"unknown votes format {fmt!r}", hint=f"use one of {', '.join(VOTES_FORMATS)}")
