"""``t3d-audit report`` on damaged score files: a clear error or a report, never a traceback.

Regressions: one evaluator whose rows all failed crashed the report (``All-NaN slice
encountered``) and with it every other evaluator's; a header-only or blank records file raised
IndexError; out-of-range scores (9.99 on CLIPScore's [0, 2.5], 1e308) changed peak rho by two
orders of magnitude with only numpy warnings.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.protocol.records import write_records
from harness.stats.synthetic import SyntheticSpec, synthetic_records

SPEC = SyntheticSpec(evaluators=2, prompt_free=0, prompts=3, templates=3, paraphrases=3, render_levels=3)


@pytest.fixture(scope="module")
def base_records() -> pd.DataFrame:
    return synthetic_records(SPEC)


def report(tmp: Path, frame: pd.DataFrame, *, validate: bool = True) -> tuple[int, dict | None]:
    """Write one score file per evaluator, run the command; (exit code, summary or None)."""
    files = []
    for i, (_ev, part) in enumerate(frame.groupby("evaluator", sort=True)):
        path = tmp / f"scores-{i}.csv"
        write_records(part, path, validate=validate)
        files.append(str(path))
    out = tmp / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy overflow / all-NaN warnings
        code = main(["report", "--scores", *files, "--out", str(out), "--bootstrap", "20"])
    summary = out / "summary.json"
    return code, json.loads(summary.read_text()) if code == 0 else None


def fail_rows(frame: pd.DataFrame, mask: np.ndarray, reason: str = "HTTP 401") -> pd.DataFrame:
    out = frame.copy()
    out.loc[mask, "score"] = math.nan
    out.loc[mask, "status"] = "failed"
    out.loc[mask, "error"] = reason
    return out


def test_an_evaluator_whose_rows_all_failed_is_reported_beside_the_others(tmp_path, base_records):
    first = sorted(base_records["evaluator"].unique())[0]
    frame = fail_rows(base_records, (base_records["evaluator"] == first).to_numpy())
    code, summary = report(tmp_path, frame)
    assert code == 0
    dead, alive = summary["evaluators"][first], summary["evaluators"][sorted(summary["evaluators"])[1]]
    assert dead["failed"] == int((frame["evaluator"] == first).sum())
    assert dead["failed_share"] == 1.0
    assert dead["peak_rho"] is None and all(v is None for v in dead["rho"].values())
    assert alive["peak_rho"] is not None and alive["failed_share"] == 0.0


@pytest.mark.parametrize("content", ["", "\n", ",".join(
    ["evaluator", "generator", "prompt_id", "scene_sha256", "factor", "level", "caption", "score",
     "status", "error"]) + "\n"])
def test_blank_or_header_only_files_are_clear_errors(tmp_path, capsys, content):
    path = tmp_path / "empty.csv"
    path.write_text(content)
    code = main(["report", "--scores", str(path), "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "empty.csv" in err and "Traceback" not in err


@pytest.mark.parametrize("value", [9.99, 1e308, -1e308, 2.5000001])
def test_out_of_range_scores_of_a_declared_evaluator_are_named_row_errors(tmp_path, capsys, base_records, value):
    frame = base_records.copy()
    frame["evaluator"] = frame["evaluator"].map({"eval0": "clip-vit-b32", "eval1": "siglip-vit-b16"})
    frame["score"] = 1.0 / (1.0 + np.exp(-frame["score"]))  # inside both declared ranges
    frame.loc[frame.index[7], "score"] = value
    code, _ = report(tmp_path, frame)
    assert code == 2
    err = capsys.readouterr().err
    assert "row 8, column 'score'" in err and "outside evaluator 'clip-vit-b32'" in err


def test_huge_scores_of_an_undeclared_evaluator_never_overflow_silently(tmp_path, capsys, base_records):
    frame = base_records.copy()
    frame.loc[frame.index[3], "score"] = 1e308
    code, _ = report(tmp_path, frame)
    assert code == 2
    assert "overflow" in capsys.readouterr().err


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    fail_share=st.sampled_from([0.0, 0.1, 0.5, 0.95, 1.0]),
    fail_evaluator=st.booleans(),
    fail_factor=st.sampled_from([None, "baseline", "template", "pitch", "probe", "paraphrase"]),
    drop_share=st.sampled_from([0.0, 0.05, 0.5]),
    duplicates=st.integers(0, 2),
    wild=st.lists(st.sampled_from([9.99, 1e308, -1e308, 1e-320, 1e150, -3.0]), max_size=3),
)
def test_damaged_records_give_a_report_or_a_clear_error(
    tmp_path_factory, base_records, data, fail_share, fail_evaluator, fail_factor, drop_share, duplicates, wild
):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    frame = base_records
    n = len(frame)
    mask = rng.random(n) < fail_share
    if fail_evaluator:
        mask |= (frame["evaluator"] == "eval0").to_numpy()
    if fail_factor:
        mask |= (frame["factor"] == fail_factor).to_numpy()
    frame = fail_rows(frame, mask)
    for value in wild:
        frame.loc[frame.index[int(rng.integers(n))], "score"] = value
    frame = frame[rng.random(n) >= drop_share]
    if duplicates and len(frame):
        frame = pd.concat([frame, frame.sample(duplicates, random_state=1, replace=True)])
    tmp = tmp_path_factory.mktemp("fuzz")
    if len(frame) == 0:
        return
    code, summary = report(tmp, frame, validate=False)
    assert code in (0, 2)
    if code == 0:
        for entry in summary["evaluators"].values():
            assert 0.0 <= entry["failed_share"] <= 1.0


@pytest.mark.parametrize("b", ["-5", "1000000000"])
def test_a_bootstrap_outside_the_accepted_range_is_one_line(tmp_path, capsys, base_records, b):
    # regression: a huge B went to numpy (MemoryError / dimension limit) instead of a usage error
    path = tmp_path / "s.csv"
    write_records(base_records[base_records["evaluator"] == "eval0"], path)
    assert main(["report", "--scores", str(path), "--out", str(tmp_path / "o"), "--bootstrap", b]) == 2
    err = capsys.readouterr().err
    assert "--bootstrap must be in [0, 100000]" in err and "Traceback" not in err
