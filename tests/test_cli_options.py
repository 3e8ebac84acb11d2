"""Regression tests: bad option values and bad input files are one-line usage or typed errors
(exit 2; 4 under pytest), raised before any work starts.

Each case gave a traceback, or started rendering/scoring/the whole audit before refusing.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.core.errors import RecordsError
from harness.core.paths import BUNDLED_SCENES
from harness.protocol.records import COLUMNS, read_records, write_records
from harness.run import argtypes
from tests._audit_project import make_project
from tests._compare_tables import BASE_PITCH, tiny_release
from tests._extras import need

SCENE_FILE = BUNDLED_SCENES / "jittered" / "bar-03.json"
PROC_DIR_READ_ONLY = Path("/proc/1").is_dir()

pytest_plugins = ["pytester"]


class WorkStarted(Exception):
    """Raised by a stand-in for an expensive entry point: the command got past its checks."""


@pytest.fixture
def no_work(monkeypatch, tmp_path):
    """Every place a command starts rendering, scoring or the pytest run raises WorkStarted."""

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise WorkStarted

    for target in ("pytest.main", "harness.backends.warm_on", "harness.run.session.AuditSession",
                   "harness.render.service.RenderService.render", "harness.measure.cost_estimate.calibrate"):  # fmt: skip
        monkeypatch.setattr(target, stand_in)
    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def usage_error(capsys, argv: list[str]) -> str:
    """Run ``t3d-audit argv``; assert exit 2 with one line on stderr and no traceback."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: the option's own check failed
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err


def _records_csv(path: Path, score: str, delimiter: str = ",") -> Path:
    row = dict(evaluator="ev", generator="g", prompt_id="p1", scene_sha256="a" * 64,
               factor="baseline", level="c0", caption="a cat", score=score, status="ok", error="")  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, COLUMNS, delimiter=delimiter)
        writer.writeheader()
        writer.writerow(row)
    return path


# ---------------------------------------------------------------------------------------------
# item 7: tracebacks


@pytest.mark.parametrize("score", ["high", "0x10", "0,5"])
def test_a_score_that_is_not_a_number_is_a_records_error(tmp_path, capsys, score):
    path = _records_csv(tmp_path / "s.csv", score)
    with pytest.raises(RecordsError, match=f"row 1, column 'score': not a number: '{score}'"):
        read_records(path, validate=False)
    err = usage_error(capsys, ["report", "--scores", str(path), "--out", str(tmp_path / "o")])
    assert str(path) in err and f"not a number: '{score}'" in err


@pytest.mark.parametrize(("delimiter", "name"), [(";", "semicolons"), ("\t", "tabs")])
def test_a_records_file_with_another_delimiter_names_it(tmp_path, capsys, delimiter, name):
    path = _records_csv(tmp_path / "s.csv", "0.5", delimiter)
    with pytest.raises(RecordsError, match=f"separated by {name}, not commas"):
        read_records(path)
    err = usage_error(capsys, ["report", "--scores", str(path), "--out", str(tmp_path / "o")])
    assert str(path) in err and "comma-separated" in err
    err = usage_error(capsys, ["compare", str(path), str(path)])
    assert f"separated by {name}" in err


def test_a_records_file_without_the_evaluator_column_is_a_records_error(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("generator,prompt_id\ng,p\n", encoding="utf-8")
    err = usage_error(capsys, ["report", "--scores", str(path), "--out", str(tmp_path / "o")])
    assert "missing column(s)" in err


def test_a_costs_file_that_is_not_one_is_a_typed_error(tmp_path, capsys, no_work):
    err = usage_error(capsys, ["plan", "--profile", "smoke", "--estimate", "--costs", "/etc/passwd"])
    assert "/etc/passwd: cannot read a costs file" in err and "--calibrate-out" in err
    partial = tmp_path / "costs.json"
    partial.write_text('{"format": "t3d-audit-costs/1", "render": {"first_s": 1}}', encoding="utf-8")
    err = usage_error(capsys, ["plan", "--profile", "smoke", "--estimate", "--costs", str(partial)])
    assert "render.marginal_s: must be a non-negative number, got None" in err


@pytest.mark.parametrize(
    ("store", "message"),
    [("ftp://x/y", "unknown scheme 'ftp'"), ("s3://", "names no bucket"),
     ("http://127.0.0.1:9/x", "unknown scheme 'http'"), ("gs://Bad Bucket/x", "not a bucket name"),
     ("file://relative", "needs an absolute path")],
)  # fmt: skip
def test_warm_refuses_a_store_it_cannot_use(capsys, no_work, store, message):
    err = usage_error(capsys, ["warm", "--profile", "smoke", "--store", store])
    assert "--store" in err and message in err


def test_report_refuses_a_negative_seed(tmp_path, capsys):
    path = write_records(tiny_release(BASE_PITCH), tmp_path / "r.csv")
    err = usage_error(capsys, ["report", "--scores", str(path), "--out", str(tmp_path / "o"),
                               "--bootstrap", "10", "--seed", "-1"])  # fmt: skip
    assert "--seed" in err and "got -1" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not PROC_DIR_READ_ONLY, reason="needs Linux /proc")
