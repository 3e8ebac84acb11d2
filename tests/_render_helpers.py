"""Test helpers for the render tests: a tiny scene set (coloured OBJ boxes) written to a dir."""

from __future__ import annotations

from pathlib import Path

from harness.scenes.marked_cube import BOX_OBJ
from harness.scenes.model import Room, Scene, SceneObject

COLOURS = {"red": (0.9, 0.05, 0.05), "green": (0.05, 0.8, 0.1), "blue": (0.05, 0.1, 0.9)}


def write_box_assets(root: Path) -> None:
    """``assets/box/<colour>.obj`` (+ .mtl): unit boxes, bottom centre at the origin, z up."""
    folder = root / "assets" / "box"
    folder.mkdir(parents=True, exist_ok=True)
    for name, (r, g, b) in COLOURS.items():
        (folder / f"{name}.obj").write_text(BOX_OBJ.format(name=name), encoding="utf-8")
        (folder / f"{name}.mtl").write_text(
            f"newmtl {name}\nKd {r} {g} {b}\n", encoding="utf-8"
        )


def box_scene(scene_id: str = "test.room", *, centre_asset: str = "assets/box/red.obj") -> Scene:
    """A 4 x 3 m room with a tall red box in the centre and two smaller boxes near the walls."""
    objects = (
        SceneObject("centre", "box", centre_asset, (0.0, 0.0, 0.0), 20.0, (1.0, 0.8, 1.2)),
        SceneObject("left", "box", "assets/box/green.obj", (-1.4, 0.9, 0.0), 0.0, (0.5, 0.5, 0.6)),
        SceneObject("right", "box", "assets/box/blue.obj", (1.3, -0.9, 0.0), 45.0, (0.6, 0.4, 0.8)),
    )
    return Scene(scene_id, "gen-a", "p01", "three boxes", "unit-test", Room((4.0, 3.0), 2.5), objects)
