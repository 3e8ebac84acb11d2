"""``t3d-audit validate-scenes DIR [--json]``: validate a scene set against its manifest.

Checks the frozen-scene rule (every listed scene and asset file has its manifest sha256, no
unlisted scene files), validates every scene file (schema + semantics) and the set invariants
(unique ids, one scene per generator and prompt), and checks every glTF/GLB asset against the
bounds of ``harness.scenes.gltf_limits`` (sizes, counts, texture dimensions). On success prints one summary line, e.g.::

    OK fixtures/scenes: 300 scenes, 78 assets, 6 generators (a, b, c, d, e, f), 50 prompts

``--json`` prints ``{"root", "scenes", "assets", "generators": [...], "prompts": n}`` instead.
Any problem is reported as one typed error line (file, JSON pointer, reason) with exit status 2.
"""

from __future__ import annotations

import argparse

from harness.core.jsonout import print_json
from harness.run import argtypes

HELP = "validate a scene set against its manifest"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", type=argtypes.input_path, help="scene-set root (the folder holding manifest.json)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _check_gltf_assets(scene_set) -> None:
    """Every glTF/GLB asset (used or candidate) within ``harness.scenes.gltf_limits``."""
    from harness.scenes.gltf_limits import check_gltf_file

    assets = {
        asset
        for scene in scene_set.scenes
        for obj in scene.objects
        for asset in (obj.asset, *(c.asset for c in obj.candidates or ()))
        if asset.lower().endswith((".glb", ".gltf"))
    }
    for asset in sorted(assets):
        check_gltf_file(scene_set.root / asset)


def run(args: argparse.Namespace) -> int:
    from harness.scenes.sceneset import SceneSet

    scene_set = SceneSet.load(args.dir, verify=True)
    _check_gltf_assets(scene_set)
    manifest = scene_set.manifest or {}
    n_assets = len(manifest.get("assets", ()))
    if args.json:
        payload = {
            "root": str(args.dir),
            "scenes": len(scene_set),
            "assets": n_assets,
            "generators": list(scene_set.generators),
            "prompts": len(scene_set.prompt_ids),
        }
        print_json(payload, ensure_ascii=True)
        return 0
    gens = scene_set.generators
    print(
        f"OK {args.dir}: {len(scene_set)} scenes, {n_assets} assets, "
        f"{len(gens)} generators ({', '.join(gens)}), {len(scene_set.prompt_ids)} prompts"
    )
    return 0
