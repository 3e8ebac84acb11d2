"""An audit of imported splat scenes leaves them out of the lighting checks, scene by scene
(pytester, the real audit suite with numpy evaluators and the box rasterizer; ``-n 0`` and
``-n 2``): no lighting rows for splat scenes, the other scenes' lighting checks run, the
terminal, the manifest and every card say how many were left out, and ``validate`` accepts
the report."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from harness.cli import main
from tests._audit_project import CONFTEST, LENIENT, report_dir, run_audit
from tests._splat_scenes import splat_set

pytest_plugins = ["pytester"]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_splat_scenes_have_no_lighting_effect_only_not_applicable(tmp_path, pytester, workers):
    from harness.core.paths import REPO_ROOT
    from harness.protocol.records import read_records

    scenes = splat_set(tmp_path)
    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    (pytester.path / "conftest.py").write_text(CONFTEST)
    (pytester.path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["audit_tests"]\n'
        '[tool.t3d-audit]\nprofile = "smoke"\nevaluators = ["tiny-*"]\nbootstrap = 20\n'
        f"[tool.t3d-audit.thresholds]\n{LENIENT}"
    )
    result = run_audit(pytester, workers, f"--audit-scenes={scenes}", "-n", workers, "-rs", "-v")
    assert result.ret == 0, result.stdout.str()[-3000:] + result.stderr.str()[-2000:]
    out = result.stdout.str()
    assert "failed" not in out.splitlines()[-1]
    # the splat scenes are left out of the lighting checks only: those run on the mesh scenes
    # (one splat generator used to skip every lighting check of the whole set), and say so
    ran = re.findall(r"(?:PASSED|FAILED) audit_tests/\S+\[tiny-grid-lighting\]"
                     r"|audit_tests/\S+\[tiny-grid-lighting\] (?:PASSED|FAILED)", out)
    assert ran, out[-3000:]
    assert "t3d-audit: lighting checks leave out 2 of 4 scene(s): 3D Gaussian splats" in out
    # ranking generators by lighting leaves one generator: not applicable, not a failure
    assert "not applicable: ranking generators by lighting needs two; it cannot change 2 of 4 " \
        "scene(s) (3D Gaussian splats), which leaves 1 generator" in out
    report = report_dir(pytester.path, workers)
    manifest = json.loads((report / "manifest.json").read_text())
    options = manifest["options"]
    assert options["factors_not_applicable"] == {"gen-gs/p1": ["lighting"], "gen-gs/p2": ["lighting"]}
    assert options["card_facts"]["scenes"]["factors_not_applicable"] == {"lighting": 2}
    records = read_records(report / "scores" / "tiny-grid.csv")
    lit = records[records["factor"] == "lighting"]
    assert set(lit["generator"]) == {"gen-mesh"} and len(lit) > 0
    for card in (report / "cards").glob("*.json"):
        doc = json.loads(card.read_text())
        missing = doc["released_or_missing_evidence"]["known_missing"]
        assert any(m.startswith("lighting effect: not applicable to 2 scene(s)") for m in missing)
        # the conventions each import applied are on the card
        assert doc["scene_artifact_source"]["import_conventions"] == [
            "obj: up y, front +z, unit m (2 scenes)",
            "ply splats: up y, front +z, unit m (2 scenes)",
        ]
        assert main(["card", "validate", str(card)]) == 0
    assert main(["validate", str(report)]) == 0
    # report.html says so too, beside the tables whose lighting statistics leave those scenes out
    page = (report / "report.html").read_text(encoding="utf-8")
    assert 'data-factor="lighting">lighting: not applicable to 2 scene(s) of 3D Gaussian splats' in page
