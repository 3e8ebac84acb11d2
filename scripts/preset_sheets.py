"""Render the contact sheets of every protocol preset into ``docs/protocols/``.

Two sheets per preset, each preset's shown views at low resolution (96 px, 4 samples) as the
evaluator would see them (each pass composited on its background, tiled when the preset
tiles), labelled with elevation/azimuth:

- ``<preset>.png``: one bundled scene (the first ``faithful`` prompt);
- ``<preset>-cube.png``: the marked cube (``harness/scenes/marked_cube.py``: red front, green
  right, blue back, yellow top tab), which shows which side of an asset each view faces.

Presets with more than 12 views are shown scaled (``Protocol.scaled(max_views=12)``). Run from
the repository root: ``python scripts/preset_sheets.py`` (about three minutes on two cores).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.core.paths import default_cache_dir  # noqa: E402
from harness.protocol.configurations import background_rgb  # noqa: E402
from harness.protocol.presets import PRESETS, Protocol  # noqa: E402
from harness.render.composite import composite  # noqa: E402
from harness.render.service import RenderService  # noqa: E402
from harness.scenes.marked_cube import marked_cube, write_assets  # noqa: E402
from harness.scenes.model import scene_identity  # noqa: E402
from harness.scenes.scene_source import load_scene_set  # noqa: E402

SIZE, SAMPLES, MAX_VIEWS = 96, 4, 12


def sheet(renderer: RenderService, scene, root: Path, identity: str, p: Protocol) -> np.ndarray:
    """The labelled tiles of ``p``'s shown views of ``scene``, pass by pass, in rows."""
    tiles = []
    for render_pass in p.passes:
        for view, cfg in zip(p.shown_views, p.render_configs(render_pass), strict=True):
            rgba = renderer.render(scene, root, identity, cfg)
            im = Image.fromarray(composite(rgba, background_rgb(p.pass_background(render_pass))))
            draw = ImageDraw.Draw(im)
            label = f"{view.elevation_deg:g}/{view.azimuth_deg:g}" + ("" if render_pass == "shaded" else " N")
            draw.rectangle((0, 0, 6 * len(label) + 2, 10), fill=(255, 255, 255))
            draw.text((1, -1), label, fill=(0, 0, 0))
            tiles.append(np.asarray(im))
    cols = min(len(tiles), p.tiling[0] if p.tiling else 6)
    rows = -(-len(tiles) // cols)
    tiles += [np.full_like(tiles[0], 255)] * (rows * cols - len(tiles))
    return np.concatenate([np.concatenate(tiles[r * cols:(r + 1) * cols], axis=1) for r in range(rows)])


def main() -> None:
    out_dir = ROOT / "docs" / "protocols"
    out_dir.mkdir(parents=True, exist_ok=True)
    scene_set = load_scene_set(None).select_for_profile(1, ["faithful"])
    room = scene_set.scenes[0]
    renderer = RenderService(default_cache_dir() / "renders")
    with tempfile.TemporaryDirectory() as tmp:
        cube_root = Path(tmp)
        write_assets(cube_root)
        cube = marked_cube()
        subjects = (("", room, Path(scene_set.root), scene_set.identity(room.id)),
                    ("-cube", cube, cube_root, scene_identity(cube, cube_root)))  # fmt: skip
        for name, preset in PRESETS.items():
            p = preset if len(preset.shown_views) <= MAX_VIEWS else preset.scaled(max_views=MAX_VIEWS)
            p = p.scaled(resolution_px=SIZE, samples=SAMPLES)
            for suffix, scene, root, identity in subjects:
                path = out_dir / f"{name}{suffix}.png"
                Image.fromarray(sheet(renderer, scene, root, identity, p)).save(path, optimize=True)
                print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
