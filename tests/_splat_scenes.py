"""A small imported scene set with 3D Gaussian splat scenes: generators gen-mesh and gen-gs,
prompts p1 and p2, single-object OBJ boxes; gen-gs's scene files say they are splats (as a
3DGS import records them; no splat is rendered)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.cli import main


def _box_obj(x: float, y: float, z: float) -> str:
    corners = [(a, b, c) for a in (0, x) for b in (0, y) for c in (0, z)]
    return "".join(f"v {a} {b} {c}\n" for a, b, c in corners) + "f 1 2 4 3\nf 5 6 8 7\n"


SIZES = {("gen-mesh", "p1"): (1, 1, 2), ("gen-mesh", "p2"): (3, 1, 1),
         ("gen-gs", "p1"): (1, 3, 1), ("gen-gs", "p2"): (2, 2, 1)}


def splat_set(tmp: Path) -> Path:
    """gen-mesh and gen-gs, prompts p1 and p2: object scenes; gen-gs's say they are splats."""
    from harness.scenes.set_manifest import build_manifest, write_manifest

    gens = tmp / "outputs"
    for gen in ("gen-mesh", "gen-gs"):
        (gens / gen).mkdir(parents=True)
        for pid in ("p1", "p2"):
            (gens / gen / f"{pid}.obj").write_text(_box_obj(*SIZES[gen, pid]))
    prompts = tmp / "prompts.json"
    prompts.write_text(json.dumps({"p1": "a box", "p2": "a tall box"}))
    out = tmp / "set"
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out)]) == 0
    files = sorted((out / "scenes").rglob("*.json"))
    for path in files:
        if path.parent.name == "gen-gs":  # as a 3DGS import records it (rendering is stubbed)
            doc = json.loads(path.read_text())
            doc["source"].update({"format": "ply", "variant": "splats"})
            path.write_text(json.dumps(doc, indent=1))
    write_manifest(out, build_manifest(out, files))
    return out
