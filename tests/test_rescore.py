"""``t3d-audit validate --rescore N``: a forged cache entry resealed with a plain sha256 yields a
self-consistent report that ``validate --deep`` accepts; re-scoring a sample from the scenes and
the evaluators catches it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.cli import main
from harness.core import cacheseal
from harness.core.hashing import canonical_json, sha256_bytes
from harness.protocol.records import read_records, write_records
from harness.report.validation import validate_report
from harness.report.writer import write_report
from harness.run.options import AuditOptions
from harness.run.outputs import run_result
from harness.run.rescore import DEFAULT_TOLERANCE, compare_row, rescore_report, sample_records
from harness.run.session import AuditSession
from harness.testing import BoxRasterizer, TinySpec
from tests._audit_project import tiny_session

PLANTED = ("planted-bow", "planted-robust")


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv(cacheseal.KEY_ENV, raising=False)
    monkeypatch.delenv(cacheseal.KEY_FILE_ENV, raising=False)


def forge_cached_records(cache: Path, evaluator: str, delta: float = 0.25) -> tuple[str, str, str, str]:
    """Add ``delta`` to one ok score of ``evaluator``'s cached records and reseal the entry with
    a recomputed plain seal, as a writer who knows the scheme would; returns the row's key."""
    for path in sorted((cache / "records").glob("*.csv")):
        frame = read_records(path)
        if set(frame["evaluator"]) == {evaluator}:
            break
    else:
        raise AssertionError(f"no cached records of {evaluator}")
    i = int(np.flatnonzero((frame["status"] == "ok").to_numpy() & (frame["factor"] == "pitch").to_numpy())[0])
    frame.loc[i, "score"] = float(frame.loc[i, "score"]) + delta
    write_records(frame, path)
    head = json.loads(cacheseal.sidecar(path).read_bytes())
    data = path.read_bytes()
    cacheseal.sidecar(path).write_bytes(canonical_json(
        {"format": head["format"], "key": head["key"], "sha256": sha256_bytes(data), "size": len(data)}
    ))  # fmt: skip
    row = frame.loc[i]
    return str(row["generator"]), str(row["prompt_id"]), str(row["factor"]), str(row["level"])


def _planted_report(tmp: Path, forge: bool) -> tuple[Path, tuple[str, ...] | None]:
    options = AuditOptions(profile="smoke", evaluators=PLANTED, cache_dir=tmp / "cache",
                           report_dir=tmp / "reports", bootstrap=20)  # fmt: skip
    session = AuditSession(options, renderer_factory=lambda _: BoxRasterizer())
    for ev in PLANTED:
        session.record_cache.file(ev)
    key = forge_cached_records(tmp / "cache", "planted-robust") if forge else None
    session = AuditSession(options, renderer_factory=lambda _: BoxRasterizer())  # reads the cache
    return write_report(run_result(session, list(PLANTED)), []).directory, key


def test_forged_records_entry_passes_deep_validation_but_not_rescore(tmp_path, capsys):
    report, key = _planted_report(tmp_path, forge=True)
    assert validate_report(report, deep=True, figures=False) == []  # self-consistent forgery
    code = main(["validate", "--rescore", "100000", str(report)])
    out = capsys.readouterr().out
    assert code == 1
    gen, pid, factor, level = key
    assert f"scores/planted-robust.csv: {gen}/{pid} {factor}={level}: score " in out
    assert "(|Δ| 0.25 > 1.1" in out  # the tolerance, scaled by the forged score (~1.15)
    assert out.count("recomputed") == 1  # only the forged record differs


def test_an_honest_report_rescores_clean(tmp_path, capsys):
    report, _ = _planted_report(tmp_path, forge=False)
    assert main(["validate", "--rescore", "25", "--rescore-seed", "3", str(report)]) == 0
    out = capsys.readouterr().out
    assert "rescored 25 record(s) from the scenes (seed 3, tolerance 1e-06)" in out
    assert "is valid (sample re-scored from the scenes)" in out


