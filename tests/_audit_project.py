"""A tiny audit project for pytester integration tests: the real audit suite, tiny scenes,
numpy evaluators and a box rasterizer (no Blender, no torch)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.core.paths import REPO_ROOT
from harness.run.options import AuditOptions
from harness.run.session import AuditSession
from harness.testing import BoxRasterizer, write_tiny_scene_set

CONFTEST = """
from harness.testing import BoxRasterizer, TinySpec


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


def pytest_audit_evaluators(config):
    return [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)]
"""

PYPROJECT = """
[tool.pytest.ini_options]
testpaths = ["audit_tests"]

[tool.t3d-audit]
profile = "smoke"
evaluators = ["tiny-*"]
scenes = "scenes"
bootstrap = 40

[tool.t3d-audit.thresholds]
{thresholds}
"""

LENIENT = """peak_rho_max = 1000.0
min_kendall_w = 0.0
max_top1_count = 6
max_best_view_inflation = 10.0
max_failed_share = 1.0
max_confirmed_reversals = 100
min_scramble_discrimination = 0.0
min_removal_discrimination = 0.0
min_worst_objects_discrimination = 0.0
max_sign_crossings = 100
max_interaction_share = 1.0
max_block_sign_crossings = 100
"""


def make_project(pytester: pytest.Pytester, extra: str = "", thresholds: str = LENIENT) -> Path:
    """Copy the audit suite next to tiny scenes; ``extra`` is appended to the thresholds table."""
    root = pytester.path
    shutil.copytree(REPO_ROOT / "audit_tests", root / "audit_tests")
    write_tiny_scene_set(root / "scenes")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(PYPROJECT.format(thresholds=thresholds + extra))
    return root


def report_dirs(reports: Path) -> list[Path]:
    return sorted(p for p in reports.iterdir() if not p.name.startswith("."))


def run_audit(pytester: pytest.Pytester, tag: str, *args: str) -> pytest.RunResult:
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests",
        "-p",
        "no:cacheprovider",
        "--audit-cache-dir",
        str(root / f"cache-{tag}"),
        "--audit-report-dir",
        str(root / f"reports-{tag}"),
        *args,
        timeout=300,
    )


def report_dir(root: Path, tag: str) -> Path:
    found = [p for p in (root / f"reports-{tag}").iterdir() if not p.name.startswith(".")]
    assert len(found) == 1, found
    return found[0]


def comparable_files(report: Path) -> dict[str, bytes]:
    """Every report file's bytes; the manifest and report.html without ``source`` (HEAD may
    move mid-test)."""
    out = {}
    for path in sorted(p for p in report.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "manifest.json":
            doc = json.loads(data)
            doc.pop("source")
            data = json.dumps(doc, sort_keys=True).encode()
        if path.name == "report.html":
            data = re.sub(rb'<span id="prov-source">.*?</span>', b"", data)
        out[path.relative_to(report).as_posix()] = data
    return out


def tiny_session(tmp_path: Path, evaluators: list, **over) -> AuditSession:
    """An in-process audit session on tiny scenes (written once under ``tmp_path``), the box
    rasterizer and the given tiny evaluators; ``over`` replaces AuditOptions fields."""
    scenes = tmp_path / "scenes"
    if not scenes.exists():
        write_tiny_scene_set(scenes)
    fields = {"profile": "smoke", "evaluators": ("tiny-*",), "scenes": scenes,
              "report_dir": tmp_path / "reports", "cache_dir": tmp_path / "cache", "bootstrap": 20}
    options = AuditOptions(**{**fields, **over})
    return AuditSession(options, renderer_factory=lambda _: BoxRasterizer(), extra_evaluators=evaluators)


#: a project conftest that renders with the box rasterizer (no Blender)
BOX_RENDERER_CONFTEST = '''
from harness.testing import BoxRasterizer


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()
'''

#: a project conftest offering one image Scorer, ``colorstat``, through the evaluators hook
COLORSTAT_CONFTEST = '''
from harness.evaluators import Scorer


class ColorStat(Scorer):
    """Saturation of the image (max - min channel), in [0, 1]; the caption is ignored."""
    name = "colorstat"
    score_range = (0.0, 1.0)
    needs_text = False

    def score_batch(self, images, texts):
        return [float((im.max(axis=2) - im.min(axis=2)).mean() / 255) for im in images]


def pytest_audit_evaluators(config):
    return [ColorStat]
'''

#: a project pyproject for the bundled audit suite: 50 bootstrap draws, ``{thresholds}`` to fill
THRESHOLDS_PYPROJECT = """
[tool.pytest.ini_options]
testpaths = ["audit_tests"]

[tool.t3d-audit]
bootstrap = 50

[tool.t3d-audit.thresholds]
{thresholds}
"""


def baseline_image_and_views(session: AuditSession) -> tuple[Any, list[Any]]:
    """The scored image of the session plan's first c0 row and the rgb arrays of its views
    (an image evaluator's input under a multi-view policy, and what it was made from)."""
    from harness.measure.images import ImageSource

    row = next(r for r in session.inputs.plan.rows if r.factor == "baseline")
    source = ImageSource(session.inputs.plan, session.inputs.renderer)
    (image,) = source.scored_images(row.image)
    return image, [source.rgb(v) for v in row.image.view_keys()]

