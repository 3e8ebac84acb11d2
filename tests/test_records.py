"""Raw score records: columns, exact CSV/Parquet round trips, validation with row/column."""

from __future__ import annotations

import hashlib
import math
import re
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.captions import DEFAULT_TEMPLATE_ID, IDENTITY_TEMPLATE_ID, template_ids
from harness.core.errors import RecordsError
from harness.protocol.configurations import factors
from harness.protocol.records import (
    COLUMNS,
    empty_records,
    read_records,
    records_from_rows,
    validate_records,
    write_records,
)
from harness.vocab.probes import probe_names

SHA_A = "a" * 64
SHA_B = "0123456789abcdef" * 4
PLAIN_TABLE_SHA256 = "d04adbe76169f61ff11843562cfaba72e463de5b0e4c82bf02eceab39ae38bcd"


def _row(**over) -> dict:
    row = {
        "evaluator": "clip-b32",
        "generator": "holodeck",
        "prompt_id": "bedroom-01",
        "scene_sha256": SHA_A,
        "factor": "baseline",
        "level": "c0",
        "caption": "A top-down view of a bedroom",
        "score": 0.25,
        "status": "ok",
        "error": "",
    }
    row.update(over)
    return row


def _table() -> pd.DataFrame:
    return records_from_rows(
        [
            _row(),
            _row(factor="resolution", level="512", score=0.1 + 0.2),
            _row(factor="template", level=IDENTITY_TEMPLATE_ID, caption="a bedroom", score=-1e-300),
            _row(factor="paraphrase", level="p3", caption="A top-down view of a room", score=31.5),
            _row(factor="probe", level="keep_half", scene_sha256=SHA_B, score=0.0),
            _row(factor="yaw", level="45", score=math.nan, status="failed", error="render timeout"),
        ]
    )


def test_columns_and_empty_table():
    assert COLUMNS == (
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
    empty = empty_records()
    assert list(empty.columns) == list(COLUMNS) and len(empty) == 0
    assert empty["score"].dtype == np.float64
    assert all(empty[c].dtype == object for c in COLUMNS if c != "score")
    validate_records(empty)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip_exact(tmp_path, suffix):
    df = _table()
    path = write_records(df, tmp_path / "sub" / f"clip{suffix}")
    back = read_records(path)
    pd.testing.assert_frame_equal(back, df)
    assert back["score"].dtype == np.float64
    assert back.loc[1, "score"] == 0.1 + 0.2  # not 0.3: floats round-trip exactly
    assert math.isnan(back.loc[5, "score"])
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp files left


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip_empty(tmp_path, suffix):
    back = read_records(write_records(empty_records(), tmp_path / f"e{suffix}"))
    pd.testing.assert_frame_equal(back, empty_records())


def test_csv_carriage_return_forces_quoting(tmp_path):
    df = _table()
    df.loc[5, "error"] = "line one\rline two"
    path = write_records(df, tmp_path / "r.csv")
    assert path.read_text(encoding="utf-8").startswith('"evaluator","generator"')
    pd.testing.assert_frame_equal(read_records(path), df)


def test_csv_layout(tmp_path):
    path = write_records(_table(), tmp_path / "r.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert lines[2].split(",")[7] == "0.30000000000000004"
    assert lines[6].endswith(",,failed,render timeout")  # NaN is an empty field


_FACTOR_LEVELS = [
    ("baseline", "c0"),
    *[(name, level) for name, f in factors().items() if name != "template" for level in f.levels],
    *[("template", t) for t in template_ids()[::37]],
    ("template", DEFAULT_TEMPLATE_ID),
    *[("probe", p) for p in probe_names()],
]
_chars = st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))
_names = st.text(_chars, min_size=1, max_size=12).filter(lambda s: s.strip())
_evaluator_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,11}", fullmatch=True)


@st.composite
def _rows(draw) -> dict:
    factor, level = draw(st.sampled_from(_FACTOR_LEVELS))
    ok = draw(st.booleans())
    return {
        "evaluator": draw(st.sampled_from(["clip-b32", "vqascore", "Judge_2.0"]) | _evaluator_ids),
        "generator": draw(_names),
        "prompt_id": draw(_names),
        "scene_sha256": draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
        "factor": factor,
        "level": level,
        "caption": draw(st.text(_chars, max_size=40)),
        "score": draw(st.floats(allow_nan=False, allow_infinity=False)) if ok else math.nan,
        "status": "ok" if ok else "failed",
        "error": "" if ok else draw(_names),
    }


