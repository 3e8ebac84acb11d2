"""Evaluator scores for human agreement: read score files and join them with human ratings.

A scores file is either a raw score records file (docs/formats.md "Raw score records") or a
plain table with the columns ``item_id, evaluator, score`` (optional ``configuration``). Each
(evaluator, configuration) pair is one *series*. Records give configuration ``factor=level``
(``baseline`` for c0, with ``@view_policy`` when one is set) and a failed row gives NaN — a
failure, counted and printed, never a score.

Join keys. Ratings keyed by ``generator, prompt_id`` join records on the same two columns and
a plain table on ``item_id`` = ``generator/prompt_id``. Ratings keyed by ``item_id`` join a
plain table on ``item_id`` and records on ``prompt_id`` (``t3d-audit score`` writes the image
file stem there); an ``item_id`` with a file extension also matches its stem.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from harness.core.errors import HumanDataError
from harness.human.data import MAX_LISTED, Ratings, read_table, scene_item, to_float

PLAIN_COLUMNS = ("item_id", "evaluator", "score")
C0_NAME = "baseline"


def _configuration(frame: pd.DataFrame) -> pd.Series:
    conf = np.where(
        (frame["factor"] == "baseline") & (frame["level"] == "c0"),
        C0_NAME,
        frame["factor"] + "=" + frame["level"],
    )
    conf = pd.Series(conf, index=frame.index)
    if "view_policy" in frame.columns:
        vp = frame["view_policy"].fillna("")
        conf = conf.where(vp == "", conf + "@" + vp)
    return conf


def read_scores(path: str | Path) -> pd.DataFrame:
    """One scores file → long frame: evaluator, configuration, item_id, generator, prompt_id,
    score (float64, NaN for a failure), failed (bool)."""
    path = Path(path)
    head = read_table(path) if path.suffix.lower() in (".csv", ".parquet", ".pq") else None
    if head is None:
        raise HumanDataError("scores file must be .csv, .parquet or .pq", where=path)
    if set(PLAIN_COLUMNS) <= set(head.columns):
        score = pd.Series(to_float(head["score"]), index=head.index)
        bad = score.isna().to_numpy() & (head["score"] != "").to_numpy()
        if bad.any():
            rows = ", ".join(str(i + 1) for i in np.flatnonzero(bad)[:MAX_LISTED])
            raise HumanDataError(f"non-numeric score in data rows {rows}", where=path)
        conf = head["configuration"] if "configuration" in head.columns else C0_NAME
        return pd.DataFrame(
            {
                "evaluator": head["evaluator"],
                "configuration": conf,
                "item_id": head["item_id"],
                "generator": head.get("generator", ""),
                "prompt_id": head.get("prompt_id", ""),
                "score": score.to_numpy(dtype=np.float64),
                "failed": score.isna().to_numpy(),
            }
        )
    from harness.protocol.records import read_records

    rec = read_records(path)
    ok = (rec["status"] == "ok").to_numpy()
    return pd.DataFrame(
        {
            "evaluator": rec["evaluator"],
            "configuration": _configuration(rec),
            "item_id": rec["prompt_id"],
            "generator": rec["generator"],
            "prompt_id": rec["prompt_id"],
            "score": np.where(ok, rec["score"].to_numpy(dtype=np.float64), np.nan),
            "failed": ~ok,
            "_records": True,
        }
    )


@dataclass(frozen=True)
class Joined:
    """Scores aligned with the human items.

    ``items`` (n,) the joined human items; ``series`` [(evaluator, configuration)] (E);
    ``scores`` (E, n) with NaN where a series has no score or a failure; counts for printing.
    """

    items: list[str]
    series: list[tuple[str, str]]
    scores: np.ndarray
    human_items: int
    unjoined_human: list[str]
    unjoined_scored: int
    failed: int

    def counts(self) -> dict[str, int]:
        return {
            "human_items": self.human_items,
            "joined": len(self.items),
            "unjoined_human": len(self.unjoined_human),
            "unjoined_scored": self.unjoined_scored,
            "failed_scores": self.failed,
        }


def _keys(frame: pd.DataFrame, ratings: Ratings) -> pd.Series:
    records = "_records" in frame.columns
    if ratings.keyed_by == "scene":
        if records:
            return pd.Series(
                [scene_item(g, p) for g, p in zip(frame["generator"], frame["prompt_id"], strict=True)],
                index=frame.index,
            )
        return frame["item_id"]
    return frame["item_id"]


def join_scores(frames: list[pd.DataFrame], ratings: Ratings, items: list[str], *, allow_unjoined: bool) -> Joined:
    """Align score frames with the human ``items``; unknown human items raise unless allowed."""
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        raise HumanDataError("no scores to join", hint="pass at least one non-empty --scores file")
    key = _keys(frame, ratings)
    wanted = set(items)
    if ratings.keyed_by == "item_id":
        stem = {Path(i).stem: i for i in items if Path(i).stem != i}
        key = key.map(lambda k: k if k in wanted else stem.get(k, k))
    frame = frame.assign(_key=key.to_numpy())
    dup = frame.duplicated(["evaluator", "configuration", "_key"], keep=False).to_numpy()
    if dup.any():
        ex = frame.loc[dup, ["evaluator", "configuration", "_key"]].head(3).to_numpy().tolist()
        raise HumanDataError(
            f"{int(dup.sum())} rows score the same item twice for one evaluator and configuration (e.g. {ex})",
            hint="keep one score per item, evaluator and configuration (e.g. one caption per scene)",
        )
    scored = set(frame["_key"])
    unjoined_human = sorted(wanted - scored)
    if unjoined_human and not allow_unjoined:
        shown = ", ".join(unjoined_human[:MAX_LISTED])
        raise HumanDataError(
            f"{len(unjoined_human)} of {len(items)} rated items have no score ({shown})",
            where=ratings.source,
            hint="score them, or pass --allow-unjoined to measure on the joined items only",
        )
    joined = [i for i in items if i in scored]
    if not joined:
        raise HumanDataError("no rated item has a score", where=ratings.source,
                             hint="check the join keys (docs/formats.md 'Human ratings')")
    col = {item: j for j, item in enumerate(joined)}
    inside = frame[frame["_key"].isin(col)]
    series = sorted(set(zip(inside["evaluator"], inside["configuration"], strict=True)))
    row = {s: e for e, s in enumerate(series)}
    scores = np.full((len(series), len(joined)), np.nan)
    r = [row[(e, c)] for e, c in zip(inside["evaluator"], inside["configuration"], strict=True)]
    scores[r, inside["_key"].map(col).to_numpy()] = inside["score"].to_numpy()
    return Joined(
        items=joined,
        series=series,
        scores=scores,
        human_items=len(items),
        unjoined_human=unjoined_human,
        unjoined_scored=len(scored - wanted),
        failed=int(inside["failed"].sum()),
    )
