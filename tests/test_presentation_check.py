"""The presentation probes as an audit check: ``min_presentation_agreement``
in the metric registry (scope ``presentation``, out of other runs' ids), its project override,
and ``audit_tests/test_presentation.py`` end to end with planted evaluators (no renders):
``preset-tiling`` fails the tiled probe, the protocol-invariant ``planted-robust`` passes all."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from harness.checks.thresholds import layered, presentation_thresholds
from harness.core.paths import REPO_ROOT
from harness.peers.audit_probes import applicable_probes
from harness.peers.presentation_probes import PROBES, default_threshold, probe_result
from harness.run.gate_thresholds import gate_thresholds
from harness.vocab.metrics import MIN_PRESENTATION_AGREEMENT, THRESHOLDS

pytest_plugins = ["pytester"]


def test_threshold_is_a_registry_row_in_its_own_scope():
    spec = THRESHOLDS.get(MIN_PRESENTATION_AGREEMENT)
    assert (spec.direction, spec.default, spec.scope) == ("min", 0.8, "presentation")
    assert presentation_thresholds() == (MIN_PRESENTATION_AGREEMENT,)
    assert default_threshold() == 0.8


def test_threshold_is_left_out_of_runs_that_do_not_present():
    plain = layered(None)
    assert MIN_PRESENTATION_AGREEMENT not in gate_thresholds(plain, blocks=False, human=False).to_dict()["base"]
    dropped = gate_thresholds(plain, blocks=False, human=False).for_evaluator("x")
    kept = gate_thresholds(plain, blocks=False, human=False, presentation=True).for_evaluator("x")
    assert MIN_PRESENTATION_AGREEMENT not in dropped
    assert kept[MIN_PRESENTATION_AGREEMENT] == 0.8


def test_project_table_overrides_the_threshold_like_any_other():
    table = layered({"min_presentation_agreement": 0.5,
                                   "overrides": {"preset-*": {"min_presentation_agreement": 0.95}}})
    gated = gate_thresholds(table, blocks=False, human=False, presentation=True)
    assert gated.for_evaluator("planted-robust")[MIN_PRESENTATION_AGREEMENT] == 0.5
    assert gated.for_evaluator("preset-tiling")[MIN_PRESENTATION_AGREEMENT] == 0.95


def test_probe_result_takes_the_registry_default_or_the_given_threshold():
    ref = np.array([[3.0, 1.0], [2.0, 2.0], [1.0, 3.0]])
    flipped = ref.copy()
    flipped[:, 0] = [1.0, 2.0, 3.0]  # half the comparisons flip: agreement 0.5
    result = probe_result(PROBES[0], ref, flipped, None)
    assert (result.agreement, result.threshold, result.passed) == (0.5, 0.8, False)
    assert np.isnan(result.lo)
    assert probe_result(PROBES[0], ref, flipped, None, threshold=0.5).passed


def test_only_a_preset_audit_collects_probes():
    assert applicable_probes("single") == ()
    assert applicable_probes("preset:3dcodebench") == tuple(p.name for p in PROBES)


CONFTEST = """
from harness.evaluators.reference.specs import preset_planted_specs


def pytest_audit_evaluators(config):
    return [s for s in preset_planted_specs() if s.id == "preset-tiling"]
"""

PYPROJECT = """
[tool.pytest.ini_options]
testpaths = ["audit_tests"]

[tool.t3d-audit]
profile = "smoke"
evaluators = ["preset-tiling", "planted-robust"]
bootstrap = 50
"""


def _project(pytester: pytest.Pytester) -> None:
    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    (pytester.path / "conftest.py").write_text(CONFTEST)
    (pytester.path / "pyproject.toml").write_text(PYPROJECT)


def _results(pytester: pytest.Pytester, tag: str) -> list[dict]:
    reports = [p for p in (pytester.path / f"reports-{tag}").iterdir() if not p.name.startswith(".")]
    assert len(reports) == 1, reports
    return json.loads((reports[0] / "results.json").read_text())["results"]


def _run(pytester: pytest.Pytester, tag: str, *args: str) -> pytest.RunResult:
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests/test_presentation.py", "audit_tests/test_failures.py", "-p", "no:cacheprovider",
        "--audit-cache-dir", str(root / f"cache-{tag}"), "--audit-report-dir", str(root / f"reports-{tag}"),
        "-rs", *args, timeout=300)  # fmt: skip


@pytest.mark.parametrize("workers", ["0", "2"])
def test_preset_audit_fails_the_tiling_evaluator_only(pytester, workers):
    _project(pytester)
    result = _run(pytester, f"preset{workers}", "-n", workers, "--audit-view-policy=preset:3dcodebench")
    out = result.stdout.str()
    assert result.ret == 1, out[-3000:]
    names = [p.name for p in PROBES]
    rows = {(r["evaluator"], next(n for n in names if r["test"].endswith(f"-{n}]"))): r
            for r in _results(pytester, f"preset{workers}") if "test_presentation" in r["test"]}  # fmt: skip
    tiling = {k[1]: r for k, r in rows.items() if k[0] == "preset-tiling"}
    robust = {k[1]: r for k, r in rows.items() if k[0] == "planted-robust"}
    assert len(tiling) == len(robust) == len(PROBES), sorted(rows)
    assert all(r["outcome"] == "passed" for r in robust.values()), robust
    failed = [k for k, r in tiling.items() if r["outcome"] == "failed"]
    assert failed == ["tiled"], tiling
    check = tiling[failed[0]]["checks"][0]
    assert check["threshold_name"] == MIN_PRESENTATION_AGREEMENT and check["threshold"] == 0.8


def test_other_view_policies_do_not_collect_the_check(pytester):
    _project(pytester)
    result = _run(pytester, "single", "-n", "0")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    tests = [r["test"] for r in _results(pytester, "single")]
    assert tests and not any("test_presentation" in t for t in tests)


def test_concordance_reads_the_threshold_from_the_project_table(tmp_path, capsys):
    from harness.cli import main

    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.t3d-audit.thresholds]\nmin_presentation_agreement = 0.9\n'
                      '[tool.t3d-audit.thresholds.overrides]\n"preset-*" = { min_presentation_agreement = 0.1 }\n')
    argv = ["concordance", "--evaluator", "preset-tiling", "--presets", "mate3d,3dcodebench", "--probes", "tiled",
            "--bootstrap", "50", "--json", "--config", str(config)]  # fmt: skip
    assert main(argv) == 0  # the override lets the grid-preferring evaluator pass
    (result,) = json.loads(capsys.readouterr().out)["presentation_probes"]["results"]
    assert result["threshold"] == 0.1 and result["passed"] and result["agreement"] < 0.8
    config.write_text("[tool.t3d-audit.thresholds]\nmin_presentaton_agreement = 0.9\n")
    assert main(argv) != 0
    assert "min_presentation_agreement" in capsys.readouterr().err  # a typo is named, one line
