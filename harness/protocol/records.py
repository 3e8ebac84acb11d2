"""Raw score records: the one table every evaluator run writes and every report reads.

Columns, in this order (docs/formats.md "Raw score records")::

    evaluator, generator, prompt_id, scene_sha256, factor, level, caption, score, status, error

``score`` is float64 (NaN unless ``status == "ok"``); every other column holds strings
(``caption`` and ``error`` may be empty). A failure is a row with ``status = "failed"``, NaN
score and a non-empty ``error`` — never a number.

Optional trailing columns (:data:`OPTIONAL_COLUMNS`, in this order, each written only when
some row carries a value, so ordinary files keep exactly the ten columns above; readers accept
every form): ``served_model``, the model id a hosted evaluator's endpoint reported serving each
row (``''`` for rows without one, e.g. failures); ``view_policy``, the multi-view policy the
row's score was measured under (``mean4``, ``max4``, ``sheet4``; ``''`` or absent: ``single``,
the configuration's one camera).

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
import io
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from harness.core import bounded_input
from harness.core.csvcells import neutral, restore
from harness.core.errors import AuditError, RecordsError
from harness.core.fileio import write_bytes_atomic
from harness.core.ids import (
    EVALUATOR_ID,
    EVALUATOR_ID_TEXT,
    SERVED_MODEL_ID,
    UNRECOGNISED_MODEL,
    is_served_model_id,
)

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
SERVED_MODEL = "served_model"
# free text (captions, failure reasons, a server's model id): written inert in CSV
# (harness.core.csvcells: a leading ' before a formula character) and restored when read
TEXT_COLUMNS = ("caption", "error", SERVED_MODEL)
VIEW_POLICY = "view_policy"
OPTIONAL_COLUMNS: tuple[str, ...] = (SERVED_MODEL, VIEW_POLICY)
MULTI_VIEW_POLICIES = ("mean4", "max4", "sheet4")  # harness.protocol.view_policies.VIEW_POLICIES but single
PRESET_POLICY = re.compile(r"preset:[a-z0-9][a-z0-9-]*")  # a protocol preset (docs/protocols.md)
REQUIRED_NONEMPTY = ("evaluator", "generator", "prompt_id")
MEASUREMENT_KEY = ("evaluator", "scene_sha256", "factor", "level", "caption")
_KEY_TEXT = ", ".join(MEASUREMENT_KEY)
_SHA256 = re.compile(r"[0-9a-f]{64}")
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
MAX_LISTED_PROBLEMS = 8


MAX_ERROR_CHARS = 300  # a failed row's reason is cut to this many characters


class Record(NamedTuple):
    """One row of the records table in :data:`COLUMNS` order, then the optional columns."""

    evaluator: str
    generator: str
    prompt_id: str
    scene_sha256: str
    factor: str
    level: str
    caption: str
    score: float
    status: str
    error: str
    served_model: str = ""
    view_policy: str = ""


def record(
    evaluator: str,
    generator: str,
    prompt_id: str,
    scene_sha256: str,
    factor: str,
    level: str,
    caption: str,
    score: float,
    status: str,
    error: str,
    served_model: str = "",
    view_policy: str = "",
) -> Record:
    """A :class:`Record` with a float score and the error cut to :data:`MAX_ERROR_CHARS`."""
    return Record(evaluator, generator, prompt_id, scene_sha256, factor, level, caption,
                  float(score), status, error[:MAX_ERROR_CHARS], served_model, view_policy)


def records_frame(rows: Sequence[Record]) -> pd.DataFrame:
    """The records table of ``rows`` (row order kept). The optional columns are kept
    only when some row has one, so local evaluators' files keep exactly :data:`COLUMNS`."""
    n = len(COLUMNS)
    frame = pd.DataFrame([r[:n] for r in rows], columns=list(COLUMNS))
    frame["score"] = frame["score"].astype("float64")
    served = [r.served_model for r in rows]
    if any(served):
        frame[SERVED_MODEL] = served
    policies = [r.view_policy for r in rows]
    if any(policies):
        frame[VIEW_POLICY] = policies
    return frame


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
    for column in OPTIONAL_COLUMNS:
        cells = [r.get(column) or "" for r in rows]
        if any(cells):
            frame[column] = cells
    return _coerce(frame[columns_of(frame)])


