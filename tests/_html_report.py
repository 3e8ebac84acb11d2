"""Shared by the report.html tests: a finished report of the tiny audit project (real audit
suite, box renders) and Playwright with Debian's chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.paths import REPO_ROOT
from harness.testing import write_tiny_scene_set
from tests._audit_project import CONFTEST, LENIENT, PYPROJECT

CHROMIUM = Path("/usr/bin/chromium")
STRICT = '[tool.t3d-audit.thresholds.overrides]\n"tiny-grid" = { peak_rho_max = 0.001 }\n'


def build_tiny_report(root: Path) -> Path:
    """Run the tiny audit project under ``root`` and return its one report directory."""
    shutil.copytree(REPO_ROOT / "audit_tests", root / "audit_tests")
    write_tiny_scene_set(root / "scenes")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(PYPROJECT.format(thresholds=LENIENT + STRICT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    reports = sorted(p for p in (root / "reports").iterdir() if not p.name.startswith("."))
    assert len(reports) == 1, done.stdout[-2000:] + done.stderr[-2000:]
    return reports[0]


def playwright_or_skip():
    """Playwright's sync API and Debian's chromium; skipped where absent, unless
    T3D_AUDIT_REQUIRE_BROWSER is set (.ci/run sets it)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("T3D_AUDIT_REQUIRE_BROWSER"):
            raise
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    if not CHROMIUM.is_file():
        if os.environ.get("T3D_AUDIT_REQUIRE_BROWSER"):
            pytest.fail("chromium is missing: .ci/run installs it with apt")
        pytest.skip("no /usr/bin/chromium (apt-get install chromium chromium-driver)")
    return sync_playwright