_KEY = ("evaluator", "scene_sha256", "factor", "level", "caption")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(_rows(), max_size=12, unique_by=lambda r: tuple(r[k] for k in _KEY)),
    st.sampled_from([".csv", ".parquet"]),
)
def test_arbitrary_valid_tables_round_trip(tmp_path, rows, suffix):
    df = records_from_rows(rows)
    validate_records(df)
    back = read_records(write_records(df, tmp_path / f"r{suffix}"))
    pd.testing.assert_frame_equal(back, df)
    for a, b in zip(df["score"], back["score"], strict=True):
        assert (math.isnan(a) and math.isnan(b)) or np.float64(a).tobytes() == np.float64(
            b
        ).tobytes()


def _bad(row_index: int, **over) -> pd.DataFrame:
    df = _table()
    for column, value in over.items():
        df.loc[row_index, column] = value
    return df


@pytest.mark.parametrize(
    ("df", "expected"),
    [
        (_bad(0, factor="colour"), "row 1, column 'factor': unknown factor 'colour'"),
        (
            _bad(1, level="513"),
            "row 2, column 'level': unknown level '513' for factor 'resolution'",
        ),
        (_bad(0, level="512"), "row 1, column 'level': unknown level '512' for factor 'baseline'"),
        (_bad(2, level="a.top-down.view.about.-"), "row 3, column 'level': unknown level"),
        (_bad(3, level="p11"), "row 4, column 'level'"),
        (_bad(4, level="keep-half"), "row 5, column 'level'"),
        (_bad(0, status="OK"), "row 1, column 'status': 'OK' is not 'ok' or 'failed'"),
        (_bad(0, score=math.nan), "row 1, column 'score': status ok but score is nan"),
        (_bad(0, score=math.inf), "row 1, column 'score': status ok but score is inf"),
        (_bad(5, score=0.0), "row 6, column 'score': status failed but score is 0.0"),
        (_bad(5, error=""), "row 6, column 'error': status failed without an error message"),
        (_bad(5, error="  "), "row 6, column 'error': status failed without an error message"),
        (_bad(0, error="oops"), "row 1, column 'error': status ok but an error message is set"),
        (_bad(0, evaluator=""), "row 1, column 'evaluator': empty"),
        (_bad(2, generator=" "), "row 3, column 'generator': empty"),
        (_bad(3, prompt_id=""), "row 4, column 'prompt_id': empty"),
        (_bad(0, scene_sha256="A" * 64), "row 1, column 'scene_sha256': not 64 lowercase hex"),
        (_bad(0, scene_sha256="a" * 63), "row 1, column 'scene_sha256'"),
        (_bad(0, caption=None), "row 1, column 'caption': must be a string"),
        (_bad(0, caption="a\x00b"), "row 1, column 'caption': contains a NUL character"),
        (_bad(1, level="baseline", factor="baseline"), "row 2, column 'level'"),
    ],
)
def test_validation_names_row_and_column(df, expected):
    with pytest.raises(RecordsError) as info:
        validate_records(df, where="clip.csv")
    assert expected in str(info.value)
    assert str(info.value).startswith("clip.csv: ")


def test_duplicate_measurement():
    df = pd.concat([_table(), _table().iloc[[1]]], ignore_index=True)
    df.loc[6, "generator"] = "other"  # a different generator does not make it a new measurement
    with pytest.raises(RecordsError, match=r"row 7: duplicate measurement of row 2"):
        validate_records(df)
    df.loc[6, "caption"] = "A different caption"
    validate_records(df)


def test_every_problem_is_listed():
    df = _bad(0, status="maybe", evaluator="")
    df.loc[5, "score"] = 1.0
    with pytest.raises(RecordsError) as info:
        validate_records(df)
    assert len(info.value.problems) == 3


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ([c for c in COLUMNS if c != "error"], "missing column(s) ['error']"),
        ([*COLUMNS, "seed"], "unexpected column(s) ['seed']"),
        (["generator", "evaluator", *COLUMNS[2:]], "columns out of order"),
    ],
)
def test_column_problems(columns, message):
    df = _table().reindex(columns=columns)
    with pytest.raises(RecordsError) as info:
        validate_records(df)
    assert message in str(info.value)


def test_non_numeric_score_column():
    df = _table()
    df["score"] = df["score"].astype(object)
    df.loc[2, "score"] = "high"
    with pytest.raises(RecordsError, match=r"row 3, column 'score': not a number: 'high'"):
        validate_records(df)


