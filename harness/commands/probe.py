"""``t3d-audit probe SCENE_FILE --probe NAME [--seed S] [--root ROOT] --out FILE``.

Loads and validates a scene file, applies a registered content probe (the study's four, or
one a plugin registers; see :mod:`harness.vocab.probes`) and writes the edited scene as a
scene file. Asset paths stay relative to the scene-set root: ``--root`` names it, otherwise
the nearest folder above SCENE_FILE holding ``manifest.json`` is used. Prints the edited
scene's id and identity (sha256 over its JSON and asset bytes).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.core.fileio import write_bytes_atomic
from harness.run import argtypes

HELP = "apply a content probe to a scene file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.vocab.probes import probe_names

    parser.add_argument("scene_file", type=argtypes.input_path, help="scene file (t3d-scene/1 JSON)")
    parser.add_argument("--probe", required=True, choices=probe_names(), help="which probe to apply")
    parser.add_argument("--seed", type=argtypes.seed, default=0, help="probe seed (default 0)")
    parser.add_argument("--root", type=argtypes.input_path, default=None, help="scene-set root (default: nearest folder with manifest.json)")
    parser.add_argument("--out", type=argtypes.output_file, required=True, help="where to write the edited scene file")


def find_root(scene_file: Path) -> Path:
    """The nearest ancestor folder of ``scene_file`` that holds ``manifest.json``."""
    from harness.core.errors import SceneError
    from harness.scenes.set_manifest import MANIFEST_NAME

    for folder in scene_file.resolve().parents:
        if (folder / MANIFEST_NAME).is_file():
            return folder
    raise SceneError(
        "no scene-set root (a folder with manifest.json) above the scene file",
        path=scene_file,
        hint="pass --root with the folder its asset paths are relative to",
    )


def run(args: argparse.Namespace) -> int:
    from harness.scenes import probe_edits
    from harness.scenes.bundle import scene_bytes
    from harness.scenes.load import load_scene
    from harness.scenes.model import scene_identity

    root = args.root or find_root(args.scene_file)
    scene = load_scene(args.scene_file, root)
    edited = probe_edits.apply(scene, args.probe, seed=args.seed)
    write_bytes_atomic(args.out, scene_bytes(edited))
    print(f"{edited.id}\t{len(scene.objects)} -> {len(edited.objects)} objects")
    print(f"identity {scene_identity(edited, root)}")
    print(f"wrote {args.out}")
    return 0
