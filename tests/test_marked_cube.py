"""The marked cube (``harness/scenes/marked_cube.py``): its panels sit on the sides they name,
and the panel classifier counts hand-made pixels."""

from __future__ import annotations

import numpy as np

from harness.render.framing import scene_box
from harness.scenes.marked_cube import PANELS, marked_cube, panel_shares, write_assets


def test_panels_sit_on_the_sides_they_name():
    scene = marked_cube()
    centres = {o.asset.split("/")[-1][:-4]: np.asarray(o.position) for o in scene.objects}
    assert centres["red"][1] < -0.5 and centres["blue"][1] > 0.5 and centres["green"][0] > 0.5
    assert centres["yellow"][2] >= 1.0 and centres["yellow"][1] < 0  # on top, towards the front
    assert {PANELS[c][1] for c in centres} == {"body", "front", "right", "back", "top"}
    box = scene_box(scene)
    assert np.allclose(box.lo, (-0.5, -0.54, 0.0)) and np.allclose(box.hi, (0.54, 0.54, 1.04))  # no left panel


def test_write_assets_writes_one_obj_and_mtl_per_panel(tmp_path):
    write_assets(tmp_path)
    assert sorted(p.name for p in (tmp_path / "assets").iterdir()) == sorted(
        f"{n}.{ext}" for n in PANELS for ext in ("obj", "mtl"))
    assert "Kd 0.9 0.05 0.05" in (tmp_path / "assets" / "red.mtl").read_text()


def test_panel_shares_hand_counted():
    rgba = np.zeros((2, 4, 4), np.uint8)
    rgba[0] = [(200, 20, 20, 255), (20, 200, 20, 255), (20, 20, 200, 255), (200, 180, 20, 255)]
    rgba[1, :2] = (120, 120, 120, 255)  # grey body; the last two pixels are empty (alpha 0)
    rgba[1, 2:] = (255, 0, 0, 0)
    assert panel_shares(rgba) == {"red": 1 / 6, "green": 1 / 6, "blue": 1 / 6, "yellow": 1 / 6}
    assert panel_shares(np.zeros((2, 2, 4), np.uint8)) == dict.fromkeys(("red", "green", "blue", "yellow"), 0.0)
