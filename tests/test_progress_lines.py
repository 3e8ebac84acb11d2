"""Progress lines of the long phases of an audit that measures (no warm step): each image
evaluator's renders, from the lone process and from xdist workers alike, in ``pytest`` output
and in ``t3d-audit audit --no-warm`` output (pytester subprocesses, the interval near 0)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from harness.core.paths import REPO_ROOT
from tests._audit_project import make_project, run_audit

pytest_plugins = ["pytester"]

# a line per render: the smallest interval T3D_AUDIT_PROGRESS_INTERVAL takes (it must be > 0)
FAST = "0.001"
LINE = re.compile(r"t3d-audit: measuring (tiny-grid|tiny-pairs): fetched (\d+)/(\d+) renders \(\d+%\), "
                  r"\d\d:\d\d elapsed(, about \d\d:\d\d left)?, \d+ rendered now")  # fmt: skip


def progress_counts(text: str) -> dict[str, list[tuple[int, int]]]:
    """Each evaluator's (done, total) progress lines, in order."""
    found: dict[str, list[tuple[int, int]]] = {}
    for match in LINE.finditer(text):
        found.setdefault(match[1], []).append((int(match[2]), int(match[3])))
    return found


def check_progress(text: str) -> None:
    counts = progress_counts(text)
    assert set(counts) == {"tiny-grid", "tiny-pairs"}, text[-3000:]
    for lines in counts.values():
        total = lines[0][1]
        assert total > 1 and all(t == total for _, t in lines)
        assert len(lines) > 1 and lines[-1][0] == total  # more than the last line: progress, not a summary
        assert [n for n, _ in lines] == sorted(n for n, _ in lines)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_measuring_pytest_run_prints_progress_lines(pytester, monkeypatch, workers):
    # regression: a run without the warm step rendered for minutes with no progress line
    make_project(pytester)
    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", FAST)
    result = run_audit(pytester, f"progress{workers}", "-n", workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    check_progress(result.stderr.str())


def test_the_audit_command_without_warm_prints_progress_lines(pytester):
    root = make_project(pytester)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "T3D_AUDIT_PROGRESS_INTERVAL": FAST,
           "T3D_AUDIT_CACHE_DIR": str(root / "cache")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "harness", "audit", "--profile", "smoke", "--no-warm", "--workers", "2",
         "--report-dir", str(root / "reports"), "--", "-p", "no:cacheprovider"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    check_progress(done.stdout + done.stderr)
