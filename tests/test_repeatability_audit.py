"""The repeatability check end to end: planted-jitter (seeded per-call noise) fails it and only
it, every other planted member and the tiny evaluators pass; a warm rerun measures nothing
again; the card and summary.json carry it (pytester runs, -n 0 and -n 2)."""

from __future__ import annotations

import json

import pytest

from tests._audit_project import LENIENT, report_dirs

pytest_plugins = ["pytester"]

CONFTEST = '''
from harness.evaluators.reference.specs import repeatability_planted_specs
from harness.testing import BoxRasterizer, TinySpec


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


def pytest_audit_evaluators(config):
    return [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False), *repeatability_planted_specs()]
'''

EVALUATORS = "tiny-grid,tiny-pairs,planted-jitter,planted-robust,planted-pitch,planted-bow"

PYPROJECT = """
[tool.pytest.ini_options]
testpaths = ["audit_tests"]

[tool.t3d-audit]
profile = "smoke"
bootstrap = 40

[tool.t3d-audit.thresholds]
{thresholds}
"""


def _project(pytester, extra: str = ""):
    """The audit suite on the bundled scenes (the planted members read their prompt specs),
    images from the box rasterizer."""
    import shutil

    from harness.core.paths import REPO_ROOT

    root = pytester.path
    shutil.copytree(REPO_ROOT / "audit_tests", root / "audit_tests")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(PYPROJECT.format(thresholds=LENIENT + extra))
    return root


def _run(pytester, workers: str, *extra: str):
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests/test_repeatability.py", "-p", "no:cacheprovider", "-n", workers,
        "--audit-cache-dir", str(root / "cache"), f"--audit-evaluators={EVALUATORS}",
        "--audit-report-dir", str(root / "reports"), "-rA", *extra, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_planted_jitter_fails_the_repeatability_check_and_only_it(pytester, workers):
    root = _project(pytester)
    result = _run(pytester, workers)
    failed = sorted(line.split("::")[-1].split(" ")[0] for line in result.outlines if line.startswith("FAILED"))
    passed = sorted(line.split("::")[-1].split(" ")[0] for line in result.outlines if line.startswith("PASSED"))
    assert failed == ["test_repeatability[planted-jitter]"], result.outlines[-30:]
    assert len(passed) == 5, result.outlines[-30:]
    assert "repeatability[batch of N, " in result.stdout.str()

    report = report_dirs(root / "reports")[-1]
    card = json.loads((report / "cards" / "planted-jitter.json").read_text())
    from harness.cards.card_format import validate_card

    validate_card(card)
    rep = card["repeatability"]
    assert rep["repeatable"] is False and rep["max_abs_diff"] > 0 and rep["tolerance"] == 0.0
    assert rep["where"]["pass"] == "batch of N" and rep["batch_sizes"] == [1, 4]
    robust = json.loads((report / "cards" / "planted-robust.json").read_text())["repeatability"]
    assert robust["repeatable"] is True and robust["max_abs_diff"] == 0.0 and robust["where"] is None
    summary = json.loads((report / "summary.json").read_text())
    assert summary["evaluators"]["planted-jitter"]["repeatability"]["max_abs_diff"] == rep["max_abs_diff"]
    assert "repeatability" in (report / "report.html").read_text()

    # warm: the measurements come from the cache (no fresh process is started again)
    cached = sorted((root / "cache" / "repeatability").glob("*.json"))
    assert len(cached) == 6
    stamps = [p.stat().st_mtime_ns for p in cached]
    again = _run(pytester, workers)
    assert [line for line in again.outlines if line.startswith("FAILED")] == \
        [line for line in result.outlines if line.startswith("FAILED")]
    assert [p.stat().st_mtime_ns for p in cached] == stamps


@pytest.mark.slow
def test_a_tolerance_set_like_any_threshold_passes_the_noisy_member(pytester):
    _project(pytester, extra="max_repeatability_diff = 1.0\n")
    result = _run(pytester, "0")
    assert not [line for line in result.outlines if line.startswith("FAILED")], result.outlines[-30:]


@pytest.mark.slow
def test_a_scorer_defined_in_a_conftest_is_rebuilt_in_the_fresh_process(pytester):
    from tests._audit_project import COLORSTAT_CONFTEST, make_project

    root = make_project(pytester)
    (root / "conftest.py").write_text(COLORSTAT_CONFTEST + "\n\ndef pytest_audit_renderer(config, cache_dir):\n"
                                      "    from harness.testing import BoxRasterizer\n\n    return BoxRasterizer()\n")
    result = pytester.runpytest_subprocess(
        "audit_tests/test_repeatability.py", "-p", "no:cacheprovider", "-n", "0", "--audit-evaluators=colorstat",
        "--audit-cache-dir", str(root / "cache"), "-rA", timeout=300,
    )  # fmt: skip
    result.stdout.fnmatch_lines(["PASSED*test_repeatability?colorstat?*"])
    (report,) = report_dirs(root / "reports")
    card = json.loads((report / "cards" / "colorstat.json").read_text())
    assert card["repeatability"]["error"] == "" and card["repeatability"]["max_abs_diff"] == 0.0