def test_image_evaluator_is_re_rendered_and_re_scored(tmp_path, capsys):
    """An image evaluator (tiny numpy model on the box rasterizer): the forged score is found
    by rendering and scoring again in an empty cache, with progress lines of its renders."""
    spec = TinySpec("tiny-grid")
    session = tiny_session(tmp_path, [spec])
    session.record_cache.file("tiny-grid")
    gen, pid, factor, level = forge_cached_records(tmp_path / "cache", "tiny-grid", delta=1e-3)
    session = tiny_session(tmp_path, [spec])
    report = write_report(run_result(session, ["tiny-grid"]), []).directory
    result = rescore_report(report, 10_000, scenes=tmp_path / "scenes",
                            renderer_factory=lambda _: BoxRasterizer(), extra_evaluators=[spec])  # fmt: skip
    assert result.sampled == {"tiny-grid": len(read_records(report / "scores" / "tiny-grid.csv"))}
    assert len(result.problems) == 1
    assert result.problems[0].startswith(f"scores/tiny-grid.csv: {gen}/{pid} {factor}={level}: score ")
    # regression: re-rendering the sample printed nothing; the last line is at the total
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("rescore tiny-grid: fetched ") and "renders (100%)" in last


def test_inputs_that_are_not_the_reports_are_problems(tmp_path):
    report, _ = _planted_report(tmp_path, forge=False)
    manifest = json.loads((report / "manifest.json").read_text())
    manifest["options"]["evaluators"]["planted-bow"] = "0" * 64
    (report / "manifest.json").write_text(json.dumps(manifest))
    result = rescore_report(report, 10_000)
    assert any("evaluator planted-bow here has identity" in p for p in result.problems)
    assert "planted-bow" not in result.sampled and result.sampled["planted-robust"] > 0
    manifest["options"]["plan_sha256"] = "f" * 64
    (report / "manifest.json").write_text(json.dumps(manifest))
    (problem,) = rescore_report(report, 5).problems
    assert "the report's is ffffffffffff…" in problem and "--scenes" in problem


def test_sample_is_seeded_and_bounded():
    frame = pd.DataFrame({"x": range(50)})
    a, b = sample_records(frame, 7, 1), sample_records(frame, 7, 1)
    assert list(a["x"]) == list(b["x"]) == sorted(a["x"]) and len(set(a["x"])) == 7
    assert list(sample_records(frame, 7, 2)["x"]) != list(a["x"])
    assert len(sample_records(frame, 500, 0)) == 50


def test_compare_row_tolerance_and_failures():
    row = {"status": "ok", "caption": "c", "scene_sha256": "s", "score": 0.5}
    assert compare_row(row, {**row, "score": 0.5 + DEFAULT_TOLERANCE / 2}, DEFAULT_TOLERANCE) is None
    assert "score 0.5 in the report" in compare_row(row, {**row, "score": 0.5 + 2e-6}, DEFAULT_TOLERANCE)
    big = {**row, "score": 30.0}  # relative above 1: 30 ± 2.9e-5 passes, ± 3.1e-5 does not
    assert compare_row(big, {**big, "score": 30.0 + 2.9e-5}, DEFAULT_TOLERANCE) is None
    assert "> 3e-05" in compare_row(big, {**big, "score": 30.0 + 3.1e-5}, DEFAULT_TOLERANCE)
    failed = {**row, "status": "failed", "score": float("nan")}
    assert compare_row(failed, failed, 0.0) is None
    assert "status 'ok' in the report" in compare_row(row, failed, 1.0)
    assert "caption" in compare_row(row, {**row, "caption": "d"}, 1.0)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rescore", "0"], "--rescore must be at least 1"),
        (["--rescore", "3", "--tolerance", "nan"], "--tolerance must be a finite number"),
        (["--rescore", "3", "--rescore-seed", "-1"], "--rescore-seed must be at least 0"),
        (["--tolerance", "0.1"], "--tolerance applies only with --rescore N"),
    ],
)
def test_rescore_usage_errors(tmp_path, capsys, argv, message):
    assert main(["validate", *argv, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
