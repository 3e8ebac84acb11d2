"""Importers from public human-judgment formats into the generic ratings table.

Each returns a string frame with the ratings columns of :mod:`harness.human_data`
(``generator, prompt_id, rater, rating, dimension`` plus ``prompt`` text) and the scale the
format declares; :func:`harness.human_data.validate_ratings` then checks it like any file.

- ``stanfordt23d``: t2v_metrics' ``stanfordt23d.json`` — ``{"<prompt_idx>": {"prompt": text,
  "models": {"<method>": [rating per rater, ...]}}}``, 1–5 text-alignment Likert. Raters are
  positional (``r0``, ``r1``, …); ``prompt_id`` is the prompt index.
- ``mate3d``: MATE-3D's ``all.csv`` — ``model, prompt, Alignment, Geometry, Texture, Overall``,
  mean opinion scores on 0–10. One pseudo-rater ``mos`` per row and one dimension per score
  column; ``prompt_id`` is the prompt text (MATE-3D has no prompt index). Rater reliability is
  not defined for a single MOS and is reported as NaN.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.bounded_input import read_json
from harness.errors import HumanDataError
from harness.human_data import Scale, read_table

FORMATS = ("table", "stanfordt23d", "mate3d")
SCALES = {"stanfordt23d": Scale(1.0, 5.0), "mate3d": Scale(0.0, 10.0)}
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


def import_human(path: str | Path, fmt: str) -> pd.DataFrame:
    """Dispatch on ``fmt`` (``stanfordt23d`` or ``mate3d``); ``table`` reads the generic file."""
    if fmt == "stanfordt23d":
        return import_stanfordt23d(path)
    if fmt == "mate3d":
        return import_mate3d(path)
    if fmt == "table":
        return read_table(path)
    raise HumanDataError(f"unknown human format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
