"""Raw score records: the one table every evaluator run writes and every report reads.

Columns, in this order (DESIGN.md "Raw score records")::

    evaluator, generator, prompt_id, scene_sha256, factor, level, caption, score, status, error

``score`` is float64 (NaN unless ``status == "ok"``); every other column holds strings
(``caption`` and ``error`` may be empty). A failure is a row with ``status = "failed"``, NaN
score and a non-empty ``error`` — never a number.

Files are CSV or Parquet, chosen by suffix (``.csv``, ``.parquet``/``.pq``). Writing is
atomic (temporary file in the same directory, then rename). CSV stores floats with Python's
shortest round-trip repr and NaN as an empty field, so ``read_records(write_records(df))``
gives back the same values bit for bit (fields are quoted only where needed, every field if
some cell holds a carriage return). String cells may not contain NUL characters. Row numbers
in errors are 1-based data rows (the CSV header is not counted; data row N is on line N + 1
of a CSV file when no field spans lines).
"""

from __future__ import annotations

import csv
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.errors import AuditError, RecordsError

COLUMNS: tuple[str, ...] = (
    "evaluator",
    "generator",
    "prompt_id",
    "scene_sha256",
    "factor",
    "level",
    "caption",
    "score",
    "status",
    "error",
)
STRING_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if c != "score")
REQUIRED_NONEMPTY = ("evaluator", "generator", "prompt_id")
MEASUREMENT_KEY = ("evaluator", "scene_sha256", "factor", "level", "caption")
_KEY_TEXT = ", ".join(MEASUREMENT_KEY)
STATUSES = ("ok", "failed")
_SHA256 = re.compile(r"[0-9a-f]{64}")
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
MAX_LISTED_PROBLEMS = 8


def empty_records() -> pd.DataFrame:
    """A zero-row record table with the right columns and dtypes."""
    data = {c: pd.Series([], dtype="float64" if c == "score" else object) for c in COLUMNS}
    return pd.DataFrame(data, columns=list(COLUMNS))


def records_from_rows(rows: Iterable[dict[str, object]]) -> pd.DataFrame:
    """Build a record table from dicts keyed by column name (missing ``error`` → '')."""
    rows = list(rows)
    if not rows:
        return empty_records()
    frame = pd.DataFrame(
        [{c: r.get(c, "" if c == "error" else None) for c in COLUMNS} for r in rows]
    )
    return _coerce(frame[list(COLUMNS)])


def _coerce(df: pd.DataFrame) -> pd.DataFrame:
    """Fix dtypes: score float64, strings object (values unchanged)."""
    out = df.copy()
    out["score"] = out["score"].astype("float64")
    for c in STRING_COLUMNS:
        out[c] = out[c].astype(object)
    return out.reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# Validation


def _problem(row: int | None, column: str | None, what: str) -> str:
    loc = []
    if row is not None:
        loc.append(f"row {row}")
    if column is not None:
        loc.append(f"column {column!r}")
    return f"{', '.join(loc)}: {what}" if loc else what


def _raise(problems: list[str], where: str, hint: str | None = None) -> None:
    shown = problems[:MAX_LISTED_PROBLEMS]
    more = len(problems) - len(shown)
    what = "invalid score records: " + "; ".join(shown) + (f"; and {more} more" if more else "")
    error = RecordsError(what, where=where, hint=hint)
    error.problems = problems  # type: ignore[attr-defined]
    raise error


def _mask(column: pd.Series, predicate: Callable[[Any], bool]) -> np.ndarray:
    """Boolean array: ``predicate(cell)`` per row, evaluated once per distinct value."""
    try:
        uniques = pd.unique(column.to_numpy(dtype=object))
    except TypeError:  # unhashable cells (lists, dicts): evaluate row by row
        return column.map(predicate).to_numpy(dtype=bool)
    hits = [v for v in uniques if predicate(v)]
    if not hits:
        return np.zeros(len(column), dtype=bool)
    return column.isin(hits).to_numpy(dtype=bool)


def _rows(mask: pd.Series | np.ndarray) -> list[int]:
    return [int(i) + 1 for i in np.flatnonzero(np.asarray(mask, dtype=bool))]


