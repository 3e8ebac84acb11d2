"""Human judgments: the ratings table and the pairwise-votes table (docs/formats.md "Human ratings").

Both are long tables, CSV or Parquet by suffix. Every problem is a :class:`HumanDataError` that
names the file, the rows and what to do; no row is dropped.

Ratings columns: ``rater``, ``rating`` and either ``item_id`` or ``generator`` + ``prompt_id``
(both forms may be present; ``item_id`` then names the item and ``prompt_id`` its prompt);
optional ``dimension`` (defaults to ``overall``). Other columns are kept and ignored.

Votes columns: ``prompt_id``, ``generator_a``, ``generator_b``, ``winner`` (``a``, ``b`` or
``tie``), ``rater``.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from harness.core import bounded_input
from harness.core.errors import HumanDataError

MAX_LISTED = 8
DEFAULT_DIMENSION = "overall"
WINNERS = ("a", "b", "tie")


@dataclass(frozen=True)
class Scale:
    """The declared rating scale, inclusive: ``low`` ≤ rating ≤ ``high``."""

    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.low:g}-{self.high:g}"


def parse_scale(text: str) -> Scale:
    """``"1-5"`` → Scale(1, 5); also ``"0-10"``, ``"0.5-1"``. Raises HumanDataError."""
    m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*", text or "")
    if not m or float(m.group(1)) >= float(m.group(2)):
        raise HumanDataError(
            f"invalid scale {text!r}", where="--scale", hint="write LOW-HIGH with LOW < HIGH, e.g. 1-5"
        )
    return Scale(float(m.group(1)), float(m.group(2)))


def to_float(values: pd.Series) -> np.ndarray:
    """Strings → float64 with Python's correctly rounded parser (NaN where not a finite number).

    pandas' fast CSV float parser may miss the nearest double by an ulp, which would break
    exact ties between scores; every number here goes through :class:`float`.
    """

    def one(v: str) -> float:
        try:
            f = float(v)
        except (TypeError, ValueError):
            return float("nan")
        return f if np.isfinite(f) else float("nan")

    return np.fromiter((one(v) for v in values), dtype=np.float64, count=len(values))


def _rows(mask: np.ndarray) -> str:
    idx = np.flatnonzero(mask) + 1
    shown = ", ".join(str(i) for i in idx[:MAX_LISTED])
    more = f" and {idx.size - MAX_LISTED} more" if idx.size > MAX_LISTED else ""
    return f"data row{'s' if idx.size > 1 else ''} {shown}{more}"


def read_table(path: str | Path) -> pd.DataFrame:
    """A CSV or Parquet file as strings (every cell, stripped; empty cells are '')."""
    path = Path(path)
    if not path.is_file():
        if path.exists():
            raise HumanDataError("not a regular file (a device, FIFO or folder)", where=path,
                                 hint="name a plain file")
        raise HumanDataError("file not found", where=path, hint="check the path")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            raw = io.BytesIO(bounded_input.read_bytes(path, what="table"))
            frame = pd.read_csv(raw, dtype=str, keep_default_na=False, encoding="utf-8")
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path).astype(str)
        else:
            raise HumanDataError(
                f"unknown table format {suffix!r}", where=path, hint="use .csv, .parquet or .pq"
            )
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise HumanDataError(f"cannot read the table: {exc}", where=path) from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame.apply(lambda col: col.str.strip())


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(bounded_input.read_bytes(path, what="table")).hexdigest()


@dataclass(frozen=True)
class Ratings:
    """A validated ratings table.

    ``frame`` columns: ``item``, ``rater``, ``rating`` (float64), ``dimension`` and, when the file
    has them, ``generator`` and ``prompt_id``. ``keyed_by`` is ``item_id`` or ``scene`` (the
    (generator, prompt_id) pair, with ``item`` = ``generator/prompt_id``).
    """

    frame: pd.DataFrame
    keyed_by: str
    scale: Scale
    source: str
    sha256: str

    def dimensions(self) -> list[str]:
        return sorted(self.frame["dimension"].unique())

    def matrix(self, dimension: str) -> tuple[list[str], list[str], np.ndarray]:
        """(items, raters, ratings (U, R)) of one dimension; NaN where a rater did not rate."""
        from harness.stats.pair_bounds import check_cells

        sub = self.frame[self.frame["dimension"] == dimension]
        check_cells(sub["item"].nunique(), sub["rater"].nunique(), what="items × raters matrix")
        wide = sub.pivot(index="item", columns="rater", values="rating")
        return list(wide.index), list(wide.columns), wide.to_numpy(dtype=np.float64)

    def column_of(self, column: str) -> dict[str, str]:
        """item → its value in ``column`` (one value per item, else HumanDataError)."""
        if column not in self.frame.columns or column in ("rating", "rater", "dimension"):
            raise HumanDataError(
                f"no column {column!r} to group by", where=self.source,
                hint="group by a per-item column of the ratings table, e.g. prompt_id",
            )
        pairs = self.frame[["item", column]].drop_duplicates()
        clash = pairs["item"].duplicated(keep=False).to_numpy()
        if clash.any():
            raise HumanDataError(
                f"items with more than one {column} value (e.g. {pairs['item'][clash].iloc[0]!r})",
                where=self.source,
            )
        return dict(zip(pairs["item"], pairs[column], strict=True))

    def prompt_of(self) -> dict[str, str]:
        """item → prompt id (the bootstrap block); the item itself when no prompt is known."""
        if "prompt_id" in self.frame:
            return self.column_of("prompt_id")
        return {i: i for i in self.frame["item"].unique()}


def scene_item(generator: str, prompt_id: str) -> str:
    """The item key of a (generator, prompt_id) scene."""
    return f"{generator}/{prompt_id}"


def validate_ratings(frame: pd.DataFrame, scale: Scale, where: str, sha256: str = "") -> Ratings:
    """Check a ratings frame (strings) and return :class:`Ratings`. Raises HumanDataError."""
    cols = set(frame.columns)
    missing = [c for c in ("rater", "rating") if c not in cols]
    has_item = "item_id" in cols
    has_scene = {"generator", "prompt_id"} <= cols
    if missing or not (has_item or has_scene):
        need = missing + ([] if has_item or has_scene else ["item_id (or generator + prompt_id)"])
        raise HumanDataError(
            f"ratings table lacks column(s) {', '.join(need)}",
            where=where,
            hint="columns: rater, rating, and item_id or generator + prompt_id; optional dimension",
        )
    out = pd.DataFrame({"rater": frame["rater"]})
    if has_item:
        out["item"] = frame["item_id"]
        keyed_by = "item_id"
    else:
        out["item"] = [scene_item(g, p) for g, p in zip(frame["generator"], frame["prompt_id"], strict=True)]
        keyed_by = "scene"
    for c in frame.columns:
        if c not in ("rater", "rating", "item_id", "dimension", "item"):
            out[c] = frame[c]
    dim = frame["dimension"] if "dimension" in cols else pd.Series(DEFAULT_DIMENSION, index=frame.index)
    out["dimension"] = dim.where(dim != "", DEFAULT_DIMENSION)
    key_cols = ["item", "rater"] + (["generator", "prompt_id"] if keyed_by == "scene" else [])
    for c in key_cols:
        empty = (out[c] == "").to_numpy()
        if empty.any():
            raise HumanDataError(f"empty {c} in {_rows(empty)}", where=where, hint="every row needs a value")
    numeric = to_float(frame["rating"])
    bad = ~np.isfinite(numeric)
    if bad.any():
        examples = ", ".join(repr(v) for v in frame["rating"].to_numpy()[bad][:3])
        raise HumanDataError(
            f"non-numeric rating in {_rows(bad)} ({examples})",
            where=where,
            hint="ratings are numbers on the declared scale; remove or fix the rows",
        )
    outside = (numeric < scale.low) | (numeric > scale.high)
    if outside.any():
        examples = ", ".join(f"{v:g}" for v in numeric[outside][:3])
        raise HumanDataError(
            f"rating outside the declared scale {scale} in {_rows(outside)} ({examples})",
            where=where,
            hint="fix the rows or declare the scale the raters used with --scale",
        )
    out["rating"] = numeric
    dup = out.duplicated(["rater", "item", "dimension"], keep=False).to_numpy()
    if dup.any():
        raise HumanDataError(
            f"duplicate (rater, item, dimension) in {_rows(dup)}",
            where=where,
            hint="each rater rates each item once per dimension; merge or remove repeats",
        )
    return Ratings(out.reset_index(drop=True), keyed_by, scale, where, sha256)


def read_ratings(path: str | Path, scale: Scale) -> Ratings:
    """Read and validate a ratings file."""
    return validate_ratings(read_table(path), scale, str(path), file_sha256(path))


@dataclass(frozen=True)
class Votes:
    """Validated pairwise votes: columns prompt_id, generator_a, generator_b, winner, rater."""

    frame: pd.DataFrame
    source: str

    def arrays(self) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
        """(generators, prompts, {"a", "b", "outcome", "block"}) for :mod:`harness.human.generator_agreement`."""
        f = self.frame
        gens = sorted(set(f["generator_a"]) | set(f["generator_b"]))
        prompts = sorted(set(f["prompt_id"]))
        gi = {g: i for i, g in enumerate(gens)}
        pi = {p: i for i, p in enumerate(prompts)}
        outcome = f["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy(dtype=np.float64)
        return gens, prompts, {
            "a": f["generator_a"].map(gi).to_numpy(dtype=np.int64),
            "b": f["generator_b"].map(gi).to_numpy(dtype=np.int64),
            "outcome": outcome,
            "block": f["prompt_id"].map(pi).to_numpy(dtype=np.int64),
        }


def validate_votes(frame: pd.DataFrame, where: str) -> Votes:
    need = ("prompt_id", "generator_a", "generator_b", "winner", "rater")
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise HumanDataError(
            f"votes table lacks column(s) {', '.join(missing)}", where=where, hint=f"columns: {', '.join(need)}"
        )
    f = frame[list(need)].copy()
    f["winner"] = f["winner"].str.lower()
    for c in need:
        empty = (f[c] == "").to_numpy()
        if empty.any():
            raise HumanDataError(f"empty {c} in {_rows(empty)}", where=where, hint="every row needs a value")
    bad = ~f["winner"].isin(WINNERS).to_numpy()
    if bad.any():
        raise HumanDataError(f"winner must be a, b or tie in {_rows(bad)}", where=where)
    same = (f["generator_a"] == f["generator_b"]).to_numpy()
    if same.any():
        raise HumanDataError(f"a generator compared with itself in {_rows(same)}", where=where)
    lo = np.minimum(f["generator_a"].to_numpy(dtype=object), f["generator_b"].to_numpy(dtype=object))
    hi = np.maximum(f["generator_a"].to_numpy(dtype=object), f["generator_b"].to_numpy(dtype=object))
    key = pd.DataFrame({"r": f["rater"], "p": f["prompt_id"], "lo": lo, "hi": hi})
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        raise HumanDataError(
            f"duplicate (rater, prompt_id, generator pair) in {_rows(dup)}",
            where=where,
            hint="a rater votes once per pair and prompt",
        )
    return Votes(f.reset_index(drop=True), where)


def read_votes(path: str | Path) -> Votes:
    return validate_votes(read_table(path), str(path))
