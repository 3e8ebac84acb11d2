"""Draw top-down plans of a few prompts under every generator into one PNG (a picture check).

Rows are prompts, columns the six generators in their planted order. Each object is its
rotated footprint filled with its category's body colour, with a dark tick from the centre
towards its front; objects standing on others are hatched. Scenes are read from the bundled
set (``<root>/<generator>/<prompt id>.json``) when present, else generated on the fly.

    python scripts/plan_sheet.py [--root fixtures/scenes] [--prompts ID ...] [--n 4] --out plan.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.core.paths import BUNDLED_SCENES
from harness.scenes.assets import CATEGORIES
from harness.scenes.footprints import front_vector, object_footprint
from harness.scenes.generators import GENERATORS, generate
from harness.scenes.layout import faithful_layout
from harness.scenes.model import Scene
from harness.scenes.prompts import load_pool, sample


def _scene(root: Path, spec, generator: str, layouts: dict) -> Scene:
    path = root / generator / f"{spec.id}.json"
    if path.is_file():
        return Scene.from_dict(json.loads(path.read_text(encoding="utf-8")))
    if spec.id not in layouts:
        layouts[spec.id] = faithful_layout(spec)
    return generate(spec, generator, layout=layouts[spec.id])


def draw(scene: Scene, ax) -> None:
    """Draw one scene's plan on a matplotlib axis."""
    from matplotlib.patches import Polygon, Rectangle

    rx, ry = scene.room.size
    ax.add_patch(Rectangle((-rx / 2, -ry / 2), rx, ry, fill=True, fc="#f4f1ea", ec="#333", lw=2))
    for obj in sorted(scene.objects, key=lambda o: (o.position[2], o.size[2])):
        cat = CATEGORIES.get(obj.label)
        color = cat.colors[0] if cat else (0.5, 0.5, 0.5)
        poor = obj.candidates and obj.asset == min(obj.candidates, key=lambda c: c.retrieval_score).asset
        ax.add_patch(
            Polygon(
                object_footprint(obj),
                closed=True,
                fc=color,
                ec="#111",
                lw=0.6,
                alpha=0.85,
                hatch="///" if obj.position[2] > 0.05 else ("xx" if poor else None),
            )
        )
        fx, fy = front_vector(obj.yaw_deg)
        cx, cy = obj.position[0], obj.position[1]
        reach = min(obj.size[0], obj.size[1]) / 2
        ax.plot([cx, cx + fx * reach], [cy, cy + fy * reach], color="#111", lw=0.8)
        ax.text(cx, cy, obj.label, fontsize=4.5, ha="center", va="center", color="#000")
    ax.set_xlim(-rx / 2 - 0.2, rx / 2 + 0.2)
    ax.set_ylim(-ry / 2 - 0.2, ry / 2 + 0.2)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=BUNDLED_SCENES, help="scene-set root (default fixtures/scenes)")
    parser.add_argument("--prompts", nargs="*", help="prompt ids (default: every k-th sampled prompt)")
    parser.add_argument("--n", type=int, default=4, help="number of prompts when --prompts is not given")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = sample(load_pool())
    if args.prompts:
        by_id = {s.id: s for s in load_pool()}
        chosen = [by_id[p] for p in args.prompts]
    else:
        step = max(1, len(specs) // args.n)
        chosen = list(specs[::step][: args.n])
    layouts: dict = {}
    fig, axes = plt.subplots(len(chosen), len(GENERATORS), figsize=(3.0 * len(GENERATORS), 3.0 * len(chosen)), squeeze=False)
    for r, spec in enumerate(chosen):
        for c, gen in enumerate(GENERATORS):
            ax = axes[r][c]
            draw(_scene(args.root, spec, gen, layouts), ax)
            if r == 0:
                ax.set_title(gen, fontsize=11)
            if c == 0:
                ax.set_ylabel(spec.id, fontsize=9)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