def test_write_refuses_invalid_table(tmp_path):
    path = tmp_path / "r.csv"
    with pytest.raises(RecordsError):
        write_records(_bad(5, score=0.0), path)
    assert list(tmp_path.iterdir()) == []


def test_file_errors(tmp_path):
    with pytest.raises(RecordsError, match="unknown records file type"):
        write_records(_table(), tmp_path / "r.xlsx")
    with pytest.raises(RecordsError, match="not found"):
        read_records(tmp_path / "absent.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text(
        ",".join(COLUMNS) + "\ne,g,p," + SHA_A + ",baseline,c0,cap,zero,ok,\n", encoding="utf-8"
    )
    with pytest.raises(RecordsError, match=r"row 1, column 'score': not a number: 'zero'"):
        read_records(bad)
    swapped = tmp_path / "swapped.csv"
    swapped.write_text("generator,evaluator\n", encoding="utf-8")
    with pytest.raises(RecordsError, match="missing column"):
        read_records(swapped)
    corrupt = tmp_path / "c.parquet"
    corrupt.write_bytes(b"not parquet")
    with pytest.raises(RecordsError, match="cannot read records"):
        read_records(corrupt)


def test_overwrite_is_atomic_replacement(tmp_path):
    path = tmp_path / "r.parquet"
    write_records(_table(), path)
    write_records(_table().iloc[:2], path)
    assert len(read_records(path)) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]


def test_unusable_pyarrow_is_a_typed_error(tmp_path, monkeypatch):
    path = write_records(_table(), tmp_path / "r.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow → ImportError
    with pytest.raises(RecordsError, match="Parquet support unavailable"):
        write_records(_table(), tmp_path / "s.parquet")
    with pytest.raises(RecordsError, match="Parquet support unavailable"):
        read_records(path)
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_served_model_column_round_trips_and_is_written_only_when_set(tmp_path, suffix):
    from harness.protocol.records import SERVED_MODEL

    served = records_from_rows([_row(served_model="gpt-4o-2024-11-20"),
                                _row(level="512", factor="resolution", score=math.nan,
                                     status="failed", error="timeout")])  # fmt: skip
    assert list(served.columns) == [*COLUMNS, SERVED_MODEL]
    assert served[SERVED_MODEL].tolist() == ["gpt-4o-2024-11-20", ""]
    back = read_records(write_records(served, tmp_path / f"s{suffix}"))
    pd.testing.assert_frame_equal(back, served)
    if suffix == ".csv":
        assert (tmp_path / "s.csv").read_text().splitlines()[0].endswith(",error,served_model")
    plain = _table()
    plain[SERVED_MODEL] = ""  # a column with no served model is not written
    write_records(plain, tmp_path / f"p{suffix}")
    pd.testing.assert_frame_equal(read_records(tmp_path / f"p{suffix}"), _table())


def test_plain_records_bytes_do_not_change(tmp_path):
    path = write_records(_table(), tmp_path / "r.csv")
    # sha256 of this table's file as written before the served_model column existed
    assert hashlib.sha256(path.read_bytes()).hexdigest() == PLAIN_TABLE_SHA256
    assert records_from_rows([_row(served_model="")]).columns.tolist() == list(COLUMNS)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["served_model", *COLUMNS], "columns out of order"),
        ([*COLUMNS[:-1], "served_model", "error"], "columns out of order"),
        ([*COLUMNS, "served_model", "seed"], "unexpected column(s) ['seed']"),
    ],
)
def test_served_model_must_come_last(columns, message):
    df = _table().assign(served_model="m", seed="1")[columns]
    with pytest.raises(RecordsError, match=re.escape(message)):
        validate_records(df)


def test_served_model_cells_must_be_strings():
    df = _table().assign(served_model=[None, "m", "m", "m", "m", ""])
    with pytest.raises(RecordsError, match=r"row 1, column 'served_model': must be a string"):
        validate_records(df)


def test_record_rows_build_the_table_the_pipelines_write():
    from harness.protocol.records import MAX_ERROR_CHARS, record, records_frame

    ok = record("ev", "g", "p", "a" * 64, "baseline", "c0", "cap", 1, "ok", "")
    bad = record("ev", "g", "p", "a" * 64, "pitch", "0", "cap", float("nan"), "failed", "x" * 500)
    assert isinstance(ok.score, float) and len(bad.error) == MAX_ERROR_CHARS == 300
    frame = records_frame([ok, bad])
    assert frame.columns.tolist() == list(COLUMNS) and frame["score"].dtype == "float64"
    served = records_frame([ok._replace(served_model="m-1"), bad])
    assert served["served_model"].tolist() == ["m-1", ""]
