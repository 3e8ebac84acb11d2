"""A cube whose sides name themselves: which side of an asset a render shows.

The harness's assets face -y with z up. The marked cube is a 1 m grey cube (bottom centre at
the origin) with coloured panels 4 cm proud of it: red on its front (-y), green on its right
(+x), blue on its back (+y), and a yellow tab on its top near the front edge. A render's
panel colours (:func:`panel_shares`) say which side a camera sees and, from above, which way
the image is turned. The preset contact sheets (``scripts/preset_sheets.py``) and the preset
front tests render it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.scenes.model import SCENE_SCHEMA_V2, Room, Scene, SceneObject

#: panel name → (asset colour as linear RGB 0..1, side of the cube it marks)
PANELS: dict[str, tuple[tuple[float, float, float], str]] = {
    "grey": ((0.5, 0.5, 0.5), "body"),
    "red": ((0.9, 0.05, 0.05), "front"),
    "green": ((0.05, 0.8, 0.1), "right"),
    "blue": ((0.05, 0.1, 0.9), "back"),
    "yellow": ((0.9, 0.8, 0.05), "top"),
}
#: a channel is a panel's when it is at least this many times the others (+1 against zero)
DOMINANCE = 1.6

#: a unit box standing on z = 0 as an OBJ with one material named ``{name}``
BOX_OBJ = """mtllib {name}.mtl
o {name}
v -0.5 -0.5 0
v 0.5 -0.5 0
v 0.5 0.5 0
v -0.5 0.5 0
v -0.5 -0.5 1
v 0.5 -0.5 1
v 0.5 0.5 1
v -0.5 0.5 1
usemtl {name}
f 1 4 3 2
f 5 6 7 8
f 1 2 6 5
f 2 3 7 6
f 3 4 8 7
f 4 1 5 8
"""


def write_assets(root: Path) -> None:
    """``root/assets/<panel>.obj`` (+ ``.mtl``): unit boxes, bottom centre at the origin."""
    folder = root / "assets"
    folder.mkdir(parents=True, exist_ok=True)
    for name, ((r, g, b), _) in PANELS.items():
        (folder / f"{name}.obj").write_text(BOX_OBJ.format(name=name), encoding="utf-8")
        (folder / f"{name}.mtl").write_text(f"newmtl {name}\nKd {r} {g} {b}\n", encoding="utf-8")


def marked_cube(scene_id: str = "marked.cube") -> Scene:
    """The marked cube as an object scene (no ground); its assets are :func:`write_assets`'."""
    objects = (
        SceneObject("body", "cube", "assets/grey.obj", (0.0, 0.0, 0.0), 0.0, (1.0, 1.0, 1.0)),
        SceneObject("front", "panel", "assets/red.obj", (0.0, -0.52, 0.2), 0.0, (0.6, 0.04, 0.6)),
        SceneObject("right", "panel", "assets/green.obj", (0.52, 0.0, 0.2), 0.0, (0.04, 0.6, 0.6)),
        SceneObject("back", "panel", "assets/blue.obj", (0.0, 0.52, 0.2), 0.0, (0.6, 0.04, 0.6)),
        SceneObject("top", "tab", "assets/yellow.obj", (0.0, -0.3, 1.0), 0.0, (0.6, 0.3, 0.04)),
    )
    return Scene(scene_id, "marked", "cube", "a marked cube", "harness", Room((2.0, 2.0), 2.0), objects,
                 schema=SCENE_SCHEMA_V2, kind="object", ground=False)  # fmt: skip


def panel_masks(rgba: np.ndarray) -> dict[str, np.ndarray]:
    """(H, W) bool masks of the pixels (alpha > 0) of each coloured panel in an (H, W, 4) uint8
    render: a channel ``DOMINANCE`` times both others (yellow: red and green over blue)."""
    px = rgba[..., :3].astype(float) + 1.0
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    seen = rgba[..., 3] > 0
    k = DOMINANCE
    yellow = seen & (r > k * b) & (g > k * b) & (r < k * g)
    return {
        "red": seen & (r > k * g) & (r > k * b) & ~yellow,
        "green": seen & (g > k * r) & (g > k * b),
        "blue": seen & (b > k * r) & (b > k * g),
        "yellow": yellow,
    }


def panel_shares(rgba: np.ndarray) -> dict[str, float]:
    """The share of the object's pixels (alpha > 0) each coloured panel covers, 0..1."""
    seen = int((rgba[..., 3] > 0).sum())
    return {name: float(mask.sum()) / seen if seen else 0.0 for name, mask in panel_masks(rgba).items()}