def columns_of(df: pd.DataFrame) -> list[str]:
    """The columns a records file of ``df`` holds: :data:`COLUMNS`, plus each optional column
    (:data:`OPTIONAL_COLUMNS` order) that ``df`` has with some non-empty row."""
    out = list(COLUMNS)
    for column in OPTIONAL_COLUMNS:
        if column in df.columns:
            cells = df[column]
            if bool((cells.notna() & (cells.astype(str) != "")).any()):
                out.append(column)
    return out


def _allowed_columns(cols: list[str]) -> bool:
    """``cols`` is :data:`COLUMNS` then optional columns in :data:`OPTIONAL_COLUMNS` order."""
    head, tail = cols[: len(COLUMNS)], cols[len(COLUMNS):]
    return head == list(COLUMNS) and tail == [c for c in OPTIONAL_COLUMNS if c in tail]


def _string_columns(df: pd.DataFrame) -> tuple[str, ...]:
    return (*STRING_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in df.columns))


def _coerce(df: pd.DataFrame, *, copy: bool = True) -> pd.DataFrame:
    """Fix dtypes: score float64, strings object (values unchanged).

    ``copy=False`` may reuse (and modify) ``df`` itself: for frames nobody else holds.
    """
    out = df.copy() if copy else df
    if out["score"].dtype != np.float64:
        out["score"] = out["score"].astype("float64")
    for c in _string_columns(out):
        if out[c].dtype != object:
            out[c] = out[c].astype(object)
    if isinstance(out.index, pd.RangeIndex) and out.index.start == 0 and out.index.step == 1:
        return out
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


@dataclass(frozen=True)
class _TextColumn:
    """One string column, factorised once so every check runs per distinct value.

    ``ok``: per row, whether the cell is a ``str`` (``None`` when every cell is);
    ``codes`` (n,) index into ``uniques`` of the cell's text, non-string cells counting as
    ``''``. Row masks come from per-unique flags indexed by ``codes`` — no per-row Python.
    """

    ok: np.ndarray | None
    codes: np.ndarray
    uniques: np.ndarray

    def ok_mask(self) -> np.ndarray:
        return np.ones(len(self.codes), dtype=bool) if self.ok is None else self.ok

    def where(self, predicate: Callable[[str], bool]) -> np.ndarray:
        """Boolean (n,): ``predicate(text)`` per row, evaluated once per distinct text."""
        flags = np.fromiter((predicate(v) for v in self.uniques), bool, len(self.uniques))
        return flags[self.codes]

    def contains(self, needle: str) -> np.ndarray:
        """Boolean (n,): the text contains ``needle`` (one join decides the common no case)."""
        if needle not in "".join(self.uniques):
            return np.zeros(len(self.codes), dtype=bool)
        return self.where(lambda v: needle in v)

    def equals(self, value: str) -> np.ndarray:
        hit = np.flatnonzero(self.uniques == value) if len(self.uniques) else []
        return self.codes == hit[0] if len(hit) else np.zeros(len(self.codes), dtype=bool)


def _text_column(column: pd.Series) -> _TextColumn:
    values = column.to_numpy(dtype=object)
    # infer_dtype walks the cells in C: "string" means every cell is a str instance
    if pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty"):
        ok, text = None, values
    else:  # rare: some cells are not strings (None, NaN, numbers, lists)
        ok = np.fromiter((isinstance(v, str) for v in values), bool, len(values))
        text = values.copy()
        text[~ok] = ""
    codes, uniques = pd.factorize(text)
    return _TextColumn(ok, codes, np.asarray(uniques, dtype=object))


def _combined_codes(columns: list[_TextColumn], n: int) -> np.ndarray:
    """One int64 code per row identifying the tuple of the columns' texts."""
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for col in columns:
        size = max(len(col.uniques), 1)
        if span * size >= 2**62:  # renumber densely before the product could overflow
            key, uniq = pd.factorize(key)
            key, span = key.astype(np.int64), max(len(uniq), 1)
        key = key * size + col.codes
        span *= size
    return key


