"""The vectorised record validation agrees with a plain row-by-row reference, and Parquet nulls.

``validate_records`` factorises each string column and checks distinct values only; here a
deliberately naive per-row validator written from the rules in docs/formats.md is the oracle, and
Hypothesis mixes every kind of bad cell into otherwise valid tables.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.errors import AuditError, RecordsError
from harness.protocol.levels import check_level
from harness.protocol.records import (
    COLUMNS,
    MEASUREMENT_KEY,
    REQUIRED_NONEMPTY,
    STRING_COLUMNS,
    _combined_codes,
    _TextColumn,
    read_records,
    records_from_rows,
    validate_records,
    write_records,
)

SHA = "0123456789abcdef" * 4
KEY_TEXT = ", ".join(MEASUREMENT_KEY)


def reference_problems(df: pd.DataFrame) -> list[str]:
    """Every problem of ``df``, found one row at a time (same order and wording as the rules)."""
    n = len(df)
    cells = {c: df[c].tolist() for c in COLUMNS}
    problems: list[tuple[int, int, str]] = []  # (rule, row, text) then sorted by rule, row

    def add(rule: int, row: int, column: str | None, what: str) -> None:
        loc = f"row {row + 1}" + (f", column {column!r}" if column else "")
        problems.append((rule, row, f"{loc}: {what}"))

    def text(c: str, i: int) -> str:
        v = cells[c][i]
        return v if isinstance(v, str) else ""

    score = [float(v) for v in cells["score"]]
    for k, c in enumerate(STRING_COLUMNS):
        for i in range(n):
            if not isinstance(cells[c][i], str):
                add(10 + k, i, c, f"must be a string, got {cells[c][i]!r}")
    for k, c in enumerate(STRING_COLUMNS):
        for i in range(n):
            if "\x00" in text(c, i):
                add(20 + k, i, c, "contains a NUL character")
    for k, c in enumerate(REQUIRED_NONEMPTY):
        for i in range(n):
            if isinstance(cells[c][i], str) and not cells[c][i].strip():
                add(30 + k, i, c, "empty")
    for i in range(n):
        v = cells["evaluator"][i]
        if isinstance(v, str) and v.strip() and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", v) is None:
            add(35, i, "evaluator", f"id {v[:120]!r} is not 1 to 100 characters from A-Z a-z 0-9 . _ -, "
                "starting with a letter or digit")
    for i in range(n):
        v = cells["scene_sha256"][i]
        if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) is None:
            add(40, i, "scene_sha256", f"not 64 lowercase hex digits: {v!r}")
    for i in range(n):
        f, lv = cells["factor"][i], cells["level"][i]
        if isinstance(f, str) and isinstance(lv, str):
            try:
                check_level(f, lv)
            except AuditError as exc:
                msg = exc.what + (f" ({exc.hint})" if exc.hint else "")
                add(50, i, "level" if msg.startswith("unknown level") else "factor", msg)
    for i in range(n):
        st_, err = cells["status"][i], text("error", i)
        if isinstance(st_, str) and st_ not in ("ok", "failed"):
            add(60, i, "status", f"{st_!r} is not 'ok' or 'failed'")
        if st_ == "ok" and not math.isfinite(score[i]):
            add(61, i, "score", f"status ok but score is {score[i]!r}")
        if st_ == "ok" and err.strip():
            add(62, i, "error", "status ok but an error message is set")
        if st_ == "failed" and not math.isnan(score[i]):
            add(63, i, "score",
                f"status failed but score is {score[i]!r} (a failure is never a number)")
        if st_ == "failed" and not err.strip():
            add(64, i, "error", "status failed without an error message")
    first: dict[tuple[str, ...], int] = {}
    for i in range(n):
        key = tuple(text(c, i) for c in MEASUREMENT_KEY)
        if key in first:
            add(70, i, None, f"duplicate measurement of row {first[key] + 1} (same {KEY_TEXT})")
        else:
            first[key] = i
    return [p for _, _, p in sorted(problems, key=lambda t: (t[0], t[1]))]


def found_problems(df: pd.DataFrame) -> list[str]:
    try:
        validate_records(df)
    except RecordsError as exc:
        return list(exc.problems)  # type: ignore[attr-defined]
    return []


def _valid_row(i: int) -> dict:
    return {
        "evaluator": "e", "generator": f"g{i % 3}", "prompt_id": f"p{i % 4}",
        "scene_sha256": SHA, "factor": "resolution", "level": ("256", "512", "1024")[i % 3],
        "caption": f"caption {i}", "score": 0.1 * i, "status": "ok", "error": "",
    }


BAD_CELLS = {
    "evaluator": ["", " ", None, 3, "a\x00b", "<img src=x onerror=alert(1)>", "a/b", "-x"],
    "generator": ["", "\t", float("nan")],
    "prompt_id": ["", None],
    "scene_sha256": ["A" * 64, "a" * 63, "", None, "g" * 64],
    "factor": ["colour", "", None, "baseline"],
    "level": ["513", "c0", "", None, "city"],
    "caption": [None, "x\x00", "caption 0", ["list"]],
    "status": ["OK", "", None, "failed"],
    "error": ["oops", " ", None, 1.5],
    "score": [math.nan, math.inf, -math.inf, 0.0],
}


@st.composite
def _edited_tables(draw):
    n = draw(st.integers(1, 9))
    rows = [_valid_row(i) for i in range(n)]
    edits = draw(st.lists(
        st.tuples(st.integers(0, n - 1), st.sampled_from(sorted(BAD_CELLS)), st.data()),
        max_size=6,
    ))
    for row, column, data in edits:
        rows[row][column] = data.draw(st.sampled_from(BAD_CELLS[column]))
    if draw(st.booleans()) and n > 1:  # a duplicate measurement with another generator
        dup = dict(rows[draw(st.integers(0, n - 1))], generator="other")
        rows.append(dup)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["score"] = frame["score"].astype("float64")
    for c in STRING_COLUMNS:
        frame[c] = frame[c].astype(object)
    return frame


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited_tables())
def test_vectorised_validation_matches_row_by_row_reference(df):
    assert found_problems(df) == reference_problems(df)


def test_reference_agrees_on_a_mixed_table():
    rows = [_valid_row(i) for i in range(6)]
    rows[1].update(status="failed", score=math.nan, error="")
    rows[2].update(caption=None, factor="colour")
    rows[4].update(evaluator=" ", scene_sha256="A" * 64)
    rows.append(dict(rows[0], generator="x"))
    df = pd.DataFrame(rows, columns=list(COLUMNS)).astype({c: object for c in STRING_COLUMNS})
    got = found_problems(df)
    assert got == reference_problems(df)
    assert len(got) == 6 and got[-1].startswith("row 7: duplicate measurement of row 1")


def test_pandas_string_dtype_na_is_not_a_string():
    df = records_from_rows([_valid_row(0), _valid_row(1)])
    df["caption"] = pd.array(["a", None], dtype="string")
    with pytest.raises(RecordsError, match=r"row 2, column 'caption': must be a string, got <NA>"):
        validate_records(df)
    df["caption"] = pd.array(["a", "b"], dtype="string")
    validate_records(df)  # string dtype without missing cells is fine


def test_combined_codes_renumbers_before_overflow():
    n = 6
    big = np.empty(2**21, dtype=object)  # only the number of distinct values matters here
    codes = [np.array([0, 1, 0, 1, 2**21 - 1, 0]), np.array([5, 5, 5, 5, 7, 5]),
             np.array([3, 3, 3, 4, 9, 3])]
    cols = [_TextColumn(None, c, big) for c in codes]  # (2**21)**3 > 2**62: renumbers
    key = _combined_codes(cols, n)
    tuples = list(zip(*codes, strict=True))
    for i in range(n):
        for j in range(n):
            assert (key[i] == key[j]) == (tuples[i] == tuples[j])


def _parquet_with_nulls(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    df = records_from_rows([_valid_row(0), _valid_row(1)])
    table = pa.Table.from_pandas(df, preserve_index=False)
    caption = pa.array(["a", None], type=pa.string())
    table = table.set_column(table.schema.get_field_index("caption"), "caption", caption)
    path = tmp_path / "nulls.parquet"
    pq.write_table(table, path)
    return path


def test_parquet_nulls_are_invalid_but_read_as_empty_without_validation(tmp_path):
    path = _parquet_with_nulls(tmp_path)
    with pytest.raises(RecordsError, match=r"row 2, column 'caption': must be a string, got None"):
        read_records(path)
    frame = read_records(path, validate=False)
    assert frame["caption"].tolist() == ["a", ""]
    assert frame["caption"].dtype == object and frame["score"].dtype == np.float64


def test_read_returns_fresh_dtype_stable_frame(tmp_path):
    df = records_from_rows([_valid_row(i) for i in range(5)])
    for suffix in (".csv", ".parquet"):
        back = read_records(write_records(df, tmp_path / f"r{suffix}"))
        pd.testing.assert_frame_equal(back, df)
        assert isinstance(back.index, pd.RangeIndex)
