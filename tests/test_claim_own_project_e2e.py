"""A claim as a new user makes it (docs/claims.md "Your own generators and evaluator"): their
generators' GLB outputs imported with ``t3d-audit import-scenes``, their own scorer offered by
their project's ``conftest.py``, ``t3d-audit claim`` run from the project folder in a fresh
process with real Blender renders, ``--out`` holding the paper block and the figures.

The GLBs are made with Blender's own exporter: "vivid" writes saturated cubes, "drab" a grey
plane; the project's scorer is the image's mean saturation, so vivid beats drab at c0 by
construction (slow: about 150 renders at 8 samples)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.paths import REPO_ROOT
from tests._audit_project import COLORSTAT_CONFTEST

pytestmark = pytest.mark.slow
pytest.importorskip("bpy", reason="the render extra (bpy) is not installed")

PYPROJECT = """
[tool.t3d-audit]
profile = "smoke"
scenes = "myset"
evaluators = ["colorstat"]
"""
VIVID = {"p1": "red_textured.glb", "p2": "green_vcol.glb", "p3": "red_draco.glb", "p4": "truck.glb"}
PROMPTS = "id,prompt\np1,a red box\np2,a green box\np3,a red crate\np4,a blue truck\n"


def _cli(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=project, env=env,
                          capture_output=True, text=True, timeout=1200, check=False)  # fmt: skip


def test_imported_glbs_and_an_own_scorer_make_a_claim_with_real_renders(tmp_path):
    glbs = tmp_path / "glbs"
    made = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "_gltf_fixtures.py"), str(glbs)],
                          capture_output=True, text=True, cwd=REPO_ROOT, check=False)  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    project = tmp_path / "project"
    for prompt, name in VIVID.items():
        for generator, source in (("vivid", name), ("drab", "plane.glb")):
            (project / "outputs" / generator).mkdir(parents=True, exist_ok=True)
            shutil.copy(glbs / source, project / "outputs" / generator / f"{prompt}.glb")
    (project / "prompts.csv").write_text(PROMPTS)
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "conftest.py").write_text(COLORSTAT_CONFTEST)

    imported = _cli(project, "import-scenes", "outputs", "--prompts", "prompts.csv", "--out", "myset")
    assert imported.returncode == 0, imported.stderr[-2000:]

    out = project / "claim-out"
    cache = tmp_path / "cache"
    claim = _cli(project, "claim", "--a", "vivid", "--b", "drab", "--presets", "mate3d", "--search-budget", "2",
                 "--flip-points", "0", "--out", str(out), "--cache-dir", str(cache), "--jobs", "2")  # fmt: skip
    assert claim.returncode == 0, claim.stderr[-3000:]
    verdict = next(line for line in claim.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: vivid beats drab under colorstat: "), verdict
    assert verdict.endswith("[not confirmable: 2 prompts (needs 6)]"), verdict

    doc = json.loads((out / "claim.json").read_text())
    assert doc["evaluator"] == "colorstat" and doc["profile"] == "smoke" and doc["scenes"] == "myset"
    assert doc["generators"] == ["vivid", "drab"] and doc["prompts"] == 2 and doc["presets"] == ["mate3d@scaled"]
    assert doc["failed"] == {"grid": 0, "presets": 0}
    means = {s["generator"]: s["mean"] for s in doc["scores"]}
    assert means["vivid"] > means["drab"] + 0.05, means  # saturated cubes against a grey plane
    pair = doc["pairs"][0]
    assert pair["evidence"]["c0"]["gap"] > 0.05
    search = pair["search"]
    assert search["ran"] and len(search["split"]["held_out"]) == 2, search
    card = json.loads((out / "card.json").read_text())
    assert card["evaluator_identity"]["evaluator_id"] == "colorstat" and card["card_id"] == doc["card_id"]
    names = {p.name for p in out.iterdir()}
    assert names >= {"claim.json", "claim.md", "claim.tex", "card.json", "claim.html", "claim_envelope.png",
                     "claim_presets.png", "claim_worst_vs_c0.png"}, names  # fmt: skip
    markdown = (out / "claim.md").read_text()
    assert "| vivid |" in markdown and "| drab |" in markdown and doc["card_id"] in markdown
    assert "data:image/png;base64," in (out / "claim.html").read_text()

    again = _cli(project, "claim", "--a", "vivid", "--b", "drab", "--presets", "mate3d", "--search-budget", "2",
                 "--flip-points", "0", "--json", "--cache-dir", str(cache))  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    warm = json.loads(again.stdout)
    assert warm["verdict"] == doc["verdict"] and warm["scores"] == doc["scores"]
