"""The render commands: plan (fast), render and contact-sheet (slow, tiny)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from harness.cli import main
from tests._render_helpers import box_scene, write_box_assets


def _scene_file(root: Path) -> Path:
    write_box_assets(root)
    doc = box_scene("test-room").to_dict()
    path = root / "scenes" / "room.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_plan_json(capsys):
    assert main(["plan", "--profile", "paper", "--prompts", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["per_scene"].values()) == {39}
    assert out["renders"] == 39 * out["scenes"] == len(out["jobs"])


def test_render_rejects_caption_factor(tmp_path, capsys):
    path = _scene_file(tmp_path)
    code = main(["render", str(path), "--root", str(tmp_path), "--factor", "template",
                 "--level", "x", "--out", str(tmp_path / "o.png")])
    assert code == 2 and "changes the caption" in capsys.readouterr().err


@pytest.mark.slow
def test_render_and_contact_sheet(tmp_path, capsys):
    pytest.importorskip("bpy")
    path = _scene_file(tmp_path)
    cache = tmp_path / "cache"
    out = tmp_path / "bg.png"
    args = ["--root", str(tmp_path), "--cache-dir", str(cache), "--samples", "1"]
    assert main(["render", str(path), "--factor", "resolution", "--level", "196",
                 "--profile", "smoke", *args, "--out", str(tmp_path / "r.png")]) == 0
    assert Image.open(tmp_path / "r.png").size == (196, 196)
    assert main(["render", str(path), "--factor", "background", "--level", "red",
                 "--profile", "smoke", *args, "--out", str(out)]) == 0
    rgb = np.asarray(Image.open(out))
    assert rgb.shape == (224, 224, 3) and rgb[0, 0].tolist() == [255, 0, 0]
    sheet = tmp_path / "sheet.png"
    assert main(["contact-sheet", str(path), "--profile", "smoke", "--size", "32", "--tile", "32",
                 *args, "--out", str(sheet)]) == 0
    w, h = Image.open(sheet).size
    assert h == 6 * (32 + 14) and w == 90 + 3 * 32  # 6 factor rows, at most 3 levels each