def validate_records(df: pd.DataFrame, *, where: str | Path = "<records>") -> None:
    """Raise :class:`RecordsError` listing every problem (row, column, what) in ``df``.

    Checked: the exact column list and order; score dtype; string cells; empty evaluator,
    generator or prompt_id; scene_sha256 = 64 lowercase hex digits; factor/level known to the
    protocol (``harness.protocol.check_level``: ``baseline``/``c0``, Table 11 levels, template
    ids, ``p0``..``p10``, probe names); status in ``ok``/``failed``; an ``ok`` row has a finite
    score and no error; a ``failed`` row has a NaN score and a non-empty error; no duplicate
    measurement (same evaluator, scene_sha256, factor, level, caption).
    """
    where = str(where)
    if not isinstance(df, pd.DataFrame):
        raise RecordsError(f"expected a pandas DataFrame, got {type(df).__name__}", where=where)
    cols = [str(c) for c in df.columns]
    if cols != list(COLUMNS):
        missing = [c for c in COLUMNS if c not in cols]
        extra = [c for c in cols if c not in COLUMNS]
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"unexpected column(s) {extra}")
        if not parts:
            parts.append(f"columns out of order: {cols}")
        raise RecordsError(
            "; ".join(parts), where=where, hint=f"columns must be exactly {', '.join(COLUMNS)}"
        )
    if len(cols) != len(set(cols)):
        raise RecordsError("duplicate column names", where=where)

    problems: list[str] = []
    score = df["score"]
    if not (pd.api.types.is_float_dtype(score) or pd.api.types.is_integer_dtype(score)):
        numeric = pd.to_numeric(score, errors="coerce")
        bad = numeric.isna() & score.notna() & (score.astype(str) != "")
        for row in _rows(bad):
            problems.append(_problem(row, "score", f"not a number: {score.iloc[row - 1]!r}"))
        score = numeric
    score = score.astype("float64").to_numpy()

    string_ok = {c: ~_mask(df[c], lambda v: not isinstance(v, str)) for c in STRING_COLUMNS}
    for c in STRING_COLUMNS:
        for row in _rows(~string_ok[c]):
            problems.append(_problem(row, c, f"must be a string, got {df[c].iloc[row - 1]!r}"))

    for c in STRING_COLUMNS:
        for row in _rows(_mask(df[c], lambda v: isinstance(v, str) and "\x00" in v)):
            problems.append(_problem(row, c, "contains a NUL character"))

    def text(c: str) -> pd.Series:
        return df[c].where(string_ok[c], "").astype(str)

    for c in REQUIRED_NONEMPTY:
        for row in _rows(string_ok[c] & _mask(text(c), lambda v: not v.strip())):
            problems.append(_problem(row, c, "empty"))

    sha_ok = ~_mask(text("scene_sha256"), lambda v: _SHA256.fullmatch(v) is None)
    for row in _rows(string_ok["scene_sha256"] & ~sha_ok):
        problems.append(
            _problem(
                row,
                "scene_sha256",
                f"not 64 lowercase hex digits: {df['scene_sha256'].iloc[row - 1]!r}",
            )
        )

    problems.extend(
        _level_problems(text("factor"), text("level"), string_ok["factor"] & string_ok["level"])
    )

    status = text("status")
    is_ok = (status == "ok").to_numpy()
    is_failed = (status == "failed").to_numpy()
    for row in _rows(string_ok["status"] & ~is_ok & ~is_failed):
        problems.append(
            _problem(row, "status", f"{df['status'].iloc[row - 1]!r} is not 'ok' or 'failed'")
        )
    finite = np.isfinite(score)
    has_error = _mask(text("error"), lambda v: bool(v.strip()))
    for row in _rows(is_ok & ~finite):
        problems.append(_problem(row, "score", f"status ok but score is {score[row - 1]!r}"))
    for row in _rows(is_ok & has_error):
        problems.append(_problem(row, "error", "status ok but an error message is set"))
    for row in _rows(is_failed & ~np.isnan(score)):
        problems.append(
            _problem(
                row,
                "score",
                f"status failed but score is {score[row - 1]!r} (a failure is never a number)",
            )
        )
    for row in _rows(is_failed & ~has_error):
        problems.append(_problem(row, "error", "status failed without an error message"))

    key = pd.DataFrame({c: text(c) for c in MEASUREMENT_KEY})
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        first_of: dict[tuple[str, ...], int] = {}
        for row in _rows(dup):
            k = tuple(key.iloc[row - 1])
            if k in first_of:
                problems.append(
                    _problem(
                        row,
                        None,
                        f"duplicate measurement of row {first_of[k]} (same {_KEY_TEXT})",
                    )
                )
            else:
                first_of[k] = row

    if problems:
        _raise(problems, where, "fix the rows named above; see DESIGN.md 'Raw score records'")


