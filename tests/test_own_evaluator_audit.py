"""Own scoring code through the whole audit: a Scorer registered in a project's conftest is
selected, measured, summarised and carded like a built-in evaluator, with one worker and two;
the Python API's audit() reads the same run back as the fixtures' typed summaries."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

from tests._audit_project import (
    BOX_RENDERER_CONFTEST,
    COLORSTAT_CONFTEST,
    make_project,
    report_dir,
    run_audit,
)

pytest_plugins = ["pytester"]
pytest.importorskip("xdist", reason="pytest-xdist runs the two-worker audit")

CONFTEST = '''
from harness.evaluators import Scorer, register
from harness.testing import BoxRasterizer


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


@register
class ColorStat(Scorer):
    """Saturation of the render (max - min channel), in [0, 1]; the caption is ignored."""
    name = "colorstat"
    version = "1"
    score_range = (0.0, 1.0)
    needs_text = False
    batch_size = 8

    def score_batch(self, images, texts):
        return [float((im.max(axis=2) - im.min(axis=2)).mean() / 255) for im in images]


@register
class ObjectCount(Scorer):
    """Objects in the (probe-edited) scene: a scene-input scorer, never rendered."""
    name = "objectcount"
    input = "scene"
    needs_text = False

    def score_batch(self, items, texts):
        return [float(len(item.scene.objects)) for item in items]


@register
class BrokenStat(Scorer):
    """Fails on every batch (a failure is recorded, never a score)."""
    name = "brokenstat"
    score_range = (0.0, 1.0)

    def score_batch(self, images, texts):
        raise ValueError("no model here")
'''


def _declared_hash(evaluator_id: str, conftest: Path) -> str:
    import importlib.util

    from harness.evaluators import registry

    # the project's own conftest file, loaded as pytest loads it: a Scorer's identity includes
    # the sha256 of the file that defines it
    name = f"t3d_declared_{conftest.parent.name}"
    spec = importlib.util.spec_from_file_location(name, conftest)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an imported conftest is: its classes' source file is found
    spec.loader.exec_module(module)
    try:
        return registry.get(evaluator_id).identity_hash
    finally:
        registry.unregister("colorstat")
        registry.unregister("brokenstat")
        registry.unregister("objectcount")
        sys.modules.pop(name, None)


def _project(pytester):
    root = make_project(pytester)
    (root / "conftest.py").write_text(CONFTEST)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_conftest_scorer_is_audited_with_a_card(pytester, workers):
    root = _project(pytester)
    result = run_audit(pytester, workers, "--audit-evaluators=colorstat,brokenstat,objectcount", "-n", workers)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    report = report_dir(root, workers)
    summary = json.loads((report / "summary.json").read_text())
    ok = summary["evaluators"]["colorstat"]
    assert ok["failed"] == 0 and ok["peak_rho"] is not None and math.isfinite(ok["peak_rho"])
    broken = summary["evaluators"]["brokenstat"]
    assert broken["failed_share"] == 1.0
    card = json.dumps(json.loads((report / "cards" / "colorstat.json").read_text()))
    assert _declared_hash("colorstat", root / "conftest.py") in card  # the card records the declared identity
    from harness.protocol.records import read_records

    scores = read_records(report / "scores" / "brokenstat.csv")
    assert set(scores["status"]) == {"failed"}
    assert scores["error"].str.contains("ValueError: no model here").all()
    assert scores["score"].isna().all()
    counts = read_records(report / "scores" / "objectcount.csv")
    assert set(counts["status"]) == {"ok"}, set(counts["error"])
    assert (report / "cards" / "objectcount.json").is_file()
    # keep_half removes objects: the scene scorer sees the edited scene
    assert summary["evaluators"]["objectcount"]["discrimination"]["keep_half"] == 1.0
    if workers == "0":
        _compare_and_rank(report)


def _compare_and_rank(report):
    """compare (API) and leaderboard take the run like any other."""
    from harness.api import compare
    from harness.report.ranking import build_leaderboard

    same = compare(report, report, pairs=[("colorstat", "colorstat")], bootstrap=50)
    assert same.passed and same.document["pairs"][0]["candidate_evaluator"] == "colorstat"
    assert same.document["pairs"][0]["verdicts"]["regression"] == 0
    board = build_leaderboard([report])
    assert {r.evaluator for r in board.rows} == {"colorstat", "brokenstat", "objectcount"}
    assert board.rows[-1].evaluator == "brokenstat"  # undefined peak rho ranks last


@pytest.mark.slow
def test_the_api_audit_returns_the_typed_summaries(pytester):
    root = _project(pytester)
    (root / "own_plugin.py").write_text(CONFTEST)
    script = root / "run_api.py"
    script.write_text(
        "import sys, json\n"
        "sys.path.insert(0, '.')\n"
        "import own_plugin  # registers the scorer in this process\n"
        "from harness.api import audit\n"
        f"run = audit(evaluators=['colorstat'], profile='smoke', scenes={str(root / 'scenes')!r},\n"
        "            report_dir='api-reports', cache_dir='api-cache',\n"
        "            pytest_args=['-p', 'own_plugin', '--audit-bootstrap=20'])\n"
        "s = run.summary('colorstat')\n"
        "print(json.dumps({'type': type(s).__name__, 'panel': type(run.panel).__name__,\n"
        "                  'peak_rho': s.peak_rho, 'exit': run.exit_code, 'report': str(run.report)}))\n"
    )
    done = pytester.run(sys.executable, str(script), timeout=300)
    assert done.ret == 0, done.stdout.str()[-3000:] + done.stderr.str()[-3000:]
    out = json.loads(done.outlines[-1])
    assert (out["type"], out["panel"]) == ("EvaluatorSummary", "PanelSummary")
    summary = json.loads((root / out["report"] / "summary.json").read_text())
    assert out["peak_rho"] == pytest.approx(summary["evaluators"]["colorstat"]["peak_rho"])


HOOK_CONFTEST = BOX_RENDERER_CONFTEST + COLORSTAT_CONFTEST


@pytest.mark.slow
def test_a_scorer_returned_by_the_hook_is_built_and_scored(pytester):
    root = make_project(pytester)
    (root / "conftest.py").write_text(HOOK_CONFTEST)
    result = run_audit(pytester, "hook", "--audit-evaluators=colorstat", "-n", "0")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    summary = json.loads((report_dir(root, "hook") / "summary.json").read_text())
    assert summary["evaluators"]["colorstat"]["failed"] == 0


ENTRY_MODULE = '''
from harness.evaluators import Scorer


class GreenShare(Scorer):
    """Mean green channel of the render, in [0, 1]."""
    name = "greenshare"
    score_range = (0.0, 1.0)
    needs_text = False

    def score_batch(self, images, texts):
        return [float(im[..., 1].mean() / 255) for im in images]
'''

RENDERER_ONLY = BOX_RENDERER_CONFTEST


@pytest.mark.slow
def test_an_entry_point_scorer_is_audited_by_two_workers(pytester, monkeypatch):
    root = make_project(pytester)
    (root / "conftest.py").write_text(RENDERER_ONLY)
    site = root / "site"
    dist = site / "greenshare_pkg-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "greenshare_pkg.py").write_text(ENTRY_MODULE)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: greenshare-pkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[t3d_audit.evaluators]\ngreenshare = greenshare_pkg:GreenShare\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    result = run_audit(pytester, "ep", "--audit-evaluators=greenshare", "-n", "2")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    report = report_dir(root, "ep")
    summary = json.loads((report / "summary.json").read_text())
    assert summary["evaluators"]["greenshare"]["failed"] == 0
    assert (report / "cards" / "greenshare.json").is_file()
