"""Render the contact sheet of every protocol preset into ``docs/protocols/<preset>.png``.

One bundled scene (the first ``faithful`` prompt), each preset's shown views at low
resolution (96 px, 4 samples) as the evaluator would see them (composited on the preset's
background, tiled when the preset tiles), labelled with elevation/azimuth. Presets with more
than 12 views are shown scaled (``Protocol.scaled(max_views=12)``). Run from the repository
root: ``python scripts/preset_sheets.py`` (about two minutes on two cores).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.core.paths import default_cache_dir  # noqa: E402
from harness.protocol.configurations import background_rgb  # noqa: E402
from harness.protocol.presets import PRESETS  # noqa: E402
from harness.render.composite import composite  # noqa: E402
from harness.render.service import RenderService  # noqa: E402
from harness.scenes.scene_source import load_scene_set  # noqa: E402

SIZE, SAMPLES, MAX_VIEWS = 96, 4, 12


def main() -> None:
    out_dir = ROOT / "docs" / "protocols"
    out_dir.mkdir(parents=True, exist_ok=True)
    scene_set = load_scene_set(None).select_for_profile(1, ["faithful"])
    scene = scene_set.scenes[0]
    renderer = RenderService(default_cache_dir() / "renders")
    for name, preset in PRESETS.items():
        p = preset if len(preset.shown_views) <= MAX_VIEWS else preset.scaled(max_views=MAX_VIEWS)
        p = p.scaled(resolution_px=SIZE, samples=SAMPLES)
        tiles = []
        for render_pass in p.passes:
            for view, cfg in zip(p.shown_views, p.render_configs(render_pass), strict=True):
                rgba = renderer.render(scene, Path(scene_set.root), scene_set.identity(scene.id), cfg)
                im = Image.fromarray(composite(rgba, background_rgb(p.pass_background(render_pass))))
                draw = ImageDraw.Draw(im)
                label = f"{view.elevation_deg:g}/{view.azimuth_deg:g}" + ("" if render_pass == "shaded" else " N")
                draw.rectangle((0, 0, 6 * len(label) + 2, 10), fill=(255, 255, 255))
                draw.text((1, -1), label, fill=(0, 0, 0))
                tiles.append(np.asarray(im))
        cols = min(len(tiles), p.tiling[0] if p.tiling else 6)
        rows = -(-len(tiles) // cols)
        tiles += [np.full_like(tiles[0], 255)] * (rows * cols - len(tiles))
        sheet = np.concatenate([np.concatenate(tiles[r * cols:(r + 1) * cols], axis=1) for r in range(rows)])
        path = out_dir / f"{name}.png"
        Image.fromarray(sheet).save(path, optimize=True)
        print(f"{path.relative_to(ROOT)}: {len(tiles)} tiles, {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