def test_compare_refuses_an_out_dir_it_cannot_create(tmp_path, capsys):
    path = write_records(tiny_release(BASE_PITCH), tmp_path / "r.csv")
    err = usage_error(capsys, ["compare", str(path), str(path), "--out", "/proc/1/x"])
    assert "--out: /proc/1/x: cannot create a directory in /proc/1" in err


def test_compare_refuses_an_out_dir_behind_a_file(tmp_path, capsys):
    path = write_records(tiny_release(BASE_PITCH), tmp_path / "r.csv")
    err = usage_error(capsys, ["compare", str(path), str(path), "--out", str(path / "x")])
    assert "in its way" in err


def test_contact_sheet_refuses_a_zero_tile_before_rendering(tmp_path, capsys, no_work):
    err = usage_error(capsys, ["contact-sheet", str(SCENE_FILE), "--out", str(tmp_path / "s.png"),
                               "--profile", "smoke", "--tile", "0"])  # fmt: skip
    assert "--tile" in err and "got 0" in err


@pytest.mark.parametrize("workers", ["abc", "-1", "1.5"])
def test_audit_refuses_workers_that_are_not_a_count(capsys, no_work, workers):
    err = usage_error(capsys, ["audit", "--profile", "smoke", "--workers", workers])
    assert "--workers" in err


# ---------------------------------------------------------------------------------------------
# item 8: every option checked before any work


@pytest.mark.parametrize(("option", "value"), [("--retries", "-1"), ("--timeout", "-1"),
                                               ("--timeout", "nan"), ("--jobs", "0")])  # fmt: skip
def test_warm_checks_its_numbers_before_rendering(capsys, no_work, option, value):
    err = usage_error(capsys, ["warm", "--profile", "smoke", option, value])
    assert option in err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--evaluators", ""), ("--evaluators", " , "), ("--batch-size", "0"), ("--score-device", "tpu"),
     ("--evaluators", "nosuch")],
)  # fmt: skip
def test_materialize_checks_its_options_before_rendering(tmp_path, capsys, no_work, option, value):
    err = usage_error(capsys, ["materialize", "--profile", "smoke", "--store", str(tmp_path / "st"),
                               option, value])  # fmt: skip
    assert option in err or "no evaluator matches 'nosuch'" in err


def test_audit_checks_evaluators_before_rendering(capsys, no_work):
    err = usage_error(capsys, ["audit", "--profile", "smoke", "--evaluators", "nosuch"])
    assert "no evaluator matches 'nosuch'" in err


def test_audit_checks_the_profile_before_rendering(capsys, no_work):
    err = usage_error(capsys, ["audit", "--profile", "nosuch"])
    assert "unknown profile 'nosuch'" in err


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", ""])
def test_audit_refuses_a_baseline_name_before_the_run(capsys, no_work, name):
    err = usage_error(capsys, ["audit", "--profile", "smoke", "--save-baseline", name])
    assert "--save-baseline" in err and "plain directory name" in err


def test_audit_with_good_options_reaches_the_work(no_work, capsys):
    # the checks above fail for the bad value, not for everything
    with pytest.raises(WorkStarted):
        main(["audit", "--profile", "smoke", "--evaluators", "ref-*,planted-*", "--workers", "2",
              "--save-baseline", "v1.2"])  # fmt: skip


def test_audit_checks_the_baseline_exists_before_rendering(tmp_path, capsys, no_work):
    err = usage_error(capsys, ["audit", "--profile", "smoke", "--baseline", str(tmp_path / "nope")])
    assert "the baseline does not exist" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["warm", "--profile", "smoke", "--backend", "ray", "--address", "nope"], "--address must be"),
     (["score", "--evaluator", "x", "--images", ".", "--captions", "c.json", "--out", "o.csv",
       "--device", "tpu"], "--device must be"),
     (["plan", "--profile", "smoke", "--estimate", "--evaluators", ","], "--evaluators must name")],
)  # fmt: skip
def test_other_option_values_are_checked_while_parsing(capsys, no_work, argv, message):
    assert message in usage_error(capsys, argv)