def _rows(mask: pd.Series | np.ndarray) -> list[int]:
    return [int(i) + 1 for i in np.flatnonzero(np.asarray(mask, dtype=bool))]


ScoreRanges = Mapping[str, tuple[float, float]]


def validate_records(
    df: pd.DataFrame, *, where: str | Path = "<records>", score_ranges: ScoreRanges | None = None
) -> None:
    """Raise :class:`RecordsError` listing every problem (row, column, what) in ``df``.

    Checked: the exact column list and order (optionally ``served_model``, then
    ``view_policy``, last; a ``view_policy`` cell is ``''`` or a multi-view policy); score dtype; string cells; empty evaluator,
    generator or prompt_id; an evaluator id outside :data:`harness.core.ids.EVALUATOR_ID`; a
    ``served_model`` cell neither ``''``, :data:`harness.core.ids.SERVED_MODEL_ID` nor
    ``unrecognised model id``; scene_sha256 = 64 lowercase hex digits; factor/level known to the
    protocol (``harness.protocol.levels.check_level``: ``baseline``/``c0``, Table 11 levels, template
    ids, ``p0``..``p10``, probe names); status in ``ok``/``failed``; an ``ok`` row has a finite
    score and no error; a ``failed`` row has a NaN score and a non-empty error; no duplicate
    measurement (same evaluator, scene_sha256, factor, level, caption). ``score_ranges``
    (evaluator id → closed ``(low, high)``, from the evaluator specs): an ``ok`` score of a
    listed evaluator lies in its range.

    Vectorised: each string column is factorised once and every rule runs per distinct value,
    so the cost is a few C passes per column plus Python work per distinct value.
    """
    where = str(where)
    if not isinstance(df, pd.DataFrame):
        raise RecordsError(f"expected a pandas DataFrame, got {type(df).__name__}", where=where)
    cols = [str(c) for c in df.columns]
    if not _allowed_columns(cols):
        missing = [c for c in COLUMNS if c not in cols]
        extra = [c for c in cols if c not in COLUMNS + OPTIONAL_COLUMNS]
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"unexpected column(s) {extra}")
        if not parts:
            parts.append(f"columns out of order: {cols}")
        raise RecordsError(
            "; ".join(parts),
            where=where,
            hint=f"columns must be exactly {', '.join(COLUMNS)} (then, optionally and in this "
            f"order, {', '.join(OPTIONAL_COLUMNS)})",
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

    text = {c: _text_column(df[c]) for c in _string_columns(df)}
    for c in text:
        if text[c].ok is not None:
            for row in _rows(~text[c].ok):
                problems.append(_problem(row, c, f"must be a string, got {df[c].iloc[row - 1]!r}"))

    for c in text:
        for row in _rows(text[c].contains("\x00")):
            problems.append(_problem(row, c, "contains a NUL character"))

    for c in REQUIRED_NONEMPTY:
        for row in _rows(text[c].ok_mask() & text[c].where(lambda v: not v.strip())):
            problems.append(_problem(row, c, "empty"))

    ev = text["evaluator"]
    ev_bad = ev.where(lambda v: bool(v.strip()) and EVALUATOR_ID.fullmatch(v) is None)
    for row in _rows(ev.ok_mask() & ev_bad):
        problems.append(
            _problem(row, "evaluator", f"id {df['evaluator'].iloc[row - 1][:120]!r} is not "
                     f"{EVALUATOR_ID_TEXT}")
        )
    if SERVED_MODEL in text:
        served = text[SERVED_MODEL]
        served_bad = served.where(lambda v: v != "" and not is_served_model_id(v))
        for row in _rows(served.ok_mask() & served_bad):
            problems.append(
                _problem(row, SERVED_MODEL, f"not a model id (pattern {SERVED_MODEL_ID.pattern}"
                         f" or {UNRECOGNISED_MODEL!r})")
            )

    sha = text["scene_sha256"]
    sha_bad = sha.where(lambda v: _SHA256.fullmatch(v) is None)
    for row in _rows(sha.ok_mask() & sha_bad):
        problems.append(
            _problem(
                row,
                "scene_sha256",
                f"not 64 lowercase hex digits: {df['scene_sha256'].iloc[row - 1]!r}",
            )
        )

    problems.extend(_level_problems(text["factor"], text["level"]))
    if VIEW_POLICY in text:
        bad_policy = text[VIEW_POLICY].where(lambda v: v not in ("", *MULTI_VIEW_POLICIES)
                                             and not PRESET_POLICY.fullmatch(v))  # fmt: skip
        for row in _rows(text[VIEW_POLICY].ok_mask() & bad_policy):
            problems.append(
                _problem(row, VIEW_POLICY, f"{df[VIEW_POLICY].iloc[row - 1]!r} is not one of "
                         f"'' (single), {', '.join(MULTI_VIEW_POLICIES)}, preset:<name>")
            )

    status = text["status"]
    is_ok = status.equals("ok")
    is_failed = status.equals("failed")
    for row in _rows(status.ok_mask() & ~is_ok & ~is_failed):
        problems.append(
            _problem(row, "status", f"{df['status'].iloc[row - 1]!r} is not 'ok' or 'failed'")
        )
    finite = np.isfinite(score)
    has_error = text["error"].where(lambda v: bool(v.strip()))
    for row in _rows(is_ok & ~finite):
        problems.append(_problem(row, "score", f"status ok but score is {score[row - 1]!r}"))
    for evaluator, (low, high) in sorted((score_ranges or {}).items()):
        slack = 1e-9 * (high - low)
        outside = is_ok & finite & text["evaluator"].equals(evaluator)
        outside &= (score < low - slack) | (score > high + slack)
        for row in _rows(outside):
            problems.append(
                _problem(
                    row, "score",
                    f"{score[row - 1]!r} is outside evaluator {evaluator!r}'s declared range "
                    f"[{low:g}, {high:g}]",
                )
            )
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

    key, _ = pd.factorize(_combined_codes([text[c] for c in MEASUREMENT_KEY], len(df)))
    dup = np.bincount(key, minlength=1)[key] > 1 if len(key) else np.zeros(0, dtype=bool)
    if dup.any():
        first_of: dict[int, int] = {}
        for row in _rows(dup):
            k = int(key[row - 1])
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
        _raise(problems, where, "fix the rows named above; see docs/formats.md 'Raw score records'")


def _level_problems(factor: _TextColumn, level: _TextColumn) -> list[str]:
    """Problems of rows whose (factor, level) the protocol rejects; checked once per pair."""
    from harness.protocol.levels import check_level

    usable = factor.ok_mask() & level.ok_mask()
    pair = factor.codes.astype(np.int64) * max(len(level.uniques), 1) + level.codes
    pair_id, pairs = pd.factorize(pair[usable])
    verdicts: list[str | None] = []
    for p in pairs:
        f = factor.uniques[int(p) // max(len(level.uniques), 1)]
        lv = level.uniques[int(p) % max(len(level.uniques), 1)]
        try:
            check_level(f, lv)
            verdicts.append(None)
        except AuditError as exc:
            verdicts.append(exc.what + (f" ({exc.hint})" if exc.hint else ""))
    bad_pairs = np.array([v is not None for v in verdicts], dtype=bool)
    if not bad_pairs.any():
        return []
    problems: list[str] = []
    rows = np.flatnonzero(usable)
    for i in np.flatnonzero(bad_pairs[pair_id]):
        message = verdicts[pair_id[i]]
        assert message is not None
        column = "factor" if message.startswith("unknown factor") else "level"
        problems.append(_problem(int(rows[i]) + 1, column, message))
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
    frame = _coerce(df[columns_of(df)])
    if kind == "csv":
        # The csv module leaves a field with a lone "\r" unquoted (it only looks for the line
        # terminator "\n"), which would split the row on reading: quote all fields then.
        needs_all = any(
            "\r" in frame[c].astype(str).str.cat() for c in _string_columns(frame) if len(frame)
        )
        inert = {c: frame[c].map(neutral) for c in TEXT_COLUMNS if c in frame.columns}
        text = frame.assign(score=[_float_text(v) for v in frame["score"]], **inert).to_csv(
            index=False,
            lineterminator="\n",
            quoting=csv.QUOTE_ALL if needs_all else csv.QUOTE_MINIMAL,
        )
        data = text.encode("utf-8")
    else:
        _require_pyarrow(path)
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False, engine="pyarrow")
        data = buffer.getvalue()
    write_bytes_atomic(path, data)
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


def read_records(
    path: str | Path, *, validate: bool = True, score_ranges: ScoreRanges | None = None
) -> pd.DataFrame:
    """Read a records file (CSV or Parquet by suffix) into a dtype-stable table.

    ``score`` is float64 (empty CSV field → NaN), the other columns are Python strings (empty
    CSV fields → ''). Validated unless ``validate=False``. Errors: :class:`RecordsError`.
    """
    path = Path(path)
    kind = _format(path)
    if not path.is_file():
        if path.exists():
            raise RecordsError("records file is not a regular file (a device, FIFO or folder)",
                               where=str(path), hint="name a plain file")
        raise RecordsError("records file not found", where=str(path), hint="check the path")
    try:
        if kind == "csv":
            raw = bounded_input.read_bytes(path, what="records file")
            if b"\0" in raw:  # pandas' C parser silently cuts a cell at its first NUL
                _raise(_nul_cells(raw), str(path), hint=_NUL_HINT)
            frame = pd.read_csv(
                io.BytesIO(raw),
                dtype={c: str for c in (*STRING_COLUMNS, *OPTIONAL_COLUMNS)},
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
    if kind == "csv":
        _check_delimiter(frame, path)
        for c in TEXT_COLUMNS:
            if c in frame.columns and frame[c].dtype == object:
                frame[c] = frame[c].map(restore)
    if validate:
        validate_records(frame, where=path, score_ranges=score_ranges)
    elif not _allowed_columns([str(c) for c in frame.columns]):
        return frame
    elif not pd.api.types.is_numeric_dtype(frame["score"]):
        validate_records(frame, where=path)  # names every score cell that is not a number
    if kind == "parquet":
        for c in _string_columns(frame):
            fixed = _missing_as_empty(frame[c])
            if fixed is not None:
                frame[c] = fixed
    return _coerce(frame, copy=False)


_NUL_HINT = "records cells may not contain NUL characters (docs/formats.md 'Raw score records')"


def _nul_cells(raw: bytes) -> list[str]:
    """One problem per CSV cell holding a NUL (1-based data rows, header names)."""
    rows = csv.reader(io.StringIO(raw.decode("utf-8", errors="replace"), newline=""))
    header = next(rows, [])
    problems = [_problem(None, name, "header contains a NUL character") for name in header if "\0" in name]
    for r, row in enumerate(rows, start=1):
        for c, cell in enumerate(row):
            if "\0" in cell:
                name = header[c] if c < len(header) else f"#{c + 1}"
                problems.append(_problem(r, name, "contains a NUL character"))
    return problems or ["contains a NUL character"]


_OTHER_DELIMITERS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def _check_delimiter(frame: pd.DataFrame, path: Path) -> None:
    """A CSV whose header is one column holding the column names joined by another
    delimiter (a spreadsheet's export) is refused by name, not read as one column."""
    if len(frame.columns) != 1:
        return
    header = str(frame.columns[0])
    for delimiter, name in _OTHER_DELIMITERS.items():
        if delimiter in header and header.split(delimiter)[0].strip('"') in COLUMNS:
            raise RecordsError(
                f"the header is separated by {name}, not commas",
                where=str(path),
                hint="records files are comma-separated (docs/formats.md); save the file again "
                "with ',' as the delimiter",
            )


def _missing_as_empty(column: pd.Series) -> pd.Series | None:
    """Parquet nulls (``None`` cells) of a string column → ``''``, other cells unchanged;
    ``None`` when there is nothing to replace."""
    values = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty"):
        return None  # every cell a str
    candidates = np.flatnonzero(pd.isna(values))  # None, NaN, NA, NaT: keep only the None
    nones = [i for i in candidates if values[i] is None]
    if not nones:
        return None
    values = values.copy()
    values[nones] = ""
    return pd.Series(values, index=column.index, name=column.name, dtype=object)
