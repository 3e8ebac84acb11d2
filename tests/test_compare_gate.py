"""The release gate end to end: ``t3d-audit compare`` on report directories written by the
audit itself, ``pytest --audit-baseline``, saved baselines, margins and exit codes.

The two releases are the planted evaluators on the bundled scenes (smoke profile): nothing
is rendered and no model runs. Release 1 is ``planted-robust``; release 2 is
``planted-pitch``, the same scorer plus a generator-dependent pitch effect.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.paths import REPO_ROOT
from harness.protocol.records import read_records, write_records
from harness.release.baselines import load_release, save_baseline
from harness.release.margins import MarginError, Margins, parse_margin_args
from tests._compare_tables import BASE_PITCH, CAND_PITCH, tiny_release


def _audit(tmp: Path, tag: str, evaluator: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    cmd = [
        sys.executable, "-m", "pytest", "audit_tests", "-q", "-p", "no:cacheprovider", "-n", "0",
        "--audit-profile", "smoke", "--audit-evaluators", evaluator, "--audit-bootstrap", "50",
        "--audit-cache-dir", str(tmp / "cache"), "--audit-report-dir", str(tmp / tag),
        f"--junitxml={tmp / f'{tag}.xml'}", *extra,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    (report,) = [p for p in (tmp / tag).iterdir() if not p.name.startswith(".")]
    return proc, report


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("releases")
    _, v1 = _audit(tmp, "v1", "planted-robust")
    proc, v2 = _audit(tmp, "v2", "planted-pitch", "--audit-baseline", str(v1))
    return {"v1": v1, "v2": v2, "proc": proc, "junit": tmp / "v2.xml", "tmp": tmp}


#: A config without [tool.t3d-audit.compare]: the default margins (a named --config must exist).
NO_MARGINS = Path(tempfile.mkdtemp(prefix="t3d-compare-")) / "pyproject.toml"
NO_MARGINS.write_text("")


def _json_run(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["compare", *argv, "--json", "--config", str(NO_MARGINS)])
    return code, json.loads(capsys.readouterr().out)


def test_identical_re_release_exits_0_with_no_change(releases, capsys):
    code, doc = _json_run(capsys, str(releases["v1"]), str(releases["v1"]))
    assert code == 0
    (pair,) = doc["pairs"]
    assert {m["verdict"] for m in pair["metrics"]} == {"no change"}
    assert pair["baseline_card_id"] == pair["candidate_card_id"] != None  # noqa: E711


def test_planted_pitch_release_is_a_regression_naming_pitch(releases, capsys, tmp_path):
    out = tmp_path / "out"
    code = main(["compare", str(releases["v1"]), str(releases["v2"]), "--out", str(out), "--config", str(NO_MARGINS)])
    assert code == 1
    doc = json.loads((out / "comparison.json").read_text())
    (pair,) = doc["pairs"]  # one alignment evaluator on each side: paired automatically
    assert (pair["baseline_evaluator"], pair["candidate_evaluator"]) == ("planted-robust", "planted-pitch")
    verdicts = {m["metric"]: m["verdict"] for m in pair["metrics"]}
    assert verdicts["rho-pitch"] == "regression"
    assert verdicts["rho-yaw"] == verdicts["rho-lighting"] == "no change"
    assert pair["correction"] == "max-t" and pair["bootstrap"] == 2000 and pair["seed"] == 42
    markdown = (out / "comparison.md").read_text()
    # the smoke releases have 2 prompts: a small sample, so the verdict is marked indicative
    assert "| rho | pitch |" in markdown and "**regression (indicative)**" in markdown and "Gate: FAIL (exit 1)" in markdown
    printed = capsys.readouterr().out
    assert printed.startswith("# Release comparison")
    # the last line names the regressed metric and its factor
    last = printed.strip().splitlines()[-1]
    assert last.startswith("gate FAIL: planted-pitch regression on rho[pitch] +"), last
    assert last.endswith("; indicative (small sample: 2 prompt blocks, under 10)"), last
    code = main(["compare", str(releases["v1"]), str(releases["v1"]), "--config", str(NO_MARGINS)])
    assert code == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("gate PASS: no confirmed regression (")


def test_pytest_audit_baseline_fails_the_junit_gate_by_metric(releases):
    assert releases["proc"].returncode == 1
    cases = {c.get("name"): c for c in ET.parse(releases["junit"]).getroot().iter("testcase")}
    rho_pitch = cases["test_no_regression[planted-pitch-rho-pitch]"]
    assert rho_pitch.find("failure") is not None
    message = rho_pitch.find("failure").get("message")
    assert "rho-pitch of planted-pitch regressed against baseline planted-robust" in message
    assert message.endswith("; indicative (small sample: 2 prompt blocks, under 10)")  # smoke: 2 prompts
    for ok in ("rho-yaw", "discrimination-scrambled", "failed_share"):
        case = cases[f"test_no_regression[planted-pitch-{ok}]"]
        assert case.find("failure") is None and case.find("skipped") is None
    v1_card = json.loads((releases["v1"] / "cards" / "planted-robust.json").read_text())
    v2_card = json.loads((releases["v2"] / "cards" / "planted-pitch.json").read_text())
    assert v2_card["baseline_card_id"] == v1_card["card_id"]
    assert "baseline_card_id" not in v1_card
    from harness.report.validation import validate_report

    assert validate_report(releases["v2"]) == []


def test_saved_baseline_is_a_comparable_release(releases, capsys, tmp_path):
    saved = save_baseline(releases["v1"], "v1.2", root=tmp_path / "baselines")
    assert sorted(p.name for p in saved.iterdir()) == ["cards", "manifest.json", "scores"]
    assert load_release(saved, role="baseline").card_ids == load_release(releases["v1"], role="baseline").card_ids
    code, doc = _json_run(capsys, str(saved), str(releases["v2"]))
    assert code == 1 and doc["pairs"][0]["baseline_card_id"].startswith("ecc-v1-sha256:")
    save_baseline(releases["v2"], "v1.2", root=tmp_path / "baselines")  # replaces the older one
    assert [p.name for p in (saved / "scores").iterdir()] == ["planted-pitch.csv"]


def test_mismatched_scenes_exit_2_naming_the_scene(releases, capsys, tmp_path):
    records = read_records(releases["v1"] / "scores" / "planted-robust.csv")
    first = records.loc[0, ["generator", "prompt_id"]]
    same = (records["generator"] == first["generator"]) & (records["prompt_id"] == first["prompt_id"])
    records.loc[same & (records["factor"] != "probe"), "scene_sha256"] = "0" * 64
    write_records(records, tmp_path / "moved.csv")
    assert main(["compare", str(releases["v1"]), str(tmp_path / "moved.csv")]) == 2
    err = capsys.readouterr().err
    assert f"frozen scenes differ: generator {first['generator']!r}, prompt {first['prompt_id']!r}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["missing-dir", "{v1}"], "the baseline does not exist"),
        (["{v1}", "{v1}/manifest.json"], "not a score file or report directory"),
        (["{v1}", "{v1}", "--margin", "rho_pitch=1"], "unknown metric 'rho_pitch'"),
        (["{v1}", "{v1}", "--margin", "rho=-1"], "must be a finite number ≥ 0"),
        (["{v1}", "{v1}", "--pair", "planted-robust"], "expected BASE_ID=CAND_ID"),
        (["{v1}", "{v1}", "--pair", "planted-robust=nope"], "'nope' is not in the candidate"),
        (["{v1}", "{v1}", "--bootstrap", "1"], "--bootstrap must be in [2, 100000]"),
        (["{v1}", "{v1}", "--bootstrap", "1000000000"], "--bootstrap must be in [2, 100000]"),
        (["{v1}", "{v1}/cards"], "no score files"),
    ],
)
def test_usage_errors_exit_2_with_one_line(releases, capsys, argv, message):
    argv = [a.format(v1=releases["v1"]) for a in argv]
    assert main(["compare", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["compare", "only-one"])
    assert info.value.code == 2


@pytest.fixture
def tiny_files(tmp_path):
    """The hand example of test_stats_compare: rho-pitch is inconclusive (Δ 0.75, wide CI)."""
    base = write_records(tiny_release(BASE_PITCH), tmp_path / "base.csv")
    cand = write_records(tiny_release(CAND_PITCH), tmp_path / "cand.csv")
    return str(base), str(cand), tmp_path


def test_fail_on_inconclusive(tiny_files, capsys):
    base, cand, _ = tiny_files
    code, doc = _json_run(capsys, base, cand, "--bootstrap", "400")
    verdicts = {m["metric"]: m["verdict"] for m in doc["pairs"][0]["metrics"]}
    assert code == 0 and verdicts["rho-pitch"] == "inconclusive"
    assert main(["compare", base, cand, "--bootstrap", "400", "--fail-on-inconclusive", "--config", str(NO_MARGINS)]) == 1


def test_margins_from_pyproject_and_command_line(tiny_files, capsys):
    base, cand, tmp = tiny_files
    config = tmp / "pyproject.toml"
    config.write_text(
        "[tool.t3d-audit.compare]\nrho = 0.05\n"
        '[tool.t3d-audit.compare.overrides]\n"ev*" = { "rho.pitch" = 5.0 }\n"other" = { rho = 0.0 }\n'
    )
    code = main(["compare", base, cand, "--json", "--config", str(config), "--bootstrap", "400"])
    pair = json.loads(capsys.readouterr().out)["pairs"][0]
    m = {x["metric"]: x for x in pair["metrics"]}
    assert m["rho-pitch"]["margin"] == 5.0 and m["rho-pitch"]["verdict"] == "no change"
    assert pair["margins"]["rho"] == 0.05 and pair["margins"]["rho.pitch"] == 5.0
    assert code == 0
    main(["compare", base, cand, "--json", "--config", str(config), "--margin", "rho-pitch=0.01"])
    pair = json.loads(capsys.readouterr().out)["pairs"][0]
    assert {x["metric"]: x for x in pair["metrics"]}["rho-pitch"]["margin"] == 0.01  # the CLI wins


def test_margin_tables():
    m = Margins.from_table({"rho": 0.2, "overrides": {"clip-*": {"rho": 0.3}, "clip-v2": {"rho.pitch": 1}}})
    assert m.for_evaluator("siglip") == {"rho": 0.2}
    assert m.for_evaluator("clip-v2") == {"rho": 0.3, "rho.pitch": 1.0}
    assert m.for_evaluator("clip-v2", {"rho": 0.0})["rho"] == 0.0
    assert parse_margin_args(["discrimination-scrambled=0.1", "top1_count=2"]) == {
        "discrimination.scrambled": 0.1, "top1_count": 2.0}
    with pytest.raises(MarginError, match="did you mean kendall_w"):
        Margins.from_table({"kendal_w": 0.1})
    for bad in ({"rho": True}, {"rho": float("nan")}, {"rho": "0.1"}, {"overrides": {"x": 1}}):
        with pytest.raises(MarginError):
            Margins.from_table(bad)


def test_latest_report_picks_this_runs_directory(tmp_path):
    from harness.core.errors import AuditError
    from harness.run.suite_argv import latest_report

    with pytest.raises(AuditError):
        latest_report(tmp_path, 0.0)
    (tmp_path / ".tmp-x").mkdir()
    (tmp_path / "smoke-1").mkdir()
    assert latest_report(tmp_path, 0.0).name == "smoke-1"
    with pytest.raises(AuditError):
        latest_report(tmp_path, 4e9)  # nothing written since


def test_comparison_document_is_json_clean(tiny_files, capsys):
    base, cand, _ = tiny_files
    _, doc = _json_run(capsys, base, cand, "--bootstrap", "50")
    metric = doc["pairs"][0]["metrics"][0]
    assert set(metric) == {"metric", "kind", "subject", "baseline", "candidate", "difference", "ci",
                           "ci_pointwise", "se", "margin", "harmful", "verdict"}
    assert all(v is None or np.isfinite(v) for v in metric["ci"])


@pytest.mark.slow
def test_noise_floor_rerun_with_other_batch_size_and_threads(tmp_path):
    """The same release scored twice by a real model (ref-vit-clip on box renders): batch 32
    on 2 threads, then batch 3 on 1 thread. Scores move in the last float32 bits (3e-7 here);
    the comparison shows no regression and nothing inconclusive."""
    torch = pytest.importorskip("torch")
    from harness.release.comparison import compare_records
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession
    from harness.testing import BoxRasterizer, write_tiny_scene_set

    write_tiny_scene_set(tmp_path / "scenes")
    threads = torch.get_num_threads()
    runs = []
    try:
        for batch, n_threads in ((32, 2), (3, 1)):
            torch.set_num_threads(n_threads)
            options = AuditOptions(profile="smoke", evaluators=("ref-vit-clip",), scenes=tmp_path / "scenes",
                                   cache_dir=tmp_path / f"cache-{batch}", batch_size=batch, device="cpu")
            session = AuditSession(options, renderer_factory=lambda _cache: BoxRasterizer())
            runs.append(session.record_cache.records("ref-vit-clip"))
    finally:
        torch.set_num_threads(threads)
    key = ["scene_sha256", "factor", "level", "caption"]
    moved = (runs[0].set_index(key)["score"] - runs[1].set_index(key)["score"]).abs().max()
    assert moved < 1e-5
    out = compare_records(runs[0], runs[1], bootstrap=500)
    assert not out.regressions and not out.inconclusive
