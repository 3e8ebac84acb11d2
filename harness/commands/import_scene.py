"""``t3d-audit import-scene FILE --out DIR ...``: import an external scene into a scene set.

FILE is a SceneEval ``sceneState`` JSON (``--asset-root`` required: SceneEval's ``_data``
folder or ``<source>/<assetId>`` meshes; ``--asset-map`` for other layouts), a glTF/GLB file
(``.gltf``/``.glb``): a single generated object (``--kind object``, the default without
floor/wall nodes; ``--label``, ``--no-ground``) or a room of objects (``--kind room``), or one
generated object in OBJ (vertex colours shown), PLY (mesh, point cloud or 3D Gaussian
splats), STL or USD/USDA/USDC/USDZ. The format is read from the file's content
(``harness.scenes.fileformats``); anything else is refused in one line naming the supported
formats. Object files take their conventions from ``--up ±x|±y|±z``, ``--front ±x|±y|±z`` and
``--unit m|cm|mm|in`` or ``--scale F`` (defaults per format: docs/formats.md), recorded in the
scene's ``source``. The scene's assets are written under
``DIR/assets/`` and the scene to ``DIR/scenes/<generator>/<prompt_id>.json``; then
``DIR/manifest.json`` is rebuilt over the scenes it already listed plus the new one, so the set
stays valid for ``validate-scenes`` and ``SceneSet.load``.

All or nothing: everything is written into a staging folder next to DIR (a hard-linked copy of
DIR when it exists) that replaces DIR only when the import, the scene file and the manifest all
succeeded; a failed import leaves no files behind and DIR as it was
(``harness.scenes.importers.staging``). DIR must be a folder (or not exist yet).

Identity fields: ``--generator``, ``--prompt-id``, ``--prompt``, ``--prompt-source`` and
``--scene-id`` override the file's metadata (sceneState: top-level ``metadata`` object; glTF:
``asset.extras``). ``--labels`` names a JSON object mapping sceneState ``modelId`` to a label.
Prints the written scene path.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.core.bounded_input import read_json
from harness.run import argtypes

HELP = "import a glTF/GLB, OBJ, PLY, STL, USD or sceneState file into a scene set"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=argtypes.input_path,
                        help=".glb/.gltf, .obj, .ply, .stl, .usd/.usda/.usdc/.usdz or sceneState .json")
    parser.add_argument("--out", type=argtypes.input_path, required=True, help="scene-set root to write into")
    parser.add_argument(
        "--asset-root",
        type=argtypes.input_path,
        help="sceneState only: asset root (SceneEval's _data folder, or <source>/<id> meshes)",
    )
    parser.add_argument(
        "--asset-map",
        type=argtypes.input_path,
        help="sceneState only: JSON {modelId or source: path pattern(s) with {id}, {id0}, {base}}",
    )
    parser.add_argument(
        "--kind",
        choices=("object", "room"),
        help="glTF only: a single object or a room of objects (default: room when the file "
        "has floor/wall nodes, else object)",
    )
    parser.add_argument(
        "--no-ground", action="store_true", help="glTF object scenes: no ground plane"
    )
    parser.add_argument("--label", help="glTF object scenes: the object's label (default: the prompt)")
    parser.add_argument("--generator")
    parser.add_argument("--prompt-id")
    parser.add_argument("--prompt")
    parser.add_argument("--prompt-source")
    parser.add_argument("--scene-id")
    parser.add_argument(
        "--labels", type=argtypes.input_path, help="JSON {modelId (sceneState) or node name (glTF room): label}"
    )
    parser.add_argument(
        "--asset-dir", help="glTF only: folder name under assets/ (default: file stem)"
    )
    parser.add_argument("--no-manifest", action="store_true", help="do not rebuild manifest.json")
    add_convention_arguments(parser)


def add_convention_arguments(parser: argparse.ArgumentParser) -> None:
    """``--up``, ``--front``, ``--unit`` / ``--scale`` (object files)."""
    from harness.scenes.importers.conventions import FRONT_AXES, UNITS, UP_AXES, canonical_up

    parser.add_argument("--up", type=canonical_up, choices=UP_AXES,
                        help="object files: the file's up axis, x, y, z, -x, -y or -z (write "
                        "--up=-x for a negative axis; default per format: glTF/OBJ y, PLY/STL/USD z)")
    parser.add_argument("--front", choices=FRONT_AXES,
                        help="object files: the file axis the object faces (write --front=-z for a "
                        "negative axis; default: the format's front, else the first horizontal "
                        "of -y, +z, +x)")
    unit = parser.add_mutually_exclusive_group()
    unit.add_argument("--unit", choices=tuple(UNITS), help="object files: the file's length unit "
                      "(default m)")
    unit.add_argument("--scale", type=argtypes.positive_float, help="object files: metres per file unit")


def conventions_from(args: argparse.Namespace):
    """The :class:`~harness.scenes.importers.conventions.Conventions` the options give."""
    from harness.scenes.importers.conventions import Conventions

    return Conventions(args.up, args.front, args.unit, args.scale)


@contextmanager
def _named_as(stage: Path, out: Path) -> Iterator[None]:
    """Re-raise scene errors that name a file in ``stage`` as naming it under ``out``."""
    from harness.core.errors import SceneError

    try:
        yield
    except SceneError as exc:
        if str(stage) not in f"{exc.what} {exc.path} {exc.hint}":
            raise

        def fix(text: str | None) -> str | None:
            return text.replace(str(stage), str(out)) if text else text

        what = fix(exc.what) or exc.what
        raise type(exc)(what, path=fix(exc.path), pointer=exc.pointer, hint=fix(exc.hint)) from None


def _json_object(path: Path | None, what: str) -> dict | None:
    """The JSON object in ``path`` (None when not given); a bad file is one clear error."""
    from harness.core.errors import ImportError_

    if path is None:
        return None
    try:
        value = read_json(path)
    except (OSError, ValueError) as exc:
        raise ImportError_(f"cannot read {what}: {exc}", path=path) from None
    if not isinstance(value, dict):
        raise ImportError_(f"{what} must be a JSON object", path=path)
    return value


def run(args: argparse.Namespace) -> int:
    from harness.scenes.importers import write_scene_file
    from harness.scenes.importers.dispatch import import_file
    from harness.scenes.importers.staging import staged_directory
    from harness.scenes.set_manifest import (
        MANIFEST_NAME,
        build_manifest,
        read_manifest,
        write_manifest,
    )

    meta = {
        "generator": args.generator,
        "prompt_id": args.prompt_id,
        "prompt": args.prompt,
        "prompt_source": args.prompt_source,
        "scene_id": args.scene_id,
    }
    labels = _json_object(args.labels, "labels")
    conventions = conventions_from(args)
    conventions.check(path=args.file)
    with staged_directory(args.out) as stage, _named_as(stage, args.out):
        scene = import_file(
            args.file,
            out_root=stage,
            asset_root=args.asset_root,
            asset_map=_json_object(args.asset_map, "asset map"),
            asset_dir=args.asset_dir,
            kind=args.kind,
            ground=not args.no_ground,
            label=args.label,
            labels=labels,
            conventions=conventions,
            **meta,
        )
        target = write_scene_file(scene, stage)
        if not args.no_manifest:
            paths = {target.resolve()}
            if (stage / MANIFEST_NAME).is_file():
                listed = read_manifest(stage)["scenes"]
                paths |= {(stage / e["path"]).resolve() for e in listed}
            write_manifest(stage, build_manifest(stage, sorted(paths)))
    print(args.out / target.relative_to(stage))
    return 0
