"""A user scorer that misbehaves (exits, hangs, raises while built, returns what is not a
score) becomes failed records with scrubbed reasons, or a one-line error naming it; the gate
never passes without a verdict."""

from __future__ import annotations

import json

import pytest

from tests._audit_project import make_project, report_dirs

pytest_plugins = ["pytester"]

KEY = "sk-live-7Hq2Zx9PfW3mLk8RvT4n"

CONFTEST = '''
import os, time
from harness.evaluators import Scorer
from harness.testing import BoxRasterizer, TinySpec


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


class Misbehaving(Scorer):
    name = "misbehaving"
    score_range = (0.0, 1.0)
    needs_text = False

    def score_batch(self, images, texts):
        how = os.environ["MISBEHAVE"]
        if how == "exit":
            raise SystemExit(0)
        if how == "sleep":
            time.sleep(600)
        if how == "key":
            key = os.environ["MY_SERVICE_API_KEY"]
            raise RuntimeError(f"auth failed for {key} ({key[::-1]})")
        return [0.5] * len(images)


def pytest_audit_evaluators(config):
    return [TinySpec("tiny-grid"), Misbehaving]
'''


def _run(pytester, monkeypatch, how, workers, *extra):
    root = make_project(pytester)
    (root / "conftest.py").write_text(CONFTEST)
    monkeypatch.setenv("MISBEHAVE", how)
    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    monkeypatch.setenv("T3D_AUDIT_SCORER_DEADLINE", "2")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", workers, "--audit-gate", "--audit-cache-dir", str(root / "cache"),
        "--audit-evaluators=tiny-grid,misbehaving", *extra, timeout=240,
    )
    return root, result


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("how", ["exit", "sleep", "key"])
def test_a_misbehaving_scorer_fails_its_records_and_the_gate(pytester, monkeypatch, how, workers):
    root, result = _run(pytester, monkeypatch, how, workers)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out[-3000:]
    assert "INTERNALERROR" not in out and KEY not in out and KEY[::-1] not in out
    (run,) = report_dirs(root / "reports")
    scores = (run / "scores" / "misbehaving.csv").read_text()
    assert KEY not in scores and KEY[::-1] not in scores and KEY[3:15] not in scores
    summary = json.loads((run / "summary.json").read_text())["evaluators"]
    assert summary["misbehaving"]["failed_share"] == 1.0
    assert summary["tiny-grid"]["peak_rho"] is not None
    if how == "sleep":
        assert "deadline" in scores


BAD_HOOK = '''
from harness.evaluators import Scorer
from harness.testing import BoxRasterizer, TinySpec


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


class NanRange(Scorer):
    name = "nan-range"
    score_range = (float("nan"), 1.0)

    def score_batch(self, images, texts):
        return [0.5] * len(images)


class Unbuildable(Scorer):
    name = "unbuildable"

    def __init__(self, device="auto"):
        import os
        raise SystemExit(f"cannot log in with {os.environ['MY_SERVICE_API_KEY']}")

    def score_batch(self, images, texts):
        return [0.5] * len(images)


def pytest_audit_evaluators(config):
    import os
    which = os.environ["BAD_HOOK"]
    if which == "id":
        return [TinySpec("tiny-grid"), TinySpec("bad id/../x")]
    if which == "range":
        return [TinySpec("tiny-grid"), NanRange]
    return [TinySpec("tiny-grid"), Unbuildable]
'''


@pytest.mark.slow
@pytest.mark.parametrize("which", ["id", "range", "init"])
def test_a_bad_hook_or_unbuildable_scorer_is_one_line_naming_it(pytester, monkeypatch, which):
    root = make_project(pytester)
    (root / "conftest.py").write_text(BAD_HOOK)
    monkeypatch.setenv("BAD_HOOK", which)
    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "0", "--audit-gate", "--audit-cache-dir", str(root / "cache"),
        "--audit-evaluators=tiny-grid,unbuildable" if which == "init" else "--audit-evaluators=tiny-grid",
        timeout=240,
    )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret not in (pytest.ExitCode.OK, pytest.ExitCode.INTERNAL_ERROR), out[-3000:]
    assert "INTERNALERROR" not in out and "Traceback" not in out and KEY not in out, out[-3000:]
    name = {"id": "bad id/../x", "range": "nan-range", "init": "unbuildable"}[which]
    assert name in out


def test_the_gate_never_passes_without_a_verdict(pytester):
    """Regression: under --audit-gate a run whose audit wrote no report exited 0."""
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0", "--audit-gate",
                                           "--audit-cache-dir", str(pytester.path / "cache"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*no report was written*no verdict*"])


@pytest.mark.slow
def test_t3d_audit_audit_gate_fails_when_a_scorer_exits(pytester, monkeypatch):
    """Regression: ``t3d-audit audit --gate`` exited 0 with no report when a scorer raised
    SystemExit(0)."""
    import os
    import subprocess
    import sys

    from harness.core.paths import REPO_ROOT

    root = make_project(pytester)
    (root / "conftest.py").write_text(CONFTEST)
    env = {**os.environ, "MISBEHAVE": "exit", "MY_SERVICE_API_KEY": KEY,
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "harness", "audit", "--gate", "--no-warm", "--profile", "smoke",
         "--workers", "0", "--evaluators", "tiny-grid,misbehaving", "--cache-dir", str(root / "cache"),
         "--", "-p", "no:cacheprovider"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert "verdict FAIL" in out and KEY not in out
