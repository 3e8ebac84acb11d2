"""The audit suite end to end on tiny scenes and tiny numpy evaluators (pytester subprocesses).

No Blender, no torch: the project's conftest swaps in ``harness.testing.BoxRasterizer`` and
``TinySpec`` evaluators through the ``pytest_audit_*`` hooks. Checks: identical reports with
``-n 0`` and ``-n 2``; no secret from the environment in any report file; a planted threshold
fails the run with a readable message; a run whose workers are killed mid-run resumes from the
caches on the next run and gives the same outputs as an uninterrupted run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.paths import REPO_ROOT
from tests._audit_project import comparable_files, make_project, report_dir, run_audit

pytest_plugins = ["pytester"]

SECRET = "sk-t3d-fake-secret-7f3a9c0d1e2b"


def card_ids(report: Path) -> dict[str, str]:
    return {p.stem: json.loads(p.read_text())["card_id"] for p in sorted((report / "cards").glob("*.json"))}


def test_serial_and_parallel_runs_write_identical_reports_without_secrets(pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    root = make_project(pytester)
    serial = run_audit(pytester, "n0", "-n", "0")
    parallel = run_audit(pytester, "n2", "-n", "2", "--dist", "loadgroup")
    for result in (serial, parallel):
        result.stdout.fnmatch_lines(["*t3d-audit summary*", "*tiny-grid*", "*report: *reports-*"])
    a, b = report_dir(root, "n0"), report_dir(root, "n2")
    assert a.name == b.name  # the run id derives from the inputs only
    assert card_ids(a) == card_ids(b)
    assert all(v.startswith("ecc-v1-sha256:") for v in card_ids(a).values())
    files_a, files_b = comparable_files(a), comparable_files(b)
    assert sorted(files_a) == sorted(files_b)
    assert any(k.startswith("tables/") and k.endswith(".md") for k in files_a)
    for name in files_a:
        assert files_a[name] == files_b[name], f"{name} differs between -n 0 and -n 2"
    # the validate command accepts both reports
    from harness.report.validation import validate_report

    assert validate_report(a) == []
    # ... and, recomputed from the raw scores and the run options, gives the same files
    assert validate_report(b, deep=True) == []
    # no secret from the environment in any file of any report or cache
    for folder in (root / "reports-n0", root / "reports-n2"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path


def docs_example() -> str:
    """The worked example of docs/writing-an-audit.md (its first Python block)."""
    text = (REPO_ROOT / "docs" / "writing-an-audit.md").read_text()
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def test_planted_threshold_fails_with_readable_message(pytester):
    root = make_project(
        pytester,
        extra='[tool.t3d-audit.thresholds.custom]\nmax_lighting_dispersion = 0.5\n'
        '[tool.t3d-audit.thresholds.overrides]\n"tiny-grid" = { peak_rho_max = 0.001 }\n',
    )
    (root / "audit_tests" / "test_lighting_budget.py").write_text(docs_example())
    result = run_audit(pytester, "planted", "-n", "0")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*test_rho?tiny-grid-background?*"
            " - ?[[]background[]] of tiny-grid * (95% CI [[]*, *[]]*), must be ? 0.001 (peak_rho_max): fails"
            " [[]card ecc-v1-sha256:*[]]",
        ]
    )
    outcomes = json.loads((report_dir(pytester.path, "planted") / "results.json").read_text())["results"]
    by_test = {r["test"]: r for r in outcomes}
    assert by_test["audit_tests/test_configuration_ratio.py::test_rho[tiny-grid-background]"]["outcome"] == "failed"
    assert by_test["audit_tests/test_configuration_ratio.py::test_rho[tiny-pairs-background]"]["outcome"] == "passed"
    # the documentation's worked example is collected per evaluator and gates like the rest
    example = by_test["audit_tests/test_lighting_budget.py::test_lighting_dispersion[tiny-grid]"]
    assert example["outcome"] == "passed"
    assert example["checks"][0]["threshold_name"] == "max_lighting_dispersion"


def test_killed_workers_resume_from_caches_with_identical_outputs(pytester, monkeypatch):
    root = make_project(pytester)
    clean = run_audit(pytester, "clean", "-n", "0")
    clean.stdout.fnmatch_lines(["*0 pairs from the score cache*"])
    monkeypatch.setenv("T3D_TINY_KILL_AFTER", "3")  # each process dies at its 3rd scoring call
    # no worker restarts: xdist's loadgroup rescheduling after a crash is not robust, and a run
    # whose workers all died is the harshest case for resuming anyway
    killed = run_audit(pytester, "resume", "-n", "2", "--dist", "loadgroup", "--max-worker-restart", "0")
    assert killed.ret != 0
    assert "crashed while running" in killed.stdout.str()
    monkeypatch.delenv("T3D_TINY_KILL_AFTER")
    rerun = run_audit(pytester, "resume", "-n", "2", "--dist", "loadgroup")
    summary_line = [line for line in rerun.stdout.lines if "pairs from the score cache" in line]
    assert summary_line, rerun.stdout.str()[-2000:]
    cached = int(summary_line[0].split("pairs scored, ")[1].split(" pairs from the score cache")[0])
    assert cached > 0, summary_line  # work done before the kill was reused
    a, b = report_dir(root, "clean"), report_dir(root, "resume")
    assert comparable_files(a) == comparable_files(b)
