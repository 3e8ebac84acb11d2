"""The audit's search reads a sealed trial log (docs/search.md "Trial log and resuming"): one
trial line appended to the cached log used to flip ``test_worst_case`` from FAIL to PASS under
the same run id (the line claimed c0 was the worst configuration, so the held-out measurement
was c0 against itself). The tampered log is now discarded, counted and measured afresh."""

from __future__ import annotations

import json
import shutil
import tomllib

import pytest

from harness.core.hashing import canonical_json
from harness.core.paths import REPO_ROOT
from tests._audit_project import THRESHOLDS_PYPROJECT

pytest_plugins = ["pytester"]

CONFTEST = '''
def pytest_audit_evaluators(config):
    from harness.evaluators.reference.specs import search_planted_specs

    return search_planted_specs()
'''


def _project(pytester: pytest.Pytester) -> None:
    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    table = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    gates = table["tool"]["t3d-audit"]["thresholds"]
    lines = "\n".join(f"{k} = {v!r}" for k, v in gates.items() if not isinstance(v, dict))
    (pytester.path / "pyproject.toml").write_text(THRESHOLDS_PYPROJECT.format(thresholds=lines))
    (pytester.path / "conftest.py").write_text(CONFTEST)


def _run(pytester: pytest.Pytester, workers: str) -> pytest.RunResult:
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests/test_search.py", "-p", "no:cacheprovider", "-rfs", "-n", workers,
        "--audit-profile=search-smoke", "--audit-evaluators=planted-offgrid",
        f"--audit-cache-dir={root / 'cache'}", f"--audit-report-dir={root / 'reports'}", timeout=600,
    )  # fmt: skip


def _worst_case(result: pytest.RunResult) -> str:
    lines = [line for line in result.outlines if "test_worst_case[planted-offgrid]" in line]
    return "failed" if any(line.startswith("FAILED ") for line in lines) else "passed"


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_appended_trial_line_no_longer_passes_the_worst_case_gate(pytester, workers):
    _project(pytester)
    first = _run(pytester, workers)
    assert _worst_case(first) == "failed", first.stdout.str()[-3000:]
    (log,) = (pytester.path / "cache" / "search").glob("*.jsonl")
    header = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    c0 = header["search"]["space"]["c0"]
    trials = len(log.read_text(encoding="utf-8").splitlines()) - 1
    forged = {"kind": "trial", "n": trials, "batch": 99, "point": c0, "value": 1e9, "status": "ok",
              "error": "", "seconds": 0.0}  # fmt: skip
    with open(log, "ab") as fh:
        fh.write(canonical_json(forged) + b"\n")
    second = _run(pytester, workers)
    text = second.stdout.str()
    assert _worst_case(second) == "failed", text[-3000:]
    assert "corrupt entry discarded" in text and "search 1" in text, text[-3000:]
    assert (log.parent / (log.name + ".discarded")).is_file()
    reports = sorted(p.name for p in (pytester.path / "reports").iterdir() if not p.name.startswith("."))
    assert len(reports) == 1  # the same run id both times