def _level_problems(factor: pd.Series, level: pd.Series, usable: np.ndarray) -> list[str]:
    from harness.protocol import check_level

    problems: list[str] = []
    pairs = pd.DataFrame({"f": factor, "l": level})[usable]
    verdict: dict[tuple[str, str], str | None] = {}
    for pair in pairs.drop_duplicates().itertuples(index=False):
        try:
            check_level(pair.f, pair.l)
            verdict[(pair.f, pair.l)] = None
        except AuditError as exc:
            verdict[(pair.f, pair.l)] = exc.what + (f" ({exc.hint})" if exc.hint else "")
    if any(v is not None for v in verdict.values()):
        for row, (f, lv) in zip(_rows(usable), pairs.itertuples(index=False), strict=True):
            message = verdict[(f, lv)]
            if message is not None:
                problems.append(
                    _problem(
                        row, "level" if message.startswith("unknown level") else "factor", message
                    )
                )
    return problems


# ---------------------------------------------------------------------------------------------
# Files


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        return "csv"
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    raise RecordsError(
        f"unknown records file type {path.suffix!r}",
        where=str(path),
        hint="use a .csv or .parquet file name",
    )


def write_records(df: pd.DataFrame, path: str | Path, *, validate: bool = True) -> Path:
    """Write ``df`` to ``path`` (CSV or Parquet by suffix) atomically; returns the path.

    The table is validated first (unless ``validate=False``), so an invalid table is never
    written. Parent directories are created.
    """
    path = Path(path)
    kind = _format(path)
    if validate:
        validate_records(df, where=path)
    frame = _coerce(df[list(COLUMNS)])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if kind == "csv":
                # The csv module leaves a field with a lone "\r" unquoted (it only looks for the
                # line terminator "\n"), which would split the row on reading: quote all then.
                needs_all = any(
                    "\r" in frame[c].astype(str).str.cat() for c in STRING_COLUMNS if len(frame)
                )
                text = frame.assign(score=[_float_text(v) for v in frame["score"]]).to_csv(
                    index=False,
                    lineterminator="\n",
                    quoting=csv.QUOTE_ALL if needs_all else csv.QUOTE_MINIMAL,
                )
                handle.write(text.encode("utf-8"))
            else:
                _require_pyarrow(path)
                frame.to_parquet(handle, index=False, engine="pyarrow")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _require_pyarrow(path: Path) -> None:
    """Parquet needs a working pyarrow; say so as a typed error rather than an ImportError."""
    try:
        import pyarrow  # noqa: F401
    except ImportError as exc:  # absent, or built for another numpy major version
        raise RecordsError(
            f"Parquet support unavailable: {exc}",
            where=str(path),
            hint="install a pyarrow that matches numpy (numpy<2 needs pyarrow<22) or use .csv",
        ) from exc


def _float_text(value: float) -> str:
    """Shortest round-trip text of a float; NaN → '' (an empty CSV field)."""
    return "" if math.isnan(value) else repr(float(value))


def read_records(path: str | Path, *, validate: bool = True) -> pd.DataFrame:
    """Read a records file (CSV or Parquet by suffix) into a dtype-stable table.

    ``score`` is float64 (empty CSV field → NaN), the other columns are Python strings (empty
    CSV fields → ''). Validated unless ``validate=False``. Errors: :class:`RecordsError`.
    """
    path = Path(path)
    kind = _format(path)
    if not path.is_file():
        raise RecordsError("records file not found", where=str(path), hint="check the path")
    try:
        if kind == "csv":
            frame = pd.read_csv(
                path,
                dtype={c: str for c in STRING_COLUMNS},
                keep_default_na=False,
                na_values={"score": [""]},
                float_precision="round_trip",
                encoding="utf-8",
            )
        else:
            _require_pyarrow(path)
            frame = pd.read_parquet(path, engine="pyarrow")
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise RecordsError(f"cannot read records: {exc}", where=str(path)) from exc
    if validate:
        validate_records(frame, where=path)
    elif [str(c) for c in frame.columns] != list(COLUMNS):
        return frame
    if kind == "parquet":
        for c in STRING_COLUMNS:
            frame[c] = frame[c].map(lambda v: "" if v is None else v)
    return _coerce(frame)