def test_score_checks_the_records_file_name_before_scoring(tmp_path, capsys):
    err = usage_error(capsys, ["score", "--evaluator", "ref-vit-clip", "--images", str(tmp_path),
                               "--captions", "c.json", "--out", str(tmp_path / "scores.txt")])  # fmt: skip
    assert "--out must be a .csv or .parquet file name" in err


def test_train_reference_checks_init_weights_before_building_data(tmp_path, capsys, monkeypatch):
    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the training data was built before --init was checked")

    monkeypatch.setattr("harness.training.build_sets.build_missing", never)
    err = usage_error(capsys, ["train-reference", "--model", "ref-vit-clip", "--out", str(tmp_path / "w"),
                               "--data", str(tmp_path / "d"), "--init", str(tmp_path / "nowhere")])  # fmt: skip
    assert "ref-vit-clip.safetensors" in err and "--init" in err


@pytest.mark.skipif(not PROC_DIR_READ_ONLY, reason="needs Linux /proc")
def test_audit_refuses_a_report_dir_it_cannot_create(capsys, no_work):
    err = usage_error(capsys, ["audit", "--profile", "smoke", "--report-dir", "/proc/1/nope"])
    assert "--report-dir" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--audit-store=ftp://x"], "*--audit-store: 'ftp://x': unknown scheme 'ftp'*"),
        (["--audit-store=s3://"], "*--audit-store: 's3://': names no bucket*"),
        pytest.param(["--audit-report-dir=/proc/1/nope"], "*--audit-report-dir=/proc/1/nope: cannot create*",
                     marks=pytest.mark.skipif(not PROC_DIR_READ_ONLY, reason="needs Linux /proc")),
    ],
)  # fmt: skip
def test_pytest_store_and_report_dir_are_usage_errors(pytester, args, message):
    make_project(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert len([line for line in result.stderr.lines if line.strip()]) == 1, result.stderr.lines
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


# ---------------------------------------------------------------------------------------------
# the shared checks themselves


@pytest.mark.parametrize(
    ("check", "text", "value"),
    [(argtypes.positive_int, "7", 7), (argtypes.positive_int, " 7 ", 7), (argtypes.seed, "0", 0),
     (argtypes.retries, "0", 0), (argtypes.positive_float, "0.5", 0.5), (argtypes.workers, "auto", "auto"),
     (argtypes.workers, "0", "0"), (argtypes.device, "cuda:1", "cuda:1"),
     (argtypes.plain_name, "v1.2_rc-3", "v1.2_rc-3"), (argtypes.name_list, "a,*b", "a,*b")],
)  # fmt: skip
def test_good_values_pass(check, text, value):
    assert check(text) == value


@pytest.mark.parametrize(
    ("check", "text"),
    [(argtypes.positive_int, "0"), (argtypes.positive_int, "1_000"), (argtypes.positive_int, "0x10"),
     (argtypes.positive_int, "1e3"), (argtypes.seed, str(2**63)), (argtypes.positive_float, "0"),
     (argtypes.positive_float, "inf"), (argtypes.non_negative_float, "-0.1"), (argtypes.jobs, "5000"),
     (argtypes.device, "tpu"), (argtypes.plain_name, "."), (argtypes.plain_name, "a b"),
     (argtypes.name_list, ""), (argtypes.output_dir, ""), (argtypes.store_url, "memory://")],
)  # fmt: skip
def test_bad_values_fail_with_an_argument_type_error(check, text):
    with pytest.raises(argtypes.Error):
        check(text)


def test_store_url_makes_a_plain_path_a_file_url(tmp_path):
    assert argtypes.store_url("st", base=tmp_path) == (tmp_path / "st").resolve().as_uri()


def test_store_url_keeps_an_fsspec_url():
    need("fsspec")
    assert argtypes.store_url("memory://t3d/x") == "memory://t3d/x"


def test_store_url_keeps_an_s3_url():
    need("s3fs")
    assert argtypes.store_url("s3://bucket/prefix") == "s3://bucket/prefix"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_output_dir_refuses_a_read_only_parent(tmp_path):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        with pytest.raises(argtypes.Error, match="cannot create a directory"):
            argtypes.output_dir(str(parent / "x"))
    finally:
        parent.chmod(0o700)


def test_output_dir_probe_leaves_nothing_behind(tmp_path):
    assert argtypes.output_dir(str(tmp_path / "a" / "b")) == tmp_path / "a" / "b"
    assert list(tmp_path.iterdir()) == []
